/**
 * Request and response schemas as the core sees them: a JSON Schema document
 * plus the TypeScript type it describes. Which library builds the document
 * (plugins/sdk uses TypeBox) and which compiles it (adapters/validation uses
 * Ajv) stays outside the core, behind the SchemaCompiler port.
 */
import type { FieldIssue } from './errors.js';

export type JsonSchema = { readonly [keyword: string]: unknown };

export interface Schema<T> {
  readonly json: JsonSchema;
  /** Phantom: carries T for inference only, never set. */
  readonly _type?: (t: T) => T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

export type Validation<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly FieldIssue[] };

/** A validator compiled once, at start-up; called per request. */
export type Validator<T> = (input: unknown) => Validation<T>;

/** A response serializer compiled once from a schema; answers the same JSON text as JSON.stringify. */
export type Serializer<T> = (value: T) => string;

export interface SchemaCompiler {
  compile<T>(schema: Schema<T>): Validator<T>;
  compileSerializer<T>(schema: Schema<T>): Serializer<T>;
}
