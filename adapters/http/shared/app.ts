/**
 * The transport-neutral HTTP application both adapters serve: route table
 * from operation plugins, body decoding (JSON or msgpack, gzip/deflate/br
 * request bodies), validation with schemas compiled at boot, the route's
 * Effect run as a fiber (interrupted on client abort), and encoding of
 * results and failures (spec 7.1 body, x-request-id, stage headers), HEAD
 * and OPTIONS, CORS, response compression, and streamed answers (a route
 * that declares `streams` may send its status and headers early and its body
 * in parts: stream.ts). Adapters only move bytes.
 */
import { Cause, Effect, Exit } from 'effect';
import { Packr, Unpackr } from 'msgpackr';
import { ReplyMeta, type ReplyStream, type RequestContext } from '../../../core/context.js';
import { isCompleted } from '../../../core/fast-effect.js';
import {
  type ApiFailure, BadRequest, errorBody, InternalError, isApiFailure, MethodNotAllowed, NotFound,
  PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType,
} from '../../../core/errors.js';
import type { HttpMethod, Route } from '../../../core/plugin.js';
import type { Clock, IdGenerator, Logger, Metrics } from '../../../core/ports.js';
import type { SchemaCompiler } from '../../../core/schema.js';
import { COMPRESS_ASYNC_BYTES, COMPRESS_MIN_BYTES, compressAsync, compressible, compressSync, decompress } from './compression.js';
import { prefersMsgpack, requestCoding, responseCoding, type ResponseCoding } from './negotiate.js';
import { BodyStream, type SinkStream } from './stream.js';

export type { SinkStream } from './stream.js';

/**
 * Headers read for a request that matched no route: enough to pick the
 * response format and to decide whether to close the connection. Matched
 * requests get exactly their route's `headerNames`, on both adapters.
 */
export const UNMATCHED_HEADERS: readonly string[] = ['accept', 'content-length'];

/**
 * Paths and methods echoed in 404 and 405 messages are cut to this many
 * characters (then "…"): a 20,000-character path gets a small error body.
 */
export const ECHO_MAX = 200;
const clip = (s: string, max = ECHO_MAX): string => (s.length <= max ? s : `${s.slice(0, max)}…`);

/** Response headers a browser script may read on a CORS response (beyond the safelisted ones). */
export const CORS_EXPOSE_HEADERS =
  'x-request-id, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-ratelimit-window, retry-after, www-authenticate';
/** Request headers a preflight may ask for: public (tool) routes, and routes of listed origins (plus authorization). */
const CORS_PUBLIC_ALLOW_HEADERS = 'accept, content-type, content-encoding';
const CORS_LISTED_ALLOW_HEADERS = 'accept, authorization, content-type, content-encoding';
/** How long a browser may reuse a preflight answer (seconds; Chromium caps it at 7200). */
export const CORS_MAX_AGE = '7200';
const PUBLIC_CORS: readonly string[] = ['access-control-allow-origin', '*', 'access-control-expose-headers', CORS_EXPOSE_HEADERS];
const NO_HEADERS: readonly string[] = [];

/**
 * Who may read a route's answers from a browser script on another origin:
 * `public`, every origin (`*`): the free developer tools; `listed`, only the
 * origins in SCOUR_CORS_ORIGINS (none by default): everything else.
 */
export type CorsMode = 'public' | 'listed';

/** A route path with every method served on it: what OPTIONS and 405 answer. */
export interface PathInfo {
  /** The route template, e.g. `/v1/crawl/{job_id}`. */
  readonly template: string;
  /** Methods served on the path, sorted, HEAD (with GET) and OPTIONS included. */
  readonly methods: readonly string[];
  /** `methods` joined: the Allow header. */
  readonly allow: string;
  readonly cors: CorsMode;
  /** Metrics label of OPTIONS on this path. */
  readonly optionsKey: string;
}

export interface CompiledRoute {
  readonly route: Route<unknown, unknown>;
  readonly method: HttpMethod;
  /** Metrics label and log field: the route template. */
  readonly key: string;
  readonly paramNames: readonly string[];
  readonly pattern: RegExp | undefined;
  readonly json: boolean;
  readonly contentType: string;
  readonly stamp: boolean;
  /** Success status. */
  readonly status: number;
  readonly readsBody: boolean;
  /** The request headers this route reads (what the uWS adapter copies). */
  readonly headerNames: readonly string[];
  readonly cors: CorsMode;
  /** The adapter copies Origin (Inbound.origin): only for `listed` routes when SCOUR_CORS_ORIGINS is set. */
  readonly readsOrigin: boolean;
  /** Identical large bodies may reuse their last compressed form (unstamped: no request id inside). */
  readonly memoCompressed: boolean;
  /** JSON text of a success result: compiled from the response schema, or JSON.stringify. */
  readonly serialize: (value: unknown) => string;
  /** The route's second success shape (Route.alternate), compiled. */
  readonly alternate: {
    readonly status: number; readonly when: (value: unknown) => boolean; readonly serialize: (value: unknown) => string; readonly frame: HeadFrame | undefined;
  } | undefined;
  /** The head frame of a JSON success answer (undefined: the headers are formatted one by one). */
  readonly frame: HeadFrame | undefined;
  /** The route may stream its answer (Route.streams, JSON routes, streaming not turned off). */
  readonly streams: boolean;
}

export interface Inbound {
  readonly method: string;
  readonly path: string;
  /** The headers the route declares: what the pipeline sees (ctx.headers). */
  readonly headers: Record<string, string | undefined>;
  readonly clientIp: string;
  /**
   * Transport headers the app reads itself and never shows the pipeline:
   * Accept-Encoding (every matched request), Content-Encoding (routes with a
   * body), Origin (CompiledRoute.readsOrigin, and OPTIONS), and
   * Access-Control-Request-Method (OPTIONS: a CORS preflight).
   */
  readonly acceptEncoding?: string | undefined;
  readonly contentEncoding?: string | undefined;
  readonly origin?: string | undefined;
  readonly preflightMethod?: string | undefined;
}

