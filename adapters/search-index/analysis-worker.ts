/**
 * One analysis worker thread of the search index (analysis-pool.ts): for
 * each chunk of documents it is sent, prepareDocument (engine.ts, the same
 * code as in-process analysis) on each, and the prepared documents back,
 * their postings' typed arrays transferred rather than copied and each
 * document's terms joined by spaces (terms never hold one: they are runs of
 * letters, digits and marks), one string instead of a hundred to clone.
 *
 * Test hook (only with workerData.testHooks, which configuration never
 * sets): a document whose title is `scour-test:crash` makes the worker
 * throw from its message handler, which ends it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { IndexDocument } from '../../core/search.js';
import { prepareDocument } from './engine.js';
import type { AnalysisJob, AnalysisReply, WirePrepared } from './analysis-pool.js';

const port = parentPort!;
const testHooks = (workerData as { testHooks?: boolean } | undefined)?.testHooks === true;

port.on('message', (job: AnalysisJob) => {
  if (testHooks && job.documents.some((d: IndexDocument) => d.title === 'scour-test:crash')) throw new Error('scour-test: crash requested');
  const out: WirePrepared[] = [];
  const transfer: ArrayBuffer[] = [];
  try {
    for (const d of job.documents) {
      const p = prepareDocument(d);
      const { terms, tf, ends, positions } = p.postings;
      out.push({ ...p, postings: { terms: terms.join(' '), tf, ends, positions } });
      transfer.push(tf.buffer as ArrayBuffer, ends.buffer as ArrayBuffer, positions.buffer as ArrayBuffer);
    }
  } catch (e) {
    port.postMessage({ id: job.id, error: e instanceof Error ? e.message : String(e) } satisfies AnalysisReply);
    return;
  }
  port.postMessage({ id: job.id, prepared: out } satisfies AnalysisReply, transfer);
});
port.postMessage({ id: 0, ready: true } satisfies AnalysisReply);
