// Sub-query reformulation (issue 28) against the sub-queries it replaced:
// recall of the judged-relevant documents among the sources the gather
// stage accepts at standard depth (10), per development collection, in
// this process (the TypeScript sources through tsx, a SQLite index in
// memory, the local provider, gather() itself). Variants per question:
// - question: the question's own search list alone;
// - before: the question, its key words, and the key words plus
//   "overview", "analysis", "impact" (the plan before issue 28);
// - phrases: the plan's sub-queries (key phrases, pairs, names), no feedback;
// - phrases + feedback: the same with the feedback round (what runs now);
// each with gather's long-question threshold at 0 (every list fused as an
// equal) and at 40 words (LONG_QUESTION_WORDS, what runs: a shorter
// question's own results are read first); --long 0,40.
//
// Run: node --import tsx benchmarks/research/subqueries.mjs [--limit N] [--long 0,40]
// (SciFact: the TRAIN claims only; Cranfield, CISI: their judged queries.)
import { loadCollection, urlIn, indexDocuments, idFromUrl } from '../ir/collections.mjs';
import { loadCorpus, loadSplit, idOf } from '../search/scifact.mjs';
import { mean, seededSample, table, f3 } from './lib.mjs';

const { openSqliteSearchIndex } = await import('../../adapters/search-index/sqlite.ts');
const { createLocalProvider } = await import('../../plugins/search-providers/local/index.ts');
const { gather } = await import('../../plugins/operations/research/gather.ts');
const { planResearch, keyWords, plainQuery } = await import('../../plugins/operations/research/plan.ts');
const { indexTokenizer } = await import('../../config/research.ts');

const argv = process.argv.slice(2);
const LIMIT = argv.includes('--limit') ? Number(argv[argv.indexOf('--limit') + 1]) : 100;
// Variants of the long-question threshold (gather's LONG_QUESTION_WORDS): 0 fuses every list as an equal, Infinity always reads the question's own results first.
const WEIGHTS = (argv.includes('--long') ? argv[argv.indexOf('--long') + 1] : '0,40').split(',').map(Number);
const NOW = Date.UTC(2026, 10, 28);

function sets() {
  const out = [];
  for (const name of ['cranfield', 'cisi']) {
    const c = loadCollection(name);
    out.push({ name, docs: indexDocuments(c).filter((d) => /[\p{L}\p{N}]/u.test(`${d.title} ${d.text}`)), queries: c.queries.map((q) => ({ id: q.id, text: q.text.slice(0, 1000) })), qrels: c.qrels, idOf: idFromUrl });
  }
  const corpus = loadCorpus();
  const train = loadSplit('train');
  out.push({
    name: 'scifact-train', idOf,
    docs: corpus.map((d) => ({ url: d.url, title: d.title, text: d.text, publishedAt: null, language: null, country: null, type: 'academic', author: null, siteName: 'SciFact', doi: null, safe: true })),
    queries: train.queries, qrels: train.qrels,
  });
  return out;
}

const rows = [];
for (const set of sets()) {
  const index = openSqliteSearchIndex({ path: ':memory:' });
  for (let i = 0; i < set.docs.length; i += 1000) await index.upsert('shared', set.docs.slice(i, i + 1000), NOW);
  const provider = createLocalProvider({ index });
  const questions = seededSample(set.queries, LIMIT, 28);
  const r = { question: [], before: [], ...Object.fromEntries(WEIGHTS.flatMap((w) => [[`phrases w${w}`, []], [`feedback w${w}`, []]])) };
  const t0 = performance.now();
  for (const q of questions) {
    const rel = set.qrels.get(q.id);
    const plan = planResearch({ research_query: q.text, sources: ['academic'] }, NOW, indexTokenizer);
    const core = keyWords(q.text).slice(0, 12).join(' ');
    const before = [...new Set([plainQuery(q.text), core, `${core} overview`, `${core} analysis`, `${core} impact`])];
    const run = async (p, tokenizer, longQuestionWords = 0) => {
      const g = await gather({ plan: p, accountId: 'bench', now: NOW, deadline: performance.now() + 60_000, signal: new AbortController().signal }, {
        providers: [provider], providerTimeoutMs: 30_000, index, concurrency: 8, tokenizer, longQuestionWords,
        scrape: async () => { throw new Error('no scraping here'); }, refused: () => undefined,
      });
      const ids = new Set(g.sources.map((s) => set.idOf(s.url)));
      return [...rel].filter((d) => ids.has(d)).length / rel.size;
    };
    r.question.push(await run({ ...plan, subQueries: [plan.subQueries[0]], feedbackQueries: 0 }, undefined));
    r.before.push(await run({ ...plan, subQueries: before, feedbackQueries: 0 }, undefined));
    for (const w of WEIGHTS) {
      r[`phrases w${w}`].push(await run({ ...plan, feedbackQueries: 0 }, indexTokenizer, w));
      r[`feedback w${w}`].push(await run(plan, indexTokenizer, w));
    }
  }
  rows.push([set.name, String(questions.length), ...Object.values(r).map((xs) => f3(mean(xs))), `${((performance.now() - t0) / 1000).toFixed(0)} s`]);
  console.log(rows.at(-1).join(' '));
  await index.close?.();
}
console.log(table([['collection', 'questions', 'question alone', 'before (angles)', ...WEIGHTS.flatMap((w) => [`phrases, long >= ${w}`, `phrases + feedback, long >= ${w}`]), 'time'], ...rows]));
