/**
 * The `google` search provider: Google's Programmable Search Engine through
 * the Custom Search JSON API (`GET {base}/customsearch/v1?key=&cx=&q=&num=
 * &start=`), with an API key (SCOUR_PROVIDER_GOOGLE_KEY) and a search engine
 * ID (`cx`, SCOUR_PROVIDER_GOOGLE_CX). Google closed the API to new
 * customers in 2026 and will retire it; existing keys keep working until
 * then (the 100 free queries a day are quickly spent: every Scour search
 * costs one query, two when more than 10 results are wanted).
 *
 * What the wire looks like (Google's cse.list reference,
 * developers.google.com/custom-search/v1/reference/rest/v1/cse/list, as
 * quoted in client libraries' generated docs; googleapis.dev Search and
 * Result models; error bodies as users quoted them in
 * Techcatchers/PyLyrics-Extractor#9, ejamesc/jarvisbot#21,
 * Significant-Gravitas/AutoGPT#2330 and #1197, vivet/GoogleApi#375,
 * mixelpixx/Nimrod#7):
 * - parameters: `num` 1-10, `start` the 1-based index of the first result
 *   (`start + num` over 100 is an error: at most 100 results), `lr`
 *   (lang_ar ... lang_zh-CN, lang_zh-TW; Hebrew is lang_iw, Norwegian
 *   lang_no), `cr` (countryXX restricts to documents from a country; the
 *   United Kingdom is countryUK), `gl` (2-letter code, boosts results from
 *   that country), `dateRestrict` d[n] / w[n] / m[n] / y[n], `safe` active /
 *   off, `siteSearch` with `siteSearchFilter` i (include) or e (exclude),
 *   one site only, `exactTerms` (a phrase every result contains),
 *   `excludeTerms` (a word or phrase no result contains);
 * - answer: `{"kind": "customsearch#search", "url", "queries": {"request":
 *   [...], "nextPage": [...]}, "context", "searchInformation": {"searchTime",
 *   "formattedSearchTime", "totalResults": "12300" (a string),
 *   "formattedTotalResults"}, "items": [...]}`; `items` is absent when
 *   nothing matched, `nextPage` when there is no further page. An item has
 *   `title`, `htmlTitle`, `link`, `displayLink`, `snippet`, `htmlSnippet`
 *   (matches in `<b>`, line breaks as `<br>`, often a leading "Mar 3, 2024
 *   ..." date), `formattedUrl`, `pagemap` (`metatags[0]` holds the page's
 *   meta tags: `og:locale`, `article:published_time`, the Highwire
 *   `citation_*` tags of scholarly pages...), `mime`, `fileFormat`;
 * - errors: `{"error": {"code", "message", "errors": [{"message", "domain",
 *   "reason"}], "status", "details": [{"@type", "reason", ...}]}}`. A daily
 *   or per-minute quota used up is 429 RESOURCE_EXHAUSTED reason
 *   rateLimitExceeded ("Quota exceeded for quota metric 'Queries' and limit
 *   'Queries per day'..."), or on older paths 403 with reason
 *   dailyLimitExceeded / rateLimitExceeded / userRateLimitExceeded: all are
 *   rate limits here (ProviderRateLimited; the daily quota resets at
 *   midnight Pacific time, so the pause lasts until then; a per-minute one a
 *   minute, or Retry-After), not refused keys. A bad key is 400
 *   INVALID_ARGUMENT "API key not valid" (details reason API_KEY_INVALID,
 *   older reason keyInvalid), a bad `cx` 400 "Request contains an invalid
 *   argument." (reason badRequest): both PROVIDER_MISCONFIGURED, as are 403
 *   accessNotConfigured (the API not enabled for the key's project) and 403
 *   "This project does not have the access to Custom Search JSON API".
 *
 * Filters (`applied` holds what Google applied; the search operation
 * post-filters the rest):
 * - language Google lists -> `lr=lang_xx` (he -> iw, nb/nn -> no, zh ->
 *   zh-CN, or zh-TW with country TW/HK): applied; others: not sent;
 * - country -> `cr=countryXX` and `gl=xx` (GB -> UK): applied;
 * - time_range day/week/month/year -> `dateRestrict` d1/w1/m1/y1: applied;
 *   hour -> d1, not applied; a lower bound without a range (research's
 *   window) -> d[days since], not applied (days, not instants);
 * - safe_search moderate/strict -> `safe=active`, off -> `safe=off`:
 *   applied on every request (declared in `applies`);
 * - result_type news: the Custom Search API cannot restrict to news, so a
 *   news request is answered with no results and every filter applied,
 *   without asking Google (declared in `applies`);
 * - site: one `site:` alone -> `siteSearch` + `siteSearchFilter=i`, one
 *   `-site:` alone -> `siteSearchFilter=e`: applied; several -> `site:a OR
 *   site:b` / `-site:c` in `q`: not applied (the operation checks domains);
 * - excluded: one word or phrase -> `excludeTerms`, several -> `-word` /
 *   `-"phrase"` in `q`: applied (declared in `applies`);
 * - required phrases: one phrase alone -> `exactTerms`; otherwise `"phrase"`
 *   (alternatives joined with OR, `intitle:` kept) in `q`, after the plain
 *   words.
 *
 * Results: `title` (plain), `htmlSnippet` -> snippet and highlights, the
 * date from the meta tags (article:published_time, citation_publication_date
 * and the like), else the snippet's leading date; scholarly pages (Highwire
 * `citation_title` / `citation_doi` tags) are typed academic with their DOI,
 * authors, journal and PDF; `og:locale` gives the language. `total` is
 * `searchInformation.totalResults`.
 *
 * Paging: `num` = the limit up to 10; a second request (`start=11`) when more
 * are wanted and Google has a next page: at most 2 requests, 20 results. A
 * failure of the second page keeps the first page's results and becomes a
 * warning with its code.
 */
