/**
 * `scour index import|stats` as an operator runs them (the real CLI, spawned
 * with tsx) on the embedded SQLite file: a JSONL import with good and bad
 * lines (reported by number, skipped), upserts on a second import, an
 * account's collection, the exit codes of bad command lines (2) and refused
 * ones (1), and what a server on the same data directory then finds.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCliFailure, okJson, runCli } from '../support/cli.js';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'cli-index-admin-token-0123456789';

describe('scour index', { timeout: 120_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  const run = (...args: string[]) => runCli(args, env, dir, 60_000);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'scour-cli-index-'));
    env = { SCOUR_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' };
  });

  it('imports JSONL, reports bad lines by number and skips them, then shows stats', async () => {
    const lines = [
      JSON.stringify({ url: 'https://example.com/okapi', title: 'Okapi field guide', text: 'The okapi lives in the Ituri rainforest.', language: 'en', type: 'article' }),
      '',
      '{"url": "https://example.com/broken", "title": ',
      JSON.stringify({ url: 'ftp://example.com/x', title: 'wrong scheme' }),
      JSON.stringify({ url: 'https://example.com/narwhal', title: 'Narwhal tusks', text: 'Narwhals are whales.', published_date: '2026-02-31' }),
      JSON.stringify({ url: 'https://example.com/narwhal', title: 'Narwhal tusks', text: 'Narwhals are toothed whales of the Arctic.', published_date: '2026-02-27' }),
      JSON.stringify({ url: 'https://example.com/quokka', title: 'Quokka', text: 'Quokkas smile.', colour: 'brown' }),
    ];
    const file = join(dir, 'docs.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = await run('index', 'import', file);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/line 3: not JSON/);
    expect(r.err).toMatch(/line 4: url must be an absolute http or https URL/);
    expect(r.err).toMatch(/line 5: published_date must be an ISO 8601 date/);
    expect(r.err).toMatch(/line 7: colour is not a recognised field/);
    expect(r.out).toMatch(/^imported 2 documents into shared \(2 new, 0 updated\), 4 line\(s\) skipped, 7 lines in [\d.]+ s \(\d+ documents\/s\)\n$/);

    const again = okJson(await run('index', 'import', file, '--json'));
    expect(again).toMatchObject({ collection: 'shared', indexed: 0, updated: 2, skipped: 4, lines: 7 });
    expect(again.errors.map((e: { line: number }) => e.line)).toEqual([3, 4, 5, 7]);

    const stats = okJson(await run('index', 'stats', '--json'));
    expect(stats.documents).toBe(2);
    expect(stats.collections).toEqual([expect.objectContaining({ collection: 'shared', documents: 2 })]);
    const human = await run('index', 'stats');
    expect(human.out).toMatch(/^2 documents in 1 collection/);
  });

  it('a file with no usable line fails (exit 1); bad command lines exit 2; an unknown account is refused (exit 1)', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, 'nope\n{"title": "no url"}\n');
    const r = await run('index', 'import', bad);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/imported 0 documents/);
    expectCliFailure(await run('index', 'import'), 2, /one file/, 'no file');
    expectCliFailure(await run('index', 'import', bad, '--collection', 'a b'), 2, /--collection/, 'bad collection');
    expectCliFailure(await run('index', 'frobnicate'), 2, /unknown index subcommand/, 'unknown subcommand');
    expectCliFailure(await run('index', 'import', bad, '--collection', 'acct_missing'), 1, /no account acct_missing/, 'unknown account');
    expectCliFailure(await run('index', 'import', join(dir, 'missing.jsonl')), 1, /cannot read/, 'missing file');
  });

  describe('with a server on the same data directory', () => {
    let s: Running;
    beforeAll(async () => {
      s = await startScour('node', { dataDir: join(dir, 'data'), adminToken: ADMIN, bootstrapKey: false });
    });
    afterAll(async () => { await s?.stop(); });

    it("imports into an account's own collection; the server finds it for that account only", async () => {
      const mk = async () => (await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn' } })).body as { account_id: string; api_key: string };
      const owner = await mk();
      const other = await mk();
      const file = join(dir, 'own.jsonl');
      writeFileSync(file, `${JSON.stringify({ url: 'https://private.example.com/axolotl', title: 'Axolotl care notes', text: 'Keep the water cold.' })}\n`);
      const imported = okJson(await run('index', 'import', file, '--collection', owner.account_id, '--json'));
      expect(imported).toMatchObject({ collection: owner.account_id, indexed: 1 });
      const find = (key: string) => call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${key}`, body: { query: 'axolotl' } });
      expect((await find(owner.api_key)).body.search_results.map((x: { link: string }) => x.link)).toEqual(['https://private.example.com/axolotl']);
      expect((await find(other.api_key)).body.search_results).toEqual([]);
      // The CLI's shared import is there for everyone.
      expect((await find(other.api_key)).status).toBe(200);
      expect((await call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${other.api_key}`, body: { query: 'okapi' } })).body.search_results).toHaveLength(1);
    });
  });
});
