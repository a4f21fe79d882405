/**
 * The `crossref` search provider: the Crossref REST API's works search
 * (`GET {base}/works?query=&rows=&select=&filter=from-pub-date:YYYY-MM-DD&mailto=`),
 * keyless, reached through the Egress port only (the sdk's `exchangeJson`).
 * It returns scholarly works only: every result is of type `academic`, with
 * its DOI, authors, venue, an abstract when the publisher deposited one, and
 * a full-text link when one was deposited.
 *
 * What the wire looks like (read in Crossref's own documentation: the
 * CrossRef/rest-api-doc repository, README.md "Etiquette", "Rate limits",
 * "Parameters", "Filter names", "Notes on dates", "Result controls", and
 * api_format.md "Work", "Contributor", "Partial Date", "Resource Link"; the
 * access page of crossref.org "Access and authentication"; and clients'
 * records of live answers for the error bodies and `select`):
 * - the answer is `{"status":"ok","message-type":"work-list",
 *   "message-version":"1.0.0","message":{"facets":{},"total-results":N,
 *   "items":[...],"items-per-page":R,"query":{"start-index":0,"search-terms":q}}}`;
 * - a work has `DOI`, `URL` (its doi.org link), `title` and `subtitle`
 *   (arrays of strings, may hold inline HTML such as `<i>`), `author`
 *   (`{given, family}` or `{name}` for an organisation), `container-title`
 *   (array), `published` / `issued` / `published-online` / `published-print`
 *   (`{"date-parts": [[y, m?, d?]]}`, a part may be null), `abstract` (a JATS
 *   XML snippet in a string: `<jats:title>Abstract</jats:title><jats:p>...`),
 *   `link` (`[{URL, content-type, content-version, intended-application}]`,
 *   intended-application text-mining, similarity-checking or unspecified);
 * - `rows` is 0..1000 (default 20); `select` names the fields returned (an
 *   unknown one is a 400); dates in filters are `YYYY`, `YYYY-MM` or
 *   `YYYY-MM-DD`, and a work dated only to the year or month is taken as the
 *   first day of it;
 * - a bad parameter is HTTP 400 with `{"status":"failed","message-type":
 *   "validation-failure","message":[{"type","value","message"}]}` (`message`
 *   is an array here, an object in a good answer); a 404 and a 429 answer
 *   plain text;
 * - polite pool: the `mailto` parameter, or `mailto:` in the User-Agent (both
 *   are sent when SCOUR_CONTACT_EMAIL is set); Metadata Plus subscribers send
 *   `Crossref-Plus-API-Token: Bearer <key>` (SCOUR_PROVIDER_CROSSREF_KEY,
 *   optional; a refused token is a 401, PROVIDER_MISCONFIGURED);
 * - rate limits are advertised in `x-rate-limit-limit` and
 *   `x-rate-limit-interval` (e.g. `50` per `1s`); past them Crossref answers
 *   429. The pause is the 429's Retry-After when it has one, else the
 *   advertised interval (the window the limit counts over), else a minute.
 *
 * Filters (`applied` says which the provider satisfied; the search operation
 * post-filters the rest):
 * - time_range -> `filter=from-pub-date:<the UTC day of publishedAfter>`;
 *   Crossref's dates are days at best, so the provider also drops the works
 *   dated before `publishedAfter` (or without a date): applied, always;
 * - result_type news -> Crossref holds no news: `{results: [], total: 0}`
 *   with every filter applied, and no request; web: applied (nothing to do);
 * - site: every result is a doi.org link, so a query whose `site:` names
 *   only other domains, or that excludes doi.org, can match nothing: the same
 *   empty answer without a request; otherwise site is left to the operation;
 * - language, country, safe_search, -word: Crossref has no such filter (and
 *   `language` is not a selectable field): not applied;
 * - the query: `query` takes free text without operators, so the words of
 *   the query (`request.query.terms`) are sent.
 *
 * One request for `min(limit, 1000)` rows; `total` is `total-results`.
 */
