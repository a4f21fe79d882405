/**
 * Asynchronous research (callback_url): the request is checked and the
 * account's ability to pay proved exactly as in the synchronous mode, then
 * stored as a durable job of kind 'research' with one item (the question)
 * priced at the depth's credits, and answered 202. A runner (this process
 * or `scour worker`) runs the same stages (plan, gather, read, analyse,
 * report, export), writing the stage it is in and its counts to the job as
 * it goes, and finishes the item with the report: the charge is made in the
 * same transaction, so a runner killed mid-way and resumed elsewhere never
 * charges twice. A research that reads no source ends `failed` with
 * NO_SOURCES and costs nothing; any other failure is stored on the item too,
 * so the view shows it, and a job resumed after its item was finished (the
 * runner died before closing the job) ends as the item did. GET
 * /v1/research/{job_id} shows the job to its own account; the callback gets
 * a signed research.completed (or research.failed) webhook with the same
 * view.
 *
 * Progress writes go one at a time, the latest value replacing any not yet
 * written (so they land in order on any store), with counts that never go
 * back within a run; the final counts are written, and awaited, before the
 * item is finished.
 */
import { randomBytes } from 'node:crypto';
import { Effect } from 'effect';
import type { PlanId } from '../../../core/accounts.js';
import type { RequestContext } from '../../../core/context.js';
import { InternalError, NotFound, ServiceUnavailable } from '../../../core/errors.js';
import { JobFailure, type ItemOutcome, type JobExecution, type JobItem, type JobView } from '../../../core/jobs.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { PluginHost } from '../../../core/plugin.js';
import type { ResearchInput } from '../../../core/research.js';
import type { Validated } from '../../../core/stages/index.js';
import { researchPrice } from '../../../core/prices.js';
import type { Progress, researchStages } from './stages.js';

/** What a research job stores. */
interface StoredResearch {
  readonly input: ResearchInput;
  readonly plan: PlanId;
  readonly host: string | undefined;
}

const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

/** The status endpoint's body and the webhook's data. */
export function researchJobView(job: JobView): Record<string, unknown> {
  const stored = job.request as StoredResearch;
  const item = job.items[0];
  const progress = job.progress as Partial<Progress> | null;
  // The item is finished (and charged) a moment before the job is marked finished; until then the job
  // is shown running, without its result or error, so a view never says running with a report in it.
  const finished = job.status === 'completed' || job.status === 'failed';
  const done = finished && item !== undefined && item.status === 'completed';
  return {
    job_id: job.id,
    status: job.status,
    // A job claimed but not yet planning is about to plan: 'plan' keeps the stages to the documented ones.
    stage: job.status === 'queued' ? 'queued' : job.status === 'running' ? (progress?.stage ?? 'plan') : job.status,
    progress: {
      sources_found: progress?.found ?? 0,
      sources_read: progress?.read ?? 0,
      sources_accepted: progress?.sources ?? 0,
    },
    research_query: stored.input.research_query,
    analysis_depth: stored.input.analysis_depth ?? 'standard',
    created_at: iso(job.createdAt),
    started_at: iso(job.startedAt),
    completed_at: iso(job.finishedAt),
    callback_url: job.callbackUrl,
    credits_used: done ? job.pricePerUrl : 0,
    result: done ? item.result : null,
    error: finished && item?.status === 'failed' ? item.error : null,
    webhook: {
      deliveries: job.deliveries.map((d) => ({
        delivery_id: d.id, event: d.event, status: d.status, attempts: d.attempts, next_attempt_at: iso(d.nextAttemptAt),
        history: d.history.map((a) => ({ attempt: a.attempt, ok: a.ok, status_code: a.responseStatus, error: a.error, attempted_at: iso(a.attemptedAt), next_attempt_at: iso(a.nextAttemptAt) })),
      })),
    },
  };
}

