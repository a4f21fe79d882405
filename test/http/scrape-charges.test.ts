/**
 * What is charged is what is delivered (issue 17), through the real server
 * on both HTTP adapters against a loopback site serving HTML, text/plain,
 * JSON, Markdown, PDF, PNG and octet-stream pages: a priced extractor that
 * cannot read a page (the built-in ones read HTML only) answers its empty
 * value and is not charged; the free text fields of a text page are its
 * text; a screenshot the browser did not take is not charged. The same rule
 * for every URL of a bulk scrape (synchronous and asynchronous: per-URL
 * charges, totals, ledger) and for search enrichment (pages with nothing to
 * read, contacts and profiles no page could give). Every case checks
 * credits_used against the account's balance and ledger.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Reply } from '../support/http.js';
import { until } from '../support/processes.js';
import { ADAPTERS, startScourIn, type Running } from '../support/server.js';
import { JSON_BODY, MARKDOWN_BODY, startTypedSite, TEXT_BODY, type TypedSite } from '../support/typed-site.js';

const ADMIN = 'scrape-charges-admin-token-01234';
const EMPTY_META = { title: null, description: null, canonical: null, language: null, charset: null, favicon: null, open_graph: {}, twitter: {}, meta: {} };
/** Every priced extractor, and the free text fields. */
const ALL = {
  extract_links: true, extract_images: true, extract_schema: true, extract_meta: true, extract_contacts: true, extract_social: true,
  main_content: true, markdown: true,
};
/** 3 + links 1 + images 1 + schema 2 + meta 1 + contacts 2 + social 2. */
const ALL_PRICE = 12;
const BASE = 3;

/** Custom extractors: one without a filter (HTML, as the SDK documents), one for text/plain only. */
function writeCustomExtractors(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scour-charges-plugin-'));
  const sdk = join(process.cwd(), 'plugins/sdk/scrape.ts');
  const file = join(dir, 'charges-extractors.ts');
  writeFileSync(file, `
import { defineExtractor } from ${JSON.stringify(sdk)};
export const size = defineExtractor({ name: 'extractor-size', id: 'size', extract: (page) => page.html.length });
export const lines = defineExtractor({
  name: 'extractor-lines', id: 'lines', filter: { contentTypes: ['text/plain'] },
  extract: (page) => page.html.split('\\n').filter((l) => l.trim() !== '').length,
});
export default [size, lines];
`);
  return file;
}

const fence = (text: string, lang = '') => `\`\`\`${lang}\n${text}${text.endsWith('\n') ? '' : '\n'}\`\`\``;

