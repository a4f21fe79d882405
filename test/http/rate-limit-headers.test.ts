/**
 * A 429's x-ratelimit-* headers and its body describe the same binding
 * limit (issue 17), in both deployments (in-process limiter; Redis) and on
 * both adapters, through real scrapes of a slow loopback page: a refusal by
 * the concurrency cap (headers: the cap, 0 left, window 0, as the body),
 * a refusal by a window (per window and per day), and a 402, whose headers
 * are the window the request was admitted by. Every header once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../config/plans.js';
import { call, expectErrorBody, type Reply } from '../support/http.js';
import { until } from '../support/processes.js';
import { startScourIn, type AdapterKind, type ConfigKind, type Running } from '../support/server.js';
import { startTypedSite, type TypedSite } from '../support/typed-site.js';

const ADMIN = 'rate-limit-headers-admin-token-01';
const MATRIX: ReadonlyArray<readonly [ConfigKind, AdapterKind]> = [['embedded', 'uws'], ['embedded', 'node'], ['shared', 'uws'], ['shared', 'node']];
/** Free scrape as the issue had it (5 per window, 1 in flight), with a 10-second window so a test fits in one. */
const WINDOW = 10;
const PLANS = applyPlanOverrides(DEFAULT_PLANS, {
  free: { limits: { scrape: { windows: [{ limit: 5, seconds: WINDOW }], concurrency: 1 } } },
  // A daily window that binds before the minute's.
  starter: { limits: { scrape: { windows: [{ limit: 1000, seconds: 60 }, { limit: 3, seconds: 86_400 }], concurrency: 0 } } },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The four headers, each sent once (a number, not a list). */
function rateHeaders(r: Reply): { limit: number; remaining: number; reset: number; window: number } {
  const get = (h: string) => {
    const v = r.headers.get(h);
    expect(v, `${h} on a ${r.status}`).toMatch(/^\d+$/);
    return Number(v);
  };
  return { limit: get('x-ratelimit-limit'), remaining: get('x-ratelimit-remaining'), reset: get('x-ratelimit-reset'), window: get('x-ratelimit-window') };
}

/** A 429's headers say what its body says. */
function expectConsistent429(r: Reply): void {
  expectErrorBody(r, 429, 'RATE_LIMITED');
  const h = rateHeaders(r);
  expect(h).toMatchObject({ limit: r.body.limit, remaining: r.body.remaining, reset: r.body.reset });
  expect(r.body.remaining).toBe(0);
  expect(r.headers.get('retry-after')).toBe(String(r.body.retry_after));
  expect(r.body.retry_after).toBeGreaterThanOrEqual(1);
  expect(r.body.reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
}

describe.each(MATRIX)('429 headers and body agree (%s deployment over %s)', (config, adapter) => {
  let site: TypedSite;
  let s: Running;
  const account = async (plan: string, credits: number): Promise<string> => {
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
    expect(r.status, r.text).toBe(201);
    return r.body.api_key;
  };
  const scrape = (key: string, path: string) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body: { url: `${site.url}${path}` } });

  beforeAll(async () => {
    site = await startTypedSite();
    s = await startScourIn(config, adapter, { adminToken: ADMIN, allowPrivateTargets: 'loopback' }, { plans: PLANS });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('a concurrency refusal: headers and body both say limit 1 (the cap), 0 remaining; then a window refusal says the window', async () => {
    const key = await account('free', 100);
    // Start early in a window (aligned to the epoch) so every request below lands in the same one.
    if (Date.now() % (WINDOW * 1000) > 4000) await sleep(WINDOW * 1000 - (Date.now() % (WINDOW * 1000)) + 50);
    const slowHits = site.hits('/slow');
    const slow = scrape(key, '/slow?ms=1500');
    // The slow scrape holds the only slot once its fetch reached the target.
    await until(async () => site.hits('/slow'), (n) => n > slowHits, 5000, 10);
    const refused = await scrape(key, '/html');
    expectConsistent429(refused);
    expect(refused.body).toMatchObject({ limit: 1, remaining: 0, retry_after: 1 });
    expect(refused.body.error).toMatch(/concurrency/i);
    // Requests in flight, not a time window.
    expect(rateHeaders(refused)).toEqual({ limit: 1, remaining: 0, reset: refused.body.reset, window: 0 });

    const first = await slow;
    expect(first.status, first.text).toBe(200);
    expect(rateHeaders(first)).toMatchObject({ limit: 5, remaining: 4, window: WINDOW });
    // The refused request counted toward the window (docs/accounts-and-credits.md): 2 used, 3 left.
    for (const left of [2, 1, 0]) {
      const r = await scrape(key, '/html');
      expect(r.status, r.text).toBe(200);
      expect(rateHeaders(r)).toMatchObject({ limit: 5, remaining: left, window: WINDOW });
    }
    const over = await scrape(key, '/html');
    expectConsistent429(over);
    expect(over.body).toMatchObject({ limit: 5, remaining: 0 });
    expect(over.body.retry_after).toBeLessThanOrEqual(WINDOW);
    expect(rateHeaders(over)).toEqual({ limit: 5, remaining: 0, reset: over.body.reset, window: WINDOW });
    expect(over.body.error).toMatch(/5 scrape requests per 10 seconds/);
  }, 30_000);

  it('a per-day refusal: the day window in the headers and the body; a 402 carries the admitting window', async () => {
    const key = await account('starter', 7);
    for (const left of [2, 1]) {
      const r = await scrape(key, '/html');
      expect(r.status, r.text).toBe(200);
      expect(rateHeaders(r)).toMatchObject({ limit: 3, remaining: left, window: 86_400 });
    }
    // 1 credit left, a scrape costs 3: 402, admitted by the day window (its last request).
    const poor = await scrape(key, '/html');
    expectErrorBody(poor, 402, 'NO_CREDITS');
    expect(poor.body).toMatchObject({ credits_remaining: 1, credits_required: 3 });
    expect(poor.body).not.toHaveProperty('limit');
    expect(rateHeaders(poor)).toMatchObject({ limit: 3, remaining: 0, window: 86_400 });
    const over = await scrape(key, '/html');
    expectConsistent429(over);
    const midnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400;
    expect(rateHeaders(over)).toEqual({ limit: 3, remaining: 0, reset: midnight, window: 86_400 });
    expect(over.body).toMatchObject({ limit: 3, reset: midnight });
    expect(over.body.error).toMatch(/3 scrape requests per day/);
  });
});
