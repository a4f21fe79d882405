/**
 * Research reads what scholarly and news providers return: a real Scour on
 * loopback with search-provider plugins defined here (an academic index, a
 * news wire, a general index and a reference work), whose results point at
 * pages this test serves on 127.0.0.1 (landing pages, open-access full
 * texts, a PDF-like full text, a missing one, news articles), every request
 * counted. Covers which providers `sources` asks (the others are never
 * called), which text is read for each work (the full text when it can be
 * read, else the abstract without touching the landing page, else the
 * page), the methodology that says so, the provider's DOI / authors /
 * venue / year in the citations, evidence verbatim in the abstract, and
 * news read from news-capable providers with their dates. Plus the pure
 * rules underneath (provider choice, the metadata precedence). Nothing
 * leaves 127.0.0.1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderKind, ProviderResult, SearchProviderPlugin } from '../../core/search.js';
import { selectProviders } from '../../plugins/operations/research/gather.js';
import { sourceMetaFrom } from '../../plugins/operations/research/source-meta.js';
import { defineSearchProvider } from '../../plugins/sdk/search.js';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'scholarly-sources-admin-token-0123';
const QUESTION = 'loopback cooling transistor efficiency';

// ---------------------------------------------------------------- the works

const ABSTRACT_A = 'We study loopback cooling of silicon transistors. Loopback cooling raises transistor efficiency by twelve percent in our bench tests. The gain holds across three process nodes.';
const ABSTRACT_B = 'This preprint measures transistor efficiency under loopback cooling in data centres. Loopback cooling improved transistor efficiency in every rack we instrumented over two winters.';
const ABSTRACT_C = 'A survey of cooling methods for dense transistor arrays. Among them, loopback cooling gives the largest transistor efficiency gain per watt spent on pumps and fans.';
const ABSTRACT_D = 'Field trial of loopback cooling at four sites. Loopback cooling raised transistor efficiency at every site, although the gain shrank in the hottest month of the trial.';
const ABSTRACT_F = 'We model the thermal budget of loopback cooling for server boards. The model predicts the transistor efficiency of each board from its coolant flow and inlet temperature.';

const FULL_TEXT_A = [
  'Loopback cooling of silicon transistors: the full study.',
  'Our bench tests show that loopback cooling raises transistor efficiency by twelve percent at nominal load.',
  'The efficiency gain held across the three process nodes we fabricated, and it grew with the clock rate.',
  'We describe the loopback coolant circuit, the thermal sensors and the statistical method in the sections below.',
];

const day = 86_400_000;
const A_DATE = Date.UTC(2023, 3, 5);
const D_DATE = Date.UTC(2021, 8, 1);
const NEWS_DATE = Date.now() - 3 * day;

interface Site {
  readonly url: string;
  /** Requests by path since the last reset. */
  readonly hits: Map<string, number>;
  readonly pages: Map<string, string>;
  close(): Promise<void>;
}

