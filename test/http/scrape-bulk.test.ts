/**
 * POST /v1/scrape/bulk, synchronous mode, over the real server against the
 * loopback target site: one result per URL in input order (mixed successes
 * and failures), only successes charged, bad URLs failing their item only,
 * the bounds (100 URLs, concurrency), retries through another proxy, and
 * hostile requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScourIn, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startCountingProxy } from '../support/proxies.js';

const ADMIN = 'bulk-contract-admin-token-01234';

async function account(base: string, plan: string, credits: number): Promise<{ id: string; key: string }> {
  const r = await fetch(`${base}/admin/v1/accounts`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan, credits }),
  });
  const b = (await r.json()) as { account_id: string; api_key: string };
  return { id: b.account_id, key: b.api_key };
}

async function bulk(base: string, key: string, body: unknown, signal?: AbortSignal): Promise<{ status: number; body: any }> {
  const r = await fetch(`${base}/v1/scrape/bulk`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal,
  });
  return { status: r.status, body: await r.json() };
}

async function usage(base: string, key: string): Promise<{ credits_remaining: number; credits_reserved: number; credits_used: number }> {
  return (await (await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as never;
}

describe('POST /v1/scrape/bulk (synchronous)', () => {
  let site: TargetSite;
  let s: Running;
  const proxies: Awaited<ReturnType<typeof startCountingProxy>>[] = [];

  beforeAll(async () => {
    site = await startTargetSite();
    proxies.push(await startCountingProxy({ fail: true }), await startCountingProxy(), await startCountingProxy({ blockedExit: true }), await startCountingProxy());
    s = await startScourIn('embedded', 'uws', {
      adminToken: ADMIN, allowPrivateTargets: 'loopback',
      proxies: `datacenter:FR=${proxies[0]!.url},datacenter:FR=${proxies[1]!.url},datacenter:DE=${proxies[2]!.url},datacenter:DE=${proxies[3]!.url}`,
    });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    for (const p of proxies) await p.close();
    await site?.close();
  });

  it('answers one result per URL in input order; only successful URLs are charged', async () => {
    const a = await account(s.url, 'starter', 100);
    const urls = [`${site.url}/html/simple`, `${site.url}/blocked`, 'ftp://example.com/', `${site.url}/status/404`, 'http://169.254.169.254/', `${site.url}/links`];
    const r = await bulk(s.url, a.key, { urls, extract_meta: true });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.results.map((x: { url: string }) => x.url)).toEqual(urls);
    expect(r.body.results.map((x: { success: boolean }) => x.success)).toEqual([true, false, false, true, false, true]);
    expect(r.body.results[0].result).toMatchObject({ status_code: 200, final_url: urls[0] });
    expect(r.body.results[0].result.meta_data.title).toBe('Simple page');
    expect(r.body.results[1].error).toMatchObject({ code: 'TARGET_BLOCKED', status_code: 403 });
    expect(r.body.results[2].error).toMatchObject({ code: 'TARGET_NOT_ALLOWED', validation_errors: [{ field: 'urls[2]' }] });
    expect(r.body.results[2].attempts).toBe(0);
    expect(r.body.results[3].result.status_code).toBe(404);
    expect(r.body.results[4].error.code).toBe('TARGET_NOT_ALLOWED');
    expect(r.body).toMatchObject({ total: 6, succeeded: 3, failed: 3, credits_used: 12, remaining_credits: 88 });
    expect(await usage(s.url, a.key)).toMatchObject({ credits_remaining: 88, credits_reserved: 0, credits_used: 12 });
  });

  it('refuses the request only when no URL can be scraped, or when it is malformed', async () => {
    const a = await account(s.url, 'starter', 100);
    const none = await bulk(s.url, a.key, { urls: ['ftp://a/', 'http://169.254.169.254/latest/'] }); // metadata: refused even with private targets allowed
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('TARGET_NOT_ALLOWED');
    expect(none.body.validation_errors.map((v: { field: string }) => v.field)).toEqual(['urls[0]', 'urls[1]']);
    const cases: [unknown, string][] = [
      [{}, 'urls'],
      [{ urls: [] }, 'urls'],
      [{ urls: Array.from({ length: 101 }, (_, i) => `${site.url}/html/simple?${i}`) }, 'urls'],
      [{ urls: [42] }, 'urls[0]'],
      [{ urls: [`${site.url}/`], concurrent_requests: 0 }, 'concurrent_requests'],
      [{ urls: [`${site.url}/`], max_retries: 9, retry_failed: true }, 'max_retries'],
      [{ urls: [`${site.url}/`], max_retries: 1 }, 'max_retries'],
      [{ urls: [`${site.url}/`], screenshot: true }, 'screenshot'],
      [{ urls: [`${site.url}/`], url: `${site.url}/` }, 'url'],
    ];
    for (const [body, field] of cases) {
      const r = await bulk(s.url, a.key, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      const fields = (r.body.validation_errors as { field: string }[]).map((v) => v.field);
      expect(fields.some((f) => f.startsWith(field)), `${JSON.stringify(body).slice(0, 80)} -> ${JSON.stringify(fields)}`).toBe(true);
    }
    expect(await usage(s.url, a.key)).toMatchObject({ credits_remaining: 100, credits_used: 0 });
  });

  it('needs credits for every valid URL before it starts (402), and holds nothing after', async () => {
    const a = await account(s.url, 'starter', 8);
    const r = await bulk(s.url, a.key, { urls: [`${site.url}/html/simple`, `${site.url}/links`, `${site.url}/images`] });
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ code: 'NO_CREDITS', credits_remaining: 8, credits_required: 9 });
    expect(await usage(s.url, a.key)).toMatchObject({ credits_remaining: 8, credits_reserved: 0 });
  });

  it("bounds concurrency by concurrent_requests and by the plan's scrape concurrency", async () => {
    const a = await account(s.url, 'starter', 1000);
    const urls = Array.from({ length: 6 }, (_, i) => `${site.url}/slow?ms=300&i=${i}`);
    let t0 = Date.now();
    const two = await bulk(s.url, a.key, { urls, concurrent_requests: 2 });
    expect(two.body.succeeded).toBe(6);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900); // 3 rounds of 300 ms
    // Starter allows 5 scrapes at once: asking for 100 gets 5, so 6 URLs take two rounds.
    t0 = Date.now();
    const many = await bulk(s.url, a.key, { urls, concurrent_requests: 100 });
    expect(many.body.succeeded).toBe(6);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600);
  });

  it('goes through proxies, rotating past a failing one, and retries failed URLs when asked', async () => {
    const a = await account(s.url, 'unicorn', 1000);
    const [bad, good] = proxies;
    const urls = [`${site.url}/html/simple`, `${site.url}/links`, `${site.url}/images`];
    const r = await bulk(s.url, a.key, { urls, proxy_country: 'FR', retry_failed: true, max_retries: 2 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.succeeded).toBe(3);
    expect(good!.count()).toBeGreaterThanOrEqual(3);
    expect(bad!.count()).toBeGreaterThanOrEqual(1);
    for (const x of r.body.results) expect(x.result.proxy).toEqual({ type: 'datacenter', country: 'FR' });
    // A URL that keeps failing is tried 1 + max_retries times, then reported.
    const t = await bulk(s.url, a.key, { urls: ['http://127.0.0.1:1/'], retry_failed: true, max_retries: 2 });
    expect(t.body.results[0]).toMatchObject({ success: false, attempts: 3, error: { code: 'TARGET_UNREACHABLE' } });
    expect(t.body.credits_used).toBe(0);
  });

  it('retries a URL through a proxy it has not tried yet, so a proxy the site blocks is not used twice for it', async () => {
    const a = await account(s.url, 'unicorn', 1000);
    const [, , blocked, good] = proxies;
    const b0 = blocked!.count();
    // Two URLs at once: round robin gives one the blocked proxy first; its retry must skip that proxy
    // even though the rotation (advanced by the other URL) points at it again.
    const urls = [`${site.url}/html/simple?rr=1`, `${site.url}/html/simple?rr=2`];
    const r = await bulk(s.url, a.key, { urls, proxy_country: 'DE', concurrent_requests: 2, retry_failed: true, max_retries: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.results.map((x: { success: boolean }) => x.success), JSON.stringify(r.body.results.map((x: any) => x.error ?? x.attempts))).toEqual([true, true]);
    expect(r.body.results.map((x: { attempts: number }) => x.attempts).sort()).toEqual([1, 2]);
    expect(blocked!.count() - b0).toBe(1);
    expect(good!.count()).toBeGreaterThanOrEqual(2);
    // Without retries, the URL that drew the blocked proxy reports the block.
    const once = await bulk(s.url, a.key, { urls: [`${site.url}/html/simple?rr=3`, `${site.url}/html/simple?rr=4`], proxy_country: 'DE', concurrent_requests: 2 });
    expect(once.body.results.filter((x: { success: boolean }) => !x.success).map((x: any) => x.error.code)).toEqual(['TARGET_BLOCKED']);
  });

  it('a client that goes away mid-bulk is not charged and its hold is released', async () => {
    const a = await account(s.url, 'starter', 100);
    const controller = new AbortController();
    const pending = bulk(s.url, a.key, { urls: [`${site.url}/slow?ms=5000`, `${site.url}/slow?ms=5000`] }, controller.signal).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 400));
    expect((await usage(s.url, a.key)).credits_reserved).toBe(6);
    controller.abort();
    await pending;
    const deadline = Date.now() + 3000;
    let u = await usage(s.url, a.key);
    while (u.credits_reserved !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      u = await usage(s.url, a.key);
    }
    expect(u).toMatchObject({ credits_remaining: 100, credits_reserved: 0, credits_used: 0 });
  });
});
