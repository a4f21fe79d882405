/**
 * The contracts of the scrape plugins: fetchers (plain HTTP, browser),
 * proxy providers, extractors, and the blob store screenshots go to. The
 * built-in plugins and custom ones use the same helpers (`defineExtractor`,
 * `defineFetcher`, `defineProxyProvider`). Extractors receive one parsed
 * tree per page (htmlparser2's DOM, shared by every extractor).
 */
import type { Document } from 'domhandler';
import type { PluginBase } from '../../core/plugin.js';

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
  readonly loadTimeSeconds: number;
  readonly screenshot?: { readonly data: Uint8Array; readonly contentType: 'image/png' | 'image/jpeg'; readonly width: number; readonly height: number } | undefined;
}

/**
 * A fetcher. Fails (rejects) with the core's target errors: TargetNotAllowed,
 * TargetTimeout, TargetUnreachable, TargetResponseInvalid (TargetBlocked is
 * decided by the operation from the result).
 */
export interface FetcherPlugin<N extends string = string> extends PluginBase<N, 'fetcher'> {
  /** `http` serves plain scrapes; `browser` serves render_js. */
  readonly mode: 'http' | 'browser';
  fetch(request: FetchRequest): Promise<FetchResult>;
}

export interface ProxyQuery {
  readonly type: 'datacenter' | 'residential';
  readonly country: string | undefined;
  /** Proxy ids already tried by this request (a retry rotates to another). */
  readonly exclude: readonly string[];
}

export interface ProxyProviderPlugin<N extends string = string> extends PluginBase<N, 'proxy-provider'> {
  /** A proxy for the query, or undefined when none (left) matches. */
  pick(query: ProxyQuery): ProxyChoice | undefined;
  /** What this provider offers, as "type:COUNTRY" (or "type:*" for any country), for error messages. */
  available(): readonly string[];
  /** Skip this proxy until `untilMs` (epoch ms) after it failed (optional). */
  markFailed?(id: string, untilMs: number): void;
}

/** The page as every extractor sees it: parsed once. */
export interface Page {
  readonly url: string;
  readonly finalUrl: string;
  readonly statusCode: number;
  readonly contentType: string;
  readonly html: string;
  readonly document: Document;
}

/** What an extractor applies to: compiled once; extractors that do not match a page are not called. */
export interface ExtractorFilter {
  /** Content types (media type only, lower case), e.g. ['text/html', 'application/xhtml+xml']. Default: HTML. */
  readonly contentTypes?: readonly string[];
  /** Only URLs matching this. */
  readonly urlPattern?: RegExp;
}

export interface ExtractorPlugin<N extends string = string, R = unknown> extends PluginBase<N, 'extractor'> {
  /**
   * The request's name for it: built-ins are switched on by their scrape
   * field (`extract_links` -> `links`); custom ones are asked for by name in
   * `"extractors": ["price"]` and answer under `extracted.price`.
   */
  readonly id: string;
  readonly builtin?: boolean;
  readonly filter?: ExtractorFilter;
  /** Synchronous or async; a throw is reported for this extractor only. */
  extract(page: Page, options: Readonly<Record<string, unknown>>): R | Promise<R>;
}

export const defineExtractor = <const N extends string, R>(p: Omit<ExtractorPlugin<N, R>, 'kind'>): ExtractorPlugin<N, R> => ({ ...p, kind: 'extractor' });
export const defineFetcher = <const N extends string>(p: Omit<FetcherPlugin<N>, 'kind'>): FetcherPlugin<N> => ({ ...p, kind: 'fetcher' });
export const defineProxyProvider = <const N extends string>(p: Omit<ProxyProviderPlugin<N>, 'kind'>): ProxyProviderPlugin<N> => ({ ...p, kind: 'proxy-provider' });
