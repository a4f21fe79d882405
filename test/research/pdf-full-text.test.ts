/**
 * Research reads an open-access PDF's full text (issue 27): a real Scour on
 * loopback with an academic provider defined here whose work points at a
 * PDF this test serves on 127.0.0.1 (made with pdf-lib: known text, hard-
 * wrapped lines, a running header). The PDF is read through the page
 * pipeline (host.pages), so the source's text is the full text
 * (`text_read: 'full_text'`), not the abstract, and its evidence quotes the
 * PDF's words. A broken PDF falls back to the abstract. Nothing leaves
 * 127.0.0.1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderResult } from '../../core/search.js';
import { defineSearchProvider } from '../../plugins/sdk/search.js';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'pdf-full-text-admin-token-0123456';
const QUESTION = 'loopback cooling transistor efficiency';
const ABSTRACT = 'We measure loopback cooling of transistors. Loopback cooling raised transistor efficiency in our tests.';
const FULL_TEXT = [
  'Loopback cooling of silicon transistors was measured over three winters in two data centres of the loopback consortium.',
  'Our bench tests show that loopback cooling raises transistor efficiency by eleven percent at nominal load, and the gain grows with the clock rate of each chip.',
  'The coolant circuit, the thermal sensors and the statistical method are described in the sections that follow, with the raw measurements in the appendix.',
];

/** A two-page PDF of FULL_TEXT, hard-wrapped, with a running header. */
async function fullTextPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Loopback cooling of silicon transistors');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 0; n < 2; n++) {
    const page = doc.addPage([595, 842]);
    page.drawText('Journal of Loopback Studies', { x: 60, y: 805, size: 9, font });
    let y = 760;
    for (const para of FULL_TEXT) {
      let line = '';
      for (const word of para.split(' ')) {
        if (font.widthOfTextAtSize(`${line} ${word}`, 11) > 470) {
          page.drawText(line, { x: 60, y, size: 11, font });
          y -= 15;
          line = word;
        } else line = line === '' ? word : `${line} ${word}`;
      }
      page.drawText(line, { x: 60, y, size: 11, font });
      y -= 30;
    }
  }
  return doc.save();
}

describe('research reads an open-access PDF', () => {
  let s: Running;
  let server: http.Server;
  let url: string;
  let key: string;
  const hits = new Map<string, number>();

  beforeAll(async () => {
    const pdf = await fullTextPdf();
    server = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (path === '/paper.pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from(pdf));
      else if (path === '/broken.pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7\n1 0 obj << /Type');
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>Sign in to read this article.</p></body></html>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const work = (w: string, fullTextUrl: string): ProviderResult => ({
      url: `${url}/landing/${w}`, title: `Loopback cooling and transistor efficiency (${w})`, snippet: 'Loopback cooling and transistor efficiency.',
      publishedAt: Date.UTC(2023, 0, 1), doi: `10.5555/pdf.${w}`, authors: ['Ada Lovelace'], fullTextUrl, abstract: ABSTRACT,
    });
    const scholar = defineSearchProvider({
      name: 'search-provider-scholar', id: 'scholar', kinds: ['academic'], description: 'test provider',
      async search() {
        return { results: [work('a', `${url}/paper.pdf`), work('b', `${url}/broken.pdf`)], total: undefined, applied: new Set() };
      },
    });
    s = await startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['scholar'], searchProviderTimeoutMs: 2000 }, { plugins: [scholar] });
    const acct = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    expect(acct.status, acct.text).toBe(201);
    key = acct.body.api_key;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  it('reads the PDF as the full text (text_read full_text), and falls back to the abstract for a broken one', async () => {
    const r = await call(`${s.url}/v1/research`, 'POST', {
      auth: `Bearer ${key}`, body: { research_query: QUESTION, sources: ['academic'], analysis_depth: 'quick', max_sources: 5, include_methodology: true },
    });
    expect(r.status, r.text).toBe(200);
    const src = (path: string) => r.body.sources_analyzed.find((x: { url: string }) => x.url === `${url}${path}`);
    const a = src('/landing/a');
    expect(a).toMatchObject({ type: 'academic', text_read: 'full_text', full_text_url: `${url}/paper.pdf` });
    // The PDF's text was read, far longer than the abstract.
    expect(a.text_length).toBeGreaterThan(FULL_TEXT.join(' ').length);
    const b = src('/landing/b');
    expect(b).toMatchObject({ type: 'academic', text_read: 'abstract', text_length: ABSTRACT.length });
    expect(hits.get('/paper.pdf')).toBeGreaterThan(0);
    expect(hits.get('/broken.pdf')).toBeGreaterThan(0);
  });
});
