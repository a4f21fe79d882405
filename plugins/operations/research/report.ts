/**
 * The report stage: the analysers' fields assembled into the research
 * response (spec 2.7), with `sources_analyzed`, `citations` (one per source
 * actually used, in the requested format), `methodology` and
 * `visualization_data`.
 *
 * Which text each source is (`text_read` of sources_analyzed;
 * `methodology.source_texts`): `full_text` (the provider's open-access full
 * text, its URL in `full_text_url`), `abstract` (the provider's abstract:
 * evidence offsets point into it), `page` (the result's page) or `index`
 * (the local index's stored text); when a full text was offered but not
 * read, `full_text_failed` says why. `methodology.provider_selection` names
 * the provider kinds the request's `sources` wanted, the providers asked
 * and those skipped (with their kinds).
 *
 * A source is *used* when the report quotes it: in an insight's evidence or
 * contradiction, the summary, an entity's statements or a trend's evidence.
 *
 * relevance_score of a source (0..1), with its parts:
 * - search = 1 / (1 + (rank - 1) / 5), rank its best place in the fused
 *   results of the sub-queries;
 * - passages = mean relevance of its 3 best passages;
 * - entities = share of the requested entities it names (only when
 *   entities were given);
 * - quality = its quality prior (classify.ts).
 * Without entities: 0.3 search + 0.5 passages + 0.2 quality; with them:
 * 0.25 search + 0.45 passages + 0.15 entities + 0.15 quality.
 */
import {
  isVerbatim, round4, type Corpus, type Evidence, type KeyInsight, type ResearchSource, type SourceTextKind, type SourceView, type CitationFormat,
} from '../../../core/research.js';
import { formatCitations } from './citations.js';

export interface StageTiming { readonly stage: string; readonly ms: number }

export interface ReportArgs {
  readonly corpus: Corpus;
  /** Analyser outputs in the order they ran, by analyser id. */
  readonly analyses: readonly { readonly id: string; readonly method: string; readonly fields: Readonly<Record<string, unknown>>; readonly notes: readonly string[] }[];
  readonly gather: {
    readonly found: number; readonly fetched: number; readonly fromIndex: number; readonly scraped: number; readonly fromProvider: number;
    readonly texts: Readonly<Record<SourceTextKind, number>>;
    readonly dropped: Readonly<Record<string, number>>; readonly providers: readonly { readonly id: string; readonly results: number; readonly failures: number }[];
    readonly selection: {
      readonly wantedKinds: readonly string[] | null;
      readonly asked: readonly string[];
      readonly skipped: readonly { readonly id: string; readonly kinds: readonly string[] }[];
    };
    readonly deadlineReached: boolean;
  };
  readonly timings: readonly StageTiming[];
  readonly version: string;
}

/** The report parts the built-in analysers fill; anything else an analyser returns goes under `extensions`. */
const BUILT_IN_FIELDS = new Set(['key_insights', 'entity_analysis', 'sentiment', 'trend_analysis', 'executive_summary', 'summary_evidence', 'recommendations']);

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

/** Every quote in the report's fields (for `used` and the integrity check). */
export function quotesOf(fields: Readonly<Record<string, unknown>>): Evidence[] {
  const out: Evidence[] = [];
  const visit = (v: unknown, depth: number) => {
    if (depth > 8 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) { for (const x of v) visit(x, depth + 1); return; }
    const o = v as Record<string, unknown>;
    if (typeof o.source_id === 'string' && typeof o.text === 'string' && typeof o.start === 'number' && typeof o.end === 'number') {
      out.push({ source_id: o.source_id, text: o.text, start: o.start, end: o.end });
    }
    for (const k of Object.keys(o)) visit(o[k], depth + 1);
  };
  visit(fields, 0);
  return out;
}

function relevanceOf(s: ResearchSource, corpus: Corpus): { score: number; parts: Record<string, number> } {
  const search = 1 / (1 + (s.searchRank - 1) / 5);
  const best = corpus.passages.filter((p) => p.sourceId === s.id).slice(0, 3);
  const passages = best.length === 0 ? 0 : best.reduce((a, p) => a + p.relevance, 0) / best.length;
  const wanted = corpus.input.entities ?? [];
  if (wanted.length === 0) {
    return { score: round4(0.3 * search + 0.5 * passages + 0.2 * s.quality), parts: { search: round4(search), passages: round4(passages), quality: s.quality } };
  }
  const lower = s.text.toLowerCase();
  const named = wanted.filter((e) => lower.includes(e.trim().toLowerCase())).length / wanted.length;
  return {
    score: round4(0.25 * search + 0.45 * passages + 0.15 * named + 0.15 * s.quality),
    parts: { search: round4(search), passages: round4(passages), entities: round4(named), quality: s.quality },
  };
}

