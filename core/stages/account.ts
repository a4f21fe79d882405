/**
 * The account stages of the pipeline: auth (bearer key -> account), quota
 * (the plan's rate windows and concurrency per operation), gate (plan-gated
 * features), reserve (place a hold for the price before the work) and bill
 * (settle the hold when the work succeeded; with reserve's chargeAfter,
 * charge without a hold if the balance covers it). Holds and concurrency
 * slots are released by finalizers, so every exit path (failure, client
 * abort) gives them back.
 *
 * The credit words, one meaning each (code, comments and identifiers):
 * - balance: the credits on an account (Account.balance). What it can
 *   spend is its balance less its open holds (Account.held).
 * - hold: credits set aside on an account for one request (or job) while
 *   its work runs: counted against what the account can spend, not yet
 *   taken from the balance. A hold ends settled or released; one whose
 *   process died lapses after its time to live and the sweeper releases it.
 * - reserve: to place a hold (the reserve stage; AccountStore.reserve).
 *   Refused, 402 NO_CREDITS, when the account cannot cover the price.
 * - charge: to debit credits from the balance, with one ledger row and the
 *   usage, atomically (AccountStore.charge charges without a hold; settle
 *   charges a hold). Failed work is never charged.
 * - settle: to end a hold by charging it, all of it or less when the work
 *   turned out cheaper (AccountStore.settle).
 * - release: to end a hold without charging anything (the work failed, the
 *   client went away, the hold lapsed; AccountStore.release, sweepHolds).
 * - bill: the stage after the work that settles the request's hold (or,
 *   for a deferred price, charges it if the balance covers it) and adds
 *   what was charged to the context (Billed.charge).
 * - deferred (reserve's chargeAfter option): no hold before the work; bill
 *   charges the price only if the balance covers it then, else 402 with
 *   nothing charged.
 * - period: the month an account's allowance covers ([periodStart,
 *   periodEnd); reset_date in the API, whose texts call it the billing
 *   period); "bill" in code names only the stage.
 */
import { Effect, Exit } from 'effect';
import { addFinalizer, type RequestContext } from '../context.js';
import {
  AuthenticationFailed, Forbidden, NoCredits, RateLimited, type ServiceUnavailable, Unauthorized,
} from '../errors.js';
import { chain } from '../fast-effect.js';
import { type Account, keyState, KEY_PATTERN, parseBearer, periodContaining, type PlanId } from '../accounts.js';
import { defineStage } from '../pipeline.js';
import type { AccountStore, Clock, IdGenerator, RateDecision, RateLimiter, RateRule, Secrets } from '../ports.js';
import type {
  AdminAuthenticated, AdminStage, Admitted, Authenticated, AuthStage, BillStage, Billed, Feature, GateStage, QuotaStage, Reserved,
  ReserveOptions, ReserveStage,
} from './index.js';
import { writeRateHeaders } from './client-quota.js';

/** What the stages need to know about plans (config/plans.ts provides it). */
export interface PlanBook {
  monthlyCredits(plan: PlanId): number;
  limits(plan: PlanId, operation: string): { readonly windows: readonly RateRule[]; readonly concurrency: number };
  /** Display name ("Starter"). */
  name(plan: PlanId): string;
  /** Whether `plan` includes `feature`; else the lowest plan that does and the request field that asks for it. */
  allows(plan: PlanId, feature: Feature): true | { readonly minPlan: PlanId; readonly field: string };
}

export interface AccountStageDeps {
  readonly store: AccountStore;
  readonly limiter: RateLimiter;
  readonly secrets: Secrets;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly plans: PlanBook;
  readonly upgradeUrl: string;
  /** How long a concurrency slot may be held before it lapses (a crashed process). */
  readonly slotLeaseMs: number;
  /** How long a credit hold lives before the sweeper releases it. */
  readonly holdTtlMs: number;
}

/** A cleanup that must not fail: completed ones stay synchronous (Exit), others have their failure dropped. */
const quiet = <E>(e: Effect.Effect<void, E>): Effect.Effect<void> => (Exit.isExit(e) ? Effect.void : Effect.ignore(e));

const MISSING = new Unauthorized({ message: 'Missing API key: send the header "Authorization: Bearer <API_KEY>"' });
const MALFORMED = new Unauthorized({ message: 'Malformed Authorization header: expected "Bearer <API_KEY>"' });
const UNKNOWN = new AuthenticationFailed({ message: 'Invalid API key' });
const REVOKED = new AuthenticationFailed({ message: 'This API key has been revoked' });
const EXPIRED = new AuthenticationFailed({ message: 'This API key has expired' });

