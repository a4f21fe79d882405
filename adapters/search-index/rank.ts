/**
 * The local index's ranking, shared by every backend: query planning over
 * the analysers of the searched collections, BM25F over title and text
 * with collection statistics combined from the visible collections only,
 * a term-proximity bonus (BM25TP), phrase and exclusion checks on
 * positions, news ordering, and snippets with highlights. Pure: the
 * backends hand it postings and statistics and get back an order.
 */
import { analyseQueryText, termOf, tokenize } from './analysis.js';
import type { ParsedQuery, QueryItem, RequiredItem } from '../../core/search.js';
import type { PostingList } from './postings.js';

// ---------------------------------------------------------------------------
// Parameters

export interface RankingParams {
  /** BM25 term-frequency saturation. */
  readonly k1: number;
  /** Length normalisation of the title and of the text. */
  readonly bTitle: number;
  readonly bText: number;
  /** BM25F field weights (a title occurrence counts titleWeight text occurrences). */
  readonly titleWeight: number;
  /** Weight of the proximity bonus (0: none). */
  readonly proximityWeight: number;
  /** How many of the best BM25 documents get the proximity bonus before the final order. */
  readonly proximityDepth: number;
  /** news: relevance tiers are this fraction of the best score wide; within a tier, newest first. */
  readonly newsTier: number;
  /** Pseudo-relevance feedback (RM3-like): documents read, terms added, weight of the added terms (0: off). */
  readonly prfDocs: number;
  readonly prfTerms: number;
  readonly prfWeight: number;
  /**
   * Weight of a query word that phrases the request rather than names its
   * topic ("papers on", "using", "I am interested in", "describe"): 1 counts
   * it as any other word.
   */
  readonly requestWordWeight: number;
}

/**
 * Tuned on the SciFact train queries only (benchmarks/search/tune.mjs);
 * the table of steps is in benchmarks/search/README.md.
 */
export const DEFAULT_RANKING: RankingParams = {
  k1: 1.2,
  bTitle: 0.9,
  bText: 0.75,
  titleWeight: 2.5,
  proximityWeight: 0.1,
  proximityDepth: 30,
  newsTier: 0.1,
  prfDocs: 0,
  prfTerms: 0,
  prfWeight: 0,
  requestWordWeight: 0.5,
};

export type Postings = ReadonlyMap<string, PostingList>;

// ---------------------------------------------------------------------------
// Query plans

/** A ranked query word: its forms under the searched analysers, and how often the query says it. */
export interface TermGroup {
  readonly forms: readonly string[];
  weight: number;
  /** A word that phrases the request rather than names its topic. */
  request?: boolean;
}

/** A word or phrase as positions to match: each indexable token's offset from the first token and its forms. */
export interface Sequence {
  readonly tokens: readonly { readonly offset: number; readonly forms: readonly string[] }[];
}

export interface RequiredAlternative {
  readonly sequence: Sequence;
  readonly inTitle: boolean;
}

export interface QueryPlan {
  readonly groups: readonly TermGroup[];
  /** Each inner list: alternatives, one of which must match. Groups with an alternative that cannot be checked (only stop words) are dropped. */
  readonly required: readonly (readonly RequiredAlternative[])[];
  readonly excluded: readonly Sequence[];
  /** Every form whose postings the search needs. */
  readonly forms: readonly string[];
}

function sequence(item: QueryItem, keys: readonly string[]): Sequence {
  // Positions count stop words, so a phrase keeps its gaps; a word that some searched language drops as a
  // stop word is a gap too (documents in that language never indexed it), never a required token.
  const all = analyseQueryText(item.text, keys);
  const kept = all.filter((t) => t.forms.length > 0 && !t.stopSomewhere);
  const tokens = kept.length > 0 ? kept : all.filter((t) => t.forms.length > 0);
  const first = tokens[0]?.position ?? 0;
  return { tokens: tokens.map((t) => ({ offset: t.position - first, forms: t.forms })) };
}

/**
 * English words that phrase a request rather than name its topic: how
 * people ask for documents ("papers on", "articles discussing", "I am
 * interested in", "I want to find", "give examples of", "methods used
 * for"). Words that name a topic in some field stay out even when they
 * often phrase requests ("information", "literature", "list", "types",
 * "need", "reports", "references"). Not stop words: a query made of them
 * alone still finds them, and a word the query also says as its topic
 * (not only in this role) counts in full.
 */
