/**
 * The elasticsearch provider against an Elasticsearch stand-in on loopback
 * (test/support/standins/elasticsearch.ts), through the real Egress: the
 * _search body (query clauses, escaping, filters, highlight, _source), auth,
 * the mapping of hits (configurable field names, dates, highlights), ES 6 and
 * 7+ totals, each failure and abort.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import type { Egress } from '../../../core/ports.js';
import { ProviderRateLimited, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import {
  BUSY_PAUSE_MS, createElasticsearchProvider, indexedDate, sourceValue, sqsEscape, type ElasticsearchOptions,
} from '../../../plugins/search-providers/elasticsearch/index.js';
import { ProviderError } from '../../../plugins/sdk/provider.js';
import { startElasticsearch, type EsStandin } from '../../support/standins/elasticsearch.js';
import { NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let es: EsStandin;
beforeAll(async () => { es = await startElasticsearch(); });
afterAll(async () => { await es.close(); });
beforeEach(() => es.reset());

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const EVERY = ['country', 'excluded', 'language', 'result_type', 'safe_search', 'site', 'time_range'];

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, NOW);

const provider = (over: Partial<ElasticsearchOptions> & { baseUrl?: string; key?: string; standin?: EsStandin } = {}) =>
  createElasticsearchProvider({ egress: nodeEgress, baseUrl: over.baseUrl ?? (over.standin ?? es).url, key: over.key, timeoutMs: 5000, index: 'docs', ...over });

const DOCS: Record<string, unknown>[] = [
  { url: 'https://wiki.internal.example/rust', title: 'Rust at work', text: 'How we use Rust and async tokio in production services.', published_at: '2025-06-10T09:00:00Z', language: 'en' },
  { url: 'https://wiki.internal.example/java', title: 'Java services', text: 'Our Java services, and a note about Rust rewrites.', published_at: '2023-01-01T00:00:00Z', language: 'en' },
  { url: 'https://wiki.internal.example/de', title: 'Rust auf Deutsch', text: 'Rust ist eine Sprache.', published_at: 1_749_000_000_000, language: 'de-DE' },
  { url: 'https://wiki.internal.example/old', title: 'Undated Rust page', content: 'Rust without a date.' },
];

describe('the plugin', () => {
  it('is search-provider-elasticsearch with its endpoint (no credentials) and what it applies on every request', () => {
    const p = provider({ baseUrl: es.url.replace('http://', 'http://reader:s3cret@') + '/prefix/' });
    expect(p).toMatchObject({ name: 'search-provider-elasticsearch', id: 'elasticsearch', kind: 'search-provider', endpoint: `${es.url}/prefix` });
    expect(p.kinds).toBeUndefined();
    expect([...p.applies!].sort()).toEqual(['excluded', 'result_type', 'time_range']);
    expect([...provider({ languageField: 'language' }).applies!].sort()).toEqual(['excluded', 'language', 'result_type', 'time_range']);
  });

  it('refuses to start without a URL or an index, or with field names that are not', () => {
    expect(() => createElasticsearchProvider({ egress: nodeEgress, index: 'docs' })).toThrow(/SCOUR_PROVIDER_ELASTICSEARCH_URL is required/);
    expect(() => createElasticsearchProvider({ egress: nodeEgress, baseUrl: es.url, index: undefined })).toThrow(/SCOUR_PROVIDER_ELASTICSEARCH_INDEX is required/);
    expect(() => provider({ index: 'a b' })).toThrow(/not an index name/);
    expect(() => provider({ index: 'docs,' })).toThrow(/not an index name/);
    expect(() => provider({ index: '_all/x' })).toThrow(/not an index name/);
    expect(() => provider({ fields: 'title^x' })).toThrow(/FIELDS entry/);
    expect(() => provider({ fields: ' , ' })).toThrow(/names no field/);
    expect(() => provider({ dateField: 'published at' })).toThrow(/DATE_FIELD/);
    expect(() => provider({ baseUrl: 'es:9200' })).toThrow(/http or https|absolute/);
  });
});

describe('what it sends', () => {
  it('POSTs JSON to /{index}/_search: simple_query_string over the default fields, highlight with <mark>, _source limited', async () => {
    es.setIndex('docs', DOCS);
    const res = await provider().search(request('rust tokio', { limit: 3 }));
    const [r] = es.requests;
    expect(r!.method).toBe('POST');
    expect(r!.path).toBe('/docs/_search');
    expect(r!.headers['content-type']).toBe('application/json');
    expect(r!.headers.authorization).toBeUndefined();
    expect(es.bodies()[0]).toEqual({
      size: 3,
      timeout: '4000ms',
      _source: ['url', 'title', 'published_at'],
      query: {
        bool: {
          must: [{
            simple_query_string: {
              query: 'rust tokio', fields: ['title^2', 'text', 'content', 'body'], default_operator: 'or',
              flags: 'AND|OR|NOT|PHRASE|PRECEDENCE|ESCAPE|WHITESPACE', lenient: true,
            },
          }],
        },
      },
      highlight: {
        pre_tags: ['<mark>'], post_tags: ['</mark>'], encoder: 'html',
        fields: {
          text: { fragment_size: 160, number_of_fragments: 2, no_match_size: 320 },
          content: { fragment_size: 160, number_of_fragments: 2 },
          body: { fragment_size: 160, number_of_fragments: 2 },
        },
      },
    });
    expect(res.results.map((x) => x.url)).toEqual([
      'https://wiki.internal.example/rust', 'https://wiki.internal.example/de', 'https://wiki.internal.example/old',
    ]);
  });

  it('makes required groups and exclusions their own clauses (not one string, where -word under OR would match everything without it)', async () => {
    es.setIndex('docs', DOCS);
    const res = await provider().search(request('"rust rewrites" OR intitle:async rust -tokio -"eine sprache"'));
    const q = (es.bodies()[0]!.query as { bool: Record<string, unknown[]> }).bool;
    expect(q.must).toHaveLength(2);
    expect(q.must![1]).toEqual({
      bool: {
        should: [
          { simple_query_string: expect.objectContaining({ query: '"rust rewrites"', fields: ['title^2', 'text', 'content', 'body'] }) },
          { simple_query_string: expect.objectContaining({ query: 'async', fields: ['title'] }) },
        ],
        minimum_should_match: 1,
      },
    });
    expect(q.must_not).toEqual([
      { simple_query_string: expect.objectContaining({ query: 'tokio' }) },
      { simple_query_string: expect.objectContaining({ query: '"eine sprache"' }) },
    ]);
    expect(res.results.map((r) => r.url)).toEqual(['https://wiki.internal.example/java']);
    expect(res.applied.has('excluded')).toBe(true);
  });

  it('escapes simple_query_string operators in words and phrases', async () => {
    expect(sqsEscape('c++ (a|b) -x "q" ~2 *\\')).toBe('c\\+\\+ \\(a\\|b\\) \\-x \\"q\\" \\~2 \\*\\\\');
    es.setIndex('docs', [{ url: 'https://a.example/', title: 'covid-19 data', text: 'x' }]);
    const res = await provider().search(request('covid-19 c++'));
    const must = (es.bodies()[0]!.query as { bool: { must: { simple_query_string: { query: string } }[] } }).bool.must;
    expect(must[0]!.simple_query_string.query).toBe('covid\\-19 c\\+\\+');
    expect(res.results).toHaveLength(1);
  });

  it('sends the time bound as a range on the date field and the language as a filter on the language field', async () => {
    es.setIndex('docs', DOCS);
    const after = Date.UTC(2025, 0, 1);
    const res = await provider({ languageField: 'language' }).search(request('rust', { filters: { publishedAfter: after, timeRange: 'year', language: 'de' } }));
    const filter = (es.bodies()[0]!.query as { bool: { filter: unknown[] } }).bool.filter;
    expect(filter).toEqual([
      { range: { published_at: { gte: after, format: 'epoch_millis' } } },
      { bool: { should: [{ term: { language: 'de' } }, { prefix: { language: 'de-' } }, { prefix: { language: 'de_' } }], minimum_should_match: 1 } },
    ]);
    expect(res.results.map((r) => r.url)).toEqual(['https://wiki.internal.example/de']);
    expect([...res.applied].sort()).toEqual(['excluded', 'language', 'result_type', 'time_range']);
    expect(res.results[0]!.language).toBe('de');
  });

  it('without a language field, neither sends nor claims the language', async () => {
    es.setIndex('docs', DOCS);
    const res = await provider().search(request('rust', { filters: { language: 'de', country: 'DE', safeSearch: 'strict' } }));
    expect((es.bodies()[0]!.query as { bool: Record<string, unknown> }).bool.filter).toBeUndefined();
    expect([...res.applied].sort()).toEqual(['excluded', 'result_type', 'time_range']);
    expect(res.results).toHaveLength(4);
  });

  it('uses the configured fields, date, URL and title fields (nested paths too), and a pattern or list of indices', async () => {
    es.setIndex('kb-2024', [{ meta: { link: 'https://kb.example/1', heading: 'Rust <b>guide</b>' }, body_text: 'A Rust guide.', created: 1_700_000_000 }]);
    es.setIndex('kb-2025', [{ meta: { link: 'https://kb.example/2', heading: 'Other' }, body_text: 'Nothing here about it.', created: '2025-02-01' }]);
    es.setIndex('misc', [{ meta: { link: ['https://kb.example/3'], heading: ['Rust list'] }, body_text: 'rust', created: null }]);
    const p = provider({ index: 'kb-*,misc', fields: 'meta.heading^3, body_text', urlField: 'meta.link', titleField: 'meta.heading', dateField: 'created' });
    const res = await p.search(request('rust'));
    expect(es.requests[0]!.path).toBe('/kb-*,misc/_search');
    const body = es.bodies()[0]!;
    expect(body._source).toEqual(['meta.link', 'meta.heading', 'created']);
    expect(Object.keys((body.highlight as { fields: object }).fields)).toEqual(['body_text']);
    expect(res.results.map((r) => [r.url, r.title, r.publishedAt])).toEqual([
      ['https://kb.example/1', 'Rust guide', 1_700_000_000_000],
      ['https://kb.example/3', 'Rust list', null],
    ]);
  });

  it('sends an API key as ApiKey, and user:pass@ as Basic auth, never in messages', async () => {
    const secured = await startElasticsearch({ auth: { basic: ['reader', 's3cret'], apiKey: 'VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==' } });
    try {
      secured.setIndex('docs', DOCS);
      const basic = provider({ standin: secured, baseUrl: secured.url.replace('http://', 'http://reader:s3cret@') });
      expect((await basic.search(request('rust'))).results.length).toBeGreaterThan(0);
      expect(secured.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from('reader:s3cret').toString('base64')}`);
      const keyed = provider({ standin: secured, key: 'VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==' });
      expect((await keyed.search(request('rust'))).results.length).toBeGreaterThan(0);
      expect(secured.requests[1]!.headers.authorization).toMatch(/^ApiKey VnVh/);

      const refused = await providerError(provider({ standin: secured, baseUrl: secured.url.replace('http://', 'http://reader:wrong@') }).search(request('rust')));
      expect(refused.code).toBe('PROVIDER_MISCONFIGURED');
      expect(refused.status).toBe(401);
      expect(refused.message).toMatch(/SCOUR_PROVIDER_ELASTICSEARCH_KEY/);
      expect(refused.message).not.toContain('wrong');
    } finally {
      await secured.close();
    }
  });

  it('answers news with nothing, every filter applied, without a request', async () => {
    es.setIndex('docs', DOCS);
    const res = await provider().search(request('rust', { filters: { resultType: 'news' } }));
    expect(res).toMatchObject({ results: [], total: 0 });
    expect([...res.applied].sort()).toEqual(EVERY);
    expect(es.requests).toHaveLength(0);
  });
});

describe('results', () => {
  it('maps URL, title, highlight marks, date, score and total (ES 7+ {value, relation})', async () => {
    es.setIndex('docs', DOCS);
    const res = await provider().search(request('tokio'));
    expect(res.total).toBe(1);
    const [r] = res.results;
    expect(r).toMatchObject({
      url: 'https://wiki.internal.example/rust', title: 'Rust at work', snippet: 'How we use Rust and async tokio in production services.',
      highlights: [[26, 31]], publishedAt: Date.UTC(2025, 5, 10, 9), type: null, language: null, country: null, safe: null,
    });
    expect(r!.snippet.slice(26, 31)).toBe('tokio');
    expect(typeof r!.score).toBe('number');
  });

  it('reads an ES 6 total (a number)', async () => {
    const six = await startElasticsearch({ version: 6 });
    try {
      six.setIndex('docs', DOCS);
      const res = await provider({ standin: six }).search(request('rust'));
      expect(res.total).toBe(4);
    } finally {
      await six.close();
    }
  });

  it('escapes the indexed text\'s own markup so it never passes for a highlight', async () => {
    es.setIndex('docs', [{ url: 'https://a.example/', title: '<script>x</script>Title', text: 'Before <mark>fake</mark> & the rust part.' }]);
    const [r] = (await provider().search(request('rust'))).results;
    expect(r!.snippet).toBe('Before <mark>fake</mark> & the rust part.');
    expect(r!.highlights).toEqual([[31, 35]]);
    expect(r!.title).toBe('x Title');
  });

  it('takes the start of the text when no text field matched (the match was in the title)', async () => {
    es.setIndex('docs', [{ url: 'https://a.example/', title: 'Rust', text: 'Nothing about the topic in the body.' }]);
    const [r] = (await provider().search(request('rust'))).results;
    expect(r!.snippet).toBe('Nothing about the topic in the body.');
    expect(r!.highlights).toBeUndefined();
  });

  it('survives hostile hits: no URL, bad URLs, non-strings, huge texts', async () => {
    es.setIndex('docs', [
      { title: 'rust without url', text: 'rust' },
      { url: 'file:///etc/passwd', title: 'rust file', text: 'rust' },
      { url: 12, title: 'rust number', text: 'rust' },
      { url: 'https://ok.example/1', title: { rust: true }, text: 'rust', published_at: 'soon', language: 3 },
      { url: 'https://ok.example/2', title: `rust ${'T'.repeat(600)}`, text: `${'rust '.repeat(300)}`, published_at: -5 },
    ]);
    const res = await provider({ languageField: 'language' }).search(request('rust'));
    expect(res.results.map((r) => r.url).sort()).toEqual(['https://ok.example/1', 'https://ok.example/2']);
    const one = res.results.find((r) => r.url.endsWith('/1'))!;
    const two = res.results.find((r) => r.url.endsWith('/2'))!;
    expect(one).toMatchObject({ title: 'ok.example', publishedAt: null, language: null });
    expect(two.title.length).toBeLessThanOrEqual(300);
    expect(two.snippet.length).toBeLessThanOrEqual(300);
    expect(two.publishedAt).toBeNull();
  });

  it('reads dates as ISO, epoch seconds or milliseconds, and values at dotted paths', () => {
    expect(indexedDate('2024-01-02T03:04:05Z')).toBe(Date.UTC(2024, 0, 2, 3, 4, 5));
    expect(indexedDate(1_700_000_000)).toBe(1_700_000_000_000);
    expect(indexedDate('1700000000000')).toBe(1_700_000_000_000);
    expect(indexedDate(Number.NaN)).toBeNull();
    expect(sourceValue({ 'a.b': 1, a: { b: 2 } }, 'a.b')).toBe(1);
    expect(sourceValue({ a: [{ b: ['x', 'y'] }] }, 'a.b')).toBe('x');
  });

  it('answers no results when nothing matched', async () => {
    es.setIndex('docs', DOCS);
    const res = await provider().search(request('nothingmatcheshere'));
    expect(res).toMatchObject({ results: [], total: 0 });
    expect(res.warnings).toBeUndefined();
  });

  it('keeps the hits of a partly failed or timed-out search, with a warning', async () => {
    es.setIndex('docs', DOCS);
    es.setShardFailure(true);
    es.setTimedOut(true);
    const res = await provider().search(request('rust'));
    expect(res.results.length).toBeGreaterThan(0);
    expect(res.warnings?.map((w) => w.code)).toEqual(['PARTIAL_RESULTS', 'PARTIAL_RESULTS']);
    expect(res.warnings![0]!.message).toMatch(/1 of 2 shards failed: \[n2\]/);
  });

  it('fails on JSON that is not a search answer', async () => {
    // Another service at the configured address (here through a canned Egress: nothing is contacted).
    const canned: Egress = {
      fetch: async (url) => ({
        url, statusCode: 200, statusMessage: 'OK', headers: { 'content-type': 'application/json' }, setCookies: [], redirects: [], wireBytes: 0,
        body: new TextEncoder().encode('{"acknowledged":true}'),
      }),
      resolveAll: async () => [],
    };
    const err = await providerError(createElasticsearchProvider({ egress: canned, baseUrl: 'http://es.invalid:9200', index: 'docs' }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/not a search answer/);
  });
});

describe('failures', () => {
  it('a missing index (404 index_not_found_exception): PROVIDER_MISCONFIGURED naming the index setting', async () => {
    const err = await providerError(provider({ index: 'nope' }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
    expect(err.status).toBe(404);
    expect(err.message).toMatch(/no such index \[nope\].*SCOUR_PROVIDER_ELASTICSEARCH_INDEX/);
  });

  it('a query the mapping refuses (400): PROVIDER_MISCONFIGURED naming the field settings', async () => {
    const geo = await startElasticsearch({ mapping: { location: 'geo_point' } });
    try {
      geo.setIndex('docs', DOCS);
      const err = await providerError(provider({ standin: geo, dateField: 'location' }).search(request('rust', { filters: { publishedAfter: 1 } })));
      expect(err.code).toBe('PROVIDER_MISCONFIGURED');
      expect(err.message).toMatch(/geo_point\] does not support range queries.*_DATE_FIELD/);
    } finally {
      await geo.close();
    }
  });

  it('403 security_exception: PROVIDER_MISCONFIGURED', async () => {
    const secured = await startElasticsearch({ auth: { apiKey: 'good', forbiddenKey: 'readonly' } });
    try {
      secured.setIndex('docs', DOCS);
      const err = await providerError(provider({ standin: secured, key: 'readonly' }).search(request('rust')));
      expect(err.code).toBe('PROVIDER_MISCONFIGURED');
      expect(err.status).toBe(403);
      expect(err.message).toContain('is unauthorized');
    } finally {
      await secured.close();
    }
  });

  it('429 es_rejected_execution_exception: ProviderRateLimited for a short pause', async () => {
    es.setIndex('docs', DOCS);
    es.setMode('rate-limited');
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(BUSY_PAUSE_MS);
    expect((err as Error).message).toContain('es_rejected_execution_exception');
  });

  it('5xx (all shards failed): PROVIDER_FAILED', async () => {
    es.setMode('error');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(503);
    expect(err.message).toContain('all shards failed');
  });

  it('a body cut in the middle: PROVIDER_FAILED', async () => {
    es.setIndex('docs', DOCS);
    es.setMode('malformed');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/invalid JSON/);
  });

  it('rejects with the signal\'s reason when the search gives up', async () => {
    es.setMode('hang');
    const ac = new AbortController();
    const p = provider().search(request('rust', { signal: ac.signal }));
    setTimeout(() => ac.abort(new Error('search gave up')), 100);
    expect(((await failure(p)) as Error).message).toBe('search gave up');
  });
});
