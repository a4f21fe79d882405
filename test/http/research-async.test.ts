/**
 * POST /v1/research with callback_url (asynchronous mode) over the real
 * server, embedded (SQLite, the API process runs jobs) and shared
 * (PostgreSQL + Redis: the API only stores and enqueues, a worker-role
 * instance fed by BullMQ runs them):
 *  - 202 {job_id, status 'queued', status_url, ...}; the status URL for the
 *    same key only (404 for another account's, or under another kind's path);
 *  - queued -> running (stage plan/gather/read/analyse/report/export, its
 *    counts never going back) -> completed, observed by polling a job held
 *    behind another one (one job at a time) and slowed at a loopback SearXNG;
 *  - the result equals the synchronous report for the same body (minus what
 *    differs per request: request_id, processing_time, generated_at, timings,
 *    remaining_credits);
 *  - credits charged once, at completion, in the same transaction as the
 *    report (nothing held or charged while it runs; one ledger row);
 *  - one signed research.completed webhook (checked with the algorithm of
 *    docs/bulk-and-webhooks.md and the account's secret), whose data is the status view;
 *  - a research that reads nothing ends failed with NO_SOURCES,
 *    research.failed, nothing charged; an account that can no longer pay when
 *    the job finishes: failed with NO_CREDITS, nothing overdrawn;
 *  - refused before anything is stored or charged: a callback the egress
 *    guard refuses (400 TARGET_NOT_ALLOWED), hostile callback values, 402;
 *  - a job resumed after its item was finished but before it was closed ends
 *    as the item did (failed stays failed; completed is not charged again).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { Effect } from 'effect';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../adapters/logging/pino.js';
import { createScour, type Scour } from '../../config/container.js';
import { FULL_RESEARCH as FULL, researchCorpus } from '../fixtures/research-corpus.js';
import { call, expectErrorBody, ISO, type Reply } from '../support/http.js';
import { until } from '../support/processes.js';
import { startSearxng, type FakeSearxng } from '../support/searxng.js';
import { CONFIGS, startScourIn, type Running } from '../support/server.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'research-async-admin-token-0123456789';
const DOCS = researchCorpus(Date.now());
/** How long the loopback SearXNG holds each search while a test needs a job to be seen running. */
const SLOW_MS = 1500;
const TERMINAL = new Set(['completed', 'failed']);
const STAGES = ['plan', 'gather', 'read', 'analyse', 'report', 'rewrite', 'export'];
const PRICE = { quick: 5, standard: 10, comprehensive: 15 } as const;


