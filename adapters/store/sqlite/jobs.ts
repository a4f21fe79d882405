/**
 * JobStore on the SQLite account store's connection (jobs of every kind,
 * their items or crawl frontier, webhook deliveries, webhook secrets).
 * Synchronous like the account store: methods hand back Exit values. Claims,
 * finishes and frontier additions run in BEGIN IMMEDIATE transactions, so
 * two connections (two processes on one file) cannot both claim a job, both
 * charge one item, or give two URLs one idx.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { Effect } from 'effect';
import { ServiceUnavailable } from '../../../core/errors.js';
import {
  BULK_OPERATION,
  countItems,
  DEFAULT_DELIVERY_LEASE_MS,
  distinctEntries,
  itemOf,
  progressJson,
  type DeliveryAttempt,
  type DeliveryView,
  type DueDelivery,
  type FinishItem,
  type FinishResult,
  type AddedItem,
  type ClaimedJob,
  type FrontierAdd,
  type GetJobOptions,
  type Job,
  type JobEnd,
  type JobKind,
  type JobDelivery,
  type JobItem,
  type JobStore,
  type JobView,
  type NewDelivery,
  type NewJob,
  type RecordAttempt,
  type StopRequest,
  type WebhookSecretState,
} from '../../../core/jobs.js';
import type { SqliteAccountStore } from './index.js';

const JOB_COLUMNS = `id, kind, account_id AS "accountId", status, request, callback_url AS "callbackUrl", price_per_url AS "pricePerUrl",
  total, worker_id AS "workerId", lease_until AS "leaseUntil", created_at AS "createdAt", started_at AS "startedAt", finished_at AS "finishedAt",
  stop_reason AS "stopReason", progress, progress_at AS "progressAt"`;

const NO_CREDITS = JSON.stringify({ code: 'NO_CREDITS' });

const unavailable = (e: unknown): ServiceUnavailable =>
  new ServiceUnavailable({ message: `Job store unavailable: ${e instanceof Error ? e.message : String(e)}`, retryAfter: 1 });

/** JSON text or NULL (undefined and null both mean "none"). */
const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
const parse = (t: unknown): unknown => (typeof t === 'string' ? JSON.parse(t) : null);

type JobRow = Omit<Job, 'request' | 'progress'> & { request: string; progress: string | null };

