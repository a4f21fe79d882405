/**
 * Credit prices (spec 8.5) as data: this server's price table. The rules
 * that turn a request into its cost are core/prices.ts; operations read
 * the table through the plugin host (`host.prices`). The price
 * table in docs/accounts-and-credits.md is this file.
 */
import * as rules from '../core/prices.js';
import type { Prices } from '../core/prices.js';

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
    /** Extension: extract_json, a model call (two when the first answer is refused); charged only when delivered. */
    extract_json: 5,
    /** Extension: values picked by CSS or XPath selectors (extract_fields). */
    extract_fields: 1,
    /** Extension: change tracking (track_changes), a read and a write of the account's page history and a diff. */
    track_changes: 1,
    /** Extension: browser actions (actions, with render_js): +1 per request that has them; each screenshot action +3 like screenshot. */
    actions: 1,
  },
  /** Extension: a crawl is charged per page it stores (each page a plain scrape's price; +5 rendered); a document it stores (include_documents) is one page, whatever its length. */
  crawl: {
    page: 3,
    render_js: 5,
  },
  /** Extension: a map of a site (POST /v1/map): robots.txt, sitemaps and one page read, whatever its number of URLs. */
  map: { call: 1 },
  /** By analysis_depth (8.2 gives the 5-15 range; the spec names the depths but not their prices). */
  research: { quick: 5, standard: 10, comprehensive: 15 },
  /** Extension: 1 credit per 10 pages of a PDF read beyond the first 10. */
  document: { freePages: 10, pagesPerCredit: 10 },
} as const satisfies Prices;

// The rules at this table's prices, for what reads prices outside a request (tests, the docs).
export const searchPrice = (i: rules.SearchPriceInput): number => rules.searchPrice(PRICES, i);
export const scrapePrice = (i: rules.ScrapePriceInput): number => rules.scrapePrice(PRICES, i);
export const researchPrice = (i: Parameters<typeof rules.researchPrice>[1]): number => rules.researchPrice(PRICES, i);
