/**
 * The Firecrawl translations as pure functions (plugins/operations/firecrawl):
 * actions to the native shape, scrape options to native scrape fields with
 * warnings and issues, crawl path regexes to globs, batch ids, statuses and
 * the documents shaped from native answers.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ACTIONS, SCROLL_AMOUNT, translateActions } from '../../plugins/operations/firecrawl/actions.js';
import { documentOf } from '../../plugins/operations/firecrawl/documents.js';
import { FirecrawlFailure } from '../../plugins/operations/firecrawl/errors.js';
import { regexToGlob, translateBatch, translateCrawl, translateMap, translateSearch } from '../../plugins/operations/firecrawl/requests.js';
import { batchErrors, batchId, batchStatus, crawlErrors, jobStatus, parseBatchId } from '../../plugins/operations/firecrawl/responses.js';
import { NO_FORMATS, translateScrapeOptions } from '../../plugins/operations/firecrawl/scrape-options.js';
import { BadRequest, RateLimited } from '../../core/errors.js';

describe('actions', () => {
  it('translates every supported action to the native shape', () => {
    const t = translateActions([
      { type: 'wait', milliseconds: 500 },
      { type: 'wait', selector: '#ready' },
      { type: 'click', selector: 'button.more' },
      { type: 'write', text: 'hello' },
      { type: 'press', key: 'Enter' },
      { type: 'scroll', direction: 'up' },
      { type: 'scroll' },
      { type: 'screenshot', fullPage: true },
      { type: 'executeJavascript', script: 'document.title' },
    ]);
    expect(t.issues).toEqual([]);
    expect(t.notes).toEqual([]);
    expect(t.actions).toEqual([
      { type: 'wait', milliseconds: 500 },
      { type: 'wait', selector: '#ready' },
      { type: 'click', selector: 'button.more' },
      { type: 'write', text: 'hello' },
      { type: 'press', key: 'Enter' },
      { type: 'scroll', direction: 'up', amount: SCROLL_AMOUNT },
      { type: 'scroll', direction: 'down', amount: SCROLL_AMOUNT },
      { type: 'screenshot', full_page: true },
      { type: 'execute_javascript', script: 'document.title' },
    ]);
  });

  it('drops scrape, pdf and unknown actions with a note, and notes what it changes', () => {
    const t = translateActions([{ type: 'scrape' }, { type: 'pdf' }, { type: 'click', selector: 'a', all: true }, { type: 'scroll', selector: '#list' }, { type: 'screenshot', quality: 50 }]);
    expect(t.issues).toEqual([]);
    expect(t.actions).toEqual([{ type: 'click', selector: 'a' }, { type: 'scroll', direction: 'down', amount: SCROLL_AMOUNT }, { type: 'screenshot', full_page: false }]);
    expect(t.notes).toHaveLength(5);
    expect(t.notes[0]).toMatch(/^actions\[0\]: scrape actions are dropped/);
    expect(t.notes[1]).toMatch(/pdf/);
  });

  it.each([
    ['not an array', { type: 'click' }, 'actions'],
    ['too many', Array(MAX_ACTIONS + 1).fill({ type: 'wait', milliseconds: 1 }), 'actions'],
    ['an item that is not an object', ['click'], 'actions[0]'],
    ['no type', [{ selector: 'a' }], 'actions[0]'],
    ['click without selector', [{ type: 'click' }], 'actions[0].selector'],
    ['wait of nothing', [{ type: 'wait' }], 'actions[0].milliseconds'],
    ['wait too long', [{ type: 'wait', milliseconds: 3_600_000 }], 'actions[0].milliseconds'],
    ['write of a number', [{ type: 'write', text: 5 }], 'actions[0].text'],
    ['press of nothing', [{ type: 'press', key: '' }], 'actions[0].key'],
    ['scroll sideways', [{ type: 'scroll', direction: 'left' }], 'actions[0].direction'],
    ['empty script', [{ type: 'executeJavascript', script: '' }], 'actions[0].script'],
  ])('refuses %s at its path', (_name, input, field) => {
    const t = translateActions(input);
    expect(t.issues.map((i) => i.field)).toContain(field);
  });
});

describe('scrape options', () => {
  const env = { version: 2 as const, renders: true, single: true };

  it('defaults to markdown, and always reads the metadata', () => {
    const t = translateScrapeOptions({}, env);
    expect(t.native).toEqual({ extract_meta: true, markdown: true });
    expect(t.formats).toEqual({ ...NO_FORMATS, markdown: true });
    expect(t.warnings).toEqual([]);
  });

  it('maps formats and options to native fields', () => {
    const t = translateScrapeOptions({
      formats: ['links', 'images', 'rawHtml', { type: 'screenshot', fullPage: true, quality: 70, viewport: { width: 10_000, height: 900 } }, { type: 'json', schema: { type: 'object' }, prompt: 'p' }, 'changeTracking'],
      headers: { 'X-Test': '1' }, waitFor: 1500, timeout: 20_000, maxAge: 3_600_000, location: { languages: ['de-DE', 'en'] },
      actions: [{ type: 'click', selector: 'a' }], origin: 'js-sdk@4', integration: 'x',
    }, env);
    expect(t.issues).toEqual([]);
    expect(t.warnings).toEqual([]);
    expect(t.native).toEqual({
      extract_meta: true, extract_links: true, extract_images: true, render_js: true, screenshot: true,
      screenshot_options: { full_page: true, format: 'jpeg', quality: 70, width: 3840, height: 900 },
      extract_json: { schema: { type: 'object' }, prompt: 'p' }, track_changes: true,
      custom_headers: { 'X-Test': '1', 'Accept-Language': 'de-DE, en' }, wait_time: 2, timeout: 20, max_age: 3600,
      actions: [{ type: 'click', selector: 'a' }],
    });
  });

  it('a json format with a prompt alone extracts into an open object', () => {
    expect(translateScrapeOptions({ formats: [{ type: 'json', prompt: 'the price' }] }, env).native.extract_json).toEqual({ schema: { type: 'object' }, prompt: 'the price' });
  });

  it('v1: json with jsonOptions, extract with extract, screenshot@fullPage', () => {
    const v1 = { version: 1 as const, renders: true, single: true };
    const j = translateScrapeOptions({ formats: ['json', 'screenshot@fullPage'], jsonOptions: { schema: { type: 'object', properties: {} } } }, v1);
    expect(j.native.extract_json).toEqual({ schema: { type: 'object', properties: {} } });
    expect(j.native.screenshot_options).toEqual({ full_page: true });
    const x = translateScrapeOptions({ formats: ['extract'], extract: { prompt: 'p' } }, v1);
    expect(x.formats.json).toBe('extract');
    expect(x.native.extract_json).toEqual({ schema: { type: 'object' }, prompt: 'p' });
    expect(translateScrapeOptions({ formats: ['extract'] }, env).issues[0]?.field).toBe('formats[0]');
  });

  it('warns about what it cannot honour, and never refuses it', () => {
    const t = translateScrapeOptions({
      formats: ['markdown', 'summary', 'branding'], mobile: true, proxy: 'stealth', skipTlsVerification: true, includeTags: ['p'], onlyMainContent: false,
      location: { country: 'DE' }, someFutureOption: { deep: true },
    }, env);
    expect(t.issues).toEqual([]);
    expect(t.warnings.join(' | ')).toMatch(/summary.*branding.*onlyMainContent.*includeTags.*mobile.*skipTlsVerification.*stealth.*location.country.*someFutureOption/);
  });

  it('without a browser: screenshot and waitFor become warnings; actions still go to the native scrape (which refuses them)', () => {
    const t = translateScrapeOptions({ formats: ['screenshot'], waitFor: 1000, actions: [{ type: 'wait', milliseconds: 5 }] }, { ...env, renders: false });
    expect(t.formats.screenshot).toBe(false);
    expect(t.native.screenshot).toBeUndefined();
    expect(t.native.wait_time).toBeUndefined();
    expect(t.native.actions).toEqual([{ type: 'wait', milliseconds: 5 }]);
    expect(t.native.render_js).toBe(true);
    expect(t.warnings).toHaveLength(2);
  });

  it('in a batch, json and changeTracking are warnings', () => {
    const t = translateScrapeOptions({ formats: ['markdown', { type: 'json', schema: {} }, 'changeTracking'] }, { ...env, single: false });
    expect(t.native.extract_json).toBeUndefined();
    expect(t.native.track_changes).toBeUndefined();
    expect(t.formats.json).toBeUndefined();
    expect(t.warnings).toHaveLength(2);
  });

  it.each([
    ['formats not an array', { formats: 'markdown' }, 'formats'],
    ['unknown format', { formats: ['pdfs'] }, 'formats[0]'],
    ['a format of nothing', { formats: [null] }, 'formats[0]'],
    ['json schema not an object', { formats: [{ type: 'json', schema: [] }] }, 'formats.json.schema'],
    ['headers not an object', { headers: ['a'] }, 'headers'],
    ['a header that is not a string', { headers: { a: 1 } }, 'headers.a'],
    ['timeout zero', { timeout: 0 }, 'timeout'],
    ['waitFor negative', { waitFor: -1 }, 'waitFor'],
    ['maxAge text', { maxAge: '1d' }, 'maxAge'],
    ['languages that are not tags', { location: { languages: ['en; q=1\r\nX: y'] } }, 'location.languages'],
    ['location not an object', { location: 'DE' }, 'location'],
  ])('refuses %s at Firecrawl\'s path', (_name, o, field) => {
    expect(translateScrapeOptions(o as Record<string, unknown>, env).issues.map((i) => i.field)).toContain(field);
  });

  it('keeps a header named __proto__ as a plain key', () => {
    const t = translateScrapeOptions(JSON.parse('{"headers":{"__proto__":"x"}}') as Record<string, unknown>, env);
    expect(Object.getPrototypeOf(t.native.custom_headers)).toBe(Object.prototype);
    expect(Object.keys(t.native.custom_headers as object)).toEqual(['__proto__']);
  });
});

describe('batch, crawl, map and search requests', () => {
  const env = { version: 2 as const, renders: true };

  it('a batch: urls, options and concurrency; ignoreInvalidURLs drops and lists what is not http(s)', () => {
    const t = translateBatch({ urls: ['http://a.example/', 'ftp://b.example/', 'not a url'], formats: ['markdown'], maxConcurrency: 3, ignoreInvalidURLs: true, origin: 'x' }, env);
    expect(t.issues).toEqual([]);
    expect(t.native).toEqual({ urls: ['http://a.example/'], extract_meta: true, markdown: true, async: true, concurrent_requests: 3 });
    expect(t.invalid).toEqual(['ftp://b.example/', 'not a url']);
  });

  it('a crawl: limits, paths as globs, robots, sitemap, webhook, scrapeOptions', () => {
    const t = translateCrawl({
      url: 'http://a.example/', limit: 50_000, maxDiscoveryDepth: 2, includePaths: ['^/blog/.*$', 'docs/.*'], excludePaths: ['(a|b)+'],
      sitemap: 'skip', ignoreRobotsTxt: true, webhook: { url: 'http://hooks.example/x' }, scrapeOptions: { formats: ['markdown', 'html'], waitFor: 500 }, allowExternalLinks: true,
    }, env);
    expect(t.issues).toEqual([]);
    expect(t.native).toEqual({
      url: 'http://a.example/', max_pages: 10_000, max_depth: 2, include_paths: ['/blog/**', '/docs/**'], use_sitemaps: false, respect_robots: false,
      callback_url: 'http://hooks.example/x', render_js: true,
    });
    expect(t.warnings.join(' | ')).toMatch(/\(a\|b\)\+.*allowExternalLinks.*webhook.*markdown and metadata only/);
  });

  it('v1 crawl reads maxDepth and ignoreSitemap', () => {
    expect(translateCrawl({ url: 'http://a.example/', maxDepth: 1, ignoreSitemap: true }, { version: 1, renders: true }).native).toEqual({ url: 'http://a.example/', max_depth: 1, use_sitemaps: false });
  });

  it.each([
    ['blog/.*', '/blog/**'],
    ['^/docs/.+$', '/docs/**'],
    ['/about$', '/about'],
    ['^/a/b\\.html$', '/a/b.html'],
    ['(x|y)', undefined],
    ['^[a-z]+$', undefined],
    ['.*', '/**'],
  ])('regex %s as glob %s', (re, glob) => {
    expect(regexToGlob(re)).toBe(glob);
  });

  it('map: v2 and v1 fields', () => {
    expect(translateMap({ url: 'http://a.example/', search: 'docs', limit: 99_999, includeSubdomains: false, sitemap: 'only', timeout: 100 }, 2).native)
      .toEqual({ url: 'http://a.example/', search: 'docs', limit: 10_000, include_subdomains: false, sitemap: 'only', timeout: 5 });
    expect(translateMap({ url: 'http://a.example/', ignoreSitemap: true, timeout: 30_000 }, 1).native).toEqual({ url: 'http://a.example/', sitemap: 'skip', timeout: 30 });
  });

  it('search: limit, news, tbs and scrapeOptions', () => {
    const t = translateSearch({ query: 'q', limit: 20, sources: [{ type: 'news' }], tbs: 'qdr:w', scrapeOptions: { formats: ['markdown'] } }, 2);
    expect(t.native).toEqual({ query: 'q', max_results: 20, result_type: 'news', time_range: 'week', auto_scrape_top: 10 });
    expect(t.news).toBe(true);
    expect(t.warnings.join(' | ')).toMatch(/top 10/);
    const v1 = translateSearch({ query: 'q', limit: 5, lang: 'en', country: 'us', timeout: 60_000, scrapeOptions: { formats: [] } }, 1);
    expect(v1.native).toEqual({ query: 'q', max_results: 5 });
    expect(v1.warnings).toEqual([]);
  });
});

describe('responses', () => {
  it('a batch id carries the formats and reads back', () => {
    const f = { ...NO_FORMATS, markdown: true, links: true, screenshot: true };
    const id = batchId(`bulk_${'a'.repeat(32)}`, f);
    expect(parseBatchId(id)).toEqual({ jobId: `bulk_${'a'.repeat(32)}`, formats: f });
    for (const bad of ['bulk_x-1', `bulk_${'a'.repeat(32)}`, `bulk_${'a'.repeat(32)}-zz`, `crawl_${'a'.repeat(32)}-1`]) expect(parseBatchId(bad)).toBeUndefined();
  });

  it.each([['queued', 'scraping'], ['running', 'scraping'], ['cancelling', 'scraping'], ['completed', 'completed'], ['stopped', 'completed'], ['cancelled', 'cancelled'], ['failed', 'failed']])('status %s is %s', (native, fc) => {
    expect(jobStatus(native)).toBe(fc);
  });

  it('a batch status: only successful items, next only in v2', () => {
    const job = { status: 'completed', created_at: '2026-01-01T00:00:00.000Z', credits_used: 8, progress: { total: 2, done: 2 }, results: [
      { url: 'http://a/', success: true, result: { url: 'http://a/', final_url: 'http://a/', status_code: 200, content: '<p>x</p>', markdown: 'x', meta_data: { title: 'A' } } },
      { url: 'http://b/', success: false, error: { code: 'TARGET_UNREACHABLE' } },
    ] };
    const v2 = batchStatus(job, { ...NO_FORMATS, markdown: true }, 2);
    expect(v2).toEqual({ success: true, status: 'completed', total: 2, completed: 2, creditsUsed: 8, expiresAt: '2026-01-02T00:00:00.000Z', next: null, data: [
      { markdown: 'x', metadata: { title: 'A', sourceURL: 'http://a/', url: 'http://a/', statusCode: 200, proxyUsed: 'basic' } },
    ] });
    expect('next' in batchStatus(job, NO_FORMATS, 1)).toBe(false);
  });

  it('errors: a batch\'s failed results, a crawl\'s failed items and robots skips', () => {
    expect(batchErrors({ results: [{ url: 'a', success: true, result: {} }, { url: 'b', success: false, error: { error: 'The target could not be reached', code: 'TARGET_UNREACHABLE' } }] }))
      .toEqual({ errors: [{ id: '1', url: 'b', error: 'The target could not be reached', code: 'TARGET_UNREACHABLE' }], robotsBlocked: [] });
    expect(crawlErrors([
      { idx: 0, url: 'a', status: 'completed', error: null },
      { idx: 1, url: 'b', status: 'failed', error: { code: 'TARGET_BUSY', error: 'The site answered 503' } },
      { idx: 2, url: 'c', status: 'skipped', error: null, reason: 'robots' },
      { idx: 3, url: 'd', status: 'skipped', error: null, reason: 'off_domain' },
    ])).toEqual({ errors: [{ id: '1', url: 'b', error: 'The site answered 503', code: 'TARGET_BUSY' }], robotsBlocked: ['c'] });
  });

  it('a document holds what its formats asked for, and the native warnings', () => {
    const doc = documentOf({ url: 'u', final_url: 'f', status_code: 200, content: '<html>', links: [{ url: 'l1' }, { url: 'l1' }, { url: 'l2' }], extracted_json: { a: 1 },
      warnings: [{ code: 'SCREENSHOT_NOT_STORED', message: 'disk full' }], meta_data: { title: 'T', open_graph: { image: ['i1', 'i2'] }, meta: { keywords: 'k' } } },
    { ...NO_FORMATS, html: true, links: true, json: 'json' }, 'req-1', 'mobile ignored');
    expect(doc).toEqual({ html: '<html>', links: ['l1', 'l2'], json: { a: 1 }, warning: 'mobile ignored; disk full',
      metadata: { title: 'T', keywords: 'k', ogImage: 'i1', sourceURL: 'u', url: 'f', statusCode: 200, scrapeId: 'req-1', proxyUsed: 'basic' } });
  });

  it('an error keeps the status, code, fields and headers, in Firecrawl\'s shape', () => {
    const bad = new FirecrawlFailure(new BadRequest({ message: 'm', validationErrors: [{ field: 'formats[2].schema', message: 'x' }] }));
    expect(bad.status).toBe(400);
    expect(bad.fields()).toEqual({ success: false, validation_errors: [{ field: 'formats[2].schema', message: 'x' }], details: [{ path: ['formats', '2', 'schema'], message: 'x' }] });
    const limited = new FirecrawlFailure(new RateLimited({ message: 'slow', retryAfter: 7, limit: 5, remaining: 0, reset: 1, upgradeUrl: 'u' }));
    expect(limited.status).toBe(429);
    expect(limited.headers()['retry-after']).toBe('7');
    expect(limited.fields()).toMatchObject({ success: false, retry_after: 7 });
  });
});
