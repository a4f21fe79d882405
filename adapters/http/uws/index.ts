/**
 * The uWebSockets.js adapter: the only module that imports uWS. Each route
 * is registered natively (uWS does the matching); a catch-all answers 404 and
 * 405. Follows the uWS rules: copy everything from `req` synchronously,
 * register onAborted before any async work, copy body chunks that outlive
 * their callback, write inside cork, never touch `res` after abort or end.
 */
import uws from '@trufflesuite/uws-js-unofficial';
import { NotFound } from '../../../core/errors.js';
import type { HttpApp, Inbound, Sink, CompiledRoute } from '../shared/app.js';
import { COPIED_HEADERS, statusLine } from '../shared/app.js';
import { forwardedFor, normaliseIp, type HttpServer, type ServerOptions } from '../shared/server.js';

type UwsApp = ReturnType<typeof uws.App>;
type UwsResponse = Parameters<Parameters<UwsApp['any']>[1]>[0];
type UwsRequest = Parameters<Parameters<UwsApp['any']>[1]>[1];

/** True when the native binary loaded; false means the slow pure-JS fallback. */
export function uwsIsNative(): boolean {
  return String(uws.App).includes('[native code]');
}

const decoder = new TextDecoder();

interface State {
  aborted: boolean;
  done: boolean;
  interrupt: (() => void) | undefined;
}

function sinkFor(res: UwsResponse, state: State): Sink {
  return {
    send(status, headers, body, close) {
      if (state.aborted || state.done) return;
      state.done = true;
      res.cork(() => {
        res.writeStatus(statusLine(status));
        for (let i = 0; i < headers.length; i += 2) res.writeHeader(headers[i]!, headers[i + 1]!);
        res.end(body, close);
      });
    },
  };
}

function readHeaders(req: UwsRequest, names: readonly string[]): Record<string, string | undefined> {
  const h: Record<string, string | undefined> = {};
  for (const name of names) {
    const v = req.getHeader(name);
    if (v !== '') h[name] = v;
  }
  return h;
}

const METHOD_FN = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'del' } as const;

export class UwsServer implements HttpServer {
  readonly kind = 'uws' as const;
  private listenSocket: unknown;
  private readonly uwsApp: UwsApp;

  constructor(private readonly app: HttpApp, private readonly options: ServerOptions) {
    this.uwsApp = uws.App();
    for (const compiled of app.compiled) {
      const pattern = compiled.route.path.replace(/\{([a-z_][a-z0-9_]*)\}/gi, ':$1');
      const names = options.trustProxy ? [...compiled.headerNames, 'x-forwarded-for'] : compiled.headerNames;
      this.uwsApp[METHOD_FN[compiled.method]](pattern, (res, req) => this.onRoute(compiled, names, res, req));
    }
    this.uwsApp.any('/*', (res, req) => this.onUnmatched(res, req));
  }

  private clientIp(res: UwsResponse, headers: Record<string, string | undefined>): string {
    if (this.options.trustProxy) {
      const fwd = forwardedFor(headers['x-forwarded-for']);
      if (fwd) return normaliseIp(fwd);
    }
    return normaliseIp(decoder.decode(res.getRemoteAddressAsText()));
  }

  private onRoute(compiled: CompiledRoute, headerNames: readonly string[], res: UwsResponse, req: UwsRequest): void {
    const headers = readHeaders(req, headerNames);
    const path = req.getUrl();
    let params: Record<string, string> = {};
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
    const inbound: Inbound = { method: compiled.method, path, headers, clientIp: this.clientIp(res, headers) };
    const state: State = { aborted: false, done: false, interrupt: undefined };
    res.onAborted(() => {
      state.aborted = true;
      state.interrupt?.();
    });
    const sink = sinkFor(res, state);
    const app = this.app;

    if (!compiled.readsBody) {
      state.interrupt = app.execute(compiled, params, inbound, undefined, sink);
      return;
    }
    const early = app.tooLarge(headers['content-length']);
    if (early) {
      app.reject(inbound, early, sink, compiled.key, true);
      return;
    }
    const limit = app.bodyLimit;
    let chunks: Buffer[] | undefined;
    let size = 0;
    res.onData((chunk, isLast) => {
      if (state.done || state.aborted) return;
      size += chunk.byteLength;
      if (size > limit) {
        chunks = undefined;
        app.reject(inbound, app.payloadTooLarge(), sink, compiled.key, true);
        return;
      }
      if (!isLast) {
        (chunks ??= []).push(Buffer.from(new Uint8Array(chunk))); // copy: the chunk dies with this callback
        return;
      }
      let body: Uint8Array;
      if (chunks === undefined) {
        body = new Uint8Array(chunk); // a view, decoded synchronously inside execute
      } else {
        chunks.push(Buffer.from(new Uint8Array(chunk)));
        body = Buffer.concat(chunks, size);
        chunks = undefined;
      }
      state.interrupt = app.execute(compiled, params, inbound, body, sink);
    });
  }

  private onUnmatched(res: UwsResponse, req: UwsRequest): void {
    const headers = readHeaders(req, COPIED_HEADERS);
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const state: State = { aborted: false, done: false, interrupt: undefined };
    const inbound: Inbound = { method, path, headers, clientIp: this.clientIp(res, headers) };
    const found = this.app.match(method, path);
    // uWS routes every path we declared, so a match here only means a spelling uWS treats differently.
    const failure = 'route' in found ? new NotFound({ message: `No route for ${method} ${path}` }) : found;
    const close = headers['content-length'] !== undefined && headers['content-length'] !== '0';
    this.app.reject(inbound, failure, sinkFor(res, state), 'unmatched', close);
  }

  listen(host: string, port: number): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.uwsApp.listen(host, port, (socket) => {
        if (!socket) {
          reject(new Error(`LISTEN_FAILED: uWebSockets.js could not listen on ${host}:${port} (address in use or not available)`));
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
