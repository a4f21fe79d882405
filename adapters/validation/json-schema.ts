/**
 * SchemaCompiler for JSON Schema: Ajv compiles each request schema once at
 * boot into a validator that fills defaults and reports field-level issues in
 * the spec's `{field, message}` shape (`urls[3]`, `custom_headers.x-foo`);
 * fast-json-stringify compiles each response schema into a serializer (as
 * Fastify does), with JSON.stringify as the fallback should a result ever
 * not fit its schema.
 */
import { Ajv, type ErrorObject } from 'ajv';
import * as addFormatsModule from 'ajv-formats';
import type { FieldIssue } from '../../core/errors.js';
import fastJson from 'fast-json-stringify';
import type { Schema, SchemaCompiler, Serializer, Unchecked, Validation, Validator } from '../../core/schema.js';

// ajv-formats is CommonJS with a default export.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats));

/** A JSON pointer's segments (`/custom_headers/x~1y` -> custom_headers, x/y). */
function segments(pointer: string): string[] {
  if (pointer === '') return [];
  const parts = pointer.slice(1).split('/');
  return pointer.includes('~') ? parts.map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')) : parts;
}

const isIndex = (seg: string): boolean => {
  if (seg.length === 0 || seg.length > 15) return false;
  for (let k = 0; k < seg.length; k++) {
    const c = seg.charCodeAt(k);
    if (c < 48 || c > 57) return false;
  }
  return true;
};

