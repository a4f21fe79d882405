/**
 * How a crawl fetches: through the page pipeline (host.pages, core/page.ts),
 * so every page, robots.txt and sitemap passes the egress guard and goes
 * through the registered fetcher plugins (each redirect hop guarded too), a
 * page is judged like a scrape (a 403 or a challenge page is
 * TARGET_BLOCKED) and read by the same extractors (text, main content, meta
 * data, links). A redirect is taken as it came, and only HTML pages that
 * succeeded are read (and, when the crawl includes documents, PDF and DOCX
 * files, read by the pipeline's document reader); robots.txt and sitemaps
 * are only fetched. A map (./map.ts) reads its start page for its links
 * and their text only (fetchLinks), redirects followed.
 */
import { Cause, Effect, Exit } from 'effect';
import { BINARY_KINDS, documentKind, type DocumentKind } from '../../../core/documents.js';
import { mediaType, type FetchResult, type PageDepth, type PageReader } from '../../../core/page.js';
import type { CrawledPage, FetchPage } from './engine.js';
import { CRAWLER_USER_AGENT, type FetchText } from './politeness.js';

/** Seconds one page may take (fetch and render). */
export const PAGE_TIMEOUT_SECONDS = 30;
/** Seconds robots.txt or a sitemap may take. */
const TEXT_TIMEOUT_SECONDS = 15;
/** The main content is the page's text when it is at least this long, else the whole text is (as scrapes are indexed). */
const MIN_MAIN_CONTENT = 200;

/** Run an Effect as a Promise that rejects with its failure itself (an ApiFailure), aborting it with `signal`. */
async function runAbortable<A, E>(effect: Effect.Effect<A, E>, signal: AbortSignal): Promise<A> {
  const exit = await Effect.runPromiseExit(effect, { signal });
  if (Exit.isSuccess(exit)) return exit.value;
  const failure = Cause.findErrorOption(exit.cause);
  if (failure._tag === 'Some') throw failure.value;
  if (Cause.hasInterruptsOnly(exit.cause)) throw signal.reason ?? new Error('aborted');
  throw Cause.squash(exit.cause);
}

const HTML = /^(text\/html|application\/xhtml\+xml)/i;

/** Pages of a PDF a crawl reads at most (the rest left out, with a warning in the document's info). */
export const CRAWL_DOCUMENT_MAX_PAGES = 50;

/** The document kind of a response, by its type then its first bytes (as the page pipeline decides). */
const kindOf = (r: FetchResult): DocumentKind | undefined => documentKind(mediaType(r.contentType), r.bytes, r.body);

/**
 * How far a crawled page is taken: a redirect as it came; an error or a
 * page that is not HTML judged, not read. With documents, a PDF or DOCX
 * that succeeded is read too (a feed is not: it is not a page of the site).
 */
const pageDepth = (documents: boolean) => (r: FetchResult): PageDepth => {
  if (r.statusCode >= 300 && r.statusCode < 400) return 'fetched';
  if (r.statusCode >= 400) return 'judged';
  if (HTML.test(r.contentType)) return 'read';
  if (!documents) return 'judged';
  const kind = kindOf(r);
  return kind !== undefined && BINARY_KINDS.has(kind) ? 'read' : 'judged';
};
const fetchedOnly = (): PageDepth => 'fetched';

const firstString = (v: unknown): string | undefined => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined);

/** A page as a map reads it: where it ended, its title and its links with their text. */
export interface LinkedPage {
  readonly statusCode: number;
  readonly contentType: string;
  readonly finalUrl: string;
  readonly title: string | null;
  /** Empty unless the page is HTML that succeeded. */
  readonly links: readonly { readonly url: string; readonly text: string; readonly rel: string | null }[];
}

/**
 * One page with its redirects followed (each hop guarded), judged like a
 * scrape (a 403 or a challenge page rejects with TARGET_BLOCKED), and, when
 * it is HTML that succeeded, read for its title and links only. Rejects
 * with the core's target errors.
 */
export type FetchLinks = (url: string, o: { readonly timeoutSeconds: number; readonly signal: AbortSignal }) => Promise<LinkedPage>;

