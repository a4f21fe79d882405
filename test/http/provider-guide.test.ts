/**
 * The search provider example of docs/writing-plugins.md, taken from that page itself,
 * loaded as a plugin through SCOUR_PLUGINS and run by a real server against
 * a loopback stand-in for the SERP API it calls (its URL swapped for the
 * loopback one, nothing else changed): its results come back fused with the
 * local index's, named by its id, with the filter it does not apply applied
 * by Scour; its failure is a warning. If the guide drifts from the provider
 * contract, this fails.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'provider-guide-admin-token-012345';
const API = 'https://api.acme-serp.example/v1/search';

/** The ```ts block of docs/writing-plugins.md that defines the example provider. */
function readmeProvider(): string {
  const readme = readFileSync(join(process.cwd(), 'docs/writing-plugins.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const found = blocks.filter((b) => b.includes('defineSearchProvider') && b.includes(API));
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('the search provider example of docs/writing-plugins.md', () => {
  let api: http.Server;
  let apiUrl: string;
  let fail = false;
  const seen: { q: string | null; num: string | null; hl: string | null; auth: string | undefined }[] = [];
  let s: Running;
  let key: string;

  beforeAll(async () => {
    api = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      seen.push({ q: u.searchParams.get('q'), num: u.searchParams.get('num'), hl: u.searchParams.get('hl'), auth: req.headers.authorization });
      if (fail) {
        res.writeHead(500).end('boom');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        total: 42,
        items: [
          { link: 'https://docs.example.com/okapi', title: 'Okapi guide', snippet: 'All about the okapi.', date: '2026-11-01' },
          { link: 'https://blog.example.org/okapi', title: 'Okapi blog', snippet: 'Okapis in the wild.' },
        ],
      }));
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1/search`;

    const dir = mkdtempSync(join(tmpdir(), 'scour-provider-guide-'));
    const file = join(dir, 'serp-acme.ts');
    const source = readmeProvider()
      .replace("'../plugins/sdk/search.js'", JSON.stringify(join(process.cwd(), 'plugins/sdk/search.ts')))
      .replace(API, apiUrl);
    expect(source).toContain(apiUrl);
    writeFileSync(file, source);
    process.env.ACME_KEY = 'acme-test-key';
    s = await startScour('node', { adminToken: ADMIN, pluginPaths: [file], searchProviders: ['local', 'acme'] });
    key = (await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn' } })).body.api_key;
    await call(`${s.url}/admin/v1/index/documents`, 'POST', {
      auth: `Bearer ${ADMIN}`,
      body: { collection: 'shared', documents: [{ url: 'https://docs.example.com/okapi/', title: 'Okapi guide', text: 'The okapi lives in the Ituri rainforest.' }] },
    });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await new Promise((r) => api?.close(r));
    delete process.env.ACME_KEY;
  });

  it('is loaded, asked with the query, and fused with the local index under its own id', async () => {
    const r = await call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${key}`, body: { query: 'okapi', max_results: 5, language: 'en' } });
    expect(r.status, r.text).toBe(200);
    // It declares no filters it applies and the request has some (language, safe_search): it is asked for twice max_results.
    expect(seen.at(-1)).toEqual({ q: 'okapi', num: '10', hl: 'en', auth: 'Bearer acme-test-key' });
    const results = r.body.search_results as { link: string; source: string[]; published_date: string | null }[];
    // The same page from both providers is one result naming both.
    expect(results[0]).toMatchObject({ link: 'https://docs.example.com/okapi/', source: ['local', 'acme'] });
    expect(results.find((x) => x.link === 'https://blog.example.org/okapi')).toMatchObject({ source: ['acme'], published_date: null });
    expect(r.body.total_results).toBeGreaterThanOrEqual(42);
  });

  it('a filter it does not apply (site:) is applied by Scour to its results', async () => {
    const r = await call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${key}`, body: { query: 'okapi site:blog.example.org' } });
    expect(r.body.search_results.map((x: { link: string }) => x.link)).toEqual(['https://blog.example.org/okapi']);
  });

  it('its failure is a warning with the code it threw', async () => {
    fail = true;
    try {
      const r = await call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${key}`, body: { query: 'okapi' } });
      expect(r.status).toBe(200);
      expect(r.body.warnings).toEqual([expect.objectContaining({ provider: 'acme', code: 'PROVIDER_FAILED' })]);
      expect(r.body.search_results.map((x: { source: string[] }) => x.source)).toEqual([['local']]);
    } finally {
      fail = false;
    }
  });
});
