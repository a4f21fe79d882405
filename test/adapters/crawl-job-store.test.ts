/**
 * The JobStore's second kind of job, on both adapters (SQLite, PostgreSQL):
 * a crawl's items are its frontier. Kinds keep jobs apart (getJob, claims);
 * finishing a page adds the links found on it in the same transaction (known
 * URLs ignored, numbered on without gaps, bounded), skips are counted by
 * reason and never billed, a page the balance cannot pay for is skipped
 * (no_credits) and adds nothing; a stop is asked for and honoured; the
 * version-4 migration keeps a version-3 database's bulk items.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Effect } from 'effect';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../core/accounts.js';
import type { FinishItem, FrontierEntry, JobStore } from '../../core/jobs.js';
import type { AccountStore } from '../../core/ports.js';
import { migratePostgres, openPostgresStore } from '../../adapters/store/postgres/index.js';
import { postgresJobStore } from '../../adapters/store/postgres/jobs.js';
import { POSTGRES_MIGRATIONS } from '../../adapters/store/postgres/migrations.js';
import { migrateSqlite, openSqliteStore } from '../../adapters/store/sqlite/index.js';
import { sqliteJobStore } from '../../adapters/store/sqlite/jobs.js';
import { SQLITE_MIGRATIONS } from '../../adapters/store/sqlite/migrations.js';
import { freshDatabase } from '../support/services.js';
import { postgresHarness, sqliteHarness, type Opened } from '../support/job-stores.js';

const T0 = Date.UTC(2026, 10, 1);
const MONTH = 30 * 86_400_000;
const LEASE = 10_000;
const run = <A, E>(e: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(e);


const pending = (url: string, depth = 1): FrontierEntry => ({ url, depth });
const skipped = (url: string, skip: string, depth = 1): FrontierEntry => ({ url, depth, skip });

describe.each([sqliteHarness(), postgresHarness()])('JobStore, crawl frontier: $name', (h) => {
  let main: Opened;
  let accounts: AccountStore;
  let jobs: JobStore;
  let clock = T0;
  const tick = () => (clock += 1000);

  beforeAll(async () => {
    await h.setup();
    main = await h.open();
    accounts = main.accounts;
    jobs = main.jobs;
  });
  afterAll(async () => {
    if (main) await main.close();
    await h.teardown();
  });

  const newAccount = (credits: number): Promise<Account> =>
    run(accounts.createAccount({ id: randomUUID(), name: 't', plan: 'free', credits, now: T0, periodEnd: T0 + MONTH }));

  const newCrawl = (accountId: string, start = 'https://site.test/') =>
    run(jobs.createJob({ id: `crawl_${randomUUID()}`, kind: 'crawl', accountId, request: { url: start }, urls: [start], depths: [0], callbackUrl: null, pricePerUrl: 3, now: tick() }));

  const newBulk = (accountId: string) =>
    run(jobs.createJob({ id: `bulk_${randomUUID()}`, accountId, request: {}, urls: ['https://b.test/1', 'https://b.test/1'], callbackUrl: null, pricePerUrl: 1, now: tick() }));

  /** Claim (and close) every job left over by earlier tests. */
  const drain = async () => {
    for (;;) {
      const c = await run(jobs.claimJob('drain', clock + 100 * LEASE, LEASE));
      if (c === undefined) return;
      await run(jobs.completeJob(c.jobId, 'drain', clock, 'completed'));
    }
  };

  const claim = async (jobId: string, worker = 'w1') => {
    const c = await run(jobs.claimJob(worker, tick(), LEASE, jobId));
    expect(c?.jobId).toBe(jobId);
  };

  const finish = (jobId: string, idx: number, over: Partial<FinishItem> = {}): FinishItem => ({
    jobId, idx, workerId: 'w1', success: true, attempts: 1, result: { title: `page ${idx}` }, error: null,
    credits: 3, operation: 'crawl', ledgerRequestId: `${jobId}:${idx}`, now: clock, ...over,
  });

  it('keeps kinds apart: a crawl is not a bulk job, and claims can be limited to kinds', async () => {
    await drain();
    const a = await newAccount(100);
    const crawl = await newCrawl(a.id);
    const bulk = await newBulk(a.id);
    expect(crawl).toMatchObject({ kind: 'crawl', status: 'queued', total: 1, stopReason: null });
    expect(bulk.kind).toBe('bulk_scrape');
    // The default is bulk: the bulk status endpoint never shows a crawl.
    expect(await run(jobs.getJob(crawl.id, a.id))).toBeUndefined();
    const view = await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl' }));
    expect(view?.items).toEqual([{ idx: 0, url: 'https://site.test/', status: 'pending', attempts: 0, result: null, error: null, depth: 0 }]);
    expect(view?.counts).toEqual({ pending: 1, completed: 0, failed: 0, skipped: 0, reasons: {} });
    expect(await run(jobs.getJob(bulk.id, a.id, { kind: 'crawl' }))).toBeUndefined();
    expect((await run(jobs.getJob(bulk.id, a.id, { kind: 'any' })))?.items.map((i) => i.url)).toEqual(['https://b.test/1', 'https://b.test/1']);
    expect((await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl', items: false })))?.items).toEqual([]);
    // A process that runs bulk jobs only leaves the (older) crawl alone.
    expect(await run(jobs.claimJob('w1', tick(), LEASE, undefined, ['bulk_scrape']))).toEqual({ jobId: bulk.id, accountId: a.id });
    expect(await run(jobs.claimJob('w1', clock, LEASE, undefined, ['bulk_scrape']))).toBeUndefined();
    expect(await run(jobs.claimJob('w1', clock, LEASE, crawl.id, ['bulk_scrape']))).toBeUndefined();
    expect(await run(jobs.claimJob('w1', clock, LEASE, undefined, ['crawl']))).toEqual({ jobId: crawl.id, accountId: a.id });
    await drain();
  });

  it('finishing a page adds its links in the same call: new URLs numbered on, known ones ignored, skips recorded', async () => {
    await drain();
    const a = await newAccount(100);
    const crawl = await newCrawl(a.id);
    await claim(crawl.id);
    const r = await run(jobs.finishItem(finish(crawl.id, 0, {
      discovered: {
        limit: 100,
        entries: [pending('https://site.test/a'), pending('https://site.test/'), pending('https://site.test/b'), pending('https://site.test/a'),
          skipped('https://other.test/', 'off_domain'), skipped('https://site.test/private', 'robots')],
      },
    })));
    expect(r).toMatchObject({ charged: 3, available: 97, alreadyDone: false });
    expect(r.added).toEqual([
      { idx: 1, url: 'https://site.test/a', depth: 1, status: 'pending' },
      { idx: 2, url: 'https://site.test/b', depth: 1, status: 'pending' },
      { idx: 3, url: 'https://other.test/', depth: 1, status: 'skipped' },
      { idx: 4, url: 'https://site.test/private', depth: 1, status: 'skipped' },
    ]);
    // The second page links back to known pages and to one new one.
    const r2 = await run(jobs.finishItem(finish(crawl.id, 1, {
      discovered: { limit: 100, entries: [pending('https://site.test/b', 2), pending('https://other.test/', 2), pending('https://site.test/c', 2)] },
    })));
    expect(r2.added).toEqual([{ idx: 5, url: 'https://site.test/c', depth: 2, status: 'pending' }]);
    // A page finished twice (a resumed run) adds nothing and bills nothing.
    const again = await run(jobs.finishItem(finish(crawl.id, 1, { discovered: { limit: 100, entries: [pending('https://site.test/d', 2)] } })));
    expect(again).toMatchObject({ charged: 0, alreadyDone: true });
    expect(again.added ?? []).toEqual([]);
    // A skipped page is not billed but its links count (noindex, follow).
    const r3 = await run(jobs.finishItem(finish(crawl.id, 2, { skip: 'noindex', discovered: { limit: 100, entries: [pending('https://site.test/e', 2)] } })));
    expect(r3).toMatchObject({ charged: 0, alreadyDone: false, added: [{ idx: 6, url: 'https://site.test/e', depth: 2, status: 'pending' }] });
    const view = await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl' }));
    expect(view?.total).toBe(7);
    expect(view?.items.map((i) => i.idx)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(view?.items[2]).toMatchObject({ status: 'skipped', reason: 'noindex', result: null });
    expect(view?.items[3]).toMatchObject({ status: 'skipped', reason: 'off_domain', attempts: 0 });
    expect(view?.counts).toEqual({ pending: 2, completed: 2, failed: 0, skipped: 3, reasons: { off_domain: 1, robots: 1, noindex: 1 } });
    // Billed under the crawl operation, once per stored page.
    const ledger = await run(accounts.ledger(a.id, 10));
    expect(ledger.map((l) => [l.operation, l.credits])).toEqual([['crawl', 3], ['crawl', 3]]);
    await run(jobs.completeJob(crawl.id, 'w1', tick(), 'completed'));
  });

  it('bounds the frontier: at most limit items in all', async () => {
    await drain();
    const a = await newAccount(100);
    const crawl = await newCrawl(a.id);
    await claim(crawl.id);
    const entries = Array.from({ length: 10 }, (_, i) => pending(`https://site.test/p${i}`));
    const r = await run(jobs.finishItem(finish(crawl.id, 0, { discovered: { limit: 4, entries } })));
    expect(r.added?.map((x) => x.url)).toEqual(['https://site.test/p0', 'https://site.test/p1', 'https://site.test/p2']);
    expect(await run(jobs.addItems(crawl.id, 'w1', { limit: 4, entries }))).toEqual([]);
    expect((await run(jobs.addItems(crawl.id, 'w1', { limit: 6, entries }))).map((x) => x.idx)).toEqual([4, 5]);
    // Only the job's holder adds entries.
    expect(await run(jobs.addItems(crawl.id, 'intruder', { limit: 100, entries: [pending('https://site.test/x')] }))).toEqual([]);
    expect((await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl' })))?.total).toBe(6);
    await run(jobs.completeJob(crawl.id, 'w1', tick(), 'completed'));
  });

  it('a page the balance cannot pay for is skipped as no_credits, its links are not added, nothing is overdrawn', async () => {
    await drain();
    const a = await newAccount(4);
    const crawl = await newCrawl(a.id);
    await claim(crawl.id);
    const r = await run(jobs.finishItem(finish(crawl.id, 0, { discovered: { limit: 100, entries: [pending('https://site.test/a')] } })));
    expect(r).toMatchObject({ charged: 3, available: 1 });
    const r2 = await run(jobs.finishItem(finish(crawl.id, 1, { discovered: { limit: 100, entries: [pending('https://site.test/b', 2)] } })));
    expect(r2).toEqual({ charged: 0, available: 1, alreadyDone: false, added: [] });
    const view = await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl' }));
    expect(view?.items.map((i) => [i.url, i.status, i.reason ?? null])).toEqual([
      ['https://site.test/', 'completed', null],
      ['https://site.test/a', 'skipped', 'no_credits'],
    ]);
    expect(view?.items[1]?.error).toBeNull();
    expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 1, held: 0 });
    await run(jobs.completeJob(crawl.id, 'w1', tick(), 'completed', undefined, { stopReason: 'no_credits', leftover: 'no_credits' }));
    expect(await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl', items: false }))).toMatchObject({ status: 'completed', stopReason: 'no_credits' });
  });

  it('ends early with a reason: pending entries become skipped with it', async () => {
    await drain();
    const a = await newAccount(100);
    const crawl = await newCrawl(a.id);
    await claim(crawl.id);
    await run(jobs.finishItem(finish(crawl.id, 0, { discovered: { limit: 100, entries: [pending('https://site.test/a'), pending('https://site.test/b')] } })));
    expect(await run(jobs.completeJob(crawl.id, 'other', tick(), 'completed', undefined, { leftover: 'max_pages' }))).toBe(false);
    expect(await run(jobs.completeJob(crawl.id, 'w1', tick(), 'completed', undefined, { leftover: 'max_pages' }))).toBe(true);
    const view = await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl' }));
    expect(view?.stopReason).toBeNull();
    expect(view?.counts).toEqual({ pending: 0, completed: 1, failed: 0, skipped: 2, reasons: { max_pages: 2 } });
  });

  it('requestStop: a queued job closes at once with its delivery, a running one is marked for its runner, an ended one is left', async () => {
    await drain();
    const a = await newAccount(100);
    const b = await newAccount(100);
    const queued = await newCrawl(a.id);
    expect(await run(jobs.requestStop(queued.id, b.id, 'crawl', 'cancelled', tick()))).toBeUndefined();
    expect(await run(jobs.requestStop(queued.id, a.id, 'bulk_scrape', 'cancelled', clock))).toBeUndefined();
    const d = { id: randomUUID(), event: 'crawl.completed', nextAttemptAt: clock };
    expect(await run(jobs.requestStop(queued.id, a.id, 'crawl', 'cancelled', clock, d))).toBe('stopped');
    const closed = await run(jobs.getJob(queued.id, a.id, { kind: 'crawl' }));
    expect(closed).toMatchObject({ status: 'completed', stopReason: 'cancelled', finishedAt: clock });
    expect(closed?.counts).toMatchObject({ pending: 0, skipped: 1, reasons: { cancelled: 1 } });
    expect(closed?.deliveries.map((x) => x.event)).toEqual(['crawl.completed']);
    expect(await run(jobs.claimJob('w9', clock + 100 * LEASE, LEASE, queued.id))).toBeUndefined();
    expect(await run(jobs.requestStop(queued.id, a.id, 'crawl', 'cancelled', clock))).toBe('finished');

    const running = await newCrawl(a.id);
    await claim(running.id);
    expect(await run(jobs.stopRequested(running.id))).toBeNull();
    expect(await run(jobs.requestStop(running.id, a.id, 'crawl', 'cancelled', tick()))).toBe('requested');
    expect(await run(jobs.stopRequested(running.id))).toBe('cancelled');
    expect(await run(jobs.getJob(running.id, a.id, { kind: 'crawl', items: false }))).toMatchObject({ status: 'running', stopReason: 'cancelled' });
    expect(await run(jobs.completeJob(running.id, 'w1', tick(), 'completed', undefined, { leftover: 'cancelled' }))).toBe(true);
    expect(await run(jobs.getJob(running.id, a.id, { kind: 'crawl', items: false }))).toMatchObject({ status: 'completed', stopReason: 'cancelled' });
    const due = await run(jobs.dueDeliveries(clock, 10));
    expect(due.map((x) => x.id)).toContain(d.id);
  });

  it('two store instances finishing pages of one crawl at once number new entries without gaps or repeats', async () => {
    await drain();
    const a = await newAccount(10_000);
    const crawl = await newCrawl(a.id);
    await claim(crawl.id);
    const seeds = Array.from({ length: 40 }, (_, i) => pending(`https://site.test/s${i}`));
    await run(jobs.finishItem(finish(crawl.id, 0, { discovered: { limit: 100_000, entries: seeds } })));
    const other = await h.open();
    try {
      // Every page links to a shared set and to its own pages.
      await Promise.all(Array.from({ length: 40 }, (_, i) => {
        const store = i % 2 === 0 ? jobs : other.jobs;
        const entries = [...Array.from({ length: 10 }, (_, k) => pending(`https://site.test/shared${k}`, 2)), pending(`https://site.test/own${i}`, 2)];
        return run(store.finishItem(finish(crawl.id, i + 1, { discovered: { limit: 100_000, entries } })));
      }));
    } finally {
      await other.close();
    }
    const view = await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl' }));
    const n = 1 + 40 + 10 + 40;
    expect(view?.total).toBe(n);
    expect(view?.items.map((i) => i.idx)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(new Set(view?.items.map((i) => i.url)).size).toBe(n);
    expect(view?.counts).toMatchObject({ completed: 41, pending: 50 });
    await run(jobs.completeJob(crawl.id, 'w1', tick(), 'completed'));
  });
});

describe('job-kinds-crawl-frontier migration (version 4) keeps a version-3 database\'s bulk jobs', () => {
  const seed = `INSERT INTO accounts (id, name, plan, balance, held, period_start, period_end, created_at)
                VALUES ('acct_v3', NULL, 'free', 10, 0, ${T0}, ${T0 + MONTH}, ${T0});
                INSERT INTO bulk_jobs (id, account_id, status, request, callback_url, price_per_url, total, created_at)
                VALUES ('bulk_v3', 'acct_v3', 'queued', '{}', NULL, 1, 2, ${T0});
                INSERT INTO bulk_items (job_id, idx, url, status) VALUES ('bulk_v3', 0, 'https://a.test/', 'pending'), ('bulk_v3', 1, 'https://a.test/', 'pending');`;

  const expectUpgraded = async (jobs: JobStore) => {
    const view = await run(jobs.getJob('bulk_v3', 'acct_v3'));
    expect(view).toMatchObject({ kind: 'bulk_scrape', status: 'queued', stopReason: null, total: 2 });
    expect(view?.items).toEqual([
      { idx: 0, url: 'https://a.test/', status: 'pending', attempts: 0, result: null, error: null },
      { idx: 1, url: 'https://a.test/', status: 'pending', attempts: 0, result: null, error: null },
    ]);
    expect(await run(jobs.claimJob('w', T0 + 1, LEASE))).toEqual({ jobId: 'bulk_v3', accountId: 'acct_v3' });
    await run(jobs.finishItem({ jobId: 'bulk_v3', idx: 1, workerId: 'w', success: true, attempts: 1, result: { ok: 1 }, error: null, credits: 1, ledgerRequestId: 'bulk_v3:1', now: T0 + 2 }));
    expect((await run(jobs.getJob('bulk_v3', 'acct_v3')))?.counts).toEqual({ pending: 1, completed: 1, failed: 0, skipped: 0, reasons: {} });
  };

  it('sqlite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scour-jobs-v3-'));
    try {
      const path = join(dir, 'scour.db');
      const db = new Database(path);
      db.pragma('foreign_keys = ON');
      migrateSqlite(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 3));
      db.exec(seed);
      db.close();
      const store = openSqliteStore({ path });
      try {
        await expectUpgraded(sqliteJobStore(store));
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('postgres', async () => {
    const db = await freshDatabase();
    try {
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        await migratePostgres(pool, POSTGRES_MIGRATIONS.filter((m) => m.version <= 3));
        await pool.query(seed);
      } finally {
        await pool.end();
      }
      const store = await openPostgresStore({ url: db.url, max: 2 });
      try {
        await expectUpgraded(postgresJobStore(store));
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });
});

