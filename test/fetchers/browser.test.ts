/**
 * The browser fetcher against real Chromium (/usr/bin/chromium) and a
 * loopback target site: rendering, wait_for, screenshots (sizes read from the
 * image headers), the page bound, aborts, stop() leaving no process, and the
 * egress proxy (refusals, subresources, upstream chaining). Fails, never
 * skips, when Chromium is missing.
 */
import http from 'node:http';
import net from 'node:net';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../adapters/egress/port.js';
import type { Egress } from '../../core/ports.js';
import { createBrowserFetcher, type BrowserFetcher } from '../../plugins/fetchers/browser/index.js';
import type { FetchRequest } from '../../plugins/sdk/scrape.js';
import { isApiFailure } from '../../core/errors.js';

const CHROMIUM = '/usr/bin/chromium';

// ---------------------------------------------------------------------------
// A loopback target site (127.0.0.1) and a "forbidden" one (127.0.0.2).

interface Site {
  readonly origin: string;
  readonly hits: Map<string, number>;
  readonly seen: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

const page = (body: string, head = '') => `<!doctype html><html><head><meta charset="utf-8">${head}</head><body style="margin:0">${body}</body></html>`;

async function startSite(host: string, handler: (url: URL, req: http.IncomingMessage, res: http.ServerResponse, site: Site) => boolean): Promise<Site> {
  const hits = new Map<string, number>();
  const seen: http.IncomingHttpHeaders[] = [];
  const sockets = new Set<net.Socket>();
  let site: Site;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    seen.push(req.headers);
    if (!handler(url, req, res, site)) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as net.AddressInfo;
  site = {
    origin: `http://${host}:${port}`,
    hits,
    seen,
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
  return site;
}

const html = (res: http.ServerResponse, body: string, extra: http.OutgoingHttpHeaders = {}) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-target': 'yes', ...extra });
  res.end(body);
};

let forbidden: Site;
let target: Site;

function targetRoutes(url: URL, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  switch (url.pathname) {
    case '/js':
      html(res, page('<div id="root"></div><script>document.getElementById("root").innerHTML = "<p id=built>built by js " + (6 * 7) + "</p>";</script>'));
      return true;
    case '/delayed-element': {
      const ms = Number(url.searchParams.get('ms') ?? '500');
      html(res, page(`<p>waiting</p><script>setTimeout(() => { const d = document.createElement("div"); d.id = "late"; d.className = "late"; d.textContent = "late element"; document.body.appendChild(d); }, ${ms});</script>`));
      return true;
    }
    case '/medium':
      html(res, page('<div style="height:1500px;width:10px;background:#0c0"></div>'));
      return true;
    case '/big':
      html(res, page('<div id="big"></div><script>document.getElementById("big").textContent = "x".repeat(2 * 1024 * 1024);</script>'));
      return true;
    case '/tall':
      html(res, page('<div id="box" style="width:200px;height:100px;background:#c00"></div><div style="height:3000px;width:10px;background:#00c"></div>'));
      return true;
    case '/echo': {
      const show = { ua: req.headers['user-agent'], x: req.headers['x-test'], cookie: req.headers.cookie };
      html(res, page(`<pre id="echo">${JSON.stringify(show).replace(/</g, '&lt;')}</pre>`));
      return true;
    }
    case '/hang':
      return true; // never answers
    case '/hang-img':
      html(res, page('<p>loading forever</p><img src="/hang">'));
      return true;
    case '/hang-fetch':
      // A page that never goes quiet: its script waits on a request that is never answered.
      html(res, page('<p>loading forever</p><script>fetch("/hang").catch(() => {});</script>'));
      return true;
    case '/js-redirect':
      html(res, page(`<p>moving on</p><script>addEventListener("load", () => setTimeout(() => { location.href = ${JSON.stringify(url.searchParams.get('to') ?? '/js')}; }, 50));</script>`));
      return true;
    case '/redirect':
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/js' });
      res.end();
      return true;
    case '/sub-forbidden':
      html(res, page(`<p id="main">main loaded</p><img src="${forbidden.origin}/pixel.png"><script src="${forbidden.origin}/x.js"></script><iframe src="${forbidden.origin}/frame"></iframe><script>fetch("${forbidden.origin}/xhr").catch(() => {}); new Image().src = "${forbidden.origin}/img2";</script>`));
      return true;
    default:
      return false;
  }
}

const request = (url: string, extra: Partial<FetchRequest> = {}): FetchRequest => ({
  url,
  headers: {},
  userAgent: undefined,
  cookies: {},
  followRedirects: true,
  timeoutMs: 15_000,
  proxy: undefined,
  signal: new AbortController().signal,
  ...extra,
});

/** The pixel size from the image's own header: PNG IHDR, JPEG SOFn. */
function decodedSize(data: Uint8Array): { format: 'png' | 'jpeg'; width: number; height: number } {
  const b = Buffer.from(data);
  if (b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    expect(b.subarray(12, 16).toString('latin1')).toBe('IHDR');
    return { format: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  expect(b[0]).toBe(0xff);
  expect(b[1]).toBe(0xd8);
  let i = 2;
  while (i < b.length) {
    expect(b[i]).toBe(0xff);
    const m = b[i + 1] as number;
    if (m >= 0xc0 && m <= 0xc3) return { format: 'jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
    i += 2 + b.readUInt16BE(i + 2);
  }
  throw new Error('no SOF marker');
}

async function failure(p: Promise<unknown>): Promise<{ code: string; status: number; message: string; fields: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    if (!isApiFailure(e)) throw e;
    return { code: e.code, status: e.status, message: e.message, fields: e.fields() };
  }
  throw new Error('expected the fetch to fail');
}

/** Running = exists and is not a zombie (PID 1 here may never reap reparented children). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Listening TCP sockets of this process bound outside loopback (from /proc/net/tcp{,6}). */
function publicListeners(): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1] as string);
    } catch { /* closed meanwhile */ }
  }
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'latin1').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9] as string)) continue;
      const [addr] = (f[1] as string).split(':');
      const hex = addr ?? '';
      // IPv4 words are little-endian: 127.x.y.z ends in 7F; IPv6 ::1, or ::ffff:127.x.y.z.
      const loopback = hex.length === 8 ? hex.endsWith('7F') : hex === '00000000000000000000000001000000' || (hex.startsWith('0000000000000000FFFF0000') && hex.endsWith('7F'));
      if (!loopback) out.push(f[1] as string);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------

