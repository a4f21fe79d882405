// npm run bench:research: POST /v1/research on the BUILT server (dist/), over
// BEIR SciFact in the local index, and once through a loopback SearXNG and
// loopback pages. Issue 13, "Measured".
//
// Run: npm run bench:research [-- --limit N] [-- --depth quick|standard|comprehensive|all]
//   (= npm run build --silent && node --import tsx benchmarks/research/run.mjs;
//   tsx only so the fake SearXNG of the tests, test/support/searxng.ts,
//   imports as it is).
//
// Part 1, SciFact (5,183 abstracts, ../shared/data/ir/scifact):
// - Scour runs in a child process (node dist/config/cli.js serve):
//   embedded configuration (SQLite in a temp directory, in-process limiter),
//   127.0.0.1, SCOUR_SEARCH_PROVIDERS=local, an admin token, and SCOUR_PLANS
//   lifting the Unicorn plan's research and search windows (100/min would
//   otherwise refuse a run of fast requests; concurrency stays the plan's).
//   A Unicorn account with 1,000,000 credits is made through the admin API.
// - The corpus is loaded with the search bench's loader (../search/scifact.mjs
//   loadCorpus: same URLs, https://scifact.example.org/abstract/<id>) into the
//   shared collection through POST /admin/v1/index/documents, 1,000 a call,
//   type 'academic', site_name 'SciFact', language left to detection.
// - The TEST claims (the 300 queries judged in qrels/test.tsv, in file order)
//   are asked one at a time as research questions: {research_query: claim,
//   sources: ["academic"], analysis_depth, include_methodology: true}. After
//   WARMUP train claims per depth (not counted). Nothing is tuned here; the
//   train claims are only used to warm up.
// - Latency: client wall time from sending the request to the last byte of
//   the answer; p50, p95, max, mean per depth. Per stage: the response's
//   methodology.timings_ms (plan, gather, read, analyse:<analyser>, report),
//   and processing_time (the server's whole time) beside the wall time.
// - Recall in sources: per claim, the fraction of its judged-relevant
//   abstracts whose URL is among sources_analyzed; the mean over the claims
//   ("mean recall"), and the share of claims with at least one of them there
//   ("any relevant"). The same among citations (the sources cited, through
//   each citation's source_id). A baseline from the same server: POST
//   /v1/search with the research plan's first sub-query (the claim with
//   query operators neutralised, plan.ts plainQuery), max_results 20:
//   recall@5, @10 and @20 (what reading the search's top k alone would give;
//   5 / 10 / 20 are the depths' default max_sources).
// - Evidence integrity: every {source_id, text, start, end} anywhere in the
//   body must name a source of sources_analyzed whose URL is a SciFact
//   abstract, and SciFact's text of that abstract (as loaded) .slice(start,
//   end) must equal text. Violations are counted by kind. Also: every
//   citation's source_id is a source of sources_analyzed marked used.
//
// Part 2, the scraping path: the fake SearXNG of the tests on 127.0.0.1
// (test/support/searxng.ts), and a node:http server on 127.0.0.1 serving 10
// real news pages of the Zyte article benchmark (../shared/data/extraction/
// zyte-article-benchmark, the first 10 by id; 30 to 600 KB of HTML each). A
// second Scour child with SCOUR_SEARCH_PROVIDERS=searxng, SEARXNG_URL the
// fake, SCOUR_ALLOW_PRIVATE_TARGETS=loopback. For each search the fake
// returns all 10 pages ranked by words shared with the query (ties by id),
// each page's URL with a query string of its own per question and depth
// (?q=<depth>-<n>), so no cache of any kind can answer for a page: every
// source is fetched and extracted through the scrape pipeline. Questions:
// the pages' titles (site suffix removed), SCRAPE_QUESTIONS of them, at
// quick and standard, without source filters. Wall time p50/p95, per stage,
// pages fetched; integrity: each quote's text must appear in its page's text
// (tags, scripts and styles removed, entities decoded, all whitespace
// removed on both sides: the extracted text's exact offsets are not known
// outside the server).
//
// Targets (issue 13): quick p50 < 1 s, standard p50 < 3 s, mean recall in
// sources >= 0.85 at standard, evidence integrity 100% (0 violations).
// Prints tables and writes benchmarks/results/research.json.
//
// Arguments: --limit N (claims per depth; default below), --depth
// quick|standard|comprehensive|all (default all), --scrape-questions N
// (default 10; 0 skips part 2), --warmup N (default 5).
// Default: all 300 test claims at every depth (the whole bench takes about
// two minutes on a loaded 2-core machine). Settings: SCOUR_SHARED_DATA,
// BENCH_OUT.
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { idOf, loadCorpus, loadSplit, scifactDir } from '../search/scifact.mjs';
import { availableCollections, idFromUrl, indexDocuments, loadCollection } from '../ir/collections.mjs';
import { call, f0, f3, indexDocs, indexScifact, mean, owned, pct, quotes, r1, r4, root, seededSample, startScour, table, teardown } from './lib.mjs';
import { isCaseless, readabilityTally } from './readability.mjs';

