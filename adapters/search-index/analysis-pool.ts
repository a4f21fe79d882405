/**
 * The search index's analysis off the event loop: worker threads
 * (analysis-worker.ts) that check, normalise and analyse documents
 * (engine.ts prepareDocument: tokens, stems, language detection, postings
 * packed with their positions encoded), so an import's analysis, the larger
 * part of its CPU, runs beside the writes and the searches instead of
 * between them. The results are the same PreparedDocuments as in-process
 * analysis gives (the same function runs in the worker); a test compares
 * them, and the hits of an index built each way.
 *
 * - A call is cut into chunks of `chunk` documents, all handed out at once
 *   (each to the next idle worker); `analyse` gives them back in order as
 *   they are done, so a writer stores the first while the others are
 *   analysed. Calls of fewer than `inlineBelow` documents (a crawl's page, a
 *   scrape's) are analysed in this thread: the hop would cost as much.
 *   With `analyseWhileStarting`, chunks queued before any worker is ready
 *   are analysed in this thread, one at a time, until one is.
 * - Workers start on the first call that needs them (or `start()`), and do
 *   not keep the process alive. A worker that dies (a crash, out of memory)
 *   is replaced, and its chunk is analysed in this thread: nothing is lost,
 *   nothing differs. Workers that die before they are ready three times in a
 *   row put the pool in-process for 30 s.
 * - `close()` ends every worker; calls after it analyse in-process.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { IndexDocument } from '../../core/search.js';
import type { Logger } from '../../core/ports.js';
import { latestByUrl, prepareAll, type DocumentAnalyser, type PreparedDocument } from './engine.js';
import { workerEntry, type WorkerEntry } from '../threads/worker-entry.js';

/** Main thread -> worker: documents to prepare (already checked). */
export interface AnalysisJob {
  readonly id: number;
  readonly documents: readonly IndexDocument[];
}

/** A prepared document as it crosses: its terms joined by spaces. */
export type WirePrepared = Omit<PreparedDocument, 'postings'> & {
  readonly postings: { readonly terms: string; readonly tf: Uint32Array; readonly ends: Uint32Array; readonly positions: Uint8Array };
};

/** Worker -> main thread. */
export type AnalysisReply =
  | { readonly id: 0; readonly ready: true }
  | { readonly id: number; readonly prepared: readonly WirePrepared[] }
  | { readonly id: number; readonly error: string };

export interface AnalysisPoolOptions {
  /** Worker threads (default: available parallelism, at most 4); 0: every call in-process. */
  readonly workers?: number;
  /** Documents per chunk handed to a worker (default 100). */
  readonly chunk?: number;
  /** Calls with fewer documents are analysed in-process (default 16). */
  readonly inlineBelow?: number;
  readonly logger?: Logger;
  /**
   * While no worker is ready yet (they take a second or more to load the
   * analysers), analyse queued chunks in this thread, one at a time, so the
   * first import after start-up does not wait for them (default false; the
   * composition root turns it on).
   */
  readonly analyseWhileStarting?: boolean;
  /** Tests only: a document titled `scour-test:crash` ends its worker (analysis-worker.ts). */
  readonly testHooks?: boolean;
}

const BOOT_FAILURES = 3;
const DEGRADED_MS = 30_000;

interface Job {
  readonly documents: readonly IndexDocument[];
  readonly resolve: (p: PreparedDocument[]) => void;
  readonly reject: (e: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  dead: boolean;
  job?: { readonly id: number; readonly job: Job };
}

const fromWire = (w: WirePrepared): PreparedDocument => ({
  ...w,
  postings: { terms: w.postings.terms === '' ? [] : w.postings.terms.split(' '), tf: w.postings.tf, ends: w.postings.ends, positions: w.postings.positions },
});

export class AnalysisPool implements DocumentAnalyser {
  readonly size: number;
  private readonly chunk: number;
  private readonly inlineBelow: number;
  private readonly logger: Logger | undefined;
  private readonly testHooks: boolean;
  private readonly analyseWhileStarting: boolean;
  private entry: WorkerEntry | undefined;
  private slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private bootFailures = 0;
  private degradedUntil = 0;
  private closed = false;
  /** A queued chunk being analysed in this thread while no worker is ready yet (see dispatch). */
  private bridging = false;
  readonly counts = { pooled: 0, inline: 0, started: 0, replaced: 0, bridged: 0 };

  constructor(options: AnalysisPoolOptions = {}) {
    const workers = options.workers ?? Math.min(4, availableParallelism());
    if (!Number.isInteger(workers) || workers < 0) throw new Error('workers must be an integer >= 0');
    this.size = workers;
    this.chunk = Math.max(1, Math.floor(options.chunk ?? 100));
    this.inlineBelow = Math.max(0, Math.floor(options.inlineBelow ?? 16));
    this.logger = options.logger;
    this.testHooks = options.testHooks === true;
    this.analyseWhileStarting = options.analyseWhileStarting === true;
  }

  async prepare(documents: readonly IndexDocument[]): Promise<PreparedDocument[]> {
    const out: PreparedDocument[] = [];
    for await (const part of this.analyse(latestByUrl(documents))) out.push(...part);
    return out;
  }

