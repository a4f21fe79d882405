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
 * rows, not scanning the index, is what costs in a driver), and new
 * documents (ids only grow) are appended to a term's last block. Removing a
 * document rewrites the one block of each of its terms that holds it.
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
