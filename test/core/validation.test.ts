/**
 * Request validation in process (issue 17): how Ajv's errors become one
 * `{field, message}` per problem (unions and enums collapsed), what of a
 * refused body the route's own checks see, how the validate stage merges,
 * orders, de-duplicates and bounds the schema's problems and the route's,
 * and which code a request's problems answer with.
 */
import { Effect, Exit } from 'effect';
import { describe, expect, it } from 'vitest';
import { AjvSchemaCompiler, MAX_DESCRIBED_ISSUES } from '../../adapters/validation/json-schema.js';
import type { RequestContext } from '../../core/context.js';
import { checkTargetUrl, targetIssue } from '../../core/egress.js';
import { type ApiFailure, listedIssues, MAX_LISTED_ISSUES } from '../../core/errors.js';
import type { CheckIssue, SemanticCheck, Unchecked, Validation } from '../../core/schema.js';
import { mergeIssues, validateStage, validationFailure } from '../../core/stages/validate.js';
import { schema, StrictObject, Type } from '../../plugins/sdk/index.js';

const compiler = new AjvSchemaCompiler();

const Request = StrictObject({
  name: Type.String({ minLength: 1 }),
  kind: Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Literal('c')]),
  mode: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['fast', 'slow'] })),
  limit: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  size: Type.Optional(Type.Union([Type.Integer(), Type.Literal('auto')])),
  shape: Type.Optional(Type.Union([
    StrictObject({ circle: Type.Number({ minimum: 0 }) }),
    StrictObject({ square: Type.Number({ minimum: 0 }), unit: Type.Optional(Type.String()) }),
  ])),
  tags: Type.Optional(Type.Array(Type.Union([Type.Literal('x'), Type.Literal('y')]), { maxItems: 5 })),
  options: Type.Optional(StrictObject({ depth: Type.Integer({ minimum: 0 }), note: Type.Optional(Type.String()) })),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
});
type Req = typeof Request.static;
const validate = compiler.compile(schema(Request));

const failed = (body: unknown): Extract<Validation<Req>, { ok: false }> => {
  const v = validate(structuredClone(body));
  if (v.ok) throw new Error('expected the body to be refused');
  return v;
};

