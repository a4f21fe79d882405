/**
 * URLs as a crawl sees them: one canonical spelling per page (so the same
 * page under different spellings is one frontier entry), and the trap
 * defences that keep a crawl out of infinite URL spaces: a limit per path
 * pattern (`/item/{n}`), calendar-like links (`/calendar/2026/11` ->
 * `/2026/12` -> ...), path segments that repeat (`/a/b/a/b/a/b`, relative
 * links resolved against themselves), and URLs too long to be a page.
 * Pure: no I/O.
 */

/** Longer canonical URLs are not crawled (a trap sign, and the frontier's index bound). */
export const MAX_URL_LENGTH = 2048;

/** Query parameters that only track the visit (dropped: the page is the same without them). */
const TRACKING = /^(utm_[a-z0-9_]+|gclid|gclsrc|dclid|gbraid|wbraid|fbclid|msclkid|yclid|twclid|ttclid|li_fat_id|mc_cid|mc_eid|igshid|_ga|_gl|_hsenc|_hsmi|__hssc|__hstc|__hsfp|hsctatracking|mkt_tok|oly_anon_id|oly_enc_id|vero_id|vero_conv|wickedid|rb_clickid|s_cid|srsltid|ref_src|spm)$/i;
/** Session ids in the query: the same page for every visitor. */
const SESSION = /^(jsessionid|phpsessid|sessionid|aspsessionid[a-z]*|cfid|cftoken|sid)$/i;
const UNRESERVED = /%(2[DdEe]|3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|5[Ff]|6[1-9A-Fa-f]|7[0-9Aa]|7[Ee])/g;

/** Percent-encodings in one spelling: unreserved characters decoded, the rest in upper-case hex. */
function normalisePercent(s: string): string {
  return s
    .replace(UNRESERVED, (m) => {
      const c = String.fromCharCode(parseInt(m.slice(1), 16));
      return /[A-Za-z0-9\-._~]/.test(c) ? c : m.toUpperCase();
    })
    .replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase());
}

/**
 * The canonical spelling of an http(s) URL, or undefined for anything else
 * (other schemes, credentials, malformed). Scheme and host in lower case
 * and the default port dropped (WHATWG URL does both), the fragment
 * dropped, `;jsessionid=` path parameters dropped, percent-encodings in one
 * spelling, tracking and session parameters dropped, the remaining query
 * sorted by name (a stable sort: repeated names keep their order), and an
 * empty query removed. The path is kept as written otherwise (a trailing
 * slash can be a different page).
 */
