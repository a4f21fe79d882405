/**
 * One guarded HTTP exchange with redirects, for every outbound request of
 * the service (scrape fetches, webhooks). node:http with manual redirects:
 * each hop is checked again (URL, then the resolved and the connected
 * address), cookies and credentials stay with their host, the body is read
 * under wire and decompressed budgets, and one deadline covers the whole
 * exchange. Failures are the core's target errors.
 *
 * Through a proxy the proxy connects to the target, so the connected-address
 * check cannot apply: instead the target name is resolved here and every
 * address judged before the request is sent (resolveAllChecked). The proxy
 * then resolves the name again; a name that changes its answer between the
 * two lookups (DNS rebinding) is only stopped by the proxy's own network
 * position. The proxy's own address is operator configuration and is not
 * judged.
 */
import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import net, { isIP, type LookupFunction } from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { checkTargetUrl, redactUrl, type EgressPolicy } from '../../core/egress.js';
import {
  BadRequest, TargetNotAllowed, TargetResponseInvalid, TargetTimeout, TargetUnreachable, isApiFailure, type ApiFailure,
} from '../../core/errors.js';
import { readBody } from './body.js';
import type { GuardedRequest, GuardedResponse as PortResponse, Resolver, UpstreamProxy } from '../../core/ports.js';
import { createGuardedLookup, guardSocket, resolveAllChecked } from './guard.js';

export const DEFAULT_MAX_REDIRECTS = 10;
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
export const DEFAULT_MAX_DECODED_BYTES = 50 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;

/** An upstream proxy (core/ports.ts UpstreamProxy). */
export type ProxySpec = UpstreamProxy;

/**
 * The port's request (core/ports.ts GuardedRequest), plus what only code
 * inside the adapters and tests may ask for: Buffer CAs and a lookup that
 * replaces the guard's.
 */
export interface FetchGuardedOptions extends Omit<GuardedRequest, 'tls'> {
  readonly tls?: { readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>; readonly rejectUnauthorized?: boolean };
  /**
   * Replaces the guarded lookup outright: nothing judges its answers, only
   * the connected-address check does. For tests of that check, and callers
   * that must resolve themselves.
   */
  readonly lookup?: LookupFunction | undefined;
}

export interface GuardedResponse extends PortResponse {
  /** Decoded (decompressed) body. */
  readonly body: Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Never forwarded from the caller: set here, or meaningless per hop. */
const MANAGED = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer']);
/** Dropped when a redirect leaves the first URL's host. */
const HOST_BOUND = new Set(['authorization', 'cookie', 'proxy-authorization']);

const notAllowed = (reason: string) => new TargetNotAllowed({ message: 'The target URL is not allowed', field: 'url', reason });
const invalid = (details: string, limit?: number) =>
  new TargetResponseInvalid(limit === undefined
    ? { message: 'The target sent an invalid response', details }
    : { message: 'The target sent an invalid response', details, limit });
const unreachable = (details: string) => new TargetUnreachable({ message: 'The target could not be reached', details });

interface ParsedProxy {
  readonly label: string;
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
  readonly authorization: string | undefined;
}

function parseProxy(spec: ProxySpec): ParsedProxy {
  let u: URL;
  try {
    u = new URL(spec.url);
  } catch {
    throw unreachable(`proxy ${spec.id ?? '(unnamed)'} has an invalid URL`);
  }
  const secure = u.protocol === 'https:';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port || (secure ? 443 : 80));
  const label = spec.id ?? `${u.hostname}:${port}`;
  if (u.protocol !== 'http:' && !secure) throw unreachable(`proxy ${label} uses an unsupported scheme ${u.protocol}`);
  const decode = (part: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const authorization = u.username || u.password
    ? `Basic ${Buffer.from(`${decode(u.username)}:${decode(u.password)}`).toString('base64')}`
    : undefined;
  return { label, host, port, secure, authorization };
}

interface Context {
  readonly policy: EgressPolicy;
  readonly resolver: Resolver | undefined;
  readonly lookup: LookupFunction | undefined;
  readonly signal: AbortSignal;
  readonly proxy: ParsedProxy | undefined;
  readonly proxyConnectTimeoutMs: number;
  readonly tls: FetchGuardedOptions['tls'];
}

function titleCase(name: string): string {
  return name.split('-').map((p) => (p === '' ? p : p[0]!.toUpperCase() + p.slice(1))).join('-');
}

/** Error text without credentials: a code and Node's message (which names addresses, never URLs with userinfo). */
function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  const code = e?.code;
  const msg = e?.message ?? String(err);
  return code && !msg.includes(code) ? `${msg} (${code})` : msg;
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|EPROTO|ERR_OSSL)/;