const article = (title: string, paragraphs: readonly string[], head = '') =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body><nav>Home | Journals</nav><article><h1>${title}</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</article><footer>Site footer</footer></body></html>`;

async function startSite(): Promise<Site> {
  const hits = new Map<string, number>();
  const pages = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/fulltext/b.pdf') {
      // A PDF: the page pipeline reads no text from it (PDF reading comes later).
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n'));
      return;
    }
    const html = pages.get(path);
    if (html === undefined) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, hits, pages,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A provider that answers every query with the same results, counting its calls. */
function provider(id: string, kinds: readonly ProviderKind[] | undefined, results: () => readonly ProviderResult[]): SearchProviderPlugin & { calls: number } {
  const p = defineSearchProvider({
    name: `search-provider-${id}`,
    id,
    ...(kinds === undefined ? {} : { kinds }),
    description: `test provider ${id}`,
    async search() {
      p.calls++;
      return { results: results(), total: undefined, applied: new Set() };
    },
  }) as SearchProviderPlugin & { calls: number };
  p.calls = 0;
  return p;
}

// ---------------------------------------------------------------- evidence

interface Quote { source_id: string; text: string; start: number; end: number }
function quotes(v: unknown, out: Quote[] = []): Quote[] {
  if (Array.isArray(v)) for (const x of v) quotes(x, out);
  else if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.source_id === 'string' && typeof o.text === 'string' && typeof o.start === 'number' && typeof o.end === 'number') out.push(o as unknown as Quote);
    for (const k of Object.keys(o)) quotes(o[k], out);
  }
  return out;
}

const plain = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]+>/g, ' ');

describe('research over scholarly and news providers', () => {
  let site: Site;
  let s: Running;
  let key: string;
  let scholar: ReturnType<typeof provider>;
  let wire: ReturnType<typeof provider>;
  let general: ReturnType<typeof provider>;
  let refbook: ReturnType<typeof provider>;
  let catalog: ReturnType<typeof provider>;

  const research = async (body: Record<string, unknown>) => {
    const r = await call(`${s.url}/v1/research`, 'POST', { auth: `Bearer ${key}`, body });
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const bySuffix = (b: any, path: string) => b.sources_analyzed.find((x: any) => x.url === `${site.url}${path}`);

  beforeAll(async () => {
    site = await startSite();
    const u = site.url;
    site.pages.set('/fulltext/a.html', article('Loopback cooling of silicon transistors', FULL_TEXT_A,
      // The repository's own tags: a shortened author list and its own name; the scholarly index's record wins over them.
      '<meta name="citation_author" content="Lovelace, A."><meta name="citation_journal_title" content="Loopback Repository">'));
    for (const w of ['a', 'b', 'c', 'd']) site.pages.set(`/landing/${w}`, article(`Landing page ${w}`, ['Sign in to read this article. Institutional access required for this loopback cooling paper about transistor efficiency.']));
    site.pages.set('/landing/e', article('Pump power and loopback cooling', [
      'Loopback cooling lowers pump power while keeping transistor efficiency at its peak, our measurements show.',
      'We report the transistor efficiency of loopback cooling under partial load, where earlier studies found losses.',
    ], '<meta name="citation_title" content="Pump power and loopback cooling"><meta name="citation_author" content="Hopper, Grace"><meta name="citation_publication_date" content="2022/02/14"><meta name="citation_doi" content="10.5555/scour.e">'));
    site.pages.set('/news/1', article('Loopback cooling startup claims efficiency record', [
      'A startup says loopback cooling raised transistor efficiency in its new server racks this week.',
      'Analysts said the transistor efficiency claims of loopback cooling still need independent tests.',
    ], `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Loopback cooling startup claims efficiency record","author":{"@type":"Person","name":"Rita Reporter"}}</script>`));
    site.pages.set('/news/2', article('Chip makers weigh loopback cooling', [
      'Chip makers are weighing loopback cooling after reports of higher transistor efficiency in trials.',
      'Loopback cooling could reach volume servers next year if transistor efficiency gains hold up.',
    ], `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Chip makers weigh loopback cooling","datePublished":"${new Date(NEWS_DATE - day).toISOString()}"}</script>`));
    site.pages.set('/wiki/loopback', article('Loopback cooling (reference)', ['Loopback cooling is a method of cooling transistors that recirculates coolant; it is said to raise transistor efficiency.']));

    const work = (w: string, extra: Partial<ProviderResult>): ProviderResult => ({
      url: `${u}/landing/${w}`, title: `Work ${w.toUpperCase()} on loopback cooling and transistor efficiency`, snippet: 'Loopback cooling and transistor efficiency.',
      publishedAt: null, ...extra,
    });
    scholar = provider('scholar', ['academic'], () => [
      work('a', {
        title: 'Loopback cooling of silicon transistors', publishedAt: A_DATE, doi: '10.5555/scour.a', authors: ['Ada Lovelace', 'Charles Babbage'],
        venue: 'Journal of Loopback Studies', fullTextUrl: `${u}/fulltext/a.html`, abstract: ABSTRACT_A,
      }),
      work('b', { doi: '10.5555/scour.b', authors: ['Alan Turing'], venue: 'Loopback Preprints', publishedAt: Date.UTC(2024, 0, 10), fullTextUrl: `${u}/fulltext/b.pdf`, abstract: ABSTRACT_B }),
      work('c', { doi: '10.5555/scour.c', authors: ['Edsger Dijkstra'], venue: 'Cooling Reviews', publishedAt: Date.UTC(2020, 5, 1), fullTextUrl: `${u}/fulltext/gone.html`, abstract: ABSTRACT_C }),
      work('d', { title: 'A field trial of loopback cooling', doi: '10.5555/scour.d', authors: ['Barbara Liskov', 'John McCarthy'], venue: 'Journal of Loopback Studies', publishedAt: D_DATE, abstract: ABSTRACT_D }),
      // A PDF and no abstract: the landing page is all there is to read.
      work('e', { venue: 'Pump Letters', fullTextUrl: `${u}/fulltext/b.pdf` }),
      // Known here without its abstract and authors: the catalog below has them.
      work('f', { doi: '10.5555/scour.f', publishedAt: Date.UTC(2019, 0, 1) }),
      // Work A again, under a repository's URL: the same DOI is one source.
      { url: `${u}/mirror/a`, title: 'Loopback cooling of silicon transistors (repository copy)', snippet: 'Loopback cooling.', publishedAt: A_DATE, doi: '10.5555/SCOUR.A', abstract: `${ABSTRACT_A} Repository copy.` },
    ]);
    catalog = provider('catalog', ['academic'], () => [
      work('f', { doi: '10.5555/scour.f', authors: ['Frances Allen'], venue: 'Board Thermal Notes', abstract: ABSTRACT_F }),
    ]);
    wire = provider('wire', ['news'], () => [
      // A news wire's "authors" is whoever posted the link: the article's own byline wins.
      { url: `${u}/news/1`, title: 'Loopback cooling startup claims efficiency record', snippet: 'A startup says loopback cooling raised transistor efficiency.', publishedAt: NEWS_DATE, type: 'news', authors: ['link_poster'], venue: 'Wire Digest' },
    ]);
    general = provider('general', undefined, () => [
      { url: `${u}/news/2`, title: 'Chip makers weigh loopback cooling', snippet: 'Chip makers are weighing loopback cooling.', publishedAt: NEWS_DATE - day, type: 'news' },
    ]);
    refbook = provider('refbook', ['reference'], () => [
      { url: `${u}/wiki/loopback`, title: 'Loopback cooling', snippet: 'Loopback cooling is a method of cooling transistors.', publishedAt: null },
    ]);

    s = await startScour('node', {
      adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local', 'scholar', 'catalog', 'wire', 'general', 'refbook'], searchProviderTimeoutMs: 2000,
    }, { plugins: [scholar, catalog, wire, general, refbook] });
    const acct = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    expect(acct.status, acct.text).toBe(201);
    key = acct.body.api_key;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });
  beforeEach(() => {
    site.hits.clear();
    for (const p of [scholar, catalog, wire, general, refbook]) p.calls = 0;
  });

  it('sources: ["academic"] asks only academic and general providers, reads full texts, falls back to abstracts without the landing page, and says so', async () => {
    const b = await research({ research_query: QUESTION, sources: ['academic'], analysis_depth: 'quick', max_sources: 10, include_methodology: true });
    // Which providers: the news wire and the reference work were never called.
    expect(scholar.calls).toBeGreaterThan(0);
    expect(catalog.calls).toBeGreaterThan(0);
    expect(general.calls).toBeGreaterThan(0);
    expect(wire.calls).toBe(0);
    expect(refbook.calls).toBe(0);
    const m = b.methodology;
    expect(m.provider_selection).toEqual({
      wanted_kinds: ['academic'],
      asked: ['local', 'scholar', 'catalog', 'general'],
      skipped: [{ id: 'wire', kinds: ['news'] }, { id: 'refbook', kinds: ['reference'] }],
    });
    expect(m.providers.map((p: any) => p.id)).toEqual(['local', 'scholar', 'catalog', 'general']);

    // Which text of each work.
    const a = bySuffix(b, '/landing/a');
    const bb = bySuffix(b, '/landing/b');
    const c = bySuffix(b, '/landing/c');
    const d = bySuffix(b, '/landing/d');
    const e = bySuffix(b, '/landing/e');
    expect(a).toMatchObject({ type: 'academic', text_read: 'full_text', origin: 'scrape', full_text_url: `${site.url}/fulltext/a.html` });
    expect(bb).toMatchObject({ type: 'academic', text_read: 'abstract', origin: 'provider', text_length: ABSTRACT_B.length, full_text_url: `${site.url}/fulltext/b.pdf` });
    expect(c).toMatchObject({ type: 'academic', text_read: 'abstract', origin: 'provider', text_length: ABSTRACT_C.length });
    expect(d).toMatchObject({ type: 'academic', text_read: 'abstract', origin: 'provider', text_length: ABSTRACT_D.length });
    expect(d).not.toHaveProperty('full_text_url');
    expect(e).toMatchObject({ type: 'academic', text_read: 'page', origin: 'scrape', doi: '10.5555/scour.e', author: 'Grace Hopper' });
    // One work from two providers: the first one's record, its gaps (abstract, authors, venue) filled from the other.
    const f = bySuffix(b, '/landing/f');
    expect(f).toMatchObject({ text_read: 'abstract', text_length: ABSTRACT_F.length, author: 'Frances Allen', container: 'Board Thermal Notes', doi: '10.5555/scour.f', providers: ['scholar', 'catalog'] });
    // The repository copy of work A has A's DOI: dropped, and never fetched.
    expect(b.sources_analyzed.map((x: any) => x.url)).not.toContain(`${site.url}/mirror/a`);
    expect(m.counts.dropped.duplicate_doi).toBe(1);
    // The news page of the general provider is not academic.
    expect(b.sources_analyzed.map((x: any) => x.url)).not.toContain(`${site.url}/news/2`);
    expect(m.counts.dropped.source_type).toBeGreaterThanOrEqual(1);

    // The landing pages of works read from their full text or abstract were never fetched; the full texts were.
    for (const w of ['a', 'b', 'c', 'd', 'f']) expect(site.hits.get(`/landing/${w}`) ?? 0, `/landing/${w}`).toBe(0);
    expect(site.hits.get('/mirror/a') ?? 0).toBe(0);
    expect(site.hits.get('/landing/e')).toBeGreaterThan(0);
    expect(site.hits.get('/fulltext/a.html')).toBeGreaterThan(0);
    expect(site.hits.get('/fulltext/b.pdf')).toBeGreaterThan(0);
    expect(site.hits.get('/fulltext/gone.html')).toBeGreaterThan(0);

    // The methodology, per source.
    const texts = new Map<string, any>(m.source_texts.map((x: any) => [x.source_id, x]));
    expect(texts.get(a.id)).toEqual({ source_id: a.id, text: 'full_text', characters: a.text_length, full_text_url: `${site.url}/fulltext/a.html` });
    expect(texts.get(bb.id)).toMatchObject({ text: 'abstract', characters: ABSTRACT_B.length, full_text_url: `${site.url}/fulltext/b.pdf` });
    expect(texts.get(bb.id).full_text_failed).toMatch(/^(too_little_text|fetch_failed:)/);
    expect(texts.get(c.id)).toMatchObject({ text: 'abstract', full_text_url: `${site.url}/fulltext/gone.html` });
    expect(texts.get(c.id).full_text_failed).toMatch(/^(http_404|fetch_failed:)/);
    expect(texts.get(d.id)).toEqual({ source_id: d.id, text: 'abstract', characters: ABSTRACT_D.length });
    expect(texts.get(e.id)).toMatchObject({ text: 'page', full_text_url: `${site.url}/fulltext/b.pdf` });
    expect(m.counts).toMatchObject({ from_provider: 4, scraped: 2, from_index: 0, texts: { full_text: 1, abstract: 4, page: 1, index: 0 } });

    // Provider metadata in sources_analyzed: the scholarly index's record wins over the repository's tags.
    expect(a).toMatchObject({ doi: '10.5555/scour.a', author: 'Ada Lovelace, Charles Babbage', container: 'Journal of Loopback Studies', published_date: new Date(A_DATE).toISOString() });
    expect(d).toMatchObject({ doi: '10.5555/scour.d', author: 'Barbara Liskov, John McCarthy', container: 'Journal of Loopback Studies', published_date: new Date(D_DATE).toISOString() });

    // Evidence: verbatim at its offsets in the abstract (the abstract string is the text), in the full text's words for A.
    const abstracts = new Map<string, string>([[bb.id, ABSTRACT_B], [c.id, ABSTRACT_C], [d.id, ABSTRACT_D], [f.id, ABSTRACT_F]]);
    const qs = quotes({ ...b, sources_analyzed: undefined, citations: undefined, methodology: undefined });
    expect(qs.length).toBeGreaterThan(0);
    let fromAbstracts = 0;
    for (const q of qs) {
      const abs = abstracts.get(q.source_id);
      if (abs !== undefined) {
        expect(abs.slice(q.start, q.end)).toBe(q.text);
        fromAbstracts++;
      } else if (q.source_id === a.id) {
        expect(plain(site.pages.get('/fulltext/a.html')!)).toContain(q.text);
        expect(FULL_TEXT_A.some((p) => p.includes(q.text))).toBe(true);
      }
    }
    expect(fromAbstracts).toBeGreaterThan(0);
  }, 60_000);

  it.each([
    ['apa', (t: string) => {
      expect(t).toContain('Lovelace, A., & Babbage, C. (2023).');
      expect(t).toContain('Journal of Loopback Studies');
      expect(t).toContain('https://doi.org/10.5555/scour.a');
    }, (t: string) => {
      expect(t).toContain('Liskov, B., & McCarthy, J. (2021).');
      expect(t).toContain('https://doi.org/10.5555/scour.d');
    }],
    ['bibtex', (t: string) => {
      expect(t).toMatch(/^@article\{src_\d+,/);
      expect(t).toMatch(/author = \{Lovelace, Ada and Babbage, Charles\}/);
      expect(t).toMatch(/journal = \{Journal of Loopback Studies\}/);
      expect(t).toMatch(/year = \{2023\}/);
      expect(t).toMatch(/doi = \{10\.5555\/scour\.a\}/);
    }, (t: string) => {
      expect(t).toMatch(/author = \{Liskov, Barbara and McCarthy, John\}/);
      expect(t).toMatch(/year = \{2021\}/);
      expect(t).toMatch(/doi = \{10\.5555\/scour\.d\}/);
    }],
    ['ris', (t: string) => {
      expect(t).toMatch(/^TY {2}- JOUR$/m);
      expect(t).toMatch(/^AU {2}- Lovelace, Ada$/m);
      expect(t).toMatch(/^AU {2}- Babbage, Charles$/m);
      expect(t).toMatch(/^(JO|T2|JF) {2}- Journal of Loopback Studies$/m);
      expect(t).toMatch(/^(PY|DA|Y1) {2}- 2023/m);
      expect(t).toMatch(/^DO {2}- 10\.5555\/scour\.a$/m);
    }, (t: string) => {
      expect(t).toMatch(/^AU {2}- Liskov, Barbara$/m);
      expect(t).toMatch(/^DO {2}- 10\.5555\/scour\.d$/m);
    }],
    ['ieee', (t: string) => {
      expect(t).toContain('A. Lovelace and C. Babbage');
      expect(t).toContain('Journal of Loopback Studies');
      expect(t).toContain('2023');
      expect(t).toContain('10.5555/scour.a');
    }, (t: string) => {
      expect(t).toContain('B. Liskov and J. McCarthy');
      expect(t).toContain('10.5555/scour.d');
    }],
  ] as const)('citation_format %s carries the provider\'s DOI, authors, venue and year (full text and abstract alike)', async (format, checkA, checkD) => {
    // Standard depth: both works must be cited; at quick depth five insights may all come from the other sources' statements.
    const b = await research({ research_query: QUESTION, sources: ['academic'], analysis_depth: 'standard', max_sources: 10, citation_format: format });
    const a = bySuffix(b, '/landing/a');
    const d = bySuffix(b, '/landing/d');
    const cited = new Map<string, any>(b.citations.map((c: any) => [c.source_id, c]));
    expect(cited.get(a.id), `${a.id} cited: ${JSON.stringify(b.citations.map((c: any) => c.source_id))}`).toBeDefined();
    expect(cited.get(d.id), `${d.id} cited`).toBeDefined();
    // The citation names the work's own URL (the landing page), not the full text's.
    expect(cited.get(a.id).url).toBe(`${site.url}/landing/a`);
    checkA(cited.get(a.id).text);
    checkD(cited.get(d.id).text);
  }, 60_000);

  it('sources: ["news"] asks news-capable providers (and general ones), not the scholarly index; news keep their dates and bylines', async () => {
    const b = await research({ research_query: QUESTION, sources: ['news'], analysis_depth: 'quick', include_methodology: true });
    expect(wire.calls).toBeGreaterThan(0);
    expect(general.calls).toBeGreaterThan(0);
    expect(scholar.calls + catalog.calls).toBe(0);
    expect(refbook.calls).toBe(0);
    expect(b.methodology.provider_selection).toEqual({
      wanted_kinds: ['news'], asked: ['local', 'wire', 'general'],
      skipped: [{ id: 'scholar', kinds: ['academic'] }, { id: 'catalog', kinds: ['academic'] }, { id: 'refbook', kinds: ['reference'] }],
    });
    const n1 = bySuffix(b, '/news/1');
    const n2 = bySuffix(b, '/news/2');
    expect(n1).toMatchObject({ type: 'news', text_read: 'page', origin: 'scrape', author: 'Rita Reporter' });
    // The page gives no date: the wire's date stands.
    expect(n1.published_date).toBe(new Date(NEWS_DATE).toISOString());
    expect(n2).toMatchObject({ type: 'news', text_read: 'page' });
    expect(n2.published_date).toBe(new Date(NEWS_DATE - day).toISOString());
    for (const src of b.sources_analyzed) expect(src.type).toBe('news');
    expect(site.hits.get('/landing/a') ?? 0).toBe(0);
  }, 60_000);

  it('without sources every provider is asked, as before', async () => {
    const b = await research({ research_query: QUESTION, analysis_depth: 'quick', include_methodology: true });
    for (const p of [scholar, catalog, wire, general, refbook]) expect(p.calls, p.id).toBeGreaterThan(0);
    expect(b.methodology.provider_selection).toEqual({ wanted_kinds: null, asked: ['local', 'scholar', 'catalog', 'wire', 'general', 'refbook'], skipped: [] });
  }, 60_000);

  it('sources: ["web"] asks web and reference providers', async () => {
    const b = await research({ research_query: QUESTION, sources: ['web'], analysis_depth: 'quick', include_methodology: true });
    expect(refbook.calls).toBeGreaterThan(0);
    expect(scholar.calls + catalog.calls).toBe(0);
    expect(wire.calls).toBe(0);
    expect(b.methodology.provider_selection).toMatchObject({ wanted_kinds: ['web', 'reference'], asked: ['local', 'general', 'refbook'] });
    expect(b.sources_analyzed.map((x: any) => x.url)).toContain(`${site.url}/wiki/loopback`);
  }, 60_000);

  it('sources no enabled provider can serve: a warning, no sources, nothing charged', async () => {
    const b = await research({ research_query: QUESTION, sources: ['social'], analysis_depth: 'quick', include_methodology: true });
    expect(b.sources_analyzed).toEqual([]);
    expect(b.credits_used).toBe(0);
    // local and general (no kinds) are still asked; they return nothing social.
    expect(b.methodology.provider_selection.asked).toEqual(['local', 'general']);
    expect(scholar.calls + catalog.calls + wire.calls + refbook.calls).toBe(0);
  }, 60_000);
});

