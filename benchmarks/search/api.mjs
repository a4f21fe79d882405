// npm run bench:search:api (also a step of npm run bench:search): a local
// search through the API, timed beside the same search on the same index in
// this process, in the same run. Issue 28: "Search as fast through the API
// as in the bench": the index alone answers in about 2 ms, so whatever the
// API adds on top of that is the API's.
//
// What it starts, all in this process, from the BUILT code (dist/; run
// `npm run build` first, which the npm scripts do):
// - one Scour server (createScour), embedded (SQLite in a temp directory),
//   log level silent, the uws adapter (SEARCH_API_HTTP_ADAPTER), port 0 on
//   127.0.0.1, searchProviders ['local'] only, an admin token, an account on
//   the Unicorn plan with its search rate windows lifted (as fanout.mjs does);
// - BEIR SciFact's 5,183 abstracts upserted into its `shared` collection
//   through scour.searchIndex.upsert in calls of 1,000 (the admin import's
//   code path, language left to detection).
//
// Then the 300 SciFact test queries, one request in flight, each
// `{"query": text, "max_results": 10}`, after a warm-up pass of
// SEARCH_API_WARMUP (50) queries, for SEARCH_API_ROUNDS (1) passes. Each
// query is timed four ways, interleaved per query so machine noise falls on
// all alike:
// - index: `scour.searchIndex.search` in this process (the parsed query,
//   the account's collections, limit 10, safe_search moderate as the API
//   sends it), what `bench:search` times;
// - index_facts: the same with a `-site:` no document is on, which sends
//   safe_search moderate through the per-candidate facts lookup: the path
//   every API search took before the explicit-documents index (the
//   same-run baseline; its results must be the same);
// - search_time: the answer's own `search_time` (seconds, 4 decimals);
// - client: POST /v1/search to the last byte of the answer (node's fetch,
//   keep-alive), JSON parsed.
// Every answer must be 200, and its links must be the index's hits in the
// same order (the API must not change results); anything else is a failure
// and the run exits 1.
//
// Prints p50/p95/p99/mean of each and MET/MISS for the target (search_time
// p50 < 5 ms); writes benchmarks/results/search-api.json with the load
// average at the start and the end (the machine is shared: quote ratios).
// Settings: SEARCH_API_ROUNDS (1), SEARCH_API_WARMUP (50),
// SEARCH_API_HTTP_ADAPTER (uws), SEARCH_API_OUT, SCOUR_SHARED_DATA,
// SEARCH_API_CPU_PROFILE (a file: profile the timed passes, print where the
// CPU time went per source file; the index_facts row is then not run, so
// the profile is the API's path and the in-process search alone).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadCorpus, loadSplit, percentile } from './scifact.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = process.env;
function setting(name, fallback, min = 0) {
  const v = Number(env[name] ?? fallback);
  if (Number.isInteger(v) && v >= min) return v;
  console.error(`${name} must be an integer >= ${min}`);
  process.exit(2);
}
const ROUNDS = setting('SEARCH_API_ROUNDS', 1, 1);
const WARMUP = setting('SEARCH_API_WARMUP', 50);
const ADAPTER = env.SEARCH_API_HTTP_ADAPTER ?? 'uws';
const OUT = env.SEARCH_API_OUT ?? join(root, 'benchmarks', 'results', 'search-api.json');
const TARGET_P50_MS = 5;
const PROFILE = env.SEARCH_API_CPU_PROFILE;
const BATCH = 1000;

const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const { createScour } = await dist('config/container.js');
const { applyPlanOverrides, DEFAULT_PLANS } = await dist('config/plans.js');
const { parseQuery, visibleCollections } = await dist('core/search.js');

const r3 = (x) => Math.round(x * 1000) / 1000;
const r2 = (x) => Math.round(x * 100) / 100;
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const stats = (xs) => ({ p50: r3(percentile(xs, 0.5)), p95: r3(percentile(xs, 0.95)), p99: r3(percentile(xs, 0.99)), mean: r3(mean(xs)), n: xs.length });

