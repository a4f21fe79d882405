/**
 * The local search index (the SearchIndex port) on both backends: one
 * contract suite run on SQLite (embedded) and PostgreSQL (a fresh database
 * per suite), and a check that both rank the same documents identically.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery, type IndexDocument, type IndexQuery, type ParsedQuery, type SearchFilters, type SearchIndex } from '../../core/search.js';
import { openPostgresSearchIndex } from '../../adapters/search-index/postgres.js';
import { openSqliteSearchIndex } from '../../adapters/search-index/sqlite.js';
import { freshDatabase, type FreshDatabase } from '../support/services.js';

const NOW = Date.UTC(2026, 10, 20);
const DAY = 86_400_000;

const q = (s: string): ParsedQuery => {
  const p = parseQuery(s);
  if (!p.ok) throw new Error(`${s}: ${p.message}`);
  return p.query;
};

const NO_FILTERS: SearchFilters = {
  country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web',
};

const doc = (url: string, title: string, text: string, extra: Partial<IndexDocument> = {}): IndexDocument => ({
  url, title, text, publishedAt: null, language: 'en', country: null, type: 'page', author: null, siteName: null, doi: null, safe: null, ...extra,
});

const FILLER = 'The committee met on Tuesday to review the annual budget and discuss the schedule for the coming months in some detail.';

/** The fixture collection: dates, languages, countries, types, an explicit document. */
const FIXTURE: IndexDocument[] = [
  doc('https://solar.example.com/rooftops', 'Solar panels on rooftops', `Rooftop solar panels convert sunlight into electricity. ${FILLER} Efficiency of solar cells keeps improving every year.`,
    { publishedAt: Date.UTC(2026, 0, 10), country: 'US', type: 'article', author: 'Ada Lovelace', siteName: 'Solar Daily' }),
  doc('https://www.windnews.example.org/farms', 'Wind farms expand along the coast', `Offshore wind farms expand quickly. ${FILLER} Some farms also add solar arrays.`,
    { publishedAt: Date.UTC(2026, 2, 1), country: 'GB', type: 'news' }),
  doc('https://zeitung.example.de/mieten', 'Die Häuser in Berlin werden teurer', 'Die Mieten für Wohnungen und Häuser in Berlin steigen seit Jahren. Viele Familien suchen eine bezahlbare Wohnung am Stadtrand.',
    { publishedAt: Date.UTC(2026, 1, 1), country: 'DE', type: 'news', language: null }),
  doc('https://novosti.example.ru/koshki', 'Кошки и собаки в городе', 'Кошки любят спать на солнце, а собаки любят гулять в парке. В городе живут тысячи кошек.',
    { publishedAt: Date.UTC(2025, 11, 1), country: 'RU', type: 'article', language: null }),
  doc('https://zh.example.cn/beijing', '北京的天气', '北京是中国的首都，也是一座历史悠久的城市。今天北京的天气晴朗。', { country: 'CN', language: null }),
  doc('https://ja.example.jp/tokyo', '東京都の天気', '東京都は日本の首都です。明日の東京の天気は雨の予報です。', { country: 'JP', language: null }),
  doc('https://ar.example.eg/cairo', 'القاهرة مدينة كبيرة', 'القاهرة هي عاصمة مصر وأكبر مدنها، ويعيش فيها ملايين الناس على ضفاف النيل.', { country: 'EG', language: null }),
  doc('https://adult.example.net/calendar', 'Explicit solar calendar', `An explicit calendar with solar themes. ${FILLER}`, { safe: false }),
  doc('https://kids.example.net/solar', 'Solar system for kids', `Learn about the solar system and the planets. ${FILLER}`, { safe: true, type: 'report' }),
  doc('https://journal.example.org/paper', 'Perovskite solar cell stability', `We report the stability of perovskite solar cells under heat. ${FILLER}`,
    { publishedAt: Date.UTC(2024, 5, 1), type: 'academic', doi: '10.1234/abc.5678', author: 'M. Curie', siteName: 'Journal of Energy' }),
  doc('https://blog.energy.example.com/post', 'A blog post about batteries', `Home batteries store solar power for the night. ${FILLER}`, { publishedAt: Date.UTC(2026, 9, 1), type: 'social' }),
];

