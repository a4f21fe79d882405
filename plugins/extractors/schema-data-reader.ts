/**
 * schema_data: the page's structured data, as one flat array of items, each
 * tagged with `format`:
 * - `"json-ld"`: every <script type="application/ld+json">; a top-level
 *   array and `@graph` are flattened into their items (a graph item without
 *   its own `@context` inherits the script's). Lenient parsing: HTML comment
 *   and CDATA wrappers, a trailing `;`, raw newlines/tabs inside strings and
 *   trailing commas are repaired. A script that still does not parse (or
 *   nests deeper than 64 levels) is reported as `{ format: "json-ld", error }`
 *   rather than silently skipped, so a caller can see the page has broken markup.
 * - `"microdata"`: top-level itemscope elements, in the WHATWG microdata JSON
 *   shape `{ type: [itemtype URLs], id?, properties: { name: [values] } }`;
 *   values are nested items or strings (meta: content; a/area/link: href;
 *   img/audio/video/source/track/embed/iframe: src; object: data; data/meter:
 *   value; time: datetime, else text; others: text, whitespace collapsed);
 *   URLs are made absolute; itemref is followed (cycles ignored).
 * - `"rdfa"` (RDFa Lite): elements with typeof (not a property of another
 *   item) as `{ type: [IRIs], id?, vocab?, properties: { name: [values] } }`;
 *   types expand against vocab and prefix (plus the usual schema:, og:,
 *   dc:, foaf: ... prefixes); property names stay as written; values: content,
 *   else resource/href/src (absolute), time datetime, else text. Properties
 *   outside any typeof (e.g. Open Graph <meta property>) are left to meta_data.
 */
import type { Page } from '../sdk/scrape.js';
import { baseUrl, collapse, isElement, isTextNode, resolveUrl, walkElements, type AnyNode, type Element } from '../sdk/dom.js';

export type SchemaItem = Record<string, unknown> & { readonly format: 'json-ld' | 'microdata' | 'rdfa' };

const MAX_JSON_DEPTH = 64;
const MAX_ITEM_DEPTH = 32;
/** Bounds the work on hostile pages (props of props of props ...). */
const MAX_PROPERTIES = 20_000;
/** Nodes visited for text values, over the whole page (nested values re-read their subtrees). */
const VALUE_TEXT_NODES = 500_000;
const VALUE_TEXT_CHARS = 20_000;

// ---------------------------------------------------------------- JSON-LD

function scriptText(el: Element): string {
  let s = '';
  for (const c of el.children) if (isTextNode(c)) s += c.data;
  return s;
}

function unwrap(raw: string): string {
  let s = raw.trim();
  s = s.replace(/^<!--/, '').replace(/-->$/, '').trim();
  s = s.replace(/^(?:\/\/\s*)?<!\[CDATA\[/, '').replace(/(?:\/\/\s*)?\]\]>$/, '').trim();
  s = s.replace(/(?<!;);+$/, '').trim();
  return s;
}

/** Escape raw control characters inside strings and drop trailing commas (common hand-written mistakes). */
function repair(s: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  let chunkStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) inString = false;
      else if (c < 32) {
        out += s.slice(chunkStart, i) + (c === 10 ? '\\n' : c === 13 ? '\\r' : c === 9 ? '\\t' : ' ');
        chunkStart = i + 1;
      }
    } else if (c === 34) inString = true;
    else if (c === 44) {
      // A comma followed only by whitespace and a closing bracket.
      let j = i + 1;
      while (j < s.length && /\s/.test(s[j]!)) j++;
      if (s[j] === '}' || s[j] === ']') {
        out += s.slice(chunkStart, i);
        chunkStart = i + 1;
      }
    }
  }
  return out + s.slice(chunkStart);
}

function depthOf(v: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d > max) max = d;
    if (max > MAX_JSON_DEPTH) return max;
    for (const c of Array.isArray(x) ? x : Object.values(x as object)) if (c !== null && typeof c === 'object') stack.push([c, d + 1]);
  }
  return max;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `format` first, then the object's own keys (defined, not assigned: a "__proto__" key stays a key). */
