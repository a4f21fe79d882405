/**
 * scour/client (adapters/client): typed calls against the real server (search,
 * usage, tools, rate-limit state, a 400 with validation_errors, 401 and 402 not
 * retried), the retry rules of spec 7.4 against a loopback server that
 * misbehaves on purpose, msgpack, and verifyWebhook against the server's own
 * signer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scour, ScourError, verifyWebhook } from '../../adapters/client/index.js';
import { signPayload } from '../../adapters/webhooks/sign.js';
import { call } from '../support/http.js';
import { CONFIGS, startScourIn, type Running } from '../support/server.js';

const ADMIN = 'client-test-admin-token-0123456789';

async function account(base: string, credits: number): Promise<string> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits } });
  expect(r.status, r.text).toBe(201);
  return r.body.api_key as string;
}

/** The ScourError a call fails with (fails the test when it succeeds or throws something else). */
async function failure(p: Promise<unknown>): Promise<ScourError> {
  const r = await p.then(() => undefined, (e: unknown) => e);
  expect(r).toBeInstanceOf(ScourError);
  return r as ScourError;
}

/** Counts requests to the real server by wrapping fetch. */
function countingFetch() {
  const calls: string[] = [];
  const f: typeof fetch = (input, init) => {
    calls.push(`${init?.method ?? 'GET'} ${String(input)}`);
    return fetch(input, init);
  };
  return { calls, fetch: f };
}

describe.each(CONFIGS)('scour/client against the real server (%s)', (config) => {
  let s: Running;
  let key: string;
  let broke: string;

  beforeAll(async () => {
    s = await startScourIn(config, 'uws', { adminToken: ADMIN, searchProviders: ['local'] });
    key = await account(s.url, 100);
    broke = await account(s.url, 0);
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', {
      auth: `Bearer ${ADMIN}`,
      body: { collection: 'shared', documents: [{ url: 'https://news.example.com/solar', title: 'Solar panel record', text: 'A new solar panel design converts more sunlight into electricity.', language: 'en' }] },
    });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('search and usage are typed and work; rateLimit follows the last answer', async () => {
    const client = new Scour({ apiKey: key, baseUrl: s.url });
    expect(client.rateLimit).toBeNull();
    const r = await client.search({ query: 'solar panel', max_results: 5 });
    expect(r.query).toBe('solar panel');
    expect(r.results_count).toBe(r.search_results.length);
    expect(r.search_results[0]?.link).toBe('https://news.example.com/solar');
    expect(r.credits_used).toBe(1);
    expect(client.rateLimit).toMatchObject({ limit: expect.any(Number), remaining: expect.any(Number), reset: expect.any(Number) });
    const u = await client.usage();
    expect(u.credits_remaining).toBe(99);
  });

  it('tools work without a key, in json and in msgpack', async () => {
    const json = new Scour({ baseUrl: s.url });
    const a = await json.tools['uuid-generator']({ count: 2 });
    expect(JSON.stringify(a)).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    const types: string[] = [];
    const packed = new Scour({
      baseUrl: s.url, format: 'msgpack',
      fetch: async (input, init) => { const res = await fetch(input, init); types.push(res.headers.get('content-type') ?? ''); return res; },
    });
    const b = await packed.tools['base64-encoder']({ input: 'hello', action: 'encode' });
    expect(b).toMatchObject({ output: 'aGVsbG8=', byte_length: 5 });
    expect(types[0]).toMatch(/^application\/msgpack/);
    const c = await failure(packed.search({ query: 'solar' }));
    expect(c).toBeInstanceOf(ScourError); // no key: 401, decoded from msgpack
    expect((c as ScourError).status).toBe(401);
  });

  it('a 400 is a ScourError with validationErrors, tried once', async () => {
    const f = countingFetch();
    const client = new Scour({ apiKey: key, baseUrl: s.url, fetch: f.fetch, backoffMs: 1 });
    const e = await failure(client.search({ query: '' }));
    expect(e).toBeInstanceOf(ScourError);
    const err = e as ScourError;
    expect(err.status).toBe(400);
    expect(err.code).toBe('MISSING_PARAMETER');
    expect(err.validationErrors.map((v) => v.field)).toContain('query');
    expect(err.requestId).toMatch(/./);
    expect(f.calls).toHaveLength(1);
  });

  it('401 and 402 are not retried', async () => {
    const f = countingFetch();
    const bad = new Scour({ apiKey: 'sk_not_a_real_key_0123456789', baseUrl: s.url, fetch: f.fetch, backoffMs: 1 });
    const e401 = await failure(bad.usage());
    expect(e401.status).toBe(401);
    expect(['UNAUTHORIZED', 'AUTHENTICATION_FAILED']).toContain(e401.code);
    expect(f.calls).toHaveLength(1);

    const g = countingFetch();
    const poor = new Scour({ apiKey: broke, baseUrl: s.url, fetch: g.fetch, backoffMs: 1 });
    const e402 = await failure(poor.search({ query: 'solar' }));
    expect(e402.status).toBe(402);
    expect(e402.code).toBe('NO_CREDITS');
    expect(e402.creditsRemaining).toBe(0);
    expect(g.calls).toHaveLength(1);
  });
});

