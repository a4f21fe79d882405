/**
 * POST /v1/research over the real server: the response of spec 2.7 with
 * every flag on and off, the integrity rule (every quote verbatim at its
 * offsets in a source read in this request; citations only for used
 * sources), the hard filters (sources, timeframe, language,
 * geographic_focus), citation formats, credits by depth (and nothing
 * charged for failures or for a research that read nothing), 402, rate
 * limits, hostile input as 400s naming their fields, determinism, exports
 * fetched back, and the scraping path through a loopback SearXNG and
 * loopback pages.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody, type Reply } from '../support/http.js';
import { CONFIGS, startScourIn, type Running } from '../support/server.js';
import { startSearxng, type FakeSearxng } from '../support/searxng.js';
import { FULL_RESEARCH as FULL, researchCorpus, type FixtureDoc } from '../fixtures/research-corpus.js';

const ADMIN = 'research-contract-admin-token-01';
const NOW = Date.now();
const DOCS = researchCorpus(NOW);
const TEXT = new Map<string, string>(DOCS.map((d) => [d.url, d.text]));

interface Acct { id: string; key: string }
async function account(base: string, plan = 'unicorn', credits = 1000): Promise<Acct> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
  expect(r.status, r.text).toBe(201);
  return { id: r.body.account_id, key: r.body.api_key };
}
/**
 * One research request. Every 200 this suite gets is checked for the
 * integrity rule (expectIntegrity) against the texts it stored or served;
 * quotes from scraped pages are checked in their own test.
 */
