/**
 * The Secrets port on node:crypto: random key material, SHA-256 for stored
 * key hashes (keys carry 256 random bits, so a fast hash is enough: there is
 * nothing to brute-force), and constant-time comparison.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Secrets } from '../../core/ports.js';

export const nodeSecrets: Secrets = {
  random: (bytes) => randomBytes(bytes).toString('base64url'),
  sha256: (text) => createHash('sha256').update(text, 'utf8').digest('hex'),
  equal(a, b) {
    const x = Buffer.from(a, 'utf8');
    const y = Buffer.from(b, 'utf8');
    if (x.length === y.length) return timingSafeEqual(x, y);
    // Compare equal-length digests so the time does not depend on where the strings differ, nor on their lengths.
    const hx = createHash('sha256').update(x).digest();
    const hy = createHash('sha256').update(y).digest();
    return timingSafeEqual(hx, hy) && x.length === y.length;
  },
};
