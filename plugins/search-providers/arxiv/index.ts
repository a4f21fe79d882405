/**
 * The `arxiv` search provider: arXiv's e-prints through its API,
 * `GET {base}/api/query?search_query=...&start=&max_results=&sortBy=&sortOrder=`,
 * answered as an Atom 1.0 feed, reached through the Egress port only.
 * Keyless.
 *
 * What the wire looks like (read from the arXiv API User's Manual,
 * arXiv/arxiv-docs source/help/api/user-manual.md, with its date filter as
 * quoted in ropensci/aRxiv#67 and arXiv/arxiv-docs#1034; and from the
 * service's own source, arXiv/arxiv-search: search/serialize/atom.py,
 * search/routes/classic_api/exceptions.py and
 * search/domain/classic_api/README_classic_search_query.md):
 * - parameters: `search_query` (field prefixes `ti:`, `au:`, `abs:`, `all:`
 *   ...; Boolean `AND`, `OR`, `ANDNOT`; parentheses; "double-quoted
 *   phrases"; the date filter `submittedDate:[YYYYMMDDTTTT TO YYYYMMDDTTTT]`,
 *   GMT, to the minute, on the FIRST version's date, which is `<published>`),
 *   `start` (0-based), `max_results` (slices of at most 2000), `sortBy`
 *   (relevance, lastUpdatedDate, submittedDate), `sortOrder`;
 * - the answer is `<feed xmlns="http://www.w3.org/2005/Atom"
 *   xmlns:opensearch=... xmlns:arxiv=...>` with `<opensearch:totalResults>`
 *   and one `<entry>` per e-print: `<id>` (the abstract page,
 *   http://arxiv.org/abs/ID), `<title>`, `<summary>` (the abstract),
 *   `<published>` (version 1) and `<updated>` (this version), one `<author>`
 *   with a `<name>` per author in order, `<link rel="alternate"
 *   type="text/html">` (the abstract page), `<link rel="related"
 *   title="pdf">` (the PDF), `<link rel="related" title="doi">` when there
 *   is one, `<arxiv:doi>`, `<arxiv:journal_ref>`, `<arxiv:comment>`,
 *   `<arxiv:primary_category term=...>` and `<category term=...>`;
 * - errors are Atom feeds too: one `<entry>` whose `<title>` is `Error`,
 *   whose `<summary>` says what is wrong and whose `<id>` is under
 *   http://arxiv.org/api/errors; the current service sends them with HTTP
 *   400 (the manual's older service with 200): either is PROVIDER_FAILED
 *   with the summary. arXiv answers clients over its limits with HTTP 429
 *   (the toolkit's ProviderRateLimited); 5xx is PROVIDER_FAILED.
 *
 * The feed is read with htmlparser2 in XML mode (a dependency already,
 * well kept; CDATA and entities understood), keeping the subset above; a
 * feed whose `</feed>` never comes (a body cut short) is PROVIDER_FAILED,
 * not a short list. Atom text constructs are plain text unless their `type`
 * is html or xhtml (then markup is dropped); whitespace is collapsed.
 *
 * The query (arXiv's syntax; words not joined by an operator would be ORed,
 * so every part is joined with AND): plain words as `all:word` (anything
 * that is not a letter or digit splits a word, so no operator, prefix,
 * wildcard or parenthesis of the user's reaches the parser; a term that
 * splits into several words becomes `all:"a b"`; AND, OR and NOT are
 * lower-cased); "phrases" as `all:"..."`, intitle: items as `ti:...`;
 * a group of alternatives as `(a OR b)`; exclusions as `ANDNOT all:word`
 * (several: `ANDNOT (all:a OR all:b)`).
 *
 * Filters (`applied` says which this provider applied; the search
 * operation post-filters the rest):
 * - time_range -> `AND submittedDate:[<publishedAfter> TO <now>]` (GMT,
 *   minutes; `publishedAt` is `<published>`, the same date): applied. The
 *   order stays relevance (sortBy=relevance, sortOrder=descending);
 * - excluded -> `ANDNOT` (arXiv drops e-prints holding the word in any
 *   field, a superset of the title and abstract the operation checks):
 *   applied;
 * - site: and -site: every result is an abstract page on arxiv.org, so the
 *   provider decides them itself: a `site:` other than arxiv.org (or a
 *   parent domain of it), or a `-site:` that is, answers no results without
 *   a request; results on another host are dropped when a `site:` is given:
 *   site applied;
 * - result_type news: arXiv has no news: answered `{ results: [], total: 0,
 *   applied: every filter }` without a request; web asks nothing:
 *   result_type applied;
 * - language, country, safe_search: arXiv has no such filter: NOT applied
 *   (results carry no language).
 * `applies` declares time_range, excluded, site and result_type.
 *
 * Results: the abstract page (`<link rel="alternate">`, else `<id>`) is
 * `url`; the PDF link is `fullTextUrl`; the summary is `abstract` and, cut,
 * the snippet; `<published>` is `publishedAt`; `<arxiv:doi>` (else the doi
 * link) is `doi`; the journal reference, else "arXiv", is `venue`; `type`
 * academic.
 *
 * Paging: `max_results` is `request.limit` (at most 200 a request, a few
 * hundred KiB of Atom); a second request with `start` only when more were
 * asked for and the first page was full (arXiv asks clients to space
 * requests by 3 seconds: one request per search is the rule).
 */