async function research(base: string, key: string, body: unknown, texts: ((url: string) => string | undefined) | 'scraped' = (u) => TEXT.get(u)): Promise<Reply> {
  const r = await call(`${base}/v1/research`, 'POST', { auth: `Bearer ${key}`, body });
  if (r.status === 200 && texts !== 'scraped') expectIntegrity(r.body, texts);
  return r;
}
async function remaining(base: string, key: string): Promise<number> {
  return (await call(`${base}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_remaining;
}
function expect400(r: Reply, field: string, message?: RegExp) {
  expectErrorBody(r, 400, 'MISSING_PARAMETER');
  const issue = (r.body.validation_errors as { field: string; message: string }[]).find((v) => v.field === field);
  expect(issue, `${field} in ${r.text}`).toBeDefined();
  if (message) expect(issue!.message).toMatch(message);
}

interface Quote { source_id: string; text: string; start: number; end: number }
/** Every {source_id, text, start, end} in a body. */
function quotes(v: unknown, out: Quote[] = []): Quote[] {
  if (Array.isArray(v)) for (const x of v) quotes(x, out);
  else if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.source_id === 'string' && typeof o.text === 'string' && typeof o.start === 'number' && typeof o.end === 'number') out.push(o as unknown as Quote);
    for (const k of Object.keys(o)) quotes(o[k], out);
  }
  return out;
}

/**
 * The rule every research response keeps: each quote names a source of
 * sources_analyzed, is verbatim at its offsets in that source's stored text
 * (`texts`: what the test stored or served), and the sources quoted are
 * exactly the `used` ones, which are exactly the cited ones.
 */
function expectIntegrity(body: any, texts: (url: string) => string | undefined): number {
  const sources = new Map<string, any>(body.sources_analyzed.map((s: any) => [s.id, s]));
  const qs = quotes({ ...body, sources_analyzed: undefined, citations: undefined });
  for (const q of qs) {
    const s = sources.get(q.source_id);
    expect(s, `quote names ${q.source_id}`).toBeDefined();
    const text = texts(s.url);
    expect(text, `stored text of ${s.url}`).toBeDefined();
    expect(text!.slice(q.start, q.end)).toBe(q.text);
  }
  const used = new Set(qs.map((q) => q.source_id));
  for (const s of body.sources_analyzed) expect(s.used, `${s.id} used`).toBe(used.has(s.id));
  if (body.citations.length > 0) expect(new Set(body.citations.map((c: any) => c.source_id))).toEqual(used);
  return qs.length;
}


describe.each(CONFIGS)('POST /v1/research (%s)', (config) => {
  let s: Running;
  let base: string;
  let a: Acct;

  beforeAll(async () => {
    s = await startScourIn(config, 'uws', { adminToken: ADMIN, searchProviders: ['local'] });
    base = s.url;
    a = await account(base);
    const put = await call(`${base}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: DOCS } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.rejected).toEqual([]);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('answers spec 2.7 with every flag on: every part present, typed, traceable, and charged 10 at standard', async () => {
    const before = await remaining(base, a.key);
    const r = await research(base, a.key, FULL);
    expect(r.status, r.text).toBe(200);
    const b = r.body;
    for (const k of ['executive_summary', 'key_insights', 'entity_analysis', 'trend_analysis', 'sources_analyzed', 'citations', 'recommendations', 'methodology', 'visualization_data', 'processing_time', 'credits_used', 'remaining_credits', 'request_id']) {
      expect(b, k).toHaveProperty(k);
    }
    expect(b).not.toHaveProperty('export_url');
    expect(b.credits_used).toBe(10);
    expect(await remaining(base, a.key)).toBe(before - 10);
    expect(typeof b.processing_time).toBe('number');
    expect(b.sources_analyzed.length).toBeGreaterThanOrEqual(5);
    expect(b.sources_analyzed.length).toBeLessThanOrEqual(10);
    // The bread page says nothing about the question.
    expect(b.sources_analyzed.map((x: any) => x.url)).not.toContain('https://cooking.example.com/bread');
    for (const src of b.sources_analyzed) {
      expect(src.id).toMatch(/^src_\d+$/);
      expect(['academic', 'news', 'industry_reports', 'financial', 'social', 'web']).toContain(src.type);
      expect(src.relevance_score).toBeGreaterThanOrEqual(0);
      expect(src.relevance_score).toBeLessThanOrEqual(1);
      expect(src.relevance).toHaveProperty('search');
      expect(src.relevance).toHaveProperty('passages');
      expect(typeof src.used).toBe('boolean');
    }
    const byUrl = new Map<string, any>(b.sources_analyzed.map((x: any) => [x.url, x]));
    expect(byUrl.get('https://journal.example.edu/perovskite-stability-2023')).toMatchObject({ type: 'academic', author: 'Jane Smith, Ravi Patel', doi: '10.1234/jpv.2023.001', published_date: '2023-05-10T00:00:00.000Z' });
    expect(byUrl.get('https://markets.example.de/perovskite-outlook')?.type).toBe('industry_reports');

    // Insights: confidence in 0..1 with its parts, evidence verbatim, cross-references.
    expect(b.key_insights.length).toBeGreaterThan(0);
    for (const ins of b.key_insights) {
      expect(ins.id).toMatch(/^ins_\d+$/);
      expect(ins.confidence).toBeGreaterThanOrEqual(0);
      expect(ins.confidence).toBeLessThanOrEqual(1);
      const p = ins.confidence_parts;
      expect(ins.confidence).toBeCloseTo(0.5 * p.agreement + 0.25 * p.relevance + 0.15 * p.quality + 0.1 * p.recency, 3);
      expect(ins.supporting_evidence.length).toBeGreaterThan(0);
      expect(Array.isArray(ins.supporting_sources)).toBe(true);
      expect(Array.isArray(ins.contradicting_sources)).toBe(true);
      expect(ins.agreement).toBeGreaterThan(0);
    }
    // The moisture finding is stated by several sources on distinct domains.
    const moisture = b.key_insights.find((x: any) => /moisture/i.test(x.statement));
    expect(moisture, JSON.stringify(b.key_insights.map((x: any) => x.statement))).toBeDefined();
    expect(moisture.supporting_sources.length).toBeGreaterThanOrEqual(2);

    // Entities: the two requested, with mentions and sources.
    const ents = new Map<string, any>(b.entity_analysis.entities.map((e: any) => [e.name, e]));
    expect(ents.get('Oxford PV').mentions).toBeGreaterThanOrEqual(2);
    expect(ents.get('First Solar').mentions).toBeGreaterThanOrEqual(3);
    expect(ents.get('First Solar').sources.length).toBeGreaterThanOrEqual(2);

    expect(b.sentiment).toBeDefined();
    expect(typeof b.sentiment.method).toBe('string');
    expect(Array.isArray(b.trend_analysis)).toBe(true);
    for (const t of b.trend_analysis) {
      expect(['rising', 'falling', 'stable']).toContain(t.direction);
      expect(t.confidence).toBeGreaterThanOrEqual(0);
      expect(t.confidence).toBeLessThanOrEqual(1);
    }
    expect(typeof b.executive_summary).toBe('string');
    expect(b.executive_summary.length).toBeGreaterThan(0);
    for (const rec of b.recommendations) {
      expect(rec.generated_by).toBe('rules');
      expect(typeof rec.rationale).toBe('string');
      for (const id of rec.based_on) expect(b.key_insights.map((x: any) => x.id)).toContain(id);
    }
    const m = b.methodology;
    // Standard: at most 6, the plan's 4 (the question, its key phrases, the two entities with the main phrase) then up to 2 from the feedback round.
    expect(m.sub_queries.length).toBeGreaterThanOrEqual(4);
    expect(m.sub_queries.length).toBeLessThanOrEqual(6);
    expect(m.sub_queries[0]).toMatch(/perovskite/i);
    expect(m.sub_queries).toContain('Oxford PV perovskite solar cells');
    for (const q of m.sub_queries) expect(q).not.toMatch(/ (overview|analysis|impact)$/);
    expect(m.counts.found).toBeGreaterThanOrEqual(m.counts.analysed);
    expect(m.counts.analysed).toBe(b.sources_analyzed.length);
    expect(m.timings_ms).toHaveProperty('gather');
    expect(m.providers.map((p: any) => p.id)).toEqual(['local']);
    const names = b.visualization_data.series.map((x: any) => x.name);
    expect(names).toEqual(expect.arrayContaining(['sources_by_type', 'sources_by_year', 'entity_mentions', 'entity_network', 'sentiment_by_source']));
    for (const series of b.visualization_data.series) {
      expect(typeof series.x_label).toBe('string');
      expect(typeof series.y_label).toBe('string');
      expect(typeof series.unit).toBe('string');
    }
    // Citations: APA, one per used source.
    expect(b.citations.length).toBeGreaterThan(0);
    for (const c of b.citations) expect(c.format).toBe('apa');
    expect(expectIntegrity(b, (u) => TEXT.get(u))).toBeGreaterThan(0);
  }, 60_000);

  it('without the optional flags: only the always-listed fields', async () => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick' });
    expect(r.status, r.text).toBe(200);
    const b = r.body;
    for (const k of ['entity_analysis', 'trend_analysis', 'recommendations', 'methodology', 'visualization_data', 'export_url', 'sentiment']) expect(b, k).not.toHaveProperty(k);
    for (const k of ['executive_summary', 'key_insights', 'sources_analyzed', 'citations', 'processing_time', 'credits_used']) expect(b, k).toHaveProperty(k);
    expect(b.credits_used).toBe(5);
    expect(b.sources_analyzed.length).toBeLessThanOrEqual(5);
    expectIntegrity(b, (u) => TEXT.get(u));
  });

  it('generate_summary false gives an empty summary; include_citations false gives []', async () => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', generate_summary: false, include_citations: false });
    expect(r.status, r.text).toBe(200);
    expect(r.body.executive_summary).toBe('');
    expect(r.body.citations).toEqual([]);
  });

  it('sources is a hard filter: only academic sources are read', async () => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cell stability', sources: ['academic'], include_methodology: true });
    expect(r.status, r.text).toBe(200);
    expect(r.body.sources_analyzed.length).toBeGreaterThan(0);
    for (const src of r.body.sources_analyzed) expect(src.type).toBe('academic');
    expect(r.body.methodology.counts.dropped.source_type).toBeGreaterThan(0);
  });

  it('timeframe is a hard filter: only sources published in the window, undated ones left out', async () => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cells', timeframe: '2024', include_methodology: true });
    expect(r.status, r.text).toBe(200);
    expect(r.body.sources_analyzed.length).toBeGreaterThan(0);
    for (const src of r.body.sources_analyzed) expect(src.published_date).toMatch(/^2024-/);
    const r2 = await research(base, a.key, { research_query: 'perovskite solar cells', timeframe: '2019-2022' });
    expect(r2.status, r2.text).toBe(200);
    expect(r2.body.sources_analyzed).toEqual([]);
    expect(r2.body.credits_used).toBe(0);
    expect(r2.body.warnings.map((w: any) => w.code)).toContain('NO_SOURCES');
  });

  it('language and geographic_focus filter for real', async () => {
    const de = await research(base, a.key, { research_query: 'Perowskit Solarzellen Wirkungsgrad', language: 'de' });
    expect(de.status, de.text).toBe(200);
    for (const src of de.body.sources_analyzed) expect(src.language).toBe('de');
    const geo = await research(base, a.key, { research_query: 'perovskite solar cells', geographic_focus: ['DE'] });
    expect(geo.status, geo.text).toBe(200);
    expect(geo.body.sources_analyzed.length).toBeGreaterThan(0);
    for (const src of geo.body.sources_analyzed) {
      const text = TEXT.get(src.url)!;
      const doc = DOCS.find((d) => d.url === src.url)!;
      expect(doc.country === 'DE' || src.domain.endsWith('.de') || /Germany/.test(text), src.url).toBe(true);
    }
  });

  it.each(['apa', 'mla', 'chicago', 'harvard', 'ieee', 'vancouver', 'bibtex', 'ris'])('citation_format %s', async (format) => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', citation_format: format });
    expect(r.status, r.text).toBe(200);
    expect(r.body.citations.length).toBeGreaterThan(0);
    for (const c of r.body.citations) {
      expect(c.format).toBe(format);
      expect(c.text.length).toBeGreaterThan(10);
    }
    if (format === 'bibtex') expect(r.body.citations[0].text).toMatch(/^@\w+\{/);
    if (format === 'ris') expect(r.body.citations[0].text).toMatch(/^TY {2}- /m);
  });

  it('the same request gives the same report', async () => {
    const body = { ...FULL, analysis_depth: 'quick' };
    const strip = (x: any) => {
      const { processing_time: _p, request_id: _r, remaining_credits: _c, generated_at: _g, methodology, ...rest } = x;
      const { timings_ms: _t, analysers: _a, ...m } = methodology;
      return { ...rest, methodology: m };
    };
    const r1 = await research(base, a.key, body);
    const r2 = await research(base, a.key, body);
    expect(r1.status).toBe(200);
    expect(strip(r2.body)).toEqual(strip(r1.body));
  });

  it('credits: 5 / 10 / 15 by depth, 402 before any work when the balance is short, nothing charged on a 400', async () => {
    for (const [depth, price] of [['quick', 5], ['standard', 10], ['comprehensive', 15]] as const) {
      const acct = await account(base, 'unicorn', 100);
      const r = await research(base, acct.key, { research_query: 'perovskite solar cells', analysis_depth: depth });
      expect(r.status, r.text).toBe(200);
      expect(r.body.credits_used).toBe(price);
      expect(await remaining(base, acct.key)).toBe(100 - price);
    }
    const poor = await account(base, 'unicorn', 9);
    expectErrorBody(await research(base, poor.key, { research_query: 'perovskite solar cells' }), 402, 'NO_CREDITS');
    expect(await remaining(base, poor.key)).toBe(9);
    expect400(await research(base, poor.key, { research_query: 'perovskite', analysis_depth: 'deep' }), 'analysis_depth');
    expect(await remaining(base, poor.key)).toBe(9);
  });

  it('hostile input: every problem a 400 naming its field', async () => {
    const k = a.key;
    expect400(await research(base, k, {}), 'research_query');
    expect400(await research(base, k, { research_query: '' }), 'research_query');
    expect400(await research(base, k, { research_query: '   ' }), 'research_query');
    expect400(await research(base, k, { research_query: '?!' }), 'research_query');
    expect400(await research(base, k, { research_query: 'x'.repeat(1001) }), 'research_query');
    expect400(await research(base, k, { research_query: 'ok query', max_sources: 0 }), 'max_sources');
    expect400(await research(base, k, { research_query: 'ok query', max_sources: 51 }), 'max_sources');
    expect400(await research(base, k, { research_query: 'ok query', max_sources: 2.5 }), 'max_sources');
    expect400(await research(base, k, { research_query: 'ok query', entities: Array.from({ length: 51 }, (_, i) => `E${i}`) }), 'entities');
    expect400(await research(base, k, { research_query: 'ok query', entities: ['Acme', 'acme'] }), 'entities[1]');
    expect400(await research(base, k, { research_query: 'ok query', entities: [' '] }), 'entities[0]');
    expect400(await research(base, k, { research_query: 'ok query', sources: ['blogs'] }), 'sources[0]');
    expect400(await research(base, k, { research_query: 'ok query', sources: [] }), 'sources');
    expect400(await research(base, k, { research_query: 'ok query', citation_format: 'turabian' }), 'citation_format');
    expect400(await research(base, k, { research_query: 'ok query', export_format: 'xlsx' }), 'export_format');
    expect400(await research(base, k, { research_query: 'ok query', analysis_type: 'swot' }), 'analysis_type');
    expect400(await research(base, k, { research_query: 'ok query', confidence_threshold: 1.5 }), 'confidence_threshold');
    expect400(await research(base, k, { research_query: 'ok query', timeframe: 'last tuesday' }), 'timeframe');
    expect400(await research(base, k, { research_query: 'ok query', timeframe: '2023-2019' }), 'timeframe');
    expect400(await research(base, k, { research_query: 'ok query', language: 'english' }), 'language');
    expect400(await research(base, k, { research_query: 'ok query', unknown_field: 1 }), 'unknown_field');
    expect400(await research(base, k, { research_query: 'ok \ud800 query' }), 'research_query');
    expect400(await research(base, k, { research_query: 42 }), 'research_query');
    expect400(await research(base, k, { research_query: 'ok query', callback_url: 'not a url' }), 'callback_url');
  });

  it('every problem of a request in one 400: schema and semantic together', async () => {
    const r = await research(base, a.key, { research_query: '  ', max_sources: 0, timeframe: 'someday', entities: ['Acme', 'ACME'], citation_format: 'x', language: 'EN' });
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    const fields = (r.body.validation_errors as { field: string }[]).map((v) => v.field).sort();
    expect(fields).toEqual(['citation_format', 'entities[1]', 'language', 'max_sources', 'research_query', 'timeframe']);
    // One entry per enum field, listing the allowed values.
    const cf = (r.body.validation_errors as { field: string; message: string }[]).filter((v) => v.field === 'citation_format');
    expect(cf).toHaveLength(1);
    expect(cf[0]!.message).toMatch(/apa.*mla.*chicago.*harvard.*ieee.*vancouver.*bibtex.*ris/);
  });

  it('a callback the egress guard refuses is 400 TARGET_NOT_ALLOWED before anything is stored or charged', async () => {
    const acct = await account(base, 'unicorn', 50);
    const r = await research(base, acct.key, { research_query: 'perovskite solar cells', callback_url: 'http://10.0.0.1/hook' });
    expectErrorBody(r, 400, 'TARGET_NOT_ALLOWED');
    expect(await remaining(base, acct.key)).toBe(50);
  });

  it('the largest valid request is a 200: 50 entities, 20 focus areas and regions, a 1,000-character question, 50 sources', async () => {
    const r = await research(base, a.key, {
      research_query: `perovskite solar cells ${'stability and cost '.repeat(60)}`.slice(0, 1000),
      analysis_depth: 'comprehensive', max_sources: 50,
      entities: Array.from({ length: 50 }, (_, i) => (i === 0 ? 'First Solar' : `Entity ${i} (C++) [x]`)),
      focus_areas: Array.from({ length: 20 }, (_, i) => `aspect ${i}`),
      geographic_focus: ['US', 'Germany', 'GB', ...Array.from({ length: 17 }, (_, i) => `Region ${i}`)],
      include_sentiment: true, include_trends: true, generate_recommendations: true, include_methodology: true, visualization_data: true,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.entity_analysis.entities).toHaveLength(50);
    expect(r.body.credits_used).toBe(15);
  }, 60_000);

  it('unicode and odd questions are researched, not refused', async () => {
    for (const q of ['Perowskit-Solarzellen: Stabilität?', 'perovskite -solar "cells" site:example.com OR intitle:x', '钙钛矿 太阳能 perovskite', 'C++ (lang) perovskite']) {
      const r = await research(base, a.key, { research_query: q, analysis_depth: 'quick' });
      expect(r.status, `${q}: ${r.text}`).toBe(200);
      expectIntegrity(r.body, (u) => TEXT.get(u));
    }
  });

  it('rate limits follow table 8.2: the free plan gets 2 research requests a minute', async () => {
    const free = await account(base, 'free', 100);
    const body = { research_query: 'perovskite solar cells', analysis_depth: 'quick' };
    expect((await research(base, free.key, body)).status).toBe(200);
    expect((await research(base, free.key, body)).status).toBe(200);
    const third = await research(base, free.key, body);
    expectErrorBody(third, 429, 'RATE_LIMITED');
    expect(third.headers.get('retry-after')).not.toBeNull();
  });

  it('needs a key', async () => {
    expectErrorBody(await call(`${base}/v1/research`, 'POST', { body: { research_query: 'perovskite' } }), 401, 'UNAUTHORIZED');
  });
});