/**
 * SEARCH_API_CPU_PROFILE=file: a CPU profile of the timed passes only (not
 * the import), written to `file` (open it in Chrome's DevTools), and its
 * self time summed per source file of Scour and per kind of work, printed.
 * Server and client share this process: the client's fetch is in it too.
 */
async function startProfile() {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(PROFILE, JSON.stringify(profile));
      const dt = profile.timeDeltas;
      const self = new Map();
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      for (let k = 0; k < profile.samples.length; k++) self.set(profile.samples[k], (self.get(profile.samples[k]) ?? 0) + (dt[k] ?? 0));
      const where = new Map();
      let all = 0;
      for (const [id, us] of self) {
        const f = byId.get(id).callFrame;
        const url = f.url.replace(/^file:\/\//, '');
        const key = url.includes('/dist/') ? `scour ${url.slice(url.indexOf('/dist/') + 6)}`
          : url.includes('node_modules/') ? `dependency ${url.slice(url.lastIndexOf('node_modules/') + 13).split('/').slice(0, url.includes('node_modules/@') ? 2 : 1).join('/')}`
            : url.startsWith('node:') ? `node ${url.slice(5)}` : url === '' ? `(${f.functionName || 'native'})` : `other ${url.slice(url.lastIndexOf('/') + 1)}`;
        where.set(key, (where.get(key) ?? 0) + us);
        all += us;
      }
      console.log(`CPU profile of the timed passes (${(all / 1000).toFixed(0)} ms sampled), self time by file, top 25: ${PROFILE}`);
      for (const [k, us] of [...where].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${(100 * us / all).toFixed(1).padStart(5)}%  ${k}`);
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'scour-bench-search-api-'));
let scour;
async function teardown() {
  if (scour !== undefined) await scour.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { teardown().finally(() => process.exit(130)); });

const loadAtStart = loadavg().map(r2);
let status = 0;
try {
  const adminToken = randomBytes(24).toString('hex');
  const plans = applyPlanOverrides(DEFAULT_PLANS, { unicorn: { limits: { search: { per_minute: 1_000_000_000, per_hour: 1_000_000_000 } } } }, 'bench');
  scour = await createScour({
    plans,
    settings: {
      host: '127.0.0.1', port: 0, dataDir: dir, logLevel: 'silent', httpAdapter: ADAPTER, adminToken,
      searchProviders: ['local'], bootstrapKey: false, shutdownTimeoutMs: 5_000,
    },
  });
  const { url: base } = await scour.start();
  const admin = await fetch(`${base}/admin/v1/accounts`, {
    method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'unicorn', credits: 1_000_000_000, name: 'bench-search-api' }),
  });
  const account = await admin.json();
  if (admin.status !== 201) throw new Error(`creating the account: ${admin.status} ${JSON.stringify(account)}`);
  const key = account.api_key;
  const collections = visibleCollections(account.account_id);

  const corpus = loadCorpus();
  const t0 = performance.now();
  for (let i = 0; i < corpus.length; i += BATCH) await scour.searchIndex.upsert('shared', corpus.slice(i, i + BATCH), Date.now());
  const importSeconds = (performance.now() - t0) / 1000;
  const queries = loadSplit('test').queries;
  console.log(`Scour ${base} (${ADAPTER}, SQLite, local provider only): ${corpus.length} SciFact abstracts indexed in ${importSeconds.toFixed(1)} s; ${queries.length} test queries, max_results 10`);

  const FILTERS = { country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'moderate', resultType: 'web' };
  const inProcess = async (text, viaFacts = false) => {
    const p = parseQuery(text);
    if (!p.ok) return { ms: NaN, links: [] };
    // viaFacts: a -site: no document is on sends safe_search moderate through the per-candidate facts lookup,
    // the path every API search took before the explicit-documents index (same results, the old cost).
    const query = viaFacts ? { ...p.query, excludedSites: ['nowhere.invalid'] } : p.query;
    const started = performance.now();
    const r = await scour.searchIndex.search({ query, collections, filters: FILTERS, limit: 10, now: Date.now() });
    return { ms: performance.now() - started, links: r.hits.map((h) => h.document.url) };
  };
  const viaApi = async (text) => {
    const started = performance.now();
    const res = await fetch(`${base}/v1/search`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: text, max_results: 10 }),
    });
    const body = await res.text();
    const json = JSON.parse(body);
    return { ms: performance.now() - started, status: res.status, json };
  };

  for (const q of queries.slice(0, WARMUP)) { await inProcess(q.text); await viaApi(q.text); }

  const samples = { index: [], index_facts: [], search_time: [], client: [] };
  const failures = [];
  const profiler = PROFILE === undefined ? undefined : await startProfile();
  const t1 = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [n, q] of queries.entries()) {
      // Alternate which goes first, so neither always runs on a warm cache the other left.
      const apiFirst = (n + round) % 2 === 0;
      const a = apiFirst ? await viaApi(q.text) : undefined;
      const idx = await inProcess(q.text);
      // Left out of a profiled run, so that the profile is the API's path alone.
      const facts = PROFILE === undefined ? await inProcess(q.text, true) : idx;
      const api = a ?? await viaApi(q.text);
      if (api.status !== 200) { failures.push(`${q.id}: HTTP ${api.status} ${JSON.stringify(api.json).slice(0, 200)}`); continue; }
      const links = api.json.search_results.map((r) => r.link);
      if (JSON.stringify(links) !== JSON.stringify(idx.links)) { failures.push(`${q.id}: the API's results differ from the index's`); continue; }
      if (JSON.stringify(facts.links) !== JSON.stringify(idx.links)) { failures.push(`${q.id}: the facts lookup's results differ`); continue; }
      samples.index.push(idx.ms);
      samples.index_facts.push(facts.ms);
      samples.search_time.push(api.json.search_time * 1000);
      samples.client.push(api.ms);
    }
  }
  const wall = (performance.now() - t1) / 1000;
  if (profiler !== undefined) await profiler.stop();

  const rows = { index: stats(samples.index), index_facts: stats(samples.index_facts), search_time: stats(samples.search_time), client: stats(samples.client) };
  const met = rows.search_time.p50 < TARGET_P50_MS;
  const loadAtEnd = loadavg().map(r2);
  console.log('');
  console.log('| Local search, SciFact test queries, limit 10 | p50 ms | p95 ms | p99 ms | mean ms | p50 vs index |');
  console.log('|---|---:|---:|---:|---:|---:|');
  const label = {
    index: 'in process: SearchIndex.search, safe_search moderate (bench:search\'s figure)',
    index_facts: 'in process: the same through the per-candidate facts lookup (before)',
    search_time: 'through the API: the answer\'s search_time',
    client: 'through the API: client, to the last byte',
  };
  for (const k of ['index', 'index_facts', 'search_time', 'client']) {
    const s = rows[k];
    console.log(`| ${label[k]} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.mean} | ${r2(s.p50 / rows.index.p50)}x |`);
  }
  console.log('');
  console.log(`${samples.client.length} queries x ${ROUNDS} round(s) in ${wall.toFixed(1)} s; ${failures.length} failures; load average ${loadAtStart.join(' ')} at the start, ${loadAtEnd.join(' ')} at the end (${cpus().length} cores)`);
  console.log(`Target search_time p50 < ${TARGET_P50_MS} ms: ${met ? 'MET' : 'MISS'} (${rows.search_time.p50} ms)`);
  for (const f of failures.slice(0, 10)) console.log(`  failure: ${f}`);
  if (failures.length > 0) status = 1;

  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify({
    benchmark: 'search-api',
    date: new Date().toISOString(),
    node: process.version,
    adapter: ADAPTER,
    documents: corpus.length,
    queries: queries.length,
    rounds: ROUNDS,
    warmup: WARMUP,
    max_results: 10,
    latency_ms: rows,
    target: { search_time_p50_ms: TARGET_P50_MS, met },
    failures,
    load_average: { start: loadAtStart, end: loadAtEnd },
    cpus: cpus().length,
  }, null, 2)}\n`);
  console.log(`wrote ${OUT}`);
} catch (e) {
  console.error(e);
  status = 1;
} finally {
  await teardown();
}
process.exit(status);
