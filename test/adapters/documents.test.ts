/**
 * The document reader (adapters/documents) on hostile input: PDFs with
 * bytes flipped, cut short or made of noise are read or refused with
 * DOCUMENT_UNREADABLE / DOCUMENT_ENCRYPTED, never another error, and within
 * the time limit; max_pages and the time limit bound the pages read; feeds
 * and DOCX that are broken are DOCUMENT_UNREADABLE.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDocumentReader } from '../../adapters/documents/index.js';
import { pdfDate } from '../../adapters/documents/pdf.js';
import { isApiFailure } from '../../core/errors.js';
import { readdirSync, existsSync } from 'node:fs';
import { documentKind } from '../../core/documents.js';
import { makeLongPdf, wordRecall } from '../../scripts/gen-document-fixtures.mjs';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'documents');
const reader = createDocumentReader();
const outcome = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'read';
  } catch (e) {
    return isApiFailure(e) ? e.code : `other: ${String(e)}`;
  }
};

/** A seeded generator, so a failure can be replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the generated test documents (test/fixtures/documents)', () => {
  const names = readdirSync(DIR).filter((f) => !f.endsWith('.txt') && f !== 'feed-items.json').sort();

  it('are at least 20, of every kind the issue names', () => {
    expect(names.length).toBeGreaterThanOrEqual(20);
    for (const want of ['one-page.pdf', 'many-pages.pdf', 'two-columns.pdf', 'table-lists.pdf', 'scanned.pdf', 'encrypted.pdf', 'broken.pdf', 'handbook.docx', 'news.rss.xml', 'news.atom.xml', 'news.feed.json']) expect(names).toContain(want);
  });

  it.each(names)('%s reads back with word recall >= 0.98 in its main text, without its running headers (or is refused with its own code)', async (name) => {
    const bytes = new Uint8Array(readFileSync(join(DIR, name)));
    const base = name.replace(/\.[^.]+$/, '');
    const want = readFileSync(join(DIR, `${base}.expected.txt`), 'utf8');
    const running = existsSync(join(DIR, `${base}.running.txt`)) ? readFileSync(join(DIR, `${base}.running.txt`), 'utf8').split('\n').filter(Boolean) : [];
    const kind = documentKind('application/octet-stream', bytes, new TextDecoder().decode(bytes.subarray(0, 4096)));
    expect(kind, name).toBeDefined();
    let main: string;
    try {
      const read = await reader.read(kind!, bytes, { maxPages: 50, timeoutMs: 20_000 });
      // A DOCX is read as HTML, whose main content the page's extractors find (the HTTP tests check that path): its text here.
      main = read.main !== '' ? read.main : read.text !== '' ? read.text : (read.html ?? '').replace(/<[^>]*>/g, ' ');
    } catch (e) {
      // Only the encrypted and broken ones may be refused, with the reader's own codes.
      expect(isApiFailure(e) ? e.code : String(e)).toMatch(/^DOCUMENT_(ENCRYPTED|UNREADABLE)$/);
      expect(name).toMatch(/^(encrypted|broken)\./);
      return;
    }
    expect(wordRecall(want, main), name).toBeGreaterThanOrEqual(0.98);
    for (const line of running) expect(main, `${name}: running line ${line}`).not.toContain(line);
  }, 60_000);
});

describe('the document reader on hostile input', () => {
  it('reads or refuses damaged PDFs, with its own codes only, in bounded time', async () => {
    const good = readFileSync(join(DIR, 'many-pages.pdf'));
    const r = rng(27);
    const seen = new Set<string>();
    for (let n = 0; n < 60; n++) {
      const b = new Uint8Array(good);
      const kind = n % 3;
      let input: Uint8Array;
      if (kind === 0) {
        for (let k = 0; k < 20; k++) b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
        input = b;
      } else if (kind === 1) input = b.subarray(0, Math.floor(r() * b.length));
      else input = new Uint8Array([...new TextEncoder().encode('%PDF-1.7\n'), ...Array.from({ length: 2000 }, () => Math.floor(r() * 256))]);
      const t0 = Date.now();
      const o = await outcome(reader.read('pdf', input, { maxPages: 50, timeoutMs: 5000 }));
      expect(Date.now() - t0).toBeLessThan(6000);
      expect(['read', 'DOCUMENT_UNREADABLE', 'DOCUMENT_ENCRYPTED'], `case ${n}: ${o}`).toContain(o);
      seen.add(o);
    }
    expect(seen.has('DOCUMENT_UNREADABLE')).toBe(true);
  }, 120_000);

  it('bounds the pages read by max_pages and by the time limit', async () => {
    const long = await makeLongPdf(40);
    const five = await reader.read('pdf', long.bytes, { maxPages: 5, timeoutMs: 10_000 });
    expect(five.info).toMatchObject({ pages: 40, pages_read: 5 });
    expect(five.info.warnings).toEqual([expect.stringMatching(/first 5 of 40 pages/)]);
    // A time limit already past once the document is open: fewer pages than asked, and it says why.
    const hurried = await outcome(reader.read('pdf', long.bytes, { maxPages: 40, timeoutMs: 1 }));
    expect(['read', 'DOCUMENT_UNREADABLE']).toContain(hurried);
    if (hurried === 'read') {
      const r = await reader.read('pdf', long.bytes, { maxPages: 40, timeoutMs: 1 });
      expect(r.info.pages_read).toBeLessThan(40);
      expect(r.info.warnings.join(' ')).toMatch(/time limit/);
    }
  }, 60_000);

  it('refuses broken DOCX and feeds with DOCUMENT_UNREADABLE', async () => {
    expect(await outcome(reader.read('docx', new TextEncoder().encode('PK\u0003\u0004 not really'), { maxPages: 50, timeoutMs: 5000 }))).toBe('DOCUMENT_UNREADABLE');
    expect(await outcome(reader.read('json_feed', new TextEncoder().encode('{"version": "https://jsonfeed.org/version/1.1", '), { maxPages: 50, timeoutMs: 5000 }))).toBe('DOCUMENT_UNREADABLE');
    expect(await outcome(reader.read('rss', new TextEncoder().encode('<html>not a feed</html>'), { maxPages: 50, timeoutMs: 5000 }))).toBe('DOCUMENT_UNREADABLE');
    // A feed of many items keeps the first 1000.
    const many = `<rss><channel><title>t</title>${'<item><title>x</title></item>'.repeat(1500)}</channel></rss>`;
    const r = await reader.read('rss', new TextEncoder().encode(many), { maxPages: 50, timeoutMs: 5000 });
    expect(r.feed?.items).toHaveLength(1000);
  });

  it('reads PDF dates', () => {
    expect(pdfDate("D:20240305102030+01'00'")).toBe('2024-03-05T09:20:30.000Z');
    expect(pdfDate('D:2024')).toBe('2024-01-01T00:00:00.000Z');
    expect(pdfDate('yesterday')).toBeNull();
    expect(pdfDate(42)).toBeNull();
  });
});
