/**
 * The hackernews search provider against a stand-in HN Search API on
 * loopback (test/support/standins/hackernews.ts), through the real Egress:
 * what it sends (the query in Algolia's advanced syntax, tags, the date as a
 * numeric filter, page size), how hits become results (link stories as
 * news, text posts as social with their HN link, highlights), news
 * searches, what it reports as applied, each failure, empty answers, abort
 * and hostile fields.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import { parseQuery, ProviderRateLimited, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import {
  algoliaMessage, algoliaQuery, APPLIES, createHackernewsProvider, DEFAULT_BASE_URL, toProviderResult,
} from '../../../plugins/search-providers/hackernews/index.js';
import { ProviderError } from '../../../plugins/sdk/provider.js';
import { startHackernews, type HackernewsStandin, type HnItem } from '../../support/standins/hackernews.js';
import { NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let hn: HackernewsStandin;
beforeAll(async () => { hn = await startHackernews(); });
afterAll(async () => { await hn.close(); });
beforeEach(() => hn.reset());

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, Date.now());

const provider = (over: { baseUrl?: string; timeoutMs?: number } = {}) =>
  createHackernewsProvider({ egress: nodeEgress, baseUrl: over.baseUrl ?? hn.url, timeoutMs: over.timeoutMs ?? 5_000 });

const T0 = Date.UTC(2024, 2, 1, 12, 0, 0) / 1000;

/** A link story. */
const story = (n: number, over: Partial<HnItem> = {}): HnItem => ({
  objectID: String(1000 + n), title: `Rust story ${n}`, url: `https://blog${n}.example/rust`, author: `user${n}`, points: 100 + n, num_comments: n,
  story_text: null, created_at: new Date((T0 + n * 3600) * 1000).toISOString(), created_at_i: T0 + n * 3600, children: [], story_id: 1000 + n,
  updated_at: '2024-03-02T00:00:00Z', ...over,
});

/** An Ask HN text post (no url). */
const ask = (n: number, over: Partial<HnItem> = {}): HnItem => {
  const { url: _url, ...rest } = story(n, { title: `Ask HN: Rust question ${n}`, story_text: `<p>How do I learn rust &amp; stay sane? Number ${n}</p>`, tags: ['ask_hn'], ...over });
  return rest as HnItem;
};

describe('what the provider sends', () => {
  it('is a search-provider plugin with its id, kinds, endpoint and the filters it applies', () => {
    const p = provider();
    expect(p).toMatchObject({ name: 'search-provider-hackernews', kind: 'search-provider', id: 'hackernews', kinds: ['news', 'social'], endpoint: hn.url });
    expect([...p.applies!].sort()).toEqual(['result_type', 'time_range']);
    expect(createHackernewsProvider({ egress: nodeEgress }).endpoint).toBe(DEFAULT_BASE_URL);
  });

  it('asks GET /api/v1/search for stories, limit hits from page 0, in the advanced syntax', async () => {
    hn.setItems([story(1)]);
    await provider().search(request('rust', { limit: 7 }));
    const [s] = hn.searches();
    expect(s!.method).toBe('GET');
    expect(s!.path).toBe('/api/v1/search');
    expect(s!.params).toEqual({ query: 'rust', tags: 'story', hitsPerPage: '7', page: '0', advancedSyntax: 'true' });
    expect(s!.headers.accept).toContain('application/json');
  });

  it('quotes phrases, sends -word, and caps hitsPerPage at 1000', async () => {
    hn.setItems([story(1)]);
    const res = await provider().search(request('"rust story" async -java -"big co"', { limit: 4000 }));
    const [s] = hn.searches();
    expect(s!.params.query).toBe('"rust story" async -java');
    expect(s!.params.hitsPerPage).toBe('1000');
    // -"big co" could not be said: excluded is left to the operation.
    expect(res.applied.has('excluded')).toBe(false);

    // Alternatives (OR) cannot be said to Algolia: their words are sent plain.
    const parsed = parseQuery('a "b c" OR "d e" -f');
    if (!parsed.ok) throw new Error(parsed.message);
    expect(algoliaQuery(parsed.query)).toEqual({ text: 'a b c d e -f', excludedSent: true });
  });

  it('-word is applied by HN Search: the stand-in drops the stories holding it, and applied says so', async () => {
    hn.setItems([story(1), story(2, { title: 'Rust story 2 about java' })]);
    const res = await provider().search(request('rust -java'));
    expect(res.results.map((r) => r.title)).toEqual(['Rust story 1']);
    expect([...res.applied].sort()).toEqual(['excluded', 'result_type', 'time_range']);
  });

  it('time_range: numericFilters created_at_i >= the bound in seconds (rounded up), applied', async () => {
    hn.setItems([story(1), story(2), story(3)]);
    const after = (T0 + 2 * 3600) * 1000 - 500;
    const res = await provider().search(request('rust', { filters: { publishedAfter: after, timeRange: 'day' } }));
    expect(hn.searches()[0]!.params.numericFilters).toBe(`created_at_i>=${T0 + 2 * 3600}`);
    expect(res.results.map((r) => r.title)).toEqual(['Rust story 2', 'Rust story 3']);
    expect(res.applied.has('time_range')).toBe(true);
    expect(res.applied.has('excluded')).toBe(false);
  });

  it('language, country, safe search and site: are left to the operation', async () => {
    hn.setItems([story(1)]);
    const res = await provider().search(request('rust site:blog1.example', { filters: { language: 'en', country: 'US', safeSearch: 'strict' } }));
    expect([...res.applied].sort()).toEqual([...APPLIES].sort());
    expect(hn.searches()[0]!.params.query).toBe('rust');
  });
});