  /**
   * Prepared documents in order, a chunk at a time; `documents` must be
   * checked and of distinct URLs (engine.ts latestByUrl). Every chunk is
   * handed out at once; a consumer that stops early leaves the rest to finish
   * unobserved.
   */
  async *analyse(documents: readonly IndexDocument[]): AsyncGenerator<PreparedDocument[]> {
    if (documents.length === 0) return;
    if (this.closed || this.size === 0 || documents.length < this.inlineBelow || Date.now() < this.degradedUntil) {
      this.counts.inline++;
      yield await prepareAll(documents);
      return;
    }
    const parts: Promise<PreparedDocument[]>[] = [];
    for (let i = 0; i < documents.length; i += this.chunk) {
      const p = new Promise<PreparedDocument[]>((resolve, reject) => this.submit({ documents: documents.slice(i, i + this.chunk), resolve, reject }));
      p.catch(() => undefined);
      parts.push(p);
    }
    for (const p of parts) yield await p;
  }

  /** Start every worker now (otherwise the first call that needs them does). */
  start(): void {
    if (!this.closed) this.fill();
  }

  /**
   * Starts the workers and resolves once every one has loaded the analysers
   * (or the pool has given up on them and analyses in-process, or is
   * closed): after it, an import pays no thread start-up.
   */
  ready(): Promise<void> {
    this.start();
    return new Promise<void>((resolve) => {
      const check = () => {
        if (this.settled()) resolve();
        else setTimeout(check, 20).unref();
      };
      check();
    });
  }

  private settled(): boolean {
    return this.closed || this.size === 0 || Date.now() < this.degradedUntil
      || (this.slots.length >= this.size && this.slots.every((s) => s.ready || s.dead));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const slots = this.slots.splice(0);
    // What was queued or running is analysed here instead: a call in flight still completes.
    for (const job of this.queue.splice(0)) this.inline(job);
    await Promise.all(slots.map(async (s) => {
      s.dead = true;
      if (s.job !== undefined) this.inline(s.job.job);
      s.job = undefined;
      await s.worker.terminate().catch(() => undefined);
    }));
  }

  /** The worker threads' ids (tests check none is left). */
  threadIds(): number[] {
    return this.slots.map((s) => s.worker.threadId);
  }

  private inline(job: Job): void {
    this.counts.inline++;
    prepareAll(job.documents).then(job.resolve, job.reject);
  }

  private submit(job: Job): void {
    if (this.closed || Date.now() < this.degradedUntil) {
      this.inline(job);
      return;
    }
    this.queue.push(job);
    this.fill();
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => s.ready && !s.dead && s.job === undefined);
      if (slot === undefined) {
        this.bridge();
        return;
      }
      const job = this.queue.shift()!;
      const id = this.nextId++;
      slot.job = { id, job };
      try {
        slot.worker.postMessage({ id, documents: job.documents } satisfies AnalysisJob);
      } catch {
        // A document that cannot cross threads (a getter, a symbol): analysed here.
        slot.job = undefined;
        this.inline(job);
      }
    }
  }

  /**
   * While no worker is ready (they take a second or more to load the
   * analysers), this thread analyses queued chunks one at a time (prepareAll,
   * in slices that yield), so a first call after start-up does not wait for
   * them; once one is ready, the rest go to the workers.
   */
  private bridge(): void {
    if (!this.analyseWhileStarting || this.bridging || this.queue.length === 0 || this.slots.some((s) => s.ready && !s.dead)) return;
    const job = this.queue.shift()!;
    this.bridging = true;
    this.counts.bridged++;
    prepareAll(job.documents).then(job.resolve, job.reject).finally(() => {
      this.bridging = false;
      if (!this.closed) this.dispatch();
    });
  }

  private fill(): void {
    while (!this.closed && this.slots.length < this.size && Date.now() >= this.degradedUntil) {
      try {
        this.slots.push(this.spawn());
      } catch (e) {
        this.degrade(`a worker thread could not be started: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
    }
  }

  private spawn(): Slot {
    this.entry ??= workerEntry(import.meta.url, './analysis-worker');
    const worker = new Worker(this.entry.source, { eval: this.entry.eval, workerData: { testHooks: this.testHooks } });
    worker.unref();
    this.counts.started++;
    const slot: Slot = { worker, ready: false, dead: false };
    worker.on('message', (m: AnalysisReply) => this.onMessage(slot, m));
    worker.on('error', (e) => this.onDeath(slot, e));
    worker.on('exit', (code) => this.onDeath(slot, undefined, code));
    return slot;
  }

  private onMessage(slot: Slot, m: AnalysisReply): void {
    if (slot.dead) return;
    if ('ready' in m) {
      slot.ready = true;
      this.bootFailures = 0;
      this.dispatch();
      return;
    }
    const running = slot.job;
    if (running === undefined || running.id !== m.id) return;
    slot.job = undefined;
    this.counts.pooled++;
    if ('error' in m) running.job.reject(new TypeError(m.error));
    else running.job.resolve(m.prepared.map(fromWire));
    this.dispatch();
  }

  private onDeath(slot: Slot, err: Error | undefined, code?: number): void {
    if (slot.dead) return;
    slot.dead = true;
    void slot.worker.terminate().catch(() => undefined);
    const running = slot.job;
    slot.job = undefined;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    if (running !== undefined) {
      this.logger?.warn({ reason: err?.message ?? `exit code ${code}` }, 'search analysis worker died; its documents are analysed in-process');
      this.inline(running.job);
    }
    if (this.closed) return;
    this.counts.replaced++;
    if (!slot.ready && ++this.bootFailures >= BOOT_FAILURES) {
      this.degrade('search analysis workers keep dying before they are ready');
      return;
    }
    this.fill();
    this.dispatch();
  }

  private degrade(reason: string): void {
    this.degradedUntil = Date.now() + DEGRADED_MS;
    this.bootFailures = 0;
    this.logger?.error({ reason, for_s: DEGRADED_MS / 1000 }, 'search analysis working in-process');
    for (const job of this.queue.splice(0)) this.inline(job);
  }
}
