/**
 * The account stages on the real embedded store with a controlled clock:
 * the billing period rolls over at its end (allowance refilled, usage per
 * period), holds are charged or released, and the result stays synchronous.
 */
import { Effect, Exit } from 'effect';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccountAdmin } from '../../core/account-admin.js';
import { addMonths } from '../../core/accounts.js';
import { ReplyMeta, type RequestContext } from '../../core/context.js';
import { Pipeline } from '../../core/pipeline.js';
import { accountStageSwitches, authStage, billStage, quotaStage, reserveStage, type AccountStageDeps } from '../../core/stages/account.js';
import { nodeSecrets } from '../../adapters/crypto/node.js';
import { MemoryRateLimiter } from '../../adapters/limiter/memory/index.js';
import { openSqliteStore, type SqliteAccountStore } from '../../adapters/store/sqlite/index.js';
import { DEFAULT_PLANS, planBook } from '../../config/plans.js';

const T0 = Date.parse('2026-01-31T10:00:00Z');

function setup() {
  let now = T0;
  const clock = { now: () => now };
  const store = openSqliteStore({ path: ':memory:' });
  const limiter = new MemoryRateLimiter(clock);
  let n = 0;
  const book = planBook(DEFAULT_PLANS);
  const deps: AccountStageDeps = {
    store, limiter, secrets: nodeSecrets, ids: { next: () => `id${n++}` }, clock, plans: book,
    upgradeUrl: '/billing', slotLeaseMs: 60_000, holdTtlMs: 60_000,
  };
  const admin = new AccountAdmin({ store, secrets: nodeSecrets, clock, monthlyCredits: book.monthlyCredits });
  const ctx = (key: string): RequestContext => ({
    requestId: `r${n++}`, receivedAt: now, method: 'POST', path: '/x', params: {}, clientIp: '127.0.0.1',
    headers: { authorization: `Bearer ${key}` }, body: {}, bodyError: undefined, reply: new ReplyMeta(),
  });
  const billable = Pipeline.from<RequestContext>()
    .then(authStage(deps))
    .then(quotaStage(deps, 'scrape'))
    .then({ name: 'validate', run: () => Effect.succeed({ input: { cost: 3 } }) })
    .then(reserveStage(deps, 'scrape', (i: { cost: number }) => i.cost))
    .then(billStage(deps))
    .handle((c) => Effect.succeed({ charged: c.charge.creditsUsed, left: c.charge.remainingCredits, period: c.account.snapshot.periodStart }));
  /** The same with reserve's chargeAfter; `work` runs between reserve and bill. */
  const chargedAfter = (work: () => void, chargeAfter: (i: { cost: number }) => boolean = () => true) => Pipeline.from<RequestContext>()
    .then(authStage(deps))
    .then(quotaStage(deps, 'scrape'))
    .then({ name: 'validate', run: () => Effect.succeed({ input: { cost: 3 } }) })
    .then(reserveStage(deps, 'scrape', (i: { cost: number }) => i.cost, { chargeAfter }))
    .then({ name: 'work', run: () => { work(); return Effect.succeed({ worked: true }); } })
    .then(billStage(deps))
    .handle((c) => Effect.succeed({ charged: c.charge.creditsUsed, left: c.charge.remainingCredits }));
  return { store, limiter, admin, ctx, billable, chargedAfter, setNow: (t: number) => void (now = t) };
}

let open: { store: SqliteAccountStore; limiter: MemoryRateLimiter } | undefined;
afterEach(() => {
  open?.store.close();
  open?.limiter.dispose();
});

describe('account stages on the embedded store', () => {
  it('charge synchronously (an Exit, no fiber) and keep a ledger row', () => {
    const s = setup();
    open = s;
    const { account, key } = Effect.runSync(s.admin.createAccount({ plan: 'starter', credits: 10 }));
    const out = s.billable(s.ctx(key.apiKey));
    expect(Exit.isExit(out)).toBe(true);
    expect(Effect.runSync(out)).toEqual({ charged: 3, left: 7, period: T0 });
    expect(Effect.runSync(s.store.ledger(account.id, 10))).toHaveLength(1);
  });

  it('roll the period over at its end: the allowance is refilled and usage starts again', () => {
    const s = setup();
    open = s;
    const { account, key } = Effect.runSync(s.admin.createAccount({ plan: 'free', credits: 4 }));
    expect(Effect.runSync(s.billable(s.ctx(key.apiKey)))).toMatchObject({ left: 1 });
    // One period later (31 January + 1 month = 28 February), the Free allowance (100) is back.
    const feb = addMonths(T0, 1);
    expect(feb).toBe(Date.parse('2026-02-28T10:00:00Z'));
    s.setNow(feb + 1000);
    expect(Effect.runSync(s.billable(s.ctx(key.apiKey)))).toEqual({ charged: 3, left: 97, period: feb });
    const a = Effect.runSync(s.admin.requireAccount(account.id));
    expect(a).toMatchObject({ periodStart: feb, periodEnd: addMonths(T0, 2), balance: 97, held: 0 });
    expect(Effect.runSync(s.store.usage(account.id, T0))).toEqual([{ operation: 'scrape', credits: 3, requests: 1 }]);
    expect(Effect.runSync(s.store.usage(account.id, feb))).toEqual([{ operation: 'scrape', credits: 3, requests: 1 }]);
  });

  it('keep credits above the allowance (top-ups) across a rollover', () => {
    const s = setup();
    open = s;
    const { account, key } = Effect.runSync(s.admin.createAccount({ plan: 'free', credits: 500 }));
    s.setNow(addMonths(T0, 3) + 5);
    expect(Effect.runSync(s.billable(s.ctx(key.apiKey)))).toMatchObject({ left: 497, period: addMonths(T0, 3) });
    expect(Effect.runSync(s.admin.requireAccount(account.id)).balance).toBe(497);
  });

  it('refuse one credit short with 402 and hold nothing', () => {
    const s = setup();
    open = s;
    const { account, key } = Effect.runSync(s.admin.createAccount({ plan: 'starter', credits: 2 }));
    const exit = Effect.runSyncExit(s.billable(s.ctx(key.apiKey)));
    expect(Exit.isFailure(exit)).toBe(true);
    const err = (exit as Exit.Failure<unknown, { code: string; fields(): object }>).cause.reasons[0] as unknown as { error: { code: string; fields(): object } };
    expect(err.error.code).toBe('NO_CREDITS');
    expect(err.error.fields()).toEqual({ credits_remaining: 2, credits_required: 3, upgrade_url: '/billing' });
    expect(Effect.runSync(s.admin.requireAccount(account.id))).toMatchObject({ balance: 2, held: 0 });
  });
});

