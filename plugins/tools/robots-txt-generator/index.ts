/**
 * robots-txt-generator: build a robots.txt (RFC 9309 groups, plus the
 * widely read Crawl-delay, Host and Sitemap lines) from structured input,
 * refusing anything that could inject lines, and optionally check URLs
 * against the result with robots-parser (MIT).
 */
import robotsParserModule from 'robots-parser';
import { defineTool, StrictObject, Type, invalidMany } from '../../sdk/index.js';
import type { FieldIssue } from '../../../core/errors.js';

interface Robot {
  getMatchingLineNumber(url: string, ua?: string): number;
}
// robots-parser is CommonJS (`module.exports = function`) while its types
// declare an ES default export: take whichever the loader hands us.
const robotsParser: (url: string, content: string) => Robot =
  ((robotsParserModule as unknown as { default?: unknown }).default ?? robotsParserModule) as (url: string, content: string) => Robot;

const MAX_GROUPS = 50;
const MAX_AGENTS = 20;
const MAX_RULES = 500;
const MAX_PATH = 1000;
const MAX_URL = 2048;
const MAX_SITEMAPS = 50;
const MAX_COMMENTS = 50;
const MAX_CHECKS = 50;
/** Google reads the first 500 KiB of a robots.txt; a larger file is refused. */
const MAX_BYTES = 500 * 1024;
/** Matching steps allowed for `check` (see matchCost); the worst case takes about 40 ms. */
const CHECK_BUDGET = 3_000_000;

const Token = Type.String({ minLength: 1, maxLength: 100 });
const RulePaths = (what: string) =>
  Type.Optional(Type.Array(Type.String({ maxLength: MAX_PATH }), {
    maxItems: MAX_RULES,
    description: what,
  }));

const request = StrictObject({
  groups: Type.Array(
    StrictObject({
      user_agents: Type.Optional(Type.Array(Token, {
        minItems: 1,
        maxItems: MAX_AGENTS,
        default: ['*'],
        description: "Crawler product tokens this group applies to (letters, digits, '.', '_', '-'), or '*' for every crawler.",
      })),
      allow: RulePaths("Allow paths: start with '/' or '*', may use '*' wildcards and a final '$'; no whitespace or '#'."),
      disallow: RulePaths("Disallow paths, same syntax; an empty string writes 'Disallow:' (allow everything)."),
      crawl_delay: Type.Optional(Type.Number({
        minimum: 0,
        maximum: 86400,
        description: 'Seconds between requests (Crawl-delay, read by Bing and Yandex, ignored by Google); at most 3 decimals.',
      })),
    }),
    { minItems: 1, maxItems: MAX_GROUPS, description: `Groups of rules, written in order (at most ${MAX_RULES} allow + disallow rules in all).` },
  ),
  sitemaps: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: MAX_URL }), {
    maxItems: MAX_SITEMAPS,
    description: 'Absolute http(s) sitemap URLs, written as Sitemap lines in normalised form.',
  })),
  host: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 253,
    description: 'Preferred host name, optionally with a port (the Yandex Host directive); written lower-cased, IDNs in punycode.',
  })),
  comments: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), {
    maxItems: MAX_COMMENTS,
    description: 'Comment lines for the top of the file (each written as "# text").',
  })),
  check: Type.Optional(Type.Array(
    StrictObject({
      url: Type.String({ minLength: 1, maxLength: MAX_URL, description: 'Absolute http(s) URL to test.' }),
      user_agent: Type.Optional(Type.String({
        minLength: 1,
        maxLength: 100,
        default: '*',
        description: "Crawler product token to test as (e.g. 'Googlebot'), or '*'.",
      })),
    }),
    { maxItems: MAX_CHECKS, description: 'URLs to test against the generated file with robots-parser.' },
  )),
});

