// One small page rendered warm, one request at a time, two ways in the same
// run, side by side (issue 29 section 2):
//   api:        POST /v1/scrape {render_js: true} to the BUILT server (dist/,
//               embedded configuration, its default browser settings) on
//               loopback, latency from the request to the last byte of the
//               JSON answer at the client;
//   in-process: the browser fetcher of dist/ driven in this process with the
//               server's defaults (4 pages, 2 warm contexts), latency of
//               fetch() (the figure `render-phases.mjs` part A reports);
//   api-remote: (BENCH_LATENCY_REMOTE=1, the default) the same API call to a
//               second server whose renders go to a Playwright browser
//               server on loopback (SCOUR_BROWSER_WS_ENDPOINT), started here.
// The page: HTML with one image and one inline script that builds part of
// the DOM, served on loopback (the answer is checked for what the script
// built). After BENCH_LATENCY_WARMUP renders each way (not counted), the two
// ways take turns in blocks of BENCH_LATENCY_BLOCK renders until each has
// BENCH_LATENCY_RENDERS, once for each pause of BENCH_LATENCY_GAPS: 0, back
// to back (a render's background work, closing its context and making the
// next warm one, overlaps the next render, as for a client that sends its
// next request at once), and 500 ms (that work done before the next). The machine's load average is recorded before and
// after (the machine may be shared: quote the ratio, not the absolute).
//
// Run by run.mjs (part 4 of npm run bench:scrape, in a child process that
// hands back its result by IPC), or alone after `npm run build`:
//   node benchmarks/scrape/render-latency.mjs
// which prints the table and writes benchmarks/results/scrape-latency.json.
// Settings: BENCH_LATENCY_RENDERS (20), BENCH_LATENCY_WARMUP (5),
// BENCH_LATENCY_BLOCK (5), BENCH_LATENCY_GAPS (0,500: pauses between two renders, ms),
// BENCH_LATENCY_REMOTE (1; 0 leaves out the remote-browser row).
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort, int, sleep } from './lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pct = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]);
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50_ms: pct(s, 50), p95_ms: pct(s, 95), min_ms: s[0] ?? NaN, max_ms: s.at(-1) ?? NaN, mean_ms: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length), all_ms: xs.map((x) => Math.round(x)) };
};

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const BUILT = 'built by the inline script';

/** The page: one image, one inline script; counts the requests it gets. */
export async function startTinySite() {
  const hits = new Map();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').replace(/\?.*$/, '');
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/tiny') {
      const body = `<!doctype html><html><head><meta charset="utf-8"><title>A tiny page</title></head>
<body><h1>A tiny page</h1><p>${'Some text of the page. '.repeat(20)}</p><img src="/a.png" alt="a" width="40" height="40">
<div id="app"></div><script>document.getElementById('app').insertAdjacentHTML('beforeend', '<p id="inline">${BUILT}</p>');</script>
</body></html>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } else if (path === '/a.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      res.end(PNG);
    } else {
      res.writeHead(404).end();
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/tiny`, hits, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}


/** The built server on loopback with a fresh data directory and a Unicorn account whose scrape limits are lifted. */
async function startServer(dir, extraEnv) {
  const plans = join(dir, 'plans.json');
  writeFileSync(plans, `${JSON.stringify({ unicorn: { limits: { scrape: { per_minute: 1_000_000_000, concurrency: 0 } } } })}\n`);
  const env = { ...process.env, HOST: '127.0.0.1', SCOUR_ALLOW_PRIVATE_TARGETS: 'true', SCOUR_DATA_DIR: join(dir, 'data'), SCOUR_SEARCH_PROVIDERS: 'local', SCOUR_BOOTSTRAP_KEY: 'false', LOG_LEVEL: 'warn', SCOUR_PLANS: plans, ...extraEnv };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'SCOUR_REDIS_PREFIX', 'SCOUR_PLUGINS', 'SCOUR_PROXIES', 'SCOUR_BROWSER_PAGES', 'SCOUR_BROWSER_WS_ENDPOINT']) if (!(k in extraEnv)) delete env[k];
  const created = JSON.parse(execFileSync(process.execPath, ['dist/config/cli.js', 'accounts', 'create', '--plan', 'unicorn', '--credits', '100000000', '--json'], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  const key = created.api_key;
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/config/cli.js', 'serve'], { cwd: root, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d) => { log = (log + d).slice(-8000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => { clearTimeout(t); resolve(); });
    child.kill('SIGTERM');
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${log}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
      if (res.status === 200) return { port, key, pid: child.pid, stop, log: () => log };
    } catch { /* not up yet */ }
    await sleep(100);
  }
  await stop();
  throw new Error(`the server did not start within 60 s: ${log}`);
}

