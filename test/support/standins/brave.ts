/**
 * A stand-in for the Brave Search API on loopback, built on the shared
 * skeleton (server.ts). It answers as Brave's documentation and its users'
 * reports show (see plugins/search-providers/brave/index.ts for the sources):
 *
 * - `GET /res/v1/web/search` answers `{"type": "search", "query": {...},
 *   "mixed": {...}, "web": {"type": "search", "results": [...],
 *   "family_friendly"}}` (`web` left out when nothing matched);
 *   `GET /res/v1/news/search` answers `{"type": "news", "query": {...},
 *   "results": [...]}`. Results are completed as Brave sends them (`type`
 *   search_result / news_result, `subtype`, `is_source_local`,
 *   `is_source_both`, `meta_url`, `family_friendly`, `language`...);
 * - `query` carries `original`, `spellcheck_off`, `more_results_available`
 *   (web) and `search_operators` {applied, cleaned_query, sites}: applied
 *   when the query used an operator (site:, -word, "phrase"), sites being the
 *   site: domains;
 * - paging: `offset` counts pages of `count` (page n is items n*count to
 *   (n+1)*count of the corpus);
 * - checks as Brave does: no X-Subscription-Token is a 422 VALIDATION with
 *   `loc` ["header", "x-subscription-token"], a token other than `key` a 422
 *   SUBSCRIPTION_TOKEN_INVALID; a bad `q` (empty, over 400 characters or 50
 *   words), `count` (web 1-20, news 1-50), `offset` (0-9), `country`,
 *   `search_lang`, `safesearch` or `freshness` is a 422 VALIDATION listing
 *   the parameter in `meta.errors[].loc`;
 * - every answer carries X-RateLimit-Limit/-Policy/-Remaining/-Reset; the
 *   rate-limited mode answers 429 RATE_LIMITED with the per-second window
 *   exhausted (`retryAfter` is its reset), or, after `setQuotaUsed(true)`,
 *   429 QUOTA_LIMITED with the monthly window exhausted (reset `retryAfter`);
 *   the error mode a 500 in Brave's ErrorResponse envelope (Brave documents
 *   no 5xx code: INTERNAL_ERROR stands in; the provider reads only `detail`).
 *
 * `setWeb(results)` and `setNews(results)` set the corpus (items are
 * completed; `verbatim` items are sent as given); `answer(fn)` replaces the
 * handler's body for one test.
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

export const BRAVE_KEY = 'brave-test-token';

const COUNTRIES = new Set([
  'ALL', 'AR', 'AU', 'AT', 'BE', 'BR', 'CA', 'CL', 'DK', 'FI', 'FR', 'DE', 'HK', 'IN', 'ID', 'IT', 'JP', 'KR', 'MY', 'MX', 'NL',
  'NZ', 'NO', 'CN', 'PL', 'PT', 'PH', 'RU', 'SA', 'ZA', 'ES', 'SE', 'CH', 'TW', 'TR', 'GB', 'US',
]);
const SEARCH_LANGS = new Set([
  'ar', 'eu', 'bn', 'bg', 'ca', 'zh-hans', 'zh-hant', 'hr', 'cs', 'da', 'nl', 'en', 'en-gb', 'et', 'fi', 'fr', 'gl', 'de', 'gu',
  'he', 'hi', 'hu', 'is', 'it', 'jp', 'kn', 'ko', 'lv', 'lt', 'ms', 'ml', 'mr', 'nb', 'pl', 'pt-br', 'pt-pt', 'pa', 'ro', 'ru',
  'sr', 'sk', 'sl', 'es', 'sv', 'ta', 'te', 'th', 'tr', 'uk', 'vi',
]);

export interface BraveItem {
  readonly url?: unknown;
  readonly title?: unknown;
  readonly description?: unknown;
  readonly page_age?: unknown;
  readonly age?: unknown;
  readonly language?: unknown;
  readonly family_friendly?: unknown;
  readonly extra_snippets?: unknown;
  /** Sent exactly as this value. */
  readonly verbatim?: unknown;
}

