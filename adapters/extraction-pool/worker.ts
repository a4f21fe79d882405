/**
 * One extraction worker thread: imports the extractor module it is given
 * (the built-ins: plugins/extractors/index.ts), says it is ready, then for
 * each page it is sent parses it once, runs the asked-for extractors with
 * the same code as in-process extraction (core/extraction.ts runExtractors)
 * and posts the result back, encoded as the pool asked. One page at a time:
 * the pool sends the next one when this one is answered.
 *
 * Test hooks (only with workerData.testHooks, which configuration never
 * sets): a page holding `<!--scour-test:exit-->` makes the worker call
 * process.exit (which ends only this thread), `<!--scour-test:crash-->`
 * throws an uncaught error, `<!--scour-test:hang-->` loops forever, and
 * `<!--scour-test:busy:N-->` spins N ms before extracting.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { type ExtractorSet, type PageSource, runExtractors } from '../../core/extraction.js';
import type { JobMessage, WorkerMessage, WorkerSetup } from './protocol.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;
const mod = (await import(setup.module)) as { parsePage?: ExtractorSet<unknown>['parse']; builtinExtractors?: ExtractorSet<unknown>['extractors'] };
if (typeof mod.parsePage !== 'function' || !Array.isArray(mod.builtinExtractors)) {
  throw new Error(`${setup.module} must export parsePage and builtinExtractors`);
}
const set: ExtractorSet<unknown> = { parse: mod.parsePage, extractors: mod.builtinExtractors };
const packr = setup.encoding === 'msgpack' ? new Packr({ useRecords: false }) : undefined;

function testHook(html: string): void {
  const m = /<!--scour-test:(exit|crash|hang|busy:(\d+))-->/.exec(html);
  if (m === null) return;
  if (m[1] === 'exit') process.exit(7);
  // Thrown from the message listener itself: an uncaught exception, which ends the worker.
  if (m[1] === 'crash') throw new Error('scour-test: crash requested by the page');
  if (m[1] === 'hang') for (;;) { /* until the pool's deadline terminates this worker */ }
  if (m[2] !== undefined) {
    const until = performance.now() + Number(m[2]);
    while (performance.now() < until) { /* busy */ }
  }
}

async function handle(job: JobMessage): Promise<void> {
  const source: PageSource = job.page;
  let page: unknown;
  try {
    page = set.parse(source);
  } catch (e) {
    port.postMessage({ type: 'failed', id: job.id, message: e instanceof Error ? e.message : String(e) } satisfies WorkerMessage);
    return;
  }
  const result = await runExtractors(set, page, job.ids, job.options);
  try {
    if (packr !== undefined) {
      // pack() answers a view of msgpackr's reused buffer: copy it out, then hand the copy over without another.
      const bytes = new Uint8Array(packr.pack(result));
      port.postMessage({ type: 'done', id: job.id, bytes } satisfies WorkerMessage, [bytes.buffer]);
    } else if (setup.encoding === 'json') {
      port.postMessage({ type: 'done', id: job.id, json: JSON.stringify(result) } satisfies WorkerMessage);
    } else {
      port.postMessage({ type: 'done', id: job.id, result } satisfies WorkerMessage);
    }
  } catch (e) {
    // A value that cannot cross threads (a function, a symbol): the page fails, the worker lives on.
    port.postMessage({ type: 'failed', id: job.id, message: `the result could not be sent: ${e instanceof Error ? e.message : String(e)}` } satisfies WorkerMessage);
  }
}

// Pages arrive one at a time, but a handler that awaits must still finish before the next starts.
let chain: Promise<void> = Promise.resolve();
port.on('message', (job: JobMessage) => {
  if (setup.testHooks) testHook(job.page.html);
  chain = chain.then(() => handle(job));
});
port.postMessage({ type: 'ready' } satisfies WorkerMessage);
