/**
 * POST /tavily/extract in terms of POST /v1/scrape/bulk: each URL read
 * through the page pipeline (egress guard, fetch, judgement, extraction)
 * as a bulk scrape reads it, and charged as one (successful URLs only).
 * What maps: `format` markdown (default) is the main content as Markdown,
 * text the main content as text; `extract_depth` advanced renders the
 * page in Chromium (render_js, +5 credits); `include_images` the page's
 * images (+1 credit); `timeout` the native per-page timeout. A URL that
 * fails (refused by the guard, blocked, unreachable, not a page) is in
 * `failed_results` with the native failure's message.
 */
import type { RequestContext } from '../../../core/context.js';
import { Type } from '../../sdk/index.js';
import { invalidRequest } from './errors.js';
import { BodyReader, type Warning } from './fields.js';
import type { Translated } from './forward.js';

/** Tavily's bound on URLs per extract. */
export const MAX_URLS = 20;

export interface NativeBulk {
  readonly urls: readonly string[];
  readonly markdown?: true;
  readonly main_content?: true;
  readonly render_js?: true;
  readonly extract_images?: true;
  readonly timeout?: number;
}

export interface ExtractPlan {
  readonly format: 'markdown' | 'text';
  readonly images: boolean;
  readonly usage: boolean;
  readonly warnings: readonly Warning[];
  readonly started: number;
}

export function translateExtract(raw: unknown, _ctx: RequestContext): Translated<NativeBulk, ExtractPlan> {
  const r = new BodyReader(raw);
  const started = performance.now();
  const apiKey = r.string('api_key', { max: 256 });
  const urls = r.strings('urls', MAX_URLS, 8192, true);
  if (urls === undefined && !r.issues.some((i) => i.field.startsWith('urls'))) r.issues.push({ field: 'urls', message: 'is required' });
  if (urls !== undefined && urls.length === 0) r.issues.push({ field: 'urls', message: 'must name at least one URL' });
  const depth = r.choice('extract_depth', ['basic', 'advanced'] as const);
  const format = r.choice('format', ['markdown', 'text'] as const) ?? 'markdown';
  const images = r.boolean('include_images') ?? false;
  const timeout = r.number('timeout', 1, 60);
  const usage = r.boolean('include_usage') ?? false;
  r.boolean('include_favicon');
  r.ignored('include_favicon', 'results carry no favicon');
  r.ignored('query', 'raw_content is the whole main content, not chunks reranked by a query');
  r.ignored('chunks_per_source', 'raw_content is the whole main content');
  r.accept('client_source', 'session_id', 'human_id', 'client_name');
  r.unknownFields();
  if (r.issues.length > 0 || urls === undefined) return { problem: invalidRequest(r.issues), apiKey };
  return {
    body: {
      urls,
      ...(format === 'text' ? { main_content: true as const } : { markdown: true as const }),
      ...(depth === 'advanced' ? { render_js: true as const } : {}),
      ...(images ? { extract_images: true as const } : {}),
      ...(timeout !== undefined ? { timeout: Math.ceil(timeout) } : {}),
    },
    plan: { format: format as 'markdown' | 'text', images, usage, warnings: r.warnings, started },
    apiKey,
  };
}

/** The native answer's fields this reads (POST /v1/scrape/bulk's synchronous response). */
export interface NativeBulkAnswer {
  readonly results: readonly {
    readonly url: string;
    readonly success: boolean;
    readonly result?: { readonly markdown?: string; readonly main_content?: string; readonly text_content?: string; readonly images?: readonly { readonly src?: string }[] };
    readonly error?: { readonly error?: unknown; readonly code?: unknown };
  }[];
  readonly credits_used: number;
}

export function tavilyExtractAnswer(native: NativeBulkAnswer, plan: ExtractPlan): Record<string, unknown> {
  const results: Record<string, unknown>[] = [];
  const failed: { url: string; error: string }[] = [];
  for (const item of native.results) {
    if (!item.success || item.result === undefined) {
      const e = item.error;
      failed.push({ url: item.url, error: typeof e?.error === 'string' ? e.error : 'The URL could not be read' });
      continue;
    }
    const x = item.result;
    const text = plan.format === 'text' ? x.main_content : x.markdown;
    results.push({
      url: item.url,
      raw_content: text ?? x.text_content ?? '',
      images: plan.images ? (x.images ?? []).map((i) => i.src).filter((s): s is string => typeof s === 'string' && /^https?:/.test(s)) : [],
    });
  }
  const out: Record<string, unknown> = {
    results,
    failed_results: failed,
    response_time: Math.round((performance.now() - plan.started) / 10) / 100,
  };
  if (plan.usage) out.usage = { credits: native.credits_used };
  if (plan.warnings.length > 0) out.warnings = plan.warnings;
  return out;
}

export const TavilyExtractRequest = Type.Object({
  urls: Type.Unsafe<string | string[]>({ description: 'A URL, or a list of 1 to 20.' }),
  api_key: Type.Optional(Type.String({ description: 'A Scour API key, when no Authorization header is sent.' })),
  extract_depth: Type.Optional(Type.String({ description: 'basic (default) or advanced: rendered in Chromium (+5 credits per URL).' })),
  format: Type.Optional(Type.String({ description: 'markdown (default) or text: the main content.' })),
  include_images: Type.Optional(Type.Boolean({ description: 'The page\'s image URLs (+1 credit per URL).' })),
  timeout: Type.Optional(Type.Number({ minimum: 1, maximum: 60, description: 'Seconds per URL.' })),
  include_usage: Type.Optional(Type.Boolean({ description: 'Add usage.credits: the Scour credits charged.' })),
}, { additionalProperties: true, description: 'Tavily\'s extract body; options Scour does not apply are ignored with a warning (docs/tavily.md).' });

export const TavilyExtractResponse = Type.Object({
  results: Type.Array(Type.Object({ url: Type.String(), raw_content: Type.String(), images: Type.Array(Type.String()) })),
  failed_results: Type.Array(Type.Object({ url: Type.String(), error: Type.String() })),
  response_time: Type.Number({ description: 'Seconds.' }),
  usage: Type.Optional(Type.Object({ credits: Type.Integer() })),
  warnings: Type.Optional(Type.Array(Type.Object({ code: Type.String(), message: Type.String() }))),
  request_id: Type.Optional(Type.String()),
});
