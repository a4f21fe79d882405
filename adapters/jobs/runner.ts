/**
 * Runs durable jobs and their webhook deliveries in this process, from the
 * JobStore: claims a job under a lease (renewed while it runs; a lost lease
 * stops the run, a process that dies leaves the job to whoever claims it
 * after the lease), hands it to the executor of its kind (bulk scrape,
 * crawl), charges each item as it finishes (the store charges an item at most
 * once) and records the frontier entries a crawl finds with it, closes the
 * job and its delivery in one transaction, records the progress the
 * executor reports (under this worker, so a run that lost its job writes
 * nothing), then sends due deliveries,
 * signed, on the retry schedule. The same runner serves the embedded mode
 * (woken by the API process itself) and `scour worker` (fed by BullMQ, see
 * ./bullmq.ts).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createHash, randomBytes } from 'node:crypto';
import { Cause, Effect, Exit } from 'effect';
import { ServiceUnavailable } from '../../core/errors.js';
import {
  BULK_OPERATION, JOB_KINDS, JobFailure, PROGRESS_MAX_BYTES, progressJson, type ClaimedJob, type DueDelivery, type JobEnd, type JobExecutor, type JobKind, type JobStore, type JobView,
} from '../../core/jobs.js';
import type { Clock, Logger } from '../../core/ports.js';
import { newDeliveryId } from '../webhooks/deliver.js';
import { buildPayload, nextAttemptDelayMs, type DeliveryAttempt, type WebhookEvent, type WebhookPayload } from '../../core/webhooks.js';

export interface RunnerOptions {
  readonly store: JobStore;
  /** The executor registered for a kind (undefined: no operation runs that kind; such jobs are not claimed). */
  readonly executor: (kind: JobKind) => JobExecutor | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly leaseMs: number;
  /** Jobs this process runs at once. */
  readonly concurrency: number;
  /** How often to look for jobs nobody announced (resumed after a crash, lost by the queue). */
  readonly pollMs: number;
  /** How often to look for due webhook deliveries. */
  readonly deliveryPollMs: number;
  /** Seconds between webhook attempts. */
  readonly schedule: readonly number[];
  /** One signed attempt (adapters/webhooks/deliver.ts); never throws. */
  readonly deliver: (d: { url: string; secrets: readonly string[]; payload: WebhookPayload }) => Promise<DeliveryAttempt>;
  /** A new signing secret, for an account that has none yet. */
  readonly newSecret: () => string;
  /** How long a delivery claimed for sending stays this process's (more than one attempt's timeout). */
  readonly deliveryLeaseMs: number;
  readonly random?: () => number;
  readonly workerId?: string;
}

const run = <A>(e: Effect.Effect<A, ServiceUnavailable>): Promise<A> => Effect.runPromise(e);

const DEFAULT_EVENTS = { completed: 'bulk_scrape.completed', failed: 'bulk_scrape.failed' } as const;

/**
 * Runs of one job in this process that may end in an internal error (a
 * defect: a bug, an unexpected throw) before the job is failed. The store
 * being unavailable is not counted: such a job resumes once the store is
 * back. Without this bound a job that always hits the same bug would be
 * retried every lease, forever.
 */
export const MAX_DEFECT_RUNS = 3;

/**
 * This machine, as of this boot: the host name and a digest of the kernel's
 * boot id (so a pid is only ever judged on the machine, and the boot, it
 * belongs to, even where containers on several machines share a host name).
 */
function machineTag(): string {
  let boot = 'noboot';
  try {
    boot = createHash('sha256').update(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()).digest('hex').slice(0, 8);
  } catch {
    // Not Linux: dead holders are then only recovered by their lease.
  }
  return `${hostname().replaceAll(':', '_')}:${boot}`;
}

/** Worker ids are `<host>:<boot>:<pid>:<random>`. */
export function workerIdFor(pid: number, tag = machineTag()): string {
  return `${tag}:${pid}:${randomBytes(4).toString('hex')}`;
}

