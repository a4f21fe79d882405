/**
 * POST /tavily/search in terms of POST /v1/search: the Tavily body read
 * and turned into a native search body, the native answer turned into
 * Tavily's. What maps:
 *
 * - include_domains / exclude_domains: `site:` and `-site:` operators of
 *   the native query (a result on any included domain, none on an
 *   excluded one, subdomains included);
 * - topic news: result_type news; days, time_range, start_date: the
 *   narrowest native time range that covers them, then results older than
 *   asked (and, with end_date, newer) left out; results without a date
 *   are left out whenever a time filter applies, as natively;
 * - search_depth advanced and include_raw_content: the top results read
 *   through the page pipeline (auto_scrape_top, at most 10), priced as
 *   natively; advanced `content` is the page's sentences that hold the
 *   most query words (chunks_per_source of them), basic `content` the
 *   search snippet; raw_content the page's main content as Markdown (or
 *   text);
 * - include_answer: an extractive answer (sentences.ts), never generated.
 *
 * Everything else Tavily takes is accepted and, when it asks for
 * something, ignored with a warning in `warnings`.
 */
import type { RequestContext } from '../../../core/context.js';
import { parseQuery, TIME_RANGES } from '../../../core/search.js';
import { StrictObject, Type } from '../../sdk/index.js';
import { invalidRequest } from './errors.js';
import { BodyReader, type Warning } from './fields.js';
import type { Translated } from './forward.js';
import { extractiveAnswer, relevantChunks } from './sentences.js';

