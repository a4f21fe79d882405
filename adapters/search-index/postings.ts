/**
 * Postings in blocks, the storage format both backends share: a term's
 * postings in one collection are rows of up to BLOCK_SIZE documents each
 * (keyed by term, collection and the block's first document), and a row's
 * data is its entries one after another:
 *
 *   varint doc id, varint title tf, varint text tf, varint title length,
 *   varint text length, varint byte length of the positions, the positions
 *   (varints: the title's delta-coded, then the text's)
 *
 * A search reads a few rows per term instead of a row per document (reading
 * rows, not scanning the index, is what costs in a driver). A write of new
 * documents (ids only grow, so they sort after every stored one) inserts
 * each term's new entries as blocks of their own, a segment per term and
 * batch (`segmentsOf`), without reading or rewriting what is stored; a
 * term's small blocks are merged later into full ones (`planMerge`), off the
 * write's path. Small calls may instead append to a term's last block
 * (`planAppends`). Blocks of a term never overlap in documents, so any mix of
 * them reads the same. Removing a document rewrites the one block of each of
 * its terms that holds it.
 */

/** Documents per block. */
export const BLOCK_SIZE = 128;

/** A growable byte buffer for encoding. */
class Writer {
  private buf = new Uint8Array(4096);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  varint(v: number): void {
    this.room(10);
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  /** The bytes written, in an ArrayBuffer of their own (one a thread can hand over). */
  copy(): Uint8Array {
    return this.buf.slice(0, this.length);
  }

  /** The bytes written since `from`, as a new Buffer. */
  take(from = 0): Buffer {
    return Buffer.from(this.buf.subarray(from, this.length));
  }
}

const scratch = new Writer();

/** Positions as stored (varints: the title's delta-coded, then the text's). */
function writePositions(w: Writer, title: readonly number[] | undefined, text: readonly number[] | undefined): void {
  let prev = 0;
  if (title !== undefined) for (const p of title) { w.varint(p - prev); prev = p; }
  prev = 0;
  if (text !== undefined) for (const p of text) { w.varint(p - prev); prev = p; }
}

/** Bytes the positions take. */
function positionsLength(title: readonly number[] | undefined, text: readonly number[] | undefined): number {
  let n = 0;
  for (const list of [title, text]) {
    if (list === undefined) continue;
    let prev = 0;
    for (const p of list) {
      let v = p - prev;
      prev = p;
      n++;
      while (v >= 0x80) { n++; v = Math.floor(v / 0x80); }
    }
  }
  return n;
}

/** One document's entry for one term, as a writer has it: positions either encoded or as lists. */
export interface Entry {
  readonly doc: number;
  readonly tfTitle: number;
  readonly tfText: number;
  readonly titleLength: number;
  readonly textLength: number;
  readonly positions?: Uint8Array;
  readonly titlePositions?: readonly number[];
  readonly textPositions?: readonly number[];
}

export function encodeEntries(entries: readonly Entry[]): Buffer {
  const w = scratch;
  w.length = 0;
  for (const e of entries) {
    w.varint(e.doc);
    w.varint(e.tfTitle);
    w.varint(e.tfText);
    w.varint(e.titleLength);
    w.varint(e.textLength);
    if (e.positions !== undefined) {
      w.varint(e.positions.length);
      w.bytes(e.positions);
    } else {
      w.varint(positionsLength(e.titlePositions, e.textPositions));
      writePositions(w, e.titlePositions, e.textPositions);
    }
  }
  return w.take();
}

/** A block's entries (for rewriting a block after a removal). */
export function decodeEntries(data: Uint8Array): Entry[] {
  const out: Entry[] = [];
  const r = { i: 0 };
  while (r.i < data.length) {
    const doc = read(data, r);
    const tfTitle = read(data, r);
    const tfText = read(data, r);
    const titleLength = read(data, r);
    const textLength = read(data, r);
    const n = read(data, r);
    out.push({ doc, tfTitle, tfText, titleLength, textLength, positions: data.subarray(r.i, r.i + n) });
    r.i += n;
  }
  return out;
}

function read(data: Uint8Array, r: { i: number }): number {
  let v = 0;
  let mul = 1;
  for (;;) {
    const b = data[r.i++];
    if (b === undefined) return v;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return v;
    mul *= 0x80;
  }
}

/**
 * A form's postings over the searched collections, decoded into parallel
 * arrays sorted by document id; positions stay encoded until asked for.
 */
export class PostingList {
  readonly length: number;
  readonly docs: Float64Array;
  readonly tfTitle: Uint32Array;
  readonly tfText: Uint32Array;
  readonly titleLength: Uint32Array;
  readonly textLength: Uint32Array;
  private readonly posBlock: Uint32Array;
  private readonly posStart: Uint32Array;
  private readonly posEnd: Uint32Array;

