/**
 * JobRunner with two kinds of job on a real SQLite store: each job goes to
 * the executor of its kind (a runner without one leaves it to a process that
 * has it), a crawl executor's frontier additions and its early end (stop
 * reason, leftovers skipped) are recorded, and its webhook carries the
 * kind's own event.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobExecutor, JobKind } from '../../core/jobs.js';
import type { Logger } from '../../core/ports.js';
import { JobRunner } from '../../adapters/jobs/runner.js';
import { openSqliteStore, type SqliteAccountStore } from '../../adapters/store/sqlite/index.js';
import { sqliteJobStore, type SqliteJobStore } from '../../adapters/store/sqlite/jobs.js';
import { deliverWebhook } from '../../adapters/webhooks/deliver.js';
import { newWebhookSecret } from '../../adapters/webhooks/sign.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e);
const silent: Logger = { info() {}, warn() {}, error() {}, debug() {}, isLevelEnabled: () => false } as unknown as Logger;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('JobRunner with job kinds', () => {
  let dir: string;
  let accounts: SqliteAccountStore;
  let jobs: SqliteJobStore;
  const receivers: WebhookReceiver[] = [];
  const runners: JobRunner[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'scour-kinds-'));
    accounts = openSqliteStore({ path: join(dir, 'scour.db') });
    jobs = sqliteJobStore(accounts);
  });
  afterAll(async () => {
    for (const r of runners) await r.stop();
    for (const r of receivers) await r.close();
    accounts.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const runner = (executors: Partial<Record<JobKind, JobExecutor>>) => {
    const r = new JobRunner({
      store: jobs, executor: (kind) => executors[kind], clock: { now: () => Date.now() }, logger: silent,
      leaseMs: 2000, concurrency: 2, pollMs: 50, deliveryPollMs: 50, schedule: [1], deliveryLeaseMs: 5000,
      newSecret: newWebhookSecret, random: () => 0.5,
      deliver: (d) => deliverWebhook({ url: d.url, secret: d.secrets, payload: d.payload, timeoutMs: 2000, allowPrivate: true }),
    });
    runners.push(r);
    return r;
  };

  /** Stores the start page with two links, stores one of them, then stops as if out of credits. */
  const crawlExecutor: JobExecutor = {
    kind: 'crawl',
    operation: 'crawl',
    events: { completed: 'crawl.completed', failed: 'crawl.failed' },
    viewsItems: false,
    view: (j) => ({ status: j.status, stop_reason: j.stopReason, counts: j.counts, items: j.items.length }),
    run: (x) => Effect.gen(function* () {
      const first = yield* x.finish({
        idx: 0, success: true, attempts: 1, result: { t: 'start' }, error: null,
        discovered: { limit: 10, entries: [{ url: 'https://s.test/a', depth: 1 }, { url: 'https://s.test/b', depth: 1 }, { url: 'https://o.test/', depth: 1, skip: 'off_domain' }] },
      });
      expect(first.added?.map((a) => a.idx)).toEqual([1, 2, 3]);
      yield* x.finish({ idx: 1, success: true, attempts: 1, result: { t: 'a' }, error: null });
      const more = yield* x.extend({ limit: 10, entries: [{ url: 'https://s.test/c', depth: 2 }] });
      expect(more.map((a) => a.url)).toEqual(['https://s.test/c']);
      expect(yield* x.stopRequested()).toBeNull();
      return { stopReason: 'no_credits', leftover: 'no_credits' };
    }),
  };

  it('runs a crawl through its own executor: frontier, early end and the crawl.completed event', async () => {
    const now = Date.now();
    const a = await run(accounts.createAccount({ id: randomUUID(), name: 't', plan: 'free', credits: 100, now, periodEnd: now + 86_400_000 }));
    const secret = await run(jobs.ensureWebhookSecret(a.id, newWebhookSecret(), now));
    const rx = await startWebhookReceiver({ secret });
    receivers.push(rx);
    const crawl = await run(jobs.createJob({
      id: `crawl_${randomUUID()}`, kind: 'crawl', accountId: a.id, request: {}, urls: ['https://s.test/'], depths: [0], callbackUrl: rx.url, pricePerUrl: 3, now,
    }));
    // A process that runs bulk jobs only does not take it.
    const bulkOnly = runner({ bulk_scrape: { view: () => ({}), run: () => Effect.void } });
    bulkOnly.start();
    await sleep(300);
    expect((await run(jobs.getJob(crawl.id, a.id, { kind: 'crawl', items: false })))?.status).toBe('queued');
    await bulkOnly.stop();

    const both = runner({ crawl: crawlExecutor });
    both.start();
    const [hook] = await rx.waitFor(1, 10_000);
    expect(hook!.verified).toBe(true);
    expect(hook!.event).toBe('crawl.completed');
    expect((hook!.body as { data: unknown }).data).toEqual({
      status: 'completed', stop_reason: 'no_credits', items: 0,
      counts: { pending: 0, completed: 2, failed: 0, skipped: 3, reasons: { off_domain: 1, no_credits: 2 } },
    });
    const ledger = await run(accounts.ledger(a.id, 10));
    expect(ledger.map((l) => [l.operation, l.credits, l.requestId])).toEqual(expect.arrayContaining([['crawl', 3, `${crawl.id}:0`], ['crawl', 3, `${crawl.id}:1`]]));
    expect(ledger).toHaveLength(2);
  });
});
