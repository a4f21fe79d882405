/**
 * The HTTP contract, run against both adapters (uWebSockets.js and
 * node:http) on real loopback ports: routing errors, body handling, the
 * spec 7.1 error body, request ids, msgpack, rate limits, aborts, shutdown.
 */
import http from 'node:http';
import net from 'node:net';
import { pack, unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequest } from '../../core/errors.js';
import { Effect } from 'effect';
import { defineOperation, defineTool, StrictObject, Type } from '../../plugins/sdk/index.js';
import { ADAPTERS, postJson, startScour, type Running } from '../support/server.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectErrorBody(body: any, code: string, headers?: Headers) {
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  expect(body.code).toBe(code);
  expect(typeof body.request_id).toBe('string');
  expect(body.timestamp).toMatch(ISO);
  if (headers) expect(headers.get('x-request-id')).toBe(body.request_id);
}

/** Test-only tools: one slow and abortable, one that crashes, one that fails semantically. */
const probe = { started: 0, aborted: 0, finished: 0 };
const slowTool = defineTool({
  name: 'tool-test-slow',
  slug: 'test-slow',
  summary: 'waits ms milliseconds unless aborted',
  request: StrictObject({ ms: Type.Integer({ minimum: 0, maximum: 10_000, default: 100 }) }),
  response: StrictObject({ waited: Type.Integer() }),
  run: (input, ctx) =>
    new Promise((resolve) => {
      probe.started++;
      const signal = ctx.signal!;
      const t = setTimeout(() => {
        probe.finished++;
        resolve({ waited: input.ms });
      }, input.ms);
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        probe.aborted++;
      });
    }),
});
const crashTool = defineTool({
  name: 'tool-test-crash',
  slug: 'test-crash',
  summary: 'throws a plain Error',
  request: StrictObject({}),
  response: StrictObject({}),
  run: () => {
    throw new Error('secret internal detail');
  },
});
const semanticTool = defineTool({
  name: 'tool-test-semantic',
  slug: 'test-semantic',
  summary: 'fails with a BadRequest',
  request: StrictObject({ x: Type.String() }),
  response: StrictObject({}),
  run: (input) => {
    throw BadRequest.of('x', `cannot use ${input.x}`);
  },
});

/** Test-only operation: answers the headers its pipeline sees (the route declares one extra). */
const echoHeaders = defineOperation({
  name: 'operation-test-echo-headers',
  routes: () => [{
    method: 'GET', path: '/test/headers', summary: 'echo headers', auth: 'none', headers: ['x-extra'],
    handle: (ctx) => Effect.succeed({ headers: ctx.headers }),
  }],
});

