/**
 * The Markdown export (CommonMark with GFM tables): the same document as the
 * HTML export (model.ts), with evidence as `>` quotes followed by their [n]
 * reference and a numbered reference list. Text from sources is escaped so
 * it can never become markup: `\ ` * _ [ ] < > | ~` anywhere, `&` before an
 * entity name, and block markers (`#`, `>`, `-`, `+`, `=`, `1.`/`1)`) where
 * a line starts. Multi-line references (BibTeX or RIS citations) are fenced
 * code blocks, whose fence is longer than any backtick run inside.
 */
import type { ExporterPlugin, ResearchReport } from '../../core/research.js';
import { layoutReport, safeHref, type Block, type Cell, type ReportDocument } from './model.js';

/**
 * Text as literal Markdown: one line, every metacharacter backslash-escaped.
 * `lineStart`: the text begins a line, so block markers are escaped too.
 */
export function escapeMarkdown(text: string, lineStart = false): string {
  let s = text.replace(/\s+/g, ' ').replace(/[\\`*_[\]<>|~]/g, '\\$&').replace(/&(?=#?[0-9A-Za-z]+;)/g, '\\&');
  if (lineStart) {
    s = s.replace(/^(\s*)([#>+=-])/, '$1\\$2').replace(/^(\s*\d+)([.)])/, '$1\\$2');
  }
  return s;
}

/** A URL inside `(<...>)`: nothing in it may close the destination or a table cell. */
const mdHref = (href: string) => href.replace(/[|<>\s\\]/g, (c) => encodeURIComponent(c));

function cell(c: Cell): string {
  if (typeof c === 'string') return escapeMarkdown(c);
  const href = safeHref(c.href);
  return href === null ? escapeMarkdown(c.text) : `[${escapeMarkdown(c.text)}](<${mdHref(href)}>)`;
}

/** Heading text: also every `#` (a trailing run would be read as the closing sequence). */
const heading = (text: string) => escapeMarkdown(text).replace(/#/g, '\\#');

function fence(lines: readonly string[]): string {
  const longest = Math.max(0, ...lines.map((l) => Math.max(0, ...[...l.matchAll(/`+/g)].map((m) => m[0].length))));
  const f = '`'.repeat(Math.max(3, longest + 1));
  return [f, ...lines, f].join('\n');
}

function block(b: Block, out: string[]): void {
  switch (b.kind) {
    case 'heading':
      out.push(`${'#'.repeat(b.level)} ${heading(b.text)}`);
      return;
    case 'paragraph':
      out.push(b.note ? `*${escapeMarkdown(b.text)}*` : escapeMarkdown(b.text, true));
      return;
    case 'quote': {
      const tag = b.label !== undefined ? `**${escapeMarkdown(b.label)}:** ` : '';
      const source = (b.ref === null ? escapeMarkdown(b.sourceId) : `\\[${b.ref.n}\\] ${escapeMarkdown(b.ref.label)}`) + (b.detail === undefined ? '' : ` · ${escapeMarkdown(b.detail)}`);
      out.push(`> ${tag}${escapeMarkdown(b.text, tag === '')}\n>\n> — ${source}`);
      return;
    }
    case 'list':
      out.push(b.items.map((i) => `- ${escapeMarkdown(i, true)}`).join('\n'));
      return;
    case 'fields':
      out.push(b.rows.map(([k, v]) => `- **${escapeMarkdown(k)}:** ${escapeMarkdown(v)}`).join('\n'));
      return;
    case 'table': {
      const lines = [`| ${b.head.map((h) => escapeMarkdown(h)).join(' | ')} |`, `|${b.head.map(() => ' --- ').join('|')}|`];
      for (const row of b.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
      out.push(lines.join('\n'));
    }
  }
}

export function documentToMarkdown(doc: ReportDocument): string {
  const out: string[] = [`# ${heading(doc.title)}`];
  out.push(`*Research report${doc.generatedLabel !== null ? ` · generated ${escapeMarkdown(doc.generatedLabel)}` : ''}*`);
  if (doc.facts.length > 0) block({ kind: 'fields', rows: doc.facts }, out);
  for (const s of doc.sections) {
    out.push(`## ${heading(s.title)}`);
    for (const b of s.blocks) block(b, out);
  }
  out.push('## References');
  if (doc.references.length === 0) out.push('*No references.*');
  else {
    out.push(doc.references.map((r) => (r.lines.length > 1
      ? `${r.n}. Reference \\[${r.n}\\]:\n\n${fence(r.lines).replace(/^/gm, '   ')}`
      : `${r.n}. ${escapeMarkdown(r.lines[0] ?? '', true)}`)).join('\n'));
  }
  return `${out.join('\n\n')}\n`;
}

export const renderMarkdown = (report: ResearchReport): string => documentToMarkdown(layoutReport(report));

export const markdownExporter: ExporterPlugin<'exporter-markdown'> = {
  name: 'exporter-markdown',
  kind: 'exporter',
  description: 'The report as Markdown (CommonMark with GFM tables); text from sources escaped.',
  format: 'markdown',
  contentType: 'text/markdown; charset=utf-8',
  extension: 'md',
  async render(report, host) {
    host.signal.throwIfAborted();
    return new TextEncoder().encode(renderMarkdown(report));
  },
};
