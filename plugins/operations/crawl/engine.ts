/**
 * One run of a crawl, on Crawlee: its RequestQueue holds the URLs to visit
 * (in memory, rebuilt from the stored frontier when a crawl resumes), its
 * BasicCrawler runs the request handler at a fixed concurrency with retries
 * of network failures, and its enqueueLinks decides which links a page adds
 * (the enqueue strategy for same_domain, globs for include/exclude paths,
 * robots.txt), reporting each refused link with a reason. Crawlee never
 * opens a connection itself: every request (pages, robots.txt, sitemaps)
 * goes through the fetchers the caller passes, which are Scour's, behind
 * the egress guard.
 *
 * Around Crawlee: per-host politeness (politeness.ts), canonical URLs and
 * trap defences (urls.ts), sitemaps (sitemaps.ts), and the book where the
 * frontier is kept and each stored page billed (a job's store for the API,
 * memory for the CLI): a page and the links found on it are written in one
 * call, so a run that dies resumes from the book without losing or
 * repeating anything.
 */
import { randomUUID } from 'node:crypto';
import { BasicCrawler } from '@crawlee/http';
import { Configuration, enqueueLinks, EnqueueStrategy, Log, LogLevel, RequestQueue, type EnqueueLinksOptions, type RequestOptions } from '@crawlee/core';
import type { AddedItem, FrontierEntry, ItemStatus } from '../../../core/jobs.js';
import type { IndexDocument } from '../../../core/search.js';
import { HostGate, RobotsCache, type FetchText, type HostRules } from './politeness.js';
import { sitemapHostAllowed, sitemapPages, sitemapRoots } from './sitemaps.js';
import type { DocumentKind } from '../../../core/documents.js';
import { canonicalUrl, DEFAULT_TRAP_LIMITS, looksLikeDocument, looksLikeFile, MAX_URL_LENGTH, TrapGuard, type TrapLimits } from '../../../core/crawl-urls.js';

export interface CrawlSpec {
  /** Canonical start URL. */
  readonly start: string;
  readonly maxPages: number;
  readonly maxDepth: number;
  /** Path globs (`/blog/**`): a link must match one of them (when any are given)... */
  readonly includePaths: readonly string[];
  /** ...and none of these. */
  readonly excludePaths: readonly string[];
  readonly sameDomain: boolean;
  readonly respectRobots: boolean;
  readonly useSitemaps: boolean;
  readonly renderJs: boolean;
  /** Follow links to documents (.pdf, .docx, or a response the page pipeline reads as one) and store them (include_documents). */
  readonly includeDocuments: boolean;
}

/** What a document says of itself (the page pipeline's `document` field), as a crawl stores it. */
export interface CrawledDocument {
  readonly type: DocumentKind;
  readonly title: string | null;
  readonly author: string | null;
  /** ISO 8601, when the document says. */
  readonly created: string | null;
  readonly language: string | null;
}

/** A fetched page, as the crawl reads it (the scrape stages' fetch, judge and extract). */
export interface CrawledPage {
  readonly statusCode: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly finalUrl: string;
  readonly title: string | null;
  /** Main content when it is long enough, else the whole text. */
  readonly text: string;
  readonly language: string | null;
  readonly links: readonly { readonly url: string; readonly rel: string | null }[];
  /** The page's meta robots directives (robots and scourbot), lower case, comma-separated. */
  readonly metaRobots: string;
  /** The response is a document (by its type, then its first bytes): which kind, whether it was read or not. */
  readonly documentKind?: DocumentKind | undefined;
  /** The document read (PDF, DOCX; only when documents were asked for). */
  readonly document?: CrawledDocument | undefined;
}

/**
 * One page, without following redirects. Rejects with the core's target
 * errors ({ code, message, fields() }); with `documents`, a PDF or DOCX is
 * read too (an encrypted or broken one rejects with DOCUMENT_ENCRYPTED or
 * DOCUMENT_UNREADABLE).
 */
export type FetchPage = (url: string, o: { readonly renderJs: boolean; readonly documents?: boolean; readonly signal: AbortSignal }) => Promise<CrawledPage>;

