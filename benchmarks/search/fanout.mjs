// npm run bench:search:fanout: the cost of asking providers. One search over
// the local index alone, beside the same search over the local index plus
// five built-in providers (wikipedia, openalex, crossref, hackernews,
// stackexchange), each pointed at a loopback stand-in that answers after
// FANOUT_LATENCY_MS (20). Target (issue: "bench:search gains a
// provider-fan-out row"): fan-out p95 under 60 ms on this machine.
//
// Run: npm run bench:search:fanout
//   (= node --import tsx benchmarks/search/fanout.mjs: Scour from its
//   TypeScript sources, config/container.ts, and the stand-ins from
//   test/support/standins/, so no build is needed).
//
// What it starts, all on 127.0.0.1 and all in this process (the stand-ins in
// a child process with FANOUT_STANDINS=process):
// - the five stand-ins (test/support/standins/*.ts), each speaking its
//   service's wire format, seeded with 10 results matching the query, each
//   answering every request FANOUT_LATENCY_MS after reading it (setLatency);
//   the Stack Exchange stand-in's daily quota is lifted so long runs are
//   never throttled;
// - two Scour servers (createScour), embedded, each with SQLite in its own
//   temp directory, log level silent, the uws adapter, port 0 on 127.0.0.1,
//   an admin token, and the Unicorn plan with its search rate windows lifted
//   (as enrich.mjs does): `local` has searchProviders ['local']; `fanout`
//   has ['local', the five], providerSettings URLs at the stand-ins. Both
//   index the same 10 documents into `shared` through the admin API.
//
// Then WARMUP rounds not counted, ROUNDS counted; each round one search on
// each server, in an order that alternates per round (so machine noise falls
// on both alike), one request in flight, time from sending POST /v1/search to
// the last byte of the answer (node's fetch, keep-alive), and this process's
// CPU time (user + system) over the same span. Every fan-out answer
// must be 200 without warnings, and the `source` lists of its results must
// name all five providers; every local answer 200 without warnings with
// results. Anything else counts as a failure (and the run exits 1).
//
// Prints a table (p50, p95, p99, mean, ms over the latency floor at p95) and
// MET/MISS for the target; writes benchmarks/results/search-fanout.json.
// Settings: FANOUT_ROUNDS (200), FANOUT_WARMUP (20), FANOUT_LATENCY_MS (20),
// FANOUT_TARGET_P95_MS (60), FANOUT_HTTP_ADAPTER (uws), FANOUT_OUT,
// FANOUT_STANDINS (same: the stand-ins in this process, sharing its event
// loop with the server as enrich.mjs's pages do; process: in a child process,
// so their CPU time is not the server's).
//
// The stand-ins and the server share this machine, so on a loaded machine
// the figures are the load's as much as Scour's: the JSON records the load
// average at the start and the end.
import { mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = process.env;
function setting(name, fallback, min = 0) {
  const v = Number(env[name] ?? fallback);
  if (Number.isInteger(v) && v >= min) return v;
  console.error(`${name} must be an integer >= ${min}`);
  process.exit(2);
}
const ROUNDS = setting('FANOUT_ROUNDS', 200, 1);
const WARMUP = setting('FANOUT_WARMUP', 20);
const LATENCY_MS = setting('FANOUT_LATENCY_MS', 20);
const TARGET_P95_MS = setting('FANOUT_TARGET_P95_MS', 60, 1);
const ADAPTER = env.FANOUT_HTTP_ADAPTER ?? 'uws';
const OUT = env.FANOUT_OUT ?? join(root, 'benchmarks', 'results', 'search-fanout.json');
const QUERY = 'graphene transistors';
const PROVIDERS = ['wikipedia', 'openalex', 'crossref', 'hackernews', 'stackexchange'];
const PER_PROVIDER = 10;

const STANDINS = env.FANOUT_STANDINS ?? 'same';
if (STANDINS !== 'same' && STANDINS !== 'process') {
  console.error('FANOUT_STANDINS must be same (the stand-ins in this process) or process (in a child process)');
  process.exit(2);
}
const CHILD = process.argv.includes('--standins-child');

const src = (p) => import(pathToFileURL(join(root, p)).href);
const { startWikipedia } = await src('test/support/standins/wikipedia.ts');
const { startOpenalex, work } = await src('test/support/standins/openalex.ts');
const { startCrossref } = await src('test/support/standins/crossref.ts');
const { startHackernews } = await src('test/support/standins/hackernews.ts');
const { startStackexchange } = await src('test/support/standins/stackexchange.ts');

// ---------------------------------------------------------------------------
// Seeds: 10 results per service, each matching every word of the query (the
// stand-ins that filter by words need it), each on its own URL.

const range = (n) => Array.from({ length: n }, (_, i) => i + 1);
const T0 = Date.UTC(2024, 2, 1) / 1000;
const SEEDS = {
  wikipedia: (s) => s.setHits(range(PER_PROVIDER).map((n) => ({
    title: `Graphene transistors ${n}`,
    snippet: `<span class="searchmatch">Graphene</span> <span class="searchmatch">transistors</span> are field-effect devices whose channel is a single carbon layer (article ${n}).`,
    timestamp: '2025-05-06T07:08:09Z', pageid: 5000 + n,
  }))),
  openalex: (s) => s.setWorks(range(PER_PROVIDER).map((n) => work(n, { title: `Graphene transistors at radio frequencies ${n}`, display_name: `Graphene transistors at radio frequencies ${n}` }))),
  crossref: (s) => s.setItems(range(PER_PROVIDER).map((n) => ({
    indexed: { 'date-parts': [[2025, 1, 2]], 'date-time': '2025-01-02T00:00:00Z', timestamp: 1735776000000 },
    'reference-count': 12, publisher: 'Example Press', DOI: `10.5555/graphene.${n}`, type: 'journal-article',
    created: { 'date-parts': [[2020, 3, 1]], 'date-time': '2020-03-01T10:00:00Z', timestamp: 1583056800000 },
    source: 'Crossref', title: [`Graphene transistors on flexible substrates ${n}`], prefix: '10.5555',
    author: [{ given: 'Ada', family: 'Lovelace', sequence: 'first', affiliation: [] }, { given: 'Alan', family: 'Turing', sequence: 'additional', affiliation: [] }],
    member: '7822', 'container-title': ['Journal of Examples'], URL: `https://doi.org/10.5555/graphene.${n}`,
    published: { 'date-parts': [[2021, 6, 15]] }, issued: { 'date-parts': [[2021, 6, 15]] }, score: 20.5 - n,
  }))),
  hackernews: (s) => s.setItems(range(PER_PROVIDER).map((n) => ({
    objectID: String(1000 + n), title: `Graphene transistors finally beat silicon ${n}`, url: `https://blog${n}.example/graphene-transistors`,
    author: `user${n}`, points: 100 + n, num_comments: n, story_text: null,
    created_at: new Date((T0 + n * 3600) * 1000).toISOString(), created_at_i: T0 + n * 3600, children: [], story_id: 1000 + n, updated_at: '2024-03-02T00:00:00Z',
  }))),
  stackexchange: (s) => {
    s.setQuestions(range(PER_PROVIDER).map((n) => ({
      tags: ['graphene', 'transistors'],
      owner: { account_id: 10 + n, reputation: 1234, user_id: 20 + n, user_type: 'registered', display_name: `user${n}`, link: `https://stackoverflow.com/users/${20 + n}/user${n}` },
      is_answered: true, view_count: 1000 + n, answer_count: n, score: 10 + n,
      last_activity_date: 1_700_000_000 + n * 100 + 50, creation_date: 1_700_000_000 + n * 100, question_id: 7000 + n, content_license: 'CC BY-SA 4.0',
      link: `https://stackoverflow.com/questions/${7000 + n}/graphene-transistors-${n}`,
      title: `Why are graphene transistors hard to switch off? (${n})`,
      body: `<p>Graphene transistors have no band gap, so how is the off state reached? (${n})</p>`,
    })));
    s.setQuota(Number.MAX_SAFE_INTEGER);
  },
};
const STARTERS = { wikipedia: startWikipedia, openalex: startOpenalex, crossref: startCrossref, hackernews: startHackernews, stackexchange: startStackexchange };

/** The five stand-ins, seeded, each answering after LATENCY_MS. */
async function startStandins() {
  const out = {};
  for (const id of PROVIDERS) {
    const s = await STARTERS[id]();
    owned.standins.push(s);
    SEEDS[id](s);
    s.setLatency(LATENCY_MS);
    out[id] = s;
  }
  return out;
}

const DOCS = range(PER_PROVIDER).map((n) => ({
  url: `https://lab${n}.example/graphene-transistors`,
  title: `Graphene transistors, lab note ${n}`,
  text: `Graphene transistors built in lab ${n}: a carbon monolayer channel, top gate, and the switching ratio measured at room temperature. Notes on transistors and graphene growth.`,
}));

// ---------------------------------------------------------------------------
// What this run starts goes on the way out (also on failure and Ctrl-C).

const owned = { standins: [], servers: [], dirs: [] };
let finishing;
function teardown() {
  finishing ??= (async () => {
    for (const s of owned.servers) await s.stop().catch(() => undefined);
    for (const s of owned.standins) await s.close().catch(() => undefined);
    for (const d of owned.dirs) rmSync(d, { recursive: true, force: true });
  })();
  return finishing;
}
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { teardown().finally(() => process.exit(130)); });

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const r2 = (x) => Math.round(x * 100) / 100;

