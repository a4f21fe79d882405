/**
 * fast-check arbitraries from the JSON Schemas Scour publishes (the request
 * bodies of GET /v1/openapi.json, made from the TypeBox schemas the
 * validators are compiled from): `validBody` draws bodies the schema
 * accepts, `brokenBody` bodies it must refuse (or that stress it: limits,
 * unicode, nesting). Only the subset Scour's schemas use is understood:
 * type, const, enum, anyOf, properties/required/additionalProperties,
 * patternProperties, maxProperties, min/maxLength, pattern, format
 * date-time, minimum/maximum, min/maxItems, uniqueItems. A keyword outside
 * it fails loudly (`unsupported`), so a new schema feature cannot silently
 * go unfuzzed.
 *
 * Why not a library: json-schema-faker draws with its own random source
 * (no fast-check seed, no shrinking), and json-schema-fast-check is a 0.0.x
 * package written against fast-check 3; the subset here is about a hundred
 * lines and knows Scour's own hostile cases.
 */
import fc from 'fast-check';

export type Schema = Record<string, unknown>;

/**
 * Where generated values come from for paths the schema cannot describe
 * well (URLs, ids, country codes, CSS colors): `/a/b/*` = items of b (or
 * values of a map). A function gets the schema's own arbitrary, to mix in.
 */
export type Override = fc.Arbitrary<unknown> | ((fromSchema: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>);
export type Overrides = Readonly<Record<string, Override>>;

/** Mostly the domain's values, now and then whatever the schema allows. */
export const mostly = (domain: fc.Arbitrary<unknown>) => (fromSchema: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 4, arbitrary: domain }, { weight: 1, arbitrary: fromSchema });

const KNOWN = new Set([
  'type', 'const', 'enum', 'anyOf', 'properties', 'required', 'additionalProperties', 'patternProperties', 'maxProperties',
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'items', 'minItems', 'maxItems', 'uniqueItems',
  'description', 'default', 'title', 'examples',
  // An annotation for the typed client's generator (scripts/gen-client-types.ts): no bearing on what is valid.
  'tsType',
  // if/then requirements (a scrape action's fields by its type): not drawn, so a body may miss one and be a 400, as one a route's check refuses.
  'allOf',
]);

function unsupported(schema: Schema, path: string): void {
  for (const k of Object.keys(schema)) if (!KNOWN.has(k)) throw new Error(`schema-arbitrary: keyword ${k} at ${path || '/'} is not supported`);
}

/** Strings a hostile client sends: control characters, lone surrogates, bidi overrides, emoji, combining marks, NUL. */
export const NASTY_STRINGS: readonly string[] = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83d', '\ud83dx', '\u202eevil\u202c', '\u200f\u05e9\u05dc\u05d5\u05dd', '\ufeff',
  '😀', '👩‍👩‍👧‍👦', 'e\u0301\u0301\u0301', 'Z̷̢̛̖̫̠͚̈́͑̋a̸l̵g̷o̷', '\r\n', '\u2028\u2029', '\\', '"', "'", '<script>alert(1)</script>',
  '${7*7}', '{{7*7}}', '%00', '%', '%zz', '../../../../etc/passwd', 'NaN', 'Infinity', '-Infinity', '-0', '0x10', '1e309',
  'null', 'undefined', 'true', '[]', '{}', '__proto__', 'constructor', 'ＡＢＣ', 'İ', 'ß', '\u00a0', '\t', '\u000b',
  'ftp://127.0.0.1/', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,x', 'http://169.254.169.254/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/', 'http://0/', 'http://user:pw@127.0.0.1/', 'http://127.0.0.1:0/', 'gopher://127.0.0.1:6379/_INFO',
];

/** Numbers at and past the edges: negative zero, fractions, the safe-integer bounds, powers of two, huge. */
export const EDGE_NUMBERS: readonly number[] = [
  0, -0, 1, -1, 0.5, -0.5, 1e-7, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, 1.7976931348623157e308, 5e-324,
];

const nastyString = fc.constantFrom(...NASTY_STRINGS);

