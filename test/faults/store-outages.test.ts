/**
 * PostgreSQL and Redis stopped and restarted under load, in shared mode, with
 * real processes of the suite's own (test/support/private-services.ts):
 * requests that need the stopped one answer 503 SERVICE_UNAVAILABLE with
 * retry_after, never 500; nothing is charged twice or lost (every 200 scrape
 * is in the ledger once, nothing else is); the server recovers by itself
 * when the service returns. Rate limits fail closed while Redis is down
 * (docs/reliability.md). A bulk job running across a Redis restart, on a
 * worker fed by BullMQ as `scour worker` is, completes, billed once per URL,
 * with one webhook.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScour, type Scour } from '../../config/container.js';
import { createLogger } from '../../adapters/logging/pino.js';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../config/plans.js';
import { call, type Reply } from '../support/http.js';
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from '../support/private-services.js';
import { startScour, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'outage-admin-token-0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Limits far above this load: any 429 here would be a fault, not a limit. */
const PLANS = applyPlanOverrides(DEFAULT_PLANS, {
  unicorn: { limits: { scrape: { windows: [{ limit: 1_000_000, seconds: 60 }], concurrency: 100 }, usage: { windows: [{ limit: 1_000_000, seconds: 60 }], concurrency: 0 } } },
});

let pgsql: PrivatePostgres;
let redis: PrivateRedis;
let site: TargetSite;
let s: Running;
/** A `scour worker` (in this process): in shared mode the API queues jobs and workers run them. */
let worker: Scour;
const workerLogs: string[] = [];

beforeAll(async () => {
  [pgsql, redis, site] = await Promise.all([startPrivatePostgres(), startPrivateRedis(), startTargetSite()]);
  s = await startScour('uws', {
    adminToken: ADMIN, allowPrivateTargets: 'loopback', databaseUrl: pgsql.url, redisUrl: redis.url, redisPrefix: 'outage:', webhookSchedule: [1, 1, 1],
  }, { plans: PLANS });
  const sink = new Writable({ write(chunk, _e, cb) { workerLogs.push(String(chunk)); cb(); } });
  worker = await createScour({ settings: { ...s.scour.settings, port: 0 }, role: 'worker', logger: createLogger('info', sink), plans: PLANS });
  await worker.startWorker();
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await s?.stop();
  await Promise.all([pgsql?.destroy(), redis?.destroy(), site?.close()]);
}, 60_000);

async function account(credits: number): Promise<{ id: string; key: string }> {
  const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits } });
  expect(r.status, r.text).toBe(201);
  return { id: r.body.account_id as string, key: r.body.api_key as string };
}

/** Requests from `width` loops until `stop()`: every answer's status and body. */
function load(key: string, width: number) {
  const answers: { at: number; status: number; body: Reply['body']; kind: 'scrape' | 'usage' }[] = [];
  let running = true;
  const loops = Array.from({ length: width }, async (_, i) => {
    while (running) {
      const kind = i % 2 === 0 ? 'scrape' : 'usage';
      const r = kind === 'scrape'
        ? await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body: { url: `${site.url}/html/simple`, timeout: 5 } }).catch(() => undefined)
        : await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` }).catch(() => undefined);
      answers.push({ at: Date.now(), status: r?.status ?? 0, body: r?.body, kind });
      if (r === undefined || r.status !== 200) await sleep(20);
    }
  });
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Waits until `ok` holds for `times` answers in a row (the server recovered by itself). */
async function recovered(key: string, within: number): Promise<number> {
  const start = Date.now();
  let streak = 0;
  while (Date.now() - start < within) {
    const r = await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` }).catch(() => undefined);
    streak = r?.status === 200 ? streak + 1 : 0;
    if (streak >= 5) return Date.now() - start;
    await sleep(100);
  }
  throw new Error(`not recovered within ${within} ms`);
}

function checkAnswers(answers: readonly { status: number; body: Reply['body'] }[]): void {
  const statuses = new Set(answers.map((a) => a.status));
  for (const st of statuses) expect([200, 503], `statuses seen: ${[...statuses].join(',')}`).toContain(st);
  for (const a of answers.filter((x) => x.status === 503)) {
    expect(a.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retry_after: expect.any(Number), request_id: expect.any(String) });
  }
}

