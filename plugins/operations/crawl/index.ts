/**
 * POST /v1/crawl (extension, issue 12): crawl a site into the account's own
 * collection of the local index. The request is checked (every bad field
 * at once; the start URL and the callback through the egress guard), the
 * account must hold one page's price, and the crawl is stored as a durable
 * job of kind 'crawl' (core/jobs.ts) and answered 202. A runner (this
 * process, or `scour worker`) runs it on Crawlee (./engine.ts) with Scour's
 * fetchers behind the egress guard, storing and billing each page as it is
 * stored, and keeping its frontier in the job's items, so a crawl killed
 * mid-way resumes where it stopped. GET /v1/crawl/{job_id} shows progress
 * to its own account; DELETE cancels it. The callback gets a signed
 * crawl.completed webhook when it ends.
 */
import { randomBytes } from 'node:crypto';
import { Cause, Effect, Exit } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { type EgressPolicy, targetIssue } from '../../../core/egress.js';
import { type ApiFailure, BadRequest, NotFound, ServiceUnavailable } from '../../../core/errors.js';
import { JobFailure, type JobExecution, type JobView } from '../../../core/jobs.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { CheckIssue, Unchecked } from '../../../core/schema.js';
import type { SearchIndex } from '../../../core/search.js';
import type { Validated } from '../../../core/stages/index.js';
import { crawlPagePrice } from '../../../core/prices.js';
import { defineOperation, schema, StrictObject, Type } from '../../sdk/index.js';
import { RunAborted, runCrawl, type CrawlBook, type CrawlSpec } from './engine.js';
import { WebhookView } from '../../sdk/webhook-view.js';
import { crawlFetchers } from './pages.js';
import { canonicalUrl, MAX_URL_LENGTH } from '../../../core/crawl-urls.js';
import { CRAWL_OPERATION, DEFAULT_CRAWL_DEPTH, DEFAULT_CRAWL_PAGES, frontierLimit, globProblem, MAX_CRAWL_DEPTH, MAX_CRAWL_PAGES } from '../../../core/crawl-limits.js';

export { CRAWL_OPERATION, DEFAULT_CRAWL_DEPTH, DEFAULT_CRAWL_PAGES, frontierLimit, globProblem, MAX_CRAWL_DEPTH, MAX_CRAWL_PAGES } from '../../../core/crawl-limits.js';
const MAX_PATTERNS = 50;

const Paths = (what: string) => Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
  maxItems: MAX_PATTERNS, description: `Path globs (${what}), matched against the path and query of each link, case-insensitively: * within one segment, ** across segments, {a,b} alternatives, ? one character. E.g. "/blog/**".`,
}));

export const CrawlRequest = StrictObject({
  url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Where the crawl starts: an absolute http or https URL, checked by the egress guard.' }),
  max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CRAWL_PAGES, description: `Pages stored at most (1 to ${MAX_CRAWL_PAGES}, default ${DEFAULT_CRAWL_PAGES}).` })),
  max_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CRAWL_DEPTH, description: `Links followed from the start URL at most (0: the start page only; default ${DEFAULT_CRAWL_DEPTH}). Sitemap URLs count as depth 1.` })),
  include_paths: Paths('a link must match one of them'),
  exclude_paths: Paths('a link matching one of them is skipped'),
  same_domain: Type.Optional(Type.Boolean({ description: 'Follow links within the start URL\'s registrable domain (its subdomains included) only. Default true.' })),
  respect_robots: Type.Optional(Type.Boolean({ description: 'Obey robots.txt (Disallow and Crawl-delay) and meta robots. Default true.' })),
  use_sitemaps: Type.Optional(Type.Boolean({ description: 'Seed the crawl from robots.txt Sitemap lines and /sitemap.xml (index files followed). Default true.' })),
  render_js: Type.Optional(Type.Boolean({ description: 'Render every page in Chromium. +5 credits a page.' })),
  include_documents: Type.Optional(Type.Boolean({
    description: 'Also follow links to documents (.pdf and .docx links, and any response the page pipeline reads as a PDF or DOCX by its type or first bytes) within the same scope and limits, and store their text, title, author and date (type "report"), each at a page\'s price. Feeds are skipped (reason "feed"). Default false: document links are skipped as not_html.',
  })),
  callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'POSTed a signed crawl.completed webhook when the crawl ends. It passes the same egress guard as a target.' })),
});
type CrawlInput = typeof CrawlRequest.static;

