/**
 * Two real `scour serve` processes sharing one PostgreSQL database and one
 * Redis prefix, as in a scaled-out deployment: credits cannot be
 * overspent across processes, rate limits are shared, and a key revoked
 * through one process (or the CLI) is refused by every process within a
 * second, though each caches key lookups (SCOUR_KEY_CACHE_TTL, pushed out by
 * Redis pub/sub). Accounts are made with the CLI, as an operator would.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { call, killAll, startProcess, type ScourProcess } from '../support/processes.js';
import { freshDatabase, redisNamespace, type FreshDatabase, type RedisNamespace } from '../support/services.js';

const BILLABLE = resolve(process.cwd(), 'test/fixtures/plugins/billable.ts');
const ADMIN_TOKEN = 'multi-process-admin-token-0123456789';

interface Created {
  readonly account_id: string;
  readonly api_key: string;
  readonly key_id: string;
}

/** Run a CLI command to completion (bounded). */
const cli = (args: string[], env: Record<string, string>, cwd: string) => runCli(args, env, cwd, 45_000);

const serve = (name: string, env: Record<string, string>, cwd: string, children: ChildProcess[]) => startProcess(name, 'serve', env, cwd, children);

const countBy = (xs: readonly number[]): Record<number, number> => {
  const m: Record<number, number> = {};
  for (const x of xs) m[x] = (m[x] ?? 0) + 1;
  return m;
};

