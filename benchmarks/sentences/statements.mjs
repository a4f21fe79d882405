// Sentences and statements over the development IR collections (issue 28):
// for each available collection (Cranfield, CISI, NPL; never CACM), every
// sentence of 20 characters or more that sentenceSpans finds in each
// abstract, and the share that isStatement accepts under its abstract's
// shape. Runs the BUILT code (npm run build first):
//
//   node benchmarks/sentences/statements.mjs [maxDocsPerCollection] [sampleSize]
//
// With sampleSize > 0 it prints that many refused and accepted sentences
// (a fixed stride through each list) for a reviewer's eye.
import { availableCollections, loadCollection } from '../ir/collections.mjs';
import { isStatement, sentenceSpans, textShape } from '../../dist/plugins/sdk/sentences.js';

const maxDocs = Number(process.argv[2] ?? Infinity);
const sample = Number(process.argv[3] ?? 0);
const rows = [];
for (const name of availableCollections()) {
  const c = loadCollection(name);
  let total = 0;
  let pass = 0;
  const refused = [];
  const accepted = [];
  const t0 = performance.now();
  for (const d of c.docs.slice(0, maxDocs)) {
    const shape = textShape(d.text);
    for (const s of sentenceSpans(d.text)) {
      if (s.end - s.start < 20) continue;
      total++;
      if (isStatement(s.reading, shape)) { pass++; accepted.push(s.reading); } else refused.push(s.reading);
    }
  }
  const ms = performance.now() - t0;
  rows.push({ collection: name, docs: Math.min(c.docs.length, maxDocs), sentences: total, statements: pass, share: (pass / Math.max(1, total)).toFixed(3), ms: Math.round(ms) });
  if (sample > 0) {
    const pick = (a) => Array.from({ length: Math.min(sample, a.length) }, (_, i) => a[Math.floor((i * a.length) / Math.min(sample, a.length))]);
    console.log(`\n${name}: refused`);
    for (const x of pick(refused)) console.log(`  x ${x.slice(0, 200)}`);
    console.log(`${name}: accepted`);
    for (const x of pick(accepted)) console.log(`  + ${x.slice(0, 200)}`);
  }
}
console.table(rows);
