/** The typed stage pipeline at run time, the client quota stage, route checks at boot, reply headers. */
import { Effect, Exit } from 'effect';
import { describe, expect, it } from 'vitest';
import { addFinalizer, ReplyMeta, type RequestContext } from '../../core/context.js';
import { RateLimited } from '../../core/errors.js';
import { defineStage, Pipeline } from '../../core/pipeline.js';
import { clientQuotaStage } from '../../core/stages/client-quota.js';
import { MemoryRateLimiter } from '../../adapters/limiter/memory/index.js';

const baseCtx = (clientIp = '127.0.0.1'): RequestContext => ({
  requestId: 'r1', receivedAt: 1_000_000, method: 'POST', path: '/x', params: {}, clientIp, headers: {}, body: {}, bodyError: undefined, reply: new ReplyMeta(),
});

describe('pipeline', () => {
  it('runs stages in order, each adding typed fields the next can read', () => {
    const seen: string[] = [];
    const auth = defineStage('auth', (_: RequestContext) => Effect.sync(() => (seen.push('auth'), { account: { id: 'acc', plan: 'free' as const } })));
    const quota = defineStage('quota', (ctx: { account: { id: string } }) => Effect.sync(() => (seen.push(`quota:${ctx.account.id}`), { slot: 1 })));
    const bill = defineStage('bill', (ctx: { account: { id: string }; slot: number }) => Effect.sync(() => (seen.push(`bill:${ctx.slot}`), { charged: 3 })));
    const p = Pipeline.from<RequestContext>().then(auth).then(quota).then(bill);
    expect(p.names).toEqual(['auth', 'quota', 'bill']);
    const run = p.handle((ctx) => Effect.succeed(`${ctx.account.id}:${ctx.charged}`));
    expect(Effect.runSync(run(baseCtx()))).toBe('acc:3');
    expect(seen).toEqual(['auth', 'quota:acc', 'bill:1']);
  });

  it('stops at the first failing stage; later stages and the handler do not run', () => {
    const seen: string[] = [];
    const fail = defineStage('quota', (_: RequestContext) => Effect.fail('nope' as const));
    const after = defineStage('bill', (_: RequestContext) => Effect.sync(() => (seen.push('bill'), {})));
    const run = Pipeline.from<RequestContext>().then(fail).then(after).handle(() => Effect.sync(() => seen.push('handler')));
    const exit = Effect.runSyncExit(run(baseCtx()));
    expect(Exit.isFailure(exit)).toBe(true);
    expect(seen).toEqual([]);
  });

  it('the client quota stage writes x-ratelimit-* headers and fails with RateLimited past the limit', () => {
    const clock = { now: () => 1_000_000 };
    const limiter = new MemoryRateLimiter(clock);
    const run = Pipeline.from<RequestContext>().then(clientQuotaStage(limiter, { limit: 2, windowSeconds: 60 }, '/billing')).handle((c) => Effect.succeed(c.rateLimit.remaining));
    const c1 = baseCtx();
    expect(Effect.runSync(run(c1))).toBe(1);
    expect(c1.reply.headers).toEqual(['x-ratelimit-limit', '2', 'x-ratelimit-remaining', '1', 'x-ratelimit-reset', '1020', 'x-ratelimit-window', '60']);
    expect(Effect.runSync(run(baseCtx()))).toBe(0);
    const exit = Effect.runSyncExit(run(baseCtx()));
    expect(Exit.isFailure(exit)).toBe(true);
    const err = (exit as Exit.Failure<unknown, RateLimited>).cause.reasons[0] as { error: RateLimited };
    expect(err.error).toBeInstanceOf(RateLimited);
    expect(err.error.fields()).toEqual({ retry_after: 20, limit: 2, remaining: 0, reset: 1020, upgrade_url: '/billing' });
    // Another client has its own window.
    expect(Effect.runSync(run(baseCtx('10.9.9.9')))).toBe(1);
    limiter.dispose();
  });
});