/** Transport failures to the core's target errors; `via` names the proxy when one was used. */
export function toTargetError(err: unknown, via?: string): ApiFailure {
  if (isApiFailure(err)) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const prefix = via ? `via proxy ${via}: ` : '';
  if (code.startsWith('HPE_')) return invalid(`${prefix}malformed HTTP response (${code})`);
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN' || code === 'ERR_HTTP_INVALID_HEADER_VALUE') {
    return BadRequest.of('custom_headers', `a header or cookie is not valid in HTTP: ${describe(err)}`);
  }
  if (TLS_CODES.test(code)) return unreachable(`${prefix}TLS failed: ${describe(err)}`);
  if (code === 'ECONNREFUSED') return unreachable(`${prefix}connection refused (ECONNREFUSED)`);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return unreachable(`${prefix}the connection was closed unexpectedly (${code})`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return unreachable(`${prefix}the name does not resolve (${code})`);
  return unreachable(`${prefix}${describe(err)}`);
}

/** A socket to the target itself: guarded lookup, then the connected address judged. */
function connectDirect(url: URL, ctx: Context): Duplex {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const secure = url.protocol === 'https:';
  const port = Number(url.port || (secure ? 443 : 80));
  const lookup = ctx.lookup ?? createGuardedLookup({ ...ctx.policy, resolver: ctx.resolver, signal: ctx.signal });
  const socket = secure
    ? tls.connect({
      host, port, lookup,
      ...(isIP(host) ? {} : { servername: host }),
      ALPNProtocols: ['http/1.1'],
      ...tlsOptions(ctx),
    })
    : net.connect({ host, port, lookup });
  guardSocket(socket, ctx.policy, `${url.protocol}//${url.host}`);
  return socket;
}

function tlsOptions(ctx: Context): tls.ConnectionOptions {
  const o: tls.ConnectionOptions = {};
  if (ctx.tls?.ca !== undefined) o.ca = ctx.tls.ca as tls.ConnectionOptions['ca'];
  if (ctx.tls?.rejectUnauthorized !== undefined) o.rejectUnauthorized = ctx.tls.rejectUnauthorized;
  return o;
}

/** A socket to the proxy, failing with TargetUnreachable (naming the proxy) when it does not connect in time. */
function connectProxy(proxy: ParsedProxy, ctx: Context): net.Socket {
  const socket = proxy.secure
    ? tls.connect({ host: proxy.host, port: proxy.port, ...(isIP(proxy.host) ? {} : { servername: proxy.host }) })
    : net.connect({ host: proxy.host, port: proxy.port });
  const timer = setTimeout(() => {
    socket.destroy(unreachable(`proxy ${proxy.label} did not accept the connection within ${ctx.proxyConnectTimeoutMs / 1000} s`));
  }, ctx.proxyConnectTimeoutMs);
  socket.once(proxy.secure ? 'secureConnect' : 'connect', () => clearTimeout(timer));
  socket.once('close', () => clearTimeout(timer));
  return socket;
}

/**
 * A connection to the target through a CONNECT tunnel: TLS inside it for
 * https, the bare tunnel for http. Plain http goes through CONNECT too
 * (not the absolute-form request), so a proxy's own failure (a 502 it
 * answers, a 407) can never be mistaken for the target's answer, and a
 * failed proxy is rotated instead of returned as the page.
 */
function tunnel(url: URL, proxy: ParsedProxy, ctx: Context): Promise<net.Socket> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const secure = url.protocol === 'https:';
  const port = Number(url.port || (secure ? 443 : 80));
  const authority = `${url.hostname}:${port}`;
  return new Promise((resolve, reject) => {
    const headers: OutgoingHttpHeaders = { Host: authority };
    if (proxy.authorization) headers['Proxy-Authorization'] = proxy.authorization;
    const req = http.request({
      host: proxy.host, port: proxy.port, method: 'CONNECT', path: authority, headers, setHost: false,
      createConnection: () => connectProxy(proxy, ctx),
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(unreachable(`proxy ${proxy.label} did not answer CONNECT within ${ctx.proxyConnectTimeoutMs / 1000} s`));
    }, ctx.proxyConnectTimeoutMs);
    const onAbort = () => { req.destroy(); reject(ctx.signal.reason); };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => { clearTimeout(timer); ctx.signal.removeEventListener('abort', onAbort); };
    req.once('connect', (res: IncomingMessage, socket: net.Socket, head: Buffer) => {
      done();
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(unreachable(`proxy ${proxy.label} refused CONNECT: ${res.statusCode ?? '?'} ${res.statusMessage ?? ''}`.trim()));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      if (!secure) {
        resolve(socket);
        return;
      }
      resolve(tls.connect({
        socket,
        ...(isIP(host) ? {} : { servername: host }),
        ALPNProtocols: ['http/1.1'],
        ...tlsOptions(ctx),
      }));
    });
    req.on('error', (err) => {
      done();
      reject(toTargetError(err, proxy.label));
    });
    req.end();
  });
}

