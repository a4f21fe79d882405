import uws from '@trufflesuite/uws-js-unofficial';
uws.App().get('/*', (res) => {
  const bin = new Uint8Array(res.getRemoteAddress());
  const txt = Buffer.from(res.getRemoteAddressAsText()).toString();
  res.end(JSON.stringify({ bin: [...bin], txt }));
}).listen('0.0.0.0', 19710, () => {});
uws.App().get('/*', (res) => {
  const bin = new Uint8Array(res.getRemoteAddress());
  const txt = Buffer.from(res.getRemoteAddressAsText()).toString();
  res.end(JSON.stringify({ bin: [...bin], txt }));
}).listen('::', 19711, () => {});
setTimeout(() => process.exit(0), 3000);
