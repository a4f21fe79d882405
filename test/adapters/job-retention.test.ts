/**
 * Retention of finished jobs (SCOUR_JOB_RETENTION), on SQLite and
 * PostgreSQL: purgeFinished deletes jobs finished before the cut-off with
 * their items, deliveries and attempts, in batches of the limit, and keeps
 * jobs still running or queued, jobs finished after the cut-off, and jobs
 * whose webhook is not settled yet; the account's ledger (its billing
 * history) is kept. And over HTTP: a server whose retention has passed
 * answers 404 for the job's status URL.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobStore } from '../../core/jobs.js';
import type { AccountStore } from '../../core/ports.js';
import { postgresHarness, sqliteHarness, type Harness, type Opened } from '../support/job-stores.js';
import { call } from '../support/http.js';
import { startScour } from '../support/server.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e);
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 10);

describe.each([sqliteHarness(), postgresHarness()])('purgeFinished on $name', (h: Harness) => {
  let o: Opened;
  let jobs: JobStore;
  let accounts: AccountStore;
  let accountId: string;

  beforeAll(async () => {
    await h.setup();
    o = await h.open();
    jobs = o.jobs;
    accounts = o.accounts;
    const a = await run(accounts.createAccount({ id: randomUUID(), name: 't', plan: 'free', credits: 1000, now: T0, periodEnd: T0 + 30 * DAY }));
    accountId = a.id;
  });
  afterAll(async () => {
    await o?.close();
    await h.teardown();
  });

  /** A job of `n` items, run to its end at `finishedAt` (or left as `queued` / `running`), with a webhook in `delivery` state. */
  async function job(state: 'queued' | 'running' | 'completed' | 'failed', finishedAt: number, delivery?: 'pending' | 'delivered' | 'failed'): Promise<string> {
    const id = `bulk_${randomUUID().replaceAll('-', '')}`;
    await run(jobs.createJob({ id, accountId, request: {}, urls: ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'], callbackUrl: delivery ? 'http://127.0.0.1:9/hook' : null, pricePerUrl: 1, now: finishedAt - 1000 }));
    if (state === 'queued') return id;
    const worker = `w-${randomUUID()}`;
    const claimed = await run(jobs.claimJob(worker, finishedAt - 900, 60_000, id));
    expect(claimed?.jobId).toBe(id);
    for (const idx of [0, 1]) {
      await run(jobs.finishItem({ jobId: id, idx, workerId: worker, success: true, attempts: 1, result: { idx }, error: null, credits: 1, operation: 'bulk_scrape', ledgerRequestId: `${id}:${idx}`, now: finishedAt - 500 }));
    }
    if (state === 'running') return id;
    const d = delivery ? { id: `dlv_${randomUUID().replaceAll('-', '')}`, event: `bulk_scrape.${state}`, nextAttemptAt: finishedAt } : undefined;
    expect(await run(jobs.completeJob(id, worker, finishedAt, state, d))).toBe(true);
    if (d && delivery !== 'pending') {
      await run(jobs.recordAttempt({ deliveryId: d.id, attempt: 1, ok: delivery === 'delivered', status: delivery === 'delivered' ? 200 : 500, error: null, attemptedAt: finishedAt + 10, nextAttemptAt: null }));
    }
    return id;
  }

  const exists = async (id: string) => (await run(jobs.getJob(id, accountId, { kind: 'any' }))) !== undefined;

  it('deletes what finished before the cut-off and has settled, keeps everything else', async () => {
    const cutoff = T0 + 10 * DAY;
    const gone = [
      await job('completed', cutoff - DAY),
      await job('failed', cutoff - 2 * DAY),
      await job('completed', cutoff - DAY, 'delivered'),
      await job('failed', cutoff - DAY, 'failed'),
    ];
    const kept = [
      await job('completed', cutoff + DAY),
      await job('completed', cutoff - DAY, 'pending'),
      await job('running', cutoff - 5 * DAY),
      await job('queued', cutoff - 5 * DAY),
    ];
    const ledgerBefore = (await run(accounts.ledger(accountId, 1000))).length;
    expect(await run(jobs.purgeFinished(cutoff, 100))).toBe(gone.length);
    for (const id of gone) expect(await exists(id), id).toBe(false);
    for (const id of kept) expect(await exists(id), id).toBe(true);
    // Billing history stays.
    expect((await run(accounts.ledger(accountId, 1000))).length).toBe(ledgerBefore);
    // Nothing more to do.
    expect(await run(jobs.purgeFinished(cutoff, 100))).toBe(0);
  });

  it('deletes at most `limit` per call', async () => {
    const cutoff = T0 + 40 * DAY;
    for (let i = 0; i < 5; i++) await job('completed', cutoff - DAY);
    expect(await run(jobs.purgeFinished(cutoff, 2))).toBe(2);
    expect(await run(jobs.purgeFinished(cutoff, 2))).toBe(2);
    expect(await run(jobs.purgeFinished(cutoff, 2))).toBeGreaterThanOrEqual(1);
  });
});

describe('retention over HTTP', () => {
  it('a finished job past SCOUR_JOB_RETENTION answers 404 after the sweep; a fresh one is kept', async () => {
    const ADMIN = 'retention-admin-token-0123456789';
    const hook = await startWebhookReceiver({ secret: 'x-not-verified' });
    // Our own directory: it outlives each server.
    const dataDir = mkdtempSync(join(tmpdir(), 'scour-retention-'));
    const s = await startScour('node', { adminToken: ADMIN, allowPrivateTargets: 'loopback', jobRetentionSeconds: 86_400, webhookSchedule: [1], dataDir });
    let id = '';
    let key = '';
    try {
      const created = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 100 } });
      key = created.body.api_key as string;
      const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${key}`, body: { urls: [`${hook.url}/page`], callback_url: hook.url } });
      expect(r.status, r.text).toBe(202);
      id = r.body.job_id as string;
      await hook.waitFor(1, 15_000);
      // Settled: the delivery is recorded as delivered.
      for (let i = 0; i < 100; i++) {
        const v = await call(`${s.url}/v1/scrape/bulk/${id}`, 'GET', { auth: `Bearer ${key}` });
        if (v.body.webhook?.deliveries?.[0]?.status === 'delivered') break;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await s.stop();
    }
    const ahead = { now: () => Date.now() + 2 * DAY };
    // Two days on, with a 7-day retention: still there.
    const kept = await startScour('node', { adminToken: ADMIN, dataDir, jobRetentionSeconds: 7 * 86_400 }, { clock: ahead });
    try {
      const still = await call(`${kept.url}/v1/scrape/bulk/${id}`, 'GET', { auth: `Bearer ${key}` });
      expect(still.status, still.text).toBe(200);
    } finally {
      await kept.stop();
    }
    // Two days on, with a 1-day retention: the boot sweep deletes it.
    const later = await startScour('node', { adminToken: ADMIN, dataDir, jobRetentionSeconds: 86_400 }, { clock: ahead });
    try {
      let status = 0;
      for (let i = 0; i < 50 && status !== 404; i++) {
        status = (await call(`${later.url}/v1/scrape/bulk/${id}`, 'GET', { auth: `Bearer ${key}` })).status;
        if (status !== 404) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(404);
    } finally {
      await later.stop();
      await hook.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