let fetcher: BrowserFetcher;
const timings: Record<string, number> = {};

beforeAll(async () => {
  forbidden = await startSite('127.0.0.2', (url, _req, res) => {
    res.writeHead(200, { 'content-type': url.pathname.endsWith('.js') ? 'text/javascript' : 'text/plain' });
    res.end(url.pathname.endsWith('.js') ? 'document.body.insertAdjacentHTML("beforeend", "<p id=leak>leaked</p>")' : 'x');
    return true;
  });
  target = await startSite('127.0.0.1', (url, req, res) => targetRoutes(url, req, res));
  fetcher = createBrowserFetcher({ egress: nodeEgress, executablePath: CHROMIUM, maxPages: 4, allowPrivate: true, maxScreenshotHeight: 3000, maxBodyBytes: 1024 * 1024 });
});

afterAll(async () => {
  await fetcher?.stop();
  await target?.close();
  await forbidden?.close();
  // eslint-disable-next-line no-console
  console.log('browser fetcher timings (ms):', timings);
});

describe('browser fetcher', () => {
  it('has Chromium at /usr/bin/chromium (this suite fails rather than skips without it)', () => {
    expect(existsSync(CHROMIUM)).toBe(true);
  });

  it('renders JavaScript-built content (cold, then warm)', async () => {
    let t = performance.now();
    const r = await fetcher.fetch(request(`${target.origin}/js`));
    timings.cold = Math.round(performance.now() - t);
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('<p id="built">built by js 42</p>');
    expect(r.finalUrl).toBe(`${target.origin}/js`);
    expect(r.contentType).toBe('text/html; charset=utf-8');
    expect(r.headers['x-target']).toBe('yes');
    expect(r.loadTimeSeconds).toBeGreaterThan(0);
    t = performance.now();
    await fetcher.fetch(request(`${target.origin}/js`));
    timings.warm = Math.round(performance.now() - t);
    t = performance.now();
    await fetcher.fetch(request(`${target.origin}/delayed-element?ms=0`, { waitFor: { kind: 'css', selector: '#late' }, waitTimeMs: 5000 }));
    timings.warmWithWaitFor = Math.round(performance.now() - t);
    expect(fetcher.stats().openPages).toBe(0);
    expect(fetcher.stats().browsers).toBe(1);
  }, 60_000);

  it('opens no listening socket outside loopback (Crawlee\'s module-load proxy is kept from starting)', () => {
    expect(publicListeners()).toEqual([]);
  });

  it('sends the user agent, extra headers and cookies', async () => {
    const r = await fetcher.fetch(request(`${target.origin}/echo`, { userAgent: 'ScourTest/1.0', headers: { 'x-test': 'hello' }, cookies: { session: 'abc', theme: 'dark' } }));
    const shown = JSON.parse(/<pre id="echo">(.*)<\/pre>/.exec(r.body)?.[1]?.replace(/&quot;/g, '"') ?? '{}') as Record<string, string>;
    expect(shown.ua).toBe('ScourTest/1.0');
    expect(shown.x).toBe('hello');
    expect(shown.cookie?.split('; ').sort()).toEqual(['session=abc', 'theme=dark']);
  });

  it('follows redirects, or reports the redirect when told not to', async () => {
    const followed = await fetcher.fetch(request(`${target.origin}/redirect?to=/js`));
    expect(followed.finalUrl).toBe(`${target.origin}/js`);
    expect(followed.body).toContain('built by js');
    const stopped = await fetcher.fetch(request(`${target.origin}/redirect?to=/js`, { followRedirects: false }));
    expect(stopped.statusCode).toBe(302);
    expect(stopped.headers.location).toBe('/js');
    expect(stopped.body).toBe('');
  });

  it('waits for a CSS or XPath element that appears later', async () => {
    const css = await fetcher.fetch(request(`${target.origin}/delayed-element?ms=400`, { waitFor: { kind: 'css', selector: 'div.late' }, waitTimeMs: 5000 }));
    expect(css.body).toContain('late element');
    const xpath = await fetcher.fetch(request(`${target.origin}/delayed-element?ms=400`, { waitFor: { kind: 'xpath', selector: '//div[@id="late"]' }, waitTimeMs: 5000 }));
    expect(xpath.body).toContain('late element');
  });

  it('answers a malformed wait_for selector with a 400 on wait_for', async () => {
    for (const waitFor of [{ kind: 'css' as const, selector: 'div[' }, { kind: 'xpath' as const, selector: '//div[@' }]) {
      const f = await failure(fetcher.fetch(request(`${target.origin}/js`, { waitFor, waitTimeMs: 2000 })));
      expect(f.code).toBe('MISSING_PARAMETER');
      expect((f.fields.validation_errors as { field: string }[])[0]?.field).toBe('wait_for');
    }
    expect(fetcher.stats().openPages).toBe(0);
  });

  it('fails with TargetTimeout when the element does not appear in time, and closes the page', async () => {
    const t = performance.now();
    const f = await failure(fetcher.fetch(request(`${target.origin}/delayed-element?ms=10000`, { waitFor: { kind: 'css', selector: '#late' }, waitTimeMs: 1000 })));
    expect(performance.now() - t).toBeLessThan(4000);
    expect(f.code).toBe('TARGET_TIMEOUT');
    expect(f.status).toBe(504);
    expect(f.message).toMatch(/#late.*did not appear within 1 s/);
    expect(f.fields).toEqual({ timeout: 1 });
    expect(fetcher.stats().openPages).toBe(0);
    const fx = await failure(fetcher.fetch(request(`${target.origin}/delayed-element?ms=10000`, { waitFor: { kind: 'xpath', selector: '//div[@id="late"]' }, waitTimeMs: 1000 })));
    expect(fx.code).toBe('TARGET_TIMEOUT');
    expect(fetcher.stats().openPages).toBe(0);
  });

  it('fails with TargetTimeout when the whole fetch overruns timeoutMs', async () => {
    const t = performance.now();
    const f = await failure(fetcher.fetch(request(`${target.origin}/hang-fetch`, { timeoutMs: 1500 })));
    expect(f.code).toBe('TARGET_TIMEOUT');
    expect(performance.now() - t).toBeLessThan(3000);
    expect(fetcher.stats().openPages).toBe(0);
  });

  it('takes PNG and JPEG screenshots of the viewport, the full page and one element at their real size', async () => {
    const base = { fullPage: false, width: 800, height: 600, format: 'png' as const, quality: undefined, selector: undefined };
    const png = await fetcher.fetch(request(`${target.origin}/tall`, { screenshot: base }));
    expect(png.screenshot?.contentType).toBe('image/png');
    expect(decodedSize(png.screenshot!.data)).toEqual({ format: 'png', width: 800, height: 600 });
    expect([png.screenshot?.width, png.screenshot?.height]).toEqual([800, 600]);

    const jpeg = await fetcher.fetch(request(`${target.origin}/tall`, { screenshot: { ...base, format: 'jpeg', quality: 50, width: 640, height: 480 } }));
    expect(jpeg.screenshot?.contentType).toBe('image/jpeg');
    expect(decodedSize(jpeg.screenshot!.data)).toEqual({ format: 'jpeg', width: 640, height: 480 });

    const full = await fetcher.fetch(request(`${target.origin}/medium`, { screenshot: { ...base, fullPage: true, width: 1024, height: 768 } }));
    expect(decodedSize(full.screenshot!.data)).toEqual({ format: 'png', width: 1024, height: 1500 });
    expect(full.screenshot?.height).toBe(1500);

    const fullJpeg = await fetcher.fetch(request(`${target.origin}/medium`, { screenshot: { ...base, fullPage: true, format: 'jpeg', quality: 80 } }));
    expect(decodedSize(fullJpeg.screenshot!.data)).toEqual({ format: 'jpeg', width: 800, height: 1500 });

    // Taller than maxScreenshotHeight (3000 here): cut.
    const cut = await fetcher.fetch(request(`${target.origin}/tall`, { screenshot: { ...base, fullPage: true } }));
    expect(decodedSize(cut.screenshot!.data)).toEqual({ format: 'png', width: 800, height: 3000 });

    const element = await fetcher.fetch(request(`${target.origin}/tall`, { screenshot: { ...base, selector: '#box' } }));
    expect(decodedSize(element.screenshot!.data)).toEqual({ format: 'png', width: 200, height: 100 });
    expect([element.screenshot?.width, element.screenshot?.height]).toEqual([200, 100]);

    const missing = await failure(fetcher.fetch(request(`${target.origin}/tall`, { screenshot: { ...base, selector: '#nope' } })));
    expect(missing.code).toBe('MISSING_PARAMETER');
    expect(missing.fields.validation_errors).toEqual([{ field: 'screenshot_options.selector', message: 'no element matches "#nope"' }]);
    expect(fetcher.stats().openPages).toBe(0);
  }, 40_000);

  it('never has more than maxPages pages open; 20 concurrent fetches all succeed', async () => {
    let maxOpen = 0;
    let maxQueued = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const s = fetcher.stats();
        maxOpen = Math.max(maxOpen, s.openPages);
        maxQueued = Math.max(maxQueued, s.queued);
        await sleep(10);
      }
    })();
    const t = performance.now();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      fetcher.fetch(request(`${target.origin}/delayed-element?ms=150&i=${i}`, { waitFor: { kind: 'css', selector: '#late' }, waitTimeMs: 10_000, timeoutMs: 30_000 }))));
    timings.concurrent20 = Math.round(performance.now() - t);
    sampling = false;
    await sampler;
    expect(results.every((r) => r.body.includes('late element'))).toBe(true);
    expect(maxOpen).toBeLessThanOrEqual(4);
    expect(maxOpen).toBe(4);
    expect(maxQueued).toBeGreaterThan(0);
    expect(fetcher.stats().openPages).toBe(0);
    expect(fetcher.stats().queued).toBe(0);
  }, 60_000);

  it('a client abort mid-render closes the page at once and the pool stays usable', async () => {
    const ac = new AbortController();
    const p = fetcher.fetch(request(`${target.origin}/hang-fetch`, { signal: ac.signal, timeoutMs: 30_000 }));
    p.catch(() => undefined);
    const t0 = performance.now();
    while (fetcher.stats().openPages === 0 && performance.now() - t0 < 5000) await sleep(5);
    await sleep(300); // mid-render: the document is in, its script's request never comes back
    const t = performance.now();
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - t).toBeLessThan(1000);
    expect(fetcher.stats().openPages).toBe(0);

    // Aborting while queued leaves the queue without ever opening a page.
    const busy = Array.from({ length: 4 }, () => fetcher.fetch(request(`${target.origin}/delayed-element?ms=300`, { waitFor: { kind: 'css', selector: '#late' }, waitTimeMs: 5000 })));
    const queued = new AbortController();
    const q = fetcher.fetch(request(`${target.origin}/js`, { signal: queued.signal }));
    q.catch(() => undefined);
    await sleep(20);
    expect(fetcher.stats().queued).toBe(1);
    queued.abort();
    await expect(q).rejects.toMatchObject({ name: 'AbortError' });
    expect(fetcher.stats().queued).toBe(0);
    await Promise.all(busy);

    const after = await fetcher.fetch(request(`${target.origin}/js`));
    expect(after.body).toContain('built by js');
    expect(fetcher.stats().openPages).toBe(0);
  });

  it('refuses a rendered DOM over maxBodyBytes with TargetResponseInvalid', async () => {
    const f = await failure(fetcher.fetch(request(`${target.origin}/big`)));
    expect(f.code).toBe('TARGET_RESPONSE_INVALID');
    expect(f.fields.limit).toBe(1024 * 1024);
    expect(fetcher.stats().openPages).toBe(0);
  });

  it('refuses non-http(s) URLs before the browser sees them', async () => {
    for (const url of ['file:///etc/passwd', 'data:text/html,<p>x</p>', 'javascript:alert(1)', 'chrome://version']) {
      const f = await failure(fetcher.fetch(request(url)));
      expect(f.code).toBe('TARGET_NOT_ALLOWED');
    }
  });

  it('answers a redirect to a scheme other than http(s) with TARGET_NOT_ALLOWED, as the plain fetcher does', async () => {
    for (const to of ['ftp://example.com/file', 'gopher://example.com/', 'file:///etc/passwd', 'data:text/html,<p>x</p>']) {
      const f = await failure(fetcher.fetch(request(`${target.origin}/redirect?to=${encodeURIComponent(to)}`)));
      expect(f.code, to).toBe('TARGET_NOT_ALLOWED');
      expect((f.fields.validation_errors as { field: string }[])[0]!.field).toBe('url');
    }
    expect(fetcher.stats().openPages).toBe(0);
  });

  it('maps an unreachable target to TargetUnreachable', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise<void>((r) => closed.close(() => r()));
    const f = await failure(fetcher.fetch(request(`http://127.0.0.1:${port}/`)));
    expect(f.code).toBe('TARGET_UNREACHABLE');
    expect(String(f.fields.details)).toMatch(/ECONNREFUSED/);
  });
});

