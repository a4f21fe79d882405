/**
 * The page pipeline as the core sees it: how any operation reads one page
 * (guard -> fetch -> judge -> extract), and the fetch contract the fetcher
 * plugins implement. The pipeline itself is built once per server from the
 * registered fetchers, proxy providers and extractors
 * (plugins/operations/scrape/page.ts) and reaches operations through the
 * plugin host (`host.pages`): single and bulk scrape run its stages, search
 * enrichment, research and crawl call `read`. Pure: types and pure helpers.
 */
import type { Effect } from 'effect';
import type { DocumentFailure, DocumentInfo, FeedInfo } from './documents.js';
import type { ApiFailure, ProxyNotAvailable, TargetBlocked, TargetNotAllowed } from './errors.js';
import type { ExtractionFailure, PageSource } from './extraction.js';
import type { Stage } from './pipeline.js';
import type { DeliverableOption } from './prices.js';

// ---------------------------------------------------------------------------
// The fetch contract (fetcher and proxy plugins; plugins/sdk/scrape.ts re-exports it)

/** Screenshot settings (`screenshot_options`), after defaults. */
export interface ScreenshotSpec {
  readonly fullPage: boolean;
  readonly width: number;
  readonly height: number;
  readonly format: 'png' | 'jpeg';
  /** jpeg only, 1-100. */
  readonly quality: number | undefined;
  /** Capture this element only. */
  readonly selector: string | undefined;
}

/** A selector as the browser takes it: CSS, or XPath (the same rule as wait_for). */
export interface SelectorSpec {
  readonly kind: 'css' | 'xpath';
  readonly selector: string;
}

/**
 * One browser action (a scrape's `actions`, issue 29), as the browser
 * fetcher runs it, after the page has loaded and before it is read.
 */
export type BrowserAction =
  | { readonly type: 'click'; readonly selector: SelectorSpec }
  /** Without a selector, the text is typed into the element that has the focus (after a click, say), as Firecrawl's write does. */
  | { readonly type: 'write'; readonly selector?: SelectorSpec; readonly text: string }
  | { readonly type: 'press'; readonly key: string }
  /** `amount` CSS pixels down (or up). */
  | { readonly type: 'scroll'; readonly direction: 'down' | 'up'; readonly amount: number }
  /** To the bottom, again and again (at most maxSteps times) while the page grows. */
  | { readonly type: 'scroll'; readonly to: 'bottom'; readonly maxSteps: number }
  | { readonly type: 'wait'; readonly milliseconds: number }
  /** Until an element matches (at most `milliseconds`). */
  | { readonly type: 'wait'; readonly selector: SelectorSpec; readonly milliseconds: number }
  | { readonly type: 'screenshot'; readonly fullPage: boolean }
  /** The body of an async function run in the page: its JSON-serialisable return value is the action's value. */
  | { readonly type: 'execute_javascript'; readonly script: string };

export type BrowserActionType = BrowserAction['type'];

/** What one action did: run in order; the first that fails is the last one run. */
export interface ActionOutcome {
  /** Its position in the request's `actions`. */
  readonly index: number;
  readonly type: BrowserActionType;
  readonly ok: boolean;
  /** Why it failed. */
  readonly error?: string | undefined;
  /** execute_javascript: the return value (absent when it returned nothing); scroll to bottom: how far it went. */
  readonly value?: unknown;
  /** A screenshot action's image. */
  readonly screenshot?: Shot | undefined;
}

/** An image the browser took. */
export interface Shot {
  readonly data: Uint8Array;
  readonly contentType: 'image/png' | 'image/jpeg';
  readonly width: number;
  readonly height: number;
}

/** A proxy chosen for one attempt. */
export interface ProxyChoice {
  /** http://user:pass@host:port (never logged or returned). */
  readonly url: string;
  /** Stable id for logs and rotation (no credentials). */
  readonly id: string;
  readonly type: 'datacenter' | 'residential';
  readonly country: string | undefined;
}

/** One fetch, as a fetcher receives it (already validated and guarded at the URL level). */
export interface FetchRequest {
  readonly url: string;
  /** Extra request headers (already checked: no hop-by-hop, no Host). Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly userAgent: string | undefined;
  readonly cookies: Readonly<Record<string, string>>;
  readonly followRedirects: boolean;
  /** Bound of the whole fetch, render included. */
  readonly timeoutMs: number;
  readonly proxy: ProxyChoice | undefined;
  /** Aborted when the client goes away; fetchers stop and release what they hold. */
  readonly signal: AbortSignal;
  /** Browser fetches only. */
  readonly waitFor?: { readonly kind: 'css' | 'xpath'; readonly selector: string } | undefined;
  readonly waitTimeMs?: number | undefined;
  readonly screenshot?: ScreenshotSpec | undefined;
  /** Browser actions to run after the page loads, in order (a failed one stops the rest); the page is read after them. */
  readonly actions?: readonly BrowserAction[] | undefined;
}

