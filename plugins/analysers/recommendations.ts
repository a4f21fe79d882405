/**
 * recommendations (generate_recommendations): made by rules from the
 * insights, trends, entity sentiment and the source counts, each with its
 * rationale and the insight ids (or trend topics) it rests on, labelled
 * `generated_by: "rules"`. The rules, in order of priority:
 *
 * 1. consensus: an insight with confidence >= 0.6 supported by >= 2
 *    domains and no contradiction: rely on it.
 * 2. contested: an insight with a contradicting source: verify it first.
 * 3. single source: an insight supported by one domain: corroborate it.
 * 4. trend: a rising or falling trend with confidence >= 0.5: monitor it.
 * 5. entity risk: a requested entity with negative sentiment over >= 2
 *    sources: review it.
 * 6. thin evidence: fewer than 3 sources used: broaden the research.
 *
 * The analysis type words the action (competitive: position against;
 * market: size the opportunity; literature_review: cite; general: act on).
 * At most 8.
 */
import { definePlugin } from '../../core/plugin.js';
import type { AnalyserPlugin, AnalysisSoFar, Corpus, KeyInsight } from '../../core/research.js';

export interface Recommendation {
  readonly id: string;
  readonly recommendation: string;
  readonly rationale: string;
  readonly priority: 'high' | 'medium' | 'low';
  readonly rule: string;
  readonly based_on: readonly string[];
  readonly trends?: readonly string[];
  readonly generated_by: 'rules';
}

interface TrendLike { readonly topic: string; readonly direction: string; readonly confidence: number }
interface EntityLike { readonly name: string; readonly sources: readonly string[]; readonly sentiment?: { readonly score: number; readonly label: string } }

const pct = (x: number) => `${Math.round(x * 100)}%`;
/** A statement quoted whole (insight statements are at most 400 characters; a longer one, from a rewriter, is cut at a word). */
const quote = (s: string, n = 400) => (s.length > n ? `${s.slice(0, n - 1).trimEnd()}…` : s);

const VERB: Readonly<Record<string, string>> = {
  general: 'Act on the finding',
  competitive: 'Factor into competitive positioning',
  market: 'Use in sizing the opportunity',
  literature_review: 'Cite as established in the literature',
};

export function recommend(corpus: Corpus, before: AnalysisSoFar): Recommendation[] {
  const insights = (before.key_insights?.fields.key_insights ?? []) as readonly KeyInsight[];
  const trends = (before.trend_analysis?.fields.trend_analysis ?? []) as readonly TrendLike[];
  const entities = ((before.entity_analysis?.fields.entity_analysis as { entities?: readonly EntityLike[] } | undefined)?.entities ?? []);
  const domainOf = new Map(corpus.sources.map((s) => [s.id, s.domain]));
  const out: Omit<Recommendation, 'id'>[] = [];
  const verb = VERB[corpus.plan.analysisType] ?? VERB.general!;

  for (const ins of insights) {
    const supporting = ins.supporting_sources ?? [...new Set(ins.supporting_evidence.map((e) => e.source_id))];
    const domains = new Set(supporting.map((id) => domainOf.get(id)));
    const contra = ins.contradicting_sources ?? [];
    if (contra.length > 0) {
      out.push({
        recommendation: `Verify before relying on: "${quote(ins.statement)}"`,
        rationale: `${contra.length} source(s) (${contra.join(', ')}) contradict it while ${supporting.length} support it (agreement ${pct(ins.agreement ?? 0)}).`,
        priority: 'high', rule: 'contested', based_on: [ins.id], generated_by: 'rules',
      });
    } else if (ins.confidence >= 0.6 && domains.size >= 2) {
      out.push({
        recommendation: `${verb}: "${quote(ins.statement)}"`,
        rationale: `${supporting.length} sources on ${domains.size} distinct domains agree and none contradicts it (confidence ${pct(ins.confidence)}).`,
        priority: 'high', rule: 'consensus', based_on: [ins.id], generated_by: 'rules',
      });
    } else if (domains.size <= 1) {
      out.push({
        recommendation: `Seek corroboration for: "${quote(ins.statement)}"`,
        rationale: `Only one domain (${[...domains][0] ?? 'unknown'}) supports it (confidence ${pct(ins.confidence)}).`,
        priority: 'medium', rule: 'single_source', based_on: [ins.id], generated_by: 'rules',
      });
    }
  }
  for (const t of trends) {
    if (t.direction === 'stable' || t.confidence < 0.5) continue;
    out.push({
      recommendation: `Monitor "${t.topic}": it is ${t.direction}.`,
      rationale: `Dated evidence across the sources shows a ${t.direction} trend (confidence ${pct(t.confidence)}).`,
      priority: 'medium', rule: 'trend', based_on: [], trends: [t.topic], generated_by: 'rules',
    });
  }
  for (const e of entities) {
    if (e.sentiment === undefined || e.sentiment.label !== 'negative' || e.sources.length < 2) continue;
    out.push({
      recommendation: `Review risks around ${e.name}.`,
      rationale: `Statements about ${e.name} in ${e.sources.length} sources are negative on balance (sentiment ${e.sentiment.score.toFixed(2)}).`,
      priority: 'medium', rule: 'entity_risk', based_on: [], generated_by: 'rules',
    });
  }
  const used = corpus.sources.length;
  if (used < 3) {
    out.push({
      recommendation: 'Broaden the research before drawing conclusions.',
      rationale: `Only ${used} source(s) could be read for this question; widen the sources, the timeframe or the depth.`,
      priority: 'low', rule: 'thin_evidence', based_on: [], generated_by: 'rules',
    });
  }
  const order = { high: 0, medium: 1, low: 2 } as const;
  return out
    .map((r, i) => ({ r, i }))
    .sort((a, b) => order[a.r.priority] - order[b.r.priority] || a.i - b.i)
    .slice(0, 8)
    .map(({ r }, i) => ({ id: `rec_${i + 1}`, ...r }));
}

export const recommendationsAnalyser: AnalyserPlugin<'analyser-recommendations'> = definePlugin({
  name: 'analyser-recommendations',
  kind: 'analyser',
  id: 'recommendations',
  order: 90,
  method: 'rules over insights, trends and entity sentiment: consensus, contested, single_source, trend, entity_risk, thin_evidence',
  description: 'recommendations: rule-based, each with its rationale and the insights it rests on.',
  applies: (i) => i.generate_recommendations === true,
  analyse(corpus: Corpus, before: AnalysisSoFar) {
    const recs = recommend(corpus, before);
    return { fields: { recommendations: recs }, notes: [`recommendations: ${recs.length} from rules (consensus, contested, single_source, trend, entity_risk, thin_evidence)`] };
  },
});
