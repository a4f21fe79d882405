/**
 * The browser fetcher (render_js, wait_for, screenshots, actions: see actions.ts): Crawlee's
 * BrowserPool driving Chromium through Playwright, one fresh incognito
 * context per fetch, a bounded number of pages at once, and every byte the
 * browser sends routed through the fetch's own egress proxy (egress-proxy.ts)
 * that applies the guard to the address actually connected.
 *
 * Fast path (issue 15): a few fresh, never-used contexts are made ahead
 * (warm-pool.ts), each with its page and an unbound egress proxy that
 * refuses everything until the fetch that takes it binds it to its own
 * policy; a context serves one fetch and is then closed, never reused, so
 * no cookie or storage crosses from one request (or account) to the next.
 * The page is read when the request's own condition holds (settle.ts: its
 * wait_for, or DOM ready plus a short quiet period of the network), never
 * after a fixed sleep; fonts, media and images are not fetched unless a
 * screenshot needs them; the DOM is read over CDP (no script world to set
 * up); the page is closed after the answer is handed back.
 *
 * Resource rules: at most maxPages fetches hold a page (a slot) at once,
 * from the moment they leave the queue to their answer; every page and
 * context is closed on every path (success, failure, timeout, client abort),
 * and at most maxPages are closing at once (a fetch waits for room first);
 * the warm pool holds at most prewarmContexts more. stop() closes the pool
 * and then makes sure, by pid, that no Chromium process of it is left.
 *
 * Remote browsers (remoteEndpoints, remote.ts): the pages come from browsers
 * joined over a WebSocket instead of Crawlee's local pool; everything else
 * (fresh contexts, warm pool, egress proxies, settle, reading) is the same.
 * Their proxies then listen where proxyListen says, for the remote browser
 * to reach them; stop() disconnects and leaves the browsers running.
 */
import { existsSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { BrowserContext, CDPSession, Page, Response } from 'playwright';
import type { FetcherPlugin, FetchRequest, FetchResult, ScreenshotSpec } from '../../sdk/scrape.js';
import { defineFetcher } from '../../sdk/scrape.js';
import { BadRequest, InternalError, isApiFailure, ServiceUnavailable, TargetNotAllowed, TargetResponseInvalid, TargetTimeout, TargetUnreachable } from '../../../core/errors.js';
import type { ApiFailure } from '../../../core/errors.js';
import { abortable } from '../../../core/abort.js';
import type { Egress, Resolver } from '../../../core/ports.js';
import { checkTargetUrl } from '../../../core/egress.js';
import { EGRESS_HEADER, startEgressProxy, type EgressProxy, type ProxyListen } from './egress-proxy.js';
import { imageSize } from './image-size.js';
import { looksLike, processTree } from './processes.js';
import { NetworkTracker } from './settle.js';
import { runActions } from './actions.js';
import { RemotePool, type RemoteEndpoint } from './remote.js';
import { PhaseClock, type RenderTiming } from './timing.js';
import { WarmPool, type Fresh } from './warm-pool.js';

export { RENDER_PHASES, type RenderPhase, type RenderTiming } from './timing.js';

/** The 'load' settle rule: how long to wait for the load event once the document is in (then the page is taken as it is). */
const LOAD_WAIT_MS = 10_000;

/** Of a render with actions, the time kept for reading the page after them (at most a fifth of the timeout). */
const ACTIONS_READ_RESERVE_MS = 3_000;
/** A screenshot action's settings when the request asks for no screenshot of its own (the viewport's size). */
const ACTION_SHOT: ScreenshotSpec = { fullPage: false, width: 1280, height: 800, format: 'png', quality: undefined, selector: undefined };

/** What a page never needs for its HTML: not fetched unless a screenshot will show it (CDP Fetch resource types). */
const BLOCKED_TYPES = ['Image', 'Font', 'Media'] as const;

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
   * Fresh contexts (each with its page and unbound egress proxy) made ahead
   * and kept ready; each serves one fetch and is closed. A fetch with its own
   * user agent gets a context made for it. 0 makes every context on demand.
   * Default 2 (at most maxPages).
   */
  readonly prewarmContexts?: number;
  /**
   * When a page without wait_for is read. 'quiet' (default): at DOM ready
   * (DOMContentLoaded), once no request of the page has been in flight for
   * networkQuietMs, or settleMaxMs after DOM ready in any case. 'load' (the
   * rule before issue 15, kept for comparison): the load event (at most 10 s),
   * then up to networkIdleMs for 500 ms without requests.
   */
  readonly settle?: 'quiet' | 'load';
  /** The quiet period of the 'quiet' rule. Default 100 ms. */
  readonly networkQuietMs?: number;
  /** The 'quiet' rule's bound after DOM ready; then the page is taken as it is. Default 2000 ms. */
  readonly settleMaxMs?: number;
  /** The 'load' rule: after `load`, how long to wait at most for 500 ms without requests. 0 disables. Default 1000. */
  readonly networkIdleMs?: number;
  /** Do not fetch fonts, media and images when no screenshot is asked for. Default true. */
  readonly blockResources?: boolean;
  /** Close the page before handing back the answer (the behaviour before issue 15; slower). Default false: closed just after. */
  readonly closeBeforeAnswer?: boolean;
  /** The rendered DOM larger than this (UTF-8 bytes) fails with TargetResponseInvalid. Default 10 MiB. */
  readonly maxBodyBytes?: number;
  /** Full-page screenshots are cut at this height (pixels). Default 16384. */
  readonly maxScreenshotHeight?: number;
  /** More Chromium switches (a --disable-features here is merged into the fetcher's own list). */
  readonly extraArgs?: readonly string[];
  /**
   * Start Chromium without what a headless fetcher never shows or uses (see
   * LEAN_DISABLED_FEATURES): about three quarters of the CPU a new context
   * costs. Default true; false only to measure the behaviour before issue 15.
   */
  readonly leanBrowser?: boolean;
  /** Called once per render, after its page is released, with where the time went (benchmarks, metrics). */
  readonly onTiming?: (timing: RenderTiming) => void;
  /**
   * Browsers elsewhere to render in instead of launching Chromium here
   * (SCOUR_BROWSER_WS_ENDPOINT; parse with parseBrowserEndpoints in
   * remote.ts). The launch options above (executablePath, extraArgs,
   * leanBrowser, the pool's browser counts) do not apply to them.
   */
  readonly remoteEndpoints?: readonly RemoteEndpoint[];
  /** Bound of joining one remote browser. Default 10 s. */
  readonly remoteConnectTimeoutMs?: number;
  /** Where the contexts' egress proxies listen and how the browser reaches them (a remote browser must). Default loopback, any port. */
  readonly proxyListen?: ProxyListen;
}