let createScourFn;
let applyPlanOverrides;
let DEFAULT_PLANS;
async function startServer(name, searchProviders, providerSettings) {
  const dir = mkdtempSync(join(tmpdir(), `scour-bench-fanout-${name}-`));
  owned.dirs.push(dir);
  const adminToken = randomBytes(24).toString('hex');
  const plans = applyPlanOverrides(DEFAULT_PLANS, { unicorn: { limits: { search: { per_minute: 1_000_000_000, per_hour: 1_000_000_000 } } } }, 'bench');
  const scour = await createScourFn({
    plans,
    settings: {
      host: '127.0.0.1', port: 0, dataDir: dir, logLevel: 'silent', httpAdapter: ADAPTER, adminToken,
      searchProviders, providerSettings, bootstrapKey: false, shutdownTimeoutMs: 5_000,
    },
  });
  owned.servers.push(scour);
  const { url: base } = await scour.start();
  const call = async (method, path, body, token) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try { json = JSON.parse(text); } catch { json = text; }
    return { status: res.status, body: json };
  };
  const account = await call('POST', '/admin/v1/accounts', { plan: 'unicorn', credits: 1_000_000, name: `bench-search-fanout-${name}` }, adminToken);
  if (account.status !== 201) throw new Error(`${name}: creating the account: ${account.status} ${JSON.stringify(account.body)}`);
  const indexed = await call('POST', '/admin/v1/index/documents', { collection: 'shared', documents: DOCS }, adminToken);
  if (indexed.status !== 200 || indexed.body.rejected.length > 0) throw new Error(`${name}: indexing: ${indexed.status} ${JSON.stringify(indexed.body).slice(0, 500)}`);
  return { name, base, key: account.body.api_key, searchProviders };
}

