/**
 * The contract of search-provider plugins (core/search.ts), re-exported for
 * plugin authors, and `defineSearchProvider`: built-in providers and custom
 * ones use the same helper. A provider reaches the network only through the
 * Egress port it is handed (core/ports.ts).
 */
import type { SearchProviderPlugin } from '../../core/search.js';

export type {
  FilterName, ParsedQuery, ProviderRequest, ProviderResponse, ProviderResult, ProviderWarning, SearchFilters,
  SearchProviderPlugin,
} from '../../core/search.js';

export const defineSearchProvider = <const N extends string>(p: Omit<SearchProviderPlugin<N>, 'kind'>): SearchProviderPlugin<N> => ({
  ...p,
  kind: 'search-provider',
});

export { ProviderRateLimited } from '../../core/search.js';
export type { ProviderKind, ProviderPauses } from '../../core/search.js';
export * from './provider.js';
