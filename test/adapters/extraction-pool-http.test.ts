/**
 * The extraction pool behind the real server: a scrape answers the same
 * bytes whether its built-in extractors run in workers or in-process, on
 * every page of the loopback target site and on Zyte benchmark pages; a
 * page that crashes or exits its worker fails alone with 502
 * TARGET_RESPONSE_INVALID, uncharged, in a single scrape and in a bulk
 * (the other URLs succeed and only they are charged); custom extractors
 * still run, in the main thread, beside the pooled built-ins; and stopping
 * the server leaves no worker thread.
 */
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { ExtractionPool } from '../../adapters/extraction-pool/pool.js';
import type { OperationPlugin, PluginHost } from '../../core/plugin.js';
import { builtinExtractors, parsePage } from '../../plugins/extractors/index.js';
import { startScour, type Running } from '../support/server.js';
import { ARTICLE_DIR, startTargetSite, type TargetSite } from '../support/target-site.js';
import { requireSharedData } from '../support/shared-data.js';

const ADMIN = 'extraction-pool-admin-token-0123';
const EVERYTHING = {
  extract_links: true, extract_images: true, extract_schema: true, extract_meta: true, main_content: true, markdown: true,
  extract_contacts: true, extract_social: true,
};
/** A page long enough for any threshold, with a marker the pool's test hooks act on. */
const hostile = (hook: string) => `<!DOCTYPE html><html><head><title>${hook}</title></head><body>${'<p>Some text here.</p>'.repeat(200)}<!--scour-test:${hook}--></body></html>`;

async function post(base: string, path: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}
async function account(base: string, credits = 10_000): Promise<string> {
  const r = await fetch(`${base}/admin/v1/accounts`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'unicorn', credits }),
  });
  return ((await r.json()) as { api_key: string }).api_key;
}
async function credits(base: string, key: string): Promise<number> {
  const r = await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  return ((await r.json()) as { credits_remaining: number }).credits_remaining;
}
/** What differs between two scrapes of the same page that is not extraction: timing and accounting. */
function comparable(b: Record<string, unknown>): Record<string, unknown> {
  const { load_time: _l, request_id: _r, remaining_credits: _c, ...rest } = b;
  return rest;
}

/** OS threads named like the main thread (one per worker thread). */
function jsThreads(): Set<string> {
  const comm = (tid: string) => { try { return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(); } catch { return ''; } };
  const main = comm(String(process.pid));
  return new Set(readdirSync('/proc/self/task').filter((t) => t !== String(process.pid) && comm(t) === main));
}

/** A custom extractor module (a closure over module state: it cannot move to a worker) that says which thread ran it. */
function writeCustomExtractor(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scour-pool-plugin-'));
  const file = join(dir, 'thread-extractor.ts');
  writeFileSync(file, `
import { isMainThread } from 'node:worker_threads';
import { defineExtractor } from ${JSON.stringify(join(process.cwd(), 'plugins/sdk/scrape.ts'))};
let calls = 0;
export default [defineExtractor({
  name: 'extractor-thread', id: 'thread',
  extract: (page) => ({ main: isMainThread, calls: ++calls, title: page.document.children.length > 0, chars: page.html.length }),
})];
`);
  return file;
}