/** Tavily's bounds. */
export const MAX_QUERY = 400;
export const MAX_RESULTS = 20;
/** Domains per list; together with the query they must fit a native query. */
export const MAX_DOMAINS = 20;
/** The native search reads at most this many result pages. */
const MAX_PAGES = 10;
const NATIVE_QUERY_LENGTH = 500;
const DAY = 86_400_000;
const DOMAIN = /^(?=.{1,253}$)(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const TIME_RANGE_DAYS: Record<string, number> = { day: 1, d: 1, week: 7, w: 7, month: 31, m: 31, year: 366, y: 366 };
/** Native time ranges, narrowest first. */
const NATIVE_RANGES = ['hour', 'day', 'week', 'month', 'year'] as const;

/** The native body this translation builds (POST /v1/search). */
export interface NativeSearch {
  readonly query: string;
  readonly max_results: number;
  readonly time_range?: (typeof NATIVE_RANGES)[number];
  readonly result_type?: 'news';
  readonly auto_scrape_top?: number;
}

/** What the answer needs from the request, kept beside the native body. */
export interface SearchPlan {
  readonly query: string;
  readonly terms: readonly string[];
  readonly maxResults: number;
  readonly advanced: boolean;
  readonly chunks: number;
  readonly answer: 'basic' | 'advanced' | undefined;
  readonly raw: 'markdown' | 'text' | undefined;
  readonly usage: boolean;
  /** Epoch ms: results published before (or after) are left out. */
  readonly after: number | undefined;
  readonly before: number | undefined;
  readonly warnings: readonly Warning[];
  readonly started: number;
}

function domainOf(field: string, value: string, r: BodyReader): string | undefined {
  // A pasted URL or "www." is taken for its host, as site: takes it.
  let host = value.trim().toLowerCase();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//.exec(host);
  if (scheme !== null) {
    try {
      host = new URL(host).hostname;
    } catch {
      host = '';
    }
  }
  if (host.startsWith('*.')) host = host.slice(2);
  if (!DOMAIN.test(host)) {
    r.issues.push({ field, message: 'must be a domain name, like example.com' });
    return undefined;
  }
  return host;
}

function dateOf(field: string, value: string | undefined, r: BodyReader): number | undefined {
  if (value === undefined) return undefined;
  const m = DATE.exec(value);
  const t = m === null ? Number.NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (m === null || Number.isNaN(t) || new Date(t).getUTCDate() !== Number(m[3])) {
    r.issues.push({ field, message: 'must be a date, YYYY-MM-DD' });
    return undefined;
  }
  return t;
}

export function translateSearch(raw: unknown, ctx: RequestContext): Translated<NativeSearch, SearchPlan> {
  const r = new BodyReader(raw);
  const started = performance.now();
  const apiKey = r.string('api_key', { max: 256 });
  const query = r.string('query', { required: true, max: MAX_QUERY });
  const depth = r.choice('search_depth', ['basic', 'advanced', 'fast', 'ultra-fast'] as const);
  const topic = r.choice('topic', ['general', 'news', 'finance'] as const);
  const days = r.integer('days', 1, 36_500);
  const maxResults = r.integer('max_results', 0, MAX_RESULTS) ?? 5;
  const answer = r.choice('include_answer', ['basic', 'advanced'] as const, true);
  const rawContent = r.choice('include_raw_content', ['markdown', 'text'] as const, true);
  const images = r.boolean('include_images');
  const imageDescriptions = r.boolean('include_image_descriptions');
  const include = r.strings('include_domains', MAX_DOMAINS, 300);
  const exclude = r.strings('exclude_domains', MAX_DOMAINS, 300);
  const timeRange = r.choice('time_range', ['day', 'week', 'month', 'year', 'd', 'w', 'm', 'y'] as const);
  const start = dateOf('start_date', r.string('start_date', { max: 10 }), r);
  const end = dateOf('end_date', r.string('end_date', { max: 10 }), r);
  const chunks = r.integer('chunks_per_source', 1, 3) ?? 3;
  const usage = r.boolean('include_usage') ?? false;
  r.boolean('include_favicon');
  r.ignored('include_favicon', 'results carry no favicon');
  r.ignored('country', "Tavily's country boosts results; Scour's country is a filter, so it is not applied");
  r.ignored('auto_parameters', 'the request is searched as given');
  r.ignored('exact_match', 'quote the phrase in the query instead ("exact phrase")');
  r.ignored('include_domains_mode', 'include_domains always restricts results to those domains');
  r.ignored('max_hours', 'use time_range or days');
  r.ignored('language', 'not applied');
  r.ignored('filter_by_language', 'not applied');
  r.ignored('fetch_timeout', 'pages are read within the native time limit');
  r.ignored('cache_fallback', 'not applied');
  r.accept('client_source', 'timeout', 'session_id', 'human_id', 'client_name');
  r.unknownFields();

  if (images === true) r.warn('OPTION_IGNORED', 'include_images: Scour search finds no images; images is empty');
  else if (imageDescriptions === true) r.warn('OPTION_IGNORED', 'include_image_descriptions: Scour search finds no images');
  if (topic === 'finance') r.warn('OPTION_IGNORED', 'topic "finance" is searched as "general"');
  if (depth === 'fast' || depth === 'ultra-fast') r.warn('OPTION_IGNORED', `search_depth "${depth}" is searched as "basic"`);

  // Domains as native operators, checked to fit a native query.
  const ops: string[] = [];
  include?.forEach((d, i) => { const h = domainOf(`include_domains[${i}]`, d, r); if (h !== undefined) ops.push(`site:${h}`); });
  exclude?.forEach((d, i) => { const h = domainOf(`exclude_domains[${i}]`, d, r); if (h !== undefined) ops.push(`-site:${h}`); });
  const text = query?.trim() ?? '';
  if (query !== undefined && text === '') r.issues.push({ field: 'query', message: 'must not be empty' });
  const nativeQuery = ops.length === 0 ? text : `${text} ${ops.join(' ')}`;
  if (ops.length > 0 && nativeQuery.length > NATIVE_QUERY_LENGTH) {
    r.issues.push({ field: 'include_domains', message: `with exclude_domains and the query, makes a query longer than ${NATIVE_QUERY_LENGTH} characters: name fewer domains` });
  }

  // Time: the narrowest window asked for; the native range that covers it; the rest filtered here.
  const now = ctx.receivedAt;
  const windows = [days, typeof timeRange === 'string' ? TIME_RANGE_DAYS[timeRange] : undefined].filter((x): x is number => x !== undefined);
  let after = windows.length === 0 ? undefined : now - Math.min(...windows) * DAY;
  if (start !== undefined) after = Math.max(after ?? start, start);
  const before = end === undefined ? undefined : end + DAY - 1;
  if (start !== undefined && end !== undefined && start > end) r.issues.push({ field: 'start_date', message: 'must not be after end_date' });
  const span = after === undefined ? undefined : now - after;
  const range = span === undefined ? undefined : NATIVE_RANGES.find((n) => TIME_RANGES[n] >= span);

  if (r.issues.length > 0) return { problem: invalidRequest(r.issues), apiKey };

  const advanced = depth === 'advanced';
  const raw_ = rawContent === true ? 'markdown' : rawContent === false ? undefined : rawContent;
  const pages = advanced || raw_ !== undefined ? Math.min(maxResults, MAX_PAGES) : 0;
  if (pages > 0 && maxResults > MAX_PAGES) r.warn('PARTLY_APPLIED', `Only the top ${MAX_PAGES} results are read: the others have ${raw_ !== undefined ? 'raw_content null and ' : ''}the snippet as content`);
  const parsed = parseQuery(text);
  const plan: SearchPlan = {
    query: text,
    terms: parsed.ok ? parsed.query.terms : [],
    maxResults,
    advanced,
    chunks,
    answer: answer === true ? 'basic' : answer === false ? undefined : answer,
    raw: raw_,
    usage,
    after,
    before,
    warnings: r.warnings,
    started,
  };
  return {
    plan,
    body: {
      query: nativeQuery,
      max_results: Math.max(1, maxResults),
      ...(range !== undefined ? { time_range: range } : {}),
      ...(topic === 'news' ? { result_type: 'news' as const } : {}),
      ...(pages > 0 ? { auto_scrape_top: pages } : {}),
    },
    apiKey,
  };
}

/** The native answer's fields this reads (POST /v1/search's response). */
export interface NativeSearchAnswer {
  readonly query: string;
  readonly search_results: readonly {
    readonly title: string; readonly link: string; readonly snippet: string; readonly score: number; readonly published_date: string | null;
  }[];
  readonly scraped_content?: readonly { readonly url: string; readonly text: string | null; readonly content: string | null; readonly error: unknown }[];
  readonly credits_used: number;
  readonly warnings?: readonly { readonly provider?: string; readonly code: string; readonly message: string }[];
}

export function tavilySearchAnswer(native: NativeSearchAnswer, plan: SearchPlan): Record<string, unknown> {
  const pages = new Map((native.scraped_content ?? []).filter((p) => p.error === null).map((p) => [p.url, p]));
  const kept = native.search_results.filter((x) => {
    if (plan.after === undefined && plan.before === undefined) return true;
    const t = x.published_date === null ? Number.NaN : Date.parse(x.published_date);
    if (Number.isNaN(t)) return false;
    return (plan.after === undefined || t >= plan.after) && (plan.before === undefined || t <= plan.before);
  }).slice(0, plan.maxResults);
  const best = kept.reduce((m, x) => Math.max(m, x.score), 0);
  const texts: string[] = [];
  const results = kept.map((x) => {
    const page = pages.get(x.link);
    const pageText = page?.text ?? undefined;
    const content = (plan.advanced && pageText !== undefined ? relevantChunks(pageText, plan.terms, plan.chunks) : undefined) ?? x.snippet;
    texts.push(plan.answer === 'advanced' && pageText !== undefined ? pageText : content);
    return {
      title: x.title,
      url: x.link,
      content,
      // Relative to the best result of this search (Tavily's scores are 0 to 1).
      score: best > 0 ? Math.round((x.score / best) * 1e4) / 1e4 : 0,
      raw_content: plan.raw === undefined || page === undefined ? null : plan.raw === 'text' ? page.text : page.content,
      ...(x.published_date !== null ? { published_date: x.published_date } : {}),
    };
  });
  const out: Record<string, unknown> = {
    query: plan.query,
    follow_up_questions: null,
    ...(plan.answer !== undefined ? { answer: extractiveAnswer(texts, plan.terms, plan.answer === 'advanced' ? 5 : 2) } : {}),
    images: [],
    results,
    response_time: Math.round((performance.now() - plan.started) / 10) / 100,
  };
  if (plan.usage) out.usage = { credits: native.credits_used };
  const warnings = [...plan.warnings, ...(native.warnings ?? []).map((w) => ({ code: w.code, message: w.provider === undefined ? w.message : `${w.provider}: ${w.message}` }))];
  if (plan.answer !== undefined && out.answer === null) warnings.push({ code: 'NO_ANSWER', message: 'No sentence of the results states anything about the query: answer is null (answers are quoted from the results, never written)' });
  if (warnings.length > 0) out.warnings = warnings;
  return out;
}

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const WarningSchema = Type.Object({ code: Type.String(), message: Type.String() });

export const TavilySearchRequest = Type.Object({
  query: Type.String({ maxLength: MAX_QUERY, description: 'The search query (at most 400 characters).' }),
  api_key: Type.Optional(Type.String({ description: 'A Scour API key, when no Authorization header is sent.' })),
  search_depth: Type.Optional(Type.String({ description: 'basic (default; fast and ultra-fast are read as basic) or advanced: the top results are read (3 credits each) and content is their most relevant sentences.' })),
  topic: Type.Optional(Type.String({ description: 'general (default), news (Scour news results), finance (searched as general).' })),
  days: Type.Optional(Type.Integer({ minimum: 1, description: 'Results published in the last N days.' })),
  time_range: Type.Optional(Type.String({ description: 'day, week, month, year (or d, w, m, y).' })),
  start_date: Type.Optional(Type.String({ description: 'YYYY-MM-DD: results published on or after.' })),
  end_date: Type.Optional(Type.String({ description: 'YYYY-MM-DD: results published on or before.' })),
  max_results: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_RESULTS, description: 'Default 5.' })),
  chunks_per_source: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, description: 'Sentences per result in an advanced search\'s content. Default 3.' })),
  include_answer: Type.Optional(Type.Unsafe<boolean | string>({ description: 'true, basic or advanced: an extractive answer, sentences quoted from the results (2, or 5 for advanced).' })),
  include_raw_content: Type.Optional(Type.Unsafe<boolean | string>({ description: 'true or markdown, or text: each result page read (3 credits each, the top 10 at most).' })),
  include_images: Type.Optional(Type.Boolean({ description: 'Ignored with a warning: images is always empty.' })),
  include_domains: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_DOMAINS })),
  exclude_domains: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_DOMAINS })),
  include_usage: Type.Optional(Type.Boolean({ description: 'Add usage.credits: the Scour credits charged.' })),
}, { additionalProperties: true, description: 'Tavily\'s search body; options Scour does not apply are ignored with a warning (docs/tavily.md).' });

export const TavilySearchResponse = Type.Object({
  query: Type.String(),
  follow_up_questions: Type.Null(),
  answer: Type.Optional(Nullable(Type.String({ description: 'Sentences quoted from the results; null when none states anything about the query.' }))),
  images: Type.Array(Type.String()),
  results: Type.Array(Type.Object({
    title: Type.String(),
    url: Type.String(),
    content: Type.String(),
    score: Type.Number({ description: 'Relative to the best result (1).' }),
    raw_content: Nullable(Type.String()),
    published_date: Type.Optional(Type.String()),
  })),
  response_time: Type.Number({ description: 'Seconds.' }),
  usage: Type.Optional(StrictObject({ credits: Type.Integer() })),
  warnings: Type.Optional(Type.Array(WarningSchema)),
  request_id: Type.Optional(Type.String()),
});
