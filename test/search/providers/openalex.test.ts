/**
 * The openalex search provider against a stand-in OpenAlex API on loopback
 * (test/support/standins/openalex.ts), through the real Egress: the
 * parameters it sends (search syntax, filter, select, page size, key and
 * contact), field mapping (abstract rebuilt, landing page, open-access copy,
 * DOI, authors, venue), what it reports as applied, OpenAlex's error bodies
 * and statuses, abort, and hostile answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import type { Egress, GuardedRequest } from '../../../core/ports.js';
import { ProviderRateLimited, type FilterName, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import { ProviderError } from '../../../plugins/sdk/search.js';
import {
  DEFAULT_BASE_URL, SELECT, buildSearch, createOpenalexProvider, rebuildAbstract,
} from '../../../plugins/search-providers/openalex/index.js';
import { WORK_FIELDS, startOpenalex, work, type FakeOpenalex } from '../../support/standins/openalex.js';
import { EVERY_FILTER, NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let oa: FakeOpenalex;
beforeAll(async () => { oa = await startOpenalex(); });
afterAll(async () => { await oa.close(); });
beforeEach(() => oa.reset());

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, Date.UTC(2026, 10, 28, 12, 0, 0));

const provider = (over: { baseUrl?: string; egress?: Egress; timeoutMs?: number; contactEmail?: string; key?: string } = {}) =>
  createOpenalexProvider({ egress: over.egress ?? nodeEgress, baseUrl: over.baseUrl ?? oa.url, timeoutMs: over.timeoutMs, contactEmail: over.contactEmail, key: over.key });

const works = (n: number, from = 1) => Array.from({ length: n }, (_, k) => work(from + k));

describe('the plugin', () => {
  it('is a search provider of kind academic, with its endpoint and what it applies', () => {
    const p = createOpenalexProvider({ egress: nodeEgress });
    expect(p).toMatchObject({ name: 'search-provider-openalex', kind: 'search-provider', id: 'openalex', kinds: ['academic'], endpoint: 'https://api.openalex.org/works' });
    expect([...p.applies!].sort()).toEqual(['excluded', 'language', 'result_type', 'time_range']);
    expect(DEFAULT_BASE_URL).toBe('https://api.openalex.org');
    expect(createOpenalexProvider({ egress: nodeEgress, baseUrl: 'https://u:p@mirror.example/oa/' }).endpoint).toBe('https://mirror.example/oa/works');
  });

  it('refuses a base URL that is not absolute http(s), when created', () => {
    expect(() => createOpenalexProvider({ egress: nodeEgress, baseUrl: 'api.openalex.org' })).toThrow(/absolute URL/);
    expect(() => createOpenalexProvider({ egress: nodeEgress, baseUrl: 'https://api.openalex.org/?x=1' })).toThrow(/query or fragment/);
  });
});

describe('what it sends', () => {
  it('asks GET /works with search, select, per-page and page, and no key or contact when none is set', async () => {
    oa.setWorks(works(3));
    await provider().search(request('graphene', { limit: 7 }));
    const [s] = oa.works();
    expect(s!.method).toBe('GET');
    expect(s!.params).toEqual({ search: 'graphene', select: SELECT, 'per-page': '7', page: '1' });
    expect(s!.headers.accept).toContain('application/json');
    expect(s!.headers['user-agent']).toMatch(/^Scour\//);
  });

  it('selects only fields a Work declares (OpenAlex refuses any other)', () => {
    for (const f of SELECT.split(',')) expect(WORK_FIELDS as readonly string[]).toContain(f);
  });

  it('sends api_key from the key setting and mailto from the contact address', async () => {
    oa.setKeys(['k-123']);
    await provider({ key: ' k-123 ', contactEmail: 'ops@example.org' }).search(request('graphene'));
    expect(oa.works()[0]!.params).toMatchObject({ api_key: 'k-123', mailto: 'ops@example.org' });
    // A blank key is not sent (OpenAlex answers a blank key with 401).
    await provider({ key: '  ' }).search(request('graphene'));
    expect(oa.works()[1]!.params.api_key).toBeUndefined();
  });

  it('never shows the key in messages', async () => {
    oa.setMode('error');
    const err = await providerError(provider({ key: 'sekrit-key' }).search(request('graphene')));
    expect(err.message).not.toContain('sekrit');
  });

  it('passes every exchange the timeout and the request\'s signal', async () => {
    const calls: GuardedRequest[] = [];
    const recording: Egress = { fetch: (url, r) => { calls.push(r); return nodeEgress.fetch(url, r); }, resolveAll: (h, p) => nodeEgress.resolveAll(h, p) };
    const controller = new AbortController();
    await provider({ egress: recording, timeoutMs: 2345 }).search(request('graphene', { signal: controller.signal }));
    expect(calls.map((c) => c.timeoutMs)).toEqual([2345]);
    controller.abort();
    expect(calls[0]!.signal?.aborted).toBe(true);
  });
});

describe('the search it builds', () => {
  const cases: [string, string][] = [
    ['graphene oxide membranes', 'graphene oxide membranes'],
    ['"sesame street" elmo', 'elmo "sesame street"'],
    ['elmo -cookie -"cookie monster"', 'elmo NOT cookie NOT "cookie monster"'],
    ['intitle:"deep learning" survey', 'survey "deep learning"'],
    ['"red car" OR "blue bike" review', 'review ("red car" OR "blue bike")'],
    // Wildcards, field syntax and the user's own operators never reach the parser.
    ['what is graphene? wild* AND NOT (x) title:y', 'what is graphene wild and not x "title y"'],
    ['site:nature.com graphene', 'graphene'],
  ];
  for (const [q, search] of cases) {
    it(`${q} -> ${search}`, () => {
      expect(buildSearch(request(q).query)).toBe(search);
    });
  }

  it('is what OpenAlex receives, and it accepts it (no wildcard, balanced)', async () => {
    oa.setWorks(works(1));
    const res = await provider().search(request('why graphene? "oxide membranes" -(cheap)'));
    expect(oa.works()[0]!.params.search).toBe('why graphene "oxide membranes" NOT cheap');
    expect(res.results).toHaveLength(1);
  });
});

describe('filters', () => {
  it('language -> language:xx, time_range -> from_publication_date: both applied, and honoured', async () => {
    oa.setWorks([
      work(1, { language: 'de', publication_date: '2026-11-25' }),
      work(2, { language: 'en', publication_date: '2026-11-25' }),
      work(3, { language: 'de', publication_date: '2026-01-01' }),
    ]);
    const res = await provider().search(request('graphene', { filters: { language: 'de', timeRange: 'week', publishedAfter: Date.UTC(2026, 10, 21, 12, 30) } }));
    expect(oa.works()[0]!.params.filter).toBe('language:de,from_publication_date:2026-11-21');
    expect(res.results.map((r) => r.url)).toEqual(['https://publisher.example/article/1']);
    expect([...res.applied].sort()).toEqual(['language', 'result_type', 'time_range']);
  });

  it('excluded is applied through NOT; country, site and safe_search are not', async () => {
    oa.setWorks(works(1));
    const res = await provider().search(request('graphene -cheap site:nature.com', { filters: { country: 'DE', safeSearch: 'strict' } }));
    expect(oa.works()[0]!.params.filter).toBeUndefined();
    expect([...res.applied].sort()).toEqual(['excluded', 'result_type']);
  });

  it('answers result_type news with nothing, every filter applied, without a request', async () => {
    const res = await provider().search(request('graphene', { filters: { resultType: 'news' } }));
    expect(res).toEqual({ results: [], total: 0, applied: new Set(EVERY_FILTER) });
    expect(oa.requests).toHaveLength(0);
  });

  it('does not send a language that is not ISO 639-1', async () => {
    const res = await provider().search(request('graphene', { filters: { language: 'x-klingon' } }));
    expect(oa.works()[0]!.params.filter).toBeUndefined();
    expect(res.applied.has('language')).toBe(false);
  });
});

describe('what it returns', () => {
  it('maps a Work: landing page, title, rebuilt abstract, authors, venue, bare DOI, open-access PDF, date, language, score', async () => {
    oa.setWorks([work(1, { relevance_score: 812.5 })]);
    oa.setCount(98765);
    const res = await provider().search(request('examples'));
    expect(res.total).toBe(98765);
    expect(res.results).toEqual([{
      url: 'https://publisher.example/article/1',
      title: 'Work number 1',
      snippet: 'We study examples of many examples',
      publishedAt: Date.UTC(2021, 2, 4),
      score: 812.5,
      type: 'academic',
      language: 'en',
      country: null,
      safe: null,
      doi: '10.1234/ex.1',
      authors: ['Ada Lovelace', 'Charles Babbage'],
      venue: 'Journal of Examples',
      fullTextUrl: 'https://repository.example/1.pdf',
      abstract: 'We study examples of many examples',
    }]);
  });

  it('links the DOI when there is no landing page, else the OpenAlex id; open access falls back to oa_url, then the OA landing page', async () => {
    oa.setWorks([
      work(1, { primary_location: { landing_page_url: null, source: null }, best_oa_location: { pdf_url: null, landing_page_url: 'https://repo.example/r/1' }, open_access: { is_oa: true, oa_url: 'https://oa.example/1' } }),
      work(2, { primary_location: null, doi: null, best_oa_location: { pdf_url: null, landing_page_url: 'https://repo.example/r/2' }, open_access: { is_oa: false, oa_url: null } }),
      work(3, { primary_location: { landing_page_url: 'javascript:alert(1)' }, doi: 'not a doi', id: 'https://openalex.org/W3', best_oa_location: null, open_access: null }),
      work(4, { best_oa_location: { pdf_url: 'https://repo.example/4.pdf', landing_page_url: 'https://repo.example/r/4' }, open_access: { is_oa: true, oa_url: 'https://repo.example/r/4' } }),
    ]);
    const res = await provider().search(request('examples'));
    expect(res.results.map((r) => [r.url, r.fullTextUrl, r.venue, r.doi])).toEqual([
      ['https://doi.org/10.1234/ex.1', 'https://oa.example/1', null, '10.1234/ex.1'],
      ['https://openalex.org/W1002', 'https://repo.example/r/2', null, null],
      ['https://openalex.org/W3', null, null, null],
      ['https://publisher.example/article/4', 'https://repo.example/4.pdf', 'Journal of Examples', '10.1234/ex.4'],
    ]);
  });

  it('rebuilds abstracts by position, and tolerates broken indexes', () => {
    expect(rebuildAbstract({ world: [1], Hello: [0], again: [3], '&amp;': [2] })).toBe('Hello world & again');
    expect(rebuildAbstract(null)).toBeNull();
    expect(rebuildAbstract({})).toBeNull();
    expect(rebuildAbstract({ a: 'x', b: [-1, 1.5, 'y'], c: [1e12] })).toBeNull();
    expect(rebuildAbstract(['array'])).toBeNull();
  });

  it('answers an empty result set as empty, with total 0', async () => {
    const res = await provider().search(request('nothing'));
    expect(res.results).toEqual([]);
    expect(res.total).toBe(0);
  });

  it('asks one page of up to 200, and a second only past that', async () => {
    oa.setWorks(works(250));
    const few = await provider().search(request('examples', { limit: 50 }));
    expect(few.results).toHaveLength(50);
    expect(oa.works().map((s) => [s.params['per-page'], s.params.page])).toEqual([['50', '1']]);

    oa.reset();
    oa.setWorks(works(250));
    const many = await provider().search(request('examples', { limit: 300 }));
    expect(oa.works().map((s) => [s.params['per-page'], s.params.page])).toEqual([['200', '1'], ['200', '2']]);
    expect(many.results).toHaveLength(250);
    expect(many.results[249]!.url).toBe('https://publisher.example/article/250');
  });

  it('survives hostile works: no link, non-string fields, markup, huge strings, absurd indexes', async () => {
    const hugeIndex: Record<string, number[]> = {};
    for (let i = 0; i < 3000; i++) hugeIndex[`w${i}`] = [i];
    oa.setWorks([
      { id: null, doi: null, title: 'No link at all', primary_location: null },
      { id: 12, title: 'Numeric id' },
      'not an object' as unknown as Record<string, unknown>,
      work(1, { title: '<i>Italic</i> &amp; <script>x()</script>', authorships: [{ author: { display_name: 42 } }, { author: null }, 'x', { author: { display_name: '<b>Ann</b> Lee' } }], language: 'english', publication_date: 'soon', publication_year: 'old' }),
      work(2, { title: 'y'.repeat(10_000), abstract_inverted_index: hugeIndex, primary_location: { landing_page_url: 'https://publisher.example/article/2', source: { display_name: ['list'] } } }),
      work(3, { title: null, display_name: null, publication_date: null, publication_year: 1999, relevance_score: 'high' }),
      work(1),
    ]);
    const res = await provider().search(request('examples'));
    expect(res.results.map((r) => r.url)).toEqual(['https://publisher.example/article/1', 'https://publisher.example/article/2', 'https://publisher.example/article/3']);
    const [a, b, c] = res.results;
    expect(a!.title).toBe('Italic & x()');
    expect(a!.authors).toEqual(['Ann Lee']);
    expect(a!.language).toBeNull();
    expect(a!.publishedAt).toBeNull();
    expect(b!.title.length).toBeLessThanOrEqual(300);
    expect(b!.snippet.length).toBeLessThanOrEqual(300);
    expect(b!.abstract!.split(' ')).toHaveLength(3000);
    expect(b!.venue).toBeNull();
    expect(c!.title).toBe('10.1234/ex.3');
    expect(c!.publishedAt).toBe(Date.UTC(1999, 0, 1));
    expect(c!.score).toBeUndefined();
  });
});

describe('OpenAlex errors', () => {
  it('a refused parameter (400 Invalid query parameters error.) is PROVIDER_FAILED with OpenAlex\'s message', async () => {
    oa.setRaw({ status: 400, body: { error: 'Invalid query parameters error.', message: 'language is not a valid field.' } });
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(400);
    expect(err.message).toContain('language is not a valid field');
  });

  it('the same refusal with 403 (older deployments) is PROVIDER_FAILED, not a key problem', async () => {
    oa.setLegacy403(true);
    oa.setRaw({ status: 403, body: { error: 'Invalid query parameters error.', message: 'Param per-page must be a number.' } });
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(403);
  });

  it('an error body with HTTP 200 is PROVIDER_FAILED', async () => {
    oa.setRaw({ status: 200, body: { error: 'Invalid query parameters error.', message: 'Wildcards (* or ?) require exact (no-stem) search.' } });
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('Wildcards');
  });

  it('403 "Rate limit exceeded" is a rate limit (the error page\'s 403), for its Retry-After', async () => {
    oa.setForbidden({ error: 'Rate limit exceeded', message: 'Slow down: at most 100 requests per second.' }, { 'retry-after': '2' });
    const err = await failure(provider().search(request('graphene')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(2000);
  });

  it('any other 403, and 401 (a refused key), are PROVIDER_MISCONFIGURED', async () => {
    oa.setForbidden('<html><body>Access denied</body></html>');
    const html = await providerError(provider().search(request('graphene')));
    expect(html.code).toBe('PROVIDER_MISCONFIGURED');
    oa.setForbidden({ error: 'Forbidden', message: 'This key has been disabled.' });
    expect((await providerError(provider().search(request('graphene')))).code).toBe('PROVIDER_MISCONFIGURED');
    oa.setForbidden(undefined);
    oa.setKeys(['right']);
    const key = await providerError(provider({ key: 'wrong' }).search(request('graphene')));
    expect(key.code).toBe('PROVIDER_MISCONFIGURED');
    expect(key.status).toBe(401);
    expect(key.message).toContain('SCOUR_PROVIDER_OPENALEX_KEY');
  });

  it('429 rejects with ProviderRateLimited for the Retry-After, a minute when none is given', async () => {
    oa.setMode('rate-limited', { retryAfter: 120 });
    expect(((await failure(provider().search(request('graphene')))) as ProviderRateLimited).retryAfterMs).toBe(120_000);
    oa.setMode('rate-limited', { retryAfter: undefined });
    const err = await failure(provider().search(request('graphene')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(60_000);
  });

  it('500 is PROVIDER_FAILED', async () => {
    oa.setMode('error');
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(500);
  });

  it('a body cut in the middle, or JSON without results, is PROVIDER_FAILED', async () => {
    oa.setWorks(works(3));
    oa.setMode('malformed');
    const cut = await providerError(provider().search(request('graphene')));
    expect(cut.code).toBe('PROVIDER_FAILED');
    expect(cut.message).toMatch(/invalid JSON/);
    oa.setMode('ok');
    oa.setRaw({ status: 200, body: { meta: { count: 1 } } });
    expect((await providerError(provider().search(request('graphene')))).message).toMatch(/without "results"/);
  });

  it('times out with PROVIDER_TIMEOUT past timeoutMs', async () => {
    oa.setMode('hang');
    expect((await providerError(provider({ timeoutMs: 300 }).search(request('graphene')))).code).toBe('PROVIDER_TIMEOUT');
  });

  it('rejects with the signal\'s reason when the search gives up', async () => {
    oa.setMode('hang');
    const controller = new AbortController();
    const reason = new Error('client went away');
    setTimeout(() => controller.abort(reason), 100);
    expect(await failure(provider().search(request('graphene', { signal: controller.signal })))).toBe(reason);
  });
});