interface Hop {
  readonly method: string;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Uint8Array | undefined;
}

/** Send one request; resolves with the response head. */
function send(url: URL, hop: Hop, ctx: Context): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (ctx.signal.aborted) {
      reject(ctx.signal.reason);
      return;
    }
    const proxy = ctx.proxy;
    const secure = url.protocol === 'https:';
    const headers: OutgoingHttpHeaders = { Host: url.host, ...hop.headers };
    if (hop.body !== undefined) headers['Content-Length'] = String(hop.body.byteLength);
    let options: http.RequestOptions;
    const base = { method: hop.method, setHost: false, host: url.hostname.replace(/^\[|\]$/g, '') };
    if (!proxy) {
      options = { ...base, path: url.pathname + url.search, headers, createConnection: () => connectDirect(url, ctx) };
    } else {
      options = {
        ...base, path: url.pathname + url.search, headers,
        createConnection: (_o, oncreate) => {
          tunnel(url, proxy, ctx).then((s) => oncreate(null, s), (e: Error) => oncreate(e, undefined as unknown as Duplex));
          return undefined;
        },
      };
    }
    let req: http.ClientRequest;
    try {
      req = http.request(options);
    } catch (err) {
      reject(err);
      return;
    }
    const onAbort = () => {
      req.destroy();
      reject(ctx.signal.reason);
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    req.once('response', (res) => {
      ctx.signal.removeEventListener('abort', onAbort);
      resolve(res);
    });
    // `on`, not `once`: a destroyed request can report more than one error.
    req.on('error', (err) => {
      ctx.signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    req.end(hop.body);
  });
}

/** Response headers from the raw list: lower-case names, repeats joined. */
function collectHeaders(res: IncomingMessage): { headers: Record<string, string>; setCookies: string[] } {
  const headers: Record<string, string> = {};
  const setCookies: string[] = [];
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    if (name === 'set-cookie') setCookies.push(value);
    const prior = headers[name];
    headers[name] = prior === undefined ? value : `${prior}${name === 'set-cookie' ? '\n' : ', '}${value}`;
  }
  return { headers, setCookies };
}

/** Host-only cookie jar: name=value per host, Max-Age<=0 / past Expires delete. */
function storeCookies(jar: Map<string, Map<string, string>>, host: string, setCookies: readonly string[]): void {
  for (const line of setCookies) {
    const [pair, ...attrs] = line.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (!pair || eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    let expired = false;
    for (const a of attrs) {
      const [k, v = ''] = a.split('=').map((s) => s.trim());
      const key = k?.toLowerCase();
      if (key === 'max-age' && Number(v) <= 0) expired = true;
      if (key === 'expires' && Date.parse(v) < Date.now()) expired = true;
    }
    let cookies = jar.get(host);
    if (!cookies) jar.set(host, (cookies = new Map()));
    if (expired) cookies.delete(name);
    else cookies.set(name, value);
  }
}

function cancelled(reason: unknown): ApiFailure {
  return isApiFailure(reason) ? reason : unreachable('the fetch was cancelled before the target answered');
}

/**
 * Fetch `rawUrl` under the egress guard. Resolves with the final response
 * (any status: a 404 is a response); rejects with TargetNotAllowed,
 * TargetUnreachable, TargetResponseInvalid, TargetTimeout (or BadRequest for
 * headers Node refuses to send).
 */
export async function fetchGuarded(rawUrl: string, options: FetchGuardedOptions): Promise<GuardedResponse> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeoutSeconds = Math.round(timeoutMs) / 1000;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TargetTimeout({
    message: `The target did not answer within ${timeoutSeconds} seconds`,
    timeoutSeconds,
  })), timeoutMs);
  const caller = options.signal;
  const onCaller = () => controller.abort(cancelled(caller?.reason));
  if (caller?.aborted) onCaller();
  else caller?.addEventListener('abort', onCaller, { once: true });
  let proxyLabel: string | undefined;
  try {
    const proxy = options.proxy ? parseProxy(options.proxy) : undefined;
    proxyLabel = proxy?.label;
    const ctx: Context = {
      policy: { allowPrivate: options.allowPrivate, allowAddress: options.allowAddress },
      resolver: options.resolver,
      lookup: options.lookup,
      signal: controller.signal,
      proxy,
      proxyConnectTimeoutMs: options.proxyConnectTimeoutMs ?? Math.min(10_000, Math.max(1, Math.floor(timeoutMs / 2))),
      tls: options.tls,
    };
    return await run(rawUrl, options, ctx);
  } catch (err) {
    if (isApiFailure(err)) throw err;
    if (controller.signal.aborted) throw controller.signal.reason;
    throw toTargetError(err, proxyLabel);
  } finally {
    clearTimeout(timer);
    caller?.removeEventListener('abort', onCaller);
  }
}

