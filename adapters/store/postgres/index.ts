/**
 * AccountStore on PostgreSQL (pg Pool), for several processes or hosts
 * sharing accounts. reserve, settle, charge and release are each one statement
 * (data-modifying CTEs): one round trip, atomic, and correct under READ
 * COMMITTED because the guarded UPDATE re-checks its WHERE against the
 * newest row version after waiting on the row lock. Every statement locks
 * a hold before its account and never the reverse, so they cannot deadlock.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Effect } from 'effect';
import type { Account, KeyMatch, KeyRecord, LedgerRow, OperationUsage, PlanId, ReserveResult, SettleResult, ChargeResult } from '../../../core/accounts.js';
import { ServiceUnavailable } from '../../../core/errors.js';
import type { AccountStore, NewAccount, NewCharge, NewHold, NewKey } from '../../../core/ports.js';
import { pendingMigrations, type Migration } from '../migrate.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { KeyedBatcher } from './batch.js';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  readonly url: string;
  /** Pool size (default 10). */
  readonly max?: number;
  /** How long to wait for a connection before failing (default 5000 ms), so an unreachable server fails fast. */
  readonly connectionTimeoutMillis?: number;
  /**
   * Group commit (default true): concurrent reserves, concurrent settles and concurrent usage reads of one
   * account in this process go to PostgreSQL as one statement each (batch.ts). False: one statement per call.
   */
  readonly groupCommit?: boolean;
}

/** Session advisory lock key serialising migrations across processes ("scour" in ASCII). */
const MIGRATION_LOCK = '495874355570';

