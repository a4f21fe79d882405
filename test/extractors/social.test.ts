/** The social extractor; its case tables are in test/fixtures/social-cases.ts (bench:search:enrich reads them too). */
import { describe, expect, it } from 'vitest';
import {
  extractSocial, mergeProfiles, normaliseProfileUrl, precisionRecall, MAX_PROFILES, socialExtractor,
  type ScoreCase, type SocialPlatform, type SocialProfile,
} from '../../plugins/extractors/social/index.js';
import { ld, PAGES, PROFILES, URL_CASES } from '../fixtures/social-cases.js';
import { page } from './support.js';

describe('normaliseProfileUrl', () => {
  it.each(URL_CASES.map(([label, url, expected, asserted]) => [label, url, expected, asserted === true] as const))('%s: %s', (_label, url, expected, asserted) => {
    expect(normaliseProfileUrl(url, { asserted })).toEqual(expected);
  });

  it('covers every network, both ways', () => {
    const platforms: SocialPlatform[] = ['x', 'linkedin', 'facebook', 'instagram', 'youtube', 'tiktok', 'github', 'pinterest', 'reddit', 'telegram', 'mastodon', 'discord', 'threads', 'bluesky'];
    expect(new Set(PROFILES.map((c) => c[2]!.platform))).toEqual(new Set(platforms));
    expect(URL_CASES.length).toBeGreaterThanOrEqual(100);
  });
});

// ---------------------------------------------------------------- pages

const keys = (ps: readonly SocialProfile[]): string[] => ps.map((p) => `${p.platform} ${p.url}`);

describe('extractSocial', () => {
  it.each(PAGES)('%s', (_label, html, url, expected) => {
    expect(keys(extractSocial(page(html, url)))).toEqual(expected);
  });

  it('gives the full item: platform, canonical url, handle, kind and the page it came from', () => {
    const p = page('<a href="https://www.linkedin.com/in/Jane-Doe/">in</a><a href="https://t.me/ScourNews">tg</a>', 'https://scour.example/a');
    const redirected = { ...p, finalUrl: 'https://scour.example/b' };
    expect(extractSocial(redirected)).toEqual([
      { platform: 'linkedin', url: 'https://www.linkedin.com/in/jane-doe', handle: 'jane-doe', kind: 'person', source_url: 'https://scour.example/b' },
      { platform: 'telegram', url: 'https://t.me/scournews', handle: 'scournews', source_url: 'https://scour.example/b' },
    ]);
  });

  it('is the socialExtractor plugin (built in: switched on by extract_social and include_social)', () => {
    expect(socialExtractor).toMatchObject({ kind: 'extractor', name: 'extractor-social', id: 'social', filter: { contentTypes: ['text/html', 'application/xhtml+xml'] } });
    expect(socialExtractor.builtin).toBe(true);
    expect(keys(socialExtractor.extract(page('<a href="https://github.com/scour-hq">gh</a>'), {}) as SocialProfile[])).toEqual(['github https://github.com/scour-hq']);
  });
});

describe('mergeProfiles', () => {
  it('de-duplicates across pages by platform and canonical url, keeping the first source_url and the order', () => {
    const home = extractSocial(page('<a href="https://twitter.com/ScourHQ">x</a><a href="https://github.com/scour-hq">gh</a>', 'https://scour.example/'));
    const about = extractSocial(page('<a href="https://x.com/scourhq/">x</a><a href="https://linkedin.com/company/scour">in</a>', 'https://scour.example/about'));
    const merged = mergeProfiles([home, about, []]);
    expect(merged.map((p) => [p.platform, p.url, p.source_url])).toEqual([
      ['x', 'https://x.com/scourhq', 'https://scour.example/'],
      ['github', 'https://github.com/scour-hq', 'https://scour.example/'],
      ['linkedin', 'https://www.linkedin.com/company/scour', 'https://scour.example/about'],
    ]);
    expect(mergeProfiles([])).toEqual([]);
  });
});

describe('bounded work', () => {
  it.each([
    ['50k distinct profile links', () => Array.from({ length: 50_000 }, (_, i) => `<a href="https://github.com/user${i}">u</a>`).join('')],
    ['50k share buttons', () => '<a href="https://twitter.com/intent/tweet?url=x">t</a>'.repeat(50_000)],
    ['50k links to arbitrary /@ pages with rel=me', () => Array.from({ length: 50_000 }, (_, i) => `<a rel="me" href="https://h${i}.example/@u">u</a>`).join('')],
    ['50k fediverse addresses in text', () => `<p>${Array.from({ length: 50_000 }, (_, i) => `@u${i}@s${i}.example`).join(' ')}</p>`],
    ['one huge text of @ signs', () => `<p>${'@a'.repeat(500_000)}</p>`],
    ['50k twitter:site metas', () => Array.from({ length: 50_000 }, (_, i) => `<meta name="twitter:site" content="@u${i}">`).join('')],
    ['50k sameAs values', () => ld({ '@type': 'Organization', sameAs: Array.from({ length: 50_000 }, (_, i) => `https://x.com/u${i}`) })],
  ])('stays fast and capped on %s', (_label, make) => {
    const p = page(make());
    const t0 = performance.now();
    const found = extractSocial(p);
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(found.length).toBeLessThanOrEqual(MAX_PROFILES);
  });
});

// ---------------------------------------------------------------- precision / recall

describe('precisionRecall', () => {
  it('counts true/false positives and false negatives by platform + url', () => {
    const a = { platform: 'x', url: 'https://x.com/a' };
    const b = { platform: 'x', url: 'https://x.com/b' };
    const c = { platform: 'github', url: 'https://github.com/c' };
    const s = precisionRecall([
      { expected: [a, b], actual: [a, c] },
      { expected: [], actual: [] },
      { expected: [c], actual: [c, c] },
    ]);
    expect(s).toMatchObject({ cases: 3, truePositives: 2, falsePositives: 1, falseNegatives: 1 });
    expect(s.precision).toBeCloseTo(2 / 3);
    expect(s.recall).toBeCloseTo(2 / 3);
    expect(s.f1).toBeCloseTo(2 / 3);
    expect(precisionRecall([])).toMatchObject({ precision: 1, recall: 1 });
  });

  it('is perfect on this table (URL cases and pages)', () => {
    const cases: ScoreCase[] = [
      ...URL_CASES.map(([, url, expected, asserted]) => {
        const actual = normaliseProfileUrl(url, { asserted: asserted === true });
        return { expected: expected === undefined ? [] : [expected], actual: actual === undefined ? [] : [actual] };
      }),
      ...PAGES.map(([, html, url, expected]) => ({
        expected: expected.map((k) => ({ platform: k.slice(0, k.indexOf(' ')), url: k.slice(k.indexOf(' ') + 1) })),
        actual: extractSocial(page(html, url)),
      })),
    ];
    const score = precisionRecall(cases);
    expect(score.cases).toBe(URL_CASES.length + PAGES.length);
    expect({ precision: score.precision, recall: score.recall }).toEqual({ precision: 1, recall: 1 });
  });
});
