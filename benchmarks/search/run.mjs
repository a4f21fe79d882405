// npm run bench:search: the local search index (the BUILT code in dist/) on
// BEIR SciFact (5,183 abstracts, ../shared/data/ir/scifact), on SQLite and on
// PostgreSQL, beside plain SQLite FTS5 bm25 in the same run.
//
// - Indexing: the corpus goes through SearchIndex.upsert in calls of 1,000
//   documents (the admin API's largest), language left to detection, as an
//   import does; documents per second over the whole load, and the index's
//   size on disk from stats().bytes.
// - Quality: the 300 test queries (those in qrels/test.tsv), each parsed by
//   core/search.ts parseQuery, searched with limit 100: nDCG@10 (binary
//   gains) and recall@100. The train queries' figures are printed too (the
//   ranking was tuned on them only: benchmarks/search/tune.mjs).
// - Latency: the test queries again with limit 10 (a results page, snippets
//   included), after a warm-up pass, each timed alone in this process: p50,
//   p99 and mean.
// - Import while searching: 10,000 new documents (SciFact abstracts under new
//   URLs) upserted into another collection in calls of 1,000 while this
//   process searches back to back (test queries, limit 10, over both
//   collections); each search's time counts from just before it yields to
//   the event loop, so one that arrives during a write batch waits for it.
// - Baseline: title+text in one FTS5 table (default unicode61 tokenizer),
//   each query's words quoted and OR-ed, ORDER BY bm25(t) LIMIT 100; and the
//   same with the porter tokenizer (stemming), for reference.
// - CPU: this process's CPU time (process.cpuUsage: every thread, so the
//   analysis workers and SQLite's writer count; a PostgreSQL server's does
//   not) per document indexed, less noisy than wall time on a shared
//   machine; and each indexing row's documents/s as a ratio to the FTS5
//   baseline's in the same run.
// - Development collections (Cranfield, CISI, NPL: benchmarks/ir, brought by
//   bash scripts/get-ir-collections.sh; missing ones are named and skipped):
//   each one's documents through SearchIndex.upsert on SQLite and PostgreSQL,
//   its judged queries (long natural-language questions in CISI) through
//   parseQuery (a query it refuses is cut or cleaned as a client would have
//   to, and counted: benchmarks/search/collections.mjs), limit 100: nDCG@10,
//   recall@100 and MAP@100 beside FTS5 bm25 (unicode61, query words OR-ed:
//   the baseline; porter for reference) over the same documents and query
//   text in the same run, and each row's nDCG@10 ratio to the baseline. The
//   SQLite index is also searched with the ranking as it was before issue 28
//   (BEFORE_ISSUE_28 below), for the before/after.
// Targets: nDCG@10 >= 0.70 on both backends, SQLite p50 < 2 ms and p99 <
// 10 ms, >= 2,000 documents/s indexed, p99 < 50 ms while importing.
// Prints a table and writes benchmarks/results/search.json.
// Both indexes are opened as config/store.ts opens them: documents analysed
// by the worker pool (adapters/search-index/analysis-pool.ts), SQLite
// written from its writer thread.
// Settings: SCOUR_SHARED_DATA, SEARCH_BENCH_PG_URL (admin URL; default
// postgres://postgres@127.0.0.1:5432/postgres; "none" skips PostgreSQL),
// SEARCH_BENCH_IMPORT (documents, default 10000), SEARCH_BENCH_OUT,
// SEARCH_BENCH_WORKERS (analysis workers; default as the server's, 0: in the
// main thread), SEARCH_BENCH_DIST (another build's dist/ directory, for a
// same-run comparison with an earlier version; one without the pool is
// opened without it).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { evaluateRun, idOf, loadCorpus, loadSplit, percentile, urlOf } from './scifact.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = process.env.SEARCH_BENCH_OUT ?? join(root, 'benchmarks', 'results', 'search.json');
const PG_ADMIN = process.env.SEARCH_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const IMPORT_DOCS = Number(process.env.SEARCH_BENCH_IMPORT ?? 10_000);
const BATCH = 1000;
const TARGETS = { ndcg10: 0.7, p50Ms: 2, p99Ms: 10, docsPerSecond: 2000, importP99Ms: 50 };

