/**
 * The node:http adapter: serves the same HttpApp as the uWS adapter, so the
 * contract suite runs against both and benchmarks can compare them.
 */
import http from 'node:http';
import type { HttpApp, Inbound, Sink } from '../shared/app.js';
import { statusLine, UNMATCHED_HEADERS } from '../shared/app.js';
import { forwardedFor, ListenError, normaliseIp, type HttpServer, type ServerOptions } from '../shared/server.js';

function copyHeader(req: http.IncomingMessage, name: string, into: Record<string, string | undefined>): void {
  const v = req.headers[name];
  if (v !== undefined) into[name] = Array.isArray(v) ? v.join(', ') : v;
}

/** One header's value, as uWS would give it ('' = absent). */
function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v.join(', ') : v;
  return s === '' ? undefined : s;
}

export class NodeHttpServer implements HttpServer {
  readonly kind = 'node' as const;
  private readonly server: http.Server;

  constructor(private readonly app: HttpApp, private readonly options: ServerOptions) {
    // Slow clients are cut as uWS cuts them (its idle timeout is 10 s): headers within 10 s, the whole request
    // (up to SCOUR_BODY_LIMIT) within 30 s, checked every second. Node's defaults (60 s for headers, checked
    // every 30 s; 300 s for a body that stalls) let one client hold a socket 30 times longer (slowloris).
    this.server = http.createServer(
      { keepAliveTimeout: 10_000, headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 },
      (req, res) => this.onRequest(req, res),
    );
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const found = this.app.match(method, path);
    // The same headers the uWS adapter copies: the route's own list.
    const names = 'route' in found ? found.route.headerNames : UNMATCHED_HEADERS;
    const routed = 'route' in found ? found.route : undefined;
    const headers: Record<string, string | undefined> = {};
    for (const name of names) copyHeader(req, name, headers);
    if (this.options.trustProxy) copyHeader(req, 'x-forwarded-for', headers);
    let clientIp = normaliseIp(req.socket.remoteAddress ?? '');
    if (this.options.trustProxy) {
      const fwd = forwardedFor(headers['x-forwarded-for']);
      if (fwd) clientIp = normaliseIp(fwd);
    }
    // The transport headers the uWS adapter reads for the same request (see Inbound).
    const options = 'options' in found;
    const inbound: Inbound = {
      method, path, headers, clientIp,
      acceptEncoding: routed !== undefined ? header(req, 'accept-encoding') : undefined,
      contentEncoding: routed?.readsBody === true ? header(req, 'content-encoding') : undefined,
      origin: routed?.readsOrigin === true || options ? header(req, 'origin') : undefined,
      preflightMethod: options ? header(req, 'access-control-request-method') : undefined,
    };
    let done = false;
    let interrupt: (() => void) | undefined;
    const sink: Sink = {
      send(status, flat, body, close) {
        if (done || res.destroyed) return;
        done = true;
        const h = [...flat];
        // Content-Length up front: without it writeHead commits to chunked encoding (extra framing, writev).
        // node:http sends no body for HEAD itself (keeping this length: the one GET would send); a 204 has none.
        if (status !== 204) h.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
        if (close) h.push('connection', 'close');
        res.writeHead(status, statusLine(status).slice(4), h);
        if (status === 204) res.end();
        else res.end(body);
      },
      // A streamed answer: no Content-Length, so node sends it chunked; writes that the socket cannot take
      // yet wait in the response's buffer (bounded by the answer, see shared/stream.ts). destroy() cuts the
      // body without its terminating chunk.
      begin(status, flat, close) {
        if (done || res.destroyed) return undefined;
        done = true;
        const h = close ? [...flat, 'connection', 'close'] : flat;
        res.writeHead(status, statusLine(status).slice(4), h as string[]);
        return {
          write(chunk) {
            if (!res.destroyed && !res.writableEnded) res.write(chunk);
          },
          end() {
            if (!res.destroyed && !res.writableEnded) res.end();
          },
          abort() {
            if (!res.destroyed) res.destroy();
          },
        };
      },
    };
    res.on('close', () => {
      if (!res.writableFinished) interrupt?.();
    });

    if ('options' in found) {
      this.app.options(inbound, found.options, sink);
      req.resume();
      return;
    }
    if (!('route' in found)) {
      this.app.reject(inbound, found, sink, undefined, Number(headers['content-length'] ?? 0) > 0);
      req.resume();
      return;
    }
    const { route: compiled, params } = found;
    if (!compiled.readsBody) {
      req.resume();
      interrupt = this.app.execute(compiled, params, inbound, undefined, sink);
      return;
    }
    const early = this.app.tooLarge(req.headers['content-length']);
    if (early) {
      this.app.reject(inbound, early, sink, compiled, true);
      req.resume();
      return;
    }
    const limit = this.app.bodyLimit;
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        this.app.reject(inbound, this.app.payloadTooLarge(), sink, compiled, true);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (over || done) return;
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      interrupt = this.app.execute(compiled, params, inbound, body, sink);
    });
    req.on('error', () => {
      over = true;
    });
  }

  listen(host: string, port: number): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(new ListenError(`node:http could not listen on ${host}:${port}: ${e.message}`));
      this.server.once('error', onError);
      // node:http on Node 20 never shares a port (SCOUR_REUSE_PORT is refused with this adapter).
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        resolve({ host, port: typeof addr === 'object' && addr ? addr.port : port });
      });
    });
  }

  async close(timeoutMs: number): Promise<boolean> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const drained = await this.app.drain(timeoutMs);
    this.server.closeAllConnections();
    await closed;
    return drained;
  }
}