export function authStage(d: AccountStageDeps): AuthStage {
  return defineStage('auth', (ctx: RequestContext): Effect.Effect<Authenticated, Unauthorized | AuthenticationFailed | ServiceUnavailable> => {
    const header = ctx.headers.authorization;
    if (header === undefined || header === '') return Effect.fail(MISSING);
    const token = parseBearer(header);
    if (token === undefined) return Effect.fail(MALFORMED);
    // Not a key this service could have issued: no lookup needed.
    if (!KEY_PATTERN.test(token)) return Effect.fail(UNKNOWN);
    const hash = d.secrets.sha256(token);
    const now = ctx.receivedAt;
    return chain(d.store.findKey(hash), (m): Effect.Effect<Authenticated, AuthenticationFailed | ServiceUnavailable> => {
      if (m === undefined || !d.secrets.equal(m.keyHash, hash)) return Effect.fail(UNKNOWN);
      const state = keyState(m, now);
      if (state !== 'active') return Effect.fail(state === 'revoked' ? REVOKED : EXPIRED);
      const snapshot: Account = {
        id: m.accountId, name: m.accountName, plan: m.plan, balance: m.balance, held: m.held,
        periodStart: m.periodStart, periodEnd: m.periodEnd, createdAt: m.createdAt,
      };
      if (m.periodEnd > now) return Effect.succeed({ account: { id: m.accountId, plan: m.plan, keyId: m.keyId, snapshot } });
      // The period ended: start the current one (refills the monthly allowance) before anything reads the balance.
      const p = periodContaining(m.createdAt, now);
      const allowance = d.plans.monthlyCredits(m.plan);
      const renewed: Account = { ...snapshot, periodStart: p.start, periodEnd: p.end, balance: Math.max(snapshot.balance, allowance) };
      return chain(d.store.rollover(m.accountId, m.periodEnd, p.start, p.end, allowance), () =>
        Effect.succeed({ account: { id: m.accountId, plan: m.plan, keyId: m.keyId, snapshot: renewed } }));
    });
  });
}

const unit = (s: number): string => (s === 60 ? 'minute' : s === 3600 ? 'hour' : s === 86_400 ? 'day' : `${s} seconds`);

export function quotaStage(d: AccountStageDeps, operation: string): QuotaStage {
  return defineStage('quota', (ctx: RequestContext & { readonly account: { readonly id: string; readonly plan: PlanId } }) => {
    const { id, plan } = ctx.account;
    const limits = d.plans.limits(plan, operation);
    const now = ctx.receivedAt;
    const key = `acct:${id}:${operation}`;
    const token = ctx.requestId;
    // The windows and the concurrency slot in one limiter call (one round trip in the shared adapter).
    const slot = limits.concurrency > 0 ? { token, max: limits.concurrency, leaseMs: d.slotLeaseMs } : undefined;
    return chain(d.limiter.admit(key, limits.windows, slot, now), ({ decision: r, slot: s }): Effect.Effect<Admitted, RateLimited> => {
      if (!r.allowed) {
        writeRateHeaders(ctx, r);
        return Effect.fail(new RateLimited({
          message: `Rate limit exceeded: the ${d.plans.name(plan)} plan allows ${r.limit} ${operation} requests per ${unit(r.windowSeconds)}. Retry after ${r.retryAfter} seconds.`,
          retryAfter: r.retryAfter, limit: r.limit, remaining: 0, reset: r.reset, upgradeUrl: d.upgradeUrl,
        }));
      }
      if (s === undefined) {
        writeRateHeaders(ctx, r);
        return Effect.succeed({ rateLimit: r });
      }
      // A refusal by concurrency describes the cap, not the window (one set of headers per answer).
      if (!s.acquired) {
        const refused = concurrencyDecision(s.max, now);
        writeRateHeaders(ctx, refused);
        return Effect.fail(new RateLimited({
          message: `Concurrency limit exceeded: the ${d.plans.name(plan)} plan allows ${s.max} ${operation} requests in flight at once. Retry when one finishes.`,
          retryAfter: refused.retryAfter, limit: refused.limit, remaining: refused.remaining, reset: refused.reset, upgradeUrl: d.upgradeUrl,
        }));
      }
      writeRateHeaders(ctx, r);
      addFinalizer(ctx, () => d.limiter.release(key, token));
      return Effect.succeed({ rateLimit: r });
    });
  });
}

/**
 * A refusal by the concurrency cap as a rate decision, so the 429's body and
 * its x-ratelimit-* headers describe the same limit: `limit` the cap,
 * `remaining` 0, `reset` one second on (when to try again), and `window` 0,
 * since a cap on requests in flight is not a time window.
 */
export function concurrencyDecision(max: number, now: number): RateDecision {
  return { allowed: false, limit: max, remaining: 0, reset: Math.ceil(now / 1000) + 1, windowSeconds: 0, retryAfter: 1 };
}

export function gateStage<T>(d: AccountStageDeps, features: (input: T) => readonly (Feature | { readonly feature: Feature; readonly field: string })[]): GateStage<T> {
  return defineStage('gate', (ctx: RequestContext & { readonly account: { readonly plan: PlanId }; readonly input: T }) => {
    const asked = features(ctx.input);
    for (const a of asked) {
      const f = typeof a === 'string' ? a : a.feature;
      const ok = d.plans.allows(ctx.account.plan, f);
      if (ok !== true) {
        return Effect.fail(new Forbidden({
          message: `${typeof a === 'string' ? ok.field : a.field} requires the ${d.plans.name(ok.minPlan)} plan or higher; this account is on the ${d.plans.name(ctx.account.plan)} plan`,
          upgradeUrl: d.upgradeUrl,
        }));
      }
    }
    return Effect.succeed({ gated: true as const });
  });
}