describe.each(ADAPTERS)('a scrape charges only what it delivers (embedded, %s)', (adapter) => {
  let site: TypedSite;
  let s: Running;

  const admin = (method: string, path: string, body?: unknown) => call(`${s.url}/admin/v1${path}`, method, { auth: `Bearer ${ADMIN}`, body });
  const account = async (plan = 'unicorn', credits = 1000): Promise<{ id: string; key: string }> => {
    const r = await admin('POST', '/accounts', { plan, credits });
    expect(r.status, r.text).toBe(201);
    return { id: r.body.account_id, key: r.body.api_key };
  };
  const balance = async (key: string): Promise<number> => {
    const u = await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` });
    expect(u.body.credits_reserved).toBe(0);
    return u.body.credits_remaining as number;
  };
  const ledger = async (id: string): Promise<{ operation: string; credits: number; request_id: string }[]> =>
    (await admin('GET', `/accounts/${id}/ledger`)).body.ledger;
  const scrape = (key: string, body: Record<string, unknown>) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });

  /** One scrape on a fresh account: 200, credits_used as expected, and exactly that much left the balance, in one ledger row. */
  async function charged(body: Record<string, unknown>, credits: number): Promise<Reply> {
    const a = await account();
    const before = await balance(a.key);
    const r = await scrape(a.key, body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.credits_used, `${body.url}: ${JSON.stringify(body)}`).toBe(credits);
    expect(r.body.remaining_credits).toBe(before - credits);
    expect(await balance(a.key)).toBe(before - credits);
    expect(await ledger(a.id)).toEqual([expect.objectContaining({ operation: 'scrape', credits, request_id: r.body.request_id })]);
    return r;
  }

  beforeAll(async () => {
    site = await startTypedSite();
    s = await startScourIn('embedded', adapter, {
      adminToken: ADMIN, allowPrivateTargets: 'loopback', pluginPaths: [writeCustomExtractors()], searchProviders: ['local'], browserPages: 1,
    });
    const put = await admin('POST', '/index/documents', {
      collection: 'shared',
      documents: [
        { url: `${site.url}/html`, title: 'Wombat html page', text: 'wombathtml wombatmixed press contacts' },
        { url: `${site.url}/text`, title: 'Wombat text page', text: 'wombattext wombatmixed notes' },
        { url: `${site.url}/pdf`, title: 'Wombat pdf page', text: 'wombatbinary wombatmixed document' },
        { url: `${site.url}/image.png`, title: 'Wombat image', text: 'wombatbinary picture' },
      ],
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.rejected).toEqual([]);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('text/plain with extract_links, extract_meta, main_content, markdown: 3 credits, links [] and empty meta_data; the text is its main content', async () => {
    const r = await charged({ url: `${site.url}/text`, extract_links: true, extract_meta: true, main_content: true, markdown: true }, BASE);
    expect(r.body.content_type).toBe('text/plain; charset=utf-8');
    expect(r.body.links).toEqual([]);
    expect(r.body.meta_data).toEqual(EMPTY_META);
    expect(r.body.text_content).toBe(TEXT_BODY);
    expect(r.body.main_content).toBe(TEXT_BODY);
    expect(r.body.markdown).toBe(fence(TEXT_BODY));
    expect(r.body).not.toHaveProperty('extractor_errors');
  });

  it('an HTML page delivers every priced extractor and is charged for each', async () => {
    const r = await charged({ url: `${site.url}/html`, ...ALL }, ALL_PRICE);
    expect(r.body.links.map((l: { url: string }) => l.url)).toEqual(expect.arrayContaining([`${site.url}/about`, 'https://x.com/acmerobotics']));
    expect(r.body.images).toEqual([expect.objectContaining({ src: `${site.url}/img/robot.png`, alt: 'A robot' })]);
    expect(r.body.schema_data).toEqual([expect.objectContaining({ format: 'json-ld' })]);
    expect(r.body.meta_data).toMatchObject({ title: 'Acme Robotics press', description: 'Press contacts of Acme Robotics.' });
    expect(r.body.contacts).toEqual(expect.arrayContaining([expect.objectContaining({ email: 'dana.reyes@acme-robotics.com' })]));
    expect(r.body.social_profiles.map((p: { url: string }) => p.url)).toEqual(expect.arrayContaining(['https://x.com/acmerobotics', 'https://github.com/acme-robotics']));
    expect(r.body.main_content).toMatch(/Press contact/);
    expect(r.body.markdown).toMatch(/^# Press contact/m);
  });

  it.each([
    ['/text', TEXT_BODY, TEXT_BODY, fence(TEXT_BODY)],
    ['/json', JSON_BODY, JSON_BODY, fence(JSON_BODY, 'json')],
    ['/markdown', MARKDOWN_BODY, MARKDOWN_BODY, MARKDOWN_BODY],
    ['/pdf', '', '', ''],
    ['/image.png', '', '', ''],
    ['/octet', '', '', ''],
  ])('%s with every priced option: only the base price; each priced field its empty value; the free fields its text', async (path, text, main, markdown) => {
    const r = await charged({ url: `${site.url}${path}`, ...ALL }, BASE);
    expect(r.body).toMatchObject({
      links: [], images: [], schema_data: [], meta_data: EMPTY_META, contacts: [], social_profiles: [],
      text_content: text, main_content: main, markdown,
    });
    expect(r.body).not.toHaveProperty('extractor_errors');
  });

  it('one priced option at a time on text/plain: never charged; on HTML: charged', async () => {
    const prices: [string, number][] = [['extract_links', 1], ['extract_images', 1], ['extract_schema', 2], ['extract_meta', 1], ['extract_contacts', 2], ['extract_social', 2]];
    for (const [field, price] of prices) {
      await charged({ url: `${site.url}/text`, [field]: true }, BASE);
      await charged({ url: `${site.url}/html`, [field]: true }, BASE + price);
    }
  });

  it('custom extractors: one that does not apply to the page answers null (free either way)', async () => {
    const text = await charged({ url: `${site.url}/text`, extractors: ['size', 'lines'] }, BASE);
    expect(text.body.extracted).toEqual({ size: null, lines: 3 });
    const html = await charged({ url: `${site.url}/html`, extractors: ['size', 'lines'], extract_links: true }, BASE + 1);
    expect(html.body.extracted.size).toBeGreaterThan(100);
    expect(html.body.extracted.lines).toBeNull();
  });

  it('bulk scrape: each URL is charged for what it delivered; the total is their sum', async () => {
    const a = await account();
    const before = await balance(a.key);
    const urls = ['/html', '/text', '/pdf', '/image.png', '/json', '/html'].map((p) => `${site.url}${p}`);
    const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${a.key}`, body: { urls, ...ALL } });
    expect(r.status, r.text).toBe(200);
    const per = r.body.results.map((x: { result: { credits_used: number } }) => x.result.credits_used);
    expect(per).toEqual([ALL_PRICE, BASE, BASE, BASE, BASE, ALL_PRICE]);
    const total = 2 * ALL_PRICE + 4 * BASE;
    expect(r.body).toMatchObject({ total: 6, succeeded: 6, failed: 0, credits_used: total, remaining_credits: before - total });
    expect(r.body.results[1].result).toMatchObject({ links: [], meta_data: EMPTY_META, main_content: TEXT_BODY });
    expect(await balance(a.key)).toBe(before - total);
    expect(await ledger(a.id)).toEqual([expect.objectContaining({ operation: 'scrape_bulk', credits: total })]);
  });

  it('bulk scrape with callback_url: each URL charged as it finishes, for what it delivered; the job view adds them up', async () => {
    const a = await account();
    const before = await balance(a.key);
    const urls = ['/html', '/text', '/pdf', '/json'].map((p) => `${site.url}${p}`);
    const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${a.key}`, body: { urls, ...ALL, callback_url: `${site.url}/hook` } });
    expect(r.status, r.text).toBe(202);
    const done = await until(() => call(r.body.status_url, 'GET', { auth: `Bearer ${a.key}` }), (v) => v.body.status === 'completed', 20_000);
    const total = ALL_PRICE + 3 * BASE;
    expect(done.body.credits_used).toBe(total);
    expect(done.body.results.map((x: { result: { credits_used: number } }) => x.result.credits_used)).toEqual([ALL_PRICE, BASE, BASE, BASE]);
    expect(await balance(a.key)).toBe(before - total);
    const rows = await ledger(a.id);
    expect(rows.map((x) => [x.request_id, x.credits]).sort()).toEqual(
      [[`${r.body.job_id}:0`, ALL_PRICE], [`${r.body.job_id}:1`, BASE], [`${r.body.job_id}:2`, BASE], [`${r.body.job_id}:3`, BASE]].sort(),
    );
  });

  describe('search enrichment', () => {
    const search = async (plan: string, body: Record<string, unknown>, credits: number): Promise<Reply> => {
      const a = await account(plan);
      const before = await balance(a.key);
      const r = await call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${a.key}`, body });
      expect(r.status, r.text).toBe(200);
      expect(r.body.credits_used, JSON.stringify(r.body.scraped_content)).toBe(credits);
      expect(r.body.remaining_credits).toBe(before - credits);
      expect(await balance(a.key)).toBe(before - credits);
      expect(await ledger(a.id)).toEqual([expect.objectContaining({ operation: 'search', credits })]);
      return r;
    };

    it('a text page is read (3 credits) but gives no contacts or profiles: those are not charged', async () => {
      const r = await search('builder', { query: 'wombattext', auto_scrape_top: 1, include_contacts: true, include_social: true }, 1 + 3);
      expect(r.body.scraped_count).toBe(1);
      expect(r.body.scraped_content).toEqual([expect.objectContaining({ url: `${site.url}/text`, text: TEXT_BODY, content: fence(TEXT_BODY), error: null, contacts: [], social: [] })]);
      expect(r.body.contacts).toEqual([]);
      expect(r.body.social_profiles).toEqual([]);
    });

    it('pages with nothing to read (PDF, image) are reported and cost nothing', async () => {
      const r = await search('unicorn', { query: 'wombatbinary', auto_scrape_top: 2 }, 1);
      expect(r.body.scraped_count).toBe(0);
      const items = r.body.scraped_content as { url: string; text: unknown; content: unknown; error: { code: string; message: string } }[];
      expect(items.map((x) => x.url).sort()).toEqual([`${site.url}/image.png`, `${site.url}/pdf`]);
      for (const x of items) {
        expect(x).toMatchObject({ text: null, content: null, error: { code: 'UNSUPPORTED_CONTENT_TYPE' } });
        expect(x.error.message).toMatch(/application\/pdf|image\/png/);
      }
    });

    it('an HTML page gives contacts and profiles: all charged; mixed with text and PDF, only what was read', async () => {
      await search('builder', { query: 'wombathtml', auto_scrape_top: 1, include_contacts: true, include_social: true }, 1 + 3 + 5 + 5);
      const r = await search('builder', { query: 'wombatmixed', auto_scrape_top: 3, include_contacts: true }, 1 + 3 * 2 + 5);
      expect(r.body.scraped_count).toBe(2);
      expect(r.body.contacts).toEqual(expect.arrayContaining([expect.objectContaining({ email: 'dana.reyes@acme-robotics.com', source_url: `${site.url}/html` })]));
    });
  });

  // One adapter is enough for the browser path; without Chromium this fails (never skips), as the suite must.
  if (adapter === 'uws') it('render_js: a text page renders (charged with its screenshot) but gives no links; a redirect answered as is takes no screenshot and is not charged for one', async () => {
    const text = await charged({ url: `${site.url}/text`, render_js: true, screenshot: true, extract_links: true, main_content: true }, BASE + 5 + 3);
    expect(text.body.links).toEqual([]);
    expect(typeof text.body.screenshot_url).toBe('string');
    expect(text.body.text_content.trim()).toBe(TEXT_BODY.trim());
    expect(text.body.main_content.trim()).toBe(TEXT_BODY.trim());
    const shot = await fetch(text.body.screenshot_url);
    expect(shot.status).toBe(200);
    await shot.arrayBuffer();

    const redirect = await charged({ url: `${site.url}/redirect`, render_js: true, screenshot: true, follow_redirects: false }, BASE + 5);
    expect(redirect.body.status_code).toBe(302);
    expect(redirect.body).not.toHaveProperty('screenshot_url');
  }, 60_000);
});