export interface FetchResult {
  readonly url: string;
  /** After redirects. */
  readonly finalUrl: string;
  /** What the target answered (a 404 or 500 is a result, not an error). */
  readonly statusCode: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  /** The body decoded to text (charset from header, BOM or meta). For the browser: the rendered DOM. */
  readonly body: string;
  /**
   * The body as received, when it is not HTML or text (or its type is not
   * said): what a document (PDF, DOCX) is read from. The HTTP fetcher
   * sets it; absent, documents are not read.
   */
  readonly bytes?: Uint8Array | undefined;
  readonly loadTimeSeconds: number;
  readonly screenshot?: Shot | undefined;
  /** With actions: what each one run did, in order. */
  readonly actions?: readonly ActionOutcome[] | undefined;
}

// ---------------------------------------------------------------------------
// Media types

/** What an extractor reads when its filter names no content types, and what every built-in one reads. */
export const HTML_MEDIA_TYPES: readonly string[] = ['text/html', 'application/xhtml+xml'];

/** Media types that are text (their body is their text): text/*, JSON, XML and their +json, +xml kinds. */
export const TEXTUAL_MEDIA_TYPE = /^(text\/|application\/([a-z0-9.+-]*\+)?(json|xml)$)/;

/** The media type of a Content-Type value, lower case ('' when there is none). */
export const mediaType = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase();

// ---------------------------------------------------------------------------
// Reading one page

/** What a page is read with: the single scrape's request fields (POST /v1/scrape's body is one). */
export interface PageRequest {
  readonly url: string;
  readonly render_js?: boolean;
  readonly wait_for?: string;
  readonly wait_time?: number;
  readonly user_agent?: string;
  readonly proxy_type?: 'datacenter' | 'residential';
  readonly proxy_country?: string;
  readonly follow_redirects?: boolean;
  readonly extract_links?: boolean;
  readonly extract_images?: boolean;
  readonly extract_schema?: boolean;
  readonly extract_meta?: boolean;
  readonly extract_contacts?: boolean;
  readonly extract_social?: boolean;
  readonly country?: string;
  readonly custom_headers?: Readonly<Record<string, string>>;
  readonly cookies?: Readonly<Record<string, string>>;
  readonly screenshot?: boolean;
  readonly screenshot_options?: {
    readonly full_page?: boolean;
    readonly width?: number;
    readonly height?: number;
    readonly format?: 'png' | 'jpeg';
    readonly quality?: number;
    readonly selector?: string;
  };
  readonly timeout?: number;
  readonly main_content?: boolean;
  readonly markdown?: boolean;
  readonly extractors?: readonly string[];
  /** Extension: the extract_fields spec (checked by the fields extractor at request time). */
  readonly extract_fields?: unknown;
  /** A PDF's pages to read at most (default DEFAULT_MAX_PAGES, at most MAX_MAX_PAGES: core/documents.ts). */
  readonly max_pages?: number;
  /** Seconds: a page this account fetched with the same fetch options at most this long ago is answered from the cache (core/page-cache.ts). */
  readonly max_age?: number;
  /** Compare the main content's Markdown with the account's previous scrape of the URL (the markdown field is extracted for it). */
  readonly track_changes?: boolean;
  /** Browser actions (with render_js), as the request gives them (checked by the scrape's validation). */
  readonly actions?: readonly ActionRequest[];
  /** A failed action fails the read (ACTION_FAILED) instead of reading the page as it stood. */
  readonly actions_required?: boolean;
}

/** One item of a request's `actions` (validated: the fields its type needs, none it does not take). */
export interface ActionRequest {
  readonly type: BrowserActionType;
  readonly selector?: string;
  readonly text?: string;
  readonly key?: string;
  readonly direction?: 'down' | 'up';
  readonly amount?: number;
  readonly to?: 'bottom';
  readonly max_steps?: number;
  readonly milliseconds?: number;
  readonly full_page?: boolean;
  readonly script?: string;
}

/** How far an answer is taken after its fetch: as it came, judged (a block page fails), or judged and read. */
export type PageDepth = 'fetched' | 'judged' | 'read';

/** What the page pipeline reads of its context. A read's context is its own object, which the pipeline fills. */
export interface PageCtx {
  readonly input: PageRequest;
  /** Proxies earlier attempts at this URL went through (a bulk scrape's retries): avoided while another is left. */
  readonly proxiesTried?: string[];
  /** The request's only page (set by the extractAlone stage: POST /v1/scrape), extracted in-thread on a quiet server. */
  readonly extractAlone?: boolean;
  /**
   * How far to take each answer (default: 'read'). A crawl takes a redirect
   * as it came and reads only HTML pages that succeeded; robots.txt and
   * sitemaps are only fetched. Past the depth nothing is judged or
   * extracted: the extraction is empty and `readable` false.
   */
  readonly depth?: (result: FetchResult) => PageDepth;
  /**
   * The scrape cache, for the reads of scrape and bulk scrape: whose
   * entries (the account) and, with `max_age`, how old an entry may be to
   * answer. Absent: the read neither looks in the cache nor stores there.
   */
  readonly cacheScope?: { readonly accountId: string; readonly maxAge: number | undefined };
}

