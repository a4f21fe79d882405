/**
 * POST /v1/crawl on the embedded store, against loopback sites
 * (test/support/crawl-site.ts): robots.txt (Disallow, Crawl-delay, Sitemap),
 * a sitemap index, a calendar trap, one page under seven spellings, a
 * redirect off the site and one on it, a file link, a 404, a noindex page;
 * every skip counted with its reason, nothing requested that should not
 * be, politeness measured at the site; pages stored in the account's own
 * collection and found by POST /v1/search for that account only; billing
 * per stored page with a stop when credits run out (nothing overdrawn);
 * render_js priced; include/exclude paths; the signed crawl.completed
 * webhook; cancel; ownership (404); and the validation of every field.
 * Then the same site on PostgreSQL + Redis, run by a `scour worker`-role
 * instance fed by BullMQ.
 */
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../adapters/webhooks/sign.js';
import { call, expectErrorBody } from '../support/http.js';
import { until } from '../support/processes.js';
import { createLogger } from '../../adapters/logging/pino.js';
import { createScour } from '../../config/container.js';
import { startScour, startScourIn, type Running } from '../support/server.js';
import { startCrawlSite, WORDS, type CrawlSite } from '../support/crawl-site.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'crawl-admin-token-0123456789abcdef';

describe('POST /v1/crawl (embedded)', { timeout: 120_000 }, () => {
  let s: Running;
  const sites: CrawlSite[] = [];
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    s = await startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', webhookSchedule: [1, 1], workerConcurrency: 4 });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    for (const r of receivers) await r.close();
    for (const site of sites) await site.close();
  });

  const site = async (...args: Parameters<typeof startCrawlSite>) => {
    const x = await startCrawlSite(...args);
    sites.push(x);
    return x;
  };
  const account = async (plan: string, credits: number) => {
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
    expect(r.status, r.text).toBe(201);
    return { id: r.body.account_id as string, key: `Bearer ${r.body.api_key as string}` };
  };
  const crawl = (key: string, body: unknown) => call(`${s.url}/v1/crawl`, 'POST', { auth: key, body });
  const status = (key: string, id: string) => call(`${s.url}/v1/crawl/${id}`, 'GET', { auth: key });
  const finished = (key: string, id: string, timeoutMs = 60_000) =>
    until(() => status(key, id), (r) => !['queued', 'running', 'cancelling'].includes(r.body.status), timeoutMs, 100);
  const search = async (key: string, query: string): Promise<string[]> => {
    const r = await call(`${s.url}/v1/search`, 'POST', { auth: key, body: { query, max_results: 50 } });
    expect(r.status, r.text).toBe(200);
    return (r.body.search_results as { link: string }[]).map((x) => x.link);
  };
  const ledger = async (accountId: string) => {
    const r = await call(`${s.url}/admin/v1/accounts/${accountId}/ledger`, 'GET', { auth: `Bearer ${ADMIN}` });
    expect(r.status, r.text).toBe(200);
    return r.body.ledger as { operation: string; credits: number; request_id: string }[];
  };
  const usage = async (key: string) => (await call(`${s.url}/v1/usage`, 'GET', { auth: key })).body as { credits_remaining: number; credits_used: number; credits_reserved: number };
  const documents = async (collection: string) => {
    const r = await call(`${s.url}/admin/v1/index/stats`, 'GET', { auth: `Bearer ${ADMIN}` });
    return (r.body.collections as { collection: string; documents: number }[]).find((c) => c.collection === collection)?.documents ?? 0;
  };

  it('crawls a site: sitemaps, robots, traps, duplicate spellings and redirects handled, every skip counted, pages searchable by their owner only', async () => {
    const docs = await site('docs', { crawlDelay: 0.2 });
    const a = await account('builder', 1000);
    const other = await account('builder', 1000);
    const secret = await Effect.runPromise(s.scour.jobStore.ensureWebhookSecret(a.id, newWebhookSecret(), Date.now()));
    const rx = await startWebhookReceiver({ secret });
    receivers.push(rx);
    const started = Date.now();
    const r = await crawl(a.key, { url: `${docs.url}/`, max_pages: 200, max_depth: 20, callback_url: rx.url });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({ status: 'queued', url: `${docs.url}/`, max_pages: 200, max_depth: 20, collection: a.id });
    expect(r.body.job_id).toMatch(/^crawl_[0-9a-f]{32}$/);
    expect(r.body.status_url).toBe(`${s.url}/v1/crawl/${r.body.job_id}`);
    const done = (await finished(a.key, r.body.job_id)).body;
    const seconds = (Date.now() - started) / 1000;

    // 8 pages of docs (home, a, b, c, orphan from the sitemap, cdata, list, behind-quiet) and 24 calendar months.
    expect(done).toMatchObject({
      status: 'completed', stop_reason: null, pages_done: 32, pages_failed: 1, pages_queued: 0, pages_skipped: 9, credits_used: 96,
      collection: a.id, callback_url: rx.url,
    });
    expect(done.skipped_reasons).toEqual({
      robots: 2, // /private/secret (a link) and /private/from-sitemap
      off_domain: 1, // a link to 127.0.0.2
      redirect_off_domain: 1, // /away -> 127.0.0.2, not followed
      redirect: 1, // /moved -> /docs/c, crawled as its own page
      not_html: 1, // /files/report.pdf
      noindex: 1, // /quiet (its link was followed)
      calendar: 2, // the 25th month each way
    });
    expect(done.started_at).not.toBeNull();
    expect(done.completed_at).not.toBeNull();

    // What the site saw: each page once, whatever its spelling; nothing refused was asked for.
    expect(docs.hits('/docs/b')).toBe(1);
    expect(docs.hits('/docs/list?a=1&b=2')).toBe(1);
    expect(docs.hits('/docs/c')).toBe(1);
    expect(docs.hits('/robots.txt')).toBe(1);
    expect(docs.requests.filter((q) => q.path.startsWith('/private/') || q.path.startsWith('/files/'))).toEqual([]);
    expect(docs.offSite()).toEqual([]);
    const months = docs.requests.filter((q) => q.path.startsWith('/calendar/')).map((q) => q.path);
    expect(months).toHaveLength(24);
    expect(new Set(months).size).toBe(24);
    expect(months.every((m) => m <= '/calendar/2027/11')).toBe(true);
    expect(docs.requests.every((q) => q.userAgent.includes('ScourBot/'))).toBe(true);
    // Crawl-delay 0.2: one request at a time, starts at least 0.2 s apart (after robots.txt).
    const after = docs.requests.filter((q) => q.path !== '/robots.txt');
    expect(Math.max(...after.map((q) => q.inFlight))).toBe(1);
    // (measured where the site receives them, in this loaded test process: a late timestamp on one request shortens the gap after it,
    // so the two shortest gaps are left out; the in-flight count above still proves one request at a time)
    const gaps = after.slice(1).map((q, i) => q.at - after[i]!.at).sort((x, y) => x - y);
    expect(gaps[Math.min(2, gaps.length - 1)]).toBeGreaterThanOrEqual(150);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThanOrEqual(195);
    console.log(`docs crawl: ${docs.requests.length} requests, ${done.pages_done} pages stored in ${seconds.toFixed(1)} s with Crawl-delay 0.2`);

    // The webhook: signed, crawl.completed, the same view as the status endpoint.
    const [hook] = await rx.waitFor(1, 10_000);
    expect(hook!.verified).toBe(true);
    expect(hook!.event).toBe('crawl.completed');
    const data = (hook!.body as { data: Record<string, unknown> }).data;
    const { webhook: _w1, request_id: _r, ...view } = done;
    const { webhook: _w2, ...sent } = data;
    expect(sent).toEqual(view);

    // Billed once per stored page, under crawl.
    const rows = await ledger(a.id);
    expect(rows.filter((l) => l.operation === 'crawl')).toHaveLength(32);
    expect(new Set(rows.map((l) => l.request_id)).size).toBe(32);
    expect(await usage(a.key)).toMatchObject({ credits_used: 96, credits_remaining: 904, credits_reserved: 0 });

    // In the account's own collection: found by its owner, by no one else.
    expect(await documents(a.id)).toBe(32);
    expect(await search(a.key, WORDS.b!)).toEqual([`${docs.url}/docs/b`]);
    expect(await search(a.key, WORDS.orphan!)).toEqual([`${docs.url}/docs/orphan`]);
    expect(await search(a.key, WORDS.list!)).toEqual([`${docs.url}/docs/list?a=1&b=2`]);
    expect(await search(a.key, WORDS['behind-quiet']!)).toEqual([`${docs.url}/docs/behind-quiet`]);
    expect(await search(a.key, 'mole')).toEqual([]); // the noindex page
    expect(await search(other.key, WORDS.b!)).toEqual([]);
    expect(await search(other.key, WORDS.orphan!)).toEqual([]);
  });

  it('is polite without a Crawl-delay too: two requests in flight at most per host', async () => {
    const slow = await site('slow', { pages: 30, ms: 150 });
    const a = await account('builder', 1000);
    const started = Date.now();
    const r = await crawl(a.key, { url: `${slow.url}/`, max_depth: 1 });
    expect(r.status, r.text).toBe(202);
    const done = (await finished(a.key, r.body.job_id)).body;
    const seconds = (Date.now() - started) / 1000;
    expect(done).toMatchObject({ status: 'completed', pages_done: 31, pages_failed: 0, pages_queued: 0 });
    const peak = Math.max(...slow.requests.map((q) => q.inFlight));
    expect(peak).toBe(2);
    console.log(`slow crawl: 31 pages of 150 ms each in ${seconds.toFixed(1)} s (${(31 / seconds).toFixed(1)} pages/s at 2 per host)`);
  });

  it('stops when the credits run out: status stopped, no_credits, nothing overdrawn, the unpaid page not kept', async () => {
    const slow = await site('slow', { pages: 30, ms: 20 });
    const a = await account('builder', 10);
    const r = await crawl(a.key, { url: `${slow.url}/`, max_depth: 1 });
    expect(r.status, r.text).toBe(202);
    const done = (await finished(a.key, r.body.job_id)).body;
    expect(done).toMatchObject({ status: 'stopped', stop_reason: 'no_credits', pages_done: 3, credits_used: 9, pages_queued: 0 });
    expect(done.skipped_reasons.no_credits).toBeGreaterThanOrEqual(1);
    expect(done.pages_done + done.pages_failed + done.pages_skipped).toBe(31);
    expect(await usage(a.key)).toMatchObject({ credits_used: 9, credits_remaining: 1, credits_reserved: 0 });
    expect(await ledger(a.id)).toHaveLength(3);
    expect(await documents(a.id)).toBe(3);
  });

  it('needs one page\'s price at submission (402), 3 credits a page and 8 with render_js', async () => {
    const poor = await account('builder', 2);
    const r = await crawl(poor.key, { url: 'http://127.0.0.1:9/' });
    expectErrorBody(r, 402, 'NO_CREDITS');
    const seven = await account('builder', 7);
    expectErrorBody(await crawl(seven.key, { url: 'http://127.0.0.1:9/', render_js: true }), 402, 'NO_CREDITS');

    const slow = await site('slow', { pages: 3, ms: 10 });
    const a = await account('builder', 100);
    const rj = await crawl(a.key, { url: `${slow.url}/`, max_pages: 2, render_js: true, use_sitemaps: false });
    expect(rj.status, rj.text).toBe(202);
    const done = (await finished(a.key, rj.body.job_id, 90_000)).body;
    expect(done).toMatchObject({ status: 'completed', stop_reason: 'max_pages', pages_done: 2, credits_used: 16 });
    expect(done.skipped_reasons.max_pages).toBeGreaterThanOrEqual(1);
    expect(await usage(a.key)).toMatchObject({ credits_used: 16 });
  });

  it('follows include_paths and exclude_paths, and max_depth', async () => {
    const docs = await site('docs');
    const a = await account('builder', 1000);
    const r = await crawl(a.key, { url: `${docs.url}/`, include_paths: ['/docs/**'], exclude_paths: ['/docs/c*', '/docs/list*'], use_sitemaps: false, max_depth: 1 });
    expect(r.status, r.text).toBe(202);
    const done = (await finished(a.key, r.body.job_id)).body;
    // Home, /docs/a, /docs/b at depth 1 (their links to /docs/a are known; nothing is at depth 2). Globs see the
    // path and the query: /docs/list* excludes /docs/list?a=1&b=2.
    expect(done).toMatchObject({ status: 'completed', pages_done: 3, pages_failed: 0 });
    // excluded: /docs/list?a=1&b=2 (exclude_paths) and /calendar/2026/11, /away, /moved, /missing, /quiet (not in include_paths).
    expect(done.skipped_reasons).toEqual({ robots: 1, off_domain: 1, not_html: 1, excluded: 6 });
    expect(docs.requests.map((q) => q.path).sort()).toEqual(['/', '/docs/a', '/docs/b', '/robots.txt']);

    const shallow = await crawl(a.key, { url: `${docs.url}/`, max_depth: 0 });
    expect((await finished(a.key, shallow.body.job_id)).body).toMatchObject({ pages_done: 1, pages_queued: 0 });
  });

  it('cancels a running crawl: pages stored so far stay, the rest is skipped as cancelled', async () => {
    const slow = await site('slow', { pages: 30, ms: 300 });
    const a = await account('builder', 1000);
    const r = await crawl(a.key, { url: `${slow.url}/`, max_depth: 1 });
    expect(r.status, r.text).toBe(202);
    await until(() => status(a.key, r.body.job_id), (x) => x.body.pages_done >= 3, 20_000, 50);
    const c = await call(`${s.url}/v1/crawl/${r.body.job_id}`, 'DELETE', { auth: a.key });
    expect(c.status, c.text).toBe(200);
    expect(['cancelling', 'cancelled']).toContain(c.body.status);
    const done = (await finished(a.key, r.body.job_id)).body;
    expect(done).toMatchObject({ status: 'cancelled', stop_reason: 'cancelled', pages_queued: 0 });
    expect(done.pages_done).toBeLessThan(31);
    expect(done.skipped_reasons.cancelled).toBe(31 - done.pages_done - done.pages_failed);
    expect(done.credits_used).toBe(done.pages_done * 3);
    const hits = slow.requests.length;
    await new Promise((res) => setTimeout(res, 800));
    expect(slow.requests.length).toBe(hits);
    // Cancelling again changes nothing.
    expect((await call(`${s.url}/v1/crawl/${r.body.job_id}`, 'DELETE', { auth: a.key })).body).toMatchObject({ status: 'cancelled', pages_done: done.pages_done });
  });

  it('shows and cancels a crawl to its own account only (404 for anyone else, unknown ids and bulk jobs)', async () => {
    const a = await account('builder', 1000);
    const b = await account('builder', 1000);
    const r = await crawl(a.key, { url: 'http://127.0.0.1:9/', max_pages: 1, use_sitemaps: false });
    expect(r.status, r.text).toBe(202);
    expectErrorBody(await status(b.key, r.body.job_id), 404, 'NOT_FOUND');
    expectErrorBody(await call(`${s.url}/v1/crawl/${r.body.job_id}`, 'DELETE', { auth: b.key }), 404, 'NOT_FOUND');
    expectErrorBody(await status(a.key, 'crawl_0000'), 404, 'NOT_FOUND');
    const bulk = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: a.key, body: { urls: ['http://127.0.0.1:9/'], callback_url: 'http://127.0.0.1:9/hook' } });
    expect(bulk.status, bulk.text).toBe(202);
    expectErrorBody(await status(a.key, bulk.body.job_id), 404, 'NOT_FOUND');
    expectErrorBody(await call(`${s.url}/v1/scrape/bulk/${r.body.job_id}`, 'GET', { auth: a.key }), 404, 'NOT_FOUND');
    // Port 9 refuses: robots.txt cannot be read, so nothing may be crawled there (RFC 9309); the crawl completes.
    expect((await finished(a.key, r.body.job_id)).body).toMatchObject({
      status: 'completed', pages_done: 0, pages_failed: 0, pages_skipped: 1, skipped_reasons: { robots_unreachable: 1 }, credits_used: 0,
    });
    expectErrorBody(await call(`${s.url}/v1/crawl/${r.body.job_id}`, 'GET'), 401, 'UNAUTHORIZED');
  });

  it('include_documents: PDF and DOCX links (and a PDF known by its first bytes) stored as reports and searchable by their words; feeds, encrypted and broken documents skipped with their reasons', async () => {
    const papers = await site('papers');
    const a = await account('builder', 1000);
    const other = await account('builder', 1000);
    const r = await crawl(a.key, { url: `${papers.url}/`, max_pages: 20, max_depth: 2, use_sitemaps: false, include_documents: true });
    expect(r.status, r.text).toBe(202);
    const done = await finished(a.key, r.body.job_id, 90_000);
    expect(done.body).toMatchObject({ status: 'completed', pages_done: 5, pages_failed: 0, pages_queued: 0, credits_used: 15 });
    expect(done.body.skipped_reasons).toEqual({ document_encrypted: 1, document_unreadable: 1, feed: 1 });
    expect(done.body.pages_skipped).toBe(3);
    // A document is a page at the crawl's price: 3 credits each, whatever its length.
    const bills = (await ledger(a.id)).filter((l) => l.operation === 'crawl');
    expect(bills.reduce((n, l) => n + Math.abs(l.credits), 0)).toBe(15);
    expect(await documents(a.id)).toBe(5);
    // Searchable by their words, in the crawling account's collection only.
    expect(await search(a.key, 'note on rivers')).toContain(`${papers.url}/papers/note.pdf`);
    expect(await search(a.key, 'harbour handbook')).toContain(`${papers.url}/papers/handbook.docx`);
    expect(await search(a.key, 'Annual Report of the Example Society')).toContain(`${papers.url}/download?id=report`);
    expect(await search(other.key, 'harbour handbook')).not.toContain(`${papers.url}/papers/handbook.docx`);
    const hit = await call(`${s.url}/v1/search`, 'POST', { auth: a.key, body: { query: 'harbour handbook', max_results: 50 } });
    const handbook = (hit.body.search_results as { link: string; title: string }[]).find((x) => x.link === `${papers.url}/papers/handbook.docx`);
    expect(handbook?.title).toBe('The harbour handbook');
  });

  it('without include_documents, document links are skipped as today (not_html) and never requested', async () => {
    const papers = await site('papers');
    const a = await account('builder', 1000);
    const r = await crawl(a.key, { url: `${papers.url}/`, max_pages: 20, max_depth: 2, use_sitemaps: false });
    expect(r.status, r.text).toBe(202);
    const done = await finished(a.key, r.body.job_id, 90_000);
    expect(done.body).toMatchObject({ status: 'completed', pages_done: 2, pages_failed: 0, credits_used: 6 });
    // Four by their extension (not requested), the octet-stream PDF and the feed once fetched.
    expect(done.body.skipped_reasons).toEqual({ not_html: 6 });
    for (const p of ['/papers/note.pdf', '/papers/handbook.docx', '/papers/locked.pdf', '/papers/broken.pdf']) expect(papers.hits(p), p).toBe(0);
    expect(await search(a.key, 'harbour handbook')).not.toContain(`${papers.url}/papers/handbook.docx`);
  });

  it('refuses bad requests with every bad field named, before anything is stored or held', async () => {
    // Unicorn: more cases than Builder's 20 crawl submissions a minute.
    const a = await account('unicorn', 1000);
    const cases: [unknown, number, string, string[]][] = [
      [{}, 400, 'MISSING_PARAMETER', ['url']],
      [{ url: 'not a url' }, 400, 'MISSING_PARAMETER', ['url']],
      [{ url: 'ftp://example.com/' }, 400, 'TARGET_NOT_ALLOWED', ['url']],
      [{ url: 'http://127.0.0.1:9/', callback_url: 'javascript:alert(1)' }, 400, 'TARGET_NOT_ALLOWED', ['callback_url']],
      [{ url: 'http://169.254.169.254/latest/meta-data/' }, 400, 'TARGET_NOT_ALLOWED', ['url']],
      [{ url: 'http://10.0.0.1/' }, 400, 'TARGET_NOT_ALLOWED', ['url']],
      [{ url: 'http://0x0a000001/' }, 400, 'TARGET_NOT_ALLOWED', ['url']],
      [{ url: 'http://[fd00:ec2::254]/' }, 400, 'TARGET_NOT_ALLOWED', ['url']],
      [{ url: 'http://127.0.0.1:9/', max_pages: 0 }, 400, 'MISSING_PARAMETER', ['max_pages']],
      [{ url: 'http://127.0.0.1:9/', max_pages: 10_001 }, 400, 'MISSING_PARAMETER', ['max_pages']],
      [{ url: 'http://127.0.0.1:9/', max_pages: 1.5, max_depth: -1 }, 400, 'MISSING_PARAMETER', ['max_pages', 'max_depth']],
      [{ url: 'http://127.0.0.1:9/', sitemap: true }, 400, 'MISSING_PARAMETER', ['sitemap']],
      [{ url: 'http://127.0.0.1:9/', include_paths: ['blog/**', '/ok/**', '/a/{b'], exclude_paths: ['https://x.test/a'] }, 400, 'MISSING_PARAMETER',
        ['include_paths[0]', 'include_paths[2]', 'exclude_paths[0]']],
      [{ url: 'nope', include_paths: ['x'], callback_url: 'ftp://hooks.example/' }, 400, 'MISSING_PARAMETER', ['url', 'include_paths[0]', 'callback_url']],
      [{ url: 'http://127.0.0.1:9/', callback_url: 'http://169.254.169.254/hook' }, 400, 'TARGET_NOT_ALLOWED', ['callback_url']],
      [{ url: 'http://127.0.0.1:9/', same_domain: 'yes' }, 400, 'MISSING_PARAMETER', ['same_domain']],
      [{ url: 'http://127.0.0.1:9/', include_documents: 'true' }, 400, 'MISSING_PARAMETER', ['include_documents']],
      [{ url: 'http://127.0.0.1:9/', include_documents: 1, max_depth: 'x' }, 400, 'MISSING_PARAMETER', ['include_documents', 'max_depth']],
      [{ url: 'http://127.0.0.1:9/', include_documents: { $ne: false } }, 400, 'MISSING_PARAMETER', ['include_documents']],
      [{ url: 'http://127.0.0.1:9/', include_documents: null }, 400, 'MISSING_PARAMETER', ['include_documents']],
      [{ url: 'http://127.0.0.1:9/', include_paths: Array.from({ length: 51 }, () => '/a') }, 400, 'MISSING_PARAMETER', ['include_paths']],
    ];
    for (const [body, code, name, fields] of cases) {
      const r = await crawl(a.key, body);
      expectErrorBody(r, code, name);
      const named = (r.body.validation_errors as { field: string }[]).map((v) => v.field.replace(/^\//, '').replace(/\//g, '.'));
      for (const f of fields) expect(named, `${JSON.stringify(body)} -> ${r.text}`).toContain(f);
    }
    const bad = await call(`${s.url}/v1/crawl`, 'POST', { auth: a.key, body: '{"url":' });
    expectErrorBody(bad, 400, 'MISSING_PARAMETER');
    expect(await usage(a.key)).toMatchObject({ credits_used: 0, credits_reserved: 0 });
  });
});

