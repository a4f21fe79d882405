/**
 * The soak: a real `scour serve` (embedded SQLite) under the `mixed`
 * scenario at a fixed rate for MINUTES, plus asynchronous bulk jobs with
 * signed webhooks to a loopback receiver, with a short job retention so the
 * minute sweep has work. Checked after a warm-up of a third of the run:
 *   - resident memory grows by less than 1 MiB a minute (least squares);
 *   - open file descriptors do not grow;
 *   - every Chromium process the server started is gone once it stops;
 *   - the SQLite WAL stays bounded;
 *   - the job tables hold only the jobs inside the retention window.
 *
 *   npm run bench:soak             (SOAK_MINUTES, default 30; SOAK_RATE, default 15 req/s)
 *
 * test/soak/soak.test.ts runs it for 3 minutes in CI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { WebSocket } from 'undici';
import { runLoad } from '../../adapters/cli/loadtest/engine.js';
import { chromiumDescendants } from '../../adapters/metrics/process.js';
import { summarise } from '../../adapters/cli/loadtest/report.js';
import { slope, startSampler, type ServerSample } from '../../adapters/cli/loadtest/sampler.js';
import { prepareScenario, RENDER_TAGS } from '../../adapters/cli/loadtest/scenarios.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ADMIN = 'soak-admin-token-0123456789abcdef';

export interface SoakOptions {
  readonly minutes: number;
  /** Requests a second of the mixed scenario. */
  readonly rate: number;
  /** Seconds finished jobs are kept (the server's SCOUR_JOB_RETENTION). */
  readonly retentionSeconds?: number;
  /** How to start the server: the built dist (bench) or the sources through tsx (tests). */
  readonly from?: 'dist' | 'sources';
  readonly log?: (line: string) => void;
}

export interface SoakResult {
  readonly minutes: number;
  readonly rate: number;
  readonly requests: number;
  readonly classes: Record<string, number>;
  readonly nonRenderP99Ms: number;
  readonly rssStartMiB: number;
  readonly rssEndMiB: number;
  /** After the warm-up. */
  readonly rssSlopeMiBPerMin: number;
  /**
   * After the warm-up: the slope of the live V8 heap, read every 20 s just
   * after a full collection the soak asks for through the server's inspector,
   * so garbage not yet collected does not count. A leak of JavaScript
   * objects shows here first; RSS also moves with the allocator's arenas and
   * the heap's own growth policy, which a short run has not settled.
   */
  readonly heapLiveSlopeMiBPerMin: number;
  /** The live heap read every 20 s, MiB. */
  readonly heapAfterGcMiB: readonly number[];
  readonly fdsAfterWarmup: number;
  readonly fdsMax: number;
  readonly fdsEnd: number;
  readonly chromiumSeen: number;
  readonly chromiumLeft: number;
  readonly walMaxBytes: number;
  readonly jobsSubmitted: number;
  readonly jobsInStore: number;
  readonly jobsWithinRetention: number;
  readonly webhooksReceived: number;
  readonly samples: readonly ServerSample[];
}

const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number };
    s.close(() => resolve(port));
  });
});

