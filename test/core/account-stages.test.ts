/**
 * The account stages on the real embedded store with a controlled clock:
 * the billing period rolls over at its end (allowance refilled, usage per
 * period), holds are charged or released, and the result stays synchronous.
 */
import { Effect, Exit } from 'effect';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountAdmin } from '../../core/account-admin.js';
import { addMonths } from '../../core/accounts.js';
import { ReplyMeta, type RequestContext } from '../../core/context.js';
import { Pipeline } from '../../core/pipeline.js';
import { authStage, billStage, quotaStage, reserveStage, type AccountStageDeps } from '../../core/stages/account.js';
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
  return { store, limiter, admin, ctx, billable, setNow: (t: number) => void (now = t) };
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
