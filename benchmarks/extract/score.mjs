// The article-extraction-benchmark metric (scrapinghub/article-extraction-benchmark,
// evaluate.py), reimplemented: Python's Unicode `\w+` tokens, multisets of
// 4-token shingles, per-document TP/FP/FN normalised to sum 1, precision and
// recall averaged over documents, F1 of the averages. Shared by the benchmark
// runner and the tests so both judge the same way.

// Python's `\w` for str: alphabetic (L*), numeric (N*) and '_'; not marks.
const TOKEN = /[\p{L}\p{N}_]+/gu;

export function tokenize(text) {
  return (text ?? '').match(TOKEN) ?? [];
}

/** Multiset of n-token shingles; a text shorter than n gives one shorter shingle (none when empty). */
export function shingles(text, n = 4) {
  const tokens = tokenize(text);
  const counts = new Map();
  const last = Math.max(1, tokens.length - n + 1);
  for (let i = 0; i < last; i++) {
    const s = tokens.slice(i, i + n).join(' ');
    if (s === '') continue;
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return counts;
}

/** [tp, fp, fn] of one document, each divided by their sum (all 0 when the sum is 0). */
export function tpFpFn(truth, predicted, n = 4) {
  const t = shingles(truth, n);
  const p = shingles(predicted, n);
  let tp = 0, fp = 0, fn = 0;
  for (const [k, tc] of t) {
    const pc = p.get(k) ?? 0;
    tp += Math.min(tc, pc);
    if (tc > pc) fn += tc - pc;
  }
  for (const [k, pc] of p) {
    const tc = t.get(k) ?? 0;
    if (pc > tc) fp += pc - tc;
  }
  const s = tp + fp + fn;
  return s > 0 ? [tp / s, fp / s, fn / s] : [0, 0, 0];
}

export function precisionOf([tp, fp, fn]) {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fp === 0) return 0;
  return tp / (tp + fp);
}

export function recallOf([tp, fp, fn]) {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fn === 0) return 0;
  return tp / (tp + fn);
}

/** One document: { precision, recall, f1 }. */
export function scoreOne(truth, predicted) {
  const c = tpFpFn(truth, predicted);
  const precision = precisionOf(c);
  const recall = recallOf(c);
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1 };
}

/**
 * The whole set: `truth` and `predicted` map id -> text (a missing prediction
 * counts as empty). Returns the averaged precision and recall, their F1, and
 * the per-document scores.
 */
export function scoreAll(truth, predicted) {
  const perDoc = {};
  let p = 0, r = 0, n = 0;
  for (const id of Object.keys(truth)) {
    const s = scoreOne(truth[id] ?? '', predicted[id] ?? '');
    perDoc[id] = s;
    p += s.precision;
    r += s.recall;
    n++;
  }
  const precision = n ? p / n : 0;
  const recall = n ? r / n : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { f1, precision, recall, perDoc };
}
