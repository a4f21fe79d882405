/**
 * The searxng search provider against a fake SearXNG on loopback (speaking
 * SearXNG's JSON API as its source does: test/support/searxng.ts), through
 * the real Egress implementation: the parameters it sends, paging and
 * de-duplication, field mapping, what it reports as applied, each failure,
 * unresponsive engines, abort and timeout.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../adapters/egress/port.js';
import type { Egress, GuardedRequest } from '../../core/ports.js';
import { parseQuery, type ProviderRequest, type SearchFilters } from '../../core/search.js';
import {
  createSearxngProvider, cutAtWord, parsePublishedDate, plainText, ProviderError, USER_AGENT,
} from '../../plugins/search-providers/searxng/index.js';
import { startSearxng, type FakeResult, type FakeSearxng } from '../support/searxng.js';

let sx: FakeSearxng;
beforeAll(async () => { sx = await startSearxng(); });
afterAll(async () => { await sx.close(); });
beforeEach(() => sx.reset());

const NO_FILTERS: SearchFilters = {
  country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web',
};

function request(q: string, over: { limit?: number; filters?: Partial<SearchFilters>; signal?: AbortSignal } = {}): ProviderRequest {
  const parsed = parseQuery(q);
  if (!parsed.ok) throw new Error(parsed.message);
  return {
    query: parsed.query,
    limit: over.limit ?? 10,
    filters: { ...NO_FILTERS, ...over.filters },
    accountId: 'acct_test',
    signal: over.signal ?? new AbortController().signal,
    now: Date.now(),
  };
}

const provider = (over: { baseUrl?: string; pageTimeoutMs?: number; maxPages?: number; egress?: Egress } = {}) =>
  createSearxngProvider({ baseUrl: over.baseUrl ?? sx.url, egress: over.egress ?? nodeEgress, pageTimeoutMs: over.pageTimeoutMs ?? 5_000, maxPages: over.maxPages });

/** n results: https://site<i>.example/page (i from `from`). */
const corpus = (n: number, from = 1, extra: Partial<FakeResult> = {}): FakeResult[] =>
  Array.from({ length: n }, (_, k) => ({
    url: `https://site${from + k}.example/page`, title: `Result ${from + k}`, content: `Content of result ${from + k}.`, ...extra,
  }));

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

