// npm run bench:bulk: POST /v1/scrape/bulk (synchronous mode) on the BUILT
// server (dist/), 100 real pages of the Zyte article benchmark served on
// loopback (../scrape/static-site.mjs), every extractor on; beside Crawlee's
// CheerioCrawler (../scrape/cheerio-baseline.mjs, its own process) over the
// same 100 URLs, in the same run; and beside the same server with its
// extraction in-process (SCOUR_EXTRACTION_WORKERS=0: what Scour did before
// the extraction pool), also in the same run.
//
// BENCH_ROUNDS interleaved rounds (the side that goes first rotates); each
// round uses URLs of its own (a query string), so no cache helps any side.
// Scour: one bulk request, wall time from sending it to the last byte of the
// answer (streamed: the head and then each result arrive as they are ready,
// read chunk by chunk; the head's and the first chunk's times are reported
// too); all 100 items must succeed with every extractor's result. Cheerio:
// a fresh crawler process per round, a warm-up crawl of BENCH_CHEERIO_WARMUP
// URLs, then the 100 URLs: wall time from crawler.run() to its end. Memory:
// peak RSS (VmHWM, reset through /proc/<pid>/clear_refs before the Scour
// request; the crawler's is its lifetime peak) and peak PSS sampled every
// BENCH_SAMPLE_MS (reading smaps often slows the process read).
//
// Then single scrapes (POST /v1/scrape, every extractor, one at a time) of
// BENCH_SINGLE pages, alternating between the two servers page by page: the
// latency a lone request sees (p50, p90), so the pool is seen not to slow it.
// Then a sweep of concurrent_requests (BENCH_SWEEP, Scour only) to see
// whether a bound other than the server maximum answers sooner.
//
// Target: Scour's median time at most 0.6 of Cheerio's (ratio <= 0.6), and
// single scrapes no slower than in-process. Prints a markdown table and
// MET/MISS, writes benchmarks/results/bulk.json.
//
// Settings: BENCH_ROUNDS (5), BENCH_URLS (100), BENCH_CONCURRENCY (16),
// BENCH_SWEEP (1,2,4,8,16; empty: none), BENCH_SWEEP_ROUNDS (3),
// BENCH_SINGLE (100; 0: none), BENCH_SINGLE_WARMUP (30 single scrapes on
// each server first, not counted), BENCH_BASELINE (inprocess: a second server
// with SCOUR_EXTRACTION_WORKERS=0; buffered: SCOUR_STREAMING=false; build:
// the same settings, from the build BENCH_BASELINE_ROOT names, to compare
// two commits; none: no second server),
// BENCH_BASELINE_ROOT (run the baseline from another build instead, e.g. the
// commit before; default: the same build), BENCH_CHEERIO_WARMUP (32),
// BENCH_SAMPLE_MS (100), BENCH_PIN (none: every process may use every core;
// split: the process under test on core 0, this process and the target site
// on core 1, as bench:scrape does), BENCH_DATA (the benchmark directory
// holding html/), BENCH_SERVER_ARGS (extra node flags for the server, e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/p"), BENCH_SERVER_ROOT (run the server
// from another build; default this checkout), BENCH_SERVER_ENV (extra
// environment for the server under test, e.g. "SCOUR_EXTRACTION_WORKERS=1"),
// BENCH_ACCEPT_ENCODING (the client's Accept-Encoding; default fetch's own,
// gzip and deflate, so the server gzips the answer; "identity": none),
// BENCH_OUT (where the JSON goes; default benchmarks/results/bulk.json),
// BENCH_SERVER_LOG=1 (copy the servers' output here).
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { pssBytes, rssBytes } from '../scrape/procs.mjs';
import { startStaticSite } from '../scrape/static-site.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = process.env;
function setting(name, fallback, min = 0) {
  const v = Number(env[name] ?? fallback);
  if (Number.isInteger(v) && v >= min) return v;
  console.error(`${name} must be an integer >= ${min}`);
  process.exit(2);
}
const ROUNDS = setting('BENCH_ROUNDS', 5, 1);
const N_URLS = setting('BENCH_URLS', 100, 1);
const CONCURRENCY = setting('BENCH_CONCURRENCY', 16, 1);
const SWEEP = (env.BENCH_SWEEP ?? '1,2,4,8,16').split(',').filter((s) => s.trim() !== '').map(Number);
const SWEEP_ROUNDS = setting('BENCH_SWEEP_ROUNDS', 3, 1);
const CHEERIO_WARMUP = setting('BENCH_CHEERIO_WARMUP', 32);
const SAMPLE_MS = setting('BENCH_SAMPLE_MS', 100, 1);
const PIN = env.BENCH_PIN ?? 'none';
const DATA_DIR = env.BENCH_DATA ?? join(root, '..', 'shared', 'data', 'extraction', 'zyte-article-benchmark');
const SERVER_ARGS = (env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean);
const SERVER_ROOT = env.BENCH_SERVER_ROOT ?? root;
const SINGLE = setting('BENCH_SINGLE', 100);
const SINGLE_WARMUP = setting('BENCH_SINGLE_WARMUP', 30);
// What the client accepts: unset, fetch's own (gzip, deflate: the server gzips the 23 MB answer); "identity": no compression.
const ACCEPT_ENCODING = env.BENCH_ACCEPT_ENCODING;
const clientHeaders = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(ACCEPT_ENCODING ? { 'accept-encoding': ACCEPT_ENCODING } : {}) });
const BASELINE = env.BENCH_BASELINE ?? 'inprocess';
const BASELINE_ROOT = env.BENCH_BASELINE_ROOT ?? SERVER_ROOT;
const SERVER_ENV = Object.fromEntries((env.BENCH_SERVER_ENV ?? '').split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const OUT = env.BENCH_OUT ?? join(root, 'benchmarks/results/bulk.json');
const EXTRACTORS = { extract_links: true, extract_images: true, extract_schema: true, extract_meta: true, main_content: true, markdown: true };
const TARGET_RATIO = 0.6;

if (SWEEP.some((c) => !Number.isInteger(c) || c < 1)) fail(2, 'BENCH_SWEEP: comma-separated integers >= 1');
if (PIN !== 'none' && PIN !== 'split') fail(2, 'BENCH_PIN must be none or split');
if (!['inprocess', 'buffered', 'build', 'none'].includes(BASELINE)) fail(2, 'BENCH_BASELINE must be inprocess, buffered, build or none');
if (BASELINE === 'build' && env.BENCH_BASELINE_ROOT === undefined) fail(2, 'BENCH_BASELINE=build needs BENCH_BASELINE_ROOT (a built checkout of the other commit)');
/** The second server: extraction in the main thread, or the answer buffered whole (SCOUR_STREAMING=false, as before streaming). */
const BASELINE_ENV = BASELINE === 'buffered' ? { SCOUR_STREAMING: 'false' } : BASELINE === 'build' ? {} : { SCOUR_EXTRACTION_WORKERS: '0' };
const BASE_LABEL = BASELINE === 'buffered' ? 'buffered' : BASELINE === 'build' ? 'baseline build' : 'in-process';
const BASE_KIND = BASELINE === 'buffered' ? 'SCOUR_STREAMING=false' : BASELINE === 'build' ? 'the same settings' : 'SCOUR_EXTRACTION_WORKERS=0';
if (process.platform !== 'linux') fail(1, 'bench:bulk reads /proc: Linux only');
/** The built CLI entry of a checkout (dist/config/cli.js; a build from before it moved has dist/adapters/cli/main.js). */
const cliEntry = (r) => (existsSync(join(r, 'dist/config/cli.js')) || !existsSync(join(r, 'dist/adapters/cli/main.js')) ? 'dist/config/cli.js' : 'dist/adapters/cli/main.js');
for (const r of new Set([SERVER_ROOT, BASELINE_ROOT])) if (!existsSync(join(r, cliEntry(r)))) fail(1, `${r}/dist is missing: run \`npm run build\` first (npm run bench:bulk does it)`);

function fail(code, message) {
  console.error(message);
  process.exit(code);
}

const wait = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const MiB = 1024 * 1024;
const cores = cpus().length;
const canPin = PIN === 'split' && cores >= 2 && (() => {
  try { execFileSync('taskset', ['-V'], { stdio: 'ignore' }); return true; } catch { return false; }
})();
function pinTo(pid, list) {
  if (!canPin) return;
  try { execFileSync('taskset', ['-a', '-p', '-c', list, String(pid)], { stdio: 'ignore' }); } catch { /* exited */ }
}

/** VmHWM (peak resident set) of a process, in bytes; 0 when gone. */
function hwmBytes(pid) {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch { return 0; }
}
/** Start a new VmHWM window (Linux >= 4.0: writing 5 to clear_refs resets the peak to the current RSS). */
function resetHwm(pid) {
  try { writeFileSync(`/proc/${pid}/clear_refs`, '5'); return true; } catch { return false; }
}

const TICK_S = 1 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100);
/** CPU seconds (user + system) of a process, all threads, and of its main thread alone. */
function cpuTimes(pid) {
  const ofStat = (path) => {
    try {
      const stat = readFileSync(path, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) * TICK_S;
    } catch { return 0; }
  };
  return { all: ofStat(`/proc/${pid}/stat`), main: ofStat(`/proc/${pid}/task/${pid}/stat`) };
}

