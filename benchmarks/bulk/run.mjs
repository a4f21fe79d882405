// npm run bench:bulk: POST /v1/scrape/bulk (synchronous mode) on the BUILT
// server (dist/), 100 real pages of the Zyte article benchmark served on
// loopback (../scrape/static-site.mjs), every extractor on; beside Crawlee's
// CheerioCrawler (../scrape/cheerio-baseline.mjs, its own process) over the
// same 100 URLs, in the same run.
//
// BENCH_ROUNDS interleaved rounds (the side that goes first alternates);
// each round uses URLs of its own (a query string), so no cache helps
// either side. Scour: one bulk request, wall time from sending it to the
// last byte of the answer; all 100 items must succeed with every extractor's
// result. Cheerio: a fresh crawler process per round, a warm-up crawl of
// BENCH_CHEERIO_WARMUP URLs, then the 100 URLs: wall time from crawler.run()
// to its end. Memory: peak RSS (VmHWM, reset through /proc/<pid>/clear_refs
// before the Scour request; the crawler's is its lifetime peak) and peak PSS
// sampled every BENCH_SAMPLE_MS (reading smaps often slows the process read).
//
// Then a sweep of concurrent_requests (BENCH_SWEEP, Scour only) to see
// whether a bound other than the server maximum answers sooner.
//
// Target: Scour's median time at most half of Cheerio's (ratio <= 0.5).
// Prints a markdown table and MET/MISS, writes benchmarks/results/bulk.json.
//
// Settings: BENCH_ROUNDS (5), BENCH_URLS (100), BENCH_CONCURRENCY (16),
// BENCH_SWEEP (1,2,4,8,16; empty: none), BENCH_SWEEP_ROUNDS (3),
// BENCH_CHEERIO_WARMUP (32), BENCH_SAMPLE_MS (100), BENCH_PIN (none: every
// process may use every core; split: the process under test on core 0,
// this process and the target site on core 1, as bench:scrape does),
// BENCH_DATA (the benchmark directory holding html/), BENCH_SERVER_ARGS
// (extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"),
// BENCH_SERVER_ROOT (run the server from another build, e.g. a prototype
// made by prototype-pool.mjs; default this checkout), BENCH_OUT (where the
// JSON goes; default benchmarks/results/bulk.json), BENCH_SERVER_LOG=1 (copy
// the server's output here).
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
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
const OUT = env.BENCH_OUT ?? join(root, 'benchmarks/results/bulk.json');
const EXTRACTORS = { extract_links: true, extract_images: true, extract_schema: true, extract_meta: true, main_content: true, markdown: true };
const TARGET_RATIO = 0.5;

if (SWEEP.some((c) => !Number.isInteger(c) || c < 1)) fail(2, 'BENCH_SWEEP: comma-separated integers >= 1');
if (PIN !== 'none' && PIN !== 'split') fail(2, 'BENCH_PIN must be none or split');
if (process.platform !== 'linux') fail(1, 'bench:bulk reads /proc: Linux only');
if (!existsSync(join(SERVER_ROOT, 'dist/adapters/cli/main.js'))) fail(1, 'dist/ is missing: run `npm run build` first (npm run bench:bulk does it)');

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

