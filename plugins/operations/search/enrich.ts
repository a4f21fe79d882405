/**
 * Search enrichment (spec 2.1 auto_scrape_top, include_contacts,
 * include_social; 2.2 scraped_content, contacts, social_profiles,
 * scraped_count; 8.5): the top results read through the page pipeline
 * (host.pages: egress guard, fetchers, the same extractors; contacts and
 * social profiles of several pages merged by their extractors' own
 * `merge`), several at once within the plan's scrape concurrency, each bounded in
 * time. A page that fails is reported in its item and costs nothing; a
 * result the egress guard refuses is never fetched.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { isApiFailure, type ApiFailure } from '../../../core/errors.js';
import { mediaType } from '../../../core/page.js';
import type { PluginHost } from '../../../core/plugin.js';
import { type Prices, searchPrice } from '../../../core/prices.js';
import type { Authenticated, Reserved, Validated } from '../../../core/stages/index.js';
import type { ExtractorPlugin } from '../../sdk/scrape.js';

/** How long one result page may take to fetch and render. */
export const PAGE_TIMEOUT_SECONDS = 15;
/** Pages scraped for contacts or social profiles when auto_scrape_top is 0. */
export const PAGES_FOR_EXTRACTION = 3;
/** Concurrency when the plan's scrape concurrency is unlimited (0). */
const MAX_CONCURRENCY = 10;

export interface EnrichInput {
  readonly max_results?: number;
  readonly auto_scrape_top?: number;
  readonly include_contacts?: boolean;
  readonly include_social?: boolean;
  readonly country?: string;
}

/** Pages a request scrapes: auto_scrape_top, or the top 3 when it only asks for contacts or profiles. */
export function pagesToScrape(i: EnrichInput): number {
  const n = i.auto_scrape_top ?? 0;
  if (n > 0) return n;
  return i.include_contacts || i.include_social ? PAGES_FOR_EXTRACTION : 0;
}

/** What a search is held for: the plain search, every page it may scrape, and the extras. */
export function heldPrice(prices: Prices, i: EnrichInput): number {
  return searchPrice(prices, { ...i, auto_scrape_top: pagesToScrape(i) });
}

/**
 * What it is charged: pages that failed (or had nothing to read) cost
 * nothing, and contacts and social profiles only when some page their
 * extractor reads (HTML) was read.
 */
export function chargedPrice(prices: Prices, i: EnrichInput, scraped: number, read: { readonly contacts: boolean; readonly social: boolean } = { contacts: scraped > 0, social: scraped > 0 }): number {
  const plain = searchPrice(prices, { max_results: i.max_results });
  if (scraped === 0) return plain;
  return plain + prices.search.perScrapedPage * scraped
    + (i.include_contacts && read.contacts ? prices.search.contacts : 0)
    + (i.include_social && read.social ? prices.search.social : 0);
}

export interface ScrapedItem {
  readonly url: string;
  readonly title: string;
  /** The main content as plain text. */
  readonly text: string | null;
  /** The page as Markdown (its main content, with headings, lists, links and tables). */
  readonly content: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** The contacts extractor's values (plugins/extractors/contacts). */
  readonly contacts?: readonly unknown[];
  /** The social extractor's values (plugins/extractors/social). */
  readonly social?: readonly unknown[];
}

export interface Enriched {
  readonly scraped: readonly ScrapedItem[] | undefined;
  readonly scrapedCount: number;
  readonly contacts: readonly unknown[] | undefined;
  readonly socialProfiles: readonly unknown[] | undefined;
}

type Ctx = RequestContext & Authenticated & Validated<EnrichInput> & Reserved & {
  readonly found: { readonly results: readonly { readonly link: string; readonly title: string }[] };
};

const failure = (e: unknown): { code: string; message: string } =>
  isApiFailure(e) ? { code: e.code, message: e.message } : { code: 'INTERNAL_ERROR', message: 'Internal error while scraping this result' };

