/**
 * The scrape cache (issue 29, section 4) through the real server against a
 * loopback site that counts its hits: a second scrape within max_age does
 * not touch the site and says hit with its age, and is charged the base
 * price and what it extracts (not render_js); past the age it fetches;
 * other fetch options miss; cookies and custom headers are never cached;
 * another account does not see the entry; bulk scrape reads it too; the
 * cap and the expiry evict; two servers on one data directory share it.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'scrape-cache-admin-token-0123456789';

interface CountingSite { readonly url: string; hits(path: string): number; close(): Promise<void> }

/** Pages of about `size` bytes at any path; every request counted by path (query included). */
async function startCountingSite(size = 2_000): Promise<CountingSite> {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const filler = 'Lorem ipsum dolor sit amet. '.repeat(Math.ceil(size / 28));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!DOCTYPE html><html><head><title>Page ${path}</title></head><body><article><h1>Page ${path}</h1><p>${filler}</p><a href="/next">next</a></article></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: (path) => hits.get(path) ?? 0,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('max_age: the scrape cache', () => {
  let site: CountingSite;
  let s: Running;
  let n = 0;
  const admin = (method: string, path: string, body?: unknown) => call(`${s.url}/admin/v1${path}`, method, { auth: `Bearer ${ADMIN}`, body });
  const account = async (): Promise<string> => {
    const r = await admin('POST', '/accounts', { plan: 'unicorn', credits: 10_000 });
    expect(r.status, r.text).toBe(201);
    return r.body.api_key;
  };
  const scrape = (key: string, body: Record<string, unknown>, on = s) => call(`${on.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });
  /** A path no other test has used. */
  const fresh = () => `/p${++n}`;

  beforeAll(async () => {
    site = await startCountingSite();
    s = await startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', browserPages: 1 });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('a second scrape within max_age does not touch the site, says hit with its age, and costs the base price', async () => {
    const key = await account();
    const path = fresh();
    const first = await scrape(key, { url: `${site.url}${path}`, max_age: 600 });
    expect(first.status, first.text).toBe(200);
    expect(first.body.cache).toEqual({ hit: false });
    expect(first.body.credits_used).toBe(3);
    expect(site.hits(path)).toBe(1);
    await sleep(1100);
    const second = await scrape(key, { url: `${site.url}${path}`, max_age: 600, extract_links: true, markdown: true });
    expect(second.status, second.text).toBe(200);
    expect(site.hits(path)).toBe(1);
    expect(second.body.cache).toEqual({ hit: true, age: expect.any(Number) });
    expect(second.body.cache.age).toBeGreaterThanOrEqual(1);
    expect(second.body.cache.age).toBeLessThan(60);
    // The stored page, extracted for this request: its own fields, charged as extracted (3 + links 1).
    expect(second.body.content).toBe(first.body.content);
    expect(second.body.links.map((l: { url: string }) => l.url)).toEqual([`${site.url}/next`]);
    expect(second.body.markdown).toMatch(/^# Page \/p\d+/m);
    expect(second.body.credits_used).toBe(4);
    // Without max_age the cache is not asked, and the answer says nothing of it.
    const third = await scrape(key, { url: `${site.url}${path}` });
    expect(third.body).not.toHaveProperty('cache');
    expect(site.hits(path)).toBe(2);
  });

  it('past max_age it fetches; max_age 0 always fetches', async () => {
    const key = await account();
    const path = fresh();
    expect((await scrape(key, { url: `${site.url}${path}` })).status).toBe(200);
    const zero = await scrape(key, { url: `${site.url}${path}`, max_age: 0 });
    expect(zero.body.cache).toEqual({ hit: false });
    expect(site.hits(path)).toBe(2);
    await sleep(2100);
    const stale = await scrape(key, { url: `${site.url}${path}`, max_age: 1 });
    expect(stale.body.cache).toEqual({ hit: false });
    expect(site.hits(path)).toBe(3);
    // That fetch was stored: it answers the next one.
    const hit = await scrape(key, { url: `${site.url}${path}`, max_age: 1 });
    expect(hit.body.cache).toMatchObject({ hit: true });
    expect(site.hits(path)).toBe(3);
  });

  it('other fetch options miss; other extraction options and a fragment hit', async () => {
    const key = await account();
    const path = fresh();
    const url = `${site.url}${path}`;
    expect((await scrape(key, { url, max_age: 600 })).body.cache).toEqual({ hit: false });
    expect((await scrape(key, { url, max_age: 600, user_agent: 'OtherBot/1.0' })).body.cache).toEqual({ hit: false });
    expect((await scrape(key, { url, max_age: 600, follow_redirects: false })).body.cache).toEqual({ hit: false });
    expect(site.hits(path)).toBe(3);
    expect((await scrape(key, { url: `${url}#section`, max_age: 600, extract_meta: true, timeout: 10 })).body.cache).toMatchObject({ hit: true });
    expect((await scrape(key, { url, max_age: 600, user_agent: 'OtherBot/1.0' })).body.cache).toMatchObject({ hit: true });
    expect(site.hits(path)).toBe(3);
  });

  it('render_js is its own entry; a rendered hit is not charged render_js', async () => {
    const key = await account();
    const path = fresh();
    const url = `${site.url}${path}`;
    expect((await scrape(key, { url, max_age: 600 })).status).toBe(200);
    const rendered = await scrape(key, { url, max_age: 600, render_js: true });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.cache).toEqual({ hit: false });
    expect(rendered.body.credits_used).toBe(8);
    expect(site.hits(path)).toBe(2);
    const again = await scrape(key, { url, max_age: 600, render_js: true });
    expect(again.body.cache).toMatchObject({ hit: true });
    expect(again.body.credits_used).toBe(3);
    expect(again.body.content).toBe(rendered.body.content);
    expect(site.hits(path)).toBe(2);
  }, 60_000);

  it.each([
    ['cookies', { cookies: { session: 'abc' } }],
    ['custom_headers', { custom_headers: { 'X-Tenant': 'a' } }],
  ])('a request with %s is never answered from the cache nor stored', async (field, extra) => {
    const key = await account();
    const path = fresh();
    const url = `${site.url}${path}`;
    for (let i = 1; i <= 2; i++) {
      const r = await scrape(key, { url, max_age: 600, ...extra });
      expect(r.status, r.text).toBe(200);
      expect(r.body.cache).toEqual({ hit: false, uncacheable: field });
      expect(site.hits(path)).toBe(i);
    }
    // Nor was it stored for a plain request.
    expect((await scrape(key, { url, max_age: 600 })).body.cache).toEqual({ hit: false });
    expect(site.hits(path)).toBe(3);
  });

  it("another account does not see this account's entry", async () => {
    const [a, b] = [await account(), await account()];
    const path = fresh();
    const url = `${site.url}${path}`;
    await scrape(a, { url, max_age: 600 });
    expect((await scrape(b, { url, max_age: 600 })).body.cache).toEqual({ hit: false });
    expect(site.hits(path)).toBe(2);
    expect((await scrape(a, { url, max_age: 600 })).body.cache).toMatchObject({ hit: true });
    expect(site.hits(path)).toBe(2);
  });

  it('bulk scrape reads and fills the same cache, and charges a hit its base price', async () => {
    const key = await account();
    const [p1, p2] = [fresh(), fresh()];
    await scrape(key, { url: `${site.url}${p1}`, render_js: true });
    const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${key}`, body: { urls: [`${site.url}${p1}`, `${site.url}${p2}`], max_age: 600, render_js: true } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.results.map((x: { result: { cache: unknown } }) => x.result.cache)).toEqual([{ hit: true, age: expect.any(Number) }, { hit: false }]);
    expect(r.body.results.map((x: { result: { credits_used: number } }) => x.result.credits_used)).toEqual([3, 8]);
    expect(r.body.credits_used).toBe(11);
    expect([site.hits(p1), site.hits(p2)]).toEqual([1, 1]);
    // What bulk stored answers a single scrape.
    expect((await scrape(key, { url: `${site.url}${p2}`, render_js: true, max_age: 600 })).body.cache).toMatchObject({ hit: true });
    expect(site.hits(p2)).toBe(1);
  }, 60_000);

  it.each([
    [{ max_age: -1 }, 'max_age'],
    [{ max_age: 1.5 }, 'max_age'],
    [{ max_age: '60' }, 'max_age'],
    [{ max_age: null }, 'max_age'],
    [{ max_age: true }, 'max_age'],
    [{ max_age: 30 * 86_400 + 1 }, 'max_age'],
    [{ max_age: 1e308 }, 'max_age'],
    [{ track_changes: 'true' }, 'track_changes'],
    [{ track_changes: 1 }, 'track_changes'],
    [{ track_changes: null }, 'track_changes'],
  ])('refuses %j with a field-level error', async (extra, field) => {
    const key = await account();
    const r = await scrape(key, { url: `${site.url}/never`, ...extra });
    expect(r.status, r.text).toBe(400);
    expect(r.body.validation_errors.map((e: { field: string }) => e.field)).toContain(field);
    const bulk = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${key}`, body: { urls: [`${site.url}/never`], ...extra } });
    expect(bulk.status, bulk.text).toBe(400);
    expect(site.hits('/never')).toBe(0);
  });
});

