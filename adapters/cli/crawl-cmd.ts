/**
 * `scour crawl --local URL`: the operator's way to fill the shared index. The same
 * crawl as POST /v1/crawl (Crawlee's queue and link enqueueing, the
 * scrape stages' fetcher behind the egress guard, politeness, robots.txt,
 * sitemaps, trap defences), run in this process straight into the
 * configured index (the SQLite file in SCOUR_DATA_DIR, or DATABASE_URL),
 * with no server, no job and no billing. A progress bar on a terminal, one
 * summary line at the end; Ctrl-C stops it, keeping what was stored.
 */
import { Effect, Exit } from 'effect';
import { checkTargetUrl } from '../../core/egress.js';
import type { AddedItem, FrontierEntry } from '../../core/jobs.js';
import type { AccountStore } from '../../core/ports.js';
import { SHARED_COLLECTION, type SearchIndex } from '../../core/search.js';
import type { Settings } from '../../config/env.js';
import type { CrawlBook, CrawlProgress, FrontierItem, PageEnd } from '../../plugins/operations/crawl/engine.js';
import { DEFAULT_CRAWL_DEPTH, DEFAULT_CRAWL_PAGES, frontierLimit, globProblem, MAX_CRAWL_DEPTH, MAX_CRAWL_PAGES } from '../../plugins/operations/crawl/limits.js';
import { canonicalUrl } from '../../plugins/operations/crawl/urls.js';
import { collectionProblem } from '../../core/index-documents.js';
import { CommandError, UsageError } from './accounts.js';

export const CRAWL_HELP = `Crawl a site into the local index in this process (no server needed; nothing is billed):
  scour crawl --local <URL> [--max-pages N] [--max-depth N] [--collection shared|<account_id>]
                    [--include /path/glob/**]... [--exclude /path/glob/**]... [--json]
                    default: --max-pages ${DEFAULT_CRAWL_PAGES} --max-depth ${DEFAULT_CRAWL_DEPTH} --collection shared; robots.txt,
                    Crawl-delay and sitemaps are obeyed; Ctrl-C stops and keeps what was stored
`;

export interface CrawlCommandDeps {
  readonly settings: Pick<Settings, 'allowPrivateTargets'>;
  readonly index: SearchIndex;
  readonly store: AccountStore;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether stderr is a terminal (progress bar). */
  readonly tty: boolean;
  /** Aborted by Ctrl-C. */
  readonly signal: AbortSignal;
}

interface CrawlArgs {
  readonly url: string;
  readonly maxPages: number;
  readonly maxDepth: number;
  readonly collection: string;
  readonly include: string[];
  readonly exclude: string[];
  readonly json: boolean;
}