export interface FrontierItem {
  readonly idx: number;
  readonly url: string;
  readonly depth: number;
  readonly status: ItemStatus;
}

export type PageOutcome =
  | { readonly kind: 'stored'; readonly result: Record<string, unknown> }
  | { readonly kind: 'failed'; readonly attempts: number; readonly error: Record<string, unknown> }
  | { readonly kind: 'skipped'; readonly reason: string };

export interface PageEnd {
  readonly idx: number;
  readonly outcome: PageOutcome;
  readonly discovered: readonly FrontierEntry[];
}

export interface PageEndResult {
  /** New frontier entries, with their idx. */
  readonly added: readonly AddedItem[];
  /** A stored page the balance could not pay for (the book skipped it as no_credits). */
  readonly refused: boolean;
  /** Credits the account has left after this page, when it is billed. */
  readonly available: number | undefined;
}

/** Where a crawl keeps its frontier and bills its pages. Rejections stop the run (it is resumed later). */
export interface CrawlBook {
  /** Items as stored when this run starts (a resumed crawl has done some). */
  readonly items: readonly FrontierItem[];
  /** Most frontier items in all. */
  readonly frontierLimit: number;
  finish(end: PageEnd): Promise<PageEndResult>;
  extend(entries: readonly FrontierEntry[]): Promise<readonly AddedItem[]>;
  /** A stop asked for since (cancel), or null. */
  stopRequested(): Promise<string | null>;
}

/** Where stored pages go: the local index, in one collection. */
export interface CrawlIndex {
  /** True when the page was new to the collection. */
  put(doc: IndexDocument): Promise<boolean>;
  remove(url: string): Promise<void>;
}

export interface CrawlProgress {
  readonly stored: number;
  readonly failed: number;
  readonly skipped: number;
  readonly queued: number;
}

export interface CrawlDeps {
  readonly fetchPage: FetchPage;
  readonly fetchText: FetchText;
  readonly index: CrawlIndex;
  readonly book: CrawlBook;
  /** Aborts the run (shutdown, a lost lease): nothing more is written. */
  readonly signal: AbortSignal;
  /** Credits a stored page costs (0: not billed); below it the crawl stops with no_credits. */
  readonly pricePerPage: number;
  readonly onProgress?: (p: CrawlProgress) => void;
  readonly now?: () => number;
  /** Pages in flight to one host (default 2). */
  readonly perHost?: number;
  /** Pages in flight in all (default 4). */
  readonly concurrency?: number;
  /** How often to look for a cancel (default 500 ms). */
  readonly stopPollMs?: number;
  readonly traps?: TrapLimits;
}

/** How a run ended: the job's end (see core/jobs.ts JobEnd) and what it did. */
export interface CrawlOutcome {
  readonly stopReason?: 'no_credits' | 'cancelled' | 'max_pages';
  /** Pending items left are skipped with this reason. */
  readonly leftover?: string;
  readonly progress: CrawlProgress;
  /** Pages this run fetched (redirects, failures and skips included). */
  readonly fetched: number;
  readonly seconds: number;
}

/** Failures worth another attempt (Crawlee retries the request). */
const RETRYABLE = new Set(['TARGET_UNREACHABLE', 'TARGET_TIMEOUT', 'SERVICE_UNAVAILABLE', 'TARGET_BUSY']);
const MAX_RETRIES = 2;
const HTML = /^(text\/html|application\/xhtml\+xml)/i;
/** Document failures: the document is skipped with this reason (never retried). */
const DOCUMENT_SKIPS: Readonly<Record<string, string>> = { DOCUMENT_ENCRYPTED: 'document_encrypted', DOCUMENT_UNREADABLE: 'document_unreadable' };
const FEED_KINDS: ReadonlySet<DocumentKind> = new Set(['rss', 'atom', 'json_feed']);

class RunAborted extends Error {
  constructor() {
    super('crawl run aborted');
  }
}

/** The book or the index failed (the store is away): the run stops and the job is resumed later. */
class BookFailure extends Error {
  constructor(readonly failure: unknown) {
    super('the crawl could not write its progress');
  }
}

