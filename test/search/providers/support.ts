/** What the provider tests share: requests without filters, and catching a provider's failure. */
import { expect } from 'vitest';
import { parseQuery, type FilterName, type ProviderRequest, type SearchFilters } from '../../../core/search.js';
import { ProviderError } from '../../../plugins/sdk/provider.js';

export const NO_FILTERS: SearchFilters = {
  country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web',
};

export const EVERY_FILTER: FilterName[] = ['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded'];

/** What `p` rejects with (the test fails when it resolves). */
export async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

/** The ProviderError `p` rejects with. */
export async function providerError(p: Promise<unknown>): Promise<ProviderError> {
  const err = await failure(p);
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

export interface RequestOver {
  readonly limit?: number;
  readonly filters?: Partial<SearchFilters>;
  readonly signal?: AbortSignal;
}

/** A provider request for query `q` at time `now`: 10 results and no filters unless `over` says otherwise. */
export function providerRequest(q: string, over: RequestOver, now: number): ProviderRequest {
  const parsed = parseQuery(q);
  if (!parsed.ok) throw new Error(parsed.message);
  return {
    query: parsed.query, limit: over.limit ?? 10, filters: { ...NO_FILTERS, ...over.filters }, accountId: 'acct_test',
    signal: over.signal ?? new AbortController().signal, now,
  };
}
