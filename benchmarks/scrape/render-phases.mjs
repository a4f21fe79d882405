// Where a render's time goes: the browser fetcher driven in-process (no HTTP
// server, no extraction), timed by the fetcher itself through its onTiming
// hook, in two configurations side by side in the same run:
//   legacy: the rules before issue 15 (a context created per render, the
//           load event plus up to 1 s of network idle, nothing blocked, the
//           page closed before the answer). With BENCH_LEGACY_MODULE, the
//           module's own createBrowserFetcher with its defaults instead (an
//           older version of plugins/fetchers/browser/index.ts, to measure
//           the old code itself rather than the old rules in the new code).
//   new:    the defaults (pre-warmed contexts, DOM ready plus a short quiet
//           period of the network, fonts/media/images blocked when no
//           screenshot needs them, the page closed after the answer).
//
// Part A, latency: a small loopback page (HTML, a stylesheet with a web font,
// a deferred script and an inline one that build part of the DOM, three
// images) rendered one at a time, the configurations alternating render by
// render, after warm-up renders not counted: p50/p90/p99 of the answer, the
// median of each phase, requests the target saw.
// Part B, throughput on real pages: the Zyte pages (static-site.mjs) at
// BENCH_RENDER_CONCURRENCY in flight with that many pages in the pool; the
// configurations take turns (2 rounds each, so drift in the machine's load
// hits both alike): renders/s, p50/p99, errors, CPU per render (Chromium
// processes, reaped renderers included, and this process), mean phases.
// Part C, throughput on the small page, the same way (light pages: where the
// fixed waits, not the CPU, bound a render).
// Memory (this process's VmRSS + the fetcher's Chromium PSS) before part B
// and after part C, and its peak; then stop(): Chromium processes left.
//
// Run by run.mjs (part 3 of npm run bench:scrape) in a child process with the
// offline DNS stub, or on its own:
//   node --import ./benchmarks/scrape/offline-dns.mjs benchmarks/scrape/render-phases.mjs
// (BENCH_FROM_SOURCE=1 with --import tsx runs the TypeScript sources instead of dist/.)
// Settings: BENCH_PHASE_RENDERS (60 per configuration), BENCH_PHASE_WARMUP (8),
// BENCH_THROUGHPUT_RENDERS (96 Zyte pages per configuration; 0 skips part B),
// BENCH_THROUGHPUT_SMALL (160 small pages per configuration; 0 skips part C),
// BENCH_RENDER_CONCURRENCY (8), BENCH_MODES (legacy,new), BENCH_EXTRA_MODES
// (JSON: more named option sets to compare), BENCH_LEGACY_MODULE, BENCH_DATA
// (the Zyte benchmark directory). Prints tables, or as a child sends the JSON
// to its parent.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pssBytes, rssBytes } from './procs.mjs';
import { int, sleep } from './lib.mjs';
import { startStaticSite } from './static-site.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The configurations compared. `legacy` spells out every rule the fetcher had before issue 15. */
export const MODES = {
  legacy: { prewarmContexts: 0, blockResources: false, settle: 'load', closeBeforeAnswer: true, leanBrowser: false },
  new: {},
};

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** The small page of parts A and C and what it loads; counts every request it gets. */
export async function startSmallSite() {
  const hits = new Map();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').replace(/\?.*$/, '');
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const send = (type, body) => { res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) }); res.end(body); };
    switch (path) {
      case '/small':
        send('text/html; charset=utf-8', `<!doctype html><html><head><meta charset="utf-8"><title>A small page</title>
<link rel="stylesheet" href="/s.css"><script src="/s.js" defer></script></head>
<body><h1>A small page</h1><p>${'Some text of the page. '.repeat(40)}</p>
<img src="/a.png" alt="a"><img src="/b.png" alt="b"><img src="/c.png" alt="c">
<div id="app"></div><script>document.getElementById('app').insertAdjacentHTML('beforeend', '<p id="inline">built inline</p>');</script>
</body></html>`);
        return;
      case '/s.css':
        send('text/css', '@font-face{font-family:Bench;src:url(/f.woff2) format("woff2")}body{font-family:Bench,sans-serif;margin:2em}img{width:40px;height:40px}');
        return;
      case '/s.js':
        send('text/javascript', 'document.getElementById("app").insertAdjacentHTML("beforeend", "<ul>" + [1,2,3].map((i) => "<li>item " + i + "</li>").join("") + "</ul>");');
        return;
      case '/a.png': case '/b.png': case '/c.png':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
        res.end(PNG);
        return;
      case '/f.woff2':
        res.writeHead(200, { 'content-type': 'font/woff2', 'content-length': 64 });
        res.end(Buffer.alloc(64));
        return;
      default:
        res.writeHead(404).end();
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/small`, hits, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

const pct = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]);
const median = (xs) => pct([...xs].sort((a, b) => a - b), 50);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

const request = (url) => ({ url, headers: {}, userAgent: undefined, cookies: {}, followRedirects: true, timeoutMs: 30_000, proxy: undefined, signal: new AbortController().signal });

async function loadModules(env) {
  const fromSource = env.BENCH_FROM_SOURCE === '1';
  const file = (ts, js) => pathToFileURL(join(root, fromSource ? ts : js)).href;
  const fetcher = await import(file('plugins/fetchers/browser/index.ts', 'dist/plugins/fetchers/browser/index.js'));
  const egress = await import(file('adapters/egress/port.ts', 'dist/adapters/egress/port.js'));
  return { createBrowserFetcher: fetcher.createBrowserFetcher, phases: fetcher.RENDER_PHASES, nodeEgress: egress.nodeEgress };
}

/**
 * Memory of this process (VmRSS) and of the fetcher's Chromium processes:
 * their summed PSS (shared pages divided among the sharers; a VmRSS sum counts
 * each renderer's pages shared with the zygote again and again) and VmRSS.
 */
function memory(fetcher) {
  const pids = fetcher.stats().chromiumPids;
  return {
    node: rssBytes(process.pid),
    chromium: pids.reduce((n, pid) => n + pssBytes(pid), 0),
    chromium_rss: pids.reduce((n, pid) => n + rssBytes(pid), 0),
    processes: pids.length,
  };
}

const CLOCK_TICKS = 100;

/**
 * CPU time (ms) of the fetcher's Chromium processes while it runs, sampled
 * every 100 ms from /proc: each process's own time, plus what its reaped
 * children used (a closed context's renderer is reaped by the zygote), minus
 * what had already been counted for a child that disappeared (so nothing is
 * counted twice); a process whose parent went with it (a browser retired
 * after its 100 pages) loses at most its last 100 ms. And this process's own
 * CPU (process.cpuUsage).
 */
function cpuCounter(fetcher) {
  const read = () => {
    const now = new Map();
    for (const pid of fetcher.stats().chromiumPids) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const tick = 1000 / CLOCK_TICKS;
        now.set(pid, { ppid: Number(f[1]), own: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick });
      } catch { /* gone */ }
    }
    return now;
  };
  let last = read();
  let chromium = 0;
  const sample = () => {
    const now = read();
    for (const [pid, v] of now) {
      const p = last.get(pid);
      chromium += p ? v.own - p.own + v.children - p.children : v.own + v.children;
    }
    for (const [pid, p] of last) if (!now.has(pid) && now.has(p.ppid)) chromium -= p.own + p.children;
    last = now;
  };
  const node0 = process.cpuUsage();
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const n = process.cpuUsage(node0);
      return { chromium, node: (n.user + n.system) / 1000 };
    },
  };
}

function running(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** `urls` through `fetcher`, `concurrency` in flight: latencies, errors, wall time, CPU used. */
async function drive(fetcher, urls, concurrency) {
  const lat = [];
  const errors = new Map();
  let next = 0;
  const cpu = cpuCounter(fetcher);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, urls.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= urls.length) return;
      const s = performance.now();
      try {
        await fetcher.fetch(request(urls[i]));
        lat.push(performance.now() - s);
      } catch (e) {
        const k = `${e?.code ?? e?.name ?? 'error'}: ${String(e?.message ?? e).slice(0, 100)}`;
        errors.set(k, (errors.get(k) ?? 0) + 1);
      }
    }
  }));
  const wallMs = performance.now() - t0;
  return { lat, errors, wallMs, cpu: cpu.stop() };
}

/** Part B or C: each configuration in turn, `rounds` times, `perMode` renders each in all. */
async function throughput({ fetchers, modeNames, timings, phases, urlFor, perMode, concurrency, rounds = 2 }) {
  const acc = Object.fromEntries(modeNames.map((m) => [m, { lat: [], errors: new Map(), wallMs: 0, cpu: { chromium: 0, node: 0 }, n: 0, timings: [] }]));
  for (let round = 0; round < rounds; round++) {
    for (const m of modeNames) {
      const n = Math.floor(perMode / rounds) + (round < perMode % rounds ? 1 : 0);
      const urls = Array.from({ length: n }, (_, i) => urlFor(m, round, i));
      const first = timings[m].length;
      const r = await drive(fetchers[m], urls, concurrency);
      await sleep(300); // the last closes report their timings
      const a = acc[m];
      a.lat.push(...r.lat);
      for (const [k, v] of r.errors) a.errors.set(k, (a.errors.get(k) ?? 0) + v);
      a.wallMs += r.wallMs;
      a.cpu.chromium += r.cpu.chromium;
      a.cpu.node += r.cpu.node;
      a.n += n;
      a.timings.push(...timings[m].slice(first));
    }
  }
  const out = {};
  for (const m of modeNames) {
    const a = acc[m];
    a.lat.sort((x, y) => x - y);
    out[m] = {
      renders: a.n, ok: a.lat.length, error_count: a.n - a.lat.length, errors: [...a.errors].map(([kind, count]) => ({ kind, count })),
      wall_s: a.wallMs / 1000, per_s: a.n / (a.wallMs / 1000), p50_ms: pct(a.lat, 50), p99_ms: pct(a.lat, 99),
      // This process's share includes the bench's own sites and load generator.
      cpu_ms_per_render: { chromium: a.cpu.chromium / a.n, node: a.cpu.node / a.n },
      phase_mean_ms: Object.fromEntries(phases.map((p) => [p, mean(a.timings.map((t) => t.phases[p]))])),
      requests_per_render: mean(a.timings.map((t) => t.requests)),
      blocked_per_render: mean(a.timings.map((t) => t.blocked)),
      warm_share: a.timings.filter((t) => t.warm).length / Math.max(1, a.timings.length),
    };
  }
  return out;
}

export async function runRenderPhases(env = process.env) {
  const PHASE_RENDERS = int(env, 'BENCH_PHASE_RENDERS', 60, 1);
  const PHASE_WARMUP = int(env, 'BENCH_PHASE_WARMUP', 8);
  const THROUGHPUT_RENDERS = int(env, 'BENCH_THROUGHPUT_RENDERS', 96);
  const THROUGHPUT_SMALL = int(env, 'BENCH_THROUGHPUT_SMALL', 160);
  const CONCURRENCY = int(env, 'BENCH_RENDER_CONCURRENCY', 8, 1);
  const modes = { ...MODES, ...JSON.parse(env.BENCH_EXTRA_MODES ?? '{}') };
  const modeNames = (env.BENCH_MODES ?? 'legacy,new').split(',').map((s) => s.trim()).filter(Boolean);
  for (const m of modeNames) if (!modes[m]) throw new Error(`BENCH_MODES: unknown configuration ${m} (${Object.keys(modes).join(', ')})`);
  const dataDir = env.BENCH_DATA ?? join(root, '..', 'shared', 'data', 'extraction', 'zyte-article-benchmark');

  const { createBrowserFetcher, phases, nodeEgress } = await loadModules(env);
  const legacyModule = env.BENCH_LEGACY_MODULE ? await import(pathToFileURL(env.BENCH_LEGACY_MODULE).href) : undefined;
  const small = await startSmallSite();
  const zyte = THROUGHPUT_RENDERS > 0 ? await startStaticSite(join(dataDir, 'html')) : undefined;
  const base = { egress: nodeEgress, executablePath: '/usr/bin/chromium', allowPrivate: true };
  const out = {
    phases,
    modes: Object.fromEntries(modeNames.map((m) => [m, {}])),
    settings: {
      phase_renders: PHASE_RENDERS, phase_warmup: PHASE_WARMUP, throughput_renders: THROUGHPUT_RENDERS, throughput_small: THROUGHPUT_SMALL, concurrency: CONCURRENCY,
      options: Object.fromEntries(modeNames.map((m) => [m, m === 'legacy' && legacyModule ? { module: env.BENCH_LEGACY_MODULE } : modes[m]])),
    },
  };
  const fetchers = {};
  const timings = Object.fromEntries(modeNames.map((m) => [m, []]));
  try {
    for (const m of modeNames) {
      const create = m === 'legacy' && legacyModule ? legacyModule.createBrowserFetcher : createBrowserFetcher;
      fetchers[m] = create({ ...base, ...(m === 'legacy' && legacyModule ? {} : modes[m]), maxPages: CONCURRENCY, onTiming: (t) => timings[m].push(t) });
    }

    // ---- Part A: one at a time, the configurations alternating ----
    const latencies = Object.fromEntries(modeNames.map((m) => [m, []]));
    const seen = Object.fromEntries(modeNames.map((m) => [m, new Map()]));
    for (let i = 0; i < PHASE_WARMUP + PHASE_RENDERS; i++) {
      for (const m of modeNames) {
        const before = new Map(small.hits);
        const t0 = performance.now();
        await fetchers[m].fetch(request(`${small.url}?${m}=${i}`));
        const ms = performance.now() - t0;
        if (i < PHASE_WARMUP) continue;
        latencies[m].push(ms);
        for (const [k, v] of small.hits) seen[m].set(k, (seen[m].get(k) ?? 0) + v - (before.get(k) ?? 0));
      }
    }
    await sleep(300); // background closes report their timings
    for (const m of modeNames) {
      const measured = timings[m].filter((t) => t.url.includes(`?${m}=`) && Number(t.url.split('=').at(-1)) >= PHASE_WARMUP && t.outcome === 'ok');
      const sorted = [...latencies[m]].sort((a, b) => a - b);
      out.modes[m].latency = {
        renders: sorted.length, p50_ms: pct(sorted, 50), p90_ms: pct(sorted, 90), p99_ms: pct(sorted, 99), max_ms: sorted.at(-1),
        phase_median_ms: Object.fromEntries(phases.map((p) => [p, median(measured.map((t) => t.phases[p]))])),
        phase_mean_ms: Object.fromEntries(phases.map((p) => [p, mean(measured.map((t) => t.phases[p]))])),
        answer_median_ms: median(measured.map((t) => t.answerMs)),
        total_median_ms: median(measured.map((t) => t.totalMs)),
        warm_share: measured.filter((t) => t.warm).length / Math.max(1, measured.length),
        target_requests_per_render: Object.fromEntries([...seen[m]].map(([k, v]) => [k, v / PHASE_RENDERS])),
      };
    }

    // ---- Memory before the loaded parts ----
    for (const m of modeNames) {
      // A few renders first, so both browsers are up and past their first pages.
      await drive(fetchers[m], Array.from({ length: CONCURRENCY }, (_, i) => (zyte ? zyte.url(zyte.ids[i % zyte.ids.length], `?warm-${m}-${i}`) : `${small.url}?warm-${m}-${i}`)), CONCURRENCY);
    }
    await sleep(1000);
    const memBefore = Object.fromEntries(modeNames.map((m) => [m, memory(fetchers[m])]));
    const peak = Object.fromEntries(modeNames.map((m) => [m, memBefore[m].node + memBefore[m].chromium]));
    const sampler = setInterval(() => {
      for (const m of modeNames) {
        const x = memory(fetchers[m]);
        peak[m] = Math.max(peak[m], x.node + x.chromium);
      }
    }, 500);

    // ---- Part B: the Zyte pages ----
    if (zyte) {
      const b = await throughput({
        fetchers, modeNames, timings, phases, perMode: THROUGHPUT_RENDERS, concurrency: CONCURRENCY,
        urlFor: (m, round, i) => zyte.url(zyte.ids[(round * 97 + i) % zyte.ids.length], `?${m}-b${round}-${i}`),
      });
      for (const m of modeNames) out.modes[m].throughput = b[m];
    }
    // ---- Part C: the small page ----
    if (THROUGHPUT_SMALL > 0) {
      const c = await throughput({
        fetchers, modeNames, timings, phases, perMode: THROUGHPUT_SMALL, concurrency: CONCURRENCY,
        urlFor: (m, round, i) => `${small.url}?${m}-c${round}-${i}`,
      });
      for (const m of modeNames) out.modes[m].throughput_small = c[m];
    }
    clearInterval(sampler);
    await sleep(2000);
    for (const m of modeNames) out.modes[m].memory = { before: memBefore[m], after: memory(fetchers[m]), peak: peak[m], unit: 'bytes' };
  } finally {
    for (const m of modeNames) {
      const f = fetchers[m];
      if (!f) continue;
      const pids = f.stats().chromiumPids;
      const t0 = performance.now();
      await f.stop();
      const stopMs = performance.now() - t0;
      await sleep(200);
      out.modes[m].stop = { ms: stopMs, chromium_before: pids.length, chromium_left: pids.filter(running).length };
    }
    await small.close();
    await zyte?.close();
  }
  return out;
}

const mib = (b) => (b / (1024 * 1024)).toFixed(0);
const ms = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

/** Markdown tables for run.mjs and for a run on its own. */
export function renderPhaseTables(r) {
  const modes = Object.keys(r.modes);
  const cols = (f) => modes.map((m) => f(r.modes[m])).join(' | ');
  const head = (first) => [`| ${first} | ${modes.join(' | ')} |`, `|---|${modes.map(() => '---:').join('|')}|`];
  const lines = [
    `### Where a render goes: the small loopback page, one at a time (${r.settings.phase_renders} renders per configuration, alternating, after ${r.settings.phase_warmup} warm-up each)`,
    '',
    ...head('phase (median ms)'),
    ...r.phases.map((p) => `| ${p} | ${cols((x) => ms(x.latency.phase_median_ms[p]))} |`),
    `| **answer p50** (client) | ${cols((x) => `**${ms(x.latency.p50_ms)}**`)} |`,
    `| answer p90 / p99 / max | ${cols((x) => `${ms(x.latency.p90_ms)} / ${ms(x.latency.p99_ms)} / ${ms(x.latency.max_ms)}`)} |`,
    `| page released (close included), median | ${cols((x) => ms(x.latency.total_median_ms))} |`,
    `| context from the warm pool | ${cols((x) => `${Math.round(x.latency.warm_share * 100)}%`)} |`,
    `| requests at the target per render | ${cols((x) => Object.entries(x.latency.target_requests_per_render).filter(([, v]) => v > 0).map(([k, v]) => `${k}${v === 1 ? '' : ` x${v.toFixed(1)}`}`).join(', '))} |`,
    '',
    'Phases are wall time, each from the end of the one before. close runs after the answer in the new configuration (so it is not in the answer), before it in legacy.',
    '',
  ];
  for (const [key, title] of [['throughput', `Zyte pages (real articles), ${r.settings.concurrency} in flight, ${r.settings.concurrency} pages in the pool, ${r.settings.throughput_renders} renders per configuration`], ['throughput_small', `the small page, ${r.settings.concurrency} in flight, ${r.settings.throughput_small} renders per configuration`]]) {
    if (!modes.some((m) => r.modes[m][key])) continue;
    lines.push(
      `### Throughput: ${title} (configurations taking turns, 2 rounds)`,
      '',
      ...head(''),
      `| **renders/s** | ${cols((x) => `**${x[key].per_s.toFixed(2)}**`)} |`,
      `| p50 / p99 ms | ${cols((x) => `${ms(x[key].p50_ms)} / ${ms(x[key].p99_ms)}`)} |`,
      `| errors | ${cols((x) => x[key].error_count)} |`,
      `| CPU per render, ms: Chromium + this process | ${cols((x) => `${Math.round(x[key].cpu_ms_per_render.chromium)} + ${Math.round(x[key].cpu_ms_per_render.node)}`)} |`,
      `| requests per render (blocked) | ${cols((x) => `${x[key].requests_per_render.toFixed(1)} (${x[key].blocked_per_render.toFixed(1)})`)} |`,
      `| context from the warm pool | ${cols((x) => `${Math.round(x[key].warm_share * 100)}%`)} |`,
      ...r.phases.map((p) => `| ${p} (mean ms) | ${cols((x) => ms(x[key].phase_mean_ms[p]))} |`),
      '',
    );
  }
  if (modes.some((m) => r.modes[m].memory)) {
    lines.push(
      '### Memory and shutdown',
      '',
      ...head('MiB: this process VmRSS + Chromium PSS'),
      `| before parts B and C | ${cols((x) => `${mib(x.memory.before.node)} + ${mib(x.memory.before.chromium)} = ${mib(x.memory.before.node + x.memory.before.chromium)}`)} |`,
      `| after (2 s idle) | ${cols((x) => `${mib(x.memory.after.node)} + ${mib(x.memory.after.chromium)} = ${mib(x.memory.after.node + x.memory.after.chromium)}`)} |`,
      `| peak during | ${cols((x) => mib(x.memory.peak))} |`,
      `| Chromium processes before stop() / left after | ${cols((x) => `${x.stop?.chromium_before ?? 'n/a'} / ${x.stop?.chromium_left ?? 'n/a'}`)} |`,
      '',
      'Both configurations run in this one process, so its VmRSS is shared between the columns.',
      '',
    );
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const r = await runRenderPhases();
    if (process.send) {
      process.send({ ok: true, result: r });
    } else {
      console.log(renderPhaseTables(r));
      for (const m of Object.keys(r.modes)) {
        for (const k of ['throughput', 'throughput_small']) for (const e of r.modes[m][k]?.errors ?? []) console.log(`error (${m}, ${k}) x${e.count}: ${e.kind}`);
      }
    }
    process.exitCode = 0;
  } catch (e) {
    if (process.send) process.send({ ok: false, error: String(e?.stack ?? e) });
    else console.error(e);
    process.exitCode = 1;
  }
  setTimeout(() => process.exit(), 100);
}
