/**
 * The transport-neutral HTTP application both adapters serve: route table
 * from operation plugins, body decoding (JSON or msgpack), validation with
 * schemas compiled at boot, the route's Effect run as a fiber (interrupted on
 * client abort), and encoding of results and failures (spec 7.1 body,
 * x-request-id, stage headers). Adapters only move bytes.
 */
import { Cause, Effect, Exit } from 'effect';
import { Packr, Unpackr } from 'msgpackr';
import { ReplyMeta, type RequestContext } from '../../../core/context.js';
import {
  type ApiFailure, BadRequest, errorBody, InternalError, isApiFailure, MethodNotAllowed, NotFound,
  PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType,
} from '../../../core/errors.js';
import type { HttpMethod, Route } from '../../../core/plugin.js';
import type { Clock, IdGenerator, Logger, Metrics } from '../../../core/ports.js';
import type { SchemaCompiler } from '../../../core/schema.js';

/**
 * Headers read for a request that matched no route: enough to pick the
 * response format and to decide whether to close the connection. Matched
 * requests get exactly their route's `headerNames`, on both adapters.
 */
export const UNMATCHED_HEADERS: readonly string[] = ['accept', 'content-length'];

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
  /** JSON text of a success result: compiled from the response schema, or JSON.stringify. */
  readonly serialize: (value: unknown) => string;
  /** The route's second success shape (Route.alternate), compiled. */
  readonly alternate: { readonly status: number; readonly when: (value: unknown) => boolean; readonly serialize: (value: unknown) => string } | undefined;
}

export interface Inbound {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | undefined>;
  readonly clientIp: string;
}

/** Where a response goes. `send` is called at most once, never after abort. */
export interface Sink {
  send(status: number, headers: readonly string[], body: string | Uint8Array, close: boolean): void;
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

const wantsMsgpack = (accept: string | undefined): boolean =>
  accept !== undefined && accept.length > 0 && /application\/(x-|vnd\.)?msgpack/i.test(accept);

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
  private readonly statics = new Map<string, Map<string, CompiledRoute>>();
  private readonly dynamics: CompiledRoute[] = [];
  readonly compiled: readonly CompiledRoute[];
  private readonly packr = new Packr({ useRecords: false });
  private readonly unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
  private inFlight = 0;
  /** One debug line per request (LOG_LEVEL=debug): decided once, at boot. */
  private readonly accessLog: boolean;
  private draining = false;
  private drainWaiters: Array<() => void> = [];

