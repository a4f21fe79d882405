/**
 * CallerSchemas (core/json-extraction.ts) with Ajv, the validator that
 * checks requests: a caller's JSON Schema (draft-07) for extract_json,
 * judged, compiled, and run against a model's answers.
 *
 * A caller's schema is untrusted input, and Ajv compiles a schema into
 * code, so before it is compiled it is held to:
 * - a JSON object whose `type` is "object" (an answer is one JSON object),
 *   at most MAX_SCHEMA_CHARS characters as JSON and MAX_SCHEMA_DEPTH levels
 *   of nesting;
 * - no `$id` (one shared Ajv instance keeps compiled schemas apart by
 *   object, never by a caller's id), no `$async`, no `$ref` but local ones
 *   (`#...`: nothing is loaded from anywhere);
 * - no `pattern` or `patternProperties`: a caller's regular expression run
 *   on text the page chose is a ReDoS waiting to happen;
 * - Ajv's strict mode: an unknown keyword (a typo such as `requird`) is a
 *   problem, not silence; `x-quote` (a boolean) is the one keyword added.
 * Ajv then checks the schema against the draft-07 meta-schema. Its compiled
 * form is dropped from Ajv's cache at once (the validator function keeps
 * working), so schemas do not pile up in a long-lived server.
 */
import { Ajv, type ErrorObject } from 'ajv';
import * as addFormatsModule from 'ajv-formats';
import type { FieldIssue } from '../../core/errors.js';
import type { AnswerCheck, CallerSchemas, QuotedValue } from '../../core/json-extraction.js';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats));

export const MAX_SCHEMA_CHARS = 16_384;
export const MAX_SCHEMA_DEPTH = 16;
/** Problems of one answer reported (to the model, and in the 502). */
export const MAX_ANSWER_ERRORS = 20;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose value is a map of names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'definitions', '$defs', 'dependencies', 'patternProperties']);
/** Keywords whose value is a schema, or an array of schemas. */
const SCHEMA_VALUES = new Set(['items', 'additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'if', 'then', 'else', 'not', 'allOf', 'anyOf', 'oneOf']);
const REFUSED: Readonly<Record<string, string>> = {
  $id: 'is not accepted (give the schema inline, without ids)',
  id: 'is not accepted (give the schema inline, without ids)',
  $async: 'is not accepted',
  pattern: 'is not accepted: regular expressions from requests are not run (use enum, const, minLength/maxLength or format)',
  patternProperties: 'is not accepted: regular expressions from requests are not run',
};

/** How deep a JSON value nests (a scalar is 0), stopping once past `limit`. */
function depthOver(value: unknown, limit: number, depth = 0): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth + 1 > limit) return true;
  for (const v of Object.values(value)) if (depthOver(v, limit, depth + 1)) return true;
  return false;
}