/**
 * Measure both ways on one page. `env` holds the settings; `serverEnv` is
 * added to the server's environment (e.g. a remote browser endpoint).
 */
export async function measureRenderLatency(env = process.env, serverEnv = {}) {
  const renders = int(env, 'BENCH_LATENCY_RENDERS', 20, 1);
  const warmup = int(env, 'BENCH_LATENCY_WARMUP', 5);
  const block = int(env, 'BENCH_LATENCY_BLOCK', 5, 1);
  const gaps = (env.BENCH_LATENCY_GAPS ?? '0,500').split(',').map((g) => int({ g: g.trim() }, 'g', 0));
  const withRemote = env.BENCH_LATENCY_REMOTE !== '0';
  const load = { before: loadavg() };
  const site = await startTinySite();
  const dir = mkdtempSync(join(tmpdir(), 'scour-bench-latency-'));
  let server;
  let remoteServer;
  let browserServer;
  let fetcher;
  try {
    server = await startServer(dir, serverEnv);
    const { createBrowserFetcher, launchArgs } = await import(pathToFileURL(join(root, 'dist/plugins/fetchers/browser/index.js')).href);
    if (withRemote) {
      const { chromium } = await import('playwright');
      browserServer = await chromium.launchServer({ executablePath: '/usr/bin/chromium', headless: true, host: '127.0.0.1', args: launchArgs([], true) });
      mkdirSync(join(dir, 'remote'), { recursive: true });
      remoteServer = await startServer(join(dir, 'remote'), { ...serverEnv, SCOUR_BROWSER_WS_ENDPOINT: browserServer.wsEndpoint() });
    }
    const { nodeEgress } = await import(pathToFileURL(join(root, 'dist/adapters/egress/port.js')).href);
    const phases = [];
    fetcher = createBrowserFetcher({ egress: nodeEgress, allowPrivate: true, maxPages: 4, onTiming: (t) => phases.push(t) });

    const check = (html) => {
      if (!html.includes(BUILT)) throw new Error(`the answer lacks what the inline script built: ${html.slice(0, 200)}`);
    };
    const viaApi = (srv) => async () => {
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${srv.port}/v1/scrape`, {
        method: 'POST', headers: { authorization: `Bearer ${srv.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: site.url, render_js: true }),
      });
      const text = await res.text();
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`POST /v1/scrape answered ${res.status}: ${text.slice(0, 300)}`);
      check(JSON.parse(text).content);
      return ms;
    };
    const inProcess = async () => {
      const t0 = performance.now();
      const r = await fetcher.fetch({ url: site.url, headers: {}, userAgent: undefined, cookies: {}, followRedirects: true, timeoutMs: 30_000, proxy: undefined, signal: new AbortController().signal });
      const ms = performance.now() - t0;
      check(r.body);
      return ms;
    };
    const run = { api: viaApi(server), in_process: inProcess, ...(remoteServer ? { api_remote: viaApi(remoteServer) } : {}) };
    for (const w of Object.values(run)) for (let i = 0; i < warmup; i++) await w();
    const modes = [];
    for (const gapMs of gaps) {
      await sleep(1000);
      phases.length = 0;
      const ms = Object.fromEntries(Object.keys(run).map((k) => [k, []]));
      while (Object.values(ms).some((xs) => xs.length < renders)) {
        for (const [k, w] of Object.entries(run)) {
          for (let i = 0; i < block && ms[k].length < renders; i++) {
            ms[k].push(await w());
            if (gapMs > 0) await sleep(gapMs);
          }
        }
      }
      const medianPhase = (k) => pct(phases.map((t) => t.phases[k]).sort((a, b) => a - b), 50);
      const api = stats(ms.api);
      const inproc = stats(ms.in_process);
      modes.push({
        gap_ms: gapMs,
        api,
        ...(ms.api_remote ? { api_remote: stats(ms.api_remote) } : {}),
        in_process: { ...inproc, median_phases_ms: Object.fromEntries(Object.keys(phases[0]?.phases ?? {}).map((k) => [k, Math.round(medianPhase(k))])), warm: phases.filter((t) => t.warm).length },
        ratio_api_vs_in_process_p50: api.p50_ms / inproc.p50_ms,
        load_average_after: loadavg(),
      });
    }
    load.after = loadavg();
    return {
      page: 'loopback HTML, one image (blocked without a screenshot), one inline script',
      settings: { renders, warmup, block, gaps_ms: gaps, server: 'dist/config/cli.js serve, embedded configuration, default browser settings (4 pages, 2 warm contexts)' },
      load_average: load,
      cores: cpus().length,
      modes,
      target_requests: Object.fromEntries(site.hits),
    };
  } catch (e) {
    if (server) e.message += `\nserver log (tail):\n${server.log().slice(-3000)}`;
    if (remoteServer) e.message += `\nremote-browser server log (tail):\n${remoteServer.log().slice(-3000)}`;
    throw e;
  } finally {
    await fetcher?.stop().catch(() => undefined);
    await server?.stop();
    await remoteServer?.stop();
    await browserServer?.close().catch(() => undefined);
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

/** The markdown table of a measureRenderLatency() result. */
export function renderLatencyTable(r) {
  const la = (l) => (l ? l.map((x) => x.toFixed(2)).join(' / ') : 'n/a');
  const pause = (m) => (m.gap_ms ? `${m.gap_ms} ms apart` : 'back to back');
  const rows = r.modes.flatMap((m) => [
    `| browser fetcher in process, ${pause(m)} | ${f0(m.in_process.p50_ms)} | ${f0(m.in_process.p95_ms)} | ${f0(m.in_process.mean_ms)} |`,
    `| **through the API** (\`POST /v1/scrape\` \`render_js\`, built server on loopback), ${pause(m)} | **${f0(m.api.p50_ms)}** | ${f0(m.api.p95_ms)} | ${f0(m.api.mean_ms)} |`,
    ...(m.api_remote ? [`| through the API, rendering in a Playwright browser server on loopback (\`SCOUR_BROWSER_WS_ENDPOINT\`), ${pause(m)} | ${f0(m.api_remote.p50_ms)} | ${f0(m.api_remote.p95_ms)} | ${f0(m.api_remote.mean_ms)} |`] : []),
  ]);
  const notes = r.modes.map((m) => {
    const p = m.in_process.median_phases_ms ?? {};
    return `${pause(m)}: API / in process (p50) ${m.ratio_api_vs_in_process_p50.toFixed(2)}x${m.api_remote ? `, remote browser / local through the API ${(m.api_remote.p50_ms / m.api.p50_ms).toFixed(2)}x` : ''}; in process, median phases: navigate ${f0(p.navigate)}, settle ${f0(p.settle)}, content ${f0(p.content)}, close ${f0(p.close)} ms (after the answer).`;
  });
  return [
    `| tiny page (one image, one inline script), warm, one at a time, ${r.settings.renders} renders each way | p50 ms | p95 ms | mean ms |`,
    '|---|---:|---:|---:|',
    ...rows,
    '',
    ...notes.map((n) => `${n}  `),
    `Load average (1/5/15 min) before ${la(r.load_average.before)}, after ${la(r.load_average.after)} on ${r.cores} cores.`,
    '',
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.send) {
  // A child of run.mjs: the result goes back by IPC.
  try {
    process.send({ ok: true, result: await measureRenderLatency() }, () => process.exit(0));
  } catch (e) {
    process.send({ ok: false, error: String(e?.stack ?? e) }, () => process.exit(1));
  }
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await measureRenderLatency();
  console.log(renderLatencyTable(r));
  for (const m of r.modes) console.log(`${m.api.p50_ms < 250 ? 'MET ' : 'MISS'}  warm render_js p50 through the API < 250 ms, ${m.gap_ms ? `${m.gap_ms} ms apart` : 'back to back'} (${f0(m.api.p50_ms)} ms)`);
  mkdirSync(join(root, 'benchmarks/results'), { recursive: true });
  writeFileSync(join(root, 'benchmarks/results/scrape-latency.json'), `${JSON.stringify({ benchmark: 'scrape-latency', date: new Date().toISOString(), node: process.version, ...r }, null, 2)}\n`);
  console.log('wrote benchmarks/results/scrape-latency.json');
}
