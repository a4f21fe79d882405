/**
 * What a scrape does with a page once it is read (single and bulk alike):
 * a screenshot stored in the blob store and served back at an unguessable,
 * expiring URL; the page indexed into the account's own collection when
 * SCOUR_INDEX_SCRAPES is on; the response body (spec 2.5); and what it is
 * charged for what it delivered.
 */
import { randomBytes } from 'node:crypto';
import { Effect } from 'effect';
import type { EgressPolicy } from '../../../core/egress.js';
import type { ApiFailure } from '../../../core/errors.js';
import type { FetchResult, PageReader, ProxyChoice, Shot } from '../../../core/page.js';
import type { BlobStore } from '../../../core/ports.js';
import { type DeliverableOption, documentPagesCharge, documentPagesHold, type Prices, scrapeCharge } from '../../../core/prices.js';
import { BINARY_KINDS, type DocumentInfo, type FeedInfo } from '../../../core/documents.js';
import type { SearchIndex } from '../../../core/search.js';
import type { PageSource } from '../../../core/extraction.js';
import type { CallerSchemas, JsonExtractionWarning, JsonExtractor } from '../../../core/json-extraction.js';
import type { CacheAnswer } from '../../../core/page-cache.js';
import type { ChangesAnswer, PageHistory, TextDiff } from '../../../core/page-changes.js';
import type { ScrapeInput } from './request.js';

export interface ScrapeOptions {
  readonly blobs: BlobStore;
  /** Which addresses a target (and a bulk job's callback) may have (core/egress.ts): the validate stage's check. */
  readonly egress: EgressPolicy;
  /** How long a screenshot URL works. */
  readonly screenshotTtlMs: number;
  /** Absolute base for screenshot URLs (SCOUR_PUBLIC_URL); unset: from the request's Host header. */
  readonly publicUrl: string | undefined;
  /** SCOUR_INDEX_SCRAPES: index each successful scrape into its account's own collection. */
  readonly index?: SearchIndex | undefined;
  /** extract_json's schema validator (judges a caller's schema at validation). */
  readonly callerSchemas?: CallerSchemas | undefined;
  /** extract_json's model (LLM_BASE_URL); absent: extract_json is 503 MODEL_UNAVAILABLE. */
  readonly jsonExtractor?: JsonExtractor | undefined;
  /** track_changes: the latest tracked version of each page per account (the account store); absent: track_changes is refused. */
  readonly pageHistory?: PageHistory | undefined;
  /** track_changes: the unified diff of two versions (jsdiff). */
  readonly diff?: TextDiff | undefined;
}

/** What the stages of one scrape have added by the time it is answered. */
export interface ScrapeOutcome {
  readonly input: ScrapeInput;
  readonly result: FetchResult;
  readonly proxyUsed: ProxyChoice | undefined;
  readonly builtins: Record<string, unknown>;
  readonly extracted: Record<string, unknown>;
  readonly extractorErrors: Record<string, string>;
  readonly screenshot: { url: string; expiresAt: string } | undefined;
  /** Why a screenshot taken could not be kept (the blob store failed). */
  readonly screenshotError?: string | undefined;
  /** With actions: each action's screenshot URL, by its position in result.actions (undefined: no screenshot, or not stored). */
  readonly actionScreenshots?: readonly (string | undefined)[] | undefined;
  /** Why a screenshot action's image could not be kept. */
  readonly actionScreenshotError?: string | undefined;
  /** extract_json's answer (null: the page had no content to ask about), and its warnings. */
  readonly extractedJson?: Readonly<Record<string, unknown>> | null | undefined;
  readonly extractedJsonWarnings?: readonly JsonExtractionWarning[] | undefined;
  /** The page was a document: what it says of itself; a feed: its items. */
  readonly document?: DocumentInfo | undefined;
  readonly feed?: FeedInfo | undefined;
  /** With max_age: what the cache did. */
  readonly cache?: CacheAnswer | undefined;
  /** With track_changes: this page against the account's previous tracked scrape of it. */
  readonly changes?: ChangesAnswer | undefined;
}

/** What a scrape that succeeded is charged: its price less what it could not deliver (scrapeCharge). */
export function chargeOf(
  prices: Prices,
  ctx: {
    readonly input: ScrapeInput; readonly undelivered: readonly DeliverableOption[]; readonly screenshot: unknown; readonly extractedJson?: unknown;
    readonly document?: DocumentInfo | undefined; readonly cache?: CacheAnswer | undefined;
    readonly result?: FetchResult; readonly actionScreenshots?: readonly (string | undefined)[] | undefined;
  },
): number {
  // Actions not run (a redirect answered as it is is not rendered) are not charged; their screenshots as stored.
  const input = ctx.input.actions !== undefined && ctx.result !== undefined && ctx.result.actions === undefined ? { ...ctx.input, actions: undefined } : ctx.input;
  const shots = (ctx.actionScreenshots ?? []).filter((u) => u !== undefined).length;
  const missing: DeliverableOption[] = [...ctx.undelivered];
  // Answered from the cache: nothing was fetched or rendered, so the fetch's extras (render_js, and the screenshot
  // taken with the stored render) are not charged; the base price and what was extracted for this request are.
  if (ctx.cache?.hit === true) {
    missing.push('screenshot');
    return scrapeCharge(prices, { ...input, render_js: false }, missing, shots) + pagesCharge(prices, ctx);
  }
  if (input.extract_json !== undefined && (ctx.extractedJson === undefined || ctx.extractedJson === null)) missing.push('extract_json');
  if (input.screenshot === true && ctx.screenshot === undefined) missing.push('screenshot');
  return scrapeCharge(prices, input, missing, shots) + pagesCharge(prices, ctx);
}

