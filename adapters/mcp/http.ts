/**
 * POST /mcp: MCP over streamable HTTP on the server itself, stateless
 * (no session: a fresh SDK Server and WebStandardStreamableHTTPServerTransport
 * per request) with JSON answers (no SSE). It is an ordinary route of the
 * app, so it gets the app's body limit, body decoding, CORS and metrics, and
 * its auth stage answers 401 (the spec's error body) before any MCP
 * processing. GET and DELETE /mcp answer 405: a stateless server has no
 * stream to resume and no session to end.
 *
 * Each tool call is dispatched in process through the same HttpApp the
 * adapters serve (match + execute with the caller's Authorization header):
 * the very pipeline of the HTTP API (auth, rate limits, validation, the
 * operation, credits), no loopback request.
 *
 * The plugin is built before the app exists (the app is built from every
 * plugin's routes): the composition root hands the app over with `attach`.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../core/context.js';
import { type ApiFailure, BadRequest, errorBody, isApiFailure, ServiceUnavailable, UnsupportedMediaType } from '../../core/errors.js';
import { openApiDocument } from '../../core/openapi.js';
import { Pipeline } from '../../core/pipeline.js';
import type { Schema } from '../../core/schema.js';
import { definePlugin, type OperationPlugin, type PluginHost } from '../../core/plugin.js';
import type { HttpApp, Inbound, Sink } from '../http/shared/app.js';
import { type ApiAnswer, DEFAULT_JOB_WAIT_MS, type Dispatcher, type ToolDefinition, toolDefinitions } from './tools.js';

/** One JSON-RPC message (MCP 2025-06-18 has no batches). The SDK checks the rest. */
export const JsonRpcMessage: Schema<Record<string, unknown>> = {
  json: {
    type: 'object',
    description: 'One JSON-RPC 2.0 message of the Model Context Protocol (a request such as initialize, tools/list, tools/call; or a notification).',
    required: ['jsonrpc'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'integer'] },
      method: { type: 'string', minLength: 1, maxLength: 200 },
      params: { type: 'object' },
      result: { type: 'object' },
      error: { type: 'object' },
    },
    additionalProperties: true,
  },
};

/** The empty body of a 202 (the message held only notifications or responses). */
const ACCEPTED = '';

export interface McpOperationOptions {
  /** How long a tool waits for a job (crawl, asynchronous bulk scrape or research); default 60 s. */
  readonly jobWaitMs?: number;
  readonly pollMs?: number;
}

