/**
 * The operations the body fuzz covers, and how cases are drawn for each:
 * valid bodies from the route's published schema (sent by an account with
 * no credits, so they stop at 402 after validation, gating and pricing),
 * broken bodies, broken transports, broken credentials, hostile path
 * parameters, and a few cheap valid bodies sent by an account with credits
 * so real answers are checked against their documented schema. Every URL a
 * case carries points at the loopback target site or at an address the
 * egress guard refuses without a lookup (harness.sanitise).
 */
import fc from 'fast-check';
import { anyString, brokenBody, mostly, validBody, type Overrides, type Schema } from './schema-arbitrary.js';
import {
  ACCEPTS, ADMIN_TOKEN, BROKEN_ENCODINGS, encode, REFUSED_URLS, sanitise, TARGET_PATHS, VALID_ENCODINGS,
  type Case, type Encoding, type Fuzzed,
} from './harness.js';

export type Auth = 'bearer' | 'admin' | 'none';

export interface Op {
  /** Tally and test name. */
  readonly name: string;
  readonly method: string;
  readonly template: string;
  readonly auth: Auth;
  /** Share of FC_RUNS (all files together); see the test files. */
  readonly share: number;
  /** URLs and ids the schema cannot draw safely or usefully. */
  readonly overrides?: (f: Fuzzed, site: string) => Overrides;
  /** Overrides that keep a valid body cheap enough to run for real (rich account); absent: never run for real. */
  readonly cheap?: (f: Fuzzed, site: string) => Overrides;
  /** The body is sent as drawn (its URLs are never fetched): the tools that only parse URLs. */
  readonly unsanitised?: boolean;
  /** Makes most valid bodies pass the route's own checks too (options that need another option); a fifth are sent unrepaired. */
  readonly repair?: ((body: unknown) => unknown) | undefined;
}

const TOOLS = [
  'json-formatter', 'base64-encoder', 'url-encoder', 'uuid-generator', 'jwt-decoder', 'regex-tester', 'html-entity-encoder',
  'lorem-ipsum-generator', 'user-agent-parser', 'robots-txt-generator', 'color-converter',
] as const;

const none = fc.constant(undefined);
const targetUrl = (site: string) => fc.constantFrom(...TARGET_PATHS).map((p) => `${site}${p}`);
const nonEmpty = anyString.filter((x) => x !== '');
const urlField = (site: string) => fc.oneof({ weight: 3, arbitrary: targetUrl(site) }, { weight: 2, arbitrary: fc.constantFrom(...REFUSED_URLS) }, { weight: 1, arbitrary: nonEmpty });
const echo = (site: string) => fc.oneof(none, fc.constant(`${site}/echo`));

// Values the routes' own checks accept (the schema alone lets most random strings through to a 400).
const country = fc.constantFrom('US', 'DE', 'GB', 'FR', 'JP', 'BR', 'IN');
const language = fc.constantFrom('en', 'de', 'fr', 'zh', 'es');
const words = fc.lorem({ maxCount: 6 }).filter((w) => /\p{L}{3}/u.test(w));
const headerName = fc.stringMatching(/^[A-Z][a-z]{1,8}(-[A-Z][a-z]{1,8})?$/).filter((h) => !/^(Host|Connection|Content-Length|Transfer-Encoding|Upgrade|Te|Trailer|Keep-Alive|Proxy-[A-Za-z-]*|Cookie)$/i.test(h));
const headerValue = fc.stringMatching(/^[ -~]{0,40}$/).map((v) => v.trim());
const userAgent = fc.constantFrom('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36', 'curl/8.5.0', 'ScourFuzz/1.0 (+http://127.0.0.1/bot)');
const cookieName = fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/);
const cookieValue = fc.stringMatching(/^[A-Za-z0-9._-]{0,24}$/);
const glob = fc.constantFrom('/blog/**', '/a/*', '/{a,b}/x', '/**', '/x?y', '/html/*', '/*.pdf');
const cssColor = fc.constantFrom('#663399', '#fff', 'rgb(102 51 153 / 50%)', 'rgb(0,0,0)', 'hsl(270, 50%, 40%)', 'rebeccapurple', 'transparent', 'oklch(0.5 0.2 300)', 'lab(50% 40 59.5)', 'hwb(194 0% 0%)', 'cmyk(0% 50% 0% 40%)', 'currentcolor');
const regexPattern = fc.constantFrom('a+', '(\\w+)@(\\w+)\\.com', '^$', '[0-9]{2,}', '(?<year>\\d{4})-(?<m>\\d\\d)', '\\p{L}+', 'x*', '(a|b)*c', '.');
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const jwt = fc.tuple(fc.record({ alg: fc.constantFrom('HS256', 'RS256', 'none', 'ES256'), typ: fc.constantFrom('JWT', undefined), kid: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }) }), fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }), fc.uint8Array({ maxLength: 32 }))
  .map(([h, p, sig]) => `${b64url(h)}.${b64url(p)}.${Buffer.from(sig).toString('base64url')}`);

