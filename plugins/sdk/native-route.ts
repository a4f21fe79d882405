/**
 * A compatible route (Firecrawl's, Tavily's) is a translation around a
 * native one: it runs the native route's own pipeline (auth, rate limits,
 * validation, gate, credit hold, the work, the charge) on a context that
 * differs from its own only in the body (and, where it must, the path,
 * parameters or headers), and turns the answer back. Nothing is done twice
 * and the native routes pay nothing for it. This is the part both layers
 * share: finding the native route, and the child context it runs on.
 *
 * A body that could not be translated goes in as `bodyError`, as a body
 * that could not be decoded does, so the native validate stage answers it
 * after auth and rate limiting (401 and 429 first, then 400).
 */
import type { RequestContext } from '../../core/context.js';
import type { BadRequest, UnsupportedMediaType } from '../../core/errors.js';
import type { HttpMethod, PluginHost, Route } from '../../core/plugin.js';

/**
 * The app's routes by method and path, read on first use (every operation
 * has built its routes by then, so call it from a handler, not at load).
 */
export function nativeRoutes(host: PluginHost): (method: HttpMethod, path: string) => Route | undefined {
  let routes: Map<string, Route> | undefined;
  return (method, path) => {
    routes ??= new Map(host.allRoutes().map((r) => [`${r.method} ${r.path}`, r as Route]));
    return routes.get(`${method} ${path}`);
  };
}

/** What the child context changes of the compatible route's own. */
export interface NativeRequestParts {
  readonly method?: HttpMethod;
  readonly path?: string;
  readonly params?: Readonly<Record<string, string>>;
  readonly headers?: RequestContext['headers'];
  readonly body: unknown;
  readonly bodyError: BadRequest | UnsupportedMediaType | undefined;
}

/**
 * The context a native route runs on for a compatible one: the same
 * request (id, time, client, reply: its rate-limit headers land on the
 * compatible answer) with the translated parts.
 */
export function nativeContext(ctx: RequestContext, parts: NativeRequestParts): RequestContext {
  return {
    requestId: ctx.requestId,
    receivedAt: ctx.receivedAt,
    method: parts.method ?? ctx.method,
    path: parts.path ?? ctx.path,
    params: parts.params ?? ctx.params,
    clientIp: ctx.clientIp,
    headers: parts.headers ?? ctx.headers,
    body: parts.body,
    bodyError: parts.bodyError,
    reply: ctx.reply,
  };
}
