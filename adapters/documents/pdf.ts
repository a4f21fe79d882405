/**
 * PDF text in reading order, with pdf.js (pdfjs-dist, its legacy build for
 * Node): the text items of each page with their positions and sizes are
 * laid out again here: items on one baseline become a line (a wide gap
 * splits it into cells), a page with a gutter down its middle is read
 * column by column, lines become paragraphs (a line break inside a
 * sentence is a space; a hyphen at a line's end before a lower-case word
 * is undone), a line in a larger font is a heading, a line opening with a
 * bullet or a number is a list item, and lines of several cells in a row
 * are a table. Lines at the top or bottom of pages that repeat from page to
 * page (digits aside), and page numbers, are running headers and footers:
 * left out of main_content and markdown.
 */
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { DocumentRead, DocumentReadOptions } from '../../core/documents.js';
import { DocumentEncrypted, DocumentUnreadable, isApiFailure } from '../../core/errors.js';

/** One run of text as pdf.js gives it, in page units (y up). */
interface Item { readonly str: string; readonly x: number; readonly y: number; readonly w: number; readonly size: number }
/** Items on one baseline within one cell. */
interface Seg { x0: number; x1: number; y: number; size: number; text: string }
/** One line: its cells left to right (one cell: ordinary text). */
interface Line { readonly cells: Seg[]; readonly y: number; readonly size: number; readonly x0: number; readonly x1: number }

type Block =
  | { readonly kind: 'heading'; readonly size: number; text: string }
  | { readonly kind: 'para'; text: string; open: boolean }
  | { readonly kind: 'item'; readonly ordered: boolean; text: string }
  | { readonly kind: 'table'; readonly rows: string[][] };

interface PageOut {
  readonly lines: Line[];
  /** Indexes of lines that are running headers, footers or page numbers. */
  readonly running: Set<number>;
}