const INT8_OID = 20;
/**
 * bigint columns come back as JS numbers: epoch ms and credits stay far
 * below 2^53. Set per pool, not globally, so other pg users are unaffected.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? Number : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

const ACCOUNT_COLUMNS = `id, name, plan, balance, held, period_start AS "periodStart", period_end AS "periodEnd", created_at AS "createdAt"`;
const KEY_COLUMNS = `id, account_id AS "accountId", name, prefix, created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"`;

/** Named statements: pg prepares each once per pooled connection. */
const SQL = {
  findKey: `SELECT k.id AS "keyId", k.hash AS "keyHash", k.account_id AS "accountId", a.plan,
                   k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt",
                   a.name AS "accountName", a.balance, a.held, a.period_start AS "periodStart",
                   a.period_end AS "periodEnd", a.created_at AS "createdAt"
            FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1`,
  countAccounts: 'SELECT count(*) AS n FROM accounts',
  createAccount: `
    WITH a AS (
      INSERT INTO accounts (id, name, plan, balance, held, period_start, period_end, created_at)
      VALUES ($1, $2, $3, $4, 0, $5, $6, $5) RETURNING ${ACCOUNT_COLUMNS}
    ), g AS (
      INSERT INTO credit_grants (id, account_id, amount, reason, created_at)
      SELECT $7, a.id, a.balance, 'initial', a."createdAt" FROM a WHERE a.balance > 0
    )
    SELECT * FROM a`,
  getAccount: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`,
  listAccounts: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY created_at, id COLLATE "C"`,
  setPlan: `UPDATE accounts SET plan = $2 WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
  addCredits: `
    WITH a AS (
      UPDATE accounts SET balance = balance + $2 WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}
    ), g AS (
      INSERT INTO credit_grants (id, account_id, amount, reason, created_at) SELECT $3, a.id, $2, $4, $5 FROM a
    )
    SELECT * FROM a`,
  rollover: `UPDATE accounts SET period_start = $3, period_end = $4, balance = GREATEST(balance, $5)
             WHERE id = $1 AND period_end = $2`,
  createKey: `INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at, expires_at, revoked_at)
              VALUES ($1, $2, $3, $4, $5, $6, $7, NULL) RETURNING ${KEY_COLUMNS}`,
  listKeys: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id COLLATE "C"`,
  getKey: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`,
  revokeKey: `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
  // The refusal branch locks the row (FOR SHARE) so it reports the balance as of now, not as of the statement's snapshot.
  reserve: `
    WITH a AS (
      UPDATE accounts SET held = held + $3 WHERE id = $2 AND balance - held >= $3
      RETURNING id, balance - held AS available
    ), h AS (
      INSERT INTO credit_holds (id, account_id, operation, credits, request_id, created_at, expires_at)
      SELECT $1, a.id, $4, $3, $5, $6, $7 FROM a
    ), f AS (
      SELECT GREATEST(balance - held, 0) AS available FROM accounts
      WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM a) FOR SHARE
    )
    SELECT true AS ok, available FROM a
    UNION ALL
    SELECT false AS ok, available FROM f`,
  settle: `
    WITH h AS (
      DELETE FROM credit_holds WHERE id = $1 RETURNING account_id, operation, credits, request_id
    ), a AS (
      UPDATE accounts SET balance = accounts.balance - LEAST($2::bigint, h.credits), held = accounts.held - h.credits
      FROM h WHERE accounts.id = h.account_id
      RETURNING accounts.id, accounts.period_start, accounts.balance - accounts.held AS available,
                LEAST($2::bigint, h.credits) AS charged, h.operation, h.request_id
    ), l AS (
      INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at)
      SELECT $3, a.id, a.operation, a.charged, a.request_id, $4 FROM a
    ), u AS (
      INSERT INTO usage (account_id, period_start, operation, credits, requests)
      SELECT a.id, a.period_start, a.operation, a.charged, 1 FROM a
      ON CONFLICT (account_id, period_start, operation)
      DO UPDATE SET credits = usage.credits + EXCLUDED.credits, requests = usage.requests + 1
    )
    SELECT charged, available FROM a`,
  // Group commit (batch.ts): the holds of one account, in arrival order, admitted as if reserved one after
  // another: g walks them keeping what is left, so a hold that does not fit is refused and the next may fit,
  // exactly as separate reserve statements would decide. The account row is read with FOR NO KEY UPDATE, but
  // that read alone did not guarantee that g starts from the version the UPDATE changes: with another process
  // and other statements moving the same row, a stress run (two stores, holds and charges on one account) had
  // the UPDATE apply a walk made from an older balance about once in two batches, and overshoot into the
  // held <= balance CHECK. So the UPDATE applies only where the row still holds what g started from
  // (balance and held, rechecked on the newest version), and reports `applied`; a batch not applied wrote
  // nothing and is sent again (reserveBatch below). No account row: no rows, every hold refused with 0 available.
  reserveBatch: `
    WITH RECURSIVE r AS (
      SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])
        WITH ORDINALITY AS r(id, credits, operation, request_id, created_at, expires_at, n)
    ), acct AS (
      SELECT balance, held FROM accounts WHERE id = $1 FOR NO KEY UPDATE
    ), g(n, available, ok) AS (
      SELECT 0::bigint, balance - held, true FROM acct
      UNION ALL
      SELECT r.n, CASE WHEN g.available >= r.credits THEN g.available - r.credits ELSE g.available END, g.available >= r.credits
      FROM g JOIN r ON r.n = g.n + 1
    ), a AS (
      UPDATE accounts SET held = accounts.held + (SELECT COALESCE(sum(r.credits), 0) FROM g JOIN r USING (n) WHERE g.n > 0 AND g.ok)
      FROM acct WHERE accounts.id = $1 AND accounts.balance = acct.balance AND accounts.held = acct.held RETURNING accounts.id
    ), h AS (
      INSERT INTO credit_holds (id, account_id, operation, credits, request_id, created_at, expires_at)
      SELECT r.id, a.id, r.operation, r.credits, r.request_id, r.created_at, r.expires_at
      FROM g JOIN r USING (n) CROSS JOIN a WHERE g.n > 0 AND g.ok
    )
    SELECT n::int AS n, ok, GREATEST(available, 0) AS available, EXISTS (SELECT 1 FROM a) AS applied FROM g WHERE n > 0`,
  // Group commit of settles (batch.ts): holds of one account. Returns each hold's charge and credits, and the
  // account's available balance after all of them; the caller works out each one's own "available after".
  settleBatch: `
    WITH r AS (
      SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[]) WITH ORDINALITY AS r(hold_id, credits, ledger_id, now, n)
    ), h AS (
      DELETE FROM credit_holds c USING r WHERE c.id = r.hold_id
      RETURNING r.n, c.account_id, c.operation, c.credits AS held, LEAST(r.credits, c.credits) AS charged, c.request_id, r.ledger_id, r.now
    ), t AS (
      SELECT account_id, sum(charged) AS charged, sum(held) AS held FROM h GROUP BY account_id
    ), a AS (
      UPDATE accounts SET balance = accounts.balance - t.charged, held = accounts.held - t.held
      FROM t WHERE accounts.id = t.account_id
      RETURNING accounts.id, accounts.period_start, accounts.balance - accounts.held AS available
    ), l AS (
      INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at)
      SELECT h.ledger_id, h.account_id, h.operation, h.charged, h.request_id, h.now FROM h ORDER BY h.n
    ), u AS (
      INSERT INTO usage (account_id, period_start, operation, credits, requests)
      SELECT a.id, a.period_start, h.operation, sum(h.charged), count(*) FROM h JOIN a ON a.id = h.account_id
      GROUP BY a.id, a.period_start, h.operation
      ON CONFLICT (account_id, period_start, operation)
      DO UPDATE SET credits = usage.credits + EXCLUDED.credits, requests = usage.requests + EXCLUDED.requests
    )
    SELECT h.n::int AS n, h.held, h.charged, a.available FROM h JOIN a ON a.id = h.account_id`,
  // A charge without a hold (AccountStore.charge): the balance debited only if it covers the credits beside
  // what is held (reserve's condition; the UPDATE re-checks it on the newest row version after waiting for
  // the row lock), with the ledger row and usage settle writes. Refused: the balance as of now (FOR SHARE).
  charge: `
    WITH a AS (
      UPDATE accounts SET balance = balance - $3 WHERE id = $2 AND balance - held >= $3
      RETURNING id, period_start, balance - held AS available
    ), l AS (
      INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at)
      SELECT $1, a.id, $4, $3, $5, $6 FROM a
    ), u AS (
      INSERT INTO usage (account_id, period_start, operation, credits, requests)
      SELECT a.id, a.period_start, $4, $3, 1 FROM a
      ON CONFLICT (account_id, period_start, operation)
      DO UPDATE SET credits = usage.credits + EXCLUDED.credits, requests = usage.requests + 1
    ), f AS (
      SELECT GREATEST(balance - held, 0) AS available FROM accounts
      WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM a) FOR SHARE
    )
    SELECT true AS ok, available FROM a
    UNION ALL
    SELECT false AS ok, available FROM f`,
  // Group commit of charges (batch.ts): one account's charges, in arrival order, each made only if what is left
  // covers it, exactly as separate charge statements would decide (the walk of reserveBatch, on the account
  // row locked first). Each row: whether it was charged and the available balance after it (or, refused, then).
  chargeBatch: `
    WITH RECURSIVE r AS (
      SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[])
        WITH ORDINALITY AS r(id, credits, operation, request_id, created_at, n)
    ), acct AS (
      SELECT balance, held FROM accounts WHERE id = $1 FOR NO KEY UPDATE
    ), g(n, available, ok) AS (
      SELECT 0::bigint, balance - held, true FROM acct
      UNION ALL
      SELECT r.n, CASE WHEN g.available >= r.credits THEN g.available - r.credits ELSE g.available END, g.available >= r.credits
      FROM g JOIN r ON r.n = g.n + 1
    ), c AS (
      SELECT r.* FROM g JOIN r USING (n) WHERE g.n > 0 AND g.ok
    ), a AS (
      UPDATE accounts SET balance = accounts.balance - (SELECT COALESCE(sum(c.credits), 0) FROM c)
      FROM acct WHERE accounts.id = $1 AND accounts.balance = acct.balance AND accounts.held = acct.held
      RETURNING accounts.id, accounts.period_start
    ), l AS (
      INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at)
      SELECT c.id, a.id, c.operation, c.credits, c.request_id, c.created_at FROM c CROSS JOIN a ORDER BY c.n
    ), u AS (
      INSERT INTO usage (account_id, period_start, operation, credits, requests)
      SELECT a.id, a.period_start, c.operation, sum(c.credits), count(*) FROM c CROSS JOIN a
      GROUP BY a.id, a.period_start, c.operation
      ON CONFLICT (account_id, period_start, operation)
      DO UPDATE SET credits = usage.credits + EXCLUDED.credits, requests = usage.requests + EXCLUDED.requests
    )
    SELECT n::int AS n, ok, GREATEST(available, 0) AS available, EXISTS (SELECT 1 FROM a) AS applied FROM g WHERE n > 0`,
  release: `
    WITH h AS (DELETE FROM credit_holds WHERE id = $1 RETURNING account_id, credits)
    UPDATE accounts SET held = accounts.held - h.credits FROM h WHERE accounts.id = h.account_id`,
  expiredHolds: 'SELECT id FROM credit_holds WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2',
  usage: `SELECT operation, credits, requests FROM usage WHERE account_id = $1 AND period_start = $2 ORDER BY operation COLLATE "C"`,
  // The account and its current period's usage in one round trip (one row per operation; one with NULLs when none).
  accountUsage: `SELECT a.id, a.name, a.plan, a.balance, a.held, a.period_start AS "periodStart", a.period_end AS "periodEnd",
                        a.created_at AS "createdAt", u.operation, u.credits, u.requests
                 FROM accounts a LEFT JOIN usage u ON u.account_id = a.id AND u.period_start = a.period_start
                 WHERE a.id = $1 ORDER BY u.operation COLLATE "C"`,
  ledger: `SELECT id, account_id AS "accountId", operation, credits, request_id AS "requestId", created_at AS "createdAt"
           FROM ledger WHERE account_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2`,
} as const;

