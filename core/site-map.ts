/**
 * A site's map (POST /v1/map, `scour map`): its bounds and defaults, which
 * hosts belong to the site, and the ranking of its URLs by a search phrase
 * (the words of the path, the query and the link's text, weighted by how
 * rare each word is among the site's URLs). What the operation and the CLI
 * share, without loading the crawler. Pure: no I/O.
 */

/** The ledger and usage operation a map is charged under (rate limits: the plan's `default` row). */
export const MAP_OPERATION = 'map';
export const DEFAULT_MAP_LIMIT = 1000;
export const MAX_MAP_LIMIT = 10_000;
/** Longest search phrase, in characters. */
export const MAX_MAP_SEARCH = 500;
/** Seconds a map may take in all (robots.txt, sitemaps and the start page); the default and the bounds of `timeout`. */
export const DEFAULT_MAP_TIMEOUT = 30;
export const MIN_MAP_TIMEOUT = 5;
export const MAX_MAP_TIMEOUT = 60;
/** Sitemap files a map fetches at most, index files nested at most this deep, page URLs read from them at most, and bytes (gunzipped) in all. */
export const MAP_SITEMAP_FILES = 50;
export const MAP_SITEMAP_DEPTH = 3;
export const MAP_SITEMAP_URLS = 50_000;
export const MAP_SITEMAP_BYTES = 50 * 1024 * 1024;
/** A link's text is cut to this many characters for its title. */
export const MAP_TITLE_LENGTH = 300;

export const SITEMAP_MODES = ['include', 'only', 'skip'] as const;
export type SitemapMode = (typeof SITEMAP_MODES)[number];

/** A host name without a leading `www.` (example.com and www.example.com are one site). */
const bare = (host: string): string => (host.startsWith('www.') ? host.slice(4) : host).toLowerCase();

/**
 * Whether `host` belongs to the site of `startHost`: the same host, its
 * `www.` twin, and with `includeSubdomains` every subdomain of the start
 * host (blog.example.com for example.com; not a sibling such as
 * api.example.com for docs.example.com). Ports and schemes do not matter.
 */
export function sameSite(startHost: string, host: string, includeSubdomains: boolean): boolean {
  const s = bare(startHost);
  const h = bare(host);
  if (h === s) return true;
  return includeSubdomains && h.endsWith(`.${s}`);
}

/** One URL of a map, as the ranking sees it. */
export interface MapCandidate {
  readonly url: string;
  readonly title?: string | undefined;
}

const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/** Whether the UTF-16 unit at `i` is part of a word: ASCII letters and digits, any letter or digit beyond ASCII, and astral characters. */
const wordUnit = (s: string, c: number, i: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c > 127 && ((c >= 0xd800 && c <= 0xdfff) || LETTER_OR_DIGIT.test(s[i]!)));

/** The words of a text: runs of letters and digits, lower case, accents folded (one scan; ASCII text is not normalised). */
export function words(text: string): string[] {
  let s = text.toLowerCase();
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 127) {
      s = s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
      break;
    }
  }
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    if (wordUnit(s, s.charCodeAt(i), i)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(s.slice(start, i));
      start = -1;
    }
  }
  if (start >= 0) out.push(s.slice(start));
  return out;
}

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** The words of a URL by where they are: the last path segment, the rest of the path and the query, the host. */
function urlWords(url: string): { last: string[]; path: string[]; host: string[]; slug: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { last: [], path: words(url), host: [], slug: url.toLowerCase() };
  }
  const segs = u.pathname.split('/').filter((s) => s !== '').map(decode);
  const last = segs.at(-1) ?? '';
  const rest = [...segs.slice(0, -1), ...[...u.searchParams].flatMap(([k, v]) => [k, v])].join(' ');
  return { last: words(last), path: words(rest), host: words(u.hostname), slug: decode(`${u.pathname}${u.search}`).toLowerCase() };
}

