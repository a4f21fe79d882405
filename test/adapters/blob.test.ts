/** The filesystem BlobStore: round trip, expiry, sweep, key safety, atomic writes. */
import { mkdtemp, readdir, rm, writeFile, utimes, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../adapters/blob/fs/index.js';

let root: string;
beforeEach(async () => { root = await mkdtemp(join(tmpdir(), 'scour-blob-')); });
afterEach(async () => { await rm(root, { recursive: true, force: true }); });

const KEY = 'abcdefghijklmnop_0123-XYZ';
const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

describe('FsBlobStore', () => {
  it('stores under <dataDir>/blobs and round-trips bytes and content type', async () => {
    const store = new FsBlobStore({ dataDir: root });
    expect(store.dir).toBe(join(root, 'blobs'));
    const data = bytes(100_000);
    await store.put(KEY, data, { contentType: 'image/png', expiresAt: 2_000 });
    const got = await store.get(KEY, 1_000);
    expect(got?.contentType).toBe('image/png');
    expect(got?.expiresAt).toBe(2_000);
    expect(Buffer.from(got!.data).equals(Buffer.from(data))).toBe(true);
    expect(await readdir(join(root, 'blobs'))).toEqual([`${KEY}.blob`]);
  });

  it('round-trips an empty blob', async () => {
    const store = new FsBlobStore({ dir: join(root, 'x') });
    await store.put(KEY, new Uint8Array(0), { contentType: 'text/plain', expiresAt: 10 });
    expect((await store.get(KEY, 0))?.data.length).toBe(0);
  });

  it('answers undefined for missing and expired blobs (expiry is exclusive of now)', async () => {
    const store = new FsBlobStore({ dataDir: root });
    expect(await store.get(KEY, 0)).toBeUndefined();
    await store.put(KEY, bytes(10), { contentType: 'image/jpeg', expiresAt: 5_000 });
    expect(await store.get(KEY, 4_999)).toBeDefined();
    expect(await store.get(KEY, 5_000)).toBeUndefined();
    expect(await store.get(KEY, 9_999)).toBeUndefined();
  });

  it('overwrites a key atomically', async () => {
    const store = new FsBlobStore({ dataDir: root });
    await store.put(KEY, bytes(10, 1), { contentType: 'a/b', expiresAt: 100 });
    await store.put(KEY, bytes(20, 2), { contentType: 'c/d', expiresAt: 200 });
    const got = await store.get(KEY, 0);
    expect(got?.contentType).toBe('c/d');
    expect(Buffer.from(got!.data).equals(Buffer.from(bytes(20, 2)))).toBe(true);
    expect(await readdir(store.dir)).toEqual([`${KEY}.blob`]);
  });

  it('refuses keys outside [A-Za-z0-9_-]{16,128} on put and never finds them on get', async () => {
    const store = new FsBlobStore({ dataDir: root });
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'secret.txt'), 'do not serve');
    const bad = ['../secret.txt', '..%2Fsecret.txt', 'short', 'a'.repeat(129), 'abcdefghijklmnop/q', 'abcdefghijklmnop.blob', 'abcdefghijklmnop\0', '/etc/passwd-aaaaaaaaaa', ''];
    for (const k of bad) {
      await expect(store.put(k, bytes(1), { contentType: 'x/y', expiresAt: 1e15 })).rejects.toThrow(TypeError);
      expect(await store.get(k, 0)).toBeUndefined();
    }
    await store.put('a'.repeat(16), bytes(1), { contentType: 'x/y', expiresAt: 1 });
    await store.put('B'.repeat(128), bytes(1), { contentType: 'x/y', expiresAt: 1 });
    expect((await readdir(store.dir)).sort()).toEqual([`${'B'.repeat(128)}.blob`, `${'a'.repeat(16)}.blob`]);
  });

  it('sweep deletes expired and corrupt blobs, keeps live ones, clears stale temp files', async () => {
    const store = new FsBlobStore({ dataDir: root });
    expect(await store.sweep(0)).toBe(0); // directory does not exist yet
    for (let i = 0; i < 6; i++) {
      await store.put(`key${i}-aaaaaaaaaaaaaaaa`, bytes(50, i), { contentType: 'image/png', expiresAt: (i + 1) * 1_000 });
    }
    await writeFile(join(store.dir, 'corrupt-aaaaaaaaaaaaa.blob'), 'not a blob');
    const staleTmp = join(store.dir, '.tmp-dead-write');
    const freshTmp = join(store.dir, '.tmp-live-write');
    await writeFile(staleTmp, 'x');
    await writeFile(freshTmp, 'x');
    const now = Date.now();
    await utimes(staleTmp, new Date(now - 2 * 3600_000), new Date(now - 2 * 3600_000));
    await writeFile(join(store.dir, 'unrelated.txt'), 'left alone');

    // At t=3500 blobs 0,1,2 (expiring 1000,2000,3000) are gone, plus the corrupt one.
    expect(await store.sweep(3_500)).toBe(4);
    for (let i = 0; i < 6; i++) {
      const got = await store.get(`key${i}-aaaaaaaaaaaaaaaa`, 0);
      expect(got === undefined).toBe(i < 3);
    }
    // Temp files are judged by their file times against `now`: the stale one goes, the fresh one stays.
    expect(await store.sweep(now)).toBe(3);
    const left = await readdir(store.dir);
    expect(left).not.toContain('.tmp-dead-write');
    expect(left).toContain('.tmp-live-write');
    expect(left).toContain('unrelated.txt');
    expect((await readdir(store.dir)).filter((n) => n.endsWith('.blob'))).toEqual([]);
  });

  it('concurrent puts and gets never expose a partial blob', async () => {
    const store = new FsBlobStore({ dataDir: root });
    const a = bytes(200_000, 3);
    const b = bytes(300_000, 7);
    await store.put(KEY, a, { contentType: 'a/a', expiresAt: 1e15 });
    const ops: Promise<unknown>[] = [];
    const seen: string[] = [];
    for (let i = 0; i < 40; i++) {
      ops.push(store.put(KEY, i % 2 ? a : b, { contentType: i % 2 ? 'a/a' : 'b/b', expiresAt: 1e15 }));
      ops.push(store.get(KEY, 0).then((g) => {
        expect(g).toBeDefined();
        const want = g!.contentType === 'a/a' ? a : b;
        expect(Buffer.from(g!.data).equals(Buffer.from(want))).toBe(true);
        seen.push(g!.contentType);
      }));
    }
    await Promise.all(ops);
    expect(seen.length).toBe(40);
    expect((await readdir(store.dir)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });
});
