/**
 * The crawl's parts without a network: canonical URLs (one spelling per
 * page, idempotent), the trap defences (path patterns, calendars, repeated
 * segments, long URLs), path-glob checks, sitemap and robots.txt parsing,
 * sitemap reading (index files, gzipped files, its bounds on files, bytes
 * and time),
 * and the per-host gate (concurrency and Crawl-delay spacing).
 */
import { describe, expect, it } from 'vitest';
import { globProblem } from '../../plugins/operations/crawl/index.js';
import { HostGate, parseRobots } from '../../plugins/operations/crawl/politeness.js';
import { parseSitemap, sitemapHostAllowed, sitemapPages, sitemapRoots } from '../../plugins/operations/crawl/sitemaps.js';
import type { FetchText, TextResponse } from '../../plugins/operations/crawl/politeness.js';
import { gzipSync } from 'node:zlib';
import { canonicalUrl, looksLikeDocument, looksLikeFile, pathPattern, repeatingPath, TrapGuard, urlDate } from '../../core/crawl-urls.js';

describe('canonicalUrl', () => {
  it('gives one spelling for one page', () => {
    const same = [
      'https://example.com/docs/b',
      'HTTPS://EXAMPLE.com:443/docs/b',
      'https://example.com/docs/b#intro',
      'https://example.com/docs/./b',
      'https://example.com/docs/x/../b',
      'https://example.com/docs/%62',
      'https://example.com/docs/b?utm_source=news&utm_medium=email&fbclid=1&gclid=2',
      'https://example.com/docs/b?',
      'https://example.com/docs/b;jsessionid=0123ABC',
      'https://example.com/docs/b?PHPSESSID=abc',
    ];
    expect(new Set(same.map((u) => canonicalUrl(u)))).toEqual(new Set(['https://example.com/docs/b']));
    expect(canonicalUrl('https://example.com/list?b=2&a=1')).toBe('https://example.com/list?a=1&b=2');
    expect(canonicalUrl('https://example.com/list?a=2&b=1&a=1')).toBe('https://example.com/list?a=2&a=1&b=1');
    expect(canonicalUrl('/docs/b', 'https://example.com/x/')).toBe('https://example.com/docs/b');
  });

  it('keeps what can make another page, and is idempotent', () => {
    expect(canonicalUrl('https://example.com/docs/b/')).toBe('https://example.com/docs/b/');
    expect(canonicalUrl('https://example.com/Docs/B')).toBe('https://example.com/Docs/B');
    expect(canonicalUrl('http://example.com/docs/b')).toBe('http://example.com/docs/b');
    for (const u of ['https://x.test/%7euser/%2fa?q=a b&z=~', 'https://x.test/ü?q=é', 'https://x.test/a?b=2&a=1&a=0', 'http://127.0.0.1:8080/p;x=1']) {
      const c = canonicalUrl(u)!;
      expect(canonicalUrl(c), u).toBe(c);
    }
  });

  it('refuses what is not an http(s) page address', () => {
    for (const u of ['ftp://example.com/', 'mailto:a@b.c', 'javascript:alert(1)', 'https://user:pw@example.com/', 'not a url', 'http://']) {
      expect(canonicalUrl(u), u).toBeUndefined();
    }
  });
});

