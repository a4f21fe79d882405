/**
 * Ports: the interfaces adapters implement. The core depends on these only,
 * never on a driver, a socket or a file.
 */
import type { Effect } from 'effect';
import type { Account, KeyMatch, KeyRecord, LedgerRow, OperationUsage, PlanId, ReserveResult, SettleResult, ChargeResult } from './accounts.js';
import type { EgressPolicy } from './egress.js';
import type { ServiceUnavailable } from './errors.js';

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export interface IdGenerator {
  /** A unique id made only of URL-safe characters [A-Za-z0-9_-] (the HTTP layer writes it unescaped). */
  next(): string;
}

export interface LogFn {
  (obj: Record<string, unknown>, msg?: string): void;
  (msg: string): void;
}

export interface Logger {
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
  /** Whether a level would be written (so hot paths can skip building the log object). */
  isLevelEnabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean;
}

export interface RateRule {
  /** Requests allowed per window. */
  readonly limit: number;
  readonly windowSeconds: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Unix seconds when the window resets. */
  readonly reset: number;
  readonly windowSeconds: number;
  /** Seconds until a request would be allowed again (0 when allowed). */
  readonly retryAfter: number;
}

/** One window's outcome for a slot request (concurrency). */
export interface SlotDecision {
  readonly acquired: boolean;
  /** Slots in use after this request (including it when acquired). */
  readonly active: number;
  readonly max: number;
}

/**
 * Counts hits per key in fixed windows (aligned to the epoch, so every
 * process agrees on them), and hands out concurrency slots. In-process or
 * shared (Redis). Shared adapters fail with ServiceUnavailable when their
 * server cannot be reached: limits fail closed.
 */
export interface RateLimiter {
  /**
   * Count one hit at `now` (epoch ms; the request's arrival, so one clock
   * read serves the request) against every rule of `rules` at once: the hit
   * is counted only if every window admits it. The decision describes the
   * binding window: the one that refused, else the one with the fewest
   * requests left.
   */
  hit(key: string, rules: readonly RateRule[], now: number): Effect.Effect<RateDecision, ServiceUnavailable>;
  /**
   * Take one of `max` concurrency slots for `key`, identified by `token`.
   * A slot not released within `leaseMs` lapses (a crashed process cannot
   * keep it forever).
   */
  acquire(key: string, token: string, max: number, leaseMs: number, now: number): Effect.Effect<SlotDecision, ServiceUnavailable>;
  /** Give a slot back. Releasing twice or after the lease is harmless. */
  release(key: string, token: string): Effect.Effect<void>;
  /**
   * `hit`, then (only when the windows admit it and `slot.max` > 0)
   * `acquire`, as one step: the shared adapter makes it one round trip. A
   * hit counted by the windows stays counted when the slot is refused, as
   * with the two calls. `slot` undefined or max <= 0: no slot is taken.
   */
  admit(key: string, rules: readonly RateRule[], slot: SlotRequest | undefined, now: number): Effect.Effect<Admission, ServiceUnavailable>;
}

/** The concurrency slot `admit` asks for along with the hit. */
export interface SlotRequest {
  readonly token: string;
  readonly max: number;
  readonly leaseMs: number;
}

export interface Admission {
  readonly decision: RateDecision;
  /** Undefined when no slot was asked for, or the windows refused. */
  readonly slot: SlotDecision | undefined;
}

/** A new account, as the store receives it (ids and the first period are chosen by the caller). */
export interface NewAccount {
  readonly id: string;
  readonly name: string | null;
  readonly plan: PlanId;
  readonly credits: number;
  readonly now: number;
  readonly periodEnd: number;
}

export interface NewKey {
  readonly id: string;
  readonly accountId: string;
  readonly name: string | null;
  readonly prefix: string;
  /** Hex SHA-256 of the key. The key itself never reaches the store. */
  readonly hash: string;
  readonly expiresAt: number | null;
  readonly now: number;
}

export interface NewHold {
  readonly id: string;
  readonly accountId: string;
  readonly operation: string;
  readonly credits: number;
  readonly requestId: string;
  readonly now: number;
  /** After this (epoch ms) a hold that was neither settled nor released is swept. */
  readonly expiresAt: number;
}

