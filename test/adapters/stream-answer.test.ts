/**
 * Streamed answers in the transport-neutral app (adapters/http/shared): a
 * route that declares `streams` and calls ctx.reply.stream() gets its status
 * and headers sent through Sink.begin at once, its body in parts, and the
 * handler's string as the rest (with the request id); compressed when the
 * client accepts br or gzip. A failure after the head went out cuts the body
 * (abort, never end); a client abort drops it. Where it cannot stream
 * (msgpack, a sink without begin, streaming turned off, a route that does not
 * declare it) the route answers whole, as before. Metrics count each answer
 * once, with the status it ended with. A fake Sink records what the
 * transport was asked to do.
 */
import zlib from 'node:zlib';
import { Effect } from 'effect';
import { unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../core/context.js';
import { ServiceUnavailable } from '../../core/errors.js';
import { Pipeline } from '../../core/pipeline.js';
import type { Route } from '../../core/plugin.js';
import { HttpApp, type Inbound, type Sink } from '../../adapters/http/shared/app.js';
import { createLogger } from '../../adapters/logging/pino.js';
import { PrometheusMetrics } from '../../adapters/metrics/prometheus.js';
import { AjvSchemaCompiler } from '../../adapters/validation/json-schema.js';
import { schema, Type } from '../../plugins/sdk/index.js';

const Answer = Type.Object({ items: Type.Array(Type.Any()), n: Type.Integer(), request_id: Type.Optional(Type.String()) });

/**
 * GET /s: a stage writes a rate-limit header, then the work streams when it
 * can: `{"items":[` and `x-n` items, one per tick, then the tail; or fails
 * after its items (`x-mode: fail`), or returns an object despite streaming
 * (`x-mode: object`). Not streamed: the whole object.
 */
function streamingRoute(streams: boolean, path = '/s'): Route<any, any> {
  return {
    method: 'GET', path, summary: path, auth: 'none', response: schema(Answer), headers: ['x-n', 'x-mode'], streams,
    handle: Pipeline.from<RequestContext>()
      .then({ name: 'quota', run: (ctx: RequestContext) => {
        ctx.reply.setNumber('x-ratelimit-remaining', 41);
        return Effect.succeed({});
      } })
      .then({ name: 'work', run: (ctx: RequestContext) => {
        const n = Number(ctx.headers['x-n'] ?? 3);
        const out = ctx.reply.stream();
        const items: unknown[] = [];
        out?.write('{"items":[');
        const one = (k: number) => Effect.map(Effect.sleep(5), () => {
          const item = { k, text: `item ${k} ${'é'.repeat(k)}` };
          if (out === undefined) items.push(item);
          else out.write(`${k === 0 ? '' : ','}${JSON.stringify(item)}`);
        });
        return Effect.map(Effect.forEach(Array.from({ length: n }, (_, k) => k), one, { discard: true }), () => ({ items, streamed: out !== undefined }));
      } })
      .handle((ctx): Effect.Effect<unknown, ServiceUnavailable> => {
        const mode = ctx.headers['x-mode'];
        if (mode === 'fail') return Effect.fail(new ServiceUnavailable({ message: 'billing is down', retryAfter: 1 }));
        if (!ctx.streamed || mode === 'object') return Effect.succeed({ items: ctx.items, n: ctx.items.length });
        return Effect.succeed(`],"n":${Number(ctx.headers['x-n'] ?? 3)}}`);
      }),
  };
}

function makeApp(options: { streaming?: boolean; corsOrigins?: readonly string[] } = {}) {
  const metrics = new PrometheusMetrics();
  const app = new HttpApp({
    routes: [streamingRoute(true), streamingRoute(false, '/plain')],
    compiler: new AjvSchemaCompiler(),
    ids: { next: () => 'req_1' }, clock: { now: () => 0 }, metrics, logger: createLogger('silent'), bodyLimit: 1024,
    ...(options.streaming === undefined ? {} : { streaming: options.streaming }),
    ...(options.corsOrigins === undefined ? {} : { corsOrigins: options.corsOrigins }),
  });
  return { app, metrics };
}

interface Recorded {
  /** 'send' (whole), or 'end' / 'abort' after begin. */
  how: 'send' | 'end' | 'abort';
  status: number;
  headers: string[];
  body: Buffer;
  /** Writes seen by the sink stream, in order. */
  writes: number;
  /** Anything written after end or abort (must stay 0). */
  late: number;
  close: boolean;
}

/** A Sink that records; with `begin` unless `streams` is false. Resolves when the answer is complete or cut. */
function fakeSink(streams = true): { sink: Sink; done: Promise<Recorded> } {
  let resolve!: (r: Recorded) => void;
  const done = new Promise<Recorded>((r) => (resolve = r));
  const parts: Buffer[] = [];
  const rec: Recorded = { how: 'send', status: 0, headers: [], body: Buffer.alloc(0), writes: 0, late: 0, close: false };
  let over = false;
  const sink: Sink = {
    send(status, headers, body, close) {
      Object.assign(rec, { how: 'send', status, headers: [...headers], body: Buffer.from(body as string), close });
      resolve(rec);
    },
  };
  if (streams) {
    sink.begin = (status, headers, close) => {
      Object.assign(rec, { status, headers: [...headers], close });
      return {
        write(chunk) {
          if (over) rec.late++;
          rec.writes++;
          parts.push(Buffer.from(chunk as string));
        },
        end(close) {
          if (over) rec.late++;
          over = true;
          Object.assign(rec, { how: 'end', body: Buffer.concat(parts), close: rec.close || close });
          resolve(rec);
        },
        abort() {
          if (over) rec.late++;
          over = true;
          Object.assign(rec, { how: 'abort', body: Buffer.concat(parts) });
          resolve(rec);
        },
      };
    };
  }
  return { sink, done };
}

function run(app: HttpApp, path: string, headers: Record<string, string> = {}, options: { acceptEncoding?: string; method?: string; streams?: boolean; origin?: string } = {}) {
  const compiled = app.compiled.find((c) => c.route.path === path)!;
  const { sink, done } = fakeSink(options.streams ?? true);
  const inbound: Inbound = { method: options.method ?? 'GET', path, headers, clientIp: '127.0.0.1', acceptEncoding: options.acceptEncoding, origin: options.origin };
  const interrupt = app.execute(compiled, {}, inbound, undefined, sink);
  return { done, interrupt };
}

const header = (r: Recorded, name: string): string | undefined => {
  const i = r.headers.findIndex((h, k) => k % 2 === 0 && h === name);
  return i === -1 ? undefined : r.headers[i + 1];
};

const decode = (r: Recorded): Buffer => {
  const coding = header(r, 'content-encoding');
  return coding === 'gzip' ? zlib.gunzipSync(r.body) : coding === 'br' ? zlib.brotliDecompressSync(r.body) : r.body;
};

const metric = (m: PrometheusMetrics, route: string, status: number): number => {
  const line = m.render().split('\n').find((l) => l.startsWith('scour_http_requests_total{') && l.includes(`route="${route}"`) && l.includes(`status="${status}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('streamed answers in the app', () => {
  it('sends the status and headers at once, the parts in order, then the tail with the request id; the same JSON as the whole answer', async () => {
    const { app, metrics } = makeApp();
    const streamed = await run(app, '/s', { 'x-n': '4' }).done;
    expect(streamed.how).toBe('end');
    expect(streamed.status).toBe(200);
    expect(streamed.headers.slice(0, 4)).toEqual(['content-type', 'application/json; charset=utf-8', 'x-request-id', 'req_1']);
    expect(header(streamed, 'x-ratelimit-remaining')).toBe('41');
    expect(header(streamed, 'vary')).toBe('Accept-Encoding');
    expect(header(streamed, 'content-length')).toBeUndefined();
    expect(header(streamed, 'content-encoding')).toBeUndefined();
    expect(streamed.writes).toBe(6); // the opening, 4 items, the tail
    expect(streamed.late).toBe(0);
    const whole = await run(app, '/plain', { 'x-n': '4' }).done;
    expect(whole.how).toBe('send');
    expect(JSON.parse(streamed.body.toString('utf8'))).toEqual(JSON.parse(whole.body.toString('utf8')));
    expect(JSON.parse(streamed.body.toString('utf8')).request_id).toBe('req_1');
    expect(metric(metrics, 'GET /s', 200)).toBe(1);
  });

  it('sends the CORS headers a whole answer would carry', async () => {
    const { app } = makeApp({ corsOrigins: ['https://app.example'] });
    // Large enough (over 1 KiB) for the whole answer to say Vary: Accept-Encoding too, as a streamed one always does.
    const streamed = await run(app, '/s', { 'x-n': '100' }, { origin: 'https://app.example' }).done;
    const whole = await run(app, '/plain', { 'x-n': '100' }, { origin: 'https://app.example' }).done;
    expect(streamed.how).toBe('end');
    expect(header(streamed, 'access-control-allow-origin')).toBe('https://app.example');
    const names = (r: Recorded) => r.headers.filter((_, k) => k % 2 === 0).filter((n) => n !== 'content-length').sort();
    expect(names(streamed)).toEqual(names(whole));
  });

  for (const coding of ['gzip', 'br'] as const) {
    it(`compresses the stream with ${coding} when the client accepts it`, async () => {
      const { app } = makeApp();
      const r = await run(app, '/s', { 'x-n': '50' }, { acceptEncoding: coding }).done;
      expect(r.how).toBe('end');
      expect(header(r, 'content-encoding')).toBe(coding);
      expect(header(r, 'vary')).toBe('Accept-Encoding');
      const body = JSON.parse(decode(r).toString('utf8'));
      expect(body.n).toBe(50);
      expect(body.items.map((x: { k: number }) => x.k)).toEqual(Array.from({ length: 50 }, (_, k) => k));
      expect(body.request_id).toBe('req_1');
    });
  }

  it('cuts the body off when the work fails after the head went out: abort, no end, no tail; metrics count the failure', async () => {
    const { app, metrics } = makeApp();
    for (const acceptEncoding of [undefined, 'gzip']) {
      const r = await run(app, '/s', { 'x-n': '2', 'x-mode': 'fail' }, { acceptEncoding }).done;
      expect(r.how).toBe('abort');
      expect(r.status).toBe(200);
      expect(r.late).toBe(0);
      const text = acceptEncoding === undefined ? r.body.toString('utf8') : '';
      if (acceptEncoding === undefined) {
        expect(text.startsWith('{"items":[')).toBe(true);
        expect(() => JSON.parse(text)).toThrow();
      }
    }
    expect(metric(metrics, 'GET /s', 503)).toBe(2);
    expect(metric(metrics, 'GET /s', 200)).toBe(0);
  });

  it('cuts the body off when a streamed route returns no string', async () => {
    const { app, metrics } = makeApp();
    const r = await run(app, '/s', { 'x-mode': 'object' }).done;
    expect(r.how).toBe('abort');
    expect(metric(metrics, 'GET /s', 500)).toBe(1);
  });

  it('drops the body when the client goes away mid-stream: nothing written after, counted as 499', async () => {
    const { app, metrics } = makeApp();
    const { done, interrupt } = run(app, '/s', { 'x-n': '1000' });
    await new Promise((r) => setTimeout(r, 40));
    expect(app.activeRequests).toBeGreaterThan(0);
    interrupt!();
    const r = await done;
    expect(r.how).toBe('abort');
    expect(r.late).toBe(0);
    expect(r.writes).toBeLessThan(1000);
    expect(metric(metrics, 'GET /s', 499)).toBe(1);
    expect(app.activeRequests).toBe(0);
  });

  it('answers whole where it cannot stream: msgpack, a sink without begin, streaming off, a route without `streams`', async () => {
    const { app } = makeApp();
    const packed = await run(app, '/s', { accept: 'application/msgpack' }).done;
    expect(packed.how).toBe('send');
    expect(header(packed, 'content-type')).toBe('application/msgpack');
    expect(unpack(packed.body)).toMatchObject({ n: 3, request_id: 'req_1' });
    const noBegin = await run(app, '/s', {}, { streams: false }).done;
    expect(noBegin.how).toBe('send');
    expect(JSON.parse(noBegin.body.toString('utf8'))).toMatchObject({ n: 3, request_id: 'req_1' });
    const off = await run(makeApp({ streaming: false }).app, '/s').done;
    expect(off.how).toBe('send');
    expect(header(off, 'content-length')).toBeUndefined(); // the sink adds it; the app gives the whole body
    expect(JSON.parse(off.body.toString('utf8')).items).toHaveLength(3);
    const plain = await run(app, '/plain').done;
    expect(plain.how).toBe('send');
  });

  it('keeps a stream in flight for shutdown until its last byte, and asks for the connection to close when draining', async () => {
    const { app } = makeApp();
    const { done } = run(app, '/s', { 'x-n': '20' }, { acceptEncoding: 'gzip' });
    await new Promise((r) => setTimeout(r, 20));
    const drained = app.drain(5_000);
    const r = await done;
    expect(r.how).toBe('end');
    expect(r.close).toBe(true);
    expect(await drained).toBe(true);
    expect(JSON.parse(decode(r).toString('utf8')).items).toHaveLength(20);
  });
});
