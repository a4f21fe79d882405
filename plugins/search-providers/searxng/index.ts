/**
 * The `searxng` search provider: a SearXNG instance's JSON API
 * (`GET {baseUrl}/search?q=&format=json&pageno=&language=&time_range=&safesearch=&categories=`),
 * reached through the Egress port only. The instance's address is operator
 * configuration (usually on a private network, like a proxy's), so private
 * addresses are allowed; the guard still refuses cloud-metadata addresses.
 *
 * What the wire looks like (SearXNG's own source, searx/webapp.py `search()`,
 * searx/webutils.py `get_json_response()`, searx/webadapter.py `parse_*()`,
 * searx/result_types/_base.py, searx/results.py):
 * - the body is `{"query", "results", "answers", "corrections", "infoboxes",
 *   "suggestions", "unresponsive_engines"}`; `number_of_results` was dropped
 *   in 2026 (older instances send it, 0 when unknown);
 * - a result has `url`, `title`, `content`, `engine`, `engines`, `template`,
 *   `parsed_url` (a 6-item list), `publishedDate` (Python isoformat, often
 *   without an offset, which is UTC here; or null), `score` (per page: every
 *   page is a search of its own), `category` (the engine's first category),
 *   `thumbnail`, `img_src`, `positions`, `priority`...;
 * - `unresponsive_engines` is `[[engine, reason], ...]`, sorted by engine;
 * - `time_range` is day, week, month or year (engines without time-range
 *   support are skipped, so a sent range is applied); `safesearch` 0, 1, 2;
 *   `language` matches `^[a-z]{2,3}(-[a-zA-Z]{2})?$` or is `auto`/`all`;
 *   a bad value is a 400 `{"error": "Invalid value ... for parameter ..."}`;
 * - a format missing from `search.formats` in settings.yml is `abort(403)`
 *   (Werkzeug's HTML "403 Forbidden" page); the shipped default is html only;
 * - with the limiter on, /search answers 429 "Too Many Requests" to clients
 *   whose Accept lacks text/html, whose Accept-Encoding lacks gzip/deflate,
 *   without Accept-Language, or with a bot-like User-Agent: the headers below
 *   pass those checks.
 *
 * Filters (`applied` says which SearXNG applied itself; the search operation
 * post-filters the rest):
 * - language -> `language=xx` (`xx-CC` with a country): language applied;
 * - country with a language -> the region of `xx-CC`: country applied;
 *   country alone -> not sent (SearXNG has no region without a language, and
 *   guessing a country's language is wrong for half of them): `language=all`,
 *   country NOT applied;
 * - no language -> `language=all` (not the instance's `auto`, which would
 *   follow our Accept-Language);
 * - time_range day/week/month/year -> the same: applied; hour -> `day`, NOT
 *   applied (the operation cuts to the hour by date);
 * - safe_search off/moderate/strict -> `safesearch=0/1/2`: applied;
 * - result_type news -> `categories=news`, web -> `categories=general`: applied;
 * - site:, -site:, -word, "phrases", OR stay in `q` (request.query.raw) for the
 *   engines, but not every engine honours them: site and excluded are NOT
 *   applied (the operation checks them from the URL, title and snippet).
 *
 * Paging: `pageno` 1, 2, ... until `limit` results, a page without a new
 * usable URL, or `maxPages`. A failure of the first page is thrown as a
 * `ProviderError` (code PROVIDER_MISCONFIGURED, PROVIDER_FAILED or
 * PROVIDER_TIMEOUT); a failure of a later page keeps the earlier pages'
 * results and becomes a warning with that code. An abort of `request.signal`
 * rejects with its reason.
 */
