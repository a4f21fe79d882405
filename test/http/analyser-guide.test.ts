/**
 * The analyser example of docs/writing-plugins.md, taken from that page itself, loaded as a
 * plugin through SCOUR_PLUGINS and run by a real server in research
 * requests: its fields come back under extensions.key_figures, verbatim
 * spans of the sources (the report's integrity check passes them), only
 * for the analysis type it applies to, with its notes and time in the
 * methodology. If the guide drifts from the analyser contract, this fails.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { researchCorpus } from '../fixtures/research-corpus.js';

const ADMIN = 'analyser-guide-admin-token-0123';
const DOCS = researchCorpus();

function readmeAnalyser(): string {
  const readme = readFileSync(join(process.cwd(), 'docs/writing-plugins.md'), 'utf8');
  const found = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => b.includes('defineAnalyser'));
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('the analyser example of docs/writing-plugins.md', () => {
  let s: Running;
  let key: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scour-analyser-guide-'));
    const file = join(dir, 'analyser-key-figures.ts');
    const source = readmeAnalyser().replace("'../plugins/sdk/research.js'", JSON.stringify(join(process.cwd(), 'plugins/sdk/research.ts')));
    writeFileSync(file, source);
    s = await startScour('node', { adminToken: ADMIN, pluginPaths: [file], searchProviders: ['local'] });
    key = (await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn' } })).body.api_key;
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: DOCS } });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  const research = (body: Record<string, unknown>) => call(`${s.url}/v1/research`, 'POST', { auth: `Bearer ${key}`, body: { research_query: 'perovskite solar market growth and efficiency', include_methodology: true, ...body } });

  it('runs for a market analysis: verbatim sentences with a percentage under extensions.key_figures, noted and timed', async () => {
    const r = await research({ analysis_type: 'market' });
    expect(r.status, r.text).toBe(200);
    const figures = r.body.extensions.key_figures.figures as { source_id: string; text: string; start: number; end: number }[];
    expect(figures.length).toBeGreaterThan(0);
    const byId = new Map<string, string>(r.body.sources_analyzed.map((x: { id: string; url: string }) => [x.id, x.url]));
    for (const f of figures) {
      expect(f.text).toMatch(/\d+(\.\d+)?\s?(%|percent\b)/);
      const text = DOCS.find((d) => d.url === byId.get(f.source_id))!.text;
      expect(text.slice(f.start, f.end)).toBe(f.text);
    }
    expect(r.body.methodology.analysers.map((x: { id: string }) => x.id)).toContain('key_figures');
    expect(r.body.methodology.timings_ms).toHaveProperty('analyse:key_figures');
    // A source only the extension quotes is still "used", and cited.
    for (const f of figures) expect(r.body.sources_analyzed.find((x: { id: string }) => x.id === f.source_id).used).toBe(true);
  });

  it('does not run for another analysis type', async () => {
    const r = await research({ analysis_type: 'general' });
    expect(r.status, r.text).toBe(200);
    expect(r.body).not.toHaveProperty('extensions');
  });
});
