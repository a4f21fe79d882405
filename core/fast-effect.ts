/**
 * Sequencing that skips the fiber machinery when an Effect has already
 * completed. `Effect.succeed` and `Effect.fail` are `Exit` values in effect 4;
 * chaining on them synchronously gives the same result as `Effect.flatMap`
 * without building continuations, which matters on the per-request path
 * where most stages (auth from cache, in-process quota, validation) are
 * synchronous. Anything not yet completed goes through `Effect.flatMap`.
 */
import { Effect, Exit } from 'effect';

export function chain<A, E, R, B, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (a: A) => Effect.Effect<B, E2, R2>,
): Effect.Effect<B, E | E2, R | R2> {
  if (Exit.isExit(self)) {
    const done = self as unknown as Exit.Exit<A, E>;
    return Exit.isSuccess(done) ? f(done.value) : (done as Exit.Exit<never, E>);
  }
  return Effect.flatMap(self, f);
}
