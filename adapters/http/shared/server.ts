/** The port both HTTP adapters implement. */
export interface HttpServer {
  readonly kind: 'uws' | 'node';
  /** Resolves with the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<{ host: string; port: number }>;
  /** Stop accepting, let in-flight requests finish (up to timeoutMs), then close. Resolves true if all finished. */
  close(timeoutMs: number): Promise<boolean>;
}

export interface ServerOptions {
  /** Take the client address from the first X-Forwarded-For entry (only behind a trusted proxy). */
  readonly trustProxy: boolean;
  /**
   * Share the port with other processes that ask for the same (SO_REUSEPORT;
   * uWS only, SCOUR_REUSE_PORT). Off: listening on a port another process
   * holds fails with LISTEN_FAILED.
   */
  readonly reusePort?: boolean;
}

/** The server could not bind its address: `scour serve` prints the message on one line and exits 1. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  readonly code = 'LISTEN_FAILED';
  constructor(reason: string) {
    super(`LISTEN_FAILED: ${reason.replace(/[\r\n]+/g, ' ')}`);
  }
}

/** First address of X-Forwarded-For, when trusted. */
export function forwardedFor(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const comma = header.indexOf(',');
  const first = (comma === -1 ? header : header.slice(0, comma)).trim();
  return first.length > 0 && first.length <= 64 ? first : undefined;
}

const seen = new Map<string, string>();

/** One spelling per address, so rate-limit keys do not split (::ffff:127.0.0.1 -> 127.0.0.1). Memoised: clients repeat. */
export function normaliseIp(ip: string): string {
  let out = seen.get(ip);
  if (out === undefined) {
    if (seen.size >= 10_000) seen.clear();
    out = normaliseUncached(ip);
    seen.set(ip, out);
  }
  return out;
}

function normaliseUncached(ip: string): string {
  const lower = ip.toLowerCase();
  if (lower.startsWith('::ffff:') && lower.includes('.')) return lower.slice(7);
  if (lower.startsWith('0000:0000:0000:0000:0000:ffff:')) {
    const h = lower.slice(30).split(':');
    if (h.length === 2) {
      const a = parseInt(h[0]!, 16);
      const b = parseInt(h[1]!, 16);
      return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
    }
  }
  return lower;
}

const OCTET = Array.from({ length: 256 }, (_, i) => String(i));
const V4 = new Map<number, string>();

/** Dotted IPv4, memoised by value: the same client gets the same string (hash already computed for Map keys). */
function ipv4(b: Uint8Array, at: number): string {
  const n = ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
  let s = V4.get(n);
  if (s === undefined) {
    if (V4.size >= 10_000) V4.clear();
    s = `${OCTET[b[at]!]}.${OCTET[b[at + 1]!]}.${OCTET[b[at + 2]!]}.${OCTET[b[at + 3]!]}`;
    V4.set(n, s);
  }
  return s;
}

/**
 * Text of a raw socket address (4 bytes for IPv4, 16 for IPv6), in the same
 * normal form as normaliseIp: IPv4-mapped IPv6 becomes dotted IPv4, IPv6 is
 * RFC 5952 (lower case, longest zero run as ::). Cheaper than asking the
 * socket for text and decoding it.
 */
export function ipFromBytes(b: Uint8Array): string {
  if (b.length === 4) return ipv4(b, 0);
  if (b.length !== 16) return '';
  let mapped = b[10] === 255 && b[11] === 255;
  for (let i = 0; mapped && i < 10; i++) if (b[i] !== 0) mapped = false;
  if (mapped) return ipv4(b, 12);
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestAt === -1) return hex.join(':');
  return `${hex.slice(0, bestAt).join(':')}::${hex.slice(bestAt + bestLen).join(':')}`;
}