/** An extractor's values of several pages as one: its own merge, or the values in page order. */
function merger(host: PluginHost, id: string): (lists: readonly (readonly unknown[])[]) => readonly unknown[] {
  const x = (host.registry.byKind('extractor') as unknown as ExtractorPlugin<string, readonly unknown[]>[]).find((e) => e.id === id);
  return (lists) => (x?.merge !== undefined ? x.merge(lists) : lists.flat());
}

export function enrichStage(host: PluginHost) {
  const pages = host.pages;
  const prices = host.prices;
  const mergeContacts = merger(host, 'contacts');
  const mergeProfiles = merger(host, 'social');
  return {
    name: 'enrich',
    run: (ctx: Ctx): Effect.Effect<{ enriched: Enriched }> => {
      const i = ctx.input;
      const n = pagesToScrape(i);
      if (n === 0) return Effect.succeed({ enriched: { scraped: undefined, scrapedCount: 0, contacts: undefined, socialProfiles: undefined } });
      const targets = ctx.found.results.slice(0, n);
      const planConcurrency = host.limits(ctx.account.plan, 'scrape').concurrency;
      const concurrency = Math.max(1, Math.min(targets.length, planConcurrency > 0 ? planConcurrency : MAX_CONCURRENCY));

      /** An item, and whether the contacts and social extractors could read its page (HTML). */
      type Scraped = { readonly item: ScrapedItem; readonly contacts: boolean; readonly social: boolean };
      const failed = (t: { link: string; title: string }, error: { code: string; message: string }): Scraped =>
        ({ item: { url: t.link, title: t.title, text: null, content: null, error }, contacts: false, social: false });
      // A result the egress guard refuses fails its item (TARGET_NOT_ALLOWED), never fetched.
      const one = (t: { link: string; title: string }): Effect.Effect<Scraped> => {
        const input = {
          url: t.link, main_content: true, markdown: true, timeout: PAGE_TIMEOUT_SECONDS,
          ...(i.include_contacts ? { extract_contacts: true } : {}),
          ...(i.include_social ? { extract_social: true } : {}),
          ...(i.country !== undefined ? { country: i.country } : {}),
        };
        const work = Effect.map(pages.read({ input }), (ex): Scraped => {
          // An image, a PDF, other binary: nothing to read, so not a page scraped (and not charged).
          if (!ex.readable) {
            return failed(t, { code: 'UNSUPPORTED_CONTENT_TYPE', message: `The page is ${mediaType(ex.result.contentType)}, not HTML or text: there is nothing to read` });
          }
          const b = ex.builtins;
          const item: ScrapedItem = {
            url: t.link,
            title: t.title,
            text: (b.main_content as string | undefined) ?? (b.text_content as string | undefined) ?? '',
            content: (b.markdown as string | undefined) ?? '',
            error: null,
            ...(i.include_contacts ? { contacts: (b.contacts as unknown[] | undefined) ?? [] } : {}),
            ...(i.include_social ? { social: (b.social as unknown[] | undefined) ?? [] } : {}),
          };
          return {
            item,
            contacts: i.include_contacts === true && !ex.undelivered.includes('extract_contacts'),
            social: i.include_social === true && !ex.undelivered.includes('extract_social'),
          };
        });
        return Effect.catchDefect(
          Effect.catch(work, (e: ApiFailure) => Effect.succeed(failed(t, failure(e)))),
          (d) => Effect.succeed(failed(t, failure(d))),
        );
      };

      return Effect.map(Effect.forEach(targets, one, { concurrency }), (scraped) => {
        const items = scraped.map((x) => x.item);
        const ok = items.filter((x) => x.error === null);
        // Pages that failed are released from the hold; so are contacts and profiles no page could give.
        ctx.hold.actual = chargedPrice(prices, i, ok.length, { contacts: scraped.some((x) => x.contacts), social: scraped.some((x) => x.social) });
        return {
          enriched: {
            scraped: items,
            scrapedCount: ok.length,
            contacts: i.include_contacts ? mergeContacts(ok.map((x) => x.contacts ?? [])) : undefined,
            socialProfiles: i.include_social ? mergeProfiles(ok.map((x) => x.social ?? [])) : undefined,
          },
        };
      });
    },
  };
}
