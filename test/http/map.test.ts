/**
 * POST /v1/map against loopback sites (test/support/map-site.ts), on the
 * real server: the URLs robots.txt's Sitemap lines, a sitemap index and
 * gzipped sitemaps list (pages linked from nowhere included) and the start
 * page's links with their text; one entry per canonical URL; subdomains in
 * or out; sitemap include, only and skip (what the site was asked for,
 * each time); ranking by a search phrase; the limit; the bounds on sitemap
 * files, bytes (a gzip bomb) and time (a sitemap that never answers); the
 * failures (unreachable, a redirect to a private address) uncharged and an
 * empty map charged; 1 credit a call in the ledger; and hostile input, every
 * problem listed at once, nothing fetched and nothing charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { startMapSite, type MapSite } from '../support/map-site.js';

const ADMIN = 'map-admin-token-0123456789abcdef';

interface Link { url: string; title?: string; source: 'sitemap' | 'page' }

describe('POST /v1/map', { timeout: 120_000 }, () => {
  let s: Running;
  let site: MapSite;
  const others: MapSite[] = [];

  beforeAll(async () => {
    [s, site] = await Promise.all([startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback' }), startMapSite()]);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
    for (const o of others) await o.close();
  });

  const other = async (kind: Parameters<typeof startMapSite>[0]) => {
    const x = await startMapSite(kind);
    others.push(x);
    return x;
  };
  const account = async (credits = 1000, plan = 'unicorn') => {
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
    expect(r.status, r.text).toBe(201);
    return { id: r.body.account_id as string, key: `Bearer ${r.body.api_key as string}` };
  };
  let shared: { id: string; key: string } | undefined;
  const key = async () => (shared ??= await account(100_000)).key;
  const map = async (body: unknown, auth?: string) => call(`${s.url}/v1/map`, 'POST', { auth: auth ?? await key(), body });
  const mapped = async (body: Record<string, unknown>): Promise<{ links: Link[]; warnings?: { code: string; message: string }[]; credits_used: number }> => {
    const r = await map(body);
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const ledger = async (id: string) => (await call(`${s.url}/admin/v1/accounts/${id}/ledger`, 'GET', { auth: `Bearer ${ADMIN}` })).body.ledger as { operation: string; credits: number }[];
  const balance = async (k: string) => (await call(`${s.url}/v1/usage`, 'GET', { auth: k })).body as { credits_remaining: number; credits_used: number; credits_reserved: number };
  const at = (path: string, host = 'localhost') => `http://${host}:${site.port}${path}`;

  it('lists the sitemaps\' URLs (robots.txt lines, an index, .xml.gz files) and the start page\'s links with their text, once each; 1 credit', async () => {
    const a = await account(10);
    const before = site.requests.length;
    const r = await map({ url: `${site.url}/` }, a.key);
    expect(r.status, r.text).toBe(200);
    expect(r.body.credits_used).toBe(1);
    expect(r.body.remaining_credits).toBe(9);
    expect(r.body.warnings).toBeUndefined();
    const links = r.body.links as Link[];
    // The start page first, with its own title; then the sitemaps' URLs in the order read; then the page's other links.
    expect(links).toEqual([
      { url: at('/'), source: 'page', title: 'Home of the map site' },
      { url: at('/news/launch-day'), source: 'sitemap' }, // news.xml.gz, named by robots.txt, application/x-gzip
      { url: at('/docs/getting-started'), source: 'sitemap', title: 'Getting started' },
      { url: at('/docs/install'), source: 'sitemap' }, // three spellings in the sitemap: one URL
      { url: at('/pricing'), source: 'sitemap', title: 'Plans and pricing' }, // linked as /pricing?ref_src=nav too
      { url: at('/only-in-sitemap'), source: 'sitemap' }, // linked from nowhere
      { url: at('/whitepaper.pdf'), source: 'sitemap' }, // a document is kept; /images/logo.png is not
      { url: at('/post-1', 'blog.localhost'), source: 'sitemap' }, // a subdomain (default include_subdomains true)
      { url: at('/archive/2020/old-post'), source: 'sitemap' }, // archive.xml.gz, from the index, application/gzip
      { url: at('/archive/2021/older-post'), source: 'sitemap' },
      { url: at('/about'), source: 'page', title: 'About us' }, // linked twice: the first text
      { url: at('/contact'), source: 'page', title: 'Contact the team' }, // the fragment dropped
      { url: at('/blog/2024/how-we-price'), source: 'page', title: 'How we set our prices' },
      { url: at('/', 'blog.localhost'), source: 'page', title: 'Blog' },
      { url: at('/api/authentication', 'docs.localhost'), source: 'page', title: 'API authentication' },
      { url: at('/team', 'www.localhost'), source: 'page', title: 'Team' }, // www. is the same site
      { url: at('/private/admin'), source: 'page', title: 'Admin' }, // listed, never fetched: robots.txt binds crawls, not a list
    ]);
    // Nothing else: not the other sites (127.0.0.1, example.org), not mailto:, not the style sheet.
    expect(links.some((l) => /127\.0\.0\.1|example\.org|mailto|\.css|\.png/.test(l.url))).toBe(false);

    // What the site was asked: robots.txt, the sitemaps and the start page, once each, as ScourBot; no page's content.
    const asked = site.requests.slice(before);
    expect(asked.map((q) => q.path).sort()).toEqual(['/', '/news.xml.gz', '/robots.txt', '/sitemap.xml', '/sitemap_index.xml', '/sitemaps/archive.xml.gz', '/sitemaps/pages.xml']);
    expect(asked.every((q) => q.userAgent.includes('ScourBot/'))).toBe(true);

    // Billed once, under map.
    expect((await ledger(a.id)).filter((l) => l.operation === 'map').map((l) => l.credits)).toEqual([1]);
    expect(await balance(a.key)).toMatchObject({ credits_used: 1, credits_remaining: 9, credits_reserved: 0 });
  });

  it('include_subdomains: false keeps to the start host (and its www. twin)', async () => {
    const on = (await mapped({ url: `${site.url}/` })).links.map((l) => new URL(l.url).hostname);
    const off = (await mapped({ url: `${site.url}/`, include_subdomains: false })).links.map((l) => new URL(l.url).hostname);
    expect(new Set(on)).toEqual(new Set(['localhost', 'blog.localhost', 'docs.localhost', 'www.localhost']));
    expect(new Set(off)).toEqual(new Set(['localhost', 'www.localhost']));
    expect(off).toHaveLength(on.length - 3);
  });

  it('sitemap: only reads the sitemaps alone, skip the start page alone', async () => {
    let before = site.requests.length;
    const only = (await mapped({ url: `${site.url}/`, sitemap: 'only' })).links;
    expect(site.requests.slice(before).map((q) => q.path)).not.toContain('/');
    expect(only.every((l) => l.source === 'sitemap' && l.title === undefined)).toBe(true);
    expect(only.map((l) => l.url)).toEqual(expect.arrayContaining([at('/only-in-sitemap'), at('/archive/2021/older-post'), at('/news/launch-day')]));
    expect(only).toHaveLength(9);

    before = site.requests.length;
    const skip = (await mapped({ url: `${site.url}/`, sitemap: 'skip' })).links;
    expect(site.requests.slice(before).map((q) => q.path)).toEqual(['/']);
    expect(skip.every((l) => l.source === 'page')).toBe(true);
    expect(skip.map((l) => l.url)).not.toContain(at('/only-in-sitemap'));
    expect(skip.find((l) => l.url === at('/pricing'))).toEqual({ url: at('/pricing'), source: 'page', title: 'Plans and pricing' });
    expect(skip).toHaveLength(10);
  });

  it('search ranks by the path and the link text, and leaves out what does not match', async () => {
    const urls = async (search: string, extra: Record<string, unknown> = {}) => (await mapped({ url: `${site.url}/`, search, ...extra })).links.map((l) => l.url);
    expect((await urls('getting started'))[0]).toBe(at('/docs/getting-started'));
    expect(await urls('archive older')).toEqual([at('/archive/2021/older-post'), at('/archive/2020/old-post')]);
    // Plural, prefix and stem: "prices" finds the link text "our prices", the slug "price" and "pricing".
    expect(new Set(await urls('prices'))).toEqual(new Set([at('/blog/2024/how-we-price'), at('/pricing')]));
    // Link text counts: "team" is the text of the contact link and the /team slug.
    expect(await urls('team')).toEqual([at('/team', 'www.localhost'), at('/contact')]);
    expect(await urls('authentication api')).toEqual([at('/api/authentication', 'docs.localhost')]);
    expect(await urls('zebra')).toEqual([]);
    // With the limit: the best ones.
    expect(await urls('docs', { limit: 1 })).toHaveLength(1);
  });

  it('limit: at most that many, from the top of the list', async () => {
    const all = (await mapped({ url: `${site.url}/` })).links;
    expect((await mapped({ url: `${site.url}/`, limit: 3 })).links).toEqual(all.slice(0, 3));
    expect((await mapped({ url: `${site.url}/`, limit: 1 })).links).toEqual([all[0]]);
    expect((await mapped({ url: `${site.url}/`, limit: 10_000 })).links).toEqual(all);
  });

  it('follows a redirecting start URL and lists where it ended', async () => {
    const links = (await mapped({ url: `${site.url}/moved`, sitemap: 'skip' })).links;
    expect(links[0]).toEqual({ url: at('/'), source: 'page', title: 'Home of the map site' });
    expect(links.map((l) => l.url)).toContain(at('/about'));
  });

  it('bounds the sitemap files read (50), with a warning', async () => {
    const many = await other('many');
    const r = await mapped({ url: `${many.url}/`, sitemap: 'only' });
    const children = many.requests.filter((q) => q.path.startsWith('/s/')).length;
    // robots.txt, then 50 files: the index, /sitemap.xml and 48 of its 80 children.
    expect(children).toBe(48);
    expect(r.links).toHaveLength(48);
    expect(r.warnings).toEqual([{ code: 'SITEMAP_LIMIT', message: expect.stringContaining('50 sitemap files') }]);
  });

  it('bounds the bytes read: a gzip bomb stops at 50 MiB unzipped, the rest of the map answered', async () => {
    const bomb = await other('bomb');
    const started = Date.now();
    const r = await mapped({ url: `${bomb.url}/` });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.links.map((l) => l.url)).toEqual([`${bomb.url}/`, `${bomb.url}/safe`]);
    expect(r.warnings).toEqual([{ code: 'SITEMAP_LIMIT', message: expect.stringContaining('50 MiB') }]);
  });

  it('bounds the time: a sitemap that never answers ends with the timeout, what was found answered', async () => {
    const slow = await other('slow');
    const started = Date.now();
    const r = await mapped({ url: `${slow.url}/`, timeout: 5 });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(4_500);
    expect(took).toBeLessThan(9_000);
    expect(r.links.map((l) => l.url)).toEqual([`${slow.url}/`, `${slow.url}/quick`]);
    expect(r.warnings).toEqual([{ code: 'TIME_LIMIT', message: expect.stringContaining('5 s') }]);
    expect(r.credits_used).toBe(1);
  });

  it('a client that goes away stops the map: the hold released, nothing charged, the site\'s hanging request closed', async () => {
    const slow = await other('slow');
    const a = await account(10);
    const controller = new AbortController();
    const pending = call(`${s.url}/v1/map`, 'POST', { auth: a.key, body: { url: `${slow.url}/`, timeout: 60 }, signal: controller.signal }).catch((e: unknown) => e);
    const deadline = Date.now() + 10_000;
    while (slow.hits('/slow.xml') === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(slow.hits('/slow.xml')).toBe(1);
    expect((await balance(a.key)).credits_reserved).toBe(1);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    for (let i = 0; i < 100 && (await balance(a.key)).credits_reserved !== 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await balance(a.key)).toMatchObject({ credits_used: 0, credits_remaining: 10, credits_reserved: 0 });
    expect(await ledger(a.id)).toEqual([]);
    for (let i = 0; i < 100 && slow.open() > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(slow.open()).toBe(0);
  });

  it('a site that answers with nothing to list: an empty map, charged, with a warning', async () => {
    const none = await other('none');
    const r = await mapped({ url: `${none.url}/` });
    expect(r.links).toEqual([]);
    expect(r.warnings).toEqual([{ code: 'START_PAGE_NOT_READ', message: expect.stringContaining('404') }]);
    expect(r.credits_used).toBe(1);
  });

  it('a site it cannot reach, or a start page redirected to a private address: the error, nothing charged', async () => {
    const a = await account(10);
    const closed = await map({ url: 'http://127.0.0.1:1/' }, a.key);
    expectErrorBody(closed, 502, 'TARGET_UNREACHABLE');
    const onlySitemaps = await map({ url: 'http://127.0.0.1:1/', sitemap: 'only' }, a.key);
    expectErrorBody(onlySitemaps, 502, 'TARGET_UNREACHABLE');
    const redirected = await map({ url: `${site.url}/redirect-private`, sitemap: 'skip' }, a.key);
    expectErrorBody(redirected, 400, 'TARGET_NOT_ALLOWED');
    expect(await balance(a.key)).toMatchObject({ credits_used: 0, credits_remaining: 10, credits_reserved: 0 });
    expect(await ledger(a.id)).toEqual([]);
  });

  it('needs a key and a credit: 401 and 402 before anything is fetched', async () => {
    const before = site.requests.length;
    expectErrorBody(await call(`${s.url}/v1/map`, 'POST', { body: { url: `${site.url}/` } }), 401, 'UNAUTHORIZED');
    const poor = await account(0);
    const r = await map({ url: `${site.url}/` }, poor.key);
    expectErrorBody(r, 402, 'NO_CREDITS');
    expect(r.body.credits_required).toBe(1);
    expect(site.requests.length).toBe(before);
  });

  it('refuses hostile input with every problem listed at once, fetching nothing and charging nothing', async () => {
    const a = await account(10);
    const before = site.requests.length;
    const bad = async (body: unknown, fields: string[], code = 'MISSING_PARAMETER') => {
      const r = await map(body, a.key);
      expectErrorBody(r, 400, code);
      const got = (r.body.validation_errors as { field: string; message: string }[]).map((e) => e.field);
      expect(new Set(got), JSON.stringify(body)).toEqual(new Set(fields));
    };
    await bad({}, ['url']);
    await bad({ url: 'not a url' }, ['url']);
    await bad({ url: '' }, ['url']);
    await bad({ url: 7 }, ['url']);
    await bad({ url: `${site.url}/${'x'.repeat(2100)}` }, ['url']);
    await bad({ url: 'ftp://example.com/' }, ['url'], 'TARGET_NOT_ALLOWED');
    await bad({ url: 'http://10.0.0.1/' }, ['url'], 'TARGET_NOT_ALLOWED');
    await bad({ url: 'http://169.254.169.254/latest/meta-data/' }, ['url'], 'TARGET_NOT_ALLOWED');
    await bad({ url: 'http://[::ffff:10.0.0.1]/' }, ['url'], 'TARGET_NOT_ALLOWED');
    await bad({ url: `http://user:pw@localhost:${site.port}/` }, ['url'], 'TARGET_NOT_ALLOWED');
    for (const limit of [0, 10_001, -1, 1.5, '5', null, true]) await bad({ url: `${site.url}/`, limit }, ['limit']);
    for (const timeout of [4, 61, '30']) await bad({ url: `${site.url}/`, timeout }, ['timeout']);
    for (const sitemap of ['sometimes', '', 'ONLY', 1]) await bad({ url: `${site.url}/`, sitemap }, ['sitemap']);
    for (const search of ['', '!!! ???', 'x'.repeat(501), ['a']]) await bad({ url: `${site.url}/`, search }, ['search']);
    await bad({ url: `${site.url}/`, include_subdomains: 'yes' }, ['include_subdomains']);
    await bad({ url: `${site.url}/`, crawl: true }, ['crawl']);
    // Everything at once: every field named, the refused URL among them.
    await bad({ url: 'http://10.0.0.1/', limit: 0, sitemap: 'x', search: '...', timeout: 0, extra: 1 }, ['url', 'limit', 'sitemap', 'search', 'timeout', 'extra']);
    for (const body of [[], 'x', 42, null]) {
      const r = await map(body, a.key);
      expectErrorBody(r, 400, 'MISSING_PARAMETER');
    }
    expect(site.requests.length).toBe(before);
    expect(await balance(a.key)).toMatchObject({ credits_used: 0, credits_remaining: 10, credits_reserved: 0 });
  });
});
