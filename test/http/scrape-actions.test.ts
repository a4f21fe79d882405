/**
 * Browser actions on POST /v1/scrape and /v1/scrape/bulk (issue 29,
 * section 1), through the real server on both HTTP adapters, real Chromium
 * and a loopback site whose content is behind a "load more" button, an
 * infinite scroll, a form and a cookie wall: each is read fully (the hidden
 * content in content and main_content); a failed action is reported with
 * its index, the rest not run, the page answered (200, charged), or with
 * actions_required 422 ACTION_FAILED and nothing charged; execute_javascript's
 * value; screenshot actions' URLs serve images and are charged each; bulk
 * with actions; and hostile requests, every problem named at once, nothing
 * held or charged. (The egress guard on what a page requests during
 * actions: test/fetchers/browser-actions.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICES } from '../../config/prices.js';
import { call, expectErrorBody } from '../support/http.js';
import { until } from '../support/processes.js';
import { ADAPTERS, startScourIn, type Running } from '../support/server.js';
import { ARTICLE_TEXT, startActionsSite, type ActionsSite } from '../support/actions-site.js';

const ADMIN = 'scrape-actions-admin-token-0123456';
const P = PRICES.scrape;
/** A rendered scrape with actions and no screenshot action. */
const WITH_ACTIONS = P.base + P.render_js + P.actions;

