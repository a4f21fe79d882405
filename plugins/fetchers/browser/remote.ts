/**
 * Browsers that run elsewhere (SCOUR_BROWSER_WS_ENDPOINT): a Playwright
 * browser server (`chromium.launchServer`, `npx playwright run-server`;
 * ws:// or wss://, joined with `chromium.connect`) or a CDP endpoint such as
 * Browserless's (written cdp+ws:// or cdp+wss://, joined with
 * `chromium.connectOverCDP`). The fetcher uses this in place of Crawlee's
 * local pool: the same newPage(pageOptions) gives a fresh context with its
 * page on one of the endpoints, so every context still carries its own
 * egress proxy (which must be reachable from the remote browser, see
 * egress-proxy.ts `listen`).
 *
 * Spreading: a page goes to the least busy endpoint that is up (round robin
 * among equals). An endpoint that cannot be joined, or whose browser goes
 * away, is skipped for a back-off (1 s, doubling to 30 s) and then tried
 * again; when none can be joined the render is refused with the usual
 * "render_js is unavailable" (503 with Retry-After).
 */
import type { Browser, BrowserContext, Page } from 'playwright';
import { ServiceUnavailable } from '../../../core/errors.js';

export interface RemoteEndpoint {
  /** What is handed to Playwright (the cdp+ marker taken off). */
  readonly url: string;
  readonly protocol: 'playwright' | 'cdp';
  /** For logs and messages: scheme, host, port and path; no credentials, no query (tokens live there). */
  readonly label: string;
}

/**
 * One endpoint of SCOUR_BROWSER_WS_ENDPOINT: ws(s)://... (a Playwright
 * browser server) or cdp+ws(s)://... (a CDP endpoint); a reason otherwise.
 */
export function parseBrowserEndpoint(text: string): RemoteEndpoint | string {
  const s = text.trim();
  const m = /^(cdp\+)?(wss?):\/\//i.exec(s);
  if (!m) return `${JSON.stringify(s.slice(0, 80))} is not a ws://, wss://, cdp+ws:// or cdp+wss:// URL`;
  const raw = m[1] ? s.slice(m[1].length) : s;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `${JSON.stringify(s.slice(0, 80))} is not a valid URL`;
  }
  if (u.hostname === '') return `${JSON.stringify(s.slice(0, 80))} has no host`;
  return { url: u.href, protocol: m[1] ? 'cdp' : 'playwright', label: `${m[1] ? 'cdp+' : ''}${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}` };
}

/** SCOUR_BROWSER_WS_ENDPOINT: comma-separated endpoints; the reasons of the ones that are not. */
export function parseBrowserEndpoints(text: string): { readonly endpoints: RemoteEndpoint[]; readonly errors: string[] } {
  const endpoints: RemoteEndpoint[] = [];
  const errors: string[] = [];
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const e = parseBrowserEndpoint(part);
    if (typeof e === 'string') errors.push(e);
    else endpoints.push(e);
  }
  return { endpoints, errors };
}

/** What Playwright's chromium is used for here. */
export interface Connector {
  connect(wsEndpoint: string, options: { timeout: number }): Promise<Browser>;
  connectOverCDP(endpointURL: string, options: { timeout: number }): Promise<Browser>;
}

/** Join one endpoint within `timeoutMs` (doctor, and the pool below). */
export function joinEndpoint(chromium: Connector, e: RemoteEndpoint, timeoutMs: number): Promise<Browser> {
  return e.protocol === 'cdp' ? chromium.connectOverCDP(e.url, { timeout: timeoutMs }) : chromium.connect(e.url, { timeout: timeoutMs });
}

const MIN_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

interface Remote {
  readonly endpoint: RemoteEndpoint;
  browser: Browser | undefined;
  joining: Promise<Browser> | undefined;
  /** Pages of this endpoint held now (being opened, or open). */
  pages: number;
  backoffMs: number;
  /** Not tried again before this (ms since epoch). */
  retryAt: number;
  lastError: string | undefined;
}

export interface RemotePoolOptions {
  readonly endpoints: readonly RemoteEndpoint[];
  readonly chromium: Connector;
  /** Bound of joining one endpoint. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Page options completed for a given browser (the fetcher's default user agent). */
  readonly prepare?: (browser: Browser, pageOptions: Record<string, unknown>) => void;
  readonly now?: () => number;
}

