/**
 * key_insights: groups of agreeing statements across sources, found without
 * a model.
 *
 * 1. Candidates: the most relevant sentences of the corpus (relevance >=
 *    0.15; 40 to 400 characters; at least 4 terms; not boilerplate) that
 *    are statements a reader would accept (`isStatement`: a finite verb,
 *    six words or more, starting and ending as a sentence does; never a
 *    keyword line, byline, title or caption), at most 60 / 120 / 200 by
 *    depth.
 * 2. Grouping, most relevant first: a sentence joins the first group whose
 *    statement it resembles (cosine of idf-weighted term sets >= 0.3), else
 *    it starts a group. With cross_reference, a resembling sentence of the
 *    opposite polarity (a negation, or a change word of the other direction:
 *    increase / decrease, higher / lower, ...) contradicts the group instead.
 * 3. A group's statement is its first sentence (the most relevant) as it
 *    reads (line breaks as spaces, line-end hyphenation undone; nothing
 *    else changed), and `statement_evidence` quotes it verbatim at its
 *    offsets; its evidence is the best sentence of each supporting source
 *    (at most 5).
 * 4. confidence = 0.5 agreement + 0.25 relevance + 0.15 quality + 0.1 recency
 *    (agreement across independent sites weighs most: one site saying a
 *    thing is a claim, several saying it is a finding):
 *    - agreement = (1 - 0.75 * 0.5^(d-1)) * s / (s + c), d distinct supporting
 *      domains (1: 0.25, 2: 0.625, 3: 0.81, 4: 0.91),
 *      s supporting and c contradicting sources;
 *    - relevance = mean relevance of the evidence sentences;
 *    - quality = mean quality prior of the supporting sources;
 *    - recency = mean of exp(-age in years / 5) over supporting sources
 *      (0.5 for an undated one).
 * 5. Insights below confidence_threshold are dropped; at most 5 / 8 / 12 by
 *    depth, highest confidence first.
 */
import { definePlugin } from '../../core/plugin.js';
import { isStatementSentence, readingOfSentence } from './nlp.js';
import {
  evidenceOf, round4, type AnalyserPlugin, type Corpus, type Evidence, type KeyInsight, type ResearchSource, type Sentence,
} from '../../core/research.js';

const CANDIDATES = { quick: 60, standard: 120, comprehensive: 200 } as const;
const LIMIT = { quick: 5, standard: 8, comprehensive: 12 } as const;
export const MIN_RELEVANCE = 0.15;
export const SIMILARITY = 0.3;
const YEAR = 365.25 * 86_400_000;

