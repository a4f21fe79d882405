/**
 * fields: values picked from a page by CSS or XPath selectors, no model
 * (scrape's `extract_fields`; docs/scrape.md#extract_fields). The request's
 * spec (fields.ts checks it at request time) reaches the extractor as
 * `options.fields` (`{ spec, contentLanguage }`), in this thread or in an
 * extraction worker alike.
 *
 * With `base_selector` the value is a list of records, one per match (at
 * most FIELDS_LIMITS.matches), each field's selector read inside that
 * match; without it, one record read from the whole page. A field:
 * - text: the first match's text, whitespace collapsed;
 * - number: the first number in the first match's text (numbers.ts), read
 *   with the field's `locale`, else the page's (<html lang>, a
 *   Content-Language meta, the Content-Language header);
 * - attribute: the first match's attribute (href, src, action, poster,
 *   cite and data resolved to absolute URLs against the page's base);
 * - html: the first match's outer HTML;
 * - list: every match's text;
 * - nested `fields`: a list of records, one per match.
 * A selector that matches nothing gives null (a missing attribute too). A
 * field without a selector reads the record's own element (the page's
 * <html> at the top). XPath results that are not nodes (`count(...)`,
 * `string(...)`) are read as their text; an attribute or text node as its
 * value.
 */
import { selectAll } from 'css-select';
import render from 'dom-serializer';
import { type AnyNode, type Document, type Element, attrTrim, baseUrl, collapse, firstByTag, isElement, rawText, resolveUrl, walkElements } from '../../sdk/dom.js';
import { defineExtractor, HTML_FILTER, type Page } from '../../sdk/scrape.js';
import { decimalSeparatorOf, parseNumber } from './numbers.js';
import { xpath, type ParsedXPath } from './xpath-lib.js';
import { buildXDocument, type XDocument, type XNode } from './xdom.js';
import { checkFieldsSpec, type FieldSpec, type FieldsSpec, FIELDS_LIMITS, selectorKind } from './spec.js';

export { checkFieldsSpec, FIELDS_LIMITS, type FieldSpec, type FieldsSpec } from './spec.js';
export { parseNumber, decimalSeparatorOf } from './numbers.js';

/** What the scrape hands the extractor. */
export interface FieldsOptions {
  readonly spec: FieldsSpec;
  /** The response's Content-Language header, if any. */
  readonly contentLanguage?: string | undefined;
}

const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'poster', 'cite', 'data']);

/** One match: an element, or a value XPath gave (an attribute's, a text node's, a string or number). */
type Match = { readonly el: Element } | { readonly value: string };

interface Ctx {
  readonly doc: Document;
  readonly page: Page;
  readonly locale: string | undefined;
  xdoc: XDocument | undefined;
  readonly xpaths: Map<string, ParsedXPath>;
}

/** The page's language for numbers: <html lang>, else a Content-Language meta, else the header (first tag of a list). */
export function pageLocale(doc: Document, header: string | undefined): string | undefined {
  const usable = (v: string | undefined): string | undefined => {
    const t = v?.split(',')[0]?.trim();
    return t !== undefined && t !== '' && decimalSeparatorOf(t) !== undefined ? t : undefined;
  };
  const html = firstByTag(doc, 'html');
  const lang = usable(html === undefined ? undefined : attrTrim(html, 'lang') ?? attrTrim(html, 'xml:lang'));
  if (lang !== undefined) return lang;
  let meta: string | undefined;
  walkElements(doc, (el) => {
    if (meta !== undefined) return false;
    if (el.name === 'meta' && el.attribs['http-equiv']?.trim().toLowerCase() === 'content-language') meta = usable(el.attribs.content);
    return el.name !== 'body';
  });
  return meta ?? usable(header);
}

function select(ctx: Ctx, selector: string, explicit: 'css' | 'xpath' | undefined, scope: Element | Document): Match[] {
  const s = selectorKind(selector, explicit);
  if (s.kind === 'css') return selectAll<AnyNode, Element>(s.selector, scope).slice(0, FIELDS_LIMITS.matches).map((el) => ({ el }));
  ctx.xdoc ??= buildXDocument(ctx.doc);
  const node = ctx.xdoc.of(scope);
  if (node === undefined) return [];
  let parsed = ctx.xpaths.get(s.selector);
  if (parsed === undefined) ctx.xpaths.set(s.selector, parsed = xpath.parse(s.selector));
  const result = parsed.evaluate({ node, isHtml: true });
  // A node set, or a string, number or boolean (its string value).
  if (typeof result.toArray !== 'function') return [{ value: result.stringValue() }];
  const raw = result.toArray() as XNode[];
  const out: Match[] = [];
  for (const n of raw.slice(0, FIELDS_LIMITS.matches)) {
    if (n.nodeType === 1) out.push({ el: n.src as Element });
    else if (n.nodeType === 9) {
      const root = firstByTag(ctx.doc, 'html');
      if (root !== undefined) out.push({ el: root });
    } else out.push({ value: n.nodeValue ?? '' });
  }
  return out;
}