export interface Assembled {
  readonly body: Record<string, unknown>;
}

/** The response body, without the credit fields and processing_time (the operation adds them). */
export function assembleReport(a: ReportArgs): Assembled {
  const { corpus } = a;
  const input = corpus.input;
  const fields: Record<string, unknown> = {};
  for (const x of a.analyses) Object.assign(fields, x.fields);

  // The invariant: every quote is a verbatim span of a source read in this request.
  const byId = new Map(corpus.sources.map((s) => [s.id, s]));
  const quotes = quotesOf(fields);
  const bad = quotes.filter((q) => !isVerbatim(q, byId));
  if (bad.length > 0) throw new Error(`research: ${bad.length} quote(s) are not verbatim in their source (first: ${JSON.stringify(bad[0]).slice(0, 200)})`);
  const used = new Set(quotes.map((q) => q.source_id));

  const sources: (SourceView & Record<string, unknown>)[] = corpus.sources.map((s) => {
    const r = relevanceOf(s, corpus);
    return {
      id: s.id,
      url: s.url,
      title: s.meta.title,
      type: s.type,
      type_reason: s.typeReason,
      domain: s.domain,
      published_date: iso(s.meta.publishedAt),
      author: s.meta.authors.length === 0 ? null : s.meta.authors.join(', '),
      container: s.meta.container,
      doi: s.meta.doi,
      language: s.language,
      relevance_score: r.score,
      relevance: r.parts,
      quality: s.quality,
      providers: s.providers,
      origin: s.origin,
      text_read: s.textKind,
      ...(s.fullTextUrl ? { full_text_url: s.fullTextUrl } : {}),
      text_length: s.text.length,
      used: used.has(s.id),
    };
  });

  const format: CitationFormat = input.citation_format ?? 'apa';
  const usedSources = corpus.sources.filter((s) => used.has(s.id));
  const citations = input.include_citations === false ? [] : formatCitations(usedSources, format);

  const insights = (fields.key_insights ?? []) as KeyInsight[];
  const body: Record<string, unknown> = {
    research_query: input.research_query,
    analysis_depth: corpus.plan.depth,
    analysis_type: corpus.plan.analysisType,
    executive_summary: input.generate_summary === false ? '' : (fields.executive_summary as string | undefined) ?? '',
    ...(input.generate_summary === false || fields.summary_evidence === undefined ? {} : { summary_evidence: fields.summary_evidence }),
    key_insights: insights,
    ...(fields.entity_analysis !== undefined ? { entity_analysis: fields.entity_analysis } : {}),
    ...(fields.sentiment !== undefined ? { sentiment: fields.sentiment } : {}),
    ...(fields.trend_analysis !== undefined ? { trend_analysis: fields.trend_analysis } : {}),
    sources_analyzed: sources,
    citations,
    ...(fields.recommendations !== undefined ? { recommendations: fields.recommendations } : {}),
  };

  // Fields of analysers beyond the built-in parts: under extensions.<analyser id>.
  const extensions: Record<string, Record<string, unknown>> = {};
  for (const x of a.analyses) {
    const extra = Object.entries(x.fields).filter(([k]) => !BUILT_IN_FIELDS.has(k));
    if (extra.length > 0) extensions[x.id] = Object.fromEntries(extra);
  }
  if (Object.keys(extensions).length > 0) body.extensions = extensions;

  if (input.include_methodology) {
    body.methodology = {
      steps: ['plan', 'gather', 'read', 'analyse', 'report', ...(input.export_format !== undefined ? ['export'] : [])],
      analysis_depth: corpus.plan.depth,
      analysis_type: corpus.plan.analysisType,
      sub_queries: corpus.plan.subQueries,
      keyphrases: corpus.plan.keyphrases,
      filters: {
        sources: corpus.plan.sourceTypes ?? 'all',
        timeframe: corpus.plan.window === undefined ? null : { label: corpus.plan.window.label, from: iso(corpus.plan.window.from), to: iso(corpus.plan.window.to) },
        language: corpus.plan.language ?? null,
        geographic_focus: corpus.plan.regions,
      },
      providers: a.gather.providers,
      provider_selection: {
        wanted_kinds: a.gather.selection.wantedKinds,
        asked: a.gather.selection.asked,
        skipped: a.gather.selection.skipped.map((p) => ({ id: p.id, kinds: p.kinds })),
      },
      source_texts: corpus.sources.map((s) => ({
        source_id: s.id,
        text: s.textKind,
        characters: s.text.length,
        ...(s.fullTextUrl ? { full_text_url: s.fullTextUrl } : {}),
        ...(s.fullTextFailure ? { full_text_failed: s.fullTextFailure } : {}),
      })),
      counts: {
        found: a.gather.found,
        fetched: a.gather.fetched,
        from_index: a.gather.fromIndex,
        scraped: a.gather.scraped,
        from_provider: a.gather.fromProvider,
        texts: a.gather.texts,
        analysed: corpus.sources.length,
        used: used.size,
        dropped: a.gather.dropped,
        sentences: [...corpus.sentences.values()].reduce((n, l) => n + l.length, 0),
        passages: corpus.passages.length,
      },
      thresholds: {
        max_sources: corpus.plan.maxSources,
        confidence_threshold: input.confidence_threshold ?? 0,
        deadline_seconds: corpus.plan.deadlineMs / 1000,
      },
      deadline_reached: a.gather.deadlineReached,
      analysers: a.analyses.map((x) => ({ id: x.id, method: x.method, notes: x.notes })),
      timings_ms: Object.fromEntries(a.timings.map((t) => [t.stage, Math.round(t.ms * 10) / 10])),
      relevance_formula: (input.entities ?? []).length === 0 ? '0.3 search + 0.5 passages + 0.2 quality' : '0.25 search + 0.45 passages + 0.15 entities + 0.15 quality',
      confidence_formula: '0.5 agreement + 0.25 relevance + 0.15 quality + 0.1 recency; agreement = (1 - 0.75 * 0.5^(domains - 1)) * supporting / (supporting + contradicting)',
      versions: { scour: a.version },
      deterministic: true,
    };
  }

  if (input.visualization_data) body.visualization_data = visualization(corpus, sources, fields);
  return { body };
}

