/**
 * Tavily-compatible endpoints (issue 30): POST /tavily/search and POST
 * /tavily/extract take Tavily's bodies and answer in Tavily's shapes, so a
 * tool that accepts "a Tavily API base URL" (LangChain's Tavily tools,
 * @tavily/core's apiBaseURL, ...) can point at `<scour>/tavily`. The key is
 * a Scour key, in `Authorization: Bearer` or the body's `api_key`.
 *
 * Each route is a translation around a native one (forward.ts): the native
 * route's own pipeline runs, so keys, rate limits (and their x-ratelimit-*
 * headers), the egress guard, credit holds and charges are exactly those of
 * POST /v1/search and POST /v1/scrape/bulk. Failures are answered in
 * Tavily's error shape (errors.ts, through Route.errorShape). docs/tavily.md
 * lists what is honoured, what is ignored and how credits map.
 */
import { defineOperation, schema } from '../../sdk/index.js';
import { tavilyError, TAVILY_ERROR_SCHEMA } from './errors.js';
import { tavilyExtractAnswer, TavilyExtractRequest, TavilyExtractResponse, translateExtract, type NativeBulkAnswer } from './extract.js';
import { forwardHandle, nativeRoute } from './forward.js';
import { tavilySearchAnswer, TavilySearchRequest, TavilySearchResponse, translateSearch, type NativeSearchAnswer } from './search.js';

/** Every failure of these routes in Tavily's shape (errors.ts). */
const errorShape = { of: tavilyError, schema: TAVILY_ERROR_SCHEMA };

export const tavilyOperation = defineOperation({
  name: 'operation-tavily',
  description: 'POST /tavily/search and POST /tavily/extract: Tavily-compatible bodies and answers over the native search and bulk scrape.',
  dependsOn: ['operation-search', 'operation-scrape-bulk'],
  routes(host) {
    const search = nativeRoute(host, 'POST', '/v1/search');
    const bulk = nativeRoute(host, 'POST', '/v1/scrape/bulk');
    return [
      {
        method: 'POST' as const,
        path: '/tavily/search',
        summary: 'Tavily-compatible search (POST /v1/search underneath): results, an extractive answer, raw content. docs/tavily.md.',
        tags: ['tavily'],
        auth: 'bearer' as const,
        request: schema(TavilySearchRequest),
        response: schema(TavilySearchResponse),
        failures: [400, 401, 403, 429, 432, 502, 503],
        errorShape,
        handle: forwardHandle(search, translateSearch, (v: NativeSearchAnswer, plan) => tavilySearchAnswer(v, plan)),
      },
      {
        method: 'POST' as const,
        path: '/tavily/extract',
        summary: 'Tavily-compatible extract (POST /v1/scrape/bulk underneath): each URL\'s main content as Markdown or text. docs/tavily.md.',
        tags: ['tavily'],
        auth: 'bearer' as const,
        headers: ['host'],
        request: schema(TavilyExtractRequest),
        response: schema(TavilyExtractResponse),
        failures: [400, 401, 403, 429, 432, 503],
        errorShape,
        handle: forwardHandle(bulk, translateExtract, (v: NativeBulkAnswer, plan) => tavilyExtractAnswer(v, plan)),
      },
    ];
  },
});
