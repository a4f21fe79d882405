/**
 * The browser fetcher (render_js, wait_for, screenshots): Crawlee's
 * BrowserPool driving Chromium through Playwright, one fresh incognito
 * context per fetch, a bounded number of pages at once, and every byte the
 * browser sends routed through a per-fetch egress proxy (egress-proxy.ts)
 * that applies the guard to the address actually connected.
 *
 * Resource rules: a fetch holds a page slot from the moment it leaves the
 * queue until its page and context are closed, on every path (success,
 * failure, timeout, client abort); stop() destroys the pool and then makes
 * sure, by pid, that no Chromium process of this pool is left.
 */
import { existsSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { BrowserContext, Page, Response } from 'playwright';
import type { FetcherPlugin, FetchRequest, FetchResult, ScreenshotSpec } from '../../sdk/scrape.js';
import { defineFetcher } from '../../sdk/scrape.js';
import { BadRequest, InternalError, isApiFailure, ServiceUnavailable, TargetNotAllowed, TargetResponseInvalid, TargetTimeout, TargetUnreachable } from '../../../core/errors.js';
import type { ApiFailure } from '../../../core/errors.js';
import { abortable } from '../../../core/abort.js';
import type { Egress, Resolver } from '../../../core/ports.js';
import { checkTargetUrl } from '../../../core/egress.js';
import { EGRESS_HEADER, startEgressProxy, type EgressProxy } from './egress-proxy.js';
import { imageSize } from './image-size.js';
import { looksLike, processTree } from './processes.js';

/** How long to wait for the load event once the document is in (then the page is taken as it is). */
const LOAD_WAIT_MS = 10_000;

export interface BrowserFetcherOptions {
  /** How the browser's egress proxy resolves and judges targets (the guard applies the policy below). */
  readonly egress: Egress;
  /** Default /usr/bin/chromium. */
  readonly executablePath?: string;
  /** Pages rendering at once (the pool bound). Default 4. */
  readonly maxPages?: number;
  /** Launch Chromium when the server starts instead of on the first render. Default false. */
  readonly warmOnStart?: boolean;
  /** Fetches allowed to wait for a page; beyond it a fetch is refused at once (503). Default 16 x maxPages. */
  readonly maxQueue?: number;
  /** Allow loopback/private/link-local/CGNAT targets (self-hosting on a LAN, tests). */
  readonly allowPrivate: boolean;
  /** Extra allow-list consulted before the address classes (see core/egress.ts EgressPolicy). */
  readonly allowAddress?: (ip: string) => boolean;
  /** Replaces DNS for the egress proxy (tests). */
  readonly resolver?: Resolver;
  /** Pages per Chromium process before the pool starts another. Default maxPages (one browser). */
  readonly maxOpenPagesPerBrowser?: number;
  /** Pages a browser serves before it is replaced (memory hygiene). Default 100. */
  readonly retireBrowserAfterPageCount?: number;
  /** An idle browser is closed after this long (the next fetch starts a new one, ~0.5 s). Default 300. */
  readonly idleBrowserSecs?: number;
  /**
   * After `load`, how long to wait at most for the network to go quiet (500 ms
   * without requests), so content fetched by scripts is in. Skipped when the
   * request has wait_for (that says what to wait for). 0 disables. Default 1000.
   */
  readonly networkIdleMs?: number;
  /** The rendered DOM larger than this (UTF-8 bytes) fails with TargetResponseInvalid. Default 10 MiB. */
  readonly maxBodyBytes?: number;
  /** Full-page screenshots are cut at this height (pixels). Default 16384. */
  readonly maxScreenshotHeight?: number;
  /** More Chromium switches. */
  readonly extraArgs?: readonly string[];
}

export interface BrowserFetcherStats {
  /** Chromium browsers running (starting, active, or retired and draining). */
  readonly browsers: number;
  /** Pages (with their contexts) open or being opened. */
  readonly openPages: number;
  /** Fetches waiting for a page. */
  readonly queued: number;
  /** Live pids of this pool's Chromium processes (Linux; empty elsewhere). */
  readonly chromiumPids: number[];
}

export type BrowserFetcher = FetcherPlugin<'fetcher-browser'> & {
  stop(): Promise<void>;
  /**
   * Print an HTML document to PDF (A4 unless its @page rule says otherwise, backgrounds) in this pool's Chromium:
   * a fresh context with JavaScript off whose every request goes to the
   * deny-all proxy, so the document can load nothing from anywhere.
   */
  printPdf(html: string, signal: AbortSignal): Promise<Uint8Array>;
  stats(): BrowserFetcherStats;
};

/**
 * The switches ENVIRONMENT.md found necessary, plus no QUIC and no WebRTC UDP
 * (both would bypass the HTTP proxy). (`--disable-crashpad-for-testing` would
 * keep the crash handler from starting, but it makes every navigation abort
 * with this Chromium build; the handlers are tracked through their dump
 * directory instead, see `marker`.)
 */
const BASE_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-breakpad',
  '--disable-quic',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

const DEFAULT_VIEWPORT = { width: 1280, height: 800 } as const;

// ---------------------------------------------------------------------------
// Crawlee's browser-pool opens, at module load, an unauthenticated forward
// proxy on every interface (proxy-server.js, for its own proxy feature, which
// this fetcher does not use). Pre-seed the CommonJS cache with a stand-in so
// that server never exists; our launch and context options always name our
// own proxy, so the stand-in's answer is never used.
type PoolModule = typeof import('@crawlee/browser-pool');
let poolModule: Promise<{ pool: PoolModule; chromium: typeof import('playwright').chromium }> | undefined;

function loadPoolModule() {
  poolModule ??= (async () => {
    const req = createRequire(import.meta.url);
    const main = realpathSync(req.resolve('@crawlee/browser-pool'));
    const stubPath = join(dirname(main), 'proxy-server.js');
    if (!req.cache[stubPath]) {
      const stub = new Module(stubPath);
      stub.filename = stubPath;
      stub.loaded = true;
      // Port 9 (discard): were it ever used, nothing is reachable through it.
      stub.exports = { getLocalProxyAddress: async () => 'http://127.0.0.1:9' };
      req.cache[stubPath] = stub;
    }
    const pool = await import('@crawlee/browser-pool');
    const { chromium } = await import('playwright');
    return { pool, chromium };
  })();
  return poolModule;
}

/** What this fetcher uses of Crawlee's BrowserPool (its generics do not survive our option object). */
interface Pool {
  newPage(options: { pageOptions: Record<string, unknown> }): Promise<unknown>;
  destroy(): Promise<void>;
  on(event: 'browserLaunched', listener: () => void): unknown;
  readonly startingBrowserControllers: ReadonlySet<unknown>;
  readonly activeBrowserControllers: ReadonlySet<unknown>;
  readonly retiredBrowserControllers: ReadonlySet<unknown>;
}

// ---------------------------------------------------------------------------

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

/** At most `max` holders; a bounded FIFO of waiters, each leaving it when its signal aborts. */
class Slots {
  private used = 0;
  private readonly waiters: Waiter[] = [];
  constructor(private readonly max: number, private readonly maxQueue: number) {}

  get queued(): number { return this.waiters.length; }

  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.used < this.max) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiters.length >= this.maxQueue) {
      return Promise.reject(new ServiceUnavailable({ message: 'Every browser page is busy and the queue is full; retry shortly', retryAfter: 1 }));
    }
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        resolve: () => resolve(this.releaser()),
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', w.onAbort, { once: true });
      this.waiters.push(w);
    });
  }

  /** Refuse everyone waiting (shutdown). */
  drain(e: unknown): void {
    for (const w of this.waiters.splice(0)) {
      w.signal.removeEventListener('abort', w.onAbort);
      w.reject(e);
    }
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiters.shift();
      if (next) {
        next.signal.removeEventListener('abort', next.onAbort);
        next.resolve(); // the slot passes straight on
      } else {
        this.used--;
      }
    };
  }
}