const dist = process.env.SEARCH_BENCH_DIST ?? join(root, 'dist');
const { openSqliteSearchIndex } = await import(join(dist, 'adapters/search-index/sqlite.js'));
const { openPostgresSearchIndex } = await import(join(dist, 'adapters/search-index/postgres.js'));
const core = await import(join(dist, 'core/search.js'));
const { parseQuery } = core;
const { availableCollections, benchCollection } = await import('./collections.mjs');
const { COLLECTIONS } = await import('../ir/collections.mjs');
/** The ranking before issue 28 (tuned on SciFact alone): request words weighed like any other. */
const BEFORE_ISSUE_28 = { requestWordWeight: 1 };
const poolModule = await import(join(dist, 'adapters/search-index/analysis-pool.js')).catch(() => undefined);
const WORKERS = process.env.SEARCH_BENCH_WORKERS === undefined ? undefined : Number(process.env.SEARCH_BENCH_WORKERS);
// As config/store.ts opens it (a build before analyseWhileStarting ignores the option).
const analyser = poolModule === undefined ? undefined : new poolModule.AnalysisPool({ analyseWhileStarting: true, ...(WORKERS === undefined ? {} : { workers: WORKERS }) });
const withAnalyser = (options) => (analyser === undefined ? options : { ...options, analyser });

const FILTERS = { country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web' };
const corpus = loadCorpus();
const test = loadSplit('test');
const train = loadSplit('train');
const parsed = new Map([...test.queries, ...train.queries].map((q) => [q.text, parseQuery(q.text)]));
const unparsed = test.queries.filter((q) => !parsed.get(q.text).ok).map((q) => ({ id: q.id, text: q.text, message: parsed.get(q.text).message }));

const round = (x, d = 4) => (x === null || x === undefined ? null : Math.round(x * 10 ** d) / 10 ** d);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const tick = () => new Promise((r) => setImmediate(r));
/** This process's CPU time in ms (every thread: the analysis workers and SQLite's writer count; a PostgreSQL server does not). */
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

async function rankWith(index, collections, limit) {
  return async (text) => {
    const p = parsed.get(text);
    if (!p.ok) return [];
    const r = await index.search({ query: p.query, collections, filters: FILTERS, limit, now: Date.now() });
    return r.hits.map((h) => idOf(h.document.url));
  };
}

async function latency(index, collections) {
  const queries = test.queries.map((q) => parsed.get(q.text)).filter((p) => p.ok).map((p) => p.query);
  for (const query of queries.slice(0, 50)) await index.search({ query, collections, filters: FILTERS, limit: 10, now: Date.now() });
  const ms = [];
  for (const query of queries) {
    const t0 = performance.now();
    await index.search({ query, collections, filters: FILTERS, limit: 10, now: Date.now() });
    ms.push(performance.now() - t0);
  }
  return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), mean: mean(ms), queries: ms.length };
}

