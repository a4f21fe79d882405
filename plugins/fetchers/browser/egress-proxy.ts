/**
 * The forward proxy every byte of the browser goes through. Chromium cannot
 * be trusted to apply the egress policy (pages choose their own subresource,
 * redirect and script targets), so each browser context points at one of
 * these loopback proxies: it resolves every target name with the guard,
 * connects only to judged addresses, judges the address the socket actually
 * reached, and answers 403 for anything refused. It remembers what it refused
 * or failed per host:port, so the fetcher can tell "the main document was
 * refused" (TargetNotAllowed) from "the target said 403".
 *
 * With an upstream proxy (chosen by a proxy provider) the target is still
 * judged by name before anything is sent, and the connection is chained
 * through the upstream: CONNECT for tunnels, absolute-form for plain http.
 *
 * A proxy may be started unbound, ahead of the fetch it will serve (with a
 * pre-warmed browser context): until bind() gives it that fetch's policy it
 * refuses everything, as the deny proxy does. Plain-http requests reuse their
 * outbound connections (keep-alive, per host:port, only within this proxy,
 * so within one fetch); a reused connection was judged when it was opened.
 */
import http from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { addressVerdict, stripZone } from '../../../core/egress.js';
import { isApiFailure } from '../../../core/errors.js';
import type { Egress, GuardedPolicy } from '../../../core/ports.js';

/**
 * Where a proxy listens and how the browser is told to reach it. The
 * default, loopback on any free port, is right for a browser on this
 * machine; a remote browser (SCOUR_BROWSER_WS_ENDPOINT) needs an address it
 * can reach, and a firewall is easier to write for a fixed range of ports.
 */
export interface ProxyListen {
  /** The address listened on. Default 127.0.0.1. */
  readonly host?: string;
  /** The host written into the proxy URL the browser gets. Default: `host`. */
  readonly advertisedHost?: string;
  /** Listen on a free port of this range (inclusive); default any free port. */
  readonly ports?: { readonly from: number; readonly to: number };
}

interface CommonOptions {
  /** Bound of one outbound connect (the fetch's own bound closes the proxy anyway). */
  readonly connectTimeoutMs?: number;
  readonly listen?: ProxyListen;
}

/** What a proxy serving one fetch applies. */
export interface EgressTarget {
  readonly policy: GuardedPolicy;
  /** Resolves and judges target names (the Egress port). */
  readonly egress: Egress;
  /** http://user:pass@host:port of an upstream proxy to chain to. */
  readonly upstream?: string | undefined;
}

export type EgressProxyOptions = CommonOptions & (
  /** Refuses everything (Chromium's own background traffic, the browser-wide default). */
  | { readonly policy: 'deny' }
  /** Refuses everything until bind() gives it a fetch's target policy. */
  | { readonly policy: 'unbound' }
  | EgressTarget
);

/** What went through one proxy (tests, benchmarks). */
export interface EgressCounts {
  /** Connections the browser opened to the proxy (fewer than requests when it keeps them alive). */
  readonly clientConnections: number;
  /** Plain-http requests forwarded (or refused). */
  readonly requests: number;
  /** CONNECT tunnels asked for. */
  readonly tunnels: number;
  /** Outbound connections opened for plain-http requests (fewer than requests when kept alive). */
  readonly targetConnections: number;
}

/** What happened to one host:port. */
export interface EgressOutcome {
  readonly kind: 'refused' | 'failed';
  readonly reason: string;
}

export interface EgressProxy {
  /** http://127.0.0.1:<port> (or the advertised host, see ProxyListen) */
  readonly url: string;
  /** Value of the `x-scour-egress` header on responses the proxy made itself (a target cannot guess it). */
  readonly token: string;
  /** The first refusal or failure recorded for a target URL's host:port. */
  outcomeFor(targetUrl: string): EgressOutcome | undefined;
  /** Every host:port refused so far (tests, logs). */
  refused(): readonly string[];
  /** Give an unbound proxy the policy of the fetch it serves; once. Throws for any other proxy. */
  bind(target: EgressTarget): void;
  counts(): EgressCounts;
  close(): Promise<void>;
}