const booked = async <A>(p: () => Promise<A>): Promise<A> => {
  try {
    return await p();
  } catch (e) {
    throw e instanceof RunAborted ? e : new BookFailure(e);
  }
};

/** A failure the site answered with (429, 503): retried after a pause. */
class TargetBusy extends Error {
  readonly code = 'TARGET_BUSY';
  constructor(readonly statusCode: number) {
    super(`The site answered ${statusCode}`);
  }
}

interface Failure {
  readonly code: string;
  readonly message: string;
  fields?(): Record<string, unknown>;
}

const asFailure = (e: unknown): Failure =>
  typeof e === 'object' && e !== null && typeof (e as Failure).code === 'string' && typeof (e as Failure).message === 'string'
    ? (e as Failure)
    : { code: 'INTERNAL_ERROR', message: 'Internal error while crawling this page' };

const errorOf = (f: Failure): Record<string, unknown> => ({ code: f.code, error: f.message, ...(typeof f.fields === 'function' ? f.fields() : {}) });

/** Path globs as URL globs for enqueueLinks (any scheme, any host: the site is decided by the strategy). */
const urlGlob = (path: string) => `http{s,}://*${path}`;

/** Seconds a Retry-After asks for (bounded), or a default. */
function retryAfterMs(h: Readonly<Record<string, string>>): number {
  const v = h['retry-after'];
  const n = v === undefined ? NaN : Number(v);
  if (Number.isFinite(n) && n >= 0) return Math.min(60_000, n * 1000);
  const t = v === undefined ? NaN : Date.parse(v);
  return Number.isFinite(t) ? Math.min(60_000, Math.max(0, t - Date.now())) : 5_000;
}

