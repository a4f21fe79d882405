/**
 * The developer-tools operation: one `POST /v1/tools/{slug}` route per tool
 * plugin, no authentication, a per-client-IP quota stage, then the tool.
 * Tools are plain functions (sync, or a Promise for off-thread work); this
 * wraps them into the pipeline's Effect.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../core/context.js';
import { type ApiFailure, isApiFailure } from '../../core/errors.js';
import { Pipeline } from '../../core/pipeline.js';
import type { Route, ToolContext, ToolPlugin } from '../../core/plugin.js';
import type { Validated } from '../../core/stages/index.js';
import { defineOperation } from '../sdk/index.js';

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  v !== null && typeof v === 'object' && typeof (v as PromiseLike<unknown>).then === 'function';

/** API failures thrown by a tool are its answer; anything else is a defect (500, logged). */
const settle = (e: unknown): Effect.Effect<never, ApiFailure> => (isApiFailure(e) ? Effect.fail(e) : Effect.die(e));

/** The tool's view of the request; the AbortSignal is only made if the tool asks for it. */
class ToolCall implements ToolContext {
  private controller: AbortController | undefined;
  constructor(readonly requestId: string, readonly clientIp: string) {}
  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }
  abort(): void {
    this.controller?.abort();
  }
}

/**
 * Runs the tool now (call it inside a pipeline, where it is already lazy) and
 * wraps its answer: a value, a thrown API failure, a defect, or a Promise
 * whose AbortSignal fires if the fiber is interrupted (client gone).
 */
export function invokeTool<Req, Res>(tool: ToolPlugin<string, Req, Res>, ctx: RequestContext & Validated<Req>): Effect.Effect<Res, ApiFailure> {
  const call = new ToolCall(ctx.requestId, ctx.clientIp);
  let result: Res | Promise<Res>;
  try {
    result = tool.run(ctx.input, call);
  } catch (e) {
    return settle(e);
  }
  if (!isThenable(result)) return Effect.succeed(result);
  const pending = result;
  return Effect.callback<Res, ApiFailure>((resume) => {
    pending.then(
      (v) => resume(Effect.succeed(v)),
      (e) => resume(settle(e)),
    );
    return Effect.sync(() => call.abort());
  });
}

export const toolsOperation = defineOperation({
  name: 'operation-tools',
  description: 'Serves every tool plugin at POST /v1/tools/{slug}.',
  routes(host) {
    return host.registry.byKind('tool').map((tool): Route<unknown, unknown> => ({
      method: 'POST',
      path: `/v1/tools/${tool.slug}`,
      summary: tool.summary,
      ...(tool.description ? { description: tool.description } : {}),
      tags: ['tools'],
      auth: 'none',
      request: tool.request,
      response: tool.response,
      failures: [429, ...(tool.errors ?? []).map((e) => e.status)],
      handle: Pipeline.from<RequestContext>()
        .then(host.stages.clientQuota)
        .then(host.stages.validate(tool.request, tool.check))
        .handle((ctx) => invokeTool(tool, ctx)),
    }));
  },
});
