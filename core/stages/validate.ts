/**
 * The validate stage: surfaces a body that could not be decoded, then checks
 * the decoded body against the route's schema (compiled once, at boot) and
 * the route's own semantic check, and adds it to the context as the typed
 * `input`. It runs after auth and quota, so callers are identified and
 * counted before their bodies are judged.
 *
 * Every problem is reported at once: when the schema refuses some fields, the
 * semantic check still runs over the fields it accepted, and one 400 lists
 * both, in the order of the schema's fields, without repeats.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../context.js';
import { BadRequest, type FieldIssue, TargetNotAllowed, type UnsupportedMediaType } from '../errors.js';
import { defineStage } from '../pipeline.js';
import type { CheckIssue, SemanticCheck, Unchecked, Validator } from '../schema.js';
import type { Validated, ValidateStage } from './index.js';

/** The top-level field a path starts with: `urls[3]` and `screenshot_options.quality` belong to `urls` and `screenshot_options`. */
function topField(field: string): string {
  for (let k = 0; k < field.length; k++) {
    const c = field.charCodeAt(k);
    if (c === 46 /* . */ || c === 91 /* [ */) return field.slice(0, k);
  }
  return field;
}

/** The first array index in a path (`urls[3]` -> 3), or -1. */
function firstIndex(field: string): number {
  const at = field.indexOf('[');
  if (at < 0) return -1;
  const n = Number.parseInt(field.slice(at + 1), 10);
  return Number.isNaN(n) ? -1 : n;
}

/**
 * The schema's problems and the semantic check's, as one list: grouped by
 * top-level field in the schema's order (`body` first, unknown fields last,
 * in the order met), within a field by array index, the schema's problem
 * before the check's on a tie; each field and message once. Linear in the
 * number of problems (a body of a million bad values stays cheap).
 */
export function mergeIssues(schemaIssues: readonly FieldIssue[], checked: readonly CheckIssue[], fieldOrder: readonly string[]): CheckIssue[] {
  const rank = new Map<string, number>();
  rank.set('body', -1);
  fieldOrder.forEach((f, n) => { if (!rank.has(f)) rank.set(f, n); });
  const buckets = new Map<number, [CheckIssue[], CheckIssue[]]>();
  const put = (i: CheckIssue, side: 0 | 1) => {
    const top = topField(i.field);
    let r = rank.get(top);
    if (r === undefined) {
      r = fieldOrder.length + rank.size;
      rank.set(top, r);
    }
    let b = buckets.get(r);
    if (b === undefined) buckets.set(r, (b = [[], []]));
    b[side].push(i);
  };
  for (const i of schemaIssues) put(i, 0);
  for (const i of checked) put(i, 1);

  const seen = new Set<string>();
  const out: CheckIssue[] = [];
  const emit = (i: CheckIssue) => {
    const key = `${i.field}\u0000${i.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(i);
  };
  for (const r of [...buckets.keys()].sort((a, b) => a - b)) {
    const [a, b] = buckets.get(r)!;
    let x = 0;
    let y = 0;
    while (x < a.length || y < b.length) {
      if (y >= b.length || (x < a.length && firstIndex(a[x]!.field) <= firstIndex(b[y]!.field))) emit(a[x++]!);
      else emit(b[y++]!);
    }
  }
  return out;
}

/**
 * The failure for a request's problems: 400 TARGET_NOT_ALLOWED when every
 * one is a target the egress guard refuses, else 400 MISSING_PARAMETER;
 * either way with all of them in validation_errors.
 */
export function validationFailure(issues: readonly CheckIssue[], unlisted = 0): BadRequest | TargetNotAllowed {
  const first = issues[0] ?? { field: 'body', message: 'is invalid' };
  if (issues.length > 0 && unlisted === 0 && issues.every((i) => i.refused === true)) {
    return new TargetNotAllowed({
      message: issues.length === 1 ? `The target is not allowed: ${first.message}` : `${issues.length} targets are not allowed`,
      field: first.field, reason: first.message, issues,
    });
  }
  const count = issues.length + unlisted;
  return new BadRequest({
    message: count === 1 ? 'Request validation failed' : `Request validation failed: ${count} problems`,
    validationErrors: issues.length === 0 ? [first] : issues,
    ...(unlisted > 0 ? { unlisted } : {}),
  });
}

export function validateStage<T>(validator: Validator<T>, check?: SemanticCheck<T>, fieldOrder: readonly string[] = []): ValidateStage<T> {
  return defineStage<RequestContext, Validated<T>, BadRequest | TargetNotAllowed | UnsupportedMediaType>('validate', (ctx: RequestContext) => {
    if (ctx.bodyError !== undefined) return Effect.fail(ctx.bodyError);
    const v = validator(ctx.body);
    if (v.ok) {
      if (check === undefined) return Effect.succeed({ input: v.value });
      const found = check(v.value as Unchecked<T>);
      if (!found.some((i) => i.incidental !== true)) return Effect.succeed({ input: v.value });
      return Effect.fail(validationFailure(mergeIssues([], found, fieldOrder)));
    }
    let found: readonly CheckIssue[] = [];
    if (check !== undefined && v.valid !== undefined) {
      try {
        found = check(v.valid);
      } catch {
        // A check that trips over a partial body: the schema's problems alone are still a full answer.
      }
    }
    return Effect.fail(validationFailure(mergeIssues(v.issues, found, fieldOrder), v.more ?? 0));
  });
}
