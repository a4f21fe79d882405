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
import type { Schema, SchemaCompiler, Serializer, Validation, Validator } from '../../core/schema.js';

// ajv-formats is CommonJS with a default export.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats));

function pointerToField(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

const join = (base: string, prop: string) => (base === '' ? prop : `${base}.${prop}`);

function describe(e: ErrorObject): FieldIssue {
  const at = pointerToField(e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { field: join(at, String(p.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { field: join(at, String(p.additionalProperty)), message: 'is not a recognised field' };
    case 'type':
      return { field: at || 'body', message: `must be ${String(p.type).replace(',', ' or ')}` };
    case 'enum':
      return { field: at || 'body', message: `must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'const':
      return { field: at || 'body', message: `must be ${JSON.stringify(p.allowedValue)}` };
    default:
      return { field: at || 'body', message: e.message ?? 'is invalid' };
  }
}

export function issuesFrom(errors: readonly ErrorObject[]): FieldIssue[] {
  const seen = new Set<string>();
  const out: FieldIssue[] = [];
  for (const e of errors) {
    // anyOf/oneOf summaries repeat their branches' errors; keep the branches.
    if ((e.keyword === 'anyOf' || e.keyword === 'oneOf') && errors.length > 1) continue;
    const issue = describe(e);
    const key = `${issue.field}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(issue);
    }
  }
  return out;
}

export class AjvSchemaCompiler implements SchemaCompiler {
  private readonly ajv: Ajv;
  constructor() {
    this.ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: false, messages: true });
    addFormats(this.ajv);
  }

  compile<T>(schema: Schema<T>): Validator<T> {
    const validate = this.ajv.compile(schema.json as object);
    return (input: unknown): Validation<T> =>
      validate(input) ? { ok: true, value: input as T } : { ok: false, issues: issuesFrom(validate.errors ?? []) };
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