export function crawlFetchers(pages: PageReader): { fetchPage: FetchPage; fetchText: FetchText; fetchLinks: FetchLinks } {
  const fetchPage: FetchPage = (url, o) => {
    const input = {
      url, follow_redirects: false, timeout: PAGE_TIMEOUT_SECONDS, user_agent: CRAWLER_USER_AGENT,
      main_content: true, extract_meta: true, extract_links: true, ...(o.renderJs ? { render_js: true } : {}),
      ...(o.documents === true ? { max_pages: CRAWL_DOCUMENT_MAX_PAGES } : {}),
    };
    const depth = pageDepth(o.documents === true);
    const effect = Effect.map(pages.read({ input, depth }), (page): CrawledPage => {
      const r = page.result;
      const kind = o.documents === true && r.statusCode >= 200 && r.statusCode < 300 && !HTML.test(r.contentType) ? kindOf(r) : undefined;
      const base = { statusCode: r.statusCode, headers: r.headers, contentType: r.contentType, finalUrl: r.finalUrl, documentKind: kind };
      // A redirect or an error page is not read; 403s and challenge pages failed as TARGET_BLOCKED, like a scrape.
      if (depth(r) !== 'read') return { ...base, title: null, text: '', language: null, links: [], metaRobots: '' };
      const b = page.builtins;
      const d = page.document;
      if (d !== undefined) {
        // A document (PDF, DOCX): its text and what it says of itself; its links are not followed.
        const main = (b.main_content as string | undefined) ?? '';
        const whole = (b.text_content as string | undefined) ?? '';
        return {
          ...base, title: d.title, text: main.trim() !== '' ? main : whole, language: d.language, links: [], metaRobots: '',
          document: { type: d.type, title: d.title, author: d.author, created: d.created, language: d.language },
        };
      }
      const meta = b.meta_data as { title?: string | null; language?: string | null; meta?: Record<string, unknown> } | undefined;
      const main = (b.main_content as string | undefined) ?? '';
      const whole = (b.text_content as string | undefined) ?? '';
      const lang = meta?.language?.slice(0, 2).toLowerCase();
      const robots = [firstString(meta?.meta?.robots), firstString(meta?.meta?.scourbot)].filter((x) => x !== undefined).join(',').toLowerCase();
      return {
        ...base,
        title: meta?.title ?? null,
        text: main.length >= MIN_MAIN_CONTENT ? main : whole,
        language: lang !== undefined && /^[a-z]{2}$/.test(lang) ? lang : null,
        links: ((b.links as { url: string; rel: string | null }[] | undefined) ?? []).map((l) => ({ url: l.url, rel: l.rel })),
        metaRobots: robots,
      };
    });
    return runAbortable(effect, o.signal);
  };

  const fetchText: FetchText = (url, signal) => {
    const input = { url, follow_redirects: true, timeout: TEXT_TIMEOUT_SECONDS, user_agent: CRAWLER_USER_AGENT };
    return runAbortable(
      Effect.map(pages.read({ input, depth: fetchedOnly }), ({ result: r }) => ({
        statusCode: r.statusCode, contentType: r.contentType, body: r.body, finalUrl: r.finalUrl, ...(r.bytes === undefined ? {} : { bytes: r.bytes }),
      })),
      signal,
    );
  };

  const linksDepth = (r: FetchResult): PageDepth => (r.statusCode >= 400 ? 'judged' : r.statusCode < 300 && HTML.test(r.contentType) ? 'read' : 'fetched');
  const fetchLinks: FetchLinks = (url, o) => {
    const input = { url, follow_redirects: true, timeout: o.timeoutSeconds, user_agent: CRAWLER_USER_AGENT, extract_meta: true, extract_links: true };
    return runAbortable(
      Effect.map(pages.read({ input, depth: linksDepth }), (page): LinkedPage => {
        const r = page.result;
        const base = { statusCode: r.statusCode, contentType: r.contentType, finalUrl: r.finalUrl };
        if (linksDepth(r) !== 'read') return { ...base, title: null, links: [] };
        const meta = page.builtins.meta_data as { title?: string | null } | undefined;
        const links = (page.builtins.links as { url: string; text: string; rel: string | null }[] | undefined) ?? [];
        return { ...base, title: meta?.title ?? null, links: links.map((l) => ({ url: l.url, text: l.text, rel: l.rel })) };
      }),
      o.signal,
    );
  };

  return { fetchPage, fetchText, fetchLinks };
}
