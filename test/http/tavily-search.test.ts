/**
 * POST /tavily/search against a live Scour on both adapters: LangChain's
 * TavilySearch and @tavily/core's client pointed at it (happy paths:
 * answer, raw content, advanced content, domains, news and time filters;
 * error paths: bad key, invalid request, no credits, rate limit), then
 * raw HTTP: every hostile body a Tavily-shaped 400 after auth and rate
 * limiting, the key in the body, ignored options as warnings, credits
 * charged as the native search charges them.
 */
import { TavilySearch } from '@langchain/tavily';
import { tavily } from '@tavily/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { ADAPTERS, type Running } from '../support/server.js';
import { account, DAY, expectTavilyError, remaining, startSeeded, startSite, type Acct, type Site } from '../support/tavily.js';

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

describe.each(ADAPTERS)('POST /tavily/search over %s', (adapter) => {
  let site: Site;
  let s: Running;
  let base: string;
  let a: Acct;
  const post = (body: unknown, auth: string | null = `Bearer ${a.key}`) => call(`${base}/tavily/search`, 'POST', { auth: auth ?? undefined, body });

  beforeAll(async () => {
    // LangChain's wrapper logs the whole Response of every failure.
    vi.spyOn(console, 'log').mockImplementation(() => {});
    site = await startSite();
    s = await startSeeded(adapter, site);
    base = s.url;
    a = await account(base);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
    vi.restoreAllMocks();
  });

  describe('LangChain TavilySearch (apiBaseUrl)', () => {
    const tool = (opts: ConstructorParameters<typeof TavilySearch>[0] = {}) => new TavilySearch({ tavilyApiKey: a.key, apiBaseUrl: `${base}/tavily`, ...opts });

    it('answers in Tavily\'s shape with an extractive answer quoted from the results', async () => {
      const out = await tool({ maxResults: 5, includeAnswer: true }).invoke({ query: 'solar panel efficiency' });
      expect(out.error, JSON.stringify(out)).toBeUndefined();
      expect(out.query).toBe('solar panel efficiency');
      expect(out.images).toEqual([]);
      expect(out.follow_up_questions).toBeNull();
      expect(typeof out.response_time).toBe('number');
      expect(typeof out.request_id).toBe('string');
      expect(out.results.length).toBeGreaterThan(1);
      expect(out.results.length).toBeLessThanOrEqual(5);
      for (const r of out.results) {
        expect(Object.keys(r)).toEqual(expect.arrayContaining(['title', 'url', 'content', 'score', 'raw_content']));
        expect(r.raw_content).toBeNull();
        expect(r.score).toBeGreaterThan(0);
        expect(r.score).toBeLessThanOrEqual(1);
      }
      expect(out.results[0].score).toBe(1);
      expect(out.results.map((r: { url: string }) => r.url)).toContain(`${site.url}/solar`);
      // The answer is sentences of the results, verbatim: never written.
      expect(typeof out.answer).toBe('string');
      expect(out.answer).toMatch(/efficiency/i);
      const corpus = out.results.map((r: { content: string }) => collapse(r.content)).join('\n');
      for (const sentence of out.answer.split(/(?<=\.) (?=[A-Z])/)) expect(corpus).toContain(sentence);
      expect(out.answer).not.toMatch(/Wind|gearbox/);
    });

    it('include_raw_content and search_depth advanced read the pages: Markdown raw content, content from the page, charged 3 per page read', async () => {
      const before = await remaining(base, a.key);
      const out = await tool({ maxResults: 5, includeRawContent: 'markdown', includeUsage: true }).invoke({
        query: 'solar panels', searchDepth: 'advanced', includeDomains: ['127.0.0.1'],
      });
      expect(out.error, JSON.stringify(out)).toBeUndefined();
      const urls = out.results.map((r: { url: string }) => r.url);
      expect(urls.length).toBeGreaterThan(0);
      for (const u of urls) expect(u.startsWith(site.url)).toBe(true);
      const solar = out.results.find((r: { url: string }) => r.url === `${site.url}/solar`);
      expect(solar.raw_content).toMatch(/^# Solar panel efficiency/m);
      expect(solar.raw_content).toMatch(/\| 2024 \| 24% \|/);
      expect(solar.raw_content).not.toMatch(/Copyright the example site/);
      // Advanced content: the page's sentences holding the query's words, as they stand in it.
      expect(solar.content).toMatch(/24 percent in 2024/);
      for (const chunk of solar.content.split(' [...] ')) expect(collapse(solar.raw_content)).toContain(chunk.replace(/\.$/, ''));
      expect(site.hits('/solar')).toBeGreaterThan(0);
      // 1 for the search, 3 for each page read.
      expect(out.usage.credits).toBe(1 + 3 * urls.length);
      expect(await remaining(base, a.key)).toBe(before - out.usage.credits);
    });

    it('include_domains and exclude_domains restrict the results', async () => {
      const only = await tool({ includeDomains: ['example.org'] }).invoke({ query: 'solar panels' });
      expect(only.results.map((r: { url: string }) => r.url)).toEqual(['https://docs.example.org/solar-guide']);
      const without = await tool({ maxResults: 10 }).invoke({ query: 'solar panels', excludeDomains: ['example.com', '127.0.0.1'] });
      expect(without.results.map((r: { url: string }) => r.url)).toEqual(['https://docs.example.org/solar-guide']);
    });

    it('topic news with a time range: dated news and articles of the week only, with their dates', async () => {
      const out = await tool({ maxResults: 10 }).invoke({ query: 'solar', topic: 'news', timeRange: 'week' });
      expect(out.error, JSON.stringify(out)).toBeUndefined();
      const urls = out.results.map((r: { url: string }) => r.url);
      expect(urls).toEqual(expect.arrayContaining(['https://news.example.com/solar-record', `${site.url}/solar`]));
      expect(urls).not.toContain(`${site.url}/storage`); // 20 days old
      expect(urls).not.toContain('https://old.example.com/solar-history');
      expect(urls).not.toContain('https://docs.example.org/solar-guide'); // no date
      for (const r of out.results) expect(Date.now() - Date.parse(r.published_date)).toBeLessThan(7 * DAY + 60_000);
    });

    it('no results is the tool\'s own "No search results" error, not a failure of the server', async () => {
      const out = await tool().invoke({ query: 'xylophonist quokka' });
      expect(out.error).toMatch(/^No search results found for 'xylophonist quokka'/);
    });

    it('a bad key: the tool answers "Error 401: ..."', async () => {
      const out = await new TavilySearch({ tavilyApiKey: 'tvly-not-a-scour-key', apiBaseUrl: `${base}/tavily` }).invoke({ query: 'solar' });
      expect(out.error).toBe('Error 401: Invalid API key');
    });

    it('an invalid request: the tool answers "Error 400: ..." naming the field', async () => {
      const out = await tool({ maxResults: 50 }).invoke({ query: 'solar' });
      expect(out.error).toMatch(/^Error 400: Invalid request: max_results must be between 0 and 20$/);
    });

    it('an account without credits: "Error 432: ..." (Tavily\'s plan limit), nothing charged', async () => {
      const poor = await account(base, 'unicorn', 0);
      const out = await new TavilySearch({ tavilyApiKey: poor.key, apiBaseUrl: `${base}/tavily` }).invoke({ query: 'solar' });
      expect(out.error).toMatch(/^Error 432: This request exceeds your plan's set usage limit/);
      expect(await remaining(base, poor.key)).toBe(0);
    });

    it('past the plan\'s rate limit: "Error 429: ..."', async () => {
      const free = await account(base, 'free', 100);
      const t = new TavilySearch({ tavilyApiKey: free.key, apiBaseUrl: `${base}/tavily` });
      expect((await t.invoke({ query: 'solar' })).error).toBeUndefined();
      expect((await t.invoke({ query: 'solar' })).error).toMatch(/^Error 429: Rate limit exceeded/);
    });
  });

  describe('@tavily/core (apiBaseURL)', () => {
    it('search: results, answer and raw content in the client\'s camelCase', async () => {
      const client = tavily({ apiKey: a.key, apiBaseURL: `${base}/tavily` });
      const res = await client.search('solar panel efficiency', { includeAnswer: 'advanced', includeRawContent: 'text', maxResults: 3, days: 30, includeUsage: true });
      expect(res.query).toBe('solar panel efficiency');
      expect(res.results.length).toBeGreaterThan(0);
      expect(res.results.length).toBeLessThanOrEqual(3);
      for (const r of res.results) expect(Date.now() - Date.parse(r.publishedDate)).toBeLessThan(30 * DAY + 60_000);
      const solar = res.results.find((r) => r.url === `${site.url}/solar`)!;
      expect(solar.rawContent).toMatch(/reached 24 percent in 2024/);
      expect(solar.rawContent).not.toMatch(/^#/m);
      expect(res.answer).toMatch(/24 percent/);
      expect(res.images).toEqual([]);
      expect(typeof res.responseTime).toBe('number');
      expect(res.requestId).toMatch(/\S/);
      expect(res.usage).toEqual({ credits: 1 + 3 * res.results.filter((r) => r.rawContent !== null).length });
    });

    it('errors are thrown with Tavily\'s message: a bad key, a bad field, no credits', async () => {
      await expect(tavily({ apiKey: 'tvly-wrong', apiBaseURL: `${base}/tavily` }).search('solar')).rejects.toThrow(/^Invalid API key$/);
      await expect(tavily({ apiKey: a.key, apiBaseURL: `${base}/tavily` }).search('solar', { timeRange: 'decade' as 'year' })).rejects.toThrow(/time_range must be one of/);
      const poor = await account(base, 'unicorn', 0);
      await expect(tavily({ apiKey: poor.key, apiBaseURL: `${base}/tavily` }).search('solar')).rejects.toThrow(/exceeds your plan's set usage limit/);
    });
  });

  describe('raw HTTP', () => {
    it.each([
      ['no query', {}, /query is required/],
      ['a number for query', { query: 5 }, /query must be a string/],
      ['an empty query', { query: '   ' }, /query must not be empty/],
      ['a query past 400 characters', { query: 'solar '.repeat(80) }, /query must be at most 400 characters/],
      ['a query with nothing to search', { query: '!!! ???' }, /query/],
      ['max_results past 20', { query: 'solar', max_results: 21 }, /max_results must be between 0 and 20/],
      ['a huge max_results', { query: 'solar', max_results: 1e12 }, /max_results must be between 0 and 20/],
      ['a negative max_results', { query: 'solar', max_results: -1 }, /max_results/],
      ['max_results as a string', { query: 'solar', max_results: '5' }, /max_results must be an integer/],
      ['a fractional max_results', { query: 'solar', max_results: 2.5 }, /max_results must be an integer/],
      ['include_domains as a string', { query: 'solar', include_domains: 'example.com' }, /include_domains must be a list of strings/],
      ['a number among include_domains', { query: 'solar', include_domains: [1] }, /include_domains\[0\] must be a string/],
      ['something that is not a domain', { query: 'solar', include_domains: ['not a domain!'] }, /include_domains\[0\] must be a domain name/],
      ['too many exclude_domains', { query: 'solar', exclude_domains: Array.from({ length: 21 }, (_, i) => `d${i}.example.com`) }, /exclude_domains must have at most 20 items/],
      ['domains that do not fit a query', { query: 'solar', include_domains: Array.from({ length: 20 }, (_, i) => `${'a'.repeat(40)}${i}.example.com`) }, /longer than 500 characters/],
      ['include_answer "yes"', { query: 'solar', include_answer: 'yes' }, /include_answer must be true, false or one of "basic", "advanced"/],
      ['include_raw_content "html"', { query: 'solar', include_raw_content: 'html' }, /include_raw_content/],
      ['search_depth "deep"', { query: 'solar', search_depth: 'deep' }, /search_depth must be one of/],
      ['topic "sports"', { query: 'solar', topic: 'sports' }, /topic must be one of "general", "news", "finance"/],
      ['days 0', { query: 'solar', days: 0 }, /days must be between/],
      ['an impossible start_date', { query: 'solar', start_date: '2024-02-30' }, /start_date must be a date/],
      ['start_date after end_date', { query: 'solar', start_date: '2024-05-01', end_date: '2024-04-01' }, /start_date must not be after end_date/],
      ['chunks_per_source 9', { query: 'solar', chunks_per_source: 9 }, /chunks_per_source must be between 1 and 3/],
      ['an array for a body', [{ query: 'solar' }], /body must be a JSON object/],
      ['a string for a body', JSON.stringify('solar'), /body must be a JSON object/],
      ['malformed JSON', '{"query": "solar"', /JSON/i],
      ['every problem at once', { query: 7, max_results: 'x', topic: 1 }, /3 problems: query must be a string; topic must be one of .*; max_results must be an integer$/],
    ])('%s: a Tavily-shaped 400 with the rate-limit headers', async (_name, body, message) => {
      const r = await post(body);
      expectTavilyError(r, 400, message);
      expect(r.headers.get('x-ratelimit-limit')).not.toBeNull();
    });

    it('auth and rate limiting answer before the body is judged: no key and a bad body is a 401', async () => {
      expectTavilyError(await post({ max_results: 'x' }, null), 401, /Missing API key/);
      expectTavilyError(await post({ query: 'solar', api_key: 5 }, null), 401);
    });

    it('a 429 keeps Retry-After and the x-ratelimit-* headers', async () => {
      const free = await account(base, 'free', 100);
      expect((await post({ query: 'solar' }, `Bearer ${free.key}`)).status).toBe(200);
      const r = await post({ query: 'solar' }, `Bearer ${free.key}`);
      expectTavilyError(r, 429, /Rate limit exceeded/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(r.headers.get('x-ratelimit-limit')).toBe('1');
    });

    it('the key may come in the body (api_key) when no Authorization header is sent', async () => {
      const r = await post({ query: 'solar', api_key: a.key }, null);
      expect(r.status, r.text).toBe(200);
      expect(r.body.results.length).toBeGreaterThan(0);
      expectTavilyError(await post({ query: 'solar', api_key: 'tvly-wrong' }, null), 401, /Invalid API key/);
    });

    it('options Scour does not apply are ignored with a warning, never refused', async () => {
      const r = await post({
        query: 'solar', include_images: true, include_favicon: true, country: 'united states', auto_parameters: true, topic: 'finance',
        client_source: 'langchain-js', shiny_new_option: 1, search_depth: 'fast',
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.images).toEqual([]);
      const said = r.body.warnings.map((w: { code: string; message: string }) => `${w.code} ${w.message}`).join('\n');
      for (const f of ['include_images', 'include_favicon', 'country', 'auto_parameters', 'finance', '"shiny_new_option"', 'search_depth "fast"']) expect(said).toContain(f);
      expect(said).not.toContain('client_source');
    });

    it('null options are absent options (Python clients send None)', async () => {
      const r = await post({ query: 'solar', max_results: null, include_domains: null, topic: null, days: null });
      expect(r.status, r.text).toBe(200);
      expect(r.body).not.toHaveProperty('warnings');
    });

    it('max_results 0 answers no results; a plain search costs 1 credit, 2 past 10 results', async () => {
      const before = await remaining(base, a.key);
      const zero = await post({ query: 'solar', max_results: 0, include_usage: true });
      expect(zero.body.results).toEqual([]);
      expect(zero.body.usage).toEqual({ credits: 1 });
      const many = await post({ query: 'solar', max_results: 15, include_usage: true });
      expect(many.body.usage).toEqual({ credits: 2 });
      expect(await remaining(base, a.key)).toBe(before - 3);
    });

    it('an answer is only ever quoted statements: null, with a warning, when the results hold none', async () => {
      // The guide's only sentence with "solar" is an instruction ("Size solar panels by ..."), not a statement.
      const r = await post({ query: 'solar', include_domains: ['example.org'], include_answer: 'basic' });
      expect(r.status, r.text).toBe(200);
      expect(r.body.results.map((x: { url: string }) => x.url)).toEqual(['https://docs.example.org/solar-guide']);
      expect(r.body.answer).toBeNull();
      expect(r.body.warnings.map((w: { code: string }) => w.code)).toEqual(['NO_ANSWER']);
      const none = await post({ query: 'xylophonist quokka', include_answer: true });
      expect(none.body.results).toEqual([]);
      expect(none.body.answer).toBeNull();
      // Without include_answer there is no answer field at all.
      expect((await post({ query: 'solar' })).body).not.toHaveProperty('answer');
    });

    it('a body that is not JSON is a Tavily-shaped 415', async () => {
      const res = await fetch(`${base}/tavily/search`, { method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'text/plain' }, body: 'query=solar' });
      expectTavilyError({ status: res.status, headers: res.headers, body: await res.json() }, 415);
    });

    it('OpenAPI documents the routes with Tavily\'s error body; the native routes keep theirs', async () => {
      const doc = (await call(`${base}/v1/openapi.json`, 'GET')).body;
      for (const path of ['/tavily/search', '/tavily/extract']) {
        const responses = doc.paths[path].post.responses;
        for (const status of ['400', '401', '429', '432']) expect(responses[status].content['application/json'].schema.required).toEqual(['detail']);
      }
      expect(doc.paths['/v1/search'].post.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    });

    it('the native route keeps its own error body', async () => {
      expectErrorBody(await call(`${base}/v1/search`, 'POST', { auth: `Bearer ${a.key}`, body: { max_results: 99 } }), 400, 'MISSING_PARAMETER');
    });
  });
});
