/**
 * The sentiment analyser. What it does lives in sentiment-score.ts, a module of this kind
 * folder rather than of this plugin: the entities analyser scores sentences through it too.
 * Re-exported here for the modules that read it from this plugin.
 */
import { definePlugin } from '../../core/plugin.js';
import type { AnalyserPlugin, Corpus } from '../../core/research.js';
import { analyseSentiment, FALLBACK_PER_SOURCE, PER_SOURCE, RELEVANCE_FLOOR, SENTIMENT_METHOD } from './sentiment-score.js';
export * from './sentiment-score.js';

export const sentimentAnalyser: AnalyserPlugin<'analyser-sentiment'> = definePlugin({
  name: 'analyser-sentiment',
  kind: 'analyser',
  id: 'sentiment',
  order: 30,
  method: SENTIMENT_METHOD,
  description: 'sentiment: per source and overall, from wink-nlp sentence sentiment.',
  applies: (input) => input.include_sentiment === true,
  analyse(corpus: Corpus) {
    const sentiment = analyseSentiment(corpus);
    return {
      fields: { sentiment },
      notes: [`sentiment: ${sentiment.by_source.length} source(s), ${sentiment.overall.sentences} sentence(s) scored (relevance >= ${RELEVANCE_FLOOR}, at most ${PER_SOURCE} per source, else the ${FALLBACK_PER_SOURCE} most relevant); overall ${sentiment.overall.score} (${sentiment.overall.label})`],
    };
  },
});
