/**
 * The real command: `scour serve` starts with no settings but a free port,
 * answers, and exits 0 on SIGTERM; invalid settings stop start-up with a
 * clear message and exit code 2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const TSX = join(process.cwd(), 'node_modules/.bin/tsx');
const MAIN = join(process.cwd(), 'config/cli.ts');

function run(args: string[], env: Record<string, string>) {
  const cwd = mkdtempSync(join(tmpdir(), 'scour-cli-'));
  const child = spawn(TSX, [MAIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SCOUR_SEARCH_PROVIDERS: 'local', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, cwd, exited, out: () => out, err: () => err };
}

describe('scour CLI', () => {
  it('serve: starts, answers, and shuts down cleanly on SIGTERM', async () => {
    const p = run(['serve'], { PORT: '0', HOST: '127.0.0.1' });
    const deadline = Date.now() + 20_000;
    let url: string | undefined;
    while (!url && Date.now() < deadline) {
      url = /"url":"(http:[^"]+)"/.exec(p.out())?.[1];
      if (!url) await new Promise((r) => setTimeout(r, 50));
    }
    expect(url, p.out() + p.err()).toBeDefined();
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.out()).toContain('"msg":"stopped"');
  }, 30_000);

  it('refuses invalid settings with a clear message and exit code 2', async () => {
    const p = run(['serve'], { PORT: 'eighty', LOG_LEVEL: 'chatty' });
    expect(await p.exited).toBe(2);
    expect(p.err()).toContain('Invalid configuration');
    expect(p.err()).toContain('PORT must be an integer from 0 to 65535 (got "eighty")');
    expect(p.err()).toContain('LOG_LEVEL');
  }, 30_000);

  it('worker: runs jobs without HTTP, and stops cleanly on SIGTERM', async () => {
    const p = run(['worker'], { SCOUR_WORKER_CONCURRENCY: '3' });
    const deadline = Date.now() + 20_000;
    while (!/"worker":"/.test(p.out()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(p.out(), p.out() + p.err()).toMatch(/"mode":"embedded"/);
    expect(p.out()).toMatch(/"concurrency":3/);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.out()).toContain('"msg":"stopped"');
  }, 30_000);

  it('worker: refuses a queue without Redis, and bad job settings, with exit code 2', async () => {
    const p = run(['worker'], { SCOUR_JOBS: 'queue', SCOUR_WEBHOOK_SCHEDULE: '5s,never', SCOUR_JOB_LEASE: '0' });
    expect(await p.exited).toBe(2);
    expect(p.err()).toContain('SCOUR_JOBS=queue needs REDIS_URL');
    expect(p.err()).toContain('SCOUR_WEBHOOK_SCHEDULE');
    expect(p.err()).toContain('SCOUR_JOB_LEASE');
  }, 30_000);

  it('help lists the commands and the environment', async () => {
    const p = run(['help'], {});
    expect(await p.exited).toBe(0);
    expect(p.out()).toContain('scour serve');
    expect(p.out()).toContain('scour worker');
    expect(p.out()).toContain('SCOUR_JOBS');
    expect(p.out()).toContain('SCOUR_DATA_DIR');
  }, 30_000);
});