const BULLET = /^([•◦▪▫■□●○‣⁃∙·*–—-])\s+/;
const ORDERED = /^(\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s+/i;
const PAGE_NUMBER = /^(page\s+)?(\d{1,4}|[ivxlc]{1,7})(\s*(of|\/)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$/i;

/** A PDF date (D:YYYYMMDDHHmmSSOHH'mm') as ISO 8601, or null. */
export function pdfDate(s: unknown): string | null {
  if (typeof s !== 'string') return null;
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?'?/.exec(s.trim());
  if (m === null) return null;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', se = '00', z, oh = '00', om = '00'] = m;
  const zone = z === undefined || z === 'Z' || z === 'z' ? 'Z' : `${z}${oh}:${om}`;
  const t = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${se}${zone}`);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

const clean = (s: unknown): string | null => {
  if (typeof s !== 'string') return null;
  const t = s.replace(/[\u0000-\u001f]/g, ' ').replace(/\s+/g, ' ').trim();
  return t === '' ? null : t;
};

/** Items of one page into lines: same baseline (within a third of the font size), cells split at wide gaps. */
function toLines(items: readonly Item[]): Line[] {
  const sorted = [...items].sort((a, b) => b.y - a.y || a.x - b.x);
  const rows: Item[][] = [];
  for (const it of sorted) {
    const row = rows[rows.length - 1];
    if (row !== undefined && Math.abs(row[0]!.y - it.y) <= Math.max(1, 0.35 * Math.min(row[0]!.size, it.size))) row.push(it);
    else rows.push([it]);
  }
  return rows.map((row) => {
    row.sort((a, b) => a.x - b.x);
    const cells: Seg[] = [];
    for (const it of row) {
      const last = cells[cells.length - 1];
      const gap = last === undefined ? Infinity : it.x - last.x1;
      if (last !== undefined && gap < 1.5 * Math.max(last.size, it.size)) {
        const space = gap > 0.12 * it.size && !/\s$/.test(last.text) && !/^\s/.test(it.str);
        last.text += (space ? ' ' : '') + it.str;
        last.x1 = Math.max(last.x1, it.x + it.w);
        last.size = Math.max(last.size, it.size);
      } else {
        cells.push({ x0: it.x, x1: it.x + it.w, y: it.y, size: it.size, text: it.str });
      }
    }
    for (const c of cells) c.text = c.text.replace(/\s+/g, ' ').trim();
    const kept = cells.filter((c) => c.text !== '');
    const size = Math.max(...kept.map((c) => c.size), 0);
    return { cells: kept, y: row[0]!.y, size, x0: Math.min(...kept.map((c) => c.x0)), x1: Math.max(...kept.map((c) => c.x1)) };
  }).filter((l) => l.cells.length > 0);
}

/**
 * A two-column page read column by column: a vertical gutter near the
 * middle that no cell crosses on most lines, with text on both sides at
 * different heights (a table's cells share their rows, a column layout's do
 * not). Cells that cross the gutter (a title over both columns) stay where
 * they are: above the columns, or below them.
 */
function byColumns(lines: Line[], width: number): Line[] {
  if (lines.length < 6 || width <= 0) return lines;
  const segs = lines.flatMap((l) => l.cells);
  const cover = new Uint16Array(Math.ceil(width) + 2);
  for (const s of segs) for (let x = Math.max(0, Math.floor(s.x0)); x <= Math.min(width, Math.ceil(s.x1)); x++) cover[x]!++;
  let best: { at: number; len: number } | undefined;
  let start = -1;
  for (let x = Math.floor(width * 0.3); x <= Math.ceil(width * 0.7); x++) {
    // A gutter is crossed by few cells (titles over both columns): at most a tenth of them.
    if (cover[x]! <= segs.length * 0.1) {
      if (start < 0) start = x;
      const len = x - start + 1;
      if (best === undefined || len > best.len) best = { at: start + len / 2, len };
    } else start = -1;
  }
  if (best === undefined || best.len < 8) return lines;
  const g = best.at;
  const leftCells = segs.filter((c) => c.x1 <= g);
  const rightCells = segs.filter((c) => c.x0 >= g);
  if (leftCells.length < 3 || rightCells.length < 3) return lines;
  // Columns hold running text; a table's cells (which may share a gutter too) hold a few words each.
  const words = (cs: readonly Seg[]) => cs.reduce((n, c) => n + c.text.split(' ').length, 0) / cs.length;
  if (words(leftCells) < 4 || words(rightCells) < 4) return lines;
  const asLine = (c: Seg): Line => ({ cells: [c], y: c.y, size: c.size, x0: c.x0, x1: c.x1 });
  const spanning = lines.filter((l) => l.cells.some((c) => c.x0 < g && c.x1 > g));
  const left = lines.filter((l) => !spanning.includes(l)).flatMap((l) => l.cells.filter((c) => c.x1 <= g).map(asLine));
  const right = lines.filter((l) => !spanning.includes(l)).flatMap((l) => l.cells.filter((c) => c.x0 >= g).map(asLine));
  const colTop = Math.max(...[...left, ...right].map((l) => l.y));
  const colBottom = Math.min(...[...left, ...right].map((l) => l.y));
  const above = spanning.filter((l) => l.y > colTop);
  const below = spanning.filter((l) => l.y < colBottom);
  const inside = spanning.filter((l) => l.y <= colTop && l.y >= colBottom);
  return [...above, ...left, ...right, ...inside, ...below];
}

/** The most common font size of body text, weighted by characters. */
function bodySize(pages: readonly PageOut[]): number {
  const weight = new Map<number, number>();
  for (const p of pages) for (const l of p.lines) {
    const k = Math.round(l.size * 2) / 2;
    weight.set(k, (weight.get(k) ?? 0) + l.cells.reduce((n, c) => n + c.text.length, 0));
  }
  let best = 0;
  let size = 0;
  for (const [k, w] of weight) if (w > best) [best, size] = [w, k];
  return size;
}

/** Lines at a page's top or bottom edge that repeat (digits aside) on at least half the pages, or are page numbers. */
function markRunning(pages: PageOut[], heights: readonly number[]): void {
  const key = (l: Line) => l.cells.map((c) => c.text).join(' ').toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ');
  const edges = pages.map((p, n) => {
    const h = heights[n]!;
    const out: number[] = [];
    // Up to two lines at each edge, within the outer eighth of the page.
    const order = p.lines.map((l, i) => ({ l, i })).sort((a, b) => b.l.y - a.l.y);
    for (const { l, i } of [...order.slice(0, 2), ...order.slice(-2)]) if (l.y > h * 0.875 || l.y < h * 0.125) out.push(i);
    return [...new Set(out)];
  });
  const seen = new Map<string, number>();
  edges.forEach((idx, n) => { for (const k of new Set(idx.map((i) => key(pages[n]!.lines[i]!)))) seen.set(k, (seen.get(k) ?? 0) + 1); });
  const repeatAt = Math.max(2, Math.ceil(pages.length / 2));
  edges.forEach((idx, n) => {
    const p = pages[n]!;
    for (const i of idx) {
      const l = p.lines[i]!;
      const text = l.cells.map((c) => c.text).join(' ');
      if (PAGE_NUMBER.test(text) || (pages.length >= 2 && (seen.get(key(l)) ?? 0) >= repeatAt)) p.running.add(i);
    }
  });
}

/** Whether a paragraph ends where a sentence may (so a page break after it ends it). */
const ENDED = /[.!?:;"”’)\]]$/;

/** Lines of one page (in reading order) into blocks, continuing `into` (a paragraph may run on from the page before). */
function toBlocks(lines: readonly Line[], body: number, headingSizes: readonly number[], into: Block[], fresh: boolean): void {
  let prev: Line | undefined;
  let gapUsual = body * 1.25;
  let tableRun: { cols: number; rows: string[][] } | undefined;
  const flushTable = () => {
    if (tableRun === undefined) return;
    if (tableRun.rows.length >= 2) into.push({ kind: 'table', rows: tableRun.rows });
    else into.push({ kind: 'para', text: tableRun.rows[0]!.join(' '), open: false });
    tableRun = undefined;
  };
  for (const l of lines) {
    const text = l.cells.map((c) => c.text).join(' ');
    const gap = prev === undefined ? Infinity : prev.y - l.y;
    if (prev !== undefined && gap > 0 && gap < body * 3) gapUsual = Math.min(gapUsual, gap);
    const last = into[into.length - 1];
    // A row of several cells: a table row (two or more in a row make a table).
    if (l.cells.length >= 2) {
      if (tableRun !== undefined && tableRun.cols !== l.cells.length) flushTable();
      if (tableRun === undefined) {
        if (last?.kind === 'para') last.open = false;
        tableRun = { cols: l.cells.length, rows: [] };
      }
      tableRun.rows.push(l.cells.map((c) => c.text));
      prev = l;
      continue;
    }
    flushTable();
    const level = headingSizes.findIndex((s) => Math.abs(s - l.size) < 0.25);
    if (level >= 0 && text.length <= 200) {
      if (last?.kind === 'heading' && Math.abs(last.size - l.size) < 0.25 && prev !== undefined && gap < l.size * 1.6) last.text += ` ${text}`;
      else into.push({ kind: 'heading', size: l.size, text });
      prev = l;
      continue;
    }
    const bullet = BULLET.exec(text);
    const ordered = bullet === null ? ORDERED.exec(text) : null;
    if (bullet !== null || ordered !== null) {
      into.push({ kind: 'item', ordered: ordered !== null, text: text.slice((bullet ?? ordered)![0].length) });
      prev = l;
      continue;
    }
    const breakBefore = prev === undefined ? fresh || last?.kind !== 'para' || !last.open
      : gap > gapUsual * 1.45 || gap < 0 || Math.abs(prev.size - l.size) > 0.5;
    const joinable = last !== undefined && (last.kind === 'para' || last.kind === 'item') && !breakBefore
      && (last.kind !== 'item' || (prev !== undefined && l.x0 > prev.x0 - 1 && gap <= gapUsual * 1.45));
    if (joinable && (last.kind === 'para' || last.kind === 'item')) {
      // A hyphen at the end of a line before a lower-case word: one word broken across the lines.
      if (/[A-Za-z\u00C0-\u024F]-$/.test(last.text) && /^[a-z\u00DF-\u024F]/.test(text)) last.text = last.text.slice(0, -1) + text;
      else last.text += ` ${text}`;
    } else {
      if (last?.kind === 'para') last.open = false;
      into.push({ kind: 'para', text, open: true });
    }
    prev = l;
  }
  flushTable();
  const end = into[into.length - 1];
  // A paragraph runs on to the next page only when it did not end a sentence here.
  if (end?.kind === 'para') end.open = !ENDED.test(end.text);
}

const escapeCell = (s: string) => s.replace(/\|/g, '\\|');

function blockText(b: Block): string {
  switch (b.kind) {
    case 'table': return b.rows.map((r) => r.join('\t')).join('\n');
    default: return b.text;
  }
}

function blockMarkdown(b: Block, headingSizes: readonly number[]): string {
  switch (b.kind) {
    case 'heading': return `${'#'.repeat(Math.min(6, headingSizes.indexOf(b.size) + 1 || 3))} ${b.text}`;
    case 'item': return `${b.ordered ? '1.' : '-'} ${b.text}`;
    case 'table': {
      const cols = Math.max(...b.rows.map((r) => r.length));
      const row = (r: readonly string[]) => `| ${Array.from({ length: cols }, (_, n) => escapeCell(r[n] ?? '')).join(' | ')} |`;
      return [row(b.rows[0]!), `|${' --- |'.repeat(cols)}`, ...b.rows.slice(1).map(row)].join('\n');
    }
    default: return b.text;
  }
}

/** Blocks as text: paragraphs apart by a blank line, list items and table rows by a line break. */
function joinBlocks(blocks: readonly Block[], render: (b: Block) => string): string {
  let out = '';
  blocks.forEach((b, n) => {
    const prev = blocks[n - 1];
    if (n > 0) out += prev?.kind === 'item' && b.kind === 'item' && prev.ordered === b.ordered ? '\n' : '\n\n';
    out += render(b);
  });
  return out;
}

export async function readPdf(bytes: Uint8Array, options: DocumentReadOptions): Promise<DocumentRead> {
  const deadline = Date.now() + options.timeoutMs;
  const unreadable = (details: string) => new DocumentUnreadable({ message: 'The PDF could not be read', documentType: 'pdf', details });
  // pdf.js takes the buffer over (detaches it): it gets a copy.
  const task = getDocument({
    data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: false,
    // No fonts, maps or images from anywhere: only the text is wanted.
    disableAutoFetch: true, disableStream: true,
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unreadable(`the time limit (${options.timeoutMs} ms) passed before the document was opened`)), Math.max(1, options.timeoutMs));
  });
  let pdf;
  try {
    pdf = await Promise.race([task.promise, timeout]);
  } catch (e) {
    clearTimeout(timer);
    void task.destroy();
    if (e instanceof DocumentUnreadable) throw e;
    const name = (e as { name?: string }).name;
    if (name === 'PasswordException') throw new DocumentEncrypted({ message: 'The PDF is encrypted with a password: its text cannot be read', documentType: 'pdf' });
    throw unreadable(e instanceof Error ? e.message : String(e));
  }
  clearTimeout(timer);
  try {
    const total = pdf.numPages;
    const toRead = Math.min(total, options.maxPages);
    const warnings: string[] = [];
    const pages: PageOut[] = [];
    const heights: number[] = [];
    const empty: number[] = [];
    const failed: number[] = [];
    for (let n = 1; n <= toRead; n++) {
      if (Date.now() > deadline) {
        warnings.push(`reading stopped after ${n - 1} of ${total} pages: the time limit (${options.timeoutMs} ms) was reached`);
        break;
      }
      // A damaged page is left out (and said so); the others are read.
      let page;
      let content;
      try {
        page = await pdf.getPage(n);
        content = await page.getTextContent();
      } catch {
        failed.push(n);
        continue;
      }
      const [vx0, vy0, vx1, vy1] = page.view as [number, number, number, number];
      const items: Item[] = [];
      for (const raw of content.items) {
        // Blank runs (pdf.js puts one where a gap is) say nothing the positions do not.
        if (!('str' in raw) || raw.str.trim() === '') continue;
        const t = raw.transform as number[];
        const size = Math.hypot(t[2]!, t[3]!) || Math.abs(t[3]!) || raw.height || 1;
        items.push({ str: raw.str, x: t[4]! - vx0, y: t[5]! - vy0, w: raw.width, size });
      }
      page.cleanup();
      const lines = toLines(items);
      if (lines.length === 0) empty.push(n);
      pages.push({ lines: byColumns(lines, vx1 - vx0), running: new Set() });
      heights.push(vy1 - vy0);
    }
    if (failed.length > 0 && failed.length === toRead) throw unreadable(`none of its pages could be read`);
    if (failed.length > 0) warnings.push(`page${failed.length > 1 ? 's' : ''} ${failed.join(', ')} could not be read (damaged) and ${failed.length > 1 ? 'are' : 'is'} left out`);
    if (toRead < total && !warnings.some((w) => w.startsWith('reading stopped'))) warnings.push(`only the first ${toRead} of ${total} pages were read (max_pages)`);
    if (empty.length > 0 && empty.length === pages.length) warnings.push('the PDF has no text layer (a scanned document?): no text could be read from it, and no OCR is done');
    else if (empty.length > 0) warnings.push(`page${empty.length > 1 ? 's' : ''} ${empty.join(', ')} ha${empty.length > 1 ? 've' : 's'} no text layer (scanned?): no OCR is done`);
    markRunning(pages, heights);
    const body = bodySize(pages);
    // Heading sizes: clearly larger than the body text, largest first (# for the largest).
    const headingSizes = [...new Set(pages.flatMap((p) => p.lines.filter((l, i) => !p.running.has(i) && l.size > body * 1.15 && l.cells.length === 1).map((l) => l.size)))]
      .sort((a, b) => b - a).slice(0, 4);
    const main: Block[] = [];
    pages.forEach((p, n) => {
      toBlocks(p.lines.filter((_, i) => !p.running.has(i)), body, headingSizes, main, n === 0);
    });
    const meta = await pdf.getMetadata().catch(() => undefined);
    const info = (meta?.info ?? {}) as Record<string, unknown>;
    const xmp = meta?.metadata;
    const xmpGet = (k: string): unknown => { try { return xmp?.get(k); } catch { return undefined; } };
    return {
      info: {
        type: 'pdf', pages: total, pages_read: pages.length,
        title: clean(info.Title) ?? clean(xmpGet('dc:title')),
        author: clean(info.Author) ?? clean(xmpGet('dc:creator')),
        created: pdfDate(info.CreationDate) ?? pdfDate(xmpGet('xmp:createdate')),
        language: clean(info.Language) ?? clean(xmpGet('dc:language')),
        warnings,
      },
      text: pages.map((p) => {
        const blocks: Block[] = [];
        toBlocks(p.lines, body, headingSizes, blocks, true);
        return joinBlocks(blocks, blockText);
      }).filter((t) => t !== '').join('\n\n'),
      main: joinBlocks(main, blockText),
      markdown: joinBlocks(main, (b) => blockMarkdown(b, headingSizes)),
    };
  } catch (e) {
    if (isApiFailure(e)) throw e;
    throw unreadable(e instanceof Error ? e.message : String(e));
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}
