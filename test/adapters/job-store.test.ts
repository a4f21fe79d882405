/**
 * One contract for both JobStore adapters (SQLite, PostgreSQL): jobs and
 * items, claims and leases, billing each item at most once (also with two
 * store instances finishing the same item together), deliveries and
 * webhook secrets (rotation with a grace period, and the migration that
 * added it keeping a version-2 database's secrets); research jobs (one item,
 * a report of a megabyte or two, billed once however often it is finished)
 * and the progress a job's holder records while it runs.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Effect } from 'effect';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../core/accounts.js';
import { PROGRESS_MAX_BYTES, type FinishItem, type JobStore } from '../../core/jobs.js';
import type { AccountStore } from '../../core/ports.js';
import { migratePostgres, openPostgresStore } from '../../adapters/store/postgres/index.js';
import { postgresJobStore } from '../../adapters/store/postgres/jobs.js';
import { POSTGRES_MIGRATIONS } from '../../adapters/store/postgres/migrations.js';
import { migrateSqlite, openSqliteStore } from '../../adapters/store/sqlite/index.js';
import { sqliteJobStore } from '../../adapters/store/sqlite/jobs.js';
import { SQLITE_MIGRATIONS } from '../../adapters/store/sqlite/migrations.js';
import { postgresHarness, sqliteHarness, type Opened } from '../support/job-stores.js';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';


const run = <A, E>(e: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(e);

const T0 = Date.UTC(2025, 0, 15, 12);
const MONTH = 31 * 86_400_000;
const LEASE = 30_000;

describe.each([sqliteHarness(), postgresHarness()])('JobStore contract: $name', (h) => {
  let main: Opened;
  let accounts: AccountStore;
  let jobs: JobStore;
  /** Each test's jobs are created later than the previous test's, so claim order is predictable: claim drains. */
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

  const newJob = async (accountId: string, urls = ['https://a.test/1', 'https://a.test/2', 'https://a.test/3']) =>
    run(jobs.createJob({ id: randomUUID(), accountId, request: { urls, formats: ['markdown'] }, urls, callbackUrl: 'http://127.0.0.1:9/hook', pricePerUrl: 1, now: tick() }));

  /** Claim every job left over by earlier tests so each test starts with an empty queue. */
  const drain = async () => {
    for (;;) {
      const c = await run(jobs.claimJob('drain', clock + 10 * LEASE, LEASE));
      if (c === undefined) return;
      await run(jobs.completeJob(c.jobId, 'drain', clock, 'completed'));
    }
  };

  const finish = (jobId: string, idx: number, over: Partial<FinishItem> = {}): FinishItem => ({
    jobId, idx, workerId: 'w1', success: true, attempts: 1, result: { markdown: `# ${idx}` }, error: null,
    credits: 1, ledgerRequestId: `${jobId}:${idx}`, now: clock, ...over,
  });

  it('creates a job with one pending item per URL, visible to its own account only', async () => {
    const a = await newAccount(10);
    const b = await newAccount(10);
    const job = await newJob(a.id);
    expect(job).toMatchObject({ accountId: a.id, status: 'queued', total: 3, pricePerUrl: 1, callbackUrl: 'http://127.0.0.1:9/hook', workerId: null, finishedAt: null });
    expect(job.request).toEqual({ urls: ['https://a.test/1', 'https://a.test/2', 'https://a.test/3'], formats: ['markdown'] });
    const view = await run(jobs.getJob(job.id, a.id));
    expect(view?.items).toEqual([
      { idx: 0, url: 'https://a.test/1', status: 'pending', attempts: 0, result: null, error: null },
      { idx: 1, url: 'https://a.test/2', status: 'pending', attempts: 0, result: null, error: null },
      { idx: 2, url: 'https://a.test/3', status: 'pending', attempts: 0, result: null, error: null },
    ]);
    expect(view?.deliveries).toEqual([]);
    expect(await run(jobs.getJob(job.id, b.id))).toBeUndefined();
    expect(await run(jobs.getJob('nope', a.id))).toBeUndefined();
  });

  it('claims the oldest queued job first; an expired lease lets another worker take over', async () => {
    await drain();
    const a = await newAccount(10);
    const first = await newJob(a.id);
    const second = await newJob(a.id);
    const now = tick();
    expect(await run(jobs.claimJob('w1', now, LEASE))).toEqual({ jobId: first.id, accountId: a.id });
    expect(await run(jobs.claimJob('w2', now, LEASE))).toEqual({ jobId: second.id, accountId: a.id });
    expect(await run(jobs.claimJob('w3', now, LEASE))).toBeUndefined();
    const view = await run(jobs.getJob(first.id, a.id));
    expect(view).toMatchObject({ status: 'running', workerId: 'w1', leaseUntil: now + LEASE, startedAt: now });
    // w1 renews; w2 does not and "crashes".
    expect(await run(jobs.renewLease(first.id, 'w1', now + 3 * LEASE))).toBe(true);
    expect(await run(jobs.claimJob('w3', now + LEASE - 1, LEASE))).toBeUndefined();
    expect(await run(jobs.claimJob('w3', now + LEASE, LEASE))).toEqual({ jobId: second.id, accountId: a.id });
    // The old holder cannot renew or complete it any more.
    expect(await run(jobs.renewLease(second.id, 'w2', now + 5 * LEASE))).toBe(false);
    expect(await run(jobs.completeJob(second.id, 'w2', now, 'completed'))).toBe(false);
    expect((await run(jobs.getJob(second.id, a.id)))?.startedAt).toBe(now);
    await run(jobs.completeJob(first.id, 'w1', now, 'completed'));
    await run(jobs.completeJob(second.id, 'w3', now, 'completed'));
  });

  it('completes (or fails) a job only for its current worker', async () => {
    await drain();
    const a = await newAccount(10);
    const job = await newJob(a.id);
    const c = await run(jobs.claimJob('w1', tick(), LEASE));
    expect(c).toEqual({ jobId: job.id, accountId: a.id });
    expect(await run(jobs.completeJob(job.id, 'other', clock, 'completed'))).toBe(false);
    expect(await run(jobs.completeJob(job.id, 'w1', clock, 'failed'))).toBe(true);
    expect(await run(jobs.getJob(job.id, a.id))).toMatchObject({ status: 'failed', finishedAt: clock, workerId: null, leaseUntil: null });
    expect(await run(jobs.completeJob(job.id, 'w1', clock, 'completed'))).toBe(false);
    // Finished jobs are never claimed again, even long after.
    expect(await run(jobs.claimJob('w9', clock + 100 * LEASE, LEASE))).toBeUndefined();
  });

  it('claims one named job only when it is queued or its lease lapsed', async () => {
    await drain();
    const a = await newAccount(10);
    const older = await newJob(a.id);
    const job = await newJob(a.id);
    const now = tick();
    expect(await run(jobs.claimJob('w1', now, LEASE, job.id))).toEqual({ jobId: job.id, accountId: a.id });
    expect(await run(jobs.runningJobs())).toEqual([{ jobId: job.id, workerId: 'w1' }]);
    expect(await run(jobs.claimJob('w2', now, LEASE, job.id))).toBeUndefined();
    expect(await run(jobs.claimJob('w2', now, LEASE, 'no-such-job'))).toBeUndefined();
    expect(await run(jobs.claimJob('w2', now + LEASE, LEASE, job.id))).toEqual({ jobId: job.id, accountId: a.id });
    expect(await run(jobs.completeJob(job.id, 'w2', now + LEASE, 'completed'))).toBe(true);
    expect(await run(jobs.claimJob('w3', now + 10 * LEASE, LEASE, job.id))).toBeUndefined();
    // The older job was left alone by the named claims.
    expect(await run(jobs.getJob(older.id, a.id))).toMatchObject({ status: 'queued' });
    await drain();
  });

  it('creates the delivery with the job\'s end, in the same transaction, and only for its worker', async () => {
    await drain();
    const a = await newAccount(10);
    const job = await newJob(a.id);
    const now = tick();
    await run(jobs.claimJob('w1', now, LEASE, job.id));
    const d = { id: randomUUID(), event: 'bulk_scrape.completed', nextAttemptAt: now };
    expect(await run(jobs.completeJob(job.id, 'intruder', now, 'completed', d))).toBe(false);
    expect((await run(jobs.getJob(job.id, a.id)))?.deliveries).toEqual([]);
    expect(await run(jobs.completeJob(job.id, 'w1', now, 'completed', d))).toBe(true);
    const view = await run(jobs.getJob(job.id, a.id));
    expect(view?.status).toBe('completed');
    expect(view?.deliveries).toEqual([{ id: d.id, event: 'bulk_scrape.completed', status: 'pending', attempts: 0, nextAttemptAt: now, createdAt: now, history: [] }]);
    const due = await run(jobs.dueDeliveries(now, 10));
    expect(due.map((x) => x.id)).toContain(d.id);
    await run(jobs.recordAttempt({ deliveryId: d.id, attempt: 1, ok: true, status: 200, error: null, attemptedAt: now, nextAttemptAt: null }));
  });

  it('gives an account one webhook secret however many callers ensure it at once', async () => {
    const a = await newAccount(1);
    const got = await Promise.all(['whsec_a', 'whsec_b', 'whsec_c'].map((c) => run(jobs.ensureWebhookSecret(a.id, c, tick()))));
    expect(new Set(got).size).toBe(1);
    expect(await run(jobs.webhookSecret(a.id))).toBe(got[0]);
    expect(await run(jobs.signingSecrets(a.id, tick()))).toEqual([got[0]]);
    expect(await run(jobs.ensureWebhookSecret(a.id, 'whsec_later', tick()))).toBe(got[0]);
  });

  it('rotates the webhook secret with a grace period: the old one signs alongside the new one until previousValidUntil', async () => {
    const a = await newAccount(0);
    const t0 = T0 + 5_000;
    expect(await run(jobs.webhookSecretState(a.id, t0))).toBeUndefined();
    expect(await run(jobs.signingSecrets(a.id, t0))).toEqual([]);
    await run(jobs.ensureWebhookSecret(a.id, 'whsec_old', t0));
    expect(await run(jobs.webhookSecretState(a.id, t0))).toEqual({ secret: 'whsec_old', createdAt: t0, previousExpiresAt: null });

    const t1 = t0 + 60_000;
    const until = t1 + 86_400_000;
    expect(await run(jobs.rotateWebhookSecret(a.id, 'whsec_new', t1, until))).toEqual({ secret: 'whsec_new', createdAt: t1, previousExpiresAt: until });
    expect(await run(jobs.webhookSecret(a.id))).toBe('whsec_new');
    // ensure never replaces a rotated secret.
    expect(await run(jobs.ensureWebhookSecret(a.id, 'whsec_other', t1))).toBe('whsec_new');
    expect(await run(jobs.signingSecrets(a.id, t1))).toEqual(['whsec_new', 'whsec_old']);
    expect(await run(jobs.signingSecrets(a.id, until - 1))).toEqual(['whsec_new', 'whsec_old']);
    expect(await run(jobs.webhookSecretState(a.id, until - 1))).toEqual({ secret: 'whsec_new', createdAt: t1, previousExpiresAt: until });
    // At previousValidUntil the old secret stops signing, and is no longer reported.
    expect(await run(jobs.signingSecrets(a.id, until))).toEqual(['whsec_new']);
    expect(await run(jobs.webhookSecretState(a.id, until))).toEqual({ secret: 'whsec_new', createdAt: t1, previousExpiresAt: null });

    // Rotating again during the grace period keeps only the secret it replaces.
    const t2 = t1 + 1_000;
    await run(jobs.rotateWebhookSecret(a.id, 'whsec_third', t2, t2 + 5_000));
    expect(await run(jobs.signingSecrets(a.id, t2))).toEqual(['whsec_third', 'whsec_new']);
    expect(await run(jobs.signingSecrets(a.id, t2 + 5_000))).toEqual(['whsec_third']);

    // No grace (omitted, or not after now): the replaced secret is dropped at once.
    const t3 = t2 + 2_000;
    expect(await run(jobs.rotateWebhookSecret(a.id, 'whsec_fourth', t3))).toEqual({ secret: 'whsec_fourth', createdAt: t3, previousExpiresAt: null });
    expect(await run(jobs.signingSecrets(a.id, t3))).toEqual(['whsec_fourth']);
    await run(jobs.rotateWebhookSecret(a.id, 'whsec_fifth', t3 + 1, t3 + 1));
    expect(await run(jobs.signingSecrets(a.id, t3 + 1))).toEqual(['whsec_fifth']);
    expect(await run(jobs.webhookSecretState(a.id, t3 + 1))).toEqual({ secret: 'whsec_fifth', createdAt: t3 + 1, previousExpiresAt: null });

    // An account without a secret: rotating makes the first one, with nothing to keep.
    const b = await newAccount(0);
    expect(await run(jobs.rotateWebhookSecret(b.id, 'whsec_first', t3, t3 + 10_000))).toEqual({ secret: 'whsec_first', createdAt: t3, previousExpiresAt: null });
    expect(await run(jobs.signingSecrets(b.id, t3))).toEqual(['whsec_first']);
    // Another account's secrets are untouched.
    expect(await run(jobs.signingSecrets(a.id, t3 + 1))).toEqual(['whsec_fifth']);
  });

  it('two rotations at once: one wins, and the other becomes its previous secret (nothing lost in between)', async () => {
    const a = await newAccount(0);
    const now = T0 + 10_000;
    await run(jobs.ensureWebhookSecret(a.id, 'whsec_base', now));
    const other = await h.open();
    try {
      await Promise.all([
        run(jobs.rotateWebhookSecret(a.id, 'whsec_x', now + 1, now + 60_000)),
        run(other.jobs.rotateWebhookSecret(a.id, 'whsec_y', now + 1, now + 60_000)),
      ]);
    } finally {
      await other.close();
    }
    const got = await run(jobs.signingSecrets(a.id, now + 2));
    expect([...got].sort()).toEqual(['whsec_x', 'whsec_y']);
  });

  it('bills an item once even when it is finished twice', async () => {
    const a = await newAccount(10);
    const job = await newJob(a.id);
    const r1 = await run(jobs.finishItem(finish(job.id, 0)));
    expect(r1).toEqual({ charged: 1, available: 9, alreadyDone: false });
    const r2 = await run(jobs.finishItem(finish(job.id, 0, { result: { markdown: 'other' } })));
    expect(r2).toEqual({ charged: 0, available: 9, alreadyDone: true });
    const failed = await run(jobs.finishItem(finish(job.id, 1, { success: false, result: null, error: { code: 'TARGET_TIMEOUT' }, attempts: 3 })));
    expect(failed).toEqual({ charged: 0, available: 9, alreadyDone: false });
    const view = await run(jobs.getJob(job.id, a.id));
    expect(view?.items.slice(0, 2)).toEqual([
      { idx: 0, url: 'https://a.test/1', status: 'completed', attempts: 1, result: { markdown: '# 0' }, error: null },
      { idx: 1, url: 'https://a.test/2', status: 'failed', attempts: 3, result: null, error: { code: 'TARGET_TIMEOUT' } },
    ]);
    expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 9, held: 0 });
    const ledger = await run(accounts.ledger(a.id, 10));
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ operation: 'scrape_bulk', credits: 1, requestId: `${job.id}:0` });
    expect(await run(accounts.usage(a.id, a.periodStart))).toEqual([{ operation: 'scrape_bulk', credits: 1, requests: 1 }]);
  });

  it('two store instances finishing the same items concurrently charge each once', async () => {
    const other = await h.open();
    try {
      const a = await newAccount(100);
      const urls = Array.from({ length: 20 }, (_, i) => `https://b.test/${i}`);
      const job = await newJob(a.id, urls);
      const results = await Promise.all(
        urls.flatMap((_, idx) => [
          run(jobs.finishItem(finish(job.id, idx, { workerId: 'w1' }))),
          run(other.jobs.finishItem(finish(job.id, idx, { workerId: 'w2' }))),
        ]),
      );
      expect(results.reduce((n, r) => n + r.charged, 0)).toBe(20);
      expect(results.filter((r) => r.alreadyDone)).toHaveLength(20);
      expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 80, held: 0 });
      expect(await run(accounts.ledger(a.id, 100))).toHaveLength(20);
      expect(await run(accounts.usage(a.id, a.periodStart))).toEqual([{ operation: 'scrape_bulk', credits: 20, requests: 20 }]);
    } finally {
      await other.close();
    }
  });

  it('refuses the charge when credits run out: the item fails with NO_CREDITS and nothing is charged', async () => {
    const a = await newAccount(2);
    const job = await newJob(a.id);
    // A hold of another request counts against what a bulk item may spend.
    const hold = await run(accounts.reserve({ id: randomUUID(), accountId: a.id, operation: 'search', credits: 1, requestId: 'r', now: T0, expiresAt: T0 + MONTH }));
    expect(hold.ok).toBe(true);
    expect(await run(jobs.finishItem(finish(job.id, 0)))).toEqual({ charged: 1, available: 0, alreadyDone: false });
    expect(await run(jobs.finishItem(finish(job.id, 1)))).toEqual({ charged: 0, available: 0, alreadyDone: false });
    const view = await run(jobs.getJob(job.id, a.id));
    expect(view?.items[1]).toMatchObject({ status: 'failed', result: null, error: { code: 'NO_CREDITS' } });
    expect(await run(jobs.finishItem(finish(job.id, 1)))).toMatchObject({ charged: 0, alreadyDone: true });
    expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 1, held: 1 });
    expect(await run(accounts.ledger(a.id, 10))).toHaveLength(1);
  });

  it('claims due deliveries once, records attempts, retries and gives up', async () => {
    const a = await newAccount(1);
    const job = await newJob(a.id);
    const now = tick();
    const d1 = randomUUID();
    const d2 = randomUUID();
    await run(jobs.createDelivery({ id: d1, jobId: job.id, event: 'bulk_scrape.completed', nextAttemptAt: now, now }));
    await run(jobs.createDelivery({ id: d2, jobId: job.id, event: 'bulk_scrape.completed', nextAttemptAt: now + 5000, now: now + 1 }));
    const due = await run(jobs.dueDeliveries(now, 10, 10_000));
    expect(due).toEqual([{ id: d1, jobId: job.id, accountId: a.id, event: 'bulk_scrape.completed', attempts: 0 }]);
    // Claimed: another worker does not get it while the lease runs.
    expect(await run(jobs.dueDeliveries(now + 5000, 10, 10_000))).toEqual([
      { id: d2, jobId: job.id, accountId: a.id, event: 'bulk_scrape.completed', attempts: 0 },
    ]);
    expect(await run(jobs.dueDeliveries(now + 9_999, 10, 10_000))).toEqual([]);
    await run(jobs.recordAttempt({ deliveryId: d1, attempt: 1, ok: false, status: 500, error: 'HTTP 500', attemptedAt: now, nextAttemptAt: now + 2000 }));
    await run(jobs.recordAttempt({ deliveryId: d2, attempt: 1, ok: true, status: 204, error: null, attemptedAt: now + 5000, nextAttemptAt: null }));
    expect(await run(jobs.dueDeliveries(now + 1999, 10))).toEqual([]);
    expect((await run(jobs.dueDeliveries(now + 2000, 10))).map((d) => [d.id, d.attempts])).toEqual([[d1, 1]]);
    await run(jobs.recordAttempt({ deliveryId: d1, attempt: 2, ok: false, status: null, error: 'ECONNREFUSED', attemptedAt: now + 2000, nextAttemptAt: null }));
    expect(await run(jobs.dueDeliveries(now + 100 * LEASE, 10))).toEqual([]);
    const view = await run(jobs.getJob(job.id, a.id));
    expect(view?.deliveries).toEqual([
      {
        id: d1, event: 'bulk_scrape.completed', status: 'failed', attempts: 2, nextAttemptAt: null, createdAt: now,
        history: [
          { attempt: 1, ok: false, responseStatus: 500, error: 'HTTP 500', attemptedAt: now, nextAttemptAt: now + 2000 },
          { attempt: 2, ok: false, responseStatus: null, error: 'ECONNREFUSED', attemptedAt: now + 2000, nextAttemptAt: null },
        ],
      },
      {
        id: d2, event: 'bulk_scrape.completed', status: 'delivered', attempts: 1, nextAttemptAt: null, createdAt: now + 1,
        history: [{ attempt: 1, ok: true, responseStatus: 204, error: null, attemptedAt: now + 5000, nextAttemptAt: null }],
      },
    ]);
  });

  it('a delivery whose sender died (lease lapsed) is due again', async () => {
    const a = await newAccount(1);
    const job = await newJob(a.id);
    const now = tick();
    const d = randomUUID();
    await run(jobs.createDelivery({ id: d, jobId: job.id, event: 'bulk_scrape.failed', nextAttemptAt: now, now }));
    expect(await run(jobs.dueDeliveries(now, 10, 1000))).toHaveLength(1);
    expect(await run(jobs.dueDeliveries(now + 999, 10, 1000))).toEqual([]);
    expect((await run(jobs.dueDeliveries(now + 1000, 10, 1000))).map((x) => x.id)).toEqual([d]);
    await run(jobs.recordAttempt({ deliveryId: d, attempt: 1, ok: true, status: 200, error: null, attemptedAt: now + 1000, nextAttemptAt: null }));
  });

  it('concurrent claimers (two instances) never get the same job or delivery', async () => {
    await drain();
    const other = await h.open();
    try {
      const a = await newAccount(1);
      const ids = new Set<string>();
      for (let i = 0; i < 10; i++) ids.add((await newJob(a.id)).id);
      const now = tick();
      const deliveries = new Set<string>();
      const job = [...ids][0]!;
      for (let i = 0; i < 10; i++) {
        const id = randomUUID();
        deliveries.add(id);
        await run(jobs.createDelivery({ id, jobId: job, event: 'bulk_scrape.completed', nextAttemptAt: now, now }));
      }
      const claims = await Promise.all(Array.from({ length: 14 }, (_, i) => run((i % 2 ? other : main).jobs.claimJob(`w${i}`, now, LEASE))));
      const got = claims.filter((c) => c !== undefined).map((c) => c.jobId);
      expect(got.sort()).toEqual([...ids].sort());
      const sends = await Promise.all(Array.from({ length: 6 }, (_, i) => run((i % 2 ? other : main).jobs.dueDeliveries(now, 3))));
      const sent = sends.flat().map((d) => d.id);
      expect(sent.sort()).toEqual([...deliveries].sort());
      for (const id of sent) await run(jobs.recordAttempt({ deliveryId: id, attempt: 1, ok: true, status: 200, error: null, attemptedAt: now, nextAttemptAt: null }));
      for (const [i, c] of claims.entries()) if (c !== undefined) expect(await run(jobs.completeJob(c.jobId, `w${i}`, now, 'completed'))).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('stores and rotates the webhook secret', async () => {
    const a = await newAccount(0);
    expect(await run(jobs.webhookSecret(a.id))).toBeUndefined();
    await run(jobs.rotateWebhookSecret(a.id, 'whsec_one', T0));
    expect(await run(jobs.webhookSecret(a.id))).toBe('whsec_one');
    await run(jobs.rotateWebhookSecret(a.id, 'whsec_two', T0 + 1));
    expect(await run(jobs.webhookSecret(a.id))).toBe('whsec_two');
  });

  const newResearch = (accountId: string, pricePerUrl = 5) =>
    run(jobs.createJob({
      id: `research_${randomUUID()}`, kind: 'research', accountId, request: { research_query: 'what changed?' }, urls: ['research:'],
      callbackUrl: 'http://127.0.0.1:9/hook', pricePerUrl, now: tick(),
    }));

  /** A report of about `bytes` of JSON, with text beyond ASCII (accents, CJK, emoji as surrogate pairs, quotes and backslashes). */
  const bigReport = (bytes: number) => {
    const sources = [];
    let size = 0;
    for (let i = 0; size < bytes; i++) {
      const text = `Source ${i}: café 東京 😀 "quoted" back\\slash ${'lorem ipsum dolor sit amet '.repeat(30)}`;
      sources.push({ n: i, url: `https://s.test/${i}`, text, score: i / 7 });
      size += text.length + 60;
    }
    return { title: 'Report', summary: 'x'.repeat(1000), sources };
  };

  it('keeps research jobs apart by kind, in getJob and in claims', async () => {
    await drain();
    const a = await newAccount(10);
    const job = await newResearch(a.id);
    expect(job).toMatchObject({ kind: 'research', status: 'queued', total: 1, pricePerUrl: 5, progress: null, progressAt: null });
    expect(await run(jobs.getJob(job.id, a.id))).toBeUndefined();
    expect(await run(jobs.getJob(job.id, a.id, { kind: 'crawl' }))).toBeUndefined();
    const view = await run(jobs.getJob(job.id, a.id, { kind: 'research' }));
    expect(view).toMatchObject({ kind: 'research', request: { research_query: 'what changed?' }, progress: null });
    expect(view?.items).toEqual([{ idx: 0, url: 'research:', status: 'pending', attempts: 0, result: null, error: null }]);
    expect((await run(jobs.getJob(job.id, a.id, { kind: 'any' })))?.kind).toBe('research');
    const now = tick();
    // A process without a research executor neither finds it nor takes it by name.
    expect(await run(jobs.claimJob('w1', now, LEASE, undefined, ['bulk_scrape', 'crawl']))).toBeUndefined();
    expect(await run(jobs.claimJob('w1', now, LEASE, job.id, ['bulk_scrape', 'crawl']))).toBeUndefined();
    expect(await run(jobs.claimJob('w1', now, LEASE, undefined, ['research']))).toEqual({ jobId: job.id, accountId: a.id });
    expect(await run(jobs.completeJob(job.id, 'w1', now, 'completed'))).toBe(true);
  });

  it('records progress only for the worker holding the running job; the last one stays after the end', async () => {
    await drain();
    const a = await newAccount(10);
    const b = await newAccount(10);
    const job = await newResearch(a.id);
    // Queued: nobody holds it yet.
    expect(await run(jobs.setProgress(job.id, 'w1', { stage: 'plan' }, tick()))).toBe(false);
    const t1 = tick();
    await run(jobs.claimJob('w1', t1, LEASE, job.id));
    expect(await run(jobs.setProgress(job.id, 'w1', { stage: 'plan', found: 0 }, t1))).toBe(true);
    const t2 = tick();
    const gather = { stage: 'gather', found: 12, read: 3, sources: 2, note: 'café 😀' };
    expect(await run(jobs.setProgress(job.id, 'w1', gather, t2))).toBe(true);
    expect(await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false }))).toMatchObject({ status: 'running', progress: gather, progressAt: t2 });
    // Another account does not see it; another worker cannot write it.
    expect(await run(jobs.getJob(job.id, b.id, { kind: 'research' }))).toBeUndefined();
    expect(await run(jobs.setProgress(job.id, 'w2', { stage: 'hijack' }, tick()))).toBe(false);
    expect(await run(jobs.setProgress('no-such-job', 'w1', { stage: 'x' }, tick()))).toBe(false);
    // Seen from another connection (another process: `scour worker` writes, the API reads).
    const other = await h.open();
    try {
      expect(await run(other.jobs.getJob(job.id, a.id, { kind: 'research', items: false }))).toMatchObject({ progress: gather, progressAt: t2 });
    } finally {
      await other.close();
    }
    // Too large: refused, nothing written. Not JSON (a cycle, a BigInt): refused too.
    expect(await run(jobs.setProgress(job.id, 'w1', { pad: 'x'.repeat(PROGRESS_MAX_BYTES) }, tick()))).toBe(false);
    expect(await run(jobs.setProgress(job.id, 'w1', { pad: 'é'.repeat(PROGRESS_MAX_BYTES / 2) }, tick()))).toBe(false);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(await run(jobs.setProgress(job.id, 'w1', cycle, tick()))).toBe(false);
    expect(await run(jobs.setProgress(job.id, 'w1', { n: 1n }, tick()))).toBe(false);
    expect((await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false })))?.progress).toEqual(gather);
    // Just under the limit is kept; any JSON value is (a string, an array).
    const t3 = tick();
    const big = { pad: 'x'.repeat(PROGRESS_MAX_BYTES - 20) };
    expect(await run(jobs.setProgress(job.id, 'w1', big, t3))).toBe(true);
    expect((await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false })))?.progress).toEqual(big);
    expect(await run(jobs.setProgress(job.id, 'w1', ['report', 1], tick()))).toBe(true);
    expect((await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false })))?.progress).toEqual(['report', 1]);
    // null clears it.
    expect(await run(jobs.setProgress(job.id, 'w1', null, tick()))).toBe(true);
    expect(await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false }))).toMatchObject({ progress: null, progressAt: null });
    const last = { stage: 'export', found: 12, read: 12, sources: 9 };
    const t4 = tick();
    expect(await run(jobs.setProgress(job.id, 'w1', last, t4))).toBe(true);
    expect(await run(jobs.completeJob(job.id, 'w1', tick(), 'completed'))).toBe(true);
    // Finished: nobody writes it any more, and it keeps its final state.
    expect(await run(jobs.setProgress(job.id, 'w1', { stage: 'late' }, tick()))).toBe(false);
    expect(await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false }))).toMatchObject({ status: 'completed', progress: last, progressAt: t4 });
  });

  it('a job taken over after its lease lapsed: the old holder\'s progress is refused, the new one\'s kept', async () => {
    await drain();
    const a = await newAccount(10);
    const job = await newResearch(a.id);
    const now = tick();
    await run(jobs.claimJob('w1', now, LEASE, job.id));
    expect(await run(jobs.setProgress(job.id, 'w1', { stage: 'gather' }, now))).toBe(true);
    expect(await run(jobs.claimJob('w2', now + LEASE, LEASE, job.id))).toEqual({ jobId: job.id, accountId: a.id });
    // Resumed: the last progress is there for the new holder (and the status endpoint) until it writes its own.
    expect((await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false })))?.progress).toEqual({ stage: 'gather' });
    expect(await run(jobs.setProgress(job.id, 'w1', { stage: 'read' }, now + LEASE))).toBe(false);
    expect(await run(jobs.setProgress(job.id, 'w2', { stage: 'plan' }, now + LEASE))).toBe(true);
    expect(await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false }))).toMatchObject({ workerId: 'w2', progress: { stage: 'plan' }, progressAt: now + LEASE });
    expect(await run(jobs.completeJob(job.id, 'w2', now + LEASE, 'completed'))).toBe(true);
  });

  it('a research job\'s one item: a report of about 1.5 MB stored whole, charged once when two workers finish it', async () => {
    await drain();
    const other = await h.open();
    try {
      const a = await newAccount(100);
      const job = await newResearch(a.id, 7);
      const report = bigReport(1_500_000);
      expect(JSON.stringify(report).length).toBeGreaterThan(1_500_000);
      const now = tick();
      // w1 runs it and is killed (-9) after finishing, before closing the job; w2 resumes it once the lease lapses.
      await run(jobs.claimJob('w1', now, LEASE, job.id));
      expect(await run(jobs.claimJob('w2', now + LEASE, LEASE, job.id))).toEqual({ jobId: job.id, accountId: a.id });
      const research = (workerId: string): FinishItem => finish(job.id, 0, { workerId, result: report, credits: 7, operation: 'research', ledgerRequestId: `${job.id}:0` });
      const [r1, r2] = await Promise.all([run(jobs.finishItem(research('w1'))), run(other.jobs.finishItem(research('w2')))]);
      expect(r1.charged + r2.charged).toBe(7);
      expect([r1.alreadyDone, r2.alreadyDone].sort()).toEqual([false, true]);
      // Once more, as a third resume would: nothing.
      expect(await run(jobs.finishItem(research('w3')))).toEqual({ charged: 0, available: 93, alreadyDone: true });
      expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 93, held: 0 });
      const ledger = await run(accounts.ledger(a.id, 10));
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ operation: 'research', credits: 7, requestId: `${job.id}:0` });
      expect(await run(accounts.usage(a.id, a.periodStart))).toEqual([{ operation: 'research', credits: 7, requests: 1 }]);
      const view = await run(other.jobs.getJob(job.id, a.id, { kind: 'research' }));
      expect(view?.counts).toMatchObject({ pending: 0, completed: 1 });
      expect(view?.items[0]?.status).toBe('completed');
      expect(view?.items[0]?.result).toEqual(report);
      expect(await run(jobs.completeJob(job.id, 'w2', tick(), 'completed'))).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('stores a result holding NUL and lone surrogates (PostgreSQL\'s jsonb refuses them: dropped / U+FFFD there)', async () => {
    const a = await newAccount(10);
    const job = await newResearch(a.id, 1);
    const result = { text: 'a\u0000b', lone: 'x\ud800y\udfffz', pair: '😀', literal: 'back\\u0000slash \\ud800', ['k\u0000ey']: 1 };
    expect(await run(jobs.finishItem(finish(job.id, 0, { result, operation: 'research' })))).toMatchObject({ charged: 1, alreadyDone: false });
    const stored = (await run(jobs.getJob(job.id, a.id, { kind: 'research' })))?.items[0]?.result;
    expect(stored).toEqual(h.name === 'postgres'
      ? { text: 'ab', lone: 'x\ufffdy\ufffdz', pair: '😀', literal: 'back\\u0000slash \\ud800', key: 1 }
      : result);
  });

  it('hands back completed Effects on SQLite (no fiber on the request path)', async () => {
    if (h.name !== 'sqlite') return;
    const a = await newAccount(0);
    const e = jobs.webhookSecret(a.id);
    expect(Effect.isEffect(e)).toBe(true);
    expect((e as unknown as { _tag?: string })._tag).toBe('Success');
  });
});