import { Parser } from 'htmlparser2';
import {
  domainOf, onSite, type FilterName, type ProviderKind, type ProviderRequest, type ProviderResponse, type ProviderResult,
} from '../../../core/search.js';
import {
  ProviderError, baseUrl, bareDoi, cutAtWord, defineSearchProvider, exchange, excerpt, httpUrl, parseIsoDate, plainText,
  type ProviderOptions, type SearchProviderPlugin,
  plainTerms, searchableWords,
} from '../../sdk/search.js';

export const DEFAULT_BASE_URL = 'https://export.arxiv.org';
/** max_results of one request at most. */
export const MAX_PAGE_SIZE = 200;
export const MAX_REQUESTS = 2;
/** The host of every abstract page the API links to. */
export const ARXIV_HOST = 'arxiv.org';

const ID = 'arxiv';
/** The largest epoch ms a Date holds. */
const MAX_DATE_MS = 8.64e15;
const ALL_FILTERS: readonly FilterName[] = ['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded'];
const KINDS: readonly ProviderKind[] = ['academic'];
const APPLIES: ReadonlySet<FilterName> = new Set(['time_range', 'excluded', 'site', 'result_type']);

export type ArxivProviderOptions = ProviderOptions;

// ---------------------------------------------------------------------------
// The Atom subset

/** An element of the feed: its qualified name, attributes, text and child elements. */
export interface XmlElement {
  readonly name: string;
  readonly attribs: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  /** The text of this element and its descendants, in document order. */
  text: string;
}

/** The name without its namespace prefix (`arxiv:doi` -> `doi`). */
const local = (name: string): string => name.slice(name.indexOf(':') + 1);

/**
 * The document's root element, or a ProviderError when the body is not XML
 * whose root closes (a body cut short, an HTML page, an empty answer).
 */
