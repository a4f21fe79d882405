/**
 * POST /v1/search (spec 2.1, 2.2, rules 1 and 3, 7.3, 8.1, 8.4, 8.5): the
 * query parsed once (core/search.ts), asked of every enabled search provider
 * at once, each bounded by its own time; what each provider could not filter
 * itself filtered afterwards; the lists fused by reciprocal rank fusion and
 * de-duplicated by normalised URL; each result naming the providers that
 * found it. A provider that fails or times out is a warning; only when all
 * of them fail is the search an error (502, nothing charged).
 *
 * Enrichment (enrich.ts): the top results read through the page
 * pipeline, with contacts and social profiles found in them when asked;
 * pages that fail cost nothing.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { BadRequest, SearchUnavailable, type ApiFailure, type FieldIssue } from '../../../core/errors.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { PluginHost } from '../../../core/plugin.js';
import type { Unchecked } from '../../../core/schema.js';
import {
  CANONICAL_TIME_RANGE, parseQuery, TIME_RANGES, domainOf, type ParsedQuery, type ProviderResult,
  type SearchFilters, type SearchProviderPlugin, type TimeRange,
} from '../../../core/search.js';
import type { Authenticated, Validated } from '../../../core/stages/index.js';
import { countryProblem } from '../../../core/countries.js';
import { defineOperation, errorSpec, schema, StrictObject, Type } from '../../sdk/index.js';
import { languageProblem } from '../../../core/languages.js';
import { activeFilters, ask, fuse, markTerms, postFilter, type PauseBook, type SearchWarning } from '../../../core/search-merge.js';
import { enrichStage, heldPrice, PAGES_FOR_EXTRACTION, pagesToScrape } from './enrich.js';

const TIME_RANGE_NAMES = Object.keys(TIME_RANGES) as TimeRange[];
const StringEnum = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });

export const SearchRequest = StrictObject({
  query: Type.String({
    minLength: 1, maxLength: 2000,
    description: 'Words, "exact phrases", -exclusions, -"phrases", site:example.com, -site:, OR between phrases, intitle:word. 1 to 500 characters after trimming, with a letter or digit. Natural text is never refused: what is not syntax (an unclosed quote, a lone dash, a dangling operator) is read as text, with a QUERY_REINTERPRETED warning.',
  }),
  max_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'Default 10. Above 10: 2 credits instead of 1.' })),
  auto_scrape_top: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'Top results to scrape for content: 3 credits per page scraped successfully.' })),
  include_contacts: Type.Optional(Type.Boolean({ description: `Emails, phones, names and companies from the scraped pages (the top ${PAGES_FOR_EXTRACTION} when auto_scrape_top is 0). Starter plan or higher; +5 credits.` })),
  include_social: Type.Optional(Type.Boolean({ description: `Social profiles from the scraped pages (the top ${PAGES_FOR_EXTRACTION} when auto_scrape_top is 0). Builder plan or higher; +5 credits.` })),
  country: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'ISO 3166-1 alpha-2, upper case (US, DE).' })),
  language: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'ISO 639-1, lower case (en, de, zh).' })),
  time_range: Type.Optional(StringEnum(TIME_RANGE_NAMES, 'Published within: hour, day (also 24h, past_day), week (past_week), month (past_month), year (past_year). Results without a date are left out.')),
  safe_search: Type.Optional(StringEnum(['off', 'moderate', 'strict'] as const, 'off: everything; moderate (default): no explicit results; strict: only results known to be safe.')),
  result_type: Type.Optional(StringEnum(['web', 'news'] as const, 'web (default), or news: news and articles with a date, newest first among equally relevant ones.')),
});
export type SearchInput = typeof SearchRequest.static;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const SearchResult = Type.Object({
  title: Type.String(),
  link: Type.String(),
  snippet: Type.String({ description: 'Plain text, about 160 to 300 characters; no markup.' }),
  highlights: Type.Array(Type.Array(Type.Integer(), { minItems: 2, maxItems: 2 }), { description: '[start, end) UTF-16 offsets of the query words in snippet.' }),
  position: Type.Integer({ minimum: 1 }),
  date: Nullable(Type.String({ description: 'YYYY-MM-DD (UTC) of published_date.' })),
  domain: Type.String(),
  published_date: Nullable(Type.String({ description: 'ISO 8601, UTC.' })),
  source: Type.Array(Type.String(), { description: 'The providers that found this result, in priority order.' }),
  score: Type.Number({ description: 'Reciprocal-rank-fusion score across providers.' }),
  type: Nullable(Type.String()),
  language: Nullable(Type.String()),
});
const Warning = Type.Object({
  provider: Type.Optional(Type.String({ description: 'The provider the warning is about; absent for a warning about the query itself (QUERY_REINTERPRETED).' })),
  code: Type.String(),
  message: Type.String(),
});
export const SearchResponse = Type.Object({
  query: Type.String(),
  search_results: Type.Array(SearchResult),
  scraped_content: Type.Optional(Type.Array(Type.Object({
    url: Type.String(),
    title: Type.String(),
    text: Nullable(Type.String({ description: 'The main content, plain text.' })),
    content: Nullable(Type.String({ description: 'The main content as Markdown.' })),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
    contacts: Type.Optional(Type.Array(Type.Any())),
    social: Type.Optional(Type.Array(Type.Any())),
  }))),
  contacts: Type.Optional(Type.Array(Type.Any())),
  social_profiles: Type.Optional(Type.Array(Type.Any())),
  total_results: Type.Integer(),
  results_count: Type.Integer(),
  scraped_count: Type.Integer(),
  search_time: Type.Number({ description: 'Seconds.' }),
  credits_used: Type.Integer(),
  remaining_credits: Type.Integer(),
  warnings: Type.Optional(Type.Array(Warning)),
  request_id: Type.Optional(Type.String()),
});

export interface SearchOptions {
  /** Provider ids in priority order (SCOUR_SEARCH_PROVIDERS). */
  readonly providers: readonly string[];
  /** How long one provider may take. */
  readonly providerTimeoutMs: number;
  /** Providers paused after rate-limiting us (shared across processes in shared mode). */
  readonly pauses?: PauseBook;
}


