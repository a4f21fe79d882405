/**
 * The uWebSockets.js adapter: the only module that imports uWS. Each route
 * is registered natively (uWS does the matching); a catch-all answers 404 and
 * 405. Follows the uWS rules: copy everything from `req` synchronously,
 * register onAborted before any async work, copy body chunks that outlive
 * their callback, write inside cork, never touch `res` after abort or end.
 * A streamed answer (Sink.begin) is written in chunks (`res.write`, which
 * puts uWS in chunked mode), ended by `res.end`, cut by `res.close`.
 */
import uws from '@trufflesuite/uws-js-unofficial';
import type { HttpApp, Inbound, Sink, SinkStream, CompiledRoute, PathInfo, HeadFrame } from '../shared/app.js';
import { headLines, statusLine, UNMATCHED_HEADERS } from '../shared/app.js';
import { forwardedFor, ipFromBytes, ListenError, normaliseIp, type HttpServer, type ServerOptions } from '../shared/server.js';

type UwsApp = ReturnType<typeof uws.App>;
type UwsResponse = Parameters<Parameters<UwsApp['any']>[1]>[0];
type UwsRequest = Parameters<Parameters<UwsApp['any']>[1]>[1];

/** True when the native binary loaded; false means the slow pure-JS fallback. */
export function uwsIsNative(): boolean {
  return String(uws.App).includes('[native code]');
}

/**
 * The status line and every header in one string, so the whole head costs
 * one call into uWS instead of one per header (each native crossing is
 * expensive in this binding; see docs/benchmarks.md and benchmarks/http/NOTES.md). uWS
 * appends the final CRLF, Date, Content-Length and the body in `end`. Header
 * names and values are made by the server (media types, ids, numbers) and
 * ReplyMeta refuses CR and LF, so nothing can be injected here.
 */
export function headBlock(status: number, headers: readonly string[]): string {
  return statusLine(status) + headLines(headers);
}

/**
 * A header name as a getHeader key: bytes rather than a string. The binding
 * converts a string key to UTF-8 in a freshly allocated buffer on every call;
 * an ArrayBuffer is read in place (measured: about 820 instructions per
 * getHeader with a string key, 320 with an ArrayBuffer).
 */
