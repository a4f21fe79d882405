// The ceiling: a bare uWebSockets.js server that reads the POST body and
// answers the same small JSON as Scour's uuid-generator, with nothing else.
import { randomUUID } from 'node:crypto';
import uws from '@trufflesuite/uws-js-unofficial';

const port = Number(process.env.PORT ?? 9001);
let n = 0;
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