describe('webhook-secret-rotation migration (version 3) keeps the secrets of a version-2 database', () => {
  const ROW = { account: 'acct_v2', secret: 'whsec_from_v2', createdAt: T0 };
  const seed = `INSERT INTO accounts (id, name, plan, balance, held, period_start, period_end, created_at)
                VALUES ('${ROW.account}', NULL, 'free', 0, 0, ${T0}, ${T0 + MONTH}, ${T0});
                INSERT INTO account_webhook_secrets (account_id, secret, created_at) VALUES ('${ROW.account}', '${ROW.secret}', ${ROW.createdAt});`;

  const expectUpgraded = async (jobs: JobStore) => {
    const now = T0 + 1000;
    expect(await run(jobs.webhookSecretState(ROW.account, now))).toEqual({ secret: ROW.secret, createdAt: ROW.createdAt, previousExpiresAt: null });
    expect(await run(jobs.signingSecrets(ROW.account, now))).toEqual([ROW.secret]);
    await run(jobs.rotateWebhookSecret(ROW.account, 'whsec_after', now, now + 1000));
    expect(await run(jobs.signingSecrets(ROW.account, now))).toEqual(['whsec_after', ROW.secret]);
  };

  it('sqlite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scour-jobs-v2-'));
    try {
      const path = join(dir, 'scour.db');
      const db = new Database(path);
      migrateSqlite(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 2));
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
    const database = `scour_test_${randomBytes(6).toString('hex')}`;
    const adminClient = async (text: string) => {
      const c = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    };
    await adminClient(`CREATE DATABASE ${database}`);
    try {
      const url = `postgres://postgres@127.0.0.1:5432/${database}`;
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await migratePostgres(pool, POSTGRES_MIGRATIONS.filter((m) => m.version <= 2));
        await pool.query(seed);
      } finally {
        await pool.end();
      }
      const store = await openPostgresStore({ url, max: 2 });
      try {
        await expectUpgraded(postgresJobStore(store));
      } finally {
        await store.close();
      }
    } finally {
      await adminClient(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
  });
});

