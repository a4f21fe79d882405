/**
 * executive_summary (always listed): an extractive summary, every sentence
 * quoted verbatim from a source and traceable to it.
 *
 * 1. Candidates: the 300 most relevant sentences with relevance >= 0.05 to
 *    the question, 40 to 400 characters, not boilerplate (cookie,
 *    subscription, copyright notices, text in capitals, mostly digits),
 *    statements a reader would accept (`isStatement`: a finite verb, six
 *    words or more, starting and ending as a sentence does; never a keyword
 *    line, byline, title or caption), with >= 3 distinct terms
 *    (corpus.terms of the sentence as it reads).
 * 2. TextRank (Mihalcea and Tarau, 2004) over the candidates: edge weight
 *    = |shared terms| / (log |terms i| + log |terms j|), distinct terms;
 *    weighted PageRank with damping 0.85, iterated until no score moves by
 *    1e-6 (at most 100 rounds).
 * 3. score = 0.5 TextRank / best TextRank + 0.5 relevance.
 * 4. MMR, lambda 0.7: repeatedly pick the candidate maximising 0.7 score -
 *    0.3 (highest Jaccard of terms with a picked sentence); a candidate
 *    whose Jaccard with a picked sentence exceeds 0.6, or whose terms are
 *    80% or more inside a picked sentence's (or the other way round), is a
 *    near duplicate and never picked. 3 / 5 / 8 sentences by depth (quick /
 *    standard / comprehensive).
 * 5. Order, so the summary reads as prose: first the picked sentence most
 *    relevant to the question (its main topic), then the others that agree
 *    with the corpus, most central first (TextRank), then those that state
 *    a disagreement or a limit (however, but, although, not, only,
 *    limited, unclear, fails, ...), most central first.
 * 6. `executive_summary`: each sentence as it reads (line breaks as
 *    spaces, line-end hyphenation undone, nothing else changed) followed
 *    by its source's citation marker (` [3]` for src_3), joined by a
 *    space. `summary_evidence`: each sentence's exact span, in the same
 *    order.
 * With generate_summary false the summary is "" and there is no evidence.
 */
import { definePlugin } from '../../core/plugin.js';
import { evidenceOf, type AnalyserPlugin, type Corpus, type Evidence, type Sentence } from '../../core/research.js';
import { isBoilerplateSentence, isStatementSentence, jaccard, markerOf, rankedSentences, readingOfSentence } from './nlp.js';

export const CANDIDATES = 300;
export const MIN_RELEVANCE = 0.05;
export const MIN_CHARS = 40;
export const MAX_CHARS = 400;
export const MIN_TERMS = 3;
export const DAMPING = 0.85;
export const TOLERANCE = 1e-6;
export const MAX_ROUNDS = 100;
export const LAMBDA = 0.7;
export const DUPLICATE = 0.6;
export const CONTAINED = 0.8;
export const SENTENCES = { quick: 3, standard: 5, comprehensive: 8 } as const;

export interface Summary {
  readonly executive_summary: string;
  readonly summary_evidence: readonly Evidence[];
}

interface Cand {
  readonly s: Sentence;
  readonly r: number;
  readonly terms: ReadonlySet<string>;
}

/** Words that mark a statement of disagreement or of a limit (the summary says these last). */
const LIMITS = new Set([
  'however', 'but', 'although', 'though', 'whereas', 'yet', 'despite', 'nevertheless', 'nonetheless', 'contrary', 'contrast', 'not',
  'no', 'never', 'cannot', "can't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", 'only', 'limited', 'limitation',
  'limitations', 'limit', 'unclear', 'unknown', 'uncertain', 'fail', 'fails', 'failed', 'disagree', 'disagrees', 'drawback', 'drawbacks',
  'disadvantage', 'disadvantages', 'inadequate', 'insufficient', 'less', 'lack', 'lacks', 'problem', 'problems', 'difficult', 'difficulty',
]);

/** Whether a sentence states a disagreement or a limit. */
export function statesLimit(reading: string): boolean {
  for (const w of reading.toLowerCase().split(/[^\p{L}'’]+/u)) if (LIMITS.has(w.replace('’', "'"))) return true;
  return false;
}

/** Share of the smaller term set found in the larger one. */
function containment(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (small.size === 0) return 0;
  let inside = 0;
  for (const t of small) if (large.has(t)) inside++;
  return inside / small.size;
}

/** TextRank scores of term sets (weighted PageRank over the sentence similarity graph). */
export function textRank(sets: readonly ReadonlySet<string>[]): number[] {
  const n = sets.length;
  if (n === 0) return [];
  // Shared-term counts through an inverted index (term -> the sets having it), in a dense n x n matrix.
  const having = new Map<string, number[]>();
  sets.forEach((set, i) => { for (const t of set) { const l = having.get(t); if (l === undefined) having.set(t, [i]); else l.push(i); } });
  const shared = new Uint16Array(n * n);
  for (const list of having.values()) {
    for (let a = 0; a < list.length; a++) {
      const row = list[a]! * n;
      for (let b = a + 1; b < list.length; b++) shared[row + list[b]!]!++;
    }
  }
  const logs = sets.map((s) => Math.log(s.size));
  const weight = new Float64Array(n * n);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const c = shared[i * n + j]!;
      const den = logs[i]! + logs[j]!;
      if (c === 0 || den <= 0) continue;
      const w = c / den;
      weight[i * n + j] = w;
      weight[j * n + i] = w;
      out[i]! += w;
      out[j]! += w;
    }
  }
  let score = new Float64Array(n).fill(1);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = new Float64Array(n).fill(1 - DAMPING);
    for (let j = 0; j < n; j++) {
      if (out[j] === 0) continue;
      const share = (DAMPING * score[j]!) / out[j]!;
      const row = j * n;
      for (let i = 0; i < n; i++) {
        const w = weight[row + i]!;
        if (w !== 0) next[i]! += share * w;
      }
    }
    let delta = 0;
    for (let i = 0; i < n; i++) delta = Math.max(delta, Math.abs(next[i]! - score[i]!));
    score = next;
    if (delta < TOLERANCE) break;
  }
  return Array.from(score);
}