/**
 * Where a response goes. `send` is called at most once, never after abort.
 * A 204, and any answer to HEAD, goes out without its body (the adapter
 * knows the request's method); the body is still given, so HEAD can report
 * the Content-Length GET would have.
 */
export interface Sink {
  /** `frame`, when given, is the wire form of part of `headers` (see HeadFrame); a sink may ignore it. */
  send(status: number, headers: readonly string[], body: string | Uint8Array, close: boolean, frame?: HeadFrame): void;
  /**
   * A streamed answer instead of `send` (a sink without it never streams):
   * the status and headers, sent with the first write of the body, which
   * is chunked (no Content-Length). Called at most once, never with or
   * after `send`; undefined when the request is already over (the client
   * went away). `close`: ask the client not to reuse the connection.
   */
  begin?(status: number, headers: readonly string[], close: boolean): SinkStream | undefined;
}

/**
 * Part of a response head in its HTTP/1.1 wire form, made once per route at
 * boot, for adapters that write the head as one string (uWS): `lead` is the
 * status line, the `content-type` line and the start of the `x-request-id`
 * line (`headers[0]` to `headers[2]`); `trail` is the lines of the last
 * `trailLength` entries of `headers` (the route's CORS headers). `head()`
 * formats only what lies between: the request id, and the headers stages
 * added. Every string joined is a node V8 allocates and then walks again to
 * flatten the head for uWS, so the frame also remembers, by position, the
 * stage headers' lines: a header whose name and value are those of the
 * previous answer (a rate limit, its window and its end) is one piece, and
 * one whose value changed (the remaining count) is two.
 */
export class HeadFrame {
  private readonly names: string[] = [];
  private readonly prefixes: string[] = [];
  private readonly values: string[] = [];
  private readonly lines: string[] = [];

  constructor(readonly lead: string, readonly trail: string, readonly trailLength: number) {}

  /** The head as bytes (see bytes()): undefined until first asked for. */
  private wire: HeadBytes | undefined;

  /**
   * The head as bytes, the same as the UTF-8 of head(headers): a view of a
   * buffer this frame reuses, valid until its next call, so write it before
   * then. Undefined when a header holds a byte outside ASCII or the head is
   * too long for the buffer: use head() then.
   */
  bytes(headers: readonly string[]): Uint8Array | undefined {
    return (this.wire ??= new HeadBytes(this.lead, this.trail)).write(headers, this.trailLength);
  }

  /** The head: the same text as the status line followed by headLines(headers). */
  head(headers: readonly string[]): string {
    let head = this.lead + headers[3]!;
    const end = headers.length - this.trailLength;
    for (let i = 4, k = 0; i < end; i += 2, k++) {
      const name = headers[i]!;
      const value = headers[i + 1]!;
      if (name !== this.names[k]) {
        this.names[k] = name;
        this.prefixes[k] = '\r\n' + name + ': ';
        this.values[k] = value;
        this.lines[k] = this.prefixes[k] + value;
      } else if (value !== this.values[k]) {
        this.values[k] = value;
        this.lines[k] = this.prefixes[k] + value;
      }
      head += this.lines[k]!;
    }
    return head + this.trail;
  }
}

/** Room for a framed head: far more than any JSON answer's head (about 350 bytes on the tools). */
const HEAD_BYTES = 2048;

// Buffer's own Latin-1 writer (untyped in @types/node): one native copy of a string into bytes.
// Should a Node release drop it, the documented write(string, offset, 'latin1') does the same, a little slower.
const latin1Write: (this: Uint8Array, s: string, offset: number) => number =
  (Buffer.prototype as unknown as { latin1Write?: (this: Uint8Array, s: string, offset: number) => number }).latin1Write
  ?? function (this: Uint8Array, s: string, offset: number) { return (this as Buffer).write(s, offset, 'latin1'); };

/** Write ASCII `s` at `at`; false (the buffer then holds garbage there) on a character past 127 or no room. */
function writeAscii(buf: Uint8Array, at: number, s: string): boolean {
  const n = s.length;
  if (at + n > buf.length) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 127) return false;
    buf[at + i] = c;
  }
  return true;
}

/**
 * A HeadFrame's head written as bytes into one reused buffer. The binding
 * hands a string head to uWS through a UTF-8 copy: flattening the joined
 * string, measuring its UTF-8 length, copying it into a fresh allocation
 * (about 4,400 instructions per request on the tools route). Bytes are read
 * in place. The buffer keeps the previous head: the lead and the trail stay,
 * the request id is written over itself, and a stage header whose name and
 * value are those of the previous answer is left as it is (one whose value
 * has the same length is written over); from the first line that moves
 * (a longer request id, a new header), everything after it is written again.
 */
class HeadBytes {
  /** Its own memory (not a slice of the pool), so a view of it is handed to uWS whole. */
  private readonly buf = Buffer.allocUnsafeSlow(HEAD_BYTES);
  private readonly leadLength: number;
  private readonly trail: Uint8Array | undefined;
  /** What `buf` holds past the lead: the request id's length, the stage headers' names and values (-1: nothing usable). */
  private idLength = -1;
  private count = -1;
  private readonly names: string[] = [];
  private readonly values: string[] = [];
  private view: Uint8Array | undefined;

  constructor(lead: string, trail: string) {
    this.leadLength = writeAscii(this.buf, 0, lead) ? lead.length : -1;
    const t = new Uint8Array(trail.length);
    this.trail = writeAscii(t, 0, trail) ? t : undefined;
  }