const REQUEST_WORDS = new Set([
  'article', 'articles', 'paper', 'papers', 'document', 'documents', 'discuss', 'discusses', 'discussed', 'discussing', 'discussion',
  'describe', 'describes', 'described', 'describing', 'description', 'concerning', 'regarding', 'pertaining', 'relating', 'related',
  'interested', 'want', 'wish', 'like', 'looking', 'find', 'give', 'example', 'examples', 'possible', 'known', 'available', 'exist',
  'exists', 'existing', 'anything', 'something', 'please', 'help', 'tell', 'explain', 'show', 'way', 'ways', 'kind', 'kinds', 'use',
  'used', 'using', 'also', 'etc',
]);

/** A query word lower-cased without the punctuation around it ("papers," -> "papers"). */
function bare(word: string): string {
  let a = 0;
  let b = word.length;
  const letter = (c: string) => c.toLowerCase() !== c.toUpperCase() || (c >= '0' && c <= '9');
  while (a < b && !letter(word[a]!)) a++;
  while (b > a && !letter(word[b - 1]!)) b--;
  return word.slice(a, b).toLowerCase();
}

/**
 * Plans a parsed query for documents analysed with `keys` (the analysers of
 * the searched collections, or the requested language's alone).
 */
export function planQuery(query: ParsedQuery, keys: readonly string[]): QueryPlan {
  const groups: TermGroup[] = [];
  const byKey = new Map<string, TermGroup>();
  for (const word of query.terms) {
    const request = REQUEST_WORDS.has(bare(word));
    for (const t of analyseQueryText(word, keys)) {
      if (t.forms.length === 0) continue;
      const k = t.forms.join('\u0000');
      const g = byKey.get(k);
      if (g !== undefined) {
        g.weight++;
        // A word said once as the topic and once in the request's phrasing counts as topic.
        if (!request) g.request = false;
      } else {
        const ng: TermGroup = { forms: t.forms, weight: 1, request };
        byKey.set(k, ng);
        groups.push(ng);
      }
    }
  }
  const required: RequiredAlternative[][] = [];
  for (const group of query.required) {
    const alts = group.map((r: RequiredItem) => ({ sequence: sequence(r.item, keys), inTitle: r.inTitle }));
    // An alternative of stop words only cannot be checked: the group is taken as satisfied.
    if (alts.some((a) => a.sequence.tokens.length === 0)) continue;
    required.push(alts);
  }
  const excluded = query.excluded.map((e) => sequence(e, keys)).filter((s) => s.tokens.length > 0);
  const forms = new Set<string>();
  for (const g of groups) for (const f of g.forms) forms.add(f);
  for (const alts of required) for (const a of alts) for (const t of a.sequence.tokens) for (const f of t.forms) forms.add(f);
  for (const s of excluded) for (const t of s.tokens) for (const f of t.forms) forms.add(f);
  return { groups, required, excluded, forms: [...forms] };
}

// ---------------------------------------------------------------------------
// Matching on positions

/** Sorted union of one token's positions (all its forms) in one field of a document. */
function tokenPositions(postings: Postings, forms: readonly string[], doc: number, field: 0 | 1): number[] {
  let out: number[] | undefined;
  for (const f of forms) {
    const list = postings.get(f);
    if (list === undefined) continue;
    const i = list.find(doc);
    if (i < 0 || (field === 0 ? list.tfTitle[i] : list.tfText[i]) === 0) continue;
    const pos = list.positions(i, field);
    out = out === undefined ? pos : [...out, ...pos].sort((a, b) => a - b);
  }
  return out ?? [];
}

/** Whether the sequence occurs in the field (its tokens at their offsets). */
function occursIn(postings: Postings, seq: Sequence, doc: number, field: 0 | 1): boolean {
  const lists = seq.tokens.map((t) => tokenPositions(postings, t.forms, doc, field));
  if (lists.some((l) => l.length === 0)) return false;
  if (lists.length === 1) return true;
  const sets = lists.map((l) => new Set(l));
  const first = seq.tokens[0]!;
  for (const p of lists[0]!) {
    const base = p - first.offset;
    let ok = true;
    for (let i = 1; i < lists.length && ok; i++) ok = sets[i]!.has(base + seq.tokens[i]!.offset);
    if (ok) return true;
  }
  return false;
}

