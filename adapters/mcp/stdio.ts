/**
 * `scour mcp`: an MCP server on stdio for a running Scour server, reached
 * over HTTP with the typed client (adapters/client): SCOUR_URL (default
 * http://localhost:8080), SCOUR_API_KEY (sent as the Bearer key of every
 * tool call), SCOUR_MCP_JOB_WAIT (seconds a tool waits for a job; default
 * 60). The tools' schemas come from the server's own OpenAPI document
 * (GET /v1/openapi.json, read on the first tools/list or tools/call and kept),
 * so they are the routes' request schemas of the server the calls go to.
 *
 * Only MCP messages go to stdout; everything else (start-up notes, the
 * SDK's errors) goes to stderr. The process ends when stdin ends.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Scour, ScourError } from '../client/index.js';
import { connect, createMcpServer } from './server.js';
import { type ApiAnswer, DEFAULT_JOB_WAIT_MS, type Dispatcher, type ToolDefinition, toolDefinitions } from './tools.js';

/** Tool calls over HTTP. No retries: a 429 or a 5xx is the tool's error, as on POST /mcp. */
export function clientDispatcher(client: Scour): Dispatcher {
  return {
    async call(method, path, body, signal): Promise<ApiAnswer> {
      try {
        return { status: 200, body: await client.request(method, path, body, { signal }) };
      } catch (e) {
        if (!(e instanceof ScourError)) throw e;
        // No answer at all (network failure, timeout): the tool's error says so with the client's code.
        if (e.status === 0) throw Object.assign(new Error(e.message), { code: e.code });
        return { status: e.status, body: e.body ?? { error: e.message, code: e.code } };
      }
    },
  };
}

export interface StdioOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
}

export async function runMcpStdio(o: StdioOptions): Promise<void> {
  const baseUrl = (o.env.SCOUR_URL ?? '').trim() || 'http://localhost:8080';
  const apiKey = (o.env.SCOUR_API_KEY ?? '').trim() || undefined;
  const waitSeconds = Number(o.env.SCOUR_MCP_JOB_WAIT);
  const jobWaitMs = o.env.SCOUR_MCP_JOB_WAIT !== undefined && Number.isFinite(waitSeconds) && waitSeconds >= 0 ? waitSeconds * 1000 : DEFAULT_JOB_WAIT_MS;
  const log = (line: string) => process.stderr.write(`scour mcp: ${line}\n`);
  if (apiKey === undefined) log('SCOUR_API_KEY is not set: tool calls will answer UNAUTHORIZED');

  // Research and rendered scrapes can take minutes: one attempt may take up to 5.
  const client = new Scour({ apiKey, baseUrl, retries: 0, timeout: 300_000 });
  let tools: ToolDefinition[] | undefined;
  const toolList = async () => {
    if (tools !== undefined) return tools;
    let doc: unknown;
    try {
      doc = await client.request('GET', '/v1/openapi.json');
    } catch (e) {
      throw new Error(`cannot read the tools from ${baseUrl}/v1/openapi.json: ${e instanceof Error ? e.message : String(e)}`);
    }
    tools = toolDefinitions(doc, jobWaitMs);
    return tools;
  };

  const server = createMcpServer({ version: o.version, tools: toolList, dispatcher: clientDispatcher(client), jobWaitMs });
  server.onerror = (e) => log(`error: ${e instanceof Error ? e.message : String(e)}`);
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    server.onclose = () => resolve();
  });
  await connect(server, transport);
  log(`serving MCP on stdio for ${baseUrl}`);
  await ended;
  await server.close();
}