/** Samples RSS and PSS of one process every SAMPLE_MS until stopped; returns the peaks. */
function watchMemory(pid) {
  const peak = { rss_sampled: 0, pss_sampled: 0, samples: 0 };
  const tick = () => {
    peak.rss_sampled = Math.max(peak.rss_sampled, rssBytes(pid));
    peak.pss_sampled = Math.max(peak.pss_sampled, pssBytes(pid));
    peak.samples++;
  };
  tick();
  const timer = setInterval(tick, SAMPLE_MS);
  return () => {
    clearInterval(timer);
    tick();
    return peak;
  };
}

// ---------------------------------------------------------------------------
// Everything this run starts goes on the way out (also on failure and Ctrl-C).

const owned = { site: undefined, servers: [], crawler: undefined, dirs: [] };
let finishing;
function teardown() {
  finishing ??= (async () => {
    if (owned.crawler?.exitCode === null) owned.crawler.kill('SIGKILL');
    await Promise.all(owned.servers.map(async (srv) => {
      if (srv.exitCode !== null || srv.signalCode !== null) return;
      const gone = new Promise((r) => srv.once('exit', r));
      srv.kill('SIGTERM');
      if (await Promise.race([gone.then(() => true), wait(15_000).then(() => false)]) === false) srv.kill('SIGKILL');
    }));
    await owned.site?.close().catch(() => undefined);
    for (const d of owned.dirs) rmSync(d, { recursive: true, force: true });
  })();
  return finishing;
}
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { teardown().finally(() => process.exit(130)); });

