/**
 * A compatible route is a translation around a native one: it turns its
 * body into the native operation's body, runs the native route's own
 * pipeline (auth, rate limits, validation, gate, credit hold, the work, the
 * charge) on a context that differs only in that body, and turns the
 * answer back. Nothing is implemented twice, and the compatible route
 * costs the native routes nothing.
 *
 * Problems found in translation wait in the context's `bodyError`, as a
 * body that could not be decoded does, so the native pipeline answers
 * them after auth and rate limiting (401 and 429 first, then 400), like
 * any native request.
 *
 * (The Firecrawl-compatible routes need the same thing; this is kept local
 * to this plugin until both exist, then belongs in plugins/sdk.)
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import type { ApiFailure, BadRequest, UnsupportedMediaType } from '../../../core/errors.js';
import { chain } from '../../../core/fast-effect.js';
import type { HttpMethod, PluginHost, Route } from '../../../core/plugin.js';

export type Translated<N, P> = {
  /** The native body, and what the answer needs to know of the request. */
  readonly body: N;
  readonly plan: P;
  readonly problem?: undefined;
  /** The Scour key the body carried (`api_key`), used when no Authorization header came. */
  readonly apiKey: string | undefined;
} | {
  /** Why there is no native body: answered by the native pipeline's validate stage, after auth and rate limiting. */
  readonly problem: BadRequest;
  /** The Scour key the body carried (`api_key`), used when no Authorization header came. */
  readonly apiKey: string | undefined;
};

type Handle = Route['handle'];

/**
 * The native route at `method path`, found among the app's routes on first
 * use (every operation has built its routes by then); a missing one fails
 * the boot, when the app reads the compatible route's stage names.
 */
export function nativeRoute(host: PluginHost, method: HttpMethod, path: string): () => Route {
  let found: Route | undefined;
  return () => {
    if (found !== undefined) return found;
    found = host.allRoutes().find((r) => r.method === method && r.path === path);
    if (found === undefined) throw new Error(`operation-tavily needs the native route ${method} ${path}, which no operation declares`);
    return found;
  };
}

/**
 * A route handle that translates the body, runs the native route's
 * pipeline and translates its answer. Its stage names are the native
 * pipeline's (that is where the body is validated), read when the app is
 * built.
 */
export function forwardHandle<N, P, A, R>(
  native: () => Route,
  translate: (body: unknown, ctx: RequestContext) => Translated<N, P>,
  answer: (value: A, plan: P) => R,
): Handle {
  const handle = (ctx: RequestContext): Effect.Effect<R, ApiFailure, never> => {
    let body: unknown = undefined;
    let bodyError: BadRequest | UnsupportedMediaType | undefined = ctx.bodyError;
    let headers = ctx.headers;
    let plan: P | undefined;
    if (bodyError === undefined) {
      const t = translate(ctx.body, ctx);
      if (t.problem === undefined) {
        body = t.body;
        plan = t.plan;
      } else {
        bodyError = t.problem;
      }
      if (t.apiKey !== undefined && (headers.authorization === undefined || headers.authorization === '')) {
        headers = { ...headers, authorization: `Bearer ${t.apiKey}` };
      }
    }
    const inner: RequestContext = {
      requestId: ctx.requestId, receivedAt: ctx.receivedAt, method: ctx.method, path: ctx.path, params: ctx.params,
      clientIp: ctx.clientIp, headers, body, bodyError, reply: ctx.reply,
    };
    const run = native().handle(inner) as Effect.Effect<A, ApiFailure, never>;
    // A native answer that completed synchronously stays an Exit (no fiber), as it would on the native route.
    // The native pipeline succeeds only past its validate stage, so only with a translated body and its plan.
    return chain(run, (value) => Effect.succeed(answer(value, plan as P)));
  };
  Object.defineProperty(handle, 'stageNames', { get: () => ['translate', ...(native().handle.stageNames ?? [])], enumerable: true });
  return handle as Handle;
}
