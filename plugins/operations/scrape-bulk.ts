/**
 * POST /v1/scrape/bulk (spec 2.4), synchronous mode: up to 100 URLs with
 * the single scrape's options, each checked and guarded like a single
 * scrape and run through the same stages (scrapeStages), at most
 * `concurrent_requests` at once (bounded by the plan's scrape concurrency
 * and a server maximum), failed URLs retried when asked (each retry goes
 * through another proxy where proxies are configured). One bad URL fails
 * its item, not the request, unless none is valid. The answer lists one
 * result per URL in input order; only successful URLs are charged.
 */
import { Effect } from 'effect';
import type { PlanId } from '../../core/accounts.js';
import type { RequestContext } from '../../core/context.js';
import { checkTargetUrl, type EgressPolicy } from '../../core/egress.js';
import { type ApiFailure, BadRequest, errorBody, type FieldIssue, InternalError, isApiFailure, TargetNotAllowed } from '../../core/errors.js';
import { Pipeline } from '../../core/pipeline.js';
import type { Validated } from '../../core/stages.js';
import { scrapePrice } from '../../config/prices.js';
import { defineOperation, schema, StrictObject, Type } from '../sdk/index.js';
import { ScrapeRequest, scrapeStages, type ScrapeOptions } from './scrape.js';

export const MAX_BULK_URLS = 100;
/** URLs of one bulk request in flight at once, whatever the plan allows. */
export const MAX_BULK_CONCURRENCY = 16;
export const MAX_BULK_RETRIES = 5;
/** Failures worth another attempt (through another proxy where there are proxies). */
const RETRYABLE = new Set(['TARGET_UNREACHABLE', 'TARGET_TIMEOUT', 'TARGET_BLOCKED', 'SERVICE_UNAVAILABLE']);

const { url: _url, ...singleOptions } = ScrapeRequest.properties;
export const BulkRequest = StrictObject({
  urls: Type.Array(Type.String({ minLength: 1, maxLength: 8192 }), { minItems: 1, maxItems: MAX_BULK_URLS, description: 'At most 100 URLs; each is checked and guarded like a single scrape.' }),
  ...singleOptions,
  concurrent_requests: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `URLs scraped at once. Default and bound: the plan's scrape concurrency, at most ${MAX_BULK_CONCURRENCY}.` })),
  retry_failed: Type.Optional(Type.Boolean({ description: 'Retry URLs that fail with a network error, a timeout or a block (through another proxy where there are proxies).' })),
  max_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_BULK_RETRIES, description: 'Attempts after the first, with retry_failed. Default 2.' })),
  callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Asynchronous mode (a job and a signed webhook): not available on this server yet.' })),
});
type BulkInput = typeof BulkRequest.static;

const ItemResult = StrictObject({
  url: Type.String(),
  success: Type.Boolean(),
  attempts: Type.Integer(),
  result: Type.Optional(Type.Record(Type.String(), Type.Any())),
  error: Type.Optional(Type.Record(Type.String(), Type.Any())),
});
export const BulkResponse = StrictObject({
  results: Type.Array(ItemResult),
  total: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  credits_used: Type.Integer({ description: 'Successful URLs only.' }),
  remaining_credits: Type.Integer(),
  processing_time: Type.Number({ description: 'Seconds.' }),
  request_id: Type.Optional(Type.String()),
});

type ItemOutcome =
  | { readonly ok: true; readonly attempts: number; readonly result: Record<string, unknown> }
  | { readonly ok: false; readonly attempts: number; readonly failure: ApiFailure };

/** The single-scrape options of a bulk request (what every URL is scraped with). */
function optionsOf(i: BulkInput) {
  const { urls: _u, concurrent_requests: _c, retry_failed: _r, max_retries: _m, callback_url: _cb, ...common } = i;
  return common;
}

/** The per-URL problems found before any work, by index: the URL's form, or the egress guard. */
function checkUrls(urls: readonly string[], egress: EgressPolicy): (ApiFailure | undefined)[] {
  return urls.map((url, i) => {
    const u = checkTargetUrl(url, egress);
    if (u.ok) return undefined;
    return u.kind === 'syntax'
      ? BadRequest.of(`urls[${i}]`, u.reason)
      : new TargetNotAllowed({ message: `The target is not allowed: ${u.reason}`, field: `urls[${i}]`, reason: u.reason });
  });
}

