/**
 * JobRunner on a real SQLite store with a scripted executor and a real
 * webhook receiver on loopback: a job that cannot run ends 'failed' with a
 * bulk_scrape.failed delivery; a runner whose lease was taken stops at once
 * and bills nothing more; a runner that shuts down hands its job over (the
 * lease lapses at once) and the next runner does only what is left, each
 * item billed once; a receiver that keeps failing is retried on the
 * schedule, then given up; a research job (one item) reports its progress
 * while it runs, readable from another connection, keeps the last one, and
 * is billed once; a run that lost its job writes no more progress.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobFailure, type JobExecutor, type JobView } from '../../core/jobs.js';
import type { Logger } from '../../core/ports.js';
import { spawnSync } from 'node:child_process';
import { isDeadLocalWorker, JobRunner, MAX_DEFECT_RUNS, workerIdFor, type RunnerOptions } from '../../adapters/jobs/runner.js';
import { openSqliteStore, type SqliteAccountStore } from '../../adapters/store/sqlite/index.js';
import { sqliteJobStore, type SqliteJobStore } from '../../adapters/store/sqlite/jobs.js';
import { deliverWebhook } from '../../adapters/webhooks/deliver.js';
import { newWebhookSecret } from '../../adapters/webhooks/sign.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e);
const silent: Logger = { info() {}, warn() {}, error() {}, debug() {}, isLevelEnabled: () => false } as unknown as Logger;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('condition not met');
    await sleep(25);
  }
}

describe('JobRunner', () => {
  let dir: string;
  let accounts: SqliteAccountStore;
  let jobs: SqliteJobStore;
  const receivers: WebhookReceiver[] = [];
  const runners: JobRunner[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'scour-runner-'));
    accounts = openSqliteStore({ path: join(dir, 'scour.db') });
    jobs = sqliteJobStore(accounts);
  });
  afterAll(async () => {
    for (const r of runners) await r.stop();
    for (const r of receivers) await r.close();
    accounts.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const newAccount = async (credits: number) => {
    const now = Date.now();
    const a = await run(accounts.createAccount({ id: randomUUID(), name: 't', plan: 'free', credits, now, periodEnd: now + 30 * 86_400_000 }));
    const secret = await run(jobs.ensureWebhookSecret(a.id, newWebhookSecret(), now));
    return { id: a.id, secret };
  };

  const newJob = (accountId: string, n: number, callbackUrl: string | null) =>
    run(jobs.createJob({
      id: `bulk_${randomUUID().replaceAll('-', '')}`, accountId, request: {}, urls: Array.from({ length: n }, (_, i) => `http://127.0.0.1:9/${i}`),
      callbackUrl, pricePerUrl: 2, now: Date.now(),
    }));

  const runner = (executor: JobExecutor, over: Partial<RunnerOptions> = {}) => {
    const r = new JobRunner({
      store: jobs, executor: () => executor, clock: { now: () => Date.now() }, logger: silent,
      leaseMs: 600, concurrency: 1, pollMs: 100, deliveryPollMs: 100, schedule: [1, 1], deliveryLeaseMs: 5000,
      newSecret: newWebhookSecret, random: () => 0.5,
      deliver: (d) => deliverWebhook({ url: d.url, secret: d.secrets, payload: d.payload, timeoutMs: 2000, allowPrivate: true }),
      ...over,
    });
    runners.push(r);
    return r;
  };

  /** Finishes items one by one, `stepMs` apart, as successes. */
  const stepper = (stepMs: number, seen: number[] = []): JobExecutor => ({
    view: (job: JobView) => ({ id: job.id, status: job.status, items: job.items.map((i) => i.status) }),
    run: (x) => Effect.forEach(
      x.job.items.filter((i) => i.status === 'pending'),
      (i) => Effect.andThen(Effect.sleep(stepMs), Effect.suspend(() => {
        seen.push(i.idx);
        return x.finish({ idx: i.idx, success: true, attempts: 1, result: { n: i.idx }, error: null });
      })),
      { discard: true },
    ),
  });

  it('ends a job that cannot run as failed, and delivers bulk_scrape.failed', async () => {
    const a = await newAccount(100);
    const rx = await startWebhookReceiver({ secret: a.secret });
    receivers.push(rx);
    const job = await newJob(a.id, 2, rx.url);
    const failing: JobExecutor = {
      view: (j) => ({ status: j.status, items: j.items.map((i) => i.error) }),
      run: (x) => Effect.andThen(
        Effect.forEach(x.job.items, (i) => x.finish({ idx: i.idx, success: false, attempts: 0, result: null, error: { code: 'PROXY_NOT_AVAILABLE' } }), { discard: true }),
        Effect.fail(new JobFailure('PROXY_NOT_AVAILABLE', 'no FR proxy any more')),
      ),
    };
    const r = runner(failing);
    r.start();
    const [hook] = await rx.waitFor(1, 10_000);
    expect(hook!.verified).toBe(true);
    expect(hook!.event).toBe('bulk_scrape.failed');
    expect((hook!.body as { data: unknown }).data).toEqual({ status: 'failed', items: [{ code: 'PROXY_NOT_AVAILABLE' }, { code: 'PROXY_NOT_AVAILABLE' }] });
    expect(await run(jobs.getJob(job.id, a.id))).toMatchObject({ status: 'failed' });
    expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 100 });
    await r.stop();
  });

  it(`a job that hits an internal error in every run is failed after ${MAX_DEFECT_RUNS} runs: pending items say INTERNAL_ERROR, uncharged, one failed webhook`, async () => {
    const a = await newAccount(100);
    const rx = await startWebhookReceiver({ secret: a.secret });
    receivers.push(rx);
    const job = await newJob(a.id, 3, rx.url);
    let runs = 0;
    // Finishes item 0, then a bug: the same one every run.
    const buggy: JobExecutor = {
      view: (j) => ({ status: j.status, items: j.items.map((i) => [i.status, (i.error as { code?: string } | null)?.code ?? null]) }),
      run: (x) => Effect.andThen(
        Effect.suspend(() => {
          runs++;
          const first = x.job.items.find((i) => i.idx === 0 && i.status === 'pending');
          return first ? Effect.asVoid(x.finish({ idx: 0, success: true, attempts: 1, result: { n: 0 }, error: null })) : Effect.void;
        }),
        Effect.sync(() => { throw new TypeError('cannot read properties of undefined'); }),
      ),
    };
    const r = runner(buggy);
    r.start();
    const [hook] = await rx.waitFor(1, 15_000);
    expect(runs).toBe(MAX_DEFECT_RUNS);
    expect(hook!.event).toBe('bulk_scrape.failed');
    expect((hook!.body as { data: unknown }).data).toEqual({ status: 'failed', items: [['completed', null], ['failed', 'INTERNAL_ERROR'], ['failed', 'INTERNAL_ERROR']] });
    expect(await run(jobs.getJob(job.id, a.id))).toMatchObject({ status: 'failed' });
    // Item 0 was billed once (2 credits); the failed items cost nothing.
    expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 98 });
    await sleep(300);
    expect(runs).toBe(MAX_DEFECT_RUNS);
    expect(rx.received).toHaveLength(1);
    await r.stop();
  });

  it('a job whose first run hits an internal error is run again and completes, each item billed once', async () => {
    const a = await newAccount(100);
    const job = await newJob(a.id, 2, null);
    let runs = 0;
    const flaky: JobExecutor = {
      view: (j) => ({ status: j.status }),
      run: (x) => Effect.suspend(() => {
        runs++;
        if (runs === 1) return Effect.die(new Error('transient bug'));
        return Effect.forEach(x.job.items.filter((i) => i.status === 'pending'), (i) => x.finish({ idx: i.idx, success: true, attempts: 1, result: {}, error: null }), { discard: true });
      }),
    };
    const r = runner(flaky);
    r.start();
    await until(async () => (await run(jobs.getJob(job.id, a.id)))?.status === 'completed');
    expect(runs).toBe(2);
    expect(await run(accounts.getAccount(a.id))).toMatchObject({ balance: 96 });
    await r.stop();
  });

  it('stops at once when its lease is taken, and bills nothing after', async () => {
    const a = await newAccount(100);
    const job = await newJob(a.id, 20, null);
    const seen: number[] = [];
    const r = runner(stepper(60, seen), { leaseMs: 900 });
    r.start();
    await until(() => seen.length >= 2);
    // Another process takes the job over (as if this one had stalled past its lease).
    await until(async () => (await run(jobs.claimJob('thief', Date.now() + 10_000, 60_000, job.id))) !== undefined);
    await until(() => r.running === 0, 5000);
    const at = seen.length;
    await sleep(400);
    expect(seen.length).toBe(at);
    expect(at).toBeLessThan(20);
    const view = await run(jobs.getJob(job.id, a.id));
    expect(view).toMatchObject({ status: 'running', workerId: 'thief' });
    const done = view!.items.filter((i) => i.status === 'completed').length;
    expect((await run(accounts.getAccount(a.id)))!.balance).toBe(100 - 2 * done);
    await r.stop();
    await run(jobs.completeJob(job.id, 'thief', Date.now(), 'completed'));
  });

  it('hands its job over on shutdown: the next runner does only what is left, each item billed once', async () => {
    const a = await newAccount(100);
    const rx = await startWebhookReceiver({ secret: a.secret });
    receivers.push(rx);
    const job = await newJob(a.id, 12, rx.url);
    const firstSeen: number[] = [];
    const first = runner(stepper(50, firstSeen), { leaseMs: 60_000 });
    first.start();
    await until(() => firstSeen.length >= 3);
    const t0 = Date.now();
    await first.stop();
    // The lease (a minute) was let go at shutdown: the next runner starts at once, not a minute later.
    const secondSeen: number[] = [];
    const second = runner(stepper(10, secondSeen), { leaseMs: 60_000 });
    second.start();
    const [hook] = await rx.waitFor(1, 10_000);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(hook!.verified).toBe(true);
    expect(new Set([...firstSeen, ...secondSeen]).size).toBe(12);
    expect(firstSeen.filter((i) => secondSeen.includes(i))).toEqual([]);
    const ledger = await run(accounts.ledger(a.id, 100));
    expect(ledger).toHaveLength(12);
    expect(new Set(ledger.map((l) => l.requestId)).size).toBe(12);
    expect((await run(accounts.getAccount(a.id)))!.balance).toBe(100 - 24);
    expect(await run(jobs.getJob(job.id, a.id))).toMatchObject({ status: 'completed' });
    await second.stop();
  });

  it('releases at once a job held by a dead process of this machine; another machine\'s holder waits for its lease', async () => {
    const a = await newAccount(100);
    // A pid that existed and is gone: a process that ran and exited.
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid!;
    const dead = workerIdFor(deadPid);
    expect(isDeadLocalWorker(dead, dead.split(':').slice(0, 2).join(':'))).toBe(true);
    expect(isDeadLocalWorker(workerIdFor(process.pid), dead.split(':').slice(0, 2).join(':'))).toBe(false);
    const mine = await newJob(a.id, 2, null);
    const foreign = await newJob(a.id, 2, null);
    const now = Date.now();
    expect(await run(jobs.claimJob(dead, now, 60_000, mine.id))).toBeDefined();
    expect(await run(jobs.claimJob(`elsewhere:0badb007:${deadPid}:00000000`, now, 60_000, foreign.id))).toBeDefined();
    const r = runner(stepper(1), { leaseMs: 60_000 });
    r.start();
    await until(async () => (await run(jobs.getJob(mine.id, a.id)))!.status === 'completed', 5000);
    // The foreign holder's pid means nothing here: its job keeps its lease.
    await sleep(300);
    expect(await run(jobs.getJob(foreign.id, a.id))).toMatchObject({ status: 'running', workerId: `elsewhere:0badb007:${deadPid}:00000000` });
    await r.stop();
    await run(jobs.completeJob(foreign.id, `elsewhere:0badb007:${deadPid}:00000000`, Date.now(), 'completed'));
  });

  const newResearch = (accountId: string, pricePerUrl: number) =>
    run(jobs.createJob({
      id: `research_${randomUUID().replaceAll('-', '')}`, kind: 'research', accountId, request: { research_query: 'q' }, urls: ['research:'],
      callbackUrl: null, pricePerUrl, now: Date.now(),
    }));

  it('a research job reports its progress while it runs (seen from another connection), keeps the last, and is billed once', async () => {
    const a = await newAccount(100);
    const job = await newResearch(a.id, 9);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const kept: boolean[] = [];
    const research: JobExecutor = {
      kind: 'research',
      operation: 'research',
      view: (j) => ({ status: j.status, progress: j.progress }),
      run: (x) => Effect.gen(function* () {
        kept.push(yield* x.progress({ stage: 'plan', found: 0, read: 0, sources: 0 }));
        kept.push(yield* x.progress({ stage: 'gather', found: 20, read: 4, sources: 3 }));
        // Too large: not kept, and the run goes on.
        kept.push(yield* x.progress({ pad: 'x'.repeat(70_000) }));
        yield* Effect.promise(() => gate);
        kept.push(yield* x.progress({ stage: 'report', found: 20, read: 20, sources: 11 }));
        const r = yield* x.finish({ idx: 0, success: true, attempts: 1, result: { report: 'r'.repeat(1_200_000) }, error: null });
        expect(r).toMatchObject({ charged: 9, alreadyDone: false });
      }),
    };
    const r = runner(research);
    r.start();
    // The API process reads it through its own connection.
    const reader = openSqliteStore({ path: join(dir, 'scour.db') });
    try {
      const other = sqliteJobStore(reader);
      await until(async () => ((await run(other.getJob(job.id, a.id, { kind: 'research', items: false })))?.progress as { stage?: string } | null)?.stage === 'gather');
      const mid = await run(other.getJob(job.id, a.id, { kind: 'research', items: false }));
      expect(mid).toMatchObject({ status: 'running', workerId: r.workerId, progress: { stage: 'gather', found: 20, read: 4, sources: 3 } });
      expect(mid!.progressAt).toBeGreaterThan(0);
      release();
      await until(async () => (await run(other.getJob(job.id, a.id, { kind: 'research', items: false })))?.status === 'completed');
      const end = await run(other.getJob(job.id, a.id, { kind: 'research' }));
      expect(end?.progress).toEqual({ stage: 'report', found: 20, read: 20, sources: 11 });
      expect((end?.items[0]?.result as { report: string }).report).toHaveLength(1_200_000);
    } finally {
      reader.close();
    }
    expect(kept).toEqual([true, true, false, true]);
    expect((await run(accounts.getAccount(a.id)))!.balance).toBe(91);
    expect(await run(accounts.ledger(a.id, 10))).toMatchObject([{ operation: 'research', credits: 9, requestId: `${job.id}:0` }]);
    await r.stop();
  });

  it('a run whose job was taken over writes no more progress', async () => {
    const a = await newAccount(100);
    const job = await newResearch(a.id, 1);
    const kept: boolean[] = [];
    let taken!: () => void;
    const takenOver = new Promise<void>((r) => (taken = r));
    const research: JobExecutor = {
      kind: 'research',
      view: (j) => ({ status: j.status }),
      run: (x) => Effect.gen(function* () {
        kept.push(yield* x.progress({ stage: 'plan' }));
        yield* Effect.promise(() => takenOver);
        // Before the runner's next renewal notices: the store refuses it.
        kept.push(yield* x.progress({ stage: 'stale' }));
      }),
    };
    const r = runner(research, { leaseMs: 60_000 });
    r.start();
    await until(() => kept.length === 1);
    expect(await run(jobs.claimJob('thief', Date.now() + 120_000, 60_000, job.id))).toBeDefined();
    taken();
    await until(() => kept.length === 2 || r.running === 0);
    expect(kept).toEqual([true, false]);
    expect((await run(jobs.getJob(job.id, a.id, { kind: 'research', items: false })))?.progress).toEqual({ stage: 'plan' });
    await r.stop();
    await run(jobs.completeJob(job.id, 'thief', Date.now(), 'completed'));
  });

  it('retries a failing receiver on the schedule, then gives up; a refused callback is not retried', async () => {
    const a = await newAccount(100);
    const rx = await startWebhookReceiver({ secret: a.secret, status: 500 });
    receivers.push(rx);
    const job = await newJob(a.id, 1, rx.url);
    const r = runner(stepper(1));
    r.start();
    const got = await rx.waitFor(3, 10_000);
    expect(got.map((g) => g.attempt)).toEqual([1, 2, 3]);
    await until(async () => (await run(jobs.getJob(job.id, a.id)))!.deliveries[0]?.status === 'failed');
    const d = (await run(jobs.getJob(job.id, a.id)))!.deliveries[0]!;
    expect(d.history.map((h) => h.responseStatus)).toEqual([500, 500, 500]);
    // random() = 0.5 is no jitter: the schedule exactly.
    expect(d.history[0]!.nextAttemptAt! - d.history[0]!.attemptedAt).toBeGreaterThanOrEqual(1000);
    expect(d.history[2]!.nextAttemptAt).toBeNull();
    await sleep(1500);
    expect(rx.received).toHaveLength(3);

    // The egress guard refuses the callback (metadata address, checked before any connection): one attempt, recorded, never retried.
    const refused = await newJob(a.id, 1, 'http://169.254.169.254/hook');
    await until(async () => (await run(jobs.getJob(refused.id, a.id)))!.deliveries[0]?.status === 'failed');
    const rd = (await run(jobs.getJob(refused.id, a.id)))!.deliveries[0]!;
    expect(rd.attempts).toBe(1);
    expect(rd.history[0]!.error).toMatch(/TARGET_NOT_ALLOWED/);
    await r.stop();
  });
});