function countBy<T>(items: readonly T[], key: (x: T) => string): { x: string; y: number }[] {
  const m = new Map<string, number>();
  for (const it of items) m.set(key(it), (m.get(key(it)) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([x, y]) => ({ x, y }));
}

/** Chart-ready series, each named, with axis labels and units. */
function visualization(corpus: Corpus, sources: readonly SourceView[], fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const series: Record<string, unknown>[] = [
    { name: 'sources_by_type', chart: 'bar', x_label: 'Source type', y_label: 'Sources', unit: 'sources', points: countBy(sources, (s) => s.type) },
    {
      name: 'sources_by_year', chart: 'bar', x_label: 'Year published', y_label: 'Sources', unit: 'sources',
      points: countBy(sources, (s) => (s.published_date === null ? 'undated' : s.published_date.slice(0, 4))),
    },
    {
      name: 'source_relevance', chart: 'bar', x_label: 'Source', y_label: 'Relevance score', unit: '0-1',
      points: sources.map((s) => ({ x: s.id, y: s.relevance_score })),
    },
  ];
  const insights = (fields.key_insights ?? []) as KeyInsight[];
  series.push({ name: 'insight_confidence', chart: 'bar', x_label: 'Insight', y_label: 'Confidence', unit: '0-1', points: insights.map((i) => ({ x: i.id, y: i.confidence })) });
  const sentiment = fields.sentiment as { by_source?: { source_id: string; score: number }[] } | undefined;
  if (sentiment?.by_source !== undefined) {
    series.push({ name: 'sentiment_by_source', chart: 'bar', x_label: 'Source', y_label: 'Sentiment score', unit: '-1 to 1', points: sentiment.by_source.map((s) => ({ x: s.source_id, y: s.score })) });
  }
  const entities = (fields.entity_analysis as { entities?: { name: string; mentions: number; co_occurring?: { name: string; count: number }[] }[] } | undefined)?.entities;
  if (entities !== undefined) {
    series.push({ name: 'entity_mentions', chart: 'bar', x_label: 'Entity', y_label: 'Mentions', unit: 'mentions', points: entities.map((e) => ({ x: e.name, y: e.mentions })) });
    const edges: { source: string; target: string; weight: number }[] = [];
    // Edges between the listed nodes only (co-occurring discovered names are not nodes).
    const names = new Set(entities.map((e) => e.name));
    for (const e of entities) for (const c of e.co_occurring ?? []) if (e.name < c.name && names.has(c.name)) edges.push({ source: e.name, target: c.name, weight: c.count });
    series.push({
      name: 'entity_network', chart: 'network', x_label: 'Entity', y_label: 'Entity', unit: 'sentences mentioning both',
      nodes: entities.map((e) => ({ id: e.name, weight: e.mentions })), edges,
    });
  }
  const trends = fields.trend_analysis as { topic: string; series?: { date: string; value: number }[] }[] | undefined;
  for (const t of trends ?? []) {
    if (t.series === undefined || t.series.length === 0) continue;
    series.push({ name: `trend:${t.topic}`, chart: 'line', x_label: 'Date', y_label: t.topic, unit: 'value as stated in the sources', points: t.series.map((p) => ({ x: p.date, y: p.value })) });
  }
  return { series, sources_total: corpus.sources.length };
}