export function canonicalUrl(raw: string, base?: string): string | undefined {
  let u: URL;
  try {
    u = base === undefined ? new URL(raw) : new URL(raw, base);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  if (u.username !== '' || u.password !== '') return undefined;
  if (u.hostname === '') return undefined;
  u.hash = '';
  const path = normalisePercent(u.pathname.replace(/;(jsessionid|phpsessid|sid)=[^/?#]*/gi, ''));
  const params: [string, string][] = [];
  for (const [k, v] of u.searchParams) {
    if (TRACKING.test(k) || SESSION.test(k)) continue;
    params.push([k, v]);
  }
  params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const query = params.length === 0 ? '' : `?${new URLSearchParams(params).toString()}`;
  // Serialised by URL once more, so the result is what any URL parser gives back for it (canonicalUrl is idempotent).
  return new URL(`${u.protocol}//${u.host}${path}${query}`).href;
}

/** Extensions of files that are not web pages (not fetched: a crawl indexes pages). */
const BINARY = new Set([
  'jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'bmp', 'ico', 'svg', 'tif', 'tiff', 'heic',
  'mp3', 'mp4', 'm4a', 'm4v', 'mov', 'avi', 'mkv', 'webm', 'wav', 'ogg', 'flac', 'wmv',
  'zip', 'gz', 'tgz', 'bz2', 'xz', '7z', 'rar', 'tar', 'dmg', 'iso', 'exe', 'msi', 'apk', 'deb', 'rpm', 'bin',
  'pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'epub',
  'css', 'js', 'mjs', 'json', 'woff', 'woff2', 'ttf', 'otf', 'eot', 'map', 'wasm',
]);

/** Extensions of documents a crawl reads when it includes documents (include_documents): PDF and DOCX. */
const DOCUMENT_EXTENSIONS = new Set(['pdf', 'docx']);

const extensionOf = (url: string): string | undefined => {
  const path = new URL(url).pathname;
  const dot = path.lastIndexOf('.');
  if (dot < 0 || dot < path.lastIndexOf('/')) return undefined;
  return path.slice(dot + 1).toLowerCase();
};

/** True when the path names a file that is not a page (by its extension). */
export function looksLikeFile(url: string): boolean {
  const ext = extensionOf(url);
  return ext !== undefined && BINARY.has(ext);
}

/** True when the path names a document a crawl can read (.pdf, .docx). */
export function looksLikeDocument(url: string): boolean {
  const ext = extensionOf(url);
  return ext !== undefined && DOCUMENT_EXTENSIONS.has(ext);
}

const segmentsOf = (url: URL): string[] => url.pathname.split('/').filter((s) => s !== '');

/**
 * The shape of a URL: host, path segments with their numbers and ids
 * generalised (`/item/123` and `/item/456` are `/item/{n}`; a hex or
 * uuid-like id is `{id}`), and the query's parameter names without values.
 * Pages of one shape are usually one template; a trap produces one shape
 * with endless values.
 */
export function pathPattern(url: string): string {
  const u = new URL(url);
  const segs = segmentsOf(u).map((s) => {
    if (/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)) return '{id}';
    if (/^[0-9a-f]{12,}$/i.test(s) && /\d/.test(s)) return '{id}';
    return s.replace(/\d+/g, '{n}');
  });
  const keys = [...new Set([...u.searchParams.keys()])].sort();
  return `${u.host}/${segs.join('/')}${keys.length > 0 ? `?${keys.join('&')}` : ''}`;
}

/** A date found in a URL: the URL with the date taken out, and the date (UTC ms of its first day). */
export interface UrlDate {
  /** The URL's shape around the date: every URL of one calendar shares it. */
  readonly pattern: string;
  readonly at: number;
}

const validDate = (y: number, m: number, d = 1): number | undefined => {
  if (y < 1900 || y > 2200 || m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const t = Date.UTC(y, m - 1, d);
  return new Date(t).getUTCDate() === d ? t : undefined;
};

/**
 * The date in a URL, if it looks like a calendar's: in the path as
 * `/2026/11`, `/2026/11/23` or a segment `2026-11`, `2026-11-23`; or in
 * the query as `year=2026&month=11`, `date=2026-11-23`, `month=2026-11`.
 */
export function urlDate(url: string): UrlDate | undefined {
  const u = new URL(url);
  const segs = segmentsOf(u);
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const iso = /^(\d{4})-(\d{1,2})(?:-(\d{1,2}))?$/.exec(s);
    if (iso) {
      const at = validDate(Number(iso[1]), Number(iso[2]), iso[3] === undefined ? 1 : Number(iso[3]));
      if (at !== undefined) return { pattern: `${u.host}/${[...segs.slice(0, i), '{date}', ...segs.slice(i + 1)].join('/')}${u.search}`, at };
    }
    if (/^\d{4}$/.test(s) && i + 1 < segs.length && /^\d{1,2}$/.test(segs[i + 1]!)) {
      const day = i + 2 < segs.length && /^\d{1,2}$/.test(segs[i + 2]!) ? Number(segs[i + 2]) : undefined;
      const at = validDate(Number(s), Number(segs[i + 1]), day ?? 1);
      if (at !== undefined) {
        const rest = segs.slice(i + (day === undefined ? 2 : 3));
        return { pattern: `${u.host}/${[...segs.slice(0, i), '{date}', ...rest].join('/')}${u.search}`, at };
      }
    }
  }
  const q = u.searchParams;
  const generic = (skip: readonly string[]) => {
    const p = new URLSearchParams([...q].filter(([k]) => !skip.includes(k)));
    const rest = p.toString();
    return `${u.host}${u.pathname}?{date}${rest === '' ? '' : `&${rest}`}`;
  };
  const year = q.get('year') ?? q.get('y');
  const month = q.get('month') ?? q.get('m');
  if (year !== null && month !== null && /^\d{4}$/.test(year) && /^\d{1,2}$/.test(month)) {
    const at = validDate(Number(year), Number(month), Number(q.get('day') ?? q.get('d') ?? 1) || 1);
    if (at !== undefined) return { pattern: generic(['year', 'y', 'month', 'm', 'day', 'd']), at };
  }
  for (const key of ['date', 'day', 'month', 'week']) {
    const v = q.get(key);
    const m = v === null ? null : /^(\d{4})-(\d{1,2})(?:-(\d{1,2}))?$/.exec(v);
    if (m) {
      const at = validDate(Number(m[1]), Number(m[2]), m[3] === undefined ? 1 : Number(m[3]));
      if (at !== undefined) return { pattern: generic([key]), at };
    }
  }
  return undefined;
}

/** A path whose segments repeat: one segment 3 times or more, or a run of two repeated (`/a/b/a/b`). */
export function repeatingPath(url: string): boolean {
  const segs = segmentsOf(new URL(url));
  const counts = new Map<string, number>();
  for (const s of segs) {
    const n = (counts.get(s) ?? 0) + 1;
    if (n >= 3) return true;
    counts.set(s, n);
  }
  for (let i = 0; i + 3 < segs.length; i++) {
    if (segs[i] === segs[i + 2] && segs[i + 1] === segs[i + 3]) return true;
  }
  return false;
}

export interface TrapLimits {
  /** URLs admitted per path pattern. */
  readonly perPattern: number;
  /** Distinct dates admitted per calendar shape. */
  readonly datesPerCalendar: number;
  /** Dates further ahead than this are refused (no real page is dated years ahead). */
  readonly futureMs: number;
  /** Path segments at most. */
  readonly maxSegments: number;
}

export const DEFAULT_TRAP_LIMITS: TrapLimits = { perPattern: 500, datesPerCalendar: 24, futureMs: 366 * 86_400_000, maxSegments: 24 };

/**
 * The trap defences' memory: how many URLs each path pattern and each
 * calendar shape has admitted so far (rebuilt from the frontier when a
 * crawl resumes). `check` says why a URL is refused, if it is; `admit`
 * counts a URL that entered the frontier.
 */
export class TrapGuard {
  private readonly patterns = new Map<string, number>();
  private readonly calendars = new Map<string, Set<number>>();

  constructor(private readonly limits: TrapLimits, private readonly now: () => number) {}

  check(url: string): string | undefined {
    if (url.length > MAX_URL_LENGTH) return 'url_too_long';
    const u = new URL(url);
    if (segmentsOf(u).length > this.limits.maxSegments || repeatingPath(url)) return 'repeating_path';
    const date = urlDate(url);
    if (date !== undefined) {
      if (date.at > this.now() + this.limits.futureMs) return 'calendar';
      const seen = this.calendars.get(date.pattern);
      if (seen !== undefined && !seen.has(date.at) && seen.size >= this.limits.datesPerCalendar) return 'calendar';
    }
    if ((this.patterns.get(pathPattern(url)) ?? 0) >= this.limits.perPattern) return 'path_pattern_limit';
    return undefined;
  }

  admit(url: string): void {
    const p = pathPattern(url);
    this.patterns.set(p, (this.patterns.get(p) ?? 0) + 1);
    const date = urlDate(url);
    if (date !== undefined) {
      const seen = this.calendars.get(date.pattern) ?? new Set<number>();
      seen.add(date.at);
      this.calendars.set(date.pattern, seen);
    }
  }
}