  /** `blocks`: the rows' data; `count`: their entries in all. */
  constructor(private readonly blocks: readonly Uint8Array[], count: number) {
    const docs = new Float64Array(count);
    const tfTitle = new Uint32Array(count);
    const tfText = new Uint32Array(count);
    const titleLength = new Uint32Array(count);
    const textLength = new Uint32Array(count);
    const posBlock = new Uint32Array(count);
    const posStart = new Uint32Array(count);
    const posEnd = new Uint32Array(count);
    let k = 0;
    let sorted = true;
    const r = { i: 0 };
    for (let b = 0; b < blocks.length; b++) {
      const data = blocks[b]!;
      r.i = 0;
      while (r.i < data.length && k < count) {
        docs[k] = read(data, r);
        if (k > 0 && docs[k]! < docs[k - 1]!) sorted = false;
        tfTitle[k] = read(data, r);
        tfText[k] = read(data, r);
        titleLength[k] = read(data, r);
        textLength[k] = read(data, r);
        const n = read(data, r);
        posBlock[k] = b;
        posStart[k] = r.i;
        posEnd[k] = r.i + n;
        r.i += n;
        k++;
      }
    }
    this.length = k;
    if (sorted) {
      this.docs = docs.subarray(0, k);
      this.tfTitle = tfTitle.subarray(0, k);
      this.tfText = tfText.subarray(0, k);
      this.titleLength = titleLength.subarray(0, k);
      this.textLength = textLength.subarray(0, k);
      this.posBlock = posBlock.subarray(0, k);
      this.posStart = posStart.subarray(0, k);
      this.posEnd = posEnd.subarray(0, k);
    } else {
      // Several collections: merge into document order.
      const order = Array.from({ length: k }, (_, i) => i).sort((a, b) => docs[a]! - docs[b]!);
      const pick = <T extends Float64Array | Uint32Array>(src: T, dst: T): T => {
        order.forEach((o, i) => { dst[i] = src[o]!; });
        return dst;
      };
      this.docs = pick(docs, new Float64Array(k));
      this.tfTitle = pick(tfTitle, new Uint32Array(k));
      this.tfText = pick(tfText, new Uint32Array(k));
      this.titleLength = pick(titleLength, new Uint32Array(k));
      this.textLength = pick(textLength, new Uint32Array(k));
      this.posBlock = pick(posBlock, new Uint32Array(k));
      this.posStart = pick(posStart, new Uint32Array(k));
      this.posEnd = pick(posEnd, new Uint32Array(k));
    }
  }

