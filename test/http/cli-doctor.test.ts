/**
 * npm start's set-up (scripts/setup.sh) and `scour doctor`, run for real.
 * The set-up is run with fake `apt-get`, `sudo` (and, for the privilege
 * cases, `id`) first on PATH, each recording its calls: with Chromium
 * present nothing is called; when Chromium is missing and cannot be
 * installed the script still exits 0 and says what to run. The doctor is
 * run with everything present (exit 0) and with Chromium missing (exit 1,
 * a line naming Chromium and the fix). `scour serve` without Chromium
 * starts and logs the same fix.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, MAIN, runCli, TSX } from '../support/cli.js';
import { startHackernews } from '../support/standins/hackernews.js';
import { startWikipedia } from '../support/standins/wikipedia.js';
import { PG_ADMIN_URL, REDIS_TEST_URL } from '../support/services.js';

const SETUP = join(process.cwd(), 'scripts/setup.sh');

/** A bin directory with recording fakes: each writes "name args" to `calls` (`id`'s calls are not kept) and exits with its code. */
function fakeBin(fakes: Record<string, { exit: number; stdout?: string }>): { dir: string; calls: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'scour-fakebin-'));
  const log = join(dir, 'calls.log');
  for (const [name, f] of Object.entries(fakes)) {
    const file = join(dir, name);
    writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> '${log}'\n${f.stdout !== undefined ? `echo '${f.stdout}'\n` : ''}exit ${f.exit}\n`);
    chmodSync(file, 0o755);
  }
  return { dir, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('id ')) : []) };
}

function runSetup(env: Record<string, string>, binDir: string) {
  const started = Date.now();
  const r = spawnSync('bash', [SETUP], { env: { ...baseEnv(env), PATH: `${binDir}:${process.env.PATH ?? ''}` }, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr, ms: Date.now() - started };
}

/** A Chromium path that does not exist (and is what the script treats as Debian's, for the install cases). */
function missingChromium(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scour-nochromium-'));
  return join(dir, 'chromium');
}

describe('npm start set-up (scripts/setup.sh)', () => {
  it('with Chromium present: exits 0 quickly, silently, with no apt-get or sudo call', () => {
    expect(existsSync('/usr/bin/chromium'), 'the services script installs Chromium before the suites').toBe(true);
    const fakes = fakeBin({ 'apt-get': { exit: 0 }, sudo: { exit: 0 } });
    const r = runSetup({}, fakes.dir);
    expect(r.code, r.err).toBe(0);
    expect(r.out + r.err).toBe('');
    expect(fakes.calls()).toEqual([]);
    expect(r.ms).toBeLessThan(2000);
  });

  it('without Chromium and without privileges (not root, sudo wants a password): exits 0 with one line giving the command', () => {
    const path = missingChromium();
    const fakes = fakeBin({ 'apt-get': { exit: 0 }, sudo: { exit: 1 }, id: { exit: 0, stdout: '1000' } });
    const r = runSetup({ SCOUR_CHROMIUM_PATH: path, SCOUR_SETUP_DEBIAN_CHROMIUM: path }, fakes.dir);
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    const lines = r.err.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Chromium (render_js) is not installed at ${path}`);
    expect(lines[0]).toContain('run: sudo apt-get install -y chromium');
    // Only the non-interactive probe: never a password prompt, never apt.
    expect(fakes.calls()).toEqual(['sudo -n true']);
  });

  it('without Chromium, privileged, but no package source: apt is tried (bounded, quiet), the script still exits 0 and says what to run', () => {
    const path = missingChromium();
    const fakes = fakeBin({ 'apt-get': { exit: 100 }, sudo: { exit: 1 }, id: { exit: 0, stdout: '0' } });
    const r = runSetup({ SCOUR_CHROMIUM_PATH: path, SCOUR_SETUP_DEBIAN_CHROMIUM: path }, fakes.dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain("installing Debian's chromium");
    expect(r.err).toContain('could not install Chromium (render_js)');
    expect(r.err).toContain('run: apt-get install -y chromium');
    const calls = fakes.calls();
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatch(/^apt-get -q -y -o DPkg::Lock::Timeout=120 install --no-install-recommends chromium$/);
    expect(calls[1]).toMatch(/^apt-get -q -y -o DPkg::Lock::Timeout=120 update$/);
  });

  it('a custom SCOUR_CHROMIUM_PATH that is missing: no apt call (Debian would not put it there), one line with the fix', () => {
    const fakes = fakeBin({ 'apt-get': { exit: 0 }, sudo: { exit: 0 } });
    const r = runSetup({ SCOUR_CHROMIUM_PATH: '/nonexistent/chromium' }, fakes.dir);
    expect(r.code).toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain('SCOUR_CHROMIUM_PATH=/nonexistent/chromium');
    expect(r.err).toContain('point SCOUR_CHROMIUM_PATH at a Chromium binary');
    expect(fakes.calls()).toEqual([]);
  });

  it('SCOUR_SETUP=skip does nothing', () => {
    const fakes = fakeBin({ 'apt-get': { exit: 0 }, sudo: { exit: 0 } });
    const r = runSetup({ SCOUR_SETUP: 'skip', SCOUR_CHROMIUM_PATH: missingChromium() }, fakes.dir);
    expect(r.code).toBe(0);
    expect(r.out + r.err).toBe('');
    expect(fakes.calls()).toEqual([]);
  });
});