function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0];
    return state !== undefined && state !== 'Z';
  } catch {
    return false;
  }
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const log = o.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'scour-soak-'));
  const dataDir = join(dir, 'data');
  const plans = join(dir, 'plans.json');
  const high = { per_minute: 10_000_000, concurrency: 0 };
  writeFileSync(plans, JSON.stringify({ unicorn: { monthly_credits: 1_000_000_000, limits: { search: high, scrape: high, research: high, crawl: high, usage: high, default: high } } }));
  // The webhook receiver: counts deliveries (their signatures are checked by the webhook suites).
  let webhooks = 0;
  const receiver = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      webhooks++;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', SCOUR_DATA_DIR: dataDir, SCOUR_SEARCH_PROVIDERS: 'local',
    SCOUR_ADMIN_TOKEN: ADMIN, SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback', SCOUR_TOOLS_RATE_LIMIT: '1000000000', SCOUR_PLANS: plans,
    SCOUR_BOOTSTRAP_KEY: 'false', LOG_LEVEL: 'warn', SCOUR_JOB_RETENTION: String(o.retentionSeconds ?? 60), SCOUR_WEBHOOK_SCHEDULE: '1,1',
  };
  // The inspector (loopback, a free port) lets the soak collect garbage before it reads the live heap.
  const inspect = '--inspect=127.0.0.1:0';
  const args = (o.from ?? 'dist') === 'dist' ? [inspect, 'bin/scour.js', 'serve'] : [inspect, '--import', 'tsx', 'config/cli.ts', 'serve'];
  const server: ChildProcess = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  server.stderr!.on('data', (d) => { stderr = (stderr + String(d)).slice(-4000); });
  const chromiumSeen = new Set<number>();
  let walMax = 0;
  const watch = setInterval(() => {
    for (const p of chromiumDescendants(server.pid!) ?? []) chromiumSeen.add(p);
    const wal = join(dataDir, 'scour.db-wal');
    if (existsSync(wal)) walMax = Math.max(walMax, statSync(wal).size);
  }, 1000);
  try {
    for (let i = 0; ; i++) {
      if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}): ${stderr}`);
      const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 600) throw new Error('the server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const inspectorUrl = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(stderr)?.[1];
    if (inspectorUrl === undefined) throw new Error(`the server's inspector did not start: ${stderr}`);
    const inspector = await Inspector.connect(inspectorUrl);
    const heapAfterGc: { t: number; bytes: number }[] = [];
    const t0 = performance.now();
    const gcProbe = setInterval(() => {
      void inspector.liveHeap().then((bytes) => heapAfterGc.push({ t: (performance.now() - t0) / 1000, bytes }), () => undefined);
    }, 20_000);
    const scenario = await prepareScenario('mixed', { base: url, adminToken: ADMIN, accounts: 2, log });
    const key = (await (await fetch(`${url}/admin/v1/accounts`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'unicorn', credits: 100_000_000 }),
    })).json() as { api_key: string }).api_key;
    // One asynchronous bulk job (3 URLs, a webhook) every 5 s beside the mixed load.
    const submitted: number[] = [];
    const scrapeTarget = scenario.next; // keeps the same deterministic stream for the load
    let n = 0;
    const jobs = setInterval(() => {
      n++;
      const urls = [1, 2, 3].map((k) => `${url}/healthz?n=${n}&k=${k}`);
      void fetch(`${url}/v1/scrape/bulk`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ urls, callback_url: hook }),
      }).then((r) => { if (r.status === 202) submitted.push(Date.now()); }, () => undefined);
    }, 5000);
    const sampler = startSampler(url, 2000);
    log(`soak: ${o.minutes} min of mixed at ${o.rate} req/s, a bulk job every 5 s, retention ${o.retentionSeconds ?? 60} s`);
    let result;
    try {
      result = await runLoad({
        base: url, mode: { kind: 'open', rate: o.rate }, durationMs: o.minutes * 60_000, next: scrapeTarget,
        groups: { 'non-render': (t) => !RENDER_TAGS.has(t) },
      });
    } finally {
      clearInterval(jobs);
      clearInterval(gcProbe);
      await sampler.stop();
      inspector.close();
      await scenario.close();
    }
    // Let the last jobs finish and their webhooks go out, then count what the store holds.
    await new Promise((r) => setTimeout(r, 4000));
    const samples = sampler.samples.filter((s) => s.rssBytes > 0);
    const warm = (o.minutes * 60) / 3;
    const after = samples.filter((s) => s.t >= warm);
    const fdsAfter = after.map((s) => s.openFds);
    const db = new Database(join(dataDir, 'scour.db'), { readonly: true, fileMustExist: true });
    let jobsInStore = 0;
    try {
      jobsInStore = (db.prepare(`SELECT count(*) AS n FROM bulk_jobs`).get() as { n: number }).n;
    } finally {
      db.close();
    }
    const retentionMs = (o.retentionSeconds ?? 60) * 1000;
    // What the store may hold: jobs inside the retention window, plus one sweep's lag (a minute).
    const within = submitted.filter((t) => t >= Date.now() - retentionMs - 60_000).length;
    const s = summarise(samples);
    return {
      minutes: o.minutes, rate: o.rate, requests: result.completed, classes: { ...result.classes },
      nonRenderP99Ms: result.groups['non-render']!.latency.p99,
      rssStartMiB: Math.round(((samples[0]?.rssBytes ?? 0) / 1048576) * 10) / 10,
      rssEndMiB: Math.round(((samples.at(-1)?.rssBytes ?? 0) / 1048576) * 10) / 10,
      rssSlopeMiBPerMin: Math.round(slope(after.map((x) => ({ x: x.t / 60, y: x.rssBytes / 1048576 }))) * 100) / 100,
      heapLiveSlopeMiBPerMin: Math.round(slope(heapAfterGc.filter((h) => h.t >= warm).map((h) => ({ x: h.t / 60, y: h.bytes / 1048576 }))) * 100) / 100,
      heapAfterGcMiB: heapAfterGc.map((h) => Math.round((h.bytes / 1048576) * 10) / 10),
      fdsAfterWarmup: fdsAfter[0] ?? -1, fdsMax: s.fdsMax, fdsEnd: fdsAfter.at(-1) ?? -1,
      chromiumSeen: chromiumSeen.size, chromiumLeft: -1,
      walMaxBytes: walMax,
      jobsSubmitted: submitted.length, jobsInStore, jobsWithinRetention: within,
      webhooksReceived: webhooks,
      samples,
    };
  } finally {
    clearInterval(watch);
    const gone = new Promise((r) => server.once('exit', r));
    if (server.exitCode === null) server.kill('SIGTERM');
    await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
    if (server.exitCode === null) server.kill('SIGKILL');
    await new Promise<void>((r) => receiver.close(() => r()));
    receiver.closeAllConnections();
    // Chromium processes that outlived the server.
    const left = [...chromiumSeen].filter(alive);
    (runSoak as { lastLeft?: number }).lastLeft = left.length;
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The server's V8 inspector over its WebSocket (Chrome DevTools Protocol):
 * a full garbage collection, then the heap in use, so what is measured is
 * what the process keeps, not garbage waiting for the next collection.
 */
class Inspector {
  #next = 1;
  readonly #waiting = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: unknown };
      if (msg.id !== undefined) this.#waiting.get(msg.id)?.(msg);
      if (msg.id !== undefined) this.#waiting.delete(msg.id);
    });
  }
  static connect(url: string): Promise<Inspector> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.addEventListener('open', () => resolve(new Inspector(ws)), { once: true });
      ws.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), { once: true });
    });
  }
  #call(method: string): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.#waiting.delete(id); reject(new Error(`${method} timed out`)); }, 30_000);
      this.#waiting.set(id, (msg) => {
        clearTimeout(timer);
        if (msg.error !== undefined) reject(new Error(JSON.stringify(msg.error)));
        else resolve(msg.result);
      });
      this.ws.send(JSON.stringify({ id, method }));
    });
  }
  /** Bytes of V8 heap in use just after a full collection. */
  async liveHeap(): Promise<number> {
    await this.#call('HeapProfiler.collectGarbage');
    const r = (await this.#call('Runtime.getHeapUsage')) as { usedSize: number };
    return r.usedSize;
  }
  close(): void {
    this.ws.close();
  }
}

