// The development IR collections (Cranfield, CISI, NPL: benchmarks/ir/
// collections.mjs) in the search benchmark and the tuning script: each one's
// documents through SearchIndex.upsert, each judged query through
// core/search.ts parseQuery and SearchIndex.search, beside plain SQLite FTS5
// bm25() over the same documents and the same query text in the same run.
//
// Metrics, binary relevance as BEIR and ir_datasets treat these sets:
// nDCG@10, recall@100 and MAP over the first 100 results (average precision
// with the relevant documents not retrieved in 100 counting as misses, so
// it is trec_eval's AP cut at 100).
//
// Queries the parser refuses are made searchable the way a client would
// have to (and counted, per kind): one over the length bound is cut at the
// last space before MAX_QUERY_LENGTH characters, one with more items than
// MAX_QUERY_ITEMS keeps the first ones, and characters the parser reads as
// syntax it then refuses (quotes, a dash standing alone, an operator with
// nothing after it) are made spaces. The baseline gets the same text.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { availableCollections, idFromUrl, indexDocuments, loadCollection } from '../ir/collections.mjs';
import { ndcgAt, recallAt } from './scifact.mjs';

export { ndcgAt, recallAt };

export { availableCollections, loadCollection };

export const FILTERS = { country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web' };
const BATCH = 1000;

// ---------------------------------------------------------------------------
// Metrics

/** Average precision over the first k results; relevant documents not among them count as misses. */
export function apAt(ranked, relevant, k = 100) {
  let hit = 0;
  let sum = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    if (relevant.has(ranked[i])) {
      hit++;
      sum += hit / (i + 1);
    }
  }
  return relevant.size === 0 ? 0 : sum / relevant.size;
}

/** Mean metrics over the queries, given an (async) function from query text to ranked doc ids. */
export async function evaluateQueries(queries, qrels, rank) {
  let ndcg = 0;
  let recall = 0;
  let ap = 0;
  const perQuery = {};
  for (const q of queries) {
    const ranked = await rank(q.text, q);
    const rel = qrels.get(q.id);
    const n = ndcgAt(ranked, rel);
    ndcg += n;
    recall += recallAt(ranked, rel);
    ap += apAt(ranked, rel);
    perQuery[q.id] = n;
  }
  const count = queries.length || 1;
  return { ndcg10: ndcg / count, recall100: recall / count, map100: ap / count, queries: queries.length, perQuery };
}

// ---------------------------------------------------------------------------
// Queries

/**
 * The query as sent: the text itself when parseQuery takes it; else cut or
 * cleaned as the header says, with the kinds of change made.
 */
