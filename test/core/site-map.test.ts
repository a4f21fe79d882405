/**
 * core/site-map.ts: which hosts are one site, and the ranking of a map's
 * URLs by a search phrase (table tests: where a word is found, how it
 * matches, its rarity, the phrase bonus, ties, and hostile phrases).
 */
import { describe, expect, it } from 'vitest';
import { rankByRelevance, sameSite, words } from '../../core/site-map.js';

describe('sameSite', () => {
  it.each([
    ['example.com', 'example.com', false, true],
    ['example.com', 'EXAMPLE.com', false, true],
    ['example.com', 'www.example.com', false, true],
    ['www.example.com', 'example.com', false, true],
    ['example.com', 'blog.example.com', false, false],
    ['example.com', 'blog.example.com', true, true],
    ['example.com', 'a.b.example.com', true, true],
    ['docs.example.com', 'api.example.com', true, false],
    ['docs.example.com', 'example.com', true, false],
    ['example.com', 'badexample.com', true, false],
    ['example.com', 'example.com.evil.org', true, false],
    ['localhost', 'blog.localhost', true, true],
    ['127.0.0.1', '127.0.0.2', true, false],
  ] as const)('%s and %s (subdomains %s): %s', (start, host, sub, expected) => {
    expect(sameSite(start, host, sub)).toBe(expected);
  });
});

describe('rankByRelevance', () => {
  const site = (...paths: string[]) => paths.map((p) => ({ url: `https://x.org${p}` }));
  const rank = (c: readonly { url: string; title?: string }[], q: string) => rankByRelevance(c, q).map((x) => x.url.replace('https://x.org', ''));

  it('leaves out what matches no word, keeps the rest best first', () => {
    expect(rank(site('/', '/about', '/docs/install', '/blog/installing-things'), 'install')).toEqual(['/docs/install', '/blog/installing-things']);
    expect(rank(site('/', '/about'), 'zebra')).toEqual([]);
  });

  it('the last segment counts more than a folder; link text counts', () => {
    expect(rank(site('/pricing/faq', '/plans/pricing'), 'pricing')).toEqual(['/plans/pricing', '/pricing/faq']);
    expect(rank([{ url: 'https://x.org/p/1', title: 'Our pricing' }, { url: 'https://x.org/p/2', title: 'Team' }], 'pricing')).toEqual(['/p/1']);
  });

  it('plurals, prefixes and stems match, less than the word itself', () => {
    expect(rank(site('/prices', '/price'), 'price')).toEqual(['/price', '/prices']);
    expect(rank(site('/docs/authentication', '/docs/auth'), 'auth')).toEqual(['/docs/auth', '/docs/authentication']);
    expect(rank(site('/pricing'), 'price')).toEqual(['/pricing']);
    expect(rank(site('/pride'), 'price')).toEqual([]);
  });

  it('rare words count more than words every URL has; the whole phrase adds a bonus; more words matched rank higher', () => {
    const docs = site('/docs/a', '/docs/b', '/docs/c', '/docs/setup', '/guide/setup');
    expect(rank(docs, 'docs setup')[0]).toBe('/docs/setup');
    expect(rank(docs, 'docs setup')[1]).toBe('/guide/setup');
    expect(rank(site('/getting/started-later', '/docs/getting-started'), 'getting started')[0]).toBe('/docs/getting-started');
  });

  it('ties: the shallower path, then the shorter URL, then the order given', () => {
    expect(rank(site('/a/b/news', '/news', '/c/news'), 'news')).toEqual(['/news', '/c/news', '/a/b/news']);
    expect(rank(site('/news?x=1', '/news?y=1'), 'news')).toEqual(['/news?x=1', '/news?y=1']);
  });

  it('words: letters and digits, lower case, accents folded; percent-encoded paths read decoded', () => {
    expect(words('Café-Crème, 2024!')).toEqual(['cafe', 'creme', '2024']);
    expect(rank(site('/caf%C3%A9', '/tea'), 'café')).toEqual(['/caf%C3%A9']);
    expect(rank(site('/broken%ZZ', '/x'), 'broken')).toEqual(['/broken%ZZ']);
  });

  it('hostile phrases: punctuation only matches nothing; a long phrase of repeated words stays quick', () => {
    expect(rank(site('/a', '/b'), '!!! ???')).toEqual([]);
    const many = Array.from({ length: 10_000 }, (_, n) => ({ url: `https://x.org/section-${n % 50}/page-${n}` }));
    const started = performance.now();
    expect(rankByRelevance(many, `${'section page '.repeat(40)}zzz`).length).toBe(10_000);
    // Linear in the URLs and the distinct words (a phrase of 500 characters has few): generous for a loaded 2-core machine, far below a quadratic run.
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});
