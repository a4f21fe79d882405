/**
 * The research request (spec 2.6) and response (2.7) schemas, and the checks
 * JSON Schema cannot make. The enumerations the spec leaves open are
 * Scour's: analysis_type general | competitive | market | literature_review;
 * citation_format apa | mla | chicago | harvard | ieee | vancouver | bibtex
 * | ris; export_format markdown | html | pdf | docx | json | csv | bibtex;
 * sources academic | news | industry_reports | financial | social | web;
 * timeframe a named window (past_week ... past_10_years, all), a year
 * (2023), a range of years (2019-2023), or an ISO date range
 * (2024-01-01..2024-06-30).
 */
import type { FieldIssue } from '../../../core/errors.js';
import type { Unchecked } from '../../../core/schema.js';
import {
  ANALYSIS_DEPTHS, ANALYSIS_TYPES, CITATION_FORMATS, EXPORT_FORMATS, SOURCE_TYPES, TIMEFRAMES, type ResearchInput, type TimeWindow,
} from '../../../core/research.js';
import { hasLoneSurrogate, StrictObject, Type } from '../../sdk/index.js';
import { languageProblem } from '../../../core/languages.js';
import { WebhookView } from '../../sdk/webhook-view.js';

export const MAX_ENTITIES = 50;
export const MAX_FOCUS_AREAS = 20;
export const MAX_REGIONS = 20;
export const MAX_SOURCES_LIMIT = 50;

const Enum = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });

export const ResearchRequest = StrictObject({
  research_query: Type.String({ minLength: 1, maxLength: 2000, description: 'The question or topic: 3 to 1,000 characters after trimming.' }),
  sources: Type.Optional(Type.Array(Enum(SOURCE_TYPES, 'A source type.'), {
    minItems: 1, maxItems: SOURCE_TYPES.length, uniqueItems: true,
    description: 'Hard filter: only sources of these types are read (academic, news, industry_reports, financial, social, web). Default: all.',
  })),
  analysis_depth: Type.Optional(Enum(ANALYSIS_DEPTHS, 'quick (3 sub-queries, 5 sources, 5 credits), standard (6, 10, 10 credits; default), comprehensive (10, 20, 15 credits).')),
  max_sources: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SOURCES_LIMIT, description: 'Sources read at most (default 5 / 10 / 20 by depth; 1 to 50).' })),
  timeframe: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: `A named window (${TIMEFRAMES.join(', ')}), a year (2023), years (2019-2023) or dates (2024-01-01..2024-06-30). Sources outside it, or without a date, are left out.` })),
  language: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'ISO 639-1 (en, de): sources in another language are left out.' })),
  geographic_focus: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1, maxItems: MAX_REGIONS, description: 'ISO 3166-1 alpha-2 codes or country names: a source must be from one of them (its country, its country-code domain) or name one of them.',
  })),
  analysis_type: Type.Optional(Enum(ANALYSIS_TYPES, 'general (default), competitive, market, literature_review: shapes the sub-queries and the recommendations.')),
  entities: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: MAX_ENTITIES, description: 'Companies, people or products to analyse (entity_analysis).' })),
  focus_areas: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: MAX_FOCUS_AREAS, description: 'Aspects to emphasise: each becomes a sub-query and a ranking term.' })),
  include_sentiment: Type.Optional(Type.Boolean()),
  include_trends: Type.Optional(Type.Boolean()),
  confidence_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Insights with a lower confidence are left out (default 0).' })),
  cross_reference: Type.Optional(Type.Boolean({ description: 'Each insight lists the sources that support and contradict it, and their agreement. Default true.' })),
  generate_summary: Type.Optional(Type.Boolean({ description: 'Default true. false: executive_summary is "".' })),
  include_citations: Type.Optional(Type.Boolean({ description: 'Default true. false: citations is [].' })),
  citation_format: Type.Optional(Enum(CITATION_FORMATS, 'apa (default), mla, chicago, harvard, ieee, vancouver, bibtex, ris.')),
  generate_recommendations: Type.Optional(Type.Boolean()),
  include_methodology: Type.Optional(Type.Boolean()),
  export_format: Type.Optional(Enum(EXPORT_FORMATS, 'markdown, html, pdf, docx, json, csv (sources and insights), bibtex: the report as a file at export_url.')),
  visualization_data: Type.Optional(Type.Boolean()),
  callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Extension: answer 202 with a job and POST a signed research.completed webhook here when done.' })),
  async: Type.Optional(Type.Boolean({ description: 'Extension: true answers 202 with a job at once, to poll at its status_url (stage and progress), with no webhook (callback_url implies it; false with callback_url is refused).' })),
});

/** Open objects: the listed fields are always there; more may be (the serializer keeps them). */
const Open = <T extends Parameters<typeof Type.Object>[0]>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: true, ...(description ? { description } : {}) });