/** Documents that hold any form of any token of the sequence (the superset to check). */
function docsWithFirstToken(postings: Postings, seq: Sequence): Set<number> {
  // The rarest token bounds the documents that can hold the whole sequence.
  let best: Set<number> | undefined;
  for (const t of seq.tokens) {
    const s = new Set<number>();
    for (const f of t.forms) for (const d of postings.get(f)?.docs ?? []) s.add(d);
    if (best === undefined || s.size < best.size) best = s;
  }
  return best ?? new Set();
}

// ---------------------------------------------------------------------------
// Scoring

/** Statistics of the visible collections, combined. */
export interface CorpusStats {
  readonly documents: number;
  readonly avgTitle: number;
  readonly avgText: number;
}

export interface Scored {
  readonly doc: number;
  score: number;
}

export interface Evaluation {
  /** Candidate documents, ascending. */
  readonly docs: Float64Array;
  /** Their BM25F scores; NaN for a candidate a required group or an exclusion removed. */
  readonly scores: Float64Array;
  /** Candidates left (not NaN). */
  readonly matches: number;
  readonly idf: readonly number[];
}

function idfOf(df: number, n: number): number {
  const d = Math.min(df, n);
  return Math.log(1 + (n - d + 0.5) / (d + 0.5));
}

/** Merges two ascending arrays without duplicates. */
function merge2(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) { out[n++] = x; i++; }
    else if (y < x) { out[n++] = y; j++; }
    else { out[n++] = x; i++; j++; }
  }
  while (i < a.length) out[n++] = a[i++]!;
  while (j < b.length) out[n++] = b[j++]!;
  return out.subarray(0, n);
}

/** Sorted distinct union of the lists' documents (each list is ascending): pairwise merges. */
function union(lists: readonly PostingList[]): Float64Array {
  let parts: Float64Array[] = lists.map((l) => l.docs);
  if (parts.length === 0) return new Float64Array(0);
  while (parts.length > 1) {
    const next: Float64Array[] = [];
    for (let i = 0; i < parts.length; i += 2) next.push(i + 1 < parts.length ? merge2(parts[i]!, parts[i + 1]!) : parts[i]!);
    parts = next;
  }
  return parts[0]!;
}

/** For each entry of `list`, its index in `docs` (both ascending; every list document is in docs). */
function indexIn(docs: Float64Array, list: PostingList): Uint32Array {
  const out = new Uint32Array(list.length);
  let j = 0;
  for (let i = 0; i < list.length; i++) {
    const d = list.docs[i]!;
    while (docs[j]! < d) j++;
    out[i] = j;
  }
  return out;
}

/**
 * BM25F over the plan's groups, then the hard conditions (required groups,
 * exclusions) on positions. Every document holding any ranked form is a
 * candidate: plain terms are any-of. Scores add up group by group in the
 * plan's order, so every backend gets the same floating-point sums.
 */
