/**
 * The wikipedia search provider against a stand-in MediaWiki Action API on
 * loopback (test/support/standins/wikipedia.ts), through the real Egress:
 * the parameters and headers it sends, the CirrusSearch query it builds,
 * the wiki picked by language, field mapping and highlights, what it reports
 * as applied, MediaWiki's in-body errors, each HTTP failure, abort, and
 * hostile answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import type { Egress, GuardedRequest } from '../../../core/ports.js';
import { ProviderRateLimited, type FilterName, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import { ProviderError } from '../../../plugins/sdk/search.js';
import {
  DEFAULT_BASE_URL, buildSrsearch, createWikipediaProvider, pageUrl,
} from '../../../plugins/search-providers/wikipedia/index.js';
import { startWikipedia, type FakeWikipedia, type WikiHit } from '../../support/standins/wikipedia.js';
import { EVERY_FILTER, NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let wiki: FakeWikipedia;
beforeAll(async () => { wiki = await startWikipedia(); });
afterAll(async () => { await wiki.close(); });
beforeEach(() => wiki.reset());

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, Date.UTC(2026, 10, 28, 12, 0, 0));

/** The stand-in as one wiki (no {lang}), or per language with `{lang}` in the path. */
const provider = (over: { baseUrl?: string; egress?: Egress; timeoutMs?: number; contactEmail?: string } = {}) =>
  createWikipediaProvider({ egress: over.egress ?? nodeEgress, baseUrl: over.baseUrl ?? wiki.url, timeoutMs: over.timeoutMs, contactEmail: over.contactEmail });

const hits = (n: number, from = 1): WikiHit[] => Array.from({ length: n }, (_, k) => ({
  title: `Article ${from + k}`, snippet: `The <span class="searchmatch">rust</span> of article ${from + k}`, timestamp: '2025-05-06T07:08:09Z',
}));

/** An Egress answering every request with `body` (JSON) and recording the URLs, for the default (public) base URL. */
function cannedEgress(body: object, urls: string[]): Egress {
  return {
    fetch: async (url) => {
      urls.push(url);
      return {
        url, statusCode: 200, statusMessage: 'OK', headers: { 'content-type': 'application/json; charset=utf-8' }, setCookies: [], redirects: [], wireBytes: 0,
        body: new TextEncoder().encode(JSON.stringify(body)),
      };
    },
    resolveAll: async () => [],
  };
}

const ONE_HIT = { batchcomplete: true, query: { searchinfo: { totalhits: 1 }, search: [{ ns: 0, title: 'Rust (programming language)', pageid: 7, snippet: 'x', timestamp: '2025-01-01T00:00:00Z' }] } };

describe('the plugin', () => {
  it('is a search provider of kind reference, with its endpoint and what it applies', () => {
    const p = createWikipediaProvider({ egress: nodeEgress });
    expect(p).toMatchObject({ name: 'search-provider-wikipedia', kind: 'search-provider', id: 'wikipedia', kinds: ['reference'] });
    expect(p.endpoint).toBe('https://{lang}.wikipedia.org/w/api.php');
    expect([...p.applies!].sort()).toEqual(['excluded', 'language', 'result_type', 'site']);
    expect(DEFAULT_BASE_URL).toBe('https://{lang}.wikipedia.org');
    // One wiki: language is not applied; credentials never show in the endpoint.
    const one = createWikipediaProvider({ egress: nodeEgress, baseUrl: 'https://bot:s3cret@wiki.example.org/' });
    expect(one.endpoint).toBe('https://wiki.example.org/w/api.php');
    expect([...one.applies!].sort()).toEqual(['excluded', 'result_type', 'site']);
  });

  it('refuses a base URL that is not absolute http(s) or carries a query, when created', () => {
    expect(() => createWikipediaProvider({ egress: nodeEgress, baseUrl: 'wiki.example.org' })).toThrow(/absolute URL/);
    expect(() => createWikipediaProvider({ egress: nodeEgress, baseUrl: 'ftp://wiki.example.org' })).toThrow(/http or https/);
    expect(() => createWikipediaProvider({ egress: nodeEgress, baseUrl: 'https://wiki.example.org/?a=1' })).toThrow(/query or fragment/);
  });
});

