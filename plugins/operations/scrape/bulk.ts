/**
 * POST /v1/scrape/bulk (spec 2.4): up to 100 URLs with the single scrape's
 * options, each checked and guarded like a single scrape and read through
 * the same page pipeline (host.pages.read), then delivered like one
 * (deliver.ts), at most `concurrent_requests` at once (bounded
 * by the plan's scrape concurrency and a server maximum), failed URLs
 * retried when asked (each retry goes through another proxy where proxies
 * are configured). One bad URL fails its item, not the request, unless none
 * is valid. Only successful URLs are charged.
 *
 * Two modes. Without `callback_url` the request waits and answers 200 with
 * one result per URL in input order, streamed where the transport can (see
 * `work`): the status and headers once the request has passed every check
 * that can refuse it, then each result as soon as it and all before it are
 * done, then the totals after billing. With it, the request is stored as a
 * durable job (core/jobs.ts) and answered 202 at once; a runner (this
 * process, or `scour worker`) scrapes and bills each URL as it finishes,
 * and the results go to the callback in a signed webhook.
 * GET /v1/scrape/bulk/{job_id} shows a job's progress, results and
 * webhook attempts to its own account.
 */
import { randomBytes } from 'node:crypto';
import { Effect } from 'effect';
import type { PlanId } from '../../../core/accounts.js';
import type { RequestContext } from '../../../core/context.js';
import { checkTargetUrl, type EgressPolicy, targetIssue } from '../../../core/egress.js';
import { type ApiFailure, BadRequest, errorBody, InternalError, isApiFailure, NotFound, TargetNotAllowed } from '../../../core/errors.js';
import { JobFailure, type JobExecution, type JobView } from '../../../core/jobs.js';
import type { PageCtx } from '../../../core/page.js';
import { Pipeline } from '../../../core/pipeline.js';
import { documentPagesHold, scrapePrice as basePrice, type Prices, type ScrapePriceInput } from '../../../core/prices.js';

/** A URL's hold: its options, and the pages of a PDF it may read (max_pages). */
const scrapePrice = (prices: Prices, i: ScrapePriceInput & { readonly max_pages?: number }): number => basePrice(prices, i) + documentPagesHold(prices, i);
import type { CheckIssue, Unchecked } from '../../../core/schema.js';
import type { Validated } from '../../../core/stages/index.js';
import { defineOperation, schema, StrictObject, Type } from '../../sdk/index.js';
import type { ExtractorPlugin } from '../../sdk/scrape.js';
import { WebhookView } from '../../sdk/webhook-view.js';
import { chargeOf, deliveryStages, shape, type ScrapeOptions } from './deliver.js';
import { ScrapeRequest, scrapeChecks, type ScrapeInput } from './request.js';

export const MAX_BULK_URLS = 100;
/** URLs of one bulk request in flight at once, whatever the plan allows. */
export const MAX_BULK_CONCURRENCY = 16;
export const MAX_BULK_RETRIES = 5;
/** Failures worth another attempt (through another proxy where there are proxies). */
const RETRYABLE = new Set(['TARGET_UNREACHABLE', 'TARGET_TIMEOUT', 'TARGET_BLOCKED', 'SERVICE_UNAVAILABLE']);

// extract_json is for the single scrape only (a model call per URL: not offered in bulk yet); so is track_changes.
const { url: _url, extract_json: _json, track_changes: _changes, ...singleOptions } = ScrapeRequest.properties;
export const BulkRequest = StrictObject({
  urls: Type.Array(Type.String({ minLength: 1, maxLength: 8192 }), { minItems: 1, maxItems: MAX_BULK_URLS, description: 'At most 100 URLs; each is checked and guarded like a single scrape.' }),
  ...singleOptions,
  concurrent_requests: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `URLs scraped at once. Default and bound: the plan's scrape concurrency, at most ${MAX_BULK_CONCURRENCY}.` })),
  retry_failed: Type.Optional(Type.Boolean({ description: 'Retry URLs that fail with a network error, a timeout or a block (through another proxy where there are proxies).' })),
  max_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_BULK_RETRIES, description: 'Attempts after the first, with retry_failed. Default 2.' })),
  callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Asynchronous mode: answer 202 with a job at once, and POST the results to this URL (signed, retried) when the job ends. It passes the same egress guard as a target.' })),
  async: Type.Optional(Type.Boolean({ description: 'Extension: true answers 202 with a job at once, to poll at its status_url, with no webhook (callback_url implies it; false with callback_url is refused).' })),
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

