/**
 * The `stackexchange` search provider: the Stack Exchange API's advanced
 * search (`GET {base}/2.3/search/advanced?q=&site=stackoverflow&order=desc&
 * sort=relevance&pagesize=&page=&fromdate=&filter=withbody&key=`), keyless
 * (an app key raises the quota), reached through the Egress port only (the
 * sdk's `exchangeJson`). It returns questions of one site (option `site`,
 * SCOUR_PROVIDER_STACKEXCHANGE_SITE, default stackoverflow), type `social`.
 *
 * What the wire looks like (read in the API's own documentation,
 * api.stackexchange.com/docs: "advanced-search" and "excerpt-search" (the
 * same criteria), "wrapper", "error-handling", "throttle", "filters",
 * "compression"; SearXNG's searx/engines/stackexchange.py for the question
 * fields a client reads; and clients' records of live error bodies):
 * - every answer is gzip-compressed, whatever the request says (the egress
 *   decodes it);
 * - the answer is the common wrapper `{"items": [...], "has_more",
 *   "quota_max", "quota_remaining"}`, with `backoff` (seconds) when the API
 *   wants the method left alone that long, and `error_id`, `error_name`,
 *   `error_message` on an error; `total` only with a filter that includes it;
 * - a question has `question_id`, `title` (HTML-escaped: `&quot;`, `&#39;`,
 *   `&amp;`), `link`, `tags`, `is_answered`, `answer_count`, `score`,
 *   `view_count`, `creation_date` and `last_activity_date` (unix seconds),
 *   `owner`, and `body` (HTML) only with a filter that includes it;
 * - `pagesize` is 0..100, `page` counts from 1; `fromdate` (unix seconds,
 *   inclusive) bounds `creation_date`; `q` is free text matched "by an
 *   undocumented algorithm";
 * - errors: HTTP 400 for every error (but through JSONP) with the wrapper's
 *   error fields, e.g. `{"error_id":502,"error_name":"throttle_violation",
 *   "error_message":"too many requests from this IP, more requests available
 *   in 82700 seconds"}` (daily quota spent: 300 a day per IP without a key,
 *   10,000 with one), `{"error_id":400,"error_name":"bad_parameter",
 *   "error_message":"site is required"}` (a bad key or site is a
 *   bad_parameter too), 401..406 for access tokens and keys, 500
 *   internal_error, 503 temporarily_unavailable. Over 30 requests a second
 *   from an IP, the answer is "undefined" (the sdk maps whatever status).
 *
 * Mapping: throttle_violation -> ProviderRateLimited for the seconds its
 * message names (else its backoff, else a minute); bad_parameter naming the
 * key or the site, the key and token errors and no_method ->
 * PROVIDER_MISCONFIGURED; any other error -> PROVIDER_FAILED.
 *
 * Backoff: a good answer with `backoff` is returned (its results are good)
 * with a warning PROVIDER_BACKOFF, and the provider keeps the deadline: a
 * search before it rejects at once with ProviderRateLimited for the time
 * left, without a request, which makes the search pause the provider in its
 * pause book (shared by every process in shared mode). So the method is not
 * called again within the backoff by this process, and by no process once
 * that rejection has been recorded. An error answer with `backoff` sets the
 * deadline too.
 *
 * Snippet: the `withbody` filter (a built-in filter: the default fields plus
 * `body`) is asked for, so the snippet is the question's text, cut, and
 * `abstract` its whole text; a question without a body gets "[tags] · score
 * · answers" instead.
 *
 * Filters (`applied` says which the API applied; the search operation
 * post-filters the rest):
 * - time_range -> `fromdate` (seconds, rounded up: exact): applied;
 * - result_type news -> questions are no news: `{results: [], total: 0}`
 *   with every filter applied, and no request; web: applied;
 * - site:, -word, language, country, safe_search: no such criterion (`q` has
 *   no documented operators; the words of the query are sent): not applied.
 *
 * `limit` questions are asked for (`pagesize`, at most 100; a second page
 * when `limit` is larger and `has_more`); `total` is known only when the
 * last page asked for has `has_more` false.
 */