export function createBulkScrapeOperation(options: ScrapeOptions) {
  return defineOperation({
    name: 'operation-scrape-bulk',
    description: 'POST /v1/scrape/bulk: up to 100 URLs in one request.',
    dependsOn: ['operation-scrape'],
    routes(host) {
      const stages = scrapeStages(host, options);

      /** Checks shared by every URL (options), then each URL; fails the request only when no URL can be scraped. */
      const precheck = {
        name: 'precheck',
        run: (ctx: RequestContext & Validated<BulkInput>): Effect.Effect<{ urlProblems: (ApiFailure | undefined)[] }, ApiFailure> => {
          const i = ctx.input;
          if (i.callback_url !== undefined) {
            return Effect.fail(BadRequest.of('callback_url', 'asynchronous bulk jobs are not available on this server yet: leave callback_url out to get the results in the response'));
          }
          if (i.max_retries !== undefined && i.retry_failed !== true) {
            return Effect.fail(BadRequest.of('max_retries', 'only applies with retry_failed: true'));
          }
          // The single scrape's checks of everything but the URL (options, browser, proxies), once for all URLs.
          const shared = stages.optionsProblem(optionsOf(i));
          if (shared !== undefined) return Effect.fail(shared);
          const urlProblems = checkUrls(i.urls, options.egress);
          if (urlProblems.every((p) => p !== undefined)) {
            const issues: FieldIssue[] = urlProblems.map((p, n) => ({
              field: `urls[${n}]`,
              message: (p!.fields().validation_errors as FieldIssue[] | undefined)?.[0]?.message ?? p!.message,
            }));
            return Effect.fail(new BadRequest({ message: 'No URL of the request can be scraped', validationErrors: issues }));
          }
          return Effect.succeed({ urlProblems });
        },
      };

      const price = (i: BulkInput): number => {
        const valid = checkUrls(i.urls, options.egress).filter((p) => p === undefined).length;
        return scrapePrice(i) * valid;
      };

      const work = {
        name: 'fetch',
        run: (ctx: RequestContext & Validated<BulkInput> & { urlProblems: (ApiFailure | undefined)[]; account: { plan: PlanId }; hold: { actual?: number } }) => {
          const i = ctx.input;
          const planConcurrency = host.limits(ctx.account.plan, 'scrape').concurrency;
          const bound = Math.min(MAX_BULK_CONCURRENCY, planConcurrency > 0 ? planConcurrency : MAX_BULK_CONCURRENCY);
          const concurrency = Math.min(i.concurrent_requests ?? bound, bound);
          const retries = i.retry_failed ? (i.max_retries ?? 2) : 0;
          const urls = i.urls;
          const common = optionsOf(i);

          const once = (url: string) => {
            const c = { ...ctx, input: { ...common, url } } as never;
            return Effect.flatMap(stages.fetchStage.run(c), (fetched) => {
              const c2 = { ...(c as object), ...fetched } as never;
              return Effect.flatMap(stages.judge.run(c2), () =>
                Effect.flatMap(stages.extractStage.run(c2), (ex) => {
                  const c3 = { ...(c2 as object), ...ex } as never;
                  return Effect.map(stages.storeScreenshot.run(c3), (shot) => stages.shape({ ...(c3 as object), ...shot } as never));
                }));
            });
          };

          const item = (url: string, n: number): Effect.Effect<ItemOutcome> => {
            const problem = ctx.urlProblems[n];
            if (problem !== undefined) return Effect.succeed({ ok: false, attempts: 0, failure: problem });
            const attempt = (k: number): Effect.Effect<ItemOutcome> =>
              Effect.matchEffect(once(url), {
                onSuccess: (result) => Effect.succeed({ ok: true as const, attempts: k + 1, result }),
                onFailure: (e: ApiFailure) =>
                  k < retries && RETRYABLE.has(e.code) ? attempt(k + 1) : Effect.succeed({ ok: false as const, attempts: k + 1, failure: e }),
              });
            // A defect in one URL's work fails that URL (500 for it), not the request.
            return Effect.catchDefect(attempt(0), (d) =>
              Effect.succeed({ ok: false as const, attempts: 1, failure: isApiFailure(d) ? d : new InternalError({ message: 'Internal error while scraping this URL' }) }));
          };

          return Effect.map(
            Effect.forEach(urls, (url, n) => item(url, n), { concurrency }),
            (outcomes) => {
              const succeeded = outcomes.filter((o) => o.ok).length;
              // Only successful URLs are charged.
              ctx.hold.actual = scrapePrice(i) * succeeded;
              return { outcomes, succeeded };
            },
          );
        },
      };

      return [{
        method: 'POST' as const,
        path: '/v1/scrape/bulk',
        summary: 'Scrape up to 100 URLs in one request; one result per URL, in input order. Only successful URLs are charged.',
        tags: ['scrape'],
        auth: 'bearer' as const,
        headers: ['host'],
        request: schema(BulkRequest),
        response: schema(BulkResponse),
        failures: [400, 402, 403, 429, 503],
        handle: Pipeline.from<RequestContext>()
          .then(host.stages.auth)
          .then(host.stages.quota('scrape_bulk'))
          .then(host.stages.validate(schema(BulkRequest)))
          .then(precheck)
          .then(host.stages.reserve('scrape_bulk', price))
          .then(work)
          .then(host.stages.bill)
          .handle((ctx) => {
            const now = new Date(ctx.receivedAt);
            const results = ctx.outcomes.map((o, n) => {
              const url = ctx.input.urls[n]!;
              if (o.ok) return { url, success: true, attempts: o.attempts, result: o.result };
              const { request_id: _id, timestamp: _t, ...error } = errorBody(o.failure, ctx.requestId, now);
              return { url, success: false, attempts: o.attempts, error };
            });
            return Effect.succeed({
              results,
              total: results.length,
              succeeded: ctx.succeeded,
              failed: results.length - ctx.succeeded,
              credits_used: ctx.charge.creditsUsed,
              remaining_credits: ctx.charge.remainingCredits,
              processing_time: Math.round((Date.now() - ctx.receivedAt)) / 1000,
            });
          }),
      }];
    },
  });
}
