/**
 * Search, as the core sees it: the documents of the local index and their
 * collections, the query language (parsed here, once, into a tree no
 * backend ever reads as syntax), the filters, the search-provider contract
 * every provider plugin implements, and the SearchIndex port the local
 * index's storage adapters implement. Pure: no I/O.
 */
import type { PluginBase } from './plugin.js';

// ---------------------------------------------------------------------------
// Documents and collections

export const DOCUMENT_TYPES = ['page', 'article', 'news', 'academic', 'report', 'financial', 'social'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** The operator's collection, seen by every account. Every other collection is one account's own, named by its account id. */
export const SHARED_COLLECTION = 'shared';

/** A document as it is put into the index (validated; `domain` is derived from `url`). */
export interface IndexDocument {
  /** Absolute http(s) URL; unique within a collection. */
  readonly url: string;
  readonly title: string;
  /** The whole text (snippets and research read it later). */
  readonly text: string;
  /** Epoch ms, or null when unknown. */
  readonly publishedAt: number | null;
  /** ISO 639-1, lower case; null: detect it from the text when indexing. */
  readonly language: string | null;
  /** ISO 3166-1 alpha-2, upper case, or null. */
  readonly country: string | null;
  readonly type: DocumentType;
  readonly author: string | null;
  readonly siteName: string | null;
  readonly doi: string | null;
  /** false: explicit content; true: known safe; null: unknown. */
  readonly safe: boolean | null;
}

/** A document as the index holds it. */
export interface StoredDocument extends IndexDocument {
  readonly collection: string;
  /** Host of the URL, lower case, without a leading `www.`. */
  readonly domain: string;
  /** The language after detection (null when it could not be told). */
  readonly language: string | null;
  /** Epoch ms of the last write. */
  readonly indexedAt: number;
}

// ---------------------------------------------------------------------------
// The query language

/** One searchable item: a word, or words that must appear together in this order. */
export type QueryItem =
  | { readonly kind: 'term'; readonly text: string }
  | { readonly kind: 'phrase'; readonly text: string };

/**
 * A parsed query. Plain terms are ranked (a result needs at least one of
 * them, and ranks higher the more and the rarer of them it holds); every
 * other part is a hard condition.
 */
export interface ParsedQuery {
  /** The query as given, trimmed. */
  readonly raw: string;
  /** Plain words (ranked, any of them). Include the words of phrases, so phrases rank too. */
  readonly terms: readonly string[];
  /**
   * Required groups: a result must satisfy every group, and a group is
   * satisfied by any one of its alternatives (`"a b" OR "c d"` is one group
   * of two). Quoted phrases and `intitle:` make groups.
   */
  readonly required: readonly (readonly RequiredItem[])[];
  /** Words or phrases a result must not contain (in its title or text). */
  readonly excluded: readonly QueryItem[];
  /** `site:` domains (a result on any of them, subdomains included), lower case. */
  readonly sites: readonly string[];
  /** `-site:` domains (subdomains included), lower case. */
  readonly excludedSites: readonly string[];
}

/** A required item: a phrase (or word) in the title or text, or, with `inTitle`, in the title. */
export interface RequiredItem {
  readonly item: QueryItem;
  readonly inTitle: boolean;
}

export type QueryParse = { readonly ok: true; readonly query: ParsedQuery } | { readonly ok: false; readonly message: string };

export const MAX_QUERY_LENGTH = 500;
/** Items (terms, phrases, operators) in one query: bounds the work a query can ask for. */
export const MAX_QUERY_ITEMS = 64;

/** A letter or digit in any script: what makes an item searchable. */
const WORDY = /[\p{L}\p{N}]/u;
const DOMAIN = /^(?=.{1,253}$)(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)*[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

/** Quotes people type: straight, curly and low-9. */
const QUOTES = /["\u201c\u201d\u201e\u201f\u00ab\u00bb]/;

interface Lexeme {
  readonly negated: boolean;
  /** `site`, `intitle`, or undefined. */
  readonly operator: 'site' | 'intitle' | undefined;
  readonly value: string;
  readonly quoted: boolean;
  /** The bare word OR. */
  readonly or: boolean;
  readonly at: number;
}

/** Normalise what a user typed: NFKC, no control or format characters, collapsed spaces. */
export function normaliseQuery(q: string): string {
  return q.normalize('NFKC').replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ').replace(/\s+/gu, ' ').trim();
}

function lex(q: string): { lexemes: Lexeme[] } | { error: string } {
  const out: Lexeme[] = [];
  let i = 0;
  while (i < q.length) {
    if (q[i] === ' ') { i++; continue; }
    const at = i;
    let negated = false;
    if (q[i] === '-') {
      negated = true;
      i++;
      if (i >= q.length || q[i] === ' ') {
        // Between two words ("CTLA - 4", "long - range") a dash standing alone is punctuation, dropped like "&";
        // at either end it excludes nothing and is a mistake worth saying.
        if (at === 0 || i >= q.length) return { error: `a lone "-" at position ${at + 1}: put it right before the word, phrase or site: to exclude` };
        continue;
      }
    }
    let operator: Lexeme['operator'];
    const rest = q.slice(i);
    const op = /^(site|intitle):/i.exec(rest);
    if (op) {
      operator = op[1]!.toLowerCase() as 'site' | 'intitle';
      i += op[0].length;
      if (i >= q.length || q[i] === ' ') return { error: `${operator}: at position ${at + 1} has nothing after it` };
    }
    if (QUOTES.test(q[i]!)) {
      const end = q.slice(i + 1).search(QUOTES);
      if (end < 0) return { error: `the quote at position ${i + 1} is never closed` };
      const value = q.slice(i + 1, i + 1 + end).trim();
      i += end + 2;
      if (!WORDY.test(value)) return { error: `the quoted phrase at position ${at + 1} has no word in it` };
      if (operator === 'site') return { error: 'site: takes a domain, not a quoted phrase' };
      out.push({ negated, operator, value, quoted: true, or: false, at });
      continue;
    }
    let end = i;
    while (end < q.length && q[end] !== ' ' && !QUOTES.test(q[end]!)) end++;
    const value = q.slice(i, end);
    i = end;
    out.push({ negated, operator, value, quoted: false, or: !negated && operator === undefined && (value === 'OR' || value === '|'), at });
  }
  return { lexemes: out };
}

/** A site: value as a bare lower-case host (a pasted URL is accepted: its host is taken). */
function siteHost(value: string): string | undefined {
  let v = value.trim().toLowerCase();
  const url = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]+)/.exec(v);
  if (url) v = url[1]!;
  // From the first slash of the last line on (what /\/.*$/ removes, in one pass).
  const slash = v.indexOf('/', v.lastIndexOf('\n') + 1);
  if (slash !== -1) v = v.slice(0, slash);
  v = v.replace(/:\d+$/, '').replace(/^\*\./, '').replace(/\.$/, '').replace(/^www\./, '');
  return DOMAIN.test(v) && v.includes('.') ? v : undefined;
}

/** Parse a query (spec 2.1: natural language, keywords and operators). Errors say what is wrong and where. */
export function parseQuery(input: string): QueryParse {
  const raw = normaliseQuery(input);
  if (raw === '') return { ok: false, message: 'must not be empty' };
  if (raw.length > MAX_QUERY_LENGTH) return { ok: false, message: `must be at most ${MAX_QUERY_LENGTH} characters` };
  const lexed = lex(raw);
  if ('error' in lexed) return { ok: false, message: lexed.error };
  const lexemes = lexed.lexemes;
  if (lexemes.length > MAX_QUERY_ITEMS) return { ok: false, message: `has ${lexemes.length} items; at most ${MAX_QUERY_ITEMS} are searched` };

  const terms: string[] = [];
  const required: RequiredItem[][] = [];
  const excluded: QueryItem[] = [];
  const sites: string[] = [];
  const excludedSites: string[] = [];
  /** Whether the previous lexeme was OR (and so the next required item joins the last group). */
  let pendingOr: Lexeme | undefined;
  let lastWasRequired = false;

  const pushTerms = (text: string) => {
    for (const w of text.split(' ')) if (WORDY.test(w)) terms.push(w);
  };

  for (const [n, l] of lexemes.entries()) {
    if (l.or) {
      if (n === 0 || n === lexemes.length - 1) return { ok: false, message: `OR at position ${l.at + 1} needs something on both sides` };
      if (pendingOr) return { ok: false, message: `OR at position ${l.at + 1} follows another OR` };
      pendingOr = l;
      continue;
    }
    const joinOr = pendingOr !== undefined;
    pendingOr = undefined;
    if (l.operator === 'site') {
      const host = siteHost(l.value);
      if (host === undefined) return { ok: false, message: `site:${l.value} is not a domain (write site:example.com)` };
      (l.negated ? excludedSites : sites).push(host);
      lastWasRequired = false;
      continue;
    }
    if (!WORDY.test(l.value)) {
      if (l.negated || l.operator === 'intitle') return { ok: false, message: `"${l.value}" at position ${l.at + 1} has no word in it` };
      // Punctuation on its own ("&", "...") is not searchable; it is dropped like a stop character.
      lastWasRequired = false;
      continue;
    }
    const item: QueryItem = l.quoted || /\s/.test(l.value) ? { kind: 'phrase', text: l.value } : { kind: 'term', text: l.value };
    if (l.negated) {
      excluded.push(item);
      lastWasRequired = false;
      continue;
    }
    pushTerms(l.value);
    if (l.quoted || l.operator === 'intitle') {
      const req: RequiredItem = { item, inTitle: l.operator === 'intitle' };
      if (joinOr && lastWasRequired) required[required.length - 1]!.push(req);
      else required.push([req]);
      lastWasRequired = true;
    } else {
      // Plain terms are already any-of: OR between them changes nothing.
      lastWasRequired = false;
    }
  }
  if (terms.length === 0) {
    return {
      ok: false,
      message: excluded.length > 0 || excludedSites.length > 0
        ? 'has only exclusions: add a word or phrase to search for'
        : sites.length > 0 ? 'has only site: filters: add a word or phrase to search for' : 'has no word to search for',
    };
  }
  return { ok: true, query: { raw, terms, required, excluded, sites: [...new Set(sites)], excludedSites: [...new Set(excludedSites)] } };
}

// ---------------------------------------------------------------------------
// Filters

export const TIME_RANGES = {
  hour: 3_600_000,
  day: 86_400_000,
  '24h': 86_400_000,
  past_day: 86_400_000,
  week: 7 * 86_400_000,
  past_week: 7 * 86_400_000,
  month: 31 * 86_400_000,
  past_month: 31 * 86_400_000,
  year: 366 * 86_400_000,
  past_year: 366 * 86_400_000,
} as const;
export type TimeRange = keyof typeof TIME_RANGES;
/** The canonical name of each range (what providers are asked for). */
export const CANONICAL_TIME_RANGE: Readonly<Record<TimeRange, 'hour' | 'day' | 'week' | 'month' | 'year'>> = {
  hour: 'hour', day: 'day', '24h': 'day', past_day: 'day', week: 'week', past_week: 'week',
  month: 'month', past_month: 'month', year: 'year', past_year: 'year',
};

export type SafeSearch = 'off' | 'moderate' | 'strict';
export type ResultType = 'web' | 'news';

/** The request's filters, resolved (time_range turned into a lower bound). */
export interface SearchFilters {
  readonly country: string | undefined;
  readonly language: string | undefined;
  /** Epoch ms: only documents published at or after this (documents without a date are left out). */
  readonly publishedAfter: number | undefined;
  /** The canonical time range, for providers that take one. */
  readonly timeRange: 'hour' | 'day' | 'week' | 'month' | 'year' | undefined;
  /** off: everything; moderate: no explicit documents; strict: only documents known to be safe. */
  readonly safeSearch: SafeSearch;
  /** news: news and articles with a date only, newest first among equally relevant ones. */
  readonly resultType: ResultType;
}

export type FilterName = 'country' | 'language' | 'time_range' | 'safe_search' | 'result_type' | 'site' | 'excluded';

// ---------------------------------------------------------------------------
// Search providers (plugins of kind 'search-provider')

export interface ProviderRequest {
  readonly query: ParsedQuery;
  /** Results wanted (the provider may return fewer, never needs to return more). */
  readonly limit: number;
  readonly filters: SearchFilters;
  /** The caller's account: the local index searches the shared collection and this account's own. */
  readonly accountId: string;
  /** Fires when the provider's time is up or the client went away. */
  readonly signal: AbortSignal;
  /** Epoch ms of the request, for date filters. */
  readonly now: number;
}

export interface ProviderResult {
  readonly url: string;
  readonly title: string;
  /** Plain text (no markup), about 160 to 300 characters. */
  readonly snippet: string;
  /** [start, end) UTF-16 offsets into `snippet` of the query's words, when the provider marks them. */
  readonly highlights?: readonly (readonly [number, number])[];
  /** Epoch ms, or null. */
  readonly publishedAt: number | null;
  /** The provider's own score (not comparable across providers). */
  readonly score?: number;
  readonly type?: DocumentType | null;
  readonly language?: string | null;
  readonly country?: string | null;
  /** false: explicit; true: safe; null/absent: unknown. */
  readonly safe?: boolean | null;
  /** A scholarly work's DOI (bare, `10.x/y`, lower case), when the provider knows it. */
  readonly doi?: string | null;
  /** Authors as the provider names them ("Ada Lovelace"), in order. */
  readonly authors?: readonly string[];
  /** Journal, conference, repository or site that published it. */
  readonly venue?: string | null;
  /** An open-access full text (PDF or HTML) research reads before falling back to `abstract`. */
  readonly fullTextUrl?: string | null;
  /**
   * The work's abstract, or the item's whole text, plain, when the provider
   * gives it: research reads it when neither the full text nor the page can
   * be read (a snippet is cut; this is not).
   */
  readonly abstract?: string | null;
}

export interface ProviderWarning {
  /** Machine-readable: PROVIDER_TIMEOUT, PROVIDER_FAILED, PROVIDER_MISCONFIGURED, ENGINES_UNRESPONSIVE, ... */
  readonly code: string;
  readonly message: string;
}

export interface ProviderResponse {
  /** Best first. */
  readonly results: readonly ProviderResult[];
  /** Every match the provider knows of (may exceed results.length); undefined when it does not say. */
  readonly total: number | undefined;
  /** Filters and operators the provider applied itself; the search operation applies the others to its results. */
  readonly applied: ReadonlySet<FilterName>;
  /** Something the caller should know (an engine that did not answer), without the provider having failed. */
  readonly warnings?: readonly ProviderWarning[];
}

/** The kinds of source a provider returns (research asks only providers that can return the kinds it wants). */
export type ProviderKind = 'web' | 'academic' | 'news' | 'social' | 'reference';

/**
 * Rejected by a provider whose service asked us to slow down (HTTP 429,
 * `Retry-After`, Stack Exchange's `backoff`): the search pauses the provider
 * for `retryAfterMs` (every process, in shared mode) and says so in a warning.
 */
export class ProviderRateLimited extends Error {
  override readonly name = 'ProviderRateLimited';
  readonly code = 'PROVIDER_RATE_LIMITED';
  /** How long the service asked us to wait, in ms. */
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Which providers are paused, and until when: this process's view, kept
 * current from a shared store in shared mode (adapters/search/pauses.ts).
 */
export interface ProviderPauses {
  /** Epoch ms until which `id` is paused, or undefined when it may be asked. */
  pausedUntil(id: string, now: number): number | undefined;
  /** Pause `id` until `until` (epoch ms), here and in every process sharing the store. */
  pause(id: string, until: number): void;
}

/** A search provider: asked by the search operation, together with every other enabled one. */
export interface SearchProviderPlugin<N extends string = string> extends PluginBase<N, 'search-provider'> {
  /** What `SCOUR_SEARCH_PROVIDERS` and a result's `source` call it: lower-case letters, digits, hyphens. */
  readonly id: string;
  /** The kinds of source it returns; undefined: any (a general web index). Research's `sources` picks providers by it. */
  readonly kinds?: readonly ProviderKind[];
  /** Where its queries go (a base URL without credentials), for `scour doctor` and the docs; undefined: nowhere (the local index). */
  readonly endpoint?: string;
  /**
   * Filters and operators it applies itself on every request, declared up
   * front. A request using a filter not declared here asks this provider for
   * more results (twice max_results, at most 100), so that enough survive the
   * operation's own filtering. Default: none.
   */
  readonly applies?: ReadonlySet<FilterName>;
  /** Results for one request. Throw (or reject) to fail: the search goes on with the other providers and reports a warning. */
  search(request: ProviderRequest): Promise<ProviderResponse>;
}

// ---------------------------------------------------------------------------
// The local index (the SearchIndex port, implemented on SQLite and PostgreSQL)

export interface IndexQuery {
  readonly query: ParsedQuery;
  /** Collections searched: the shared one and the caller's own. */
  readonly collections: readonly string[];
  readonly filters: SearchFilters;
  readonly limit: number;
  readonly now: number;
}

export interface IndexHit {
  readonly document: StoredDocument;
  readonly score: number;
  /** The best-matching passage, plain text, cut at word boundaries. */
  readonly snippet: string;
  readonly highlights: readonly (readonly [number, number])[];
}

export interface IndexSearchResult {
  readonly hits: readonly IndexHit[];
  /** Every document that matched (may exceed hits.length). */
  readonly total: number;
}

export interface UpsertResult {
  /** Documents new to their collection. */
  readonly indexed: number;
  /** Documents that replaced one with the same URL. */
  readonly updated: number;
}

export interface CollectionStats {
  readonly collection: string;
  readonly documents: number;
  /** Epoch ms of the last write, or null. */
  readonly lastUpdated: number | null;
}

export interface IndexStats {
  readonly collections: readonly CollectionStats[];
  /** Bytes the index takes on disk (its tables and indexes), when the backend can tell. */
  readonly bytes: number | null;
}

/**
 * The local search index: documents in collections, searched with one
 * ranking (the same code on every backend). A write is atomic per call on
 * PostgreSQL; on SQLite a large call commits as consecutive atomic batches
 * (each about 20 ms of work), so the account store sharing the file is
 * never held up behind an import.
 */
export interface SearchIndex {
  upsert(collection: string, documents: readonly IndexDocument[], now: number): Promise<UpsertResult>;
  /** Remove documents by URL; returns how many were there. */
  remove(collection: string, urls: readonly string[], now: number): Promise<number>;
  search(query: IndexQuery): Promise<IndexSearchResult>;
  /** Stored documents by URL, within the given collections (research reads their whole text). */
  get(collections: readonly string[], urls: readonly string[]): Promise<readonly StoredDocument[]>;
  stats(): Promise<IndexStats>;
}

/** Collections an account's search sees. */
export function visibleCollections(accountId: string): readonly string[] {
  return [SHARED_COLLECTION, accountId];
}

/** Host of a URL as results show it: lower case, no `www.`. */
export function domainOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return '';
  }
}

/** Whether `domain` is `site` or one of its subdomains. */
export function onSite(domain: string, site: string): boolean {
  return domain === site || domain.endsWith(`.${site}`);
}
