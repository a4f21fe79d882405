/**
 * Segments: a write of 16 documents or more inserts each term's new entries
 * as blocks of their own (postings.ts segmentsOf) instead of appending to
 * each term's last block, and terms that gather MERGE_FACTOR small blocks
 * are merged into full ones in the background (planMerge: the SQLite
 * writer thread when idle, PostgreSQL after the call). The layout must not
 * change a single result: an index written in many small segment calls,
 * merged, then updated and pruned, answers every query as one written by
 * appends, on SQLite and on PostgreSQL.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery, type IndexDocument, type SearchFilters, type SearchIndex } from '../../core/search.js';
import { prepareAll } from '../../adapters/search-index/engine.js';
import { openPostgresSearchIndex } from '../../adapters/search-index/postgres.js';
import { openSqliteSearchIndex } from '../../adapters/search-index/sqlite.js';
import {
  BLOCK_SIZE, MERGE_FACTOR, MergeQueue, decodeEntries, encodeEntries, entriesByTerm, planMerge, segmentsOf, type Entry,
} from '../../adapters/search-index/postings.js';
import { freshDatabase, type FreshDatabase } from '../support/services.js';

const NOW = Date.UTC(2026, 10, 28);
const NO_FILTERS: SearchFilters = {
  country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web',
};

const doc = (url: string, title: string, text: string, extra: Partial<IndexDocument> = {}): IndexDocument => ({
  url, title, text, publishedAt: null, language: 'en', country: null, type: 'page', author: null, siteName: null, doi: null, safe: null, ...extra,
});

const WORDS = ('solar wind battery storage grid reactor fusion turbine panel cell efficiency carbon policy market price protein gene '
  + 'receptor mutation tumour therapy vaccine trial dose patient cohort risk model network learning houses river bridge').split(' ');

function corpus(n: number, seed: number, prefix = 'https://seg.example/'): IndexDocument[] {
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  const words = (k: number) => Array.from({ length: k }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
  // A rare word per document (seen in about one call in ten): the terms that gather many small blocks.
  return Array.from({ length: n }, (_, i) => doc(`${prefix}${i}`, `${words(3)} rare${i % 97}`, `The ${words(6 + Math.floor(rnd() * 20))}. ${words(5)}.`));
}

const QUERIES = ['solar', 'solar storage', '"carbon policy"', 'rare5', 'rare5 rare50 protein', 'therapy -vaccine', 'houses river bridge',
  'cell efficiency carbon policy market price model', 'rare96', 'nothingmatches'];

async function hitsOf(index: SearchIndex, collections: string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const raw of QUERIES) {
    const p = parseQuery(raw);
    if (!p.ok) throw new Error(p.message);
    const r = await index.search({ query: p.query, collections, filters: NO_FILTERS, limit: 20, now: NOW });
    out.push([raw, r.total, r.hits.map((h) => [h.document.url, h.score, h.snippet, h.highlights])]);
  }
  return out;
}

async function written(docs: IndexDocument[], firstId: number) {
  return (await prepareAll(docs)).map((d, i) => ({ id: firstId + i, titleLength: d.titleLength, textLength: d.textLength, postings: d.postings }));
}

describe('segments (postings.ts)', () => {
  it('segmentsOf encodes exactly the blocks the append path would insert, in term order, from documents in any order', async () => {
    const docs = await written(corpus(300, 3), 1000);
    const partial = new Set<string>();
    const blocks = segmentsOf([...docs].reverse(), (t) => partial.add(t));
    const byTerm = entriesByTerm(docs);
    const expected: [string, number, number, Buffer][] = [];
    for (const [term, list] of [...byTerm].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      for (let i = 0; i < list.length; i += BLOCK_SIZE) {
        const chunk = list.slice(i, i + BLOCK_SIZE);
        expected.push([term, chunk[0]!.doc, chunk.length, encodeEntries(chunk)]);
      }
    }
    expect(blocks.map(([t, f, n, d]) => [t, f, n, Buffer.from(d).toString('hex')])).toEqual(expected.map(([t, f, n, d]) => [t, f, n, d.toString('hex')]));
    // Some term is common enough to fill a block, and the partial ones are exactly those not ending on a full one.
    expect(blocks.some((b) => b[2] === BLOCK_SIZE)).toBe(true);
    expect([...partial].sort()).toEqual([...byTerm].filter(([, l]) => l.length % BLOCK_SIZE !== 0).map(([t]) => t).sort());
    expect(segmentsOf([])).toEqual([]);
  });

  it('planMerge turns each run of small blocks into full ones and leaves full and lone blocks alone', async () => {
    const docs = await written(corpus(600, 5), 1);
    // One term's blocks as six writes would leave them: calls of 5, 200, 30, 1, 250 and 40 documents.
    const cuts = [0, 5, 205, 235, 236, 486, 526];
    const blocks: { id: number; count: number; data: Uint8Array }[] = [];
    const term = 'solar';
    for (let c = 0; c + 1 < cuts.length; c++) {
      for (const [t, , n, data] of segmentsOf(docs.slice(cuts[c], cuts[c + 1]))) if (t === term) blocks.push({ id: blocks.length + 1, count: n, data: Buffer.from(data) });
    }
    const all = blocks.flatMap((b) => decodeEntries(b.data));
    const m = planMerge(blocks);
    // Apply it: deletes, then updates in place, then inserts; the result must hold the same entries in the same order.
    const kept = new Map(blocks.map((b) => [b.id, b]));
    for (const id of m.deletes) kept.delete(id);
    for (const [id, , n, data] of m.updates) kept.set(id, { id, count: n, data });
    const after = [...kept.values()].map((b) => ({ first: decodeEntries(b.data)[0]!.doc, ...b }));
    for (const [first, n, data] of m.inserts) after.push({ id: -1, first, count: n, data });
    after.sort((a, b) => a.first - b.first);
    const entries: Entry[] = after.flatMap((b) => decodeEntries(b.data));
    expect(entries.map((e) => e.doc)).toEqual(all.map((e) => e.doc));
    expect(Buffer.from(encodeEntries(entries)).equals(Buffer.from(encodeEntries(all)))).toBe(true);
    for (const b of after) expect(b.count).toBe(decodeEntries(b.data).length);
    // No two small blocks left next to each other.
    for (let i = 1; i < after.length; i++) expect(after[i - 1]!.count < BLOCK_SIZE && after[i]!.count < BLOCK_SIZE).toBe(false);
    expect(after.length).toBeLessThan(blocks.length);
    // Nothing to merge: no blocks, one block, small blocks between full ones.
    expect(planMerge([])).toEqual({ deletes: [], updates: [], inserts: [] });
    expect(planMerge([blocks[0]!])).toEqual({ deletes: [], updates: [], inserts: [] });
  });

  it('a term is due for a merge at its MERGE_FACTOR-th small block, per collection', () => {
    const q = new MergeQueue();
    for (let i = 0; i < MERGE_FACTOR - 1; i++) { q.note(1, 'a'); q.note(2, 'a'); }
    expect(q.pending).toBe(0);
    q.note(1, 'a');
    expect(q.pending).toBe(1);
    expect(q.take(10)).toEqual([[1, 'a']]);
    expect(q.pending).toBe(0);
    // Counting starts again after a merge.
    for (let i = 0; i < MERGE_FACTOR - 1; i++) q.note(1, 'a');
    expect(q.pending).toBe(0);
  });
});

/** Small blocks per term at most, and the largest block. */
interface Layout { maxSmallPerTerm: number; maxCount: number; rows: number }

