/**
 * When PostgreSQL or Redis is not there: start-up stops with a clear message,
 * and a running server whose database or Redis goes away answers 503
 * SERVICE_UNAVAILABLE (limits and credits fail closed), never a 500 or a hang.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PostgresAccountStore } from '../../adapters/store/postgres/index.js';
import { startScourIn } from '../support/server.js';

const TSX = join(process.cwd(), 'node_modules/.bin/tsx');
const MAIN = join(process.cwd(), 'config/cli.ts');

function serve(env: Record<string, string>) {
  const cwd = mkdtempSync(join(tmpdir(), 'scour-down-'));
  const child = spawn(TSX, [MAIN, 'serve'], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', SCOUR_SEARCH_PROVIDERS: 'local', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { exited, out: () => out, child };
}

describe('services down', () => {
  it('an unreachable PostgreSQL stops start-up with a clear message and no password in it', async () => {
    const p = serve({ DATABASE_URL: 'postgres://scour:s3cretpw@127.0.0.1:1/scour' });
    const code = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
    if (code === 'timeout') p.child.kill('SIGKILL');
    expect(code).toBe(1);
    expect(p.out()).toContain('Cannot open the PostgreSQL account store');
    expect(p.out()).not.toContain('s3cretpw');
  }, 30_000);

  it('an unreachable Redis stops start-up with a clear message', async () => {
    const p = serve({ REDIS_URL: 'redis://127.0.0.1:1' });
    const code = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
    if (code === 'timeout') p.child.kill('SIGKILL');
    expect(code).toBe(1);
    expect(p.out()).toMatch(/cannot reach Redis/i);
  }, 30_000);

  it('a database that goes away mid-run gives 503 SERVICE_UNAVAILABLE with retry_after, not 500', async () => {
    const s = await startScourIn('shared', 'uws', { adminToken: 'services-down-token-0123' });
    try {
      const created = await fetch(`${s.url}/admin/v1/accounts`, {
        method: 'POST', headers: { authorization: 'Bearer services-down-token-0123', 'content-type': 'application/json' }, body: '{"plan":"starter"}',
      });
      const { api_key } = (await created.json()) as { api_key: string };
      expect((await fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${api_key}` } })).status).toBe(200);
      await (s.scour.store as PostgresAccountStore).close();
      const res = await fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${api_key}` } });
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status).toBe(503);
      expect(body.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.retry_after).toBe(1);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(JSON.stringify(body)).not.toContain('postgres://');
    } finally {
      await s.stop();
    }
  }, 30_000);
});