async function run(rawUrl: string, options: FetchGuardedOptions, ctx: Context): Promise<GuardedResponse> {
  const follow = options.followRedirects ?? true;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const limits = {
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxDecodedBytes: options.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES,
  };
  const jar = new Map<string, Map<string, string>>();
  const redirects: string[] = [];
  let method = (options.method ?? 'GET').toUpperCase();
  let body: Uint8Array | undefined = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
  let firstHost: string | undefined;
  let current = rawUrl;

  for (;;) {
    const isRedirect = redirects.length > 0;
    const checked = checkTargetUrl(current, ctx.policy);
    if (!checked.ok) {
      throw notAllowed(isRedirect ? `redirect to ${redactUrl(current)} is not allowed: ${checked.reason}` : checked.reason);
    }
    const url = checked.url;
    if (firstHost === undefined) {
      firstHost = url.hostname;
      if (options.cookies && Object.keys(options.cookies).length > 0) jar.set(firstHost, new Map(Object.entries(options.cookies)));
    }
    const sameHost = url.hostname === firstHost;

    const headers: OutgoingHttpHeaders = {};
    const callerCookie: string[] = [];
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      const lower = name.toLowerCase();
      if (MANAGED.has(lower)) continue;
      if (!sameHost && HOST_BOUND.has(lower)) continue;
      if (body === undefined && lower === 'content-type') continue;
      if (lower === 'cookie') { callerCookie.push(value); continue; }
      headers[name === lower ? titleCase(name) : name] = value;
    }
    const jarCookies = [...(jar.get(url.hostname) ?? new Map<string, string>()).entries()].map(([k, v]) => `${k}=${v}`);
    const cookie = [...callerCookie, ...jarCookies].join('; ');
    if (cookie !== '') headers.Cookie = cookie;

    let res: IncomingMessage;
    try {
      if (ctx.proxy) await resolveAllChecked(url.hostname, { ...ctx.policy, resolver: ctx.resolver, signal: ctx.signal });
      res = await send(url, { method, headers, body }, ctx);
    } catch (err) {
      if (isRedirect && err instanceof TargetNotAllowed) {
        throw notAllowed(`redirect to ${redactUrl(url)} is not allowed: ${err.reason}`);
      }
      throw err;
    }

    const { headers: resHeaders, setCookies } = collectHeaders(res);
    const status = res.statusCode ?? 0;
    if (ctx.proxy && status === 407) {
      res.destroy();
      throw unreachable(`proxy ${ctx.proxy.label} refused the request: 407 Proxy Authentication Required`);
    }
    storeCookies(jar, url.hostname, setCookies);

    const location = resHeaders.location;
    if (follow && REDIRECTS.has(status) && location !== undefined && location !== '') {
      res.resume();
      res.destroy();
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw invalid(`redirect with an invalid Location header: ${location.slice(0, 200).replace(/\/\/[^/@]*@/, '//')}`);
      }
      if (redirects.length >= maxRedirects) {
        throw invalid(`too many redirects (more than ${maxRedirects}); the last one pointed to ${redactUrl(next)}`, maxRedirects);
      }
      redirects.push(url.href);
      if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      current = next.href;
      continue;
    }

    const decode = (options.decompress ?? true) && method !== 'HEAD' && status !== 204 && status !== 304;
    const { body: buf, wireBytes } = await readBodyAbortable(res, limits, decode, ctx.signal);
    return {
      url: url.href,
      statusCode: status,
      statusMessage: res.statusMessage ?? '',
      headers: resHeaders,
      setCookies,
      body: buf,
      wireBytes,
      redirects,
    };
  }
}

async function readBodyAbortable(
  res: IncomingMessage, limits: { maxBodyBytes: number; maxDecodedBytes: number }, decode: boolean, signal: AbortSignal,
): Promise<{ body: Buffer; wireBytes: number }> {
  const onAbort = () => res.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await readBody(res, limits, decode);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
