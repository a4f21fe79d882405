/**
 * The arxiv search provider against a stand-in arXiv API on loopback
 * (test/support/standins/arxiv.ts), through the real Egress: the parameters
 * it sends and the search_query it builds (prefixes, AND/ANDNOT, phrases,
 * the submittedDate range), the Atom it reads (title, summary, authors,
 * dates, links, DOI, journal reference), what it reports as applied,
 * arXiv's error feeds and HTTP failures, abort, and hostile feeds.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import type { Egress, GuardedRequest } from '../../../core/ports.js';
import { ProviderRateLimited, type FilterName, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import { ProviderError } from '../../../plugins/sdk/search.js';
import {
  DEFAULT_BASE_URL, arxivDate, buildSearchQuery, createArxivProvider, parseXml,
} from '../../../plugins/search-providers/arxiv/index.js';
import { entryXml, errorFeed, startArxiv, type FakeArxiv, type FakeEntry } from '../../support/standins/arxiv.js';
import { EVERY_FILTER, NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let ax: FakeArxiv;
beforeAll(async () => { ax = await startArxiv(); });
afterAll(async () => { await ax.close(); });
beforeEach(() => ax.reset());

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, NOW);

const provider = (over: { baseUrl?: string; egress?: Egress; timeoutMs?: number } = {}) =>
  createArxivProvider({ egress: over.egress ?? nodeEgress, baseUrl: over.baseUrl ?? ax.url, timeoutMs: over.timeoutMs });

const entry = (n: number, over: Partial<FakeEntry> = {}): FakeEntry => ({
  id: `2301.${String(n).padStart(5, '0')}`,
  title: `Paper ${n}`,
  summary: `Abstract of paper ${n}.`,
  authors: ['Ada Lovelace'],
  published: '2023-01-02T03:04:05Z',
  ...over,
});
const entries = (n: number) => Array.from({ length: n }, (_, k) => entry(k + 1));

describe('the plugin', () => {
  it('is a search provider of kind academic, with its endpoint and what it applies', () => {
    const p = createArxivProvider({ egress: nodeEgress });
    expect(p).toMatchObject({ name: 'search-provider-arxiv', kind: 'search-provider', id: 'arxiv', kinds: ['academic'], endpoint: 'https://export.arxiv.org/api/query' });
    expect([...p.applies!].sort()).toEqual(['excluded', 'result_type', 'site', 'time_range']);
    expect(DEFAULT_BASE_URL).toBe('https://export.arxiv.org');
  });

  it('refuses a base URL that is not absolute http(s), when created', () => {
    expect(() => createArxivProvider({ egress: nodeEgress, baseUrl: 'export.arxiv.org' })).toThrow(/absolute URL/);
    expect(() => createArxivProvider({ egress: nodeEgress, baseUrl: 'https://export.arxiv.org/#x' })).toThrow(/query or fragment/);
  });
});

describe('what it sends', () => {
  it('asks GET /api/query with search_query, start, max_results and relevance order', async () => {
    ax.setEntries(entries(2));
    await provider().search(request('graphene', { limit: 7 }));
    const [s] = ax.queries();
    expect(s!.method).toBe('GET');
    expect(s!.params).toEqual({ search_query: 'all:graphene', start: '0', max_results: '7', sortBy: 'relevance', sortOrder: 'descending' });
    expect(s!.headers.accept).toContain('application/atom+xml');
    expect(s!.headers['user-agent']).toMatch(/^Scour\//);
  });

  it('passes every exchange the timeout and the request\'s signal', async () => {
    const calls: GuardedRequest[] = [];
    const recording: Egress = { fetch: (url, r) => { calls.push(r); return nodeEgress.fetch(url, r); }, resolveAll: (h, p) => nodeEgress.resolveAll(h, p) };
    const controller = new AbortController();
    await provider({ egress: recording, timeoutMs: 3456 }).search(request('graphene', { signal: controller.signal }));
    expect(calls.map((c) => c.timeoutMs)).toEqual([3456]);
    controller.abort();
    expect(calls[0]!.signal?.aborted).toBe(true);
  });
});

describe('the search_query it builds', () => {
  const cases: [string, Partial<SearchFilters>, string][] = [
    ['graphene oxide', {}, 'all:graphene AND all:oxide'],
    ['"quantum criticality" electron', {}, 'all:electron AND all:"quantum criticality"'],
    ['intitle:checkerboard lattice', {}, 'all:lattice AND ti:checkerboard'],
    ['intitle:"quantum criticality"', {}, 'ti:"quantum criticality"'],
    ['electron -proton', {}, 'all:electron ANDNOT all:proton'],
    ['electron spin -proton -"dark matter"', {}, '(all:electron AND all:spin) ANDNOT (all:proton OR all:"dark matter")'],
    ['"red car" OR "blue bike" review', {}, 'all:review AND (all:"red car" OR all:"blue bike")'],
    // No operator, prefix, wildcard or parenthesis of the user's reaches the parser.
    ['au:hawking (black holes) AND* ANDNOT co-op', {}, 'all:"au hawking" AND all:black AND all:holes AND all:and AND all:andnot AND all:"co op"'],
    ['site:arxiv.org graphene', {}, 'all:graphene'],
    ['graphene', { publishedAfter: Date.UTC(2026, 10, 21, 12, 30, 45), timeRange: 'week' }, 'all:graphene AND submittedDate:[202611211230 TO 202611281200]'],
    ['graphene oxide -cheap', { publishedAfter: Date.UTC(2026, 9, 28) }, '(all:graphene AND all:oxide) AND submittedDate:[202610280000 TO 202611281200] ANDNOT all:cheap'],
  ];
  for (const [q, filters, sq] of cases) {
    it(`${q}${filters.publishedAfter === undefined ? '' : ' (dated)'} -> ${sq}`, () => {
      expect(buildSearchQuery(request(q, { filters }))).toBe(sq);
    });
  }

  it('formats dates as arXiv does: YYYYMMDDHHMM, GMT', () => {
    expect(arxivDate(Date.UTC(2007, 9, 18, 12, 25, 34))).toBe('200710181225');
  });

  it('is what arXiv receives, and arXiv accepts it', async () => {
    ax.setEntries(entries(1));
    const res = await provider().search(request('electron spin -proton "dark matter"', { filters: { publishedAfter: Date.UTC(2020, 0, 1) } }));
    expect(ax.queries()[0]!.params.search_query).toBe('(all:electron AND all:spin AND all:"dark matter") AND submittedDate:[202001010000 TO 202611281200] ANDNOT all:proton');
    expect(res.results).toHaveLength(1);
  });
});

describe('filters', () => {
  it('time_range is applied through submittedDate, and arXiv honours it', async () => {
    ax.setEntries([entry(1, { published: '2026-11-25T10:00:00Z' }), entry(2, { published: '2026-01-01T00:00:00Z' })]);
    const res = await provider().search(request('graphene', { filters: { timeRange: 'week', publishedAfter: Date.UTC(2026, 10, 21, 12) } }));
    expect(res.results.map((r) => r.title)).toEqual(['Paper 1']);
    expect([...res.applied].sort()).toEqual(['excluded', 'result_type', 'site', 'time_range']);
  });

  it('language, country and safe_search are not applied', async () => {
    const res = await provider().search(request('graphene', { filters: { language: 'de', country: 'DE', safeSearch: 'strict' } }));
    expect([...res.applied].sort()).toEqual(['excluded', 'result_type', 'site']);
    expect(ax.queries()).toHaveLength(1);
  });

  it('answers result_type news with nothing, every filter applied, without a request', async () => {
    const res = await provider().search(request('graphene', { filters: { resultType: 'news' } }));
    expect(res).toEqual({ results: [], total: 0, applied: new Set(EVERY_FILTER) });
    expect(ax.requests).toHaveLength(0);
  });

  it('decides site: and -site: from arxiv.org, without a request when nothing can match', async () => {
    ax.setEntries(entries(1));
    for (const q of ['graphene site:arxiv.org', 'graphene site:arxiv.org -site:export.arxiv.org', 'graphene -site:example.org', 'graphene site:example.org site:arxiv.org']) {
      expect((await provider().search(request(q))).results, q).toHaveLength(1);
    }
    expect(ax.queries()).toHaveLength(4);
    for (const q of ['graphene site:export.arxiv.org', 'graphene site:example.org', 'graphene -site:arxiv.org']) {
      const res = await provider().search(request(q));
      expect(res, q).toEqual({ results: [], total: 0, applied: new Set(['result_type', 'site', 'excluded']) });
    }
    expect(ax.queries()).toHaveLength(4);
  });
});

describe('what it returns', () => {
  it('maps an entry: abstract page, title, summary, authors, published date, PDF, DOI, journal reference', async () => {
    ax.setEntries([entry(1, {
      id: 'hep-ex/0307015', version: 2,
      title: 'Multi-Electron Production at High\n      Transverse Momenta in ep Collisions at HERA',
      summary: '  Multi-electron production is studied at high electron transverse momentum\n  in positron- and electron-proton collisions using the H1 detector at HERA.\n',
      authors: [{ name: 'H1 Collaboration', affiliation: 'DESY' }, 'A. Aktas'],
      published: '2003-07-07T13:46:39-04:00', updated: '2003-09-01T10:00:00-04:00',
      doi: '10.1140/epjc/s2003-01326-x', journalRef: 'Eur.Phys.J. C31 (2003) 17-29', comment: '23 pages, 8 figures',
    })]);
    ax.setTotal(123456);
    const res = await provider().search(request('electron'));
    expect(res.total).toBe(123456);
    expect(res.results).toEqual([{
      url: 'https://arxiv.org/abs/hep-ex/0307015v2',
      title: 'Multi-Electron Production at High Transverse Momenta in ep Collisions at HERA',
      snippet: 'Multi-electron production is studied at high electron transverse momentum in positron- and electron-proton collisions using the H1 detector at HERA.',
      publishedAt: Date.UTC(2003, 6, 7, 17, 46, 39),
      type: 'academic',
      language: null,
      country: null,
      safe: null,
      doi: '10.1140/epjc/s2003-01326-x',
      authors: ['H1 Collaboration', 'A. Aktas'],
      venue: 'Eur.Phys.J. C31 (2003) 17-29',
      fullTextUrl: 'https://arxiv.org/pdf/hep-ex/0307015v2',
      abstract: 'Multi-electron production is studied at high electron transverse momentum in positron- and electron-proton collisions using the H1 detector at HERA.',
    }]);
  });

  it('names arXiv as the venue without a journal reference, keeps the whole abstract and cuts the snippet', async () => {
    const long = `${'Word '.repeat(200)}end.`;
    ax.setEntries([entry(1, { summary: long })]);
    const [r] = (await provider().search(request('electron'))).results;
    expect(r!.venue).toBe('arXiv');
    expect(r!.doi).toBeNull();
    expect(r!.abstract).toBe(long.trim());
    expect(r!.snippet.length).toBeLessThanOrEqual(300);
    expect(r!.snippet.endsWith('\u2026')).toBe(true);
  });

  it('answers an empty feed as empty, with total 0', async () => {
    const res = await provider().search(request('nothing'));
    expect(res.results).toEqual([]);
    expect(res.total).toBe(0);
  });

  it('asks one request of up to 200, and a second with start only past that', async () => {
    ax.setEntries(entries(30));
    expect((await provider().search(request('x', { limit: 25 }))).results).toHaveLength(25);
    expect(ax.queries().map((q) => [q.params.start, q.params.max_results])).toEqual([['0', '25']]);

    ax.reset();
    ax.setEntries(entries(260));
    const many = await provider().search(request('x', { limit: 250 }));
    expect(ax.queries().map((q) => [q.params.start, q.params.max_results])).toEqual([['0', '200'], ['200', '50']]);
    expect(many.results).toHaveLength(250);
    expect(many.results[249]!.title).toBe('Paper 250');
  });

  it('survives hostile entries: no link, markup, CDATA, entities, huge and control-laden text, odd dates', async () => {
    const nolink = '  <entry><id>urn:uuid:1</id><title>No link</title><summary>x</summary></entry>\n';
    const js = '  <entry><id>javascript:alert(1)</id><title>JS</title><link href="javascript:alert(1)" rel="alternate" type="text/html"/></entry>\n';
    const htmlTitle = `  <entry><id>http://arxiv.org/abs/2301.00009v1</id><title type="html">&lt;b&gt;Bold&lt;/b&gt; &amp;amp; claim</title><summary><![CDATA[Uses <x, y> & a < b]]></summary><published>not a date</published><updated>2023-02-03T04:05:06Z</updated><author><name>  Ann\u0007 Lee  </name></author><author><name></name></author><arxiv:doi>10.1234/ONE 10.5678/two</arxiv:doi></entry>\n`;
    const textTitle = `  <entry><id>http://arxiv.org/abs/2301.00010v1</id><title>&lt;script&gt;alert(1)&lt;/script&gt; &#x2603;</title><summary>Has <i>markup</i> inside</summary><link title="doi" href="https://doi.org/10.5555/ABC" rel="related"/></entry>\n`;
    const huge = entryXml(entry(11, { title: 'T'.repeat(5000), summary: 'S '.repeat(100_000), authors: Array.from({ length: 300 }, (_, i) => `Author ${i}`) }));
    ax.setEntries([{ verbatim: nolink }, { verbatim: js }, { verbatim: htmlTitle }, { verbatim: textTitle }, { verbatim: huge }, entry(11)]);
    const res = await provider().search(request('x'));
    expect(res.results.map((r) => r.url)).toEqual(['http://arxiv.org/abs/2301.00009v1', 'http://arxiv.org/abs/2301.00010v1', 'https://arxiv.org/abs/2301.00011v1']);
    const [a, b, c] = res.results;
    expect(a!.title).toBe('Bold & claim');
    expect(a!.abstract).toBe('Uses <x, y> & a < b');
    expect(a!.publishedAt).toBe(Date.UTC(2023, 1, 3, 4, 5, 6));
    expect(a!.authors).toEqual(['Ann Lee']);
    expect(a!.doi).toBe('10.1234/one');
    expect(a!.fullTextUrl).toBeNull();
    expect(b!.title).toBe('<script>alert(1)</script> \u2603');
    expect(b!.abstract).toBe('Has markup inside');
    expect(b!.doi).toBe('10.5555/abc');
    expect(c!.title.length).toBeLessThanOrEqual(300);
    expect(c!.snippet.length).toBeLessThanOrEqual(300);
    expect(c!.authors).toHaveLength(300);
  });

  it('parses only whole XML documents', () => {
    expect(parseXml('<feed><entry/></feed>', 'x').children.map((c) => c.name)).toEqual(['entry']);
    expect(() => parseXml('<feed><entry>', 'x')).toThrow(/not a whole XML document/);
    expect(() => parseXml('', 'x')).toThrow(/empty/);
    expect(() => parseXml('just text', 'x')).toThrow(ProviderError);
  });
});

describe('arXiv errors', () => {
  it('an error feed with HTTP 400 is PROVIDER_FAILED with arXiv\'s summary', async () => {
    ax.setRaw({ status: 400, headers: { 'content-type': 'application/atom+xml' }, body: errorFeed('max_results must be an integer') });
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(400);
    expect(err.message).toContain('max_results must be an integer');
  });

  it('an error feed with HTTP 200 (the older service) is PROVIDER_FAILED, not an e-print titled Error', async () => {
    ax.setRaw({ status: 200, headers: { 'content-type': 'application/atom+xml' }, body: errorFeed('incorrect id format for 1234.12345', 'http://arxiv.org/api/errors#incorrect_id_format_for_1234.12345') });
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('incorrect id format for 1234.12345');
    // A real e-print may be titled "Error": it is a result.
    ax.setRaw(undefined);
    ax.setEntries([entry(1, { title: 'Error' })]);
    expect((await provider().search(request('graphene'))).results.map((r) => r.title)).toEqual(['Error']);
  });

  it('arXiv\'s own validation refuses a query the provider did not build as documented', async () => {
    ax.setLegacyErrors(false);
    const bad = createArxivProvider({
      egress: { fetch: (url, r) => nodeEgress.fetch(url.replace('submittedDate%3A%5B', 'submittedDate%3A%5B2026'), r), resolveAll: (h, p) => nodeEgress.resolveAll(h, p) },
      baseUrl: ax.url,
    });
    const err = await providerError(bad.search(request('graphene', { filters: { publishedAfter: Date.UTC(2026, 0, 1) } })));
    expect(err.message).toMatch(/submittedDate range/);
  });

  it('429 rejects with ProviderRateLimited for the Retry-After, a minute when none is given', async () => {
    ax.setMode('rate-limited', { retryAfter: 3 });
    expect(((await failure(provider().search(request('graphene')))) as ProviderRateLimited).retryAfterMs).toBe(3000);
    ax.setMode('rate-limited', { retryAfter: undefined });
    const err = await failure(provider().search(request('graphene')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(60_000);
  });

  it('500 is PROVIDER_FAILED', async () => {
    ax.setMode('error');
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(500);
  });

  it('401 and 403 are PROVIDER_MISCONFIGURED', async () => {
    for (const status of [401, 403]) {
      ax.setRaw({ status, headers: { 'content-type': 'text/html' }, body: '<html><body>Forbidden</body></html>' });
      expect((await providerError(provider().search(request('graphene')))).code).toBe('PROVIDER_MISCONFIGURED');
    }
  });

  it('a feed cut in the middle, an HTML page or another XML root is PROVIDER_FAILED', async () => {
    ax.setEntries(entries(5));
    ax.setMode('malformed');
    const cut = await providerError(provider().search(request('graphene')));
    expect(cut.code).toBe('PROVIDER_FAILED');
    expect(cut.message).toMatch(/not a whole XML document/);
    ax.setMode('ok');
    ax.setRaw({ status: 200, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><body><p>Maintenance</p>' });
    expect((await providerError(provider().search(request('graphene')))).code).toBe('PROVIDER_FAILED');
    ax.setRaw({ status: 200, headers: { 'content-type': 'application/xml' }, body: '<?xml version="1.0"?><rss><channel/></rss>' });
    expect((await providerError(provider().search(request('graphene')))).message).toMatch(/not an Atom feed/);
  });

  it('times out with PROVIDER_TIMEOUT past timeoutMs', async () => {
    ax.setMode('hang');
    expect((await providerError(provider({ timeoutMs: 300 }).search(request('graphene')))).code).toBe('PROVIDER_TIMEOUT');
  });

  it('rejects with the signal\'s reason when the search gives up', async () => {
    ax.setMode('hang');
    const controller = new AbortController();
    const reason = new Error('client went away');
    setTimeout(() => controller.abort(reason), 100);
    expect(await failure(provider().search(request('graphene', { signal: controller.signal })))).toBe(reason);
  });
});