const has = (b: unknown): b is Record<string, unknown> => b !== null && typeof b === 'object' && !Array.isArray(b);
const without = (b: Record<string, unknown>, ...keys: string[]) => { const o = { ...b }; for (const k of keys) delete o[k]; return o; };

/** The scrape options' couplings: browser-only options (actions too) need render_js, screenshot options need a screenshot, quality needs jpeg. */
function scrapeRepair(b: unknown): unknown {
  if (!has(b)) return b;
  let o = b;
  if (o.render_js !== true) o = without(o, 'wait_for', 'wait_time', 'screenshot', 'screenshot_options', 'actions', 'actions_required');
  if (o.actions === undefined) o = without(o, 'actions_required');
  if (o.screenshot !== true) o = without(o, 'screenshot_options');
  if (has(o.screenshot_options) && o.screenshot_options.format !== 'jpeg') o = { ...o, screenshot_options: without(o.screenshot_options, 'quality') };
  if (o.proxy_type === 'residential' || o.proxy_country !== undefined) o = without(o, 'proxy_type', 'proxy_country'); // no proxies configured here
  if (o.retry_failed !== true) o = without(o, 'max_retries');
  return without(o, 'extractors'); // no custom extractors on this server
}

const scrapeDomain = (site: string): Overrides => ({
  '/url': urlField(site), '/urls/*': urlField(site), '/callback_url': urlField(site),
  '/country': mostly(country), '/proxy_country': mostly(country),
  '/custom_headers': mostly(fc.dictionary(headerName, headerValue, { maxKeys: 3 })),
  '/cookies': mostly(fc.dictionary(cookieName, cookieValue, { maxKeys: 3 })),
  '/wait_for': mostly(fc.constantFrom('#app', 'h1', '//h1', 'xpath=//p')),
  '/user_agent': mostly(userAgent),
});

/** Tool options that only apply with another option's value. */
const toolRepairs: Record<string, (b: Record<string, unknown>) => unknown> = {
  'base64-encoder': (b) => {
    const input = typeof b.input === 'string' ? b.input : '';
    if (b.action === 'decode') return without({ ...b, input: Buffer.from(input).toString(b.variant === 'url' ? 'base64url' : 'base64') }, 'input_encoding');
    if (b.input_encoding === 'hex') return without({ ...b, input: Buffer.from(input).toString('hex') }, 'output_encoding');
    return without(b, 'output_encoding');
  },
  'url-encoder': (b) => (b.action === 'parse' ? without({ ...b, input: 'https://user@example.com:8443/a%20b/?q=1&r=%E2%9C%93#frag' }, 'mode') : b),
  'uuid-generator': (b) => (b.version === 3 || b.version === 5
    ? { ...b, count: 1, namespace: 'dns', name: typeof b.name === 'string' ? b.name : 'example.com' }
    : without(b, 'namespace', 'name')),
  'jwt-decoder': (b) => (has(b.verify) ? { ...b, verify: { secret: 'fuzz-secret', clock_tolerance_seconds: 0 } } : b),
  'regex-tester': (b) => (typeof b.flags === 'string' && b.flags.includes('u') && b.flags.includes('v') ? { ...b, flags: b.flags.replace(/v/g, '') } : b),
  'html-entity-encoder': (b) => {
    let o = b.action === 'decode' ? without(b, 'mode') : without(b, 'decode_mode');
    if (o.level === 'xml') o = without(o, 'decode_mode', ...(o.mode === 'all' ? ['mode'] : []));
    return o;
  },
  'lorem-ipsum-generator': (b) => {
    const fix = (r: unknown) => (has(r) && typeof r.min === 'number' && typeof r.max === 'number' && r.min > r.max ? { min: r.max, max: r.min } : r);
    const count = typeof b.count === 'number' && b.unit === 'paragraphs' ? Math.min(b.count, 100) : typeof b.count === 'number' && b.unit === 'sentences' ? Math.min(b.count, 1000) : b.count;
    return { ...b, count, words_per_sentence: fix(b.words_per_sentence), sentences_per_paragraph: fix(b.sentences_per_paragraph) };
  },
};