// ---------------------------------------------------------------- the rules underneath

describe('provider choice by source type', () => {
  const p = (id: string, kinds?: readonly ProviderKind[]) => defineSearchProvider({
    name: `search-provider-${id}`, id, ...(kinds === undefined ? {} : { kinds }), async search() { return { results: [], total: 0, applied: new Set() }; },
  });
  const all = [p('local'), p('openalex', ['academic']), p('hn', ['news', 'social']), p('brave', ['web', 'news']), p('wikipedia', ['reference']), p('se', ['social', 'reference'])];
  const ids = (x: { asked: readonly { id: string }[] }) => x.asked.map((q) => q.id);

  it('asks every provider without sources', () => {
    expect(selectProviders(all, undefined)).toMatchObject({ wantedKinds: null, skipped: [] });
    expect(ids(selectProviders(all, undefined))).toEqual(all.map((q) => q.id));
  });
  it('maps each source type to provider kinds; undefined kinds are always asked', () => {
    expect(ids(selectProviders(all, ['academic']))).toEqual(['local', 'openalex']);
    expect(ids(selectProviders(all, ['news']))).toEqual(['local', 'hn', 'brave']);
    expect(ids(selectProviders(all, ['social']))).toEqual(['local', 'hn', 'se']);
    for (const t of ['web', 'industry_reports', 'financial'] as const) expect(ids(selectProviders(all, [t]))).toEqual(['local', 'brave', 'wikipedia', 'se']);
    const mixed = selectProviders(all, ['academic', 'news']);
    expect(ids(mixed)).toEqual(['local', 'openalex', 'hn', 'brave']);
    expect(mixed.wantedKinds).toEqual(['academic', 'news']);
    expect(mixed.skipped).toEqual([{ id: 'wikipedia', kinds: ['reference'] }, { id: 'se', kinds: ['social', 'reference'] }]);
  });
});

