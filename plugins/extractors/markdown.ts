/**
 * markdown: the main content (see main-content.ts) as Markdown, led by its
 * headline as a heading of the page's own level, or the whole body when no
 * main content was found (a main content taken from a JSON-LD articleBody is
 * plain paragraphs). Headings (#), paragraphs, lists
 * (nested, ordered with their start), links [text](absolute url), images
 * ![alt](absolute src, lazy-load aware), emphasis (* and **), strikethrough,
 * inline code, fenced code blocks (language from a language-* class),
 * blockquotes, horizontal rules, hard line breaks, and simple tables (pipe
 * tables; tables whose cells hold blocks are layout and render as blocks).
 * Markdown-significant characters in text are escaped. The walk is iterative;
 * list and quote nesting is capped at 16 levels of indentation.
 */
import { defineExtractor, type Page } from '../sdk/scrape.js';
import { baseUrl, isElement, isTextNode, rawText, structure, type AnyNode, type Element } from '../sdk/dom.js';
import { HTML_FILTER } from '../sdk/scrape.js';
import { imageOf } from './images-reader.js';
import { linkUrl } from './links-reader.js';
import { mainContent } from './main-content-reader.js';
import { BLOCK_TAGS, defaultSkip, PARAGRAPH_TAGS, renderText } from '../sdk/text.js';

