/**
 * The scrape plugins, built from settings: the plain HTTP fetcher and the
 * browser fetcher (both behind the egress guard), the configured proxy
 * provider, the built-in extractors, and the scrape operations with their
 * screenshot store; and the page pipeline built over whatever fetchers,
 * proxy providers and extractors are registered (`host.pages`).
 */
import { createDocumentReader } from '../adapters/documents/index.js';
import { nodeEgress } from '../adapters/egress/port.js';
import type { ExtractionPort } from '../core/extraction.js';
import type { PageReader } from '../core/page.js';
import type { PluginBase, PluginLookup } from '../core/plugin.js';
import type { BlobStore } from '../core/ports.js';
import type { SearchIndex } from '../core/search.js';
import { builtinExtractors } from '../plugins/extractors/index.js';
import { createBrowserFetcher } from '../plugins/fetchers/browser/index.js';
import { parseBrowserEndpoints } from '../plugins/fetchers/browser/remote.js';
import { createHttpFetcher } from '../plugins/fetchers/http/index.js';
import { createScrapeOperation, type ScrapeOptions } from '../plugins/operations/scrape/index.js';
import { createBulkScrapeOperation } from '../plugins/operations/scrape/bulk.js';
import { createPagePipeline } from '../plugins/operations/scrape/page.js';
import { createConfiguredProxyProvider, parseProxyConfig } from '../plugins/proxies/configured.js';
import type { Settings } from './env.js';
import { AjvCallerSchemas } from '../adapters/validation/caller-schema.js';
import { createJsonExtractor } from '../plugins/json-extractor/index.js';
import { classifyAddress, type EgressPolicy } from '../core/egress.js';
import type { PageCache } from '../core/page-cache.js';
import type { PageHistory } from '../core/page-changes.js';
import { BlobPageCache } from '../adapters/page-cache/blob.js';
import { unifiedDiff } from '../adapters/text-diff/jsdiff.js';

/** The egress policy a setting means: 'loopback' admits 127.0.0.0/8 and ::1 and nothing else private. */
export function egressPolicy(setting: Settings['allowPrivateTargets']): EgressPolicy {
  if (setting === 'loopback') return { allowPrivate: false, allowAddress: (ip) => classifyAddress(ip) === 'loopback' };
  return { allowPrivate: setting };
}

/** Attempts through other proxies after a proxy fails (so up to three proxies per scrape). */
const PROXY_RETRIES = 2;

/** What the scrape operations are built with. */
export function scrapeOptionsFor(settings: Settings, blobs: BlobStore, index?: SearchIndex, pageHistory?: PageHistory): ScrapeOptions {
  const callerSchemas = new AjvCallerSchemas();
  return {
    // track_changes: the account store's page history, and jsdiff's unified diffs.
    pageHistory,
    diff: unifiedDiff,
    blobs,
    egress: egressPolicy(settings.allowPrivateTargets),
    screenshotTtlMs: settings.screenshotTtlSeconds * 1000,
    publicUrl: settings.publicUrl,
    index: settings.indexScrapes ? index : undefined,
    callerSchemas,
    // extract_json's model: research's (LLM_*), when one is configured.
    jsonExtractor: settings.llm === undefined ? undefined : createJsonExtractor({ ...settings.llm, schemas: callerSchemas }),
  };
}

/**
 * The page pipeline over the registered fetchers, proxy providers and
 * extractors (the server's `host.pages`; the CLI's crawl builds one over
 * its own registry).
 */
export function pageReaderFor(
  registry: PluginLookup, egress: EgressPolicy, extraction?: ExtractionPort, proxyRetries = PROXY_RETRIES, cache?: PageCache,
): PageReader {
  return createPagePipeline({ registry, egress, extraction, proxyRetries, documents: createDocumentReader(), cache });
}

/** The scrape cache (max_age) the settings describe: in the data directory, shared by every process using it; undefined when off. */
export function pageCacheFor(settings: Pick<Settings, 'dataDir' | 'cacheMaxBytes' | 'cacheTtlSeconds'>): BlobPageCache | undefined {
  if (settings.cacheMaxBytes === 0) return undefined;
  return new BlobPageCache({ dataDir: settings.dataDir, maxBytes: settings.cacheMaxBytes, ttlMs: settings.cacheTtlSeconds * 1000 });
}

export function scrapePlugins(settings: Settings, blobs: BlobStore, index?: SearchIndex, pageHistory?: PageHistory): PluginBase[] {
  const proxies = parseProxyConfig(settings.proxies ?? '');
  const egress = egressPolicy(settings.allowPrivateTargets);
  const scrapeOptions = scrapeOptionsFor(settings, blobs, index, pageHistory);
  return [
    // The fetchers reach the network through the Egress port; this is where they get the guard's implementation.
    createHttpFetcher({ ...egress, egress: nodeEgress }),
    createBrowserFetcher({
      executablePath: settings.chromiumPath, maxPages: settings.browserPages, ...egress, egress: nodeEgress,
      remoteEndpoints: parseBrowserEndpoints(settings.browserEndpoints.join(',')).endpoints,
      proxyListen: { host: settings.browserProxyHost, advertisedHost: settings.browserProxyAdvertisedHost, ports: settings.browserProxyPorts },
    }),
    createConfiguredProxyProvider(proxies),
    ...builtinExtractors,
    createScrapeOperation(scrapeOptions),
    createBulkScrapeOperation(scrapeOptions),
  ] as PluginBase[];
}
