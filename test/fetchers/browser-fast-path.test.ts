/**
 * The browser fetcher's fast path (issue 15) against real Chromium and a
 * loopback site that counts what it is asked for: warm contexts that never
 * carry one render's cookies, storage or cache into the next; fonts, media
 * and images not fetched unless a screenshot needs them; wait_for honoured,
 * and without it the page read at DOM ready plus a quiet network (no fixed
 * sleep: a page ready at once is answered before a request its script makes
 * 450 ms later, under the old 500 ms network-idle floor); a custom user agent
 * gets a context of its own; kept-alive connections to the target; the warm
 * pool refilled after its contexts crash; no process left after stop().
 * Assertions are on requests and their order, never on wall time.
 */
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../adapters/egress/port.js';
import { createBrowserFetcher, type BrowserFetcher, type BrowserFetcherOptions, type RenderTiming } from '../../plugins/fetchers/browser/index.js';
import type { FetchRequest, ScreenshotSpec } from '../../plugins/sdk/scrape.js';

const CHROMIUM = '/usr/bin/chromium';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// The site: every request counted by path, every TCP connection counted.

const hits = new Map<string, number>();
const cookiesSeen: (string | undefined)[] = [];
let connections = 0;
let origin = '';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const hit = (path: string) => hits.get(path) ?? 0;
const page = (body: string, head = '') => `<!doctype html><html><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  hits.set(url.pathname, hit(url.pathname) + 1);
  const send = (type: string, body: string | Buffer, extra: http.OutgoingHttpHeaders = {}) => {
    res.writeHead(200, { 'content-type': type, ...extra });
    res.end(body);
  };
  switch (url.pathname) {
    case '/set-state':
      // Server cookie, script cookie, both storages, IndexedDB, and a resource the HTTP cache would keep for an hour.
      send('text/html; charset=utf-8', page(`<p>setting</p><script src="/cached.js"></script><script>
        document.cookie = 'script_cookie=1; path=/; max-age=3600';
        localStorage.setItem('local', 'leaked');
        sessionStorage.setItem('session', 'leaked');
        const open = indexedDB.open('db', 1);
        open.onupgradeneeded = () => open.result.createObjectStore('s');
        open.onsuccess = () => { const tx = open.result.transaction('s', 'readwrite'); tx.objectStore('s').put('leaked', 'k'); tx.oncomplete = () => document.body.insertAdjacentHTML('beforeend', '<p id="done">set</p>'); };
      </script>`), { 'set-cookie': 'server_cookie=1; Path=/; Max-Age=3600' });
      cookiesSeen.push(req.headers.cookie);
      return;
    case '/show-state':
      cookiesSeen.push(req.headers.cookie);
      send('text/html; charset=utf-8', page(`<script src="/cached.js"></script><script>
        const out = { cookie: document.cookie, local: localStorage.getItem('local'), session: sessionStorage.getItem('session') };
        const open = indexedDB.open('db', 1);
        open.onupgradeneeded = () => { out.idb = 'new'; };
        open.onsuccess = () => {
          out.idb ??= 'existed';
          document.body.insertAdjacentHTML('beforeend', '<pre id="state">' + JSON.stringify(out) + '</pre>');
        };
      </script>`));
      return;
    case '/cached.js':
      send('text/javascript', 'window.cached = true;', { 'cache-control': 'public, max-age=3600' });
      return;
    case '/assets':
      send('text/html; charset=utf-8', page(
        '<p class="f">text in a web font</p><img src="/a.png" alt="a"><video src="/v.webm" preload="auto" width="40" height="30"></video><audio src="/s.mp3" preload="auto"></audio><script src="/s.js"></script>',
        '<link rel="stylesheet" href="/font.css">',
      ));
      return;
    case '/font.css':
      send('text/css', '@font-face{font-family:T;src:url(/f.woff2) format("woff2")}.f{font-family:T,sans-serif}');
      return;
    case '/s.js':
      send('text/javascript', 'document.body.insertAdjacentHTML("beforeend", "<p id=script>script ran</p>");');
      return;
    case '/a.png':
      send('image/png', PNG);
      return;
    case '/f.woff2':
    case '/v.webm':
    case '/s.mp3':
      send('application/octet-stream', Buffer.alloc(64));
      return;
    case '/timer': {
      // Ready at once; its script asks for /late after `ms` (no request in flight meanwhile).
      const ms = Number(url.searchParams.get('ms') ?? '450');
      send('text/html; charset=utf-8', page(`<p id="early">ready</p><script>setTimeout(() => fetch('/late'), ${ms});</script>`));
      return;
    }
    case '/late':
      send('text/plain', 'late');
      return;
    case '/late-element': {
      // The element comes after `ms` with no network activity; optionally a request hangs meanwhile.
      const ms = Number(url.searchParams.get('ms') ?? '2000');
      const hang = url.searchParams.has('hang') ? 'fetch("/hang").catch(() => {});' : '';
      // (The markup is put together so that the script's own text does not contain it.)
      send('text/html; charset=utf-8', page(`<p>before</p><script>${hang}setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<div id="la' + 'te">late ' + 'element</div>'), ${ms});</script>`));
      return;
    }
    case '/hang':
      return; // never answers
    case '/hang-img':
      send('text/html; charset=utf-8', page('<p id="text">the text is here</p><img src="/hang">'));
      return;
    case '/many':
      // Eight requests one after another from the page's script.
      send('text/html; charset=utf-8', page(`<script>(async () => { let n = 0; for (let i = 0; i < 8; i++) n += (await (await fetch('/data?i=' + i)).text()).length; document.body.insertAdjacentHTML('beforeend', '<p id="many">' + n + '</p>'); })();</script>`));
      return;
    case '/data':
      send('text/plain', 'data');
      return;
    case '/ua':
      send('text/html; charset=utf-8', page(`<pre id="ua">${String(req.headers['user-agent']).replace(/</g, '&lt;')}</pre>`));
      return;
    default:
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
  }
});
const sockets = new Set<net.Socket>();
server.on('connection', (s) => {
  connections++;
  sockets.add(s);
  s.on('close', () => sockets.delete(s));
});

