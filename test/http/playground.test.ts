/**
 * GET /playground: the static page, its headers (CSP), HEAD, and that no
 * path reaches other files (traversal, encoded variants); then the page
 * itself in Debian's Chromium (Playwright) on both adapters: it loads with
 * no console error and no request to any non-loopback host, runs a
 * developer tool without a key, a scrape of a loopback page with a key
 * (status, rate-limit headers, credits left, the JSON tree, the snippets),
 * a render with a screenshot shown, a research report rendered with its
 * citations (a canned answer, carrying markup that must stay text), a 401
 * shown as the error body, and a screenshot of the page checked non-blank
 * by decoding its pixels.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAYGROUND_CSP, playgroundDir } from '../../plugins/operations/playground/index.js';
import { call } from '../support/http.js';
import { startScourIn, type AdapterKind, type ConfigKind, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const CHROMIUM = '/usr/bin/chromium';
const ADMIN = 'playground-admin-token-0123456789';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The few browser globals the page-side functions use (this project compiles without the DOM library). */
interface Browserish {
  document: { body: { dataset: Record<string, string | undefined> }; getElementById(id: string): { textContent: string | null }; cookie: string };
  navigator: { clipboard: { readText(): Promise<string> } };
  sessionStorage: { getItem(key: string): string | null };
  localStorage: { length: number };
}