describe('two API processes on one PostgreSQL database and one Redis prefix', () => {
  let db: FreshDatabase | undefined;
  let redis: RedisNamespace | undefined;
  let dir: string | undefined;
  const children: ChildProcess[] = [];
  let env: Record<string, string>;
  let a: ScourProcess;
  let b: ScourProcess;
  let money: Created;
  let limited: Created;
  let revokable: Created;
  let cliRevokable: Created;

  beforeAll(async () => {
    const t0 = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'scour-multi-'));
    db = await freshDatabase();
    redis = redisNamespace();
    const plansFile = join(dir, 'plans.json');
    writeFileSync(plansFile, JSON.stringify({
      starter: {
        limits: {
          billable: { per_minute: 100_000, concurrency: 0 },
          usage: { windows: [{ limit: 10, seconds: 60 }], concurrency: 0 },
        },
      },
    }));
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      SCOUR_REDIS_PREFIX: redis.prefix,
      SCOUR_PLUGINS: BILLABLE,
      SCOUR_ADMIN_TOKEN: ADMIN_TOKEN,
      SCOUR_BOOTSTRAP_KEY: 'false',
      SCOUR_PLANS: plansFile,
      SCOUR_DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'info',
      PORT: '0',
      HOST: '127.0.0.1',
    };
    // Three accounts made by concurrent CLI runs (they migrate the fresh database together).
    const made = await Promise.all([50, 50, 50, 50].map(() => cli(['accounts', 'create', '--plan', 'starter', '--credits', '50', '--json'], env, dir!)));
    for (const m of made) expect(m.code, m.err).toBe(0);
    [money, limited, revokable, cliRevokable] = made.map((m) => JSON.parse(m.out) as Created) as [Created, Created, Created, Created];
    // Both servers start together on the already-migrated database; one on each HTTP adapter.
    [a, b] = await Promise.all([
      serve('A', { ...env, SCOUR_HTTP_ADAPTER: 'uws' }, dir, children),
      serve('B', { ...env, SCOUR_HTTP_ADAPTER: 'node' }, dir, children),
    ]);
    console.log(`multi-process setup: ${Date.now() - t0} ms`);
  }, 120_000);

  afterAll(async () => {
    await killAll(children);
    try {
      await db?.drop();
    } finally {
      await redis?.clear();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('200 concurrent billable requests across both processes spend exactly the 50 credits', async () => {
    const t0 = Date.now();
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      call(`${(i % 2 === 0 ? a : b).url}/test/billable`, { method: 'POST', token: money.api_key, body: { cost: 1, delay_ms: 5 } })));
    console.log(`200 billable requests: ${Date.now() - t0} ms`);
    expect(countBy(results.map((r) => r.status))).toEqual({ 200: 50, 402: 150 });
    for (const r of results) {
      if (r.status === 402) {
        expect(r.body.code).toBe('NO_CREDITS');
        expect(r.body.credits_required).toBe(1);
        expect(r.body.credits_remaining).toBe(0);
      } else {
        expect(r.body.credits_used).toBe(1);
      }
    }
    const okIds = results.filter((r) => r.status === 200).map((r) => r.body.request_id as string);
    expect(new Set(okIds).size).toBe(50);

    for (const s of [a, b]) {
      const u = await call(`${s.url}/v1/usage`, { token: money.api_key });
      expect(u.status, JSON.stringify(u.body)).toBe(200);
      expect(u.body).toMatchObject({ credits_remaining: 0, credits_used: 50, credits_reserved: 0, plan: 'starter' });
      expect(u.body.breakdown).toEqual([{ operation: 'billable', credits: 50, requests: 50 }]);
    }

    const ledger = await call(`${b.url}/admin/v1/accounts/${money.account_id}/ledger`, { token: ADMIN_TOKEN });
    expect(ledger.status).toBe(200);
    expect(ledger.body.ledger).toHaveLength(50);
    const ledgerIds = (ledger.body.ledger as { request_id: string; credits: number; operation: string }[]).map((r) => r.request_id);
    expect(new Set(ledgerIds).size).toBe(50);
    // Every charge is one of the answered requests, and every answered request was charged.
    expect(new Set(ledgerIds)).toEqual(new Set(okIds));
    for (const row of ledger.body.ledger) expect(row).toMatchObject({ operation: 'billable', credits: 1 });

    const client = new pg.Client({ connectionString: db!.url, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      const rows = await client.query('SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS d, coalesce(sum(credits), 0)::int AS s FROM ledger WHERE account_id = $1', [money.account_id]);
      expect(rows.rows[0]).toEqual({ n: 50, d: 50, s: 50 });
      const acct = await client.query('SELECT balance::int AS balance, held::int AS held FROM accounts WHERE id = $1', [money.account_id]);
      expect(acct.rows[0]).toEqual({ balance: 0, held: 0 });
      const holds = await client.query('SELECT count(*)::int AS n FROM credit_holds');
      expect(holds.rows[0].n).toBe(0);
      const usage = await client.query('SELECT credits::int AS credits, requests::int AS requests FROM usage WHERE account_id = $1', [money.account_id]);
      expect(usage.rows).toEqual([{ credits: 50, requests: 50 }]);
    } finally {
      await client.end();
    }
  }, 30_000);

  it('200 concurrent billable requests charged after their work (no hold) across both processes spend exactly the 50 credits', async () => {
    const made = await call(`${a.url}/admin/v1/accounts`, { method: 'POST', token: ADMIN_TOKEN, body: { plan: 'starter', credits: 50 } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const deferred = made.body as Created;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      call(`${(i % 2 === 0 ? a : b).url}/test/billable`, { method: 'POST', token: deferred.api_key, body: { cost: 1, delay_ms: 5, charge_after: true } })));
    expect(countBy(results.map((r) => r.status))).toEqual({ 200: 50, 402: 150 });
    for (const r of results) {
      if (r.status === 402) {
        expect(r.body).toMatchObject({ code: 'NO_CREDITS', credits_required: 1, credits_remaining: 0 });
      } else {
        expect(r.body.credits_used).toBe(1);
        expect(r.body.remaining_credits).toBeGreaterThanOrEqual(0);
      }
    }
    const okIds = results.filter((r) => r.status === 200).map((r) => r.body.request_id as string);
    const client = new pg.Client({ connectionString: db!.url, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      const ledger = await client.query('SELECT request_id, credits::int AS credits FROM ledger WHERE account_id = $1', [deferred.account_id]);
      expect(ledger.rows).toHaveLength(50);
      // Every charge is one of the answered requests, and every answered request was charged once.
      expect(new Set(ledger.rows.map((r: { request_id: string }) => r.request_id))).toEqual(new Set(okIds));
      const acct = await client.query('SELECT balance::int AS balance, held::int AS held FROM accounts WHERE id = $1', [deferred.account_id]);
      expect(acct.rows[0]).toEqual({ balance: 0, held: 0 });
      const usage = await client.query('SELECT credits::int AS credits, requests::int AS requests FROM usage WHERE account_id = $1', [deferred.account_id]);
      expect(usage.rows).toEqual([{ credits: 50, requests: 50 }]);
    } finally {
      await client.end();
    }
  }, 30_000);

  it('the rate limit is shared: 30 concurrent usage calls across both processes admit exactly 10', async () => {
    // Windows are fixed and aligned to the epoch: keep the burst (and the re-check after it) inside one minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200));
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => call(`${(i % 2 === 0 ? a : b).url}/v1/usage`, { token: limited.api_key })));
    expect(countBy(results.map((r) => r.status))).toEqual({ 200: 10, 429: 20 });
    for (const r of results) {
      expect(r.headers.get('x-ratelimit-limit')).toBe('10');
      expect(r.headers.get('x-ratelimit-window')).not.toBeNull();
      if (r.status === 429) {
        expect(r.body.code).toBe('RATE_LIMITED');
        expect(r.body.limit).toBe(10);
        expect(r.body.remaining).toBe(0);
        expect(r.body.retry_after).toBeGreaterThanOrEqual(1);
        expect(r.body.retry_after).toBeLessThanOrEqual(60);
        expect(r.headers.get('retry-after')).toBe(String(r.body.retry_after));
        expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      } else {
        expect(r.body.plan).toBe('starter');
      }
    }
    // Still limited afterwards, on both.
    for (const s of [a, b]) expect((await call(`${s.url}/v1/usage`, { token: limited.api_key })).status).toBe(429);
  }, 30_000);

  /** How long after `since` each process first refuses the key (polled every 20 ms, up to 3 s). */
  const refusedAfter = async (key: string, since: number): Promise<number[]> => Promise.all([a, b].map(async (s) => {
    while (Date.now() - since < 3000) {
      const r = await call(`${s.url}/v1/usage`, { token: key });
      if (r.status === 401) return Date.now() - since;
      expect(r.status).toBe(200);
      await new Promise((done) => setTimeout(done, 20));
    }
    return Infinity;
  }));

  it('a key revoked through process A is refused by process B within 1 s, though both had it cached', async () => {
    // Both processes have looked the key up (and cached it).
    for (const s of [a, b, a, b]) expect((await call(`${s.url}/v1/usage`, { token: revokable.api_key })).status).toBe(200);
    const t0 = Date.now();
    const revoked = await call(`${a.url}/admin/v1/keys/${revokable.key_id}`, { method: 'DELETE', token: ADMIN_TOKEN });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    const delays = await refusedAfter(revokable.api_key, t0);
    console.log(`revocation through the admin API refused after ${delays.join(', ')} ms (A, B)`);
    for (const d of delays) expect(d).toBeLessThan(1000);
    for (const s of [b, a]) {
      const after = await call(`${s.url}/v1/usage`, { token: revokable.api_key });
      expect(after.status).toBe(401);
      expect(after.body.code).toBe('AUTHENTICATION_FAILED');
      const billed = await call(`${s.url}/test/billable`, { method: 'POST', token: revokable.api_key, body: {} });
      expect(billed.status).toBe(401);
      expect(billed.body.code).toBe('AUTHENTICATION_FAILED');
    }
    // Nothing was charged to the account after revocation.
    const acct = await call(`${b.url}/admin/v1/accounts/${revokable.account_id}`, { token: ADMIN_TOKEN });
    expect(acct.body.credits_remaining).toBe(50);
    expect(acct.body.keys[0].status).toBe('revoked');
  }, 30_000);

  it('a key revoked with the CLI (a third process) is refused by both within 1 s', async () => {
    for (const s of [a, b, a, b]) expect((await call(`${s.url}/v1/usage`, { token: cliRevokable.api_key })).status).toBe(200);
    const revoked = await cli(['keys', 'revoke', cliRevokable.key_id, '--json'], env, dir!);
    expect(revoked.code, revoked.err).toBe(0);
    // Timed from the CLI's exit (it published before closing).
    const delays = await refusedAfter(cliRevokable.api_key, Date.now());
    console.log(`revocation through the CLI refused after ${delays.join(', ')} ms (A, B)`);
    for (const d of delays) expect(d).toBeLessThan(1000);
  }, 30_000);

  it('both processes exit 0 on SIGTERM', async () => {
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    const codes = await Promise.race([
      Promise.all([a.exited, b.exited]),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('processes did not exit within 15 s')), 15_000)),
    ]);
    expect(codes).toEqual([0, 0]);
    for (const s of [a, b]) {
      expect(s.out()).toContain('"msg":"stopped"');
      // No error was logged by either process during the whole run.
      expect(s.out(), s.name).not.toMatch(/"level":(50|60)/);
      for (const k of [money, limited, revokable, cliRevokable]) expect(s.out() + s.err()).not.toContain(k.api_key);
    }
  }, 30_000);
});