const OUT = process.env.BENCH_OUT ?? join(root, 'benchmarks', 'results', 'research.json');
const FAILURES_OUT = join(dirname(OUT), 'research-readability-failures.json');
const IR_COLLECTIONS = ['cranfield', 'cisi'];
/** Questions asked per development collection (a seeded, fixed sample of the judged queries). */
const DEFAULT_IR_QUESTIONS = 100;
const SAMPLE_SEED = 28;
const DEPTHS = ['quick', 'standard', 'comprehensive'];
const DEFAULT_CLAIMS = { quick: 300, standard: 300, comprehensive: 300 };
const TARGETS = { quick_p50_ms: 1000, standard_p50_ms: 3000, standard_recall_in_sources: 0.85, evidence_integrity: 1, complete_sentence_share: 0.95, spans_on_boundaries: 1 };

// ---------------------------------------------------------------------------
// Arguments.

function parseArgs(argv) {
  const out = { limit: undefined, depth: 'all', scrapeQuestions: 10, warmup: 5, irQuestions: DEFAULT_IR_QUESTIONS };
  const int = (name, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) {
      console.error(`${name} must be an integer >= ${min} (got ${JSON.stringify(v)})`);
      process.exit(2);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [k, inline] = argv[i].split('=', 2);
    const v = () => inline ?? argv[++i];
    if (k === '--limit') out.limit = int('--limit', v(), 1);
    else if (k === '--depth') {
      out.depth = v();
      if (![...DEPTHS, 'all'].includes(out.depth)) {
        console.error('--depth must be quick, standard, comprehensive or all');
        process.exit(2);
      }
    } else if (k === '--scrape-questions') out.scrapeQuestions = int('--scrape-questions', v(), 0);
    else if (k === '--warmup') out.warmup = int('--warmup', v(), 0);
    else if (k === '--ir-questions') out.irQuestions = int('--ir-questions', v(), 0);
    else {
      console.error(`unknown argument ${argv[i]} (--limit N, --depth quick|standard|comprehensive|all, --scrape-questions N, --warmup N, --ir-questions N)`);
      process.exit(2);
    }
  }
  return out;
}
const args = parseArgs(process.argv.slice(2));
const depths = args.depth === 'all' ? DEPTHS : [args.depth];
const claimsPerDepth = Object.fromEntries(depths.map((d) => [d, args.limit ?? DEFAULT_CLAIMS[d]]));

let plainQuery;
try {
  ({ plainQuery } = await import(pathToFileURL(join(root, 'dist/plugins/operations/research/plan.js')).href));
} catch (e) {
  console.error(`dist/ is missing or stale: run \`npm run build\` first (npm run bench:research does it)\n${e?.message ?? e}`);
  process.exit(1);
}

// ---------------------------------------------------------------------------
// Per stage.

/**
 * methodology.timings_ms with `rest`: the server's processing_time less plan,
 * gather, read and analyse (the report stage, billing, auth, validation and
 * the rest of the request), and `http`: the client's wall time less
 * processing_time (serialising, the socket, parsing the answer here).
 */
function withRest(t, processingMs, wallMs) {
  const staged = ['plan', 'gather', 'read', 'analyse'].reduce((a, k) => a + (t[k] ?? 0), 0);
  return { ...t, rest: Math.max(0, processingMs - staged), http: Math.max(0, wallMs - processingMs) };
}

/** Per-stage figures from methodology.timings_ms of many answers. */
function stageSummary(list) {
  const names = [];
  for (const t of list) for (const k of Object.keys(t)) if (!names.includes(k)) names.push(k);
  return Object.fromEntries(names.map((k) => {
    const xs = list.map((t) => t[k] ?? 0);
    return [k, { p50_ms: r1(pct(xs, 0.5)), p95_ms: r1(pct(xs, 0.95)), mean_ms: r1(mean(xs)) }];
  }));
}

// ---------------------------------------------------------------------------
// Part 1: SciFact.

