/**
 * The accounts contract over HTTP, on real servers on loopback, in both
 * deployments (embedded: SQLite and the in-process limiter; shared:
 * PostgreSQL and Redis) and on both adapters: bearer auth and its 401s,
 * the admin API, /v1/usage, credits (402, holds released on failure and on
 * client abort, exact accounting under concurrency), plan gating (403),
 * rate windows and concurrency (429), and the x-ratelimit-* headers.
 * Money and limits are exercised through the test-only billable operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../config/plans.js';
import { billableOperation } from '../fixtures/plugins/billable.js';
import { call, expectErrorBody, ISO, type Reply } from '../support/http.js';
import { startScourIn, type AdapterKind, type ConfigKind, type Running } from '../support/server.js';

const MATRIX: ReadonlyArray<readonly [ConfigKind, AdapterKind]> = [['embedded', 'uws'], ['shared', 'uws'], ['embedded', 'node']];
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const KEY = /^sk_[A-Za-z0-9_-]{43}$/;
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-window'] as const;
const UPGRADE_URL = '/dashboard/billing';

/** Billable work is practically unlimited by window everywhere; only Free limits it in flight (one at a time). */
const BILLABLE_OPEN = { windows: [{ limit: 100_000, seconds: 60 }], concurrency: 0 };
const PLANS = applyPlanOverrides(DEFAULT_PLANS, {
  free: { limits: { usage: { windows: [{ limit: 3, seconds: 2 }], concurrency: 0 }, billable: { ...BILLABLE_OPEN, concurrency: 1 } } },
  starter: { limits: { billable: BILLABLE_OPEN } },
  builder: { limits: { billable: BILLABLE_OPEN } },
  unicorn: { limits: { billable: BILLABLE_OPEN } },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectRateHeaders(r: Reply): void {
  for (const h of RATE_HEADERS) {
    const v = r.headers.get(h);
    expect(v, `${h} on a ${r.status}`).not.toBeNull();
    expect(v, h).toMatch(/^\d+$/);
  }
}

function expectNoRateHeaders(r: Reply): void {
  for (const h of RATE_HEADERS) expect(r.headers.get(h), `${h} on a ${r.status}`).toBeNull();
}

function expectValidation(r: Reply, field: string): void {
  expectErrorBody(r, 400, 'MISSING_PARAMETER');
  expect(Array.isArray(r.body.validation_errors)).toBe(true);
  expect(r.body.validation_errors.length).toBeGreaterThan(0);
  for (const e of r.body.validation_errors) {
    expect(Object.keys(e).sort()).toEqual(['field', 'message']);
    expect(e.field, JSON.stringify(r.body.validation_errors)).toBe(field);
  }
}

describe.each(MATRIX)('accounts contract: %s deployment over %s', (config, adapter) => {
  let s: Running;
  /** Every API key the admin API handed out: none may reach the logs. */
  const issued: string[] = [];
  /** `token` null: no Authorization header at all. */
  const admin = async (method: string, path: string, body?: unknown, token: string | null = ADMIN_TOKEN) => {
    const r = await call(`${s.url}/admin/v1${path}`, method, { auth: token === null ? undefined : `Bearer ${token}`, body });
    if (typeof r.body?.api_key === 'string') issued.push(r.body.api_key);
    return r;
  };
  const usage = (key: string, auth = `Bearer ${key}`) => call(`${s.url}/v1/usage`, 'GET', { auth });
  const billable = (key: string, body: Record<string, unknown> = {}, signal?: AbortSignal) =>
    call(`${s.url}/test/billable`, 'POST', { auth: `Bearer ${key}`, body, ...(signal ? { signal } : {}) });

  interface Created { account_id: string; api_key: string; key_id: string; plan: string; credits_remaining: number; reset_date: string }
  async function createAccount(plan: string, credits?: number, name?: string): Promise<Created> {
    const r = await admin('POST', '/accounts', { plan, ...(credits === undefined ? {} : { credits }), ...(name === undefined ? {} : { name }) });
    expect(r.status, r.text).toBe(201);
    return r.body as Created;
  }
  const detail = async (id: string) => {
    const r = await admin('GET', `/accounts/${id}`);
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const ledger = async (id: string): Promise<Array<{ id: string; operation: string; credits: number; request_id: string; created_at: string }>> => {
    const r = await admin('GET', `/accounts/${id}/ledger`);
    expect(r.status, r.text).toBe(200);
    return r.body.ledger;
  };

  /** Checked at the end, once the aborted request's work would have finished had it not been interrupted. */
  let aborted: { accountId: string; abortedAt: number; balance: number; ledgerRows: number } | undefined;

  beforeAll(async () => {
    s = await startScourIn(config, adapter, { adminToken: ADMIN_TOKEN }, { plugins: [billableOperation], plans: PLANS });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('401 UNAUTHORIZED for a missing or malformed Authorization header, on usage and billable, with www-authenticate and no rate headers', async () => {
    const variants: Array<string | undefined> = [undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', 'Bearer sk_abc$def', 'Bearer sk_abc,def', 'Bearer "quoted"', 'Token sk_abc'];
    const replies = await Promise.all(variants.flatMap((auth) => [
      call(`${s.url}/v1/usage`, 'GET', { auth }),
      call(`${s.url}/test/billable`, 'POST', { auth, body: { cost: 1 } }),
    ]));
    replies.forEach((r, i) => {
      const what = `${JSON.stringify(variants[i >> 1])} on ${i % 2 === 0 ? 'usage' : 'billable'}`;
      expect(r.status, what).toBe(401);
      expectErrorBody(r, 401, 'UNAUTHORIZED');
      expect(r.headers.get('www-authenticate'), what).toBe('Bearer');
      expectNoRateHeaders(r);
    });
  });

  it('401 AUTHENTICATION_FAILED for unknown keys (well-formed, one character off, not key-shaped); lower-case "bearer" is accepted', async () => {
    const acct = await createAccount('starter', 10);
    expect(acct.api_key).toMatch(KEY);
    const last = acct.api_key.at(-1)!;
    const offByOne = acct.api_key.slice(0, -1) + (last === 'A' ? 'B' : 'A');
    const unknown = `sk_${'x'.repeat(43)}`;
    const bad = [unknown, offByOne, 'xyz', acct.api_key.slice(0, -1), `${acct.api_key}A`, ADMIN_TOKEN];
    const replies = await Promise.all(bad.flatMap((k) => [usage(k), billable(k, { cost: 1 })]));
    replies.forEach((r, i) => {
      expectErrorBody(r, 401, 'AUTHENTICATION_FAILED');
      expect(r.body.error, bad[i >> 1]).toMatch(/invalid api key/i);
      expect(r.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expectNoRateHeaders(r);
    });
    const lower = await usage(acct.api_key, `bearer ${acct.api_key}`);
    expect(lower.status, lower.text).toBe(200);
    expectRateHeaders(lower);
    const upper = await usage(acct.api_key, `BEARER ${acct.api_key}`);
    expect(upper.status).toBe(200);
    // Nothing was charged by any refused request.
    expect(await ledger(acct.account_id)).toEqual([]);
    expect((await detail(acct.account_id)).credits_remaining).toBe(10);
  });

  it('a revoked key is refused at once (AUTHENTICATION_FAILED); revoking again keeps the first time; the other key still works', async () => {
    const acct = await createAccount('starter', 10);
    const second = await admin('POST', `/accounts/${acct.account_id}/keys`, { name: 'ci' });
    expect(second.status, second.text).toBe(201);
    expect(second.body).toMatchObject({ account_id: acct.account_id, expires_at: null, request_id: second.headers.get('x-request-id') });
    expect(second.body.api_key).toMatch(KEY);
    expect(second.body.prefix).toBe(second.body.api_key.slice(0, 11));
    expect(second.body.key_id).not.toBe(acct.key_id);
    expect((await usage(acct.api_key)).status).toBe(200);

    const first = await admin('DELETE', `/keys/${acct.key_id}`);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ key_id: acct.key_id, account_id: acct.account_id, status: 'revoked' });
    expect(first.body.revoked_at).toMatch(ISO);
    for (const r of [await usage(acct.api_key), await billable(acct.api_key, { cost: 1 })]) {
      expectErrorBody(r, 401, 'AUTHENTICATION_FAILED');
      expect(r.body.error).toMatch(/revoked/i);
      expectNoRateHeaders(r);
    }
    await sleep(15);
    const again = await admin('DELETE', `/keys/${acct.key_id}`);
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(first.body.revoked_at);
    expect(again.body.status).toBe('revoked');

    const other = await billable(second.body.api_key, { cost: 2 });
    expect(other.status, other.text).toBe(200);
    expect(other.body).toMatchObject({ credits_used: 2, remaining_credits: 8 });
    const keys = await admin('GET', `/accounts/${acct.account_id}/keys`);
    expect(keys.status).toBe(200);
    const byId = Object.fromEntries(keys.body.keys.map((k: any) => [k.key_id, k]));
    expect(byId[acct.key_id]).toMatchObject({ status: 'revoked', revoked_at: first.body.revoked_at });
    expect(byId[second.body.key_id]).toMatchObject({ status: 'active', revoked_at: null, name: 'ci' });
  });

  it('an expiring key works until expires_at, then AUTHENTICATION_FAILED', async () => {
    const acct = await createAccount('starter', 10);
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const k = await admin('POST', `/accounts/${acct.account_id}/keys`, { expires_at: expiresAt });
    expect(k.status, k.text).toBe(201);
    expect(k.body.expires_at).toBe(expiresAt);
    const before = await billable(k.body.api_key, { cost: 1 });
    expect(before.status, before.text).toBe(200);
    await sleep(Date.parse(expiresAt) - Date.now() + 100);
    for (const r of [await usage(k.body.api_key), await billable(k.body.api_key, { cost: 1 })]) {
      expectErrorBody(r, 401, 'AUTHENTICATION_FAILED');
      expect(r.body.error).toMatch(/expired/i);
      expectNoRateHeaders(r);
    }
    expect((await usage(acct.api_key)).status).toBe(200);
    const keys = await admin('GET', `/accounts/${acct.account_id}/keys`);
    expect(keys.body.keys.find((x: any) => x.key_id === k.body.key_id)).toMatchObject({ status: 'expired', expires_at: expiresAt });
    expect((await detail(acct.account_id)).credits_remaining).toBe(9);
  });

  it('admin API: no token 401 UNAUTHORIZED, wrong token 401 AUTHENTICATION_FAILED', async () => {
    const none = await admin('GET', '/accounts', undefined, null);
    expectErrorBody(none, 401, 'UNAUTHORIZED');
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const empty = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: '', body: { plan: 'free' } });
    expectErrorBody(empty, 401, 'UNAUTHORIZED');
    const malformed = await call(`${s.url}/admin/v1/accounts`, 'GET', { auth: `Basic ${ADMIN_TOKEN}` });
    expectErrorBody(malformed, 401, 'UNAUTHORIZED');
    for (const token of ['wrong-token-0123456789abcdef', ADMIN_TOKEN.slice(0, -1), `${ADMIN_TOKEN}x`]) {
      const r = await admin('POST', '/accounts', { plan: 'unicorn' }, token);
      expectErrorBody(r, 401, 'AUTHENTICATION_FAILED');
    }
    // An API key is not an admin token.
    const acct = await createAccount('unicorn', 1);
    expectErrorBody(await admin('GET', '/accounts', undefined, acct.api_key), 401, 'AUTHENTICATION_FAILED');
    expectErrorBody(await admin('POST', `/accounts/${acct.account_id}/credits`, { amount: 100 }, acct.api_key), 401, 'AUTHENTICATION_FAILED');
    // Refused admin calls changed nothing.
    const count = (await admin('GET', '/accounts')).body.accounts.length;
    for (const token of [null, 'wrong-token-0123456789abcdef']) expect((await admin('POST', '/accounts', { plan: 'unicorn' }, token)).status).toBe(401);
    expect((await admin('GET', '/accounts')).body.accounts.length).toBe(count);
    expect((await detail(acct.account_id)).credits_remaining).toBe(1);
  });

  it('admin API: without an admin token configured, /admin/v1 does not exist (404)', async () => {
    const bare = await startScourIn(config, adapter, {}, { plugins: [billableOperation], plans: PLANS });
    try {
      const list = await call(`${bare.url}/admin/v1/accounts`, 'GET', { auth: `Bearer ${ADMIN_TOKEN}` });
      expectErrorBody(list, 404, 'NOT_FOUND');
      const create = await call(`${bare.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN_TOKEN}`, body: { plan: 'unicorn' } });
      expectErrorBody(create, 404, 'NOT_FOUND');
      const revoke = await call(`${bare.url}/admin/v1/keys/key_x`, 'DELETE', { auth: `Bearer ${ADMIN_TOKEN}` });
      expectErrorBody(revoke, 404, 'NOT_FOUND');
    } finally {
      await bare.stop();
    }
  });

  it('admin API: hostile bodies are 400 MISSING_PARAMETER naming the field', async () => {
    const acct = await createAccount('free', 5);
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/accounts', { plan: 'gold' }, 'plan'],
      ['POST', '/accounts', {}, 'plan'],
      ['POST', '/accounts', { plan: 'free', credits: -1 }, 'credits'],
      ['POST', '/accounts', { plan: 'free', credits: 1.5 }, 'credits'],
      ['POST', '/accounts', { plan: 'free', credits: '10' }, 'credits'],
      ['POST', '/accounts', { plan: 'free', credits: 2e9 }, 'credits'],
      ['POST', '/accounts', { plan: 'free', owner: 'mallory' }, 'owner'],
      ['POST', '/accounts', { plan: 'free', name: '' }, 'name'],
      ['POST', '/accounts', '{"plan": "free",', 'body'],
      ['POST', '/accounts', '[]', 'body'],
      ['POST', `/accounts/${acct.account_id}/keys`, { expires_at: new Date(Date.now() - 60_000).toISOString() }, 'expires_at'],
      ['POST', `/accounts/${acct.account_id}/keys`, { expires_at: 'next tuesday' }, 'expires_at'],
      ['POST', `/accounts/${acct.account_id}/keys`, { expires_at: 1_900_000_000 }, 'expires_at'],
      ['POST', `/accounts/${acct.account_id}/credits`, { amount: 0 }, 'amount'],
      ['POST', `/accounts/${acct.account_id}/credits`, { amount: -5 }, 'amount'],
      ['POST', `/accounts/${acct.account_id}/credits`, { amount: 2e9 }, 'amount'],
      ['POST', `/accounts/${acct.account_id}/credits`, { amount: 2.5 }, 'amount'],
      ['POST', `/accounts/${acct.account_id}/credits`, {}, 'amount'],
      ['PATCH', `/accounts/${acct.account_id}`, { plan: 'gold' }, 'plan'],
      ['PATCH', `/accounts/${acct.account_id}`, { plan: 'starter', credits: 5 }, 'credits'],
    ];
    const before = (await admin('GET', '/accounts')).body.accounts.length;
    for (const [method, path, body, field] of cases) {
      const r = await admin(method, path, body);
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`).toBe(400);
      expectValidation(r, field);
    }
    // Nothing changed: no account made, the plan, credits and keys as they were.
    expect((await admin('GET', '/accounts')).body.accounts.length).toBe(before);
    const d = await detail(acct.account_id);
    expect(d).toMatchObject({ plan: 'free', credits_remaining: 5 });
    expect(d.keys).toHaveLength(1);
  });

  it('admin API: unknown account or key is 404 NOT_FOUND', async () => {
    const id = 'acct_doesnotexist';
    const replies = await Promise.all([
      admin('GET', `/accounts/${id}`),
      admin('PATCH', `/accounts/${id}`, { plan: 'starter' }),
      admin('POST', `/accounts/${id}/credits`, { amount: 5 }),
      admin('POST', `/accounts/${id}/keys`, {}),
      admin('GET', `/accounts/${id}/keys`),
      admin('GET', `/accounts/${id}/ledger`),
      admin('DELETE', '/keys/key_doesnotexist'),
    ]);
    for (const r of replies) expectErrorBody(r, 404, 'NOT_FOUND');
  });

  it('admin API: 201 shapes; the key is shown once and never by a GET; plan changes take effect at once; top-ups show in /v1/usage', async () => {
    const created = await admin('POST', '/accounts', { plan: 'starter', name: 'Acme' });
    expect(created.status).toBe(201);
    const a = created.body;
    expect(Object.keys(a).sort()).toEqual(['account_id', 'api_key', 'credits_remaining', 'key_id', 'plan', 'request_id', 'reset_date']);
    expect(a.api_key).toMatch(KEY);
    expect(a).toMatchObject({ plan: 'starter', credits_remaining: 5_000, request_id: created.headers.get('x-request-id') });
    expect(a.reset_date).toMatch(ISO);
    expect(Date.parse(a.reset_date)).toBeGreaterThan(Date.now() + 27 * 86_400_000);
    const withCredits = await createAccount('free', 7);
    expect(withCredits.credits_remaining).toBe(7);
    expect(withCredits.api_key).not.toBe(a.api_key);

    const list = await admin('GET', '/accounts');
    const listed = list.body.accounts.find((x: any) => x.account_id === a.account_id);
    expect(listed).toMatchObject({ name: 'Acme', plan: 'starter', credits_remaining: 5_000, credits_reserved: 0, monthly_credits: 5_000, reset_date: a.reset_date });
    expect(listed.period_start).toMatch(ISO);
    expect(listed.created_at).toMatch(ISO);
    const d = await admin('GET', `/accounts/${a.account_id}`);
    expect(d.body.keys).toEqual([expect.objectContaining({ key_id: a.key_id, prefix: a.api_key.slice(0, 11), status: 'active', name: 'default', expires_at: null, revoked_at: null })]);
    expect(d.body.breakdown).toEqual([]);
    const keys = await admin('GET', `/accounts/${a.account_id}/keys`);
    const another = await admin('POST', `/accounts/${a.account_id}/keys`, {});
    expect(another.status).toBe(201);
    const keysAfter = await admin('GET', `/accounts/${a.account_id}/keys`);
    expect(keysAfter.body.keys).toHaveLength(2);
    for (const r of [list, d, keys, keysAfter, await admin('GET', `/accounts/${a.account_id}/ledger`)]) {
      expect(r.status).toBe(200);
      expect(r.text).not.toContain(a.api_key);
      expect(r.text).not.toContain(another.body.api_key);
      expect(r.text).not.toContain(withCredits.api_key);
      expect(r.text).not.toContain(a.api_key.slice(11));
    }

    // Plan changes apply to the very next request.
    const u1 = await usage(a.api_key);
    expect(u1.headers.get('x-ratelimit-limit')).toBe('300');
    expect(u1.headers.get('x-ratelimit-window')).toBe('60');
    const patched = await admin('PATCH', `/accounts/${a.account_id}`, { plan: 'builder' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ plan: 'builder', credits_remaining: 5_000, monthly_credits: 25_000 });
    const u2 = await usage(a.api_key);
    expect(u2.headers.get('x-ratelimit-limit')).toBe('600');
    expect(u2.body).toMatchObject({ plan: 'builder', monthly_credits: 25_000, credits_remaining: 5_000 });
    expect((await admin('PATCH', `/accounts/${a.account_id}`, { plan: 'free' })).status).toBe(200);
    const u3 = await usage(a.api_key);
    expect(u3.headers.get('x-ratelimit-limit')).toBe('3');
    expect(u3.headers.get('x-ratelimit-window')).toBe('2');
    // Free gates contacts now; it did not a moment ago.
    expectErrorBody(await billable(a.api_key, { include_contacts: true }), 403, 'FORBIDDEN');
    expect((await admin('PATCH', `/accounts/${a.account_id}`, { plan: 'unicorn' })).status).toBe(200);
    expect((await billable(a.api_key, { include_contacts: true, include_social: true })).status).toBe(200);

    // Top-up.
    const top = await admin('POST', `/accounts/${withCredits.account_id}/credits`, { amount: 25 });
    expect(top.status, top.text).toBe(200);
    expect(top.body).toMatchObject({ account_id: withCredits.account_id, credits_remaining: 32 });
    const u4 = await usage(withCredits.api_key);
    expect(u4.status).toBe(200);
    expect(u4.body.credits_remaining).toBe(32);
  });

  it('/v1/usage: every field, and they move with billable requests of different costs', async () => {
    const acct = await createAccount('starter', 1_000);
    const t0 = Date.now();
    const r0 = await usage(acct.api_key);
    expect(r0.status, r0.text).toBe(200);
    expectRateHeaders(r0);
    const u0 = r0.body;
    expect(Object.keys(u0).sort()).toEqual(
      ['breakdown', 'credits_remaining', 'credits_reserved', 'credits_used', 'monthly_credits', 'period_start', 'plan', 'request_id', 'reset_date'],
    );
    expect(u0).toMatchObject({ credits_used: 0, credits_remaining: 1_000, credits_reserved: 0, plan: 'starter', monthly_credits: 5_000, breakdown: [] });
    expect(u0.request_id).toBe(r0.headers.get('x-request-id'));
    expect(u0.reset_date).toMatch(ISO);
    expect(u0.period_start).toMatch(ISO);
    expect(Date.parse(u0.period_start)).toBeLessThanOrEqual(t0 + 1000);
    expect(Date.parse(u0.period_start)).toBeGreaterThan(t0 - 60_000);
    expect(Date.parse(u0.reset_date)).toBeGreaterThan(Date.now());
    const days = (Date.parse(u0.reset_date) - Date.parse(u0.period_start)) / 86_400_000;
    expect(days).toBeGreaterThanOrEqual(28);
    expect(days).toBeLessThanOrEqual(31);
    expect(u0.reset_date).toBe(acct.reset_date);

    let remaining = 1_000;
    for (const cost of [3, 5, 1]) {
      const b = await billable(acct.api_key, { cost });
      expect(b.status, b.text).toBe(200);
      remaining -= cost;
      expect(b.body).toEqual({ credits_used: cost, remaining_credits: remaining, request_id: b.headers.get('x-request-id') });
    }
    const u1 = (await usage(acct.api_key)).body;
    expect(u1).toMatchObject({
      credits_used: 9, credits_remaining: 991, credits_reserved: 0, plan: 'starter',
      period_start: u0.period_start, reset_date: u0.reset_date,
      breakdown: [{ operation: 'billable', credits: 9, requests: 3 }],
    });
    const d = await detail(acct.account_id);
    expect(d.breakdown).toEqual([{ operation: 'billable', credits: 9, requests: 3 }]);
  });

  it('402 NO_CREDITS with credits_remaining, credits_required, upgrade_url and rate headers; the ledger holds exactly the charges', async () => {
    const empty = await createAccount('free', 0);
    const none = await billable(empty.api_key, { cost: 1 });
    expectErrorBody(none, 402, 'NO_CREDITS');
    expect(none.body).toMatchObject({ credits_remaining: 0, credits_required: 1, upgrade_url: UPGRADE_URL });
    expectRateHeaders(none);

    const four = await createAccount('starter', 4);
    const tooMuch = await billable(four.api_key, { cost: 5 });
    expectErrorBody(tooMuch, 402, 'NO_CREDITS');
    expect(tooMuch.body).toMatchObject({ credits_remaining: 4, credits_required: 5, upgrade_url: UPGRADE_URL });
    expectRateHeaders(tooMuch);
    const exact = await billable(four.api_key, { cost: 4 });
    expect(exact.status, exact.text).toBe(200);
    expect(exact.body).toMatchObject({ credits_used: 4, remaining_credits: 0 });
    expectRateHeaders(exact);
    const after = await billable(four.api_key, { cost: 1 });
    expectErrorBody(after, 402, 'NO_CREDITS');
    expect(after.body).toMatchObject({ credits_remaining: 0, credits_required: 1 });
    expectRateHeaders(after);

    expect(await ledger(empty.account_id)).toEqual([]);
    const rows = await ledger(four.account_id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ operation: 'billable', credits: 4, request_id: exact.headers.get('x-request-id') });
    expect(rows[0]!.created_at).toMatch(ISO);
    const u = (await usage(four.api_key)).body;
    expect(u).toMatchObject({ credits_used: 4, credits_remaining: 0, credits_reserved: 0 });
  });

  it('failed work costs nothing: 400, balance, holds and ledger unchanged', async () => {
    const acct = await createAccount('starter', 20);
    const ok = await billable(acct.api_key, { cost: 2 });
    expect(ok.status).toBe(200);
    const failed = await billable(acct.api_key, { cost: 5, fail: true });
    expectValidation(failed, 'fail');
    expectRateHeaders(failed);
    const failedSlow = await billable(acct.api_key, { cost: 5, fail: true, delay_ms: 50 });
    expectValidation(failedSlow, 'fail');
    const invalid = await billable(acct.api_key, { cost: -1 });
    expectValidation(invalid, 'cost');
    expectRateHeaders(invalid);
    const unknownField = await billable(acct.api_key, { cost: 1, tip: 100 });
    expectValidation(unknownField, 'tip');
    const malformed = await call(`${s.url}/test/billable`, 'POST', { auth: `Bearer ${acct.api_key}`, body: '{"cost": 1' });
    expectValidation(malformed, 'body');
    expectRateHeaders(malformed);
    const u = (await usage(acct.api_key)).body;
    expect(u).toMatchObject({ credits_used: 2, credits_remaining: 18, credits_reserved: 0, breakdown: [{ operation: 'billable', credits: 2, requests: 1 }] });
    const rows = await ledger(acct.account_id);
    expect(rows.map((r) => r.request_id)).toEqual([ok.headers.get('x-request-id')]);
  });

  it('client abort releases the hold and the concurrency slot; nothing is charged', async () => {
    const acct = await createAccount('free', 10);
    const controller = new AbortController();
    const pending = billable(acct.api_key, { cost: 3, delay_ms: 3000 }, controller.signal);
    pending.catch(() => {});
    // The hold is taken while the work runs.
    const t0 = Date.now();
    let held = 0;
    while (held === 0 && Date.now() - t0 < 2000) {
      held = (await detail(acct.account_id)).credits_reserved;
      if (held === 0) await sleep(20);
    }
    expect(held).toBe(3);
    await sleep(Math.max(0, 300 - (Date.now() - t0)));
    controller.abort();
    const abortedAt = Date.now();
    await expect(pending).rejects.toThrow();
    let d = await detail(acct.account_id);
    while (d.credits_reserved !== 0 && Date.now() - abortedAt < 1500) {
      await sleep(20);
      d = await detail(acct.account_id);
    }
    expect(d.credits_reserved).toBe(0);
    expect(d.credits_remaining).toBe(10);
    expect(await ledger(acct.account_id)).toEqual([]);
    // The slot (Free: one billable in flight) is free again.
    const next = await billable(acct.api_key, { cost: 1 });
    expect(next.status, next.text).toBe(200);
    expect(next.body).toMatchObject({ credits_used: 1, remaining_credits: 9 });
    aborted = { accountId: acct.account_id, abortedAt, balance: 9, ledgerRows: 1 };
  });

  it('429 RATE_LIMITED on a window: remaining counts down in the headers, Retry-After is honoured', async () => {
    const acct = await createAccount('free', 10);
    // Start early in a fresh 2-second window (windows are aligned to the epoch) so four requests cannot straddle two.
    if (Date.now() % 2000 > 1200) await sleep(2000 - (Date.now() % 2000) + 20);
    const replies: Reply[] = [];
    for (let i = 0; i < 3; i++) replies.push(await usage(acct.api_key));
    replies.forEach((r, i) => {
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('3');
      expect(r.headers.get('x-ratelimit-window')).toBe('2');
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 2);
    });
    const over = await usage(acct.api_key);
    expectErrorBody(over, 429, 'RATE_LIMITED');
    expect(Number.isInteger(over.body.retry_after)).toBe(true);
    expect(over.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(over.body.retry_after).toBeLessThanOrEqual(2);
    expect(over.body).toMatchObject({ limit: 3, remaining: 0, upgrade_url: UPGRADE_URL });
    expect(over.body.reset).toBe(Number(replies[0]!.headers.get('x-ratelimit-reset')));
    expect(over.body.reset).toBe(Number(over.headers.get('x-ratelimit-reset')));
    expect(over.headers.get('retry-after')).toBe(String(over.body.retry_after));
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(over.body.error).toMatch(/usage/);
    expectRateHeaders(over);
    // Other operations have their own windows.
    expect((await billable(acct.api_key, { cost: 1 })).status).toBe(200);
    await sleep(over.body.retry_after * 1000);
    const after = await usage(acct.api_key);
    expect(after.status, after.text).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('429 RATE_LIMITED on concurrency: of two at once on Free exactly one runs; the slot is released afterwards', async () => {
    const acct = await createAccount('free', 10);
    const both = await Promise.all([billable(acct.api_key, { cost: 1, delay_ms: 800 }), billable(acct.api_key, { cost: 1, delay_ms: 800 })]);
    const ok = both.filter((r) => r.status === 200);
    const refused = both.filter((r) => r.status === 429);
    expect(ok, both.map((r) => r.text).join('\n')).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const r = refused[0]!;
    expectErrorBody(r, 429, 'RATE_LIMITED');
    expect(r.body.error).toMatch(/concurrency/i);
    expect(r.body).toMatchObject({ retry_after: 1, limit: 1, remaining: 0, upgrade_url: UPGRADE_URL });
    expect(Number.isInteger(r.body.reset)).toBe(true);
    expect(r.headers.get('retry-after')).toBe('1');
    expectRateHeaders(r);
    expectRateHeaders(ok[0]!);
    const next = await billable(acct.api_key, { cost: 1 });
    expect(next.status, next.text).toBe(200);
    expect(next.body.remaining_credits).toBe(8);
    expect(await ledger(acct.account_id)).toHaveLength(2);
  });

  it('403 FORBIDDEN gates contacts and social by plan, with upgrade_url; a 403 costs nothing', async () => {
    const expectations: Record<string, { contacts: number; social: number }> = {
      free: { contacts: 403, social: 403 },
      starter: { contacts: 200, social: 403 },
      builder: { contacts: 200, social: 200 },
      unicorn: { contacts: 200, social: 200 },
    };
    await Promise.all(Object.entries(expectations).map(async ([plan, want]) => {
      const acct = await createAccount(plan, 100);
      const contacts = await billable(acct.api_key, { cost: 2, include_contacts: true });
      const social = await billable(acct.api_key, { cost: 2, include_social: true });
      const both = await billable(acct.api_key, { cost: 2, include_contacts: true, include_social: true });
      expect(contacts.status, `${plan} contacts: ${contacts.text}`).toBe(want.contacts);
      expect(social.status, `${plan} social: ${social.text}`).toBe(want.social);
      expect(both.status, `${plan} both`).toBe(want.social === 200 && want.contacts === 200 ? 200 : 403);
      for (const r of [contacts, social, both]) {
        expectRateHeaders(r);
        if (r.status === 403) {
          expectErrorBody(r, 403, 'FORBIDDEN');
          expect(r.body.upgrade_url).toBe(UPGRADE_URL);
        }
      }
      if (want.contacts === 403) expect(contacts.body.error).toMatch(/include_contacts.*Starter/);
      if (want.social === 403) expect(social.body.error).toMatch(/include_social.*Builder/);
      const charged = [contacts, social, both].filter((r) => r.status === 200).length * 2;
      const d = await detail(acct.account_id);
      expect(d).toMatchObject({ credits_remaining: 100 - charged, credits_reserved: 0 });
      expect(await ledger(acct.account_id)).toHaveLength(charged / 2);
    }));
  });

  it('money under concurrency: 200 requests at once on 50 credits give exactly 50 charges and 150 NO_CREDITS', async () => {
    const acct = await createAccount('starter', 50);
    const replies = await Promise.all(Array.from({ length: 200 }, () => billable(acct.api_key, { cost: 1, delay_ms: 5 })));
    const byStatus = new Map<number, Reply[]>();
    for (const r of replies) byStatus.set(r.status, [...(byStatus.get(r.status) ?? []), r]);
    expect([...byStatus.keys()].sort(), [...new Set(replies.map((r) => r.text))].slice(0, 5).join('\n')).toEqual([200, 402]);
    expect(byStatus.get(200)).toHaveLength(50);
    expect(byStatus.get(402)).toHaveLength(150);
    for (const r of byStatus.get(402)!) {
      expect(r.body.code).toBe('NO_CREDITS');
      expect(r.body.credits_required).toBe(1);
      expectRateHeaders(r);
    }
    for (const r of byStatus.get(200)!) expectRateHeaders(r);
    const u = (await usage(acct.api_key)).body;
    expect(u).toMatchObject({ credits_remaining: 0, credits_used: 50, credits_reserved: 0, breakdown: [{ operation: 'billable', credits: 50, requests: 50 }] });
    const rows = await ledger(acct.account_id);
    expect(rows).toHaveLength(50);
    const ids = new Set(rows.map((r) => r.request_id));
    expect(ids.size).toBe(50);
    expect(ids).toEqual(new Set(byStatus.get(200)!.map((r) => r.headers.get('x-request-id'))));
    for (const row of rows) expect(row).toMatchObject({ operation: 'billable', credits: 1 });
  }, 30_000);

  it('every answer past auth carries the four x-ratelimit-* headers (200, 400, 402, 403, 429); 401s do not', async () => {
    const acct = await createAccount('free', 1);
    const answers: Reply[] = [];
    answers.push(await billable(acct.api_key, { cost: 1 })); // 200
    answers.push(await billable(acct.api_key, { cost: 'one' })); // 400
    answers.push(await billable(acct.api_key, { cost: 1 })); // 402
    answers.push(await billable(acct.api_key, { include_social: true })); // 403
    const slow = billable(acct.api_key, { cost: 0, delay_ms: 800 });
    await sleep(200);
    answers.push(await billable(acct.api_key, { cost: 0 })); // 429 (concurrency)
    answers.push(await slow);
    expect(answers.map((r) => r.status)).toEqual([200, 400, 402, 403, 429, 200]);
    for (const r of answers) expectRateHeaders(r);
    const unauth = [await usage('', ''), await usage(`sk_${'0'.repeat(43)}`), await billable('not a key')];
    for (const r of unauth) {
      expect(r.status).toBe(401);
      expectNoRateHeaders(r);
    }
  });

  it('an aborted request is never charged later, when its work would have finished', async () => {
    expect(aborted).toBeDefined();
    const a = aborted!;
    await sleep(Math.max(0, a.abortedAt + 3200 - Date.now()));
    const d = await detail(a.accountId);
    expect(d).toMatchObject({ credits_remaining: a.balance, credits_reserved: 0 });
    expect(await ledger(a.accountId)).toHaveLength(a.ledgerRows);
  });

  it('neither API keys nor the admin token ever reach the logs', () => {
    const logs = s.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(issued.length).toBeGreaterThanOrEqual(20);
    for (const k of issued) expect(logs).not.toContain(k.slice(11));
    expect(logs).not.toContain(ADMIN_TOKEN);
  });
});