describe('what it sends', () => {
  it('asks GET /w/api.php with list=search, the query, srlimit, srprop, srinfo, formatversion 2, and a User-Agent', async () => {
    wiki.setHits(hits(3));
    await provider().search(request('rust', { limit: 7 }));
    const [s] = wiki.searches();
    expect(s!.method).toBe('GET');
    expect(s!.path).toBe('/w/api.php');
    expect(s!.params).toEqual({
      action: 'query', list: 'search', srsearch: 'rust', srlimit: '7', sroffset: '0', srprop: 'snippet|timestamp', srinfo: 'totalhits',
      format: 'json', formatversion: '2', utf8: '1',
    });
    expect(s!.params.maxlag).toBeUndefined();
    expect(s!.headers['user-agent']).toMatch(/^Scour\//);
    expect(s!.headers.accept).toContain('application/json');
    expect(s!.headers.authorization).toBeUndefined();
  });

  it('names the operator\'s contact address in the User-Agent when one is set (Wikimedia\'s User-Agent policy)', async () => {
    await provider({ contactEmail: 'ops@example.org' }).search(request('rust'));
    expect(wiki.searches()[0]!.headers['user-agent']).toMatch(/^Scour\/.*ops@example\.org\)$/);
  });

  it('sends user:pass@ as Basic auth and never shows it in messages', async () => {
    const base = wiki.url.replace('http://', 'http://bot:s%3Acret@');
    await provider({ baseUrl: base }).search(request('rust'));
    expect(wiki.searches()[0]!.headers.authorization).toBe(`Basic ${Buffer.from('bot:s:cret').toString('base64')}`);
    wiki.setMode('error');
    const err = await providerError(provider({ baseUrl: base }).search(request('rust')));
    expect(err.message).not.toContain('cret');
  });

  it('passes every exchange the timeout and the request\'s signal', async () => {
    const calls: GuardedRequest[] = [];
    const recording: Egress = { fetch: (url, r) => { calls.push(r); return nodeEgress.fetch(url, r); }, resolveAll: (h, p) => nodeEgress.resolveAll(h, p) };
    const controller = new AbortController();
    await provider({ egress: recording, timeoutMs: 4321 }).search(request('rust', { signal: controller.signal }));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.timeoutMs).toBe(4321);
    controller.abort(new Error('gone'));
    expect(calls[0]!.signal?.aborted).toBe(true);
  });
});

describe('the CirrusSearch query it builds', () => {
  const cases: [string, string][] = [
    ['rust borrow checker', 'rust borrow checker'],
    ['"memory safety" rust', 'rust "memory safety"'],
    ['rust -java -"garbage collector"', 'rust -java -"garbage collector"'],
    ['intitle:borrow rust', 'rust intitle:"borrow"'],
    ['intitle:"borrow checker" rust', 'rust intitle:"borrow checker"'],
    ['"red car" OR "blue bike"', '"red car" OR "blue bike"'],
    // No CirrusSearch keyword, wildcard or operator of the user's gets through.
    ['C++ insource:foo wild* AND NOT fuzzy~2 !bang', 'C "insource foo" wild and not "fuzzy 2" bang'],
    ['site:example.org rust', 'rust'],
  ];
  for (const [q, srsearch] of cases) {
    it(`${q} -> ${srsearch}`, async () => {
      expect(buildSrsearch(request(q).query)).toBe(srsearch);
    });
  }

  it('is what reaches the wiki', async () => {
    await provider().search(request('"memory safety" rust -java'));
    expect(wiki.searches()[0]!.params.srsearch).toBe('rust "memory safety" -java');
  });
});

