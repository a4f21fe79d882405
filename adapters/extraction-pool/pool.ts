/**
 * The extraction pool: worker threads (node:worker_threads) that parse pages
 * and run the built-in extractors off the main thread, behind the core's
 * ExtractionPort (core/extraction.ts). The main thread only posts the page
 * and takes the result back, so it stays free for I/O while the workers use
 * the other cores.
 *
 * - Size: `workers` threads (default: the machine's available parallelism,
 *   at least 1; 0: every page in-process, for debugging). Started lazily, on
 *   the first page that needs one, all at once; `start()` starts them ahead.
 * - A page goes to a worker only when that can help (`route`); otherwise
 *   it is extracted in-process, with the same code:
 *   - small pages (fewer than `inlineBelow` characters of HTML): the hop to
 *     a worker costs the main thread about as much as the extraction;
 *   - a process that may use one core only (its CPU affinity, checked each
 *     second), for pages under ALWAYS_POOLED_CHARS: the workers would take
 *     turns with the main thread, adding CPU and no parallelism
 *     (bench:scrape holds the server to one core: -12 to -19% throughput
 *     with every page in workers, none with this rule);
 *   - a lone page on a quiet server under ALWAYS_POOLED_CHARS: the main
 *     thread would only wait for the worker, and the hop (two copies, two
 *     thread wake-ups) adds 1-1.5 ms to a 180 KB page. Lone: the caller
 *     says so (`alone`: a single scrape) and no other request is in flight
 *     (`othersInFlight`), with no page in the pool; a page of a batch
 *     (`alone: false`) always goes to a worker. Without those hints, the
 *     event loop less than LONE_ELU busy since the previous page counts as
 *     quiet. Such a page has no deadline, as every page had before the
 *     pool; pages from ALWAYS_POOLED_CHARS up always get one, and so does
 *     every page while the server is busy.
 * - Back-pressure: at most `maxQueue` pages wait for a worker (default
 *   QUEUE_PER_WORKER per worker); past that, callers wait their turn (FIFO)
 *   before their page is queued. The queue never grows past its bound; the
 *   waiting callers are bounded by the callers' own concurrency (a bulk
 *   request's concurrent_requests, the plan's concurrency slots).
 * - A worker runs one page at a time, with a deadline (`timeoutMs`) from the
 *   moment the page is handed to it. A worker that crashes, exits, runs out
 *   of its heap (`maxHeapMb`) or passes the deadline is terminated and
 *   replaced; its page fails with TargetResponseInvalid (502
 *   TARGET_RESPONSE_INVALID: nothing is charged for a failed page), and the
 *   other pages go on.
 * - Workers that cannot start (three in a row die before they are ready)
 *   put the pool in-process for DEGRADED_MS, so scrapes still work.
 * - `close()` fails what is queued or running with ServiceUnavailable and
 *   terminates every worker: no thread outlives it.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Effect } from 'effect';
import { Unpackr } from 'msgpackr';
import {
  type ExtractionFailure, type ExtractionPort, type ExtractionRequest, type ExtractionResult, type ExtractorSet, runExtractors,
} from '../../core/extraction.js';
import { ServiceUnavailable, TargetResponseInvalid } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import type { JobMessage, ResultEncoding, WorkerMessage, WorkerSetup } from './protocol.js';
import { workerEntry, type WorkerEntry } from '../threads/worker-entry.js';

/** Pages queued per worker at most (the queue's bound is this times the workers). */
export const QUEUE_PER_WORKER = 4;
/** V8 old-space cap of one worker, MiB: a page whose tree outgrows it fails alone (the worker is replaced). */
export const WORKER_HEAP_MB = 1024;
/**
 * V8 young-generation size of one worker, MiB. A page's tree dies young, so
 * a roomy young generation scavenges less and promotes less: per 100 Zyte
 * pages the process used 571-609 ms of CPU with 128, 626-662 with 64,
 * 649-657 with 256 and 707-754 with 32 or V8's default (benchmarks/bulk/pool.mjs),
 * for about 150 MiB of RSS per busy worker instead of 90.
 */
