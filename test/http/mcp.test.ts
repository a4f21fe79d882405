/**
 * MCP over streamable HTTP (POST /mcp), with the SDK's own Client and
 * StreamableHTTPClientTransport against the real server, on both HTTP
 * adapters and both deployments (embedded, shared): the seven tools with the
 * routes' request schemas as inputSchema, a scrape of a loopback page
 * (structured content, Markdown text, charged exactly as the API charges),
 * usage, a validation error, 401, 402, an unknown tool; and the transport's
 * edges with raw requests (405 on GET and DELETE, the body limit, malformed
 * JSON, a message that is not JSON-RPC, an unsupported protocol version, a
 * notification's 202). Then, once (embedded, uWS): jobs the tools wait
 * for (a crawl, a bulk scrape and a research with a callback_url), and a
 * research report as Markdown with its citations.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Packr } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ARGUMENTS } from '../../adapters/mcp/tools.js';
import { researchCorpus } from '../fixtures/research-corpus.js';
import { startCrawlSite, type CrawlSite } from '../support/crawl-site.js';
import { call, expectErrorBody } from '../support/http.js';
import { ADAPTERS, CONFIGS, startScourIn, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'mcp-test-admin-token-0123456789abcdef';
const TOOLS = ['search', 'scrape', 'bulk_scrape', 'crawl', 'map', 'research', 'usage'];
const ROUTES: Record<string, string> = {
  search: 'POST /v1/search', scrape: 'POST /v1/scrape', bulk_scrape: 'POST /v1/scrape/bulk', crawl: 'POST /v1/crawl', map: 'POST /v1/map', research: 'POST /v1/research',
};
const BODY_LIMIT = 256 * 1024;

async function account(base: string, credits: number, plan = 'unicorn'): Promise<string> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
  expect(r.status, r.text).toBe(201);
  return r.body.api_key as string;
}

async function connect(base: string, key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'scour-mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return client;
}

type Result = { content: { type: string; text: string }[]; structuredContent?: Record<string, any>; isError?: boolean };
const tool = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as Result;
const text = (r: Result) => r.content.map((x) => x.text).join('\n');

/** A raw POST /mcp (what no SDK client sends). */
async function raw(base: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; json: any; headers: Headers }> {
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
  const t = await res.text();
  let json: any;
  try { json = JSON.parse(t); } catch { json = undefined; }
  return { status: res.status, text: t, json, headers: res.headers };
}