export function searchableQuery(text, core) {
  const { parseQuery, MAX_QUERY_LENGTH, MAX_QUERY_ITEMS } = core;
  let p = parseQuery(text);
  if (p.ok) return { text, parsed: p.query, changes: [] };
  const changes = [];
  let t = core.normaliseQuery(text);
  if (t.length > MAX_QUERY_LENGTH) {
    const space = t.lastIndexOf(' ', MAX_QUERY_LENGTH);
    t = t.slice(0, space > 0 ? space : MAX_QUERY_LENGTH);
    changes.push('cut to the length bound');
    p = parseQuery(t);
  }
  if (!p.ok && /items/.test(p.message)) {
    t = t.split(' ').slice(0, MAX_QUERY_ITEMS).join(' ');
    changes.push('cut to the item bound');
    p = parseQuery(t);
  }
  if (!p.ok) {
    // Syntax the parser refuses in natural text: quotes, a lone dash, "site:"/"intitle:" with nothing after.
    t = t.replace(/["\u201c\u201d\u201e\u201f\u00ab\u00bb]/g, ' ').replace(/(^| )-+(?= |$)/g, ' ').replace(/\b(site|intitle):/gi, '$1 ');
    t = t.replace(/\s+/g, ' ').trim();
    changes.push('syntax characters made spaces');
    p = parseQuery(t);
  }
  return p.ok ? { text: t, parsed: p.query, changes } : { text: t, parsed: undefined, changes: [...changes, `still refused: ${p.message}`] };
}

/** Each collection's queries as sent, and counts of the changes made. */
export function prepareQueries(c, core) {
  const counts = {};
  const queries = c.queries.map((q) => {
    const s = searchableQuery(q.text, core);
    for (const k of s.changes) counts[k] = (counts[k] ?? 0) + 1;
    return { id: q.id, original: q.text, text: s.text, parsed: s.parsed, changed: s.changes.length > 0 };
  });
  return { queries, changes: counts, changed: queries.filter((q) => q.changed).length };
}

const words = (text) => text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;

/** Words per query as sent: median and range. */
export function queryLengths(queries) {
  const n = queries.map((q) => words(q.text)).sort((a, b) => a - b);
  return { median: n[Math.floor(n.length / 2)], min: n[0], max: n[n.length - 1] };
}

// ---------------------------------------------------------------------------
// Indexes

/** Loads a collection's documents into a Scour index (collection 'shared'); seconds taken. */
export async function loadIndex(index, c) {
  const docs = indexDocuments(c);
  const t0 = performance.now();
  for (let i = 0; i < docs.length; i += BATCH) await index.upsert('shared', docs.slice(i, i + BATCH), Date.now());
  return (performance.now() - t0) / 1000;
}

/** Ranks with a Scour index: parsed query, limit 100, ids. */
export function scourRanker(index, limit = 100) {
  return async (_text, q) => {
    if (q.parsed === undefined) return [];
    const r = await index.search({ query: q.parsed, collections: ['shared'], filters: FILTERS, limit, now: 0 });
    return r.hits.map((h) => idFromUrl(h.document.url));
  };
}

/**
 * Plain SQLite FTS5 bm25() over title and text in one table (the SciFact
 * baseline of run.mjs): `tokenizer` undefined is the default unicode61, or
 * e.g. 'porter unicode61'; each query's distinct words quoted and OR-ed.
 */
export function fts5Ranker(dir, c, tokenizer, limit = 100) {
  const path = join(dir, `fts5-${c.name}-${tokenizer === undefined ? 'default' : tokenizer.replace(/\W+/g, '-')}.db`);
  rmSync(path, { force: true });
  const db = new Database(path);
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(title, text${tokenizer === undefined ? '' : `, tokenize = '${tokenizer}'`})`);
  const insert = db.prepare('INSERT INTO t (rowid, title, text) VALUES (?, ?, ?)');
  const ids = [];
  db.transaction(() => c.docs.forEach((d, i) => {
    insert.run(i + 1, d.title, d.text);
    ids.push(d.id);
  }))();
  const stmt = db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?').pluck();
  const rank = (text) => {
    const w = [...new Set(text.match(/[\p{L}\p{N}]+/gu) ?? [])];
    if (w.length === 0) return [];
    return stmt.all(w.map((x) => `"${x}"`).join(' OR '), limit).map((r) => ids[r - 1]);
  };
  return { rank, close: () => db.close() };
}

const round = (x, d = 4) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * One collection, in one run: FTS5 bm25 (unicode61, the baseline; porter for
 * reference) and the Scour index of each opener ({ backend, open(name),
 * load }: load false reopens an index an earlier opener loaded, e.g. with
 * other ranking parameters). Returns the rows, each with its nDCG@10 ratio
 * to the baseline.
 */
export async function benchCollection(name, dir, core, openers) {
  const c = loadCollection(name);
  const prepared = prepareQueries(c, core);
  const rows = [];
  const row = (backend, m, extra = {}) => ({ backend, ndcg10: round(m.ndcg10), recall100: round(m.recall100), map100: round(m.map100), ...extra, per_query_ndcg10: m.perQuery });
  for (const tok of [undefined, 'porter unicode61']) {
    const b = fts5Ranker(dir, c, tok);
    try {
      rows.push(row(tok === undefined ? 'SQLite FTS5 bm25 (baseline)' : 'SQLite FTS5 bm25, porter', await evaluateQueries(prepared.queries, c.qrels, b.rank)));
    } finally {
      b.close();
    }
  }
  for (const { backend, open, load = true } of openers) {
    const index = await open(name);
    try {
      const seconds = load ? await loadIndex(index, c) : null;
      rows.push(row(backend, await evaluateQueries(prepared.queries, c.qrels, scourRanker(index)), { ranking: index.ranking, indexing_seconds: seconds === null ? null : round(seconds, 2) }));
    } finally {
      await index.close();
    }
  }
  const base = rows[0];
  for (const r of rows) r.ratio_ndcg10 = round(r.ndcg10 / base.ndcg10, 3);
  return {
    collection: name,
    shape: c.shape,
    documents: c.docs.length,
    queries: c.queries.length,
    query_words: queryLengths(prepared.queries),
    queries_changed: prepared.changed,
    query_changes: prepared.changes,
    rows,
  };
}