  write(headers: readonly string[], trailLength: number): Uint8Array | undefined {
    const buf = this.buf;
    const trail = this.trail;
    if (this.leadLength < 0 || trail === undefined) return undefined;
    const id = headers[3]!;
    let p = this.leadLength;
    let dirty = id.length !== this.idLength;
    // Request ids are URL-safe ASCII (the IdGenerator port), so their Latin-1 bytes are their UTF-8.
    // One native copy: the id is usually a joined string, and reading it character by character
    // first flattens it (measured: about 1,970 instructions for a hyperid id, 1,410 this way).
    if (p + id.length > buf.length) return this.invalid();
    latin1Write.call(buf, id, p);
    this.idLength = id.length;
    p += id.length;
    const end = headers.length - trailLength;
    const names = this.names;
    const values = this.values;
    let k = 0;
    for (let i = 4; i < end; i += 2, k++) {
      const name = headers[i]!;
      const value = headers[i + 1]!;
      const valueAt = p + 4 + name.length;
      if (!dirty && k < this.count && name === names[k]) {
        const old = values[k]!;
        if (value === old) {
          p = valueAt + value.length;
          continue;
        }
        if (value.length === old.length) {
          if (!writeAscii(buf, valueAt, value)) return this.invalid();
          values[k] = value;
          p = valueAt + value.length;
          continue;
        }
      }
      dirty = true;
      if (valueAt > buf.length) return this.invalid();
      buf[p] = 13;
      buf[p + 1] = 10;
      if (!writeAscii(buf, p + 2, name)) return this.invalid();
      buf[valueAt - 2] = 58;
      buf[valueAt - 1] = 32;
      if (!writeAscii(buf, valueAt, value)) return this.invalid();
      names[k] = name;
      values[k] = value;
      p = valueAt + value.length;
    }
    if (k !== this.count) {
      dirty = true;
      this.count = k;
    }
    const total = p + trail.length;
    if (total > buf.length) return this.invalid();
    if (dirty) buf.set(trail, p);
    let view = this.view;
    if (view === undefined || view.length !== total) this.view = view = new Uint8Array(buf.buffer, buf.byteOffset, total);
    return view;
  }

  /** Nothing in the buffer past the lead can be trusted: the next head is written whole. */
  private invalid(): undefined {
    this.idLength = -1;
    this.count = -1;
    return undefined;
  }
}

/** Header lines in their wire form, each preceded by CRLF (the status line comes first). */
export function headLines(headers: readonly string[]): string {
  let out = '';
  for (let i = 0; i < headers.length; i += 2) out += '\r\n' + headers[i]! + ': ' + headers[i + 1]!;
  return out;
}

/** A matched request: the route, its path parameters. HEAD matches the path's GET route. */
export interface Matched {
  readonly route: CompiledRoute;
  readonly params: Record<string, string>;
}

export interface AppOptions {
  readonly routes: readonly Route<any, any>[];
  /** Compiles response serializers at boot. */
  readonly compiler: SchemaCompiler;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly bodyLimit: number;
  /** Exact origins whose scripts may call `listed` routes (SCOUR_CORS_ORIGINS); none by default. */
  readonly corsOrigins?: readonly string[];
  /** Routes that declare `streams` may stream their answers (SCOUR_STREAMING); default true. */
  readonly streaming?: boolean;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 202: '202 Accepted', 204: '204 No Content', 400: '400 Bad Request', 401: '401 Unauthorized',
  402: '402 Payment Required', 403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed',
  409: '409 Conflict', 413: '413 Payload Too Large', 415: '415 Unsupported Media Type', 422: '422 Unprocessable Entity',
  429: '429 Too Many Requests', 500: '500 Internal Server Error', 502: '502 Bad Gateway', 503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
};
export const statusLine = (status: number): string => STATUS_TEXT[status] ?? `${status} Status`;

const JSON_TYPE = 'application/json; charset=utf-8';
const MSGPACK_TYPE = 'application/msgpack';

type BodyKind = 'json' | 'msgpack' | 'empty' | 'unsupported';

function bodyKind(contentType: string | undefined, length: number): BodyKind {
  if (length === 0) return 'empty';
  if (contentType === undefined) return 'unsupported';
  if (contentType === 'application/json' || contentType === 'application/json; charset=utf-8') return 'json';
  const semi = contentType.indexOf(';');
  const media = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'))) return 'json';
  if (media === 'application/msgpack' || media === 'application/x-msgpack' || media === 'application/vnd.msgpack') return 'msgpack';
  return 'unsupported';
}

// Buffer's own UTF-8 decoder works on any Uint8Array; calling it directly skips a Buffer wrapper per request.
const utf8Slice = (Buffer.prototype as unknown as { utf8Slice?: (this: Uint8Array, start: number, end: number) => string }).utf8Slice;
const utf8 = (u: Uint8Array): string =>
  utf8Slice !== undefined ? utf8Slice.call(u, 0, u.byteLength) : Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString('utf8');

const wantsMsgpack = prefersMsgpack;

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

interface PathEntry {
  readonly info: PathInfo;
  readonly byMethod: Map<string, CompiledRoute>;
  readonly pattern: RegExp | undefined;
  readonly paramNames: readonly string[];
}

function pathParams(entry: PathEntry, m: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  entry.paramNames.forEach((n, i) => {
    try {
      params[n] = decodeURIComponent(m[i + 1]!);
    } catch {
      params[n] = m[i + 1]!;
    }
  });
  return params;
}

/**
 * True when decoded msgpack holds anything but plain data: a `__proto__`
 * key, or an object whose prototype is not Object.prototype (extension
 * types, a replaced prototype). Iterative, so no nesting depth can overflow
 * the stack; the work is bounded by the body size limit.
 */
