/**
 * The uWS adapter writes a JSON answer's head from a frame made at boot (the
 * status line, content-type and the CORS lines, pre-formatted) around the
 * request id and the stage headers. It must be byte for byte the head that
 * formatting every header would give, for every kind of route, and absent
 * where the headers depend on the request (listed CORS origins, compressed
 * answers, msgpack). Also: numeric header text is String(n), also when it
 * is remembered.
 */
import { Effect } from 'effect';
import { describe, expect, it } from 'vitest';
import { NumberText, ReplyMeta, type RequestContext } from '../../core/context.js';
import { Pipeline } from '../../core/pipeline.js';
import type { Route } from '../../core/plugin.js';
import { CORS_EXPOSE_HEADERS, HttpApp, type HeadFrame, type Inbound, type Sink } from '../../adapters/http/shared/app.js';
import { headBlock } from '../../adapters/http/uws/index.js';
import { createLogger } from '../../adapters/logging/pino.js';
import { PrometheusMetrics } from '../../adapters/metrics/prometheus.js';
import { AjvSchemaCompiler } from '../../adapters/validation/json-schema.js';
import { schema, Type } from '../../plugins/sdk/index.js';

interface Sent {
  status: number;
  headers: readonly string[];
  body: string | Uint8Array;
  frame: HeadFrame | undefined;
}

const response = schema(Type.Object({ n: Type.Integer(), text: Type.String() }));

/** A route answering `{ n, text }` with `size` characters of text, after a stage that writes rate-limit headers. */
function route(path: string, tags: readonly string[], status: 200 | 201 = 200): Route<any, any> {
  return {
    method: 'GET', path, summary: path, auth: 'none', tags, response, status,
    alternate: { status: 202, response, when: (r) => (r as { n: number }).n === 202 },
    handle: Pipeline.from<RequestContext>().handle((ctx) => {
      // Some values repeat from one answer to the next, some change; some answers have fewer headers.
      const k = Number(ctx.headers['x-k'] ?? 0);
      ctx.reply.setNumber('x-ratelimit-limit', 1_000_000_000);
      ctx.reply.setNumber('x-ratelimit-remaining', 999_999_999 - k);
      ctx.reply.setNumber('x-ratelimit-reset', 1_764_260_040 + 60 * Math.floor(k / 2));
      if (k % 3 !== 2) ctx.reply.setNumber('x-ratelimit-window', 60);
      if (k % 4 === 1) ctx.reply.set('x-extra', `value ${k}`);
      const n = Number(ctx.headers['x-n'] ?? 0);
      return Effect.succeed({ n, text: 'x'.repeat(Number(ctx.headers['x-size'] ?? 10)) });
    }),
    headers: ['x-n', 'x-size', 'x-k'],
  };
}

function app(corsOrigins: readonly string[]): HttpApp {
  return new HttpApp({
    routes: [route('/tools/t', ['tools']), route('/listed', []), route('/created', [], 201)],
    compiler: new AjvSchemaCompiler(),
    ids: { next: () => 'AbC_-12' }, clock: { now: () => 0 }, metrics: new PrometheusMetrics(), logger: createLogger('silent'),
    bodyLimit: 1024, corsOrigins,
  });
}

function call(a: HttpApp, path: string, headers: Record<string, string> = {}): Sent {
  const compiled = a.compiled.find((c) => c.route.path === path)!;
  let sent: Sent | undefined;
  const sink: Sink = {
    send(status, h, body, _close, frame) {
      sent = { status, headers: [...h], body, frame };
    },
  };
  const inbound: Inbound = { method: 'GET', path, headers, clientIp: '127.0.0.1', acceptEncoding: 'br, gzip', origin: 'https://app.example' };
  a.execute(compiled, {}, inbound, undefined, sink);
  return sent!;
}

