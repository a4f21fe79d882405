/**
 * The built-in providers in a real server, each pointed at its loopback
 * stand-in (which answers as the real service does): with the default
 * provider list (local plus every keyless provider, computed by the real
 * settings code from the SCOUR_PROVIDER_<ID>_URL variables), the first
 * search returns results fused from all of them, each naming its
 * providers; each mapped filter reaches the provider's request; a failing,
 * a hanging and a rate-limiting provider leave the others answering with
 * warnings, and the rate-limiting one is paused (across processes in shared
 * mode); research with sources ["academic"] reads the scholarly providers'
 * works and cites them with DOI and authors.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScour, type Scour } from '../../config/container.js';
import { createLogger } from '../../adapters/logging/pino.js';
import { enabledSearchProviders, loadSettings, type Settings } from '../../config/env.js';
import { startScour, startScourIn, type Running } from '../support/server.js';
import { startArxiv, type FakeArxiv } from '../support/standins/arxiv.js';
import { startCrossref, type CrossrefStandin } from '../support/standins/crossref.js';
import { startHackernews, type HackernewsStandin } from '../support/standins/hackernews.js';
import { startOpenalex, work, type FakeOpenalex } from '../support/standins/openalex.js';
import { startStackexchange, type StackexchangeStandin } from '../support/standins/stackexchange.js';
import { startWikipedia, type FakeWikipedia } from '../support/standins/wikipedia.js';
import type { Standin } from '../support/standins/server.js';

const KEYLESS = ['wikipedia', 'openalex', 'arxiv', 'crossref', 'hackernews', 'stackexchange'];
const ADMIN = 'provider-e2e-admin-token-0123';
const NOW_S = Math.floor(Date.now() / 1000);

let wiki: FakeWikipedia;
let oa: FakeOpenalex;
let ax: FakeArxiv;
let cr: CrossrefStandin;
let hn: HackernewsStandin;
let se: StackexchangeStandin;
let all: Standin[];

const ABSTRACT_OA = 'We measure how an async runtime in Rust schedules tasks, and find that work stealing keeps tail latency low under load.';
const ABSTRACT_CR = 'This study compares async runtime designs for Rust and reports that cooperative scheduling reduces context switches by half.';

/** An inverted index of `text` as OpenAlex sends abstracts. */
function inverted(text: string): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  text.split(' ').forEach((w, i) => { (out[w] ??= []).push(i); });
  return out;
}

function seed(): void {
  wiki.setHits([
    { title: 'Async/await', snippet: 'In <span class="searchmatch">Rust</span>, an <span class="searchmatch">async</span> <span class="searchmatch">runtime</span> such as Tokio', timestamp: '2026-10-01T10:00:00Z', pageid: 1 },
    { title: 'Tokio (software)', snippet: 'Tokio is an <span class="searchmatch">async</span> <span class="searchmatch">runtime</span> for <span class="searchmatch">Rust</span>', timestamp: '2026-09-01T10:00:00Z', pageid: 2 },
  ]);
  oa.setWorks([
    work(1, {
      title: 'Work stealing in a Rust async runtime', display_name: 'Work stealing in a Rust async runtime', doi: 'https://doi.org/10.1234/rust.1',
      publication_date: '2025-05-01', publication_year: 2025, abstract_inverted_index: inverted(ABSTRACT_OA),
      primary_location: { is_oa: false, landing_page_url: `${target}/landing/oa1`, pdf_url: null, source: { id: 'https://openalex.org/S1', display_name: 'Journal of Systems', type: 'journal' } },
      open_access: { is_oa: true, oa_status: 'green', oa_url: `${target}/fulltext/oa1.pdf`, any_repository_has_fulltext: true },
      best_oa_location: { is_oa: true, landing_page_url: `${target}/fulltext/oa1.pdf`, pdf_url: `${target}/fulltext/oa1.pdf`, source: { id: 'https://openalex.org/S2', display_name: 'Repo', type: 'repository' } },
    }),
  ]);
  ax.setEntries([
    { id: '2501.01234', title: 'A Rust async runtime for embedded systems', summary: 'We present an async runtime for Rust on microcontrollers.', authors: ['Grace Hopper'], published: '2025-01-05T00:00:00Z' },
  ]);
  cr.setItems([{
    DOI: '10.5555/Rust.Async', type: 'journal-article', title: ['Async runtime designs for Rust'], URL: 'https://doi.org/10.5555/rust.async',
    author: [{ given: 'Barbara', family: 'Liskov', sequence: 'first', affiliation: [] }], 'container-title': ['Systems Letters'],
    published: { 'date-parts': [[2024, 3, 1]] }, issued: { 'date-parts': [[2024, 3, 1]] },
    abstract: `<jats:p>${ABSTRACT_CR}</jats:p>`, score: 12.5, publisher: 'Example Press', prefix: '10.5555', member: '1', source: 'Crossref', 'reference-count': 3,
  }]);
  hn.setItems([
    { objectID: '4001', title: 'Show HN: A tiny Rust async runtime', url: 'https://blog.example/rust-async-runtime', author: 'pat', points: 120, num_comments: 30, story_text: null, created_at_i: NOW_S - 3600, created_at: new Date((NOW_S - 3600) * 1000).toISOString() },
  ]);
  se.setQuestions([{
    tags: ['rust', 'async'], owner: { account_id: 1, reputation: 10, user_id: 2, user_type: 'registered', display_name: 'q', link: 'https://stackoverflow.com/users/2/q' },
    is_answered: true, view_count: 10, answer_count: 1, score: 5, last_activity_date: NOW_S - 100, creation_date: NOW_S - 7200, question_id: 777,
    content_license: 'CC BY-SA 4.0', link: 'https://stackoverflow.com/questions/777/which-rust-async-runtime', title: 'Which Rust async runtime should I use?',
    body: '<p>Choosing an async runtime for Rust: tokio or async-std?</p>',
  }]);
}

