/**
 * What both backends of the local index share besides the ranking itself:
 * checking and analysing documents before a write, and the search flow over
 * a small storage interface (statistics, postings, filters, documents). The
 * SQLite and PostgreSQL adapters only store and fetch; every decision about
 * what matches and in which order is made here and in rank.ts, so both give
 * the same results on the same documents.
 */
import {
  DOCUMENT_TYPES, domainOf, onSite,
  type IndexDocument, type IndexHit, type IndexQuery, type IndexSearchResult, type StoredDocument,
} from '../../core/search.js';
import { analyseField, analyserKey, detectLanguage } from './analysis.js';
import { packPostings, type PackedPostings, type PostingList } from './postings.js';
import {
  DEFAULT_RANKING, byScore, evaluate, makeSnippet, newsOrder, planQuery, rerank, topK,
  type Candidates, type CorpusStats, type Evaluation, type QueryPlan, type RankingParams, type Scored, type TermGroup,
} from './rank.js';

// ---------------------------------------------------------------------------
// Writes

/** A document ready to store: checked, normalised, analysed. */
export interface PreparedDocument {
  readonly url: string;
  readonly title: string;
  readonly text: string;
  readonly publishedAt: number | null;
  readonly language: string | null;
  /** The analyser its terms came from (its language's, or `und`). */
  readonly analyser: string;
  readonly country: string | null;
  readonly type: string;
  readonly author: string | null;
  readonly siteName: string | null;
  readonly doi: string | null;
  readonly safe: boolean | null;
  readonly domain: string;
  readonly titleLength: number;
  readonly textLength: number;
  /** Its terms (the title's, then the text's others), with their frequencies and encoded positions. */
  readonly postings: PackedPostings;
}

/** Strings as both databases store them: well-formed UTF-16 (lone surrogates become U+FFFD) and no NUL, which PostgreSQL refuses. */
export function clean(s: string): string {
  // String.prototype.toWellFormed is in Node 20, not in the ES2023 library typings.
  const w = (s as string & { toWellFormed(): string }).toWellFormed();
  return w.includes('\u0000') ? w.replaceAll('\u0000', '') : w;
}

const cleanOrNull = (s: string | null | undefined): string | null => (s === null || s === undefined ? null : clean(s));