/** `/groups/0/disallow/2` -> `groups[0].disallow[2]`. */
function pointerToField(pointer: string): string {
  let out = '';
  for (const seg of segments(pointer)) {
    if (isIndex(seg)) out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

const join = (base: string, prop: string) => (base === '' ? prop : `${base}.${prop}`);

/** A value in an "allowed values" list: a plain word as it is, anything else as JSON. */
const allowed = (v: unknown): string => (typeof v === 'string' && /^[A-Za-z0-9_.:/+-]+$/.test(v) ? v : JSON.stringify(v));
const orList = (xs: readonly string[]): string => (xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} or ${xs[xs.length - 1]}`);

/** The JSON Schema types a value is of (3 is an integer and a number). */
function typesOf(v: unknown): string[] {
  if (v === null) return ['null'];
  if (Array.isArray(v)) return ['array'];
  if (typeof v === 'number') return Number.isInteger(v) ? ['integer', 'number'] : ['number'];
  return [typeof v];
}

/**
 * What a value that is not of an accepted kind must be: JSON types, allowed
 * values, or both; a type only some allowed values are of is not named on
 * its own (a union of string literals is "one of: a, b", not "string").
 */
function kindMessage(allTypes: readonly string[], values: readonly unknown[]): string {
  const covered = new Set(values.flatMap(typesOf));
  const types = allTypes.filter((t) => !covered.has(t));
  if (values.length === 0) return `must be ${orList(types)}`;
  if (types.length === 0) return values.length === 1 ? `must be ${JSON.stringify(values[0])}` : `must be one of: ${values.map(allowed).join(', ')}`;
  return `must be ${orList(types)}, or one of: ${values.map(allowed).join(', ')}`;
}

/** The error is only that the value is not of an accepted JSON type or allowed value. */
const isKind = (e: ErrorObject): boolean => e.keyword === 'type' || e.keyword === 'enum' || e.keyword === 'const';

function kindsOf(e: ErrorObject, types: string[], values: unknown[]): void {
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'type') types.push(...String(p.type).split(','));
  else if (e.keyword === 'enum') values.push(...((p.allowedValues as unknown[]) ?? []));
  else if (e.keyword === 'const') values.push(p.allowedValue);
}

/**
 * A failed anyOf/oneOf reduced to one problem: the value is of no accepted
 * kind, and must be one of these types or values.
 */
interface Collapsed {
  readonly keyword: 'kinds';
  readonly instancePath: string;
  readonly schemaPath: string;
  readonly types: readonly string[];
  readonly values: readonly unknown[];
}
type Item = ErrorObject | Collapsed;

const isKindItem = (i: Item): boolean => i.keyword === 'kinds' || isKind(i as ErrorObject);

/** Messages that depend on the schema alone, by schema path: the same for every item of a long array. */
type MessageCache = Map<string, string>;

function describe(item: Item, cache: MessageCache): FieldIssue {
  const at = pointerToField(item.instancePath);
  if (item.keyword === 'kinds') {
    const c = item as Collapsed;
    return { field: at || 'body', message: kindMessage(c.types, c.values) };
  }
  const e = item as ErrorObject;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { field: join(at, String(p.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { field: join(at, String(p.additionalProperty)), message: 'is not a recognised field' };
    case 'oneOf':
      return { field: at || 'body', message: 'matches more than one of the allowed forms; it must match exactly one' };
    case 'anyOf':
      return { field: at || 'body', message: 'does not match any of the allowed forms' };
    case 'type': case 'enum': case 'const': {
      let message = cache.get(e.schemaPath);
      if (message === undefined) {
        const types: string[] = [];
        const values: unknown[] = [];
        kindsOf(e, types, values);
        message = kindMessage(types, values);
        cache.set(e.schemaPath, message);
      }
      return { field: at || 'body', message };
    }
    default:
      return { field: at || 'body', message: e.message ?? 'is invalid' };
  }
}

const within = (path: string, parent: string) => path === parent || path.startsWith(`${parent}/`);

/**
 * Reduce one failed anyOf/oneOf (`summary`, with its branches' errors) to
 * what a client can act on: when the value is of a kind some branch accepts,
 * that branch's own problems (the branch with the fewest, if several); when
 * it is of no accepted kind, one entry listing the kinds and values allowed
 * (`must be one of: png, jpeg`, `must be string or null`) instead of one
 * entry per branch.
 */
function collapse(summary: ErrorObject, members: readonly Item[]): Item[] {
  if (summary.keyword === 'oneOf' && (summary.params as { passingSchemas?: unknown }).passingSchemas != null) return [summary];
  if (members.length === 0) return [summary];
  const prefix = `${summary.schemaPath}/`;
  const branches = new Map<string, Item[]>();
  for (const m of members) {
    const rest = m.schemaPath.slice(prefix.length);
    const slash = rest.indexOf('/');
    const branch = slash < 0 ? rest : rest.slice(0, slash);
    const list = branches.get(branch);
    if (list === undefined) branches.set(branch, [m]);
    else list.push(m);
  }
  const matched = [...branches.values()].filter((list) => !list.every((m) => isKindItem(m) && m.instancePath === summary.instancePath));
  if (matched.length > 0) return matched.reduce((best, list) => (list.length < best.length ? list : best));
  const types: string[] = [];
  const values: unknown[] = [];
  for (const m of members) {
    if (m.keyword === 'kinds') {
      types.push(...(m as Collapsed).types);
      values.push(...(m as Collapsed).values);
    } else {
      kindsOf(m as ErrorObject, types, values);
    }
  }
  const seen = new Set<string>();
  const distinct = values.filter((v) => {
    const key = JSON.stringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return [{ keyword: 'kinds', instancePath: summary.instancePath, schemaPath: summary.schemaPath, types: [...new Set(types)], values: distinct }];
}

const parentPath = (schemaPath: string) => schemaPath.slice(0, schemaPath.lastIndexOf('/'));

/** A type error next to an enum or const error of the same schema on the same value. */
function typeBesideValues(item: Item, other: Item | undefined): boolean {
  return other !== undefined && item.keyword === 'type' && (other.keyword === 'enum' || other.keyword === 'const')
    && other.instancePath === item.instancePath && parentPath(other.schemaPath) === parentPath(item.schemaPath);
}

/** Problems described one by one; past these, a body's problems are only counted (a million bad values must stay cheap). */
export const MAX_DESCRIBED_ISSUES = 1000;

/**
 * Ajv's errors as the spec's `{field, message}` issues: one per problem, an
 * anyOf/oneOf reduced to one entry (see collapse), each field and message
 * once, at most `limit` of them; `more` counts the problems past those.
 * Ajv reports a union's branch errors just before the union's own error, so
 * one pass with a stack does it; linear in the number of errors, and no
 * string work past the limit.
 */
export function issuesFrom(errors: readonly ErrorObject[], limit = MAX_DESCRIBED_ISSUES): { issues: FieldIssue[]; more: number } {
  const stack: Item[] = [];
  for (const e of errors) {
    if (e.keyword === 'if') continue; // its then/else errors are reported themselves
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') {
      stack.push(e);
      continue;
    }
    const prefix = `${e.schemaPath}/`;
    let from = stack.length;
    while (from > 0 && stack[from - 1]!.schemaPath.startsWith(prefix) && within(stack[from - 1]!.instancePath, e.instancePath)) from--;
    const members = stack.splice(from);
    for (const item of collapse(e, members)) stack.push(item);
  }
  const cache: MessageCache = new Map();
  const seen = new Set<string>();
  const issues: FieldIssue[] = [];
  let n = 0;
  for (; n < stack.length && issues.length < limit; n++) {
    // `{type: "string", enum: [...]}` refuses 1 twice (type, enum): the allowed values say it all.
    if (typeBesideValues(stack[n]!, stack[n + 1]) || typeBesideValues(stack[n]!, stack[n - 1])) continue;
    const issue = describe(stack[n]!, cache);
    const key = `${issue.field}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return { issues, more: stack.length - n };
}

/**
 * The body without the values the errors are about, for the route's own
 * checks: a refused property is removed, a refused array item becomes
 * undefined (the others keep their index); a missing one is simply missing.
 * Undefined when the body as a whole is refused (not an object). The body is
 * not changed: the containers on the way to a refused value are copied.
 */
export function validPart(input: unknown, errors: readonly ErrorObject[]): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const pruned = new Set<string>();
  const pointers: string[] = [];
  for (const e of errors) {
    if (e.keyword === 'required') continue;
    let pointer = e.instancePath;
    if (e.keyword === 'additionalProperties') {
      pointer += `/${String((e.params as { additionalProperty?: unknown }).additionalProperty).replace(/~/g, '~0').replace(/\//g, '~1')}`;
    } else if (pointer === '') {
      return undefined;
    }
    if (!pruned.has(pointer)) {
      pruned.add(pointer);
      pointers.push(pointer);
    }
  }
  const root = { ...(input as Record<string, unknown>) };
  const copies = new Set<unknown>([root]);
  outer: for (const pointer of pointers) {
    // Under a value taken out already: nothing to do (a long array's items after the array itself).
    for (let cut = pointer.lastIndexOf('/'); cut > 0; cut = pointer.lastIndexOf('/', cut - 1)) {
      if (pruned.has(pointer.slice(0, cut)) && pointer.slice(0, cut) !== pointer) continue outer;
    }
    const segs = segments(pointer);
    let node: Record<string, unknown> | unknown[] = root;
    for (let k = 0; k < segs.length - 1; k++) {
      const key = segs[k]!;
      const child: unknown = (node as Record<string, unknown>)[key];
      if (typeof child !== 'object' || child === null) continue outer;
      let copy = child as Record<string, unknown> | unknown[];
      if (!copies.has(child)) {
        copy = Array.isArray(child) ? [...child] : { ...(child as Record<string, unknown>) };
        copies.add(copy);
        (node as Record<string, unknown>)[key] = copy;
      }
      node = copy;
    }
    const last = segs[segs.length - 1]!;
    if (Array.isArray(node)) {
      if (isIndex(last) && Number(last) < node.length) node[Number(last)] = undefined;
    } else {
      delete node[last];
    }
  }
  return root;
}

