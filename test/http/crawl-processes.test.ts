/**
 * A crawl survives SIGKILL: a real `scour serve` (embedded SQLite) is
 * killed mid-crawl and a new one started on the same data directory
 * finishes it from its stored frontier: pages done before the kill are not
 * fetched or billed again, every page is stored and billed once, and the
 * signed crawl.completed webhook arrives once.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { alive, call, killAll, startProcess, until } from '../support/processes.js';
import { startCrawlSite, type CrawlSite } from '../support/crawl-site.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'crawl-processes-admin-token-0123456789';
const PAGES = 40;

describe('a crawl killed with SIGKILL resumes after a restart (embedded)', () => {
  let dir: string;
  let site: CrawlSite;
  let rx: WebhookReceiver | undefined;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-crawl-kill-'));
    site = await startCrawlSite('slow', { pages: PAGES, ms: 250 });
  });
  afterAll(async () => {
    await killAll(children);
    await rx?.close();
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('continues from where it stopped: nothing fetched, stored or billed twice, the webhook once', async () => {
    const env = {
      SCOUR_ADMIN_TOKEN: ADMIN, SCOUR_BOOTSTRAP_KEY: 'false', SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback', SCOUR_DATA_DIR: join(dir, 'data'),
      // A long lease: the restarted server must not wait for it (the dead holder was on this machine).
      SCOUR_JOB_LEASE: '120', SCOUR_WEBHOOK_SCHEDULE: '1,1,1', LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1',
    };
    const made = await runCli(['accounts', 'create', '--plan', 'builder', '--credits', '1000', '--json'], env, dir, 30_000);
    expect(made.code, made.err).toBe(0);
    const acct = JSON.parse(made.out) as { account_id: string; api_key: string };

    const first = await startProcess('first', 'serve', env, dir, children);
    const secret = await call(`${first.url}/admin/v1/accounts/${acct.account_id}/webhook-secret`, { token: ADMIN });
    expect(secret.status, JSON.stringify(secret.body)).toBe(200);
    rx = await startWebhookReceiver({ secret: secret.body.secret });
    const sub = await call(`${first.url}/v1/crawl`, { token: acct.api_key, body: { url: `${site.url}/`, max_depth: 1, callback_url: rx.url } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(202);
    const path = `/v1/crawl/${sub.body.job_id}`;

    const mid = await until(() => call(`${first.url}${path}`, { token: acct.api_key }), (r) => r.body.pages_done >= 8, 30_000, 50);
    expect(mid.body.status).toBe('running');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(alive(first.child.pid!)).toBe(false);
    const doneBefore = mid.body.pages_done as number;
    const hitsBefore = site.requests.filter((q) => q.path.startsWith('/p/')).length;
    expect(hitsBefore).toBeLessThan(PAGES);
    expect(rx.received).toHaveLength(0);

    const second = await startProcess('second', 'serve', env, dir, children);
    const [hook] = await rx.waitFor(1, 60_000);
    expect(second.out()).toContain('released the job of a dead process on this machine');
    expect(hook!.verified).toBe(true);
    expect(hook!.event).toBe('crawl.completed');
    const data = (hook!.body as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({
      status: 'completed', stop_reason: null, pages_done: PAGES + 1, pages_failed: 0, pages_queued: 0, pages_skipped: 0, credits_used: 3 * (PAGES + 1),
    });

    // Each page was fetched once, except the two at most in flight when the process died.
    const pageHits = new Map<string, number>();
    for (const q of site.requests) pageHits.set(q.path, (pageHits.get(q.path) ?? 0) + 1);
    expect(pageHits.get('/')).toBe(1);
    for (let i = 0; i < PAGES; i++) expect(pageHits.get(`/p/${i}`), `/p/${i}`).toBeGreaterThanOrEqual(1);
    const refetched = [...pageHits].filter(([p, n]) => p.startsWith('/p/') && n > 1);
    expect(refetched.length).toBeLessThanOrEqual(2);
    expect(doneBefore).toBeGreaterThanOrEqual(8);

    // Billed once per page, although the crawl ran in two processes.
    const ledger = await call(`${second.url}/admin/v1/accounts/${acct.account_id}/ledger`, { token: ADMIN });
    const rows = (ledger.body.ledger as { operation: string; request_id: string; credits: number }[]).filter((l) => l.operation === 'crawl');
    expect(rows).toHaveLength(PAGES + 1);
    expect(new Set(rows.map((l) => l.request_id)).size).toBe(PAGES + 1);
    const usage = await call(`${second.url}/v1/usage`, { token: acct.api_key });
    expect(usage.body).toMatchObject({ credits_used: 3 * (PAGES + 1), credits_remaining: 1000 - 3 * (PAGES + 1), credits_reserved: 0 });

    // Every page is in the account's collection, pages from both runs alike.
    for (const word of ['slowpage0', `slowpage${PAGES - 1}`]) {
      const found = await call(`${second.url}/v1/search`, { token: acct.api_key, body: { query: word } });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.search_results.map((x: { link: string }) => x.link)).toContain(`${site.url}/p/${word.slice('slowpage'.length)}`);
    }
    const st = await until(() => call(`${second.url}${path}`, { token: acct.api_key }), (r) => r.body.webhook?.deliveries?.[0]?.status === 'delivered');
    expect(st.body.status).toBe('completed');
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.uniqueDeliveries()).toHaveLength(1);
  }, 150_000);
});
