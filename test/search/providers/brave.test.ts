/**
 * The brave provider against a Brave Search API stand-in on loopback
 * (test/support/standins/brave.ts), through the real Egress: what it sends
 * (parameters, header, the query in Brave's syntax), what Brave applies, the
 * mapping of web and news results, paging, each failure and abort.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import { parseQuery, ProviderRateLimited, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import {
  brave429, braveQuery, braveSearchLang, createBraveProvider, DEFAULT_BASE_URL, MAX_PAUSE_MS,
} from '../../../plugins/search-providers/brave/index.js';
import { ProviderError } from '../../../plugins/sdk/provider.js';
import { BRAVE_KEY, startBrave, type BraveItem, type BraveStandin } from '../../support/standins/brave.js';
import { NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let sv: BraveStandin;
beforeAll(async () => { sv = await startBrave(); });
afterAll(async () => { await sv.close(); });
beforeEach(() => sv.reset());

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, NOW);

const provider = (over: { key?: string; baseUrl?: string } = {}) =>
  createBraveProvider({ egress: nodeEgress, baseUrl: over.baseUrl ?? sv.url, key: over.key ?? BRAVE_KEY, timeoutMs: 5000 });

const corpus = (n: number, from = 1, extra: Partial<BraveItem> = {}): BraveItem[] =>
  Array.from({ length: n }, (_, k) => ({
    url: `https://site${from + k}.example/page`, title: `Result ${from + k}`, description: `About <strong>rust</strong> ${from + k}.`, ...extra,
  }));

describe('the plugin', () => {
  it('is search-provider-brave with its endpoint, general kinds and what it applies on every request', () => {
    const p = provider();
    expect(p).toMatchObject({ name: 'search-provider-brave', id: 'brave', kind: 'search-provider', endpoint: sv.url });
    expect(p.kinds).toBeUndefined();
    expect([...p.applies!].sort()).toEqual(['result_type', 'safe_search']);
    expect(createBraveProvider({ egress: nodeEgress, key: 'k' }).endpoint).toBe(DEFAULT_BASE_URL);
  });

  it('refuses to start without a key or with a bad base URL', () => {
    expect(() => createBraveProvider({ egress: nodeEgress })).toThrow(/SCOUR_PROVIDER_BRAVE_KEY is required/);
    expect(() => createBraveProvider({ egress: nodeEgress, key: '  ' })).toThrow(/SCOUR_PROVIDER_BRAVE_KEY/);
    expect(() => createBraveProvider({ egress: nodeEgress, key: 'k', baseUrl: 'ftp://x' })).toThrow(/http or https/);
    expect(() => createBraveProvider({ egress: nodeEgress, key: 'k', baseUrl: 'http://x/?a=1' })).toThrow(/query or fragment/);
  });
});

describe('what it sends', () => {
  it('asks GET /res/v1/web/search with the key in X-Subscription-Token, never in the URL', async () => {
    sv.setWeb(corpus(3));
    const res = await provider().search(request('rust async', { limit: 7 }));
    expect(res.results).toHaveLength(3);
    const [s] = sv.searches();
    expect(s!.method).toBe('GET');
    expect(s!.path).toBe('/res/v1/web/search');
    expect(s!.params).toEqual({ q: 'rust async', count: '7', offset: '0', country: 'ALL', safesearch: 'off', result_filter: 'web,query' });
    expect(s!.headers['x-subscription-token']).toBe(BRAVE_KEY);
    expect(s!.headers.accept).toContain('application/json');
    expect(s!.headers['accept-encoding']).toMatch(/gzip/);
    expect(s!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(s!.params)).not.toContain(BRAVE_KEY);
  });

  it('writes the query in Brave operator syntax, and claims site and excluded when Brave reports the operators applied', async () => {
    sv.setWeb(corpus(2));
    const res = await provider().search(request('"exact phrase" rust -java -"bad words" site:example.org'));
    const [s] = sv.searches();
    expect(s!.params.q).toBe('"exact phrase" -java -"bad words" site:example.org rust');
    expect(res.applied.has('site')).toBe(true);
    expect(res.applied.has('excluded')).toBe(true);
  });

  it('sends OR groups and intitle:, leaves -site: to the operation, and claims nothing Brave did not report', async () => {
    sv.setWeb(corpus(2));
    const res = await provider().search(request('"a b" OR "c d" intitle:tokio rust -site:bad.example'));
    const [s] = sv.searches();
    expect(s!.params.q).toBe('"a b" OR "c d" intitle:tokio rust');
    expect(res.applied.has('site')).toBe(false);
    expect(res.applied.has('excluded')).toBe(false);

    sv.reset();
    sv.setWeb(corpus(2));
    sv.answer((req) => ({ body: { type: 'search', query: { original: req.params.q, more_results_available: false }, web: { type: 'search', results: [], family_friendly: true } } }));
    const quiet = await provider().search(request('rust -java site:example.org'));
    expect(quiet.applied.has('site')).toBe(false);
    expect(quiet.applied.has('excluded')).toBe(false);
  });

  it('keeps a query within 400 characters and 50 words, operators first', async () => {
    sv.setWeb(corpus(1));
    // 60 short words: over Brave's 50 words.
    const many = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    const res = await provider().search(request(`${many} -java site:example.org`));
    // 38 long words: over Brave's 400 characters (within Scour's 500).
    await provider().search(request(`${Array.from({ length: 38 }, (_, i) => `longword${String(i).padStart(3, '0')}`).join(' ')} -java`));
    const [s, t] = sv.searches();
    expect(s!.params.q!.split(' ')).toHaveLength(50);
    expect(s!.params.q!.startsWith('-java site:example.org w0 w1 ')).toBe(true);
    expect(s!.params.q!.endsWith(' w47')).toBe(true);
    expect(t!.params.q!.length).toBeLessThanOrEqual(400);
    expect(t!.params.q!.length).toBeGreaterThan(380);
    expect(t!.params.q!.startsWith('-java longword000 ')).toBe(true);
    // The stand-in refuses what Brave refuses: both were accepted.
    expect(res.results).toHaveLength(1);
    // A phrase longer than Brave takes is left out; the plain words remain.
    const big = parseQuery(`"${'x'.repeat(450)}" y`);
    if (!big.ok) throw new Error(big.message);
    expect(braveQuery(big.query).q).toBe('y');
  });
});

describe('filters: what is sent and what is applied', () => {
  const base = ['result_type', 'safe_search'];
  const cases: { name: string; filters: Partial<SearchFilters>; sent: Record<string, string | undefined>; applied: string[] }[] = [
    { name: 'none', filters: {}, sent: { country: 'ALL', search_lang: undefined, freshness: undefined, safesearch: 'off' }, applied: base },
    { name: 'a country on Brave\'s list', filters: { country: 'DE' }, sent: { country: 'DE' }, applied: [...base, 'country'] },
    { name: 'a country off the list (not sent, not applied)', filters: { country: 'IE' }, sent: { country: 'ALL' }, applied: base },
    { name: 'language de', filters: { language: 'de' }, sent: { search_lang: 'de' }, applied: [...base, 'language'] },
    { name: 'language ja is jp', filters: { language: 'ja' }, sent: { search_lang: 'jp' }, applied: [...base, 'language'] },
    { name: 'language zh in TW is zh-hant', filters: { language: 'zh', country: 'TW' }, sent: { search_lang: 'zh-hant', country: 'TW' }, applied: [...base, 'language', 'country'] },
    { name: 'language pt in BR is pt-br', filters: { language: 'pt', country: 'BR' }, sent: { search_lang: 'pt-br' }, applied: [...base, 'language', 'country'] },
    { name: 'a language Brave lacks (not sent)', filters: { language: 'ga' }, sent: { search_lang: undefined }, applied: base },
    { name: 'time_range day', filters: { timeRange: 'day' }, sent: { freshness: 'pd' }, applied: [...base, 'time_range'] },
    { name: 'time_range week', filters: { timeRange: 'week' }, sent: { freshness: 'pw' }, applied: [...base, 'time_range'] },
    { name: 'time_range month', filters: { timeRange: 'month' }, sent: { freshness: 'pm' }, applied: [...base, 'time_range'] },
    { name: 'time_range year', filters: { timeRange: 'year' }, sent: { freshness: 'py' }, applied: [...base, 'time_range'] },
    { name: 'time_range hour (pd, not applied)', filters: { timeRange: 'hour' }, sent: { freshness: 'pd' }, applied: base },
    {
      name: 'a lower bound alone (a date range, not applied)', filters: { publishedAfter: Date.UTC(2025, 0, 2, 15) },
      sent: { freshness: '2025-01-02to2025-06-15' }, applied: base,
    },
    { name: 'safe_search moderate', filters: { safeSearch: 'moderate' }, sent: { safesearch: 'moderate' }, applied: base },
    { name: 'safe_search strict', filters: { safeSearch: 'strict' }, sent: { safesearch: 'strict' }, applied: base },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      sv.setWeb(corpus(2));
      const res = await provider().search(request('rust', { filters: c.filters }));
      const [s] = sv.searches();
      for (const [k, v] of Object.entries(c.sent)) expect(s!.params[k], k).toBe(v);
      expect([...res.applied].sort()).toEqual([...c.applied].sort());
      // The stand-in checks every parameter as Brave does: none was refused.
      expect(res.results).toHaveLength(2);
    });
  }

  it('maps languages to Brave\'s codes', () => {
    expect(braveSearchLang('en', 'GB')).toBe('en-gb');
    expect(braveSearchLang('en', undefined)).toBe('en');
    expect(braveSearchLang('zh', undefined)).toBe('zh-hans');
    expect(braveSearchLang('pt', 'PT')).toBe('pt-pt');
    expect(braveSearchLang('no', undefined)).toBe('nb');
    expect(braveSearchLang('xx', undefined)).toBeUndefined();
  });

  it('asks the news endpoint for news, types results as news, and dates them from page_age', async () => {
    sv.setNews([
      { url: 'https://news.example/a', title: 'Launch <strong>news</strong>', description: 'The <strong>rocket</strong> flew.', page_age: '2025-06-14T08:30:00', age: '1 day ago' },
    ]);
    sv.setWeb(corpus(5));
    const res = await provider().search(request('rocket', { limit: 40, filters: { resultType: 'news', timeRange: 'week' } }));
    const [s] = sv.searches();
    expect(s!.path).toBe('/res/v1/news/search');
    expect(s!.params).toMatchObject({ count: '40', offset: '0', freshness: 'pw' });
    expect(s!.params.result_filter).toBeUndefined();
    expect(res.applied.has('result_type')).toBe(true);
    expect(res.results).toEqual([{
      url: 'https://news.example/a', title: 'Launch news', snippet: 'The rocket flew.', highlights: [[4, 10]],
      publishedAt: Date.UTC(2025, 5, 14, 8, 30), type: 'news', language: null, country: null, safe: null,
    }]);
  });
});

describe('results', () => {
  it('maps title, marked description, page_age, language and family_friendly', async () => {
    sv.setWeb([
      {
        url: 'https://www.rust-lang.org/learn', title: 'Learn <strong>Rust</strong> &amp; more', description: 'The <strong>Rust</strong> book and <strong>async</strong> guide.',
        page_age: '2024-03-01T10:00:00', language: 'en', family_friendly: false,
      },
    ]);
    const [r] = (await provider().search(request('rust async'))).results;
    expect(r).toEqual({
      url: 'https://www.rust-lang.org/learn', title: 'Learn Rust & more', snippet: 'The Rust book and async guide.', highlights: [[4, 8], [18, 23]],
      publishedAt: Date.UTC(2024, 2, 1, 10), type: null, language: 'en', country: null, safe: false,
    });
    expect(r!.snippet.slice(4, 8)).toBe('Rust');
    expect(r!.snippet.slice(18, 23)).toBe('async');
  });

  it('survives hostile fields: no URL, a javascript: URL, non-strings, huge texts, markup', async () => {
    sv.setWeb([
      { verbatim: { title: 'no url at all', description: 'x' } },
      { verbatim: { url: 'javascript:alert(1)', title: 'script' } },
      { verbatim: 'a string, not a result' },
      { verbatim: { url: 'https://ok.example/1', title: 42, description: ['not', 'text'], page_age: 'yesterday', language: 7, family_friendly: 'yes' } },
      { url: 'https://ok.example/2', title: `<script>alert(1)</script><b>Bold</b> ${'t'.repeat(500)}`, description: `${'word '.repeat(400)}<strong>end</strong>`, page_age: '2024-13-45T00:00:00', language: 'EN-us' },
      { url: 'https://ok.example/3', title: 'Only extra', description: '', extra_snippets: [7, 'The <strong>extra</strong> snippet'] },
    ]);
    const res = await provider().search(request('rust'));
    expect(res.results.map((r) => r.url)).toEqual(['https://ok.example/1', 'https://ok.example/2', 'https://ok.example/3']);
    const [a, b, c] = res.results;
    expect(a).toMatchObject({ title: 'ok.example', snippet: '', publishedAt: null, language: null, safe: null });
    expect(b!.title.length).toBeLessThanOrEqual(300);
    expect(b!.title).not.toMatch(/[<>]/);
    expect(b!.snippet.length).toBeLessThanOrEqual(300);
    expect(b!.highlights ?? []).toEqual([]);
    expect(b!.publishedAt).toBeNull();
    expect(b!.language).toBe('en');
    expect(c).toMatchObject({ snippet: 'The extra snippet', highlights: [[4, 9]] });
  });

  it('answers no results when Brave found nothing (no web key)', async () => {
    const res = await provider().search(request('nothing matches'));
    expect(res).toMatchObject({ results: [], total: undefined });
  });

  it('fails on JSON that is not a Brave search answer', async () => {
    sv.answer(() => ({ body: { hello: 'world' } }));
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/not a web search answer/);
  });
});

describe('paging', () => {
  it('asks a second page (offset 1, same count) when more are wanted and Brave has more, de-duplicating', async () => {
    const items = corpus(40);
    // Page 2 repeats the last result of page 1 (Brave says pages may overlap).
    sv.setWeb([...items.slice(0, 20), items[19]!, ...items.slice(20, 39)]);
    const res = await provider().search(request('rust', { limit: 30 }));
    expect(sv.searches().map((s) => [s.params.count, s.params.offset])).toEqual([['20', '0'], ['20', '1']]);
    expect(res.results).toHaveLength(30);
    expect(new Set(res.results.map((r) => r.url)).size).toBe(30);
    expect(res.results.map((r) => r.url)).toEqual(items.slice(0, 30).map((i) => i.url));
  });

  it('asks one page when it is enough or Brave has no more', async () => {
    sv.setWeb(corpus(40));
    await provider().search(request('rust', { limit: 20 }));
    expect(sv.searches()).toHaveLength(1);

    sv.reset();
    sv.setWeb(corpus(15));
    const res = await provider().search(request('rust', { limit: 40 }));
    expect(sv.searches().map((s) => s.params.offset)).toEqual(['0']);
    expect(res.results).toHaveLength(15);
  });

  it('keeps the first page when the second is refused, with a warning', async () => {
    sv.setWeb(corpus(40));
    let n = 0;
    sv.answer((req) => {
      n++;
      if (n === 1) {
        const items = corpus(20).map((i) => ({ ...i, type: 'search_result' }));
        return { body: { type: 'search', query: { original: req.params.q, more_results_available: true }, web: { type: 'search', results: items, family_friendly: true } } };
      }
      return { status: 429, headers: { 'x-ratelimit-remaining': '0, 1400', 'x-ratelimit-reset': '1, 1000' }, body: { type: 'ErrorResponse', error: { code: 'RATE_LIMITED', status: 429 } } };
    });
    const res = await provider().search(request('rust', { limit: 30 }));
    expect(res.results).toHaveLength(20);
    expect(res.warnings).toEqual([expect.objectContaining({ code: 'PROVIDER_RATE_LIMITED' })]);
  });
});

describe('failures', () => {
  it('429 per-second: ProviderRateLimited for the per-second window\'s reset', async () => {
    sv.setMode('rate-limited', { retryAfter: 3 });
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(3000);
    expect((err as ProviderRateLimited).message).toMatch(/per-second/);
  });

  it('429 QUOTA_LIMITED: paused until the monthly window resets, at most a day', async () => {
    sv.setQuotaUsed(true);
    sv.setMode('rate-limited', { retryAfter: 7200 });
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(7_200_000);

    sv.setMode('rate-limited', { retryAfter: 1_419_704 });
    const long = await failure(provider().search(request('rust')));
    expect((long as ProviderRateLimited).retryAfterMs).toBe(MAX_PAUSE_MS);
  });

  it('reads a 429 without headers from Retry-After, the body, or a default', () => {
    expect(brave429({ 'retry-after': '12' }, {}).ms).toBe(12_000);
    expect(brave429({}, { type: 'ErrorResponse', errors: [{ code: 'QUOTA_LIMITED' }] }).ms).toBe(MAX_PAUSE_MS);
    expect(brave429({}, {}).ms).toBe(60_000);
    expect(brave429({ 'x-ratelimit-remaining': '1, 5', 'x-ratelimit-reset': '0, 99' }, {}).ms).toBe(1000);
  });

  it('5xx: PROVIDER_FAILED with Brave\'s detail', async () => {
    sv.setMode('error');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(500);
    expect(err.message).toContain('Internal server error');
  });

  it('a body cut in the middle: PROVIDER_FAILED', async () => {
    sv.setWeb(corpus(5));
    sv.setMode('malformed');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/invalid JSON/);
  });

  it('a key Brave does not know (422 SUBSCRIPTION_TOKEN_INVALID): PROVIDER_MISCONFIGURED, the key never in the message', async () => {
    const err = await providerError(provider({ key: 'wrong-secret-token' }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    expect(err.status).toBe(422);
    expect(err.message).toMatch(/SCOUR_PROVIDER_BRAVE_KEY/);
    expect(err.message).not.toContain('wrong-secret-token');
  });

  it('another 422 (a parameter Brave refused) is PROVIDER_FAILED', async () => {
    sv.answer(() => ({ status: 422, body: { type: 'ErrorResponse', error: { status: 422, code: 'VALIDATION', detail: 'Unable to validate request parameter(s)', meta: { errors: [{ loc: ['query', 'count'], msg: 'bad' }] } } } }));
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('Unable to validate');
  });

  it('401 and 403: PROVIDER_MISCONFIGURED', async () => {
    for (const status of [401, 403]) {
      sv.answer(() => ({ status, body: { type: 'ErrorResponse', error: { status, code: 'FORBIDDEN', detail: 'Not allowed for plan.' } } }));
      const err = await providerError(provider().search(request('rust')));
      expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    }
  });

  it('rejects with the signal\'s reason when the search gives up', async () => {
    sv.setMode('hang');
    const ac = new AbortController();
    const p = provider().search(request('rust', { signal: ac.signal }));
    setTimeout(() => ac.abort(new Error('search gave up')), 100);
    const err = await failure(p);
    expect((err as Error).message).toBe('search gave up');
  });
});
