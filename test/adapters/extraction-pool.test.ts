/**
 * The extraction pool (adapters/extraction-pool) on its own: the same
 * results as in-process extraction on every page of the Zyte benchmark; a
 * worker that exits, crashes or hangs is replaced and only its page fails,
 * with TARGET_RESPONSE_INVALID; the queue holds at its bound while callers
 * wait; an abandoned page leaves the queue; close() fails what is left and
 * leaves no worker thread behind; pages under the size threshold, a
 * zero-worker pool and a lone page on a quiet server stay in this thread.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { Cause, Effect, Exit, Fiber } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExtractionPool, type ExtractionPoolOptions } from '../../adapters/extraction-pool/pool.js';
import { type ExtractionResult, type PageSource, runExtractors } from '../../core/extraction.js';
import { builtinExtractors, parsePage } from '../../plugins/extractors/index.js';
import { requireSharedData } from '../support/shared-data.js';

const MODULE = new URL('../../plugins/extractors/index.js', import.meta.url);
const LOCAL = { parse: parsePage, extractors: builtinExtractors };
const ALL_IDS = builtinExtractors.map((x) => x.id);

/** A pool that sends every page to its workers (adaptive routing off), unless a test says otherwise. */
const pool = (o: Partial<ExtractionPoolOptions> = {}) =>
  new ExtractionPool({ workers: 2, timeoutMs: 10_000, inlineBelow: 0, module: MODULE, local: LOCAL, testHooks: true, adaptive: false, ...o });

const source = (html: string, url = 'https://example.com/a.html'): PageSource => ({ url, finalUrl: url, statusCode: 200, contentType: 'text/html; charset=utf-8', html });
const PAGE = '<html><head><title>T</title></head><body><p>Hello <a href="/x">there</a></p></body></html>';

const run = (p: ExtractionPool, html: string, ids: readonly string[] = ['text_content']) =>
  Effect.runPromiseExit(p.extract({ page: source(html), ids, options: {} }));

/** The failure of an Exit (its typed error), or undefined. */
function failureOf(exit: Exit.Exit<ExtractionResult, unknown>): { code?: string; message?: string; details?: string } | undefined {
  if (Exit.isSuccess(exit)) return undefined;
  const f = Cause.findErrorOption(exit.cause);
  return f._tag === 'Some' ? (f.value as never) : { message: Cause.pretty(exit.cause) };
}

/** OS threads of this process named like its main thread (a worker thread is one such thread; libuv's and V8's have other names). */
function jsThreads(): Set<string> {
  const comm = (tid: string) => { try { return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(); } catch { return ''; } };
  const main = comm(String(process.pid));
  return new Set(readdirSync('/proc/self/task').filter((t) => t !== String(process.pid) && comm(t) === main));
}

