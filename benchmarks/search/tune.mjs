// node benchmarks/search/tune.mjs (after npm run build): the ranking steps of
// the local index measured on TUNING sets only, beside the sets held back to
// check them.
//
// Sets: SciFact's TRAIN queries (qrels/train.tsv, 809 queries; never the
// test queries), and the development collections of benchmarks/ir (Cranfield,
// CISI, NPL: bash scripts/get-ir-collections.sh). Each is indexed once into
// a temporary SQLite index (the same code path as an import), then every
// step's ranking runs over its judged queries (limit 100): nDCG@10 per set,
// and each set's ratio to plain SQLite FTS5 bm25 (unicode61) over the same
// documents and query text.
//
// Which sets the ranking was tuned on and which were held back to check it:
// TUNE_SETS (default: scifact-train, cranfield, cisi) and CHECK_SETS
// (default: npl); both are printed, the check sets after a bar.
// TUNE_GRID='[{"k1":1.0}, ...]' runs a grid of overrides of DEFAULT_RANKING
// instead of the steps. TUNE_KEEP=<dir> keeps the indexes there and reuses
// them on the next run (delete it after a change to the analysis).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { availableCollections, evaluateQueries, fts5Ranker, loadCollection, loadIndex, prepareQueries, scourRanker } from './collections.mjs';
import { idOf, loadCorpus, loadSplit } from './scifact.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { openSqliteSearchIndex } = await import(join(root, 'dist/adapters/search-index/sqlite.js'));
const { DEFAULT_RANKING } = await import(join(root, 'dist/adapters/search-index/rank.js'));
const core = await import(join(root, 'dist/core/search.js'));

const list = (v, d) => (v ?? d).split(',').map((s) => s.trim()).filter(Boolean);
const TUNE = list(process.env.TUNE_SETS, 'scifact-train,cranfield,cisi');
const CHECK = list(process.env.CHECK_SETS, 'npl');

/** Each step adds one change to the one before (analysis changes need a re-index: benchmarks/search/README.md). */
const BM25 = { k1: 1.2, bTitle: 0.75, bText: 0.75, titleWeight: 1, proximityWeight: 0, prfDocs: 0, prfTerms: 0, prfWeight: 0, requestWordWeight: 1 };
const SCIFACT_2026_11 = { ...BM25, titleWeight: 2.5, bTitle: 0.9, proximityWeight: 0.1 };
const STEPS = [
  ['BM25F, k1 1.2, b 0.75, title weight 1 (plain BM25 over title+text)', BM25],
  ['k1 0.9, b 0.4 (Anserini\'s BEIR setting)', { ...BM25, k1: 0.9, bTitle: 0.4, bText: 0.4 }],
  ['title weight 2.5', { ...BM25, titleWeight: 2.5 }],
  ['title b 0.9', { ...BM25, titleWeight: 2.5, bTitle: 0.9 }],
  ['proximity bonus (BM25TP) weight 0.1 (the SciFact-tuned ranking of 2026-11)', SCIFACT_2026_11],
  ['proximity weight 0.5 (rejected)', { ...SCIFACT_2026_11, proximityWeight: 0.5 }],
  ['RM3-like feedback, 10 docs, 10 terms, weight 0.3 (rejected)', { ...SCIFACT_2026_11, prfDocs: 10, prfTerms: 10, prfWeight: 0.3 }],
  ['k1 2.0 (rejected)', { ...SCIFACT_2026_11, k1: 2 }],
  ['text b 0.6 (rejected)', { ...SCIFACT_2026_11, bText: 0.6 }],
  ['request words weigh 0 (rejected)', { ...SCIFACT_2026_11, requestWordWeight: 0 }],
  ['request words weigh 0.3 (rejected)', { ...SCIFACT_2026_11, requestWordWeight: 0.3 }],
  ['request words weigh 0.5 (issue 28)', { ...SCIFACT_2026_11, requestWordWeight: 0.5 }],
  ['final (DEFAULT_RANKING)', DEFAULT_RANKING],
];

/** A set: its documents for the index, its queries as sent, its judgments, and the FTS5 baseline. */
function loadSet(name) {
  if (name === 'scifact-train') {
    const split = loadSplit('train');
    const c = { name: 'scifact', docs: loadCorpus().map((d) => ({ ...d, id: idOf(d.url) })), queries: split.queries, qrels: split.qrels };
    return { name, c, docs: loadCorpus() };
  }
  return { name, c: loadCollection(name) };
}

const keep = process.env.TUNE_KEEP;
const dir = keep ?? mkdtempSync(join(tmpdir(), 'scour-tune-'));
if (keep !== undefined) mkdirSync(keep, { recursive: true });
const sets = [];
try {
  const wanted = [...TUNE, ...CHECK];
  const have = new Set(['scifact-train', ...availableCollections()]);
  for (const name of wanted) {
    if (!have.has(name)) {
      console.error(`${name}: missing (run: bash scripts/get-ir-collections.sh); skipped`);
      continue;
    }
    const s = loadSet(name);
    const prepared = prepareQueries(s.c, core);
    const path = join(dir, `${name}.db`);
    if (!existsSync(path)) {
      const loader = openSqliteSearchIndex({ path });
      if (s.docs !== undefined) for (let i = 0; i < s.docs.length; i += 1000) await loader.upsert('shared', s.docs.slice(i, i + 1000), Date.now());
      else await loadIndex(loader, s.c);
      await loader.close();
    }
    const b = fts5Ranker(dir, s.c, undefined);
    const base = await evaluateQueries(prepared.queries, s.c.qrels, b.rank);
    b.close();
    sets.push({ name, path, queries: prepared.queries, qrels: s.c.qrels, base: base.ndcg10, check: CHECK.includes(name) });
  }

  const score = async (set, ranking) => {
    const index = openSqliteSearchIndex({ path: set.path, ranking });
    try {
      return await evaluateQueries(set.queries, set.qrels, scourRanker(index));
    } finally {
      await index.close();
    }
  };

  const grid = process.env.TUNE_GRID === undefined ? undefined : JSON.parse(process.env.TUNE_GRID);
  const runs = grid === undefined ? STEPS : grid.map((g) => [JSON.stringify(g), { ...DEFAULT_RANKING, ...g }]);
  const head = sets.map((s) => `${s.name}${s.check ? ' (held back)' : ''}`);
  console.log(`nDCG@10 (ratio to FTS5 bm25 unicode61); tuned on ${sets.filter((s) => !s.check).map((s) => s.name).join(', ')}; held back: ${sets.filter((s) => s.check).map((s) => s.name).join(', ') || 'none'}`);
  console.log(`| step | ${head.join(' | ')} | mean ratio (tuning sets) |\n|---|${sets.map(() => '---:').join('|')}|---:|`);
  console.log(`| FTS5 bm25 unicode61 | ${sets.map((s) => s.base.toFixed(4)).join(' | ')} | 1 |`);
  for (const [name, ranking] of runs) {
    const cells = [];
    let ratio = 0;
    for (const s of sets) {
      const m = await score(s, ranking);
      const r = m.ndcg10 / s.base;
      if (!s.check) ratio += r / sets.filter((x) => !x.check).length;
      cells.push(`${m.ndcg10.toFixed(4)} (${r.toFixed(3)})`);
    }
    console.log(`| ${name} | ${cells.join(' | ')} | ${ratio.toFixed(3)} |`);
  }
} finally {
  if (keep === undefined) rmSync(dir, { recursive: true, force: true });
}
