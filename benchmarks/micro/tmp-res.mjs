import uws from '@trufflesuite/uws-js-unofficial';
let n = 0; const seen = new WeakSet();
uws.App().get('/*', (res) => {
  const again = seen.has(res); seen.add(res);
  res.end(JSON.stringify({ n: n++, again, tag: res.tag ?? null }));
  res.tag = 'x';
}).listen('127.0.0.1', 19712, () => {});
setTimeout(() => process.exit(0), 3000);
