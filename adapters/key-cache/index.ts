/**
 * The API key cache of the shared deployment: an AccountStore decorator that
 * answers `findKey` from process memory for a short TTL (SCOUR_KEY_CACHE_TTL),
 * so an authenticated request does not wait for a PostgreSQL round trip
 * just to learn who is calling.
 *
 * What is cached: the key lookup (key id, hash, account id and name, plan,
 * the key's expiry and revocation, the account's period), by key hash, in a
 * bounded LRU. Expiry needs no message: auth checks `expiresAt` against the
 * request's clock on every request. The credit figures the lookup carries
 * are a snapshot that nothing decides from: reserve, settle and charge are atomic
 * statements in the database, and GET /v1/usage reads the account afresh.
 * Unknown keys are never cached, so a flood of random keys cannot fill
 * memory (each costs the lookup it cost before).
 *
 * What evicts: every write that changes what a lookup returns (revoking a
 * key, changing a plan) publishes the account id on the invalidation bus
 * after it commits; every process (this one included) drops that account's
 * entries when the message arrives, and this one also drops them at once.
 * A lookup that started before an eviction is not stored (an epoch counter),
 * so a stale row read just before a revocation cannot come back after it.
 * A period rollover drops the account's entries locally (every process
 * that sees the ended period runs its own, idempotent, rollover).
 *
 * Fail safe: the cache is used only while the bus says it is receiving
 * (subscribed). When the subscription drops, the cache is emptied and
 * every lookup goes to the database until it is back (then emptied again,
 * since messages may have been missed). A publish that fails is logged;
 * other processes then drop the entry when its TTL ends.
 */
import { Effect } from 'effect';
import type { Account, KeyMatch, KeyRecord, LedgerRow, OperationUsage, PlanId, ReserveResult, SettleResult, ChargeResult } from '../../core/accounts.js';
import type { ServiceUnavailable } from '../../core/errors.js';
import type { AccountStore, Logger, NewAccount, NewCharge, NewHold, NewKey } from '../../core/ports.js';

/** Where invalidations travel between processes (Redis pub/sub in ./redis.ts). */
export interface InvalidationBus {
  /** Whether messages from other processes are being received now. */
  readonly live: boolean;
  /** Tell every process (this one included) to drop what it caches for the account. */
  publish(accountId: string): Promise<void>;
  /**
   * `onMessage(accountId)` for every message; `onReset()` whenever messages
   * may have been missed (the subscription dropped or came back).
   */
  listen(onMessage: (accountId: string) => void, onReset: () => void): void;
}

export interface KeyCacheOptions {
  /** How long a lookup is reused (ms); 0 turns the cache off (writes still publish). */
  readonly ttlMs: number;
  /** Entries kept (least recently used dropped first). Default 10,000. */
  readonly maxEntries?: number;
  /** Epoch ms (tests). */
  readonly now?: () => number;
  readonly logger?: Logger;
}

interface Entry {
  readonly match: KeyMatch;
  readonly expires: number;
}

export const DEFAULT_KEY_CACHE_ENTRIES = 10_000;

/** Counters for tests and the benchmark. */
export interface KeyCacheStats {
  hits: number;
  misses: number;
  evictions: number;
}

export class CachedAccountStore implements AccountStore {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Bumped by every eviction: a lookup that started in an older epoch is not stored. */
  private epoch = 0;
  readonly stats: KeyCacheStats = { hits: 0, misses: 0, evictions: 0 };

