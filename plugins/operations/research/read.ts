/**
 * The read stage: each source's text split into sentences as text really
 * comes (plugins/sdk/sentences.ts: a single line break inside a sentence
 * is not a boundary, a blank line, a heading, a list item and terminal
 * punctuation are; line-end hyphenation undone in the reading), sentences
 * grouped into
 * passages (3 sentences, stride 2), and both ranked against the question
 * with BM25 (k1 1.2, b 0.75, the index's own analysis of words) over
 * weighted query terms: the question's words 1, the key phrases, focus
 * areas and entities 0.5, the other sub-queries' words 0.3. A sentence
 * naming a requested entity gets +20% of the best score. Relevance is
 * normalised to 0..1 by the best sentence (or passage) of the corpus; a
 * sentence's final relevance is 0.7 of its own and 0.3 of its best passage.
 *
 * Every sentence is a span of its source's stored text: `text.slice(start,
 * end)` is the sentence, so evidence quoted from it is verbatim.
 */
import type { Corpus, Passage, ResearchInput, ResearchPlan, ResearchSource, Sentence, IndexTokenizer } from '../../../core/research.js';
import { sentenceSpans } from '../../sdk/sentences.js';

/** Sentences shorter than this are not quoted (headings, list bullets). */
export const MIN_SENTENCE = 20;
/** Sentences longer than this are not quoted (run-on lists, tables flattened to text). */
export const MAX_SENTENCE = 1200;
/** Sentences read per source. */
export const MAX_SENTENCES_PER_SOURCE = 3000;
const K1 = 1.2;
const B = 0.75;
const PASSAGE = 3;
const STRIDE = 2;

/**
 * The sentences of a source: exact spans of its text (`sentenceSpans`),
 * each with its reading; spans shorter than MIN_SENTENCE or longer than
 * MAX_SENTENCE characters, or with no letter, are left out.
 */
export function splitSentences(source: Pick<ResearchSource, 'id' | 'text' | 'language'>): Sentence[] {
  const text = source.text;
  const out: Sentence[] = [];
  for (const span of sentenceSpans(text)) {
    const len = span.end - span.start;
    if (len < MIN_SENTENCE || len > MAX_SENTENCE) continue;
    const slice = text.slice(span.start, span.end);
    if (!/\p{L}/u.test(slice)) continue;
    out.push(span.reading === slice
      ? { sourceId: source.id, start: span.start, end: span.end, text: slice, index: out.length }
      : { sourceId: source.id, start: span.start, end: span.end, text: slice, reading: span.reading, index: out.length });
    if (out.length >= MAX_SENTENCES_PER_SOURCE) break;
  }
  return out;
}

interface Unit { readonly terms: readonly string[] }