const BOILERPLATE = /\b(cookie|cookies|subscribe|newsletter|sign up|log in|login|all rights reserved|copyright|privacy policy|terms of (use|service)|click here|javascript|advertisement)\b/i;
const NEGATION = /\b(not|no|never|none|neither|nor|cannot|can't|won't|doesn't|don't|didn't|isn't|aren't|wasn't|weren't|without|fails? to|failed to|lack of|unable)\b/gi;
const UP = /\b(increase[sd]?|increasing|rise[sn]?|rising|rose|grow[sn]?|growing|grew|growth|higher|more|improve[sd]?|improving|gain(?:s|ed)?|boost(?:s|ed)?|up|expand(?:s|ed)?|positive)\b/gi;
const DOWN = /\b(decrease[sd]?|decreasing|decline[sd]?|declining|fall[sn]?|falling|fell|drop(?:s|ped)?|lower|less|fewer|reduce[sd]?|reducing|reduction|worsen(?:s|ed)?|shrink(?:s|ing)?|shrank|down|negative)\b/gi;

const count = (re: RegExp, s: string) => (s.match(re) ?? []).length;

/** +1 or -1: the sentence's polarity (negations flip, change words set a direction). */
export function polarity(text: string): number {
  const neg = count(NEGATION, text) % 2 === 1 ? -1 : 1;
  const dir = Math.sign(count(UP, text) - count(DOWN, text)) || 1;
  return neg * dir;
}

interface Cand {
  readonly sentence: Sentence;
  readonly source: ResearchSource;
  readonly relevance: number;
  readonly vec: Map<string, number>;
  readonly norm: number;
  readonly polarity: number;
}

interface Group {
  readonly head: Cand;
  readonly support: Cand[];
  readonly contra: Cand[];
}

function cosine(a: Cand, b: Cand): number {
  if (a.norm === 0 || b.norm === 0) return 0;
  let dot = 0;
  const [small, large] = a.vec.size <= b.vec.size ? [a.vec, b.vec] : [b.vec, a.vec];
  for (const [t, w] of small) {
    const v = large.get(t);
    if (v !== undefined) dot += w * v;
  }
  return dot / (a.norm * b.norm);
}

const recencyOf = (s: ResearchSource, now: number) =>
  s.meta.publishedAt === null ? 0.5 : Math.exp(-Math.max(0, now - s.meta.publishedAt) / YEAR / 5);

/** The insights of a corpus (exported for the recommendations, the model plugin and tests). */
export function findInsights(corpus: Corpus): KeyInsight[] {
  const depth = corpus.plan.depth;
  const cross = corpus.input.cross_reference ?? true;
  const byId = new Map(corpus.sources.map((s) => [s.id, s]));
  const pool: { s: Sentence; r: number }[] = [];
  for (const [, list] of corpus.sentences) {
    for (const s of list) {
      const r = corpus.sentenceRelevance.get(`${s.sourceId}:${s.index}`) ?? 0;
      if (r < MIN_RELEVANCE || s.text.length < 40 || s.text.length > 400 || BOILERPLATE.test(s.text)) continue;
      pool.push({ s, r });
    }
  }
  pool.sort((a, b) => b.r - a.r || (a.s.sourceId < b.s.sourceId ? -1 : a.s.sourceId > b.s.sourceId ? 1 : a.s.start - b.s.start));
  const top: { s: Sentence; r: number }[] = [];
  for (const p of pool) {
    if (top.length >= CANDIDATES[depth]) break;
    if (isStatementSentence(corpus, p.s)) top.push(p);
  }

  // idf over the candidates' sources' sentences.
  const termLists = top.map((p) => corpus.terms(readingOfSentence(p.s)));
  const df = new Map<string, number>();
  for (const terms of termLists) for (const t of new Set(terms)) df.set(t, (df.get(t) ?? 0) + 1);
  const n = Math.max(1, top.length);
  const cands: Cand[] = [];
  top.forEach((p, i) => {
    const terms = termLists[i]!;
    if (new Set(terms).size < 4) return;
    const vec = new Map<string, number>();
    for (const t of terms) vec.set(t, Math.log(1 + n / (df.get(t) ?? 1)));
    let norm = 0;
    for (const w of vec.values()) norm += w * w;
    cands.push({ sentence: p.s, source: byId.get(p.s.sourceId)!, relevance: p.r, vec, norm: Math.sqrt(norm), polarity: polarity(readingOfSentence(p.s)) });
  });

  const groups: Group[] = [];
  for (const c of cands) {
    let placed = false;
    for (const g of groups) {
      if (cosine(g.head, c) < SIMILARITY) continue;
      if (cross && c.polarity !== g.head.polarity) g.contra.push(c);
      else g.support.push(c);
      placed = true;
      break;
    }
    if (!placed) groups.push({ head: c, support: [], contra: [] });
  }

  const insights: KeyInsight[] = groups.map((g) => {
    // The best sentence of each supporting source, the statement's own first.
    const bestBySource = new Map<string, Cand>([[g.head.source.id, g.head]]);
    for (const c of g.support) if (!bestBySource.has(c.source.id)) bestBySource.set(c.source.id, c);
    const supporting = [...bestBySource.values()];
    const contraSources = [...new Set(g.contra.map((c) => c.source.id))].filter((id) => !bestBySource.has(id));
    const domains = new Set(supporting.map((c) => c.source.domain));
    const s = supporting.length;
    const k = contraSources.length;
    const agreement = (1 - 0.75 * 0.5 ** (domains.size - 1)) * (s / (s + k));
    const evidence = supporting.slice(0, 5);
    const relevance = evidence.reduce((a, c) => a + c.relevance, 0) / evidence.length;
    const quality = supporting.reduce((a, c) => a + c.source.quality, 0) / s;
    const recency = supporting.reduce((a, c) => a + recencyOf(c.source, corpus.now), 0) / s;
    const confidence = 0.5 * agreement + 0.25 * relevance + 0.15 * quality + 0.1 * recency;
    // The topic: the statement's words with the highest weight that the group shares most.
    const weights = new Map<string, number>();
    for (const c of [g.head, ...g.support]) for (const [t, w] of c.vec) if (g.head.vec.has(t)) weights.set(t, (weights.get(t) ?? 0) + w);
    const top = new Set([...weights.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3).map(([t]) => t));
    // Said with the statement's own words (not the stems), in its order.
    const words: string[] = [];
    for (const m of readingOfSentence(g.head.sentence).matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)) {
      const t = corpus.terms(m[0])[0];
      if (t !== undefined && top.has(t)) {
        top.delete(t);
        words.push(m[0].toLowerCase());
      }
    }
    const topic = words.join(' ');
    const statementEvidence = evidenceOf(g.head.sentence);
    const base: KeyInsight = {
      id: '',
      statement: readingOfSentence(g.head.sentence),
      statement_evidence: statementEvidence,
      confidence: round4(confidence),
      confidence_parts: { agreement: round4(agreement), relevance: round4(relevance), quality: round4(quality), recency: round4(recency) },
      supporting_evidence: evidence.map((c) => evidenceOf(c.sentence)),
      topic,
    };
    if (!cross) return base;
    const contraEvidence: Evidence[] = [];
    for (const id of contraSources) {
      const c = g.contra.find((x) => x.source.id === id)!;
      contraEvidence.push(evidenceOf(c.sentence));
    }
    return {
      ...base,
      supporting_sources: supporting.map((c) => c.source.id),
      contradicting_sources: contraSources,
      contradicting_evidence: contraEvidence.slice(0, 5),
      agreement: round4(s / (s + k)),
    };
  });

  const threshold = corpus.input.confidence_threshold ?? 0;
  return insights
    .filter((x) => x.confidence >= threshold)
    .sort((a, b) => b.confidence - a.confidence || a.statement_evidence.source_id.localeCompare(b.statement_evidence.source_id) || a.statement_evidence.start - b.statement_evidence.start)
    .slice(0, LIMIT[depth])
    .map((x, i) => ({ ...x, id: `ins_${i + 1}` }));
}

export const insightsAnalyser: AnalyserPlugin<'analyser-key-insights'> = definePlugin({
  name: 'analyser-key-insights',
  kind: 'analyser',
  id: 'key_insights',
  order: 10,
  method: 'extractive grouping: BM25-ranked sentences grouped by idf-weighted cosine >= 0.3, polarity for contradictions; confidence 0.5 agreement + 0.25 relevance + 0.15 quality + 0.1 recency',
  description: 'key_insights: agreeing statements across sources, with confidence, evidence and cross-references.',
  applies: () => true,
  analyse(corpus: Corpus) {
    const insights = findInsights(corpus);
    return {
      fields: { key_insights: insights },
      notes: [`key_insights: ${insights.length} insight(s) from the most relevant sentences (relevance >= ${MIN_RELEVANCE}), grouped at cosine >= ${SIMILARITY}; confidence threshold ${corpus.input.confidence_threshold ?? 0}`],
    };
  },
});
