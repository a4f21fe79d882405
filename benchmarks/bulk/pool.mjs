// node benchmarks/bulk/pool.mjs (after `npm run build`): the extraction pool
// alone (adapters/extraction-pool), on the BUILT code (dist/), over the Zyte
// pages bench:bulk scrapes, with every extractor bench:bulk asks for, every
// page sent to a worker (no adaptive routing). What it measures, each beside
// its in-process baseline from the same run:
//
// - start-up: time from new pool to every worker ready (a thread, and the
//   extractors imported), and the RSS a worker adds (idle, and after
//   extracting the pages twice: its heap grown);
// - throughput: 100 pages with up to BENCH_CONCURRENCY in flight, for 0
//   (in-process), 1 and 2 workers..., wall time, the main thread's busy
//   time (event-loop utilization), the worker threads' CPU and the other
//   threads' (V8's GC helpers, libuv) from /proc/self/task;
// - the result encodings (structured clone, msgpackr, JSON): the main
//   thread's CPU per 100 pages with each;
// - the in-process threshold: for pages cut to sizes from 1 KiB to 64 KiB,
//   one page at a time, the main thread's CPU and the latency in-process
//   and through a worker.
//
// Settings: BENCH_SERVER_ROOT (the build to load; default this checkout),
// BENCH_DATA, BENCH_URLS (100), BENCH_ROUNDS (5), BENCH_CONCURRENCY (16),
// BENCH_WORKERS (0,1,2: comma-separated), BENCH_POOL_OPTIONS (JSON merged
// into the pool's options, e.g. {"youngGenMb":16}), BENCH_SKIP (comma-separated
// parts to leave out: startup, throughput, encodings, threshold), BENCH_OUT (default
// benchmarks/results/extraction-pool.json).
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = process.env;
const SERVER_ROOT = env.BENCH_SERVER_ROOT ?? root;
const DATA_DIR = env.BENCH_DATA ?? join(root, '..', 'shared', 'data', 'extraction', 'zyte-article-benchmark');
const N = Number(env.BENCH_URLS ?? 100);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY ?? 16);
const WORKERS = (env.BENCH_WORKERS ?? '0,1,2').split(',').map(Number);
const OUT = env.BENCH_OUT ?? join(root, 'benchmarks/results/extraction-pool.json');
const SKIP = new Set((env.BENCH_SKIP ?? '').split(',').map((x) => x.trim()).filter(Boolean));
const IDS = ['text_content', 'links', 'images', 'schema_data', 'meta_data', 'main_content', 'markdown'];

const dist = (p) => pathToFileURL(join(SERVER_ROOT, 'dist', p)).href;
const { ExtractionPool } = await import(dist('adapters/extraction-pool/pool.js'));
const extractors = await import(dist('plugins/extractors/index.js'));
const { Effect } = await import('effect');

const files = readdirSync(join(DATA_DIR, 'html')).filter((f) => f.endsWith('.html.gz')).sort().slice(0, N);
const pages = files.map((f) => {
  const html = gunzipSync(readFileSync(join(DATA_DIR, 'html', f))).toString('utf8');
  const url = `http://127.0.0.1/${f.replace('.html.gz', '')}`;
  return { url, finalUrl: url, statusCode: 200, contentType: 'text/html; charset=utf-8', html };
});

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
/** The main thread's busy time (event-loop utilization's active time: high resolution, unlike /proc's 10 ms ticks). */
const mainCpuMs = () => performance.eventLoopUtilization().active;
function rssBytes() {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'latin1'));
  return Number(m[1]) * 1024;
}

const POOL_OPTS = JSON.parse(env.BENCH_POOL_OPTIONS ?? '{}');
const newPool = (workers, extra = {}) => new ExtractionPool({
  // adaptive: false: every page goes to a worker, so the figures are the workers' (the server routes lone and small pages in-process).
  workers, timeoutMs: 60_000, inlineBelow: 0, adaptive: false, module: new URL(dist('plugins/extractors/index.js')),
  local: { parse: extractors.parsePage, extractors: extractors.builtinExtractors }, ...POOL_OPTS, ...extra,
});
const run = (pool, page) => Effect.runPromise(pool.extract({ page, ids: IDS, options: {} }));

