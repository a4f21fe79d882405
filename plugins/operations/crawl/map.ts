/**
 * POST /v1/map (issue 29): a site's URLs, fast, without reading their
 * content. Built on the crawl's own parts: robots.txt (politeness.ts) for
 * its Sitemap lines, the sitemaps (sitemaps.ts: index files and gzipped
 * ones followed, bounded in files, nesting, URLs, bytes and time), and the
 * start page's links with their text (pages.ts), every request through the
 * page pipeline and so the egress guard; each URL canonical and
 * de-duplicated as a crawl's frontier is (core/crawl-urls.ts), kept to the
 * site (core/site-map.ts), and ranked by a search phrase when one is given.
 * One credit a call, held before any fetch and charged once the map is
 * made; a map that found nothing and whose start page failed fails with
 * that error (sitemap only: robots.txt's, when no sitemap request got an
 * answer) and costs nothing. Decisions the issue leaves open are in
 * docs/map.md (defaults, order, what is left out, warnings, bounds).
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { targetIssue, type EgressPolicy } from '../../../core/egress.js';
import { type ApiFailure, BadRequest, isApiFailure, TargetTimeout } from '../../../core/errors.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { CheckIssue, Unchecked } from '../../../core/schema.js';
import type { Validated } from '../../../core/stages/index.js';
import { canonicalUrl, looksLikeDocument, looksLikeFile, MAX_URL_LENGTH } from '../../../core/crawl-urls.js';
import {
  DEFAULT_MAP_LIMIT, DEFAULT_MAP_TIMEOUT, MAP_OPERATION, MAP_SITEMAP_BYTES, MAP_SITEMAP_DEPTH, MAP_SITEMAP_FILES, MAP_SITEMAP_URLS,
  MAP_TITLE_LENGTH, MAX_MAP_LIMIT, MAX_MAP_SEARCH, MAX_MAP_TIMEOUT, MIN_MAP_TIMEOUT, rankByRelevance, sameSite, SITEMAP_MODES, words, type SitemapMode,
} from '../../../core/site-map.js';
import { mapPrice } from '../../../core/prices.js';
import { defineOperation, errorSpec, schema, StrictObject, Type } from '../../sdk/index.js';
import { crawlFetchers, type FetchLinks, type LinkedPage } from './pages.js';
import { parseRobots, type FetchText } from './politeness.js';
import { sitemapHostAllowed, sitemapPages, sitemapRoots, type SitemapLimits, type SitemapStop } from './sitemaps.js';

export const MapRequest = StrictObject({
  url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'The site to map: an absolute http or https URL (its start page), checked by the egress guard.' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_MAP_LIMIT, description: `URLs answered at most (1 to ${MAX_MAP_LIMIT}, default ${DEFAULT_MAP_LIMIT}).` })),
  search: Type.Optional(Type.String({
    minLength: 1, maxLength: MAX_MAP_SEARCH,
    description: 'Only URLs relevant to this phrase, most relevant first: its words matched against each URL\'s path and query and its link text (whole words, plurals, prefixes), rare words counting most.',
  })),
  include_subdomains: Type.Optional(Type.Boolean({ description: 'Also list URLs on subdomains of the start URL\'s host (blog.example.com for example.com). Default true. www. and its bare host are always one site.' })),
  sitemap: Type.Optional(Type.Unsafe<SitemapMode>({
    type: 'string', enum: [...SITEMAP_MODES],
    description: 'include (default): the sitemaps and the start page\'s links; only: the sitemaps alone (the start page is not fetched); skip: the start page\'s links alone (robots.txt and sitemaps are not fetched).',
  })),
  timeout: Type.Optional(Type.Integer({
    minimum: MIN_MAP_TIMEOUT, maximum: MAX_MAP_TIMEOUT,
    description: `Seconds the map may take in all (${MIN_MAP_TIMEOUT} to ${MAX_MAP_TIMEOUT}, default ${DEFAULT_MAP_TIMEOUT}); what was found by then is answered, with a TIME_LIMIT warning.`,
  })),
});
type MapInput = typeof MapRequest.static;

const MapLinkSchema = StrictObject({
  url: Type.String({ description: 'Canonical: fragment and tracking parameters dropped, query sorted.' }),
  title: Type.Optional(Type.String({ description: 'The start page\'s link text for this URL (the start page\'s own title for itself), when it has one.' })),
  source: Type.Union([Type.Literal('sitemap'), Type.Literal('page')], { description: 'sitemap when a sitemap lists the URL, else page (a link of the start page, or the start page itself).' }),
});

const MapWarningSchema = StrictObject({ code: Type.String(), message: Type.String() });

export const MapResponse = StrictObject({
  links: Type.Array(MapLinkSchema),
  credits_used: Type.Integer(),
  remaining_credits: Type.Integer(),
  warnings: Type.Optional(Type.Array(MapWarningSchema, {
    description: 'What the map could not read in full: START_PAGE_FAILED (with the failure\'s code in the message), START_PAGE_NOT_READ (not HTML, or an HTTP error status), SITEMAP_LIMIT (files, URLs or bytes bound reached), TIME_LIMIT.',
  })),
  request_id: Type.Optional(Type.String()),
});

export type MapLink = typeof MapLinkSchema.static;
export interface MapWarning { readonly code: string; readonly message: string }

/** A map's settings, after defaults. */
export interface MapSpec {
  /** Canonical start URL. */
  readonly start: string;
  readonly limit: number;
  readonly search: string | undefined;
  readonly includeSubdomains: boolean;
  readonly sitemap: SitemapMode;
  readonly timeoutSeconds: number;
}

