/**
 * POST /v1/scrape over the real server against the loopback target site:
 * every field of spec 2.3 and 2.5, the target failures (504, 403
 * TARGET_BLOCKED, 502), the egress guard (TARGET_NOT_ALLOWED with zero hits
 * on the target), hostile requests, prices and charges (failures cost
 * nothing), render_js with wait_for and screenshots fetched back, proxies
 * through proxy-chain with rotation, and a custom extractor loaded from a
 * temporary directory through SCOUR_PLUGINS.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScourIn, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startCountingProxy } from '../support/proxies.js';

const ADMIN = 'scrape-contract-admin-token-0123';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Answer { status: number; headers: Headers; body: any }

async function call(base: string, path: string, init: { method?: string; key?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
    signal: init.signal,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}

async function account(base: string, plan = 'unicorn', credits = 1000): Promise<{ id: string; key: string }> {
  const r = await fetch(`${base}/admin/v1/accounts`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan, credits }),
  });
  const b = (await r.json()) as { account_id: string; api_key: string };
  return { id: b.account_id, key: b.api_key };
}

async function balance(base: string, key: string): Promise<{ remaining: number; reserved: number; used: number }> {
  const u = (await call(base, '/v1/usage', { key })).body;
  return { remaining: u.credits_remaining, reserved: u.credits_reserved, used: u.credits_used };
}

async function ledger(base: string, id: string): Promise<{ credits: number; request_id: string }[]> {
  const r = await fetch(`${base}/admin/v1/accounts/${id}/ledger`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return ((await r.json()) as { ledger: { credits: number; request_id: string }[] }).ledger;
}

function expectError(a: Answer, status: number, code: string) {
  expect(a.status, JSON.stringify(a.body)).toBe(status);
  expect(a.body.code).toBe(code);
  expect(typeof a.body.error).toBe('string');
  expect(a.body.request_id).toBe(a.headers.get('x-request-id'));
  expect(a.body.timestamp).toMatch(ISO);
  expect(a.headers.get('x-ratelimit-limit')).not.toBeNull();
}

/** A custom extractor plugin module written to a temporary directory, built with the public helper. */
function writeCustomExtractors(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scour-plugin-'));
  const sdk = join(process.cwd(), 'plugins/sdk/scrape.ts');
  const file = join(dir, 'price-extractors.ts');
  writeFileSync(file, `
import { defineExtractor } from ${JSON.stringify(sdk)};

/** The first element with class "price", as a number. */
export const price = defineExtractor({
  name: 'extractor-price',
  id: 'price',
  filter: { contentTypes: ['text/html'] },
  extract(page) {
    const m = /class="price"[^>]*>\\s*([0-9]+(?:\\.[0-9]+)?)/.exec(page.html);
    return m ? { amount: Number(m[1]), title: page.document.children.length > 0 } : null;
  },
});

export const boom = defineExtractor({
  name: 'extractor-boom',
  id: 'boom',
  extract() { throw new Error('boom: this extractor always fails'); },
});

export default [price, boom];
`);
  return file;
}