/** Any string, most short, drawn from every unicode range (lone surrogates included) or from the nasty list. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 3, arbitrary: nastyString },
);

/** Small JSON values of every kind (for wrong types and unknown fields). */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null), fc.boolean(), fc.constantFrom(...EDGE_NUMBERS), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }),
  anyString, fc.array(fc.oneof(fc.integer(), anyString), { maxLength: 3 }), fc.dictionary(anyString, fc.oneof(fc.integer(), anyString), { maxKeys: 3 }),
);

const typeOf = (s: Schema): string | undefined => (typeof s.type === 'string' ? s.type : undefined);

function stringArb(s: Schema, path: string, atLimits: boolean): fc.Arbitrary<string> {
  const min = (s.minLength as number | undefined) ?? 0;
  const max = (s.maxLength as number | undefined) ?? 64;
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length >= min && x.length <= max);
  if (s.format === 'date-time') {
    return fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  const cap = Math.min(max, Math.max(min, 24));
  const plain = fc.string({ unit: 'grapheme', minLength: min, maxLength: cap });
  const binary = fc.string({ unit: 'binary', minLength: min, maxLength: cap });
  const nasty = nastyString.filter((x) => x.length >= min && x.length <= max);
  const arbs: fc.WeightedArbitrary<string>[] = [{ weight: 4, arbitrary: plain }, { weight: 2, arbitrary: binary }, { weight: 2, arbitrary: nasty }];
  // Exactly at maxLength: one character repeated (cheap to build, tests the bound). Big limits only now and then.
  if (atLimits && max <= 300_000) arbs.push({ weight: max > 10_000 ? 1 : 2, arbitrary: fc.constantFrom('a', 'é', '😀').map((c) => c.repeat(Math.max(min, Math.floor(max / c.length)))) });
  if (atLimits && min > 0) arbs.push({ weight: 1, arbitrary: fc.constant('a'.repeat(min)) });
  void path;
  return fc.oneof(...arbs);
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum as number | undefined;
  const max = s.maximum as number | undefined;
  const inRange = integer
    ? fc.integer({ min: min ?? -(2 ** 31), max: max ?? 2 ** 31 - 1 })
    : fc.double({ min: min ?? -1e9, max: max ?? 1e9, noNaN: true, noDefaultInfinity: true });
  const edges = [min, max].filter((x): x is number => x !== undefined);
  return edges.length === 0 ? inRange : fc.oneof({ weight: 3, arbitrary: inRange }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
}

export interface ValidOptions {
  readonly overrides?: Overrides;
  /** Also draw values exactly at maxLength / maxItems (off for bodies that would do real work per item). */
  readonly atLimits?: boolean;
}

/** Bodies the schema accepts (a route's own checks may still refuse them: that is a 400 too). */
export function validBody(schema: Schema, options: ValidOptions = {}): fc.Arbitrary<unknown> {
  return validAt(schema, '', options.overrides ?? {}, options.atLimits ?? true);
}

function validAt(s: Schema, path: string, overrides: Overrides, atLimits: boolean): fc.Arbitrary<unknown> {
  const o = overrides[path];
  if (o !== undefined) {
    if (typeof o !== 'function') return o;
    const rest = { ...overrides };
    delete (rest as Record<string, Override>)[path];
    return o(validAt(s, path, rest, atLimits));
  }
  unsupported(s, path);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (Array.isArray(s.anyOf)) return fc.oneof(...(s.anyOf as Schema[]).map((x) => validAt(x, path, overrides, atLimits)));
  switch (typeOf(s)) {
    case 'string': return stringArb(s, path, atLimits);
    case 'integer': return numberArb(s, true);
    case 'number': return numberArb(s, false);
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': {
      const items = validAt((s.items as Schema | undefined) ?? {}, `${path}/*`, overrides, atLimits);
      const min = (s.minItems as number | undefined) ?? 0;
      const max = (s.maxItems as number | undefined) ?? 8;
      const cap = Math.min(max, Math.max(min, 4));
      const mk = (minLength: number, maxLength: number) => (s.uniqueItems === true
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength }));
      const normal = mk(min, cap);
      return atLimits && max > cap && max <= 1000 ? fc.oneof({ weight: 5, arbitrary: normal }, { weight: 1, arbitrary: mk(max, max) }) : normal;
    }
    case 'object': {
      const props = (s.properties as Record<string, Schema> | undefined) ?? {};
      const required = new Set((s.required as string[] | undefined) ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = validAt(v, `${path}/${k}`, overrides, atLimits);
      let out: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys: [...required].filter((k) => k in props) });
      const pattern = s.patternProperties as Record<string, Schema> | undefined;
      const maxProps = (s.maxProperties as number | undefined) ?? 4;
      if (pattern !== undefined) {
        const [, valueSchema] = Object.entries(pattern)[0]!;
        const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 16 }), validAt(valueSchema, `${path}/*`, overrides, atLimits) as fc.Arbitrary<unknown>, { maxKeys: Math.min(maxProps, 4) });
        out = fc.tuple(out, extra).map(([a, b]) => ({ ...b, ...a }));
      } else if (s.additionalProperties === true || (s.additionalProperties === undefined && Object.keys(props).length === 0)) {
        const room = Math.max(0, Math.min(maxProps - Object.keys(props).length, 3));
        const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !(k in props) && k !== '__proto__'), anyJson, { maxKeys: room });
        out = fc.tuple(out, extra).map(([a, b]) => ({ ...b, ...a }));
      }
      return out;
    }
    default:
      // No type: anything (a document of the index admin API, say).
      return anyJson;
  }
}