/** Throws a TypeError naming the field when the port's contract does not allow the document (the cheap part of preparing it). */
export function checkDocument(d: IndexDocument): void {
  if (typeof d.url !== 'string' || !/^https?:\/\//i.test(d.url) || domainOf(d.url) === '') throw new TypeError(`url must be an absolute http(s) URL, got ${JSON.stringify(d.url)?.slice(0, 200)}`);
  if (!(DOCUMENT_TYPES as readonly string[]).includes(d.type)) throw new TypeError(`type must be one of ${DOCUMENT_TYPES.join(', ')}`);
  if (d.publishedAt !== null && !Number.isFinite(d.publishedAt)) throw new TypeError('publishedAt must be epoch ms or null');
}

/** Checks and analyses one document; throws a TypeError naming the field for a document the port's contract does not allow. */
export function prepareDocument(d: IndexDocument): PreparedDocument {
  checkDocument(d);
  const title = clean(d.title ?? '');
  const text = clean(d.text ?? '');
  const language = d.language === null || d.language === undefined ? detectLanguage(title, text) : d.language.toLowerCase();
  const analyser = analyserKey(language);
  const t = analyseField(title, analyser);
  const x = analyseField(text, analyser);
  const postings: { term: string; title: readonly number[] | undefined; text: readonly number[] | undefined }[] = [];
  for (const [term, title] of t.terms) postings.push({ term, title, text: x.terms.get(term) });
  for (const [term, text] of x.terms) if (!t.terms.has(term)) postings.push({ term, title: undefined, text });
  return {
    url: clean(d.url),
    title,
    text,
    publishedAt: d.publishedAt === null ? null : Math.trunc(d.publishedAt),
    language,
    analyser,
    country: d.country === null || d.country === undefined ? null : d.country.toUpperCase(),
    type: d.type,
    author: cleanOrNull(d.author),
    siteName: cleanOrNull(d.siteName),
    doi: cleanOrNull(d.doi),
    safe: d.safe ?? null,
    domain: domainOf(d.url),
    titleLength: t.length,
    textLength: x.length,
    postings: packPostings(postings),
  };
}

/** Gives the event loop a turn (searches in this process run between write slices). */
export const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Prepares documents in slices of about `sliceMs` of CPU each, yielding in
 * between: analysis is the larger part of a write and holds no lock, so a
 * big import never stops this process's searches for long. A URL given
 * twice in one call: the later document wins.
 */
export async function prepareAll(documents: readonly IndexDocument[], sliceMs = 8): Promise<PreparedDocument[]> {
  const byUrl = new Map<string, PreparedDocument>();
  let t0 = performance.now();
  for (const d of documents) {
    const p = prepareDocument(d);
    byUrl.delete(p.url);
    byUrl.set(p.url, p);
    if (performance.now() - t0 > sliceMs) {
      await yieldToLoop();
      t0 = performance.now();
    }
  }
  return [...byUrl.values()];
}

/**
 * How an index has documents analysed: in this thread (`inlineAnalyser`:
 * prepareAll, in slices), or by a pool of worker threads (analysis-pool.ts)
 * running the same prepareDocument. `analyse` takes documents already
 * checked and of distinct URLs (latestByUrl) and gives their prepared
 * forms in the same order, a part at a time, so a writer can store one part
 * while the next is analysed.
 */
export interface DocumentAnalyser {
  analyse(documents: readonly IndexDocument[]): AsyncIterable<PreparedDocument[]>;
  /** Resolves once the analyser's threads (if any) are up: an import after it pays no start-up. */
  ready?(): Promise<void>;
}

/** The analyser of an index given none: this thread, in slices that yield to the event loop. */
export const inlineAnalyser: DocumentAnalyser = {
  async *analyse(documents) {
    if (documents.length > 0) yield await prepareAll(documents);
  },
};

/** The later document of each URL (as prepareAll keeps them), in the order of the later ones; checked first. */
export function latestByUrl(documents: readonly IndexDocument[]): IndexDocument[] {
  for (const d of documents) checkDocument(d);
  const byUrl = new Map<string, IndexDocument>();
  for (const d of documents) {
    const url = clean(d.url);
    byUrl.delete(url);
    byUrl.set(url, d);
  }
  return [...byUrl.values()];
}

export function checkCollection(collection: string): void {
  if (typeof collection !== 'string' || collection.length === 0 || collection.length > 256) throw new TypeError('collection must be a non-empty string of at most 256 characters');
}

// ---------------------------------------------------------------------------
// Search

/** A collection's statistics as stored. */
export interface CollectionInfo {
  readonly id: number;
  readonly name: string;
  readonly documents: number;
  readonly titleTokens: number;
  readonly textTokens: number;
  readonly lastUpdated: number | null;
  /** Documents per analyser key. */
  readonly analysers: ReadonlyMap<string, number>;
}

/** Document filters, applied by the backend in its own query language to the candidates. */
export interface DocumentFilter {
  readonly country: string | undefined;
  readonly language: string | undefined;
  readonly publishedAfter: number | undefined;
  /** 'moderate': safe is not false; 'strict': safe is true. */
  readonly safe: 'off' | 'moderate' | 'strict';
  /** Only news and articles with a date. */
  readonly news: boolean;
}

/** A candidate that passed the filters: its date (for news order) and domain (for site:). */
export interface DocumentFacts {
  readonly publishedAt: number | null;
  readonly domain: string;
}

/** What a backend provides to the shared search. */
export interface SearchStorage {
  /** Statistics of those of the named collections that exist. */
  collections(names: readonly string[]): Promise<readonly CollectionInfo[]>;
  /** Postings of each form within the collections, each list sorted by document id. Forms without postings may be absent. */
  postings(forms: readonly string[], collectionIds: readonly number[]): Promise<Map<string, PostingList>>;
  /** The candidates that pass the filter, with their facts. */
  filter(docs: readonly number[], filter: DocumentFilter): Promise<Map<number, DocumentFacts>>;
  /** Stored documents (with their analyser key) by id. */
  documents(docs: readonly number[]): Promise<Map<number, StoredDocument & { readonly analyser: string }>>;
  /**
   * The documents marked explicit (safe = false) in the collections, found by
   * an index on them alone. With it, safe_search moderate (the API's default)
   * with no other filter drops those few documents instead of looking up
   * every candidate's facts through `filter` (a long query matches thousands:
   * that lookup was most of a search's time). Optional: without it,
   * `filter` does the work.
   */
  explicit?(collectionIds: readonly number[]): Promise<ReadonlySet<number>>;
}

export interface SearchOptions {
  readonly ranking?: Partial<RankingParams>;
}

export function rankingParams(options?: SearchOptions): RankingParams {
  return { ...DEFAULT_RANKING, ...(options?.ranking ?? {}) };
}

const EMPTY: IndexSearchResult = { hits: [], total: 0 };

/**
 * Pseudo-relevance feedback (a relevance model, as RM3): the best
 * `prfDocs` documents are read again, each term weighs the sum over them of
 * its share of the document times the document's share of their scores;
 * the `prfTerms` heaviest terms not in the query are added with weights up
 * to `prfWeight`, and the candidates are scored again. The added terms only
 * re-rank: a document matches only by the query's own words, and snippets
 * mark those alone.
 */
async function feedback(storage: SearchStorage, plan: QueryPlan, ev: Evaluation, postings: Map<string, PostingList>, cids: readonly number[], stats: CorpusStats, params: RankingParams): Promise<{ postings: Map<string, PostingList>; ev: Evaluation }> {
  const all: Candidates = { docs: ev.docs, scores: ev.scores.map((v) => (Number.isNaN(v) ? -Infinity : v)), length: ev.docs.length };
  const fb = topK(all, params.prfDocs).filter((c) => c.score > -Infinity);
  const docs = await storage.documents(fb.map((c) => c.doc));
  const total = fb.reduce((s, c) => s + c.score, 0);
  const weights = new Map<string, number>();
  const known = new Set(plan.forms);
  for (const c of fb) {
    const d = docs.get(c.doc);
    if (d === undefined || total <= 0) continue;
    const t = analyseField(d.title, d.analyser);
    const x = analyseField(d.text, d.analyser);
    const len = t.length + x.length;
    if (len === 0) continue;
    const share = c.score / total;
    for (const field of [t, x]) {
      for (const [term, pos] of field.terms) {
        if (known.has(term)) continue;
        weights.set(term, (weights.get(term) ?? 0) + (share * pos.length) / len);
      }
    }
  }
  const chosen = [...weights.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, params.prfTerms);
  if (chosen.length === 0) return { postings, ev };
  const max = chosen[0]![1];
  const extra = await storage.postings(chosen.map(([t]) => t), cids);
  const merged = new Map(postings);
  for (const [t, l] of extra) merged.set(t, l);
  const groups: TermGroup[] = [...plan.groups, ...chosen.map(([t, w]) => ({ forms: [t], weight: (params.prfWeight * w) / max }))];
  const ev2 = evaluate({ ...plan, groups, required: [], excluded: [] }, merged, stats, params);
  // Keep the first evaluation's matches (query words, required groups, exclusions), with the new scores.
  const scores = new Float64Array(ev.docs.length);
  let j = 0;
  for (let i = 0; i < ev.docs.length; i++) {
    while (ev2.docs[j]! < ev.docs[i]!) j++;
    scores[i] = Number.isNaN(ev.scores[i]) ? NaN : ev2.scores[j]!;
  }
  return { postings, ev: { docs: ev.docs, scores, matches: ev.matches, idf: ev.idf } };
}

/** The search flow, the same for every backend. */
export async function runSearch(storage: SearchStorage, q: IndexQuery, params: RankingParams): Promise<IndexSearchResult> {
  const limit = Math.max(0, Math.floor(q.limit));
  const names = [...new Set(q.collections)];
  if (names.length === 0) return EMPTY;
  const infos = await storage.collections(names);
  const n = infos.reduce((s, c) => s + c.documents, 0);
  if (n === 0) return EMPTY;
  const stats: CorpusStats = {
    documents: n,
    avgTitle: infos.reduce((s, c) => s + c.titleTokens, 0) / n,
    avgText: infos.reduce((s, c) => s + c.textTokens, 0) / n,
  };
  const f = q.filters;
  let keys: string[];
  if (f.language !== undefined) keys = [analyserKey(f.language.toLowerCase())];
  else {
    const present = new Map<string, number>();
    for (const c of infos) for (const [k, v] of c.analysers) if (v > 0) present.set(k, (present.get(k) ?? 0) + v);
    // Most common first: the order forms are tried in does not change scores, only the work.
    keys = [...present.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
  }
  const plan = planQuery(q.query, keys);
  if (plan.groups.length === 0) return EMPTY;
  const cids = infos.map((c) => c.id);
  let postings = await storage.postings(plan.forms, cids);
  let ev = evaluate(plan, postings, stats, params);
  if (params.prfDocs > 0 && params.prfTerms > 0 && params.prfWeight > 0 && ev.matches > 0) {
    const expanded = await feedback(storage, plan, ev, postings, cids, stats, params);
    postings = expanded.postings;
    ev = expanded.ev;
  }

  const filter: DocumentFilter = {
    country: f.country?.toUpperCase(),
    language: f.language?.toLowerCase(),
    publishedAfter: f.publishedAfter,
    safe: f.safeSearch,
    news: f.resultType === 'news',
  };
  const others = filter.country !== undefined || filter.language !== undefined || filter.publishedAfter !== undefined
    || filter.news || q.query.sites.length > 0 || q.query.excludedSites.length > 0;
  const filtered = others || filter.safe !== 'off';
  // safe_search moderate alone: the same documents pass as through `filter`, known from the few explicit ones.
  const explicit = filtered && !others && filter.safe === 'moderate' && storage.explicit !== undefined ? await storage.explicit(cids) : undefined;
  const cDocs = new Float64Array(ev.matches);
  const cScores = new Float64Array(ev.matches);
  let total = 0;
  let facts: Map<number, DocumentFacts> | undefined;
  if (explicit !== undefined) {
    for (let j = 0; j < ev.docs.length; j++) {
      const score = ev.scores[j]!;
      if (Number.isNaN(score) || explicit.has(ev.docs[j]!)) continue;
      cDocs[total] = ev.docs[j]!;
      cScores[total++] = score;
    }
  } else if (filtered) {
    const alive: number[] = [];
    for (let j = 0; j < ev.docs.length; j++) if (!Number.isNaN(ev.scores[j])) alive.push(ev.docs[j]!);
    facts = alive.length === 0 ? new Map() : await storage.filter(alive, filter);
    const sites = q.query.sites;
    const notSites = q.query.excludedSites;
    for (let j = 0; j < ev.docs.length; j++) {
      const score = ev.scores[j]!;
      if (Number.isNaN(score)) continue;
      const doc = ev.docs[j]!;
      const fact = facts.get(doc);
      if (fact === undefined) continue;
      if (sites.length > 0 && !sites.some((s) => onSite(fact.domain, s))) continue;
      if (notSites.some((s) => onSite(fact.domain, s))) continue;
      cDocs[total] = doc;
      cScores[total++] = score;
    }
  } else {
    for (let j = 0; j < ev.docs.length; j++) {
      const score = ev.scores[j]!;
      if (Number.isNaN(score)) continue;
      cDocs[total] = ev.docs[j]!;
      cScores[total++] = score;
    }
  }
  const candidates: Candidates = { docs: cDocs, scores: cScores, length: total };
  if (total === 0 || limit === 0) return { hits: [], total };
  let top: Scored[];
  if (filter.news && facts !== undefined) {
    // News: tiers of relevance need every candidate's score (the proximity bonus goes to the best ones first).
    const ranked = rerank(plan, ev, candidates, total, postings, stats, params);
    const published = new Map<number, number | null>();
    for (const [d, fact] of facts) published.set(d, fact.publishedAt);
    top = newsOrder(ranked, published, params.newsTier).slice(0, limit);
  } else {
    top = rerank(plan, ev, candidates, limit, postings, stats, params);
  }
  const docs = await storage.documents(top.map((c) => c.doc));
  const hits: IndexHit[] = [];
  for (const c of top) {
    const d = docs.get(c.doc);
    if (d === undefined) continue; // removed between the two reads
    const { analyser, ...document } = d;
    const s = makeSnippet(document.text, analyser, plan, ev.idf, postings, c.doc);
    hits.push({ document, score: c.score, snippet: s.snippet, highlights: s.highlights });
  }
  return { hits, total };
}

export { byScore };