describe('max_age: cap, expiry and sharing', () => {
  let site: CountingSite;
  const started: Running[] = [];
  const start = async (settings: Parameters<typeof startScour>[1]) => {
    const r = await startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', ...settings });
    started.push(r);
    return r;
  };
  const keyOn = async (s: Running): Promise<string> => {
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 10_000 } });
    expect(r.status, r.text).toBe(201);
    return r.body.api_key;
  };
  const scrape = (s: Running, key: string, path: string) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body: { url: `${site.url}${path}`, max_age: 3600 } });

  beforeAll(async () => {
    site = await startCountingSite(20_000);
  });
  afterAll(async () => {
    for (const s of started) await s.stop();
    await site?.close();
  });

  it('past SCOUR_CACHE_MAX_BYTES the oldest entries go', async () => {
    const s = await start({ cacheMaxBytes: 50_000 });
    const key = await keyOn(s);
    for (const p of ['/cap-a', '/cap-b', '/cap-c', '/cap-d']) expect((await scrape(s, key, p)).body.cache).toEqual({ hit: false });
    // About 20 kB each: a and b made way for c and d.
    expect((await scrape(s, key, '/cap-d')).body.cache).toMatchObject({ hit: true });
    expect((await scrape(s, key, '/cap-c')).body.cache).toMatchObject({ hit: true });
    expect((await scrape(s, key, '/cap-a')).body.cache).toEqual({ hit: false });
    expect(site.hits('/cap-a')).toBe(2);
    expect(site.hits('/cap-d')).toBe(1);
  });

  it('an entry expires SCOUR_CACHE_TTL after its fetch, whatever max_age says', async () => {
    const s = await start({ cacheTtlSeconds: 1 });
    const key = await keyOn(s);
    await scrape(s, key, '/ttl');
    expect((await scrape(s, key, '/ttl')).body.cache).toMatchObject({ hit: true });
    await sleep(1200);
    expect((await scrape(s, key, '/ttl')).body.cache).toEqual({ hit: false });
    expect(site.hits('/ttl')).toBe(2);
  });

  it('SCOUR_CACHE_MAX_BYTES=0 turns the cache off', async () => {
    const s = await start({ cacheMaxBytes: 0 });
    const key = await keyOn(s);
    await scrape(s, key, '/off');
    expect((await scrape(s, key, '/off')).body.cache).toEqual({ hit: false });
    expect(site.hits('/off')).toBe(2);
  });

  it('two servers on one data directory share the cache', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'scour-cache-shared-'));
    const a = await start({ dataDir });
    const b = await start({ dataDir });
    const key = await keyOn(a);
    await scrape(a, key, '/shared');
    expect((await scrape(b, key, '/shared')).body.cache).toMatchObject({ hit: true });
    expect(site.hits('/shared')).toBe(1);
  });
});
