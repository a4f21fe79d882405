/**
 * JobStore on the SQLite account store's connection (bulk jobs, items,
 * webhook deliveries, webhook secrets). Synchronous like the account store:
 * methods hand back Exit values. Claims and finishes run in BEGIN IMMEDIATE
 * transactions, so two connections (two processes on one file) cannot both
 * claim a job or both bill one item.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { Effect } from 'effect';
import { ServiceUnavailable } from '../../../core/errors.js';
import {
  BULK_OPERATION,
  DEFAULT_DELIVERY_LEASE_MS,
  type DeliveryAttempt,
  type DeliveryView,
  type DueDelivery,
  type FinishItem,
  type FinishResult,
  type ClaimedJob,
  type Job,
  type JobDelivery,
  type JobItem,
  type JobStore,
  type JobView,
  type NewDelivery,
  type NewJob,
  type RecordAttempt,
  type WebhookSecretState,
} from '../../../core/jobs.js';
import type { SqliteAccountStore } from './index.js';

const JOB_COLUMNS = `id, account_id AS "accountId", status, request, callback_url AS "callbackUrl", price_per_url AS "pricePerUrl",
  total, worker_id AS "workerId", lease_until AS "leaseUntil", created_at AS "createdAt", started_at AS "startedAt", finished_at AS "finishedAt"`;

const NO_CREDITS = JSON.stringify({ code: 'NO_CREDITS' });

const unavailable = (e: unknown): ServiceUnavailable =>
  new ServiceUnavailable({ message: `Job store unavailable: ${e instanceof Error ? e.message : String(e)}`, retryAfter: 1 });

/** JSON text or NULL (undefined and null both mean "none"). */
const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
const parse = (t: unknown): unknown => (typeof t === 'string' ? JSON.parse(t) : null);

type JobRow = Omit<Job, 'request'> & { request: string };

