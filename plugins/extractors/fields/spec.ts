/**
 * The `extract_fields` spec: its shape, its bounds, and the check that
 * reports every problem in it at once, each with its path
 * (`extract_fields.fields[2].selector`), so a bad selector is a 400 at
 * request time rather than a failure on the page.
 *
 * ```
 * { base_selector?: string, fields: Field[] }
 * Field { name, selector?, type?: 'text' | 'number' | 'attribute' | 'html' | 'list',
 *         attribute?, locale?, selector_type?: 'css' | 'xpath', fields?: Field[] }
 * ```
 * A selector is XPath when `selector_type` says so, or when it starts with
 * `/`, `./`, `../`, `(` or `xpath=` (the prefix is dropped); else CSS.
 */
import { xpath } from './xpath-lib.js';
import { compile } from 'css-select';
import { parseDocument } from 'htmlparser2';
import { buildXDocument } from './xdom.js';

export const FIELDS_LIMITS = {
  /** Fields in one `fields` list. */
  fieldsPerLevel: 50,
  /** Fields in the whole spec, nested ones included. */
  fieldsTotal: 200,
  /** Levels of `fields` (the top one is 1). */
  depth: 3,
  selectorChars: 1000,
  nameChars: 100,
  /** Records one base_selector (or nested field) gives, and items one list gives, at most. */
  matches: 1000,
} as const;

export type FieldType = 'text' | 'number' | 'attribute' | 'html' | 'list';
export const FIELD_TYPES: readonly FieldType[] = ['text', 'number', 'attribute', 'html', 'list'];

export interface FieldSpec {
  readonly name: string;
  readonly selector?: string;
  readonly type?: FieldType;
  readonly attribute?: string;
  readonly locale?: string;
  readonly selector_type?: 'css' | 'xpath';
  readonly fields?: readonly FieldSpec[];
}

export interface FieldsSpec {
  readonly base_selector?: string;
  readonly selector_type?: 'css' | 'xpath';
  readonly fields: readonly FieldSpec[];
}

export interface Issue { readonly field: string; readonly message: string }

