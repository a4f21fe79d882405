/**
 * `scour crawl --local` as an operator runs it (the real CLI, spawned with tsx) on
 * the embedded SQLite file: a crawl of a loopback site into the shared
 * collection (no server, nothing billed), its JSON and one-line summaries,
 * an account's collection, the exit codes of bad command lines (2) and
 * refused ones (1), and what a server on the same data directory then finds
 * for any account.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCliFailure, okJson, pooled, runCli } from '../support/cli.js';
import { call } from '../support/http.js';
import { startScour } from '../support/server.js';
import { startCrawlSite, WORDS, type CrawlSite } from '../support/crawl-site.js';

const ADMIN = 'cli-crawl-admin-token-0123456789';

describe('scour crawl', { timeout: 120_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  let docs: CrawlSite;
  let slow: CrawlSite;
  const run = (...args: string[]) => runCli(args, env, dir, 90_000);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-cli-crawl-'));
    env = { SCOUR_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent', SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback' };
    [docs, slow] = await Promise.all([startCrawlSite('docs'), startCrawlSite('slow', { pages: 20, ms: 5 })]);
  });
  afterAll(async () => {
    await docs?.close();
    await slow?.close();
  });

  it('crawls into the shared collection, with a JSON summary, then a one-line one', async () => {
    const j = okJson(await run('crawl', '--local', `${docs.url}/`, '--max-pages', '5', '--json'));
    expect(j).toMatchObject({ url: `${docs.url}/`, collection: 'shared', status: 'completed', stop_reason: 'max_pages', pages_done: 5, pages_queued: 0 });
    expect(j.skipped_reasons.max_pages).toBeGreaterThan(0);
    expect(j.skipped_reasons.robots).toBeGreaterThanOrEqual(1);
    expect(docs.requests.every((q) => q.userAgent.includes('ScourBot/'))).toBe(true);

    const r = await run('crawl', '--local', `${slow.url}/`, '--max-depth', '1');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(new RegExp(`^crawled 21 pages of ${slow.url.replace(/[.]/g, '\\.')}/ into shared \\(0 failed, 0 skipped\\) in [\\d.]+ s \\([\\d.]+ pages/s\\)\\n$`));
    // Not a terminal: no progress bar.
    expect(r.err).toBe('');

    const stats = okJson(await run('index', 'stats', '--json'));
    expect(stats.collections).toEqual([expect.objectContaining({ collection: 'shared', documents: 26 })]);
  });

  it('refuses bad command lines (2), and URLs or collections it may not use (1)', async () => {
    const strictEnv = { SCOUR_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' };
    const cases: [string[], 1 | 2, string, Record<string, string>?][] = [
      [['crawl', '--local'], 2, 'scour crawl takes one URL'],
      [['crawl', '--local', `${docs.url}/`, '--max-pages', '0'], 2, '--max-pages must be a whole number from 1 to 10000'],
      [['crawl', '--local', `${docs.url}/`, '--max-depth', 'x'], 2, '--max-depth must be a whole number'],
      [['crawl', '--local', `${docs.url}/`, '--include', 'blog/**'], 2, 'must start with /'],
      [['crawl', '--local', `${docs.url}/`, '--render'], 2, 'unknown option --render'],
      [['crawl', '--local', 'ftp://example.com/'], 2, 'the URL'],
      [['crawl', '--local', 'http://10.0.0.1/'], 1, 'the URL is not allowed'],
      [['crawl', '--local', `${docs.url}/`, '--collection', 'acct_nobody'], 1, 'no account acct_nobody'],
      // Without SCOUR_ALLOW_PRIVATE_TARGETS, loopback is refused like any private address.
      [['crawl', '--local', `${docs.url}/`], 1, 'the URL is not allowed', strictEnv],
    ];
    const results = await pooled(cases.map(([args, , , e]) => () => runCli(args, e ?? env, dir, 90_000)), 4);
    results.forEach((r, i) => expectCliFailure(r, cases[i]![1], cases[i]![2], cases[i]![0].join(' ')));
  });

  it('fills an account\'s collection when asked; a server on the same data directory finds shared pages for every account', async () => {
    const made = okJson(await run('accounts', 'create', '--plan', 'starter', '--credits', '10', '--json'));
    const j = okJson(await run('crawl', '--local', `${docs.url}/docs/b`, '--max-depth', '0', '--collection', made.account_id, '--json'));
    expect(j).toMatchObject({ collection: made.account_id, pages_done: 1 });
    const s = await startScour('node', { dataDir: join(dir, 'data'), adminToken: ADMIN, bootstrapKey: false });
    try {
      // Nothing was billed.
      const usage = (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${made.api_key}` })).body;
      expect(usage).toMatchObject({ credits_used: 0, credits_remaining: 10 });
      const other = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'starter', credits: 10 } });
      const links = async (key: string, q: string) =>
        ((await call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${key}`, body: { query: q } })).body.search_results as { link: string }[]).map((x) => x.link);
      expect(await links(other.body.api_key, WORDS.a!)).toEqual([`${docs.url}/docs/a`]);
      expect(await links(other.body.api_key, 'slowpage7')).toEqual([`${slow.url}/p/7`]);
      // The account's own collection: its owner finds the page there, nobody else does.
      expect(await links(made.api_key, WORDS.b!)).toContain(`${docs.url}/docs/b`);
      expect(await links(other.body.api_key, WORDS.b!)).not.toContain(`${docs.url}/docs/b`);
    } finally {
      await s.stop();
    }
  });
});
