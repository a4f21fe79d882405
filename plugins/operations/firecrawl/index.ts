/**
 * Firecrawl-compatible endpoints (issue 30): a client of Firecrawl's API
 * (v2, and v1 for older clients) pointed at `<scour>/firecrawl` with a Scour
 * API key works unchanged. Each route is a thin translation over a native
 * route, run in process (native.ts): the Firecrawl body becomes a native
 * body (scrape-options.ts, requests.ts), the native route runs with its own
 * auth, rate limits, validation, egress guard, credits and billing, and its
 * answer is shaped as Firecrawl's (documents.ts, responses.ts), its
 * failures in Firecrawl's error shape (errors.ts). What Scour cannot honour
 * is ignored with a `warning`; nothing here fetches, prices or charges.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { type ApiFailure, type BadRequest, NotFound } from '../../../core/errors.js';
import type { HttpMethod, Route } from '../../../core/plugin.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { SearchIndex } from '../../../core/search.js';
import { defineOperation, schema, Type } from '../../sdk/index.js';
import { crawledDocument, documentOf } from './documents.js';
import { firecrawlFailure, invalidRequest } from './errors.js';
import { nativeCaller, type NativeRequest } from './native.js';
import { translateBatch, translateCrawl, translateMap, translateScrape, translateSearch, type Translated } from './requests.js';
import { batchErrors, batchId, batchStatus, crawlErrors, crawlStatus, mapLinks, parseBatchId, searchResults } from './responses.js';
import { warningText } from './scrape-options.js';

export interface FirecrawlOptions {
  /** Where crawled pages are stored (their documents in a crawl's status are read from it). */
  readonly index: SearchIndex;
}

type Json = Record<string, unknown>;
type Version = 1 | 2;

export const FIRECRAWL_PREFIX = '/firecrawl';

const Body = Type.Object({}, { additionalProperties: true, description: "Firecrawl's request body (docs/firecrawl.md): translated to the native operation's." });
const Answer = Type.Object({ success: Type.Boolean() }, { additionalProperties: true, description: "Firecrawl's response shape." });

/** The context after the body stage: the decoded body, or the failure the native validate stage will answer. */
interface WithBody extends RequestContext {
  readonly fc: { readonly body: Json } | { readonly error: BadRequest | NonNullable<RequestContext['bodyError']> };
}

/**
 * The route's validate stage: a body that is not a JSON object is a failure
 * kept for the native pipeline (answered after its auth and quota); the
 * translation checks the rest the same way.
 */
const readBody = {
  name: 'validate' as const,
  run: (ctx: RequestContext): Effect.Effect<Pick<WithBody, 'fc'>> => {
    if (ctx.bodyError !== undefined) return Effect.succeed({ fc: { error: ctx.bodyError } });
    const b = ctx.body;
    if (typeof b !== 'object' || b === null || Array.isArray(b)) return Effect.succeed({ fc: { error: invalidRequest([{ field: 'body', message: 'must be a JSON object' }]) } });
    return Effect.succeed({ fc: { body: b as Json } });
  },
};

/** The native request of a translation: its body, or its issues as the failure the native validate stage answers. */
const nativeRequest = (t: Pick<Translated, 'native' | 'issues'>): NativeRequest => (t.issues.length > 0 ? { bodyError: invalidRequest(t.issues) } : { body: t.native });
const withWarning = (out: Json, warnings: readonly string[]): Json => {
  const w = warningText(warnings);
  return w === undefined ? out : { ...out, warning: w };
};
const baseOf = (ctx: RequestContext): string => {
  const h = ctx.headers.host;
  return h !== undefined && /^[A-Za-z0-9.\-:[\]]+$/.test(h) ? `http://${h}` : '';
};