describe('the wiki of the language', () => {
  it('picks the wiki from filters.language where the base URL holds {lang}, and reports language applied', async () => {
    wiki.setHits(hits(2));
    const res = await provider({ baseUrl: `${wiki.url}/{lang}` }).search(request('rust', { filters: { language: 'de' } }));
    expect(wiki.searches().map((s) => s.path)).toEqual(['/de/w/api.php']);
    expect(res.applied.has('language')).toBe(true);
    expect(res.results.map((r) => r.language)).toEqual(['de', 'de']);
    expect(res.results[0]!.url).toBe(`${wiki.url}/de/wiki/Article_1`);
  });

  it('uses the English wiki when no language is asked', async () => {
    const res = await provider({ baseUrl: `${wiki.url}/{lang}` }).search(request('rust'));
    expect(wiki.searches().map((s) => s.path)).toEqual(['/en/w/api.php']);
    expect(res.applied.has('language')).toBe(true);
  });

  it('with the default base URL asks https://<lang>.wikipedia.org and links there', async () => {
    const urls: string[] = [];
    const res = await createWikipediaProvider({ egress: cannedEgress(ONE_HIT, urls) }).search(request('rust', { filters: { language: 'fr' } }));
    expect(urls).toHaveLength(1);
    expect(urls[0]!.startsWith('https://fr.wikipedia.org/w/api.php?')).toBe(true);
    expect(res.results[0]!.url).toBe('https://fr.wikipedia.org/wiki/Rust_(programming_language)');
    expect(res.results[0]!.language).toBe('fr');
  });

  it('does not apply a language it cannot name a wiki for, nor any language on a base without {lang}', async () => {
    const odd = await provider({ baseUrl: `${wiki.url}/{lang}` }).search(request('rust', { filters: { language: 'x-klingon' } }));
    expect(wiki.searches().at(-1)!.path).toBe('/en/w/api.php');
    expect(odd.applied.has('language')).toBe(false);

    wiki.setHits(hits(1));
    const one = await provider().search(request('rust', { filters: { language: 'de' } }));
    expect(wiki.searches().at(-1)!.path).toBe('/w/api.php');
    expect(one.applied.has('language')).toBe(false);
    expect(one.results[0]!.language).toBeNull();
  });
});

describe('filters: applied, or answered without a request', () => {
  it('reports result_type, site and excluded applied (and language with {lang}); not time_range, country, safe_search', async () => {
    const res = await provider().search(request('rust -java', { filters: { timeRange: 'week', publishedAfter: Date.UTC(2026, 10, 21), country: 'DE', safeSearch: 'strict' } }));
    expect([...res.applied].sort()).toEqual(['excluded', 'result_type', 'site']);
    expect(wiki.searches()).toHaveLength(1);
  });

  it('answers result_type news with nothing, every filter applied, without a request', async () => {
    const res = await provider().search(request('rust', { filters: { resultType: 'news' } }));
    expect(res).toEqual({ results: [], total: 0, applied: new Set(EVERY_FILTER) });
    expect(wiki.requests).toHaveLength(0);
  });

  it('decides site: and -site: from the wiki\'s host, without a request when nothing can match', async () => {
    const urls: string[] = [];
    const p = createWikipediaProvider({ egress: cannedEgress(ONE_HIT, urls) });
    for (const q of ['rust site:wikipedia.org', 'rust site:en.wikipedia.org', 'rust site:example.org site:wikipedia.org', 'rust -site:de.wikipedia.org']) {
      const res = await p.search(request(q));
      expect(res.results, q).toHaveLength(1);
      expect(res.applied.has('site'), q).toBe(true);
    }
    expect(urls).toHaveLength(4);
    for (const q of ['rust site:example.org', 'rust site:de.wikipedia.org', 'rust -site:wikipedia.org', 'rust -site:en.wikipedia.org']) {
      const res = await p.search(request(q));
      expect(res, q).toEqual({ results: [], total: 0, applied: new Set(['result_type', 'site', 'excluded', 'language']) });
    }
    expect(urls).toHaveLength(4);
  });
});

