/**
 * The `brave` search provider: the Brave Search API, Brave's own web index
 * (`GET {base}/res/v1/web/search`, and `GET {base}/res/v1/news/search` when
 * the request asks for news), with the key in `X-Subscription-Token`.
 *
 * What the wire looks like (read from Brave's API documentation pages on
 * api-dashboard.search.brave.com: web-search and news-search query
 * parameters, request and response headers, response objects and codes;
 * brave/brave-search-skills references/web-search.md and news-search.md;
 * brave/brave-search-mcp-server src/tools/web/types.ts and params.ts;
 * error bodies as users quoted them in egoist/chatwise-releases#1296 and
 * brave/brave-search-mcp-server#162):
 * - parameters: `q` (1-400 characters, at most 50 words), `country` (a
 *   fixed list of 2-letter codes, or ALL; default US), `search_lang` (a
 *   fixed list: mostly ISO 639-1, but Japanese is `jp`, Chinese `zh-hans` /
 *   `zh-hant`, Portuguese `pt-br` / `pt-pt`, Norwegian `nb`; default en),
 *   `count` (web 1-20, news 1-50), `offset` (0-9, in pages of `count`, not
 *   items), `safesearch` off / moderate / strict, `freshness` pd / pw / pm /
 *   py (pages aged 24 hours, 7, 31, 365 days or less, the age being "the
 *   most relevant date reported by the content, such as its published or
 *   last modified date") or `YYYY-MM-DDtoYYYY-MM-DD`,
 *   `result_filter` (web: comma-separated result kinds), `text_decorations`
 *   (default on: matches in `description` are wrapped in `<strong>`);
 * - web answer: `{"type": "search", "query": {"original", "altered",
 *   "more_results_available", "search_operators": {"applied",
 *   "cleaned_query", "sites"}, ...}, "web": {"type": "search", "results":
 *   [...], "family_friendly"}, "news", "videos", "discussions", "mixed"...}`;
 *   `web` is absent when nothing matched. A web result has `title`, `url`,
 *   `description` (with `<strong>` marks), `age` ("2 days ago"), `page_age`
 *   (ISO date-time without an offset: UTC), `language`, `family_friendly`,
 *   `extra_snippets` (on some plans), `meta_url`, `thumbnail`, `profile`...;
 * - news answer: `{"type": "news", "query": {...}, "results": [{"type":
 *   "news_result", "url", "title", "description", "age", "page_age",
 *   "breaking", "meta_url", "thumbnail", "extra_snippets"}]}`;
 * - errors: `{"type": "ErrorResponse", "error": {"id", "status", "code",
 *   "detail", "meta": {...}}, "time"}` (the API reference's examples put the
 *   same object in an `errors` list: both are read). A key Brave does not
 *   know is HTTP 422 with code SUBSCRIPTION_TOKEN_INVALID (not a 401), a
 *   missing one a 422 VALIDATION whose `meta.errors[].loc` names
 *   `x-subscription-token`; too fast is 429 RATE_LIMITED ("Request rate
 *   limit exceeded for plan"), over the plan's quota 429 QUOTA_LIMITED, with
 *   `meta` {plan, rate_limit, rate_current, quota_limit, quota_current};
 * - rate limits: every answer carries `X-RateLimit-Limit: 1, 15000`,
 *   `X-RateLimit-Policy: 1;w=1, 15000;w=2592000`, `X-RateLimit-Remaining:
 *   1, 1000` and `X-RateLimit-Reset: 1, 1419704` (seconds until each window
 *   resets, the per-second window first, the monthly one second). A 429 is
 *   paused for the reset of the window that has nothing left (a per-second
 *   limit: about a second; a monthly quota used up: until it resets, at most
 *   a day, so a plan upgraded meanwhile is used the next day); a Retry-After
 *   is honoured when neither says.
 *
 * Filters (`applied` holds what Brave applied; the search operation
 * post-filters the rest):
 * - country on Brave's list -> `country=XX`: applied; any other (or none)
 *   -> `country=ALL` (Brave's default is US, which would bias every
 *   search): not applied;
 * - language Brave has -> `search_lang` (ja -> jp, zh -> zh-hans, or
 *   zh-hant with country TW/HK, pt -> pt-pt, or pt-br with country BR, en
 *   with GB -> en-gb, no/nb -> nb): applied; any other: not sent, not applied;
 * - time_range day/week/month/year -> freshness pd/pw/pm/py: applied
 *   (Brave's year is 365 days, a day stricter than Scour's); hour -> pd, not
 *   applied; a lower bound without a range (research's window) -> the date
 *   range from that day to today, not applied (days, not instants: the
 *   operation cuts it exactly);
 * - safe_search off/moderate/strict -> safesearch off/moderate/strict:
 *   applied on every request (declared in `applies`); `family_friendly`
 *   says per result whether it is safe;
 * - result_type news -> the news endpoint (results typed news), web -> the
 *   web endpoint: applied on every request;
 * - the query is written in Brave's operator syntax: plain words, required
 *   groups as `"phrase"` (alternatives joined with OR, `intitle:` kept),
 *   `-word` / `-"phrase"`, `site:domain` (a `-site:` is not sent: Brave does
 *   not document it). site and excluded are applied only when Brave says it
 *   applied the operators: `query.search_operators.applied` true (excluded),
 *   and every site: domain in `query.search_operators.sites` with no -site:
 *   (site). A query over Brave's 400 characters or 50 words keeps its
 *   required groups, exclusions and sites first and drops plain words from
 *   the end (then nothing dropped is claimed).
 *
 * Paging: `count` = the request's limit up to 20 (news 50); when more are
 * wanted and Brave has more (`query.more_results_available`, or a full news
 * page), `offset=1` asks the next page of the same size: at most 2 requests.
 * A failure of the second page keeps the first page's results and becomes a
 * warning with its code (the free plan allows 1 request a second, so the
 * second page is often refused). Results are de-duplicated by URL (pages may
 * overlap). Brave gives no total.
 */