describe('browser egress', () => {
  it('refuses a loopback target when private addresses are not allowed; the target sees nothing', async () => {
    // A name the proxy resolves to loopback: it passes the URL check, so the proxy is what refuses it.
    const resolver = async (host: string) => (host === 'target.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const guarded = createBrowserFetcher({ egress: nodeEgress, executablePath: CHROMIUM, maxPages: 2, allowPrivate: false, resolver });
    try {
      const before = target.seen.length;
      const port = new URL(target.origin).port;
      for (const url of [`http://target.test:${port}/js`, `https://target.test:${port}/js`]) {
        const f = await failure(guarded.fetch(request(url)));
        expect(f.code).toBe('TARGET_NOT_ALLOWED');
        expect(f.status).toBe(400);
        expect(JSON.stringify(f.fields)).toMatch(/target\.test resolves to 127\.0\.0\.1.*loopback/);
      }
      // IP literals and localhost names are refused before the browser is involved.
      for (const url of [`${target.origin}/js`, `http://localhost:${port}/js`, `http://[::1]:${port}/js`]) {
        expect((await failure(guarded.fetch(request(url)))).code).toBe('TARGET_NOT_ALLOWED');
      }
      expect(target.seen.length).toBe(before);
      expect(guarded.stats().openPages).toBe(0);
    } finally {
      await guarded.stop();
    }
  });

  it('resolves every target through the Egress port it is given', async () => {
    const asked: string[] = [];
    const recording: Egress = {
      fetch: (url, req) => nodeEgress.fetch(url, req),
      resolveAll: (host, policy) => {
        asked.push(host);
        // The port decides: a made-up name resolves to the loopback site.
        return host === 'via-port.test' ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : nodeEgress.resolveAll(host, policy);
      },
    };
    const own = createBrowserFetcher({ egress: recording, executablePath: CHROMIUM, maxPages: 1, allowPrivate: true });
    try {
      const port = new URL(target.origin).port;
      const r = await own.fetch(request(`http://via-port.test:${port}/js`));
      expect(r.statusCode).toBe(200);
      expect(asked).toContain('via-port.test');
    } finally {
      await own.stop();
    }
  });

  it('with an allow-hook for 127.0.0.1 only: the page loads, its subresources never reach 127.0.0.2, a redirect there is refused', async () => {
    const guarded = createBrowserFetcher({ egress: nodeEgress, executablePath: CHROMIUM, maxPages: 2, allowPrivate: false, allowAddress: (ip) => ip === '127.0.0.1' });
    try {
      const r = await guarded.fetch(request(`${target.origin}/sub-forbidden`));
      expect(r.statusCode).toBe(200);
      expect(r.body).toContain('main loaded');
      expect(r.body).not.toContain('leaked');
      expect(forbidden.hits.size).toBe(0);

      const f = await failure(guarded.fetch(request(`${target.origin}/redirect?to=${encodeURIComponent(`${forbidden.origin}/landing`)}`)));
      expect(f.code).toBe('TARGET_NOT_ALLOWED');
      expect(JSON.stringify(f.fields)).toMatch(/127\.0\.0\.2/);
      expect(forbidden.hits.size).toBe(0);

      // A script sending the page there after load (50 ms after it) is caught too, when the render is still
      // watching: wait_time keeps it 1 s (without it the answer may be the first page, delivered before the script ran).
      const js = await failure(guarded.fetch(request(`${target.origin}/js-redirect?to=${encodeURIComponent(`${forbidden.origin}/landing`)}`, { waitTimeMs: 1000 })));
      expect(js.code).toBe('TARGET_NOT_ALLOWED');
      expect(forbidden.hits.size).toBe(0);
      expect(guarded.stats().openPages).toBe(0);
    } finally {
      await guarded.stop();
    }
  });

  it('chains to an upstream proxy with its credentials', async () => {
    const seen: string[] = [];
    const upstream = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} auth=${req.headers['proxy-authorization'] ?? ''}`);
      if (req.headers['proxy-authorization'] !== `Basic ${Buffer.from('user:p@ss').toString('base64')}`) {
        res.writeHead(407, { 'proxy-authenticate': 'Basic' });
        res.end();
        return;
      }
      const u = new URL(req.url ?? '');
      const headers = { ...req.headers };
      delete headers['proxy-authorization'];
      const out = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: req.method, headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
    upstream.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      seen.push(`CONNECT ${req.url} auth=${req.headers['proxy-authorization'] ?? ''}`);
      const [host, port] = (req.url ?? '').split(':');
      const out = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        out.write(head);
        out.pipe(client);
        client.pipe(out);
      });
      out.on('error', () => client.destroy());
      client.on('error', () => out.destroy());
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const { port } = upstream.address() as net.AddressInfo;
    const auth = `Basic ${Buffer.from('user:p@ss').toString('base64')}`;
    const proxy = { url: `http://user:p%40ss@127.0.0.1:${port}`, id: 'test', type: 'datacenter' as const, country: undefined };
    try {
      const r = await fetcher.fetch(request(`${target.origin}/js`, { proxy }));
      expect(r.body).toContain('built by js');
      expect(seen[0]).toBe(`GET ${target.origin}/js auth=${auth}`);
      // Without redirects the document is fetched over a CONNECT tunnel: chained through the upstream too.
      seen.length = 0;
      const stopped = await fetcher.fetch(request(`${target.origin}/redirect?to=/js`, { proxy, followRedirects: false }));
      expect(stopped.statusCode).toBe(302);
      expect(seen[0]).toBe(`CONNECT ${new URL(target.origin).host} auth=${auth}`);
    } finally {
      upstream.closeAllConnections();
      await new Promise<void>((r) => upstream.close(() => r()));
    }
  });
});

