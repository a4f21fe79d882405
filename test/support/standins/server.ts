/**
 * The skeleton every provider stand-in builds on: a node:http server on
 * 127.0.0.1 (port 0) that records every request (method, path, query
 * parameters, headers, body) and answers through the stand-in's own handler
 * (which speaks the real service's wire format), unless a failure mode is
 * set. The modes are the ways real services fail, each answered as the
 * stand-in's `failures` say the service does it (its own 429 and 5xx bodies):
 *
 *   ok            the handler's answer
 *   rate-limited  the service's 429 (with Retry-After `retryAfter` seconds when the service sends one)
 *   error         the service's 5xx
 *   malformed     200 with the content type of a good answer and a body cut in the middle
 *   slow          the handler's answer after `delayMs` (default 1000)
 *   hang          reads the request, never answers (close() ends the socket)
 *
 * `latencyMs` delays every answer (the bench's fan-out row). Only for tests:
 * loopback only, no limits.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

export interface Recorded {
  readonly method: string;
  readonly path: string;
  /** Query parameters; a repeated name keeps its last value (see `all` for every value). */
  readonly params: Readonly<Record<string, string>>;
  readonly all: URLSearchParams;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface Answer {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** An object or array is sent as JSON (content type application/json unless set). */
  readonly body: string | object;
  /** Send gzip-encoded (Content-Encoding: gzip), as Stack Exchange always does. */
  readonly gzip?: boolean;
}

export type Mode = 'ok' | 'rate-limited' | 'error' | 'malformed' | 'slow' | 'hang';

export interface Failures {
  /** The service's answer to a client it rate-limits (`retryAfter` seconds: undefined when the test wants none). */
  rateLimited(retryAfter: number | undefined): Answer;
  /** The service's answer when it fails inside. */
  error(): Answer;
}

export interface Standin {
  /** http://127.0.0.1:<port> (what SCOUR_PROVIDER_<ID>_URL is set to). */
  readonly url: string;
  readonly requests: Recorded[];
  setMode(mode: Mode, options?: { readonly retryAfter?: number; readonly delayMs?: number }): void;
  /** Delay every answer (default 0). */
  setLatency(ms: number): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startStandin(handler: (req: Recorded) => Answer | Promise<Answer>, failures: Failures): Promise<Standin> {
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  let mode: Mode = 'ok';
  let retryAfter: number | undefined = 30;
  let delayMs = 1000;
  let latencyMs = 0;

  const send = (res: ServerResponse, a: Answer) => {
    const json = typeof a.body !== 'string';
    let body: Buffer = Buffer.from(json ? JSON.stringify(a.body) : (a.body as string), 'utf8');
    const headers: Record<string, string> = { ...(json ? { 'content-type': 'application/json; charset=utf-8' } : {}), ...a.headers };
    if (a.gzip) {
      body = gzipSync(body);
      headers['content-encoding'] = 'gzip';
    }
    headers['content-length'] = String(body.length);
    res.writeHead(a.status ?? 200, headers);
    res.end(body);
  };

  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      const rec: Recorded = {
        method: req.method ?? 'GET',
        path: u.pathname,
        params: Object.fromEntries(u.searchParams),
        all: u.searchParams,
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v ?? ''])),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(rec);
      const answer = async (): Promise<void> => {
        if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
        switch (mode) {
          case 'hang':
            return;
          case 'rate-limited':
            send(res, failures.rateLimited(retryAfter));
            return;
          case 'error':
            send(res, failures.error());
            return;
          case 'malformed': {
            const good = await handler(rec);
            const text = typeof good.body === 'string' ? good.body : JSON.stringify(good.body);
            send(res, { ...good, status: 200, body: text.slice(0, Math.max(1, Math.floor(text.length / 2))) });
            return;
          }
          case 'slow':
            await new Promise((r) => setTimeout(r, delayMs));
            send(res, await handler(rec));
            return;
          default:
            send(res, await handler(rec));
        }
      };
      answer().catch((e: unknown) => {
        if (!res.headersSent) send(res, { status: 500, headers: { 'content-type': 'text/plain' }, body: `stand-in failed: ${String(e)}` });
      });
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setMode(m, o = {}) {
      mode = m;
      if ('retryAfter' in o) retryAfter = o.retryAfter;
      if (o.delayMs !== undefined) delayMs = o.delayMs;
    },
    setLatency(ms) { latencyMs = ms; },
    reset() {
      requests.length = 0;
      mode = 'ok';
      retryAfter = 30;
      delayMs = 1000;
      latencyMs = 0;
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