import type { FilterName, ProviderRequest, ProviderResponse, ProviderResult, ProviderWarning, SearchFilters } from '../../../core/search.js';
import {
  baseUrl, cutAtWord, defineSearchProvider, exchangeJson, httpUrl, isRecord, markedText, parseIsoDate, plainText, ProviderError,
  ProviderRateLimited, retryAfterMs, DEFAULT_RETRY_AFTER_MS, type Exchanged, type ProviderOptions, type SearchProviderPlugin,
  plainTerms,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://api.search.brave.com';
export const WEB_PATH = '/res/v1/web/search';
export const NEWS_PATH = '/res/v1/news/search';
/** `count` at most, per endpoint. */
export const WEB_MAX_COUNT = 20;
export const NEWS_MAX_COUNT = 50;
/** `q` at most. */
export const MAX_QUERY_CHARS = 400;
export const MAX_QUERY_WORDS = 50;
/** The longest pause a 429 asks for here (a monthly quota used up): a day. */
export const MAX_PAUSE_MS = 86_400_000;

/** The `country` values Brave accepts (its Codes page), besides ALL. */
export const BRAVE_COUNTRIES: ReadonlySet<string> = new Set([
  'AR', 'AU', 'AT', 'BE', 'BR', 'CA', 'CL', 'DK', 'FI', 'FR', 'DE', 'HK', 'IN', 'ID', 'IT', 'JP', 'KR', 'MY', 'MX', 'NL',
  'NZ', 'NO', 'CN', 'PL', 'PT', 'PH', 'RU', 'SA', 'ZA', 'ES', 'SE', 'CH', 'TW', 'TR', 'GB', 'US',
]);

/** The `search_lang` values Brave accepts that are ISO 639-1 codes as they are. */
const PLAIN_LANGS: ReadonlySet<string> = new Set([
  'ar', 'eu', 'bn', 'bg', 'ca', 'hr', 'cs', 'da', 'nl', 'en', 'et', 'fi', 'fr', 'gl', 'de', 'gu', 'he', 'hi', 'hu', 'is', 'it',
  'kn', 'ko', 'lv', 'lt', 'ms', 'ml', 'mr', 'pl', 'pa', 'ro', 'ru', 'sr', 'sk', 'sl', 'es', 'sv', 'ta', 'te', 'th', 'tr', 'uk', 'vi',
]);

/** Brave's `search_lang` for an ISO 639-1 language (the country picks a variant), or undefined when Brave has none. */
export function braveSearchLang(language: string, country: string | undefined): string | undefined {
  const lang = language.toLowerCase().split(/[-_]/)[0]!;
  const cc = country?.toUpperCase();
  switch (lang) {
    case 'ja': return 'jp';
    case 'zh': return cc === 'TW' || cc === 'HK' ? 'zh-hant' : 'zh-hans';
    case 'pt': return cc === 'BR' ? 'pt-br' : 'pt-pt';
    case 'en': return cc === 'GB' ? 'en-gb' : 'en';
    case 'no': case 'nb': return 'nb';
    default: return PLAIN_LANGS.has(lang) ? lang : undefined;
  }
}

const FRESHNESS = { day: 'pd', week: 'pw', month: 'pm', year: 'py' } as const;

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export interface BraveFilterPlan {
  readonly news: boolean;
  /** Parameters besides q, count and offset, in the order they are sent. */
  readonly params: readonly (readonly [string, string])[];
  /** What Brave applies from these parameters (site and excluded are read from its answer). */
  readonly applied: ReadonlySet<FilterName>;
}

/** The filters as Brave parameters, and what Brave applies of them. */
export function planFilters(filters: SearchFilters, now: number): BraveFilterPlan {
  const applied = new Set<FilterName>(['safe_search', 'result_type']);
  const params: [string, string][] = [];
  const country = filters.country?.toUpperCase();
  if (country !== undefined && BRAVE_COUNTRIES.has(country)) {
    params.push(['country', country]);
    applied.add('country');
  } else {
    params.push(['country', 'ALL']);
  }
  const lang = filters.language === undefined ? undefined : braveSearchLang(filters.language, country);
  if (lang !== undefined) {
    params.push(['search_lang', lang]);
    applied.add('language');
  }
  params.push(['safesearch', filters.safeSearch]);
  if (filters.timeRange === 'hour') {
    params.push(['freshness', 'pd']);
  } else if (filters.timeRange !== undefined) {
    params.push(['freshness', FRESHNESS[filters.timeRange]]);
    applied.add('time_range');
  } else if (filters.publishedAfter !== undefined && filters.publishedAfter <= now) {
    params.push(['freshness', `${isoDay(filters.publishedAfter)}to${isoDay(now)}`]);
  }
  const news = filters.resultType === 'news';
  if (!news) params.push(['result_filter', 'web,query']);
  return { news, params, applied };
}

// ---------------------------------------------------------------------------
// The query in Brave's operator syntax


export interface BraveQuery {
  readonly q: string;
  /** Whether every -word / -"phrase" is in `q`. */
  readonly allExcluded: boolean;
  /** Whether every site: is in `q`. */
  readonly allSites: boolean;
}

/** `q` from the parsed query: required groups, exclusions and sites first, then the plain words, within Brave's bounds. */
export function braveQuery(query: ProviderRequest['query']): BraveQuery {
  // Plain words: the terms less the words of required phrases (which the parser adds to terms).
  const plain = plainTerms(query);
  const fmt = (text: string, phrase: boolean) => (phrase ? `"${text.replace(/"/g, '')}"` : text);
  const groups = query.required.map((g) =>
    g.map((r) => `${r.inTitle ? 'intitle:' : ''}${fmt(r.item.text, r.item.kind === 'phrase')}`).join(' OR '));
  const excluded = query.excluded.map((x) => `-${fmt(x.text, x.kind === 'phrase')}`);
  const sites = query.sites.map((s) => `site:${s}`);
  const parts: string[] = [];
  let chars = 0, words = 0;
  const add = (p: string): boolean => {
    const w = p.split(' ').length;
    const c = p.length + (parts.length > 0 ? 1 : 0);
    if (chars + c > MAX_QUERY_CHARS || words + w > MAX_QUERY_WORDS) return false;
    parts.push(p);
    chars += c;
    words += w;
    return true;
  };
  for (const g of groups) add(g);
  let allExcluded = true, allSites = true;
  for (const x of excluded) allExcluded = add(x) && allExcluded;
  for (const s of sites) allSites = add(s) && allSites;
  for (const p of plain) add(p);
  if (parts.length === 0) {
    // Nothing fitted (one huge phrase): its words, cut to the bounds.
    const cut = query.terms.slice(0, MAX_QUERY_WORDS).join(' ');
    return { q: cutAtWord(cut, MAX_QUERY_CHARS).replace(/\u2026$/, ''), allExcluded: query.excluded.length === 0, allSites: query.sites.length === 0 };
  }
  return { q: parts.join(' '), allExcluded, allSites };
}

// ---------------------------------------------------------------------------
// Brave's failures

/** The numbers of a comma-separated rate-limit header (`1, 1419704`). */
function headerList(value: string | undefined): number[] {
  if (value === undefined) return [];
  return value.split(',').map((v) => Number(v.trim())).filter((n) => Number.isFinite(n) && n >= 0);
}

/** How long a 429 asks Brave's caller to wait, and why. */
export function brave429(headers: Readonly<Record<string, string>>, body: unknown, now = Date.now()): { ms: number; why: string } {
  const remaining = headerList(headers['x-ratelimit-remaining']);
  const reset = headerList(headers['x-ratelimit-reset']);
  let exhausted = -1;
  for (let i = 0; i < remaining.length && i < reset.length; i++) {
    if (remaining[i] === 0 && (exhausted < 0 || reset[i]! > reset[exhausted]!)) exhausted = i;
  }
  const after = retryAfterMs(headers['retry-after'], now);
  const error = errorObject(body);
  const meta = isRecord(error?.meta) ? error.meta : {};
  const quotaUsed = error?.code === 'QUOTA_LIMITED'
    || (typeof meta.quota_limit === 'number' && typeof meta.quota_current === 'number' && meta.quota_current >= meta.quota_limit);
  let ms: number, why: string;
  if (exhausted >= 0) {
    ms = reset[exhausted]! * 1000;
    why = exhausted === 0 ? 'per-second rate limit' : `quota of window ${exhausted + 1} used up (resets in ${Math.ceil(reset[exhausted]! / 3600)} h)`;
  } else if (after !== undefined) {
    ms = after;
    why = 'rate limited';
  } else if (quotaUsed) {
    ms = MAX_PAUSE_MS;
    why = 'monthly quota used up';
  } else if (reset.length > 0) {
    ms = reset[0]! * 1000;
    why = 'rate limited';
  } else {
    ms = DEFAULT_RETRY_AFTER_MS;
    why = 'rate limited, no reset given';
  }
  return { ms: Math.min(MAX_PAUSE_MS, Math.max(1000, ms)), why };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Brave's own signals in a non-2xx answer: 429 with its reset headers, 422 for a key it refuses. */
/** Brave's error object: `error`, or the first of `errors`. */
function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (!isRecord(body)) return undefined;
  if (isRecord(body.error)) return body.error;
  return Array.isArray(body.errors) && isRecord(body.errors[0]) ? body.errors[0] : undefined;
}

function braveFailure(answer: Exchanged): Error | undefined {
  const body = parsed(answer.text);
  const error = errorObject(body);
  const code = typeof error?.code === 'string' ? error.code : undefined;
  const detail = typeof error?.detail === 'string' ? error.detail.slice(0, 200) : undefined;
  if (answer.status === 429) {
    const { ms, why } = brave429(answer.headers, body);
    return new ProviderRateLimited(`Brave Search answered HTTP 429 (${why}${detail ? `: ${detail}` : ''}), paused ${Math.ceil(ms / 1000)} s`, ms);
  }
  const meta = isRecord(error?.meta) ? error.meta : undefined;
  const keyMissing = Array.isArray(meta?.errors) && meta.errors.some((e) => isRecord(e) && Array.isArray(e.loc) && e.loc.includes('x-subscription-token'));
  if (code === 'SUBSCRIPTION_TOKEN_INVALID' || keyMissing) {
    return new ProviderError(
      'PROVIDER_MISCONFIGURED',
      `Brave Search refused the key (HTTP ${answer.status} ${code ?? 'VALIDATION'}${detail ? `: ${detail}` : ''}): check SCOUR_PROVIDER_BRAVE_KEY`,
      { status: answer.status },
    );
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Brave results -> ProviderResult

const STRONG_OPEN = /<strong>/i;
const STRONG_CLOSE = /<\/strong>/i;

function language(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const l = raw.trim().toLowerCase().split(/[-_]/)[0]!;
  return /^[a-z]{2,3}$/.test(l) ? l : null;
}

/** One web or news result as a ProviderResult; undefined without a usable http(s) URL. */
export function toProviderResult(raw: unknown, news: boolean): ProviderResult | undefined {
  if (!isRecord(raw)) return undefined;
  const url = httpUrl(raw.url);
  if (url === undefined) return undefined;
  const title = typeof raw.title === 'string' ? cutAtWord(plainText(raw.title)) : '';
  let marked = typeof raw.description === 'string' ? markedText(raw.description, STRONG_OPEN, STRONG_CLOSE) : { text: '', highlights: [] };
  if (marked.text === '' && Array.isArray(raw.extra_snippets)) {
    const first = raw.extra_snippets.find((s): s is string => typeof s === 'string' && s.trim() !== '');
    if (first !== undefined) marked = markedText(first, STRONG_OPEN, STRONG_CLOSE);
  }
  return {
    url,
    title: title !== '' ? title : new URL(url).hostname,
    snippet: marked.text,
    ...(marked.highlights.length > 0 ? { highlights: marked.highlights } : {}),
    publishedAt: parseIsoDate(raw.page_age),
    type: news ? 'news' : null,
    language: language(raw.language),
    country: null,
    safe: typeof raw.family_friendly === 'boolean' ? raw.family_friendly : null,
  };
}

interface Page {
  readonly results: readonly unknown[];
  /** Whether Brave says another page would have more. */
  readonly more: boolean;
  readonly operators: { readonly applied: boolean; readonly sites: readonly string[] } | undefined;
}

function readPage(json: unknown, news: boolean, count: number, where: string): Page {
  if (!isRecord(json) || json.type !== (news ? 'news' : 'search')) {
    const type = isRecord(json) && typeof json.type === 'string' ? json.type : 'no type';
    throw new ProviderError('PROVIDER_FAILED', `Brave Search at ${where} answered JSON that is not a ${news ? 'news' : 'web'} search answer (${type.slice(0, 40)})`);
  }
  const query = isRecord(json.query) ? json.query : {};
  const so = isRecord(query.search_operators) ? query.search_operators : undefined;
  const operators = so === undefined ? undefined : {
    applied: so.applied === true,
    sites: Array.isArray(so.sites) ? so.sites.filter((s): s is string => typeof s === 'string').map((s) => s.toLowerCase().replace(/^www\./, '')) : [],
  };
  if (news) {
    const results = Array.isArray(json.results) ? json.results : [];
    return { results, more: results.length >= count, operators };
  }
  const web = isRecord(json.web) && Array.isArray(json.web.results) ? json.web.results : [];
  return { results: web, more: query.more_results_available === true, operators };
}

const dedupeKey = (url: string): string => {
  const u = new URL(url);
  return `${u.hostname.toLowerCase().replace(/^www\./, '')}${u.pathname.replace(/(?<!\/)\/+$/, '')}${u.search}`;
};

// ---------------------------------------------------------------------------
// The provider

export function createBraveProvider(options: ProviderOptions): SearchProviderPlugin<'search-provider-brave'> {
  const key = options.key?.trim();
  if (key === undefined || key === '') throw new Error('brave: SCOUR_PROVIDER_BRAVE_KEY is required (a Brave Search API subscription token)');
  const base = baseUrl('brave', options.baseUrl, DEFAULT_BASE_URL);
  const headers: Record<string, string> = {
    'x-subscription-token': key,
    ...(base.authorization === undefined ? {} : { authorization: base.authorization }),
  };

  async function page(request: ProviderRequest, plan: BraveFilterPlan, q: string, count: number, offset: number): Promise<Page> {
    const url = `${base.url}${plan.news ? NEWS_PATH : WEB_PATH}`;
    const params = new URLSearchParams([['q', q], ['count', String(count)], ['offset', String(offset)], ...plan.params.map(([k, v]): [string, string] => [k, v])]);
    const { json } = await exchangeJson(options.egress, {
      provider: 'brave',
      url: `${url}?${params.toString()}`,
      headers,
      timeoutMs: options.timeoutMs,
      signal: request.signal,
      failure: braveFailure,
    });
    return readPage(json, plan.news, count, url);
  }

  return defineSearchProvider({
    name: 'search-provider-brave',
    id: 'brave',
    description: "Brave Search API: Brave's own web index (and its news search for news), with a subscription token.",
    endpoint: base.url,
    applies: new Set<FilterName>(['safe_search', 'result_type']),
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      const plan = planFilters(request.filters, request.now);
      const bq = braveQuery(request.query);
      const limit = Math.max(1, Math.floor(request.limit));
      const count = Math.min(limit, plan.news ? NEWS_MAX_COUNT : WEB_MAX_COUNT);
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      const warnings: ProviderWarning[] = [];
      const take = (p: Page) => {
        for (const raw of p.results) {
          const r = toProviderResult(raw, plan.news);
          if (r === undefined) continue;
          const k = dedupeKey(r.url);
          if (seen.has(k)) continue;
          seen.add(k);
          results.push(r);
        }
      };
      const first = await page(request, plan, bq.q, count, 0);
      take(first);
      if (results.length < limit && first.more && first.results.length > 0) {
        try {
          take(await page(request, plan, bq.q, count, 1));
        } catch (err) {
          if (request.signal.aborted) throw err;
          const code = err instanceof ProviderError || err instanceof ProviderRateLimited ? err.code : 'PROVIDER_FAILED';
          warnings.push({ code, message: `the second page failed, the first page's results are kept: ${err instanceof Error ? err.message : String(err)}` });
        }
      }
      const applied = new Set(plan.applied);
      const ops = first.operators;
      if (ops !== undefined) {
        if (request.query.excluded.length > 0 && bq.allExcluded && ops.applied) applied.add('excluded');
        if (request.query.sites.length > 0 && request.query.excludedSites.length === 0 && bq.allSites
          && request.query.sites.every((s) => ops.sites.includes(s))) applied.add('site');
      }
      return {
        results: results.slice(0, limit),
        total: undefined,
        applied,
        ...(warnings.length === 0 ? {} : { warnings }),
      };
    },
  });
}