/** A loopback site for research's reads: landing pages, and a PDF-like full text with no readable text. */
let site: http.Server;
let target = '';
const siteHits: string[] = [];

function env(): Record<string, string> {
  return {
    SCOUR_PROVIDER_WIKIPEDIA_URL: `${wiki.url}/{lang}`,
    SCOUR_PROVIDER_OPENALEX_URL: oa.url,
    SCOUR_PROVIDER_ARXIV_URL: ax.url,
    SCOUR_PROVIDER_CROSSREF_URL: cr.url,
    SCOUR_PROVIDER_HACKERNEWS_URL: hn.url,
    SCOUR_PROVIDER_STACKEXCHANGE_URL: se.url,
    SCOUR_CONTACT_EMAIL: 'ops@scour.example.org',
  };
}

/** The settings a deployment with these variables gets: the real default provider list. */
function fromEnv(extra: Record<string, string> = {}): Partial<Settings> {
  const s = loadSettings({ ...env(), ...extra });
  return { providerSettings: s.providerSettings, contactEmail: s.contactEmail, searchProviders: enabledSearchProviders(s) };
}

beforeAll(async () => {
  [wiki, oa, ax, cr, hn, se] = await Promise.all([startWikipedia(), startOpenalex(), startArxiv(), startCrossref(), startHackernews(), startStackexchange()]);
  all = [wiki, oa, ax, cr, hn, se];
  site = http.createServer((req, res) => {
    siteHits.push(req.url ?? '');
    if (req.url?.endsWith('.pdf')) {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end('%PDF-1.4\n%\u00e2\u00e3\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not here');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  target = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all((all ?? []).map((s) => s.close()));
  await new Promise<void>((r) => site?.close(() => r()));
});

async function account(s: Running): Promise<string> {
  const r = await fetch(`${s.url}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'unicorn', credits: 10_000 }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { api_key: string }).api_key;
}

async function post(s: { url: string }, key: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

const reset = () => { for (const s of all) s.reset(); seed(); };

describe('the first search on a default install', () => {
  let s: Running;
  let key: string;
  beforeAll(async () => {
    seed();
    s = await startScour('uws', { adminToken: ADMIN, searchProviderTimeoutMs: 3000, ...fromEnv() });
    key = await account(s);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('the default list is local plus every keyless provider, in that order', () => {
    expect(fromEnv().searchProviders).toEqual(['local', ...KEYLESS]);
  });

  it('merges results from every keyless provider, each naming the providers that found it, and charges one search', async () => {
    reset();
    const r = await post(s, key, '/v1/search', { query: 'rust async runtime', max_results: 10 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.warnings).toBeUndefined();
    const sources = new Set<string>(r.body.search_results.flatMap((x: any) => x.source));
    expect([...sources].sort()).toEqual([...KEYLESS].sort());
    expect(r.body.credits_used).toBe(1);
    const byLink = new Map<string, any>(r.body.search_results.map((x: any) => [x.link, x]));
    // Fields mapped from each wire format.
    expect(byLink.get(`${wiki.url}/en/wiki/Tokio_(software)`)).toMatchObject({ title: 'Tokio (software)', source: ['wikipedia'], snippet: 'Tokio is an async runtime for Rust' });
    const w = byLink.get(`${wiki.url}/en/wiki/Tokio_(software)`);
    expect(w.highlights.map(([a, b]: [number, number]) => w.snippet.slice(a, b))).toEqual(['async', 'runtime', 'Rust']);
    expect(byLink.get('https://stackoverflow.com/questions/777/which-rust-async-runtime')).toMatchObject({ source: ['stackexchange'], type: 'social' });
    expect(byLink.get('https://blog.example/rust-async-runtime')).toMatchObject({ source: ['hackernews'] });
    expect(r.body.search_results.find((x: any) => x.source.includes('crossref'))).toMatchObject({ title: 'Async runtime designs for Rust', type: 'academic', date: '2024-03-01' });
    expect(r.body.search_results.find((x: any) => x.source.includes('arxiv'))).toMatchObject({ title: 'A Rust async runtime for embedded systems', type: 'academic' });
    // Each service was asked once, with the contact address where it asks for one.
    for (const st of all) expect(st.requests.length).toBe(1);
    expect(oa.requests[0]!.params.mailto).toBe('ops@scour.example.org');
    expect(cr.requests[0]!.params.mailto).toBe('ops@scour.example.org');
  });

  it('each mapped filter reaches the provider\'s request', async () => {
    reset();
    const r = await post(s, key, '/v1/search', { query: 'rust async runtime -java', language: 'de', time_range: 'year', max_results: 5 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const year = Date.now() - 366 * 86_400_000;
    // The language picks the wiki.
    expect(wiki.requests[0]!.path).toBe('/de/w/api.php');
    expect(wiki.requests[0]!.params.srsearch).toContain('-java');
    expect(oa.requests[0]!.params.filter).toContain('language:de');
    expect(oa.requests[0]!.params.filter).toMatch(/from_publication_date:\d{4}-\d{2}-\d{2}/);
    expect(ax.requests[0]!.params.search_query).toMatch(/submittedDate:\[\d{12} TO \d{12}\]/);
    expect(ax.requests[0]!.params.search_query).toContain('ANDNOT');
    expect(cr.requests[0]!.params.filter).toMatch(/from-pub-date:\d{4}-\d{2}-\d{2}/);
    const hnFilter = /created_at_i>=?(\d+)/.exec(hn.requests[0]!.params.numericFilters ?? '');
    expect(Number(hnFilter?.[1])).toBeGreaterThanOrEqual(Math.floor(year / 1000) - 86_400);
    expect(Number(se.requests[0]!.params.fromdate)).toBeGreaterThanOrEqual(Math.floor(year / 1000) - 86_400);
  });

  it('news goes only to the providers that have news: the others answer nothing without a request', async () => {
    reset();
    const r = await post(s, key, '/v1/search', { query: 'rust async runtime', result_type: 'news' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(hn.requests.length).toBe(1);
    for (const st of [wiki, oa, ax, cr, se]) expect(st.requests.length).toBe(0);
    expect(r.body.search_results.map((x: any) => x.source)).toEqual([['hackernews']]);
  });
});

describe('providers that fail, hang or rate-limit', () => {
  let s: Running & { config: string };
  let key: string;
  beforeAll(async () => {
    seed();
    s = await startScourIn('shared', 'node', { adminToken: ADMIN, searchProviderTimeoutMs: 1500, ...fromEnv() });
    key = await account(s);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('leave the others answering, each with a warning naming it; the rate-limiting one is paused for the time it asked, in every process', async () => {
    reset();
    wiki.setMode('error');
    oa.setMode('hang');
    cr.setMode('rate-limited', { retryAfter: 120 });
    const r = await post(s, key, '/v1/search', { query: 'rust async runtime' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const warn = new Map<string, any>(r.body.warnings.map((w: any) => [w.provider, w]));
    expect(warn.get('wikipedia')?.code).toMatch(/^PROVIDER_(FAILED|RATE_LIMITED)$/);
    expect(warn.get('openalex')?.code).toBe('PROVIDER_TIMEOUT');
    expect(warn.get('crossref')).toMatchObject({ code: 'PROVIDER_RATE_LIMITED' });
    expect(warn.get('crossref').message).toMatch(/paused for 120 s/);
    const sources = new Set<string>(r.body.search_results.flatMap((x: any) => x.source));
    expect([...sources].sort()).toEqual(['arxiv', 'hackernews', 'stackexchange']);

    // The next search leaves crossref alone (no request reaches it) and says why.
    const before = cr.requests.length;
    const again = await post(s, key, '/v1/search', { query: 'rust async runtime' });
    expect(again.status).toBe(200);
    expect(again.body.warnings.find((w: any) => w.provider === 'crossref')).toMatchObject({ code: 'PROVIDER_PAUSED' });
    expect(cr.requests.length).toBe(before);

    // Another process on the same PostgreSQL and Redis sees the pause within a second or so.
    const sink = createLogger('silent');
    const other: Scour = await createScour({ settings: { ...s.scour.settings, port: 0 }, logger: sink });
    try {
      const { url } = await other.start();
      await new Promise((r2) => setTimeout(r2, 1500));
      const third = await post({ url }, key, '/v1/search', { query: 'rust async runtime' });
      expect(third.status).toBe(200);
      expect(third.body.warnings.find((w: any) => w.provider === 'crossref')).toMatchObject({ code: 'PROVIDER_PAUSED' });
      expect(cr.requests.length).toBe(before);
    } finally {
      await other.stop();
    }
  }, 30_000);

  it('when every provider fails the search is a 502 naming each, and costs nothing', async () => {
    reset();
    const only = await startScourIn('embedded', 'node', { adminToken: ADMIN, searchProviderTimeoutMs: 1500, ...fromEnv({ SCOUR_SEARCH_PROVIDERS: 'wikipedia,arxiv' }) });
    try {
      const k = await account(only);
      const usage = async () => ((await (await fetch(`${only.url}/v1/usage`, { headers: { authorization: `Bearer ${k}` } })).json()) as any).credits_remaining as number;
      const before = await usage();
      wiki.setMode('error');
      ax.setMode('malformed');
      const r = await post(only, k, '/v1/search', { query: 'rust async runtime' });
      expect(r.status, JSON.stringify(r.body)).toBe(502);
      expect(r.body.code).toBe('SEARCH_UNAVAILABLE');
      expect(r.body.warnings.map((w: any) => [w.provider, w.code])).toEqual([['wikipedia', 'PROVIDER_FAILED'], ['arxiv', 'PROVIDER_FAILED']]);
      expect(await usage()).toEqual(before);
    } finally {
      await only.stop();
    }
  }, 30_000);
});

describe('research with sources ["academic"]', () => {
  let s: Running;
  let key: string;
  beforeAll(async () => {
    seed();
    // arXiv's links are arxiv.org's own (the stand-in answers as arXiv does): research would read them, so arXiv stays out here.
    s = await startScour('node', {
      adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviderTimeoutMs: 3000,
      ...fromEnv({ SCOUR_SEARCH_PROVIDERS: 'local,openalex,crossref,hackernews' }),
    });
    key = await account(s);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('builds its report from the scholarly providers\' works, read from their abstracts, citing them with DOI and authors', async () => {
    reset();
    siteHits.length = 0;
    const r = await post(s, key, '/v1/research', {
      research_query: 'How does a Rust async runtime schedule tasks?', sources: ['academic'], analysis_depth: 'quick', max_sources: 5,
      include_methodology: true, citation_format: 'apa',
    });
    expect(r.status, JSON.stringify(r.body).slice(0, 2000)).toBe(200);
    const b = r.body;
    // Hacker News (news and social) was not asked for academic sources.
    expect(hn.requests.length).toBe(0);
    expect(b.methodology.provider_selection.skipped).toEqual([{ id: 'hackernews', kinds: ['news', 'social'] }]);
    const byDoi = new Map<string, any>(b.sources_analyzed.map((x: any) => [x.doi, x]));
    const fromOa = byDoi.get('10.1234/rust.1');
    const fromCr = byDoi.get('10.5555/rust.async');
    expect(fromOa).toMatchObject({ type: 'academic', text_read: 'abstract', full_text_url: `${target}/fulltext/oa1.pdf` });
    expect(fromCr).toMatchObject({ type: 'academic', text_read: 'abstract' });
    // The open-access PDF was tried (it reads as no text today), the landing pages never.
    expect(siteHits).toContain('/fulltext/oa1.pdf');
    expect(siteHits.filter((h) => h.startsWith('/landing/'))).toEqual([]);
    const apa = b.citations.map((c: any) => c.text).join('\n');
    expect(apa).toContain('Lovelace');
    expect(apa).toContain('https://doi.org/10.1234/rust.1');
    expect(apa).toContain('Liskov');
    expect(apa).toContain('https://doi.org/10.5555/rust.async');
    // Evidence is verbatim from the abstracts that were read.
    const quotes: string[] = (b.key_insights ?? []).flatMap((k: any) => (k.evidence ?? []).map((e: any) => e.quote ?? e.text)).filter((q: unknown) => typeof q === 'string');
    for (const q of quotes) expect(ABSTRACT_OA.includes(q) || ABSTRACT_CR.includes(q), q).toBe(true);
  }, 60_000);
});
