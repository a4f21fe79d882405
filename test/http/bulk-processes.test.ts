/**
 * Durable bulk jobs with real processes really killed (SIGKILL), against the
 * loopback target site and a loopback webhook receiver that verifies every
 * signature:
 *  - embedded: `scour serve` killed mid-job and started again on the same
 *    data directory finishes the job, the webhook arrives, nobody is billed
 *    twice;
 *  - shared (PostgreSQL + Redis, BullMQ): the worker running a job killed,
 *    the second worker takes it over, the same guarantees;
 *  - two API processes and two workers: credits and rate limits hold
 *    across all of them.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { alive, call, killAll, startProcess, until, workerPid, type ScourProcess } from '../support/processes.js';
import { freshDatabase, redisNamespace, type FreshDatabase, type RedisNamespace } from '../support/services.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'bulk-processes-admin-token-0123456789';
/** 3 credits a URL (a plain scrape). */
const PRICE = 3;

interface Made { readonly account_id: string; readonly api_key: string }

const cli = (args: string[], env: Record<string, string>, cwd: string) => runCli(args, env, cwd, 30_000);

async function makeAccount(env: Record<string, string>, cwd: string, credits: number): Promise<Made> {
  const m = await cli(['accounts', 'create', '--plan', 'starter', '--credits', String(credits), '--json'], env, cwd);
  expect(m.code, m.err).toBe(0);
  return JSON.parse(m.out) as Made;
}

async function secretOf(base: string, accountId: string): Promise<string> {
  const r = await call(`${base}/admin/v1/accounts/${accountId}/webhook-secret`, { token: ADMIN });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.secret as string;
}

/** Slow pages (each URL distinct), so a job is still running when its process is killed. */
const slowUrls = (site: TargetSite, tag: string, n: number, ms: number) =>
  Array.from({ length: n }, (_, i) => `${site.url}/slow?ms=${ms}&job=${tag}&i=${i}`);

const hitsOf = (site: TargetSite, tag: string) => site.requests.filter((r) => r.url.includes(`job=${tag}&`)).length;

async function ledgerOf(base: string, accountId: string): Promise<{ request_id: string; credits: number; operation: string }[]> {
  const r = await call(`${base}/admin/v1/accounts/${accountId}/ledger?limit=1000`, { token: ADMIN });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.entries ?? r.body.ledger ?? r.body) as never;
}

function baseEnvFor(dir: string): Record<string, string> {
  return {
    SCOUR_ADMIN_TOKEN: ADMIN,
    SCOUR_BOOTSTRAP_KEY: 'false',
    SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback',
    SCOUR_DATA_DIR: join(dir, 'data'),
    SCOUR_JOB_LEASE: '2',
    SCOUR_WEBHOOK_SCHEDULE: '1,1,1,1,1',
    LOG_LEVEL: 'info',
    PORT: '0',
    HOST: '127.0.0.1',
  };
}

describe('bulk jobs survive SIGKILL (embedded, SQLite)', () => {
  let dir: string;
  let site: TargetSite;
  let rx: WebhookReceiver | undefined;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-bulk-kill-'));
    site = await startTargetSite();
  });
  afterAll(async () => {
    await killAll(children);
    await rx?.close();
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a server killed mid-job finishes it after a restart: webhook delivered, every URL billed once', async () => {
    // A long lease: the restarted server must not wait for it (the dead holder was on this machine).
    const env = { ...baseEnvFor(dir), SCOUR_JOB_LEASE: '120' };
    const acct = await makeAccount(env, dir, 1000);
    const first = await startProcess('first', 'serve', env, dir, children);
    rx = await startWebhookReceiver({ secret: await secretOf(first.url, acct.account_id) });
    const urls = slowUrls(site, 'emb', 16, 300);
    const sub = await call(`${first.url}/v1/scrape/bulk`, { token: acct.api_key, body: { urls, concurrent_requests: 2, callback_url: rx.url } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(202);
    const jobPath = `/v1/scrape/bulk/${sub.body.job_id}`;
    // Kill it once a few URLs are done and billed, well before the end.
    const mid = await until(() => call(`${first.url}${jobPath}`, { token: acct.api_key }), (r) => r.body.progress?.done >= 4, 20_000, 50);
    expect(mid.body.status).toBe('running');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(alive(first.child.pid!)).toBe(false);
    const doneBeforeKill = mid.body.progress.done as number;
    expect(rx.received).toHaveLength(0);

    const second = await startProcess('second', 'serve', env, dir, children);
    const [hook] = await rx.waitFor(1, 30_000);
    expect(second.out()).toContain('released the job of a dead process on this machine');
    expect(hook!.verified).toBe(true);
    const data = (hook!.body as { data: any }).data;
    expect(data.status).toBe('completed');
    expect(data.progress).toEqual({ total: 16, done: 16, succeeded: 16, failed: 0, pending: 0 });
    expect(data.results.map((r: { url: string }) => r.url)).toEqual(urls);
    expect(data.credits_used).toBe(16 * PRICE);

    // Billed once per URL, although the job ran in two processes.
    const ledger = (await ledgerOf(second.url, acct.account_id)).filter((l) => l.operation === 'scrape_bulk');
    expect(ledger).toHaveLength(16);
    expect(new Set(ledger.map((l) => l.request_id)).size).toBe(16);
    expect(ledger.reduce((n, l) => n + l.credits, 0)).toBe(16 * PRICE);
    const usage = await call(`${second.url}/v1/usage`, { token: acct.api_key });
    expect(usage.body).toMatchObject({ credits_used: 16 * PRICE, credits_remaining: 1000 - 16 * PRICE, credits_reserved: 0 });
    // URLs finished before the kill were not fetched again; at most the two in flight were.
    expect(hitsOf(site, 'emb')).toBeGreaterThanOrEqual(16);
    expect(hitsOf(site, 'emb')).toBeLessThanOrEqual(16 + 2 + (doneBeforeKill > 0 ? 2 : 0));
    const st = await until(() => call(`${second.url}${jobPath}`, { token: acct.api_key }), (r) => r.body.webhook?.deliveries?.[0]?.status === 'delivered');
    expect(st.body.status).toBe('completed');
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.uniqueDeliveries()).toHaveLength(1);
  }, 150_000);
});

