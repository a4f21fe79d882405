/**
 * Asynchronous research with real processes really stopped, on PostgreSQL
 * + Redis: one `scour serve` (it only stores and enqueues) and two `scour
 * worker` processes, a loopback SearXNG and loopback pages that answer
 * slowly (read one at a time), so a job is reliably in the middle of its
 * gather stage, some pages read and others not, when its worker is stopped:
 *  - SIGKILL: the other worker resumes it (a dead holder on this machine is
 *    released without waiting for its lease), it completes once, is billed
 *    once (one ledger row, in the transaction that stored the report), one
 *    signed research.completed webhook is delivered, and the report is the
 *    one a synchronous request with the same body gives;
 *  - SIGSTOP: a frozen worker keeps its job until its lease lapses (its pid
 *    still exists), then the other worker takes it over and completes it;
 *    woken up (SIGCONT), the frozen one finds its job gone: nothing charged
 *    or delivered twice.
 */
import type { ChildProcess } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { alive, call, killAll, startProcess, until, workerPid, type ScourProcess } from '../support/processes.js';
import { startSearxng, type FakeSearxng } from '../support/searxng.js';
import { freshDatabase, redisNamespace, type FreshDatabase, type RedisNamespace } from '../support/services.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'research-processes-admin-token-0123456789';
/** A quick research: 5 credits, 5 sources at most. */
const PRICE = 5;
const SOURCES = 5;
/** Each page answers after this long; the plan reads one page at a time. */
const PAGE_MS = 700;
/** SearXNG answers each sub-query after this long. */
const SEARCH_MS = 400;
const LEASE_S = 3;

/** Six distinct articles (no two near-identical) about one question. */
const ARTICLES: readonly [string, string][] = [
  ['Graphene batteries charge faster', 'Graphene batteries charge five times faster than lithium-ion cells in laboratory tests. The graphene anode kept its capacity after 2,000 charging cycles. Researchers measured the charging speed at room temperature.'],
  ['Fast charging with graphene anodes', 'A graphene anode allows fast charging without overheating the battery cell. Engineers reported that charging speed doubled compared with graphite anodes. The test cells were produced on a pilot line.'],
  ['Graphene battery startup raises funds', 'A graphene battery startup raised new funding to scale production this year. The company claims its cells reach full charge in twelve minutes. Investors expect the first products in consumer electronics.'],
  ['Limits of graphene batteries', 'Graphene batteries remain expensive because high-quality graphene is hard to produce at scale. Charging speed gains shrink in cold weather, according to an independent review. Cost is the main obstacle to adoption.'],
  ['Graphene supercapacitors versus batteries', 'Graphene supercapacitors charge in seconds but store far less energy than batteries. Hybrid designs combine a graphene supercapacitor with a lithium battery to balance charging speed and capacity.'],
  ['Safety of fast-charging graphene cells', 'Fast-charging graphene cells ran cooler than conventional cells in abuse tests. Thermal runaway was not observed in any of the graphene battery samples. Regulators have not yet certified the technology for vehicles.'],
];