describe('the uWS head frame', () => {
  for (const origins of [[], ['https://app.example']]) {
    for (const path of ['/tools/t', '/listed', '/created']) {
      for (const n of ['0', '202']) {
        it(`gives the same head as formatting each header: ${path}, status ${n === '202' ? 'alternate' : 'main'}, ${origins.length} listed origins`, () => {
          const a = app(origins);
          for (let k = 0; k < 12; k++) {
            const sent = call(a, path, { 'x-n': n, 'x-k': String(k) });
            expect(sent.status).toBe(n === '202' ? 202 : path === '/created' ? 201 : 200);
            const listedWithOrigins = path !== '/tools/t' && origins.length > 0;
            if (listedWithOrigins) {
              expect(sent.frame).toBeUndefined();
              continue;
            }
            expect(sent.frame).toBeDefined();
            expect(sent.frame!.head(sent.headers)).toBe(headBlock(sent.status, sent.headers));
            expect(Buffer.from(sent.frame!.bytes(sent.headers)!).toString('latin1')).toBe(headBlock(sent.status, sent.headers));
            expect(sent.headers.slice(0, 4)).toEqual(['content-type', 'application/json; charset=utf-8', 'x-request-id', 'AbC_-12']);
          }
        });
      }
    }
  }

  it('is not used for a compressed answer, nor for msgpack', () => {
    const a = app([]);
    const big = call(a, '/tools/t', { 'x-size': '5000' });
    expect(big.headers).toContain('content-encoding');
    expect(big.frame).toBeUndefined();
    const packed = call(a, '/tools/t', { accept: 'application/msgpack' });
    expect(packed.headers[1]).toBe('application/msgpack');
    expect(packed.frame).toBeUndefined();
  });
});

describe('the head frame as bytes', () => {
  const frameOf = (path: string): HeadFrame => {
    const sent = call(app([]), path);
    return sent.frame!;
  };

  it('is the UTF-8 of the formatted head over any sequence of answers: ids and values that change length, headers that come and go', () => {
    // A small deterministic generator: the same sequence on every run.
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const pool = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-window', 'x-extra', 'retry-after'];
    for (const path of ['/tools/t', '/created']) {
      const frame = frameOf(path);
      const status = path === '/created' ? 201 : 200;
      const trail = path === '/tools/t'
        ? ['access-control-allow-origin', '*', 'access-control-expose-headers', CORS_EXPOSE_HEADERS]
        : [];
      let id = 'AbC_-12';
      let stage: string[] = ['x-ratelimit-limit', '1000', 'x-ratelimit-remaining', '999'];
      for (let step = 0; step < 2000; step++) {
        const r = rand(10);
        if (r === 0) id = `id${'x'.repeat(rand(30))}`;
        else if (r === 1) id = id.slice(0, -1) + String.fromCharCode(97 + rand(26));
        else if (r === 2) stage = Array.from({ length: rand(4) }, (_, i) => [pool[rand(pool.length)]!, String(rand(10 ** (1 + (i % 3))))]).flat();
        else if (r === 3 && stage.length > 0) stage[1 + 2 * rand(stage.length / 2)] = String(rand(1000));
        else if (r === 4 && stage.length > 0) stage[1 + 2 * rand(stage.length / 2)] = String(100 + rand(900));
        const headers = ['content-type', 'application/json; charset=utf-8', 'x-request-id', id, ...stage, ...trail];
        const expected = headBlock(status, headers);
        const bytes = frame.bytes(headers);
        expect(bytes).toBeDefined();
        expect(Buffer.from(bytes!).toString('latin1')).toBe(expected);
        expect(frame.head(headers)).toBe(expected);
      }
    }
  });

  it('is refused for a header outside ASCII or a head past its buffer, and is right again on the next answer', () => {
    const frame = frameOf('/tools/t');
    const trail = ['access-control-allow-origin', '*', 'access-control-expose-headers', CORS_EXPOSE_HEADERS];
    const ok = ['content-type', 'application/json; charset=utf-8', 'x-request-id', 'AbC_-12', 'x-a', '1', 'x-b', '22', ...trail];
    const check = (headers: string[]) => expect(Buffer.from(frame.bytes(headers)!).toString('latin1')).toBe(headBlock(200, headers));
    check(ok);
    const accented = [...ok];
    accented[7] = 'é2';
    expect(frame.bytes(accented)).toBeUndefined();
    check(ok);
    const huge = [...ok];
    huge[7] = 'y'.repeat(5000);
    expect(frame.bytes(huge)).toBeUndefined();
    check(ok);
    const longId = [...ok];
    longId[3] = 'z'.repeat(3000);
    expect(frame.bytes(longId)).toBeUndefined();
    check(ok);
  });
});

describe('numeric header values', () => {
  it('are String(n), also when their text is remembered', () => {
    const values = [0, -0, 1, 60, 60, 1_000_000_000, 1_764_260_040, 1_764_260_040, 2 ** 53, -1, 1.5, 0.1 + 0.2, Number.NaN, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 1e21];
    const memo = new NumberText();
    const r = new ReplyMeta();
    for (const v of values) {
      r.setNumber('x', v, memo);
      r.setNumber('y', v);
    }
    expect(r.headers.filter((_, i) => i % 4 === 1)).toEqual(values.map((v) => String(v)));
    expect(r.headers.filter((_, i) => i % 4 === 3)).toEqual(values.map((v) => String(v)));
  });
});