// ---------------------------------------------------------------------------

/** Why a fetch's own signal fired. */
const TIMED_OUT = Symbol('timed out');
const CLIENT_GONE = Symbol('client gone');
const STOPPING = Symbol('stopping');

/** Reject as soon as `signal` aborts, whatever `p` does (the guard's helper). */
const step = <T>(p: Promise<T>, signal: AbortSignal): Promise<T> => abortable(p, signal);

const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
const isTimeout = (e: unknown): boolean => e instanceof Error && e.name === 'TimeoutError';
const isInvalidSelector = (e: unknown): boolean => /is not a valid selector|Unexpected token|Failed to execute 'evaluate'|SyntaxError/i.test(errText(e));

/** Playwright selector for a wait_for or screenshot selector, never interpreted by Playwright's own extensions. */
function engineSelector(kind: 'css' | 'xpath', selector: string): string {
  return `${kind}=${selector}`;
}

function guessKind(selector: string): 'css' | 'xpath' {
  const s = selector.trimStart();
  return s.startsWith('/') || s.startsWith('(') ? 'xpath' : 'css';
}

export function createBrowserFetcher(options: BrowserFetcherOptions): BrowserFetcher {
  const executablePath = options.executablePath ?? '/usr/bin/chromium';
  const maxPages = Math.max(1, options.maxPages ?? 4);
  const slots = new Slots(maxPages, Math.max(0, options.maxQueue ?? maxPages * 16));
  const networkIdleMs = Math.max(0, options.networkIdleMs ?? 1000);
  const maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
  const maxShotHeight = Math.max(1, options.maxScreenshotHeight ?? 16_384);
  // Appears on the command line of every process of this pool: the browser
  // (a switch Chromium ignores) and its crash handlers, which daemonise out
  // of the process tree but name their dump directory.
  const marker = `scour-chromium-${randomBytes(9).toString('hex')}`;
  const crashDir = join(tmpdir(), marker);
  const exeName = basename(executablePath);
  const policy = { allowPrivate: options.allowPrivate, allowAddress: options.allowAddress, resolver: options.resolver };

  let poolPromise: Promise<{ pool: Pool; denyProxy: EgressProxy }> | undefined;
  let currentPool: Pool | undefined;
  let stopped = false;
  let openPages = 0;
  const knownPids = new Set<number>();
  const inFlight = new Set<AbortController>();

  const ensurePool = (): Promise<{ pool: Pool; denyProxy: EgressProxy }> => {
    if (poolPromise) return poolPromise;
    if (stopped) return Promise.reject(new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 }));
    // Without Chromium the service still runs; render_js alone is unavailable, and says why.
    if (!existsSync(executablePath)) {
      return Promise.reject(new ServiceUnavailable({
        message: `render_js is unavailable: Chromium is not installed at ${executablePath} (apt-get install chromium, or set SCOUR_CHROMIUM_PATH)`,
        retryAfter: 60,
      }));
    }
    const created = (async () => {
      const { pool: mod, chromium } = await loadPoolModule();
      // The browser-wide proxy refuses everything: only contexts (which carry
      // a per-fetch proxy) may reach the network; Chromium's own background
      // requests go nowhere.
      const denyProxy = await startEgressProxy({ policy: 'deny' });
      const launchProxy = { server: denyProxy.url, bypass: '<-loopback>' };
      const pool = new mod.BrowserPool({
        browserPlugins: [
          new mod.PlaywrightPlugin(chromium, {
            useIncognitoPages: true,
            launchOptions: {
              executablePath,
              headless: true,
              args: [...BASE_ARGS, ...(options.extraArgs ?? []), `--scour-pool=${marker}`],
              proxy: launchProxy,
              env: { ...process.env, BREAKPAD_DUMP_LOCATION: crashDir },
            },
          }),
        ],
        useFingerprints: false,
        maxOpenPagesPerBrowser: Math.max(1, options.maxOpenPagesPerBrowser ?? maxPages),
        retireBrowserAfterPageCount: Math.max(1, options.retireBrowserAfterPageCount ?? 100),
        retireInactiveBrowserAfterSecs: Math.max(1, options.idleBrowserSecs ?? 300),
        closeInactiveBrowserAfterSecs: Math.max(1, options.idleBrowserSecs ?? 300),
        operationTimeoutSecs: 20,
        // Without a user agent of its own, a page says what this browser is
        // (Crawlee's default claims Chrome 107 on macOS, which contradicts the
        // client hints Chromium sends).
        prePageCreateHooks: [defaultUserAgentHook as never],
      }) as unknown as Pool;
      currentPool = pool;
      pool.on('browserLaunched', () => {
        for (const pid of processTree(marker)) knownPids.add(pid);
      });
      return { pool, denyProxy };
    })();
    created.catch(() => { if (poolPromise === created) poolPromise = undefined; });
    poolPromise = created;
    return created;
  };

  const countBrowsers = (pool: Pool): number =>
    pool.startingBrowserControllers.size + pool.activeBrowserControllers.size + pool.retiredBrowserControllers.size;

  /** Open a page; counted from now until it is closed, even when the fetch gave up before it arrived. */
  const openPage = (pool: Pool, pageOptions: Record<string, unknown>, signal: AbortSignal): { page: Promise<Page>; close: () => Promise<void> } => {
    openPages++;
    let closing: Promise<void> | undefined;
    const pending = (pool.newPage({ pageOptions }) as Promise<Page>);
    const close = () => {
      closing ??= pending.then(
        async (page) => {
          let context: BrowserContext | undefined;
          try { context = page.context(); } catch { /* already gone */ }
          await page.close().catch(() => undefined);
          await context?.close().catch(() => undefined);
        },
        () => undefined,
      ).finally(() => { openPages--; });
      return closing;
    };
    return { page: step(pending, signal), close };
  };

  async function render(req: FetchRequest, signal: AbortSignal, deadline: number, timeoutSeconds: number): Promise<FetchResult> {
    const remaining = () => Math.max(1, Math.floor(deadline - performance.now()));
    const proxy = await startEgressProxy({ policy, egress: options.egress, upstream: req.proxy?.url });
    let handle: { page: Promise<Page>; close: () => Promise<void> } | undefined;
    const onAbort = () => { void handle?.close(); };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const { pool } = await step(ensurePool(), signal);
      const viewport = req.screenshot ? { width: req.screenshot.width, height: req.screenshot.height } : DEFAULT_VIEWPORT;
      const pageOptions: Record<string, unknown> = {
        proxy: { server: proxy.url, bypass: '<-loopback>' },
        viewport,
        deviceScaleFactor: 1,
        serviceWorkers: 'block',
        acceptDownloads: false,
        ...(req.userAgent ? { userAgent: req.userAgent } : {}),
        ...(Object.keys(req.headers).length > 0 ? { extraHTTPHeaders: { ...req.headers } } : {}),
      };
      handle = openPage(pool, pageOptions, signal);
      const page = await handle.page;
      page.setDefaultTimeout(remaining());

      const cookies = Object.entries(req.cookies);
      if (cookies.length > 0) {
        const origin = new URL(req.url).origin;
        await step(page.context().addCookies(cookies.map(([name, value]) => ({ name, value, url: `${origin}/` }))), signal);
      }

      // The main frame's document: the last navigation request, and its response.
      const main = page.mainFrame();
      const nav: { url: string; response: Response | null; redirect: { status: number; headers: Record<string, string>; url: string } | undefined } = { url: req.url, response: null, redirect: undefined };
      page.on('request', (r) => {
        if (r.isNavigationRequest() && r.frame() === main) nav.url = r.url();
      });
      page.on('response', (r) => {
        if (r.request().isNavigationRequest() && r.frame() === main) nav.response = r;
      });
      if (!req.followRedirects) {
        // Chromium follows redirects below routing, so the main document is
        // fetched through the context's request API (same proxy, cookies,
        // headers) without following, then handed to the page.
        let first = true;
        await step(page.route(() => true, async (route) => {
          const r = route.request();
          if (!first || !r.isNavigationRequest() || r.frame() !== main) {
            await route.continue().catch(() => undefined);
            return;
          }
          first = false;
          try {
            const response = await route.fetch({ maxRedirects: 0, timeout: remaining() });
            if (response.status() >= 300 && response.status() < 400 && response.headers().location !== undefined) {
              nav.redirect = { status: response.status(), headers: response.headers(), url: response.url() };
              await route.fulfill({ status: 200, contentType: 'text/html', body: '' });
            } else {
              await route.fulfill({ response });
            }
          } catch {
            await route.abort('failed').catch(() => undefined);
          }
        }), signal);
      }

      const started = performance.now();
      let navError: unknown;
      try {
        // goto's answer is the document it waited for; a later script navigation replaces it (see the listener).
        // The document first; then the full load, but only for a bounded time: a page whose load event
        // never fires (a hanging subresource) still answers with what it has instead of a 504.
        const first = await step(page.goto(req.url, { waitUntil: 'domcontentloaded', timeout: remaining() }), signal);
        nav.response ??= first;
        await step(page.waitForLoadState('load', { timeout: Math.max(1, Math.min(LOAD_WAIT_MS, remaining() - 200)) }), signal).catch((e: unknown) => {
          if (signal.aborted) throw e;
        });
      } catch (e) {
        if (signal.aborted) throw e;
        navError = e;
      }
      if (nav.redirect) {
        const { status, headers, url } = nav.redirect;
        if (headers[EGRESS_HEADER] === proxy.token) throw navFailure(new Error(`the egress proxy answered ${status}`), url, proxy, timeoutSeconds);
        return { url: req.url, finalUrl: url, statusCode: status, headers, contentType: headers['content-type'] ?? '', body: '', loadTimeSeconds: round((performance.now() - started) / 1000, 3) };
      }
      if (navError !== undefined) throw refusedRedirect(nav.response) ?? navFailure(navError, nav.url, proxy, timeoutSeconds);
      await checkMainResponse(nav.response, nav.url, proxy);

      if (req.waitFor) {
        const waitMs = Math.min(req.waitTimeMs ?? remaining(), remaining());
        try {
          await step(page.waitForSelector(engineSelector(req.waitFor.kind, req.waitFor.selector), { state: 'attached', timeout: waitMs }), signal);
        } catch (e) {
          if (signal.aborted) throw e;
          if (isTimeout(e)) {
            const overall = deadline - performance.now() < 50;
            throw overall
              ? new TargetTimeout({ message: `The page did not finish rendering within ${timeoutSeconds} s`, timeoutSeconds })
              : new TargetTimeout({ message: `The element "${req.waitFor.selector}" did not appear within ${round(waitMs / 1000)} s`, timeoutSeconds: round(waitMs / 1000) });
          }
          if (isInvalidSelector(e)) throw BadRequest.of('wait_for', `not a valid ${req.waitFor.kind === 'css' ? 'CSS selector' : 'XPath expression'}: ${errText(e)}`);
          throw e;
        }
      } else if (req.waitTimeMs !== undefined) {
        // wait_time without wait_for: let the page's scripts run that long after load (bounded by the timeout).
        await step(page.waitForTimeout(Math.min(req.waitTimeMs, Math.max(0, remaining() - 100))), signal);
      } else if (networkIdleMs > 0) {
        await step(page.waitForLoadState('networkidle', { timeout: Math.min(networkIdleMs, remaining()) }), signal).catch((e: unknown) => {
          if (signal.aborted) throw e;
        });
      }
      // A script may have navigated since: judge where the page ended up.
      const finalUrl = page.url();
      if (finalUrl.startsWith('chrome-error:')) throw navFailure(new Error('the page navigated to an error page'), nav.url, proxy, timeoutSeconds);
      await checkMainResponse(nav.response, nav.url, proxy);
      const body = await step(contentOf(page, remaining), signal);
      // Cheap bound first: UTF-8 takes at most 3 bytes per UTF-16 unit.
      if (body.length * 3 > maxBodyBytes && Buffer.byteLength(body, 'utf8') > maxBodyBytes) {
        throw new TargetResponseInvalid({ message: 'The rendered page is larger than the limit', details: 'the rendered DOM exceeds the size limit', limit: maxBodyBytes });
      }
      const response = nav.response;
      if (!response) throw new TargetUnreachable({ message: 'The target could not be reached', details: 'the page has no main document response' });
      const headers = await step(response.allHeaders(), signal);
      const loadTimeSeconds = round((performance.now() - started) / 1000, 3);
      const screenshot = req.screenshot ? await step(capture(page, req.screenshot, remaining, maxShotHeight), signal) : undefined;
      return {
        url: req.url,
        finalUrl,
        statusCode: response.status(),
        headers,
        contentType: headers['content-type'] ?? 'text/html',
        body,
        loadTimeSeconds,
        ...(screenshot ? { screenshot } : {}),
      };
    } finally {
      signal.removeEventListener('abort', onAbort);
      await handle?.close();
      await proxy.close();
    }
  }

  /** The response is one our proxy made (a refusal or a failed connection), not the target's. */
  async function checkMainResponse(response: Response | null, navUrl: string, proxy: EgressProxy): Promise<void> {
    if (!response) return;
    const marked = (await response.headerValue(EGRESS_HEADER).catch(() => null)) === proxy.token;
    if (!marked) return;
    throw navFailure(new Error(`the egress proxy answered ${response.status()}`), navUrl, proxy, 0);
  }

  /**
   * The main document redirected to a URL the egress guard refuses by its
   * form (ftp:, gopher:, credentials, ...): Chromium stops such a redirect
   * itself (net::ERR_ABORTED) before the egress proxy sees it, so the 3xx is
   * judged here, to answer TARGET_NOT_ALLOWED as the plain fetcher does, not
   * TARGET_UNREACHABLE. A redirect to file: or data: shows no 3xx at all
   * (net::ERR_UNSAFE_REDIRECT, see navFailure); one to javascript: aborts
   * without a trace and stays TARGET_UNREACHABLE.
   */
  function refusedRedirect(response: Response | null): TargetNotAllowed | undefined {
    if (!response) return undefined;
    const status = response.status();
    const location = response.headers().location;
    if (status < 300 || status >= 400 || !location) return undefined;
    let next: URL;
    try {
      next = new URL(location, response.url());
    } catch {
      return undefined;
    }
    const check = checkTargetUrl(next.href, policy);
    if (check.ok) return undefined;
    return new TargetNotAllowed({ message: 'The target URL is not allowed', field: 'url', reason: `redirect to ${redact(next.href)} is not allowed: ${check.reason}` });
  }

  function navFailure(e: unknown, navUrl: string, proxy: EgressProxy, timeoutSeconds: number): ApiFailure {
    if (isApiFailure(e)) return e;
    const outcome = proxy.outcomeFor(navUrl);
    if (outcome?.kind === 'refused') {
      return new TargetNotAllowed({ message: 'The target URL is not allowed', field: 'url', reason: navUrl === '' ? outcome.reason : `${redact(navUrl)}: ${outcome.reason}` });
    }
    if (outcome?.kind === 'failed') return new TargetUnreachable({ message: 'The target could not be reached', details: outcome.reason });
    if (isTimeout(e)) return new TargetTimeout({ message: `The target did not finish loading within ${timeoutSeconds} s`, timeoutSeconds });
    const text = errText(e);
    if (/Download is starting/i.test(text)) return new TargetResponseInvalid({ message: 'The target answered with a download, not a page', details: 'the response is a file download' });
    const net = /net::ERR_[A-Z_0-9]+/.exec(text)?.[0];
    if (net === 'net::ERR_UNSAFE_REDIRECT') {
      // A redirect to a local scheme (file:, data:, ...), which Chromium refuses before any event shows its Location.
      return new TargetNotAllowed({ message: 'The target URL is not allowed', field: 'url', reason: `${redact(navUrl)} redirected to a URL that is not allowed: a scheme other than http and https` });
    }
    return new TargetUnreachable({ message: 'The target could not be reached', details: net ?? text });
  }

  const fetch = async (req: FetchRequest): Promise<FetchResult> => {
    if (stopped) throw new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 });
    if (req.signal.aborted) throw req.signal.reason;
    // The operation checked the URL already; a non-http(s) URL here would never meet the proxy (file:, data:).
    const check = checkTargetUrl(req.url, policy);
    if (!check.ok) throw new TargetNotAllowed({ message: 'The target URL is not allowed', field: 'url', reason: check.reason });
    const t0 = performance.now();
    const deadline = t0 + req.timeoutMs;
    const timeoutSeconds = round(req.timeoutMs / 1000);
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(TIMED_OUT), req.timeoutMs);
    const onClient = () => ctl.abort(CLIENT_GONE);
    req.signal.addEventListener('abort', onClient, { once: true });
    inFlight.add(ctl);
    try {
      const release = await slots.acquire(ctl.signal);
      try {
        return await render(req, ctl.signal, deadline, timeoutSeconds);
      } finally {
        release();
      }
    } catch (e) {
      // A verdict reached before the signal fired stands (closing the page
      // takes a moment, during which the timer may still go off).
      const aborted = e === TIMED_OUT || e === CLIENT_GONE || e === STOPPING;
      if (!aborted && isApiFailure(e)) throw e;
      const why: unknown = aborted ? e : ctl.signal.aborted ? ctl.signal.reason : undefined;
      if (why === CLIENT_GONE) throw req.signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
      if (why === TIMED_OUT) throw new TargetTimeout({ message: `The page did not finish rendering within ${timeoutSeconds} s`, timeoutSeconds });
      if (why === STOPPING || stopped) throw new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 });
      if (/Failed to launch|Executable doesn't exist|spawn .* ENOENT/i.test(errText(e))) {
        throw new ServiceUnavailable({ message: `render_js is unavailable: Chromium could not be started (${executablePath})`, retryAfter: 60 });
      }
      throw new InternalError({ message: `The browser failed: ${errText(e)}` });
    } finally {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onClient);
      inFlight.delete(ctl);
    }
  };

  const stop = async (): Promise<void> => {
    stopped = true;
    for (const c of inFlight) c.abort(STOPPING);
    slots.drain(new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 }));
    const current = poolPromise;
    poolPromise = undefined;
    currentPool = undefined;
    if (!current) return;
    let res: { pool: Pool; denyProxy: EgressProxy } | undefined;
    try { res = await current; } catch { return; }
    for (const pid of processTree(marker)) knownPids.add(pid);
    await res.pool.destroy().catch(() => undefined);
    await res.denyProxy.close();
    // Whatever the driver did, nothing of this pool may outlive stop().
    const deadline = Date.now() + 3000;
    const left = () => [...new Set([...knownPids, ...processTree(marker)])].filter((pid) => looksLike(pid, [marker, exeName]));
    while (left().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const pid of left()) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
    knownPids.clear();
    await rm(crashDir, { recursive: true, force: true }).catch(() => undefined);
  };

  const plugin = defineFetcher({
    name: 'fetcher-browser',
    mode: 'browser',
    description: 'Renders pages in Chromium (render_js, wait_for, screenshots), every request through the egress guard.',
    async start() {
      // By default Chromium starts on the first render_js request, so a server (and every test server)
      // starts without it and runs without it until a render is asked for. warmOnStart launches it at boot.
      if (stopped || options.warmOnStart !== true) return;
      const { pool } = await ensurePool();
      const denyOnly = await startEgressProxy({ policy: 'deny' });
      try {
        const page = (await pool.newPage({ pageOptions: { proxy: { server: denyOnly.url, bypass: '<-loopback>' } } })) as Page;
        const ctx = page.context();
        await page.close().catch(() => undefined);
        await ctx.close().catch(() => undefined);
      } finally {
        await denyOnly.close();
      }
    },
    stop,
    fetch,
  });
  const printPdf = async (html: string, signal: AbortSignal): Promise<Uint8Array> => {
    const release = await slots.acquire(signal);
    const deny = await startEgressProxy({ policy: 'deny' });
    let handle: { page: Promise<Page>; close: () => Promise<void> } | undefined;
    try {
      const { pool } = await step(ensurePool(), signal);
      handle = openPage(pool, { proxy: { server: deny.url }, javaScriptEnabled: false, serviceWorkers: 'block', acceptDownloads: false }, signal);
      const page = await handle.page;
      page.setDefaultTimeout(30_000);
      await step(page.setContent(html, { waitUntil: 'load' }), signal);
      const pdf = await step(page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true }), signal);
      return new Uint8Array(pdf);
    } finally {
      await handle?.close();
      await deny.close().catch(() => undefined);
      release();
    }
  };

  return {
    ...plugin,
    stop,
    printPdf,
    stats: () => ({
      browsers: currentPool ? countBrowsers(currentPool) : 0,
      openPages,
      queued: slots.queued,
      chromiumPids: processTree(marker),
    }),
  };
}

