/**
 * `scour mcp` (MCP over stdio), with the SDK's own Client and
 * StdioClientTransport spawning the real CLI (from the sources, with tsx)
 * against a real server: the same seven tools as POST /mcp (their inputSchema
 * the routes' request schemas), a scrape of a loopback page charged as the
 * API charges, usage, a validation error, 401 (no key, a bad key), 402, an
 * unknown tool, a server that cannot be reached; stdout carries only MCP
 * messages, and the process ends when its stdin does.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, MAIN, TSX } from '../support/cli.js';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'mcp-stdio-test-admin-token-0123456789';

async function account(base: string, credits: number): Promise<string> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits } });
  expect(r.status, r.text).toBe(201);
  return r.body.api_key as string;
}

interface Spawned {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  readonly stderr: () => string;
  readonly errors: unknown[];
}

/** `scour mcp` as an MCP client starts it: a child process on stdio, with only the environment given. */
async function spawnMcp(env: Record<string, string>): Promise<Spawned> {
  const transport = new StdioClientTransport({ command: TSX, args: [MAIN, 'mcp'], env: baseEnv(env), stderr: 'pipe', cwd: process.cwd() });
  let err = '';
  transport.stderr?.on('data', (d) => (err += String(d)));
  const client = new Client({ name: 'scour-mcp-stdio-test', version: '1.0.0' });
  const errors: unknown[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, transport, stderr: () => err, errors };
}

type Result = { content: { type: string; text: string }[]; structuredContent?: Record<string, any>; isError?: boolean };
const tool = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as Result;
const text = (r: Result) => r.content.map((x) => x.text).join('\n');

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('scour mcp (stdio) against a real server', () => {
  let s: Running;
  let site: TargetSite;
  let key: string;
  let broke: string;
  let mcp: Spawned;

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'] });
    key = await account(s.url, 1000);
    broke = await account(s.url, 0);
    mcp = await spawnMcp({ SCOUR_URL: s.url, SCOUR_API_KEY: key });
  }, 60_000);
  afterAll(async () => {
    await mcp?.client.close();
    await s?.stop();
    await site?.close();
  });

  it('lists the seven tools, the same as POST /mcp, each inputSchema its route\'s request schema', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search', 'scrape', 'bulk_scrape', 'crawl', 'map', 'research', 'usage']);
    const routes = new Map(s.scour.app.compiled.map((c) => [c.key, c.route]));
    const scrape = tools.find((t) => t.name === 'scrape')!;
    expect(scrape.inputSchema).toEqual(JSON.parse(JSON.stringify(routes.get('POST /v1/scrape')!.request!.json)));
    expect(tools.find((t) => t.name === 'research')!.inputSchema).toEqual(JSON.parse(JSON.stringify(routes.get('POST /v1/research')!.request!.json)));
    const http = new Client({ name: 'scour-mcp-http', version: '1.0.0' });
    await http.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      expect(tools).toEqual((await http.listTools()).tools);
    } finally {
      await http.close();
    }
  }, 30_000);

  it('scrape: structured content and Markdown, charged as the API charges; usage agrees', async () => {
    const before = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    const r = await tool(mcp.client, 'scrape', { url: `${site.url}/html/simple` });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ status_code: 200, credits_used: 3 });
    expect(r.structuredContent!.markdown).toContain('Hello, target');
    expect(text(r)).toMatch(/^# Simple page\n\nURL: /);
    const after = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    expect(after.credits_used - before.credits_used).toBe(3);
    const usage = await tool(mcp.client, 'usage', {});
    expect(usage.structuredContent).toMatchObject({ credits_used: after.credits_used, credits_remaining: after.credits_remaining, plan: 'unicorn' });
  }, 30_000);

  it('invalid arguments, an unknown tool: a MISSING_PARAMETER tool error, a -32602 JSON-RPC error', async () => {
    const r = await tool(mcp.client, 'search', { query: '', max_results: 1000 });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^MISSING_PARAMETER: /);
    expect(r.structuredContent!.validation_errors.map((v: { field: string }) => v.field)).toEqual(expect.arrayContaining(['query', 'max_results']));
    const e = await mcp.client.callTool({ name: 'nope', arguments: {} }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(McpError);
    expect((e as McpError).code).toBe(-32602);
  }, 30_000);

  it('a cancelled tool call (notifications/cancelled) stops: the API request is interrupted, nothing charged or left in flight', async () => {
    const before = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    const e = await mcp.client.callTool({ name: 'scrape', arguments: { url: `${site.url}/slow?ms=4000` } }, undefined, { signal: AbortSignal.timeout(500) })
      .then(() => undefined, (x: unknown) => x);
    expect(e).toBeDefined();
    // The slow page answers after 4 s: an API request still in flight after 3 s was not interrupted.
    const deadline = Date.now() + 3_000;
    while (s.scour.app.activeRequests > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(s.scour.app.activeRequests).toBe(0);
    const after = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    expect(after.credits_used).toBe(before.credits_used);
    expect(after.credits_reserved).toBe(0);
    // The process goes on serving.
    expect((await tool(mcp.client, 'usage', {})).isError).toBeFalsy();
  }, 30_000);

  it('only MCP on stdout (the client saw no unparseable line); notes on stderr', () => {
    expect(mcp.errors).toEqual([]);
    expect(mcp.stderr()).toContain(`serving MCP on stdio for ${s.url}`);
  });

  it('402, 401 (no key, a bad key): tool errors with the spec codes', async () => {
    const poor = await spawnMcp({ SCOUR_URL: s.url, SCOUR_API_KEY: broke });
    const none = await spawnMcp({ SCOUR_URL: s.url });
    const bad = await spawnMcp({ SCOUR_URL: s.url, SCOUR_API_KEY: 'sk_live_not_a_real_key_000000000000' });
    try {
      const r402 = await tool(poor.client, 'scrape', { url: `${site.url}/html/simple` });
      expect(r402.isError).toBe(true);
      expect(r402.structuredContent).toMatchObject({ code: 'NO_CREDITS', credits_remaining: 0 });
      const r401 = await tool(none.client, 'usage', {});
      expect(r401.isError).toBe(true);
      expect(text(r401)).toMatch(/^UNAUTHORIZED: /);
      expect(none.stderr()).toContain('SCOUR_API_KEY is not set');
      // tools/list needs no key: the schemas are public.
      expect((await none.client.listTools()).tools).toHaveLength(7);
      const bad401 = await tool(bad.client, 'scrape', { url: `${site.url}/html/simple` });
      expect(bad401.structuredContent).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    } finally {
      await Promise.all([poor.client.close(), none.client.close(), bad.client.close()]);
    }
  }, 60_000);

  it('a server that cannot be reached: tools/list a JSON-RPC error, a tool call a NETWORK_ERROR tool error; no hang', async () => {
    const port = await closedPort();
    const down = await spawnMcp({ SCOUR_URL: `http://127.0.0.1:${port}`, SCOUR_API_KEY: key });
    try {
      const e = await down.client.listTools().then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(McpError);
      expect((e as McpError).message).toContain('cannot read the tools');
      const r = await tool(down.client, 'usage', {});
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^NETWORK_ERROR: /);
    } finally {
      await down.client.close();
    }
  }, 30_000);

  it('ends when its stdin ends', async () => {
    const p = await spawnMcp({ SCOUR_URL: s.url, SCOUR_API_KEY: key });
    const pid = p.transport.pid!;
    const t0 = Date.now();
    await p.client.close(); // ends stdin; the SDK sends SIGTERM only after 2 s
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(() => process.kill(pid, 0)).toThrow();
  }, 30_000);
});
