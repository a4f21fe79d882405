/**
 * sentiment (include_sentiment): how positive or negative the sources are
 * about the question, per source and overall, without a model.
 *
 * - A sentence's score is wink-nlp's `its.sentiment` (the English lite
 *   model's lexicon with negation and intensifiers), -1..1.
 * - The sentences scored for a source are its sentences with relevance >=
 *   0.1 to the question, at most the 40 most relevant (so at most 2,000 over
 *   50 sources); a source with none above that floor is scored on its 10
 *   most relevant sentences. Boilerplate (cookie notices, copyright lines,
 *   ...) is left out; a source with no other sentence is not listed.
 * - A source's score is the mean of its sentences' scores; `sentences` is
 *   how many were scored.
 * - overall = sum(w * score) / sum(w) over the listed sources, w = 0.1 +
 *   the mean relevance of the source's scored sentences (so sources about
 *   the question weigh more, and every source a little); overall.sentences
 *   is the total scored.
 * - Labels: score >= 0.1 positive, <= -0.1 negative, else neutral.
 */
import { round4, type Corpus, type Sentence } from '../../core/research.js';
import { allRanked, isBoilerplateSentence, nlpVersions, winkNlp, type Ranked } from './nlp.js';

export const RELEVANCE_FLOOR = 0.1;
export const PER_SOURCE = 40;
export const FALLBACK_PER_SOURCE = 10;
export const POSITIVE = 0.1;
export const NEGATIVE = -0.1;
/** Characters of a sentence that are scored (the read stage keeps sentences up to 1,200). */
const MAX_CHARS = 1200;

export type SentimentLabel = 'positive' | 'negative' | 'neutral';

export interface SentimentScore {
  readonly score: number;
  readonly label: SentimentLabel;
}

export interface SourceSentiment extends SentimentScore {
  readonly source_id: string;
  readonly sentences: number;
}

export interface SentimentField {
  readonly method: string;
  readonly overall: SentimentScore & { readonly sentences: number };
  readonly by_source: readonly SourceSentiment[];
}

export const labelOf = (score: number): SentimentLabel => (score >= POSITIVE ? 'positive' : score <= NEGATIVE ? 'negative' : 'neutral');

/** wink-nlp's sentiment of one sentence, -1..1 (0 for text without words). */
export function sentenceSentiment(text: string): number {
  if (!/\p{L}/u.test(text)) return 0;
  const { nlp, its } = winkNlp();
  let v: unknown;
  try {
    v = nlp.readDoc(text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text).out(its.sentiment);
  } catch {
    return 0;
  }
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? Math.max(-1, Math.min(1, n)) : 0;
}

const cache = new WeakMap<Sentence, number>();
/** The sentiment of a corpus sentence, computed once per sentence object. */
export function sentimentOfSentence(s: Sentence): number {
  let v = cache.get(s);
  if (v === undefined) {
    v = sentenceSentiment(s.text);
    cache.set(s, v);
  }
  return v;
}

/** Mean sentiment of sentences (0 and neutral for none). */
export function meanSentiment(sentences: readonly Sentence[]): SentimentScore {
  if (sentences.length === 0) return { score: 0, label: 'neutral' };
  const mean = sentences.reduce((a, s) => a + sentimentOfSentence(s), 0) / sentences.length;
  return { score: round4(mean), label: labelOf(round4(mean)) };
}

const V = nlpVersions();
export const SENTIMENT_METHOD = `wink-nlp ${V['wink-nlp']} with wink-eng-lite-web-model ${V['wink-eng-lite-web-model']}: its.sentiment per sentence (lexicon, negation, intensifiers; -1..1), mean over each source's relevant sentences (relevance >= ${RELEVANCE_FLOOR}, at most ${PER_SOURCE}), overall weighted by 0.1 + mean sentence relevance; positive >= ${POSITIVE}, negative <= ${NEGATIVE}`;

export function analyseSentiment(corpus: Corpus): SentimentField {
  // The most relevant non-boilerplate sentences of each source, best first, at most PER_SOURCE.
  const buckets = new Map<string, Ranked[]>(corpus.sources.map((s) => [s.id, []]));
  for (const x of allRanked(corpus)) {
    const bucket = buckets.get(x.s.sourceId);
    if (bucket === undefined || bucket.length >= PER_SOURCE || isBoilerplateSentence(x.s)) continue;
    bucket.push(x);
  }
  const bySource: SourceSentiment[] = [];
  let wsum = 0;
  let acc = 0;
  let total = 0;
  for (const src of corpus.sources) {
    const all = buckets.get(src.id)!;
    if (all.length === 0) continue;
    let picked = all.filter((x) => x.r >= RELEVANCE_FLOOR);
    if (picked.length === 0) picked = all.slice(0, FALLBACK_PER_SOURCE);
    const mean = picked.reduce((a, x) => a + sentimentOfSentence(x.s), 0) / picked.length;
    const relevance = picked.reduce((a, x) => a + x.r, 0) / picked.length;
    const w = 0.1 + relevance;
    wsum += w;
    acc += w * mean;
    total += picked.length;
    const score = round4(mean);
    bySource.push({ source_id: src.id, score, label: labelOf(score), sentences: picked.length });
  }
  const overall = wsum === 0 ? 0 : round4(acc / wsum);
  return {
    method: SENTIMENT_METHOD,
    overall: { score: overall, label: labelOf(overall), sentences: total },
    by_source: bySource,
  };
}