const response = Type.Object({
  content: Type.String({ description: 'The robots.txt text: UTF-8, LF line endings, ending with a newline.' }),
  line_count: Type.Integer({ description: 'Number of lines in content.' }),
  byte_length: Type.Integer({ description: 'Size of content in UTF-8 bytes.' }),
  checks: Type.Optional(Type.Array(Type.Object({
    url: Type.String(),
    user_agent: Type.String(),
    allowed: Type.Boolean({ description: 'Whether the crawler may fetch the URL under content.' }),
    matching_line: Type.Union([Type.Integer(), Type.Null()], { description: '1-based line of content that decided, or null when no rule matched (allowed).' }),
    matching_rule: Type.Union([Type.String(), Type.Null()], { description: 'The text of that line.' }),
  }), { description: 'Only when check was given: one entry per check, in order.' })),
});

/** Characters that end or break a line, or cannot be written as UTF-8. */
const UNSAFE = /[\p{Cc}\u2028\u2029\uFEFF]|\p{Cs}/u;
const UNSAFE_MSG = 'must not contain control characters (CR, LF, NUL, tab...), line separators, a BOM or unpaired surrogates';
const TOKEN = /^(?:\*|[A-Za-z0-9._-]+)$/;
const TOKEN_MSG = "must be '*' or a crawler product token made of letters, digits, '.', '_' and '-' (e.g. 'Googlebot', no version)";

function tokenIssue(v: string): string | undefined {
  if (UNSAFE.test(v)) return UNSAFE_MSG;
  if (!TOKEN.test(v)) return TOKEN_MSG;
  return undefined;
}

