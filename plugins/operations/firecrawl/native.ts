/**
 * Calling a native route in process: the Firecrawl endpoints are thin
 * translations, so each one runs the native route's own pipeline (auth,
 * quota, validate, gate, reserve, the work, bill) on a context made from
 * its own request, with the translated body. The native route's account
 * stages, rate-limit headers (the reply is shared) and finalizers are
 * therefore the ones that apply; nothing is counted twice, because the
 * Firecrawl route has no account stages of its own.
 *
 * A Firecrawl body that cannot be translated is handed to the native
 * pipeline as a body error (`bodyError`): its validate stage answers it,
 * after auth and quota, as it answers malformed JSON, so a bad key is a
 * 401 and a rate-limited caller a 429 whatever the body says.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import { type ApiFailure, type BadRequest, ServiceUnavailable } from '../../../core/errors.js';
import type { HttpMethod, PluginHost, Route } from '../../../core/plugin.js';
import { firecrawlFailure } from './errors.js';

/** What a native call gives back: the route's answer, and the context its stages filled (the account, the input). */
export interface NativeAnswer<T> {
  readonly value: T;
  readonly ctx: RequestContext & { readonly account?: { readonly id: string }; readonly input?: unknown };
}

export interface NativeRequest {
  readonly body?: unknown;
  /** A translation failure: the native validate stage answers it, after auth and quota. */
  readonly bodyError?: BadRequest;
  readonly params?: Readonly<Record<string, string>>;
}

export type NativeCaller = <T = Record<string, unknown>>(ctx: RequestContext, method: HttpMethod, path: string, req: NativeRequest) => Effect.Effect<NativeAnswer<T>, ApiFailure>;

/** The caller of the native routes of this server (looked up on first use: every operation has built its routes by then). */
export function nativeCaller(host: PluginHost): NativeCaller {
  let routes: Map<string, Route<any, any>> | undefined;
  return <T>(ctx: RequestContext, method: HttpMethod, path: string, req: NativeRequest) => {
    routes ??= new Map(host.allRoutes().map((r) => [`${r.method} ${r.path}`, r]));
    const route = routes.get(`${method} ${path}`);
    if (route === undefined) {
      return Effect.fail(firecrawlFailure(new ServiceUnavailable({ message: `This server does not serve ${method} ${path}, which this endpoint runs on`, retryAfter: 60 })));
    }
    const child: RequestContext & Record<string, unknown> = {
      requestId: ctx.requestId,
      receivedAt: ctx.receivedAt,
      method,
      path,
      params: req.params ?? {},
      clientIp: ctx.clientIp,
      headers: ctx.headers,
      body: req.body,
      bodyError: req.bodyError,
      reply: ctx.reply,
    };
    let run: Effect.Effect<unknown, ApiFailure, any>;
    try {
      run = route.handle(child) as Effect.Effect<unknown, ApiFailure, any>;
    } catch (e) {
      run = Effect.die(e);
    }
    return Effect.mapBoth(run as Effect.Effect<unknown, ApiFailure>, {
      onFailure: firecrawlFailure,
      onSuccess: (value) => ({ value: value as T, ctx: child as NativeAnswer<T>['ctx'] }),
    });
  };
}