const request = (path: string, extra: Partial<FetchRequest> = {}): FetchRequest => ({
  url: `${origin}${path}`,
  headers: {},
  userAgent: undefined,
  cookies: {},
  followRedirects: true,
  timeoutMs: 15_000,
  proxy: undefined,
  signal: new AbortController().signal,
  ...extra,
});

const shot: ScreenshotSpec = { fullPage: false, width: 320, height: 240, format: 'png', quality: undefined, selector: undefined };

const timings: RenderTiming[] = [];
const fetchers: BrowserFetcher[] = [];
function make(extra: Partial<BrowserFetcherOptions> = {}): BrowserFetcher {
  const f = createBrowserFetcher({ egress: nodeEgress, executablePath: CHROMIUM, maxPages: 2, allowPrivate: true, warmOnStart: true, onTiming: (t) => timings.push(t), ...extra });
  fetchers.push(f);
  return f;
}

/** The timing report of the render of `url` (reported once its page is closed). */
async function timingOf(url: string): Promise<RenderTiming> {
  for (let i = 0; i < 200; i++) {
    const t = timings.find((x) => x.url === url);
    if (t) return t;
    await sleep(10);
  }
  throw new Error(`no timing for ${url}`);
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function rendererPids(f: BrowserFetcher): number[] {
  return f.stats().chromiumPids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('--type=renderer');
    } catch {
      return false;
    }
  });
}

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

let fetcher: BrowserFetcher;

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  fetcher = make();
  await fetcher.start?.();
});

