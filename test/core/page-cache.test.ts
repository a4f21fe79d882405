/**
 * The scrape cache's key and change tracking's comparison (core/page-cache.ts,
 * core/page-changes.ts) with the real diff library (adapters/text-diff):
 * every scrape request field is placed (in the key, out of the cache, or
 * neither), the key is the account, the canonical URL and the fetch
 * options with their defaults, and "same" ignores white space only.
 */
import { describe, expect, it } from 'vitest';
import { CACHE_FIELDS, cacheKeyMaterial, canonicalPageUrl, uncacheableField } from '../../core/page-cache.js';
import { compareVersions, MAX_TRACKED_CHARS, trackedMarkdown, withoutSpacing } from '../../core/page-changes.js';
import { unifiedDiff } from '../../adapters/text-diff/jsdiff.js';
import { ScrapeRequest } from '../../plugins/operations/scrape/request.js';

const URL_A = 'https://Example.com:443/a/./b?q=1#part';

describe('the scrape cache key', () => {
  it('places every field of the scrape request (a new fetch option must say whether it is in the key)', () => {
    for (const field of Object.keys(ScrapeRequest.properties)) expect(CACHE_FIELDS, field).toHaveProperty(field);
  });

  it('is the account, the canonical URL and the fetch options, defaults filled in', () => {
    const base = cacheKeyMaterial('acct_1', { url: URL_A })!;
    expect(base).toContain('https://example.com/a/b?q=1');
    expect(base).not.toContain('#part');
    expect(cacheKeyMaterial('acct_1', { url: 'https://example.com/a/b?q=1', follow_redirects: true, render_js: false })).toBe(base);
    // What is extracted, charged or waited for in total is not in the key.
    expect(cacheKeyMaterial('acct_1', { url: URL_A, extract_links: true, markdown: true, timeout: 5, max_age: 10, track_changes: true, country: 'DE' })).toBe(base);
    for (const other of [
      cacheKeyMaterial('acct_2', { url: URL_A }),
      cacheKeyMaterial('acct_1', { url: 'https://example.com/a/b?q=2' }),
      cacheKeyMaterial('acct_1', { url: URL_A, render_js: true }),
      cacheKeyMaterial('acct_1', { url: URL_A, user_agent: 'other' }),
      cacheKeyMaterial('acct_1', { url: URL_A, follow_redirects: false }),
    ]) expect(other).not.toBe(base);
  });

  it('keeps the fragment of a rendered page (its scripts may read it), and the browser options of one', () => {
    const render = (extra: object) => cacheKeyMaterial('a', { url: URL_A, render_js: true, ...extra });
    expect(render({})).toContain('#part');
    expect(render({ wait_for: '#x' })).not.toBe(render({}));
    expect(render({ wait_time: 2 })).not.toBe(render({}));
    expect(render({ screenshot: true })).not.toBe(render({}));
    expect(render({ screenshot: true, screenshot_options: { full_page: true, width: 800 } }))
      .toBe(render({ screenshot: true, screenshot_options: { width: 800, full_page: true } }));
    expect(render({ screenshot: true, screenshot_options: { width: 800 } })).not.toBe(render({ screenshot: true }));
  });

  it.each([
    ['cookies', { cookies: { a: 'b' } }],
    ['custom_headers', { custom_headers: { 'x-a': 'b' } }],
    ['proxy_type', { proxy_type: 'datacenter' as const }],
    ['proxy_country', { proxy_country: 'DE' }],
    ['actions', { actions: [{ type: 'click' as const, selector: 'button' }] }],
  ])('a request with %s is never cached', (field, extra) => {
    expect(uncacheableField({ url: URL_A, ...extra })).toBe(field);
    expect(cacheKeyMaterial('a', { url: URL_A, ...extra })).toBeUndefined();
  });

  it('has no key for what is not a URL', () => {
    expect(canonicalPageUrl('not a url')).toBeUndefined();
    expect(cacheKeyMaterial('a', { url: 'not a url' })).toBeUndefined();
  });
});

describe('change tracking', () => {
  it('"same" ignores white space only', () => {
    expect(withoutSpacing('  # Title\n\n\nSome   text\t here \n')).toBe('# Title Some text here');
    const previous = { markdown: '# Title\n\nSome text here\n', scrapedAt: Date.UTC(2026, 0, 2) };
    expect(compareVersions(undefined, 'x', unifiedDiff)).toEqual({ status: 'new', previous_scraped_at: null, diff: null });
    expect(compareVersions(previous, '# Title\n\n\n  Some text   here', unifiedDiff)).toEqual({ status: 'same', previous_scraped_at: '2026-01-02T00:00:00.000Z', diff: null });
    const changed = compareVersions(previous, '# Title\n\nOther text here\n', unifiedDiff);
    expect(changed.status).toBe('changed');
    expect(changed.diff).toBe('--- previous\n+++ current\n@@ -1,3 +1,3 @@\n # Title\n \n-Some text here\n+Other text here\n');
  });

  it('a diff the library gives up on is a whole replacement, still a unified diff', () => {
    const lines = (seed: string) => Array.from({ length: 40_000 }, (_, i) => `${seed} ${(i * 7919) % 100_003}`).join('\n');
    const d = unifiedDiff(lines('a'), lines('b'), { before: 'previous', after: 'current' });
    expect(d.startsWith('--- previous\n+++ current\n@@ -1,40000 +1,40000 @@\n-a ')).toBe(true);
    expect(unifiedDiff('', 'x\n', { before: 'p', after: 'c' })).toMatch(/^--- p\n\+\+\+ c\n@@ -0,0 \+1(,1)? @@\n\+x\n$/);
  });

  it('keeps at most MAX_TRACKED_CHARS, never half a surrogate pair, and no NUL', () => {
    expect(trackedMarkdown('a\u0000b')).toBe('a\ufffdb');
    const long = `${'x'.repeat(MAX_TRACKED_CHARS - 1)}😀tail`;
    expect(trackedMarkdown(long)).toBe('x'.repeat(MAX_TRACKED_CHARS - 1));
  });
});