describe('job-progress migration (version 5) keeps a version-4 database\'s jobs, with no progress', () => {
  const JOB = 'bulk_v4';
  const seed = `INSERT INTO accounts (id, name, plan, balance, held, period_start, period_end, created_at)
                VALUES ('acct_v4', NULL, 'free', 10, 0, ${T0}, ${T0 + MONTH}, ${T0});
                INSERT INTO bulk_jobs (id, kind, account_id, status, request, callback_url, price_per_url, total, created_at)
                VALUES ('${JOB}', 'crawl', 'acct_v4', 'queued', '{"url":"https://v4.test/"}', NULL, 1, 1, ${T0});
                INSERT INTO bulk_items (job_id, idx, url, status, depth) VALUES ('${JOB}', 0, 'https://v4.test/', 'pending', 0);`;

  const expectUpgraded = async (jobs: JobStore) => {
    expect(await run(jobs.getJob(JOB, 'acct_v4', { kind: 'crawl' }))).toMatchObject({ kind: 'crawl', status: 'queued', total: 1, progress: null, progressAt: null });
    await run(jobs.claimJob('w1', T0 + 1, LEASE, JOB));
    expect(await run(jobs.setProgress(JOB, 'w1', { pages: 0 }, T0 + 2))).toBe(true);
    expect(await run(jobs.getJob(JOB, 'acct_v4', { kind: 'crawl', items: false }))).toMatchObject({ progress: { pages: 0 }, progressAt: T0 + 2 });
  };

  it('sqlite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scour-jobs-v4-'));
    try {
      const path = join(dir, 'scour.db');
      const db = new Database(path);
      migrateSqlite(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 4));
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
    const database = `scour_test_${randomBytes(6).toString('hex')}`;
    const admin = async (text: string) => {
      const c = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    };
    await admin(`CREATE DATABASE ${database}`);
    try {
      const url = `postgres://postgres@127.0.0.1:5432/${database}`;
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await migratePostgres(pool, POSTGRES_MIGRATIONS.filter((m) => m.version <= 4));
        await pool.query(seed);
      } finally {
        await pool.end();
      }
      const store = await openPostgresStore({ url, max: 2 });
      try {
        await expectUpgraded(postgresJobStore(store));
      } finally {
        await store.close();
      }
    } finally {
      await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
  });
});