  /** Index of the document's entry, or -1. */
  find(doc: number): number {
    let lo = 0;
    let hi = this.length - 1;
    const docs = this.docs;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const d = docs[mid]!;
      if (d === doc) return mid;
      if (d < doc) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Positions of entry `i` in the title (field 0) or the text (field 1), ascending. */
  positions(i: number, field: 0 | 1): number[] {
    const data = this.blocks[this.posBlock[i]!]!;
    const r = { i: this.posStart[i]! };
    const end = this.posEnd[i]!;
    const out: number[] = [];
    const skip = field === 0 ? 0 : this.tfTitle[i]!;
    const take = field === 0 ? this.tfTitle[i]! : this.tfText[i]!;
    let prev = 0;
    for (let k = 0; k < skip && r.i < end; k++) read(data, r);
    for (let k = 0; k < take && r.i < end; k++) {
      prev = (k === 0 ? 0 : prev) + read(data, r);
      out.push(prev);
    }
    return out;
  }
}

// ---------------------------------------------------------------------------
// Block writes, planned the same way by both backends

export interface BlockAppends {
  /** [block id, entries added, their bytes] for blocks with room. */
  readonly appends: [number, number, Buffer][];
  /** [term, first document, entries, bytes] for new blocks. */
  readonly inserts: [string, number, number, Buffer][];
}

/**
 * Where new entries go: each term's last block while it has room (`last`:
 * term -> [block id, entries]), then new blocks of up to BLOCK_SIZE. The
 * entries of a term must be in ascending document order and above every
 * stored document (new documents get growing ids).
 */
export function planAppends(entries: ReadonlyMap<string, readonly Entry[]>, last: ReadonlyMap<string, readonly [number, number]>): BlockAppends {
  const appends: [number, number, Buffer][] = [];
  const inserts: [string, number, number, Buffer][] = [];
  for (const [term, list] of entries) {
    let from = 0;
    const l = last.get(term);
    if (l !== undefined && l[1] < BLOCK_SIZE) {
      from = Math.min(list.length, BLOCK_SIZE - l[1]);
      appends.push([l[0], from, encodeEntries(from === list.length ? list : list.slice(0, from))]);
    }
    for (let i = from; i < list.length; i += BLOCK_SIZE) {
      const chunk = i === 0 && list.length <= BLOCK_SIZE ? list : list.slice(i, i + BLOCK_SIZE);
      inserts.push([term, chunk[0]!.doc, chunk.length, encodeEntries(chunk)]);
    }
  }
  return { appends, inserts };
}

export interface BlockRemovals {
  /** [block id, new first document, entries, bytes]. */
  readonly updates: [number, number, number, Buffer][];
  /** Blocks left empty. */
  readonly deletes: number[];
}

/** Blocks rewritten without the given documents' entries. */
export function planRemovals(blocks: ReadonlyMap<number, Uint8Array>, gone: ReadonlySet<number>): BlockRemovals {
  const updates: [number, number, number, Buffer][] = [];
  const deletes: number[] = [];
  for (const [id, data] of blocks) {
    const all = decodeEntries(data);
    const kept = all.filter((e) => !gone.has(e.doc));
    if (kept.length === all.length) continue;
    if (kept.length === 0) deletes.push(id);
    else updates.push([id, kept[0]!.doc, kept.length, encodeEntries(kept)]);
  }
  return { updates, deletes };
}

/**
 * A document's postings packed for a write: its terms, each term's title and
 * text frequencies (`tf`, two per term), and each term's positions already
 * encoded as a block stores them, one term after another (`positions`, term
 * i's bytes ending at `ends[i]`). Typed arrays, so a worker thread that
 * analysed the document hands them over without a copy.
 */
export interface PackedPostings {
  readonly terms: readonly string[];
  readonly tf: Uint32Array;
  readonly ends: Uint32Array;
  readonly positions: Uint8Array;
}

/** Packs a document's terms with their title and text positions (each list ascending). */
export function packPostings(list: readonly { readonly term: string; readonly title: readonly number[] | undefined; readonly text: readonly number[] | undefined }[]): PackedPostings {
  const w = scratch;
  w.length = 0;
  const terms: string[] = new Array(list.length);
  const tf = new Uint32Array(list.length * 2);
  const ends = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const p = list[i]!;
    terms[i] = p.term;
    tf[2 * i] = p.title?.length ?? 0;
    tf[2 * i + 1] = p.text?.length ?? 0;
    writePositions(w, p.title, p.text);
    ends[i] = w.length;
  }
  return { terms, tf, ends, positions: w.copy() };
}

/** Groups new documents' entries by term, in document order. */
export function entriesByTerm(docs: readonly { readonly id: number; readonly titleLength: number; readonly textLength: number; readonly postings: PackedPostings }[]): Map<string, Entry[]> {
  const out = new Map<string, Entry[]>();
  for (const d of [...docs].sort((a, b) => a.id - b.id)) {
    const { terms, tf, ends, positions } = d.postings;
    for (let i = 0; i < terms.length; i++) {
      const e: Entry = {
        doc: d.id, tfTitle: tf[2 * i]!, tfText: tf[2 * i + 1]!, titleLength: d.titleLength, textLength: d.textLength,
        positions: positions.subarray(i === 0 ? 0 : ends[i - 1]!, ends[i]!),
      };
      const term = terms[i]!;
      const list = out.get(term);
      if (list === undefined) out.set(term, [e]);
      else list.push(e);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Segments: each write's entries in blocks of their own, merged later

/** [term, first document, entries, bytes]: a block to insert. */
export type NewBlock = [string, number, number, Buffer];

function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) { n++; v = Math.floor(v / 0x80); }
  return n;
}

function putVarint(buf: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    buf[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[at++] = v;
  return at;
}

/** One term's new entries while a segment is built: their count, bytes, and where they go in the shared buffer. */
interface TermRun {
  count: number;
  bytes: number;
  at: number;
}

/**
 * New documents' entries as new blocks, in term order (the index's, so
 * consecutive inserts land in the same B-tree pages), each term's in
 * document order, BLOCK_SIZE entries a block at most. Encoded straight from
 * the packed postings into one buffer (two passes: sizes, then bytes), with
 * no per-entry objects. `docs` must be new documents (ids above every stored
 * one), in any order. `partial` (if given) receives the terms whose last new
 * block is not full (the merger's candidates).
 */
export function segmentsOf(
  docs: readonly { readonly id: number; readonly titleLength: number; readonly textLength: number; readonly postings: PackedPostings }[],
  partial?: (term: string) => void,
): NewBlock[] {
  const sorted = docs.length < 2 || docs.every((d, i) => i === 0 || docs[i - 1]!.id < d.id) ? docs : [...docs].sort((a, b) => a.id - b.id);
  const runs = new Map<string, TermRun>();
  for (const d of sorted) {
    const head = varintSize(d.id) + varintSize(d.titleLength) + varintSize(d.textLength);
    const { terms, tf, ends } = d.postings;
    for (let i = 0; i < terms.length; i++) {
      const n = ends[i]! - (i === 0 ? 0 : ends[i - 1]!);
      const size = head + varintSize(tf[2 * i]!) + varintSize(tf[2 * i + 1]!) + varintSize(n) + n;
      const r = runs.get(terms[i]!);
      if (r === undefined) runs.set(terms[i]!, { count: 1, bytes: size, at: 0 });
      else { r.count++; r.bytes += size; }
    }
  }
  const order = [...runs.keys()].sort();
  let total = 0;
  for (const t of order) {
    const r = runs.get(t)!;
    r.at = total;
    total += r.bytes;
  }
  const buf = Buffer.allocUnsafeSlow(total);
  // Where each term's entries start (to cut blocks), filled as the second pass writes.
  const starts = new Map<string, number[]>();
  for (const d of sorted) {
    const { terms, tf, ends, positions } = d.postings;
    for (let i = 0; i < terms.length; i++) {
      const r = runs.get(terms[i]!)!;
      if (r.count > BLOCK_SIZE) {
        let list = starts.get(terms[i]!);
        if (list === undefined) starts.set(terms[i]!, (list = []));
        list.push(r.at);
      }
      const from = i === 0 ? 0 : ends[i - 1]!;
      const to = ends[i]!;
      let at = putVarint(buf, r.at, d.id);
      at = putVarint(buf, at, tf[2 * i]!);
      at = putVarint(buf, at, tf[2 * i + 1]!);
      at = putVarint(buf, at, d.titleLength);
      at = putVarint(buf, at, d.textLength);
      at = putVarint(buf, at, to - from);
      buf.set(positions.subarray(from, to), at);
      r.at = at + to - from;
    }
  }
  const out: NewBlock[] = [];
  for (const t of order) {
    const r = runs.get(t)!;
    const end = r.at;
    const begin = end - r.bytes;
    const list = starts.get(t);
    if (list === undefined) {
      out.push([t, firstDoc(buf, begin), r.count, buf.subarray(begin, end)]);
    } else {
      for (let k = 0; k < list.length; k += BLOCK_SIZE) {
        const a = list[k]!;
        const b = k + BLOCK_SIZE < list.length ? list[k + BLOCK_SIZE]! : end;
        out.push([t, firstDoc(buf, a), Math.min(BLOCK_SIZE, list.length - k), buf.subarray(a, b)]);
      }
    }
    if (r.count % BLOCK_SIZE !== 0) partial?.(t);
  }
  return out;
}

function firstDoc(buf: Uint8Array, at: number): number {
  return read(buf, { i: at });
}

/** A stored block of one term, as the merger reads them (in document order). */
export interface StoredBlock {
  readonly id: number;
  readonly count: number;
  readonly data: Uint8Array;
}

export interface BlockMerge {
  /** Blocks whose entries moved into others. */
  readonly deletes: number[];
  /** [block id, first document, entries, bytes]: blocks rewritten in place. */
  readonly updates: [number, number, number, Buffer][];
  /** [first document, entries, bytes]: blocks to add (a run larger than one block). */
  readonly inserts: [number, number, Buffer][];
}

/**
 * How to merge a term's blocks (all of them, in document order): each run
 * of two or more consecutive blocks under BLOCK_SIZE becomes full blocks
 * (the run's entries, in order, BLOCK_SIZE a block, the last one holding the
 * rest). The first block of a run keeps its id and first document; apply
 * the deletes before the inserts (a new block may start where a deleted one
 * did). Nothing to do when no run has two blocks.
 */
export function planMerge(blocks: readonly StoredBlock[]): BlockMerge {
  const deletes: number[] = [];
  const updates: [number, number, number, Buffer][] = [];
  const inserts: [number, number, Buffer][] = [];
  for (let i = 0; i < blocks.length;) {
    if (blocks[i]!.count >= BLOCK_SIZE) { i++; continue; }
    let j = i + 1;
    while (j < blocks.length && blocks[j]!.count < BLOCK_SIZE) j++;
    if (j - i >= 2) {
      const run = blocks.slice(i, j);
      const entries = run.flatMap((b) => decodeEntries(b.data));
      for (const b of run.slice(1)) deletes.push(b.id);
      for (let k = 0; k < entries.length; k += BLOCK_SIZE) {
        const chunk = entries.slice(k, k + BLOCK_SIZE);
        if (k === 0) updates.push([run[0]!.id, chunk[0]!.doc, chunk.length, encodeEntries(chunk)]);
        else inserts.push([chunk[0]!.doc, chunk.length, encodeEntries(chunk)]);
      }
    }
    i = j;
  }
  return { deletes, updates, inserts };
}

/** Small blocks a term gathers (from writes of segments) before the merger rewrites them into full ones. */
export const MERGE_FACTOR = 8;
/** How long the writer must have had nothing to write before it merges (an import's calls follow each other closer than this). */
export const MERGE_AFTER_MS = 250;

/**
 * Which terms have gathered MERGE_FACTOR small blocks since their last
 * merge, by collection: kept in memory by the one that writes segments (a
 * restart forgets the counts; the blocks stay correct, only less compact,
 * until the term gathers MERGE_FACTOR more).
 */
export class MergeQueue {
  private readonly counts = new Map<number, Map<string, number>>();
  private readonly due: [number, string][] = [];

  /** A small block of `term` was written in collection `cid`. */
  note(cid: number, term: string): void {
    let m = this.counts.get(cid);
    if (m === undefined) this.counts.set(cid, (m = new Map()));
    const n = (m.get(term) ?? 0) + 1;
    if (n >= MERGE_FACTOR) {
      m.delete(term);
      this.due.push([cid, term]);
    } else {
      m.set(term, n);
    }
  }

  /** Terms due, up to `max`, taken off the queue. */
  take(max: number): [number, string][] {
    return this.due.splice(0, max);
  }

  get pending(): number {
    return this.due.length;
  }
}
