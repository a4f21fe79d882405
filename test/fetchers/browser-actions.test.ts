/**
 * Browser actions in the browser fetcher (issue 29, section 1), against
 * real Chromium and a loopback site whose content is behind a "load more"
 * button, an infinite scroll, a form and a cookie wall: each is read
 * fully; a failed action stops the rest and the page is read as it stands;
 * execute_javascript's value, its bounds (size, time, an endless loop) and
 * its errors; screenshot actions; and the egress guard on what the page
 * requests during actions (a fetch and an image to 127.0.0.2, with only
 * 127.0.0.1 allowed: refused, and that site sees nothing). The whole suite
 * runs twice: with a Chromium the fetcher launches, and in a Playwright
 * browser server started here (SCOUR_BROWSER_WS_ENDPOINT's path, issue 29
 * section 3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../adapters/egress/port.js';
import type { BrowserAction, FetchRequest, FetchResult } from '../../core/page.js';
import { chromium, type BrowserServer } from 'playwright';
import { createBrowserFetcher, launchArgs, type BrowserFetcher, type BrowserFetcherOptions } from '../../plugins/fetchers/browser/index.js';
import { parseBrowserEndpoints } from '../../plugins/fetchers/browser/remote.js';
import { MAX_SCRIPT_RESULT_BYTES } from '../../plugins/fetchers/browser/actions.js';
import { ARTICLE_TEXT, startActionsSite, type ActionsSite } from '../support/actions-site.js';

const CHROMIUM = '/usr/bin/chromium';

let site: ActionsSite;
let forbidden: ActionsSite;
let fetcher: BrowserFetcher;

const css = (selector: string) => ({ kind: 'css' as const, selector });
const request = (url: string, actions: BrowserAction[], extra: Partial<FetchRequest> = {}): FetchRequest => ({
  url, headers: {}, userAgent: undefined, cookies: {}, followRedirects: true, timeoutMs: 20_000, proxy: undefined,
  signal: new AbortController().signal, actions, ...extra,
});
const outcomes = (r: FetchResult) => (r.actions ?? []).map(({ screenshot: _s, ...a }) => a);

let server: BrowserServer;

beforeAll(async () => {
  site = await startActionsSite('127.0.0.1');
  forbidden = await startActionsSite('127.0.0.2');
  server = await chromium.launchServer({ executablePath: CHROMIUM, headless: true, host: '127.0.0.1', args: launchArgs([], true) });
});

afterAll(async () => {
  await site?.close();
  await forbidden?.close();
  await server?.close();
});

const BROWSERS = ['a local Chromium', 'a browser server'] as const;
/** Where the fetcher's pages come from: launched by it, or the browser server's. */
const browserOf = (where: (typeof BROWSERS)[number]): Pick<BrowserFetcherOptions, 'executablePath' | 'remoteEndpoints'> =>
  where === 'a local Chromium' ? { executablePath: CHROMIUM } : { remoteEndpoints: parseBrowserEndpoints(server.wsEndpoint()).endpoints };

