/**
 * The contracts of the scrape plugins: fetchers (plain HTTP, browser;
 * their request and result types are core/page.ts),
 * proxy providers, extractors, and the blob store screenshots go to. The
 * built-in plugins and custom ones use the same helpers (`defineExtractor`,
 * `defineFetcher`, `defineProxyProvider`). Extractors receive one parsed
 * tree per page (htmlparser2's DOM, shared by every extractor).
 */
import type { Document } from 'domhandler';
import { HTML_MEDIA_TYPES, type FetchRequest, type FetchResult, type ProxyChoice } from '../../core/page.js';
import type { PluginBase } from '../../core/plugin.js';

export type { FetchRequest, FetchResult, ProxyChoice, ScreenshotSpec } from '../../core/page.js';

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
  /**
   * Checks the request's value for this extractor (a built-in one driven by
   * a request field, such as `extract_fields`): every problem, each with
   * its field path under `path`, all reported at once as a 400. Optional.
   */
  check?(value: unknown, path: string): readonly { readonly field: string; readonly message: string }[];
  /** Synchronous or async; a throw is reported for this extractor only. */
  extract(page: Page, options: Readonly<Record<string, unknown>>): R | Promise<R>;
  /**
   * How its values from several pages of one request combine into one
   * (search enrichment's contacts and social_profiles): optional.
   */
  merge?(values: readonly R[]): R;
}

/** The built-in extractors read HTML (and XHTML) pages only. */
export const HTML_FILTER: ExtractorFilter = { contentTypes: HTML_MEDIA_TYPES };

export const defineExtractor = <const N extends string, R>(p: Omit<ExtractorPlugin<N, R>, 'kind'>): ExtractorPlugin<N, R> => ({ ...p, kind: 'extractor' });
export const defineFetcher = <const N extends string>(p: Omit<FetcherPlugin<N>, 'kind'>): FetcherPlugin<N> => ({ ...p, kind: 'fetcher' });
export const defineProxyProvider = <const N extends string>(p: Omit<ProxyProviderPlugin<N>, 'kind'>): ProxyProviderPlugin<N> => ({ ...p, kind: 'proxy-provider' });