async function scifactPart() {
  const corpus = loadCorpus();
  const test = loadSplit('test');
  const train = loadSplit('train');
  const textOf = new Map(corpus.map((d) => [d.url, d.text]));
  const scifactCaseless = isCaseless(corpus.map((d) => d.text));

  const t0 = performance.now();
  const scour = await startScour('scifact', {});
  console.log(`Scour pid ${scour.pid} on ${scour.base} (embedded, local index), started in ${f0(performance.now() - t0)} ms`);

  const loadSeconds = await indexScifact(scour, corpus);
  console.log(`SciFact: ${corpus.length} abstracts indexed into shared (type academic) in ${loadSeconds.toFixed(1)} s; ${test.queries.length} test claims, ${train.queries.length} train claims (warm-up only)`);

  const research = (claim, depth) => call(scour.base, 'POST', '/v1/research', {
    research_query: claim, sources: ['academic'], analysis_depth: depth, include_methodology: true,
  }, scour.key);

  // Baseline: the plan's first sub-query through /v1/search, top 20.
  const baseline = { k5: [], k10: [], k20: [], search_ms: [], failures: [] };
  for (const q of test.queries) {
    const rel = test.qrels.get(q.id);
    const r = await call(scour.base, 'POST', '/v1/search', { query: plainQuery(q.text), max_results: 20 }, scour.key);
    if (r.status !== 200) { baseline.failures.push({ id: q.id, status: r.status, message: r.body?.message ?? r.text.slice(0, 200) }); continue; }
    baseline.search_ms.push(r.body.search_time * 1000);
    const ids = r.body.search_results.map((x) => idOf(x.link));
    for (const k of [5, 10, 20]) baseline[`k${k}`].push([...rel].filter((d) => ids.slice(0, k).includes(d)).length / rel.size);
  }

  const perDepth = {};
  for (const depth of depths) {
    const n = Math.min(claimsPerDepth[depth], test.queries.length);
    for (const q of train.queries.slice(0, args.warmup)) {
      const r = await research(q.text, depth);
      if (r.status !== 200) throw new Error(`warm-up ${depth}: ${r.status} ${r.text.slice(0, 300)}`);
    }
    const rows = [];
    const failures = [];
    const integrity = { quotes: 0, violations: 0, kinds: {}, examples: [], citations: 0, citation_violations: 0 };
    const readability = readabilityTally({ caseless: scifactCaseless });
    const violation = (kind, detail) => {
      integrity.violations++;
      integrity.kinds[kind] = (integrity.kinds[kind] ?? 0) + 1;
      if (integrity.examples.length < 10) integrity.examples.push({ kind, ...detail });
    };
    const tDepth = performance.now();
    for (const q of test.queries.slice(0, n)) {
      const r = await research(q.text, depth);
      if (r.status !== 200 || r.body === undefined) {
        failures.push({ id: q.id, status: r.status, message: r.body?.message ?? r.text.slice(0, 200) });
        continue;
      }
      const b = r.body;
      const rel = test.qrels.get(q.id);
      const byId = new Map(b.sources_analyzed.map((s) => [s.id, s]));
      const sourceDocs = new Set(b.sources_analyzed.map((s) => idOf(s.url)));
      const citedDocs = new Set();
      for (const c of b.citations) {
        integrity.citations++;
        const s = byId.get(c.source_id);
        if (s === undefined || s.used !== true) { integrity.citation_violations++; continue; }
        citedDocs.add(idOf(s.url));
      }
      for (const x of quotes(b)) {
        integrity.quotes++;
        const s = byId.get(x.source_id);
        if (s === undefined) { violation('unknown_source', { claim: q.id, source_id: x.source_id }); continue; }
        const stored = textOf.get(s.url);
        if (stored === undefined) { violation('not_a_scifact_abstract', { claim: q.id, url: s.url }); continue; }
        if (stored.slice(x.start, x.end) !== x.text) violation('not_verbatim', { claim: q.id, url: s.url, start: x.start, end: x.end, text: x.text.slice(0, 200), at_offsets: stored.slice(x.start, x.end).slice(0, 200) });
      }
      readability.add(q.id, b, (id) => textOf.get(byId.get(id)?.url));
      const hit = (set) => [...rel].filter((d) => set.has(d)).length;
      rows.push({
        id: q.id,
        ms: r.ms,
        processing_ms: b.processing_time * 1000,
        timings: withRest(b.methodology?.timings_ms ?? {}, b.processing_time * 1000, r.ms),
        sources: b.sources_analyzed.length,
        used: b.sources_analyzed.filter((s) => s.used).length,
        insights: b.key_insights.length,
        recall_sources: hit(sourceDocs) / rel.size,
        recall_cited: hit(citedDocs) / rel.size,
        credits: b.credits_used,
        deadline: (b.warnings ?? []).some((w) => w.code === 'DEADLINE_REACHED'),
        found: b.methodology?.counts?.found ?? null,
        subQueries: b.methodology?.sub_queries?.length ?? null,
      });
    }
    const seconds = (performance.now() - tDepth) / 1000;
    const ms = rows.map((x) => x.ms);
    perDepth[depth] = {
      claims: n,
      answered: rows.length,
      failures,
      seconds: r1(seconds),
      latency_ms: { p50: r1(pct(ms, 0.5)), p95: r1(pct(ms, 0.95)), max: r1(Math.max(...ms)), mean: r1(mean(ms)), min: r1(Math.min(...ms)) },
      server_processing_ms: { p50: r1(pct(rows.map((x) => x.processing_ms), 0.5)), p95: r1(pct(rows.map((x) => x.processing_ms), 0.95)) },
      stages_ms: stageSummary(rows.map((x) => x.timings)),
      recall_in_sources: { mean: r4(mean(rows.map((x) => x.recall_sources))), any_relevant: r4(mean(rows.map((x) => (x.recall_sources > 0 ? 1 : 0)))) },
      recall_in_citations: { mean: r4(mean(rows.map((x) => x.recall_cited))), any_relevant: r4(mean(rows.map((x) => (x.recall_cited > 0 ? 1 : 0)))) },
      integrity: { ...integrity, verbatim_share: integrity.quotes === 0 ? null : r4((integrity.quotes - integrity.violations) / integrity.quotes) },
      readability: readability.result(),
      sources_per_claim: { mean: r1(mean(rows.map((x) => x.sources))), used_mean: r1(mean(rows.map((x) => x.used))) },
      found_per_claim_mean: r1(mean(rows.map((x) => x.found).filter((x) => x !== null))),
      sub_queries_mean: r1(mean(rows.map((x) => x.subQueries).filter((x) => x !== null))),
      insights_per_claim_mean: r1(mean(rows.map((x) => x.insights))),
      credits_per_claim: [...new Set(rows.map((x) => x.credits))],
      deadline_reached: rows.filter((x) => x.deadline).length,
      per_claim: rows.map((x) => ({ id: x.id, ms: r1(x.ms), recall_sources: r4(x.recall_sources), recall_cited: r4(x.recall_cited), sources: x.sources })),
    };
    const d = perDepth[depth];
    console.log(`${depth}: ${rows.length}/${n} claims in ${d.seconds} s, p50 ${d.latency_ms.p50} ms, p95 ${d.latency_ms.p95} ms, recall in sources ${d.recall_in_sources.mean}, quotes ${integrity.quotes} (${integrity.violations} violations)`);
  }
  await scour.stop();

  return {
    corpus: { documents: corpus.length, load_seconds: r1(loadSeconds), dir: relative(root, scifactDir()) },
    test_claims: test.queries.length,
    search_baseline: {
      what: 'POST /v1/search with plainQuery(claim) (the research plan\'s first sub-query), max_results 20; recall of the judged-relevant abstracts in the top k, mean over the claims',
      claims: baseline.k5.length,
      recall_at_5: r4(mean(baseline.k5)), recall_at_10: r4(mean(baseline.k10)), recall_at_20: r4(mean(baseline.k20)),
      search_time_ms: { p50: r1(pct(baseline.search_ms, 0.5)), mean: r1(mean(baseline.search_ms)), note: 'the answer\'s search_time (server side, max_results 20 with snippets): what one sub-query costs inside gather' },
      failures: baseline.failures,
    },
    depths: perDepth,
  };
}

