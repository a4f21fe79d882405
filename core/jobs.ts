/**
 * The durable side of asynchronous jobs (issue 5: bulk scrape; issue 12:
 * crawl): the JobStore port and its types. A job and one item per URL are
 * written at submit time; workers claim jobs under a lease (a crashed
 * worker's job is taken over once its lease lapses), and finishing an item
 * charges it in the same transaction that marks it done, so a resumed job
 * never charges a URL twice. Webhook deliveries and their attempt history
 * live here too, so retries survive a restart.
 *
 * Jobs have a kind. A bulk job's items are its URLs, fixed at submission. A
 * crawl's items are its frontier: every URL it has discovered, each with its
 * depth, written as it is found (in the same transaction that finishes the
 * page it was found on), so a crawl resumed after a crash continues from
 * the URLs not yet done, knows every URL it has already seen, and never
 * stores or charges a page twice.
 *
 * A research job has one item (its question): the executor runs the whole
 * research and finishes that item once with the report, so the charge is
 * made, at most once, in the transaction that stores the report. While a
 * job runs, the worker holding it may record its progress (a small JSON
 * value: the stage and its counts), which any process reads with the job;
 * the last value stays after the job ends.
 */
import type { Effect } from 'effect';
import type { ServiceUnavailable } from './errors.js';
import type { WebhookEvent } from './webhooks.js';

/** What runs a job: its executor is registered under this kind (JobsHost.provide). */
export type JobKind = 'bulk_scrape' | 'crawl' | 'research';
export const JOB_KINDS: readonly JobKind[] = ['bulk_scrape', 'crawl', 'research'];

/**
 * The largest progress value a job keeps: its JSON text, in UTF-8 bytes.
 * A larger one is refused (JobStore.setProgress gives false and nothing is
 * written), never truncated: progress is for a stage and its counts, not
 * for results, which are stored with the items.
 */
export const PROGRESS_MAX_BYTES = 64 * 1024;

/**
 * The JSON text stored for a progress value: null for null or undefined
 * (no progress), undefined when it cannot be kept (larger than
 * PROGRESS_MAX_BYTES, or not serialisable: a cycle, a BigInt).
 */
export function progressJson(progress: unknown): string | null | undefined {
  if (progress === undefined || progress === null) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(progress);
  } catch {
    return undefined;
  }
  // A function or symbol has no JSON form.
  if (text === undefined) return undefined;
  // UTF-8 takes at least one byte per UTF-16 unit and at most three: count the bytes only in between.
  if (text.length > PROGRESS_MAX_BYTES) return undefined;
  if (text.length * 3 <= PROGRESS_MAX_BYTES) return text;
  return new TextEncoder().encode(text).length > PROGRESS_MAX_BYTES ? undefined : text;
}

/**
 * The job's life in the runtime. A job that ended early on purpose (a crawl
 * out of credits, or cancelled) is 'completed' with a `stopReason`.
 */
export type JobStatus = 'queued' | 'running' | 'completed' | 'failed';
/** 'skipped': a frontier entry deliberately not fetched or not stored (its `reason` says why); never charged. */
export type ItemStatus = 'pending' | 'completed' | 'failed' | 'skipped';
/** 'sending': claimed by a worker under a lease; a lapsed lease makes it due again. */
export type DeliveryStatus = 'pending' | 'sending' | 'delivered' | 'failed';

/** The ledger/usage operation a bulk item is charged under. */
export const BULK_OPERATION = 'scrape_bulk';

export interface NewJob {
  readonly id: string;
  /** Default 'bulk_scrape'. */
  readonly kind?: JobKind;
  readonly accountId: string;
  /** The validated request, stored as JSON. */
  readonly request: unknown;
  readonly urls: readonly string[];
  /**
   * Frontier items (a crawl): the depth of each URL, in order (the URLs must
   * then be distinct). Absent: plain items (a bulk job; URLs may repeat).
   */
  readonly depths?: readonly number[];
  readonly callbackUrl: string | null;
  readonly pricePerUrl: number;
  readonly now: number;
}

