/**
 * The research exporters, each output opened the way a reader would: HTML
 * parsed (htmlparser2), Markdown read for its escapes, JSON parsed back, CSV
 * parsed by a strict RFC 4180 reader, BibTeX parsed by citation-js, DOCX
 * unzipped and its document.xml read, PDF printed by the real Chromium
 * (/usr/bin/chromium) and its text extracted with pdftotext. Fails, never
 * skips, when Chromium or pdftotext is missing (scripts/test-services.sh
 * installs both). Hostile reports too: empty, 1,000 insights, 100k-character
 * strings, malformed optional fields.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { Element } from 'domhandler';
import { chromium, type Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_FORMATS, type ExportHost, type ResearchReport } from '../../core/research.js';
import { builtinExporters, exporterFor, ExportUnavailable, printPdf } from '../../plugins/exporters/index.js';
import { renderHtml } from '../../plugins/exporters/html.js';
import { escapeMarkdown, renderMarkdown } from '../../plugins/exporters/markdown.js';
import { CSV_COLUMNS, renderCsv } from '../../plugins/exporters/csv.js';
import { escapeBibtex, renderBibtex, splitAuthors } from '../../plugins/exporters/bibtex.js';
import { renderJson } from '../../plugins/exporters/json.js';
import { renderDocx } from '../../plugins/exporters/docx.js';

const CHROMIUM = '/usr/bin/chromium';
const run = promisify(execFile);
const require = createRequire(import.meta.url);

// ---------------------------------------------------------------------------
// A realistic report, with hostile text where text from sources goes.

const STATEMENT_1 = 'Europe added 4.5 GW of grid-scale battery storage in 2023, a record year.';
const STATEMENT_2 = 'Lithium-ion pack prices fell to "$139/kWh", the lowest on record.';
const HOSTILE_EVIDENCE = 'Analysts said "<script>alert(\'x\')</script>" | *not* a typo: capacity rose 40% & costs fell.';
const INJECTION_TITLE = '=HYPERLINK("http://evil.example/x","Click me")';
const TITLE_1 = 'Über Batteriespeicher in Europa — Jahresbericht 2024';
const TITLE_2 = '電池の研究: グリッド蓄電の成長 (Grid storage growth)';
const REF_1 = 'Müller, J., & Dubois, A. (2024, March 1). Über Batteriespeicher in Europa — Jahresbericht 2024. Energy Example. https://energy.example.org/reports/speicher-2024?lang=de&x=1';
const REF_2 = 'News Example. (2024, January 15). 電池の研究: グリッド蓄電の成長 (Grid storage growth). https://news.example.com/2024/01/storage';
const REF_3 = '=HYPERLINK("http://evil.example/x","Click me"). (2023). blog.example.net. https://blog.example.net/p/1';

const ev = (source_id: string, text: string, start: number) => ({ source_id, text, start, end: start + text.length });

const SAMPLE = {
  research_query: 'How fast is grid-scale battery storage growing in Europe?',
  analysis_depth: 'standard',
  analysis_type: 'market',
  executive_summary: 'Europe added 4.5 GW of grid-scale battery storage in 2023, a record year. Lithium-ion pack prices fell to "$139/kWh", the lowest on record.\n\nOne blog disputes the price figures.',
  summary_evidence: [ev('src_1', STATEMENT_1, 0), ev('src_2', STATEMENT_2, 310)],
  key_insights: [
    {
      id: 'ins_1',
      statement: STATEMENT_1,
      statement_evidence: ev('src_1', STATEMENT_1, 0),
      confidence: 0.8734,
      confidence_parts: { agreement: 0.9, relevance: 0.81, quality: 0.85, recency: 0.7 },
      supporting_evidence: [ev('src_1', HOSTILE_EVIDENCE, 120), ev('src_2', 'Installations in 2023 reached 4.5 GW across the EU.', 44)],
      topic: 'installed capacity',
      supporting_sources: ['src_1', 'src_2'],
      contradicting_sources: [],
      agreement: 1,
    },
    {
      id: 'ins_2',
      statement: STATEMENT_2,
      statement_evidence: ev('src_2', STATEMENT_2, 310),
      confidence: 0.6125,
      confidence_parts: { agreement: 0.5, relevance: 0.77, quality: 0.6, recency: 0.8 },
      supporting_evidence: [ev('src_2', STATEMENT_2, 310)],
      contradicting_evidence: [ev('src_3', 'Pack prices, if anything, went up in 2023.', 12)],
      topic: 'prices',
      supporting_sources: ['src_2'],
      contradicting_sources: ['src_3'],
      agreement: 0.5,
    },
  ],
  entity_analysis: {
    entities: [
      { name: 'Tesla', type: 'organization', mentions: 4, sources: ['src_1', 'src_2'], sentiment: 0.2, co_occurring: [{ name: 'Fluence', count: 2 }], statements: [ev('src_1', 'Tesla shipped 14.7 GWh of Megapacks.', 900)] },
      { name: 'Fluence', type: 'organization', mentions: 2, sources: ['src_1'], sentiment: 0, co_occurring: [{ name: 'Tesla', count: 2 }], statements: [] },
    ],
    other_entities: [{ name: 'Germany', type: 'place', mentions: 3 }],
  },
  sentiment: {
    method: 'AFINN-165 lexicon via wink-nlp, sentence mean',
    overall: { score: 0.21, label: 'positive' },
    by_source: [{ source_id: 'src_1', score: 0.3, label: 'positive' }, { source_id: 'src_2', score: 0.25, label: 'positive' }, { source_id: 'src_3', score: -0.4, label: 'negative' }],
  },
  trend_analysis: [{
    topic: 'installed capacity', direction: 'rising', confidence: 0.72, timeframe: { from: '2021', to: '2023' },
    evidence: [{ ...ev('src_1', 'Capacity doubled between 2021 and 2023.', 400), date: '2023-06-01' }],
    series: [{ date: '2021', value: 2.1 }, { date: '2023', value: 4.5 }],
  }],
  recommendations: [{ id: 'rec_1', recommendation: 'Plan for continued growth in storage capacity.', rationale: 'Two independent sources agree that 2023 was a record year.', based_on: ['ins_1'], generated_by: 'rules' }],
  methodology: {
    steps: ['plan', 'gather', 'read', 'analyse', 'report', 'export'],
    sub_queries: ['grid-scale battery storage Europe growth', 'battery storage capacity 2023 Europe'],
    counts: { found: 14, fetched: 5, analysed: 3, used: 3, dropped: 2 },
    timings_ms: { plan: 1.2, gather: 412.5, read: 30.1, analyse: 88.4, report: 3.3 },
    confidence_formula: '0.4 agreement + 0.3 relevance + 0.2 quality + 0.1 recency',
    deterministic: true,
  },
  visualization_data: {
    series: [{ name: 'sources_by_type', chart: 'bar', x_label: 'Source type', y_label: 'Sources', unit: 'sources', points: [{ x: 'industry_reports', y: 1 }, { x: 'news', y: 1 }, { x: 'web', y: 1 }] }],
    sources_total: 3,
  },
  sources_analyzed: [
    { id: 'src_1', url: 'https://energy.example.org/reports/speicher-2024?lang=de&x=1', title: TITLE_1, type: 'industry_reports', domain: 'energy.example.org', published_date: '2024-03-01T00:00:00.000Z', author: 'Jürgen Müller, Anaïs Dubois', container: 'Energy Example', relevance_score: 0.91, relevance: { search: 1, passages: 0.87 }, used: true, text_length: 5400 },
    { id: 'src_2', url: 'https://news.example.com/2024/01/storage', title: TITLE_2, type: 'news', domain: 'news.example.com', published_date: '2024-01-15T00:00:00.000Z', author: null, relevance_score: 0.8, used: true },
    { id: 'src_3', url: 'https://blog.example.net/p/1', title: INJECTION_TITLE, type: 'web', domain: 'blog.example.net', published_date: '2023-11-02T00:00:00.000Z', author: '@mallory', relevance_score: 0.41, used: true },
  ],
  citations: [
    { source_id: 'src_1', url: 'https://energy.example.org/reports/speicher-2024?lang=de&x=1', format: 'apa', text: REF_1 },
    { source_id: 'src_2', url: 'https://news.example.com/2024/01/storage', format: 'apa', text: REF_2 },
    { source_id: 'src_3', url: 'https://blog.example.net/p/1', format: 'apa', text: REF_3 },
  ],
  warnings: [{ code: 'SOURCE_UNREACHABLE', message: 'https://gone.example.org/ timed out' }],
  processing_time: 1.234,
  credits_used: 10,
  generated_at: '2025-05-04T10:11:12.000Z',
} as const;

const REPORT = SAMPLE as unknown as ResearchReport;

const EMPTY = { research_query: 'nothing', executive_summary: '', key_insights: [], sources_analyzed: [], citations: [] } as unknown as ResearchReport;

function manyInsights(n: number): ResearchReport {
  const key_insights = Array.from({ length: n }, (_, i) => ({
    ...SAMPLE.key_insights[0],
    id: `ins_${i + 1}`,
    statement: `Insight number ${i + 1}: storage grew in region ${i % 37}.`,
    supporting_evidence: [ev('src_1', `Region ${i % 37} added ${i} MW in 2023.`, i * 10), ev('src_2', HOSTILE_EVIDENCE, 5)],
  }));
  return { ...SAMPLE, key_insights } as unknown as ResearchReport;
}

const LONG = `${'Lorem ipsum dolor sit amet <b>&amp; | * _ '.repeat(2_500)}`.slice(0, 100_000);
const LONG_WORD = 'x'.repeat(100_000);
const HUGE_STRINGS = {
  ...SAMPLE,
  research_query: LONG,
  executive_summary: LONG,
  key_insights: [{ ...SAMPLE.key_insights[0], statement: LONG, topic: LONG_WORD, supporting_evidence: [ev('src_1', LONG_WORD, 0), ev('src_2', LONG, 0)] }],
  sources_analyzed: SAMPLE.sources_analyzed.map((s) => ({ ...s, title: LONG, author: LONG_WORD, url: `https://example.org/${LONG_WORD}` })),
  citations: SAMPLE.citations.map((c) => ({ ...c, text: LONG })),
  methodology: { notes: LONG, words: LONG_WORD },
} as unknown as ResearchReport;

/** Optional fields of the wrong shape, unknown fields, and controls/lone surrogates in text: shown or ignored, never a crash. */
const MALFORMED = {
  research_query: 'bad \u0000shapes \uD800 here',
  executive_summary: 'ok\u0007',
  key_insights: [{ id: 'x', statement: 42 }, null, 'nope', { statement: 'only a statement' }],
  sources_analyzed: [null, { id: 'src_1' }, { id: 'src_2', url: 'javascript:alert(1)', title: '<img src=x onerror=alert(1)>', used: true }],
  citations: [{ source_id: 'src_9', text: null }, 7],
  recommendations: 'oops',
  sentiment: 42,
  entity_analysis: [[1, [2, [3, [4]]]], { a: { b: { c: { d: { e: 1 } } } } }],
  trend_analysis: [null, 1, 'two'],
  methodology: null,
  visualization_data: { series: Array.from({ length: 500 }, (_, i) => ({ name: `s${i}`, points: [{ x: i, y: i }] })) },
  generated_at: 'not a date',
  processing_time: 'fast',
  extra_field: { anything: true },
} as unknown as ResearchReport;

