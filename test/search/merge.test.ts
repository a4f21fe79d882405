/**
 * Merging provider results (core/search-merge.ts): URL
 * normalisation, reciprocal rank fusion with sources, post-filters for what
 * a provider did not apply, and term marking in snippets.
 */
import { describe, expect, it } from 'vitest';
import { parseQuery, type FilterName, type ProviderResult, type SearchFilters } from '../../core/search.js';
import { activeFilters, fuse, markTerms, normaliseUrl, postFilter, RRF_K } from '../../core/search-merge.js';

const r = (url: string, over: Partial<ProviderResult> = {}): ProviderResult => ({ url, title: url, snippet: '', publishedAt: null, ...over });
const NONE: SearchFilters = { country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web' };
const q = (s: string) => { const p = parseQuery(s); if (!p.ok) throw new Error(p.message); return p.query; };

describe('normaliseUrl', () => {
  it.each([
    ['https://www.Example.com/a/', 'http://example.com/a'],
    ['https://example.com/a?utm_source=x&utm_medium=y&id=3', 'http://example.com/a?id=3'],
    ['https://example.com/a?b=2&a=1', 'https://example.com/a?a=1&b=2'],
    ['https://example.com/a?fbclid=abc', 'https://example.com/a'],
    ['https://example.com/a?gclid=abc#section', 'https://example.com/a'],
    ['https://example.com:443/', 'http://example.com'],
    ['https://example.com/index.html', 'https://example.com/'],
  ])('%s and %s are one page', (a, b) => {
    expect(normaliseUrl(a)).toBe(normaliseUrl(b));
  });

  it.each([
    ['https://example.com/a', 'https://example.com/b'],
    ['https://example.com/a?id=1', 'https://example.com/a?id=2'],
    ['https://example.com:8080/a', 'https://example.com/a'],
    ['https://blog.example.com/a', 'https://example.com/a'],
    ['https://example.com/A', 'https://example.com/a'],
  ])('%s and %s are different pages', (a, b) => {
    expect(normaliseUrl(a)).not.toBe(normaliseUrl(b));
  });

  it('refuses what is not an absolute http(s) URL', () => {
    for (const u of ['ftp://x.com/', 'javascript:alert(1)', '/relative', '', 'not a url']) expect(normaliseUrl(u)).toBeUndefined();
  });
});

describe('fuse (reciprocal rank fusion)', () => {
  it('scores 1/(k+rank) per provider, merges duplicates and lists every source in priority order', () => {
    const fused = fuse([
      { provider: 'local', results: [r('https://a.com/1'), r('https://b.com/2')] },
      { provider: 'searxng', results: [r('https://www.b.com/2/?utm_source=x'), r('https://c.com/3')] },
    ]);
    expect(fused.map((f) => f.key)).toEqual(['b.com/2', 'a.com/1', 'c.com/3']);
    expect(fused[0]!.sources).toEqual(['local', 'searxng']);
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 12);
    expect(fused[0]!.result.url).toBe('https://b.com/2'); // the higher-priority provider's version
    expect(fused[1]!.sources).toEqual(['local']);
  });

  it('equal scores keep priority order, or put the newest first for news', () => {
    const lists = [
      { provider: 'a', results: [r('https://x.com/old', { publishedAt: 1000 })] },
      { provider: 'b', results: [r('https://y.com/new', { publishedAt: 2000 })] },
    ];
    expect(fuse(lists).map((f) => f.key)).toEqual(['x.com/old', 'y.com/new']);
    expect(fuse(lists, { newestFirst: true }).map((f) => f.key)).toEqual(['y.com/new', 'x.com/old']);
  });

  it('fills gaps from the other provider (date, snippet) and drops unusable URLs', () => {
    const fused = fuse([
      { provider: 'a', results: [r('https://x.com/p', { snippet: '' }), r('javascript:alert(1)')] },
      { provider: 'b', results: [r('https://x.com/p', { snippet: 'from b', publishedAt: 5 })] },
    ]);
    expect(fused).toHaveLength(1);
    expect(fused[0]!.result.snippet).toBe('from b');
    expect(fused[0]!.result.publishedAt).toBe(5);
  });

  it('a page listed twice by one provider counts once', () => {
    const fused = fuse([{ provider: 'a', results: [r('https://x.com/p'), r('https://www.x.com/p/')] }]);
    expect(fused).toHaveLength(1);
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 1), 12);
  });
});

