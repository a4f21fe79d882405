/**
 * The HTML export: the report (laid out by model.ts) as ONE self-contained
 * document: inline CSS, no script, no external resource (a
 * Content-Security-Policy meta tag forbids loading anything), every piece of
 * text escaped, and only http(s) URLs made into links. It is also what the
 * PDF export prints, so it is written for paper as well as screens: A4 @page
 * margins, each section after the summary on a new page, table headers
 * repeated, quotes and table rows kept whole where they fit.
 */
import type { ResearchReport } from '../../core/research.js';
import { layoutReport, safeHref, type Block, type Cell, type ReportDocument, type Ref } from './model.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML character data or a quoted attribute value. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const CSS = `
@page { size: A4; margin: 18mm 16mm 20mm 16mm; }
:root { color-scheme: light; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, "Noto Sans", sans-serif; font-size: 10.5pt; line-height: 1.45; color: #1d232b; margin: 0; overflow-wrap: anywhere; word-break: break-word; }
@media screen { body { max-width: 58rem; margin: 2rem auto; padding: 0 1.25rem; } }
h1, h2, h3, h4, h5 { line-height: 1.25; break-after: avoid; page-break-after: avoid; }
h1 { font-size: 20pt; margin: 0 0 .4em; }
h2 { font-size: 15pt; margin: 0 0 .6em; padding-bottom: .2em; border-bottom: 2px solid #2a5db0; color: #163a73; }
h3 { font-size: 12pt; margin: 1.2em 0 .4em; }
h4 { font-size: 10.5pt; margin: 1em 0 .3em; color: #33404f; }
h5 { font-size: 9.5pt; margin: .8em 0 .25em; color: #5b6775; text-transform: uppercase; letter-spacing: .04em; }
p { margin: .45em 0; }
a { color: #1f4f9c; text-decoration: none; }
.kicker { text-transform: uppercase; letter-spacing: .08em; font-size: 8.5pt; color: #5b6775; margin: 0 0 .3em; }
.generated { color: #5b6775; margin: 0 0 1em; }
header.cover { border-bottom: 1px solid #c9d1db; padding-bottom: .8em; margin-bottom: 1.2em; }
dl.fields { display: grid; grid-template-columns: minmax(7em, max-content) 1fr; gap: .15em 1em; margin: .4em 0 .7em; }
dl.fields dt { color: #5b6775; }
dl.fields dd { margin: 0; }
nav.toc ol { margin: .2em 0 0; padding-left: 2em; }
nav.toc h2 { font-size: 11pt; border: 0; color: #33404f; margin-bottom: .2em; }
section { break-before: page; page-break-before: always; }
section.first { break-before: auto; page-break-before: auto; margin-top: 1.2em; }
blockquote.evidence { margin: .5em 0 .7em 0; padding: .35em .8em; border-left: 3px solid #2a5db0; background: #f2f5fa; break-inside: avoid; page-break-inside: avoid; }
blockquote.evidence.contradicting { border-left-color: #b0412a; background: #fbf1ee; }
blockquote.evidence p { margin: 0 0 .2em; }
blockquote.evidence footer { font-size: 9pt; color: #5b6775; }
.tag { font-size: 8pt; text-transform: uppercase; letter-spacing: .05em; color: #33404f; margin-right: .4em; }
.contradicting .tag { color: #b0412a; }
.note { color: #5b6775; font-style: italic; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; margin: .5em 0 1em; font-size: 8.5pt; }
thead { display: table-header-group; }
th, td { border: 1px solid #c9d1db; padding: .25em .4em; text-align: left; vertical-align: top; }
th { background: #e8edf4; font-size: 8pt; overflow-wrap: break-word; word-break: normal; }
tr { break-inside: avoid; page-break-inside: avoid; }
ol.references { padding-left: 0; list-style: none; }
ol.references li { margin: 0 0 .5em; padding-left: 2.6em; text-indent: -2.6em; }
ol.references .n { display: inline-block; width: 2.6em; text-indent: 0; color: #5b6775; }
ol.references pre { font-family: "DejaVu Sans Mono", monospace; font-size: 8.5pt; white-space: pre-wrap; text-indent: 0; margin: 0; }
ul { margin: .3em 0 .6em; padding-left: 1.4em; }
`;

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

function cell(c: Cell): string {
  if (typeof c === 'string') return escapeHtml(c);
  const href = safeHref(c.href);
  return href === null ? escapeHtml(c.text) : `<a href="${escapeHtml(href)}" rel="noopener noreferrer">${escapeHtml(c.text)}</a>`;
}

const refLink = (r: Ref) => `<a href="#ref-${r.n}">[${r.n}]</a>`;

function block(b: Block, out: string[]): void {
  switch (b.kind) {
    case 'heading':
      out.push(`<h${b.level}>${escapeHtml(b.text)}</h${b.level}>`);
      return;
    case 'paragraph':
      out.push(b.note ? `<p class="note">${escapeHtml(b.text)}</p>` : `<p>${escapeHtml(b.text)}</p>`);
      return;
    case 'quote': {
      const contra = b.label !== undefined && /contradict/i.test(b.label);
      const tag = b.label !== undefined ? `<span class="tag">${escapeHtml(b.label)}</span>` : '';
      const source = (b.ref === null ? escapeHtml(b.sourceId) : `${refLink(b.ref)} ${escapeHtml(b.ref.label)}`) + (b.detail === undefined ? '' : ` · ${escapeHtml(b.detail)}`);
      out.push(`<blockquote class="evidence${contra ? ' contradicting' : ''}"><p>${escapeHtml(b.text)}</p><footer>${tag}${source}</footer></blockquote>`);
      return;
    }
    case 'list':
      out.push(`<ul>${b.items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>`);
      return;
    case 'fields':
      out.push(`<dl class="fields">${b.rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>`);
      return;
    case 'table': {
      const cols = b.widths ? `<colgroup>${b.widths.map((w) => `<col style="width:${w}%">`).join('')}</colgroup>` : '';
      out.push(`<table>${cols}<thead><tr>${b.head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>`);
      for (const row of b.rows) out.push(`<tr>${row.map((c) => `<td>${cell(c)}</td>`).join('')}</tr>`);
      out.push('</tbody></table>');
    }
  }
}

/** The document as HTML (see the module comment). */
export function documentToHtml(doc: ReportDocument): string {
  const out: string[] = [];
  const title = doc.title.length > 200 ? `${doc.title.slice(0, 199)}…` : doc.title;
  out.push(
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="generator" content="Scour research">',
    `<title>Research report: ${escapeHtml(title)}</title>`,
    `<style>${CSS}</style>`,
    '</head><body>',
    '<header class="cover">',
    '<p class="kicker">Research report</p>',
    `<h1>${escapeHtml(doc.title)}</h1>`,
  );
  if (doc.generatedAt !== null && doc.generatedLabel !== null) {
    out.push(`<p class="generated">Generated <time datetime="${escapeHtml(doc.generatedAt)}">${escapeHtml(doc.generatedLabel)}</time></p>`);
  }
  if (doc.facts.length > 0) block({ kind: 'fields', rows: doc.facts }, out);
  out.push('</header>');
  const toc = [...doc.sections.map((s) => [s.id, s.title] as const), ['references', 'References'] as const];
  out.push(`<nav class="toc"><h2>Contents</h2><ol>${toc.map(([id, t]) => `<li><a href="#${id}">${escapeHtml(t)}</a></li>`).join('')}</ol></nav>`);
  out.push('<main>');
  doc.sections.forEach((s, i) => {
    out.push(`<section id="${escapeHtml(s.id)}"${i === 0 ? ' class="first"' : ''}><h2>${escapeHtml(s.title)}</h2>`);
    for (const b of s.blocks) block(b, out);
    out.push('</section>');
  });
  out.push('<section id="references"><h2>References</h2>');
  if (doc.references.length === 0) out.push('<p class="note">No references.</p>');
  else {
    out.push('<ol class="references">');
    for (const r of doc.references) {
      const text = r.lines.length > 1 ? `<pre>${escapeHtml(r.lines.join('\n'))}</pre>` : escapeHtml(r.lines[0] ?? '');
      out.push(`<li id="ref-${r.n}"><span class="n">[${r.n}]</span>${text}</li>`);
    }
    out.push('</ol>');
  }
  out.push('</section></main></body></html>', '');
  return out.join('\n');
}

/** A report as the HTML document (also the PDF's source). */
export const renderHtml = (report: ResearchReport): string => documentToHtml(layoutReport(report));
