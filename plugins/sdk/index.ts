/**
 * The public helpers every built-in plugin uses, and custom plugins too:
 * schema building (TypeBox: JSON Schema plus its static type), `defineTool`,
 * `defineOperation`, and `invalid()` for semantic 400s.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { BadRequest, type ErrorSpec, type FieldIssue } from '../../core/errors.js';
export { errorSpec } from '../../core/errors.js';
import type { OperationPlugin, ToolContext, ToolPlugin } from '../../core/plugin.js';
import type { JsonSchema, Schema, SemanticCheck } from '../../core/schema.js';
export type { CheckIssue, SemanticCheck, Unchecked } from '../../core/schema.js';

export { Type };
export type { Static, TSchema };

/** Wrap a TypeBox schema as a core Schema. */
export const schema = <T extends TSchema>(t: T): Schema<Static<T>> => ({ json: t as unknown as JsonSchema });

/** An object schema that refuses unknown fields (typos get a 400, not silence). */
export const StrictObject = <P extends Parameters<typeof Type.Object>[0]>(properties: P, options: Parameters<typeof Type.Object>[1] = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

/** Fail the request with 400 MISSING_PARAMETER and one field-level issue. */
export function invalid(field: string, message: string): never {
  throw BadRequest.of(field, message);
}

import { LONE_SURROGATE } from '../../core/text.js';
export { hasLoneSurrogate } from '../../core/text.js';

/**
 * Refuse text that has no UTF-8 encoding (an unpaired UTF-16 surrogate):
 * 400 on `field`, naming the code unit and its position.
 */
export function requireWellFormed(field: string, text: string): void {
  const m = LONE_SURROGATE.exec(text);
  if (m === null) return;
  const unit = text.charCodeAt(m.index).toString(16).toUpperCase();
  invalid(field, `contains a lone surrogate (U+${unit}) at position ${m.index}, which has no UTF-8 encoding`);
}

/** Fail with several field-level issues at once. */
export function invalidMany(issues: readonly FieldIssue[], summary = 'Invalid request'): never {
  throw new BadRequest({ message: summary, validationErrors: issues });
}

export interface ToolDefinition<N extends string, Q extends TSchema, S extends TSchema> {
  readonly name: N;
  readonly slug: string;
  readonly summary: string;
  readonly description?: string;
  readonly request: Q;
  readonly response: S;
  readonly example?: { readonly request: Static<Q>; readonly response?: Partial<Static<S>> };
  readonly dependsOn?: readonly string[];
  /** Failures beyond 400 and 429 this tool can answer with (for OpenAPI and the docs test). */
  readonly errors?: readonly ErrorSpec[];
  readonly start?: () => Promise<void> | void;
  readonly stop?: () => Promise<void> | void;
  /**
   * Checks JSON Schema cannot express, run with the schema's own (the
   * request's fields that passed it, any of them possibly missing), so one
   * 400 names every problem. Return `{field, message}` issues; never throw.
   */
  readonly check?: SemanticCheck<Static<Q>>;
  run(input: Static<Q>, ctx: ToolContext): Static<S> | Promise<Static<S>>;
}

export function defineTool<const N extends string, Q extends TSchema, S extends TSchema>(
  def: ToolDefinition<N, Q, S>,
): ToolPlugin<N, Static<Q>, Static<S>> {
  return {
    ...def,
    kind: 'tool',
    request: schema(def.request),
    response: schema(def.response),
  } as ToolPlugin<N, Static<Q>, Static<S>>;
}

export const defineOperation = <const N extends string>(op: Omit<OperationPlugin<N>, 'kind'>): OperationPlugin<N> => ({
  ...op,
  kind: 'operation',
});
