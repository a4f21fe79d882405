/**
 * The crossref search provider against a stand-in Crossref on loopback
 * (test/support/standins/crossref.ts), through the real Egress: what it
 * sends (query, rows, select, the date filter, the polite-pool contact, the
 * Plus token), how works become results (DOI, authors, venue, date parts,
 * JATS abstracts, full-text links), what it reports as applied, each
 * failure (429 with Retry-After or the advertised interval, validation
 * failures, 5xx, malformed, 401/403), empty answers, abort and hostile fields.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import { ProviderRateLimited, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import {
  abstractText, APPLIES, createCrossrefProvider, DEFAULT_BASE_URL, intervalMs, SELECT, toProviderResult,
} from '../../../plugins/search-providers/crossref/index.js';
import { ProviderError, PROVIDER_USER_AGENT } from '../../../plugins/sdk/provider.js';
import { SELECTABLE, startCrossref, type CrossrefStandin } from '../../support/standins/crossref.js';
import { NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let cr: CrossrefStandin;
beforeAll(async () => { cr = await startCrossref(); });
afterAll(async () => { await cr.close(); });
beforeEach(() => cr.reset());

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, Date.now());

const provider = (over: { baseUrl?: string; contactEmail?: string; key?: string; timeoutMs?: number } = {}) =>
  createCrossrefProvider({ egress: nodeEgress, baseUrl: over.baseUrl ?? cr.url, contactEmail: over.contactEmail, key: over.key, timeoutMs: over.timeoutMs ?? 5_000 });

/** A work as Crossref deposits it. */
function work(n: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    indexed: { 'date-parts': [[2025, 1, 2]], 'date-time': '2025-01-02T00:00:00Z', timestamp: 1735776000000 },
    'reference-count': 12,
    publisher: 'Example Press',
    DOI: `10.5555/Work.${n}`,
    type: 'journal-article',
    created: { 'date-parts': [[2020, 3, 1]], 'date-time': '2020-03-01T10:00:00Z', timestamp: 1583056800000 },
    source: 'Crossref',
    title: [`Graphene transistors ${n}`],
    prefix: '10.5555',
    author: [{ given: 'Ada', family: 'Lovelace', sequence: 'first', affiliation: [] }, { given: 'Alan', family: 'Turing', sequence: 'additional', affiliation: [] }],
    member: '7822',
    'container-title': ['Journal of Examples'],
    URL: `https://doi.org/10.5555/work.${n}`,
    published: { 'date-parts': [[2021, 6, 15]] },
    issued: { 'date-parts': [[2021, 6, 15]] },
    score: 20.5,
    ...over,
  };
}

