import { Effect, Exit } from 'effect';
console.log(Exit.isExit(Effect.succeed(1)), Exit.isExit(Effect.fail(1)), Exit.isExit(Effect.sync(() => 1)), Exit.isExit(Effect.map(Effect.succeed(1), x => x)));
const e = Effect.succeed(5); console.log(Exit.isSuccess(e) && e.value);
const f = Effect.fail('x'); console.log(Exit.isFailure(f), f.cause);