function parse(argv: readonly string[]): CrawlArgs {
  const positional: string[] = [];
  const values = new Map<string, string>();
  const include: string[] = [];
  const exclude: string[] = [];
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq === -1 ? a.slice(2) : a.slice(2, eq);
    if (name === 'json' && eq === -1) {
      json = true;
      continue;
    }
    if (!['max-pages', 'max-depth', 'collection', 'include', 'exclude'].includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq === -1 ? argv[++i] : a.slice(eq + 1);
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
    if (name === 'include' || name === 'exclude') {
      const problem = globProblem(value);
      if (problem !== undefined) throw new UsageError(`--${name} ${JSON.stringify(value)} ${problem}`);
      (name === 'include' ? include : exclude).push(value);
      continue;
    }
    if (values.has(name)) throw new UsageError(`--${name} given twice`);
    values.set(name, value);
  }
  if (positional.length !== 1) throw new UsageError('scour crawl takes one URL');
  const int = (name: string, fallback: number, min: number, max: number) => {
    const v = values.get(name);
    if (v === undefined) return fallback;
    if (!/^\d{1,6}$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(v)})`);
    return Number(v);
  };
  const collection = values.get('collection') ?? SHARED_COLLECTION;
  const problem = collectionProblem(collection);
  if (problem !== undefined) throw new UsageError(`--collection ${problem}`);
  return {
    url: positional[0]!, maxPages: int('max-pages', DEFAULT_CRAWL_PAGES, 1, MAX_CRAWL_PAGES), maxDepth: int('max-depth', DEFAULT_CRAWL_DEPTH, 0, MAX_CRAWL_DEPTH),
    collection, include, exclude, json,
  };
}

/** The frontier in memory: the CLI's crawl is not a job (it is not resumed and not billed). Skips are counted by reason. */
function memoryBook(start: string, limit: number): { book: CrawlBook; reasons: Map<string, number>; pending: () => number } {
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

export async function crawlCommand(argv: readonly string[], d: CrawlCommandDeps): Promise<number> {
  const a = parse(argv);
  // The crawler (Crawlee), the fetcher and the extractors load once the command line is known to be good.
  const [{ egressPolicy, pageReaderFor }, { nodeEgress }, { PluginRegistry }, { builtinExtractors }, { createHttpFetcher }, { runCrawl, RunAborted }, { crawlFetchers }] = await Promise.all([
    import('../../config/scrape.js'), import('../egress/port.js'), import('../../core/registry.js'), import('../../plugins/extractors/index.js'),
    import('../../plugins/fetchers/http/index.js'), import('../../plugins/operations/crawl/engine.js'), import('../../plugins/operations/crawl/pages.js'),
  ]);
  const egress = egressPolicy(d.settings.allowPrivateTargets);
  const target = checkTargetUrl(a.url, egress);
  if (!target.ok) {
    // Not a URL, or one no setting lets through (a scheme, credentials): a usage error; an address is the server's setting.
    if (target.kind !== 'address') throw new UsageError(`the URL ${target.reason}`);
    throw new CommandError(`the URL is not allowed: ${target.reason} (SCOUR_ALLOW_PRIVATE_TARGETS lets private addresses through)`);
  }
  const start = canonicalUrl(a.url);
  if (start === undefined) throw new UsageError('the URL must be an absolute http or https URL without credentials');
  if (a.collection !== SHARED_COLLECTION) {
    const found = await Effect.runPromiseExit(d.store.getAccount(a.collection));
    if (Exit.isFailure(found)) throw new CommandError('the account store is unavailable');
    if (found.value === undefined) throw new CommandError(`no account ${a.collection}: use --collection shared or an account id`);
  }

  // The page pipeline over a registry of the plain fetcher (behind the egress guard) and the built-in extractors.
  const registry = new PluginRegistry();
  registry.registerAll([createHttpFetcher({ ...egress, egress: nodeEgress }), ...builtinExtractors]);
  for (const p of registry.seal()) await p.start?.();
  const { fetchPage, fetchText } = crawlFetchers(pageReaderFor(registry, egress, undefined, 0));

  const started = performance.now();
  let lastDraw = 0;
  let last: CrawlProgress = { stored: 0, failed: 0, skipped: 0, queued: 1 };
  const draw = (p: CrawlProgress, force = false) => {
    last = p;
    if (!d.tty || a.json) return;
    const now = performance.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const fraction = Math.min(1, p.stored / a.maxPages);
    const rate = p.stored / Math.max(0.001, (now - started) / 1000);
    d.err(`\r\x1b[K[${'#'.repeat(Math.round(fraction * 30)).padEnd(30, '.')}] ${p.stored}/${a.maxPages} pages, ${p.failed} failed, ${p.skipped} skipped, ${p.queued} queued, ${rate.toFixed(1)} pages/s`);
  };

  const { book, reasons, pending } = memoryBook(start, frontierLimit(a.maxPages));

  let interrupted = false;
  let outcome: Awaited<ReturnType<typeof runCrawl>> | undefined;
  try {
    outcome = await runCrawl({
      start, maxPages: a.maxPages, maxDepth: a.maxDepth, includePaths: a.include, excludePaths: a.exclude,
      sameDomain: true, respectRobots: true, useSitemaps: true, renderJs: false,
    }, {
      fetchPage, fetchText, book, signal: d.signal, pricePerPage: 0, onProgress: (p) => draw(p),
      index: {
        put: async (doc) => (await d.index.upsert(a.collection, [doc], Date.now())).indexed > 0,
        remove: async (url) => void (await d.index.remove(a.collection, [url], Date.now())),
      },
    });
  } catch (e) {
    if (!(e instanceof RunAborted)) throw new CommandError(`the crawl failed: ${e instanceof Error ? e.message : String(e)}`);
    interrupted = true;
  } finally {
    for (const p of [...registry.seal()].reverse()) await p.stop?.();
  }
  const p = outcome?.progress ?? last;
  const left = pending();
  if (outcome?.leftover !== undefined && left > 0) reasons.set(outcome.leftover, (reasons.get(outcome.leftover) ?? 0) + left);
  draw(p, true);
  if (d.tty && !a.json) d.err('\n');
  const seconds = outcome?.seconds ?? (performance.now() - started) / 1000;
  const skipped = [...reasons].filter(([, n]) => n > 0).sort((x, y) => y[1] - x[1]);
  if (a.json) {
    d.out(`${JSON.stringify({
      url: start, collection: a.collection, status: interrupted ? 'interrupted' : 'completed', stop_reason: outcome?.stopReason ?? null,
      pages_done: p.stored, pages_failed: p.failed, pages_skipped: p.skipped, pages_queued: interrupted ? p.queued : 0,
      skipped_reasons: Object.fromEntries(skipped), requests: outcome?.fetched ?? null, seconds: Math.round(seconds * 1000) / 1000,
    })}\n`);
  } else {
    const why = skipped.length === 0 ? '' : `: ${skipped.map(([r, n]) => `${r} ${n}`).join(', ')}`;
    d.out(`${interrupted ? 'interrupted: ' : ''}crawled ${p.stored} pages of ${start} into ${a.collection} (${p.failed} failed, ${p.skipped} skipped${why}) in ${seconds.toFixed(1)} s (${(p.stored / Math.max(seconds, 0.001)).toFixed(1)} pages/s)\n`);
  }
  return p.stored === 0 ? 1 : 0;
}
