/**
 * The plan stage: from the request to the sub-queries, key phrases, limits,
 * time window, regions and deadline. Deterministic: the same request plans
 * the same research.
 *
 * Sub-queries, in this order, without repeats, cut to 3 / 6 / 10 by depth:
 * the question itself (query-language operators neutralised); its key
 * phrase (the question without question words and stop words); each entity
 * with the key phrase; each focus area with the key phrase; the analysis
 * type's angles (competitive: competitors, market share, "A vs B";
 * market: market size, growth, trends; literature_review: study, review,
 * evidence; general: overview, analysis, impact); the timeframe's years; and
 * each region.
 */
import { ISO_COUNTRY_CODES } from '../../../core/countries.js';
import type { AnalysisDepth, AnalysisType, ResearchInput, ResearchPlan, SourceType } from '../../../core/research.js';
import { parseTimeframe } from './request.js';

export interface DepthSettings {
  readonly subQueries: number;
  readonly maxSources: number;
  /** Whole-request budget: at the deadline the report is made from what was read, with a warning. */
  readonly deadlineMs: number;
  /** Results asked of each provider per sub-query. */
  readonly perQuery: number;
  /** Insights at most. */
  readonly insights: number;
}

export const DEPTHS: Readonly<Record<AnalysisDepth, DepthSettings>> = {
  quick: { subQueries: 3, maxSources: 5, deadlineMs: 10_000, perQuery: 10, insights: 5 },
  standard: { subQueries: 6, maxSources: 10, deadlineMs: 25_000, perQuery: 15, insights: 8 },
  comprehensive: { subQueries: 10, maxSources: 20, deadlineMs: 60_000, perQuery: 25, insights: 12 },
};

/** Words that ask rather than say what is asked about. */
const QUESTION_WORDS = new Set([
  'what', 'which', 'who', 'whom', 'whose', 'why', 'how', 'when', 'where', 'is', 'are', 'was', 'were', 'do', 'does', 'did', 'can', 'could',
  'should', 'would', 'will', 'the', 'a', 'an', 'of', 'in', 'on', 'for', 'to', 'and', 'or', 'with', 'about', 'between', 'by', 'from', 'at',
  'as', 'its', 'their', 'there', 'this', 'that', 'these', 'those', 'be', 'been', 'has', 'have', 'had', 'it', 'into', 'than', 'then', 'any',
  'much', 'many', 'some', 'tell', 'me', 'explain', 'describe', 'compare', 'give', 'list', 'current', 'state', 'latest', 'overview', 'vs', 'versus',
]);

const ANGLES: Readonly<Record<AnalysisType, readonly string[]>> = {
  general: ['overview', 'analysis', 'impact'],
  competitive: ['competitors', 'market share', 'comparison'],
  market: ['market size', 'growth forecast', 'industry trends'],
  literature_review: ['study', 'systematic review', 'evidence'],
};

/** A question as a plain query: no quotes, no leading minus, no site:/intitle: operators, no OR. */
export function plainQuery(text: string): string {
  return text
    .replace(/[“”„"]/g, ' ')
    .replace(/(^|\s)-+(?=\S)/g, '$1')
    .replace(/\b(site|intitle):/gi, '$1 ')
    .replace(/\bOR\b/g, 'or')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 400);
}

/** The words of a text that carry its subject, in order, lower case. */
export function keyWords(text: string): string[] {
  const words = plainQuery(text).toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’.+-]*/gu) ?? [];
  return words.map((w) => w.replace(/(?<!['’.])['’.]+$/, '')).filter((w) => w.length > 1 && !QUESTION_WORDS.has(w));
}