describe('exports', () => {
  let s: Running;
  let base: string;
  let a: Acct;
  beforeAll(async () => {
    s = await startScourIn('embedded', 'node', { adminToken: ADMIN, searchProviders: ['local'] });
    base = s.url;
    a = await account(base);
    const put = await call(`${base}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: DOCS } });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it.each([
    ['markdown', /text\/markdown/],
    ['html', /text\/html/],
    ['json', /application\/json/],
    ['csv', /text\/csv/],
    ['bibtex', /bibtex|text\/plain|x-bibtex/],
  ])('export_format %s: an unguessable URL that serves the report', async (format, type) => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', export_format: format });
    expect(r.status, r.text).toBe(200);
    expect(r.body.export_url).toMatch(new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/v1/research/exports/[A-Za-z0-9_-]{32}\\.\\w+$`));
    expect(Date.parse(r.body.export_expires_at)).toBeGreaterThan(Date.now());
    const got = await fetch(r.body.export_url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toMatch(type);
    const text = await got.text();
    if (format !== 'bibtex') expect(text).toContain(r.body.key_insights[0]?.statement.slice(0, 30) ?? '');
    else expect(text).toMatch(/@\w+\{/);
  });

  it('export_format pdf: printed by the service\'s Chromium, text readable with pdftotext', async () => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', export_format: 'pdf' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.warnings ?? []).toEqual([]);
    const got = await fetch(r.body.export_url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await got.arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const dir = mkdtempSync(join(tmpdir(), 'scour-pdf-'));
    try {
      writeFileSync(join(dir, 'r.pdf'), pdf);
      const text = execFileSync('pdftotext', [join(dir, 'r.pdf'), '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
      expect(text).toContain('perovskite solar cell stability');
      const firstWords = (r.body.key_insights[0].statement as string).split(/\s+/).slice(0, 4).join(' ');
      expect(text).toContain(firstWords);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('export_format docx: a Word document holding the report', async () => {
    const r = await research(base, a.key, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', export_format: 'docx' });
    expect(r.status, r.text).toBe(200);
    const got = await fetch(r.body.export_url);
    expect(got.status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'scour-docx-'));
    try {
      writeFileSync(join(dir, 'r.docx'), Buffer.from(await got.arrayBuffer()));
      const xml = execFileSync('unzip', ['-p', join(dir, 'r.docx'), 'word/document.xml'], { encoding: 'utf8' });
      expect(xml).toContain('perovskite solar cell stability');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('an unknown or malformed export token is 404', async () => {
    expectErrorBody(await call(`${base}/v1/research/exports/${'A'.repeat(32)}.pdf`, 'GET'), 404, 'NOT_FOUND');
    expectErrorBody(await call(`${base}/v1/research/exports/..%2F..%2Fetc%2Fpasswd`, 'GET'), 404, 'NOT_FOUND');
  });
});

describe('sources found by SearXNG are scraped through the scrape pipeline', () => {
  let sx: FakeSearxng;
  let pages: http.Server;
  let pagesUrl: string;
  let s: Running;
  let base: string;
  const served = new Map<string, string>();

  const article = (title: string, body: string, head = '') =>
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body><nav>Home | About</nav><article><h1>${title}</h1>${body}</article><footer>Copyright footer</footer></body></html>`;

  beforeAll(async () => {
    pages = http.createServer((req, res) => {
      // A page that answers only after 20 s (past any quick research's deadline).
      if ((req.url ?? '').startsWith('/slow/')) {
        const t = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(article('Slow graphene page', '<p>Graphene batteries are slow to load here.</p>')), 20_000);
        res.on('close', () => clearTimeout(t));
        return;
      }
      const html = served.get(req.url ?? '');
      if (html === undefined) { res.writeHead(404).end('missing'); return; }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    served.set('/paper', article('Graphene batteries charge faster',
      '<p>Graphene batteries charge five times faster than lithium-ion cells in our laboratory tests.</p><p>The graphene anode kept its capacity after 2,000 cycles.</p>',
      '<meta name="citation_title" content="Graphene batteries charge faster"><meta name="citation_author" content="Lee, Min"><meta name="citation_publication_date" content="2024/03/02"><meta name="citation_journal_title" content="Battery Letters"><meta name="citation_doi" content="10.1111/bl.2024.7">'));
    served.set('/news', article('Graphene battery startup raises funds',
      '<p>A graphene battery startup raised new funding this week.</p><p>Graphene batteries charge five times faster than lithium-ion cells, the company claims.</p>',
      '<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Graphene battery startup raises funds","datePublished":"2025-02-01","author":{"@type":"Person","name":"Sam Writer"}}</script>'));
    served.set('/gone', 'x');
    sx = await startSearxng();
    sx.setResults([
      { url: `${pagesUrl}/paper`, title: 'Graphene batteries charge faster', content: 'Graphene batteries charge five times faster.' },
      { url: `${pagesUrl}/news`, title: 'Graphene battery startup raises funds', content: 'A graphene battery startup raised new funding.' },
      { url: `${pagesUrl}/missing`, title: 'Graphene battery page that is gone', content: 'Graphene battery.' },
      { url: 'http://10.0.0.1/graphene', title: 'Graphene battery on a private network', content: 'Graphene battery.' },
    ]);
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, searxngUrl: sx.url, searchProviders: ['searxng'], allowPrivateTargets: 'loopback', searchProviderTimeoutMs: 2000 });
    base = s.url;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await sx?.close();
    pages?.closeAllConnections();
    await new Promise((r) => pages?.close(r));
  });

  it('scrapes what the index does not hold, with its citation metadata; failures and refused targets are dropped and counted', async () => {
    const a = await account(base);
    const r = await research(base, a.key, { research_query: 'graphene battery charging speed', include_methodology: true, citation_format: 'apa' }, 'scraped');
    expect(r.status, r.text).toBe(200);
    const b = r.body;
    const urls = b.sources_analyzed.map((x: any) => x.url);
    expect(urls).toEqual(expect.arrayContaining([`${pagesUrl}/paper`, `${pagesUrl}/news`]));
    const paper = b.sources_analyzed.find((x: any) => x.url === `${pagesUrl}/paper`);
    expect(paper).toMatchObject({ origin: 'scrape', type: 'academic', doi: '10.1111/bl.2024.7', author: 'Min Lee' });
    const news = b.sources_analyzed.find((x: any) => x.url === `${pagesUrl}/news`);
    expect(news).toMatchObject({ type: 'news', author: 'Sam Writer' });
    expect(news.published_date).toMatch(/^2025-02-01/);
    expect(b.methodology.counts.dropped).toMatchObject({ target_not_allowed: 1 });
    expect(Object.keys(b.methodology.counts.dropped).some((k) => k.startsWith('fetch_failed') || k.startsWith('http_'))).toBe(true);
    // Quotes are verbatim in what the page says (its text, without markup).
    const plain = (u: string) => {
      const html = served.get(new URL(u).pathname);
      return html?.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]+>/g, ' ');
    };
    for (const q of quotes({ ...b, sources_analyzed: undefined, citations: undefined })) {
      const src = b.sources_analyzed.find((x: any) => x.id === q.source_id);
      expect(plain(src.url)).toContain(q.text);
    }
    expect(b.key_insights.some((x: any) => /five times faster/.test(x.statement)), JSON.stringify(b.key_insights, null, 1) + JSON.stringify(b.sources_analyzed.map((s: any) => [s.url, s.text_length]))).toBe(true);
    const cited = b.citations.find((c: any) => c.source_id === paper.id);
    expect(cited.text).toMatch(/Lee, M\./);
  });

  it('at the deadline a research answers with what it has read, with DEADLINE_REACHED, and is charged', async () => {
    sx.setResults([
      { url: `${pagesUrl}/paper`, title: 'Graphene batteries charge faster', content: 'Graphene batteries charge five times faster.' },
      { url: `${pagesUrl}/news`, title: 'Graphene battery startup raises funds', content: 'A graphene battery startup raised new funding.' },
      ...[1, 2, 3, 4].map((n) => ({ url: `${pagesUrl}/slow/${n}`, title: `Graphene battery slow page ${n}`, content: 'Graphene battery.' })),
    ]);
    // The free plan reads one page at a time: the two quick pages, then a slow one until the 10 s deadline of quick.
    const free = await account(base, 'free', 100);
    const t0 = performance.now();
    const r = await research(base, free.key, { research_query: 'graphene battery charging speed', analysis_depth: 'quick', include_methodology: true }, 'scraped');
    const seconds = (performance.now() - t0) / 1000;
    expect(r.status, r.text).toBe(200);
    expect(seconds).toBeGreaterThan(8);
    expect(seconds).toBeLessThan(16);
    expect(r.body.warnings.map((w: any) => w.code)).toContain('DEADLINE_REACHED');
    expect(r.body.methodology.deadline_reached).toBe(true);
    expect(r.body.sources_analyzed.map((x: any) => x.url).sort()).toEqual([`${pagesUrl}/news`, `${pagesUrl}/paper`]);
    expect(r.body.key_insights.length).toBeGreaterThan(0);
    expect(r.body.credits_used).toBe(5);
  }, 30_000);
});

export type { FixtureDoc };
