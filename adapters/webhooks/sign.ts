/**
 * Webhook signatures: `t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 * "<t>.<body>", so a receiver can tell the body came from us and refuse a
 * replayed one (the timestamp is signed too). Several v1 entries may appear
 * while an account rotates its secret; one match is enough. The secret is
 * used as given (its UTF-8 bytes, `whsec_` prefix included) as the HMAC key.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;
const SECRET_PREFIX = 'whsec_';

function hmacHex(secret: string, t: number, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/**
 * The signature header value for `body` sent at `unixSeconds`. With several
 * secrets (rotation), one v1 entry per secret, in the order given.
 */
export function signPayload(secret: string | readonly string[], body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new Error('signPayload needs at least one secret');
  return [`t=${t}`, ...secrets.map((s) => `v1=${hmacHex(s, t, body)}`)].join(',');
}

/**
 * Checks a signature header against the raw body as received. True, or the
 * reason it is refused. `secret` may list several secrets (the receiver's
 * side of a rotation). Timestamps more than `toleranceSeconds` away from
 * `nowSeconds`, in either direction, are refused: a replay of an old
 * delivery fails even with a valid signature.
 */
export function verifySignature(
  secret: string | readonly string[],
  body: string | Uint8Array,
  header: string | null | undefined,
  nowSeconds: number,
  toleranceSeconds: number = DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
): true | string {
  if (typeof header !== 'string' || header.trim() === '') return 'the signature header is missing';
  if (header.length > 4096) return 'the signature header is too long';
  let t: number | undefined;
  const candidates: Buffer[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) return 'the signature header is malformed';
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined) return 'the signature header has more than one timestamp';
      if (!/^[0-9]{1,12}$/.test(value)) return 'the signature timestamp is not a unix time in seconds';
      t = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) return 'a v1 signature is not 64 hex digits';
      candidates.push(Buffer.from(value, 'hex'));
    }
    // Other schemes are skipped, so a future v2 can be sent alongside v1.
  }
  if (t === undefined) return 'the signature header has no timestamp (t=)';
  if (candidates.length === 0) return 'the signature header has no v1 signature';
  const secrets = typeof secret === 'string' ? [secret] : secret;
  let matched = false;
  for (const s of secrets) {
    const expected = Buffer.from(hmacHex(s, t, body), 'hex');
    // Every candidate is compared, so the time taken does not tell which one matched.
    for (const c of candidates) if (timingSafeEqual(expected, c)) matched = true;
  }
  if (!matched) return 'no v1 signature matches';
  if (Math.abs(nowSeconds - t) > toleranceSeconds) {
    return t < nowSeconds
      ? `the signature timestamp is more than ${toleranceSeconds} s old`
      : `the signature timestamp is more than ${toleranceSeconds} s in the future`;
  }
  return true;
}

/** A new per-account signing secret: `whsec_` + 32 random bytes, base64url (43 characters). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}