async function providerError(p: Promise<unknown>): Promise<ProviderError> {
  const err = await failure(p);
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe('what the provider sends', () => {
  it('is a plugin of kind search-provider with its name and id', () => {
    const p = provider();
    expect(p).toMatchObject({ name: 'search-provider-searxng', kind: 'search-provider', id: 'searxng' });
  });

  it('asks GET /search with q (the raw query), format=json, pageno, language, safesearch and categories, and headers that pass the limiter', async () => {
    sx.setResults(corpus(3));
    await provider().search(request('"exact phrase" rust -java site:example.org OR tokio'));
    const [s] = sx.searches();
    expect(s!.method).toBe('GET');
    expect(s!.params).toEqual({
      q: '"exact phrase" rust -java site:example.org OR tokio', format: 'json', pageno: '1', language: 'all', safesearch: '0', categories: 'general',
    });
    expect(s!.headers.accept).toMatch(/^application\/json/);
    expect(s!.headers.accept).toContain('text/html');
    expect(s!.headers['user-agent']).toBe(USER_AGENT);
    expect(s!.headers['user-agent']).toContain('Scour');
    expect(s!.headers['accept-language']).toBeTruthy();
    expect(s!.headers['accept-encoding']).toMatch(/gzip|deflate/);
    expect(s!.headers.authorization).toBeUndefined();
  });

  it('goes through the Egress port only, with private addresses allowed, a body bound, no redirects and the page timeout', async () => {
    const calls: { url: string; request: GuardedRequest }[] = [];
    const recording: Egress = {
      fetch: (url, req) => { calls.push({ url, request: req }); return nodeEgress.fetch(url, req); },
      resolveAll: (host, policy) => nodeEgress.resolveAll(host, policy),
    };
    sx.setResults(corpus(2));
    await provider({ egress: recording, pageTimeoutMs: 1234 }).search(request('rust', { limit: 2 }));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url.startsWith(`${sx.url}/search?`)).toBe(true);
    expect(calls[0]!.request).toMatchObject({ allowPrivate: true, method: 'GET', followRedirects: false, timeoutMs: 1234, maxBodyBytes: 5 * 1024 * 1024 });
    expect(calls[0]!.request.signal).toBeDefined();

    // Another implementation entirely: its answer is what the provider reads, nothing reaches the fake.
    const before = sx.requests.length;
    const canned: Egress = {
      fetch: async (url) => ({
        url, statusCode: 200, statusMessage: 'OK', headers: { 'content-type': 'application/json' }, setCookies: [], redirects: [], wireBytes: 0,
        body: new TextEncoder().encode(JSON.stringify({ query: 'x', results: [{ url: 'https://canned.example/', title: 'Canned', content: 'From the port' }] })),
      }),
      resolveAll: async () => [],
    };
    const res = await createSearxngProvider({ baseUrl: 'http://searxng.invalid', egress: canned }).search(request('x'));
    expect(res.results.map((r) => r.title)).toEqual(['Canned']);
    expect(sx.requests.length).toBe(before);
  });

  it('keeps a path prefix, drops a trailing /search and turns user:pass@ into Basic auth (never shown in messages)', async () => {
    const base = sx.url.replace('http://', 'http://scour:s%3Acret@');
    sx.setResults(corpus(1));
    await provider({ baseUrl: `${base}/search/` }).search(request('rust'));
    const [s] = sx.searches();
    expect(s!.path).toBe('/search');
    expect(s!.headers.authorization).toBe(`Basic ${Buffer.from('scour:s:cret').toString('base64')}`);

    const prefixed = await startSearxng({ basePath: '/searxng', results: corpus(1) });
    try {
      expect(prefixed.url.endsWith('/searxng')).toBe(true);
      expect((await provider({ baseUrl: `${prefixed.url}/` }).search(request('rust', { limit: 1 }))).results).toHaveLength(1);
      expect(prefixed.requests.map((r) => r.path)).toEqual(['/searxng/search']);
    } finally {
      await prefixed.close();
    }

    sx.setMode('error');
    const err = await providerError(provider({ baseUrl: base }).search(request('rust')));
    expect(err.message).not.toContain('cret');
    expect(err.message).not.toContain('scour:');
  });

  it('refuses a base URL that is not absolute http(s) or carries a query, and bad options, when created', () => {
    expect(() => createSearxngProvider({ baseUrl: 'searxng:8080', egress: nodeEgress })).toThrow(/http or https|absolute/);
    expect(() => createSearxngProvider({ baseUrl: 'not a url', egress: nodeEgress })).toThrow(/absolute URL/);
    expect(() => createSearxngProvider({ baseUrl: 'ftp://searxng', egress: nodeEgress })).toThrow(/http or https/);
    expect(() => createSearxngProvider({ baseUrl: 'http://searxng/?a=1', egress: nodeEgress })).toThrow(/query or fragment/);
    expect(() => createSearxngProvider({ baseUrl: 'http://searxng', egress: nodeEgress, maxPages: 0 })).toThrow(/maxPages/);
    expect(() => createSearxngProvider({ baseUrl: 'http://searxng', egress: nodeEgress, pageTimeoutMs: -1 })).toThrow(/pageTimeoutMs/);
  });
});