function prepare(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  return {
    insertJob: p(`INSERT INTO bulk_jobs (id, kind, account_id, status, request, callback_url, price_per_url, total, created_at)
                  VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?) RETURNING ${JOB_COLUMNS}`),
    insertItem: p(`INSERT INTO bulk_items (job_id, idx, url, status, depth) VALUES (?, ?, ?, 'pending', ?)`),
    getJob: p(`SELECT ${JOB_COLUMNS} FROM bulk_jobs WHERE id = ? AND account_id = ? AND (? IS NULL OR kind = ?)`),
    items: p(`SELECT idx, url, status, attempts, result, error, depth, reason FROM bulk_items WHERE job_id = ? ORDER BY idx`),
    counts: p(`SELECT status, reason, count(*) AS n FROM bulk_items WHERE job_id = ? GROUP BY status, reason`),
    deliveries: p(`SELECT id, event, status, attempts, next_attempt_at AS "nextAttemptAt", created_at AS "createdAt"
                   FROM webhook_deliveries WHERE job_id = ? ORDER BY created_at, rowid`),
    attempts: p(`SELECT a.delivery_id AS "deliveryId", a.attempt, a.ok, a.response_status AS "responseStatus", a.error,
                        a.attempted_at AS "attemptedAt", a.next_attempt_at AS "nextAttemptAt"
                 FROM delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
                 WHERE d.job_id = ? ORDER BY a.delivery_id, a.attempt`),
    nextJob: p(`SELECT id, account_id AS "accountId" FROM bulk_jobs
                WHERE (status = 'queued' OR (status = 'running' AND lease_until <= ?))
                  AND (? IS NULL OR kind IN (SELECT value FROM json_each(?)))
                ORDER BY created_at, id LIMIT 1`),
    thisJob: p(`SELECT id, account_id AS "accountId" FROM bulk_jobs
                WHERE id = ? AND (status = 'queued' OR (status = 'running' AND lease_until <= ?))
                  AND (? IS NULL OR kind IN (SELECT value FROM json_each(?)))`),
    takeJob: p(`UPDATE bulk_jobs SET status = 'running', worker_id = ?, lease_until = ?, started_at = coalesce(started_at, ?) WHERE id = ?`),
    renew: p(`UPDATE bulk_jobs SET lease_until = ? WHERE id = ? AND worker_id = ? AND status = 'running'`),
    setProgress: p(`UPDATE bulk_jobs SET progress = ?, progress_at = ? WHERE id = ? AND worker_id = ? AND status = 'running'`),
    running: p(`SELECT id AS "jobId", worker_id AS "workerId" FROM bulk_jobs WHERE status = 'running' AND worker_id IS NOT NULL`),
    // Items, deliveries and attempts go with the job (ON DELETE CASCADE).
    purge: p(`DELETE FROM bulk_jobs WHERE id IN (
      SELECT j.id FROM bulk_jobs j
       WHERE j.status IN ('completed', 'failed') AND j.finished_at < ?
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.job_id = j.id AND d.status IN ('pending', 'sending'))
       LIMIT ?)`),
    finishItem: p(`UPDATE bulk_items SET status = ?, attempts = ?, result = ?, error = ?, worker_id = ?, finished_at = ?, reason = ?
                   WHERE job_id = ? AND idx = ? AND status = 'pending'`),
    // A bulk item the balance cannot pay for fails with NO_CREDITS; a crawl page is skipped for it (it was never stored).
    refuseItem: p(`UPDATE bulk_items SET result = NULL,
                     status = CASE WHEN depth IS NULL THEN 'failed' ELSE 'skipped' END,
                     error = CASE WHEN depth IS NULL THEN ? END,
                     reason = CASE WHEN depth IS NULL THEN NULL ELSE 'no_credits' END
                   WHERE job_id = ? AND idx = ?`),
    jobTotal: p(`SELECT total FROM bulk_jobs WHERE id = ?`).pluck(),
    heldTotal: p(`SELECT total FROM bulk_jobs WHERE id = ? AND worker_id = ? AND status = 'running'`).pluck(),
    setTotal: p(`UPDATE bulk_jobs SET total = ? WHERE id = ?`),
    insertFrontier: p(`INSERT INTO bulk_items (job_id, idx, url, status, depth, reason) VALUES (?, ?, ?, ?, ?, ?)
                       ON CONFLICT (job_id, url) WHERE depth IS NOT NULL DO NOTHING`),
    skipLeftover: p(`UPDATE bulk_items SET status = 'skipped', reason = ? WHERE job_id = ? AND status = 'pending'`),
    stopState: p(`SELECT status FROM bulk_jobs WHERE id = ? AND account_id = ? AND kind = ?`).pluck(),
    stopQueued: p(`UPDATE bulk_jobs SET status = 'completed', finished_at = ?, stop_reason = ? WHERE id = ? AND status = 'queued'`),
    markStop: p(`UPDATE bulk_jobs SET stop_reason = coalesce(stop_reason, ?) WHERE id = ? AND status = 'running'`),
    stopReason: p(`SELECT stop_reason FROM bulk_jobs WHERE id = ?`).pluck(),
    jobAccount: p('SELECT account_id FROM bulk_jobs WHERE id = ?').pluck(),
    charge: p(`UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance - held >= ?
               RETURNING period_start AS "periodStart", balance - held AS available`),
    available: p('SELECT max(balance - held, 0) FROM accounts WHERE id = ?').pluck(),
    insertLedger: p(`INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
    addUsage: p(`INSERT INTO usage (account_id, period_start, operation, credits, requests) VALUES (?, ?, ?, ?, 1)
                 ON CONFLICT (account_id, period_start, operation)
                 DO UPDATE SET credits = credits + excluded.credits, requests = requests + 1`),
    completeJob: p(`UPDATE bulk_jobs SET status = ?, finished_at = ?, worker_id = NULL, lease_until = NULL, stop_reason = coalesce(?, stop_reason)
                    WHERE id = ? AND worker_id = ? AND status = 'running'`),
    insertDelivery: p(`INSERT INTO webhook_deliveries (id, job_id, event, status, attempts, next_attempt_at, created_at)
                       VALUES (?, ?, ?, 'pending', 0, ?, ?)`),
    dueDeliveries: p(`SELECT d.id, d.job_id AS "jobId", j.account_id AS "accountId", d.event, d.attempts
                      FROM webhook_deliveries d JOIN bulk_jobs j ON j.id = d.job_id
                      WHERE (d.status = 'pending' AND d.next_attempt_at <= ?) OR (d.status = 'sending' AND d.lease_until <= ?)
                      ORDER BY coalesce(d.next_attempt_at, d.lease_until), d.id LIMIT ?`),
    leaseDelivery: p(`UPDATE webhook_deliveries SET status = 'sending', lease_until = ? WHERE id = ?`),
    insertAttempt: p(`INSERT INTO delivery_attempts (delivery_id, attempt, ok, response_status, error, attempted_at, next_attempt_at)
                      VALUES (?, ?, ?, ?, ?, ?, ?)
                      ON CONFLICT (delivery_id, attempt) DO NOTHING`),
    updateDelivery: p(`UPDATE webhook_deliveries SET status = ?, attempts = max(attempts, ?), next_attempt_at = ?, lease_until = NULL
                       WHERE id = ?`),
    secret: p('SELECT secret FROM account_webhook_secrets WHERE account_id = ?').pluck(),
    addSecret: p(`INSERT INTO account_webhook_secrets (account_id, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (account_id) DO NOTHING`),
    // A rotated-out secret is reported (and signs) only while now < previous_expires_at.
    secretState: p(`SELECT secret, coalesce(rotated_at, created_at) AS "createdAt",
                           CASE WHEN previous_expires_at > ? THEN previous_expires_at END AS "previousExpiresAt"
                    FROM account_webhook_secrets WHERE account_id = ?`),
    signingSecrets: p(`SELECT secret, CASE WHEN previous_expires_at > ? THEN previous_secret END AS previous
                       FROM account_webhook_secrets WHERE account_id = ?`),
    // SET reads the row as it was: the old secret becomes the previous one (or is dropped when no grace is given).
    setSecret: p(`INSERT INTO account_webhook_secrets (account_id, secret, created_at) VALUES (@accountId, @secret, @now)
                  ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret, rotated_at = excluded.created_at,
                    previous_secret = CASE WHEN @until IS NULL THEN NULL ELSE account_webhook_secrets.secret END,
                    previous_expires_at = @until
                  RETURNING secret, coalesce(rotated_at, created_at) AS "createdAt", previous_expires_at AS "previousExpiresAt"`),
  };
}

const toJob = (r: JobRow): Job => ({ ...r, request: parse(r.request), progress: parse(r.progress) });

type ItemRow = Omit<JobItem, 'result' | 'error' | 'depth' | 'reason'> & { result: string | null; error: string | null; depth: number | null; reason: string | null };

export class SqliteJobStore implements JobStore {
  private readonly s: ReturnType<typeof prepare>;
  private readonly createTx: (j: NewJob) => Job;
  private readonly claimTx: (workerId: string, now: number, leaseMs: number, jobId: string | undefined, kinds: string | null) => ClaimedJob | undefined;
  private readonly completeTx: (jobId: string, workerId: string, now: number, status: string, delivery: JobDelivery | undefined, end: JobEnd | undefined) => boolean;
  private readonly addTx: (jobId: string, workerId: string, add: FrontierAdd) => AddedItem[];
  private readonly stopTx: (jobId: string, accountId: string, kind: JobKind, reason: string, now: number, delivery: JobDelivery | undefined) => StopRequest | undefined;
  private readonly finishTx: (f: FinishItem) => FinishResult;
  private readonly dueTx: (now: number, limit: number, leaseMs: number) => DueDelivery[];
  private readonly recordTx: (r: RecordAttempt) => void;

  constructor(db: Database.Database, private readonly forget: (accountId: string) => void = () => {}) {
    const s = (this.s = prepare(db));

    this.createTx = db.transaction((j: NewJob): Job => {
      const row = s.insertJob.get(j.id, j.kind ?? 'bulk_scrape', j.accountId, JSON.stringify(j.request ?? null), j.callbackUrl, j.pricePerUrl, j.urls.length, j.now) as JobRow;
      j.urls.forEach((url, idx) => s.insertItem.run(j.id, idx, url, j.depths?.[idx] ?? null));
      return toJob(row);
    }).immediate;

    this.claimTx = db.transaction((workerId: string, now: number, leaseMs: number, jobId: string | undefined, kinds: string | null) => {
      const row = (jobId === undefined ? s.nextJob.get(now, kinds, kinds) : s.thisJob.get(jobId, now, kinds, kinds)) as { id: string; accountId: string } | undefined;
      if (row === undefined) return undefined;
      s.takeJob.run(workerId, now + leaseMs, now, row.id);
      return { jobId: row.id, accountId: row.accountId };
    }).immediate;

    this.completeTx = db.transaction((jobId: string, workerId: string, now: number, status: string, delivery: JobDelivery | undefined, end: JobEnd | undefined) => {
      if (s.completeJob.run(status, now, end?.stopReason ?? null, jobId, workerId).changes === 0) return false;
      if (end?.leftover !== undefined) s.skipLeftover.run(end.leftover, jobId);
      if (delivery !== undefined) s.insertDelivery.run(delivery.id, jobId, delivery.event, delivery.nextAttemptAt, now);
      return true;
    }).immediate;

    /** Inside a transaction: new frontier entries get the next idx values; known URLs are skipped by the unique index. */
    const addFrontier = (jobId: string, total: number, add: FrontierAdd): AddedItem[] => {
      const added: AddedItem[] = [];
      let next = total;
      for (const e of distinctEntries(add)) {
        if (next >= add.limit) break;
        const status = e.skip === undefined ? 'pending' : 'skipped';
        if (s.insertFrontier.run(jobId, next, e.url, status, e.depth, e.skip ?? null).changes > 0) {
          added.push({ idx: next, url: e.url, depth: e.depth, status });
          next++;
        }
      }
      if (next !== total) s.setTotal.run(next, jobId);
      return added;
    };

    this.addTx = db.transaction((jobId: string, workerId: string, add: FrontierAdd): AddedItem[] => {
      const total = s.heldTotal.get(jobId, workerId) as number | undefined;
      return total === undefined ? [] : addFrontier(jobId, total, add);
    }).immediate;

    this.finishTx = db.transaction((f: FinishItem): FinishResult => {
      const accountId = s.jobAccount.get(f.jobId) as string | undefined;
      const status = f.skip !== undefined ? 'skipped' : f.success ? 'completed' : 'failed';
      const done = s.finishItem.run(
        status, f.attempts, status === 'completed' ? json(f.result) : null, json(f.error), f.workerId, f.now, f.skip ?? null, f.jobId, f.idx,
      );
      const available = () => (accountId === undefined ? 0 : ((s.available.get(accountId) as number | undefined) ?? 0));
      if (done.changes === 0 || accountId === undefined) return { charged: 0, available: available(), alreadyDone: true };
      const discover = () => (f.discovered === undefined ? [] : addFrontier(f.jobId, s.jobTotal.get(f.jobId) as number, f.discovered));
      if (status !== 'completed' || f.credits <= 0) {
        const added = discover();
        return { charged: 0, available: available(), alreadyDone: false, ...(f.discovered === undefined ? {} : { added }) };
      }
      const after = s.charge.get(f.credits, accountId, f.credits) as { periodStart: number; available: number } | undefined;
      if (after === undefined) {
        s.refuseItem.run(NO_CREDITS, f.jobId, f.idx);
        return { charged: 0, available: available(), alreadyDone: false, ...(f.discovered === undefined ? {} : { added: [] }) };
      }
      const operation = f.operation ?? BULK_OPERATION;
      s.insertLedger.run(randomUUID(), accountId, operation, f.credits, f.ledgerRequestId, f.now);
      s.addUsage.run(accountId, after.periodStart, operation, f.credits);
      this.forget(accountId);
      const added = discover();
      return { charged: f.credits, available: after.available, alreadyDone: false, ...(f.discovered === undefined ? {} : { added }) };
    }).immediate;

    this.stopTx = db.transaction((jobId: string, accountId: string, kind: JobKind, reason: string, now: number, delivery: JobDelivery | undefined): StopRequest | undefined => {
      const status = s.stopState.get(jobId, accountId, kind) as string | undefined;
      if (status === undefined) return undefined;
      if (status === 'queued') {
        s.stopQueued.run(now, reason, jobId);
        s.skipLeftover.run(reason, jobId);
        if (delivery !== undefined) s.insertDelivery.run(delivery.id, jobId, delivery.event, delivery.nextAttemptAt, now);
        return 'stopped';
      }
      if (status === 'running') {
        s.markStop.run(reason, jobId);
        return 'requested';
      }
      return 'finished';
    }).immediate;

    this.dueTx = db.transaction((now: number, limit: number, leaseMs: number) => {
      const rows = s.dueDeliveries.all(now, now, limit) as DueDelivery[];
      for (const r of rows) s.leaseDelivery.run(now + leaseMs, r.id);
      return rows;
    }).immediate;

    this.recordTx = db.transaction((r: RecordAttempt) => {
      s.insertAttempt.run(r.deliveryId, r.attempt, r.ok ? 1 : 0, r.status, r.error, r.attemptedAt, r.ok ? null : r.nextAttemptAt);
      const status = r.ok ? 'delivered' : r.nextAttemptAt === null ? 'failed' : 'pending';
      s.updateDelivery.run(status, r.attempt, status === 'pending' ? r.nextAttemptAt : null, r.deliveryId);
    }).immediate;
  }

  private run<A>(f: () => A): Effect.Effect<A, ServiceUnavailable> {
    try {
      return Effect.succeed(f());
    } catch (e) {
      return Effect.fail(unavailable(e));
    }
  }

  createJob(j: NewJob): Effect.Effect<Job, ServiceUnavailable> {
    return this.run(() => this.createTx(j));
  }

  getJob(id: string, accountId: string, options: GetJobOptions = {}): Effect.Effect<JobView | undefined, ServiceUnavailable> {
    const kind = options.kind === 'any' ? null : (options.kind ?? 'bulk_scrape');
    return this.run(() => {
      const row = this.s.getJob.get(id, accountId, kind, kind) as JobRow | undefined;
      if (row === undefined) return undefined;
      const items = options.items === false ? [] : (this.s.items.all(id) as ItemRow[]).map((i) => itemOf({ ...i, result: parse(i.result), error: parse(i.error) }));
      const counts = countItems(this.s.counts.all(id) as { status: string; reason: string | null; n: number }[]);
      const history = new Map<string, DeliveryAttempt[]>();
      for (const a of this.s.attempts.all(id) as (Omit<DeliveryAttempt, 'ok'> & { deliveryId: string; ok: number })[]) {
        const { deliveryId, ...rest } = a;
        const list = history.get(deliveryId) ?? [];
        list.push({ ...rest, ok: a.ok === 1 });
        history.set(deliveryId, list);
      }
      const deliveries = (this.s.deliveries.all(id) as Omit<DeliveryView, 'history'>[]).map(
        (d): DeliveryView => ({ ...d, history: history.get(d.id) ?? [] }),
      );
      return { ...toJob(row), items, counts, deliveries };
    });
  }

  claimJob(workerId: string, now: number, leaseMs: number, jobId?: string, kinds?: readonly JobKind[]): Effect.Effect<ClaimedJob | undefined, ServiceUnavailable> {
    return this.run(() => this.claimTx(workerId, now, leaseMs, jobId, kinds === undefined ? null : JSON.stringify(kinds)));
  }

  runningJobs(): Effect.Effect<readonly { readonly jobId: string; readonly workerId: string }[], ServiceUnavailable> {
    return this.run(() => this.s.running.all() as { jobId: string; workerId: string }[]);
  }

  purgeFinished(before: number, limit: number): Effect.Effect<number, ServiceUnavailable> {
    return this.run(() => this.s.purge.run(before, limit).changes);
  }

  renewLease(jobId: string, workerId: string, until: number): Effect.Effect<boolean, ServiceUnavailable> {
    return this.run(() => this.s.renew.run(until, jobId, workerId).changes > 0);
  }

  setProgress(jobId: string, workerId: string, progress: unknown, now: number): Effect.Effect<boolean, ServiceUnavailable> {
    const text = progressJson(progress);
    if (text === undefined) return Effect.succeed(false);
    return this.run(() => this.s.setProgress.run(text, text === null ? null : now, jobId, workerId).changes > 0);
  }

  finishItem(f: FinishItem): Effect.Effect<FinishResult, ServiceUnavailable> {
    if (!Number.isSafeInteger(f.credits) || f.credits < 0) return Effect.die(new RangeError(`credits must be an integer >= 0, got ${f.credits}`));
    return this.run(() => this.finishTx(f));
  }

  addItems(jobId: string, workerId: string, add: FrontierAdd): Effect.Effect<readonly AddedItem[], ServiceUnavailable> {
    return this.run(() => this.addTx(jobId, workerId, add));
  }

  completeJob(jobId: string, workerId: string, now: number, status: 'completed' | 'failed', delivery?: JobDelivery, end?: JobEnd): Effect.Effect<boolean, ServiceUnavailable> {
    return this.run(() => this.completeTx(jobId, workerId, now, status, delivery, end));
  }

  requestStop(jobId: string, accountId: string, kind: JobKind, reason: string, now: number, delivery?: JobDelivery): Effect.Effect<StopRequest | undefined, ServiceUnavailable> {
    return this.run(() => this.stopTx(jobId, accountId, kind, reason, now, delivery));
  }

  stopRequested(jobId: string): Effect.Effect<string | null, ServiceUnavailable> {
    return this.run(() => (this.s.stopReason.get(jobId) as string | null | undefined) ?? null);
  }

  createDelivery(d: NewDelivery): Effect.Effect<void, ServiceUnavailable> {
    return this.run(() => {
      this.s.insertDelivery.run(d.id, d.jobId, d.event, d.nextAttemptAt, d.now);
    });
  }

  dueDeliveries(now: number, limit: number, leaseMs = DEFAULT_DELIVERY_LEASE_MS): Effect.Effect<readonly DueDelivery[], ServiceUnavailable> {
    return this.run(() => this.dueTx(now, limit, leaseMs));
  }

  recordAttempt(r: RecordAttempt): Effect.Effect<void, ServiceUnavailable> {
    return this.run(() => this.recordTx(r));
  }

  webhookSecret(accountId: string): Effect.Effect<string | undefined, ServiceUnavailable> {
    return this.run(() => this.s.secret.get(accountId) as string | undefined);
  }

  ensureWebhookSecret(accountId: string, candidate: string, now: number): Effect.Effect<string, ServiceUnavailable> {
    return this.run(() => {
      this.s.addSecret.run(accountId, candidate, now);
      return this.s.secret.get(accountId) as string;
    });
  }

  webhookSecretState(accountId: string, now: number): Effect.Effect<WebhookSecretState | undefined, ServiceUnavailable> {
    return this.run(() => this.s.secretState.get(now, accountId) as WebhookSecretState | undefined);
  }

  signingSecrets(accountId: string, now: number): Effect.Effect<readonly string[], ServiceUnavailable> {
    return this.run(() => {
      const row = this.s.signingSecrets.get(now, accountId) as { secret: string; previous: string | null } | undefined;
      if (row === undefined) return [];
      return row.previous === null ? [row.secret] : [row.secret, row.previous];
    });
  }

  rotateWebhookSecret(accountId: string, secret: string, now: number, previousValidUntil?: number): Effect.Effect<WebhookSecretState, ServiceUnavailable> {
    const until = previousValidUntil !== undefined && previousValidUntil > now ? previousValidUntil : null;
    return this.run(() => this.s.setSecret.get({ accountId, secret, now, until }) as WebhookSecretState);
  }
}

/** The job store on an open account store's connection (closed with it). */
export function sqliteJobStore(store: SqliteAccountStore): SqliteJobStore {
  const { db, forget } = store.shared();
  return new SqliteJobStore(db, forget);
}
