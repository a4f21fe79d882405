/**
 * The research stages (plan, gather, read, analyse, report, rewrite,
 * export), built once per server and run as one chain (`work`) by the
 * synchronous route (index.ts) and by the job runner (job.ts).
 */
import type { PauseBook } from '../../../core/search-merge.js';
import { randomBytes } from 'node:crypto';
import { Effect } from 'effect';
import type { PlanId } from '../../../core/accounts.js';
import type { EgressPolicy } from '../../../core/egress.js';
import { checkTargetUrl } from '../../../core/egress.js';
import { type ApiFailure, SearchUnavailable } from '../../../core/errors.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { PluginHost } from '../../../core/plugin.js';
import type { BlobStore } from '../../../core/ports.js';
import type {
  AnalyserOutput, AnalyserPlugin, AnalysisSoFar, Corpus, ExporterPlugin, IndexTokenizer, KeyInsight, ReportRewriter, ResearchInput, RewriteResult, ResearchPlan, ResearchReport,
} from '../../../core/research.js';
import type { SearchIndex, SearchProviderPlugin } from '../../../core/search.js';
import { gather, type GatherResult, type ScrapedPage } from './gather.js';
import { planResearch, type DepthSettings } from './plan.js';
import { readSources } from './read.js';
import { assembleReport, type StageTiming } from './report.js';

export const RESEARCH_OPERATION = 'research';

export interface ResearchOptions {
  /** Provider ids in priority order (SCOUR_SEARCH_PROVIDERS). */
  readonly providers: readonly string[];
  readonly providerTimeoutMs: number;
  /** Providers paused after rate-limiting us: the same book as the search operation's. */
  readonly pauses?: PauseBook;
  readonly index: SearchIndex | undefined;
  /** The local index's tokenizer (its terms), for ranking passages. */
  readonly tokenizer: IndexTokenizer;
  readonly egress: EgressPolicy;
  readonly blobs: BlobStore;
  /** How long an export_url works. */
  readonly exportTtlMs: number;
  readonly publicUrl: string | undefined;
  /** HTML to PDF; default: the browser fetcher's Chromium (pdf exports are refused when there is neither). */
  readonly htmlToPdf?: (html: string, signal: AbortSignal) => Promise<Uint8Array>;
  readonly version: string;
  /** An optional model that rewrites the prose from the evidence (LLM_BASE_URL); checked parts only. */
  readonly rewriter?: ReportRewriter;
}

type Input = ResearchInput;

export interface Progress {
  stage: string;
  found: number;
  read: number;
  sources: number;
}

/** What the research stages need of a request (a live HTTP request, or a job being run). */
export interface ResearchCtx {
  readonly input: Input;
  readonly receivedAt: number;
  readonly account: { readonly id: string; readonly plan: PlanId };
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly progress?: (p: Progress) => void;
}

interface Timed { readonly timings: StageTiming[]; readonly startedAt: number }