export interface Job {
  readonly id: string;
  readonly kind: JobKind;
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
  /**
   * Why the job ended early on purpose ('no_credits', 'cancelled'), or was
   * asked to while it runs (JobStore.requestStop); null otherwise.
   */
  readonly stopReason: string | null;
  /**
   * The last progress its worker recorded (JobStore.setProgress), as JSON;
   * null when none was. Kept after the job ends (its final state).
   */
  readonly progress: unknown;
  /** When that progress was recorded (epoch ms); null when none was. */
  readonly progressAt: number | null;
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
  /** Frontier items only: hops from the start URL. */
  readonly depth?: number;
  /** Skipped items only: why. */
  readonly reason?: string;
}

/** A job's items counted by status, and its skipped ones by reason. */
export interface ItemCounts {
  readonly pending: number;
  readonly completed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly reasons: Readonly<Record<string, number>>;
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
  /** Ordered by idx; empty when asked for without items. */
  readonly items: readonly JobItem[];
  readonly counts: ItemCounts;
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
  /**
   * Stored as JSON (a research report of a few MB is fine). PostgreSQL's
   * jsonb cannot hold NUL or lone surrogates: there they are dropped and
   * made U+FFFD, rather than the finish failing on every resume.
   */
  readonly result: unknown;
  readonly error: unknown;
  /** Charged only when success and > 0. */
  readonly credits: number;
  /** The ledger/usage operation the charge is recorded under (default BULK_OPERATION). */
  readonly operation?: string;
  readonly ledgerRequestId: string;
  readonly now: number;
  /** Finish the item as 'skipped' with this reason instead (never charged; success is ignored). */
  readonly skip?: string;
  /**
   * Frontier entries found on this item's page, added in the same
   * transaction (a crash cannot finish the page and lose its links). Only
   * when the item is finished by this call and not refused for credits.
   */
  readonly discovered?: FrontierAdd;
}

/** New frontier entries: URLs already in the job are ignored; at most `limit` items in the job in all. */
export interface FrontierAdd {
  /** Distinct URLs (canonical form: the same spelling is the same entry). */
  readonly entries: readonly FrontierEntry[];
  readonly limit: number;
}

export interface FrontierEntry {
  readonly url: string;
  readonly depth: number;
  /** Recorded as 'skipped' with this reason (never run), instead of 'pending'. */
  readonly skip?: string;
}

/** A frontier entry a call added. */
export interface AddedItem {
  readonly idx: number;
  readonly url: string;
  readonly depth: number;
  readonly status: 'pending' | 'skipped';
}

export interface FinishResult {
  readonly charged: number;
  /** The account's balance - held after this call. */
  readonly available: number;
  /** The item was finished before (by this or another worker): nothing changed, nothing charged. */
  readonly alreadyDone: boolean;
  /**
   * With `discovered`: the entries that were new to the job, with their idx
   * (none when the charge was refused: a success with credits that comes
   * back with charged 0 and not alreadyDone was refused for lack of credits).
   */
  readonly added?: readonly AddedItem[];
}

/** How a job ended early on purpose (JobStore.completeJob). */
export interface JobEnd {
  /** Recorded on the job (kept when the job already has one, e.g. a requested cancel). */
  readonly stopReason?: string;
  /** Items still 'pending' become 'skipped' with this reason. */
  readonly leftover?: string;
}

/** Counts from `status, reason, n` rows (the stores' GROUP BY). */
export function countItems(rows: readonly { readonly status: string; readonly reason: string | null; readonly n: number | string }[]): ItemCounts {
  const c = { pending: 0, completed: 0, failed: 0, skipped: 0 };
  const reasons: Record<string, number> = {};
  for (const r of rows) {
    const n = Number(r.n);
    if (r.status in c) c[r.status as keyof typeof c] += n;
    if (r.status === 'skipped') {
      const why = r.reason ?? 'unknown';
      reasons[why] = (reasons[why] ?? 0) + n;
    }
  }
  return { ...c, reasons };
}

