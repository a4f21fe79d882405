/**
 * images: every image of the page, in document order.
 *
 * Item: `{ src, alt, width, height, srcset }`.
 * - src: absolute (against <base href>, else the final URL). When `src` is
 *   missing or a placeholder (a short data: URI, a spacer/blank/pixel/1x1
 *   file), the lazy-load attributes are used (data-src, data-lazy-src,
 *   data-original, data-lazy, data-url, data-hi-res-src, data-full-src),
 *   else the largest srcset candidate (of srcset, data-srcset,
 *   data-lazy-srcset, and the <source> elements of an enclosing <picture>).
 *   Images left with only a placeholder (tracking pixels, spacers) are dropped.
 * - srcset: every candidate, `[{ url (absolute), descriptor ("480w", "2x" or null) }]`, [] when none.
 * - alt: the attribute (possibly ""), or null when absent.
 * - width, height: the attributes as numbers ("300" or "300px"), else null.
 * Images in <noscript> (lazy-load fallbacks) are listed only when their src
 * was not already listed.
 */
import type { Page } from '../sdk/scrape.js';
import { attrTrim, baseUrl, isElement, resolveUrl, type Element } from '../sdk/dom.js';

export interface SrcsetCandidate {
  readonly url: string;
  readonly descriptor: string | null;
}

export interface Image {
  readonly src: string;
  readonly alt: string | null;
  readonly width: number | null;
  readonly height: number | null;
  readonly srcset: SrcsetCandidate[];
}

const LAZY_SRC = ['data-src', 'data-lazy-src', 'data-original', 'data-lazy', 'data-url', 'data-hi-res-src', 'data-full-src', 'data-echo', 'data-actualsrc'];
const LAZY_SRCSET = ['srcset', 'data-srcset', 'data-lazy-srcset'];
/** File names lazy-loaders put in `src` until the real image loads (the whole base name). */
const PLACEHOLDER_FILE = /^(?:spacer|blank|pixel|transparent|trans|clear|empty|1x1|placeholder|lazy|lazyload|loading|loader|grey|gray|dot|px|no-?image)(?:[-_.]?[a-z0-9]{0,12})?\.(?:gif|png|svg|jpe?g|webp)$/i;

/** Parse a srcset attribute (WHATWG candidate grammar, leniently). */
export function parseSrcset(value: string, base: string): SrcsetCandidate[] {
  const out: SrcsetCandidate[] = [];
  const s = value.length > 100_000 ? value.slice(0, 100_000) : value;
  let i = 0;
  while (i < s.length) {
    while (i < s.length && (s[i] === ',' || /\s/.test(s[i]!))) i++;
    if (i >= s.length) break;
    let j = i;
    while (j < s.length && !/\s/.test(s[j]!)) j++;
    let url = s.slice(i, j);
    let descriptor: string | null = null;
    if (url.endsWith(',')) {
      // "a.jpg,b.jpg 2x": a URL ending in commas has no descriptor.
      url = url.replace(/(?<!,),+$/, '');
      i = j;
    } else {
      let k = j;
      while (k < s.length && s[k] !== ',') k++;
      const d = s.slice(j, k).trim();
      descriptor = d === '' ? null : d;
      i = k + 1;
    }
    const abs = url === '' ? undefined : resolveUrl(url, base);
    if (abs !== undefined) out.push({ url: abs, descriptor });
  }
  return out;
}

/** The largest candidate: by width (w), else density (x); no descriptor counts as 1x. */
function largest(cands: readonly SrcsetCandidate[]): SrcsetCandidate | undefined {
  let best: SrcsetCandidate | undefined;
  let bestW = -1;
  let bestX = -1;
  for (const c of cands) {
    const d = c.descriptor ?? '1x';
    const m = /^([\d.]+)\s*([wxh])$/i.exec(d);
    const v = m === null ? 1 : Number(m[1]);
    const unit = m === null ? 'x' : m[2]!.toLowerCase();
    if (unit === 'w') {
      if (v > bestW) {
        bestW = v;
        best = c;
      }
    } else if (bestW < 0 && unit === 'x' && v > bestX) {
      bestX = v;
      best = c;
    }
  }
  return best ?? cands[0];
}

