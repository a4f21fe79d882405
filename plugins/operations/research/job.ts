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
 * NO_SOURCES and costs nothing. GET /v1/research/{job_id} shows the job to
 * its own account; the callback gets a signed research.completed (or
 * research.failed) webhook with the same view.
 */
import { randomBytes } from 'node:crypto';
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { NotFound, ServiceUnavailable } from '../../../core/errors.js';
import { JobFailure, type JobExecution, type JobView } from '../../../core/jobs.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { PluginHost } from '../../../core/plugin.js';
import type { ResearchInput } from '../../../core/research.js';
import type { Validated } from '../../../core/stages.js';
import { researchPrice } from '../../../config/prices.js';
import type { Progress, researchStages } from './index.js';

export const RESEARCH_JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;

/** What a research job stores. */
interface StoredResearch {
  readonly input: ResearchInput;
  readonly plan: string;
  readonly host: string | undefined;
}

const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

/** The status endpoint's body and the webhook's data. */
export function researchJobView(job: JobView): Record<string, unknown> {
  const stored = job.request as StoredResearch;
  const item = job.items[0];
  const progress = job.progress as Partial<Progress> | null;
  const done = item !== undefined && item.status === 'completed';
  return {
    job_id: job.id,
    status: job.status,
    stage: job.status === 'queued' ? 'queued' : job.status === 'running' ? (progress?.stage ?? 'starting') : job.status,
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
    error: item?.status === 'failed' ? item.error : null,
    webhook: {
      deliveries: job.deliveries.map((d) => ({
        delivery_id: d.id, event: d.event, status: d.status, attempts: d.attempts, next_attempt_at: iso(d.nextAttemptAt),
        history: d.history.map((a) => ({ attempt: a.attempt, ok: a.ok, status_code: a.responseStatus, error: a.error, attempted_at: iso(a.attemptedAt), next_attempt_at: iso(a.nextAttemptAt) })),
      })),
    },
  };
}

/** Submit (the route's side) and the runner. */
export function researchJobs(host: PluginHost, s: ReturnType<typeof researchStages>) {
  const submit = {
    name: 'submit',
    run: (ctx: RequestContext & Validated<ResearchInput> & { account: { id: string; plan: string } }) => {
      const i = ctx.input;
      const id = `research_${randomBytes(16).toString('hex')}`;
      const stored: StoredResearch = { input: i, plan: ctx.account.plan, host: ctx.headers.host };
      return Effect.flatMap(
        host.jobs.store.createJob({
          id, kind: 'research', accountId: ctx.account.id, request: stored, urls: [i.research_query.slice(0, 2000)],
          callbackUrl: i.callback_url ?? null, pricePerUrl: researchPrice(i), now: ctx.receivedAt,
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
    .handle((ctx) => Effect.flatMap(host.jobs.store.getJob(ctx.params.job_id ?? '', ctx.account.id, { kind: 'research' }), (job) =>
      job === undefined ? Effect.fail(new NotFound({ message: 'No research job with this id belongs to this account' })) : Effect.succeed(researchJobView(job))));

  host.jobs.provide({
    kind: 'research',
    operation: 'research',
    events: { completed: 'research.completed', failed: 'research.failed' },
    view: researchJobView,
    run: (x: JobExecution) => {
      const stored = x.job.request as StoredResearch;
      const item = x.job.items[0];
      if (item === undefined || item.status !== 'pending') return Effect.void;
      let last = 0;
      const report = (p: Progress) => {
        // At most every 250 ms, and every stage change; a lost write only delays what the status shows.
        const now = Date.now();
        if (now - last < 250 && p.stage === 'gather') return;
        last = now;
        // false means only "not saved": a run that lost its job is interrupted at its next lease renewal.
        Effect.runFork(Effect.ignore(x.progress(p)));
      };
      const ctx = {
        input: stored.input,
        // Dates and windows are relative to when the research was asked for, so a resumed job plans the same research.
        receivedAt: x.job.createdAt,
        account: { id: x.job.accountId, plan: stored.plan },
        headers: { host: stored.host },
        progress: report,
      };
      const run = Pipeline.from<typeof ctx>()
        .then(s.planStage)
        .then(s.gatherStage)
        .then(s.readStage)
        .then(s.analyseStage)
        .then(s.reportStage)
        .then(s.rewriteStage)
        .then(s.exportStage)
        .handle((c) => Effect.succeed({ body: s.finish(c), sources: c.corpus.sources.length }));
      return Effect.flatMap(
        Effect.catch(run(ctx), (e) => Effect.fail(e instanceof ServiceUnavailable ? e : new JobFailure(e.code, e.message))),
        ({ body, sources }) => {
          if (sources === 0) {
            return Effect.andThen(
              x.finish({ idx: 0, success: false, attempts: 1, result: null, error: { code: 'NO_SOURCES', message: 'no source could be read for this question with these filters; nothing was charged', report: body } }),
              Effect.fail(new JobFailure('NO_SOURCES', 'no source could be read for this question with these filters')),
            );
          }
          return Effect.flatMap(x.finish({ idx: 0, success: true, attempts: 1, result: { ...body, credits_used: x.job.pricePerUrl }, error: null }), (r) =>
            !r.alreadyDone && r.charged === 0
              ? Effect.fail(new JobFailure('NO_CREDITS', 'the account could no longer pay for this research when it finished'))
              : Effect.void);
        },
      );
    },
  });

  return { submit, accepted, status };
}
