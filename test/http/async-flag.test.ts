/**
 * The `async` extension of bulk scrape and research: `async: true` answers
 * 202 with a job to poll, with no webhook (what the CLI's progress uses);
 * `async: false` is the synchronous mode; `async: false` with a
 * callback_url, or an `async` that is not a boolean, is a 400 on the field,
 * before anything is stored or charged. Both deployments, both adapters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { researchCorpus } from '../fixtures/research-corpus.js';
import { call, expectErrorBody } from '../support/http.js';
import { until } from '../support/processes.js';
import { ADAPTERS, CONFIGS, startScourIn, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'async-flag-admin-token-0123456789abcdef';

describe.each(CONFIGS.flatMap((c) => ADAPTERS.map((a) => [c, a] as const)))('async: true (%s, %s)', { timeout: 120_000 }, (config, adapter) => {
  let s: Running;
  let site: TargetSite;
  let key: string;
  const post = (path: string, body: unknown) => call(`${s.url}${path}`, 'POST', { auth: `Bearer ${key}`, body });
  const get = (url: string) => call(url, 'GET', { auth: `Bearer ${key}` });
  const usage = async () => (await get(`${s.url}/v1/usage`)).body as { credits_used: number };

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn(config, adapter, { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'], jobs: 'embedded' });
    const made = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    key = made.body.api_key;
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: researchCorpus(Date.now()) } });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('bulk scrape: 202, a job polled to its results, no webhook; async: false is synchronous', async () => {
    const before = await usage();
    const a = await post('/v1/scrape/bulk', { urls: [`${site.url}/html/simple`, `${site.url}/js`], async: true });
    expect(a.status, a.text).toBe(202);
    expect(a.body).toMatchObject({ job_id: expect.stringMatching(/^bulk_[0-9a-f]{32}$/), status: 'queued', status_url: expect.stringContaining(`/v1/scrape/bulk/${a.body.job_id}`) });
    const job = await until(() => get(a.body.status_url), (r) => r.body.status === 'completed', 30_000);
    expect(job.body.callback_url).toBeNull();
    expect(job.body.webhook.deliveries).toEqual([]);
    expect(job.body.results.map((r: { url: string; success: boolean }) => [r.url, r.success])).toEqual([[`${site.url}/html/simple`, true], [`${site.url}/js`, true]]);
    expect((await usage()).credits_used - before.credits_used).toBe(job.body.credits_used);
    expect(job.body.credits_used).toBeGreaterThan(0);

    const sync = await post('/v1/scrape/bulk', { urls: [`${site.url}/html/simple`], async: false });
    expect(sync.status, sync.text).toBe(200);
    expect(sync.body.results).toHaveLength(1);
  });

  it('research: 202, the stages to completed, charged once', async () => {
    const before = await usage();
    const a = await post('/v1/research', { research_query: 'How stable are perovskite solar cells?', analysis_depth: 'quick', async: true });
    expect(a.status, a.text).toBe(202);
    expect(a.body.job_id).toMatch(/^research_/);
    const job = await until(() => get(a.body.status_url), (r) => r.body.status === 'completed' || r.body.status === 'failed', 30_000);
    expect(job.body.status, job.text).toBe('completed');
    expect(job.body.callback_url).toBeNull();
    expect(job.body.result.key_insights.length).toBeGreaterThan(0);
    expect((await usage()).credits_used - before.credits_used).toBe(5);
  });

  it('refuses async: false with a callback_url, and an async that is not a boolean, on the field, charging nothing', async () => {
    const before = await usage();
    const hook = `${site.url}/echo`;
    const cases: [string, Record<string, unknown>][] = [
      ['/v1/scrape/bulk', { urls: [`${site.url}/html/simple`], async: false, callback_url: hook }],
      ['/v1/scrape/bulk', { urls: [`${site.url}/html/simple`], async: 'yes' }],
      ['/v1/scrape/bulk', { urls: [`${site.url}/html/simple`], async: null }],
      ['/v1/scrape/bulk', { urls: [`${site.url}/html/simple`], async: 1 }],
      ['/v1/research', { research_query: 'perovskite stability', async: false, callback_url: hook }],
      ['/v1/research', { research_query: 'perovskite stability', async: 'true' }],
      ['/v1/research', { research_query: 'perovskite stability', async: [true] }],
    ];
    for (const [path, body] of cases) {
      const r = await post(path, body);
      expectErrorBody(r, 400, 'MISSING_PARAMETER');
      expect(r.body.validation_errors.map((v: { field: string }) => v.field), `${path} ${JSON.stringify(body)}`).toContain('async');
    }
    expect((await usage()).credits_used).toBe(before.credits_used);
  });
});
