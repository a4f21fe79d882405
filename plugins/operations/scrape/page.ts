/**
 * The page pipeline: how any operation reads one page.
 *
 *   guard -> fetch -> judge -> extract
 *
 * guard: the egress guard on the URL (the fetchers check every connected
 * address again, redirects included) and a proxy of the kind asked for;
 * fetch: the plain HTTP fetcher or, with render_js, the browser fetcher,
 * through a proxy when asked (a failed proxy is rotated on retry); judge: a
 * 403 or an anti-bot challenge page is TARGET_BLOCKED; extract: the
 * extractors the request asks for (built-in ones by their extract_* fields,
 * run through the host's extraction port: a worker pool that parses the
 * page once for all of them; custom ones by name, on a parse of their own
 * in this thread, since closures cannot move to a worker).
 *
 * Built once per server by the composition root (config/scrape.ts) and
 * handed to operations as `host.pages` (the contract: core/page.ts). The
 * single scrape runs its stages; bulk scrape, search enrichment, research
 * and crawl call `read`.
 *
 * Where new things go, each in one place:
 * - a new way to fetch (a remote browser) is a fetcher plugin
 *   (`defineFetcher`, plugins/sdk/scrape.ts); `fetch` below is where the
 *   request's fields choose the fetcher (today: render_js picks the
 *   browser) and become its FetchRequest (browser actions: its `actions`,
 *   which the browser fetcher runs; actions_required fails the fetch when
 *   one failed);
 * - a document parser (PDF, DOCX, feeds) goes in `extract` below, where a
 *   page that is not HTML gets its text by its media type (`text`, then
 *   the free fields), so every field and every caller gets it;
 * - a new output of a page is an extractor plugin (`defineExtractor`),
 *   which `extract` runs when the request names it (or, built in, when its
 *   extract_* field is on).
 * Nothing else chains these stages: operations run them through
 * `host.pages` (its stages, or `read`).
 */
import { Effect } from 'effect';
import type { EgressPolicy } from '../../../core/egress.js';
import { checkTargetUrl } from '../../../core/egress.js';
import type { ExtractionFailure, ExtractionPort, PageSource } from '../../../core/extraction.js';
import { BINARY_KINDS, DEFAULT_MAX_PAGES, documentKind, type DocumentFailure, type DocumentKind, type DocumentRead, type DocumentReader } from '../../../core/documents.js';
import { ActionFailed, type ApiFailure, DocumentUnreadable, isApiFailure, ProxyNotAvailable, TargetBlocked, TargetNotAllowed, TargetUnreachable } from '../../../core/errors.js';
import {
  HTML_MEDIA_TYPES, mediaType, TEXTUAL_MEDIA_TYPE, type Extraction, type ExtraFields, type FetchRequest, type FetchResult, type Guarded, type Judged,
  type PageCtx, type PageFetched, type PageRead, type PageReader, type PageRequest, type ProxyChoice, type ScreenshotSpec,
} from '../../../core/page.js';
import { Pipeline } from '../../../core/pipeline.js';
import type { PluginLookup } from '../../../core/plugin.js';
import { cacheKeyMaterial, uncacheableField, type PageCache } from '../../../core/page-cache.js';
import type { DeliverableOption } from '../../../core/prices.js';
import { parsePage } from '../../sdk/parse.js';
import type { ExtractorPlugin, FetcherPlugin, Page, ProxyProviderPlugin } from '../../sdk/scrape.js';
import { renderText } from '../../sdk/text.js';
import { browserActions } from './actions.js';

/** What the page pipeline is built from. */
export interface PagePipelineDeps {
  /** The registered fetchers, proxy providers and extractors. */
  readonly registry: PluginLookup;
  /** Where the built-in extractors run; absent: in this thread. */
  readonly extraction?: ExtractionPort | undefined;
  /** Which addresses a target may have (core/egress.ts). */
  readonly egress: EgressPolicy;
  /** Attempts through different proxies after a proxy failure. */
  readonly proxyRetries: number;
  /** Reads documents (PDF, DOCX, feeds); absent: they are answered as binary pages. */
  readonly documents?: DocumentReader | undefined;
  /** The time limit of reading one document (default DOCUMENT_TIMEOUT_MS; never past the request's timeout). */
  readonly documentTimeoutMs?: number | undefined;
  /** The scrape cache (max_age); absent: reads with a cacheScope always fetch (and say `hit: false`). */
  readonly cache?: PageCache | undefined;
}