import type { FilterName, ProviderRequest, ProviderResponse, ProviderResult } from '../../../core/search.js';
import {
  baseUrl, bareDoi, cutAtWord, dateFromParts, defineSearchProvider, endpointOf, errorText, exchange, excerpt, httpUrl, isRecord,
  plainText, PROVIDER_USER_AGENT, ProviderError, ProviderRateLimited, retryAfterMs, DEFAULT_RETRY_AFTER_MS,
  type ProviderOptions, type SearchProviderPlugin,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://api.crossref.org';
/** The most rows one request may ask for (README "Rows"). */
export const MAX_ROWS = 1000;
/** The fields asked for (`select`; all in the list Crossref accepts). */
export const SELECT = ['DOI', 'URL', 'title', 'subtitle', 'author', 'container-title', 'published', 'issued', 'published-online', 'published-print', 'abstract', 'link', 'type'] as const;

const ALL_FILTERS: ReadonlySet<FilterName> = new Set<FilterName>(['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded']);
/** Applied on every request (see the header). */
export const APPLIES: ReadonlySet<FilterName> = new Set<FilterName>(['time_range', 'result_type']);

export type CrossrefProviderOptions = ProviderOptions;

// ---------------------------------------------------------------------------
// Crossref fields -> ProviderResult

/** JATS (and MathML) elements that sit inside a word: dropped without a space. */
const JATS_INLINE = /<\/?(?:jats:)?(?:italic|bold|sub|sup|sc|monospace|underline|strike|overline|roman|sans-serif|inline-formula|named-content|styled-content|ext-link|xref|uri)\b[^<>]*>|<\/?mml:[a-z]+\b[^<>]*>/gi;
/** A leading title that only says "Abstract". */
const ABSTRACT_HEADING = /^\s*<(jats:)?title\b[^<>]*>\s*(abstract|summary)\s*(?:[:.]\s*)?<\/(jats:)?title>/i;

/** The plain text of a Crossref abstract (a JATS XML snippet, or text). */
export function abstractText(raw: string): string {
  return plainText(raw.replace(ABSTRACT_HEADING, '').replace(JATS_INLINE, ''));
}

const firstString = (v: unknown): string | undefined => {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) for (const x of v) if (typeof x === 'string' && x.trim() !== '') return x;
  return undefined;
};

/** Epoch ms of a Partial Date (`{"date-parts": [[y, m, d]]}`), or null. */
function partialDate(v: unknown): number | null {
  if (!isRecord(v)) return null;
  const parts = v['date-parts'];
  return Array.isArray(parts) ? dateFromParts(parts[0]) : null;
}

/** "Given Family", or the organisation's `name`. */
function authorName(v: unknown): string | undefined {
  if (!isRecord(v)) return undefined;
  const given = typeof v.given === 'string' ? plainText(v.given) : '';
  const family = typeof v.family === 'string' ? plainText(v.family) : '';
  const name = `${given} ${family}`.trim() || (typeof v.name === 'string' ? plainText(v.name) : '');
  return name === '' ? undefined : name.slice(0, 200);
}

/** A deposited full-text link: a PDF meant for text mining first, then any PDF, then any text-mining link. */
function fullText(v: unknown): string | undefined {
  if (!Array.isArray(v)) return undefined;
  let best: string | undefined;
  let rank = 0;
  for (const l of v) {
    if (!isRecord(l)) continue;
    const url = httpUrl(l.URL);
    if (url === undefined) continue;
    const pdf = typeof l['content-type'] === 'string' && l['content-type'].toLowerCase() === 'application/pdf';
    const app = typeof l['intended-application'] === 'string' ? l['intended-application'].toLowerCase() : '';
    const r = pdf && app === 'text-mining' ? 4 : pdf && app !== 'similarity-checking' ? 3 : app === 'text-mining' ? 2 : pdf ? 1 : 0;
    if (r > rank) { rank = r; best = url; }
  }
  return best;
}