// ---------------------------------------------------------------------------
// Broken bodies: a valid body with one or more defects, each a thing a
// hostile or buggy client sends.

/** A value that is not of the schema's type at all. */
function wrongType(s: Schema): fc.Arbitrary<unknown> {
  const t = typeOf(s) ?? (Array.isArray(s.anyOf) ? 'union' : undefined);
  const candidates: fc.Arbitrary<unknown>[] = [
    fc.constant(null), fc.boolean(), fc.constantFrom(...EDGE_NUMBERS), anyString, fc.constant([]), fc.constant({}),
    fc.array(anyJson, { maxLength: 3 }), fc.dictionary(anyString, anyJson, { maxKeys: 3 }),
  ];
  return fc.oneof(...candidates).filter((v) => {
    if (t === 'string') return typeof v !== 'string';
    if (t === 'integer' || t === 'number') return typeof v !== 'number';
    if (t === 'boolean') return typeof v !== 'boolean';
    if (t === 'array') return !Array.isArray(v);
    if (t === 'object') return v === null || typeof v !== 'object' || Array.isArray(v);
    return true;
  });
}

/** Values just outside the schema's bounds (or NaN-like and numeric-looking strings where a number goes). */
function pastLimits(s: Schema): fc.Arbitrary<unknown> | undefined {
  const t = typeOf(s);
  if (t === 'integer' || t === 'number') {
    const out: unknown[] = ['NaN', 'Infinity', '-0', '1e3', '0x10', ' 1', '1 ', '+1', '١', -0, 1.5, 1e21, -1e21, 2 ** 53 + 2];
    if (typeof s.minimum === 'number') out.push(s.minimum - 1, s.minimum - 0.5, s.minimum - 1e-9);
    if (typeof s.maximum === 'number') out.push(s.maximum + 1, s.maximum + 0.5, s.maximum * 10, s.maximum + 1e-9);
    return fc.constantFrom(...out);
  }
  if (t === 'string') {
    const out: fc.Arbitrary<unknown>[] = [];
    if (typeof s.maxLength === 'number' && s.maxLength < 1_000_000) {
      const m = s.maxLength;
      out.push(fc.constantFrom('a', 'é', '😀', '\u0000').map((c) => c.repeat(Math.ceil((m + 1) / c.length))));
    }
    if (typeof s.minLength === 'number' && s.minLength > 0) out.push(fc.constant('a'.repeat(s.minLength - 1)));
    if (typeof s.pattern === 'string' || s.format === 'date-time') out.push(anyString);
    return out.length === 0 ? undefined : fc.oneof(...out);
  }
  if (t === 'array' && typeof s.maxItems === 'number' && s.maxItems <= 1000) {
    const item = s.items as Schema | undefined;
    // One item past the limit, of a cheap valid-looking kind.
    const filler = item && typeOf(item) === 'string' ? 'x' : item && typeOf(item) === 'integer' ? 1 : {};
    return fc.constant(Array.from({ length: s.maxItems + 1 }, () => filler));
  }
  if (t === 'array' && s.uniqueItems === true) return fc.constant(['same', 'same']);
  if (t === 'object' && typeof s.maxProperties === 'number') {
    return fc.constant(Object.fromEntries(Array.from({ length: s.maxProperties + 1 }, (_, i) => [`k${i}`, 'v'])));
  }
  return undefined;
}