const EvidenceView = Open({
  source_id: Type.String(),
  text: Type.String({ description: 'Verbatim: the source\'s stored text at [start, end).' }),
  start: Type.Integer(),
  end: Type.Integer(),
}, 'A quoted sentence of a source read in this request.');

const InsightView = Open({
  id: Type.String(),
  statement: Type.String(),
  statement_evidence: EvidenceView,
  confidence: Type.Number({ description: '0..1: 0.5 agreement + 0.25 relevance + 0.15 quality + 0.1 recency.' }),
  confidence_parts: Open({ agreement: Type.Number(), relevance: Type.Number(), quality: Type.Number(), recency: Type.Number() }),
  supporting_evidence: Type.Array(EvidenceView),
  topic: Type.String(),
  supporting_sources: Type.Optional(Type.Array(Type.String())),
  contradicting_sources: Type.Optional(Type.Array(Type.String())),
  contradicting_evidence: Type.Optional(Type.Array(EvidenceView)),
  agreement: Type.Optional(Type.Number()),
});

const SourceView = Open({
  id: Type.String({ description: 'src_1, src_2, ...: what evidence and citations refer to.' }),
  url: Type.String(),
  title: Type.String(),
  type: Type.String({ description: 'academic, news, industry_reports, financial, social or web.' }),
  domain: Type.String(),
  published_date: Type.Union([Type.String(), Type.Null()]),
  author: Type.Union([Type.String(), Type.Null()]),
  relevance_score: Type.Number(),
  used: Type.Boolean({ description: 'Whether the report quotes it.' }),
});

const CitationView = Open({
  source_id: Type.String(),
  url: Type.String(),
  format: Type.String(),
  text: Type.String({ description: 'The formatted reference.' }),
});

export const ResearchResponse = Type.Object({
  research_query: Type.String(),
  analysis_depth: Type.String(),
  analysis_type: Type.String(),
  executive_summary: Type.String(),
  summary_evidence: Type.Optional(Type.Array(EvidenceView)),
  key_insights: Type.Array(InsightView),
  entity_analysis: Type.Optional(Type.Any()),
  sentiment: Type.Optional(Type.Any()),
  trend_analysis: Type.Optional(Type.Array(Type.Any())),
  sources_analyzed: Type.Array(SourceView),
  citations: Type.Array(CitationView),
  recommendations: Type.Optional(Type.Array(Type.Any())),
  methodology: Type.Optional(Type.Any()),
  visualization_data: Type.Optional(Type.Any()),
  extensions: Type.Optional(Type.Record(Type.String(), Type.Any(), { description: 'Fields of custom analyser plugins, by analyser id.' })),
  export_url: Type.Optional(Type.String()),
  export_expires_at: Type.Optional(Type.String()),
  warnings: Type.Optional(Type.Array(Type.Object({ code: Type.String(), message: Type.String() }))),
  generated_at: Type.String(),
  processing_time: Type.Number({ description: 'Seconds.' }),
  credits_used: Type.Integer(),
  remaining_credits: Type.Integer(),
  request_id: Type.Optional(Type.String()),
});

export const ResearchAccepted = StrictObject({
  job_id: Type.String(),
  status: Type.Literal('queued'),
  status_url: Type.String({ description: 'GET it with the same API key: the stage, counts, and the report when done.' }),
  research_query: Type.String(),
  analysis_depth: Type.String(),
  created_at: Type.String(),
  request_id: Type.Optional(Type.String()),
});

/** GET /v1/research/{job_id}: where an asynchronous research is, and its report once done. */
export const ResearchJobStatus = StrictObject({
  job_id: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  stage: Type.String({ description: 'queued; while running plan, gather, read, analyse, report, rewrite (with a rewriter), export (with export_format); then completed or failed.' }),
  progress: StrictObject({
    sources_found: Type.Integer(),
    sources_read: Type.Integer(),
    sources_accepted: Type.Integer(),
  }),
  research_query: Type.String(),
  analysis_depth: Type.String(),
  created_at: Type.Union([Type.String(), Type.Null()]),
  started_at: Type.Union([Type.String(), Type.Null()]),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  callback_url: Type.Union([Type.String(), Type.Null()]),
  credits_used: Type.Integer({ description: 'Charged once, when the report is done.' }),
  result: Type.Union([ResearchResponse, Type.Null()], { description: 'The report (the synchronous answer\'s body) once completed; null before and on failure.' }),
  error: Type.Union([
    Type.Object({
      code: Type.String(),
      message: Type.String(),
      report: Type.Optional(Type.Any({ description: 'NO_SOURCES: the empty report, with its warnings (why nothing could be read).' })),
    }),
    Type.Null(),
  ], { description: 'Why a failed research failed.' }),
  webhook: WebhookView,
  request_id: Type.Optional(Type.String()),
});