export interface MapDeps {
  readonly fetchText: FetchText;
  readonly fetchLinks: FetchLinks;
  /** The client went away: the map stops and rejects. */
  readonly signal: AbortSignal;
  readonly limits?: SitemapLimits;
}

export type MapOutcome =
  | { readonly ok: true; readonly links: MapLink[]; readonly warnings: MapWarning[] }
  | { readonly ok: false; readonly failure: unknown };

export const MAP_SITEMAP_LIMITS: SitemapLimits = { maxFiles: MAP_SITEMAP_FILES, maxDepth: MAP_SITEMAP_DEPTH, maxUrls: MAP_SITEMAP_URLS, maxBytes: MAP_SITEMAP_BYTES };

const STOPS: Readonly<Record<SitemapStop, string>> = {
  files: `${MAP_SITEMAP_FILES} sitemap files read, the rest left`,
  urls: `${MAP_SITEMAP_URLS} URLs read from sitemaps, the rest left`,
  bytes: `${MAP_SITEMAP_BYTES / 1024 / 1024} MiB of sitemaps read, the rest left`,
  time: 'the time bound was reached while sitemaps were read',
};

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
const titleOf = (s: string | null | undefined): string | undefined => {
  const t = oneLine(s ?? '');
  return t === '' ? undefined : t.slice(0, MAP_TITLE_LENGTH);
};
const failureCode = (e: unknown): string => (isApiFailure(e) ? e.code : 'TARGET_UNREACHABLE');
const failureMessage = (e: unknown): string => (e instanceof Error || isApiFailure(e) ? (e as { message: string }).message : String(e));

