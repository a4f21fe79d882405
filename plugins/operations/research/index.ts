/**
 * POST /v1/research (spec 2.6, 2.7, 8.2; issue 13): multi-source research
 * that cites only what it read. Typed stages on the core pipeline:
 *
 *   auth -> quota -> validate -> reserve
 *     -> plan -> gather -> read -> analyse -> report -> rewrite -> export -> settle -> bill
 *
 * The stages from plan to export are one chain (stages.ts), which the job
 * runner (job.ts) runs too. plan (plan.ts) turns the request into
 * sub-queries and limits; gather (gather.ts) runs them through the search
 * providers and reads each source from the local index or through the page
 * pipeline (host.pages); read (read.ts) splits and ranks sentences and
 * passages; analyse runs every analyser plugin that applies
 * (plugins/analysers), in order; report (report.ts) assembles the response
 * and checks that every quote is verbatim in a source read in this
 * request; export renders the report with the exporter plugin of
 * export_format and stores it behind an unguessable, expiring URL. Charged
 * by analysis_depth (5 / 10 / 15) only on success; a request that reads no
 * source at all costs nothing. With callback_url the same stages run as a
 * durable job (./job.ts) and the request answers 202.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { checkTargetUrl } from '../../../core/egress.js';
import { NotFound } from '../../../core/errors.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { PluginHost } from '../../../core/plugin.js';
import { researchPrice } from '../../../core/prices.js';
import type { Corpus, ResearchInput, ResearchSource } from '../../../core/research.js';
import type { CheckIssue, Unchecked } from '../../../core/schema.js';
import type { SearchProviderPlugin } from '../../../core/search.js';
import type { Reserved } from '../../../core/stages/index.js';
import { defineOperation, errorSpec, schema } from '../../sdk/index.js';
import { warmCitations } from './citations.js';
import { researchJobs } from './job.js';
import { checkResearch, ResearchAccepted, ResearchJobStatus, ResearchRequest, ResearchResponse } from './request.js';
import { RESEARCH_OPERATION, researchStages, type ResearchOptions } from './stages.js';

export { RESEARCH_OPERATION, type Progress, type ResearchCtx, type ResearchOptions } from './stages.js';

type Input = ResearchInput;

export function createResearchOperation(options: ResearchOptions) {
  return defineOperation({
    name: 'operation-research',
    description: 'POST /v1/research: sub-queries through the search providers, sources read from the index or scraped, insights with verbatim evidence, citations, exports.',
    dependsOn: ['operation-scrape'],
    errors: ['SearchUnavailable', 'TargetNotAllowed'].map(errorSpec),
    // The default citation style's citeproc engine (half a second to build); the other styles are built on first use.
    warm: () => warmCitations(['apa']),
    routes(host: PluginHost) {
      const missing = options.providers.filter((id) => !(host.registry.byKind('search-provider') as unknown as SearchProviderPlugin[]).some((p) => p.id === id));
      if (missing.length > 0) throw new Error(`SCOUR_SEARCH_PROVIDERS names ${missing.join(', ')}, but no search-provider plugin has that id`);
      const s = researchStages(host, options);

      /** Every problem JSON Schema cannot see, merged with the schema's into one 400 (core/stages/validate.ts). */
      const check = (i: Unchecked<Input>): CheckIssue[] => {
        const issues: CheckIssue[] = checkResearch(i, Date.now());
        if (typeof i.export_format === 'string' && !s.exporters.has(i.export_format)) issues.push({ field: 'export_format', message: `no exporter for ${i.export_format} is installed on this server` });
        else if (i.export_format === 'pdf' && s.htmlToPdf === undefined) issues.push({ field: 'export_format', message: 'pdf needs the browser, which this server does not have (choose html, or install Chromium)' });
        if (i.async === false && i.callback_url !== undefined) issues.push({ field: 'async', message: 'false contradicts callback_url (a callback is asynchronous)' });
        if (typeof i.callback_url === 'string') {
          const cb = checkTargetUrl(i.callback_url, options.egress);
          if (!cb.ok) issues.push({ field: 'callback_url', message: cb.reason, ...(cb.kind === 'syntax' ? {} : { refused: true }) });
        }
        return issues;
      };

      // A research that read nothing is answered but not charged.
      const settle = {
        name: 'settle',
        run: (ctx: Reserved & { corpus: Corpus }) => Effect.sync(() => {
          if (ctx.corpus.sources.length === 0) ctx.hold.actual = 0;
          return { settled: true as const };
        }),
      };

      const front = Pipeline.from<RequestContext>()
        .then(host.stages.auth)
        .then(host.stages.quota(RESEARCH_OPERATION))
        .then(host.stages.validate(schema(ResearchRequest), check))
        .then(host.stages.reserve(RESEARCH_OPERATION, (i: Input) => researchPrice(host.prices, i)));

      // Asynchronous mode: the hold only proved the account can pay; the job charges when it finishes.
      const jobs = researchJobs(host, s);
      const runAsync = front.then(jobs.submit).handle((ctx) => Effect.succeed(jobs.accepted(ctx) as Record<string, unknown>));

      const runSync = front
        .append(s.work)
        .then(settle)
        .then(host.stages.bill)
        .handle((ctx) => {
          const out = s.finish(ctx);
          out.credits_used = ctx.charge.creditsUsed;
          out.remaining_credits = ctx.charge.remainingCredits;
          return Effect.succeed(out);
        });

      /** The asynchronous mode: a callback_url, or async: true (the same rule as bulk scrape's). */
      const wantsAsync = (body: unknown): boolean => {
        if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
        const b = body as { callback_url?: unknown; async?: unknown };
        return b.callback_url !== undefined || b.async === true;
      };
      const handle = Object.assign(
        (ctx: RequestContext) => (wantsAsync(ctx.body) ? runAsync(ctx) : runSync(ctx)),
        { stageNames: runSync.stageNames },
      );

      const exportRoute = {
        method: 'GET' as const,
        path: '/v1/research/exports/{file}',
        summary: 'A research export: the unguessable URL is the credential; it expires (SCOUR_EXPORT_TTL).',
        tags: ['research'],
        auth: 'none' as const,
        produces: { contentType: 'application/octet-stream' },
        failures: [404],
        handle: (ctx: RequestContext) => {
          const m = /^([A-Za-z0-9_-]{32})\.([a-z]{2,8})$/.exec(ctx.params.file ?? '');
          const notFound = new NotFound({ message: 'No such export, or it has expired' });
          if (m === null) return Effect.fail(notFound);
          return Effect.flatMap(Effect.promise(() => options.blobs.get(`export_${m[1]!}`, Date.now())), (blob) => {
            if (blob === undefined) return Effect.fail(notFound);
            ctx.reply.set('content-type', blob.contentType);
            ctx.reply.set('cache-control', 'private, max-age=3600');
            ctx.reply.set('content-disposition', `attachment; filename="research.${m[2]!}"`);
            return Effect.succeed(blob.data);
          });
        },
      };

      return [
        {
          method: 'POST' as const,
          path: '/v1/research',
          summary: 'Research a question across sources: insights with verbatim evidence and confidence, entities, sentiment, trends, summary, recommendations, citations, exports. 5 / 10 / 15 credits by depth.',
          tags: ['research'],
          auth: 'bearer' as const,
          headers: ['host'],
          request: schema(ResearchRequest),
          response: schema(ResearchResponse),
          failures: [400, 402, 403, 429, 502, 503],
          alternate: { status: 202 as const, response: schema(ResearchAccepted), when: (r: { job_id?: unknown }) => r.job_id !== undefined },
          handle,
        },
        {
          method: 'GET' as const,
          path: '/v1/research/{job_id}',
          summary: "An asynchronous research of this account: the stage it is in, its counts, and the report when done (404 for another account's job).",
          tags: ['research'],
          auth: 'bearer' as const,
          failures: [404, 429, 503],
          response: schema(ResearchJobStatus),
          handle: jobs.status,
        },
        exportRoute,
      ];
    },
  });
}

export type { ResearchSource };