export function evaluate(plan: QueryPlan, postings: Postings, stats: CorpusStats, params: RankingParams): Evaluation {
  const { k1, bTitle, bText, titleWeight } = params;
  const n = stats.documents;
  const avgTitle = stats.avgTitle > 0 ? stats.avgTitle : 1;
  const avgText = stats.avgText > 0 ? stats.avgText : 1;
  const ct = 1 - bTitle;
  const bt = bTitle / avgTitle;
  const cx = 1 - bText;
  const bx = bText / avgText;
  const groupLists = plan.groups.map((g) => g.forms.map((f) => postings.get(f)).filter((l): l is PostingList => l !== undefined));
  const docs = union(groupLists.flat());
  const scores = new Float64Array(docs.length);
  const idf: number[] = [];
  for (let gi = 0; gi < plan.groups.length; gi++) {
    const g = plan.groups[gi]!;
    const lists = groupLists[gi]!;
    let df = 0;
    for (const l of lists) df += l.length;
    const w = idfOf(df, n) * g.weight * (g.request === true ? params.requestWordWeight : 1);
    idf.push(w / g.weight);
    if (df === 0) continue;
    if (lists.length === 1) {
      const l = lists[0]!;
      const at = indexIn(docs, l);
      for (let i = 0; i < l.length; i++) {
        const tf = (titleWeight * l.tfTitle[i]!) / (ct + bt * l.titleLength[i]!) + l.tfText[i]! / (cx + bx * l.textLength[i]!);
        scores[at[i]!] = scores[at[i]!]! + (w * tf * (k1 + 1)) / (k1 + tf);
      }
    } else {
      // Several forms of one word (several analysers): their frequencies add up before saturation.
      const tfT = new Float64Array(docs.length);
      const tfX = new Float64Array(docs.length);
      const tl = new Float64Array(docs.length).fill(-1);
      const xl = new Float64Array(docs.length);
      for (const l of lists) {
        const at = indexIn(docs, l);
        for (let i = 0; i < l.length; i++) {
          const j = at[i]!;
          tfT[j] = tfT[j]! + l.tfTitle[i]!;
          tfX[j] = tfX[j]! + l.tfText[i]!;
          tl[j] = l.titleLength[i]!;
          xl[j] = l.textLength[i]!;
        }
      }
      for (let j = 0; j < docs.length; j++) {
        if (tl[j]! < 0) continue;
        const tf = (titleWeight * tfT[j]!) / (ct + bt * tl[j]!) + tfX[j]! / (cx + bx * xl[j]!);
        scores[j] = scores[j]! + (w * tf * (k1 + 1)) / (k1 + tf);
      }
    }
  }
  let matches = docs.length;
  const drop = (doc: number) => {
    let lo = 0;
    let hi = docs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (docs[mid] === doc) {
        if (!Number.isNaN(scores[mid])) {
          scores[mid] = NaN;
          matches--;
        }
        return;
      }
      if (docs[mid]! < doc) lo = mid + 1;
      else hi = mid - 1;
    }
  };
  for (const alts of plan.required) {
    // Only documents holding some alternative's rarest token can match: check those, drop the rest.
    const maybe = new Set<number>();
    for (const a of alts) for (const d of docsWithFirstToken(postings, a.sequence)) maybe.add(d);
    for (let j = 0; j < docs.length; j++) {
      if (Number.isNaN(scores[j])) continue;
      const doc = docs[j]!;
      if (!maybe.has(doc) || !alts.some((a) => occursIn(postings, a.sequence, doc, 0) || (!a.inTitle && occursIn(postings, a.sequence, doc, 1)))) drop(doc);
    }
  }
  for (const seq of plan.excluded) {
    for (const doc of docsWithFirstToken(postings, seq)) {
      if (occursIn(postings, seq, doc, 0) || occursIn(postings, seq, doc, 1)) drop(doc);
    }
  }
  return { docs, scores, matches, idf };
}

/**
 * Proximity bonus (Büttcher, Clarke and Lushman's BM25TP): between
 * neighbouring occurrences of two different query words at distance d,
 * each word accumulates the other's IDF / d²; the accumulators are
 * saturated like term frequencies and weighted by min(1, IDF).
 */
export function proximity(plan: QueryPlan, idf: readonly number[], postings: Postings, doc: number, stats: CorpusStats, params: RankingParams): number {
  const groups = plan.groups;
  if (groups.length < 2 || groups.length > 1024) return 0;
  let bonus = 0;
  let textLength = -1;
  for (const field of [0, 1] as const) {
    const occ: number[] = [];
    for (let g = 0; g < groups.length; g++) {
      for (const f of groups[g]!.forms) {
        const l = postings.get(f);
        const i = l === undefined ? -1 : l.find(doc);
        if (i < 0) continue;
        if (textLength < 0) textLength = l!.textLength[i]!;
        if ((field === 0 ? l!.tfTitle[i] : l!.tfText[i]) === 0) continue;
        for (const p of l!.positions(i, field)) occ.push(p * 1024 + g);
      }
    }
    if (occ.length < 2) continue;
    occ.sort((a, b) => a - b);
    const acc = new Float64Array(groups.length);
    for (let i = 1; i < occ.length; i++) {
      const ga = occ[i - 1]! % 1024;
      const gb = occ[i]! % 1024;
      if (ga === gb) continue;
      const d = Math.floor(occ[i]! / 1024) - Math.floor(occ[i - 1]! / 1024);
      if (d <= 0) continue;
      acc[ga] = acc[ga]! + idf[gb]! / (d * d);
      acc[gb] = acc[gb]! + idf[ga]! / (d * d);
    }
    const b = field === 0 ? params.bTitle : params.bText;
    const K = params.k1 * (1 - b + (field === 0 ? 0 : (b * Math.max(0, textLength)) / (stats.avgText || 1)));
    for (let g = 0; g < groups.length; g++) {
      const a = acc[g]!;
      if (a > 0) bonus += Math.min(1, idf[g]!) * ((a * (params.k1 + 1)) / (a + K));
    }
  }
  return bonus;
}

