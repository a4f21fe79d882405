/** The account domain's pure rules: bearer parsing, key format, billing periods, plan overrides and prices. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addMonths, availableCredits, KEY_PATTERN, keyPrefix, keyState, parseBearer, periodContaining } from '../../core/accounts.js';
import { nodeSecrets } from '../../adapters/crypto/node.js';
import { ConfigError } from '../../config/env.js';
import { applyPlanOverrides, DEFAULT_PLANS, limitsFor, loadPlans, planBook } from '../../config/plans.js';
import { PRICES, researchPrice, scrapePrice, searchPrice } from '../../config/prices.js';

const KEY = `sk_${'A'.repeat(43)}`;

describe('parseBearer', () => {
  it.each([
    [`Bearer ${KEY}`, KEY],
    [`bearer ${KEY}`, KEY],
    [`BEARER ${KEY}`, KEY],
    [`Bearer ${KEY}  `, KEY],
    ['Bearer abc.def-ghi_jkl~mno+p/q==', 'abc.def-ghi_jkl~mno+p/q=='],
  ])('accepts %j', (h, token) => expect(parseBearer(h)).toBe(token));

  it.each([
    undefined, '', 'Bearer', 'Bearer ', 'Bearer  ', `Basic ${KEY}`, `Token ${KEY}`, `Bearer${KEY}`, `Bearer ${KEY} extra`,
    'Bearer a\tb', 'Bearer é', 'Bearer a"b', 'Bearer =abc', `Bearer ${'a'.repeat(5000)}`,
  ])('refuses %j', (h) => expect(parseBearer(h)).toBeUndefined());
});

describe('keys', () => {
  it('have 256 random bits in the documented format, and a short prefix', () => {
    const key = `sk_${nodeSecrets.random(32)}`;
    expect(key).toMatch(KEY_PATTERN);
    expect(keyPrefix(key)).toHaveLength(11);
    expect(key.startsWith(keyPrefix(key))).toBe(true);
    expect(`sk_${nodeSecrets.random(32)}`).not.toBe(key);
  });

  it('are compared in constant time, equal or not, whatever the lengths', () => {
    expect(nodeSecrets.equal('abc', 'abc')).toBe(true);
    expect(nodeSecrets.equal('abc', 'abd')).toBe(false);
    expect(nodeSecrets.equal('abc', 'abcd')).toBe(false);
    expect(nodeSecrets.equal('', '')).toBe(true);
    expect(nodeSecrets.sha256('x')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('are revoked before they expire, and expire at their expiry', () => {
    expect(keyState({ revokedAt: null, expiresAt: null }, 10)).toBe('active');
    expect(keyState({ revokedAt: null, expiresAt: 11 }, 10)).toBe('active');
    expect(keyState({ revokedAt: null, expiresAt: 10 }, 10)).toBe('expired');
    expect(keyState({ revokedAt: 5, expiresAt: 1 }, 10)).toBe('revoked');
  });
});

describe('billing periods', () => {
  const at = (s: string) => Date.parse(s);
  it('add calendar months, clamping the day to the month', () => {
    expect(new Date(addMonths(at('2026-01-31T10:00:00Z'), 1)).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(new Date(addMonths(at('2028-01-31T10:00:00Z'), 1)).toISOString()).toBe('2028-02-29T10:00:00.000Z');
    expect(new Date(addMonths(at('2026-01-31T10:00:00Z'), 2)).toISOString()).toBe('2026-03-31T10:00:00.000Z');
    expect(new Date(addMonths(at('2026-11-15T00:00:00Z'), 14)).toISOString()).toBe('2028-01-15T00:00:00.000Z');
  });

  it('contain now, anchored at the account creation', () => {
    const anchor = at('2026-01-31T10:00:00Z');
    const p = periodContaining(anchor, at('2026-03-05T00:00:00Z'));
    expect(new Date(p.start).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(new Date(p.end).toISOString()).toBe('2026-03-31T10:00:00.000Z');
    const edge = periodContaining(anchor, at('2026-03-31T10:00:00Z'));
    expect(new Date(edge.start).toISOString()).toBe('2026-03-31T10:00:00.000Z');
    expect(periodContaining(anchor, anchor)).toEqual({ start: anchor, end: addMonths(anchor, 1) });
    const far = periodContaining(anchor, at('2031-07-01T00:00:00Z'));
    expect(far.start).toBeLessThanOrEqual(at('2031-07-01T00:00:00Z'));
    expect(far.end).toBeGreaterThan(at('2031-07-01T00:00:00Z'));
  });

  it('available credits never go below zero', () => {
    expect(availableCredits({ balance: 10, held: 3 })).toBe(7);
    expect(availableCredits({ balance: 3, held: 3 })).toBe(0);
  });
});

describe('plans', () => {
  it('follow the spec tables (8.1 for search, 8.2 per minute for scrape and research)', () => {
    const b = planBook(DEFAULT_PLANS);
    expect(b.limits('free', 'search')).toEqual({ windows: [{ limit: 1, windowSeconds: 60 }, { limit: 10, windowSeconds: 3600 }], concurrency: 1 });
    expect(b.limits('unicorn', 'search').concurrency).toBe(25);
    expect(b.limits('starter', 'scrape').windows).toEqual([{ limit: 50, windowSeconds: 60 }]);
    expect(b.limits('builder', 'research').windows).toEqual([{ limit: 20, windowSeconds: 60 }]);
    expect(b.limits('free', 'research').windows).toEqual([{ limit: 2, windowSeconds: 60 }]);
    expect(b.limits('free', 'some-plugin-op')).toEqual(DEFAULT_PLANS.free.limits.default);
  });

  it('gate contacts at Starter and social at Builder', () => {
    const b = planBook(DEFAULT_PLANS);
    expect(b.allows('free', 'contacts')).toEqual({ minPlan: 'starter', field: 'include_contacts' });
    expect(b.allows('starter', 'contacts')).toBe(true);
    expect(b.allows('starter', 'social')).toEqual({ minPlan: 'builder', field: 'include_social' });
    expect(b.allows('builder', 'social')).toBe(true);
    expect(b.allows('unicorn', 'social')).toBe(true);
    expect(b.allows('free', 'anything-ungated')).toBe(true);
  });

  it('take overrides from JSON', () => {
    const p = applyPlanOverrides(DEFAULT_PLANS, {
      unicorn: { monthly_credits: 7, limits: { scrape: { per_minute: 1000, concurrency: 50 }, custom: { windows: [{ limit: 3, seconds: 2 }] } } },
      free: { limits: { search: { per_minute: 2, per_hour: 20, per_day: 100 } } },
    });
    expect(p.unicorn.monthlyCredits).toBe(7);
    expect(limitsFor(p.unicorn, 'scrape')).toEqual({ windows: [{ limit: 1000, windowSeconds: 60 }], concurrency: 50 });
    expect(limitsFor(p.unicorn, 'custom')).toEqual({ windows: [{ limit: 3, windowSeconds: 2 }], concurrency: 25 });
    expect(limitsFor(p.free, 'search').windows).toHaveLength(3);
    expect(limitsFor(p.free, 'search').concurrency).toBe(1);
    expect(DEFAULT_PLANS.unicorn.monthlyCredits).toBe(100_000);
  });

  it.each([
    [[], /JSON object/],
    [{ gold: {} }, /unknown plan "gold"/],
    [{ free: 3 }, /free must be an object/],
    [{ free: { monthly_credits: -1 } }, /free.monthly_credits/],
    [{ free: { monthly_credits: 1.5 } }, /free.monthly_credits/],
    [{ free: { colour: 'red' } }, /free.colour is not a plan setting/],
    [{ free: { limits: [] } }, /free.limits must be an object/],
    [{ free: { limits: { 'Bad Op': {} } } }, /lower-case operation/],
    [{ free: { limits: { search: { per_minute: 0 } } } }, /per_minute must be an integer/],
    [{ free: { limits: { search: { per_minute: '5' } } } }, /per_minute must be an integer/],
    [{ free: { limits: { search: { per_week: 5 } } } }, /per_week is not a limit/],
    [{ free: { limits: { search: { per_minute: 5, windows: [{ limit: 1, seconds: 60 }] } } } }, /60-second window twice/],
    [{ free: { limits: { search: { windows: [{ limit: 1 }] } } } }, /seconds must be an integer/],
    [{ free: { limits: { search: { windows: [3] } } } }, /windows\[0\]/],
    [{ free: { limits: { search: { concurrency: -2 } } } }, /concurrency/],
  ])('refuse bad overrides: %j', (raw, message) => {
    expect(() => applyPlanOverrides(DEFAULT_PLANS, raw)).toThrow(ConfigError);
    expect(() => applyPlanOverrides(DEFAULT_PLANS, raw)).toThrow(message);
  });

  it('read SCOUR_PLANS files, refusing missing and malformed ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scour-plans-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ free: { monthly_credits: 42 } }));
    expect(loadPlans(good).free.monthlyCredits).toBe(42);
    expect(loadPlans(undefined)).toBe(DEFAULT_PLANS);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ free: ');
    expect(() => loadPlans(bad)).toThrow(/not valid JSON/);
    expect(() => loadPlans(join(dir, 'missing.json'))).toThrow(/cannot read/);
  });
});

describe('prices (spec 8.5)', () => {
  it('search: 1 up to 10 results, 2 above, +3 per scraped page, +5 contacts, +5 social', () => {
    expect(searchPrice({})).toBe(1);
    expect(searchPrice({ max_results: 10 })).toBe(1);
    expect(searchPrice({ max_results: 11 })).toBe(2);
    expect(searchPrice({ max_results: 50, auto_scrape_top: 10, include_contacts: true, include_social: true })).toBe(2 + 30 + 5 + 5);
  });

  it('scrape: 3 base plus each option', () => {
    expect(scrapePrice({})).toBe(3);
    expect(scrapePrice({ render_js: true, proxy_type: 'residential', screenshot: true, extract_links: true, extract_images: true, extract_schema: true, extract_meta: true })).toBe(3 + 5 + 2 + 3 + 1 + 1 + 2 + 1);
    expect(scrapePrice({ proxy_type: 'datacenter' })).toBe(3);
  });

  it('research: 5, 10, 15 by depth', () => {
    expect([researchPrice({ analysis_depth: 'quick' }), researchPrice({}), researchPrice({ analysis_depth: 'comprehensive' })]).toEqual([5, 10, 15]);
    expect(PRICES.research.standard).toBe(10);
  });
});