const waitFor = async (cond: () => boolean, ms = 10_000) => {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('extraction pool: the same results as in-process', () => {
  let p: ExtractionPool;
  beforeAll(async () => {
    p = pool();
    await p.start();
  }, 60_000);
  afterAll(() => p?.close());

  it('gives every built-in extractor\'s exact result on all 181 Zyte benchmark pages', async () => {
    const dir = `${requireSharedData()}/extraction/zyte-article-benchmark/html`;
    const files = readdirSync(dir).filter((f) => f.endsWith('.html.gz')).sort();
    expect(files.length).toBe(181);
    const pages = files.map((f) => source(gunzipSync(readFileSync(`${dir}/${f}`)).toString('utf8'), `https://news.example.com/${f.slice(0, 12)}/story.html`));
    const options = { country: 'US' };
    // Several pages in flight at once, as a bulk scrape has them.
    const pooled = await Effect.runPromise(Effect.forEach(pages, (page) => p.extract({ page, ids: ALL_IDS, options }), { concurrency: 8 }));
    for (const [n, page] of pages.entries()) {
      const local = await runExtractors(LOCAL, parsePage(page), ALL_IDS, options);
      expect(pooled[n], files[n]).toStrictEqual(local);
    }
    expect(p.stats()).toMatchObject({ pooled: 181, inline: 0, replaced: 0 });
  }, 120_000);

  it('reports one extractor\'s failure as its own, as in-process', async () => {
    // A page the schema extractor cannot read is still a result: JSON-LD that is not JSON is skipped, never thrown.
    const r = await Effect.runPromise(p.extract({ page: source(`${PAGE}<script type="application/ld+json">{oops</script>`), ids: ['schema_data', 'links'], options: {} }));
    expect(Object.keys(r.values)).toEqual(['schema_data', 'links']);
    expect(r.errors).toEqual({});
  });

  it('runs only the extractors it was built with (by identity: a plugin reusing a built-in id is not one of them)', () => {
    expect(builtinExtractors.every((x) => p.runs(x))).toBe(true);
    expect(p.runs({ ...builtinExtractors[0]! })).toBe(false);
  });
});

describe('extraction pool: failures', () => {
  it.each([
    ['exit', 'exited (code 7)'],
    ['crash', 'crashed: scour-test: crash requested by the page'],
  ])('a worker that %ss on a page is replaced; that page fails with TARGET_RESPONSE_INVALID, the others succeed', async (hook, why) => {
    const p = pool();
    try {
      await p.start();
      const [bad, ...good] = await Promise.all([run(p, `${PAGE}<!--scour-test:${hook}-->`), ...Array.from({ length: 6 }, () => run(p, PAGE))]);
      expect(failureOf(bad!)).toMatchObject({ code: 'TARGET_RESPONSE_INVALID', message: 'The page could not be extracted', details: `the extraction worker stopped on this page: it ${why}` });
      for (const g of good) expect(Exit.isSuccess(g) && g.value.values.text_content).toBe('Hello there');
      expect(p.stats().replaced).toBe(1);
      await waitFor(() => p.stats().ready === 2);
      expect(Exit.isSuccess(await run(p, PAGE))).toBe(true);
    } finally {
      await p.close();
    }
  }, 60_000);

  it('a worker that runs past the deadline is terminated and replaced; its page fails, the queue behind it goes on', async () => {
    const p = pool({ workers: 1, timeoutMs: 700 });
    try {
      await p.start();
      const t0 = Date.now();
      const [hung, after] = await Promise.all([run(p, `${PAGE}<!--scour-test:hang-->`), run(p, PAGE)]);
      expect(failureOf(hung)).toMatchObject({ code: 'TARGET_RESPONSE_INVALID', message: 'The page could not be extracted in time', details: 'extraction took longer than 0.7 s' });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(650);
      // The page queued behind the hung one ran on the replacement worker.
      expect(Exit.isSuccess(after) && after.value.values.text_content).toBe('Hello there');
      expect(p.stats()).toMatchObject({ workers: 1, replaced: 1 });
    } finally {
      await p.close();
    }
  }, 60_000);

  it('a page abandoned while it runs keeps its deadline: a hung page still frees its worker', async () => {
    const p = pool({ workers: 1, timeoutMs: 500 });
    try {
      await p.start();
      const fiber = Effect.runFork(p.extract({ page: source(`${PAGE}<!--scour-test:hang-->`), ids: ['text_content'], options: {} }));
      await waitFor(() => p.stats().busy === 1);
      await Effect.runPromise(Fiber.interrupt(fiber));
      expect(Exit.isSuccess(await run(p, PAGE))).toBe(true);
      expect(p.stats().replaced).toBe(1);
    } finally {
      await p.close();
    }
  }, 60_000);
});

describe('extraction pool: back-pressure and lifecycle', () => {
  it('holds the queue at its bound: callers past it wait their turn (FIFO), and all finish', async () => {
    const p = pool({ workers: 1, maxQueue: 2 });
    try {
      await p.start();
      const order: number[] = [];
      const seen = { queued: 0, waiting: 0 };
      const jobs = Array.from({ length: 8 }, (_, n) =>
        Effect.runPromise(p.extract({ page: source(`${PAGE}<!--scour-test:busy:60--><i>${n}</i>`), ids: ['text_content'], options: {} })).then((r) => {
          order.push(n);
          return r;
        }));
      const sampler = setInterval(() => {
        const s = p.stats();
        seen.queued = Math.max(seen.queued, s.queued);
        seen.waiting = Math.max(seen.waiting, s.waiting);
      }, 5);
      await waitFor(() => p.stats().busy + p.stats().queued + p.stats().waiting === 8);
      expect(p.stats()).toMatchObject({ busy: 1, queued: 2, waiting: 5, maxQueue: 2 });
      await Promise.all(jobs);
      clearInterval(sampler);
      expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(seen).toEqual({ queued: 2, waiting: 5 });
      expect(p.stats()).toMatchObject({ busy: 0, queued: 0, waiting: 0, pooled: 8 });
    } finally {
      await p.close();
    }
  }, 60_000);

  it('a caller that gives up leaves the queue (or the wait) at once', async () => {
    const p = pool({ workers: 1, maxQueue: 1 });
    try {
      await p.start();
      const busy = run(p, `${PAGE}<!--scour-test:busy:300-->`);
      const queued = Effect.runFork(p.extract({ page: source(PAGE), ids: ['text_content'], options: {} }));
      const waiting = Effect.runFork(p.extract({ page: source(PAGE), ids: ['text_content'], options: {} }));
      await waitFor(() => p.stats().queued === 1 && p.stats().waiting === 1);
      await Effect.runPromise(Fiber.interrupt(queued));
      expect(p.stats()).toMatchObject({ queued: 1, waiting: 0 });
      await Effect.runPromise(Fiber.interrupt(waiting));
      expect(p.stats()).toMatchObject({ queued: 0, waiting: 0 });
      expect(Exit.isSuccess(await busy)).toBe(true);
      expect(p.stats().pooled).toBe(1);
    } finally {
      await p.close();
    }
  }, 60_000);

  it('close() fails running, queued and waiting pages with SERVICE_UNAVAILABLE and leaves no worker thread', async () => {
    const before = jsThreads();
    const p = pool({ workers: 2, maxQueue: 1 });
    await p.start();
    const started = [...jsThreads()].filter((t) => !before.has(t));
    expect(started.length).toBeGreaterThanOrEqual(2);
    const pending = Array.from({ length: 5 }, () => run(p, `${PAGE}<!--scour-test:busy:2000-->`));
    await waitFor(() => p.stats().busy === 2);
    expect(p.stats()).toMatchObject({ queued: 1, waiting: 2 });
    await p.close();
    for (const x of await Promise.all(pending)) expect(failureOf(x)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(p.stats()).toMatchObject({ workers: 0, busy: 0, queued: 0, waiting: 0 });
    expect(p.threadIds()).toEqual([]);
    const left = [...jsThreads()].filter((t) => started.includes(t));
    expect(left).toEqual([]);
    expect(failureOf(await run(p, PAGE))).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  }, 60_000);

  it('starts its workers lazily, on the first page that needs one', async () => {
    const p = pool({ workers: 2 });
    try {
      expect(p.stats().workers).toBe(0);
      expect(Exit.isSuccess(await run(p, PAGE))).toBe(true);
      expect(p.stats()).toMatchObject({ workers: 2, pooled: 1, started: 2 });
    } finally {
      await p.close();
    }
  }, 60_000);

  it('keeps pages under the size threshold, and every page of a zero-worker pool, in this thread (no worker started)', async () => {
    const small = pool({ workers: 2, inlineBelow: 1000 });
    const none = pool({ workers: 0 });
    try {
      const r = await run(small, PAGE, ALL_IDS);
      const local = await runExtractors(LOCAL, parsePage(source(PAGE)), ALL_IDS, {});
      expect(Exit.isSuccess(r) && r.value).toStrictEqual(local);
      expect(Exit.isSuccess(await run(none, `${PAGE}${'<p>long enough</p>'.repeat(100)}<!--scour-test:exit-->`))).toBe(true);
      expect(small.stats()).toMatchObject({ workers: 0, inline: 1, pooled: 0 });
      expect(none.stats()).toMatchObject({ workers: 0, inline: 1, pooled: 0 });
    } finally {
      await small.close();
      await none.close();
    }
  });

  it('adaptive routing: a lone page on a quiet server stays in this thread; a busy event loop, pages already in the pool, or a page of 256 KiB go to the workers (with two cores or more)', async () => {
    const p = pool({ workers: 2, adaptive: true });
    const spin = (ms: number) => { const until = performance.now() + ms; while (performance.now() < until) { /* the main thread busy */ } };
    try {
      await p.start();
      if (availableParallelism() < 2) {
        // One usable core: a worker could only take turns with this thread, so a page under 256 KiB stays here, busy or not.
        spin(30);
        expect(Exit.isSuccess(await run(p, `${PAGE}${'<p>x</p>'.repeat(20_000)}`))).toBe(true);
        expect(p.stats()).toMatchObject({ inline: 1, pooled: 0 });
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
      expect(Exit.isSuccess(await run(p, PAGE))).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 0 });
      // Busy since the previous page: the next goes to a worker.
      spin(30);
      expect(Exit.isSuccess(await run(p, PAGE))).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 1 });
      // A page in the pool already: the next one joins it, quiet or not.
      spin(30);
      const first = run(p, `${PAGE}<!--scour-test:busy:200-->`);
      await new Promise((r) => setTimeout(r, 50));
      const second = run(p, PAGE);
      expect((await Promise.all([first, second])).every(Exit.isSuccess)).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 3 });
      // A page of 256 KiB or more always gets a worker (and its deadline).
      await new Promise((r) => setTimeout(r, 50));
      expect(Exit.isSuccess(await run(p, `${PAGE}${'<p>x</p>'.repeat(140_000)}`))).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 4 });
    } finally {
      await p.close();
    }
  }, 60_000);

  it('a page sent alone (a single scrape) stays in this thread while no other request is in flight, busy loop or not; a page of a batch always goes to a worker', async () => {
    let others = 0;
    const p = pool({ workers: 2, adaptive: true, othersInFlight: () => others });
    const spin = (ms: number) => { const until = performance.now() + ms; while (performance.now() < until) { /* the main thread busy */ } };
    const send = (alone: boolean) => Effect.runPromiseExit(p.extract({ page: source(PAGE), ids: ['text_content'], options: {}, alone }));
    try {
      await p.start();
      if (availableParallelism() < 2) {
        // One usable core: every page under 256 KiB stays here, alone or not.
        expect((await Promise.all([send(true), send(false)])).every(Exit.isSuccess)).toBe(true);
        expect(p.stats()).toMatchObject({ inline: 2, pooled: 0 });
        return;
      }
      // The loop was busy (with this client's own previous request, say), but nothing else is in flight: here.
      spin(30);
      expect(Exit.isSuccess(await send(true))).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 0 });
      // Another request in flight: a worker, so this thread stays free for it.
      others = 1;
      await new Promise((r) => setTimeout(r, 50));
      expect(Exit.isSuccess(await send(true))).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 1 });
      // A page of a batch on a quiet server: a worker, beside its siblings.
      others = 0;
      await new Promise((r) => setTimeout(r, 50));
      expect(Exit.isSuccess(await send(false))).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 2 });
      // Alone but 256 KiB or more: a worker (and its deadline) all the same.
      expect(Exit.isSuccess(await Effect.runPromiseExit(p.extract({ page: source(`${PAGE}${'<p>x</p>'.repeat(40_000)}`), ids: ['text_content'], options: {}, alone: true })))).toBe(true);
      expect(p.stats()).toMatchObject({ inline: 1, pooled: 3 });
    } finally {
      await p.close();
    }
  }, 60_000);

  it('works in-process for a while when its workers cannot start, instead of failing every page', async () => {
    const p = pool({ workers: 1, module: new URL('./no-such-module.js', import.meta.url) });
    try {
      const r = await run(p, PAGE);
      expect(Exit.isSuccess(r) && r.value.values.text_content).toBe('Hello there');
      expect(p.stats()).toMatchObject({ workers: 0, inline: 1 });
      expect(p.stats().started).toBe(3);
    } finally {
      await p.close();
    }
  }, 60_000);
});
