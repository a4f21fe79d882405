/**
 * A webhook receiver on loopback for the webhook tests: it records every
 * request it gets, checks each signature the way docs/bulk-and-webhooks.md
 * tells receivers to, and answers as told (500 to the first N attempts, a fixed status, a
 * delay). Counts TCP connections too, so a test can prove a refused
 * delivery never reached it. Only for tests: 127.0.0.1, port 0.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { verifySignature } from '../../adapters/webhooks/sign.js';
import {
  WEBHOOK_ATTEMPT_HEADER, WEBHOOK_DELIVERY_HEADER, WEBHOOK_EVENT_HEADER, WEBHOOK_SIGNATURE_HEADER,
} from '../../core/webhooks.js';

export interface WebhookReceiverOptions {
  readonly secret: string | readonly string[];
  /** Answer 500 to the first N requests. */
  readonly failFirst?: number;
  /** The status of every other answer (default 200). A 3xx carries Location: <url>/moved. */
  readonly status?: number;
  /** Wait this long before answering. */
  readonly delayMs?: number;
  /** The response body (default "ok"). */
  readonly responseBody?: string;
  /** Signature tolerance for the check (default 300 s). */
  readonly toleranceSeconds?: number;
}

export interface ReceivedWebhook {
  readonly deliveryId: string | undefined;
  readonly event: string | undefined;
  /** From the scour-attempt header. */
  readonly attempt: number | undefined;
  /** verifySignature's verdict on the raw bytes: true, or the reason. */
  readonly verified: true | string;
  /** Parsed JSON (the raw text when it is not JSON). */
  readonly body: unknown;
  /** The body exactly as received. */
  readonly raw: string;
  readonly method: string;
  readonly path: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The status this receiver answered with. */
  readonly answeredWith: number;
  /** Epoch ms when the body had arrived. */
  readonly at: number;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port>/hook */
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedWebhook[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Resolves once `n` requests have arrived; rejects after `timeoutMs` (default 5 s). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** The first request of each delivery id, in arrival order: what a deduplicating receiver acts on. */
  uniqueDeliveries(): ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  let connections = 0;
  let port = 0;

  const header = (req: IncomingMessage, name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = raw.toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text.
      }
      const attemptText = header(req, WEBHOOK_ATTEMPT_HEADER);
      const failing = received.length < (options.failFirst ?? 0);
      const status = failing ? 500 : options.status ?? 200;
      received.push({
        deliveryId: header(req, WEBHOOK_DELIVERY_HEADER),
        event: header(req, WEBHOOK_EVENT_HEADER),
        attempt: attemptText === undefined ? undefined : Number(attemptText),
        verified: verifySignature(
          options.secret, raw, header(req, WEBHOOK_SIGNATURE_HEADER), Math.floor(Date.now() / 1000), options.toleranceSeconds,
        ),
        body,
        raw: text,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: { ...req.headers },
        answeredWith: status,
        at: Date.now(),
      });
      for (const w of [...waiters]) w();
      const answer = () => {
        if (res.destroyed) return;
        const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
        if (status >= 300 && status <= 399) headers.location = `http://127.0.0.1:${port}/moved`;
        res.writeHead(status, headers);
        res.end(failing ? 'failing on purpose' : options.responseBody ?? 'ok');
      };
      if (options.delayMs && options.delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, options.delayMs);
        timers.add(timer);
      } else {
        answer();
      }
    });
  };

  const server = http.createServer(handle);
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    connections: () => connections,
    waitFor(n, timeoutMs = 5000) {
      if (received.length >= n) return Promise.resolve([...received]);
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve([...received]);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`webhook receiver: ${received.length} of ${n} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    uniqueDeliveries() {
      const seen = new Set<string | undefined>();
      return received.filter((r) => {
        if (seen.has(r.deliveryId)) return false;
        seen.add(r.deliveryId);
        return true;
      });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