export interface BraveStandin extends Standin {
  setWeb(items: readonly BraveItem[]): void;
  setNews(items: readonly BraveItem[]): void;
  setQuotaUsed(used: boolean): void;
  /** The body of the next answers, from the request (status 200 unless the answer says). */
  answer(fn: ((req: Recorded) => Answer) | undefined): void;
  /** The requests to the search endpoints. */
  searches(): Recorded[];
}

function errorBody(status: number, code: string, detail: string, meta: Record<string, unknown>): object {
  return {
    type: 'ErrorResponse',
    error: { id: '5d832250-9396-4f6e-b84a-2a1fe524cd7d', status, code, detail, meta },
    time: Math.floor(Date.now() / 1000),
  };
}

function validation(loc: [string, string], msg: string, input: unknown): Answer {
  return {
    status: 422,
    body: errorBody(422, 'VALIDATION', 'Unable to validate request parameter(s)', {
      errors: [{ type: 'value_error', loc, msg, input, ctx: {} }],
    }),
  };
}

function complete(item: BraveItem, news: boolean): unknown {
  if ('verbatim' in item) return item.verbatim;
  let host = '';
  let path = '';
  try {
    const u = new URL(String(item.url));
    host = u.hostname;
    path = u.pathname;
  } catch {
    // hostile URL: no meta_url parts
  }
  const common = {
    title: item.title ?? 'Untitled',
    url: item.url,
    is_source_local: false,
    is_source_both: false,
    description: item.description ?? '',
    ...(item.page_age === undefined ? {} : { page_age: item.page_age }),
    ...(item.age === undefined ? {} : { age: item.age }),
    meta_url: { scheme: 'https', netloc: host, hostname: host, favicon: `https://imgs.search.brave.com/favicon/${host}`, path },
    ...(item.extra_snippets === undefined ? {} : { extra_snippets: item.extra_snippets }),
  };
  if (news) return { type: 'news_result', ...common, breaking: false, is_live: false };
  return {
    type: 'search_result',
    subtype: 'generic',
    is_live: false,
    ...common,
    language: item.language ?? 'en',
    family_friendly: item.family_friendly ?? true,
  };
}

function operators(q: string): { applied: boolean; cleaned_query: string; sites: string[] } {
  const sites = [...q.matchAll(/(?:^|\s)site:(\S+)/g)].map((m) => m[1]!);
  const applied = sites.length > 0 || /(?:^|\s)-\S/.test(q) || /"/.test(q);
  const cleaned = q.replace(/(?:^|\s)site:\S+/g, ' ').replace(/\s+/g, ' ').trim();
  return { applied, cleaned_query: cleaned, sites };
}

