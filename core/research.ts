/**
 * Research (spec 2.6, 2.7, 8.2; issue 13): the types every part of
 * POST /v1/research shares. The operation runs typed stages
 * `plan -> gather -> read -> analyse -> report`; analysers (plugins of kind
 * 'analyser') each add one part of the report from the read corpus, and
 * exporters (kind 'exporter') render a finished report to a file. No I/O
 * here: sources arrive already fetched, with their stored text, and every
 * quoted sentence is a span of that text (`text.slice(start, end)`), so a
 * citation or a piece of evidence cannot name anything this request did not
 * read.
 */
import type { PluginBase } from './plugin.js';

export const ANALYSIS_DEPTHS = ['quick', 'standard', 'comprehensive'] as const;
export type AnalysisDepth = (typeof ANALYSIS_DEPTHS)[number];

export const ANALYSIS_TYPES = ['general', 'competitive', 'market', 'literature_review'] as const;
export type AnalysisType = (typeof ANALYSIS_TYPES)[number];

/** Source kinds a request may restrict itself to (hard filters). */
export const SOURCE_TYPES = ['academic', 'news', 'industry_reports', 'financial', 'social', 'web'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export const CITATION_FORMATS = ['apa', 'mla', 'chicago', 'harvard', 'ieee', 'vancouver', 'bibtex', 'ris'] as const;
export type CitationFormat = (typeof CITATION_FORMATS)[number];

export const EXPORT_FORMATS = ['markdown', 'html', 'pdf', 'docx', 'json', 'csv', 'bibtex'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Named time windows for `timeframe` (a window ending at the request); explicit years and ranges are parsed too. */
export const TIMEFRAMES = ['past_week', 'past_month', 'past_3_months', 'past_6_months', 'past_year', 'past_2_years', 'past_5_years', 'past_10_years', 'all'] as const;

/** The validated request, as the stages read it. */
export interface ResearchInput {
  readonly research_query: string;
  readonly sources?: readonly SourceType[];
  readonly analysis_depth?: AnalysisDepth;
  readonly max_sources?: number;
  readonly timeframe?: string;
  readonly language?: string;
  readonly geographic_focus?: readonly string[];
  readonly analysis_type?: AnalysisType;
  readonly entities?: readonly string[];
  readonly focus_areas?: readonly string[];
  readonly include_sentiment?: boolean;
  readonly include_trends?: boolean;
  readonly confidence_threshold?: number;
  readonly cross_reference?: boolean;
  readonly generate_summary?: boolean;
  readonly include_citations?: boolean;
  readonly citation_format?: CitationFormat;
  readonly generate_recommendations?: boolean;
  readonly include_methodology?: boolean;
  readonly export_format?: ExportFormat;
  readonly visualization_data?: boolean;
  readonly callback_url?: string;
  /** Asynchronous mode without a webhook. */
  readonly async?: boolean;
}

/** An inclusive window of epoch ms; either end may be open. */
export interface TimeWindow {
  readonly from: number | null;
  readonly to: number | null;
  /** As the request named it (canonical), for the methodology. */
  readonly label: string;
}

/** What the plan stage decided. */
export interface ResearchPlan {
  readonly depth: AnalysisDepth;
  readonly analysisType: AnalysisType;
  /** Queries run through the search providers, the question first (after gathering: those actually run, feedback ones included). */
  readonly subQueries: readonly string[];
  /** Sub-queries gather may add after its first round, from the top sources' own vocabulary (0 or absent: none). */
  readonly feedbackQueries?: number;
  /** The question's key phrases, the main one first: what feedback sub-queries anchor their related terms to. */
  readonly anchors?: readonly string[];
  /** Key phrases of the question (lower case), used to rank passages. */
  readonly keyphrases: readonly string[];
  readonly maxSources: number;
  readonly sourceTypes: readonly SourceType[] | undefined;
  readonly window: TimeWindow | undefined;
  /** ISO 3166-1 alpha-2 codes and region names from geographic_focus. */
  readonly regions: readonly string[];
  readonly language: string | undefined;
  /** Wall-clock budget of the whole request (ms). */
  readonly deadlineMs: number;
}

/** Citation metadata of a source, from citation_* meta tags, JSON-LD, OpenGraph, the index. */
export interface SourceMeta {
  readonly title: string;
  readonly authors: readonly string[];
  /** Epoch ms, or null. */
  readonly publishedAt: number | null;
  /** Journal, site or publisher name. */
  readonly container: string | null;
  readonly publisher: string | null;
  readonly doi: string | null;
  readonly volume?: string | null;
  readonly issue?: string | null;
  readonly pages?: string | null;
  /** article-journal, article-newspaper, report, webpage, post. */
  readonly cslType: string;
}

/**
 * Which text of a source research read: the open-access full text a
 * provider pointed to (`full_text`), the abstract the provider gave
 * (`abstract`: the provider's string is the text), the result's page read
 * through the page pipeline (`page`), or the local index's stored document
 * (`index`).
 */
export const SOURCE_TEXT_KINDS = ['full_text', 'abstract', 'page', 'index'] as const;
export type SourceTextKind = (typeof SOURCE_TEXT_KINDS)[number];

/** A source read in this request: its URL, metadata and the whole stored text. */
export interface ResearchSource {
  /** `src_1`, `src_2`, ... in the order sources were accepted. */
  readonly id: string;
  readonly url: string;
  readonly domain: string;
  readonly type: SourceType;
  /** Why it has that type (document type, domain, structured data). */
  readonly typeReason: string;
  readonly meta: SourceMeta;
  readonly language: string | null;
  readonly country: string | null;
  /** The plain text every offset points into. */
  readonly text: string;
  /**
   * Where the text came from: the local index's stored document, a read
   * through the page pipeline in this request (the page or its open-access
   * full text), or the search provider's own result (a work's abstract).
   */
  readonly origin: 'index' | 'scrape' | 'provider';
  /** Which text `text` is (SOURCE_TEXT_KINDS). */
  readonly textKind: SourceTextKind;
  /**
   * The open-access full text's URL (as the provider gave it) when the
   * result had one: the text read when `textKind` is `full_text`, else the
   * one tried and given up on (`fullTextFailure` says why). `url` stays the
   * result's own URL (the landing page or DOI link). Null: none offered.
   */
  readonly fullTextUrl?: string | null;
  /** Why the full text at `fullTextUrl` was not read (`too_little_text`, `http_404`, `fetch_failed:<code>`, `target_not_allowed`, `deadline`). */
  readonly fullTextFailure?: string | null;
  /** Providers whose results named it. */
  readonly providers: readonly string[];
  /** Best rank it had in any sub-query's fused results (1 = first). */
  readonly searchRank: number;
  /** Fetched at (epoch ms). */
  readonly fetchedAt: number;
  /** 0..1: a prior on how much to trust the source (its type and domain; documented). */
  readonly quality: number;
}

/**
 * A sentence of a source: `source.text.slice(start, end) === text`, line
 * breaks and all; `reading` is how it reads (white space collapsed,
 * line-end hyphenation undone), what a report shows as prose. Evidence
 * always quotes `text` at its offsets.
 */
export interface Sentence {
  readonly sourceId: string;
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** The sentence as read (absent: `text` reads as it is). */
  readonly reading?: string;
  /** Index within its source. */
  readonly index: number;
}

/** A run of sentences, the unit passages are ranked in. */
export interface Passage {
  readonly sourceId: string;
  readonly sentences: readonly Sentence[];
  readonly start: number;
  readonly end: number;
  /** BM25 against the question and sub-queries, plus entity matches, normalised to 0..1 over the corpus. */
  readonly relevance: number;
}

/** A quoted sentence: verbatim `text` at [start, end) of its source's stored text. */
export interface Evidence {
  readonly source_id: string;
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/**
 * How text becomes ranking terms: the local index's own tokenizer
 * (stemming, stop words), handed in by the composition root. (Not an
 * analyser plugin: those analyse a research's corpus.)
 */
export interface IndexTokenizer {
  /** Terms of a text in order (lower case, stemmed, no stop words), under the rules of `language` (ISO 639-1) or the default ones. */
  terms(text: string, language: string | null): string[];
}

/** The read corpus every analyser works from. */
export interface Corpus {
  readonly question: string;
  readonly input: ResearchInput;
  readonly plan: ResearchPlan;
  readonly sources: readonly ResearchSource[];
  /** Sentences by source id, in text order. */
  readonly sentences: ReadonlyMap<string, readonly Sentence[]>;
  /** Passages, most relevant first. */
  readonly passages: readonly Passage[];
  /** Relevance (0..1) of each sentence to the question, keyed `${sourceId}:${index}`. */
  readonly sentenceRelevance: ReadonlyMap<string, number>;
  /** Epoch ms of the request (for recency and relative dates). */
  readonly now: number;
  /** Tokens of a text as ranking sees them (lower case, stemmed, no stop words). */
  readonly terms: (text: string) => readonly string[];
}

export interface ConfidenceParts {
  readonly agreement: number;
  readonly relevance: number;
  readonly quality: number;
  readonly recency: number;
}

export interface KeyInsight {
  readonly id: string;
  readonly statement: string;
  /** The statement is itself this evidence (a verbatim sentence). */
  readonly statement_evidence: Evidence;
  readonly confidence: number;
  readonly confidence_parts: ConfidenceParts;
  readonly supporting_evidence: readonly Evidence[];
  readonly topic: string;
  readonly supporting_sources?: readonly string[];
  readonly contradicting_sources?: readonly string[];
  readonly contradicting_evidence?: readonly Evidence[];
  readonly agreement?: number;
}

/** What an analyser adds: some fields of the report, and notes for the methodology. */
export interface AnalyserOutput {
  readonly fields: Readonly<Record<string, unknown>>;
  /** One line each: what it did, with its counts and thresholds. */
  readonly notes?: readonly string[];
  readonly warnings?: readonly string[];
}

/** Results of analysers that ran before this one (in `order`), by analyser id. */
export type AnalysisSoFar = Readonly<Record<string, AnalyserOutput>>;

/**
 * An analyser: one part of the report. Deterministic for the same corpus.
 * Runs when `applies(input)`; `order` sorts them (insights before the
 * recommendations that rest on them).
 */
export interface AnalyserPlugin<N extends string = string> extends PluginBase<N, 'analyser'> {
  readonly id: string;
  readonly order: number;
  /** Method and version, for the methodology. */
  readonly method: string;
  applies(input: ResearchInput): boolean;
  analyse(corpus: Corpus, before: AnalysisSoFar): AnalyserOutput | Promise<AnalyserOutput>;
}

/** A finished report, as exporters receive it (the JSON response body, minus export fields). */
export type ResearchReport = Readonly<Record<string, unknown>> & {
  readonly research_query: string;
  readonly executive_summary: string;
  readonly key_insights: readonly KeyInsight[];
  readonly sources_analyzed: readonly SourceView[];
  readonly citations: readonly CitationView[];
};

export interface SourceView {
  readonly id: string;
  readonly url: string;
  readonly title: string;
  readonly type: SourceType;
  readonly domain: string;
  readonly published_date: string | null;
  readonly author: string | null;
  readonly relevance_score: number;
  readonly used: boolean;
}

export interface CitationView {
  readonly source_id: string;
  readonly url: string;
  readonly format: CitationFormat;
  readonly text: string;
}

/** Tools an exporter may need that live outside core (the browser for PDF). */
export interface ExportHost {
  /** HTML to PDF bytes, in the service's browser; undefined when the server has none. */
  readonly htmlToPdf?: (html: string, signal: AbortSignal) => Promise<Uint8Array>;
  readonly signal: AbortSignal;
}

/** An exporter: a finished report as one file. */
export interface ExporterPlugin<N extends string = string> extends PluginBase<N, 'exporter'> {
  readonly format: string;
  readonly contentType: string;
  readonly extension: string;
  render(report: ResearchReport, host: ExportHost): Promise<Uint8Array>;
}

/** Round to 4 decimals (scores in responses). */
export const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** Whether an evidence quote is verbatim in its source (the invariant every response keeps). */
export function isVerbatim(e: Evidence, sources: ReadonlyMap<string, ResearchSource>): boolean {
  const s = sources.get(e.source_id);
  return s !== undefined && e.start >= 0 && e.end <= s.text.length && s.text.slice(e.start, e.end) === e.text;
}

export const evidenceOf = (s: Sentence): Evidence => ({ source_id: s.sourceId, text: s.text, start: s.start, end: s.end });

/**
 * An optional model that rewrites the prose of a finished report (the
 * executive summary, insight statements, recommendations) from the collected
 * evidence only. The operation keeps the deterministic text for any part
 * the rewriter leaves out; a rewriter checks its own output (every `[n]`
 * names a used source, every number appears in the cited evidence) and
 * returns only what passed.
 */
export interface ReportRewriter {
  /** For the methodology: e.g. `openai-compatible:gpt-4o-mini`. */
  readonly id: string;
  rewrite(report: ResearchReport, corpus: Corpus, signal: AbortSignal): Promise<RewriteResult>;
}

export interface RewriteResult {
  /** A new executive summary, when it passed the checks. */
  readonly executiveSummary?: string;
  /** New statements by insight id (the evidence stays as it was). */
  readonly insightStatements?: Readonly<Record<string, string>>;
  /** New recommendation texts by recommendation id. */
  readonly recommendations?: Readonly<Record<string, string>>;
  /** Why parts were rejected or the model failed (each becomes a response warning). */
  readonly warnings: readonly string[];
}