type Statement = keyof typeof SQL;

const SWEEP_BATCH = 500;

/** Bad amounts are caller bugs, not outages: they die instead of failing with a 503. */
const wholeCredits = (what: string, n: number, min: number): Effect.Effect<never> | undefined =>
  Number.isSafeInteger(n) && n >= min ? undefined : Effect.die(new RangeError(`${what} must be an integer >= ${min}, got ${n}`));

/**
 * The driver's message, unless it could carry the connection string or its
 * password (then just "database error"). Every PostgreSQL adapter (the
 * account and job store, the search index) words its failures through this.
 */
export function driverMessage(e: unknown, url: string | undefined): string {
  const message = e instanceof Error ? e.message : String(e);
  if (url === undefined) return message;
  const secrets = [url];
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password.length > 0) secrets.push(password);
  } catch {
    // Not a URL pg would parse either; the url check alone applies.
  }
  return secrets.some((s) => message.includes(s)) ? 'database error' : message;
}

/** Connects, migrates and returns the store; rejects with a clear Error when the server is unreachable or ahead of this build. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresAccountStore> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5000,
    types,
  });
  // An idle connection dropped by the server would otherwise be an unhandled 'error' event; the next query reports it.
  pool.on('error', () => {});
  try {
    await migratePostgres(pool, POSTGRES_MIGRATIONS);
  } catch (e) {
    await pool.end().catch(() => {});
    throw new Error(`Cannot open the PostgreSQL account store: ${driverMessage(e, options.url)}`, { cause: e });
  }
  return new PostgresAccountStore(pool, options.url, options.groupCommit ?? true);
}

/**
 * Applies pending migrations, each in its own transaction, holding a session
 * advisory lock so processes starting together take turns (the lock goes
 * with the session if this process dies mid-way).
 */