describe('filters: what is sent and what is reported as applied', () => {
  const cases: { name: string; filters: Partial<SearchFilters>; sent: Record<string, string | undefined>; applied: string[] }[] = [
    { name: 'none', filters: {}, sent: { language: 'all', time_range: undefined, safesearch: '0', categories: 'general' }, applied: ['safe_search', 'result_type'] },
    { name: 'language', filters: { language: 'de' }, sent: { language: 'de' }, applied: ['language', 'safe_search', 'result_type'] },
    { name: 'language and country', filters: { language: 'en', country: 'US' }, sent: { language: 'en-US' }, applied: ['language', 'country', 'safe_search', 'result_type'] },
    { name: 'country alone (not sent, not applied)', filters: { country: 'FR' }, sent: { language: 'all' }, applied: ['safe_search', 'result_type'] },
    { name: 'time_range day', filters: { timeRange: 'day' }, sent: { time_range: 'day' }, applied: ['time_range', 'safe_search', 'result_type'] },
    { name: 'time_range week', filters: { timeRange: 'week' }, sent: { time_range: 'week' }, applied: ['time_range', 'safe_search', 'result_type'] },
    { name: 'time_range month', filters: { timeRange: 'month' }, sent: { time_range: 'month' }, applied: ['time_range', 'safe_search', 'result_type'] },
    { name: 'time_range year', filters: { timeRange: 'year' }, sent: { time_range: 'year' }, applied: ['time_range', 'safe_search', 'result_type'] },
    { name: 'time_range hour (day sent, not applied)', filters: { timeRange: 'hour' }, sent: { time_range: 'day' }, applied: ['safe_search', 'result_type'] },
    { name: 'safe_search moderate', filters: { safeSearch: 'moderate' }, sent: { safesearch: '1' }, applied: ['safe_search', 'result_type'] },
    { name: 'safe_search strict', filters: { safeSearch: 'strict' }, sent: { safesearch: '2' }, applied: ['safe_search', 'result_type'] },
    { name: 'result_type news', filters: { resultType: 'news' }, sent: { categories: 'news' }, applied: ['safe_search', 'result_type'] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      sx.setResults(corpus(2, 1, { category: c.filters.resultType === 'news' ? 'news' : 'general' }));
      const res = await provider().search(request('rust site:example.org -java', { filters: c.filters }));
      const [s] = sx.searches();
      for (const [k, v] of Object.entries(c.sent)) expect(s!.params[k], k).toBe(v);
      expect([...res.applied].sort()).toEqual([...c.applied].sort());
      // The fake checks parameters as SearXNG does: none of these was refused.
      expect(res.results).toHaveLength(2);
      // site: and -word stay in q for the engines, but are left to the operation.
      expect(res.applied.has('site')).toBe(false);
      expect(res.applied.has('excluded')).toBe(false);
    });
  }

  it('sends every filter at once in the documented order', async () => {
    await provider().search(request('rust', { filters: { language: 'pt', country: 'BR', timeRange: 'month', safeSearch: 'strict', resultType: 'news' } }));
    const [s] = sx.searches();
    expect(Object.keys(s!.params)).toEqual(['q', 'format', 'pageno', 'language', 'time_range', 'safesearch', 'categories']);
    expect(s!.params).toMatchObject({ language: 'pt-BR', time_range: 'month', safesearch: '2', categories: 'news' });
  });
});

describe('paging and de-duplication', () => {
  it('pages until the limit is met, and asks no further', async () => {
    sx.setResults(corpus(35));
    const res = await provider().search(request('rust', { limit: 25 }));
    expect(sx.searches().map((s) => s.params.pageno)).toEqual(['1', '2', '3']);
    expect(res.results).toHaveLength(25);
    expect(res.results.map((r) => r.url)).toEqual(corpus(25).map((r) => r.url));
    expect(res.total).toBeUndefined();

    sx.reset();
    sx.setResults(corpus(35));
    await provider().search(request('rust', { limit: 10 }));
    expect(sx.searches().map((s) => s.params.pageno)).toEqual(['1']);
  });

  it('stops at an empty page, and then knows the total', async () => {
    sx.setResults(corpus(12));
    const res = await provider().search(request('rust', { limit: 50 }));
    expect(sx.searches().map((s) => s.params.pageno)).toEqual(['1', '2', '3']);
    expect(res.results).toHaveLength(12);
    expect(res.total).toBe(12);
    expect(res.warnings).toBeUndefined();
  });

  it('stops at maxPages (default 5)', async () => {
    sx.setResults(corpus(100));
    const res = await provider().search(request('rust', { limit: 100 }));
    expect(sx.searches()).toHaveLength(5);
    expect(res.results).toHaveLength(50);
    expect(res.total).toBeUndefined();

    sx.reset();
    sx.setResults(corpus(100));
    const three = await provider({ maxPages: 3 }).search(request('rust', { limit: 100 }));
    expect(sx.searches()).toHaveLength(3);
    expect(three.results).toHaveLength(30);
  });

  it('drops URLs seen on an earlier page (scheme, www., trailing slash and fragment aside) and keeps the first', async () => {
    const [a, b, c, d, e] = corpus(5);
    sx.setPages([
      [a!, b!, c!],
      [{ ...b!, title: 'B again' }, { ...c!, url: 'http://www.site3.example/page/#top' }, d!],
      [d!, e!],
    ]);
    const res = await provider().search(request('rust', { limit: 50 }));
    expect(res.results.map((r) => r.url)).toEqual([a, b, c, d, e].map((r) => r!.url));
    expect(res.results[1]!.title).toBe('Result 2');
    expect(sx.searches().map((s) => s.params.pageno)).toEqual(['1', '2', '3', '4']);
  });

  it('stops at a page that brings no new URL', async () => {
    const [a, b, c] = corpus(3);
    sx.setPages([[a!, b!], [b!, a!], [c!]]);
    const res = await provider().search(request('rust', { limit: 50 }));
    expect(res.results.map((r) => r.url)).toEqual([a!.url, b!.url]);
    expect(sx.searches().map((s) => s.params.pageno)).toEqual(['1', '2']);
  });

  it('reports number_of_results as the total when an (older) instance sends it, never below what it returned', async () => {
    sx.setResults(corpus(15));
    sx.setNumberOfResults(1_230_000);
    expect((await provider().search(request('rust', { limit: 5 }))).total).toBe(1_230_000);
    sx.setNumberOfResults(0); // 0: the instance does not know
    expect((await provider().search(request('rust', { limit: 5 }))).total).toBeUndefined();
    sx.setNumberOfResults(3);
    expect((await provider().search(request('rust', { limit: 50 }))).total).toBe(15);
  });
});

