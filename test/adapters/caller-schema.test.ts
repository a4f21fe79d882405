/**
 * The caller-schema adapter (extract_json's schemas, Ajv): what it collects
 * for x-quote, that it keeps nothing of a caller's schema in Ajv between
 * requests, and that its own cache of compiled schemas stays bounded.
 */
import { describe, expect, it } from 'vitest';
import { AjvCallerSchemas, COMPILED_KEPT } from '../../adapters/validation/caller-schema.js';

const schemaN = (n: number) => ({ type: 'object', properties: { [`field_${n}`]: { type: 'string', 'x-quote': true } }, required: [`field_${n}`] });

describe('AjvCallerSchemas', () => {
  it('collects x-quote strings wherever the schema marks them (properties, array items, through local $refs), and only strings', () => {
    const c = new AjvCallerSchemas();
    const r = c.compile({
      type: 'object',
      definitions: { person: { type: 'object', properties: { name: { type: 'string', 'x-quote': true }, age: { type: 'integer', 'x-quote': true } } } },
      properties: { title: { type: 'string', 'x-quote': true }, note: { type: 'string' }, tags: { type: 'array', items: { type: 'string', 'x-quote': true } }, author: { $ref: '#/definitions/person' } },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const check = r.validate({ title: 'T', note: 'N', tags: ['a', 'b/c'], author: { name: 'Ann', age: 3 } });
    expect(check.errors).toEqual([]);
    expect(check.quoted).toEqual([
      { path: '/title', value: 'T' }, { path: '/tags/0', value: 'a' }, { path: '/tags/1', value: 'b/c' }, { path: '/author/name', value: 'Ann' },
    ]);
  });

  it('reports an answer\'s problems as JSON pointers, at most 20', () => {
    const c = new AjvCallerSchemas();
    const r = c.compile({ type: 'object', properties: { list: { type: 'array', items: { type: 'integer' } } }, required: ['x'], additionalProperties: false });
    if (!r.ok) throw new Error(r.problems.join());
    const check = r.validate({ list: Array.from({ length: 50 }, () => 'no'), extra: 1 });
    expect(check.errors).toHaveLength(20);
    expect(check.errors[0]).toEqual({ field: '', message: 'must have the property "x"' });
    expect(check.errors).toContainEqual({ field: '/list/0', message: 'must be integer' });
  });

  it('an answer whose JSON has a __proto__ key is judged as data, and pollutes nothing', () => {
    const c = new AjvCallerSchemas();
    const r = c.compile({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false });
    if (!r.ok) throw new Error(r.problems.join());
    const answer = JSON.parse('{"a": "x", "__proto__": {"polluted": true}}') as unknown;
    expect(r.validate(answer).errors).toEqual([{ field: '', message: 'must not have the property "__proto__"' }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps nothing of callers\' schemas in Ajv, and at most COMPILED_KEPT compiled schemas of its own', () => {
    const c = new AjvCallerSchemas();
    const ajv = (c as unknown as { ajv: { _cache: Map<unknown, unknown>; schemas: object; refs: object } }).ajv;
    // The first compile loads the draft-07 meta-schema (a ref of Ajv's own): counted from after it.
    expect(c.compile({ type: 'object' }).ok).toBe(true);
    const before = { cache: ajv._cache.size, schemas: Object.keys(ajv.schemas).length, refs: Object.keys(ajv.refs).length };
    for (let n = 0; n < 500; n++) expect(c.compile(schemaN(n)).ok).toBe(true);
    expect({ cache: ajv._cache.size, schemas: Object.keys(ajv.schemas).length, refs: Object.keys(ajv.refs).length }).toEqual(before);
    expect((c as unknown as { kept: Map<string, unknown> }).kept.size).toBe(COMPILED_KEPT);
    // The same schema again is the same compiled validator (no second compile); an evicted one compiles again and works.
    const again = c.compile(schemaN(499));
    expect(again).toBe(c.compile(schemaN(499)));
    const old = c.compile(schemaN(0));
    expect(old.ok && old.validate({ field_0: 'q' })).toEqual({ errors: [], quoted: [{ path: '/field_0', value: 'q' }] });
  });

  it('a schema that loops only on some answers: the answer is refused with the reason, nothing thrown', () => {
    const c = new AjvCallerSchemas();
    // Looping only when `deep` is present (the probes do not have it).
    const r = c.compile({ type: 'object', properties: { deep: { $ref: '#/definitions/loop' } }, definitions: { loop: { allOf: [{ $ref: '#/definitions/loop' }] } } });
    if (r.ok) {
      expect(r.validate({ deep: 1 }).errors[0]!.message).toMatch(/\$ref chain does not end/);
    } else {
      expect(r.problems[0]).toMatch(/\$ref chain does not end/);
    }
  });
});