/** 202: the job was stored and queued. */
export const BulkAccepted = StrictObject({
  job_id: Type.String(),
  status: Type.Literal('queued'),
  status_url: Type.String({ description: 'GET it with the same API key for progress and, once done, the results.' }),
  total: Type.Integer(),
  created_at: Type.String(),
  request_id: Type.Optional(Type.String()),
});

export const BulkJobStatus = StrictObject({
  job_id: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  created_at: Type.String(),
  started_at: Type.Union([Type.String(), Type.Null()]),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  callback_url: Type.Union([Type.String(), Type.Null()]),
  progress: StrictObject({
    total: Type.Integer(),
    done: Type.Integer(),
    succeeded: Type.Integer(),
    failed: Type.Integer(),
    pending: Type.Integer(),
  }),
  credits_used: Type.Integer({ description: 'Successful URLs only, charged as each finished.' }),
  results: Type.Optional(Type.Array(ItemResult, { description: 'Once the job is done: one result per URL, in input order.' })),
  webhook: WebhookView,
  request_id: Type.Optional(Type.String()),
});

/** What POST answers: the whole synchronous answer, a job (202), or, when streamed, the rest of the body (text). */
type BulkAnswer = typeof BulkResponse.static | typeof BulkAccepted.static | string;

/** What a job stores besides its URLs: the request and what the submitting request decided. */
interface StoredRequest {
  readonly input: BulkInput;
  /** URLs in flight at once (the plan's bound at submission). */
  readonly concurrency: number;
  /** Base of links handed out (screenshot_url), from the submitting request. */
  readonly host: string | undefined;
}

type ItemOutcome =
  | { readonly ok: true; readonly attempts: number; readonly result: Record<string, unknown> }
  | { readonly ok: false; readonly attempts: number; readonly failure: ApiFailure };

/** What delivering one URL of a bulk request reads of the request (or the job) it belongs to. */
interface ItemBase {
  readonly receivedAt: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The account whose own collection a scrape is indexed into (SCOUR_INDEX_SCRAPES): the request's, or the job's. */
  readonly account?: { readonly id: string };
  readonly indexAccountId?: string;
}

/** One attempt at one URL: its own context (never the request's, whose finalizers are its own). */
interface ItemCtx extends ItemBase {
  readonly input: ScrapeInput;
  readonly proxiesTried: string[];
}

/** The single-scrape options of a bulk request (what every URL is scraped with). */
function optionsOf(i: BulkInput) {
  const { urls: _u, concurrent_requests: _c, retry_failed: _r, max_retries: _m, callback_url: _cb, async: _a, ...common } = i;
  return common;
}

/** An item's error: the spec's error body without request_id and timestamp. */
function itemError(failure: ApiFailure, requestId: string): Record<string, unknown> {
  const { request_id: _id, timestamp: _t, ...error } = errorBody(failure, requestId, new Date());
  return error;
}

/** One URL's entry in `results`, as the synchronous answer, streamed or not, shows it. */
function itemOf(url: string, o: ItemOutcome, requestId: string): typeof ItemResult.static {
  return o.ok
    ? { url, success: true, attempts: o.attempts, result: o.result }
    : { url, success: false, attempts: o.attempts, error: itemError(o.failure, requestId) };
}

/** What a successful URL was charged: its result's credits_used (results stored before it was recorded: the full price). */
function creditsOf(result: unknown, price: number): number {
  const c = (result as { credits_used?: unknown } | null)?.credits_used;
  return typeof c === 'number' && Number.isInteger(c) && c >= 0 ? c : price;
}

const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