/** What a scrape with `max_age` says of the cache (core/page-cache.ts): a hit and its age in seconds, or a miss (and what kept the request out of the cache). */
export type CacheAnswer =
  | { readonly hit: true; readonly age: number }
  | { readonly hit: false; readonly uncacheable?: string };

/** guard: the target as a URL (the egress guard passed it, and a proxy of the kind asked for exists). */
export interface Guarded { readonly target: URL }
/** fetch: what the target answered, and through which proxy. */
export interface PageFetched {
  readonly result: FetchResult;
  readonly proxyUsed: ProxyChoice | undefined;
  /** With max_age: whether the page came from the cache (and how old it is), or why it could not. */
  readonly cache?: CacheAnswer | undefined;
}
/** judge: the answer is not a block (a 403, an anti-bot challenge); false when the depth skipped judging. */
export interface Judged { readonly judged: boolean }

/** extract: what the extractors made of the page. */
export interface Extraction {
  /** The built-in fields (text_content always), by field id. */
  readonly builtins: Record<string, unknown>;
  /** Custom extractors' values, by id. */
  readonly extracted: Record<string, unknown>;
  readonly extractorErrors: Record<string, string>;
  /** The page as fetched (what the extractors read). */
  readonly source: PageSource;
  /** Priced options asked for whose output this page could not give: not charged. */
  readonly undelivered: readonly DeliverableOption[];
  /** HTML, text or a document read: something to read (not an image, other binary). */
  readonly readable: boolean;
  /** The page was a document (PDF, DOCX, a feed): what it says of itself (the `document` answer field). */
  readonly document?: DocumentInfo | undefined;
  /** The page was a feed: its items (the `feed` answer field). */
  readonly feed?: FeedInfo | undefined;
}

/** One page read to the end of the pipeline. */
export type PageRead = Guarded & PageFetched & Judged & Extraction;

/** Built-in extractors run over a page already read: each one's value, or its error. */
export type ExtraFields = { readonly values: Record<string, unknown>; readonly errors: Record<string, string> };

/**
 * The page pipeline: its stages (for routes that interleave their own:
 * the single scrape gates and reserves between guard and fetch) and `read`,
 * the whole pipeline as one call (for operations that read pages as part
 * of their work). Built once per server.
 */
export interface PageReader {
  /** The egress guard on the URL, and a proxy of the kind asked for (TARGET_NOT_ALLOWED, PROXY_NOT_AVAILABLE). */
  readonly guard: Stage<PageCtx, Guarded, TargetNotAllowed | ProxyNotAvailable>;
  /** The fetcher for the request (the browser for render_js), through a proxy when asked, a failed proxy rotated. */
  readonly fetch: Stage<PageCtx, PageFetched, ApiFailure>;
  /** A 403 or an anti-bot challenge page is TARGET_BLOCKED. */
  readonly judge: Stage<PageCtx & PageFetched, Judged, TargetBlocked>;
  /** The extractors the request asks for; a document (PDF, DOCX, feed) read first (DOCUMENT_ENCRYPTED, DOCUMENT_UNREADABLE). */
  readonly extract: Stage<PageCtx & PageFetched, Extraction, ExtractionFailure | DocumentFailure>;
  /** extract for a request whose page is its only one (POST /v1/scrape): marks the context `extractAlone`. */
  readonly extractAlone: Stage<PageCtx & PageFetched, Extraction, ExtractionFailure | DocumentFailure>;
  /**
   * guard -> fetch -> judge -> extract over `ctx`, which it fills and
   * answers with. Interrupting the Effect aborts the fetch. `ctx` must be
   * the read's own object (never a request's context: its finalizers are
   * its own).
   */
  read<C extends PageCtx>(ctx: C): Effect.Effect<C & PageRead, ApiFailure>;
  /** Whether render_js can be served (a browser fetcher is registered). */
  readonly renders: boolean;
  /** When a proxy is asked for: PROXY_NOT_AVAILABLE if none of the kind is configured. */
  proxyProblem(i: Pick<PageRequest, 'proxy_type' | 'proxy_country'>): ProxyNotAvailable | undefined;
  /**
   * Built-in extractors by id over a page already read (what a later step
   * needs that the request did not ask for). Ids no extractor has are left out.
   */
  extractMore(page: { readonly source: PageSource; readonly extractAlone?: boolean }, ids: readonly string[]): Effect.Effect<ExtraFields, ExtractionFailure>;
}
