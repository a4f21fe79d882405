/**
 * Firecrawl v1 compatibility (issue 30), with the 1.x client
 * (@mendable/firecrawl-js 1.29, installed as firecrawl-js-v1) pointed at a
 * real Scour at <server>/firecrawl, on both HTTP adapters: scrape with every
 * format (json through jsonOptions and a loopback model, screenshot@fullPage),
 * batch scrape to completion (the client polls it at /v1/crawl/{id}), crawl
 * to completion and cancel, map (links as strings), search with
 * scrapeOptions; the error paths as the client throws them, and v1's shapes
 * over raw HTTP.
 */
import FirecrawlApp from 'firecrawl-js-v1';
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

async function thrown(p: Promise<unknown>): Promise<{ statusCode?: number; message: string; details?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as { statusCode?: number; message: string; details?: unknown };
  }
  throw new Error('expected the client to throw');
}

type Doc = { markdown?: string; html?: string; rawHtml?: string; links?: string[]; screenshot?: string; json?: unknown; extract?: unknown; metadata?: Record<string, unknown>; warning?: string };

describe.each(ADAPTERS)('Firecrawl v1 client against Scour (%s)', (adapter) => {
  let s: Running;
  let key: string;
  const client = (apiKey = key) => new FirecrawlApp({ apiKey, apiUrl: `${s.url}/firecrawl` });

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

  it('runs v1 actions (a cookie wall\'s button, a script) before the page is read', async () => {
    const r = await client().scrapeUrl(`${actionsSite.url}/cookie-wall`, {
      formats: ['markdown'],
      actions: [{ type: 'click', selector: '#accept' }, { type: 'executeJavascript', script: 'return document.title' }],
    } as never) as Doc & { success: boolean; actions?: { javascriptReturns: { type: string; value: unknown }[] } };
    expect(r.success).toBe(true);
    expect(r.markdown).toContain('The secret recipe behind the cookie wall');
    expect(r.actions?.javascriptReturns).toEqual([{ type: 'string', value: expect.any(String) }]);
  }, 60_000);

  it('scrapes with markdown, html, rawHtml and links', async () => {
    const before = await fcBalance(s.url, key);
    const r = await client().scrapeUrl(`${site.url}/b`, { formats: ['markdown', 'html', 'rawHtml', 'links'] }) as Doc & { success: boolean };
    expect(r.success).toBe(true);
    expect(r.markdown).toContain('bobolink is a small New World blackbird');
    expect(r.html).toContain('<title>Bobolink notes</title>');
    expect(r.rawHtml).toBe(r.html);
    expect(r.links).toEqual(expect.arrayContaining([`${site.url}/a`, `${site.url}/c`]));
    expect(r.metadata).toMatchObject({ title: 'Bobolink notes', description: 'The bobolink page', sourceURL: `${site.url}/b`, statusCode: 200 });
    expect(before - (await fcBalance(s.url, key))).toBe(5);
  });

  it('takes a full-page screenshot (screenshot@fullPage)', async () => {
    const r = await client().scrapeUrl(`${site.url}/c`, { formats: ['screenshot@fullPage'] }) as Doc;
    expect(r.screenshot).toMatch(/\/v1\/screenshots\/[A-Za-z0-9_-]{32}\.png$/);
    expect((await fetch(r.screenshot!)).status).toBe(200);
  }, 60_000);

  it('answers json (jsonOptions) and extract (extract) through the model', async () => {
    const j = await client().scrapeUrl(`${site.url}/a`, { formats: ['json'], jsonOptions: { schema: JSON_SCHEMA as never, prompt: 'title and animal' } }) as Doc;
    expect(j.json).toEqual(MODEL_ANSWER);
    const x = await client().scrapeUrl(`${site.url}/a`, { formats: ['extract'], extract: { schema: JSON_SCHEMA } } as never) as Doc;
    expect(x.extract).toEqual(MODEL_ANSWER);
  });

  it('ignores what it cannot honour with a warning', async () => {
    const r = await client().scrapeUrl(`${site.url}/a`, { formats: ['markdown'], mobile: true, skipTlsVerification: true, proxy: 'stealth' } as never) as Doc & { warning?: string };
    expect(r.markdown).toContain('aardvark');
    for (const w of ['mobile', 'skipTlsVerification', 'stealth']) expect(r.warning).toContain(w);
  });

  it('batch-scrapes to completion (polled at /v1/crawl/{id}, as the client does)', async () => {
    const r = await client().batchScrapeUrls([`${site.url}/a`, `${site.url}/c`], { formats: ['markdown'] }, 1) as { success: boolean; status: string; completed: number; total: number; data: Doc[] };
    expect(r.status).toBe('completed');
    expect(r.total).toBe(2);
    expect(r.data.map((d) => d.metadata?.sourceURL).sort()).toEqual([`${site.url}/a`, `${site.url}/c`]);
    expect(r.data.find((d) => d.metadata?.sourceURL === `${site.url}/c`)?.markdown).toContain('caracal');
  }, 60_000);

  it('crawls to completion', async () => {
    const r = await client().crawlUrl(site.url, { limit: 4, maxDepth: 2 }, 1) as { success: boolean; status: string; completed: number; creditsUsed: number; data: Doc[] };
    expect(r.status).toBe('completed');
    expect(r.completed).toBe(4);
    expect(r.creditsUsed).toBe(12);
    expect(r.data.map((d) => d.metadata?.sourceURL).sort()).toEqual(Object.keys(PAGES).map((p) => `${site.url}${p}`).sort());
    expect(r.data.find((d) => d.metadata?.sourceURL === `${site.url}/a`)?.markdown).toContain('aardvark');
  }, 120_000);

  it('starts, checks and cancels a crawl', async () => {
    const c = client();
    const started = await c.asyncCrawlUrl(site.url, { limit: 4 }) as { success: boolean; id: string; url: string };
    expect(started.success).toBe(true);
    expect(started.url).toBe(`${s.url}/firecrawl/v1/crawl/${started.id}`);
    const status = await c.checkCrawlStatus(started.id) as { success: boolean; status: string };
    expect(status.success).toBe(true);
    const cancelled = await c.cancelCrawl(started.id) as unknown as { success: boolean; status: string };
    expect(cancelled).toMatchObject({ success: true, status: 'cancelled' });
  });

  it('maps a site: links as strings', async () => {
    const r = await client().mapUrl(site.url, { limit: 10 }) as { success: boolean; links: string[] };
    expect(r.success).toBe(true);
    expect(r.links).toEqual(expect.arrayContaining([`${site.url}/a`, `${site.url}/b`, `${site.url}/c`]));
  });

  it('searches with scrapeOptions: results as documents', async () => {
    const r = await client().search('aardvark termites', { limit: 2, scrapeOptions: { formats: ['markdown'] } }) as { success: boolean; data: Doc[] & { url: string }[] };
    expect(r.success).toBe(true);
    const top = r.data[0] as Doc & { url: string; title: string; description: string };
    expect(top.url).toBe(`${site.url}/a`);
    expect(top.markdown).toContain('eats ants and termites');
    const plain = await client().search('caracal', { limit: 1 }) as { data: (Doc & { url: string })[] };
    expect(plain.data[0]!.url).toBe(`${site.url}/c`);
    expect(plain.data[0]!.markdown).toBeUndefined();
  });

  it('a bad key: 401', async () => {
    const e = await thrown(client('sk_live_not_a_real_key_0000000000000000').scrapeUrl(`${site.url}/a`));
    expect(e.statusCode).toBe(401);
  });

  it('an invalid request: 400 with details', async () => {
    const e = await thrown(client().scrapeUrl(`${site.url}/a`, { formats: ['markdown'], timeout: -1 } as never));
    expect(e.statusCode).toBe(400);
    expect(e.details).toEqual([{ path: ['timeout'], message: 'must be a positive number of milliseconds' }]);
  });

  it('out of credits: 402', async () => {
    const poor = await fcAccount(s.url, 'unicorn', 1);
    const e = await thrown(client(poor.key).scrapeUrl(`${site.url}/a`));
    expect(e.statusCode).toBe(402);
  });

  it('rate limited: 429', async () => {
    const free = await fcAccount(s.url, 'free', 100);
    for (let n = 0; n < 5; n++) expect((await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${free.key}`, body: {} })).status).toBe(400);
    const e = await thrown(client(free.key).scrapeUrl(`${site.url}/a`));
    expect(e.statusCode).toBe(429);
    const raw = await call(`${s.url}/firecrawl/v1/crawl`, 'POST', { auth: `Bearer ${free.key}`, body: { url: site.url } });
    expect(raw.status).toBeLessThan(500);
  });

  const hostile: [string, string, string, unknown][] = [
    ['scrape: no url', 'POST', '/v1/scrape', { formats: ['markdown'] }],
    ['scrape: v2-only format object under v1 with bad schema', 'POST', '/v1/scrape', { url: 'http://127.0.0.1/', formats: ['json'], jsonOptions: { schema: [] } }],
    ['scrape: cookie header to a refused host', 'POST', '/v1/scrape', { url: 'http://192.168.1.1/', headers: { Cookie: 'a=b' } }],
    ['batch: not an array', 'POST', '/v1/batch/scrape', { urls: 'http://127.0.0.1/' }],
    ['crawl: no url', 'POST', '/v1/crawl', { limit: 3 }],
    ['crawl status: bulk-looking garbage', 'GET', '/v1/crawl/bulk_zzz', undefined],
    ['map: search not a string', 'POST', '/v1/map', { url: 'http://127.0.0.1/', search: { $ne: 1 } }],
    ['search: limit not a number', 'POST', '/v1/search', { query: 'x', limit: 'many' }],
  ];
  it.each(hostile)('%s', async (_name, method, path, body) => {
    const r = await call(`${s.url}/firecrawl${path}`, method, { auth: `Bearer ${key}`, body });
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.status, r.text).toBeLessThan(500);
    expect(r.body.success).toBe(false);
    expect(typeof r.body.error).toBe('string');
  });
});
