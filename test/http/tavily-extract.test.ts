/**
 * POST /tavily/extract against a live Scour on both adapters: LangChain's
 * TavilyExtract and @tavily/core's extract pointed at it, reading a
 * loopback site (several URLs, one blocked, one the egress guard refuses;
 * Markdown and text; images), the error paths (bad key, invalid request,
 * no credits, rate limit), and hostile raw bodies as Tavily-shaped 400s.
 */
import { TavilyExtract } from '@langchain/tavily';
import { tavily } from '@tavily/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { ADAPTERS, type Running } from '../support/server.js';
import { account, expectTavilyError, remaining, startSeeded, startSite, type Acct, type Site } from '../support/tavily.js';

describe.each(ADAPTERS)('POST /tavily/extract over %s', (adapter) => {
  let site: Site;
  let s: Running;
  let base: string;
  let a: Acct;
  const post = (body: unknown, auth: string | null = `Bearer ${a.key}`) => call(`${base}/tavily/extract`, 'POST', { auth: auth ?? undefined, body });

  beforeAll(async () => {
    site = await startSite();
    s = await startSeeded(adapter, site);
    base = s.url;
    a = await account(base);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  describe('LangChain TavilyExtract (apiBaseUrl)', () => {
    const tool = (opts: ConstructorParameters<typeof TavilyExtract>[0] = {}) => new TavilyExtract({ tavilyApiKey: a.key, apiBaseUrl: `${base}/tavily`, ...opts });

    it('several URLs, one blocked and one refused by the guard: results and failed_results, only the read pages charged', async () => {
      const before = await remaining(base, a.key);
      const solarHits = site.hits('/solar');
      const out = await tool({ includeUsage: true }).invoke({ urls: [`${site.url}/solar`, `${site.url}/storage`, `${site.url}/blocked`, 'http://10.0.0.1/solar'] });
      expect(out.error, JSON.stringify(out)).toBeUndefined();
      expect(out.results.map((r: { url: string }) => r.url)).toEqual([`${site.url}/solar`, `${site.url}/storage`]);
      const solar = out.results[0];
      expect(solar.raw_content).toMatch(/^# Solar panel efficiency/m);
      expect(solar.raw_content).toMatch(/\| 2024 \| 24% \|/);
      expect(solar.raw_content).not.toMatch(/Copyright the example site/);
      expect(solar.images).toEqual([]);
      expect(out.failed_results).toEqual([
        { url: `${site.url}/blocked`, error: expect.stringMatching(/refused|blocked|403/i) },
        { url: 'http://10.0.0.1/solar', error: expect.stringMatching(/not allowed/i) },
      ]);
      expect(site.hits('/solar')).toBe(solarHits + 1);
      expect(typeof out.response_time).toBe('number');
      // 3 credits per page read (the bulk scrape's price); the two failures cost nothing.
      expect(out.usage).toEqual({ credits: 6 });
      expect(await remaining(base, a.key)).toBe(before - 6);
    });

    it('format text and include_images: the main content as text and the page\'s image URLs (+1 credit)', async () => {
      const out = await tool({ format: 'text', includeUsage: true }).invoke({ urls: [`${site.url}/solar`], includeImages: true });
      expect(out.error, JSON.stringify(out)).toBeUndefined();
      const r = out.results[0];
      expect(r.raw_content).toMatch(/reached 24 percent in 2024/);
      expect(r.raw_content).not.toMatch(/^#|\|/m);
      expect(r.images).toEqual([`${site.url}/img/panel.png`]);
      expect(out.usage).toEqual({ credits: 4 });
    });

    it('every URL failing is the tool\'s own "No extracted results" error', async () => {
      const out = await tool().invoke({ urls: [`${site.url}/blocked`] });
      expect(out.error).toMatch(/^No extracted results found for/);
    });

    it('a bad key: "Error 401: ..."', async () => {
      const out = await new TavilyExtract({ tavilyApiKey: 'tvly-wrong', apiBaseUrl: `${base}/tavily` }).invoke({ urls: [`${site.url}/solar`] });
      expect(out.error).toBe('Error 401: Invalid API key');
    });

    it('an invalid request (21 URLs): "Error 400: ..."', async () => {
      const out = await tool().invoke({ urls: Array.from({ length: 21 }, (_, i) => `${site.url}/solar?n=${i}`) });
      expect(out.error).toBe('Error 400: Invalid request: urls must have at most 20 items');
    });

    it('no credits: "Error 432: ...", nothing fetched', async () => {
      const poor = await account(base, 'unicorn', 2);
      const hits = site.hits('/wind');
      const out = await new TavilyExtract({ tavilyApiKey: poor.key, apiBaseUrl: `${base}/tavily` }).invoke({ urls: [`${site.url}/wind`] });
      expect(out.error).toMatch(/^Error 432: This request exceeds your plan's set usage limit/);
      expect(site.hits('/wind')).toBe(hits);
      expect(await remaining(base, poor.key)).toBe(2);
    });

    it('past the plan\'s rate limit: "Error 429: ..."', async () => {
      const free = await account(base, 'free', 100);
      const t = new TavilyExtract({ tavilyApiKey: free.key, apiBaseUrl: `${base}/tavily` });
      const answers: (string | undefined)[] = [];
      for (let i = 0; i < 6; i++) answers.push((await t.invoke({ urls: [`${site.url}/wind`] })).error);
      expect(answers.slice(0, 5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
      expect(answers[5]).toMatch(/^Error 429: Rate limit exceeded/);
    });
  });

  describe('@tavily/core (apiBaseURL)', () => {
    it('extract: results and failedResults in the client\'s camelCase', async () => {
      const client = tavily({ apiKey: a.key, apiBaseURL: `${base}/tavily` });
      const res = await client.extract([`${site.url}/storage`, `${site.url}/blocked`], { format: 'markdown', timeout: 20 });
      expect(res.results).toHaveLength(1);
      expect(res.results[0]!.url).toBe(`${site.url}/storage`);
      expect(res.results[0]!.rawContent).toMatch(/^# Battery storage for solar homes/m);
      expect(res.failedResults).toEqual([{ url: `${site.url}/blocked`, error: expect.stringMatching(/\S/) }]);
      expect(res.requestId).toMatch(/\S/);
    });

    it('errors are thrown with Tavily\'s message', async () => {
      await expect(tavily({ apiKey: 'tvly-wrong', apiBaseURL: `${base}/tavily` }).extract([`${site.url}/solar`])).rejects.toThrow(/^Invalid API key$/);
      await expect(tavily({ apiKey: a.key, apiBaseURL: `${base}/tavily` }).extract([`${site.url}/solar`], { extractDepth: 'deep' as 'basic' })).rejects.toThrow(/extract_depth must be one of/);
    });
  });

  describe('raw HTTP', () => {
    it.each([
      ['no urls', {}, /urls is required/],
      ['a number for urls', { urls: 5 }, /urls must be a string or a list of strings/],
      ['an empty list', { urls: [] }, /urls must name at least one URL/],
      ['a number among urls', { urls: ['http://a.example', 5] }, /urls\[1\] must be a string/],
      ['an empty URL', { urls: [''] }, /urls\[0\] must be 1 to 8192 characters/],
      ['a URL past 8192 characters', { urls: [`https://example.com/${'a'.repeat(9000)}`] }, /urls\[0\]/],
      ['21 URLs', { urls: Array.from({ length: 21 }, (_, i) => `https://example.com/${i}`) }, /urls must have at most 20 items/],
      ['10,000 URLs', { urls: Array.from({ length: 10_000 }, (_, i) => `https://example.com/${i}`) }, /urls must have at most 20 items/],
      ['extract_depth "deep"', { urls: ['https://example.com/'], extract_depth: 'deep' }, /extract_depth must be one of "basic", "advanced"/],
      ['format "html"', { urls: ['https://example.com/'], format: 'html' }, /format must be one of "markdown", "text"/],
      ['timeout 0', { urls: ['https://example.com/'], timeout: 0 }, /timeout must be between 1 and 60/],
      ['timeout as a string', { urls: ['https://example.com/'], timeout: '10' }, /timeout must be a number/],
      ['every URL refused by the guard', { urls: ['file:///etc/passwd', 'http://169.254.169.254/latest/meta-data/'] }, /not allowed/],
      ['an array for a body', [], /body must be a JSON object/],
      ['malformed JSON', '{"urls": [', /JSON/i],
    ])('%s: a Tavily-shaped 400', async (_name, body, message) => {
      const r = await post(body);
      expectTavilyError(r, 400, message);
      expect(r.headers.get('x-ratelimit-limit')).not.toBeNull();
    });

    it('one URL as a string, the key in the body, ignored options as warnings', async () => {
      const r = await post({ urls: `${site.url}/wind`, api_key: a.key, query: 'gearbox', include_favicon: true, chunks_per_source: 2 }, null);
      expect(r.status, r.text).toBe(200);
      expect(r.body.results).toHaveLength(1);
      expect(r.body.results[0].raw_content).toMatch(/gearboxes inspected twice a year/);
      expect(r.body.warnings.map((w: { message: string }) => w.message.split(' ')[0])).toEqual(['include_favicon', 'query', 'chunks_per_source']);
    });

    it('a body past the body limit is a Tavily-shaped 413', async () => {
      const r = await post({ urls: [`https://example.com/${'a'.repeat(2 * 1024 * 1024)}`] });
      expectTavilyError(r, 413, /limit/i);
    });

    it('no key and a bad body is a 401, not a 400', async () => {
      expectTavilyError(await post({ urls: 5 }, null), 401, /Missing API key/);
    });
  });
});
