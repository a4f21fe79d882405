// The floor for Scour's feature set, hand-written on bare uWS: what a server
// must do per request to honour the same contract as Scour's tool route
// (read Content-Type and Accept, the client address for the per-IP limit,
// parse and check the body, a request id, four rate-limit headers, a
// latency observation), with no framework at all. Used to tell framework
// overhead apart from the cost of the contract itself.
import { randomUUID } from 'node:crypto';
import hyperid from 'hyperid';
import uws from '@trufflesuite/uws-js-unofficial';

const port = Number(process.env.PORT ?? 9003);
const id = hyperid({ urlSafe: true, fixedLength: true });
const windows = new Map();
const LIMIT = 1_000_000_000;
let observed = 0;
let latency = 0;
uws
  .App()
  .post('/v1/tools/uuid-generator', (res, req) => {
    const t0 = performance.now();
    const type = req.getHeader('content-type');
    const accept = req.getHeader('accept');
    const ip = new Uint8Array(res.getRemoteAddress()).join('.');
    res.onAborted(() => {
      res.aborted = true;
    });
    res.onData((chunk, isLast) => {
      if (!isLast || res.aborted) return;
      if (!type.startsWith('application/json') || accept.includes('msgpack')) {
        res.cork(() => res.writeStatus('415 Unsupported Media Type').end('{}'));
        return;
      }
      const body = JSON.parse(Buffer.from(chunk).toString('utf8'));
      if (typeof body !== 'object' || body === null || Object.keys(body).length > 0) {
        res.cork(() => res.writeStatus('400 Bad Request').end('{}'));
        return;
      }
      const now = Date.now();
      const start = now - (now % 60_000);
      let w = windows.get(ip);
      if (!w || w.start !== start) windows.set(ip, (w = { start, count: 0 }));
      w.count++;
      const rid = id();
      const json = JSON.stringify({ uuids: [randomUUID()], version: 4, count: 1, format: 'standard', request_id: rid });
      const head = `200 OK\r\ncontent-type: application/json; charset=utf-8\r\nx-request-id: ${rid}\r\nx-ratelimit-limit: ${LIMIT}\r\nx-ratelimit-remaining: ${LIMIT - w.count}\r\nx-ratelimit-reset: ${(start + 60_000) / 1000}\r\nx-ratelimit-window: 60`;
      res.cork(() => res.writeStatus(head).end(json));
      observed++;
      latency += performance.now() - t0;
    });
  })
  .listen('127.0.0.1', port, (s) => {
    if (!s) process.exit(1);
    console.log(`listening ${port}`);
  });