export const WORKER_YOUNG_MB = 128;
/**
 * From this many characters of HTML (256 KiB: 22 of the 181 Zyte pages, and
 * every input of test/extractors/hostile.test.ts but the empty page, 200 KB
 * of binary junk and a 100 KB pre) a page goes to a
 * worker even alone or on one core: big pages are where a pathological input
 * costs most, so they always get the deadline and the heap cap.
 */
export const ALWAYS_POOLED_CHARS = 256 * 1024;
/** The event loop busier than this since the previous page: the main thread has other work, so pages go to workers. */
export const LONE_ELU = 0.75;
/** How often the process's usable cores are read again (sched_getaffinity: taskset may change them). */
const CORES_EVERY_MS = 1000;
/** Workers dying before they are ready, in a row, that make the pool work in-process for a while. */
const BOOT_FAILURES = 3;
const DEGRADED_MS = 30_000;

export interface ExtractionPoolOptions {
  /** Worker threads; 0: every page in-process. */
  readonly workers: number;
  /** A page's deadline in a worker, ms, from when the worker gets it. */
  readonly timeoutMs: number;
  /** Pages with fewer characters of HTML than this are extracted in-process (0: none). */
  readonly inlineBelow: number;
  /** Pages waiting for a worker, at most; default QUEUE_PER_WORKER x workers. */
  readonly maxQueue?: number;
  /** The module the workers import: it exports `parsePage` and `builtinExtractors`. */
  readonly module: URL;
  /** The same parser and extractors, loaded in this thread: in-process extraction, and which extractors `runs`. */
  readonly local: ExtractorSet<unknown>;
  readonly maxHeapMb?: number;
  readonly youngGenMb?: number;
  readonly encoding?: ResultEncoding;
  /** Tests only: lets marker comments in a page make a worker exit, crash or hang (worker.ts). Never set from configuration. */
  readonly testHooks?: boolean;
  /** false: every page of `inlineBelow` characters or more goes to a worker, whatever the load and the cores (tests, benchmarks). Default true. */
  readonly adaptive?: boolean;
  /**
   * Requests in flight besides the caller's (the HTTP app's count minus one):
   * a page sent `alone` stays in-process only when this is 0. Unset: the
   * event loop's utilisation since the previous page decides (LONE_ELU).
   */
  readonly othersInFlight?: () => number;
  readonly logger?: Logger;
}

interface Job {
  readonly message: JobMessage;
  readonly resume: (outcome: Effect.Effect<ExtractionResult, ExtractionFailure>) => void;
  state: 'waiting' | 'queued' | 'running' | 'done';
  timer?: ReturnType<typeof setTimeout>;
}

interface Slot {
  readonly worker: Worker;
  /** The worker imported the extractors and said so: deadlines start at dispatch, never during its boot. */
  ready: boolean;
  dead: boolean;
  job?: Job;
  readonly exited: Promise<void>;
}

export interface ExtractionPoolStats {
  /** Worker threads alive (booting or ready). */
  readonly workers: number;
  readonly ready: number;
  readonly busy: number;
  /** Pages in the bounded queue. */
  readonly queued: number;
  /** Callers waiting for room in the queue (back-pressure). */
  readonly waiting: number;
  readonly maxQueue: number;
  /** Pages extracted in workers, and in-process (small pages, 0 workers, degraded). */
  readonly pooled: number;
  readonly inline: number;
  /** Workers started in all, and replaced after a crash, an exit, running out of memory or a deadline. */
  readonly started: number;
  readonly replaced: number;
}

const unreadable = (message: string, details: string) => new TargetResponseInvalid({ message, details });
const stopping = () => new ServiceUnavailable({ message: 'The server is shutting down', retryAfter: 1 });

/** The module as a worker can import it: from the TypeScript sources, the .ts file a .js name stands for. */
function moduleHref(module: URL): string {
  if (module.protocol === 'file:' && module.pathname.endsWith('.js') && !existsSync(fileURLToPath(module))) {
    const ts = new URL(module.href.replace(/\.js$/, '.ts'));
    if (existsSync(fileURLToPath(ts))) return ts.href;
  }
  return module.href;
}