describe('what the provider sends', () => {
  it('is a search-provider plugin with its id, kinds, endpoint and the filters it applies', () => {
    const p = provider();
    expect(p).toMatchObject({ name: 'search-provider-crossref', kind: 'search-provider', id: 'crossref', kinds: ['academic'], endpoint: cr.url });
    expect([...p.applies!].sort()).toEqual(['result_type', 'time_range']);
    expect(createCrossrefProvider({ egress: nodeEgress }).endpoint).toBe(DEFAULT_BASE_URL);
  });

  it('asks GET /works with the query words, rows = limit and the selected fields, nothing else without options', async () => {
    cr.setItems([work(1)]);
    await provider().search(request('"graphene transistors" mobility -silicon site:doi.org', { limit: 7 }));
    const [s] = cr.searches();
    expect(s!.method).toBe('GET');
    expect(s!.params).toEqual({ query: 'graphene transistors mobility', rows: '7', select: SELECT.join(',') });
    expect(s!.headers['user-agent']).toBe(PROVIDER_USER_AGENT);
    expect(s!.headers.accept).toContain('application/json');
    expect(s!.headers['accept-encoding']).toMatch(/gzip/);
    expect(s!.headers['crossref-plus-api-token']).toBeUndefined();
    expect(s!.headers.authorization).toBeUndefined();
    // Every selected field is one Crossref accepts (the stand-in refuses others as Crossref does).
    for (const f of SELECT) expect(SELECTABLE.has(f), f).toBe(true);
  });

  it('joins the polite pool with the contact email (mailto and User-Agent) and sends a Plus token when a key is set', async () => {
    cr.setItems([work(1)]);
    await provider({ contactEmail: 'ops@example.org', key: 'tok-123' }).search(request('graphene'));
    const [s] = cr.searches();
    expect(s!.params.mailto).toBe('ops@example.org');
    expect(s!.headers['user-agent']).toContain('mailto:ops@example.org');
    expect(s!.headers['user-agent']).toMatch(/^Scour\//);
    expect(s!.headers['crossref-plus-api-token']).toBe('Bearer tok-123');
  });

  it('caps rows at 1000 and keeps credentials of the base URL out of the endpoint', async () => {
    cr.setItems([work(1)]);
    const withAuth = cr.url.replace('http://', 'http://u:p%40ss@');
    const p = provider({ baseUrl: `${withAuth}/` });
    expect(p.endpoint).toBe(cr.url);
    await p.search(request('graphene', { limit: 5000 }));
    const [s] = cr.searches();
    expect(s!.params.rows).toBe('1000');
    expect(s!.headers.authorization).toBe(`Basic ${Buffer.from('u:p@ss').toString('base64')}`);
  });

  it('refuses a base URL that is not http(s) when created', () => {
    expect(() => createCrossrefProvider({ egress: nodeEgress, baseUrl: 'ftp://crossref' })).toThrow(/http or https/);
    expect(() => createCrossrefProvider({ egress: nodeEgress, baseUrl: 'http://x/?a=1' })).toThrow(/query or fragment/);
  });
});

describe('filters', () => {
  it('time_range: from-pub-date of the UTC day, and works dated before the bound that day are dropped', async () => {
    const after = Date.UTC(2021, 5, 15, 12, 0, 0);
    cr.setItems([
      work(1, { published: { 'date-parts': [[2021, 6, 15]] } }), // that day, before noon: Crossref keeps it, the provider does not
      work(2, { published: { 'date-parts': [[2021, 6, 16]] } }),
      work(3, { published: { 'date-parts': [[2020]] } }),
    ]);
    const res = await provider().search(request('graphene', { filters: { publishedAfter: after, timeRange: 'day' } }));
    expect(cr.searches()[0]!.params.filter).toBe('from-pub-date:2021-06-15');
    expect(res.results.map((r) => r.doi)).toEqual(['10.5555/work.2']);
    expect(res.applied.has('time_range')).toBe(true);
  });

  it('result_type news: no request, nothing, every filter applied', async () => {
    cr.setItems([work(1)]);
    const res = await provider().search(request('graphene', { filters: { resultType: 'news' } }));
    expect(res).toEqual({ results: [], total: 0, applied: new Set(['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded']) });
    expect(cr.requests).toHaveLength(0);
  });

  it('site: naming only other domains (or excluding doi.org) can match no doi.org link: no request', async () => {
    cr.setItems([work(1)]);
    for (const q of ['graphene site:nature.com', 'graphene -site:doi.org']) {
      const res = await provider().search(request(q));
      expect(res.results, q).toEqual([]);
      expect(res.applied.has('site'), q).toBe(true);
    }
    expect(cr.requests).toHaveLength(0);
    const kept = await provider().search(request('graphene site:doi.org'));
    expect(kept.results).toHaveLength(1);
    expect(kept.applied.has('site')).toBe(false);
  });

  it('language, country, safe search and -word are left to the operation', async () => {
    cr.setItems([work(1)]);
    const res = await provider().search(request('graphene -silicon', { filters: { language: 'de', country: 'DE', safeSearch: 'strict' } }));
    expect([...res.applied].sort()).toEqual([...APPLIES].sort());
    expect(cr.searches()[0]!.params.filter).toBeUndefined();
  });
});

describe('works as results', () => {
  it('maps title and subtitle, DOI, URL, authors, venue, date parts, a JATS abstract and a full-text link', async () => {
    cr.setItems([work(1, {
      title: ['Graphene <i>transistors</i>'],
      subtitle: ['a review'],
      author: [{ given: 'Ada', family: 'Lovelace' }, { name: 'The Graphene Consortium' }, { family: 'Turing' }],
      published: { 'date-parts': [[2021, 6]] },
      abstract: '<jats:title>Abstract</jats:title><jats:p>Water (H<jats:sub>2</jats:sub>O) &amp; <jats:italic>graphene</jats:italic>.</jats:p><jats:p>Second paragraph.</jats:p>',
      link: [
        { URL: 'https://publisher.example/check.pdf', 'content-type': 'application/pdf', 'content-version': 'vor', 'intended-application': 'similarity-checking' },
        { URL: 'https://publisher.example/tdm.xml', 'content-type': 'text/xml', 'content-version': 'vor', 'intended-application': 'text-mining' },
        { URL: 'https://publisher.example/full.pdf', 'content-type': 'application/pdf', 'content-version': 'vor', 'intended-application': 'text-mining' },
      ],
    })]);
    const res = await provider().search(request('graphene'));
    expect(res.total).toBe(1);
    expect(res.results).toEqual([{
      url: 'https://doi.org/10.5555/work.1',
      title: 'Graphene transistors: a review',
      snippet: 'Water (H2O) & graphene. Second paragraph.',
      publishedAt: Date.UTC(2021, 5, 1),
      type: 'academic',
      language: null,
      country: null,
      safe: null,
      doi: '10.5555/work.1',
      authors: ['Ada Lovelace', 'The Graphene Consortium', 'Turing'],
      venue: 'Journal of Examples',
      fullTextUrl: 'https://publisher.example/full.pdf',
      abstract: 'Water (H2O) & graphene. Second paragraph.',
    }]);
  });

  it('without an abstract the snippet names the authors, venue and year; dates fall back to issued; no full text without a link', async () => {
    cr.setItems([work(1, {
      published: undefined, issued: { 'date-parts': [[2019, 2, 3]] },
      author: [{ given: 'A', family: 'One' }, { given: 'B', family: 'Two' }, { given: 'C', family: 'Three' }, { given: 'D', family: 'Four' }],
    })]);
    const [r] = (await provider().search(request('graphene'))).results;
    expect(r!.snippet).toBe('A One, B Two, C Three et al. \u00b7 Journal of Examples \u00b7 2019');
    expect(r!.publishedAt).toBe(Date.UTC(2019, 1, 3));
    expect(r!.fullTextUrl).toBeNull();
    expect(r!.abstract).toBeNull();
  });

  it('keeps the abstract whole and cuts the snippet at a word', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    cr.setItems([work(1, { abstract: `<jats:p>${long}</jats:p>` })]);
    const [r] = (await provider().search(request('graphene'))).results;
    expect(r!.abstract).toBe(long);
    expect(r!.snippet.length).toBeLessThanOrEqual(300);
    expect(r!.snippet.endsWith('\u2026')).toBe(true);
  });

  it('asks no more than limit and reports the total Crossref counts', async () => {
    cr.setItems(Array.from({ length: 30 }, (_, i) => work(i + 1)));
    const res = await provider().search(request('graphene', { limit: 5 }));
    expect(res.results).toHaveLength(5);
    expect(res.total).toBe(30);
  });

  it('an empty list is no results and total 0', async () => {
    cr.setItems([work(1)]);
    const res = await provider().search(request('nothingmatchesthis'));
    expect(res.results).toEqual([]);
    expect(res.total).toBe(0);
  });
});

