/**
 * The RateLimiter contract, run against the memory and the Redis adapter
 * alike (fixed `now` values, so windows are exact), plus what only the
 * shared adapter promises: one limit across clients under concurrency, and
 * failing fast / closed when Redis is missing.
 */
import { randomBytes } from 'node:crypto';
import { Effect, Exit } from 'effect';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../adapters/limiter/memory/index.js';
import { RedisRateLimiter } from '../../adapters/limiter/redis/index.js';
import { ServiceUnavailable } from '../../core/errors.js';
import type { RateDecision, RateLimiter, RateRule, SlotDecision } from '../../core/ports.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
/** Aligned to 60 s (so to 1 s and 10 s too). */
const BASE = 1_700_000_040_000;

interface Subject {
  readonly limiter: RateLimiter;
  /** A second limiter sharing the first one's state (Redis: another client). */
  readonly second?: RateLimiter;
  /** Whether slot state exists for a key (to check that unlimited slots keep none). */
  hasSlotState(key: string): Promise<boolean>;
  cleanup(): Promise<void>;
}

const prefix = `scour-test-${randomBytes(6).toString('hex')}:`;
let admin: Redis;

const subjects: Record<string, () => Promise<Subject>> = {
  memory: async () => {
    const limiter = new MemoryRateLimiter({ now: () => BASE });
    return {
      limiter,
      hasSlotState: async (key) => (limiter as unknown as { slots: Map<string, unknown> }).slots.has(key),
      cleanup: async () => limiter.dispose(),
    };
  },
  redis: async () => {
    const limiter = new RedisRateLimiter({ url: REDIS_URL, keyPrefix: prefix });
    const second = new RedisRateLimiter({ url: REDIS_URL, keyPrefix: prefix });
    await limiter.connect();
    await second.connect();
    return {
      limiter,
      second,
      hasSlotState: async (key) => (await admin.exists(`${prefix}cc:${key}`)) === 1,
      cleanup: async () => {
        await limiter.close();
        await second.close();
      },
    };
  },
};

beforeAll(async () => {
  admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
});

afterAll(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await admin.quit();
});

