/**
 * scour/client in a real browser (Debian's Chromium through Playwright): the
 * built module (dist/adapters/client, what the package ships) is loaded by
 * a page on one loopback origin and calls a real Scour server on another
 * origin: a developer tool without a key (CORS `*`), an authenticated call
 * refused by CORS when the origin is not listed and answered when it is
 * (SCOUR_CORS_ORIGINS), ScourError fields, rateLimit from exposed headers,
 * and verifyWebhook with the browser's Web Crypto against the server's own
 * signer.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPayload } from '../../adapters/webhooks/sign.js';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';

const CHROMIUM = '/usr/bin/chromium';
const ADMIN = 'client-browser-admin-token-0123456789';
const DIST = join(process.cwd(), 'dist/adapters/client');

let site: Server;
let origin: string;
let server: Running;
let browser: Browser;
let page: Page;
let apiKey: string;

beforeAll(async () => {
  // The module as shipped, from the current sources.
  await promisify(execFile)(join(process.cwd(), 'node_modules/.bin/tsc'), ['-p', 'tsconfig.client.json']);
  // The page's origin: an HTML page and the client's files, nothing else.
  site = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0];
    if (name === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>client</title><p>client test</p>');
      return;
    }
    const file = /^\/client\/([a-z.]+\.js)$/.exec(name ?? '')?.[1];
    if (!file || !existsSync(join(DIST, file))) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(readFileSync(join(DIST, file)));
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  server = await startScour('uws', { adminToken: ADMIN, corsOrigins: [origin] });
  const created = await call(`${server.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 50 } });
  expect(created.status, created.text).toBe(201);
  apiKey = created.body.api_key as string;
  expect(existsSync(CHROMIUM), `${CHROMIUM} is required (bash scripts/test-services.sh installs it)`).toBe(true);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-breakpad'] });
  page = await browser.newPage();
  await page.goto(`${origin}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((r) => site?.close(r));
});

/** Runs `body` in the page with `Scour`, `ScourError` and `verifyWebhook` imported from the shipped module. */
function inPage<T>(body: string, arg: Record<string, unknown>, on: Page = page): Promise<T> {
  // A string, so the test runner's transform leaves the page's dynamic import alone.
  return on.evaluate(`(async () => {
    const { Scour, ScourError, verifyWebhook } = await import('/client/index.js');
    const arg = ${JSON.stringify(arg)};
    ${body}
  })()`) as Promise<T>;
}

describe('scour/client in Chromium', () => {
  it('calls a developer tool on another origin without a key', async () => {
    const out = await inPage<{ uuids: string[] }>(
      `return new Scour({ baseUrl: arg.base }).tools['uuid-generator']({ count: 3 });`, { base: server.url });
    expect(out.uuids).toHaveLength(3);
    for (const u of out.uuids) expect(u).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an authenticated call from a listed origin works and reads the exposed rate-limit headers', async () => {
    const out = await inPage<{ usage: Record<string, unknown>; rate: Record<string, unknown> }>(
      `const c = new Scour({ baseUrl: arg.base, apiKey: arg.key }); const usage = await c.usage(); return { usage, rate: c.rateLimit };`,
      { base: server.url, key: apiKey });
    expect(out.usage).toMatchObject({ credits_remaining: 50 });
    expect(out.rate).toMatchObject({ limit: expect.any(Number), remaining: expect.any(Number), reset: expect.any(Number) });
  });

  it('from an origin not in SCOUR_CORS_ORIGINS the browser withholds the answer: a NETWORK_ERROR, while tools still work', async () => {
    // Another origin for the same page server: localhost instead of 127.0.0.1.
    const other = await browser.newPage();
    try {
      await other.goto(`${origin.replace('127.0.0.1', 'localhost')}/`);
      const out = await inPage<Record<string, unknown>>(
        `const c = new Scour({ baseUrl: arg.base, apiKey: arg.key, retries: 0 });
         const tool = await c.tools['base64-encoder']({ input: 'hi' });
         try { await c.usage(); return { ok: true }; } catch (e) { return { tool: tool.output, status: e.status, code: e.code }; }`,
        { base: server.url, key: apiKey }, other);
      expect(out).toEqual({ tool: 'aGk=', status: 0, code: 'NETWORK_ERROR' });
    } finally {
      await other.close();
    }
  });

  it('an error answer becomes a ScourError with the spec body fields', async () => {
    const out = await inPage<Record<string, unknown>>(
      `try { await new Scour({ baseUrl: arg.base, apiKey: arg.key, retries: 0 }).scrape({ url: 'ftp://x/', timeout: 0 }); return { ok: true }; }
       catch (e) { return { isScourError: e instanceof ScourError, status: e.status, code: e.code, fields: e.validationErrors.map((v) => v.field), requestId: e.requestId }; }`,
      { base: server.url, key: apiKey });
    expect(out).toMatchObject({ isScourError: true, status: 400, fields: ['url', 'timeout'] });
    expect(out.requestId).toEqual(expect.any(String));
  });

  it('a bad key is a 401 ScourError, not retried', async () => {
    const out = await inPage<Record<string, unknown>>(
      `try { await new Scour({ baseUrl: arg.base, apiKey: 'sk_nope' }).usage(); return { ok: true }; }
       catch (e) { return { status: e.status, code: e.code, attempts: e.attempts }; }`,
      { base: server.url });
    expect(out).toEqual({ status: 401, code: 'AUTHENTICATION_FAILED', attempts: 1 });
  });

  it('verifyWebhook checks the server\'s signature with Web Crypto, and refuses a changed body', async () => {
    const secret = 'whsec_browser_test_secret';
    const body = JSON.stringify({ event: 'bulk.completed', data: { job_id: 'bulk_1' } });
    const t = Math.floor(Date.now() / 1000);
    const header = signPayload(secret, body, t);
    const out = await inPage<{ ok: unknown; tampered: string }>(
      `const ok = await verifyWebhook(arg.body, { 'Scour-Signature': arg.header }, arg.secret);
       const tampered = await verifyWebhook(arg.body + ' ', { 'scour-signature': arg.header }, arg.secret).then(() => 'accepted', (e) => e.code + ': ' + e.message);
       return { ok, tampered };`,
      { body, header, secret });
    expect(out).toEqual({ ok: true, tampered: 'INVALID_SIGNATURE: no v1 signature matches' });
  });
});