afterAll(async () => {
  for (const f of fetchers) await f.stop();
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('browser fast path', () => {
  it('starts with its warm contexts ready', async () => {
    expect(fetcher.stats().warmContexts).toBeGreaterThanOrEqual(1);
    await until(() => fetcher.stats().warmContexts === 2, '2 warm contexts');
    expect(fetcher.stats()).toMatchObject({ browsers: 1, warmContexts: 2, openPages: 0 });
  });

  it('starts Chromium lean: its last --disable-features keeps every feature Playwright switches off and adds the preloaded omnibox UI and spare renderers; one renderer per warm context', async () => {
    const browser = fetcher.stats().chromiumPids.map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      } catch {
        return [];
      }
    }).find((argv) => argv.some((a) => a.startsWith('--scour-pool=')) && !argv.some((a) => a.startsWith('--type=')));
    expect(browser).toBeDefined();
    const lists = (browser ?? []).filter((a) => a.startsWith('--disable-features=')).map((a) => a.slice('--disable-features='.length).split(','));
    expect(lists.length).toBeGreaterThanOrEqual(2); // Playwright's, then the fetcher's (Chromium honours the last)
    const last = new Set(lists.at(-1));
    for (const f of lists.slice(0, -1).flat()) expect(last.has(f), `${f} (from Playwright's list) is missing from the fetcher's --disable-features`).toBe(true);
    for (const f of ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup', 'SpareRendererForSitePerProcess']) expect(last.has(f), f).toBe(true);
    await until(() => fetcher.stats().warmContexts === 2 && fetcher.stats().closingPages === 0, '2 warm contexts and nothing closing');
    await sleep(500);
    expect(rendererPids(fetcher).length).toBe(2);
  });

  it('a context serves one render: cookies, storage, IndexedDB and the HTTP cache of one render are not in the next (warm contexts)', async () => {
    const set = await fetcher.fetch(request('/set-state', { waitFor: { kind: 'css', selector: '#done' }, waitTimeMs: 5000 }));
    expect(set.body).toContain('<p id="done">set</p>');
    expect(hit('/cached.js')).toBe(1);
    for (let i = 1; i <= 3; i++) {
      await until(() => fetcher.stats().warmContexts > 0, 'a warm context');
      const shown = await fetcher.fetch(request(`/show-state?i=${i}`, { waitFor: { kind: 'css', selector: '#state' }, waitTimeMs: 5000 }));
      const state = JSON.parse(/<pre id="state">(\{.*?\})<\/pre>/.exec(shown.body)?.[1]?.replace(/&quot;/g, '"') ?? 'null') as Record<string, unknown>;
      expect(state).toEqual({ cookie: '', local: null, session: null, idb: 'new' });
      // The server got no cookie, and the cached script was fetched again (no cache shared either).
      expect(cookiesSeen.at(-1)).toBeUndefined();
      expect(hit('/cached.js')).toBe(1 + i);
    }
    for (const path of ['/set-state', '/show-state?i=1', '/show-state?i=2', '/show-state?i=3']) {
      expect((await timingOf(`${origin}${path}`)).warm, path).toBe(true);
    }
    expect(fetcher.stats().openPages).toBe(0);
  });

  it('fonts, media and images are not fetched without a screenshot, and are with one', async () => {
    const before = { png: hit('/a.png'), font: hit('/f.woff2'), video: hit('/v.webm'), audio: hit('/s.mp3'), js: hit('/s.js'), css: hit('/font.css') };
    const plain = await fetcher.fetch(request('/assets'));
    expect(plain.body).toContain('<p id="script">script ran</p>');
    expect(plain.body).toContain('<img src="/a.png" alt="a">');
    expect(hit('/s.js') - before.js).toBe(1);
    expect(hit('/font.css') - before.css).toBe(1);
    expect(hit('/a.png') - before.png).toBe(0);
    expect(hit('/f.woff2') - before.font).toBe(0);
    expect(hit('/v.webm') - before.video).toBe(0);
    expect(hit('/s.mp3') - before.audio).toBe(0);
    expect((await timingOf(`${origin}/assets`)).blocked).toBeGreaterThanOrEqual(2);

    const withShot = await fetcher.fetch(request('/assets?shot', { screenshot: shot }));
    expect(withShot.screenshot?.width).toBe(320);
    expect(hit('/a.png') - before.png).toBe(1);
    expect(hit('/f.woff2') - before.font).toBe(1);
    expect((await timingOf(`${origin}/assets?shot`)).blocked).toBe(0);
  });

  it('an image that never comes does not hold a render without a screenshot (it is never asked for)', async () => {
    const before = hit('/hang');
    const r = await fetcher.fetch(request('/hang-img', { timeoutMs: 10_000 }));
    expect(r.body).toContain('the text is here');
    expect(hit('/hang')).toBe(before);
  });

  it('waits for wait_for, even on a page whose network never goes quiet; without it the page is read at DOM ready plus a quiet network', async () => {
    const waited = await fetcher.fetch(request('/late-element?ms=300&hang', { waitFor: { kind: 'css', selector: '#late' }, waitTimeMs: 10_000 }));
    expect(waited.body).toContain('<div id="late">late element</div>');
    // No wait_for: the element the page adds 2 s later (no request meanwhile) is not waited for.
    const quick = await fetcher.fetch(request('/late-element?ms=2000'));
    expect(quick.body).toContain('<p>before</p>');
    expect(quick.body).not.toContain('<div id="late">');
    expect((await timingOf(`${origin}/late-element?ms=2000`)).phases.load).toBe(0);
  });

  it('no fixed sleep: a page ready at once is answered before the request its script makes 450 ms later', async () => {
    const before = hit('/late');
    const r = await fetcher.fetch(request('/timer?ms=450'));
    // The answer is in hand and the page has not asked for /late yet (it never will: its context is closed).
    expect(hit('/late')).toBe(before);
    expect(r.body).toContain('<p id="early">ready</p>');
    const t = await timingOf(`${origin}/timer?ms=450`);
    expect(t.requests).toBe(1);
    expect(t.phases.load).toBe(0);
    await sleep(700);
    expect(hit('/late')).toBe(before);
  });

  it('a custom user agent gets a context made for it, not a warm one', async () => {
    const r = await fetcher.fetch(request('/ua', { userAgent: 'FastPathTest/1.0' }));
    expect(r.body).toContain('<pre id="ua">FastPathTest/1.0</pre>');
    expect((await timingOf(`${origin}/ua`)).warm).toBe(false);
    const plain = await fetcher.fetch(request('/ua?default'));
    expect(plain.body).toMatch(/<pre id="ua">Mozilla\/5\.0 \(X11; Linux x86_64\).*Chrome\/\d+\.0\.0\.0 Safari\/537\.36<\/pre>/);
  });

  it('keeps the connection to the target alive: 9 requests of one page over fewer connections', async () => {
    const before = { conns: connections, data: hit('/data') };
    const r = await fetcher.fetch(request('/many', { waitFor: { kind: 'css', selector: '#many' } }));
    expect(r.body).toContain('<p id="many">32</p>');
    expect(hit('/data') - before.data).toBe(8);
    // One connection per request before; now the document and the eight fetches share at most a few.
    expect(connections - before.conns).toBeLessThanOrEqual(3);
  });

  it('refills the warm pool when its contexts crash, and renders with a new one', async () => {
    const own = make({ prewarmContexts: 2 });
    await own.start?.();
    await until(() => own.stats().warmContexts === 2, '2 warm contexts');
    const killed = rendererPids(own);
    expect(killed.length).toBeGreaterThanOrEqual(2);
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    await until(() => killed.every((pid) => !running(pid)), 'the renderers to die');
    await until(() => own.stats().warmContexts === 2 && rendererPids(own).some((pid) => !killed.includes(pid)), 'the pool to refill');
    const r = await own.fetch(request('/timer?ms=5000&after-crash'));
    expect(r.body).toContain('ready');
    expect((await timingOf(`${origin}/timer?ms=5000&after-crash`)).warm).toBe(true);
    expect(own.stats().browsers).toBe(1);
  });

  it('stop() leaves no Chromium process, warm contexts included', async () => {
    const own = make({ prewarmContexts: 2 });
    await own.start?.();
    await until(() => own.stats().warmContexts === 2, '2 warm contexts');
    await own.fetch(request('/timer?ms=5000&before-stop'));
    const pids = own.stats().chromiumPids;
    expect(rendererPids(own).length).toBeGreaterThanOrEqual(2);
    await own.stop();
    expect(pids.filter(running)).toEqual([]);
    expect(own.stats()).toMatchObject({ browsers: 0, openPages: 0, warmContexts: 0, closingPages: 0, chromiumPids: [] });
  });
});