describe('extraction pool behind the server', () => {
  let site: TargetSite;
  let hooks: http.Server;
  let hooksUrl: string;
  let pool: ExtractionPool;
  let pooled: Running;
  let inprocess: Running;
  let keys: { pooled: string; inprocess: string };

  beforeAll(async () => {
    requireSharedData();
    site = await startTargetSite();
    hooks = http.createServer((req, res) => {
      const m = /^\/(exit|crash|ok)$/.exec(req.url ?? '');
      res.writeHead(m ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(m ? hostile(m[1]!) : 'no');
    });
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
    // Every page through the workers (no size threshold), with the test hooks on.
    pool = new ExtractionPool({
      workers: 2, timeoutMs: 20_000, inlineBelow: 0, testHooks: true, adaptive: false,
      module: new URL('../../plugins/extractors/index.js', import.meta.url), local: { parse: parsePage, extractors: builtinExtractors },
    });
    const plugin = writeCustomExtractor();
    pooled = await startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', pluginPaths: [plugin] }, { extraction: pool });
    inprocess = await startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', pluginPaths: [plugin], extractionWorkers: 0 });
    keys = { pooled: await account(pooled.url), inprocess: await account(inprocess.url) };
    await pool.start();
  }, 90_000);

  afterAll(async () => {
    await pooled?.stop();
    await inprocess?.stop();
    await pool?.close();
    await new Promise((r) => hooks?.close(r));
    await site?.close();
  });

  it('answers the same scrape, byte for byte but timing, from workers and in-process: target-site pages and Zyte articles', async () => {
    const articles = readdirSync(ARTICLE_DIR).filter((f) => f.endsWith('.html.gz')).sort().slice(0, 12).map((f) => `/article?id=${f.slice(0, -'.html.gz'.length)}`);
    const paths = [
      '/html/simple', '/structured', '/images', '/links', '/status/404', '/gzip', '/br', '/js', '/delayed-element',
      '/charset/header-latin1', '/charset/http-equiv-latin1', '/charset/meta-1251', '/charset/bom-utf16le', '/charset/none', '/echo', '/img/a.png',
      ...articles,
    ];
    const before = pool.stats().pooled;
    for (const path of paths) {
      const body = { url: `${site.url}${path}`, ...EVERYTHING, country: 'FR' };
      const a = await post(pooled.url, '/v1/scrape', keys.pooled, body);
      const b = await post(inprocess.url, '/v1/scrape', keys.inprocess, body);
      expect(a.status, `${path}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(200);
      expect(b.status).toBe(200);
      // The echo page shows the request, which carries nothing that differs between the two servers' fetches but the port.
      expect(comparable(a.body), path).toEqual(comparable(b.body));
      expect(JSON.stringify(comparable(a.body)), path).toBe(JSON.stringify(comparable(b.body)));
    }
    // HTML pages went to the workers (a PNG, JSON and text pages have nothing for the HTML extractors).
    expect(pool.stats().pooled - before).toBeGreaterThanOrEqual(paths.length - 3);
  }, 120_000);

  it('fails a page that crashes or exits its worker with 502 TARGET_RESPONSE_INVALID, uncharged; the next scrape works', async () => {
    for (const hook of ['crash', 'exit']) {
      const before = await credits(pooled.url, keys.pooled);
      const a = await post(pooled.url, '/v1/scrape', keys.pooled, { url: `${hooksUrl}/${hook}`, extract_links: true });
      expect(a.status, JSON.stringify(a.body)).toBe(502);
      expect(a.body).toMatchObject({ code: 'TARGET_RESPONSE_INVALID', error: 'The page could not be extracted' });
      expect(a.body.details).toMatch(/^the extraction worker stopped on this page: it (crashed|exited)/);
      expect(await credits(pooled.url, keys.pooled)).toBe(before);
      const ok = await post(pooled.url, '/v1/scrape', keys.pooled, { url: `${hooksUrl}/ok`, extract_links: true });
      expect(ok.status).toBe(200);
      expect(ok.body.text_content).toContain('Some text here.');
    }
  }, 60_000);

  it('fails only that URL of a bulk scrape; the others succeed and only they are charged', async () => {
    const before = await credits(pooled.url, keys.pooled);
    const urls = [`${hooksUrl}/ok`, `${hooksUrl}/crash`, `${site.url}/html/simple`, `${hooksUrl}/exit`, `${site.url}/structured`];
    const r = await post(pooled.url, '/v1/scrape/bulk', keys.pooled, { urls, extract_meta: true, retry_failed: true });
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
    expect(r.body.results.map((x: { success: boolean }) => x.success)).toEqual([true, false, true, false, true]);
    for (const n of [1, 3]) {
      // Not a network failure: not retried.
      expect(r.body.results[n]).toMatchObject({ attempts: 1, error: { code: 'TARGET_RESPONSE_INVALID' } });
    }
    expect(r.body.results[4].result.meta_data.title).toBeTruthy();
    // 3 credits a page and 1 for the meta data, for the three pages that succeeded.
    expect(r.body).toMatchObject({ succeeded: 3, failed: 2, credits_used: 12 });
    expect(await credits(pooled.url, keys.pooled)).toBe(before - 12);
  }, 60_000);

  it('runs custom extractors in the main thread, beside the built-ins in the workers', async () => {
    const url = `${site.url}${'/article?id='}${readdirSync(ARTICLE_DIR).sort()[0]!.slice(0, -'.html.gz'.length)}`;
    const a = await post(pooled.url, '/v1/scrape', keys.pooled, { url, extract_links: true, main_content: true, extractors: ['thread'] });
    const b = await post(inprocess.url, '/v1/scrape', keys.inprocess, { url, extract_links: true, main_content: true, extractors: ['thread'] });
    expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
    expect(a.body.extracted.thread).toMatchObject({ main: true, title: true, chars: a.body.content.length });
    expect(a.body.links).toEqual(b.body.links);
    expect(a.body.main_content).toBe(b.body.main_content);
  }, 60_000);

  it('stops its own pool with the server: no worker thread is left', async () => {
    const before = jsThreads();
    const s = await startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', extractionWorkers: 2, extractionInlineBelow: 0 });
    const key = await account(s.url);
    // 2 MiB: a worker extracts it even on a quiet server.
    const r = await post(s.url, '/v1/scrape', key, { url: `${site.url}/huge?mb=2&length=1`, extract_links: true });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    const started = [...jsThreads()].filter((t) => !before.has(t));
    expect(started.length).toBeGreaterThanOrEqual(2);
    await s.stop();
    expect([...jsThreads()].filter((t) => started.includes(t))).toEqual([]);
  }, 60_000);
});

describe('where a page is extracted, behind the real server (SCOUR_EXTRACTION_WORKERS=2, adaptive)', () => {
  let site: TargetSite;
  let s: Running;
  let key: string;
  let host: PluginHost | undefined;
  let articles: string[];
  beforeAll(async () => {
    requireSharedData();
    site = await startTargetSite();
    s = await startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', extractionWorkers: 2 }, {
      plugins: [{ kind: 'operation', name: 'operation-pool-probe', routes: (h: PluginHost) => { host = h; return []; } } as OperationPlugin],
    });
    key = await account(s.url);
    // Articles under 256 KiB (larger ones always get a worker).
    articles = readdirSync(ARTICLE_DIR).sort().map((f) => f.slice(0, -'.html.gz'.length))
      .filter((id) => { const n = gunzipSync(readFileSync(join(ARTICLE_DIR, `${id}.html.gz`))).toString('utf8').length; return n >= 8192 && n < 200 * 1024; })
      .slice(0, 3);
    expect(articles).toHaveLength(3);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });
  const stats = () => (host!.extraction as ExtractionPool).stats();
  const urlOf = (id: string, n: number) => `${site.url}/article?id=${id}&n=${n}`;

  it('single scrapes one at a time stay in the main thread; a bulk, and a single scrape beside another request, use the workers', async () => {
    const two = availableParallelism() >= 2;
    const before = stats();
    for (const [n, id] of articles.entries()) {
      const r = await post(s.url, '/v1/scrape', key, { url: urlOf(id, n), ...EVERYTHING });
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    }
    const afterSingles = stats();
    expect(afterSingles.pooled - before.pooled).toBe(0);
    expect(afterSingles.inline - before.inline).toBe(3);

    const bulk = await post(s.url, '/v1/scrape/bulk', key, { urls: articles.map((id, n) => urlOf(id, 10 + n)), ...EVERYTHING });
    expect(bulk.status, JSON.stringify(bulk.body).slice(0, 300)).toBe(200);
    expect(bulk.body.succeeded).toBe(3);
    const afterBulk = stats();
    // Pages of a batch go to the workers (on one usable core they stay here: nothing would run in parallel).
    expect(afterBulk.pooled - afterSingles.pooled).toBe(two ? 3 : 0);

    // A slow request in flight meanwhile: the single scrape's page goes to a worker, so the main thread stays free for it.
    const slow = post(s.url, '/v1/scrape', key, { url: `${site.url}/slow?ms=1500` });
    await new Promise((r) => setTimeout(r, 200));
    const r = await post(s.url, '/v1/scrape', key, { url: urlOf(articles[0]!, 20), ...EVERYTHING });
    expect(r.status).toBe(200);
    expect((await slow).status).toBe(200);
    expect(stats().pooled - afterBulk.pooled).toBe(two ? 1 : 0);
  }, 60_000);
});
