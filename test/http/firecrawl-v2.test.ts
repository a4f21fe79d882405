/**
 * Firecrawl v2 compatibility (issue 30), with the official client
 * (@mendable/firecrawl-js 4.x, whose default export speaks v2) pointed at a
 * real Scour at <server>/firecrawl, on both HTTP adapters: scrape with every
 * format (json through a loopback model), options Scour ignores (a warning,
 * never a 500), batch scrape and crawl to completion, crawl cancel, map,
 * search with scrapeOptions over the local index; the error paths as the
 * client throws them (401, 400, 402, 429 with Retry-After, a refused target),
 * and hostile bodies over raw HTTP.
 */
import Firecrawl from '@mendable/firecrawl-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { ADAPTERS, startScour, type Running } from '../support/server.js';
import { startActionsSite, type ActionsSite } from '../support/actions-site.js';
import { FC_ADMIN, fcAccount, fcBalance, JSON_SCHEMA, MODEL_ANSWER, PAGES, seedIndex, startFirecrawlSite, startModel, type FcSite } from '../support/firecrawl-site.js';

let site: FcSite;
let actionsSite: ActionsSite;
let model: Awaited<ReturnType<typeof startModel>>;

beforeAll(async () => {
  site = await startFirecrawlSite();
  actionsSite = await startActionsSite();
  model = await startModel();
});
afterAll(async () => {
  await site?.close();
  await actionsSite?.close();
  await model?.close();
});

/** What the client throws, for the assertions on it. */
async function thrown(p: Promise<unknown>): Promise<{ status?: number; message: string; code?: string; details?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as { status?: number; message: string; code?: string; details?: unknown };
  }
  throw new Error('expected the client to throw');
}