describe.each(Object.keys(subjects))('%s rate limiter', (name) => {
  let s: Subject;
  beforeAll(async () => { s = await subjects[name]!(); });
  afterAll(async () => { await s.cleanup(); });

  const hit = (key: string, rules: readonly RateRule[], now: number): Promise<RateDecision> => Effect.runPromise(s.limiter.hit(key, rules, now));
  const acquire = (key: string, token: string, max: number, leaseMs: number, now: number): Promise<SlotDecision> =>
    Effect.runPromise(s.limiter.acquire(key, token, max, leaseMs, now));
  const release = (key: string, token: string): Promise<void> => Effect.runPromise(s.limiter.release(key, token));

  it('counts one window: limit, remaining, reset, retryAfter', async () => {
    const rule = { limit: 3, windowSeconds: 60 };
    const now = BASE + 15_250;
    const reset = (BASE + 60_000) / 1000;
    for (const remaining of [2, 1, 0]) {
      expect(await hit('single', [rule], now)).toEqual({ allowed: true, limit: 3, remaining, reset, windowSeconds: 60, retryAfter: 0 });
    }
    // 44.75 s left in the window: rounded up.
    expect(await hit('single', [rule], now)).toEqual({ allowed: false, limit: 3, remaining: 0, reset, windowSeconds: 60, retryAfter: 45 });
    // Keys are independent.
    expect((await hit('single-other', [rule], now)).remaining).toBe(2);
  });

  it('rolls over at the window boundary', async () => {
    const rule = { limit: 2, windowSeconds: 60 };
    const last = BASE + 59_999;
    await hit('rollover', [rule], last);
    await hit('rollover', [rule], last);
    expect(await hit('rollover', [rule], last)).toMatchObject({ allowed: false, retryAfter: 1, reset: (BASE + 60_000) / 1000 });
    expect(await hit('rollover', [rule], BASE + 60_000)).toEqual({
      allowed: true, limit: 2, remaining: 1, reset: (BASE + 120_000) / 1000, windowSeconds: 60, retryAfter: 0,
    });
  });

  it('applies two windows at once; the binding one is reported; denied hits are not counted', async () => {
    const rules = [{ limit: 2, windowSeconds: 1 }, { limit: 3, windowSeconds: 10 }];
    // Allowed: the window with the fewest left binds.
    expect(await hit('two', rules, BASE)).toEqual({ allowed: true, limit: 2, remaining: 1, reset: (BASE + 1000) / 1000, windowSeconds: 1, retryAfter: 0 });
    expect(await hit('two', rules, BASE + 100)).toMatchObject({ allowed: true, limit: 2, remaining: 0, windowSeconds: 1 });
    // The 1 s window refuses; the 10 s one would admit, but nothing is counted in either.
    expect(await hit('two', rules, BASE + 200)).toEqual({ allowed: false, limit: 2, remaining: 0, reset: (BASE + 1000) / 1000, windowSeconds: 1, retryAfter: 1 });
    expect(await hit('two', rules, BASE + 300)).toMatchObject({ allowed: false, windowSeconds: 1 });
    // Next second: the 10 s window holds 2 (not 4), so this third hit is admitted and the 10 s window binds.
    expect(await hit('two', rules, BASE + 1000)).toEqual({ allowed: true, limit: 3, remaining: 0, reset: (BASE + 10_000) / 1000, windowSeconds: 10, retryAfter: 0 });
    expect(await hit('two', rules, BASE + 1100)).toEqual({ allowed: false, limit: 3, remaining: 0, reset: (BASE + 10_000) / 1000, windowSeconds: 10, retryAfter: 9 });
    expect(await hit('two', rules, BASE + 10_000)).toMatchObject({ allowed: true, windowSeconds: 1, remaining: 1 });
  });

  it('when several windows refuse, the one freeing up last binds; ties while allowed go to the shorter window', async () => {
    const strict = [{ limit: 1, windowSeconds: 1 }, { limit: 1, windowSeconds: 10 }];
    await hit('both', strict, BASE);
    expect(await hit('both', strict, BASE + 500)).toMatchObject({ allowed: false, windowSeconds: 10, retryAfter: 10 });
    const even = [{ limit: 5, windowSeconds: 10 }, { limit: 5, windowSeconds: 1 }];
    expect(await hit('tie', even, BASE)).toMatchObject({ allowed: true, windowSeconds: 1, remaining: 4 });
  });

  it('two rules with the same window length count a hit once', async () => {
    const rules = [{ limit: 5, windowSeconds: 60 }, { limit: 3, windowSeconds: 60 }];
    expect(await hit('same-length', rules, BASE)).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    expect(await hit('same-length', rules, BASE)).toMatchObject({ allowed: true, limit: 3, remaining: 1 });
  });

  it('honours retryAfter: a hit retryAfter seconds later is allowed', async () => {
    for (const [rule, at] of [[{ limit: 1, windowSeconds: 60 }, BASE + 12_345], [{ limit: 1, windowSeconds: 1 }, BASE + 999]] as const) {
      const key = `retry-${rule.windowSeconds}`;
      expect((await hit(key, [rule], at)).allowed).toBe(true);
      const denied = await hit(key, [rule], at);
      expect(denied.allowed).toBe(false);
      expect((await hit(key, [rule], at + denied.retryAfter * 1000)).allowed).toBe(true);
    }
  });

  it('hands out concurrency slots up to max; release frees one; leases lapse', async () => {
    const lease = 1000;
    expect(await acquire('slots', 'a', 2, lease, BASE)).toEqual({ acquired: true, active: 1, max: 2 });
    expect(await acquire('slots', 'b', 2, lease, BASE + 100)).toEqual({ acquired: true, active: 2, max: 2 });
    expect(await acquire('slots', 'c', 2, lease, BASE + 200)).toEqual({ acquired: false, active: 2, max: 2 });
    // Re-acquiring a held slot renews it instead of taking another.
    expect(await acquire('slots', 'b', 2, lease, BASE + 300)).toEqual({ acquired: true, active: 2, max: 2 });
    await release('slots', 'a');
    expect(await acquire('slots', 'c', 2, lease, BASE + 400)).toEqual({ acquired: true, active: 2, max: 2 });
    expect(await acquire('slots', 'd', 2, lease, BASE + 500)).toEqual({ acquired: false, active: 2, max: 2 });
    // b's renewed lease ends at BASE + 1300, c's at BASE + 1400.
    expect(await acquire('slots', 'd', 2, lease, BASE + 1299)).toEqual({ acquired: false, active: 2, max: 2 });
    expect(await acquire('slots', 'd', 2, lease, BASE + 1300)).toEqual({ acquired: true, active: 2, max: 2 });
    expect(await acquire('slots', 'e', 2, lease, BASE + 1400)).toEqual({ acquired: true, active: 2, max: 2 });
    expect(await acquire('slots', 'f', 2, lease, BASE + 10_000)).toEqual({ acquired: true, active: 1, max: 2 });
  });

  it('release is idempotent and never fails', async () => {
    expect(await acquire('rel', 'a', 1, 5000, BASE)).toMatchObject({ acquired: true, active: 1 });
    await release('rel', 'a');
    await release('rel', 'a');
    await release('rel-unknown', 'nobody');
    expect(await acquire('rel', 'b', 1, 5000, BASE)).toEqual({ acquired: true, active: 1, max: 1 });
    // Releasing after the lease lapsed is harmless too.
    await release('rel', 'b');
    expect(await acquire('rel', 'c', 1, 5000, BASE + 1)).toEqual({ acquired: true, active: 1, max: 1 });
  });

  it('max <= 0 is unlimited and keeps no state', async () => {
    for (let i = 0; i < 20; i++) expect(await acquire('unlimited', `t${i}`, 0, 1000, BASE)).toEqual({ acquired: true, active: 0, max: 0 });
    expect(await acquire('unlimited', 'x', -1, 1000, BASE)).toEqual({ acquired: true, active: 0, max: -1 });
    expect(await s.hasSlotState('unlimited')).toBe(false);
    await release('unlimited', 't0');
  });

  it('admit: the windows and the slot in one call; a window refusal takes no slot; a slot refusal keeps the hit counted', async () => {
    const admit = (token: string, now: number, max = 1) =>
      Effect.runPromise(s.limiter.admit('admit', [{ limit: 3, windowSeconds: 60 }, { limit: 10, windowSeconds: 3600 }], { token, max, leaseMs: 1000 }, now));
    expect(await admit('a', BASE)).toEqual({
      decision: { allowed: true, limit: 3, remaining: 2, reset: (BASE + 60_000) / 1000, windowSeconds: 60, retryAfter: 0 },
      slot: { acquired: true, active: 1, max: 1 },
    });
    // The slot is taken: refused, but the hit counted (as hit then acquire would).
    expect(await admit('b', BASE + 10)).toMatchObject({ decision: { allowed: true, remaining: 1 }, slot: { acquired: false, active: 1, max: 1 } });
    await Effect.runPromise(s.limiter.release('admit', 'a'));
    expect(await admit('c', BASE + 20)).toMatchObject({ decision: { allowed: true, remaining: 0 }, slot: { acquired: true, active: 1 } });
    // The windows refuse: no slot is asked for, none reported.
    expect(await admit('d', BASE + 30, 5)).toEqual({
      decision: { allowed: false, limit: 3, remaining: 0, reset: (BASE + 60_000) / 1000, windowSeconds: 60, retryAfter: 60 },
      slot: undefined,
    });
    // It shares state with hit and acquire under the same key.
    expect(await acquire('admit', 'e', 1, 1000, BASE + 40)).toMatchObject({ acquired: false, active: 1 });
    // No slot asked for (undefined or max 0): the windows alone; no slot state for an unlimited key.
    expect(await Effect.runPromise(s.limiter.admit('admit-free', [{ limit: 1, windowSeconds: 60 }], undefined, BASE))).toMatchObject({ decision: { allowed: true, remaining: 0 }, slot: undefined });
    expect(await Effect.runPromise(s.limiter.admit('admit-free', [], { token: 'x', max: 0, leaseMs: 1000 }, BASE))).toMatchObject({ decision: { allowed: true }, slot: undefined });
    expect(await s.hasSlotState('admit-free')).toBe(false);
    // Slot only (no windows).
    expect(await Effect.runPromise(s.limiter.admit('admit-slot', [], { token: 'x', max: 1, leaseMs: 1000 }, BASE))).toMatchObject({ decision: { allowed: true }, slot: { acquired: true, active: 1 } });
  });

  it('an empty rule list limits nothing', async () => {
    expect(await hit('none', [], BASE)).toMatchObject({ allowed: true, retryAfter: 0 });
  });

  if (name === 'memory') {
    it('answers synchronously (an Exit: no fiber) and sweeps ended windows and lapsed slots', () => {
      const m = new MemoryRateLimiter({ now: () => BASE }, 60_000);
      const e = m.hit('k', [{ limit: 1, windowSeconds: 1 }], BASE);
      expect(Exit.isExit(e)).toBe(true);
      expect(Exit.isExit(m.acquire('k', 't', 1, 1000, BASE))).toBe(true);
      expect(Exit.isExit(m.release('k', 't'))).toBe(true);
      m.hitSync('k2', [{ limit: 5, windowSeconds: 60 }], BASE);
      m.acquireSync('k3', 't', 1, 500, BASE);
      expect(m.size).toBe(3);
      m.sweep(BASE + 1000);
      expect(m.size).toBe(1);
      m.sweep(BASE + 60_000);
      expect(m.size).toBe(0);
      m.dispose();
    });
  }

  if (name === 'redis') {
    it('writes the documented keys, expiring at the window end (+ slack)', async () => {
      const now = BASE + 20_000;
      await hit('keys', [{ limit: 5, windowSeconds: 60 }], now);
      const ttl = await admin.pttl(`${prefix}rl:keys:60:${BASE}`);
      expect(ttl).toBeGreaterThan(40_000);
      expect(ttl).toBeLessThanOrEqual(41_000);
      await acquire('keys', 't', 2, 30_000, now);
      const score = await admin.zscore(`${prefix}cc:keys`, 't');
      expect(Number(score)).toBe(now + 30_000);
      expect(await admin.pttl(`${prefix}cc:keys`)).toBeGreaterThan(30_000);
    });

    it('two clients share one limit exactly under 200 concurrent hits', async () => {
      const rule = { limit: 37, windowSeconds: 60 };
      const both = [s.limiter, s.second!];
      const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => Effect.runPromise(both[i % 2]!.hit('shared', [rule], BASE + i))));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(37);
      expect(new Set(decisions.filter((d) => d.allowed).map((d) => d.remaining)).size).toBe(37);
    });

    it('two clients share slots exactly under 50 concurrent acquires', async () => {
      const both = [s.limiter, s.second!];
      const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => Effect.runPromise(both[i % 2]!.acquire('shared-slots', `t${i}`, 5, 10_000, BASE))));
      expect(decisions.filter((d) => d.acquired)).toHaveLength(5);
      expect(await admin.zcard(`${prefix}cc:shared-slots`)).toBe(5);
    });

    it('connect() rejects quickly when Redis cannot be reached', async () => {
      const l = new RedisRateLimiter({ url: 'redis://127.0.0.1:1', keyPrefix: prefix });
      const t0 = Date.now();
      await expect(l.connect()).rejects.toThrow(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
      expect(Date.now() - t0).toBeLessThan(2500);
      await l.close();
    });

    it('fails closed with ServiceUnavailable once Redis is gone; release still succeeds', async () => {
      const l = new RedisRateLimiter({ url: REDIS_URL, keyPrefix: prefix });
      await l.connect();
      await l.close();
      const exit = await Effect.runPromiseExit(l.hit('gone', [{ limit: 1, windowSeconds: 1 }], BASE));
      expect(Exit.isFailure(exit)).toBe(true);
      const err = (exit as Exit.Failure<unknown, ServiceUnavailable>).cause.reasons[0] as { error: ServiceUnavailable };
      expect(err.error).toBeInstanceOf(ServiceUnavailable);
      expect(err.error).toMatchObject({ message: 'Rate limiter unavailable', retryAfter: 1 });
      expect(Exit.isFailure(await Effect.runPromiseExit(l.acquire('gone', 't', 1, 1000, BASE)))).toBe(true);
      await Effect.runPromise(l.release('gone', 't'));
    });

    it('a given client is used as is and left open', async () => {
      const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      const l = new RedisRateLimiter({ client, keyPrefix: prefix });
      await l.connect();
      expect(await Effect.runPromise(l.hit('given', [{ limit: 1, windowSeconds: 60 }], BASE))).toMatchObject({ allowed: true });
      await l.close();
      expect(await client.ping()).toBe('PONG');
      await client.quit();
    });
  }
});
