/**
 * AccountStore on one SQLite file (better-sqlite3): the embedded default.
 * Every call is synchronous, so methods hand back completed Effects (Exit
 * values) and the request path never starts a fiber. Writes that read and
 * then write run in BEGIN IMMEDIATE transactions: the write lock is taken
 * up front, so several connections, in this process or in others sharing
 * the file, cannot both pass the same balance check.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Effect } from 'effect';
import type { Account, KeyMatch, KeyRecord, LedgerRow, OperationUsage, PlanId, ReserveResult, SettleResult, ChargeResult } from '../../../core/accounts.js';
import { ServiceUnavailable } from '../../../core/errors.js';
import type { AccountStore, Disposable, NewAccount, NewCharge, NewHold, NewKey } from '../../../core/ports.js';
import { migrateSqlite, openSqliteDatabase } from './open.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

export { migrateSqlite, openSqliteDatabase };

export interface SqliteStoreOptions {
  /** The database file (its directory is created), or ':memory:'. */
  readonly path: string;
  /**
   * How often (ms) to look for writes by other connections (the CLI, another
   * process on the same file) before answering a cached read. 0 checks on
   * every read. Default 100.
   */
  readonly freshnessMs?: number;
}

const ACCOUNT_COLUMNS = `id, name, plan, balance, held, period_start AS "periodStart", period_end AS "periodEnd", created_at AS "createdAt"`;
const KEY_COLUMNS = `id, account_id AS "accountId", name, prefix, created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"`;

const unavailable = (e: unknown): ServiceUnavailable =>
  new ServiceUnavailable({ message: `Account store unavailable: ${e instanceof Error ? e.message : String(e)}`, retryAfter: 1 });

/** Bad amounts are caller bugs, not outages: they die instead of failing with a 503. */
const wholeCredits = (what: string, n: number, min: number): Effect.Effect<never> | undefined =>
  Number.isSafeInteger(n) && n >= min ? undefined : Effect.die(new RangeError(`${what} must be an integer >= ${min}, got ${n}`));

/** Opens (creating if needed) and migrates the database, then returns the store. Throws when it cannot. */
export function openSqliteStore(options: SqliteStoreOptions): SqliteAccountStore {
  return openSqliteDatabase(options.path, (db) => {
    db.pragma('foreign_keys = ON');
    migrateSqlite(db, SQLITE_MIGRATIONS);
    return new SqliteAccountStore(db, options.freshnessMs ?? 100);
  });
}