const tag = (format: SchemaItem['format'], obj: Record<string, unknown>): SchemaItem =>
  Object.fromEntries([['format', format], ...Object.entries(obj).filter(([k]) => k !== 'format')]) as SchemaItem;

/** Append to a name -> values record without touching its prototype chain. */
function pushProp(props: Record<string, unknown[]>, name: string, value: unknown): void {
  if (Object.prototype.hasOwnProperty.call(props, name)) props[name]!.push(value);
  else Object.defineProperty(props, name, { value: [value], enumerable: true, writable: true, configurable: true });
}

export function parseJsonLd(raw: string): SchemaItem[] {
  const text = unwrap(raw);
  if (text === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (first) {
    try {
      value = JSON.parse(repair(text));
    } catch {
      return [tag('json-ld', { error: `invalid JSON: ${(first as Error).message}` })];
    }
  }
  if (depthOf(value) > MAX_JSON_DEPTH) return [tag('json-ld', { error: `nested deeper than ${MAX_JSON_DEPTH} levels` })];
  const out: SchemaItem[] = [];
  // Flatten top-level arrays and @graph, in document order.
  // Depth-first with an explicit stack (items pushed in reverse keep document order).
  const stack: [unknown, unknown][] = [[value, undefined]];
  while (stack.length > 0) {
    const [v, context] = stack.pop()!;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], context]);
      continue;
    }
    if (!isObject(v)) continue;
    const ctx = v['@context'] ?? context;
    const graph = v['@graph'];
    if (graph !== undefined) {
      const { '@graph': _g, ...rest } = v;
      const keys = Object.keys(rest).filter((k) => k !== '@context');
      if (keys.length > 0) out.push(tag('json-ld', rest));
      const items = Array.isArray(graph) ? graph : [graph];
      for (let i = items.length - 1; i >= 0; i--) {
        const g: unknown = items[i];
        if (isObject(g) && g['@context'] === undefined && ctx !== undefined) stack.push([{ '@context': ctx, ...g }, ctx]);
        else stack.push([g, ctx]);
      }
      continue;
    }
    out.push(tag('json-ld', v));
  }
  return out;
}

// ---------------------------------------------------------------- shared DOM helpers

