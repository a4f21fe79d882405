// Shared by the research bench (run.mjs) and its tuning script (tune.mjs):
// Scour in a child process on 127.0.0.1 (embedded configuration, a fresh
// data directory, a Unicorn account whose research and search windows are
// lifted through SCOUR_PLANS), SciFact loaded into its shared collection
// through the admin API, and small helpers. Everything started here is
// stopped and removed by teardown() (also on Ctrl-C).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ADMIN = randomBytes(24).toString('hex');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};
export const mean = (xs) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
export const r1 = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);
export const r4 = (x) => (Number.isFinite(x) ? Math.round(x * 10_000) / 10_000 : null);
export const f0 = (x) => (Number.isFinite(x) ? String(Math.round(x)) : '-');
export const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** process.env overlaid with `env`, where an undefined value removes the variable. */
function cleanEnv(env) {
  const out = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const line = (r) => `| ${r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

/** Every {source_id, text, start, end} in a value. */
export function quotes(v, out = []) {
  if (Array.isArray(v)) for (const x of v) quotes(x, out);
  else if (v !== null && typeof v === 'object') {
    if (typeof v.source_id === 'string' && typeof v.text === 'string' && typeof v.start === 'number' && typeof v.end === 'number') out.push(v);
    for (const k of Object.keys(v)) quotes(v[k], out);
  }
  return out;
}

// ---------------------------------------------------------------------------
// What this run starts goes on the way out (also on failure and Ctrl-C).

export const owned = { servers: new Set(), dirs: new Set(), closers: new Set() };
let finishing;
export function teardown() {
  finishing ??= (async () => {
    for (const s of owned.servers) await s.stop().catch(() => undefined);
    for (const c of owned.closers) await c().catch(() => undefined);
    for (const d of owned.dirs) rmSync(d, { recursive: true, force: true });
  })();
  return finishing;
}
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { teardown().finally(() => process.exit(130)); });

/** Scour in a child process on 127.0.0.1 (embedded configuration, fresh data directory). */
export async function startScour(name, extraEnv) {
  const dir = mkdtempSync(join(tmpdir(), `scour-bench-research-${name}-`));
  owned.dirs.add(dir);
  const plansPath = join(dir, 'plans.json');
  // The research and search windows lifted so a fast run is never refused; concurrency is the plan's own.
  writeFileSync(plansPath, `${JSON.stringify({ unicorn: { limits: { research: { per_minute: 1_000_000_000 }, search: { per_minute: 1_000_000_000, per_hour: 1_000_000_000 } } } })}\n`);
  const port = await freePort();
  const env = cleanEnv({
    HOST: '127.0.0.1', PORT: String(port), SCOUR_DATA_DIR: join(dir, 'data'), SCOUR_ADMIN_TOKEN: ADMIN, SCOUR_BOOTSTRAP_KEY: 'false',
    SCOUR_PLANS: plansPath, LOG_LEVEL: 'warn', SCOUR_SEARCH_PROVIDERS: 'local',
    // Embedded configuration: nothing shared from the caller's environment.
    DATABASE_URL: undefined, REDIS_URL: undefined, SCOUR_REDIS_PREFIX: undefined, SCOUR_PLUGINS: undefined, SCOUR_PROXIES: undefined,
    SEARXNG_URL: undefined, SCOUR_ALLOW_PRIVATE_TARGETS: undefined, SCOUR_INDEX_SCRAPES: undefined, SCOUR_PUBLIC_URL: undefined,
    ...extraEnv,
  });
  const child = spawn(process.execPath, ['dist/config/cli.js', 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d) => { log = (log + d).slice(-20_000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((r) => child.once('exit', r));
  const server = {
    pid: child.pid,
    base: `http://127.0.0.1:${port}`,
    log: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const done = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
        if (!done) child.kill('SIGKILL');
        await exited;
      }
      owned.servers.delete(server);
    },
  };
  owned.servers.add(server);
  // A loaded machine (shared CI, other work) can take minutes to start the server: SCOUR_BENCH_START_S, default 240.
  const startSeconds = Number(process.env.SCOUR_BENCH_START_S ?? 240);
  const deadline = Date.now() + startSeconds * 1000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Scour exited (${child.exitCode}): ${log}`);
    try {
      const res = await fetch(`${server.base}/healthz`);
      if (res.status === 200) break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) throw new Error(`Scour did not start within ${startSeconds} s: ${log}`);
    await sleep(100);
  }
  const acct = await call(server.base, 'POST', '/admin/v1/accounts', { plan: 'unicorn', credits: 1_000_000, name: `bench-research-${name}` }, ADMIN);
  if (acct.status !== 201) throw new Error(`creating the account: ${acct.status} ${acct.text.slice(0, 300)}`);
  server.key = acct.body.api_key;
  return server;
}

export async function call(base, method, path, body, token) {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, body: json, text, ms };
}


/** The corpus (../search/scifact.mjs loadCorpus) into the shared collection, type academic; seconds taken. */
export function indexScifact(server, corpus) {
  return indexDocs(server, corpus.map((d) => ({ url: d.url, title: d.title, text: d.text, type: 'academic', site_name: d.siteName })));
}

/** Admin-API documents ({url, title, text, type, ...}) into the shared collection; seconds taken. */
export async function indexDocs(server, documents) {
  const t0 = performance.now();
  // Calls of up to 1,000 documents (the admin API's largest) under the default 1 MiB body limit.
  const put = async (docs) => {
    const r = await call(server.base, 'POST', '/admin/v1/index/documents', { collection: 'shared', documents: docs }, ADMIN);
    if (r.status !== 200 || r.body.rejected.length > 0) throw new Error(`indexing: ${r.status} ${r.text.slice(0, 500)}`);
  };
  let batch = [];
  let bytes = 0;
  for (const doc of documents) {
    const size = Buffer.byteLength(JSON.stringify(doc));
    if (batch.length === 1000 || bytes + size > 900_000) { await put(batch); batch = []; bytes = 0; }
    batch.push(doc);
    bytes += size;
  }
  if (batch.length > 0) await put(batch);
  return (performance.now() - t0) / 1000;
}

/** `n` items of `xs` in a fixed pseudo-random order (mulberry32 seeded Fisher-Yates), all when n >= xs.length, in their file order. */
export function seededSample(xs, n, seed) {
  if (n >= xs.length) return [...xs];
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const idx = xs.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, n).sort((x, y) => x - y).map((i) => xs[i]);
}