describe('what it returns', () => {
  it('maps title, page URL, snippet with highlights, the last edit as publishedAt, and totalhits', async () => {
    wiki.setHits([{ title: 'Rust (programming language)', snippet: '<span class="searchmatch">Rust</span> is a &quot;systems&quot; language &amp; more; <span class="searchmatch">rust</span>ic', timestamp: '2025-05-06T07:08:09Z' }]);
    wiki.setTotalHits(4242);
    const res = await provider().search(request('rust'));
    expect(res.total).toBe(4242);
    const [r] = res.results;
    expect(r).toEqual({
      url: `${wiki.url}/wiki/Rust_(programming_language)`,
      title: 'Rust (programming language)',
      snippet: 'Rust is a "systems" language & more; rustic',
      highlights: [[0, 4], [37, 41]],
      publishedAt: Date.UTC(2025, 4, 6, 7, 8, 9),
      type: null,
      language: null,
      country: null,
      safe: null,
    });
    expect(r!.snippet.slice(37, 41)).toBe('rust');
  });

  it('builds page URLs as MediaWiki does (spaces as underscores, wfUrlencode)', () => {
    const base = 'https://en.wikipedia.org';
    expect(pageUrl(base, 'AC/DC')).toBe('https://en.wikipedia.org/wiki/AC/DC');
    expect(pageUrl(base, 'C++ (programming language)')).toBe('https://en.wikipedia.org/wiki/C%2B%2B_(programming_language)');
    expect(pageUrl(base, "Don't Stop Me Now")).toBe('https://en.wikipedia.org/wiki/Don%27t_Stop_Me_Now');
    expect(pageUrl(base, 'Talk:Rock & roll?')).toBe('https://en.wikipedia.org/wiki/Talk:Rock_%26_roll%3F');
    expect(pageUrl(base, 'Zürich')).toBe('https://en.wikipedia.org/wiki/Z%C3%BCrich');
    expect(pageUrl(base, '100% #1')).toBe('https://en.wikipedia.org/wiki/100%25_%231');
  });

  it('reads a formatversion 1 answer the same way', async () => {
    wiki.setHits(hits(2));
    const downgrade: Egress = {
      fetch: (url, r) => nodeEgress.fetch(url.replace('formatversion=2', 'formatversion=1'), r),
      resolveAll: (h, p) => nodeEgress.resolveAll(h, p),
    };
    const res = await provider({ egress: downgrade }).search(request('rust'));
    expect(wiki.searches()[0]!.params.formatversion).toBe('1');
    expect(res.results.map((r) => r.title)).toEqual(['Article 1', 'Article 2']);
    expect(res.total).toBe(2);
  });

  it('answers an empty result set as empty, with its total', async () => {
    const res = await provider().search(request('nothingmatchesthis'));
    expect(res.results).toEqual([]);
    expect(res.total).toBe(0);
  });

  it('asks once for up to 500, and a second page with sroffset only past that', async () => {
    wiki.setHits(hits(30));
    const few = await provider().search(request('rust', { limit: 25 }));
    expect(few.results).toHaveLength(25);
    expect(wiki.searches().map((s) => [s.params.srlimit, s.params.sroffset])).toEqual([['25', '0']]);

    wiki.reset();
    wiki.setHits(hits(700));
    const many = await provider().search(request('rust', { limit: 600 }));
    expect(wiki.searches().map((s) => [s.params.srlimit, s.params.sroffset])).toEqual([['500', '0'], ['100', '500']]);
    expect(many.results).toHaveLength(600);
    expect(many.results[599]!.title).toBe('Article 600');
    expect(many.total).toBe(700);
  });

  it('survives hostile hits: no title, non-string fields, markup, huge and control-laden strings', async () => {
    const huge = `<span class="searchmatch">rust</span> ${'word '.repeat(5000)}`;
    wiki.setHits([
      { verbatim: { ns: 0, pageid: 1, snippet: 'no title here' } },
      { verbatim: { ns: 0, title: 42, snippet: 'numeric title' } },
      { verbatim: { ns: 0, title: '   ', snippet: 'blank title' } },
      { verbatim: 'not an object' },
      { verbatim: null },
      { verbatim: { ns: 0, title: 'Plain', snippet: ['not', 'a', 'string'], timestamp: 12345 } },
      { verbatim: { ns: 0, title: '<b>Bold</b> &amp; <script>alert(1)</script>', snippet: '<script>alert(1)</script><span class="searchmatch">rust</span>\u0000\u202e ok', timestamp: 'yesterday' } },
      { verbatim: { ns: 0, title: 'Huge', snippet: huge, timestamp: '2025-13-45T99:00:00Z' } },
      { verbatim: { ns: 0, title: 'Plain', snippet: 'duplicate title' } },
    ]);
    const res = await provider().search(request('rust'));
    expect(res.results.map((r) => r.title)).toEqual(['Plain', 'Bold & alert(1)', 'Huge']);
    const [plain, marked, big] = res.results;
    expect(plain!.snippet).toBe('');
    expect(plain!.publishedAt).toBeNull();
    expect(marked!.snippet).not.toMatch(/[<>\u0000\u202e]/);
    expect(marked!.snippet).toMatch(/^alert\(1\) rust\s+ok$/);
    expect(marked!.highlights).toEqual([[marked!.snippet.indexOf('rust'), marked!.snippet.indexOf('rust') + 4]]);
    expect(marked!.publishedAt).toBeNull();
    expect(big!.snippet.length).toBeLessThanOrEqual(300);
    expect(big!.snippet.endsWith('\u2026')).toBe(true);
    expect(big!.highlights).toEqual([[0, 4]]);
    expect(big!.publishedAt).toBeNull();
    for (const r of res.results) expect(new URL(r.url).protocol).toBe('http:');
  });

  it('fails when the answer has no "query" (not a MediaWiki api.php)', async () => {
    wiki.setRaw({ body: { hello: 'world' } });
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/without "query"/);
  });
});

