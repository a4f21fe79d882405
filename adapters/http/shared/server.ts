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