describe('the JSON Schema adapter', () => {
  it('answers a value outside a union of literals or an enum with one entry listing the allowed values', () => {
    expect(failed({ name: 'n', kind: 'z', mode: 'warp' }).issues).toEqual([
      { field: 'kind', message: 'must be one of: a, b, c' },
      { field: 'mode', message: 'must be one of: fast, slow' },
    ]);
    // A wrong type gets the same single entry, not "must be string" beside it.
    expect(failed({ name: 'n', kind: 3, mode: 4 }).issues).toEqual([
      { field: 'kind', message: 'must be one of: a, b, c' },
      { field: 'mode', message: 'must be one of: fast, slow' },
    ]);
  });

  it('reduces any other union to one clear entry: the branch the value is of, or the kinds it may be', () => {
    // 0 is an integer: the integer branch's own problem, not "must be null" beside it.
    expect(failed({ name: 'n', kind: 'a', limit: 0 }).issues).toEqual([{ field: 'limit', message: 'must be >= 1' }]);
    expect(failed({ name: 'n', kind: 'a', limit: 'ten' }).issues).toEqual([{ field: 'limit', message: 'must be integer or null' }]);
    expect(failed({ name: 'n', kind: 'a', size: 'big' }).issues).toEqual([{ field: 'size', message: 'must be integer, or one of: auto' }]);
    // An object that matches no object branch: the problems of the closest branch.
    expect(failed({ name: 'n', kind: 'a', shape: { circle: -1 } }).issues).toEqual([{ field: 'shape.circle', message: 'must be >= 0' }]);
    expect(failed({ name: 'n', kind: 'a', shape: 'round' }).issues).toEqual([{ field: 'shape', message: 'must be object' }]);
    // Union items of an array: one entry per bad item.
    expect(failed({ name: 'n', kind: 'a', tags: ['x', 'q', 'y', 7] }).issues).toEqual([
      { field: 'tags[1]', message: 'must be one of: x, y' },
      { field: 'tags[3]', message: 'must be one of: x, y' },
    ]);
  });

  it('names every problem of a hostile body once: missing, unknown, wrong types, nested', () => {
    const v = failed({ kind: null, extra: 1, 'a/b': 2, options: { depth: -1, note: 5, more: true }, headers: { a: 1, b: 'ok' } });
    expect(v.issues).toEqual(expect.arrayContaining([
      { field: 'name', message: 'is required' },
      { field: 'extra', message: 'is not a recognised field' },
      { field: 'a/b', message: 'is not a recognised field' },
      { field: 'kind', message: 'must be one of: a, b, c' },
      { field: 'options.more', message: 'is not a recognised field' },
      { field: 'options.depth', message: 'must be >= 0' },
      { field: 'options.note', message: 'must be string' },
      { field: 'headers.a', message: 'must be string' },
    ]));
    expect(v.issues).toHaveLength(8);
  });

  it('hands the route\'s checks the body without what the schema refused, leaving the body as it was', () => {
    const body = { name: '', kind: 'a', extra: 1, options: { depth: -1, note: 'kept' }, headers: { a: 1, b: 'ok' }, tags: ['x', 'q', 'y'] };
    const v = validate(body);
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.valid).toEqual({ kind: 'a', options: { note: 'kept' }, headers: { b: 'ok' }, tags: ['x', undefined, 'y'] });
    expect(body).toEqual({ name: '', kind: 'a', extra: 1, options: { depth: -1, note: 'kept' }, headers: { a: 1, b: 'ok' }, tags: ['x', 'q', 'y'] });
    // A body that is not an object: nothing for the checks.
    for (const bad of [[], 'text', 42, null]) {
      const w = validate(bad);
      expect(!w.ok && w.valid).toBeUndefined();
    }
  });

  it('describes at most MAX_DESCRIBED_ISSUES problems and counts the rest, in time linear in the body', () => {
    const v = failed({ name: 'n', kind: 'a', tags: Array.from({ length: 100_000 }, () => 'q') });
    expect(v.issues).toHaveLength(MAX_DESCRIBED_ISSUES);
    expect(v.issues[0]).toEqual({ field: 'tags', message: 'must NOT have more than 5 items' });
    expect(v.issues.length + (v.more ?? 0)).toBe(100_001);
    // Past the limit, the route's checks are not run on such a body.
    expect(v.valid).toBeUndefined();
  });
});