describe('scour/client retry rules on a misbehaving loopback server', () => {
  let server: Server;
  let base: string;
  let script: ((req: IncomingMessage, res: ServerResponse, n: number) => void) | undefined;
  let hits: number[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits.push(Date.now());
        script!(req, res, hits.length);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const setup = (fn: typeof script) => { hits = []; script = fn; };
  const client = (retries = 3) => new Scour({ apiKey: 'k', baseUrl: base, retries, backoffMs: 20 });

  it('503 twice then 200: retried, succeeds', async () => {
    setup((_q, res, n) => (n <= 2
      ? json(res, 503, { error: 'busy', code: 'SERVICE_UNAVAILABLE' })
      : json(res, 200, { credits_remaining: 5 }, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '1900000000', 'x-ratelimit-window': '60' })));
    const c = client();
    const u = await c.usage();
    expect(u).toEqual({ credits_remaining: 5 });
    expect(hits).toHaveLength(3);
    expect(c.rateLimit).toEqual({ limit: 10, remaining: 7, reset: 1900000000, window: 60 });
  });

  it('429 with retry_after 1: waits about a second, then retries', async () => {
    setup((_q, res, n) => (n === 1
      ? json(res, 429, { error: 'slow down', code: 'RATE_LIMITED', retry_after: 1 }, { 'retry-after': '1' })
      : json(res, 200, { ok: true })));
    const t0 = Date.now();
    await expect(client().search({ query: 'x' })).resolves.toEqual({ ok: true });
    expect(hits).toHaveLength(2);
    expect(hits[1]! - hits[0]!).toBeGreaterThanOrEqual(950);
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('429 without retry_after waits until x-ratelimit-reset', async () => {
    let reset = 0;
    setup((_q, res, n) => {
      if (n === 1) {
        reset = Math.ceil(Date.now() / 1000) + 1;
        return json(res, 429, { error: 'slow down', code: 'RATE_LIMITED' }, { 'x-ratelimit-reset': String(reset) });
      }
      json(res, 200, { ok: true });
    });
    await expect(client().usage()).resolves.toEqual({ ok: true });
    expect(hits[1]!).toBeGreaterThanOrEqual(reset * 1000 - 50);
  });

  it('a connection reset is retried', async () => {
    setup((req, res, n) => (n === 1 ? req.socket.destroy() : json(res, 200, { ok: true })));
    await expect(client().scrape({ url: 'https://example.com' })).resolves.toEqual({ ok: true });
    expect(hits).toHaveLength(2);
  });

  it('400 is tried once', async () => {
    setup((_q, res) => json(res, 400, { error: 'Invalid request', code: 'MISSING_PARAMETER', validation_errors: [{ field: 'url', message: 'must be a URL' }], request_id: 'req_1' }));
    const e = await failure(client().scrape({ url: 'nope' }));
    expect(e).toBeInstanceOf(ScourError);
    expect(e.validationErrors).toEqual([{ field: 'url', message: 'must be a URL' }]);
    expect(e.requestId).toBe('req_1');
    expect(hits).toHaveLength(1);
  });

  it('403 is tried once and carries upgradeUrl', async () => {
    setup((_q, res) => json(res, 403, { error: 'no', code: 'FORBIDDEN', upgrade_url: '/dashboard/billing' }));
    const e = await failure(client().usage());
    expect(e.upgradeUrl).toBe('/dashboard/billing');
    expect(hits).toHaveLength(1);
  });

  it('retries exhausted: the last status, after retries + 1 attempts', async () => {
    setup((_q, res, n) => json(res, n < 3 ? 503 : 500, { error: `fail ${n}`, code: 'INTERNAL_ERROR' }));
    const e = await failure(client(2).usage());
    expect(e).toBeInstanceOf(ScourError);
    expect(e.status).toBe(500);
    expect(e.message).toBe('fail 3');
    expect(e.attempts).toBe(3);
    expect(hits).toHaveLength(3);
  });

  it('a timed-out POST is not retried (it may still be billed); a timed-out GET is', async () => {
    setup((_q, res, n) => { if (n > 1) json(res, 200, { ok: true }); /* the first never answers */ });
    const slow = new Scour({ baseUrl: base, timeout: 200, retries: 2, backoffMs: 1 });
    const e = await failure(slow.scrape({ url: 'https://example.com' }));
    expect(e.code).toBe('TIMEOUT');
    expect(hits).toHaveLength(1);
    setup((_q, res, n) => { if (n > 1) json(res, 200, { ok: true }); });
    await expect(slow.usage()).resolves.toEqual({ ok: true });
    expect(hits).toHaveLength(2);
  });

  it('waitForJob polls the status URL with progress until a final status', async () => {
    setup((_q, res, n) => json(res, 200, { job_id: 'j', status: n < 3 ? 'running' : 'completed', done: n }));
    const seen: number[] = [];
    const job = await client().waitForJob<{ status: string; done: number }>(`${base}/v1/crawl/j`, { intervalMs: 10, onProgress: (j) => seen.push(j.done) });
    expect(job.status).toBe('completed');
    expect(seen).toEqual([1, 2, 3]);
  });
});

describe('verifyWebhook', () => {
  const secret = 'whsec_client_test_secret_0123456789abcdefghijklmnop';
  const body = JSON.stringify({ event: 'bulk_scrape.completed', delivery_id: 'dlv_1', data: { status: 'completed' } });
  const now = Math.floor(Date.now() / 1000);

  it('accepts a body signed as the server signs, from a Headers or a plain object', async () => {
    const sig = signPayload(secret, body, now);
    await expect(verifyWebhook(body, new Headers({ 'Scour-Signature': sig }), secret)).resolves.toBe(true);
    await expect(verifyWebhook(new TextEncoder().encode(body), { 'scour-signature': sig }, secret)).resolves.toBe(true);
    // Rotation: two v1 entries, the receiver holds either secret.
    const rotated = signPayload(['whsec_new_one', secret], body, now);
    await expect(verifyWebhook(body, { 'Scour-Signature': rotated }, secret)).resolves.toBe(true);
  });

  it('rejects a tampered body, a wrong secret and an old timestamp', async () => {
    const sig = signPayload(secret, body, now);
    await expect(verifyWebhook(body.replace('dlv_1', 'dlv_2'), { 'scour-signature': sig }, secret)).rejects.toThrow(/no v1 signature matches/);
    await expect(verifyWebhook(body, { 'scour-signature': sig }, 'whsec_wrong')).rejects.toThrow(/no v1 signature matches/);
    const old = signPayload(secret, body, now - 301);
    await expect(verifyWebhook(body, { 'scour-signature': old }, secret)).rejects.toThrow(/more than 300 s old/);
    await expect(verifyWebhook(body, { 'scour-signature': old }, secret, { toleranceSeconds: 600 })).resolves.toBe(true);
    await expect(verifyWebhook(body, {}, secret)).rejects.toBeInstanceOf(ScourError);
  });
});
