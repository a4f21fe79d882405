// npm run bench:compat   (= node --import tsx benchmarks/tavily/overhead.mjs)
//
// Issue 30: "The compatibility endpoints add no measurable cost to native
// routes." Two Scour servers in two child processes, from the TypeScript
// sources (tsx), in the same run:
// - base: the tree of TAVILY_BENCH_BASE (a git ref; default the merge base
//   with main, or on main the commit before the first that added either
//   compatibility layer), extracted with `git archive` into a temporary directory
//   (node_modules linked): the server before the compatibility routes;
// - head: this tree, with POST /tavily/search and /tavily/extract.
// Each: embedded (SQLite in a temporary directory), log level silent, the
// adapter of TAVILY_BENCH_ADAPTER (uws), searchProviders ['local'], the
// Unicorn plan with its search windows lifted, one account, the same 200
// generated documents in its shared collection.
//
// Then TAVILY_BENCH_N (2000) rounds after TAVILY_BENCH_WARMUP (200), one
// request in flight, each round timing (client side, to the last byte,
// keep-alive, order rotated per round so machine noise falls on all alike):
// - native search on base and on head: POST /v1/search {query, max_results: 5}
// - native failure on base and on head: the same with an unknown key (401:
//   the failure path, which now asks the route for its error shape);
// - tavily search on head: POST /tavily/search with the same query, for
//   what the translation adds over the native route it wraps.
// Prints p50/p95/mean per row and head/base ratios; writes
// benchmarks/results/tavily-overhead-<adapter>.json with the load average (the
// machine is shared: quote ratios, not absolute times).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = process.env;
const N = Number(env.TAVILY_BENCH_N ?? 2000);
const WARMUP = Number(env.TAVILY_BENCH_WARMUP ?? 200);
const ADAPTER = env.TAVILY_BENCH_ADAPTER ?? 'uws';
const ADMIN = 'tavily-bench-admin-token-0123456789';

function baseRef() {
  if (env.TAVILY_BENCH_BASE) return env.TAVILY_BENCH_BASE;
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const head = git('rev-parse', 'HEAD');
  const base = git('merge-base', 'HEAD', 'main');
  if (base !== head) return base;
  // On main itself: the commit before the first that brought either compatibility layer in (following first parents).
  const added = git('log', '--first-parent', '--diff-filter=A', '--format=%H', '--', 'plugins/operations/tavily/index.ts', 'plugins/operations/firecrawl/index.ts').split('\n').filter(Boolean);
  if (added.length === 0) throw new Error('no commit adds the compatibility routes: set TAVILY_BENCH_BASE');
  return `${added[added.length - 1]}^1`;
}

/** The tree of `ref` in a temporary directory, with this checkout's node_modules. */
function extract(ref) {
  const dir = mkdtempSync(join(tmpdir(), 'scour-bench-base-'));
  execFileSync('sh', ['-c', `git archive ${JSON.stringify(ref)} | tar -x -C ${JSON.stringify(dir)}`], { cwd: root });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** The child: a Scour from `tree`, listening; prints {url} and waits for stdin to close. */
const CHILD = `
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const tree = process.argv[2];
const { createScour } = await import(join(tree, 'config/container.ts'));
const { createLogger } = await import(join(tree, 'adapters/logging/pino.ts'));
const { applyPlanOverrides, DEFAULT_PLANS } = await import(join(tree, 'config/plans.ts'));
const plans = applyPlanOverrides(DEFAULT_PLANS, { unicorn: { limits: { search: { per_minute: 1e9, per_hour: 1e9 } } } }, 'bench');
const scour = await createScour({
  plans,
  logger: createLogger('silent'),
  settings: { port: 0, host: '127.0.0.1', httpAdapter: process.argv[3], dataDir: mkdtempSync(join(tmpdir(), 'scour-bench-')), searchProviders: ['local'], adminToken: '${ADMIN}', warmup: false },
});
const { url } = await scour.start();
process.stdout.write(JSON.stringify({ url }) + '\\n');
process.stdin.resume();
process.stdin.on('end', async () => { await scour.stop(); process.exit(0); });
`;

async function startServer(tree) {
  const file = join(mkdtempSync(join(tmpdir(), 'scour-bench-child-')), 'child.mts');
  writeFileSync(file, CHILD);
  const child = spawn(process.execPath, ['--import', 'tsx', file, tree, ADAPTER], { cwd: tree, stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve(JSON.parse(line).url);
    });
    child.on('exit', (code) => reject(new Error(`server from ${tree} exited with ${code}`)));
  });
  return { url, stop: () => new Promise((resolve) => { child.on('exit', resolve); child.stdin.end(); }) };
}

async function json(url, body, auth) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text.length > 0 ? JSON.parse(text) : undefined };
}

