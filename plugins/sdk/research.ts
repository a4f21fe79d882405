/**
 * The contracts of research's analyser and exporter plugins
 * (core/research.ts), re-exported for plugin authors, with
 * `defineAnalyser` and `defineExporter`. An analyser reads the corpus a
 * research request gathered (sources with their stored text, sentences,
 * ranked passages) and returns fields for the report; every quote it
 * returns must be a span of a source's text (`evidenceOf(sentence)`), which
 * the report checks before answering. A custom analyser's fields appear in
 * the response under `extensions.<its id>`.
 */
import type { AnalyserPlugin, ExporterPlugin } from '../../core/research.js';

export type {
  AnalyserOutput, AnalyserPlugin, AnalysisSoFar, Corpus, Evidence, ExporterPlugin, ExportHost, KeyInsight, Passage, ResearchInput,
  ResearchReport, ResearchSource, Sentence,
} from '../../core/research.js';
export { evidenceOf, isVerbatim, round4 } from '../../core/research.js';

export const defineAnalyser = <const N extends string>(p: Omit<AnalyserPlugin<N>, 'kind'>): AnalyserPlugin<N> => ({ ...p, kind: 'analyser' });

export const defineExporter = <const N extends string>(p: Omit<ExporterPlugin<N>, 'kind'>): ExporterPlugin<N> => ({ ...p, kind: 'exporter' });
