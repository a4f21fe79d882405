/**
 * The `wikipedia` search provider: full-text search of one Wikipedia (or any
 * MediaWiki with CirrusSearch) through the MediaWiki Action API,
 * `GET {base}/w/api.php?action=query&list=search&srsearch=...&format=json`,
 * reached through the Egress port only. Keyless.
 *
 * What the wire looks like (read from the API's own help, Special:ApiHelp/
 * query+search, mediawiki.org API:Search, API:Errors and warnings,
 * Manual:Maxlag parameter, Help:CirrusSearch and its Logical operators
 * page; page URLs as MediaWiki's GlobalFunctions.php wfUrlencode() builds
 * them):
 * - parameters: `srsearch` (required), `srlimit` 1..500 (default 10),
 *   `sroffset` (default 0), `srprop` (we ask `snippet|timestamp`), `srinfo`
 *   (we ask `totalhits`), `srnamespace` (default 0, articles),
 *   `formatversion=2` (booleans as true/false, no `*` keys), `utf8=1`
 *   (characters, not \uXXXX escapes);
 * - the answer is `{"batchcomplete": true, "continue": {"sroffset": 10,
 *   "continue": "-||"}, "query": {"searchinfo": {"totalhits": N},
 *   "search": [{"ns", "title", "pageid", "snippet", "timestamp"}]}}`;
 *   formatversion 1 (an older wiki, or a proxy dropping the parameter)
 *   differs only in `batchcomplete: ""`, which is read the same way;
 * - `snippet` is HTML: the matched words are wrapped in
 *   `<span class="searchmatch">...</span>`, entities are escaped; it becomes
 *   plain text with `highlights`. `timestamp` is the page's LAST EDIT
 *   (ISO 8601, UTC): it is the only date the search gives, so it is
 *   `publishedAt` (a page edited within a time range passes that range);
 * - errors come inside an HTTP 200: `{"error": {"code", "info", "docref"},
 *   "servedby"}` (formatversion 1: `"*"` instead of `docref`). `maxlag`
 *   (replication lag; sent with `Retry-After` and `X-Database-Lag` headers,
 *   body `lag` in seconds) and `ratelimited` are rate limits:
 *   ProviderRateLimited for the Retry-After (else `lag`, else a minute);
 *   `readapidenied` / `permissiondenied` (a private wiki) are
 *   PROVIDER_MISCONFIGURED; any other code is PROVIDER_FAILED with its
 *   `info`. Wikimedia's edge answers HTTP 429 with Retry-After to clients
 *   over its limits, and 403 to clients without a proper User-Agent: the
 *   toolkit maps those. We do not send `maxlag` (mediawiki.org: interactive
 *   requests, where a person waits, leave it out);
 * - the page is `{base}/wiki/<Title>`: spaces as underscores, then PHP
 *   `urlencode()` with `; @ $ ! * ( ) , / ~ :` put back (wfUrlencode).
 *
 * The query (CirrusSearch syntax; every plain word is required, which is
 * how CirrusSearch ranks too): words as they are (anything that is not a
 * letter or a digit splits a word, so no CirrusSearch keyword, wildcard,
 * fuzzy `~` or `!` can be smuggled in; a term that splits into several
 * words becomes a phrase; the words AND, OR and NOT are lower-cased so they
 * stay words); `"phrases"`; `intitle:"..."` for the query's intitle:;
 * alternatives of one group joined with OR (CirrusSearch's OR is a binary
 * operator with Lucene's SHOULD semantics, so a group of alternatives next
 * to other words is approximate); `-word` and `-"phrase"` for exclusions.
 * Parentheses are never sent: CirrusSearch drops them.
 *
 * Filters (`applied` says which this provider applied; the search
 * operation post-filters the rest):
 * - language: the wiki is picked per request from `filters.language ?? 'en'`
 *   when the base URL holds `{lang}` (the default
 *   `https://{lang}.wikipedia.org` does): language applied, and every
 *   result carries that language. A base without `{lang}` is one wiki:
 *   language NOT applied, results carry no language;
 * - site: and -site: every result is a page of the one wiki's host, so the
 *   provider decides them itself: a `site:` that is not that host (or a
 *   parent domain of it), or a `-site:` that is, answers no results without
 *   a request; otherwise nothing is left to check: site applied;
 * - excluded: `-word` / `-"phrase"` in srsearch (CirrusSearch drops pages
 *   holding them anywhere, a superset of the title and snippet the
 *   operation would check): excluded applied;
 * - result_type news: an encyclopedia has no news; answered `{ results: [],
 *   total: 0, applied: every filter }` without a request; web asks nothing:
 *   result_type applied;
 * - time_range, country, safe_search: CirrusSearch has no such filter: NOT
 *   applied (the operation checks `publishedAt`, the last edit; country and
 *   safety stay unknown, null).
 * `applies` declares result_type, site and excluded, and language when the
 * base holds `{lang}`: they are applied on every request.
 *
 * Paging: `srlimit` is `request.limit` (at most 500, the API's maximum for
 * clients without apihighlimits); a second request with `sroffset` from
 * `continue` only when more were asked for and the first page was full.
 */
