/**
 * JobStore on the PostgreSQL account store's pool. Claims use
 * FOR UPDATE SKIP LOCKED, so workers in several processes each take a
 * different job (or delivery) without waiting on one another. finishItem is
 * one transaction that locks the item before the account (the same order as
 * settle: hold/item, then account), so concurrent finishers cannot deadlock
 * and the guarded item UPDATE lets only one of them charge. A finish that adds
 * frontier entries (a crawl) locks the job row first (job, item, account:
 * still one order), which serialises the idx numbering of new entries.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { Effect } from 'effect';
import type { ServiceUnavailable } from '../../../core/errors.js';
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
import type { PostgresAccountStore } from './index.js';

const JOB_COLUMNS = `id, kind, account_id AS "accountId", status, request, callback_url AS "callbackUrl", price_per_url AS "pricePerUrl",
  total, worker_id AS "workerId", lease_until AS "leaseUntil", created_at AS "createdAt", started_at AS "startedAt", finished_at AS "finishedAt",
  stop_reason AS "stopReason", progress, progress_at AS "progressAt"`;

/**
 * JSON text for a jsonb parameter (pg would turn a JS array into a
 * PostgreSQL array), or NULL. jsonb refuses two things JSON.stringify
 * writes as escapes: NUL (\u0000, dropped here) and lone surrogates
 * (\ud800-\udfff alone, made U+FFFD), as the search index stores text. Left
 * in, a page or report holding one would fail its item's finish on every
 * resume, forever. (JSON.stringify writes a surrogate pair as itself and a
 * backslash as \\, so every such escape it writes is one of these.)
 */
const json = (v: unknown): string | null => (v === undefined || v === null ? null : jsonbText(JSON.stringify(v)));
const JSONB_REFUSED = /\\u(?:0000|d[89a-f])/;
export const jsonbText = (text: string): string =>
  JSONB_REFUSED.test(text) ? text.replace(/\\(?:\\|u0000|ud[89a-f][0-9a-f]{2})/g, (m) => (m === '\\\\' ? m : m === '\\u0000' ? '' : '\\ufffd')) : text;