/** The doi.org link of a DOI, its characters escaped where a URL needs it. */
const doiUrl = (doi: string): string => `https://doi.org/${doi.split('/').map(encodeURIComponent).join('/')}`;

/** One Crossref work as a ProviderResult; undefined when it has neither a usable URL nor a DOI. */
export function toProviderResult(raw: unknown): ProviderResult | undefined {
  if (!isRecord(raw)) return undefined;
  const doi = bareDoi(raw.DOI);
  const url = httpUrl(raw.URL) ?? (doi === undefined ? undefined : httpUrl(doiUrl(doi)));
  if (url === undefined) return undefined;
  const mainTitle = plainText(firstString(raw.title) ?? '');
  const subtitle = plainText(firstString(raw.subtitle) ?? '');
  const fullTitle = subtitle !== '' && mainTitle !== '' && !mainTitle.toLowerCase().includes(subtitle.toLowerCase()) ? `${mainTitle}: ${subtitle}` : mainTitle;
  const authors = Array.isArray(raw.author) ? raw.author.map(authorName).filter((a): a is string => a !== undefined).slice(0, 100) : [];
  const venueText = plainText(firstString(raw['container-title']) ?? '');
  const venue = venueText === '' ? null : cutAtWord(venueText);
  const publishedAt = partialDate(raw.published) ?? partialDate(raw.issued) ?? partialDate(raw['published-online']) ?? partialDate(raw['published-print']);
  const abstract = typeof raw.abstract === 'string' ? abstractText(raw.abstract) : '';
  const byline = [
    authors.length > 3 ? `${authors.slice(0, 3).join(', ')} et al.` : authors.join(', '),
    venue ?? '',
    publishedAt === null ? '' : String(new Date(publishedAt).getUTCFullYear()),
  ].filter((s) => s !== '').join(' \u00b7 ');
  return {
    url,
    title: cutAtWord(fullTitle !== '' ? fullTitle : venue ?? doi ?? url),
    snippet: cutAtWord(abstract !== '' ? abstract : byline),
    publishedAt,
    type: 'academic',
    language: null,
    country: null,
    safe: null,
    doi: doi ?? null,
    authors,
    venue,
    fullTextUrl: fullText(raw.link) ?? null,
    abstract: abstract === '' ? null : abstract,
  };
}

// ---------------------------------------------------------------------------
// The provider

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Milliseconds of `x-rate-limit-interval` (`1s`, `60s`, or bare seconds), or undefined. */
export function intervalMs(value: string | undefined): number | undefined {
  const m = value === undefined ? null : /^(\d+(?:\.\d+)?)(?:\s*s)?$/i.exec(value.trim());
  return m === null ? undefined : Math.round(Number(m[1]) * 1000);
}

/** The messages of a `validation-failure` body, or undefined when the body is not one. */
function validationMessages(json: unknown): string | undefined {
  if (!isRecord(json) || json.status !== 'failed') return undefined;
  const list = Array.isArray(json.message) ? json.message : [json.message];
  const said = list.map((m) => (isRecord(m) && typeof m.message === 'string' ? m.message : typeof m === 'string' ? m : '')).filter((m) => m !== '');
  return said.length === 0 ? String(json['message-type'] ?? 'failed') : said.join('; ').slice(0, 500);
}

/** Whether no result of this provider (all on doi.org) can pass the query's site: operators. */
function sitesExcludeDoiOrg(sites: readonly string[], excludedSites: readonly string[]): boolean {
  const covers = (s: string) => s === 'doi.org' || s === 'dx.doi.org';
  return (sites.length > 0 && !sites.some(covers)) || excludedSites.includes('doi.org');
}