describe('browser lifecycle', () => {
  it('stop() ends in-flight fetches and leaves no Chromium process of the pool alive', async () => {
    const own = createBrowserFetcher({ egress: nodeEgress, executablePath: CHROMIUM, maxPages: 1, allowPrivate: true });
    let t = performance.now();
    await own.start?.();
    timings.startWarmup = Math.round(performance.now() - t);
    t = performance.now();
    await own.fetch(request(`${target.origin}/js`));
    timings.firstFetchAfterStart = Math.round(performance.now() - t);
    const hanging = own.fetch(request(`${target.origin}/hang-fetch`, { timeoutMs: 30_000 }));
    const queued = own.fetch(request(`${target.origin}/js`));
    hanging.catch(() => undefined);
    queued.catch(() => undefined);
    while (own.stats().openPages === 0) await sleep(5);
    const pids = own.stats().chromiumPids;
    expect(pids.length).toBeGreaterThan(2); // browser, zygotes, renderer, utilities
    // eslint-disable-next-line no-console
    console.log('chromium rss (MB):', Math.round(pids.reduce((kb, pid) => {
      try {
        return kb + Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] ?? 0);
      } catch {
        return kb;
      }
    }, 0) / 1024), 'processes:', pids.length);
    await own.stop();
    await expect(hanging).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await expect(queued).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(pids.filter(running)).toEqual([]);
    expect(own.stats()).toMatchObject({ browsers: 0, openPages: 0, chromiumPids: [] });
    await expect(own.fetch(request(`${target.origin}/js`))).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
