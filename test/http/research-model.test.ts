/**
 * The optional model (LLM_BASE_URL) wired into POST /v1/research, against a
 * loopback server speaking the OpenAI chat-completions format: a checked
 * rewrite replaces the insight statements and marks the methodology as not
 * deterministic, while the quoted evidence stays verbatim; a reply that
 * invents a citation, a model error and a model that never answers all
 * leave the deterministic report with a MODEL_WARNING, and cost the same.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startScourIn, type Running } from '../support/server.js';
import { researchCorpus } from '../fixtures/research-corpus.js';

const ADMIN = 'research-model-admin-token-0123';
type Mode = 'good' | 'invented' | 'error' | 'hang';

describe('research with an OpenAI-compatible model', () => {
  let model: http.Server;
  let mode: Mode = 'good';
  const seen: { auth: string | undefined; body: any }[] = [];
  let s: Running;
  let base: string;
  let key: string;

  beforeAll(async () => {
    model = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => { raw += c; });
      req.on('end', () => {
        const body = JSON.parse(raw);
        seen.push({ auth: req.headers.authorization, body });
        if (mode === 'hang') return;
        if (mode === 'error') {
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } }));
          return;
        }
        const user = body.messages.find((m: any) => m.role === 'user').content as string;
        const payload = JSON.parse(user.slice(user.indexOf('\n\n') + 2));
        const insights: Record<string, string> = {};
        for (const ins of payload.insights) {
          const cite = mode === 'invented' ? 99 : ins.allowed_citations[0];
          insights[ins.id] = `Reworded finding about ${(ins.text as string).replace(/[\d.,%]+/g, '').split(/\s+/).slice(0, 5).join(' ')} [${cite}].`;
        }
        const content = JSON.stringify({ insights, recommendations: {} });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }));
      });
    });
    await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
    const llmBase = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    s = await startScourIn('embedded', 'node', {
      adminToken: ADMIN, searchProviders: ['local'],
      llm: { baseUrl: llmBase, model: 'test-model', apiKey: 'sk-test', timeoutMs: 2000, maxTokens: 1000, jsonMode: true },
    });
    base = s.url;
    const acct = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    key = acct.body.api_key;
    const put = await call(`${base}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: researchCorpus() } });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    model.closeAllConnections();
    await new Promise((r) => model.close(r));
  });

  const ask = () => call(`${base}/v1/research`, 'POST', {
    auth: `Bearer ${key}`,
    body: { research_query: 'How stable are perovskite solar cells?', analysis_depth: 'quick', include_methodology: true },
  });

  it('a reply that passes the checks rewords the insights; evidence stays verbatim and the methodology says a model wrote it', async () => {
    mode = 'good';
    const n = seen.length;
    const r = await ask();
    expect(r.status, r.text + s.logs.join('').slice(-3000)).toBe(200);
    expect(seen.length, JSON.stringify(r.body.warnings)).toBe(n + 1);
    expect(seen[n]!.auth).toBe('Bearer sk-test');
    expect(seen[n]!.body).toMatchObject({ model: 'test-model', temperature: 0 });
    expect(r.body.key_insights.length).toBeGreaterThan(0);
    for (const ins of r.body.key_insights) {
      expect(ins.statement).toMatch(/^Reworded finding about .* \[\d+\]\.$/);
      expect(ins.statement_generated_by).toBe('openai-compatible:test-model');
      expect(ins.statement_evidence.text).not.toMatch(/^Reworded/);
    }
    expect(r.body.methodology.model).toMatchObject({ id: 'openai-compatible:test-model' });
    expect(r.body.methodology.deterministic).toBe(false);
    expect(r.body.credits_used).toBe(5);
  });

  it.each(['invented', 'error', 'hang'] as const)('%s: the deterministic text stays, with a MODEL_WARNING, at the same price', async (m) => {
    mode = m;
    const r = await ask();
    expect(r.status, r.text).toBe(200);
    for (const ins of r.body.key_insights) {
      expect(ins.statement).toBe(ins.statement_evidence.text);
      expect(ins).not.toHaveProperty('statement_generated_by');
    }
    expect(r.body.warnings.map((w: any) => w.code)).toContain('MODEL_WARNING');
    expect(r.body.methodology.deterministic).toBe(true);
    expect(r.body.credits_used).toBe(5);
  }, 30_000);
});
