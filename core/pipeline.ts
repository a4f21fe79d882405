/**
 * A pipeline of typed stages. Each stage reads the context built so far and
 * returns an Effect of the fields it adds; `then` merges them into the
 * context type, so a stage that needs a field no earlier stage provides (quota
 * before auth, extract before fetch, ...) is a compile error.
 *
 * The composed runner is built once per route; per request it is one chain of
 * flatMaps that fills the same context object (no copies), and stages that
 * completed synchronously are chained without a fiber (see fast-effect.ts).
 */
import { Effect } from 'effect';
import type { Finalizer } from './context.js';
import { chain, isCompleted } from './fast-effect.js';

/** The six stages of the design; other names are allowed for plugin stages. */
export type StageName = 'auth' | 'quota' | 'fetch' | 'extract' | 'analyse' | 'bill' | (string & {});

export interface Stage<In, Out extends object, E = never, R = never> {
  readonly name: StageName;
  /** A property, not a method: parameters stay contravariant under strictFunctionTypes. */
  readonly run: (ctx: In) => Effect.Effect<Out, E, R>;
}

export const defineStage = <In, Out extends object, E = never, R = never>(
  name: StageName,
  run: (ctx: In) => Effect.Effect<Out, E, R>,
): Stage<In, Out, E, R> => ({ name, run });

/** A built pipeline: the per-request function, and the names of its stages (checked at boot). */
export type Runner<In, A, E, R> = ((input: In) => Effect.Effect<A, E, R>) & { readonly stageNames: readonly StageName[] };

type Merge<A, B> = Omit<A, keyof B> & B;
// biome-ignore lint: any is needed to store heterogeneous stages
type AnyStage = Stage<any, object, unknown, unknown>;

export class Pipeline<In, Ctx, E, R> {
  private constructor(readonly stages: readonly AnyStage[]) {}

  /** Start a pipeline whose input context is `In`. */
  static from<In>(): Pipeline<In, In, never, never> {
    return new Pipeline<In, In, never, never>([]);
  }

  then<Out extends object, E2, R2>(stage: Stage<Ctx, Out, E2, R2>): Pipeline<In, Merge<Ctx, Out>, E | E2, R | R2> {
    return new Pipeline<In, Merge<Ctx, Out>, E | E2, R | R2>([...this.stages, stage as AnyStage]);
  }

  /**
   * Append the stages of another pipeline (a chain several routes share,
   * built once): its input must be what this one has built so far; the
   * fields its stages add are merged in, as with `then`.
   */
  append<SubIn, SubCtx, E2, R2>(
    segment: Pipeline<SubIn, SubCtx, E2, R2>,
  ): Ctx extends SubIn ? Pipeline<In, Merge<Ctx, Omit<SubCtx, keyof SubIn>>, E | E2, R | R2> : never {
    return new Pipeline([...this.stages, ...segment.stages]) as never;
  }

  get names(): readonly StageName[] {
    return this.stages.map((s) => s.name);
  }

  /** Close the pipeline with the operation's own work; returns the per-request runner. */
  handle<A, E2, R2>(f: (ctx: Ctx) => Effect.Effect<A, E2, R2>): Runner<In, A, E | E2, R | R2> {
    const stages = this.stages;
    const n = stages.length;
    const step = (i: number, ctx: object): Effect.Effect<A, E | E2, R | R2> => {
      if (i === n) return f(ctx as Ctx);
      const stage = stages[i]!;
      return chain(stage.run(ctx), (out) => step(i + 1, Object.assign(ctx, out))) as Effect.Effect<A, E | E2, R | R2>;
    };
    const runner = (input: In): Effect.Effect<A, E | E2, R | R2> => {
      const ctx = input as { finalizers?: Finalizer[] | undefined };
      const eff = step(0, ctx);
      // Completed synchronously: run whatever cleanup was registered, inline when it is synchronous too.
      if (isCompleted(eff)) return ctx.finalizers === undefined ? eff : runFinalizers(ctx.finalizers, eff as Effect.Effect<A, E | E2, R | R2>);
      return Effect.ensuring(eff, Effect.suspend(() => (ctx.finalizers === undefined ? Effect.void : runFinalizers(ctx.finalizers, Effect.void))));
    };
    return Object.assign(runner, { stageNames: this.names });
  }
}

/**
 * Run finalizers in reverse order of registration, then continue with
 * `after`. Synchronous ones run inline; the first asynchronous one switches
 * the rest to Effect sequencing. A finalizer that throws or dies is a defect
 * of that finalizer only: the others still run.
 */
function runFinalizers<A, E, R>(fins: Finalizer[], after: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
  const all = fins.splice(0, fins.length);
  let pending: Effect.Effect<void>[] | undefined;
  for (let i = all.length - 1; i >= 0; i--) {
    let e: Effect.Effect<void>;
    try {
      e = all[i]!();
    } catch {
      continue;
    }
    if (isCompleted(e)) continue;
    (pending ??= []).push(Effect.ignore(Effect.exit(e)) as Effect.Effect<void>);
  }
  if (pending === undefined) return after;
  return Effect.andThen(Effect.forEach(pending, (p) => p, { discard: true }), after);
}