/** CPU ms of every thread of this process, by name (/proc/self/task/<tid>/stat; 10 ms ticks). */
function threadCpu() {
  const out = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[`${name}#${tid}`] = (Number(f[11]) + Number(f[12])) * 10;
    } catch { /* gone */ }
  }
  return out;
}
/** CPU ms per kind of thread between two threadCpu() readings: workers are the pool's threads (by thread id). */
function cpuByKind(a, b, workerTids) {
  const kinds = { main: 0, workers: 0, other: 0 };
  for (const [k, v] of Object.entries(b)) {
    const tid = Number(k.slice(k.lastIndexOf('#') + 1));
    const d = v - (a[k] ?? 0);
    if (tid === process.pid) kinds.main += d;
    else if (workerTids.has(tid)) kinds.workers += d;
    else kinds.other += d;
  }
  return kinds;
}
/** The OS thread ids of worker threads: the threads that appeared since `before`. */
const newTids = (before) => new Set(Object.keys(threadCpu()).filter((k) => !(k in before)).map((k) => Number(k.slice(k.lastIndexOf('#') + 1))));

/** All pages, at most CONCURRENCY in flight: wall ms and this thread's CPU ms. */
async function throughput(pool) {
  const c0 = mainCpuMs();
  const p0 = cpuMs();
  const k0 = threadCpu();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < pages.length) await run(pool, pages[next++]);
  }));
  const wall = performance.now() - t0;
  return { wall_ms: wall, main_cpu_ms: mainCpuMs() - c0, process_cpu_ms: cpuMs() - p0, threads_cpu_ms: cpuByKind(k0, threadCpu(), pool.workerTids ?? new Set()) };
}

const result = { benchmark: 'extraction-pool', date: new Date().toISOString(), machine: { node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, available_parallelism: availableParallelism() }, pages: pages.length, ids: IDS };

// Start-up cost and memory per worker.
if (!SKIP.has('startup')) {
  global.gc?.();
  const rss0 = rssBytes();
  const pool = newPool(1);
  const t0 = performance.now();
  await pool.start();
  const startMs = performance.now() - t0;
  const rssIdle = rssBytes() - rss0;
  for (let k = 0; k < 2; k++) for (const p of pages) await run(pool, p);
  const rssBusy = rssBytes() - rss0;
  await pool.close();
  result.startup = { first_worker_ready_ms: startMs, rss_idle_worker_bytes: rssIdle, rss_worker_after_pages_bytes: rssBusy };
  const pool2 = newPool(2);
  const t1 = performance.now();
  await pool2.start();
  result.startup.two_workers_ready_ms = performance.now() - t1;
  await pool2.close();
  console.log(`start-up: one worker ready in ${startMs.toFixed(0)} ms (two: ${result.startup.two_workers_ready_ms.toFixed(0)} ms); RSS per worker ${(rssIdle / 2 ** 20).toFixed(0)} MiB idle, ${(rssBusy / 2 ** 20).toFixed(0)} MiB after ${pages.length * 2} pages`);
}

