/**
 * The durable side of asynchronous bulk-scrape jobs (issue 5): the JobStore
 * port and its types. A job and one item per URL are written at submit time;
 * workers claim jobs under a lease (a crashed worker's job is taken over once
 * its lease lapses), and finishing an item bills it in the same transaction
 * that marks it done, so a resumed job never charges a URL twice. Webhook
 * deliveries and their attempt history live here too, so retries survive a
 * restart.
 */
import type { Effect } from 'effect';
import type { ServiceUnavailable } from './errors.js';

export type JobStatus = 'queued' | 'running' | 'completed' | 'failed';
export type ItemStatus = 'pending' | 'completed' | 'failed';
/** 'sending': claimed by a worker under a lease; a lapsed lease makes it due again. */
export type DeliveryStatus = 'pending' | 'sending' | 'delivered' | 'failed';

/** The ledger/usage operation a bulk item is billed under. */
export const BULK_OPERATION = 'scrape_bulk';

export interface NewJob {
  readonly id: string;
  readonly accountId: string;
  /** The validated request, stored as JSON. */
  readonly request: unknown;
  readonly urls: readonly string[];
  readonly callbackUrl: string | null;
  readonly pricePerUrl: number;
  readonly now: number;
}

export interface Job {
  readonly id: string;
  readonly accountId: string;
  readonly status: JobStatus;
  readonly request: unknown;
  readonly callbackUrl: string | null;
  readonly pricePerUrl: number;
  /** Number of URLs (items). */
  readonly total: number;
  readonly workerId: string | null;
  readonly leaseUntil: number | null;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
}

export interface JobItem {
  readonly idx: number;
  readonly url: string;
  readonly status: ItemStatus;
  readonly attempts: number;
  /** JSON, or null until done (and for failed items). */
  readonly result: unknown;
  /** JSON, or null (set for failed items). */
  readonly error: unknown;
}

export interface DeliveryAttempt {
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly ok: boolean;
  /** The receiver's HTTP status, null when no response came. */
  readonly responseStatus: number | null;
  readonly error: string | null;
  readonly attemptedAt: number;
  /** When the next attempt was scheduled for, null when none was (delivered or given up). */
  readonly nextAttemptAt: number | null;
}

export interface DeliveryView {
  readonly id: string;
  readonly event: string;
  readonly status: DeliveryStatus;
  /** Attempts made so far. */
  readonly attempts: number;
  readonly nextAttemptAt: number | null;
  readonly createdAt: number;
  /** Ordered by attempt. */
  readonly history: readonly DeliveryAttempt[];
}

export interface JobView extends Job {
  /** Ordered by idx. */
  readonly items: readonly JobItem[];
  /** Ordered by creation. */
  readonly deliveries: readonly DeliveryView[];
}

export interface FinishItem {
  readonly jobId: string;
  readonly idx: number;
  readonly workerId: string;
  readonly success: boolean;
  /** Fetch attempts the worker made for this URL. */
  readonly attempts: number;
  readonly result: unknown;
  readonly error: unknown;
  /** Charged only when success and > 0. */
  readonly credits: number;
  readonly ledgerRequestId: string;
  readonly now: number;
}

export interface FinishResult {
  readonly charged: number;
  /** The account's balance - held after this call. */
  readonly available: number;
  /** The item was finished before (by this or another worker): nothing changed, nothing charged. */
  readonly alreadyDone: boolean;
}

export interface NewDelivery {
  readonly id: string;
  readonly jobId: string;
  readonly event: string;
  readonly nextAttemptAt: number;
  readonly now: number;
}

export interface ClaimedJob {
  readonly jobId: string;
  readonly accountId: string;
}

/** The delivery completeJob creates with the job's end. */
export interface JobDelivery {
  readonly id: string;
  readonly event: string;
  readonly nextAttemptAt: number;
}

/** A delivery claimed for sending (status 'sending' until recordAttempt or its lease lapses). */
export interface DueDelivery {
  readonly id: string;
  readonly jobId: string;
  readonly accountId: string;
  readonly event: string;
  /** Attempts made before this one. */
  readonly attempts: number;
}

export interface RecordAttempt {
  readonly deliveryId: string;
  readonly attempt: number;
  readonly ok: boolean;
  readonly status: number | null;
  readonly error: string | null;
  readonly attemptedAt: number;
  /** Null: no retry (given up unless ok). */
  readonly nextAttemptAt: number | null;
}

/** An account's webhook signing secret, as of a given time. */
export interface WebhookSecretState {
  readonly secret: string;
  /** When the current secret was made (first created, or rotated in), epoch ms. */
  readonly createdAt: number;
  /** Until when the rotated-out secret still signs deliveries (epoch ms); null when none does any more. */
  readonly previousExpiresAt: number | null;
}

/** Lease on a claimed delivery when the caller gives none. */
export const DEFAULT_DELIVERY_LEASE_MS = 60_000;

/**
 * Bulk jobs, their items, webhook deliveries and per-account webhook secrets.
 * Every method is atomic on its own and fails with ServiceUnavailable when
 * the database cannot be reached.
 */