describe('MediaWiki errors in a 200 body', () => {
  it('maxlag is a rate limit for the Retry-After the wiki sends', async () => {
    wiki.setApiError('maxlag', 'Waiting for 10.64.48.23: 7 seconds lagged.', {
      headers: { 'retry-after': '5', 'x-database-lag': '7' }, extra: { host: '10.64.48.23', lag: 7, type: 'db' },
    });
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(5000);
    expect((err as ProviderRateLimited).message).toMatch(/maxlag: Waiting for/);
  });

  it('maxlag without Retry-After waits the lag; ratelimited without either waits a minute', async () => {
    wiki.setApiError('maxlag', 'Waiting for db1: 3 seconds lagged.', { extra: { host: 'db1', lag: 3, type: 'db' } });
    expect(((await failure(provider().search(request('rust')))) as ProviderRateLimited).retryAfterMs).toBe(3000);
    wiki.setApiError('ratelimited', "You've exceeded your rate limit. Please wait some time and try again.");
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(60_000);
  });

  it('readapidenied (a private wiki) is PROVIDER_MISCONFIGURED', async () => {
    wiki.setApiError('readapidenied', 'You need read permission to use this module.');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_MISCONFIGURED');
  });

  it('any other error code is PROVIDER_FAILED with the wiki\'s info', async () => {
    wiki.setApiError('internal_api_error_DBQueryError', '[a1b2c3] Caught exception of type Wikimedia\\Rdbms\\DBQueryError');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toContain('internal_api_error_DBQueryError');
    expect(err.message).toContain('DBQueryError');
  });
});

describe('HTTP failures', () => {
  it('429 rejects with ProviderRateLimited for the Retry-After, a minute when none is given', async () => {
    wiki.setMode('rate-limited', { retryAfter: 30 });
    const err = await failure(provider().search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(30_000);
    wiki.setMode('rate-limited', { retryAfter: undefined });
    expect(((await failure(provider().search(request('rust')))) as ProviderRateLimited).retryAfterMs).toBe(60_000);
  });

  it('503 (Wikimedia\'s error page) is PROVIDER_FAILED', async () => {
    wiki.setMode('error');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.status).toBe(503);
  });

  it('a body cut in the middle is PROVIDER_FAILED', async () => {
    wiki.setHits(hits(5));
    wiki.setMode('malformed');
    const err = await providerError(provider().search(request('rust')));
    expect(err.code).toBe('PROVIDER_FAILED');
    expect(err.message).toMatch(/invalid JSON/);
  });

  it('401 and 403 (a refused User-Agent) are PROVIDER_MISCONFIGURED', async () => {
    for (const status of [401, 403]) {
      wiki.setRaw({ status, headers: { 'content-type': 'text/plain' }, body: 'Please set a user-agent and respect our robot policy https://w.wiki/4wJS. See also T400119.' });
      const err = await providerError(provider().search(request('rust')));
      expect(err.code, String(status)).toBe('PROVIDER_MISCONFIGURED');
      expect(err.status).toBe(status);
    }
  });

  it('times out with PROVIDER_TIMEOUT past timeoutMs', async () => {
    wiki.setMode('hang');
    const err = await providerError(provider({ timeoutMs: 300 }).search(request('rust')));
    expect(err.code).toBe('PROVIDER_TIMEOUT');
  });

  it('rejects with the signal\'s reason when the search gives up', async () => {
    wiki.setMode('hang');
    const controller = new AbortController();
    const reason = new Error('client went away');
    setTimeout(() => controller.abort(reason), 100);
    expect(await failure(provider().search(request('rust', { signal: controller.signal })))).toBe(reason);
  });
});