/** Best first; equal scores by document id (insertion order), the same on every backend. */
export function byScore(a: Scored, b: Scored): number {
  return b.score - a.score || a.doc - b.doc;
}

/** Candidates as parallel arrays (document ids and scores). */
export interface Candidates {
  readonly docs: Float64Array;
  readonly scores: Float64Array;
  readonly length: number;
}

/** The k-th largest value (1-based) of `values` (reordered in place): quickselect. */
function kthLargest(values: Float64Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target]!;
  }
  return values[target]!;
}

/** The `k` best candidates, best first: a threshold by quickselect, then a sort of what passes it. */
export function topK(c: Candidates, k: number): Scored[] {
  if (k <= 0 || c.length === 0) return [];
  const threshold = c.length <= k ? -Infinity : kthLargest(c.scores.slice(0, c.length), k);
  const out: Scored[] = [];
  for (let i = 0; i < c.length; i++) if (c.scores[i]! >= threshold) out.push({ doc: c.docs[i]!, score: c.scores[i]! });
  return out.sort(byScore).slice(0, k);
}

/**
 * The `limit` best after the proximity bonus: the `depth` best by BM25F get
 * the bonus and are reordered; below them the BM25F order stands.
 */
export function rerank(plan: QueryPlan, ev: Evaluation, candidates: Candidates, limit: number, postings: Postings, stats: CorpusStats, params: RankingParams): Scored[] {
  const prox = params.proximityWeight > 0 && plan.groups.length >= 2;
  const depth = prox ? Math.max(params.proximityDepth, 0) : 0;
  const best = topK(candidates, Math.max(limit, depth));
  if (!prox) return best.slice(0, limit);
  const head = best.slice(0, depth);
  for (const c of head) c.score += params.proximityWeight * proximity(plan, ev.idf, postings, c.doc, stats, params);
  head.sort(byScore);
  return head.concat(best.slice(depth)).slice(0, limit);
}

/**
 * News order: "newest first among equally relevant ones". Relevance is cut
 * into tiers `newsTier` of the best score wide (with 0.1: 90-100 % of the
 * best score, 80-90 %, ...); tiers keep their order, and inside a tier the
 * newest comes first (then the higher score).
 */
export function newsOrder(ranked: Scored[], published: ReadonlyMap<number, number | null>, tier: number): Scored[] {
  const top = ranked[0]?.score ?? 0;
  if (top <= 0 || tier <= 0) return ranked;
  const t = (s: number) => Math.min(Math.floor((top - s) / (top * tier)), 1e9);
  return [...ranked].sort((a, b) => t(a.score) - t(b.score) || (published.get(b.doc) ?? 0) - (published.get(a.doc) ?? 0) || byScore(a, b));
}

// ---------------------------------------------------------------------------
// Snippets

export interface Snippet {
  readonly snippet: string;
  readonly highlights: readonly (readonly [number, number])[];
}

const SNIPPET_TARGET = 240;
const SNIPPET_MAX = 300;
const SNIPPET_MIN = 160;
const WINDOW = 30;

/**
 * The best passage of `text` for the query: the 30-token window holding the
 * most (and rarest) distinct query words, widened to about 240 characters
 * at word boundaries; plain text with whitespace collapsed, "…" where it was
 * cut; highlights are the UTF-16 ranges of words whose term (under the
 * document's analyser) is one of the query's forms.
 */