/** A job as its status endpoint and its webhook show it. */
export function jobStatusView(job: JobView): typeof BulkJobStatus.static {
  let succeeded = 0;
  let failed = 0;
  for (const i of job.items) {
    if (i.status === 'completed') succeeded++;
    else if (i.status === 'failed') failed++;
  }
  const done = job.status === 'completed' || job.status === 'failed';
  return {
    job_id: job.id,
    status: job.status,
    created_at: iso(job.createdAt)!,
    started_at: iso(job.startedAt),
    completed_at: iso(job.finishedAt),
    callback_url: job.callbackUrl,
    progress: { total: job.total, done: succeeded + failed, succeeded, failed, pending: job.total - succeeded - failed },
    credits_used: job.items.reduce((sum, i) => sum + (i.status === 'completed' ? creditsOf(i.result, job.pricePerUrl) : 0), 0),
    ...(done
      ? {
        results: job.items.map((i) => i.status === 'completed'
          ? { url: i.url, success: true, attempts: i.attempts, result: i.result as Record<string, unknown> }
          : { url: i.url, success: false, attempts: i.attempts, error: (i.error ?? { code: 'INTERNAL_ERROR', error: 'The URL was not scraped' }) as Record<string, unknown> }),
      }
      : {}),
    webhook: {
      deliveries: job.deliveries.map((d) => ({
        delivery_id: d.id,
        event: d.event,
        status: d.status,
        attempts: d.attempts,
        next_attempt_at: iso(d.nextAttemptAt),
        history: d.history.map((a) => ({
          attempt: a.attempt, ok: a.ok, status_code: a.responseStatus, error: a.error,
          attempted_at: iso(a.attemptedAt)!, next_attempt_at: iso(a.nextAttemptAt),
        })),
      })),
    },
  };
}

/**
 * The per-URL problems found before any work, by index: not a URL (400
 * MISSING_PARAMETER), or refused by the egress guard, by its form or its
 * address (TARGET_NOT_ALLOWED, as a single scrape and a redirect answer).
 */
function checkUrls(urls: readonly string[], egress: EgressPolicy): (ApiFailure | undefined)[] {
  return urls.map((url, i) => {
    const u = checkTargetUrl(url, egress);
    if (u.ok) return undefined;
    return u.kind === 'syntax'
      ? BadRequest.of(`urls[${i}]`, u.reason)
      : new TargetNotAllowed({ message: `The target is not allowed: ${u.reason}`, field: `urls[${i}]`, reason: u.reason });
  });
}

/** True when the (not yet validated) body asks for the asynchronous mode: a callback_url, or async: true. */
export function wantsAsync(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const b = body as { callback_url?: unknown; async?: unknown };
  return b.callback_url !== undefined || b.async === true;
}

