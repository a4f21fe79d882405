/**
 * A stand-in for the Custom Search JSON API on loopback, built on the shared
 * skeleton (server.ts), answering as Google's reference and its users'
 * reports show (see plugins/search-providers/google/index.ts for the sources):
 *
 * - `GET /customsearch/v1` answers `{"kind": "customsearch#search", "url",
 *   "queries": {"request": [...], "nextPage": [...]}, "context",
 *   "searchInformation": {"searchTime", "formattedSearchTime",
 *   "totalResults" (a string), "formattedTotalResults"}, "items": [...]}`;
 *   `items` is left out when the page is empty, `nextPage` when no further
 *   page exists (at most 100 results). Items are completed as Google sends
 *   them (`kind`, `htmlTitle`, `displayLink`, `formattedUrl`...);
 * - page: items `start` to `start + num - 1` (1-based) of the corpus;
 * - checks: no key is 403 PERMISSION_DENIED, a key other than `GOOGLE_KEY`
 *   400 "API key not valid" (reason badRequest, details API_KEY_INVALID), a
 *   cx other than `GOOGLE_CX` 400 "Request contains an invalid argument."; so
 *   is a bad `num` (1-10), `start` (start + num over 101), `lr`, `cr`, `gl`,
 *   `safe`, `dateRestrict`, `siteSearchFilter` or a missing `q`;
 * - rate-limited mode: 429 RESOURCE_EXHAUSTED, reason rateLimitExceeded,
 *   "Quota exceeded for quota metric 'Queries' and limit 'Queries per
 *   minute'" (with Retry-After when given), or "... 'Queries per day'" after
 *   `setQuota('day')`, or the older 403 dailyLimitExceeded (domain
 *   usageLimits) after `setQuota('legacy-daily')`;
 * - error mode: 500 INTERNAL, reason backendError (Google APIs' usual shape).
 *
 * `setItems(items)` sets the corpus; `setTotal(n)` the reported total
 * (default the corpus size); `answer(fn)` replaces the body for a test.
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

export const GOOGLE_KEY = 'AIzaTestKey0123456789';
export const GOOGLE_CX = '017576662512468239146:omuauf_lfve';

const LR = new Set([
  'lang_ar', 'lang_bg', 'lang_ca', 'lang_cs', 'lang_da', 'lang_de', 'lang_el', 'lang_en', 'lang_es', 'lang_et', 'lang_fi', 'lang_fr',
  'lang_hr', 'lang_hu', 'lang_id', 'lang_is', 'lang_it', 'lang_iw', 'lang_ja', 'lang_ko', 'lang_lt', 'lang_lv', 'lang_nl', 'lang_no',
  'lang_pl', 'lang_pt', 'lang_ro', 'lang_ru', 'lang_sk', 'lang_sl', 'lang_sr', 'lang_sv', 'lang_tr', 'lang_zh-CN', 'lang_zh-TW',
]);

export interface GoogleItem {
  readonly link?: unknown;
  readonly title?: unknown;
  readonly htmlSnippet?: unknown;
  readonly snippet?: unknown;
  readonly pagemap?: unknown;
  /** Sent exactly as this value. */
  readonly verbatim?: unknown;
}

export type GoogleQuota = 'minute' | 'day' | 'legacy-daily';

export interface GoogleStandin extends Standin {
  setItems(items: readonly GoogleItem[]): void;
  setTotal(total: number | undefined): void;
  setQuota(q: GoogleQuota): void;
  answer(fn: ((req: Recorded) => Answer) | undefined): void;
  searches(): Recorded[];
}

function googleError(code: number, status: string, message: string, reason: string, domain = 'global', details?: unknown[]): Answer {
  return {
    status: code,
    body: { error: { code, message, errors: [{ message, domain, reason }], ...(status === '' ? {} : { status }), ...(details === undefined ? {} : { details }) } },
  };
}

const INVALID = () => googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', 'badRequest');

function strip(html: string): string {
  return html.replace(/<[^>]*>/g, '');
}

function complete(item: GoogleItem): unknown {
  if ('verbatim' in item) return item.verbatim;
  const link = String(item.link);
  let host = '';
  try {
    host = new URL(link).hostname;
  } catch {
    // hostile link
  }
  const htmlSnippet = typeof item.htmlSnippet === 'string' ? item.htmlSnippet : '';
  const title = typeof item.title === 'string' ? item.title : 'Untitled';
  return {
    kind: 'customsearch#result',
    title: strip(title),
    htmlTitle: title,
    link: item.link,
    displayLink: host,
    snippet: item.snippet ?? strip(htmlSnippet.replace(/<br>/g, '\n')),
    htmlSnippet,
    formattedUrl: link,
    htmlFormattedUrl: link,
    ...(item.pagemap === undefined ? {} : { pagemap: item.pagemap }),
  };
}

