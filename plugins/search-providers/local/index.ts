/**
 * The `local` search provider: Scour's own index (the SearchIndex port,
 * SQLite FTS5 embedded or PostgreSQL), searched over the shared collection
 * and the caller's own. The index applies every operator and filter itself,
 * before it cuts the list, so a request's max_results is met whenever
 * enough documents match.
 */
import {
  visibleCollections, type FilterName, type ProviderRequest, type ProviderResponse, type SearchIndex, type SearchProviderPlugin,
} from '../../../core/search.js';
import { defineSearchProvider } from '../../sdk/search.js';

const APPLIES_ALL: ReadonlySet<FilterName> = new Set<FilterName>(['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded']);

export function createLocalProvider(options: { readonly index: SearchIndex }): SearchProviderPlugin<'search-provider-local'> {
  return defineSearchProvider({
    name: 'search-provider-local',
    id: 'local',
    applies: APPLIES_ALL,
    description: "Scour's own index: the shared collection and the caller's own, ranked by BM25F.",
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      const { hits, total } = await options.index.search({
        query: request.query,
        collections: visibleCollections(request.accountId),
        filters: request.filters,
        limit: request.limit,
        now: request.now,
      });
      return {
        results: hits.map((h) => ({
          url: h.document.url,
          title: h.document.title,
          snippet: h.snippet,
          highlights: h.highlights,
          publishedAt: h.document.publishedAt,
          score: h.score,
          type: h.document.type,
          language: h.document.language,
          country: h.document.country,
          safe: h.document.safe,
        })),
        total,
        applied: APPLIES_ALL,
      };
    },
  });
}