/** A PDF's pages beyond the free ones, as far as the hold covers them (max_pages). */
function pagesCharge(prices: Prices, ctx: { readonly input: ScrapeInput; readonly document?: DocumentInfo | undefined }): number {
  return ctx.document?.type === 'pdf' ? Math.min(documentPagesCharge(prices, ctx.document.pages_read ?? 0), documentPagesHold(prices, ctx.input)) : 0;
}

/** The response body of one scrape (spec 2.5), before its credit fields. */
export function shape(ctx: ScrapeOutcome): Record<string, unknown> {
  const r = ctx.result;
  const b = ctx.builtins;
  const out: Record<string, unknown> = {
    url: ctx.input.url,
    final_url: r.finalUrl,
    status_code: r.statusCode,
    content_type: r.contentType,
    // A binary document (PDF, DOCX) has no text of its own to show: its text is in text_content.
    content: ctx.document !== undefined && BINARY_KINDS.has(ctx.document.type) ? '' : r.body,
    // Always set by the extract stage (for a page that is not HTML: its text, or '').
    text_content: (b.text_content as string | undefined) ?? '',
    load_time: Math.round(r.loadTimeSeconds * 1000) / 1000,
  };
  for (const k of ['links', 'images', 'schema_data', 'meta_data', 'main_content']) if (k in b) out[k] = b[k];
  // Extracted for track_changes too: answered only when asked for.
  if ('markdown' in b && ctx.input.markdown === true) out.markdown = b.markdown;
  if ('contacts' in b) out.contacts = b.contacts;
  if ('social' in b) out.social_profiles = b.social;
  if (ctx.document !== undefined) out.document = ctx.document;
  if (ctx.feed !== undefined) out.feed = ctx.feed;
  if (ctx.input.extractors !== undefined) out.extracted = ctx.extracted;
  if ('fields' in b) out.extracted = b.fields;
  if (Object.keys(ctx.extractorErrors).length > 0) out.extractor_errors = ctx.extractorErrors;
  if (ctx.extractedJson !== undefined) out.extracted_json = ctx.extractedJson;
  if (ctx.extractedJsonWarnings !== undefined && ctx.extractedJsonWarnings.length > 0) out.extracted_json_warnings = ctx.extractedJsonWarnings;
  if (ctx.screenshot !== undefined) {
    out.screenshot_url = ctx.screenshot.url;
    out.screenshot_expires_at = ctx.screenshot.expiresAt;
  }
  if (ctx.input.actions !== undefined) {
    const urls = ctx.actionScreenshots ?? [];
    out.actions = {
      results: (r.actions ?? []).map((a, n) => ({
        index: a.index, type: a.type, ok: a.ok,
        ...(a.error !== undefined ? { error: a.error } : {}),
        ...(urls[n] !== undefined ? { value: urls[n] } : a.value !== undefined ? { value: a.value } : {}),
      })),
      screenshots: urls.filter((u) => u !== undefined),
    };
  }
  const warnings = [ctx.screenshotError, ctx.actionScreenshotError].filter((w) => w !== undefined).map((message) => ({ code: 'SCREENSHOT_NOT_STORED', message }));
  if (warnings.length > 0) out.warnings = warnings;
  if (ctx.proxyUsed !== undefined) out.proxy = { type: ctx.proxyUsed.type, country: ctx.proxyUsed.country ?? null };
  if (ctx.cache !== undefined) out.cache = ctx.cache;
  if (ctx.changes !== undefined) out.changes = ctx.changes;
  return out;
}