export async function startGoogle(): Promise<GoogleStandin> {
  let corpus: readonly GoogleItem[] = [];
  let total: number | undefined;
  let quota: GoogleQuota = 'minute';
  let custom: ((req: Recorded) => Answer) | undefined;

  const handler = (req: Recorded): Answer => {
    if (req.path !== '/customsearch/v1') return googleError(404, 'NOT_FOUND', 'Not Found', 'notFound');
    const p = req.params;
    if (p.key === undefined) {
      return googleError(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", 'forbidden');
    }
    if (p.key !== GOOGLE_KEY) {
      return googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'badRequest', 'global', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'customsearch.googleapis.com' } },
      ]);
    }
    if (p.cx !== GOOGLE_CX || p.q === undefined || p.q.trim() === '') return INVALID();
    const num = p.num === undefined ? 10 : Number(p.num);
    const start = p.start === undefined ? 1 : Number(p.start);
    if (!Number.isInteger(num) || num < 1 || num > 10 || !Number.isInteger(start) || start < 1 || start + num > 101) return INVALID();
    if (p.lr !== undefined && !LR.has(p.lr)) return INVALID();
    if (p.cr !== undefined && !/^country[A-Z]{2}$/.test(p.cr)) return INVALID();
    if (p.gl !== undefined && !/^[a-z]{2}$/.test(p.gl)) return INVALID();
    if (p.safe !== undefined && !['active', 'off'].includes(p.safe)) return INVALID();
    if (p.dateRestrict !== undefined && !/^[dwmy]\d+$/.test(p.dateRestrict)) return INVALID();
    if (p.siteSearchFilter !== undefined && !['e', 'i'].includes(p.siteSearchFilter)) return INVALID();
    if (custom !== undefined) return custom(req);
    const items = corpus.slice(start - 1, start - 1 + num).map(complete);
    const t = total ?? corpus.length;
    const request = {
      title: `Google Custom Search - ${p.q}`, totalResults: String(t), searchTerms: p.q, count: num, startIndex: start,
      inputEncoding: 'utf8', outputEncoding: 'utf8', safe: p.safe ?? 'off', cx: p.cx,
    };
    const next = start + num <= Math.min(100, t) && start + 2 * num <= 101;
    return {
      body: {
        kind: 'customsearch#search',
        url: { type: 'application/json', template: 'https://www.googleapis.com/customsearch/v1?q={searchTerms}&num={count?}&start={startIndex?}&cx={cx?}&key=...' },
        queries: { request: [request], ...(next ? { nextPage: [{ ...request, startIndex: start + num }] } : {}) },
        context: { title: 'Scour test engine' },
        searchInformation: { searchTime: 0.21, formattedSearchTime: '0.21', totalResults: String(t), formattedTotalResults: t.toLocaleString('en-US') },
        ...(items.length === 0 ? {} : { items }),
      },
    };
  };

  const s = await startStandin(handler, {
    rateLimited(retryAfter) {
      if (quota === 'legacy-daily') return googleError(403, '', 'Daily Limit Exceeded', 'dailyLimitExceeded', 'usageLimits');
      const limit = quota === 'day' ? 'Queries per day' : 'Queries per minute';
      const message = `Quota exceeded for quota metric 'Queries' and limit '${limit}' of service 'customsearch.googleapis.com' for consumer 'project_number:451270028559'.`;
      const a = googleError(429, 'RESOURCE_EXHAUSTED', message, 'rateLimitExceeded', 'global', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED', domain: 'googleapis.com', metadata: { service: 'customsearch.googleapis.com', quota_limit: quota === 'day' ? 'DefaultPerDayPerProject' : 'DefaultPerMinutePerProject' } },
      ]);
      return retryAfter === undefined ? a : { ...a, headers: { 'retry-after': String(retryAfter) } };
    },
    error() {
      return googleError(500, 'INTERNAL', 'Internal error encountered.', 'backendError');
    },
  });
  return {
    ...s,
    reset() {
      s.reset();
      corpus = [];
      total = undefined;
      quota = 'minute';
      custom = undefined;
    },
    setItems(items) { corpus = items; },
    setTotal(n) { total = n; },
    setQuota(q) { quota = q; },
    answer(fn) { custom = fn; },
    searches: () => s.requests.filter((r) => r.path === '/customsearch/v1'),
  };
}
