/**
 * The google provider against a Custom Search JSON API stand-in on loopback
 * (test/support/standins/google.ts), through the real Egress: parameters
 * (key, cx, the query's own parameters, each filter), what Google applies,
 * the mapping of items (scholarly meta tags included), paging, quota errors
 * as rate limits, refused keys and engines, abort.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import { parseQuery, ProviderRateLimited, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import {
  createGoogleProvider, DEFAULT_BASE_URL, googleLr, googleQuery, msUntilPacificMidnight, snippetDate,
} from '../../../plugins/search-providers/google/index.js';
import { ProviderError } from '../../../plugins/sdk/provider.js';
import { GOOGLE_CX, GOOGLE_KEY, startGoogle, type GoogleItem, type GoogleStandin } from '../../support/standins/google.js';
import { NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let sv: GoogleStandin;
beforeAll(async () => { sv = await startGoogle(); });
afterAll(async () => { await sv.close(); });
beforeEach(() => sv.reset());

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const EVERY = ['country', 'excluded', 'language', 'result_type', 'safe_search', 'site', 'time_range'];

function parsed(q: string): ProviderRequest['query'] {
  const p = parseQuery(q);
  if (!p.ok) throw new Error(p.message);
  return p.query;
}

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, NOW);

const provider = (over: { key?: string; cx?: string } = {}) =>
  createGoogleProvider({ egress: nodeEgress, baseUrl: sv.url, key: over.key ?? GOOGLE_KEY, cx: over.cx ?? GOOGLE_CX, timeoutMs: 5000 });

const corpus = (n: number, from = 1): GoogleItem[] =>
  Array.from({ length: n }, (_, k) => ({
    link: `https://site${from + k}.example/page`, title: `Result ${from + k}`, htmlSnippet: `About <b>rust</b> ${from + k}.`,
  }));

describe('the plugin', () => {
  it('is search-provider-google with its endpoint and what it applies on every request', () => {
    const p = provider();
    expect(p).toMatchObject({ name: 'search-provider-google', id: 'google', kind: 'search-provider', endpoint: sv.url });
    expect(p.kinds).toBeUndefined();
    expect([...p.applies!].sort()).toEqual(['excluded', 'result_type', 'safe_search']);
    expect(createGoogleProvider({ egress: nodeEgress, key: 'k', cx: 'c' }).endpoint).toBe(DEFAULT_BASE_URL);
  });

  it('refuses to start without a key or an engine ID', () => {
    expect(() => createGoogleProvider({ egress: nodeEgress, cx: 'c' })).toThrow(/SCOUR_PROVIDER_GOOGLE_KEY is required/);
    expect(() => createGoogleProvider({ egress: nodeEgress, key: 'k', cx: undefined })).toThrow(/SCOUR_PROVIDER_GOOGLE_CX is required/);
    expect(() => createGoogleProvider({ egress: nodeEgress, key: 'k', cx: ' ' })).toThrow(/SCOUR_PROVIDER_GOOGLE_CX/);
  });
});

describe('what it sends', () => {
  it('asks GET /customsearch/v1 with key, cx, q, num, start and safe', async () => {
    sv.setItems(corpus(3));
    const res = await provider().search(request('rust async', { limit: 7 }));
    expect(res.results).toHaveLength(3);
    const [s] = sv.searches();
    expect(s!.method).toBe('GET');
    expect(s!.params).toEqual({ key: GOOGLE_KEY, cx: GOOGLE_CX, q: 'rust async', safe: 'off', num: '7', start: '1' });
    expect(s!.headers.accept).toContain('application/json');
  });

  it('puts one phrase in exactTerms, one exclusion in excludeTerms and one site in siteSearch', async () => {
    sv.setItems(corpus(2));
    const res = await provider().search(request('"exact phrase" rust -java site:example.org'));
    const [s] = sv.searches();
    expect(s!.params).toMatchObject({ q: 'rust', exactTerms: 'exact phrase', excludeTerms: 'java', siteSearch: 'example.org', siteSearchFilter: 'i' });
    expect(res.applied.has('site')).toBe(true);
    expect(res.applied.has('excluded')).toBe(true);
  });

  it('writes several of each in the query, and then leaves sites to the operation', async () => {
    sv.setItems(corpus(2));
    const res = await provider().search(request('"a b" OR "c d" intitle:tokio rust -java -"bad words" site:x.org site:y.org -site:z.org'));
    const [s] = sv.searches();
    expect(s!.params.q).toBe('rust "a b" OR "c d" intitle:tokio -java -"bad words" site:x.org OR site:y.org -site:z.org');
    expect(s!.params.exactTerms).toBeUndefined();
    expect(s!.params.excludeTerms).toBeUndefined();
    expect(s!.params.siteSearch).toBeUndefined();
    expect(res.applied.has('site')).toBe(false);
    expect(res.applied.has('excluded')).toBe(true);
  });

  it('excludes one site with siteSearchFilter=e', async () => {
    sv.setItems(corpus(1));
    const res = await provider().search(request('rust -site:spam.example'));
    expect(sv.searches()[0]!.params).toMatchObject({ q: 'rust', siteSearch: 'spam.example', siteSearchFilter: 'e' });
    expect(res.applied.has('site')).toBe(true);
  });

  it('sends the phrase words in q when the query is only a phrase', () => {
    const q = googleQuery(parsed('"only this"'));
    expect(q.params).toEqual([['q', 'only this'], ['exactTerms', 'only this']]);
  });
});

describe('filters: what is sent and what is applied', () => {
  const base = ['excluded', 'result_type', 'safe_search'];
  const cases: { name: string; filters: Partial<SearchFilters>; sent: Record<string, string | undefined>; applied: string[] }[] = [
    { name: 'none', filters: {}, sent: { lr: undefined, cr: undefined, gl: undefined, dateRestrict: undefined, safe: 'off' }, applied: base },
    { name: 'language de', filters: { language: 'de' }, sent: { lr: 'lang_de' }, applied: [...base, 'language'] },
    { name: 'language he is iw', filters: { language: 'he' }, sent: { lr: 'lang_iw' }, applied: [...base, 'language'] },
    { name: 'language zh in TW', filters: { language: 'zh', country: 'TW' }, sent: { lr: 'lang_zh-TW', cr: 'countryTW', gl: 'tw' }, applied: [...base, 'language', 'country'] },
    { name: 'a language Google lacks (not sent)', filters: { language: 'ga' }, sent: { lr: undefined }, applied: base },
    { name: 'country FR', filters: { country: 'FR' }, sent: { cr: 'countryFR', gl: 'fr' }, applied: [...base, 'country'] },
    { name: 'country GB is UK', filters: { country: 'GB' }, sent: { cr: 'countryUK', gl: 'uk' }, applied: [...base, 'country'] },
    { name: 'time_range day', filters: { timeRange: 'day' }, sent: { dateRestrict: 'd1' }, applied: [...base, 'time_range'] },
    { name: 'time_range week', filters: { timeRange: 'week' }, sent: { dateRestrict: 'w1' }, applied: [...base, 'time_range'] },
    { name: 'time_range month', filters: { timeRange: 'month' }, sent: { dateRestrict: 'm1' }, applied: [...base, 'time_range'] },
    { name: 'time_range year', filters: { timeRange: 'year' }, sent: { dateRestrict: 'y1' }, applied: [...base, 'time_range'] },
    { name: 'time_range hour (d1, not applied)', filters: { timeRange: 'hour' }, sent: { dateRestrict: 'd1' }, applied: base },
    { name: 'a lower bound alone (days, not applied)', filters: { publishedAfter: NOW - 10.5 * 86_400_000 }, sent: { dateRestrict: 'd11' }, applied: base },
    { name: 'safe_search moderate', filters: { safeSearch: 'moderate' }, sent: { safe: 'active' }, applied: base },
    { name: 'safe_search strict', filters: { safeSearch: 'strict' }, sent: { safe: 'active' }, applied: base },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      sv.setItems(corpus(2));
      const res = await provider().search(request('rust', { filters: c.filters }));
      const [s] = sv.searches();
      for (const [k, v] of Object.entries(c.sent)) expect(s!.params[k], k).toBe(v);
      expect([...res.applied].sort()).toEqual([...c.applied].sort());
      // The stand-in refuses parameters Google refuses: none was.
      expect(res.results).toHaveLength(2);
    });
  }

  it('maps languages to lr values', () => {
    expect(googleLr('nb', undefined)).toBe('lang_no');
    expect(googleLr('zh', 'CN')).toBe('lang_zh-CN');
    expect(googleLr('pt', 'BR')).toBe('lang_pt');
    expect(googleLr('vi', undefined)).toBeUndefined();
  });

  it('answers news with nothing, every filter applied, without asking Google', async () => {
    sv.setItems(corpus(5));
    const res = await provider().search(request('rust', { filters: { resultType: 'news' } }));
    expect(res.results).toEqual([]);
    expect(res.total).toBe(0);
    expect([...res.applied].sort()).toEqual(EVERY);
    expect(sv.requests).toHaveLength(0);
  });
});

describe('results', () => {
  it('maps title, the <b> marks of htmlSnippet, og:locale and the published time', async () => {
    sv.setItems([{
      link: 'https://blog.example/post', title: 'A <b>Rust</b> post', htmlSnippet: 'Learn <b>Rust</b> async&nbsp;today.<br>More <b>here</b>.',
      pagemap: { metatags: [{ 'og:locale': 'en_US', 'article:published_time': '2024-03-01T10:00:00+02:00' }] },
    }]);
    sv.setTotal(12300);
    const res = await provider().search(request('rust'));
    expect(res.total).toBe(12300);
    const [r] = res.results;
    expect(r).toEqual({
      url: 'https://blog.example/post', title: 'A Rust post', snippet: 'Learn Rust async\u00a0today. More here.', highlights: [[6, 10], [29, 33]],
      publishedAt: Date.UTC(2024, 2, 1, 8), type: null, language: 'en', country: null, safe: null,
    });
    expect(r!.snippet.slice(29, 33)).toBe('here');
  });

  it('reads the leading date of a snippet when the page has no date tag', async () => {
    sv.setItems([{ link: 'https://a.example/', title: 'A', htmlSnippet: 'Mar 3, 2024 <b>...</b> the <b>rust</b> news.' }]);
    const [r] = (await provider().search(request('rust'))).results;
    expect(r!.publishedAt).toBe(Date.UTC(2024, 2, 3));
    expect(snippetDate('Feb 30, 2024 ... x')).toBeNull();
    expect(snippetDate('no date ... here')).toBeNull();
  });

  it('types scholarly pages academic, with DOI, authors, journal, PDF and abstract from the citation_ tags', async () => {
    sv.setItems([{
      link: 'https://journal.example/article/1', title: 'Deep <b>learning</b>', htmlSnippet: 'We study <b>learning</b>.',
      pagemap: {
        metatags: [{
          citation_title: 'Deep learning', citation_doi: '10.1038/NATURE14539', citation_author: 'LeCun, Yann; Bengio, Yoshua',
          citation_journal_title: 'Nature', citation_pdf_url: 'https://journal.example/article/1.pdf', citation_publication_date: '2015/05/27',
          citation_abstract: '<p>Deep learning allows computational models...</p>',
        }],
      },
    }]);
    const [r] = (await provider().search(request('learning'))).results;
    expect(r).toMatchObject({
      type: 'academic', doi: '10.1038/nature14539', authors: ['LeCun, Yann', 'Bengio, Yoshua'], venue: 'Nature',
      fullTextUrl: 'https://journal.example/article/1.pdf', abstract: 'Deep learning allows computational models...', publishedAt: Date.UTC(2015, 4, 27),
    });
  });

  it('types news articles and forum pages', async () => {
    sv.setItems([
      { link: 'https://news.example/a', title: 'N', htmlSnippet: 'n', pagemap: { newsarticle: [{ datepublished: '2025-06-01' }] } },
      { link: 'https://forum.example/t/1', title: 'F', htmlSnippet: 'f', pagemap: { discussionforumposting: [{ headline: 'x' }] } },
    ]);
    const [n, f] = (await provider().search(request('rust'))).results;
    expect(n).toMatchObject({ type: 'news', publishedAt: Date.UTC(2025, 5, 1) });
    expect(f!.type).toBe('social');
  });

  it('survives hostile items: no link, bad links, non-strings, huge texts, markup', async () => {
    sv.setItems([
      { verbatim: { title: 'no link' } },
      { verbatim: { link: 'ftp://files.example/x', title: 'ftp' } },
      { verbatim: null },
      { verbatim: { link: 'https://ok.example/1', title: { not: 'text' }, htmlSnippet: 12, snippet: 'plain <i>fallback</i>', pagemap: { metatags: 'nope' } } },
      { link: 'https://ok.example/2', title: `<img src=x onerror=alert(1)>${'T'.repeat(600)}`, htmlSnippet: `${'w '.repeat(500)}<b>end</b>`, pagemap: { metatags: [{ 'article:published_time': 'not a date', 'og:locale': 42 }] } },
    ]);
    const res = await provider().search(request('rust'));
    expect(res.results.map((r) => r.url)).toEqual(['https://ok.example/1', 'https://ok.example/2']);
    const [a, b] = res.results;
    expect(a).toMatchObject({ title: 'ok.example', snippet: 'plain fallback', publishedAt: null, language: null, type: null });
    expect(b!.title.length).toBeLessThanOrEqual(300);
    expect(b!.title).not.toContain('<');
    expect(b!.snippet.length).toBeLessThanOrEqual(300);
    expect(b!.highlights ?? []).toEqual([]);
    expect(b!.publishedAt).toBeNull();
  });

  it('answers no results when Google has none (no items), with its total', async () => {
    const res = await provider().search(request('nothing'));
    expect(res).toMatchObject({ results: [], total: 0 });
  });

  it('fails on JSON that is not a Custom Search answer', async () => {
    sv.answer(() => ({ body: { hello: 'world' } }));
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/not a search answer/);
  });
});

describe('paging', () => {
  it('asks start=11 for results 11-20 when more are wanted, never a third page', async () => {
    sv.setItems(corpus(50));
    const res = await provider().search(request('rust', { limit: 60 }));
    expect(sv.searches().map((s) => [s.params.start, s.params.num])).toEqual([['1', '10'], ['11', '10']]);
    expect(res.results.map((r) => r.url)).toEqual(corpus(20).map((i) => i.link));
    expect(res.total).toBe(50);
  });

  it('asks for just the rest on the second page, and nothing more when Google has no next page', async () => {
    sv.setItems(corpus(50));
    await provider().search(request('rust', { limit: 14 }));
    expect(sv.searches().map((s) => [s.params.start, s.params.num])).toEqual([['1', '10'], ['11', '4']]);

    sv.reset();
    sv.setItems(corpus(10));
    const res = await provider().search(request('rust', { limit: 20 }));
    expect(sv.searches()).toHaveLength(1);
    expect(res.results).toHaveLength(10);
  });

  it('keeps the first page when the second fails, with a warning', async () => {
    sv.setItems(corpus(30));
    let n = 0;
    sv.answer(() => {
      n++;
      if (n === 1) {
        return { body: { kind: 'customsearch#search', queries: { request: [{}], nextPage: [{}] }, searchInformation: { totalResults: '30' }, items: corpus(10).map((i) => ({ ...i, kind: 'customsearch#result' })) } };
      }
      return { status: 500, body: { error: { code: 500, message: 'Internal error encountered.', errors: [{ reason: 'backendError' }], status: 'INTERNAL' } } };
    });
    const res = await provider().search(request('rust', { limit: 20 }));
    expect(res.results).toHaveLength(10);
    expect(res.warnings).toEqual([expect.objectContaining({ code: 'PROVIDER_FAILED' })]);
  });
});

describe('failures', () => {
  it('429 per minute: ProviderRateLimited for Retry-After, or a minute', async () => {
    sv.setMode('rate-limited', { retryAfter: 7 });
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(7000);

    sv.setMode('rate-limited', { retryAfter: undefined });
    const plain = await failure(provider().search(request('rust')));
    expect((plain as ProviderRateLimited).retryAfterMs).toBe(60_000);
  });

  it('429 per day, and the older 403 dailyLimitExceeded: paused until midnight Pacific time', async () => {
    for (const quota of ['day', 'legacy-daily'] as const) {
      sv.setQuota(quota);
      sv.setMode('rate-limited', { retryAfter: undefined });
      const before = Date.now();
      const err = await failure(provider().search(request('rust')));
      expect(err, quota).toBeInstanceOf(ProviderRateLimited);
      const ms = (err as ProviderRateLimited).retryAfterMs;
      const expected = msUntilPacificMidnight(before);
      expect(Math.abs(ms - expected)).toBeLessThan(5000);
      expect((err as Error).message).toMatch(/midnight Pacific/);
    }
  });

  it('computes the time to midnight Pacific across daylight saving', () => {
    // 08:00 UTC in January is midnight PST: a whole day to wait.
    expect(msUntilPacificMidnight(Date.UTC(2025, 0, 15, 8, 0, 0))).toBe(86_400_000);
    // 06:30 UTC in July is 23:30 PDT: half an hour.
    expect(msUntilPacificMidnight(Date.UTC(2025, 6, 15, 6, 30, 0))).toBe(1_800_000);
  });

  it('a key Google does not know (400 API_KEY_INVALID): PROVIDER_MISCONFIGURED naming the key setting, never the key', async () => {
    const err = await providerError(provider({ key: 'AIzaWrongSecret' }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    expect(err.message).toMatch(/SCOUR_PROVIDER_GOOGLE_KEY/);
    expect(err.message).not.toContain('AIzaWrongSecret');
  });

  it('an engine ID Google does not know (400 INVALID_ARGUMENT): PROVIDER_MISCONFIGURED naming the cx setting', async () => {
    const err = await providerError(provider({ cx: 'nope' }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    expect(err.message).toMatch(/SCOUR_PROVIDER_GOOGLE_CX/);
  });

  it('403 accessNotConfigured and 401: PROVIDER_MISCONFIGURED', async () => {
    sv.answer(() => ({
      status: 403,
      body: { error: { code: 403, message: 'Custom Search API has not been used in project 1 before or it is disabled.', errors: [{ reason: 'accessNotConfigured', domain: 'usageLimits' }], status: 'PERMISSION_DENIED' } },
    }));
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    expect(err.message).toContain('has not been used');

    sv.answer(() => ({ status: 401, body: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } } }));
    expect((await providerError(provider().search(request('rust')))).code).toBe('PROVIDER_MISCONFIGURED');
  });

  it('an unreachable service: PROVIDER_FAILED, without the key (which travels in the query) in the message', async () => {
    const p = createGoogleProvider({ egress: nodeEgress, baseUrl: 'http://127.0.0.1:1', key: 'AIzaSecretInQuery', cx: GOOGLE_CX, timeoutMs: 2000 });
    const err = await providerError(p.search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('http://127.0.0.1:1/customsearch/v1');
    expect(err.message).not.toContain('AIzaSecretInQuery');
  });

  it('5xx: PROVIDER_FAILED', async () => {
    sv.setMode('error');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(500);
    expect(err.message).toContain('Internal error encountered');
  });

  it('a body cut in the middle: PROVIDER_FAILED', async () => {
    sv.setItems(corpus(5));
    sv.setMode('malformed');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/invalid JSON/);
  });

  it('rejects with the signal\'s reason when the search gives up', async () => {
    sv.setMode('hang');
    const ac = new AbortController();
    const p = provider().search(request('rust', { signal: ac.signal }));
    setTimeout(() => ac.abort(new Error('search gave up')), 100);
    expect(((await failure(p)) as Error).message).toBe('search gave up');
  });
});
