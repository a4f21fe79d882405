/**
 * Which kind of document a response is (core/documents.ts): the content
 * type decides, then the first bytes when the type says nothing; XML and
 * JSON are feeds only when their root says so. And the price rule of a
 * PDF's pages (core/prices.ts).
 */
import { describe, expect, it } from 'vitest';
import { documentKind } from '../../core/documents.js';
import { documentPagesCharge, documentPagesHold } from '../../core/prices.js';
import { PRICES } from '../../config/prices.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('documentKind', () => {
  it('takes the content type first', () => {
    expect(documentKind('application/pdf', bytes('not a pdf at all'), '')).toBe('pdf');
    expect(documentKind(DOCX, bytes('x'), '')).toBe('docx');
    expect(documentKind('application/rss+xml', undefined, '<rss/>')).toBe('rss');
    expect(documentKind('application/atom+xml', undefined, '')).toBe('atom');
    expect(documentKind('application/feed+json', undefined, '{}')).toBe('json_feed');
    // A declared HTML page is HTML, whatever its bytes.
    expect(documentKind('text/html', bytes('%PDF-1.7'), '%PDF-1.7')).toBeUndefined();
    expect(documentKind('image/png', bytes('%PDF-1.7'), '')).toBeUndefined();
  });

  it('reads the first bytes when the type says nothing', () => {
    for (const media of ['', 'application/octet-stream', 'binary/octet-stream', 'application/x-download', 'application/force-download']) {
      expect(documentKind(media, bytes('%PDF-1.4\n...'), '')).toBe('pdf');
      expect(documentKind(media, bytes(`${' '.repeat(500)}%PDF-1.4`), '')).toBe('pdf');
      expect(documentKind(media, bytes('PK\u0003\u0004....word/document.xml'), '')).toBe('docx');
      expect(documentKind(media, bytes('PK\u0003\u0004....xl/workbook.xml'), '')).toBeUndefined();
      expect(documentKind(media, bytes('PK\u0003\u0004mimetypeapplication/vnd.oasis.opendocument.text'), '')).toBeUndefined();
      expect(documentKind(media, bytes(''), '')).toBeUndefined();
    }
    // No type and HTML bytes: a page (not sniffed as a feed).
    expect(documentKind('', bytes('<html><body>hi</body></html>'), '<html><body>hi</body></html>')).toBeUndefined();
    expect(documentKind('', bytes('<rss version="2.0"></rss>'), '<rss version="2.0"></rss>')).toBeUndefined();
    // Without the bytes (a fetcher that keeps only text): nothing to sniff.
    expect(documentKind('application/octet-stream', undefined, '%PDF-1.4')).toBeUndefined();
  });

  it('takes XML and JSON as feeds only by their root', () => {
    const decl = '<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE x>\n';
    expect(documentKind('application/xml', undefined, `${decl}<rss version="2.0">`)).toBe('rss');
    expect(documentKind('text/xml', undefined, '\uFEFF<rdf:RDF xmlns:rdf="x">')).toBe('rss');
    expect(documentKind('application/xml', undefined, '<feed xmlns="http://www.w3.org/2005/Atom">')).toBe('atom');
    expect(documentKind('application/xml', undefined, '<feed>')).toBeUndefined();
    expect(documentKind('application/xml', undefined, '<sitemapindex>')).toBeUndefined();
    expect(documentKind('application/json', undefined, '{"version": "https://jsonfeed.org/version/1.1", "items": []}')).toBe('json_feed');
    expect(documentKind('application/json', undefined, '{"items": []}')).toBeUndefined();
    expect(documentKind('text/plain', undefined, 'rss is a format')).toBeUndefined();
  });
});

describe('the price of a PDF\'s pages', () => {
  it('is 1 credit per 10 pages (or part) beyond the first 10', () => {
    expect([0, 1, 10, 11, 20, 21, 50, 100, 500].map((n) => documentPagesCharge(PRICES, n))).toEqual([0, 0, 0, 1, 1, 2, 4, 9, 49]);
  });
  it('is held for max_pages when the request sets it, and not without it', () => {
    expect(documentPagesHold(PRICES, {})).toBe(0);
    expect(documentPagesHold(PRICES, { max_pages: 10 })).toBe(0);
    expect(documentPagesHold(PRICES, { max_pages: 12 })).toBe(1);
    expect(documentPagesHold(PRICES, { max_pages: 500 })).toBe(49);
  });
});
