/**
 * The synchronous bulk answer is streamed (docs/bulk-and-webhooks.md), over both
 * adapters on real loopback ports, against the loopback target site: the
 * head and the first results leave before the slowest URL is done; the
 * streamed body is the same document as the whole answer (msgpack, which is
 * not streamed) with identity, gzip and br; input order holds when later
 * URLs finish first; a client that goes away mid-stream leaves the server
 * serving and the account whole; a failure after the head went out (the
 * store failing to charge) cuts the body and charges nothing; a bulk whose
 * every URL fails is still a streamed 200; a bulk refused before its work
 * (400, 402, 429) is an ordinary error answer. Raw node:http requests, so
 * the test sees each chunk when it arrives and nothing is decoded behind
 * its back.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import zlib from 'node:zlib';
import { Effect } from 'effect';
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../core/errors.js';
import { ADAPTERS, startScour, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'bulk-stream-admin-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Each chunk as it arrived, ms after the request was sent. */
  chunks: { at: number; bytes: Buffer }[];
  body: Buffer;
  /** The body ended normally (the terminating chunk arrived). */
  complete: boolean;
  /** ms after sending: the head, the end (or the cut). */
  headAt: number;
  endAt: number;
}

/**
 * POST a body on its own connection and collect the answer chunk by chunk.
 * `until(text so far)` true: the client goes away there (the answer so far is returned).
 */
function post(port: number, path: string, body: unknown, headers: Record<string, string>, until?: (text: string) => boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const a: Answer = { status: res.statusCode!, headers: res.headers, chunks: [], body: Buffer.alloc(0), complete: false, headAt: performance.now() - t0, endAt: 0 };
      let text = '';
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        a.endAt = performance.now() - t0;
        a.body = Buffer.concat(a.chunks.map((c) => c.bytes));
        resolve(a);
      };
      res.on('data', (d: Buffer) => {
        a.chunks.push({ at: performance.now() - t0, bytes: d });
        if (until !== undefined) {
          text += d.toString('latin1');
          if (until(text)) {
            settle();
            req.destroy();
          }
        }
      });
      res.on('end', () => {
        a.complete = res.complete;
        settle();
      });
      res.on('error', () => settle());
      res.on('close', () => settle());
    });
    req.on('error', (e) => reject(e));
    req.end(JSON.stringify(body));
  });
}

/** The body as the client reads it: Content-Encoding undone. */
function decoded(a: Answer): string {
  const coding = a.headers['content-encoding'];
  const bytes = coding === 'gzip' ? zlib.gunzipSync(a.body) : coding === 'br' ? zlib.brotliDecompressSync(a.body) : a.body;
  if (coding !== undefined) expect(['gzip', 'br']).toContain(coding);
  return bytes.toString('utf8');
}

const streamedHead = (a: Answer) => {
  expect(a.status).toBe(200);
  expect(a.headers['transfer-encoding']).toBe('chunked');
  expect(a.headers['content-length']).toBeUndefined();
  expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(typeof a.headers['x-request-id']).toBe('string');
  expect(a.headers['x-ratelimit-limit']).toBeDefined();
};

/** What differs between two runs of the same bulk: ids, timings. */
function comparable(body: any): any {
  const { request_id: _id, processing_time: _t, ...rest } = body;
  return {
    ...rest,
    results: rest.results.map((r: any) => (r.result === undefined ? r : { ...r, result: { ...r.result, load_time: 0 } })),
  };
}

