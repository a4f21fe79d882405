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

/**
 * A request body as far as it passed its schema: every value the schema
 * refused is taken out (an array keeps its length, a refused item becomes
 * undefined), so any field may be missing. A route's own checks see this when
 * the schema found problems too, so that one 400 names every problem.
 */
export type Unchecked<T> = T extends string | number | boolean | bigint | null | undefined ? T
  : T extends readonly (infer U)[] ? readonly (Unchecked<U> | undefined)[]
  : { readonly [K in keyof T]?: Unchecked<T[K]> };

export type Validation<T> =
  | { readonly ok: true; readonly value: T }
  | {
    readonly ok: false;
    readonly issues: readonly FieldIssue[];
    /** Problems found past those in `issues` (a body of thousands of bad values), counted but not described. */
    readonly more?: number;
    /** The body without the values the schema refused; undefined when the body itself is not of the right shape (not an object). */
    readonly valid?: Unchecked<T> | undefined;
  };

/** One problem a route's own check found. */
export interface CheckIssue extends FieldIssue {
  /**
   * A target the egress guard refuses (a URL's scheme, credentials, port or
   * address): when every problem of a request is one, the answer is 400
   * TARGET_NOT_ALLOWED rather than MISSING_PARAMETER.
   */
  readonly refused?: boolean;
  /** Not a problem alone (a bulk scrape's bad URL fails only its own item): listed only when the request fails anyway. */
  readonly incidental?: boolean;
}

/**
 * What JSON Schema cannot express (a field that needs another, a URL the
 * egress guard refuses, a country code that does not exist), checked by the
 * validate stage with the schema, so that one 400 lists both. It is given the
 * body without the values the schema refused, so it must not assume any
 * field is there; it must not throw, and must not do I/O.
 */
export type SemanticCheck<T> = (input: Unchecked<T>) => readonly CheckIssue[];

/** A validator compiled once, at start-up; called per request. */
export type Validator<T> = (input: unknown) => Validation<T>;

/** A response serializer compiled once from a schema; answers the same JSON text as JSON.stringify. */
export type Serializer<T> = (value: T) => string;

export interface SchemaCompiler {
  compile<T>(schema: Schema<T>): Validator<T>;
  compileSerializer<T>(schema: Schema<T>): Serializer<T>;
}