function hasPoisonKey(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push(value[i]);
      continue;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype) return true;
    for (const k of Object.keys(value)) {
      if (k === '__proto__') return true;
      stack.push((value as Record<string, unknown>)[k]);
    }
  }
  return false;
}

export class HttpApp {
  private readonly staticPaths = new Map<string, PathEntry>();
  private readonly dynamicPaths: PathEntry[] = [];
  readonly compiled: readonly CompiledRoute[];
  /** Every route path with its methods (the uWS adapter registers OPTIONS on each). */
  readonly paths: readonly PathInfo[];
  private readonly packr = new Packr({ useRecords: false });
  private readonly unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
  private inFlight = 0;
  /** One debug line per request (LOG_LEVEL=debug): decided once, at boot. */
  private readonly accessLog: boolean;
  private draining = false;
  private drainWaiters: Array<() => void> = [];
  private readonly corsOrigins: ReadonlySet<string>;
  /** The last compressed form of a large unstamped body, per route and coding: the OpenAPI document is compressed once. */
  private readonly compressedMemo = new Map<string, { readonly source: string; readonly out: Buffer }>();

  constructor(private readonly opts: AppOptions) {
    this.accessLog = opts.logger.isLevelEnabled('debug');
    this.corsOrigins = new Set(opts.corsOrigins ?? []);
    const compiled: CompiledRoute[] = [];
    const seen = new Set<string>();
    const byPath = new Map<string, CompiledRoute[]>();
    for (const route of opts.routes) {
      const id = `${route.method} ${route.path}`;
      if (seen.has(id)) throw new Error(`ROUTE_DUPLICATE: ${id} is declared twice`);
      seen.add(id);
      if (route.request !== undefined && !(route.handle.stageNames ?? []).includes('validate')) {
        throw new Error(`ROUTE_INVALID: ${id} declares a request schema but its pipeline has no validate stage`);
      }
      const paramNames = [...route.path.matchAll(/\{([a-z_][a-z0-9_]*)\}/gi)].map((m) => m[1]!);
      const pattern = paramNames.length === 0
        ? undefined
        : new RegExp(`^${route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[a-z_][a-z0-9_]*\\?\}/gi, '([^/]+)')}$`);
      const json = route.produces === undefined || route.produces === 'json';
      const stamp = json && route.stampRequestId !== false;
      const cors: CorsMode = route.auth === 'none' && (route.tags ?? []).includes('tools') ? 'public' : 'listed';
      const frameOf = (status: number) => (json ? this.successFrame(status, cors) : undefined);
      const c: CompiledRoute = {
        route, method: route.method, key: id, paramNames, pattern,
        json,
        contentType: json ? JSON_TYPE : (route.produces as { contentType: string }).contentType,
        stamp,
        status: route.status ?? 200,
        readsBody: route.request !== undefined,
        headerNames: [
          'accept',
          ...(route.request !== undefined ? ['content-type'] : []),
          ...(route.auth !== 'none' ? ['authorization'] : []),
          ...(route.headers ?? []),
        ],
        cors,
        readsOrigin: cors === 'listed' && this.corsOrigins.size > 0,
        memoCompressed: !stamp,
        serialize: json && route.response ? opts.compiler.compileSerializer(route.response) : (v: unknown) => JSON.stringify(v),
        alternate: route.alternate === undefined ? undefined : {
          status: route.alternate.status,
          when: route.alternate.when,
          serialize: opts.compiler.compileSerializer(route.alternate.response),
          frame: frameOf(route.alternate.status),
        },
        frame: frameOf(route.status ?? 200),
        streams: json && route.streams === true && opts.streaming !== false,
      };
      compiled.push(c);
      const group = byPath.get(route.path);
      if (group) group.push(c);
      else byPath.set(route.path, [c]);
    }
    this.compiled = compiled;
    const paths: PathInfo[] = [];
    for (const [template, routes] of byPath) {
      const methods = new Set<string>(routes.map((r) => r.method));
      if (methods.has('GET')) methods.add('HEAD');
      methods.add('OPTIONS');
      const sorted = [...methods].sort();
      const info: PathInfo = {
        template, methods: sorted, allow: sorted.join(', '),
        cors: routes.some((r) => r.cors === 'public') ? 'public' : 'listed',
        optionsKey: `OPTIONS ${template}`,
      };
      paths.push(info);
      const entry: PathEntry = { info, byMethod: new Map(routes.map((r) => [r.method, r])), pattern: routes[0]!.pattern, paramNames: routes[0]!.paramNames };
      if (entry.pattern === undefined) this.staticPaths.set(template, entry);
      else this.dynamicPaths.push(entry);
    }
    this.paths = paths;
  }

  /**
   * The frame of a JSON success answer with this status: what sendSuccess and
   * deliver put around the request id and the stage headers, in wire form.
   * None where the CORS headers depend on the request (listed origins).
   */
  private successFrame(status: number, cors: CorsMode): HeadFrame | undefined {
    let trail: readonly string[] = NO_HEADERS;
    if (cors === 'public') trail = PUBLIC_CORS;
    else if (this.corsOrigins.size > 0) return undefined;
    return new HeadFrame(`${statusLine(status)}\r\ncontent-type: ${JSON_TYPE}\r\nx-request-id: `, headLines(trail), trail.length);
  }