const toolDomain: Record<string, Overrides> = {
  'json-formatter': { '/input': mostly(fc.json({ maxDepth: 3 })) },
  'jwt-decoder': { '/token': mostly(jwt) },
  'regex-tester': { '/pattern': mostly(regexPattern), '/flags': mostly(fc.constantFrom('g', 'gi', 'gu', '', 'dgimsy', 'v', 'gv')) },
  'color-converter': { '/color': mostly(cssColor) },
  'robots-txt-generator': {
    '/groups/*/user_agents/*': fc.constantFrom('*', 'Googlebot', 'Bingbot', 'my-bot_1.0'),
    '/groups/*/allow/*': fc.constantFrom('/', '/a/', '/*.pdf$', '/x*y'),
    '/groups/*/disallow/*': fc.constantFrom('', '/', '/private/', '/*?session='),
    '/groups/*/crawl_delay': mostly(fc.constantFrom(0, 0.5, 10, 1.125)),
    '/sitemaps/*': fc.constantFrom('https://example.com/sitemap.xml', 'http://127.0.0.1/s.xml'),
    '/host': mostly(fc.constantFrom('example.com', 'bücher.example', 'example.com:8080')),
    '/check/*/url': fc.constantFrom('https://example.com/private/x', 'https://example.com/a.pdf'),
    '/check/*/user_agent': fc.constantFrom('*', 'Googlebot'),
    '/comments/*': fc.lorem({ maxCount: 5 }),
  },
};

/** A document for the local index: its URL on the target site or refused, so searches that scrape it stay on loopback. */
const indexDocument = (site: string) => fc.oneof(
  { weight: 4, arbitrary: fc.record({
    url: fc.oneof(targetUrl(site), fc.constantFrom(...REFUSED_URLS), fc.nat(999).map((n) => `${site}/status/404?doc=${n}`)),
    title: fc.oneof(fc.constantFrom('Widgets and gadgets', 'Research on hostile input', 'Ünïcödé title 😀'), anyString),
    text: fc.oneof(fc.lorem({ maxCount: 20 }), anyString),
    published_date: fc.oneof(none, fc.constantFrom('2024-01-02', '2026-11-23T10:00:00Z', 'yesterday')),
    language: fc.oneof(none, fc.constantFrom('en', 'de', 'xx')),
    country: fc.oneof(none, fc.constantFrom('US', 'DE', 'us')),
  }, { requiredKeys: ['url'] }) },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
);

const victimOr = (f: Fuzzed) => fc.oneof({ weight: 3, arbitrary: fc.constant(f.accounts.victimId) }, { weight: 1, arbitrary: fc.constant('shared') }, { weight: 1, arbitrary: anyString });

