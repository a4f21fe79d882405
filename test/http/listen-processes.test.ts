/**
 * Real `scour serve` processes on one port: a second server on a port a
 * Scour server holds must not start (uWS listens with SO_REUSEPORT unless
 * told otherwise, and then both would answer); it exits 1 with one
 * LISTEN_FAILED line, and the first keeps answering. SCOUR_REUSE_PORT=true
 * shares the port on purpose (uws only).
 */
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { baseEnv, MAIN, type CliResult } from '../support/cli.js';
import { killAll, startProcess } from '../support/processes.js';
import { ADAPTERS } from '../support/server.js';

/** GET /healthz on a new connection each time (so SO_REUSEPORT could hand it to either process): status and request id. */
function fresh(url: string): Promise<{ status: number; id: string }> {
  return new Promise((resolve, reject) => {
    http.get(`${url}/healthz`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, id: String(res.headers['x-request-id']) }));
    }).on('error', reject);
  });
}

/** A port free right now (the kernel will not share a port it picked for port 0, so reuse needs a fixed one). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/**
 * `scour serve` run to its exit: Node itself with tsx's loader (as startProcess does), so that killing it
 * after `timeoutMs` (a server that started when it should not have) kills the server, not only a wrapper.
 */
function serveToExit(env: Record<string, string>, cwd: string, timeoutMs: number): Promise<CliResult> {
  const loader = pathToFileURL(join(process.cwd(), 'node_modules/tsx/dist/loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', loader, MAIN, 'serve'], { cwd, env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      err += `\n(still running after ${timeoutMs} ms: killed)`;
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** hyperid ids are `<instance>-<counter>`: the instance part names the process that answered. */
const instance = (id: string) => id.slice(0, id.lastIndexOf('-'));

const children: ChildProcess[] = [];
const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'scour-listen-'));
  dirs.push(d);
  return d;
};
const env = (adapter: string, port: string, extra: Record<string, string> = {}) => ({
  PORT: port, HOST: '127.0.0.1', SCOUR_HTTP_ADAPTER: adapter, SCOUR_DATA_DIR: join(dir(), 'data'), SCOUR_BOOTSTRAP_KEY: 'false', ...extra,
});

afterAll(async () => {
  await killAll(children);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(ADAPTERS)('scour serve on a port already taken, over %s', (adapter) => {
  it('the second server exits 1 with one LISTEN_FAILED line and no stack; the first keeps answering every request', async () => {
    // A fixed port, as in production: the kernel never shares a port it picked for port 0, which would hide the bug.
    const port = String(await freePort());
    const first = await startProcess(`first-${adapter}`, 'serve', env(adapter, port), dir(), children);
    const second = await serveToExit(env(adapter, port), dir(), 30_000);
    expect(second.code, `stdout:\n${second.out}\nstderr:\n${second.err}`).toBe(1);
    const lines = second.err.split('\n').filter((l) => l.trim() !== '');
    expect(lines, second.err).toHaveLength(1);
    expect(lines[0]).toMatch(/^scour: LISTEN_FAILED: .*127\.0\.0\.1:\d+/);
    expect(second.err).not.toMatch(/^\s+at /m);
    expect(second.out).not.toContain('listening');
    const replies = await Promise.all(Array.from({ length: 40 }, () => fresh(first.url)));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => instance(r.id))).size).toBe(1);
    expect(first.child.exitCode).toBeNull();
  }, 90_000);
});

describe('SCOUR_REUSE_PORT', () => {
  it('true: two uws servers share the port on purpose, and both answer', async () => {
    const port = String(await freePort());
    const a = await startProcess('reuse-a', 'serve', env('uws', port, { SCOUR_REUSE_PORT: 'true' }), dir(), children);
    const b = await startProcess('reuse-b', 'serve', env('uws', port, { SCOUR_REUSE_PORT: 'true' }), dir(), children);
    expect(b.url).toBe(a.url);
    const replies = await Promise.all(Array.from({ length: 60 }, () => fresh(a.url)));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => instance(r.id))).size).toBe(2);
  }, 90_000);

  it('true with the node adapter is refused at start-up (CONFIG_INVALID, exit 2)', async () => {
    const r = await serveToExit(env('node', '0', { SCOUR_REUSE_PORT: 'true' }), dir(), 40_000);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('SCOUR_REUSE_PORT=true needs SCOUR_HTTP_ADAPTER=uws');
  }, 60_000);
});
