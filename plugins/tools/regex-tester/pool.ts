/**
 * A small pool of worker threads that evaluate regexes off the event loop.
 * A job that runs past its deadline has its worker terminated (the only way
 * to stop a catastrophically backtracking regex) and replaced by a fresh one;
 * so does a job whose client goes away. Jobs wait in a bounded FIFO queue
 * while every worker is busy.
 */
import { Worker } from 'node:worker_threads';
import { BadRequest, ServiceUnavailable } from '../../../core/errors.js';
import { WORKER_SOURCE } from './worker.js';

export interface RegexJob {
  readonly pattern: string;
  readonly flags: string;
  readonly input: string;
  readonly maxMatches: number;
  readonly replacement?: string;
}

export interface RegexMatch {
  match: string;
  index: number;
  end: number;
  groups: (string | null)[];
  named_groups: Record<string, string | null> | null;
  indices?: {
    match: [number, number];
    groups: ([number, number] | null)[];
    named_groups: Record<string, [number, number] | null> | null;
  };
}

export interface RegexResult {
  flags: string;
  match_count: number;
  truncated: boolean;
  matches: RegexMatch[];
  replaced?: string;
  elapsed_ms: number;
}

type Reply =
  | { readonly id: number; readonly ok: true; readonly result: RegexResult }
  | { readonly id: number; readonly ok: false; readonly field: string; readonly message: string };

interface Pending {
  readonly job: RegexJob & { readonly id: number };
  readonly timeoutMs: number;
  readonly resolve: (r: RegexResult) => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal | undefined;
  onAbort?: () => void;
  slot?: Slot;
  timer?: ReturnType<typeof setTimeout>;
  done: boolean;
}

interface Slot {
  readonly worker: Worker;
  /** The worker thread runs (its 'online' event fired): deadlines start at dispatch, not during boot. */
  ready: boolean;
  dead: boolean;
  pending?: Pending;
}

export interface PoolOptions {
  /** Worker threads (default 2). */
  readonly size?: number;
  /** Jobs that may wait for a worker; beyond this, 503 (default 256). */
  readonly maxQueue?: number;
  /** V8 heap cap per worker, in MiB (default 128): a runaway job dies alone. */
  readonly maxHeapMb?: number;
  /** Longest wait in the queue before the job fails with 503 (default 10 000 ms). */
  readonly maxWaitMs?: number;
}

export class RegexWorkerPool {
  private slots: Slot[] = [];
  private queue: Pending[] = [];
  private nextId = 1;
  readonly size: number;
  readonly maxQueue: number;
  private readonly maxHeapMb: number;
  private readonly maxWaitMs: number;

  constructor(opts: PoolOptions = {}) {
    this.size = opts.size ?? 2;
    this.maxQueue = opts.maxQueue ?? 256;
    this.maxHeapMb = opts.maxHeapMb ?? 128;
    this.maxWaitMs = opts.maxWaitMs ?? 10_000;
  }

  /** Spawn the workers (idempotent; `run` calls it too, so start() is optional). */
  start(): void {
    while (this.slots.length < this.size) {
      const slot = this.trySpawn();
      if (!slot) return;
      this.slots.push(slot);
    }
  }

  /** Terminate every worker; running and queued jobs fail with 503. */
  async stop(): Promise<void> {
    const slots = this.slots;
    this.slots = [];
    const gone = () => new ServiceUnavailable({ message: 'The regex evaluator is shutting down', retryAfter: 1 });
    for (const p of this.queue.splice(0)) this.settle(p, gone());
    for (const s of slots) {
      s.dead = true;
      if (s.pending) this.settle(s.pending, gone());
      s.pending = undefined;
    }
    await Promise.all(slots.map((s) => s.worker.terminate().catch(() => 0)));
  }

  /** Workers alive and jobs waiting (for tests and metrics). */
  stats(): { workers: number; busy: number; queued: number } {
    return { workers: this.slots.length, busy: this.slots.filter((s) => s.pending).length, queued: this.queue.length };
  }

  run(job: RegexJob, timeoutMs: number, signal?: AbortSignal): Promise<RegexResult> {
    if (signal?.aborted) return Promise.reject(aborted());
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(new ServiceUnavailable({ message: 'Too many regex evaluations are waiting; retry shortly', retryAfter: 1 }));
    }
    this.start();
    if (this.slots.length === 0) {
      return Promise.reject(new ServiceUnavailable({ message: 'The regex evaluator could not start a worker', retryAfter: 1 }));
    }
    return new Promise<RegexResult>((resolve, reject) => {
      const p: Pending = { job: { ...job, id: this.nextId++ }, timeoutMs, resolve, reject, signal, done: false };
      if (signal) {
        p.onAbort = () => this.abort(p);
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      this.queue.push(p);
      this.dispatch();
      if (!p.slot && !p.done) p.timer = setTimeout(() => this.onWaitedTooLong(p), this.maxWaitMs);
    });
  }