// Throughput by worker count, interleaved rounds.
if (!SKIP.has('throughput')) {
  const pools = new Map(WORKERS.map((w) => [w, newPool(w)]));
  for (const p of pools.values()) {
    const before = threadCpu();
    await p.start();
    p.workerTids = newTids(before);
    await throughput(p);
  }
  const rows = new Map(WORKERS.map((w) => [w, []]));
  for (let r = 0; r < ROUNDS; r++) for (const w of (r % 2 ? [...WORKERS].reverse() : WORKERS)) rows.get(w).push(await throughput(pools.get(w)));
  for (const p of pools.values()) await p.close();
  const med = (w, f) => median(rows.get(w).map(f));
  result.throughput = WORKERS.map((w) => ({
    workers: w, wall_ms: med(w, (x) => x.wall_ms), main_cpu_ms: med(w, (x) => x.main_cpu_ms), process_cpu_ms: med(w, (x) => x.process_cpu_ms),
    worker_threads_cpu_ms: med(w, (x) => x.threads_cpu_ms.workers), other_threads_cpu_ms: med(w, (x) => x.threads_cpu_ms.other), rounds: rows.get(w),
  }));
  console.log(`\n| workers | wall ms (median of ${ROUNDS}) | main thread busy ms | worker threads CPU ms | other threads CPU ms | process CPU ms |\n|---:|---:|---:|---:|---:|---:|`);
  for (const t of result.throughput) console.log(`| ${t.workers}${t.workers === 0 ? ' (in-process)' : ''} | ${t.wall_ms.toFixed(0)} | ${t.main_cpu_ms.toFixed(0)} | ${t.worker_threads_cpu_ms.toFixed(0)} | ${t.other_threads_cpu_ms.toFixed(0)} | ${t.process_cpu_ms.toFixed(0)} |`);
}

// Result encodings: main-thread CPU to take 100 results back.
if (!SKIP.has('encodings')) {
  const encodings = ['clone', 'msgpack', 'json'];
  const pools = new Map(encodings.map((e) => [e, newPool(Math.max(1, Math.min(2, availableParallelism())), { encoding: e })]));
  for (const p of pools.values()) { await p.start(); await throughput(p); }
  const rows = new Map(encodings.map((e) => [e, []]));
  for (let r = 0; r < ROUNDS; r++) for (const e of (r % 2 ? [...encodings].reverse() : encodings)) rows.get(e).push(await throughput(pools.get(e)));
  for (const p of pools.values()) await p.close();
  result.encodings = encodings.map((e) => ({ encoding: e, wall_ms: median(rows.get(e).map((x) => x.wall_ms)), main_cpu_ms: median(rows.get(e).map((x) => x.main_cpu_ms)), process_cpu_ms: median(rows.get(e).map((x) => x.process_cpu_ms)) }));
  console.log(`\n| result encoding | wall ms | main thread CPU ms | process CPU ms |\n|---|---:|---:|---:|`);
  for (const t of result.encodings) console.log(`| ${t.encoding} | ${t.wall_ms.toFixed(0)} | ${t.main_cpu_ms.toFixed(0)} | ${t.process_cpu_ms.toFixed(0)} |`);
}

// Threshold: one page at a time, cut to a size; in-process vs one worker.
if (!SKIP.has('threshold')) {
  const sizes = [1, 2, 4, 8, 16, 32, 64].map((k) => k * 1024);
  const inproc = newPool(0);
  const pooled = newPool(1);
  await pooled.start();
  const source = pages.slice().sort((a, b) => b.html.length - a.html.length).slice(0, 20);
  result.threshold = [];
  console.log(`\n| page size | in-process: latency ms, main CPU ms | worker: latency ms, main CPU ms |\n|---:|---:|---:|`);
  for (const size of sizes) {
    const cut = source.map((p) => ({ ...p, html: p.html.slice(0, size) }));
    const measure = async (pool) => {
      for (const p of cut) await run(pool, p);
      const lat = [];
      const c0 = mainCpuMs();
      for (let k = 0; k < 10; k++) for (const p of cut) {
        const t = performance.now();
        await run(pool, p);
        lat.push(performance.now() - t);
      }
      return { latency_ms: median(lat), main_cpu_ms: (mainCpuMs() - c0) / lat.length };
    };
    const a = await measure(inproc);
    const b = await measure(pooled);
    result.threshold.push({ size, inline: a, worker: b });
    console.log(`| ${size / 1024} KiB | ${a.latency_ms.toFixed(3)}, ${a.main_cpu_ms.toFixed(3)} | ${b.latency_ms.toFixed(3)}, ${b.main_cpu_ms.toFixed(3)} |`);
  }
  await pooled.close();
}

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
console.log(`\nwrote ${OUT}`);
process.exit(0);
