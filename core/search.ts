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

export type QueryParse =
  | {
    readonly ok: true;
    readonly query: ParsedQuery;
    /** Present when part of the query was read as text rather than syntax: what, and the query as searched (the QUERY_REINTERPRETED warning). */
    readonly reading?: string;
  }
  | { readonly ok: false; readonly message: string };

export const MAX_QUERY_LENGTH = 500;
/** Phrases, exclusions and operators applied in one query (bounds the work a query can ask for; plain words are bounded by the length). */
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
  /** The operator as typed (`Site`), for reading it back as a word. */
  readonly operatorText: string;
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

/**
 * Splits a query into lexemes. Never fails: natural text copied from a
 * document (an unclosed quote, a dash standing alone, "site:" ending a
 * clause) is read as text, and each such reading is noted for the answer's
 * warning.
 */
function lex(q: string, notes: string[]): Lexeme[] {
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
        // A dash standing alone ("CTLA - 4", "long - range", a dash ending a line) is punctuation, dropped like "&".
        if (at === 0 || i >= q.length) notes.push(`the lone "-" at position ${at + 1} is punctuation (put it right before a word to exclude the word)`);
        continue;
      }
      if (q[i]! >= '0' && q[i]! <= '9') {
        // "a change of -31% (95% CI, -40% to -20%)": a minus sign, not an exclusion (-"2019" still excludes).
        negated = false;
        let end = i;
        while (end < q.length && q[end] !== ' ' && !QUOTES.test(q[end]!)) end++;
        notes.push(`"${q.slice(at, end)}" at position ${at + 1} is a negative number: read as a word, not an exclusion`);
      }
    }
    let operator: Lexeme['operator'];
    let operatorText = '';
    const rest = q.slice(i);
    const op = /^(site|intitle):/i.exec(rest);
    if (op) {
      operatorText = op[1]!;
      i += op[0].length;
      if (i >= q.length || q[i] === ' ') {
        // "Construction site: the crew..." - an operator with nothing after it is the word it spells.
        notes.push(`"${op[0]}" at position ${at + 1} has nothing after it: read as the word "${operatorText}"`);
        out.push({ negated, operator: undefined, operatorText: '', value: operatorText, quoted: false, or: false, at });
        continue;
      }
      operator = op[1]!.toLowerCase() as 'site' | 'intitle';
    }
    if (QUOTES.test(q[i]!)) {
      const open = i;
      const end = q.slice(i + 1).search(QUOTES);
      let value: string;
      if (end < 0) {
        value = q.slice(i + 1).trim();
        i = q.length;
        if (WORDY.test(value)) notes.push(`the quote at position ${open + 1} is never closed: read as a phrase to the end of the query`);
      } else {
        value = q.slice(i + 1, i + 1 + end).trim();
        i += end + 2;
      }
      if (operator === 'site') {
        notes.push(`site: at position ${at + 1} takes a domain, not a quoted phrase: read as the word "${operatorText}" and the phrase`);
        out.push({ negated: false, operator: undefined, operatorText: '', value: operatorText, quoted: false, or: false, at });
        operator = undefined;
      }
      if (!WORDY.test(value)) {
        notes.push(`the quote at position ${open + 1} ${end < 0 ? 'is never closed and' : 'and its closing quote'} hold${end < 0 ? 's' : ''} no word: left out`);
        if (operator !== undefined) out.push({ negated: false, operator: undefined, operatorText: '', value: operatorText, quoted: false, or: false, at });
        continue;
      }
      out.push({ negated, operator, operatorText, value, quoted: true, or: false, at });
      continue;
    }
    let end = i;
    while (end < q.length && q[end] !== ' ' && !QUOTES.test(q[end]!)) end++;
    const value = q.slice(i, end);
    i = end;
    out.push({ negated, operator, operatorText, value, quoted: false, or: !negated && operator === undefined && (value === 'OR' || value === '|'), at });
  }
  return out;
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

/**
 * Parse a query (spec 2.1: natural language, keywords and operators).
 * Natural text is never refused: what cannot be read as an operator is read
 * as text (an unclosed quote is a phrase to the end of the query, a lone
 * dash is punctuation, an operator with nothing after it or that cannot
 * apply is the word it spells, a query of exclusions only is searched for
 * their words), and `reading` then says how the query was read. Refused
 * only when the request is wrong: nothing but spaces, over
 * MAX_QUERY_LENGTH characters, or not a letter or digit in it.
 */