// ---------------------------------------------------------------------------
// Part 1b: the development IR collections (hard-wrapped abstracts), for the
// readability row beside SciFact's one-line abstracts.

/** A question the API accepts (research_query is at most 1,000 characters): cut at the last sentence end, else the last space, before 1,000. */
function askable(text) {
  const t = text.trim();
  if (t.length <= 1000) return t;
  const head = t.slice(0, 1000);
  const stop = Math.max(head.lastIndexOf('. '), head.lastIndexOf('.\n'), head.lastIndexOf('? '), head.lastIndexOf('?\n'));
  return (stop > 200 ? head.slice(0, stop + 1) : head.slice(0, head.lastIndexOf(' '))).trim();
}

async function irPart(name, questionsWanted) {
  const c = loadCollection(name);
  // A record with neither a title nor text (Cranfield has a few) is refused by the import: left out.
  const docs = indexDocuments(c).filter((d) => /[\p{L}\p{N}]/u.test(`${d.title} ${d.text}`));
  const textOf = new Map(docs.map((d) => [d.url, d.text]));
  const caseless = isCaseless(c.docs.map((d) => d.text));
  const questions = seededSample(c.queries, questionsWanted, SAMPLE_SEED);
  const scour = await startScour(name, {});
  const loadSeconds = await indexDocs(scour, docs.map((d) => ({ url: d.url, title: d.title, text: d.text, type: 'academic', site_name: d.siteName, ...(d.author ? { author: d.author } : {}) })));
  console.log(`${name}: ${docs.length} abstracts (text as stored, hard-wrapped${caseless ? ', caseless' : ''}) indexed in ${loadSeconds.toFixed(1)} s on ${scour.base}; ${questions.length} of ${c.queries.length} judged queries (seed ${SAMPLE_SEED})`);
  for (const q of c.queries.filter((x) => !questions.includes(x)).slice(0, args.warmup)) {
    await call(scour.base, 'POST', '/v1/research', { research_query: askable(q.text), sources: ['academic'], include_methodology: true }, scour.key);
  }
  const readability = readabilityTally({ caseless });
  const rows = [];
  const failures = [];
  const baseline = [];
  const integrity = { quotes: 0, violations: 0, examples: [] };
  const t0 = performance.now();
  for (const q of questions) {
    const question = askable(q.text);
    const rel = c.qrels.get(q.id);
    const s = await call(scour.base, 'POST', '/v1/search', { query: plainQuery(question), max_results: 10 }, scour.key);
    if (s.status === 200) baseline.push([...rel].filter((d) => s.body.search_results.some((x) => idFromUrl(x.link) === d)).length / rel.size);
    const r = await call(scour.base, 'POST', '/v1/research', { research_query: question, sources: ['academic'], include_methodology: true }, scour.key);
    if (r.status !== 200 || r.body === undefined) { failures.push({ id: q.id, status: r.status, message: r.body?.message ?? r.text.slice(0, 200) }); continue; }
    const b = r.body;
    const byId = new Map(b.sources_analyzed.map((x) => [x.id, x]));
    for (const x of quotes(b)) {
      integrity.quotes++;
      const stored = textOf.get(byId.get(x.source_id)?.url);
      if (stored === undefined || stored.slice(x.start, x.end) !== x.text) {
        integrity.violations++;
        if (integrity.examples.length < 10) integrity.examples.push({ question: q.id, source_id: x.source_id, start: x.start, end: x.end, text: x.text.slice(0, 200) });
      }
    }
    readability.add(q.id, b, (id) => textOf.get(byId.get(id)?.url));
    const inSources = new Set(b.sources_analyzed.map((x) => idFromUrl(x.url)));
    rows.push({ ms: r.ms, recall: [...rel].filter((d) => inSources.has(d)).length / rel.size, subQueries: b.methodology?.sub_queries ?? [] });
  }
  await scour.stop();
  const ms = rows.map((x) => x.ms);
  const out = {
    collection: name,
    shape: c.shape,
    documents: docs.length,
    load_seconds: r1(loadSeconds),
    questions: questions.length,
    question_ids: questions.map((q) => q.id),
    answered: rows.length,
    failures,
    seconds: r1((performance.now() - t0) / 1000),
    latency_ms: { p50: r1(pct(ms, 0.5)), p95: r1(pct(ms, 0.95)) },
    recall_in_sources: { mean: r4(mean(rows.map((x) => x.recall))), any_relevant: r4(mean(rows.map((x) => (x.recall > 0 ? 1 : 0)))) },
    search_baseline_recall_at_10: r4(mean(baseline)),
    sub_queries_mean: r1(mean(rows.map((x) => x.subQueries.length))),
    sub_query_examples: rows.slice(0, 3).map((x) => x.subQueries),
    integrity,
    readability: readability.result(),
  };
  const R = out.readability;
  console.log(`${name}: ${rows.length}/${questions.length} questions in ${out.seconds} s, complete sentences ${R.complete_sentence_share} (summary ${R.summary.share}, insights ${R.insights.share}), spans on boundaries ${R.spans.share}, recall in sources ${out.recall_in_sources.mean}`);
  return out;
}

