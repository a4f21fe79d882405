/**
 * The validate stage: surfaces a body that could not be decoded, then checks
 * the decoded body against the route's schema (compiled once, at boot) and
 * adds it to the context as the typed `input`. It runs after auth and quota,
 * so callers are identified and counted before their bodies are judged.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../context.js';
import { BadRequest } from '../errors.js';
import { defineStage } from '../pipeline.js';
import type { Validator } from '../schema.js';
import type { ValidateStage } from '../stages.js';

export function validateStage<T>(validator: Validator<T>): ValidateStage<T> {
  return defineStage('validate', (ctx: RequestContext) => {
    if (ctx.bodyError !== undefined) return Effect.fail(ctx.bodyError);
    const v = validator(ctx.body);
    return v.ok
      ? Effect.succeed({ input: v.value })
      : Effect.fail(new BadRequest({ message: 'Request validation failed', validationErrors: v.issues }));
  });
}
