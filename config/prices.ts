/**
 * Credit prices (spec 8.5) as data, and the rules that turn a validated
 * request into its cost. Operation plugins hand these to the reserve stage;
 * the README's price table is this file.
 */

export const PRICES = {
  search: {
    /** Up to `smallMaxResults` results (the spec leaves a plain search unpriced; 8.2 says 1-2). */
    base: 1,
    smallMaxResults: 10,
    /** More than `smallMaxResults` results. */
    large: 2,
    perScrapedPage: 3,
    contacts: 5,
    social: 5,
  },
  scrape: {
    base: 3,
    render_js: 5,
    residential_proxy: 2,
    screenshot: 3,
    extract_links: 1,
    extract_images: 1,
    extract_schema: 2,
    extract_meta: 1,
    /** Extensions (not in the spec): contacts and social profiles of one page, priced like structured data. */
    extract_contacts: 2,
    extract_social: 2,
  },
  /** Extension: a crawl is charged per page it stores (each page a plain scrape's price; +5 rendered). */
  crawl: {
    page: 3,
    render_js: 5,
  },
  /** By analysis_depth (8.2 gives the 5-15 range; the spec names the depths but not their prices). */
  research: { quick: 5, standard: 10, comprehensive: 15 },
} as const;

export interface SearchPriceInput {
  readonly max_results?: number;
  readonly auto_scrape_top?: number;
  readonly include_contacts?: boolean;
  readonly include_social?: boolean;
}

export function searchPrice(i: SearchPriceInput): number {
  const p = PRICES.search;
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
}

export function scrapePrice(i: ScrapePriceInput): number {
  const p = PRICES.scrape;
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
    (i.extract_social ? p.extract_social : 0)
  );
}

/** The priced options of a scrape whose output may fail to materialise: each is charged only when delivered. */
export type DeliverableOption = 'screenshot' | 'extract_links' | 'extract_images' | 'extract_schema' | 'extract_meta' | 'extract_contacts' | 'extract_social';

/**
 * What a scrape that succeeded is charged: its price (the hold) less the
 * options it did not deliver: an extractor that does not apply to the
 * page's content type (the built-in ones read HTML only) or that failed,
 * and a screenshot the browser did not take (a redirect answered as is).
 * The base price, render_js and a residential proxy are work done for any
 * page, so always charged.
 */
export function scrapeCharge(i: ScrapePriceInput, undelivered: Iterable<DeliverableOption>): number {
  const delivered: Record<string, unknown> = { ...i };
  for (const k of undelivered) delivered[k] = false;
  return scrapePrice(delivered as ScrapePriceInput);
}

/** Credits one stored page of a crawl costs. */
export function crawlPagePrice(i: { readonly render_js?: boolean }): number {
  return PRICES.crawl.page + (i.render_js ? PRICES.crawl.render_js : 0);
}

export function researchPrice(i: { readonly analysis_depth?: 'quick' | 'standard' | 'comprehensive' }): number {
  return PRICES.research[i.analysis_depth ?? 'standard'];
}
