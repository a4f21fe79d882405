/**
 * Wiring of durable jobs (asynchronous bulk scrape, crawls, and their
 * webhooks) for one process, by SCOUR_JOBS (config/env.ts jobsMode) and the
 * process's role (each kind of job runs through the executor its operation
 * registers with `provide`):
 *
 * | mode     | `scour serve`                          | `scour worker`                     |
 * |----------|----------------------------------------|------------------------------------|
 * | embedded | stores jobs, runs them and webhooks    | runs them too (polls the store)    |
 * | queue    | stores jobs, adds them to BullMQ       | takes them from BullMQ, runs them  |
 *
 * Every runner also polls the store, so a job resumed after a crash, or one
 * whose queue entry was lost, still runs.
 */
import type { JobExecutor, JobKind, JobQueue, JobsHost, JobStore } from '../core/jobs.js';
import type { Clock, Logger } from '../core/ports.js';
import { BullJobQueue, BullJobWorker } from '../adapters/jobs/bullmq.js';
import { LocalJobQueue } from '../adapters/jobs/local.js';
import { JobRunner } from '../adapters/jobs/runner.js';
import { deliverWebhook } from '../adapters/webhooks/deliver.js';
import { newWebhookSecret } from '../adapters/webhooks/sign.js';
import { jobsMode, type Settings } from './env.js';
import { egressPolicy } from './scrape.js';

export type Role = 'serve' | 'worker';

export interface Jobs {
  readonly host: JobsHost;
  readonly mode: 'embedded' | 'queue';
  /** This process's runner, when it runs jobs. */
  readonly runner: JobRunner | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Delivery polls: often enough that a retry is sent within a second of its time. */
const DELIVERY_POLL_MS = 1000;
/** Embedded: a job left by a dead process is resumed within a second of its lease lapsing. */
const EMBEDDED_POLL_MS = 1000;

export function createJobs(o: { settings: Settings; store: JobStore; clock: Clock; logger: Logger; role: Role }): Jobs {
  const { settings, store, clock, logger, role } = o;
  const mode = jobsMode(settings);
  const executors = new Map<JobKind, JobExecutor>();
  const egress = egressPolicy(settings.allowPrivateTargets);

  const runsJobs = role === 'worker' || mode === 'embedded';
  const runner = runsJobs
    ? new JobRunner({
      store,
      executor: (kind) => executors.get(kind),
      clock,
      logger,
      leaseMs: settings.jobLeaseMs,
      concurrency: settings.workerConcurrency,
      pollMs: mode === 'embedded' ? EMBEDDED_POLL_MS : Math.max(1000, Math.floor(settings.jobLeaseMs / 2)),
      deliveryPollMs: DELIVERY_POLL_MS,
      schedule: settings.webhookSchedule,
      deliveryLeaseMs: settings.webhookTimeoutMs + 30_000,
      newSecret: newWebhookSecret,
      deliver: (d) => deliverWebhook({
        url: d.url, secret: d.secrets, payload: d.payload, timeoutMs: settings.webhookTimeoutMs,
        allowPrivate: egress.allowPrivate, allowAddress: egress.allowAddress,
      }),
    })
    : undefined;

  let bullQueue: BullJobQueue | undefined;
  let bullWorker: BullJobWorker | undefined;
  let queue: JobQueue;
  if (mode === 'queue') {
    const redis = { url: settings.redisUrl!, prefix: settings.redisPrefix };
    bullQueue = new BullJobQueue(redis, logger);
    queue = bullQueue;
    if (role === 'worker') bullWorker = new BullJobWorker({ ...redis, concurrency: settings.workerConcurrency, lockMs: settings.jobLeaseMs }, runner!, logger);
  } else {
    queue = new LocalJobQueue(() => runner?.wake());
  }

  return {
    mode,
    runner,
    host: {
      store,
      queue,
      provide(e) {
        const kind = e.kind ?? 'bulk_scrape';
        if (executors.has(kind)) throw new Error(`JOBS_EXECUTOR_TAKEN: only one operation may run ${kind} jobs`);
        executors.set(kind, e);
      },
    },
    async start() {
      await bullQueue?.connect();
      if (bullWorker !== undefined) {
        bullWorker.start();
        await bullWorker.waitUntilReady();
      }
      runner?.start();
    },
    async stop() {
      await bullWorker?.close();
      await runner?.stop();
      await bullQueue?.close();
    },
  };
}