export class AjvSchemaCompiler implements SchemaCompiler {
  private readonly ajv: Ajv;
  constructor() {
    this.ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: false, messages: true });
    addFormats(this.ajv);
  }

  compile<T>(schema: Schema<T>): Validator<T> {
    const validate = this.ajv.compile(schema.json as object);
    return (input: unknown): Validation<T> => {
      if (validate(input)) return { ok: true, value: input as T };
      const errors = validate.errors ?? [];
      const { issues, more } = issuesFrom(errors);
      // Past MAX_DESCRIBED_ISSUES problems the body is garbage: the schema's answer alone, without the route's checks.
      const valid = more > 0 ? undefined : (validPart(input, errors) as Unchecked<T> | undefined);
      return more > 0 ? { ok: false, issues, more, valid } : { ok: false, issues, valid };
    };
  }

  /** The compiled serializer alone, throwing where the schema cannot be compiled or a value does not fit (tests use it). */
  compileStrictSerializer<T>(schema: Schema<T>): Serializer<T> {
    return fastJson(JSON.parse(JSON.stringify(schema.json)) as Parameters<typeof fastJson>[0]) as Serializer<T>;
  }

  compileSerializer<T>(schema: Schema<T>): Serializer<T> {
    let fast: Serializer<T>;
    try {
      fast = this.compileStrictSerializer(schema);
    } catch {
      return (value) => JSON.stringify(value);
    }
    return (value) => {
      try {
        return fast(value);
      } catch {
        // A result that does not fit its schema (a plugin bug): still answer, exactly.
        return JSON.stringify(value);
      }
    };
  }
}