/** How long one document may take to read, by default. */
export const DOCUMENT_TIMEOUT_MS = 20_000;

const waitForSpec = (s: string): { kind: 'css' | 'xpath'; selector: string } => {
  if (s.startsWith('xpath=')) return { kind: 'xpath', selector: s.slice(6) };
  if (s.startsWith('/') || s.startsWith('(')) return { kind: 'xpath', selector: s };
  return { kind: 'css', selector: s };
};

const screenshotSpec = (i: PageRequest): ScreenshotSpec | undefined => {
  if (!i.screenshot) return undefined;
  const o = i.screenshot_options ?? {};
  const format = o.format ?? 'png';
  return {
    fullPage: o.full_page ?? false, width: o.width ?? 1280, height: o.height ?? 800, format,
    quality: format === 'jpeg' ? (o.quality ?? 80) : undefined, selector: o.selector,
  };
};

/** An anti-bot challenge page answered with 200 (Cloudflare, DataDome, PerimeterX, Akamai, ...). */
export function looksLikeChallenge(result: FetchResult): boolean {
  const h = result.headers;
  if (h['cf-mitigated'] === 'challenge') return true;
  if (result.statusCode !== 200 && result.statusCode !== 403 && result.statusCode !== 429 && result.statusCode !== 503) return false;
  const head = result.body.slice(0, 20_000);
  return /<title>\s*(Just a moment\.\.\.|Attention Required! \| Cloudflare|Access denied|Please verify you are a human)\s*<\/title>/i.test(head)
    || /\b(cf-chl-|challenge-platform|_cf_chl_opt|captcha-delivery\.com|px-captcha|_pxCaptcha)/.test(head);
}

/** Run a fetch as an Effect: the AbortSignal fires when the fiber is interrupted (client gone). */
function runFetch(fetcher: FetcherPlugin, req: Omit<FetchRequest, 'signal'>): Effect.Effect<FetchResult, ApiFailure> {
  return Effect.callback<FetchResult, ApiFailure>((resume) => {
    const controller = new AbortController();
    fetcher.fetch({ ...req, signal: controller.signal }).then(
      (r) => resume(Effect.succeed(r)),
      (e) => resume(isApiFailure(e) ? Effect.fail(e) : Effect.die(e)),
    );
    return Effect.sync(() => controller.abort());
  });
}