export interface JobStore {
  /** The job ('queued') and one 'pending' item per URL (idx from 0), together. */
  createJob(j: NewJob): Effect.Effect<Job, ServiceUnavailable>;
  /** Undefined when unknown or owned by another account. */
  getJob(id: string, accountId: string): Effect.Effect<JobView | undefined, ServiceUnavailable>;
  /**
   * Take the oldest job that is 'queued', or 'running' with a lapsed lease
   * (its worker died): it becomes 'running', held by `workerId` until now + leaseMs.
   * With `jobId`, only that job, on the same conditions.
   */
  claimJob(workerId: string, now: number, leaseMs: number, jobId?: string): Effect.Effect<ClaimedJob | undefined, ServiceUnavailable>;
  /** Jobs 'running' now, with the worker holding each (for finding holders that died on this machine). */
  runningJobs(): Effect.Effect<readonly { readonly jobId: string; readonly workerId: string }[], ServiceUnavailable>;
  /** Extend the lease; false when the job is no longer this worker's (taken over, or finished). */
  renewLease(jobId: string, workerId: string, until: number): Effect.Effect<boolean, ServiceUnavailable>;
  /**
   * Mark an item done and bill it, in one transaction. Already done: nothing
   * happens (alreadyDone). Success with credits > 0 charges the account when
   * balance - held covers them (ledger row + usage under BULK_OPERATION);
   * when it cannot, the item fails with error { code: 'NO_CREDITS' } and
   * nothing is charged.
   */
  finishItem(f: FinishItem): Effect.Effect<FinishResult, ServiceUnavailable>;
  /**
   * Close the job and, when given, create its webhook delivery in the same
   * transaction (a crash cannot leave a finished job without its delivery);
   * false, and nothing written, when the job is not 'running' under this worker.
   */
  completeJob(jobId: string, workerId: string, now: number, status: 'completed' | 'failed', delivery?: JobDelivery): Effect.Effect<boolean, ServiceUnavailable>;
  createDelivery(d: NewDelivery): Effect.Effect<void, ServiceUnavailable>;
  /**
   * Claim up to `limit` deliveries that are due ('pending' with
   * next_attempt_at <= now, or 'sending' whose lease lapsed): they become
   * 'sending' until now + leaseMs, so two workers never send the same attempt.
   */
  dueDeliveries(now: number, limit: number, leaseMs?: number): Effect.Effect<readonly DueDelivery[], ServiceUnavailable>;
  /** Record one attempt: 'delivered' when ok, else 'pending' at nextAttemptAt, or 'failed' when that is null. */
  recordAttempt(r: RecordAttempt): Effect.Effect<void, ServiceUnavailable>;
  /** The account's current signing secret, if it has one. */
  webhookSecret(accountId: string): Effect.Effect<string | undefined, ServiceUnavailable>;
  /** The current secret; `candidate` becomes it when the account has none yet (two racing callers get the same one). */
  ensureWebhookSecret(accountId: string, candidate: string, now: number): Effect.Effect<string, ServiceUnavailable>;
  /** The current secret with its times (the admin API's view), as of `now`; undefined when the account has none. */
  webhookSecretState(accountId: string, now: number): Effect.Effect<WebhookSecretState | undefined, ServiceUnavailable>;
  /**
   * The secrets a delivery made at `now` is signed with: the current one
   * first, then the rotated-out one while now < its previousValidUntil.
   * Empty when the account has no secret yet.
   */
  signingSecrets(accountId: string, now: number): Effect.Effect<readonly string[], ServiceUnavailable>;
  /**
   * Make `secret` (stored as given) the account's signing secret, in one
   * statement. The one it replaces keeps signing alongside it until
   * `previousValidUntil` (epoch ms); without it, or when it is not after
   * `now`, the old secret is dropped at once. At most one old secret is
   * kept: rotating again during a grace period drops the older one.
   * With no secret yet, `secret` simply becomes the first.
   */
  rotateWebhookSecret(accountId: string, secret: string, now: number, previousValidUntil?: number): Effect.Effect<WebhookSecretState, ServiceUnavailable>;
}

/** One URL's outcome, as a job's executor reports it (the runner bills it). */
export interface ItemOutcome {
  readonly idx: number;
  readonly success: boolean;
  readonly attempts: number;
  readonly result: unknown;
  readonly error: unknown;
}

/** What an executor gets for one claimed job. */
export interface JobExecution {
  /** The job as stored when claimed: items already done (before a crash) are not to be run again. */
  readonly job: JobView;
  /** Epoch ms when this run started. */
  readonly startedAt: number;
  /** Store one item's outcome and bill it (at most once per item, whoever finishes it). */
  finish(outcome: ItemOutcome): Effect.Effect<FinishResult, ServiceUnavailable>;
}

/**
 * The operation behind a kind of job (bulk scrape): runs a claimed job's
 * pending items, and shapes a job for its status endpoint and its webhook.
 * `run` failing with a JobFailure ends the job as 'failed'; with
 * ServiceUnavailable it is left to be resumed (its lease lapses).
 */
export interface JobExecutor {
  run(x: JobExecution): Effect.Effect<void, ServiceUnavailable | JobFailure>;
  /** The job's public view (status endpoint body, webhook `data`). */
  view(job: JobView): unknown;
}

/** A job that cannot run at all (its stored request is no longer acceptable): it ends 'failed'. */
export class JobFailure {
  readonly _tag = 'JobFailure';
  constructor(readonly code: string, readonly message: string) {}
}

/** Hands a stored job to whoever runs jobs: this process, or workers through a queue. */
export interface JobQueue {
  enqueue(jobId: string): Effect.Effect<void, ServiceUnavailable>;
}

/** What the plugin host offers operations that run jobs. */
export interface JobsHost {
  readonly store: JobStore;
  readonly queue: JobQueue;
  /** Register the executor of bulk jobs (one per server). */
  provide(executor: JobExecutor): void;
}