describe('finalizers', () => {
  const holding = (log: string[], name: string, fail = false) => defineStage(name, (ctx: RequestContext) => {
    log.push(`take ${name}`);
    addFinalizer(ctx, () => Effect.sync(() => void log.push(`release ${name}`)));
    return fail ? Effect.fail(`${name} failed`) : Effect.succeed({});
  });

  it('run in reverse order after the handler, and a synchronous pipeline stays an Exit', () => {
    const log: string[] = [];
    const syncFin = defineStage('a', (ctx: RequestContext) => {
      addFinalizer(ctx, () => Effect.succeed(void log.push('release a')));
      return Effect.succeed({});
    });
    const syncFin2 = defineStage('b', (ctx: RequestContext) => {
      addFinalizer(ctx, () => Effect.succeed(void log.push('release b')));
      return Effect.succeed({});
    });
    const run = Pipeline.from<RequestContext>().then(syncFin).then(syncFin2).handle(() => Effect.succeed(void log.push('handler')));
    const out = run(baseCtx());
    expect(Exit.isExit(out)).toBe(true);
    expect(log).toEqual(['handler', 'release b', 'release a']);
  });

  it('run when a later stage fails, and not for stages that never ran', () => {
    const log: string[] = [];
    const run = Pipeline.from<RequestContext>().then(holding(log, 'slot')).then(holding(log, 'hold', true)).then(holding(log, 'never'))
      .handle(() => Effect.sync(() => log.push('handler')));
    expect(Exit.isFailure(Effect.runSyncExit(run(baseCtx())))).toBe(true);
    expect(log).toEqual(['take slot', 'take hold', 'release hold', 'release slot']);
  });

  it('run when the request is interrupted (client abort), before the fiber ends', async () => {
    const log: string[] = [];
    const run = Pipeline.from<RequestContext>().then(holding(log, 'slot'))
      .handle(() => Effect.andThen(Effect.sleep(5_000), Effect.sync(() => log.push('handler'))));
    const done = new Promise<void>((resolve) => {
      const interrupt = Effect.runCallback(run(baseCtx()), { onExit: () => { log.push('exit'); resolve(); } });
      setTimeout(() => interrupt(), 20);
    });
    await done;
    expect(log).toEqual(['take slot', 'release slot', 'exit']);
  });

  it('a finalizer that throws does not stop the others', () => {
    const log: string[] = [];
    const bad = defineStage('bad', (ctx: RequestContext) => {
      addFinalizer(ctx, () => { throw new Error('boom'); });
      return Effect.succeed({});
    });
    const run = Pipeline.from<RequestContext>().then(holding(log, 'slot')).then(bad).handle(() => Effect.succeed(1));
    expect(Effect.runSync(run(baseCtx()))).toBe(1);
    expect(log).toEqual(['take slot', 'release slot']);
  });
});

describe('routes', () => {
  it('a route with a request schema but no validate stage is refused at boot', async () => {
    const { HttpApp } = await import('../../adapters/http/shared/app.js');
    const { schema, StrictObject, Type } = await import('../../plugins/sdk/index.js');
    const { PrometheusMetrics } = await import('../../adapters/metrics/prometheus.js');
    const { AjvSchemaCompiler } = await import('../../adapters/validation/json-schema.js');
    const { createLogger } = await import('../../adapters/logging/pino.js');
    const handle = Pipeline.from<RequestContext>().handle(() => Effect.succeed({}));
    const make = () => new HttpApp({
      routes: [{ method: 'POST', path: '/x', summary: 'x', auth: 'none', request: schema(StrictObject({ a: Type.String() })), handle }],
      compiler: new AjvSchemaCompiler(),
      ids: { next: () => 'id' }, clock: { now: () => 0 }, metrics: new PrometheusMetrics(), logger: createLogger('silent'), bodyLimit: 1024,
    });
    expect(make).toThrow(/ROUTE_INVALID: POST \/x declares a request schema but its pipeline has no validate stage/);
  });
});

describe('reply headers', () => {
  it('refuse CR and LF, so a stage can never inject a header', () => {
    const r = new ReplyMeta();
    r.set('x-ok', '1');
    expect(() => r.set('x-bad', '1\r\nset-cookie: a=b')).toThrow(/CR or LF/);
    expect(() => r.set('x-bad\n', '1')).toThrow(/CR or LF/);
    expect(r.headers).toEqual(['x-ok', '1']);
  });
});
