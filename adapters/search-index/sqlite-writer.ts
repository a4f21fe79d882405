/**
 * The SQLite index's writer thread (sqlite-writer-thread.ts is its main
 * side): its own connection to the file, the same write code as the main
 * thread's (sqlite.ts writeBatch), fed in order. Consecutive parts of one
 * upsert call are written together, up to the batch size the index adapts
 * to its writeBatchMs. Each batch inserts its entries as segments (a block
 * per term, sqlite.ts insertSegments); when nothing has come for
 * MERGE_AFTER_MS the writer merges terms' small blocks into full ones, a
 * bounded transaction at a time, looking at its queue between steps.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { yieldToLoop, type PreparedDocument } from './engine.js';
import { MERGE_AFTER_MS } from './postings.js';
import { openSqliteSearchWriter } from './sqlite.js';
import { fromWriterDocument, type SqliteWriterSetup, type WriterMessage, type WriterReply } from './sqlite-writer-thread.js';

const port = parentPort!;
const setup = workerData as SqliteWriterSetup;
const writer = openSqliteSearchWriter({
  path: setup.path,
  ...(setup.cacheMiB === undefined ? {} : { cacheMiB: setup.cacheMiB }),
  ...(setup.writeBatch === undefined ? {} : { writeBatch: setup.writeBatch }),
  writeBatchMs: setup.writeBatchMs,
});

type Part = Extract<WriterMessage, { type: 'part' }>;
const queue: WriterMessage[] = [];
/** Calls with parts written: their counts so far, or why they failed. */
const calls = new Map<number, { indexed: number; updated: number; error?: string }>();
/** How far into the first queued part the writes have gone. */
let offset = 0;
let busy = false;
let closed = false;
/** When the last message came (merges wait for MERGE_AFTER_MS of quiet, so an import's calls are not slowed by them). */
let lastMessage = 0;
let mergeTimer: ReturnType<typeof setTimeout> | undefined;

const reply = (m: WriterReply) => port.postMessage(m);
const stateOf = (call: number) => {
  let s = calls.get(call);
  if (s === undefined) calls.set(call, (s = { indexed: 0, updated: 0 }));
  return s;
};

/** One batch from the parts of the first queued part's call that are queued back to back. */
function writeOne(head: Part): void {
  const state = stateOf(head.call);
  if (state.error !== undefined) {
    queue.shift();
    offset = 0;
    return;
  }
  const want = writer.nextBatch();
  const batch: PreparedDocument[] = [];
  let used = 0;
  let off = offset;
  for (let k = 0; k < queue.length && batch.length < want; k++) {
    const m = queue[k]!;
    if (m.type !== 'part' || m.call !== head.call) break;
    const take = m.docs.slice(off, off + want - batch.length);
    for (const d of take) batch.push(fromWriterDocument(d));
    off += take.length;
    if (off < m.docs.length) break;
    used = k + 1;
    off = 0;
  }
  try {
    const r = writer.writeBatch(head.collection, batch, head.now);
    state.indexed += r.indexed;
    state.updated += r.updated;
  } catch (e) {
    state.error = e instanceof Error ? e.message : String(e);
  }
  queue.splice(0, used);
  offset = off;
}

async function drain(): Promise<void> {
  busy = true;
  try {
    for (;;) {
      await drainQueue();
      if (closed || !writer.mergesDue()) return;
      const wait = MERGE_AFTER_MS - (performance.now() - lastMessage);
      if (wait > 0) {
        // Not quiet long enough: look again then (a message before it starts a drain of its own).
        clearTimeout(mergeTimer);
        mergeTimer = setTimeout(() => {
          mergeTimer = undefined;
          if (!busy) void drain();
        }, wait + 1);
        return;
      }
      // Idle: merge small blocks, a bounded step at a time, until something is queued or nothing is due.
      let more = false;
      try {
        more = writer.mergeStep();
      } catch {
        // A merge that fails (a lock held too long) leaves its terms' blocks as they were: correct, only less compact.
      }
      if (!more) return;
      await yieldToLoop();
    }
  } finally {
    busy = false;
  }
}

/** Whether the parts queued for the head's call make a full batch, or are all the call will send before something else. */
function complete(head: Part): boolean {
  if (stateOf(head.call).error !== undefined) return true;
  const want = writer.nextBatch();
  let n = -offset;
  for (const m of queue) {
    if (m.type !== 'part' || m.call !== head.call) return true;
    n += m.docs.length;
    if (n >= want) return true;
  }
  return false;
}

async function drainQueue(): Promise<void> {
  while (queue.length > 0) {
    const m = queue[0]!;
    if (m.type === 'part') {
      if (m.docs.length === 0) {
        queue.shift();
        continue;
      }
      // A batch short of the size wanted waits for the call's next parts (or its end), which analysis is producing.
      if (!complete(m)) return;
      writeOne(m);
      // Parts sent meanwhile come in before the next batch is formed.
      await yieldToLoop();
      continue;
    }
    queue.shift();
    if (m.type === 'end') {
      const s = calls.get(m.call) ?? { indexed: 0, updated: 0 };
      calls.delete(m.call);
      reply(s.error !== undefined ? { call: m.call, error: s.error } : { call: m.call, result: { indexed: s.indexed, updated: s.updated } });
    } else if (m.type === 'abandon') {
      stateOf(m.call).error = 'abandoned';
    } else if (m.type === 'remove') {
      try {
        reply({ call: m.call, removed: await writer.removeHere(m.collection, m.urls, m.now) });
      } catch (e) {
        reply({ call: m.call, error: e instanceof Error ? e.message : String(e) });
      }
    } else if (m.type === 'close') {
      closed = true;
      clearTimeout(mergeTimer);
      await writer.close();
      reply({ call: 0, closed: true });
      port.close();
      return;
    }
  }
}

port.on('message', (m: WriterMessage) => {
  lastMessage = performance.now();
  queue.push(m);
  if (!busy) void drain();
});