/** The verification of docs/bulk-and-webhooks.md, step by step: HMAC-SHA256(secret, t + "." + raw body), any v1 matching, t within 5 minutes. */
function readmeVerify(secret: string, raw: string, header: string | undefined): boolean {
  if (!header) return false;
  let t: number | undefined;
  const sigs: Buffer[] = [];
  for (const part of header.split(',')) {
    const [k, v] = part.split('=', 2).map((x) => x.trim());
    if (k === 't' && v && /^\d+$/.test(v)) t = Number(v);
    else if (k === 'v1' && v && /^[0-9a-f]{64}$/i.test(v)) sigs.push(Buffer.from(v, 'hex'));
  }
  if (t === undefined || sigs.length === 0 || Math.abs(Math.floor(Date.now() / 1000) - t) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(Buffer.from(raw, 'utf8')).digest();
  return sigs.some((s) => timingSafeEqual(s, expected));
}

/** What differs between two runs of one research: per-request fields and timings. */
function strip(x: any): unknown {
  const { processing_time: _p, request_id: _r, remaining_credits: _c, generated_at: _g, methodology, ...rest } = x;
  if (methodology === undefined) return rest;
  const { timings_ms: _t, ...m } = methodology;
  return { ...rest, methodology: m };
}

/** A status view without what changes while its webhook is being sent. */
const viewOf = (v: any) => {
  const { webhook: _w, request_id: _r, ...rest } = v;
  return rest;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(CONFIGS)('asynchronous POST /v1/research (%s)', { timeout: 120_000 }, (config) => {
  let s: Running & { config: string };
  let sx: FakeSearxng;
  let worker: Scour | undefined;
  const workerLogs: string[] = [];
  const receivers: WebhookReceiver[] = [];
  let base: string;

  const startWorker = async () => {
    const sink = new Writable({ write(chunk, _e, cb) { workerLogs.push(String(chunk)); cb(); } });
    const w = await createScour({ settings: { ...s.scour.settings, port: 0 }, role: 'worker', logger: createLogger('info', sink) });
    await w.startWorker();
    return w;
  };

  beforeAll(async () => {
    sx = await startSearxng();
    sx.setResults([]);
    s = await startScourIn(config, 'uws', {
      adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local', 'searxng'], searxngUrl: sx.url,
      searchProviderTimeoutMs: 10_000, webhookSchedule: [1, 1], workerConcurrency: 1, jobLeaseMs: 2000,
    });
    base = s.url;
    if (config === 'shared') worker = await startWorker();
    const put = await call(`${base}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: DOCS } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.rejected).toEqual([]);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await s?.stop();
    await sx?.close();
    for (const r of receivers) await r.close();
  });

  interface Acct { id: string; key: string; secret: string; rx: WebhookReceiver }
  const account = async (credits = 1000, plan = 'unicorn'): Promise<Acct> => {
    const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
    expect(r.status, r.text).toBe(201);
    const sec = await call(`${base}/admin/v1/accounts/${r.body.account_id}/webhook-secret`, 'GET', { auth: `Bearer ${ADMIN}` });
    expect(sec.status, sec.text).toBe(200);
    const rx = await startWebhookReceiver({ secret: sec.body.secret });
    receivers.push(rx);
    return { id: r.body.account_id, key: r.body.api_key, secret: sec.body.secret, rx };
  };
  const research = (a: Acct, body: unknown) => call(`${base}/v1/research`, 'POST', { auth: `Bearer ${a.key}`, body });
  const status = (a: Acct, id: string) => call(`${base}/v1/research/${id}`, 'GET', { auth: `Bearer ${a.key}` });
  const usage = async (a: Acct) => (await call(`${base}/v1/usage`, 'GET', { auth: `Bearer ${a.key}` })).body as { credits_remaining: number; credits_used: number; credits_reserved: number };
  const ledger = async (a: Acct) => {
    const r = await call(`${base}/admin/v1/accounts/${a.id}/ledger`, 'GET', { auth: `Bearer ${ADMIN}` });
    expect(r.status, r.text).toBe(200);
    return r.body.ledger as { operation: string; credits: number; request_id: string }[];
  };
  /** The account's stored jobs, read from the database itself. */
  const storedJobs = async (a: Acct): Promise<number> => {
    if (config === 'embedded') {
      const db = new Database(join(s.scour.settings.dataDir, 'scour.db'), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM bulk_jobs WHERE account_id = ?').get(a.id) as { n: number }).n;
      } finally {
        db.close();
      }
    }
    const c = new pg.Client({ connectionString: s.scour.settings.databaseUrl });
    await c.connect();
    try {
      return Number((await c.query('SELECT count(*) AS n FROM bulk_jobs WHERE account_id = $1', [a.id])).rows[0].n);
    } finally {
      await c.end();
    }
  };
  const finished = (a: Acct, id: string, timeoutMs = 60_000) => until(() => status(a, id), (r) => TERMINAL.has(r.body.status), timeoutMs, 50);
  const delivered = (a: Acct, id: string) => until(() => status(a, id), (r) => r.body.webhook?.deliveries?.[0]?.status === 'delivered', 20_000, 50);
  const expectAccepted = (r: Reply, body: { research_query: string; analysis_depth?: string }) => {
    expect(r.status, r.text).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(['analysis_depth', 'created_at', 'job_id', 'request_id', 'research_query', 'status', 'status_url']);
    expect(r.body.job_id).toMatch(/^research_[0-9a-f]{32}$/);
    expect(r.body).toMatchObject({ status: 'queued', research_query: body.research_query, analysis_depth: body.analysis_depth ?? 'standard' });
    expect(r.body.status_url).toBe(`${base}/v1/research/${r.body.job_id}`);
    expect(r.body.created_at).toMatch(ISO);
    expect(Math.abs(Date.parse(r.body.created_at) - Date.now())).toBeLessThan(30_000);
    expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
  };
  /** One delivery, signed with the account's secret (the receiver's check and the one docs/bulk-and-webhooks.md gives), of this event for this job. */
  const expectHook = (a: Acct, hook: ReceivedWebhook, event: string, jobId: string) => {
    expect(hook.verified).toBe(true);
    expect(readmeVerify(a.secret, hook.raw, hook.headers['scour-signature'] as string)).toBe(true);
    expect(readmeVerify(`${a.secret}x`, hook.raw, hook.headers['scour-signature'] as string)).toBe(false);
    expect(hook.method).toBe('POST');
    expect(hook.path).toBe('/hook');
    expect(hook.event).toBe(event);
    expect(hook.attempt).toBe(1);
    const p = hook.body as any;
    expect(p).toMatchObject({ event, job_id: jobId, delivery_id: hook.deliveryId, attempt: 1 });
    expect(p.delivery_id).toMatch(/^dlv_[0-9a-f]{32}$/);
    expect(p.sent_at).toMatch(ISO);
    return p.data;
  };

  /**
   * Another account's slow job holding the only job slot (one job at a time),
   * so the next one submitted is seen queued; SearXNG answers after SLOW_MS
   * until `release`.
   */
  const occupy = async () => {
    sx.setMode('slow', { delayMs: SLOW_MS });
    const other = await account();
    const r = await research(other, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', callback_url: other.rx.url });
    expect(r.status, r.text).toBe(202);
    await until(() => status(other, r.body.job_id), (x) => x.body.status === 'running', 20_000, 20);
    return {
      done: async () => {
        const end = await finished(other, r.body.job_id);
        expect(end.body.status).toBe('completed');
      },
    };
  };

  /** Poll a job to its end, every ~25 ms, keeping every view; `whileRunning` runs once, on the first running view. */
  const watch = async (a: Acct, id: string, whileRunning?: () => Promise<void>) => {
    const seen: any[] = [];
    const end = Date.now() + 60_000;
    let ran = false;
    for (;;) {
      const r = await status(a, id);
      expect(r.status, r.text).toBe(200);
      seen.push(r.body);
      if (TERMINAL.has(r.body.status)) return seen;
      if (r.body.status === 'running' && !ran && whileRunning) {
        ran = true;
        await whileRunning();
      }
      if (Date.now() > end) throw new Error(`job ${id} did not end: ${JSON.stringify(r.body).slice(0, 500)}`);
      await sleep(25);
    }
  };

  it('202, then queued -> running (its stages and counts) -> completed; the result is the synchronous report; charged once, at completion; one signed research.completed whose data is the status view', async () => {
    const a = await account(1000);
    const blocker = await occupy();
    const body = { ...FULL, callback_url: a.rx.url };
    const r = await research(a, body);
    expectAccepted(r, body);
    const id = r.body.job_id as string;
    expect(await storedJobs(a)).toBe(1);

    // Nothing held or charged for a queued or running job.
    const whileQueued = await usage(a);
    expect(whileQueued).toMatchObject({ credits_remaining: 1000, credits_used: 0, credits_reserved: 0 });
    let whileRunning: Awaited<ReturnType<typeof usage>> | undefined;
    const seen = await watch(a, id, async () => { whileRunning = await usage(a); });
    await blocker.done();
    sx.setMode('ok');
    expect(whileRunning).toMatchObject({ credits_remaining: 1000, credits_used: 0, credits_reserved: 0 });

    // queued -> running -> completed, never back.
    const statuses = seen.map((v) => v.status).filter((x, i, all) => i === 0 || x !== all[i - 1]);
    expect(statuses).toEqual(['queued', 'running', 'completed']);
    const queued = seen.filter((v) => v.status === 'queued');
    for (const v of queued) {
      expect(v).toMatchObject({ stage: 'queued', progress: { sources_found: 0, sources_read: 0, sources_accepted: 0 }, started_at: null, completed_at: null, result: null, error: null, credits_used: 0 });
    }
    const running = seen.filter((v) => v.status === 'running');
    for (const v of running) {
      expect(STAGES, JSON.stringify(v)).toContain(v.stage);
      expect(v.started_at).toMatch(ISO);
      expect(v).toMatchObject({ completed_at: null, result: null, error: null, credits_used: 0 });
    }
    // SearXNG holds the sub-queries: the job is seen gathering.
    expect(running.map((v) => v.stage)).toContain('gather');
    // Stages in pipeline order, counts never going back.
    const order = running.map((v) => STAGES.indexOf(v.stage));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    for (const k of ['sources_found', 'sources_read', 'sources_accepted']) {
      const xs = running.map((v) => v.progress[k] as number);
      expect(xs, k).toEqual([...xs].sort((x, y) => x - y));
    }

    const done = seen.at(-1);
    expect(done).toMatchObject({ job_id: id, status: 'completed', stage: 'completed', error: null, credits_used: PRICE.standard, callback_url: a.rx.url, research_query: FULL.research_query, analysis_depth: 'standard' });
    expect(done.created_at).toBe(r.body.created_at);
    expect(Date.parse(done.started_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    expect(Date.parse(done.completed_at)).toBeGreaterThanOrEqual(Date.parse(done.started_at));
    const result = done.result;
    expect(result.credits_used).toBe(PRICE.standard);
    expect(result.sources_analyzed.length).toBeGreaterThan(0);
    expect(done.progress).toEqual({
      sources_found: result.methodology.counts.found, sources_read: result.methodology.counts.fetched, sources_accepted: result.sources_analyzed.length,
    });

    // Charged exactly once, at completion.
    expect(await usage(a)).toMatchObject({ credits_remaining: 1000 - PRICE.standard, credits_used: PRICE.standard, credits_reserved: 0 });
    expect(await ledger(a)).toEqual([expect.objectContaining({ operation: 'research', credits: PRICE.standard, request_id: `${id}:0` })]);

    // The same body without callback_url, answered synchronously: the same report.
    const { callback_url: _cb, ...syncBody } = body;
    const sync = await research(a, syncBody);
    expect(sync.status, sync.text).toBe(200);
    expect(strip(result)).toEqual(strip(sync.body));
    expect(await usage(a)).toMatchObject({ credits_remaining: 1000 - 2 * PRICE.standard, credits_reserved: 0 });

    // One delivery: signed, research.completed, its data the status view.
    const [hook] = await a.rx.waitFor(1, 20_000);
    const data = expectHook(a, hook!, 'research.completed', id);
    const after = await delivered(a, id);
    expect(viewOf(data)).toEqual(viewOf(after.body));
    expect(data.webhook.deliveries).toEqual([expect.objectContaining({ delivery_id: hook!.deliveryId, event: 'research.completed' })]);
    expect(after.body.webhook.deliveries).toEqual([expect.objectContaining({
      delivery_id: hook!.deliveryId, event: 'research.completed', status: 'delivered', attempts: 1,
      history: [expect.objectContaining({ attempt: 1, ok: true, status_code: 200, error: null, next_attempt_at: null })],
    })]);
    await sleep(1500);
    expect(a.rx.received).toHaveLength(1);
    expect(await ledger(a)).toHaveLength(2);
  });

  it('the status URL answers the same key only', async () => {
    const a = await account(100);
    const b = await account(100);
    const r = await research(a, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', callback_url: a.rx.url });
    expectAccepted(r, { research_query: 'perovskite solar cell stability', analysis_depth: 'quick' });
    const id = r.body.job_id as string;
    const mine = await status(a, id);
    expect(mine.status, mine.text).toBe(200);
    expect(['queued', 'running', 'completed']).toContain(mine.body.status);
    expectErrorBody(await status(b, id), 404, 'NOT_FOUND');
    expectErrorBody(await call(r.body.status_url, 'GET'), 401, 'UNAUTHORIZED');
    expectErrorBody(await call(r.body.status_url, 'GET', { auth: 'Bearer sk_nope' }), 401, 'AUTHENTICATION_FAILED');
    expectErrorBody(await status(a, `research_${'0'.repeat(32)}`), 404, 'NOT_FOUND');
    expectErrorBody(await status(a, '%00%2F..'), 404, 'NOT_FOUND');
    // A research job is not a bulk job.
    expectErrorBody(await call(`${base}/v1/scrape/bulk/${id}`, 'GET', { auth: `Bearer ${a.key}` }), 404, 'NOT_FOUND');
    const end = await finished(a, id);
    expect(end.body.status).toBe('completed');
    expectErrorBody(await status(b, id), 404, 'NOT_FOUND');
    await a.rx.waitFor(1, 20_000);
    expect(b.rx.received).toHaveLength(0);
    expect(await usage(b)).toMatchObject({ credits_remaining: 100, credits_used: 0 });
  });

  it('a research that reads nothing ends failed with NO_SOURCES: research.failed, nothing charged', async () => {
    const a = await account(100);
    const body = { research_query: 'perovskite solar cells', timeframe: '1990', callback_url: a.rx.url };
    const r = await research(a, body);
    expectAccepted(r, body);
    const id = r.body.job_id as string;
    const end = (await finished(a, id)).body;
    expect(end).toMatchObject({ status: 'failed', stage: 'failed', result: null, credits_used: 0, progress: { sources_accepted: 0 } });
    expect(end.error.code).toBe('NO_SOURCES');
    expect(end.error.message).toMatch(/nothing was charged/);
    const [hook] = await a.rx.waitFor(1, 20_000);
    const data = expectHook(a, hook!, 'research.failed', id);
    expect(data).toMatchObject({ job_id: id, status: 'failed', result: null, credits_used: 0, error: { code: 'NO_SOURCES' } });
    expect(viewOf(data)).toEqual(viewOf((await delivered(a, id)).body));
    expect(await usage(a)).toMatchObject({ credits_remaining: 100, credits_used: 0, credits_reserved: 0 });
    expect(await ledger(a)).toEqual([]);
    await sleep(1200);
    expect(a.rx.received).toHaveLength(1);
  });

  it('export_format: the job\'s report carries a working export_url, and its final counts are kept', async () => {
    const a = await account(100);
    const body = { research_query: 'perovskite solar cell stability', analysis_depth: 'quick', export_format: 'json', include_methodology: true, callback_url: a.rx.url };
    const r = await research(a, body);
    expectAccepted(r, body);
    const end = (await finished(a, r.body.job_id)).body;
    expect(end.status, JSON.stringify(end.error)).toBe('completed');
    const result = end.result;
    expect(result.export_url).toMatch(new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/v1/research/exports/[A-Za-z0-9_-]{32}\\.json$`));
    const got = await fetch(result.export_url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toMatch(/application\/json/);
    const exported = (await got.json()) as { key_insights: { statement: string }[] };
    expect(exported.key_insights.map((x) => x.statement)).toEqual(result.key_insights.map((x: { statement: string }) => x.statement));
    // The counts the job ended with, not reset by the export stage.
    expect(result.sources_analyzed.length).toBeGreaterThan(0);
    expect(end.progress).toEqual({
      sources_found: result.methodology.counts.found, sources_read: result.methodology.counts.fetched, sources_accepted: result.sources_analyzed.length,
    });
    expect((await usage(a)).credits_remaining).toBe(100 - PRICE.quick);
  });

  it('two jobs accepted on credits for one: the one that finishes first is charged, the other fails with NO_CREDITS; nothing overdrawn', async () => {
    const a = await account(PRICE.standard);
    const body = { research_query: 'perovskite solar cell stability', callback_url: a.rx.url };
    // The hold at submission only proves the balance covers one research; nothing stays held after the 202.
    const r1 = await research(a, body);
    expectAccepted(r1, body);
    const r2 = await research(a, body);
    expectAccepted(r2, body);
    const ends = await Promise.all([r1, r2].map(async (r) => (await finished(a, r.body.job_id)).body));
    const ok = ends.filter((e) => e.status === 'completed');
    const refused = ends.filter((e) => e.status === 'failed');
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(ok[0]).toMatchObject({ credits_used: PRICE.standard, error: null });
    expect(refused[0]).toMatchObject({ credits_used: 0, result: null, error: { code: 'NO_CREDITS' } });
    expect(await usage(a)).toMatchObject({ credits_remaining: 0, credits_used: PRICE.standard, credits_reserved: 0 });
    expect(await ledger(a)).toEqual([expect.objectContaining({ operation: 'research', credits: PRICE.standard, request_id: `${ok[0].job_id}:0` })]);
    const hooks = await a.rx.waitFor(2, 20_000);
    const byJob = new Map(hooks.map((h) => [(h.body as { job_id: string }).job_id, h]));
    expectHook(a, byJob.get(ok[0].job_id)!, 'research.completed', ok[0].job_id);
    const data = expectHook(a, byJob.get(refused[0].job_id)!, 'research.failed', refused[0].job_id);
    expect(data.error).toMatchObject({ code: 'NO_CREDITS' });
  });

  it('402 when the account cannot pay: nothing stored, held or charged', async () => {
    const a = await account(PRICE.standard - 1);
    const r = await research(a, { research_query: 'perovskite solar cells', callback_url: a.rx.url });
    expectErrorBody(r, 402, 'NO_CREDITS');
    expect(r.body).toMatchObject({ credits_required: PRICE.standard, credits_remaining: PRICE.standard - 1 });
    expectErrorBody(await research(a, { research_query: 'perovskite solar cells', analysis_depth: 'comprehensive', callback_url: a.rx.url }), 402, 'NO_CREDITS');
    expect(await storedJobs(a)).toBe(0);
    expect(await usage(a)).toMatchObject({ credits_remaining: PRICE.standard - 1, credits_used: 0, credits_reserved: 0 });
    // A quick one fits.
    const ok = await research(a, { research_query: 'perovskite solar cells', analysis_depth: 'quick', callback_url: a.rx.url });
    expect(ok.status, ok.text).toBe(202);
    expect((await finished(a, ok.body.job_id)).body.status).toBe('completed');
    expect(await usage(a)).toMatchObject({ credits_remaining: PRICE.standard - 1 - PRICE.quick, credits_reserved: 0 });
    await sleep(1200);
    expect(a.rx.received).toHaveLength(1);
  });

  it('a callback the egress guard refuses is 400 TARGET_NOT_ALLOWED before anything is stored or charged', async () => {
    const a = await account(50);
    const r = await research(a, { research_query: 'perovskite solar cells', callback_url: 'http://10.0.0.1/hook' });
    expectErrorBody(r, 400, 'TARGET_NOT_ALLOWED');
    expect(r.body.validation_errors.map((v: { field: string }) => v.field)).toEqual(['callback_url']);
    expect(await storedJobs(a)).toBe(0);
    expect(await usage(a)).toMatchObject({ credits_remaining: 50, credits_used: 0, credits_reserved: 0 });
    expect(await ledger(a)).toEqual([]);
  });

  it('hostile callback_url values: each a 400 naming callback_url, nothing stored or charged, nothing sent anywhere', async () => {
    const a = await account(100);
    const cases: [unknown, string][] = [
      [42, 'MISSING_PARAMETER'],
      ['', 'MISSING_PARAMETER'],
      [null, 'MISSING_PARAMETER'],
      [true, 'MISSING_PARAMETER'],
      [{ url: a.rx.url }, 'MISSING_PARAMETER'],
      [[a.rx.url], 'MISSING_PARAMETER'],
      ['not a url', 'MISSING_PARAMETER'],
      ['/relative/hook', 'MISSING_PARAMETER'],
      [`${a.rx.url}?${'a'.repeat(2100)}`, 'MISSING_PARAMETER'],
      ['ftp://127.0.0.1/hook', 'TARGET_NOT_ALLOWED'],
      ['javascript:alert(1)', 'TARGET_NOT_ALLOWED'],
      ['file:///etc/passwd', 'TARGET_NOT_ALLOWED'],
      ['http://169.254.169.254/latest/meta-data/', 'TARGET_NOT_ALLOWED'],
      ['http://[::ffff:169.254.169.254]/', 'TARGET_NOT_ALLOWED'],
      ['http://[fd00::1]/hook', 'TARGET_NOT_ALLOWED'],
      ['http://0.0.0.0:9/', 'TARGET_NOT_ALLOWED'],
      ['http://192.168.1.1/hook', 'TARGET_NOT_ALLOWED'],
      ['http://0x0a.0.0.1/hook', 'TARGET_NOT_ALLOWED'],
      ['http://user:pass@127.0.0.1/hook', 'TARGET_NOT_ALLOWED'],
    ];
    for (const [callback_url, code] of cases) {
      const r = await research(a, { research_query: 'perovskite solar cells', callback_url });
      const what = `${JSON.stringify(callback_url)?.slice(0, 80)} -> ${r.text.slice(0, 300)}`;
      expect(r.status, what).toBe(400);
      expect(r.body.code, what).toMatch(new RegExp(`^(${code})$`));
      expect((r.body.validation_errors as { field: string }[]).map((v) => v.field), what).toContain('callback_url');
      expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
    }
    // A bad callback is reported with every other problem of the request, in one 400.
    const both = await research(a, { research_query: '  ', max_sources: 0, callback_url: 'http://10.0.0.1/x' });
    expect(both.status, both.text).toBe(400);
    expect((both.body.validation_errors as { field: string }[]).map((v) => v.field).sort()).toEqual(['callback_url', 'max_sources', 'research_query']);
    expect(await storedJobs(a)).toBe(0);
    expect(await usage(a)).toMatchObject({ credits_remaining: 100, credits_used: 0, credits_reserved: 0 });
    expect(a.rx.connections()).toBe(0);
  });

  describe('a job resumed after its item was finished but before it was closed', () => {
    const GHOST = 'another-machine:00000000:4242:0badc0de';
    /**
     * A research job taken by a worker of another machine (not released
     * early as a dead local process) that finishes its item and dies before
     * closing the job: the lease lapses and this deployment's runner takes
     * it over. In the shared deployment the worker is stopped meanwhile, so
     * it cannot claim the job first.
     */
    const ghostJob = async (a: Acct, outcome: { success: boolean; result: unknown; error: unknown; credits: number }) => {
      const store = s.scour.jobStore;
      const id = `research_${randomBytes(16).toString('hex')}`;
      const query = 'perovskite solar cell stability';
      const job = {
        id, kind: 'research' as const, accountId: a.id, urls: [query], callbackUrl: a.rx.url, pricePerUrl: PRICE.quick, now: Date.now(),
        request: { input: { research_query: query, analysis_depth: 'quick', callback_url: a.rx.url }, plan: 'unicorn', host: new URL(base).host },
      };
      if (config === 'embedded') {
        // SQLite answers synchronously: nothing runs between storing the job and taking it.
        Effect.runSync(store.createJob(job));
        expect(Effect.runSync(store.claimJob(GHOST, Date.now(), 1500, id))).toEqual({ jobId: id, accountId: a.id });
      } else {
        await worker!.stop();
        await Effect.runPromise(store.createJob(job));
        expect(await Effect.runPromise(store.claimJob(GHOST, Date.now(), 1500, id))).toEqual({ jobId: id, accountId: a.id });
      }
      const f = await Effect.runPromise(store.finishItem({
        jobId: id, idx: 0, workerId: GHOST, attempts: 1, operation: 'research', ledgerRequestId: `${id}:0`, now: Date.now(), ...outcome,
      }));
      expect(f).toMatchObject({ alreadyDone: false, charged: outcome.success ? outcome.credits : 0 });
      if (config === 'shared') worker = await startWorker();
      return id;
    };

    it('an item that failed: the job ends failed with its error and research.failed, nothing charged', async () => {
      const a = await account(100);
      const id = await ghostJob(a, { success: false, result: null, error: { code: 'NO_SOURCES', message: 'no source could be read' }, credits: 0 });
      const end = (await finished(a, id, 30_000)).body;
      expect(end).toMatchObject({ status: 'failed', result: null, credits_used: 0, error: { code: 'NO_SOURCES' } });
      const [hook] = await a.rx.waitFor(1, 20_000);
      const data = expectHook(a, hook!, 'research.failed', id);
      expect(data).toMatchObject({ status: 'failed', error: { code: 'NO_SOURCES' } });
      expect(await usage(a)).toMatchObject({ credits_remaining: 100, credits_used: 0, credits_reserved: 0 });
    });

    it('an item that completed: the job ends completed with that report, charged once, research.completed', async () => {
      const a = await account(100);
      const report = { research_query: 'perovskite solar cell stability', key_insights: [], sources_analyzed: [{ id: 'src_1' }], credits_used: PRICE.quick };
      const id = await ghostJob(a, { success: true, result: report, error: null, credits: PRICE.quick });
      const end = (await finished(a, id, 30_000)).body;
      expect(end).toMatchObject({ status: 'completed', credits_used: PRICE.quick, error: null, result: report });
      const [hook] = await a.rx.waitFor(1, 20_000);
      expect(expectHook(a, hook!, 'research.completed', id).result).toEqual(report);
      expect(await usage(a)).toMatchObject({ credits_remaining: 100 - PRICE.quick, credits_used: PRICE.quick, credits_reserved: 0 });
      expect(await ledger(a)).toHaveLength(1);
    });
  });
});