/** A fenced Markdown code block holding `text` verbatim (the fence longer than any run of backticks in it). */
function fenced(text: string, lang: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}`;
}

/**
 * The free text fields of a page that is not HTML, from its text ('' for a
 * binary page): the whole text is its main content, and as Markdown it is
 * itself (text/markdown) or a code block that shows it as written.
 */
const FREE_TEXT: Readonly<Record<string, (text: string, media: string) => string>> = {
  text_content: (text) => text,
  main_content: (text) => text,
  markdown: (text, media) => (text === '' || media === 'text/markdown' ? text
    : fenced(text, /json$/.test(media) ? 'json' : /xml$/.test(media) ? 'xml' : media === 'text/csv' ? 'csv' : '')),
};

/** The request field (and price) of each priced built-in extractor, by id. */
const PRICED: Readonly<Record<string, DeliverableOption>> = {
  links: 'extract_links', images: 'extract_images', schema_data: 'extract_schema', meta_data: 'extract_meta',
  contacts: 'extract_contacts', social: 'extract_social', fields: 'extract_fields',
};

/** What a priced built-in field holds when the page cannot give it (not HTML) or its extractor failed; it is then not charged. */
const EMPTY: Readonly<Record<string, () => unknown>> = {
  links: () => [],
  images: () => [],
  schema_data: () => [],
  meta_data: () => ({ title: null, description: null, canonical: null, language: null, charset: null, favicon: null, open_graph: {}, twitter: {}, meta: {} }),
  contacts: () => [],
  social: () => [],
  fields: () => null,
};

/** One extractor's outcome: its value, or the message it threw. */
type Ran = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

const NOT_JUDGED: Judged = { judged: false };
const JUDGED: Judged = { judged: true };

/** Build the page pipeline over the registered fetchers, proxy providers and extractors. */
export function createPagePipeline(deps: PagePipelineDeps): PageReader {
  const fetchers = deps.registry.byKind('fetcher') as unknown as FetcherPlugin[];
  const httpFetcher = fetchers.find((f) => f.mode === 'http');
  const browserFetcher = fetchers.find((f) => f.mode === 'browser');
  if (httpFetcher === undefined) throw new Error('the page pipeline needs a fetcher plugin with mode "http"');
  const extractors = new Map((deps.registry.byKind('extractor') as unknown as ExtractorPlugin[]).map((x) => [x.id, x]));
  const proxies = deps.registry.byKind('proxy-provider') as unknown as ProxyProviderPlugin[];
  const builtin = (id: string) => extractors.get(id);

  const pickProxy = (type: 'datacenter' | 'residential', country: string | undefined, exclude: readonly string[]): ProxyChoice | undefined => {
    for (const p of proxies) {
      const c = p.pick({ type, country, exclude });
      if (c !== undefined) return c;
    }
    return undefined;
  };

  /** A proxy of the kind asked for, when one is asked for. */
  const proxyProblem = (i: Pick<PageRequest, 'proxy_type' | 'proxy_country'>): ProxyNotAvailable | undefined => {
    if (i.proxy_type !== undefined || i.proxy_country !== undefined) {
      const type = i.proxy_type ?? 'datacenter';
      // available() rather than pick(): a pick would move the rotation on.
      const available = proxies.flatMap((p) => p.available());
      const offered = i.proxy_country !== undefined
        ? available.includes(`${type}:${i.proxy_country}`)
        : available.some((a) => a.startsWith(`${type}:`));
      if (!offered) {
        return new ProxyNotAvailable({
          message: `no ${type} proxy${i.proxy_country ? ` in ${i.proxy_country}` : ''} is configured on this server${available.length ? ` (available: ${available.join(', ')})` : ' (none are configured)'}`,
          field: i.proxy_country !== undefined ? 'proxy_country' : 'proxy_type',
          available,
        });
      }
    }
    return undefined;
  };

  const guard = {
    name: 'guard',
    run: (ctx: PageCtx): Effect.Effect<Guarded, TargetNotAllowed | ProxyNotAvailable> => {
      const problem = proxyProblem(ctx.input);
      if (problem !== undefined) return Effect.fail(problem);
      const u = checkTargetUrl(ctx.input.url, deps.egress);
      if (!u.ok) return Effect.fail(new TargetNotAllowed({ message: `The target is not allowed: ${u.reason}`, field: 'url', reason: u.reason }));
      return Effect.succeed({ target: u.url });
    },
  };

  /** A fetched answer worth keeping: what the judge passes (not a 4xx or 5xx, not a challenge page). */
  const cacheable = (r: FetchResult): boolean => r.statusCode >= 200 && r.statusCode < 400 && !looksLikeChallenge(r);

  /**
   * The fetch stage of a read with a cacheScope (scrape, bulk scrape): with
   * `max_age` > 0, a page this account fetched with the same fetch options
   * that recently is answered from the cache without a request to the
   * target; otherwise the target is fetched, and what it answered is kept
   * for the next request (when the request may be cached at all), written
   * while the answer goes out rather than before it. The cache is best
   * effort: a failure to read it is a miss, to write it leaves the page
   * unkept.
   */
  const cachedFetch = (ctx: PageCtx, scope: NonNullable<PageCtx['cacheScope']>, cache: PageCache | undefined): Effect.Effect<PageFetched, ApiFailure> => {
    const i = ctx.input;
    const asked = scope.maxAge !== undefined;
    const miss = (why?: string) => (asked ? (why === undefined ? { hit: false as const } : { hit: false as const, uncacheable: why }) : undefined);
    const why = uncacheableField(i);
    const material = why === undefined ? cacheKeyMaterial(scope.accountId, i) : undefined;
    if (cache === undefined || material === undefined) return Effect.map(plainFetch(ctx), (f) => ({ ...f, cache: miss(why) }));
    const started = Date.now();
    const lookup = scope.maxAge === undefined || scope.maxAge === 0
      ? Effect.succeed(undefined)
      : Effect.promise(() => cache.get(material, started).catch(() => undefined));
    return Effect.flatMap(lookup, (found): Effect.Effect<PageFetched, ApiFailure> => {
      if (found !== undefined && started - found.storedAt <= scope.maxAge! * 1000) {
        return Effect.succeed({ result: found.result, proxyUsed: undefined, cache: { hit: true, age: Math.max(0, Math.floor((started - found.storedAt) / 1000)) } });
      }
      return Effect.flatMap(plainFetch(ctx), (f) => {
        const answered = { ...f, cache: miss() };
        // The write goes on after the answer (a read of the same entry waits for it: see PageCache.put).
        if (cacheable(f.result)) void cache.put(material, f.result, Date.now()).catch(() => undefined);
        return Effect.succeed(answered);
      });
    });
  };

  const fetch = {
    name: 'fetch',
    run: (ctx: PageCtx): Effect.Effect<PageFetched, ApiFailure> =>
      (ctx.cacheScope === undefined ? plainFetch(ctx) : cachedFetch(ctx, ctx.cacheScope, deps.cache)),
  };

  /**
   * The fetch, and with actions_required, a failed action fails it
   * (ACTION_FAILED): the page as it stood is not what was asked for.
   */
  const plainFetch = (ctx: PageCtx): Effect.Effect<PageFetched, ApiFailure> =>
    (ctx.input.actions_required === true ? Effect.flatMap(fetchOnce(ctx), (f) => requireActions(ctx.input, f)) : fetchOnce(ctx));

  const requireActions = (i: PageRequest, f: PageFetched): Effect.Effect<PageFetched, ActionFailed> => {
    // No action ran: the answer was a redirect, answered as it is (follow_redirects: false), never rendered.
    const results = f.result.actions ?? [{ index: 0, type: i.actions?.[0]?.type ?? 'click', ok: false, error: 'not run: the answer was a redirect, answered as it is (follow_redirects: false)' }];
    const failed = results.find((a) => !a.ok);
    if (failed === undefined) return Effect.succeed(f);
    return Effect.fail(new ActionFailed({
      message: `Action ${failed.index} (${failed.type}) failed: ${failed.error ?? 'unknown error'}`,
      index: failed.index,
      type: failed.type,
      error: failed.error ?? 'unknown error',
      // What each action run did; a screenshot's image is not kept (nothing is delivered).
      results: results.map(({ screenshot: _shot, ...r }) => r),
    }));
  };

  const fetchOnce = (ctx: PageCtx): Effect.Effect<PageFetched, ApiFailure> => {
    {
      const i = ctx.input;
      const fetcher = i.render_js ? browserFetcher! : httpFetcher;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(i.custom_headers ?? {})) headers[k.toLowerCase()] = v;
      const base: Omit<FetchRequest, 'signal' | 'proxy'> = {
        url: i.url,
        headers,
        userAgent: i.user_agent,
        cookies: i.cookies ?? {},
        followRedirects: i.follow_redirects ?? true,
        timeoutMs: (i.timeout ?? 30) * 1000,
        ...(i.render_js
          ? {
            waitFor: i.wait_for === undefined ? undefined : waitForSpec(i.wait_for),
            // wait_for waits 10 s unless wait_time says otherwise; wait_time alone is a pause after load.
            waitTimeMs: i.wait_time !== undefined ? i.wait_time * 1000 : i.wait_for !== undefined ? 10_000 : undefined,
            screenshot: screenshotSpec(i),
            ...(i.actions !== undefined ? { actions: browserActions(i.actions) } : {}),
          }
          : {}),
      };
      const wantsProxy = i.proxy_type !== undefined || i.proxy_country !== undefined;
      if (!wantsProxy) return Effect.map(runFetch(fetcher, { ...base, proxy: undefined }), (result) => ({ result, proxyUsed: undefined }));
      const type = i.proxy_type ?? 'datacenter';
      const tried: string[] = [];
      // Proxies earlier attempts at this URL went through (a bulk scrape's retries): avoided while another is left.
      const before = ctx.proxiesTried;
      // A proxy that fails (unreachable, refused) is rotated: the next attempt goes through another one.
      const attempt = (n: number): Effect.Effect<PageFetched, ApiFailure> => {
        const proxy = (before !== undefined && before.length > 0 ? pickProxy(type, i.proxy_country, [...before, ...tried]) : undefined)
          ?? pickProxy(type, i.proxy_country, tried);
        if (proxy === undefined) {
          return Effect.fail(new TargetUnreachable({ message: 'Every proxy tried failed', details: `tried ${tried.join(', ')}` }));
        }
        tried.push(proxy.id);
        before?.push(proxy.id);
        return Effect.catch(
          Effect.map(runFetch(fetcher, { ...base, proxy }), (result) => ({ result, proxyUsed: proxy })),
          (e: ApiFailure) => {
            if (e.code !== 'TARGET_UNREACHABLE') return Effect.fail(e);
            // Rest a failed proxy for a minute so other requests skip it too.
            for (const p of proxies) p.markFailed?.(proxy.id, Date.now() + 60_000);
            return n < deps.proxyRetries ? attempt(n + 1) : Effect.fail(e);
          },
        );
      };
      return attempt(0);
    }
  };

  const judge = {
    name: 'judge',
    run: (ctx: PageCtx & PageFetched): Effect.Effect<Judged, TargetBlocked> => {
      const r = ctx.result;
      if (ctx.depth !== undefined && ctx.depth(r) === 'fetched') return Effect.succeed(NOT_JUDGED);
      if (r.statusCode === 403) return Effect.fail(new TargetBlocked({ message: 'The target site refused the request (HTTP 403)', statusCode: 403 }));
      if (looksLikeChallenge(r)) return Effect.fail(new TargetBlocked({ message: 'The target site answered with an anti-bot challenge page', statusCode: r.statusCode }));
      return Effect.succeed(JUDGED);
    },
  };

  /**
   * Run extractors over one page: those the extraction port runs (the
   * built-ins, in its worker pool) are posted to it first; the others
   * (custom extractors: closures, which cannot move to another thread) run
   * here on the page parsed in this thread, meanwhile. Each outcome is at its
   * extractor's position in `xs`. Fails only when the port cannot extract
   * the page at all (a crashed or hung worker: TargetResponseInvalid).
   */
  const runExtractorsOn = (
    source: PageSource, page: () => Page, xs: readonly ExtractorPlugin[], options: Readonly<Record<string, unknown>>, alone: boolean,
  ): Effect.Effect<readonly Ran[], ExtractionFailure> => {
    const port = deps.extraction;
    const pooled: number[] = [];
    const here: number[] = [];
    xs.forEach((x, n) => (port?.runs(x) ? pooled : here).push(n));
    const out: Ran[] = new Array(xs.length);
    const remote = pooled.length === 0 ? Effect.void : Effect.map(
      port!.extract({ page: source, ids: pooled.map((n) => xs[n]!.id), options, alone }),
      (res) => {
        for (const n of pooled) {
          const id = xs[n]!.id;
          out[n] = id in res.errors ? { ok: false, error: res.errors[id]! } : { ok: true, value: res.values[id] };
        }
      },
    );
    const local = here.length === 0 ? Effect.void : Effect.promise(async () => {
      const p = page();
      for (const n of here) {
        try {
          out[n] = { ok: true, value: await xs[n]!.extract(p, options) };
        } catch (e) {
          out[n] = { ok: false, error: e instanceof Error ? e.message : String(e) };
        }
      }
    });
    const both = here.length === 0 ? remote : pooled.length === 0 ? local : Effect.all([remote, local], { concurrency: 'unbounded', discard: true });
    return Effect.as(both, out);
  };

  /** The text fields of a document read by the document reader (not as HTML): its own, not a page's. */
  type DocText = { readonly text_content: string; readonly main_content: string; readonly markdown: string };

  /**
   * The extractors over one page (HTML or text, or a document's HTML or
   * text): `media` says what it is; `doc`, when given, holds the free text
   * fields (a PDF's, a feed's) in place of the body's.
   */
  const extractPage = (ctx: PageCtx & PageFetched, source: PageSource, media: string, doc: DocText | undefined): Effect.Effect<Extraction, ExtractionFailure> => {
      const i = ctx.input;
      const r = ctx.result;
      // Parsed in this thread only when something here reads it (custom extractors, a rendered text page).
      let parsed: Page | undefined;
      const page = (): Page => (parsed ??= parsePage(source));
      const finalUrl = r.finalUrl || i.url;
      const html = doc === undefined && (media === '' || HTML_MEDIA_TYPES.includes(media));
      // Not HTML but text (plain text, JSON, XML, ...): the text is the body itself (rendered: the text of the browser's view of it).
      const text = html ? undefined : doc !== undefined ? doc.text_content : !TEXTUAL_MEDIA_TYPE.test(media) ? '' : i.render_js ? renderText(page().document) : source.html;
      const wanted: string[] = ['text_content'];
      if (i.extract_links) wanted.push('links');
      if (i.extract_images) wanted.push('images');
      if (i.extract_schema) wanted.push('schema_data');
      if (i.extract_meta) wanted.push('meta_data');
      if (i.main_content) wanted.push('main_content');
      // Change tracking compares the main content's Markdown (the markdown field is answered only when asked for).
      if (i.markdown || i.track_changes) wanted.push('markdown');
      if (i.extract_contacts) wanted.push('contacts');
      if (i.extract_social) wanted.push('social');
      if (i.extract_fields !== undefined) wanted.push('fields');
      /** Whether `x` reads this page: its content types (HTML when it names none) and its URL pattern. */
      const applies = (x: ExtractorPlugin): boolean =>
        ((media === '' && doc === undefined) || (x.filter?.contentTypes ?? HTML_MEDIA_TYPES).includes(media))
        && (x.filter?.urlPattern === undefined || x.filter.urlPattern.test(finalUrl));
      // Every field in the order it is reported: a value known without extracting, or an extractor to run.
      type Step =
        | { readonly key: string; readonly custom: boolean; readonly value: unknown; readonly undelivered?: DeliverableOption }
        | { readonly key: string; readonly custom: boolean; readonly x: ExtractorPlugin };
      const steps: Step[] = [];
      for (const id of wanted) {
        const x = builtin(id);
        if (x === undefined) continue;
        const free = FREE_TEXT[id];
        // Free fields are always there: a page the extractor cannot read gets its text, or ''.
        if (free !== undefined && doc !== undefined) steps.push({ key: id, custom: false, value: doc[id as keyof DocText] });
        else if (free !== undefined && (text !== undefined || !applies(x))) steps.push({ key: id, custom: false, value: free(text ?? '', media) });
        // A priced field the page cannot give (not HTML): its empty value, not charged.
        else if (free === undefined && !applies(x)) steps.push({ key: id, custom: false, value: EMPTY[id]?.() ?? null, undelivered: PRICED[id] });
        else steps.push({ key: id, custom: false, x });
      }
      for (const id of i.extractors ?? []) {
        const x = extractors.get(id)!;
        steps.push(applies(x) ? { key: id, custom: true, x } : { key: id, custom: true, value: null });
      }
      const runs = steps.filter((s): s is Extract<Step, { x: ExtractorPlugin }> => 'x' in s);
      const options: Record<string, unknown> = i.country === undefined ? {} : { country: i.country };
      if (i.extract_fields !== undefined) options.fields = { spec: i.extract_fields, contentLanguage: r.headers['content-language'] };
      // A request's own selectors may be costly on a big page: never extracted in-thread, so the pool's deadline applies.
      const alone = ctx.extractAlone === true && i.extract_fields === undefined;
      return Effect.map(runExtractorsOn(source, page, runs.map((s) => s.x), options, alone), (ran): Extraction => {
        const outcome = new Map(runs.map((s, n) => [s, ran[n]!]));
        const builtins: Record<string, unknown> = {};
        const extracted: Record<string, unknown> = {};
        const errors: Record<string, string> = {};
        const undelivered: DeliverableOption[] = [];
        for (const s of steps) {
          const into = s.custom ? extracted : builtins;
          if (!('x' in s)) {
            into[s.key] = s.value;
            if (s.undelivered !== undefined) undelivered.push(s.undelivered);
            continue;
          }
          const o = outcome.get(s)!;
          if (o.ok) {
            into[s.key] = o.value;
            continue;
          }
          errors[s.key] = o.error;
          if (s.custom) continue;
          // A free field whose extractor failed is ''; a priced one its empty value, not charged.
          if (FREE_TEXT[s.key] !== undefined) builtins[s.key] = '';
          else {
            builtins[s.key] = EMPTY[s.key]?.() ?? null;
            const option = PRICED[s.key];
            if (option !== undefined) undelivered.push(option);
          }
        }
        return { builtins, extracted, extractorErrors: errors, source, undelivered, readable: html || doc !== undefined || TEXTUAL_MEDIA_TYPE.test(media) };
      });
  };

  /** Documents' media types as the extractors see them (none of the built-ins read these: their fields are empty, uncharged). */
  const DOC_MEDIA: Readonly<Record<DocumentKind, string>> = {
    pdf: 'application/pdf', docx: 'text/html', rss: 'application/rss+xml', atom: 'application/atom+xml', json_feed: 'application/feed+json',
  };

  const extract = {
    name: 'extract',
    run: (ctx: PageCtx & PageFetched): Effect.Effect<Extraction, ExtractionFailure | DocumentFailure> => {
      const i = ctx.input;
      const r = ctx.result;
      const source: PageSource = { url: i.url, finalUrl: r.finalUrl, statusCode: r.statusCode, contentType: r.contentType, html: r.body };
      // Past the depth asked for (a crawl's redirect or error page): nothing is read.
      if (ctx.depth !== undefined && ctx.depth(r) !== 'read') {
        return Effect.succeed({ builtins: {}, extracted: {}, extractorErrors: {}, source, undelivered: [], readable: false });
      }
      const media = mediaType(r.contentType);
      const reader = deps.documents;
      // A document (by its type, then its first bytes): read by the document reader, then its text or HTML extracted like a page's.
      const kind = reader === undefined || i.render_js ? undefined : documentKind(media, r.bytes, r.body);
      if (kind === undefined || (BINARY_KINDS.has(kind) && r.bytes === undefined)) return extractPage(ctx, source, media, undefined);
      const bytes = BINARY_KINDS.has(kind) ? r.bytes! : new TextEncoder().encode(r.body);
      const options = { maxPages: i.max_pages ?? DEFAULT_MAX_PAGES, timeoutMs: Math.min(deps.documentTimeoutMs ?? DOCUMENT_TIMEOUT_MS, (i.timeout ?? 30) * 1000) };
      const read = Effect.tryPromise({
        try: () => reader!.read(kind, bytes, options),
        catch: (e): DocumentFailure => (isApiFailure(e) && (e.code === 'DOCUMENT_ENCRYPTED' || e.code === 'DOCUMENT_UNREADABLE')
          ? e as DocumentFailure
          : new DocumentUnreadable({ message: `The ${kind} document could not be read`, documentType: kind, details: e instanceof Error ? e.message : String(e) })),
      });
      return Effect.flatMap(read, (d: DocumentRead) => {
        const docSource: PageSource = d.html === undefined ? source : { ...source, contentType: 'text/html; charset=utf-8', html: d.html };
        const text = d.html === undefined ? { text_content: d.text, main_content: d.main, markdown: d.markdown } : undefined;
        return Effect.map(extractPage(ctx, docSource, DOC_MEDIA[kind], text), (x): Extraction => ({
          // A document with no text (a scanned PDF) has nothing to read, as an image has not.
          ...x, readable: d.html !== undefined || d.feed !== undefined || d.text.trim() !== '', document: d.info, feed: d.feed,
        }));
      });
    },
  };

  /**
   * The extract stage of POST /v1/scrape: the request's page is its only one
   * (ExtractionRequest.alone), so on a quiet server it is extracted without
   * the hop to a worker. Marked on the context (the pipeline's contexts are
   * per request), so what is extracted later for the same page says the same.
   */
  const extractAlone = {
    name: extract.name,
    run: (ctx: PageCtx & PageFetched) => extract.run(Object.assign(ctx, { extractAlone: true })),
  };

  const extractMore = (page: { readonly source: PageSource; readonly extractAlone?: boolean }, ids: readonly string[]): Effect.Effect<ExtraFields, ExtractionFailure> => {
    const xs = ids.filter((id) => builtin(id) !== undefined);
    if (xs.length === 0) return Effect.succeed({ values: {}, errors: {} });
    return Effect.map(runExtractorsOn(page.source, () => parsePage(page.source), xs.map((id) => builtin(id)!), {}, page.extractAlone === true), (ran) => {
      const values: Record<string, unknown> = {};
      const errors: Record<string, string> = {};
      ran.forEach((o, n) => {
        if (o.ok) values[xs[n]!] = o.value;
        else errors[xs[n]!] = o.error;
      });
      return { values, errors };
    });
  };

  const read = Pipeline.from<PageCtx>()
    .then(guard)
    .then(fetch)
    .then(judge)
    .then(extract)
    .handle((ctx) => Effect.succeed(ctx));

  return {
    guard, fetch, judge, extract, extractAlone,
    read: <C extends PageCtx>(ctx: C) => read(ctx) as Effect.Effect<C & PageRead, ApiFailure>,
    renders: browserFetcher !== undefined,
    proxyProblem,
    extractMore,
  };
}