/** The stages after a page is read: the screenshot stored, the page indexed. */
export function deliveryStages(pages: PageReader, options: ScrapeOptions) {
  const storeScreenshot = {
    name: 'store',
    run: (ctx: { readonly receivedAt: number; readonly headers: Readonly<Record<string, string | undefined>>; readonly result: FetchResult }):
      Effect.Effect<{
        screenshot: { url: string; expiresAt: string } | undefined; screenshotError?: string;
        actionScreenshots?: (string | undefined)[]; actionScreenshotError?: string;
      }, ApiFailure> => {
      const shot = ctx.result.screenshot;
      const actions = ctx.result.actions;
      if (shot === undefined && actions === undefined) return Effect.succeed({ screenshot: undefined });
      const expiresAt = ctx.receivedAt + options.screenshotTtlMs;
      const base = options.publicUrl ?? (ctx.headers.host && /^[A-Za-z0-9.\-:[\]]+$/.test(ctx.headers.host) ? `http://${ctx.headers.host}` : '');
      // A blob store that cannot take it (a full disk, say) costs the caller the screenshot, not the page:
      // the page is delivered without it, with a warning, and the screenshot is not charged (chargeOf).
      const store = (image: Shot): Effect.Effect<{ url: string } | { error: string }> => {
        const token = randomBytes(24).toString('base64url');
        const ext = image.contentType === 'image/png' ? 'png' : 'jpg';
        return Effect.match(
          Effect.tryPromise(() => options.blobs.put(token, image.data, { contentType: image.contentType, expiresAt })),
          {
            onSuccess: () => ({ url: `${base}/v1/screenshots/${token}.${ext}` }),
            onFailure: (e) => {
              const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
              return { error: typeof cause?.code === 'string' ? cause.code : String(cause?.message ?? e) };
            },
          },
        );
      };
      type Main = { screenshot: { url: string; expiresAt: string } | undefined; screenshotError?: string };
      const main: Effect.Effect<Main> = shot === undefined
        ? Effect.succeed({ screenshot: undefined })
        : Effect.map(store(shot), (s): Main => ('url' in s
          ? { screenshot: { url: s.url, expiresAt: new Date(expiresAt).toISOString() } }
          : { screenshot: undefined, screenshotError: `the screenshot could not be stored (${s.error}); it was not charged` }));
      if (actions === undefined) return main;
      // The screenshot actions' images, one after the other, each URL at its action's position.
      const stored = Effect.forEach(actions, (a) => (a.screenshot === undefined ? Effect.succeed(undefined) : store(a.screenshot)));
      return Effect.flatMap(main, (m) => Effect.map(stored, (all) => {
        const failed = all.find((s): s is { error: string } => s !== undefined && 'error' in s);
        return {
          ...m,
          actionScreenshots: all.map((s) => (s !== undefined && 'url' in s ? s.url : undefined)),
          ...(failed !== undefined ? { actionScreenshotError: `a screenshot action's image could not be stored (${failed.error}); it was not charged` } : {}),
        };
      }));
    },
  };

  /**
   * SCOUR_INDEX_SCRAPES: a successful scrape goes into its account's own
   * collection (never the shared one), unless it was made with cookies,
   * custom headers or a proxy (what such a page shows may be private to the
   * caller, or not what the URL shows everyone). Best effort: the scrape is
   * answered whether or not the write succeeds.
   */
  const indexStage = {
    name: 'index',
    run: (ctx: {
      readonly input: ScrapeInput; readonly result: FetchResult; readonly source: PageSource; readonly builtins: Record<string, unknown>;
      readonly account?: { readonly id: string }; readonly indexAccountId?: string; readonly extractAlone?: boolean;
    }): Effect.Effect<{ indexed: boolean }> => {
      const index = options.index;
      const accountId = ctx.account?.id ?? ctx.indexAccountId;
      const i = ctx.input;
      const r = ctx.result;
      if (index === undefined || accountId === undefined) return Effect.succeed({ indexed: false });
      if (i.cookies !== undefined || i.custom_headers !== undefined || i.proxy_type !== undefined || i.proxy_country !== undefined) return Effect.succeed({ indexed: false });
      if (r.statusCode < 200 || r.statusCode > 299 || !/^(text\/html|application\/xhtml\+xml)/i.test(r.contentType)) return Effect.succeed({ indexed: false });
      // What the request's own extractors already produced is reused, not computed again.
      const missing = (['meta_data', 'main_content'] as const).filter((id) => ctx.builtins[id] === undefined);
      const more = missing.length === 0
        ? Effect.succeed({} as Record<string, unknown> | undefined)
        : Effect.map(pages.extractMore(ctx, missing), (ran) =>
          // An extractor that fails leaves the page out of the index, as when it ran here.
          (Object.keys(ran.errors).length === 0 ? ran.values : undefined));
      return Effect.catch(Effect.flatMap(more, (extra) => Effect.promise(async () => {
        if (extra === undefined) return { indexed: false };
        try {
          const meta = (ctx.builtins.meta_data ?? extra.meta_data) as { title?: string | null; language?: string | null } | undefined;
          const main = (ctx.builtins.main_content as string | undefined) ?? (extra.main_content as string | undefined) ?? '';
          const whole = (ctx.builtins.text_content as string | undefined) ?? '';
          const text = main.length >= 200 ? main : whole;
          const lang = meta?.language?.slice(0, 2).toLowerCase();
          if (text.trim() === '' && !meta?.title) return { indexed: false };
          await index.upsert(accountId, [{
            url: r.finalUrl, title: (meta?.title ?? '').slice(0, 2000), text: text.slice(0, 1_000_000), publishedAt: null,
            language: lang !== undefined && /^[a-z]{2}$/.test(lang) ? lang : null, country: null, type: 'page', author: null, siteName: null, doi: null, safe: null,
          }], Date.now());
          return { indexed: true };
        } catch {
          return { indexed: false };
        }
      })), () => Effect.succeed({ indexed: false }));
    },
  };

  return { storeScreenshot, indexStage };
}