export function createCrossrefProvider(options: CrossrefProviderOptions): SearchProviderPlugin<'search-provider-crossref'> {
  const base = baseUrl('crossref', options.baseUrl, DEFAULT_BASE_URL);
  const email = options.contactEmail?.trim() || undefined;
  const key = options.key?.trim() || undefined;
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(email === undefined ? {} : { 'user-agent': PROVIDER_USER_AGENT.replace(/\)$/, `; mailto:${email})`) }),
    ...(key === undefined ? {} : { 'crossref-plus-api-token': `Bearer ${key}` }),
    ...(base.authorization === undefined ? {} : { authorization: base.authorization }),
  };
  const endpoint = `${base.url}/works`;

  return defineSearchProvider({
    name: 'search-provider-crossref',
    id: 'crossref',
    description: 'Crossref (scholarly works registered with a DOI: articles, books, proceedings, preprints, datasets), through its REST API.',
    kinds: ['academic'],
    endpoint: base.url,
    applies: APPLIES,
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      const { query, filters } = request;
      if (filters.resultType === 'news' || request.limit < 1 || sitesExcludeDoiOrg(query.sites, query.excludedSites)) {
        return { results: [], total: 0, applied: ALL_FILTERS };
      }
      const params = new URLSearchParams();
      params.set('query', query.terms.join(' '));
      params.set('rows', String(Math.min(request.limit, MAX_ROWS)));
      params.set('select', SELECT.join(','));
      if (filters.publishedAfter !== undefined) params.set('filter', `from-pub-date:${utcDay(filters.publishedAfter)}`);
      if (email !== undefined) params.set('mailto', email);
      const url = `${endpoint}?${params.toString()}`;
      const r = await exchange(options.egress, {
        provider: 'crossref', url, headers, timeoutMs: options.timeoutMs, signal: request.signal, answerStatuses: [400, 429],
      });
      if (r.status === 429) {
        const after = retryAfterMs(r.headers['retry-after']) ?? intervalMs(r.headers['x-rate-limit-interval']);
        const limit = r.headers['x-rate-limit-limit'];
        const ms = Math.max(1000, after ?? DEFAULT_RETRY_AFTER_MS);
        throw new ProviderRateLimited(
          `HTTP 429 from Crossref${limit !== undefined ? ` (limit ${limit} per ${r.headers['x-rate-limit-interval'] ?? '?'})` : ''}${r.text.trim() === '' ? '' : `: ${excerpt(r.text)}`}`,
          ms,
        );
      }
      let body: unknown;
      try {
        body = JSON.parse(r.text);
      } catch {
        const said = r.text.trim() === '' ? 'empty body' : excerpt(r.text);
        throw new ProviderError('PROVIDER_FAILED', r.status === 400
          ? `crossref at ${endpointOf(url)} refused the request (HTTP 400): ${said}`
          : `crossref at ${endpointOf(url)} answered HTTP ${r.status} with invalid JSON (${r.headers['content-type'] ?? 'no content type'}: ${said})`, { status: r.status });
      }
      const failed = validationMessages(body);
      if (r.status === 400 || failed !== undefined) {
        throw new ProviderError('PROVIDER_FAILED', `crossref at ${endpointOf(url)} refused the request (HTTP ${r.status}): ${failed ?? errorText(r.text)}`, { status: r.status });
      }
      const message = isRecord(body) ? body.message : undefined;
      if (!isRecord(message) || !Array.isArray(message.items)) {
        throw new ProviderError('PROVIDER_FAILED', `crossref at ${endpointOf(url)} answered JSON without message.items: not a Crossref works list`, { status: r.status });
      }
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      for (const raw of message.items) {
        const res = toProviderResult(raw);
        if (res === undefined || seen.has(res.doi ?? res.url)) continue;
        // Crossref compares days; the request's bound may be within one.
        if (filters.publishedAfter !== undefined && (res.publishedAt === null || res.publishedAt < filters.publishedAfter)) continue;
        seen.add(res.doi ?? res.url);
        results.push(res);
        if (results.length >= request.limit) break;
      }
      const n = message['total-results'];
      return {
        results,
        total: typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.max(Math.floor(n), results.length) : undefined,
        applied: APPLIES,
      };
    },
  });
}
