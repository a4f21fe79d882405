/**
 * What the extraction pool and its workers say to each other (one page at a
 * time per worker), and how a worker's result crosses back. Shared by
 * pool.ts and worker.ts; no I/O.
 */
import type { ExtractionResult, PageSource } from '../../core/extraction.js';

/**
 * How a worker sends its result back. 'clone': the result object itself,
 * through postMessage's structured clone: the default, the cheapest for the
 * main thread (64-70 ms per 100 Zyte pages with every extractor, against
 * 74-94 for msgpack and 78-114 for JSON; benchmarks/bulk/pool.mjs), and
 * exact (undefined values and key order survive). 'msgpack': msgpackr bytes,
 * transferred (no copy), unpacked on the main thread. 'json': JSON text
 * (drops undefined values, so only for measurement).
 */
export type ResultEncoding = 'clone' | 'msgpack' | 'json';

/** What a worker is started with (workerData). */
export interface WorkerSetup {
  /** The module the worker imports: it exports `parsePage` and `builtinExtractors` (plugins/extractors/index.ts). */
  readonly module: string;
  readonly encoding: ResultEncoding;
  /** Tests only: marker comments in a page make the worker exit, crash, hang or dawdle (see worker.ts). */
  readonly testHooks: boolean;
}

/** Main thread -> worker: one page. */
export interface JobMessage {
  readonly id: number;
  readonly page: PageSource;
  readonly ids: readonly string[];
  readonly options: Readonly<Record<string, unknown>>;
}

/** Worker -> main thread. */
export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number; readonly result?: ExtractionResult; readonly bytes?: Uint8Array; readonly json?: string }
  /** The page could not be read as a whole (the parser threw): it fails, the worker lives on. */
  | { readonly type: 'failed'; readonly id: number; readonly message: string };
