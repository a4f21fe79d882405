// Paired latency of the billable path at low load: two Scour servers on one
// PostgreSQL database and one Redis prefix (as built; before part 3 of the
// shared hot path, servers/billing-before.mjs), each request sent to both in turn (the
// order reversed every other time), so both see the same machine noise.
// Needs a build (npm run build) and the services bench:http uses.
//
//   node benchmarks/http/paired-latency.mjs [path] [body] [requests per server] [concurrent senders]
//
// Defaults: /v1/search '{"query":"scour benchmark"}' 2000 1. A /test/... path
// loads the test plugin (SCOUR_PLUGINS) through tsx.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, setupUsage } from './usage-setup.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const scourEnv = { SCOUR_TOOLS_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn', HOST: '127.0.0.1', SCOUR_DATA_DIR: join(root, 'data', 'bench'), SCOUR_SEARCH_PROVIDERS: 'local' };
const [path, body, n, conc] = [process.argv[2] ?? '/v1/search', process.argv[3] ?? '{"query":"scour benchmark"}', Number(process.argv[4] ?? 2000), Number(process.argv[5] ?? 1)];
const variants = [
  { name: 'now', pre: [] },
  { name: 'before', pre: ['--import', './benchmarks/http/servers/billing-before.mjs'] },
];
const u = await setupUsage(root, scourEnv);
const children = [];
try {
  let port = 19600;
  for (const v of variants) {
    v.port = ++port;
    const tsx = path.startsWith('/test/') ? ['--import', 'tsx'] : [];
    children.push(spawn(process.execPath, [...tsx, ...v.pre, 'dist/config/cli.js', 'serve'], { cwd: root, env: cleanEnv({ ...u.billable.env, PORT: String(v.port), ...(path.startsWith('/test/') ? { SCOUR_PLUGINS: 'test/fixtures/plugins/billable.ts' } : {}) }), stdio: 'inherit' }));
  }
  const send = async (v) => {
    const t = performance.now();
    const r = await fetch(`http://127.0.0.1:${v.port}${path}`, { method: 'POST', headers: { authorization: `Bearer ${u.billable.key}`, 'content-type': 'application/json' }, body });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${v.name}: ${r.status}`);
    return performance.now() - t;
  };
  for (const v of variants) {
    for (let i = 0; i < 600; i++) { try { await send(v); break; } catch { await new Promise((r) => setTimeout(r, 200)); } }
    for (let i = 0; i < 200; i++) await send(v);
    v.lat = [];
  }
  await Promise.all(Array.from({ length: conc }, async () => {
    for (let i = 0; i < n / conc; i++) {
      const order = i % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) v.lat.push(await send(v));
    }
  }));
  const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
  for (const v of variants) console.log(`${path} ${v.name.padEnd(16)} n=${v.lat.length} p50 ${q(v.lat, 0.5).toFixed(2)} ms  p90 ${q(v.lat, 0.9).toFixed(2)} ms  p99 ${q(v.lat, 0.99).toFixed(2)} ms  mean ${(v.lat.reduce((a, b) => a + b, 0) / v.lat.length).toFixed(2)} ms`);
} finally {
  for (const c of children) c.kill('SIGKILL');
  await u.cleanup();
}