function prepareStatements(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  return {
    findKey: p(`SELECT k.id AS "keyId", k.hash AS "keyHash", k.account_id AS "accountId", a.plan,
                       k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt",
                       a.name AS "accountName", a.balance, a.held, a.period_start AS "periodStart",
                   a.period_end AS "periodEnd", a.created_at AS "createdAt"
                FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ?`),
    countAccounts: p('SELECT count(*) FROM accounts').pluck(),
    insertAccount: p(`INSERT INTO accounts (id, name, plan, balance, held, period_start, period_end, created_at)
                      VALUES (?, ?, ?, ?, 0, ?, ?, ?) RETURNING ${ACCOUNT_COLUMNS}`),
    insertGrant: p('INSERT INTO credit_grants (id, account_id, amount, reason, created_at) VALUES (?, ?, ?, ?, ?)'),
    getAccount: p(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`),
    listAccounts: p(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY created_at, id`),
    setPlan: p(`UPDATE accounts SET plan = ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`),
    addCredits: p(`UPDATE accounts SET balance = balance + ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`),
    rollover: p(`UPDATE accounts SET period_start = ?, period_end = ?, balance = max(balance, ?)
                 WHERE id = ? AND period_end = ?`),
    insertKey: p(`INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at, expires_at, revoked_at)
                  VALUES (?, ?, ?, ?, ?, ?, ?, NULL) RETURNING ${KEY_COLUMNS}`),
    listKeys: p(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at, id`),
    getKey: p(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`),
    revokeKey: p(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING ${KEY_COLUMNS}`),
    holdCredits: p(`UPDATE accounts SET held = held + ? WHERE id = ? AND balance - held >= ?
                    RETURNING balance - held AS available`),
    available: p('SELECT max(balance - held, 0) FROM accounts WHERE id = ?').pluck(),
    insertHold: p(`INSERT INTO credit_holds (id, account_id, operation, credits, request_id, created_at, expires_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)`),
    deleteHold: p('DELETE FROM credit_holds WHERE id = ? RETURNING account_id, operation, credits, request_id'),
    charge: p(`UPDATE accounts SET balance = balance - ?, held = held - ? WHERE id = ?
               RETURNING period_start AS "periodStart", balance - held AS available`),
    insertLedger: p(`INSERT INTO ledger (id, account_id, operation, credits, request_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
    addUsage: p(`INSERT INTO usage (account_id, period_start, operation, credits, requests) VALUES (?, ?, ?, ?, 1)
                 ON CONFLICT (account_id, period_start, operation)
                 DO UPDATE SET credits = credits + excluded.credits, requests = requests + 1`),
    unhold: p('UPDATE accounts SET held = held - ? WHERE id = ?'),
    chargeIfCovered: p(`UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance - held >= ?
                        RETURNING period_start AS "periodStart", balance - held AS available`),
    dataVersion: p('PRAGMA data_version').pluck(),
    expiredHolds: p('DELETE FROM credit_holds WHERE expires_at <= ? RETURNING account_id, credits'),
    usage: p(`SELECT operation, credits, requests FROM usage WHERE account_id = ? AND period_start = ? ORDER BY operation`),
    ledger: p(`SELECT id, account_id AS "accountId", operation, credits, request_id AS "requestId", created_at AS "createdAt"
               FROM ledger WHERE account_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`),
  };
}

interface HoldRow { account_id: string; operation: string; credits: number; request_id: string }

/** Entries kept before the read cache starts over (each is one key or one account's usage). */
const CACHE_LIMIT = 50_000;

export class SqliteAccountStore implements AccountStore, Disposable {
  private readonly s: ReturnType<typeof prepareStatements>;
  /*
   * The read cache: findKey by hash and usage by account and period, the two
   * reads every authenticated request makes. It is exact for this
   * connection's own writes (each write drops its account's entries, in the
   * same call), and other connections' writes are noticed through PRAGMA
   * data_version (which changes only when another connection commits),
   * checked at most every `freshnessMs`. Reserve, settle and every other
   * write always go to the database: money is never decided from memory.
   */
  private readonly keys = new Map<string, KeyMatch>();
  private readonly hashesOf = new Map<string, string[]>();
  /** accountId -> periodStart -> usage rows. */
  private readonly usages = new Map<string, Map<number, readonly OperationUsage[]>>();
  /** accountId -> the account (every write to an account forgets it, like its usage). */
  private readonly accountsById = new Map<string, Account>();
  private version: unknown = undefined;
  private checkedAt = -Infinity;
  // Each is the IMMEDIATE variant: the write lock is taken before the first read, so no check can go stale.
  private readonly reserveTx: (h: NewHold) => ReserveResult;
  private readonly settleTx: (holdId: string, credits: number, now: number) => SettleResult;
  private readonly releaseTx: (holdId: string) => void;
  private readonly chargeTx: (c: NewCharge) => ChargeResult;
  private readonly sweepTx: (now: number) => number;
  private readonly createAccountTx: (a: NewAccount) => Account;
  private readonly addCreditsTx: (id: string, amount: number, reason: string, now: number) => Account | undefined;

  constructor(private readonly db: Database.Database, private readonly freshnessMs = 100) {
    const s = (this.s = prepareStatements(db));
    const forget = (accountId: string) => this.forget(accountId);

    this.reserveTx = db.transaction((h: NewHold): ReserveResult => {
      const held = s.holdCredits.get(h.credits, h.accountId, h.credits) as { available: number } | undefined;
      if (held === undefined) {
        const available = s.available.get(h.accountId) as number | undefined;
        return { ok: false, available: available ?? 0 };
      }
      s.insertHold.run(h.id, h.accountId, h.operation, h.credits, h.requestId, h.now, h.expiresAt);
      forget(h.accountId);
      return { ok: true, available: held.available };
    }).immediate;

    this.settleTx = db.transaction((holdId: string, credits: number, now: number): SettleResult => {
      const hold = s.deleteHold.get(holdId) as HoldRow | undefined;
      // Swept already (its request outlived the hold): the credits went back, nothing is charged.
      // The account is no longer known from the hold id, so no balance can be reported.
      if (hold === undefined) return { charged: 0, available: 0 };
      const charged = Math.min(credits, hold.credits);
      const after = s.charge.get(charged, hold.credits, hold.account_id) as { periodStart: number; available: number } | undefined;
      if (after === undefined) return { charged: 0, available: 0 };
      s.insertLedger.run(randomUUID(), hold.account_id, hold.operation, charged, hold.request_id, now);
      s.addUsage.run(hold.account_id, after.periodStart, hold.operation, charged);
      forget(hold.account_id);
      return { charged, available: after.available };
    }).immediate;

    this.chargeTx = db.transaction((c: NewCharge): ChargeResult => {
      const after = s.chargeIfCovered.get(c.credits, c.accountId, c.credits) as { periodStart: number; available: number } | undefined;
      if (after === undefined) {
        const available = s.available.get(c.accountId) as number | undefined;
        return { ok: false, available: available ?? 0 };
      }
      s.insertLedger.run(randomUUID(), c.accountId, c.operation, c.credits, c.requestId, c.now);
      s.addUsage.run(c.accountId, after.periodStart, c.operation, c.credits);
      forget(c.accountId);
      return { ok: true, available: after.available };
    }).immediate;

    this.releaseTx = db.transaction((holdId: string): void => {
      const hold = s.deleteHold.get(holdId) as HoldRow | undefined;
      if (hold !== undefined) {
        s.unhold.run(hold.credits, hold.account_id);
        forget(hold.account_id);
      }
    }).immediate;

    this.sweepTx = db.transaction((now: number): number => {
      const holds = s.expiredHolds.all(now) as { account_id: string; credits: number }[];
      for (const h of holds) {
        s.unhold.run(h.credits, h.account_id);
        forget(h.account_id);
      }
      return holds.length;
    }).immediate;

    this.createAccountTx = db.transaction((a: NewAccount): Account => {
      const account = s.insertAccount.get(a.id, a.name, a.plan, a.credits, a.now, a.periodEnd, a.now) as Account;
      if (a.credits > 0) s.insertGrant.run(randomUUID(), a.id, a.credits, 'initial', a.now);
      return account;
    }).immediate;

    this.addCreditsTx = db.transaction((id: string, amount: number, reason: string, now: number): Account | undefined => {
      const account = s.addCredits.get(amount, id) as Account | undefined;
      if (account !== undefined) s.insertGrant.run(randomUUID(), id, amount, reason, now);
      forget(id);
      return account;
    }).immediate;
  }

  private run<A>(f: () => A): Effect.Effect<A, ServiceUnavailable> {
    try {
      return Effect.succeed(f());
    } catch (e) {
      return Effect.fail(unavailable(e));
    }
  }

  /** Drop what the cache holds for an account (its keys and its usage). */
  private forget(accountId: string): void {
    const hashes = this.hashesOf.get(accountId);
    if (hashes !== undefined) {
      for (const h of hashes) this.keys.delete(h);
      this.hashesOf.delete(accountId);
    }
    this.usages.delete(accountId);
    this.accountsById.delete(accountId);
  }

  private clearCache(): void {
    this.keys.clear();
    this.hashesOf.clear();
    this.usages.clear();
    this.accountsById.clear();
  }

  /** Start over if another connection has committed since the last look (at most every freshnessMs). */
  private fresh(): void {
    const now = Date.now();
    if (now - this.checkedAt < this.freshnessMs) return;
    this.checkedAt = now;
    const v = this.s.dataVersion.get();
    if (v !== this.version) {
      this.version = v;
      this.clearCache();
    }
  }

  findKey(hash: string): Effect.Effect<KeyMatch | undefined, ServiceUnavailable> {
    return this.run(() => {
      this.fresh();
      const hit = this.keys.get(hash);
      if (hit !== undefined) return hit;
      const m = this.s.findKey.get(hash) as KeyMatch | undefined;
      // Misses are not kept: random keys must not fill the cache.
      if (m !== undefined) {
        if (this.keys.size >= CACHE_LIMIT) this.clearCache();
        this.keys.set(hash, m);
        const list = this.hashesOf.get(m.accountId);
        if (list === undefined) this.hashesOf.set(m.accountId, [hash]);
        else list.push(hash);
      }
      return m;
    });
  }

  countAccounts(): Effect.Effect<number, ServiceUnavailable> {
    return this.run(() => this.s.countAccounts.get() as number);
  }

  createAccount(a: NewAccount): Effect.Effect<Account, ServiceUnavailable> {
    return wholeCredits('credits', a.credits, 0) ?? this.run(() => this.createAccountTx(a));
  }

  getAccount(id: string): Effect.Effect<Account | undefined, ServiceUnavailable> {
    return this.run(() => this.s.getAccount.get(id) as Account | undefined);
  }

  listAccounts(): Effect.Effect<readonly Account[], ServiceUnavailable> {
    return this.run(() => this.s.listAccounts.all() as Account[]);
  }

  setPlan(id: string, plan: PlanId): Effect.Effect<Account | undefined, ServiceUnavailable> {
    return this.run(() => {
      this.forget(id);
      return this.s.setPlan.get(plan, id) as Account | undefined;
    });
  }

  addCredits(id: string, amount: number, reason: string, now: number): Effect.Effect<Account | undefined, ServiceUnavailable> {
    return wholeCredits('amount', amount, 1) ?? this.run(() => this.addCreditsTx(id, amount, reason, now));
  }

  rollover(id: string, expectedEnd: number, start: number, end: number, allowance: number): Effect.Effect<void, ServiceUnavailable> {
    return wholeCredits('allowance', allowance, 0) ?? this.run(() => {
      this.forget(id);
      this.s.rollover.run(start, end, allowance, id, expectedEnd);
    });
  }

  createKey(k: NewKey): Effect.Effect<KeyRecord, ServiceUnavailable> {
    return this.run(() => this.s.insertKey.get(k.id, k.accountId, k.name, k.prefix, k.hash, k.now, k.expiresAt) as KeyRecord);
  }

  listKeys(accountId: string): Effect.Effect<readonly KeyRecord[], ServiceUnavailable> {
    return this.run(() => this.s.listKeys.all(accountId) as KeyRecord[]);
  }

  getKey(keyId: string): Effect.Effect<KeyRecord | undefined, ServiceUnavailable> {
    return this.run(() => this.s.getKey.get(keyId) as KeyRecord | undefined);
  }

  revokeKey(keyId: string, now: number): Effect.Effect<KeyRecord | undefined, ServiceUnavailable> {
    return this.run(() => {
      const k = this.s.revokeKey.get(now, keyId) as KeyRecord | undefined;
      if (k !== undefined) this.forget(k.accountId);
      return k;
    });
  }

  reserve(h: NewHold): Effect.Effect<ReserveResult, ServiceUnavailable> {
    return wholeCredits('credits', h.credits, 0) ?? this.run(() => this.reserveTx(h));
  }

  settle(holdId: string, credits: number, now: number): Effect.Effect<SettleResult, ServiceUnavailable> {
    return wholeCredits('credits', credits, 0) ?? this.run(() => this.settleTx(holdId, credits, now));
  }

  release(holdId: string): Effect.Effect<void, ServiceUnavailable> {
    return this.run(() => this.releaseTx(holdId));
  }

  charge(c: NewCharge): Effect.Effect<ChargeResult, ServiceUnavailable> {
    return wholeCredits('credits', c.credits, 0) ?? this.run(() => this.chargeTx(c));
  }

  sweepHolds(now: number): Effect.Effect<number, ServiceUnavailable> {
    return this.run(() => this.sweepTx(now));
  }

  usage(accountId: string, periodStart: number): Effect.Effect<readonly OperationUsage[], ServiceUnavailable> {
    return this.run(() => {
      this.fresh();
      return this.usageRows(accountId, periodStart);
    });
  }

  /** Usage rows through the cache (the caller has checked freshness). */
  private usageRows(accountId: string, periodStart: number): readonly OperationUsage[] {
    let periods = this.usages.get(accountId);
    let rows = periods?.get(periodStart);
    if (rows === undefined) {
      rows = this.s.usage.all(accountId, periodStart) as OperationUsage[];
      if (periods === undefined) {
        if (this.usages.size >= CACHE_LIMIT) this.usages.clear();
        this.usages.set(accountId, (periods = new Map()));
      }
      periods.set(periodStart, rows);
    }
    return rows;
  }

  accountUsage(accountId: string): Effect.Effect<{ readonly account: Account; readonly usage: readonly OperationUsage[] } | undefined, ServiceUnavailable> {
    return this.run(() => {
      this.fresh();
      let account = this.accountsById.get(accountId);
      if (account === undefined) {
        account = this.s.getAccount.get(accountId) as Account | undefined;
        if (account === undefined) return undefined;
        if (this.accountsById.size >= CACHE_LIMIT) this.accountsById.clear();
        this.accountsById.set(accountId, account);
      }
      return { account, usage: this.usageRows(accountId, account.periodStart) };
    });
  }

  ledger(accountId: string, limit: number): Effect.Effect<readonly LedgerRow[], ServiceUnavailable> {
    return this.run(() => this.s.ledger.all(accountId, limit) as LedgerRow[]);
  }

  /**
   * For the job store (adapters/store/sqlite/jobs.ts), which shares this
   * connection: the handle, and the cache invalidation its charges need.
   */
  shared(): { readonly db: Database.Database; forget(accountId: string): void } {
    return { db: this.db, forget: (accountId) => this.forget(accountId) };
  }

  close(): void {
    this.clearCache();
    if (this.db.open) this.db.close();
  }

  dispose(): void {
    this.close();
  }
}