describe.each(BROWSERS)('in %s', (where) => {
beforeAll(async () => {
  fetcher = createBrowserFetcher({ egress: nodeEgress, ...browserOf(where), maxPages: 2, allowPrivate: true });
});
afterAll(async () => {
  await fetcher?.stop();
});

describe('browser actions', () => {
  it('clicks "load more" until every item is in', async () => {
    const before = await fetcher.fetch(request(`${site.url}/load-more`, []));
    expect(before.body).not.toContain('Item 4');
    const r = await fetcher.fetch(request(`${site.url}/load-more`, [{ type: 'click', selector: css('#more') }, { type: 'click', selector: css('#more') }]));
    expect(outcomes(r)).toEqual([{ index: 0, type: 'click', ok: true }, { index: 1, type: 'click', ok: true }]);
    for (let n = 1; n <= 9; n++) expect(r.body).toContain(`Item ${n}:`);
    expect(r.body).not.toContain('id="more"');
  });

  it('scrolls an infinite feed to the bottom until it stops growing', async () => {
    const rowsBefore = site.hits('/rows');
    const r = await fetcher.fetch(request(`${site.url}/infinite`, [{ type: 'scroll', to: 'bottom', maxSteps: 20 }]));
    expect(r.body).toContain('Row 40:');
    const [a] = outcomes(r);
    expect(a).toMatchObject({ index: 0, type: 'scroll', ok: true });
    const v = a!.value as { steps: number; height: number };
    // Three batches came in; the step after the last one saw no growth and stopped (well before 20).
    expect(v.steps).toBeGreaterThanOrEqual(4);
    expect(v.steps).toBeLessThanOrEqual(6);
    expect(v.height).toBeGreaterThan(40 * 120);
    expect(site.hits('/rows') - rowsBefore).toBeGreaterThanOrEqual(3);
  });

  it('scrolls by an amount; max_steps bounds scrolling to the bottom', async () => {
    const r = await fetcher.fetch(request(`${site.url}/infinite`, [
      { type: 'scroll', direction: 'down', amount: 400 },
      { type: 'execute_javascript', script: 'return Math.round(scrollY)' },
      { type: 'scroll', to: 'bottom', maxSteps: 1 },
    ]));
    expect(outcomes(r)[1]).toEqual({ index: 1, type: 'execute_javascript', ok: true, value: 400 });
    expect(outcomes(r)[2]!.value).toMatchObject({ steps: 1 });
    expect(r.body).not.toContain('Row 40:');
  });

  it('fills a form and submits it with Enter, or with a click on its button', async () => {
    const enter = await fetcher.fetch(request(`${site.url}/form`, [
      { type: 'write', selector: css('#q'), text: 'lighthouse' },
      { type: 'press', key: 'Enter' },
    ]));
    expect(outcomes(enter).every((a) => a.ok)).toBe(true);
    expect(enter.finalUrl).toBe(`${site.url}/search?q=lighthouse`);
    expect(enter.body).toContain('Results for lighthouse');
    const click = await fetcher.fetch(request(`${site.url}/form`, [
      { type: 'write', selector: { kind: 'xpath', selector: '//input[@id="q"]' }, text: 'harbour' },
      { type: 'click', selector: css('#go') },
    ]));
    expect(click.body).toContain('Results for harbour');
  });

  it('accepts a cookie wall to reach the article behind it', async () => {
    const r = await fetcher.fetch(request(`${site.url}/cookie-wall`, [{ type: 'click', selector: css('#accept') }]));
    expect(outcomes(r)).toEqual([{ index: 0, type: 'click', ok: true }]);
    expect(r.body).toContain(ARTICLE_TEXT);
    expect(r.body).not.toContain('We use cookies');
  });

  it('a failed action stops the rest; the page is read as it stood', async () => {
    const r = await fetcher.fetch(request(`${site.url}/load-more`, [
      { type: 'click', selector: css('#more') },
      { type: 'click', selector: css('#missing') },
      { type: 'click', selector: css('#more') },
    ]));
    expect(r.statusCode).toBe(200);
    expect(outcomes(r)).toEqual([
      { index: 0, type: 'click', ok: true },
      { index: 1, type: 'click', ok: false, error: expect.stringMatching(/no element matches "#missing"/) },
    ]);
    expect(r.body).toContain('Item 6:');
    expect(r.body).not.toContain('Item 7:');
  });

  it('a wait for a selector that never comes fails after its bound; a wait for one that comes succeeds', async () => {
    const t0 = performance.now();
    const r = await fetcher.fetch(request(`${site.url}/load-more`, [
      { type: 'click', selector: css('#more') },
      { type: 'wait', selector: css('li:nth-child(6)'), milliseconds: 3000 },
      { type: 'wait', selector: css('#never'), milliseconds: 300 },
      { type: 'wait', milliseconds: 50 },
    ]));
    expect(outcomes(r).map((a) => a.ok)).toEqual([true, true, false]);
    expect(outcomes(r)[2]!.error).toMatch(/no element matched "#never" within 0.3 s/);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('execute_javascript: the body of an async function, its JSON value back; errors and bounds', async () => {
    const r = await fetcher.fetch(request(`${site.url}/title`, [
      { type: 'execute_javascript', script: 'return document.title' },
      { type: 'execute_javascript', script: 'await new Promise((r) => setTimeout(r, 20));\nreturn { n: 42, list: [1, "two", null], nested: { ok: true } } // a comment' },
      { type: 'execute_javascript', script: 'document.body.dataset.touched = "yes"' },
      { type: 'execute_javascript', script: 'return null' },
      // A dialog does not hold the page: dismissed at once (confirm answers false).
      { type: 'execute_javascript', script: 'alert("hi"); return confirm("sure?")' },
    ]));
    expect(outcomes(r)).toEqual([
      { index: 0, type: 'execute_javascript', ok: true, value: 'A page with a title' },
      { index: 1, type: 'execute_javascript', ok: true, value: { n: 42, list: [1, 'two', null], nested: { ok: true } } },
      { index: 2, type: 'execute_javascript', ok: true },
      { index: 3, type: 'execute_javascript', ok: true, value: null },
      { index: 4, type: 'execute_javascript', ok: true, value: false },
    ]);
    // What a script changes is in the page that is read.
    expect(r.body).toContain('data-touched="yes"');

    const failures: [string, RegExp][] = [
      ['throw new Error("boom")', /the script threw: Error: boom/],
      ['return "x".repeat(70000)', /larger than 64 KiB/],
      [`return Array.from({ length: 5000 }, () => "${'y'.repeat(20)}")`, /larger than 64 KiB/],
      ['const o = {}; o.self = o; return o', /not JSON-serialisable/],
      ['return this is not javascript', /not valid JavaScript/],
      // A source that closes the wrapper early is refused before it runs: it could hand back a primitive of any size.
      ['return 1 })(), "x".repeat(1e6); (async () => {', /not valid JavaScript/],
      ['return 1 }))(); (async () => ({ v: 1', /not valid JavaScript/],
      ['JSON.stringify = () => "x".repeat(1e6); return { a: 1 }', /larger than 64 KiB|could not be read/],
    ];
    for (const [script, error] of failures) {
      const f = await fetcher.fetch(request(`${site.url}/title`, [{ type: 'execute_javascript', script }, { type: 'execute_javascript', script: 'return 1' }]));
      expect(outcomes(f), script).toEqual([{ index: 0, type: 'execute_javascript', ok: false, error: expect.stringMatching(error) }]);
      expect(f.body).toContain('Nothing else here');
    }
    expect(MAX_SCRIPT_RESULT_BYTES).toBe(64 * 1024);
  });

  it('a script that never ends (a promise, or an endless loop) is stopped within the time left; the page is still read', async () => {
    for (const script of ['await new Promise(() => {})', 'while (true) {}']) {
      const t0 = performance.now();
      const r = await fetcher.fetch(request(`${site.url}/title`, [{ type: 'execute_javascript', script }], { timeoutMs: 5000 }));
      const took = performance.now() - t0;
      expect(outcomes(r), script).toEqual([{ index: 0, type: 'execute_javascript', ok: false, error: expect.stringMatching(/did not finish within/) }]);
      expect(r.body).toContain('Nothing else here');
      expect(took).toBeLessThan(5000);
    }
  });

  it('takes screenshot actions (PNG), of the viewport or the full page', async () => {
    const r = await fetcher.fetch(request(`${site.url}/infinite`, [
      { type: 'screenshot', fullPage: false },
      { type: 'scroll', to: 'bottom', maxSteps: 1 },
      { type: 'screenshot', fullPage: true },
    ]));
    const shots = (r.actions ?? []).map((a) => a.screenshot);
    expect(shots[0]).toMatchObject({ contentType: 'image/png', width: 1280, height: 800 });
    expect(shots[1]).toBeUndefined();
    expect(shots[2]!.height).toBeGreaterThan(800);
    expect(Buffer.from(shots[0]!.data).subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(r.screenshot).toBeUndefined();
  });

  it('the actions are bounded by the request\'s timeout: an action with no time left fails, the page is read', async () => {
    const r = await fetcher.fetch(request(`${site.url}/title`, [{ type: 'wait', milliseconds: 60_000 }, { type: 'execute_javascript', script: 'return 1' }], { timeoutMs: 3000 }));
    expect(outcomes(r)[0]).toEqual({ index: 0, type: 'wait', ok: true });
    expect(outcomes(r)[1]).toMatchObject({ index: 1, ok: false, error: expect.stringMatching(/no time left/) });
    expect(r.body).toContain('Nothing else here');
  });
});

describe('browser actions and the egress guard', () => {
  it('refuses what the page requests during actions from an address not allowed (127.0.0.2, only 127.0.0.1 allowed); that site sees nothing', async () => {
    const guarded = createBrowserFetcher({ egress: nodeEgress, ...browserOf(where), maxPages: 1, allowPrivate: false, allowAddress: (ip) => ip === '127.0.0.1' });
    // The counts are the site's since this test began (the suite runs once per browser kind against one site).
    const seen = { leak: forbidden.hits('/leak'), png: forbidden.hits('/leak.png'), landing: forbidden.hits('/landing') };
    try {
      const r = await guarded.fetch(request(`${site.url}/beacon?to=${encodeURIComponent(forbidden.url)}`, [
        { type: 'click', selector: css('#send') },
        { type: 'wait', selector: css('#refused'), milliseconds: 5000 },
        { type: 'execute_javascript', script: `try { const r = await fetch(${JSON.stringify(`${forbidden.url}/leak`)}); return r.status } catch (e) { return 'failed' }` },
      ]));
      expect(r.statusCode).toBe(200);
      expect(outcomes(r).slice(0, 2).map((a) => a.ok)).toEqual([true, true]);
      expect(r.body).toContain('id="refused"');
      expect(r.body).not.toContain('id="leaked"');
      // The script's fetch fails too (cross-origin, and refused); what proves the refusal is that the site saw nothing.
      const status = outcomes(r)[2]!.value;
      expect(status === 'failed' || (typeof status === 'number' && status >= 400)).toBe(true);
      expect(forbidden.hits('/leak') - seen.leak + forbidden.hits('/leak.png') - seen.png).toBe(0);
      // The same page and actions with 127.0.0.2 allowed: the requests do arrive (so the count above can fail).
      const open = await fetcher.fetch(request(`${site.url}/beacon?to=${encodeURIComponent(forbidden.url)}`, [
        { type: 'click', selector: css('#send') },
        { type: 'wait', milliseconds: 300 },
      ]));
      expect(open.statusCode).toBe(200);
      expect(forbidden.hits('/leak') - seen.leak).toBe(1);

      // A navigation an action starts to an address not allowed fails the render, as a redirect there does.
      const nav = await guarded.fetch(request(`${site.url}/title`, [
        { type: 'execute_javascript', script: `location.href = ${JSON.stringify(`${forbidden.url}/landing`)}` },
      ])).then(() => undefined, (e: unknown) => e as { code?: string });
      expect(nav?.code).toBe('TARGET_NOT_ALLOWED');
      expect(forbidden.hits('/landing') - seen.landing).toBe(0);
    } finally {
      await guarded.stop();
    }
  });
});
});