/**
 * Switches for bench:http's same-run comparisons (a preload script turns
 * one off in the server it starts); nothing else changes them.
 */
export const accountStageSwitches = {
  /** Reserve's `chargeAfter` option is honoured (off: every request takes a hold, as before it existed). */
  chargeAfter: true,
};

const noCredits = (d: AccountStageDeps, credits: number, available: number): NoCredits => new NoCredits({
  message: `Insufficient credits: this request costs ${credits} credits and the account has ${available}`,
  creditsRemaining: available, creditsRequired: credits, upgradeUrl: d.upgradeUrl,
});

export function reserveStage<T>(d: AccountStageDeps, operation: string, price: (input: T) => number, options?: ReserveOptions<T>): ReserveStage<T> {
  const chargeAfter = options?.chargeAfter;
  return defineStage('reserve', (ctx: RequestContext & { readonly account: { readonly id: string; readonly snapshot: Account }; readonly input: T }) => {
    const credits = price(ctx.input);
    if (!Number.isInteger(credits) || credits < 0) return Effect.die(new Error(`price of ${operation} is not a whole number of credits: ${credits}`));
    const holdId = d.ids.next();
    // Charge after the work, with no hold before it (ReserveOptions.chargeAfter): this saves the hold's
    // statement and commit, and the request waits for one commit (bill's) instead of two. The trade-off: under
    // a race for the last credits the work runs and is then refused 402 (nothing charged, its result dropped),
    // which is why only reads with a fixed price may ask for it. The auth snapshot (possibly a cached one) only
    // decides whether to try: when it shows too little, a real hold is taken below, so the 402 comes at once and
    // exactly, and a stale snapshot (credits added since) still gets its hold. Money is decided by the store.
    if (chargeAfter !== undefined && accountStageSwitches.chargeAfter && chargeAfter(ctx.input)) {
      const s = ctx.account.snapshot;
      if (s.balance - s.held >= credits) return Effect.succeed({ hold: { id: holdId, operation, credits, settled: false, deferred: true } });
    }
    const now = ctx.receivedAt;
    return chain(
      d.store.reserve({ id: holdId, accountId: ctx.account.id, operation, credits, requestId: ctx.requestId, now, expiresAt: now + d.holdTtlMs }),
      (r): Effect.Effect<Reserved, NoCredits> => {
        if (!r.ok) return Effect.fail(noCredits(d, credits, r.available));
        const hold = { id: holdId, operation, credits, settled: false };
        addFinalizer(ctx, () => (hold.settled ? Effect.void : quiet(d.store.release(holdId))));
        return Effect.succeed({ hold });
      },
    );
  });
}

export function billStage(d: AccountStageDeps): BillStage {
  return defineStage('bill', (ctx: RequestContext & Authenticated & Reserved): Effect.Effect<Billed, NoCredits | ServiceUnavailable> => {
    const hold = ctx.hold;
    const credits = hold.actual === undefined ? hold.credits : Math.max(0, Math.min(hold.credits, Math.floor(hold.actual)));
    if (hold.deferred === true) {
      // Nothing was held: charged only if the balance covers it now, else 402 and nothing charged.
      return chain(d.store.charge({ accountId: ctx.account.id, operation: hold.operation, credits, requestId: ctx.requestId, now: d.clock.now() }), (r) => {
        if (!r.ok) return Effect.fail(noCredits(d, credits, r.available));
        hold.settled = true;
        return Effect.succeed({ charge: { creditsUsed: credits, remainingCredits: r.available } });
      });
    }
    return chain(d.store.settle(hold.id, credits, d.clock.now()), (r) => {
      hold.settled = true;
      return Effect.succeed({ charge: { creditsUsed: r.charged, remainingCredits: r.available } });
    });
  });
}

/** The admin API's auth: the bearer token must equal SCOUR_ADMIN_TOKEN (compared in constant time). */
export function adminStage(secrets: Secrets, adminToken: string): AdminStage {
  const wrong = new AuthenticationFailed({ message: 'Invalid admin token' });
  return defineStage('auth', (ctx: RequestContext): Effect.Effect<AdminAuthenticated, Unauthorized | AuthenticationFailed> => {
    const header = ctx.headers.authorization;
    if (header === undefined || header === '') return Effect.fail(new Unauthorized({ message: 'Missing admin token: send "Authorization: Bearer <SCOUR_ADMIN_TOKEN>"' }));
    const token = parseBearer(header);
    if (token === undefined) return Effect.fail(MALFORMED);
    return secrets.equal(token, adminToken) ? Effect.succeed({ admin: true as const }) : Effect.fail(wrong);
  });
}
