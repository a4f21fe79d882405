/**
 * links: every hyperlink of the page, in document order, not de-duplicated
 * (the same URL twice is two links on the page; callers can dedupe).
 *
 * Item: `{ url, text, rel, target }`.
 * - url: absolute, resolved against <base href> (itself resolved against the
 *   final URL), else the final URL. `mailto:`, `tel:`, `sms:` keep their
 *   written form. Dropped: `javascript:`, `vbscript:` and `data:` links, and
 *   empty / bare `#` hrefs (script hooks, not destinations). In-page
 *   fragments (`#section`) are kept, made absolute.
 * - text: the link's text, whitespace collapsed (a link nested in another,
 *   which browsers never build, has its own text and is not part of the
 *   outer's); when it has none, its aria-label, title, or the alt of the
 *   first image inside (else "").
 * - rel, target: the attribute trimmed, or null.
 * Sources: <a href> and <area href> anywhere except inside template/svg.
 */
import type { Page } from '../sdk/scrape.js';
import { attrTrim, baseUrl, collapse, isElement, isTextNode, resolveUrl, type AnyNode, type Element } from '../sdk/dom.js';
import { BLOCK_TAGS } from '../sdk/text.js';

export interface Link {
  readonly url: string;
  readonly text: string;
  readonly rel: string | null;
  readonly target: string | null;
}

const DROPPED_SCHEME = /^\s*(?:javascript|vbscript|data):/i;
const KEEP_AS_WRITTEN = /^\s*(?:mailto|tel|sms|callto):/i;

export function linkUrl(href: string | undefined, base: string): string | undefined {
  if (href === undefined) return undefined;
  // Browsers strip ASCII tab/newline anywhere in a URL (so "java\nscript:" is javascript:).
  const h = href.replace(/[\t\n\r]/g, '').trim();
  if (h === '' || h === '#' || DROPPED_SCHEME.test(h)) return undefined;
  if (KEEP_AS_WRITTEN.test(h)) return h;
  return resolveUrl(h, base);
}

const NON_TEXT: ReadonlySet<string> = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'title', 'select', 'datalist', 'textarea', 'iframe', 'object']);

interface Open {
  readonly el: Element;
  readonly url: string;
  readonly parts: string[];
  alt: string | undefined;
}

/**
 * One pass over the document. Each text node belongs to its innermost link
 * only: browsers never nest links (the parser closes the outer one), and it
 * keeps hostile nesting linear.
 */
export function extractLinks(page: Page): Link[] {
  const base = baseUrl(page.document, page.finalUrl);
  const found: Open[] = [];
  const stack: [AnyNode, Open | undefined, boolean][] = [];
  const roots = page.document.children;
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i]!, undefined, false]);
  while (stack.length > 0) {
    const [n, open, exit] = stack.pop()!;
    if (exit) {
      open?.parts.push(' ');
      continue;
    }
    if (isTextNode(n)) {
      if (open !== undefined) open.parts.push(n.data);
      continue;
    }
    if (!isElement(n)) {
      if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i]!, open, false]);
      continue;
    }
    const name = n.name;
    if (name === 'template' || name === 'svg') continue;
    let current = open;
    if (name === 'a' || name === 'area') {
      const url = linkUrl(n.attribs.href, base);
      if (url !== undefined) {
        current = { el: n, url, parts: name === 'area' ? [n.attribs.alt ?? ''] : [], alt: undefined };
        found.push(current);
      }
    } else if (open !== undefined) {
      if (name === 'img' && open.alt === undefined) open.alt = attrTrim(n, 'alt');
      if (NON_TEXT.has(name)) continue;
      if (name === 'br' || BLOCK_TAGS.has(name)) {
        // Blocks inside a link still separate words.
        open.parts.push(' ');
        stack.push([n, open, true]);
      }
    }
    const ch = n.children;
    for (let i = ch.length - 1; i >= 0; i--) stack.push([ch[i]!, current, false]);
  }
  return found.map((o) => {
    let text = collapse(o.parts.join(''));
    if (text === '') text = collapse(attrTrim(o.el, 'aria-label') ?? attrTrim(o.el, 'title') ?? o.alt ?? '');
    return { url: o.url, text, rel: attrTrim(o.el, 'rel') ?? null, target: attrTrim(o.el, 'target') ?? null };
  });
}