describe('the validate stage', () => {
  const issue = (field: string, message = 'is bad', extra: Partial<CheckIssue> = {}): CheckIssue => ({ field, message, ...extra });

  it('merges the schema\'s problems and the check\'s in the schema\'s field order, by array index, each once', () => {
    const merged = mergeIssues(
      [issue('timeout'), issue('urls[5]'), issue('zzz', 'is not a recognised field'), issue('body', 'x')],
      [issue('urls[1]'), issue('url'), issue('timeout'), issue('urls[7]')],
      ['url', 'urls', 'timeout'],
    );
    expect(merged.map((i) => i.field)).toEqual(['body', 'url', 'urls[1]', 'urls[5]', 'urls[7]', 'timeout', 'zzz']);
  });

  it('answers TARGET_NOT_ALLOWED only when every problem is a refused target', () => {
    const refused = issue('url', 'the ftp scheme is not allowed (http and https only)', { refused: true });
    const alone = validationFailure([refused]);
    expect(alone.code).toBe('TARGET_NOT_ALLOWED');
    expect(alone.fields()).toEqual({ validation_errors: [{ field: 'url', message: refused.message }] });
    expect(validationFailure([refused, issue('callback_url', 'x', { refused: true })]).code).toBe('TARGET_NOT_ALLOWED');
    const mixed = validationFailure([refused, issue('timeout', 'must be >= 1')]);
    expect(mixed.code).toBe('MISSING_PARAMETER');
    expect(mixed.fields().validation_errors).toEqual([{ field: 'url', message: refused.message }, { field: 'timeout', message: 'must be >= 1' }]);
  });

  it('bounds validation_errors: at most 100 entries, the last "and K more problems"', () => {
    const many = Array.from({ length: 250 }, (_, n) => issue(`a[${n}]`));
    const listed = listedIssues(many);
    expect(listed).toHaveLength(MAX_LISTED_ISSUES);
    expect(listed[99]).toEqual({ field: 'body', message: 'and 151 more problems' });
    expect(listedIssues(many.slice(0, 100))).toHaveLength(100);
    expect(listedIssues(many.slice(0, 3), 7).at(-1)).toEqual({ field: 'body', message: 'and 7 more problems' });
    expect(validationFailure(many).fields().validation_errors).toHaveLength(MAX_LISTED_ISSUES);
  });

  const run = (check: SemanticCheck<Req> | undefined, body: unknown) => {
    const stage = validateStage(validate, check, Object.keys(Request.properties));
    const ctx = { body, bodyError: undefined } as unknown as RequestContext;
    return Effect.runSyncExit(stage.run(ctx));
  };
  const failureOf = (exit: Exit.Exit<unknown, unknown>): ApiFailure => {
    if (Exit.isSuccess(exit)) throw new Error('expected a failure');
    return ((exit as Exit.Failure<unknown, ApiFailure>).cause.reasons[0] as unknown as { error: ApiFailure }).error;
  };

  it('runs the route\'s check over what the schema accepted and answers both at once', () => {
    const seen: Unchecked<Req>[] = [];
    const check: SemanticCheck<Req> = (i) => {
      seen.push(i);
      return i.name === 'taken' ? [issue('name', 'is taken')] : [];
    };
    const exit = run(check, { name: 'taken', kind: 'z', limit: 0 });
    expect(Exit.isFailure(exit)).toBe(true);
    expect(seen).toEqual([{ name: 'taken' }]);
    const f = failureOf(exit);
    expect(f.code).toBe('MISSING_PARAMETER');
    expect(f.fields().validation_errors).toEqual([
      { field: 'name', message: 'is taken' },
      { field: 'kind', message: 'must be one of: a, b, c' },
      { field: 'limit', message: 'must be >= 1' },
    ]);
    // A valid body the check refuses; a check that throws on a partial body leaves the schema's answer.
    expect(failureOf(run(check, { name: 'taken', kind: 'a' })).fields().validation_errors).toEqual([{ field: 'name', message: 'is taken' }]);
    const throwing: SemanticCheck<Req> = () => { throw new Error('bug'); };
    expect(failureOf(run(throwing, { name: 'n', kind: 'z' })).fields().validation_errors).toEqual([{ field: 'kind', message: 'must be one of: a, b, c' }]);
    expect(Exit.isSuccess(run(check, { name: 'free', kind: 'a' }))).toBe(true);
  });

  it('lets a request through whose only problems are incidental (a bulk scrape\'s bad URL among good ones)', () => {
    const check: SemanticCheck<Req> = () => [issue('name', 'one item fails', { incidental: true })];
    expect(Exit.isSuccess(run(check, { name: 'n', kind: 'a' }))).toBe(true);
    expect(failureOf(run(check, { name: 'n', kind: 'z' })).fields().validation_errors).toEqual([
      { field: 'name', message: 'one item fails' },
      { field: 'kind', message: 'must be one of: a, b, c' },
    ]);
  });
});

describe('what the egress guard refuses by a URL\'s form', () => {
  it('tells a string that is not a URL (a malformed field) from a URL it refuses (a refused target)', () => {
    const policy = { allowPrivate: false };
    expect(checkTargetUrl('not a url', policy)).toMatchObject({ ok: false, kind: 'syntax' });
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,x', 'http://u:p@example.com/', 'http://example.com:0/']) {
      expect(checkTargetUrl(url, policy), url).toMatchObject({ ok: false, kind: 'form' });
      expect(targetIssue('url', url, policy), url).toMatchObject({ field: 'url', refused: true });
    }
    expect(checkTargetUrl('http://10.0.0.1/', policy)).toMatchObject({ ok: false, kind: 'address' });
    expect(targetIssue('url', 'not a url', policy)).toEqual({ field: 'url', message: 'not a valid absolute URL' });
    expect(targetIssue('url', 'https://example.com/', policy)).toBeUndefined();
    expect(targetIssue('url', undefined, policy)).toBeUndefined();
  });
});