export interface BrowserFetcherStats {
  /** Chromium browsers running (starting, active, or retired and draining). */
  readonly browsers: number;
  /** Pages (with their contexts) held by fetches: being opened or taken, or rendering, until the answer. */
  readonly openPages: number;
  /** Fresh contexts ready in the warm pool. */
  readonly warmContexts: number;
  /** Pages (with their contexts and proxies) being closed after their answer. */
  readonly closingPages: number;
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

/**
 * Chromium features switched off when leanBrowser (the default). Chromium 156
 * gives every new window, that is every browser context, a preloaded WebUI
 * omnibox popup (chrome://omnibox-popup.top-chrome/, with its AI-mode variant:
 * about 400 module scripts and their custom elements in a renderer of its
 * own), about 0.75 s of CPU per context on a 2-core machine, more than a
 * small page's whole render; and a spare renderer process per context, kept
 * ready for a second navigation that a one-fetch context never makes (the
 * page's first navigation stays in the renderer its about:blank had).
 * Measured with /proc CPU counters on 12 contexts (context, a trivial page,
 * close): 655-750 ms of Chromium CPU each with them, 232-262 ms without.
 */
const LEAN_DISABLED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup', 'SpareRendererForSitePerProcess'];

/**
 * Playwright's own --disable-features list (playwright-core 1.65,
 * chromiumSwitches.ts). Chromium honours only the last --disable-features
 * switch, so the fetcher's switch, which comes after Playwright's, must
 * repeat it; test/fetchers/browser-fast-path.test.ts reads the launched
 * browser's command line and fails when Playwright's list has something this
 * one lacks (after a Playwright upgrade).
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync', 'DestroyProfileOnBrowserClose', 'HttpsUpgrades', 'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay', 'MediaRouter', 'PaintHolding', 'ThirdPartyStoragePartitioning', 'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin', 'OptimizationHints', 'NetworkTimeServiceQuerying', 'AimEnabled', 'PreconnectToSearch',
  'msForceBrowserSignIn', 'msEdgeUpdateLaunchServicesPreferredVersion',
];

/** The launch switches: BASE_ARGS, the caller's extra ones, and one --disable-features with every feature asked to be off. */
export function launchArgs(extraArgs: readonly string[], lean: boolean): string[] {
  const disabled = lean ? [...PLAYWRIGHT_DISABLED_FEATURES, ...LEAN_DISABLED_FEATURES] : [];
  const rest: string[] = [];
  for (const a of extraArgs) {
    const m = /^--disable-features=(.*)$/.exec(a);
    if (m) disabled.push(...(m[1] ?? '').split(',').filter(Boolean));
    else rest.push(a);
  }
  if (!lean && disabled.length > 0) disabled.unshift(...PLAYWRIGHT_DISABLED_FEATURES);
  return [...BASE_ARGS, ...rest, ...(disabled.length > 0 ? [`--disable-features=${[...new Set(disabled)].join(',')}`] : [])];
}

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

/** Where the fetcher's pages come from: Crawlee's BrowserPool (a local Chromium) or the remote browsers (remote.ts). */
interface Pool {
  newPage(options: { pageOptions: Record<string, unknown> }): Promise<unknown>;
  destroy(): Promise<void>;
  /** Browsers running (starting, active, or retired and draining), or joined. */
  browsers(): number;
}

/** What this fetcher uses of Crawlee's BrowserPool (its generics do not survive our option object). */
interface CrawleePool {
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

/** One render's timing and request counts (see timing.ts). */
interface Trace {
  readonly clock: PhaseClock;
  requests: number;
  blocked: number;
  warm: boolean;
}

/**
 * One fresh context for one fetch: its page, its own egress proxy (unbound
 * until the fetch binds it) and a CDP session on the page. Closed after that
 * one fetch, never reused.
 */
interface Lease extends Fresh {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly proxy: EgressProxy;
  readonly cdp: CDPSession;
  /** Requests refused by the resource block so far. */
  readonly blocked: number;
  /** Fetch fonts, media and images after all (a screenshot will show them). */
  unblock(): Promise<void>;
}

/** A lease on its way: abort-safe (closing it before it arrives closes it when it arrives). */
interface LeaseHandle {
  readonly lease: Promise<Lease>;
  close(): Promise<void>;
}

/** How long a page may take to close before its renderer is crashed (a busy renderer can take seconds). */
const CLOSE_GRACE_MS = 1000;

/** Whether `p` settles within `ms` (it goes on either way). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms); }),
  ]).finally(() => clearTimeout(timer));
}

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
  const prewarm = Math.max(0, Math.min(maxPages, options.prewarmContexts ?? 2));
  const settleRule = options.settle ?? 'quiet';
  const networkQuietMs = Math.max(0, options.networkQuietMs ?? 100);
  const settleMaxMs = Math.max(0, options.settleMaxMs ?? 2000);
  const blockResources = options.blockResources ?? true;
  const closeBeforeAnswer = options.closeBeforeAnswer ?? false;
  const idleMs = Math.max(1, options.idleBrowserSecs ?? 300) * 1000;
  const maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
  const maxShotHeight = Math.max(1, options.maxScreenshotHeight ?? 16_384);
  // Appears on the command line of every process of this pool: the browser
  // (a switch Chromium ignores) and its crash handlers, which daemonise out
  // of the process tree but name their dump directory.
  const marker = `scour-chromium-${randomBytes(9).toString('hex')}`;
  const crashDir = join(tmpdir(), marker);
  const exeName = basename(executablePath);
  const policy = { allowPrivate: options.allowPrivate, allowAddress: options.allowAddress, resolver: options.resolver };
  const remote = options.remoteEndpoints !== undefined && options.remoteEndpoints.length > 0 ? options.remoteEndpoints : undefined;
  const listen = options.proxyListen;

  interface Running { readonly pool: Pool; readonly denyProxy: EgressProxy; readonly warm: WarmPool<Lease> }
  let poolPromise: Promise<Running> | undefined;
  let currentPool: Pool | undefined;
  let currentWarm: WarmPool<Lease> | undefined;
  let stopped = false;
  let openPages = 0;
  const closing = new Set<Promise<void>>();
  const knownPids = new Set<number>();
  const inFlight = new Set<AbortController>();
  let lastUse = 0;
  let idleTimer: NodeJS.Timeout | undefined;

  /** A pool in use: its warm contexts made from it; local and remote pools alike. */
  const running = (pool: Pool, denyProxy: Running['denyProxy']): Running => {
    currentPool = pool;
    const warm = new WarmPool<Lease>(prewarm, () => createLease(pool, undefined));
    currentWarm = warm;
    return { pool, denyProxy, warm };
  };
  /** The pool being made, kept for the next caller; forgotten if making it fails, so a later render tries again. */
  const keep = (created: Promise<Running>): Promise<Running> => {
    created.catch(() => { if (poolPromise === created) poolPromise = undefined; });
    poolPromise = created;
    return created;
  };

