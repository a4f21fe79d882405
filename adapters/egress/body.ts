/**
 * Reading a response body under two budgets: bytes on the wire, and bytes
 * after Content-Encoding is undone. Decompression runs through zlib streams
 * with a counting stage after them; passing a budget destroys the whole
 * chain, so a compression bomb stops after about `maxDecodedBytes` of
 * output instead of being inflated first and measured afterwards.
 */
import type { IncomingMessage } from 'node:http';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { TargetResponseInvalid } from '../../core/errors.js';

export interface BodyLimits {
  readonly maxBodyBytes: number;
  readonly maxDecodedBytes: number;
}

class LimitExceeded extends Error {
  constructor(readonly failure: TargetResponseInvalid) {
    super(failure.details);
  }
}

/** Passes chunks through and fails the pipeline once more than `limit` bytes went by. */
class Counter extends Transform {
  total = 0;
  constructor(private readonly limit: number, private readonly onExceed: (limit: number) => TargetResponseInvalid) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.total += chunk.length;
    if (this.total > this.limit) cb(new LimitExceeded(this.onExceed(this.limit)));
    else cb(null, chunk);
  }
}

/** Raw deflate or zlib-wrapped deflate ("deflate" means the latter, but servers send both): decided on the first bytes. */
class DeflateSniff extends Transform {
  private inner: zlib.Inflate | zlib.InflateRaw | undefined;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (!this.inner) {
      const b0 = chunk[0] ?? 0;
      const b1 = chunk[1] ?? 0;
      const zlibHeader = (b0 & 0x0f) === 8 && ((b0 << 8) | b1) % 31 === 0;
      const opts = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
      this.inner = zlibHeader ? zlib.createInflate(opts) : zlib.createInflateRaw(opts);
      this.inner.on('data', (d: Buffer) => {
        if (!this.push(d)) this.inner?.pause();
      });
      this.inner.on('error', (e) => this.destroy(e));
    }
    if (this.inner.write(chunk)) cb();
    else this.inner.once('drain', () => cb());
  }
  override _read(size: number): void {
    this.inner?.resume();
    super._read(size);
  }
  override _flush(cb: TransformCallback): void {
    if (!this.inner) return cb();
    this.inner.once('end', () => cb());
    this.inner.end();
  }
  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    this.inner?.destroy();
    cb(err);
  }
}

/** The decoders for a Content-Encoding header, in the order to apply them; undefined when one is unknown. */
export function decodersFor(contentEncoding: string | undefined): Array<() => Transform> | undefined {
  if (!contentEncoding) return [];
  const codings = contentEncoding.toLowerCase().split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== 'identity');
  const out: Array<() => Transform> = [];
  // Applied in the order listed by the server, so undone in reverse.
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') out.push(() => zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    else if (coding === 'deflate') out.push(() => new DeflateSniff());
    else if (coding === 'br') out.push(() => zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }));
    else return undefined;
  }
  return out;
}

export interface ReadBody {
  readonly body: Buffer;
  readonly wireBytes: number;
}

/**
 * The whole body, decoded. Rejects with TargetResponseInvalid past a limit
 * or on a broken encoding; with the stream's own error otherwise (the
 * caller maps transport errors).
 */
export async function readBody(res: IncomingMessage, limits: BodyLimits, decode: boolean): Promise<ReadBody> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
    res.destroy();
    throw tooBig(limits.maxBodyBytes);
  }
  const encoding = decode ? res.headers['content-encoding'] : undefined;
  const decoders = decodersFor(encoding);
  if (!decoders) {
    res.destroy();
    throw new TargetResponseInvalid({ message: 'The target sent an invalid response', details: `unsupported content-encoding: ${String(encoding)}` });
  }
  const wire = new Counter(limits.maxBodyBytes, tooBig);
  const decoded = new Counter(limits.maxDecodedBytes, (limit) => new TargetResponseInvalid({
    message: 'The target sent an invalid response',
    details: `the decompressed body exceeds ${limit} bytes (content-encoding ${String(encoding)})`,
    limit,
  }));
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  const stages = decoders.length === 0 ? [wire, sink] : [wire, ...decoders.map((make) => make()), decoded, sink];
  try {
    await pipeline([res, ...stages]);
  } catch (err) {
    if (err instanceof LimitExceeded) throw err.failure;
    if (isZlibError(err)) {
      throw new TargetResponseInvalid({
        message: 'The target sent an invalid response',
        details: `the body is not valid ${String(encoding)} (${(err as Error).message})`,
      });
    }
    throw err;
  }
  return { body: Buffer.concat(chunks), wireBytes: wire.total };
}

function tooBig(limit: number): TargetResponseInvalid {
  return new TargetResponseInvalid({ message: 'The target sent an invalid response', details: `the response body exceeds ${limit} bytes`, limit });
}

function isZlibError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__ERROR_FORMAT') || code === 'ERR_ZLIB_INITIALIZATION_FAILED');
}