export async function startBrave(): Promise<BraveStandin> {
  let web: readonly BraveItem[] = [];
  let news: readonly BraveItem[] = [];
  let quotaUsed = false;
  let custom: ((req: Recorded) => Answer) | undefined;
  const rateHeaders = (remainingSecond: number, remainingMonth: number, resetSecond: number, resetMonth: number) => ({
    'x-ratelimit-limit': '1, 2000',
    'x-ratelimit-policy': '1;w=1, 2000;w=2592000',
    'x-ratelimit-remaining': `${remainingSecond}, ${remainingMonth}`,
    'x-ratelimit-reset': `${resetSecond}, ${resetMonth}`,
  });

  const handler = (req: Recorded): Answer => {
    const isNews = req.path === '/res/v1/news/search';
    if (!isNews && req.path !== '/res/v1/web/search') {
      return { status: 404, body: errorBody(404, 'NOT_FOUND', 'Not found.', { component: 'router' }) };
    }
    const token = req.headers['x-subscription-token'];
    if (token === undefined || token === '') return validation(['header', 'x-subscription-token'], 'Field required', null);
    if (token !== BRAVE_KEY) {
      return { status: 422, body: errorBody(422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.', { component: 'authentication' }) };
    }
    const p = req.params;
    const q = p.q ?? '';
    if (q.length < 1 || q.length > 400 || q.trim().split(/\s+/).length > 50) return validation(['query', 'q'], 'Invalid query', q);
    const count = p.count === undefined ? 20 : Number(p.count);
    if (!Number.isInteger(count) || count < 1 || count > (isNews ? 50 : 20)) return validation(['query', 'count'], 'Invalid count', p.count);
    const offset = p.offset === undefined ? 0 : Number(p.offset);
    if (!Number.isInteger(offset) || offset < 0 || offset > 9) return validation(['query', 'offset'], 'Invalid offset', p.offset);
    if (p.country !== undefined && !COUNTRIES.has(p.country)) return validation(['query', 'country'], 'Input should be a valid country', p.country);
    if (p.search_lang !== undefined && !SEARCH_LANGS.has(p.search_lang)) return validation(['query', 'search_lang'], 'Input should be a valid language', p.search_lang);
    if (p.safesearch !== undefined && !['off', 'moderate', 'strict'].includes(p.safesearch)) return validation(['query', 'safesearch'], 'Invalid', p.safesearch);
    if (p.freshness !== undefined && !/^(pd|pw|pm|py|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2})$/.test(p.freshness)) {
      return validation(['query', 'freshness'], 'Invalid freshness', p.freshness);
    }
    const headers = rateHeaders(0, 1500, 1, 1419704);
    if (custom !== undefined) {
      const a = custom(req);
      return { ...a, headers: { ...headers, ...a.headers } };
    }
    const corpus = isNews ? news : web;
    const items = corpus.slice(offset * count, (offset + 1) * count).map((i) => complete(i, isNews));
    const query = {
      original: q,
      show_strict_warning: false,
      is_navigational: false,
      spellcheck_off: false,
      country: (p.country ?? 'us').toLowerCase(),
      bad_results: false,
      should_fallback: false,
      postal_code: '',
      city: '',
      header_country: '',
      more_results_available: corpus.length > (offset + 1) * count,
      state: '',
      search_operators: operators(q),
    };
    if (isNews) return { headers, body: { type: 'news', query, results: items } };
    return {
      headers,
      body: {
        query,
        mixed: { type: 'mixed', main: items.map((_, index) => ({ type: 'web', index, all: false })), top: [], side: [] },
        type: 'search',
        ...(items.length === 0 ? {} : { web: { type: 'search', results: items, family_friendly: true } }),
      },
    };
  };

  const s = await startStandin(handler, {
    rateLimited(retryAfter) {
      const reset = retryAfter ?? 1;
      if (quotaUsed) {
        return {
          status: 429,
          headers: rateHeaders(1, 0, 1, reset),
          body: errorBody(429, 'QUOTA_LIMITED', 'Request quota limit exceeded for plan.', {
            plan: 'Free', rate_limit: 1, rate_current: 0, quota_limit: 2000, quota_current: 2000, org_rate_limit: null, org_rate_current: 0, component: 'rate_limiter',
          }),
        };
      }
      return {
        status: 429,
        headers: rateHeaders(0, 1500, reset, 1419704),
        body: errorBody(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan', {
          plan: 'Free', rate_limit: 1, rate_current: 1, quota_limit: 2000, quota_current: 15, org_rate_limit: null, org_rate_current: 0, component: 'rate_limiter',
        }),
      };
    },
    error() {
      return { status: 500, body: errorBody(500, 'INTERNAL_ERROR', 'Internal server error.', { component: 'search' }) };
    },
  });
  return {
    ...s,
    reset() {
      s.reset();
      web = [];
      news = [];
      quotaUsed = false;
      custom = undefined;
    },
    setWeb(items) { web = items; },
    setNews(items) { news = items; },
    setQuotaUsed(used) { quotaUsed = used; },
    answer(fn) { custom = fn; },
    searches: () => s.requests.filter((r) => r.path.startsWith('/res/v1/')),
  };
}