  const ensurePool = (): Promise<Running> => {
    if (poolPromise) return poolPromise;
    if (stopped) return Promise.reject(new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 }));
    if (remote) {
      const created = (async () => {
        const { chromium } = await loadPoolModule();
        const denyProxy = await startEgressProxy({ policy: 'deny', listen });
        const remotes = new RemotePool({
          endpoints: remote, chromium, connectTimeoutMs: options.remoteConnectTimeoutMs,
          prepare: (browser, pageOptions) => defaultUserAgentHook('', { browser }, pageOptions),
        });
        return running({ newPage: (o) => remotes.newPage(o), destroy: () => remotes.destroy(), browsers: () => remotes.connected }, denyProxy);
      })();
      return keep(created);
    }
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
      const crawlee = new mod.BrowserPool({
        browserPlugins: [
          new mod.PlaywrightPlugin(chromium, {
            useIncognitoPages: true,
            launchOptions: {
              executablePath,
              headless: true,
              // Playwright turns Chromium's popup blocker off; on, window.open without a user gesture returns
              // null, as in a user's browser, instead of starting a page (and a renderer) per call: a page
              // opening 20 popups rendered in 4.4 s with the blocker off and 0.4 s with it on, on a loaded machine.
              ignoreDefaultArgs: ['--disable-popup-blocking'],
              args: [...launchArgs(options.extraArgs ?? [], options.leanBrowser ?? true), `--scour-pool=${marker}`],
              proxy: launchProxy,
              env: { ...process.env, BREAKPAD_DUMP_LOCATION: crashDir },
            },
          }),
        ],
        useFingerprints: false,
        // Pages rendering, closing and waiting warm, all in one browser by default.
        maxOpenPagesPerBrowser: Math.max(1, options.maxOpenPagesPerBrowser ?? maxPages * 2 + prewarm),
        retireBrowserAfterPageCount: Math.max(1, options.retireBrowserAfterPageCount ?? 100),
        retireInactiveBrowserAfterSecs: Math.max(1, options.idleBrowserSecs ?? 300),
        closeInactiveBrowserAfterSecs: Math.max(1, options.idleBrowserSecs ?? 300),
        operationTimeoutSecs: 20,
        // Without a user agent of its own, a page says what this browser is
        // (Crawlee's default claims Chrome 107 on macOS, which contradicts the
        // client hints Chromium sends).
        prePageCreateHooks: [defaultUserAgentHook as never],
      }) as unknown as CrawleePool;
      crawlee.on('browserLaunched', () => {
        for (const pid of processTree(marker)) knownPids.add(pid);
      });
      return running({ newPage: (o) => crawlee.newPage(o), destroy: () => crawlee.destroy(), browsers: () => countBrowsers(crawlee) }, denyProxy);
    })();
    return keep(created);
  };

  const countBrowsers = (pool: CrawleePool): number =>
    pool.startingBrowserControllers.size + pool.activeBrowserControllers.size + pool.retiredBrowserControllers.size;

  /**
   * A fresh context with its page, its own unbound egress proxy and a CDP
   * session; made ahead by the warm pool, or for one fetch (its own user
   * agent, or nothing warm at hand).
   */
  async function createLease(pool: Pool, userAgent: string | undefined): Promise<Lease> {
    const proxy = await startEgressProxy({ policy: 'unbound', listen });
    let page: Page | undefined;
    try {
      page = (await pool.newPage({
        pageOptions: {
          proxy: { server: proxy.url, bypass: '<-loopback>' },
          viewport: DEFAULT_VIEWPORT,
          deviceScaleFactor: 1,
          serviceWorkers: 'block',
          acceptDownloads: false,
          ...(userAgent ? { userAgent } : {}),
        },
      })) as Page;
      const context = page.context();
      const cdp = await context.newCDPSession(page);
      // Blocking is the default, set up ahead; a fetch with a screenshot lifts it.
      if (blockResources) {
        await cdp.send('Fetch.enable', { patterns: BLOCKED_TYPES.map((resourceType) => ({ urlPattern: '*', resourceType, requestStage: 'Request' as const })) });
      }
      return leaseOf(page, context, proxy, cdp);
    } catch (e) {
      if (page) {
        const ctx = (() => { try { return page.context(); } catch { return undefined; } })();
        await page.close().catch(() => undefined);
        await ctx?.close().catch(() => undefined);
      }
      await proxy.close();
      throw e;
    }
  }

  function leaseOf(page: Page, context: BrowserContext, proxy: EgressProxy, cdp: CDPSession): Lease {
    let alive = true;
    let blocked = 0;
    let closed: Promise<void> | undefined;
    const deathListeners: (() => void)[] = [];
    const die = () => {
      if (!alive) return;
      alive = false;
      for (const l of deathListeners.splice(0)) l();
    };
    page.once('crash', die);
    page.once('close', die);
    context.once('close', die);
    // A render reads one page: a popup it opens (window.open, target=_blank) is closed at once,
    // so a page that opens popups which open popups cannot multiply.
    context.on('page', (other) => {
      if (other !== page) void other.close().catch(() => undefined);
    });
    // Only the blocked resource types are ever paused (see block()): each is refused on the spot.
    cdp.on('Fetch.requestPaused', (e: { requestId: string }) => {
      blocked++;
      cdp.send('Fetch.failRequest', { requestId: e.requestId, errorReason: 'BlockedByClient' }).catch(() => undefined);
    });
    return {
      page,
      context,
      proxy,
      cdp,
      get alive() { return alive; },
      get blocked() { return blocked; },
      onDeath: (l) => { if (alive) deathListeners.push(l); else l(); },
      unblock: async () => {
        await cdp.send('Fetch.disable');
      },
      close: () => {
        closed ??= (async () => {
          alive = false;
          const pageClosed = page.close().catch(() => undefined).then(() => true);
          if (!(await within(pageClosed, CLOSE_GRACE_MS))) {
            // A renderer too busy to close (a navigation loop, a flood of timers): crash it. Chromium does that
            // from the renderer's IO thread, whatever its main thread is doing; the close then completes at once,
            // instead of holding a closing slot (and the next render waiting for it) for seconds.
            void cdp.send('Page.crash').catch(() => undefined);
            await within(pageClosed, CLOSE_GRACE_MS);
          }
          await context.close().catch(() => undefined);
          await proxy.close();
        })();
        return closed;
      },
    };
  }

  /**
   * The fetch's context: a warm one (ready, or the one being made) when the
   * fetch keeps the default user agent, else one made now. The pool is
   * refilled after the answer (see fetch), not here: making a context costs
   * a renderer process, which would slow down this very render.
   */
  function claim(req: FetchRequest, trace: Trace): LeaseHandle {
    const lease = (async () => {
      const { pool, warm } = await ensurePool();
      const warmed = req.userAgent === undefined ? await warm.take() : undefined;
      if (warmed) {
        trace.warm = true;
        return warmed;
      }
      return createLease(pool, req.userAgent);
    })();
    let closed: Promise<void> | undefined;
    return {
      lease,
      close: () => {
        closed ??= lease.then((l) => l.close(), () => undefined);
        return closed;
      },
    };
  }

  /** At most maxPages contexts closing at once: wait for room before taking another. */
  async function roomToClose(signal: AbortSignal): Promise<void> {
    while (closing.size >= maxPages) await step(Promise.race(closing), signal);
  }

  function trackClose(p: Promise<void>): Promise<void> {
    const tracked = p.catch(() => undefined).finally(() => { closing.delete(tracked); });
    closing.add(tracked);
    return tracked;
  }

  /** After idleBrowserSecs without a fetch, the warm contexts are closed (so the idle browser can be retired); the next fetch refills. */
  function touch(): void {
    lastUse = Date.now();
    if (idleTimer) return;
    const check = () => {
      idleTimer = undefined;
      const idleFor = Date.now() - lastUse;
      if (inFlight.size === 0 && idleFor >= idleMs) {
        void currentWarm?.drain();
        return;
      }
      idleTimer = setTimeout(check, Math.max(10, idleMs - idleFor));
      idleTimer.unref();
    };
    idleTimer = setTimeout(check, idleMs);
    idleTimer.unref();
  }

  /** Open a page for printPdf; counted from now until it is closed, even when the caller gave up before it arrived. */
  const openPage = (pool: Pool, pageOptions: Record<string, unknown>, signal: AbortSignal): { page: Promise<Page>; close: () => Promise<void> } => {
    openPages++;
    let closingPage: Promise<void> | undefined;
    const pending = (pool.newPage({ pageOptions }) as Promise<Page>);
    const close = () => {
      closingPage ??= pending.then(
        async (page) => {
          let context: BrowserContext | undefined;
          try { context = page.context(); } catch { /* already gone */ }
          await page.close().catch(() => undefined);
          await context?.close().catch(() => undefined);
        },
        () => undefined,
      ).finally(() => { openPages--; });
      return closingPage;
    };
    return { page: step(pending, signal), close };
  };

  async function render(req: FetchRequest, lease: Lease, signal: AbortSignal, deadline: number, timeoutSeconds: number, trace: Trace): Promise<FetchResult> {
    const { clock } = trace;
    const remaining = () => Math.max(1, Math.floor(deadline - performance.now()));
    const { page, context, proxy, cdp } = lease;
    clock.enter('proxy');
    // From here on the context's proxy applies this fetch's policy (and upstream), and nothing else's.
    proxy.bind({ policy, egress: options.egress, upstream: req.proxy?.url });
    clock.enter('setup');
    page.setDefaultTimeout(remaining());
    const network = new NetworkTracker(page);
    try {
      const setup: Promise<unknown>[] = [];
      if (req.screenshot) setup.push(page.setViewportSize({ width: req.screenshot.width, height: req.screenshot.height }));
      if (Object.keys(req.headers).length > 0) setup.push(context.setExtraHTTPHeaders({ ...req.headers }));
      const cookies = Object.entries(req.cookies);
      if (cookies.length > 0) {
        const origin = new URL(req.url).origin;
        setup.push(context.addCookies(cookies.map(([name, value]) => ({ name, value, url: `${origin}/` }))));
      }
      // A screenshot shows images and fonts (and a video's poster); without one they cannot change the HTML.
      if (blockResources && (req.screenshot || req.actions?.some((a) => a.type === 'screenshot'))) setup.push(lease.unblock());
      await step(Promise.all(setup), signal);

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

      clock.enter('navigate');
      const started = performance.now();
      let navError: unknown;
      try {
        // goto's answer is the document it waited for; a later script navigation replaces it (see the listener).
        const first = await step(page.goto(req.url, { waitUntil: 'domcontentloaded', timeout: remaining() }), signal);
        nav.response ??= first;
        if (settleRule === 'load') {
          // The old rule: the full load, but only for a bounded time (a page whose load event never
          // fires, a hanging subresource, still answers with what it has instead of a 504).
          clock.enter('load');
          await step(page.waitForLoadState('load', { timeout: Math.max(1, Math.min(LOAD_WAIT_MS, remaining() - 200)) }), signal).catch((e: unknown) => {
            if (signal.aborted) throw e;
          });
        }
      } catch (e) {
        if (signal.aborted) throw e;
        navError = e;
      }
      clock.enter('settle');
      if (nav.redirect) {
        const { status, headers, url } = nav.redirect;
        if (headers[EGRESS_HEADER] === proxy.token) throw navFailure(new Error(`the egress proxy answered ${status}`), url, proxy, timeoutSeconds);
        return { url: req.url, finalUrl: url, statusCode: status, headers, contentType: headers['content-type'] ?? '', body: '', loadTimeSeconds: round((performance.now() - started) / 1000, 3) };
      }
      if (navError !== undefined) throw refusedRedirect(nav.response) ?? navFailure(navError, nav.url, proxy, timeoutSeconds);
      // The quiet period counts from DOM ready: it runs while the main response is checked (its headers
      // can take a round trip to the browser), and ends with the check's failure if there is one.
      const settleCtl = new AbortController();
      const onAbortSettle = () => settleCtl.abort(signal.reason);
      signal.addEventListener('abort', onAbortSettle, { once: true });
      const quiet = !req.waitFor && settleRule === 'quiet'
        ? network.quiet(networkQuietMs, settleMaxMs < remaining() ? settleMaxMs : Number.POSITIVE_INFINITY, settleCtl.signal)
        : undefined;
      const settled = () => signal.removeEventListener('abort', onAbortSettle);
      if (quiet) quiet.then(settled, settled);
      else settled();
      try {
        await checkMainResponse(nav.response, nav.url, proxy);
      } catch (e) {
        settleCtl.abort(e);
        throw e;
      }

      // What the page is read after: the element wait_for names; else (by the
      // 'quiet' rule) DOM ready plus networkQuietMs without a request in flight,
      // at most settleMaxMs after DOM ready, a page still busy at the fetch's
      // deadline being a timeout; wait_time without wait_for adds its pause.
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
      } else {
        if (quiet) {
          await step(quiet, signal);
        } else if (req.waitTimeMs === undefined && networkIdleMs > 0) {
          await step(page.waitForLoadState('networkidle', { timeout: Math.min(networkIdleMs, remaining()) }), signal).catch((e: unknown) => {
            if (signal.aborted) throw e;
          });
        }
        if (req.waitTimeMs !== undefined) {
          // wait_time without wait_for: let the page's scripts run that long more (bounded by the timeout).
          await step(page.waitForTimeout(Math.min(req.waitTimeMs, Math.max(0, remaining() - 100))), signal);
        }
      }
      // Browser actions (actions.ts), within the request's time less what reading the page needs.
      const actions = req.actions !== undefined && req.actions.length > 0
        ? await runActions(req.actions, {
          page, cdp, network, signal,
          deadline: deadline - Math.min(ACTIONS_READ_RESERVE_MS, req.timeoutMs / 5),
          screenshot: (fullPage, left) => capture(page, { ...(req.screenshot ?? ACTION_SHOT), fullPage, selector: undefined }, left, maxShotHeight),
        })
        : undefined;
      clock.enter('content');
      // A script may have navigated since: judge where the page ended up.
      const finalUrl = page.url();
      if (finalUrl.startsWith('chrome-error:')) throw navFailure(new Error('the page navigated to an error page'), nav.url, proxy, timeoutSeconds);
      await checkMainResponse(nav.response, nav.url, proxy);
      const response = nav.response;
      if (!response) throw new TargetUnreachable({ message: 'The target could not be reached', details: 'the page has no main document response' });
      // The headers (a round trip to the browser at most) are asked for while the DOM is read.
      const allHeaders = response.allHeaders();
      allHeaders.catch(() => undefined);
      const body = await step(contentOf(cdp, page, remaining), signal);
      // Cheap bound first: UTF-8 takes at most 3 bytes per UTF-16 unit.
      if (body.length * 3 > maxBodyBytes && Buffer.byteLength(body, 'utf8') > maxBodyBytes) {
        throw new TargetResponseInvalid({ message: 'The rendered page is larger than the limit', details: 'the rendered DOM exceeds the size limit', limit: maxBodyBytes });
      }
      const headers = await step(allHeaders, signal);
      const loadTimeSeconds = round((performance.now() - started) / 1000, 3);
      clock.enter('screenshot');
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
        ...(actions ? { actions } : {}),
      };
    } finally {
      trace.requests = network.requests;
      trace.blocked = lease.blocked;
      network.dispose();
      clock.enter('close');
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
    touch();
    const trace: Trace = { clock: new PhaseClock(), requests: 0, blocked: 0, warm: false };
    let outcome = 'ok';
    let closed: Promise<void> = Promise.resolve();
    try {
      const release = await slots.acquire(ctl.signal);
      let handle: LeaseHandle | undefined;
      // A client that goes away (or the deadline) closes the page at once, whatever it is doing.
      const onAbort = () => { if (handle) void handle.close(); };
      ctl.signal.addEventListener('abort', onAbort, { once: true });
      openPages++;
      try {
        trace.clock.enter('context');
        await roomToClose(ctl.signal);
        handle = claim(req, trace);
        const lease = await step(handle.lease, ctl.signal);
        return await render(req, lease, ctl.signal, deadline, timeoutSeconds, trace);
      } finally {
        ctl.signal.removeEventListener('abort', onAbort);
        openPages--;
        trace.clock.enter('close');
        if (handle) closed = trackClose(handle.close());
        if (closeBeforeAnswer) await closed;
        release();
      }
    } catch (e) {
      // A verdict reached before the signal fired stands (closing the page
      // takes a moment, during which the timer may still go off).
      const failure = classify(e, ctl.signal, req.signal, timeoutSeconds);
      outcome = isApiFailure(failure) ? failure.code : 'aborted';
      throw failure;
    } finally {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onClient);
      inFlight.delete(ctl);
      touch();
      if (!stopped) currentWarm?.fill();
      const answerMs = trace.clock.elapsed();
      if (options.onTiming) void closed.then(() => report(req.url, trace, outcome, answerMs));
    }
  };

  /** What a fetch that threw answers: its own verdict, or what its signal says happened. */
  function classify(e: unknown, signal: AbortSignal, clientSignal: AbortSignal, timeoutSeconds: number): unknown {
    const aborted = e === TIMED_OUT || e === CLIENT_GONE || e === STOPPING;
    if (!aborted && isApiFailure(e)) return e;
    const why: unknown = aborted ? e : signal.aborted ? signal.reason : undefined;
    if (why === CLIENT_GONE) return clientSignal.reason ?? new DOMException('The operation was aborted', 'AbortError');
    if (why === TIMED_OUT) return new TargetTimeout({ message: `The page did not finish rendering within ${timeoutSeconds} s`, timeoutSeconds });
    if (why === STOPPING || stopped) return new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 });
    if (/Failed to launch|Executable doesn't exist|spawn .* ENOENT/i.test(errText(e))) {
      return new ServiceUnavailable({ message: `render_js is unavailable: Chromium could not be started (${executablePath})`, retryAfter: 60 });
    }
    // A remote browser that went away in the middle of a render (the next render goes to another, or waits for it).
    if (remote && /has been closed|Browser closed|disconnected/i.test(errText(e))) {
      return new ServiceUnavailable({ message: 'render_js: the remote browser went away during the render; retry', retryAfter: 1 });
    }
    return new InternalError({ message: `The browser failed: ${errText(e)}` });
  }

  const report = (url: string, trace: Trace, outcome: string, answerMs: number): void => {
    trace.clock.enter('close');
    try {
      options.onTiming?.({ url, outcome, phases: { ...trace.clock.phases }, answerMs, totalMs: trace.clock.elapsed(), warm: trace.warm, requests: trace.requests, blocked: trace.blocked });
    } catch { /* a hook's failure is not the render's */ }
  };

  const stop = async (): Promise<void> => {
    stopped = true;
    clearTimeout(idleTimer);
    idleTimer = undefined;
    for (const c of inFlight) c.abort(STOPPING);
    slots.drain(new ServiceUnavailable({ message: 'The browser fetcher is shutting down', retryAfter: 1 }));
    const current = poolPromise;
    poolPromise = undefined;
    currentPool = undefined;
    currentWarm = undefined;
    if (!current) return;
    let res: Running | undefined;
    try { res = await current; } catch { return; }
    for (const pid of processTree(marker)) knownPids.add(pid);
    // The warm contexts first (and any still being made), then whatever is closing, bounded: the pool's destroy ends the rest.
    await Promise.race([res.warm.close(), new Promise((r) => setTimeout(r, 3000))]);
    await Promise.race([Promise.all(closing), new Promise((r) => setTimeout(r, 3000))]);
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
      // warmOnStart launches it at boot, and has the warm contexts made.
      if (stopped || options.warmOnStart !== true) return;
      const { pool, warm } = await ensurePool();
      touch();
      if (prewarm > 0) {
        await warm.prime();
      } else {
        // Nothing kept warm: one context opened and closed starts the browser.
        const lease = await createLease(pool, undefined);
        await lease.close();
      }
    },
    // Loading Playwright and Crawlee's browser pool takes about a second of the event loop; at boot, not on the first render.
    async warm() {
      await loadPoolModule();
    },
    stop,
    fetch,
  });
  const printPdf = async (html: string, signal: AbortSignal): Promise<Uint8Array> => {
    const release = await slots.acquire(signal);
    const deny = await startEgressProxy({ policy: 'deny', listen });
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
      browsers: currentPool ? currentPool.browsers() : 0,
      openPages,
      warmContexts: currentWarm?.readyCount ?? 0,
      closingPages: closing.size,
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

/**
 * The rendered DOM (doctype included), serialised by Chromium over CDP: no
 * page script runs (so a page cannot fake what it holds) and no script world
 * has to be set up for it (page.content() costs a utility world, about 40 ms
 * on a fresh page). A script navigation that replaces the document between
 * the two calls makes the read fail: it is tried again on the new document
 * within the fetch's time. A page that never holds still long enough (it
 * navigates every few milliseconds) ends as a timeout (504
 * TARGET_TIMEOUT), not as a browser failure.
 */
async function contentOf(cdp: CDPSession, page: Page, remaining: () => number): Promise<string> {
  const read = async (): Promise<string> => {
    const { root } = await cdp.send('DOM.getDocument', { depth: 0 });
    const { outerHTML } = await cdp.send('DOM.getOuterHTML', { nodeId: root.nodeId });
    return outerHTML;
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (e) {
      if (page.isClosed()) throw e;
      if (attempt >= 200 || remaining() <= 1) throw TIMED_OUT;
      await page.waitForLoadState('domcontentloaded', { timeout: Math.min(1000, remaining()) }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, Math.min(10, Math.max(0, remaining() - 1))));
    }
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