describe('hits as results', () => {
  it('a link story is news at its URL; a text post is social at its HN page, with the text, highlights and abstract', async () => {
    hn.setItems([story(1), ask(2)]);
    const res = await provider().search(request('rust'));
    expect(res.total).toBe(2);
    expect(res.results[0]).toEqual({
      url: 'https://blog1.example/rust', title: 'Rust story 1', snippet: '101 points \u00b7 by user1 \u00b7 1 comments on Hacker News',
      publishedAt: (T0 + 3600) * 1000, type: 'news', language: null, country: null, safe: null,
    });
    const r = res.results[1]!;
    expect(r).toMatchObject({
      url: 'https://news.ycombinator.com/item?id=1002', title: 'Ask HN: Rust question 2', type: 'social', publishedAt: (T0 + 7200) * 1000,
      snippet: 'How do I learn rust & stay sane? Number 2', abstract: 'How do I learn rust & stay sane? Number 2',
    });
    expect(r.highlights).toEqual([[15, 19]]);
    expect(r.snippet.slice(15, 19)).toBe('rust');
  });

  it('an empty or null url is a text post too; created_at stands in for created_at_i', async () => {
    hn.setItems([story(1, { url: '' }), story(2, { url: null, created_at_i: undefined, created_at: '2024-03-05T06:07:08.000Z' })]);
    const res = await provider().search(request('rust'));
    expect(res.results.map((r) => [r.url, r.type])).toEqual([
      ['https://news.ycombinator.com/item?id=1001', 'social'], ['https://news.ycombinator.com/item?id=1002', 'social'],
    ]);
    expect(res.results[1]!.publishedAt).toBe(Date.UTC(2024, 2, 5, 6, 7, 8));
  });

  it('result_type news keeps dated link stories only, asks a second page to fill the limit, and says applied', async () => {
    hn.setItems([ask(1), ask(2), story(3), ask(4), story(5), story(6)]);
    const res = await provider().search(request('rust', { limit: 3, filters: { resultType: 'news' } }));
    expect(hn.searches().map((s) => s.params.page)).toEqual(['0', '1']);
    expect(res.results.map((r) => r.url)).toEqual(['https://blog3.example/rust', 'https://blog5.example/rust', 'https://blog6.example/rust']);
    expect(res.results.every((r) => r.type === 'news' && r.publishedAt !== null)).toBe(true);
    expect(res.applied.has('result_type')).toBe(true);
    expect(res.total).toBeUndefined();
  });

  it('a web search asks one page only', async () => {
    hn.setItems([ask(1), ask(2), story(3), story(4)]);
    const res = await provider().search(request('rust', { limit: 2 }));
    expect(hn.searches()).toHaveLength(1);
    expect(res.results).toHaveLength(2);
  });

  it('no hits is no results and total 0', async () => {
    hn.setItems([story(1)]);
    const res = await provider().search(request('haskell'));
    expect(res).toMatchObject({ results: [], total: 0 });
  });
});