describe('hostile fields', () => {
  it('skips works without a URL or DOI, and survives non-string values, markup and huge strings', async () => {
    const huge = 'x'.repeat(1_000_000);
    cr.setAnswer({
      body: {
        status: 'ok', 'message-type': 'work-list', 'message-version': '1.0.0',
        message: {
          'total-results': 'many',
          items: [
            null,
            'a string',
            { title: ['No link, no DOI'] },
            { DOI: 42, URL: 'javascript:alert(1)', title: ['Bad link'] },
            { DOI: '10.1000/Á#b?c', URL: 'javascript:alert(1)', title: [17, '<script>alert(1)</script>Real <b>title</b>'], author: [null, 'x', { given: 5, family: 'Kept' }], 'container-title': [{ a: 1 }], published: { 'date-parts': [[null]] }, issued: { 'date-parts': [['2020']] }, abstract: { not: 'text' }, link: 'nope' },
            { DOI: '10.1000/huge', title: [huge], abstract: huge, 'container-title': [huge] },
            { DOI: '10.1000/dup', URL: 'https://doi.org/10.1000/dup' },
            { DOI: '10.1000/DUP', URL: 'https://doi.org/10.1000/DUP' },
          ],
        },
      },
    });
    const res = await provider().search(request('anything'));
    expect(res.total).toBeUndefined();
    expect(res.results.map((r) => r.doi)).toEqual(['10.1000/á#b?c', '10.1000/huge', '10.1000/dup']);
    const [odd, big, bare] = res.results;
    expect(odd!.url).toBe('https://doi.org/10.1000/%C3%A1%23b%3Fc');
    // Markup is gone (the script's text is plain text now, harmless).
    expect(odd!.title).toBe('alert(1) Real title');
    expect(odd!.authors).toEqual(['Kept']);
    expect(odd!.venue).toBeNull();
    expect(odd!.publishedAt).toBeNull();
    expect(odd!.abstract).toBeNull();
    expect(big!.title.length).toBeLessThanOrEqual(300);
    expect(big!.snippet.length).toBeLessThanOrEqual(300);
    expect(big!.venue!.length).toBeLessThanOrEqual(300);
    expect(big!.abstract).toHaveLength(1_000_000);
    expect(bare!.title).toBe('10.1000/dup');
  });

  it('toProviderResult and abstractText are pure', () => {
    expect(toProviderResult(undefined)).toBeUndefined();
    expect(toProviderResult({ URL: 'https://example.org/x', title: ['T'] })).toMatchObject({ url: 'https://example.org/x', doi: null, authors: [] });
    expect(abstractText('<jats:sec><jats:title>Background</jats:title><jats:p>E = mc<jats:sup>2</jats:sup></jats:p></jats:sec>')).toBe('Background E = mc2');
    expect(abstractText('Plain text abstract.')).toBe('Plain text abstract.');
  });
});

