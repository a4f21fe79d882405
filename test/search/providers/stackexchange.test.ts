/**
 * The stackexchange search provider against a stand-in Stack Exchange API
 * on loopback (test/support/standins/stackexchange.ts: gzip always, the
 * common wrapper, errors as HTTP 400 with error_id/error_name), through the
 * real Egress: what it sends (q, site, sort, page size, fromdate, the
 * withbody filter, the key), how questions become results, paging, the
 * backoff (results kept, a warning, the next search refused without a
 * request until it ends), throttle_violation and the other errors, 5xx,
 * malformed answers, abort and hostile fields.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../../adapters/egress/port.js';
import { ProviderRateLimited, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import {
  APPLIES, createStackexchangeProvider, DEFAULT_BASE_URL, FILTER, throttleSeconds, toProviderResult,
} from '../../../plugins/search-providers/stackexchange/index.js';
import { ProviderError } from '../../../plugins/sdk/provider.js';
import { startStackexchange, VALID_KEY, type Question, type StackexchangeStandin } from '../../support/standins/stackexchange.js';
import { NO_FILTERS, type RequestOver, failure, providerError, providerRequest } from './support.js';

let se: StackexchangeStandin;
beforeAll(async () => { se = await startStackexchange(); });
afterAll(async () => { await se.close(); });
beforeEach(() => se.reset());

const request = (q: string, over: RequestOver = {}): ProviderRequest => providerRequest(q, over, Date.now());

const provider = (over: { baseUrl?: string; key?: string; site?: string; timeoutMs?: number; now?: () => number } = {}) =>
  createStackexchangeProvider({
    egress: nodeEgress, baseUrl: over.baseUrl ?? se.url, key: over.key, site: over.site, timeoutMs: over.timeoutMs ?? 5_000, ...(over.now === undefined ? {} : { now: over.now }),
  });

const T0 = 1_700_000_000;

/** A question as the API returns it with the withbody filter. */
const question = (n: number, over: Record<string, unknown> = {}): Question => ({
  tags: ['rust', 'async'],
  owner: { account_id: 10 + n, reputation: 1234, user_id: 20 + n, user_type: 'registered', display_name: `user${n}`, link: `https://stackoverflow.com/users/${20 + n}/user${n}` },
  is_answered: n % 2 === 1,
  view_count: 1000 + n,
  answer_count: n,
  score: 10 + n,
  last_activity_date: T0 + n * 100 + 50,
  creation_date: T0 + n * 100,
  question_id: 5000 + n,
  content_license: 'CC BY-SA 4.0',
  link: `https://stackoverflow.com/questions/${5000 + n}/rust-question-${n}`,
  title: `How do I &quot;await&quot; in Rust ${n}?`,
  body: `<p>I tried <code>tokio::spawn</code> &amp; it failed (rust ${n}).</p>`,
  ...over,
});