let regionNames: Map<string, string> | undefined;
/** Country names (English) to ISO codes, from the runtime's ICU data. */
function countryByName(): Map<string, string> {
  if (regionNames !== undefined) return regionNames;
  regionNames = new Map();
  const names = new Intl.DisplayNames(['en'], { type: 'region' });
  for (const code of ISO_COUNTRY_CODES) {
    const n = names.of(code);
    if (n !== undefined && n !== code) regionNames.set(n.toLowerCase(), code);
  }
  for (const [alias, code] of [['usa', 'US'], ['united states of america', 'US'], ['america', 'US'], ['uk', 'GB'], ['britain', 'GB'], ['great britain', 'GB'], ['england', 'GB'], ['south korea', 'KR'], ['korea', 'KR'], ['russia', 'RU'], ['czech republic', 'CZ']] as const) {
    regionNames.set(alias, code);
  }
  return regionNames;
}

/** A geographic_focus entry as country codes (a code, a country name) and the words that name it in text. */
export function regionOf(entry: string): { readonly codes: readonly string[]; readonly names: readonly string[] } {
  const t = entry.trim();
  if (/^[A-Za-z]{2}$/.test(t) && ISO_COUNTRY_CODES.has(t.toUpperCase())) {
    const code = t.toUpperCase();
    const name = new Intl.DisplayNames(['en'], { type: 'region' }).of(code);
    return { codes: [code], names: name !== undefined && name !== code ? [name] : [] };
  }
  const code = countryByName().get(t.toLowerCase());
  return { codes: code === undefined ? [] : [code], names: [t] };
}

/** The whole plan of one research request. */
export function planResearch(i: ResearchInput, now: number): ResearchPlan & { readonly settings: DepthSettings } {
  const depth = i.analysis_depth ?? 'standard';
  const settings = DEPTHS[depth];
  const analysisType = i.analysis_type ?? 'general';
  const question = plainQuery(i.research_query);
  const words = keyWords(i.research_query);
  const core = (words.length > 0 ? words : question.toLowerCase().split(' ')).slice(0, 12).join(' ');
  const window = i.timeframe === undefined ? undefined : parseTimeframe(i.timeframe, now);
  const timeWindow = typeof window === 'string' || window?.label === 'all' ? undefined : window;

  const candidates: string[] = [question, core];
  for (const e of i.entities ?? []) candidates.push(`${plainQuery(e)} ${core}`);
  for (const f of i.focus_areas ?? []) candidates.push(`${core} ${plainQuery(f)}`);
  const entities = i.entities ?? [];
  for (const angle of ANGLES[analysisType]) {
    if (angle === 'comparison' && entities.length >= 2) candidates.push(`${plainQuery(entities[0]!)} vs ${plainQuery(entities[1]!)}`);
    else candidates.push(`${core} ${angle}`);
  }
  if (timeWindow !== undefined && timeWindow.from !== null) {
    const y0 = new Date(timeWindow.from).getUTCFullYear();
    const y1 = new Date(timeWindow.to ?? now).getUTCFullYear();
    candidates.push(`${core} ${y1}`);
    if (y0 !== y1) candidates.push(`${core} ${y0}`);
  }
  for (const r of i.geographic_focus ?? []) candidates.push(`${core} ${plainQuery(r)}`);

  const seen = new Set<string>();
  const subQueries: string[] = [];
  for (const c of candidates) {
    const q = c.replace(/\s+/g, ' ').trim();
    const key = q.toLowerCase();
    if (q === '' || seen.has(key)) continue;
    seen.add(key);
    subQueries.push(q);
    if (subQueries.length >= settings.subQueries) break;
  }

  // Key phrases: the question's subject as a phrase, its words, the focus areas and entities.
  const keyphrases = [...new Set([core, ...words, ...(i.focus_areas ?? []).map((f) => f.trim().toLowerCase()), ...entities.map((e) => e.trim().toLowerCase())])]
    .filter((k) => k !== '');

  const regions = (i.geographic_focus ?? []).flatMap((g) => {
    const r = regionOf(g);
    return r.codes.length > 0 ? r.codes : [g.trim()];
  });

  return {
    depth,
    analysisType,
    subQueries,
    keyphrases,
    maxSources: Math.min(i.max_sources ?? settings.maxSources, 50),
    sourceTypes: i.sources as readonly SourceType[] | undefined,
    window: timeWindow,
    regions: [...new Set(regions)],
    language: i.language,
    deadlineMs: settings.deadlineMs,
    settings,
  };
}
