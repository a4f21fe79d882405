/**
 * Remote browsers (SCOUR_BROWSER_WS_ENDPOINT): a Playwright browser server
 * started here (chromium.launchServer, /usr/bin/chromium, loopback), with a
 * dead endpoint listed before it. The browser fetcher in it: renders,
 * screenshots, renders spread and the dead one skipped, the egress guard
 * deciding every request the remote page makes (through the contexts'
 * egress proxies, which the remote browser reaches), and 503 when no
 * endpoint can be joined. A real server (both HTTP adapters) answering
 * render_js and screenshots from it; `scour doctor`'s check of each
 * endpoint; the settings' hostile values.
 *
 * Written for more browser features to join: `scrape()` posts any body to
 * the server rendering remotely, so a case for browser `actions` (being
 * added beside this) is one more `it` in the server block.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startActionsSite } from '../support/actions-site.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserServer } from 'playwright';
import { nodeEgress } from '../../adapters/egress/port.js';
import { isApiFailure } from '../../core/errors.js';
import { createBrowserFetcher, launchArgs, type BrowserFetcher } from '../../plugins/fetchers/browser/index.js';
import { errText, parseBrowserEndpoint, parseBrowserEndpoints, RemotePool } from '../../plugins/fetchers/browser/remote.js';
import { startEgressProxy } from '../../plugins/fetchers/browser/egress-proxy.js';
import type { FetchRequest } from '../../plugins/sdk/scrape.js';
import { checkRemoteBrowsers, runChecks } from '../../adapters/cli/doctor.js';
import { remoteBrowserProbes } from '../../config/remote-browsers.js';
import { loadSettings, DEFAULTS } from '../../config/env.js';
import { ADAPTERS, startScour, type Running } from '../support/server.js';
import { runCli } from '../support/cli.js';

const CHROMIUM = '/usr/bin/chromium';

interface Site { readonly origin: string; readonly hits: Map<string, number>; close(): Promise<void> }

async function serve(host: string, handler: (path: string, res: http.ServerResponse) => void): Promise<Site> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').replace(/\?.*$/, '');
    hits.set(path, (hits.get(path) ?? 0) + 1);
    handler(path, res);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as net.AddressInfo;
  return { origin: `http://${host}:${port}`, hits, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

const html = (res: http.ServerResponse, body: string) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(body);
};

/** A port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

let server: BrowserServer;
let live: string;
let dead: string;
let site: Site;
let forbidden: Site;

beforeAll(async () => {
  server = await chromium.launchServer({ executablePath: CHROMIUM, headless: true, host: '127.0.0.1', args: launchArgs([], true) });
  live = server.wsEndpoint();
  dead = `ws://127.0.0.1:${await deadPort()}/gone`;
  // 127.0.0.2 is refused by the guard below; nothing may ever reach it.
  forbidden = await serve('127.0.0.2', (_path, res) => html(res, '<p>leaked</p>'));
  site = await serve('127.0.0.1', (path, res) => {
    if (path === '/js') return html(res, '<title>js</title><p id="x">static</p><script>document.getElementById("x").textContent = "rendered by script"</script>');
    if (path === '/sub-forbidden') {
      return html(res, `<p id="main">main loaded</p><img src="${forbidden.origin}/img.png"><script src="${forbidden.origin}/s.js"></script>`
        + `<script>fetch(${JSON.stringify(`${forbidden.origin}/api`)}).catch(() => {});</script>`);
    }
    if (path === '/tall') return html(res, '<body style="margin:0;background:#08f"><div style="height:3000px">tall</div></body>');
    if (path === '/ua') return html(res, '<p id="ua"></p><script>document.getElementById("ua").textContent = navigator.userAgent</script>');
    res.writeHead(404).end();
  });
}, 60_000);

afterAll(async () => {
  await site?.close();
  await forbidden?.close();
  await server?.close();
});

function request(url: string, extra: Partial<FetchRequest> = {}): FetchRequest {
  return { url, headers: {}, userAgent: undefined, cookies: {}, followRedirects: true, timeoutMs: 20_000, proxy: undefined, signal: new AbortController().signal, ...extra };
}

async function failure(p: Promise<unknown>): Promise<{ code: string; status: number; fields: Record<string, unknown>; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isApiFailure(e)) return { code: e.code, status: e.status, fields: e.fields() as Record<string, unknown>, message: e.message };
    throw e;
  }
  throw new Error('expected a failure');
}

describe('SCOUR_BROWSER_WS_ENDPOINT parsing', () => {
  it('reads ws/wss as Playwright browser servers and cdp+ws/cdp+wss as CDP endpoints; labels carry no credentials or query', () => {
    expect(parseBrowserEndpoint('ws://browser-1:3000/abc')).toEqual({ url: 'ws://browser-1:3000/abc', protocol: 'playwright', label: 'ws://browser-1:3000/abc' });
    expect(parseBrowserEndpoint(' cdp+wss://u:secret@chrome.example:443/?token=t0k ')).toMatchObject({ url: 'wss://u:secret@chrome.example/?token=t0k', protocol: 'cdp', label: 'cdp+wss://chrome.example' });
    const { endpoints, errors } = parseBrowserEndpoints(`ws://a:1,, wss://b:2/x ,http://c:3,ws://,cdp+http://d,${'ws'.repeat(40)}`);
    expect(endpoints.map((e) => e.label)).toEqual(['ws://a:1', 'wss://b:2/x']);
    expect(errors).toHaveLength(4);
    // What doctor shows of a failure keeps no query of a ws URL (tokens go there).
    expect(errText(new Error('browserType.connect: WebSocket error: wss://b.example/x?token=s3cret 401\nCall log'))).toBe('browserType.connect: WebSocket error: wss://b.example/x?… 401');
    expect(errText(new Error('ws://a:1/#frag?token=s3cret'))).toBe('ws://a:1/?…');
  });

  it('hostile settings are refused at start-up with the variable named; good ones are read', () => {
    for (const [env, pattern] of [
      [{ SCOUR_BROWSER_WS_ENDPOINT: 'http://browser:3000' }, /SCOUR_BROWSER_WS_ENDPOINT/],
      [{ SCOUR_BROWSER_WS_ENDPOINT: ',' }, /names no endpoint/],
      [{ SCOUR_BROWSER_WS_ENDPOINT: 'ws://' }, /SCOUR_BROWSER_WS_ENDPOINT/],
      [{ SCOUR_BROWSER_PROXY_HOST: 'example.com' }, /SCOUR_BROWSER_PROXY_HOST must be an IP/],
      [{ SCOUR_BROWSER_PROXY_HOST: '0.0.0.0' }, /SCOUR_BROWSER_PROXY_ADVERTISED_HOST/],
      [{ SCOUR_BROWSER_PROXY_ADVERTISED_HOST: 'bad host!' }, /SCOUR_BROWSER_PROXY_ADVERTISED_HOST must be/],
      [{ SCOUR_BROWSER_PROXY_ADVERTISED_HOST: `${'a'.repeat(64)}.example` }, /SCOUR_BROWSER_PROXY_ADVERTISED_HOST must be/],
      [{ SCOUR_BROWSER_PROXY_PORTS: '5000-4000' }, /SCOUR_BROWSER_PROXY_PORTS/],
      [{ SCOUR_BROWSER_PROXY_PORTS: '0-10' }, /SCOUR_BROWSER_PROXY_PORTS/],
      [{ SCOUR_BROWSER_PROXY_PORTS: '41000-70000' }, /SCOUR_BROWSER_PROXY_PORTS/],
      [{ SCOUR_BROWSER_PROXY_PORTS: '41000' }, /SCOUR_BROWSER_PROXY_PORTS/],
    ] as const) {
      expect(() => loadSettings(env), JSON.stringify(env)).toThrow(pattern);
    }
    const s = loadSettings({ SCOUR_BROWSER_WS_ENDPOINT: 'ws://b1:3000/x, cdp+ws://b2:3000', SCOUR_BROWSER_PROXY_HOST: '0.0.0.0', SCOUR_BROWSER_PROXY_ADVERTISED_HOST: 'scour.internal', SCOUR_BROWSER_PROXY_PORTS: '41000-41099' });
    expect(s.browserEndpoints).toEqual(['ws://b1:3000/x', 'cdp+ws://b2:3000']);
    expect(s.browserProxyPorts).toEqual({ from: 41000, to: 41099 });
    expect(s.browserProxyAdvertisedHost).toBe('scour.internal');
    expect(DEFAULTS.browserEndpoints).toEqual([]);
    expect(DEFAULTS.browserProxyHost).toBe('127.0.0.1');
  });
});

describe('where the egress proxies listen (what the remote browser connects back to)', () => {
  it('on the configured address and port range, advertised under the configured host; a full range is an error, not another port', async () => {
    const base = await deadPort();
    const range = { from: base, to: base + 1 };
    const a = await startEgressProxy({ policy: 'unbound', listen: { host: '127.0.0.1', advertisedHost: 'scour.internal', ports: range } });
    const b = await startEgressProxy({ policy: 'deny', listen: { host: '127.0.0.1', ports: range } });
    try {
      const ports = [a.url, b.url].map((u) => Number(new URL(u).port));
      expect(new URL(a.url).hostname).toBe('scour.internal');
      expect(new URL(b.url).hostname).toBe('127.0.0.1');
      expect(ports.sort()).toEqual([range.from, range.to]);
      await expect(startEgressProxy({ policy: 'deny', listen: { host: '127.0.0.1', ports: range } })).rejects.toThrow(/no free port/);
      const v6 = await startEgressProxy({ policy: 'deny', listen: { host: '::1' } }).catch(() => undefined);
      if (v6) {
        expect(v6.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
        await v6.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('the browser fetcher in a remote browser server', () => {
  let fetcher: BrowserFetcher;
  beforeAll(() => {
    fetcher = createBrowserFetcher({ egress: nodeEgress, maxPages: 2, allowPrivate: true, remoteEndpoints: parseBrowserEndpoints(`${dead},${live}`).endpoints });
  });
  afterAll(async () => { await fetcher?.stop(); });

  it('renders (the page\'s script ran), with the browser\'s own user agent, skipping the dead endpoint listed first; no local Chromium is started', async () => {
    const r = await fetcher.fetch(request(`${site.origin}/js`));
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('rendered by script');
    const ua = await fetcher.fetch(request(`${site.origin}/ua`));
    expect(ua.body).toMatch(/Chrome\/\d+\.0\.0\.0 Safari/);
    expect(ua.body).not.toContain('Headless');
    expect(fetcher.stats().browsers).toBe(1);
    expect(fetcher.stats().chromiumPids).toEqual([]);
  });

  it('takes screenshots, of the viewport and of the full page', async () => {
    const shot = await fetcher.fetch(request(`${site.origin}/tall`, { screenshot: { fullPage: false, width: 500, height: 300, format: 'png', quality: undefined, selector: undefined } }));
    expect(shot.screenshot).toMatchObject({ width: 500, height: 300, contentType: 'image/png' });
    const full = await fetcher.fetch(request(`${site.origin}/tall`, { screenshot: { fullPage: true, width: 400, height: 300, format: 'jpeg', quality: 60, selector: undefined } }));
    expect(full.screenshot).toMatchObject({ width: 400, height: 3000, contentType: 'image/jpeg' });
  });

  it('renders several at once in it and releases every page', async () => {
    const rs = await Promise.all(Array.from({ length: 4 }, () => fetcher.fetch(request(`${site.origin}/js`))));
    for (const r of rs) expect(r.body).toContain('rendered by script');
    expect(fetcher.stats().openPages).toBe(0);
  });
});

describe('a CDP endpoint (cdp+ws://, as Browserless serves)', () => {
  let proc: ChildProcess | undefined;
  let dir: string;
  afterAll(async () => {
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc!.once('exit', r));
      // Its own process group (detached): the browser and every helper it started.
      try { process.kill(-proc.pid!, 'SIGKILL'); } catch { proc.kill('SIGKILL'); }
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  it('renders and takes a screenshot through it, every request through the egress proxy', async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-cdp-test-'));
    proc = spawn(CHROMIUM, ['--headless', '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0', `--user-data-dir=${dir}`, ...launchArgs([], true), 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    const ws = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`no DevTools endpoint: ${err.slice(-500)}`)), 20_000);
      proc!.stderr!.on('data', (d: Buffer) => {
        err += String(d);
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (m) { clearTimeout(timer); resolve(m[1]!); }
      });
    });
    const guarded = createBrowserFetcher({ egress: nodeEgress, maxPages: 1, allowPrivate: false, allowAddress: (ip) => ip === '127.0.0.1', remoteEndpoints: parseBrowserEndpoints(`cdp+${ws}`).endpoints });
    try {
      const r = await guarded.fetch(request(`${site.origin}/js`, { screenshot: { fullPage: false, width: 300, height: 200, format: 'png', quality: undefined, selector: undefined } }));
      expect(r.body).toContain('rendered by script');
      expect(r.screenshot).toMatchObject({ width: 300, height: 200 });
      const before = forbidden.hits.size;
      const sub = await guarded.fetch(request(`${site.origin}/sub-forbidden`, { waitTimeMs: 300 }));
      expect(sub.body).toContain('main loaded');
      expect(forbidden.hits.size).toBe(before);
      expect(forbidden.hits.size).toBe(0);
    } finally {
      await guarded.stop();
    }
    // The browser at the endpoint goes on (stop() disconnects, it does not close someone else's browser).
    expect(proc.exitCode).toBeNull();
  });
});

describe('the egress guard decides every request of the remote page', () => {
  it('with 127.0.0.1 allowed only: the page loads, its image, script and fetch() never reach 127.0.0.2, navigating there is TARGET_NOT_ALLOWED', async () => {
    const guarded = createBrowserFetcher({ egress: nodeEgress, maxPages: 2, allowPrivate: false, allowAddress: (ip) => ip === '127.0.0.1', remoteEndpoints: parseBrowserEndpoints(live).endpoints });
    try {
      const r = await guarded.fetch(request(`${site.origin}/sub-forbidden`, { waitTimeMs: 300 }));
      expect(r.body).toContain('main loaded');
      expect(r.body).not.toContain('leaked');
      const f = await failure(guarded.fetch(request(`${forbidden.origin}/landing`)));
      expect(f.code).toBe('TARGET_NOT_ALLOWED');
      expect(JSON.stringify(f.fields)).toMatch(/127\.0\.0\.2/);
      expect(forbidden.hits.size).toBe(0);
    } finally {
      await guarded.stop();
    }
  });
});

describe('endpoints that cannot be joined', () => {
  it('none reachable: 503 SERVICE_UNAVAILABLE with Retry-After, no endpoint named to the caller; the dead one is skipped for a back-off, then tried again', async () => {
    const only = createBrowserFetcher({ egress: nodeEgress, maxPages: 1, allowPrivate: true, remoteEndpoints: parseBrowserEndpoints(`${dead}?token=secret`).endpoints, remoteConnectTimeoutMs: 2000 });
    try {
      const f = await failure(only.fetch(request(`${site.origin}/js`)));
      expect(f.status).toBe(503);
      expect(f.code).toBe('SERVICE_UNAVAILABLE');
      expect(f.message).toMatch(/render_js is unavailable: the remote browser/);
      expect(f.message).not.toContain('secret');
      expect(f.message).not.toContain(dead.split('/')[2]!);
      expect(Number(f.fields.retry_after)).toBeGreaterThanOrEqual(1);
    } finally {
      await only.stop();
    }
  });

  it('the pool: the least busy live endpoint gets the page; a dead one is tried once, skipped for 1 s, 2 s, ... and tried again after', async () => {
    let now = 1_000_000;
    const pool = new RemotePool({ endpoints: parseBrowserEndpoints(`${dead},${live}`).endpoints, chromium, now: () => now, connectTimeoutMs: 2000 });
    try {
      const a = await pool.newPage({ pageOptions: {} });
      let st = pool.status();
      expect(st[0]).toMatchObject({ connected: false, pages: 0, skippedForMs: 1000 });
      expect(st[0]!.lastError).toMatch(/ECONNREFUSED|connect/i);
      expect(st[1]).toMatchObject({ connected: true, pages: 1 });
      const b = await pool.newPage({ pageOptions: {} });
      expect(pool.status()[1]!.pages).toBe(2);
      now += 1001; // the back-off has passed: the dead one is tried again, fails again, and waits twice as long
      const c = await pool.newPage({ pageOptions: {} });
      st = pool.status();
      expect(st[0]!.skippedForMs).toBe(2000);
      expect(st[1]!.pages).toBe(3);
      for (const p of [a, b, c]) await p.context().close();
      expect(pool.status()[1]!.pages).toBe(0);
    } finally {
      await pool.destroy();
    }
  });
});

describe('scour doctor checks each endpoint', () => {
  const settings = (endpoints: string[], advertised?: string) => ({ browserEndpoints: endpoints, browserProxyHost: '127.0.0.1', browserProxyAdvertisedHost: advertised, browserProxyPorts: undefined });

  it('the live one ok (version, its page reached the egress proxy), the dead one failed with a fix; the local Chromium is not checked', async () => {
    const checks = await checkRemoteBrowsers({ remoteBrowsers: async () => remoteBrowserProbes(settings([live, dead])) });
    expect(checks).toHaveLength(2);
    expect(checks[0]).toMatchObject({ status: 'ok' });
    expect(checks[0]!.detail).toMatch(/Chromium \d+\.[\d.]+, joined and reached the egress proxy at http:\/\/127\.0\.0\.1:\d+/);
    expect(checks[1]).toMatchObject({ status: 'failed' });
    expect(checks[1]!.fix).toMatch(/SCOUR_BROWSER_WS_ENDPOINT/);
    const all = await runChecks({ ...loadSettings({ SCOUR_BROWSER_WS_ENDPOINT: live }), dataDir: '/nonexistent-scour-doctor' }, {
      processTree: () => [], looksLike: () => false, parseProxies: () => [], redactProxyUrl: (u) => u,
      remoteBrowsers: async () => remoteBrowserProbes(settings([live])),
    }, { offline: true });
    expect(all.find((c) => c.name === 'Chromium')).toMatchObject({ status: 'skipped' });
    expect(all.filter((c) => c.name.startsWith('Browser '))).toEqual([expect.objectContaining({ status: 'ok' })]);
  });

  it('the real `scour doctor --json`: one line per endpoint, exit 1 while one of them is dead', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'scour-doctor-remote-'));
    try {
      const r = await runCli(['doctor', '--json', '--offline'], { SCOUR_DATA_DIR: join(cwd, 'data'), SCOUR_BROWSER_WS_ENDPOINT: `${live},${dead}` }, cwd, 60_000);
      const out = JSON.parse(r.out) as { ok: boolean; checks: { name: string; status: string; detail: string }[] };
      const browsers = out.checks.filter((c) => c.name.startsWith('Browser '));
      expect(browsers.map((c) => c.status)).toEqual(['ok', 'failed']);
      expect(browsers[1]!.name).toBe(`Browser ${dead}`);
      expect(out.checks.find((c) => c.name === 'Chromium')?.status).toBe('skipped');
      expect(out.ok).toBe(false);
      expect(r.code).toBe(1);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('a browser that cannot reach the advertised proxy address fails, with the setting to change', async () => {
    // The proxy listens on 127.0.0.1 but the browser is told 127.0.0.3, where nothing listens.
    const [check] = await checkRemoteBrowsers({ remoteBrowsers: async () => remoteBrowserProbes(settings([live], '127.0.0.3')) });
    expect(check).toMatchObject({ status: 'failed' });
    expect(check!.detail).toMatch(/did not reach the egress proxy at http:\/\/127\.0\.0\.3:\d+/);
    expect(check!.fix).toMatch(/SCOUR_BROWSER_PROXY_HOST/);
  });
});

describe.each(ADAPTERS)('a real server rendering in the remote browser (%s)', (adapter) => {
  let s: Running;
  let key: string;
  beforeAll(async () => {
    s = await startScour(adapter, { browserEndpoints: [dead, live], allowPrivateTargets: 'loopback', adminToken: 'admin-remote-test' });
    const created = await fetch(`${s.url}/admin/v1/accounts`, { method: 'POST', headers: { authorization: 'Bearer admin-remote-test', 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'unicorn', credits: 10_000 }) });
    const body = await created.json() as { api_key: string };
    key = body.api_key;
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  const scrape = async (body: Record<string, unknown>) => {
    const res = await fetch(`${s.url}/v1/scrape`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  };

  it('render_js: the script\'s output in the content', async () => {
    const r = await scrape({ url: `${site.origin}/js`, render_js: true });
    expect(r.status).toBe(200);
    expect(r.body.content).toContain('rendered by script');
  });

  it('screenshot: served back as a PNG of the asked size', async () => {
    const r = await scrape({ url: `${site.origin}/tall`, render_js: true, screenshot: true, screenshot_options: { width: 640, height: 480 } });
    expect(r.status).toBe(200);
    const img = await fetch(String(r.body.screenshot_url));
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await img.arrayBuffer());
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([640, 480]);
  });

  it('actions: load more, a form written and sent, a script\'s value and a screenshot action, all in the remote browser', async () => {
    const actionsSite = await startActionsSite('127.0.0.1');
    try {
      const more = await scrape({
        url: `${actionsSite.url}/load-more`, render_js: true, main_content: true,
        actions: [{ type: 'click', selector: '#more' }, { type: 'click', selector: '#more' }, { type: 'execute_javascript', script: 'return navigator.userAgent.includes("Headless") ? "headless" : "headed"' }, { type: 'screenshot' }],
      });
      expect(more.status, JSON.stringify(more.body)).toBe(200);
      expect(more.body.main_content).toContain('Item 9: a teapot of the page 3 collection');
      const acts = more.body.actions as { results: { ok: boolean; value?: unknown }[]; screenshots: string[] };
      expect(acts.results.map((x) => x.ok)).toEqual([true, true, true, true]);
      expect(typeof acts.results[2]!.value).toBe('string');
      const img = await fetch(acts.screenshots[0]!);
      expect(img.status).toBe(200);
      expect(img.headers.get('content-type')).toBe('image/png');
      const form = await scrape({ url: `${actionsSite.url}/form`, render_js: true, actions: [{ type: 'write', selector: '#q', text: 'lighthouse' }, { type: 'press', key: 'Enter' }] });
      expect(form.status).toBe(200);
      expect(form.body.content).toContain('Three archived letters mention lighthouse.');
      const failed = await scrape({ url: `${actionsSite.url}/cookie-wall`, render_js: true, actions_required: true, actions: [{ type: 'click', selector: '#no-such-button' }] });
      expect(failed.status).toBe(422);
      expect(JSON.stringify(failed.body)).toContain('ACTION_FAILED');
    } finally {
      await actionsSite.close();
    }
  }, 60_000);

  it('a target the guard refuses: 400 TARGET_NOT_ALLOWED, nothing reached', async () => {
    // A loopback address other than 127.0.0.1 is allowed by 'loopback', so the refused target is the metadata
    // address (never contacted: refused by its form before any connection).
    const r = await scrape({ url: 'http://169.254.169.254/latest/meta-data/', render_js: true });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('TARGET_NOT_ALLOWED');
  });
});
