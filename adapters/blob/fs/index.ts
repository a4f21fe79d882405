/**
 * The BlobStore port on a local directory (screenshots, exports). One file
 * per blob holding a small header (content type, expiry) and the bytes, so a
 * blob and its metadata appear together in one atomic rename: a reader never
 * sees bytes without their expiry or a half-written file. Keys come from
 * URLs, so they are restricted to a token alphabet (no path can be formed).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '../../../core/ports.js';

/** Keys are unguessable tokens; anything else could name a path. */
export const BLOB_KEY = /^[A-Za-z0-9_-]{16,128}$/;

const MAGIC = Buffer.from('SCB1', 'latin1');
const SUFFIX = '.blob';
const TMP_PREFIX = '.tmp-';
/** A temp file this old belongs to a write that died with its process. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** The header is tiny; refuse to parse anything claiming more (a foreign or corrupt file). */
const MAX_META = 4096;

interface Meta {
  readonly contentType: string;
  readonly expiresAt: number;
}

export interface FsBlobStoreOptions {
  /** The directory holding the blobs. Default: `<dataDir>/blobs`. */
  readonly dir?: string;
  readonly dataDir?: string;
}

export class FsBlobStore implements BlobStore {
  readonly dir: string;
  private ready: Promise<void> | undefined;

  constructor(options: FsBlobStoreOptions) {
    const dir = options.dir ?? (options.dataDir === undefined ? undefined : join(options.dataDir, 'blobs'));
    if (dir === undefined) throw new TypeError('FsBlobStore needs dir or dataDir');
    this.dir = dir;
  }

  async put(key: string, data: Uint8Array, meta: { readonly contentType: string; readonly expiresAt: number }): Promise<void> {
    if (!BLOB_KEY.test(key)) throw new TypeError('blob key must match [A-Za-z0-9_-]{16,128}');
    if (!Number.isFinite(meta.expiresAt)) throw new TypeError('blob expiresAt must be a finite epoch-ms number');
    await this.ensureDir();
    const header = Buffer.from(JSON.stringify({ contentType: meta.contentType, expiresAt: meta.expiresAt } satisfies Meta), 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32BE(header.length, 0);
    const tmp = join(this.dir, `${TMP_PREFIX}${key}-${randomBytes(6).toString('hex')}`);
    try {
      await writeFile(tmp, Buffer.concat([MAGIC, len, header, data]), { mode: 0o600 });
      await rename(tmp, this.path(key));
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
  }

  async get(key: string, now: number): Promise<{ readonly data: Uint8Array; readonly contentType: string; readonly expiresAt: number } | undefined> {
    // Keys reach here from request paths: an invalid one is simply not found.
    if (!BLOB_KEY.test(key)) return undefined;
    let buf: Buffer;
    try {
      buf = await readFile(this.path(key));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
    const parsed = parse(buf);
    if (!parsed || now >= parsed.meta.expiresAt) return undefined;
    return { data: new Uint8Array(buf.buffer, buf.byteOffset + parsed.offset, buf.length - parsed.offset), contentType: parsed.meta.contentType, expiresAt: parsed.meta.expiresAt };
  }

  async sweep(now: number): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if (isNotFound(e)) return 0;
      throw e;
    }
    let removed = 0;
    for (const name of names) {
      const full = join(this.dir, name);
      if (name.startsWith(TMP_PREFIX)) {
        const st = await stat(full).catch(() => undefined);
        if (st && now - st.mtimeMs > STALE_TMP_MS) await unlink(full).catch(() => undefined);
        continue;
      }
      if (!name.endsWith(SUFFIX) || !BLOB_KEY.test(name.slice(0, -SUFFIX.length))) continue;
      const meta = await readMeta(full);
      // An unreadable blob can never be served: drop it too.
      if (meta === null || (meta !== undefined && now >= meta.expiresAt)) {
        try {
          await unlink(full);
          removed++;
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    }
    return removed;
  }

  /**
   * Hold the directory to `maxBytes`: expired blobs are deleted, then the
   * blobs that expire first (with one expiry period for all, the oldest)
   * until the rest fit. Returns how many were deleted and the bytes kept.
   * Only for a directory of its own (the page cache): screenshots are
   * never evicted for size.
   */
  async trim(maxBytes: number, now: number): Promise<{ readonly removed: number; readonly bytes: number }> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if (isNotFound(e)) return { removed: 0, bytes: 0 };
      throw e;
    }
    const live: { full: string; size: number; expiresAt: number }[] = [];
    let removed = 0;
    const drop = async (full: string) => {
      try {
        await unlink(full);
        removed++;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    };
    for (const name of names) {
      if (!name.endsWith(SUFFIX) || !BLOB_KEY.test(name.slice(0, -SUFFIX.length))) continue;
      const full = join(this.dir, name);
      const [meta, st] = await Promise.all([readMeta(full), stat(full).catch(() => undefined)]);
      if (meta === undefined || st === undefined) continue;
      if (meta === null || now >= meta.expiresAt) await drop(full);
      else live.push({ full, size: st.size, expiresAt: meta.expiresAt });
    }
    let bytes = live.reduce((sum, b) => sum + b.size, 0);
    live.sort((a, b) => a.expiresAt - b.expiresAt);
    for (const b of live) {
      if (bytes <= maxBytes) break;
      await drop(b.full);
      bytes -= b.size;
    }
    return { removed, bytes };
  }

  private path(key: string): string {
    return join(this.dir, key + SUFFIX);
  }

  private ensureDir(): Promise<void> {
    this.ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined, (e: unknown) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }
}

function isNotFound(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: string }).code === 'ENOENT';
}

function parseMeta(buf: Buffer, len: number): Meta | undefined {
  try {
    const m = JSON.parse(buf.subarray(8, 8 + len).toString('utf8')) as Partial<Meta>;
    if (typeof m.contentType !== 'string' || typeof m.expiresAt !== 'number') return undefined;
    return { contentType: m.contentType, expiresAt: m.expiresAt };
  } catch {
    return undefined;
  }
}

function parse(buf: Buffer): { meta: Meta; offset: number } | undefined {
  if (buf.length < 8 || !buf.subarray(0, 4).equals(MAGIC)) return undefined;
  const len = buf.readUInt32BE(4);
  if (len > MAX_META || buf.length < 8 + len) return undefined;
  const meta = parseMeta(buf, len);
  return meta && { meta, offset: 8 + len };
}

/** The header only (sweeps must not read whole blobs). Undefined: gone meanwhile; null: not a valid blob. */
async function readMeta(path: string): Promise<Meta | undefined | null> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  try {
    const head = Buffer.alloc(8 + MAX_META);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const buf = head.subarray(0, bytesRead);
    if (buf.length < 8 || !buf.subarray(0, 4).equals(MAGIC)) return null;
    const len = buf.readUInt32BE(4);
    if (len > MAX_META || buf.length < 8 + len) return null;
    return parseMeta(buf, len) ?? null;
  } finally {
    await fh.close();
  }
}