export function summarise(corpus: Corpus): Summary {
  const depth = corpus.plan.depth;
  const count = SENTENCES[depth] ?? SENTENCES.standard;
  const ranked = rankedSentences(corpus, CANDIDATES * 4, (s, r) =>
    r >= MIN_RELEVANCE && s.text.length >= MIN_CHARS && s.text.length <= MAX_CHARS && !isBoilerplateSentence(s) && isStatementSentence(corpus, s));
  const cands: Cand[] = [];
  for (const x of ranked) {
    if (cands.length >= CANDIDATES) break;
    const terms = new Set(corpus.terms(readingOfSentence(x.s)));
    if (terms.size < MIN_TERMS) continue;
    cands.push({ ...x, terms });
  }
  if (cands.length === 0) return { executive_summary: '', summary_evidence: [] };
  const tr = textRank(cands.map((c) => c.terms));
  const best = Math.max(...tr);
  const score = cands.map((c, i) => 0.5 * (best > 0 ? tr[i]! / best : 0) + 0.5 * c.r);

  const picked: number[] = [];
  const out = new Set<number>();
  while (picked.length < count) {
    let pick = -1;
    let pickValue = -Infinity;
    for (let i = 0; i < cands.length; i++) {
      if (out.has(i)) continue;
      let sim = 0;
      let dup = false;
      for (const p of picked) {
        sim = Math.max(sim, jaccard(cands[i]!.terms, cands[p]!.terms));
        if (containment(cands[i]!.terms, cands[p]!.terms) >= CONTAINED) dup = true;
      }
      if (dup || sim > DUPLICATE) { out.add(i); continue; }
      const value = LAMBDA * score[i]! - (1 - LAMBDA) * sim;
      if (value > pickValue) { pickValue = value; pick = i; }
    }
    if (pick < 0) break;
    picked.push(pick);
    out.add(pick);
  }
  // The question's main topic first, then agreement, then disagreement or limits.
  let lead = -1;
  for (const i of picked) if (lead < 0 || cands[i]!.r > cands[lead]!.r) lead = i;
  const rest = picked.filter((i) => i !== lead).sort((a, b) => tr[b]! - tr[a]! || a - b);
  const limits = rest.filter((i) => statesLimit(readingOfSentence(cands[i]!.s)));
  const agree = rest.filter((i) => !limits.includes(i));
  const order = lead < 0 ? [] : [lead, ...agree, ...limits];
  const sentences = order.map((i) => cands[i]!.s);
  return {
    executive_summary: sentences.map((s) => `${readingOfSentence(s)} ${markerOf(s.sourceId)}`).join(' '),
    summary_evidence: sentences.map(evidenceOf),
  };
}

export const SUMMARY_METHOD = `extractive: TextRank (term-overlap similarity, damping ${DAMPING}) over the ${CANDIDATES} most relevant statements (finite verb, 6+ words, sentence-shaped), score 0.5 TextRank + 0.5 relevance, MMR lambda ${LAMBDA}, near duplicates (Jaccard > ${DUPLICATE} or ${CONTAINED * 100}% contained) skipped; ${SENTENCES.quick} / ${SENTENCES.standard} / ${SENTENCES.comprehensive} sentences by depth, the most relevant first, then agreement, then limits; each as it reads (exact spans in summary_evidence) with its source's [n]`;

export const summaryAnalyser: AnalyserPlugin<'analyser-summary'> = definePlugin({
  name: 'analyser-summary',
  kind: 'analyser',
  id: 'executive_summary',
  order: 50,
  method: SUMMARY_METHOD,
  description: 'executive_summary: extractive, non-redundant, every sentence verbatim and cited.',
  applies: () => true,
  analyse(corpus: Corpus) {
    if (corpus.input.generate_summary === false) {
      return { fields: { executive_summary: '' }, notes: ['executive_summary: not generated (generate_summary false)'] };
    }
    const summary = summarise(corpus);
    return {
      fields: { executive_summary: summary.executive_summary, summary_evidence: summary.summary_evidence },
      notes: [`executive_summary: ${summary.summary_evidence.length} sentence(s) of ${SENTENCES[corpus.plan.depth] ?? SENTENCES.standard} wanted, from the ${CANDIDATES} most relevant sentences (relevance >= ${MIN_RELEVANCE}, ${MIN_CHARS}-${MAX_CHARS} characters)`],
    };
  },
});