  constructor(private readonly inner: AccountStore, private readonly bus: InvalidationBus, private readonly options: KeyCacheOptions) {
    this.ttlMs = Math.max(0, options.ttlMs);
    this.maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_KEY_CACHE_ENTRIES);
    this.now = options.now ?? Date.now;
    bus.listen((accountId) => this.evictAccount(accountId), () => this.clear());
  }

  /** Close the store underneath, when it has a close (a PostgreSQL pool); the composition root owns its lifetime otherwise. */
  async close(): Promise<void> {
    const inner = this.inner as AccountStore & { close?: () => Promise<void> | void };
    await inner.close?.();
  }

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  /** Drop every entry of an account (here only; `publish` reaches the others). */
  evictAccount(accountId: string): void {
    this.epoch++;
    this.stats.evictions++;
    for (const [hash, e] of this.entries) if (e.match.accountId === accountId) this.entries.delete(hash);
  }

  clear(): void {
    this.epoch++;
    this.entries.clear();
  }

  findKey(hash: string): Effect.Effect<KeyMatch | undefined, ServiceUnavailable> {
    if (this.ttlMs === 0 || !this.bus.live) return this.inner.findKey(hash);
    const now = this.now();
    const e = this.entries.get(hash);
    if (e !== undefined) {
      if (e.expires > now) {
        this.stats.hits++;
        // Most recently used last: re-insert (Map keeps insertion order).
        this.entries.delete(hash);
        this.entries.set(hash, e);
        return Effect.succeed(e.match);
      }
      this.entries.delete(hash);
    }
    this.stats.misses++;
    const epoch = this.epoch;
    return Effect.map(this.inner.findKey(hash), (m) => {
      // Unknown keys are not kept; nor is a row read before an eviction, or while the bus is down.
      if (m !== undefined && epoch === this.epoch && this.bus.live) {
        if (this.entries.size >= this.maxEntries) {
          const oldest = this.entries.keys().next();
          if (oldest.done !== true) this.entries.delete(oldest.value);
        }
        this.entries.set(hash, { match: m, expires: now + this.ttlMs });
      }
      return m;
    });
  }

  /** After a committed write: drop here at once, then tell the others. */
  private invalidate<A>(write: Effect.Effect<A, ServiceUnavailable>, accountOf: (a: A) => string | undefined): Effect.Effect<A, ServiceUnavailable> {
    return Effect.flatMap(write, (a) => {
      const id = accountOf(a);
      if (id === undefined) return Effect.succeed(a);
      this.evictAccount(id);
      return Effect.promise(() => this.bus.publish(id).then(
        () => a,
        (e: unknown) => {
          this.options.logger?.warn({ err: String(e), account_id: id }, 'key cache: could not publish an invalidation; other processes drop their copy when its TTL ends');
          return a;
        },
      ));
    });
  }

  revokeKey(keyId: string, now: number): Effect.Effect<KeyRecord | undefined, ServiceUnavailable> {
    return this.invalidate(this.inner.revokeKey(keyId, now), (k) => k?.accountId);
  }

  setPlan(id: string, plan: PlanId): Effect.Effect<Account | undefined, ServiceUnavailable> {
    return this.invalidate(this.inner.setPlan(id, plan), (a) => a?.id);
  }

  rollover(id: string, expectedEnd: number, start: number, end: number, allowance: number): Effect.Effect<void, ServiceUnavailable> {
    return Effect.map(this.inner.rollover(id, expectedEnd, start, end, allowance), () => this.evictAccount(id));
  }

  // Everything else goes straight to the store.
  countAccounts(): Effect.Effect<number, ServiceUnavailable> { return this.inner.countAccounts(); }
  createAccount(a: NewAccount): Effect.Effect<Account, ServiceUnavailable> { return this.inner.createAccount(a); }
  getAccount(id: string): Effect.Effect<Account | undefined, ServiceUnavailable> { return this.inner.getAccount(id); }
  listAccounts(): Effect.Effect<readonly Account[], ServiceUnavailable> { return this.inner.listAccounts(); }
  addCredits(id: string, amount: number, reason: string, now: number): Effect.Effect<Account | undefined, ServiceUnavailable> { return this.inner.addCredits(id, amount, reason, now); }
  createKey(k: NewKey): Effect.Effect<KeyRecord, ServiceUnavailable> { return this.inner.createKey(k); }
  listKeys(accountId: string): Effect.Effect<readonly KeyRecord[], ServiceUnavailable> { return this.inner.listKeys(accountId); }
  getKey(keyId: string): Effect.Effect<KeyRecord | undefined, ServiceUnavailable> { return this.inner.getKey(keyId); }
  reserve(h: NewHold): Effect.Effect<ReserveResult, ServiceUnavailable> { return this.inner.reserve(h); }
  settle(holdId: string, credits: number, now: number): Effect.Effect<SettleResult, ServiceUnavailable> { return this.inner.settle(holdId, credits, now); }
  release(holdId: string): Effect.Effect<void, ServiceUnavailable> { return this.inner.release(holdId); }
  charge(c: NewCharge): Effect.Effect<ChargeResult, ServiceUnavailable> { return this.inner.charge(c); }
  sweepHolds(now: number): Effect.Effect<number, ServiceUnavailable> { return this.inner.sweepHolds(now); }
  usage(accountId: string, periodStart: number): Effect.Effect<readonly OperationUsage[], ServiceUnavailable> { return this.inner.usage(accountId, periodStart); }
  accountUsage(accountId: string): Effect.Effect<{ readonly account: Account; readonly usage: readonly OperationUsage[] } | undefined, ServiceUnavailable> { return this.inner.accountUsage(accountId); }
  ledger(accountId: string, limit: number): Effect.Effect<readonly LedgerRow[], ServiceUnavailable> { return this.inner.ledger(accountId, limit); }
}
