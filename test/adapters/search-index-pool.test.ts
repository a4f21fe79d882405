/**
 * The search index's write paths off the event loop: documents analysed by
 * the worker pool (analysis-pool.ts) and, on SQLite, written by the writer
 * thread (sqlite-writer-thread.ts). Each must store exactly what the serial
 * path (analysis in this thread, writes on this connection) stores: the
 * same prepared documents, and an index that answers every query with the
 * same hits, scores, snippets and totals, on SQLite and on PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery, type IndexDocument, type IndexQuery, type SearchFilters, type SearchIndex } from '../../core/search.js';
import { AnalysisPool } from '../../adapters/search-index/analysis-pool.js';
import { inlineAnalyser, latestByUrl, prepareAll } from '../../adapters/search-index/engine.js';
import { openPostgresSearchIndex } from '../../adapters/search-index/postgres.js';
import { openSqliteSearchIndex } from '../../adapters/search-index/sqlite.js';
import { freshDatabase, type FreshDatabase } from '../support/services.js';

const NOW = Date.UTC(2026, 10, 20);
const NO_FILTERS: SearchFilters = {
  country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web',
};

const doc = (url: string, title: string, text: string, extra: Partial<IndexDocument> = {}): IndexDocument => ({
  url, title, text, publishedAt: null, language: null, country: null, type: 'page', author: null, siteName: null, doi: null, safe: null, ...extra,
});

const WORDS = ('solar wind battery storage grid reactor fusion fission turbine panel cell efficiency carbon emission policy market price '
  + 'protein gene cell receptor mutation tumour therapy vaccine trial dose patient outcome cohort risk analysis model network learning '
  + 'running runs ran houses house city river bridge garbage collection storage reclamation list processing pointer').split(' ');

/** A seeded corpus: English made of WORDS, with German, Russian, Chinese and Japanese documents, hostile strings and duplicates. */
function corpus(n: number, seed = 7): IndexDocument[] {
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  const words = (k: number) => Array.from({ length: k }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
  const out: IndexDocument[] = [];
  for (let i = 0; i < n; i++) {
    const sentences = Array.from({ length: 2 + Math.floor(rnd() * 6) }, () => `The ${words(4 + Math.floor(rnd() * 10))} of the ${words(3)}.`);
    out.push(doc(`https://corpus.example/${i}`, `${words(3)} ${i}`, sentences.join(' '), { publishedAt: i % 3 === 0 ? NOW - i * 1000 : null }));
  }
  out.push(
    doc('https://de.example/1', 'Die Häuser in Berlin', 'Die Mieten für Wohnungen und Häuser in Berlin steigen seit Jahren, und die Familien suchen eine Wohnung.'),
    doc('https://ru.example/1', 'Кошки и собаки', 'Кошки любят спать на солнце, а собаки любят гулять в парке. В городе живут тысячи кошек.'),
    doc('https://zh.example/1', '北京的天气', '北京是中国的首都，也是一座历史悠久的城市。今天北京的天气晴朗。'),
    doc('https://ja.example/1', '東京都の天気', '東京都は日本の首都です。明日の東京の天気は雨の予報です。'),
    doc('https://nasty.example/1', 'Nul\u0000 and \uD800 lone', 'Zero\u200Bwidth, RTL \u202Eevil\u202C, emoji 🎉 party, combining e\u0301 accents.', { language: 'en' }),
    doc('https://empty.example/1', '', ''),
    // The same URL again: the later document wins.
    doc('https://corpus.example/3', 'replaced solar storage', 'A replaced document about solar storage and reactor policy.'),
  );
  return out;
}

const QUERIES = ['solar', 'solar storage', '"garbage collection"', 'running houses', 'policy -market', 'protein receptor mutation therapy',
  'Berlin Häuser', '北京 天气', 'кошки', 'party accents', 'replaced', 'cell efficiency carbon emission policy market price model'];

async function hitsOf(index: SearchIndex, collections: readonly string[]) {
  const out: unknown[] = [];
  for (const raw of QUERIES) {
    const p = parseQuery(raw);
    if (!p.ok) throw new Error(p.message);
    const r = await index.search({ query: p.query, collections, filters: NO_FILTERS, limit: 20, now: NOW } satisfies IndexQuery);
    out.push([raw, r.total, r.hits.map((h) => [h.document.url, h.document.title, h.score, h.snippet, h.highlights])]);
  }
  return out;
}

// Workers load the analysis code from the TypeScript sources through tsx: seconds each on a loaded machine.
describe('analysis pool', { timeout: 120_000 }, () => {
  const pool = new AnalysisPool({ workers: 2, chunk: 37, inlineBelow: 1, testHooks: true });
  afterAll(() => pool.close());

  it('prepares exactly what in-process analysis prepares, in the same order', async () => {
    const docs = corpus(400);
    const inline = await prepareAll(docs);
    const pooled = await pool.prepare(docs);
    expect(pooled.length).toBe(inline.length);
    expect(pooled).toEqual(inline);
    expect(pool.counts.pooled).toBeGreaterThan(0);
  });

  it('refuses a bad document before analysing any, naming the field', async () => {
    await expect(pool.prepare([...corpus(20), doc('ftp://x.example/', 'a', 'b')])).rejects.toThrow(/url must be an absolute http\(s\) URL/);
    await expect(pool.prepare([{ ...doc('https://x.example/', 'a', 'b'), type: 'nonsense' as never }])).rejects.toThrow(TypeError);
  });

  it('a worker that dies loses nothing: its chunk is analysed in-process and the worker replaced', async () => {
    const docs = corpus(120);
    docs[50] = doc('https://crash.example/', 'scour-test:crash', 'this document ends its worker');
    const before = pool.counts.replaced;
    expect(await pool.prepare(docs)).toEqual(await prepareAll(docs));
    expect(pool.counts.replaced).toBeGreaterThan(before);
    // And the pool goes on with new workers.
    expect(await pool.prepare(corpus(80, 3))).toEqual(await prepareAll(corpus(80, 3)));
  });

  it('closes its threads; calls after close are analysed in-process', async () => {
    const p = new AnalysisPool({ workers: 2, inlineBelow: 1 });
    await p.prepare(corpus(50));
    expect(p.threadIds().length).toBe(2);
    await p.close();
    expect(p.threadIds()).toEqual([]);
    expect(await p.prepare(corpus(30))).toEqual(await prepareAll(corpus(30)));
  });

  it('ready() starts every worker and resolves once all have loaded; the next call is analysed by them, none in-process', async () => {
    const p = new AnalysisPool({ workers: 2, inlineBelow: 1, analyseWhileStarting: true });
    try {
      expect(p.threadIds()).toEqual([]);
      await p.ready();
      expect(p.threadIds().length).toBe(2);
      expect(p.counts.started).toBe(2);
      expect(await p.prepare(corpus(120))).toEqual(await prepareAll(corpus(120)));
      expect(p.counts.bridged).toBe(0);
      expect(p.counts.inline).toBe(0);
      expect(p.counts.pooled).toBeGreaterThan(0);
    } finally {
      await p.close();
    }
    // Closed, and a pool of no workers: ready at once.
    await p.ready();
    await new AnalysisPool({ workers: 0 }).ready();
  });

  it('an SQLite index warm(): the analysis workers and the writer thread up before the first import', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scour-warm-'));
    const p = new AnalysisPool({ workers: 2, inlineBelow: 1, analyseWhileStarting: true });
    const index = openSqliteSearchIndex({ path: join(dir, 'warm.db'), analyser: p });
    try {
      const before = p.threadIds().length;
      await index.warm();
      expect(before).toBe(0);
      expect(p.threadIds().length).toBe(2);
      await index.upsert('shared', corpus(40), Date.now());
      expect(p.counts.bridged).toBe(0);
      expect((await index.get(['shared'], [corpus(40)[0]!.url])).length).toBe(1);
    } finally {
      await index.close();
      await p.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('latestByUrl keeps the later document of a URL, where prepareAll puts it', async () => {
    const docs = corpus(10);
    const latest = latestByUrl(docs);
    expect(latest.map((d) => d.url)).toEqual((await prepareAll(docs)).map((d) => d.url));
  });
});

describe.each([
  { name: 'SQLite', pg: false },
  { name: 'PostgreSQL', pg: true },
])('an index written off the event loop answers as the serial one on $name', { timeout: 120_000 }, ({ pg }) => {
  const pool = new AnalysisPool({ workers: 2, chunk: 50, inlineBelow: 1 });
  const dirs: string[] = [];
  const dbs: FreshDatabase[] = [];
  let serial: SearchIndex & { close(): unknown };
  let threaded: SearchIndex & { close(): unknown };

  const open = async (mode: 'serial' | 'threaded') => {
    if (pg) {
      const db = await freshDatabase();
      dbs.push(db);
      return openPostgresSearchIndex({ url: db.url, analyser: mode === 'serial' ? inlineAnalyser : pool, writeSlice: 40 });
    }
    const dir = mkdtempSync(join(tmpdir(), 'scour-search-pool-'));
    dirs.push(dir);
    return mode === 'serial'
      ? openSqliteSearchIndex({ path: join(dir, 'scour.db'), writerThread: false })
      : openSqliteSearchIndex({ path: join(dir, 'scour.db'), analyser: pool, writeBatch: 64 });
  };

  beforeAll(async () => {
    serial = await open('serial');
    threaded = await open('threaded');
    const docs = corpus(700);
    for (const index of [serial, threaded]) {
      for (let i = 0; i < docs.length; i += 300) await index.upsert('shared', docs.slice(i, i + 300), NOW);
      // Replacements, removals and a second collection, in the same order on both.
      expect(await index.upsert('shared', corpus(120, 11).slice(0, 120).map((d, i) => ({ ...d, url: `https://corpus.example/${i * 5}` })), NOW + 1)).toEqual({ indexed: 0, updated: 120 });
      expect(await index.remove('shared', Array.from({ length: 60 }, (_, i) => `https://corpus.example/${i * 7 + 1}`), NOW + 2)).toBe(60);
      await index.upsert('acct_a', corpus(90, 5), NOW + 3);
    }
  }, 120_000);

  afterAll(async () => {
    await serial?.close();
    await threaded?.close();
    await pool.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const db of dbs) await db.drop();
  });

  it('the same hits, scores, snippets and totals for every query', async () => {
    const a = await hitsOf(serial, ['shared', 'acct_a']);
    const b = await hitsOf(threaded, ['shared', 'acct_a']);
    expect(b).toEqual(a);
    // The comparison compares something: most queries find documents.
    expect(a.filter((x) => (x as [string, number])[1] > 0).length).toBeGreaterThan(QUERIES.length - 3);
  });

  it('the same statistics', async () => {
    const strip = (s: Awaited<ReturnType<SearchIndex['stats']>>) => s.collections;
    expect(strip(await threaded.stats())).toEqual(strip(await serial.stats()));
    expect((await threaded.stats()).collections.find((c) => c.collection === 'shared')!.documents).toBe(700 + 6 - 60);
  });

  it('searches during a large upsert succeed and see a consistent index', async () => {
    const big = corpus(1500, 99).slice(0, 1500).map((d, i) => ({ ...d, url: `https://big.example/${i}` }));
    const writing = threaded.upsert('acct_big', big, NOW);
    const p = parseQuery('solar storage');
    if (!p.ok) throw new Error(p.message);
    let searches = 0;
    let done = false;
    void writing.finally(() => { done = true; });
    while (!done) {
      const r = await threaded.search({ query: p.query, collections: ['acct_big'], filters: NO_FILTERS, limit: 5, now: NOW });
      expect(r.hits.length).toBeLessThanOrEqual(5);
      for (const h of r.hits) expect(h.document.url.startsWith('https://big.example/')).toBe(true);
      searches++;
      await new Promise((r) => setImmediate(r));
    }
    expect(await writing).toEqual({ indexed: 1500, updated: 0 });
    expect(searches).toBeGreaterThan(0);
    const after = await threaded.search({ query: p.query, collections: ['acct_big'], filters: NO_FILTERS, limit: 5, now: NOW });
    expect(after.total).toBeGreaterThan(0);
  }, 120_000);
});
