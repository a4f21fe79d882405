/** Client address handling: raw socket bytes to text, text normalisation, X-Forwarded-For. */
import { describe, expect, it } from 'vitest';
import { forwardedFor, ipFromBytes, normaliseIp } from '../../adapters/http/shared/server.js';

describe('client addresses', () => {
  it.each([
    [[127, 0, 0, 1], '127.0.0.1'],
    [[10, 255, 0, 9], '10.255.0.9'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 127, 0, 0, 1], '127.0.0.1'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], '::1'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], '::'],
    [[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], '2001:db8::1'],
    [[0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1], '2001:db8:1:0:1::1'],
    [[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0xab, 0xcd], 'fe80::1234:0:0:abcd'],
    [[1, 2, 3], ''],
  ])('bytes %j -> %s', (bytes, text) => {
    expect(ipFromBytes(new Uint8Array(bytes))).toBe(text);
  });

  it('normalises text spellings to the same key', () => {
    expect(normaliseIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normaliseIp('0000:0000:0000:0000:0000:ffff:7f00:0001')).toBe('127.0.0.1');
    expect(normaliseIp('127.0.0.1')).toBe('127.0.0.1');
    expect(normaliseIp('::1')).toBe('::1');
  });

  it('takes the first X-Forwarded-For entry, refusing junk', () => {
    expect(forwardedFor('203.0.113.7, 10.0.0.1')).toBe('203.0.113.7');
    expect(forwardedFor('')).toBeUndefined();
    expect(forwardedFor(' , x')).toBeUndefined();
    expect(forwardedFor('x'.repeat(100))).toBeUndefined();
  });
});
