/**
 * POST /v1/scrape/bulk with callback_url (asynchronous mode), embedded: 202
 * with a job, GET /v1/scrape/bulk/{job_id} for its own account only, the
 * signed webhook at a loopback receiver that verifies every signature,
 * retries on the configured schedule with one delivery id, giving up when
 * the schedule is used up, only successful URLs billed, and hostile
 * callbacks refused before anything is stored.
 */
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../adapters/webhooks/sign.js';
import { until } from '../support/processes.js';
import { startScourIn, type Running } from '../support/server.js';
import { startCountingProxy } from '../support/proxies.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'bulk-async-admin-token-0123456';

async function account(base: string, plan: string, credits: number): Promise<{ id: string; key: string }> {
  const r = await fetch(`${base}/admin/v1/accounts`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan, credits }),
  });
  const b = (await r.json()) as { account_id: string; api_key: string };
  return { id: b.account_id, key: b.api_key };
}

async function bulk(base: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${base}/v1/scrape/bulk`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function job(url: string, key: string): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: await r.json() };
}

async function usage(base: string, key: string): Promise<{ credits_remaining: number; credits_used: number; credits_reserved: number }> {
  return (await (await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as never;
}

describe('POST /v1/scrape/bulk with callback_url (embedded)', () => {
  let site: TargetSite;
  let s: Running;
  const receivers: WebhookReceiver[] = [];
  const proxies: Awaited<ReturnType<typeof startCountingProxy>>[] = [];

  beforeAll(async () => {
    site = await startTargetSite();
    proxies.push(await startCountingProxy({ fail: true }), await startCountingProxy());
    s = await startScourIn('embedded', 'uws', {
      adminToken: ADMIN, allowPrivateTargets: 'loopback', webhookSchedule: [1, 1, 2],
      proxies: `datacenter:FR=${proxies[0]!.url},datacenter:FR=${proxies[1]!.url}`,
    });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    for (const p of proxies) await p.close();
    for (const r of receivers) await r.close();
    await site?.close();
  });

  /** The account's signing secret, as the admin API would show it. */
  const secretOf = (accountId: string) =>
    Effect.runPromise(s.scour.jobStore.ensureWebhookSecret(accountId, newWebhookSecret(), Date.now()));

  it('answers 202 with a job, runs it, and delivers signed results once; only successes are billed', async () => {
    const a = await account(s.url, 'starter', 100);
    const rx = await startWebhookReceiver({ secret: await secretOf(a.id) });
    receivers.push(rx);
    const urls = [`${site.url}/html/simple`, `${site.url}/blocked`, 'ftp://example.com/', `${site.url}/status/404`, `${site.url}/links`];
    const r = await bulk(s.url, a.key, { urls, extract_meta: true, callback_url: rx.url });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body).toMatchObject({ status: 'queued', total: 5 });
    expect(r.body.job_id).toMatch(/^bulk_[0-9a-f]{32}$/);
    expect(r.body.status_url).toBe(`${s.url}/v1/scrape/bulk/${r.body.job_id}`);
    expect(typeof r.body.request_id).toBe('string');

    const [hook] = await rx.waitFor(1, 20_000);
    expect(hook!.verified).toBe(true);
    expect(hook!.event).toBe('bulk_scrape.completed');
    expect(hook!.attempt).toBe(1);
    const payload = hook!.body as any;
    expect(payload).toMatchObject({ event: 'bulk_scrape.completed', job_id: r.body.job_id, delivery_id: hook!.deliveryId, attempt: 1 });
    expect(payload.data.status).toBe('completed');
    expect(payload.data.results.map((x: { url: string }) => x.url)).toEqual(urls);
    expect(payload.data.results.map((x: { success: boolean }) => x.success)).toEqual([true, false, false, true, true]);
    expect(payload.data.results[0].result.meta_data.title).toBe('Simple page');
    expect(payload.data.results[1].error).toMatchObject({ code: 'TARGET_BLOCKED' });
    expect(payload.data.results[2].error).toMatchObject({ code: 'TARGET_NOT_ALLOWED', validation_errors: [{ field: 'urls[2]' }] });
    expect(payload.data.progress).toEqual({ total: 5, done: 5, succeeded: 3, failed: 2, pending: 0 });
    expect(payload.data.credits_used).toBe(12);

    const st = await until(() => job(r.body.status_url, a.key), (v) => v.body.webhook?.deliveries?.[0]?.status === 'delivered');
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ job_id: r.body.job_id, status: 'completed', callback_url: rx.url, credits_used: 12 });
    expect(st.body.results).toHaveLength(5);
    expect(st.body.webhook.deliveries).toHaveLength(1);
    expect(st.body.webhook.deliveries[0]).toMatchObject({ delivery_id: hook!.deliveryId, event: 'bulk_scrape.completed', attempts: 1 });
    expect(st.body.webhook.deliveries[0].history).toEqual([expect.objectContaining({ attempt: 1, ok: true, status_code: 200, error: null, next_attempt_at: null })]);
    expect(await usage(s.url, a.key)).toMatchObject({ credits_used: 12, credits_remaining: 88, credits_reserved: 0 });
    // Nothing more arrives: one delivery, one attempt.
    await new Promise((res) => setTimeout(res, 1500));
    expect(rx.received).toHaveLength(1);
  });

  it('goes through proxies in a job too, past a failing one, retrying failed URLs when asked', async () => {
    const a = await account(s.url, 'unicorn', 1000);
    const rx = await startWebhookReceiver({ secret: await secretOf(a.id) });
    receivers.push(rx);
    const [bad, good] = proxies;
    const badBefore = bad!.count();
    const goodBefore = good!.count();
    const urls = [`${site.url}/html/simple?p=1`, `${site.url}/links?p=2`, `${site.url}/images?p=3`, 'http://127.0.0.1:1/'];
    const r = await bulk(s.url, a.key, { urls, proxy_country: 'FR', retry_failed: true, max_retries: 2, callback_url: rx.url });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const [hook] = await rx.waitFor(1, 30_000);
    const data = (hook!.body as { data: any }).data;
    expect(data.results.map((x: { success: boolean }) => x.success)).toEqual([true, true, true, false]);
    for (const x of data.results.slice(0, 3)) expect(x.result.proxy).toEqual({ type: 'datacenter', country: 'FR' });
    expect(data.results[3]).toMatchObject({ attempts: 3, error: { code: 'TARGET_UNREACHABLE' } });
    expect(bad!.count() - badBefore).toBeGreaterThanOrEqual(1);
    expect(good!.count() - goodBefore).toBeGreaterThanOrEqual(3);
    expect(data.credits_used).toBe(3 * 3);
  }, 40_000);

  it('shows a job to its own account only', async () => {
    const a = await account(s.url, 'starter', 100);
    const b = await account(s.url, 'starter', 100);
    const rx = await startWebhookReceiver({ secret: await secretOf(a.id) });
    receivers.push(rx);
    const r = await bulk(s.url, a.key, { urls: [`${site.url}/html/simple`], callback_url: rx.url });
    expect(r.status).toBe(202);
    const mine = await job(r.body.status_url, a.key);
    expect(mine.status).toBe(200);
    expect(['queued', 'running', 'completed']).toContain(mine.body.status);
    const theirs = await job(r.body.status_url, b.key);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({ code: 'NOT_FOUND' });
    expect((await job(`${s.url}/v1/scrape/bulk/bulk_${'0'.repeat(32)}`, a.key)).status).toBe(404);
    expect((await job(`${s.url}/v1/scrape/bulk/%00%2F..`, a.key)).status).toBe(404);
    const anon = await fetch(r.body.status_url);
    expect(anon.status).toBe(401);
    await rx.waitFor(1, 20_000);
  });

  it('retries a failing receiver on the schedule with one delivery id, and records every attempt', async () => {
    const a = await account(s.url, 'starter', 100);
    const rx = await startWebhookReceiver({ secret: await secretOf(a.id), failFirst: 2 });
    receivers.push(rx);
    const r = await bulk(s.url, a.key, { urls: [`${site.url}/html/simple`], callback_url: rx.url });
    expect(r.status).toBe(202);
    const got = await rx.waitFor(3, 30_000);
    expect(got.map((g) => g.attempt)).toEqual([1, 2, 3]);
    expect(got.map((g) => g.answeredWith)).toEqual([500, 500, 200]);
    expect(got.every((g) => g.verified === true)).toBe(true);
    expect(new Set(got.map((g) => g.deliveryId)).size).toBe(1);
    expect(rx.uniqueDeliveries()).toHaveLength(1);
    // Schedule 1 s, 1 s (+-20% jitter), measured at the receiver.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(750);
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(750);
    const st = await until(() => job(r.body.status_url, a.key), (v) => v.body.webhook?.deliveries?.[0]?.status === 'delivered');
    const d = st.body.webhook.deliveries[0];
    expect(d.attempts).toBe(3);
    expect(d.history.map((h: { status_code: number }) => h.status_code)).toEqual([500, 500, 200]);
    expect(d.history[0].error).toMatch(/500/);
    expect(d.history[0].next_attempt_at).not.toBeNull();
    expect(d.history[2].next_attempt_at).toBeNull();
  }, 40_000);

  it('gives up once the schedule is used up, and says so', async () => {
    const a = await account(s.url, 'starter', 100);
    const rx = await startWebhookReceiver({ secret: await secretOf(a.id), status: 503 });
    receivers.push(rx);
    const r = await bulk(s.url, a.key, { urls: [`${site.url}/html/simple`], callback_url: rx.url });
    await rx.waitFor(4, 30_000);
    const st = await until(() => job(r.body.status_url, a.key), (v) => v.body.webhook?.deliveries?.[0]?.status === 'failed');
    expect(st.body.webhook.deliveries[0].attempts).toBe(4);
    expect(st.body.webhook.deliveries[0].next_attempt_at).toBeNull();
    await new Promise((res) => setTimeout(res, 2500));
    expect(rx.received).toHaveLength(4);
  }, 40_000);

  it('refuses hostile callbacks before storing anything, with the spec error body', async () => {
    const a = await account(s.url, 'starter', 100);
    const urls = [`${site.url}/html/simple`];
    const cases: [unknown, number, string, string][] = [
      [42, 400, 'MISSING_PARAMETER', 'callback_url'],
      ['', 400, 'MISSING_PARAMETER', 'callback_url'],
      [null, 400, 'MISSING_PARAMETER', 'callback_url'],
      [['http://127.0.0.1/'], 400, 'MISSING_PARAMETER', 'callback_url'],
      ['not a url', 400, 'MISSING_PARAMETER', 'callback_url'],
      ['ftp://127.0.0.1/hook', 400, 'TARGET_NOT_ALLOWED', 'callback_url'],
      ['javascript:alert(1)', 400, 'TARGET_NOT_ALLOWED', 'callback_url'],
      [`http://127.0.0.1/${'a'.repeat(2100)}`, 400, 'MISSING_PARAMETER', 'callback_url'],
      ['http://169.254.169.254/latest/meta-data/', 400, 'TARGET_NOT_ALLOWED', 'callback_url'],
      ['http://[::ffff:169.254.169.254]/', 400, 'TARGET_NOT_ALLOWED', 'callback_url'],
      ['http://0.0.0.0:9/', 400, 'TARGET_NOT_ALLOWED', 'callback_url'],
    ];
    for (const [callback_url, status, code, field] of cases) {
      const r = await bulk(s.url, a.key, { urls, callback_url });
      expect(r.status, JSON.stringify([callback_url, r.body])).toBe(status);
      expect(r.body.code).toBe(code);
      expect(r.body.validation_errors?.[0]?.field ?? r.body.field, JSON.stringify(r.body)).toBe(field);
      expect(typeof r.body.request_id).toBe('string');
    }
    expect(await usage(s.url, a.key)).toMatchObject({ credits_used: 0, credits_remaining: 100, credits_reserved: 0 });
  });

  it('answers 402 at submission when the account cannot pay for every valid URL, and holds nothing after', async () => {
    const a = await account(s.url, 'starter', 3);
    const rx = await startWebhookReceiver({ secret: await secretOf(a.id) });
    receivers.push(rx);
    const r = await bulk(s.url, a.key, { urls: [`${site.url}/html/simple`, `${site.url}/links`], callback_url: rx.url });
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ code: 'NO_CREDITS', credits_required: 6 });
    const ok = await bulk(s.url, a.key, { urls: [`${site.url}/html/simple`, 'ftp://x/'], callback_url: rx.url });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    await rx.waitFor(1, 20_000);
    expect(await usage(s.url, a.key)).toMatchObject({ credits_used: 3, credits_remaining: 0, credits_reserved: 0 });
  });
});