/** A charge made without a hold (AccountStore.charge). */
export interface NewCharge {
  readonly accountId: string;
  readonly operation: string;
  readonly credits: number;
  readonly requestId: string;
  readonly now: number;
}

/**
 * Accounts, keys, credit holds and the ledger. Every method is atomic on
 * its own; `reserve` and `settle` are what keep money right under
 * concurrency: reserve succeeds only while balance - held covers the
 * credits, settle turns a hold into a charge (balance, ledger row and usage
 * in one transaction), release drops it. Methods fail with
 * ServiceUnavailable when the database cannot be reached.
 */
export interface AccountStore {
  /** Lookup for the auth stage (one indexed read). */
  findKey(hash: string): Effect.Effect<KeyMatch | undefined, ServiceUnavailable>;
  countAccounts(): Effect.Effect<number, ServiceUnavailable>;
  createAccount(a: NewAccount): Effect.Effect<Account, ServiceUnavailable>;
  getAccount(id: string): Effect.Effect<Account | undefined, ServiceUnavailable>;
  listAccounts(): Effect.Effect<readonly Account[], ServiceUnavailable>;
  setPlan(id: string, plan: PlanId): Effect.Effect<Account | undefined, ServiceUnavailable>;
  /** Add (top up) credits; records a grant. Undefined when the account does not exist. */
  addCredits(id: string, amount: number, reason: string, now: number): Effect.Effect<Account | undefined, ServiceUnavailable>;
  /**
   * Start the period [start, end) if the account's current one ended at
   * `expectedEnd` (idempotent under races): the balance is refilled to
   * `allowance` when it is below it.
   */
  rollover(id: string, expectedEnd: number, start: number, end: number, allowance: number): Effect.Effect<void, ServiceUnavailable>;
  createKey(k: NewKey): Effect.Effect<KeyRecord, ServiceUnavailable>;
  listKeys(accountId: string): Effect.Effect<readonly KeyRecord[], ServiceUnavailable>;
  getKey(keyId: string): Effect.Effect<KeyRecord | undefined, ServiceUnavailable>;
  /** Revoke now; an already revoked key keeps its first revocation time. Undefined when unknown. */
  revokeKey(keyId: string, now: number): Effect.Effect<KeyRecord | undefined, ServiceUnavailable>;
  reserve(h: NewHold): Effect.Effect<ReserveResult, ServiceUnavailable>;
  /** Charge `credits` (at most the hold's) and drop the hold: balance, ledger row and usage, atomically. */
  settle(holdId: string, credits: number, now: number): Effect.Effect<SettleResult, ServiceUnavailable>;
  release(holdId: string): Effect.Effect<void, ServiceUnavailable>;
  /**
   * Charge `credits` with no hold, only if the account covers them (balance
   * - held >= credits, as reserve decides): balance, ledger row and usage,
   * atomically, as settle writes them. Refused: nothing is written, and
   * `available` is what the account had. No overdraft either way.
   */
  charge(c: NewCharge): Effect.Effect<ChargeResult, ServiceUnavailable>;
  /** Drop holds that expired (their requests died with a process). Returns how many. */
  sweepHolds(now: number): Effect.Effect<number, ServiceUnavailable>;
  /** Usage of the period starting at `periodStart`, by operation. */
  usage(accountId: string, periodStart: number): Effect.Effect<readonly OperationUsage[], ServiceUnavailable>;
  /**
   * The account as it is now and the usage of its current period, in one
   * read (GET /v1/usage: auth's key lookup may come from a cache, so its
   * credit figures are not the ones to show). Undefined when unknown.
   */
  accountUsage(accountId: string): Effect.Effect<{ readonly account: Account; readonly usage: readonly OperationUsage[] } | undefined, ServiceUnavailable>;
  /** The most recent charges first (for the admin API and tests). */
  ledger(accountId: string, limit: number): Effect.Effect<readonly LedgerRow[], ServiceUnavailable>;
}

/** Randomness and hashing for keys and tokens (node:crypto in the adapter). */
export interface Secrets {
  /** `bytes` random bytes, base64url without padding. */
  random(bytes: number): string;
  /** Hex SHA-256 of a string (UTF-8). */
  sha256(text: string): string;
  /** Constant-time equality of two strings (false when their lengths differ). */
  equal(a: string, b: string): boolean;
}

/** Request metrics: the HTTP layer reports, an adapter renders. */
export interface Metrics {
  observe(route: string, status: number, seconds: number): void;
  render(): string;
}