describe.each(CONFIGS.flatMap((c) => ADAPTERS.map((a) => [c, a] as const)))('MCP over streamable HTTP, %s, %s', (config, adapter) => {
  let s: Running;
  let site: TargetSite;
  let key: string;
  let broke: string;
  let client: Client;

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn(config, adapter, { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'], bodyLimit: BODY_LIMIT });
    key = await account(s.url, 1000);
    broke = await account(s.url, 0);
    client = await connect(s.url, key);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await s?.stop();
    await site?.close();
  });

  it('lists the seven tools, each inputSchema its route\'s request schema as is', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    const routes = new Map(s.scour.app.compiled.map((c) => [c.key, c.route]));
    for (const t of tools) {
      const route = ROUTES[t.name];
      if (route === undefined) {
        expect(t.inputSchema, t.name).toEqual(NO_ARGUMENTS);
        continue;
      }
      expect(t.inputSchema, t.name).toEqual(JSON.parse(JSON.stringify(routes.get(route)!.request!.json)));
      expect(t.description, t.name).toContain(routes.get(route)!.summary);
      expect(t.outputSchema, t.name).toBeUndefined();
    }
  }, 30_000);

  it('scrape: structured content, the page as Markdown, charged exactly as the API charges', async () => {
    const before = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    const r = await tool(client, 'scrape', { url: `${site.url}/html/simple`, extract_links: true });
    expect(r.isError, text(r)).toBeFalsy();
    const b = r.structuredContent!;
    expect(b.status_code).toBe(200);
    expect(b.final_url).toBe(`${site.url}/html/simple`);
    expect(b.markdown).toContain('Hello, target');
    expect(Array.isArray(b.links)).toBe(true);
    expect(typeof b.request_id).toBe('string');
    expect(text(r)).toMatch(/^# Simple page\n\nURL: http:\/\/127\.0\.0\.1:\d+\/html\/simple/);
    expect(text(r)).toContain('Hello, target');
    const after = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    // The API's own price of the same request (3 + 1 for links): the same charge, the same account.
    const api = await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body: { url: `${site.url}/html/simple`, extract_links: true, markdown: true } });
    expect(api.status, api.text).toBe(200);
    expect(b.credits_used).toBe(4);
    expect(b.credits_used).toBe(api.body.credits_used);
    expect(after.credits_used - before.credits_used).toBe(4);
    expect(after.credits_remaining).toBe(before.credits_remaining - 4);
    expect(b.remaining_credits).toBe(after.credits_remaining);
    expect(after.breakdown.find((x: { operation: string }) => x.operation === 'scrape').requests).toBe(before.breakdown.find((x: { operation: string }) => x.operation === 'scrape')?.requests + 1 || 1);
  }, 60_000);

  it('map: the API\'s answer as structured content, one URL a line, 1 credit', async () => {
    const before = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    const r = await tool(client, 'map', { url: `${site.url}/html/simple`, sitemap: 'skip' });
    expect(r.isError, text(r)).toBeFalsy();
    const b = r.structuredContent!;
    expect(b.links[0]).toEqual({ url: `${site.url}/html/simple`, title: 'Simple page', source: 'page' });
    expect(b.credits_used).toBe(1);
    expect(text(r)).toMatch(new RegExp(`^Map: ${b.links.length} URLs?\\. Credits used: 1; remaining: \\d+\\.\\n- ${site.url}/html/simple \\(Simple page\\)`));
    const after = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    expect(after.credits_used - before.credits_used).toBe(1);
    const refused = await tool(client, 'map', { url: 'http://10.0.0.1/', limit: 0 });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^MISSING_PARAMETER: /);
    expect(refused.structuredContent!.validation_errors.map((v: { field: string }) => v.field).sort()).toEqual(['limit', 'url']);
  }, 60_000);

  it('usage: the API\'s answer as structured content, and a line of text', async () => {
    const r = await tool(client, 'usage', {});
    expect(r.isError).toBeFalsy();
    const api = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    const { request_id: _a, ...mine } = r.structuredContent!;
    const { request_id: _b, ...theirs } = api;
    expect(mine).toEqual(theirs);
    expect(text(r)).toContain(`${api.credits_remaining} remaining`);
    const extra = await tool(client, 'usage', { verbose: true });
    expect(extra.isError).toBe(true);
    expect(extra.structuredContent).toMatchObject({ code: 'MISSING_PARAMETER', validation_errors: [{ field: 'verbose' }] });
  }, 30_000);

  it('invalid arguments: a tool error MISSING_PARAMETER with the validation errors, nothing charged', async () => {
    const before = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_used;
    const r = await tool(client, 'scrape', { url: 5, render_js: 'yes', nonsense: 1 });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^MISSING_PARAMETER: /);
    expect(r.structuredContent!.code).toBe('MISSING_PARAMETER');
    const fields = (r.structuredContent!.validation_errors as { field: string }[]).map((v) => v.field);
    expect(fields).toEqual(expect.arrayContaining(['url', 'render_js', 'nonsense']));
    for (const f of ['url', 'render_js', 'nonsense']) expect(text(r)).toContain(`- ${f}: `);
    expect(typeof r.structuredContent!.request_id).toBe('string');
    const research = await tool(client, 'research', { research_query: '' });
    expect(research.structuredContent).toMatchObject({ code: 'MISSING_PARAMETER' });
    expect((await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_used).toBe(before);
  }, 30_000);

  it('a key without credits: a tool error NO_CREDITS (402) with credits_remaining', async () => {
    const poor = await connect(s.url, broke);
    try {
      const r = await tool(poor, 'scrape', { url: `${site.url}/html/simple` });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^NO_CREDITS: /);
      expect(r.structuredContent).toMatchObject({ code: 'NO_CREDITS', credits_remaining: 0 });
      // Usage costs nothing: it still works.
      expect((await tool(poor, 'usage', {})).structuredContent!.credits_remaining).toBe(0);
    } finally {
      await poor.close();
    }
  }, 30_000);

  it('no key or a bad key: 401 with the spec error body before any MCP processing', async () => {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const none = await raw(s.url, init);
    expect(none.status).toBe(401);
    expect(none.json).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const bad = await raw(s.url, init, { authorization: 'Bearer sk_live_not_a_real_key_000000000000' });
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    // The SDK client sees the 401 as a StreamableHTTPError on connect.
    const e = await connect(s.url, 'sk_live_not_a_real_key_000000000000').then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(StreamableHTTPError);
    expect((e as StreamableHTTPError).code).toBe(401);
    expect(String((e as Error).message)).toContain('AUTHENTICATION_FAILED');
  }, 30_000);

  it('the same rate limits as the API: a free key\'s second search in a minute is RATE_LIMITED, over MCP and over the API alike', async () => {
    const free = await account(s.url, 50, 'free');
    const c = await connect(s.url, free);
    try {
      const first = await tool(c, 'search', { query: 'anything at all' });
      expect(first.isError, text(first)).toBeFalsy();
      const second = await tool(c, 'search', { query: 'anything at all' });
      expect(second.isError).toBe(true);
      expect(text(second)).toMatch(/^RATE_LIMITED: [\s\S]*Retry after \d+ s\./);
      expect(second.structuredContent).toMatchObject({ code: 'RATE_LIMITED' });
      expect(second.structuredContent!.retry_after).toBeGreaterThan(0);
      const api = await call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${free}`, body: { query: 'anything at all' } });
      expectErrorBody(api, 429, 'RATE_LIMITED');
    } finally {
      await c.close();
    }
  }, 30_000);

  it('a client that goes away mid tool call: the call is interrupted, nothing charged or held, nothing left in flight', async () => {
    const before = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    const abort = new AbortController();
    const pending = fetch(`${s.url}/mcp`, {
      method: 'POST', signal: abort.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'scrape', arguments: { url: `${site.url}/slow?ms=4000` } } }),
    }).then(() => 'answered', () => 'aborted');
    await new Promise((r) => setTimeout(r, 400));
    abort.abort();
    expect(await pending).toBe('aborted');
    const deadline = Date.now() + 5_000;
    while (s.scour.app.activeRequests > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(s.scour.app.activeRequests).toBe(0);
    const after = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    expect(after.credits_used).toBe(before.credits_used);
    expect(after.credits_reserved).toBe(0);
  }, 30_000);

  it('an unknown tool: JSON-RPC error -32602', async () => {
    const e = await client.callTool({ name: 'delete_everything', arguments: {} }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(McpError);
    expect((e as McpError).code).toBe(-32602);
    expect((e as McpError).message).toContain('Unknown tool: delete_everything');
  }, 30_000);

  it('transport edges: 405 on GET and DELETE, 413 past the body limit, 400 for malformed JSON, non-JSON-RPC and unknown protocol versions, 202 for a notification', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await call(`${s.url}/mcp`, method, { auth: `Bearer ${key}` });
      expectErrorBody(r, 405, 'METHOD_NOT_ALLOWED');
      expect(r.headers.get('allow')).toContain('POST');
    }
    const auth = { authorization: `Bearer ${key}` };
    const big = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'scrape', arguments: { url: 'x'.repeat(BODY_LIMIT) } } }), auth);
    expect(big.status).toBe(413);
    expect(big.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const malformed = await raw(s.url, '{"jsonrpc": "2.0", "id": 1, "method": ', auth);
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ code: 'MISSING_PARAMETER', validation_errors: [{ field: 'body' }] });
    const notRpc = await raw(s.url, JSON.stringify({ hello: 'world' }), auth);
    expect(notRpc.status).toBe(400);
    expect(notRpc.json.code).toBe('MISSING_PARAMETER');
    expect(notRpc.json.validation_errors.map((v: { field: string }) => v.field)).toContain('jsonrpc');
    const halfRpc = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', id: 1 }), auth);
    expect(halfRpc.status).toBe(400);
    expect(halfRpc.json).toMatchObject({ code: 'MISSING_PARAMETER', validation_errors: [{ field: 'body' }] });
    const version = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), { ...auth, 'mcp-protocol-version': '1999-01-01' });
    expect(version.status).toBe(400);
    expect(version.json).toMatchObject({ code: 'MISSING_PARAMETER', validation_errors: [{ field: 'mcp-protocol-version' }] });
    const notification = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), auth);
    expect(notification.status).toBe(202);
    expect(notification.text).toBe('');
    // A plain request without initialize first works (stateless): tools/list answers JSON.
    const list = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), auth);
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toContain('application/json');
    expect(list.json.result.tools).toHaveLength(TOOLS.length);
    // A msgpack body is decoded like any other route's; the answer is JSON.
    const packed = await fetch(`${s.url}/mcp`, { method: 'POST', headers: { ...auth, 'content-type': 'application/msgpack' }, body: new Packr({ useRecords: false }).pack({ jsonrpc: '2.0', id: 5, method: 'ping' }) });
    expect(packed.status).toBe(200);
    expect(await packed.json()).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    // Params that do not fit the method: JSON-RPC -32602 naming the problem (the SDK alone would say -32603, internal error).
    const params = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'usage', arguments: [] } }), auth);
    expect(params.status).toBe(200);
    expect(params.json.error.code).toBe(-32602);
    expect(params.json.error.message).toMatch(/^Invalid params for tools\/call: params\.arguments: /);
    const proto = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: '__proto__' }), auth);
    expect(proto.json.error.code).toBe(-32601);
    // An unknown method: a JSON-RPC error in a 200.
    const unknown = await raw(s.url, JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'resources/list' }), auth);
    expect(unknown.status).toBe(200);
    expect(unknown.json.error.code).toBe(-32601);
    // Still healthy.
    expect((await call(`${s.url}/healthz`, 'GET')).status).toBe(200);
  }, 30_000);

  it('logged no unhandled failure and answered no 5xx', () => {
    const logs = s.logs.join('');
    expect(logs).not.toContain('unhandled failure');
    expect(logs).not.toMatch(/"status":5\d\d/);
    expect(logs).toMatch(/"route":"POST \/mcp","status":200/);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await call(`${s.url}/v1/openapi.json`, 'GET')).body;
    const op = doc.paths['/mcp'].post;
    expect(op.summary).toMatch(/Model Context Protocol/);
    expect(op.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '401', '413']));
  });
});

describe('MCP jobs and research: crawl, and bulk scrape and research with a callback_url, are waited for; research is Markdown with citations', () => {
  let s: Running;
  let site: TargetSite;
  let docs: CrawlSite;
  let hook: WebhookReceiver;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    site = await startTargetSite();
    hook = await startWebhookReceiver({ secret: 'unused-secret-not-verified' });
    docs = await startCrawlSite('docs');
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'] });
    key = await account(s.url, 1000);
    client = await connect(s.url, key);
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: researchCorpus() } });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await s?.stop();
    await docs?.close();
    await site?.close();
    await hook?.close();
  });

  it('crawl: submits, waits for the job to end, returns its status; the pages are billed as by the API', async () => {
    const r = await tool(client, 'crawl', { url: `${docs.url}/`, max_pages: 3, max_depth: 2 });
    expect(r.isError, text(r)).toBeFalsy();
    const b = r.structuredContent!;
    expect(b.status).toBe('completed');
    expect(b.pages_done).toBe(3);
    expect(b.credits_used).toBe(9);
    expect(text(r)).toContain(`Job ${String(b.job_id)}: completed`);
    expect(text(r)).toContain('Pages: 3 stored');
    const usage = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body;
    expect(usage.breakdown.find((x: { operation: string }) => x.operation === 'crawl')?.credits).toBe(9);
  }, 60_000);

  it('bulk_scrape: synchronous by default; with callback_url (a job) the tool waits for the job and returns its results', async () => {
    const urls = [`${site.url}/html/simple`, `${site.url}/status/404`];
    const sync = await tool(client, 'bulk_scrape', { urls });
    expect(sync.isError, text(sync)).toBeFalsy();
    expect(sync.structuredContent).toMatchObject({ total: 2 });
    expect(text(sync)).toMatch(/^Bulk scrape: 2 URLs/);
    const job = await tool(client, 'bulk_scrape', { urls, callback_url: hook.url });
    expect(job.isError, text(job)).toBeFalsy();
    expect(job.structuredContent!.status).toBe('completed');
    expect(job.structuredContent!.results).toHaveLength(2);
    expect(text(job)).toContain('completed');
    const polled = await tool(client, 'bulk_scrape', { urls, async: true });
    expect(polled.isError, text(polled)).toBeFalsy();
    expect(polled.structuredContent).toMatchObject({ status: 'completed', callback_url: null });
    expect(polled.structuredContent!.results).toHaveLength(2);
  }, 60_000);

  it('research: the report as Markdown (summary, insights, citations), charged as the API charges; with callback_url (a job): waited for', async () => {
    const query = 'How stable are perovskite solar cells and what limits them?';
    const before = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_used;
    const r = await tool(client, 'research', { research_query: query, analysis_depth: 'quick' });
    expect(r.isError, text(r)).toBeFalsy();
    const b = r.structuredContent!;
    expect(b.credits_used).toBe(5);
    expect((await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_used - before).toBe(5);
    const t = text(r);
    expect(t.startsWith(`# ${query}`)).toBe(true);
    expect(t).toContain('## Summary');
    expect(t).toContain(b.executive_summary.slice(0, 40));
    expect(t).toContain('## Key insights');
    expect(b.citations.length).toBeGreaterThan(0);
    expect(t).toContain('## Citations');
    for (const c of b.citations) expect(t).toContain(`[${c.source_id}]`);
    const job = await tool(client, 'research', { research_query: query, analysis_depth: 'quick', callback_url: hook.url });
    expect(job.isError, text(job)).toBeFalsy();
    expect(job.structuredContent).toMatchObject({ status: 'completed', credits_used: 5 });
    expect(text(job)).toContain('completed');
    expect(text(job)).toContain(`# ${query}`);
    expect(text(job)).toContain('## Citations');
  }, 60_000);
});