/** Imports IMPORT_DOCS new documents in calls of BATCH while searching back to back; the searches' wall times. */
async function importWhileSearching(index) {
  const docs = [];
  for (let i = 0; docs.length < IMPORT_DOCS; i++) {
    const d = corpus[i % corpus.length];
    docs.push({ ...d, url: `${urlOf(d.url.slice(d.url.lastIndexOf('/') + 1))}/copy-${Math.floor(i / corpus.length)}` });
  }
  const queries = test.queries.map((q) => parsed.get(q.text)).filter((p) => p.ok).map((p) => p.query);
  let done = false;
  const ms = [];
  // Back to back, each search's time counted from just before it gives the event loop a turn: whatever
  // is queued there (a write batch of the import) runs first, so a search that arrives during a write
  // waits for it, as a request would.
  const searching = (async () => {
    let i = 0;
    while (!done) {
      const t0 = performance.now();
      await tick();
      await index.search({ query: queries[i++ % queries.length], collections: ['shared', 'import'], filters: FILTERS, limit: 10, now: Date.now() });
      ms.push(performance.now() - t0);
    }
  })();
  const c0 = cpuMs();
  const t0 = performance.now();
  for (let i = 0; i < docs.length; i += BATCH) await index.upsert('import', docs.slice(i, i + BATCH), Date.now());
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMs() - c0;
  done = true;
  await searching;
  return {
    documents: docs.length, seconds: round(seconds, 2), docsPerSecond: Math.round(docs.length / seconds), searches: ms.length, p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), max: Math.max(...ms),
    // The searches' CPU counts too (they run in this process during the import).
    cpuMsPerDoc: round(cpu / docs.length, 3),
  };
}

async function benchIndex(name, open) {
  const index = await open();
  try {
    const c0 = cpuMs();
    const t0 = performance.now();
    for (let i = 0; i < corpus.length; i += BATCH) await index.upsert('shared', corpus.slice(i, i + BATCH), Date.now());
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuMs() - c0;
    const stats = await index.stats();
    const quality = await evaluateRun(test, await rankWith(index, ['shared'], 100));
    const trainQuality = await evaluateRun(train, await rankWith(index, ['shared'], 100));
    const lat = await latency(index, ['shared']);
    const imp = await importWhileSearching(index);
    return {
      backend: name,
      ranking: index.ranking,
      ndcg10: round(quality.ndcg10),
      recall100: round(quality.recall100),
      train_ndcg10: round(trainQuality.ndcg10),
      train_recall100: round(trainQuality.recall100),
      latency_ms: { p50: round(lat.p50, 3), p99: round(lat.p99, 3), mean: round(lat.mean, 3), limit: 10, queries: lat.queries },
      indexing: { documents: corpus.length, seconds: round(seconds, 2), docs_per_second: Math.round(corpus.length / seconds), batch: BATCH, cpu_ms_per_doc: round(cpu / corpus.length, 3) },
      index_bytes: stats.bytes,
      import_while_searching: { ...imp, p50: round(imp.p50, 3), p99: round(imp.p99, 3), max: round(imp.max, 3) },
      per_query_ndcg10: Object.fromEntries(Object.entries(quality.perQuery).map(([k, v]) => [k, round(v)])),
    };
  } finally {
    await index.close();
  }
}

/**
 * Indexing with the threads already up, as in a server that has indexed
 * before (its analysis workers and, on SQLite, its writer thread started):
 * a fresh index, warmed (index.warm(): the threads started and answering),
 * then the same load, timed alone. The row above it (the first import
 * after opening) pays the threads' start-up inside its time; this one is
 * the steady rate. Both backends are measured this way in turn, after the
 * same warm-up, so neither inherits the other's started workers.
 */
async function warmIndexing(open) {
  const index = await open();
  try {
    if (typeof index.warm !== 'function') return undefined;
    await index.warm();
    const c0 = cpuMs();
    const t0 = performance.now();
    for (let i = 0; i < corpus.length; i += BATCH) await index.upsert('shared', corpus.slice(i, i + BATCH), Date.now());
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuMs() - c0;
    return { documents: corpus.length, seconds: round(seconds, 2), docs_per_second: Math.round(corpus.length / seconds), batch: BATCH, cpu_ms_per_doc: round(cpu / corpus.length, 3) };
  } finally {
    await index.close();
  }
}

