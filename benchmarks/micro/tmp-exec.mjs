
import { createScour } from '/work/main/dist/config/container.js';
const s = await createScour({ settings: { port: 0, host: '127.0.0.1', logLevel: 'silent', toolsRateLimit: { limit: 1e9, windowSeconds: 60 } } });
const app = s.app;
const m = app.match('POST', '/v1/tools/uuid-generator');
const body = new TextEncoder().encode('{}');
let sent = 0;
const sink = { send() { sent++; } };
const inbound = { method: 'POST', path: '/v1/tools/uuid-generator', headers: { 'content-type': 'application/json', 'content-length': '2' }, clientIp: '127.0.0.1' };
for (let round = 0; round < 3; round++) {
  const n = 300000; const t = performance.now();
  for (let i = 0; i < n; i++) app.execute(m.route, {}, { ...inbound }, body, sink);
  console.log('execute ns/op', ((performance.now() - t) * 1e6 / n).toFixed(0), sent);
}
await s.stop();
process.exit(0);