/**
 * The checks JSON Schema cannot make, all reported at once; the parsed query
 * when they pass. The validate stage runs it over whatever fields passed the
 * schema, so any field may be missing.
 */
function check(i: Unchecked<SearchInput>): { issues: FieldIssue[]; query: ParsedQuery | undefined; reading: string | undefined } {
  const issues: FieldIssue[] = [];
  const parsed = i.query === undefined ? undefined : parseQuery(i.query);
  if (parsed !== undefined && !parsed.ok) issues.push({ field: 'query', message: parsed.message });
  if (i.country !== undefined) {
    const p = countryProblem(i.country);
    if (p !== undefined) issues.push({ field: 'country', message: p.replace(/^country /, '') });
  }
  if (i.language !== undefined) {
    const p = languageProblem(i.language);
    if (p !== undefined) issues.push({ field: 'language', message: p });
  }
  return { issues, query: parsed?.ok ? parsed.query : undefined, reading: parsed?.ok ? parsed.reading : undefined };
}

export function searchFilters(i: SearchInput, now: number): SearchFilters {
  const range = i.time_range;
  return {
    country: i.country,
    language: i.language,
    publishedAfter: range === undefined ? undefined : now - TIME_RANGES[range],
    timeRange: range === undefined ? undefined : CANONICAL_TIME_RANGE[range],
    safeSearch: i.safe_search ?? 'moderate',
    resultType: i.result_type ?? 'web',
  };
}

const isoDate = (ms: number | null): { date: string | null; published: string | null } => {
  if (ms === null || !Number.isFinite(ms)) return { date: null, published: null };
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return { date: null, published: null };
  const iso = d.toISOString();
  return { date: iso.slice(0, 10), published: iso };
};