/** The research stages, shared by the route and the job runner. */
export function researchStages(host: PluginHost, options: ResearchOptions) {
  const allProviders = host.registry.byKind('search-provider') as unknown as SearchProviderPlugin[];
  const byId = new Map(allProviders.map((p) => [p.id, p]));
  const providers = options.providers.map((id) => byId.get(id)).filter((p): p is SearchProviderPlugin => p !== undefined);
  const analysers = (host.registry.byKind('analyser') as unknown as AnalyserPlugin[]).slice().sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
  const exporters = new Map((host.registry.byKind('exporter') as unknown as ExporterPlugin[]).map((x) => [x.format, x]));
  // PDF exports print in the browser fetcher's own Chromium (or an injected printer).
  const browser = (host.registry.byKind('fetcher') as unknown as { mode?: string; printPdf?: (html: string, signal: AbortSignal) => Promise<Uint8Array> }[])
    .find((f) => f.mode === 'browser' && typeof f.printPdf === 'function');
  const htmlToPdf = options.htmlToPdf ?? (browser === undefined ? undefined : (html: string, signal: AbortSignal) => browser.printPdf!(html, signal));

  /** One source read through the page pipeline (host.pages); rejects with its ApiFailure. */
  const scrapePage = (url: string, timeoutMs: number, signal: AbortSignal): Promise<ScrapedPage> => {
    const input = { url, main_content: true, extract_meta: true, extract_schema: true, timeout: Math.max(1, Math.floor(timeoutMs / 1000)) };
    const work = Effect.map(host.pages.read({ input }), (page) => {
      const b = page.builtins;
      const meta = b.meta_data as Record<string, unknown> | undefined;
      const main = (b.main_content as string | undefined) ?? '';
      const whole = (b.text_content as string | undefined) ?? '';
      return {
        finalUrl: page.result.finalUrl,
        statusCode: page.result.statusCode,
        contentType: page.result.contentType,
        text: main.trim().length >= 200 || main.length >= whole.length * 0.5 ? main : whole,
        title: typeof meta?.title === 'string' ? meta.title : '',
        metaData: meta,
        schemaData: b.schema_data as unknown[] | undefined,
      } satisfies ScrapedPage;
    });
    return Effect.runPromise(work, { signal });
  };

  const timed = <A>(ctx: Timed, stage: string, f: () => Promise<A>): Promise<A> => {
    const t0 = performance.now();
    return f().finally(() => ctx.timings.push({ stage, ms: performance.now() - t0 }));
  };

  const planStage = {
    name: 'plan',
    run: (ctx: ResearchCtx): Effect.Effect<{ plan: ResearchPlan & { settings: DepthSettings }; timings: StageTiming[]; startedAt: number }> => Effect.sync(() => {
      const t0 = performance.now();
      const plan = planResearch(ctx.input, ctx.receivedAt, options.tokenizer);
      ctx.progress?.({ stage: 'plan', found: 0, read: 0, sources: 0 });
      return { plan, timings: [{ stage: 'plan', ms: performance.now() - t0 }], startedAt: t0 };
    }),
  };

  const gatherStage = {
    name: 'gather',
    run: (ctx: ResearchCtx & Timed & { plan: ResearchPlan }): Effect.Effect<{ gathered: GatherResult }, ApiFailure> =>
      Effect.flatMap(
        Effect.promise((signal) => timed(ctx, 'gather', () => {
          ctx.progress?.({ stage: 'gather', found: 0, read: 0, sources: 0 });
          const planConcurrency = host.limits(ctx.account.plan, 'scrape').concurrency;
          return gather({
            plan: ctx.plan, accountId: ctx.account.id, now: ctx.receivedAt, deadline: ctx.startedAt + ctx.plan.deadlineMs, signal,
            progress: (p) => ctx.progress?.({ stage: 'gather', found: p.found, read: p.read, sources: p.accepted }),
          }, {
            providers, providerTimeoutMs: options.providerTimeoutMs, ...(options.pauses === undefined ? {} : { pauses: options.pauses }), index: options.index, scrape: scrapePage,
            refused: (url) => { const c = checkTargetUrl(url, options.egress); return c.ok ? undefined : c.reason; },
            concurrency: Math.max(1, Math.min(8, planConcurrency > 0 ? planConcurrency : 8)),
            tokenizer: options.tokenizer,
          });
        })),
        (gathered) => {
          // Nothing to read because no provider answered: the same failure as a search, nothing charged.
          if (gathered.sources.length === 0 && gathered.providers.length > 0 && gathered.providers.every((p) => p.results === 0 && p.failures > 0)) {
            return Effect.fail(new SearchUnavailable({
              message: `No search provider answered (${gathered.providers.map((p) => p.id).join(', ')}); nothing was charged`,
              warnings: gathered.warnings.map((w) => ({ provider: 'research', ...w })), retryAfter: 5,
            }));
          }
          return Effect.succeed({ gathered });
        },
      ),
  };

  const readStage = {
    name: 'read',
    run: (ctx: ResearchCtx & Timed & { plan: ResearchPlan; gathered: GatherResult }): Effect.Effect<{ corpus: Corpus }> => Effect.sync(() => {
      ctx.progress?.({ stage: 'read', found: ctx.gathered.found, read: ctx.gathered.fetched, sources: ctx.gathered.sources.length });
      const t0 = performance.now();
      // The sub-queries actually run (feedback ones included) are the plan the report's methodology names.
      const plan = { ...ctx.plan, subQueries: ctx.gathered.subQueries };
      const corpus = readSources({ input: ctx.input, plan, sources: ctx.gathered.sources, tokenizer: options.tokenizer, now: ctx.receivedAt });
      ctx.timings.push({ stage: 'read', ms: performance.now() - t0 });
      return { corpus };
    }),
  };

  const analyseStage = {
    name: 'analyse',
    run: (ctx: ResearchCtx & Timed & { corpus: Corpus; gathered: GatherResult }) => Effect.promise(() => timed(ctx, 'analyse', async () => {
      ctx.progress?.({ stage: 'analyse', found: ctx.gathered.found, read: ctx.gathered.fetched, sources: ctx.gathered.sources.length });
      const so: Record<string, AnalyserOutput> = {};
      const ran: { id: string; method: string; fields: Readonly<Record<string, unknown>>; notes: readonly string[] }[] = [];
      const warnings: { code: string; message: string }[] = [];
      for (const a of analysers) {
        if (!a.applies(ctx.input)) continue;
        // Analysers are synchronous CPU work: let the event loop serve other requests between them
        // (an await alone only drains microtasks), so a research request stalls others for at most one analyser.
        await nextTurn();
        const t0 = performance.now();
        try {
          const out = await a.analyse(ctx.corpus, so as AnalysisSoFar);
          so[a.id] = out;
          ran.push({ id: a.id, method: a.method, fields: out.fields, notes: out.notes ?? [] });
          for (const w of out.warnings ?? []) warnings.push({ code: 'ANALYSER_WARNING', message: `${a.id}: ${w}` });
        } catch (e) {
          warnings.push({ code: 'ANALYSER_FAILED', message: `${a.id} failed: ${e instanceof Error ? e.message : String(e)}` });
        }
        ctx.timings.push({ stage: `analyse:${a.id}`, ms: performance.now() - t0 });
      }
      return { analyses: ran, analyseWarnings: warnings };
    })),
  };

  const reportStage = {
    name: 'report',
    run: (ctx: ResearchCtx & Timed & { corpus: Corpus; gathered: GatherResult; analyses: ReportAnalyses; analyseWarnings: Warn[] }): Effect.Effect<{ report: Record<string, unknown>; warnings: Warn[] }> =>
      Effect.sync(() => {
        ctx.progress?.({ stage: 'report', found: ctx.gathered.found, read: ctx.gathered.fetched, sources: ctx.gathered.sources.length });
        const t0 = performance.now();
        const warnings: Warn[] = [...ctx.gathered.warnings, ...ctx.analyseWarnings];
        if (ctx.corpus.sources.length === 0) warnings.push({ code: 'NO_SOURCES', message: 'no source could be read for this question with these filters; nothing was charged' });
        const { body } = assembleReport({
          corpus: ctx.corpus, analyses: ctx.analyses, gather: ctx.gathered, timings: ctx.timings, version: options.version,
        });
        ctx.timings.push({ stage: 'report', ms: performance.now() - t0 });
        return { report: body, warnings };
      }),
  };

  /**
   * The optional model: rewrites the summary, insight statements and
   * recommendations from the evidence only, within what is left of the
   * deadline (at least 5 s). The rewriter checks its own output (every [n]
   * a used source, every number in the cited evidence); what it leaves out
   * keeps the deterministic text, and the quoted evidence never changes.
   */
  const rewriteStage = {
    name: 'rewrite',
    run: (ctx: ResearchCtx & Timed & { corpus: Corpus; gathered: GatherResult; report: Record<string, unknown>; warnings: Warn[] }): Effect.Effect<{ rewritten: readonly string[] }> => {
      const rewriter = options.rewriter;
      if (rewriter === undefined || ctx.corpus.sources.length === 0) return Effect.succeed({ rewritten: [] });
      return Effect.promise((outer) => timed(ctx, 'rewrite', () => rewrite(rewriter, outer).catch((e: unknown) => {
        // Whatever goes wrong with the model, the deterministic report stands.
        ctx.warnings.push({ code: 'MODEL_WARNING', message: `model step failed: ${e instanceof Error ? e.message : String(e)}`.slice(0, 1000) });
        return { rewritten: [] as string[] };
      })));
      async function rewrite(rewriter: ReportRewriter, outer: AbortSignal): Promise<{ rewritten: readonly string[] }> {
        ctx.progress?.({ stage: 'rewrite', found: ctx.gathered.found, read: ctx.gathered.fetched, sources: ctx.corpus.sources.length });
        const left = Math.max(5_000, ctx.startedAt + ctx.corpus.plan.deadlineMs - performance.now());
        const signal = AbortSignal.any([outer, AbortSignal.timeout(Math.floor(left))]);
        const r = await rewriter.rewrite(ctx.report as unknown as ResearchReport, ctx.corpus, signal).catch((e: unknown): RewriteResult => ({ warnings: [`model failed: ${e instanceof Error ? e.message : String(e)}`] }));
        const rewritten: string[] = [];
        const report = ctx.report;
        if (typeof r.executiveSummary === 'string' && typeof report.executive_summary === 'string' && report.executive_summary !== '') {
          report.deterministic_summary = report.executive_summary;
          report.executive_summary = r.executiveSummary;
          rewritten.push('executive_summary');
        }
        const statements = r.insightStatements;
        if (statements !== undefined) {
          report.key_insights = (report.key_insights as KeyInsight[]).map((ins) => {
            const text = statements[ins.id];
            if (typeof text !== 'string') return ins;
            rewritten.push(ins.id);
            return { ...ins, statement: text, statement_generated_by: rewriter.id };
          });
        }
        const recs = r.recommendations;
        if (recs !== undefined && Array.isArray(report.recommendations)) {
          report.recommendations = (report.recommendations as { id: string; recommendation: string; generated_by: string }[]).map((x) => {
            const text = recs[x.id];
            if (typeof text !== 'string') return x;
            rewritten.push(x.id);
            return { ...x, recommendation: text, generated_by: `rules, worded by ${rewriter.id}` };
          });
        }
        for (const w of r.warnings) ctx.warnings.push({ code: 'MODEL_WARNING', message: w.slice(0, 1000) });
        if (report.methodology !== undefined && typeof report.methodology === 'object') {
          const m = report.methodology as Record<string, unknown>;
          m.model = { id: rewriter.id, rewritten, warnings: r.warnings.length };
          if (rewritten.length > 0) m.deterministic = false;
        }
        return { rewritten };
      }
    },
  };

  const base = (headers: Readonly<Record<string, string | undefined>>) =>
    options.publicUrl ?? (headers.host && /^[A-Za-z0-9.\-:[\]]+$/.test(headers.host) ? `http://${headers.host}` : '');

  const exportStage = {
    name: 'export',
    run: (ctx: ResearchCtx & Timed & { gathered: GatherResult; report: Record<string, unknown>; warnings: Warn[] }): Effect.Effect<{ exported: { url: string; expiresAt: string } | undefined }> => {
      const format = ctx.input.export_format;
      if (format === undefined) return Effect.succeed({ exported: undefined });
      const exporter = exporters.get(format);
      return Effect.promise((signal) => timed(ctx, 'export', async () => {
        ctx.progress?.({ stage: 'export', found: ctx.gathered.found, read: ctx.gathered.fetched, sources: ctx.gathered.sources.length });
        if (exporter === undefined) {
          ctx.warnings.push({ code: 'EXPORT_FAILED', message: `no exporter for ${format} is installed` });
          return { exported: undefined };
        }
        try {
          const data = await exporter.render({ ...ctx.report, generated_at: new Date(ctx.receivedAt).toISOString() } as unknown as ResearchReport, {
            ...(htmlToPdf !== undefined ? { htmlToPdf } : {}), signal,
          });
          const token = randomBytes(24).toString('base64url');
          const expiresAt = ctx.receivedAt + options.exportTtlMs;
          await options.blobs.put(`export_${token}`, data, { contentType: exporter.contentType, expiresAt });
          return { exported: { url: `${base(ctx.headers)}/v1/research/exports/${token}.${exporter.extension}`, expiresAt: new Date(expiresAt).toISOString() } };
        } catch (e) {
          ctx.warnings.push({ code: 'EXPORT_FAILED', message: `the ${format} export failed: ${e instanceof Error ? e.message : String(e)}` });
          return { exported: undefined };
        }
      }));
    },
  };

  /** The body of a finished research (without the credit fields). */
  const finish = (ctx: { report: Record<string, unknown>; warnings: Warn[]; exported: { url: string; expiresAt: string } | undefined; receivedAt: number }) => {
    const out: Record<string, unknown> = { ...ctx.report };
    if (ctx.exported !== undefined) {
      out.export_url = ctx.exported.url;
      out.export_expires_at = ctx.exported.expiresAt;
    }
    if (ctx.warnings.length > 0) out.warnings = ctx.warnings;
    out.generated_at = new Date(ctx.receivedAt).toISOString();
    out.processing_time = Math.round(Date.now() - ctx.receivedAt) / 1000;
    return out;
  };

  /** The research itself, from the plan to the export: one chain, run by the route and by the job runner. */
  const work = Pipeline.from<ResearchCtx>()
    .then(planStage)
    .then(gatherStage)
    .then(readStage)
    .then(analyseStage)
    .then(reportStage)
    .then(rewriteStage)
    .then(exportStage);

  return { work, finish, exporters, base, htmlToPdf };
}

type Warn = { code: string; message: string };
/** Resolves after the event loop has run its pending I/O callbacks (setImmediate runs after the poll phase). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

type ReportAnalyses = { id: string; method: string; fields: Readonly<Record<string, unknown>>; notes: readonly string[] }[];