const SQL = {
  createJob: `
    WITH j AS (
      INSERT INTO bulk_jobs (id, kind, account_id, status, request, callback_url, price_per_url, total, created_at)
      VALUES ($1, $9, $2, 'queued', $3::jsonb, $4, $5, cardinality($6::text[]), $7) RETURNING ${JOB_COLUMNS}
    ), i AS (
      INSERT INTO bulk_items (job_id, idx, url, status, depth)
      SELECT j.id, u.n - 1, u.url, 'pending', ($8::int[])[u.n] FROM j, unnest($6::text[]) WITH ORDINALITY AS u(url, n)
    )
    SELECT * FROM j`,
  getJob: `SELECT ${JOB_COLUMNS} FROM bulk_jobs WHERE id = $1 AND account_id = $2 AND ($3::text IS NULL OR kind = $3)`,
  items: 'SELECT idx, url, status, attempts, result, error, depth, reason FROM bulk_items WHERE job_id = $1 ORDER BY idx',
  counts: 'SELECT status, reason, count(*)::int AS n FROM bulk_items WHERE job_id = $1 GROUP BY status, reason',
  deliveries: `SELECT id, event, status, attempts, next_attempt_at AS "nextAttemptAt", created_at AS "createdAt"
               FROM webhook_deliveries WHERE job_id = $1 ORDER BY created_at, id COLLATE "C"`,
  attempts: `SELECT a.delivery_id AS "deliveryId", a.attempt, a.ok, a.response_status AS "responseStatus", a.error,
                    a.attempted_at AS "attemptedAt", a.next_attempt_at AS "nextAttemptAt"
             FROM delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
             WHERE d.job_id = $1 ORDER BY a.delivery_id, a.attempt`,
  claimJob: `
    UPDATE bulk_jobs SET status = 'running', worker_id = $1, lease_until = $2::bigint + $3::bigint, started_at = COALESCE(started_at, $2)
    WHERE id = (
      SELECT id FROM bulk_jobs
      WHERE status IN ('queued', 'running') AND (status = 'queued' OR lease_until <= $2)
        AND ($4::text[] IS NULL OR kind = ANY($4::text[]))
      ORDER BY created_at, id COLLATE "C" LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id, account_id AS "accountId"`,
  claimThisJob: `
    UPDATE bulk_jobs SET status = 'running', worker_id = $1, lease_until = $2::bigint + $3::bigint, started_at = COALESCE(started_at, $2)
    WHERE id = (
      SELECT id FROM bulk_jobs
      WHERE id = $4 AND status IN ('queued', 'running') AND (status = 'queued' OR lease_until <= $2)
        AND ($5::text[] IS NULL OR kind = ANY($5::text[]))
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id, account_id AS "accountId"`,
  renew: `UPDATE bulk_jobs SET lease_until = $3 WHERE id = $1 AND worker_id = $2 AND status = 'running'`,
  setProgress: `UPDATE bulk_jobs SET progress = $3, progress_at = $4 WHERE id = $1 AND worker_id = $2 AND status = 'running'`,
  running: `SELECT id AS "jobId", worker_id AS "workerId" FROM bulk_jobs WHERE status = 'running' AND worker_id IS NOT NULL`,
  // Items, deliveries and attempts go with the job (ON DELETE CASCADE); SKIP LOCKED: two sweepers never wait on each other.
  purge: `DELETE FROM bulk_jobs WHERE id IN (
    SELECT j.id FROM bulk_jobs j
     WHERE j.status IN ('completed', 'failed') AND j.finished_at < $1
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.job_id = j.id AND d.status IN ('pending', 'sending'))
     LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  finishItem: `
    UPDATE bulk_items i SET status = $3, attempts = $4, result = $5::jsonb, error = $6::jsonb, worker_id = $7, finished_at = $8, reason = $9
    FROM bulk_jobs j
    WHERE i.job_id = $1 AND i.idx = $2 AND i.status = 'pending' AND j.id = i.job_id
    RETURNING j.account_id`,
  lockJob: 'SELECT total FROM bulk_jobs WHERE id = $1 FOR UPDATE',
  lockHeldJob: `SELECT total FROM bulk_jobs WHERE id = $1 AND worker_id = $2 AND status = 'running' FOR UPDATE`,
  // New entries in input order, known URLs left out, numbered on from the job's total, at most $6 of them.
  addFrontier: `
    WITH input AS (
      SELECT u.url, u.depth, u.reason, u.n FROM unnest($3::text[], $4::int[], $5::text[]) WITH ORDINALITY AS u(url, depth, reason, n)
    ), fresh AS (
      SELECT i.*, row_number() OVER (ORDER BY i.n) - 1 AS k FROM input i
      WHERE NOT EXISTS (SELECT 1 FROM bulk_items b WHERE b.job_id = $1 AND b.url = i.url AND b.depth IS NOT NULL)
    )
    INSERT INTO bulk_items (job_id, idx, url, status, depth, reason)
    SELECT $1, $2 + k, url, CASE WHEN reason IS NULL THEN 'pending' ELSE 'skipped' END, depth, reason FROM fresh WHERE k < $6
    RETURNING idx, url, depth, status`,
  setTotal: 'UPDATE bulk_jobs SET total = $2 WHERE id = $1',
  skipLeftover: `UPDATE bulk_items SET status = 'skipped', reason = $2 WHERE job_id = $1 AND status = 'pending'`,
  stopState: 'SELECT status FROM bulk_jobs WHERE id = $1 AND account_id = $2 AND kind = $3 FOR UPDATE',
  stopQueued: `UPDATE bulk_jobs SET status = 'completed', finished_at = $2, stop_reason = $3 WHERE id = $1 AND status = 'queued'`,
  markStop: `UPDATE bulk_jobs SET stop_reason = coalesce(stop_reason, $2) WHERE id = $1 AND status = 'running'`,
  stopReason: 'SELECT stop_reason FROM bulk_jobs WHERE id = $1',
  jobAccount: 'SELECT account_id FROM bulk_jobs WHERE id = $1',
  charge: `UPDATE accounts SET balance = balance - $2 WHERE id = $1 AND balance - held >= $2
           RETURNING period_start, balance - held AS available`,
  available: 'SELECT GREATEST(balance - held, 0) AS available FROM accounts WHERE id = $1',
  // A bulk item the balance cannot pay for fails with NO_CREDITS; a crawl page is skipped for it (it was never stored).
  refuseItem: `UPDATE bulk_items SET result = NULL,
                 status = CASE WHEN depth IS NULL THEN 'failed' ELSE 'skipped' END,
                 error = CASE WHEN depth IS NULL THEN '{"code":"NO_CREDITS"}'::jsonb END,
                 reason = CASE WHEN depth IS NULL THEN NULL ELSE 'no_credits' END
               WHERE job_id = $1 AND idx = $2`,
  charged: `
    WITH l AS (
      INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)
    )
    INSERT INTO usage (account_id, period_start, operation, credits, requests) VALUES ($2, $7, $3, $4, 1)
    ON CONFLICT (account_id, period_start, operation)
    DO UPDATE SET credits = usage.credits + EXCLUDED.credits, requests = usage.requests + 1`,
  completeJob: `UPDATE bulk_jobs SET status = $4, finished_at = $3, worker_id = NULL, lease_until = NULL, stop_reason = coalesce($5, stop_reason)
                WHERE id = $1 AND worker_id = $2 AND status = 'running'`,
  completeJobWithDelivery: `
    WITH j AS (
      UPDATE bulk_jobs SET status = $4, finished_at = $3, worker_id = NULL, lease_until = NULL, stop_reason = coalesce($8, stop_reason)
      WHERE id = $1 AND worker_id = $2 AND status = 'running' RETURNING id
    ), d AS (
      INSERT INTO webhook_deliveries (id, job_id, event, status, attempts, next_attempt_at, created_at)
      SELECT $5, j.id, $6, 'pending', 0, $7, $3 FROM j
    )
    SELECT id FROM j`,
  createDelivery: `INSERT INTO webhook_deliveries (id, job_id, event, status, attempts, next_attempt_at, created_at)
                   VALUES ($1, $2, $3, 'pending', 0, $4, $5)`,
  dueDeliveries: `
    WITH c AS (
      SELECT id FROM webhook_deliveries
      WHERE (status = 'pending' AND next_attempt_at <= $1) OR (status = 'sending' AND lease_until <= $1)
      ORDER BY COALESCE(next_attempt_at, lease_until), id COLLATE "C" LIMIT $2
      FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_deliveries d SET status = 'sending', lease_until = $1::bigint + $3::bigint
    FROM c, bulk_jobs j WHERE d.id = c.id AND j.id = d.job_id
    RETURNING d.id, d.job_id AS "jobId", j.account_id AS "accountId", d.event, d.attempts`,
  recordAttempt: `
    WITH a AS (
      INSERT INTO delivery_attempts (delivery_id, attempt, ok, response_status, error, attempted_at, next_attempt_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (delivery_id, attempt) DO NOTHING
    )
    UPDATE webhook_deliveries SET status = $8, attempts = GREATEST(attempts, $2), next_attempt_at = $9, lease_until = NULL WHERE id = $1`,
  secret: 'SELECT secret FROM account_webhook_secrets WHERE account_id = $1',
  ensureSecret: `
    WITH ins AS (
      INSERT INTO account_webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)
      ON CONFLICT (account_id) DO NOTHING RETURNING secret
    )
    SELECT secret FROM ins UNION ALL SELECT secret FROM account_webhook_secrets WHERE account_id = $1 LIMIT 1`,
  // A rotated-out secret is reported (and signs) only while now < previous_expires_at.
  secretState: `SELECT secret, coalesce(rotated_at, created_at) AS "createdAt",
                       CASE WHEN previous_expires_at > $2 THEN previous_expires_at END AS "previousExpiresAt"
                FROM account_webhook_secrets WHERE account_id = $1`,
  signingSecrets: `SELECT secret, CASE WHEN previous_expires_at > $2 THEN previous_secret END AS previous
                   FROM account_webhook_secrets WHERE account_id = $1`,
  // SET reads the row as it was: the old secret becomes the previous one (or is dropped when no grace is given).
  setSecret: `INSERT INTO account_webhook_secrets AS s (account_id, secret, created_at) VALUES ($1, $2, $3)
              ON CONFLICT (account_id) DO UPDATE SET secret = EXCLUDED.secret, rotated_at = EXCLUDED.created_at,
                previous_secret = CASE WHEN $4::bigint IS NULL THEN NULL ELSE s.secret END,
                previous_expires_at = $4::bigint
              RETURNING secret, coalesce(rotated_at, created_at) AS "createdAt", previous_expires_at AS "previousExpiresAt"`,
} as const;

type Statement = keyof typeof SQL;

/** A job row: progress is JSON text (see migration 5). */
type JobRow = Omit<Job, 'progress'> & { progress: string | null } & pg.QueryResultRow;
const toJob = (r: JobRow): Job => ({ ...r, progress: r.progress === null ? null : JSON.parse(r.progress) });

const q = (name: Statement, values: readonly unknown[]): pg.QueryConfig => ({ name: `scour_jobs_${name}`, text: SQL[name], values: values as unknown[] });

export class PostgresJobStore implements JobStore {
  constructor(private readonly pool: pg.Pool, private readonly unavailable: (e: unknown) => ServiceUnavailable) {}

  private attempt<A>(f: () => Promise<A>): Effect.Effect<A, ServiceUnavailable> {
    return Effect.tryPromise({ try: f, catch: (e) => this.unavailable(e) });
  }

  private query<R extends pg.QueryResultRow, A>(name: Statement, values: readonly unknown[], pick: (r: pg.QueryResult<R>) => A): Effect.Effect<A, ServiceUnavailable> {
    return this.attempt(() => this.pool.query<R>(q(name, values)).then(pick));
  }

  createJob(j: NewJob): Effect.Effect<Job, ServiceUnavailable> {
    return this.query<JobRow, Job>(
      'createJob',
      // Item text (a research job's query) drops U+0000 as the request's JSON does: PostgreSQL text cannot hold it.
      [j.id, j.accountId, jsonbText(JSON.stringify(j.request ?? null)), j.callbackUrl, j.pricePerUrl, j.urls.map((u) => u.replaceAll('\u0000', '')), j.now, j.depths ?? null, j.kind ?? 'bulk_scrape'],
      (r) => toJob(r.rows[0]!),
    );
  }

  getJob(id: string, accountId: string, options: GetJobOptions = {}): Effect.Effect<JobView | undefined, ServiceUnavailable> {
    const kind = options.kind === 'any' ? null : (options.kind ?? 'bulk_scrape');
    return this.attempt(async () => {
      const row = (await this.pool.query<JobRow>(q('getJob', [id, accountId, kind]))).rows[0];
      if (row === undefined) return undefined;
      const job = toJob(row);
      type ItemRow = Omit<JobItem, 'depth' | 'reason'> & { depth: number | null; reason: string | null };
      const [items, counts, deliveries, attempts] = await Promise.all([
        options.items === false ? { rows: [] as ItemRow[] } : this.pool.query<ItemRow & pg.QueryResultRow>(q('items', [id])),
        this.pool.query<{ status: string; reason: string | null; n: number }>(q('counts', [id])),
        this.pool.query<Omit<DeliveryView, 'history'> & pg.QueryResultRow>(q('deliveries', [id])),
        this.pool.query<DeliveryAttempt & { deliveryId: string }>(q('attempts', [id])),
      ]);
      const history = new Map<string, DeliveryAttempt[]>();
      for (const { deliveryId, ...rest } of attempts.rows) {
        const list = history.get(deliveryId) ?? [];
        list.push(rest);
        history.set(deliveryId, list);
      }
      return {
        ...job, items: items.rows.map(itemOf), counts: countItems(counts.rows),
        deliveries: deliveries.rows.map((d) => ({ ...d, history: history.get(d.id) ?? [] })),
      };
    });
  }

  claimJob(workerId: string, now: number, leaseMs: number, jobId?: string, kinds?: readonly JobKind[]): Effect.Effect<ClaimedJob | undefined, ServiceUnavailable> {
    const pick = (r: pg.QueryResult<{ id: string; accountId: string }>) =>
      r.rows[0] === undefined ? undefined : { jobId: r.rows[0].id, accountId: r.rows[0].accountId };
    return jobId === undefined
      ? this.query('claimJob', [workerId, now, leaseMs, kinds ?? null], pick)
      : this.query('claimThisJob', [workerId, now, leaseMs, jobId, kinds ?? null], pick);
  }

  runningJobs(): Effect.Effect<readonly { readonly jobId: string; readonly workerId: string }[], ServiceUnavailable> {
    return this.query<{ jobId: string; workerId: string }, readonly { jobId: string; workerId: string }[]>('running', [], (r) => r.rows);
  }

  purgeFinished(before: number, limit: number): Effect.Effect<number, ServiceUnavailable> {
    return this.query('purge', [before, limit], (r) => r.rowCount ?? 0);
  }

  renewLease(jobId: string, workerId: string, until: number): Effect.Effect<boolean, ServiceUnavailable> {
    return this.query('renew', [jobId, workerId, until], (r) => (r.rowCount ?? 0) > 0);
  }

  setProgress(jobId: string, workerId: string, progress: unknown, now: number): Effect.Effect<boolean, ServiceUnavailable> {
    const text = progressJson(progress);
    if (text === undefined) return Effect.succeed(false);
    return this.query('setProgress', [jobId, workerId, text, text === null ? null : now], (r) => (r.rowCount ?? 0) > 0);
  }

  /** One transaction on one pooled connection; a connection that failed mid-transaction is destroyed, not pooled. */
  private transaction<A>(work: (client: pg.PoolClient) => Promise<A>): Effect.Effect<A, ServiceUnavailable> {
    return this.attempt(async () => {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (e) {
        broken = e instanceof Error ? e : new Error(String(e));
        await client.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        client.release(broken);
      }
    });
  }

  /** Inside a transaction holding the job row: new frontier entries numbered on from `total`. */
  private async addFrontier(client: pg.PoolClient, jobId: string, total: number, add: FrontierAdd): Promise<AddedItem[]> {
    const entries = distinctEntries(add);
    const room = Math.max(0, add.limit - total);
    if (entries.length === 0 || room === 0) return [];
    const r = await client.query<AddedItem>(q('addFrontier', [
      jobId, total, entries.map((e) => e.url), entries.map((e) => e.depth), entries.map((e) => e.skip ?? null), room,
    ]));
    const added = [...r.rows].sort((a, b) => a.idx - b.idx);
    if (added.length > 0) await client.query(q('setTotal', [jobId, total + added.length]));
    return added;
  }

  finishItem(f: FinishItem): Effect.Effect<FinishResult, ServiceUnavailable> {
    if (!Number.isSafeInteger(f.credits) || f.credits < 0) return Effect.die(new RangeError(`credits must be an integer >= 0, got ${f.credits}`));
    return this.transaction(async (client) => {
      // Adding entries numbers them from the job's total: hold the job row first (job, item, account).
      const total = f.discovered === undefined ? undefined : (await client.query<{ total: number }>(q('lockJob', [f.jobId]))).rows[0]?.total;
      const available = async (accountId: string | undefined) =>
        accountId === undefined ? 0 : ((await client.query<{ available: number }>(q('available', [accountId]))).rows[0]?.available ?? 0);
      const status = f.skip !== undefined ? 'skipped' : f.success ? 'completed' : 'failed';
      // Blocks on a concurrent finisher's row lock, then re-checks status = 'pending': only one of them gets the row.
      const done = await client.query<{ account_id: string }>(q('finishItem', [
        f.jobId, f.idx, status, f.attempts, status === 'completed' ? json(f.result) : null, json(f.error), f.workerId, f.now, f.skip ?? null,
      ]));
      const accountId = done.rows[0]?.account_id;
      const discover = () => (f.discovered === undefined || total === undefined ? Promise.resolve([]) : this.addFrontier(client, f.jobId, total, f.discovered));
      if (accountId === undefined) {
        const owner = (await client.query<{ account_id: string }>(q('jobAccount', [f.jobId]))).rows[0]?.account_id;
        return { charged: 0, available: await available(owner), alreadyDone: true };
      }
      if (status !== 'completed' || f.credits <= 0) {
        const added = await discover();
        return { charged: 0, available: await available(accountId), alreadyDone: false, ...(f.discovered === undefined ? {} : { added }) };
      }
      const after = (await client.query<{ period_start: number; available: number }>(q('charge', [accountId, f.credits]))).rows[0];
      if (after === undefined) {
        await client.query(q('refuseItem', [f.jobId, f.idx]));
        return { charged: 0, available: await available(accountId), alreadyDone: false, ...(f.discovered === undefined ? {} : { added: [] }) };
      }
      await client.query(q('charged', [randomUUID(), accountId, f.operation ?? BULK_OPERATION, f.credits, f.ledgerRequestId, f.now, after.period_start]));
      const added = await discover();
      return { charged: f.credits, available: after.available, alreadyDone: false, ...(f.discovered === undefined ? {} : { added }) };
    });
  }

  addItems(jobId: string, workerId: string, add: FrontierAdd): Effect.Effect<readonly AddedItem[], ServiceUnavailable> {
    return this.transaction(async (client) => {
      const total = (await client.query<{ total: number }>(q('lockHeldJob', [jobId, workerId]))).rows[0]?.total;
      return total === undefined ? [] : this.addFrontier(client, jobId, total, add);
    });
  }

  requestStop(jobId: string, accountId: string, kind: JobKind, reason: string, now: number, delivery?: JobDelivery): Effect.Effect<StopRequest | undefined, ServiceUnavailable> {
    return this.transaction(async (client): Promise<StopRequest | undefined> => {
      const status = (await client.query<{ status: string }>(q('stopState', [jobId, accountId, kind]))).rows[0]?.status;
      if (status === undefined) return undefined;
      if (status === 'queued') {
        await client.query(q('stopQueued', [jobId, now, reason]));
        await client.query(q('skipLeftover', [jobId, reason]));
        if (delivery !== undefined) await client.query(q('createDelivery', [delivery.id, jobId, delivery.event, delivery.nextAttemptAt, now]));
        return 'stopped';
      }
      if (status === 'running') {
        await client.query(q('markStop', [jobId, reason]));
        return 'requested';
      }
      return 'finished';
    });
  }

  stopRequested(jobId: string): Effect.Effect<string | null, ServiceUnavailable> {
    return this.query<{ stop_reason: string | null }, string | null>('stopReason', [jobId], (r) => r.rows[0]?.stop_reason ?? null);
  }

  completeJob(jobId: string, workerId: string, now: number, status: 'completed' | 'failed', delivery?: JobDelivery, end?: JobEnd): Effect.Effect<boolean, ServiceUnavailable> {
    const stopReason = end?.stopReason ?? null;
    if (end?.leftover !== undefined) {
      const leftover = end.leftover;
      return this.transaction(async (client) => {
        const closed = delivery === undefined
          ? ((await client.query(q('completeJob', [jobId, workerId, now, status, stopReason]))).rowCount ?? 0) > 0
          : (await client.query(q('completeJobWithDelivery', [jobId, workerId, now, status, delivery.id, delivery.event, delivery.nextAttemptAt, stopReason]))).rows.length > 0;
        if (closed) await client.query(q('skipLeftover', [jobId, leftover]));
        return closed;
      });
    }
    return delivery === undefined
      ? this.query('completeJob', [jobId, workerId, now, status, stopReason], (r) => (r.rowCount ?? 0) > 0)
      : this.query('completeJobWithDelivery', [jobId, workerId, now, status, delivery.id, delivery.event, delivery.nextAttemptAt, stopReason], (r) => r.rows.length > 0);
  }

  createDelivery(d: NewDelivery): Effect.Effect<void, ServiceUnavailable> {
    return this.query('createDelivery', [d.id, d.jobId, d.event, d.nextAttemptAt, d.now], () => undefined);
  }

  dueDeliveries(now: number, limit: number, leaseMs = DEFAULT_DELIVERY_LEASE_MS): Effect.Effect<readonly DueDelivery[], ServiceUnavailable> {
    return this.query<DueDelivery & pg.QueryResultRow, readonly DueDelivery[]>('dueDeliveries', [now, limit, leaseMs], (r) => r.rows);
  }

  recordAttempt(r: RecordAttempt): Effect.Effect<void, ServiceUnavailable> {
    const status = r.ok ? 'delivered' : r.nextAttemptAt === null ? 'failed' : 'pending';
    return this.query(
      'recordAttempt',
      [r.deliveryId, r.attempt, r.ok, r.status, r.error, r.attemptedAt, r.ok ? null : r.nextAttemptAt, status, status === 'pending' ? r.nextAttemptAt : null],
      () => undefined,
    );
  }

  webhookSecret(accountId: string): Effect.Effect<string | undefined, ServiceUnavailable> {
    return this.query<{ secret: string }, string | undefined>('secret', [accountId], (r) => r.rows[0]?.secret);
  }

  ensureWebhookSecret(accountId: string, candidate: string, now: number): Effect.Effect<string, ServiceUnavailable> {
    return this.attempt(async () => {
      const r = await this.pool.query<{ secret: string }>(q('ensureSecret', [accountId, candidate, now]));
      if (r.rows[0] !== undefined) return r.rows[0].secret;
      // A racing insert committed after this statement's snapshot: it is visible to a new statement.
      const again = await this.pool.query<{ secret: string }>(q('secret', [accountId]));
      if (again.rows[0] === undefined) throw new Error('webhook secret vanished');
      return again.rows[0].secret;
    });
  }

  webhookSecretState(accountId: string, now: number): Effect.Effect<WebhookSecretState | undefined, ServiceUnavailable> {
    return this.query<WebhookSecretState & pg.QueryResultRow, WebhookSecretState | undefined>('secretState', [accountId, now], (r) => r.rows[0]);
  }

  signingSecrets(accountId: string, now: number): Effect.Effect<readonly string[], ServiceUnavailable> {
    return this.query<{ secret: string; previous: string | null }, readonly string[]>('signingSecrets', [accountId, now], (r) => {
      const row = r.rows[0];
      if (row === undefined) return [];
      return row.previous === null ? [row.secret] : [row.secret, row.previous];
    });
  }

  rotateWebhookSecret(accountId: string, secret: string, now: number, previousValidUntil?: number): Effect.Effect<WebhookSecretState, ServiceUnavailable> {
    const until = previousValidUntil !== undefined && previousValidUntil > now ? previousValidUntil : null;
    return this.query<WebhookSecretState & pg.QueryResultRow, WebhookSecretState>('setSecret', [accountId, secret, now, until], (r) => r.rows[0]!);
  }
}

/** The job store on an open account store's pool (closed with it). */
export function postgresJobStore(store: PostgresAccountStore): PostgresJobStore {
  const { pool, unavailable } = store.shared();
  return new PostgresJobStore(pool, unavailable);
}