describe('hostile fields', () => {
  it('skips hits without a URL or numeric id and survives markup, odd types and huge strings', async () => {
    const huge = `<p>${'lorem ipsum '.repeat(100_000)}</p>`;
    hn.setAnswer({
      body: {
        hits: [
          null,
          42,
          { objectID: 'abc', title: 'No link and no numeric id' },
          { objectID: '7', url: 'javascript:alert(1)', title: '<img src=x onerror=alert(1)>Bad <b>link</b>', created_at_i: 'yesterday', points: '5', author: { name: 'x' } },
          { objectID: 8, url: 'https://ok.example/', title: 12345, story_text: huge, _highlightResult: { story_text: { value: 17 } } },
          { objectID: '9', url: 'https://ok.example/', title: 'Duplicate URL' },
        ],
        nbHits: -3,
        nbPages: 'x',
      },
    });
    const res = await provider().search(request('anything'));
    expect(res.total).toBeUndefined();
    expect(res.results.map((r) => r.url)).toEqual(['https://news.ycombinator.com/item?id=7', 'https://ok.example/']);
    const [bad, big] = res.results;
    expect(bad!.title).toBe('Bad link');
    expect(bad!.publishedAt).toBeNull();
    expect(bad!.snippet).toBe('Hacker News story');
    expect(big!.title.length).toBeLessThanOrEqual(300);
    expect(big!.title.startsWith('lorem ipsum')).toBe(true);
    expect(big!.snippet.length).toBeLessThanOrEqual(300);
    expect(big!.abstract!.length).toBeGreaterThan(1_000_000);
  });

  it('toProviderResult is pure', () => {
    expect(toProviderResult(undefined)).toBeUndefined();
    expect(toProviderResult({ objectID: '1', url: 'https://x.example/', title: 'T', created_at_i: 1 })).toMatchObject({ url: 'https://x.example/', publishedAt: 1000, type: 'news' });
  });
});

describe('failures', () => {
  it('429: ProviderRateLimited, for its Retry-After or a minute', async () => {
    hn.setMode('rate-limited', { retryAfter: 12 });
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(12_000);
    hn.setMode('rate-limited', { retryAfter: undefined });
    const none = await failure(provider().search(request('rust')));
    expect((none as ProviderRateLimited).retryAfterMs).toBe(60_000);
    expect((none as ProviderRateLimited).message).toContain('Too many requests');
  });

  it('a 400 is PROVIDER_FAILED with Algolia\'s own message, unwrapped from the controller\'s', async () => {
    hn.setAnswer({ status: 400, body: { message: 'POST https://X-2.algolia.io/1/indexes/Item_production/query: {"message":"Invalid syntax for numeric condition: zz","status":400}' } });
    const err = await providerError(provider().search(request('rust')));
    expect([err.code, err.status]).toEqual(['PROVIDER_FAILED', 400]);
    expect(err.message).toContain(': Invalid syntax for numeric condition: zz');
    expect(err.message).not.toContain('algolia.io');
    expect(algoliaMessage({ message: 'Index does not exist', status: 404 })).toBe('Index does not exist');
    expect(algoliaMessage('x')).toBeUndefined();
  });

  it('the stand-in refuses what HN Search refuses (so the provider\'s parameters are checked)', async () => {
    const bad = await fetch(`${hn.url}/api/v1/search?query=x&numericFilters=stars>3`);
    expect(bad.status).toBe(400);
    expect(algoliaMessage(await bad.json())).toBe('Invalid syntax for numeric condition: stars>3');
    const big = await fetch(`${hn.url}/api/v1/search?query=x&hitsPerPage=1001`);
    expect(big.status).toBe(400);
  });

  it('5xx, a cut body and a body without hits are PROVIDER_FAILED; 403 is PROVIDER_MISCONFIGURED', async () => {
    hn.setItems([story(1)]);
    hn.setMode('error');
    const e5 = await providerError(provider().search(request('rust')));
    expect([e5.code, e5.status]).toEqual(['PROVIDER_FAILED', 500]);
    expect(e5.message).toContain('Cannot reach any hosts');

    hn.setMode('malformed');
    expect((await providerError(provider().search(request('rust')))).code).toBe('PROVIDER_FAILED');

    hn.setMode('ok');
    hn.setAnswer({ body: { message: 'odd' } });
    const noHits = await providerError(provider().search(request('rust')));
    expect(noHits.code).toBe('PROVIDER_FAILED');
    expect(noHits.message).toContain('without hits: odd');

    hn.setAnswer({ status: 403, body: { message: 'Invalid Application-ID or API key', status: 403 } });
    expect((await providerError(provider().search(request('rust')))).code).toBe('PROVIDER_MISCONFIGURED');
  });

  it('a service that does not answer in time is PROVIDER_TIMEOUT; the signal aborts with its reason', async () => {
    hn.setMode('hang');
    expect((await providerError(provider({ timeoutMs: 300 }).search(request('rust')))).code).toBe('PROVIDER_TIMEOUT');
    const controller = new AbortController();
    const reason = new Error('the search is over');
    setTimeout(() => controller.abort(reason), 100);
    const err = await failure(provider({ timeoutMs: 10_000 }).search(request('rust', { signal: controller.signal })));
    expect(err).toBe(reason);
  });
});
