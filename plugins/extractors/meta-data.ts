/**
 * meta_data: the page's metadata.
 *
 * ```
 * {
 *   title:       string | null  <title>, else og:title, else twitter:title
 *   description: string | null  meta description, else og:description, else twitter:description
 *   canonical:   string | null  <link rel=canonical>, absolute
 *   language:    string | null  <html lang>, else meta http-equiv content-language, else og:locale
 *   charset:     string | null  <meta charset>, else the charset of meta http-equiv content-type (lower case)
 *   favicon:     string | null  <link rel=icon / "shortcut icon">, else apple-touch-icon, absolute
 *   open_graph:  { [key]: string | string[] }  og:* with the "og:" prefix dropped (og:image:width -> "image:width"),
 *                plus the other Open Graph namespaces with their prefix kept (article:*, book:*, profile:*, music:*, video:*)
 *   twitter:     { [key]: string | string[] }  twitter:* (name= or property=) with the prefix dropped
 *   meta:        { [key]: string | string[] }  every other <meta name|property|http-equiv|itemprop content>, key lower case
 * }
 * ```
 * A key seen more than once (several og:image) maps to an array, in
 * document order. URL-valued Open Graph and Twitter keys (og:url, og:image,
 * og:image:url, og:image:secure_url, og:video, og:audio, twitter:image,
 * twitter:player, ...) are made absolute. Values are trimmed; meta tags
 * without content are skipped.
 */
import { defineExtractor, type Page } from '../sdk/scrape.js';
import { attrTrim, baseUrl, collapse, isElement, isTextNode, resolveUrl, type Element } from '../sdk/dom.js';
import { HTML_FILTER } from '../sdk/scrape.js';

export type MetaValues = Record<string, string | string[]>;

export interface MetaData {
  title: string | null;
  description: string | null;
  canonical: string | null;
  language: string | null;
  charset: string | null;
  favicon: string | null;
  open_graph: MetaValues;
  twitter: MetaValues;
  meta: MetaValues;
}

const OG_NAMESPACES = /^(?:article|book|profile|music|video|books|business|place|product|restaurant):/;
const URL_KEYS = new Set([
  'url', 'image', 'image:url', 'image:secure_url', 'video', 'video:url', 'video:secure_url', 'audio', 'audio:url', 'audio:secure_url',
  'player', 'image:src', 'player:stream',
]);

function add(target: MetaValues, key: string, value: string): void {
  // Own properties only: a page's meta name="__proto__" must stay a plain key.
  const prev = Object.prototype.hasOwnProperty.call(target, key) ? target[key] : undefined;
  if (prev === undefined) Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else if (Array.isArray(prev)) prev.push(value);
  else target[key] = [prev, value];
}

const first = (values: MetaValues, key: string): string | null => {
  if (!Object.prototype.hasOwnProperty.call(values, key)) return null;
  const v = values[key]!;
  return Array.isArray(v) ? v[0] ?? null : v;
};

function ownText(el: Element): string {
  let s = '';
  for (const c of el.children) if (isTextNode(c)) s += c.data;
  return collapse(s);
}

export function extractMetaData(page: Page): MetaData {
  const doc = page.document;
  const base = baseUrl(doc, page.finalUrl);
  const out: MetaData = {
    title: null, description: null, canonical: null, language: null, charset: null, favicon: null,
    open_graph: {}, twitter: {}, meta: {},
  };
  let touchIcon: string | null = null;
  let httpLanguage: string | null = null;
  let httpCharset: string | null = null;
  const stack = [...doc.children].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (!isElement(n)) continue;
    const name = n.name;
    if (name === 'svg' || name === 'template' || name === 'script' || name === 'style') continue;
    if (name === 'html' && out.language === null) out.language = attrTrim(n, 'lang') ?? attrTrim(n, 'xml:lang') ?? null;
    else if (name === 'title' && out.title === null) {
      const t = ownText(n);
      if (t !== '') out.title = t;
    } else if (name === 'meta') readMeta(n, out, base, (lang) => (httpLanguage ??= lang), (cs) => (httpCharset ??= cs));
    else if (name === 'link') {
      const rel = (n.attribs.rel ?? '').toLowerCase().split(/\s+/);
      const href = attrTrim(n, 'href');
      if (href !== undefined) {
        if (rel.includes('canonical') && out.canonical === null) out.canonical = resolveUrl(href, base) ?? null;
        if (rel.includes('icon') && out.favicon === null) out.favicon = resolveUrl(href, base) ?? null;
        if ((rel.includes('apple-touch-icon') || rel.includes('apple-touch-icon-precomposed')) && touchIcon === null) touchIcon = resolveUrl(href, base) ?? null;
      }
    }
    const ch = n.children;
    for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i]!);
  }
  out.title ??= first(out.open_graph, 'title') ?? first(out.twitter, 'title');
  out.description ??= first(out.meta, 'description') ?? first(out.open_graph, 'description') ?? first(out.twitter, 'description');
  out.language ??= httpLanguage ?? first(out.open_graph, 'locale');
  out.charset ??= httpCharset;
  out.favicon ??= touchIcon;
  return out;
}

function readMeta(el: Element, out: MetaData, base: string, onLanguage: (l: string) => void, onCharset: (c: string) => void): void {
  const charset = attrTrim(el, 'charset');
  if (charset !== undefined && out.charset === null) out.charset = charset.toLowerCase();
  const content = el.attribs.content;
  if (content === undefined) return;
  const value = content.trim();
  const httpEquiv = attrTrim(el, 'http-equiv')?.toLowerCase();
  if (httpEquiv !== undefined) {
    if (httpEquiv === 'content-type') {
      const m = /charset\s*=\s*["']?([\w.:-]+)/i.exec(value);
      if (m !== null) onCharset(m[1]!.toLowerCase());
    } else if (httpEquiv === 'content-language' && value !== '') onLanguage(value.split(',')[0]!.trim());
    add(out.meta, httpEquiv, value);
    return;
  }
  // Open Graph uses property=, Twitter name=; many sites mix them up, so read both.
  const keys = new Set<string>();
  for (const a of ['property', 'name']) {
    const k = attrTrim(el, a);
    if (k !== undefined) keys.add(k.toLowerCase());
  }
  if (keys.size === 0) {
    const ip = attrTrim(el, 'itemprop');
    if (ip !== undefined) add(out.meta, ip.toLowerCase(), value);
    return;
  }
  for (const key of keys) {
    if (key.startsWith('og:')) {
      const k = key.slice(3);
      add(out.open_graph, k, URL_KEYS.has(k) ? resolveUrl(value, base) ?? value : value);
    } else if (OG_NAMESPACES.test(key)) add(out.open_graph, key, value);
    else if (key.startsWith('twitter:')) {
      const k = key.slice(8);
      add(out.twitter, k, URL_KEYS.has(k) ? resolveUrl(value, base) ?? value : value);
    } else add(out.meta, key, value);
  }
}

export const metaDataExtractor = defineExtractor({
  name: 'extractor-meta-data',
  id: 'meta_data',
  builtin: true,
  description: 'Title, description, canonical URL, language, charset, favicon, Open Graph, Twitter Card and other meta tags.',
  filter: HTML_FILTER,
  extract: (page): MetaData => extractMetaData(page),
});