describe.each(ADAPTERS)('streamed synchronous bulk scrape over %s', (adapter) => {
  let site: TargetSite;
  let s: Running;

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScour(adapter, { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  async function account(plan: string, credits: number): Promise<{ key: string; auth: Record<string, string> }> {
    const r = await post(s.port, '/admin/v1/accounts', { plan, credits }, { authorization: `Bearer ${ADMIN}` });
    const key = JSON.parse(r.body.toString('utf8')).api_key as string;
    return { key, auth: { authorization: `Bearer ${key}` } };
  }

  async function usage(key: string): Promise<{ credits_remaining: number; credits_reserved: number; credits_used: number }> {
    return (await (await fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as never;
  }

  /** Usage once nothing is held any more (a hold is released by its finalizer, just after the answer ends). */
  async function settledUsage(key: string) {
    const deadline = Date.now() + 5000;
    let u = await usage(key);
    while (u.credits_reserved !== 0 && Date.now() < deadline) {
      await sleep(50);
      u = await usage(key);
    }
    return u;
  }

  it('sends the head and the first results before the slowest URL is done', async () => {
    const a = await account('unicorn', 1000);
    const urls = [`${site.url}/html/simple?first`, `${site.url}/links?first`, `${site.url}/slow?ms=2500&first`];
    const r = await post(s.port, '/v1/scrape/bulk', { urls }, { ...a.auth, 'accept-encoding': 'identity' });
    streamedHead(r);
    expect(r.complete).toBe(true);
    // When the first result was whole: the second one's start is in the stream.
    let text = '';
    let firstDoneAt: number | undefined;
    for (const c of r.chunks) {
      text += c.bytes.toString('latin1');
      if (text.includes(`,{"url":${JSON.stringify(urls[1])}`)) {
        firstDoneAt = c.at;
        break;
      }
    }
    expect(firstDoneAt, 'the first two results arrived').toBeDefined();
    expect(r.chunks[0]!.bytes.toString('latin1').startsWith('{"results":[')).toBe(true);
    // The slow page answers 2.5 s after the bulk started: the first results came well before the end.
    expect(r.endAt).toBeGreaterThanOrEqual(2400);
    expect(firstDoneAt!).toBeLessThan(r.endAt - 1200);
    expect(r.headAt).toBeLessThan(r.endAt - 1200);
    const body = JSON.parse(decoded(r));
    expect(body.results.map((x: { url: string }) => x.url)).toEqual(urls);
    expect(body).toMatchObject({ total: 3, succeeded: 3, failed: 0, credits_used: 9, remaining_credits: 991, request_id: r.headers['x-request-id'] });
    expect(await settledUsage(a.key)).toMatchObject({ credits_remaining: 991, credits_reserved: 0, credits_used: 9 });
  });

  it('streams the same document as the whole answer (msgpack), with identity, gzip and br', async () => {
    const a = await account('unicorn', 10_000);
    const urls = [
      `${site.url}/html/simple`, `${site.url}/links`, `${site.url}/images`, `${site.url}/structured`,
      `${site.url}/blocked`, 'ftp://example.com/', 'http://127.0.0.1:1/', `${site.url}/status/404`, `${site.url}/charset/meta-1251`,
    ];
    const request = { urls, extract_links: true, extract_images: true, extract_schema: true, extract_meta: true, main_content: true, markdown: true };
    const whole = await post(s.port, '/v1/scrape/bulk', request, { ...a.auth, accept: 'application/msgpack', 'accept-encoding': 'identity' });
    expect(whole.status).toBe(200);
    expect(whole.headers['content-type']).toBe('application/msgpack');
    expect(whole.headers['transfer-encoding']).toBeUndefined();
    expect(Number(whole.headers['content-length'])).toBe(whole.body.byteLength);
    const reference = unpack(whole.body) as any;
    expect(reference.total).toBe(urls.length);
    expect(reference.results.filter((x: { success: boolean }) => !x.success).length).toBe(3);
    for (const encoding of ['identity', 'gzip', 'br']) {
      const r = await post(s.port, '/v1/scrape/bulk', request, { ...a.auth, 'accept-encoding': encoding });
      streamedHead(r);
      expect(r.complete).toBe(true);
      expect(r.headers['content-encoding']).toBe(encoding === 'identity' ? undefined : encoding);
      const body = JSON.parse(decoded(r));
      expect(body.request_id).toBe(r.headers['x-request-id']);
      expect(typeof body.processing_time).toBe('number');
      // Each request is charged the same; the balance moves on.
      expect(body.remaining_credits).toBe(reference.remaining_credits - body.credits_used * (['identity', 'gzip', 'br'].indexOf(encoding) + 1));
      expect(comparable(body), encoding).toEqual({ ...comparable(reference), remaining_credits: body.remaining_credits });
    }
  });

  it('keeps input order when later URLs finish first; a result done early waits for its turn', async () => {
    const a = await account('unicorn', 1000);
    const urls = [`${site.url}/slow?ms=1200&order`, `${site.url}/slow?ms=300&order`, `${site.url}/html/simple?order`];
    const r = await post(s.port, '/v1/scrape/bulk', { urls, concurrent_requests: 3 }, { ...a.auth, 'accept-encoding': 'identity' });
    streamedHead(r);
    // Nothing but the opening before the first URL is done.
    const early = Buffer.concat(r.chunks.filter((c) => c.at < 1000).map((c) => c.bytes)).toString('utf8');
    expect(early === '' || early === '{"results":[').toBe(true);
    const body = JSON.parse(decoded(r));
    expect(body.results.map((x: { url: string }) => x.url)).toEqual(urls);
    expect(body.results.every((x: { success: boolean }) => x.success)).toBe(true);
  });

  it('a client that goes away mid-stream: the server keeps serving, nothing is charged, nothing stays held', async () => {
    const a = await account('unicorn', 1000);
    const urls = [`${site.url}/html/simple?gone`, `${site.url}/slow?ms=4000&gone`, `${site.url}/slow?ms=4000&gone2`];
    const r = await post(s.port, '/v1/scrape/bulk', { urls }, { ...a.auth, 'accept-encoding': 'identity' }, (text) => text.includes('"success":'));
    expect(r.status).toBe(200);
    expect(r.complete).toBe(false);
    // The server still answers, a bulk included.
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const other = await post(s.port, '/v1/scrape/bulk', { urls: [`${site.url}/html/simple?after`] }, { ...a.auth, 'accept-encoding': 'gzip' });
    expect(other.status).toBe(200);
    expect(JSON.parse(decoded(other))).toMatchObject({ succeeded: 1, credits_used: 3 });
    // The bulk that lost its client stopped before billing: only the second one is charged.
    expect(await settledUsage(a.key)).toMatchObject({ credits_remaining: 997, credits_reserved: 0, credits_used: 3 });
  });

  it('a failure after the head went out (the store cannot charge) cuts the body: no complete document, nothing charged, the hold released', async () => {
    const a = await account('unicorn', 1000);
    const store = s.scour.store;
    const settle = store.settle;
    let refused = 0;
    store.settle = () => {
      refused++;
      return Effect.fail(new ServiceUnavailable({ message: 'The account store is unavailable', retryAfter: 1 }));
    };
    let r: Answer;
    try {
      for (const encoding of ['identity', 'gzip']) {
        // A compressed head goes out with the compressor's first bytes, a moment after the work starts (the thread
        // pool): the slow URL makes sure billing fails after it, as it does on a real bulk.
        const urls = [`${site.url}/html/simple?cut`, `${site.url}/slow?ms=300&cut`];
        r = await post(s.port, '/v1/scrape/bulk', { urls }, { ...a.auth, 'accept-encoding': encoding });
        streamedHead(r);
        expect(r.complete, encoding).toBe(false);
        if (encoding === 'identity') {
          const text = r.body.toString('utf8');
          expect(text.startsWith('{"results":[{"url":')).toBe(true);
          expect(text).not.toContain('"total"');
          expect(() => JSON.parse(text)).toThrow();
        } else {
          expect(() => JSON.parse(zlib.gunzipSync(r.body, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).toString('utf8'))).toThrow();
        }
      }
    } finally {
      store.settle = settle;
    }
    expect(refused).toBe(2);
    expect(await settledUsage(a.key)).toMatchObject({ credits_remaining: 1000, credits_reserved: 0, credits_used: 0 });
    // The server is fine afterwards.
    const ok = await post(s.port, '/v1/scrape/bulk', { urls: [`${site.url}/html/simple?cut-after`] }, { ...a.auth, 'accept-encoding': 'identity' });
    expect(ok.complete).toBe(true);
    expect(JSON.parse(decoded(ok))).toMatchObject({ succeeded: 1, credits_used: 3, remaining_credits: 997 });
  });

  it('a bulk whose every URL fails is still a streamed 200, charged nothing', async () => {
    const a = await account('unicorn', 1000);
    const urls = ['http://127.0.0.1:1/all-fail', `${site.url}/blocked?all-fail`];
    const r = await post(s.port, '/v1/scrape/bulk', { urls }, { ...a.auth, 'accept-encoding': 'gzip' });
    streamedHead(r);
    expect(r.complete).toBe(true);
    const body = JSON.parse(decoded(r));
    expect(body).toMatchObject({ total: 2, succeeded: 0, failed: 2, credits_used: 0, remaining_credits: 1000 });
    expect(body.results.map((x: any) => x.error.code)).toEqual(['TARGET_UNREACHABLE', 'TARGET_BLOCKED']);
    expect(await settledUsage(a.key)).toMatchObject({ credits_remaining: 1000, credits_reserved: 0, credits_used: 0 });
  });

  it('a bulk refused before its work (400, 402, 429) is an ordinary error answer, not streamed', async () => {
    const refused = (r: Answer, status: number, code: string) => {
      expect(r.status).toBe(status);
      expect(r.complete).toBe(true);
      expect(r.headers['transfer-encoding']).toBeUndefined();
      expect(Number(r.headers['content-length'])).toBe(r.body.byteLength);
      const body = JSON.parse(decoded(r));
      expect(body.code).toBe(code);
      expect(body.request_id).toBe(r.headers['x-request-id']);
      expect(typeof body.timestamp).toBe('string');
    };
    const poor = await account('starter', 2);
    refused(await post(s.port, '/v1/scrape/bulk', { urls: [`${site.url}/html/simple`] }, { ...poor.auth, 'accept-encoding': 'gzip' }), 402, 'NO_CREDITS');
    const free = await account('free', 100);
    // The free plan allows 5 bulk requests a minute; refused bodies count too.
    for (let k = 0; k < 5; k++) refused(await post(s.port, '/v1/scrape/bulk', { urls: [] }, { ...free.auth, 'accept-encoding': 'identity' }), 400, 'MISSING_PARAMETER');
    refused(await post(s.port, '/v1/scrape/bulk', { urls: [`${site.url}/html/simple`] }, { ...free.auth, 'accept-encoding': 'identity' }), 429, 'RATE_LIMITED');
    const none = await post(s.port, '/v1/scrape/bulk', { urls: ['ftp://a/'] }, { ...poor.auth });
    refused(none, 400, 'TARGET_NOT_ALLOWED');
  });
});
