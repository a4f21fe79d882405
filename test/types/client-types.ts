/**
 * Type-level tests, checked by `npm run typecheck`: the client's generated
 * request and answer types (adapters/client/types.gen.ts) and the server's
 * TypeBox schemas describe the same values, both ways. A field added,
 * removed, renamed or retyped on the server without `npm run gen:client`
 * fails here (test/http/client-types.test.ts also compares the text).
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type * as C from '../../adapters/client/index.js';
import type { Scour } from '../../adapters/client/index.js';
import type { SearchRequest, SearchResponse } from '../../plugins/operations/search/index.js';
import type { ScrapeRequest, ScrapeResponse } from '../../plugins/operations/scrape/index.js';
import type { BulkAccepted, BulkJobStatus, BulkRequest, BulkResponse } from '../../plugins/operations/scrape/bulk.js';
import type { CrawlAccepted, CrawlRequest, CrawlStatus } from '../../plugins/operations/crawl/index.js';
import type { MapRequest, MapResponse } from '../../plugins/operations/crawl/map.js';
import type { ResearchAccepted, ResearchJobStatus, ResearchRequest, ResearchResponse } from '../../plugins/operations/research/request.js';
import type { UsageResponse } from '../../plugins/operations/usage.js';

/** Compiles only when a value of either type may be used as the other. */
const same = <A, B>(_: { readonly ab: (a: A) => B; readonly ba: (b: B) => A }) => true;
/** The server's answer as sent: the schema's type plus the request_id the HTTP layer adds. */
type Sent<S extends TSchema> = Omit<Static<S>, 'request_id'> & { request_id: string };
/** A request as a client may write it: Static gives every defaulted field as given. */
type Asked<S extends TSchema> = Static<S>;

// Answers: exactly the server's shapes.
export const search = same<C.SearchResponse, Sent<typeof SearchResponse>>({ ab: (a) => a, ba: (b) => b });
export const scrape = same<C.ScrapeResponse, Sent<typeof ScrapeResponse>>({ ab: (a) => a, ba: (b) => b });
export const bulk = same<C.BulkScrapeResponse, Sent<typeof BulkResponse>>({ ab: (a) => a, ba: (b) => b });
export const bulkAccepted = same<C.BulkScrapeAccepted, Sent<typeof BulkAccepted>>({ ab: (a) => a, ba: (b) => b });
export const bulkJob = same<C.BulkScrapeJob, Sent<typeof BulkJobStatus>>({ ab: (a) => a, ba: (b) => b });
export const crawlAccepted = same<C.CrawlAccepted, Sent<typeof CrawlAccepted>>({ ab: (a) => a, ba: (b) => b });
export const crawlJob = same<C.CrawlJob, Sent<typeof CrawlStatus>>({ ab: (a) => a, ba: (b) => b });
export const map = same<C.MapResponse, Sent<typeof MapResponse>>({ ab: (a) => a, ba: (b) => b });
export const research = same<C.ResearchResponse, Sent<typeof ResearchResponse>>({ ab: (a) => a, ba: (b) => b });
export const researchAccepted = same<C.ResearchAccepted, Sent<typeof ResearchAccepted>>({ ab: (a) => a, ba: (b) => b });
export const researchJob = same<C.ResearchJob, Sent<typeof ResearchJobStatus>>({ ab: (a) => a, ba: (b) => b });
export const usage = same<C.UsageResponse, Sent<typeof UsageResponse>>({ ab: (a) => a, ba: (b) => b });

// Requests: whatever the server's schema accepts, the client's type accepts, and back.
export const searchIn = same<C.SearchRequest, Asked<typeof SearchRequest>>({ ab: (a) => a, ba: (b) => b });
export const scrapeIn = same<C.ScrapeRequest, Asked<typeof ScrapeRequest>>({ ab: (a) => a, ba: (b) => b });
export const bulkIn = same<C.BulkScrapeRequest, Asked<typeof BulkRequest>>({ ab: (a) => a, ba: (b) => b });
export const crawlIn = same<C.CrawlRequest, Asked<typeof CrawlRequest>>({ ab: (a) => a, ba: (b) => b });
export const mapIn = same<C.MapRequest, Asked<typeof MapRequest>>({ ab: (a) => a, ba: (b) => b });
export const researchIn = same<C.ResearchRequest, Asked<typeof ResearchRequest>>({ ab: (a) => a, ba: (b) => b });

// The overloads: a callback_url (or async: true) makes research and bulk scrape asynchronous.
declare const client: Scour;
export const syncResearch: Promise<C.ResearchResponse> = client.research({ research_query: 'q' });
export const asyncResearch: Promise<C.ResearchAccepted> = client.research({ research_query: 'q', callback_url: 'http://127.0.0.1/hook' });
export const syncBulk: Promise<C.BulkScrapeResponse> = client.bulkScrape({ urls: ['http://127.0.0.1/'] });
export const asyncBulk: Promise<C.BulkScrapeAccepted> = client.bulkScrape({ urls: ['http://127.0.0.1/'], callback_url: 'http://127.0.0.1/hook' });
export const pollResearch: Promise<C.ResearchAccepted> = client.research({ research_query: 'q', async: true });
export const pollBulk: Promise<C.BulkScrapeAccepted> = client.bulkScrape({ urls: ['http://127.0.0.1/'], async: true });
export const syncBulkFalse: Promise<C.BulkScrapeResponse> = client.bulkScrape({ urls: ['http://127.0.0.1/'], async: false });

// Tools: each typed by its own schema.
export const uuid: Promise<C.UuidGeneratorToolResponse> = client.tools['uuid-generator']({ count: 2 });
export const uuidNoBody = client.tools['uuid-generator']();
// @ts-expect-error count is a number
export const uuidBad = client.tools['uuid-generator']({ count: 'two' });
// @ts-expect-error base64-encoder needs its input
export const base64NoInput = client.tools['base64-encoder']();
// @ts-expect-error no such field in a scrape request
export const scrapeBad = client.scrape({ url: 'http://127.0.0.1/', render_javascript: true });
