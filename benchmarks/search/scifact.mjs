// SciFact (BEIR) for the search benchmark and the tuning script: the corpus
// as index documents, the queries of a qrels split, and the metrics
// (nDCG@10 with binary gains, recall@100), computed the way BEIR's
// pytrec_eval does.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const candidates = [process.env.SCOUR_SHARED_DATA, join(root, '..', 'shared', 'data'), '/work/shared/data'].filter(Boolean);

export function scifactDir() {
  const base = candidates.find((p) => existsSync(join(p, 'ir', 'scifact', 'corpus.jsonl')));
  if (base === undefined) throw new Error(`SciFact is missing: looked in ${candidates.join(', ')} (set SCOUR_SHARED_DATA)`);
  return join(base, 'ir', 'scifact');
}

const jsonl = (file) => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));

/** The document URL of a corpus id (the index is keyed by URL). */
export const urlOf = (id) => `https://scifact.example.org/abstract/${id}`;
export const idOf = (url) => url.slice(url.lastIndexOf('/') + 1);

/** The corpus as IndexDocuments: language left to detection, as in an import. */
export function loadCorpus(dir = scifactDir()) {
  return jsonl(join(dir, 'corpus.jsonl')).map((d) => ({
    url: urlOf(d._id),
    title: d.title ?? '',
    text: d.text ?? '',
    publishedAt: null,
    language: null,
    country: null,
    type: 'academic',
    author: null,
    siteName: 'SciFact',
    doi: null,
    safe: true,
  }));
}

/** { queries: [{ id, text }], qrels: Map<queryId, Set<docId>> } for 'test' or 'train' (only queries judged in that split). */
export function loadSplit(split, dir = scifactDir()) {
  const qrels = new Map();
  for (const line of readFileSync(join(dir, 'qrels', `${split}.tsv`), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.trim().split('\t');
    if (!q || !d || Number(s) <= 0) continue;
    if (!qrels.has(q)) qrels.set(q, new Set());
    qrels.get(q).add(d);
  }
  const queries = jsonl(join(dir, 'queries.jsonl')).filter((q) => qrels.has(q._id)).map((q) => ({ id: q._id, text: q.text }));
  return { queries, qrels };
}

export function ndcgAt(ranked, relevant, k = 10) {
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) if (relevant.has(ranked[i])) dcg += 1 / Math.log2(i + 2);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) idcg += 1 / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function recallAt(ranked, relevant, k = 100) {
  let hit = 0;
  for (const d of ranked.slice(0, k)) if (relevant.has(d)) hit++;
  return relevant.size === 0 ? 0 : hit / relevant.size;
}

/** Mean metrics over a split, given a function from query text to ranked corpus ids (async allowed). */
export async function evaluateRun(split, rank) {
  let ndcg = 0;
  let recall = 0;
  const perQuery = {};
  for (const q of split.queries) {
    const ranked = await rank(q.text);
    const rel = split.qrels.get(q.id);
    const n = ndcgAt(ranked, rel);
    ndcg += n;
    recall += recallAt(ranked, rel);
    perQuery[q.id] = n;
  }
  const count = split.queries.length;
  return { ndcg10: ndcg / count, recall100: recall / count, queries: count, perQuery };
}

export const percentile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
