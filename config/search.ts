/**
 * Search, wired from settings: the local index (SQLite in the store's file,
 * or PostgreSQL with DATABASE_URL), the enabled providers (`local`,
 * `searxng` when SEARXNG_URL is set; plugins add their own), the search
 * operation that asks them, and the index's admin routes.
 */
import type { PluginBase } from '../core/plugin.js';
import type { SearchIndex } from '../core/search.js';
import { nodeEgress } from '../adapters/egress/port.js';
import { createSearchOperation } from '../plugins/operations/search/index.js';
import { createCrawlOperation } from '../plugins/operations/crawl/index.js';
import { egressPolicy } from './scrape.js';
import { createIndexAdminOperation } from '../plugins/operations/index-admin.js';
import { createLocalProvider } from '../plugins/search-providers/local/index.js';
import { createSearxngProvider } from '../plugins/search-providers/searxng/index.js';
import { enabledSearchProviders, type Settings } from './env.js';

export function searchPlugins(settings: Settings, index: SearchIndex): PluginBase[] {
  const plugins: PluginBase[] = [createLocalProvider({ index })];
  if (settings.searxngUrl !== undefined) plugins.push(createSearxngProvider({ baseUrl: settings.searxngUrl, egress: nodeEgress }));
  plugins.push(
    createSearchOperation({ providers: enabledSearchProviders(settings), providerTimeoutMs: settings.searchProviderTimeoutMs }),
    createIndexAdminOperation({ index }),
    createCrawlOperation({ egress: egressPolicy(settings.allowPrivateTargets), index }),
  );
  return plugins;
}