describe('POST /v1/crawl on PostgreSQL + Redis, run by a worker', { timeout: 120_000 }, () => {
  let s: (Running & { config: string }) | undefined;
  let worker: Awaited<ReturnType<typeof createScour>> | undefined;
  let docs: CrawlSite | undefined;

  beforeAll(async () => {
    docs = await startCrawlSite('docs');
    s = await startScourIn('shared', 'uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
    worker = await createScour({ settings: { ...s.scour.settings, port: 0 }, role: 'worker', logger: createLogger('silent') });
    await worker.startWorker();
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await s?.stop();
    await docs?.close();
  });

  it('crawls the same site with the same counts; the frontier and the bills are in PostgreSQL', async () => {
    const base = s!.url;
    const made = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'builder', credits: 1000 } });
    const key = `Bearer ${made.body.api_key as string}`;
    const r = await call(`${base}/v1/crawl`, 'POST', { auth: key, body: { url: `${docs!.url}/`, max_pages: 200, max_depth: 20 } });
    expect(r.status, r.text).toBe(202);
    const done = (await until(() => call(`${base}/v1/crawl/${r.body.job_id}`, 'GET', { auth: key }), (x) => x.body.status === 'completed', 60_000, 100)).body;
    expect(done).toMatchObject({ pages_done: 32, pages_failed: 1, pages_queued: 0, pages_skipped: 9, credits_used: 96 });
    expect(done.skipped_reasons).toEqual({ robots: 2, off_domain: 1, redirect_off_domain: 1, redirect: 1, not_html: 1, noindex: 1, calendar: 2 });
    expect(Math.max(...docs!.requests.map((q) => q.inFlight))).toBeLessThanOrEqual(2);
    const found = await call(`${base}/v1/search`, 'POST', { auth: key, body: { query: WORDS.orphan } });
    expect(found.body.search_results.map((x: { link: string }) => x.link)).toEqual([`${docs!.url}/docs/orphan`]);
    const usage = await call(`${base}/v1/usage`, 'GET', { auth: key });
    expect(usage.body).toMatchObject({ credits_used: 96 + 1, credits_reserved: 0 });
  });
});
