import type { Effect } from 'effect';
import type { BadRequest, UnsupportedMediaType } from './errors.js';

/**
 * The request context every pipeline starts from. The HTTP adapter builds it
 * from the socket; stages add typed fields to it (see pipeline.ts).
 */

/**
 * The body of an answer that is being streamed (ReplyMeta.stream): text
 * appended to the body as it is written. Once the request has ended (the
 * client went away), writes are dropped.
 */
export interface ReplyStream {
  write(chunk: string): void;
}

/**
 * Response metadata a stage may add (rate-limit headers, ...); written on
 * success and on error. A route that declares `streams` may also send its
 * status and headers early and its body in parts (stream()).
 */
export class ReplyMeta {
  /** Flat [name, value, name, value, ...]: cheap to fill and to write. */
  readonly headers: string[] = [];
  private opener: (() => ReplyStream) | undefined = undefined;
  private opened: ReplyStream | undefined = undefined;

  /**
   * Send the route's success status and the headers set so far now, and
   * return the writer of the body; the same writer on every call. Undefined
   * when this answer cannot be streamed (msgpack, HEAD, a transport without
   * streaming, streaming turned off, a route that does not declare it): the
   * route then answers as usual, with its whole value.
   *
   * Once it has returned a writer, the request is committed to a success:
   * the handler's value must be a string, the rest of the body (for a
   * stamped JSON route, ending with `}`: the request id goes before it),
   * and a failure after this point cuts the body off (the client sees an
   * incomplete answer, never a complete document). Headers set after it
   * are not sent.
   */
  stream(): ReplyStream | undefined {
    if (this.opened !== undefined) return this.opened;
    const open = this.opener;
    if (open === undefined) return undefined;
    this.opener = undefined;
    this.opened = open();
    return this.opened;
  }

  /** True once stream() has returned a writer: the status and headers are out. */
  get streamed(): boolean {
    return this.opened !== undefined;
  }

  /** The transport's side: how to start this answer's stream, when it can be streamed. */
  allowStream(open: () => ReplyStream): void {
    this.opener = open;
  }

  /** Refuses CR and LF so no value can inject a header (adapters write these verbatim). */
  set(name: string, value: string): void {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new Error(`header ${JSON.stringify(name)} holds CR or LF`);
    this.headers.push(name, value);
  }

  /**
   * A numeric header value: nothing to check. `memo` remembers the text of
   * a number that repeats from one answer to the next (see NumberText).
   */
  setNumber(name: string, value: number, memo?: NumberText): void {
    this.headers.push(name, memo === undefined ? String(value) : memo.of(value));
  }
}

/**
 * The decimal text of the last number it was given. For header numbers that
 * repeat on every answer (a rate limit, its window, the window's end):
 * String() of an epoch second, past 2^30 and so not a small integer, is a
 * slow conversion each time, and equal numbers have equal text.
 */
export class NumberText {
  private n = Number.NaN;
  private text = 'NaN';

  of(n: number): string {
    if (n !== this.n) {
      this.n = n;
      this.text = String(n);
    }
    return this.text;
  }
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