import {
  domainOf, onSite, type FilterName, type ProviderKind, type ProviderRequest, type ProviderResponse, type ProviderResult,
} from '../../../core/search.js';
import {
  PROVIDER_USER_AGENT, ProviderError, ProviderRateLimited, baseUrl, defineSearchProvider, exchangeJson, hasLangSlot, isRecord,
  markedText, parseIsoDate, plainText, cutAtWord, retryAfterMs, type ProviderOptions, type SearchProviderPlugin,
  wordOrPhrase, plainTerms,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://{lang}.wikipedia.org';
/** srlimit's maximum for clients without the apihighlimits right. */
export const MAX_PAGE_SIZE = 500;
/** Requests for one search at most. */
export const MAX_REQUESTS = 2;
/** How long a maxlag or ratelimited error pauses the provider when the wiki says nothing more. */
export const DEFAULT_PAUSE_MS = 60_000;

const ID = 'wikipedia';
const ALL_FILTERS: readonly FilterName[] = ['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded'];
const KINDS: readonly ProviderKind[] = ['reference'];
const SEARCHMATCH_OPEN = /<span\s+class\s*=\s*["']searchmatch["']\s*>/i;
const SEARCHMATCH_CLOSE = /<\/span\s*>/i;

export type WikipediaProviderOptions = ProviderOptions;

// ---------------------------------------------------------------------------
// The query




/** `srsearch` for a parsed query (see the header). */
export function buildSrsearch(query: ProviderRequest['query']): string {
  const parts: string[] = [];
  for (const t of plainTerms(query)) {
    const s = wordOrPhrase(t);
    if (s !== undefined) parts.push(s);
  }
  for (const group of query.required) {
    const alts: string[] = [];
    for (const { item: it, inTitle } of group) {
      const s = wordOrPhrase(it.text);
      if (s === undefined) continue;
      alts.push(inTitle ? `intitle:${s.startsWith('"') ? s : `"${s}"`}` : s);
    }
    if (alts.length > 0) parts.push(alts.join(' OR '));
  }
  for (const x of query.excluded) {
    const s = wordOrPhrase(x.text);
    if (s !== undefined) parts.push(`-${s}`);
  }
  return parts.join(' ');
}

// ---------------------------------------------------------------------------
// Answers

/** The page URL of a title on the wiki at `base` (MediaWiki's wfUrlencode). */
export function pageUrl(base: string, title: string): string {
  const path = encodeURIComponent(title.replace(/ /g, '_'))
    .replace(/'/g, '%27')
    .replace(/%3B|%40|%24|%21|%2A|%28|%29|%2C|%2F|%7E|%3A/gi, (m) => decodeURIComponent(m));
  return `${base}/wiki/${path}`;
}

/** The error of a MediaWiki answer (`{"error": {...}}` in an HTTP 200), as what this provider throws. */
function answerError(error: Record<string, unknown>, headers: Readonly<Record<string, string>>, where: string): Error {
  const code = typeof error.code === 'string' ? error.code : 'unknown';
  const info = typeof error.info === 'string' ? plainText(error.info).slice(0, 300) : '';
  const said = `${code}${info ? `: ${info}` : ''}`;
  if (code === 'maxlag' || code === 'ratelimited') {
    const lag = typeof error.lag === 'number' && Number.isFinite(error.lag) && error.lag > 0 ? Math.round(error.lag * 1000) : undefined;
    const ms = retryAfterMs(headers['retry-after']) ?? lag ?? DEFAULT_PAUSE_MS;
    return new ProviderRateLimited(`${ID} at ${where} asked Scour to wait (${said})`, Math.max(1000, ms));
  }
  if (code === 'readapidenied' || code === 'permissiondenied') {
    return new ProviderError('PROVIDER_MISCONFIGURED', `${ID} at ${where} refused to search (${said}): the wiki is not readable without an account`);
  }
  return new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered an error (${said})`);
}

interface Page {
  readonly hits: readonly unknown[];
  readonly total: number | undefined;
  readonly nextOffset: number | undefined;
}

function readPage(json: unknown, headers: Readonly<Record<string, string>>, where: string): Page {
  if (!isRecord(json)) throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered JSON that is not an object`);
  if (isRecord(json.error)) throw answerError(json.error, headers, where);
  const query = json.query;
  if (!isRecord(query)) {
    throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered without "query" (is the URL a MediaWiki's api.php?)`);
  }
  const info = isRecord(query.searchinfo) ? query.searchinfo.totalhits : undefined;
  const next = isRecord(json.continue) ? json.continue.sroffset : undefined;
  return {
    hits: Array.isArray(query.search) ? query.search : [],
    total: typeof info === 'number' && Number.isInteger(info) && info >= 0 ? info : undefined,
    nextOffset: typeof next === 'number' && Number.isInteger(next) && next > 0 ? next : undefined,
  };
}

/** One search hit as a ProviderResult; undefined when it has no usable title. */
export function toProviderResult(raw: unknown, base: string, language: string | null): ProviderResult | undefined {
  if (!isRecord(raw) || typeof raw.title !== 'string') return undefined;
  const title = plainText(raw.title);
  if (title === '') return undefined;
  const url = pageUrl(base, raw.title.trim());
  const { text, highlights } = typeof raw.snippet === 'string'
    ? markedText(raw.snippet, SEARCHMATCH_OPEN, SEARCHMATCH_CLOSE)
    : { text: '', highlights: [] as [number, number][] };
  return {
    url,
    title: cutAtWord(title),
    snippet: text,
    ...(highlights.length > 0 ? { highlights } : {}),
    publishedAt: parseIsoDate(raw.timestamp),
    type: null,
    language,
    country: null,
    safe: null,
  };
}

// ---------------------------------------------------------------------------
// The provider

export function createWikipediaProvider(options: WikipediaProviderOptions): SearchProviderPlugin<'search-provider-wikipedia'> {
  const configured = options.baseUrl?.trim() === '' ? undefined : options.baseUrl;
  const perLanguage = hasLangSlot(configured, DEFAULT_BASE_URL);
  // Checked at boot: a bad base URL fails here, not on the first search.
  baseUrl(ID, configured, DEFAULT_BASE_URL, 'en');
  const template = (configured ?? DEFAULT_BASE_URL).trim().replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1').replace(/(?<!\/)\/+$/, '');
  const endpoint = `${template}/w/api.php`;
  const userAgent = options.contactEmail ? PROVIDER_USER_AGENT.replace(/\)$/, `; ${options.contactEmail})`) : PROVIDER_USER_AGENT;
  const applies = new Set<FilterName>(['result_type', 'site', 'excluded', ...(perLanguage ? ['language' as const] : [])]);

  return defineSearchProvider({
    name: 'search-provider-wikipedia',
    id: ID,
    description: 'Wikipedia (any MediaWiki with CirrusSearch): full-text search of encyclopedia articles, in the wiki of the request\'s language, through the MediaWiki Action API.',
    kinds: KINDS,
    endpoint,
    applies,
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      if (request.filters.resultType === 'news') return { results: [], total: 0, applied: new Set(ALL_FILTERS) };
      const requested = request.filters.language?.toLowerCase();
      const lang = perLanguage && requested !== undefined && /^[a-z]{2,3}$/.test(requested) ? requested : 'en';
      const base = baseUrl(ID, configured, DEFAULT_BASE_URL, lang);
      const applied = new Set<FilterName>(['result_type', 'site', 'excluded']);
      if (perLanguage && (requested === undefined || lang === requested)) applied.add('language');

      // Every result is on the wiki's own host: site: and -site: are decided here.
      const host = domainOf(`${base.url}/`);
      const { sites, excludedSites } = request.query;
      if ((sites.length > 0 && !sites.some((s) => onSite(host, s))) || excludedSites.some((s) => onSite(host, s))) {
        return { results: [], total: 0, applied };
      }
      const srsearch = buildSrsearch(request.query);
      if (srsearch === '') return { results: [], total: 0, applied };

      const language = perLanguage ? lang : null;
      const where = `${base.url}/w/api.php`;
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      let total: number | undefined;
      let offset = 0;
      const want = Math.max(1, Math.floor(request.limit));
      for (let n = 0; n < MAX_REQUESTS && results.length < want; n++) {
        if (request.signal.aborted) throw request.signal.reason;
        const size = Math.min(MAX_PAGE_SIZE, want - results.length);
        const params = new URLSearchParams({
          action: 'query', list: 'search', srsearch, srlimit: String(size), sroffset: String(offset),
          srprop: 'snippet|timestamp', srinfo: 'totalhits', format: 'json', formatversion: '2', utf8: '1',
        });
        const { json, headers } = await exchangeJson(options.egress, {
          provider: ID,
          url: `${where}?${params.toString()}`,
          headers: { 'user-agent': userAgent, ...(base.authorization === undefined ? {} : { authorization: base.authorization }) },
          timeoutMs: options.timeoutMs,
          signal: request.signal,
        });
        const page = readPage(json, headers, where);
        if (n === 0) total = page.total;
        for (const raw of page.hits) {
          const r = toProviderResult(raw, base.url, language);
          if (r === undefined || seen.has(r.url)) continue;
          seen.add(r.url);
          results.push(r);
        }
        if (page.nextOffset === undefined || page.hits.length < size) break;
        offset = page.nextOffset;
      }
      return { results: results.slice(0, want), total, applied };
    },
  });
}