describe('bulk jobs on PostgreSQL + Redis with `scour worker` processes', () => {
  let dir: string;
  let db: FreshDatabase | undefined;
  let redis: RedisNamespace | undefined;
  let site: TargetSite;
  const receivers: WebhookReceiver[] = [];
  const children: ChildProcess[] = [];
  let env: Record<string, string>;
  let apiA: ScourProcess;
  let apiB: ScourProcess;
  let w1: ScourProcess;
  let w2: ScourProcess;
  let sql: pg.Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-bulk-shared-'));
    db = await freshDatabase();
    redis = redisNamespace();
    site = await startTargetSite();
    const plansFile = join(dir, 'plans.json');
    writeFileSync(plansFile, JSON.stringify({
      starter: { limits: { scrape_bulk: { windows: [{ limit: 6, seconds: 60 }], concurrency: 0 } } },
      builder: { limits: { scrape_bulk: { windows: [{ limit: 1000, seconds: 60 }], concurrency: 0 } } },
    }));
    env = {
      ...baseEnvFor(dir), DATABASE_URL: db.url, REDIS_URL: redis.url, SCOUR_REDIS_PREFIX: redis.prefix, SCOUR_PLANS: plansFile,
      SCOUR_JOB_LEASE: '3', SCOUR_WORKER_CONCURRENCY: '1',
    };
    await makeAccount(env, dir, 1); // migrates the fresh database before the processes start together
    [apiA, apiB, w1, w2] = await Promise.all([
      startProcess('api-A', 'serve', { ...env, SCOUR_HTTP_ADAPTER: 'uws' }, dir, children),
      startProcess('api-B', 'serve', { ...env, SCOUR_HTTP_ADAPTER: 'node' }, dir, children),
      startProcess('worker-1', 'worker', env, dir, children),
      startProcess('worker-2', 'worker', env, dir, children),
    ]);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }, 150_000);

  afterAll(async () => {
    await sql?.end().catch(() => undefined);
    await killAll(children);
    for (const r of receivers) await r.close();
    await site?.close();
    try {
      await db?.drop();
    } finally {
      await redis?.clear();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('API processes only queue jobs; workers run them', async () => {
    expect(apiA.out()).not.toContain('job started');
    expect(w1.out() + w2.out()).toMatch(/"mode":"queue"/);
  });

  it('a worker killed mid-job: the other worker takes it over, the webhook arrives, every URL billed once', async () => {
    const acct = await makeAccount(env, dir, 1000);
    const rx = await startWebhookReceiver({ secret: await secretOf(apiA.url, acct.account_id) });
    receivers.push(rx);
    const urls = slowUrls(site, 'shr', 16, 300);
    const sub = await call(`${apiA.url}/v1/scrape/bulk`, { token: acct.api_key, body: { urls, concurrent_requests: 2, callback_url: rx.url } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(202);
    const jobId = sub.body.job_id as string;
    await until(() => call(`${apiB.url}/v1/scrape/bulk/${jobId}`, { token: acct.api_key }), (r) => r.body.progress?.done >= 4, 20_000, 50);
    const holder = (await sql.query<{ worker_id: string }>('SELECT worker_id FROM bulk_jobs WHERE id = $1', [jobId])).rows[0]!.worker_id;
    const victim = [w1, w2].find((w) => w.workerId === holder);
    const survivor = [w1, w2].find((w) => w.workerId !== holder)!;
    expect(victim, `job held by ${holder}, workers ${w1.workerId} ${w2.workerId}`).toBeDefined();
    expect(victim!.child.pid).toBe(workerPid(victim!.workerId));
    victim!.child.kill('SIGKILL');
    await victim!.exited;
    expect(alive(workerPid(victim!.workerId))).toBe(false);

    const [hook] = await rx.waitFor(1, 40_000);
    expect(hook!.verified).toBe(true);
    const data = (hook!.body as { data: any }).data;
    expect(data.progress).toEqual({ total: 16, done: 16, succeeded: 16, failed: 0, pending: 0 });
    const byWorker = await sql.query<{ worker_id: string; n: string }>('SELECT worker_id, count(*) AS n FROM bulk_items WHERE job_id = $1 GROUP BY worker_id', [jobId]);
    const workers = new Map(byWorker.rows.map((r) => [r.worker_id, Number(r.n)]));
    expect(workers.get(victim!.workerId), JSON.stringify([...workers], null, 0) + victim!.workerId).toBeGreaterThanOrEqual(4);
    expect(workers.get(survivor.workerId)).toBeGreaterThanOrEqual(1);
    const ledger = (await ledgerOf(apiB.url, acct.account_id)).filter((l) => l.operation === 'scrape_bulk');
    expect(ledger).toHaveLength(16);
    expect(new Set(ledger.map((l) => l.request_id)).size).toBe(16);
    expect((await call(`${apiA.url}/v1/usage`, { token: acct.api_key })).body).toMatchObject({ credits_used: 16 * PRICE, credits_reserved: 0 });
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.uniqueDeliveries()).toHaveLength(1);
    // The killed worker is replaced for the next test.
    const replacement = await startProcess('worker-3', 'worker', env, dir, children);
    if (victim === w1) w1 = replacement;
    else w2 = replacement;
  }, 120_000);

  it('two API processes and two workers: credits are never overspent and each URL is billed at most once', async () => {
    // 30 credits: ten URLs' worth. Eight jobs of three URLs (72 credits asked) through both APIs at once.
    const acct = await (async () => {
      const m = await cli(['accounts', 'create', '--plan', 'builder', '--credits', '30', '--json'], env, dir);
      expect(m.code, m.err).toBe(0);
      return JSON.parse(m.out) as Made;
    })();
    const rx = await startWebhookReceiver({ secret: await secretOf(apiA.url, acct.account_id) });
    receivers.push(rx);
    const subs = await Promise.all(Array.from({ length: 8 }, (_, j) => {
      const api = j % 2 === 0 ? apiA : apiB;
      const urls = Array.from({ length: 3 }, (_, i) => `${site.url}/html/simple?money=${j}-${i}`);
      return call(`${api.url}/v1/scrape/bulk`, { token: acct.api_key, body: { urls, callback_url: rx.url } });
    }));
    const accepted = subs.filter((r) => r.status === 202);
    for (const r of subs) expect([202, 402], JSON.stringify(r.body)).toContain(r.status);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    await rx.waitFor(accepted.length, 40_000);
    const views = await Promise.all(accepted.map((r) => call(`${apiB.url}/v1/scrape/bulk/${r.body.job_id}`, { token: acct.api_key })));
    const succeeded = views.reduce((n, v) => n + v.body.progress.succeeded, 0);
    const refused = views.flatMap((v) => v.body.results).filter((x: { error?: { code: string } }) => x.error?.code === 'NO_CREDITS').length;
    const ledger = (await ledgerOf(apiA.url, acct.account_id)).filter((l) => l.operation === 'scrape_bulk');
    expect(new Set(ledger.map((l) => l.request_id)).size).toBe(ledger.length);
    expect(ledger.length).toBe(succeeded);
    expect(succeeded * PRICE).toBeLessThanOrEqual(30);
    expect(succeeded + refused).toBe(accepted.length * 3);
    const usage = (await call(`${apiB.url}/v1/usage`, { token: acct.api_key })).body;
    expect(usage.credits_used).toBe(succeeded * PRICE);
    expect(usage.credits_remaining).toBe(30 - succeeded * PRICE);
    expect(usage.credits_reserved).toBe(0);
    const balance = (await sql.query<{ balance: string }>('SELECT balance FROM accounts WHERE id = $1', [acct.account_id])).rows[0]!.balance;
    expect(Number(balance)).toBe(30 - succeeded * PRICE);
  }, 90_000);

  it('two API processes share one rate window for bulk submissions', async () => {
    const acct = await makeAccount(env, dir, 10_000);
    const rx = await startWebhookReceiver({ secret: await secretOf(apiA.url, acct.account_id) });
    receivers.push(rx);
    const subs = await Promise.all(Array.from({ length: 14 }, (_, j) => call(`${(j % 2 === 0 ? apiA : apiB).url}/v1/scrape/bulk`, {
      token: acct.api_key, body: { urls: [`${site.url}/html/simple?window=${j}`], callback_url: rx.url },
    })));
    const statuses = subs.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(6);
    expect(statuses.filter((s) => s === 429)).toHaveLength(8);
    for (const r of subs.filter((x) => x.status === 429)) expect(r.body.code).toBe('RATE_LIMITED');
    await rx.waitFor(6, 30_000);
  }, 60_000);
});