/** The keywords refused at `at` and under it, walking schema positions only (a property named "pattern" is fine). */
function refusedKeywords(schema: unknown, at: string, out: string[]): void {
  if (!isRecord(schema)) return;
  for (const [key, value] of Object.entries(schema)) {
    const why = REFUSED[key];
    if (why !== undefined) out.push(`${at}/${key} ${why}`);
    if (key === '$ref' && (typeof value !== 'string' || !value.startsWith('#'))) out.push(`${at}/$ref must be a local reference (starting with #)`);
    if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      for (const [name, sub] of Object.entries(value)) refusedKeywords(sub, `${at}/${key}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
    } else if (SCHEMA_VALUES.has(key)) {
      if (Array.isArray(value)) value.forEach((sub, n) => refusedKeywords(sub, `${at}/${key}/${n}`, out));
      else refusedKeywords(value, `${at}/${key}`, out);
    }
  }
}

/** Where the x-quote keyword records what it saw, per validation (Ajv's passContext). */
interface QuoteContext { readonly quoted: QuotedValue[] }

function describe(e: ErrorObject): FieldIssue {
  const at = e.instancePath;
  if (e.keyword === 'additionalProperties') {
    return { field: at, message: `must not have the property ${JSON.stringify((e.params as { additionalProperty?: unknown }).additionalProperty)}` };
  }
  if (e.keyword === 'required') return { field: at, message: `must have the property ${JSON.stringify((e.params as { missingProperty?: unknown }).missingProperty)}` };
  if (e.keyword === 'enum') return { field: at, message: `must be one of ${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)}`.slice(0, 300) };
  return { field: at, message: e.message ?? 'is invalid' };
}

/** Compiled schemas kept, by their JSON text (a client that sends the same schema again skips Ajv's few milliseconds). */
export const COMPILED_KEPT = 64;

const SELF_REFERENCE = 'is not a usable JSON Schema: its $ref chain does not end (a reference that resolves to itself)';

export class AjvCallerSchemas implements CallerSchemas {
  private readonly ajv: Ajv;
  private readonly kept = new Map<string, ReturnType<CallerSchemas['compile']>>();
  constructor() {
    this.ajv = new Ajv({
      allErrors: true, useDefaults: false, coerceTypes: false, passContext: true, messages: true,
      strict: true, strictTypes: false, strictTuples: false, strictRequired: false, allowUnionTypes: true,
      // A caller's schema is compiled on a request's path: no code printed, no source kept.
      code: { source: false },
      // Meta-schema errors say all of what is wrong with a schema, not only the first.
      validateSchema: true,
    });
    addFormats(this.ajv);
    this.ajv.addKeyword({
      keyword: 'x-quote',
      schemaType: 'boolean',
      errors: false,
      validate(this: QuoteContext | undefined, on: boolean, data: unknown, _parent: unknown, cxt?: { instancePath: string }) {
        if (on && typeof data === 'string' && this?.quoted !== undefined) this.quoted.push({ path: cxt?.instancePath ?? '', value: data });
        return true;
      },
    });
  }

  compile(schema: unknown): ReturnType<CallerSchemas['compile']> {
    if (!isRecord(schema)) return { ok: false, problems: ['must be a JSON Schema: a JSON object'] };
    const text = JSON.stringify(schema);
    if (text.length > MAX_SCHEMA_CHARS) return { ok: false, problems: [`is ${text.length} characters as JSON; at most ${MAX_SCHEMA_CHARS}`] };
    const known = this.kept.get(text);
    if (known !== undefined) {
      // Most recently used last.
      this.kept.delete(text);
      this.kept.set(text, known);
      return known;
    }
    const compiled = this.compileNew(schema, text);
    this.kept.set(text, compiled);
    if (this.kept.size > COMPILED_KEPT) this.kept.delete(this.kept.keys().next().value!);
    return compiled;
  }

  private compileNew(schema: Record<string, unknown>, text: string): ReturnType<CallerSchemas['compile']> {
    if (depthOver(schema, MAX_SCHEMA_DEPTH)) return { ok: false, problems: [`nests deeper than ${MAX_SCHEMA_DEPTH} levels`] };
    const problems: string[] = [];
    if (schema.type !== 'object') problems.push('must have "type": "object" (the answer is one JSON object)');
    refusedKeywords(schema, '', problems);
    if (problems.length > 0) return { ok: false, problems: problems.slice(0, 20) };
    // A copy: Ajv's cache is keyed by the object, and the caller's object is not ours to keep.
    const own = JSON.parse(text) as Record<string, unknown>;
    let validate: ReturnType<Ajv['compile']>;
    try {
      validate = this.ajv.compile(own);
    } catch (e) {
      if (e instanceof RangeError) return { ok: false, problems: [SELF_REFERENCE] };
      const message = e instanceof Error ? e.message : String(e);
      return { ok: false, problems: [message.replace(/^schema is invalid: /, 'is not a valid JSON Schema: ').replace(/\bdata(?=[/ ])/g, 'schema').slice(0, 500)] };
    } finally {
      this.ajv.removeSchema(own);
    }
    const run = (answer: unknown): AnswerCheck => {
      const context: QuoteContext = { quoted: [] };
      let ok: boolean;
      try {
        ok = validate.call(context, answer) as boolean;
      } catch (e) {
        // A reference loop that only some answers walk into (`$ref: "#"` on the root walks into it on any).
        return { errors: [{ field: '', message: e instanceof RangeError ? `the schema ${SELF_REFERENCE.slice(3)}` : `the schema could not be applied: ${String(e).slice(0, 200)}` }], quoted: [] };
      }
      const errors = ok ? [] : (validate.errors ?? []).slice(0, MAX_ANSWER_ERRORS).map(describe);
      return { errors, quoted: context.quoted };
    };
    // The simplest answers: a schema that loops on them loops on every answer.
    for (const probe of [{}, { a: {} }]) {
      const check = run(probe);
      if (check.errors.length === 1 && check.errors[0]!.message.startsWith('the schema ')) return { ok: false, problems: [SELF_REFERENCE] };
    }
    return { ok: true, validate: run };
  }
}
