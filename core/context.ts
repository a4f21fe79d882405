import type { Effect } from 'effect';
import type { BadRequest, UnsupportedMediaType } from './errors.js';

/**
 * The request context every pipeline starts from. The HTTP adapter builds it
 * from the socket; stages add typed fields to it (see pipeline.ts).
 */

/** Response metadata a stage may add (rate-limit headers, ...); written on success and on error. */
export class ReplyMeta {
  /** Flat [name, value, name, value, ...]: cheap to fill and to write. */
  readonly headers: string[] = [];
  /** Refuses CR and LF so no value can inject a header (adapters write these verbatim). */
  set(name: string, value: string): void {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new Error(`header ${JSON.stringify(name)} holds CR or LF`);
    this.headers.push(name, value);
  }

  /** A numeric header value: nothing to check. */
  setNumber(name: string, value: number): void {
    this.headers.push(name, numberText(value));
  }
}

// The decimal text of recent numbers, direct-mapped by their low bits. Header numbers
// repeat from one answer to the next (a rate limit, its window, the window's end), and
// String() of a number past 2^30 (an epoch second) is a slow conversion every time.
const NUMBER_SLOTS = 64;
const numberKeys = new Float64Array(NUMBER_SLOTS).fill(Number.NaN);
const numberTexts: string[] = new Array<string>(NUMBER_SLOTS).fill('');

/** String(n), remembered: equal numbers have equal text (0 and -0 both print "0"; NaN is never found). */
function numberText(n: number): string {
  const slot = n & (NUMBER_SLOTS - 1);
  if (numberKeys[slot] === n) return numberTexts[slot]!;
  const text = String(n);
  numberKeys[slot] = n;
  numberTexts[slot] = text;
  return text;
}

/**
 * Cleanup a stage registers for the rest of the request (a concurrency slot,
 * a credit hold): run once, after the handler, on every exit (success,
 * failure, client abort), before the response is written. It must not fail.
 */
export type Finalizer = () => Effect.Effect<void>;

export interface RequestContext {
  readonly requestId: string;
  /** Epoch milliseconds when the request arrived. */
  readonly receivedAt: number;
  readonly method: string;
  readonly path: string;
  /** Path parameters of the matched route (`{job_id}` -> params.job_id). */
  readonly params: Readonly<Record<string, string>>;
  readonly clientIp: string;
  /** Lower-case header names; only the headers the adapter copies (see adapters/http/shared). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * The decoded body, not yet validated: read `ctx.input` after the validate
   * stage instead. Decoding failures (malformed JSON, wrong content type) wait
   * in `bodyError` so that auth and quota answer first.
   */
  readonly body: unknown;
  readonly bodyError: BadRequest | UnsupportedMediaType | undefined;
  readonly reply: ReplyMeta;
  /** Finalizers registered by stages (see `addFinalizer`); the pipeline runs them. */
  finalizers?: Finalizer[] | undefined;
}

/** Register cleanup that the pipeline runs when the request ends, however it ends. */
export function addFinalizer(ctx: RequestContext, f: Finalizer): void {
  (ctx.finalizers ??= []).push(f);
}
