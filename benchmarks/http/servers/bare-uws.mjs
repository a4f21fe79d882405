// The ceiling: a bare uWebSockets.js server that reads the POST body and
// answers the same small JSON as Scour's uuid-generator, with nothing else.
// It also answers GET /v1/usage with a fixed JSON body of the same shape and
// size as Scour's (no auth, no lookup), the ceiling for the usage rows.
import { randomUUID } from 'node:crypto';
import uws from '@trufflesuite/uws-js-unofficial';

const port = Number(process.env.PORT ?? 9001);
let n = 0;
const USAGE = JSON.stringify({
  credits_used: 0, credits_remaining: 100000, reset_date: '2026-12-21T22:48:09.484Z', plan: 'unicorn',
  period_start: '2026-11-21T22:48:09.484Z', monthly_credits: 100000, credits_reserved: 0, breakdown: [], request_id: 'bare-usage-0000000000000',
});
uws
  .App()
  .post('/v1/tools/uuid-generator', (res) => {
    res.onAborted(() => {
      res.aborted = true;
    });
    res.onData((_chunk, isLast) => {
      if (!isLast || res.aborted) return;
      const body = JSON.stringify({ uuids: [randomUUID()], version: 4, count: 1, format: 'standard', request_id: `bare-${n++}` });
      res.cork(() => {
        res.writeStatus('200 OK').writeHeader('content-type', 'application/json; charset=utf-8').end(body);
      });
    });
  })
  .get('/v1/usage', (res) => {
    res.writeStatus('200 OK').writeHeader('content-type', 'application/json; charset=utf-8').end(USAGE);
  })
  .get('/healthz', (res) => {
    res.end('{"status":"ok"}');
  })
  .listen('127.0.0.1', port, (s) => {
    if (!s) {
      console.error('listen failed');
      process.exit(1);
    }
    console.log(`listening ${port}`);
  });