describe('postFilter (what the provider did not apply)', () => {
  const none = new Set<FilterName>();
  const results = [
    r('https://docs.example.com/a', { title: 'Good guide', snippet: 'all about rust', publishedAt: Date.parse('2026-11-20'), type: 'news', language: 'en', country: 'US', safe: true }),
    r('https://spam.example.org/b', { title: 'Used cars', snippet: 'cheap used cars', publishedAt: null, type: null, language: null, safe: null }),
    r('https://other.net/c', { title: 'Old', snippet: 'rust in german', publishedAt: Date.parse('2020-01-01'), type: 'article', language: 'de', country: 'DE', safe: false }),
  ];
  const now = Date.parse('2026-11-23');
  const urls = (x: ProviderResult[]) => x.map((y) => y.url);

  it('site: keeps subdomains, -site: drops them', () => {
    expect(urls(postFilter(results, none, q('rust site:example.com'), NONE))).toEqual(['https://docs.example.com/a']);
    expect(urls(postFilter(results, none, q('rust -site:example.org'), NONE))).toEqual(['https://docs.example.com/a', 'https://other.net/c']);
  });

  it('-word and -"phrase" against title and snippet', () => {
    expect(urls(postFilter(results, none, q('rust -"used cars"'), NONE))).not.toContain('https://spam.example.org/b');
    expect(urls(postFilter(results, none, q('rust -german'), NONE))).not.toContain('https://other.net/c');
  });

  it('time_range needs a date in range; news needs news/article with a date', () => {
    const week = { ...NONE, publishedAfter: now - 7 * 86_400_000 };
    expect(urls(postFilter(results, none, q('rust'), week))).toEqual(['https://docs.example.com/a']);
    expect(urls(postFilter(results, none, q('rust'), { ...NONE, resultType: 'news' }))).toEqual(['https://docs.example.com/a', 'https://other.net/c']);
  });

  it('language and country drop results that name another one, keep those that name none', () => {
    expect(urls(postFilter(results, none, q('rust'), { ...NONE, language: 'en' }))).toEqual(['https://docs.example.com/a', 'https://spam.example.org/b']);
    expect(urls(postFilter(results, none, q('rust'), { ...NONE, country: 'DE' }))).toEqual(['https://spam.example.org/b', 'https://other.net/c']);
  });

  it('safe_search: moderate drops explicit results, strict keeps only safe ones', () => {
    expect(urls(postFilter(results, none, q('rust'), { ...NONE, safeSearch: 'moderate' }))).toEqual(['https://docs.example.com/a', 'https://spam.example.org/b']);
    expect(urls(postFilter(results, none, q('rust'), { ...NONE, safeSearch: 'strict' }))).toEqual(['https://docs.example.com/a']);
  });

  it('filters the provider applied are left alone', () => {
    const all = new Set<FilterName>(['site', 'excluded', 'time_range', 'result_type', 'language', 'country', 'safe_search']);
    expect(postFilter(results, all, q('rust site:nothing.com -rust'), { ...NONE, safeSearch: 'strict', language: 'fr', publishedAfter: now })).toHaveLength(3);
  });
});

describe('activeFilters (what decides whether a provider is asked for more)', () => {
  it('names every filter and operator a request uses, and nothing else', () => {
    expect(activeFilters(q('rust'), NONE)).toEqual([]);
    expect(activeFilters(q('rust site:a.com -spam'), { ...NONE, safeSearch: 'moderate', language: 'en', country: 'US', publishedAfter: 1, resultType: 'news' }))
      .toEqual(['site', 'excluded', 'time_range', 'result_type', 'language', 'country', 'safe_search']);
    expect(activeFilters(q('rust -site:a.com'), NONE)).toEqual(['site']);
  });
});

describe('markTerms', () => {
  it('marks whole words, case- and accent-insensitively, and longer forms', () => {
    const text = 'Searches for Café owners: the SEARCH engine searched cafe listings; research is different.';
    const marks = markTerms(text, ['search', 'cafe']).map(([a, b]) => text.slice(a, b));
    expect(marks).toEqual(['Searches', 'Café', 'SEARCH', 'searched', 'cafe']);
  });

  it('marks nothing for no words', () => {
    expect(markTerms('abc', [])).toEqual([]);
    expect(markTerms('', ['x'])).toEqual([]);
  });
});
