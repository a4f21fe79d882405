/**
 * Request validation over the real server, on both HTTP adapters (issue 17):
 * every problem of a request in one 400, the schema's and the route's own
 * checks together, in the order of the schema's fields; one entry per field
 * for a value outside an enum or a union; a bounded list (at most 100
 * entries, the last "and K more problems") however many bad values a body
 * holds; and one code per cause: a URL the egress guard refuses by its
 * scheme is 400 TARGET_NOT_ALLOWED wherever it is met (a scrape's URL, a
 * bulk item, a crawl's start, a callback, a redirect), a string that is not
 * a URL at all is MISSING_PARAMETER. Nothing here is charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, postJson, startScour, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'validation-admin-token-0123456789';

interface Issue { field: string; message: string }

describe.each(ADAPTERS)('request validation over %s', (adapter) => {
  let s: Running;
  let site: TargetSite;
  let key: string;

  const post = (path: string, body: unknown, auth: string | undefined = key) =>
    postJson(`${s.url}${path}`, body, auth === undefined ? {} : { authorization: `Bearer ${auth}` });
  const fieldsOf = (body: { validation_errors: Issue[] }) => body.validation_errors.map((v) => v.field);
  const usage = async () => (await (await fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { credits_used: number; credits_reserved: number };

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScour(adapter, { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'], browserPages: 1 });
    const a = await postJson(`${s.url}/admin/v1/accounts`, { plan: 'unicorn', credits: 1000 }, { authorization: `Bearer ${ADMIN}` });
    key = a.body.api_key;
  });

  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('names the schema\'s and the route\'s problems in one 400, in the order of the schema\'s fields', async () => {
    // ftp: the egress guard; timeout 0: the schema; screenshot without render_js: the route's check.
    const r = await post('/v1/scrape', { url: 'ftp://x/', timeout: 0, screenshot: true });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    // Problems of several kinds: the request is malformed, whatever else it is.
    expect(r.body.code).toBe('MISSING_PARAMETER');
    expect(fieldsOf(r.body)).toEqual(['url', 'screenshot', 'timeout']);
    expect(r.body.validation_errors[0].message).toMatch(/ftp scheme is not allowed/);
    for (const e of r.body.validation_errors) expect(Object.keys(e).sort()).toEqual(['field', 'message']);
  });

  it('runs the route\'s checks over the fields the schema accepted, at every depth', async () => {
    const r = await post('/v1/scrape', {
      url: `${site.url}/html/simple`,
      wait_for: '#x', // needs render_js
      proxy_country: 'ZZ', // the schema's pattern passes; not a country
      custom_headers: { Host: 'evil.example', 'X-Number': 5, 'X-Ok': 'fine' },
      cookies: { 'bad name': 'v', ok: 42 },
      screenshot_options: { format: 'gif', quality: 0, width: 'wide', extra: true },
      extractors: ['nope', 7],
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('MISSING_PARAMETER');
    const fields = fieldsOf(r.body);
    for (const f of [
      'wait_for', 'proxy_country', 'custom_headers.Host', 'custom_headers.X-Number', 'cookies.bad name', 'cookies.ok',
      'screenshot_options', 'screenshot_options.format', 'screenshot_options.quality', 'screenshot_options.width', 'screenshot_options.extra',
      'extractors[0]', 'extractors[1]',
    ]) expect(fields, f).toContain(f);
    expect(fields).not.toContain('custom_headers.X-Ok');
    // Each field and message once; the schema's order (wait_for before proxy_country before custom_headers ...).
    expect(new Set(r.body.validation_errors.map((v: Issue) => `${v.field}:${v.message}`)).size).toBe(fields.length);
    expect(fields.indexOf('wait_for')).toBeLessThan(fields.indexOf('proxy_country'));
    expect(fields.indexOf('custom_headers.Host')).toBeLessThan(fields.indexOf('screenshot_options.format'));
    expect(fields.indexOf('extractors[0]')).toBeLessThan(fields.indexOf('extractors[1]'));
  });

  it('names every field of a body with wrong types everywhere, once each', async () => {
    const body = {
      url: 5, render_js: 'yes', wait_for: [], wait_time: '10', user_agent: {}, proxy_type: 3, proxy_country: null,
      follow_redirects: 1, extract_links: 'true', extract_images: 0, extract_schema: null, extract_meta: [], extract_contacts: {},
      extract_social: 'x', country: 44, custom_headers: [], cookies: 'a=b', screenshot: 'yes', screenshot_options: [],
      timeout: '30', main_content: 'on', markdown: 1, extractors: 'price', nonsense: true,
    };
    const r = await post('/v1/scrape', body);
    expect(r.status).toBe(400);
    expect(fieldsOf(r.body)).toEqual(Object.keys(body));
    expect(r.body.validation_errors.find((v: Issue) => v.field === 'proxy_type').message).toBe('must be one of: datacenter, residential');
    expect(r.body.validation_errors.find((v: Issue) => v.field === 'nonsense').message).toBe('is not a recognised field');
  });

  it('answers a value outside an enum or a union with one entry listing what is allowed', async () => {
    const scrape = await post('/v1/scrape', { url: `${site.url}/`, proxy_type: 'mobile', render_js: true, screenshot: true, screenshot_options: { format: 'gif' } });
    expect(scrape.status).toBe(400);
    expect(scrape.body.validation_errors).toEqual([
      { field: 'proxy_type', message: 'must be one of: datacenter, residential' },
      { field: 'screenshot_options.format', message: 'must be one of: png, jpeg' },
    ]);
    const search = await post('/v1/search', { query: 'x', time_range: 'decade', safe_search: 1, result_type: 'images' });
    expect(search.status).toBe(400);
    expect(fieldsOf(search.body)).toEqual(['time_range', 'safe_search', 'result_type']);
    expect(search.body.validation_errors[0].message).toMatch(/^must be one of: hour, day, /);
    expect(search.body.validation_errors[1].message).toBe('must be one of: off, moderate, strict');
    const tool = await post('/v1/tools/html-entity-encoder', { input: 'x', action: 'shout', level: 'sgml' }, undefined);
    expect(tool.status).toBe(400);
    expect(tool.body.validation_errors).toEqual([
      { field: 'action', message: 'must be one of: encode, decode' },
      { field: 'level', message: 'must be one of: html5, xml' },
    ]);
  });

  it('bounds the list: at most 100 entries, the last one "and K more problems"', async () => {
    // 1,000 bad items (and too many of them, and repeated): every one is a problem.
    const many = await post('/v1/scrape', { url: `${site.url}/`, extractors: Array.from({ length: 1000 }, () => 5) });
    expect(many.status).toBe(400);
    const list = many.body.validation_errors as Issue[];
    expect(list).toHaveLength(100);
    expect(list.slice(0, 99).every((v) => v.field === 'extractors' || /^extractors\[\d+\]$/.test(v.field))).toBe(true);
    const last = list[99]!;
    expect(last.field).toBe('body');
    const more = Number(/^and (\d+) more problems$/.exec(last.message)?.[1]);
    expect(99 + more).toBeGreaterThanOrEqual(1001);
    expect(many.body.error).toMatch(new RegExp(`${99 + more} problems`));

    // Far past the described ones (200,000 bad values): still 100 entries, every problem counted, answered quickly.
    const started = performance.now();
    const huge = await post('/v1/scrape', { url: `${site.url}/`, extractors: Array.from({ length: 200_000 }, (_, n) => n % 10) });
    expect(huge.status).toBe(400);
    expect(huge.body.validation_errors).toHaveLength(100);
    // 200,000 items that are not strings, and too many items.
    expect(Number(/^and (\d+) more problems$/.exec(huge.body.validation_errors[99].message)?.[1])).toBe(200_001 - 99);
    expect(performance.now() - started).toBeLessThan(10_000);

    // A bulk scrape of 1,000 non-strings; a crawl with 1,000 bad globs; a tool with 1,000 bad values.
    const bulk = await post('/v1/scrape/bulk', { urls: Array.from({ length: 1000 }, () => 42) });
    expect(bulk.status).toBe(400);
    expect(bulk.body.validation_errors).toHaveLength(100);
    expect(bulk.body.validation_errors[0]).toEqual({ field: 'urls', message: 'must NOT have more than 100 items' });
    const crawl = await post('/v1/crawl', { url: `${site.url}/`, include_paths: Array.from({ length: 1000 }, (_, n) => `no-slash-${n}`) });
    expect(crawl.status).toBe(400);
    expect(crawl.body.validation_errors).toHaveLength(1);
    expect(crawl.body.validation_errors[0].field).toBe('include_paths');
    const within = await post('/v1/crawl', { url: `${site.url}/`, include_paths: Array.from({ length: 50 }, (_, n) => `no-slash-${n}`), exclude_paths: [7] });
    expect(within.status).toBe(400);
    expect(fieldsOf(within.body)).toEqual([...Array.from({ length: 50 }, (_, n) => `include_paths[${n}]`), 'exclude_paths[0]']);
    expect(await usage()).toMatchObject({ credits_used: 0, credits_reserved: 0 });
  });

  it('uses one code for a refused scheme wherever it is met; a string that is not a URL is a malformed field', async () => {
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,x', 'http://user:pw@example.com/']) {
      const r = await post('/v1/scrape', { url });
      expect(r.status, url).toBe(400);
      expect(r.body.code, url).toBe('TARGET_NOT_ALLOWED');
      expect(fieldsOf(r.body)).toEqual(['url']);
    }
    expect((await post('/v1/scrape', { url: 'not a url' })).body.code).toBe('MISSING_PARAMETER');
    // Reached by a redirect: the same code.
    const redirected = await post('/v1/scrape', { url: `${site.url}/redirect/to?url=${encodeURIComponent('ftp://example.com/file')}` });
    expect(redirected.status).toBe(400);
    expect(redirected.body.code).toBe('TARGET_NOT_ALLOWED');
    expect(redirected.body.validation_errors[0].message).toMatch(/^redirect to ftp:\/\/example\.com\/file is not allowed: the ftp scheme/);

    // A bulk item: that item fails with it; when every URL is refused, the request does.
    const bulk = await post('/v1/scrape/bulk', { urls: [`${site.url}/html/simple`, 'ftp://example.com/', 'not a url'] });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    expect(bulk.body.results.map((x: { error?: { code: string } }) => x.error?.code)).toEqual([undefined, 'TARGET_NOT_ALLOWED', 'MISSING_PARAMETER']);
    const none = await post('/v1/scrape/bulk', { urls: ['ftp://a.example/', 'javascript:alert(1)', 'http://169.254.169.254/'] });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('TARGET_NOT_ALLOWED');
    expect(fieldsOf(none.body)).toEqual(['urls[0]', 'urls[1]', 'urls[2]']);
    const mixed = await post('/v1/scrape/bulk', { urls: ['ftp://a.example/', 'not a url'] });
    expect(mixed.body.code).toBe('MISSING_PARAMETER');
    expect(fieldsOf(mixed.body)).toEqual(['urls[0]', 'urls[1]']);

    // A crawl's start and the callbacks: the same.
    expect((await post('/v1/crawl', { url: 'ftp://example.com/' })).body.code).toBe('TARGET_NOT_ALLOWED');
    const callback = await post('/v1/crawl', { url: `${site.url}/`, callback_url: 'javascript:alert(1)' });
    expect(callback.body.code).toBe('TARGET_NOT_ALLOWED');
    expect(fieldsOf(callback.body)).toEqual(['callback_url']);
    const bulkCallback = await post('/v1/scrape/bulk', { urls: [`${site.url}/`], callback_url: 'file:///tmp/hook' });
    expect(bulkCallback.body.code).toBe('TARGET_NOT_ALLOWED');

    // A refused URL with another problem: every problem listed, under the code of a malformed request.
    const both = await post('/v1/crawl', { url: 'ftp://example.com/', max_pages: 0, callback_url: 'http://10.0.0.1/hook' });
    expect(both.body.code).toBe('MISSING_PARAMETER');
    expect(fieldsOf(both.body)).toEqual(['url', 'max_pages', 'callback_url']);
  });

  it('lists a bulk scrape\'s bad URLs with the request\'s other problems, and alone only when no URL is good', async () => {
    const r = await post('/v1/scrape/bulk', { urls: [`${site.url}/`, 'ftp://x/', 17], max_retries: 1, concurrent_requests: 0, screenshot: true });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('MISSING_PARAMETER');
    expect(fieldsOf(r.body)).toEqual(['urls[1]', 'urls[2]', 'screenshot', 'concurrent_requests', 'max_retries']);
  });

  it('does the same for search, the index admin API and the tools', async () => {
    const search = await post('/v1/search', { query: '', country: 'XX', language: 'klingon!', max_results: 0 });
    expect(search.status).toBe(400);
    expect(fieldsOf(search.body)).toEqual(['query', 'max_results', 'country', 'language']);
    const parsed = await post('/v1/search', { query: '!!! ???', max_results: 'ten' });
    expect(fieldsOf(parsed.body)).toEqual(['query', 'max_results']);

    const index = await post('/admin/v1/index/documents', { collection: 'no such/collection', documents: [], extra: 1 }, ADMIN);
    expect(index.status).toBe(400);
    expect(fieldsOf(index.body)).toEqual(['collection', 'documents', 'extra']);

    const entity = await post('/v1/tools/html-entity-encoder', { input: 42, action: 'encode', decode_mode: 'strict' }, undefined);
    expect(entity.status).toBe(400);
    expect(fieldsOf(entity.body)).toEqual(['input', 'decode_mode']);
    const lorem = await post('/v1/tools/lorem-ipsum-generator', { unit: 'paragraphs', count: 101, words_per_sentence: { min: 9, max: 3 }, seed: -1 }, undefined);
    expect(lorem.status).toBe(400);
    expect(fieldsOf(lorem.body)).toEqual(['count', 'seed', 'words_per_sentence']);
  });
});
