/**
 * The account CLI as an operator runs it (`scour accounts|keys|credits`,
 * spawned with tsx), on the embedded SQLite store and on PostgreSQL:
 * every command's JSON and human output, the exit codes of bad command
 * lines (2) and refused commands (1), and the development key that the
 * first `serve` on an empty store prints once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, MAIN, pooled, runCli, TSX, expectCliFailure as expectFailure, okJson as json } from '../support/cli.js';
import { freshDatabase, type FreshDatabase } from '../support/services.js';

const KEY = /^sk_[A-Za-z0-9_-]{43}$/;
const ANY_KEY = /sk_[A-Za-z0-9_-]{43}/g;

interface Result {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}


/** Run one CLI command to completion (killed after 45 s: each run transpiles and loads the app, slow on a busy machine). */
const cli = (env: Record<string, string>, cwd: string, ...args: string[]): Promise<Result> => runCli(args, env, cwd, 45_000);

const occurrences = (text: string, needle: string): number => text.split(needle).length - 1;

const STORES = ['sqlite', 'postgres'] as const;

describe.each(STORES)('scour accounts|keys|credits on %s', { timeout: 90_000 }, (store) => {
  let cwd: string;
  let db: FreshDatabase | undefined;
  let env: Record<string, string>;
  const run = (...args: string[]) => cli(env, cwd, ...args);

  let account: { account_id: string; api_key: string; key_id: string };
  let ciKey: { key_id: string; api_key: string };

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'scour-cli-accounts-'));
    if (store === 'postgres') {
      db = await freshDatabase();
      env = { DATABASE_URL: db.url, SCOUR_DATA_DIR: join(cwd, 'unused') };
    } else {
      env = { SCOUR_DATA_DIR: join(cwd, 'data') };
    }
  });

  afterAll(async () => {
    try {
      await db?.drop();
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('accounts create --json: the account and its first key, shown once', async () => {
    const body = json(await run('accounts', 'create', '--plan', 'starter', '--credits', '1000', '--json'));
    expect(Object.keys(body).sort()).toEqual(['account_id', 'api_key', 'credits_remaining', 'key_id', 'plan', 'reset_date']);
    expect(body.account_id).toMatch(/^acct_/);
    expect(body.api_key).toMatch(KEY);
    expect(body.key_id).toMatch(/^key_/);
    expect(body.plan).toBe('starter');
    expect(body.credits_remaining).toBe(1000);
    expect(new Date(body.reset_date).toISOString()).toBe(body.reset_date);
    expect(Date.parse(body.reset_date)).toBeGreaterThan(Date.now());
    account = body;
  });

  it('accounts create (human): readable, the key appears exactly once', async () => {
    const r = await run('accounts', 'create', '--plan', 'free', '--name', 'human one');
    expect(r.code, r.err).toBe(0);
    const keys = r.out.match(ANY_KEY) ?? [];
    expect(keys).toHaveLength(1);
    expect(occurrences(r.out, keys[0]!)).toBe(1);
    expect(r.out).toMatch(/^account acct_\S+ \(free, 100 credits\)$/m);
    expect(r.out).toMatch(/^key id\s+key_\S+$/m);
    expect(r.out).toContain('shown once');
    expect(r.out.trim().startsWith('{')).toBe(false);
  });

  it('accounts list: both accounts, JSON and human', async () => {
    const body = json(await run('accounts', 'list', '--json'));
    expect(body.accounts).toHaveLength(2);
    const mine = body.accounts.find((a: any) => a.account_id === account.account_id);
    expect(mine).toMatchObject({ plan: 'starter', credits_remaining: 1000, credits_reserved: 0, monthly_credits: 5000, name: null });
    expect(body.accounts.find((a: any) => a.account_id !== account.account_id)).toMatchObject({ plan: 'free', name: 'human one', credits_remaining: 100 });
    const human = await run('accounts', 'list');
    expect(human.code).toBe(0);
    expect(human.out.trim().split('\n')).toHaveLength(2);
    expect(human.out).toMatch(new RegExp(`^${account.account_id}\\s+starter\\s+1000 credits`, 'm'));
    expect(human.out).not.toMatch(ANY_KEY);
  });

  it('accounts show: the account and its keys, never the key itself', async () => {
    const r = await run('accounts', 'show', account.account_id, '--json');
    const body = json(r);
    expect(r.out).not.toContain(account.api_key);
    expect(r.out).not.toMatch(ANY_KEY);
    expect(body).toMatchObject({ account_id: account.account_id, plan: 'starter', credits_remaining: 1000, breakdown: [] });
    expect(body.keys).toHaveLength(1);
    expect(body.keys[0]).toMatchObject({ key_id: account.key_id, account_id: account.account_id, status: 'active', revoked_at: null, expires_at: null });
    expect(account.api_key.startsWith(body.keys[0].prefix)).toBe(true);
    expect(body.keys[0].prefix.length).toBeLessThan(20);
    const human = await run('accounts', 'show', account.account_id);
    expect(human.code).toBe(0);
    expect(human.out).toContain(account.account_id);
    expect(human.out).not.toContain(account.api_key);
  });

  it('accounts set-plan: changes the plan and keeps the credits', async () => {
    const r = await run('accounts', 'set-plan', account.account_id, '--plan', 'builder');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`account ${account.account_id} is now on builder\n`);
    const body = json(await run('accounts', 'show', account.account_id, '--json'));
    expect(body).toMatchObject({ plan: 'builder', credits_remaining: 1000, monthly_credits: 25_000 });
    const again = json(await run('accounts', 'set-plan', account.account_id, '--plan', 'builder', '--json'));
    expect(again).toMatchObject({ account_id: account.account_id, plan: 'builder' });
  });

  it('keys create: a named key with an expiry, shown once', async () => {
    const expires = new Date(Date.now() + 30 * 86_400_000);
    const body = json(await run('keys', 'create', '--account', account.account_id, '--name', 'ci', '--expires-at', expires.toISOString(), '--json'));
    expect(body.api_key).toMatch(KEY);
    expect(body.api_key).not.toBe(account.api_key);
    expect(body).toMatchObject({ account_id: account.account_id, expires_at: expires.toISOString() });
    expect(body.key_id).toMatch(/^key_/);
    expect(body.api_key.startsWith(body.prefix)).toBe(true);
    ciKey = body;
    const human = await run('keys', 'create', '--account', account.account_id);
    expect(human.code, human.err).toBe(0);
    const shown = human.out.match(ANY_KEY) ?? [];
    expect(shown).toHaveLength(1);
    expect(human.out).toMatch(/^key id\s+key_\S+$/m);
  });

  it('keys list: prefixes and statuses, never the keys', async () => {
    const r = await run('keys', 'list', '--account', account.account_id, '--json');
    const body = json(r);
    expect(r.out).not.toMatch(ANY_KEY);
    expect(body.keys).toHaveLength(3);
    const ci = body.keys.find((k: any) => k.key_id === ciKey.key_id);
    expect(ci).toMatchObject({ name: 'ci', status: 'active', prefix: ciKey.api_key.slice(0, ci.prefix.length), revoked_at: null });
    expect(ci.expires_at).not.toBeNull();
    for (const k of body.keys) expect(k.status).toBe('active');
    const human = await run('keys', 'list', '--account', account.account_id);
    expect(human.code).toBe(0);
    expect(human.out.trim().split('\n')).toHaveLength(3);
    expect(human.out).toMatch(new RegExp(`^${ciKey.key_id}\\s+\\S+\\.\\.\\.\\s+active\\s+ci$`, 'm'));
    expect(human.out).not.toMatch(ANY_KEY);
  });

  it('keys revoke: the key is listed as revoked', async () => {
    const r = await run('keys', 'revoke', ciKey.key_id);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(new RegExp(`^key ${ciKey.key_id} revoked at \\d{4}-\\d{2}-\\d{2}T`));
    const body = json(await run('keys', 'list', '--account', account.account_id, '--json'));
    const ci = body.keys.find((k: any) => k.key_id === ciKey.key_id);
    expect(ci.status).toBe('revoked');
    expect(ci.revoked_at).not.toBeNull();
    expect(body.keys.filter((k: any) => k.status === 'active')).toHaveLength(2);
    // Revoking again is idempotent and keeps the first time.
    const again = json(await run('keys', 'revoke', ciKey.key_id, '--json'));
    expect(again).toMatchObject({ key_id: ciKey.key_id, status: 'revoked', revoked_at: ci.revoked_at });
  });

  it('credits add: tops up the balance', async () => {
    const body = json(await run('credits', 'add', '--account', account.account_id, '--amount', '250', '--json'));
    expect(body).toMatchObject({ account_id: account.account_id, credits_remaining: 1250 });
    const human = await run('credits', 'add', '--account', account.account_id, '--amount', '1');
    expect(human.code).toBe(0);
    expect(human.out).toBe(`account ${account.account_id} now has 1251 credits\n`);
  });

  it('bad command lines exit 2 with the reason; refused commands exit 1', async () => {
    const id = account.account_id;
    const past = new Date(Date.now() - 86_400_000).toISOString();
    // `parse`: refused by the argument parser whatever the store, so run on SQLite only (each run is a whole process).
    const cases: { args: string[]; code: 1 | 2; message: string | RegExp; parse?: true }[] = [
      { args: ['accounts', 'frobnicate'], code: 2, message: 'unknown command: scour accounts frobnicate' },
      { args: ['frobnicate'], code: 2, message: 'unknown command "frobnicate"', parse: true },
      { args: ['accounts', 'create', '--plan', 'gold'], code: 2, message: '--plan must be one of free, starter, builder, unicorn (got "gold")' },
      { args: ['accounts', 'create', '--credits', '10'], code: 2, message: '--plan is required', parse: true },
      { args: ['accounts', 'create', '--plan', 'starter', '--credits', '-5'], code: 2, message: '--credits must be a whole number from 0', parse: true },
      { args: ['accounts', 'create', '--plan', 'starter', '--credits', 'abc'], code: 2, message: '--credits must be a whole number from 0', parse: true },
      { args: ['accounts', 'create', '--plan', 'starter', '--colour', 'blue'], code: 2, message: 'unknown option --colour', parse: true },
      { args: ['accounts', 'show', id, id], code: 2, message: 'expected exactly one account id', parse: true },
      { args: ['keys', 'list'], code: 2, message: '--account is required', parse: true },
      { args: ['keys', 'create', '--account', id, '--expires-at', 'yesterday'], code: 2, message: '--expires-at must be an ISO 8601 date-time (got "yesterday")', parse: true },
      { args: ['credits', 'add', '--account', id, '--amount', '0'], code: 2, message: '--amount must be a whole number from 1', parse: true },
      { args: ['credits', 'add', '--account', id, '--amount', '-3'], code: 2, message: '--amount must be a whole number from 1', parse: true },
      { args: ['accounts', 'show', 'acct_doesnotexist'], code: 1, message: 'No account acct_doesnotexist' },
      { args: ['keys', 'list', '--account', 'acct_doesnotexist'], code: 1, message: 'No account acct_doesnotexist' },
      { args: ['keys', 'create', '--account', 'acct_doesnotexist'], code: 1, message: 'No account acct_doesnotexist' },
      { args: ['credits', 'add', '--account', 'acct_doesnotexist', '--amount', '5'], code: 1, message: 'No account acct_doesnotexist' },
      { args: ['accounts', 'set-plan', 'acct_doesnotexist', '--plan', 'free'], code: 1, message: 'No account acct_doesnotexist' },
      { args: ['keys', 'revoke', 'key_doesnotexist'], code: 1, message: 'No key key_doesnotexist' },
      { args: ['keys', 'create', '--account', id, '--expires-at', past], code: 1, message: /expires_at must be in the future/ },
    ];
    const chosen = cases.filter((c) => store === 'sqlite' || !c.parse);
    const results = await pooled(chosen.map((c) => () => run(...c.args)));
    chosen.forEach((c, i) => expectFailure(results[i]!, c.code, c.message, `scour ${c.args.join(' ')}`));
    // A usage error shows the command summary after the reason.
    expect(results[0]!.err).toContain('scour accounts create --plan');

    // None of them changed anything.
    const after = json(await run('accounts', 'show', id, '--json'));
    expect(after).toMatchObject({ plan: 'builder', credits_remaining: 1251 });
    expect(after.keys).toHaveLength(3);
    expect(json(await run('accounts', 'list', '--json')).accounts).toHaveLength(2);
  }, 240_000);
});

