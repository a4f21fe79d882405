/**
 * Provider pauses: ask() (core/search-merge.ts) pauses a provider that
 * rejects with ProviderRateLimited for the time its service asked, does not
 * ask it again until then, and says so in warnings; memoryPauses never
 * shortens a pause; RedisPauses shares pauses between processes (two
 * instances on one real Redis prefix stand for two processes).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedisPauses } from '../../adapters/search/pauses.js';
import { ask, memoryPauses } from '../../core/search-merge.js';
import { ProviderRateLimited, type ProviderResponse, type SearchProviderPlugin } from '../../core/search.js';
import { defineSearchProvider } from '../../plugins/sdk/search.js';
import { redisNamespace, type RedisNamespace } from '../support/services.js';

const EMPTY: ProviderResponse = { results: [], total: 0, applied: new Set() };
const provider = (id: string): SearchProviderPlugin => defineSearchProvider({ name: `search-provider-${id}`, id, search: async () => EMPTY });

describe('ask() with a pause book', () => {
  it('pauses a provider that rate-limits for the time asked, skips it meanwhile without calling it, and asks again after', async () => {
    let now = 1_000_000;
    const book = { pauses: memoryPauses(), now: () => now };
    const p = provider('svc');
    let calls = 0;
    const limited = () => { calls++; return Promise.reject(new ProviderRateLimited('HTTP 429 (slow down), Retry-After 30 s', 30_000)); };
    const first = await ask(p, limited, 5000, new AbortController().signal, book);
    expect(first.ok).toBe(false);
    if (first.ok) return;
    expect(first.warning.code).toBe('PROVIDER_RATE_LIMITED');
    expect(first.warning.message).toMatch(/svc rate-limited Scour: HTTP 429 \(slow down\).*paused for 30 s, until 1970-01-01T00:17:10Z/);
    expect(calls).toBe(1);

    now += 29_000;
    const second = await ask(p, limited, 5000, new AbortController().signal, book);
    expect(second.ok).toBe(false);
    if (second.ok) return;
    expect(second.warning.code).toBe('PROVIDER_PAUSED');
    expect(second.warning.message).toMatch(/paused until 1970-01-01T00:17:10Z \(1 s more\)/);
    expect(calls).toBe(1);

    now += 1_000;
    const third = await ask(p, () => { calls++; return Promise.resolve(EMPTY); }, 5000, new AbortController().signal, book);
    expect(third.ok).toBe(true);
    expect(calls).toBe(2);
  });

  it('without a book a rate limit is only a warning; a day is the longest pause', async () => {
    const p = provider('svc');
    const o = await ask(p, () => Promise.reject(new ProviderRateLimited('quota', 10_000)), 5000, new AbortController().signal);
    expect(o.ok === false && o.warning.code).toBe('PROVIDER_RATE_LIMITED');
    const book = { pauses: memoryPauses(), now: () => 0 };
    await ask(p, () => Promise.reject(new ProviderRateLimited('quota', 30 * 86_400_000)), 5000, new AbortController().signal, book);
    expect(book.pauses.pausedUntil('svc', 0)).toBe(86_400_000);
  });

  it('other providers are not paused, and a shorter later pause does not shorten a longer one', () => {
    const m = memoryPauses();
    m.pause('a', 5000);
    m.pause('a', 2000);
    expect(m.pausedUntil('a', 0)).toBe(5000);
    expect(m.pausedUntil('b', 0)).toBeUndefined();
    expect(m.pausedUntil('a', 5000)).toBeUndefined();
  });
});

describe('RedisPauses (shared mode)', () => {
  let ns: RedisNamespace | undefined;
  const open: RedisPauses[] = [];
  afterEach(async () => {
    for (const p of open.splice(0)) await p.close();
    await ns?.clear();
  });

  it('a pause set by one process is seen by another within the refresh interval, and only lengthens', async () => {
    ns = redisNamespace();
    const a = new RedisPauses({ url: ns.url, prefix: ns.prefix, refreshMs: 100 });
    const b = new RedisPauses({ url: ns.url, prefix: ns.prefix, refreshMs: 100 });
    open.push(a, b);
    await a.connect();
    await b.connect();
    const now = Date.now();
    expect(b.pausedUntil('wikipedia', now)).toBeUndefined();
    a.pause('wikipedia', now + 60_000);
    expect(a.pausedUntil('wikipedia', now)).toBe(now + 60_000);
    await expect.poll(() => b.pausedUntil('wikipedia', Date.now()), { timeout: 3000, interval: 50 }).toBe(now + 60_000);
    b.pause('wikipedia', now + 10_000);
    await new Promise((r) => setTimeout(r, 300));
    const c = new RedisPauses({ url: ns.url, prefix: ns.prefix });
    open.push(c);
    await c.connect();
    expect(c.pausedUntil('wikipedia', Date.now())).toBe(now + 60_000);
    expect(c.pausedUntil('openalex', Date.now())).toBeUndefined();
  });
});