const textOf = (m: Match): string => ('el' in m ? collapse(rawText(m.el)) : collapse(m.value));

function fieldValue(ctx: Ctx, f: FieldSpec, scope: Element | Document, kind: 'css' | 'xpath' | undefined): unknown {
  const k = f.selector_type ?? kind;
  let matches: Match[];
  if (f.selector === undefined) {
    const own = isElement(scope as AnyNode) ? (scope as Element) : firstByTag(scope, 'html');
    matches = own === undefined ? [] : [{ el: own }];
  } else matches = select(ctx, f.selector, k, scope);
  if (f.fields !== undefined) {
    const records = matches.filter((m): m is { el: Element } => 'el' in m).map((m) => record(ctx, f.fields!, m.el, k));
    return records.length === 0 ? null : records;
  }
  if (matches.length === 0) return null;
  const first = matches[0]!;
  switch (f.type ?? 'text') {
    case 'text': return textOf(first);
    case 'number': return parseNumber(textOf(first), f.locale ?? ctx.locale);
    case 'list': return matches.map(textOf);
    case 'html': return 'el' in first ? render(first.el, { encodeEntities: 'utf8' }) : first.value;
    case 'attribute': {
      if (!('el' in first)) return first.value;
      const name = f.attribute!.toLowerCase();
      const v = first.el.attribs[name];
      if (v === undefined) return null;
      if (URL_ATTRIBUTES.has(name)) return resolveUrl(v, baseUrl(ctx.doc, ctx.page.finalUrl || ctx.page.url)) ?? v.trim();
      return v.trim();
    }
  }
  return null;
}

function record(ctx: Ctx, fields: readonly FieldSpec[], scope: Element | Document, kind: 'css' | 'xpath' | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    try {
      out[f.name] = fieldValue(ctx, f, scope, kind);
    } catch (e) {
      // Which field failed, as a path of names (the libraries recurse: a page nested thousands deep can exhaust the stack).
      const inner = e instanceof FieldFailure ? e : undefined;
      const why = inner?.why ?? (e instanceof RangeError ? `${e.message} (the page nests too deep for this selector)` : e instanceof Error ? e.message : String(e));
      throw new FieldFailure(inner === undefined ? f.name : `${f.name}.${inner.at}`, why);
    }
  }
  return out;
}

/** A field that could not be read: the extractor fails with its path and reason (the scrape reports it in extractor_errors.fields). */
class FieldFailure extends Error {
  constructor(readonly at: string, readonly why: string) {
    super(`field ${at}: ${why}`);
  }
}

/** The value of `extract_fields` for one parsed page: a record, or a list of records with base_selector. */
export function extractFields(page: Page, options: FieldsOptions): Record<string, unknown> | Array<Record<string, unknown>> {
  const spec = options.spec;
  const ctx: Ctx = { doc: page.document, page, locale: pageLocale(page.document, options.contentLanguage), xdoc: undefined, xpaths: new Map() };
  const kind = spec.selector_type;
  if (spec.base_selector === undefined) return record(ctx, spec.fields, page.document, kind);
  return select(ctx, spec.base_selector, kind, page.document)
    .filter((m): m is { el: Element } => 'el' in m)
    .map((m) => record(ctx, spec.fields, m.el, kind));
}

export const fieldsExtractor = defineExtractor({
  name: 'extractor-fields',
  id: 'fields',
  builtin: true,
  description: 'Values picked by CSS or XPath selectors (extract_fields): one record, or one per base_selector match.',
  filter: HTML_FILTER,
  check: (value: unknown, path: string) => checkFieldsSpec(value, path),
  extract: (page, options) => {
    const o = options.fields as FieldsOptions | undefined;
    // Run without a spec (a caller running every built-in): nothing was asked for.
    return o === undefined ? null : extractFields(page, o);
  },
});