import { isApiFailure } from '../../../core/errors.js';
import type { Egress, GuardedResponse } from '../../../core/ports.js';
import {
  domainOf, type FilterName, type ProviderRequest, type ProviderResponse, type ProviderResult, type ProviderWarning,
  type SearchFilters,
} from '../../../core/search.js';
import {
  cutAtWord, defineSearchProvider, isRecord, parseIsoDate, plainText, ProviderError, SNIPPET_MAX_CHARS, type ProviderErrorCode, type SearchProviderPlugin,
} from '../../sdk/search.js';

// The text helpers and the failure type every provider shares (plugins/sdk/provider.ts), under the names this provider's tests know.
export { cutAtWord, parseIsoDate as parsePublishedDate, plainText, ProviderError, SNIPPET_MAX_CHARS, type ProviderErrorCode };
const parsePublishedDate = parseIsoDate;

export const DEFAULT_PAGE_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_PAGES = 5;
/** Bytes of one page, on the wire and decoded (a page of SearXNG JSON is tens of KiB). */
export const MAX_PAGE_BYTES = 5 * 1024 * 1024;
export const USER_AGENT = 'Scour (search-provider-searxng; self-hosted search API)';


export interface SearxngProviderOptions {
  /** The instance, e.g. http://searxng:8080 (a path prefix is kept; user:pass@ becomes Basic auth). */
  readonly baseUrl: string;
  readonly egress: Egress;
  /** Per page (default 5 s); the request's signal bounds it too. */
  readonly pageTimeoutMs?: number;
  /** Pages asked for at most (default 5). */
  readonly maxPages?: number;
}

// ---------------------------------------------------------------------------
// Filters -> SearXNG parameters

/** What SearXNG is asked for, besides q and pageno, and what that applies. */
export interface SearxngPlan {
  readonly language: string;
  readonly timeRange: 'day' | 'week' | 'month' | 'year' | undefined;
  readonly safesearch: '0' | '1' | '2';
  readonly categories: 'general' | 'news';
  readonly applied: ReadonlySet<FilterName>;
}

const SAFESEARCH = { off: '0', moderate: '1', strict: '2' } as const;

export function planFilters(filters: SearchFilters): SearxngPlan {
  const applied = new Set<FilterName>();
  const lang = filters.language?.toLowerCase();
  const country = filters.country?.toUpperCase();
  let language = 'all';
  if (lang !== undefined && /^[a-z]{2,3}$/.test(lang) && lang !== 'all') {
    language = lang;
    applied.add('language');
    if (country !== undefined && /^[A-Z]{2}$/.test(country)) {
      language = `${lang}-${country}`;
      applied.add('country');
    }
  }
  let timeRange: SearxngPlan['timeRange'];
  if (filters.timeRange === 'hour') {
    timeRange = 'day';
  } else if (filters.timeRange !== undefined) {
    timeRange = filters.timeRange;
    applied.add('time_range');
  }
  applied.add('safe_search');
  applied.add('result_type');
  return {
    language,
    timeRange,
    safesearch: SAFESEARCH[filters.safeSearch],
    categories: filters.resultType === 'news' ? 'news' : 'general',
    applied,
  };
}

// ---------------------------------------------------------------------------
// SearXNG fields -> ProviderResult






/** An absolute http(s) URL with a host, or undefined. */
function httpUrl(raw: unknown): URL | undefined {
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return undefined;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' ? u : undefined;
}