/** A worker id of this machine and boot whose process no longer exists (it was killed): its jobs need not wait for their leases. */
export function isDeadLocalWorker(workerId: string, tag: string): boolean {
  if (!workerId.startsWith(`${tag}:`) || tag.endsWith(':noboot')) return false;
  const pid = Number(workerId.slice(tag.length + 1).split(':')[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export class JobRunner {
  readonly workerId: string;
  private readonly active = new Map<string, AbortController>();
  private readonly runs = new Set<Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private pumping = false;
  private pumpAgain = false;
  private sending: Promise<void> | undefined;
  private sendAgain = false;
  private stopping = false;
  /** Runs of a job that ended in a defect, by job id (see MAX_DEFECT_RUNS). */
  private readonly defects = new Map<string, number>();

  private readonly tag = machineTag();

  constructor(private readonly o: RunnerOptions) {
    this.workerId = o.workerId ?? workerIdFor(process.pid, this.tag);
  }

  /** Start polling: jobs left by a dead process and due deliveries are picked up from here on. */
  start(): void {
    const jobs = setInterval(() => this.wake(), this.o.pollMs);
    const deliveries = setInterval(() => this.wakeDeliveries(), this.o.deliveryPollMs);
    jobs.unref();
    deliveries.unref();
    this.timers.push(jobs, deliveries);
    this.wake();
    this.wakeDeliveries();
  }

  /** Jobs running in this process now. */
  get running(): number {
    return this.active.size;
  }

  /** Claim waiting jobs while there is room (a new job was stored, or a poll). */
  wake(): void {
    if (this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.pumpAgain) {
        this.pumpAgain = false;
        this.wake();
      }
    });
  }

  /** The kinds this process can run; undefined when it can run every kind (no filter needed). */
  private kinds(): readonly JobKind[] | undefined {
    const kinds = JOB_KINDS.filter((k) => this.o.executor(k) !== undefined);
    return kinds.length === JOB_KINDS.length ? undefined : kinds;
  }

  private async pump(): Promise<void> {
    const kinds = this.kinds();
    if (kinds !== undefined && kinds.length === 0) return;
    await this.releaseDeadHolders();
    while (!this.stopping && this.active.size < this.o.concurrency) {
      let claimed: ClaimedJob | undefined;
      try {
        claimed = await run(this.o.store.claimJob(this.workerId, this.o.clock.now(), this.o.leaseMs, undefined, kinds));
      } catch (e) {
        this.o.logger.warn({ err: String(e) }, 'job claim failed');
        return;
      }
      if (claimed === undefined) return;
      this.track(claimed);
    }
  }

  /**
   * A job held by a process of this machine that no longer exists (killed,
   * crashed) is released at once instead of after its lease: a server
   * restarted after `kill -9` resumes its jobs within a second.
   */
  private async releaseDeadHolders(): Promise<void> {
    let running: readonly { jobId: string; workerId: string }[];
    try {
      running = await run(this.o.store.runningJobs());
    } catch {
      return;
    }
    for (const r of running) {
      if (!isDeadLocalWorker(r.workerId, this.tag)) continue;
      const released = await run(this.o.store.renewLease(r.jobId, r.workerId, this.o.clock.now())).catch(() => false);
      if (released) this.o.logger.info({ job_id: r.jobId, dead_worker: r.workerId }, 'released the job of a dead process on this machine');
    }
  }

  /**
   * Claim this job and run it to its end (the queue's delivery of it). False
   * when it cannot be claimed now: finished, or held by a live process.
   */
  async runNamed(jobId: string): Promise<boolean> {
    const kinds = this.kinds();
    if (this.stopping || (kinds !== undefined && kinds.length === 0) || this.active.has(jobId)) return false;
    const claimed = await run(this.o.store.claimJob(this.workerId, this.o.clock.now(), this.o.leaseMs, jobId, kinds));
    if (claimed === undefined) return false;
    await this.track(claimed);
    return true;
  }

  private track(claimed: ClaimedJob): Promise<void> {
    const p = this.runJob(claimed).catch((e) => this.o.logger.error({ job_id: claimed.jobId, err: String(e) }, 'job run failed'));
    this.runs.add(p);
    void p.finally(() => {
      this.runs.delete(p);
      this.wake();
    });
    return p;
  }

  private async runJob({ jobId, accountId }: ClaimedJob): Promise<void> {
    const { store, clock, logger, leaseMs } = this.o;
    const abort = new AbortController();
    this.active.set(jobId, abort);
    let leaseUntil = clock.now() + leaseMs;
    let lost = false;
    const renew = setInterval(() => {
      const now = clock.now();
      run(store.renewLease(jobId, this.workerId, now + leaseMs)).then(
        (ok) => {
          if (ok) leaseUntil = now + leaseMs;
          else {
            lost = true;
            abort.abort();
          }
        },
        (e) => {
          logger.warn({ job_id: jobId, err: String(e) }, 'job lease renewal failed');
          // Past our lease another process may have the job: stop rather than run it twice.
          if (clock.now() >= leaseUntil) {
            lost = true;
            abort.abort();
          }
        },
      );
    }, Math.max(250, Math.floor(leaseMs / 3)));
    renew.unref();
    try {
      const job = await run(store.getJob(jobId, accountId, { kind: 'any' }));
      if (job === undefined) return;
      const executor = this.o.executor(job.kind);
      if (executor === undefined) {
        // Claimed by a named claim for a kind this process does not run: hand it back at once.
        await run(store.renewLease(jobId, this.workerId, clock.now())).catch(() => undefined);
        return;
      }
      const startedAt = clock.now();
      logger.info({ job_id: jobId, kind: job.kind, worker: this.workerId, pending: job.counts.pending, total: job.total }, 'job started');
      const operation = executor.operation ?? BULK_OPERATION;
      const exit = await Effect.runPromiseExit(
        executor.run({
          job,
          startedAt,
          finish: (o) => store.finishItem({
            jobId, idx: o.idx, workerId: this.workerId, success: o.success, attempts: o.attempts, result: o.result, error: o.error,
            credits: o.success && o.skip === undefined ? (o.credits ?? job.pricePerUrl) : 0, operation, ledgerRequestId: `${jobId}:${o.idx}`, now: clock.now(),
            ...(o.skip === undefined ? {} : { skip: o.skip }),
            ...(o.discovered === undefined ? {} : { discovered: o.discovered }),
          }),
          extend: (add) => store.addItems(jobId, this.workerId, add),
          stopRequested: () => store.stopRequested(jobId),
          progress: (p) => Effect.suspend(() => Effect.map(store.setProgress(jobId, this.workerId, p, clock.now()), (kept) => {
            if (!kept && progressJson(p) === undefined) logger.warn({ job_id: jobId, max_bytes: PROGRESS_MAX_BYTES }, 'job progress not kept: too large or not JSON');
            return kept;
          })),
        }),
        { signal: abort.signal },
      );
      if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) {
        logger.info({ job_id: jobId, lost }, lost ? 'job taken over by another process' : 'job interrupted by shutdown');
        // Shutting down: let the lease lapse now, so another process resumes the job at once.
        if (!lost) await run(store.renewLease(jobId, this.workerId, clock.now())).catch(() => undefined);
        return;
      }
      let status: 'completed' | 'failed' = 'completed';
      let end: JobEnd | undefined;
      if (Exit.isSuccess(exit) && exit.value !== undefined) end = exit.value;
      if (Exit.isFailure(exit)) {
        const failure = Cause.findErrorOption(exit.cause);
        const err = failure._tag === 'Some' ? failure.value : undefined;
        if (err instanceof ServiceUnavailable) {
          // The store went away: leave the job; its lease lapses and it is resumed.
          logger.error({ job_id: jobId, cause: Cause.pretty(exit.cause) }, 'job stopped; it resumes once its lease lapses');
          return;
        }
        if (!(err instanceof JobFailure)) {
          const runs = (this.defects.get(jobId) ?? 0) + 1;
          if (runs < MAX_DEFECT_RUNS) {
            this.defects.set(jobId, runs);
            logger.error({ job_id: jobId, run: runs, of: MAX_DEFECT_RUNS, cause: Cause.pretty(exit.cause) }, 'job hit an internal error; it is run again');
            // Hand it back now rather than after the lease: what it finished is kept, the rest is retried.
            await run(store.renewLease(jobId, this.workerId, clock.now())).catch(() => undefined);
            return;
          }
          this.defects.delete(jobId);
          logger.error({ job_id: jobId, runs, cause: Cause.pretty(exit.cause) }, 'job failed: an internal error in every run');
          await this.failPending(jobId, accountId, operation);
        } else {
          logger.warn({ job_id: jobId, code: err.code, message: err.message }, 'job failed');
        }
        status = 'failed';
      }
      this.defects.delete(jobId);
      const event: WebhookEvent = (executor.events ?? DEFAULT_EVENTS)[status];
      const now = clock.now();
      const delivery = job.callbackUrl === null ? undefined : { id: newDeliveryId(), event, nextAttemptAt: now };
      const closed = await run(store.completeJob(jobId, this.workerId, now, status, delivery, end));
      logger.info({ job_id: jobId, status, stop_reason: end?.stopReason, closed, ms: now - startedAt }, 'job finished');
      if (closed && delivery !== undefined) this.wakeDeliveries();
    } finally {
      clearInterval(renew);
      this.active.delete(jobId);
    }
  }

  /**
   * A job failed by internal errors: each item still pending ends failed
   * with INTERNAL_ERROR (uncharged), so its status says why; what the runs
   * finished before is kept, and charged as it was.
   */
  private async failPending(jobId: string, accountId: string, operation: string): Promise<void> {
    const { store, clock } = this.o;
    const job = await run(store.getJob(jobId, accountId, { kind: 'any' })).catch(() => undefined);
    for (const item of job?.items ?? []) {
      if (item.status !== 'pending') continue;
      await run(store.finishItem({
        jobId, idx: item.idx, workerId: this.workerId, success: false, attempts: 0, result: null,
        error: { code: 'INTERNAL_ERROR', message: `an internal error stopped this job in each of ${MAX_DEFECT_RUNS} runs; nothing was charged for this item` },
        credits: 0, operation, ledgerRequestId: `${jobId}:${item.idx}`, now: clock.now(),
      })).catch(() => undefined);
    }
  }

  /** Send the deliveries that are due now (after a job ends, and on every poll). */
  wakeDeliveries(): void {
    if (this.stopping) return;
    if (this.sending !== undefined) {
      this.sendAgain = true;
      return;
    }
    this.sending = this.sendDue()
      .catch((e) => this.o.logger.warn({ err: String(e) }, 'webhook delivery round failed'))
      .finally(() => {
        this.sending = undefined;
        if (this.sendAgain) {
          this.sendAgain = false;
          this.wakeDeliveries();
        }
      });
  }

  private async sendDue(): Promise<void> {
    const kinds = this.kinds();
    if (kinds !== undefined && kinds.length === 0) return;
    while (!this.stopping) {
      const due = await run(this.o.store.dueDeliveries(this.o.clock.now(), 8, this.o.deliveryLeaseMs));
      if (due.length === 0) return;
      await Promise.all(due.map((d) => this.sendOne(d)));
    }
  }

  private async sendOne(d: DueDelivery): Promise<void> {
    const { store, clock, logger } = this.o;
    const attempt = d.attempts + 1;
    const head: JobView | undefined = await run(store.getJob(d.jobId, d.accountId, { kind: 'any', items: false }));
    const executor = head === undefined ? undefined : this.o.executor(head.kind);
    // A kind this process does not run: leave the delivery; its lease lapses and a process that runs it sends it.
    if (head !== undefined && executor === undefined) return;
    const job = head === undefined || executor?.viewsItems === false ? head : await run(store.getJob(d.jobId, d.accountId, { kind: 'any' }));
    if (job === undefined || job.callbackUrl === null || executor === undefined) {
      await run(store.recordAttempt({ deliveryId: d.id, attempt, ok: false, status: null, error: 'the job no longer exists', attemptedAt: clock.now(), nextAttemptAt: null }));
      return;
    }
    let secrets = await run(store.signingSecrets(d.accountId, clock.now()));
    if (secrets.length === 0) secrets = [await run(store.ensureWebhookSecret(d.accountId, this.o.newSecret(), clock.now()))];
    const sentAt = clock.now();
    const payload = buildPayload({
      event: d.event as WebhookEvent, deliveryId: d.id, jobId: d.jobId, createdAt: job.createdAt, sentAt, attempt, data: executor.view(job),
    });
    const a = await this.o.deliver({ url: job.callbackUrl, secrets, payload });
    const delay = a.ok || !a.retryable ? undefined : nextAttemptDelayMs(attempt, this.o.schedule, this.o.random ?? Math.random);
    const nextAttemptAt = delay === undefined ? null : clock.now() + delay;
    await run(store.recordAttempt({ deliveryId: d.id, attempt, ok: a.ok, status: a.status, error: a.error, attemptedAt: sentAt, nextAttemptAt }));
    logger.info({ job_id: d.jobId, delivery_id: d.id, attempt, ok: a.ok, status: a.status, error: a.error ?? undefined, next_attempt_at: nextAttemptAt ?? undefined }, 'webhook attempt');
  }

  /**
   * Stop claiming; interrupt running jobs (their leases lapse at once, so
   * another process resumes them; finished items stay charged once) and wait
   * for them and for a delivery round in flight.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    for (const a of this.active.values()) a.abort();
    await Promise.allSettled([...this.runs]);
    await this.sending;
  }
}