function headerKey(name: string): ArrayBuffer {
  const bytes = Buffer.from(name, 'latin1');
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Header names a handler copies, with their getHeader keys. */
interface HeaderReads {
  readonly names: readonly string[];
  readonly keys: readonly ArrayBuffer[];
}

const headerReads = (names: readonly string[]): HeaderReads => ({ names, keys: names.map(headerKey) });

const ACCEPT_ENCODING = headerKey('accept-encoding');
const CONTENT_ENCODING = headerKey('content-encoding');
const ORIGIN = headerKey('origin');
const PREFLIGHT_METHOD = headerKey('access-control-request-method');

/** uWS's listen option: without it, a second process can bind the same port (SO_REUSEPORT) and both answer. */
const LIBUS_LISTEN_DEFAULT = 0;
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/**
 * One request's state and its Sink, as one object with methods on the
 * prototype: fewer allocations per request than closures.
 */
class Exchange implements Sink {
  aborted = false;
  done = false;
  /** True while uWS is calling us (route handler, onData): the socket is corked already. */
  corked = false;
  interrupt: (() => void) | undefined = undefined;
  chunks: Buffer[] | undefined = undefined;
  size = 0;
  constructor(readonly res: UwsResponse, readonly head: boolean) {}

  send(status: number, headers: readonly string[], body: string | Uint8Array, close: boolean, frame?: HeadFrame): void {
    if (this.aborted || this.done) return;
    this.done = true;
    const res = this.res;
    if (this.head || status === 204) {
      this.sendEmpty(status, headers, body, close);
      return;
    }
    const head = frame === undefined ? headBlock(status, headers) : (frame.bytes(headers) ?? frame.head(headers));
    if (this.corked) {
      res.writeStatus(head).end(body, close);
      return;
    }
    res.cork(() => {
      res.writeStatus(head).end(body, close);
    });
  }

  /**
   * A 204, or the answer to HEAD: the head alone (HEAD with the length GET
   * would send). uWS's endWithoutBody() is the only form of it that works
   * in this binding (with arguments it writes a wrong length or stalls), so
   * the length and `connection: close` are written as headers here.
   */
  private sendEmpty(status: number, headers: readonly string[], body: string | Uint8Array, close: boolean): void {
    let head = headBlock(status, headers);
    if (this.head && status !== 204) head += `\r\ncontent-length: ${typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength}`;
    if (close) head += '\r\nconnection: close';
    const res = this.res;
    if (this.corked) {
      res.writeStatus(head).endWithoutBody();
      return;
    }
    res.cork(() => {
      res.writeStatus(head).endWithoutBody();
    });
  }

  begin(status: number, headers: readonly string[], close: boolean): SinkStream | undefined {
    if (this.aborted || this.done) return undefined;
    this.done = true;
    // Draining already: the head says so (the connection closes after the answer, as with send).
    return new UwsStream(this, close ? `${headBlock(status, headers)}\r\nconnection: close` : headBlock(status, headers), close);
  }

  abort(): void {
    this.aborted = true;
    this.interrupt?.();
  }
}

/**
 * A streamed answer on uWS. The head is written with the first chunk (uWS
 * sends a head only with a body: `write` adds Transfer-Encoding: chunked
 * and the blank line), each write inside cork. `write` returning false is
 * back-pressure: uWS keeps what the socket did not take and sends it when
 * the socket drains, so nothing is lost; what waits there is bounded by the
 * answer itself (see shared/stream.ts). A client that stops reading for
 * uWS's idle timeout (10 s) is disconnected (onAborted). `end` writes the
 * terminating chunk; `close` cuts the connection without it. After onAborted
 * or either of those, `res` is never touched again.
 */
class UwsStream implements SinkStream {
  private head: string | undefined;
  private ended = false;
  private chunk: string | Uint8Array = '';

  private closeAtEnd: boolean;

  constructor(private readonly ex: Exchange, head: string, close: boolean) {
    this.head = head;
    this.closeAtEnd = close;
  }

  private readonly put = (): void => {
    const res = this.ex.res;
    if (this.head !== undefined) {
      res.writeStatus(this.head);
      this.head = undefined;
    }
    res.write(this.chunk);
    this.chunk = '';
  };

  private readonly finish = (): void => {
    const res = this.ex.res;
    if (this.head !== undefined) {
      res.writeStatus(this.head);
      this.head = undefined;
    }
    res.end('', this.closeAtEnd);
  };

  write(chunk: string | Uint8Array): void {
    const ex = this.ex;
    if (ex.aborted || this.ended) return;
    this.chunk = chunk;
    if (ex.corked) this.put();
    else ex.res.cork(this.put);
  }

  end(close: boolean): void {
    const ex = this.ex;
    if (ex.aborted || this.ended) return;
    this.ended = true;
    // Draining since the head went out: uWS closes the connection once the last chunk is sent.
    if (close) this.closeAtEnd = true;
    if (ex.corked) this.finish();
    else ex.res.cork(this.finish);
  }

  abort(): void {
    const ex = this.ex;
    if (ex.aborted || this.ended) return;
    this.ended = true;
    // onAborted runs from inside close(): the request's interruptor is a no-op by now (its fiber has ended).
    ex.res.close();
  }
}

function readHeaders(req: UwsRequest, reads: HeaderReads): Record<string, string | undefined> {
  const h: Record<string, string | undefined> = {};
  const names = reads.names;
  const keys = reads.keys;
  for (let i = 0; i < names.length; i++) {
    const v = req.getHeader(keys[i]!);
    if (v !== '') h[names[i]!] = v;
  }
  return h;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

const METHOD_FN = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'del' } as const;

export class UwsServer implements HttpServer {
  readonly kind = 'uws' as const;
  private listenSocket: unknown;
  private readonly uwsApp: UwsApp;
  private readonly unmatchedHeaders: HeaderReads;

  constructor(private readonly app: HttpApp, private readonly options: ServerOptions) {
    this.uwsApp = uws.App();
    const uwsPattern = (template: string) => template.replace(/\{([a-z_][a-z0-9_]*)\}/gi, ':$1');
    for (const compiled of app.compiled) {
      const pattern = uwsPattern(compiled.route.path);
      const names = headerReads(options.trustProxy ? [...compiled.headerNames, 'x-forwarded-for'] : compiled.headerNames);
      this.uwsApp[METHOD_FN[compiled.method]](pattern, (res, req) => this.onRoute(compiled, names, res, req, false));
      // HEAD is GET without the body (uWS does not route HEAD to GET handlers by itself).
      if (compiled.method === 'GET') this.uwsApp.head(pattern, (res, req) => this.onRoute(compiled, names, res, req, true));
    }
    for (const info of app.paths) this.uwsApp.options(uwsPattern(info.template), (res, req) => this.onOptions(info, res, req));
    this.unmatchedHeaders = headerReads(options.trustProxy ? [...UNMATCHED_HEADERS, 'x-forwarded-for'] : UNMATCHED_HEADERS);
    this.uwsApp.any('/*', (res, req) => this.onUnmatched(res, req));
  }

  private clientIp(res: UwsResponse, headers: Record<string, string | undefined>): string {
    if (this.options.trustProxy) {
      const fwd = forwardedFor(headers['x-forwarded-for']);
      if (fwd) return normaliseIp(fwd);
    }
    return ipFromBytes(new Uint8Array(res.getRemoteAddress()));
  }

  private onRoute(compiled: CompiledRoute, headerReads: HeaderReads, res: UwsResponse, req: UwsRequest, head: boolean): void {
    const headers = readHeaders(req, headerReads);
    // Transport headers, one native call each (each costs a few percent of the tools route's throughput):
    // Content-Encoding only where there is a body, Origin only where SCOUR_CORS_ORIGINS needs it.
    const acceptEncoding = req.getHeader(ACCEPT_ENCODING);
    const contentEncoding = compiled.readsBody ? req.getHeader(CONTENT_ENCODING) : '';
    const origin = compiled.readsOrigin ? req.getHeader(ORIGIN) : '';
    const path = compiled.paramNames.length === 0 ? compiled.route.path : req.getUrl();
    let params: Record<string, string> = NO_PARAMS;
    if (compiled.paramNames.length > 0) {
      params = {};
      for (let i = 0; i < compiled.paramNames.length; i++) {
        const raw = req.getParameter(i) ?? '';
        try {
          params[compiled.paramNames[i]!] = decodeURIComponent(raw);
        } catch {
          params[compiled.paramNames[i]!] = raw;
        }
      }
    }
    const inbound: Inbound = {
      method: head ? 'HEAD' : compiled.method, path, headers, clientIp: this.clientIp(res, headers),
      acceptEncoding: acceptEncoding === '' ? undefined : acceptEncoding,
      contentEncoding: contentEncoding === '' ? undefined : contentEncoding,
      origin: origin === '' ? undefined : origin,
      preflightMethod: undefined,
    };
    const ex = new Exchange(res, head);
    res.onAborted(() => ex.abort());
    const app = this.app;

    if (!compiled.readsBody) {
      ex.corked = true;
      ex.interrupt = app.execute(compiled, params, inbound, undefined, ex);
      ex.corked = false;
      return;
    }
    // The limit is enforced on the streamed length (reading Content-Length would cost a
    // native call on every request); past it the answer is 413 and the connection closes.
    const limit = app.bodyLimit;
    res.onData((chunk, isLast) => {
      if (ex.done || ex.aborted) return;
      ex.size += chunk.byteLength;
      ex.corked = true; // uWS corks the socket around its data callbacks
      if (ex.size > limit) {
        ex.chunks = undefined;
        app.reject(inbound, app.payloadTooLarge(), ex, compiled, true);
        ex.corked = false;
        return;
      }
      if (!isLast) {
        (ex.chunks ??= []).push(Buffer.from(new Uint8Array(chunk))); // copy: the chunk dies with this callback
        ex.corked = false;
        return;
      }
      let body: Uint8Array;
      if (ex.chunks === undefined) {
        body = new Uint8Array(chunk); // a view, decoded synchronously inside execute
      } else {
        ex.chunks.push(Buffer.from(new Uint8Array(chunk)));
        body = Buffer.concat(ex.chunks, ex.size);
        ex.chunks = undefined;
      }
      ex.interrupt = app.execute(compiled, params, inbound, body, ex);
      ex.corked = false;
    });
  }

  /** OPTIONS on a route path: Allow, and CORS preflight answers (app.options). */
  private onOptions(info: PathInfo, res: UwsResponse, req: UwsRequest): void {
    const headers = readHeaders(req, this.unmatchedHeaders);
    const origin = req.getHeader(ORIGIN);
    const preflightMethod = req.getHeader(PREFLIGHT_METHOD);
    const inbound: Inbound = {
      method: 'OPTIONS', path: req.getUrl(), headers, clientIp: this.clientIp(res, headers),
      acceptEncoding: undefined, contentEncoding: undefined,
      origin: origin === '' ? undefined : origin,
      preflightMethod: preflightMethod === '' ? undefined : preflightMethod,
    };
    const ex = new Exchange(res, false);
    ex.corked = true;
    this.app.options(inbound, info, ex);
  }

  private onUnmatched(res: UwsResponse, req: UwsRequest): void {
    const headers = readHeaders(req, this.unmatchedHeaders);
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const inbound: Inbound = { method, path, headers, clientIp: this.clientIp(res, headers) };
    const found = this.app.match(method, path);
    // uWS routes every path and method we declared, so a match here only means a spelling uWS treats differently.
    const failure = 'route' in found || 'options' in found ? this.app.notFound(method, path) : found;
    const close = headers['content-length'] !== undefined && headers['content-length'] !== '0';
    const ex = new Exchange(res, method === 'HEAD');
    ex.corked = true;
    this.app.reject(inbound, failure, ex, undefined, close);
  }

  listen(host: string, port: number): Promise<{ host: string; port: number }> {
    // Exclusive unless the operator asks to share the port (SCOUR_REUSE_PORT): otherwise a second
    // server on a port this one holds would start too, and the kernel would split connections between them.
    const listenOptions = this.options.reusePort === true ? LIBUS_LISTEN_DEFAULT : LIBUS_LISTEN_EXCLUSIVE_PORT;
    return new Promise((resolve, reject) => {
      // The binding takes (host, port, options, callback); its typings list only (port, options, callback).
      const listen = this.uwsApp.listen as unknown as (h: string, p: number, o: number, cb: (socket: unknown) => void) => void;
      listen.call(this.uwsApp, host, port, listenOptions, (socket) => {
        if (!socket) {
          reject(new ListenError(`uWebSockets.js could not listen on ${host}:${port}: the address is in use or not available`));
          return;
        }
        this.listenSocket = socket;
        resolve({ host, port: uws.us_socket_local_port(socket as never) });
      });
    });
  }

  async close(timeoutMs: number): Promise<boolean> {
    if (this.listenSocket) {
      uws.us_listen_socket_close(this.listenSocket as never);
      this.listenSocket = undefined;
    }
    return this.app.drain(timeoutMs);
  }
}