function defaultUserAgentHook(_id: string, controller: { browser: { version(): string } }, pageOptions?: Record<string, unknown>): void {
  if (pageOptions && pageOptions.userAgent === undefined) pageOptions.userAgent = nativeUserAgent(controller.browser.version());
}

/** The reduced user agent Chrome itself sends on Linux, minus "Headless". */
function nativeUserAgent(version: string): string {
  const major = /^\d+/.exec(version)?.[0] ?? '120';
  return `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}

/** The rendered DOM; retried once when a script navigation replaced the document under us. */
async function contentOf(page: Page, remaining: () => number): Promise<string> {
  try {
    return await page.content();
  } catch (e) {
    if (!/Execution context was destroyed|navigating/i.test(errText(e))) throw e;
    await page.waitForLoadState('domcontentloaded', { timeout: remaining() }).catch(() => undefined);
    return page.content();
  }
}

async function capture(page: Page, spec: ScreenshotSpec, remaining: () => number, maxHeight: number): Promise<NonNullable<FetchResult['screenshot']>> {
  const type = spec.format;
  const shotOptions = {
    type,
    ...(type === 'jpeg' ? { quality: spec.quality ?? 80 } : {}),
    timeout: remaining(),
    animations: 'disabled' as const,
  };
  let data: Buffer;
  if (spec.selector !== undefined) {
    const field = 'screenshot_options.selector';
    const sel = engineSelector(guessKind(spec.selector), spec.selector);
    let el;
    try {
      el = await page.$(sel);
    } catch (e) {
      if (isInvalidSelector(e)) throw BadRequest.of(field, `not a valid selector: ${errText(e)}`);
      throw e;
    }
    if (!el) throw BadRequest.of(field, `no element matches "${spec.selector}"`);
    const box = await el.boundingBox();
    if (!box || box.width < 1 || box.height < 1) throw BadRequest.of(field, `the element matching "${spec.selector}" is not visible`);
    data = await el.screenshot(shotOptions);
  } else {
    let clip: { x: number; y: number; width: number; height: number } | undefined;
    if (spec.fullPage) {
      // A page can make itself arbitrarily tall; the image is cut rather than the memory blown.
      const height = await page.evaluate('Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)') as number;
      if (height > maxHeight) clip = { x: 0, y: 0, width: spec.width, height: maxHeight };
    }
    data = await page.screenshot({ ...shotOptions, fullPage: spec.fullPage, ...(clip ? { clip } : {}) });
  }
  const size = imageSize(data);
  if (!size) throw new InternalError({ message: 'The browser produced an unreadable screenshot' });
  return {
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    contentType: type === 'png' ? 'image/png' : 'image/jpeg',
    width: size.width,
    height: size.height,
  };
}