export async function migratePostgres(
  pool: pg.Pool,
  migrations: readonly Migration[],
  /** Another schema in the same database (the search index) keeps its own table and lock. */
  own: { readonly table: string; readonly lock: string; readonly label: string } = { table: 'schema_migrations', lock: MIGRATION_LOCK, label: 'PostgreSQL' },
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const lock = own.lock;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [lock]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS ${own.table} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at bigint NOT NULL
      )`);
      const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${own.table}`);
      for (const m of pendingMigrations(own.label, migrations, rows.map((r) => Number(r.version)))) {
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query(`INSERT INTO ${own.table} (version, name, applied_at) VALUES ($1, $2, $3)`, [m.version, m.name, Date.now()]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK').catch(() => {});
          throw e;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [lock]).catch((e: Error) => {
        broken = e;
      });
    }
  } catch (e) {
    broken = e instanceof Error ? e : new Error(String(e));
    throw e;
  } finally {
    // A connection that failed is destroyed, not returned: it may still hold the lock or an open transaction.
    client.release(broken);
  }
}

/** U+0000 in a text value: such a call takes the single-statement path, which handles it (see query()). */
const hasNul = (...values: string[]): boolean => values.some((v) => v.includes('\u0000'));

/** Sends of a batch whose account row moved under it, before its holds or charges go one statement each. */
const STALE_RETRIES = 3;

