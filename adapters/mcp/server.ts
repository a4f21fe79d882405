/**
 * The MCP server both transports run: the SDK's low-level `Server` with a
 * tools/list handler (the tools of ./tools.ts, their inputSchema the routes'
 * JSON Schemas as is) and a tools/call handler (./tools.ts callTool through
 * the transport's Dispatcher). An unknown tool name is a JSON-RPC error
 * -32602 (InvalidParams), as the MCP specification lists it among protocol
 * errors; everything the API answers is a tool result.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema, ErrorCode, InitializeRequestSchema, isJSONRPCRequest, ListToolsRequestSchema, PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { callTool, type Dispatcher, type ToolDefinition, UnknownTool } from './tools.js';

export interface McpServerOptions {
  readonly version: string;
  /** The tool list (read once per tools/list; may fetch the server's OpenAPI document). */
  readonly tools: () => Promise<readonly ToolDefinition[]> | readonly ToolDefinition[];
  readonly dispatcher: Dispatcher;
  /** Aborted when the whole exchange is over (the HTTP request went away). */
  readonly signal?: AbortSignal | undefined;
  readonly jobWaitMs?: number | undefined;
  readonly pollMs?: number | undefined;
}

export const INSTRUCTIONS = 'Scour: web search, scraping (one page, many pages, a whole site into your own index) and research with citations. '
  + 'Every tool call is an API request of your Scour account: it is rate-limited and charged in credits like the HTTP API (the usage tool shows the balance). '
  + 'Failures are tool errors whose text starts with the API error code (MISSING_PARAMETER, NO_CREDITS, RATE_LIMITED, ...).';

export function createMcpServer(o: McpServerOptions): Server {
  const server = new Server({ name: 'scour', title: 'Scour', version: o.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...(await o.tools())] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const signal = o.signal === undefined ? extra.signal : AbortSignal.any([o.signal, extra.signal]);
    try {
      return await callTool(request.params.name, request.params.arguments, o.dispatcher, { signal, jobWaitMs: o.jobWaitMs, pollMs: o.pollMs });
    } catch (e) {
      // A plain error with a code: the SDK sends its message as is (an McpError's message carries an "MCP error" prefix the client adds again).
      if (e instanceof UnknownTool) throw Object.assign(new Error(e.message), { code: ErrorCode.InvalidParams });
      throw e;
    }
  });
  return server;
}

/** The requests this server answers, with the SDK's schemas of their params. */
type ParamsSchema = { safeParse(v: unknown): { success: boolean; error?: { issues?: readonly { path?: readonly PropertyKey[]; message?: string }[] } } };
/** A Map, not an object: a method named `__proto__` or `constructor` is just unknown. */
const REQUESTS = new Map<string, ParamsSchema>([
  ['initialize', InitializeRequestSchema], ['ping', PingRequestSchema], ['tools/list', ListToolsRequestSchema], ['tools/call', CallToolRequestSchema],
]);

/**
 * Connect the server to its transport, and answer a known request whose
 * params do not fit its schema with JSON-RPC -32602 (InvalidParams) naming
 * the first problem. The SDK's Protocol parses a request against its
 * handler's schema before the handler runs and answers a mismatch with
 * -32603 (InternalError) and the validator's whole dump: a client's mistake
 * reported as the server's fault.
 */
export async function connect(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const check = REQUESTS.get(message.method)?.safeParse(message);
      if (check !== undefined && !check.success) {
        const issue = check.error?.issues?.[0];
        const where = (issue?.path ?? []).map(String).join('.') || 'params';
        void transport.send({
          jsonrpc: '2.0', id: message.id,
          error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${where}: ${issue?.message ?? 'invalid'}`.slice(0, 500) },
        });
        return;
      }
    }
    deliver?.(message, extra);
  };
}

