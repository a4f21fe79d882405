/**
 * `scour loadtest` against a real server: the CLI runs scenarios to a
 * request count and reports status classes, latency per operation and the
 * server's samples (JSON when piped; a self-contained HTML page); command
 * line mistakes exit 2 and a set-up without the admin token exits 1, before
 * any load. The engine, against a loopback server that answers in 100 ms on
 * one connection: closed loop measures from the send (about 100 ms), open
 * loop from when each request was due, so the queue behind the one
 * connection shows (no coordinated omission).
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../../adapters/cli/loadtest/engine.js';
import { slope } from '../../adapters/cli/loadtest/sampler.js';
import { baseEnv, runCli } from '../support/cli.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'loadtest-suite-admin-token-0123456789';

let s: Running;
let dir: string;

beforeAll(async () => {
  s = await startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', toolsRateLimit: { limit: 1_000_000, windowSeconds: 60 } });
  dir = mkdtempSync(join(tmpdir(), 'scour-loadtest-'));
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('scour loadtest (CLI)', () => {
  it('tools, open loop, 150 requests: all answered 200, per-second series, server samples; JSON when piped', async () => {
    const r = await runCli(['loadtest', 'tools', '--url', s.url, '--requests', '150', '--rate', '100'], baseEnv({}), dir, 60_000);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.result).toMatchObject({ sent: 150, completed: 150, dropped: 0, mode: { kind: 'open', rate: 100 } });
    expect(report.result.classes).toEqual({ '2xx': 150, '4xx': 0, '429': 0, '5xx': 0, errors: 0 });
    expect(report.result.byTag.tools.latency.count).toBe(150);
    expect(report.result.latency.p99).toBeGreaterThanOrEqual(report.result.latency.p50);
    expect(report.result.perSecond.length).toBeGreaterThanOrEqual(1);
    expect(report.server.length).toBeGreaterThanOrEqual(1);
    expect(report.server[0]).toMatchObject({ rssBytes: expect.any(Number), openFds: expect.any(Number), chromium: 0 });
    expect(report.server[0].rssBytes).toBeGreaterThan(10 * 1024 * 1024);
  }, 90_000);

  it('mixed (closed loop) with accounts, a corpus and a target site of its own: every operation answered, no 5xx; the HTML report is self-contained', async () => {
    const html = join(dir, 'mixed.html');
    const out = join(dir, 'mixed.json');
    const r = await runCli(['loadtest', 'mixed', '--url', s.url, '--requests', '120', '--connections', '4', '--admin-token', ADMIN, '--html', html, '--out', out], baseEnv({}), dir, 120_000);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/set up: 1 account\(s\), target site http:\/\/127\.0\.0\.1:\d+, 300 documents/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.result.completed).toBe(120);
    expect(report.result.classes['5xx']).toBe(0);
    expect(report.result.classes.errors).toBe(0);
    // The blend reaches the common operations (a 120-request sample of the weights).
    for (const tag of ['tools', 'usage', 'search', 'scrape']) expect(report.result.byTag[tag]?.latency.count, tag).toBeGreaterThan(0);
    expect(report.result.groups['non-render'].latency.count).toBeGreaterThan(100);
    const page = readFileSync(html, 'utf8');
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<svg');
    expect(page).not.toMatch(/<script|<link|\bsrc=|https?:\/\/(?!127\.0\.0\.1)/i);
  }, 180_000);

  it('command-line mistakes exit 2 before any load; a scenario that needs accounts without the admin token exits 1', async () => {
    for (const args of [
      ['loadtest'],
      ['loadtest', 'nope'],
      ['loadtest', 'tools', '--rate', '10', '--connections', '2'],
      ['loadtest', 'tools', '--duration', '5', '--requests', '5'],
      ['loadtest', 'tools', '--rate', 'fast'],
      ['loadtest', 'tools', '--url', 'ftp://x'],
      ['loadtest', 'tools', '--bogus'],
    ]) {
      const r = await runCli(args.includes('--url') ? args : [...args, '--url', s.url], baseEnv({}), dir, 30_000);
      expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(2);
      expect(r.err).toMatch(/^scour: /);
    }
    const noToken = await runCli(['loadtest', 'usage', '--url', s.url, '--requests', '5'], baseEnv({ SCOUR_ADMIN_TOKEN: '' }), dir, 30_000);
    expect(noToken.code, noToken.err).toBe(1);
    expect(noToken.err).toMatch(/admin-token/);
    const help = await runCli(['loadtest', '--help'], baseEnv({}), dir, 30_000);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/research-quick/);
  }, 120_000);
});

describe('the load engine', () => {
  let slow: Server;
  let url: string;
  beforeAll(async () => {
    slow = createServer((_req, res) => setTimeout(() => res.end('ok'), 100));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    slow.closeAllConnections();
    await new Promise((r) => slow.close(r));
  });

  it('closed loop measures from the send; open loop from when each request was due (the queue shows)', async () => {
    const next = () => ({ method: 'GET' as const, path: '/', tag: 'slow' });
    const closed = await runLoad({ base: url, mode: { kind: 'closed', connections: 1 }, requests: 10, next });
    expect(closed.latency.p50).toBeGreaterThanOrEqual(95);
    expect(closed.latency.max).toBeLessThan(400);
    // 20 a second through one connection that serves 10 a second: request k waits about k * 50 ms in the queue.
    const open = await runLoad({ base: url, mode: { kind: 'open', rate: 20 }, requests: 20, next, poolConnections: 1 });
    expect(open.completed).toBe(20);
    expect(open.latency.max).toBeGreaterThan(900);
    expect(open.latency.p50).toBeGreaterThan(400);
    // The queue was the server's: the generator itself handed every request over about when it was due.
    expect(open.sendLag.count).toBe(20);
    expect(open.sendLag.p99).toBeLessThan(open.latency.p50);
    // Throughput is what the server answered (about 10 a second), not what was offered (20), though all 20 were sent in a second.
    expect(open.throughput).toBeGreaterThan(6);
    expect(open.throughput).toBeLessThan(13);
  }, 30_000);

  it('slope is the least-squares gradient', () => {
    expect(slope([{ x: 0, y: 1 }, { x: 1, y: 3 }, { x: 2, y: 5 }])).toBeCloseTo(2);
    expect(slope([{ x: 0, y: 7 }])).toBe(0);
  });
});
