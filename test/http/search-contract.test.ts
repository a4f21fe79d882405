/**
 * POST /v1/search over the real server, on SQLite and on PostgreSQL + Redis:
 * every field of spec 2.2, every 400 of 7.3 with its field, the operators
 * and each filter alone and combined over a fixture collection, collection
 * isolation between accounts, ranking sanity, credits (1 or 2, 402, nothing
 * charged on failure), plan gating (403 before any charge), rate-limit
 * headers, the admin index endpoints, scrapes indexed into their account's
 * collection, and providers failing, timing out and merging (a loopback
 * SearXNG that speaks its JSON format).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody, type Reply } from '../support/http.js';
import { CONFIGS, startScourIn, type Running } from '../support/server.js';
import { startSearxng, type FakeSearxng } from '../support/searxng.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'search-contract-admin-token-0123';
const DAY = 86_400_000;
const NOW = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

/** The shared collection: dates, languages, countries, types, an explicit and an undated document. */
const SHARED = [
  { url: 'https://news.example.com/solar-record', title: 'Solar panel efficiency hits a record', text: 'Engineers report that a new solar panel design converts more sunlight into electricity than any before it. The photovoltaic cell stack uses perovskite layers.', published_date: iso(NOW - 2 * DAY), language: 'en', country: 'US', type: 'news', safe: true, site_name: 'Example News', author: 'A. Writer' },
  { url: 'https://blog.example.org/home-energy', title: 'Home energy tips', text: 'Insulation first, then heating. Many readers asked about the solar panel on our roof: it paid for itself in nine years.', published_date: iso(NOW - 700 * DAY), language: 'en', country: 'GB', type: 'article', safe: true },
  { url: 'https://de.example.net/solarzellen', title: 'Solarzellen erreichen neuen Wirkungsgrad', text: 'Forscher berichten über Solarzellen mit einem Wirkungsgrad, der alle bisherigen Werte übertrifft. Solar ist die Zukunft.', published_date: iso(NOW - 3 * 3_600_000), language: 'de', country: 'DE', type: 'news', safe: true },
  { url: 'https://adult.example.com/solar', title: 'Solar explicit gallery', text: 'Explicit content about solar panel installers.', published_date: iso(NOW - 1 * DAY), language: 'en', country: 'US', type: 'page', safe: false },
  { url: 'https://research.example.edu/pv-degradation', title: 'Photovoltaic cell degradation study', text: 'We measure how a photovoltaic cell loses efficiency over twenty years of outdoor exposure in solar farms.', language: 'en', type: 'academic' },
  { url: 'https://physics.example.com/entanglement', title: 'Quantum entanglement explained', text: 'Two particles share one state, so measuring one tells you about the other. This is the core of the phenomenon physicists study.', published_date: iso(NOW - 30 * DAY), language: 'en', type: 'article', safe: true },
  { url: 'https://physics.example.com/roundup', title: 'Physics roundup for the week', text: 'This week: new telescope images, a record magnet, and a short note on quantum entanglement experiments in orbit.', published_date: iso(NOW - 6 * DAY), language: 'en', type: 'news', safe: true },
  { url: 'https://notes.example.com/phrase', title: 'Field notes', text: 'We bolted the wind turbine to the mast and checked the wiring twice before the storm arrived in the valley that night.', language: 'en', safe: true },
  { url: 'https://notes.example.com/scattered', title: 'Field notes', text: 'The wind was calm and we checked the wiring twice before the turbine storm arrived in the valley that night again.', language: 'en', safe: true },
  { url: 'https://ru.example.ru/climate', title: 'Изменение климата и энергетика', text: 'Солнечная энергия становится дешевле каждый год, и солнечные панели устанавливают повсюду.', language: 'ru', country: 'RU', type: 'article', published_date: iso(NOW - 10 * DAY) },
  { url: 'https://zh.example.cn/solar', title: '太阳能电池效率创纪录', text: '研究人员报告太阳能电池的效率达到新的纪录。', language: 'zh', country: 'CN', type: 'news', published_date: iso(NOW - 4 * DAY) },
];

interface Acct { id: string; key: string }

