/**
 * Politeness per host: robots.txt (RFC 9309, read with robots-parser) and a
 * gate that keeps at most N requests in flight to one host and spaces them
 * by the host's Crawl-delay. A host that answers 429 or 503 is paused (for
 * its Retry-After, or a few seconds). robots.txt itself is fetched through
 * the same guarded fetcher as every page.
 */
import robotsParserModule from 'robots-parser';

interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
}
// robots-parser is CommonJS (`module.exports = function`) while its types
// declare an ES default export: take whichever the loader hands us.
const robotsParser: (url: string, content: string) => Robot =
  ((robotsParserModule as unknown as { default?: unknown }).default ?? robotsParserModule) as (url: string, content: string) => Robot;

/** The product token robots.txt groups are matched against (a `User-agent: *` group applies too). */
export const ROBOTS_AGENT = 'ScourBot';
/** The User-Agent a crawl sends. */
export const CRAWLER_USER_AGENT = 'Mozilla/5.0 (compatible; ScourBot/1.0; +self-hosted Scour crawler)';
/** A Crawl-delay above this is held to it (a site asking for an hour between pages would never finish). */
export const MAX_CRAWL_DELAY_MS = 30_000;
/** robots.txt bodies past this are cut (RFC 9309 asks crawlers to read at least 500 KiB). */
const MAX_ROBOTS_CHARS = 512 * 1024;

export interface TextResponse {
  readonly statusCode: number;
  readonly contentType: string;
  readonly body: string;
  readonly finalUrl: string;
  /** The body as received, when its type is not HTML or text (a gzipped sitemap: application/gzip, octet-stream). */
  readonly bytes?: Uint8Array | undefined;
}

/** A plain guarded GET (robots.txt, sitemaps). Rejects on network failure or refusal. */
export type FetchText = (url: string, signal: AbortSignal) => Promise<TextResponse>;

export interface HostRules {
  /** 'ok': robots.txt read; 'none': there is none (4xx): everything allowed; 'unreachable': 5xx or no answer: nothing allowed (RFC 9309 2.3.1.4). */
  readonly state: 'ok' | 'none' | 'unreachable';
  allowed(url: string): boolean;
  /** Milliseconds between two requests to this host (its Crawl-delay, bounded), 0 for none. */
  readonly delayMs: number;
  /** Sitemap URLs it names. */
  readonly sitemaps: readonly string[];
}

const ALLOW_ALL = (state: 'none' | 'ok'): HostRules => ({ state, allowed: () => true, delayMs: 0, sitemaps: [] });

/** Rules from a robots.txt body. */
export function parseRobots(robotsUrl: string, body: string): HostRules {
  const robots = robotsParser(robotsUrl, body.slice(0, MAX_ROBOTS_CHARS));
  const delay = robots.getCrawlDelay(ROBOTS_AGENT);
  return {
    state: 'ok',
    // undefined: the URL is not on this robots.txt's host (checked by the caller); treated as allowed.
    allowed: (url) => robots.isAllowed(url, ROBOTS_AGENT) !== false,
    delayMs: typeof delay === 'number' && Number.isFinite(delay) && delay > 0 ? Math.min(MAX_CRAWL_DELAY_MS, Math.round(delay * 1000)) : 0,
    sitemaps: robots.getSitemaps(),
  };
}

/**
 * robots.txt per origin, fetched once per run (concurrent askers share the
 * fetch). With `respect` false every URL is allowed and no robots.txt is
 * read unless sitemaps need it.
 */
export class RobotsCache {
  private readonly byOrigin = new Map<string, Promise<HostRules>>();
  private readonly known = new Map<string, HostRules>();

  constructor(private readonly fetchText: FetchText, private readonly gate: HostGate, private readonly signal: AbortSignal) {}

  /** The rules of the URL's origin (fetching robots.txt the first time). */
  forUrl(url: string): Promise<HostRules> {
    const origin = new URL(url).origin;
    let p = this.byOrigin.get(origin);
    if (p === undefined) {
      p = this.load(origin).then((r) => {
        this.known.set(origin, r);
        return r;
      });
      this.byOrigin.set(origin, p);
    }
    return p;
  }

  /** The rules of the URL's origin if already read (enqueue-time checks; the fetch-time check always reads them). */
  cached(url: string): HostRules | undefined {
    try {
      return this.known.get(new URL(url).origin);
    } catch {
      return undefined;
    }
  }

  private async load(origin: string): Promise<HostRules> {
    const url = `${origin}/robots.txt`;
    const host = new URL(origin).host;
    try {
      const r = await this.gate.run(host, 0, () => this.fetchText(url, this.signal));
      if (r.statusCode >= 200 && r.statusCode < 300) return parseRobots(url, r.body);
      if (r.statusCode === 429 || r.statusCode >= 500) return { state: 'unreachable', allowed: () => false, delayMs: 0, sitemaps: [] };
      return ALLOW_ALL('none');
    } catch (e) {
      if (this.signal.aborted) throw e;
      return { state: 'unreachable', allowed: () => false, delayMs: 0, sitemaps: [] };
    }
  }
}

/**
 * At most `perHost` requests in flight to one host, and with a delay the
 * starts of two requests to it at least that far apart (one at a time
 * then). Waiters are served in arrival order.
 */
export class HostGate {
  private readonly hosts = new Map<string, { active: number; nextStart: number; queue: (() => void)[] }>();

  constructor(private readonly perHost: number, private readonly now: () => number = Date.now) {}

  async run<T>(host: string, delayMs: number, work: () => Promise<T>): Promise<T> {
    const h = this.hosts.get(host) ?? { active: 0, nextStart: 0, queue: [] };
    this.hosts.set(host, h);
    const limit = delayMs > 0 ? 1 : this.perHost;
    // Wait for a slot (arrival order), then for the host's next start time.
    while (h.active >= limit) await new Promise<void>((resolve) => h.queue.push(resolve));
    h.active++;
    try {
      for (let wait = h.nextStart - this.now(); wait > 0; wait = h.nextStart - this.now()) {
        await new Promise((r) => setTimeout(r, wait));
      }
      h.nextStart = Math.max(h.nextStart, this.now() + delayMs);
      return await work();
    } finally {
      h.active--;
      h.queue.shift()?.();
    }
  }

  /** Hold every request to `host` for `ms` (a 429 or 503 from it). */
  pause(host: string, ms: number): void {
    const h = this.hosts.get(host) ?? { active: 0, nextStart: 0, queue: [] };
    h.nextStart = Math.max(h.nextStart, this.now() + ms);
    this.hosts.set(host, h);
  }
}
