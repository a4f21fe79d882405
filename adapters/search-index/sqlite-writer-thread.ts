/**
 * The SQLite index's writes from a thread of their own (sqlite-writer.ts,
 * with its own connection to the file): the main thread hands over prepared
 * documents and URLs to remove, and its event loop never runs a write
 * transaction, so its searches (on the main thread's connection: WAL
 * readers never wait for the writer) are not held behind one.
 *
 * - Order: the writer takes what it is given in the order it was sent; the
 *   parts of one upsert call (sent as they are analysed) are batched
 *   together, up to the batch size the writer adapts to `writeBatchMs` of
 *   wall time (what another writer of the file, such as the account store,
 *   may wait); each batch is one transaction.
 * - Failure: a batch that fails (the disk, a lock held past the busy
 *   timeout) fails its call, whose later batches are dropped; the batches
 *   already committed stay (as on the main thread). A writer that dies
 *   (its transaction rolled back by SQLite) fails the calls it had, and the
 *   next call starts another.
 * - The thread keeps the process alive only while calls are in flight;
 *   `close()` lets it finish what it was given, then ends it.
 */
import { Worker } from 'node:worker_threads';
import type { UpsertResult } from '../../core/search.js';
import type { PreparedDocument } from './engine.js';
import { workerEntry } from '../threads/worker-entry.js';

export interface SqliteWriterSetup {
  readonly path: string;
  readonly cacheMiB: number | undefined;
  readonly writeBatch: number | undefined;
  readonly writeBatchMs: number;
}

/** A prepared document as it crosses: its terms joined by spaces (terms never hold one). */
export type WriterDocument = Omit<PreparedDocument, 'postings'> & {
  readonly postings: { readonly terms: string; readonly tf: Uint32Array; readonly ends: Uint32Array; readonly positions: Uint8Array };
};

/** Main thread -> writer. */
export type WriterMessage =
  | { readonly type: 'part'; readonly call: number; readonly collection: string; readonly now: number; readonly docs: readonly WriterDocument[] }
  | { readonly type: 'end'; readonly call: number }
  | { readonly type: 'abandon'; readonly call: number }
  | { readonly type: 'remove'; readonly call: number; readonly collection: string; readonly urls: readonly string[]; readonly now: number }
  | { readonly type: 'close' };

/** Writer -> main thread. */
export type WriterReply =
  | { readonly call: number; readonly result: UpsertResult }
  | { readonly call: number; readonly removed: number }
  | { readonly call: number; readonly error: string }
  | { readonly call: 0; readonly closed: true };

export function toWriterDocument(p: PreparedDocument): { doc: WriterDocument; transfer: ArrayBuffer[] } {
  const { terms, tf, ends, positions } = p.postings;
  const transfer: ArrayBuffer[] = [];
  // A buffer can be handed over once; views of a shared one (a pooled Buffer) are copied instead.
  for (const a of [tf, ends, positions]) {
    if (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && !transfer.includes(a.buffer as ArrayBuffer)) transfer.push(a.buffer as ArrayBuffer);
  }
  return { doc: { ...p, postings: { terms: terms.join(' '), tf, ends, positions } }, transfer };
}

export function fromWriterDocument(w: WriterDocument): PreparedDocument {
  return { ...w, postings: { terms: w.postings.terms === '' ? [] : w.postings.terms.split(' '), tf: w.postings.tf, ends: w.postings.ends, positions: w.postings.positions } };
}

interface Pending {
  readonly resolve: (v: UpsertResult | number) => void;
  readonly reject: (e: Error) => void;
}

/** One upsert call on its way to the writer. */
export interface WriterCall {
  send(part: readonly PreparedDocument[]): void;
  /** Its result, once every part sent is written. */
  end(): Promise<UpsertResult>;
  /** Parts not yet written are dropped. */
  abandon(): void;
}

export class SqliteWriterThread {
  private worker: Worker | undefined;
  private nextCall = 1;
  private readonly pending = new Map<number, Pending>();
  private closing: Promise<void> | undefined;

  constructor(private readonly setup: SqliteWriterSetup) {}

  begin(collection: string, now: number): WriterCall {
    const call = this.nextCall++;
    const worker = this.thread();
    let ended = false;
    return {
      send: (part) => {
        const docs: WriterDocument[] = [];
        const transfer = new Set<ArrayBuffer>();
        for (const p of part) {
          const w = toWriterDocument(p);
          docs.push(w.doc);
          for (const b of w.transfer) transfer.add(b);
        }
        worker.postMessage({ type: 'part', call, collection, now, docs } satisfies WriterMessage, [...transfer]);
      },
      end: () => {
        ended = true;
        return this.ask<UpsertResult>(worker, call, { type: 'end', call });
      },
      abandon: () => {
        if (!ended) worker.postMessage({ type: 'abandon', call } satisfies WriterMessage);
      },
    };
  }

  remove(collection: string, urls: readonly string[], now: number): Promise<number> {
    const call = this.nextCall++;
    return this.ask<number>(this.thread(), call, { type: 'remove', call, collection, urls, now });
  }

  /** Starts the writer thread now and resolves once it answers (an empty removal): after it, a write pays no thread start-up. */
  async warm(): Promise<void> {
    await this.remove('', [], Date.now());
  }

  /** Lets the writer finish what it was given, then ends it. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const w = this.worker;
      if (w === undefined) return;
      w.ref();
      const exited = new Promise<void>((r) => w.once('exit', () => r()));
      w.postMessage({ type: 'close' } satisfies WriterMessage);
      await exited;
    })();
    return this.closing;
  }

  private ask<T extends UpsertResult | number>(worker: Worker, call: number, message: WriterMessage): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.worker !== worker) {
        reject(new Error('the search index writer stopped'));
        return;
      }
      this.pending.set(call, { resolve: resolve as (v: UpsertResult | number) => void, reject });
      worker.ref();
      worker.postMessage(message);
    });
  }

  private thread(): Worker {
    if (this.closing !== undefined) throw new Error('the search index is closed');
    if (this.worker !== undefined) return this.worker;
    const entry = workerEntry(import.meta.url, './sqlite-writer');
    const worker = new Worker(entry.source, { eval: entry.eval, workerData: this.setup });
    worker.unref();
    this.worker = worker;
    const fail = (reason: string) => {
      if (this.worker === worker) this.worker = undefined;
      const e = new Error(`the search index writer stopped: ${reason}`);
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    worker.on('message', (m: WriterReply) => {
      if ('closed' in m) return;
      const p = this.pending.get(m.call);
      if (p === undefined) return;
      this.pending.delete(m.call);
      if (this.pending.size === 0) worker.unref();
      if ('error' in m) p.reject(new Error(m.error));
      else p.resolve('result' in m ? m.result : m.removed);
    });
    worker.on('error', (e) => fail(e.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    return worker;
  }
}