/** How well one query word matches one word of a URL or title: 1 the same, 0.9 a plural, 0.6 a prefix, 0.5 the same stem. */
function wordMatch(q: string, t: string): number {
  if (t === q) return 1;
  if (t === `${q}s` || q === `${t}s` || t === `${q}es` || q === `${t}es`) return 0.9;
  if (q.length >= 3 && t.startsWith(q)) return 0.6;
  // pricing / price: a common prefix of at least 4 letters, all but the last two of the shorter word.
  let common = 0;
  const most = Math.min(q.length, t.length);
  while (common < most && q.charCodeAt(common) === t.charCodeAt(common)) common++;
  return common >= 4 && common >= most - 2 ? 0.5 : 0;
}

const best = (q: string, ts: readonly string[]): number => {
  let m = 0;
  for (const t of ts) {
    const x = wordMatch(q, t);
    if (x > m) m = x;
    if (m === 1) break;
  }
  return m;
};

/** Weights of where a word is found: the page's own slug counts most. */
const WEIGHTS = { last: 3, title: 2, path: 2, host: 1 } as const;

/**
 * The candidates that match `phrase`, most relevant first. Each query word
 * scores by where it is found (the last path segment 3, the link's text 2,
 * the rest of the path and the query 2, the host 1), times how well it
 * matches (the same word, a plural, a prefix, a shared stem), times its
 * rarity among the candidates (inverse document frequency: a word every
 * URL has, like the site's name, counts for little). The phrase itself,
 * written in the path (`getting-started`) or in the text, adds a bonus;
 * URLs that match only some of the words score less. URLs that match none
 * are left out. Ties: the shallower path first, then the shorter URL, then
 * the order found. A phrase with no words (punctuation only) matches
 * nothing.
 */
export function rankByRelevance<T extends MapCandidate>(candidates: readonly T[], phrase: string): T[] {
  const terms = [...new Set(words(phrase))];
  if (terms.length === 0) return [];
  const docs = candidates.map((c) => {
    const u = urlWords(c.url);
    return { c, u, title: words(c.title ?? '') };
  });
  const matches = docs.map((d) => terms.map((q) => {
    const where = {
      last: best(q, d.u.last) * WEIGHTS.last,
      title: best(q, d.title) * WEIGHTS.title,
      path: best(q, d.u.path) * WEIGHTS.path,
      host: best(q, d.u.host) * WEIGHTS.host,
    };
    return Math.max(where.last, where.title, where.path, where.host) + 0.25 * Math.min(where.last + where.path, where.title);
  }));
  const n = candidates.length;
  const idf = terms.map((_, k) => {
    const df = matches.reduce((acc, m) => acc + (m[k]! > 0 ? 1 : 0), 0);
    return Math.log(1 + n / (1 + df));
  });
  const phraseParts = terms.length > 1 ? [terms.join('-'), terms.join('_'), terms.join(''), terms.join(' ')] : [];
  const scored: { item: T; score: number; depth: number; length: number; at: number }[] = [];
  docs.forEach((d, at) => {
    let score = 0;
    let matched = 0;
    terms.forEach((_, k) => {
      const m = matches[at]![k]!;
      if (m > 0) matched++;
      score += m * idf[k]!;
    });
    if (matched === 0) return;
    const text = d.title.join(' ');
    if (phraseParts.some((p) => d.u.slug.includes(p)) || (phraseParts.length > 0 && text.includes(phraseParts[3]!))) {
      score += 2 * idf.reduce((a, b) => a + b, 0) / terms.length;
    }
    score *= 0.5 + 0.5 * (matched / terms.length);
    let depth = 0;
    try {
      depth = new URL(d.c.url).pathname.split('/').filter((s) => s !== '').length;
    } catch {
      depth = 99;
    }
    scored.push({ item: d.c, score, depth, length: d.c.url.length, at });
  });
  scored.sort((a, b) => b.score - a.score || a.depth - b.depth || a.length - b.length || a.at - b.at);
  return scored.map((s) => s.item);
}