export const CrawlAccepted = StrictObject({
  job_id: Type.String(),
  status: Type.Literal('queued'),
  status_url: Type.String({ description: 'GET it with the same API key for progress; DELETE it to cancel.' }),
  url: Type.String({ description: 'The start URL, canonical.' }),
  max_pages: Type.Integer(),
  max_depth: Type.Integer(),
  collection: Type.String({ description: 'The index collection pages go into: the account\'s own (its account id).' }),
  created_at: Type.String(),
  request_id: Type.Optional(Type.String()),
});

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const CRAWL_STATUSES = ['queued', 'running', 'cancelling', 'completed', 'stopped', 'cancelled', 'failed'] as const;
export const CrawlStatus = StrictObject({
  job_id: Type.String(),
  status: Type.Union(CRAWL_STATUSES.map((s) => Type.Literal(s)), {
    description: 'queued, running, cancelling (a cancel was asked; pages in flight finish), completed (nothing left to visit, or max_pages stored), stopped (out of credits), cancelled, failed (it could not run at all).',
  }),
  stop_reason: Nullable(Type.String({ description: 'max_pages (completed at the limit), no_credits (stopped), cancelled.' })),
  url: Type.String(),
  collection: Type.String(),
  max_pages: Type.Integer(),
  max_depth: Type.Integer(),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  callback_url: Nullable(Type.String()),
  pages_done: Type.Integer({ description: 'Pages stored in the index (and billed).' }),
  pages_failed: Type.Integer({ description: 'Pages that could not be fetched (network, timeout, blocked, an HTTP error status).' }),
  pages_queued: Type.Integer({ description: 'URLs found and still to visit.' }),
  pages_skipped: Type.Integer({ description: 'URLs found and deliberately not visited or not stored.' }),
  skipped_reasons: Type.Record(Type.String(), Type.Integer(), { description: 'pages_skipped by reason.' }),
  credits_used: Type.Integer(),
  webhook: WebhookView,
  request_id: Type.Optional(Type.String()),
});
type CrawlStatusBody = typeof CrawlStatus.static;

/** What a crawl job stores: the request, its start in canonical form, and what the submitting request decided. */
interface StoredCrawl {
  readonly input: CrawlInput;
  readonly start: string;
}

const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

/** The public status of a crawl job. */
function publicStatus(job: JobView): CrawlStatusBody['status'] {
  if (job.status === 'queued') return 'queued';
  if (job.status === 'running') return job.stopReason === 'cancelled' ? 'cancelling' : 'running';
  if (job.status === 'failed') return 'failed';
  if (job.stopReason === 'no_credits') return 'stopped';
  if (job.stopReason === 'cancelled') return 'cancelled';
  return 'completed';
}

/** A crawl as its status endpoint and its webhook show it (from the counts; no page list). */
export function crawlView(job: JobView): CrawlStatusBody {
  const stored = job.request as StoredCrawl;
  const i = stored.input;
  return {
    job_id: job.id,
    status: publicStatus(job),
    stop_reason: job.stopReason,
    url: stored.start,
    collection: job.accountId,
    max_pages: i.max_pages ?? DEFAULT_CRAWL_PAGES,
    max_depth: i.max_depth ?? DEFAULT_CRAWL_DEPTH,
    created_at: iso(job.createdAt)!,
    started_at: iso(job.startedAt),
    completed_at: iso(job.finishedAt),
    callback_url: job.callbackUrl,
    pages_done: job.counts.completed,
    pages_failed: job.counts.failed,
    pages_queued: job.counts.pending,
    pages_skipped: job.counts.skipped,
    skipped_reasons: { ...job.counts.reasons },
    credits_used: job.counts.completed * job.pricePerUrl,
    webhook: {
      deliveries: job.deliveries.map((d) => ({
        delivery_id: d.id, event: d.event, status: d.status, attempts: d.attempts, next_attempt_at: iso(d.nextAttemptAt),
        history: d.history.map((a) => ({
          attempt: a.attempt, ok: a.ok, status_code: a.responseStatus, error: a.error, attempted_at: iso(a.attemptedAt)!, next_attempt_at: iso(a.nextAttemptAt),
        })),
      })),
    },
  };
}

