/**
 * Target sites that misbehave on purpose, scraped through the real server
 * (plain fetcher): each gives its documented error (docs/scrape.md "Errors
 * of a scrape"), costs nothing, leaves no connection open to the target, and the
 * server keeps serving. A page that is merely ugly (invalid UTF-8) is delivered and charged like any page;
 * one that sends more than its Content-Length is refused as malformed.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'hostile-targets-admin-token-0123456789';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_DECODED_BYTES } from '../../adapters/egress/index.js';

/** The plain fetcher's body limit (bytes). */
const MAX_BODY = DEFAULT_MAX_BODY_BYTES;
/** A bomb expands to twice what the fetcher decodes. */
const BOMB = 2 * DEFAULT_MAX_DECODED_BYTES;

let site: Server;
let origin: string;
const sockets = new Set<Socket>();
let s: Running;
let key: string;

const html = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;

/** Writes `chunk` until the client goes away or `max` bytes are sent (never forever). */
function flood(res: ServerResponse, chunk: Buffer, max: number): void {
  let sent = 0;
  const more = () => {
    while (sent < max) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    res.end();
  };
  res.on('close', () => { sent = max; });
  more();
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  switch (path) {
    case '/stall-after-headers':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.flushHeaders();
      return; // never a byte of body
    case '/reset-mid-body':
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
      res.write('<!doctype html><html><body><p>half a pa');
      setTimeout(() => req.socket.resetAndDestroy(), 50);
      return;
    case '/short-body': // declares more than it sends, then closes
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '5000' });
      res.write(html('only this'));
      setTimeout(() => req.socket.destroy(), 50);
      return;
    case '/long-body': { // sends more than it declares: bytes after the message are a malformed next response
      const page = html('<p>declared part</p>');
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(Buffer.byteLength(page)) });
      req.socket.write(page + '<p>undeclared trailing garbage</p>'.repeat(100));
      req.socket.end();
      return;
    }
    case '/redirect-forever': {
      const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '0');
      res.writeHead(302, { location: `/redirect-forever?n=${n + 1}` }).end();
      return;
    }
    case '/loop-a':
      res.writeHead(301, { location: '/loop-b' }).end();
      return;
    case '/loop-b':
      res.writeHead(301, { location: '/loop-a' }).end();
      return;
    case '/endless-chunked':
      res.writeHead(200, { 'content-type': 'text/html' }); // chunked: no length
      flood(res, Buffer.from('<p>more</p>'.repeat(1000)), 4 * MAX_BODY);
      return;
    case '/gzip-bomb': {
      const bomb = gzipSync(Buffer.alloc(BOMB, 0x20), { level: 9 });
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': String(bomb.length) }).end(bomb);
      return;
    }
    case '/brotli-bomb': {
      const bomb = brotliCompressSync(Buffer.alloc(BOMB, 0x20), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br', 'content-length': String(bomb.length) }).end(bomb);
      return;
    }
    case '/invalid-utf8': {
      const bytes = Buffer.concat([Buffer.from('<!doctype html><html><head><meta charset="utf-8"><title>bad bytes</title></head><body><p>caf'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from(' ok</p></body></html>')]);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(bytes.length) }).end(bytes);
      return;
    }
    case '/one-huge-line':
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(100 * 1024 * 1024) });
      flood(res, Buffer.alloc(64 * 1024, 0x61), 100 * 1024 * 1024);
      return;
    case '/bad-gzip':
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': '20' }).end(Buffer.from('this is not gzip!!!!'));
      return;
    default:
      res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>fine</p>'));
  }
}

beforeAll(async () => {
  site = createServer(handle);
  site.on('connection', (c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  s = await startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
  const created = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
  expect(created.status, created.text).toBe(201);
  key = created.body.api_key as string;
}, 60_000);

afterAll(async () => {
  await s?.stop();
  for (const c of sockets) c.destroy();
  await new Promise((r) => site?.close(r));
});

async function balance(): Promise<number> {
  return (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_remaining as number;
}

async function noConnectionsLeft(): Promise<void> {
  for (let i = 0; i < 100 && sockets.size > 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(sockets.size, 'connections to the target left open').toBe(0);
}

const scrape = (path: string, extra: Record<string, unknown> = {}) =>
  call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body: { url: `${origin}${path}`, ...extra } });

describe('hostile targets: documented error, nothing charged, nothing left open', () => {
  it.each([
    ['/stall-after-headers', { timeout: 2 }, 504, 'TARGET_TIMEOUT'],
    ['/reset-mid-body', {}, 502, 'TARGET_UNREACHABLE'],
    ['/short-body', {}, 502, 'TARGET_UNREACHABLE'],
    ['/redirect-forever', {}, 502, 'TARGET_RESPONSE_INVALID'],
    ['/loop-a', {}, 502, 'TARGET_RESPONSE_INVALID'],
    ['/endless-chunked', {}, 502, 'TARGET_RESPONSE_INVALID'],
    ['/gzip-bomb', {}, 502, 'TARGET_RESPONSE_INVALID'],
    ['/brotli-bomb', {}, 502, 'TARGET_RESPONSE_INVALID'],
    ['/one-huge-line', {}, 502, 'TARGET_RESPONSE_INVALID'],
    ['/bad-gzip', {}, 502, 'TARGET_RESPONSE_INVALID'],
  ] as const)('%s: %s %s', async (path, extra, status, code) => {
    const before = await balance();
    const r = await scrape(path, extra);
    expectErrorBody(r, status, code);
    expect(await balance()).toBe(before);
    await noConnectionsLeft();
    // And the server serves the next request at once.
    expect((await scrape('/fine')).status).toBe(200);
  }, 60_000);

  it('invalid UTF-8 is decoded with replacement characters, delivered and charged', async () => {
    const before = await balance();
    const r = await scrape('/invalid-utf8');
    expect(r.status, r.text).toBe(200);
    expect(r.body.text_content).toMatch(/caf\uFFFD.* ok/);
    expect(r.body.credits_used).toBeGreaterThan(0);
    expect(await balance()).toBe(before - (r.body.credits_used as number));
  });

  it('a body longer than its Content-Length is refused as malformed (no response smuggling), uncharged', async () => {
    const before = await balance();
    const r = await scrape('/long-body');
    expectErrorBody(r, 502, 'TARGET_RESPONSE_INVALID');
    expect(r.body.details).toMatch(/malformed/);
    expect(await balance()).toBe(before);
    await noConnectionsLeft();
  });
});
