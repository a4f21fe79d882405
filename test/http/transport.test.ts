/**
 * The transport layer of the HTTP contract, against both adapters on real
 * loopback ports: HEAD and OPTIONS, CORS (public tools, listed origins for
 * the rest), response compression by Accept-Encoding, compressed request
 * bodies (zip bombs, corrupt and unknown codings), Accept q-values, and the
 * bounded echo of a huge path. Raw node:http requests, so nothing decodes
 * or adds headers behind the test's back.
 */
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { Effect } from 'effect';
import { pack, unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineOperation } from '../../plugins/sdk/index.js';
import { ADAPTERS, startScour, type Running } from '../support/server.js';

const LIMIT = 64 * 1024;
const APP_ORIGIN = 'https://app.example.com';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request on its own connection; the body comes back as bytes, undecoded. */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (r: Raw): any => JSON.parse(r.body.toString('utf8'));
const post = (port: number, path: string, body: unknown, headers: Record<string, string> = {}) =>
  raw(port, 'POST', path, { 'content-type': 'application/json', ...headers }, typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));

/** Undo a response's Content-Encoding (what a browser would do). */
function decoded(r: Raw): Buffer {
  const enc = r.headers['content-encoding'];
  if (enc === 'br') return zlib.brotliDecompressSync(r.body);
  if (enc === 'gzip') return zlib.gunzipSync(r.body);
  expect(enc).toBeUndefined();
  return r.body;
}

/** The Vary header's members, lower case (several Vary lines are one list). */
const vary = (r: Raw): string[] => String(r.headers.vary ?? '').split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);

/** Answers the headers its pipeline sees (it declares none beyond accept). */
const echoHeaders = defineOperation({
  name: 'operation-test-transport-echo',
  routes: () => [{
    method: 'GET', path: '/test/transport-headers', summary: 'echo headers', auth: 'none',
    handle: (ctx) => Effect.succeed({ headers: ctx.headers }),
  }, {
    method: 'GET', path: '/test/image', summary: '4 KiB of PNG-typed bytes', auth: 'none', produces: { contentType: 'image/png' },
    handle: () => Effect.succeed(new Uint8Array(4096).fill(7)),
  }],
});

/** Raw bytes over one keep-alive connection: what HEAD really puts on the wire. */
function wire(port: number, requests: string, settleMs = 400): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('error', reject);
    socket.write(requests);
    setTimeout(() => {
      socket.destroy();
      resolve(out);
    }, settleMs);
  });
}

/** A body that inflates far past the limit from a small compressed size, built without holding it whole. */
function bomb(coding: 'gzip' | 'br' | 'deflate', inflatedMiB: number): Promise<Buffer> {
  const z = coding === 'gzip' ? zlib.createGzip({ level: 9 }) : coding === 'deflate' ? zlib.createDeflate({ level: 9 })
    : zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
  const parts: Buffer[] = [];
  z.on('data', (d: Buffer) => parts.push(d));
  const done = new Promise<Buffer>((resolve) => z.on('end', () => resolve(Buffer.concat(parts))));
  const chunk = Buffer.alloc(1 << 20, 0x61);
  z.write('{"input":"');
  for (let i = 0; i < inflatedMiB; i++) z.write(chunk);
  z.end('"}');
  return done;
}

