import { randomUUID } from 'node:crypto';
import uws from '@trufflesuite/uws-js-unofficial';
const port = Number(process.env.PORT);
const X = new Set((process.env.X ?? '').split(','));
const td = new TextDecoder();
let n = 0;
uws.App().post('/v1/tools/uuid-generator', (res, req) => {
  let h;
  if (X.has('hdr')) h = { a: req.getHeader('accept'), ct: req.getHeader('content-type'), cl: req.getHeader('content-length') };
  let ip;
  if (X.has('ip')) ip = td.decode(res.getRemoteAddressAsText());
  if (X.has('ipraw')) ip = res.getRemoteAddressAsText();
  if (X.has('ipbuf')) ip = Buffer.from(res.getRemoteAddressAsText()).latin1Slice();
  if (X.has('url')) ip = req.getUrl();
  if (X.has('ipbin')) { const b = new Uint8Array(res.getRemoteAddress()); ip = b[12] + '.' + b[13] + '.' + b[14] + '.' + b[15]; }
  res.onAborted(() => { res.aborted = true; });
  res.onData((chunk, isLast) => {
    if (!isLast || res.aborted) return;
    let parsed;
    if (X.has('parsetd')) parsed = JSON.parse(td.decode(chunk));
    if (X.has('parsefcc')) parsed = JSON.parse(String.fromCharCode.apply(null, new Uint8Array(chunk)));
    if (X.has('parse')) parsed = JSON.parse(Buffer.from(chunk).toString('utf8'));
    const body = JSON.stringify({ uuids: [randomUUID()], version: 4, count: 1, format: 'standard', request_id: `bare-${n++}` });
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'application/json; charset=utf-8');
      if (X.has('headers')) { res.writeHeader('x-request-id', 'abcdefghijklmnopqrstuv-0000000001'); res.writeHeader('x-ratelimit-limit', '1000000000'); res.writeHeader('x-ratelimit-remaining', '999999'); res.writeHeader('x-ratelimit-reset', '1795294980'); res.writeHeader('x-ratelimit-window', '60'); }
      if (X.has('oneheader')) { res.writeHeader('x-request-id', 'abcdefghijklmnopqrstuv-0000000001\r\nx-ratelimit-limit: 1000000000\r\nx-ratelimit-remaining: 999999\r\nx-ratelimit-reset: 1795294980\r\nx-ratelimit-window: 60'); }
      res.end(body);
    });
  });
}).listen('127.0.0.1', port, (s) => console.log('ok', !!s));
