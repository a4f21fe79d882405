/**
 * The DOCX export: the same document as the HTML export (model.ts) built with
 * the `docx` package: A4 with the same margins, a title block, one Heading 1
 * per section (each after the summary on a new page), insights and
 * recommendations as Heading 2, evidence as indented, shaded quotes ending
 * with their [n] reference, tables with a repeated header row, the numbered
 * references, and "n / N" page numbers in the footer. Only http(s) URLs
 * become hyperlinks. Text goes in as text runs (the package escapes it for
 * XML; model.ts has already removed what XML cannot hold).
 */
import {
  AlignmentType, BorderStyle, Document, ExternalHyperlink, Footer, HeadingLevel, Packer, PageNumber, Paragraph, ShadingType,
  Tab, Table, TableCell, TableRow, TextRun, WidthType,
} from 'docx';
import type { ExporterPlugin, ResearchReport } from '../../core/research.js';
import { layoutReport, safeHref, type Block, type Cell, type ReportDocument } from './model.js';

/** A4 and its margins (18/16/20/16 mm, as html.ts's @page), in twips. */
const PAGE = { width: 11906, height: 16838, top: 1020, right: 907, bottom: 1134, left: 907 } as const;
const CONTENT_WIDTH = PAGE.width - PAGE.left - PAGE.right;
const GREY = '5B6775';
const BORDER = { style: BorderStyle.SINGLE, size: 4, color: 'C9D1DB' } as const;

function link(text: string, href: string, size?: number): ExternalHyperlink | TextRun {
  const safe = safeHref(href);
  const run = new TextRun(safe === null ? { text, size } : { text, style: 'Hyperlink', size });
  return safe === null ? run : new ExternalHyperlink({ link: safe, children: [run] });
}

function cellParagraph(c: Cell, bold = false): Paragraph {
  if (typeof c === 'string') return new Paragraph({ children: [new TextRun({ text: c, bold, size: 18 })] });
  return new Paragraph({ children: [link(c.text, c.href, 18)] });
}

function table(head: readonly string[], rows: readonly (readonly Cell[])[], widths?: readonly number[]): Table {
  const n = Math.max(1, head.length);
  const cols = (widths && widths.length === n ? widths : head.map(() => 100 / n)).map((w) => Math.floor((CONTENT_WIDTH * w) / 100));
  const row = (cells: readonly Cell[], header: boolean) => new TableRow({
    tableHeader: header,
    cantSplit: true,
    children: cols.map((w, i) => new TableCell({
      width: { size: w, type: WidthType.DXA },
      shading: header ? { type: ShadingType.CLEAR, color: 'auto', fill: 'E8EDF4' } : undefined,
      children: [cellParagraph(cells[i] ?? '', header)],
    })),
  });
  return new Table({
    width: { size: CONTENT_WIDTH, type: WidthType.DXA },
    columnWidths: cols,
    borders: { top: BORDER, bottom: BORDER, left: BORDER, right: BORDER, insideHorizontal: BORDER, insideVertical: BORDER },
    rows: [row(head, true), ...rows.map((r) => row(r, false))],
  });
}

function fields(rows: readonly (readonly [string, string])[]): Paragraph[] {
  return rows.map(([k, v]) => new Paragraph({
    spacing: { after: 40 },
    children: [new TextRun({ text: `${k}: `, bold: true, color: GREY }), new TextRun({ text: v })],
  }));
}

