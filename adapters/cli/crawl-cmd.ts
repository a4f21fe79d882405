/**
 * `scour crawl --local URL`: the operator's way to fill the shared index. The same
 * crawl as POST /v1/crawl (Crawlee's queue and link enqueueing, the
 * scrape stages' fetcher behind the egress guard, politeness, robots.txt,
 * sitemaps, trap defences), run in this process straight into the
 * configured index (the SQLite file in SCOUR_DATA_DIR, or DATABASE_URL),
 * with no server, no job and nothing charged. A progress bar on a terminal, one
 * summary line at the end; Ctrl-C stops it, keeping what was stored.
 */
import { Effect, Exit } from 'effect';
import { DEFAULT_CRAWL_DEPTH, DEFAULT_CRAWL_PAGES, globProblem, MAX_CRAWL_DEPTH, MAX_CRAWL_PAGES } from '../../core/crawl-limits.js';
import { canonicalUrl } from '../../core/crawl-urls.js';
import { checkTargetUrl, type EgressPolicy } from '../../core/egress.js';
import type { AccountStore } from '../../core/ports.js';
import { SHARED_COLLECTION, type IndexDocument, type SearchIndex } from '../../core/search.js';
import { collectionProblem } from '../../core/index-documents.js';
import { CommandError, UsageError } from './errors.js';
import { cliArgs } from './args.js';

export const CRAWL_HELP = `Crawl a site into the local index in this process (no server needed; nothing is billed):
  scour crawl --local <URL> [--max-pages N] [--max-depth N] [--collection shared|<account_id>]
                    [--include /path/glob/**]... [--exclude /path/glob/**]... [--json]
                    default: --max-pages ${DEFAULT_CRAWL_PAGES} --max-depth ${DEFAULT_CRAWL_DEPTH} --collection shared; robots.txt,
                    Crawl-delay and sitemaps are obeyed; Ctrl-C stops and keeps what was stored
`;

/** A crawl's counts as it goes. */
export interface CrawlCounts {
  readonly stored: number;
  readonly failed: number;
  readonly skipped: number;
  readonly queued: number;
}

export interface LocalCrawlSpec {
  /** Canonical start URL. */
  readonly start: string;
  readonly maxPages: number;
  readonly maxDepth: number;
  readonly includePaths: readonly string[];
  readonly excludePaths: readonly string[];
}

export interface LocalCrawlIo {
  /** Aborted by Ctrl-C: the crawl stops, keeping what was stored. */
  readonly signal: AbortSignal;
  readonly onProgress: (p: CrawlCounts) => void;
  /** Where stored pages go (put: true when the page was new to the collection). */
  readonly index: { put(doc: IndexDocument): Promise<boolean>; remove(url: string): Promise<void> };
}

/** How a local crawl ended; `skipped` counts skipped URLs by reason (pending ones left at the end under the stop's reason). */
export type LocalCrawlRun =
  | { readonly kind: 'done'; readonly skipped: ReadonlyMap<string, number>; readonly stopReason: string | undefined; readonly progress: CrawlCounts; readonly fetched: number; readonly seconds: number }
  | { readonly kind: 'interrupted'; readonly skipped: ReadonlyMap<string, number> }
  | { readonly kind: 'failed'; readonly skipped: ReadonlyMap<string, number>; readonly error: unknown };

/**
 * The crawl itself (Crawlee, the fetcher behind the egress guard, the
 * extractors), built by the composition root: the CLI only checks the
 * command line and the start URL, and prints.
 */
export interface LocalCrawler {
  /** The egress policy the crawl's fetches obey (the start URL is checked against it first). */
  readonly egress: EgressPolicy;
  /** Start the fetcher and extractors, crawl, stop them; rejects only when they cannot start. */
  run(spec: LocalCrawlSpec, io: LocalCrawlIo): Promise<LocalCrawlRun>;
}

export interface CrawlCommandDeps {
  /** Loads the crawler; called once the command line is known to be good. */
  readonly crawler: () => Promise<LocalCrawler>;
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
  const { positional, values, lists, flags } = cliArgs(argv, {
    values: ['max-pages', 'max-depth', 'collection'], lists: ['include', 'exclude'], flags: ['json'],
    check: (name, value) => {
      if (name !== 'include' && name !== 'exclude') return;
      const problem = globProblem(value);
      if (problem !== undefined) throw new UsageError(`--${name} ${JSON.stringify(value)} ${problem}`);
    },
  });
  const include = lists.get('include') ?? [];
  const exclude = lists.get('exclude') ?? [];
  const json = flags.has('json');
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

export async function crawlCommand(argv: readonly string[], d: CrawlCommandDeps): Promise<number> {
  const a = parse(argv);
  // The crawler (Crawlee), the fetcher and the extractors load once the command line is known to be good.
  const crawler = await d.crawler();
  const egress = crawler.egress;
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

  const started = performance.now();
  let lastDraw = 0;
  let last: CrawlCounts = { stored: 0, failed: 0, skipped: 0, queued: 1 };
  const draw = (p: CrawlCounts, force = false) => {
    last = p;
    if (!d.tty || a.json) return;
    const now = performance.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const fraction = Math.min(1, p.stored / a.maxPages);
    const rate = p.stored / Math.max(0.001, (now - started) / 1000);
    d.err(`\r\x1b[K[${'#'.repeat(Math.round(fraction * 30)).padEnd(30, '.')}] ${p.stored}/${a.maxPages} pages, ${p.failed} failed, ${p.skipped} skipped, ${p.queued} queued, ${rate.toFixed(1)} pages/s`);
  };

  const run = await crawler.run(
    { start, maxPages: a.maxPages, maxDepth: a.maxDepth, includePaths: a.include, excludePaths: a.exclude },
    {
      signal: d.signal, onProgress: (p) => draw(p),
      index: {
        put: async (doc) => (await d.index.upsert(a.collection, [doc], Date.now())).indexed > 0,
        remove: async (url) => void (await d.index.remove(a.collection, [url], Date.now())),
      },
    },
  );
  if (run.kind === 'failed') throw new CommandError(`the crawl failed: ${run.error instanceof Error ? run.error.message : String(run.error)}`);
  const interrupted = run.kind === 'interrupted';
  const outcome = run.kind === 'done' ? run : undefined;
  const reasons = run.skipped;
  const p = outcome?.progress ?? last;
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