  /**
   * Find the route (HEAD: the path's GET route), OPTIONS on a known path, or
   * the 404/405 failure. Query strings must already be stripped.
   */
  match(method: string, path: string): Matched | { readonly options: PathInfo } | ApiFailure {
    const s = this.staticPaths.get(path);
    if (s !== undefined) {
      const hit = s.byMethod.get(method);
      if (hit !== undefined) return { route: hit, params: NO_PARAMS };
    }
    const entries: Array<readonly [PathEntry, RegExpExecArray | undefined]> = s === undefined ? [] : [[s, undefined]];
    for (const e of this.dynamicPaths) {
      const m = e.pattern!.exec(path);
      if (m === null) continue;
      const hit = e.byMethod.get(method);
      if (hit !== undefined) return { route: hit, params: pathParams(e, m) };
      entries.push([e, m]);
    }
    if (entries.length === 0) return this.notFound(method, path);
    if (method === 'HEAD') {
      for (const [e, m] of entries) {
        const get = e.byMethod.get('GET');
        if (get !== undefined) return { route: get, params: m === undefined ? NO_PARAMS : pathParams(e, m) };
      }
    }
    if (method === 'OPTIONS') return { options: entries[0]![0].info };
    const allow = new Set<string>();
    for (const [e] of entries) for (const x of e.info.methods) allow.add(x);
    return new MethodNotAllowed({ message: `Method ${clip(method, 32)} is not allowed on ${clip(path)}`, allow: [...allow].sort() });
  }

  /** The 404 of a path no route serves (its echo of the path bounded). */
  notFound(method: string, path: string): NotFound {
    return new NotFound({ message: `No route for ${clip(method, 32)} ${clip(path)}` });
  }

  get bodyLimit(): number {
    return this.opts.bodyLimit;
  }

  get activeRequests(): number {
    return this.inFlight;
  }

  /** Answer a failure found before a route ran (404, 405, 413, draining); `route`: the matched route, if any. */
  reject(inbound: Inbound, failure: ApiFailure, sink: Sink, route?: CompiledRoute, close = false): void {
    const id = this.opts.ids.next();
    const t0 = performance.now();
    const status = this.sendFailure(failure, id, wantsMsgpack(inbound.headers.accept), NO_HEADERS, inbound, route, sink, close);
    this.opts.metrics.observe(route?.key ?? 'unmatched', status, (performance.now() - t0) / 1000);
  }

  /**
   * OPTIONS on a known path: 204 with Allow. A CORS preflight (Origin and
   * Access-Control-Request-Method) also gets the Access-Control-Allow-*
   * headers when the path's CORS mode lets the origin in; otherwise none, and
   * the browser refuses the call.
   */
  options(inbound: Inbound, info: PathInfo, sink: Sink): void {
    const t0 = performance.now();
    const headers = ['allow', info.allow, 'x-request-id', this.opts.ids.next()];
    const preflight = inbound.origin !== undefined && inbound.preflightMethod !== undefined;
    if (info.cors === 'public') {
      headers.push('access-control-allow-origin', '*');
      if (preflight) {
        headers.push('access-control-allow-methods', info.allow, 'access-control-allow-headers', CORS_PUBLIC_ALLOW_HEADERS, 'access-control-max-age', CORS_MAX_AGE);
      }
    } else if (this.corsOrigins.size > 0) {
      headers.push('vary', 'Origin');
      if (preflight && this.corsOrigins.has(inbound.origin!)) {
        headers.push(
          'access-control-allow-origin', inbound.origin!, 'access-control-allow-methods', info.allow,
          'access-control-allow-headers', CORS_LISTED_ALLOW_HEADERS, 'access-control-max-age', CORS_MAX_AGE,
        );
      }
    }
    sink.send(204, headers, '', this.draining);
    this.opts.metrics.observe(info.optionsKey, 204, (performance.now() - t0) / 1000);
  }

  /** Early check before reading a body: the declared length over the limit. */
  tooLarge(declaredLength: string | undefined): PayloadTooLarge | undefined {
    if (declaredLength === undefined) return undefined;
    const n = Number(declaredLength);
    return Number.isFinite(n) && n > this.opts.bodyLimit ? this.payloadTooLarge() : undefined;
  }

  payloadTooLarge(): PayloadTooLarge {
    return new PayloadTooLarge({ message: `Request body exceeds the ${this.opts.bodyLimit} byte limit`, limit: this.opts.bodyLimit });
  }

  /**
   * Run one request. `body` is only read synchronously (uWS hands out views
   * that die after the callback; a compressed body is copied before it is
   * decoded on the thread pool). Returns the interruptor for client aborts;
   * after calling it the sink must not be used.
   */
  execute(
    compiled: CompiledRoute,
    params: Record<string, string>,
    inbound: Inbound,
    body: Uint8Array | undefined,
    sink: Sink,
  ): (() => void) | undefined {
    const t0 = performance.now();
    const requestId = this.opts.ids.next();
    const msgpack = wantsMsgpack(inbound.headers.accept);

    if (this.draining) {
      this.sendFailure(new ServiceUnavailable({ message: 'Server is shutting down', retryAfter: 1 }), requestId, msgpack, NO_HEADERS, inbound, compiled, sink, true);
      this.opts.metrics.observe(compiled.key, 503, (performance.now() - t0) / 1000);
      return undefined;
    }

    const encoding = inbound.contentEncoding;
    if (compiled.readsBody && encoding !== undefined && body !== undefined && body.byteLength > 0) {
      const coding = requestCoding(encoding);
      if (coding === undefined) {
        const unsupported = new UnsupportedMediaType({
          message: `Content-Encoding ${JSON.stringify(clip(encoding, 64))} is not supported; send the body as it is, or in gzip, deflate or br`,
        });
        return this.run(compiled, params, inbound, undefined, unsupported, sink, t0, requestId, msgpack);
      }
      if (coding !== 'identity') return this.decodeThenRun(coding, compiled, params, inbound, body, sink, t0, requestId, msgpack);
    }
    return this.run(compiled, params, inbound, body, undefined, sink, t0, requestId, msgpack);
  }