/** Decode what a Sink received: JSON text or bytes. */
function decode(payload: string | Uint8Array): unknown {
  const text = typeof payload === 'string' ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Tool calls of one /mcp request, run through the app's own pipeline with the caller's credentials. */
export function appDispatcher(app: HttpApp, caller: { authorization?: string | undefined; host?: string | undefined; clientIp: string }): Dispatcher {
  return {
    call(method, path, body, signal): Promise<ApiAnswer> {
      return new Promise<ApiAnswer>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const headers: Record<string, string | undefined> = {
          accept: 'application/json', authorization: caller.authorization, host: caller.host,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        };
        const inbound: Inbound = { method, path, headers, clientIp: caller.clientIp };
        let done = false;
        const sink: Sink = {
          send(status, _headers, payload) {
            if (done) return;
            done = true;
            signal?.removeEventListener('abort', onAbort);
            resolve({ status, body: decode(payload) });
          },
        };
        let interrupt: (() => void) | undefined;
        const onAbort = () => {
          if (done) return;
          done = true;
          interrupt?.();
          reject(signal!.reason);
        };
        const m = app.match(method, path);
        if (!('route' in m)) {
          const failure: ApiFailure = isApiFailure(m) ? m : app.notFound(method, path);
          sink.send(failure.status, [], JSON.stringify(errorBody(failure, '', new Date())), false);
          return;
        }
        interrupt = app.execute(m.route, m.params, inbound, body === undefined ? undefined : Buffer.from(JSON.stringify(body)), sink);
        if (!done) signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}

/** A non-2xx answer of the SDK transport (a message it refuses) as the API's failure. */
function transportFailure(status: number, text: string): ApiFailure {
  let message = text;
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string') message = m;
  } catch {
    // not JSON: the text itself
  }
  message = message.slice(0, 500);
  if (status === 415) return new UnsupportedMediaType({ message });
  const field = /protocol version/i.test(message) ? 'mcp-protocol-version' : 'body';
  return new BadRequest({ message: 'Invalid MCP request', details: message, validationErrors: [{ field, message }] });
}

type Sdk = {
  createMcpServer: typeof import('./server.js').createMcpServer;
  connect: typeof import('./server.js').connect;
  Transport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport;
};
let sdk: Promise<Sdk> | undefined;
/** The SDK is loaded on the first /mcp request, not at boot. */
const loadSdk = (): Promise<Sdk> => (sdk ??= Promise.all([
  import('./server.js'),
  import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
]).then(([s, t]) => ({ createMcpServer: s.createMcpServer, connect: s.connect, Transport: t.WebStandardStreamableHTTPServerTransport })));

export function createMcpOperation(options: McpOperationOptions = {}) {
  let app: HttpApp | undefined;
  const jobWaitMs = options.jobWaitMs ?? DEFAULT_JOB_WAIT_MS;
  // A plain core operation plugin (core/plugin.ts): an adapter builds on the core contract, not on the plugin SDK.
  const plugin: OperationPlugin<'operation-mcp'> = definePlugin({
    name: 'operation-mcp',
    kind: 'operation',
    description: 'POST /mcp: the Model Context Protocol (streamable HTTP, stateless, JSON answers); tools search, scrape, bulk_scrape, crawl, research, usage.',
    routes(host: PluginHost) {
      let tools: ToolDefinition[] | undefined;
      const toolList = () => (tools ??= toolDefinitions(openApiDocument(host.allRoutes(), { title: 'Scour API', version: host.settings.version }), jobWaitMs));

      const serve = async (ctx: RequestContext & { input: Record<string, unknown> }, signal: AbortSignal): Promise<string> => {
        if (app === undefined) throw new ServiceUnavailable({ message: 'The MCP endpoint is not ready yet', retryAfter: 1 });
        const { createMcpServer, connect, Transport } = await loadSdk();
        const server = createMcpServer({
          version: host.settings.version,
          tools: toolList,
          dispatcher: appDispatcher(app, { authorization: ctx.headers.authorization, host: ctx.headers.host, clientIp: ctx.clientIp }),
          signal, jobWaitMs, pollMs: options.pollMs,
        });
        const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await connect(server, transport);
        const onAbort = () => { void server.close(); };
        signal.addEventListener('abort', onAbort, { once: true });
        try {
          // The app already decoded the body (JSON or msgpack) and checked its media type; the transport gets it parsed,
          // with the Accept and Content-Type it insists on: this server answers JSON whatever the client accepts.
          const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
          const version = ctx.headers['mcp-protocol-version'];
          if (version !== undefined) headers['mcp-protocol-version'] = version;
          const res = await transport.handleRequest(new Request('http://localhost/mcp', { method: 'POST', headers }), { parsedBody: ctx.input });
          const text = await res.text();
          if (res.status === 200) return text;
          if (res.status === 202) return ACCEPTED;
          throw transportFailure(res.status, text);
        } finally {
          signal.removeEventListener('abort', onAbort);
          await server.close();
        }
      };

      return [{
        method: 'POST' as const,
        path: '/mcp',
        summary: 'Model Context Protocol (streamable HTTP, stateless, JSON answers): tools search, scrape, bulk_scrape, crawl, research and usage, each an API request of the calling key (same rate limits and credits). GET and DELETE answer 405.',
        tags: ['mcp'],
        auth: 'bearer' as const,
        headers: ['host', 'mcp-protocol-version'],
        request: JsonRpcMessage,
        produces: { contentType: 'application/json' },
        stampRequestId: false,
        failures: [400, 401, 413, 415, 503],
        alternate: { status: 202 as const, response: { json: { type: 'string', maxLength: 0 } } as Schema<string>, when: (r: string) => r === ACCEPTED },
        handle: Pipeline.from<RequestContext>()
          .then(host.stages.auth)
          .then(host.stages.validate(JsonRpcMessage))
          .handle((ctx) => Effect.promise((signal) => serve(ctx, signal))),
      }];
    },
  });
  return {
    plugin,
    /** Hand over the app the routes were built into: tool calls run through it. */
    attach(a: HttpApp): void {
      app = a;
    },
  };
}
