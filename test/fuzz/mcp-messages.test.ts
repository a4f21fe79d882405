/**
 * Hostile MCP messages, property-based, against the real server's POST /mcp
 * (embedded, uWS): tools/call of each tool with arguments drawn from its
 * published inputSchema (valid, broken, or any JSON; every URL one the
 * egress guard refuses without a lookup), other methods with any params,
 * and any JSON at all. The key has no credits, so valid calls stop at 402.
 * Invariants: never a 5xx, never past the deadline; 200 answers are one
 * JSON-RPC response with the request's id, tools/call results have text
 * content and, when they are errors, the spec's error body; nothing is a
 * JSON-RPC internal error (-32603); other answers are 202 (no body) or the
 * spec's error body. FC_SEED replays a run; FC_MCP_RUNS scales it (default 1,000).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startScourIn, type Running } from '../support/server.js';
import { sanitise } from './support/harness.js';
import { anyJson, anyString, brokenBody, Deep, validBody, type Schema } from './support/schema-arbitrary.js';
import { seedFor } from './support/seed.js';

const ADMIN = 'mcp-fuzz-admin-token-0123456789abcdef';
const RUNS = Number(process.env.FC_MCP_RUNS ?? 1000);
const DEADLINE_MS = 15_000;
/** The default SCOUR_BODY_LIMIT. */
const BODY_LIMIT = 1024 * 1024;

/** JSON text of a drawn value (a Deep value is its own deeply nested text). */
function encode(v: unknown): string {
  if (v instanceof Deep) return v.json();
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : encode(x))).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${JSON.stringify(k)}:${encode(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

describe('hostile MCP messages on POST /mcp (embedded, uWS)', () => {
  let s: Running;
  let key: string;
  let tools: { name: string; inputSchema: Schema }[];

  const post = async (body: string) => {
    const res = await fetch(`${s.url}/mcp`, {
      method: 'POST', body, signal: AbortSignal.timeout(DEADLINE_MS),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    const text = await res.text();
    let json: any;
    try { json = JSON.parse(text); } catch { json = undefined; }
    return { status: res.status, text, json };
  };

  beforeAll(async () => {
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, searchProviders: ['local'] });
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 0 } });
    key = r.body.api_key;
    tools = (await post(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list' }))).json.result.tools;
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it(`${RUNS} messages: no 5xx, JSON-RPC or the spec's error body, no internal error`, async () => {
    const id = fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.string({ minLength: 1, maxLength: 8 }));
    const argsOf = (schema: Schema) => fc.oneof(
      { weight: 3, arbitrary: validBody(schema, { atLimits: false }) },
      { weight: 3, arbitrary: brokenBody(schema, { atLimits: false }).map((b) => b.body) },
      { weight: 1, arbitrary: anyJson },
    );
    const toolCall = fc.oneof(...tools.map((t) => fc.record({
      jsonrpc: fc.constant('2.0'), id, method: fc.constant('tools/call'), params: fc.record({ name: fc.constant(t.name), arguments: argsOf(t.inputSchema) }),
    })));
    const other = fc.record({
      jsonrpc: fc.constant('2.0'), id: fc.option(id, { nil: undefined }),
      method: fc.oneof(fc.constantFrom('initialize', 'tools/list', 'ping', 'tools/call', 'resources/list', 'prompts/get', 'logging/setLevel', 'notifications/initialized', 'notifications/cancelled'), anyString),
      params: fc.option(fc.oneof(anyJson, fc.record({ name: fc.oneof(anyString, fc.constantFrom(...tools.map((t) => t.name))), arguments: anyJson })), { nil: undefined }),
    });
    const message = fc.oneof({ weight: 6, arbitrary: toolCall }, { weight: 3, arbitrary: other }, { weight: 1, arbitrary: anyJson });

    await fc.assert(fc.asyncProperty(message, async (m) => {
      const body = encode(sanitise(m));
      if (Buffer.byteLength(body) > BODY_LIMIT) {
        // Past the limit the server answers 413 as soon as it knows, and may close the connection while the body is still being written.
        const r = await post(body).catch(() => undefined);
        if (r !== undefined) expect(r.status).toBe(413);
        return;
      }
      const r = await post(body);
      const label = `${body.slice(0, 300)} -> ${r.status} ${r.text.slice(0, 300)}`;
      expect(r.status, label).toBeLessThan(500);
      if (r.status === 202) {
        expect(r.text, label).toBe('');
        return;
      }
      if (r.status !== 200) {
        expect([400, 413], label).toContain(r.status);
        expect(typeof r.json?.code, label).toBe('string');
        expect(typeof r.json?.error, label).toBe('string');
        return;
      }
      expect(r.json?.jsonrpc, label).toBe('2.0');
      expect(r.json.id, label).toEqual((m as { id: unknown }).id);
      if (r.json.error !== undefined) {
        expect(r.json.error.code, label).not.toBe(-32603);
        return;
      }
      if ((m as { method?: unknown }).method === 'tools/call') {
        const res = r.json.result;
        expect(res.content[0].type, label).toBe('text');
        if (res.isError) {
          expect(typeof res.structuredContent.code, label).toBe('string');
          expect(res.content[0].text.startsWith(`${res.structuredContent.code}: `), label).toBe(true);
          // No credits: nothing valid gets past the price check (usage costs nothing).
        } else {
          expect((m as { params: { name: string } }).params.name, label).toBe('usage');
        }
      }
    }), { numRuns: RUNS, seed: seedFor('mcp-messages'), endOnFailure: true });
    expect((await call(`${s.url}/healthz`, 'GET')).status).toBe(200);
    expect(s.logs.join('')).not.toContain('unhandled failure');
  }, 300_000);
});