describe('fields', () => {
  it('maps url, title, snippet, publishedAt, score and type', async () => {
    const date = new Date(Date.UTC(2024, 4, 1, 12, 30, 0, 250));
    sx.setResults([
      { url: 'https://news.example/a', title: 'A <b>bold</b> title', content: 'Fish &amp; chips<br>with <em>vin</em>egar', publishedDate: date, category: 'news', positions: [1, 2], engines: ['bing news', 'yahoo news'] },
      { url: 'https://example.org/b', title: 'B', content: 'plain', category: 'general' },
    ]);
    const res = await provider().search(request('fish', { filters: { resultType: 'news' } }));
    expect(res.results).toHaveLength(1); // the fake's engines serve the news category only
    const [r] = res.results;
    expect(r).toMatchObject({
      url: 'https://news.example/a', title: 'A bold title', snippet: 'Fish & chips with vinegar', publishedAt: date.getTime(), type: 'news',
    });
    expect(r!.score).toBe(3); // SearXNG's calculate_score: 2 positions x (1/1 + 1/2)
    expect(r!.highlights).toBeUndefined();

    const web = await provider().search(request('fish'));
    expect(web.results.map((x) => [x.url, x.type])).toEqual([['https://example.org/b', null]]);
  });

  it('reads publishedDate as SearXNG writes it (isoformat, UTC when naive) and turns anything else into null', async () => {
    const dates: [unknown, number | null][] = [
      ['2024-05-01T12:00:00', Date.UTC(2024, 4, 1, 12)],
      ['2024-05-01T12:00:00+00:00', Date.UTC(2024, 4, 1, 12)],
      ['2024-05-01T14:00:00+02:00', Date.UTC(2024, 4, 1, 12)],
      ['2024-05-01T07:00:00-05:00', Date.UTC(2024, 4, 1, 12)],
      ['2024-05-01T12:00:00.123456', Date.UTC(2024, 4, 1, 12, 0, 0, 123)],
      ['2024-05-01 12:00:00+0000', Date.UTC(2024, 4, 1, 12)],
      ['2024-05-01', Date.UTC(2024, 4, 1)],
      [null, null],
      ['', null],
      ['yesterday', null],
      ['2024-02-30T00:00:00', null],
      ['2024-13-01T00:00:00', null],
      [1714564800, null],
      [{ $date: 1 }, null],
    ];
    sx.setResults(dates.map(([d], i) => ({ verbatim: { url: `https://d${i}.example/`, title: `D${i}`, content: '', publishedDate: d } })));
    const res = await provider().search(request('dates', { limit: 50 }));
    expect(res.results.map((r) => r.publishedAt)).toEqual(dates.map(([, t]) => t));
    expect(parsePublishedDate(undefined)).toBeNull();
  });

  it('skips results without a usable http(s) url, and fills a missing title and content', async () => {
    sx.setResults([
      { verbatim: { title: 'no url', content: 'x' } },
      { verbatim: { url: '', title: 'empty url' } },
      { verbatim: { url: 42, title: 'number url' } },
      { verbatim: { url: '/relative/path', title: 'relative' } },
      { verbatim: { url: 'javascript:alert(1)', title: 'script' } },
      { verbatim: { url: 'ftp://files.example/x', title: 'ftp' } },
      { verbatim: null },
      { verbatim: 'a string' },
      { verbatim: [1, 2] },
      { verbatim: { url: 'https://www.untitled.example/a' } },
      { verbatim: { url: 'https://wrong-types.example/', title: 7, content: ['x'], score: 'high', category: 3 } },
      { verbatim: { url: 'not a url', parsed_url: ['https', 'rebuilt.example', '/p', '', 'q=1', ''], title: 'Rebuilt' } },
    ]);
    const res = await provider().search(request('odd', { limit: 50 }));
    expect(res.results).toEqual([
      { url: 'https://www.untitled.example/a', title: 'untitled.example', snippet: '', publishedAt: null, type: null, language: null, country: null, safe: null },
      { url: 'https://wrong-types.example/', title: 'wrong-types.example', snippet: '', publishedAt: null, type: null, language: null, country: null, safe: null },
      { url: 'https://rebuilt.example/p?q=1', title: 'Rebuilt', snippet: '', publishedAt: null, type: null, language: null, country: null, safe: null },
    ]);
  });

  it('tolerates a body without results or with results that are not a list', async () => {
    const canned = (body: unknown): Egress => ({
      fetch: async (url) => ({
        url, statusCode: 200, statusMessage: 'OK', headers: { 'content-type': 'application/json' }, setCookies: [], redirects: [], wireBytes: 0,
        body: new TextEncoder().encode(JSON.stringify(body)),
      }),
      resolveAll: async () => [],
    });
    for (const body of [{}, { results: null }, { results: 'none' }, { results: {} }]) {
      const res = await createSearxngProvider({ baseUrl: 'http://searxng.invalid', egress: canned(body) }).search(request('x'));
      expect(res.results).toEqual([]);
      expect(res.total).toBe(0);
    }
    const err = await providerError(createSearxngProvider({ baseUrl: 'http://searxng.invalid', egress: canned([1, 2]) }).search(request('x')));
    expect(err.code).toBe('PROVIDER_FAILED');
  });

  it('makes snippets plain text cut at a word boundary near 300 characters', async () => {
    const long = `<p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(12)}</p>`;
    sx.setResults([{ url: 'https://long.example/', title: 'Long', content: long }]);
    const [r] = (await provider().search(request('lorem'))).results;
    expect(r!.snippet.length).toBeLessThanOrEqual(300);
    expect(r!.snippet.length).toBeGreaterThan(200);
    expect(r!.snippet.endsWith('\u2026')).toBe(true);
    expect(long.replace(/<\/?p>/g, '')).toContain(r!.snippet.slice(0, -1));
    expect(r!.snippet).not.toMatch(/[<>]/);

    expect(plainText('  a\n\t b &lt;tag&gt; <i>c</i>d <!-- x --> &#x263A; ')).toBe('a b <tag> cd \u263A');
    expect(cutAtWord('short')).toBe('short');
    expect(cutAtWord('x'.repeat(400))).toHaveLength(300);
  });
});