export function parseXml(body: string, where: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let rootClosed = false;
  let failure: Error | undefined;
  const parser = new Parser({
    onopentag(name, attribs) {
      const el: XmlElement = { name, attribs, children: [], text: '' };
      const parent = stack.at(-1);
      if (parent !== undefined) parent.children.push(el);
      else if (root === undefined) root = el;
      stack.push(el);
    },
    ontext(data) {
      for (const el of stack) el.text += data;
    },
    onclosetag(name, isImplied) {
      const el = stack.pop();
      if (el !== undefined && el === root && !isImplied && name === root.name) rootClosed = true;
    },
    onerror(err) {
      failure = err;
    },
  }, { xmlMode: true, decodeEntities: true, recognizeCDATA: true });
  parser.write(body);
  parser.end();
  if (failure !== undefined || root === undefined || !rootClosed) {
    throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered a body that is not a whole XML document (${body.trim() === '' ? 'empty' : `cut short or not XML: ${excerpt(body, 80)}`})`);
  }
  return root;
}

const child = (el: XmlElement, name: string): XmlElement | undefined => el.children.find((c) => local(c.name) === name);
const childrenNamed = (el: XmlElement, name: string): XmlElement[] => el.children.filter((c) => local(c.name) === name);

/** An Atom text construct as plain text: markup dropped when `type` says html or xhtml, whitespace collapsed. */
function atomText(el: XmlElement | undefined): string {
  if (el === undefined) return '';
  const type = (el.attribs.type ?? 'text').toLowerCase();
  const text = type === 'html' || type === 'xhtml' ? plainText(el.text) : el.text;
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ').replace(/\s+/gu, ' ').trim();
}

// ---------------------------------------------------------------------------
// The query


const OPERATOR_WORDS = new Set(['AND', 'OR', 'NOT', 'ANDNOT']);

/** `field:word` or `field:"a b"`, or undefined when nothing is searchable. */
function fielded(field: 'all' | 'ti', text: string): string | undefined {
  const w = searchableWords(text, OPERATOR_WORDS);
  if (w === undefined) return undefined;
  return w.length === 1 ? `${field}:${w[0]}` : `${field}:"${w.join(' ')}"`;
}


/** arXiv's date-time of an epoch ms: YYYYMMDDHHMM, GMT. */
export function arxivDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 12);
}

/** Whether the request's time range goes into search_query (a lower bound a Date can hold). */
function searchQueryDated(request: ProviderRequest): boolean {
  const after = request.filters.publishedAfter;
  return after !== undefined && Number.isFinite(after) && Math.abs(after) <= MAX_DATE_MS && Math.abs(request.now) <= MAX_DATE_MS;
}

/** `search_query` for a request (see the header); '' when the query has nothing arXiv can search. */
export function buildSearchQuery(request: ProviderRequest): string {
  const { query } = request;
  const parts: string[] = [];
  for (const t of plainTerms(query)) {
    const s = fielded('all', t);
    if (s !== undefined) parts.push(s);
  }
  for (const group of query.required) {
    const alts = group.map(({ item: it, inTitle }) => fielded(inTitle ? 'ti' : 'all', it.text)).filter((s): s is string => s !== undefined);
    if (alts.length === 1) parts.push(alts[0]!);
    else if (alts.length > 1) parts.push(`(${alts.join(' OR ')})`);
  }
  if (parts.length === 0) return '';
  let q = parts.join(' AND ');
  const after = searchQueryDated(request) ? request.filters.publishedAfter : undefined;
  const dated = after !== undefined;
  const negative = query.excluded.map((x) => fielded('all', x.text)).filter((s): s is string => s !== undefined);
  if (dated || negative.length > 0) q = parts.length > 1 ? `(${q})` : q;
  if (dated) q += ` AND submittedDate:[${arxivDate(after)} TO ${arxivDate(Math.max(after, request.now))}]`;
  if (negative.length === 1) q += ` ANDNOT ${negative[0]}`;
  else if (negative.length > 1) q += ` ANDNOT (${negative.join(' OR ')})`;
  return q;
}

// ---------------------------------------------------------------------------
// Entries -> ProviderResult

/** One `<entry>` as a ProviderResult; undefined when it has no usable abstract page. */
export function toProviderResult(entry: XmlElement): ProviderResult | undefined {
  const links = childrenNamed(entry, 'link');
  const alternate = links.find((l) => (l.attribs.rel ?? 'alternate') === 'alternate' && (l.attribs.type ?? 'text/html') === 'text/html');
  const url = httpUrl(alternate?.attribs.href) ?? httpUrl(atomText(child(entry, 'id')));
  if (url === undefined) return undefined;
  const pdf = links.find((l) => l.attribs.title === 'pdf' || l.attribs.type === 'application/pdf');
  const doiLink = links.find((l) => l.attribs.title === 'doi');
  const title = atomText(child(entry, 'title'));
  const summary = atomText(child(entry, 'summary'));
  const authors = childrenNamed(entry, 'author')
    .map((a) => atomText(child(a, 'name')))
    .filter((n) => n !== '')
    .map((n) => cutAtWord(n, 200));
  const doiText = atomText(child(entry, 'doi')).split(/\s+/)[0];
  const doi = bareDoi(doiText) ?? bareDoi(doiLink?.attribs.href);
  const journal = atomText(child(entry, 'journal_ref'));
  return {
    url,
    title: title !== '' ? cutAtWord(title) : url,
    snippet: cutAtWord(summary),
    publishedAt: parseIsoDate(atomText(child(entry, 'published'))) ?? parseIsoDate(atomText(child(entry, 'updated'))),
    type: 'academic',
    language: null,
    country: null,
    safe: null,
    doi: doi ?? null,
    authors,
    venue: journal !== '' ? cutAtWord(journal, 300) : 'arXiv',
    fullTextUrl: httpUrl(pdf?.attribs.href) ?? null,
    abstract: summary === '' ? null : summary,
  };
}

/** An entry that is arXiv's error report (title "Error", id under /api/errors), as its message. */
function errorEntry(entries: readonly XmlElement[]): string | undefined {
  for (const e of entries) {
    const id = atomText(child(e, 'id'));
    if (atomText(child(e, 'title')) === 'Error' && /\/api\/errors/.test(id)) return atomText(child(e, 'summary')) || id;
  }
  return undefined;
}

interface Page {
  readonly entries: readonly XmlElement[];
  readonly total: number | undefined;
}

function readFeed(body: string, status: number, where: string): Page {
  const root = parseXml(body, where);
  if (local(root.name) !== 'feed') {
    throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered <${root.name}>, not an Atom feed (is the URL arXiv's API?)`, { status });
  }
  const entries = childrenNamed(root, 'entry');
  const error = errorEntry(entries);
  if (error !== undefined) {
    throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered an error (HTTP ${status}: ${error.slice(0, 300)})`, { status });
  }
  if (status < 200 || status > 299) {
    throw new ProviderError('PROVIDER_FAILED', `${ID} at ${where} answered HTTP ${status}: ${excerpt(body)}`, { status });
  }
  const n = Number(atomText(child(root, 'totalResults')));
  return { entries, total: Number.isInteger(n) && n >= 0 && atomText(child(root, 'totalResults')) !== '' ? n : undefined };
}

// ---------------------------------------------------------------------------
// The provider

export function createArxivProvider(options: ArxivProviderOptions): SearchProviderPlugin<'search-provider-arxiv'> {
  const configured = options.baseUrl?.trim() === '' ? undefined : options.baseUrl;
  const base = baseUrl(ID, configured, DEFAULT_BASE_URL);
  const where = `${base.url}/api/query`;

  return defineSearchProvider({
    name: 'search-provider-arxiv',
    id: ID,
    description: 'arXiv: e-prints in physics, mathematics, computer science, biology, finance, statistics and economics, with abstracts and PDFs, through the arXiv API.',
    kinds: KINDS,
    endpoint: where,
    applies: APPLIES,
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      if (request.filters.resultType === 'news') return { results: [], total: 0, applied: new Set(ALL_FILTERS) };
      const applied = new Set<FilterName>(['result_type', 'site', 'excluded']);
      if (searchQueryDated(request)) applied.add('time_range');
      const { sites, excludedSites } = request.query;
      if ((sites.length > 0 && !sites.some((s) => onSite(ARXIV_HOST, s))) || excludedSites.some((s) => onSite(ARXIV_HOST, s))) {
        return { results: [], total: 0, applied };
      }
      const searchQuery = buildSearchQuery(request);
      if (searchQuery === '') return { results: [], total: 0, applied };
      const keep = (url: string): boolean => {
        const d = domainOf(url);
        return !(sites.length > 0 && !sites.some((s) => onSite(d, s))) && !excludedSites.some((s) => onSite(d, s));
      };

      const want = Math.max(1, Math.floor(request.limit));
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      let total: number | undefined;
      let start = 0;
      for (let n = 0; n < MAX_REQUESTS && results.length < want; n++) {
        if (request.signal.aborted) throw request.signal.reason;
        const size = Math.min(MAX_PAGE_SIZE, want - results.length);
        const params = new URLSearchParams({
          search_query: searchQuery, start: String(start), max_results: String(size), sortBy: 'relevance', sortOrder: 'descending',
        });
        const res = await exchange(options.egress, {
          provider: ID,
          url: `${where}?${params.toString()}`,
          headers: { accept: 'application/atom+xml, application/xml;q=0.9', ...(base.authorization === undefined ? {} : { authorization: base.authorization }) },
          timeoutMs: options.timeoutMs,
          signal: request.signal,
          answerStatuses: [400],
        });
        const page = readFeed(res.text, res.status, where);
        if (n === 0) total = page.total;
        for (const entry of page.entries) {
          const r = toProviderResult(entry);
          if (r === undefined || seen.has(r.url) || !keep(r.url)) continue;
          seen.add(r.url);
          results.push(r);
        }
        if (page.entries.length < size) break;
        start += page.entries.length;
      }
      return { results: results.slice(0, want), total, applied };
    },
  });
}