export const EGRESS_HEADER = 'x-scour-egress';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

class Refusal extends Error {}

/** "host:port" with the host as WHATWG URL writes it (lower case, IPv6 in brackets). */
function endpointKey(hostname: string, port: number): string {
  return `${hostname.toLowerCase()}:${port}`;
}

function parseAuthority(authority: string): { hostname: string; port: number } | undefined {
  try {
    const u = new URL(`http://${authority}`);
    if (u.username || u.password || u.pathname !== '/' || u.search || u.hash) return undefined;
    return { hostname: u.hostname, port: u.port === '' ? 80 : Number(u.port) };
  } catch {
    return undefined;
  }
}

const bare = (hostname: string): string => (hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname);

export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const token = randomBytes(12).toString('base64url');
  const outcomes = new Map<string, EgressOutcome>();
  const sockets = new Set<net.Socket>();
  const closing = new AbortController();
  // One listener per pending connect or lookup; a busy page has dozens.
  setMaxListeners(0, closing.signal);
  const connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
  let guarded: EgressTarget | undefined;
  let upstream: URL | undefined;
  let upstreamAuth: string | undefined;
  let bindable = options.policy === 'unbound';
  const counts = { clientConnections: 0, requests: 0, tunnels: 0, targetConnections: 0 };
  const bind = (target: EgressTarget) => {
    guarded = target;
    upstream = target.upstream ? new URL(target.upstream) : undefined;
    upstreamAuth = upstream && (upstream.username || upstream.password)
      ? `Basic ${Buffer.from(`${decodeURIComponent(upstream.username)}:${decodeURIComponent(upstream.password)}`).toString('base64')}`
      : undefined;
  };
  if (options.policy !== 'deny' && options.policy !== 'unbound') bind(options as EgressTarget);

  const record = (key: string, o: EgressOutcome) => {
    // A refusal outranks a failure: it is the verdict the fetcher must report.
    const prior = outcomes.get(key);
    if (!prior || (prior.kind === 'failed' && o.kind === 'refused')) outcomes.set(key, o);
  };

  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    return s;
  };

  /** A TCP connection to host:port, or a Refusal / Error. */
  const dial = (host: string, port: number): Promise<net.Socket> =>
    new Promise((resolve, reject) => {
      const s = track(net.connect({ host, port }));
      s.setNoDelay(true);
      const timer = setTimeout(() => s.destroy(new Error(`connect to ${host}:${port} timed out`)), connectTimeoutMs);
      const onAbort = () => s.destroy(new Error('proxy closed'));
      closing.signal.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        closing.signal.removeEventListener('abort', onAbort);
      };
      s.once('error', (e) => { done(); reject(e); });
      s.once('connect', () => { done(); resolve(s); });
    });

  /** Judge the target, then connect to it directly (no upstream). */
  const connectDirect = async (hostname: string, port: number): Promise<net.Socket> => {
    if (!guarded) throw new Refusal('the browser may not connect outside a fetch');
    let addresses: { address: string }[];
    try {
      addresses = await guarded.egress.resolveAll(bare(hostname), { ...guarded.policy, signal: closing.signal });
    } catch (e) {
      if (isApiFailure(e) && e.code === 'TARGET_NOT_ALLOWED') throw new Refusal((e.fields().validation_errors as { message: string }[])[0]?.message ?? e.message);
      if (isApiFailure(e)) throw new Error((e.fields().details as string | undefined) ?? e.message);
      throw e;
    }
    // Every address was judged; try them in order until one answers.
    let s: net.Socket | undefined;
    let lastError: unknown;
    for (const { address } of addresses) {
      try {
        s = await dial(address, port);
        break;
      } catch (e) {
        lastError = e;
        if (closing.signal.aborted) break;
      }
    }
    if (!s) throw lastError ?? new Error(`no address of ${hostname} answered`);
    // Whatever resolved it, the peer the socket reached is what counts.
    const remote = s.remoteAddress;
    const verdict = remote === undefined ? 'the connected address is unknown' : addressVerdict(remote, guarded.policy);
    if (verdict !== true) {
      s.destroy();
      throw new Refusal(`${hostname} connected to ${stripZone(remote ?? '?')}, which is not allowed: ${verdict}`);
    }
    return s;
  };

  /** Judge the target by name only (the upstream proxy resolves it), then connect to the upstream. */
  const connectUpstream = async (hostname: string): Promise<net.Socket> => {
    if (!guarded) throw new Refusal('the browser may not connect outside a fetch');
    try {
      await guarded.egress.resolveAll(bare(hostname), { ...guarded.policy, signal: closing.signal });
    } catch (e) {
      if (isApiFailure(e) && e.code === 'TARGET_NOT_ALLOWED') throw new Refusal((e.fields().validation_errors as { message: string }[])[0]?.message ?? e.message);
      // A name we cannot resolve may still resolve at the upstream: let it try.
      if (!(isApiFailure(e) && e.code === 'TARGET_UNREACHABLE')) throw e;
    }
    const up = upstream as URL;
    return dial(bare(up.hostname), up.port === '' ? 80 : Number(up.port));
  };

  const describe = (e: unknown): string => (e instanceof Error ? ((e as NodeJS.ErrnoException).code ? `${(e as NodeJS.ErrnoException).code}: ${e.message}` : e.message) : String(e));

  const failPlain = (res: http.ServerResponse, key: string, e: unknown) => {
    const refused = e instanceof Refusal;
    record(key, { kind: refused ? 'refused' : 'failed', reason: describe(e) });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(refused ? 403 : 502, { [EGRESS_HEADER]: token, 'content-type': 'text/plain', connection: 'close' });
    res.end(refused ? 'refused by the egress policy\n' : 'the target could not be reached\n');
  };

  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400, { [EGRESS_HEADER]: token, connection: 'close' });
      res.end();
      return;
    }
    counts.requests++;
    const port = target.port === '' ? 80 : Number(target.port);
    const key = endpointKey(target.hostname, port);
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    if (upstreamAuth) headers['proxy-authorization'] = upstreamAuth;
    // A request without a body can be sent again when a kept-alive connection turns out closed by the target.
    const replayable = (req.method === 'GET' || req.method === 'HEAD') && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
    const send = (retried: boolean) => {
      const out = http.request({
        method: req.method,
        host: target.hostname,
        port,
        // Absolute-form to an upstream proxy, origin-form to the target.
        path: upstream ? target.href : target.pathname + target.search,
        headers,
        agent,
      });
      out.on('response', (up) => {
        const h: http.OutgoingHttpHeaders = { ...up.headers };
        for (const name of HOP_BY_HOP) delete h[name];
        delete h[EGRESS_HEADER];
        res.writeHead(up.statusCode ?? 502, up.statusMessage, h);
        up.pipe(res);
        up.on('error', () => res.destroy());
      });
      out.on('error', (e) => {
        if (!retried && replayable && out.reusedSocket && !res.headersSent && !closing.signal.aborted) {
          send(true);
          return;
        }
        failPlain(res, key, e);
      });
      res.on('close', () => { if (!res.writableFinished) out.destroy(); });
      if (replayable) {
        req.resume();
        out.end();
      } else {
        req.pipe(out);
      }
    };
    send(false);
  });

  // Outbound connections for plain http: opened (and judged) by connectDirect/connectUpstream,
  // kept alive per target host:port for the next request of this same proxy.
  const agent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
  agent.createConnection = (opts, oncreate) => {
    const hostname = String(opts.host ?? '');
    const port = Number(opts.port ?? 80);
    (upstream ? connectUpstream(hostname) : connectDirect(hostname, port)).then((s) => {
      counts.targetConnections++;
      oncreate?.(null, s);
    }, (e: unknown) => oncreate?.(e instanceof Error ? e : new Error(String(e)), undefined as never));
    return undefined;
  };

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    counts.tunnels++;
    track(client);
    client.on('error', () => client.destroy());
    const authority = parseAuthority(req.url ?? '');
    const answer = (status: string) => {
      if (!client.destroyed) client.end(`HTTP/1.1 ${status}\r\n${EGRESS_HEADER}: ${token}\r\nconnection: close\r\n\r\n`);
    };
    if (!authority) {
      answer('400 Bad Request');
      return;
    }
    const key = endpointKey(authority.hostname, authority.port);
    const tunnel = upstream ? connectUpstream(authority.hostname).then((s) => upstreamConnect(s, req.url as string)) : connectDirect(authority.hostname, authority.port);
    tunnel.then((remote) => {
      if (client.destroyed) {
        remote.destroy();
        return;
      }
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) remote.write(head);
      remote.on('error', () => client.destroy());
      client.on('close', () => remote.destroy());
      remote.on('close', () => client.destroy());
      remote.pipe(client);
      client.pipe(remote);
    }, (e: unknown) => {
      const refused = e instanceof Refusal;
      record(key, { kind: refused ? 'refused' : 'failed', reason: describe(e) });
      answer(refused ? '403 Forbidden' : '502 Bad Gateway');
    });
  });

  /** Open a tunnel through the upstream proxy on `s`; resolves with the same socket once it answered 200. */
  const upstreamConnect = (s: net.Socket, authority: string): Promise<net.Socket> =>
    new Promise((resolve, reject) => {
      let buf = Buffer.alloc(0);
      const timer = setTimeout(() => fail(new Error('the upstream proxy did not answer CONNECT in time')), connectTimeoutMs);
      const fail = (e: Error) => {
        clearTimeout(timer);
        s.off('data', onData);
        s.destroy();
        reject(e);
      };
      const onData = (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buf.length > 16_384) fail(new Error('the upstream proxy sent an oversized CONNECT answer'));
          return;
        }
        clearTimeout(timer);
        s.off('data', onData);
        s.off('error', fail);
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(buf.subarray(0, end).toString('latin1'))?.[1];
        if (status !== '200') {
          s.destroy();
          reject(new Error(`the upstream proxy refused the tunnel (${status ?? 'no status'})`));
          return;
        }
        const rest = buf.subarray(end + 4);
        if (rest.length > 0) s.unshift(rest);
        resolve(s);
      };
      s.on('data', onData);
      s.once('error', fail);
      s.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${upstreamAuth ? `proxy-authorization: ${upstreamAuth}\r\n` : ''}\r\n`);
    });

  server.on('connection', (s: net.Socket) => {
    counts.clientConnections++;
    track(s);
    s.on('error', () => s.destroy());
  });
  server.on('clientError', (_e, s: net.Socket) => s.destroy());

  const listenHost = options.listen?.host ?? '127.0.0.1';
  const advertised = options.listen?.advertisedHost ?? listenHost;
  await listenOn(server, listenHost, options.listen?.ports);
  const { port } = server.address() as net.AddressInfo;

  return {
    url: `http://${net.isIPv6(advertised) ? `[${advertised}]` : advertised}:${port}`,
    token,
    outcomeFor(targetUrl) {
      try {
        const u = new URL(targetUrl);
        const p = u.port === '' ? (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80) : Number(u.port);
        return outcomes.get(endpointKey(u.hostname, p));
      } catch {
        return undefined;
      }
    },
    refused: () => [...outcomes].filter(([, o]) => o.kind === 'refused').map(([k]) => k),
    bind(target) {
      if (!bindable) throw new Error('this egress proxy cannot be bound (it has a policy already)');
      bindable = false;
      bind(target);
    },
    counts: () => ({ ...counts }),
    close() {
      closing.abort();
      agent.destroy();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      });
    },
  };
}

/** Listen on `host`, on any free port or on a free one of `ports` (tried from a random place in the range). */
async function listenOn(server: http.Server, host: string, ports: ProxyListen['ports']): Promise<void> {
  const attempt = (port: number) => new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  if (!ports) return attempt(0);
  const span = ports.to - ports.from + 1;
  const first = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    try {
      return await attempt(ports.from + ((first + i) % span));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    }
  }
  throw new Error(`no free port for the browser's egress proxy in ${ports.from}-${ports.to} on ${host}`);
}