/**
 * Whether a URL is a stand-in rather than an image: empty, a short data:
 * URI, about:blank; for an <img src> (`el` given) also a spacer-like file
 * name or a declared 1x1 size (tracking pixels).
 */
export function isPlaceholder(src: string | undefined, el?: Element): boolean {
  if (src === undefined || src.trim() === '') return true;
  const s = src.trim();
  if (/^data:/i.test(s)) return s.length < 1000;
  if (/^about:blank/i.test(s)) return true;
  if (el === undefined) return false;
  const path = s.length < 4000 ? s.split(/[?#]/)[0]! : '';
  const file = path.slice(path.lastIndexOf('/') + 1);
  if (PLACEHOLDER_FILE.test(file)) return true;
  if (dimension(el.attribs.width) === 1 && dimension(el.attribs.height) === 1) return true;
  return false;
}

/** "300", "300px", " 300 " -> 300; anything else -> null. */
export function dimension(v: string | undefined): number | null {
  if (v === undefined) return null;
  const m = /^(\d+(?:\.\d+)?)\s*(?:px)?$/i.exec(v.trim());
  if (m === null) return null;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : null;
}

function pictureSources(img: Element, base: string): SrcsetCandidate[] {
  const pic = img.parent;
  if (pic === null || !isElement(pic) || pic.name !== 'picture') return [];
  const out: SrcsetCandidate[] = [];
  for (const c of pic.children) {
    if (!isElement(c) || c.name !== 'source') continue;
    for (const a of LAZY_SRCSET) {
      const v = c.attribs[a];
      if (v !== undefined) out.push(...parseSrcset(v, base));
    }
  }
  return out;
}

/** One <img> as an item, or undefined when it has nothing but a placeholder. */
export function imageOf(img: Element, base: string): Image | undefined {
  const srcset: SrcsetCandidate[] = [];
  for (const a of LAZY_SRCSET) {
    const v = img.attribs[a];
    if (v !== undefined) srcset.push(...parseSrcset(v, base));
  }
  srcset.push(...pictureSources(img, base));
  let chosen: string | undefined;
  const raw = img.attribs.src;
  if (!isPlaceholder(raw, img)) chosen = resolveUrl(raw!, base);
  if (chosen === undefined) {
    for (const a of LAZY_SRC) {
      const v = attrTrim(img, a);
      if (v !== undefined && !isPlaceholder(v)) {
        chosen = resolveUrl(v, base);
        if (chosen !== undefined) break;
      }
    }
  }
  if (chosen === undefined) chosen = largest(srcset.filter((c) => !isPlaceholder(c.url)))?.url;
  if (chosen === undefined) return undefined;
  return {
    src: chosen,
    alt: img.attribs.alt ?? null,
    width: dimension(img.attribs.width),
    height: dimension(img.attribs.height),
    srcset,
  };
}

export function extractImages(page: Page): Image[] {
  const base = baseUrl(page.document, page.finalUrl);
  const items: { image: Image; noscript: boolean }[] = [];
  const stack: [Element | Page['document']['children'][number], boolean][] = [];
  const roots = page.document.children;
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i]!, false]);
  while (stack.length > 0) {
    const [n, inNoscript] = stack.pop()!;
    if (!isElement(n)) continue;
    const name = n.name;
    if (name === 'template' || name === 'svg' || name === 'script' || name === 'style') continue;
    if (name === 'img') {
      const image = imageOf(n, base);
      if (image !== undefined) items.push({ image, noscript: inNoscript });
    }
    const ns = inNoscript || name === 'noscript';
    const ch = n.children;
    for (let i = ch.length - 1; i >= 0; i--) stack.push([ch[i]!, ns]);
  }
  const seen = new Set<string>();
  for (const it of items) if (!it.noscript) seen.add(it.image.src);
  const out: Image[] = [];
  for (const it of items) {
    if (it.noscript) {
      if (seen.has(it.image.src)) continue;
      seen.add(it.image.src);
    }
    out.push(it.image);
  }
  return out;
}