describe('failures', () => {
  it('429 with Retry-After: ProviderRateLimited for that long', async () => {
    cr.setMode('rate-limited', { retryAfter: 7 });
    const err = await failure(provider().search(request('graphene')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(7000);
    expect((err as ProviderRateLimited).message).toContain('429');
  });

  it('429 without Retry-After: the advertised x-rate-limit-interval', async () => {
    cr.setMode('rate-limited', { retryAfter: undefined });
    cr.setInterval('30s');
    const err = await failure(provider().search(request('graphene')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(30_000);
    expect((err as ProviderRateLimited).message).toContain('limit 50 per 30s');
    expect(intervalMs('1s')).toBe(1000);
    expect(intervalMs('60')).toBe(60_000);
    expect(intervalMs('soon')).toBeUndefined();
  });

  it('a 400 validation-failure is PROVIDER_FAILED with Crossref\'s own message', async () => {
    cr.setAnswer({ status: 400, body: { status: 'failed', 'message-type': 'validation-failure', message: [{ type: 'integer-not-valid', value: 'x', message: 'Integer specified as x but must be a positive integer less than or equal to 1000. ' }] } });
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(400);
    expect(err.message).toContain('Integer specified as x');
  });

  it('the stand-in refuses what Crossref refuses (so the provider\'s parameters are checked)', async () => {
    const bad = await fetch(`${cr.url}/works?query=x&rows=2000`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ status: 'failed', 'message-type': 'validation-failure', message: [{ type: 'integer-not-valid' }] });
    const sel = await fetch(`${cr.url}/works?query=x&select=DOI,language`);
    expect(((await sel.json()) as { message: { type: string }[] }).message[0]!.type).toBe('select-not-available');
    const missing = await fetch(`${cr.url}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('Resource not found.');
  });

  it('a 200 with status failed, or without message.items, is PROVIDER_FAILED', async () => {
    cr.setAnswer({ body: { status: 'failed', 'message-type': 'validation-failure', message: [{ message: 'odd' }] } });
    expect((await providerError(provider().search(request('graphene')))).message).toContain('odd');
    cr.setAnswer({ body: { status: 'ok', 'message-type': 'work', message: { DOI: '10.1/x' } } });
    const err = await providerError(provider().search(request('graphene')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('message.items');
  });

  it('5xx is PROVIDER_FAILED, a cut body is PROVIDER_FAILED, 401 and 403 are PROVIDER_MISCONFIGURED', async () => {
    cr.setItems([work(1)]);
    cr.setMode('error');
    const e5 = await providerError(provider().search(request('graphene')));
    expect([e5.code, e5.status]).toEqual(['PROVIDER_FAILED', 502]);

    cr.setMode('malformed');
    const em = await providerError(provider().search(request('graphene')));
    expect(em.code).toBe('PROVIDER_FAILED');
    expect(em.message).toContain('invalid JSON');

    cr.setMode('ok');
    for (const status of [401, 403]) {
      cr.setAnswer({ status, headers: { 'content-type': 'text/plain' }, body: 'Unauthorized' });
      const e = await providerError(provider({ key: 'bad' }).search(request('graphene')));
      expect(e.code, String(status)).toBe('PROVIDER_MISCONFIGURED');
      expect(e.message).toContain('SCOUR_PROVIDER_CROSSREF_KEY');
      expect(e.message).not.toContain('bad');
    }
  });

  it('a service that does not answer in time is PROVIDER_TIMEOUT', async () => {
    cr.setMode('hang');
    const err = await providerError(provider({ timeoutMs: 300 }).search(request('graphene')));
    expect(err.code).toBe('PROVIDER_TIMEOUT');
  });

  it('the request\'s signal aborts the exchange and rejects with its reason', async () => {
    cr.setMode('hang');
    const controller = new AbortController();
    const reason = new Error('the search is over');
    setTimeout(() => controller.abort(reason), 100);
    const started = Date.now();
    const err = await failure(provider({ timeoutMs: 10_000 }).search(request('graphene', { signal: controller.signal })));
    expect(err).toBe(reason);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
