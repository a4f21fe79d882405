/**
 * A crawl's frontier in memory, for a crawl that is not a job (`scour crawl
 * --local`: not resumed, not billed). Skips are counted by reason.
 */
import type { AddedItem, FrontierEntry } from '../../../core/jobs.js';
import type { CrawlBook, FrontierItem, PageEnd } from './engine.js';

export function memoryBook(start: string, limit: number): { book: CrawlBook; reasons: Map<string, number>; pending: () => number } {
  const items: { url: string; depth: number; status: string }[] = [{ url: start, depth: 0, status: 'pending' }];
  const byUrl = new Set<string>([start]);
  const reasons = new Map<string, number>();
  const skip = (reason: string) => reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  const add = (entries: readonly FrontierEntry[]): AddedItem[] => {
    const added: AddedItem[] = [];
    for (const e of entries) {
      if (items.length >= limit) break;
      if (byUrl.has(e.url)) continue;
      const idx = items.length;
      const status = e.skip === undefined ? 'pending' : 'skipped';
      items.push({ url: e.url, depth: e.depth, status });
      byUrl.add(e.url);
      if (e.skip !== undefined) skip(e.skip);
      added.push({ idx, url: e.url, depth: e.depth, status });
    }
    return added;
  };
  const initial: FrontierItem[] = [{ idx: 0, url: start, depth: 0, status: 'pending' }];
  const book: CrawlBook = {
    items: initial,
    frontierLimit: limit,
    async finish(end: PageEnd) {
      const item = items[end.idx]!;
      if (item.status !== 'pending') return { added: [], refused: false, available: undefined };
      item.status = end.outcome.kind === 'stored' ? 'completed' : end.outcome.kind;
      if (end.outcome.kind === 'skipped') skip(end.outcome.reason);
      return { added: add(end.discovered), refused: false, available: undefined };
    },
    extend: async (entries) => add(entries),
    stopRequested: async () => null,
  };
  return { book, reasons, pending: () => items.filter((i) => i.status === 'pending').length };
}