export const BODY_OPS: readonly Op[] = [
  {
    name: 'search', method: 'POST', template: '/v1/search', auth: 'bearer', share: 0.06,
    overrides: () => ({ '/query': mostly(words), '/country': mostly(country), '/language': mostly(language) }),
    cheap: () => ({ '/auto_scrape_top': fc.integer({ min: 0, max: 2 }), '/max_results': fc.integer({ min: 1, max: 10 }), '/query': words, '/country': country, '/language': language }),
  },
  {
    name: 'scrape', method: 'POST', template: '/v1/scrape', auth: 'bearer', share: 0.07,
    overrides: (_f, site) => scrapeDomain(site), repair: scrapeRepair,
    cheap: (_f, site) => ({
      '/url': targetUrl(site), '/render_js': none, '/screenshot': none, '/timeout': fc.integer({ min: 5, max: 30 }), '/follow_redirects': none,
      '/country': country, '/custom_headers': fc.dictionary(headerName, headerValue, { maxKeys: 3 }), '/cookies': fc.dictionary(cookieName, cookieValue, { maxKeys: 3 }),
    }),
  },
  {
    name: 'scrape/bulk', method: 'POST', template: '/v1/scrape/bulk', auth: 'bearer', share: 0.05,
    overrides: (_f, site) => scrapeDomain(site), repair: scrapeRepair,
    cheap: (_f, site) => ({
      '/urls': fc.array(targetUrl(site), { minLength: 1, maxLength: 3 }), '/callback_url': echo(site), '/render_js': none, '/screenshot': none,
      '/timeout': fc.integer({ min: 5, max: 30 }), '/max_retries': fc.integer({ min: 0, max: 1 }), '/follow_redirects': none,
      '/country': country, '/custom_headers': fc.dictionary(headerName, headerValue, { maxKeys: 3 }), '/cookies': fc.dictionary(cookieName, cookieValue, { maxKeys: 3 }),
    }),
  },
  {
    name: 'crawl', method: 'POST', template: '/v1/crawl', auth: 'bearer', share: 0.04,
    overrides: (_f, site) => ({ '/url': urlField(site), '/callback_url': urlField(site), '/include_paths/*': glob, '/exclude_paths/*': glob }),
    repair: (b) => (has(b) ? without(b, 'render_js') : b),
    cheap: (_f, site) => ({
      '/url': fc.constant(`${site}/html/simple`), '/max_pages': fc.integer({ min: 1, max: 3 }), '/max_depth': fc.integer({ min: 0, max: 1 }),
      '/same_domain': fc.constant(true), '/render_js': none, '/callback_url': echo(site), '/include_paths/*': glob, '/exclude_paths/*': glob,
    }),
  },
  {
    name: 'map', method: 'POST', template: '/v1/map', auth: 'bearer', share: 0.03,
    overrides: (_f, site) => ({ '/url': urlField(site), '/search': mostly(words) }),
    cheap: (_f, site) => ({
      '/url': fc.constant(`${site}/html/simple`), '/limit': fc.integer({ min: 1, max: 50 }), '/search': fc.oneof(none, words), '/timeout': fc.constant(5),
    }),
  },
  {
    name: 'research', method: 'POST', template: '/v1/research', auth: 'bearer', share: 0.06,
    overrides: (_f, site) => ({
      '/callback_url': urlField(site), '/research_query': mostly(words), '/language': mostly(language),
      '/timeframe': mostly(fc.constantFrom('past_week', 'past_month', 'past_year', 'all', '2023', '2019-2023', '2024-01-01..2024-06-30')),
      '/geographic_focus': mostly(fc.uniqueArray(fc.constantFrom('US', 'DE', 'Germany', 'Japan'), { minLength: 1, maxLength: 3 })), '/entities/*': mostly(words), '/focus_areas/*': mostly(words),
    }),
    cheap: (_f, site) => ({
      '/max_sources': fc.integer({ min: 1, max: 3 }), '/export_format': fc.constantFrom(undefined, 'json', 'markdown', 'csv', 'bibtex', 'html'),
      '/callback_url': echo(site), '/research_query': words, '/language': language, '/timeframe': fc.constantFrom(undefined, 'past_year', 'all'),
      '/geographic_focus': fc.constantFrom(undefined, ['US'], ['DE', 'Japan']), '/entities/*': words, '/focus_areas/*': words,
    }),
  },
  ...TOOLS.map((t): Op => ({
    name: `tools/${t}`, method: 'POST', template: `/v1/tools/${t}`, auth: 'none', share: 0.044,
    unsanitised: t === 'robots-txt-generator' || t === 'url-encoder',
    overrides: () => toolDomain[t] ?? {},
    repair: toolRepairs[t] === undefined ? undefined : (b) => (has(b) ? toolRepairs[t]!(b) : b),
    cheap: () => toolDomain[t] ?? {},
  })),
  { name: 'admin accounts create', method: 'POST', template: '/admin/v1/accounts', auth: 'admin', share: 0.015, cheap: () => ({}) },
  { name: 'admin account plan', method: 'PATCH', template: '/admin/v1/accounts/{account_id}', auth: 'admin', share: 0.015, cheap: () => ({}) },
  { name: 'admin credits', method: 'POST', template: '/admin/v1/accounts/{account_id}/credits', auth: 'admin', share: 0.015, cheap: () => ({}) },
  {
    name: 'admin keys create', method: 'POST', template: '/admin/v1/accounts/{account_id}/keys', auth: 'admin', share: 0.015,
    overrides: () => ({ '/expires_at': mostly(fc.date({ min: new Date('2030-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString())) }),
    cheap: () => ({ '/expires_at': fc.constantFrom(undefined, '2031-01-01T00:00:00.000Z') }),
  },
  { name: 'admin webhook secret rotate', method: 'POST', template: '/admin/v1/accounts/{account_id}/webhook-secret/rotate', auth: 'admin', share: 0.015, cheap: () => ({}) },
  {
    name: 'admin index documents', method: 'POST', template: '/admin/v1/index/documents', auth: 'admin', share: 0.02,
    overrides: (f, site) => ({ '/collection': victimOr(f), '/documents/*': indexDocument(site) }),
    cheap: (f, site) => ({ '/collection': fc.constantFrom('shared', f.accounts.victimId), '/documents': fc.array(indexDocument(site), { minLength: 1, maxLength: 3 }) }),
  },
  {
    name: 'admin index remove', method: 'DELETE', template: '/admin/v1/index/documents', auth: 'admin', share: 0.015,
    overrides: (f, site) => ({ '/collection': victimOr(f), '/urls/*': urlField(site) }),
    cheap: (f, site) => ({ '/collection': fc.constantFrom('shared', f.accounts.victimId), '/urls/*': urlField(site) }),
  },
];

/** Routes without a body: their path parameters and credentials are what a client controls. */
export interface PathOp {
  readonly name: string;
  readonly method: string;
  readonly template: string;
  readonly auth: Auth;
  readonly share: number;
  /** Well-formed ids that name nothing (or the victim), beside hostile ones. */
  readonly ids?: (f: Fuzzed) => fc.Arbitrary<string>;
}

const hex32 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));

export const PATH_OPS: readonly PathOp[] = [
  { name: 'usage', method: 'GET', template: '/v1/usage', auth: 'bearer', share: 0.002 },
  { name: 'crawl status', method: 'GET', template: '/v1/crawl/{job_id}', auth: 'bearer', share: 0.002, ids: () => hex32.map((h) => `crawl_${h}`) },
  { name: 'crawl cancel', method: 'DELETE', template: '/v1/crawl/{job_id}', auth: 'bearer', share: 0.002, ids: () => hex32.map((h) => `crawl_${h}`) },
  { name: 'bulk status', method: 'GET', template: '/v1/scrape/bulk/{job_id}', auth: 'bearer', share: 0.002, ids: () => hex32.map((h) => `bulk_${h}`) },
  { name: 'research status', method: 'GET', template: '/v1/research/{job_id}', auth: 'bearer', share: 0.002, ids: () => hex32.map((h) => `research_${h}`) },
  { name: 'screenshot file', method: 'GET', template: '/v1/screenshots/{file}', auth: 'none', share: 0.002, ids: () => fc.constantFrom('../../../../etc/passwd', '..%2f..%2fetc%2fpasswd', 'x.png', '.', '..') },
  { name: 'research export file', method: 'GET', template: '/v1/research/exports/{file}', auth: 'none', share: 0.002, ids: () => fc.constantFrom('../../../../etc/passwd', '../data.db', 'x.pdf', '.', '..') },
  { name: 'admin accounts list', method: 'GET', template: '/admin/v1/accounts', auth: 'admin', share: 0.002 },
  { name: 'admin account get', method: 'GET', template: '/admin/v1/accounts/{account_id}', auth: 'admin', share: 0.003, ids: (f) => fc.constant(f.accounts.victimId) },
  { name: 'admin keys list', method: 'GET', template: '/admin/v1/accounts/{account_id}/keys', auth: 'admin', share: 0.003, ids: (f) => fc.constant(f.accounts.victimId) },
  { name: 'admin ledger', method: 'GET', template: '/admin/v1/accounts/{account_id}/ledger', auth: 'admin', share: 0.003, ids: (f) => fc.constant(f.accounts.victimId) },
  { name: 'admin webhook secret', method: 'GET', template: '/admin/v1/accounts/{account_id}/webhook-secret', auth: 'admin', share: 0.003, ids: (f) => fc.constant(f.accounts.victimId) },
  { name: 'admin key revoke', method: 'DELETE', template: '/admin/v1/keys/{key_id}', auth: 'admin', share: 0.003, ids: (f) => fc.constant(f.accounts.victimKeyId) },
  { name: 'admin index stats', method: 'GET', template: '/admin/v1/index/stats', auth: 'admin', share: 0.002 },
];

/** Every byte percent-encoded: any string (lone surrogates included, as U+FFFD) becomes a valid path segment. */
const segment = (s: string): string => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  anyString.filter((s) => s !== '').map(segment),
  fc.constantFrom('%', '%zz', '%00', '%E0%A4%A', '%C0%AF', '..', '%2e%2e', '%2F', 'a%2Fb', 'x'.repeat(5000), '%F0%9F%98%80', ';', '*'),
);

/** Credentials a case sends, by the route's kind: mostly right, sometimes missing, malformed or someone else's. */
function authFor(f: Fuzzed, auth: Auth, key: string): fc.Arbitrary<string | undefined> {
  const wrong = fc.constantFrom(
    undefined, 'Bearer', 'Bearer ', `bearer ${key}`, `Bearer ${key}x`, `Bearer  ${key}`, `Basic ${Buffer.from(`a:${key}`).toString('base64')}`,
    `Bearer ${ADMIN_TOKEN}`, `Bearer ${f.accounts.poor}`, `Bearer ${'a'.repeat(10_000)}`, 'Bearer sk_live_0000000000000000000000000000', `Token ${key}`, 'Bearer \t ',
  );
  if (auth === 'none') return fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: wrong });
  const right = auth === 'admin' ? `Bearer ${ADMIN_TOKEN}` : `Bearer ${key}`;
  const alt = auth === 'bearer' ? fc.constant(`Bearer ${f.accounts.poorFree}`) : fc.constant(right);
  return fc.oneof({ weight: 16, arbitrary: fc.constant(right) }, { weight: 2, arbitrary: alt }, { weight: 2, arbitrary: wrong });
}

function pathFor(f: Fuzzed, template: string, ids: fc.Arbitrary<string> | undefined): fc.Arbitrary<string> {
  if (!template.includes('{')) return fc.constant(template);
  const good = ids ?? fc.constant(f.accounts.victimId);
  return fc.oneof({ weight: 3, arbitrary: good.map((id) => (/^[A-Za-z0-9_.-]+$/.test(id) && id !== '.' && id !== '..' ? id : id.includes('%') ? id : segment(id))) }, { weight: 2, arbitrary: hostileSegment })
    .map((seg) => template.replace(/\{[a-z_]+\}/, seg));
}

const adminIds = (f: Fuzzed, template: string) => (template.includes('{account_id}') ? fc.constant(f.accounts.victimId) : undefined);

export type Kind = 'valid' | 'broken' | 'transport' | 'cheap';

/** Cases for a body route: valid (no credits), broken bodies, broken transports. */
export function bodyCases(f: Fuzzed, op: Op, site: string): fc.Arbitrary<Case & { kind: Kind; overLimit: boolean }> {
  const schema = f.validators.requestSchema(op.template, op.method) as Schema;
  const overrides = op.overrides?.(f, site) ?? {};
  const clean = (v: unknown) => (op.unsanitised ? v : sanitise(v));
  const repair = op.repair ?? ((b: unknown) => b);
  const valid = fc.tuple(validBody(schema, { overrides }), fc.nat(4)).map(([b, n]) => clean(n === 0 ? b : repair(b)));
  const broken = brokenBody(schema, { overrides }).map(({ body, defects }) => ({ body: clean(body), defects }));
  const key = op.auth === 'bearer' ? f.accounts.poor : '';
  const body = fc.oneof(
    { weight: 3, arbitrary: fc.tuple(valid, fc.constantFrom(...VALID_ENCODINGS)).map(([b, e]) => ({ b, e, kind: 'valid' as Kind, label: `valid/${e}` })) },
    { weight: 6, arbitrary: fc.tuple(broken, fc.constantFrom(...VALID_ENCODINGS)).map(([b, e]) => ({ b: b.body, e, kind: 'broken' as Kind, label: `broken(${b.defects.join('+')})/${e}` })) },
    { weight: 2, arbitrary: fc.tuple(valid, fc.constantFrom(...BROKEN_ENCODINGS)).map(([b, e]) => ({ b, e, kind: 'transport' as Kind, label: `transport/${e}` })) },
  );
  return fc.record({
    x: body, salt: fc.nat(), auth: authFor(f, op.auth, key), accept: fc.constantFrom(...ACCEPTS),
    path: pathFor(f, op.template, adminIds(f, op.template)),
  }).map(({ x, salt, auth, accept, path }) => {
    const wire = encode(x.b, x.e as Encoding, salt);
    return {
      method: op.method, path, template: op.template, wire, authorization: auth, accept, kind: x.kind,
      label: `${op.name} ${x.label}`, overLimit: (wire.body?.byteLength ?? 0) > 1024 * 1024, urlsInert: op.unsanitised === true,
    };
  });
}

/** Cheap valid bodies, sent by the account with credits: real work on loopback, real answers checked against the documented schema. */
export function cheapCases(f: Fuzzed, op: Op, site: string): fc.Arbitrary<Case & { kind: Kind; overLimit: boolean }> {
  const schema = f.validators.requestSchema(op.template, op.method) as Schema;
  const overrides = { ...(op.overrides?.(f, site) ?? {}), ...(op.cheap?.(f, site) ?? {}) };
  const clean = (v: unknown) => (op.unsanitised ? v : sanitise(v));
  const auth = op.auth === 'bearer' ? `Bearer ${f.accounts.rich}` : op.auth === 'admin' ? `Bearer ${ADMIN_TOKEN}` : undefined;
  const repair = op.repair ?? ((b: unknown) => b);
  return fc.record({
    b: validBody(schema, { overrides, atLimits: op.auth === 'none' }).map((b) => clean(repair(b))),
    accept: fc.constantFrom(undefined, 'application/json', 'application/msgpack'),
    path: adminIds(f, op.template)?.map((id) => op.template.replace('{account_id}', id)) ?? fc.constant(op.template),
  }).map(({ b, accept, path }) => ({
    method: op.method, path, template: op.template, wire: encode(b, 'json', 0), authorization: auth, accept, kind: 'cheap' as Kind,
    label: `${op.name} cheap`, overLimit: false, urlsInert: op.unsanitised === true,
  }));
}

/** Cases for a route without a body: hostile path parameters, credentials, a stray body. */
export function pathCases(f: Fuzzed, op: PathOp): fc.Arbitrary<Case & { kind: Kind; overLimit: boolean }> {
  const key = f.accounts.poor;
  return fc.record({
    path: pathFor(f, op.template, op.ids?.(f)), auth: authFor(f, op.auth, key), accept: fc.constantFrom(...ACCEPTS),
    stray: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom<Encoding>('json', 'msgpack-garbage', 'text-plain') }),
    salt: fc.nat(),
  }).map(({ path, auth, accept, stray, salt }) => ({
    method: op.method, path, template: op.template, authorization: auth, accept, kind: 'broken' as Kind,
    // A body on GET: fetch refuses to send one, so only DELETE carries the stray body.
    wire: stray !== undefined && op.method === 'DELETE' ? encode({ junk: true }, stray, salt) : { body: undefined, headers: {} },
    label: `${op.name} path`, overLimit: false,
  }));
}