  /**
   * A compressed body: decoded on the thread pool up to the body limit, then
   * run. Past the limit: 413, as for a raw body over it. Corrupt: the
   * validate stage answers 400 (auth and quota first, as for malformed JSON).
   */
  private decodeThenRun(
    coding: 'gzip' | 'deflate' | 'br', compiled: CompiledRoute, params: Record<string, string>, inbound: Inbound,
    body: Uint8Array, sink: Sink, t0: number, requestId: string, msgpack: boolean,
  ): () => void {
    const owned = body instanceof Buffer ? body : Buffer.from(body); // uWS views die with its callback
    let aborted = false;
    let interrupt: (() => void) | undefined;
    this.inFlight++;
    decompress(coding, owned, this.opts.bodyLimit, (out) => {
      if (aborted) {
        this.opts.metrics.observe(compiled.key, 499, (performance.now() - t0) / 1000);
      } else if (!('kind' in out)) {
        interrupt = this.run(compiled, params, inbound, out, undefined, sink, t0, requestId, msgpack);
      } else if (out.kind === 'too_large') {
        this.sendFailure(this.payloadTooLarge(), requestId, msgpack, NO_HEADERS, inbound, compiled, sink, false);
        this.opts.metrics.observe(compiled.key, 413, (performance.now() - t0) / 1000);
      } else {
        const corrupt = new BadRequest({
          message: `Malformed ${coding} body`,
          details: out.message,
          validationErrors: [{ field: 'body', message: `is not valid ${coding} data: ${out.message}` }],
        });
        interrupt = this.run(compiled, params, inbound, undefined, corrupt, sink, t0, requestId, msgpack);
      }
      this.release();
    });
    return () => {
      if (interrupt !== undefined) interrupt();
      else aborted = true;
    };
  }

  private run(
    compiled: CompiledRoute, params: Record<string, string>, inbound: Inbound, body: Uint8Array | undefined,
    failed: BadRequest | UnsupportedMediaType | undefined, sink: Sink, t0: number, requestId: string, msgpack: boolean,
  ): (() => void) | undefined {
    const reply = new ReplyMeta();
    // Decode now (uWS bodies are only valid during this call); failures wait for the validate stage.
    let input: unknown = undefined;
    let bodyError = failed;
    if (compiled.readsBody && bodyError === undefined) {
      const decoded = this.decode(inbound.headers['content-type'], body);
      if ('value' in decoded) input = decoded.value;
      else bodyError = decoded;
    }

    const ctx: RequestContext = {
      requestId, receivedAt: this.opts.clock.now(), method: inbound.method, path: inbound.path, params,
      clientIp: inbound.clientIp, headers: inbound.headers, body: input, bodyError, reply,
    };
    // msgpack answers are built whole (one map); HEAD has no body to stream.
    if (compiled.streams && !msgpack && inbound.method !== 'HEAD' && sink.begin !== undefined) {
      reply.allowStream(() => this.openStream(compiled, requestId, reply, inbound, sink, t0));
    }

    let effect: Effect.Effect<unknown, ApiFailure>;
    try {
      effect = compiled.route.handle(ctx) as Effect.Effect<unknown, ApiFailure>;
    } catch (e) {
      effect = Effect.die(e);
    }
    // Work that completed synchronously is already an Exit: answer without a fiber.
    if (isCompleted(effect)) {
      this.finish(effect as unknown as Exit.Exit<unknown, ApiFailure>, compiled, requestId, msgpack, reply, inbound, sink, t0, false);
      return undefined;
    }

    this.inFlight++;
    let aborted = false;
    let finished = false;
    const interrupt = Effect.runCallback(effect, {
      onExit: (exit) => {
        finished = true;
        this.finish(exit, compiled, requestId, msgpack, reply, inbound, sink, t0, aborted);
        this.release();
      },
    });
    if (finished) return undefined;
    return () => {
      if (finished || aborted) return;
      aborted = true;
      interrupt();
    };
  }

  /** One piece of in-flight work (a fiber, a decode, a compression) is over. */
  private release(): void {
    this.inFlight--;
    if (this.inFlight === 0 && this.draining) this.flushDrainWaiters();
  }

  private finish(
    exit: Exit.Exit<unknown, ApiFailure>, compiled: CompiledRoute, requestId: string, msgpack: boolean,
    reply: ReplyMeta, inbound: Inbound, sink: Sink, t0: number, aborted: boolean,
  ): void {
    if (reply.streamed) {
      this.finishStream(exit, compiled, requestId, reply.stream() as BodyStream, aborted);
      return;
    }
    let status: number;
    if (aborted) {
      status = 499;
    } else if (Exit.isSuccess(exit)) {
      const alt = compiled.alternate !== undefined && compiled.alternate.when(exit.value) ? compiled.alternate : undefined;
      status = alt?.status ?? compiled.status;
      this.sendSuccess(compiled, exit.value, requestId, msgpack, reply.headers, inbound, sink, this.draining, alt);
    } else {
      const failure = this.failureOf(exit.cause, compiled, requestId);
      status = this.sendFailure(failure, requestId, msgpack, reply.headers, inbound, compiled, sink, this.draining);
    }
    const seconds = (performance.now() - t0) / 1000;
    this.opts.metrics.observe(compiled.key, status, seconds);
    if (this.accessLog) this.opts.logger.debug({ request_id: requestId, route: compiled.key, status, ms: Math.round(seconds * 1e4) / 10 }, 'request');
  }