export function parseQuery(input: string): QueryParse {
  const raw = normaliseQuery(input);
  if (raw === '') return { ok: false, message: 'must not be empty' };
  if (raw.length > MAX_QUERY_LENGTH) return { ok: false, message: `must be at most ${MAX_QUERY_LENGTH} characters` };
  if (!WORDY.test(raw)) return { ok: false, message: 'has no word to search for (no letter or digit)' };
  const notes: string[] = [];
  const lexemes = lex(raw, notes);

  const terms: string[] = [];
  /** The query as searched, in order and in the query language, for saying how it was read. */
  const shown: string[] = [];
  const quote = (i: QueryItem) => (i.kind === 'phrase' ? `"${i.text}"` : i.text);
  const required: RequiredItem[][] = [];
  const excluded: QueryItem[] = [];
  const sites: string[] = [];
  const excludedSites: string[] = [];
  /** Whether the previous lexeme was OR (and so the next required item joins the last group). */
  let pendingOr: Lexeme | undefined;
  let lastWasRequired = false;
  let operators = 0;
  let overflow = 0;

  const pushTerms = (text: string, isPlain: boolean) => {
    for (const w of text.split(' ')) {
      if (!WORDY.test(w)) continue;
      terms.push(w);
      if (isPlain) shown.push(w);
    }
  };
  /** A lexeme read as plain words: its operator spelled out, no dash, no quotes. */
  const asWords = (l: Lexeme) => {
    pushTerms(l.operator === undefined ? l.value : `${l.operatorText} ${l.value}`, true);
    lastWasRequired = false;
  };

  for (const [n, l] of lexemes.entries()) {
    if (l.or) {
      if (n === 0 || n === lexemes.length - 1) {
        // "Portland, OR" ends with a word, not an operator.
        notes.push(`${l.value} at position ${l.at + 1} has nothing on one side: read as a word`);
        pendingOr = undefined;
        asWords(l);
        continue;
      }
      if (pendingOr) {
        notes.push(`${l.value} at position ${l.at + 1} follows another OR: the two read as one`);
        continue;
      }
      pendingOr = l;
      continue;
    }
    const joinOr = pendingOr !== undefined;
    pendingOr = undefined;
    const isOperator = l.negated || l.quoted || l.operator !== undefined;
    if (isOperator && operators >= MAX_QUERY_ITEMS) {
      // Bounds the work a query can ask for: past the bound, operators are read as plain words.
      overflow++;
      asWords(l);
      continue;
    }
    if (isOperator) operators++;
    if (l.operator === 'site') {
      const host = siteHost(l.value);
      if (host === undefined) {
        notes.push(`site:${l.value} at position ${l.at + 1} is not a domain: read as words`);
        asWords(l);
        continue;
      }
      (l.negated ? excludedSites : sites).push(host);
      shown.push(`${l.negated ? '-' : ''}site:${host}`);
      lastWasRequired = false;
      continue;
    }
    if (!WORDY.test(l.value)) {
      if (l.operator === 'intitle') {
        notes.push(`intitle:${l.value} at position ${l.at + 1} has no word in it: read as the word "${l.operatorText}"`);
        pushTerms(l.operatorText, true);
      } else if (l.negated) {
        notes.push(`"-${l.value}" at position ${l.at + 1} has no word in it: left out`);
      }
      // Punctuation on its own ("&", "...") is not searchable; it is dropped like a stop character.
      lastWasRequired = false;
      continue;
    }
    const item: QueryItem = l.quoted || /\s/.test(l.value) ? { kind: 'phrase', text: l.value } : { kind: 'term', text: l.value };
    if (l.negated) {
      excluded.push(item);
      shown.push(`-${quote(item)}`);
      lastWasRequired = false;
      continue;
    }
    pushTerms(l.value, !(l.quoted || l.operator === 'intitle'));
    if (l.quoted || l.operator === 'intitle') {
      const req: RequiredItem = { item, inTitle: l.operator === 'intitle' };
      const text = `${req.inTitle ? 'intitle:' : ''}${quote(item)}`;
      if (joinOr && lastWasRequired) {
        required[required.length - 1]!.push(req);
        shown[shown.length - 1] += ` OR ${text}`;
      } else {
        required.push([req]);
        shown.push(text);
      }
      lastWasRequired = true;
    } else {
      // Plain terms are already any-of: OR between them changes nothing.
      lastWasRequired = false;
    }
  }
  if (overflow > 0) notes.push(`only ${MAX_QUERY_ITEMS} phrases, exclusions and operators are applied: the ${overflow} after them are read as plain words`);
  if (terms.length === 0) {
    // Only exclusions and site: filters ("-5 degrees", a pasted "site:x.org"): nothing to rank by, so their words are searched.
    notes.push(excluded.length > 0 || excludedSites.length > 0
      ? 'has only exclusions: their words are searched instead'
      : 'has only site: filters: their words are searched instead');
    excluded.length = 0;
    sites.length = 0;
    excludedSites.length = 0;
    shown.length = 0;
    for (const l of lexemes) pushTerms(l.operator === 'site' ? l.value.replace(/[./:]/g, ' ') : l.value, true);
    if (terms.length === 0) return { ok: false, message: 'has no word to search for' };
  }
  const query: ParsedQuery = { raw, terms, required, excluded, sites: [...new Set(sites)], excludedSites: [...new Set(excludedSites)] };
  return notes.length === 0 ? { ok: true, query } : { ok: true, query, reading: readingOf(notes, shown) };
}

/** The QUERY_REINTERPRETED warning's message: what was read differently, and the query as searched, in the query language. */
function readingOf(notes: readonly string[], shown: readonly string[]): string {
  const read = shown.join(' ');
  const head = `${notes.join('; ')}. Searched as: `;
  const max = 1000;
  return head.length + read.length <= max ? head + read : `${head}${read}`.slice(0, max - 1) + '\u2026';
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