/** BM25 scores of units against weighted query terms (document frequencies over the units themselves). */
function bm25(units: readonly Unit[], query: ReadonlyMap<string, number>): Float64Array {
  const scores = new Float64Array(units.length);
  if (units.length === 0 || query.size === 0) return scores;
  const df = new Map<string, number>();
  let total = 0;
  for (const u of units) {
    total += u.terms.length;
    const seen = new Set<string>();
    for (const t of u.terms) if (query.has(t) && !seen.has(t)) { seen.add(t); df.set(t, (df.get(t) ?? 0) + 1); }
  }
  const avg = total / units.length || 1;
  const n = units.length;
  const idf = new Map<string, number>();
  for (const [t, d] of df) idf.set(t, Math.log(1 + (n - d + 0.5) / (d + 0.5)));
  units.forEach((u, i) => {
    const tf = new Map<string, number>();
    for (const t of u.terms) if (query.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    let s = 0;
    for (const [t, f] of tf) s += query.get(t)! * idf.get(t)! * (f * (K1 + 1)) / (f + K1 * (1 - B + B * u.terms.length / avg));
    scores[i] = s;
  });
  return scores;
}

/** The weighted query of a plan. */
export function queryTerms(question: string, plan: ResearchPlan, input: ResearchInput, tokenizer: IndexTokenizer, languages: readonly (string | null)[] = [plan.language ?? null]): Map<string, number> {
  const q = new Map<string, number>();
  // Under each language's tokenizer rules the sources use, so a stemmed source matches the stemmed query.
  const add = (text: string, w: number) => {
    for (const lang of languages) for (const t of tokenizer.terms(text, lang)) q.set(t, Math.max(q.get(t) ?? 0, w));
  };
  for (const s of plan.subQueries.slice(1)) add(s, 0.3);
  for (const k of plan.keyphrases) add(k, 0.5);
  for (const f of input.focus_areas ?? []) add(f, 0.5);
  for (const e of input.entities ?? []) add(e, 0.5);
  add(question, 1);
  return q;
}

function mostCommon(values: readonly (string | null)[]): string | null {
  const n = new Map<string | null, number>();
  for (const v of values) n.set(v, (n.get(v) ?? 0) + 1);
  let best: string | null = null;
  let count = 0;
  for (const [v, c] of n) if (c > count) { best = v; count = c; }
  return best;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The corpus: sentences, passages and relevance for every source. */
export function readSources(args: {
  readonly input: ResearchInput;
  readonly plan: ResearchPlan;
  readonly sources: readonly ResearchSource[];
  readonly tokenizer: IndexTokenizer;
  readonly now: number;
}): Corpus {
  const { input, plan, sources, tokenizer } = args;
  const sentences = new Map<string, Sentence[]>();
  const flat: Sentence[] = [];
  const sentTerms: string[][] = [];
  for (const s of sources) {
    const list = splitSentences(s);
    sentences.set(s.id, list);
    for (const x of list) {
      flat.push(x);
      sentTerms.push(tokenizer.terms(x.reading ?? x.text, s.language));
    }
  }
  const languages = [...new Set(sources.map((s) => s.language))];
  const query = queryTerms(input.research_query, plan, input, tokenizer, languages.length > 0 ? languages : [plan.language ?? null]);
  const raw = bm25(sentTerms.map((terms) => ({ terms })), query);
  const entityRe = (input.entities ?? []).length === 0
    ? undefined
    : new RegExp(`(?<![\\p{L}\\p{N}])(${(input.entities ?? []).map((e) => escapeRe(e.trim())).filter((e) => e !== '').join('|')})(?![\\p{L}\\p{N}])`, 'iu');
  let best = 0;
  for (let i = 0; i < raw.length; i++) best = Math.max(best, raw[i]!);
  if (entityRe !== undefined) {
    const bonus = (best || 1) * 0.2;
    flat.forEach((x, i) => { if (entityRe.test(x.reading ?? x.text)) raw[i] = raw[i]! + bonus; });
    best = 0;
    for (let i = 0; i < raw.length; i++) best = Math.max(best, raw[i]!);
  }
  const own = Array.from(raw, (v) => (best > 0 ? v / best : 0));

  // Passages per source over its sentences.
  const passages: Passage[] = [];
  const passageUnits: Unit[] = [];
  const passageOf: number[][] = [];
  let offset = 0;
  for (const s of sources) {
    const list = sentences.get(s.id)!;
    for (let i = 0; i < list.length; i += STRIDE) {
      const group = list.slice(i, i + PASSAGE);
      if (group.length === 0) break;
      const idx = group.map((_, j) => offset + i + j);
      passageOf.push(idx);
      passageUnits.push({ terms: idx.flatMap((k) => sentTerms[k]!) });
      passages.push({ sourceId: s.id, sentences: group, start: group[0]!.start, end: group[group.length - 1]!.end, relevance: 0 });
      if (i + PASSAGE >= list.length) break;
    }
    offset += list.length;
  }
  const pScores = bm25(passageUnits, query);
  let pBest = 0;
  for (let i = 0; i < pScores.length; i++) pBest = Math.max(pBest, pScores[i]!);
  const bestPassage = new Float64Array(flat.length);
  const ranked = passages.map((p, i) => {
    const r = pBest > 0 ? pScores[i]! / pBest : 0;
    for (const k of passageOf[i]!) bestPassage[k] = Math.max(bestPassage[k]!, r);
    return { ...p, relevance: Math.round(r * 1e4) / 1e4 };
  });
  ranked.sort((a, b) => b.relevance - a.relevance || (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : a.start - b.start));

  const sentenceRelevance = new Map<string, number>();
  flat.forEach((x, i) => sentenceRelevance.set(`${x.sourceId}:${x.index}`, Math.round((0.7 * own[i]! + 0.3 * bestPassage[i]!) * 1e4) / 1e4));

  return {
    question: input.research_query,
    input,
    plan,
    sources,
    sentences,
    passages: ranked,
    sentenceRelevance,
    now: args.now,
    // One language's rules for the analysers' comparisons: the request's language, else the sources' most common one.
    terms: (text: string) => tokenizer.terms(text, plan.language ?? mostCommon(sources.map((s) => s.language))),
  };
}
