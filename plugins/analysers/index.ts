/**
 * The built-in research analysers, in the order they run (by `order`):
 * key_insights (10), entity_analysis (20), sentiment (30), trend_analysis
 * (40), executive_summary (50), recommendations (90). Each applies on its
 * own request flags; the operation runs every registered analyser that
 * applies, so a team adds one by registering another plugin of kind
 * 'analyser'.
 */
import type { AnalyserPlugin } from '../../core/research.js';
import { insightsAnalyser } from './insights.js';
import { entitiesAnalyser } from './entities.js';
import { sentimentAnalyser } from './sentiment.js';
import { trendsAnalyser } from './trends.js';
import { summaryAnalyser } from './summary.js';
import { recommendationsAnalyser } from './recommendations.js';

export { insightsAnalyser, findInsights } from './insights.js';
export { entitiesAnalyser, analyseEntities, requestedEntities, discoverEntities, type EntityAnalysis, type EntityReport, type OtherEntity } from './entities.js';
export {
  sentimentAnalyser, analyseSentiment, sentenceSentiment, meanSentiment, labelOf, type SentimentField, type SentimentLabel, type SentimentScore, type SourceSentiment,
} from './sentiment.js';
export { trendsAnalyser, analyseTrends, changeDirection, textDates, quantities, type Trend, type TrendEvidence, type Direction } from './trends.js';
export { summaryAnalyser, summarise, textRank, type Summary } from './summary.js';
export { recommendationsAnalyser, recommend, type Recommendation } from './recommendations.js';
export { winkNlp, compromiseNlp, chronoNode, nlpVersions } from './nlp.js';

export const builtinAnalysers: readonly AnalyserPlugin[] = [
  insightsAnalyser,
  entitiesAnalyser,
  sentimentAnalyser,
  trendsAnalyser,
  summaryAnalyser,
  recommendationsAnalyser,
].sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