function prepare(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  return {
    insertJob: p(`INSERT INTO bulk_jobs (id, account_id, status, request, callback_url, price_per_url, total, created_at)
                  VALUES (?, ?, 'queued', ?, ?, ?, ?, ?) RETURNING ${JOB_COLUMNS}`),
    insertItem: p(`INSERT INTO bulk_items (job_id, idx, url, status) VALUES (?, ?, ?, 'pending')`),
    getJob: p(`SELECT ${JOB_COLUMNS} FROM bulk_jobs WHERE id = ? AND account_id = ?`),
    items: p(`SELECT idx, url, status, attempts, result, error FROM bulk_items WHERE job_id = ? ORDER BY idx`),
    deliveries: p(`SELECT id, event, status, attempts, next_attempt_at AS "nextAttemptAt", created_at AS "createdAt"
                   FROM webhook_deliveries WHERE job_id = ? ORDER BY created_at, rowid`),
    attempts: p(`SELECT a.delivery_id AS "deliveryId", a.attempt, a.ok, a.response_status AS "responseStatus", a.error,
                        a.attempted_at AS "attemptedAt", a.next_attempt_at AS "nextAttemptAt"
                 FROM delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
                 WHERE d.job_id = ? ORDER BY a.delivery_id, a.attempt`),
    nextJob: p(`SELECT id, account_id AS "accountId" FROM bulk_jobs WHERE status = 'queued' OR (status = 'running' AND lease_until <= ?)
                ORDER BY created_at, id LIMIT 1`),
    thisJob: p(`SELECT id, account_id AS "accountId" FROM bulk_jobs
                WHERE id = ? AND (status = 'queued' OR (status = 'running' AND lease_until <= ?))`),
    takeJob: p(`UPDATE bulk_jobs SET status = 'running', worker_id = ?, lease_until = ?, started_at = coalesce(started_at, ?) WHERE id = ?`),
    renew: p(`UPDATE bulk_jobs SET lease_until = ? WHERE id = ? AND worker_id = ? AND status = 'running'`),
    running: p(`SELECT id AS "jobId", worker_id AS "workerId" FROM bulk_jobs WHERE status = 'running' AND worker_id IS NOT NULL`),
    finishItem: p(`UPDATE bulk_items SET status = ?, attempts = ?, result = ?, error = ?, worker_id = ?, finished_at = ?
                   WHERE job_id = ? AND idx = ? AND status = 'pending'`),
    refuseItem: p(`UPDATE bulk_items SET status = 'failed', result = NULL, error = ? WHERE job_id = ? AND idx = ?`),
    jobAccount: p('SELECT account_id FROM bulk_jobs WHERE id = ?').pluck(),
    charge: p(`UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance - held >= ?
               RETURNING period_start AS "periodStart", balance - held AS available`),
    available: p('SELECT max(balance - held, 0) FROM accounts WHERE id = ?').pluck(),
    insertLedger: p(`INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
    addUsage: p(`INSERT INTO usage (account_id, period_start, operation, credits, requests) VALUES (?, ?, ?, ?, 1)
                 ON CONFLICT (account_id, period_start, operation)
                 DO UPDATE SET credits = credits + excluded.credits, requests = requests + 1`),
    completeJob: p(`UPDATE bulk_jobs SET status = ?, finished_at = ?, worker_id = NULL, lease_until = NULL
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

const toJob = (r: JobRow): Job => ({ ...r, request: parse(r.request) });

export class SqliteJobStore implements JobStore {
  private readonly s: ReturnType<typeof prepare>;
  private readonly createTx: (j: NewJob) => Job;
  private readonly claimTx: (workerId: string, now: number, leaseMs: number, jobId: string | undefined) => ClaimedJob | undefined;
  private readonly completeTx: (jobId: string, workerId: string, now: number, status: string, delivery: JobDelivery | undefined) => boolean;
  private readonly finishTx: (f: FinishItem) => FinishResult;
  private readonly dueTx: (now: number, limit: number, leaseMs: number) => DueDelivery[];
  private readonly recordTx: (r: RecordAttempt) => void;

  constructor(db: Database.Database, private readonly forget: (accountId: string) => void = () => {}) {
    const s = (this.s = prepare(db));

    this.createTx = db.transaction((j: NewJob): Job => {
      const row = s.insertJob.get(j.id, j.accountId, JSON.stringify(j.request ?? null), j.callbackUrl, j.pricePerUrl, j.urls.length, j.now) as JobRow;
      j.urls.forEach((url, idx) => s.insertItem.run(j.id, idx, url));
      return toJob(row);
    }).immediate;

    this.claimTx = db.transaction((workerId: string, now: number, leaseMs: number, jobId: string | undefined) => {
      const row = (jobId === undefined ? s.nextJob.get(now) : s.thisJob.get(jobId, now)) as { id: string; accountId: string } | undefined;
      if (row === undefined) return undefined;
      s.takeJob.run(workerId, now + leaseMs, now, row.id);
      return { jobId: row.id, accountId: row.accountId };
    }).immediate;

    this.completeTx = db.transaction((jobId: string, workerId: string, now: number, status: string, delivery: JobDelivery | undefined) => {
      if (s.completeJob.run(status, now, jobId, workerId).changes === 0) return false;
      if (delivery !== undefined) s.insertDelivery.run(delivery.id, jobId, delivery.event, delivery.nextAttemptAt, now);
      return true;
    }).immediate;

    this.finishTx = db.transaction((f: FinishItem): FinishResult => {
      const accountId = s.jobAccount.get(f.jobId) as string | undefined;
      const done = s.finishItem.run(
        f.success ? 'completed' : 'failed', f.attempts, f.success ? json(f.result) : null, json(f.error), f.workerId, f.now, f.jobId, f.idx,
      );
      const available = () => (accountId === undefined ? 0 : ((s.available.get(accountId) as number | undefined) ?? 0));
      if (done.changes === 0 || accountId === undefined) return { charged: 0, available: available(), alreadyDone: true };
      if (!f.success || f.credits <= 0) return { charged: 0, available: available(), alreadyDone: false };
      const after = s.charge.get(f.credits, accountId, f.credits) as { periodStart: number; available: number } | undefined;
      if (after === undefined) {
        s.refuseItem.run(NO_CREDITS, f.jobId, f.idx);
        return { charged: 0, available: available(), alreadyDone: false };
      }
      s.insertLedger.run(randomUUID(), accountId, BULK_OPERATION, f.credits, f.ledgerRequestId, f.now);
      s.addUsage.run(accountId, after.periodStart, BULK_OPERATION, f.credits);
      this.forget(accountId);
      return { charged: f.credits, available: after.available, alreadyDone: false };
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

  getJob(id: string, accountId: string): Effect.Effect<JobView | undefined, ServiceUnavailable> {
    return this.run(() => {
      const row = this.s.getJob.get(id, accountId) as JobRow | undefined;
      if (row === undefined) return undefined;
      const items = (this.s.items.all(id) as (Omit<JobItem, 'result' | 'error'> & { result: string | null; error: string | null })[])
        .map((i): JobItem => ({ ...i, result: parse(i.result), error: parse(i.error) }));
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
      return { ...toJob(row), items, deliveries };
    });
  }

  claimJob(workerId: string, now: number, leaseMs: number, jobId?: string): Effect.Effect<ClaimedJob | undefined, ServiceUnavailable> {
    return this.run(() => this.claimTx(workerId, now, leaseMs, jobId));
  }

  runningJobs(): Effect.Effect<readonly { readonly jobId: string; readonly workerId: string }[], ServiceUnavailable> {
    return this.run(() => this.s.running.all() as { jobId: string; workerId: string }[]);
  }

  renewLease(jobId: string, workerId: string, until: number): Effect.Effect<boolean, ServiceUnavailable> {
    return this.run(() => this.s.renew.run(until, jobId, workerId).changes > 0);
  }

  finishItem(f: FinishItem): Effect.Effect<FinishResult, ServiceUnavailable> {
    if (!Number.isSafeInteger(f.credits) || f.credits < 0) return Effect.die(new RangeError(`credits must be an integer >= 0, got ${f.credits}`));
    return this.run(() => this.finishTx(f));
  }

  completeJob(jobId: string, workerId: string, now: number, status: 'completed' | 'failed', delivery?: JobDelivery): Effect.Effect<boolean, ServiceUnavailable> {
    return this.run(() => this.completeTx(jobId, workerId, now, status, delivery));
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
