/**
 * Extraction as a port: a fetched page goes in, the values of the built-in
 * extractors it asks for come out. Where that work runs (this thread, or a
 * pool of worker threads: adapters/extraction-pool) is the adapter's choice;
 * the page pipeline (core/page.ts), and through it single and bulk scrape,
 * crawl, search enrichment and research, only sees this interface. Pure: no I/O, no thread, no driver.
 */
import type { Effect } from 'effect';
import type { ServiceUnavailable, TargetResponseInvalid } from './errors.js';

/** A fetched page before parsing: what a parser turns into the tree every extractor reads. */
export interface PageSource {
  readonly url: string;
  readonly finalUrl: string;
  readonly statusCode: number;
  readonly contentType: string;
  readonly html: string;
}

/** One page and the extractors (by id) to run over it; `options` reach every extractor (e.g. `{ country }`). */
export interface ExtractionRequest {
  readonly page: PageSource;
  readonly ids: readonly string[];
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * true: the caller's only page (a single scrape), which a port may extract
   * in-process when nothing else is in flight (the hop to another thread
   * would only add latency); false: one of a batch (bulk, crawl, research,
   * search enrichment), which goes where it runs in parallel. Unset: the
   * port decides from the load alone.
   */
  readonly alone?: boolean;
}

/** Each asked-for extractor's value, or the message it threw (one extractor's failure is its own, as in-process). */
export interface ExtractionResult {
  readonly values: Record<string, unknown>;
  readonly errors: Record<string, string>;
}

/**
 * Why a whole page could not be extracted: TargetResponseInvalid when the
 * page made the extraction fail as a whole (the parser threw, a worker
 * crashed or ran out of memory on it, or it ran past its deadline: the page
 * fails, uncharged); ServiceUnavailable when the server is stopping.
 */
export type ExtractionFailure = TargetResponseInvalid | ServiceUnavailable;

/** An extractor as the port sees it: an id and a function of the parsed page. */
export interface ExtractorLike<P> {
  readonly id: string;
  extract(page: P, options: Readonly<Record<string, unknown>>): unknown;
}

/** A parser and the extractors that read what it makes (the built-ins: plugins/extractors). */
export interface ExtractorSet<P> {
  readonly parse: (source: PageSource) => P;
  readonly extractors: readonly ExtractorLike<P>[];
}

export interface ExtractionPort {
  /**
   * Whether this port runs `extractor` itself: it is one of the extractors
   * the port was built with (by identity, so a plugin that reuses a
   * built-in's id is not mistaken for it). Others (custom extractors, which
   * are closures and cannot move to another thread) run in the caller.
   */
  runs(extractor: object): boolean;
  /** Parse the page once and run `ids` over it; interrupting the Effect gives up on the page (a queued page leaves the queue). */
  extract(request: ExtractionRequest): Effect.Effect<ExtractionResult, ExtractionFailure>;
  /** Stop: pages still queued or running fail with ServiceUnavailable; nothing runs after it resolves. */
  close(): Promise<void>;
}

/**
 * Run `ids` of `set` over one parsed page, in order: each extractor's value,
 * or its error message when it throws or rejects. Ids the set does not have
 * are left out. The same code runs in this thread and in a worker, so both
 * give the same result.
 */
export async function runExtractors<P>(
  set: ExtractorSet<P>, page: P, ids: readonly string[], options: Readonly<Record<string, unknown>>,
): Promise<ExtractionResult> {
  const values: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const id of ids) {
    const x = set.extractors.find((e) => e.id === id);
    if (x === undefined) continue;
    try {
      values[id] = await x.extract(page, options);
    } catch (e) {
      errors[id] = e instanceof Error ? e.message : String(e);
    }
  }
  return { values, errors };
}