  /**
   * Start a streamed answer (the route's stage called ctx.reply.stream()):
   * the route's status and the headers a buffered answer would have had
   * (content type, request id, the stage headers so far, CORS, Vary), with
   * Content-Encoding when the client accepts br or gzip. The stream is in
   * flight (shutdown waits for it) until it has ended or been cut; its
   * metrics and access line are written then.
   */
  private openStream(compiled: CompiledRoute, requestId: string, reply: ReplyMeta, inbound: Inbound, sink: Sink, t0: number): ReplyStream {
    const headers = ['content-type', JSON_TYPE, 'x-request-id', requestId];
    const extra = reply.headers;
    for (let i = 0; i < extra.length; i++) headers.push(extra[i]!);
    this.cors(headers, inbound, compiled);
    headers.push('vary', 'Accept-Encoding');
    const coding = responseCoding(inbound.acceptEncoding);
    if (coding !== undefined) headers.push('content-encoding', coding);
    const out = sink.begin!(compiled.status, headers, this.draining);
    this.inFlight++;
    return new BodyStream(out, coding, (status, error) => {
      if (error !== undefined) this.opts.logger.warn({ request_id: requestId, err: String(error), coding }, 'streamed answer: compression failed; body cut off');
      const seconds = (performance.now() - t0) / 1000;
      this.opts.metrics.observe(compiled.key, status, seconds);
      if (this.accessLog) this.opts.logger.debug({ request_id: requestId, route: compiled.key, status, ms: Math.round(seconds * 1e4) / 10, streamed: true }, 'request');
      this.release();
    });
  }

  /**
   * The end of a streamed answer. Success: the handler's value is the rest
   * of the body (a string; a stamped route's ends with `}`, the request id
   * goes before it), then the end. Failure after the head went out (the bill
   * stage refused, a store outage, a defect): the status cannot change any more,
   * so the body is cut off, and the client holds an incomplete document,
   * never a complete one; the metrics count the failure's status. The
   * client went away: the body is dropped (499).
   */
  private finishStream(exit: Exit.Exit<unknown, ApiFailure>, compiled: CompiledRoute, requestId: string, body: BodyStream, aborted: boolean): void {
    if (aborted) {
      body.abort(499);
      return;
    }
    if (Exit.isSuccess(exit)) {
      const value = exit.value;
      if (typeof value === 'string') {
        const tail = compiled.stamp && value.charCodeAt(value.length - 1) === 125 /* } */
          ? `${value.slice(0, -1)},"request_id":"${requestId}"}`
          : value;
        body.end(tail, compiled.status, this.draining);
        return;
      }
      this.opts.logger.error({ request_id: requestId, route: compiled.key }, 'streamed answer: the handler returned no string tail; body cut off');
      body.abort(500);
      return;
    }
    const failure = this.failureOf(exit.cause, compiled, requestId);
    this.opts.logger.warn({ request_id: requestId, route: compiled.key, status: failure.status, code: failure.code }, 'streamed answer failed after its head was sent; body cut off');
    body.abort(failure.status);
  }

  private decode(contentType: string | undefined, body: Uint8Array | undefined): { value: unknown } | BadRequest | UnsupportedMediaType {
    const length = body?.byteLength ?? 0;
    switch (bodyKind(contentType, length)) {
      case 'empty':
        return { value: {} };
      case 'json': {
        let text = utf8(body!);
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        try {
          return { value: JSON.parse(text) };
        } catch (e) {
          return new BadRequest({
            message: 'Malformed JSON body',
            details: (e as Error).message,
            validationErrors: [{ field: 'body', message: `is not valid JSON: ${(e as Error).message}` }],
          });
        }
      }
      case 'msgpack': {
        try {
          const value = this.unpackr.unpack(body!);
          if (hasPoisonKey(value)) {
            return BadRequest.of('body', 'msgpack body may only hold plain maps, arrays, strings, numbers, booleans and nil', 'Unsupported msgpack body');
          }
          return { value };
        } catch (e) {
          return new BadRequest({
            message: 'Malformed msgpack body',
            details: (e as Error).message,
            validationErrors: [{ field: 'body', message: `is not valid msgpack: ${(e as Error).message}` }],
          });
        }
      }
      default:
        return new UnsupportedMediaType({
          message: `Content-Type ${JSON.stringify(clip(contentType ?? '', 64))} is not supported; send application/json or application/msgpack`,
        });
    }
  }

  private failureOf(cause: Cause.Cause<ApiFailure>, compiled: CompiledRoute, requestId: string): ApiFailure {
    for (const reason of cause.reasons) {
      if (Cause.isFailReason(reason)) return reason.error;
    }
    for (const reason of cause.reasons) {
      if (Cause.isDieReason(reason) && isApiFailure(reason.defect)) return reason.defect;
    }
    if (Cause.hasInterruptsOnly(cause)) {
      return new ServiceUnavailable({ message: 'The request was interrupted', retryAfter: 1 });
    }
    this.opts.logger.error({ request_id: requestId, route: compiled.key, cause: Cause.pretty(cause) }, 'unhandled failure');
    return new InternalError({ message: 'Internal server error' });
  }

  private encode(value: unknown, msgpack: boolean): string | Uint8Array {
    return msgpack ? this.packr.pack(value) : JSON.stringify(value);
  }