describe.each([
  { name: 'SQLite', pg: false },
  { name: 'PostgreSQL', pg: true },
])('an index written in segments and merged answers as one written by appends, on $name', { timeout: 180_000 }, ({ pg: onPg }) => {
  const dirs: string[] = [];
  const dbs: FreshDatabase[] = [];
  let appended: SearchIndex & { close(): Promise<void> };
  let segmented: SearchIndex & { close(): Promise<void> };
  let layout: () => Promise<Layout>;

  const SQL = `SELECT coalesce(max(n), 0) AS small, (SELECT max(count) FROM search_postings) AS big, (SELECT count(*) FROM search_postings) AS rows
    FROM (SELECT count(*) AS n FROM search_postings WHERE count < ${BLOCK_SIZE} GROUP BY term, cid) s`;

  beforeAll(async () => {
    if (onPg) {
      const [a, b] = [await freshDatabase(), await freshDatabase()];
      dbs.push(a, b);
      appended = await openPostgresSearchIndex({ url: a.url });
      segmented = await openPostgresSearchIndex({ url: b.url });
      layout = async () => {
        const c = new pg.Client({ connectionString: b.url });
        await c.connect();
        try {
          const r = (await c.query(SQL)).rows[0];
          return { maxSmallPerTerm: Number(r.small), maxCount: Number(r.big), rows: Number(r.rows) };
        } finally {
          await c.end();
        }
      };
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'scour-search-segments-'));
      dirs.push(dir);
      appended = openSqliteSearchIndex({ path: join(dir, 'appended.db'), writerThread: false });
      segmented = openSqliteSearchIndex({ path: join(dir, 'segmented.db') });
      layout = async () => {
        const db = new Database(join(dir, 'segmented.db'), { readonly: true });
        try {
          const r = db.prepare(SQL).get() as { small: number; big: number; rows: number };
          return { maxSmallPerTerm: r.small, maxCount: r.big, rows: r.rows };
        } finally {
          db.close();
        }
      };
    }
    const docs = corpus(900, 17);
    // Appends: calls under 16 documents. Segments: calls of 20 (each a segment per term), so terms gather small blocks.
    for (let i = 0; i < docs.length; i += 15) await appended.upsert('shared', docs.slice(i, i + 15), NOW);
    for (let i = 0; i < docs.length; i += 20) await segmented.upsert('shared', docs.slice(i, i + 20), NOW);
  }, 180_000);

  afterAll(async () => {
    await appended?.close();
    await segmented?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const db of dbs) await db.drop();
  });

  /** Waits (bounded) until the background merge has nothing due: no term with more than MERGE_FACTOR small blocks. */
  async function merged(): Promise<Layout> {
    const until = Date.now() + 60_000;
    let l = await layout();
    while (l.maxSmallPerTerm > MERGE_FACTOR && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      l = await layout();
    }
    return l;
  }

  it('merges in the background: no term keeps more than MERGE_FACTOR small blocks, and blocks span many calls', async () => {
    const l = await merged();
    expect(l.maxSmallPerTerm).toBeLessThanOrEqual(MERGE_FACTOR);
    // Each call held 20 documents: a block of more entries was merged from several.
    expect(l.maxCount).toBeGreaterThan(20);
    // 45 calls would have left a block per term and call: far fewer rows remain.
    expect(l.rows).toBeLessThan(45 * 40);
  });

  it('the same hits, scores, snippets and totals, before and after replacements and removals', async () => {
    await merged();
    const a0 = await hitsOf(appended, ['shared']);
    expect(await hitsOf(segmented, ['shared'])).toEqual(a0);
    expect(a0.filter((x) => (x as [string, number])[1] > 0).length).toBeGreaterThan(QUERIES.length - 2);
    for (const index of [appended, segmented]) {
      // Replacements (new ids, so their entries go into new segments), removals (blocks rewritten), a second collection.
      const replaced = corpus(200, 23).map((d, i) => ({ ...d, url: `https://seg.example/${i * 4}` }));
      expect(await index.upsert('shared', replaced, NOW + 1)).toEqual({ indexed: 0, updated: 200 });
      expect(await index.remove('shared', Array.from({ length: 120 }, (_, i) => `https://seg.example/${i * 7 + 1}`), NOW + 2)).toBe(120);
      expect(await index.remove('shared', ['https://seg.example/1'], NOW + 3)).toBe(0);
      await index.upsert('acct_a', corpus(40, 29, 'https://a.example/'), NOW + 3);
    }
    // Whether or not a merge is running now, the answers are the same.
    expect(await hitsOf(segmented, ['shared', 'acct_a'])).toEqual(await hitsOf(appended, ['shared', 'acct_a']));
    expect((await segmented.stats()).collections).toEqual((await appended.stats()).collections);
  });
});