const MAX_NESTING = 16;
const WS = /\s+/g;
/** Characters with inline meaning ("|" only matters in tables, escaped there; ">" only at a line start). */
const INLINE_ESCAPE = /([\\`*_[\]<])/g;
const LINE_START = /^(?:#{1,6}(?=\s|$)|[-+=](?=\s|$)|>|\d+(?=[.)](?:\s|$)))/;
/** Text at a line start that Markdown would read as a heading, list item, quote or rule: "\# x", "\- x", "\> x", "1\. x". */
const escapeLineStart = (s: string): string => s.replace(LINE_START, (m) => (/^\d/.test(m) ? m + '\\' : '\\' + m));

class MarkdownWriter {
  private readonly parts: string[] = [];
  private started = false;
  private pendingBreak = 0;
  /** The prefix of the blank line, as it was when the blank line was asked for (before a quote opens). */
  private blankPrefix = '';
  private pendingSpace = false;
  /** Markers to glue to the next text (opening emphasis, link brackets, heading hashes). */
  private pendingOpen = '';
  /** Per-level continuation prefixes (quote "> ", list indentation). */
  private readonly prefixes: string[] = [];
  /** A list marker replacing the innermost prefix on the next line. */
  private marker: string | null = null;
  /** Inside headings and table cells, breaks become spaces. */
  flat = 0;

  private linePrefix(): string {
    if (this.marker !== null) {
      const m = this.marker;
      this.marker = null;
      return this.prefixes.slice(0, -1).join('') + m;
    }
    return this.prefixes.join('');
  }

  private separate(): boolean {
    let atLineStart = false;
    if (!this.started) {
      this.parts.push(this.linePrefix());
      atLineStart = true;
    } else if (this.pendingBreak > 0) {
      this.parts.push('\n');
      if (this.pendingBreak === 2) {
        // The blank line belongs to what both sides share (no ">" when a quote opens or closes).
        const now = this.prefixes.join('');
        let k = 0;
        while (k < this.blankPrefix.length && k < now.length && this.blankPrefix[k] === now[k]) k++;
        this.parts.push(now.slice(0, k).trimEnd() + '\n');
      }
      this.parts.push(this.linePrefix());
      atLineStart = true;
    } else if (this.pendingSpace) this.parts.push(' ');
    this.started = true;
    this.pendingBreak = 0;
    this.pendingSpace = false;
    return atLineStart;
  }

  /** Text from the page: collapsed and escaped. */
  text(data: string): void {
    if (data === '') return;
    if (/^\s/.test(data)) this.space();
    const words = data.replace(WS, ' ').trim();
    if (words !== '') {
      let escaped = words.replace(INLINE_ESCAPE, '\\$1');
      const atStart = this.separate();
      if (atStart && this.pendingOpen === '') escaped = escapeLineStart(escaped);
      this.parts.push(this.pendingOpen, escaped);
      this.pendingOpen = '';
    }
    if (/\s$/.test(data)) this.space();
  }

  /** Markdown produced by us (an image), placed like text. */
  inline(md: string): void {
    this.separate();
    this.parts.push(this.pendingOpen, md);
    this.pendingOpen = '';
  }

  space(): void {
    if (this.pendingBreak === 0) this.pendingSpace = true;
  }

  brk(level: 1 | 2): void {
    if (this.flat > 0) {
      this.space();
      return;
    }
    if (!this.started) return;
    if (level === 2 && this.pendingBreak < 2) this.blankPrefix = this.prefixes.join('').trimEnd();
    if (level > this.pendingBreak) this.pendingBreak = level;
    this.pendingSpace = false;
  }

  hardBreak(): void {
    if (this.flat > 0) {
      this.space();
      return;
    }
    if (this.started && this.pendingBreak === 0) {
      this.parts.push('  ');
      this.pendingBreak = 1;
      this.pendingSpace = false;
    }
  }

  open(marker: string): void {
    this.pendingOpen += marker;
  }

  /** Close a marker; when nothing was written since its opening, drop both. */
  close(openMarker: string, closeMarker: string): void {
    if (this.pendingOpen.endsWith(openMarker)) {
      this.pendingOpen = this.pendingOpen.slice(0, -openMarker.length);
      return;
    }
    this.parts.push(closeMarker);
  }

  /** Whole lines written as is (code blocks, table rows, rules). */
  lines(lines: readonly string[]): void {
    for (const l of lines) {
      if (this.started) this.pendingBreak = Math.max(this.pendingBreak, 1);
      this.separate();
      this.parts.push(l);
    }
  }

  pushPrefix(continuation: string, marker: string | null): void {
    this.prefixes.push(this.prefixes.length < MAX_NESTING ? continuation : '');
    if (marker !== null && this.prefixes.length <= MAX_NESTING) this.marker = marker;
  }

  popPrefix(): void {
    this.prefixes.pop();
    this.marker = null;
  }

  toString(): string {
    // Trailing blanks go, except the two spaces of a hard break.
    return this.parts.join('').replace(/(?<![ \t])[ \t]+\n/g, (m) => (m === '  \n' ? m : '\n')).replace(/\n{3,}/g, '\n\n').trim();
  }
}

const INLINE_MARK: Readonly<Record<string, string>> = {
  strong: '**', b: '**', em: '*', i: '*', cite: '*', dfn: '*', del: '~~', s: '~~', strike: '~~',
};

interface ListFrame {
  readonly ordered: boolean;
  next: number;
}

type Exit = { readonly exit: Element; readonly close?: [string, string]; readonly list?: true; readonly prefix?: true; readonly flat?: true; readonly blockLink?: true };

/** Whether a link wraps blocks (a card: image, heading, text), which Markdown link text cannot hold. */
function wrapsBlocks(a: Element): boolean {
  const stack: AnyNode[] = [...a.children];
  let budget = 500;
  while (stack.length > 0 && --budget > 0) {
    const n = stack.pop()!;
    if (!isElement(n)) continue;
    if (BLOCK_TAGS.has(n.name)) return true;
    for (const c of n.children) stack.push(c);
  }
  return false;
}

function codeLanguage(pre: Element): string {
  const classes = [pre.attribs.class ?? ''];
  for (const c of pre.children) if (isElement(c) && c.name === 'code') classes.push(c.attribs.class ?? '');
  for (const c of classes) {
    const m = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(c);
    if (m !== null) return m[1]!;
  }
  return '';
}

function fence(code: string): string {
  let longest = 0;
  for (const m of code.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function inlineCode(code: string): string {
  const text = code.replace(WS, ' ');
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const ticks = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return ticks + pad + text + pad + ticks;
}

const LAYOUT_SIGNS = new Set(['table', 'p', 'div', 'ul', 'ol', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'section', 'article']);

/** The rows of a simple data table, or undefined for a layout table (cells holding blocks, or one column). */
function tableRows(table: Element): Element[][] | undefined {
  const rows: Element[][] = [];
  const stack: AnyNode[] = [...table.children].reverse();
  let budget = 20_000;
  while (stack.length > 0) {
    if (--budget < 0) return undefined;
    const n = stack.pop()!;
    if (!isElement(n)) continue;
    if (n.name === 'tr') {
      const cells: Element[] = [];
      for (const c of n.children) {
        if (!isElement(c) || (c.name !== 'td' && c.name !== 'th')) continue;
        // A cell holding blocks makes this a layout table.
        const inner: AnyNode[] = [...c.children];
        while (inner.length > 0) {
          if (--budget < 0) return undefined;
          const x = inner.pop()!;
          if (!isElement(x)) continue;
          if (LAYOUT_SIGNS.has(x.name)) return undefined;
          for (const y of x.children) inner.push(y);
        }
        cells.push(c);
      }
      if (cells.length > 0) rows.push(cells);
      continue;
    }
    if (n.name === 'thead' || n.name === 'tbody' || n.name === 'tfoot') for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  const cols = rows.reduce((m, r) => Math.max(m, r.length), 0);
  if (rows.length === 0 || cols < 2) return undefined;
  return rows;
}

function tableLines(rows: Element[][], skip: (el: Element) => boolean): string[] {
  const cols = rows.reduce((m, r) => Math.max(m, r.length), 0);
  const cell = (c: Element | undefined): string =>
    c === undefined ? '' : renderText(c, { skip }).replace(WS, ' ').trim().replace(/([\\|])/g, '\\$1');
  const line = (r: Element[]): string => '| ' + Array.from({ length: cols }, (_, i) => cell(r[i])).join(' | ') + ' |';
  const out = [line(rows[0]!), '| ' + Array.from({ length: cols }, () => '---').join(' | ') + ' |'];
  for (let i = 1; i < rows.length; i++) out.push(line(rows[i]!));
  return out;
}

/** Markdown of some nodes, leaving out what `skip` says. */
export function toMarkdown(nodes: readonly AnyNode[], skip: (el: Element) => boolean, base: string): string {
  const w = new MarkdownWriter();
  const lists: ListFrame[] = [];
  /** URLs of the links around blocks being written: their headings carry the link instead. */
  const blockLinks: string[] = [];
  const stack: (AnyNode | Exit)[] = [];
  for (let i = nodes.length - 1; i >= 0; i--) stack.push(nodes[i]!);
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('exit' in item) {
      const el = item.exit;
      if (item.close !== undefined) w.close(item.close[0], item.close[1]);
      if (item.flat === true) w.flat--;
      if (item.blockLink === true) blockLinks.pop();
      if (item.prefix === true) w.popPrefix();
      if (item.list === true) {
        lists.pop();
        // A nested list ends inside its item: no blank line.
        w.brk(lists.length > 0 ? 1 : 2);
        continue;
      }
      if (PARAGRAPH_TAGS.has(el.name)) w.brk(2);
      else if (BLOCK_TAGS.has(el.name)) w.brk(1);
      continue;
    }
    const node = item;
    if (isTextNode(node)) {
      w.text(node.data);
      continue;
    }
    if (!isElement(node)) {
      if ('children' in node) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
      continue;
    }
    if (skip(node)) continue;
    const name = node.name;
    const children = (exit: Exit): void => {
      stack.push(exit);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    };
    switch (name) {
      case 'br':
        w.hardBreak();
        continue;
      case 'hr':
        w.brk(2);
        w.lines(['---']);
        w.brk(2);
        continue;
      case 'img': {
        const img = imageOf(node, base);
        if (img !== undefined) w.inline(`![${(img.alt ?? '').replace(WS, ' ').trim().replace(/([\\[\]])/g, '\\$1')}](${img.src.replace(/[()\s]/g, encodeURIComponent)})`);
        continue;
      }
      case 'pre': {
        w.brk(2);
        const code = rawText(node).replace(/\r\n?/g, '\n').replace(/^\n/, '').trimEnd();
        const f = fence(code);
        w.lines([f + codeLanguage(node), ...code.split('\n'), f]);
        w.brk(2);
        continue;
      }
      case 'code':
      case 'kbd':
      case 'samp':
      case 'tt': {
        const code = rawText(node);
        if (code.trim() !== '') {
          if (/^\s/.test(code)) w.space();
          w.inline(inlineCode(code.trim()));
          if (/\s$/.test(code)) w.space();
        }
        continue;
      }
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': {
        w.brk(2);
        const marker = '#'.repeat(Number(name[1])) + ' ';
        const link = blockLinks[blockLinks.length - 1];
        const open = link === undefined ? marker : marker + '[';
        w.open(open);
        w.flat++;
        children({ exit: node, close: [open, link === undefined ? '' : `](${link})`], flat: true });
        continue;
      }
      case 'a': {
        const url = linkUrl(node.attribs.href, base);
        if (url === undefined) break;
        if (wrapsBlocks(node)) {
          // A card: its blocks as they are, its heading as the link.
          blockLinks.push(url.replace(/[()\s]/g, encodeURIComponent));
          children({ exit: node, blockLink: true });
          continue;
        }
        w.open('[');
        children({ exit: node, close: ['[', `](${url.replace(/[()\s]/g, encodeURIComponent)})`] });
        continue;
      }
      case 'ul': case 'ol': case 'menu': case 'dir': {
        w.brk(lists.length > 0 ? 1 : 2);
        const start = Number.parseInt(node.attribs.start ?? '1', 10);
        lists.push({ ordered: name === 'ol', next: Number.isFinite(start) ? start : 1 });
        children({ exit: node, list: true });
        continue;
      }
      case 'li': {
        w.brk(1);
        const frame = lists[lists.length - 1];
        const marker = frame?.ordered === true ? `${frame.next++}. ` : '- ';
        w.pushPrefix(' '.repeat(marker.length), marker);
        children({ exit: node, prefix: true });
        continue;
      }
      case 'blockquote':
        w.brk(2);
        w.pushPrefix('> ', null);
        children({ exit: node, prefix: true });
        continue;
      case 'table': {
        const rows = tableRows(node);
        if (rows === undefined) break;
        w.brk(2);
        w.lines(tableLines(rows, skip));
        w.brk(2);
        continue;
      }
      default: {
        const mark = INLINE_MARK[name];
        if (mark !== undefined) {
          w.open(mark);
          children({ exit: node, close: [mark, mark] });
          continue;
        }
      }
    }
    if (PARAGRAPH_TAGS.has(name)) w.brk(2);
    else if (BLOCK_TAGS.has(name) || name === 'td' || name === 'th') w.brk(1);
    children({ exit: node });
  }
  return w.toString();
}

/** The headline as a heading of its own level. */
const headingLine = (text: string, level: number): string => `${'#'.repeat(Math.min(6, Math.max(1, level)))} ${text.replace(INLINE_ESCAPE, '\\$1')}`;

export function extractMarkdown(page: Page): string {
  const base = baseUrl(page.document, page.finalUrl);
  const main = mainContent(page);
  const lead = main.headline === '' ? [] : [headingLine(main.headline, main.headlineLevel)];
  if (main.source === 'dom' && main.text !== '') {
    const body = toMarkdown(main.nodes, main.skip, base);
    return [...lead, ...(body === '' ? [] : [body])].join('\n\n');
  }
  if (main.source === 'json-ld') {
    const paras = main.articleBody.split('\n\n').map((para) => escapeLineStart(para.replace(INLINE_ESCAPE, '\\$1')));
    return [...lead, ...paras].join('\n\n');
  }
  const { body } = structure(page.document);
  return toMarkdown('children' in body && !isElement(body as AnyNode) ? body.children : [body as Element], defaultSkip, base);
}

export const markdownExtractor = defineExtractor({
  name: 'extractor-markdown',
  id: 'markdown',
  builtin: true,
  description: 'The main content as Markdown (the whole body when no main content is found).',
  filter: HTML_FILTER,
  extract: (page): string => extractMarkdown(page),
});
