/** Content negotiation of the HTTP app: Accept, Accept-Encoding and Content-Encoding parsing, hostile values included. */
import { describe, expect, it } from 'vitest';
import { prefersMsgpack, requestCoding, responseCoding } from '../../adapters/http/shared/negotiate.js';
import zlib from 'node:zlib';
import { compressAsync, compressible, compressSync } from '../../adapters/http/shared/compression.js';

describe('Accept', () => {
  it.each([
    [undefined, false], ['', false], ['*/*', false], ['application/json', false],
    ['application/msgpack', true], ['application/x-msgpack', true], ['application/vnd.msgpack', true], ['Application/MsgPack', true],
    ['application/msgpack;q=0', false], ['application/msgpack; q=0.0', false],
    ['application/json;q=0.5, application/msgpack', true], ['application/json, application/msgpack;q=0.9', false],
    ['application/msgpack, application/json', true], ['application/msgpack;q=0.5, */*', false],
    ['application/msgpack;q=0.5, application/*;q=0.4, */*', true], ['application/x-msgpack;q=0.8, */*;q=0.1', true],
    ['application/msgpack;q=abc', false], ['application/msgpack;q=1.5', false], ['application/msgpack;q=-1', false],
    ['application/msgpackx', false], ['text/plain; note="application/msgpack"', false], ['application/msgpack+json', false],
    [';;,,,=;q', false], ['application/msgpack;level=1;q=0.7, application/json;q=0.6', true],
  ] as const)('%j -> msgpack %s', (accept, want) => {
    expect(prefersMsgpack(accept)).toBe(want);
    expect(prefersMsgpack(accept)).toBe(want); // memoised answer is the same
  });

  it('a long hostile header parses in linear time', () => {
    const header = `${'a/b;q=0.1;x=y, '.repeat(20_000)}application/msgpack`;
    const t = performance.now();
    expect(prefersMsgpack(header)).toBe(true);
    expect(performance.now() - t).toBeLessThan(500);
  });
});

describe('Accept-Encoding', () => {
  it.each([
    [undefined, undefined], ['', undefined], ['identity', undefined], ['deflate', undefined], ['zstd', undefined],
    ['br', 'br'], ['gzip', 'gzip'], ['x-gzip', 'gzip'], ['gzip, deflate', 'gzip'], ['gzip, deflate, br', 'br'], ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'], ['gzip;q=0.5, br;q=0.5', 'br'], ['*', 'br'], ['*;q=0.5, gzip', 'gzip'], ['br;q=0, *', 'gzip'],
    ['gzip;q=0, br;q=0', undefined], ['*;q=0', undefined], ['gzip;q=abc', undefined], ['gzip;q=2', undefined], ['GZIP ; Q = 0.3', 'gzip'],
    [',,;;=, ;q=, br;q=', undefined],
  ] as const)('%j -> %s', (header, want) => {
    expect(responseCoding(header)).toBe(want);
  });
});

describe('Content-Encoding of a request', () => {
  it.each([
    ['', 'identity'], ['identity', 'identity'], [' GZIP ', 'gzip'], ['x-gzip', 'gzip'], ['deflate', 'deflate'], ['br', 'br'],
    ['compress', undefined], ['zstd', undefined], ['gzip, br', undefined], ['gzip;q=1', undefined],
  ] as const)('%j -> %s', (header, want) => {
    expect(requestCoding(header)).toBe(want);
  });
});

describe('compressible types', () => {
  it.each([
    ['application/json; charset=utf-8', true], ['application/msgpack', true], ['text/plain; version=0.0.4; charset=utf-8', true],
    ['application/problem+json', true], ['image/svg+xml', true], ['image/png', false], ['image/jpeg', false], ['application/pdf', false],
    ['application/octet-stream', false], ['application/zip', false],
  ] as const)('%s -> %s', (type, want) => {
    expect(compressible(type)).toBe(want);
  });
});

describe('compression round trips', () => {
  // Multi-byte text: brotli's window is sized from the UTF-8 bytes, not the string's length.
  const text = JSON.stringify({ output: 'Grüße, 世界! '.repeat(3000) });
  const decode = (coding: 'br' | 'gzip', b: Buffer) => (coding === 'br' ? zlib.brotliDecompressSync(b) : zlib.gunzipSync(b)).toString('utf8');

  it.each(['br', 'gzip'] as const)('%s, in line and on the thread pool, as string or bytes', async (coding) => {
    expect(decode(coding, compressSync(coding, text))).toBe(text);
    expect(decode(coding, compressSync(coding, Buffer.from(text)))).toBe(text);
    const out = await new Promise<Buffer>((resolve, reject) => compressAsync(coding, text, (e, b) => (e ? reject(e) : resolve(b))));
    expect(decode(coding, out)).toBe(text);
    expect(out.length).toBeLessThan(Buffer.byteLength(text) / 10);
  });
});