// The stand-ins as the run sees them: their URLs, the requests they had, a
// reset; in this process or in a child (FANOUT_STANDINS=process, which takes
// their CPU time off the server's event loop).
const statsOf = (standins) => ({
  counts: Object.fromEntries(PROVIDERS.map((id) => [id, standins[id].requests.length])),
  sample: Object.fromEntries(PROVIDERS.map((id) => {
    const r = standins[id].requests[0];
    return [id, r === undefined ? null : `${r.path}?${new URLSearchParams(r.params).toString()}`];
  })),
});

if (CHILD) {
  const standins = await startStandins();
  process.on('message', (m) => {
    if (m === 'reset') { for (const s of Object.values(standins)) s.requests.length = 0; process.send({ reset: true }); }
    if (m === 'stats') process.send({ stats: statsOf(standins) });
  });
  process.on('disconnect', () => { teardown().finally(() => process.exit(0)); });
  process.send({ urls: Object.fromEntries(PROVIDERS.map((id) => [id, standins[id].url])) });
  await new Promise(() => undefined);
}

async function standinsHere() {
  const standins = await startStandins();
  return {
    urls: Object.fromEntries(PROVIDERS.map((id) => [id, standins[id].url])),
    reset: async () => { for (const s of Object.values(standins)) s.requests.length = 0; },
    stats: async () => statsOf(standins),
  };
}