function rawRequest(port: number, options: http.RequestOptions, chunks: (string | Buffer)[]): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, agent: false, ...options }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe.each(ADAPTERS)('HTTP contract over %s', (adapter) => {
  let s: Running;
  let limited: Running;

  beforeAll(async () => {
    s = await startScour(adapter, { bodyLimit: 64 * 1024 }, { plugins: [slowTool, crashTool, semanticTool, echoHeaders] });
    limited = await startScour(adapter, { toolsRateLimit: { limit: 3, windowSeconds: 5 } });
  });
  afterAll(async () => {
    await s?.stop();
    await limited?.stop();
  });

  it('the pipeline sees exactly the headers its route declares, on both adapters', async () => {
    const res = await fetch(`${s.url}/test/headers`, { headers: { 'x-extra': 'yes', 'x-undeclared': 'no', accept: 'application/json', authorization: 'Bearer k' } });
    const body: any = await res.json();
    expect(body.headers).toEqual({ accept: 'application/json', 'x-extra': 'yes' });
  });

  it('GET /healthz answers 200 {"status":"ok"} with an x-request-id', async () => {
    const res = await fetch(`${s.url}/healthz`);
    expect(res.status).toBe(200);
    expect((await res.json() as any)).toEqual({ status: 'ok' });
    expect(res.headers.get('x-request-id')).toMatch(/^[\w-]{10,}$/);
  });

  it('stamps a unique request_id in every API body, equal to the x-request-id header', async () => {
    const a = await postJson(`${s.url}/v1/tools/uuid-generator`, {});
    const b = await postJson(`${s.url}/v1/tools/uuid-generator`, {});
    expect(a.status).toBe(200);
    expect(a.body.request_id).toBe(a.headers.get('x-request-id'));
    expect(a.body.request_id).not.toBe(b.body.request_id);
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('with LOG_LEVEL=debug, one access-log line per request: id, route, status, duration, never the key', async () => {
    const res = await postJson(`${s.url}/v1/tools/uuid-generator`, {}, { authorization: 'Bearer sk_live_should_not_appear' });
    await new Promise((r) => setTimeout(r, 20));
    const line = s.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === res.body.request_id && l.msg === 'request');
    expect(line).toMatchObject({ route: 'POST /v1/tools/uuid-generator', status: 200 });
    expect(typeof line.ms).toBe('number');
    expect(s.logs.join('')).not.toContain('sk_live_should_not_appear');
  });

  it('an empty POST body means {} (schema defaults apply)', async () => {
    const res = await fetch(`${s.url}/v1/tools/uuid-generator`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.uuids).toHaveLength(1);
  });

  it('unknown route: 404 NOT_FOUND in the spec error body', async () => {
    const res = await fetch(`${s.url}/v1/nope`);
    expect(res.status).toBe(404);
    expectErrorBody((await res.json() as any), 'NOT_FOUND', res.headers);
  });

  it('wrong method: 405 METHOD_NOT_ALLOWED with an Allow header (HEAD with GET, OPTIONS everywhere)', async () => {
    const res = await fetch(`${s.url}/v1/tools/uuid-generator`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('OPTIONS, POST');
    const body: any = await res.json();
    expectErrorBody(body, 'METHOD_NOT_ALLOWED', res.headers);
    expect(body.allowed_methods).toEqual(['OPTIONS', 'POST']);
    const del = await fetch(`${s.url}/healthz`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('malformed JSON: 400 MISSING_PARAMETER with a body-level validation error', async () => {
    for (const bad of ['{bad', '{"input": "x",}', '[1,2', '\u0000', 'nul']) {
      const res = await postJson(`${s.url}/v1/tools/base64-encoder`, bad);
      expect(res.status, bad).toBe(400);
      expectErrorBody(res.body, 'MISSING_PARAMETER', res.headers);
      expect(res.body.validation_errors[0].field).toBe('body');
    }
  });

  it('a JSON body that is not an object: 400 naming body', async () => {
    for (const bad of ['[]', '"text"', '42', 'null', 'true']) {
      const res = await postJson(`${s.url}/v1/tools/base64-encoder`, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.validation_errors).toEqual([{ field: 'body', message: 'must be object' }]);
    }
  });

  it('schema violations list every field: missing, wrong type, unknown; rate-limit headers still present', async () => {
    const res = await postJson(`${s.url}/v1/tools/base64-encoder`, { action: 'sideways', extra: 1 });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000000');
    expect(res.headers.get('x-ratelimit-window')).toBe('60');
    const fields = res.body.validation_errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['input', 'action', 'extra']));
    for (const e of res.body.validation_errors) expect(Object.keys(e).sort()).toEqual(['field', 'message']);
  });

  it('a semantic failure thrown by a plugin is a 400 with its field', async () => {
    const res = await postJson(`${s.url}/v1/tools/test-semantic`, { x: 'y' });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual([{ field: 'x', message: 'cannot use y' }]);
  });

  it('wrong content type: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await fetch(`${s.url}/v1/tools/base64-encoder`, { method: 'POST', headers: { 'content-type': type }, body: 'input=x' });
      expect(res.status, type).toBe(415);
      expectErrorBody((await res.json() as any), 'UNSUPPORTED_MEDIA_TYPE', res.headers);
    }
    const none = await rawRequest(s.port, { method: 'POST', path: '/v1/tools/base64-encoder', headers: { 'content-length': '13' } }, ['{"input":"x"}']);
    expect(none.status).toBe(415);
  });

  it('accepts application/json with a charset and a UTF-8 BOM', async () => {
    const res = await postJson(`${s.url}/v1/tools/base64-encoder`, '\uFEFF{"input":"foobar"}', { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
    expect(res.body.output).toBe('Zm9vYmFy');
  });

  it('body over the limit: 413 PAYLOAD_TOO_LARGE, declared or streamed', async () => {
    const big = JSON.stringify({ input: 'x'.repeat(70 * 1024) });
    const declared = await postJson(`${s.url}/v1/tools/base64-encoder`, big);
    expect(declared.status).toBe(413);
    expectErrorBody(declared.body, 'PAYLOAD_TOO_LARGE');
    expect(declared.body.limit).toBe(64 * 1024);
    const chunk = 'x'.repeat(16 * 1024);
    const streamed = await rawRequest(
      s.port,
      { method: 'POST', path: '/v1/tools/base64-encoder', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      ['{"input":"', chunk, chunk, chunk, chunk, chunk, '"}'],
    );
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).code).toBe('PAYLOAD_TOO_LARGE');
    // The server is still healthy afterwards.
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });

  it('a body just under the limit in several chunks is read whole', async () => {
    const chunk = 'y'.repeat(15 * 1024);
    const res = await rawRequest(
      s.port,
      { method: 'POST', path: '/v1/tools/base64-encoder', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      ['{"input":"', chunk, chunk, chunk, chunk, '"}'],
    );
    expect(res.status).toBe(200);
    expect(Buffer.from(JSON.parse(res.body).output, 'base64').toString()).toBe(chunk.repeat(4));
  });

  it('msgpack in and out when Content-Type and Accept ask for it', async () => {
    const res = await fetch(`${s.url}/v1/tools/base64-encoder`, {
      method: 'POST',
      headers: { 'content-type': 'application/msgpack', accept: 'application/msgpack' },
      body: pack({ input: 'foobar' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/msgpack');
    const body = unpack(Buffer.from(await res.arrayBuffer()));
    expect(body.output).toBe('Zm9vYmFy');
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
    // msgpack request, JSON response (no Accept)
    const mixed = await fetch(`${s.url}/v1/tools/base64-encoder`, { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body: pack({ input: 'f' }) });
    expect(((await mixed.json() as any)).output).toBe('Zg==');
    // JSON request, msgpack error response
    const err = await fetch(`${s.url}/v1/tools/base64-encoder`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/msgpack' }, body: '{}' });
    expect(err.status).toBe(400);
    const errBody = unpack(Buffer.from(await err.arrayBuffer()));
    expect(errBody.code).toBe('MISSING_PARAMETER');
    expect(errBody.validation_errors[0].field).toBe('input');
  });

  it('malformed or hostile msgpack: 400, never a crash', async () => {
    let deep: unknown = { input: 'x' };
    for (let i = 0; i < 200; i++) deep = [deep];
    // { input: 'x', extra: [[...[{ __proto__: {} }]...]] } at depth 100: found at any depth.
    let inner = Buffer.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0x80]);
    for (let i = 0; i < 100; i++) inner = Buffer.concat([Buffer.from([0x91]), inner]);
    const deepProto = Buffer.concat([Buffer.from([0x82, 0xa5, ...Buffer.from('input'), 0xa1, 0x78, 0xa5, ...Buffer.from('extra')]), inner]);
    // 50,000 nested one-element arrays: too deep for the decoder's recursion, must still be a 400.
    const veryDeep = Buffer.concat([Buffer.alloc(50_000, 0x91), Buffer.from([0x01])]);
    const bodies = [
      Buffer.from([0xc1]), Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]), pack([1, 2]), Buffer.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0x80]),
      deepProto, pack(deep), veryDeep,
    ];
    for (const b of bodies) {
      const res = await fetch(`${s.url}/v1/tools/base64-encoder`, { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body: b });
      expect(res.status, b.toString('hex')).toBe(400);
      expectErrorBody((await res.json() as any), 'MISSING_PARAMETER', res.headers);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an unexpected exception is a 500 INTERNAL_ERROR without internals, and is logged', async () => {
    const res = await postJson(`${s.url}/v1/tools/test-crash`, {});
    expect(res.status).toBe(500);
    expectErrorBody(res.body, 'INTERNAL_ERROR', res.headers);
    expect(JSON.stringify(res.body)).not.toContain('secret internal detail');
    expect(s.logs.join('')).toContain('secret internal detail');
    expect(s.logs.join('')).toContain(res.body.request_id);
  });

  it('client abort interrupts the work and the server carries on', async () => {
    const before = { ...probe };
    const controller = new AbortController();
    const pending = fetch(`${s.url}/v1/tools/test-slow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ms": 5000}', signal: controller.signal });
    const startDeadline = Date.now() + 5000;
    while (probe.started === before.started && Date.now() < startDeadline) await new Promise((r) => setTimeout(r, 5));
    expect(s.scour.app.activeRequests).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    const deadline = Date.now() + 3000;
    while (probe.aborted === before.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(probe.started).toBe(before.started + 1);
    expect(probe.aborted).toBe(before.aborted + 1);
    expect(probe.finished).toBe(before.finished);
    const ok = await postJson(`${s.url}/v1/tools/test-slow`, { ms: 10 });
    expect(ok.status).toBe(200);
    expect(s.scour.app.activeRequests).toBe(0);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('scour_http_requests_total{route="POST /v1/tools/test-slow",status="499"} 1');
  });

  it('a client that disconnects in the middle of its body leaves nothing behind', async () => {
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const sock = net.connect(s.port, '127.0.0.1', () => {
          sock.write('POST /v1/tools/base64-encoder HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"input":"');
          setTimeout(() => {
            sock.destroy();
            resolve();
          }, 30);
        });
      });
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(s.scour.app.activeRequests).toBe(0);
    const ok = await postJson(`${s.url}/v1/tools/base64-encoder`, { input: 'f' });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toBe('Zg==');
  });

  it('per-client-IP rate limit on tools: x-ratelimit-* headers, then 429 with retry_after that is honoured', async () => {
    const url = `${limited.url}/v1/tools/uuid-generator`;
    let first: Awaited<ReturnType<typeof postJson>> | undefined;
    let res = await postJson(url, {});
    // Start at the beginning of a fresh window, so the four requests below cannot straddle two windows.
    const msLeft = () => Number(res.headers.get('x-ratelimit-reset')) * 1000 - Date.now();
    if (Number(res.headers.get('x-ratelimit-remaining')) !== 2 || msLeft() < 3500) {
      await new Promise((r) => setTimeout(r, msLeft() + 50));
      res = await postJson(url, {});
    }
    first = res;
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    expect(first.headers.get('x-ratelimit-window')).toBe('5');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    await postJson(url, {});
    await postJson(url, {});
    const over = await postJson(url, {});
    expect(over.status).toBe(429);
    expectErrorBody(over.body, 'RATE_LIMITED', over.headers);
    expect(over.body.limit).toBe(3);
    expect(over.body.remaining).toBe(0);
    expect(over.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(over.body.retry_after).toBeLessThanOrEqual(5);
    expect(over.body.reset).toBe(Number(over.headers.get('x-ratelimit-reset')));
    expect(over.body.upgrade_url).toBe('/dashboard/billing');
    expect(over.headers.get('retry-after')).toBe(String(over.body.retry_after));
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    // Quota is judged before the body: a limited client cannot get around it with bad bodies.
    const overBad = await postJson(url, '{not json');
    expect(overBad.status).toBe(429);
    const overType = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(overType.status).toBe(429);
    await new Promise((r) => setTimeout(r, over.body.retry_after * 1000 + 50));
    const after = await postJson(url, {});
    expect(after.status).toBe(200);
    // System routes are not rate limited.
    expect((await fetch(`${limited.url}/healthz`)).status).toBe(200);
  });

  it('GET /metrics renders Prometheus text with counters by route and status and a latency histogram', async () => {
    await fetch(`${s.url}/v1/definitely-missing`);
    const res = await fetch(`${s.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('# TYPE scour_http_requests_total counter');
    expect(text).toMatch(/scour_http_requests_total\{route="GET \/healthz",status="200"\} \d+/);
    expect(text).toMatch(/scour_http_requests_total\{route="unmatched",status="404"\} \d+/);
    expect(text).toContain('# TYPE scour_http_request_duration_seconds histogram');
    expect(text).toMatch(/scour_http_request_duration_seconds_bucket\{route="POST \/v1\/tools\/uuid-generator",le="\+Inf"\} \d+/);
  });

  it('GET /v1/openapi.json is OpenAPI 3.1 built from the same schemas', async () => {
    const res = await fetch(`${s.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc: any = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    const tools = s.scour.registry.byKind('tool');
    for (const t of tools) {
      const op = doc.paths[`/v1/tools/${t.slug}`].post;
      expect(op.requestBody.content['application/json'].schema).toEqual(JSON.parse(JSON.stringify(t.request.json)));
      expect(op.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorBody');
      expect(op.responses['429']).toBeDefined();
    }
    expect(doc.paths['/healthz'].get.responses['200'].content['application/json'].schema.properties.request_id).toBeUndefined();
    const uuid = doc.paths['/v1/tools/uuid-generator'].post.responses['200'].content['application/json'].schema;
    expect(uuid.required).toContain('request_id');
    expect(uuid.properties.uuids.type).toBe('array');
    expect(doc.paths['/v1/tools/regex-tester'].post.responses['503']).toBeDefined();
  });

  it('graceful shutdown finishes in-flight requests and refuses new work', async () => {
    const g = await startScour(adapter, {}, { plugins: [slowTool] });
    const before = probe.started;
    const inflight = postJson(`${g.url}/v1/tools/test-slow`, { ms: 400 });
    // Stop only once the request is really in flight.
    const deadline = Date.now() + 5000;
    while (probe.started === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(g.scour.app.activeRequests).toBe(1);
    const stopping = g.stop();
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(res.body.waited).toBe(400);
    expect(res.headers.get('connection')).toBe('close');
    expect(await stopping).toBe(true);
    await expect(fetch(`${g.url}/healthz`)).rejects.toThrow();
  });
});