async function account(base: string, plan = 'unicorn', credits = 1000): Promise<Acct> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
  expect(r.status, r.text).toBe(201);
  return { id: r.body.account_id, key: r.body.api_key };
}
const admin = (base: string, method: string, path: string, body?: unknown) => call(`${base}${path}`, method, { auth: `Bearer ${ADMIN}`, body });
const search = (base: string, key: string, body: unknown) => call(`${base}/v1/search`, 'POST', { auth: `Bearer ${key}`, body });
const links = (r: Reply): string[] => r.body.search_results.map((x: { link: string }) => x.link);
async function remaining(base: string, key: string): Promise<number> {
  return (await call(`${base}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_remaining;
}
function expect400(r: Reply, field: string, message?: RegExp) {
  expectErrorBody(r, 400, 'MISSING_PARAMETER');
  const issue = (r.body.validation_errors as { field: string; message: string }[]).find((v) => v.field === field);
  expect(issue, `${field} in ${r.text}`).toBeDefined();
  if (message) expect(issue!.message).toMatch(message);
}

describe.each(CONFIGS)('POST /v1/search (%s)', (config) => {
  let s: Running;
  let base: string;
  let a: Acct;
  let b: Acct;

  beforeAll(async () => {
    s = await startScourIn(config, 'uws', { adminToken: ADMIN, searchProviders: ['local'] });
    base = s.url;
    a = await account(base);
    b = await account(base);
    const put = await admin(base, 'POST', '/admin/v1/index/documents', { collection: 'shared', documents: SHARED });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ collection: 'shared', indexed: SHARED.length, updated: 0, rejected: [] });
    const own = await admin(base, 'POST', '/admin/v1/index/documents', {
      collection: a.id,
      documents: [{ url: 'https://private.example.com/zebrafish', title: 'Zebrafish lab notes', text: 'Our zebrafish colony grew; the solar heater kept the tanks warm.', language: 'en' }],
    });
    expect(own.body).toMatchObject({ indexed: 1, rejected: [] });
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('answers spec 2.2 exactly: every field, typed, results numbered from 1', async () => {
    const r = await search(base, a.key, { query: 'solar panel' });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['credits_used', 'query', 'remaining_credits', 'request_id', 'results_count', 'scraped_count', 'search_results', 'search_time', 'total_results'].sort());
    expect(r.body.query).toBe('solar panel');
    expect(r.body.results_count).toBe(r.body.search_results.length);
    expect(r.body.total_results).toBeGreaterThanOrEqual(r.body.results_count);
    expect(r.body.scraped_count).toBe(0);
    expect(typeof r.body.search_time).toBe('number');
    expect(r.body.credits_used).toBe(1);
    expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
    r.body.search_results.forEach((x: any, n: number) => {
      expect(x.position).toBe(n + 1);
      expect(Object.keys(x).sort()).toEqual(['date', 'domain', 'highlights', 'language', 'link', 'position', 'published_date', 'score', 'snippet', 'source', 'title', 'type'].sort());
      expect(x.source).toEqual(['local']);
      expect(x.snippet.length).toBeLessThanOrEqual(320);
      for (const [s0, e0] of x.highlights) expect(x.snippet.slice(s0, e0).length).toBeGreaterThan(0);
      if (x.published_date !== null) {
        expect(x.published_date).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        expect(x.date).toBe(x.published_date.slice(0, 10));
      }
    });
    const top = r.body.search_results.find((x: any) => x.link === 'https://news.example.com/solar-record');
    expect(top).toMatchObject({ domain: 'news.example.com', type: 'news', language: 'en' });
    expect(top.highlights.length).toBeGreaterThan(0);
    expect(top.highlights.map(([x, y]: number[]) => top.snippet.slice(x, y).toLowerCase())).toContain('solar');
    expect(r.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(r.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(r.headers.get('x-ratelimit-reset')).not.toBeNull();
    expect(r.headers.get('x-ratelimit-window')).not.toBeNull();
  });

  it('an empty result is 200 with search_results: [] and still costs the plain price', async () => {
    const before = await remaining(base, a.key);
    const r = await search(base, a.key, { query: 'xylophonist quokka' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ search_results: [], results_count: 0, total_results: 0, credits_used: 1 });
    expect(await remaining(base, a.key)).toBe(before - 1);
  });

  describe('operators', () => {
    it('"exact phrase" requires the words together', async () => {
      const r = await search(base, a.key, { query: '"wind turbine"', max_results: 50 });
      expect(links(r)).toEqual(['https://notes.example.com/phrase']);
    });
    it('-word and -"phrase" exclude', async () => {
      expect(links(await search(base, a.key, { query: 'solar -perovskite', max_results: 50 }))).not.toContain('https://news.example.com/solar-record');
      const r = await search(base, a.key, { query: 'solar -"paid for itself"', max_results: 50 });
      expect(links(r)).not.toContain('https://blog.example.org/home-energy');
      expect(links(r)).toContain('https://news.example.com/solar-record');
    });
    it('site: keeps a domain and its subdomains, -site: drops them', async () => {
      const r = await search(base, a.key, { query: 'quantum site:example.com', max_results: 50 });
      expect(links(r).length).toBeGreaterThan(0);
      for (const l of links(r)) expect(new URL(l).hostname.endsWith('example.com')).toBe(true);
      const x = await search(base, a.key, { query: 'solar -site:news.example.com', max_results: 50 });
      expect(links(x)).not.toContain('https://news.example.com/solar-record');
      expect(links(x).length).toBeGreaterThan(0);
    });
    it('OR between phrases: either one', async () => {
      const r = await search(base, a.key, { query: '"wind turbine" OR "quantum entanglement"', max_results: 50 });
      expect(links(r).sort()).toEqual(['https://notes.example.com/phrase', 'https://physics.example.com/entanglement', 'https://physics.example.com/roundup'].sort());
    });
    it('intitle: requires the word in the title', async () => {
      const r = await search(base, a.key, { query: 'intitle:photovoltaic cell', max_results: 50 });
      expect(links(r)).toEqual(['https://research.example.edu/pv-degradation']);
    });
  });

  describe('filters, each alone and combined', () => {
    it('country', async () => {
      const r = await search(base, a.key, { query: 'solar', country: 'GB', max_results: 50 });
      expect(links(r)).toEqual(['https://blog.example.org/home-energy']);
    });
    it('language', async () => {
      expect(links(await search(base, a.key, { query: 'solarzellen', language: 'de' }))).toEqual(['https://de.example.net/solarzellen']);
      expect(links(await search(base, a.key, { query: 'solarzellen', language: 'en' }))).toEqual([]);
      expect(links(await search(base, a.key, { query: 'солнечные панели', language: 'ru' }))).toEqual(['https://ru.example.ru/climate']);
      expect(links(await search(base, a.key, { query: '太阳能电池', language: 'zh' }))).toEqual(['https://zh.example.cn/solar']);
    });
    it('time_range (documents without a date are left out), with its other spellings', async () => {
      const day = await search(base, a.key, { query: 'solar OR solarzellen', time_range: 'day', max_results: 50 });
      expect(links(day)).toEqual(['https://de.example.net/solarzellen']);
      for (const spelling of ['24h', 'past_day']) {
        expect(links(await search(base, a.key, { query: 'solar OR solarzellen', time_range: spelling, max_results: 50 }))).toEqual(links(day));
      }
      const week = await search(base, a.key, { query: 'solar panel', time_range: 'week', safe_search: 'off', max_results: 50 });
      expect(links(week).sort()).toEqual(['https://adult.example.com/solar', 'https://de.example.net/solarzellen', 'https://news.example.com/solar-record'].sort());
      const year = await search(base, a.key, { query: 'photovoltaic', time_range: 'year', max_results: 50 });
      expect(links(year)).toEqual(['https://news.example.com/solar-record']);
    });
    it('safe_search: moderate (default) drops explicit, off keeps it, strict keeps only documents known to be safe', async () => {
      expect(links(await search(base, a.key, { query: 'explicit solar', max_results: 50 }))).not.toContain('https://adult.example.com/solar');
      expect(links(await search(base, a.key, { query: 'explicit solar', safe_search: 'off', max_results: 50 }))).toContain('https://adult.example.com/solar');
      const strict = links(await search(base, a.key, { query: 'photovoltaic', safe_search: 'strict', max_results: 50 }));
      expect(strict).toEqual(['https://news.example.com/solar-record']);
    });
    it('result_type news: news and articles with a date, newest first among equals', async () => {
      const r = await search(base, a.key, { query: 'quantum entanglement', result_type: 'news', max_results: 50 });
      expect(links(r).sort()).toEqual(['https://physics.example.com/entanglement', 'https://physics.example.com/roundup'].sort());
      for (const x of r.body.search_results) expect(['news', 'article']).toContain(x.type);
    });
    it('combined: language + country + time_range + result_type + site:', async () => {
      const r = await search(base, a.key, { query: 'solar site:example.com', language: 'en', country: 'US', time_range: 'month', result_type: 'news', max_results: 50 });
      expect(links(r)).toEqual(['https://news.example.com/solar-record']);
    });
    it('max_results is met when enough documents match, and total_results counts them all', async () => {
      const r = await search(base, a.key, { query: 'solar OR photovoltaic OR quantum OR wind OR energy', safe_search: 'off', max_results: 2 });
      expect(r.body.results_count).toBe(2);
      expect(r.body.total_results).toBeGreaterThan(2);
    });
  });

  it('ranking: a title match above a body match, words together above scattered', async () => {
    expect(links(await search(base, a.key, { query: 'quantum entanglement' }))[0]).toBe('https://physics.example.com/entanglement');
    const r = links(await search(base, a.key, { query: 'wind turbine' }));
    expect(r.indexOf('https://notes.example.com/phrase')).toBeLessThan(r.indexOf('https://notes.example.com/scattered'));
  });

  it("collections: an account sees the shared one and its own, never another account's", async () => {
    expect(links(await search(base, a.key, { query: 'zebrafish' }))).toEqual(['https://private.example.com/zebrafish']);
    expect(links(await search(base, b.key, { query: 'zebrafish' }))).toEqual([]);
    expect(links(await search(base, b.key, { query: 'solar heater tanks', max_results: 50 }))).not.toContain('https://private.example.com/zebrafish');
  });

  describe('400 with validation_errors on the field', () => {
    it.each([
      [{}, 'query', /required/],
      [{ query: '' }, 'query', undefined],
      [{ query: '   ' }, 'query', /empty/],
      [{ query: 'x'.repeat(501) }, 'query', /500/],
      [{ query: '!!! ???' }, 'query', /no word/],
      [{ query: 42 }, 'query', /string/],
      [{ query: 'a', max_results: 0 }, 'max_results', undefined],
      [{ query: 'a', max_results: 51 }, 'max_results', undefined],
      [{ query: 'a', max_results: 2.5 }, 'max_results', /integer/],
      [{ query: 'a', max_results: '10' }, 'max_results', /integer/],
      [{ query: 'a', auto_scrape_top: 11 }, 'auto_scrape_top', undefined],
      [{ query: 'a', auto_scrape_top: -1 }, 'auto_scrape_top', undefined],
      [{ query: 'a', country: 'USA' }, 'country', /alpha-2/],
      [{ query: 'a', country: 'us' }, 'country', /upper case/],
      [{ query: 'a', country: 'UK' }, 'country', /GB/],
      [{ query: 'a', language: 'english' }, 'language', /ISO 639-1/],
      [{ query: 'a', language: 'en-US' }, 'language', /region/],
      [{ query: 'a', language: 'EN' }, 'language', /lower case/],
      [{ query: 'a', time_range: 'fortnight' }, 'time_range', /one of/],
      [{ query: 'a', safe_search: 'medium' }, 'safe_search', /one of/],
      [{ query: 'a', result_type: 'images' }, 'result_type', /one of/],
      [{ query: 'a', include_contacts: 'yes' }, 'include_contacts', /boolean/],
      [{ query: 'a', surprise: true }, 'surprise', /not a recognised field/],
    ])('%j', async (body, field, message) => {
      const before = await remaining(base, a.key);
      expect400(await search(base, a.key, body), field, message);
      expect(await remaining(base, a.key)).toBe(before);
    });

    it('malformed JSON and a non-object body', async () => {
      expectErrorBody(await search(base, a.key, '{"query": "a"'), 400, 'MISSING_PARAMETER');
      expectErrorBody(await search(base, a.key, '["query"]'), 400, 'MISSING_PARAMETER');
    });

  });

  it('hostile queries: FTS5 and tsquery syntax, SQL and Unicode are words (200), never a 400 or a 500', async () => {
    const hostile = [
      'NEAR(solar panel, 2)', 'solar*', 'title:solar', 'solar ^ panel', 'solar:* & !panel', 'solar AND NOT panel', '{title text}: solar',
      'solar | panel', "'; DROP TABLE documents; --", "solar' OR '1'='1", '\\"solar\\"', 'solar <-> panel', '(solar OR panel) AND wind',
      'sol\u200bar', '\u202esolar', 'solar\u0301\u0301\u0301', '🔥 solar 🔥', 'a'.repeat(500), 'ß'.repeat(250), '\ud83d solar', 'NULL', 'solar\u0000panel',
    ];
    for (const q of hostile) {
      const r = await search(base, a.key, { query: q });
      expect(r.status, `${JSON.stringify(q)}: ${r.text}`).toBe(200);
    }
  });

  describe('credits and plans', () => {
    it('1 credit up to 10 results, 2 above; one ledger row each', async () => {
      const c = await account(base, 'unicorn', 10);
      expect((await search(base, c.key, { query: 'solar', max_results: 10 })).body.credits_used).toBe(1);
      const big = await search(base, c.key, { query: 'solar', max_results: 11 });
      expect(big.body).toMatchObject({ credits_used: 2, remaining_credits: 7 });
      const ledger = (await admin(base, 'GET', `/admin/v1/accounts/${c.id}/ledger`)).body.ledger;
      expect(ledger.map((l: { credits: number }) => l.credits)).toEqual([2, 1]);
    });

    it('402 NO_CREDITS when the account cannot pay, and nothing is charged', async () => {
      const c = await account(base, 'unicorn', 1);
      const r = await search(base, c.key, { query: 'solar', max_results: 20 });
      expectErrorBody(r, 402, 'NO_CREDITS');
      expect(r.body.credits_remaining).toBe(1);
      expect(await remaining(base, c.key)).toBe(1);
    });

    it('credits running out mid-race: of 20 concurrent searches on 5 credits exactly 5 are answered and charged, the others 402', async () => {
      const c = await account(base, 'unicorn', 5);
      const results = await Promise.all(Array.from({ length: 20 }, () => search(base, c.key, { query: 'solar' })));
      const ok = results.filter((r) => r.status === 200);
      expect(ok).toHaveLength(5);
      for (const r of ok) expect(r.body).toMatchObject({ credits_used: 1 });
      expect(ok.map((r) => r.body.remaining_credits).sort()).toEqual([0, 1, 2, 3, 4]);
      for (const r of results.filter((x) => x.status !== 200)) {
        expectErrorBody(r, 402, 'NO_CREDITS');
        expect(r.body).toMatchObject({ credits_required: 1, credits_remaining: 0 });
        expect(r.body.search_results).toBeUndefined();
      }
      expect(await remaining(base, c.key)).toBe(0);
      const ledger = (await admin(base, 'GET', `/admin/v1/accounts/${c.id}/ledger`)).body.ledger as { request_id: string; credits: number }[];
      expect(ledger.map((l) => l.credits)).toEqual([1, 1, 1, 1, 1]);
      expect(new Set(ledger.map((l) => l.request_id))).toEqual(new Set(ok.map((r) => r.body.request_id)));
    });

    it('include_contacts below Starter and include_social below Builder: 403 FORBIDDEN with upgrade_url, nothing charged', async () => {
      const free = await account(base, 'free', 100);
      const r = await search(base, free.key, { query: 'solar', include_contacts: true });
      expectErrorBody(r, 403, 'FORBIDDEN');
      expect(r.body.upgrade_url).toMatch(/^\//);
      expect(r.body.error).toMatch(/include_contacts/);
      expect(await remaining(base, free.key)).toBe(100);
      const starter = await account(base, 'starter', 100);
      const social = await search(base, starter.key, { query: 'solar', include_social: true });
      expectErrorBody(social, 403, 'FORBIDDEN');
      expect(social.body.error).toMatch(/include_social/);
      expect(await remaining(base, starter.key)).toBe(100);
    });

    it('Free: 1 search a minute; the second is 429 with retry_after and the headers', async () => {
      const free = await account(base, 'free', 100);
      const first = await search(base, free.key, { query: 'solar' });
      expect(first.status).toBe(200);
      expect(first.headers.get('x-ratelimit-limit')).toBe('1');
      const second = await search(base, free.key, { query: 'solar' });
      expectErrorBody(second, 429, 'RATE_LIMITED');
      expect(second.body.retry_after).toBeGreaterThan(0);
      expect(await remaining(base, free.key)).toBe(99);
    });

    it('401 without a key', async () => {
      expectErrorBody(await call(`${base}/v1/search`, 'POST', { body: { query: 'solar' } }), 401, 'UNAUTHORIZED');
    });
  });

  describe('admin index endpoints', () => {
    it('reports bad documents by index and field, keeps the good ones, and upserts by URL', async () => {
      const r = await admin(base, 'POST', '/admin/v1/index/documents', {
        collection: b.id,
        documents: [
          { url: 'https://b.example.com/1', title: 'Okapi field guide', text: 'The okapi lives in the Ituri forest.' },
          { url: 'ftp://b.example.com/2', title: 'x', text: 'y' },
          { url: 'https://b.example.com/3', title: 'Bad date', text: 'words', published_date: 'yesterday', language: 'english', type: 'blog', safe: 'no' },
          { title: 'No URL', text: 'words' },
          'not an object',
          { url: 'https://b.example.com/4', title: '', text: '' },
          { url: 'https://b.example.com/5', title: 't', text: 'w', colour: 'red' },
        ],
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.indexed).toBe(1);
      const rejected = r.body.rejected as { index: number; field: string }[];
      expect(rejected.map((x) => `${x.index}:${x.field}`)).toEqual(expect.arrayContaining([
        '1:url', '2:published_date', '2:language', '2:type', '2:safe', '3:url', '4:document', '5:text', '6:colour',
      ]));
      const again = await admin(base, 'POST', '/admin/v1/index/documents', { collection: b.id, documents: [{ url: 'https://b.example.com/1', title: 'Okapi field guide, second edition', text: 'The okapi lives in the Ituri rainforest.' }] });
      expect(again.body).toMatchObject({ indexed: 0, updated: 1 });
      const found = await search(base, b.key, { query: 'okapi' });
      expect(found.body.search_results.map((x: any) => x.title)).toEqual(['Okapi field guide, second edition']);
      expect(links(await search(base, a.key, { query: 'okapi' }))).toEqual([]);
    });

    it('refuses an unknown collection, an empty or oversized batch, and callers without the token', async () => {
      expect400(await admin(base, 'POST', '/admin/v1/index/documents', { collection: 'acct_nope', documents: [{ url: 'https://x.com', title: 't' }] }), 'collection', /no account/);
      expect400(await admin(base, 'POST', '/admin/v1/index/documents', { collection: 'shared', documents: [] }), 'documents');
      expect400(await admin(base, 'POST', '/admin/v1/index/documents', { collection: 'a b', documents: [{ url: 'https://x.com', title: 't' }] }), 'collection');
      const many = Array.from({ length: 1001 }, (_, n) => ({ url: `https://x.com/${n}`, title: 't' }));
      expect400(await admin(base, 'POST', '/admin/v1/index/documents', { collection: 'shared', documents: many }), 'documents');
      expectErrorBody(await call(`${base}/admin/v1/index/stats`, 'GET', { auth: `Bearer ${a.key}` }), 401, 'AUTHENTICATION_FAILED');
    });

    it('removes by URL and shows stats per collection', async () => {
      await admin(base, 'POST', '/admin/v1/index/documents', { collection: 'shared', documents: [{ url: 'https://tmp.example.com/gone', title: 'Narwhal tusk facts', text: 'Narwhals.' }] });
      expect(links(await search(base, a.key, { query: 'narwhal' }))).toEqual(['https://tmp.example.com/gone']);
      const del = await admin(base, 'DELETE', '/admin/v1/index/documents', { collection: 'shared', urls: ['https://tmp.example.com/gone', 'https://tmp.example.com/never'] });
      expect(del.body).toMatchObject({ collection: 'shared', removed: 1 });
      expect(links(await search(base, a.key, { query: 'narwhal' }))).toEqual([]);
      const stats = await admin(base, 'GET', '/admin/v1/index/stats');
      expect(stats.status).toBe(200);
      const shared = stats.body.collections.find((c: any) => c.collection === 'shared');
      expect(shared.documents).toBe(SHARED.length);
      expect(shared.last_updated).toMatch(/^\d{4}-/);
      expect(stats.body.collections.find((c: any) => c.collection === a.id).documents).toBe(1);
      expect(stats.body.documents).toBeGreaterThanOrEqual(SHARED.length + 1);
    });
  });
});