describe('trap defences', () => {
  const now = () => Date.UTC(2026, 10, 23);

  it('generalises numbers and ids into path patterns', () => {
    expect(pathPattern('https://x.test/item/123?b=1&a=2')).toBe('x.test/item/{n}?a&b');
    expect(pathPattern('https://x.test/item/456?a=9&b=8')).toBe('x.test/item/{n}?a&b');
    expect(pathPattern('https://x.test/u/3f2b9c1e-1a2b-4c3d-9e8f-0123456789ab/page-2')).toBe('x.test/u/{id}/page-{n}');
  });

  it('finds calendar dates in paths and queries', () => {
    expect(urlDate('https://x.test/calendar/2026/11')).toEqual({ pattern: 'x.test/calendar/{date}', at: Date.UTC(2026, 10, 1) });
    expect(urlDate('https://x.test/calendar/2026/11/23/')?.at).toBe(Date.UTC(2026, 10, 23));
    expect(urlDate('https://x.test/archive/2026-02-30')).toBeUndefined();
    expect(urlDate('https://x.test/events?year=2026&month=11&view=m')).toEqual({ pattern: 'x.test/events?{date}&view=m', at: Date.UTC(2026, 10, 1) });
    expect(urlDate('https://x.test/day?date=2026-11-23')?.at).toBe(Date.UTC(2026, 10, 23));
    expect(urlDate('https://x.test/item/2026/55')).toBeUndefined();
    expect(urlDate('https://x.test/docs/b')).toBeUndefined();
  });

  it('stops a calendar after 24 dates of one shape, and never goes a year ahead', () => {
    const g = new TrapGuard({ perPattern: 1000, datesPerCalendar: 24, futureMs: 366 * 86_400_000, maxSegments: 24 }, now);
    const month = (i: number) => {
      const d = new Date(Date.UTC(2026, 10 - i, 1));
      return `https://x.test/calendar/${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
    };
    let admitted = 0;
    for (let i = 0; i < 100; i++) {
      if (g.check(month(i)) === undefined) {
        g.admit(month(i));
        admitted++;
      } else expect(g.check(month(i))).toBe('calendar');
    }
    expect(admitted).toBe(24);
    // An admitted date stays admitted (a resumed crawl re-checks what it knows).
    expect(g.check(month(3))).toBeUndefined();
    expect(g.check('https://x.test/calendar/2028/01')).toBe('calendar');
    expect(g.check('https://x.test/other-calendar/2026/11')).toBeUndefined();
  });

  it('limits one path pattern, repeated segments and long URLs', () => {
    const g = new TrapGuard({ perPattern: 3, datesPerCalendar: 24, futureMs: 86_400_000, maxSegments: 6 }, now);
    for (let i = 0; i < 3; i++) {
      expect(g.check(`https://x.test/item/${i}`)).toBeUndefined();
      g.admit(`https://x.test/item/${i}`);
    }
    expect(g.check('https://x.test/item/99')).toBe('path_pattern_limit');
    expect(g.check('https://x.test/item/99/reviews')).toBeUndefined();
    expect(repeatingPath('https://x.test/a/b/a/b/c')).toBe(true);
    expect(repeatingPath('https://x.test/x/x/x')).toBe(true);
    expect(repeatingPath('https://x.test/docs/api/docs')).toBe(false);
    expect(g.check('https://x.test/a/b/a/b')).toBe('repeating_path');
    expect(g.check('https://x.test/1/2/3/4/5/6/7')).toBe('repeating_path');
    expect(g.check(`https://x.test/${'y'.repeat(2100)}`)).toBe('url_too_long');
  });

  it('tells files from pages by extension', () => {
    expect(looksLikeFile('https://x.test/files/report.PDF')).toBe(true);
    expect(looksLikeFile('https://x.test/img/a.png?w=2')).toBe(true);
    expect(looksLikeFile('https://x.test/v1.2/docs')).toBe(false);
    expect(looksLikeFile('https://x.test/page.html')).toBe(false);
  });

  it('tells documents a crawl can read (include_documents) by extension: .pdf and .docx only', () => {
    expect(looksLikeDocument('https://x.test/files/report.PDF')).toBe(true);
    expect(looksLikeDocument('https://x.test/files/handbook.docx?v=2')).toBe(true);
    expect(looksLikeDocument('https://x.test/files/old.doc')).toBe(false);
    expect(looksLikeDocument('https://x.test/pdf/latest')).toBe(false);
    expect(looksLikeDocument('https://x.test/a.pdf/index.html')).toBe(false);
  });
});

