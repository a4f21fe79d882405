/**
 * The `openalex` search provider: OpenAlex's catalogue of scholarly works,
 * `GET {base}/works?search=...&filter=...&per-page=&page=`, reached through
 * the Egress port only. Keyless; an API key raises the daily budget.
 *
 * What the wire looks like (read from OpenAlex's documentation,
 * docs.openalex.org and developers.openalex.org: Search entities / Searching,
 * Filter works, Paging, the Work and Location objects, Authentication &
 * Pricing, Error Handling; and from its API's source, ourresearch/
 * openalex-elastic-api: core/exceptions.py, core/search.py and the
 * pagination tests):
 * - parameters: `search` (title, abstract and full text; stemmed; AND, OR,
 *   NOT in upper case, parentheses and "double-quoted phrases"; `*` and `?`
 *   are wildcards that the default, stemmed search REFUSES, so they never
 *   reach it), `filter` (comma-separated `name:value`, ANDed), `per-page`
 *   1..200 (`per_page` is the same), `page` from 1, `api_key` (the key:
 *   "Add api_key=YOUR_KEY to your API calls"; free, required for real use
 *   since February 2026), `mailto` (the contact address of the polite pool,
 *   older documentation; still accepted);
 * - the answer is `{"meta": {"count", "db_response_time_ms", "page",
 *   "per_page", "groups_count"}, "results": [Work, ...], "group_by": []}`;
 *   a Work has `id` ("https://openalex.org/W..."), `doi`
 *   ("https://doi.org/10..." or null), `title` / `display_name`,
 *   `publication_date` ("YYYY-MM-DD"), `publication_year`, `language`
 *   (ISO 639-1 or null), `type`, `authorships` ([{`author`: {`display_name`},
 *   ...}] in order), `primary_location` and `best_oa_location` ({`is_oa`,
 *   `landing_page_url`, `pdf_url`, `source`: {`display_name`, ...} or null}),
 *   `open_access` ({`is_oa`, `oa_status`, `oa_url`}),
 *   `abstract_inverted_index` ({word: [positions]} or null: OpenAlex may not
 *   ship abstracts as text, so the abstract is rebuilt by position) and, on
 *   searches, `relevance_score`. We ask for those fields only (`select`): a
 *   page of whole works is megabytes;
 * - errors: `{"error": "Invalid query parameters error.", "message": "..."}`
 *   with HTTP 400 (older deployments: 403) for a refused parameter, also
 *   seen with HTTP 200 (a wildcard in `search`); `Pagination error.` for a
 *   bad page size; the error page documents 403 as "Rate limit exceeded;
 *   slow down" and 429 as "Daily limit exceeded". So: 429 is the toolkit's
 *   ProviderRateLimited (Retry-After, else a minute); a 403 whose body says
 *   it is a rate limit is ProviderRateLimited; a 403 that names a refused
 *   parameter, and any body with `error` (whatever its status), is
 *   PROVIDER_FAILED; any other 403, and 401, are PROVIDER_MISCONFIGURED (a
 *   refused key).
 *
 * The query (OpenAlex's boolean syntax; words not joined by an operator are
 * ANDed): plain words as they are (anything that is not a letter or digit
 * splits a word, so no `*`, `?`, `:` or parenthesis reaches the parser; a
 * term that splits into several words becomes a phrase; AND, OR and NOT are
 * lower-cased so they stay words); "phrases" and intitle: items as quoted
 * phrases; a group of alternatives as `(a OR b)`; exclusions as
 * `NOT word` / `NOT "phrase"`.
 *
 * Filters (`applied` says which OpenAlex applied; the search operation
 * post-filters the rest):
 * - language -> `language:xx` (ISO 639-1, what Work.language holds):
 *   language applied;
 * - time_range -> `from_publication_date:YYYY-MM-DD`, the UTC day of
 *   `publishedAfter`: applied (a work dated that whole day passes, as dates
 *   are days);
 * - excluded -> `NOT ...` in the search, which drops works holding the word
 *   in title, abstract or full text: applied;
 * - result_type news: OpenAlex catalogues scholarly works, no news:
 *   answered `{ results: [], total: 0, applied: every filter }` without a
 *   request; web asks nothing: result_type applied;
 * - country (OpenAlex knows authors' institutions, not where a work is
 *   from), site (results are landing pages on publishers' hosts),
 *   safe_search: NOT applied. `type` and `to_publication_date` are not sent:
 *   no Scour filter maps to them.
 * `applies` declares language, time_range, excluded and result_type: they
 * are applied on every request that uses them.
 *
 * Results: the landing page (`primary_location.landing_page_url`, else the
 * DOI's URL, else the OpenAlex id) is `url`; the open-access copy
 * (`best_oa_location.pdf_url`, else `open_access.oa_url`, else
 * `best_oa_location.landing_page_url`) is `fullTextUrl`; the rebuilt abstract
 * is `abstract` and, cut, the snippet; `type` academic.
 *
 * Paging: `per-page` is `request.limit` (at most 200); a second `page` only
 * when more than 200 were asked for.
 */