/** The map of one site (see the header). Rejects only when `deps.signal` aborts. */
export async function runMap(spec: MapSpec, deps: MapDeps): Promise<MapOutcome> {
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(new Error('the map\'s time bound')), spec.timeoutSeconds * 1000);
  const both = AbortSignal.any([deps.signal, budget.signal]);
  const timedOut = () => new TargetTimeout({ message: `The site did not answer within the map's ${spec.timeoutSeconds} s`, timeoutSeconds: spec.timeoutSeconds });
  const startUrl = new URL(spec.start);
  try {
    // Robots.txt and the sitemaps on one side, the start page on the other, at once.
    let textAnswered = false;
    let textFailure: unknown;
    const fetchText: FetchText = async (url, s) => {
      try {
        const r = await deps.fetchText(url, s);
        textAnswered = true;
        return r;
      } catch (e) {
        textFailure ??= e;
        throw e;
      }
    };
    const sitemapSide = async (): Promise<{ pages: string[]; stopped?: SitemapStop }> => {
      if (spec.sitemap === 'skip') return { pages: [] };
      const robotsUrl = `${startUrl.origin}/robots.txt`;
      let named: readonly string[] = [];
      try {
        const r = await fetchText(robotsUrl, both);
        if (r.statusCode >= 200 && r.statusCode < 300) named = parseRobots(robotsUrl, r.body).sitemaps;
      } catch (e) {
        if (deps.signal.aborted) throw e;
        if (budget.signal.aborted) return { pages: [], stopped: 'time' };
      }
      return sitemapPages(sitemapRoots(startUrl.origin, named), fetchText, deps.signal, sitemapHostAllowed(spec.start), deps.limits ?? MAP_SITEMAP_LIMITS, { budget: budget.signal });
    };
    const pageSide = async (): Promise<{ page?: LinkedPage; error?: unknown } | undefined> => {
      if (spec.sitemap === 'only') return undefined;
      try {
        return { page: await deps.fetchLinks(spec.start, { timeoutSeconds: spec.timeoutSeconds, signal: both }) };
      } catch (e) {
        if (deps.signal.aborted) throw e;
        return { error: budget.signal.aborted ? timedOut() : e };
      }
    };
    const [sitemaps, start] = await Promise.all([sitemapSide(), pageSide()]);
    if (deps.signal.aborted) throw deps.signal.reason;

    const inScope = (u: string) => sameSite(startUrl.hostname, new URL(u).hostname, spec.includeSubdomains);
    const found = new Map<string, { url: string; title?: string; source: 'sitemap' | 'page' }>();
    const add = (raw: string, source: 'sitemap' | 'page', title?: string, base?: string) => {
      const url = canonicalUrl(raw, base);
      if (url === undefined || url.length > MAX_URL_LENGTH || !inScope(url)) return;
      // Files that are not pages (images, scripts, archives) are not the site's pages; documents a crawl can read (.pdf, .docx) are.
      if (looksLikeFile(url) && !looksLikeDocument(url)) return;
      const had = found.get(url);
      if (had === undefined) {
        found.set(url, title === undefined ? { url, source } : { url, title, source });
        return;
      }
      if (source === 'sitemap') had.source = 'sitemap';
      if (had.title === undefined && title !== undefined) had.title = title;
    };

    const warnings: MapWarning[] = [];
    const page = start?.page;
    const pageRead = page !== undefined && page.statusCode >= 200 && page.statusCode < 300 && /^(text\/html|application\/xhtml\+xml)/i.test(page.contentType);
    // The start page first (where it ended, when a redirect kept to the site), then the sitemaps' URLs in their order, then the page's other links.
    if (pageRead) {
      const final = canonicalUrl(page.finalUrl);
      add(final !== undefined && inScope(final) ? final : spec.start, 'page', titleOf(page.title));
    }
    for (const p of sitemaps.pages) add(p, 'sitemap');
    if (pageRead) for (const l of page.links) add(l.url, 'page', titleOf(l.text));

    if (start?.error !== undefined) {
      warnings.push({ code: 'START_PAGE_FAILED', message: `${failureCode(start.error)}: the start page could not be read: ${failureMessage(start.error)}` });
    } else if (page !== undefined && !pageRead) {
      warnings.push({ code: 'START_PAGE_NOT_READ', message: `The start page answered ${page.statusCode} (${page.contentType || 'no content type'}): its links were not read` });
    }
    if (sitemaps.stopped === 'time' || (start?.error !== undefined && budget.signal.aborted)) {
      warnings.push({ code: 'TIME_LIMIT', message: `The map's ${spec.timeoutSeconds} s ran out: what was found by then is answered` });
    } else if (sitemaps.stopped !== undefined) {
      warnings.push({ code: 'SITEMAP_LIMIT', message: `Sitemaps were read in part: ${STOPS[sitemaps.stopped]}` });
    }

    if (found.size === 0) {
      // Nothing found and the site not reached at all: the map fails (uncharged) with what stopped it.
      if (start?.error !== undefined) return { ok: false, failure: start.error };
      if (spec.sitemap === 'only' && !textAnswered && textFailure !== undefined) return { ok: false, failure: budget.signal.aborted ? timedOut() : textFailure };
    }
    const all = [...found.values()];
    const ranked = spec.search === undefined ? all : rankByRelevance(all, spec.search);
    return { ok: true, links: ranked.slice(0, spec.limit), warnings };
  } finally {
    clearTimeout(timer);
  }
}

