/**
 * The `hackernews` search provider: the HN Search API that Algolia runs for
 * Hacker News (`GET {base}/api/v1/search?query=&tags=story&numericFilters=
 * created_at_i>=...&hitsPerPage=&page=&advancedSyntax=true`), keyless, reached
 * through the Egress port only (the sdk's `exchangeJson`). It returns HN
 * stories: link stories (the linked page, type `news`) and text posts such
 * as Ask HN (the HN discussion page, type `social`).
 *
 * What the wire looks like (read in the service's own source,
 * algolia/hn-search: config/routes.rb, app/controllers/api/v1/
 * search_controller.rb and base_controller.rb, and its API page
 * app/javascript/views/Api.tsx; Algolia's search parameters and answer):
 * - /api/v1/search forwards every parameter to Algolia's query of the
 *   `Item_production` index (sorted by relevance, then points, then
 *   comments), with `advancedSyntax` true unless given: `"a phrase"` must
 *   appear as written and `-word` excludes records holding the word;
 * - `tags` are ANDed (`story`, `comment`, `ask_hn`, `show_hn`, `poll`,
 *   `author_X`, `story_N`, ...; parentheses OR them); `numericFilters` are
 *   comma-separated conditions (`<`, `<=`, `=`, `>`, `>=`) on `created_at_i`,
 *   `points` and `num_comments`; `page` counts from 0; `hitsPerPage` is at
 *   most 1000;
 * - the answer is Algolia's: `{"hits": [...], "nbHits", "page", "nbPages",
 *   "hitsPerPage", "exhaustiveNbHits", "query", "params", "processingTimeMS"}`;
 *   a story hit has `objectID` (the HN item id), `title`, `url` (missing,
 *   null or empty for text posts), `author`, `points`, `num_comments`,
 *   `story_text` (HTML, for text posts), `created_at` (ISO) and
 *   `created_at_i` (unix seconds), `_tags`, and `_highlightResult` with
 *   `{value, matchLevel, matchedWords}` per attribute, the matches wrapped
 *   in `<em>`;
 * - a failure is Algolia's status with a JSON body holding `message` (the
 *   controller renders `{message}`, whose text is "POST <algolia url>:
 *   <Algolia's own body {"message", "status"}>"; both shapes are read); the
 *   controller forwards the client's IP to Algolia, which rate-limits per IP
 *   (write-ups of the API say about 10,000 requests an hour): its 429 is
 *   mapped by the sdk to ProviderRateLimited (its Retry-After, else a minute).
 *
 * Filters (`applied` says which HN Search applied; the search operation
 * post-filters the rest):
 * - time_range -> `numericFilters=created_at_i>=<publishedAfter in s>`:
 *   applied (every story has its date);
 * - result_type news -> the same search; text posts (which link nowhere but
 *   to HN) are dropped, so what is left are dated link stories, type news:
 *   applied (a second page is asked for when the first did not fill `limit`);
 *   web: applied (nothing to do);
 * - -word -> `-word` in the query (advancedSyntax): excluded applied when
 *   every exclusion is a single word (-"a phrase" is left to the operation);
 * - "phrases" -> quoted in the query; plain words are sent as they are
 *   (Algolia wants every word);
 * - site:, language, country, safe_search: HN Search has no such filter
 *   (`url` is searchable text, not a domain filter): not applied.
 *
 * `limit` stories are asked for (`hitsPerPage`, at most 1000); `total` is
 * `nbHits`.
 */
