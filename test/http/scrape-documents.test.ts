/**
 * Documents read like pages (issue 27), through the real server against a
 * loopback site serving the generated test documents of
 * test/fixtures/documents/ (scripts/gen-document-fixtures.mjs): a PDF's
 * text in reading order with its words all there (recall >= 0.98), running
 * headers and page numbers out of main_content, headings, lists and tables
 * in markdown, and a `document` object; the same PDF served as
 * application/octet-stream; a scanned PDF is a warning, not an error; an
 * encrypted or broken PDF is a 422 of its own, uncharged; max_pages bounds
 * the pages read and refuses hostile values; the price is the page's plus
 * 1 credit per 10 pages read beyond the first 10 (as held by max_pages).
 */
import { readFileSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wordRecall } from '../../scripts/gen-document-fixtures.mjs';
import { call, type Reply } from '../support/http.js';
import { startScourIn, type Running } from '../support/server.js';

const ADMIN = 'scrape-documents-admin-token-0123';
const DIR = join(import.meta.dirname, '..', 'fixtures', 'documents');
const file = (name: string) => readFileSync(join(DIR, name));
const expected = (name: string) => readFileSync(join(DIR, `${name.replace(/\.[^.]+$/, '')}.expected.txt`), 'utf8');

/** Serves /<file>?type=<content type> (default by extension) from the fixtures; anything else 404. */
async function startDocumentSite(): Promise<{ url: string; close(): Promise<void> }> {
  const types: Record<string, string> = {
    pdf: 'application/pdf', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', xml: 'application/xml', json: 'application/json',
  };
  const server: Server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const name = u.pathname.slice(1);
    let body: Buffer;
    try {
      if (!/^[a-z0-9.-]+$/.test(name)) throw new Error('bad name');
      body = file(name);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const type = u.searchParams.get('type') ?? types[name.split('.').pop()!] ?? 'application/octet-stream';
    res.writeHead(200, type === 'none' ? { 'content-length': body.length } : { 'content-type': type, 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('documents read like pages: PDF', () => {
  let site: Awaited<ReturnType<typeof startDocumentSite>>;
  let s: Running;

  beforeAll(async () => {
    site = await startDocumentSite();
    s = await startScourIn('embedded', 'node', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  const admin = (method: string, path: string, body?: unknown) => call(`${s.url}/admin/v1${path}`, method, { auth: `Bearer ${ADMIN}`, body });
  const account = async (credits = 1000): Promise<{ id: string; key: string }> => {
    const r = await admin('POST', '/accounts', { plan: 'unicorn', credits });
    expect(r.status, r.text).toBe(201);
    return { id: r.body.account_id, key: r.body.api_key };
  };
  const usage = async (key: string) => (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body as { credits_remaining: number; credits_reserved: number };
  const ledger = async (id: string): Promise<unknown[]> => (await admin('GET', `/accounts/${id}/ledger`)).body.ledger;
  const scrape = (key: string, body: Record<string, unknown>) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });

  /** One scrape on a fresh account: 200 and exactly `credits` charged. */
  async function charged(body: Record<string, unknown>, credits: number): Promise<Reply> {
    const a = await account();
    const r = await scrape(a.key, body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.credits_used).toBe(credits);
    expect(await usage(a.key)).toMatchObject({ credits_remaining: 1000 - credits, credits_reserved: 0 });
    return r;
  }

  /** One scrape on a fresh account that fails with `status`/`code` and costs nothing. */
  async function refused(body: Record<string, unknown>, status: number, code: string): Promise<Reply> {
    const a = await account();
    const r = await scrape(a.key, body);
    expect(r.status, r.text).toBe(status);
    expect(r.body.code).toBe(code);
    expect(await usage(a.key)).toMatchObject({ credits_remaining: 1000, credits_reserved: 0 });
    expect(await ledger(a.id)).toEqual([]);
    return r;
  }

  it('reads a one-page PDF: its text, main content and Markdown, and what it says of itself', async () => {
    const r = await charged({ url: `${site.url}/one-page.pdf`, main_content: true, markdown: true, extract_links: true }, 3);
    const want = expected('one-page.pdf');
    expect(wordRecall(want, r.body.text_content)).toBeGreaterThanOrEqual(0.98);
    expect(wordRecall(want, r.body.main_content)).toBeGreaterThanOrEqual(0.98);
    expect(r.body.markdown).toMatch(/^# A one page note on rivers$/m);
    // A hyphen at a line end is undone; line breaks inside a paragraph are spaces.
    expect(r.body.main_content).not.toMatch(/[a-z]-\s[a-z]/);
    expect(r.body.main_content.split('\n\n')).toHaveLength(4);
    expect(r.body.content).toBe('');
    expect(r.body.links).toEqual([]);
    expect(r.body.document).toEqual({
      type: 'pdf', pages: 1, pages_read: 1, title: 'A one page note', author: 'Ada Example', created: '2024-03-05T10:20:30.000Z', language: 'en-GB', warnings: [],
    });
  });

  it.each([['application/octet-stream'], ['none'], ['application/x-download']])('reads a PDF served as %s by its first bytes', async (type) => {
    const r = await charged({ url: `${site.url}/one-page.pdf?type=${encodeURIComponent(type)}`, main_content: true }, 3);
    expect(r.body.document).toMatchObject({ type: 'pdf', pages: 1 });
    expect(wordRecall(expected('one-page.pdf'), r.body.main_content)).toBeGreaterThanOrEqual(0.98);
  });

  it('leaves running headers, footers and page numbers out of main_content and markdown, not out of text_content', async () => {
    const r = await charged({ url: `${site.url}/many-pages.pdf`, main_content: true, markdown: true, max_pages: 12 }, 3 + 1);
    const want = expected('many-pages.pdf');
    expect(wordRecall(want, r.body.main_content)).toBeGreaterThanOrEqual(0.98);
    for (const line of readFileSync(join(DIR, 'many-pages.running.txt'), 'utf8').split('\n').filter(Boolean)) {
      expect(r.body.main_content).not.toContain(line);
      expect(r.body.markdown).not.toContain(line);
      expect(r.body.text_content).toContain(line);
    }
    expect(r.body.document).toMatchObject({ type: 'pdf', pages: 12, pages_read: 12, warnings: [] });
    expect(r.body.markdown).toMatch(/^# Chapter 2 on the /m);
  });

  it('reads two columns column by column, and keeps a table as rows and lists as items', async () => {
    const two = await charged({ url: `${site.url}/two-columns.pdf`, main_content: true }, 3);
    // Reading order: each paragraph whole (column by column, not across the gutter).
    const paras = expected('two-columns.pdf').trim().split('\n\n');
    for (const p of paras) expect(two.body.main_content.replace(/\s+/g, ' ')).toContain(p.replace(/\s+/g, ' '));
    const t = await charged({ url: `${site.url}/table-lists.pdf`, markdown: true, main_content: true }, 3);
    expect(wordRecall(expected('table-lists.pdf'), t.body.main_content)).toBeGreaterThanOrEqual(0.98);
    expect(t.body.markdown).toContain('| Harbour | Ships | Tonnage | Year |\n| --- | --- | --- | --- |\n| Northport | 120 | 45000 | 2021 |');
    expect(t.body.markdown).toContain('- Deeper channels for the larger ships\n- A second crane at the eastern quay');
    expect(t.body.markdown).toMatch(/^1\. Survey the channel$/m);
    expect(t.body.markdown).toMatch(/^## What the harbours need$/m);
  });

  it('answers a scanned PDF (no text layer) with a warning, not an error', async () => {
    const r = await charged({ url: `${site.url}/scanned.pdf`, main_content: true, markdown: true }, 3);
    expect(r.body).toMatchObject({ text_content: '', main_content: '', markdown: '' });
    expect(r.body.document.warnings).toEqual([expect.stringMatching(/no text layer/)]);
  });

  it('refuses an encrypted PDF with 422 DOCUMENT_ENCRYPTED and a broken one with 422 DOCUMENT_UNREADABLE, uncharged', async () => {
    const enc = await refused({ url: `${site.url}/encrypted.pdf` }, 422, 'DOCUMENT_ENCRYPTED');
    expect(enc.body).toMatchObject({ document_type: 'pdf' });
    const bad = await refused({ url: `${site.url}/broken.pdf` }, 422, 'DOCUMENT_UNREADABLE');
    expect(bad.body).toMatchObject({ document_type: 'pdf', details: expect.any(String) });
    // Served as an octet stream, a broken PDF is still a PDF.
    await refused({ url: `${site.url}/broken.pdf?type=application/octet-stream` }, 422, 'DOCUMENT_UNREADABLE');
  });

  it('reads at most max_pages pages, says so, and charges the pages read beyond the first 10 as far as max_pages holds them', async () => {
    const five = await charged({ url: `${site.url}/many-pages.pdf`, main_content: true, max_pages: 5 }, 3);
    expect(five.body.document).toMatchObject({ pages: 12, pages_read: 5, warnings: [expect.stringMatching(/first 5 of 12 pages/)] });
    expect(five.body.main_content).not.toMatch(/Chapter 9 /);
    // Without max_pages nothing is held for pages, so nothing is charged for them (50 pages are read).
    const plain = await charged({ url: `${site.url}/many-pages.pdf` }, 3);
    expect(plain.body.document).toMatchObject({ pages_read: 12 });
    // A hold of max_pages 500 (+49) charges what was read: 12 pages, +1.
    await charged({ url: `${site.url}/many-pages.pdf`, max_pages: 500 }, 4);
    // A page that is not a PDF, asked with max_pages, is charged its own price: the rest of the hold is released.
    const page = await charged({ url: `${site.url}/nothing.pdf`, max_pages: 500 }, 3);
    expect(page.body).toMatchObject({ status_code: 404, text_content: 'not found' });
    expect(page.body.document).toBeUndefined();
  });

  it('reads documents in a bulk scrape: each URL as in a single scrape; an encrypted PDF fails its URL, uncharged; max_pages held per URL', async () => {
    const a = await account();
    const urls = [`${site.url}/many-pages.pdf`, `${site.url}/encrypted.pdf`, `${site.url}/news.rss.xml?type=application/rss%2Bxml`, `${site.url}/handbook.docx`];
    const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${a.key}`, body: { urls, main_content: true, max_pages: 20 } });
    expect(r.status, r.text).toBe(200);
    const res = r.body.results as { success: boolean; result?: any; error?: any }[];
    expect(res.map((x) => x.success)).toEqual([true, false, true, true]);
    expect(res[0]!.result.document).toMatchObject({ type: 'pdf', pages_read: 12 });
    expect(wordRecall(expected('many-pages.pdf'), res[0]!.result.main_content)).toBeGreaterThanOrEqual(0.98);
    expect(res[0]!.result.credits_used).toBe(3 + 1);
    expect(res[1]!.error).toMatchObject({ code: 'DOCUMENT_ENCRYPTED' });
    expect(res[2]!.result.feed.items).toHaveLength(3);
    expect(res[3]!.result.document).toMatchObject({ type: 'docx' });
    expect(r.body.credits_used).toBe(4 + 3 + 3);
    expect(await usage(a.key)).toMatchObject({ credits_remaining: 1000 - 10, credits_reserved: 0 });
  });

  it('refuses hostile max_pages values with 400 and a field-level validation error, before anything is fetched', async () => {
    const a = await account();
    for (const v of [0, 501, -1, 2.5, '10', null, true, [5], { n: 1 }, 1e308]) {
      const r = await scrape(a.key, { url: `${site.url}/one-page.pdf`, max_pages: v });
      expect(r.status, JSON.stringify(v)).toBe(400);
      expect(r.body.validation_errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'max_pages' })]));
    }
    expect(await usage(a.key)).toMatchObject({ credits_remaining: 1000, credits_reserved: 0 });
  });

  it('holds the pages max_pages may cost: an account short of them is refused 402 before the fetch', async () => {
    const a = await account(5);
    const r = await scrape(a.key, { url: `${site.url}/one-page.pdf`, max_pages: 100 });
    expect(r.status, r.text).toBe(402);
    expect(r.body).toMatchObject({ code: 'NO_CREDITS', credits_required: 3 + 9 });
  });
});

describe('documents read like pages: DOCX and feeds', () => {
  let site: Awaited<ReturnType<typeof startDocumentSite>>;
  let s: Running;
  let key: string;

  beforeAll(async () => {
    site = await startDocumentSite();
    s = await startScourIn('embedded', 'node', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 10_000 } });
    key = r.body.api_key;
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });
  const scrape = (body: Record<string, unknown>) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });

  it.each([['application/vnd.openxmlformats-officedocument.wordprocessingml.document'], ['application/octet-stream']])(
    'reads a DOCX served as %s: headings, lists, a table and a link, through the HTML extractors', async (type) => {
      const r = await scrape({ url: `${site.url}/handbook.docx?type=${encodeURIComponent(type)}`, main_content: true, markdown: true, extract_links: true });
      expect(r.status, r.text).toBe(200);
      expect(r.body.credits_used).toBe(3 + 1);
      const want = expected('handbook.docx');
      expect(wordRecall(want, r.body.text_content)).toBeGreaterThanOrEqual(0.98);
      expect(wordRecall(want, r.body.main_content)).toBeGreaterThanOrEqual(0.98);
      expect(r.body.markdown).toMatch(/^# The harbour handbook$/m);
      expect(r.body.markdown).toMatch(/^## Ships and cargo$/m);
      expect(r.body.markdown).toMatch(/^[-*] Grain from the northern farms$/m);
      expect(r.body.markdown).toMatch(/\| Quay \| Cranes \| Depth \|/);
      expect(r.body.links).toEqual([expect.objectContaining({ url: 'https://example.org/harbours' })]);
      expect(r.body.content).toBe('');
      expect(r.body.document).toMatchObject({ type: 'docx', pages: null, title: 'The harbour handbook', author: 'Ada Example', warnings: [] });
    });

  it('refuses a DOCX that is not one (a broken ZIP) with 422 DOCUMENT_UNREADABLE', async () => {
    const r = await scrape({ url: `${site.url}/broken.pdf?type=${encodeURIComponent('application/vnd.openxmlformats-officedocument.wordprocessingml.document')}` });
    expect(r.status, r.text).toBe(422);
    expect(r.body).toMatchObject({ code: 'DOCUMENT_UNREADABLE', document_type: 'docx' });
  });

  const items = JSON.parse(readFileSync(join(DIR, 'feed-items.json'), 'utf8')) as { title: string; link: string; date: string; summary: string }[];
  it.each([
    ['news.rss.xml', 'application/rss+xml', 'rss'], ['news.rss.xml', 'application/xml', 'rss'], ['news.rss.xml', 'text/xml', 'rss'],
    ['news.atom.xml', 'application/atom+xml', 'atom'], ['news.atom.xml', 'application/xml', 'atom'],
    ['news.feed.json', 'application/feed+json', 'json_feed'], ['news.feed.json', 'application/json', 'json_feed'],
  ])('reads %s served as %s as a %s feed: its items (title, link, date, summary)', async (name, type, kind) => {
    const r = await scrape({ url: `${site.url}/${name}?type=${encodeURIComponent(type)}`, main_content: true, markdown: true });
    expect(r.status, r.text).toBe(200);
    expect(r.body.credits_used).toBe(3);
    expect(r.body.feed).toEqual({ title: 'Harbour News', link: 'https://example.org/news', items: items.map((i) => ({ ...i, date: new Date(i.date).toISOString() })) });
    expect(r.body.document).toMatchObject({ type: kind, pages: null, title: 'Harbour News' });
    expect(wordRecall(expected(name), r.body.main_content)).toBeGreaterThanOrEqual(0.98);
    expect(r.body.markdown).toContain(`## [${items[0]!.title}](${items[0]!.link})`);
  });

  it('leaves XML and JSON that are not feeds as text, and a feed that is broken is 422', async () => {
    const plain = await scrape({ url: `${site.url}/feed-items.json` });
    expect(plain.status).toBe(200);
    expect(plain.body.feed).toBeUndefined();
    expect(plain.body.text_content).toContain('harbour');
    const bad = await scrape({ url: `${site.url}/news.rss.xml?type=application/feed%2Bjson` });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body).toMatchObject({ code: 'DOCUMENT_UNREADABLE', document_type: 'json_feed' });
  });
});