describe.each(ADAPTERS)('Firecrawl v2 client against Scour (%s)', (adapter) => {
  let s: Running;
  let key: string;
  const client = (apiKey = key) => new Firecrawl({ apiKey, apiUrl: `${s.url}/firecrawl`, maxRetries: 1 });

  beforeAll(async () => {
    s = await startScour(adapter, {
      adminToken: FC_ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'],
      llm: { baseUrl: model.base, model: 'test-model', apiKey: 'sk-test-fc', timeoutMs: 10_000, maxTokens: 1_000, jsonMode: true },
    });
    key = (await fcAccount(s.url)).key;
    await seedIndex(s.url, site.url);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('scrapes with markdown, html, rawHtml, links and images, metadata in Firecrawl\'s names, charged as the native scrape', async () => {
    const before = await fcBalance(s.url, key);
    const doc = await client().scrape(`${site.url}/a`, { formats: ['markdown', 'html', 'rawHtml', 'links', 'images'] });
    expect(doc.markdown).toContain('aardvark is a nocturnal burrowing mammal');
    expect(doc.html).toContain('<title>Aardvark facts</title>');
    expect(doc.rawHtml).toBe(doc.html);
    expect(doc.links).toEqual(expect.arrayContaining([`${site.url}/b`, `${site.url}/c`]));
    expect(doc.images).toEqual([`${site.url}/img/aardvark-facts.png`]);
    expect(doc.metadata).toMatchObject({ title: 'Aardvark facts', description: 'The aardvark page', language: 'en', sourceURL: `${site.url}/a`, statusCode: 200 });
    expect(doc.warning).toBeUndefined();
    // The native price: 3 + links 1 + images 1 + meta 1.
    expect(doc.metadata?.creditsUsed).toBe(6);
    expect(before - (await fcBalance(s.url, key))).toBe(6);
  });

  it('defaults to markdown only', async () => {
    const doc = await client().scrape(`${site.url}/b`);
    expect(doc.markdown).toContain('bobolink');
    expect(doc.html).toBeUndefined();
    expect(doc.links).toBeUndefined();
  });

  it('takes a screenshot (full page) in the browser and answers its URL', async () => {
    const doc = await client().scrape(`${site.url}/c`, { formats: ['markdown', { type: 'screenshot', fullPage: true }] });
    expect(doc.screenshot).toMatch(/\/v1\/screenshots\/[A-Za-z0-9_-]{32}\.png$/);
    const img = await fetch(doc.screenshot!);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(doc.markdown).toContain('caracal');
  }, 60_000);

  it('runs Firecrawl actions through the native ones: load more, a click then write into the focus, a script\'s value, a screenshot', async () => {
    const before = await fcBalance(s.url, key);
    const more = await client().scrape(`${actionsSite.url}/load-more`, {
      formats: ['markdown'],
      actions: [{ type: 'click', selector: '#more' }, { type: 'click', selector: '#more' }, { type: 'executeJavascript', script: 'return document.querySelectorAll("li").length' }, { type: 'screenshot' }],
    });
    expect(more.markdown).toContain('Item 9: a teapot of the page 3 collection');
    const acts = more.actions as { screenshots: string[]; javascriptReturns: { type: string; value: unknown }[] };
    expect(acts.javascriptReturns).toEqual([{ type: 'number', value: 9 }]);
    expect(acts.screenshots).toHaveLength(1);
    const img = await fetch(acts.screenshots[0]!);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    // 3 + 1 metadata + 5 rendered + 1 actions + 3 the screenshot action.
    expect(more.metadata?.creditsUsed).toBe(13);
    expect(await fcBalance(s.url, key)).toBe(before - 13);

    const form = await client().scrape(`${actionsSite.url}/form`, {
      formats: ['markdown'],
      actions: [{ type: 'click', selector: '#q' }, { type: 'write', text: 'beacon' }, { type: 'press', key: 'Enter' }, { type: 'wait', milliseconds: 100 }],
    });
    expect(form.markdown).toContain('Three archived letters mention beacon.');
    expect(form.actions).toBeDefined();
  }, 90_000);

  it('answers json with a schema through the configured model', async () => {
    const asked = model.asked();
    const doc = await client().scrape(`${site.url}/a`, { formats: [{ type: 'json', schema: JSON_SCHEMA, prompt: 'The page title and animal.' }] });
    expect(doc.json).toEqual(MODEL_ANSWER);
    expect(model.asked()).toBe(asked + 1);
  });

  it('ignores options it cannot honour with a warning, and honours location.languages as Accept-Language', async () => {
    const doc = await client().scrape(`${site.url}/a`, {
      formats: ['markdown', 'summary'], mobile: true, proxy: 'stealth', location: { country: 'DE', languages: ['de-DE'] },
      includeTags: ['article'], onlyMainContent: false, blockAds: true,
    });
    expect(doc.markdown).toContain('aardvark');
    for (const w of ['summary', 'mobile', 'stealth', 'location.country', 'includeTags', 'onlyMainContent']) expect(doc.warning).toContain(w);
  });

  it('batch-scrapes to completion', async () => {
    const job = await client().batchScrape([`${site.url}/a`, `${site.url}/b`, `${site.url}/c`], { options: { formats: ['markdown', 'links'] }, pollInterval: 1, timeout: 60 });
    expect(job.status).toBe('completed');
    expect(job.total).toBe(3);
    expect(job.completed).toBe(3);
    expect(job.creditsUsed).toBe(15);
    const bySource = new Map(job.data.map((d) => [d.metadata?.sourceURL, d]));
    expect(bySource.get(`${site.url}/b`)?.markdown).toContain('bobolink');
    expect(bySource.get(`${site.url}/c`)?.links).toContain(`${site.url}/a`);
    expect(bySource.get(`${site.url}/a`)?.metadata?.title).toBe('Aardvark facts');
  }, 60_000);

  it('a batch\'s failed URLs: in its errors, not in its data', async () => {
    const c = client();
    const job = await c.batchScrape([`${site.url}/a`, 'http://127.0.0.1:1/down'], { options: { formats: ['markdown'] }, pollInterval: 1, timeout: 60 });
    expect(job.status).toBe('completed');
    expect(job.data.map((d) => d.metadata?.sourceURL)).toEqual([`${site.url}/a`]);
    const errors = await c.getBatchScrapeErrors(job.id);
    expect(errors.errors).toEqual([expect.objectContaining({ url: 'http://127.0.0.1:1/down', code: 'TARGET_UNREACHABLE' })]);
    expect(errors.robotsBlocked).toEqual([]);
  }, 60_000);

  it('crawls to completion, with each page\'s markdown and metadata', async () => {
    const job = await client().crawl(site.url, { limit: 4, pollInterval: 1, timeout: 90 });
    expect(job.status).toBe('completed');
    expect(job.completed).toBe(4);
    expect(job.creditsUsed).toBe(12);
    const urls = job.data.map((d) => d.metadata?.sourceURL).sort();
    expect(urls).toEqual(Object.keys(PAGES).map((p) => `${site.url}${p}`).sort());
    const b = job.data.find((d) => d.metadata?.sourceURL === `${site.url}/b`)!;
    expect(b.markdown).toContain('bobolink');
    expect(b.metadata?.title).toBe('Bobolink notes');
    expect(await client().getCrawlErrors(job.id)).toEqual({ errors: [], robotsBlocked: [] });
  }, 120_000);

  it('crawls with excludePaths read as globs, and warns about the ones it cannot read', async () => {
    const c = client();
    const started = await c.startCrawl(site.url, { limit: 4, excludePaths: ['^/b$', 'c.*', '(x|y)'] });
    let job = await c.getCrawlStatus(started.id);
    for (let n = 0; n < 60 && job.status === 'scraping'; n++) {
      await new Promise((r) => setTimeout(r, 500));
      job = await c.getCrawlStatus(started.id);
    }
    expect(job.status).toBe('completed');
    expect(job.data.map((d) => d.metadata?.sourceURL).sort()).toEqual([`${site.url}/`, `${site.url}/a`]);
    const raw = await call(`${s.url}/firecrawl/v2/crawl`, 'POST', { auth: `Bearer ${key}`, body: { url: `${site.url}/nowhere`, limit: 1, excludePaths: ['(x|y)'] } });
    expect(raw.status).toBe(200);
    expect(raw.body.warning).toContain('"(x|y)" has no path glob equivalent');
  }, 60_000);

  it('starts and cancels a crawl', async () => {
    const c = client();
    const started = await c.startCrawl(site.url, { limit: 4 });
    expect(started.url).toBe(`${s.url}/firecrawl/v2/crawl/${started.id}`);
    expect(await c.cancelCrawl(started.id)).toBe(true);
    const status = await c.getCrawlStatus(started.id);
    expect(['cancelled', 'scraping', 'completed']).toContain(status.status);
  });

  it('maps a site', async () => {
    const m = await client().map(site.url, { limit: 10 });
    expect(m.links.map((l) => l.url)).toEqual(expect.arrayContaining([`${site.url}/a`, `${site.url}/b`, `${site.url}/c`]));
    expect(m.links.find((l) => l.url === `${site.url}/a`)?.title).toBe('A');
  });

  it('searches the index and scrapes the top results with scrapeOptions', async () => {
    const r = await client().search('bobolink blackbird', { limit: 2, scrapeOptions: { formats: ['markdown'] } });
    const top = r.web![0] as { url: string; title: string; description: string; markdown?: string; metadata?: { sourceURL?: string } };
    expect(top.url).toBe(`${site.url}/b`);
    expect(top.title).toBe('Bobolink notes');
    expect(top.markdown).toContain('migrates very long distances');
    expect(top.metadata?.sourceURL).toBe(`${site.url}/b`);
    const plain = await client().search('caracal', { limit: 1 });
    expect((plain.web![0] as { url: string; markdown?: string }).markdown).toBeUndefined();
  });

  // ---------------------------------------------------------------------------
  // Errors as the client throws them

  it('a bad key: 401', async () => {
    const e = await thrown(client('sk_live_not_a_real_key_0000000000000000').scrape(`${site.url}/a`));
    expect(e.status).toBe(401);
  });

  it('an invalid request: 400 in Firecrawl\'s shape, with details', async () => {
    const e = await thrown(client().scrape(`${site.url}/a`, { formats: ['nonsense' as 'markdown'] }));
    expect(e.status).toBe(400);
    expect(e.details).toEqual([{ path: ['formats', '0'], message: 'unknown format "nonsense"' }]);
  });

  it('a refused target: the native guard\'s 400', async () => {
    const e = await thrown(client().scrape('http://169.254.169.254/latest/meta-data/'));
    expect(e.status).toBe(400);
    expect(e.code).toBe('TARGET_NOT_ALLOWED');
  });

  it('out of credits: 402', async () => {
    const poor = await fcAccount(s.url, 'unicorn', 1);
    const e = await thrown(client(poor.key).scrape(`${site.url}/a`));
    expect(e.status).toBe(402);
    expect(e.code).toBe('NO_CREDITS');
  });

  it('rate limited: 429 with Retry-After and the x-ratelimit headers, shared with the native scrape', async () => {
    const free = await fcAccount(s.url, 'free', 100);
    // The free plan allows 5 scrapes a minute: native and Firecrawl requests count together.
    for (let n = 0; n < 5; n++) {
      const r = await call(`${s.url}/firecrawl/v2/scrape`, 'POST', { auth: `Bearer ${free.key}`, body: n % 2 === 0 ? { url: 42 } : { formats: 'x' } });
      expect(r.status).toBe(400);
      expect(r.headers.get('x-ratelimit-limit')).toBe('5');
    }
    const e = await thrown(client(free.key).scrape(`${site.url}/a`));
    expect(e.status).toBe(429);
    const raw = await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${free.key}`, body: { url: `${site.url}/a` } });
    expect(raw.status).toBe(429);
    const fc = await call(`${s.url}/firecrawl/v2/scrape`, 'POST', { auth: `Bearer ${free.key}`, body: { url: `${site.url}/a` } });
    expect(fc.status).toBe(429);
    expect(Number(fc.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fc.body).toMatchObject({ success: false, code: 'RATE_LIMITED' });
    expect(typeof fc.body.error).toBe('string');
  });

  // ---------------------------------------------------------------------------
  // Hostile inputs over raw HTTP: 4xx in Firecrawl's shape, never a 500

  const hostile: [string, string, string, unknown][] = [
    ['scrape: array body', 'POST', '/v2/scrape', []],
    ['scrape: string body', 'POST', '/v2/scrape', 'just text'],
    ['scrape: no url', 'POST', '/v2/scrape', {}],
    ['scrape: formats of objects without type', 'POST', '/v2/scrape', { url: 'http://127.0.0.1/', formats: [{}, null, 7] }],
    ['scrape: too many formats', 'POST', '/v2/scrape', { url: 'http://127.0.0.1/', formats: Array(1000).fill('markdown') }],
    ['scrape: malformed actions', 'POST', '/v2/scrape', { url: 'http://127.0.0.1/', actions: [{ type: 'click' }, 'x', { type: 'wait', milliseconds: -1 }] }],
    ['scrape: header with CRLF', 'POST', '/v2/scrape', { url: 'http://127.0.0.1/', headers: { 'X-A': 'b\r\nHost: evil' } }],
    ['scrape: Host header', 'POST', '/v2/scrape', { url: 'http://127.0.0.1/', headers: { Host: 'evil.example' } }],
    ['scrape: json schema not an object', 'POST', '/v2/scrape', { url: 'http://127.0.0.1/', formats: [{ type: 'json', schema: 'x' }] }],
    ['scrape: __proto__ keys', 'POST', '/v2/scrape', JSON.parse('{"url":"http://10.0.0.1/","__proto__":{"x":1},"headers":{"__proto__":"y"},"location":{"__proto__":{"languages":["en"]}}}')],
    ['scrape: timeout not a number', 'POST', '/v2/scrape', { url: 'http://127.0.0.1/', timeout: 'soon', waitFor: -5, maxAge: 'x' }],
    ['scrape: file URL', 'POST', '/v2/scrape', { url: 'file:///etc/passwd' }],
    ['batch: no urls', 'POST', '/v2/batch/scrape', { urls: [] }],
    ['batch: urls of numbers', 'POST', '/v2/batch/scrape', { urls: [1, 2] }],
    ['batch: a private target', 'POST', '/v2/batch/scrape', { urls: ['http://10.0.0.1/'] }],
    ['batch status: not an id', 'GET', '/v2/batch/scrape/..%2F..%2Fetc', undefined],
    ['batch status: someone else\'s shape', 'GET', '/v2/batch/scrape/bulk_00000000000000000000000000000000-1', undefined],
    ['crawl: limit negative', 'POST', '/v2/crawl', { url: 'http://127.0.0.1/', limit: -3, includePaths: 'x' }],
    ['crawl: webhook to a private host', 'POST', '/v2/crawl', { url: 'http://127.0.0.1/', webhook: 'http://10.1.2.3/hook' }],
    ['crawl status: unknown', 'GET', '/v2/crawl/crawl_00000000000000000000000000000000', undefined],
    ['crawl errors: unknown', 'GET', '/v2/crawl/crawl_00000000000000000000000000000000/errors', undefined],
    ['batch errors: not an id', 'GET', '/v2/batch/scrape/nope/errors', undefined],
    ['crawl cancel: garbage id', 'DELETE', '/v2/crawl/%00%ff', undefined],
    ['map: no url', 'POST', '/v2/map', { limit: 'all' }],
    ['search: no query', 'POST', '/v2/search', { limit: 5, sources: [{}] }],
    ['search: scrapeOptions not an object', 'POST', '/v2/search', { query: 'x', scrapeOptions: [] }],
  ];
  it.each(hostile)('%s', async (_name, method, path, body) => {
    const r = await call(`${s.url}/firecrawl${path}`, method, { auth: `Bearer ${key}`, body });
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.status, r.text).toBeLessThan(500);
    expect(r.body.success).toBe(false);
    expect(typeof r.body.error).toBe('string');
  });

  /**
   * Seeded random bodies of Firecrawl's field names with values of every
   * type (targets only refused ones, or the loopback site's), to each POST
   * endpoint of v1 and v2: never a 5xx, and a failure is in Firecrawl's shape.
   */
  it('random bodies to every POST endpoint: never a 5xx', async () => {
    let seed = 0x5eed;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const urls = ['http://10.0.0.1/', 'file:///etc/passwd', '', 'not a url', 'http://[::1', 'javascript:alert(1)', `${site.url}/a`];
    const scalars = [null, true, false, 0, -1, 1.5, 1e308, 'x', '', 'a'.repeat(10_000), '\u0000\ud800', '__proto__'];
    const value = (depth: number): unknown => {
      const r = rnd();
      if (depth > 2 || r < 0.5) return pick(scalars);
      if (r < 0.75) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, () => [pick(['type', 'url', 'schema', 'selector', 'milliseconds', 'fullPage', 'languages', 'country', 'x']), value(depth + 1)]));
    };
    const fields = ['formats', 'headers', 'waitFor', 'timeout', 'actions', 'location', 'maxAge', 'proxy', 'mobile', 'onlyMainContent', 'includeTags', 'jsonOptions',
      'limit', 'maxDiscoveryDepth', 'maxDepth', 'includePaths', 'excludePaths', 'sitemap', 'webhook', 'scrapeOptions', 'search', 'includeSubdomains', 'sources', 'tbs', 'maxConcurrency', 'ignoreInvalidURLs'];
    const formats = ['markdown', 'html', 'rawHtml', 'links', 'images', 'json', 'summary', { type: 'json', schema: { type: 'object' } }, { type: 'nope' }];
    for (const v of ['v1', 'v2']) {
      for (const ep of ['scrape', 'batch/scrape', 'crawl', 'map', 'search']) {
        for (let n = 0; n < 12; n++) {
          const body: Record<string, unknown> = {};
          if (ep === 'search') body.query = pick(['bobolink', '', 5, 'site:', 'a'.repeat(600)]);
          else if (ep === 'batch/scrape') body.urls = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(urls.slice(0, -1)));
          else body.url = pick(ep === 'crawl' ? urls.slice(0, -1) : urls);
          for (let k = Math.floor(rnd() * 5); k > 0; k--) {
            const f = pick(fields);
            body[f] = f === 'formats' && rnd() < 0.7 ? Array.from({ length: Math.floor(rnd() * 3) }, () => pick(formats)) : value(0);
          }
          const r = await call(`${s.url}/firecrawl/${v}/${ep}`, 'POST', { auth: `Bearer ${key}`, body });
          expect(r.status, `${v}/${ep} ${JSON.stringify(body).slice(0, 300)} -> ${r.text.slice(0, 300)}`).toBeLessThan(500);
          if (r.status >= 400) expect(r.body.success, r.text).toBe(false);
          else expect(r.body.success, r.text).toBe(true);
        }
      }
    }
  }, 120_000);

  it('malformed JSON: 400 in Firecrawl\'s shape, after auth', async () => {
    const bad = await fetch(`${s.url}/firecrawl/v2/scrape`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: '{"url": ' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ success: false });
    const noKey = await fetch(`${s.url}/firecrawl/v2/scrape`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url": ' });
    expect(noKey.status).toBe(401);
  });
});