import type { FilterName, ParsedQuery, ProviderRequest, ProviderResponse, ProviderResult } from '../../../core/search.js';
import {
  baseUrl, cutAtWord, defineSearchProvider, endpointOf, exchangeJson, httpUrl, isRecord, markedText, parseIsoDate, plainText,
  ProviderError, type ProviderOptions, type SearchProviderPlugin,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://hn.algolia.com';
/** Algolia's largest page. */
export const MAX_HITS_PER_PAGE = 1000;
/** Where an HN item is discussed. */
export const ITEM_URL = 'https://news.ycombinator.com/item?id=';

/** Applied on every request (see the header). */
export const APPLIES: ReadonlySet<FilterName> = new Set<FilterName>(['time_range', 'result_type']);

export type HackernewsProviderOptions = ProviderOptions;

const EM_OPEN = /<em>/i;
const EM_CLOSE = /<\/em>/i;

// ---------------------------------------------------------------------------
// The query

/** A word or phrase as Algolia's advanced syntax reads it (no quotes or leading dashes inside). */
const clean = (s: string): string => s.replace(/["\u201c\u201d]/g, ' ').replace(/(^|\s)-+/g, '$1').replace(/\s+/g, ' ').trim();

/**
 * The query in Algolia's advanced syntax: required phrases quoted, the other
 * words as they are, single-word exclusions as `-word`. Returns whether
 * every exclusion could be sent.
 */
export function algoliaQuery(q: ParsedQuery): { readonly text: string; readonly excludedSent: boolean } {
  const parts: string[] = [];
  const quoted = new Set<string>();
  for (const group of q.required) {
    // An OR of alternatives cannot be said to Algolia: their words stay plain.
    if (group.length !== 1 || group[0]!.item.kind !== 'phrase') continue;
    const text = clean(group[0]!.item.text);
    if (text === '' || quoted.has(text.toLowerCase())) continue;
    quoted.add(text.toLowerCase());
    parts.push(`"${text}"`);
  }
  const inPhrases = new Set([...quoted].flatMap((p) => p.split(' ')));
  for (const t of q.terms) {
    const w = clean(t);
    if (w !== '' && !inPhrases.has(w.toLowerCase())) parts.push(w);
  }
  let excludedSent = true;
  for (const x of q.excluded) {
    const w = clean(x.text);
    if (x.kind === 'term' && w !== '' && !w.includes(' ')) parts.push(`-${w}`);
    else excludedSent = false;
  }
  return { text: parts.join(' '), excludedSent };
}

// ---------------------------------------------------------------------------
// HN hits -> ProviderResult

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** `_highlightResult[attr].value`, when it is a string. */
function highlighted(hit: Record<string, unknown>, attr: string): string | undefined {
  const h = hit._highlightResult;
  if (!isRecord(h)) return undefined;
  const a = h[attr];
  return isRecord(a) ? str(a.value) : undefined;
}

/** One HN hit as a ProviderResult; undefined without a usable URL (neither `url` nor a numeric objectID). */
export function toProviderResult(hit: unknown): ProviderResult | undefined {
  if (!isRecord(hit)) return undefined;
  const id = typeof hit.objectID === 'string' && /^\d{1,12}$/.test(hit.objectID) ? hit.objectID : typeof hit.objectID === 'number' && Number.isSafeInteger(hit.objectID) && hit.objectID > 0 ? String(hit.objectID) : undefined;
  const external = httpUrl(hit.url);
  const discussion = id === undefined ? undefined : `${ITEM_URL}${id}`;
  const url = external ?? discussion;
  if (url === undefined) return undefined;
  const title = plainText(str(hit.title) ?? '');
  const author = plainText(str(hit.author) ?? '').slice(0, 100);
  const seconds = num(hit.created_at_i);
  const publishedAt = seconds !== undefined && seconds > 0 ? seconds * 1000 : parseIsoDate(hit.created_at);
  const storyHtml = str(hit.story_text) ?? '';
  const abstract = storyHtml === '' ? '' : plainText(storyHtml);
  let snippet: string;
  let highlights: [number, number][] = [];
  if (abstract !== '') {
    const marked = markedText(highlighted(hit, 'story_text') ?? storyHtml, EM_OPEN, EM_CLOSE);
    snippet = marked.text;
    highlights = marked.highlights;
  } else {
    const points = num(hit.points);
    const comments = num(hit.num_comments);
    snippet = [
      points === undefined ? '' : `${points} points`,
      author === '' ? '' : `by ${author}`,
      comments === undefined ? '' : `${comments} comments`,
    ].filter((s) => s !== '').join(' \u00b7 ');
    snippet = cutAtWord(snippet === '' ? 'Hacker News story' : `${snippet} on Hacker News`);
  }
  return {
    url,
    title: cutAtWord(title !== '' ? title : abstract !== '' ? abstract : `Hacker News item ${id ?? ''}`.trim()),
    snippet,
    ...(highlights.length > 0 ? { highlights } : {}),
    publishedAt,
    type: external !== undefined ? 'news' : 'social',
    language: null,
    country: null,
    safe: null,
    ...(abstract === '' ? {} : { abstract }),
  };
}

// ---------------------------------------------------------------------------
// The provider

/**
 * Algolia's error text from a failure body: `{"message", "status"}`, or the
 * HN Search controller's `{"message": "POST <url>: <that body>"}`.
 */
export function algoliaMessage(json: unknown): string | undefined {
  if (!isRecord(json) || typeof json.message !== 'string') return undefined;
  const outer = json.message;
  const brace = outer.indexOf(': {');
  if (brace >= 0) {
    try {
      const inner: unknown = JSON.parse(outer.slice(brace + 2));
      if (isRecord(inner) && typeof inner.message === 'string') return inner.message.slice(0, 300);
    } catch {
      // not the controller's wrapping
    }
  }
  return outer.slice(0, 300);
}

interface Page {
  readonly hits: readonly unknown[];
  readonly nbHits: number | undefined;
  readonly nbPages: number | undefined;
}

export function createHackernewsProvider(options: HackernewsProviderOptions): SearchProviderPlugin<'search-provider-hackernews'> {
  const base = baseUrl('hackernews', options.baseUrl, DEFAULT_BASE_URL);
  const endpoint = `${base.url}/api/v1/search`;
  const headers: Record<string, string> = base.authorization === undefined ? {} : { authorization: base.authorization };

  async function page(request: ProviderRequest, text: string, hitsPerPage: number, n: number): Promise<Page> {
    const params = new URLSearchParams();
    params.set('query', text);
    params.set('tags', 'story');
    if (request.filters.publishedAfter !== undefined) params.set('numericFilters', `created_at_i>=${Math.max(0, Math.ceil(request.filters.publishedAfter / 1000))}`);
    params.set('hitsPerPage', String(hitsPerPage));
    params.set('page', String(n));
    params.set('advancedSyntax', 'true');
    const url = `${endpoint}?${params.toString()}`;
    const { status, json } = await exchangeJson(options.egress, { provider: 'hackernews', url, headers, timeoutMs: options.timeoutMs, signal: request.signal, answerStatuses: [400] });
    if (status === 400) {
      throw new ProviderError('PROVIDER_FAILED', `hackernews at ${endpointOf(url)} refused the request (HTTP 400): ${algoliaMessage(json) ?? 'no reason given'}`, { status });
    }
    if (!isRecord(json) || !Array.isArray(json.hits)) {
      const message = algoliaMessage(json);
      const said = message === undefined ? '' : `: ${message}`;
      throw new ProviderError('PROVIDER_FAILED', `hackernews at ${endpointOf(url)} answered JSON without hits${said}`, { status });
    }
    const nb = num(json.nbHits);
    const pages = num(json.nbPages);
    return { hits: json.hits, nbHits: nb === undefined || nb < 0 ? undefined : Math.floor(nb), nbPages: pages };
  }

  return defineSearchProvider({
    name: 'search-provider-hackernews',
    id: 'hackernews',
    description: 'Hacker News stories and Ask HN posts, through the HN Search API (Algolia).',
    kinds: ['news', 'social'],
    endpoint: base.url,
    applies: APPLIES,
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      if (request.limit < 1) return { results: [], total: 0, applied: APPLIES };
      const news = request.filters.resultType === 'news';
      const { text, excludedSent } = algoliaQuery(request.query);
      const hitsPerPage = Math.min(request.limit, MAX_HITS_PER_PAGE);
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      let total: number | undefined;
      for (let n = 0; n < 2 && results.length < request.limit; n++) {
        if (request.signal.aborted) throw request.signal.reason;
        const p = await page(request, text, hitsPerPage, n);
        if (n === 0) total = p.nbHits;
        for (const hit of p.hits) {
          const r = toProviderResult(hit);
          if (r === undefined || seen.has(r.url)) continue;
          // News: a dated link story. time_range: a date inside the range (HN Search filtered on it; a hit that hides it is dropped).
          if (news && (r.type !== 'news' || r.publishedAt === null)) continue;
          if (request.filters.publishedAfter !== undefined && (r.publishedAt === null || r.publishedAt < request.filters.publishedAfter)) continue;
          seen.add(r.url);
          results.push(r);
          if (results.length >= request.limit) break;
        }
        // Only a news search drops hits; a web search's first page is all there is to have.
        if (!news || p.hits.length < hitsPerPage || (p.nbPages !== undefined && n + 1 >= p.nbPages)) break;
      }
      const applied = new Set<FilterName>(APPLIES);
      if (excludedSent && request.query.excluded.length > 0) applied.add('excluded');
      return { results, total: news ? undefined : total, applied };
    },
  });
}