/** Resources with a lifetime, closed in reverse order at shutdown. */
export interface Disposable {
  dispose(): Promise<void> | void;
}

/** Stored bytes with an expiry (screenshots, exports). Keys are unguessable tokens chosen by the caller. */
export interface BlobStore {
  put(key: string, data: Uint8Array, meta: { readonly contentType: string; readonly expiresAt: number }): Promise<void>;
  /** Undefined when missing or expired. */
  get(key: string, now: number): Promise<{ readonly data: Uint8Array; readonly contentType: string; readonly expiresAt: number } | undefined>;
  /** Delete expired blobs; returns how many. */
  sweep(now: number): Promise<number>;
}

// ---------------------------------------------------------------------------
// Egress: how plugins reach the network. Fetchers (and search providers,
// research) get an implementation from the composition root, so a custom
// fetcher or a test can be handed another one. The policy is core/egress.ts.

/** One address a name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** A name resolver: every address of a name. Replaces DNS (tests map names to loopback); its answers are judged like DNS's. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** What decides whether an address may be reached, and how names are resolved for that decision. */
export interface GuardedPolicy extends EgressPolicy {
  readonly resolver?: Resolver | undefined;
}

/** An upstream proxy for one request. */
export interface UpstreamProxy {
  /** http://user:pass@host:port (or https://). Never appears in errors. */
  readonly url: string;
  /** Named in error details instead of the URL. */
  readonly id?: string | undefined;
}

/** One guarded HTTP exchange. */
export interface GuardedRequest extends GuardedPolicy {
  readonly method?: string;
  /** Sent as given (name case and order kept); Host, Content-Length, Connection and Transfer-Encoding are set by the guard. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Cookies for the first URL's host; Set-Cookie answers are kept per host, sent back only to that host. */
  readonly cookies?: Readonly<Record<string, string>>;
  /** Default true. False returns a 3xx as it is. */
  readonly followRedirects?: boolean;
  readonly maxRedirects?: number;
  /** Body bytes on the wire. */
  readonly maxBodyBytes?: number;
  /** Body bytes after Content-Encoding is undone. */
  readonly maxDecodedBytes?: number;
  /** The whole exchange, redirects and body included. */
  readonly timeoutMs?: number;
  /** The caller's cancellation. */
  readonly signal?: AbortSignal | undefined;
  readonly proxy?: UpstreamProxy | undefined;
  /** How long a proxy may take to accept the connection (and answer CONNECT). */
  readonly proxyConnectTimeoutMs?: number;
  /** Default true: undo gzip, deflate and br. */
  readonly decompress?: boolean;
  /** TLS trust for targets (PEM), e.g. a private CA in tests. */
  readonly tls?: { readonly ca?: string | readonly string[]; readonly rejectUnauthorized?: boolean };
}

export interface GuardedResponse {
  /** The final URL, after redirects. */
  readonly url: string;
  readonly statusCode: number;
  readonly statusMessage: string;
  /** Lower-case names; repeated headers joined with ", " (set-cookie with "\n"). */
  readonly headers: Readonly<Record<string, string>>;
  readonly setCookies: readonly string[];
  /** Decoded (decompressed) body. */
  readonly body: Uint8Array;
  readonly wireBytes: number;
  /** The URLs that redirected, in order. */
  readonly redirects: readonly string[];
}

/**
 * The egress guard's I/O side, as plugins see it. Failures are the core's
 * target errors (TargetNotAllowed, TargetUnreachable, TargetTimeout,
 * TargetResponseInvalid), and the caller's abort reason when it aborts.
 */
export interface Egress {
  /**
   * One HTTP exchange with redirects under the policy: every hop's URL, its
   * resolved addresses and the address actually connected are judged; the
   * body is read under wire and decoded budgets; one deadline covers it all.
   */
  fetch(url: string, request: GuardedRequest): Promise<GuardedResponse>;
  /**
   * Every address of `hostname`, each judged (one refused address refuses
   * the name); IP literals are judged without a lookup. Rejects with
   * TargetNotAllowed, or TargetUnreachable when the name does not resolve.
   */
  resolveAll(hostname: string, policy: GuardedPolicy & { readonly signal?: AbortSignal | undefined }): Promise<ResolvedAddress[]>;
}