/** Collapsed text of a subtree, bounded per value and per page (hostile nesting must not go quadratic). */
function valueText(el: Element, budget: Budget): string {
  const parts: string[] = [];
  let chars = 0;
  const stack: AnyNode[] = [el];
  while (stack.length > 0 && --budget.textNodes > 0 && chars < VALUE_TEXT_CHARS) {
    const n = stack.pop()!;
    if (isTextNode(n)) {
      parts.push(n.data);
      chars += n.data.length;
    } else if (isElement(n)) {
      if (n.name === 'script' || n.name === 'style' || n.name === 'template') continue;
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    } else if ('children' in n) {
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
  return collapse(parts.join(''));
}

const URL_ATTR: Readonly<Record<string, string>> = {
  a: 'href', area: 'href', link: 'href',
  img: 'src', audio: 'src', video: 'src', source: 'src', track: 'src', embed: 'src', iframe: 'src',
  object: 'data',
};

interface Budget {
  props: number;
  textNodes: number;
}

const splitTokens = (v: string | undefined): string[] => (v === undefined ? [] : v.trim().split(/\s+/).filter((t) => t !== ''));

// ---------------------------------------------------------------- Microdata

function microdataValue(el: Element, base: string, budget: Budget): string {
  const name = el.name;
  if (name === 'meta') return el.attribs.content ?? '';
  const ua = URL_ATTR[name];
  if (ua !== undefined) {
    const v = el.attribs[ua];
    return v === undefined ? '' : resolveUrl(v, base) ?? v.trim();
  }
  if (name === 'data' || name === 'meter') return el.attribs.value ?? '';
  if (name === 'time' && el.attribs.datetime !== undefined) return el.attribs.datetime;
  return valueText(el, budget);
}

class Microdata {
  private ids: Map<string, Element> | undefined;

  constructor(
    private readonly root: Page['document'],
    private readonly base: string,
    private readonly budget: Budget,
  ) {}

  private byId(id: string): Element | undefined {
    if (this.ids === undefined) {
      const ids = new Map<string, Element>();
      walkElements(this.root, (el) => {
        const v = el.attribs.id;
        if (v !== undefined && !ids.has(v)) ids.set(v, el);
      });
      this.ids = ids;
    }
    return this.ids.get(id);
  }

  item(el: Element, chain: Set<Element>): Record<string, unknown> {
    const out: Record<string, unknown> = { type: splitTokens(el.attribs.itemtype) };
    const itemid = el.attribs.itemid;
    if (itemid !== undefined) out.id = resolveUrl(itemid, this.base) ?? itemid.trim();
    const properties: Record<string, unknown[]> = {};
    out.properties = properties;
    chain.add(el);
    // Crawl: the item's descendants and its itemref'd elements (those themselves included).
    const seen = new Set<Element>([el]);
    const pending: AnyNode[] = [];
    for (let i = el.children.length - 1; i >= 0; i--) pending.push(el.children[i]!);
    for (const ref of splitTokens(el.attribs.itemref).reverse()) {
      const target = this.byId(ref);
      if (target !== undefined) pending.unshift(target);
    }
    while (pending.length > 0 && this.budget.props > 0) {
      const n = pending.pop()!;
      if (!isElement(n) || seen.has(n)) continue;
      seen.add(n);
      const names = splitTokens(n.attribs.itemprop);
      const scoped = n.attribs.itemscope !== undefined;
      if (names.length > 0) {
        let value: unknown;
        if (scoped) {
          // A cycle (itemref back into an enclosing item) or too deep: left out.
          value = chain.has(n) || chain.size >= MAX_ITEM_DEPTH ? undefined : this.item(n, chain);
        } else value = microdataValue(n, this.base, this.budget);
        if (value !== undefined) {
          for (const name of names) {
            this.budget.props--;
            pushProp(properties, name, value);
          }
        }
      }
      if (scoped) continue;
      for (let i = n.children.length - 1; i >= 0; i--) pending.push(n.children[i]!);
    }
    chain.delete(el);
    return out;
  }

  all(): SchemaItem[] {
    const out: SchemaItem[] = [];
    walkElements(this.root, (el) => {
      if (this.budget.props <= 0) return false;
      if (el.attribs.itemscope !== undefined && el.attribs.itemprop === undefined) out.push(tag('microdata', this.item(el, new Set())));
      return true;
    });
    return out;
  }
}

// ---------------------------------------------------------------- RDFa Lite

const DEFAULT_PREFIXES: Readonly<Record<string, string>> = {
  schema: 'http://schema.org/', og: 'http://ogp.me/ns#', dc: 'http://purl.org/dc/terms/', dcterms: 'http://purl.org/dc/terms/',
  foaf: 'http://xmlns.com/foaf/0.1/', rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#', rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  xsd: 'http://www.w3.org/2001/XMLSchema#', sioc: 'http://rdfs.org/sioc/ns#', skos: 'http://www.w3.org/2004/02/skos/core#',
  article: 'http://ogp.me/ns/article#', fb: 'http://ogp.me/ns/fb#', v: 'http://rdf.data-vocabulary.org/#', cc: 'http://creativecommons.org/ns#',
};

interface RdfaContext {
  readonly vocab: string | undefined;
  readonly prefixes: Readonly<Record<string, string>>;
}

function childContext(el: Element, ctx: RdfaContext): RdfaContext {
  const vocab = el.attribs.vocab;
  const prefix = el.attribs.prefix;
  if (vocab === undefined && prefix === undefined) return ctx;
  let prefixes = ctx.prefixes;
  if (prefix !== undefined) {
    prefixes = { ...prefixes };
    const re = /(?<![\w.-])([\w.-]+):\s+(\S+)/g;
    let m: RegExpExecArray | null;
    const p = prefix.length > 10_000 ? prefix.slice(0, 10_000) : prefix;
    while ((m = re.exec(p)) !== null) (prefixes as Record<string, string>)[m[1]!.toLowerCase()] = m[2]!;
  }
  return { vocab: vocab === undefined ? ctx.vocab : vocab.trim() === '' ? undefined : vocab.trim(), prefixes };
}

function expand(term: string, ctx: RdfaContext): string {
  const colon = term.indexOf(':');
  if (colon > 0) {
    const p = term.slice(0, colon).toLowerCase();
    const ns = ctx.prefixes[p];
    if (ns !== undefined && !term.startsWith('//', colon + 1)) return ns + term.slice(colon + 1);
    return term;
  }
  return ctx.vocab === undefined ? term : ctx.vocab + term;
}

function rdfaValue(el: Element, base: string, budget: Budget): string {
  const content = el.attribs.content;
  if (content !== undefined) return content;
  for (const a of ['resource', 'href', 'src']) {
    const v = el.attribs[a];
    if (v !== undefined) return resolveUrl(v, base) ?? v.trim();
  }
  if (el.name === 'time' && el.attribs.datetime !== undefined) return el.attribs.datetime;
  return valueText(el, budget);
}

class Rdfa {
  constructor(
    private readonly root: Page['document'],
    private readonly base: string,
    private readonly budget: Budget,
  ) {}

  item(el: Element, ctx: RdfaContext, depth: number): Record<string, unknown> {
    const here = childContext(el, ctx);
    const out: Record<string, unknown> = { type: splitTokens(el.attribs.typeof).map((t) => expand(t, here)) };
    const resource = el.attribs.resource ?? el.attribs.about;
    if (resource !== undefined) out.id = resource.startsWith('_:') ? resource : resolveUrl(resource, this.base) ?? resource.trim();
    if (here.vocab !== undefined) out.vocab = here.vocab;
    const properties: Record<string, unknown[]> = {};
    out.properties = properties;
    const pending: [AnyNode, RdfaContext][] = [];
    for (let i = el.children.length - 1; i >= 0; i--) pending.push([el.children[i]!, here]);
    while (pending.length > 0 && this.budget.props > 0) {
      const [n, c] = pending.pop()!;
      if (!isElement(n)) continue;
      const nc = childContext(n, c);
      const names = splitTokens(n.attribs.property);
      const typed = n.attribs.typeof !== undefined;
      if (names.length > 0) {
        const value = typed ? (depth >= MAX_ITEM_DEPTH ? undefined : this.item(n, c, depth + 1)) : rdfaValue(n, this.base, this.budget);
        if (value !== undefined) {
          for (const name of names) {
            this.budget.props--;
            pushProp(properties, name, value);
          }
        }
      }
      if (typed) continue;
      for (let i = n.children.length - 1; i >= 0; i--) pending.push([n.children[i]!, nc]);
    }
    return out;
  }

  all(): SchemaItem[] {
    const out: SchemaItem[] = [];
    const stack: [AnyNode, RdfaContext, boolean][] = [];
    const start: RdfaContext = { vocab: undefined, prefixes: DEFAULT_PREFIXES };
    for (let i = this.root.children.length - 1; i >= 0; i--) stack.push([this.root.children[i]!, start, false]);
    while (stack.length > 0 && this.budget.props > 0) {
      const [n, ctx, inItem] = stack.pop()!;
      if (!isElement(n)) continue;
      const typed = n.attribs.typeof !== undefined;
      // A typed element that is a property of an enclosing item belongs to that item.
      if (typed && !(inItem && n.attribs.property !== undefined)) out.push(tag('rdfa', this.item(n, ctx, 1)));
      const nc = childContext(n, ctx);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i]!, nc, inItem || typed]);
    }
    return out;
  }
}

// ---------------------------------------------------------------- extractor

export function extractSchemaData(page: Page): SchemaItem[] {
  const doc = page.document;
  const base = baseUrl(doc, page.finalUrl);
  const out: SchemaItem[] = [];
  walkElements(doc, (el) => {
    if (el.name !== 'script') return true;
    const type = (el.attribs.type ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'application/ld+json') out.push(...parseJsonLd(scriptText(el)));
    return false;
  });
  const budget: Budget = { props: MAX_PROPERTIES, textNodes: VALUE_TEXT_NODES };
  out.push(...new Microdata(doc, base, budget).all());
  out.push(...new Rdfa(doc, base, budget).all());
  return out;
}