/** Limits pages in flight so that stored + in flight never exceeds max_pages. */
class PageBudget {
  private inFlight = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly max: number, private readonly stored: () => number) {}

  /** False when max_pages is reached (or the crawl is stopping). */
  async acquire(stopping: () => boolean): Promise<boolean> {
    for (;;) {
      if (stopping() || this.stored() >= this.max) return false;
      if (this.stored() + this.inFlight < this.max) {
        this.inFlight++;
        return true;
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  release(): void {
    this.inFlight--;
    this.wakeAll();
  }

  wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

export async function runCrawl(spec: CrawlSpec, deps: CrawlDeps): Promise<CrawlOutcome> {
  const started = performance.now();
  const now = deps.now ?? Date.now;
  const { book, signal } = deps;
  if (signal.aborted) throw new RunAborted();

  const known = new Set<string>(book.items.map((i) => i.url));
  // One URL shape may take at most half the crawl (at least 500 URLs): a generated space cannot eat it all.
  const traps = new TrapGuard(deps.traps ?? { ...DEFAULT_TRAP_LIMITS, perPattern: Math.max(DEFAULT_TRAP_LIMITS.perPattern, Math.ceil(spec.maxPages / 2)) }, now);
  for (const i of book.items) if (i.status !== 'skipped') traps.admit(i.url);
  const progress = { stored: 0, failed: 0, skipped: 0, queued: 0 };
  for (const i of book.items) {
    if (i.status === 'completed') progress.stored++;
    else if (i.status === 'failed') progress.failed++;
    else if (i.status === 'skipped') progress.skipped++;
    else progress.queued++;
  }
  const report = () => deps.onProgress?.({ ...progress });
  let fetched = 0;

  const gate = new HostGate(deps.perHost ?? 2, now);
  const robots = new RobotsCache(deps.fetchText, gate, signal);
  const startUrl = new URL(spec.start);
  const strategy = spec.sameDomain ? EnqueueStrategy.SameDomain : EnqueueStrategy.All;
  const sink = (into: RequestOptions[]) => ({
    addRequestsBatched: async (requests: RequestOptions[]) => {
      into.push(...requests);
      return { addedRequests: [], waitForAllRequestsToBeAdded: Promise.resolve([]) };
    },
  }) as unknown as Parameters<typeof enqueueLinks>[0]['requestQueue'];

  /** Split canonical URLs by Crawlee's enqueue strategy relative to the start URL. */
  const bySite = async (urls: readonly string[]): Promise<{ inside: string[]; outside: string[] }> => {
    if (!spec.sameDomain || urls.length === 0) return { inside: [...urls], outside: [] };
    const passed: RequestOptions[] = [];
    await enqueueLinks({ urls: [...urls], baseUrl: spec.start, strategy, requestQueue: sink(passed) });
    // What the strategy let through is inside; the rest is not (enqueueLinks does not report strategy drops).
    const inside = new Set(passed.map((r) => r.url));
    return { inside: urls.filter((u) => inside.has(u)), outside: urls.filter((u) => !inside.has(u)) };
  };

  /**
   * The frontier entries for links found at `depth`: canonical, new to the
   * crawl, each either to visit or skipped with its reason. The site
   * (same_domain), robots.txt, include/exclude paths are Crawlee's
   * enqueueLinks; depth, files and traps are checked here.
   */
  const discover = async (raw: readonly string[], depth: number): Promise<FrontierEntry[]> => {
    const entries: FrontierEntry[] = [];
    const taken = new Set<string>();
    const record = (url: string, skip?: string) => {
      if (taken.has(url) || known.has(url)) return;
      taken.add(url);
      entries.push(skip === undefined ? { url, depth } : { url, depth, skip });
    };
    const fresh: string[] = [];
    const freshSet = new Set<string>();
    for (const r of raw) {
      const c = canonicalUrl(r);
      if (c === undefined || c.length > MAX_URL_LENGTH || known.has(c) || freshSet.has(c)) continue;
      freshSet.add(c);
      fresh.push(c);
    }
    if (fresh.length === 0) return entries;
    const { inside, outside } = await bySite(fresh);
    for (const u of outside) record(u, 'off_domain');
    const passed: RequestOptions[] = [];
    await enqueueLinks({
      urls: inside,
      requestQueue: sink(passed),
      strategy: EnqueueStrategy.All,
      ...(spec.includePaths.length > 0 ? { globs: spec.includePaths.map(urlGlob) } : {}),
      ...(spec.excludePaths.length > 0 ? { exclude: spec.excludePaths.map(urlGlob) } : {}),
      ...(spec.respectRobots
        ? { robotsTxtFile: { isAllowed: (url: string) => robots.cached(url)?.allowed(url) ?? true } as unknown as EnqueueLinksOptions['robotsTxtFile'] }
        : {}),
      transformRequestFunction: (req) => {
        if (depth > spec.maxDepth) return (record(req.url, 'max_depth'), false);
        if (looksLikeFile(req.url) && !(spec.includeDocuments && looksLikeDocument(req.url))) return (record(req.url, 'not_html'), false);
        return { ...req, uniqueKey: req.url };
      },
      onSkippedRequest: async ({ url, reason }) => record(url, reason === 'robotsTxt' ? 'robots' : 'excluded'),
    });
    for (const r of passed) {
      const trap = traps.check(r.url);
      if (trap !== undefined) record(r.url, trap);
      else if (!taken.has(r.url) && !known.has(r.url)) {
        traps.admit(r.url);
        record(r.url);
      }
    }
    return entries;
  };

  const config = new Configuration({ persistStorage: false, purgeOnStart: false });
  const queue = await RequestQueue.open(`crawl-${randomUUID()}`, { config });
  const enqueue = async (added: readonly AddedItem[]) => {
    const requests = added.filter((a) => a.status === 'pending').map((a) => ({ url: a.url, uniqueKey: a.url, userData: { idx: a.idx, depth: a.depth } }));
    if (requests.length > 0) await queue.addRequests(requests);
  };
  /** Record entries the book took (or already had): they are known from now on. */
  const took = (entries: readonly FrontierEntry[], added: readonly AddedItem[]) => {
    for (const e of entries) known.add(e.url);
    for (const a of added) {
      if (a.status === 'pending') progress.queued++;
      else progress.skipped++;
    }
  };

  let stopWhy: 'max_pages' | 'no_credits' | 'cancelled' | undefined;
  let broken: unknown;
  let crawler: BasicCrawler | undefined;
  const budget = new PageBudget(spec.maxPages, () => progress.stored);
  const stopping = () => stopWhy !== undefined || broken !== undefined || signal.aborted;
  const stop = (why: 'max_pages' | 'no_credits' | 'cancelled') => {
    stopWhy ??= why;
    crawler?.stop(`crawl stopping: ${why}`);
    budget.wakeAll();
  };
  const fail = (e: unknown) => {
    broken ??= e;
    crawler?.stop('crawl stopping: its book failed');
    budget.wakeAll();
  };
  const onAbort = () => {
    budget.wakeAll();
    void crawler?.autoscaledPool?.abort();
  };
  signal.addEventListener('abort', onAbort, { once: true });

  /** Write a page's end (and its links) to the book; enqueue what was new. */
  const finish = async (idx: number, outcome: PageOutcome, discovered: readonly FrontierEntry[]): Promise<PageEndResult> => {
    if (signal.aborted) throw new RunAborted();
    const r = await booked(() => book.finish({ idx, outcome, discovered }));
    took(discovered, r.added);
    progress.queued--;
    if (r.refused) progress.skipped++;
    else if (outcome.kind === 'stored') progress.stored++;
    else if (outcome.kind === 'failed') progress.failed++;
    else progress.skipped++;
    await enqueue(r.added);
    report();
    return r;
  };

  /** One page: robots, the fetch (politely), then store it or say why not, with the links it has. */
  const handle = async (url: string, idx: number, depth: number, retryCount: number): Promise<void> => {
    const host = new URL(url).host;
    let rules: HostRules | undefined;
    if (spec.respectRobots) {
      rules = await robots.forUrl(url);
      if (!rules.allowed(url)) {
        await finish(idx, { kind: 'skipped', reason: rules.state === 'unreachable' ? 'robots_unreachable' : 'robots' }, []);
        return;
      }
    }
    let page: CrawledPage;
    try {
      fetched++;
      // A link to a document is fetched as it is (a browser does not read a PDF).
      const renderJs = spec.renderJs && !(spec.includeDocuments && looksLikeDocument(url));
      page = await gate.run(host, rules?.delayMs ?? 0, () => deps.fetchPage(url, { renderJs, documents: spec.includeDocuments, signal }));
    } catch (e) {
      if (signal.aborted) throw new RunAborted();
      const f = asFailure(e);
      // An encrypted or broken document is skipped with its reason, not a failure of the crawl (nor of the page's fetch).
      const documentSkip = DOCUMENT_SKIPS[f.code];
      if (documentSkip !== undefined) {
        await finish(idx, { kind: 'skipped', reason: documentSkip }, []);
        return;
      }
      if (RETRYABLE.has(f.code) && retryCount < MAX_RETRIES) throw e;
      await finish(idx, { kind: 'failed', attempts: retryCount + 1, error: errorOf(f) }, []);
      return;
    }
    const status = page.statusCode;
    if (status >= 300 && status < 400) {
      // Redirects are not followed in place: the target is a frontier entry of its own (checked like a link).
      const location = page.headers.location;
      const target = location === undefined ? undefined : canonicalUrl(location, url);
      if (target === undefined || target === url) {
        await finish(idx, { kind: 'skipped', reason: 'redirect' }, []);
        return;
      }
      if ((await bySite([target])).outside.length > 0) {
        await finish(idx, { kind: 'skipped', reason: 'redirect_off_domain' }, []);
        return;
      }
      await finish(idx, { kind: 'skipped', reason: 'redirect' }, await discover([target], depth));
      return;
    }
    if (status === 429 || status === 503) {
      gate.pause(host, retryAfterMs(page.headers));
      if (retryCount < MAX_RETRIES) throw new TargetBusy(status);
      await finish(idx, { kind: 'failed', attempts: retryCount + 1, error: { code: 'TARGET_BUSY', error: `The site answered ${status}`, status_code: status } }, []);
      return;
    }
    if (status >= 400) {
      await finish(idx, { kind: 'failed', attempts: retryCount + 1, error: { code: 'HTTP_ERROR', error: `The site answered ${status}`, status_code: status } }, []);
      return;
    }
    if (spec.includeDocuments && page.documentKind !== undefined && page.document === undefined) {
      // A feed (RSS, Atom, JSON Feed) is not a page of the site: skipped (its items are not followed).
      await finish(idx, { kind: 'skipped', reason: FEED_KINDS.has(page.documentKind) ? 'feed' : 'not_html' }, []);
      return;
    }
    if (spec.includeDocuments && page.document !== undefined) {
      await storeDocument(url, idx, depth, status, page, page.document);
      return;
    }
    if (!HTML.test(page.contentType)) {
      await finish(idx, { kind: 'skipped', reason: 'not_html' }, []);
      return;
    }
    const directives = `${page.metaRobots},${(page.headers['x-robots-tag'] ?? '').toLowerCase()}`;
    const noindex = /\b(noindex|none)\b/.test(directives);
    const nofollow = /\b(nofollow|none)\b/.test(directives);
    const links = nofollow ? [] : page.links.filter((l) => !/\bnofollow\b/i.test(l.rel ?? '')).map((l) => l.url);
    const discovered = await discover(links, depth + 1);
    if (noindex) {
      await finish(idx, { kind: 'skipped', reason: 'noindex' }, discovered);
      return;
    }
    if (page.text.trim() === '' && !page.title) {
      await finish(idx, { kind: 'skipped', reason: 'empty' }, discovered);
      return;
    }
    if (signal.aborted) throw new RunAborted();
    const isNew = await booked(() => deps.index.put({
      url, title: (page.title ?? '').slice(0, 2000), text: page.text.slice(0, 1_000_000), publishedAt: null, language: page.language,
      country: null, type: 'page', author: null, siteName: null, doi: null, safe: null,
    }));
    await billed(url, isNew, await finish(idx, { kind: 'stored', result: { title: page.title, status_code: status, depth } }, discovered));
  };

  /**
   * A document (PDF, DOCX) read by the page pipeline: stored like a page,
   * with the title, author and date it gives of itself, as a 'report'. Its
   * links are not followed (a document is a leaf of the crawl).
   */
  const storeDocument = async (url: string, idx: number, depth: number, status: number, page: CrawledPage, d: CrawledDocument): Promise<void> => {
    const title = d.title ?? page.title ?? '';
    if (page.text.trim() === '') {
      // A scanned PDF (no text layer): nothing to search.
      await finish(idx, { kind: 'skipped', reason: 'empty' }, []);
      return;
    }
    const created = d.created === null ? NaN : Date.parse(d.created);
    const lang = (d.language ?? page.language ?? '').slice(0, 2).toLowerCase();
    if (signal.aborted) throw new RunAborted();
    const isNew = await booked(() => deps.index.put({
      url, title: title.slice(0, 2000), text: page.text.slice(0, 1_000_000), publishedAt: Number.isFinite(created) ? created : null,
      language: /^[a-z]{2}$/.test(lang) ? lang : null, country: null, type: 'report', author: d.author === null ? null : d.author.slice(0, 500),
      siteName: null, doi: null, safe: null,
    }));
    await billed(url, isNew, await finish(idx, { kind: 'stored', result: { title: title === '' ? null : title, status_code: status, depth, document_type: d.type } }, []));
  };

  /** After a stored page's billing: a page not paid for leaves the index, and the crawl stops at its limits. */
  const billed = async (url: string, isNew: boolean, r: PageEndResult): Promise<void> => {
    if (r.refused) {
      // Not paid for: it does not stay in the index (unless it was there before this crawl).
      if (isNew) await deps.index.remove(url).catch(() => undefined);
      stop('no_credits');
      return;
    }
    if (progress.stored >= spec.maxPages) stop('max_pages');
    else if (deps.pricePerPage > 0 && r.available !== undefined && r.available < deps.pricePerPage) stop('no_credits');
  };

  try {
    const asked = await book.stopRequested();
    if (asked !== null) stop('cancelled');
    const pending = book.items.filter((i) => i.status === 'pending');
    // The queue is rebuilt from the book: a resumed crawl continues with what was not done.
    for (let i = 0; i < pending.length; i += 1000) {
      await queue.addRequests(pending.slice(i, i + 1000).map((p) => ({ url: p.url, uniqueKey: p.url, userData: { idx: p.idx, depth: p.depth } })));
    }
    if (!stopping() && spec.useSitemaps && spec.maxDepth >= 1) {
      const rules = await robots.forUrl(spec.start);
      const roots = sitemapRoots(startUrl.origin, rules.sitemaps);
      const mayFetch = sitemapHostAllowed(spec.start, spec.sameDomain);
      const fetchGated: FetchText = (u, s) => gate.run(new URL(u).host, rules.delayMs, () => deps.fetchText(u, s));
      const found = await sitemapPages(roots, fetchGated, signal, mayFetch, { maxFiles: 50, maxDepth: 3, maxUrls: book.frontierLimit });
      const entries = await discover(found.pages, 1);
      if (entries.length > 0) {
        const added = await book.extend(entries);
        took(entries, added);
        await enqueue(added);
        report();
      }
    }

    const poll = setInterval(() => {
      book.stopRequested().then((why) => {
        if (why !== null) stop('cancelled');
      }, () => undefined);
    }, deps.stopPollMs ?? 500);
    poll.unref();
    const concurrency = deps.concurrency ?? 4;
    crawler = new BasicCrawler({
      requestQueue: queue,
      minConcurrency: concurrency,
      maxConcurrency: concurrency,
      maxRequestRetries: MAX_RETRIES,
      requestHandlerTimeoutSecs: 3600,
      useSessionPool: false,
      statusMessageLoggingInterval: 86_400,
      log: new Log({ level: LogLevel.OFF }),
      requestHandler: async ({ request }) => {
        if (stopping()) return;
        const { idx, depth } = request.userData as { idx: number; depth: number };
        if (!(await budget.acquire(stopping))) {
          if (progress.stored >= spec.maxPages) stop('max_pages');
          return;
        }
        try {
          await handle(request.url, idx, depth, request.retryCount);
        } catch (e) {
          if (e instanceof RunAborted || signal.aborted) return;
          // The book (the store) failed: stop; the job is resumed from what was written.
          if (e instanceof BookFailure) return void fail(e.failure);
          // Retried by Crawlee: a network failure, or a busy site.
          if (RETRYABLE.has(asFailure(e).code) && request.retryCount < MAX_RETRIES) throw e;
          fail(e);
        } finally {
          budget.release();
        }
      },
      failedRequestHandler: async ({ request }, error) => {
        if (stopping()) return;
        const { idx } = request.userData as { idx: number };
        try {
          await finish(idx, { kind: 'failed', attempts: request.retryCount + 1, error: errorOf(asFailure(error)) }, []);
        } catch (e) {
          if (!(e instanceof RunAborted)) fail(e instanceof BookFailure ? e.failure : e);
        }
      },
    }, config);
    try {
      if (!stopping()) await crawler.run();
    } finally {
      clearInterval(poll);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    await queue.drop().catch(() => undefined);
  }
  if (signal.aborted) throw new RunAborted();
  if (broken !== undefined) throw broken;
  const seconds = (performance.now() - started) / 1000;
  const leftoverCount = progress.queued;
  const end = (o: Omit<CrawlOutcome, 'progress' | 'fetched' | 'seconds'>): CrawlOutcome => {
    const p = { ...progress };
    if (o.leftover !== undefined) {
      p.skipped += leftoverCount;
      p.queued = 0;
    }
    return { ...o, progress: p, fetched, seconds };
  };
  if (stopWhy === 'cancelled' || stopWhy === 'no_credits') return end({ stopReason: stopWhy, leftover: stopWhy });
  if (stopWhy === 'max_pages') return end({ stopReason: 'max_pages', leftover: 'max_pages' });
  return end(leftoverCount > 0 ? { leftover: 'not_reached' } : {});
}

export { RunAborted };
