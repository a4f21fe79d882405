/** Case table for the robots-txt-generator tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

const GROUPS = [
  { user_agents: ['*'], allow: ['/admin/public/'], disallow: ['/admin/', '/*.pdf$'], crawl_delay: 2.5 },
  { user_agents: ['Googlebot', 'Bingbot'], disallow: [''] },
  { user_agents: ['GPTBot'], disallow: ['/'] },
];

const EXPECTED = [
  '# Example robots.txt',
  '',
  'User-agent: *',
  'Allow: /admin/public/',
  'Disallow: /admin/',
  'Disallow: /*.pdf$',
  'Crawl-delay: 2.5',
  '',
  'User-agent: Googlebot',
  'User-agent: Bingbot',
  'Disallow:',
  '',
  'User-agent: GPTBot',
  'Disallow: /',
  '',
  'Host: example.com',
  'Sitemap: https://example.com/sitemap.xml',
  '',
].join('\n');

const one = (extra: Record<string, unknown>) => ({ groups: [{ user_agents: ['*'], disallow: ['/private/'] }], ...extra });
const ruleGroup = (field: 'allow' | 'disallow', value: string) => ({ groups: [{ disallow: ['/ok/'], [field]: field === 'disallow' ? ['/ok/', value] : [value] }] });

export default {
  slug: 'robots-txt-generator',
  cases: [
    // ---- successes ----
    {
      name: 'exact text for a small input',
      body: { comments: ['Example robots.txt'], groups: GROUPS, host: 'Example.com', sitemaps: ['https://example.com/sitemap.xml'] },
      status: 200,
      check: (b) => {
        expect(b.content).toBe(EXPECTED);
        expect(b.line_count).toBe(17);
        expect(b.byte_length).toBe(256);
        expect(b).not.toHaveProperty('checks');
      },
    },
    {
      name: 'defaults: one group for every crawler, nothing disallowed',
      body: { groups: [{}] },
      status: 200,
      check: (b) => {
        expect(b.content).toBe('User-agent: *\nDisallow:\n');
        expect(b.line_count).toBe(2);
        expect(b.byte_length).toBe(24);
      },
    },
    {
      name: 'block everything',
      body: { groups: [{ disallow: ['/'] }] },
      status: 200,
      check: (b) => expect(b.content).toBe('User-agent: *\nDisallow: /\n'),
    },
    {
      name: 'crawl delay formatting, empty comment line, allow listed before disallow',
      body: { comments: ['a', ''], groups: [{ user_agents: ['Yandex'], disallow: ['/x'], allow: ['/x/y'], crawl_delay: 0 }, { crawl_delay: 86400 }, { crawl_delay: 0.125 }] },
      status: 200,
      check: (b) =>
        expect(b.content).toBe(
          '# a\n#\n\nUser-agent: Yandex\nAllow: /x/y\nDisallow: /x\nCrawl-delay: 0\n\nUser-agent: *\nDisallow:\nCrawl-delay: 86400\n\n' +
            'User-agent: *\nDisallow:\nCrawl-delay: 0.125\n',
        ),
    },
    {
      name: 'host and sitemaps are normalised (lower-case host, punycode, trailing slash)',
      body: { groups: [{}], host: 'M\u00dcNCHEN.example:8080', sitemaps: ['https://Example.COM', 'http://example.com/a b.xml'] },
      status: 200,
      check: (b) =>
        expect(b.content).toBe(
          'User-agent: *\nDisallow:\n\nHost: xn--mnchen-3ya.example:8080\nSitemap: https://example.com/\nSitemap: http://example.com/a%20b.xml\n',
        ),
    },
    {
      name: 'non-ASCII path is written as UTF-8 and counted in bytes',
      body: { groups: [{ disallow: ['/m\u00fcnchen'] }] },
      status: 200,
      check: (b) => {
        expect(b.content).toBe('User-agent: *\nDisallow: /m\u00fcnchen\n');
        expect(b.byte_length).toBe(34);
      },
    },
    {
      name: 'checks: longest match wins, specific group beats *, $ anchors, unknown crawler falls back to *',
      body: {
        groups: GROUPS,
        check: [
          { url: 'https://example.com/admin/secret', user_agent: 'Googlebot' },
          { url: 'https://example.com/admin/secret', user_agent: '*' },
          { url: 'https://example.com/admin/public/x' },
          { url: 'https://example.com/docs/a.pdf' },
          { url: 'https://example.com/docs/a.pdf?x=1' },
          { url: 'https://example.com/anything', user_agent: 'GPTBot' },
          { url: 'https://example.com/anything', user_agent: 'gptbot' },
          { url: 'https://example.com/admin/', user_agent: 'OtherBot' },
          { url: 'http://other.example:8080/admin/' },
        ],
      },
      status: 200,
      check: (b) => {
        const lines = [
          'User-agent: *', 'Allow: /admin/public/', 'Disallow: /admin/', 'Disallow: /*.pdf$', 'Crawl-delay: 2.5', '',
          'User-agent: Googlebot', 'User-agent: Bingbot', 'Disallow:', '', 'User-agent: GPTBot', 'Disallow: /', '',
        ];
        expect(b.content).toBe(lines.join('\n'));
        expect(b.checks).toEqual([
          { url: 'https://example.com/admin/secret', user_agent: 'Googlebot', allowed: true, matching_line: null, matching_rule: null },
          { url: 'https://example.com/admin/secret', user_agent: '*', allowed: false, matching_line: 3, matching_rule: 'Disallow: /admin/' },
          { url: 'https://example.com/admin/public/x', user_agent: '*', allowed: true, matching_line: 2, matching_rule: 'Allow: /admin/public/' },
          { url: 'https://example.com/docs/a.pdf', user_agent: '*', allowed: false, matching_line: 4, matching_rule: 'Disallow: /*.pdf$' },
          { url: 'https://example.com/docs/a.pdf?x=1', user_agent: '*', allowed: true, matching_line: null, matching_rule: null },
          { url: 'https://example.com/anything', user_agent: 'GPTBot', allowed: false, matching_line: 12, matching_rule: 'Disallow: /' },
          { url: 'https://example.com/anything', user_agent: 'gptbot', allowed: false, matching_line: 12, matching_rule: 'Disallow: /' },
          { url: 'https://example.com/admin/', user_agent: 'OtherBot', allowed: false, matching_line: 3, matching_rule: 'Disallow: /admin/' },
          { url: 'http://other.example:8080/admin/', user_agent: '*', allowed: false, matching_line: 3, matching_rule: 'Disallow: /admin/' },
        ]);
      },
    },
    {
      name: 'check: equal length allow and disallow, allow wins; percent-encoded URL matches a UTF-8 rule',
      body: {
        groups: [{ allow: ['/page'], disallow: ['/page', '/m\u00fcnchen'] }],
        check: [{ url: 'https://example.com/page' }, { url: 'https://example.com/m%C3%BCnchen/x' }, { url: 'https://example.com/m\u00fcnchen' }],
      },
      status: 200,
      check: (b) => {
        expect(b.checks.map((c: { allowed: boolean; matching_line: number | null }) => [c.allowed, c.matching_line])).toEqual([
          [true, 2],
          [false, 4],
          [false, 4],
        ]);
      },
    },
    {
      name: 'empty check list answers an empty checks array',
      body: { groups: [{}], check: [] },
      status: 200,
      check: (b) => expect(b.checks).toEqual([]),
    },
    {
      name: '50 groups of 10 rules (500 in all) are accepted',
      body: { groups: Array.from({ length: 50 }, (_, i) => ({ user_agents: [`bot${i}`], disallow: Array.from({ length: 10 }, (_, j) => `/p${j}/`) })) },
      status: 200,
      check: (b) => expect(b.line_count).toBe(50 * 11 + 49),
    },

    // ---- hostile: injection and syntax ----
    { name: 'LF in a disallow path (directive injection)', body: ruleGroup('disallow', '/a\nAllow: /'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'CR in an allow path', body: ruleGroup('allow', '/a\rDisallow: /'), status: 400, fields: ['groups[0].allow[0]'] },
    { name: 'NUL in a path', body: ruleGroup('disallow', '/a\u0000'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'tab in a path', body: ruleGroup('disallow', '/a\tb'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'unicode line separator in a path', body: ruleGroup('disallow', '/a\u2028b'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'C1 control (NEL) in a path', body: ruleGroup('disallow', '/a\u0085b'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'lone surrogate in a path', body: ruleGroup('disallow', '/a\ud800'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'space in a path', body: ruleGroup('disallow', '/a b'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: '# in a path (would start a comment)', body: ruleGroup('disallow', '/a#b'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'path without leading slash', body: ruleGroup('disallow', 'admin/'), status: 400, fields: ['groups[0].disallow[1]'] },
    { name: 'absolute URL as a path', body: ruleGroup('allow', 'https://example.com/'), status: 400, fields: ['groups[0].allow[0]'] },
    { name: 'empty allow path', body: ruleGroup('allow', ''), status: 400, fields: ['groups[0].allow[0]'] },
    { name: 'LF in a user agent', body: { groups: [{ user_agents: ['Googlebot\nDisallow: /'] }] }, status: 400, fields: ['groups[0].user_agents[0]'] },
    { name: 'colon in a user agent', body: { groups: [{ user_agents: ['*', 'a:b'] }] }, status: 400, fields: ['groups[0].user_agents[1]'] },
    { name: '# in a user agent', body: { groups: [{ user_agents: ['bot#1'] }] }, status: 400, fields: ['groups[0].user_agents[0]'] },
    { name: 'version in a user agent', body: { groups: [{ user_agents: ['Googlebot/2.1'] }] }, status: 400, fields: ['groups[0].user_agents[0]'] },
    { name: 'space in a user agent', body: { groups: [{ user_agents: ['Google bot'] }] }, status: 400, fields: ['groups[0].user_agents[0]'] },
    { name: 'empty user agent', body: { groups: [{ user_agents: [''] }] }, status: 400, fields: ['groups[0].user_agents[0]'] },
    { name: 'LF in a comment', body: one({ comments: ['ok', 'x\nDisallow: /'] }), status: 400, fields: ['comments[1]'] },
    { name: 'lone surrogate in a comment', body: one({ comments: ['\udc00'] }), status: 400, fields: ['comments[0]'] },
    { name: 'LF in host', body: one({ host: 'example.com\nDisallow: /' }), status: 400, fields: ['host'] },
    { name: 'host with a path', body: one({ host: 'example.com/x' }), status: 400, fields: ['host'] },
    { name: 'host with credentials', body: one({ host: 'user@example.com' }), status: 400, fields: ['host'] },
    { name: 'host with a space', body: one({ host: 'exa mple.com' }), status: 400, fields: ['host'] },
    { name: 'host with a bad port', body: one({ host: 'example.com:99999' }), status: 400, fields: ['host'] },
    { name: 'LF in a sitemap', body: one({ sitemaps: ['https://example.com/s.xml\nDisallow: /'] }), status: 400, fields: ['sitemaps[0]'] },
    { name: 'relative sitemap', body: one({ sitemaps: ['https://example.com/s.xml', '/sitemap.xml'] }), status: 400, fields: ['sitemaps[1]'] },
    { name: 'ftp sitemap', body: one({ sitemaps: ['ftp://example.com/s.xml'] }), status: 400, fields: ['sitemaps[0]'] },
    { name: 'javascript: sitemap', body: one({ sitemaps: ['javascript:alert(1)'] }), status: 400, fields: ['sitemaps[0]'] },
    { name: 'sitemap with a fragment', body: one({ sitemaps: ['https://example.com/s.xml#x'] }), status: 400, fields: ['sitemaps[0]'] },
    {
      name: 'every problem is reported at once',
      body: {
        groups: [{ user_agents: ['ok', 'a:b'] }, { disallow: ['/ok', '/x', 'bad'], crawl_delay: 0.0001 }],
        host: '\n',
        comments: ['\u0000'],
      },
      status: 400,
      fields: ['groups[0].user_agents[1]', 'groups[1].disallow[2]', 'groups[1].crawl_delay', 'host', 'comments[0]'],
    },

    // ---- hostile: check ----
    { name: 'relative check URL', body: one({ check: [{ url: '/admin' }] }), status: 400, fields: ['check[0].url'] },
    { name: 'non-http check URL', body: one({ check: [{ url: 'https://example.com/' }, { url: 'file:///etc/passwd' }] }), status: 400, fields: ['check[1].url'] },
    { name: 'garbage check URL', body: one({ check: [{ url: 'http://' }] }), status: 400, fields: ['check[0].url'] },
    { name: 'full browser UA string as check user_agent', body: one({ check: [{ url: 'https://example.com/', user_agent: 'Mozilla/5.0 (compatible; Googlebot/2.1)' }] }), status: 400, fields: ['check[0].user_agent'] },
    { name: 'check without url', body: one({ check: [{ user_agent: '*' }] }), status: 400, fields: ['check[0].url'] },
    { name: 'unknown field in a check', body: one({ check: [{ url: 'https://example.com/', agent: 'x' }] }), status: 400, fields: ['check[0].agent'] },
    { name: 'too many checks', body: one({ check: Array.from({ length: 51 }, () => ({ url: 'https://example.com/' })) }), status: 400, fields: ['check'] },
    {
      name: 'check work bound (long wildcard rule x long URLs)',
      body: { groups: [{ disallow: [`*${'a'.repeat(999)}`] }], check: Array.from({ length: 3 }, () => ({ url: `https://example.com/${'a'.repeat(2000)}` })) },
      status: 400,
      fields: ['check'],
    },

    // ---- hostile: schema and bounds ----
    { name: 'missing groups', body: {}, status: 400, fields: ['groups'] },
    { name: 'empty groups', body: { groups: [] }, status: 400, fields: ['groups'] },
    { name: 'groups not an array', body: { groups: { disallow: ['/'] } }, status: 400, fields: ['groups'] },
    { name: 'too many groups', body: { groups: Array.from({ length: 51 }, () => ({})) }, status: 400, fields: ['groups'] },
    { name: 'empty user_agents', body: { groups: [{ user_agents: [] }] }, status: 400, fields: ['groups[0].user_agents'] },
    { name: 'too many user agents', body: { groups: [{ user_agents: Array.from({ length: 21 }, (_, i) => `b${i}`) }] }, status: 400, fields: ['groups[0].user_agents'] },
    { name: 'user agent too long', body: { groups: [{ user_agents: ['a'.repeat(101)] }] }, status: 400, fields: ['groups[0].user_agents[0]'] },
    { name: 'disallow not an array', body: { groups: [{ disallow: '/' }] }, status: 400, fields: ['groups[0].disallow'] },
    { name: 'path not a string', body: { groups: [{ disallow: [1] }] }, status: 400, fields: ['groups[0].disallow[0]'] },
    { name: 'path too long', body: { groups: [{ disallow: [`/${'a'.repeat(1000)}`] }] }, status: 400, fields: ['groups[0].disallow[0]'] },
    {
      name: 'more than 500 rules in all',
      body: { groups: [{ disallow: Array.from({ length: 300 }, (_, i) => `/a${i}`) }, { allow: Array.from({ length: 201 }, (_, i) => `/b${i}`) }] },
      status: 400,
      fields: ['groups'],
    },
    { name: 'negative crawl delay', body: { groups: [{ crawl_delay: -1 }] }, status: 400, fields: ['groups[0].crawl_delay'] },
    { name: 'crawl delay over a day', body: { groups: [{ crawl_delay: 86401 }] }, status: 400, fields: ['groups[0].crawl_delay'] },
    { name: 'crawl delay too precise', body: { groups: [{ crawl_delay: 0.0001 }] }, status: 400, fields: ['groups[0].crawl_delay'] },
    { name: 'crawl delay a string', body: { groups: [{ crawl_delay: '10' }] }, status: 400, fields: ['groups[0].crawl_delay'] },
    { name: 'too many sitemaps', body: one({ sitemaps: Array.from({ length: 51 }, (_, i) => `https://example.com/s${i}.xml`) }), status: 400, fields: ['sitemaps'] },
    { name: 'sitemap too long', body: one({ sitemaps: [`https://example.com/${'a'.repeat(2048)}`] }), status: 400, fields: ['sitemaps[0]'] },
    { name: 'empty host', body: one({ host: '' }), status: 400, fields: ['host'] },
    { name: 'too many comments', body: one({ comments: Array.from({ length: 51 }, () => 'c') }), status: 400, fields: ['comments'] },
    { name: 'comment too long', body: one({ comments: ['c'.repeat(501)] }), status: 400, fields: ['comments[0]'] },
    { name: 'unknown top-level field', body: one({ noindex: ['/x'] }), status: 400, fields: ['noindex'] },
    { name: 'unknown field in a group', body: { groups: [{ disallow: ['/'], noindex: ['/x'] }] }, status: 400, fields: ['groups[0].noindex'] },
    {
      name: 'file larger than 500 KiB',
      body: {
        comments: Array.from({ length: 50 }, () => 'c'.repeat(500)),
        groups: [{ disallow: Array.from({ length: 500 }, () => `/${'a'.repeat(999)}`) }],
      },
      status: 400,
      fields: ['body'],
    },
  ],
} satisfies ToolCaseFile;