/** Plain SQLite FTS5: title and text in one table, default tokenizer, bm25(). */
async function fts5Baseline(dir, tokenizer) {
  const db = new Database(join(dir, `fts5-${tokenizer === undefined ? 'default' : 'porter'}.db`));
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(title, text${tokenizer === undefined ? '' : `, tokenize = '${tokenizer}'`})`);
  const ids = [];
  const insert = db.prepare('INSERT INTO t (rowid, title, text) VALUES (?, ?, ?)');
  const c0 = cpuMs();
  const t0 = performance.now();
  db.transaction(() => corpus.forEach((d, i) => {
    insert.run(i + 1, d.title, d.text);
    ids.push(idOf(d.url));
  }))();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMs() - c0;
  const bytes = db.prepare("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 't%'").pluck().get();
  const stmt = db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?').pluck();
  const words = (text) => [...new Set(text.match(/[\p{L}\p{N}]+/gu) ?? [])];
  const run = (text, limit) => {
    const w = words(text);
    if (w.length === 0) return [];
    return stmt.all(w.map((x) => `"${x}"`).join(' OR '), limit).map((r) => ids[r - 1]);
  };
  const quality = await evaluateRun(test, (text) => run(text, 100));
  const trainQuality = await evaluateRun(train, (text) => run(text, 100));
  for (const q of test.queries.slice(0, 50)) run(q.text, 10);
  const ms = [];
  for (const q of test.queries) {
    const s = performance.now();
    run(q.text, 10);
    ms.push(performance.now() - s);
  }
  db.close();
  return {
    backend: tokenizer === undefined ? 'SQLite FTS5 bm25 (baseline)' : `SQLite FTS5 bm25, ${tokenizer}`,
    ndcg10: round(quality.ndcg10),
    recall100: round(quality.recall100),
    train_ndcg10: round(trainQuality.ndcg10),
    train_recall100: round(trainQuality.recall100),
    latency_ms: { p50: round(percentile(ms, 0.5), 3), p99: round(percentile(ms, 0.99), 3), mean: round(mean(ms), 3), limit: 10, queries: ms.length, note: 'ids only, no snippets' },
    indexing: { documents: corpus.length, seconds: round(seconds, 2), docs_per_second: Math.round(corpus.length / seconds), batch: corpus.length, cpu_ms_per_doc: round(cpu / corpus.length, 3) },
    index_bytes: bytes,
  };
}

async function pgDatabase() {
  if (PG_ADMIN === 'none') return undefined;
  const name = `scour_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (e) {
    console.error(`PostgreSQL skipped: ${e.message}`);
    return undefined;
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const loadStart = loadavg();
const dir = mkdtempSync(join(tmpdir(), 'scour-bench-search-'));
const results = [];
const collections = [];
let missingCollections = [];
try {
  results.push(await fts5Baseline(dir));
  results.push(await fts5Baseline(dir, 'porter unicode61'));
  console.error('fts5 done');
  results.push(await benchIndex('Scour index, SQLite (embedded)', () => openSqliteSearchIndex(withAnalyser({ path: join(dir, 'scour.db') }))));
  results.at(-1).indexing_threads_up = await warmIndexing(() => openSqliteSearchIndex(withAnalyser({ path: join(dir, 'scour-warm.db') })));
  console.error('sqlite done');
  const db = await pgDatabase();
  if (db !== undefined) {
    try {
      results.push(await benchIndex('Scour index, PostgreSQL', () => openPostgresSearchIndex(withAnalyser({ url: db.url }))));
    } finally {
      await db.drop();
    }
    const warmDb = await pgDatabase();
    if (warmDb !== undefined) {
      try {
        results.at(-1).indexing_threads_up = await warmIndexing(() => openPostgresSearchIndex(withAnalyser({ url: warmDb.url })));
      } finally {
        await warmDb.drop();
      }
    }
    console.error('postgres done');
  }
  const have = availableCollections();
  missingCollections = COLLECTIONS.filter((n) => !have.includes(n));
  if (missingCollections.length > 0) console.error(`development collections missing: ${missingCollections.join(', ')} (run: bash scripts/get-ir-collections.sh); continuing without them`);
  for (const name of have) {
    const pgdb = await pgDatabase();
    try {
      const openers = [
        { backend: 'Scour, SQLite', open: (n) => openSqliteSearchIndex({ path: join(dir, `${n}.db`) }) },
        { backend: 'Scour, SQLite, ranking before issue 28', open: (n) => openSqliteSearchIndex({ path: join(dir, `${n}.db`), ranking: BEFORE_ISSUE_28 }), load: false },
      ];
      if (pgdb !== undefined) openers.push({ backend: 'Scour, PostgreSQL', open: () => openPostgresSearchIndex({ url: pgdb.url }) });
      collections.push(await benchCollection(name, dir, core, openers));
      console.error(`${name} done`);
    } finally {
      await pgdb?.drop();
    }
  }
} finally {
  await analyser?.close();
  rmSync(dir, { recursive: true, force: true });
}

const [, , sqlite, postgres] = results;
const met = {
  ndcg10_sqlite: sqlite.ndcg10 >= TARGETS.ndcg10,
  ndcg10_postgres: postgres === undefined ? null : postgres.ndcg10 >= TARGETS.ndcg10,
  p50_sqlite: sqlite.latency_ms.p50 < TARGETS.p50Ms,
  p99_sqlite: sqlite.latency_ms.p99 < TARGETS.p99Ms,
  docs_per_second_sqlite: sqlite.indexing.docs_per_second >= TARGETS.docsPerSecond,
  docs_per_second_postgres: postgres === undefined ? null : postgres.indexing.docs_per_second >= TARGETS.docsPerSecond,
  docs_per_second_sqlite_threads_up: sqlite.indexing_threads_up === undefined ? null : sqlite.indexing_threads_up.docs_per_second >= TARGETS.docsPerSecond,
  docs_per_second_postgres_threads_up: postgres?.indexing_threads_up === undefined ? null : postgres.indexing_threads_up.docs_per_second >= TARGETS.docsPerSecond,
  import_p99_sqlite: sqlite.import_while_searching.p99 < TARGETS.importP99Ms,
  import_p99_postgres: postgres === undefined ? null : postgres.import_while_searching.p99 < TARGETS.importP99Ms,
};

const mb = (b) => (b === null || b === undefined ? '-' : (b / 1048576).toFixed(1));
const rows = [
  ['', 'nDCG@10', 'recall@100', 'train nDCG@10', 'p50 ms', 'p99 ms', 'docs/s', 'vs FTS5', 'CPU ms/doc', 'size MB', 'import p99 ms'],
  ...results.map((r) => [
    r.backend, r.ndcg10.toFixed(4), r.recall100.toFixed(4), r.train_ndcg10.toFixed(4), r.latency_ms.p50.toFixed(2), r.latency_ms.p99.toFixed(2),
    String(r.indexing.docs_per_second), (r.indexing.docs_per_second / results[0].indexing.docs_per_second).toFixed(3), r.indexing.cpu_ms_per_doc.toFixed(3), mb(r.index_bytes), r.import_while_searching ? r.import_while_searching.p99.toFixed(1) : '-',
  ]),
];
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
const line = (r) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
console.log(`\nload average (1 min) at start ${loadStart[0].toFixed(2)}, at end ${loadavg()[0].toFixed(2)} on ${cpus().length} cores`);
console.log(`SciFact: ${corpus.length} documents, ${test.queries.length} test queries (${unparsed.length} refused by parseQuery), ${train.queries.length} train queries`);
console.log(line(rows[0]));
console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
for (const r of rows.slice(1)) console.log(line(r));
for (const r of results.filter((x) => x.indexing_threads_up !== undefined)) {
  const w = r.indexing_threads_up;
  console.log(`${r.backend}, threads up (warmed, as in a server that has indexed before): ${w.documents} documents in ${w.seconds} s, ${w.docs_per_second}/s (${(w.docs_per_second / results[0].indexing.docs_per_second).toFixed(3)} x FTS5), ${w.cpu_ms_per_doc} ms of CPU a document; the first import after opening above: ${r.indexing.docs_per_second}/s`);
}
for (const r of results.filter((x) => x.import_while_searching !== undefined)) {
  const i = r.import_while_searching;
  console.log(`${r.backend}: import of ${i.documents} documents in ${i.seconds} s (${i.docsPerSecond}/s, ${i.cpuMsPerDoc} ms of CPU a document with the searches) while ${i.searches} searches ran: p50 ${i.p50} ms, p99 ${i.p99} ms, max ${i.max} ms`);
}
console.log(Object.entries(met).map(([k, v]) => `${k}: ${v === null ? 'n/a' : v ? 'MET' : 'MISS'}`).join(', '));
if (missingCollections.length > 0) console.log(`\nDevelopment collections missing: ${missingCollections.join(', ')}. Run: bash scripts/get-ir-collections.sh`);
for (const c of collections) {
  const changes = Object.entries(c.query_changes).map(([k, v]) => `${v} ${k}`).join(', ');
  console.log(`\n${c.collection} (${c.shape}): ${c.documents} documents, ${c.queries} judged queries of ${c.query_words.min} to ${c.query_words.max} words (median ${c.query_words.median}); ${c.queries_changed} refused by parseQuery and sent changed${changes === '' ? '' : ` (${changes})`}`);
  const t = [['', 'nDCG@10', 'ratio to BM25', 'recall@100', 'MAP@100'], ...c.rows.map((r) => [r.backend, r.ndcg10.toFixed(4), r.ratio_ndcg10.toFixed(3), r.recall100.toFixed(4), r.map100.toFixed(4)])];
  const w = t[0].map((_, i) => Math.max(...t.map((r) => r[i].length)));
  const l = (r) => `| ${r.map((x, i) => (i === 0 ? x.padEnd(w[i]) : x.padStart(w[i]))).join(' | ')} |`;
  console.log(l(t[0]));
  console.log(`|${w.map((x, i) => (i === 0 ? '-'.repeat(x + 2) : `${'-'.repeat(x + 1)}:`)).join('|')}|`);
  for (const r of t.slice(1)) console.log(l(r));
}
const devMet = collections.map((c) => ({ collection: c.collection, ratios: c.rows.filter((r) => r.backend === 'Scour, SQLite' || r.backend === 'Scour, PostgreSQL').map((r) => r.ratio_ndcg10) }));
if (devMet.length > 0) {
  const worst = devMet.map((c) => Math.min(...c.ratios));
  met.dev_at_or_above_bm25 = worst.every((r) => r >= 1);
  met.dev_most_5pct_above = worst.filter((r) => r >= 1.05).length > devMet.length / 2;
  console.log(`\ndevelopment collections at or above BM25: ${met.dev_at_or_above_bm25 ? 'MET' : 'MISS'}; most 5% above: ${met.dev_most_5pct_above ? 'MET' : 'MISS'} (ratios ${devMet.map((c, i) => `${c.collection} ${worst[i].toFixed(3)}`).join(', ')})`);
}

writeFileSync(OUT, `${JSON.stringify({
  benchmark: 'BEIR SciFact (5,183 abstracts, 300 test queries)',
  dist: relative(root, dist) || dist,
  analysis_workers: analyser === undefined ? null : analyser.size,
  date: new Date().toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  // Other processes on this machine during the run (1-minute load average at the start and the end): latency and throughput figures depend on it.
  load_average: { start: round(loadStart[0], 2), end: round(loadavg()[0], 2) },
  targets: TARGETS,
  met,
  unparsed_test_queries: unparsed,
  results: results.map(({ per_query_ndcg10: _p, ...r }) => r),
  development_collections: collections.map((c) => ({ ...c, rows: c.rows.map(({ per_query_ndcg10: _p, ...r }) => r) })),
  development_collections_missing: missingCollections,
}, null, 2)}\n`);
console.log(`wrote ${OUT}`);