export interface MapOptions {
  /** Which addresses a target may have (core/egress.ts). */
  readonly egress: EgressPolicy;
}

export function createMapOperation(options: MapOptions) {
  return defineOperation({
    name: 'operation-map',
    description: 'POST /v1/map: a site\'s URLs from robots.txt, its sitemaps and its start page\'s links, without reading their content.',
    dependsOn: ['operation-scrape'],
    errors: ['TargetNotAllowed', 'TargetBlocked', 'TargetUnreachable', 'TargetResponseInvalid', 'TargetTimeout'].map(errorSpec),
    routes(host) {
      const { fetchText, fetchLinks } = crawlFetchers(host.pages);

      /** Every field JSON Schema cannot judge, at once: the URL (the egress guard), and a search phrase without words. */
      const requestCheck = (i: Unchecked<MapInput>): CheckIssue[] => {
        const issues: CheckIssue[] = [];
        const target = targetIssue('url', i.url, options.egress);
        if (target !== undefined) issues.push(target);
        else if (i.url !== undefined && canonicalUrl(i.url) === undefined) issues.push({ field: 'url', message: 'must be an absolute http or https URL without credentials' });
        if (typeof i.search === 'string' && words(i.search).length === 0) issues.push({ field: 'search', message: 'must hold at least one letter or digit' });
        return issues;
      };

      const precheck = {
        name: 'precheck',
        run: (ctx: RequestContext & Validated<MapInput>): Effect.Effect<{ start: string }, ApiFailure> => {
          const start = canonicalUrl(ctx.input.url);
          return start === undefined ? Effect.fail(BadRequest.of('url', 'must be an absolute http or https URL without credentials')) : Effect.succeed({ start });
        },
      };

      const mapStage = {
        name: 'map',
        run: (ctx: RequestContext & Validated<MapInput> & { start: string }) =>
          Effect.callback<{ mapped: { links: MapLink[]; warnings: MapWarning[] } }, ApiFailure>((resume) => {
            const controller = new AbortController();
            const i = ctx.input;
            const spec: MapSpec = {
              start: ctx.start, limit: i.limit ?? DEFAULT_MAP_LIMIT, search: i.search, includeSubdomains: i.include_subdomains ?? true,
              sitemap: i.sitemap ?? 'include', timeoutSeconds: i.timeout ?? DEFAULT_MAP_TIMEOUT,
            };
            runMap(spec, { fetchText, fetchLinks, signal: controller.signal }).then((outcome) => {
              if (outcome.ok) resume(Effect.succeed({ mapped: { links: outcome.links, warnings: outcome.warnings } }));
              else if (isApiFailure(outcome.failure)) resume(Effect.fail(outcome.failure as ApiFailure));
              else resume(Effect.die(outcome.failure));
            }, (e: unknown) => resume(Effect.die(e)));
            return Effect.sync(() => controller.abort(new Error('client went away')));
          }),
      };

      return [{
        method: 'POST' as const,
        path: '/v1/map',
        summary: 'Map a site: its URLs from robots.txt, its sitemaps (index files and .xml.gz too) and its start page\'s links, canonical and de-duplicated, optionally ranked by a search phrase, without reading their content. 1 credit.',
        tags: ['map'],
        auth: 'bearer' as const,
        request: schema(MapRequest),
        response: schema(MapResponse),
        failures: [400, 402, 403, 429, 502, 503, 504],
        handle: Pipeline.from<RequestContext>()
          .then(host.stages.auth)
          .then(host.stages.quota(MAP_OPERATION))
          .then(host.stages.validate(schema(MapRequest), requestCheck))
          .then(precheck)
          .then(host.stages.reserve(MAP_OPERATION, () => mapPrice(host.prices)))
          .then(mapStage)
          .then(host.stages.bill)
          .handle((ctx) => Effect.succeed({
            links: ctx.mapped.links,
            credits_used: ctx.charge.creditsUsed,
            remaining_credits: ctx.charge.remainingCredits,
            ...(ctx.mapped.warnings.length > 0 ? { warnings: ctx.mapped.warnings } : {}),
          })),
      }];
    },
  });
}
