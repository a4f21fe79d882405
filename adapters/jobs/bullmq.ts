/**
 * The shared mode's job queue: BullMQ on Redis. API processes add one queue
 * entry per stored job; `scour worker` processes take them and run each job
 * through their JobRunner, which claims it in the store under a lease. The
 * store stays the truth: an entry whose job is finished, or held by a live
 * worker, is dropped; a job whose entry was lost (the API died between the
 * job's insert and the add, or Redis lost it) is still found by the runners'
 * poll of the store. So the queue only makes hand-over fast and fair across
 * machines; it never decides whether a job runs or is charged.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Effect } from 'effect';
import { ServiceUnavailable } from '../../core/errors.js';
import type { JobQueue } from '../../core/jobs.js';
import type { Logger } from '../../core/ports.js';
import type { JobRunner } from './runner.js';

export const BULK_QUEUE = 'bulk-jobs';

export interface BullOptions {
  readonly url: string;
  /** Key prefix (SCOUR_REDIS_PREFIX); BullMQ's keys go under `<prefix>bull`. */
  readonly prefix: string;
}

const bullPrefix = (prefix: string) => `${prefix}bull`;

export class BullJobQueue implements JobQueue {
  private readonly redis: Redis;
  private readonly queue: Queue;

  constructor(o: BullOptions, private readonly logger: Logger) {
    // Fail fast when Redis is away: the job is already stored, and the workers' poll finds it anyway.
    this.redis = new Redis(o.url, { maxRetriesPerRequest: 1 });
    this.redis.on('error', () => undefined);
    this.queue = new Queue(BULK_QUEUE, { connection: this.redis, prefix: bullPrefix(o.prefix) });
    this.queue.on('error', () => undefined);
  }

  /** Resolves once Redis answers (start-up fails clearly when it cannot). */
  async connect(): Promise<void> {
    await this.queue.waitUntilReady();
  }

  enqueue(jobId: string): Effect.Effect<void, ServiceUnavailable> {
    return Effect.tryPromise({
      try: async () => {
        await this.queue.add('run', { jobId }, { jobId, removeOnComplete: true, removeOnFail: 1000 });
      },
      catch: (e) => {
        this.logger.warn({ job_id: jobId, err: String(e) }, 'could not queue the job; a worker will find it in the store');
        return new ServiceUnavailable({ message: 'The job queue is unavailable', retryAfter: 1 });
      },
    });
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
  }
}

/** A BullMQ worker feeding the runner. Entries whose job cannot be claimed now are dropped (see above). */
export class BullJobWorker {
  private readonly redis: Redis;
  private readonly worker: Worker;

  constructor(o: BullOptions & { readonly concurrency: number; readonly lockMs: number }, runner: JobRunner, logger: Logger) {
    this.redis = new Redis(o.url, { maxRetriesPerRequest: null });
    this.redis.on('error', (e) => logger.warn({ err: String(e) }, 'job queue connection error'));
    this.worker = new Worker(
      BULK_QUEUE,
      async (entry) => {
        const jobId = (entry.data as { jobId?: unknown }).jobId;
        if (typeof jobId !== 'string') return;
        await runner.runNamed(jobId);
      },
      {
        connection: this.redis,
        prefix: bullPrefix(o.prefix),
        concurrency: o.concurrency,
        lockDuration: o.lockMs,
        autorun: false,
      },
    );
    this.worker.on('error', (e) => logger.warn({ err: String(e) }, 'job queue worker error'));
  }

  start(): void {
    void this.worker.run().catch(() => undefined);
  }

  async waitUntilReady(): Promise<void> {
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    // Do not wait for running entries: the runner's stop interrupts them and lets their leases lapse.
    await this.worker.close(true).catch(() => undefined);
    this.redis.disconnect();
  }
}
