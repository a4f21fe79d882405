/**
 * SECURITY.md, checked: API keys at rest (hashes only, on SQLite, PostgreSQL
 * and Redis), the admin surface off by default (404 like any unknown path,
 * not 401), blob URLs that cannot walk out of the blob store, and one
 * account never reaching another's jobs (bulk, crawl, research): the same
 * 404 as an id that does not exist, so ids are no oracle.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { freshDatabase, redisNamespace, REDIS_TEST_URL } from '../support/services.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'security-admin-token-0123456789abcdef';

async function account(base: string, credits = 1000): Promise<{ id: string; key: string }> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits } });
  expect(r.status, r.text).toBe(201);
  return { id: r.body.account_id as string, key: r.body.api_key as string };
}

const sha256 = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

describe('API keys at rest: only their SHA-256', () => {
  it('SQLite: neither the database nor its WAL holds a key; its hash is there', async () => {
    const s = await startScour('node', { adminToken: ADMIN });
    try {
      const a = await account(s.url);
      const extra = await call(`${s.url}/admin/v1/accounts/${a.id}/keys`, 'POST', { auth: `Bearer ${ADMIN}`, body: {} });
      expect(extra.status, extra.text).toBe(201);
      const keys = [a.key, extra.body.api_key as string];
      // Used once, so anything cached on use would be written too.
      for (const k of keys) expect((await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${k}` })).status).toBe(200);
      const dir = (s.scour as unknown as { settings?: { dataDir?: string } }).settings?.dataDir ?? '';
      const files = dir ? readdirSync(dir).filter((f) => f.startsWith('scour.db')) : [];
      expect(files.length, `SQLite files in ${dir}`).toBeGreaterThan(0);
      const bytes = Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
      for (const k of keys) {
        expect(bytes.includes(Buffer.from(k))).toBe(false);
        // The secret part alone (after the prefix shown in listings) is not there either.
        expect(bytes.includes(Buffer.from(k.slice(-24)))).toBe(false);
        expect(bytes.includes(Buffer.from(sha256(k)))).toBe(true);
      }
    } finally {
      await s.stop();
    }
  });

  it('PostgreSQL and Redis: no table row and no Redis value holds a key', async () => {
    const db = await freshDatabase();
    const redis = redisNamespace();
    const s = await startScour('uws', { adminToken: ADMIN, databaseUrl: db.url, redisUrl: redis.url, redisPrefix: redis.prefix });
    const client = new pg.Client({ connectionString: db.url });
    const r = new Redis(REDIS_TEST_URL);
    try {
      const a = await account(s.url);
      expect((await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${a.key}` })).status).toBe(200);
      await client.connect();
      const tables = await client.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
      let dump = '';
      for (const { table_name } of tables.rows) {
        const rows = await client.query(`SELECT row_to_json(t)::text AS j FROM "${table_name}" t`);
        dump += rows.rows.map((x: { j: string }) => x.j).join('\n');
      }
      expect(dump).toContain(sha256(a.key));
      expect(dump).not.toContain(a.key);
      expect(dump).not.toContain(a.key.slice(-24));
      let cursor = '0';
      let values = '';
      do {
        const [next, found] = await r.scan(cursor, 'MATCH', `${redis.prefix}*`, 'COUNT', '500');
        cursor = next;
        for (const k of found) {
          const type = await r.type(k);
          values += k;
          if (type === 'string') values += (await r.get(k)) ?? '';
          else if (type === 'hash') values += JSON.stringify(await r.hgetall(k));
          else if (type === 'zset') values += (await r.zrange(k, '0', '-1')).join(',');
          else if (type === 'list') values += (await r.lrange(k, 0, -1)).join(',');
          else if (type === 'set') values += (await r.smembers(k)).join(',');
        }
      } while (cursor !== '0');
      expect(values).not.toContain(a.key);
      expect(values).not.toContain(a.key.slice(-24));
    } finally {
      await client.end().catch(() => undefined);
      r.disconnect();
      await s.stop();
      await db.drop();
      await redis.clear();
    }
  });
});

describe('the admin surface is off by default', () => {
  it('without SCOUR_ADMIN_TOKEN every admin route answers 404 NOT_FOUND, with or without a token, and is not in the OpenAPI document', async () => {
    const on = await startScour('uws', { adminToken: ADMIN });
    const off = await startScour('uws');
    try {
      const doc = (await call(`${on.url}/v1/openapi.json`, 'GET')).body as { paths: Record<string, Record<string, unknown>> };
      const adminRoutes = Object.entries(doc.paths).filter(([p]) => p.startsWith('/admin/'))
        .flatMap(([p, ops]) => Object.keys(ops).map((m) => [m.toUpperCase(), p.replace(/\{[a-z_]+\}/g, 'x')] as const));
      expect(adminRoutes.length).toBeGreaterThan(10);
      for (const [method, path] of adminRoutes) {
        for (const auth of [undefined, `Bearer ${ADMIN}`]) {
          const r = await call(`${off.url}${path}`, method, { auth, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
          expectErrorBody(r, 404, 'NOT_FOUND');
        }
      }
      const offDoc = (await call(`${off.url}/v1/openapi.json`, 'GET')).body as { paths: Record<string, unknown> };
      expect(Object.keys(offDoc.paths).filter((p) => p.startsWith('/admin/'))).toEqual([]);
    } finally {
      await on.stop();
      await off.stop();
    }
  });
});

describe('blob URLs and other accounts\' jobs', () => {
  let s: Running;
  let hook: WebhookReceiver;
  let a: { id: string; key: string };
  let b: { id: string; key: string };

  beforeAll(async () => {
    hook = await startWebhookReceiver({ secret: 'unused-secret-not-verified' });
    s = await startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'] });
    a = await account(s.url);
    b = await account(s.url);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await hook?.close();
  });

  it('screenshot and export URLs: traversal, encodings, NUL and overlong names are 404, never a file', async () => {
    const names = [
      '..%2f..%2fscour.db', '..%2F..%2Fpackage.json', '%2e%2e%2f%2e%2e%2fscour.db', '..%5c..%5cscour.db', '....%2f%2fscour.db',
      'scour.db', '%2fetc%2fpasswd', 'a%00.png', `${'A'.repeat(32)}.png%00.txt`, `${'A'.repeat(5000)}.png`, '.', '..', '%2e', '%2e%2e',
      `${'A'.repeat(31)}/.png`, `${'A'.repeat(32)}.PNG`, `${'A'.repeat(32)}.png.`, `${'A'.repeat(32)}.png/`,
    ];
    for (const base of ['/v1/screenshots/', '/v1/research/exports/']) {
      for (const n of names) {
        const r = await call(`${s.url}${base}${n}`, 'GET');
        expect(r.status, `${base}${n}`).toBe(404);
        expect(r.text).not.toMatch(/SQLite format|"name":|root:/);
      }
    }
  });

  it('bulk, crawl and research jobs of one account are 404 to another, exactly like an id that does not exist', async () => {
    const callback = hook.url;
    const bulk = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${a.key}`, body: { urls: [`${hook.url}/page`], callback_url: callback } });
    expect(bulk.status, bulk.text).toBe(202);
    const crawl = await call(`${s.url}/v1/crawl`, 'POST', { auth: `Bearer ${a.key}`, body: { url: `${hook.url}/page`, max_pages: 1 } });
    expect(crawl.status, crawl.text).toBe(202);
    const research = await call(`${s.url}/v1/research`, 'POST', { auth: `Bearer ${a.key}`, body: { research_query: 'zeppelin history', analysis_depth: 'quick', callback_url: callback } });
    expect(research.status, research.text).toBe(202);
    const ids = [
      ['/v1/scrape/bulk/', bulk.body.job_id as string],
      ['/v1/crawl/', crawl.body.job_id as string],
      ['/v1/research/', research.body.job_id as string],
    ] as const;
    for (const [path, id] of ids) {
      // The owner sees it.
      expect((await call(`${s.url}${path}${id}`, 'GET', { auth: `Bearer ${a.key}` })).status).toBe(200);
      const theirs = await call(`${s.url}${path}${id}`, 'GET', { auth: `Bearer ${b.key}` });
      // An id of the same shape that exists for nobody.
      const fake = id.replace(/[0-9a-f]{8}$/, '00000000');
      const nobody = await call(`${s.url}${path}${fake}`, 'GET', { auth: `Bearer ${b.key}` });
      expectErrorBody(theirs, 404, 'NOT_FOUND');
      expectErrorBody(nobody, 404, 'NOT_FOUND');
      expect(theirs.body.error).toBe(nobody.body.error);
    }
    // Nor can another account cancel a crawl.
    const cancel = await call(`${s.url}/v1/crawl/${crawl.body.job_id as string}`, 'DELETE', { auth: `Bearer ${b.key}` });
    expectErrorBody(cancel, 404, 'NOT_FOUND');
    expect((await call(`${s.url}/v1/crawl/${crawl.body.job_id as string}`, 'GET', { auth: `Bearer ${a.key}` })).body.status).not.toMatch(/cancel/);
  }, 60_000);
});
