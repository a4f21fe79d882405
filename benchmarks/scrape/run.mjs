// npm run bench:scrape: POST /v1/scrape on the BUILT server (dist/), against
// the 181 real pages of the Zyte article benchmark served on loopback by the
// bench itself (static-site.mjs).
//
// Part 1, static: every page with every extractor on (links, images, schema,
// meta, main_content, markdown), BENCH_PASSES passes at BENCH_CONCURRENCY
// requests in flight: requests/s, p50, p99, errors. Baseline in the same
// run: Crawlee's CheerioCrawler (its own process, cheerio-baseline.mjs) over
// the same pages, same passes (unique URLs per pass, so its queue does not
// dedupe them), same concurrency, no retries, doing comparable extraction.
// When there are two cores or more, the process under test (Scour, or the
// Cheerio crawler) is held to core 0 and this process (load generator and
// target site) to core 1 for this part.
//
// Part 2, render_js: BENCH_RENDERS renders (cycling through the pages) at
// BENCH_RENDER_CONCURRENCY, after BENCH_RENDER_WARMUP renders not counted:
// p50, p95, throughput, errors; resident memory of the server and all its
// Chromium processes (VmRSS summed every 250 ms from /proc: peak and final);
// Chromium processes while idle after the run, and after SIGTERM (must be
// none: any process of the pool still alive is reported as leaked).
//
// Part 3, where a render goes (issue 15): render-phases.mjs in a child
// process (with the same DNS setting), after the server is gone: the browser
// fetcher in-process in two configurations in the same run, `legacy` (the
// rules before issue 15: a context created per render, load event + network
// idle, nothing blocked, Chromium's browser UI left on, page closed before
// the answer) and `new` (the defaults); per-phase timings from the fetcher's
// onTiming hook for a small loopback page one at a time (p50/p99), renders/s
// and CPU per render at BENCH_RENDER_CONCURRENCY in flight on the Zyte pages
// and on the small page, memory before/after, Chromium processes after
// stop(). BENCH_LEGACY_MODULE=<path to an older plugins/fetchers/browser
// index.js> runs that code as `legacy` instead; BENCH_PHASES=0 skips part 3.
// Its own settings: BENCH_PHASE_RENDERS, BENCH_PHASE_WARMUP,
// BENCH_THROUGHPUT_RENDERS, BENCH_THROUGHPUT_SMALL (see render-phases.mjs).
//
// Part 4, a render through the API beside the fetcher in process (issue 29):
// render-latency.mjs in a child process: a tiny loopback page (one image,
// one inline script) rendered warm one at a time, back to back, through a
// fresh built server (POST /v1/scrape render_js) and by the browser fetcher
// in process, taking turns in the same run (and, with BENCH_LATENCY_REMOTE=1,
// the default, through a server rendering in a Playwright browser server on
// loopback), back to back and 500 ms apart: p50/p95 of each, their ratio,
// the load average. BENCH_LATENCY=0 skips it; its settings:
// BENCH_LATENCY_RENDERS, BENCH_LATENCY_WARMUP, BENCH_LATENCY_BLOCK,
// BENCH_LATENCY_GAPS (see render-latency.mjs).
//
// Prints markdown tables and MET/MISS lines, writes benchmarks/results/scrape.json.
// Everything it starts (target site, server, crawler, temp dirs) is removed
// on the way out, also on failure and on Ctrl-C.
//
// Settings: BENCH_CONCURRENCY (16), BENCH_PASSES (3), BENCH_STATIC_WARMUP
// (requests, 32), BENCH_RENDERS (500), BENCH_RENDER_CONCURRENCY (8),
// BENCH_RENDER_WARMUP (16), BENCH_BROWSER_PAGES (SCOUR_BROWSER_PAGES, 8),
// BENCH_DATA (the benchmark directory holding html/), BENCH_DNS (offline or
// system, see below).
//
// BENCH_DNS=offline (default) preloads offline-dns.mjs into the server: a
// name (not an IP literal, not localhost) fails to resolve at once. These
// machines have no internet, so the pages' external subresources fail either
// way; the machine's resolver drops queries beyond a small burst and makes
// each dropped one cost 5-10 s, which would make part 2 measure the sandbox's
// DNS. BENCH_DNS=system leaves the server's resolver alone (then
// UV_THREADPOOL_SIZE and RES_OPTIONS, passed through, matter; they are
// recorded in the results).
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { allProcs, chromiumKinds, isChromium, pssBytes, rssBytes, serverProcesses } from './procs.mjs';
import { renderPhaseTables } from './render-phases.mjs';
import { renderLatencyTable } from './render-latency.mjs';
import { startStaticSite } from './static-site.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const int = (name, fallback, min = 0) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < min) {
    console.error(`${name} must be an integer >= ${min}`);
    process.exit(2);
  }
  return v;
};
const CONCURRENCY = int('BENCH_CONCURRENCY', 16, 1);
const PASSES = int('BENCH_PASSES', 3, 1);
const STATIC_WARMUP = int('BENCH_STATIC_WARMUP', 32);
const RENDERS = int('BENCH_RENDERS', 500, 1);
const RENDER_CONCURRENCY = int('BENCH_RENDER_CONCURRENCY', 8, 1);
const RENDER_WARMUP = int('BENCH_RENDER_WARMUP', 16);
const BROWSER_PAGES = int('BENCH_BROWSER_PAGES', 8, 1);
const DATA_DIR = process.env.BENCH_DATA ?? join(root, '..', 'shared', 'data', 'extraction', 'zyte-article-benchmark');
const DNS = process.env.BENCH_DNS ?? 'offline';
const PHASES = process.env.BENCH_PHASES !== '0';
const LATENCY = process.env.BENCH_LATENCY !== '0';
if (DNS !== 'offline' && DNS !== 'system') {
  console.error('BENCH_DNS must be offline or system');
  process.exit(2);
}
const PLAN = 'unicorn';
const PLANS_OVERRIDE = { [PLAN]: { limits: { scrape: { per_minute: 1_000_000_000, concurrency: 0 } } } };
const STATIC_BODY = { extract_links: true, extract_images: true, extract_schema: true, extract_meta: true, main_content: true, markdown: true };
const SAMPLE_MS = 250;