describe('unresponsive engines', () => {
  it('an empty answer with unresponsive_engines is a normal empty response with a warning naming them', async () => {
    sx.setMode('unresponsive');
    const res = await provider().search(request('rust'));
    expect(res.results).toEqual([]);
    expect(res.total).toBe(0);
    expect(res.warnings).toHaveLength(1);
    expect(res.warnings![0]!.code).toBe('ENGINES_UNRESPONSIVE');
    expect(res.warnings![0]!.message).toContain('bing (Suspended: too many requests)');
    expect(res.warnings![0]!.message).toContain('google (timeout)');
  });

  it('names each engine once across pages, beside the results', async () => {
    sx.setResults(corpus(15));
    sx.setUnresponsive([['wikipedia', 'HTTP error'], ['brave', 'CAPTCHA']]);
    const res = await provider().search(request('rust', { limit: 15 }));
    expect(res.results).toHaveLength(15);
    expect(res.warnings).toEqual([{ code: 'ENGINES_UNRESPONSIVE', message: 'SearXNG engines did not answer: brave (CAPTCHA), wikipedia (HTTP error)' }]);
  });
});

describe('failures', () => {
  it('403 (JSON format disabled): PROVIDER_MISCONFIGURED saying how to enable it', async () => {
    sx.setMode('json-disabled');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    expect(err.status).toBe(403);
    expect(err.message).toContain('JSON');
    expect(err.message).toContain('search: formats: [html, json]');
    expect(err.message).toContain('settings.yml');
  });

  it('an instance whose settings leave json out answers the same', async () => {
    const htmlOnly = await startSearxng({ formats: ['html'] });
    try {
      const err = await providerError(provider({ baseUrl: htmlOnly.url }).search(request('rust')));
      expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    } finally {
      await htmlOnly.close();
    }
  });

  it('500, 429 and other statuses: PROVIDER_FAILED with the status (and SearXNG\'s own error text)', async () => {
    sx.setMode('error');
    let err = await providerError(provider().search(request('rust')));
    expect(err).toMatchObject({ code: 'PROVIDER_FAILED', status: 500 });
    expect(err.message).toContain('HTTP 500');
    expect(err.message).toContain('search error');

    sx.setMode('rate-limited');
    err = await providerError(provider().search(request('rust')));
    expect(err).toMatchObject({ code: 'PROVIDER_FAILED', status: 429 });
    expect(err.message).toContain('limiter');

    sx.setMode('status', { status: 502 });
    err = await providerError(provider().search(request('rust')));
    expect(err).toMatchObject({ code: 'PROVIDER_FAILED', status: 502 });
    expect(err.message).toContain('HTTP 502');
  });

  it('invalid JSON, or HTML where JSON was expected: PROVIDER_FAILED', async () => {
    sx.setResults(corpus(5));
    sx.setMode('invalid-json');
    let err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('invalid JSON');

    sx.setMode('html');
    err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('text/html');
  });

  it('a redirect is not followed: PROVIDER_FAILED', async () => {
    const redirecting: Egress = {
      fetch: async (url, req) => {
        expect(req.followRedirects).toBe(false);
        return { url, statusCode: 302, statusMessage: 'Found', headers: { location: 'https://duckduckgo.com/?q=rust' }, setCookies: [], redirects: [], wireBytes: 0, body: new Uint8Array() };
      },
      resolveAll: async () => [],
    };
    const err = await providerError(createSearxngProvider({ baseUrl: 'http://searxng.invalid', egress: redirecting }).search(request('rust')));
    expect(err).toMatchObject({ code: 'PROVIDER_FAILED', status: 302 });
  });

  it('connection refused: PROVIDER_FAILED', async () => {
    const gone = await startSearxng();
    const url = gone.url;
    await gone.close();
    const err = await providerError(provider({ baseUrl: url }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('could not be reached');
  });

  it('a cloud-metadata address is refused by the guard, private addresses or not: PROVIDER_MISCONFIGURED, nothing sent', async () => {
    const err = await providerError(provider({ baseUrl: 'http://169.254.169.254' }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
  });

  it('a page that does not answer in time: PROVIDER_TIMEOUT', async () => {
    sx.setMode('hang');
    const started = Date.now();
    const err = await providerError(provider({ pageTimeoutMs: 300 }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_TIMEOUT');
    expect(err.message).toContain('0.3 s');
    expect(Date.now() - started).toBeLessThan(3_000);

    sx.setMode('slow', { delayMs: 800 });
    expect((await providerError(provider({ pageTimeoutMs: 200 }).search(request('rust')))).code).toBe('PROVIDER_TIMEOUT');
  });

  it('a later page that fails keeps the earlier pages, with a warning', async () => {
    sx.setResults(corpus(30));
    sx.setMode('error', { fromPage: 2 });
    const res = await provider().search(request('rust', { limit: 25 }));
    expect(res.results).toHaveLength(10);
    expect(res.warnings).toHaveLength(1);
    expect(res.warnings![0]!.code).toBe('PROVIDER_FAILED');
    expect(res.warnings![0]!.message).toContain('page 2');

    sx.reset();
    sx.setResults(corpus(30));
    sx.setMode('hang', { fromPage: 3 });
    const timed = await provider({ pageTimeoutMs: 300 }).search(request('rust', { limit: 25 }));
    expect(timed.results).toHaveLength(20);
    expect(timed.warnings!.map((w) => w.code)).toEqual(['PROVIDER_TIMEOUT']);
  });
});

describe('abort', () => {
  it('the request\'s signal aborts the page in flight and rejects with its reason', async () => {
    sx.setMode('hang');
    const controller = new AbortController();
    const reason = new Error('the search is over');
    setTimeout(() => controller.abort(reason), 150);
    const started = Date.now();
    const err = await failure(provider({ pageTimeoutMs: 10_000 }).search(request('rust', { signal: controller.signal })));
    expect(err).toBe(reason);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(sx.searches()).toHaveLength(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const err = await failure(provider().search(request('rust', { signal: controller.signal })));
    expect((err as Error).message).toBe('gone');
    expect(sx.requests).toHaveLength(0);
  });

  it('an abort between pages stops the paging', async () => {
    sx.setResults(corpus(30));
    sx.setMode('slow', { delayMs: 400, fromPage: 2 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('time is up')), 150);
    const err = await failure(provider().search(request('rust', { limit: 30, signal: controller.signal })));
    expect((err as Error).message).toBe('time is up');
    expect(sx.searches().length).toBeLessThanOrEqual(2);
  });
});

describe('the fake speaks SearXNG\'s wire format', () => {
  it('answers as json.dumps does, with results completed as SearXNG completes them', async () => {
    sx.setResults([{ url: 'https://xn--strung-xxa.example/path;p?q=1#f', title: 'Störung', content: 'Ünïcödé', publishedDate: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)) }]);
    const res = await fetch(`${sx.url}/search?q=st%C3%B6rung&format=json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await res.text();
    expect(text).toMatch(/^\{"query": "st\\u00f6rung", "results": \[\{"url": /);
    expect(text).toContain('"score": 1.0');
    expect(text).toContain('"title": "St\\u00f6rung"');
    expect(text).toContain('"publishedDate": "2024-01-02T03:04:05+00:00"');
    expect(text).toContain('"pubdate": "2024-01-02 03:04:05+0000"');
    expect(text).toContain('"unresponsive_engines": []');
    expect(text).not.toContain('number_of_results');
    const body = JSON.parse(text) as { results: Record<string, unknown>[] };
    expect(body.results[0]!.parsed_url).toEqual(['https', 'xn--strung-xxa.example', '/path', 'p', 'q=1', 'f']);
    expect(body.results[0]!.engines).toEqual(['duckduckgo']);
    expect(Object.keys(body)).toEqual(['query', 'results', 'answers', 'corrections', 'infoboxes', 'suggestions', 'unresponsive_engines']);
  });

  it('refuses bad parameters as webadapter.py does', async () => {
    const bad: [string, string][] = [
      ['language=en_US', 'Invalid value en_US for parameter language'],
      ['safesearch=3', 'Invalid value 3 for parameter safesearch'],
      ['time_range=hour', 'Invalid value hour for parameter time_range'],
      ['pageno=0', 'Invalid value 0 for parameter pageno'],
      ['pageno=', 'Empty pageno parameter'],
    ];
    for (const [param, message] of bad) {
      const res = await fetch(`${sx.url}/search?q=x&format=json&${param}`);
      expect(res.status, param).toBe(400);
      expect(await res.json()).toEqual({ error: message });
    }
    const noQuery = await fetch(`${sx.url}/search?format=json`);
    expect(noQuery.status).toBe(400);
    expect(await noQuery.json()).toEqual({ error: 'No query' });
    sx.setMode('json-disabled');
    const forbidden = await fetch(`${sx.url}/search?q=x&format=json`);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.text()).toContain('<title>403 Forbidden</title>');
  });
});
