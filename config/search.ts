/**
 * Search, wired from settings: the local index (SQLite in the store's file,
 * or PostgreSQL with DATABASE_URL), the enabled providers (`local`,
 * `searxng` when SEARXNG_URL is set, the built-in providers of
 * config/providers.ts that are enabled; plugins add their own), the search
 * operation that asks them (with the pause book shared by research), and
 * the index's admin routes.
 */
import type { PluginBase } from '../core/plugin.js';
import { parseQuery, type SearchIndex, type SearchProviderPlugin } from '../core/search.js';
import type { ProviderProbe } from '../adapters/cli/doctor.js';
import type { PauseBook } from '../core/search-merge.js';
import type { Egress } from '../core/ports.js';
import { nodeEgress } from '../adapters/egress/port.js';
import type { ProviderOptions } from '../plugins/sdk/provider.js';
import { createSearchOperation } from '../plugins/operations/search/index.js';
import { createCrawlOperation } from '../plugins/operations/crawl/index.js';
import { createMapOperation } from '../plugins/operations/crawl/map.js';
import { egressPolicy } from './scrape.js';
import { createIndexAdminOperation } from '../plugins/operations/index-admin.js';
import { createLocalProvider } from '../plugins/search-providers/local/index.js';
import { createSearxngProvider } from '../plugins/search-providers/searxng/index.js';
import { createWikipediaProvider } from '../plugins/search-providers/wikipedia/index.js';
import { createOpenalexProvider } from '../plugins/search-providers/openalex/index.js';
import { createArxivProvider } from '../plugins/search-providers/arxiv/index.js';
import { createCrossrefProvider } from '../plugins/search-providers/crossref/index.js';
import { createHackernewsProvider } from '../plugins/search-providers/hackernews/index.js';
import { createStackexchangeProvider } from '../plugins/search-providers/stackexchange/index.js';
import { createBraveProvider } from '../plugins/search-providers/brave/index.js';
import { createGoogleProvider } from '../plugins/search-providers/google/index.js';
import { createElasticsearchProvider } from '../plugins/search-providers/elasticsearch/index.js';
import { enabledSearchProviders, type Settings } from './env.js';

type Own = Readonly<Record<string, string>>;
const list = (v: string | undefined) => v?.split(',').map((x) => x.trim()).filter((x) => x !== '');

/** Each built-in provider's plugin from its settings (SCOUR_PROVIDER_<ID>_*). */
const FACTORIES: Readonly<Record<string, (base: ProviderOptions, own: Own) => SearchProviderPlugin>> = {
  wikipedia: (b) => createWikipediaProvider(b),
  openalex: (b) => createOpenalexProvider(b),
  arxiv: (b) => createArxivProvider(b),
  crossref: (b) => createCrossrefProvider(b),
  hackernews: (b) => createHackernewsProvider(b),
  stackexchange: (b, own) => createStackexchangeProvider({ ...b, ...(own.SITE === undefined ? {} : { site: own.SITE }) }),
  brave: (b) => createBraveProvider(b),
  google: (b, own) => createGoogleProvider({ ...b, cx: own.CX ?? '' }),
  elasticsearch: (b, own) => createElasticsearchProvider({
    ...b,
    index: own.INDEX ?? '',
    ...(list(own.FIELDS) === undefined ? {} : { fields: list(own.FIELDS) }),
    ...(own.DATE_FIELD === undefined ? {} : { dateField: own.DATE_FIELD }),
    ...(own.LANGUAGE_FIELD === undefined ? {} : { languageField: own.LANGUAGE_FIELD }),
    ...(own.URL_FIELD === undefined ? {} : { urlField: own.URL_FIELD }),
    ...(own.TITLE_FIELD === undefined ? {} : { titleField: own.TITLE_FIELD }),
  }),
};

/**
 * The built-in providers this configuration enables (the others are not
 * built: a keyed one without its key would fail at boot). Every one reaches
 * its service through `egress`, bounded by the provider timeout.
 */
export function builtinProviders(settings: Settings, egress: Egress = nodeEgress): SearchProviderPlugin[] {
  const enabled = new Set(enabledSearchProviders(settings));
  const out: SearchProviderPlugin[] = [];
  for (const [id, make] of Object.entries(FACTORIES)) {
    if (!enabled.has(id)) continue;
    const own = settings.providerSettings[id] ?? {};
    out.push(make({ egress, baseUrl: own.URL, key: own.KEY, contactEmail: settings.contactEmail, timeoutMs: settings.searchProviderTimeoutMs }, own));
  }
  return out;
}

/** The enabled providers as `scour doctor` checks them: one small query each (the local index is listed, not queried). */
export function providerProbes(settings: Settings): ProviderProbe[] {
  const built = new Map<string, SearchProviderPlugin>(builtinProviders(settings).map((p) => [p.id, p]));
  if (settings.searxngUrl !== undefined) built.set('searxng', createSearxngProvider({ baseUrl: settings.searxngUrl, egress: nodeEgress }));
  const parsed = parseQuery('science');
  if (!parsed.ok) throw new Error(parsed.message);
  return enabledSearchProviders(settings).map((id): ProviderProbe => {
    const p = built.get(id);
    if (p === undefined) {
      return { id, endpoint: undefined, note: id === 'local' ? 'the local index, on this machine' : 'a plugin\'s provider (SCOUR_PLUGINS): not checked', probe: () => Promise.resolve(0) };
    }
    return {
      id,
      endpoint: p.endpoint ?? settings.searxngUrl ?? id,
      async probe(timeoutMs) {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
        try {
          const r = await p.search({
            query: parsed.query, limit: 1, accountId: 'doctor', signal: controller.signal, now: Date.now(),
            filters: { country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'moderate', resultType: 'web' },
          });
          return r.results.length;
        } finally {
          clearTimeout(timer);
        }
      },
    };
  });
}

export function searchPlugins(settings: Settings, index: SearchIndex, pauses?: PauseBook): PluginBase[] {
  const plugins: PluginBase[] = [createLocalProvider({ index })];
  if (settings.searxngUrl !== undefined) plugins.push(createSearxngProvider({ baseUrl: settings.searxngUrl, egress: nodeEgress }));
  plugins.push(
    ...builtinProviders(settings),
    createSearchOperation({ providers: enabledSearchProviders(settings), providerTimeoutMs: settings.searchProviderTimeoutMs, ...(pauses === undefined ? {} : { pauses }) }),
    createIndexAdminOperation({ index }),
    createCrawlOperation({ egress: egressPolicy(settings.allowPrivateTargets), index }),
    createMapOperation({ egress: egressPolicy(settings.allowPrivateTargets) }),
  );
  return plugins;
}