/**
 * Deeply nested arrays or objects (parsers and validators that recurse
 * overflow the stack). Kept as a marker, not as nested objects: the
 * encoders write its text or bytes directly (harness.encode), so the test's
 * own JSON.stringify and walkers never recurse through it.
 */
export class Deep {
  constructor(readonly depth: number, readonly arrays: boolean) {}
  /** The JSON text: [[[...1...]]] or {"a":{"a":...1...}}. */
  json(): string {
    return this.arrays ? `${'['.repeat(this.depth)}1${']'.repeat(this.depth)}` : `${'{"a":'.repeat(this.depth)}1${'}'.repeat(this.depth)}`;
  }
  /** The msgpack bytes: fixarray(1) or fixmap(1) with key "a", repeated, then 1. */
  msgpack(): Uint8Array {
    const unit = this.arrays ? [0x91] : [0x81, 0xa1, 0x61];
    const out = new Uint8Array(unit.length * this.depth + 1);
    for (let i = 0; i < this.depth; i++) out.set(unit, i * unit.length);
    out[out.length - 1] = 0x01;
    return out;
  }
}

export const deepValue: fc.Arbitrary<Deep> = fc.tuple(fc.constantFrom(100, 2_000, 20_000, 200_000), fc.boolean()).map(([depth, arrays]) => new Deep(depth, arrays));

/** Paths (as key lists) of every property, item and value in a generated body. */
function paths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  // Deep values (deepValue) are left whole: only their first levels are places to put a defect.
  if (value === null || typeof value !== 'object' || value instanceof Deep || prefix.length >= 8) return out;
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries.slice(0, 20)) {
    const p = [...prefix, k];
    out.push(p);
    paths(v, p, out);
  }
  return out;
}

function schemaAt(root: Schema, path: readonly (string | number)[]): Schema | undefined {
  let s: Schema | undefined = root;
  for (const k of path) {
    if (s === undefined) return undefined;
    if (Array.isArray(s.anyOf)) s = (s.anyOf as Schema[]).find((x) => typeOf(x) === (typeof k === 'number' ? 'array' : 'object')) ?? (s.anyOf as Schema[])[0];
    if (s === undefined) return undefined;
    if (typeof k === 'number') s = s.items as Schema | undefined;
    else s = (s.properties as Record<string, Schema> | undefined)?.[k] ?? (s.patternProperties ? Object.values(s.patternProperties as Record<string, Schema>)[0] : undefined);
  }
  return s;
}

function setAt(root: unknown, path: readonly (string | number)[], value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const [k, ...rest] = path;
  if (root === null || typeof root !== 'object') return root;
  if (Array.isArray(root) && typeof k !== 'number') return root; // a named key on an array: no such place
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  if (rest.length === 0) {
    if (remove) {
      if (Array.isArray(copy)) copy.splice(k as number, 1);
      else delete copy[k as string];
    } else {
      // defineProperty: a key named __proto__ becomes an own property, as JSON.parse would make it.
      Object.defineProperty(copy, k as string, { value, enumerable: true, writable: true, configurable: true });
    }
    return copy;
  }
  copy[k as string] = setAt(copy[k as string], rest, value, remove);
  return copy;
}

type Defect = (body: unknown, schema: Schema) => fc.Arbitrary<unknown>;

const pick = <T>(xs: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);