describe('provider metadata in a source\'s citation record', () => {
  const page = { citation_author: ['Lovelace, A.'], citation_journal_title: 'Loopback Repository', citation_doi: '10.9999/repo.1' };
  const record = { doi: 'https://doi.org/10.5555/SCOUR.A', authors: ['Ada Lovelace', 'Charles Babbage'], venue: 'Journal of Loopback Studies' };

  it('a scholarly index\'s record wins over the page\'s tags for DOI, authors and venue', () => {
    const m = sourceMetaFrom({ url: 'https://repo.example/a', title: 'A', metaData: page, provider: { ...record, authoritative: true } });
    expect(m).toMatchObject({ doi: '10.5555/SCOUR.A', authors: ['Ada Lovelace', 'Charles Babbage'], container: 'Journal of Loopback Studies', cslType: 'article-journal' });
  });
  it('another provider\'s record only fills what the page leaves empty', () => {
    const m = sourceMetaFrom({ url: 'https://repo.example/a', title: 'A', metaData: page, provider: record });
    expect(m).toMatchObject({ doi: '10.9999/repo.1', authors: ['A. Lovelace'], container: 'Loopback Repository' });
    const bare = sourceMetaFrom({ url: 'https://news.example/a', title: 'A', provider: record });
    expect(bare).toMatchObject({ doi: '10.5555/SCOUR.A', authors: ['Ada Lovelace', 'Charles Babbage'], container: 'Journal of Loopback Studies', cslType: 'webpage' });
  });
  it('an abstract read alone takes everything from the record, the title and date from the result', () => {
    const m = sourceMetaFrom({ url: 'https://doi.org/10.5555/scour.d', indexed: { title: 'A field trial', publishedAt: D_DATE, type: null }, provider: { ...record, authoritative: true } });
    expect(m).toMatchObject({ title: 'A field trial', publishedAt: D_DATE, authors: ['Ada Lovelace', 'Charles Babbage'], container: 'Journal of Loopback Studies', cslType: 'article-journal' });
  });
});
