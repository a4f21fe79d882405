/**
 * Change tracking (issue 29, section 6) through the real server, embedded
 * (SQLite) and shared (PostgreSQL, Redis): a page scraped with
 * track_changes is new, then same when only its white space changed, then
 * changed with a real unified diff of its Markdown; per account; +1
 * credit; the markdown field is answered only when asked for. And the
 * PageHistory swap of both store adapters.
 */
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ISO } from '../support/http.js';
import { CONFIGS, startScourIn, type Running } from '../support/server.js';
import { freshDatabase } from '../support/services.js';
import { openSqliteStore } from '../../adapters/store/sqlite/index.js';
import { sqlitePageHistory } from '../../adapters/store/sqlite/page-history.js';
import { openPostgresStore } from '../../adapters/store/postgres/index.js';
import { postgresPageHistory } from '../../adapters/store/postgres/page-history.js';
import type { PageHistory } from '../../core/page-changes.js';
import type { AccountStore } from '../../core/ports.js';

const ADMIN = 'scrape-changes-admin-token-0123456789';

/** One article whose paragraphs the test sets. */
async function startArticleSite(): Promise<{ url: string; set(paragraphs: string): void; hits(): number; close(): Promise<void> }> {
  let body = '';
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!DOCTYPE html><html><head><title>Tracked</title></head><body><nav>Home About</nav><article><h1>Release notes</h1>${body}</article></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notes`,
    set: (p) => { body = p; },
    hits: () => hits,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const V1 = '<p>Version one ships the parser and the crawler for every site we know of today.</p><p>It also ships the exporter.</p>';
/** V1 with its white space changed only. */
const V1_SPACED = '<p>Version   one ships the parser\n\n and the crawler for every site   we know of today.</p>\n\n\n<p>It also ships   the exporter.</p>';
const V2 = '<p>Version two ships the parser and the crawler for every site we know of today.</p><p>It also ships the exporter.</p>';

describe.each(CONFIGS)('track_changes (%s)', (config) => {
  let site: Awaited<ReturnType<typeof startArticleSite>>;
  let s: Running;
  const account = async (): Promise<{ id: string; key: string }> => {
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    expect(r.status, r.text).toBe(201);
    return { id: r.body.account_id, key: r.body.api_key };
  };
  const scrape = (key: string, body: Record<string, unknown> = {}) =>
    call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body: { url: site.url, track_changes: true, ...body } });

  beforeAll(async () => {
    site = await startArticleSite();
    s = await startScourIn(config, 'node', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('new, then same (white space only), then changed with a unified diff of the Markdown; +1 credit each', async () => {
    const a = await account();
    site.set(V1);
    const first = await scrape(a.key);
    expect(first.status, first.text).toBe(200);
    expect(first.body.changes).toEqual({ status: 'new', previous_scraped_at: null, diff: null });
    expect(first.body.credits_used).toBe(4);
    // Extracted for the comparison, answered only when asked for.
    expect(first.body).not.toHaveProperty('markdown');

    site.set(V1_SPACED);
    const second = await scrape(a.key);
    expect(second.status, second.text).toBe(200);
    expect(second.body.changes).toEqual({ status: 'same', previous_scraped_at: expect.stringMatching(ISO), diff: null });
    expect(Date.parse(second.body.changes.previous_scraped_at)).toBeLessThanOrEqual(Date.now());

    site.set(V2);
    const third = await scrape(a.key, { markdown: true });
    expect(third.status, third.text).toBe(200);
    expect(third.body.changes.status).toBe('changed');
    expect(third.body.changes.previous_scraped_at).toMatch(ISO);
    expect(Date.parse(third.body.changes.previous_scraped_at)).toBeGreaterThanOrEqual(Date.parse(second.body.changes.previous_scraped_at));
    const diff: string = third.body.changes.diff;
    expect(diff.startsWith('--- previous\n+++ current\n@@ -')).toBe(true);
    expect(diff).toContain('\n-Version one ships the parser');
    expect(diff).toContain('\n+Version two ships the parser');
    expect(diff).toContain('\n # Release notes');
    expect(third.body.markdown).toContain('Version two ships the parser');
    expect(third.body.credits_used).toBe(4);

    // Nothing changed since: same again, against the third scrape.
    const fourth = await scrape(a.key);
    expect(fourth.body.changes.status).toBe('same');
  });

  it("is per account: another account's first tracked scrape is new", async () => {
    const [a, b] = [await account(), await account()];
    site.set(V1);
    expect((await scrape(a.key)).body.changes.status).toBe('new');
    site.set(V2);
    expect((await scrape(b.key)).body.changes.status).toBe('new');
    expect((await scrape(a.key)).body.changes.status).toBe('changed');
  });

  it('a scrape without track_changes neither answers changes nor moves the tracked version', async () => {
    const a = await account();
    site.set(V1);
    expect((await scrape(a.key)).body.changes.status).toBe('new');
    site.set(V2);
    const plain = await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${a.key}`, body: { url: site.url } });
    expect(plain.body).not.toHaveProperty('changes');
    expect(plain.body.credits_used).toBe(3);
    expect((await scrape(a.key)).body.changes.status).toBe('changed');
  });

  it('bulk scrape does not take track_changes', async () => {
    const a = await account();
    const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${a.key}`, body: { urls: [site.url], track_changes: true } });
    expect(r.status, r.text).toBe(400);
    expect(r.body.validation_errors.map((e: { field: string }) => e.field)).toContain('track_changes');
  });
});

describe.each(['sqlite', 'postgres'] as const)('PageHistory swap (%s)', (kind) => {
  let history: PageHistory;
  let store: AccountStore;
  let close: () => Promise<void>;
  const T = Date.UTC(2026, 10, 1);
  const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e);

  beforeAll(async () => {
    if (kind === 'sqlite') {
      const sqlite = openSqliteStore({ path: join(mkdtempSync(join(tmpdir(), 'scour-history-')), 'scour.db') });
      store = sqlite;
      history = sqlitePageHistory(sqlite);
      close = async () => sqlite.close();
    } else {
      const db = await freshDatabase();
      const pg = await openPostgresStore({ url: db.url });
      store = pg;
      history = postgresPageHistory(pg);
      close = async () => { await pg.close(); await db.drop(); };
    }
  });
  afterAll(async () => close?.());

  const newAccount = async () => (await run(store.createAccount({ id: `acct_${randomUUID()}`, name: null, plan: 'free', credits: 10, now: T, periodEnd: T + 1e9 }))).id;

  it('answers the version it replaced, per account and URL; a long URL and odd text are kept as they are', async () => {
    const [a, b] = [await newAccount(), await newAccount()];
    const url = `https://example.com/${'x'.repeat(8000)}`;
    expect(await run(history.swap(a, url, 'one', T))).toBeUndefined();
    expect(await run(history.swap(b, url, 'other', T + 1))).toBeUndefined();
    expect(await run(history.swap(a, url, 'two ✓ \ud83d\ude00', T + 2))).toEqual({ markdown: 'one', scrapedAt: T });
    expect(await run(history.swap(a, url, 'three', T + 3))).toEqual({ markdown: 'two ✓ \ud83d\ude00', scrapedAt: T + 2 });
    expect(await run(history.swap(a, 'https://example.com/else', 'x', T + 4))).toBeUndefined();
    expect(await run(history.swap(b, url, 'other 2', T + 5))).toEqual({ markdown: 'other', scrapedAt: T + 1 });
  });

  it('swaps at once each see a different previous version, never the same one twice', async () => {
    const a = await newAccount();
    const url = 'https://example.com/race';
    const seen = await Promise.all(Array.from({ length: 8 }, (_, i) => run(history.swap(a, url, `v${i}`, T + i))));
    const previous = seen.map((v) => v?.markdown ?? null);
    expect(previous.filter((p) => p === null)).toHaveLength(1);
    expect(new Set(previous).size).toBe(8);
  });
});