/** `url`, or the URL rebuilt from `parsed_url` ([scheme, netloc, path, params, query, fragment]) when `url` is unusable. */
function resultUrl(raw: Record<string, unknown>): URL | undefined {
  const direct = httpUrl(raw.url);
  if (direct !== undefined) return direct;
  const p = raw.parsed_url;
  if (!Array.isArray(p) || p.length < 6 || !p.every((x) => typeof x === 'string')) return undefined;
  const [scheme, netloc, path, params, query, fragment] = p as string[];
  return httpUrl(`${scheme}://${netloc}${path}${params ? `;${params}` : ''}${query ? `?${query}` : ''}${fragment ? `#${fragment}` : ''}`);
}

/** One SearXNG result as a ProviderResult; undefined when it has no usable http(s) URL. */
export function toProviderResult(raw: unknown): ProviderResult | undefined {
  if (!isRecord(raw)) return undefined;
  const url = resultUrl(raw);
  if (url === undefined) return undefined;
  const title = typeof raw.title === 'string' ? plainText(raw.title) : '';
  const content = typeof raw.content === 'string' ? plainText(raw.content) : '';
  const score = typeof raw.score === 'number' && Number.isFinite(raw.score) ? raw.score : undefined;
  return {
    url: url.href,
    title: title !== '' ? cutAtWord(title) : domainOf(url.href) || url.hostname,
    snippet: cutAtWord(content),
    publishedAt: parsePublishedDate(raw.publishedDate),
    ...(score === undefined ? {} : { score }),
    type: raw.category === 'news' ? 'news' : null,
    language: null,
    country: null,
    safe: null,
  };
}

/** Two URLs of one page within this provider's list: scheme, host case, `www.`, default port, trailing slash and fragment aside. */
function dedupeKey(url: string): string {
  const u = new URL(url);
  const port = u.port === '' || u.port === '80' || u.port === '443' ? '' : `:${u.port}`;
  return `${u.hostname.toLowerCase().replace(/^www\./, '')}${port}${u.pathname.replace(/(?<!\/)\/+$/, '')}${u.search}`;
}

/** `[[engine, reason], ...]`, tolerating other shapes. */
function unresponsive(value: unknown): [string, string][] {
  if (!Array.isArray(value)) return [];
  const out: [string, string][] = [];
  for (const e of value) {
    if (Array.isArray(e) && typeof e[0] === 'string') out.push([e[0], typeof e[1] === 'string' ? e[1] : 'no reason given']);
    else if (typeof e === 'string') out.push([e, 'no reason given']);
  }
  return out;
}

// ---------------------------------------------------------------------------
// The provider

interface Instance {
  /** Without credentials, without a trailing slash: `${base}/search` is the endpoint. */
  readonly base: string;
  readonly authorization: string | undefined;
}

function parseBaseUrl(raw: string): Instance {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new Error(`SearXNG base URL ${JSON.stringify(raw)} is not an absolute URL (write e.g. http://searxng:8080)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`SearXNG base URL must be http or https, not ${u.protocol}`);
  if (u.search !== '' || u.hash !== '') throw new Error('SearXNG base URL must not have a query or fragment');
  let authorization: string | undefined;
  if (u.username !== '' || u.password !== '') {
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    authorization = `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
    u.username = '';
    u.password = '';
  }
  const path = u.pathname.replace(/(?<!\/)\/+$/, '').replace(/\/search$/, '');
  return { base: `${u.origin}${path}`, authorization };
}

const ENABLE_JSON = 'enable it in the instance\'s settings.yml (search: formats: [html, json]) and restart SearXNG';

/** The egress failure (or the answer) of one page, as a ProviderError. */
function egressFailure(err: unknown, where: string, timeoutMs: number): ProviderError {
  if (isApiFailure(err)) {
    const detail = (err as { details?: unknown; reason?: unknown }).details ?? (err as { reason?: unknown }).reason;
    const why = typeof detail === 'string' && detail !== '' ? `${err.message}: ${detail}` : err.message;
    switch (err._tag) {
      case 'TargetTimeout':
        return new ProviderError('PROVIDER_TIMEOUT', `SearXNG at ${where} did not answer within ${timeoutMs / 1000} s`, { cause: err });
      case 'TargetNotAllowed':
        return new ProviderError('PROVIDER_MISCONFIGURED', `SearXNG at ${where} may not be reached (${why}): check its configured URL`, { cause: err });
      case 'TargetUnreachable':
        return new ProviderError('PROVIDER_FAILED', `SearXNG at ${where} could not be reached (${why})`, { cause: err });
      default:
        return new ProviderError('PROVIDER_FAILED', `SearXNG at ${where} failed (${why})`, { cause: err });
    }
  }
  return new ProviderError('PROVIDER_FAILED', `SearXNG at ${where} failed (${err instanceof Error ? err.message : String(err)})`, { cause: err });
}

/** The first characters of a body, for messages. */
function excerpt(text: string): string {
  const t = plainText(text);
  return t.length > 160 ? `${t.slice(0, 157)}...` : t;
}

/** SearXNG's own error text (`{"error": "..."}`) or the start of the body. */
function bodyMessage(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed) && typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON
  }
  return excerpt(text);
}

