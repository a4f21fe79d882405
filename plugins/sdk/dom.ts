/**
 * Read-only helpers over htmlparser2's DOM shared by the extractors. Every
 * walk is iterative (an explicit stack), because hostile pages nest tens of
 * thousands of elements and recursion would overflow the stack.
 */
import { Element as DomElement, type AnyNode, type Document, type Element, type ParentNode } from 'domhandler';

export type { AnyNode, Document, Element, ParentNode };

// domhandler's node types are domelementtype's string enum: 'tag', 'script', 'style', 'text', 'cdata', ...
export const isElement = (n: AnyNode): n is Element => {
  const t = n.type as string;
  return t === 'tag' || t === 'script' || t === 'style';
};

/** Text nodes (CDATA sections hold a text child, reached by walking). */
export const isTextNode = (n: AnyNode): n is AnyNode & { data: string } => (n.type as string) === 'text';

/** The attribute trimmed, or undefined when absent or blank. */
export function attrTrim(el: Element, name: string): string | undefined {
  const v = el.attribs[name];
  if (v === undefined) return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

/** Visit every element under `root` in document order; return false from `visit` to skip its subtree. */
export function walkElements(root: ParentNode, visit: (el: Element) => boolean | void): void {
  const stack: AnyNode[] = [];
  for (let i = root.children.length - 1; i >= 0; i--) stack.push(root.children[i]!);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    if (visit(node) === false) continue;
    const ch = node.children;
    for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i]!);
  }
}

/** The first element with that tag name, in document order. */
export function firstByTag(root: ParentNode, name: string): Element | undefined {
  let found: Element | undefined;
  walkElements(root, (el) => {
    if (found !== undefined) return false;
    if (el.name === name) {
      found = el;
      return false;
    }
    return true;
  });
  return found;
}

/** Raw concatenated text under a node (no block structure), iterative. */
export function rawText(root: AnyNode): string {
  if (isTextNode(root)) return root.data;
  if (!('children' in root)) return '';
  const parts: string[] = [];
  const stack: AnyNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isTextNode(node)) parts.push(node.data);
    else if ('children' in node) {
      const ch = node.children;
      for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i]!);
    }
  }
  return parts.join('');
}

/** The characters \s matches (and trim() removes): ECMAScript WhiteSpace and LineTerminator. */
export function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

const SPACE_RUNS = /\s+/g;
/** Whitespace that collapsing would change: any but a plain space, or two in a row. */
const UNCOLLAPSED = /[^\S ]|\s\s/;

/**
 * `s` with runs of whitespace collapsed to one space and trimmed, as
 * s.replace(/\s+/g, ' ').trim() gives, without building a copy when there
 * is nothing to collapse (most text nodes: words separated by single spaces).
 */
export function collapse(s: string): string {
  const t = s.trim();
  return UNCOLLAPSED.test(t) ? t.replace(SPACE_RUNS, ' ') : t;
}

/**
 * The text under `el` in document order, bounded: at most about `maxChars`
 * characters from at most `maxNodes` nodes, skipping elements named in
 * `skip`, pieces joined with `joiner`. Not collapsed (callers do).
 */
export function boundedText(el: Element, maxChars: number, maxNodes: number, skip: ReadonlySet<string>, joiner = ''): string {
  const parts: string[] = [];
  let len = 0;
  const stack: AnyNode[] = [el];
  let nodes = maxNodes;
  while (stack.length > 0 && len < maxChars && nodes-- > 0) {
    const n = stack.pop()!;
    if (isTextNode(n)) {
      parts.push(n.data);
      len += n.data.length;
    } else if (isElement(n)) {
      if (skip.has(n.name)) continue;
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
  return parts.join(joiner);
}

/** The document's <html>, <head> and <body> (the document itself when missing). */
export function structure(doc: Document): { head: ParentNode | undefined; body: ParentNode } {
  let head: Element | undefined;
  let body: Element | undefined;
  walkElements(doc, (el) => {
    if (el.name === 'head' && head === undefined) head = el;
    else if (el.name === 'body' && body === undefined) body = el;
    else if (el.name === 'html') return true;
    return head === undefined || body === undefined ? el.name === 'html' : false;
  });
  return { head, body: body ?? doc };
}

/**
 * A <body> standing for a document that has none (an old or generated page
 * written without the tag, a fragment): browsers put such a page's content
 * in an implied body, so it has one container like any other page. Its
 * children are the document's top-level nodes (those of <html> in its
 * place); the tree is not touched: they keep their own parents.
 */
export function impliedBody(root: ParentNode): Element {
  const children: AnyNode[] = [];
  for (const c of root.children) {
    if (isElement(c) && c.name === 'html') children.push(...c.children);
    else children.push(c);
  }
  return new DomElement('body', {}, children);
}

const baseCache = new WeakMap<Document, string>();

/** The URL relative references resolve against: <base href> (itself resolved against the page URL), else the final URL. */
export function baseUrl(doc: Document, pageUrl: string): string {
  const cached = baseCache.get(doc);
  if (cached !== undefined) return cached;
  let result = pageUrl;
  const base = firstByTag(doc, 'base');
  const href = base === undefined ? undefined : attrTrim(base, 'href');
  if (href !== undefined) {
    try {
      result = new URL(href, pageUrl).href;
    } catch {
      // An unusable <base href> is ignored, as browsers do.
    }
  }
  baseCache.set(doc, result);
  return result;
}

/** Resolve a reference against a base; undefined when it cannot be parsed. */
export function resolveUrl(ref: string, base: string): string | undefined {
  const r = ref.trim();
  if (r === '') return undefined;
  try {
    return new URL(r, base).href;
  } catch {
    return undefined;
  }
}

/** Whether the element is hidden by markup (`hidden`, `aria-hidden="true"` is not counted: screen-reader only hiding often wraps visible text). */
export function isHidden(el: Element): boolean {
  if (el.attribs.hidden !== undefined) return true;
  const style = el.attribs.style;
  if (style !== undefined && style.length < 2000 && /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(style)) return true;
  return false;
}
