// node benchmarks/search/tune.mjs (after npm run build): the ranking steps of
// the local index measured on the SciFact TRAIN queries only (qrels/train.tsv,
// 809 queries), never on the test queries. Indexes the corpus once into a
// temporary SQLite index (the same code path as an import), then runs the
// train queries (limit 10) under each ranking step and prints nDCG@10.
// TUNE_GRID='[{"k1":1.0}, ...]' runs a grid of overrides of the final
// parameters instead of the steps.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluateRun, idOf, loadCorpus, loadSplit } from './scifact.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { openSqliteSearchIndex } = await import(join(root, 'dist/adapters/search-index/sqlite.js'));
const { DEFAULT_RANKING } = await import(join(root, 'dist/adapters/search-index/rank.js'));
const { parseQuery } = await import(join(root, 'dist/core/search.js'));

/** Each step adds one change to the one before (analysis changes need a re-index and are in benchmarks/search/README.md). */
const BM25 = { k1: 1.2, bTitle: 0.75, bText: 0.75, titleWeight: 1, proximityWeight: 0, prfDocs: 0, prfTerms: 0, prfWeight: 0 };
const STEPS = [
  ['BM25F, k1 1.2, b 0.75, title weight 1 (plain BM25 over title+text)', BM25],
  ['k1 0.9, b 0.4 (Anserini\'s BEIR setting)', { ...BM25, k1: 0.9, bTitle: 0.4, bText: 0.4 }],
  ['title weight 2.5', { ...BM25, titleWeight: 2.5 }],
  ['title b 0.9', { ...BM25, titleWeight: 2.5, bTitle: 0.9 }],
  ['proximity bonus (BM25TP) weight 0.1', { ...BM25, titleWeight: 2.5, bTitle: 0.9, proximityWeight: 0.1 }],
  ['proximity weight 0.5 (rejected)', { ...BM25, titleWeight: 2.5, bTitle: 0.9, proximityWeight: 0.5 }],
  ['RM3-like feedback, 10 docs, 10 terms, weight 0.3 (rejected)', { ...BM25, titleWeight: 2.5, bTitle: 0.9, proximityWeight: 0.1, prfDocs: 10, prfTerms: 10, prfWeight: 0.3 }],
  ['RM3-like feedback, 3 docs, 10 terms, weight 0.5 (rejected)', { ...BM25, titleWeight: 2.5, bTitle: 0.9, proximityWeight: 0.1, prfDocs: 3, prfTerms: 10, prfWeight: 0.5 }],
  ['final (DEFAULT_RANKING)', DEFAULT_RANKING],
];

const dir = mkdtempSync(join(tmpdir(), 'scour-tune-'));
try {
  const path = join(dir, 'tune.db');
  const loader = openSqliteSearchIndex({ path });
  const corpus = loadCorpus();
  for (let i = 0; i < corpus.length; i += 1000) await loader.upsert('shared', corpus.slice(i, i + 1000), Date.now());
  loader.close();
  const train = loadSplit('train');
  const parsed = new Map(train.queries.map((q) => [q.text, parseQuery(q.text)]));
  const filters = { country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'off', resultType: 'web' };
  const score = async (ranking) => {
    const index = openSqliteSearchIndex({ path, ranking });
    try {
      return await evaluateRun(train, async (text) => {
        const p = parsed.get(text);
        if (!p.ok) return [];
        const r = await index.search({ query: p.query, collections: ['shared'], filters, limit: 10, now: 0 });
        return r.hits.map((h) => idOf(h.document.url));
      });
    } finally {
      index.close();
    }
  };
  const grid = process.env.TUNE_GRID === undefined ? undefined : JSON.parse(process.env.TUNE_GRID);
  const runs = grid === undefined ? STEPS : grid.map((g) => [JSON.stringify(g), { ...DEFAULT_RANKING, ...g }]);
  console.log('| step | train nDCG@10 |\n|---|---:|');
  for (const [name, ranking] of runs) console.log(`| ${name} | ${(await score(ranking)).ndcg10.toFixed(4)} |`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
