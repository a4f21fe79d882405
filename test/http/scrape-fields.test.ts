/**
 * extract_fields over the real server (single scrape and bulk) against
 * loopback pages: records and lists of records by CSS and XPath, numbers
 * read in the page's locale (its lang, or its Content-Language header),
 * +1 credit (not charged on a page that is not HTML), hostile specs (400
 * with every problem at its field path, nothing charged), and a hostile
 * page (deep nesting) that gives a value or an extractor error, never a 500.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { startScourIn, type Running } from '../support/server.js';

const ADMIN = 'scrape-fields-admin-token-012345';

const PRODUCT = `<!DOCTYPE html><html lang="de"><head><title>Kaffeemaschine</title></head><body>
<div class="product"><h1 class="title">Kaffeemaschine X200</h1><span class="price">1.299,00 €</span>
<a class="brand" href="/marken/acme">Acme</a><ul class="tags"><li>Espresso</li><li>Edelstahl</li></ul></div></body></html>`;
const LISTING = `<!DOCTYPE html><html><head><title>Liste</title></head><body><table id="t">
<tr><th>Name</th><th>Preis</th></tr><tr><td><a href="/p/1">Tee</a></td><td>4.500</td></tr><tr><td><a href="/p/2">Kaffee</a></td><td>12,50</td></tr></table></body></html>`;
const DEEP = `<!DOCTYPE html><html><body>${'<div>'.repeat(20_000)}<b>deep</b>${'</div>'.repeat(20_000)}<p class="x">12</p></body></html>`;

function startPages(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const send = (type: string, body: string, extra: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': type, ...extra });
      res.end(body);
    };
    if (req.url === '/product') return send('text/html; charset=utf-8', PRODUCT);
    if (req.url === '/listing') return send('text/html; charset=utf-8', LISTING, { 'content-language': 'de-DE' });
    if (req.url === '/deep') return send('text/html; charset=utf-8', DEEP);
    if (req.url === '/text') return send('text/plain; charset=utf-8', 'just text 1.299,00');
    res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  })));
}

const PRODUCT_SPEC = { fields: [
  { name: 'title', selector: 'h1.title' },
  { name: 'price', selector: '.price', type: 'number' },
  { name: 'brand_url', selector: '//a[@class="brand"]', type: 'attribute', attribute: 'href' },
  { name: 'tags', selector: '.tags li', type: 'list' },
  { name: 'missing', selector: '.nothing-here' },
] };

describe('POST /v1/scrape with extract_fields', () => {
  let pages: Awaited<ReturnType<typeof startPages>>;
  let s: Running;
  const mk = async (credits = 100) => {
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'starter', credits } });
    return r.body.api_key as string;
  };
  const scrape = (key: string, body: unknown) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });
  const bulk = (key: string, body: unknown) => call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${key}`, body });
  const remaining = async (key: string) => (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_remaining as number;

  beforeAll(async () => {
    pages = await startPages();
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    await pages?.close();
  });

  it('answers one record in extracted, numbers in the page language, at 3 + 1 credits', async () => {
    const key = await mk();
    const r = await scrape(key, { url: `${pages.url}/product`, extract_fields: PRODUCT_SPEC });
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted).toEqual({
      title: 'Kaffeemaschine X200', price: 1299, brand_url: `${pages.url}/marken/acme`, tags: ['Espresso', 'Edelstahl'], missing: null,
    });
    expect(r.body.credits_used).toBe(4);
    expect(await remaining(key)).toBe(96);
    const plain = await scrape(key, { url: `${pages.url}/product` });
    expect(plain.body.credits_used).toBe(3);
    expect(plain.body).not.toHaveProperty('extracted');
  });

  it('answers a list of records with base_selector (XPath), the locale from the Content-Language header', async () => {
    const key = await mk();
    const r = await scrape(key, { url: `${pages.url}/listing`, extract_fields: { base_selector: '//table[@id="t"]//tr[td]', fields: [
      { name: 'name', selector: './td[1]/a' },
      { name: 'url', selector: 'td a', type: 'attribute', attribute: 'href' },
      { name: 'price', selector: './td[2]', type: 'number' },
    ] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted).toEqual([
      { name: 'Tee', url: `${pages.url}/p/1`, price: 4500 },
      { name: 'Kaffee', url: `${pages.url}/p/2`, price: 12.5 },
    ]);
  });

  it('a page that is not HTML: extracted is null and the field is not charged', async () => {
    const key = await mk();
    const r = await scrape(key, { url: `${pages.url}/text`, extract_fields: PRODUCT_SPEC });
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted).toBeNull();
    expect(r.body.credits_used).toBe(3);
  });

  it('a hostile page (20,000 nested elements) gives values or an extractor error, never a 500', async () => {
    const key = await mk();
    const r = await scrape(key, { url: `${pages.url}/deep`, extract_fields: { fields: [
      { name: 'css', selector: 'p.x', type: 'number' }, { name: 'xp', selector: '//b' }, { name: 'all', selector: 'string(/html)' },
    ] } });
    expect(r.status, r.text).toBe(200);
    if (r.body.extractor_errors?.fields !== undefined) {
      expect(r.body.extracted).toBeNull();
      expect(r.body.credits_used).toBe(3);
    } else {
      expect(r.body.extracted).toMatchObject({ css: 12, xp: 'deep' });
      expect(r.body.credits_used).toBe(4);
    }
  });

  it('400 with every problem of a spec at its field path; nothing charged', async () => {
    const key = await mk();
    const r = await scrape(key, { url: `${pages.url}/product`, extract_fields: { base_selector: 'div[', fields: [
      { name: 'a', selector: '//p[' }, { name: 'a', selector: 'p' }, { name: 'b', selector: 'a', type: 'attribute' },
      { name: 'c', selector: 'x', fields: [{ name: 'd', selector: '$$' }] },
    ] } });
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    const fields = r.body.validation_errors.map((v: { field: string }) => v.field);
    expect(fields).toEqual(expect.arrayContaining([
      'extract_fields.base_selector', 'extract_fields.fields[0].selector', 'extract_fields.fields[1].name',
      'extract_fields.fields[2].attribute', 'extract_fields.fields[3].fields[0].selector',
    ]));
    expect(r.body.validation_errors.find((v: { field: string }) => v.field === 'extract_fields.fields[0].selector').message).toMatch(/XPath/);
    expect(await remaining(key)).toBe(100);
  });

  it.each([
    ['a string', 'h1', 'extract_fields'],
    ['null', null, 'extract_fields'],
    ['no fields', { base_selector: 'li' }, 'extract_fields.fields'],
    ['fields not an array', { fields: { name: 'a' } }, 'extract_fields.fields'],
    ['a field that is a string', { fields: ['h1'] }, 'extract_fields.fields[0]'],
    ['an unknown key', { fields: [{ name: 'a', selector: 'p' }], selectors: 'x' }, 'extract_fields.selectors'],
    ['an unknown XPath function', { fields: [{ name: 'a', selector: '//p[system("x")]' }] }, 'extract_fields.fields[0].selector'],
    ['a huge selector', { fields: [{ name: 'a', selector: 'p '.repeat(5000) }] }, 'extract_fields.fields[0].selector'],
    ['too many fields', { fields: Array.from({ length: 51 }, (_, n) => ({ name: `f${n}`, selector: 'p' })) }, 'extract_fields.fields'],
    ['nesting too deep', { fields: [{ name: 'a', selector: 'd', fields: [{ name: 'b', selector: 'd', fields: [{ name: 'c', selector: 'd', fields: [{ name: 'e', selector: 'p' }] }] }] }] }, 'extract_fields.fields[0].fields[0].fields[0].fields'],
    ['a bad locale', { fields: [{ name: 'a', selector: 'p', type: 'number', locale: '12345678901234567890123456789012345678' }] }, 'extract_fields.fields[0].locale'],
    ['a bad type', { fields: [{ name: 'a', selector: 'p', type: 'date' }] }, 'extract_fields.fields[0].type'],
  ])('400 on %s', async (_what, spec, field) => {
    const key = await mk();
    const r = await scrape(key, { url: `${pages.url}/product`, extract_fields: spec });
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    expect(r.body.validation_errors.map((v: { field: string }) => v.field)).toContain(field);
    expect(await remaining(key)).toBe(100);
  });

  it('400 when combined with custom extractors (both answer in extracted)', async () => {
    const key = await mk();
    const r = await scrape(key, { url: `${pages.url}/product`, extract_fields: PRODUCT_SPEC, extractors: ['x'] });
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    expect(r.body.validation_errors.map((v: { field: string }) => v.field)).toContain('extract_fields');
  });

  it('bulk: every item answers its own extracted, each charged 3 + 1', async () => {
    const key = await mk();
    const r = await bulk(key, { urls: [`${pages.url}/product`, `${pages.url}/listing`], extract_fields: { fields: [
      { name: 'title', selector: 'title' }, { name: 'first_price', selector: '.price, td:nth-child(2)', type: 'number' },
    ] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.results.map((x: { result: { extracted: unknown } }) => x.result.extracted)).toEqual([
      { title: 'Kaffeemaschine', first_price: 1299 },
      { title: 'Liste', first_price: 4500 },
    ]);
    expect(r.body.credits_used).toBe(8);
    expect(await remaining(key)).toBe(92);
  });

  it('bulk: a hostile spec is a 400 naming its field paths; nothing charged', async () => {
    const key = await mk();
    const r = await bulk(key, { urls: [`${pages.url}/product`], extract_fields: { fields: [{ name: 'a', selector: 'p::' }, { name: 'b', selector: '(//p' }] } });
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    expect(r.body.validation_errors.map((v: { field: string }) => v.field)).toEqual(expect.arrayContaining(['extract_fields.fields[0].selector', 'extract_fields.fields[1].selector']));
    expect(await remaining(key)).toBe(100);
  });
});