/** How an XPath expression starts, and a CSS selector never does: / ./ ../ ( . .. or a function call such as count( or normalize-space(. */
const XPATH_START = /^(?:\/|\.\.?\/|\.\.?$|\(|[A-Za-z][\w-]*\s*\()/;

/** Which language a selector is in, and the selector itself (an `xpath=` prefix dropped). */
export function selectorKind(selector: string, explicit: 'css' | 'xpath' | undefined): { kind: 'css' | 'xpath'; selector: string } {
  if (explicit !== undefined) return { kind: explicit, selector: explicit === 'xpath' && selector.startsWith('xpath=') ? selector.slice(6) : selector };
  if (selector.startsWith('xpath=')) return { kind: 'xpath', selector: selector.slice(6) };
  if (XPATH_START.test(selector)) return { kind: 'xpath', selector };
  return { kind: 'css', selector };
}

let probe: ReturnType<typeof buildXDocument> | undefined;

/** Why a selector cannot be used, or undefined when it can. */
export function selectorProblem(selector: string, explicit: 'css' | 'xpath' | undefined): string | undefined {
  const s = selectorKind(selector, explicit);
  if (s.selector.trim() === '') return 'is empty';
  if (s.kind === 'css') {
    try {
      compile(s.selector);
      return undefined;
    } catch (e) {
      return `is not a valid CSS selector (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  try {
    const parsed = xpath.parse(s.selector);
    const unsupported = unsupportedXPath(parsed);
    if (unsupported !== undefined) return `is not a usable XPath 1.0 expression (${unsupported})`;
    // Evaluated once on an empty page: unknown functions, variables and namespace prefixes fail here, not on the page.
    probe ??= buildXDocument(parseDocument('<html><head></head><body><p class="x">1</p></body></html>'));
    const body = probe.root.documentElement!.lastChild!;
    parsed.evaluate({ node: body, isHtml: true });
    return undefined;
  } catch (e) {
    return `is not a valid XPath 1.0 expression (${e instanceof Error ? e.message : String(e)})`;
  }
}

/** XPath 1.0's core function library (what the xpath package implements). */
const XPATH_FUNCTIONS = new Set([
  'last', 'position', 'count', 'id', 'local-name', 'namespace-uri', 'name', 'string', 'concat', 'starts-with', 'contains',
  'substring-before', 'substring-after', 'substring', 'string-length', 'normalize-space', 'translate', 'boolean', 'not',
  'true', 'false', 'lang', 'number', 'sum', 'floor', 'ceiling', 'round',
]);

/** What a parsed expression uses that no page can give: an unknown function, a variable, a namespace prefix. */
function unsupportedXPath(parsed: unknown): string | undefined {
  const stack: unknown[] = [parsed];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const o = stack.pop();
    if (typeof o !== 'object' || o === null || seen.has(o)) continue;
    seen.add(o);
    const r = o as { functionName?: unknown; variable?: unknown; prefix?: unknown; nodeTest?: unknown };
    if (typeof r.functionName === 'string' && !XPATH_FUNCTIONS.has(r.functionName)) return `unknown function ${r.functionName}()`;
    if (typeof r.variable === 'string') return `variables such as $${r.variable} are not supported`;
    if (typeof r.prefix === 'string' && r.prefix !== '' && 'localName' in r) return `namespace prefixes such as ${r.prefix}: are not supported (HTML elements have none)`;
    for (const k of Object.getOwnPropertyNames(o)) stack.push((o as Record<string, unknown>)[k]);
  }
  return undefined;
}

const FIELD_KEYS = new Set(['name', 'selector', 'type', 'attribute', 'locale', 'selector_type', 'fields']);
const TOP_KEYS = new Set(['base_selector', 'selector_type', 'fields']);
const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const ATTRIBUTE = /^[^\s"'>/=\u0000-\u001f]{1,100}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkSelectorType(v: unknown, path: string, issues: Issue[]): 'css' | 'xpath' | undefined {
  if (v === undefined) return undefined;
  if (v === 'css' || v === 'xpath') return v;
  issues.push({ field: path, message: 'must be "css" or "xpath"' });
  return undefined;
}

function checkSelector(v: unknown, kind: 'css' | 'xpath' | undefined, path: string, issues: Issue[]): void {
  if (typeof v !== 'string') {
    issues.push({ field: path, message: 'must be a string' });
    return;
  }
  if (v.length === 0 || v.length > FIELDS_LIMITS.selectorChars) {
    issues.push({ field: path, message: `must be 1 to ${FIELDS_LIMITS.selectorChars} characters` });
    return;
  }
  const problem = selectorProblem(v, kind);
  if (problem !== undefined) issues.push({ field: path, message: problem });
}

/** Every problem with an `extract_fields` value, each at its path under `path`; [] when it is usable. */
export function checkFieldsSpec(value: unknown, path = 'extract_fields'): Issue[] {
  const issues: Issue[] = [];
  if (!isObject(value)) return [{ field: path, message: 'must be an object with a fields array' }];
  for (const k of Object.keys(value)) if (!TOP_KEYS.has(k)) issues.push({ field: `${path}.${k}`, message: `is not a field of extract_fields (allowed: ${[...TOP_KEYS].join(', ')})` });
  const topKind = checkSelectorType(value.selector_type, `${path}.selector_type`, issues);
  if (value.base_selector !== undefined) checkSelector(value.base_selector, topKind, `${path}.base_selector`, issues);
  let total = 0;
  const level = (fields: unknown, at: string, depth: number, inherited: 'css' | 'xpath' | undefined): void => {
    if (!Array.isArray(fields)) {
      issues.push({ field: at, message: 'must be an array of fields' });
      return;
    }
    if (fields.length === 0 || fields.length > FIELDS_LIMITS.fieldsPerLevel) {
      issues.push({ field: at, message: `must have 1 to ${FIELDS_LIMITS.fieldsPerLevel} fields` });
      if (fields.length === 0) return;
    }
    const seen = new Set<string>();
    fields.slice(0, FIELDS_LIMITS.fieldsPerLevel).forEach((f: unknown, n) => {
      const p = `${at}[${n}]`;
      total++;
      if (total === FIELDS_LIMITS.fieldsTotal + 1) issues.push({ field: p, message: `the spec has more than ${FIELDS_LIMITS.fieldsTotal} fields in all` });
      if (!isObject(f)) {
        issues.push({ field: p, message: 'must be an object with a name and a selector' });
        return;
      }
      for (const k of Object.keys(f)) if (!FIELD_KEYS.has(k)) issues.push({ field: `${p}.${k}`, message: `is not a field option (allowed: ${[...FIELD_KEYS].join(', ')})` });
      if (typeof f.name !== 'string' || f.name.length === 0 || f.name.length > FIELDS_LIMITS.nameChars || !NAME.test(f.name)) {
        issues.push({ field: `${p}.name`, message: `must be 1 to ${FIELDS_LIMITS.nameChars} characters: a letter or _, then letters, digits, _ or -` });
      } else if (seen.has(f.name)) issues.push({ field: `${p}.name`, message: `"${f.name}" is already the name of another field at this level` });
      else seen.add(f.name);
      const kind = checkSelectorType(f.selector_type, `${p}.selector_type`, issues) ?? inherited;
      if (f.selector !== undefined) checkSelector(f.selector, kind, `${p}.selector`, issues);
      const nested = f.fields !== undefined;
      if (f.type !== undefined && !FIELD_TYPES.includes(f.type as FieldType)) issues.push({ field: `${p}.type`, message: `must be one of ${FIELD_TYPES.join(', ')}` });
      if (nested && f.type !== undefined) issues.push({ field: `${p}.type`, message: 'a field with nested fields gives records: it has no type' });
      if (nested && f.selector === undefined) issues.push({ field: `${p}.selector`, message: 'a field with nested fields needs a selector (each match is one record)' });
      if (f.type === 'attribute') {
        if (f.attribute === undefined) issues.push({ field: `${p}.attribute`, message: 'is required with type "attribute"' });
      } else if (f.attribute !== undefined) issues.push({ field: `${p}.attribute`, message: 'only applies to type "attribute"' });
      if (f.attribute !== undefined && (typeof f.attribute !== 'string' || !ATTRIBUTE.test(f.attribute))) issues.push({ field: `${p}.attribute`, message: 'must be an attribute name (1 to 100 characters, no spaces, quotes, > / =)' });
      if (f.locale !== undefined) {
        if (f.type !== 'number') issues.push({ field: `${p}.locale`, message: 'only applies to type "number"' });
        else if (typeof f.locale !== 'string' || f.locale.length > 35 || !validLocale(f.locale)) issues.push({ field: `${p}.locale`, message: 'must be a BCP 47 language tag, such as de-DE or en' });
      }
      if (nested) {
        if (depth >= FIELDS_LIMITS.depth) issues.push({ field: `${p}.fields`, message: `fields nest at most ${FIELDS_LIMITS.depth} levels deep` });
        else level(f.fields, `${p}.fields`, depth + 1, kind);
      }
    });
  };
  if (value.fields === undefined) issues.push({ field: `${path}.fields`, message: 'is required' });
  else level(value.fields, `${path}.fields`, 1, topKind);
  return issues;
}

function validLocale(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}