describe('providers: failures, timeouts, merging (local + a loopback SearXNG)', () => {
  let sx: FakeSearxng;
  let s: Running;
  let only: Running;
  let a: Acct;
  let o: Acct;

  beforeAll(async () => {
    sx = await startSearxng({
      results: [
        { url: 'https://news.example.com/solar-record?utm_source=searx', title: 'Solar panel efficiency hits a record', content: 'A new solar panel design.', publishedDate: new Date(NOW - 2 * DAY) },
        { url: 'https://web.example.org/solar-faq', title: 'Solar FAQ', content: 'Everything about solar power.' },
      ],
    });
    s = await startScourIn('embedded', 'node', { adminToken: ADMIN, searxngUrl: sx.url, searchProviderTimeoutMs: 1000 });
    only = await startScourIn('embedded', 'node', { adminToken: ADMIN, searxngUrl: sx.url, searchProviders: ['searxng'], searchProviderTimeoutMs: 1000 });
    a = await account(s.url);
    o = await account(only.url);
    await admin(s.url, 'POST', '/admin/v1/index/documents', { collection: 'shared', documents: SHARED.slice(0, 2) });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await only?.stop();
    await sx?.close();
  });

  it('by default (SEARXNG_URL set) asks both, merges a page both found, and names both as its source', async () => {
    sx.reset();
    const r = await search(s.url, a.key, { query: 'solar panel' });
    expect(r.status, r.text).toBe(200);
    const merged = r.body.search_results.find((x: any) => x.link.startsWith('https://news.example.com/solar-record'));
    expect(merged.source).toEqual(['local', 'searxng']);
    expect(merged.position).toBe(1);
    expect(r.body.search_results.find((x: any) => x.link === 'https://web.example.org/solar-faq').source).toEqual(['searxng']);
    expect(links(r).filter((l) => l.includes('solar-record'))).toHaveLength(1);
    expect(sx.searches().length).toBeGreaterThan(0);
    expect(r.body.warnings).toBeUndefined();
  });

  it('a failing provider is a warning; the others answer', async () => {
    sx.setMode('error');
    const r = await search(s.url, a.key, { query: 'solar panel' });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual([expect.objectContaining({ provider: 'searxng', code: 'PROVIDER_FAILED' })]);
    expect(r.body.search_results.every((x: any) => x.source.includes('local'))).toBe(true);
    sx.setMode('json-disabled');
    const m = await search(s.url, a.key, { query: 'solar panel' });
    expect(m.body.warnings[0]).toMatchObject({ provider: 'searxng', code: 'PROVIDER_MISCONFIGURED' });
    expect(m.body.warnings[0].message).toMatch(/json/i);
  });

  it('a provider that takes longer than SCOUR_SEARCH_PROVIDER_TIMEOUT is left behind with PROVIDER_TIMEOUT', async () => {
    sx.setMode('hang');
    const started = Date.now();
    const r = await search(s.url, a.key, { query: 'solar panel' });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual([expect.objectContaining({ provider: 'searxng', code: 'PROVIDER_TIMEOUT' })]);
    expect(r.body.results_count).toBeGreaterThan(0);
  });

  it('when every provider fails: 502 SEARCH_UNAVAILABLE with the warnings, nothing charged', async () => {
    sx.setMode('error');
    const before = await remaining(only.url, o.key);
    const r = await search(only.url, o.key, { query: 'solar' });
    expectErrorBody(r, 502, 'SEARCH_UNAVAILABLE');
    expect(r.body.warnings[0]).toMatchObject({ provider: 'searxng', code: 'PROVIDER_FAILED' });
    expect(await remaining(only.url, o.key)).toBe(before);
  });

  it('an empty answer with unresponsive engines is 200 [] that says why', async () => {
    sx.setMode('unresponsive');
    const r = await search(only.url, o.key, { query: 'solar' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.search_results).toEqual([]);
    expect(r.body.warnings[0]).toMatchObject({ provider: 'searxng', code: 'ENGINES_UNRESPONSIVE' });
    expect(r.body.warnings[0].message).toMatch(/google|bing/);
  });

  it('filters SearXNG cannot apply are applied to its results (site:, -site:)', async () => {
    sx.setMode('ok');
    const r = await search(only.url, o.key, { query: 'solar site:web.example.org' });
    expect(links(r)).toEqual(['https://web.example.org/solar-faq']);
  });
});

describe('enrichment: auto_scrape_top, include_contacts, include_social', () => {
  let site: TargetSite;
  let s: Running;
  let base: string;

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local'] });
    base = s.url;
    const put = await admin(base, 'POST', '/admin/v1/index/documents', {
      collection: 'shared',
      documents: [
        { url: `${site.url}/contacts`, title: 'Acme robotics: contact the press team', text: 'Contact Acme robotics sales, support and press.' },
        { url: `${site.url}/html/simple`, title: 'Robotics simple page', text: 'A simple page about robotics.' },
        { url: `${site.url}/blocked`, title: 'Robotics blocked page', text: 'This robotics page refuses scrapers.' },
        // A private address the guard refuses: it must be reported, never fetched.
        { url: 'http://10.0.0.1/robotics', title: 'Robotics on a private network', text: 'Robotics behind a firewall.' },
      ],
    });
    expect(put.body.rejected).toEqual([]);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('auto_scrape_top scrapes the top results in order; failures are reported per item and cost nothing', async () => {
    const a = await account(base, 'unicorn', 100);
    const r = await search(base, a.key, { query: 'robotics', auto_scrape_top: 4 });
    expect(r.status, r.text).toBe(200);
    const items = r.body.scraped_content as { url: string; title: string; text: string | null; content: string | null; error: { code: string; message: string } | null }[];
    expect(items.map((x) => x.url)).toEqual(links(r).slice(0, 4));
    const by = new Map(items.map((x) => [x.url, x]));
    expect(by.get(`${site.url}/contacts`)).toMatchObject({ error: null });
    expect(by.get(`${site.url}/contacts`)!.text).toMatch(/Contact us/);
    expect(by.get(`${site.url}/contacts`)!.content).toMatch(/^# Contact us/m);
    expect(by.get(`${site.url}/html/simple`)!.error).toBeNull();
    expect(by.get(`${site.url}/blocked`)!.error).toMatchObject({ code: 'TARGET_BLOCKED' });
    expect(by.get('http://10.0.0.1/robotics')!.error).toMatchObject({ code: 'TARGET_NOT_ALLOWED' });
    expect(by.get('http://10.0.0.1/robotics')).toMatchObject({ text: null, content: null });
    expect(r.body.scraped_count).toBe(2);
    // 1 for the search, 3 for each page scraped successfully; the two failures were released from the hold.
    expect(r.body.credits_used).toBe(1 + 3 * 2);
    expect(await remaining(base, a.key)).toBe(100 - 7);
    expect(r.body).not.toHaveProperty('contacts');
    expect(r.body).not.toHaveProperty('social_profiles');
  });

  it('the hold covers every page: an account that cannot pay for them all is refused (402) before anything is fetched', async () => {
    const poor = await account(base, 'unicorn', 10);
    const before = site.hitCount();
    expectErrorBody(await search(base, poor.key, { query: 'robotics', auto_scrape_top: 4 }), 402, 'NO_CREDITS');
    expect(site.hitCount()).toBe(before);
  });

  it('a search whose scrapes all failed costs what a plain search costs', async () => {
    const a = await account(base, 'unicorn', 100);
    const r = await search(base, a.key, { query: 'firewall refuses', auto_scrape_top: 2 });
    expect(r.status).toBe(200);
    expect(r.body.scraped_count).toBe(0);
    expect(r.body.scraped_content.every((x: { error: unknown }) => x.error !== null)).toBe(true);
    expect(r.body.credits_used).toBe(1);
  });

  it('include_contacts (Starter) with auto_scrape_top 0 scrapes the top 3 and merges their contacts', async () => {
    const a = await account(base, 'starter', 100);
    const r = await search(base, a.key, { query: 'acme robotics contact press', include_contacts: true });
    expect(r.status, r.text).toBe(200);
    expect(r.body.scraped_content.length).toBe(3);
    const dana = r.body.contacts.find((c: { email: string }) => c.email === 'dana.reyes@acme-robotics.com');
    expect(dana).toMatchObject({ name: 'Dana Reyes', company: 'Acme Robotics', source_url: `${site.url}/contacts`, phone: '+14155550134' });
    const page = r.body.scraped_content.find((x: { url: string }) => x.url === `${site.url}/contacts`);
    expect(page.contacts.length).toBeGreaterThan(0);
    const ok = r.body.scraped_count as number;
    expect(r.body.credits_used).toBe(1 + 3 * ok + 5);
    expect(r.body).not.toHaveProperty('social_profiles');
  });

  it('include_social (Builder) gives de-duplicated profiles with their source', async () => {
    const a = await account(base, 'builder', 100);
    const r = await search(base, a.key, { query: 'acme robotics contact press', auto_scrape_top: 1, include_social: true });
    expect(r.status, r.text).toBe(200);
    expect(r.body.scraped_content).toHaveLength(1);
    const urls = r.body.social_profiles.map((p: { url: string }) => p.url);
    expect(urls).toEqual(expect.arrayContaining(['https://x.com/acmerobotics', 'https://github.com/acme-robotics']));
    expect(new Set(urls).size).toBe(urls.length);
    for (const p of r.body.social_profiles) expect(p.source_url).toBe(`${site.url}/contacts`);
    expect(r.body.credits_used).toBe(1 + 3 + 5);
  });
});

describe('SCOUR_INDEX_SCRAPES: scrapes go into their account\'s own collection', () => {
  let site: TargetSite;
  let s: Running;
  let a: Acct;
  let b: Acct;

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', indexScrapes: true, searchProviders: ['local'] });
    a = await account(s.url);
    b = await account(s.url);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('a successful scrape is found by its account only; one made with cookies is not indexed', async () => {
    const page = `${site.url}/html/simple`;
    const scraped = await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${a.key}`, body: { url: page } });
    expect(scraped.status, scraped.text).toBe(200);
    const words = (scraped.body.text_content as string).match(/[A-Za-z]{5,}/g)!.slice(0, 2).join(' ');
    const mine = await search(s.url, a.key, { query: words });
    expect(links(mine)).toContain(page);
    expect(links(await search(s.url, b.key, { query: words }))).not.toContain(page);
    const withCookies = await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${b.key}`, body: { url: page, cookies: { session: 'x' } } });
    expect(withCookies.status).toBe(200);
    expect(links(await search(s.url, b.key, { query: words }))).not.toContain(page);
  });
});
