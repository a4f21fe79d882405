/**
 * The plain HTTP fetcher (`render_js: false`): one guarded exchange through
 * the Egress port (core/ports.ts; the composition root hands it the
 * adapters/egress implementation) with the headers a desktop Chrome sends, the body decoded
 * to text as a browser would (charset.ts). Everything about which targets
 * are allowed, redirects, limits and proxies is the egress guard's.
 */
import { HTML_MEDIA_TYPES, mediaType, TEXTUAL_MEDIA_TYPE } from '../../../core/page.js';
import type { Egress, Resolver } from '../../../core/ports.js';
import { defineFetcher, type FetchRequest, type FetchResult, type FetcherPlugin } from '../../sdk/scrape.js';
import { decodeBody } from './charset.js';

export const DEFAULT_USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36';

/** Chrome's navigation headers, in Chrome's order (User-Agent is inserted at its place). */
export const DEFAULT_HEADERS: Readonly<Record<string, string>> = {
  'upgrade-insecure-requests': '1',
  'user-agent': DEFAULT_USER_AGENT,
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  'accept-encoding': 'gzip, deflate, br',
  'accept-language': 'en-US,en;q=0.9',
};

export interface HttpFetcherOptions {
  /** How the fetcher reaches the network (the guard applies the policy below). */
  readonly egress: Egress;
  /** Allow loopback, private, link-local and CGNAT targets (never metadata, multicast, broadcast, unspecified). */
  readonly allowPrivate: boolean;
  readonly maxBodyBytes?: number;
  readonly maxDecodedBytes?: number;
  readonly maxRedirects?: number;
  /** Extra allow-list before the class rules (tests: allow 127.0.0.1 only). */
  readonly allowAddress?: (ip: string) => boolean;
  /** Replaces DNS for the guard (answers are still judged). */
  readonly resolver?: Resolver;
  /** TLS trust for targets (tests with a private CA, PEM). */
  readonly tls?: { readonly ca?: string; readonly rejectUnauthorized?: boolean };
}

/** The request headers: defaults, then the caller's (case-insensitive override), then user_agent and cookies. */
export function requestHeaders(request: Pick<FetchRequest, 'headers' | 'userAgent'>): Record<string, string> {
  const headers: Record<string, string> = { ...DEFAULT_HEADERS };
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  if (request.userAgent !== undefined && request.userAgent !== '') headers['user-agent'] = request.userAgent;
  return headers;
}

/** Whether a body of this type may be a binary document (its bytes are kept). */
const binary = (contentType: string): boolean => {
  const media = mediaType(contentType);
  return media === '' || (!HTML_MEDIA_TYPES.includes(media) && !TEXTUAL_MEDIA_TYPE.test(media));
};

export function createHttpFetcher(options: HttpFetcherOptions): FetcherPlugin<'fetcher-http'> {
  return defineFetcher({
    name: 'fetcher-http',
    mode: 'http',
    description: 'Plain HTTP fetches (no JavaScript) under the egress guard, with browser-like headers.',
    async fetch(request: FetchRequest): Promise<FetchResult> {
      const started = performance.now();
      const res = await options.egress.fetch(request.url, {
        allowPrivate: options.allowPrivate,
        allowAddress: options.allowAddress,
        resolver: options.resolver,
        tls: options.tls,
        method: 'GET',
        headers: requestHeaders(request),
        cookies: request.cookies,
        followRedirects: request.followRedirects,
        ...(options.maxRedirects === undefined ? {} : { maxRedirects: options.maxRedirects }),
        ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
        ...(options.maxDecodedBytes === undefined ? {} : { maxDecodedBytes: options.maxDecodedBytes }),
        timeoutMs: request.timeoutMs,
        signal: request.signal,
        proxy: request.proxy ? { url: request.proxy.url, id: request.proxy.id } : undefined,
      });
      const contentType = res.headers['content-type'] ?? '';
      const { text } = decodeBody(res.body, contentType);
      return {
        url: request.url,
        // Without a redirect the URL is the one asked for, as given.
        finalUrl: res.redirects.length === 0 ? request.url : res.url,
        statusCode: res.statusCode,
        headers: res.headers,
        contentType,
        body: text,
        // Not HTML or text (a PDF, a DOCX, an octet stream), or of no said type: the bytes too, for a document reader.
        ...(binary(contentType) ? { bytes: res.body } : {}),
        loadTimeSeconds: Math.round(performance.now() - started) / 1000,
      };
    },
  });
}