/** Only ids of research jobs (as submit makes them) are looked up. */
const JOB_ID = /^research_[0-9a-f]{32}$/;

/** How a job whose item is already finished ends: completed with it, or failed with its error. */
function endedAs(item: JobItem | undefined): Effect.Effect<void, JobFailure> {
  if (item === undefined || item.status === 'completed') return Effect.void;
  const e = (item.error ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : 'FAILED';
  return Effect.fail(new JobFailure(code, typeof e.message === 'string' ? e.message : `the research ended with ${code}`));
}

/**
 * The run's progress, written one value at a time (the latest value replaces
 * one still waiting), so writes land in order on any store; stage changes
 * always, counts within a stage at most every 250 ms. Counts never go back
 * within a run (the export stage reports none). `flush` writes the final
 * counts and waits until they are written.
 */
function progressWriter(x: JobExecution) {
  const counts = { found: 0, read: 0, sources: 0 };
  let stage = '';
  let lastAt = 0;
  let waiting: Progress | undefined;
  let scheduled = false;
  let chain: Promise<void> = Promise.resolve();
  const schedule = (): Promise<void> => {
    if (scheduled) return chain;
    scheduled = true;
    chain = chain.then(async () => {
      scheduled = false;
      const p = waiting;
      waiting = undefined;
      // false means only "not saved": a run that lost its job is interrupted at its next lease renewal.
      if (p !== undefined) await Effect.runPromise(Effect.ignore(x.progress(p))).catch(() => undefined);
    });
    return chain;
  };
  const merge = (p: { found: number; read: number; sources: number }) => {
    counts.found = Math.max(counts.found, p.found);
    counts.read = Math.max(counts.read, p.read);
    counts.sources = Math.max(counts.sources, p.sources);
  };
  return {
    report: (p: Progress) => {
      merge(p);
      const now = Date.now();
      if (p.stage === stage && now - lastAt < 250) return;
      stage = p.stage;
      lastAt = now;
      waiting = { stage, ...counts };
      void schedule();
    },
    flush: (final?: { found: number; read: number; sources: number }) => Effect.promise(() => {
      if (final !== undefined) merge(final);
      if (stage !== '') waiting = { stage, ...counts };
      return schedule();
    }),
  };
}

/** Submit (the route's side) and the runner. */
export function researchJobs(host: PluginHost, s: ReturnType<typeof researchStages>) {
  const submit = {
    name: 'submit',
    run: (ctx: RequestContext & Validated<ResearchInput> & { account: { id: string; plan: PlanId } }) => {
      const i = ctx.input;
      const id = `research_${randomBytes(16).toString('hex')}`;
      const stored: StoredResearch = { input: i, plan: ctx.account.plan, host: ctx.headers.host };
      return Effect.flatMap(
        host.jobs.store.createJob({
          id, kind: 'research', accountId: ctx.account.id, request: stored, urls: [i.research_query.slice(0, 2000)],
          callbackUrl: i.callback_url ?? null, pricePerUrl: researchPrice(host.prices, i), now: ctx.receivedAt,
        }),
        (job) => Effect.as(Effect.catch(host.jobs.queue.enqueue(id), () => Effect.void), { job }),
      );
    },
  };

  const accepted = (ctx: { job: { id: string; createdAt: number }; headers: Readonly<Record<string, string | undefined>>; input: ResearchInput }) => ({
    job_id: ctx.job.id,
    status: 'queued' as const,
    status_url: `${s.base(ctx.headers)}/v1/research/${ctx.job.id}`,
    research_query: ctx.input.research_query,
    analysis_depth: ctx.input.analysis_depth ?? 'standard',
    created_at: new Date(ctx.job.createdAt).toISOString(),
  });

  const status = Pipeline.from<RequestContext>()
    .then(host.stages.auth)
    .then(host.stages.quota('usage'))
    .handle((ctx) => {
      const notFound = new NotFound({ message: 'No research job with this id belongs to this account' });
      const id = ctx.params.job_id ?? '';
      // Only ids this operation makes reach the store (PostgreSQL refuses a NUL in text with an error, not a miss).
      if (!JOB_ID.test(id)) return Effect.fail(notFound);
      return Effect.flatMap(host.jobs.store.getJob(id, ctx.account.id, { kind: 'research' }), (job) =>
        job === undefined ? Effect.fail(notFound) : Effect.succeed(researchJobView(job)));
    });

  host.jobs.provide({
    kind: 'research',
    operation: 'research',
    events: { completed: 'research.completed', failed: 'research.failed' },
    view: researchJobView,
    run: (x: JobExecution) => {
      const stored = x.job.request as StoredResearch;
      const item = x.job.items[0];
      if (item === undefined) return Effect.void;
      // Finished by an earlier run that died before closing the job: end as the item did.
      if (item.status !== 'pending') return endedAs(item);
      const writer = progressWriter(x);
      const ctx = {
        input: stored.input,
        // Dates and windows are relative to when the research was asked for, so a resumed job plans the same research.
        receivedAt: x.job.createdAt,
        account: { id: x.job.accountId, plan: stored.plan },
        headers: { host: stored.host },
        progress: writer.report,
      };
      const run = Pipeline.from<typeof ctx>()
        .append(s.work)
        .handle((c) => Effect.succeed({
          body: s.finish(c),
          sources: c.corpus.sources.length,
          counts: { found: c.gathered.found, read: c.gathered.fetched, sources: c.gathered.sources.length },
        }));
      /** Store the outcome on the item (charged when it is a success), then end as the stored item says. */
      const finish = (outcome: Omit<ItemOutcome, 'idx' | 'attempts'>, failure?: JobFailure) =>
        Effect.flatMap(x.finish({ idx: 0, attempts: 1, ...outcome }), (r) => {
          // Another run finished it first: the stored item decides (it was charged, or not, by that run).
          if (r.alreadyDone) return Effect.flatMap(host.jobs.store.getJob(x.job.id, x.job.accountId, { kind: 'research' }), (now) => endedAs(now?.items[0]));
          if (failure !== undefined) return Effect.fail(failure);
          return outcome.success && r.charged === 0
            ? Effect.fail(new JobFailure('NO_CREDITS', 'the account could no longer pay for this research when it finished; nothing was charged'))
            : Effect.void;
        });
      // A defect (a bug, such as a quote that is not verbatim) would fail the same way on every resume: it ends the job.
      // The client sees the generic message (as a synchronous 500 says); the runner's log gets the defect.
      let defect = '';
      const guarded = Effect.catchDefect(run(ctx), (d) => {
        defect = String(d instanceof Error ? d.message : d).slice(0, 500);
        return Effect.fail(new InternalError({ message: 'the research failed unexpectedly; nothing was charged' }));
      });
      return Effect.matchEffect(guarded, {
        onFailure: (e) => (e instanceof ServiceUnavailable
          // The store or the index went away: left to be resumed.
          ? Effect.fail(e)
          // Anything else is this research's end: stored on the item, so the view and the webhook show it.
          : Effect.andThen(writer.flush(), finish(
            { success: false, result: null, error: { code: e.code, message: e.message } },
            new JobFailure(e.code, defect === '' ? e.message : `${e.message}: ${defect}`),
          ))),
        onSuccess: ({ body, sources, counts }) => Effect.andThen(writer.flush(counts), sources === 0
          ? finish(
            { success: false, result: null, error: { code: 'NO_SOURCES', message: 'no source could be read for this question with these filters; nothing was charged', report: body } },
            new JobFailure('NO_SOURCES', 'no source could be read for this question with these filters'),
          )
          : finish({ success: true, result: { ...body, credits_used: x.job.pricePerUrl }, error: null })),
      });
    },
  });

  return { submit, accepted, status };
}
