/**
 * `scour webhooks show|rotate` as an operator runs it (spawned with tsx), on
 * the embedded SQLite store and on PostgreSQL: show makes the account's
 * signing secret once and then prints the same one; rotate prints a new
 * one and keeps the old one signing for --grace seconds (default 24 h, 0:
 * dropped at once), checked against the store's signing secrets; bad
 * command lines exit 2 before any store is opened, refused ones exit 1.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobStore } from '../../core/jobs.js';
import { openStore } from '../../config/store.js';
import { expectCliFailure as expectFailure, okJson as json, pooled, runCli } from '../support/cli.js';
import { freshDatabase, type FreshDatabase } from '../support/services.js';

const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;
const ANY_SECRET = /whsec_[A-Za-z0-9_-]{43}/g;
const DAY_MS = 86_400_000;

const STORES = ['sqlite', 'postgres'] as const;

describe.each(STORES)('scour webhooks on %s', { timeout: 120_000 }, (store) => {
  let cwd: string;
  let db: FreshDatabase | undefined;
  let env: Record<string, string>;
  let jobs: JobStore;
  let closeStore: () => Promise<void> | void = () => {};
  let accountId: string;
  const run = (...args: string[]) => runCli(args, env, cwd, 45_000);
  const signing = (id: string, at = Date.now()) => Effect.runPromise(jobs.signingSecrets(id, at));

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'scour-cli-webhooks-'));
    if (store === 'postgres') {
      db = await freshDatabase();
      env = { DATABASE_URL: db.url, SCOUR_DATA_DIR: join(cwd, 'unused') };
    } else {
      env = { SCOUR_DATA_DIR: join(cwd, 'data') };
    }
    accountId = json(await run('accounts', 'create', '--plan', 'starter', '--json')).account_id;
    // The test reads what the CLI wrote through the same store (a second connection).
    const opened = await openStore({ databaseUrl: db?.url, dataDir: join(cwd, 'data') });
    jobs = opened.jobs;
    closeStore = opened.close;
  });

  afterAll(async () => {
    try {
      await closeStore();
      await db?.drop();
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  let first: string;

  it('show: makes the secret on first use, then prints the same one (JSON and human)', async () => {
    expect(await signing(accountId)).toEqual([]);
    const body = json(await run('webhooks', 'show', '--account', accountId, '--json'));
    expect(Object.keys(body).sort()).toEqual(['account_id', 'created_at', 'previous_secret_expires_at', 'secret']);
    expect(body).toMatchObject({ account_id: accountId, previous_secret_expires_at: null });
    expect(body.secret).toMatch(SECRET);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    first = body.secret;
    expect(await signing(accountId)).toEqual([first]);

    const human = await run('webhooks', 'show', '--account', accountId);
    expect(human.code, human.err).toBe(0);
    expect(human.out).toBe(`account ${accountId}\nsecret  ${first}\nsince   ${body.created_at}\n`);
    expect(json(await run('webhooks', 'show', '--account', accountId, '--json'))).toEqual(body);
  });

  let second: { secret: string; created_at: string; previous_secret_expires_at: string };

  it('rotate: a new secret; by default the old one signs alongside it for 24 h', async () => {
    const body = json(await run('webhooks', 'rotate', '--account', accountId, '--json'));
    expect(body.secret).toMatch(SECRET);
    expect(body.secret).not.toBe(first);
    expect(Date.parse(body.previous_secret_expires_at) - Date.parse(body.created_at)).toBe(DAY_MS);
    expect(await signing(accountId)).toEqual([body.secret, first]);
    second = body;
    // show prints the new secret and says until when the old one signs.
    const human = await run('webhooks', 'show', '--account', accountId);
    expect(human.code, human.err).toBe(0);
    expect(human.out).toContain(`secret  ${body.secret}\n`);
    expect(human.out).toContain(`the previous secret also signs webhooks until ${body.previous_secret_expires_at}\n`);
    expect(human.out.match(ANY_SECRET)).toEqual([body.secret]);
  });

  it('rotate --grace: the given grace, and --grace 0 drops the old secret at once', async () => {
    const third = json(await run('webhooks', 'rotate', '--account', accountId, '--grace', '60', '--json'));
    expect(Date.parse(third.previous_secret_expires_at) - Date.parse(third.created_at)).toBe(60_000);
    // The secret rotated out before is dropped: at most one old secret signs.
    expect(await signing(accountId)).toEqual([third.secret, second.secret]);

    const human = await run('webhooks', 'rotate', '--account', accountId, '--grace=0');
    expect(human.code, human.err).toBe(0);
    const shown = human.out.match(ANY_SECRET) ?? [];
    expect(shown).toHaveLength(1);
    expect(human.out).toMatch(new RegExp(`^account ${accountId}\\nsecret  ${shown[0]}\\nsince   \\S+\\nthe previous secret no longer signs webhooks\\n$`));
    expect(await signing(accountId)).toEqual([shown[0]]);
    expect(json(await run('webhooks', 'show', '--account', accountId, '--json'))).toMatchObject({ secret: shown[0], previous_secret_expires_at: null });
  });

  it('bad command lines exit 2 with the reason; refused commands exit 1; neither changes the secret', async () => {
    const before = await signing(accountId);
    const id = accountId;
    // `parse`: refused by the argument parser whatever the store, so run on SQLite only (each run is a whole process).
    const cases: { args: string[]; code: 1 | 2; message: string | RegExp; parse?: true }[] = [
      { args: ['webhooks', 'list'], code: 2, message: 'unknown command: scour webhooks list' },
      { args: ['webhooks'], code: 2, message: 'unknown command: scour webhooks', parse: true },
      { args: ['webhooks', 'show'], code: 2, message: '--account is required', parse: true },
      { args: ['webhooks', 'show', id], code: 2, message: 'webhooks show takes no positional arguments', parse: true },
      { args: ['webhooks', 'rotate', '--account'], code: 2, message: '--account needs a value', parse: true },
      { args: ['webhooks', 'rotate', '--account', id, '--account', id], code: 2, message: '--account given twice', parse: true },
      { args: ['webhooks', 'rotate', '--account', id, '--grace', '-1'], code: 2, message: '--grace must be a whole number of seconds from 0 to 604800 (got "-1")', parse: true },
      { args: ['webhooks', 'rotate', '--account', id, '--grace', '604801'], code: 2, message: '--grace must be a whole number of seconds from 0 to 604800', parse: true },
      { args: ['webhooks', 'rotate', '--account', id, '--grace', '1e12'], code: 2, message: '--grace must be a whole number of seconds', parse: true },
      { args: ['webhooks', 'rotate', '--account', id, '--grace', '1.5'], code: 2, message: '--grace must be a whole number of seconds', parse: true },
      { args: ['webhooks', 'rotate', '--account', id, '--grace', 'x'], code: 2, message: '--grace must be a whole number of seconds', parse: true },
      { args: ['webhooks', 'rotate', '--account', id, '--secret', 'whsec_mine'], code: 2, message: 'unknown option --secret', parse: true },
      { args: ['webhooks', 'show', '--account', 'acct_doesnotexist'], code: 1, message: 'No account acct_doesnotexist' },
      { args: ['webhooks', 'rotate', '--account', 'acct_doesnotexist', '--grace', '0'], code: 1, message: 'No account acct_doesnotexist' },
    ];
    const chosen = cases.filter((c) => store === 'sqlite' || !c.parse);
    const results = await pooled(chosen.map((c) => () => run(...c.args)));
    chosen.forEach((c, i) => expectFailure(results[i]!, c.code, c.message, `scour ${c.args.join(' ')}`));
    // A usage error shows the command summary, webhooks included.
    expect(results[0]!.err).toContain('scour webhooks rotate --account <account_id> [--grace SECONDS]');
    expect(await signing(accountId)).toEqual(before);
    expect(await Effect.runPromise(jobs.webhookSecret('acct_doesnotexist'))).toBeUndefined();
  }, 240_000);
});

describe('scour webhooks: the command line is checked before any store is opened', () => {
  it('a usage error exits 2 without touching the database or creating the data directory', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'scour-cli-webhooks-parse-'));
    try {
      const dataDir = join(cwd, 'data');
      // Nothing listens on port 1 of loopback: opening this store would fail with another message and exit code.
      const pgEnv = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing', SCOUR_DATA_DIR: dataDir };
      const [onPg, onSqlite] = await Promise.all([
        runCli(['webhooks', 'rotate', '--account', 'acct_x', '--grace', '-1'], pgEnv, cwd),
        runCli(['webhooks', 'show'], { SCOUR_DATA_DIR: dataDir }, cwd),
      ]);
      expectFailure(onPg, 2, '--grace must be a whole number of seconds', 'postgres');
      expectFailure(onSqlite, 2, '--account is required', 'sqlite');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 120_000);
});