/** The entries of a frontier addition without repeats, in order (the first of a URL wins). */
export function distinctEntries(add: FrontierAdd): FrontierEntry[] {
  const seen = new Set<string>();
  return add.entries.filter((e) => (seen.has(e.url) ? false : (seen.add(e.url), true)));
}

/** An item row as the port shows it: `depth` and `reason` only where they apply. */
export function itemOf(row: Omit<JobItem, 'depth' | 'reason'> & { readonly depth: number | null; readonly reason: string | null }): JobItem {
  const { depth, reason, ...rest } = row;
  return { ...rest, ...(depth === null ? {} : { depth }), ...(reason === null ? {} : { reason }) };
}

/** What requestStop found. */
export type StopRequest =
  /** It was queued: it is closed now (pending items skipped with the reason). */
  | 'stopped'
  /** It is running: its runner stops it soon (JobExecution.stopRequested). */
  | 'requested'
  /** It had already ended: nothing changed. */
  | 'finished';

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

export interface GetJobOptions {
  /** Only a job of this kind (default 'bulk_scrape'), or 'any'. */
  readonly kind?: JobKind | 'any';
  /** Load the items (default true); counts are always given. */
  readonly items?: boolean;
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
  /** Undefined when unknown, owned by another account, or of another kind. */
  getJob(id: string, accountId: string, options?: GetJobOptions): Effect.Effect<JobView | undefined, ServiceUnavailable>;
  /**
   * Take the oldest job that is 'queued', or 'running' with a lapsed lease
   * (its worker died): it becomes 'running', held by `workerId` until now + leaseMs.
   * With `jobId`, only that job, on the same conditions. With `kinds`, only
   * jobs of those kinds (the ones this process can run).
   */
  claimJob(workerId: string, now: number, leaseMs: number, jobId?: string, kinds?: readonly JobKind[]): Effect.Effect<ClaimedJob | undefined, ServiceUnavailable>;
  /** Jobs 'running' now, with the worker holding each (for finding holders that died on this machine). */
  runningJobs(): Effect.Effect<readonly { readonly jobId: string; readonly workerId: string }[], ServiceUnavailable>;
  /**
   * Retention: delete up to `limit` jobs that finished before `before`
   * (completed or failed) and whose webhook deliveries are all settled
   * (delivered or failed), with their items, deliveries and attempts.
   * Returns how many jobs were deleted.
   */
  purgeFinished(before: number, limit: number): Effect.Effect<number, ServiceUnavailable>;
  /** Extend the lease; false when the job is no longer this worker's (taken over, or finished). */
  renewLease(jobId: string, workerId: string, until: number): Effect.Effect<boolean, ServiceUnavailable>;
  /**
   * Record the job's progress (replacing the last one; null clears it), at
   * `now`, for Job.progress. Only the worker holding the running job may:
   * false, and nothing written, when the job is not 'running' under
   * `workerId` (taken over, or finished), or when the value cannot be kept
   * (see progressJson: over PROGRESS_MAX_BYTES, or not serialisable).
   */
  setProgress(jobId: string, workerId: string, progress: unknown, now: number): Effect.Effect<boolean, ServiceUnavailable>;
  /**
   * Mark an item done and charge it, in one transaction. Already done: nothing
   * happens (alreadyDone). Success with credits > 0 charges the account when
   * balance - held covers them (ledger row + usage under BULK_OPERATION);
   * when it cannot, the item fails with error { code: 'NO_CREDITS' } and
   * nothing is charged.
   */
  finishItem(f: FinishItem): Effect.Effect<FinishResult, ServiceUnavailable>;
  /**
   * Add frontier entries to a running job held by `workerId` (URLs it
   * already has are ignored; at most `add.limit` items in all). Empty when
   * the job is no longer this worker's.
   */
  addItems(jobId: string, workerId: string, add: FrontierAdd): Effect.Effect<readonly AddedItem[], ServiceUnavailable>;
  /**
   * Close the job and, when given, create its webhook delivery in the same
   * transaction (a crash cannot leave a finished job without its delivery);
   * false, and nothing written, when the job is not 'running' under this worker.
   * `end` records why it ended early and skips the items left pending.
   */
  completeJob(jobId: string, workerId: string, now: number, status: 'completed' | 'failed', delivery?: JobDelivery, end?: JobEnd): Effect.Effect<boolean, ServiceUnavailable>;
  /**
   * Ask a job of this account and kind to stop with `reason`: a queued one
   * is closed at once ('completed' with the reason, pending items skipped,
   * `delivery` created with it when given); a running one is marked, and its
   * runner stops it. Undefined when there is no such job.
   */
  requestStop(jobId: string, accountId: string, kind: JobKind, reason: string, now: number, delivery?: JobDelivery): Effect.Effect<StopRequest | undefined, ServiceUnavailable>;
  /** The stop reason recorded on the job (null: none asked for). */
  stopRequested(jobId: string): Effect.Effect<string | null, ServiceUnavailable>;
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

/** One URL's outcome, as a job's executor reports it (the runner charges it). */
export interface ItemOutcome {
  readonly idx: number;
  readonly success: boolean;
  readonly attempts: number;
  readonly result: unknown;
  readonly error: unknown;
  /** Finish as 'skipped' with this reason (not charged). */
  readonly skip?: string;
  /** What a successful item is charged (default: the job's pricePerUrl): less when it delivered less than its options asked for. */
  readonly credits?: number;
  /** Frontier entries found on this page (see FinishItem.discovered). */
  readonly discovered?: FrontierAdd;
}

/** What an executor gets for one claimed job. */
export interface JobExecution {
  /** The job as stored when claimed: items already done (before a crash) are not to be run again. */
  readonly job: JobView;
  /** Epoch ms when this run started. */
  readonly startedAt: number;
  /** Store one item's outcome and charge it (at most once per item, whoever finishes it). */
  finish(outcome: ItemOutcome): Effect.Effect<FinishResult, ServiceUnavailable>;
  /** Add frontier entries (see JobStore.addItems). */
  extend(add: FrontierAdd): Effect.Effect<readonly AddedItem[], ServiceUnavailable>;
  /** The stop reason asked for since (a cancel), or null. */
  stopRequested(): Effect.Effect<string | null, ServiceUnavailable>;
  /**
   * Record the job's progress, readable with the job from any process
   * (JobStore.setProgress under this run's worker). Advisory: false (not
   * kept: the job is no longer this run's, or the value is too large) is no
   * reason to stop; a run whose job was taken over is interrupted anyway.
   */
  progress(progress: unknown): Effect.Effect<boolean, ServiceUnavailable>;
}

/**
 * The operation behind a kind of job (bulk scrape, crawl): runs a claimed
 * job's pending items, and shapes a job for its status endpoint and its
 * webhook. `run` failing with a JobFailure ends the job as 'failed'; with
 * ServiceUnavailable it is left to be resumed (its lease lapses). Ending
 * with a JobEnd records why it stopped early.
 */
export interface JobExecutor {
  /** Default 'bulk_scrape'. */
  readonly kind?: JobKind;
  /** The ledger operation its items are charged under (default BULK_OPERATION). */
  readonly operation?: string;
  /** Webhook events of its ends (default bulk_scrape.completed / bulk_scrape.failed). */
  readonly events?: { readonly completed: WebhookEvent; readonly failed: WebhookEvent };
  run(x: JobExecution): Effect.Effect<void | JobEnd, ServiceUnavailable | JobFailure>;
  /** The job's public view (status endpoint body, webhook `data`). */
  view(job: JobView): unknown;
  /** False when `view` reads only the counts (the items need not be loaded for it). Default true. */
  readonly viewsItems?: boolean;
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
  /** Register the executor of a kind of job (one per kind and server). */
  provide(executor: JobExecutor): void;
}