describe('reserve with chargeAfter: no hold, charged at bill only if covered', () => {
  const failure = (exit: Exit.Exit<unknown, unknown>) => {
    expect(Exit.isFailure(exit)).toBe(true);
    return ((exit as Exit.Failure<unknown, unknown>).cause.reasons[0] as unknown as { error: { code: string; fields(): object } }).error;
  };

  it('takes no hold: one conditional charge at bill, with its ledger row and usage', () => {
    const s = setup();
    open = s;
    const reserve = vi.spyOn(s.store, 'reserve');
    const charge = vi.spyOn(s.store, 'charge');
    const { account, key } = Effect.runSync(s.admin.createAccount({ plan: 'starter', credits: 10 }));
    let worked = 0;
    const out = s.chargedAfter(() => worked++)(s.ctx(key.apiKey));
    expect(Exit.isExit(out)).toBe(true);
    expect(Effect.runSync(out)).toEqual({ charged: 3, left: 7 });
    expect(worked).toBe(1);
    expect(reserve).not.toHaveBeenCalled();
    expect(charge).toHaveBeenCalledTimes(1);
    expect(Effect.runSync(s.admin.requireAccount(account.id))).toMatchObject({ balance: 7, held: 0 });
    expect(Effect.runSync(s.store.ledger(account.id, 10)).map((l) => [l.operation, l.credits])).toEqual([['scrape', 3]]);
    expect(Effect.runSync(s.store.usage(account.id, T0))).toEqual([{ operation: 'scrape', credits: 3, requests: 1 }]);
  });

  it('when the snapshot shows too little: a real hold, so 402 at once, before the work, with the exact balance', () => {
    const s = setup();
    open = s;
    const reserve = vi.spyOn(s.store, 'reserve');
    const charge = vi.spyOn(s.store, 'charge');
    const { account, key } = Effect.runSync(s.admin.createAccount({ plan: 'starter', credits: 2 }));
    let worked = 0;
    const err = failure(Effect.runSyncExit(s.chargedAfter(() => worked++)(s.ctx(key.apiKey))));
    expect(err.code).toBe('NO_CREDITS');
    expect(err.fields()).toEqual({ credits_remaining: 2, credits_required: 3, upgrade_url: '/billing' });
    expect(worked).toBe(0);
    expect(reserve).toHaveBeenCalledTimes(1);
    expect(charge).not.toHaveBeenCalled();
    expect(Effect.runSync(s.admin.requireAccount(account.id))).toMatchObject({ balance: 2, held: 0 });
  });

  it('credits spent while the work ran: 402 NO_CREDITS after it, nothing charged, no overdraft', () => {
    const s = setup();
    open = s;
    const { account, key } = Effect.runSync(s.admin.createAccount({ plan: 'starter', credits: 4 }));
    // Another request takes 2 of the 4 credits while this one works: 2 left, this one costs 3.
    const other = () => Effect.runSync(s.store.charge({ accountId: account.id, operation: 'search', credits: 2, requestId: 'other', now: T0 }));
    const err = failure(Effect.runSyncExit(s.chargedAfter(other)(s.ctx(key.apiKey))));
    expect(err.code).toBe('NO_CREDITS');
    expect(err.fields()).toEqual({ credits_remaining: 2, credits_required: 3, upgrade_url: '/billing' });
    expect(Effect.runSync(s.admin.requireAccount(account.id))).toMatchObject({ balance: 2, held: 0 });
    expect(Effect.runSync(s.store.ledger(account.id, 10)).map((l) => l.requestId)).toEqual(['other']);
  });

  it('inputs chargeAfter does not accept, and the switch turned off, take the hold as before', () => {
    const s = setup();
    open = s;
    const reserve = vi.spyOn(s.store, 'reserve');
    const charge = vi.spyOn(s.store, 'charge');
    const { key } = Effect.runSync(s.admin.createAccount({ plan: 'starter', credits: 10 }));
    expect(Effect.runSync(s.chargedAfter(() => {}, () => false)(s.ctx(key.apiKey)))).toEqual({ charged: 3, left: 7 });
    accountStageSwitches.chargeAfter = false;
    try {
      expect(Effect.runSync(s.chargedAfter(() => {})(s.ctx(key.apiKey)))).toEqual({ charged: 3, left: 4 });
    } finally {
      accountStageSwitches.chargeAfter = true;
    }
    expect(reserve).toHaveBeenCalledTimes(2);
    expect(charge).not.toHaveBeenCalled();
  });
});