describe('scour serve: the development key on an empty store', () => {
  let dataDir: string;
  const children: ChildProcess[] = [];

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'scour-bootstrap-'));
  });

  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  interface Served {
    readonly url: string;
    /** SIGTERM, then the exit code ('timeout' after 15 s) and everything printed. */
    stop(): Promise<{ code: number | null | 'timeout'; out: string; err: string }>;
    out(): string;
  }

  /** Start serve on the shared data dir and wait for the listening line (and for `until`, when given). */
  async function serveOnce(until?: RegExp): Promise<Served> {
    const child = spawn(TSX, [MAIN, 'serve'], {
      cwd: dataDir,
      env: baseEnv({ SCOUR_DATA_DIR: join(dataDir, 'data'), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    // Generous: a tsx-loaded server on a loaded machine can take many seconds to listen; only a failure waits it out.
    const deadline = Date.now() + 60_000;
    let url: string | undefined;
    while ((!url || (until && !until.test(out))) && child.exitCode === null && Date.now() < deadline) {
      url ??= /"url":"(http:[^"]+)"/.exec(out)?.[1];
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!url) throw new Error(`serve did not start\n${out}\n${err}`);
    return {
      url,
      out: () => out,
      async stop() {
        child.kill('SIGTERM');
        const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))]);
        return { code, out, err };
      },
    };
  }

  it('the first start prints one key that works; it is never logged; a second start prints none', async () => {
    const first = await serveOnce(/sk_[A-Za-z0-9_-]{43}[\s\S]*Try it:[^\n]*\n/);
    const keys = [...new Set(first.out().match(ANY_KEY) ?? [])];
    expect(keys, first.out()).toHaveLength(1);
    const key = keys[0]!;
    expect(first.out()).toContain('Development API key');
    const usage = await fetch(`${first.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    expect(usage.status).toBe(200);
    const body = (await usage.json()) as { plan: string; credits_remaining: number };
    expect(body.plan).toBe('unicorn');
    expect(body.credits_remaining).toBe(100_000);
    const stopped = await first.stop();
    expect(stopped.code).toBe(0);
    const logLines = stopped.out.split('\n').filter((l) => l.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(1);
    for (const l of logLines) expect(l).not.toContain(key);
    expect(stopped.err).not.toContain(key);

    // Same data dir: the store has an account, so no key is made or printed.
    const second = await serveOnce();
    // Exit 0 on SIGTERM proves the start-up (bootstrap included) finished: the signal handlers are installed after it.
    await new Promise((r) => setTimeout(r, 500));
    const again = await second.stop();
    expect(again.code, again.out + again.err).toBe(0);
    expect(again.out).not.toMatch(ANY_KEY);
    expect(again.out).not.toContain('Development API key');
    // Still one account (the development one) in the store.
    const list = await cli({ SCOUR_DATA_DIR: join(dataDir, 'data') }, dataDir, 'accounts', 'list', '--json');
    const accounts = json(list).accounts;
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ plan: 'unicorn', name: 'development' });
  }, 120_000);
});
