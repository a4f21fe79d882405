/**
 * The scrape cache (core/page-cache.ts) in the blob store: one blob per
 * entry in a directory of its own (`<SCOUR_DATA_DIR>/page-cache`), so
 * every process using that data directory shares the cache, and holding it
 * to its size cap never touches a screenshot. An entry is the fetch's
 * answer packed with msgpack (bytes stay bytes), named by the SHA-256 of
 * its key material and holding the material itself, so a hit is checked
 * against the request and not only against a hash. It expires
 * SCOUR_CACHE_TTL after it was fetched; when the directory outgrows
 * SCOUR_CACHE_MAX_BYTES, the entries that expire first (the oldest) go
 * until it is back under nine tenths of the cap.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { FsBlobStore } from '../blob/fs/index.js';
import type { CachedPage, PageCache } from '../../core/page-cache.js';
import type { FetchResult } from '../../core/page.js';

export interface BlobPageCacheOptions {
  /** The data directory: entries go to `<dataDir>/page-cache`. */
  readonly dataDir: string;
  /** The cap on the directory's size (SCOUR_CACHE_MAX_BYTES); an entry larger than it is never kept. */
  readonly maxBytes: number;
  /** How long an entry lives (SCOUR_CACHE_TTL), in ms. */
  readonly ttlMs: number;
}

interface Entry {
  readonly v: 1;
  readonly material: string;
  readonly storedAt: number;
  readonly result: FetchResult;
}

const CONTENT_TYPE = 'application/x-scour-page-cache';

export class BlobPageCache implements PageCache {
  readonly dir: string;
  private readonly blobs: FsBlobStore;
  private readonly packr = new Packr({ useRecords: false, moreTypes: false });
  /** The directory's size as this process knows it (its last trim, plus what it wrote since); undefined before the first trim. */
  private bytes: number | undefined;
  private trimming: Promise<void> | undefined;
  /** Writes not finished yet, by blob key: a read of the same entry waits for its write (the scrape answers before it ends). */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(private readonly options: BlobPageCacheOptions) {
    this.dir = join(options.dataDir, 'page-cache');
    this.blobs = new FsBlobStore({ dir: this.dir });
  }

  async get(material: string, now: number): Promise<CachedPage | undefined> {
    const key = keyOf(material);
    await this.writing.get(key);
    const blob = await this.blobs.get(key, now);
    if (blob === undefined || blob.contentType !== CONTENT_TYPE) return undefined;
    let entry: Entry;
    try {
      entry = this.packr.unpack(blob.data) as Entry;
    } catch {
      return undefined;
    }
    if (entry?.v !== 1 || entry.material !== material || typeof entry.storedAt !== 'number' || typeof entry.result?.body !== 'string') return undefined;
    return { result: entry.result, storedAt: entry.storedAt };
  }

  /**
   * The answer is packed at once (so a caller may change or drop it right
   * after the call); the write then goes on its own, and a get() of the same
   * entry in this process waits for it. Never rejects (best effort).
   */
  put(material: string, result: FetchResult, now: number): Promise<void> {
    const entry: Entry = { v: 1, material, storedAt: now, result: plain(result) };
    const data = this.packr.pack(entry);
    if (data.length > this.options.maxBytes) return Promise.resolve();
    const key = keyOf(material);
    const prior = this.writing.get(key);
    const write: Promise<void> = (async () => {
      await prior;
      await this.write(key, data, now);
    })().catch(() => undefined).finally(() => {
      if (this.writing.get(key) === write) this.writing.delete(key);
    });
    this.writing.set(key, write);
    return write;
  }

  /** Writes still under way (shutdown, tests). */
  flushed(): Promise<void> {
    return Promise.all([...this.writing.values()]).then(() => undefined);
  }

  private async write(key: string, data: Uint8Array, now: number): Promise<void> {
    await this.blobs.put(key, data, { contentType: CONTENT_TYPE, expiresAt: now + this.options.ttlMs });
    if (this.bytes === undefined) await this.trim(now);
    else {
      this.bytes += data.length;
      if (this.bytes > this.options.maxBytes) await this.trim(now);
    }
  }

  /**
   * Expired entries out, then the oldest until the directory is under nine
   * tenths of the cap (so a full cache is not trimmed at every write). Also
   * run by the periodic sweep: other processes write here too.
   */
  trim(now: number): Promise<void> {
    this.trimming ??= (async () => {
      try {
        const r = await this.blobs.trim(this.bytes === undefined || this.bytes <= this.options.maxBytes ? this.options.maxBytes : Math.floor(this.options.maxBytes * 0.9), now);
        this.bytes = r.bytes;
      } finally {
        this.trimming = undefined;
      }
    })();
    return this.trimming;
  }
}

/** The blob key of an entry: hex SHA-256 of its material (64 characters of the blob alphabet). */
function keyOf(material: string): string {
  return createHash('sha256').update(material).digest('hex');
}

/** The fetch answer as plain data (no undefined fields, bytes as bytes). */
function plain(r: FetchResult): FetchResult {
  return {
    url: r.url, finalUrl: r.finalUrl, statusCode: r.statusCode, headers: { ...r.headers }, contentType: r.contentType, body: r.body,
    loadTimeSeconds: r.loadTimeSeconds,
    ...(r.bytes !== undefined ? { bytes: r.bytes } : {}),
    ...(r.screenshot !== undefined ? { screenshot: { ...r.screenshot } } : {}),
  };
}