export function createBulkScrapeOperation(options: ScrapeOptions) {
  return defineOperation({
    name: 'operation-scrape-bulk',
    description: 'POST /v1/scrape/bulk (synchronous, or a job with a signed webhook) and GET /v1/scrape/bulk/{job_id}.',
    dependsOn: ['operation-scrape'],
    routes(host) {
      const pages = host.pages;
      const prices = host.prices;
      const extractors = new Map((host.registry.byKind('extractor') as unknown as ExtractorPlugin[]).map((x) => [x.id, x]));
      const checks = scrapeChecks(pages, extractors, options.egress);
      const { storeScreenshot, indexStage } = deliveryStages(pages, options);
      const base = (headers: Readonly<Record<string, string | undefined>>) =>
        options.publicUrl ?? (headers.host && /^[A-Za-z0-9.\-:[\]]+$/.test(headers.host) ? `http://${headers.host}` : '');

      /**
       * The validate stage's semantic check: the single scrape's checks of
       * everything but the URL (once for all URLs), the callback (the same
       * egress rules as a target: this server will POST to it), max_retries;
       * and each URL, which fails only its own item unless no URL is good
       * (then the request), and is listed anyway when the request fails.
       */
      const requestCheck = (i: Unchecked<BulkInput>): CheckIssue[] => {
        const issues: CheckIssue[] = [];
        const urls = i.urls ?? [];
        const urlIssues = urls.map((u, n) => (u === undefined ? undefined : targetIssue(`urls[${n}]`, u, options.egress)));
        const anyGood = urls.some((u, n) => u !== undefined && urlIssues[n] === undefined);
        for (const u of urlIssues) if (u !== undefined) issues.push(anyGood ? { ...u, incidental: true } : u);
        const { urls: _u, concurrent_requests: _c, retry_failed: _r, max_retries: _m, callback_url: _cb, async: _a, ...common } = i;
        issues.push(...checks.optionIssues(common));
        if (i.async === false && i.callback_url !== undefined) issues.push({ field: 'async', message: 'false contradicts callback_url (a callback is asynchronous)' });
        if (i.max_retries !== undefined && i.retry_failed !== true) issues.push({ field: 'max_retries', message: 'only applies with retry_failed: true' });
        const callback = targetIssue('callback_url', i.callback_url, options.egress);
        if (callback !== undefined) issues.push(callback);
        return issues;
      };

      /** After validation: a proxy of the kind asked for (once for all URLs), and each URL's problem, which fails only its item. */
      const precheck = {
        name: 'precheck',
        run: (ctx: RequestContext & Validated<BulkInput>): Effect.Effect<{ urlProblems: (ApiFailure | undefined)[] }, ApiFailure> => {
          const shared = checks.optionsProblem(optionsOf(ctx.input));
          if (shared !== undefined) return Effect.fail(shared);
          return Effect.succeed({ urlProblems: checkUrls(ctx.input.urls, options.egress) });
        },
      };

      const price = (i: BulkInput): number => {
        const valid = checkUrls(i.urls, options.egress).filter((p) => p === undefined).length;
        return scrapePrice(prices, i) * valid;
      };

      const concurrencyFor = (plan: PlanId, asked: number | undefined): number => {
        const planConcurrency = host.limits(plan, 'scrape').concurrency;
        const bound = Math.min(MAX_BULK_CONCURRENCY, planConcurrency > 0 ? planConcurrency : MAX_BULK_CONCURRENCY);
        return Math.min(asked ?? bound, bound);
      };

      /**
       * One URL, once: read through the page pipeline (its guard passes: the
       * URL was checked before), then delivered as a single scrape is: the
       * screenshot stored, the page indexed, charged for what it delivered.
       */
      const once = Pipeline.from<ItemCtx>()
        .then({
          name: 'read',
          run: (c: ItemCtx) => {
            // The scrape cache (max_age) of the account the URL is scraped for: the request's, or the job's.
            const accountId = c.account?.id ?? c.indexAccountId;
            const cacheScope = accountId === undefined ? undefined : { accountId, maxAge: c.input.max_age };
            return pages.read<PageCtx & { input: ScrapeInput }>({ input: c.input, proxiesTried: c.proxiesTried, cacheScope });
          },
        })
        .then(storeScreenshot)
        .then(indexStage)
        // What this URL is charged: its price less what it could not deliver, as for a single scrape.
        .handle((c): Effect.Effect<Record<string, unknown>> => Effect.succeed({ ...shape(c), credits_used: chargeOf(prices, c) }));

      /** One URL with its retries; a refused URL fails without an attempt, a defect fails only that URL. */
      const scrapeItem = (ctx: ItemBase, i: BulkInput, n: number, problem: ApiFailure | undefined): Effect.Effect<ItemOutcome> => {
        if (problem !== undefined) return Effect.succeed({ ok: false, attempts: 0, failure: problem });
        const retries = i.retry_failed ? (i.max_retries ?? 2) : 0;
        const input: ScrapeInput = { ...optionsOf(i), url: i.urls[n]! };
        // Every attempt at this URL records its proxies here, so a retry goes through one not tried yet.
        const proxiesTried: string[] = [];
        const attempt = (k: number): Effect.Effect<ItemOutcome> =>
          Effect.matchEffect(once({ receivedAt: ctx.receivedAt, headers: ctx.headers, account: ctx.account, indexAccountId: ctx.indexAccountId, input, proxiesTried }), {
            onSuccess: (result) => Effect.succeed({ ok: true as const, attempts: k + 1, result }),
            onFailure: (e: ApiFailure) =>
              k < retries && RETRYABLE.has(e.code) ? attempt(k + 1) : Effect.succeed({ ok: false as const, attempts: k + 1, failure: e }),
          });
        return Effect.catchDefect(attempt(0), (d) =>
          Effect.succeed({ ok: false as const, attempts: 1, failure: isApiFailure(d) ? d : new InternalError({ message: 'Internal error while scraping this URL' }) }));
      };

      /**
       * Synchronous mode: every URL now. Where the answer can be streamed
       * (ctx.reply.stream(): JSON, a transport that streams), this stage
       * sends the status and headers as it starts, since every check that
       * can refuse the request has passed, then `{"results":[` and each
       * item as soon as it and every item before it are done (input order
       * is the contract; an item done early waits as its JSON text), and
       * keeps only the counts: no outcome outlives its write. The handler
       * then returns the rest of the body. Otherwise (msgpack, a transport
       * without streaming) the outcomes are kept for one answer, as before.
       * Items are serialised with JSON.stringify: the same text as the
       * route's compiled serializer gives them (they are plain data under a
       * schema of known keys and free records).
       */
      const work = {
        name: 'fetch',
        run: (ctx: RequestContext & Validated<BulkInput> & { urlProblems: (ApiFailure | undefined)[]; account: { id: string; plan: PlanId }; hold: { actual?: number } }):
          Effect.Effect<{ outcomes: readonly ItemOutcome[] | undefined; succeeded: number }> => {
          const i = ctx.input;
          const concurrency = concurrencyFor(ctx.account.plan, i.concurrent_requests);
          const price = scrapePrice(prices, i);
          const out = ctx.reply.stream();
          const total = i.urls.length;
          // Not streamed: every outcome kept for one answer. Streamed: each item's text waits only for its turn.
          const outcomes: ItemOutcome[] | undefined = out === undefined ? new Array(total) : undefined;
          const waiting: (string | undefined)[] = out === undefined ? [] : new Array(total);
          let next = 0;
          let succeeded = 0;
          let actual = 0;
          out?.write('{"results":[');
          return Effect.map(
            Effect.forEach(i.urls, (url, n) => Effect.map(scrapeItem(ctx, i, n, ctx.urlProblems[n]), (o) => {
              if (o.ok) {
                succeeded++;
                actual += creditsOf(o.result, price);
              }
              if (out === undefined) {
                outcomes![n] = o;
                return;
              }
              waiting[n] = JSON.stringify(itemOf(url, o, ctx.requestId));
              while (next < total && waiting[next] !== undefined) {
                out.write(next === 0 ? waiting[next]! : `,${waiting[next]}`);
                waiting[next] = undefined;
                next++;
              }
            }), { concurrency, discard: true }),
            () => {
              // Only successful URLs are charged, each for what it delivered.
              ctx.hold.actual = actual;
              return { outcomes, succeeded };
            },
          );
        },
      };

      // Asynchronous mode: store the job, queue it, answer 202. The hold only proved the
      // account could pay; its finalizer releases it, and each URL is charged as it finishes.
      const submit = {
        name: 'submit',
        run: (ctx: RequestContext & Validated<BulkInput> & { account: { id: string; plan: PlanId } }) => {
          const i = ctx.input;
          const id = `bulk_${randomBytes(16).toString('hex')}`;
          const request: StoredRequest = { input: i, concurrency: concurrencyFor(ctx.account.plan, i.concurrent_requests), host: ctx.headers.host };
          return Effect.flatMap(
            host.jobs.store.createJob({
              id, accountId: ctx.account.id, request, urls: i.urls, callbackUrl: i.callback_url ?? null,
              pricePerUrl: scrapePrice(prices, i), now: ctx.receivedAt,
            }),
            // The job is stored: a queue that is away only delays it (runners also poll the store).
            (job) => Effect.as(Effect.catch(host.jobs.queue.enqueue(id), () => Effect.void), { job }),
          );
        },
      };

      const front = Pipeline.from<RequestContext>()
        .then(host.stages.auth)
        .then(host.stages.quota('scrape_bulk'))
        .then(host.stages.validate(schema(BulkRequest), requestCheck))
        .then(precheck)
        .then(host.stages.reserve('scrape_bulk', price));

      const runSync = front
        .then(work)
        .then(host.stages.bill)
        .handle((ctx) => {
          const total = ctx.input.urls.length;
          const summary = {
            total,
            succeeded: ctx.succeeded,
            failed: total - ctx.succeeded,
            credits_used: ctx.charge.creditsUsed,
            remaining_credits: ctx.charge.remainingCredits,
            processing_time: Math.round((Date.now() - ctx.receivedAt)) / 1000,
          };
          // Streamed: the results are out; the rest of the body, in the schema's key order (the app adds request_id).
          if (ctx.outcomes === undefined) return Effect.succeed<BulkAnswer>(`],${JSON.stringify(summary).slice(1)}`);
          const results = ctx.outcomes.map((o, n) => itemOf(ctx.input.urls[n]!, o, ctx.requestId));
          return Effect.succeed<BulkAnswer>({ results, ...summary });
        });

      const runAsync = front
        .then(submit)
        .handle((ctx) => Effect.succeed({
          job_id: ctx.job.id,
          status: 'queued' as const,
          status_url: `${base(ctx.headers)}/v1/scrape/bulk/${ctx.job.id}`,
          total: ctx.job.total,
          created_at: new Date(ctx.job.createdAt).toISOString(),
        } as BulkAnswer));

      const handle = Object.assign(
        (ctx: RequestContext) => (wantsAsync(ctx.body) ? runAsync(ctx) : runSync(ctx)),
        { stageNames: runSync.stageNames },
      );

      // The runner's side: run a claimed job's pending items, each billed as it finishes.
      host.jobs.provide({
        view: jobStatusView,
        run: (x: JobExecution) => {
          const stored = x.job.request as StoredRequest;
          const i = stored.input;
          const problem = checks.optionsProblem(optionsOf(i));
          const pending = x.job.items.filter((it) => it.status === 'pending');
          const ctx: ItemBase = { receivedAt: x.startedAt, headers: { host: stored.host }, indexAccountId: x.job.accountId };
          if (problem !== undefined) {
            // Accepted once, refused now (the server lost a proxy or its browser): every URL left fails with the reason.
            const error = itemError(problem, x.job.id);
            return Effect.andThen(
              Effect.forEach(pending, (it) => x.finish({ idx: it.idx, success: false, attempts: 0, result: null, error }), { discard: true }),
              Effect.fail(new JobFailure(problem.code, problem.message)),
            );
          }
          const problems = checkUrls(i.urls, options.egress);
          return Effect.forEach(
            pending,
            (it) => Effect.flatMap(
              scrapeItem(ctx, i, it.idx, problems[it.idx]),
              (o) => x.finish(o.ok
                ? { idx: it.idx, success: true, attempts: o.attempts, result: o.result, error: null, credits: creditsOf(o.result, x.job.pricePerUrl) }
                : { idx: it.idx, success: false, attempts: o.attempts, result: null, error: itemError(o.failure, `${x.job.id}:${it.idx}`) }),
            ),
            { concurrency: stored.concurrency, discard: true },
          );
        },
      });

      const status = Pipeline.from<RequestContext>()
        .then(host.stages.auth)
        .then(host.stages.quota('usage'))
        // Only ids of the form submit makes are looked up (a NUL byte or a 10 kB id never reaches the database).
        .handle((ctx) => Effect.flatMap(/^bulk_[0-9a-f]{32}$/.test(ctx.params.job_id ?? '') ? host.jobs.store.getJob(ctx.params.job_id!, ctx.account.id) : Effect.succeed(undefined), (job) =>
          job === undefined
            ? Effect.fail(new NotFound({ message: 'No bulk job with this id belongs to this account' }))
            : Effect.succeed(jobStatusView(job))));

      return [
        {
          method: 'POST' as const,
          path: '/v1/scrape/bulk',
          summary: 'Scrape up to 100 URLs: 200 with one result per URL in input order, or, with callback_url, 202 with a job whose results are POSTed to the callback (signed). Only successful URLs are charged.',
          tags: ['scrape'],
          auth: 'bearer' as const,
          headers: ['host'],
          request: schema(BulkRequest),
          response: schema(BulkResponse),
          alternate: { status: 202 as const, response: schema(BulkAccepted), when: (r: { job_id?: unknown }) => r.job_id !== undefined },
          failures: [400, 402, 403, 429, 503],
          streams: true,
          handle,
        },
        {
          method: 'GET' as const,
          path: '/v1/scrape/bulk/{job_id}',
          summary: "A bulk job of this account: status, progress, webhook attempts and, once done, the results (404 for another account's job).",
          tags: ['scrape'],
          auth: 'bearer' as const,
          response: schema(BulkJobStatus),
          failures: [404, 429, 503],
          handle: status,
        },
      ];
    },
  });
}