function pathIssue(v: string, kind: 'allow' | 'disallow'): string | undefined {
  if (v === '') return kind === 'disallow' ? undefined : "must not be empty (an empty Allow has no effect; use disallow: [''] to allow everything)";
  if (UNSAFE.test(v)) return UNSAFE_MSG;
  if (v[0] !== '/' && v[0] !== '*') return "must start with '/' or '*'";
  if (/[\s#]/u.test(v)) return "must not contain whitespace or '#' (percent-encode them as %20 and %23)";
  return undefined;
}

function httpUrl(v: string): URL | string {
  if (UNSAFE.test(v)) return UNSAFE_MSG;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an absolute http or https URL';
  return u;
}

function hostValue(v: string): { host: string } | string {
  if (UNSAFE.test(v)) return UNSAFE_MSG;
  const bad = 'must be a host name or IP address, optionally with :port (e.g. "www.example.com")';
  if (!/^[^\s/?#@\\]+$/u.test(v)) return bad;
  try {
    const u = new URL(`http://${v}`);
    if (u.pathname !== '/' || u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '' || u.host === '') return bad;
    return { host: u.host };
  } catch {
    return bad;
  }
}

/** robots-parser's normalisation of rule patterns and URL paths (percent-escapes upper-cased). */
const upperEscapes = (v: string): string => v.replace(/%[0-9a-fA-F]{2}/g, (m) => m.toUpperCase());
function normalisePattern(p: string): string {
  try {
    return upperEscapes(encodeURI(p).replace(/%25/g, '%'));
  } catch {
    return p;
  }
}

/**
 * An upper bound on the steps robots-parser's matcher takes for one rule
 * and one path: exact up to the first '*' (one candidate position), then each
 * '*' widens the candidates to the whole path and each later character keeps
 * at most as many candidates as the path has copies of that character.
 * Stops early once `limit` is passed.
 */
function matchCost(pattern: string, path: string, freq: Map<string, number>, limit: number): number {
  let cost = 4 + (path.length >> 3); // the call and its candidate array
  let i = 0;
  for (; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') break;
    if (c === '$' && i + 1 === pattern.length) return cost;
    cost++;
    if (i >= path.length || path[i] !== c) return cost;
  }
  let candidates = 0;
  for (; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '$' && i + 1 === pattern.length) return cost + 1;
    if (c === '*') {
      candidates = path.length + 1;
      cost += candidates;
    } else {
      cost += candidates + 1;
      candidates = Math.min(candidates, freq.get(c) ?? 0);
      if (candidates === 0) return cost;
    }
    if (cost > limit) return cost;
  }
  return cost;
}

const formatDelay = (v: number): string => String(Object.is(v, -0) ? 0 : v);

export default defineTool({
  name: 'tool-robots-txt-generator',
  slug: 'robots-txt-generator',
  summary: 'Generate a robots.txt from groups of rules, and check URLs against it',
  description:
    'Writes a robots.txt: optional header comments, then one group per entry of `groups` (User-agent lines, Allow lines, Disallow lines, ' +
    'Crawl-delay), then Host and Sitemap lines. Groups are separated by a blank line; a group without rules gets "Disallow:" (allow all). ' +
    'Every value is checked so it cannot break a line or inject a directive. With `check`, each URL is tested against the generated file ' +
    'with robots-parser (longest match wins, Allow wins ties; a crawler without its own group follows the * group).',
  request,
  response,
  example: {
    request: {
      comments: ['robots.txt for example.com'],
      groups: [
        { user_agents: ['*'], allow: ['/admin/public/'], disallow: ['/admin/', '/*.pdf$'] },
        { user_agents: ['GPTBot', 'CCBot'], disallow: ['/'] },
      ],
      sitemaps: ['https://example.com/sitemap.xml'],
      check: [{ url: 'https://example.com/admin/users', user_agent: 'Googlebot' }],
    },
    response: {
      content:
        '# robots.txt for example.com\n\nUser-agent: *\nAllow: /admin/public/\nDisallow: /admin/\nDisallow: /*.pdf$\n\n' +
        'User-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n\nSitemap: https://example.com/sitemap.xml\n',
      line_count: 12,
      byte_length: 194,
      checks: [{ url: 'https://example.com/admin/users', user_agent: 'Googlebot', allowed: false, matching_line: 5, matching_rule: 'Disallow: /admin/' }],
    },
  },
  run(req) {
    const issues: FieldIssue[] = [];
    const bad = (field: string, message: string | undefined) => {
      if (message !== undefined) issues.push({ field, message });
    };

    // --- validate everything first, reporting every problem at once ---
    let ruleCount = 0;
    req.groups.forEach((g, gi) => {
      (g.user_agents ?? ['*']).forEach((ua, i) => bad(`groups[${gi}].user_agents[${i}]`, tokenIssue(ua)));
      (g.allow ?? []).forEach((p, i) => bad(`groups[${gi}].allow[${i}]`, pathIssue(p, 'allow')));
      (g.disallow ?? []).forEach((p, i) => bad(`groups[${gi}].disallow[${i}]`, pathIssue(p, 'disallow')));
      ruleCount += (g.allow?.length ?? 0) + (g.disallow?.length ?? 0);
      if (g.crawl_delay !== undefined && Math.round(g.crawl_delay * 1000) / 1000 !== g.crawl_delay) {
        bad(`groups[${gi}].crawl_delay`, 'must have at most 3 decimal places');
      }
    });
    if (ruleCount > MAX_RULES) bad('groups', `hold ${ruleCount} allow and disallow rules; at most ${MAX_RULES} in all`);

    const sitemaps: string[] = [];
    (req.sitemaps ?? []).forEach((s, i) => {
      if (s.includes('#')) return bad(`sitemaps[${i}]`, "must not contain '#' (a fragment would be read as a comment)");
      const u = httpUrl(s);
      if (typeof u === 'string') bad(`sitemaps[${i}]`, u);
      else sitemaps.push(u.href);
    });

    let host: string | undefined;
    if (req.host !== undefined) {
      const h = hostValue(req.host);
      if (typeof h === 'string') bad('host', h);
      else host = h.host;
    }

    (req.comments ?? []).forEach((c, i) => bad(`comments[${i}]`, UNSAFE.test(c) ? UNSAFE_MSG : undefined));

    const checks = req.check ?? [];
    const checkUrls: (URL | undefined)[] = checks.map((c, i) => {
      bad(`check[${i}].user_agent`, tokenIssue(c.user_agent ?? '*'));
      const u = httpUrl(c.url);
      if (typeof u === 'string') {
        bad(`check[${i}].url`, u);
        return undefined;
      }
      return u;
    });

    if (issues.length > 0) invalidMany(issues);

    // --- bound the matching work of `check` (robots-parser is O(rule x path) after a wildcard) ---
    if (checks.length > 0) {
      const normalised = req.groups.map((g) =>
        [...(g.allow ?? []), ...(g.disallow ?? [])].filter((p) => p !== '').map(normalisePattern));
      let cost = 0;
      for (let i = 0; i < checks.length && cost <= CHECK_BUDGET; i++) {
        const u = checkUrls[i]!;
        const path = upperEscapes(u.pathname + u.search);
        const freq = new Map<string, number>();
        for (const ch of path) freq.set(ch, (freq.get(ch) ?? 0) + 1);
        // The groups robots-parser will consult: those naming this crawler, else the '*' groups.
        const ua = (checks[i]!.user_agent ?? '*').toLowerCase();
        const names = (g: (typeof req.groups)[number]) => (g.user_agents ?? ['*']).map((n) => n.toLowerCase());
        let applicable = req.groups.flatMap((g, gi) => (names(g).includes(ua) ? [gi] : []));
        if (applicable.length === 0) applicable = req.groups.flatMap((g, gi) => (names(g).includes('*') ? [gi] : []));
        for (const gi of applicable) {
          for (const p of normalised[gi]!) {
            cost += matchCost(p, path, freq, CHECK_BUDGET - cost);
            if (cost > CHECK_BUDGET) break;
          }
          if (cost > CHECK_BUDGET) break;
        }
      }
      if (cost > CHECK_BUDGET) {
        invalidMany([{ field: 'check', message: 'would take too long to evaluate: use fewer or shorter URLs, or fewer or shorter wildcard (*) rules' }]);
      }
    }

    // --- write ---
    const lines: string[] = [];
    const comments = req.comments ?? [];
    if (comments.length > 0) {
      for (const c of comments) lines.push(c === '' ? '#' : `# ${c}`);
      lines.push('');
    }
    req.groups.forEach((g, gi) => {
      if (gi > 0) lines.push('');
      for (const ua of g.user_agents ?? ['*']) lines.push(`User-agent: ${ua}`);
      const allow = g.allow ?? [];
      const disallow = g.disallow ?? [];
      for (const p of allow) lines.push(`Allow: ${p}`);
      for (const p of disallow) lines.push(p === '' ? 'Disallow:' : `Disallow: ${p}`);
      if (allow.length === 0 && disallow.length === 0) lines.push('Disallow:');
      if (g.crawl_delay !== undefined) lines.push(`Crawl-delay: ${formatDelay(g.crawl_delay)}`);
    });
    if (host !== undefined || sitemaps.length > 0) {
      lines.push('');
      if (host !== undefined) lines.push(`Host: ${host}`);
      for (const s of sitemaps) lines.push(`Sitemap: ${s}`);
    }
    const content = `${lines.join('\n')}\n`;
    const byteLength = Buffer.byteLength(content, 'utf8');
    if (byteLength > MAX_BYTES) {
      invalidMany([{ field: 'body', message: `the robots.txt would be ${byteLength} bytes; crawlers such as Google read only the first ${MAX_BYTES} (500 KiB)` }]);
    }
    const out: {
      content: string;
      line_count: number;
      byte_length: number;
      checks?: { url: string; user_agent: string; allowed: boolean; matching_line: number | null; matching_rule: string | null }[];
    } = { content, line_count: lines.length, byte_length: byteLength };

    if (req.check !== undefined) {
      // One parser per origin: robots.txt applies to the origin it is served from.
      const parsers = new Map<string, Robot>();
      out.checks = checks.map((c, i) => {
        const u = checkUrls[i]!;
        let robot = parsers.get(u.origin);
        if (!robot) {
          robot = robotsParser(`${u.origin}/robots.txt`, content);
          parsers.set(u.origin, robot);
        }
        const ua = c.user_agent ?? '*';
        // One matcher pass: the deciding line says allow or disallow (no line: allowed).
        const line = robot.getMatchingLineNumber(u.href, ua);
        const matching = typeof line === 'number' && line >= 1 && line <= lines.length ? line : null;
        const rule = matching === null ? null : lines[matching - 1]!;
        return {
          url: c.url,
          user_agent: ua,
          allowed: rule === null || rule.startsWith('Allow:'),
          matching_line: matching,
          matching_rule: rule,
        };
      });
    }
    return out;
  },
});