function statusFailure(res: GuardedResponse, text: string, where: string): ProviderError {
  const status = res.statusCode;
  if (status === 403) {
    return new ProviderError(
      'PROVIDER_MISCONFIGURED',
      `SearXNG at ${where} refused the JSON format (HTTP 403): the JSON API is disabled; ${ENABLE_JSON}`,
      { status },
    );
  }
  if (status >= 300 && status < 400) {
    const location = res.headers.location;
    let target: URL | undefined;
    try {
      target = location === undefined ? undefined : new URL(location, res.url);
    } catch {
      target = undefined;
    }
    if (target !== undefined && /\/search\/?$/.test(target.pathname) && target.origin !== new URL(where).origin) {
      return new ProviderError(
        'PROVIDER_MISCONFIGURED',
        `SearXNG at ${where} redirects (HTTP ${status}) to ${target.origin}${target.pathname}: configure that address instead`,
        { status },
      );
    }
    return new ProviderError(
      'PROVIDER_FAILED',
      `SearXNG at ${where} answered a redirect (HTTP ${status}${target ? ` to ${target.origin}` : ''}), not results (a !bang in the query?)`,
      { status },
    );
  }
  if (status === 429) {
    return new ProviderError(
      'PROVIDER_FAILED',
      `SearXNG at ${where} refused the request (HTTP 429 ${bodyMessage(text) || 'Too Many Requests'}): its limiter or bot detection blocked Scour; `
        + 'turn server.limiter off or add Scour\'s address to the pass list (limiter.toml: botdetection.ip_lists.pass_ip)',
      { status },
    );
  }
  const said = bodyMessage(text);
  return new ProviderError('PROVIDER_FAILED', `SearXNG at ${where} answered HTTP ${status}${said ? `: ${said}` : ''}`, { status });
}

interface Page {
  readonly results: readonly unknown[];
  readonly numberOfResults: number | undefined;
  readonly unresponsive: readonly [string, string][];
}