/** The crawl's settings from its request. */
export function specOf(stored: StoredCrawl): CrawlSpec {
  const i = stored.input;
  return {
    start: stored.start,
    maxPages: i.max_pages ?? DEFAULT_CRAWL_PAGES,
    maxDepth: i.max_depth ?? DEFAULT_CRAWL_DEPTH,
    includePaths: i.include_paths ?? [],
    excludePaths: i.exclude_paths ?? [],
    sameDomain: i.same_domain ?? true,
    respectRobots: i.respect_robots ?? true,
    useSitemaps: i.use_sitemaps ?? true,
    renderJs: i.render_js ?? false,
    includeDocuments: i.include_documents ?? false,
  };
}

export interface CrawlOptions {
  /** Which addresses a target may have (core/egress.ts). */
  readonly egress: EgressPolicy;
  /** Where pages are stored: the account's own collection. */
  readonly index: SearchIndex;
  /** How long DELETE waits for a running crawl to stop before answering (ms). Default 3000. */
  readonly cancelWaitMs?: number;
}

/** Run an Effect that fails only with ServiceUnavailable as a Promise rejecting with that error itself. */
async function unwrap<A>(e: Effect.Effect<A, ServiceUnavailable>): Promise<A> {
  const exit = await Effect.runPromiseExit(e);
  if (Exit.isSuccess(exit)) return exit.value;
  const f = Cause.findErrorOption(exit.cause);
  throw f._tag === 'Some' ? f.value : Cause.squash(exit.cause);
}