export function createSearchOperation(options: SearchOptions) {
  return defineOperation({
    name: 'operation-search',
    description: 'POST /v1/search: every enabled search provider at once, fused by reciprocal rank fusion; the top results scraped on request.',
    dependsOn: ['fetcher-http'],
    errors: ['SearchUnavailable'].map(errorSpec),
    routes(host: PluginHost) {
      const all = host.registry.byKind('search-provider') as unknown as SearchProviderPlugin[];
      const byId = new Map(all.map((p) => [p.id, p]));
      const missing = options.providers.filter((id) => !byId.has(id));
      if (missing.length > 0) {
        throw new Error(`SCOUR_SEARCH_PROVIDERS names ${missing.join(', ')}, but no search-provider plugin has that id (available: ${[...byId.keys()].join(', ') || 'none'})`);
      }
      const providers = options.providers.map((id) => byId.get(id)!);

      /** The parsed query, for the stages after (the validate stage has run the same checks, so this fails only on a bug). */
      const precheck = {
        name: 'precheck',
        run: (ctx: RequestContext & Validated<SearchInput>): Effect.Effect<{ parsed: ParsedQuery; reading: string | undefined }, BadRequest> => {
          const { issues, query, reading } = check(ctx.input);
          if (issues.length > 0 || query === undefined) return Effect.fail(new BadRequest({ message: 'Invalid search request', validationErrors: issues }));
          return Effect.succeed({ parsed: query, reading });
        },
      };
      const enrich = enrichStage(host);

      const searchStage = {
        name: 'search',
        run: (ctx: RequestContext & Authenticated & Validated<SearchInput> & { parsed: ParsedQuery; reading: string | undefined }) =>
          Effect.callback<{ found: Found }, ApiFailure>((resume) => {
            const controller = new AbortController();
            const started = performance.now();
            const i = ctx.input;
            const filters = searchFilters(i, ctx.receivedAt);
            const maxResults = i.max_results ?? 10;
            const query = ctx.parsed;
            // A provider that leaves some of the request's filters to us is asked for more, so that enough survive them.
            const active = activeFilters(query, filters);
            const wider = Math.min(100, maxResults * 2);
            Promise.all(providers.map((p) => ask(p, (signal) => p.search({
              query, filters, accountId: ctx.account.id, signal, now: ctx.receivedAt,
              limit: active.every((f) => p.applies?.has(f) === true) ? maxResults : wider,
            }), options.providerTimeoutMs, controller.signal, options.pauses))).then((outcomes) => {
              const warnings: SearchWarning[] = [];
              const lists: { provider: string; results: readonly ProviderResult[] }[] = [];
              let total = 0;
              for (const o of outcomes) {
                if (!o.ok) { warnings.push(o.warning); continue; }
                for (const w of o.response.warnings ?? []) warnings.push({ provider: o.provider, code: w.code, message: w.message });
                const kept = postFilter(o.response.results, o.response.applied, query, filters);
                const dropped = o.response.results.length - kept.length;
                lists.push({ provider: o.provider, results: kept });
                total += Math.max(kept.length, (o.response.total ?? o.response.results.length) - dropped);
              }
              if (lists.length === 0) {
                resume(Effect.fail(new SearchUnavailable({
                  message: `No search provider answered (${outcomes.map((o) => o.provider).join(', ')}); nothing was charged`,
                  warnings, retryAfter: 5,
                })));
                return;
              }
              const fused = fuse(lists, { newestFirst: filters.resultType === 'news' });
              // Pages two providers both found count once in the total.
              const duplicates = lists.reduce((n, l) => n + l.results.length, 0) - fused.length;
              const top = fused.slice(0, maxResults);
              const results = top.map((f, n) => {
                const r = f.result;
                const { date, published } = isoDate(r.publishedAt);
                return {
                  title: r.title,
                  link: r.url,
                  snippet: r.snippet,
                  highlights: (r.highlights ?? markTerms(r.snippet, query.terms)).map(([a, b]) => [a, b]),
                  position: n + 1,
                  date,
                  domain: domainOf(r.url),
                  published_date: published,
                  source: f.sources,
                  score: Math.round(f.score * 1e6) / 1e6,
                  type: r.type ?? null,
                  language: r.language ?? null,
                };
              });
              resume(Effect.succeed({
                found: {
                  results,
                  total: Math.max(results.length, total - duplicates),
                  warnings,
                  seconds: (performance.now() - started) / 1000,
                },
              }));
            }, (e: unknown) => resume(Effect.die(e)));
            return Effect.sync(() => controller.abort(new Error('client went away')));
          }),
      };

      return [{
        method: 'POST' as const,
        path: '/v1/search',
        summary: 'Search the web: every enabled provider (the local index, SearXNG, plugins) at once, results fused and de-duplicated.',
        tags: ['search'],
        auth: 'bearer' as const,
        request: schema(SearchRequest),
        response: schema(SearchResponse),
        failures: [400, 402, 403, 429, 502, 503],
        handle: Pipeline.from<RequestContext>()
          .then(host.stages.auth)
          .then(host.stages.quota('search'))
          .then(host.stages.validate(schema(SearchRequest), (i) => check(i).issues))
          .then(precheck)
          .then(host.stages.gate((i: SearchInput) => [...(i.include_contacts ? ['contacts' as const] : []), ...(i.include_social ? ['social' as const] : [])]))
          // A search that scrapes nothing (no auto_scrape_top, contacts or social) has a fixed price and only
          // reads: it is charged after the work, without a hold (one commit less per request; see ReserveOptions).
          .then(host.stages.reserve('search', (i: SearchInput) => heldPrice(host.prices, i), { chargeAfter: (i: SearchInput) => pagesToScrape(i) === 0 }))
          .then(searchStage)
          .then(enrich)
          .then(host.stages.bill)
          .handle((ctx) => {
            const f = ctx.found;
            const out: Record<string, unknown> = {
              query: ctx.parsed.raw,
              search_results: f.results,
              total_results: f.total,
              results_count: f.results.length,
              scraped_count: ctx.enriched.scrapedCount,
              search_time: Math.round(f.seconds * 1e4) / 1e4,
              credits_used: ctx.charge.creditsUsed,
              remaining_credits: ctx.charge.remainingCredits,
            };
            const e = ctx.enriched;
            if (e.scraped !== undefined) out.scraped_content = e.scraped;
            if (e.contacts !== undefined) out.contacts = e.contacts;
            if (e.socialProfiles !== undefined) out.social_profiles = e.socialProfiles;
            // How the query was read comes first: it concerns every result, not one provider.
            const warnings = ctx.reading === undefined ? f.warnings : [{ code: 'QUERY_REINTERPRETED', message: ctx.reading }, ...f.warnings];
            if (warnings.length > 0) out.warnings = warnings;
            return Effect.succeed(out);
          }),
      }];
    },
  });
}

interface Found {
  readonly results: readonly ({ readonly link: string; readonly title: string } & Record<string, unknown>)[];
  readonly total: number;
  readonly warnings: readonly SearchWarning[];
  readonly seconds: number;
}