interface PendingCharge extends NewCharge {
  /** The ledger row's id. */
  readonly id: string;
}

interface PendingSettle {
  readonly holdId: string;
  readonly credits: number;
  readonly ledgerId: string;
  readonly now: number;
}

export class PostgresAccountStore implements AccountStore {
  private closed = false;
  /**
   * Holds reserved through this store and not yet settled or released, with their account: settle() takes
   * only a hold id, and batches are per account (one account row locked per statement, so two processes'
   * batches cannot deadlock). An entry goes at the hold's settle or release, whatever its outcome.
   */
  private readonly holdAccounts = new Map<string, string>();
  /** Concurrent reserves of one account, one statement per batch (batch.ts). */
  readonly reserves = new KeyedBatcher<NewHold, ReserveResult>((accountId, holds) => this.reserveBatch(accountId, holds));
  /**
   * Concurrent accountUsage reads of one account share one statement sent after all of them arrived (the
   * batcher's next statement, never the one already in flight), so none is answered from before its call.
   */
  readonly usageReads = new KeyedBatcher<undefined, AccountUsage | undefined>((accountId, items) => this.readAccountUsage(accountId, items.length));
  /** Concurrent charges (without a hold) of one account, one statement per batch. */
  readonly charges = new KeyedBatcher<PendingCharge, ChargeResult>((accountId, items) => this.chargeBatch(accountId, items));
  /** Concurrent settles of one account's holds, one statement per batch. */
  readonly settles = new KeyedBatcher<PendingSettle, SettleResult>((accountId, items) => this.settleBatch(items));
  /**
   * Batches of holds or charges whose account row had moved between the batch's read of it and its update
   * (see reserveBatch in SQL): nothing was written, and the batch was sent again. Tests and benchmarks read it.
   */
  staleBatches = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    /**
     * Group commit of reserves, settles and usage reads per account (default on); off, each is its own
     * statement. Settable at run time (bench:http's same-run comparison turns it off); holds already
     * reserved keep their path.
     */
    public groupCommit = true,
  ) {}

  private unavailable(e: unknown): ServiceUnavailable {
    return new ServiceUnavailable({ message: `Account store unavailable: ${driverMessage(e, this.url)}`, retryAfter: 1 });
  }

  private async reserveOne(h: NewHold): Promise<ReserveResult> {
    const { rows } = await this.pool.query<{ ok: boolean; available: number }>({
      name: 'scour_reserve', text: SQL.reserve, values: [h.id, h.accountId, h.credits, h.operation, h.requestId, h.now, h.expiresAt],
    });
    return rows[0] === undefined ? { ok: false, available: 0 } : { ok: rows[0].ok, available: rows[0].available };
  }

  private async chargeOne(c: PendingCharge): Promise<ChargeResult> {
    const { rows } = await this.pool.query<{ ok: boolean; available: number }>({
      name: 'scour_charge', text: SQL.charge, values: [c.id, c.accountId, c.credits, c.operation, c.requestId, c.now],
    });
    return rows[0] === undefined ? { ok: false, available: 0 } : { ok: rows[0].ok, available: rows[0].available };
  }

  private reserveBatch(accountId: string, holds: readonly NewHold[]): Promise<readonly ReserveResult[]> {
    return this.walkBatch('scour_reserveBatch', SQL.reserveBatch, [
      accountId, holds.map((h) => h.id), holds.map((h) => h.credits), holds.map((h) => h.operation),
      holds.map((h) => h.requestId), holds.map((h) => h.now), holds.map((h) => h.expiresAt),
    ], holds, (h) => this.reserveOne(h));
  }

  private chargeBatch(accountId: string, items: readonly PendingCharge[]): Promise<readonly ChargeResult[]> {
    return this.walkBatch('scour_chargeBatch', SQL.chargeBatch, [
      accountId, items.map((c) => c.id), items.map((c) => c.credits), items.map((c) => c.operation), items.map((c) => c.requestId), items.map((c) => c.now),
    ], items, (c) => this.chargeOne(c));
  }

  /**
   * One account's holds or charges as one walking statement (reserveBatch, chargeBatch in SQL): each item's
   * outcome in input order. Alone (no load), `one` runs the single statement, cheaper than the walk. A batch
   * the account row moved under (`applied` false: nothing was written) is sent again, and after STALE_RETRIES
   * sends each item goes through `one`, exact on its own. No rows: no such account, every item refused.
   */
  private async walkBatch<I>(
    name: string, text: string, values: readonly unknown[], items: readonly I[], one: (item: I) => Promise<ReserveResult>,
  ): Promise<readonly ReserveResult[]> {
    if (items.length === 1) return [await one(items[0]!)];
    for (let attempt = 1; ; attempt++) {
      const { rows } = await this.pool.query<{ n: number; ok: boolean; available: number; applied: boolean }>({ name, text, values: [...values] });
      if (rows.length > 0 && !rows[0]!.applied) {
        this.staleBatches++;
        if (attempt < STALE_RETRIES) continue;
        return Promise.all(items.map(one));
      }
      const out: ReserveResult[] = items.map(() => ({ ok: false, available: 0 }));
      for (const r of rows) out[r.n - 1] = { ok: r.ok, available: r.available };
      return out;
    }
  }

  /** Each settle's "available" is the account's as if the batch's settles had run one after another in order. */
  private async settleBatch(items: readonly PendingSettle[]): Promise<readonly SettleResult[]> {
    if (items.length === 1) {
      const i = items[0]!;
      const { rows } = await this.pool.query<{ charged: number; available: number }>({
        name: 'scour_settle', text: SQL.settle, values: [i.holdId, i.credits, i.ledgerId, i.now],
      });
      return [rows[0] ?? { charged: 0, available: 0 }];
    }
    const { rows } = await this.pool.query<{ n: number; held: number; charged: number; available: number }>({
      name: 'scour_settleBatch',
      text: SQL.settleBatch,
      values: [items.map((i) => i.holdId), items.map((i) => i.credits), items.map((i) => i.ledgerId), items.map((i) => i.now)],
    });
    // No row for a hold: it was swept (or settled) already, so nothing is charged, as with settle's single statement.
    const out: SettleResult[] = items.map(() => ({ charged: 0, available: 0 }));
    rows.sort((x, y) => y.n - x.n);
    let refundedAfter = 0;
    for (const r of rows) {
      out[r.n - 1] = { charged: r.charged, available: r.available - refundedAfter };
      refundedAfter += r.held - r.charged;
    }
    return out;
  }

  private query<R extends pg.QueryResultRow, A>(
    name: Statement,
    values: readonly unknown[],
    pick: (r: pg.QueryResult<R>) => A,
  ): Effect.Effect<A, ServiceUnavailable> {
    // PostgreSQL text cannot hold U+0000 (it refuses the whole statement, which read as an outage: 503).
    // A name keeps its other characters, as the job store does; an id holding one names no row.
    if (values.some((v) => typeof v === 'string' && v.includes('\u0000'))) {
      if (name !== 'createAccount' && name !== 'createKey') return Effect.succeed(pick({ rows: [], rowCount: 0 } as unknown as pg.QueryResult<R>));
      values = values.map((v) => (typeof v === 'string' ? v.replaceAll('\u0000', '') : v));
    }
    return Effect.tryPromise({
      try: () => this.pool.query<R>({ name: `scour_${name}`, text: SQL[name], values: values as unknown[] }).then(pick),
      catch: (e) => new ServiceUnavailable({ message: `Account store unavailable: ${driverMessage(e, this.url)}`, retryAfter: 1 }),
    });
  }

  findKey(hash: string): Effect.Effect<KeyMatch | undefined, ServiceUnavailable> {
    return this.query<KeyMatch & pg.QueryResultRow, KeyMatch | undefined>('findKey', [hash], (r) => r.rows[0]);
  }

  countAccounts(): Effect.Effect<number, ServiceUnavailable> {
    return this.query<{ n: number }, number>('countAccounts', [], (r) => r.rows[0]?.n ?? 0);
  }

  createAccount(a: NewAccount): Effect.Effect<Account, ServiceUnavailable> {
    return wholeCredits('credits', a.credits, 0) ??
      this.query<AccountRow, Account>('createAccount', [a.id, a.name, a.plan, a.credits, a.now, a.periodEnd, randomUUID()], (r) => r.rows[0]!);
  }

  getAccount(id: string): Effect.Effect<Account | undefined, ServiceUnavailable> {
    return this.query<AccountRow, Account | undefined>('getAccount', [id], (r) => r.rows[0]);
  }

  listAccounts(): Effect.Effect<readonly Account[], ServiceUnavailable> {
    return this.query<AccountRow, readonly Account[]>('listAccounts', [], (r) => r.rows);
  }

  setPlan(id: string, plan: PlanId): Effect.Effect<Account | undefined, ServiceUnavailable> {
    return this.query<AccountRow, Account | undefined>('setPlan', [id, plan], (r) => r.rows[0]);
  }

  addCredits(id: string, amount: number, reason: string, now: number): Effect.Effect<Account | undefined, ServiceUnavailable> {
    return wholeCredits('amount', amount, 1) ??
      this.query<AccountRow, Account | undefined>('addCredits', [id, amount, randomUUID(), reason, now], (r) => r.rows[0]);
  }

  rollover(id: string, expectedEnd: number, start: number, end: number, allowance: number): Effect.Effect<void, ServiceUnavailable> {
    return wholeCredits('allowance', allowance, 0) ??
      this.query('rollover', [id, expectedEnd, start, end, allowance], () => undefined);
  }

  createKey(k: NewKey): Effect.Effect<KeyRecord, ServiceUnavailable> {
    return this.query<KeyRow, KeyRecord>('createKey', [k.id, k.accountId, k.name, k.prefix, k.hash, k.now, k.expiresAt], (r) => r.rows[0]!);
  }

  listKeys(accountId: string): Effect.Effect<readonly KeyRecord[], ServiceUnavailable> {
    return this.query<KeyRow, readonly KeyRecord[]>('listKeys', [accountId], (r) => r.rows);
  }

  getKey(keyId: string): Effect.Effect<KeyRecord | undefined, ServiceUnavailable> {
    return this.query<KeyRow, KeyRecord | undefined>('getKey', [keyId], (r) => r.rows[0]);
  }

  revokeKey(keyId: string, now: number): Effect.Effect<KeyRecord | undefined, ServiceUnavailable> {
    return this.query<KeyRow, KeyRecord | undefined>('revokeKey', [keyId, now], (r) => r.rows[0]);
  }

  reserve(h: NewHold): Effect.Effect<ReserveResult, ServiceUnavailable> {
    const bad = wholeCredits('credits', h.credits, 0);
    if (bad !== undefined) return bad;
    if (this.groupCommit && !hasNul(h.id, h.accountId, h.operation, h.requestId)) {
      return Effect.tryPromise({
        try: () => this.reserves.submit(h.accountId, h).then((r) => {
          if (r.ok) this.holdAccounts.set(h.id, h.accountId);
          return r;
        }),
        catch: (e) => this.unavailable(e),
      });
    }
    return this.query<{ ok: boolean; available: number }, ReserveResult>(
        'reserve',
        [h.id, h.accountId, h.credits, h.operation, h.requestId, h.now, h.expiresAt],
        (r) => {
          const row = r.rows[0];
          return row === undefined ? { ok: false, available: 0 } : { ok: row.ok, available: row.available };
        },
      );
  }

  settle(holdId: string, credits: number, now: number): Effect.Effect<SettleResult, ServiceUnavailable> {
    // No row: the hold was swept (or settled) already, so nothing is charged; its account is no longer known.
    const bad = wholeCredits('credits', credits, 0);
    if (bad !== undefined) return bad;
    // A hold this process reserved is settled with the other settles of its account (one statement, one commit).
    const accountId = this.holdAccounts.get(holdId);
    if (accountId !== undefined) {
      this.holdAccounts.delete(holdId);
      return Effect.tryPromise({
        try: () => this.settles.submit(accountId, { holdId, credits, ledgerId: randomUUID(), now }),
        catch: (e) => this.unavailable(e),
      });
    }
    return this.query<{ charged: number; available: number }, SettleResult>(
        'settle',
        [holdId, credits, randomUUID(), now],
        (r) => r.rows[0] ?? { charged: 0, available: 0 },
      );
  }

  release(holdId: string): Effect.Effect<void, ServiceUnavailable> {
    this.holdAccounts.delete(holdId);
    return this.query('release', [holdId], () => undefined);
  }

  charge(c: NewCharge): Effect.Effect<ChargeResult, ServiceUnavailable> {
    const bad = wholeCredits('credits', c.credits, 0);
    if (bad !== undefined) return bad;
    if (this.groupCommit && !hasNul(c.accountId, c.operation, c.requestId)) {
      return Effect.tryPromise({ try: () => this.charges.submit(c.accountId, { ...c, id: randomUUID() }), catch: (e) => this.unavailable(e) });
    }
    return this.query<{ ok: boolean; available: number }, ChargeResult>(
      'charge',
      [randomUUID(), c.accountId, c.credits, c.operation, c.requestId, c.now],
      (r) => {
        const row = r.rows[0];
        return row === undefined ? { ok: false, available: 0 } : { ok: row.ok, available: row.available };
      },
    );
  }

  /**
   * Released one hold at a time, each with the release statement: a single
   * statement spanning several accounts could lock them in different orders
   * in two processes sweeping together, and deadlock.
   */
  sweepHolds(now: number): Effect.Effect<number, ServiceUnavailable> {
    return Effect.tryPromise({
      try: async () => {
        let released = 0;
        for (;;) {
          const { rows } = await this.pool.query<{ id: string }>({ name: 'scour_expiredHolds', text: SQL.expiredHolds, values: [now, SWEEP_BATCH] });
          for (const { id } of rows) {
            const r = await this.pool.query({ name: 'scour_release', text: SQL.release, values: [id] });
            released += r.rowCount ?? 0;
          }
          if (rows.length < SWEEP_BATCH) return released;
        }
      },
      catch: (e) => new ServiceUnavailable({ message: `Account store unavailable: ${driverMessage(e, this.url)}`, retryAfter: 1 }),
    });
  }

  usage(accountId: string, periodStart: number): Effect.Effect<readonly OperationUsage[], ServiceUnavailable> {
    return this.query<OperationUsage & pg.QueryResultRow, readonly OperationUsage[]>('usage', [accountId, periodStart], (r) => r.rows);
  }

  accountUsage(accountId: string): Effect.Effect<AccountUsage | undefined, ServiceUnavailable> {
    if (this.groupCommit && !accountId.includes('\u0000')) {
      return Effect.tryPromise({ try: () => this.usageReads.submit(accountId, undefined), catch: (e) => this.unavailable(e) });
    }
    return this.query<UsageRow, AccountUsage | undefined>('accountUsage', [accountId], toAccountUsage);
  }

  /** One read for every caller of a batch: the statement starts after each of them asked, so each sees its own writes. */
  private async readAccountUsage(accountId: string, callers: number): Promise<readonly (AccountUsage | undefined)[]> {
    const r = await this.pool.query<UsageRow>({ name: 'scour_accountUsage', text: SQL.accountUsage, values: [accountId] });
    const answer = toAccountUsage(r);
    return Array.from({ length: callers }, () => answer);
  }

  ledger(accountId: string, limit: number): Effect.Effect<readonly LedgerRow[], ServiceUnavailable> {
    return this.query<LedgerRow & pg.QueryResultRow, readonly LedgerRow[]>('ledger', [accountId, limit], (r) => r.rows);
  }

  /** For the job store (adapters/store/postgres/jobs.ts), which shares this pool: the pool and the driver-error mapping. */
  shared(): { readonly pool: pg.Pool; unavailable(e: unknown): ServiceUnavailable } {
    return {
      pool: this.pool,
      unavailable: (e) => new ServiceUnavailable({ message: `Job store unavailable: ${driverMessage(e, this.url)}`, retryAfter: 1 }),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  dispose(): Promise<void> {
    return this.close();
  }
}

type AccountRow = Account & pg.QueryResultRow;
type AccountUsage = { readonly account: Account; readonly usage: readonly OperationUsage[] };
type UsageRow = AccountRow & { operation: string | null; credits: number | null; requests: number | null };

function toAccountUsage(r: pg.QueryResult<UsageRow>): AccountUsage | undefined {
  const first = r.rows[0];
  if (first === undefined) return undefined;
  const account: Account = {
    id: first.id, name: first.name, plan: first.plan, balance: first.balance, held: first.held,
    periodStart: first.periodStart, periodEnd: first.periodEnd, createdAt: first.createdAt,
  };
  const usage: OperationUsage[] = [];
  for (const row of r.rows) if (row.operation !== null) usage.push({ operation: row.operation, credits: row.credits ?? 0, requests: row.requests ?? 0 });
  return { account, usage };
}
type KeyRow = KeyRecord & pg.QueryResultRow;