// ---------------------------------------------------------------------------

let browser: Browser;
let work: string;
const timings: Record<string, number> = {};

const host = (): ExportHost => ({ signal: new AbortController().signal, htmlToPdf: (html, signal) => printPdf(browser, html, signal) });
const decode = (b: Uint8Array) => new TextDecoder('utf-8', { fatal: true }).decode(b);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'scour-exporters-'));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-breakpad'] });
});

afterAll(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  // eslint-disable-next-line no-console
  console.log('exporter render times for the sample report (ms):', timings);
});

async function pdfText(bytes: Uint8Array, name: string): Promise<string> {
  const file = join(work, `${name}.pdf`);
  writeFileSync(file, bytes);
  const { stdout } = await run('pdftotext', ['-enc', 'UTF-8', file, '-'], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

async function docxXml(bytes: Uint8Array, name: string): Promise<string> {
  const file = join(work, `${name}.docx`);
  writeFileSync(file, bytes);
  const { stdout } = await run('unzip', ['-p', file, 'word/document.xml'], { maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/** The text of every <w:t> run, decoded, one string per paragraph. */
function docxParagraphs(xml: string): string[] {
  const doc = parseDocument(xml, { xmlMode: true, decodeEntities: true });
  return DomUtils.getElementsByTagName('w:p', doc, true).map((p) => DomUtils.getElementsByTagName('w:t', p, true).map((t) => DomUtils.textContent(t)).join(''));
}

const squash = (s: string) => s.replace(/\s+/g, '');

/** A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes, nothing else. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"' && field === '') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') { field += '"'; i += 2; continue; }
          i++;
          break;
        }
        field += text[i++];
      }
      if (i < text.length && text[i] !== ',' && text.slice(i, i + 2) !== '\r\n') throw new Error(`text after a closing quote at ${i}`);
      continue;
    }
    const c = text[i]!;
    if (c === ',') { row.push(field); field = ''; i++; continue; }
    if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i += 2; continue; }
    if (c === '\r' || c === '\n' || c === '"') throw new Error(`bare ${JSON.stringify(c)} in an unquoted field at ${i}`);
    field += c;
    i++;
  }
  if (field !== '' || row.length > 0) throw new Error('the last record does not end with CRLF');
  return rows;
}

// Citation-js ships no type declarations.
function parseBibtex(text: string): Record<string, any>[] {
  if (!/^@/m.test(text)) return []; // citation-js refuses a file without entries
  const { Cite } = require('@citation-js/core');
  require('@citation-js/plugin-bibtex');
  return new Cite(text).data as Record<string, any>[];
}

// ---------------------------------------------------------------------------

describe('exporter plugins', () => {
  it('one built-in exporter per export format, named exporter-<format>', () => {
    expect(builtinExporters.map((e) => e.format).sort()).toEqual([...EXPORT_FORMATS].sort());
    for (const e of builtinExporters) {
      expect(e.kind).toBe('exporter');
      expect(e.name).toBe(`exporter-${e.format}`);
      expect(e.contentType).toMatch(/^[a-z]+\/[\w.+-]+/);
      expect(e.extension).toMatch(/^[a-z]+$/);
      expect(exporterFor(e.format as (typeof EXPORT_FORMATS)[number])).toBe(e);
    }
    expect(exporterFor('xlsx')).toBeUndefined();
    expect(exporterFor('pdf').contentType).toBe('application/pdf');
  });

  it('times every format on the sample report', async () => {
    for (const e of builtinExporters) {
      for (const run of ['cold', 'warm']) {
        const t = performance.now();
        const out = await e.render(REPORT, host());
        timings[`sample/${e.format}/${run}`] = Math.round((performance.now() - t) * 10) / 10;
        expect(out.byteLength).toBeGreaterThan(100);
      }
    }
  });

  it('an aborted signal stops a render', async () => {
    const c = new AbortController();
    c.abort(new Error('client went away'));
    for (const e of builtinExporters) {
      await expect(e.render(REPORT, { signal: c.signal, htmlToPdf: (html, s) => printPdf(browser, html, s) })).rejects.toThrow('client went away');
    }
  });
});

describe('HTML', () => {
  const html = renderHtml(REPORT);
  const doc = parseDocument(html);
  const all = DomUtils.getElementsByTagName(() => true, doc, true) as Element[];
  const text = DomUtils.textContent(doc);

  it('is one self-contained document: no script, no handler, nothing loaded from outside', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(all.filter((e) => ['script', 'iframe', 'object', 'embed', 'img', 'link', 'base', 'form'].includes(e.name))).toEqual([]);
    for (const e of all) for (const a of Object.keys(e.attribs)) expect(a.startsWith('on')).toBe(false);
    for (const a of all.filter((e) => e.name === 'a')) expect(a.attribs.href).toMatch(/^(#[a-z0-9-]+|https?:\/\/)/);
    const csp = all.find((e) => e.name === 'meta' && e.attribs['http-equiv'] === 'Content-Security-Policy');
    expect(csp?.attribs.content).toContain("default-src 'none'");
    expect(all.filter((e) => e.name === 'style')).toHaveLength(1);
    expect(html).not.toMatch(/url\(/);
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
  });

  it('is printable: A4 @page margins, a page break before each section but the first', () => {
    const css = DomUtils.textContent(all.find((e) => e.name === 'style')!);
    expect(css).toMatch(/@page \{ size: A4; margin: 18mm 16mm 20mm 16mm; \}/);
    expect(css).toContain('section { break-before: page;');
    const sections = all.filter((e) => e.name === 'section');
    expect(sections.map((s) => s.attribs.id)).toEqual(['summary', 'insights', 'entities', 'sentiment', 'trends', 'recommendations', 'methodology', 'charts', 'sources', 'references']);
    expect(sections[0]!.attribs.class).toBe('first');
    expect(sections.slice(1).every((s) => s.attribs.class === undefined)).toBe(true);
  });

  it('has the title, date, summary, insights with % confidence, evidence quotes with their [n], and the references in order', () => {
    expect(DomUtils.textContent(all.find((e) => e.name === 'title')!)).toBe(`Research report: ${SAMPLE.research_query}`);
    expect(DomUtils.textContent(all.find((e) => e.name === 'h1')!)).toBe(SAMPLE.research_query);
    expect(all.find((e) => e.name === 'time')?.attribs.datetime).toBe(SAMPLE.generated_at);
    expect(text).toContain('2025-05-04 10:11 UTC');
    expect(text).toContain('One blog disputes the price figures.');
    const h3 = all.filter((e) => e.name === 'h3').map((e) => DomUtils.textContent(e));
    expect(h3).toContain(`1. ${STATEMENT_1}`);
    expect(h3).toContain(`2. ${STATEMENT_2}`);
    expect(text).toContain('87% (agreement 90%, relevance 81%, quality 85%, recency 70%)');
    const quotes = all.filter((e) => e.name === 'blockquote');
    const hostile = quotes.find((q) => DomUtils.textContent(DomUtils.getElementsByTagName('p', q)[0]!) === HOSTILE_EVIDENCE);
    expect(hostile).toBeDefined();
    expect(DomUtils.textContent(DomUtils.getElementsByTagName('footer', hostile!)[0]!)).toBe(`[1] ${TITLE_1}`);
    const contra = quotes.find((q) => q.attribs.class === 'evidence contradicting');
    expect(DomUtils.textContent(contra!)).toContain('[3]');
    const refs = all.filter((e) => e.name === 'li' && e.attribs.id?.startsWith('ref-'));
    expect(refs.map((r) => DomUtils.textContent(r))).toEqual([`[1]${REF_1}`, `[2]${REF_2}`, `[3]${REF_3}`]);
  });

  it('has entities, sentiment, trends, recommendations, methodology, chart data and the sources table', () => {
    for (const s of ['Tesla', 'Fluence', 'Germany', 'AFINN-165 lexicon via wink-nlp, sentence mean', 'rising', 'Capacity doubled between 2021 and 2023.',
      'Plan for continued growth in storage capacity.', 'Two independent sources agree that 2023 was a record year.', 'insight 1 (ins_1)', 'rules',
      'grid-scale battery storage Europe growth', '0.4 agreement + 0.3 relevance + 0.2 quality + 0.1 recency', 'sources_by_type', 'SOURCE_UNREACHABLE',
      'Timeframefrom 2021, to 2023', `[1] ${TITLE_1} · 2023-06-01`, 'Countsfound 14, fetched 5, analysed 3, used 3, dropped 2']) {
      expect(text, s).toContain(s);
    }
    const table = all.filter((e) => e.name === 'table').find((t) => DomUtils.textContent(t).includes('Relevance'))!;
    const rows = DomUtils.getElementsByTagName('tr', table).map((tr) => DomUtils.getElementsByTagName('td', tr).map((td) => DomUtils.textContent(td)));
    expect(rows.slice(1)).toEqual([
      ['[1]', TITLE_1, 'industry_reports', 'energy.example.org', '2024-03-01', 'Jürgen Müller, Anaïs Dubois', '0.91', 'yes'],
      ['[2]', TITLE_2, 'news', 'news.example.com', '2024-01-15', '', '0.8', 'yes'],
      ['[3]', INJECTION_TITLE, 'web', 'blog.example.net', '2023-11-02', '@mallory', '0.41', 'yes'],
    ]);
    const link = DomUtils.getElementsByTagName('a', table).find((a) => DomUtils.textContent(a) === TITLE_1);
    expect(link?.attribs.href).toBe(SAMPLE.sources_analyzed[0].url);
    expect(link?.attribs.rel).toBe('noopener noreferrer');
  });

  it('makes no link of a javascript: URL and no element of a hostile title', () => {
    const d = parseDocument(renderHtml(MALFORMED));
    expect(DomUtils.getElementsByTagName('img', d)).toEqual([]);
    expect(DomUtils.getElementsByTagName('a', d).some((a) => /javascript/i.test(a.attribs.href ?? ''))).toBe(false);
    expect(DomUtils.textContent(d)).toContain('<img src=x onerror=alert(1)>');
  });
});

describe('Markdown', () => {
  const md = renderMarkdown(REPORT);

  it('escapes metacharacters of text from sources', () => {
    expect(escapeMarkdown('a *b* _c_ [d](e) <f> | `g` ~h~ \\ &amp; & x')).toBe('a \\*b\\* \\_c\\_ \\[d\\](e) \\<f\\> \\| \\`g\\` \\~h\\~ \\\\ \\&amp; & x');
    expect(escapeMarkdown('# not a heading', true)).toBe('\\# not a heading');
    expect(escapeMarkdown('- not a list', true)).toBe('\\- not a list');
    expect(escapeMarkdown('1. not a list', true)).toBe('1\\. not a list');
    expect(escapeMarkdown('> not a quote', true)).toBe('\\> not a quote');
    expect(escapeMarkdown('two\n\nlines')).toBe('two lines');
    expect(md).not.toContain('<script>');
    expect(md).toContain(`> ${escapeMarkdown(HOSTILE_EVIDENCE, true)}\n>\n> — \\[1\\] ${escapeMarkdown(TITLE_1)}`);
    expect(md).toContain('Analysts said "\\<script\\>alert(\'x\')\\</script\\>" \\| \\*not\\* a typo');
  });

  it('has the title, summary, insights, evidence quotes, sections and references in order', () => {
    expect(md.startsWith(`# ${SAMPLE.research_query}\n`)).toBe(true);
    expect(md).toContain('generated 2025-05-04 10:11 UTC');
    expect(md).toContain(`### 1. ${escapeMarkdown(STATEMENT_1)}`);
    expect(md).toContain(`### 2. ${escapeMarkdown(STATEMENT_2)}`);
    expect(md).toContain('- **Confidence:** 87% (agreement 90%, relevance 81%, quality 85%, recency 70%)');
    expect(md).toContain('> **Contradicting:** Pack prices, if anything, went up in 2023.');
    const headings = md.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual(['## Executive summary', '## Key insights', '## Entity analysis', '## Sentiment', '## Trends', '## Recommendations', '## Methodology', '## Chart data', '## Sources analysed', '## References']);
    const refs = md.slice(md.indexOf('## References'));
    expect(refs).toContain(`1. ${escapeMarkdown(REF_1, true)}\n2. ${escapeMarkdown(REF_2, true)}\n3. ${escapeMarkdown(REF_3, true)}`);
    expect(md).toContain(`| \\[1\\] | [${escapeMarkdown(TITLE_1)}](<https://energy.example.org/reports/speicher-2024?lang=de&x=1>) | industry\\_reports |`);
  });

  it('leaves no markup from hostile text and no empty labels from odd shapes', () => {
    const out = renderMarkdown(MALFORMED);
    expect(out).not.toMatch(/(^|[^\\])<img/m);
    expect(out).toContain('\\<img src=x onerror=alert(1)\\>');
    expect(out).not.toContain('**:**');
    expect(out).not.toContain('](<javascript');
    expect(out).toContain('*300 more not shown here (the JSON export has them all).*');
  });

  it('puts multi-line (BibTeX) references in a fence longer than any backtick run inside', () => {
    const bib = { ...SAMPLE, citations: [{ source_id: 'src_1', url: 'u', format: 'bibtex', text: '@misc{a,\n  title = {Code ```x```}\n}' }] } as unknown as ResearchReport;
    const out = renderMarkdown(bib);
    expect(out).toContain('   ````\n   @misc{a,\n     title = {Code ```x```}\n   }\n   ````');
  });
});

describe('JSON', () => {
  it('round-trips the report, pretty-printed UTF-8', () => {
    const text = renderJson(REPORT);
    expect(JSON.parse(text)).toEqual(SAMPLE);
    expect(text).toContain('\n  "research_query": ');
    expect(text).toContain(TITLE_2);
  });
});

describe('CSV', () => {
  const rows = parseCsv(renderCsv(REPORT));

  it('is one RFC 4180 table of sources then insights, with a record column', () => {
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    expect(rows.slice(1).map((r) => r.length)).toEqual([12, 12, 12, 12, 12]);
    const obj = rows.slice(1).map((r) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]])));
    expect(obj.map((r) => `${r.record}:${r.id}`)).toEqual(['source:src_1', 'source:src_2', 'source:src_3', 'insight:ins_1', 'insight:ins_2']);
    expect(obj[0]).toEqual({
      record: 'source', id: 'src_1', title_or_statement: TITLE_1, url: 'https://energy.example.org/reports/speicher-2024?lang=de&x=1', type: 'industry_reports',
      domain: 'energy.example.org', published_date: '2024-03-01T00:00:00.000Z', relevance_or_confidence: '0.91', used: 'true', source_ids: '', author: 'Jürgen Müller, Anaïs Dubois', topic: '',
    });
    expect(obj[1]!.title_or_statement).toBe(TITLE_2);
    expect(obj[3]).toMatchObject({ record: 'insight', title_or_statement: STATEMENT_1, relevance_or_confidence: '0.8734', source_ids: 'src_1;src_2', topic: 'installed capacity', url: '' });
    expect(obj[4]).toMatchObject({ title_or_statement: STATEMENT_2, source_ids: 'src_2' });
  });

  it('neutralises formula-looking cells with a leading quote', () => {
    const obj = rows.slice(1).map((r) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]])));
    expect(obj[2]!.title_or_statement).toBe(`'${INJECTION_TITLE}`);
    expect(obj[2]!.author).toBe("'@mallory");
    const cells = parseCsv(renderCsv({ ...EMPTY, key_insights: ['+1', '-2', '\t3', '\r4', '@5', '=6', '7'].map((statement, i) => ({ id: `i${i}`, statement })) } as unknown as ResearchReport));
    expect(cells.slice(1).map((r) => r[2])).toEqual(["'+1", "'-2", "'\t3", "'\r4", "'@5", "'=6", '7']);
  });
});

describe('BibTeX', () => {
  it('writes one entry per used source, keyed src_N, that citation-js parses back with the right titles', () => {
    const bib = renderBibtex(REPORT);
    expect(bib.match(/^@(article|misc)\{src_\d+,$/gm)).toEqual(['@misc{src_1,', '@article{src_2,', '@misc{src_3,']);
    const data = parseBibtex(bib);
    expect(data.map((d) => d['citation-key'] ?? d.id)).toEqual(['src_1', 'src_2', 'src_3']);
    expect(data.map((d) => d.title)).toEqual([TITLE_1, TITLE_2, INJECTION_TITLE]);
    expect(data[0]!.author).toEqual([{ given: 'Jürgen', family: 'Müller' }, { given: 'Anaïs', family: 'Dubois' }]);
    expect(data[0]!.URL).toBe('https://energy.example.org/reports/speicher-2024?lang=de&x=1');
    expect(data[0]!.issued?.['date-parts']?.[0]?.slice(0, 1)).toEqual([2024]);
    expect(data[1]!['container-title']).toBe('news.example.com');
  });

  it('escapes the BibTeX specials', () => {
    const title = 'Costs: 50% & $10_000 for #1 ^ ~ {braces} \\ back';
    expect(escapeBibtex(title)).toBe('Costs: 50\\% \\& \\$10\\_000 for \\#1 \\^{} \\~{} \\{braces\\} \\textbackslash{} back');
    const r = { ...SAMPLE, sources_analyzed: [{ ...SAMPLE.sources_analyzed[0], title: 'Costs: 50% & $10_000 for #1 {braces}' }] } as unknown as ResearchReport;
    expect(parseBibtex(renderBibtex(r))[0]!.title).toBe('Costs: 50% & $10_000 for #1 {braces}');
  });

  it('uses the citations as they are when they are BibTeX already', () => {
    const text = '@article{Muller2024,\n  title = {{Über Batteriespeicher}},\n  author = {Müller, Jürgen},\n  year = {2024}\n}';
    const r = { ...SAMPLE, citations: [{ source_id: 'src_1', url: 'u', format: 'bibtex', text }] } as unknown as ResearchReport;
    const bib = renderBibtex(r);
    expect(bib).toContain(text);
    expect(parseBibtex(bib).map((d) => d.title)).toEqual(['Über Batteriespeicher']);
  });

  it('splits author strings into names', () => {
    expect(splitAuthors('Jane Doe, John Roe')).toEqual(['Jane Doe', 'John Roe']);
    expect(splitAuthors('Doe, Jane')).toEqual(['Doe, Jane']);
    expect(splitAuthors('Doe, Jane, Roe, John')).toEqual(['Doe, Jane', 'Roe, John']);
    expect(splitAuthors('Jane Doe; John Roe and Ann Poe')).toEqual(['Jane Doe', 'John Roe', 'Ann Poe']);
    expect(splitAuthors('Reuters')).toEqual(['Reuters']);
  });

  it('writes only a comment when no source was used', () => {
    expect(renderBibtex(EMPTY)).toBe('% BibTeX export of a Scour research report\n');
    expect(parseBibtex(renderBibtex(EMPTY))).toEqual([]);
  });
});

describe('DOCX', () => {
  it('is a Word document whose text has the insights, evidence and references', async () => {
    const xml = await docxXml(await renderDocx(REPORT), 'sample');
    const paras = docxParagraphs(xml);
    expect(paras).toContain(`1. ${STATEMENT_1}`);
    expect(paras).toContain(`[1]${REF_1}`);
    expect(xml).toContain('<w:t xml:space="preserve">[1]</w:t><w:tab/>');
    expect(paras).toContain(`${HOSTILE_EVIDENCE}— [1] ${TITLE_1}`);
    expect(paras).toContain('Confidence: 87% (agreement 90%, relevance 81%, quality 85%, recency 70%)');
    expect(paras.some((p) => p.includes(INJECTION_TITLE))).toBe(true);
    expect(paras.some((p) => p.includes(TITLE_2))).toBe(true);
    expect(xml).toContain('<w:pageBreakBefore/>');
    expect(xml).not.toContain('<script');
  });
});

describe('PDF', () => {
  it('has Chromium at /usr/bin/chromium and pdftotext (this suite fails rather than skips without them)', async () => {
    expect(existsSync(CHROMIUM)).toBe(true);
    const { stdout, stderr } = await run('pdftotext', ['-v']).catch((e: { stderr?: string }) => ({ stdout: '', stderr: e.stderr ?? String(e) }));
    expect(`${stdout}${stderr}`).toMatch(/pdftotext version/);
  });

  it('prints the HTML report on A4 in Chromium; pdftotext finds the statements and references', async () => {
    const bytes = await exporterFor('pdf').render(REPORT, host());
    expect(decode(bytes.subarray(0, 5))).toBe('%PDF-');
    const text = squash(await pdfText(bytes, 'sample'));
    for (const s of [STATEMENT_1, STATEMENT_2, HOSTILE_EVIDENCE, REF_1, REF_3, TITLE_1, 'Executive summary', 'References']) expect(text, s).toContain(squash(s));
    const file = join(work, 'sample.pdf');
    const { stdout } = await run('pdfinfo', [file]);
    expect(stdout).toMatch(/Page size:\s+59\d(\.\d+)? x 84\d(\.\d+)? pts \(A4\)/);
    expect(Number(/Pages:\s+(\d+)/.exec(stdout)?.[1])).toBeGreaterThanOrEqual(10); // a page per section
  });

  it('fails with EXPORT_UNAVAILABLE when the server has no browser', async () => {
    const p = exporterFor('pdf').render(REPORT, { signal: new AbortController().signal });
    await expect(p).rejects.toBeInstanceOf(ExportUnavailable);
    await expect(p).rejects.toMatchObject({ code: 'EXPORT_UNAVAILABLE' });
  });

  it('printPdf runs no script and loads nothing, and closes its context', async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => { hits++; res.end('x'); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    try {
      const html = `<!doctype html><html><head><link rel="stylesheet" href="http://127.0.0.1:${port}/a.css"></head><body><p id="p">static text</p>`
        + `<img src="http://127.0.0.1:${port}/i.png"><iframe src="http://127.0.0.1:${port}/f"></iframe>`
        + '<script>document.getElementById("p").textContent = "scripted text"</script></body></html>';
      const text = await pdfText(await printPdf(browser, html, new AbortController().signal), 'isolated');
      expect(text).toContain('static text');
      expect(text).not.toContain('scripted text');
      expect(hits).toBe(0);
      expect(browser.contexts()).toHaveLength(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('printPdf honours its signal: an abort mid-print rejects with its reason and closes the context', async () => {
    const c = new AbortController();
    const p = printPdf(browser, renderHtml(manyInsights(300)), c.signal);
    setTimeout(() => c.abort(new Error('deadline')), 50);
    await expect(p).rejects.toThrow('deadline');
    expect(browser.contexts()).toHaveLength(0);
    const early = new AbortController();
    const q = printPdf(browser, '<p>x</p>', early.signal);
    early.abort(new Error('at once'));
    await expect(q).rejects.toThrow('at once');
    expect(browser.contexts()).toHaveLength(0);
  });
});

describe('hostile reports', () => {
  const cases: [string, ResearchReport][] = [
    ['empty', EMPTY],
    ['malformed optional fields', MALFORMED],
    ['1,000 insights', manyInsights(1000)],
    ['100k-character strings', HUGE_STRINGS],
  ];

  it.each(cases)('every exporter renders the %s report', async (name, report) => {
    for (const e of builtinExporters) {
      const t = performance.now();
      const out = await e.render(report, host());
      const ms = performance.now() - t;
      timings[`${name}/${e.format}`] = Math.round(ms);
      expect(out.byteLength, `${e.format}`).toBeGreaterThan(0);
      expect(ms, `${e.format} took ${Math.round(ms)} ms`).toBeLessThan(e.format === 'pdf' ? 60_000 : 5_000);
      if (e.format !== 'pdf' && e.format !== 'docx') decode(out);
      if (e.format === 'json') expect(JSON.parse(decode(out))).toBeTypeOf('object');
      if (e.format === 'csv') parseCsv(decode(out));
      if (e.format === 'bibtex') parseBibtex(decode(out));
      if (e.format === 'html') expect(DomUtils.getElementsByTagName('script', parseDocument(decode(out)))).toEqual([]);
      if (e.format === 'docx') expect((await docxXml(out, name.replace(/\W+/g, '-'))).length).toBeGreaterThan(0);
    }
  }, 180_000);

  it('the 1,000-insight report keeps every insight, in order', async () => {
    const report = manyInsights(1000);
    const md = renderMarkdown(report);
    expect(md).toContain('### 1000. Insight number 1000: storage grew in region 0.');
    expect(parseCsv(renderCsv(report))).toHaveLength(1 + 3 + 1000);
    const text = squash(await pdfText(await exporterFor('pdf').render(report, host()), 'many'));
    expect(text).toContain(squash('1000. Insight number 1000: storage grew in region 0.'));
  }, 120_000);

  it('the 100k-character strings come out whole (statements, evidence, references are never cut)', async () => {
    const html = renderHtml(HUGE_STRINGS);
    expect(DomUtils.textContent(parseDocument(html))).toContain(LONG_WORD);
    const paras = docxParagraphs(await docxXml(await renderDocx(HUGE_STRINGS), 'huge'));
    expect(paras.some((p) => p.includes(LONG_WORD))).toBe(true);
    expect(renderCsv(HUGE_STRINGS)).toContain(LONG_WORD);
  }, 60_000);
});
