/**
 * The scrape plugins, built from settings: the plain HTTP fetcher and the
 * browser fetcher (both behind the egress guard), the configured proxy
 * provider, the built-in extractors, and the scrape operation with its
 * screenshot store.
 */
import type { PluginBase } from '../core/plugin.js';
import type { BlobStore } from '../core/ports.js';
import { builtinExtractors } from '../plugins/extractors/index.js';
import { createBrowserFetcher } from '../plugins/fetchers/browser/index.js';
import { createHttpFetcher } from '../plugins/fetchers/http/index.js';
import { createScrapeOperation } from '../plugins/operations/scrape.js';
import { createConfiguredProxyProvider, parseProxyConfig } from '../plugins/proxies/configured.js';
import type { Settings } from './env.js';

/** Attempts through other proxies after a proxy fails (so up to three proxies per scrape). */
const PROXY_RETRIES = 2;

export function scrapePlugins(settings: Settings, blobs: BlobStore): PluginBase[] {
  const proxies = parseProxyConfig(settings.proxies ?? '');
  return [
    createHttpFetcher({ allowPrivate: settings.allowPrivateTargets }),
    createBrowserFetcher({ executablePath: settings.chromiumPath, maxPages: settings.browserPages, allowPrivate: settings.allowPrivateTargets }),
    createConfiguredProxyProvider(proxies),
    ...builtinExtractors,
    createScrapeOperation({
      blobs,
      allowPrivate: settings.allowPrivateTargets,
      screenshotTtlMs: settings.screenshotTtlSeconds * 1000,
      publicUrl: settings.publicUrl,
      proxyRetries: PROXY_RETRIES,
    }),
  ] as PluginBase[];
}