describe.each(ADAPTERS)('browser actions through the server (embedded, %s)', (adapter) => {
  let site: ActionsSite;
  let s: Running;

  const admin = (method: string, path: string, body?: unknown) => call(`${s.url}/admin/v1${path}`, method, { auth: `Bearer ${ADMIN}`, body });
  const account = async (credits = 1000): Promise<{ id: string; key: string }> => {
    const r = await admin('POST', '/accounts', { plan: 'unicorn', credits });
    expect(r.status, r.text).toBe(201);
    return { id: r.body.account_id, key: r.body.api_key };
  };
  const balance = async (key: string): Promise<number> => {
    const u = await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` });
    expect(u.body.credits_reserved).toBe(0);
    return u.body.credits_remaining as number;
  };
  const ledger = async (id: string): Promise<{ operation: string; credits: number }[]> => (await admin('GET', `/accounts/${id}/ledger`)).body.ledger;
  const scrape = (key: string, body: unknown) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });
  const bulk = (key: string, body: unknown) => call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${key}`, body });

  beforeAll(async () => {
    site = await startActionsSite();
    s = await startScourIn('embedded', adapter, { adminToken: ADMIN, allowPrivateTargets: 'loopback', browserPages: 2, jobs: 'embedded' });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it.each([
    ['a "load more" button', '/load-more', [{ type: 'click', selector: '#more' }, { type: 'click', selector: '#more' }], 'Item 9: a teapot of the page 3 collection'],
    ['an infinite scroll', '/infinite', [{ type: 'scroll', to: 'bottom', max_steps: 20 }], 'Row 40: an entry of the endless feed'],
    ['a form (write, press Enter)', '/form', [{ type: 'write', selector: '#q', text: 'lighthouse' }, { type: 'press', key: 'Enter' }], 'Three archived letters mention lighthouse.'],
    ['a form (write, click submit)', '/form', [{ type: 'write', selector: '//input[@name="q"]', text: 'harbour' }, { type: 'click', selector: 'button#go' }], 'Three archived letters mention harbour.'],
    ['a form (click the field, write without a selector into the focus, press Enter)', '/form', [{ type: 'click', selector: '#q' }, { type: 'write', text: 'beacon' }, { type: 'press', key: 'Enter' }], 'Three archived letters mention beacon.'],
    ['a cookie wall', '/cookie-wall', [{ type: 'click', selector: '#accept' }], ARTICLE_TEXT],
  ])('reads the content behind %s (%s)', async (_what, path, actions, hidden) => {
    const a = await account();
    const plain = await scrape(a.key, { url: `${site.url}${path}`, render_js: true, main_content: true });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body.main_content).not.toContain(hidden);
    expect(plain.body).not.toHaveProperty('actions');

    const before = await balance(a.key);
    const r = await scrape(a.key, { url: `${site.url}${path}`, render_js: true, main_content: true, actions });
    expect(r.status, r.text).toBe(200);
    expect(r.body.actions.results).toEqual(actions.map((x, index) => expect.objectContaining({ index, type: x.type, ok: true })));
    expect(r.body.actions.screenshots).toEqual([]);
    expect(r.body.content).toContain(hidden);
    expect(r.body.main_content).toContain(hidden);
    expect(r.body.credits_used).toBe(WITH_ACTIONS);
    expect(await balance(a.key)).toBe(before - WITH_ACTIONS);
  });

  it('a failed action is reported with its index and stops the rest; the page as it stood is answered (200) and charged', async () => {
    const a = await account();
    const r = await scrape(a.key, {
      url: `${site.url}/load-more`, render_js: true,
      actions: [{ type: 'click', selector: '#more' }, { type: 'click', selector: '#missing' }, { type: 'click', selector: '#more' }],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.actions.results).toEqual([
      { index: 0, type: 'click', ok: true },
      { index: 1, type: 'click', ok: false, error: expect.stringMatching(/no element matches "#missing"/) },
    ]);
    expect(r.body.content).toContain('Item 6:');
    expect(r.body.content).not.toContain('Item 7:');
    expect(r.body.credits_used).toBe(WITH_ACTIONS);
  });

  it('write without a selector and nothing focused fails that action, naming why', async () => {
    const a = await account();
    const r = await scrape(a.key, { url: `${site.url}/form`, render_js: true, actions: [{ type: 'write', text: 'beacon' }, { type: 'press', key: 'Enter' }] });
    expect(r.status, r.text).toBe(200);
    expect(r.body.actions.results).toEqual([{ index: 0, type: 'write', ok: false, error: expect.stringMatching(/no element has the focus/) }]);
    expect(r.body.content).not.toContain('Three archived letters mention beacon.');
  });

  it('with actions_required, a failed action is 422 ACTION_FAILED with its index, and nothing is charged', async () => {
    const a = await account();
    const before = await balance(a.key);
    const r = await scrape(a.key, {
      url: `${site.url}/load-more`, render_js: true, actions_required: true,
      actions: [{ type: 'click', selector: '#more' }, { type: 'wait', selector: '#never', milliseconds: 200 }, { type: 'click', selector: '#more' }],
    });
    expectErrorBody(r, 422, 'ACTION_FAILED');
    expect(r.body.action).toEqual({ index: 1, type: 'wait', error: expect.stringMatching(/no element matched "#never"/) });
    expect(r.body.results).toEqual([{ index: 0, type: 'click', ok: true }, { index: 1, type: 'wait', ok: false, error: r.body.action.error }]);
    expect(await balance(a.key)).toBe(before);
    expect(await ledger(a.id)).toEqual([]);
    // Every action succeeding: answered and charged as without actions_required.
    const ok = await scrape(a.key, { url: `${site.url}/load-more`, render_js: true, actions_required: true, actions: [{ type: 'click', selector: '#more' }] });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.credits_used).toBe(WITH_ACTIONS);
  });

  it('a redirect answered as it is (follow_redirects: false) runs no action: not charged for them; with actions_required, 422', async () => {
    const a = await account();
    const body = { url: `${site.url}/redirect`, render_js: true, follow_redirects: false, actions: [{ type: 'execute_javascript', script: 'return 1' }] };
    const r = await scrape(a.key, body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.status_code).toBe(302);
    expect(r.body.actions).toEqual({ results: [], screenshots: [] });
    expect(r.body.credits_used).toBe(P.base + P.render_js);
    const before = await balance(a.key);
    const req = await scrape(a.key, { ...body, actions_required: true });
    expectErrorBody(req, 422, 'ACTION_FAILED');
    expect(req.body.action).toEqual({ index: 0, type: 'execute_javascript', error: expect.stringMatching(/not run: the answer was a redirect/) });
    expect(await balance(a.key)).toBe(before);
  });

  it('execute_javascript answers its return value', async () => {
    const a = await account();
    const r = await scrape(a.key, {
      url: `${site.url}/title`, render_js: true,
      actions: [
        { type: 'execute_javascript', script: 'return document.title' },
        { type: 'execute_javascript', script: 'return { links: document.links.length, words: document.body.innerText.split(/\\s+/).length }' },
        { type: 'execute_javascript', script: 'document.querySelector("main").insertAdjacentHTML("beforeend", "<p>Added by a script.</p>")' },
      ],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.actions.results).toEqual([
      { index: 0, type: 'execute_javascript', ok: true, value: 'A page with a title' },
      { index: 1, type: 'execute_javascript', ok: true, value: { links: 0, words: 3 } },
      { index: 2, type: 'execute_javascript', ok: true },
    ]);
    expect(r.body.text_content).toContain('Added by a script.');
  });

  it('screenshot actions: URLs that serve PNG images, each charged like screenshot', async () => {
    const a = await account();
    const r = await scrape(a.key, {
      url: `${site.url}/infinite`, render_js: true, screenshot: true,
      actions: [{ type: 'screenshot' }, { type: 'scroll', to: 'bottom', max_steps: 1 }, { type: 'screenshot', full_page: true }],
    });
    expect(r.status, r.text).toBe(200);
    const shots: string[] = r.body.actions.screenshots;
    expect(shots).toHaveLength(2);
    expect(r.body.actions.results[0].value).toBe(shots[0]);
    expect(r.body.actions.results[2].value).toBe(shots[1]);
    expect(new Set([...shots, r.body.screenshot_url]).size).toBe(3);
    for (const url of shots) {
      expect(url).toMatch(new RegExp(`^${s.url}/v1/screenshots/[A-Za-z0-9_-]{32}\\.png$`));
      const img = await fetch(url);
      expect(img.status).toBe(200);
      expect(img.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await img.arrayBuffer()).subarray(1, 4).toString('latin1')).toBe('PNG');
    }
    expect(r.body.credits_used).toBe(WITH_ACTIONS + 2 * P.screenshot + P.screenshot);
    // A screenshot action after a failed one is not taken, and not charged.
    const failed = await scrape(a.key, { url: `${site.url}/title`, render_js: true, actions: [{ type: 'click', selector: '#nothing' }, { type: 'screenshot' }] });
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body.actions).toEqual({ results: [expect.objectContaining({ index: 0, ok: false })], screenshots: [] });
    expect(failed.body.credits_used).toBe(WITH_ACTIONS);
  });

  it('bulk scrape runs the actions on every URL; each URL reports and is charged on its own', async () => {
    const a = await account();
    const before = await balance(a.key);
    const urls = [`${site.url}/cookie-wall`, `${site.url}/load-more`];
    const r = await bulk(a.key, { urls, render_js: true, main_content: true, actions: [{ type: 'click', selector: '#accept' }] });
    expect(r.status, r.text).toBe(200);
    expect(r.body.succeeded).toBe(2);
    const [wall, more] = r.body.results;
    expect(wall.result.main_content).toContain(ARTICLE_TEXT);
    expect(wall.result.actions.results).toEqual([{ index: 0, type: 'click', ok: true }]);
    expect(more.result.actions.results).toEqual([{ index: 0, type: 'click', ok: false, error: expect.stringMatching(/#accept/) }]);
    expect(r.body.credits_used).toBe(2 * WITH_ACTIONS);
    expect(await balance(a.key)).toBe(before - 2 * WITH_ACTIONS);

    // actions_required: the URL whose action failed fails alone, uncharged.
    const req = await bulk(a.key, { urls, render_js: true, actions_required: true, actions: [{ type: 'click', selector: '#accept' }] });
    expect(req.status, req.text).toBe(200);
    expect(req.body.results[0].success).toBe(true);
    expect(req.body.results[1]).toMatchObject({ success: false, error: { code: 'ACTION_FAILED', action: { index: 0, type: 'click' } } });
    expect(req.body.credits_used).toBe(WITH_ACTIONS);

    // A job (async: true): the stored request's actions run on each URL as it is scraped.
    const job = await bulk(a.key, { urls, render_js: true, async: true, actions: [{ type: 'click', selector: '#accept' }] });
    expect(job.status, job.text).toBe(202);
    const done = await until(() => call(job.body.status_url, 'GET', { auth: `Bearer ${a.key}` }), (v) => v.body.status === 'completed', 60_000, 200);
    expect(done.body.results[0].result.text_content).toContain(ARTICLE_TEXT);
    expect(done.body.results.map((x: { result: { actions: { results: { ok: boolean }[] } } }) => x.result.actions.results[0]!.ok)).toEqual([true, false]);
    expect(done.body.credits_used).toBe(2 * WITH_ACTIONS);
  });

  it('refuses hostile actions with 400, every problem named at once, nothing held or charged', async () => {
    const a = await account();
    const before = await balance(a.key);
    const url = `${site.url}/title`;
    const all = await scrape(a.key, {
      url,
      actions: [
        { type: 'hover', selector: 'a' },
        { type: 'click' },
        { type: 'click', selector: 'div[' },
        { type: 'click', selector: '//div[' },
        { type: 'press', key: 'Enterr' },
        { type: 'press', key: 'Enter', text: 'x' },
        { type: 'scroll', direction: 'down', to: 'bottom' },
        { type: 'execute_javascript', script: 'x'.repeat(20_001) },
        { type: 'wait' },
        { type: 'scroll', direction: 'sideways' },
        { type: 'write', selector: '#q' },
        'click',
      ],
    });
    expectErrorBody(all, 400, 'MISSING_PARAMETER');
    const issues = all.body.validation_errors as { field: string; message: string }[];
    const fields = issues.map((i) => i.field);
    for (const f of ['actions', 'actions[0].type', 'actions[1].selector', 'actions[2].selector', 'actions[3].selector', 'actions[4].key', 'actions[5].text',
      'actions[6]', 'actions[7].script', 'actions[8].milliseconds', 'actions[9].direction', 'actions[10].text', 'actions[11]']) {
      expect(fields, f).toContain(f);
    }
    const message = (f: string) => issues.find((i) => i.field === f)?.message;
    expect(message('actions')).toMatch(/render_js/);
    expect(message('actions[0].type')).toMatch(/must be one of: click, write, press, scroll, wait, screenshot, execute_javascript/);
    expect(message('actions[2].selector')).toMatch(/not a valid CSS selector/);
    expect(message('actions[3].selector')).toMatch(/not a valid XPath/);
    // Each field once: a field given and refused is not also called missing.
    expect(new Set(fields).size).toBe(fields.length);

    const cases: [unknown, string][] = [
      [{ url, render_js: true, actions: Array.from({ length: 51 }, () => ({ type: 'wait', milliseconds: 1 })) }, 'actions'],
      [{ url, render_js: true, actions: [] }, 'actions'],
      [{ url, render_js: true, actions: { type: 'click', selector: 'a' } }, 'actions'],
      [{ url, render_js: true, actions: null }, 'actions'],
      [{ url, render_js: true, actions_required: true }, 'actions_required'],
      [{ url, render_js: true, actions_required: 'yes', actions: [{ type: 'wait', milliseconds: 1 }] }, 'actions_required'],
      [{ url, render_js: true, actions: [{ type: 'wait', milliseconds: 60_001 }] }, 'actions[0].milliseconds'],
      [{ url, render_js: true, actions: [{ type: 'wait', milliseconds: 0 }] }, 'actions[0].milliseconds'],
      [{ url, render_js: true, actions: [{ type: 'scroll', to: 'top' }] }, 'actions[0].to'],
      [{ url, render_js: true, actions: [{ type: 'scroll', direction: 'down', max_steps: 3 }] }, 'actions[0].max_steps'],
      [{ url, render_js: true, actions: [{ type: 'scroll', to: 'bottom', max_steps: 101 }] }, 'actions[0].max_steps'],
      [{ url, render_js: true, actions: [{ type: 'click', selector: '' }] }, 'actions[0].selector'],
      [{ url, render_js: true, actions: [{ type: 'click', selector: 'p::before' }] }, 'actions[0].selector'],
      [{ url, render_js: true, actions: [{ type: 'click', selector: 'x'.repeat(1001) }] }, 'actions[0].selector'],
      [{ url, render_js: true, actions: [{ type: 'click', selector: 'a', colour: 'red' }] }, 'actions[0].colour'],
      [{ url, render_js: true, actions: [{ type: 'screenshot', full_page: 'yes' }] }, 'actions[0].full_page'],
      [{ url, render_js: true, actions: [{ type: 'press', key: 'Hyper+A' }] }, 'actions[0].key'],
      [{ url, render_js: true, actions: [{ type: 'press', key: '\u0007' }] }, 'actions[0].key'],
      [{ url, render_js: true, actions: [{ type: 'write', selector: '#q', text: 'x'.repeat(10_001) }] }, 'actions[0].text'],
      [{ url, render_js: true, actions: [{ type: 'execute_javascript', script: '' }] }, 'actions[0].script'],
      [{ url, render_js: true, actions: [{ type: 'execute_javascript', script: 'return (' }] }, 'actions[0].script'],
      [{ url, render_js: true, actions: [{ type: 'execute_javascript', script: 'return 1 })(); (() => {' }] }, 'actions[0].script'],
    ];
    for (const [body, field] of cases) {
      const r = await scrape(a.key, body);
      expectErrorBody(r, 400, 'MISSING_PARAMETER');
      expect((r.body.validation_errors as { field: string }[]).map((v) => v.field), JSON.stringify(body).slice(0, 200)).toContain(field);
    }
    const b = await bulk(a.key, { urls: [url], actions: [{ type: 'click', selector: 'a' }] });
    expectErrorBody(b, 400, 'MISSING_PARAMETER');
    expect(b.body.validation_errors).toEqual([{ field: 'actions', message: expect.stringMatching(/render_js/) }]);
    expect(await balance(a.key)).toBe(before);
    expect(await ledger(a.id)).toEqual([]);
  });
});
