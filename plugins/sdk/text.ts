/**
 * Renders a DOM subtree as readable plain text: block elements become line
 * breaks (paragraph-like ones a blank line), inline whitespace collapses,
 * <pre> keeps its own, table cells are tab separated, and never more than
 * one blank line in a row. Shared by text_content and main_content.
 */
import { collapse, isElement, isHidden, isSpace, isTextNode, type AnyNode, type Element, type ParentNode } from './dom.js';

/** Never readable text. */
export const NON_TEXT_TAGS: ReadonlySet<string> = new Set([
  'script', 'style', 'noscript', 'template', 'svg', 'head', 'title', 'iframe', 'object', 'embed',
  'canvas', 'select', 'datalist', 'textarea', 'audio', 'video', 'map', 'link', 'meta', 'base',
]);

/** Separated from what follows by a blank line. */
export const PARAGRAPH_TAGS: ReadonlySet<string> = new Set([
  'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'table', 'ul', 'ol', 'dl', 'figure', 'hr',
  'article', 'section', 'main', 'header', 'footer', 'aside', 'nav', 'address', 'details', 'fieldset', 'hgroup',
]);

/** Start and end on their own line. */
export const BLOCK_TAGS: ReadonlySet<string> = new Set([
  ...PARAGRAPH_TAGS,
  'div', 'li', 'dd', 'dt', 'tr', 'tbody', 'thead', 'tfoot', 'caption', 'figcaption', 'form', 'legend',
  'summary', 'center', 'dialog', 'menu', 'dir', 'body', 'html', 'option', 'optgroup', 'frameset', 'frame',
  'noframes', 'picture', 'output', 'search',
]);

/** Accumulates text with pending separators so whitespace never doubles up. */
export class TextBuilder {
  private readonly parts: string[] = [];
  private started = false;
  /** 0 none, 1 line break, 2 blank line. */
  private pendingBreak = 0;
  private pendingSep = '';

  /** Inline text: whitespace collapses to one space, none at line starts. */
  text(data: string): void {
    if (data === '') return;
    if (isSpace(data.charCodeAt(0))) this.space(' ');
    const words = collapse(data);
    if (words !== '') this.emit(words);
    if (isSpace(data.charCodeAt(data.length - 1))) this.space(' ');
  }

  /** Preformatted text, kept as is (line breaks inside included). */
  pre(data: string): void {
    if (data === '') return;
    this.emit(data.replace(/\r\n?/g, '\n'));
  }

  space(sep: string): void {
    if (this.pendingBreak === 0 && this.pendingSep !== '\t') this.pendingSep = sep;
  }

  /** Request a break before the next text: 1 line break, 2 blank line. */
  brk(level: 1 | 2): void {
    if (level > this.pendingBreak) this.pendingBreak = level;
    this.pendingSep = '';
  }

  /** <br>: each one adds a line break, up to one blank line. */
  lineBreak(): void {
    this.pendingBreak = this.pendingBreak >= 1 ? 2 : 1;
    this.pendingSep = '';
  }

  private emit(s: string): void {
    if (this.started) {
      if (this.pendingBreak > 0) this.parts.push(this.pendingBreak === 2 ? '\n\n' : '\n');
      else if (this.pendingSep !== '') this.parts.push(this.pendingSep);
    }
    this.parts.push(s);
    this.started = true;
    this.pendingBreak = 0;
    this.pendingSep = '';
  }

  toString(): string {
    // Preformatted blocks can still carry runs of blank lines; cap them.
    return this.parts.join('').replace(/\n[ \t]*\n(?:[ \t]*\n)+/g, '\n\n').trim();
  }
}

export interface RenderOptions {
  /** Leave out this element and everything under it. */
  readonly skip?: (el: Element) => boolean;
  /** Stop after visiting this many nodes (bounds the work on hostile nesting). */
  readonly maxNodes?: number;
}

/** Leave out never-readable and hidden elements. */
export const defaultSkip = (el: Element): boolean => NON_TEXT_TAGS.has(el.name) || isHidden(el);

const EXIT = 1;

/** Append the readable text of `root` (children of a parent, or a node) to a builder. */
export function renderInto(b: TextBuilder, roots: readonly AnyNode[], options: RenderOptions = {}): void {
  const skip = options.skip ?? defaultSkip;
  // Stack of nodes, or [element, EXIT] markers for closing blocks.
  const stack: (AnyNode | [Element, typeof EXIT])[] = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]!);
  let preDepth = 0;
  let budget = options.maxNodes ?? Infinity;
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (--budget < 0) break;
    if (Array.isArray(item)) {
      const el = item[0];
      closeElement(b, el);
      if (el.name === 'pre' || el.name === 'listing' || el.name === 'xmp' || el.name === 'plaintext') preDepth--;
      continue;
    }
    const node = item;
    if (isTextNode(node)) {
      if (preDepth > 0) b.pre(node.data);
      else b.text(node.data);
      continue;
    }
    if (!isElement(node)) {
      if ('children' in node) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
      continue;
    }
    if (skip(node)) continue;
    const name = node.name;
    if (name === 'br') {
      b.lineBreak();
      continue;
    }
    if (name === 'img' || name === 'input' || name === 'wbr') continue;
    openElement(b, node);
    if (name === 'pre' || name === 'listing' || name === 'xmp' || name === 'plaintext') preDepth++;
    stack.push([node, EXIT]);
    const ch = node.children;
    for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i]!);
  }
}

function openElement(b: TextBuilder, el: Element): void {
  const name = el.name;
  if (PARAGRAPH_TAGS.has(name)) b.brk(2);
  else if (BLOCK_TAGS.has(name)) b.brk(1);
}

function closeElement(b: TextBuilder, el: Element): void {
  const name = el.name;
  if (PARAGRAPH_TAGS.has(name)) b.brk(2);
  else if (BLOCK_TAGS.has(name)) b.brk(1);
  else if (name === 'td' || name === 'th') b.space('\t');
}

/** The readable text of a subtree. */
export function renderText(root: ParentNode | AnyNode, options: RenderOptions = {}): string {
  const b = new TextBuilder();
  renderInto(b, 'children' in root && !isElement(root) ? root.children : [root], options);
  return b.toString();
}