  /** `close`: ask the client not to reuse the connection (set while draining, so keep-alive clients move on). */
  private sendSuccess(
    compiled: CompiledRoute, value: unknown, requestId: string, msgpack: boolean, extra: readonly string[], inbound: Inbound, sink: Sink, close: boolean,
    alt?: CompiledRoute['alternate'],
  ): void {
    let payload: string | Uint8Array;
    let type = compiled.contentType;
    let frame: HeadFrame | undefined;
    if (compiled.json) {
      const stamp = compiled.stamp && value !== null && typeof value === 'object' && !Array.isArray(value);
      if (msgpack) {
        payload = this.packr.pack(stamp ? { ...(value as object), request_id: requestId } : value);
        type = MSGPACK_TYPE;
      } else {
        const json = (alt ?? compiled).serialize(value);
        frame = (alt ?? compiled).frame;
        // Append request_id to the serialised object rather than to the object: the
        // plugin's result keeps its shape (V8's fast stringify path) and is never mutated.
        // Request ids are URL-safe ([A-Za-z0-9_-]), so they need no escaping.
        if (!stamp) payload = json;
        else if (json === '{}') payload = `{"request_id":"${requestId}"}`;
        else if (json.charCodeAt(json.length - 1) === 125 /* } */) payload = `${json.slice(0, -1)},"request_id":"${requestId}"}`;
        else payload = JSON.stringify({ ...(value as object), request_id: requestId }); // a toJSON() that is not an object
      }
    } else {
      payload = typeof value === 'string' || value instanceof Uint8Array ? value : String(value);
    }
    const headers = ['content-type', type, 'x-request-id', requestId];
    for (let i = 0; i < extra.length; i += 2) {
      // A non-JSON route (an image, say) may name its own content type per response.
      if (!compiled.json && extra[i] === 'content-type') headers[1] = extra[i + 1]!;
      else headers.push(extra[i]!, extra[i + 1]!);
    }
    this.deliver(alt?.status ?? compiled.status, headers, payload, close, inbound, compiled, sink, frame);
  }

  private sendFailure(
    failure: ApiFailure, requestId: string, msgpack: boolean, extra: readonly string[], inbound: Inbound, route: CompiledRoute | undefined, sink: Sink, close: boolean,
  ): number {
    // A route in another API's shape answers its failures in that shape (Route.errorShape).
    const shaped = route?.route.errorShape?.of(failure, requestId);
    const body = shaped === undefined ? errorBody(failure, requestId, new Date(this.opts.clock.now())) : shaped.body;
    const headers = ['content-type', msgpack ? MSGPACK_TYPE : JSON_TYPE, 'x-request-id', requestId];
    for (let i = 0; i < extra.length; i++) headers.push(extra[i]!);
    const more = failure.headers?.();
    if (more) for (const k in more) headers.push(k, more[k]!);
    const status = shaped?.status ?? failure.status;
    this.deliver(status, headers, this.encode(body, msgpack), close, inbound, route, sink);
    return status;
  }

  /**
   * The last step of every answer from a route: CORS headers by the route's
   * mode, then compression when the body is at least COMPRESS_MIN_BYTES of a
   * text-like type (headers[1] is the content type) and the client accepts
   * br or gzip. Such bodies also say `Vary: Accept-Encoding`, compressed or
   * not. HEAD is never compressed (no body goes out).
   */
  private deliver(
    status: number, headers: string[], payload: string | Uint8Array, close: boolean, inbound: Inbound, route: CompiledRoute | undefined, sink: Sink,
    frame?: HeadFrame,
  ): void {
    if (route !== undefined) this.cors(headers, inbound, route);
    const size = typeof payload === 'string' ? payload.length : payload.byteLength;
    if (size < COMPRESS_MIN_BYTES || !compressible(headers[1]!)) {
      sink.send(status, headers, payload, close, frame);
      return;
    }
    headers.push('vary', 'Accept-Encoding');
    const coding = inbound.method === 'HEAD' ? undefined : responseCoding(inbound.acceptEncoding);
    if (coding === undefined) {
      sink.send(status, headers, payload, close);
      return;
    }
    const memoKey = route !== undefined && route.memoCompressed && typeof payload === 'string' && size >= COMPRESS_ASYNC_BYTES
      ? `${route.key} ${coding}` : undefined;
    if (memoKey !== undefined) {
      const memo = this.compressedMemo.get(memoKey);
      if (memo !== undefined && memo.source === payload) {
        headers.push('content-encoding', coding);
        sink.send(status, headers, memo.out, close);
        return;
      }
    }
    if (size < COMPRESS_ASYNC_BYTES) {
      headers.push('content-encoding', coding);
      sink.send(status, headers, compressSync(coding, payload), close);
      return;
    }
    this.compressLater(status, headers, payload, close, coding, memoKey, sink);
  }

  /** The CORS headers of an answer by the route's mode (see CorsMode). */
  private cors(headers: string[], inbound: Inbound, route: CompiledRoute): void {
    if (route.cors === 'public') {
      for (let i = 0; i < PUBLIC_CORS.length; i++) headers.push(PUBLIC_CORS[i]!);
    } else if (this.corsOrigins.size > 0) {
      headers.push('vary', 'Origin');
      const origin = inbound.origin;
      if (origin !== undefined && this.corsOrigins.has(origin)) {
        headers.push('access-control-allow-origin', origin, 'access-control-expose-headers', CORS_EXPOSE_HEADERS);
      }
    }
  }

  /** Compression on the thread pool: the answer is in flight (shutdown waits for it) until it is written. */
  private compressLater(
    status: number, headers: string[], payload: string | Uint8Array, close: boolean, coding: ResponseCoding, memoKey: string | undefined, sink: Sink,
  ): void {
    this.inFlight++;
    compressAsync(coding, payload, (error, out) => {
      if (error === null) {
        if (memoKey !== undefined && typeof payload === 'string') this.compressedMemo.set(memoKey, { source: payload, out });
        headers.push('content-encoding', coding);
        sink.send(status, headers, out, close);
      } else {
        this.opts.logger.warn({ err: String(error), coding }, 'response compression failed; sent uncompressed');
        sink.send(status, headers, payload, close);
      }
      this.release();
    });
  }

  /** Stop taking new work; resolve when in-flight requests have finished or the timeout passes. */
  drain(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private flushDrainWaiters(): void {
    const w = this.drainWaiters;
    this.drainWaiters = [];
    for (const f of w) f();
  }
}
