/** The regex worker pool: deadlines, worker replacement, aborts, queue bounds, shutdown. */
import { afterEach, describe, expect, it } from 'vitest';
import { BadRequest, ServiceUnavailable } from '../../core/errors.js';
import regexTester from '../../plugins/tools/regex-tester/index.js';
import { RegexWorkerPool } from '../../plugins/tools/regex-tester/pool.js';
import { runTool } from '../support/tool-harness.js';

const EVIL = { pattern: '^(a+)+$', flags: '', input: `${'a'.repeat(40)}!`, maxMatches: 10 };
const NICE = { pattern: 'b+', flags: 'g', input: 'abbbc', maxMatches: 10 };

const pools: RegexWorkerPool[] = [];
const pool = (opts: ConstructorParameters<typeof RegexWorkerPool>[0] = {}) => {
  const p = new RegexWorkerPool(opts);
  pools.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.stop()));
});

describe('regex-tester tool', () => {
  it('cuts off catastrophic backtracking well under 2 s, then still answers', async () => {
    const t0 = performance.now();
    const bad = await runTool(regexTester, { pattern: '^(a+)+$', input: `${'a'.repeat(35)}!` });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toEqual([{ field: 'pattern', message: expect.stringMatching(/exceeded 250 ms/) }]);

    const good = await runTool(regexTester, { pattern: '(?<n>\\d+)', input: 'a1b22' });
    expect(good.status).toBe(200);
    expect(good.body.matches.map((m: { match: string }) => m.match)).toEqual(['1', '22']);
    await regexTester.stop?.();
  });

  it('works without start() (lazy workers) and after stop()', async () => {
    await regexTester.stop?.();
    const r = await runTool(regexTester, { pattern: 'x', input: 'xx' });
    expect(r.body.match_count).toBe(2);
    await regexTester.stop?.();
  });
});

describe('RegexWorkerPool', () => {
  it('keeps serving while other workers are stuck', async () => {
    const p = pool({ size: 2 });
    p.start();
    const evil1 = p.run(EVIL, 400);
    const evil2 = p.run(EVIL, 400);
    const nice = p.run(NICE, 400);
    await expect(evil1).rejects.toBeInstanceOf(BadRequest);
    await expect(evil2).rejects.toBeInstanceOf(BadRequest);
    const r = await nice;
    expect(r.matches.map((m) => m.match)).toEqual(['bbb']);
    expect(p.stats().workers).toBe(2);
  });

  it('terminates the worker when the client aborts, and recovers', async () => {
    const p = pool({ size: 1 });
    const ac = new AbortController();
    const t0 = performance.now();
    const job = p.run(EVIL, 1000, ac.signal);
    setTimeout(() => ac.abort(), 50);
    await expect(job).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(performance.now() - t0).toBeLessThan(500);
    const r = await p.run(NICE, 1000);
    expect(r.match_count).toBe(1);
  });

  it('refuses a job whose signal is already aborted', async () => {
    const p = pool({ size: 1 });
    await expect(p.run(NICE, 100, AbortSignal.abort())).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(p.stats()).toEqual({ workers: 0, busy: 0, queued: 0 });
  });

  it('drops a queued job whose client goes away', async () => {
    const p = pool({ size: 1 });
    await p.run(NICE, 1000);
    const evil = p.run(EVIL, 300);
    const ac = new AbortController();
    const queued = p.run(NICE, 300, ac.signal);
    ac.abort();
    await expect(queued).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(p.stats().queued).toBe(0);
    await expect(evil).rejects.toBeInstanceOf(BadRequest);
  });

  it('bounds the queue with 503', async () => {
    const p = pool({ size: 1, maxQueue: 2 });
    await p.run(NICE, 1000); // the worker is online: the next job is dispatched at once
    const evil = p.run(EVIL, 300);
    const q1 = p.run(NICE, 1000);
    const q2 = p.run(NICE, 1000);
    expect(p.stats()).toEqual({ workers: 1, busy: 1, queued: 2 });
    await expect(p.run(NICE, 1000)).rejects.toBeInstanceOf(ServiceUnavailable);
    await expect(evil).rejects.toBeInstanceOf(BadRequest);
    expect((await q1).match_count).toBe(1);
    expect((await q2).match_count).toBe(1);
  });

  it('fails jobs that wait too long for a worker', async () => {
    const p = pool({ size: 1, maxWaitMs: 100 });
    await p.run(NICE, 1000);
    const evil = p.run(EVIL, 1000);
    const t0 = performance.now();
    await expect(p.run(NICE, 1000)).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(performance.now() - t0).toBeLessThan(900);
    await expect(evil).rejects.toBeInstanceOf(BadRequest);
  });

  it('stop() fails running and queued jobs, and a later run starts afresh', async () => {
    const p = pool({ size: 1 });
    const running = p.run(EVIL, 5000);
    const queued = p.run(NICE, 5000);
    const outcomes = Promise.allSettled([running, queued]);
    await new Promise((r) => setTimeout(r, 100));
    await p.stop();
    const [a, b] = await outcomes;
    expect(a.status === 'rejected' && a.reason).toBeInstanceOf(ServiceUnavailable);
    expect(b.status === 'rejected' && b.reason).toBeInstanceOf(ServiceUnavailable);
    expect(p.stats().workers).toBe(0);
    const r = await p.run(NICE, 1000);
    expect(r.match_count).toBe(1);
  });

  it('reports a pattern the engine refuses while compiling', async () => {
    const p = pool({ size: 1 });
    await expect(p.run({ ...NICE, pattern: '(' }, 1000)).rejects.toMatchObject({
      validationErrors: [{ field: 'pattern', message: expect.stringMatching(/Invalid regular expression/) }],
    });
  });

  it('bounds compile time too (v-flag set operations on huge properties)', async () => {
    const p = pool({ size: 1 });
    const t0 = performance.now();
    await expect(p.run({ ...NICE, flags: 'vi', pattern: '[\\p{RGI_Emoji}--\\q{x}]'.repeat(80) }, 100)).rejects.toBeInstanceOf(BadRequest);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