if (process.platform !== 'linux') {
  console.error('bench:scrape reads /proc: Linux only');
  process.exit(1);
}
if (!existsSync(join(root, 'dist/config/cli.js'))) {
  console.error('dist/ is missing: run `npm run build` first (npm run bench:scrape does it)');
  process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const has = (cmd) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const nCores = cpus().length;
const pin = nCores >= 2 && has('taskset');
/** Move every thread of `pid` to these cores (best effort: a process that just exited is no error). */
const setCores = (pid, list) => {
  if (!pin) return;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', list, String(pid)], { stdio: 'ignore' });
  } catch { /* gone */ }
};
const allCores = `0-${nCores - 1}`;

// ---------------------------------------------------------------------------
// What this run starts, and its removal (idempotent, also on signals).

const runId = randomBytes(6).toString('hex');
const runDir = join(root, 'data', `bench-scrape-${runId}`);
let crawleeDir;
let site;
let scour; // { child, pid, log() }
let cheerioChild;
let phasesChild;
let latencyChild;
let sampler;
const markers = new Set();
/** Chromium processes seen in the server's tree or carrying its marker: pid -> start time. */
const seenChromium = new Map();
let cleaning;

function chromiumStillAlive() {
  const out = [];
  const needles = [...markers, runDir];
  for (const p of allProcs()) {
    const known = seenChromium.get(p.pid) === p.start;
    if ((known && isChromium(p)) || needles.some((n) => p.cmdline.includes(n))) out.push(p);
  }
  return out;
}

async function stopScour(timeoutMs) {
  const s = scour;
  if (!s || s.child.exitCode !== null || s.child.signalCode !== null) return { code: s?.child.exitCode ?? null, signal: s?.child.signalCode ?? null, ms: 0, killed: false };
  const t0 = performance.now();
  const exited = new Promise((resolve) => s.child.once('exit', (code, signal) => resolve({ code, signal })));
  s.child.kill('SIGTERM');
  let res = await Promise.race([exited, sleep(timeoutMs).then(() => null)]);
  let killed = false;
  if (res === null) {
    killed = true;
    s.child.kill('SIGKILL');
    res = await exited;
  }
  return { ...res, ms: performance.now() - t0, killed };
}