export class RemotePool {
  private readonly remotes: Remote[];
  private next = 0;
  private destroyed = false;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly options: RemotePoolOptions) {
    this.remotes = options.endpoints.map((endpoint) => ({ endpoint, browser: undefined, joining: undefined, pages: 0, backoffMs: 0, retryAt: 0, lastError: undefined }));
    this.timeoutMs = options.connectTimeoutMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Browsers joined (the fetcher's stats). */
  get connected(): number { return this.remotes.filter((r) => r.browser !== undefined).length; }

  /** Each endpoint, with its pages and whether it is skipped for now (tests, logs). */
  status(): { label: string; connected: boolean; pages: number; skippedForMs: number; lastError: string | undefined }[] {
    const now = this.now();
    return this.remotes.map((r) => ({ label: r.endpoint.label, connected: r.browser !== undefined, pages: r.pages, skippedForMs: Math.max(0, r.retryAt - now), lastError: r.lastError }));
  }

  /** A fresh context with its page on the least busy endpoint that can be joined. */
  async newPage({ pageOptions }: { pageOptions: Record<string, unknown> }): Promise<Page> {
    if (this.destroyed) throw new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 });
    const now = this.now();
    const start = this.next++;
    const order = this.remotes
      .map((r, i) => ({ r, turn: (i - start + this.remotes.length * 1024) % this.remotes.length }))
      .filter(({ r }) => r.retryAt <= now)
      .sort((a, b) => a.r.pages - b.r.pages || a.turn - b.turn)
      .map(({ r }) => r);
    for (const r of order) {
      r.pages++;
      let browser: Browser;
      try {
        browser = await this.join(r);
      } catch {
        r.pages--;
        continue;
      }
      let context: BrowserContext | undefined;
      try {
        const opts = { ...pageOptions };
        this.options.prepare?.(browser, opts);
        context = await browser.newContext(opts);
        const page = await context.newPage();
        page.once('close', () => { r.pages--; });
        return page;
      } catch (e) {
        r.pages--;
        await context?.close().catch(() => undefined);
        if (this.destroyed) throw e;
        // A browser that went away is skipped for a while and another is tried; any other failure is this render's.
        if (browser.isConnected()) throw e;
        this.down(r, `the browser went away (${errText(e)})`);
      }
    }
    // Which endpoint failed how is for the operator (status(), scour doctor), not for the API's callers.
    const soonest = Math.min(...this.remotes.map((r) => r.retryAt));
    const n = this.remotes.length;
    throw new ServiceUnavailable({
      message: `render_js is unavailable: ${n === 1 ? 'the remote browser' : `none of the ${n} remote browsers`} (SCOUR_BROWSER_WS_ENDPOINT) could be reached; retry shortly`,
      retryAfter: Math.max(1, Math.ceil((soonest - this.now()) / 1000)),
    });
  }

  /** Disconnect from every endpoint (the contexts made here are closed with it; the remote browsers go on). */
  async destroy(): Promise<void> {
    this.destroyed = true;
    await Promise.all(this.remotes.map(async (r) => {
      const b = r.browser ?? (await r.joining?.catch(() => undefined));
      r.browser = undefined;
      await b?.close().catch(() => undefined);
    }));
  }

  private join(r: Remote): Promise<Browser> {
    if (r.browser?.isConnected()) return Promise.resolve(r.browser);
    r.joining ??= (async () => {
      try {
        const b = await joinEndpoint(this.options.chromium, r.endpoint, this.timeoutMs);
        if (this.destroyed) {
          await b.close().catch(() => undefined);
          throw new Error('shutting down');
        }
        r.browser = b;
        r.backoffMs = 0;
        r.lastError = undefined;
        b.once('disconnected', () => {
          if (r.browser !== b) return;
          r.browser = undefined;
          if (!this.destroyed) this.down(r, 'the browser went away');
        });
        return b;
      } catch (e) {
        this.down(r, errText(e));
        throw e;
      } finally {
        r.joining = undefined;
      }
    })();
    return r.joining;
  }

  private down(r: Remote, why: string): void {
    r.lastError = why;
    r.backoffMs = Math.min(MAX_BACKOFF_MS, r.backoffMs === 0 ? MIN_BACKOFF_MS : r.backoffMs * 2);
    r.retryAt = this.now() + r.backoffMs;
  }
}

/** The first line of an error, any query string of a ws URL in it (where tokens go) left out. */
export const errText = (e: unknown): string =>
  ((e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '').slice(0, 300).split(' ').map(withoutQuery).join(' ');

function withoutQuery(word: string): string {
  const at = word.toLowerCase().indexOf('ws://') >= 0 ? word.toLowerCase().indexOf('ws://') : word.toLowerCase().indexOf('wss://');
  if (at < 0) return word;
  const cut = [word.indexOf('?', at), word.indexOf('#', at)].filter((i) => i >= 0);
  return cut.length === 0 ? word : `${word.slice(0, Math.min(...cut))}?…`;
}