  constructor(private readonly opts: AppOptions) {
    this.accessLog = opts.logger.isLevelEnabled('debug');
    const compiled: CompiledRoute[] = [];
    const seen = new Set<string>();
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
      const c: CompiledRoute = {
        route, method: route.method, key: id, paramNames, pattern,
        json,
        contentType: json ? JSON_TYPE : (route.produces as { contentType: string }).contentType,
        stamp: json && route.stampRequestId !== false,
        status: route.status ?? 200,
        readsBody: route.request !== undefined,
        headerNames: [
          'accept',
          ...(route.request !== undefined ? ['content-type'] : []),
          ...(route.auth !== 'none' ? ['authorization'] : []),
          ...(route.headers ?? []),
        ],
        serialize: json && route.response ? opts.compiler.compileSerializer(route.response) : (v: unknown) => JSON.stringify(v),
        alternate: route.alternate === undefined ? undefined : {
          status: route.alternate.status,
          when: route.alternate.when,
          serialize: opts.compiler.compileSerializer(route.alternate.response),
        },
      };
      compiled.push(c);
      if (pattern === undefined) {
        let byMethod = this.statics.get(route.path);
        if (!byMethod) this.statics.set(route.path, (byMethod = new Map()));
        byMethod.set(route.method, c);
      } else {
        this.dynamics.push(c);
      }
    }
    this.compiled = compiled;
  }

  /** Find the route, or the 404/405 failure. Query strings must already be stripped. */
  match(method: string, path: string): { route: CompiledRoute; params: Record<string, string> } | ApiFailure {
    const byMethod = this.statics.get(path);
    const hit = byMethod?.get(method);
    if (hit) return { route: hit, params: {} };
    const allow = new Set<string>(byMethod ? byMethod.keys() : []);
    for (const c of this.dynamics) {
      const m = c.pattern!.exec(path);
      if (!m) continue;
      if (c.method === method) {
        const params: Record<string, string> = {};
        c.paramNames.forEach((n, i) => {
          try {
            params[n] = decodeURIComponent(m[i + 1]!);
          } catch {
            params[n] = m[i + 1]!;
          }
        });
        return { route: c, params };
      }
      allow.add(c.method);
    }
    if (allow.size > 0) return new MethodNotAllowed({ message: `Method ${method} is not allowed on ${path}`, allow: [...allow].sort() });
    return new NotFound({ message: `No route for ${method} ${path}` });
  }

  get bodyLimit(): number {
    return this.opts.bodyLimit;
  }

  get activeRequests(): number {
    return this.inFlight;
  }

  /** Answer a failure found before a route ran (404, 405, 413, draining). */
  reject(inbound: Inbound, failure: ApiFailure, sink: Sink, routeKey = 'unmatched', close = false): void {
    const id = this.opts.ids.next();
    const t0 = performance.now();
    this.sendFailure(failure, id, wantsMsgpack(inbound.headers.accept), [], sink, close);
    this.opts.metrics.observe(routeKey, failure.status, (performance.now() - t0) / 1000);
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
   * that die after the callback). Returns the interruptor for client aborts;
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
    const reply = new ReplyMeta();

    if (this.draining) {
      this.sendFailure(new ServiceUnavailable({ message: 'Server is shutting down', retryAfter: 1 }), requestId, msgpack, reply.headers, sink, true);
      this.opts.metrics.observe(compiled.key, 503, (performance.now() - t0) / 1000);
      return undefined;
    }

    // Decode now (uWS bodies are only valid during this call); failures wait for the validate stage.
    let input: unknown = undefined;
    let bodyError: BadRequest | UnsupportedMediaType | undefined;
    if (compiled.readsBody) {
      const decoded = this.decode(inbound.headers['content-type'], body);
      if ('value' in decoded) input = decoded.value;
      else bodyError = decoded;
    }

    const ctx: RequestContext = {
      requestId, receivedAt: this.opts.clock.now(), method: inbound.method, path: inbound.path, params,
      clientIp: inbound.clientIp, headers: inbound.headers, body: input, bodyError, reply,
    };

    let effect: Effect.Effect<unknown, ApiFailure>;
    try {
      effect = compiled.route.handle(ctx) as Effect.Effect<unknown, ApiFailure>;
    } catch (e) {
      effect = Effect.die(e);
    }
    // Work that completed synchronously is already an Exit: answer without a fiber.
    if (Exit.isExit(effect)) {
      this.finish(effect as unknown as Exit.Exit<unknown, ApiFailure>, compiled, requestId, msgpack, reply, sink, t0, false);
      return undefined;
    }

    this.inFlight++;
    let aborted = false;
    let finished = false;
    const interrupt = Effect.runCallback(effect, {
      onExit: (exit) => {
        finished = true;
        this.inFlight--;
        this.finish(exit, compiled, requestId, msgpack, reply, sink, t0, aborted);
        if (this.inFlight === 0 && this.draining) this.flushDrainWaiters();
      },
    });
    if (finished) return undefined;
    return () => {
      if (finished || aborted) return;
      aborted = true;
      interrupt();
    };
  }

  private finish(
    exit: Exit.Exit<unknown, ApiFailure>, compiled: CompiledRoute, requestId: string, msgpack: boolean,
    reply: ReplyMeta, sink: Sink, t0: number, aborted: boolean,
  ): void {
    let status: number;
    if (aborted) {
      status = 499;
    } else if (Exit.isSuccess(exit)) {
      const alt = compiled.alternate !== undefined && compiled.alternate.when(exit.value) ? compiled.alternate : undefined;
      status = alt?.status ?? compiled.status;
      this.sendSuccess(compiled, exit.value, requestId, msgpack, reply.headers, sink, this.draining, alt);
    } else {
      const failure = this.failureOf(exit.cause, compiled, requestId);
      status = failure.status;
      this.sendFailure(failure, requestId, msgpack, reply.headers, sink, this.draining);
    }
    const seconds = (performance.now() - t0) / 1000;
    this.opts.metrics.observe(compiled.key, status, seconds);
    if (this.accessLog) this.opts.logger.debug({ request_id: requestId, route: compiled.key, status, ms: Math.round(seconds * 1e4) / 10 }, 'request');
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
          message: `Content-Type ${JSON.stringify(contentType ?? '')} is not supported; send application/json or application/msgpack`,
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
    compiled: CompiledRoute, value: unknown, requestId: string, msgpack: boolean, extra: readonly string[], sink: Sink, close: boolean,
    alt?: CompiledRoute['alternate'],
  ): void {
    let payload: string | Uint8Array;
    let type = compiled.contentType;
    if (compiled.json) {
      const stamp = compiled.stamp && value !== null && typeof value === 'object' && !Array.isArray(value);
      if (msgpack) {
        payload = this.packr.pack(stamp ? { ...(value as object), request_id: requestId } : value);
        type = MSGPACK_TYPE;
      } else {
        const json = (alt ?? compiled).serialize(value);
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
    sink.send(alt?.status ?? compiled.status, headers, payload, close);
  }

  private sendFailure(failure: ApiFailure, requestId: string, msgpack: boolean, extra: readonly string[], sink: Sink, close: boolean): void {
    const body = errorBody(failure, requestId, new Date(this.opts.clock.now()));
    const headers = ['content-type', msgpack ? MSGPACK_TYPE : JSON_TYPE, 'x-request-id', requestId];
    for (let i = 0; i < extra.length; i++) headers.push(extra[i]!);
    const more = failure.headers?.();
    if (more) for (const k in more) headers.push(k, more[k]!);
    sink.send(failure.status, headers, this.encode(body, msgpack), close);
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
