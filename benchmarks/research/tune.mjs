// Where research loses judged-relevant abstracts at `standard`, and what
// would recover them: measured on the SciFact TRAIN claims only (809, those
// judged in qrels/train.tsv); the test claims are never read here. Results
// and what they mean: benchmarks/research/README.md.
//
// Run (after npm run build): node benchmarks/research/tune.mjs [--limit N]
//
// Same server and index as run.mjs (lib.mjs). Per claim:
// - research as the bench asks it (standard, sources ["academic"]): recall of
//   sources_analyzed (10 sources);
// - the same with analysis_type literature_review (other angle sub-queries);
// - the same with max_sources 15, 20 and 30 (the sources in the order the
//   gather stage accepted them, which is the fused rank order): recall of
//   all of them, and of the 10 best by relevance_score or by
//   relevance.passages (what "read more from the index, keep the 10 that
//   read best" would give; reading a stored abstract costs little);
// - each of the plan's sub-queries (methodology.sub_queries) through
//   /v1/search, max_results 20 (the standard depth's results per
//   sub-query): recall of the top 10 after reciprocal rank fusion as
//   gather does it (k 60, equal weights; checked against the sources the
//   research read), with the question's own list weighted 2, 3 or 5, the
//   question's list alone, and without the analysis-type angles.
// Prints a table of mean recall and 'any relevant' per variant.
//
// Then where the time of a standard research goes, on the first 100 train
// claims (second pass timed): the server's time outside the timed stages
// with include_citations true and false (citation formatting), and, in this
// process on a SQLite index of its own (dist/), the plan's sub-query
// searches (SearchIndex.search, limit 20, as gather asks the local
// provider) beside SearchIndex.get of the candidates they return.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { idOf, loadCorpus, loadSplit } from '../search/scifact.mjs';
import { call, f3, indexScifact, mean, pct, root, startScour, table, teardown } from './lib.mjs';

const argv = process.argv.slice(2);
const limitAt = argv.indexOf('--limit');
const LIMIT = limitAt >= 0 ? Number(argv[limitAt + 1]) : Infinity;
const K = 10;
const RRF_K = 60;

const recallOf = (ids, rel) => [...rel].filter((d) => ids.includes(d)).length / rel.size;
const topBy = (sources, key) => [...sources].sort((a, b) => key(b) - key(a) || a.n - b.n).slice(0, K);

function rrf(lists, weights) {
  const score = new Map();
  const order = new Map();
  lists.forEach((list, i) => {
    list.forEach((id, rank) => {
      score.set(id, (score.get(id) ?? 0) + weights[i] / (RRF_K + rank + 1));
      if (!order.has(id)) order.set(id, order.size);
    });
  });
  return [...score.keys()].sort((a, b) => score.get(b) - score.get(a) || order.get(a) - order.get(b));
}

async function evaluate(server, split, label) {
  const rows = new Map();
  const add = (name, ids, rel) => {
    if (!rows.has(name)) rows.set(name, []);
    rows.get(name).push(recallOf(ids, rel));
  };
  const research = (claim, extra) => call(server.base, 'POST', '/v1/research', { research_query: claim, sources: ['academic'], analysis_depth: 'standard', include_methodology: true, ...extra }, server.key);
  let agree = 0;
  let n = 0;
  for (const q of split.queries.slice(0, LIMIT)) {
    const rel = split.qrels.get(q.id);
    const base = await research(q.text, {});
    if (base.status !== 200) throw new Error(`research: ${base.status} ${base.text.slice(0, 300)}`);
    const baseIds = base.body.sources_analyzed.map((s) => idOf(s.url));
    add('research, standard (as the bench asks)', baseIds, rel);
    const lit = await research(q.text, { analysis_type: 'literature_review' });
    add('research, standard, analysis_type literature_review', lit.body.sources_analyzed.map((s) => idOf(s.url)), rel);
    for (const m of [15, 20, 30]) {
      const r = await research(q.text, { max_sources: m });
      if (r.status !== 200) throw new Error(`research: ${r.status} ${r.text.slice(0, 300)}`);
      const src = r.body.sources_analyzed.map((s, i) => ({ n: i, id: idOf(s.url), score: s.relevance_score, passages: s.relevance.passages }));
      add(`read ${m} (max_sources ${m}), all`, src.map((s) => s.id), rel);
      add(`read ${m}, keep the 10 best by relevance_score`, topBy(src, (s) => s.score).map((s) => s.id), rel);
      add(`read ${m}, keep the 10 best by relevance.passages`, topBy(src, (s) => s.passages).map((s) => s.id), rel);
    }
    {
      const subs = base.body.methodology.sub_queries;
      const lists = [];
      for (const s of subs) {
        const r = await call(server.base, 'POST', '/v1/search', { query: s, max_results: 20 }, server.key);
        lists.push(r.status === 200 ? r.body.search_results.map((x) => idOf(x.link)) : []);
      }
      const fused = rrf(lists, lists.map(() => 1));
      n++;
      if (fused.slice(0, K).join() === baseIds.slice(0, K).join()) agree++;
      add('fusion simulated: RRF k 60, equal weights (as gather)', fused.slice(0, K), rel);
      for (const w of [2, 3, 5]) add(`fusion simulated: question's list weighted ${w}`, rrf(lists, lists.map((_, i) => (i === 0 ? w : 1))).slice(0, K), rel);
      add('fusion simulated: question and key words only (no angle sub-queries)', rrf(lists.slice(0, 2), [1, 1]).slice(0, K), rel);
      add("the question's search list alone (top 10)", lists[0].slice(0, K), rel);
      add("the question's search list alone (top 20)", lists[0].slice(0, 20), rel);
    }
  }
  console.log(`\n## ${label}: ${rows.values().next().value.length} claims, recall of the judged-relevant abstracts`);
  if (n > 0) console.log(`(the simulated equal-weight fusion gives the research's own 10 sources, in order, for ${agree} of ${n} claims)`);
  console.log(table([
    ['variant', 'mean recall', 'any relevant'],
    ...[...rows.entries()].map(([k, xs]) => [k, f3(mean(xs)), f3(mean(xs.map((x) => (x > 0 ? 1 : 0))))]),
  ]));
}