import type { FilterName, ProviderRequest, ProviderResponse, ProviderResult, ProviderWarning } from '../../../core/search.js';
import {
  baseUrl, cutAtWord, defineSearchProvider, DEFAULT_RETRY_AFTER_MS, endpointOf, exchangeJson, httpUrl, isRecord, plainText,
  ProviderError, ProviderRateLimited, type ProviderOptions, type SearchProviderPlugin,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://api.stackexchange.com';
export const DEFAULT_SITE = 'stackoverflow';
/** The API's largest page. */
export const MAX_PAGE_SIZE = 100;
/** The built-in filter with the question bodies. */
export const FILTER = 'withbody';

const ALL_FILTERS: ReadonlySet<FilterName> = new Set<FilterName>(['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded']);
/** Applied on every request (see the header). */
export const APPLIES: ReadonlySet<FilterName> = new Set<FilterName>(['time_range', 'result_type']);

export interface StackexchangeProviderOptions extends ProviderOptions {
  /** SCOUR_PROVIDER_STACKEXCHANGE_SITE: the site's API name (stackoverflow, superuser, serverfault, unix, ...). */
  readonly site?: string | undefined;
  /** The clock backoff deadlines are kept by (default Date.now; tests move it). */
  readonly now?: () => number;
}

// ---------------------------------------------------------------------------
// Questions -> ProviderResult

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** One question as a ProviderResult; undefined without a usable `link`. */
export function toProviderResult(raw: unknown): ProviderResult | undefined {
  if (!isRecord(raw)) return undefined;
  const url = httpUrl(raw.link);
  if (url === undefined) return undefined;
  const title = typeof raw.title === 'string' ? plainText(raw.title) : '';
  const body = typeof raw.body === 'string' ? plainText(raw.body) : '';
  const seconds = num(raw.creation_date);
  let snippet = body;
  if (snippet === '') {
    const tags = Array.isArray(raw.tags) ? raw.tags.filter((t): t is string => typeof t === 'string').slice(0, 10).map((t) => plainText(t)) : [];
    const score = num(raw.score);
    const answers = num(raw.answer_count);
    snippet = [
      tags.length === 0 ? '' : `[${tags.join(', ')}]`,
      score === undefined ? '' : `score ${score}`,
      answers === undefined ? '' : `${answers} answers`,
      raw.is_answered === true ? 'answered' : '',
    ].filter((s) => s !== '').join(' \u00b7 ');
  }
  return {
    url,
    title: cutAtWord(title !== '' ? title : body !== '' ? body : url),
    snippet: cutAtWord(snippet),
    publishedAt: seconds !== undefined && seconds > 0 ? seconds * 1000 : null,
    type: 'social',
    language: null,
    country: null,
    safe: null,
    ...(body === '' ? {} : { abstract: body }),
  };
}

// ---------------------------------------------------------------------------
// Errors

const MISCONFIGURED_ERRORS = new Set(['access_token_required', 'invalid_access_token', 'access_denied', 'key_required', 'access_token_compromised', 'no_method']);
const ERROR_NAMES: Readonly<Record<number, string>> = {
  400: 'bad_parameter', 401: 'access_token_required', 402: 'invalid_access_token', 403: 'access_denied', 404: 'no_method', 405: 'key_required',
  406: 'access_token_compromised', 407: 'write_failed', 409: 'duplicate_request', 500: 'internal_error', 502: 'throttle_violation', 503: 'temporarily_unavailable',
};

/** Seconds a throttle_violation's message names ("more requests available in 82700 seconds"). */
export function throttleSeconds(message: string): number | undefined {
  const m = /available in (\d+) seconds?/i.exec(message);
  return m === null ? undefined : Number(m[1]);
}

/** The wrapper's error as the failure the search reports. */
function errorFailure(json: Record<string, unknown>, where: string, status: number, site: string): Error {
  const id = num(json.error_id);
  const name = typeof json.error_name === 'string' ? json.error_name : id !== undefined ? ERROR_NAMES[id] ?? `error ${id}` : 'error';
  const message = typeof json.error_message === 'string' ? plainText(json.error_message).slice(0, 300) : '';
  const said = `${name}${id === undefined ? '' : ` (${id})`}${message === '' ? '' : `: ${message}`}`;
  if (name === 'throttle_violation') {
    const seconds = throttleSeconds(message) ?? num(json.backoff);
    const ms = seconds === undefined ? DEFAULT_RETRY_AFTER_MS : Math.max(1000, seconds * 1000);
    return new ProviderRateLimited(`Stack Exchange refused the request: ${said}`, ms);
  }
  if (name === 'bad_parameter' && /\bkey\b/i.test(message)) {
    return new ProviderError('PROVIDER_MISCONFIGURED', `stackexchange at ${where} refused the key (${said}): check SCOUR_PROVIDER_STACKEXCHANGE_KEY`, { status });
  }
  if (name === 'bad_parameter' && /\bsite\b/i.test(message)) {
    return new ProviderError('PROVIDER_MISCONFIGURED', `stackexchange at ${where} refused the site ${JSON.stringify(site)} (${said}): check SCOUR_PROVIDER_STACKEXCHANGE_SITE`, { status });
  }
  if (MISCONFIGURED_ERRORS.has(name)) {
    return new ProviderError('PROVIDER_MISCONFIGURED', `stackexchange at ${where} refused Scour (${said}): check SCOUR_PROVIDER_STACKEXCHANGE_URL and _KEY`, { status });
  }
  return new ProviderError('PROVIDER_FAILED', `stackexchange at ${where} answered ${said}`, { status });
}

// ---------------------------------------------------------------------------
// The provider

const SITE = /^[a-z0-9](?:[a-z0-9.-]{0,98}[a-z0-9])?$/i;

interface Page {
  readonly items: readonly unknown[];
  readonly hasMore: boolean;
  /** Seconds, when the answer asked for a backoff. */
  readonly backoff: number | undefined;
}

export function createStackexchangeProvider(options: StackexchangeProviderOptions): SearchProviderPlugin<'search-provider-stackexchange'> {
  const base = baseUrl('stackexchange', options.baseUrl, DEFAULT_BASE_URL);
  const site = options.site?.trim() || DEFAULT_SITE;
  if (!SITE.test(site)) throw new Error(`stackexchange: site ${JSON.stringify(site)} is not a site's API name (e.g. stackoverflow, superuser, unix)`);
  const key = options.key?.trim() || undefined;
  const now = options.now ?? Date.now;
  const endpoint = `${base.url}/2.3/search/advanced`;
  const headers: Record<string, string> = base.authorization === undefined ? {} : { authorization: base.authorization };
  /** Epoch ms before which the method must not be called (the last `backoff`). */
  let backoffUntil = 0;

  const holdOff = (seconds: number | undefined) => {
    if (seconds !== undefined && seconds > 0) backoffUntil = Math.max(backoffUntil, now() + seconds * 1000);
  };

  async function page(request: ProviderRequest, pagesize: number, n: number): Promise<Page> {
    const params = new URLSearchParams();
    params.set('q', request.query.terms.join(' '));
    params.set('site', site);
    params.set('order', 'desc');
    params.set('sort', 'relevance');
    params.set('pagesize', String(pagesize));
    params.set('page', String(n));
    if (request.filters.publishedAfter !== undefined) params.set('fromdate', String(Math.max(0, Math.ceil(request.filters.publishedAfter / 1000))));
    params.set('filter', FILTER);
    if (key !== undefined) params.set('key', key);
    const url = `${endpoint}?${params.toString()}`;
    const where = endpointOf(url);
    const { status, json } = await exchangeJson(options.egress, {
      provider: 'stackexchange', url, headers, timeoutMs: options.timeoutMs, signal: request.signal, answerStatuses: [400],
    });
    if (!isRecord(json)) throw new ProviderError('PROVIDER_FAILED', `stackexchange at ${where} answered JSON that is not the wrapper object`, { status });
    const backoff = num(json.backoff);
    holdOff(backoff);
    if (json.error_id !== undefined || json.error_name !== undefined || status === 400) {
      const err = errorFailure(json, where, status, site);
      if (err instanceof ProviderRateLimited) holdOff(err.retryAfterMs / 1000);
      throw err;
    }
    if (!Array.isArray(json.items)) throw new ProviderError('PROVIDER_FAILED', `stackexchange at ${where} answered a wrapper without items`, { status });
    return { items: json.items, hasMore: json.has_more === true, backoff: backoff !== undefined && backoff > 0 ? backoff : undefined };
  }

  return defineSearchProvider({
    name: 'search-provider-stackexchange',
    id: 'stackexchange',
    description: `Stack Exchange questions (site ${site}), through the Stack Exchange API's advanced search.`,
    kinds: ['social'],
    endpoint: base.url,
    applies: APPLIES,
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      if (request.filters.resultType === 'news') return { results: [], total: 0, applied: ALL_FILTERS };
      if (request.limit < 1) return { results: [], total: 0, applied: APPLIES };
      const left = backoffUntil - now();
      if (left > 0) {
        throw new ProviderRateLimited(`Stack Exchange asked for a backoff: not asked again for ${Math.ceil(left / 1000)} s`, Math.max(1000, left));
      }
      const pagesize = Math.min(request.limit, MAX_PAGE_SIZE);
      const results: ProviderResult[] = [];
      const warnings: ProviderWarning[] = [];
      const seen = new Set<string>();
      let total: number | undefined;
      for (let n = 1; n <= 2 && results.length < request.limit; n++) {
        if (request.signal.aborted) throw request.signal.reason;
        const p = await page(request, pagesize, n);
        for (const raw of p.items) {
          const r = toProviderResult(raw);
          if (r === undefined || seen.has(r.url)) continue;
          if (request.filters.publishedAfter !== undefined && (r.publishedAt === null || r.publishedAt < request.filters.publishedAfter)) continue;
          seen.add(r.url);
          results.push(r);
          if (results.length >= request.limit) break;
        }
        if (!p.hasMore) total = (n - 1) * pagesize + p.items.length;
        if (p.backoff !== undefined) {
          warnings.push({
            code: 'PROVIDER_BACKOFF',
            message: `Stack Exchange asked for a backoff of ${p.backoff} s: stackexchange is not asked again before ${new Date(backoffUntil).toISOString()}`,
          });
          break;
        }
        if (!p.hasMore) break;
      }
      return { results, total, applied: APPLIES, ...(warnings.length === 0 ? {} : { warnings }) };
    },
  });
}
