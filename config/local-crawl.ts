/**
 * What `scour crawl --local` crawls with: the crawl engine (Crawlee) over the
 * page pipeline, on a registry of the plain HTTP fetcher (behind the egress
 * guard) and the built-in extractors, with the frontier in memory, no job
 * and no billing. The CLI (adapters/cli/crawl-cmd.ts) checks the command
 * line and prints; this is the wiring it is handed.
 */
import type { LocalCrawler, LocalCrawlRun } from '../adapters/cli/crawl-cmd.js';
import { nodeEgress } from '../adapters/egress/port.js';
import { frontierLimit } from '../core/crawl-limits.js';
import type { EgressPolicy } from '../core/egress.js';
import { PluginRegistry } from '../core/registry.js';
import { builtinExtractors } from '../plugins/extractors/index.js';
import { createHttpFetcher } from '../plugins/fetchers/http/index.js';
import { runCrawl, RunAborted } from '../plugins/operations/crawl/engine.js';
import { memoryBook } from '../plugins/operations/crawl/memory-book.js';
import { crawlFetchers } from '../plugins/operations/crawl/pages.js';
import type { Settings } from './env.js';
import { egressPolicy, pageReaderFor } from './scrape.js';

/**
 * The page fetchers a local crawl uses: the page pipeline over `registry`
 * (extraction in this thread, no proxies). The one place this file calls
 * into the page pipeline.
 */
function localPageFetchers(registry: PluginRegistry, egress: EgressPolicy) {
  return crawlFetchers(pageReaderFor(registry, egress, undefined, 0));
}

export function localCrawler(settings: Pick<Settings, 'allowPrivateTargets'>): LocalCrawler {
  const egress = egressPolicy(settings.allowPrivateTargets);
  return {
    egress,
    async run(spec, io): Promise<LocalCrawlRun> {
      const registry = new PluginRegistry();
      registry.registerAll([createHttpFetcher({ ...egress, egress: nodeEgress }), ...builtinExtractors]);
      for (const p of registry.seal()) await p.start?.();
      const { fetchPage, fetchText } = localPageFetchers(registry, egress);
      const { book, reasons, pending } = memoryBook(spec.start, frontierLimit(spec.maxPages));
      try {
        const outcome = await runCrawl({
          start: spec.start, maxPages: spec.maxPages, maxDepth: spec.maxDepth, includePaths: spec.includePaths, excludePaths: spec.excludePaths,
          sameDomain: true, respectRobots: true, useSitemaps: true, renderJs: false, includeDocuments: false,
        }, { fetchPage, fetchText, book, signal: io.signal, pricePerPage: 0, onProgress: io.onProgress, index: io.index });
        const left = pending();
        if (outcome.leftover !== undefined && left > 0) reasons.set(outcome.leftover, (reasons.get(outcome.leftover) ?? 0) + left);
        return { kind: 'done', skipped: reasons, stopReason: outcome.stopReason, progress: outcome.progress, fetched: outcome.fetched, seconds: outcome.seconds };
      } catch (e) {
        return e instanceof RunAborted ? { kind: 'interrupted', skipped: reasons } : { kind: 'failed', skipped: reasons, error: e };
      } finally {
        for (const p of [...registry.seal()].reverse()) await p.stop?.();
      }
    },
  };
}