describe('path globs', () => {
  it('accepts path globs and says what is wrong with the others', () => {
    for (const g of ['/blog/**', '/docs/*', '/{a,b}/**', '/item/[0-9]*', '**/print']) expect(globProblem(g), g).toBeUndefined();
    expect(globProblem('blog/**')).toMatch(/start with \//);
    expect(globProblem('https://x.test/blog/**')).toMatch(/start with \/|scheme/);
    expect(globProblem('//x.test/blog')).toMatch(/scheme and host/);
    expect(globProblem('/a/{b')).toMatch(/unclosed/);
    expect(globProblem('/a/]')).toMatch(/without its opening/);
    expect(globProblem('/a b')).toMatch(/spaces/);
    expect(globProblem('/a/***')).toMatch(/\*\*\*/);
    expect(globProblem(' /a')).toMatch(/spaces/);
  });
});

describe('sitemaps and robots.txt', () => {
  it('reads urlsets, index files, CDATA, entities and text sitemaps', () => {
    expect(parseSitemap(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc> https://x.test/a </loc><lastmod>2026-01-01</lastmod></url><url><loc><![CDATA[https://x.test/b?x=1&y=2]]></loc></url>
      <url><loc>https://x.test/c?x=1&amp;y=2</loc></url><image:image><image:loc>https://x.test/i.png</image:loc></image:image></urlset>`))
      .toEqual({ pages: ['https://x.test/a', 'https://x.test/b?x=1&y=2', 'https://x.test/c?x=1&y=2'], sitemaps: [] });
    expect(parseSitemap('<sitemapindex><sitemap><loc>https://x.test/s1.xml</loc></sitemap><sitemap><loc>https://x.test/s2.xml</loc></sitemap></sitemapindex>'))
      .toEqual({ pages: [], sitemaps: ['https://x.test/s1.xml', 'https://x.test/s2.xml'] });
    expect(parseSitemap('https://x.test/a\r\nnot a url\nhttps://x.test/b\n')).toEqual({ pages: ['https://x.test/a', 'https://x.test/b'], sitemaps: [] });
    // A cut-off file gives what it has; markup that is not a sitemap gives nothing.
    expect(parseSitemap('<urlset><url><loc>https://x.test/a</loc></url><url><loc>https://x.test/b')).toEqual({ pages: ['https://x.test/a', 'https://x.test/b'], sitemaps: [] });
    expect(parseSitemap('<html><body><a href="https://x.test/a">a</a><loc>https://x.test/b</loc></body></html>')).toEqual({ pages: [], sitemaps: [] });
  });

  it('reads sitemaps through index files, gunzips gzipped ones, skips broken ones, and stops at its bounds on files, bytes and time', async () => {
    const xml = (urls: string[]) => `<urlset>${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
    const files: Record<string, TextResponse> = {
      'https://x.test/index.xml': { statusCode: 200, contentType: 'application/xml', body: '<sitemapindex><sitemap><loc>https://x.test/a.xml.gz</loc></sitemap><sitemap><loc>https://x.test/bad.xml.gz</loc></sitemap><sitemap><loc>https://other.test/c.xml</loc></sitemap></sitemapindex>', finalUrl: '' },
      'https://x.test/a.xml.gz': { statusCode: 200, contentType: 'application/gzip', body: '\ufffd', bytes: gzipSync(xml(['https://x.test/1', 'https://x.test/2'])), finalUrl: '' },
      'https://x.test/bad.xml.gz': { statusCode: 200, contentType: 'application/gzip', body: '', bytes: new Uint8Array([0x1f, 0x8b, 1, 2, 3]), finalUrl: '' },
      'https://x.test/sitemap.xml': { statusCode: 404, contentType: 'text/plain', body: 'no', finalUrl: '' },
      'https://other.test/c.xml': { statusCode: 200, contentType: 'application/xml', body: xml(['https://other.test/3']), finalUrl: '' },
    };
    const asked: string[] = [];
    const fetchText: FetchText = async (url) => {
      asked.push(url);
      const f = files[url];
      if (f === undefined) throw new Error('unreachable');
      return f;
    };
    const signal = new AbortController().signal;
    const roots = sitemapRoots('https://x.test', ['https://x.test/index.xml']);
    expect(roots).toEqual(['https://x.test/index.xml', 'https://x.test/sitemap.xml']);
    const all = await sitemapPages(roots, fetchText, signal, sitemapHostAllowed('https://x.test/'));
    expect(all).toEqual({ pages: ['https://x.test/1', 'https://x.test/2'], files: 4 });
    expect(asked).not.toContain('https://other.test/c.xml');
    expect(sitemapHostAllowed('https://docs.x.test/')('https://x.test/s.xml')).toBe(true);
    expect(sitemapHostAllowed('https://docs.x.test/')('https://evil.test/s.xml')).toBe(false);
    expect(sitemapHostAllowed('https://docs.x.test/', false)('https://evil.test/s.xml')).toBe(true);

    // Files: the second root is never fetched.
    expect(await sitemapPages(roots, fetchText, signal, () => true, { maxFiles: 1, maxDepth: 3, maxUrls: 100 })).toEqual({ pages: [], files: 1, stopped: 'files' });
    // Bytes: a gzipped file that unzips past what is left stops the reading.
    const small = await sitemapPages(['https://x.test/a.xml.gz'], fetchText, signal, () => true, { maxFiles: 5, maxDepth: 3, maxUrls: 100, maxBytes: 20 });
    expect(small).toEqual({ pages: [], files: 1, stopped: 'bytes' });
    // URLs.
    expect(await sitemapPages(roots, fetchText, signal, () => true, { maxFiles: 50, maxDepth: 3, maxUrls: 1 })).toMatchObject({ pages: ['https://x.test/1'], stopped: 'urls' });
    // Time: a file that never answers ends the reading when the budget aborts, with what was found.
    const budget = new AbortController();
    const hanging: FetchText = (url, s) => (url.endsWith('index.xml') ? fetchText(url, s) : new Promise((_, reject) => s.addEventListener('abort', () => reject(new Error('aborted')))));
    setTimeout(() => budget.abort(), 50);
    expect(await sitemapPages(roots, hanging, signal, () => true, undefined, { budget: budget.signal })).toEqual({ pages: [], files: 2, stopped: 'time' });
  });

  it('reads Disallow, Crawl-delay (bounded) and Sitemap lines, for ScourBot or *', () => {
    const r = parseRobots('https://x.test/robots.txt', 'User-agent: *\nDisallow: /private/\nCrawl-delay: 0.5\nSitemap: https://x.test/s.xml\n');
    expect(r.allowed('https://x.test/private/a')).toBe(false);
    expect(r.allowed('https://x.test/public')).toBe(true);
    expect(r.delayMs).toBe(500);
    expect(r.sitemaps).toEqual(['https://x.test/s.xml']);
    const own = parseRobots('https://x.test/robots.txt', 'User-agent: ScourBot\nDisallow: /\nCrawl-delay: 99999\n\nUser-agent: *\nAllow: /\n');
    expect(own.allowed('https://x.test/a')).toBe(false);
    expect(own.delayMs).toBe(30_000);
  });
});

describe('HostGate', () => {
  it('keeps at most two requests in flight per host, and one spaced by the delay when there is one', async () => {
    const gate = new HostGate(2);
    let active = 0;
    let peak = 0;
    const work = async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 20));
      active--;
    };
    await Promise.all(Array.from({ length: 8 }, () => gate.run('a.test', 0, work)));
    expect(peak).toBe(2);
    peak = 0;
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 4 }, () => gate.run('b.test', 100, async () => {
      starts.push(Date.now());
      await work();
    })));
    expect(peak).toBe(1);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(95);
    // Another host is not held up by them.
    const t = Date.now();
    await gate.run('c.test', 0, async () => undefined);
    expect(Date.now() - t).toBeLessThan(50);
  });
});