const DEFECTS: Record<string, Defect> = {
  /** A property, item or value replaced by a value of another type. */
  wrongType: (body, schema) => {
    const ps = paths(body);
    if (ps.length === 0) return wrongType(schema);
    return pick(ps).chain((p) => wrongType(schemaAt(schema, p) ?? {}).map((v) => setAt(body, p, v)));
  },
  /** A value just past its bounds, or a numeric-looking string where a number goes. */
  pastLimits: (body, schema) => {
    const props = Object.keys((schema.properties as object | undefined) ?? {});
    const withLimits = props.filter((k) => pastLimits((schema.properties as Record<string, Schema>)[k]!) !== undefined);
    const ps = paths(body).filter((p) => { const s = schemaAt(schema, p); return s !== undefined && pastLimits(s) !== undefined; });
    const choices: (string | number)[][] = [...ps, ...withLimits.map((k) => [k])];
    if (choices.length === 0) return fc.constant(body);
    return pick(choices).chain((p) => pastLimits(schemaAt(schema, p)!)!.map((v) => setAt(body, p, v)));
  },
  /** A required property left out. */
  missingRequired: (body, schema) => {
    const req = (schema.required as string[] | undefined) ?? [];
    if (req.length === 0 || body === null || typeof body !== 'object') return fc.constant({});
    return pick(req).map((k) => setAt(body, [k], undefined, true));
  },
  /** A field the schema does not know (typos, prototype keys, unicode names). */
  extraField: (body) => fc.tuple(fc.oneof(anyString, pick(['__proto__', 'constructor', 'prototype', 'toString', 'max_result', 'URL', 'url ', 'Query'])), anyJson)
    .map(([k, v]) => (body !== null && typeof body === 'object' ? setAt(body, [k], v) : { [k]: v })),
  /** A hostile string everywhere a string was. */
  nastyStrings: (body) => fc.tuple(nastyString, fc.nat()).map(([nasty, n]) => {
    let i = 0;
    const walk = (v: unknown, depth: number): unknown => {
      if (typeof v === 'string') return (i++ + n) % 2 === 0 ? nasty : v + nasty;
      if (depth >= 8 || v instanceof Deep) return v;
      if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
      if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, depth + 1)]));
      return v;
    };
    return walk(body, 0);
  }),
  /** Deep nesting in a property or as the whole body. */
  deep: (body) => fc.tuple(deepValue, fc.boolean()).chain(([deep, whole]) => {
    if (whole || body === null || typeof body !== 'object') return fc.constant(deep);
    const ps = paths(body);
    return ps.length === 0 ? fc.constant(setAt(body, ['nested'], deep)) : pick(ps).map((p) => setAt(body, p, deep));
  }),
  /** A huge string in a property (under and over the body limit is the transport's business). */
  huge: (body, schema) => fc.tuple(fc.constantFrom(70_000, 300_000, 900_000), fc.constantFrom('a', '\u00e9', '\ud83d\ude00', '\u0000', '"')).chain(([n, c]) => {
    const s = c.repeat(Math.ceil(n / c.length));
    const props = Object.keys((schema.properties as object | undefined) ?? {});
    return props.length === 0 ? fc.constant({ x: s }) : pick(props).map((k) => setAt(body, [k], s));
  }),
  /** The body is not an object. */
  notObject: () => fc.oneof(fc.constant(null), fc.constant([]), anyString, fc.constantFrom(...EDGE_NUMBERS), fc.boolean(), fc.array(anyJson, { maxLength: 3 })),
};

export const DEFECT_NAMES = Object.keys(DEFECTS);

/** A valid body with one to three defects applied in turn; the names say which (for failure reports). */
export function brokenBody(schema: Schema, options: ValidOptions = {}): fc.Arbitrary<{ body: unknown; defects: string[] }> {
  const base = validBody(schema, { ...options, atLimits: false });
  return fc.tuple(base, fc.array(pick(DEFECT_NAMES), { minLength: 1, maxLength: 3 })).chain(([body, names]) => {
    let arb: fc.Arbitrary<unknown> = fc.constant(body);
    for (const n of names) arb = arb.chain((b) => DEFECTS[n]!(b, schema));
    return arb.map((b) => ({ body: b, defects: names }));
  });
}