async function ledgerMatches(a: { id: string; key: string }, credits: number, scrapes200: number): Promise<void> {
  const account = await call(`${s.url}/admin/v1/accounts/${a.id}`, 'GET', { auth: `Bearer ${ADMIN}` });
  const ledger = await call(`${s.url}/admin/v1/accounts/${a.id}/ledger`, 'GET', { auth: `Bearer ${ADMIN}` });
  expect(ledger.status, ledger.text).toBe(200);
  const rows = ledger.body.ledger as { operation: string; credits: number; request_id: string }[];
  const scrapeRows = rows.filter((r) => r.operation === 'scrape');
  // Every successful scrape is charged once; none that failed is.
  expect(scrapeRows.length).toBe(scrapes200);
  expect(new Set(scrapeRows.map((r) => r.request_id)).size).toBe(scrapeRows.length);
  const charged = scrapeRows.reduce((n, r) => n + r.credits, 0);
  // A hold whose release was cut off by the outage stays reserved until it expires (then the sweep returns it):
  // reserved, never charged.
  expect(account.body.credits_remaining + account.body.credits_reserved).toBe(credits - charged);
  expect(account.body.credits_reserved).toBeLessThanOrEqual(3 * 12);
}

describe('store outages under load (shared mode)', () => {
  it('PostgreSQL stopped and restarted: 503 with retry_after while down, never 500, recovers by itself, every charge once', async () => {
    const credits = 100_000;
    const a = await account(credits);
    const l = load(a.key, 6);
    await sleep(1500);
    await pgsql.stop();
    await sleep(3000);
    await pgsql.start();
    const took = await recovered(a.key, 30_000);
    await sleep(1000);
    await l.stop();
    checkAnswers(l.answers);
    const down = l.answers.filter((x) => x.status === 503);
    expect(down.length, 'requests refused while PostgreSQL was down').toBeGreaterThan(0);
    expect(l.answers.filter((x) => x.status === 200).length).toBeGreaterThan(10);
    expect(took).toBeLessThan(30_000);
    await ledgerMatches(a, credits, l.answers.filter((x) => x.kind === 'scrape' && x.status === 200).length);
  }, 120_000);

  it('Redis killed and restarted: rate limits fail closed (503, never 500), recovers by itself, every charge once', async () => {
    const credits = 100_000;
    const a = await account(credits);
    const l = load(a.key, 6);
    await sleep(1500);
    await redis.stop();
    await sleep(3000);
    await redis.start();
    await recovered(a.key, 30_000);
    await sleep(1000);
    await l.stop();
    checkAnswers(l.answers);
    expect(l.answers.filter((x) => x.status === 503).length, 'requests refused while Redis was down').toBeGreaterThan(0);
    await ledgerMatches(a, credits, l.answers.filter((x) => x.kind === 'scrape' && x.status === 200).length);
  }, 120_000);

  it('a bulk job running across a Redis restart completes once: each URL billed once, one webhook', async () => {
    const a = await account(1000);
    const secret = (await call(`${s.url}/admin/v1/accounts/${a.id}/webhook-secret`, 'GET', { auth: `Bearer ${ADMIN}` })).body.secret as string;
    const rx: WebhookReceiver = await startWebhookReceiver({ secret });
    try {
      // Slow pages: the job is still running when Redis goes away.
      const urls = Array.from({ length: 6 }, (_, i) => `${site.url}/slow?ms=700&n=${i}`);
      const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${a.key}`, body: { urls, callback_url: rx.url, concurrent_requests: 2 } });
      expect(r.status, r.text).toBe(202);
      await sleep(500);
      await redis.stop();
      await sleep(2000);
      await redis.start();
      const [hook] = await rx.waitFor(1, 60_000).catch((e) => {
        console.log(workerLogs.slice(-30).map((l) => l.slice(0, 400)).join(''));
        throw e;
      });
      expect(hook!.verified).toBe(true);
      expect(hook!.event).toBe('bulk_scrape.completed');
      await sleep(1500);
      expect(rx.received).toHaveLength(1);
      await recovered(a.key, 30_000);
      const job = await call(`${s.url}/v1/scrape/bulk/${r.body.job_id as string}`, 'GET', { auth: `Bearer ${a.key}` });
      expect(job.body.status).toBe('completed');
      expect(job.body.progress).toMatchObject({ total: 6, succeeded: 6 });
      const usage = await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${a.key}` });
      expect(usage.body.credits_remaining).toBe(1000 - (job.body.credits_used as number));
      // 3 credits a plain page (config/prices.ts), each page once.
      expect(job.body.credits_used).toBe(6 * 3);
    } finally {
      await rx.close();
    }
  }, 120_000);
});