import type { FilterName, ProviderRequest, ProviderResponse, ProviderResult, ProviderWarning, SearchFilters } from '../../../core/search.js';
import {
  bareDoi, baseUrl, cutAtWord, defineSearchProvider, exchangeJson, httpUrl, isRecord, markedText, parseIsoDate, plainText, ProviderError,
  ProviderRateLimited, retryAfterMs, DEFAULT_RETRY_AFTER_MS, type Exchanged, type ProviderOptions, type SearchProviderPlugin,
  plainTerms,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://www.googleapis.com';
export const SEARCH_PATH = '/customsearch/v1';
/** `num` at most. */
export const MAX_NUM = 10;
/** Results at most: 2 requests of 10. */
export const MAX_RESULTS = 20;

const ALL_FILTERS: ReadonlySet<FilterName> = new Set<FilterName>(['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded']);

export interface GoogleProviderOptions extends ProviderOptions {
  /** The Programmable Search Engine ID (SCOUR_PROVIDER_GOOGLE_CX). */
  readonly cx: string | undefined;
}

/** The `lr` languages Google lists (ISO 639-1, as Google writes them after lang_). */
const LR_LANGS: ReadonlySet<string> = new Set([
  'ar', 'bg', 'ca', 'cs', 'da', 'de', 'el', 'en', 'es', 'et', 'fi', 'fr', 'hr', 'hu', 'id', 'is', 'it', 'iw', 'ja', 'ko', 'lt', 'lv',
  'nl', 'no', 'pl', 'pt', 'ro', 'ru', 'sk', 'sl', 'sr', 'sv', 'tr',
]);

/** Google's `lr` value for an ISO 639-1 language (the country picks the Chinese script), or undefined when Google lists none. */
export function googleLr(language: string, country: string | undefined): string | undefined {
  const lang = language.toLowerCase().split(/[-_]/)[0]!;
  const cc = country?.toUpperCase();
  if (lang === 'zh') return cc === 'TW' || cc === 'HK' ? 'lang_zh-TW' : 'lang_zh-CN';
  const g = lang === 'he' ? 'iw' : lang === 'nb' || lang === 'nn' ? 'no' : lang;
  return LR_LANGS.has(g) ? `lang_${g}` : undefined;
}

const DATE_RESTRICT = { day: 'd1', week: 'w1', month: 'm1', year: 'y1' } as const;

export interface GoogleFilterPlan {
  readonly params: readonly (readonly [string, string])[];
  readonly applied: Set<FilterName>;
}

/** The filters as Custom Search parameters (besides the query's own), and what Google applies of them. */
export function planFilters(filters: SearchFilters, now: number): GoogleFilterPlan {
  const applied = new Set<FilterName>(['safe_search', 'result_type']);
  const params: [string, string][] = [];
  const country = filters.country?.toUpperCase();
  if (filters.language !== undefined) {
    const lr = googleLr(filters.language, country);
    if (lr !== undefined) {
      params.push(['lr', lr]);
      applied.add('language');
    }
  }
  if (country !== undefined && /^[A-Z]{2}$/.test(country)) {
    const g = country === 'GB' ? 'UK' : country;
    params.push(['cr', `country${g}`], ['gl', g.toLowerCase()]);
    applied.add('country');
  }
  if (filters.timeRange === 'hour') {
    params.push(['dateRestrict', 'd1']);
  } else if (filters.timeRange !== undefined) {
    params.push(['dateRestrict', DATE_RESTRICT[filters.timeRange]]);
    applied.add('time_range');
  } else if (filters.publishedAfter !== undefined && filters.publishedAfter <= now) {
    params.push(['dateRestrict', `d${Math.max(1, Math.ceil((now - filters.publishedAfter) / 86_400_000))}`]);
  }
  params.push(['safe', filters.safeSearch === 'off' ? 'off' : 'active']);
  return { params, applied };
}

// ---------------------------------------------------------------------------
// The query

const quoted = (text: string): string => `"${text.replace(/"/g, '')}"`;

export interface GoogleQuery {
  readonly params: readonly (readonly [string, string])[];
  /** site applied (one site: or one -site:, sent as siteSearch). */
  readonly siteApplied: boolean;
}

/** `q` and the structured parameters (exactTerms, excludeTerms, siteSearch) from the parsed query. */
export function googleQuery(query: ProviderRequest['query']): GoogleQuery {
  // Plain words: the terms less the words of required phrases (which the parser adds to terms).
  const plain = plainTerms(query);
  const q: string[] = [...plain];
  const params: [string, string][] = [];
  const only = query.required.length === 1 && query.required[0]!.length === 1 ? query.required[0]![0]! : undefined;
  if (only !== undefined && !only.inTitle && only.item.kind === 'phrase') {
    params.push(['exactTerms', only.item.text]);
  } else {
    for (const g of query.required) {
      q.push(g.map((r) => `${r.inTitle ? 'intitle:' : ''}${r.item.kind === 'phrase' ? quoted(r.item.text) : r.item.text}`).join(' OR '));
    }
  }
  if (query.excluded.length === 1) {
    params.push(['excludeTerms', query.excluded[0]!.text]);
  } else {
    for (const x of query.excluded) q.push(`-${x.kind === 'phrase' ? quoted(x.text) : x.text}`);
  }
  let siteApplied = false;
  if (query.sites.length === 1 && query.excludedSites.length === 0) {
    params.push(['siteSearch', query.sites[0]!], ['siteSearchFilter', 'i']);
    siteApplied = true;
  } else if (query.sites.length === 0 && query.excludedSites.length === 1) {
    params.push(['siteSearch', query.excludedSites[0]!], ['siteSearchFilter', 'e']);
    siteApplied = true;
  } else {
    if (query.sites.length > 0) q.push(query.sites.map((s) => `site:${s}`).join(' OR '));
    for (const s of query.excludedSites) q.push(`-site:${s}`);
  }
  if (q.length === 0) q.push(...query.terms);
  return { params: [['q', q.join(' ')], ...params], siteApplied };
}

// ---------------------------------------------------------------------------
// Google's failures

/** Milliseconds until the next midnight in Pacific time (when Google's daily quotas reset). */
export function msUntilPacificMidnight(now: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Los_Angeles', hourCycle: 'h23', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(now));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? '0');
  const elapsed = ((get('hour') * 60 + get('minute')) * 60 + get('second')) * 1000 + (now % 1000);
  return Math.max(1000, 86_400_000 - elapsed);
}

const RATE_REASONS = new Set(['dailyLimitExceeded', 'rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'RATE_LIMIT_EXCEEDED']);
const KEY_REASONS = new Set(['keyInvalid', 'keyExpired', 'API_KEY_INVALID', 'API_KEY_EXPIRED']);

/** Google's error object: message, status and the reasons of `errors` and `details`. */
function googleError(text: string): { message: string; status: string; reasons: string[] } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(body) || !isRecord(body.error)) return undefined;
  const e = body.error;
  const reasons: string[] = [];
  for (const list of [e.errors, e.details]) {
    if (Array.isArray(list)) for (const x of list) if (isRecord(x) && typeof x.reason === 'string') reasons.push(x.reason);
  }
  return {
    message: typeof e.message === 'string' ? e.message.slice(0, 300) : '',
    status: typeof e.status === 'string' ? e.status : '',
    reasons,
  };
}

/** A rate limit or a refused key or engine, as Google says it in its error body; undefined for the usual mapping. */
export function googleFailure(answer: Exchanged, now = Date.now()): Error | undefined {
  const e = googleError(answer.text);
  const limited = answer.status === 429 || (e !== undefined && (e.status === 'RESOURCE_EXHAUSTED' || e.reasons.some((r) => RATE_REASONS.has(r))));
  if (limited) {
    const daily = e !== undefined && (e.reasons.includes('dailyLimitExceeded') || /per day|daily/i.test(e.message));
    const after = retryAfterMs(answer.headers['retry-after'], now);
    const ms = daily ? msUntilPacificMidnight(now) : after ?? DEFAULT_RETRY_AFTER_MS;
    const why = daily ? 'daily quota used up, it resets at midnight Pacific time' : 'rate limited';
    return new ProviderRateLimited(
      `Google Custom Search answered HTTP ${answer.status} (${why}${e?.message ? `: ${e.message}` : ''}), paused ${Math.ceil(ms / 1000)} s`,
      Math.max(1000, ms),
    );
  }
  if (e === undefined) return undefined;
  if (answer.status === 400 && (e.reasons.some((r) => KEY_REASONS.has(r)) || /API key/i.test(e.message))) {
    return new ProviderError('PROVIDER_MISCONFIGURED', `Google Custom Search refused the key (HTTP 400: ${e.message}): check SCOUR_PROVIDER_GOOGLE_KEY`, { status: 400 });
  }
  if (answer.status === 400 && e.status === 'INVALID_ARGUMENT') {
    // Every parameter Scour sends is checked; what is left is the engine ID.
    return new ProviderError(
      'PROVIDER_MISCONFIGURED',
      `Google Custom Search refused the request (HTTP 400: ${e.message}): check SCOUR_PROVIDER_GOOGLE_CX (the search engine ID)`,
      { status: 400 },
    );
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Google items -> ProviderResult

const B_OPEN = /<b>/i;
const B_CLOSE = /<\/b>/i;

const MONTHS: Readonly<Record<string, number>> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };

/** The date Google puts before a dated page's snippet ("Mar 3, 2024 ... "), or null. */
export function snippetDate(snippet: string): number | null {
  const m = /^([A-Z][a-z]{2}) (\d{1,2}), (\d{4}) \.\.\./.exec(snippet.trim());
  if (m === null || MONTHS[m[1]!] === undefined) return null;
  const t = Date.UTC(Number(m[3]), MONTHS[m[1]!]!, Number(m[2]));
  return new Date(t).getUTCDate() === Number(m[2]) ? t : null;
}

const DATE_TAGS = [
  'article:published_time', 'og:article:published_time', 'datepublished', 'citation_publication_date', 'citation_date',
  'dc.date.issued', 'dcterms.issued', 'dc.date', 'date', 'pubdate', 'publishdate', 'parsely-pub-date', 'sailthru.date',
];

/** Epoch ms of a meta tag's date: ISO 8601, or Highwire's 2020/05/01. */
function tagDate(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().replace(/^(\d{4})\/(\d{1,2})\/(\d{1,2})/, (_, y: string, m: string, d: string) => `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`);
  return parseIsoDate(/^\d{4}$/.test(v) ? `${v}-01-01` : v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** One item as a ProviderResult; undefined without a usable http(s) link. */
export function toProviderResult(raw: unknown): ProviderResult | undefined {
  if (!isRecord(raw)) return undefined;
  const url = httpUrl(raw.link);
  if (url === undefined) return undefined;
  const pagemap = isRecord(raw.pagemap) ? raw.pagemap : {};
  const meta = Array.isArray(pagemap.metatags) && isRecord(pagemap.metatags[0]) ? pagemap.metatags[0] : {};
  const title = str(raw.title) !== undefined ? cutAtWord(plainText(raw.title as string)) : '';
  const marked = typeof raw.htmlSnippet === 'string'
    ? markedText(raw.htmlSnippet, B_OPEN, B_CLOSE)
    : { text: typeof raw.snippet === 'string' ? cutAtWord(plainText(raw.snippet)) : '', highlights: [] as [number, number][] };
  let publishedAt: number | null = null;
  for (const tag of DATE_TAGS) {
    publishedAt = tagDate(meta[tag]);
    if (publishedAt !== null) break;
  }
  for (const kind of ['newsarticle', 'article', 'blogposting']) {
    if (publishedAt !== null) break;
    const list = pagemap[kind];
    if (Array.isArray(list) && isRecord(list[0])) publishedAt = tagDate(list[0].datepublished);
  }
  if (publishedAt === null) publishedAt = snippetDate(marked.text);
  const locale = str(meta['og:locale']);
  const lang = locale === undefined ? null : locale.toLowerCase().split(/[-_]/)[0]!;
  const scholarly = str(meta.citation_title) !== undefined || str(meta.citation_doi) !== undefined;
  const social = ['discussionforumposting', 'qapage', 'question'].some((k) => Array.isArray(pagemap[k]));
  const base: ProviderResult = {
    url,
    title: title !== '' ? title : new URL(url).hostname,
    snippet: marked.text,
    ...(marked.highlights.length > 0 ? { highlights: marked.highlights } : {}),
    publishedAt,
    type: scholarly ? 'academic' : Array.isArray(pagemap.newsarticle) ? 'news' : social ? 'social' : null,
    language: lang !== null && /^[a-z]{2,3}$/.test(lang) ? lang : null,
    country: null,
    safe: null,
  };
  if (!scholarly) return base;
  const authors = str(meta.citation_author);
  const venue = str(meta.citation_journal_title) ?? str(meta.citation_conference_title) ?? str(meta.citation_publisher);
  const abstract = str(meta.citation_abstract);
  return {
    ...base,
    doi: bareDoi(meta.citation_doi) ?? null,
    ...(authors === undefined ? {} : { authors: authors.split(';').map((a) => plainText(a)).filter((a) => a !== '').slice(0, 50) }),
    venue: venue === undefined ? null : plainText(venue),
    fullTextUrl: httpUrl(meta.citation_pdf_url) ?? null,
    abstract: abstract === undefined ? null : plainText(abstract),
  };
}

interface Page {
  readonly items: readonly unknown[];
  readonly total: number | undefined;
  readonly hasNext: boolean;
}

function readPage(json: unknown, where: string): Page {
  if (!isRecord(json) || (json.kind !== 'customsearch#search' && !isRecord(json.searchInformation) && !Array.isArray(json.items))) {
    throw new ProviderError('PROVIDER_FAILED', `Google Custom Search at ${where} answered JSON that is not a search answer`);
  }
  const info = isRecord(json.searchInformation) ? json.searchInformation : {};
  const t = typeof info.totalResults === 'string' || typeof info.totalResults === 'number' ? Number(info.totalResults) : Number.NaN;
  const queries = isRecord(json.queries) ? json.queries : {};
  return {
    items: Array.isArray(json.items) ? json.items : [],
    total: Number.isFinite(t) && t >= 0 ? Math.floor(t) : undefined,
    hasNext: Array.isArray(queries.nextPage) && queries.nextPage.length > 0,
  };
}

// ---------------------------------------------------------------------------
// The provider

export function createGoogleProvider(options: GoogleProviderOptions): SearchProviderPlugin<'search-provider-google'> {
  const key = options.key?.trim();
  const cx = options.cx?.trim();
  if (key === undefined || key === '') throw new Error('google: SCOUR_PROVIDER_GOOGLE_KEY is required (a Google Cloud API key with the Custom Search API enabled)');
  if (cx === undefined || cx === '') throw new Error('google: SCOUR_PROVIDER_GOOGLE_CX is required (the Programmable Search Engine ID)');
  const base = baseUrl('google', options.baseUrl, DEFAULT_BASE_URL);
  const endpoint = `${base.url}${SEARCH_PATH}`;
  const headers: Record<string, string> = base.authorization === undefined ? {} : { authorization: base.authorization };

  async function page(request: ProviderRequest, params: readonly (readonly [string, string])[], start: number, num: number): Promise<Page> {
    const search = new URLSearchParams([['key', key!], ['cx', cx!], ...params.map(([k, v]): [string, string] => [k, v]), ['num', String(num)], ['start', String(start)]]);
    const { json } = await exchangeJson(options.egress, {
      provider: 'google',
      url: `${endpoint}?${search.toString()}`,
      headers,
      timeoutMs: options.timeoutMs,
      signal: request.signal,
      failure: (a) => googleFailure(a),
    });
    return readPage(json, endpoint);
  }

  return defineSearchProvider({
    name: 'search-provider-google',
    id: 'google',
    description: 'Google Programmable Search Engine, through the Custom Search JSON API (an API key and a search engine ID).',
    endpoint: base.url,
    applies: new Set<FilterName>(['safe_search', 'result_type', 'excluded']),
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      if (request.filters.resultType === 'news') return { results: [], total: 0, applied: ALL_FILTERS };
      const plan = planFilters(request.filters, request.now);
      const gq = googleQuery(request.query);
      const params = [...gq.params, ...plan.params];
      const limit = Math.min(MAX_RESULTS, Math.max(1, Math.floor(request.limit)));
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      const warnings: ProviderWarning[] = [];
      const take = (p: Page) => {
        for (const raw of p.items) {
          const r = toProviderResult(raw);
          if (r === undefined || seen.has(r.url)) continue;
          seen.add(r.url);
          results.push(r);
        }
      };
      const first = await page(request, params, 1, Math.min(limit, MAX_NUM));
      take(first);
      if (limit > MAX_NUM && first.hasNext && first.items.length >= MAX_NUM) {
        try {
          take(await page(request, params, MAX_NUM + 1, limit - MAX_NUM));
        } catch (err) {
          if (request.signal.aborted) throw err;
          const code = err instanceof ProviderError || err instanceof ProviderRateLimited ? err.code : 'PROVIDER_FAILED';
          warnings.push({ code, message: `the second page failed, the first page's results are kept: ${err instanceof Error ? err.message : String(err)}` });
        }
      }
      const applied = new Set(plan.applied);
      applied.add('excluded');
      if (gq.siteApplied) applied.add('site');
      return {
        results: results.slice(0, limit),
        total: first.total,
        applied,
        ...(warnings.length === 0 ? {} : { warnings }),
      };
    },
  });
}