describe('POST /v1/scrape', () => {
  let site: TargetSite;
  let s: Running;
  let strict: Running;
  let acct: { id: string; key: string };
  const proxies: Awaited<ReturnType<typeof startCountingProxy>>[] = [];

  beforeAll(async () => {
    site = await startTargetSite();
    const bad = await startCountingProxy({ fail: true });
    const good = await startCountingProxy();
    const other = await startCountingProxy();
    proxies.push(bad, good, other);
    s = await startScourIn('embedded', 'uws', {
      adminToken: ADMIN,
      allowPrivateTargets: 'loopback',
      pluginPaths: [writeCustomExtractors()],
      // US: the failing proxy first, then a working one (rotation); DE: residential.
      proxies: `datacenter:US=${bad.url},datacenter:US=${good.url},residential:DE=${other.url}`,
      browserPages: 2,
    });
    strict = await startScourIn('embedded', 'uws', { adminToken: ADMIN, allowPrivateTargets: false });
    acct = await account(s.url);
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await strict?.stop();
    for (const p of proxies) await p.close();
    await site?.close();
  });

  it('scrapes a page: spec 2.5 fields, 3 credits, one ledger row with the request id', async () => {
    const before = await balance(s.url, acct.key);
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/html/simple` } });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body).toMatchObject({ url: `${site.url}/html/simple`, final_url: `${site.url}/html/simple`, status_code: 200, credits_used: 3 });
    expect(a.body.content).toContain('<h1>Hello, target</h1>');
    expect(a.body.text_content).toContain('Hello, target');
    expect(a.body.text_content).not.toContain('<');
    expect(typeof a.body.load_time).toBe('number');
    expect(a.body.remaining_credits).toBe(before.remaining - 3);
    for (const k of ['links', 'images', 'schema_data', 'meta_data', 'screenshot_url', 'main_content', 'markdown']) expect(a.body).not.toHaveProperty(k);
    expect(a.headers.get('x-ratelimit-limit')).toBe('250');
    const rows = await ledger(s.url, acct.id);
    expect(rows[0]).toMatchObject({ credits: 3, request_id: a.body.request_id });
  });

  it('prices each option (spec 8.5) and returns each extractor output', async () => {
    const a = await call(s.url, '/v1/scrape', {
      key: acct.key,
      body: { url: `${site.url}/structured`, extract_links: true, extract_images: true, extract_schema: true, extract_meta: true, main_content: true, markdown: true },
    });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.credits_used).toBe(3 + 1 + 1 + 2 + 1);
    expect(Array.isArray(a.body.links)).toBe(true);
    expect(Array.isArray(a.body.images)).toBe(true);
    const formats = new Set((a.body.schema_data as { format: string }[]).map((x) => x.format));
    expect([...formats].sort()).toEqual(['json-ld', 'microdata', 'rdfa']);
    expect(a.body.meta_data.open_graph).toBeDefined();
    expect(a.body.meta_data.twitter).toBeDefined();
    expect(typeof a.body.meta_data.title).toBe('string');
    expect(typeof a.body.main_content).toBe('string');
    expect(typeof a.body.markdown).toBe('string');
  });

  it('resolves links against <base href> and keeps rel and target', async () => {
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/links`, extract_links: true } });
    expect(a.status).toBe(200);
    const links = a.body.links as { url: string; text: string; rel: string | null; target: string | null }[];
    expect(links.length).toBeGreaterThan(3);
    for (const l of links) expect(l.url).toMatch(/^(https?:|mailto:)/);
    expect(links.some((l) => l.url.startsWith(`${site.url}/links/base/`))).toBe(true);
    expect(links.some((l) => l.rel !== null && l.target !== null)).toBe(true);
  });

  it('understands lazy images and srcset', async () => {
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/images`, extract_images: true } });
    expect(a.status).toBe(200);
    const images = a.body.images as { src: string; alt: string | null }[];
    expect(images.length).toBeGreaterThan(3);
    for (const i of images) expect(i.src).toMatch(/^https?:/);
    expect(images.some((i) => !i.src.startsWith('data:'))).toBe(true);
  });

  it("a target's own 404 and 500 are results (charged), not API errors", async () => {
    for (const code of [404, 500]) {
      const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/status/${code}` } });
      expect(a.status).toBe(200);
      expect(a.body.status_code).toBe(code);
      expect(a.body.credits_used).toBe(3);
    }
  });

  it('follows redirects to final_url, or returns the 3xx with follow_redirects false', async () => {
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/redirect/chain/3` } });
    expect(a.body).toMatchObject({ status_code: 200, final_url: `${site.url}/redirect/chain/0` });
    const b = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/redirect/chain/3`, follow_redirects: false } });
    expect(b.body).toMatchObject({ status_code: 302, final_url: `${site.url}/redirect/chain/3` });
  });

  it('sends user_agent, custom_headers and cookies to the target', async () => {
    const a = await call(s.url, '/v1/scrape', {
      key: acct.key,
      body: { url: `${site.url}/echo`, user_agent: 'ScourTest/1.0', custom_headers: { 'X-Trace': 'abc', 'Accept-Language': 'de' }, cookies: { session: 'xyz', theme: 'dark' } },
    });
    expect(a.status).toBe(200);
    const echo = JSON.parse(a.body.content);
    expect(a.body.text_content).toBe(a.body.content); // JSON: the text is the body
    expect(echo.headers['user-agent']).toBe('ScourTest/1.0');
    expect(echo.headers['x-trace']).toBe('abc');
    expect(echo.headers['accept-language']).toBe('de');
    expect(echo.cookies).toMatchObject({ session: 'xyz', theme: 'dark' });
  });

  it('decodes charsets from the header, a meta tag and a BOM', async () => {
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/charset/meta-1251` } });
    expect(a.body.text_content).toContain('Привет, мир!');
    const b = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/charset/header-latin1` } });
    expect(b.body.text_content).toContain('5 €');
  });

  it('target failures: 403 TARGET_BLOCKED (403 or a challenge page), 504 TARGET_TIMEOUT, 502 TARGET_UNREACHABLE and TARGET_RESPONSE_INVALID; none is charged', async () => {
    const before = await balance(s.url, acct.key);
    const blocked = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/blocked` } });
    expectError(blocked, 403, 'TARGET_BLOCKED');
    expect(blocked.body.status_code).toBe(403);
    expectError(await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/challenge` } }), 403, 'TARGET_BLOCKED');
    const t0 = Date.now();
    const slow = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/slow?ms=5000`, timeout: 1 } });
    expectError(slow, 504, 'TARGET_TIMEOUT');
    expect(slow.body.timeout).toBe(1);
    expect(Date.now() - t0).toBeLessThan(3500);
    expectError(await call(s.url, '/v1/scrape', { key: acct.key, body: { url: 'http://127.0.0.1:1/' } }), 502, 'TARGET_UNREACHABLE');
    expectError(await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/redirect/loop` } }), 502, 'TARGET_RESPONSE_INVALID');
    expectError(await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/gzip-bomb` } }), 502, 'TARGET_RESPONSE_INVALID');
    const after = await balance(s.url, acct.key);
    expect(after).toEqual({ ...before });
  }, 30_000);

  it('the egress guard refuses loopback in every spelling with TARGET_NOT_ALLOWED, before any credit is held and with zero hits', async () => {
    const a2 = await account(strict.url);
    const port = site.port;
    site.reset();
    for (const url of [
      `http://127.0.0.1:${port}/html/simple`, `http://2130706433:${port}/`, `http://0x7f000001:${port}/`, `http://0177.0.0.1:${port}/`,
      `http://127.1:${port}/`, `http://[::1]:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://localhost:${port}/`,
      `http://169.254.169.254/latest/meta-data/`, `http://[fd00:ec2::254]/`, `http://10.0.0.1/`, `http://192.168.1.1/`,
    ]) {
      const a = await call(strict.url, '/v1/scrape', { key: a2.key, body: { url } });
      expectError(a, 400, 'TARGET_NOT_ALLOWED');
      expect(a.body.validation_errors[0].field).toBe('url');
    }
    // A redirect from a public-looking hop is checked again: here the first hop is refused already (loopback),
    // so the redirect case is covered with the allowed server below.
    expect(site.hitCount()).toBe(0);
    expect(await balance(strict.url, a2.key)).toMatchObject({ used: 0, reserved: 0, remaining: 1000 });
    // The loopback-only mode the tests run in refuses every other private range without connecting.
    for (const url of ['http://10.0.0.1/', 'http://192.168.0.10/', 'http://[fc00::1]/', 'http://100.64.0.1/']) {
      expectError(await call(s.url, '/v1/scrape', { key: acct.key, body: { url } }), 400, 'TARGET_NOT_ALLOWED');
    }
    // Cloud metadata stays refused even where private targets are allowed.
    expectError(await call(s.url, '/v1/scrape', { key: acct.key, body: { url: 'http://169.254.169.254/latest/meta-data/' } }), 400, 'TARGET_NOT_ALLOWED');
    const redirect = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/redirect/to?url=${encodeURIComponent('http://169.254.169.254/')}` } });
    expectError(redirect, 400, 'TARGET_NOT_ALLOWED');
  });

  it('refuses hostile requests with 400 and every problem named', async () => {
    const cases: [unknown, string][] = [
      [{}, 'url'],
      [{ url: 'not a url' }, 'url'],
      // A refused URL with another problem: both named, under the code of a malformed request.
      [{ url: 'ftp://example.com/', timeout: 0 }, 'url'],
      [{ url: `${site.url}/`, screenshot: true }, 'screenshot'],
      [{ url: `${site.url}/`, wait_for: '#x' }, 'wait_for'],
      [{ url: `${site.url}/`, render_js: true, wait_time: 61 }, 'wait_time'],
      [{ url: `${site.url}/`, render_js: true, wait_time: 0 }, 'wait_time'],
      [{ url: `${site.url}/`, custom_headers: { Host: 'evil.example' } }, 'custom_headers.Host'],
      [{ url: `${site.url}/`, custom_headers: { Connection: 'close' } }, 'custom_headers.Connection'],
      [{ url: `${site.url}/`, custom_headers: { 'Transfer-Encoding': 'chunked' } }, 'custom_headers.Transfer-Encoding'],
      [{ url: `${site.url}/`, custom_headers: { 'Bad Name': 'x' } }, 'custom_headers.Bad Name'],
      [{ url: `${site.url}/`, custom_headers: { 'X-A': 'a\r\nInjected: 1' } }, 'custom_headers.X-A'],
      [{ url: `${site.url}/`, cookies: { a: 'b;c' } }, 'cookies.a'],
      [{ url: `${site.url}/`, user_agent: 'x\ny' }, 'user_agent'],
      [{ url: `${site.url}/`, proxy_type: 'mobile' }, 'proxy_type'],
      [{ url: `${site.url}/`, proxy_country: 'usa' }, 'proxy_country'],
      [{ url: `${site.url}/`, proxy_country: 'ZZ' }, 'proxy_country'],
      [{ url: `${site.url}/`, timeout: 121 }, 'timeout'],
      [{ url: `${site.url}/`, render_js: true, screenshot: true, screenshot_options: { format: 'gif' } }, 'screenshot_options.format'],
      [{ url: `${site.url}/`, render_js: true, screenshot: true, screenshot_options: { quality: 50 } }, 'screenshot_options.quality'],
      [{ url: `${site.url}/`, extractors: ['nope'] }, 'extractors'],
      [{ url: `${site.url}/`, extractors: ['links'] }, 'extractors'],
      [{ url: `${site.url}/`, colour: 'red' }, 'colour'],
      ['{"url": ', 'body'],
    ];
    const before = await balance(s.url, acct.key);
    for (const [body, field] of cases) {
      const a = await call(s.url, '/v1/scrape', { key: acct.key, body });
      expectError(a, 400, 'MISSING_PARAMETER');
      const fields = (a.body.validation_errors as { field: string }[]).map((v) => v.field);
      expect(fields.some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(field)), `${JSON.stringify(body)} -> ${JSON.stringify(fields)}`).toBe(true);
    }
    // A scheme or credentials the egress guard refuses: TARGET_NOT_ALLOWED, as a redirect to one is.
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'http://user:pw@example.com/']) {
      const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url } });
      expectError(a, 400, 'TARGET_NOT_ALLOWED');
      expect(a.body.validation_errors.map((v: { field: string }) => v.field)).toEqual(['url']);
    }
    expect(await balance(s.url, acct.key)).toEqual(before);
  });

  it('asks for no proxy the server does not have: 400 PROXY_NOT_AVAILABLE listing what there is', async () => {
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/html/simple`, proxy_type: 'residential', proxy_country: 'US' } });
    expectError(a, 400, 'PROXY_NOT_AVAILABLE');
    expect(a.body.available).toEqual(expect.arrayContaining(['datacenter:US', 'residential:DE']));
    expect(JSON.stringify(a.body)).not.toContain('127.0.0.1');
  });

  it('goes through a proxy: a failing proxy is rotated to the next; residential costs +2', async () => {
    const [bad, good, other] = proxies;
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/html/simple`, proxy_country: 'US' } });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.proxy).toEqual({ type: 'datacenter', country: 'US' });
    expect(bad!.count() + good!.count()).toBeGreaterThanOrEqual(1);
    expect(good!.count()).toBeGreaterThanOrEqual(1);
    const r = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/html/simple`, proxy_type: 'residential' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.credits_used).toBe(5);
    expect(other!.count()).toBe(1);
    expect(JSON.stringify(a.body) + JSON.stringify(r.body)).not.toMatch(/127\.0\.0\.1:\d+@|proxy-chain/);
  });

  it('runs custom extractors loaded from a plugin file; a failing one is reported without failing the scrape', async () => {
    const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/structured`, extractors: ['price', 'boom'] } });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.extracted).toHaveProperty('price');
    expect(a.body.extractor_errors).toEqual({ boom: 'boom: this extractor always fails' });
    expect(a.body.credits_used).toBe(3);
  });

  describe('render_js (real Chromium)', () => {
    it('renders JavaScript-built content (+5 credits)', async () => {
      const a = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/js`, render_js: true } });
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body.content).toContain('Rendered by JavaScript');
      expect(a.body.text_content).toContain('Rendered by JavaScript');
      expect(a.body.credits_used).toBe(8);
      // Without render_js the script is only source text: it is not in the page's text.
      const plain = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/js` } });
      expect(plain.body.text_content).not.toContain('Rendered by JavaScript');
      expect(plain.body.text_content).toContain('Loading...');
    }, 30_000);

    it('waits for a CSS selector or an XPath; an element that never comes is 504 and costs nothing', async () => {
      const css = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/delayed-element?ms=700`, render_js: true, wait_for: '#late', wait_time: 5 } });
      expect(css.status, JSON.stringify(css.body)).toBe(200);
      expect(css.body.content).toContain('Late content');
      const xpath = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/delayed-element?ms=700`, render_js: true, wait_for: '//div[@id="late"]', wait_time: 5 } });
      expect(xpath.status).toBe(200);
      expect(xpath.body.content).toContain('Late content');
      // wait_time alone: a pause after load, long enough for the late element.
      const paused = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/delayed-element?ms=700`, render_js: true, wait_time: 2 } });
      expect(paused.status).toBe(200);
      expect(paused.body.content).toContain('Late content');
      const before = await balance(s.url, acct.key);
      const never = await call(s.url, '/v1/scrape', { key: acct.key, body: { url: `${site.url}/delayed-element?ms=60000`, render_js: true, wait_for: '#late', wait_time: 1 } });
      expectError(never, 504, 'TARGET_TIMEOUT');
      expect(await balance(s.url, acct.key)).toEqual(before);
    }, 40_000);

    it('takes screenshots (+3) served back at an unguessable URL, PNG or JPEG of the requested size', async () => {
      const a = await call(s.url, '/v1/scrape', {
        key: acct.key,
        body: { url: `${site.url}/html/simple`, render_js: true, screenshot: true, screenshot_options: { width: 640, height: 480 } },
      });
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body.credits_used).toBe(11);
      expect(a.body.screenshot_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/screenshots\/[A-Za-z0-9_-]{32}\.png$/);
      expect(new Date(a.body.screenshot_expires_at).getTime()).toBeGreaterThan(Date.now() + 3600_000);
      const png = await fetch(a.body.screenshot_url);
      expect(png.status).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
      const bytes = Buffer.from(await png.arrayBuffer());
      expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([640, 480]);

      const j = await call(s.url, '/v1/scrape', {
        key: acct.key,
        body: { url: `${site.url}/html/simple`, render_js: true, screenshot: true, screenshot_options: { format: 'jpeg', quality: 60, width: 800, height: 600 } },
      });
      expect(j.status, JSON.stringify(j.body)).toBe(200);
      const jpg = await fetch(j.body.screenshot_url);
      expect(jpg.headers.get('content-type')).toBe('image/jpeg');
      const jb = Buffer.from(await jpg.arrayBuffer());
      expect([jb[0], jb[1]]).toEqual([0xff, 0xd8]);
      // Unknown and malformed screenshot URLs are 404.
      expect((await fetch(`${s.url}/v1/screenshots/${'A'.repeat(32)}.png`)).status).toBe(404);
      expect((await fetch(`${s.url}/v1/screenshots/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
    }, 40_000);

    it('a client that goes away mid-render is not charged and its credit hold is released', async () => {
      const before = await balance(s.url, acct.key);
      const controller = new AbortController();
      const pending = call(s.url, '/v1/scrape', {
        key: acct.key, signal: controller.signal,
        body: { url: `${site.url}/delayed-element?ms=60000`, render_js: true, wait_for: '#late', wait_time: 30 },
      }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 800));
      controller.abort();
      await pending;
      const deadline = Date.now() + 5000;
      let now = await balance(s.url, acct.key);
      while (now.reserved !== 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        now = await balance(s.url, acct.key);
      }
      expect(now).toEqual(before);
    }, 30_000);
  });
});

describe('POST /v1/scrape on the shared configuration (PostgreSQL + Redis)', () => {
  let site: TargetSite;
  let s: Running;
  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn('shared', 'uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('charges a success once and a failure never, and carries the plan headers', async () => {
    const a = await account(s.url, 'starter', 10);
    const ok = await call(s.url, '/v1/scrape', { key: a.key, body: { url: `${site.url}/html/simple`, extract_meta: true } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ credits_used: 4, remaining_credits: 6 });
    expect(ok.headers.get('x-ratelimit-limit')).toBe('50');
    expectError(await call(s.url, '/v1/scrape', { key: a.key, body: { url: `${site.url}/blocked` } }), 403, 'TARGET_BLOCKED');
    const short = await call(s.url, '/v1/scrape', { key: a.key, body: { url: `${site.url}/html/simple`, render_js: true } });
    expectError(short, 402, 'NO_CREDITS');
    expect(short.body).toMatchObject({ credits_remaining: 6, credits_required: 8 });
    expect(await balance(s.url, a.key)).toEqual({ remaining: 6, reserved: 0, used: 4 });
    expect(await ledger(s.url, a.id)).toHaveLength(1);
  });
});

describe('POST /v1/scrape without Chromium installed', () => {
  let site: TargetSite;
  let s: Running;
  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn('embedded', 'node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', chromiumPath: '/nonexistent/chromium' });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('starts and scrapes; render_js alone is 503 SERVICE_UNAVAILABLE saying why, and costs nothing', async () => {
    const a = await account(s.url, 'starter', 20);
    const plain = await call(s.url, '/v1/scrape', { key: a.key, body: { url: `${site.url}/html/simple` } });
    expect(plain.status).toBe(200);
    const r = await call(s.url, '/v1/scrape', { key: a.key, body: { url: `${site.url}/js`, render_js: true } });
    expectError(r, 503, 'SERVICE_UNAVAILABLE');
    expect(r.body.error).toContain('Chromium is not installed at /nonexistent/chromium');
    expect(r.headers.get('retry-after')).toBe('60');
    expect(await balance(s.url, a.key)).toEqual({ remaining: 17, reserved: 0, used: 3 });
  });
});
