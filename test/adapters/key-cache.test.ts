/**
 * The shared deployment's API key cache (adapters/key-cache): lookups reused
 * for the TTL, bounded (LRU), unknown keys never kept, evicted by account on
 * a bus message and at once on this process's own revocation or plan
 * change, a lookup that raced an eviction not stored, and no caching while
 * the bus is down. Then the Redis bus itself: a message published by one
 * process reaches another, and a dropped subscription turns the cache off
 * until it is back.
 */
import { randomBytes } from 'node:crypto';
import { Effect } from 'effect';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { CachedAccountStore, type InvalidationBus } from '../../adapters/key-cache/index.js';
import { RedisInvalidationBus } from '../../adapters/key-cache/redis.js';
import type { KeyMatch, KeyRecord } from '../../core/accounts.js';
import type { AccountStore } from '../../core/ports.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
const run = <A, E>(e: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(e);

const match = (hash: string, accountId: string, over: Partial<KeyMatch> = {}): KeyMatch => ({
  keyId: `key_${hash}`, keyHash: hash, accountId, accountName: null, plan: 'starter', balance: 10, held: 0,
  expiresAt: null, revokedAt: null, periodStart: 0, periodEnd: 1e15, createdAt: 0, ...over,
});

/** A store answering findKey from a table, counting lookups; revokeKey/setPlan flip the table. */
function fakeStore(rows: Map<string, KeyMatch>) {
  const counts = { findKey: 0 };
  let gate: Promise<void> | undefined;
  const store = {
    findKey: (hash: string) => {
      counts.findKey++;
      const answer = rows.get(hash);
      return gate === undefined ? Effect.succeed(answer) : Effect.promise(() => gate!.then(() => answer));
    },
    revokeKey: (keyId: string, now: number) => {
      for (const [h, m] of rows) if (m.keyId === keyId) rows.set(h, { ...m, revokedAt: now });
      const m = [...rows.values()].find((r) => r.keyId === keyId);
      return Effect.succeed(m === undefined ? undefined : ({ id: keyId, accountId: m.accountId } as unknown as KeyRecord));
    },
    setPlan: (id: string) => Effect.succeed({ id } as never),
    rollover: () => Effect.succeed(undefined),
  } as unknown as AccountStore;
  return { store, counts, hold: (p: Promise<void>) => void (gate = p), open: () => void (gate = undefined) };
}

function fakeBus() {
  const bus = {
    live: true,
    published: [] as string[],
    onMessage: (_: string) => {},
    onReset: () => {},
    publish: async (id: string) => void bus.published.push(id),
    listen(m: (id: string) => void, r: () => void) {
      bus.onMessage = m;
      bus.onReset = r;
    },
  };
  return bus satisfies InvalidationBus;
}

describe('CachedAccountStore', () => {
  it('reuses a lookup for the TTL, then reads again', async () => {
    let now = 1000;
    const f = fakeStore(new Map([['h1', match('h1', 'a1')]]));
    const c = new CachedAccountStore(f.store, fakeBus(), { ttlMs: 5000, now: () => now });
    for (let i = 0; i < 5; i++) expect(await run(c.findKey('h1'))).toMatchObject({ accountId: 'a1' });
    expect(f.counts.findKey).toBe(1);
    now += 4999;
    await run(c.findKey('h1'));
    expect(f.counts.findKey).toBe(1);
    now += 1;
    await run(c.findKey('h1'));
    expect(f.counts.findKey).toBe(2);
    expect(c.stats).toMatchObject({ hits: 5, misses: 2 });
  });

  it('never keeps unknown keys, and stays within its size (least recently used out)', async () => {
    const rows = new Map<string, KeyMatch>();
    for (let i = 0; i < 5; i++) rows.set(`k${i}`, match(`k${i}`, `a${i}`));
    const f = fakeStore(rows);
    const c = new CachedAccountStore(f.store, fakeBus(), { ttlMs: 60_000, maxEntries: 3 });
    for (let i = 0; i < 1000; i++) expect(await run(c.findKey(`random${i}`))).toBeUndefined();
    expect(c.size).toBe(0);
    for (const k of ['k0', 'k1', 'k2']) await run(c.findKey(k));
    await run(c.findKey('k0')); // k0 used last: k1 is now the oldest
    await run(c.findKey('k3'));
    expect(c.size).toBe(3);
    const before = f.counts.findKey;
    await run(c.findKey('k0'));
    await run(c.findKey('k2'));
    expect(f.counts.findKey).toBe(before);
    await run(c.findKey('k1'));
    expect(f.counts.findKey).toBe(before + 1);
  });

  it('a revocation here evicts at once and is published; a message from elsewhere evicts that account only', async () => {
    const f = fakeStore(new Map([['h1', match('h1', 'a1')], ['h2', match('h2', 'a1')], ['h3', match('h3', 'a2')]]));
    const bus = fakeBus();
    const c = new CachedAccountStore(f.store, bus, { ttlMs: 60_000 });
    for (const h of ['h1', 'h2', 'h3']) await run(c.findKey(h));
    await run(c.revokeKey('key_h1', 123));
    expect(bus.published).toEqual(['a1']);
    expect((await run(c.findKey('h1')))?.revokedAt).toBe(123);
    expect(c.size).toBe(2);
    bus.onMessage('a2');
    const n = f.counts.findKey;
    await run(c.findKey('h3'));
    await run(c.findKey('h1'));
    expect(f.counts.findKey).toBe(n + 1);
    await run(c.setPlan('a1', 'builder'));
    expect(bus.published).toEqual(['a1', 'a1']);
    expect(c.size).toBe(1);
  });

  it('does not store a lookup that was in flight when an eviction arrived', async () => {
    const rows = new Map([['h1', match('h1', 'a1')]]);
    const f = fakeStore(rows);
    const bus = fakeBus();
    const c = new CachedAccountStore(f.store, bus, { ttlMs: 60_000 });
    let release!: () => void;
    f.hold(new Promise<void>((r) => (release = r)));
    const pending = run(c.findKey('h1'));
    // The key is revoked elsewhere while the read is in flight (the read saw the row before).
    bus.onMessage('a1');
    release();
    expect((await pending)?.revokedAt).toBeNull();
    f.open();
    rows.set('h1', match('h1', 'a1', { revokedAt: 5 }));
    expect((await run(c.findKey('h1')))?.revokedAt).toBe(5);
  });

  it('goes to the store on every lookup while the bus is down, and starts empty when it is back', async () => {
    const f = fakeStore(new Map([['h1', match('h1', 'a1')]]));
    const bus = fakeBus();
    const c = new CachedAccountStore(f.store, bus, { ttlMs: 60_000 });
    await run(c.findKey('h1'));
    bus.live = false;
    bus.onReset();
    expect(c.size).toBe(0);
    for (let i = 0; i < 3; i++) await run(c.findKey('h1'));
    expect(f.counts.findKey).toBe(4);
    expect(c.size).toBe(0);
    bus.live = true;
    await run(c.findKey('h1'));
    await run(c.findKey('h1'));
    expect(f.counts.findKey).toBe(5);
  });

  it('TTL 0: no caching, writes still publish', async () => {
    const f = fakeStore(new Map([['h1', match('h1', 'a1')]]));
    const bus = fakeBus();
    const c = new CachedAccountStore(f.store, bus, { ttlMs: 0 });
    for (let i = 0; i < 3; i++) await run(c.findKey('h1'));
    expect(f.counts.findKey).toBe(3);
    await run(c.revokeKey('key_h1', 1));
    expect(bus.published).toEqual(['a1']);
  });
});

describe('RedisInvalidationBus', () => {
  const prefix = `scour-test-${randomBytes(6).toString('hex')}:`;
  const open: RedisInvalidationBus[] = [];
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
  });

  it('a message published by one process reaches another within a second; a dropped subscription turns the cache off until it is back', async () => {
    const a = new RedisInvalidationBus({ url: REDIS_URL, prefix });
    const b = new RedisInvalidationBus({ url: REDIS_URL, prefix });
    const cli = new RedisInvalidationBus({ url: REDIS_URL, prefix, publishOnly: true });
    open.push(a, b, cli);
    await Promise.all([a.connect(), b.connect(), cli.connect()]);
    expect(a.live && b.live).toBe(true);
    expect(cli.live).toBe(false);
    const got: string[] = [];
    let resets = 0;
    b.listen((id) => got.push(id), () => resets++);
    const t0 = Date.now();
    await cli.publish('acct_1');
    await a.publish('acct_2');
    while (got.length < 2 && Date.now() - t0 < 1000) await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual(['acct_1', 'acct_2']);
    expect(Date.now() - t0).toBeLessThan(1000);

    // Kill b's subscriber connection from outside (only it: other users share this Redis): b stops being live (cache off, emptied), then resubscribes.
    const port = (b as unknown as { sub: { stream: { localPort: number } } }).sub.stream.localPort;
    const admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await admin.connect();
    try {
      expect(await admin.call('CLIENT', 'KILL', 'ADDR', `127.0.0.1:${port}`, 'SKIPME', 'no')).toBe(1);
    } finally {
      admin.disconnect();
    }
    const t1 = Date.now();
    while (b.live && Date.now() - t1 < 2000) await new Promise((r) => setTimeout(r, 5));
    expect(b.live).toBe(false);
    expect(resets).toBeGreaterThanOrEqual(1);
    while (!b.live && Date.now() - t1 < 10_000) await new Promise((r) => setTimeout(r, 20));
    expect(b.live).toBe(true);
    expect(resets).toBeGreaterThanOrEqual(2);
    await a.publish('acct_3');
    const t2 = Date.now();
    while (!got.includes('acct_3') && Date.now() - t2 < 1000) await new Promise((r) => setTimeout(r, 5));
    expect(got).toContain('acct_3');
  }, 20_000);
});