/**
 * The built server on a free port, with a fresh data directory: its first
 * start creates the development account (Unicorn plan) and prints the key.
 */
async function launchServer(serverRoot, extraEnv) {
  const dataDir = mkdtempSync(join(tmpdir(), 'scour-bench-bulk-'));
  owned.dirs.push(dataDir);
  const childEnv = { ...env, HOST: '127.0.0.1', PORT: '0', SCOUR_DATA_DIR: dataDir, SCOUR_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'warn', SCOUR_SEARCH_PROVIDERS: 'local' };
  // Embedded configuration (SQLite, in-process limiter); nothing inherited that would change it.
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'SCOUR_REDIS_PREFIX', 'SCOUR_PLUGINS', 'SCOUR_PROXIES', 'SCOUR_PLANS', 'SCOUR_BOOTSTRAP_KEY', 'NODE_OPTIONS', 'SCOUR_EXTRACTION_WORKERS', 'SCOUR_STREAMING']) delete childEnv[k];
  Object.assign(childEnv, extraEnv);
  const child = spawn(process.execPath, [...SERVER_ARGS, cliEntry(serverRoot), 'serve'], { cwd: serverRoot, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  owned.servers.push(child);
  let out = '';
  for (const s of [child.stdout, child.stderr]) {
    s.on('data', (d) => {
      out = (out + d).slice(-50_000);
      if (env.BENCH_SERVER_LOG === '1') process.stderr.write(d);
    });
  }
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${out}`);
    const key = /\b(sk_[A-Za-z0-9_-]+)/.exec(out)?.[1];
    const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    if (key && base) {
      const r = await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined);
      if (r?.status === 200) {
        const usage = await r.json();
        return { pid: child.pid, base, key, usage, log: () => out };
      }
    }
    await wait(100);
  }
  throw new Error(`server did not come up with a key within 60 s:\n${out}`);
}

/** What every item of a bulk answer must carry with every extractor on. */
function itemProblem(item) {
  if (!item.success) return `failed: ${JSON.stringify(item.error).slice(0, 200)}`;
  const r = item.result;
  if (typeof r.content !== 'string' || r.content.length === 0) return 'no content';
  for (const k of ['links', 'images', 'schema_data']) if (!Array.isArray(r[k])) return `no ${k}`;
  if (r.meta_data === undefined || typeof r.main_content !== 'string' || typeof r.markdown !== 'string') return 'no meta_data/main_content/markdown';
  if (r.extractor_errors !== undefined) return `extractor_errors ${JSON.stringify(r.extractor_errors).slice(0, 200)}`;
  return undefined;
}

/** One bulk request: wall time from send to the last byte, the server's peak memory meanwhile. */
async function scourRound(server, urls, concurrency) {
  const hwmReset = resetHwm(server.pid);
  const stop = watchMemory(server.pid);
  const cpu0 = cpuTimes(server.pid);
  const t0 = performance.now();
  const res = await fetch(`${server.base}/v1/scrape/bulk`, {
    method: 'POST',
    headers: clientHeaders(server.key),
    body: JSON.stringify({ urls, ...EXTRACTORS, concurrent_requests: concurrency }),
  });
  const headMs = performance.now() - t0;
  // The answer is streamed (chunked): the head leaves once the request is admitted, then each result as it is
  // done. Read it chunk by chunk: the first chunk's time is when results start to arrive; the last byte
  // received ends the time. Turning 23 MiB into a string is the client's business.
  const parts = [];
  let size = 0;
  let firstChunkMs;
  for await (const chunk of res.body) {
    firstChunkMs ??= performance.now() - t0;
    parts.push(chunk);
    size += chunk.byteLength;
  }
  const wallMs = performance.now() - t0;
  const bytes = Buffer.concat(parts, size);
  const cpu1 = cpuTimes(server.pid);
  const mem = stop();
  const hwm = hwmReset ? hwmBytes(server.pid) : undefined;
  const text = new TextDecoder().decode(bytes);
  if (res.status !== 200) throw new Error(`bulk answered ${res.status}: ${text.slice(0, 500)}`);
  const body = JSON.parse(text);
  const problems = body.results.map((it, i) => [i, itemProblem(it)]).filter(([, p]) => p !== undefined);
  return {
    wall_ms: wallMs, first_byte_ms: headMs, first_chunk_ms: firstChunkMs ?? wallMs, streamed: res.headers.get('transfer-encoding') === 'chunked', processing_time_s: body.processing_time, succeeded: body.succeeded, total: body.total,
    problems: problems.slice(0, 5).map(([i, p]) => `${urls[i]}: ${p}`), response_bytes: bytes.byteLength,
    credits_used: body.credits_used, server_cpu_s: cpu1.all - cpu0.all, server_main_thread_cpu_s: cpu1.main - cpu0.main, peak_rss: hwm ?? mem.rss_sampled, peak_rss_source: hwm ? 'VmHWM' : 'sampled', peak_pss: mem.pss_sampled,
  };
}

/** One single scrape with every extractor: wall time from send to last byte. */
async function singleScrape(server, url) {
  const t0 = performance.now();
  const res = await fetch(`${server.base}/v1/scrape`, {
    method: 'POST',
    headers: clientHeaders(server.key),
    body: JSON.stringify({ url, ...EXTRACTORS }),
  });
  const body = await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}: ${new TextDecoder().decode(body).slice(0, 300)}`);
  return ms;
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** A fresh CheerioCrawler process: warm-up crawl, then the measured crawl of `urls`. */
function cheerioRound(urls, warmUrls, concurrency) {
  const dir = mkdtempSync(join(tmpdir(), 'scour-bench-bulk-crawlee-'));
  owned.dirs.push(dir);
  const storage = join(dir, 'storage');
  const child = fork(join(root, 'benchmarks/scrape/cheerio-baseline.mjs'), [], {
    cwd: dir,
    env: { ...env, CRAWLEE_STORAGE_DIR: storage, CRAWLEE_PERSIST_STORAGE: 'false', CRAWLEE_LOG_LEVEL: 'OFF', CRAWLEE_PURGE_ON_START: 'true' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  owned.crawler = child;
  pinTo(child.pid, '0');
  let out = '';
  for (const s of [child.stdout, child.stderr]) s.on('data', (d) => { out = (out + d).slice(-20_000); });
  const stop = watchMemory(child.pid);
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => {
      stop();
      rmSync(dir, { recursive: true, force: true });
      if (signal !== 'SIGKILL') reject(new Error(`crawler exited (${code ?? signal}) without an answer:\n${out}`));
    });
    child.once('message', (m) => {
      const mem = stop();
      const hwm = hwmBytes(child.pid);
      child.kill('SIGKILL');
      if (!m.ok) return reject(new Error(`crawler failed: ${m.error}\n${out}`));
      const r = m.result;
      resolve({ wall_ms: r.wallMs, cpu_s: r.cpuS, pages: r.pages, failed: r.failed, failures: r.failures, mean_links: r.linkCount / Math.max(1, r.pages), peak_rss: hwm || mem.rss_sampled, peak_pss: mem.pss_sampled });
    });
    child.send({ urls, warmUrls, concurrency });
  });
}

const fmt = (ms) => (ms / 1000).toFixed(3);
const fmtS = (xs) => median(xs).toFixed(2);
const mib = (b) => (b / MiB).toFixed(0);

let status = 0;
let serverLog;
try {
  const site = await startStaticSite(join(DATA_DIR, 'html'));
  owned.site = site;
  const ids = site.ids.slice(0, N_URLS);
  if (ids.length < N_URLS) throw new Error(`only ${ids.length} pages in ${DATA_DIR}/html, ${N_URLS} asked for`);
  const urlsFor = (tag) => ids.map((id) => site.url(id, `?${tag}`));

  const server = await launchServer(SERVER_ROOT, SERVER_ENV);
  const baseline = BASELINE === 'none' ? undefined : await launchServer(BASELINE_ROOT, BASELINE_ENV);
  serverLog = () => `${server.log()}${baseline ? `\n--- baseline ---\n${baseline.log()}` : ''}`;
  console.log(`target site ${site.base}: ${ids.length} of ${site.ids.length} pages; Scour pid ${server.pid} at ${server.base} (${server.usage.plan ?? 'plan ?'}, ${server.usage.credits_remaining} credits)${baseline ? `; ${BASE_LABEL} baseline pid ${baseline.pid} at ${baseline.base}` : ''}`);
  for (const s of [server, baseline]) if (s) pinTo(s.pid, '0');
  pinTo(process.pid, canPin ? '1' : `0-${cores - 1}`);

  // Warm-up, not counted: one bulk request of the same pages on each server (JIT, parser, connection pools, worker start).
  for (const [name, s] of [['Scour', server], ['baseline', baseline]]) {
    if (!s) continue;
    const warm = await scourRound(s, urlsFor(`warm=${name}`), CONCURRENCY);
    if (warm.succeeded !== N_URLS) throw new Error(`${name} warm-up: ${warm.succeeded}/${N_URLS} succeeded: ${warm.problems.join('; ')}`);
  }
  const cheerioWarm = Array.from({ length: CHEERIO_WARMUP }, (_, i) => site.url(site.ids[i % site.ids.length], `?cwarm=${i}`));

  const sides = baseline ? ['scour', 'baseline', 'cheerio'] : ['scour', 'cheerio'];
  const rounds = [];
  for (let r = 1; r <= ROUNDS; r++) {
    const urls = urlsFor(`round=${r}`);
    const run = {
      scour: () => scourRound(server, urls, CONCURRENCY),
      baseline: () => scourRound(baseline, urlsFor(`round=${r}b`), CONCURRENCY),
      cheerio: () => cheerioRound(urls, cheerioWarm, CONCURRENCY),
    };
    const order = sides.map((_, k) => sides[(k + r - 1) % sides.length]);
    const round = { round: r, order };
    for (const side of order) round[side] = await run[side]();
    rounds.push(round);
    const s = round.scour;
    const c = round.cheerio;
    const b = round.baseline;
    console.log(`round ${r}: Scour ${fmt(s.wall_ms)} s (${s.succeeded}/${s.total} ok, peak RSS ${mib(s.peak_rss)} MiB)${b ? ` | ${BASE_LABEL} ${fmt(b.wall_ms)} s (${b.succeeded}/${b.total} ok)` : ''} | Cheerio ${fmt(c.wall_ms)} s (${c.pages}/${N_URLS} ok, peak RSS ${mib(c.peak_rss)} MiB) | ratio ${(s.wall_ms / c.wall_ms).toFixed(2)}${b ? ` (${BASE_LABEL} ${(b.wall_ms / c.wall_ms).toFixed(2)})` : ''}`);
  }

  // Single scrapes, one at a time, alternating servers page by page, after SINGLE_WARMUP uncounted ones each:
  // with the pool, bulk pages were extracted in the workers, so the server's main thread meets the extractors
  // with the first lone pages (not yet compiled by the JIT); the in-process server extracted all of the bulk.
  const single = { scour: [], baseline: [] };
  if (SINGLE > 0) {
    for (let w = 0; w < Math.max(1, SINGLE_WARMUP); w++) {
      for (const [name, s] of [['scour', server], ['baseline', baseline]]) if (s) await singleScrape(s, site.url(ids[(w + 50) % ids.length], `?single-warm=${w}-${name}`));
    }
    for (let k = 0; k < SINGLE; k++) {
      const id = ids[k % ids.length];
      const pair = (k % 2 ? [['baseline', baseline], ['scour', server]] : [['scour', server], ['baseline', baseline]]).filter(([, s]) => s);
      for (const [name, s] of pair) single[name].push(await singleScrape(s, site.url(id, `?single=${k}-${name}`)));
    }
    const line = (name, xs) => `${name}: p50 ${quantile(xs, 0.5).toFixed(1)} ms, p90 ${quantile(xs, 0.9).toFixed(1)} ms`;
    console.log(`single scrapes (${SINGLE}, every extractor): ${line('Scour', single.scour)}${baseline ? `; ${line(BASE_LABEL, single.baseline)}` : ''}`);
  }

  const sweep = [];
  for (const c of SWEEP) {
    const times = [];
    for (let k = 1; k <= SWEEP_ROUNDS; k++) {
      const s = await scourRound(server, urlsFor(`sweep=${c}-${k}`), c);
      if (s.succeeded !== N_URLS) throw new Error(`sweep ${c}: ${s.succeeded}/${N_URLS} succeeded: ${s.problems.join('; ')}`);
      times.push(s.wall_ms);
    }
    sweep.push({ concurrent_requests: c, median_ms: median(times), min_ms: Math.min(...times), runs_ms: times });
    console.log(`sweep concurrent_requests=${c}: median ${fmt(median(times))} s, min ${fmt(Math.min(...times))} s`);
  }

  const pick = (side, k) => rounds.map((r) => r[side][k]);
  const summary = (side) => ({
    median_ms: median(pick(side, 'wall_ms')), min_ms: Math.min(...pick(side, 'wall_ms')),
    peak_rss_max: Math.max(...pick(side, 'peak_rss')), peak_pss_max: Math.max(...pick(side, 'peak_pss')),
  });
  const scour = summary('scour');
  const cheerio = summary('cheerio');
  const inprocess = baseline ? summary('baseline') : undefined;
  const ratio = scour.median_ms / cheerio.median_ms;
  const ratioInprocess = inprocess ? inprocess.median_ms / cheerio.median_ms : undefined;
  const singleP50 = SINGLE > 0 ? quantile(single.scour, 0.5) : undefined;
  const singleBaseP50 = SINGLE > 0 && baseline ? quantile(single.baseline, 0.5) : undefined;
  const allOk = rounds.every((r) => r.scour.succeeded === N_URLS && r.scour.problems.length === 0 && r.cheerio.pages === N_URLS && (!r.baseline || r.baseline.succeeded === N_URLS));
  const best = sweep.length ? sweep.reduce((a, b) => (b.median_ms < a.median_ms ? b : a)) : undefined;
  const targets = { [`Scour median <= ${TARGET_RATIO} x Cheerio median`]: ratio <= TARGET_RATIO, 'every URL succeeded on every side': allOk };
  // "Not worse": within 5% (or 1 ms) of in-process, the noise of one run on a shared machine.
  if (singleBaseP50 !== undefined) targets[`single scrape p50 not worse than ${BASE_LABEL} (within 5%)`] = singleP50 <= Math.max(singleBaseP50 * 1.05, singleBaseP50 + 1);

  const row = (name, x, side, okKey) => `| ${name} | ${fmt(x.median_ms)} | ${fmt(x.min_ms)} | ${pick(side, 'wall_ms').map(fmt).join(', ')} | ${mib(x.peak_rss_max)} | ${mib(x.peak_pss_max)} | ${pick(side, okKey).join(', ')} |`;
  const lines = [
    '',
    `## Bulk scrape: ${N_URLS} pages, ${ROUNDS} interleaved rounds, concurrency ${CONCURRENCY} on every side${canPin ? ' (target on core 0, this process and the site on core 1)' : `, no pinning (${cores} cores shared)`}`,
    '',
    `Scour: one POST /v1/scrape/bulk with ${Object.keys(EXTRACTORS).join(', ')} (text_content always), send to last byte, Accept-Encoding ${ACCEPT_ENCODING ?? 'gzip, deflate (fetch\'s default)'}${SERVER_ENV && Object.keys(SERVER_ENV).length ? ` (server env ${JSON.stringify(SERVER_ENV)})` : ''}; ${BASE_LABEL}: ${BASELINE === 'build' ? `the build at ${BASELINE_ROOT} with` : 'the same build with'} ${BASE_KIND}. Cheerio: Crawlee CheerioCrawler in its own process (no retries, storage in memory) extracting text, absolute links, images, meta, JSON-LD; crawler.run() start to end, after a ${CHEERIO_WARMUP}-URL warm-up crawl.`,
    '',
    '| target | median s | min s | rounds (s) | peak RSS MiB | peak PSS MiB | ok |',
    '|---|---:|---:|---|---:|---:|---:|',
    row('Scour bulk, all extractors (extraction pool)', scour, 'scour', 'succeeded'),
    ...(inprocess ? [row(BASELINE === 'buffered' ? 'Scour bulk, answer buffered whole (before streaming)' : BASELINE === 'build' ? 'Scour bulk, all extractors, baseline build (BENCH_BASELINE_ROOT)' : 'Scour bulk, extraction in-process (before)', inprocess, 'baseline', 'succeeded')] : []),
    row('Crawlee CheerioCrawler', cheerio, 'cheerio', 'pages'),
    '',
    `Scour / Cheerio (median time): ${ratio.toFixed(2)} (target <= ${TARGET_RATIO})${ratioInprocess !== undefined ? `; ${BASE_LABEL} / Cheerio: ${ratioInprocess.toFixed(2)}; Scour / ${BASE_LABEL}: ${(scour.median_ms / inprocess.median_ms).toFixed(2)}` : ''}.`,
    '',
    `Scour, medians: server processing_time ${fmtS(pick('scour', 'processing_time_s'))} s, head at ${fmt(median(pick('scour', 'first_byte_ms')))} s, first body chunk at ${fmt(median(pick('scour', 'first_chunk_ms')))} s (${rounds[0].scour.streamed ? 'streamed' : 'not streamed'}), last byte at ${fmt(scour.median_ms)} s; server CPU ${fmtS(pick('scour', 'server_cpu_s'))} s (main thread ${fmtS(pick('scour', 'server_main_thread_cpu_s'))} s); answer ${(rounds[0].scour.response_bytes / MiB).toFixed(1)} MiB.${inprocess ? ` ${BASE_LABEL}: processing_time ${fmtS(pick('baseline', 'processing_time_s'))} s, server CPU ${fmtS(pick('baseline', 'server_cpu_s'))} s (main thread ${fmtS(pick('baseline', 'server_main_thread_cpu_s'))} s).` : ''} Peak RSS: VmHWM (Scour's servers: reset before each request, worker threads included; Cheerio: the crawler process's lifetime, its warm-up included); PSS sampled every ${SAMPLE_MS} ms.`,
    '',
  ];
  // The CPU floor: the least wall time the server's CPU allows on this machine's cores, were it perfectly parallel.
  const scourCpu = median(pick('scour', 'server_cpu_s'));
  const cheerioCpu = median(pick('cheerio', 'cpu_s'));
  const floorRatio = (scourCpu / cores) / (cheerio.median_ms / 1000);
  lines.push(`CPU: Scour's server ${scourCpu.toFixed(2)} s, Cheerio's crawler ${cheerioCpu.toFixed(2)} s for the ${N_URLS} pages (medians). On ${cores} cores Scour's CPU alone needs at least ${(scourCpu / cores).toFixed(2)} s of wall time, ${floorRatio.toFixed(2)} x Cheerio's median time (the CPU floor of the ratio).`, '');
  if (SINGLE > 0) {
    lines.push(`Single scrapes (POST /v1/scrape, every extractor, one at a time, ${SINGLE} pages alternating servers, after ${SINGLE_WARMUP} uncounted on each): Scour p50 ${singleP50.toFixed(1)} ms, p90 ${quantile(single.scour, 0.9).toFixed(1)} ms${singleBaseP50 !== undefined ? `; ${BASE_LABEL} p50 ${singleBaseP50.toFixed(1)} ms, p90 ${quantile(single.baseline, 0.9).toFixed(1)} ms` : ''}.`, '');
  }
  if (sweep.length) {
    lines.push('| concurrent_requests (Scour only) | median s | min s |', '|---:|---:|---:|');
    for (const s of sweep) lines.push(`| ${s.concurrent_requests}${s === best ? ' (fastest)' : ''} | ${fmt(s.median_ms)} | ${fmt(s.min_ms)} |`);
    lines.push('');
  }
  for (const r of rounds) {
    for (const p of r.scour.problems) lines.push(`Scour round ${r.round}: ${p}`);
    for (const p of r.baseline?.problems ?? []) lines.push(`${BASE_LABEL} round ${r.round}: ${p}`);
    for (const f of r.cheerio.failures ?? []) lines.push(`Cheerio round ${r.round}: ${f}`);
  }
  lines.push(...Object.entries(targets).map(([k, v]) => `${v ? 'MET ' : 'MISS'}  ${k}`));
  console.log(lines.join('\n'));

  const result = {
    benchmark: 'bulk',
    date: new Date().toISOString(),
    machine: { node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores, memory_bytes: totalmem(), kernel: readFileSync('/proc/sys/kernel/osrelease', 'latin1').trim(), loadavg_at_end: loadavg() },
    settings: {
      rounds: ROUNDS, urls: N_URLS, pages: ids, concurrency: CONCURRENCY, sweep: SWEEP, sweep_rounds: SWEEP_ROUNDS, cheerio_warmup: CHEERIO_WARMUP, single: SINGLE, single_warmup: SINGLE_WARMUP,
      accept_encoding: ACCEPT_ENCODING ?? 'fetch default (gzip, deflate)', sample_ms: SAMPLE_MS, pinning: canPin ? 'target on core 0, bench and site on core 1' : 'none', server_args: SERVER_ARGS, server_env: SERVER_ENV, server_root: SERVER_ROOT === root ? 'this checkout' : SERVER_ROOT,
      baseline: baseline ? { kind: BASE_KIND, root: BASELINE_ROOT === root ? 'this checkout' : BASELINE_ROOT } : null,
      plan: server.usage.plan ?? 'unicorn (bootstrap key)', body: { ...EXTRACTORS, concurrent_requests: CONCURRENCY },
      configuration: 'embedded (SQLite, in-process limiter), fresh data directory', target: 'loopback node:http serving the Zyte pages decompressed',
    },
    scour, inprocess: inprocess ?? null, cheerio, cpu: { scour_server_s: scourCpu, cheerio_crawler_s: cheerioCpu, cores, floor_ratio: floorRatio }, ratio_median: ratio, ratio_inprocess_median: ratioInprocess ?? null, target_ratio: TARGET_RATIO,
    single: SINGLE > 0 ? { scour_ms: single.scour, inprocess_ms: single.baseline, scour_p50_ms: singleP50, inprocess_p50_ms: singleBaseP50 ?? null } : null,
    rounds, sweep, fastest_concurrency: best?.concurrent_requests ?? null, targets, unit: { time: 'ms', memory: 'bytes' },
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwrote ${relative(process.cwd(), OUT) || OUT}`);
} catch (e) {
  status = 1;
  console.error(`bench:bulk failed: ${e?.stack ?? e}`);
  if (serverLog) console.error(`server output (tail):\n${serverLog().slice(-4000)}`);
} finally {
  await teardown();
}
process.exit(status);