interface Backend {
  readonly name: string;
  open(): Promise<SearchIndex & { close(): unknown }>;
  cleanup(): Promise<void>;
}

let pgDb: FreshDatabase | undefined;
const dirs: string[] = [];

const BACKENDS: Backend[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'scour-search-'));
      dirs.push(dir);
      return openSqliteSearchIndex({ path: join(dir, 'scour.db') });
    },
    async cleanup() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      pgDb ??= await freshDatabase();
      return openPostgresSearchIndex({ url: pgDb.url });
    },
    async cleanup() {
      await pgDb?.drop();
      pgDb = undefined;
    },
  },
];

describe.each(BACKENDS)('search index on $name', (backend) => {
  let index: SearchIndex & { close(): unknown };
  const search = (query: string, filters: Partial<SearchFilters> = {}, limit = 10, collections: readonly string[] = ['shared', 'acct_b']) =>
    index.search({ query: q(query), collections, filters: { ...NO_FILTERS, ...filters }, limit, now: NOW } satisfies IndexQuery);
  const urls = async (query: string, filters: Partial<SearchFilters> = {}, limit = 10, collections?: readonly string[]) =>
    (await search(query, filters, limit, collections)).hits.map((h) => h.document.url);

  beforeAll(async () => {
    index = await backend.open();
    expect(await index.upsert('shared', FIXTURE, NOW)).toEqual({ indexed: FIXTURE.length, updated: 0 });
  });

  afterAll(async () => {
    await index?.close();
    await backend.cleanup();
  });

  describe('documents', () => {
    it('stores what it was given, derives the domain and detects the language when absent', async () => {
      const [rooftops, mieten, tokyo] = ['https://solar.example.com/rooftops', 'https://zeitung.example.de/mieten', 'https://ja.example.jp/tokyo']
        .map((u) => FIXTURE.find((d) => d.url === u)!);
      const got = await index.get(['shared'], [rooftops!.url, mieten!.url, tokyo!.url, 'https://nowhere.example/']);
      expect(got).toHaveLength(3);
      const r = got.find((d) => d.url === rooftops!.url)!;
      expect(r).toMatchObject({
        collection: 'shared', domain: 'solar.example.com', title: rooftops!.title, text: rooftops!.text, publishedAt: rooftops!.publishedAt,
        language: 'en', country: 'US', type: 'article', author: 'Ada Lovelace', siteName: 'Solar Daily', doi: null, safe: null, indexedAt: NOW,
      });
      expect(got.find((d) => d.url === mieten!.url)!.language).toBe('de');
      expect(got.find((d) => d.url === tokyo!.url)!.language).toBe('ja');
      const [wind] = await index.get(['shared'], ['https://www.windnews.example.org/farms']);
      expect(wind!.domain).toBe('windnews.example.org');
    });

    it('keeps the whole text, however long', async () => {
      const long = `${'Long documents keep every word. '.repeat(2000)}The very last word is zymurgy.`;
      await index.upsert('acct_long', [doc('https://long.example/1', 'A long one', long)], NOW);
      const [d] = await index.get(['acct_long'], ['https://long.example/1']);
      expect(d!.text).toBe(long);
      expect((await search('zymurgy', {}, 10, ['acct_long'])).hits).toHaveLength(1);
    });

    it('refuses a document the contract does not allow', async () => {
      await expect(index.upsert('shared', [doc('ftp://example.com/x', 't', 'x')], NOW)).rejects.toThrow(/url/);
      await expect(index.upsert('shared', [{ ...doc('https://example.com/x', 't', 'x'), type: 'blog' as never }], NOW)).rejects.toThrow(/type/);
    });
  });

  describe('ranking', () => {
    it('ranks a title match above a body match', async () => {
      await index.upsert('acct_rank', [
        doc('https://rank.example/body', 'Notes from the meeting', `${FILLER} We also talked about quantum batteries briefly. ${FILLER}`),
        doc('https://rank.example/title', 'Quantum batteries', `${FILLER} ${FILLER} And a little more on the topic.`),
      ], NOW);
      expect(await urls('quantum batteries', {}, 10, ['acct_rank'])).toEqual(['https://rank.example/title', 'https://rank.example/body']);
    });

    it('ranks a phrase above the same words scattered', async () => {
      const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon';
      await index.upsert('acct_phrase', [
        doc('https://phrase.example/scattered', 'Report', `renewable ${words} energy ${words} storage ${words}`),
        doc('https://phrase.example/together', 'Report', `${words} ${words} renewable energy storage ${words}`),
      ], NOW);
      expect(await urls('renewable energy storage', {}, 10, ['acct_phrase'])).toEqual(['https://phrase.example/together', 'https://phrase.example/scattered']);
      expect(await urls('"renewable energy storage"', {}, 10, ['acct_phrase'])).toEqual(['https://phrase.example/together']);
    });

    it('weighs the words that phrase a request ("papers discussing") less than the words of its topic', async () => {
      await index.upsert('acct_request', [
        doc('https://request.example/meta', 'Papers discussing papers', 'Papers discussing papers, and more papers discussing papers. The weather was mild and the roads were quiet.'),
        doc('https://request.example/topic', 'Notes', 'The weather was mild and the roads were quiet. The glacier started to melt early; glacier melt water rose.'),
      ], NOW);
      expect(await urls('papers discussing glacier melt', {}, 10, ['acct_request'])).toEqual(['https://request.example/topic', 'https://request.example/meta']);
      // Said alone they are the topic: a query of request words still finds and ranks by them.
      expect(await urls('papers', {}, 10, ['acct_request'])).toEqual(['https://request.example/meta']);
    });

    it('finds stemmed forms and ranks rarer words higher', async () => {
      expect(await urls('panel efficiency')).toContain('https://solar.example.com/rooftops');
      const hits = (await search('perovskite solar')).hits;
      expect(hits[0]!.document.url).toBe('https://journal.example.org/paper');
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    });

    it('returns a snippet around the best passage, with highlights of stemmed matches', async () => {
      const text = `${FILLER.repeat(8)} The turbines were running smoothly while engineers ran tests on the new blades. ${FILLER.repeat(8)}`;
      await index.upsert('acct_snip', [doc('https://snip.example/1', 'Turbine report', text)], NOW);
      const [hit] = (await search('run blades', {}, 10, ['acct_snip'])).hits;
      expect(hit).toBeDefined();
      const s = hit!.snippet;
      expect(s.replace(/^… | …$/g, '').length).toBeGreaterThanOrEqual(160);
      expect(s.length).toBeLessThanOrEqual(300 + 4);
      expect(s).toContain('running smoothly');
      expect(s).not.toMatch(/\s{2}/);
      const marked = hit!.highlights.map(([a, b]) => s.slice(a, b).toLowerCase());
      expect(marked).toEqual(expect.arrayContaining(['running', 'blades']));
      for (const m of marked) expect(['running', 'ran', 'run', 'blades']).toContain(m);
      // Cut at word boundaries: no partial word at either end.
      const body = s.replace(/^… /, '').replace(/ …$/, '');
      expect(text).toContain(body.split(' ').slice(0, 3).join(' '));
    });

    it('finds documents in Chinese, Japanese, Russian, German and Arabic', async () => {
      expect(await urls('北京')).toEqual(['https://zh.example.cn/beijing']);
      expect(await urls('首都')).toEqual(expect.arrayContaining(['https://zh.example.cn/beijing', 'https://ja.example.jp/tokyo']));
      expect(await urls('東京')).toEqual(['https://ja.example.jp/tokyo']);
      expect(await urls('кошка')).toEqual(['https://novosti.example.ru/koshki']);
      expect(await urls('Haus')).toEqual(['https://zeitung.example.de/mieten']);
      expect(await urls('häuser', { language: 'de' })).toEqual(['https://zeitung.example.de/mieten']);
      expect(await urls('عاصمة')).toEqual(['https://ar.example.eg/cairo']);
      const [ar] = (await search('النيل')).hits;
      expect(ar!.highlights.length).toBeGreaterThan(0);
    });
  });

  describe('query operators', () => {
    it('requires quoted phrases and intitle:, with OR between alternatives', async () => {
      expect(await urls('"solar cells"')).toEqual(expect.arrayContaining(['https://solar.example.com/rooftops', 'https://journal.example.org/paper']));
      expect(await urls('"cells solar"')).toEqual([]);
      expect(await urls('intitle:wind solar')).toEqual(['https://www.windnews.example.org/farms']);
      expect((await urls('"perovskite solar" OR "offshore wind"')).sort()).toEqual(['https://journal.example.org/paper', 'https://www.windnews.example.org/farms']);
    });

    it('excludes words and phrases', async () => {
      const all = await urls('solar', {}, 50);
      const without = await urls('solar -explicit', {}, 50);
      expect(all).toContain('https://adult.example.net/calendar');
      expect(without).not.toContain('https://adult.example.net/calendar');
      expect(without).toHaveLength(all.length - 1);
      expect(await urls('solar -"solar system"', {}, 50)).not.toContain('https://kids.example.net/solar');
    });

    it('filters on site: (subdomains included) and -site:', async () => {
      expect((await urls('solar site:example.com', {}, 50)).sort()).toEqual(['https://blog.energy.example.com/post', 'https://solar.example.com/rooftops']);
      expect(await urls('solar site:energy.example.com')).toEqual(['https://blog.energy.example.com/post']);
      expect(await urls('wind site:windnews.example.org')).toEqual(['https://www.windnews.example.org/farms']);
      expect(await urls('solar -site:example.com', {}, 50)).not.toEqual(expect.arrayContaining(['https://solar.example.com/rooftops']));
    });
  });

  describe('filters', () => {
    it('country', async () => {
      expect(await urls('solar wind', { country: 'GB' })).toEqual(['https://www.windnews.example.org/farms']);
      expect(await urls('solar wind', { country: 'gb' })).toEqual(['https://www.windnews.example.org/farms']);
    });

    it('language', async () => {
      expect(await urls('Berlin', { language: 'de' })).toEqual(['https://zeitung.example.de/mieten']);
      expect(await urls('Berlin', { language: 'en' })).toEqual([]);
    });

    it('publishedAfter leaves out documents without a date', async () => {
      const after = await urls('solar', { publishedAfter: Date.UTC(2026, 0, 1) }, 50);
      expect(after.sort()).toEqual(['https://blog.energy.example.com/post', 'https://solar.example.com/rooftops', 'https://www.windnews.example.org/farms']);
    });

    it('safe search', async () => {
      const off = await urls('solar', { safeSearch: 'off' }, 50);
      const moderate = await urls('solar', { safeSearch: 'moderate' }, 50);
      const strict = await urls('solar', { safeSearch: 'strict' }, 50);
      expect(off).toContain('https://adult.example.net/calendar');
      expect(moderate).not.toContain('https://adult.example.net/calendar');
      expect(moderate).toHaveLength(off.length - 1);
      expect(strict).toEqual(['https://kids.example.net/solar']);
    });

    it('safe search moderate alone (the explicit documents dropped) gives what the facts lookup gives, in every collection, after updates', async () => {
      const both = ['shared', 'acct_safe'];
      const via = async (query: string) => {
        const r = await search(query, { safeSearch: 'moderate' }, 50, both);
        return { urls: r.hits.map((h) => h.document.url), total: r.total, scores: r.hits.map((h) => h.score) };
      };
      // A -site: no document is on sends moderate through the facts lookup (`filter`) instead.
      const viaFacts = async (query: string) => via(`${query} -site:nowhere.example`);
      await index.upsert('acct_safe', [
        doc('https://own.example/explicit', 'Explicit solar poster', `A solar poster. ${FILLER}`, { safe: false }),
        doc('https://own.example/fine', 'Solar poster', `A solar poster for a classroom. ${FILLER}`, { safe: true }),
      ], NOW);
      const a = await via('solar poster');
      expect(a).toEqual(await viaFacts('solar poster'));
      expect(a.urls).toContain('https://own.example/fine');
      expect(a.urls).not.toContain('https://own.example/explicit');
      expect(a.urls).not.toContain('https://adult.example.net/calendar');
      const off = await search('solar poster', { safeSearch: 'off' }, 50, both);
      expect(a.total).toBe(off.total - 2);
      // Marked safe later: it is found; marked explicit later: it is not.
      await index.upsert('acct_safe', [
        doc('https://own.example/explicit', 'Explicit solar poster', `A solar poster. ${FILLER}`, { safe: null }),
        doc('https://own.example/fine', 'Solar poster', `A solar poster for a classroom. ${FILLER}`, { safe: false }),
      ], NOW);
      const b = await via('solar poster');
      expect(b).toEqual(await viaFacts('solar poster'));
      expect(b.urls).toContain('https://own.example/explicit');
      expect(b.urls).not.toContain('https://own.example/fine');
      await index.remove('acct_safe', ['https://own.example/explicit', 'https://own.example/fine'], NOW);
    });

    it('news: news and articles with a date, newest first among equally relevant ones', async () => {
      const news = await urls('solar', { resultType: 'news' }, 50);
      expect(news.sort()).toEqual(['https://solar.example.com/rooftops', 'https://www.windnews.example.org/farms']);
      const same = 'Harbour cranes were repaired after the storm and the harbour reopened to ships.';
      await index.upsert('acct_news', [
        doc('https://news.example/old', 'Harbour reopens', same, { type: 'news', publishedAt: NOW - 30 * DAY }),
        doc('https://news.example/new', 'Harbour reopens', same, { type: 'news', publishedAt: NOW - DAY }),
        doc('https://news.example/mid', 'Harbour reopens', same, { type: 'article', publishedAt: NOW - 10 * DAY }),
        doc('https://news.example/undated', 'Harbour reopens', same, { type: 'news', publishedAt: null }),
        doc('https://news.example/page', 'Harbour reopens', same, { type: 'page', publishedAt: NOW }),
      ], NOW);
      expect(await urls('harbour cranes', { resultType: 'news' }, 10, ['acct_news'])).toEqual(['https://news.example/new', 'https://news.example/mid', 'https://news.example/old']);
    });

    it('combined, applied before the limit: the limit is met whenever enough documents match, and total counts them all', async () => {
      const docs: IndexDocument[] = [];
      for (let i = 0; i < 40; i++) {
        docs.push(doc(`https://many.example/${i}`, `Glacier report ${i}`, `Glacier melt measured at station ${i}. ${FILLER}`, {
          country: i % 2 === 0 ? 'FR' : 'IT', type: i % 4 === 0 ? 'news' : 'page', publishedAt: NOW - i * DAY,
        }));
      }
      await index.upsert('acct_many', docs, NOW);
      const fr = await search('glacier melt', { country: 'FR' }, 10, ['acct_many']);
      expect(fr.hits).toHaveLength(10);
      expect(fr.total).toBe(20);
      expect(fr.hits.every((h) => h.document.country === 'FR')).toBe(true);
      const combined = await search('glacier', { country: 'FR', resultType: 'news', publishedAfter: NOW - 20 * DAY }, 10, ['acct_many']);
      // FR (even), news (multiple of 4), within 20 days: 0, 4, 8, 12, 16, 20.
      expect(combined.hits.map((h) => h.document.url)).toEqual([0, 4, 8, 12, 16, 20].map((i) => `https://many.example/${i}`));
      expect(combined.total).toBe(6);
      const all = await search('glacier', {}, 5, ['acct_many']);
      expect(all.hits).toHaveLength(5);
      expect(all.total).toBe(40);
    });
  });

  describe('collections', () => {
    it('a search sees only the collections it is given', async () => {
      await index.upsert('acct_a', [doc('https://private.example/a', 'Secret recipe for marmalade', 'Oranges, sugar and patience make marmalade.')], NOW);
      expect(await urls('marmalade', {}, 10, ['shared', 'acct_b'])).toEqual([]);
      expect(await urls('marmalade', {}, 10, ['shared', 'acct_a'])).toEqual(['https://private.example/a']);
      expect(await index.get(['shared', 'acct_b'], ['https://private.example/a'])).toEqual([]);
    });

    it('scores use only the visible collections\' statistics', async () => {
      const before = (await search('offshore wind farms', {}, 10, ['shared', 'acct_b'])).hits.map((h) => [h.document.url, h.score]);
      const flood: IndexDocument[] = [];
      for (let i = 0; i < 60; i++) flood.push(doc(`https://flood.example/${i}`, `Offshore wind ${i}`, `Offshore wind farms everywhere ${i}. Wind, wind, wind.`));
      await index.upsert('acct_flood', flood, NOW);
      const after = (await search('offshore wind farms', {}, 10, ['shared', 'acct_b'])).hits.map((h) => [h.document.url, h.score]);
      expect(after).toEqual(before);
      const seen = (await search('offshore wind farms', {}, 100, ['shared', 'acct_flood'])).hits;
      const windScore = seen.find((h) => h.document.url === 'https://www.windnews.example.org/farms')!.score;
      expect(windScore).not.toBe(before[0]![1]);
    });

    it('concurrent searches of the same collections agree, and each sees every write made before it (one collections statement for all in PostgreSQL)', async () => {
      const reads = (index as { collectionReads?: { statements: number } }).collectionReads;
      const sent0 = reads?.statements ?? 0;
      const answers = await Promise.all(Array.from({ length: 20 }, () => urls('solar', {}, 10, ['shared', 'acct_race'])));
      for (const a of answers) expect(a).toEqual(answers[0]);
      if (backend.name === 'PostgreSQL') expect(reads!.statements - sent0).toBe(1);
      // A write, then searches started while one is still in flight: the later ones see the new collection.
      const inFlight = urls('quince', {}, 10, ['shared', 'acct_race']);
      await index.upsert('acct_race', [doc('https://race.example/quince', 'Quince jelly', 'Quince, sugar and lemon make a jelly.')], NOW);
      const after = await Promise.all([urls('quince', {}, 10, ['shared', 'acct_race']), urls('quince', {}, 10, ['shared', 'acct_race'])]);
      expect(after).toEqual([['https://race.example/quince'], ['https://race.example/quince']]);
      await inFlight;
    });

    it('the same URL in two collections is two documents', async () => {
      await index.upsert('acct_c', [doc('https://solar.example.com/rooftops', 'My own copy', 'Nothing about the sun here: only gardening.')], NOW);
      const got = await index.get(['shared', 'acct_c'], ['https://solar.example.com/rooftops']);
      expect(got.map((d) => d.collection).sort()).toEqual(['acct_c', 'shared']);
      expect(await urls('gardening', {}, 10, ['shared', 'acct_c'])).toEqual(['https://solar.example.com/rooftops']);
    });
  });

  describe('writes', () => {
    it('upsert replaces a document by URL', async () => {
      await index.upsert('acct_up', [doc('https://up.example/1', 'First title', 'Original words about pineapples.'), doc('https://up.example/2', 'Other', 'Pineapples too.')], NOW);
      const r = await index.upsert('acct_up', [doc('https://up.example/1', 'Second title', 'Replaced words about coconuts.'), doc('https://up.example/3', 'New', 'Coconuts as well.')], NOW + 1000);
      expect(r).toEqual({ indexed: 1, updated: 1 });
      expect(await urls('pineapples', {}, 10, ['acct_up'])).toEqual(['https://up.example/2']);
      expect((await urls('coconuts', {}, 10, ['acct_up'])).sort()).toEqual(['https://up.example/1', 'https://up.example/3']);
      const [d] = await index.get(['acct_up'], ['https://up.example/1']);
      expect(d).toMatchObject({ title: 'Second title', text: 'Replaced words about coconuts.', indexedAt: NOW + 1000 });
      expect((await index.stats()).collections.find((c) => c.collection === 'acct_up')).toEqual({ collection: 'acct_up', documents: 3, lastUpdated: NOW + 1000 });
      // The same URL twice in one call: the later document wins.
      expect(await index.upsert('acct_up', [doc('https://up.example/4', 'A', 'kiwis'), doc('https://up.example/4', 'B', 'mangoes')], NOW)).toEqual({ indexed: 1, updated: 0 });
      expect(await urls('mangoes', {}, 10, ['acct_up'])).toEqual(['https://up.example/4']);
      expect(await urls('kiwis', {}, 10, ['acct_up'])).toEqual([]);
    });

    it('replacing and removing many documents keeps the postings right', async () => {
      const docs = (n: number, word: string) => Array.from({ length: n }, (_, i) => doc(`https://bulk.example/${i}`, `Doc ${i}`, `${word} number ${i} common`));
      await index.upsert('acct_bulk', docs(300, 'apricot'), NOW);
      await index.upsert('acct_bulk', docs(150, 'quince'), NOW);
      expect((await search('apricot', {}, 1, ['acct_bulk'])).total).toBe(150);
      expect((await search('quince', {}, 1, ['acct_bulk'])).total).toBe(150);
      expect((await search('common', {}, 1, ['acct_bulk'])).total).toBe(300);
      expect(await index.remove('acct_bulk', Array.from({ length: 100 }, (_, i) => `https://bulk.example/${i * 3}`), NOW)).toBe(100);
      expect((await search('common', {}, 1, ['acct_bulk'])).total).toBe(200);
      expect((await search('quince', {}, 1, ['acct_bulk'])).total).toBe(100);
      expect((await search('apricot', {}, 1, ['acct_bulk'])).total).toBe(100);
    });

    it('remove takes documents out and says how many were there', async () => {
      await index.upsert('acct_rm', [doc('https://rm.example/1', 'Figs', 'Fresh figs.'), doc('https://rm.example/2', 'Figs again', 'Dried figs.')], NOW);
      expect(await index.remove('acct_rm', ['https://rm.example/1', 'https://rm.example/404'], NOW + 5)).toBe(1);
      expect(await urls('figs', {}, 10, ['acct_rm'])).toEqual(['https://rm.example/2']);
      expect(await index.get(['acct_rm'], ['https://rm.example/1'])).toEqual([]);
      expect(await index.remove('acct_rm', ['https://rm.example/1'], NOW)).toBe(0);
      expect(await index.remove('acct_nobody', ['https://rm.example/2'], NOW)).toBe(0);
      expect((await index.stats()).collections.find((c) => c.collection === 'acct_rm')).toEqual({ collection: 'acct_rm', documents: 1, lastUpdated: NOW + 5 });
    });

    it('stats: documents per collection, last update and bytes on disk', async () => {
      const s = await index.stats();
      expect(s.collections.find((c) => c.collection === 'shared')).toEqual({ collection: 'shared', documents: FIXTURE.length, lastUpdated: NOW });
      expect(s.bytes).toBeGreaterThan(0);
      const names = s.collections.map((c) => c.collection);
      expect(names).toEqual([...names].sort());
    });
  });

  describe('hostile input', () => {
    const HOSTILE = [
      'NEAR(solar wind)', 'NEAR(solar', 'sol*', '*', '^solar', 'solar^2', 'title:solar', 'text:wind', 'solar:wind', 'solar & wind', '!solar', 'solar | wind',
      'solar AND wind NOT rain', 'solar OR', '(solar)', '{solar}', '"solar" OR "wind"', "'; DROP TABLE search_documents; --", 'solar\\', '%_%',
      '\u202Esolar\u202C', '\u200Fwind\u200E', 's\u0301olar', 'solar\u0301\u0302\u0303', '☀️ solar 🌞', '🔥🔥🔥', 'so\u200Blar', 'sol\uFEFFar',
      '\uD800solar\uDC00', '\uDFFF', 'x'.repeat(500), 'ä'.repeat(499), '北京!!!', 'кошки:собаки', 'a:b:c', '-', 'solar -', 'NOT', 'AND', 'OR solar',
      'solar site:', 'intitle:"solar"', '"', '""', 'solar "wind', '\u0000solar', 'solar\u0007wind',
    ];

    it.each(HOSTILE)('%j gives sensible results or none, never an exception', async (raw) => {
      const p = parseQuery(raw);
      if (!p.ok) return;
      const r = await index.search({ query: p.query, collections: ['shared'], filters: NO_FILTERS, limit: 10, now: NOW });
      expect(Array.isArray(r.hits)).toBe(true);
      expect(r.total).toBeGreaterThanOrEqual(r.hits.length);
      for (const h of r.hits) {
        expect(typeof h.snippet).toBe('string');
        for (const [a, b] of h.highlights) expect(0 <= a && a < b && b <= h.snippet.length).toBe(true);
      }
    });

    it('syntax characters are just separators', async () => {
      expect(await urls('solar & wind', {}, 50)).toEqual(await urls('solar wind', {}, 50));
      expect(await urls('NEAR(perovskite)')).toContain('https://journal.example.org/paper');
      expect(await urls('title:perovskite')).toContain('https://journal.example.org/paper');
      expect(await urls('so\u200Blar', {}, 50)).toEqual(await urls('so lar', {}, 50));
      expect(await urls('s\u0301olar', {}, 50)).toEqual(await urls('solar', {}, 50));
    });

    it('hostile documents are stored and searchable', async () => {
      const nasty = doc('https://nasty.example/1', 'Nul\u0000 and \uD800 lone surrogates', 'Zero\u200Bwidth, RTL \u202Eevil\u202C, emoji 🎉 party, NUL \u0000 byte and combining e\u0301 accents.');
      await index.upsert('acct_nasty', [nasty], NOW);
      expect(await urls('party', {}, 10, ['acct_nasty'])).toEqual(['https://nasty.example/1']);
      expect(await urls('accents', {}, 10, ['acct_nasty'])).toEqual(['https://nasty.example/1']);
      const [d] = await index.get(['acct_nasty'], ['https://nasty.example/1']);
      expect(d!.title).toBe('Nul and \uFFFD lone surrogates');
    });
  });
});

