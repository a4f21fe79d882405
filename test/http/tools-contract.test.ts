/// <reference types="vite/client" />
/**
 * Every tool's case table, over real HTTP, against both adapters: the same
 * successes and the same hostile inputs as the in-process run, plus the
 * spec error body on every 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCaseFile } from '../support/tool-harness.js';
import { ADAPTERS, postJson, startScour, type Running } from '../support/server.js';

const files = Object.values(import.meta.glob<ToolCaseFile>('../tools/cases/*.ts', { eager: true, import: 'default' }));
const rows = files.flatMap((f) => f.cases.map((c) => [f.slug, c.name, c] as const));

describe.each(ADAPTERS)('tools over %s', (adapter) => {
  let s: Running;
  beforeAll(async () => {
    s = await startScour(adapter);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('serves all eleven spec tools', () => {
    const slugs = s.scour.registry.byKind('tool').map((t) => t.slug).sort();
    expect(slugs).toEqual([
      'base64-encoder', 'color-converter', 'html-entity-encoder', 'json-formatter', 'jwt-decoder', 'lorem-ipsum-generator',
      'regex-tester', 'robots-txt-generator', 'url-encoder', 'user-agent-parser', 'uuid-generator',
    ]);
  });

  it.each(rows)('%s: %s', async (slug, _name, c) => {
    const res = await postJson(`${s.url}/v1/tools/${slug}`, c.body === undefined ? {} : c.body);
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(c.status);
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000000');
    if (c.status === 400) {
      expect(res.body.code).toBe('MISSING_PARAMETER');
      expect(typeof res.body.error).toBe('string');
      expect(typeof res.body.timestamp).toBe('string');
      for (const f of c.fields ?? []) expect(res.body.validation_errors.map((e: { field: string }) => e.field)).toContain(f);
    }
    // The case tables describe the tool's own answer; the request id was checked above.
    const { request_id: _id, ...answer } = res.body;
    c.check?.(c.status === 200 ? answer : res.body);
  });
});
