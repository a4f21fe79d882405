/**
 * POST /v1/scrape (spec 2.3, 2.5, rule 2, 8.5): one URL read through the
 * page pipeline's stages (host.pages: guard, fetch, judge, extract; see
 * page.ts), with the account's stages between them (the plan's features
 * gated and the price held before anything is fetched); a screenshot stored
 * in the blob store and served back at an unguessable, expiring URL
 * (deliver.ts). Priced and charged through the reserve and bill stages:
 * failures cost nothing, and what the page could not deliver is not
 * charged. Bulk scrape (bulk.ts) reads each of its URLs through the same
 * pipeline.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { NotFound } from '../../../core/errors.js';
import { Pipeline } from '../../../core/pipeline.js';
import { documentPagesHold, scrapePrice } from '../../../core/prices.js';
import { canonicalPageUrl } from '../../../core/page-cache.js';
import { compareVersions, trackedMarkdown, type ChangesAnswer } from '../../../core/page-changes.js';
import type { ApiFailure } from '../../../core/errors.js';
import { defineOperation, errorSpec, schema } from '../../sdk/index.js';
import type { ExtractorPlugin } from '../../sdk/scrape.js';
import { chargeOf, deliveryStages, shape, type ScrapeOptions } from './deliver.js';
import { extractJsonStages } from './extract-json.js';
import { ScrapeRequest, ScrapeResponse, scrapeChecks, type ScrapeInput } from './request.js';

export { FORBIDDEN_HEADERS, ScrapeRequest, ScrapeResponse, type ScrapeInput } from './request.js';
export { chargeOf, type ScrapeOptions, type ScrapeOutcome } from './deliver.js';

export function createScrapeOperation(options: ScrapeOptions) {
  return defineOperation({
    name: 'operation-scrape',
    description: 'POST /v1/scrape and GET /v1/screenshots/{file}.',
    dependsOn: ['fetcher-http'],
    errors: ['TargetNotAllowed', 'ProxyNotAvailable', 'TargetBlocked', 'TargetUnreachable', 'TargetResponseInvalid', 'TargetTimeout', 'DocumentEncrypted', 'DocumentUnreadable', 'ActionFailed', 'ModelUnavailable', 'ModelOutputInvalid', 'ModelTimeout'].map(errorSpec),
    routes(host) {
      const pages = host.pages;
      const extractors = new Map((host.registry.byKind('extractor') as unknown as ExtractorPlugin[]).map((x) => [x.id, x]));
      const { pageHistory, diff } = options;
      const { requestCheck } = scrapeChecks(pages, extractors, options.egress, options.callerSchemas, pageHistory !== undefined && diff !== undefined);
      const { needsModel, extractJson } = extractJsonStages(pages, options.jsonExtractor);
      const { storeScreenshot, indexStage } = deliveryStages(pages, options);
      const prices = host.prices;
      /** Only what was delivered is charged: the hold, less the options this page could not give. */
      const charge = {
        name: 'charge',
        run: (ctx: Parameters<typeof chargeOf>[1] & { hold: { actual?: number } }) => {
          ctx.hold.actual = chargeOf(prices, ctx);
          return Effect.succeed({ charged: true as const });
        },
      };
      /** The scrape cache's scope: this account's entries, and how old one may be to answer (max_age). */
      const cacheScope = {
        name: 'cache-scope',
        run: (ctx: { readonly account: { readonly id: string }; readonly input: ScrapeInput }) =>
          Effect.succeed({ cacheScope: { accountId: ctx.account.id, maxAge: ctx.input.max_age } }),
      };
      /**
       * track_changes: the main content's Markdown against the account's
       * previous tracked scrape of the URL, which it then replaces (one atomic
       * swap in the account store).
       */
      const trackChanges = {
        name: 'changes',
        run: (ctx: { readonly account: { readonly id: string }; readonly input: ScrapeInput; readonly builtins: Record<string, unknown> }):
          Effect.Effect<{ changes: ChangesAnswer | undefined }, ApiFailure> => {
          if (ctx.input.track_changes !== true || pageHistory === undefined || diff === undefined) return Effect.succeed({ changes: undefined });
          const markdown = trackedMarkdown(typeof ctx.builtins.markdown === 'string' ? ctx.builtins.markdown : '');
          const url = canonicalPageUrl(ctx.input.url) ?? ctx.input.url;
          return Effect.map(pageHistory.swap(ctx.account.id, url, markdown, Date.now()), (previous) => ({ changes: compareVersions(previous, markdown, diff) }));
        },
      };
      const scrapeRoute = {
        method: 'POST' as const,
        path: '/v1/scrape',
        summary: 'Scrape one URL: HTML, text, links, images, structured data, meta tags, main content, Markdown, screenshot.',
        tags: ['scrape'],
        auth: 'bearer' as const,
        headers: ['host'],
        request: schema(ScrapeRequest),
        response: schema(ScrapeResponse),
        failures: [400, 402, 403, 422, 429, 502, 503, 504],
        handle: Pipeline.from<RequestContext>()
          .then(host.stages.auth)
          .then(host.stages.quota('scrape'))
          .then(host.stages.validate(schema(ScrapeRequest), requestCheck))
          .then(needsModel)
          .then(pages.guard)
          .then(host.stages.gate((i: ScrapeInput) => [
            ...(i.extract_contacts ? [{ feature: 'contacts', field: 'extract_contacts' }] : []),
            ...(i.extract_social ? [{ feature: 'social', field: 'extract_social' }] : []),
          ]))
          .then(host.stages.reserve('scrape', (i: ScrapeInput) => scrapePrice(prices, i) + documentPagesHold(prices, i)))
          .then(cacheScope)
          .then(pages.fetch)
          .then(pages.judge)
          .then(pages.extractAlone)
          .then(extractJson)
          .then(trackChanges)
          .then(storeScreenshot)
          .then(charge)
          .then(host.stages.bill)
          .then(indexStage)
          .handle((ctx) => {
            const out = shape(ctx);
            out.credits_used = ctx.charge.creditsUsed;
            out.remaining_credits = ctx.charge.remainingCredits;
            return Effect.succeed(out);
          }),
      };

      const screenshotRoute = {
        method: 'GET' as const,
        path: '/v1/screenshots/{file}',
        summary: 'A screenshot taken by a scrape: the unguessable URL is the credential; it expires (SCOUR_SCREENSHOT_TTL).',
        tags: ['scrape'],
        auth: 'none' as const,
        produces: { contentType: 'image/png' },
        failures: [404],
        handle: (ctx: RequestContext) => {
          const m = /^([A-Za-z0-9_-]{32})\.(png|jpg)$/.exec(ctx.params.file ?? '');
          const notFound = new NotFound({ message: 'No such screenshot, or it has expired' });
          if (m === null) return Effect.fail(notFound);
          return Effect.flatMap(
            Effect.promise(() => options.blobs.get(m[1]!, Date.now())),
            (blob) => {
              if (blob === undefined) return Effect.fail(notFound);
              // The route's declared type is png; a jpeg blob says so (the app lets a stage's content-type win on non-JSON routes).
              ctx.reply.set('content-type', blob.contentType);
              ctx.reply.set('cache-control', 'private, max-age=3600');
              return Effect.succeed(blob.data);
            },
          );
        },
      };
      return [scrapeRoute, screenshotRoute];
    },
  });
}