export function createCrawlOperation(options: CrawlOptions) {
  return defineOperation({
    name: 'operation-crawl',
    description: 'POST /v1/crawl, GET and DELETE /v1/crawl/{job_id}: crawl a site into the account\'s own index collection.',
    dependsOn: ['operation-scrape'],
    routes(host) {
      // Pages, robots.txt and sitemaps are read through the page pipeline (screenshots and proxies are not crawl options).
      const pages = host.pages;
      const { fetchPage, fetchText } = crawlFetchers(pages);
      const base = (headers: Readonly<Record<string, string | undefined>>) =>
        headers.host && /^[A-Za-z0-9.\-:[\]]+$/.test(headers.host) ? `http://${headers.host}` : '';

      /**
       * Every field JSON Schema cannot judge, at once, with the schema's own
       * problems (the validate stage runs it over whatever passed the
       * schema): the start URL and the callback (the egress guard: a refused
       * one is TARGET_NOT_ALLOWED when nothing else is wrong), the globs, a
       * browser for render_js.
       */
      const requestCheck = (i: Unchecked<CrawlInput>): CheckIssue[] => {
        const issues: CheckIssue[] = [];
        const target = targetIssue('url', i.url, options.egress);
        if (target !== undefined) issues.push(target);
        else if (i.url !== undefined && canonicalUrl(i.url) === undefined) issues.push({ field: 'url', message: 'must be an absolute http or https URL without credentials' });
        (['include_paths', 'exclude_paths'] as const).forEach((field) => (i[field] ?? []).forEach((g, n) => {
          const p = g === undefined ? undefined : globProblem(g);
          if (p !== undefined) issues.push({ field: `${field}[${n}]`, message: p });
        }));
        const callback = targetIssue('callback_url', i.callback_url, options.egress);
        if (callback !== undefined) issues.push(callback);
        if (i.render_js === true && !pages.renders) issues.push({ field: 'render_js', message: 'this server has no browser fetcher' });
        return issues;
      };

      /** After validation (requestCheck passed): the canonical start URL. */
      const precheck = {
        name: 'precheck',
        run: (ctx: RequestContext & Validated<CrawlInput>): Effect.Effect<{ start: string }, ApiFailure> => {
          const start = canonicalUrl(ctx.input.url);
          return start === undefined ? Effect.fail(BadRequest.of('url', 'must be an absolute http or https URL without credentials')) : Effect.succeed({ start });
        },
      };

      // The hold proves the account can pay one page; its finalizer releases it, and each page is charged as it is stored.
      const submit = {
        name: 'submit',
        run: (ctx: RequestContext & Validated<CrawlInput> & { start: string; account: { id: string } }) => {
          const i = ctx.input;
          const id = `crawl_${randomBytes(16).toString('hex')}`;
          const stored: StoredCrawl = { input: i, start: ctx.start };
          return Effect.flatMap(
            host.jobs.store.createJob({
              id, kind: 'crawl', accountId: ctx.account.id, request: stored, urls: [ctx.start], depths: [0],
              callbackUrl: i.callback_url ?? null, pricePerUrl: crawlPagePrice(host.prices, i), now: ctx.receivedAt,
            }),
            // Stored: a queue that is away only delays it (runners also poll the store).
            (job) => Effect.as(Effect.catch(host.jobs.queue.enqueue(id), () => Effect.void), { job }),
          );
        },
      };

      const post = Pipeline.from<RequestContext>()
        .then(host.stages.auth)
        .then(host.stages.quota(CRAWL_OPERATION))
        .then(host.stages.validate(schema(CrawlRequest), requestCheck))
        .then(precheck)
        .then(host.stages.reserve(CRAWL_OPERATION, (i: CrawlInput) => crawlPagePrice(host.prices, i)))
        .then(submit)
        .handle((ctx) => Effect.succeed({
          job_id: ctx.job.id,
          status: 'queued' as const,
          status_url: `${base(ctx.headers)}/v1/crawl/${ctx.job.id}`,
          url: ctx.start,
          max_pages: ctx.input.max_pages ?? DEFAULT_CRAWL_PAGES,
          max_depth: ctx.input.max_depth ?? DEFAULT_CRAWL_DEPTH,
          collection: ctx.account.id,
          created_at: new Date(ctx.job.createdAt).toISOString(),
        }));

      const notFound = () => new NotFound({ message: 'No crawl with this id belongs to this account' });
      // Only ids of the form submit makes are looked up (a NUL byte or a 10 kB id never reaches the database).
      const load = (id: string, accountId: string) => (/^crawl_[0-9a-f]{32}$/.test(id)
        ? host.jobs.store.getJob(id, accountId, { kind: 'crawl', items: false })
        : Effect.succeed(undefined));

      const status = Pipeline.from<RequestContext>()
        .then(host.stages.auth)
        .then(host.stages.quota('usage'))
        .handle((ctx) => Effect.flatMap(load(ctx.params.job_id ?? '', ctx.account.id), (job) =>
          job === undefined ? Effect.fail(notFound()) : Effect.succeed(crawlView(job))));

      const cancelWaitMs = options.cancelWaitMs ?? 3000;
      const cancel = Pipeline.from<RequestContext>()
        .then(host.stages.auth)
        .then(host.stages.quota('usage'))
        .handle((ctx) => {
          const id = ctx.params.job_id ?? '';
          const accountId = ctx.account.id;
          return Effect.flatMap(load(id, accountId), (job) => {
            if (job === undefined) return Effect.fail(notFound());
            // A queued crawl closes at once: its webhook is created with it.
            const delivery = job.callbackUrl === null ? undefined : { id: `dlv_${randomBytes(16).toString('hex')}`, event: 'crawl.completed', nextAttemptAt: Date.now() };
            return Effect.flatMap(host.jobs.store.requestStop(id, accountId, 'crawl', 'cancelled', Date.now(), delivery), (r) => {
              if (r === undefined) return Effect.fail(notFound());
              // A running one stops at its runner's next look (pages in flight finish): wait a little for it.
              const settle = (left: number): Effect.Effect<JobView | undefined, ServiceUnavailable> =>
                Effect.flatMap(load(id, accountId), (j) =>
                  j === undefined || j.status !== 'running' || left <= 0 ? Effect.succeed(j) : Effect.andThen(Effect.sleep(100), settle(left - 100)));
              return Effect.flatMap(r === 'requested' ? settle(cancelWaitMs) : load(id, accountId), (j) =>
                j === undefined ? Effect.fail(notFound()) : Effect.succeed(crawlView(j)));
            });
          });
        });

      // The runner's side: one run of a crawl, resumed from its stored frontier.
      host.jobs.provide({
        kind: 'crawl',
        operation: CRAWL_OPERATION,
        events: { completed: 'crawl.completed', failed: 'crawl.failed' },
        viewsItems: false,
        view: crawlView,
        run: (x: JobExecution) => {
          const stored = x.job.request as StoredCrawl;
          const spec = specOf(stored);
          if (spec.renderJs && !pages.renders) {
            // Accepted once, refused now (the server lost its browser): it ends failed.
            return Effect.fail(new JobFailure('MISSING_PARAMETER', 'render_js: this server has no browser fetcher'));
          }
          const limit = frontierLimit(spec.maxPages);
          const accountId = x.job.accountId;
          const book: CrawlBook = {
            items: x.job.items.map((it) => ({ idx: it.idx, url: it.url, depth: it.depth ?? 0, status: it.status })),
            frontierLimit: limit,
            finish: async ({ idx, outcome, discovered }) => {
              const r = await unwrap(x.finish({
                idx,
                success: outcome.kind === 'stored',
                attempts: outcome.kind === 'failed' ? outcome.attempts : 1,
                result: outcome.kind === 'stored' ? outcome.result : null,
                error: outcome.kind === 'failed' ? outcome.error : null,
                ...(outcome.kind === 'skipped' ? { skip: outcome.reason } : {}),
                discovered: { entries: discovered, limit },
              }));
              return { added: r.added ?? [], refused: outcome.kind === 'stored' && !r.alreadyDone && r.charged === 0, available: r.available };
            },
            extend: (entries) => unwrap(x.extend({ entries, limit })),
            stopRequested: () => unwrap(x.stopRequested()),
          };
          return Effect.flatMap(
            Effect.promise((signal) => runCrawl(spec, {
              fetchPage, fetchText, book, signal, pricePerPage: x.job.pricePerUrl,
              index: {
                put: async (doc) => (await options.index.upsert(accountId, [doc], Date.now())).indexed > 0,
                remove: async (url) => void (await options.index.remove(accountId, [url], Date.now())),
              },
            }).then((outcome) => ({ outcome }), (error: unknown) => ({ error }))),
            (r) => {
              if ('outcome' in r) {
                const { stopReason, leftover } = r.outcome;
                return Effect.succeed({ ...(stopReason === undefined ? {} : { stopReason }), ...(leftover === undefined ? {} : { leftover }) });
              }
              if (r.error instanceof RunAborted) return Effect.interrupt;
              if (r.error instanceof ServiceUnavailable) return Effect.fail(r.error);
              return Effect.fail(new ServiceUnavailable({ message: `The crawl stopped: ${r.error instanceof Error ? r.error.message : String(r.error)}`, retryAfter: 1 }));
            },
          );
        },
      });

      return [
        {
          method: 'POST' as const,
          path: '/v1/crawl',
          summary: 'Crawl a site into this account\'s own index collection: 202 with a job; pages are stored and billed as they are crawled (3 credits a page, +5 with render_js).',
          tags: ['crawl'],
          auth: 'bearer' as const,
          headers: ['host'],
          status: 202 as const,
          request: schema(CrawlRequest),
          response: schema(CrawlAccepted),
          failures: [400, 402, 403, 429, 503],
          handle: post,
        },
        {
          method: 'GET' as const,
          path: '/v1/crawl/{job_id}',
          summary: "A crawl of this account: status, pages done, failed, queued and skipped (by reason), credits used, webhook attempts (404 for another account's crawl).",
          tags: ['crawl'],
          auth: 'bearer' as const,
          response: schema(CrawlStatus),
          failures: [404, 429, 503],
          handle: status,
        },
        {
          method: 'DELETE' as const,
          path: '/v1/crawl/{job_id}',
          summary: 'Cancel a crawl of this account: a queued one ends at once, a running one after the pages in flight (pages stored so far stay stored and billed).',
          tags: ['crawl'],
          auth: 'bearer' as const,
          response: schema(CrawlStatus),
          failures: [404, 429, 503],
          handle: cancel,
        },
      ];
    },
  });
}