async function standinsInChild() {
  const child = fork(fileURLToPath(import.meta.url), ['--standins-child'], { execArgv: ['--import', 'tsx'], env: { ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  owned.standins.push({ close: () => new Promise((resolve) => { if (child.exitCode !== null) resolve(); else { child.once('exit', () => resolve()); child.disconnect(); } }) });
  const next = (key) => new Promise((resolve, reject) => {
    const onMessage = (m) => { if (m?.[key] !== undefined) { child.off('message', onMessage); child.off('exit', onExit); resolve(m[key]); } };
    const onExit = (code) => { child.off('message', onMessage); reject(new Error(`the stand-ins' process exited (${code})`)); };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
  const urls = await next('urls');
  return {
    urls,
    reset: async () => { const p = next('reset'); child.send('reset'); await p; },
    stats: async () => { const p = next('stats'); child.send('stats'); return p; },
  };
}

const loadAtStart = loadavg().map(r2);
let status = 0;
try {
  const { createScour } = await src('config/container.ts');
  ({ applyPlanOverrides, DEFAULT_PLANS } = await src('config/plans.ts'));
  createScourFn = createScour;
  // ------------------------------------------------------------------ stand-ins
  const standins = STANDINS === 'process' ? await standinsInChild() : await standinsHere();
  const providerSettings = Object.fromEntries(PROVIDERS.map((id) => [id, { URL: standins.urls[id] }]));

  // ------------------------------------------------------------------ servers
  const servers = {
    local: await startServer('local', ['local'], {}),
    fanout: await startServer('fanout', ['local', ...PROVIDERS], providerSettings),
  };
  console.log(`stand-ins (${STANDINS === 'process' ? 'in a child process' : 'in this process'}): ${PROVIDERS.map((id) => `${id} ${standins.urls[id]}`).join(', ')} (each answers after ${LATENCY_MS} ms)`);
  console.log(`Scour local-only ${servers.local.base}, fan-out ${servers.fanout.base} (${ADAPTER}); ${DOCS.length} documents indexed in each`);

  // ------------------------------------------------------------------ one check before timing
  const body = JSON.stringify({ query: QUERY });
  const once = async (srv) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const res = await fetch(`${srv.base}/v1/search`, { method: 'POST', headers: { authorization: `Bearer ${srv.key}`, 'content-type': 'application/json' }, body });
    const text = await res.text();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return { status: res.status, text, ms, cpuMs: (used.user + used.system) / 1000 };
  };
  const judge = (srv, r) => {
    if (r.status !== 200) return `HTTP ${r.status}: ${r.text.slice(0, 200)}`;
    const json = JSON.parse(r.text);
    if (json.warnings?.length) return `warnings: ${JSON.stringify(json.warnings).slice(0, 300)}`;
    if (json.search_results.length === 0) return 'no results';
    const sources = new Set(json.search_results.flatMap((x) => x.source));
    const want = srv.searchProviders;
    const missing = want.filter((p) => !sources.has(p));
    if (missing.length > 0) return `no result from ${missing.join(', ')} (sources ${[...sources].join(', ')})`;
    return { json, sources: [...sources] };
  };
  for (const srv of Object.values(servers)) {
    const v = judge(srv, await once(srv));
    if (typeof v === 'string') throw new Error(`${srv.name}: the first search failed: ${v}`);
  }
  await standins.reset();

  // ------------------------------------------------------------------ timing
  const names = ['local', 'fanout'];
  const samples = Object.fromEntries(names.map((n) => [n, { ms: [], cpu_ms: [], search_time_ms: [], results: new Set(), credits: new Set() }]));
  const failures = Object.fromEntries(names.map((n) => [n, []]));
  const t0 = performance.now();
  for (let r = 0; r < WARMUP + ROUNDS; r++) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const n of order) {
      const srv = servers[n];
      const res = await once(srv);
      const v = judge(srv, res);
      if (typeof v === 'string') {
        failures[n].push(`round ${r}: ${v}`);
        continue;
      }
      if (r < WARMUP) continue;
      const s = samples[n];
      s.ms.push(res.ms);
      s.cpu_ms.push(res.cpuMs);
      s.search_time_ms.push(v.json.search_time * 1000);
      s.results.add(v.json.results_count);
      s.credits.add(v.json.credits_used);
    }
  }
  const wall = (performance.now() - t0) / 1000;
  const { counts: asked, sample } = await standins.stats();

  const floor = { local: 0, fanout: LATENCY_MS };
  const latency = Object.fromEntries(names.map((n) => {
    const s = samples[n];
    const p95 = pct(s.ms, 0.95);
    return [n, {
      requests: s.ms.length, failures: failures[n].length,
      p50_ms: r2(pct(s.ms, 0.5)), p95_ms: r2(p95), p99_ms: r2(pct(s.ms, 0.99)), mean_ms: r2(mean(s.ms)), min_ms: r2(Math.min(...s.ms)), max_ms: r2(Math.max(...s.ms)),
      floor_ms: floor[n], over_floor_p95_ms: r2(p95 - floor[n]),
      server_search_step_p50_ms: r2(pct(s.search_time_ms, 0.5)), server_search_step_p95_ms: r2(pct(s.search_time_ms, 0.95)),
      cpu_ms_per_search_p50: r2(pct(s.cpu_ms, 0.5)), cpu_ms_per_search_mean: r2(mean(s.cpu_ms)),
      results_count: [...s.results], credits_used: [...s.credits],
    }];
  }));
  const met = latency.fanout.p95_ms < TARGET_P95_MS && latency.fanout.requests === ROUNDS;

  // ------------------------------------------------------------------ report
  const label = { local: 'local only', fanout: `fan-out: local + 5 x ${LATENCY_MS} ms` };
  const failed = names.reduce((k, n) => k + failures[n].length, 0);
  const lines = [
    '',
    `## Search provider fan-out over loopback: ${ROUNDS} rounds (+${WARMUP} warm-up), one request in flight, ${ADAPTER}`,
    '',
    `Query ${JSON.stringify(QUERY)}; ${DOCS.length} documents in the local index; providers ${PROVIDERS.join(', ')} on loopback stand-ins answering after ${LATENCY_MS} ms, ${PER_PROVIDER} results each, ${STANDINS === 'process' ? 'in a child process' : 'in this process'}. Time from sending to the last byte; CPU: this process's user + system time during the request (client, server${STANDINS === 'process' ? '' : ' and stand-ins'}).`,
    '',
    '| search | requests | p50 ms | p95 ms | p99 ms | mean ms | floor ms | p95 over floor ms | server search step p50 / p95 ms | CPU ms per search, mean | failures |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...names.map((n) => {
      const l = latency[n];
      return `| ${label[n]} | ${l.requests} | ${l.p50_ms.toFixed(2)} | ${l.p95_ms.toFixed(2)} | ${l.p99_ms.toFixed(2)} | ${l.mean_ms.toFixed(2)} | ${l.floor_ms} | ${l.over_floor_p95_ms.toFixed(2)} | ${l.server_search_step_p50_ms.toFixed(1)} / ${l.server_search_step_p95_ms.toFixed(1)} | ${l.cpu_ms_per_search_mean.toFixed(2)} | ${l.failures} |`;
    }),
    '',
    `Target: fan-out p95 under ${TARGET_P95_MS} ms: ${met ? 'MET' : 'MISS'} (${latency.fanout.p95_ms.toFixed(2)} ms).`,
    `Stand-in requests in the timed part (warm-up included): ${PROVIDERS.map((id) => `${id} ${asked[id]}`).join(', ')}; ${wall.toFixed(1)} s.`,
    ...(failed > 0 ? [`Failures: ${names.flatMap((n) => failures[n].slice(0, 5).map((f) => `${n} ${f}`)).join('; ')}`] : []),
  ];
  console.log(lines.join('\n'));

  const result = {
    benchmark: 'search-fanout',
    date: new Date().toISOString(),
    machine: { node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_bytes: totalmem(), loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map(r2), kernel: (() => { try { return readFileSync('/proc/sys/kernel/osrelease', 'latin1').trim(); } catch { return process.platform; } })() },
    settings: {
      rounds: ROUNDS, warmup_rounds: WARMUP, provider_latency_ms: LATENCY_MS, http_adapter: ADAPTER, in_flight: 1, query: QUERY,
      request_body: JSON.parse(body), documents_indexed: DOCS.length, results_per_provider: PER_PROVIDER,
      providers: { local: ['local'], fanout: ['local', ...PROVIDERS] },
      configuration: 'two embedded servers (SQLite in temp dirs, in-process limiter), createScour from the TypeScript sources in this process; rounds alternate which server is asked first',
      plan: 'unicorn (search rate windows lifted)',
      standins: `test/support/standins/*.ts on 127.0.0.1 ${STANDINS === 'process' ? 'in a child process' : 'in this process (their CPU time shares the server\'s event loop)'}, setLatency per answer; stackexchange quota lifted`,
      standins_process: STANDINS,
      standin_request_example: sample,
    },
    latency, target: { fanout_p95_ms_under: TARGET_P95_MS }, met,
    standin_requests: asked, failures, wall_s: r2(wall),
    unit: { time: 'ms' },
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwrote ${relative(process.cwd(), OUT) || OUT}`);
  if (failed > 0) status = 1;
} catch (e) {
  status = 1;
  console.error(`bench:search:fanout failed: ${e?.stack ?? e}`);
} finally {
  await teardown();
}
process.exit(status);
