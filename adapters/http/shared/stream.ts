/**
 * The body of a streamed answer (ReplyMeta.stream in core/context.ts): text
 * from the route, through a compressing stream when the client accepts br or
 * gzip, to the transport's SinkStream (chunked: no Content-Length). It ends
 * once, by end() (the rest of the body, then the terminating chunk) or by
 * abort() (the connection is cut with no terminating chunk, so the client
 * never holds a complete body); `closed` is told once, when the last byte
 * has been handed to the transport or the body was cut.
 *
 * Nothing is flushed per write (zlib keeps its own pace) except the first:
 * the head goes out with the first bytes of the body, so the first write is
 * flushed through the compressor for the client to see the status at once.
 * There is no back-pressure towards the route: what the client has not read
 * yet waits in the transport's buffer (uWS's, or node's writable). A
 * streamed answer is bounded by its route (a bulk scrape: 100 results), so
 * that buffer is bounded too, and no larger than the buffered answer was.
 */
import zlib from 'node:zlib';
import type { ReplyStream } from '../../../core/context.js';
import { compressStream } from './compression.js';
import type { ResponseCoding } from './negotiate.js';

/** A transport's side of a streamed answer (Sink.begin). */
export interface SinkStream {
  /** Append to the body (a chunk of the chunked encoding). Dropped once the client has gone. */
  write(chunk: string | Uint8Array): void;
  /** The body is complete: the terminating chunk. `close`: close the connection after it. */
  end(close: boolean): void;
  /** Cut the body off: close the connection without the terminating chunk. */
  abort(): void;
}

const OPEN = 0;
const ENDING = 1;
const CLOSED = 2;

export class BodyStream implements ReplyStream {
  private state = OPEN;
  private started = false;
  private readonly z: zlib.Gzip | zlib.BrotliCompress | undefined;

  /**
   * `out` undefined: the request was over before its stream began (the
   * client went away); every write is dropped. `closed(status, error)`:
   * once, with the status the answer ended with (the route's on end, the
   * abort's on abort) and the compressor's error when it failed.
   */
  constructor(
    private readonly out: SinkStream | undefined,
    private readonly coding: ResponseCoding | undefined,
    private readonly closed: (status: number, error?: Error) => void,
  ) {
    if (coding === undefined || out === undefined) return;
    const z = compressStream(coding);
    z.on('data', (b: Buffer) => {
      if (this.state !== CLOSED) out.write(b);
    });
    z.on('error', (e: Error) => this.abort(500, e));
    this.z = z;
  }

  write(chunk: string): void {
    if (this.state !== OPEN || chunk.length === 0) return;
    const z = this.z;
    if (z === undefined) {
      this.out?.write(chunk);
      return;
    }
    z.write(chunk);
    if (!this.started) {
      this.started = true;
      z.flush(this.coding === 'br' ? zlib.constants.BROTLI_OPERATION_FLUSH : zlib.constants.Z_SYNC_FLUSH);
    }
  }

  /** The rest of the body, then the end; `status` is what `closed` is told. */
  end(tail: string, status: number, close: boolean): void {
    if (this.state !== OPEN) return;
    this.state = ENDING;
    const z = this.z;
    if (z === undefined) {
      if (tail.length > 0) this.out?.write(tail);
      this.out?.end(close);
      this.state = CLOSED;
      this.closed(status);
      return;
    }
    z.once('end', () => {
      if (this.state === CLOSED) return;
      this.state = CLOSED;
      this.out!.end(close);
      this.closed(status);
    });
    z.end(tail);
  }

  /** Cut the body off (see SinkStream.abort); `status` is what `closed` is told. */
  abort(status: number, error?: Error): void {
    if (this.state === CLOSED) return;
    this.state = CLOSED;
    this.z?.destroy();
    this.out?.abort();
    this.closed(status, error);
  }
}
