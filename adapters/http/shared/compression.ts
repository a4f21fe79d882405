/**
 * Response compression and request-body decompression for the HTTP app
 * (node:zlib). Small bodies are compressed synchronously (a few tens of
 * microseconds); larger ones on libuv's thread pool, so the event loop never
 * waits on zlib for more than that. Request bodies are always decoded on the
 * thread pool, and stop at the body limit: zlib's maxOutputLength ends the
 * inflation as soon as the output passes it (a zip bomb costs at most the
 * limit, not its expanded size).
 */
import zlib from 'node:zlib';
import type { RequestCoding, ResponseCoding } from './negotiate.js';

/** Bodies shorter than this (bytes, or characters of a string) go out as they are. */
export const COMPRESS_MIN_BYTES = 1024;
/** From this size on, compression runs on the thread pool instead of the event loop. */
export const COMPRESS_ASYNC_BYTES = 16 * 1024;

/**
 * Brotli quality 2 and gzip level 2, chosen for dynamic API answers on a
 * 2-core Xeon VM: on the OpenAPI document (177 KB), a 38 KB tool answer and
 * a 14 KB search-shaped answer, br 2 made 11.2%, 20.9% and 21.8% of the
 * size for 575, 196 and 68 µs of CPU, where quality 4 saved at most half a
 * point more for twice the CPU, and brotli's default quality 11 costs a
 * hundred times more; gzip 2 made 13.6%, 21.4%, 22.9% for 645, 192, 61 µs
 * (level 4: 11.6%, 18.6%, 21.3% for 979, 317, 83 µs; zlib's default 6
 * costs 1.5 to 6 times level 2).
 */
const BROTLI_QUALITY = 2;
const GZIP_LEVEL = 2;

/**
 * Brotli's window sized to the body (2^10 to 2^22 bytes) instead of its
 * default 4 MiB: the same output for bodies up to the window, and an
 * encoder that allocates and clears a fraction of the memory. With the
 * default, a hundred concurrent answers of 40 KB each cost several times
 * the CPU of one (fresh 4 MiB buffers, page faults), measured in bench:http.
 */
const brotliWindow = (size: number): number => Math.min(22, Math.max(10, Math.ceil(Math.log2(size + 1))));
const brotliOptions = (size: number): zlib.BrotliOptions => ({
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size,
    [zlib.constants.BROTLI_PARAM_LGWIN]: brotliWindow(size),
  },
});
const GZIP_OPTIONS: zlib.ZlibOptions = { level: GZIP_LEVEL };

/** zlib encodes a string to UTF-8 anyway; doing it here gives brotli the exact size. */
const bytesOf = (body: string | Uint8Array): Uint8Array => (typeof body === 'string' ? Buffer.from(body) : body);

export function compressSync(coding: ResponseCoding, body: string | Uint8Array): Buffer {
  const b = bytesOf(body);
  return coding === 'br' ? zlib.brotliCompressSync(b, brotliOptions(b.byteLength)) : zlib.gzipSync(b, GZIP_OPTIONS);
}

export function compressAsync(coding: ResponseCoding, body: string | Uint8Array, done: (error: Error | null, out: Buffer) => void): void {
  const b = bytesOf(body);
  if (coding === 'br') zlib.brotliCompress(b, brotliOptions(b.byteLength), done);
  else zlib.gzip(b, GZIP_OPTIONS, done);
}

/**
 * A compressing stream for an answer whose size is not known in advance (a
 * streamed answer): the same gzip level and brotli quality as whole
 * bodies. Brotli keeps its default window (4 MiB): there is no size to fit
 * it to, and a streamed answer is a large one. zlib streams compress on
 * libuv's thread pool, as compressAsync does.
 */
export function compressStream(coding: ResponseCoding): zlib.Gzip | zlib.BrotliCompress {
  return coding === 'br'
    ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : zlib.createGzip(GZIP_OPTIONS);
}

const compressibleMemo = new Map<string, boolean>();

/** Text-like media types are worth compressing; images and other binary formats are already compressed. */
export function compressible(contentType: string): boolean {
  let v = compressibleMemo.get(contentType);
  if (v === undefined) {
    const t = contentType.toLowerCase();
    v = t.startsWith('text/') || t.startsWith('image/svg+xml') || t.startsWith('application/json') || t.startsWith('application/msgpack') ||
      t.startsWith('application/xml') || t.startsWith('application/javascript') || /^application\/[^;]*\+(json|xml)/.test(t);
    if (compressibleMemo.size < 100) compressibleMemo.set(contentType, v);
  }
  return v;
}

/** Why a request body could not be decoded. */
export type DecodeFailure = { readonly kind: 'too_large' } | { readonly kind: 'corrupt'; readonly message: string };

/**
 * Decode a request body on the thread pool, stopping once the output passes
 * `limit` bytes (too_large). `deflate` is the zlib format of RFC 9110; a raw
 * deflate stream (what some clients send under that name) is accepted too.
 */
export function decompress(coding: Exclude<RequestCoding, 'identity'>, body: Buffer, limit: number, done: (result: Buffer | DecodeFailure) => void): void {
  const opts = { maxOutputLength: limit };
  const callback = (error: Error | null, out: Buffer) => {
    if (error === null) done(out);
    else if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) done({ kind: 'too_large' });
    else done({ kind: 'corrupt', message: error.message });
  };
  if (coding === 'gzip') zlib.gunzip(body, opts, callback);
  else if (coding === 'br') zlib.brotliDecompress(body, opts, callback);
  else if (body.length >= 2 && (body[0]! & 0x0f) === 8 && ((body[0]! << 8) | body[1]!) % 31 === 0) zlib.inflate(body, opts, callback);
  else zlib.inflateRaw(body, opts, callback);
}