/** The Chromium processes left after the last runSoak's server stopped. */
export const chromiumLeftAfterLastSoak = (): number => (runSoak as { lastLeft?: number }).lastLeft ?? -1;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const minutes = Number(process.env.SOAK_MINUTES ?? 30);
  const rate = Number(process.env.SOAK_RATE ?? 15);
  const r = await runSoak({ minutes, rate, from: 'dist', log: (l) => process.stderr.write(`${l}\n`) });
  const left = chromiumLeftAfterLastSoak();
  const checks = {
    rss_slope_under_1_mib_per_min: r.rssSlopeMiBPerMin < 1,
    live_heap_slope_under_0_5_mib_per_min: r.heapLiveSlopeMiBPerMin < 0.5,
    fds_flat: r.fdsEnd <= r.fdsAfterWarmup + 10,
    no_chromium_left: left === 0,
    wal_under_64_mib: r.walMaxBytes < 64 * 1048576,
    jobs_within_retention: r.jobsInStore <= r.jobsWithinRetention,
  };
  const out = { when: new Date().toISOString(), ...r, chromiumLeft: left, checks, samples: r.samples };
  mkdirSync(join(root, 'benchmarks', 'results'), { recursive: true });
  writeFileSync(join(root, 'benchmarks', 'results', 'soak.json'), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write([
    `soak: ${minutes} min at ${rate} req/s: ${r.requests} requests, ${JSON.stringify(r.classes)}, non-render p99 ${r.nonRenderP99Ms} ms`,
    `RSS ${r.rssStartMiB} -> ${r.rssEndMiB} MiB, slope after warm-up ${r.rssSlopeMiBPerMin} MiB/min (target < 1); live heap slope ${r.heapLiveSlopeMiBPerMin} MiB/min`,
    `open fds ${r.fdsAfterWarmup} after warm-up, ${r.fdsEnd} at the end (max ${r.fdsMax}); Chromium seen ${r.chromiumSeen}, left after stop ${left}`,
    `WAL at most ${(r.walMaxBytes / 1048576).toFixed(1)} MiB; jobs submitted ${r.jobsSubmitted}, in the store at the end ${r.jobsInStore} (retention allows ${r.jobsWithinRetention}); webhooks ${r.webhooksReceived}`,
    `checks: ${JSON.stringify(checks)}`,
    'wrote benchmarks/results/soak.json',
  ].join('\n') + '\n');
  if (Object.values(checks).some((c) => !c)) process.exitCode = 1;
}