interface Raw { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

/** A request with the path sent exactly as given (fetch would normalise `..` away). */
function raw(port: number, method: string, path: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are) to its pixels. */
function decodePng(png: Buffer): { width: number; height: number; channels: number; pixels: Buffer } {
  expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect(data[8], 'bit depth').toBe(8);
      expect([2, 6], 'colour type').toContain(data[9]);
      expect(data[12], 'interlace').toBe(0);
      channels = data[9] === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      idat.push(data);
    }
    at += 12 + length;
  }
  const packed = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = packed[y * (stride + 1)]!;
    const line = packed.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[out + x - channels]! : 0;
      const b = y > 0 ? pixels[out - stride + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[out - stride + x - channels]! : 0;
      let v = line[x]!;
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[out + x] = v & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** The share of pixels unlike the most common colour, and how many colours there are. */
function pixelSpread(png: Buffer): { width: number; height: number; foreground: number; colours: number } {
  const { width, height, channels, pixels } = decodePng(png);
  const counts = new Map<number, number>();
  for (let i = 0; i < pixels.length; i += channels) {
    const rgb = (pixels[i]! << 16) | (pixels[i + 1]! << 8) | pixels[i + 2]!;
    counts.set(rgb, (counts.get(rgb) ?? 0) + 1);
  }
  const top = Math.max(...counts.values());
  return { width, height, foreground: 1 - top / (width * height), colours: counts.size };
}

/** A canned research report, with markup and a javascript: URL where a hostile page could put them. */
const REPORT = {
  research_query: 'What is <b>loopback</b>?',
  analysis_depth: 'quick',
  analysis_type: 'general',
  executive_summary: 'Loopback is a virtual interface.<img src=x id=injected>\n\nIt never leaves the host.',
  summary_evidence: [{ source_id: 'src_1', text: 'Loopback is a virtual interface.', start: 0, end: 32 }],
  key_insights: [{
    id: 'ins_1', statement: 'Traffic to 127.0.0.1 stays on the machine.',
    statement_evidence: { source_id: 'src_1', text: 'Traffic to 127.0.0.1 stays on the machine.', start: 0, end: 42 },
    confidence: 0.82, confidence_parts: { agreement: 1, relevance: 1, quality: 0.5, recency: 0.5 },
    supporting_evidence: [], topic: 'networking', supporting_sources: ['src_1', 'src_2'],
  }],
  sources_analyzed: [
    { id: 'src_1', url: 'https://example.org/loopback', title: 'Loopback <script>window.pwned=1</script>', type: 'web', domain: 'example.org', published_date: '2024-01-01', author: null, relevance_score: 0.9, used: true },
    { id: 'src_2', url: 'javascript:window.pwned=2', title: 'Hostile link', type: 'web', domain: 'evil.test', published_date: null, author: null, relevance_score: 0.5, used: true },
  ],
  citations: [
    { source_id: 'src_1', url: 'https://example.org/loopback', format: 'apa', text: 'Example. (2024). Loopback. example.org.' },
    { source_id: 'src_2', url: 'javascript:window.pwned=2', format: 'apa', text: 'Evil. (n.d.). Hostile link.' },
  ],
  generated_at: '2026-01-01T00:00:00.000Z',
  processing_time: 1.5,
  credits_used: 5,
  remaining_credits: 42,
  request_id: 'req_canned',
};

let browser: Browser;
let site: TargetSite;

beforeAll(async () => {
  // Fails (not skips) without the browser.
  expect(existsSync(CHROMIUM), `${CHROMIUM} is required (bash scripts/test-services.sh installs it)`).toBe(true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-breakpad', '--disable-component-update'],
  });
  site = await startTargetSite();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

const CASES: ReadonlyArray<readonly [ConfigKind, AdapterKind]> = [['embedded', 'uws'], ['embedded', 'node'], ['shared', 'uws']];

describe.each(CASES)('GET /playground (%s, %s)', (config, adapter) => {
  let s: Running;
  let apiKey: string;

  beforeAll(async () => {
    s = await startScourIn(config, adapter, { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
    const created = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    expect(created.status, created.text).toBe(201);
    apiKey = created.body.api_key as string;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  describe('over HTTP', () => {
    it('serves the page, its script and its style sheet with the CSP, and HEAD as GET without the body', async () => {
      for (const [path, type] of [
        ['/playground', 'text/html; charset=utf-8'],
        ['/playground/playground.js', 'text/javascript; charset=utf-8'],
        ['/playground/playground.css', 'text/css; charset=utf-8'],
      ] as const) {
        const get = await raw(s.port, 'GET', path);
        expect(get.status, path).toBe(200);
        expect(get.headers['content-type'], path).toBe(type);
        expect(get.headers['content-security-policy'], path).toBe(PLAYGROUND_CSP);
        expect(get.headers['x-content-type-options'], path).toBe('nosniff');
        expect(get.headers['cache-control'], path).toBe('no-cache');
        expect(get.headers['x-request-id'], path).toMatch(/^[\w-]{10,}$/);
        expect(get.body.length, path).toBeGreaterThan(500);
        const head = await raw(s.port, 'HEAD', path);
        expect(head.status, path).toBe(200);
        expect(head.body.length, path).toBe(0);
        expect(head.headers['content-type'], path).toBe(type);
        expect(head.headers['content-security-policy'], path).toBe(PLAYGROUND_CSP);
        expect(Number(head.headers['content-length']), path).toBe(get.body.length);
      }
      const html = (await raw(s.port, 'GET', '/playground')).body.toString('utf8');
      // Nothing inline and nothing from elsewhere: the CSP would refuse it anyway.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc="\/playground\/)/);
      expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//i);
      expect(PLAYGROUND_CSP).toContain("default-src 'none'");
      expect(PLAYGROUND_CSP).toContain("script-src 'self'");
      expect(PLAYGROUND_CSP).toContain("frame-ancestors 'none'");
    });

    it('no path reaches another file: traversal and encoded variants are 404', async () => {
      for (const path of [
        '/playground/../package.json',
        '/playground/..%2Fpackage.json',
        '/playground/%2e%2e/package.json',
        '/playground/%2e%2e%2fpackage.json',
        '/playground/%252e%252e%252fpackage.json',
        '/playground/playground.js/../../package.json',
        '/playground/..\\package.json',
        '/playground//etc/passwd',
        '/playground/index.html',
        '/playground/static/index.html',
        '/playground/index.ts',
        '/playground/',
        '/playground/playground.js%00.html',
        '/playground%2fplayground.js',
      ]) {
        const r = await raw(s.port, 'GET', path);
        expect(r.status, path).toBe(404);
        expect(r.headers['content-type'], path).toBe('application/json; charset=utf-8');
        expect(r.body.toString('utf8'), path).not.toContain('"name": "scour"');
      }
      // Only GET (and HEAD, OPTIONS) on the page.
      const post = await raw(s.port, 'POST', '/playground');
      expect(post.status).toBe(405);
    });

    it('finds its files from the sources and from dist/ (tsc copies no HTML, JS or CSS)', () => {
      const sources = join(process.cwd(), 'plugins/operations/playground/static/');
      expect(playgroundDir()).toBe(sources);
      expect(playgroundDir(pathToFileURL(join(process.cwd(), 'dist/plugins/operations/playground/index.js')))).toBe(sources);
      expect(() => playgroundDir(pathToFileURL(join(tmpdir(), 'nowhere/a/b/c/index.js')))).toThrow(/PLAYGROUND_FILES_MISSING/);
    });

    it('the playground routes are in the OpenAPI document, as HTML, JavaScript and CSS', async () => {
      const doc = (await call(`${s.url}/v1/openapi.json`, 'GET')).body as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };
      expect(Object.keys(doc.paths['/playground']!.get!.responses['200']!.content!)).toEqual(['text/html']);
      expect(Object.keys(doc.paths['/playground/playground.js']!.get!.responses['200']!.content!)).toEqual(['text/javascript']);
      expect(Object.keys(doc.paths['/playground/playground.css']!.get!.responses['200']!.content!)).toEqual(['text/css']);
    });
  });

  describe('in Chromium', () => {
    let context: BrowserContext;
    let page: Page;
    const consoleErrors: string[] = [];
    const offsite: string[] = [];
    const requests: string[] = [];

    beforeAll(async () => {
      context = await browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
      page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
      await page.route('**/*', (route) => {
        const url = new URL(route.request().url());
        requests.push(`${route.request().method()} ${url.pathname}`);
        if ((url.protocol === 'http:' || url.protocol === 'https:') && !LOOPBACK_HOSTS.has(url.hostname)) {
          offsite.push(url.href);
          return route.abort('blockedbyclient');
        }
        return route.continue();
      });
    }, 30_000);
    afterAll(async () => {
      await context?.close();
    });

    /** Click Send and wait for the answer to be shown. */
    async function sendAndWait(): Promise<void> {
      await page.evaluate(() => {
        delete (globalThis as unknown as Browserish).document.body.dataset.state;
      });
      await page.click('#send');
      await page.waitForSelector('body[data-state="done"], body[data-state="failed"]', { timeout: 30_000 });
      expect(await page.getAttribute('body', 'data-state'), await page.textContent('#page-error') ?? '').toBe('done');
    }
    const meta = async (name: string): Promise<string | null> => {
      const loc = page.locator(`#meta dd[data-name="${name}"]`);
      return (await loc.count()) === 0 ? null : loc.textContent();
    };

    it('loads: CSP header, operations listed from /v1/openapi.json, no console error, nothing off loopback', async () => {
      const res = await page.goto(`${s.url}/playground`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toBe(PLAYGROUND_CSP);
      await page.waitForSelector('body[data-state="ready"]', { timeout: 15_000 });
      const options = await page.locator('#operation option').evaluateAll((os) => os.map((o) => o.textContent));
      for (const op of ['POST /v1/search', 'POST /v1/scrape', 'POST /v1/scrape/bulk', 'POST /v1/crawl', 'POST /v1/map', 'POST /v1/research', 'GET /v1/usage', 'POST /v1/tools/uuid-generator', 'POST /v1/tools/base64-encoder']) {
        expect(options, op).toContain(op);
      }
      // Not its own routes, nor the admin API, nor the service routes.
      expect(options.some((o) => /playground|admin|healthz|metrics|openapi/.test(o ?? ''))).toBe(false);
      expect(requests).toEqual(expect.arrayContaining(['GET /playground', 'GET /playground/playground.js', 'GET /playground/playground.css', 'GET /v1/openapi.json']));
      expect(consoleErrors).toEqual([]);
      expect(offsite).toEqual([]);
    });

    it('runs a developer tool without a key', async () => {
      await page.fill('#api-key', '');
      await page.selectOption('#operation', { label: 'POST /v1/tools/uuid-generator' });
      await page.fill('#f-body-count', '3');
      await page.selectOption('#f-body-format', { label: 'uppercase' });
      await sendAndWait();
      expect(await meta('status')).toBe('200 OK');
      expect(await meta('x-request-id')).toMatch(/^[\w-]{10,}$/);
      expect(await meta('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(await meta('credits')).toBe('—');
      const json = (await page.textContent('#json')) ?? '';
      expect(json).toContain('uuids');
      expect(json.match(/[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/g)).toHaveLength(3);
      expect(await page.isVisible('#error')).toBe(false);
      // The snippets, and the copy buttons.
      const curl = (await page.textContent('#snippet-curl')) ?? '';
      expect(curl).toContain(`curl -sS -X POST '${s.url}/v1/tools/uuid-generator'`);
      expect(curl).toContain(`-d '{"count":3,"format":"uppercase"}'`);
      expect(curl).not.toContain('Authorization');
      const ts = (await page.textContent('#snippet-ts')) ?? '';
      expect(ts).toContain("import { Scour } from 'scour/client';");
      expect(ts).toContain(`new Scour({ baseUrl: ${JSON.stringify(s.url)} })`);
      expect(ts).toContain('scour.tools["uuid-generator"]({\n  "count": 3,\n  "format": "uppercase"\n})');
      await page.click('#copy-curl');
      await page.waitForFunction(() => (globalThis as unknown as Browserish).document.getElementById('copy-status').textContent !== '');
      expect(await page.textContent('#copy-status')).toBe('Copied curl.');
      expect(await page.evaluate(() => (globalThis as unknown as Browserish).navigator.clipboard.readText())).toBe(curl);
      await page.click('#copy-ts');
      await page.waitForFunction(() => (globalThis as unknown as Browserish).document.getElementById('copy-status').textContent === 'Copied TypeScript.');
      expect(await page.evaluate(() => (globalThis as unknown as Browserish).navigator.clipboard.readText())).toBe(ts);
      expect(consoleErrors).toEqual([]);
    });

    it('scrapes a loopback page with a key: status, rate-limit headers, credits left, the page in the JSON view', async () => {
      await page.fill('#api-key', apiKey);
      await page.selectOption('#operation', { label: 'POST /v1/scrape' });
      await page.fill('#f-body-url', `${site.url}/html/simple`);
      await page.selectOption('#f-body-markdown', { label: 'true' });
      await sendAndWait();
      expect(await meta('status')).toBe('200 OK');
      expect(await meta('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(await meta('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(await meta('x-ratelimit-reset')).toMatch(/^\d+ \(/);
      const usage = await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${apiKey}` });
      expect(await meta('credits')).toBe(String(usage.body.credits_remaining));
      expect(usage.body.credits_remaining).toBeLessThan(1000);
      const json = (await page.textContent('#json')) ?? '';
      expect(json).toContain('status_code: 200');
      expect(json).toContain('markdown: ');
      expect(json).toContain('Hello, target');
      // The scraped HTML is shown as text, not parsed into the page.
      expect(await page.locator('#json h1').count()).toBe(0);
      const curl = (await page.textContent('#snippet-curl')) ?? '';
      expect(curl).toContain('-H "Authorization: Bearer $SCOUR_API_KEY"');
      expect(curl).not.toContain(apiKey);
      expect(await page.textContent('#snippet-ts')).toContain('apiKey: process.env.SCOUR_API_KEY');
      expect(await page.textContent('#snippet-ts')).toContain('scour.scrape({');
      // The key is in this tab's sessionStorage only.
      const stored = await page.evaluate(() => {
        const w = globalThis as unknown as Browserish;
        return { session: w.sessionStorage.getItem('scour.playground.key'), local: w.localStorage.length, cookie: w.document.cookie };
      });
      expect(stored).toEqual({ session: apiKey, local: 0, cookie: '' });
      expect(site.hitCount('/html/simple')).toBeGreaterThan(0);
      expect(consoleErrors).toEqual([]);
    });

    if (config === 'embedded' && adapter === 'uws') it('shows the screenshot of a rendered scrape', async () => {
      await page.selectOption('#operation', { label: 'POST /v1/scrape' });
      await page.fill('#f-body-url', `${site.url}/html/simple`);
      await page.selectOption('#f-body-render_js', { label: 'true' });
      await page.selectOption('#f-body-screenshot', { label: 'true' });
      await page.fill('#f-body-screenshot_options', '{"width": 640, "height": 480}');
      await sendAndWait();
      expect(await meta('status')).toBe('200 OK');
      const img = page.locator('#screenshots img');
      await expect.poll(() => img.evaluate((i) => { const im = i as unknown as { complete: boolean; naturalWidth: number }; return im.complete && im.naturalWidth; }), { timeout: 10_000 }).toBe(640);
      expect(await img.getAttribute('src')).toMatch(/^\/v1\/screenshots\/[A-Za-z0-9_-]{32}\.png$/);
      expect(consoleErrors).toEqual([]);
    }, 60_000);

    if (config === 'embedded') it('renders a research report with its citations, markup in it kept as text', async () => {
      await page.route('**/v1/research', (route) => route.fulfill({
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req_canned', 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '99' },
        body: JSON.stringify(REPORT),
      }));
      try {
        await page.selectOption('#operation', { label: 'POST /v1/research' });
        await page.fill('#f-body-research_query', 'What is loopback?');
        await page.fill('#f-body-sources', 'web\nnews');
        expect(await page.textContent('#snippet-curl')).toContain('"sources":["web","news"]');
        await sendAndWait();
        expect(await meta('credits')).toBe('42');
        const report = page.locator('#report .report');
        expect(await report.locator('h3').textContent()).toBe('Research report');
        expect(await report.locator('.query').textContent()).toBe('What is <b>loopback</b>?');
        expect(await report.textContent()).toContain('Loopback is a virtual interface.<img src=x id=injected>');
        expect(await report.locator('.insights li').first().textContent()).toContain('Traffic to 127.0.0.1 stays on the machine. [src_1][src_2] (confidence 82%)');
        expect(await report.locator('.insights a.cite').evaluateAll((as) => as.map((a) => a.getAttribute('href')))).toEqual(['#source-src_1', '#source-src_2']);
        expect(await report.locator('.sources li').count()).toBe(2);
        expect(await report.locator('#source-src_1 a').getAttribute('href')).toBe('https://example.org/loopback');
        expect(await report.locator('#source-src_1').textContent()).toContain('Loopback <script>window.pwned=1</script>');
        // A javascript: URL is no link.
        expect(await report.locator('#source-src_2 a').count()).toBe(0);
        expect(await report.locator('.citations li').evaluateAll((ls) => ls.map((l) => l.textContent))).toEqual([
          '[src_1] Example. (2024). Loopback. example.org.',
          '[src_2] Evil. (n.d.). Hostile link.',
        ]);
        expect(await page.locator('#report img, #report script, #report b, #injected').count()).toBe(0);
        expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
      } finally {
        await page.unroute('**/v1/research');
      }
      expect(consoleErrors).toEqual([]);
    });

    it('a bad key: the 401 error body is shown', async () => {
      await page.fill('#api-key', 'sk_not_a_real_key_0123456789');
      await page.selectOption('#operation', { label: 'POST /v1/scrape' });
      await page.fill('#f-body-url', `${site.url}/html/simple`);
      await sendAndWait();
      expect(await meta('status')).toBe('401 Unauthorized');
      expect(await page.isVisible('#error')).toBe(true);
      expect(await page.textContent('#error .error-code')).toBe('AUTHENTICATION_FAILED');
      expect((await page.textContent('#error .error-message'))?.length).toBeGreaterThan(0);
      const json = (await page.textContent('#json')) ?? '';
      expect(json).toContain('code: "AUTHENTICATION_FAILED"');
      expect(json).toContain('request_id: ');
      expect(await meta('credits')).toBe('—');
      // Chromium logs the refused fetch itself; nothing else.
      expect(consoleErrors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    });

    it('the page as shown is not blank (decoded pixels), and nothing left loopback', async () => {
      const png = await page.screenshot({ fullPage: false });
      const spread = pixelSpread(png);
      expect(spread.width).toBe(1280);
      expect(spread.height).toBe(900);
      expect(spread.foreground, JSON.stringify(spread)).toBeGreaterThan(0.02);
      expect(spread.colours, JSON.stringify(spread)).toBeGreaterThan(16);
      expect(offsite).toEqual([]);
    });
  });
});