describe('both backends rank alike', () => {
  let sqlite: ReturnType<typeof openSqliteSearchIndex>;
  let pg: Awaited<ReturnType<typeof openPostgresSearchIndex>>;
  let db: FreshDatabase;

  beforeAll(async () => {
    sqlite = openSqliteSearchIndex({ path: ':memory:' });
    db = await freshDatabase();
    pg = await openPostgresSearchIndex({ url: db.url });
    for (const i of [sqlite, pg]) {
      await i.upsert('shared', FIXTURE, NOW);
      await i.upsert('acct_x', FIXTURE.slice(0, 4).map((d) => ({ ...d, text: `${d.text} ${FILLER}` })), NOW);
      await i.remove('shared', ['https://kids.example.net/solar'], NOW);
      await i.upsert('shared', [FIXTURE[8]!], NOW);
    }
  });

  afterAll(async () => {
    sqlite?.close();
    await pg?.close();
    await db?.drop();
  });

  it.each(['solar', 'solar cells efficiency', '"solar cells"', 'wind -explicit', 'Berlin Häuser', '北京 天气', 'committee budget schedule'])('%j', async (raw) => {
    const query: IndexQuery = { query: q(raw), collections: ['shared', 'acct_x'], filters: NO_FILTERS, limit: 20, now: NOW };
    const a = await sqlite.search(query);
    const b = await pg.search(query);
    expect(b.total).toBe(a.total);
    expect(b.hits.map((h) => [h.document.url, h.document.collection, h.score, h.snippet, h.highlights]))
      .toEqual(a.hits.map((h) => [h.document.url, h.document.collection, h.score, h.snippet, h.highlights]));
  });
});