interface Hit { path: string; at: number }
/** The loopback site: /a/<n> articles, each answered after PAGE_MS; every request recorded. */
async function startPages(): Promise<{ url: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push({ path, at: Date.now() });
    const m = /^\/a\/(\d+)$/.exec(path);
    const article = m === null ? undefined : ARTICLES[Number(m[1])];
    const t = setTimeout(() => {
      timers.delete(t);
      if (res.destroyed) return;
      if (article === undefined) { res.writeHead(404, { 'content-type': 'text/plain' }).end('missing'); return; }
      const [title, text] = article;
      const paragraphs = text.split(/(?<=\.) /).map((x) => `<p>${x}</p>`).join('');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><nav>Home | About</nav><article><h1>${title}</h1>${paragraphs}</article><footer>Copyright footer</footer></body></html>`,
      );
    }, m === null ? 0 : PAGE_MS);
    timers.add(t);
  });
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The check of a delivery docs/bulk-and-webhooks.md gives: HMAC-SHA256(secret, t + "." + raw body) against every v1, t within 5 minutes. */
function readmeVerify(secret: string, raw: string, header: unknown): boolean {
  if (typeof header !== 'string') return false;
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
  const { timings_ms: _t, ...m } = methodology;
  return { ...rest, methodology: m };
}

describe('research jobs with `scour serve` and `scour worker` processes (PostgreSQL + Redis)', () => {
  let dir: string;
  let db: FreshDatabase | undefined;
  let redis: RedisNamespace | undefined;
  let sx: FakeSearxng;
  let pages: Awaited<ReturnType<typeof startPages>>;
  const receivers: WebhookReceiver[] = [];
  const children: ChildProcess[] = [];
  let env: Record<string, string>;
  let api: ScourProcess;
  let w1: ScourProcess;
  let w2: ScourProcess;
  let sql: pg.Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-research-proc-'));
    db = await freshDatabase();
    redis = redisNamespace();
    pages = await startPages();
    sx = await startSearxng();
    sx.setResults(ARTICLES.map(([title, text], i) => ({ url: `${pages.url}/a/${i}`, title, content: text.slice(0, 120) })));
    sx.setMode('slow', { delayMs: SEARCH_MS });
    const plansFile = join(dir, 'plans.json');
    // One page at a time (the plan's scrape concurrency), and status polls without limit.
    writeFileSync(plansFile, JSON.stringify({
      starter: { limits: { scrape: { windows: [{ limit: 1000, seconds: 60 }], concurrency: 1 }, usage: { windows: [{ limit: 100_000, seconds: 60 }], concurrency: 0 } } },
    }));
    env = {
      SCOUR_ADMIN_TOKEN: ADMIN, SCOUR_BOOTSTRAP_KEY: 'false', SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback', SCOUR_DATA_DIR: join(dir, 'data'),
      DATABASE_URL: db.url, REDIS_URL: redis.url, SCOUR_REDIS_PREFIX: redis.prefix, SCOUR_PLANS: plansFile,
      SCOUR_JOB_LEASE: String(LEASE_S), SCOUR_WORKER_CONCURRENCY: '1', SCOUR_WEBHOOK_SCHEDULE: '1,1,1',
      SEARXNG_URL: sx.url, SCOUR_SEARCH_PROVIDERS: 'searxng', SCOUR_SEARCH_PROVIDER_TIMEOUT: '10',
      LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1',
    };
    // Migrates the fresh database before the processes start together.
    const m = await runCli(['accounts', 'create', '--plan', 'starter', '--credits', '1', '--json'], env, dir, 30_000);
    expect(m.code, m.err).toBe(0);
    [api, w1, w2] = await Promise.all([
      startProcess('api', 'serve', env, dir, children),
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
    await sx?.close();
    await pages?.close();
    try {
      await db?.drop();
    } finally {
      await redis?.clear();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const account = async (credits: number) => {
    const m = await runCli(['accounts', 'create', '--plan', 'starter', '--credits', String(credits), '--json'], env, dir, 30_000);
    expect(m.code, m.err).toBe(0);
    const made = JSON.parse(m.out) as { account_id: string; api_key: string };
    const sec = await call(`${api.url}/admin/v1/accounts/${made.account_id}/webhook-secret`, { token: ADMIN });
    expect(sec.status, JSON.stringify(sec.body)).toBe(200);
    const rx = await startWebhookReceiver({ secret: sec.body.secret });
    receivers.push(rx);
    return { id: made.account_id, key: made.api_key, secret: sec.body.secret as string, rx };
  };
  type Acct = Awaited<ReturnType<typeof account>>;
  const status = (a: Acct, id: string) => call(`${api.url}/v1/research/${id}`, { token: a.key });
  const ledger = async (a: Acct) => {
    const r = await call(`${api.url}/admin/v1/accounts/${a.id}/ledger`, { token: ADMIN });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.ledger as { operation: string; credits: number; request_id: string }[];
  };
  const holderOf = async (jobId: string) => (await sql.query<{ worker_id: string | null; status: string }>('SELECT worker_id, status FROM bulk_jobs WHERE id = $1', [jobId])).rows[0]!;
  const pageHits = (since: number) => pages.hits.filter((h) => h.path.startsWith('/a/') && h.at >= since).length;

  /** Submit, then wait until the job is gathering with some pages read and others not. */
  const startMidGather = async (a: Acct, body: Record<string, unknown>) => {
    const since = Date.now();
    const sub = await call(`${api.url}/v1/research`, { token: a.key, body });
    expect(sub.status, JSON.stringify(sub.body)).toBe(202);
    const jobId = sub.body.job_id as string;
    const mid = await until(() => status(a, jobId), (r) => r.body.status === 'running' && r.body.stage === 'gather' && pageHits(since) >= 2, 30_000, 25);
    const holder = (await holderOf(jobId)).worker_id;
    const victim = [w1, w2].find((w) => w.workerId === holder);
    const survivor = [w1, w2].find((w) => w.workerId !== holder)!;
    expect(victim, `job held by ${holder}, workers ${w1.workerId} ${w2.workerId}`).toBeDefined();
    expect(victim!.child.pid).toBe(workerPid(victim!.workerId));
    return { jobId, since, mid: mid.body, victim: victim!, survivor };
  };

  /** The job ended completed, once: one ledger row, one delivery (signed research.completed, its data the status view), finished by `by`. */
  const expectCompletedOnce = async (a: Acct, jobId: string, by: ScourProcess) => {
    const [hook] = await a.rx.waitFor(1, 60_000);
    expect(hook!.verified).toBe(true);
    expect(readmeVerify(a.secret, hook!.raw, hook!.headers['scour-signature'])).toBe(true);
    expect(hook!.event).toBe('research.completed');
    const payload = hook!.body as { event: string; job_id: string; data: any };
    expect(payload).toMatchObject({ event: 'research.completed', job_id: jobId });
    const data = payload.data;
    expect(data).toMatchObject({ job_id: jobId, status: 'completed', stage: 'completed', credits_used: PRICE, error: null });
    expect(data.result.sources_analyzed).toHaveLength(SOURCES);
    expect(data.progress).toEqual({
      sources_found: data.result.methodology.counts.found, sources_read: data.result.methodology.counts.fetched, sources_accepted: SOURCES,
    });
    const item = (await sql.query<{ worker_id: string; status: string }>('SELECT worker_id, status FROM bulk_items WHERE job_id = $1', [jobId])).rows;
    expect(item).toEqual([{ worker_id: by.workerId, status: 'completed' }]);
    const done = await until(() => status(a, jobId), (r) => r.body.webhook?.deliveries?.[0]?.status === 'delivered', 20_000, 100);
    const { webhook: _w1, request_id: _r1, ...view } = done.body;
    const { webhook: _w2, ...sent } = data;
    expect(sent).toEqual(view);
    expect(done.body.webhook.deliveries).toHaveLength(1);
    const rows = (await ledger(a)).filter((l) => l.operation === 'research');
    expect(rows).toEqual([expect.objectContaining({ credits: PRICE, request_id: `${jobId}:0` })]);
    const usage = await call(`${api.url}/v1/usage`, { token: a.key });
    expect(usage.body).toMatchObject({ credits_used: PRICE, credits_reserved: 0 });
    return data.result;
  };

  it('the API only stores and enqueues; workers run research jobs', async () => {
    expect(w1.out() + w2.out()).toMatch(/"mode":"queue"/);
    expect(api.out()).not.toContain('job started');
  });

  it('a worker killed with SIGKILL mid-gather: the other resumes the job, which completes once, billed once, one webhook; the report is the synchronous one', async () => {
    const a = await account(100);
    const body = { research_query: 'graphene battery charging speed', analysis_depth: 'quick', include_methodology: true, callback_url: a.rx.url };
    const { jobId, since, mid, victim, survivor } = await startMidGather(a, body);
    victim.child.kill('SIGKILL');
    await victim.exited;
    expect(alive(workerPid(victim.workerId))).toBe(false);
    const readBeforeKill = pageHits(since);
    // Killed mid-gather: some of the pages read, not all, nothing charged or sent.
    expect(mid.progress.sources_accepted).toBeLessThan(SOURCES);
    expect(readBeforeKill).toBeLessThan(SOURCES);
    expect(a.rx.received).toHaveLength(0);
    expect((await call(`${api.url}/v1/usage`, { token: a.key })).body).toMatchObject({ credits_used: 0, credits_reserved: 0 });

    const result = await expectCompletedOnce(a, jobId, survivor);
    // The survivor released the dead holder's job at once (same machine) and ran the research again from its start.
    expect(survivor.out()).toContain('released the job of a dead process on this machine');
    expect(pageHits(since)).toBeGreaterThanOrEqual(readBeforeKill + SOURCES);
    await new Promise((r) => setTimeout(r, 1500));
    expect(a.rx.received).toHaveLength(1);
    expect(a.rx.uniqueDeliveries()).toHaveLength(1);

    // The same body answered synchronously by the API process: the same report (while the killed worker is replaced for the next test).
    const { callback_url: _cb, ...syncBody } = body;
    const [sync, replacement] = await Promise.all([
      call(`${api.url}/v1/research`, { token: a.key, body: syncBody }),
      startProcess('worker-3', 'worker', env, dir, children),
    ]);
    expect(sync.status, JSON.stringify(sync.body).slice(0, 500)).toBe(200);
    expect(strip(result)).toEqual(strip(sync.body));
    if (victim === w1) w1 = replacement;
    else w2 = replacement;
  }, 120_000);

  it('a worker frozen with SIGSTOP keeps its job until the lease lapses; the other completes it; woken, the frozen one charges and sends nothing', async () => {
    const a = await account(100);
    const body = { research_query: 'graphene battery charging speed', analysis_depth: 'quick', include_methodology: true, callback_url: a.rx.url };
    const { jobId, victim, survivor } = await startMidGather(a, body);
    victim.child.kill('SIGSTOP');
    const frozenAt = Date.now();
    try {
      // Its pid exists: it is not released early, only when its lease (renewed every lease / 3) lapses.
      const taken = await until(() => holderOf(jobId), (r) => r.worker_id === survivor.workerId, 30_000, 50);
      expect(taken.status).toBe('running');
      expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(LEASE_S * 1000 * (2 / 3) - 250);
      expect(alive(workerPid(victim.workerId))).toBe(true);
      await expectCompletedOnce(a, jobId, survivor);
    } finally {
      victim.child.kill('SIGCONT');
    }
    // Woken up, it learns at its next lease renewal that the job is no longer its own.
    await until(async () => victim.out(), (out) => out.includes('job taken over by another process'), 20_000, 100);
    await new Promise((r) => setTimeout(r, 2000));
    expect(a.rx.received).toHaveLength(1);
    expect((await ledger(a)).filter((l) => l.operation === 'research')).toHaveLength(1);
    expect((await call(`${api.url}/v1/usage`, { token: a.key })).body).toMatchObject({ credits_used: PRICE, credits_remaining: 100 - PRICE, credits_reserved: 0 });
    const end = await status(a, jobId);
    expect(end.body).toMatchObject({ status: 'completed', credits_used: PRICE });
    expect((await sql.query('SELECT worker_id FROM bulk_items WHERE job_id = $1', [jobId])).rows).toEqual([{ worker_id: survivor.workerId }]);
  }, 120_000);
});