describe.each(ADAPTERS)('HTTP transport over %s', (adapter) => {
  let s: Running;
  let cors: Running;
  let key: string;
  let corsKey: string;

  beforeAll(async () => {
    s = await startScour(adapter, { bodyLimit: LIMIT }, { plugins: [echoHeaders] });
    cors = await startScour(adapter, { corsOrigins: [APP_ORIGIN, 'http://localhost:3000'] }, { plugins: [echoHeaders] });
    key = (await Effect.runPromise(s.scour.accounts.createAccount({ plan: 'unicorn', name: 't' }))).key.apiKey;
    corsKey = (await Effect.runPromise(cors.scour.accounts.createAccount({ plan: 'unicorn', name: 't' }))).key.apiKey;
  });
  afterAll(async () => {
    await s?.stop();
    await cors?.stop();
  });

  describe('HEAD and OPTIONS', () => {
    it('HEAD on every GET route answers as GET does, without the body', async () => {
      for (const [path, headers] of [
        ['/healthz', {}],
        ['/v1/openapi.json', {}],
        ['/metrics', {}],
        ['/v1/usage', { authorization: `Bearer ${key}` }],
      ] as const) {
        const get = await raw(s.port, 'GET', path, headers);
        const head = await raw(s.port, 'HEAD', path, headers);
        expect(head.status, path).toBe(get.status);
        expect(head.status, path).toBe(200);
        expect(head.body.length, path).toBe(0);
        expect(head.headers['content-type'], path).toBe(get.headers['content-type']);
        expect(head.headers['x-request-id'], path).toMatch(/^[\w-]{10,}$/);
        if (path === '/healthz' || path === '/v1/openapi.json') expect(Number(head.headers['content-length']), path).toBe(get.body.length);
      }
      // A failure too: the status and headers of GET's, no body.
      const unauth = await raw(s.port, 'HEAD', '/v1/usage');
      expect(unauth.status).toBe(401);
      expect(unauth.headers['www-authenticate']).toBe('Bearer');
      expect(unauth.body.length).toBe(0);
      // A dynamic GET route.
      const job = await raw(s.port, 'HEAD', '/v1/scrape/bulk/bulk_0123456789abcdef0123456789abcdef', { authorization: `Bearer ${key}` });
      expect(job.status).toBe(404);
      expect(job.body.length).toBe(0);
    });

    it('HEAD puts no body on the wire, so the next request on the connection is read right (also for 404 and 405)', async () => {
      const out = await wire(s.port,
        'HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n' +
        'HEAD /v1/nowhere HTTP/1.1\r\nHost: x\r\n\r\n' +
        'HEAD /v1/tools/uuid-generator HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      const statuses = [...out.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
      expect(statuses, out).toEqual([200, 404, 405, 200]);
      expect(out.endsWith('\r\n\r\n{"status":"ok"}'), out).toBe(true);
      expect(out.match(/\{/g), out).toHaveLength(1); // only the GET carried a body
    });

    it('OPTIONS on a known path: 204 with Allow (HEAD with GET, OPTIONS always), no body; unknown path: 404', async () => {
      const cases: Array<[string, string]> = [
        ['/v1/tools/uuid-generator', 'OPTIONS, POST'],
        ['/healthz', 'GET, HEAD, OPTIONS'],
        ['/v1/usage', 'GET, HEAD, OPTIONS'],
        ['/v1/scrape/bulk/bulk_0123456789abcdef0123456789abcdef', 'GET, HEAD, OPTIONS'],
        ['/v1/crawl/crawl_0123456789abcdef', 'DELETE, GET, HEAD, OPTIONS'],
      ];
      for (const [path, allow] of cases) {
        const r = await raw(s.port, 'OPTIONS', path);
        expect(r.status, path).toBe(204);
        expect(r.headers.allow, path).toBe(allow);
        expect(r.body.length, path).toBe(0);
        expect(r.headers['x-request-id'], path).toMatch(/^[\w-]{10,}$/);
      }
      const missing = await raw(s.port, 'OPTIONS', '/v1/nope');
      expect(missing.status).toBe(404);
      expect(json(missing).code).toBe('NOT_FOUND');
      // The connection stays usable after a 204 (no stray body bytes).
      const out = await wire(s.port, 'OPTIONS /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect([...out.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1])), out).toEqual([204, 200]);
    });
  });

  describe('CORS', () => {
    it('developer tools allow every origin, on success and on error, and expose the rate-limit headers', async () => {
      const ok = await post(s.port, '/v1/tools/base64-encoder', { input: 'x' }, { origin: 'https://anyone.example' });
      expect(ok.status).toBe(200);
      expect(ok.headers['access-control-allow-origin']).toBe('*');
      const exposed = String(ok.headers['access-control-expose-headers']).split(',').map((x) => x.trim());
      expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']));
      const bad = await post(s.port, '/v1/tools/base64-encoder', '{bad', { origin: 'https://anyone.example' });
      expect(bad.status).toBe(400);
      expect(bad.headers['access-control-allow-origin']).toBe('*');
    });

    it('a preflight to a tool: 204 with the allowed method, headers and max age', async () => {
      const r = await raw(s.port, 'OPTIONS', '/v1/tools/json-formatter', {
        origin: 'https://anyone.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type',
      });
      expect(r.status).toBe(204);
      expect(r.headers['access-control-allow-origin']).toBe('*');
      expect(String(r.headers['access-control-allow-methods'])).toContain('POST');
      expect(String(r.headers['access-control-allow-headers']).split(',').map((x) => x.trim())).toContain('content-type');
      expect(r.headers['access-control-max-age']).toBe('7200');
      expect(r.body.length).toBe(0);
    });

    it('authenticated routes send no CORS headers by default, not even to a preflight', async () => {
      const r = await raw(s.port, 'GET', '/v1/usage', { authorization: `Bearer ${key}`, origin: APP_ORIGIN });
      expect(r.status).toBe(200);
      for (const h of Object.keys(r.headers)) expect(h.startsWith('access-control-'), h).toBe(false);
      expect(vary(r)).not.toContain('origin');
      const pre = await raw(s.port, 'OPTIONS', '/v1/usage', { origin: APP_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' });
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      // Neither do the other routes (only the tools are public).
      const health = await raw(s.port, 'GET', '/healthz', { origin: APP_ORIGIN });
      expect(health.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('with SCOUR_CORS_ORIGINS, a listed origin is allowed (Vary: Origin), preflight with Authorization included; others are not', async () => {
      const listed = await raw(cors.port, 'GET', '/v1/usage', { authorization: `Bearer ${corsKey}`, origin: APP_ORIGIN });
      expect(listed.status).toBe(200);
      expect(listed.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      expect(vary(listed)).toContain('origin');
      expect(String(listed.headers['access-control-expose-headers'])).toContain('x-ratelimit-remaining');
      expect(listed.headers['access-control-allow-credentials']).toBeUndefined();
      // An error from a listed origin is readable too.
      const unauth = await raw(cors.port, 'GET', '/v1/usage', { origin: 'http://localhost:3000' });
      expect(unauth.status).toBe(401);
      expect(unauth.headers['access-control-allow-origin']).toBe('http://localhost:3000');
      for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'null', 'https://APP.example.com:8443']) {
        const other = await raw(cors.port, 'GET', '/v1/usage', { authorization: `Bearer ${corsKey}`, origin });
        expect(other.status, origin).toBe(200);
        expect(other.headers['access-control-allow-origin'], origin).toBeUndefined();
        expect(vary(other), origin).toContain('origin');
      }
      const pre = await raw(cors.port, 'OPTIONS', '/v1/usage', { origin: APP_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' });
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      expect(String(pre.headers['access-control-allow-headers']).split(',').map((x) => x.trim())).toEqual(expect.arrayContaining(['authorization', 'content-type']));
      expect(String(pre.headers['access-control-allow-methods'])).toContain('GET');
      expect(vary(pre)).toContain('origin');
      const refused = await raw(cors.port, 'OPTIONS', '/v1/usage', { origin: 'https://evil.example', 'access-control-request-method': 'GET' });
      expect(refused.status).toBe(204);
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
      expect(refused.headers['access-control-allow-headers']).toBeUndefined();
      // The tools stay public on this server too.
      const tool = await post(cors.port, '/v1/tools/uuid-generator', {}, { origin: 'https://evil.example' });
      expect(tool.headers['access-control-allow-origin']).toBe('*');
    });

    it('the pipeline never sees the transport headers (Origin, Accept-Encoding, Content-Encoding)', async () => {
      const r = await raw(cors.port, 'GET', '/test/transport-headers', { accept: 'application/json', origin: APP_ORIGIN, 'accept-encoding': 'gzip', 'content-encoding': 'gzip' });
      expect(r.status).toBe(200);
      expect(json(r).headers).toEqual({ accept: 'application/json' });
      expect(r.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    });
  });

  describe('response compression', () => {
    const lorem = (count: number) => ({ unit: 'words', count, seed: 7 });

    it('br or gzip by Accept-Encoding q-values (br preferred), with Content-Encoding and Vary; the bytes decode to the same JSON', async () => {
      const plain = await raw(s.port, 'GET', '/v1/openapi.json');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(vary(plain)).toContain('accept-encoding');
      const cases: Array<[string, string | undefined]> = [
        ['br', 'br'],
        ['gzip', 'gzip'],
        ['gzip, deflate, br', 'br'],
        ['gzip, deflate, br, zstd', 'br'],
        ['br;q=0.5, gzip', 'gzip'],
        ['BR;Q=0.9, GZIP;Q=0.8', 'br'],
        ['*', 'br'],
        ['br;q=0, *', 'gzip'],
        ['gzip;q=0, br;q=0', undefined],
        ['identity', undefined],
        ['deflate', undefined],
        ['gzip;q=abc', undefined],
        ['gzip;q=2', undefined],
        [',,;;=, ;q=, br;q=', undefined],
      ];
      for (const [accept, coding] of cases) {
        const r = await raw(s.port, 'GET', '/v1/openapi.json', { 'accept-encoding': accept });
        expect(r.status, accept).toBe(200);
        expect(r.headers['content-encoding'], accept).toBe(coding);
        expect(vary(r), accept).toContain('accept-encoding');
        expect(decoded(r).equals(plain.body), accept).toBe(true);
        if (coding !== undefined) expect(r.body.length, accept).toBeLessThan(plain.body.length / 4);
      }
    });

    it('compresses from 1 KiB on, in line (small) and on the thread pool (large), for JSON and msgpack; tiny answers stay as they are', async () => {
      const tiny = await post(s.port, '/v1/tools/uuid-generator', {}, { 'accept-encoding': 'br, gzip' });
      expect(tiny.status).toBe(200);
      expect(tiny.headers['content-encoding']).toBeUndefined();
      expect(vary(tiny)).not.toContain('accept-encoding');
      for (const [count, coding] of [[300, 'br'], [300, 'gzip'], [8000, 'br'], [8000, 'gzip']] as const) {
        const r = await post(s.port, '/v1/tools/lorem-ipsum-generator', lorem(count), { 'accept-encoding': coding });
        expect(r.status, `${count} ${coding}`).toBe(200);
        expect(r.headers['content-encoding']).toBe(coding);
        const body = JSON.parse(decoded(r).toString('utf8'));
        expect(body.request_id).toBe(r.headers['x-request-id']);
        expect(body.word_count ?? body.output.split(/\s+/).length).toBeGreaterThan(count / 2);
        expect(Number(r.headers['content-length'])).toBe(r.body.length);
      }
      const mp = await post(s.port, '/v1/tools/lorem-ipsum-generator', lorem(3000), { accept: 'application/msgpack', 'accept-encoding': 'gzip' });
      expect(mp.headers['content-type']).toBe('application/msgpack');
      expect(mp.headers['content-encoding']).toBe('gzip');
      expect(unpack(decoded(mp)).request_id).toBe(mp.headers['x-request-id']);
    });

    it('HEAD is answered uncompressed; images are never compressed, other text is (Prometheus metrics)', async () => {
      const get = await raw(s.port, 'GET', '/v1/openapi.json');
      const head = await raw(s.port, 'HEAD', '/v1/openapi.json', { 'accept-encoding': 'br' });
      expect(head.status).toBe(200);
      expect(head.headers['content-encoding']).toBeUndefined();
      expect(Number(head.headers['content-length'])).toBe(get.body.length);
      expect(vary(head)).toContain('accept-encoding');
      expect(head.body.length).toBe(0);
      const png = await raw(s.port, 'GET', '/test/image', { 'accept-encoding': 'br, gzip' });
      expect(png.status).toBe(200);
      expect(png.headers['content-type']).toBe('image/png');
      expect(png.headers['content-encoding']).toBeUndefined();
      expect(png.body.length).toBe(4096);
      const metrics = await raw(s.port, 'GET', '/metrics', { 'accept-encoding': 'gzip' });
      expect(metrics.headers['content-encoding']).toBe('gzip');
      expect(decoded(metrics).toString()).toContain('scour_http_requests_total');
      // The same document many times over: every answer complete (the compressed form is reused).
      const all = await Promise.all(Array.from({ length: 20 }, () => raw(s.port, 'GET', '/v1/openapi.json', { 'accept-encoding': 'br' })));
      const first = decoded(all[0]!);
      for (const r of all) expect(decoded(r).equals(first)).toBe(true);
    });
  });

  describe('compressed request bodies', () => {
    const enc = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync } as const;

    it('gzip, x-gzip, deflate (zlib or raw) and br bodies are decoded', async () => {
      const body = JSON.stringify({ input: 'foobar' });
      const variants: Array<[string, Buffer]> = [
        ['gzip', enc.gzip(body)], ['x-gzip', enc.gzip(body)], ['GZIP', enc.gzip(body)], ['deflate', enc.deflate(body)],
        ['deflate', zlib.deflateRawSync(body)], ['br', enc.br(body)], ['identity', Buffer.from(body)],
      ];
      for (const [coding, bytes] of variants) {
        const r = await post(s.port, '/v1/tools/base64-encoder', bytes, { 'content-encoding': coding });
        expect(r.status, `${coding}: ${r.body}`).toBe(200);
        expect(json(r).output, coding).toBe('Zm9vYmFy');
      }
      const mp = await raw(s.port, 'POST', '/v1/tools/base64-encoder', { 'content-type': 'application/msgpack', 'content-encoding': 'gzip' }, enc.gzip(pack({ input: 'f' })));
      expect(json(mp).output).toBe('Zg==');
    });

    it('the limit counts the decoded body: just under passes, one byte over is 413, and zip bombs stop at the limit', async () => {
      const at = (n: number) => JSON.stringify({ input: 'y'.repeat(n - '{"input":""}'.length) });
      expect(Buffer.byteLength(at(LIMIT))).toBe(LIMIT);
      const fits = await post(s.port, '/v1/tools/base64-encoder', enc.gzip(at(LIMIT)), { 'content-encoding': 'gzip' });
      expect(fits.status, fits.body.toString()).not.toBe(413);
      const over = await post(s.port, '/v1/tools/base64-encoder', enc.gzip(at(LIMIT + 1)), { 'content-encoding': 'gzip' });
      expect(over.status).toBe(413);
      expect(json(over).code).toBe('PAYLOAD_TOO_LARGE');
      expect(json(over).limit).toBe(LIMIT);
      expect(json(over).request_id).toBe(over.headers['x-request-id']);
      for (const coding of ['gzip', 'deflate', 'br'] as const) {
        const b = await bomb(coding, coding === 'br' ? 256 : 48); // 48 MiB in ~49 KB (gzip, deflate), 256 MiB in ~0.5 KB (br)
        expect(b.length, coding).toBeLessThan(LIMIT); // the raw body passes the limit check
        const started = Date.now();
        const r = await post(s.port, '/v1/tools/base64-encoder', b, { 'content-encoding': coding });
        expect(r.status, coding).toBe(413);
        expect(json(r).code).toBe('PAYLOAD_TOO_LARGE');
        expect(Date.now() - started, coding).toBeLessThan(5_000);
      }
      expect((await raw(s.port, 'GET', '/healthz')).status).toBe(200);
    });

    it('a corrupt or truncated body is 400 naming body; an unknown or stacked coding is 415; neither is parsed as JSON', async () => {
      const good = enc.gzip(JSON.stringify({ input: 'foobar'.repeat(50) }));
      const flipped = Buffer.from(good);
      flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
      const corrupt: Array<[string, Buffer | string]> = [
        ['gzip', flipped], ['gzip', good.subarray(0, good.length - 10)], ['gzip', '{"input":"plain JSON, not gzip"}'],
        ['br', Buffer.from([0xff, 0xff, 0xff, 0xff])], ['deflate', Buffer.from('not deflate at all')],
      ];
      for (const [coding, bytes] of corrupt) {
        const r = await post(s.port, '/v1/tools/base64-encoder', bytes, { 'content-encoding': coding });
        expect(r.status, coding).toBe(400);
        const body = json(r);
        expect(body.code).toBe('MISSING_PARAMETER');
        expect(body.validation_errors[0].field).toBe('body');
        expect(body.validation_errors[0].message).toContain(`not valid ${coding}`);
        expect(body.request_id).toBe(r.headers['x-request-id']);
      }
      for (const coding of ['compress', 'zstd', 'gzip, br', 'br, identity', 'x'.repeat(500)]) {
        const r = await post(s.port, '/v1/tools/base64-encoder', good, { 'content-encoding': coding });
        expect(r.status, coding).toBe(415);
        const body = json(r);
        expect(body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
        expect(typeof body.error).toBe('string');
        expect(body.error.length).toBeLessThan(200);
        expect(body.request_id).toBe(r.headers['x-request-id']);
        expect(body.timestamp).toMatch(/Z$/);
      }
    });
  });

  describe('Accept negotiation and bounded errors', () => {
    it('Accept q-values choose JSON or msgpack', async () => {
      const cases: Array<[string, 'json' | 'msgpack']> = [
        ['application/msgpack', 'msgpack'],
        ['application/msgpack;q=0', 'json'],
        ['application/json;q=0.5, application/msgpack', 'msgpack'],
        ['application/json, application/msgpack;q=0.9', 'json'],
        ['application/msgpack, application/json', 'msgpack'],
        ['application/x-msgpack;q=0.8, */*;q=0.1', 'msgpack'],
        ['APPLICATION/VND.MSGPACK', 'msgpack'],
        ['application/msgpack;q=0.5, */*', 'json'],
        ['*/*', 'json'],
        ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
        ['application/msgpack;q=abc', 'json'],
        ['application/msgpack;q=1.5', 'json'],
        ['application/msgpackx', 'json'],
        ['text/plain; note="application/msgpack"', 'json'],
        [';;,,,=;q', 'json'],
        [`${'a/b;q=0.1, '.repeat(150)}application/msgpack`, 'msgpack'],
      ];
      for (const [accept, want] of cases) {
        const r = await post(s.port, '/v1/tools/base64-encoder', { input: 'foobar' }, { accept });
        expect(r.status, accept).toBe(200);
        if (want === 'msgpack') {
          expect(r.headers['content-type'], accept).toBe('application/msgpack');
          expect(unpack(r.body).output).toBe('Zm9vYmFy');
        } else {
          expect(r.headers['content-type'], accept).toBe('application/json; charset=utf-8');
          expect(json(r).output).toBe('Zm9vYmFy');
        }
      }
    });

    it('a huge path is echoed only as a bounded prefix in 404 and 405 bodies', async () => {
      const path = `/v1/${'a'.repeat(10_000)}`;
      const nf = await raw(s.port, 'GET', path);
      expect(nf.status).toBe(404);
      expect(json(nf).code).toBe('NOT_FOUND');
      expect(json(nf).error).toBe(`No route for GET ${path.slice(0, 200)}…`);
      expect(nf.body.length).toBeLessThan(512);
      const na = await raw(s.port, 'PUT', `/v1/scrape/bulk/${'b'.repeat(10_000)}`);
      expect(na.status).toBe(405);
      expect(json(na).error.length).toBeLessThan(300);
      expect(json(na).error.endsWith('…')).toBe(true);
      // 20,000 characters: uWS answers the 404; node:http refuses the request line itself (431) before the app.
      const huge = await raw(s.port, 'GET', `/v1/${'c'.repeat(20_000)}`);
      expect(huge.status).toBe(adapter === 'uws' ? 404 : 431);
      expect(huge.body.length).toBeLessThan(512);
      // A hostile Content-Type is cut too.
      const ct = await raw(s.port, 'POST', '/v1/tools/base64-encoder', { 'content-type': `text/${'z'.repeat(5000)}` }, 'x');
      expect(ct.status).toBe(415);
      expect(ct.body.length).toBeLessThan(512);
    });
  });
});
