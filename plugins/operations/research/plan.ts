/**
 * The plan stage: from the request to the sub-queries, key phrases, limits,
 * time window, regions and deadline. Deterministic: the same request plans
 * the same research.
 *
 * Sub-queries, in this order, without repeats, cut to 3 / 6 / 10 by depth
 * less the 1 / 2 / 3 that gather may add after its first round from the
 * top sources' vocabulary (reformulate.ts, `feedbackQueries`): the question
 * itself (query-language operators neutralised); its key phrases together
 * (the core); each requested entity with the main key phrase; each focus
 * area with the core; the main key phrase alone; each later key phrase with
 * the one before it; each name the question holds with the main phrase;
 * the analysis type's angles on the main phrase (competitive: competitors,
 * market share, "A vs B"; market: market size, growth forecast, industry
 * trends; literature_review: systematic review; general: none); the
 * timeframe's years; and each region. Key phrases and names are
 * reformulate.ts's questionTerms; with the local index's tokenizer, its stop
 * words for the request's language also end a phrase.
 */
import { ISO_COUNTRY_CODES } from '../../../core/countries.js';
import type { AnalysisDepth, AnalysisType, ResearchInput, ResearchPlan, SourceType } from '../../../core/research.js';
import type { IndexTokenizer } from '../../../core/research.js';
import { mainPhrase, questionTerms, reformulations, stopTest } from './reformulate.js';
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
  /** Of `subQueries`, how many are left for gather's feedback round. */
  readonly feedback: number;
}

export const DEPTHS: Readonly<Record<AnalysisDepth, DepthSettings>> = {
  quick: { subQueries: 3, maxSources: 5, deadlineMs: 10_000, perQuery: 10, insights: 5, feedback: 1 },
  standard: { subQueries: 6, maxSources: 10, deadlineMs: 25_000, perQuery: 15, insights: 8, feedback: 2 },
  comprehensive: { subQueries: 10, maxSources: 20, deadlineMs: 60_000, perQuery: 25, insights: 12, feedback: 3 },
};

/** Words that ask rather than say what is asked about. */
const QUESTION_WORDS = new Set([
  'what', 'which', 'who', 'whom', 'whose', 'why', 'how', 'when', 'where', 'is', 'are', 'was', 'were', 'do', 'does', 'did', 'can', 'could',
  'should', 'would', 'will', 'the', 'a', 'an', 'of', 'in', 'on', 'for', 'to', 'and', 'or', 'with', 'about', 'between', 'by', 'from', 'at',
  'as', 'its', 'their', 'there', 'this', 'that', 'these', 'those', 'be', 'been', 'has', 'have', 'had', 'it', 'into', 'than', 'then', 'any',
  'much', 'many', 'some', 'tell', 'me', 'explain', 'describe', 'compare', 'give', 'list', 'current', 'state', 'latest', 'overview', 'vs', 'versus',
]);

const ANGLES: Readonly<Record<AnalysisType, readonly string[]>> = {
  general: [],
  competitive: ['competitors', 'market share', 'comparison'],
  market: ['market size', 'growth forecast', 'industry trends'],
  literature_review: ['systematic review'],
};

/** A question as a plain query: no quotes, no leading minus, no site:/intitle: operators, no OR (nor a lone |). */
export function plainQuery(text: string): string {
  return text
    .replace(/[“”„"]/g, ' ')
    .replace(/(^|\s)-+(?=\S)/g, '$1')
    .replace(/\b(site|intitle):/gi, '$1 ')
    .replace(/\bOR\b/g, 'or')
    .replace(/(^|\s)\|(?=\s|$)/g, '$1')
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

/** The whole plan of one research request; `tokenizer` (the local index's) adds its stop words for the language to the phrase cuts. */
export function planResearch(i: ResearchInput, now: number, tokenizer?: IndexTokenizer): ResearchPlan & { readonly settings: DepthSettings } {
  const depth = i.analysis_depth ?? 'standard';
  const settings = DEPTHS[depth];
  const analysisType = i.analysis_type ?? 'general';
  const question = plainQuery(i.research_query);
  const words = keyWords(i.research_query);
  const terms = questionTerms(i.research_query.slice(0, 2000), stopTest(tokenizer, i.language ?? null), i.language === undefined || i.language === 'en');
  const phrases = terms.phrases;
  const core = phrases.length > 0
    ? phrases.join(' ').split(' ').slice(0, 12).join(' ')
    : (words.length > 0 ? words : question.toLowerCase().split(' ')).slice(0, 12).join(' ');
  const main = mainPhrase(phrases) ?? core;
  const window = i.timeframe === undefined ? undefined : parseTimeframe(i.timeframe, now);
  const timeWindow = typeof window === 'string' || window?.label === 'all' ? undefined : window;

  const candidates: string[] = [question, core];
  for (const e of i.entities ?? []) candidates.push(`${plainQuery(e)} ${main}`);
  for (const f of i.focus_areas ?? []) candidates.push(`${core} ${plainQuery(f)}`);
  candidates.push(...reformulations(terms).slice(1));
  const entities = i.entities ?? [];
  for (const angle of ANGLES[analysisType]) {
    if (angle === 'comparison' && entities.length >= 2) candidates.push(`${plainQuery(entities[0]!)} vs ${plainQuery(entities[1]!)}`);
    else candidates.push(`${main} ${angle}`);
  }
  if (timeWindow !== undefined && timeWindow.from !== null) {
    const y0 = new Date(timeWindow.from).getUTCFullYear();
    const y1 = new Date(timeWindow.to ?? now).getUTCFullYear();
    candidates.push(`${main} ${y1}`);
    if (y0 !== y1) candidates.push(`${main} ${y0}`);
  }
  for (const r of i.geographic_focus ?? []) candidates.push(`${main} ${plainQuery(r)}`);

  const planned = Math.max(1, settings.subQueries - settings.feedback);
  const seen = new Set<string>();
  const subQueries: string[] = [];
  for (const c of candidates) {
    const q = plainQuery(c);
    const key = q.toLowerCase();
    if (q === '' || seen.has(key)) continue;
    seen.add(key);
    subQueries.push(q);
    if (subQueries.length >= planned) break;
  }

  // Key phrases: the question's subject as a phrase, its key phrases, its words, the focus areas and entities.
  const keyphrases = [...new Set([core, ...phrases, ...words, ...(i.focus_areas ?? []).map((f) => f.trim().toLowerCase()), ...entities.map((e) => e.trim().toLowerCase())])]
    .filter((k) => k !== '');

  const regions = (i.geographic_focus ?? []).flatMap((g) => {
    const r = regionOf(g);
    return r.codes.length > 0 ? r.codes : [g.trim()];
  });

  return {
    depth,
    analysisType,
    subQueries,
    feedbackQueries: settings.subQueries - subQueries.length,
    anchors: phrases.length > 0 ? [main, ...phrases.filter((p) => p !== main)] : [core],
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
