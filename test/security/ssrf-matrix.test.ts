/**
 * The SSRF matrix (SECURITY.md): with the default egress policy (no private
 * targets), every spelling of a loopback address is refused on every path
 * that makes the server fetch or call a URL: a scrape (plain and rendered),
 * a bulk scrape, a crawl, a map, the callback_url of bulk, crawl and research, and
 * a search's auto-scrape of indexed results. The target is a live loopback
 * site that counts requests: it must receive none. (Loopback stands in for
 * every refused range: tests send traffic nowhere else, not even to prove a
 * refusal. The ranges themselves are unit-tested in test/core/egress*.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'ssrf-matrix-admin-token-0123456789';

let site: TargetSite;
let s: Running;
let key: string;

/** Every spelling of the loopback target site's address the URL parser and the resolver accept. */
function spellings(port: number): string[] {
  return [
    `http://127.0.0.1:${port}/html/simple`,
    `http://127.1:${port}/html/simple`,
    `http://2130706433:${port}/html/simple`,
    `http://0x7f000001:${port}/html/simple`,
    `http://0177.0.0.1:${port}/html/simple`,
    `http://0x7f.0.0.1:${port}/html/simple`,
    `http://127.0.0.1.:${port}/html/simple`,
    `http://[::1]:${port}/html/simple`,
    `http://[::ffff:127.0.0.1]:${port}/html/simple`,
    `http://[::ffff:7f00:1]:${port}/html/simple`,
    `http://[0:0:0:0:0:0:0:1]:${port}/html/simple`,
    `http://localhost:${port}/html/simple`,
    `http://LOCALHOST.:${port}/html/simple`,
    `http://0.0.0.0:${port}/html/simple`,
    `http://0:${port}/html/simple`,
    `https://127.0.0.1:${port}/html/simple`,
  ];
}

beforeAll(async () => {
  site = await startTargetSite();
  // The default policy: allowPrivateTargets false.
  s = await startScour('uws', { adminToken: ADMIN, searchProviders: ['local'] });
  const created = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 10_000 } });
  expect(created.status, created.text).toBe(201);
  key = created.body.api_key as string;
}, 60_000);

afterAll(async () => {
  await s?.stop();
  await site?.close();
});

const post = (path: string, body: unknown) => call(`${s.url}${path}`, 'POST', { auth: `Bearer ${key}`, body });

describe('SSRF: every loopback spelling, every path, nothing reaches the target', () => {
  it('POST /v1/scrape, plain and render_js: 400 TARGET_NOT_ALLOWED on url', async () => {
    for (const url of spellings(site.port)) {
      for (const render of [false, true]) {
        const r = await post('/v1/scrape', { url, render_js: render });
        expectErrorBody(r, 400, 'TARGET_NOT_ALLOWED');
        expect(r.body.validation_errors, url).toEqual([expect.objectContaining({ field: 'url' })]);
      }
    }
    expect(site.hitCount()).toBe(0);
  });

  it('POST /v1/scrape/bulk: each URL refused on its own field, before any fetch', async () => {
    const urls = spellings(site.port);
    const r = await post('/v1/scrape/bulk', { urls });
    expectErrorBody(r, 400, 'TARGET_NOT_ALLOWED');
    expect((r.body.validation_errors as { field: string }[]).map((v) => v.field)).toEqual(urls.map((_, i) => `urls[${i}]`));
    expect(site.hitCount()).toBe(0);
  });

  it('POST /v1/crawl: the start URL refused', async () => {
    for (const url of spellings(site.port)) {
      const r = await post('/v1/crawl', { url, max_pages: 1 });
      expectErrorBody(r, 400, 'TARGET_NOT_ALLOWED');
    }
    expect(site.hitCount()).toBe(0);
  });

  it('POST /v1/map: the start URL refused, in every sitemap mode', async () => {
    for (const url of spellings(site.port)) {
      for (const sitemap of ['include', 'only', 'skip']) {
        const r = await post('/v1/map', { url, sitemap });
        expectErrorBody(r, 400, 'TARGET_NOT_ALLOWED');
        expect(r.body.validation_errors, url).toEqual([expect.objectContaining({ field: 'url' })]);
      }
    }
    expect(site.hitCount()).toBe(0);
  });

  it('callback_url of bulk, crawl and research refused: no webhook can be aimed at the server\'s own network', async () => {
    const publicLooking = 'https://example.com/page';
    for (const callback of spellings(site.port)) {
      for (const [path, body] of [
        ['/v1/scrape/bulk', { urls: [publicLooking], callback_url: callback }],
        ['/v1/crawl', { url: publicLooking, callback_url: callback }],
        ['/v1/research', { research_query: 'a question about anything', callback_url: callback }],
      ] as const) {
        const r = await post(path, body);
        expectErrorBody(r, 400, 'TARGET_NOT_ALLOWED');
        expect(r.body.validation_errors, `${path} ${callback}`).toEqual([expect.objectContaining({ field: 'callback_url' })]);
      }
    }
    expect(site.hitCount()).toBe(0);
  });

  it('search auto_scrape_top: indexed results at loopback spellings are reported TARGET_NOT_ALLOWED, uncharged, never fetched', async () => {
    const urls = spellings(site.port).filter((u) => u.startsWith('http:')).slice(0, 10);
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', {
      auth: `Bearer ${ADMIN}`,
      body: { collection: 'shared', documents: urls.map((url, i) => ({ url, title: `Loopback page ${i} about zeppelins`, text: `Zeppelins and airships, page ${i}.` })) },
    });
    expect(put.status, put.text).toBe(200);
    const r = await post('/v1/search', { query: 'zeppelins', max_results: 10, auto_scrape_top: 10 });
    expect(r.status, r.text).toBe(200);
    const items = r.body.scraped_content as { url: string; error: { code: string } | null }[];
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(item.error, item.url).toMatchObject({ code: 'TARGET_NOT_ALLOWED' });
    expect(r.body.scraped_count).toBe(0);
    expect(r.body.credits_used).toBe(1);
    expect(site.hitCount()).toBe(0);
  });
});
