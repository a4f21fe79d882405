/**
 * Credit prices (spec 8.5): the shape of the price table and the rules that
 * turn a validated request into its cost. The table itself is data chosen
 * by the composition root (config/prices.ts) and reaches operations through
 * the plugin host (`host.prices`), the way plans do; operations hand these
 * rules, at the host's prices, to the reserve stage. Pure.
 */

export interface Prices {
  readonly search: {
    /** Up to `smallMaxResults` results (the spec leaves a plain search unpriced; 8.2 says 1-2). */
    readonly base: number;
    readonly smallMaxResults: number;
    /** More than `smallMaxResults` results. */
    readonly large: number;
    readonly perScrapedPage: number;
    readonly contacts: number;
    readonly social: number;
  };
  readonly scrape: {
    readonly base: number;
    readonly render_js: number;
    readonly residential_proxy: number;
    readonly screenshot: number;
    readonly extract_links: number;
    readonly extract_images: number;
    readonly extract_schema: number;
    readonly extract_meta: number;
    /** Extensions (not in the spec): contacts and social profiles of one page. */
    readonly extract_contacts: number;
    readonly extract_social: number;
    /** Extension: a model fills the caller's JSON Schema from the main content (issue 27). */
    readonly extract_json: number;
    /** Extension: values picked by selectors (extract_fields). */
    readonly extract_fields: number;
    /** Extension: change tracking against the account's previous scrape of the URL (track_changes). */
    readonly track_changes: number;
    /** Extension: browser actions (issue 29), once per request that has them; each screenshot action costs `screenshot` more. */
    readonly actions: number;
  };
  /** Extension: a crawl is charged per page it stores. */
  readonly crawl: {
    readonly page: number;
    readonly render_js: number;
  };
  /** Extension: a map of a site (POST /v1/map), whatever its number of URLs. */
  readonly map: { readonly call: number };
  /** By analysis_depth. */
  readonly research: { readonly quick: number; readonly standard: number; readonly comprehensive: number };
  /** Extension: a long PDF costs more than a page: 1 credit per `pagesPerCredit` pages read beyond the first `freePages`. */
  readonly document: { readonly freePages: number; readonly pagesPerCredit: number };
}

export interface SearchPriceInput {
  readonly max_results?: number;
  readonly auto_scrape_top?: number;
  readonly include_contacts?: boolean;
  readonly include_social?: boolean;
}

export function searchPrice(prices: Prices, i: SearchPriceInput): number {
  const p = prices.search;
  return (
    ((i.max_results ?? 10) > p.smallMaxResults ? p.large : p.base) +
    p.perScrapedPage * (i.auto_scrape_top ?? 0) +
    (i.include_contacts ? p.contacts : 0) +
    (i.include_social ? p.social : 0)
  );
}

export interface ScrapePriceInput {
  readonly render_js?: boolean;
  readonly proxy_type?: string;
  readonly screenshot?: boolean;
  readonly extract_links?: boolean;
  readonly extract_images?: boolean;
  readonly extract_schema?: boolean;
  readonly extract_meta?: boolean;
  readonly extract_contacts?: boolean;
  readonly extract_social?: boolean;
  /** Present: a model fills a JSON Schema (its value is not priced, only its presence). */
  readonly extract_json?: object | false;
  /** The extract_fields spec (any value but undefined and false is charged). */
  readonly extract_fields?: unknown;
  readonly track_changes?: boolean;
  /** Browser actions: priced by their number of screenshots (see actionsPrice). */
  readonly actions?: readonly ({ readonly type?: unknown } | undefined)[];
}

/**
 * What a request's browser actions cost: `actions` once (none: nothing),
 * and each screenshot action at the `screenshot` price. `shots`, when
 * given, is how many screenshots were delivered (an action not run, or a
 * screenshot not stored, is not charged); without it, every one asked for
 * (the hold).
 */
export function actionsPrice(prices: Prices, actions: ScrapePriceInput['actions'], shots?: number): number {
  if (actions === undefined || actions.length === 0) return 0;
  const asked = actions.filter((a) => a?.type === 'screenshot').length;
  return prices.scrape.actions + prices.scrape.screenshot * Math.max(0, Math.min(asked, shots ?? asked));
}

export function scrapePrice(prices: Prices, i: ScrapePriceInput): number {
  const p = prices.scrape;
  return (
    p.base +
    (i.render_js ? p.render_js : 0) +
    (i.proxy_type === 'residential' ? p.residential_proxy : 0) +
    (i.screenshot ? p.screenshot : 0) +
    (i.extract_links ? p.extract_links : 0) +
    (i.extract_images ? p.extract_images : 0) +
    (i.extract_schema ? p.extract_schema : 0) +
    (i.extract_meta ? p.extract_meta : 0) +
    (i.extract_contacts ? p.extract_contacts : 0) +
    (i.extract_social ? p.extract_social : 0) +
    (i.extract_json ? p.extract_json : 0) +
    (i.extract_fields !== undefined && i.extract_fields !== false ? p.extract_fields : 0) +
    (i.track_changes ? p.track_changes : 0) +
    actionsPrice(prices, i.actions)
  );
}

/** The priced options of a scrape whose output may fail to materialise: each is charged only when delivered. */
export type DeliverableOption = 'screenshot' | 'extract_links' | 'extract_images' | 'extract_schema' | 'extract_meta' | 'extract_contacts' | 'extract_social' | 'extract_json' | 'extract_fields';

/**
 * What a scrape that succeeded is charged: its price (the hold) less the
 * options it did not deliver: an extractor that does not apply to the
 * page's content type (the built-in ones read HTML only) or that failed,
 * and a screenshot the browser did not take (a redirect answered as is).
 * The base price, render_js and a residential proxy are work done for any
 * page, so always charged. Browser actions: their flat price always,
 * and `actionShots` screenshots (those delivered; default: all asked for).
 */
export function scrapeCharge(prices: Prices, i: ScrapePriceInput, undelivered: Iterable<DeliverableOption>, actionShots?: number): number {
  const delivered: Record<string, unknown> = { ...i, actions: undefined };
  for (const k of undelivered) delivered[k] = false;
  return scrapePrice(prices, delivered as ScrapePriceInput) + actionsPrice(prices, i.actions, actionShots);
}

/** The extra credits of a PDF of which `pagesRead` pages were read: 1 per `pagesPerCredit` pages (or part) beyond the first `freePages`. */
export function documentPagesCharge(prices: Prices, pagesRead: number): number {
  const d = prices.document;
  return pagesRead > d.freePages ? Math.ceil((pagesRead - d.freePages) / d.pagesPerCredit) : 0;
}

/**
 * What a scrape holds for the pages of a PDF it may read: the charge of
 * `max_pages` pages when the request sets it; nothing without it (a page
 * that turns out to be a PDF is then charged no more than the hold).
 */
export function documentPagesHold(prices: Prices, i: { readonly max_pages?: number }): number {
  return i.max_pages === undefined ? 0 : documentPagesCharge(prices, i.max_pages);
}

/** Credits one stored page of a crawl costs. */
export function crawlPagePrice(prices: Prices, i: { readonly render_js?: boolean }): number {
  return prices.crawl.page + (i.render_js ? prices.crawl.render_js : 0);
}

/** Credits one map costs. */
export function mapPrice(prices: Prices): number {
  return prices.map.call;
}

export function researchPrice(prices: Prices, i: { readonly analysis_depth?: 'quick' | 'standard' | 'comprehensive' }): number {
  return prices.research[i.analysis_depth ?? 'standard'];
}