// ---------------------------------------------------------------------------
// Part 2: the scraping path, through a loopback SearXNG and loopback pages.

const decodeEntities = (await import('entities')).decodeHTML;
const squash = (s) => s.replace(/\s+/gu, '');
function pageText(html) {
  return squash(decodeEntities(html.replace(/<script[\s\S]*?<\/script\s*>/gi, '').replace(/<style[\s\S]*?<\/style\s*>/gi, '').replace(/<!--[\s\S]*?-->/g, '').replace(/<[^>]*>/g, '')));
}

async function scrapePart(questionsWanted) {
  const { startSearxng } = await import(pathToFileURL(join(root, 'test/support/searxng.ts')).href);
  const base = process.env.SCOUR_SHARED_DATA ?? join(root, '..', 'shared', 'data');
  const htmlDir = [join(base, 'extraction', 'zyte-article-benchmark', 'html'), '/work/shared/data/extraction/zyte-article-benchmark/html']
    .find((p) => { try { return readdirSync(p).length > 0; } catch { return false; } });
  if (htmlDir === undefined) throw new Error('the Zyte article benchmark pages are missing (set SCOUR_SHARED_DATA)');
  const files = readdirSync(htmlDir).filter((f) => f.endsWith('.html.gz')).sort().slice(0, 10);
  const pages = files.map((f, i) => {
    const html = gunzipSync(readFileSync(join(htmlDir, f)));
    const s = html.toString('utf8');
    const rawTitle = decodeEntities((/<title[^>]*>([^<]*)/i.exec(s)?.[1] ?? '').trim());
    const title = rawTitle.replace(/\s+[-|–]\s+[^-|–]*$/u, '').replace(/\s+/g, ' ').trim();
    const body = decodeEntities(s.replace(/<script[\s\S]*?<\/script\s*>/gi, ' ').replace(/<style[\s\S]*?<\/style\s*>/gi, ' ').replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ');
    const words = new Set((`${title} ${body}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2));
    return { id: f.slice(0, -'.html.gz'.length), n: i, html, bytes: html.length, title, snippet: body.slice(0, 300).trim(), words, text: pageText(s) };
  });

  let served = 0;
  const site = http.createServer((req, res) => {
    const m = /^\/a\/([0-9a-f]+)\.html(?:\?|$)/.exec(req.url ?? '');
    const p = m ? pages.find((x) => x.id === m[1]) : undefined;
    if (p === undefined) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n'); return; }
    served++;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': p.bytes, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : p.html);
  });
  await new Promise((resolve, reject) => { site.once('error', reject); site.listen(0, '127.0.0.1', resolve); });
  const siteBase = `http://127.0.0.1:${site.address().port}`;
  owned.closers.add(() => new Promise((r) => { site.closeAllConnections?.(); site.close(() => r()); }));

  // The fake SearXNG: all pages, ranked by words shared with the query; URLs tagged with the current question.
  let tag = 'warm-0';
  const sx = await startSearxng({
    perPage: 10,
    results: (query) => {
      const qw = new Set((query.q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2));
      return pages
        .map((p) => ({ p, score: [...qw].filter((w) => p.words.has(w)).length }))
        .sort((a, b) => b.score - a.score || a.p.n - b.p.n)
        .map(({ p }) => ({ url: `${siteBase}/a/${p.id}.html?q=${tag}`, title: p.title, content: p.snippet, engine: 'duckduckgo' }));
    },
  });
  owned.closers.add(() => sx.close());

  const scour = await startScour('scrape', {
    SCOUR_SEARCH_PROVIDERS: 'searxng', SEARXNG_URL: sx.url, SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback',
    // As the scrape bench does: a name (not an IP literal) fails at once, so nothing can leave the machine.
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${join(root, 'benchmarks/scrape/offline-dns.mjs')}`.trim(),
  });
  console.log(`scraping path: Scour pid ${scour.pid} on ${scour.base}, SearXNG (fake) ${sx.url}, ${pages.length} Zyte pages on ${siteBase} (median ${Math.round(pct(pages.map((p) => p.bytes), 0.5) / 1024)} KiB)`);

  const questions = Array.from({ length: questionsWanted }, (_, i) => pages[i % pages.length].title);
  const byUrl = (u) => {
    const m = /\/a\/([0-9a-f]+)\.html/.exec(u);
    return m ? pages.find((p) => p.id === m[1]) : undefined;
  };
  const perDepth = {};
  for (const depth of ['quick', 'standard']) {
    tag = `warm-${depth}`;
    const w = await call(scour.base, 'POST', '/v1/research', { research_query: pages[pages.length - 1].title, analysis_depth: depth, include_methodology: true }, scour.key);
    if (w.status !== 200) throw new Error(`scraping warm-up: ${w.status} ${w.text.slice(0, 300)}`);
    const rows = [];
    const failures = [];
    const integrity = { quotes: 0, violations: 0, examples: [] };
    for (let i = 0; i < questions.length; i++) {
      tag = `${depth}-${i}`;
      const servedBefore = served;
      const r = await call(scour.base, 'POST', '/v1/research', { research_query: questions[i], analysis_depth: depth, include_methodology: true }, scour.key);
      if (r.status !== 200 || r.body === undefined) { failures.push({ question: questions[i], status: r.status, message: r.body?.message ?? r.text.slice(0, 200) }); continue; }
      const b = r.body;
      const byId = new Map(b.sources_analyzed.map((s) => [s.id, s]));
      for (const x of quotes(b)) {
        integrity.quotes++;
        const p = byId.has(x.source_id) ? byUrl(byId.get(x.source_id).url) : undefined;
        if (p === undefined || !p.text.includes(squash(x.text))) {
          integrity.violations++;
          if (integrity.examples.length < 10) integrity.examples.push({ question: questions[i], source_id: x.source_id, text: x.text.slice(0, 200) });
        }
      }
      const m = b.methodology ?? {};
      rows.push({
        ms: r.ms, processing_ms: b.processing_time * 1000, timings: withRest(m.timings_ms ?? {}, b.processing_time * 1000, r.ms), sources: b.sources_analyzed.length,
        scraped: m.counts?.scraped ?? null, fetched: m.counts?.fetched ?? null, pages_served: served - servedBefore,
        dropped: m.counts?.dropped ?? {}, used: b.sources_analyzed.filter((s) => s.used).length,
      });
    }
    const ms = rows.map((x) => x.ms);
    const dropped = {};
    for (const x of rows) for (const [k, v] of Object.entries(x.dropped)) dropped[k] = (dropped[k] ?? 0) + v;
    perDepth[depth] = {
      questions: questions.length,
      answered: rows.length,
      failures,
      latency_ms: { p50: r1(pct(ms, 0.5)), p95: r1(pct(ms, 0.95)), max: r1(Math.max(...ms)), mean: r1(mean(ms)) },
      server_processing_ms: { p50: r1(pct(rows.map((x) => x.processing_ms), 0.5)) },
      stages_ms: stageSummary(rows.map((x) => x.timings)),
      sources_mean: r1(mean(rows.map((x) => x.sources))),
      scraped_mean: r1(mean(rows.map((x) => x.scraped ?? 0))),
      pages_fetched_mean: r1(mean(rows.map((x) => x.pages_served))),
      dropped_total: dropped,
      integrity: { ...integrity, verbatim_share: integrity.quotes === 0 ? null : r4((integrity.quotes - integrity.violations) / integrity.quotes), check: 'quote text (whitespace removed) found in the page text (tags, scripts, styles removed, entities decoded, whitespace removed)' },
    };
    const d = perDepth[depth];
    console.log(`scraping path ${depth}: ${rows.length}/${questions.length}, p50 ${d.latency_ms.p50} ms, p95 ${d.latency_ms.p95} ms, pages fetched per question ${d.pages_fetched_mean}, quotes ${integrity.quotes} (${integrity.violations} not found in their page)`);
  }
  await scour.stop();
  return {
    pages: pages.map((p) => ({ id: p.id, bytes: p.bytes, title: p.title })),
    searxng: 'test/support/searxng.ts on 127.0.0.1: every search answers all 10 pages ranked by words shared with the query, URLs unique per question',
    depths: perDepth,
  };
}

// ---------------------------------------------------------------------------

const withoutFailures = ({ failures, ...rest }) => ({ ...rest, failures_listed: failures.length });

const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
const started = performance.now();
let status = 0;
try {
  const scifact = await scifactPart();
  const ir = {};
  if (args.irQuestions > 0) {
    const have = availableCollections();
    for (const name of IR_COLLECTIONS) {
      if (!have.includes(name)) { console.log(`${name}: not in benchmarks/.data/ir (bash scripts/get-ir-collections.sh); its readability row is skipped`); continue; }
      ir[name] = await irPart(name, args.irQuestions);
    }
  }
  const scraping = args.scrapeQuestions > 0 ? await scrapePart(args.scrapeQuestions) : undefined;
  const wall = (performance.now() - started) / 1000;

  const D = scifact.depths;
  const integrityAll = Object.values(D).reduce((a, d) => ({ quotes: a.quotes + d.integrity.quotes, violations: a.violations + d.integrity.violations + d.integrity.citation_violations }), { quotes: 0, violations: 0 });
  const met = {
    quick_p50: D.quick ? D.quick.latency_ms.p50 < TARGETS.quick_p50_ms : null,
    standard_p50: D.standard ? D.standard.latency_ms.p50 < TARGETS.standard_p50_ms : null,
    standard_recall_in_sources: D.standard ? D.standard.recall_in_sources.mean >= TARGETS.standard_recall_in_sources : null,
    evidence_integrity: integrityAll.quotes > 0 && integrityAll.violations === 0 && Object.values(D).every((d) => d.failures.length === 0)
      && Object.values(ir).every((x) => x.integrity.violations === 0 && x.failures.length === 0),
  };
  // The readability row: SciFact at standard depth (or the one depth run) and each development collection.
  const sfDepth = D.standard ? 'standard' : Object.keys(D)[0];
  const readRows = [
    { corpus: `scifact (${sfDepth})`, shape: 'biomedical abstracts, one line each; one-sentence claims', questions: D[sfDepth].answered, recall: D[sfDepth].recall_in_sources.mean, baseline: scifact.search_baseline.recall_at_10, r: D[sfDepth].readability },
    ...Object.values(ir).map((x) => ({ corpus: `${x.collection} (standard)`, shape: x.shape, questions: x.answered, recall: x.recall_in_sources.mean, baseline: x.search_baseline_recall_at_10, r: x.readability })),
  ];
  met.complete_sentence_share = readRows.every((x) => x.r.complete_sentence_share !== null && x.r.complete_sentence_share >= TARGETS.complete_sentence_share);
  met.spans_on_boundaries = readRows.every((x) => x.r.spans.share !== null && x.r.spans.share >= TARGETS.spans_on_boundaries);

  // ---- report
  const lines = [''];
  lines.push(`## Research over SciFact (${scifact.corpus.documents} abstracts in the local index), one request at a time, sources ["academic"]`);
  lines.push('');
  lines.push(table([
    ['depth', 'claims', 'p50 ms', 'p95 ms', 'max ms', 'mean ms', 'recall in sources (mean)', 'any relevant in sources', 'recall in citations (mean)', 'any relevant cited', 'sources / claim', 'quotes', 'not verbatim', 'failures'],
    ...Object.entries(D).map(([k, d]) => [k, `${d.answered}/${d.claims}`, f0(d.latency_ms.p50), f0(d.latency_ms.p95), f0(d.latency_ms.max), f0(d.latency_ms.mean),
      f3(d.recall_in_sources.mean), f3(d.recall_in_sources.any_relevant), f3(d.recall_in_citations.mean), f3(d.recall_in_citations.any_relevant),
      String(d.sources_per_claim.mean), String(d.integrity.quotes), String(d.integrity.violations + d.integrity.citation_violations), String(d.failures.length)]),
  ]));
  const b = scifact.search_baseline;
  lines.push('');
  lines.push(`Baseline, /v1/search with the claim (the plan's first sub-query), same index: recall@5 ${f3(b.recall_at_5)}, recall@10 ${f3(b.recall_at_10)}, recall@20 ${f3(b.recall_at_20)} (${b.claims} claims${b.failures.length ? `, ${b.failures.length} refused` : ''}); one such search (20 results with snippets) takes ${b.search_time_ms.p50} ms p50 on the server (search_time), and gather runs ${Object.entries(D).map(([k, d]) => `${d.sub_queries_mean} (${k})`).join(', ')} sub-queries per claim on average.`);
  lines.push('');
  lines.push('Per stage (methodology.timings_ms), p50 / mean ms; "server" is processing_time, "wall" the client\'s time:');
  lines.push('');
  const stageNames = [...new Set(Object.values(D).flatMap((d) => Object.keys(d.stages_ms)))];
  lines.push(table([
    ['depth', ...stageNames, 'server', 'wall'],
    ...Object.entries(D).map(([k, d]) => [k, ...stageNames.map((s) => (d.stages_ms[s] ? `${d.stages_ms[s].p50_ms} / ${d.stages_ms[s].mean_ms}` : '-')), `${d.server_processing_ms.p50}`, `${d.latency_ms.p50} / ${d.latency_ms.mean}`]),
  ]));
  lines.push('');
  lines.push('## Readability: complete sentences in the summary and insights, evidence spans on sentence boundaries (benchmarks/research/readability.mjs)');
  lines.push('');
  const sh = (x) => (x === null ? '-' : x.toFixed(3));
  lines.push(table([
    ['corpus', 'questions', 'summary sentences', 'complete', 'insight statements', 'complete', 'both complete', 'evidence spans', 'on boundaries', 'recall in sources', 'search recall@10'],
    ...readRows.map((x) => [x.corpus, String(x.questions), String(x.r.summary.sentences), sh(x.r.summary.share), String(x.r.insights.sentences), sh(x.r.insights.share),
      sh(x.r.complete_sentence_share), String(x.r.spans.total), sh(x.r.spans.share), f3(x.recall), f3(x.baseline)]),
  ]));
  lines.push('');
  lines.push(`Why not (counts): ${readRows.map((x) => `${x.corpus}: ${JSON.stringify({ ...x.r.summary.reasons, ...Object.fromEntries(Object.entries(x.r.insights.reasons).map(([k, v]) => [`insight:${k}`, v])), ...Object.fromEntries(Object.entries(x.r.spans.reasons).map(([k, v]) => [`span:${k}`, v])) })}`).join('; ')}. Failures listed in ${relative(process.cwd(), FAILURES_OUT) || FAILURES_OUT}.`);
  if (scraping !== undefined) {
    const S = scraping.depths;
    lines.push('');
    lines.push(`## Scraping path: fake SearXNG + ${scraping.pages.length} Zyte pages on loopback, ${args.scrapeQuestions} questions per depth`);
    lines.push('');
    const sNames = [...new Set(Object.values(S).flatMap((d) => Object.keys(d.stages_ms)))];
    lines.push(table([
      ['depth', 'p50 ms', 'p95 ms', 'max ms', 'pages fetched / question', 'sources', ...sNames.map((s) => `${s} p50`), 'quotes', 'not in page'],
      ...Object.entries(S).map(([k, d]) => [k, f0(d.latency_ms.p50), f0(d.latency_ms.p95), f0(d.latency_ms.max), String(d.pages_fetched_mean), String(d.sources_mean),
        ...sNames.map((s) => (d.stages_ms[s] ? String(d.stages_ms[s].p50_ms) : '-')), String(d.integrity.quotes), String(d.integrity.violations)]),
    ]));
  }
  lines.push('');
  lines.push(`Targets: quick p50 < ${TARGETS.quick_p50_ms} ms, standard p50 < ${TARGETS.standard_p50_ms} ms, recall in sources at standard >= ${TARGETS.standard_recall_in_sources}, evidence integrity 100%, complete sentences >= ${TARGETS.complete_sentence_share} and spans on boundaries ${TARGETS.spans_on_boundaries} on every corpus.`);
  lines.push(Object.entries(met).map(([k, v]) => `${k}: ${v === null ? 'n/a' : v ? 'MET' : 'MISS'}`).join(', '));
  lines.push(`Load average at start ${loadAtStart.join(' ')}, at end ${loadavg().map((x) => x.toFixed(2)).join(' ')} on ${cpus().length} cores; whole run ${wall.toFixed(0)} s.`);
  console.log(lines.join('\n'));

  for (const d of Object.values(D)) for (const e of d.integrity.examples) console.log(`integrity violation: ${JSON.stringify(e)}`);
  for (const [k, d] of Object.entries(D)) for (const f of d.failures.slice(0, 5)) console.log(`failure ${k}: ${JSON.stringify(f)}`);

  const result = {
    benchmark: 'research',
    date: new Date().toISOString(),
    machine: {
      node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_bytes: totalmem(),
      loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map((x) => Math.round(x * 100) / 100),
      kernel: (() => { try { return readFileSync('/proc/sys/kernel/osrelease', 'latin1').trim(); } catch { return process.platform; } })(),
    },
    settings: {
      claims_per_depth: claimsPerDepth, warmup_train_claims_per_depth: args.warmup, scrape_questions: args.scrapeQuestions,
      request: { sources: ['academic'], include_methodology: true },
      configuration: 'Scour in a child process (dist/config/cli.js serve), embedded (SQLite in a temp dir, in-process limiter), SCOUR_SEARCH_PROVIDERS=local; Unicorn account, research and search windows lifted through SCOUR_PLANS (concurrency as the plan has it); one request in flight',
      latency: 'client wall time, sending to the last byte of the answer',
      recall: 'per claim: judged-relevant abstracts (qrels/test.tsv) among sources_analyzed (or among the cited sources) / judged-relevant abstracts; mean over the claims, and the share of claims with at least one',
      integrity: 'every {source_id, text, start, end} in the body: the source is in sources_analyzed, is a SciFact abstract, and its text as loaded .slice(start, end) === text; every citation names a used source',
      wall_seconds: Math.round(wall),
    },
    targets: TARGETS,
    met,
    scifact: { ...scifact, depths: Object.fromEntries(Object.entries(D).map(([k, d]) => [k, d])) },
    readability: readRows.map((x) => ({ corpus: x.corpus, shape: x.shape, questions: x.questions, recall_in_sources: x.recall, search_recall_at_10: x.baseline, ...withoutFailures(x.r) })),
    collections: Object.fromEntries(Object.entries(ir).map(([k, x]) => [k, { ...x, readability: withoutFailures(x.readability) }])),
    scraping_path: scraping,
  };
  for (const d of Object.values(result.scifact.depths)) d.readability = withoutFailures(d.readability);
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(FAILURES_OUT, `${JSON.stringify(Object.fromEntries(readRows.map((x) => [x.corpus, x.r.failures])), null, 1)}\n`);
  console.log(`\nwrote ${relative(process.cwd(), OUT) || OUT}`);
  const failed = Object.values(D).some((d) => d.failures.length > 0) || (scraping !== undefined && Object.values(scraping.depths).some((d) => d.failures.length > 0));
  if (failed || !met.evidence_integrity) status = 1;
} catch (e) {
  status = 1;
  console.error(`bench:research failed: ${e?.stack ?? e}`);
} finally {
  await teardown();
}
process.exit(status);