const WORDS = ['solar', 'wind', 'battery', 'grid', 'panel', 'turbine', 'storage', 'efficiency', 'cell', 'inverter', 'heat', 'pump', 'roof', 'price', 'market', 'policy'];
function documents() {
  const docs = [];
  for (let i = 0; i < 200; i++) {
    const w = (k) => WORDS[(i * 7 + k * 3) % WORDS.length];
    docs.push({
      url: `https://site${i % 20}.example.com/page/${i}`, title: `${w(0)} ${w(1)} report ${i}`, language: 'en',
      text: `The ${w(0)} ${w(1)} study number ${i} looked at ${w(2)} and ${w(3)}. Engineers measured the ${w(4)} of each ${w(5)} over a year. The results show that ${w(6)} matters more than ${w(7)}.`,
    });
  }
  return docs;
}

async function prepare(url) {
  const acct = await json(`${url}/admin/v1/accounts`, { plan: 'unicorn', credits: 100_000_000 }, `Bearer ${ADMIN}`);
  if (acct.status !== 201) throw new Error(`account: ${acct.status}`);
  const put = await json(`${url}/admin/v1/index/documents`, { collection: 'shared', documents: documents() }, `Bearer ${ADMIN}`);
  if (put.status !== 200) throw new Error(`index: ${put.status}`);
  return acct.body.api_key;
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function main() {
  const ref = baseRef();
  const baseTree = extract(ref);
  const base = await startServer(baseTree);
  const head = await startServer(root);
  try {
    const keys = { base: await prepare(base.url), head: await prepare(head.url) };
    const body = { query: 'solar panel efficiency', max_results: 5 };
    const rows = {
      'native search, base': { url: `${base.url}/v1/search`, auth: `Bearer ${keys.base}`, body, status: 200 },
      'native search, head': { url: `${head.url}/v1/search`, auth: `Bearer ${keys.head}`, body, status: 200 },
      'native 401, base': { url: `${base.url}/v1/search`, auth: `Bearer sk_${'A'.repeat(43)}`, body, status: 401 },
      'native 401, head': { url: `${head.url}/v1/search`, auth: `Bearer sk_${'A'.repeat(43)}`, body, status: 401 },
      'tavily search, head': { url: `${head.url}/tavily/search`, auth: `Bearer ${keys.head}`, body, status: 200 },
    };
    const names = Object.keys(rows);
    const times = Object.fromEntries(names.map((n) => [n, []]));
    const loadStart = loadavg();
    for (let round = 0; round < WARMUP + N; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length];
        const r = rows[name];
        const t0 = performance.now();
        const res = await json(r.url, r.body, r.auth);
        const ms = performance.now() - t0;
        if (res.status !== r.status) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        if (round >= WARMUP) times[name].push(ms);
      }
    }
    const loadEnd = loadavg();
    const stats = Object.fromEntries(names.map((n) => [n, { p50: pct(times[n], 50), p95: pct(times[n], 95), mean: mean(times[n]) }]));
    const f = (x) => x.toFixed(3);
    console.log(`\n${N} rounds (+${WARMUP} warm-up), one request in flight, ${ADAPTER} adapter, base ${ref.slice(0, 12)}; load ${loadStart.map((x) => x.toFixed(2)).join(' ')} -> ${loadEnd.map((x) => x.toFixed(2)).join(' ')} on ${cpus().length} CPUs\n`);
    console.log('| request | p50 ms | p95 ms | mean ms |');
    console.log('|---|---|---|---|');
    for (const n of names) console.log(`| ${n} | ${f(stats[n].p50)} | ${f(stats[n].p95)} | ${f(stats[n].mean)} |`);
    const ratio = (a, b, k) => stats[a][k] / stats[b][k];
    const ratios = {
      'native search head/base (p50)': ratio('native search, head', 'native search, base', 'p50'),
      'native search head/base (mean)': ratio('native search, head', 'native search, base', 'mean'),
      'native 401 head/base (p50)': ratio('native 401, head', 'native 401, base', 'p50'),
      'native 401 head/base (mean)': ratio('native 401, head', 'native 401, base', 'mean'),
      'tavily/native search on head (p50)': ratio('tavily search, head', 'native search, head', 'p50'),
      'tavily/native search on head (mean)': ratio('tavily search, head', 'native search, head', 'mean'),
    };
    console.log('\n| ratio | value |\n|---|---|');
    for (const [k, v] of Object.entries(ratios)) console.log(`| ${k} | ${v.toFixed(3)} |`);
    mkdirSync(join(root, 'benchmarks', 'results'), { recursive: true });
    writeFileSync(join(root, 'benchmarks', 'results', `tavily-overhead-${ADAPTER}.json`), `${JSON.stringify({
      date: new Date().toISOString(), rounds: N, warmup: WARMUP, adapter: ADAPTER, base: ref, cpus: cpus().length,
      load: { start: loadStart, end: loadEnd }, stats, ratios,
    }, null, 2)}\n`);
  } finally {
    await head.stop();
    await base.stop();
    rmSync(baseTree, { recursive: true, force: true });
  }
}

await main();