const YEAR = 365.25 * 86_400_000;
const DAY = 86_400_000;
const NAMED: Readonly<Record<string, number | null>> = {
  past_week: 7 * DAY, past_month: 30 * DAY, past_3_months: 91 * DAY, past_6_months: 182 * DAY, past_year: YEAR,
  past_2_years: 2 * YEAR, past_5_years: 5 * YEAR, past_10_years: 10 * YEAR, all: null,
};
const MIN_YEAR = 1000;
const MAX_YEAR = 2999;

const utc = (y: number, m = 0, d = 1) => Date.UTC(y, m, d);

function isoDay(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = utc(y, mo - 1, d);
  const back = new Date(t);
  return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d ? t : undefined;
}

/** The window a timeframe names, relative to `now`; a string explaining the problem when it names none. */
export function parseTimeframe(raw: string, now: number): TimeWindow | string {
  const s = raw.trim().toLowerCase().replace(/\s+/g, '_');
  if (s in NAMED) {
    const span = NAMED[s]!;
    return { from: span === null ? null : now - span, to: null, label: s };
  }
  let m = /^(\d{4})$/.exec(s);
  if (m) {
    const y = Number(m[1]);
    if (y < MIN_YEAR || y > MAX_YEAR) return `year ${y} is out of range`;
    return { from: utc(y), to: utc(y + 1) - 1, label: String(y) };
  }
  m = /^(\d{4})[-_–](\d{4})$/.exec(s) ?? /^(\d{4})\.\.(\d{4})$/.exec(s);
  if (m) {
    const [a, b] = [Number(m[1]), Number(m[2])];
    if (a < MIN_YEAR || b > MAX_YEAR) return 'years are out of range';
    if (a > b) return `starts (${a}) after it ends (${b})`;
    return { from: utc(a), to: utc(b + 1) - 1, label: `${a}-${b}` };
  }
  m = /^(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})?$/.exec(s);
  if (m) {
    const a = isoDay(m[1]!);
    const b = m[2] === undefined ? undefined : isoDay(m[2]);
    if (a === undefined || (m[2] !== undefined && b === undefined)) return 'is not a valid date range (YYYY-MM-DD..YYYY-MM-DD)';
    if (b !== undefined && a > b) return 'starts after it ends';
    return { from: a, to: b === undefined ? null : b + DAY - 1, label: `${m[1]}..${m[2] ?? ''}` };
  }
  return `must be one of ${Object.keys(NAMED).join(', ')}, a year (2023), years (2019-2023) or dates (2024-01-01..2024-06-30)`;
}

/**
 * Every problem JSON Schema cannot see, at once. Runs over the fields the
 * schema accepted (the others are undefined here), so one 400 names every
 * problem of a request.
 */
export function checkResearch(i: Unchecked<ResearchInput>, now: number): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const raw = i.research_query;
  if (typeof raw === 'string') {
    const q = raw.trim();
    if (q.length < 3) issues.push({ field: 'research_query', message: 'must hold at least 3 characters besides spaces' });
    else if (q.length > 1000) issues.push({ field: 'research_query', message: 'must be at most 1000 characters after trimming' });
    if (hasLoneSurrogate(raw)) issues.push({ field: 'research_query', message: 'contains a lone surrogate, which has no UTF-8 encoding' });
    else if (q.length >= 3 && !/[\p{L}\p{N}]/u.test(raw)) issues.push({ field: 'research_query', message: 'must contain a letter or a digit' });
  }
  if (typeof i.timeframe === 'string') {
    const w = parseTimeframe(i.timeframe, now);
    if (typeof w === 'string') issues.push({ field: 'timeframe', message: w });
  }
  if (typeof i.language === 'string') {
    const p = languageProblem(i.language);
    if (p !== undefined) issues.push({ field: 'language', message: p });
  }
  const lists: [string, readonly (string | undefined)[] | undefined][] = [['entities', i.entities], ['focus_areas', i.focus_areas], ['geographic_focus', i.geographic_focus]];
  for (const [field, list] of lists) {
    const seen = new Set<string>();
    (list ?? []).forEach((v, n) => {
      if (typeof v !== 'string') return;
      const key = v.trim().toLowerCase();
      if (key === '') issues.push({ field: `${field}[${n}]`, message: 'must not be blank' });
      else if (hasLoneSurrogate(v)) issues.push({ field: `${field}[${n}]`, message: 'contains a lone surrogate, which has no UTF-8 encoding' });
      else if (seen.has(key)) issues.push({ field: `${field}[${n}]`, message: 'repeats an earlier value' });
      seen.add(key);
    });
  }
  return issues;
}