const owned = { site: undefined, server: undefined, crawler: undefined, dirs: [] };
let finishing;
function teardown() {
  finishing ??= (async () => {
    if (owned.crawler?.exitCode === null) owned.crawler.kill('SIGKILL');
    const srv = owned.server;
    if (srv && srv.exitCode === null && srv.signalCode === null) {
      const gone = new Promise((r) => srv.once('exit', r));
      srv.kill('SIGTERM');
      if (await Promise.race([gone.then(() => true), wait(15_000).then(() => false)]) === false) srv.kill('SIGKILL');
    }
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
async function launchServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'scour-bench-bulk-'));
  owned.dirs.push(dataDir);
  const childEnv = { ...env, HOST: '127.0.0.1', PORT: '0', SCOUR_DATA_DIR: dataDir, SCOUR_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'warn' };
  // Embedded configuration (SQLite, in-process limiter); nothing inherited that would change it.
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'SCOUR_REDIS_PREFIX', 'SCOUR_PLUGINS', 'SCOUR_PROXIES', 'SCOUR_PLANS', 'SCOUR_BOOTSTRAP_KEY', 'NODE_OPTIONS']) delete childEnv[k];
  const child = spawn(process.execPath, [...SERVER_ARGS, 'dist/adapters/cli/main.js', 'serve'], { cwd: SERVER_ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  owned.server = child;
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
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ urls, ...EXTRACTORS, concurrent_requests: concurrency }),
  });
  const headMs = performance.now() - t0;
  // The last byte received ends the time; turning 23 MiB into a string is the client's business.
  const bytes = await res.arrayBuffer();
  const wallMs = performance.now() - t0;
  const cpu1 = cpuTimes(server.pid);
  const mem = stop();
  const hwm = hwmReset ? hwmBytes(server.pid) : undefined;
  const text = new TextDecoder().decode(bytes);
  if (res.status !== 200) throw new Error(`bulk answered ${res.status}: ${text.slice(0, 500)}`);
  const body = JSON.parse(text);
  const problems = body.results.map((it, i) => [i, itemProblem(it)]).filter(([, p]) => p !== undefined);
  return {
    wall_ms: wallMs, first_byte_ms: headMs, processing_time_s: body.processing_time, succeeded: body.succeeded, total: body.total,
    problems: problems.slice(0, 5).map(([i, p]) => `${urls[i]}: ${p}`), response_bytes: bytes.byteLength,
    credits_used: body.credits_used, server_cpu_s: cpu1.all - cpu0.all, server_main_thread_cpu_s: cpu1.main - cpu0.main, peak_rss: hwm ?? mem.rss_sampled, peak_rss_source: hwm ? 'VmHWM' : 'sampled', peak_pss: mem.pss_sampled,
  };
}

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
      resolve({ wall_ms: r.wallMs, pages: r.pages, failed: r.failed, failures: r.failures, mean_links: r.linkCount / Math.max(1, r.pages), peak_rss: hwm || mem.rss_sampled, peak_pss: mem.pss_sampled });
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

  const server = await launchServer();
  serverLog = server.log;
  console.log(`target site ${site.base}: ${ids.length} of ${site.ids.length} pages; Scour pid ${server.pid} at ${server.base} (${server.usage.plan ?? 'plan ?'}, ${server.usage.credits_remaining} credits)`);
  pinTo(server.pid, '0');
  pinTo(process.pid, canPin ? '1' : `0-${cores - 1}`);

  // Warm-up, not counted: one bulk request of the same pages (JIT, parser, connection pools).
  const warm = await scourRound(server, urlsFor('warm=0'), CONCURRENCY);
  if (warm.succeeded !== N_URLS) throw new Error(`warm-up: ${warm.succeeded}/${N_URLS} succeeded: ${warm.problems.join('; ')}`);
  const cheerioWarm = Array.from({ length: CHEERIO_WARMUP }, (_, i) => site.url(site.ids[i % site.ids.length], `?cwarm=${i}`));

  const rounds = [];
  for (let r = 1; r <= ROUNDS; r++) {
    const urls = urlsFor(`round=${r}`);
    const run = { scour: () => scourRound(server, urls, CONCURRENCY), cheerio: () => cheerioRound(urls, cheerioWarm, CONCURRENCY) };
    const order = r % 2 === 1 ? ['scour', 'cheerio'] : ['cheerio', 'scour'];
    const round = { round: r, first: order[0] };
    for (const side of order) round[side] = await run[side]();
    rounds.push(round);
    const s = round.scour;
    const c = round.cheerio;
    console.log(`round ${r}: Scour ${fmt(s.wall_ms)} s (${s.succeeded}/${s.total} ok, peak RSS ${mib(s.peak_rss)} MiB) | Cheerio ${fmt(c.wall_ms)} s (${c.pages}/${N_URLS} ok, peak RSS ${mib(c.peak_rss)} MiB) | ratio ${(s.wall_ms / c.wall_ms).toFixed(2)}`);
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
  const ratio = scour.median_ms / cheerio.median_ms;
  const allOk = rounds.every((r) => r.scour.succeeded === N_URLS && r.scour.problems.length === 0 && r.cheerio.pages === N_URLS);
  const best = sweep.length ? sweep.reduce((a, b) => (b.median_ms < a.median_ms ? b : a)) : undefined;
  const targets = { [`Scour median <= ${TARGET_RATIO} x Cheerio median`]: ratio <= TARGET_RATIO, 'every URL succeeded on both sides': allOk };

  const lines = [
    '',
    `## Bulk scrape: ${N_URLS} pages, ${ROUNDS} interleaved rounds, concurrency ${CONCURRENCY} on both sides${canPin ? ' (target on core 0, this process and the site on core 1)' : `, no pinning (${cores} cores shared)`}`,
    '',
    `Scour: one POST /v1/scrape/bulk with ${Object.keys(EXTRACTORS).join(', ')} (text_content always), send to last byte. Cheerio: Crawlee CheerioCrawler in its own process (no retries, storage in memory) extracting text, absolute links, images, meta, JSON-LD; crawler.run() start to end, after a ${CHEERIO_WARMUP}-URL warm-up crawl.`,
    '',
    '| target | median s | min s | rounds (s) | peak RSS MiB | peak PSS MiB | ok |',
    '|---|---:|---:|---|---:|---:|---:|',
    `| Scour bulk, all extractors | ${fmt(scour.median_ms)} | ${fmt(scour.min_ms)} | ${pick('scour', 'wall_ms').map(fmt).join(', ')} | ${mib(scour.peak_rss_max)} | ${mib(scour.peak_pss_max)} | ${pick('scour', 'succeeded').join(', ')} |`,
    `| Crawlee CheerioCrawler | ${fmt(cheerio.median_ms)} | ${fmt(cheerio.min_ms)} | ${pick('cheerio', 'wall_ms').map(fmt).join(', ')} | ${mib(cheerio.peak_rss_max)} | ${mib(cheerio.peak_pss_max)} | ${pick('cheerio', 'pages').join(', ')} |`,
    '',
    `Scour / Cheerio (median time): ${ratio.toFixed(2)} (target <= ${TARGET_RATIO}).`,
    '',
    `Scour, medians: server processing_time ${fmtS(pick('scour', 'processing_time_s'))} s, first byte at ${fmt(median(pick('scour', 'first_byte_ms')))} s, last byte at ${fmt(scour.median_ms)} s; server CPU ${fmtS(pick('scour', 'server_cpu_s'))} s (main thread ${fmtS(pick('scour', 'server_main_thread_cpu_s'))} s); answer ${(rounds[0].scour.response_bytes / MiB).toFixed(1)} MiB. Peak RSS: VmHWM (Scour's server: reset before each request; Cheerio: the crawler process's lifetime, its warm-up included); PSS sampled every ${SAMPLE_MS} ms.`,
    '',
  ];
  if (sweep.length) {
    lines.push('| concurrent_requests (Scour only) | median s | min s |', '|---:|---:|---:|');
    for (const s of sweep) lines.push(`| ${s.concurrent_requests}${s === best ? ' (fastest)' : ''} | ${fmt(s.median_ms)} | ${fmt(s.min_ms)} |`);
    lines.push('');
  }
  for (const r of rounds) {
    for (const p of r.scour.problems) lines.push(`Scour round ${r.round}: ${p}`);
    for (const f of r.cheerio.failures ?? []) lines.push(`Cheerio round ${r.round}: ${f}`);
  }
  lines.push(...Object.entries(targets).map(([k, v]) => `${v ? 'MET ' : 'MISS'}  ${k}`));
  console.log(lines.join('\n'));

  const result = {
    benchmark: 'bulk',
    date: new Date().toISOString(),
    machine: { node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores, memory_bytes: totalmem(), kernel: readFileSync('/proc/sys/kernel/osrelease', 'latin1').trim() },
    settings: {
      rounds: ROUNDS, urls: N_URLS, pages: ids, concurrency: CONCURRENCY, sweep: SWEEP, sweep_rounds: SWEEP_ROUNDS, cheerio_warmup: CHEERIO_WARMUP,
      sample_ms: SAMPLE_MS, pinning: canPin ? 'target on core 0, bench and site on core 1' : 'none', server_args: SERVER_ARGS, server_root: SERVER_ROOT === root ? 'this checkout' : SERVER_ROOT,
      plan: server.usage.plan ?? 'unicorn (bootstrap key)', body: { ...EXTRACTORS, concurrent_requests: CONCURRENCY },
      configuration: 'embedded (SQLite, in-process limiter), fresh data directory', target: 'loopback node:http serving the Zyte pages decompressed',
    },
    scour, cheerio, ratio_median: ratio, target_ratio: TARGET_RATIO,
    rounds, sweep, fastest_concurrency: best?.concurrent_requests ?? null, warmup: warm, targets, unit: { time: 'ms', memory: 'bytes' },
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