describe('scour doctor', () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), 'scour-doctor-'));

  it('everything present (embedded defaults): one ok line per part, Chromium launched with its version, exit 0', async () => {
    const cwd = dataDir();
    const r = await runCli(['doctor'], { SCOUR_DATA_DIR: join(cwd, 'data') }, cwd, 60_000);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/^ok\s+Node\.js\s+v20\./m);
    expect(r.out).toMatch(/^ok\s+uWS\s+native binding uws_linux_x64_\d+\.node/m);
    expect(r.out).toMatch(/^ok\s+SQLite\s+3\.\d+\.\d+ with FTS5/m);
    expect(r.out).toMatch(/^ok\s+Chromium\s+\/usr\/bin\/chromium: Chromium \d+\.\d+/m);
    expect(r.out).toMatch(/^skipped\s+PostgreSQL\s+DATABASE_URL not set/m);
    expect(r.out).toMatch(/^skipped\s+Redis\s+REDIS_URL not set/m);
    expect(r.out).toMatch(/^info\s+egress\s+public addresses only/m);
    expect(r.out).toMatch(/^info\s+proxies\s+none configured/m);
    expect(r.out).toContain('Everything this configuration needs is present and working.');
    // Doctor writes nothing: the data directory is only checked.
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  }, 90_000);

  it('with PostgreSQL, Redis, loopback egress and proxies configured: checks each, --json, exit 0', async () => {
    const cwd = dataDir();
    const r = await runCli(['doctor', '--json'], {
      DATABASE_URL: PG_ADMIN_URL,
      REDIS_URL: REDIS_TEST_URL,
      SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback',
      SCOUR_PROXIES: 'datacenter:US=http://user:secret@127.0.0.1:3128',
    }, cwd, 60_000);
    expect(r.code, r.out + r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.ok).toBe(true);
    const byName = Object.fromEntries(report.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.PostgreSQL.status).toBe('ok');
    expect(byName.PostgreSQL.detail).toMatch(/server \d+/);
    expect(byName.Redis.status).toBe('ok');
    expect(byName.Redis.detail).toMatch(/server \d+\.\d+/);
    expect(byName.egress.detail).toContain('loopback');
    expect(byName.proxies.status).toBe('ok');
    expect(byName.proxies.detail).toContain('1 configured (1 datacenter');
    expect(r.out).not.toContain('secret');
  }, 90_000);

  it('Chromium missing (SCOUR_CHROMIUM_PATH at a missing file) and Redis down: exit 1, a line naming each with its fix', async () => {
    const cwd = dataDir();
    const r = await runCli(['doctor'], { SCOUR_CHROMIUM_PATH: '/nonexistent/chromium', REDIS_URL: 'redis://127.0.0.1:1' }, cwd, 60_000);
    expect(r.code, r.out + r.err).toBe(1);
    const chromium = r.out.split('\n').find((l) => /^missing\s+Chromium/.test(l));
    expect(chromium, r.out).toBeDefined();
    expect(chromium).toContain('/nonexistent/chromium');
    expect(chromium).toContain('Fix: point SCOUR_CHROMIUM_PATH at a Chromium binary, or unset it and run: sudo apt-get install -y chromium');
    expect(r.out).toMatch(/^failed\s+Redis\s+redis:\/\/127\.0\.0\.1:1: connect ECONNREFUSED.*Fix: start Redis/m);
    expect(r.out).toContain('2 problems: Chromium, Redis');
  }, 90_000);

  it('search providers: one small query each (ok with the time and count, failed with the fix, exit 1); --offline lists them and contacts none', async () => {
    const wiki = await startWikipedia();
    const hn = await startHackernews();
    try {
      wiki.setHits([{ title: 'Science', snippet: '<span class="searchmatch">Science</span> is', timestamp: '2026-01-01T00:00:00Z', pageid: 1 }]);
      hn.setMode('error');
      const cwd = dataDir();
      const env = {
        SCOUR_DATA_DIR: join(cwd, 'data'), SCOUR_SEARCH_PROVIDERS: 'local,wikipedia,hackernews',
        SCOUR_PROVIDER_WIKIPEDIA_URL: `${wiki.url}/{lang}`, SCOUR_PROVIDER_HACKERNEWS_URL: hn.url,
      };
      const r = await runCli(['doctor'], env, cwd, 60_000);
      expect(r.code, r.out + r.err).toBe(1);
      expect(r.out).toMatch(/^info\s+provider local\s+the local index, on this machine/m);
      expect(r.out).toMatch(new RegExp(`^ok\\s+provider wikipedia\\s+${wiki.url.replace(/[.]/g, '\\.')}/\\{lang\\}/w/api\\.php: answered in \\d+ ms \\(1 result for a test query\\)`, 'm'));
      const failed = r.out.split('\n').find((l) => /^failed\s+provider hackernews/.test(l));
      expect(failed, r.out).toContain('HTTP 5');
      expect(failed).toContain('Fix: check the network and SCOUR_PROVIDER_HACKERNEWS_* settings, or leave hackernews out of SCOUR_SEARCH_PROVIDERS');
      expect(r.out).toContain('1 problem: provider hackernews');
      expect(wiki.requests.length).toBe(1);

      const before = wiki.requests.length + hn.requests.length;
      const off = await runCli(['doctor', '--offline', '--json'], env, cwd, 60_000);
      const report = JSON.parse(off.out);
      const byName = Object.fromEntries(report.checks.map((c: { name: string }) => [c.name, c]));
      expect(byName['provider wikipedia']).toMatchObject({ status: 'info' });
      expect(byName['provider wikipedia'].detail).toContain('not contacted: --offline');
      expect(byName['provider hackernews'].status).toBe('info');
      expect(wiki.requests.length + hn.requests.length).toBe(before);
      const bad = await runCli(['doctor', '--offline', '--later'], env, cwd, 60_000);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('doctor takes only --json and --offline');
    } finally {
      await wiki.close();
      await hn.close();
    }
  }, 120_000);
});

describe('scour serve without Chromium', () => {
  it('starts anyway and logs one warn line with the fix', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'scour-serve-nochromium-'));
    mkdirSync(join(cwd, 'data'));
    const child = spawn(TSX, [MAIN, 'serve'], {
      cwd,
      env: baseEnv({ PORT: '0', HOST: '127.0.0.1', SCOUR_CHROMIUM_PATH: '/nonexistent/chromium', SCOUR_BOOTSTRAP_KEY: 'false' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + 20_000;
    while (!out.includes('render_js unavailable') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('Scour listening on');
    const warn = out.split('\n').filter((l) => l.includes('render_js unavailable'));
    expect(warn, out).toHaveLength(1);
    const line = JSON.parse(warn[0]!);
    expect(line.level).toBe(40);
    expect(line.msg).toBe('render_js unavailable (answers 503): Chromium is not installed at /nonexistent/chromium; fix: point SCOUR_CHROMIUM_PATH at a Chromium binary, or unset it and run: sudo apt-get install -y chromium');
  }, 30_000);
});