export function makeSnippet(text: string, key: string, plan: QueryPlan, idf: readonly number[], postings: Postings, doc: number): Snippet {
  if (text.length === 0) return { snippet: '', highlights: [] };
  const forms = new Set<string>();
  for (const g of plan.groups) for (const f of g.forms) forms.add(f);
  for (const alts of plan.required) for (const a of alts) for (const t of a.sequence.tokens) for (const f of t.forms) forms.add(f);

  // Match positions in the text, by group.
  const occ: { pos: number; g: number }[] = [];
  plan.groups.forEach((g, i) => {
    for (const p of tokenPositions(postings, g.forms, doc, 1)) occ.push({ pos: p, g: i });
  });
  occ.sort((a, b) => a.pos - b.pos);
  let anchor = 0;
  if (occ.length > 0) {
    let best = -1;
    let j = 0;
    const seen = new Map<number, number>();
    for (let i = 0; i < occ.length; i++) {
      while (occ[i]!.pos - occ[j]!.pos >= WINDOW) {
        const gj = occ[j]!.g;
        const c = seen.get(gj)! - 1;
        if (c === 0) seen.delete(gj);
        else seen.set(gj, c);
        j++;
      }
      seen.set(occ[i]!.g, (seen.get(occ[i]!.g) ?? 0) + 1);
      let s = 0;
      for (const [g, c] of seen) s += (idf[g] ?? 1) * (1 + 0.1 * (c - 1));
      if (s > best + 1e-9) {
        best = s;
        anchor = occ[j]!.pos;
      }
    }
  }

  // Tokens around the anchor, with their offsets.
  const toks: { start: number; end: number; token: string; cjk: boolean }[] = [];
  const from = Math.max(0, anchor - 60);
  let anchorIndex = -1;
  tokenize(text, (token, pos, start, end, cjk) => {
    if (pos < from) return;
    if (pos === anchor) anchorIndex = toks.length;
    toks.push({ start, end, token, cjk });
    return pos < anchor + 80;
  });
  if (toks.length === 0) return plain(text.slice(0, SNIPPET_TARGET), text.length > SNIPPET_TARGET, false, text.length);
  if (anchorIndex < 0) anchorIndex = 0;

  // Start a few words before the anchor (or at the text's start when it is near), then widen.
  let si = anchor <= 8 && from === 0 ? 0 : Math.max(0, anchorIndex - 3);
  let start = si === 0 && from === 0 ? 0 : toks[si]!.start;
  let ei = si;
  while (ei + 1 < toks.length && toks[ei + 1]!.end - start <= SNIPPET_TARGET) ei++;
  let end = toks[ei]!.end;
  const lastKnown = toks[toks.length - 1]!;
  if (ei === toks.length - 1 && lastKnown.end < text.length && lastKnown.end - start < SNIPPET_TARGET) end = lastKnown.end;
  // Near the end of the text: take words before the start instead.
  while (si > 0 && end - toks[si - 1]!.start <= SNIPPET_MAX && (end - start < SNIPPET_MIN || end - toks[si - 1]!.start <= SNIPPET_TARGET)) {
    si--;
    start = toks[si]!.start;
  }
  if (si === 0 && from === 0) start = 0;
  // Past the last word: keep the text's closing punctuation.
  if (ei === toks.length - 1 && text.length - end <= 3 && !/\p{L}|\p{N}/u.test(text.slice(end))) end = text.length;

  const ranges: [number, number][] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.start < start || t.end > end) continue;
    const term = termOf(t.token, key, t.cjk);
    if (term !== null && forms.has(term)) ranges.push([t.start, t.end]);
  }
  return collapse(text, start, end, ranges);
}

function plain(s: string, cutEnd: boolean, cutStart: boolean, _n: number): Snippet {
  return collapse(s, 0, s.length, [], cutStart, cutEnd);
}

const SPACE_RUN = /[\s\x00-\x1f\x7f]+/gu;

/** text[start, end) with whitespace runs made one space and trimmed, "…" marking cuts; ranges moved to match (overlaps merged). */
function collapse(text: string, start: number, end: number, ranges: [number, number][], cutStart = start > 0, cutEnd = end < text.length): Snippet {
  const slice = text.slice(start, end);
  const prefix = cutStart ? '… ' : '';
  // map[i]: where slice offset i lands in the output (before the prefix).
  const map = new Int32Array(slice.length + 1);
  const parts: string[] = [];
  let o = 0;
  let last = 0;
  for (const m of slice.matchAll(SPACE_RUN)) {
    const at = m.index;
    for (let i = last; i < at; i++) map[i] = o + (i - last);
    parts.push(slice.slice(last, at));
    o += at - last;
    const space = o > 0 && at + m[0].length < slice.length;
    for (let i = at; i < at + m[0].length; i++) map[i] = o;
    if (space) {
      parts.push(' ');
      o++;
    }
    last = at + m[0].length;
  }
  for (let i = last; i <= slice.length; i++) map[i] = o + (i - last);
  parts.push(slice.slice(last));
  const body = parts.join('');
  const out = prefix + body + (cutEnd ? ' …' : '');
  const highlights: [number, number][] = [];
  for (const [a, b] of ranges) {
    const s = prefix.length + map[a - start]!;
    const e = prefix.length + Math.min(map[b - start]!, body.length);
    if (e <= s) continue;
    const prev = highlights[highlights.length - 1];
    if (prev !== undefined && s <= prev[1]) prev[1] = Math.max(prev[1], e);
    else highlights.push([s, e]);
  }
  return { snippet: out, highlights };
}