async function timing(server, claims) {
  const rest = { true: [], false: [] };
  for (let pass = 0; pass < 2; pass++) {
    for (const q of claims) {
      for (const cit of [true, false]) {
        const r = await call(server.base, 'POST', '/v1/research', { research_query: q.text, sources: ['academic'], analysis_depth: 'standard', include_methodology: true, include_citations: cit }, server.key);
        const t = r.body.methodology.timings_ms;
        if (pass === 1) rest[cit].push(r.body.processing_time * 1000 - (t.plan + t.gather + t.read + t.analyse));
      }
    }
  }
  const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
  const { openSqliteSearchIndex } = await dist('adapters/search-index/sqlite.js');
  const { parseQuery } = await dist('core/search.js');
  const { planResearch } = await dist('plugins/operations/research/plan.js');
  const dir = mkdtempSync(join(tmpdir(), 'scour-bench-research-tune-'));
  const index = await openSqliteSearchIndex({ path: join(dir, 'index.db') });
  const search = [];
  const get = [];
  const perSub = [];
  try {
    const corpus = loadCorpus();
    for (let i = 0; i < corpus.length; i += 1000) await index.upsert('shared', corpus.slice(i, i + 1000), Date.now());
    const filters = { country: undefined, language: undefined, publishedAfter: undefined, timeRange: undefined, safeSearch: 'moderate', resultType: 'web' };
    for (let pass = 0; pass < 2; pass++) {
      for (const q of claims) {
        const plan = planResearch({ research_query: q.text, analysis_depth: 'standard', sources: ['academic'] }, Date.now());
        const urls = new Set();
        const t0 = performance.now();
        for (const sq of plan.subQueries) {
          const parsed = parseQuery(sq);
          if (!parsed.ok) continue;
          const s0 = performance.now();
          const r = await index.search({ query: parsed.query, collections: ['shared', 'bench'], filters, limit: 20, now: Date.now() });
          if (pass === 1) perSub.push(performance.now() - s0);
          for (const h of r.hits) urls.add(h.document.url);
        }
        const t1 = performance.now();
        await index.get(['shared', 'bench'], [...urls]);
        if (pass === 1) { search.push(t1 - t0); get.push(performance.now() - t1); }
      }
    }
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (xs) => `${pct(xs, 0.5).toFixed(1)} / ${mean(xs).toFixed(1)}`;
  console.log(`\n## Where a standard research's time goes: ${claims.length} train claims, p50 / mean ms`);
  console.log(table([
    ['what', 'ms'],
    ['server time outside plan/gather/read/analyse, include_citations true (the default)', f(rest.true)],
    ['the same, include_citations false', f(rest.false)],
    ["the plan's sub-query searches, SearchIndex.search limit 20, in process, all of them", f(search)],
    ['one sub-query search', f(perSub)],
    ['SearchIndex.get of the candidates they return', f(get)],
  ]));
}

let status = 0;
try {
  const server = await startScour('tune', {});
  await indexScifact(server, loadCorpus());
  const train = loadSplit('train');
  await evaluate(server, train, 'SciFact TRAIN claims, standard depth');
  await timing(server, train.queries.slice(0, 100));
} catch (e) {
  status = 1;
  console.error(`tune failed: ${e?.stack ?? e}`);
} finally {
  await teardown();
}
process.exit(status);