  /** A new worker, or undefined when the runtime refuses one (resource exhaustion). */
  private trySpawn(): Slot | undefined {
    try {
      return this.spawn();
    } catch {
      return undefined;
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, maxYoungGenerationSizeMb: 16 },
    });
    // Idle workers must not keep the process alive; pending jobs hold a timer.
    worker.unref();
    const slot: Slot = { worker, ready: false, dead: false };
    worker.on('online', () => {
      slot.ready = true;
      this.dispatch();
    });
    worker.on('message', (msg: Reply) => this.onReply(slot, msg));
    worker.on('error', (err) => this.onDeath(slot, err));
    worker.on('exit', () => this.onDeath(slot, undefined));
    return slot;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => s.ready && !s.dead && s.pending === undefined);
      if (!slot) return;
      const p = this.queue.shift()!;
      p.slot = slot;
      slot.pending = p;
      if (p.timer !== undefined) clearTimeout(p.timer);
      p.timer = setTimeout(() => this.onTimeout(p), p.timeoutMs);
      slot.worker.postMessage(p.job);
    }
  }

  private onReply(slot: Slot, msg: Reply): void {
    const p = slot.pending;
    if (!p || slot.dead || msg?.id !== p.job.id) return;
    slot.pending = undefined;
    if (msg.ok) this.settle(p, undefined, msg.result);
    else this.settle(p, BadRequest.of(msg.field, msg.message));
    this.dispatch();
  }

  private onWaitedTooLong(p: Pending): void {
    const qi = this.queue.indexOf(p);
    if (qi < 0) return;
    this.queue.splice(qi, 1);
    this.settle(p, new ServiceUnavailable({ message: 'Every regex worker stayed busy; retry shortly', retryAfter: 1 }));
  }

  private onTimeout(p: Pending): void {
    const slot = p.slot;
    if (!slot || slot.pending !== p) return;
    this.settle(
      p,
      BadRequest.of(
        'pattern',
        `evaluation exceeded ${p.timeoutMs} ms (likely catastrophic backtracking, e.g. nested quantifiers like (a+)+; simplify the pattern or shorten the input)`,
      ),
    );
    this.retire(slot);
  }

  private onDeath(slot: Slot, err: unknown): void {
    if (slot.dead) return;
    const p = slot.pending;
    if (p) {
      const oom = (err as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.settle(
        p,
        BadRequest.of('pattern', oom ? `evaluation ran out of memory (limit ${this.maxHeapMb} MiB)` : 'evaluation failed: the regex worker stopped unexpectedly'),
      );
    }
    this.retire(slot);
  }

  private abort(p: Pending): void {
    if (p.done) return;
    const qi = this.queue.indexOf(p);
    if (qi >= 0) this.queue.splice(qi, 1);
    this.settle(p, aborted());
    if (p.slot && p.slot.pending === p) this.retire(p.slot);
  }

  /** Kill a worker (running a job we gave up on, or dead) and put a fresh one in its place. */
  private retire(slot: Slot): void {
    const wasReady = slot.ready;
    slot.dead = true;
    slot.pending = undefined;
    void slot.worker.terminate().catch(() => 0);
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    const fresh = wasReady ? this.trySpawn() : undefined;
    if (fresh) {
      this.slots[i] = fresh;
      return;
    }
    // A worker that died before it came online would die again (and one that
    // cannot be spawned cannot): no respawn loop; when no worker is left, fail
    // the waiting jobs and let the next run() try afresh.
    this.slots.splice(i, 1);
    if (this.slots.every((s) => s.dead)) {
      for (const p of this.queue.splice(0)) {
        this.settle(p, new ServiceUnavailable({ message: 'The regex evaluator could not start a worker', retryAfter: 1 }));
      }
    }
  }

  private settle(p: Pending, error: unknown, value?: RegexResult): void {
    if (p.done) return;
    p.done = true;
    if (p.timer !== undefined) clearTimeout(p.timer);
    if (p.signal && p.onAbort) p.signal.removeEventListener('abort', p.onAbort);
    if (error !== undefined) p.reject(error);
    else p.resolve(value!);
  }
}

function aborted(): ServiceUnavailable {
  return new ServiceUnavailable({ message: 'The request was aborted before the regex evaluation finished', retryAfter: 0 });
}