function block(b: Block, out: (Paragraph | Table)[]): void {
  switch (b.kind) {
    case 'heading':
      out.push(new Paragraph({ heading: b.level === 3 ? HeadingLevel.HEADING_2 : b.level === 4 ? HeadingLevel.HEADING_3 : HeadingLevel.HEADING_4, keepNext: true, children: [new TextRun(b.text)] }));
      return;
    case 'paragraph':
      out.push(new Paragraph({ spacing: { after: 120 }, children: [new TextRun(b.note ? { text: b.text, italics: true, color: GREY } : { text: b.text })] }));
      return;
    case 'quote': {
      const contra = b.label !== undefined && /contradict/i.test(b.label);
      const children: TextRun[] = [];
      if (b.label !== undefined) children.push(new TextRun({ text: `${b.label.toUpperCase()}  `, bold: true, size: 16, color: contra ? 'B0412A' : '33404F' }));
      children.push(new TextRun({ text: b.text, italics: true }));
      const source = (b.ref === null ? b.sourceId : `[${b.ref.n}] ${b.ref.label}`) + (b.detail === undefined ? '' : ` · ${b.detail}`);
      children.push(new TextRun({ text: `— ${source}`, break: 1, size: 18, color: GREY }));
      out.push(new Paragraph({
        indent: { left: 400 },
        spacing: { before: 60, after: 140 },
        keepLines: true,
        border: { left: { style: BorderStyle.SINGLE, size: 18, color: contra ? 'B0412A' : '2A5DB0', space: 8 } },
        shading: { type: ShadingType.CLEAR, color: 'auto', fill: contra ? 'FBF1EE' : 'F2F5FA' },
        children,
      }));
      return;
    }
    case 'list':
      for (const item of b.items) out.push(new Paragraph({ bullet: { level: 0 }, children: [new TextRun(item)] }));
      return;
    case 'fields':
      out.push(...fields(b.rows));
      return;
    case 'table':
      out.push(table(b.head, b.rows, b.widths));
      out.push(new Paragraph({ children: [] }));
  }
}

function build(doc: ReportDocument): Document {
  const body: (Paragraph | Table)[] = [
    new Paragraph({ children: [new TextRun({ text: 'RESEARCH REPORT', size: 16, color: GREY })] }),
    new Paragraph({ heading: HeadingLevel.TITLE, children: [new TextRun(doc.title)] }),
  ];
  if (doc.generatedLabel !== null) body.push(new Paragraph({ spacing: { after: 200 }, children: [new TextRun({ text: `Generated ${doc.generatedLabel}`, color: GREY })] }));
  body.push(...fields(doc.facts));
  doc.sections.forEach((s, i) => {
    body.push(new Paragraph({ heading: HeadingLevel.HEADING_1, pageBreakBefore: i > 0, keepNext: true, spacing: { before: 240 }, children: [new TextRun(s.title)] }));
    for (const b of s.blocks) block(b, body);
  });
  body.push(new Paragraph({ heading: HeadingLevel.HEADING_1, pageBreakBefore: true, children: [new TextRun('References')] }));
  if (doc.references.length === 0) body.push(new Paragraph({ children: [new TextRun({ text: 'No references.', italics: true, color: GREY })] }));
  for (const r of doc.references) {
    const multi = r.lines.length > 1;
    const runs = r.lines.map((line, i) => new TextRun({ text: line, break: i > 0 ? 1 : undefined, font: multi ? 'Courier New' : undefined, size: multi ? 17 : undefined }));
    body.push(new Paragraph({
      indent: { left: 560, hanging: 560 },
      spacing: { after: 100 },
      children: [new TextRun({ children: [`[${r.n}]`, new Tab()], color: GREY }), ...runs],
    }));
  }
  return new Document({
    creator: 'Scour',
    title: `Research report: ${doc.title.slice(0, 200)}`,
    description: 'Research report generated by Scour',
    styles: { default: { document: { run: { font: 'Calibri', size: 21 } } } },
    sections: [{
      properties: {
        page: {
          size: { width: PAGE.width, height: PAGE.height },
          margin: { top: PAGE.top, right: PAGE.right, bottom: PAGE.bottom, left: PAGE.left },
        },
      },
      footers: {
        default: new Footer({
          children: [new Paragraph({ alignment: AlignmentType.CENTER, children: [new TextRun({ children: [PageNumber.CURRENT, ' / ', PageNumber.TOTAL_PAGES], size: 16, color: GREY })] })],
        }),
      },
      children: body,
    }],
  });
}

export async function renderDocx(report: ResearchReport): Promise<Uint8Array> {
  const buf = await Packer.toBuffer(build(layoutReport(report)));
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

export const docxExporter: ExporterPlugin<'exporter-docx'> = {
  name: 'exporter-docx',
  kind: 'exporter',
  description: 'The report as a Word document (DOCX), the same sections as the HTML export.',
  format: 'docx',
  contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  extension: 'docx',
  async render(report, host) {
    host.signal.throwIfAborted();
    return renderDocx(report);
  },
};