export function createSearxngProvider(options: SearxngProviderOptions): SearchProviderPlugin<'search-provider-searxng'> {
  const instance = parseBaseUrl(options.baseUrl);
  const pageTimeoutMs = options.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS;
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  if (!(Number.isFinite(pageTimeoutMs) && pageTimeoutMs > 0)) throw new Error(`SearXNG pageTimeoutMs must be a positive number, not ${pageTimeoutMs}`);
  if (!(Number.isInteger(maxPages) && maxPages >= 1)) throw new Error(`SearXNG maxPages must be a positive integer, not ${maxPages}`);
  const endpoint = `${instance.base}/search`;
  const headers: Record<string, string> = {
    // application/json is what is wanted; text/html (weighted down) passes the limiter's Accept check.
    accept: 'application/json, text/html;q=0.1',
    'accept-encoding': 'gzip, deflate',
    // SearXNG's UI locale: the language of its error texts (the search language is the language parameter).
    'accept-language': 'en',
    'user-agent': USER_AGENT,
    ...(instance.authorization === undefined ? {} : { authorization: instance.authorization }),
  };

  async function fetchPage(request: ProviderRequest, plan: SearxngPlan, pageno: number): Promise<Page> {
    const params = new URLSearchParams();
    params.set('q', request.query.raw);
    params.set('format', 'json');
    params.set('pageno', String(pageno));
    params.set('language', plan.language);
    if (plan.timeRange !== undefined) params.set('time_range', plan.timeRange);
    params.set('safesearch', plan.safesearch);
    params.set('categories', plan.categories);
    let res: GuardedResponse;
    try {
      res = await options.egress.fetch(`${endpoint}?${params.toString()}`, {
        allowPrivate: true,
        method: 'GET',
        headers,
        followRedirects: false,
        maxBodyBytes: MAX_PAGE_BYTES,
        maxDecodedBytes: MAX_PAGE_BYTES,
        timeoutMs: pageTimeoutMs,
        signal: request.signal,
      });
    } catch (err) {
      if (request.signal.aborted) throw request.signal.reason;
      throw egressFailure(err, endpoint, pageTimeoutMs);
    }
    const text = new TextDecoder('utf-8').decode(res.body);
    if (res.statusCode < 200 || res.statusCode > 299) throw statusFailure(res, text, endpoint);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      const type = res.headers['content-type'] ?? 'no content type';
      throw new ProviderError(
        'PROVIDER_FAILED',
        `SearXNG at ${endpoint} answered HTTP ${res.statusCode} with invalid JSON (${type}${text.trim() === '' ? ', empty body' : `: ${excerpt(text)}`}); is the URL a SearXNG instance?`,
        { status: res.statusCode },
      );
    }
    if (!isRecord(body)) {
      throw new ProviderError('PROVIDER_FAILED', `SearXNG at ${endpoint} answered JSON that is not an object`, { status: res.statusCode });
    }
    const n = body.number_of_results;
    return {
      results: Array.isArray(body.results) ? body.results : [],
      numberOfResults: typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined,
      unresponsive: unresponsive(body.unresponsive_engines),
    };
  }

  return defineSearchProvider({
    name: 'search-provider-searxng',
    id: 'searxng',
    endpoint: instance.base,
    description: 'A SearXNG instance (metasearch over the engines it has enabled), through its JSON API.',
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      const plan = planFilters(request.filters);
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      const engines = new Map<string, string>();
      const warnings: ProviderWarning[] = [];
      let numberOfResults: number | undefined;
      let exhausted = false;
      for (let pageno = 1; pageno <= maxPages && results.length < request.limit; pageno++) {
        if (request.signal.aborted) throw request.signal.reason;
        let page: Page;
        try {
          page = await fetchPage(request, plan, pageno);
        } catch (err) {
          if (request.signal.aborted || pageno === 1 || !(err instanceof ProviderError)) throw err;
          warnings.push({ code: err.code, message: `page ${pageno} failed, the results of pages 1-${pageno - 1} are kept: ${err.message}` });
          break;
        }
        for (const [engine, reason] of page.unresponsive) if (!engines.has(engine)) engines.set(engine, reason);
        if (pageno === 1) numberOfResults = page.numberOfResults;
        let fresh = 0;
        for (const raw of page.results) {
          const r = toProviderResult(raw);
          if (r === undefined) continue;
          const key = dedupeKey(r.url);
          if (seen.has(key)) continue;
          seen.add(key);
          results.push(r);
          fresh++;
        }
        if (fresh === 0) {
          exhausted = true;
          break;
        }
      }
      if (engines.size > 0) {
        const named = [...engines].map(([engine, reason]) => `${engine} (${reason})`).join(', ');
        warnings.unshift({ code: 'ENGINES_UNRESPONSIVE', message: `SearXNG engines did not answer: ${named}` });
      }
      const kept = results.slice(0, Math.max(0, request.limit));
      const known = exhausted ? results.length : undefined;
      const total = numberOfResults !== undefined ? Math.max(numberOfResults, results.length) : known;
      return {
        results: kept,
        total,
        applied: plan.applied,
        ...(warnings.length === 0 ? {} : { warnings }),
      };
    },
  });
}