import type { FilterName, ProviderKind, ProviderRequest, ProviderResponse, ProviderResult } from '../../../core/search.js';
import {
  ProviderError, ProviderRateLimited, DEFAULT_RETRY_AFTER_MS, baseUrl, bareDoi, cutAtWord, defineSearchProvider, endpointOf, exchange,
  excerpt, httpUrl, isRecord, parseIsoDate, plainText, retryAfterMs, type ProviderOptions, type SearchProviderPlugin,
  wordOrPhrase, plainTerms,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://api.openalex.org';
/** per-page's maximum. */
export const MAX_PAGE_SIZE = 200;
export const MAX_REQUESTS = 2;
/** The Work fields read (`select`): only root fields may be selected. */
export const SELECT = [
  'id', 'doi', 'title', 'display_name', 'publication_date', 'publication_year', 'language', 'type', 'authorships',
  'primary_location', 'best_oa_location', 'open_access', 'abstract_inverted_index', 'relevance_score',
].join(',');
/** Words of an abstract rebuilt at most (an inverted index can claim absurd positions). */
export const MAX_ABSTRACT_WORDS = 5_000;

const ID = 'openalex';
/** The largest epoch ms a Date holds. */
const MAX_DATE_MS = 8.64e15;
const ALL_FILTERS: readonly FilterName[] = ['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded'];
const KINDS: readonly ProviderKind[] = ['academic'];
const APPLIES: ReadonlySet<FilterName> = new Set(['language', 'time_range', 'excluded', 'result_type']);

export type OpenalexProviderOptions = ProviderOptions;

// ---------------------------------------------------------------------------
// The query




/** `search` for a parsed query (see the header). */
export function buildSearch(query: ProviderRequest['query']): string {
  const parts: string[] = [];
  for (const t of plainTerms(query)) {
    const s = wordOrPhrase(t);
    if (s !== undefined) parts.push(s);
  }
  for (const group of query.required) {
    const alts = group.map(({ item: it }) => wordOrPhrase(it.text)).filter((s): s is string => s !== undefined);
    if (alts.length === 1) parts.push(alts[0]!);
    else if (alts.length > 1) parts.push(`(${alts.join(' OR ')})`);
  }
  const positive = parts.join(' ');
  const negative = query.excluded.map((x) => wordOrPhrase(x.text)).filter((s): s is string => s !== undefined);
  if (positive === '') return '';
  return negative.length === 0 ? positive : `${positive} ${negative.map((n) => `NOT ${n}`).join(' ')}`;
}

/** The UTC day of an epoch ms, YYYY-MM-DD. */
function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `filter` for the request's filters, and what it applies. */
export function planFilters(request: ProviderRequest): { filter: string; applied: Set<FilterName> } {
  const applied = new Set<FilterName>(['result_type']);
  const parts: string[] = [];
  const lang = request.filters.language?.toLowerCase();
  if (lang !== undefined && /^[a-z]{2}$/.test(lang)) {
    parts.push(`language:${lang}`);
    applied.add('language');
  }
  const after = request.filters.publishedAfter;
  if (after !== undefined && Number.isFinite(after) && Math.abs(after) <= MAX_DATE_MS) {
    parts.push(`from_publication_date:${day(after)}`);
    applied.add('time_range');
  }
  if (request.query.excluded.length > 0) applied.add('excluded');
  return { filter: parts.join(','), applied };
}

// ---------------------------------------------------------------------------
// Works -> ProviderResult

/** The abstract from `abstract_inverted_index` ({word: [positions]}): words put back in position order. */
export function rebuildAbstract(index: unknown): string | null {
  if (!isRecord(index)) return null;
  const at: [number, string][] = [];
  for (const [word, positions] of Object.entries(index)) {
    if (!Array.isArray(positions)) continue;
    for (const p of positions) {
      if (typeof p === 'number' && Number.isInteger(p) && p >= 0 && p < MAX_ABSTRACT_WORDS) at.push([p, word]);
    }
    if (at.length > MAX_ABSTRACT_WORDS * 2) break;
  }
  if (at.length === 0) return null;
  at.sort((a, b) => a[0] - b[0]);
  const text = plainText(at.map(([, w]) => w).join(' '));
  return text === '' ? null : text;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** One Work as a ProviderResult; undefined when it has no usable link. */
export function toProviderResult(raw: unknown): ProviderResult | undefined {
  if (!isRecord(raw)) return undefined;
  const primary = isRecord(raw.primary_location) ? raw.primary_location : {};
  const best = isRecord(raw.best_oa_location) ? raw.best_oa_location : {};
  const oa = isRecord(raw.open_access) ? raw.open_access : {};
  const doi = bareDoi(raw.doi);
  const url = httpUrl(primary.landing_page_url) ?? (doi === undefined ? undefined : httpUrl(`https://doi.org/${doi}`)) ?? httpUrl(raw.id);
  if (url === undefined) return undefined;
  const title = plainText(str(raw.title) ?? str(raw.display_name) ?? '');
  const abstract = rebuildAbstract(raw.abstract_inverted_index);
  const authors: string[] = [];
  if (Array.isArray(raw.authorships)) {
    for (const a of raw.authorships) {
      const name = isRecord(a) && isRecord(a.author) ? str(a.author.display_name) : undefined;
      if (name !== undefined) authors.push(cutAtWord(plainText(name), 200));
    }
  }
  const source = isRecord(primary.source) ? str(primary.source.display_name) : undefined;
  const fullTextUrl = httpUrl(best.pdf_url) ?? httpUrl(oa.oa_url) ?? httpUrl(best.landing_page_url) ?? null;
  const date = parseIsoDate(raw.publication_date);
  const year = raw.publication_year;
  const publishedAt = date ?? (typeof year === 'number' && Number.isInteger(year) && year >= 1000 && year <= 9999 ? Date.UTC(year, 0, 1) : null);
  const language = typeof raw.language === 'string' && /^[a-z]{2}$/.test(raw.language) ? raw.language : null;
  const score = typeof raw.relevance_score === 'number' && Number.isFinite(raw.relevance_score) ? raw.relevance_score : undefined;
  return {
    url,
    title: title !== '' ? cutAtWord(title) : doi ?? url,
    snippet: abstract === null ? '' : cutAtWord(abstract),
    publishedAt,
    ...(score === undefined ? {} : { score }),
    type: 'academic',
    language,
    country: null,
    safe: null,
    doi: doi ?? null,
    authors,
    venue: source === undefined ? null : cutAtWord(plainText(source), 300),
    fullTextUrl,
    abstract,
  };
}

// ---------------------------------------------------------------------------
// The provider

/** OpenAlex's error body (`{"error", "message"}`), when the answer is one. */
function errorBody(json: unknown): { error: string; message: string } | undefined {
  if (!isRecord(json) || json.error === undefined || json.error === null) return undefined;
  const error = typeof json.error === 'string' ? json.error : JSON.stringify(json.error);
  const message = typeof json.message === 'string' ? json.message : '';
  return { error: plainText(error).slice(0, 200), message: plainText(message).slice(0, 300) };
}

export function createOpenalexProvider(options: OpenalexProviderOptions): SearchProviderPlugin<'search-provider-openalex'> {
  const configured = options.baseUrl?.trim() === '' ? undefined : options.baseUrl;
  const base = baseUrl(ID, configured, DEFAULT_BASE_URL);
  const where = `${base.url}/works`;
  const key = options.key?.trim() || undefined;
  const mailto = options.contactEmail?.trim() || undefined;

  async function page(request: ProviderRequest, search: string, filter: string, perPage: number, pageNo: number) {
    const params = new URLSearchParams({ search });
    if (filter !== '') params.set('filter', filter);
    params.set('select', SELECT);
    params.set('per-page', String(perPage));
    params.set('page', String(pageNo));
    if (mailto !== undefined) params.set('mailto', mailto);
    if (key !== undefined) params.set('api_key', key);
    const res = await exchange(options.egress, {
      provider: ID,
      url: `${where}?${params.toString()}`,
      headers: { accept: 'application/json', ...(base.authorization === undefined ? {} : { authorization: base.authorization }) },
      timeoutMs: options.timeoutMs,
      signal: request.signal,
      answerStatuses: [400, 403],
    });
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      if (res.status === 403) {
        throw new ProviderError('PROVIDER_MISCONFIGURED', `${ID} at ${endpointOf(where)} refused Scour (HTTP 403${res.text.trim() ? `: ${excerpt(res.text)}` : ''}): check SCOUR_PROVIDER_OPENALEX_KEY`, { status: 403 });
      }
      const type = res.headers['content-type'] ?? 'no content type';
      throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered HTTP ${res.status} with invalid JSON (${type}${res.text.trim() === '' ? ', empty body' : `: ${excerpt(res.text)}`})`, { status: res.status });
    }
    const err = errorBody(json);
    if (res.status === 403) {
      const said = err === undefined ? excerpt(res.text) : `${err.error}${err.message ? ` ${err.message}` : ''}`;
      if (/rate.?limit|too many|slow down/i.test(said)) {
        const ms = retryAfterMs(res.headers['retry-after']) ?? DEFAULT_RETRY_AFTER_MS;
        throw new ProviderRateLimited(`HTTP 403 (${said})`, Math.max(1000, ms));
      }
      if (err !== undefined && /invalid|pagination|param|filter/i.test(err.error)) {
        throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} refused the request (HTTP 403: ${said})`, { status: 403 });
      }
      throw new ProviderError('PROVIDER_MISCONFIGURED', `${ID} at ${where} refused Scour (HTTP 403: ${said}): check SCOUR_PROVIDER_OPENALEX_KEY`, { status: 403 });
    }
    if (err !== undefined) {
      throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered an error (HTTP ${res.status}: ${err.error}${err.message ? ` ${err.message}` : ''})`, { status: res.status });
    }
    if (res.status !== 200 && !(res.status >= 200 && res.status <= 299)) {
      throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered HTTP ${res.status}: ${excerpt(res.text)}`, { status: res.status });
    }
    if (!isRecord(json) || !Array.isArray(json.results)) {
      throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered without "results" (is the URL OpenAlex's API?)`, { status: res.status });
    }
    const count = isRecord(json.meta) ? json.meta.count : undefined;
    return { results: json.results, count: typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : undefined };
  }

  return defineSearchProvider({
    name: 'search-provider-openalex',
    id: ID,
    description: 'OpenAlex: the open catalogue of scholarly works (articles, preprints, books, theses), with abstracts, authors, venues, DOIs and open-access copies.',
    kinds: KINDS,
    endpoint: where,
    applies: APPLIES,
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      if (request.filters.resultType === 'news') return { results: [], total: 0, applied: new Set(ALL_FILTERS) };
      const { filter, applied } = planFilters(request);
      const search = buildSearch(request.query);
      if (search === '') return { results: [], total: 0, applied };
      const want = Math.max(1, Math.floor(request.limit));
      const perPage = Math.min(MAX_PAGE_SIZE, want);
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      let total: number | undefined;
      for (let n = 1; n <= MAX_REQUESTS && results.length < want; n++) {
        if (request.signal.aborted) throw request.signal.reason;
        const p = await page(request, search, filter, perPage, n);
        if (n === 1) total = p.count;
        for (const raw of p.results) {
          const r = toProviderResult(raw);
          if (r === undefined || seen.has(r.url)) continue;
          seen.add(r.url);
          results.push(r);
        }
        if (p.results.length < perPage) break;
      }
      return { results: results.slice(0, want), total, applied };
    },
  });
}