describe('what the provider sends', () => {
  it('is a search-provider plugin with its id, kinds, endpoint and the filters it applies', () => {
    const p = provider({ site: 'superuser' });
    expect(p).toMatchObject({ name: 'search-provider-stackexchange', kind: 'search-provider', id: 'stackexchange', kinds: ['social'], endpoint: se.url });
    expect(p.description).toContain('superuser');
    expect([...p.applies!].sort()).toEqual(['result_type', 'time_range']);
    expect(createStackexchangeProvider({ egress: nodeEgress }).endpoint).toBe(DEFAULT_BASE_URL);
    expect(() => createStackexchangeProvider({ egress: nodeEgress, site: 'stack overflow' })).toThrow(/site/);
    expect(() => createStackexchangeProvider({ egress: nodeEgress, site: 'x&key=1' })).toThrow(/site/);
  });

  it('asks GET /2.3/search/advanced with q, the site, relevance order, limit per page and the withbody filter', async () => {
    se.setQuestions([question(1)]);
    await provider().search(request('"tokio spawn" rust -java', { limit: 7 }));
    const [s] = se.searches();
    expect(s!.method).toBe('GET');
    expect(s!.params).toEqual({ q: 'tokio spawn rust', site: 'stackoverflow', order: 'desc', sort: 'relevance', pagesize: '7', page: '1', filter: FILTER });
    expect(FILTER).toBe('withbody');
    expect(s!.headers['accept-encoding']).toMatch(/gzip/);
  });

  it('sends the site option and the key', async () => {
    se.setQuestions([question(1)]);
    const res = await provider({ site: 'unix', key: VALID_KEY }).search(request('rust'));
    const [s] = se.searches();
    expect(s!.params.site).toBe('unix');
    expect(s!.params.key).toBe(VALID_KEY);
    expect(res.results).toHaveLength(1);
  });

  it('the stand-in gzips every answer, as the API does, and the provider reads it', async () => {
    se.setQuestions([question(1)]);
    const raw = await fetch(`${se.url}/2.3/search/advanced?q=rust&site=stackoverflow`);
    expect(raw.headers.get('content-encoding')).toBe('gzip');
    const bad = await fetch(`${se.url}/2.3/search/advanced?q=rust`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-encoding')).toBe('gzip');
    expect(await bad.json()).toEqual({ error_id: 400, error_message: 'site is required', error_name: 'bad_parameter' });
    expect((await provider().search(request('rust'))).results).toHaveLength(1);
  });

  it('time_range: fromdate in seconds, rounded up (exact), applied', async () => {
    se.setQuestions([question(1), question(2), question(3)]);
    const after = (T0 + 200) * 1000 - 1;
    const res = await provider().search(request('rust', { filters: { publishedAfter: after, timeRange: 'week' } }));
    expect(se.searches()[0]!.params.fromdate).toBe(String(T0 + 200));
    expect(res.results.map((r) => r.url)).toEqual([question(2).link, question(3).link]);
    expect(res.applied.has('time_range')).toBe(true);
  });

  it('result_type news: no request, nothing, every filter applied; other filters are left to the operation', async () => {
    se.setQuestions([question(1)]);
    const news = await provider().search(request('rust', { filters: { resultType: 'news' } }));
    expect(news).toEqual({ results: [], total: 0, applied: new Set(['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded']) });
    expect(se.requests).toHaveLength(0);
    const web = await provider().search(request('rust -java site:stackoverflow.com', { filters: { language: 'en', country: 'US', safeSearch: 'strict' } }));
    expect([...web.applied].sort()).toEqual([...APPLIES].sort());
  });
});

describe('questions as results', () => {
  it('decodes the title, links the question, cuts the body into the snippet and keeps it whole as abstract', async () => {
    se.setQuestions([question(1)]);
    const res = await provider().search(request('rust'));
    expect(res.results).toEqual([{
      url: 'https://stackoverflow.com/questions/5001/rust-question-1',
      title: 'How do I "await" in Rust 1?',
      snippet: 'I tried tokio::spawn & it failed (rust 1).',
      publishedAt: (T0 + 100) * 1000,
      type: 'social',
      language: null,
      country: null,
      safe: null,
      abstract: 'I tried tokio::spawn & it failed (rust 1).',
    }]);
    expect(res.total).toBe(1);
  });

  it('without a body the snippet says tags, score and answers', async () => {
    const { body: _b, ...noBody } = question(3);
    se.setAnswer({ gzip: true, body: { items: [noBody], has_more: false, quota_max: 300, quota_remaining: 299 } });
    const [r] = (await provider().search(request('rust'))).results;
    expect(r!.snippet).toBe('[rust, async] \u00b7 score 13 \u00b7 3 answers \u00b7 answered');
    expect(r!.abstract).toBeUndefined();
  });

  it('pages: a second page only when limit is over 100 and has_more; total when the last page says no more', async () => {
    se.setQuestions(Array.from({ length: 130 }, (_, i) => question(i + 1)));
    const res = await provider().search(request('rust', { limit: 150 }));
    expect(se.searches().map((s) => [s.params.page, s.params.pagesize])).toEqual([['1', '100'], ['2', '100']]);
    expect(res.results).toHaveLength(130);
    expect(res.total).toBe(130);

    se.reset();
    se.setQuestions(Array.from({ length: 130 }, (_, i) => question(i + 1)));
    const first = await provider().search(request('rust', { limit: 20 }));
    expect(se.searches()).toHaveLength(1);
    expect(first.results).toHaveLength(20);
    expect(first.total).toBeUndefined();
  });

  it('no questions is no results and total 0', async () => {
    se.setQuestions([question(1)]);
    expect(await provider().search(request('haskell'))).toMatchObject({ results: [], total: 0 });
  });
});

describe('backoff', () => {
  it('returns the results with a PROVIDER_BACKOFF warning, then refuses without a request until the backoff ends', async () => {
    let clock = 1_000_000;
    const p = provider({ now: () => clock });
    se.setQuestions([question(1)]);
    se.setBackoff(10);
    const res = await p.search(request('rust'));
    expect(res.results).toHaveLength(1);
    expect(res.warnings).toEqual([{ code: 'PROVIDER_BACKOFF', message: expect.stringContaining('backoff of 10 s') }]);
    expect(res.warnings![0]!.message).toContain(new Date(1_010_000).toISOString());

    se.setBackoff(undefined);
    clock += 4_000;
    const err = await failure(p.search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(6_000);
    expect(se.searches()).toHaveLength(1);

    clock += 6_000;
    const again = await p.search(request('rust'));
    expect(again.warnings).toBeUndefined();
    expect(se.searches()).toHaveLength(2);
  });

  it('a backoff on the first page stops the paging', async () => {
    se.setQuestions(Array.from({ length: 130 }, (_, i) => question(i + 1)));
    se.setBackoff(3);
    const res = await provider().search(request('rust', { limit: 150 }));
    expect(se.searches()).toHaveLength(1);
    expect(res.results).toHaveLength(100);
    expect(res.warnings!.map((w) => w.code)).toEqual(['PROVIDER_BACKOFF']);
  });
});

describe('failures', () => {
  it('throttle_violation (HTTP 400): ProviderRateLimited for the seconds its message names, and no request until then', async () => {
    let clock = 5_000_000;
    const p = provider({ now: () => clock });
    se.setMode('rate-limited', { retryAfter: 120 });
    const err = await failure(p.search(request('rust')));
    expect(err).toBeInstanceOf(ProviderRateLimited);
    expect((err as ProviderRateLimited).retryAfterMs).toBe(120_000);
    expect((err as ProviderRateLimited).message).toContain('throttle_violation');
    se.setMode('ok');
    clock += 60_000;
    const held = await failure(p.search(request('rust')));
    expect((held as ProviderRateLimited).retryAfterMs).toBe(60_000);
    expect(se.searches()).toHaveLength(1);
    expect(throttleSeconds('too many requests from this IP, more requests available in 82700 seconds')).toBe(82_700);
    expect(throttleSeconds('slow down')).toBeUndefined();
  });

  it('a spent quota is the same throttle_violation', async () => {
    se.setQuestions([question(1)]);
    se.setQuota(1);
    const p = provider();
    expect((await p.search(request('rust'))).results).toHaveLength(1);
    const err = await failure(p.search(request('rust')));
    expect((err as ProviderRateLimited).retryAfterMs).toBe(82_700_000);
  });

  it('a refused key or site is PROVIDER_MISCONFIGURED naming the setting; a wrong path is no_method, misconfigured too', async () => {
    const key = await providerError(provider({ key: 'not-a-key' }).search(request('rust')));
    expect([key.code, key.status]).toEqual(['PROVIDER_MISCONFIGURED', 400]);
    expect(key.message).toContain('SCOUR_PROVIDER_STACKEXCHANGE_KEY');
    expect(key.message).not.toContain('not-a-key');

    const site = await providerError(provider({ site: 'nosuchsite' }).search(request('rust')));
    expect(site.code).toBe('PROVIDER_MISCONFIGURED');
    expect(site.message).toContain('SCOUR_PROVIDER_STACKEXCHANGE_SITE');
    expect(site.message).toContain('No site found for name');

    const path = await providerError(provider({ baseUrl: `${se.url}/api` }).search(request('rust')));
    expect(path.code).toBe('PROVIDER_MISCONFIGURED');
    expect(path.message).toContain('no_method');
  });

  it('internal_error, a 400 without error fields and an error in a 200 are mapped from the body', async () => {
    se.setAnswer({ status: 400, gzip: true, body: { error_id: 500, error_message: 'An error occurred', error_name: 'internal_error' } });
    const internal = await providerError(provider().search(request('rust')));
    expect(internal.code).toBe('PROVIDER_FAILED');
    expect(internal.message).toContain('internal_error (500): An error occurred');

    se.setAnswer({ status: 400, gzip: true, body: { items: [] } });
    expect((await providerError(provider().search(request('rust')))).code).toBe('PROVIDER_FAILED');

    se.setAnswer({ gzip: true, body: { error_id: 406, error_message: 'compromised', error_name: 'access_token_compromised' } });
    expect((await providerError(provider().search(request('rust')))).code).toBe('PROVIDER_MISCONFIGURED');

    se.setAnswer({ gzip: true, body: { has_more: false } });
    const noItems = await providerError(provider().search(request('rust')));
    expect(noItems.message).toContain('without items');
  });

  it('5xx from the front is PROVIDER_FAILED, a cut body is PROVIDER_FAILED, HTTP 401/403 are PROVIDER_MISCONFIGURED', async () => {
    se.setQuestions([question(1)]);
    se.setMode('error');
    const e5 = await providerError(provider().search(request('rust')));
    expect([e5.code, e5.status]).toEqual(['PROVIDER_FAILED', 503]);

    se.setMode('malformed');
    const em = await providerError(provider().search(request('rust')));
    expect(em.code).toBe('PROVIDER_FAILED');
    expect(em.message).toContain('invalid JSON');

    se.setMode('ok');
    for (const status of [401, 403]) {
      se.setAnswer({ status, headers: { 'content-type': 'text/html' }, body: '<h1>Forbidden</h1>' });
      expect((await providerError(provider().search(request('rust')))).code, String(status)).toBe('PROVIDER_MISCONFIGURED');
    }
  });

  it('a service that does not answer in time is PROVIDER_TIMEOUT; the signal aborts with its reason', async () => {
    se.setMode('hang');
    expect((await providerError(provider({ timeoutMs: 300 }).search(request('rust')))).code).toBe('PROVIDER_TIMEOUT');
    const controller = new AbortController();
    const reason = new Error('the search is over');
    setTimeout(() => controller.abort(reason), 100);
    const err = await failure(provider({ timeoutMs: 10_000 }).search(request('rust', { signal: controller.signal })));
    expect(err).toBe(reason);
  });
});

describe('hostile fields', () => {
  it('skips questions without a link and survives markup, odd types and huge strings', async () => {
    const huge = `<p>${'word '.repeat(300_000)}</p>`;
    se.setAnswer({
      gzip: true,
      body: {
        items: [
          null,
          'x',
          { title: 'No link', question_id: 1 },
          { link: 'javascript:alert(1)', title: 'Bad link' },
          { link: 'https://stackoverflow.com/q/2', title: '&lt;script&gt;alert(1)&lt;/script&gt; <b>Bold</b> title', body: 17, tags: [1, 'ok', { a: 1 }], score: 'high', creation_date: '2020' },
          { link: 'https://stackoverflow.com/q/3', title: 99, body: huge, creation_date: -5 },
          { link: 'https://stackoverflow.com/q/2', title: 'Duplicate' },
        ],
        has_more: 'maybe',
        quota_remaining: 'lots',
      },
    });
    const res = await provider().search(request('anything'));
    expect(res.results.map((r) => r.url)).toEqual(['https://stackoverflow.com/q/2', 'https://stackoverflow.com/q/3']);
    const [odd, big] = res.results;
    // Escaped markup in a title is text, decoded; real tags are dropped.
    expect(odd!.title).toBe('<script>alert(1)</script> Bold title');
    expect(odd!.snippet).toBe('[ok]');
    expect(odd!.publishedAt).toBeNull();
    expect(big!.title.length).toBeLessThanOrEqual(300);
    expect(big!.snippet.length).toBeLessThanOrEqual(300);
    expect(big!.abstract!.length).toBeGreaterThan(1_000_000);
    expect(big!.publishedAt).toBeNull();
    // has_more is not true: the page was the last.
    expect(res.total).toBe(7);
  });

  it('toProviderResult is pure', () => {
    expect(toProviderResult(undefined)).toBeUndefined();
    expect(toProviderResult({ link: 'https://x.example/q/1', title: 'T', creation_date: 2 })).toMatchObject({ url: 'https://x.example/q/1', publishedAt: 2000, type: 'social' });
  });
});