function cleanup() {
  cleaning ??= (async () => {
    clearInterval(sampler);
    if (cheerioChild && cheerioChild.exitCode === null) cheerioChild.kill('SIGKILL');
    // The phases child stops its fetchers on SIGTERM's way out only if it gets the chance; its Chromium goes below anyway.
    if (phasesChild && phasesChild.exitCode === null) phasesChild.kill('SIGKILL');
    if (latencyChild && latencyChild.exitCode === null) latencyChild.kill('SIGTERM');
    await stopScour(15_000).catch(() => undefined);
    // Whatever the server left of its Chromium pool goes too (by pid, only processes of this run).
    for (const p of chromiumStillAlive()) {
      try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
    }
    await site?.close().catch(() => undefined);
    rmSync(runDir, { recursive: true, force: true });
    if (crawleeDir) rmSync(crawleeDir, { recursive: true, force: true });
  })();
  return cleaning;
}

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${sig}: stopping and cleaning up...`);
    cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------

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

async function startScour(env, key) {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/config/cli.js', 'serve'], { cwd: root, env: cleanEnv({ ...env, PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d) => { log = (log + d).slice(-20_000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  scour = { child, pid: child.pid, port, log: () => log };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Scour exited (${child.exitCode}): ${log}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
      const body = await res.json();
      if (res.status === 200 && Number.isInteger(body.credits_remaining)) return scour;
    } catch { /* not up yet */ }
    await sleep(100);
  }
  throw new Error(`Scour did not start within 60 s: ${log}`);
}

const pct = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]);

/**
 * POST /v1/scrape for each URL, `concurrency` in flight; latency is from the
 * request to the last byte of the answer. `check` judges a 200 body.
 */
async function scrapeAll({ port, key, urls, concurrency, body, check }) {
  const latencies = [];
  const errors = new Map();
  const samples = [];
  let next = 0;
  let ok = 0;
  const endpoint = `http://127.0.0.1:${port}/v1/scrape`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const fail = (k, url) => {
    const e = errors.get(k) ?? { count: 0, example: url, pages: new Set() };
    e.count++;
    e.pages.add(url.replace(/\?.*$/, ''));
    errors.set(k, e);
  };
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= urls.length || interrupted) return;
      const url = urls[i];
      const t0 = performance.now();
      let status;
      let text;
      try {
        const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ url, ...body }) });
        status = res.status;
        text = await res.text();
      } catch (e) {
        fail(`network: ${e?.cause?.code ?? e?.message ?? e}`, url);
        continue;
      }
      const ms = performance.now() - t0;
      if (status !== 200) {
        let code = '';
        try {
          const j = JSON.parse(text);
          code = `${j.error ?? j.code ?? ''} ${j.message ?? ''} ${j.details ?? ''}`.trim();
        } catch { code = text.slice(0, 120); }
        fail(`${status} ${code}`, url);
        continue;
      }
      let verdict;
      try {
        verdict = check(JSON.parse(text));
      } catch (e) {
        verdict = `unparseable answer: ${e.message}`;
      }
      if (typeof verdict === 'string') {
        fail(`200 but ${verdict}`, url);
        continue;
      }
      ok++;
      latencies.push(ms);
      if (samples.length < 1000) samples.push(verdict);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, urls.length) }, worker));
  const wallMs = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  const errorCount = [...errors.values()].reduce((n, e) => n + e.count, 0);
  return {
    requests: urls.length, ok, errors: errorCount,
    error_kinds: [...errors].map(([kind, e]) => ({ kind, count: e.count, example_url: e.example, pages: [...e.pages].map((u) => u.replace(/^.*\/a\//, '')) })),
    wall_s: wallMs / 1000, per_s: urls.length / (wallMs / 1000),
    p50_ms: pct(latencies, 50), p95_ms: pct(latencies, 95), p99_ms: pct(latencies, 99), max_ms: latencies.at(-1) ?? NaN,
    samples,
  };
}

/**
 * Summed VmRSS of the server's processes (and the server's own), sampled
 * until stopped; every 4th sample also the summed PSS (shared pages divided
 * among their sharers, so Chromium's shared memory is not counted per process).
 */
function startSampler(pid) {
  const fresh = () => ({ peak: 0, serverPeak: 0, chromiumPeak: 0, pssPeak: 0, processesPeak: 0 });
  const state = { last: 0, lastServer: 0, lastPss: 0, samples: 0, overall: fresh(), window: fresh() };
  const tick = () => {
    const { all } = serverProcesses(pid, markers, [runDir]);
    const withPss = state.samples % 4 === 0;
    let sum = 0;
    let server = 0;
    let pss = 0;
    for (const p of all) {
      const rss = rssBytes(p.pid);
      sum += rss;
      if (p.pid === pid) server = rss;
      if (withPss) pss += pssBytes(p.pid);
      if (isChromium(p)) seenChromium.set(p.pid, p.start);
    }
    state.samples++;
    state.last = sum;
    state.lastServer = server;
    if (withPss) state.lastPss = pss;
    for (const w of [state.overall, state.window]) {
      w.peak = Math.max(w.peak, sum);
      w.serverPeak = Math.max(w.serverPeak, server);
      w.chromiumPeak = Math.max(w.chromiumPeak, sum - server);
      w.pssPeak = Math.max(w.pssPeak, withPss ? pss : 0);
      w.processesPeak = Math.max(w.processesPeak, all.length);
    }
  };
  state.reset = () => { state.window = fresh(); };
  tick();
  sampler = setInterval(tick, SAMPLE_MS);
  return state;
}

function runCheerio(urls, warmUrls, concurrency) {
  crawleeDir = mkdtempSync(join(tmpdir(), 'scour-bench-crawlee-'));
  const storageDir = join(crawleeDir, 'storage');
  return new Promise((resolve, reject) => {
    const child = fork(join(root, 'benchmarks/scrape/cheerio-baseline.mjs'), [], {
      cwd: crawleeDir,
      env: cleanEnv({ CRAWLEE_STORAGE_DIR: storageDir, CRAWLEE_PERSIST_STORAGE: 'false', CRAWLEE_LOG_LEVEL: 'OFF', CRAWLEE_PURGE_ON_START: 'true' }),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    cheerioChild = child;
    let out = '';
    child.stdout.on('data', (d) => { out = (out + d).slice(-20_000); });
    child.stderr.on('data', (d) => { out = (out + d).slice(-20_000); });
    setCores(child.pid, '0');
    child.once('message', (m) => {
      child.kill('SIGKILL');
      if (m.ok) resolve({ ...m.result, output: out, wroteStorage: existsSync(storageDir) && readdirSync(storageDir).length > 0 });
      else reject(new Error(`Cheerio baseline failed: ${m.error}\n${out}`));
    });
    child.once('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`Cheerio baseline exited (${code ?? signal}) without an answer:\n${out}`));
    });
    child.send({ urls, warmUrls, concurrency });
  });
}

/**
 * A part of this bench in its own process (it starts its own servers), its
 * result by IPC; `track` keeps the child so a stop can kill it.
 */
function runPart(name, file, { execArgv = [], env = {}, track }) {
  return new Promise((resolve, reject) => {
    const child = fork(join(root, file), [], { cwd: root, execArgv, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    track(child);
    let out = '';
    child.stdout.on('data', (d) => { out = (out + d).slice(-20_000); });
    child.stderr.on('data', (d) => { out = (out + d).slice(-20_000); });
    let answered = false;
    child.once('message', (m) => {
      answered = true;
      if (m.ok) resolve(m.result);
      else reject(new Error(`${name} failed: ${m.error}\n${out}`));
    });
    child.once('exit', (code, signal) => {
      track(undefined);
      if (!answered) reject(new Error(`${name} exited (${code ?? signal}) without an answer:\n${out}`));
    });
  });
}

/** Part 4: render-latency.mjs. */
const runLatency = () => runPart('render latency', 'benchmarks/scrape/render-latency.mjs', { track: (c) => { latencyChild = c; } });

/** Part 3: render-phases.mjs (offline DNS stub as the server had). */
const runPhases = () => runPart('render phases', 'benchmarks/scrape/render-phases.mjs', {
  execArgv: DNS === 'offline' ? ['--import', join(root, 'benchmarks/scrape/offline-dns.mjs')] : [],
  env: { BENCH_RENDER_CONCURRENCY: String(RENDER_CONCURRENCY) },
  track: (c) => { phasesChild = c; },
});

const mib = (b) => b / (1024 * 1024);
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

// ---------------------------------------------------------------------------

let exitCode = 0;
try {
  const storageBefore = existsSync(join(root, 'storage'));
  site = await startStaticSite(join(DATA_DIR, 'html'));
  const ids = site.ids;
  console.log(`target site ${site.base}: ${ids.length} pages, ${f1(mib(site.totalBytes))} MiB decompressed`);

  mkdirSync(runDir, { recursive: true });
  const plansPath = join(runDir, 'plans.json');
  writeFileSync(plansPath, `${JSON.stringify(PLANS_OVERRIDE)}\n`);
  const env = {
    HOST: '127.0.0.1', SCOUR_ALLOW_PRIVATE_TARGETS: 'true', SCOUR_DATA_DIR: join(runDir, 'data'), SCOUR_SEARCH_PROVIDERS: 'local', SCOUR_BOOTSTRAP_KEY: 'false',
    LOG_LEVEL: 'warn', SCOUR_BROWSER_PAGES: String(BROWSER_PAGES), SCOUR_PLANS: plansPath,
    // Embedded configuration: nothing shared from the caller's environment.
    DATABASE_URL: undefined, REDIS_URL: undefined, SCOUR_REDIS_PREFIX: undefined, SCOUR_PLUGINS: undefined, SCOUR_PROXIES: undefined,
  };
  const created = JSON.parse(execFileSync(process.execPath, ['dist/config/cli.js', 'accounts', 'create', '--plan', PLAN, '--credits', '100000000', '--json'], {
    cwd: root, env: cleanEnv(env), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
  }));
  const key = created.api_key;
  if (typeof key !== 'string' || !key.startsWith('sk_')) throw new Error(`accounts create gave no api_key: ${JSON.stringify(created)}`);

  const t0 = performance.now();
  const offlineDns = join(root, 'benchmarks/scrape/offline-dns.mjs');
  const serveEnv = DNS === 'offline' ? { ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${offlineDns}`.trim() } : env;
  await startScour(serveEnv, key);
  console.log(`Scour pid ${scour.pid} on 127.0.0.1:${scour.port} (started in ${f0(performance.now() - t0)} ms, browser pool warm)`);

  // ---- Part 1: static ----
  const passUrls = (tag) => Array.from({ length: PASSES }, (_, p) => ids.map((id) => site.url(id, `?${tag}=${p + 1}`))).flat();
  const warmUrls = Array.from({ length: STATIC_WARMUP }, (_, i) => site.url(ids[i % ids.length], `?warm=${i}`));
  const staticCheck = (j) => {
    if (typeof j.content !== 'string' || j.content.length === 0) return 'no content';
    if (typeof j.markdown !== 'string' || typeof j.main_content !== 'string') return 'no main_content/markdown';
    if (!Array.isArray(j.links) || !Array.isArray(j.images) || !Array.isArray(j.schema_data) || j.meta_data === undefined) return 'an extractor result is missing';
    if (j.extractor_errors !== undefined) return `extractor_errors ${JSON.stringify(j.extractor_errors).slice(0, 200)}`;
    return { credits: j.credits_used, links: j.links.length, text: j.text_content.length, bytes: 0 };
  };

  setCores(scour.pid, '0');
  setCores(process.pid, pin ? '1' : allCores);
  if (STATIC_WARMUP > 0) await scrapeAll({ port: scour.port, key, urls: warmUrls, concurrency: CONCURRENCY, body: STATIC_BODY, check: staticCheck });
  const scourStatic = await scrapeAll({ port: scour.port, key, urls: passUrls('pass'), concurrency: CONCURRENCY, body: STATIC_BODY, check: staticCheck });
  console.log(`part 1  Scour   ${scourStatic.requests} scrapes in ${f1(scourStatic.wall_s)} s: ${f1(scourStatic.per_s)}/s, p50 ${f0(scourStatic.p50_ms)} ms, p99 ${f0(scourStatic.p99_ms)} ms, ${scourStatic.errors} errors`);
  setCores(scour.pid, allCores);

  const cheerioUrls = passUrls('pass');
  const cheerio = await runCheerio(cheerioUrls, warmUrls, CONCURRENCY);
  cheerioChild = undefined;
  const cheerioPerS = cheerio.pages / (cheerio.wallMs / 1000);
  console.log(`part 1  Cheerio ${cheerio.pages}/${cheerioUrls.length} pages in ${f1(cheerio.wallMs / 1000)} s: ${f1(cheerioPerS)}/s, ${cheerio.failed} failed`);
  setCores(process.pid, allCores);
  const ratio = scourStatic.per_s / cheerioPerS;
  const storageAfter = existsSync(join(root, 'storage'));

  // ---- Part 2: render_js ----
  const renderBody = { render_js: true };
  const renderCheck = (j) => (typeof j.content === 'string' && j.content.length > 0 ? { credits: j.credits_used, load: j.load_time } : 'no content');
  const mem = startSampler(scour.pid);
  await sleep(SAMPLE_MS * 4);
  const idleBefore = serverProcesses(scour.pid, markers, [runDir]).all;
  const memBefore = { rss: mem.last, server: mem.lastServer, pss: mem.lastPss };
  const warmRenderUrls = Array.from({ length: RENDER_WARMUP }, (_, i) => site.url(ids[i % ids.length], `?rwarm=${i}`));
  const renderUrls = Array.from({ length: RENDERS }, (_, i) => site.url(ids[(i + RENDER_WARMUP) % ids.length], `?r=${i}`));
  const warmRender = RENDER_WARMUP > 0 ? await scrapeAll({ port: scour.port, key, urls: warmRenderUrls, concurrency: RENDER_CONCURRENCY, body: renderBody, check: renderCheck }) : undefined;
  mem.reset();
  const render = await scrapeAll({ port: scour.port, key, urls: renderUrls, concurrency: RENDER_CONCURRENCY, body: renderBody, check: renderCheck });
  if (interrupted) throw new Error('interrupted');
  const peak = mem.window;
  const peakDuringRun = peak.peak;
  console.log(`part 2  render_js ${render.requests} in ${f1(render.wall_s)} s: ${f1(render.per_s)}/s, p50 ${f0(render.p50_ms)} ms, p95 ${f0(render.p95_ms)} ms, ${render.errors} errors, peak ${f0(mib(peakDuringRun))} MiB`);

  // Idle: let the pool close the last contexts, then count until it holds still.
  let idle = serverProcesses(scour.pid, markers, [runDir]).all;
  for (let i = 0, same = 0; i < 20 && same < 3; i++) {
    await sleep(500);
    const now = serverProcesses(scour.pid, markers, [runDir]).all;
    same = now.filter(isChromium).length === idle.filter(isChromium).length ? same + 1 : 0;
    idle = now;
  }
  await sleep(SAMPLE_MS * 5);
  const memFinal = mem.last;
  const memFinalDetail = { rss: mem.last, server: mem.lastServer, pss: mem.lastPss };
  const idleChromium = idle.filter(isChromium);
  for (const p of idleChromium) seenChromium.set(p.pid, p.start);
  const idleKinds = chromiumKinds(idle);
  console.log(`idle    ${idleChromium.length} Chromium processes ${JSON.stringify(idleKinds)}, ${f0(mib(memFinal))} MiB`);

  // SIGTERM: every Chromium process of the server must be gone after it exits.
  clearInterval(sampler);
  const before = serverProcesses(scour.pid, markers, [runDir]).all;
  for (const p of before) if (isChromium(p)) seenChromium.set(p.pid, p.start);
  const stopped = await stopScour(30_000);
  await sleep(1000);
  const leaked = chromiumStillAlive().map((p) => ({ pid: p.pid, cmdline: p.cmdline.slice(0, 300) }));
  console.log(`SIGTERM server exited (code ${stopped.code}, signal ${stopped.signal}${stopped.killed ? ', SIGKILLed after 30 s' : ''}) in ${f0(stopped.ms)} ms; ${leaked.length} Chromium processes left`);

  // ---- Part 3: where a render goes (in-process, legacy and new in the same run) ----
  let phases;
  if (PHASES) {
    if (interrupted) throw new Error('interrupted');
    console.log('part 3  render phases: legacy and new configurations in-process (a few minutes)...');
    phases = await runPhases();
    const n = phases.modes.new;
    const l = phases.modes.legacy;
    console.log(`part 3  small page one at a time: p50 ${f0(l?.latency.p50_ms)} -> ${f0(n?.latency.p50_ms)} ms, p99 ${f0(l?.latency.p99_ms)} -> ${f0(n?.latency.p99_ms)} ms; Zyte at ${RENDER_CONCURRENCY} in flight ${l?.throughput?.per_s.toFixed(2)} -> ${n?.throughput?.per_s.toFixed(2)} renders/s`);
  }

  // ---- Part 4: a render through the API beside the fetcher in process ----
  let latency;
  if (LATENCY) {
    if (interrupted) throw new Error('interrupted');
    console.log('part 4  a tiny page through the API and in process, one at a time...');
    latency = await runLatency();
    for (const m of latency.modes) console.log(`part 4  warm p50, ${m.gap_ms ? `${m.gap_ms} ms apart` : 'back to back'}: API ${f0(m.api.p50_ms)} ms, in process ${f0(m.in_process.p50_ms)} ms (${m.ratio_api_vs_in_process_p50.toFixed(2)}x)${m.api_remote ? `, API with a remote browser ${f0(m.api_remote.p50_ms)} ms` : ''}`);
  }

  const scourErrors = scourStatic.errors + render.errors;
  const met = {
    'no Chromium process leaked': leaked.length === 0 && !stopped.killed,
    '0 errors': scourErrors === 0 && (warmRender?.errors ?? 0) === 0,
  };
  if (phases?.modes.new) {
    const n = phases.modes.new;
    const l = phases.modes.legacy;
    met['render, small loopback page, warm, one at a time: p50 < 250 ms'] = n.latency.p50_ms < 250;
    met['render, small loopback page, warm, one at a time: p99 < 600 ms'] = n.latency.p99_ms < 600;
    if (l?.throughput && n.throughput) met[`render throughput at ${RENDER_CONCURRENCY} in flight (Zyte pages) >= 2x legacy in the same run`] = n.throughput.per_s >= 2 * l.throughput.per_s;
    const grew = n.memory.after.chromium - n.memory.before.chromium;
    met['flat memory: Chromium PSS after the loaded parts within +15% (or +64 MiB) of before'] = grew <= Math.max(64 * 1024 * 1024, 0.15 * n.memory.before.chromium);
    met['0 Chromium processes after stop() (part 3, both configurations)'] = Object.values(phases.modes).every((x) => x.stop?.chromium_left === 0);
  }
  for (const m of latency?.modes ?? []) met[`render, tiny loopback page, warm, one at a time (${m.gap_ms ? `${m.gap_ms} ms apart` : 'back to back'}), through the API: p50 < 250 ms`] = m.api.p50_ms < 250;

  // ---- Report ----
  const avg = (xs, k) => xs.reduce((n, x) => n + x[k], 0) / Math.max(1, xs.length);
  if (interrupted) throw new Error('interrupted');
  const lines = [
    '',
    `## Part 1: static scrape, ${ids.length} pages x ${PASSES} passes, ${CONCURRENCY} in flight${pin ? ' (target on core 0, load generator and site on core 1)' : ''}`,
    '',
    `Scour: POST /v1/scrape with ${Object.keys(STATIC_BODY).join(', ')}; ${STATIC_WARMUP} warm-up requests not counted. Cheerio: Crawlee CheerioCrawler (no retries, storage in memory), requestHandler takes text, absolute links, images, meta tags, JSON-LD.`,
    '',
    '| target | pages | wall s | pages/s | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
    `| Scour /v1/scrape, all extractors | ${scourStatic.requests} | ${scourStatic.wall_s.toFixed(2)} | ${f1(scourStatic.per_s)} | ${f1(scourStatic.p50_ms)} | ${f1(scourStatic.p99_ms)} | ${scourStatic.errors} |`,
    `| Crawlee CheerioCrawler | ${cheerio.pages}/${cheerioUrls.length} | ${(cheerio.wallMs / 1000).toFixed(2)} | ${f1(cheerioPerS)} | n/a | n/a | ${cheerio.failed} |`,
    '',
    `Scour / Cheerio (pages/s): ${ratio.toFixed(2)}x`,
    '',
    `## Part 2: render_js, ${RENDERS} renders at ${RENDER_CONCURRENCY} in flight, SCOUR_BROWSER_PAGES=${BROWSER_PAGES}, after ${RENDER_WARMUP} warm-up renders`,
    '',
    DNS === 'offline'
      ? 'DNS in the server: offline stub (external names fail at once with ENOTFOUND, as without internet; BENCH_DNS=system for the machine resolver).'
      : `DNS in the server: the machine's resolver (UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 'default 4'}, RES_OPTIONS=${process.env.RES_OPTIONS ?? 'unset'}).`,
    '',
    '| renders | wall s | renders/s | p50 ms | p95 ms | max ms | mean load_time s | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${render.requests} | ${render.wall_s.toFixed(2)} | ${render.per_s.toFixed(2)} | ${f0(render.p50_ms)} | ${f0(render.p95_ms)} | ${f0(render.max_ms)} | ${avg(render.samples, 'load').toFixed(2)} | ${render.errors} |`,
    '',
    'load_time: what Scour reports (navigation to rendered DOM, network-idle wait included); latency: request to last byte at the client.',
    '',
    '| memory, MiB | server + Chromium (VmRSS sum) | server alone | Chromium | PSS sum |',
    '|---|---:|---:|---:|---:|',
    `| idle before part 2 | ${f0(mib(memBefore.rss))} | ${f0(mib(memBefore.server))} | ${f0(mib(memBefore.rss - memBefore.server))} | ${f0(mib(memBefore.pss))} |`,
    `| peak during the ${RENDERS} renders | ${f0(mib(peak.peak))} | ${f0(mib(peak.serverPeak))} | ${f0(mib(peak.chromiumPeak))} | ${f0(mib(peak.pssPeak))} |`,
    `| final (idle after the run) | ${f0(mib(memFinalDetail.rss))} | ${f0(mib(memFinalDetail.server))} | ${f0(mib(memFinalDetail.rss - memFinalDetail.server))} | ${f0(mib(memFinalDetail.pss))} |`,
    '',
    `VmRSS summed over the server and all its Chromium processes every ${SAMPLE_MS} ms (shared pages counted once per process, so it overstates); PSS every ${SAMPLE_MS * 4} ms. Peaks of each column are taken separately.`,
    '',
    '| Chromium processes | count | kinds |',
    '|---|---:|---|',
    `| idle before part 2 | ${idleBefore.filter(isChromium).length} | ${JSON.stringify(chromiumKinds(idleBefore))} |`,
    `| idle after the run | ${idleChromium.length} | ${JSON.stringify(idleKinds)} |`,
    `| after SIGTERM (server exited in ${f0(stopped.ms)} ms, code ${stopped.code}) | ${leaked.length} | ${leaked.length ? 'LEAKED' : '-'} |`,
    '',
  ];
  const errorLines = [
    ...[...scourStatic.error_kinds.map((e) => ({ part: 'static', ...e })), ...(warmRender?.error_kinds ?? []).map((e) => ({ part: 'render warm-up', ...e })), ...render.error_kinds.map((e) => ({ part: 'render', ...e }))]
      .map((e) => `error (${e.part}) x${e.count}: ${e.kind} (e.g. ${e.example_url}; ${e.pages.length} distinct page${e.pages.length === 1 ? '' : 's'})`),
    ...(cheerio.failures ?? []).map((f) => `Cheerio failure: ${f}`),
    ...leaked.map((p) => `LEAKED pid ${p.pid}: ${p.cmdline}`),
  ];
  if (phases) {
    lines.push(`## Part 3: where a render goes, browser fetcher in-process, legacy rules and the new defaults in the same run${process.env.BENCH_LEGACY_MODULE ? ` (legacy = ${process.env.BENCH_LEGACY_MODULE})` : ''}`, '', renderPhaseTables(phases));
    for (const [m, x] of Object.entries(phases.modes)) {
      for (const k of ['throughput', 'throughput_small']) for (const e of x[k]?.errors ?? []) errorLines.push(`error (part 3, ${m}, ${k}) x${e.count}: ${e.kind}`);
    }
  }
  if (latency) lines.push('## Part 4: a render through the API beside the browser fetcher in process, same run', '', renderLatencyTable(latency));
  if (errorLines.length) lines.push(...errorLines, '');
  lines.push(...Object.entries(met).map(([k, v]) => `${v ? 'MET ' : 'MISS'}  ${k}`));
  console.log(lines.join('\n'));

  const out = {
    benchmark: 'scrape',
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: nCores,
    pinned: pin,
    settings: {
      pages: ids.length, passes: PASSES, concurrency: CONCURRENCY, static_warmup: STATIC_WARMUP, static_body: STATIC_BODY,
      renders: RENDERS, render_concurrency: RENDER_CONCURRENCY, render_warmup: RENDER_WARMUP, browser_pages: BROWSER_PAGES,
      plan: PLAN, plans_override: PLANS_OVERRIDE,
      dns: DNS === 'offline' ? 'offline stub: external names fail at once (ENOTFOUND)' : { resolver: 'system', UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? null, RES_OPTIONS: process.env.RES_OPTIONS ?? null }, configuration: 'embedded (SQLite, in-process limiter)', target: 'loopback node:http serving the Zyte pages decompressed',
    },
    static: {
      scour: { ...omit(scourStatic, 'samples'), mean_credits: avg(scourStatic.samples, 'credits'), mean_links: avg(scourStatic.samples, 'links') },
      cheerio: { pages: cheerio.pages, requested: cheerioUrls.length, failed: cheerio.failed, wall_s: cheerio.wallMs / 1000, per_s: cheerioPerS, mean_links: cheerio.linkCount / Math.max(1, cheerio.pages), failures: cheerio.failures, wrote_storage: cheerio.wroteStorage || (!storageBefore && storageAfter) },
      ratio_scour_vs_cheerio: ratio,
    },
    render: {
      warmup: warmRender ? omit(warmRender, 'samples') : null,
      measured: { ...omit(render, 'samples'), mean_load_time_s: avg(render.samples, 'load'), mean_credits: avg(render.samples, 'credits') },
      memory: {
        idle_before: memBefore, peak_during_run: { rss: peak.peak, server: peak.serverPeak, chromium: peak.chromiumPeak, pss: peak.pssPeak, processes: peak.processesPeak },
        peak_including_warmup: { rss: mem.overall.peak, server: mem.overall.serverPeak, chromium: mem.overall.chromiumPeak, pss: mem.overall.pssPeak },
        final: memFinalDetail, unit: 'bytes', rss_interval_ms: SAMPLE_MS, pss_interval_ms: SAMPLE_MS * 4, samples: mem.samples,
      },
      chromium: { idle_before: idleBefore.filter(isChromium).length, idle_after: idleChromium.length, idle_after_kinds: idleKinds, after_sigterm: leaked.length, leaked },
      shutdown: { code: stopped.code, signal: stopped.signal, ms: Math.round(stopped.ms), sigkilled: stopped.killed },
    },
    render_phases: phases ?? null,
    render_latency: latency ?? null,
    targets: met,
  };
  mkdirSync(join(root, 'benchmarks/results'), { recursive: true });
  writeFileSync(join(root, 'benchmarks/results/scrape.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log('\nwrote benchmarks/results/scrape.json');
} catch (e) {
  exitCode = interrupted ? 130 : 1;
  if (interrupted) await new Promise(() => {}); // the signal handler cleans up and exits
  console.error(`bench:scrape failed: ${e?.stack ?? e}`);
  if (scour) console.error(`server log (tail):\n${scour.log().slice(-4000)}`);
} finally {
  await cleanup();
}
process.exit(exitCode);

function omit(o, k) {
  const { [k]: _, ...rest } = o;
  return rest;
}