export class ExtractionPool implements ExtractionPort {
  readonly size: number;
  readonly maxQueue: number;
  private readonly timeoutMs: number;
  private readonly inlineBelow: number;
  private readonly local: ExtractorSet<unknown>;
  private readonly mine: ReadonlySet<object>;
  private readonly setup: WorkerSetup;
  private readonly maxHeapMb: number;
  private readonly youngGenMb: number;
  private readonly logger: Logger | undefined;
  private readonly unpackr = new Unpackr({ useRecords: false });
  private entry: WorkerEntry | undefined;
  private slots: Slot[] = [];
  /** Every worker not yet exited, retired ones included: close() waits for all of them. */
  private readonly alive = new Set<Slot>();
  private readonly queue: Job[] = [];
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private bootFailures = 0;
  private degradedUntil = 0;
  private closing: Promise<void> | undefined;
  private readonly adaptive: boolean;
  private readonly othersInFlight: (() => number) | undefined;
  private cores = 0;
  private coresAt = -Infinity;
  private elu: EventLoopUtilization | undefined;
  private readonly counts = { pooled: 0, inline: 0, started: 0, replaced: 0 };

  constructor(options: ExtractionPoolOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 0) throw new Error('workers must be an integer >= 0');
    this.size = options.workers;
    this.maxQueue = Math.max(1, options.maxQueue ?? QUEUE_PER_WORKER * Math.max(1, this.size));
    this.timeoutMs = options.timeoutMs;
    this.inlineBelow = options.inlineBelow;
    this.local = options.local;
    this.mine = new Set(options.local.extractors);
    this.setup = { module: moduleHref(options.module), encoding: options.encoding ?? 'clone', testHooks: options.testHooks === true };
    this.maxHeapMb = options.maxHeapMb ?? WORKER_HEAP_MB;
    this.youngGenMb = options.youngGenMb ?? WORKER_YOUNG_MB;
    this.logger = options.logger;
    this.adaptive = options.adaptive !== false;
    this.othersInFlight = options.othersInFlight;
  }

  runs(extractor: object): boolean {
    return this.mine.has(extractor);
  }

  extract(request: ExtractionRequest): Effect.Effect<ExtractionResult, ExtractionFailure> {
    if (this.closing !== undefined) return Effect.fail(stopping());
    if (!this.route(typeof request.page.html === 'string' ? request.page.html.length : 0, request.alone)) return this.inline(request);
    return Effect.callback<ExtractionResult, ExtractionFailure>((resume) => {
      const job: Job = { message: { id: this.nextId++, page: request.page, ids: request.ids, options: request.options }, resume, state: 'waiting' };
      this.submit(job);
      return Effect.sync(() => this.abandon(job));
    });
  }

  /** Whether a page of `size` characters goes to a worker (see the module's comment). */
  private route(size: number, alone: boolean | undefined): boolean {
    if (this.size === 0 || size < this.inlineBelow || Date.now() < this.degradedUntil) return false;
    if (!this.adaptive) return true;
    const now = performance.now();
    if (now - this.coresAt >= CORES_EVERY_MS) {
      this.cores = availableParallelism();
      this.coresAt = now;
    }
    if (size >= ALWAYS_POOLED_CHARS) return true;
    if (this.cores < 2) return false;
    // How busy the event loop was since the previous page (the first page: since the process started).
    const busy = performance.eventLoopUtilization(this.elu).utilization;
    this.elu = performance.eventLoopUtilization();
    if (this.queue.length + this.waiting.length > 0 || this.slots.some((s) => s.job !== undefined)) return true;
    // A page of a batch: the workers run it beside its siblings.
    if (alone === false) return true;
    // The caller's only page: in-process when no other request is in flight. The utilisation cannot tell:
    // one client sending scrapes one after another keeps the loop busy with its own previous requests.
    if (alone === true && this.othersInFlight !== undefined) return this.othersInFlight() > 0;
    return busy >= LONE_ELU;
  }

  /** Start every worker now and wait until they are ready (otherwise the first pooled page starts them). */
  async start(): Promise<void> {
    if (this.closing !== undefined || this.size === 0) return;
    this.fill();
    await Promise.all(this.slots.map((s) => (s.ready ? undefined : new Promise<void>((resolve, reject) => {
      const onMessage = (m: WorkerMessage) => { if (m.type === 'ready') done(); };
      const onExit = () => done(new Error('an extraction worker stopped before it was ready'));
      const done = (e?: Error) => {
        s.worker.off('message', onMessage);
        s.worker.off('exit', onExit);
        if (e) reject(e);
        else resolve();
      };
      s.worker.on('message', onMessage);
      s.worker.on('exit', onExit);
    }))));
  }

  stats(): ExtractionPoolStats {
    return {
      workers: this.slots.length,
      ready: this.slots.filter((s) => s.ready).length,
      busy: this.slots.filter((s) => s.job !== undefined).length,
      queued: this.queue.length,
      waiting: this.waiting.length,
      maxQueue: this.maxQueue,
      ...this.counts,
    };
  }

  /** The worker threads' ids (tests check none is left). */
  threadIds(): number[] {
    return this.slots.map((s) => s.worker.threadId);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const slots = this.slots;
      this.slots = [];
      for (const job of [...this.waiting.splice(0), ...this.queue.splice(0)]) this.finish(job, Effect.fail(stopping()));
      for (const s of slots) {
        s.dead = true;
        if (s.job !== undefined) this.finish(s.job, Effect.fail(stopping()));
        s.job = undefined;
        void s.worker.terminate().catch(() => undefined);
      }
      await Promise.all([...this.alive].map((s) => s.exited));
    })();
    return this.closing;
  }

  private inline(request: ExtractionRequest): Effect.Effect<ExtractionResult, ExtractionFailure> {
    this.counts.inline++;
    return Effect.suspend(() => {
      let page: unknown;
      try {
        page = this.local.parse(request.page);
      } catch (e) {
        return Effect.fail(unreadable('The page could not be read', `the HTML parser failed: ${e instanceof Error ? e.message : String(e)}`));
      }
      return Effect.promise(() => runExtractors(this.local, page, request.ids, request.options));
    });
  }

  private submit(job: Job): void {
    if (this.queue.length < this.maxQueue && this.waiting.length === 0) {
      job.state = 'queued';
      this.queue.push(job);
    } else {
      this.waiting.push(job);
    }
    this.fill();
    this.dispatch();
  }

  /** The caller gave up (client gone): a waiting or queued page leaves; a running one is left to finish, its result dropped. */
  private abandon(job: Job): void {
    const from = job.state === 'waiting' ? this.waiting : job.state === 'queued' ? this.queue : undefined;
    const at = from?.indexOf(job) ?? -1;
    if (at >= 0) from!.splice(at, 1);
    // A running page keeps its deadline: a page that hangs still costs its worker.
    if (job.state !== 'running') this.admit();
    job.state = 'done';
  }

  /** Move waiting callers into the queue while it has room. */
  private admit(): void {
    while (this.waiting.length > 0 && this.queue.length < this.maxQueue) {
      const job = this.waiting.shift()!;
      job.state = 'queued';
      this.queue.push(job);
    }
  }

  private dispatch(): void {
    for (;;) {
      this.admit();
      if (this.queue.length === 0) return;
      const slot = this.slots.find((s) => s.ready && !s.dead && s.job === undefined);
      if (slot === undefined) return;
      this.run(slot, this.queue.shift()!);
    }
  }

  private run(slot: Slot, job: Job): void {
    job.state = 'running';
    slot.job = job;
    job.timer = setTimeout(() => this.onDeadline(slot, job), this.timeoutMs);
    try {
      slot.worker.postMessage(job.message);
    } catch (e) {
      // Options that cannot cross threads: this page fails, the worker is untouched.
      slot.job = undefined;
      this.finish(job, Effect.fail(unreadable('The page could not be extracted', `it could not be sent to an extraction worker: ${e instanceof Error ? e.message : String(e)}`)));
    }
  }

  private finish(job: Job, outcome: Effect.Effect<ExtractionResult, ExtractionFailure>): void {
    if (job.timer !== undefined) clearTimeout(job.timer);
    if (job.state === 'done') return;
    job.state = 'done';
    job.resume(outcome);
  }

  /** Start workers up to the pool's size (or until the runtime refuses one). */
  private fill(): void {
    while (this.closing === undefined && this.slots.length < this.size) {
      try {
        this.slots.push(this.spawn());
      } catch (e) {
        this.degrade(`a worker thread could not be started: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
    }
  }

  private spawn(): Slot {
    this.entry ??= workerEntry(import.meta.url, './worker');
    const worker = new Worker(this.entry.source, {
      eval: this.entry.eval,
      workerData: this.setup,
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, maxYoungGenerationSizeMb: this.youngGenMb },
    });
    // Idle workers never keep the process alive; a running page holds its deadline timer.
    worker.unref();
    this.counts.started++;
    let exited!: () => void;
    const slot: Slot = { worker, ready: false, dead: false, exited: new Promise<void>((r) => { exited = r; }) };
    worker.on('message', (m: WorkerMessage) => this.onMessage(slot, m));
    worker.on('error', (e) => this.onDeath(slot, e));
    this.alive.add(slot);
    worker.on('exit', (code) => {
      this.alive.delete(slot);
      exited();
      this.onDeath(slot, undefined, code);
    });
    return slot;
  }

  private onMessage(slot: Slot, m: WorkerMessage): void {
    if (slot.dead) return;
    if (m.type === 'ready') {
      slot.ready = true;
      this.bootFailures = 0;
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (job === undefined || job.message.id !== m.id) return;
    slot.job = undefined;
    if (job.timer !== undefined) clearTimeout(job.timer);
    if (job.state === 'running') {
      this.counts.pooled++;
      if (m.type === 'failed') this.finish(job, Effect.fail(unreadable('The page could not be read', m.message)));
      else this.finish(job, this.decode(m));
    }
    this.dispatch();
  }

  private decode(m: Extract<WorkerMessage, { type: 'done' }>): Effect.Effect<ExtractionResult, ExtractionFailure> {
    try {
      if (m.bytes !== undefined) return Effect.succeed(this.unpackr.unpack(m.bytes) as ExtractionResult);
      if (m.json !== undefined) return Effect.succeed(JSON.parse(m.json) as ExtractionResult);
      return Effect.succeed(m.result!);
    } catch (e) {
      return Effect.fail(unreadable('The page could not be extracted', `its result could not be decoded: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  private onDeadline(slot: Slot, job: Job): void {
    if (slot.job !== job || slot.dead) return;
    const seconds = Math.round(this.timeoutMs / 100) / 10;
    this.logger?.warn({ deadline_s: seconds }, 'extraction worker passed its deadline on a page; replacing it');
    this.finish(job, Effect.fail(unreadable('The page could not be extracted in time', `extraction took longer than ${seconds} s`)));
    this.retire(slot);
  }

  private onDeath(slot: Slot, err: Error | undefined, code?: number): void {
    if (slot.dead) return;
    const job = slot.job;
    if (job !== undefined) {
      const oom = (err as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      const reason = oom ? `it ran out of memory (limit ${this.maxHeapMb} MiB)` : err !== undefined ? `it crashed: ${err.message}` : `it exited (code ${code})`;
      this.logger?.warn({ reason }, 'extraction worker died on a page; replacing it');
      this.finish(job, Effect.fail(unreadable('The page could not be extracted', `the extraction worker stopped on this page: ${reason}`)));
    } else if (!slot.ready) {
      this.logger?.error({ err: err?.message ?? `exit code ${code}` }, 'extraction worker failed to start');
    }
    this.retire(slot);
  }

  /** Terminate a worker (dead, or past its deadline) and start another in its place. */
  private retire(slot: Slot): void {
    const healthy = slot.ready;
    slot.dead = true;
    slot.job = undefined;
    void slot.worker.terminate().catch(() => undefined);
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    if (this.closing !== undefined) return;
    this.counts.replaced++;
    if (!healthy && ++this.bootFailures >= BOOT_FAILURES) {
      this.degrade('extraction workers keep dying before they are ready');
      return;
    }
    this.fill();
    this.dispatch();
  }

  /** Workers cannot start: extract in-process for a while (pages queued or waiting included) rather than fail every page. */
  private degrade(reason: string): void {
    this.degradedUntil = Date.now() + DEGRADED_MS;
    this.bootFailures = 0;
    this.logger?.error({ reason, for_s: DEGRADED_MS / 1000 }, 'extraction pool working in-process');
    for (const job of [...this.queue.splice(0), ...this.waiting.splice(0)]) {
      const { page, ids, options } = job.message;
      job.state = 'running';
      Effect.runPromiseExit(this.inline({ page, ids, options })).then((exit) => {
        this.finish(job, exit);
      });
    }
  }
}