export function createFirecrawlOperation(options: FirecrawlOptions) {
  return defineOperation({
    name: 'operation-firecrawl',
    description: 'Firecrawl-compatible endpoints (v1 and v2) under /firecrawl, over the native scrape, bulk scrape, crawl, map and search.',
    dependsOn: ['operation-scrape', 'operation-scrape-bulk', 'operation-crawl', 'operation-map', 'operation-search'],
    routes(host) {
      const call = nativeCaller(host);
      const renders = () => host.pages.renders;

      const route = (method: HttpMethod, version: Version, path: string, summary: string, body: boolean, work: (ctx: WithBody) => Effect.Effect<Json, ApiFailure>): Route<any, any> => ({
        method,
        path: `${FIRECRAWL_PREFIX}/v${version}${path}`,
        summary: `Firecrawl v${version}: ${summary}`,
        tags: ['firecrawl'],
        auth: 'bearer',
        headers: ['host'],
        ...(body ? { request: schema(Body) } : {}),
        response: schema(Answer),
        stampRequestId: false,
        failures: [400, 401, 402, 403, 404, 429, 502, 503, 504],
        handle: body
          ? Pipeline.from<RequestContext>().then(readBody).handle((ctx) => work(ctx as WithBody))
          : Pipeline.from<RequestContext>().handle((ctx) => work(ctx as WithBody)),
      });

      /** Translate the body (or pass its decoding failure on), then run the native route. */
      const translated = <T extends Pick<Translated, 'native' | 'issues'>>(ctx: WithBody, translate: (b: Json) => T) => {
        if ('error' in ctx.fc) return { t: undefined, req: { bodyError: ctx.fc.error as BadRequest } };
        const t = translate(ctx.fc.body);
        return { t, req: nativeRequest(t) };
      };

      const scrape = (v: Version) => route('POST', v, '/scrape', 'scrape one URL (native POST /v1/scrape).', true, (ctx) => {
        const { t, req } = translated(ctx, (b) => translateScrape(b, { version: v, renders: renders() }));
        return Effect.map(call(ctx, 'POST', '/v1/scrape', req), ({ value }) => {
          const warning = warningText(t!.warnings);
          return withWarning({ success: true, data: documentOf(value, t!.formats, ctx.requestId, warning) }, t!.warnings);
        });
      });

      const batchStart = (v: Version) => route('POST', v, '/batch/scrape', 'start a batch scrape (native asynchronous POST /v1/scrape/bulk).', true, (ctx) => {
        const { t, req } = translated(ctx, (b) => translateBatch(b, { version: v, renders: renders() }));
        return Effect.map(call(ctx, 'POST', '/v1/scrape/bulk', req), ({ value }) => {
          const id = batchId(String(value.job_id), t!.formats);
          return withWarning({
            success: true, id, url: `${baseOf(ctx)}${FIRECRAWL_PREFIX}/v${v}/batch/scrape/${id}`,
            ...(t!.invalid.length > 0 ? { invalidURLs: t!.invalid } : {}),
          }, t!.warnings);
        });
      });

      /** A batch's native status (the native route answers 404 for an unknown id or another account's job). */
      const batchJob = (ctx: RequestContext, id: string) => {
        const parsed = parseBatchId(id);
        if (parsed === undefined) return Effect.fail(firecrawlFailure(new NotFound({ message: 'No batch scrape with this id belongs to this account' })));
        return Effect.map(call(ctx, 'GET', '/v1/scrape/bulk/{job_id}', { params: { job_id: parsed.jobId } }), ({ value }) => ({ value, formats: parsed.formats }));
      };
      const batchGet = (ctx: RequestContext, v: Version, id: string) => Effect.map(batchJob(ctx, id), ({ value, formats }) => batchStatus(value, formats, v));
      const batchStatusRoute = (v: Version) => route('GET', v, '/batch/scrape/{id}', 'a batch scrape\'s status and documents.', false, (ctx) => batchGet(ctx, v, ctx.params.id ?? ''));
      const batchErrorsRoute = (v: Version) => route('GET', v, '/batch/scrape/{id}/errors', 'a batch scrape\'s failed URLs.', false, (ctx) =>
        Effect.map(batchJob(ctx, ctx.params.id ?? ''), ({ value }) => batchErrors(value)));

      const crawlStart = (v: Version) => route('POST', v, '/crawl', 'start a crawl (native POST /v1/crawl).', true, (ctx) => {
        const { t, req } = translated(ctx, (b) => translateCrawl(b, { version: v, renders: renders() }));
        return Effect.map(call(ctx, 'POST', '/v1/crawl', req), ({ value }) => {
          const id = String(value.job_id);
          return withWarning({ success: true, id, url: `${baseOf(ctx)}${FIRECRAWL_PREFIX}/v${v}/crawl/${id}` }, t!.warnings);
        });
      });

      /** A crawl's status with its pages' documents (the crawl stored them in the account's index collection). */
      const crawlGet = (v: Version) => route('GET', v, '/crawl/{id}', 'a crawl\'s status and documents (v1: a batch\'s too, as its client asks there).', false, (ctx) => {
        const id = ctx.params.id ?? '';
        // v1's client polls a batch at the crawl's URL.
        if (id.startsWith('bulk_')) return batchGet(ctx, v, id);
        return Effect.flatMap(call(ctx, 'GET', '/v1/crawl/{job_id}', { params: { job_id: id } }), ({ value, ctx: native }) => {
          const accountId = native.account?.id;
          if (accountId === undefined) return Effect.succeed(crawlStatus(value, [], v));
          return Effect.mapError(Effect.flatMap(host.jobs.store.getJob(id, accountId, { kind: 'crawl', items: true }), (job) => {
            const done = (job?.items ?? []).filter((i) => i.status === 'completed');
            if (done.length === 0) return Effect.succeed(crawlStatus(value, [], v));
            return Effect.map(
              Effect.promise(() => options.index.get([accountId], done.map((i) => i.url)).catch(() => [])),
              (stored) => {
                const byUrl = new Map(stored.map((d) => [d.url, d]));
                return crawlStatus(value, done.map((i) => crawledDocument(i.url, i.result as Json | undefined, byUrl.get(i.url))), v);
              },
            );
          }), firecrawlFailure);
        });
      });

      /** A crawl's items, after the native status route has checked the id and the account. */
      const crawlItems = (ctx: RequestContext, id: string) =>
        Effect.flatMap(call(ctx, 'GET', '/v1/crawl/{job_id}', { params: { job_id: id } }), ({ ctx: native }) => {
          const accountId = native.account?.id;
          if (accountId === undefined) return Effect.succeed([]);
          return Effect.mapError(Effect.map(host.jobs.store.getJob(id, accountId, { kind: 'crawl', items: true }), (job) => job?.items ?? []), firecrawlFailure);
        });
      const crawlErrorsRoute = (v: Version) => route('GET', v, '/crawl/{id}/errors', 'a crawl\'s failed pages and the URLs robots.txt kept it from.', false, (ctx) => {
        const id = ctx.params.id ?? '';
        if (id.startsWith('bulk_')) return Effect.map(batchJob(ctx, id), ({ value }) => batchErrors(value));
        return Effect.map(crawlItems(ctx, id), crawlErrors);
      });

      const crawlCancel = (v: Version) => route('DELETE', v, '/crawl/{id}', 'cancel a crawl (native DELETE /v1/crawl/{job_id}).', false, (ctx) =>
        Effect.map(call(ctx, 'DELETE', '/v1/crawl/{job_id}', { params: { job_id: ctx.params.id ?? '' } }), () => ({ success: true, status: 'cancelled' })));

      const map = (v: Version) => route('POST', v, '/map', 'the URLs of a site (native POST /v1/map).', true, (ctx) => {
        const { t, req } = translated(ctx, (b) => translateMap(b, v));
        return Effect.map(call(ctx, 'POST', '/v1/map', req), ({ value }) => {
          const native = Array.isArray(value.warnings) ? value.warnings.map((w) => String((w as Json).message ?? '')).filter((m) => m !== '') : [];
          return withWarning({ success: true, links: mapLinks(value, v) }, [...t!.warnings, ...native]);
        });
      });

      const search = (v: Version) => route('POST', v, '/search', 'search, with the top results scraped on scrapeOptions (native POST /v1/search).', true, (ctx) => {
        const { t, req } = translated(ctx, (b) => translateSearch(b, v));
        return Effect.map(call(ctx, 'POST', '/v1/search', req), ({ value }) => {
          const results = searchResults(value);
          const data = v === 1 ? results : (t!.news ? { news: results } : { web: results });
          return withWarning({ success: true, data }, t!.warnings);
        });
      });

      return ([1, 2] as const).flatMap((v) => [
        scrape(v), batchStart(v), batchStatusRoute(v), batchErrorsRoute(v), crawlStart(v), crawlGet(v), crawlErrorsRoute(v), crawlCancel(v), map(v), search(v),
      ]);
    },
  });
}
