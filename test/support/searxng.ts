/**
 * A fake SearXNG instance on loopback (node:http, 127.0.0.1, port 0) for the
 * searxng provider's tests and the search operation's. It speaks SearXNG's
 * JSON API as SearXNG's source does (read from searxng/searxng):
 *
 * - `GET|POST /search` with `format=json` answers `{"query", "results",
 *   "answers", "corrections", "infoboxes", "suggestions",
 *   "unresponsive_engines"}` (webutils.get_json_response; `number_of_results`
 *   only when set with `setNumberOfResults`, as instances before 2026 did),
 *   serialised the way Python's json.dumps does it (", " and ": ", non-ASCII
 *   as \uXXXX, `score` as a float: 1.0);
 * - each result is a LegacyResult's dict after normalisation
 *   (result_types/_base.py): the engine's keys (url, title, content,
 *   publishedDate, thumbnail) then engine, template "default.html",
 *   parsed_url (urlparse's 6 strings), img_src, thumbnail, priority, engines,
 *   positions, score (results.calculate_score: len(positions) x sum of
 *   1/position), category, publishedDate (isoformat, or null) and pubdate
 *   ("%Y-%m-%d %H:%M:%S%z") when dated; results are ordered by score;
 * - `unresponsive_engines` is `[[engine, reason], ...]` sorted by engine;
 * - parameters are checked as webadapter.py does: a bad pageno, safesearch
 *   (0-2), time_range (day|week|month|year, '' and 'None' mean none) or
 *   language (^[a-z]{2,3}(-[a-zA-Z]{2})?$, auto) is a 400
 *   `{"error": "Invalid value <v> for parameter <name>"}` ("Empty <name>
 *   parameter" when empty); no q is a 400 `{"error": "No query"}`; a format
 *   other than html, json, csv, rss means html (answered with a small HTML
 *   page); unknown categories are ignored, none means general;
 * - a format missing from `search.formats` is Werkzeug's 403 Forbidden page.
 *
 * The corpus (`setResults(array)`) is served `perPage` (default 10) a page,
 * after the filtering the instance's engines would do: only results of the
 * requested categories (a result's `category`, default general); with a
 * time_range, dated results older than the range (1, 7, 31, 366 days) are
 * dropped (undated ones are kept); with safesearch 1 or 2 results marked
 * `adult` are dropped; with a language other than all/auto results whose
 * `language` differs (primary subtag) are dropped. `setResults(fn)` or
 * `setPages(pages)` serve exactly what they return instead (fn gets the
 * parsed parameters; pages[n - 1] is page n: duplicates across pages are
 * written there). `verbatim` results are sent as given (missing or odd fields).
 *
 * Failure modes (`setMode(mode, { fromPage })`: pages below fromPage, default
 * 1, answer normally):
 *   ok             normal answers
 *   json-disabled  403 text/html, Werkzeug's Forbidden page (settings.yml search.formats without json)
 *   error          500 application/json {"error": "search error"} (an exception inside the search)
 *   rate-limited   429 text/html "Too Many Requests" (the limiter's bot detection)
 *   status         any status (`status` option) with a small text body
 *   invalid-json   200 application/json, the body cut in the middle
 *   html           200 text/html, an HTML page (a base URL that is not SearXNG's API)
 *   slow           the normal answer after `delayMs` (default 1000)
 *   hang           reads the request, never answers (close() ends the socket)
 *   unresponsive   200 with no results and unresponsive_engines (`unresponsive` option, default
 *                  [["bing", "Suspended: too many requests"], ["google", "timeout"]])
 * `setUnresponsive(list)` adds unresponsive engines to normal answers too.
 *
 * API: `const sx = await startSearxng({ results, perPage, formats, basePath })`;
 * `sx.url` (http://127.0.0.1:<port><basePath>, the base URL to configure),
 * `sx.requests` (every request: method, path, params, headers),
 * `sx.searches()` (those to <basePath>/search), `setMode`, `setResults`, `setPages`, `setUnresponsive`,
 * `setNumberOfResults`, `reset()` (requests cleared, mode ok, corpus and
 * settings as started), `close()`. Only for tests: no limits, loopback only.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What an engine would give (the fake completes it as SearXNG does). */
export interface FakeResult {
  readonly url?: string;
  readonly title?: string;
  readonly content?: string;
  /** A Date (sent as Python isoformat with +00:00), a string sent as is, or null. */
  readonly publishedDate?: Date | string | null;
  /** Default "duckduckgo". */
  readonly engine?: string;
  /** Default [engine]. */
  readonly engines?: readonly string[];
  /** Default [its position in the page, from 1]. */
  readonly positions?: readonly number[];
  /** Default calculate_score(positions). */
  readonly score?: number;
  /** The engine's first category (default general). */
  readonly category?: string;
  readonly thumbnail?: string;
  readonly template?: string;
  /** Simulated engines: the result's language (dropped when another is asked for). */
  readonly language?: string;
  /** Simulated engines: dropped with safesearch 1 or 2. */
  readonly adult?: boolean;
  /** Sent exactly as this object instead of a completed result (missing or wrong-typed fields). */
  readonly verbatim?: unknown;
}

export type SearxngMode =
  | 'ok' | 'json-disabled' | 'error' | 'rate-limited' | 'status' | 'invalid-json' | 'html' | 'slow' | 'hang' | 'unresponsive';

export interface ModeOptions {
  /** The first page the mode applies to (default 1). */
  readonly fromPage?: number;
  /** `status` mode. */
  readonly status?: number;
  /** `slow` mode (default 1000). */
  readonly delayMs?: number;
  /** `unresponsive` mode. */
  readonly unresponsive?: readonly (readonly [string, string])[];
}

/** The parameters a search was asked with, parsed as SearXNG does. */
export interface SearxngQuery {
  readonly q: string;
  readonly pageno: number;
  /** As sent, or undefined (the instance default). */
  readonly language: string | undefined;
  readonly timeRange: 'day' | 'week' | 'month' | 'year' | undefined;
  /** As sent, or undefined (the instance default, 0). */
  readonly safesearch: number | undefined;
  readonly categories: readonly string[];
}

export interface SearxngRequest {
  readonly method: string;
  readonly path: string;
  /** Query (and form body) parameters, the first value of each. */
  readonly params: Readonly<Record<string, string>>;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly at: number;
}

export interface SearxngOptions {
  readonly results?: readonly FakeResult[] | ((query: SearxngQuery) => readonly FakeResult[]);
  /** Default 10. */
  readonly perPage?: number;
  /** settings.yml search.formats (default ['html', 'json']). */
  readonly formats?: readonly string[];
  /** Served under this path (an instance behind a reverse proxy at /searxng): <basePath>/search. Default ''. */
  readonly basePath?: string;
}

export interface FakeSearxng {
  /** http://127.0.0.1:<port><basePath> */
  readonly url: string;
  readonly requests: SearxngRequest[];
  /** The requests to /search. */
  searches(): SearxngRequest[];
  setMode(mode: SearxngMode, options?: ModeOptions): void;
  setResults(results: readonly FakeResult[] | ((query: SearxngQuery) => readonly FakeResult[])): void;
  /** pages[n - 1] is page n, served as given (no filtering); pages beyond are empty. */
  setPages(pages: readonly (readonly FakeResult[])[]): void;
  setUnresponsive(engines: readonly (readonly [string, string])[]): void;
  /** Send number_of_results (as instances before 2026 did); undefined leaves it out. */
  setNumberOfResults(n: number | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Python's json.dumps

/** A number Python holds as a float (json.dumps writes 1.0, not 1). */
class PyFloat {
  constructor(readonly value: number) {}
}

function pyString(s: string): string {
  return JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function pyFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return `${n}.0`;
  return String(n).replace(/e([+-])(\d)$/, 'e$10$2');
}

/** json.dumps(value) with the default separators and ensure_ascii. */
export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof PyFloat) return pyFloat(value.value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (typeof value === 'string') return pyString(value);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
  if (typeof value === 'object') {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value)) if (v !== undefined) parts.push(`${pyString(k)}: ${pyJson(v)}`);
    return `{${parts.join(', ')}}`;
  }
  return pyString(String(value));
}

// ---------------------------------------------------------------------------
// SearXNG's shapes

const OUTPUT_FORMATS = ['html', 'csv', 'json', 'rss'];
const CATEGORIES = new Set(['general', 'images', 'videos', 'news', 'map', 'music', 'it', 'science', 'files', 'social media']);
const VALID_LANGUAGE_CODE = /^[a-z]{2,3}(-[a-zA-Z]{2})?$/;
const DAY = 86_400_000;
const RANGE_MS = { day: DAY, week: 7 * DAY, month: 31 * DAY, year: 366 * DAY } as const;
const DEFAULT_UNRESPONSIVE: readonly (readonly [string, string])[] = [['bing', 'Suspended: too many requests'], ['google', 'timeout']];

/** Werkzeug's HTTPException.get_body(). */
function werkzeugPage(code: number, name: string, description: string): string {
  return `<!doctype html>\n<html lang=en>\n<title>${code} ${name}</title>\n<h1>${name}</h1>\n<p>${description}</p>\n`;
}
export const FORBIDDEN_PAGE = werkzeugPage(403, 'Forbidden',
  'You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.');
const NOT_FOUND_PAGE = werkzeugPage(404, 'Not Found',
  'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.');

/** SearxParameterException's message. */
const parameterError = (name: string, value: string): string =>
  value === '' ? `Empty ${name} parameter` : `Invalid value ${value} for parameter ${name}`;

/** urllib.parse.urlparse(url) as the 6-item list json.dumps makes of it. */
function urlparse(url: string): string[] {
  const m = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(url);
  if (m === null) return ['', '', url, '', '', ''];
  let path = m[3] ?? '';
  let params = '';
  const semi = path.lastIndexOf(';');
  if (semi >= 0 && path.lastIndexOf('/') < semi) {
    params = path.slice(semi + 1);
    path = path.slice(0, semi);
  }
  return [(m[1] ?? '').toLowerCase(), m[2] ?? '', path, params, m[4] ?? '', m[5] ?? ''];
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** datetime.isoformat() of an aware UTC datetime. */
export function pyIsoformat(d: Date): string {
  const base = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const ms = d.getUTCMilliseconds();
  return `${base}${ms === 0 ? '' : `.${pad(ms * 1000, 6)}`}+00:00`;
}

/** strftime('%Y-%m-%d %H:%M:%S%z') of the same datetime. */
function pubdate(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}+0000`;
}

function dateOf(v: FakeResult['publishedDate']): Date | undefined {
  if (v instanceof Date) return v;
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(v) ? v : `${v}Z`);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** The dict of one result, as the JSON answer carries it. */
function serialise(r: FakeResult, position: number): Record<string, unknown> {
  const engine = r.engine ?? 'duckduckgo';
  const positions = r.positions ?? [position];
  const score = r.score ?? positions.length * positions.reduce((s, p) => s + 1 / p, 0);
  const url = r.url ?? '';
  const published = r.publishedDate instanceof Date ? pyIsoformat(r.publishedDate) : r.publishedDate ?? null;
  const dated = r.publishedDate instanceof Date ? r.publishedDate : typeof r.publishedDate === 'string' ? dateOf(r.publishedDate) : undefined;
  // The engine's keys first (dict order), then LegacyResult's defaults.
  const out: Record<string, unknown> = { url, title: r.title ?? '', content: r.content ?? '' };
  if (r.publishedDate !== undefined) out.publishedDate = published;
  if (r.thumbnail !== undefined) out.thumbnail = r.thumbnail;
  out.engine = engine;
  out.template = r.template ?? 'default.html';
  out.parsed_url = url === '' ? null : urlparse(url);
  out.img_src = '';
  out.thumbnail = r.thumbnail ?? '';
  out.priority = '';
  out.engines = [...(r.engines ?? [engine])];
  out.positions = [...positions];
  out.score = new PyFloat(score);
  out.category = r.category ?? 'general';
  out.publishedDate = published;
  if (dated !== undefined && published !== null) out.pubdate = pubdate(dated);
  return out;
}

// ---------------------------------------------------------------------------
// The server

export async function startSearxng(options: SearxngOptions = {}): Promise<FakeSearxng> {
  const requests: SearxngRequest[] = [];
  const sockets = new Set<Socket>();
  const perPage = options.perPage ?? 10;
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  let mode: SearxngMode = 'ok';
  let modeOptions: ModeOptions = {};
  let results: SearxngOptions['results'] = options.results ?? [];
  let pages: readonly (readonly FakeResult[])[] | undefined;
  let unresponsive: readonly (readonly [string, string])[] = [];
  let numberOfResults: number | undefined;
  const formats: readonly string[] = options.formats ?? ['html', 'json'];

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const sendJson = (res: ServerResponse, status: number, value: unknown) => send(res, status, 'application/json', pyJson(value));

  /** The page's results: the corpus filtered as engines would, or what the test says. */
  function pageResults(query: SearxngQuery): readonly FakeResult[] {
    if (pages !== undefined) return pages[query.pageno - 1] ?? [];
    if (typeof results === 'function') return results(query);
    const now = Date.now();
    const lang = query.language === undefined || query.language === 'all' || query.language === 'auto' ? undefined : query.language.split('-')[0];
    const kept = (results ?? []).filter((r) => {
      if (r.verbatim !== undefined) return true;
      if (!query.categories.includes(r.category ?? 'general')) return false;
      if (query.timeRange !== undefined) {
        const d = dateOf(r.publishedDate ?? undefined);
        if (d !== undefined && d.getTime() < now - RANGE_MS[query.timeRange]) return false;
      }
      if ((query.safesearch ?? 0) >= 1 && r.adult === true) return false;
      if (lang !== undefined && r.language !== undefined && r.language.split('-')[0] !== lang) return false;
      return true;
    });
    return kept.slice((query.pageno - 1) * perPage, query.pageno * perPage);
  }

  function answer(query: SearxngQuery, empty: boolean, extraUnresponsive: readonly (readonly [string, string])[]) {
    const list = empty ? [] : pageResults(query);
    const completed = list.map((r, i) => ({ verbatim: r.verbatim !== undefined, raw: r.verbatim !== undefined ? r.verbatim : serialise(r, i + 1), i }));
    const scoreOf = (raw: unknown) => ((raw as Record<string, unknown>).score as PyFloat).value;
    // get_ordered_results: best score first. With verbatim results in the page, the page is sent as given.
    const ordered = completed.some((c) => c.verbatim) ? completed : [...completed].sort((a, b) => scoreOf(b.raw) - scoreOf(a.raw) || a.i - b.i);
    const engines = [...unresponsive, ...extraUnresponsive]
      .filter((e, i, all) => all.findIndex((x) => x[0] === e[0]) === i)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const body: Record<string, unknown> = { query: query.q };
    if (numberOfResults !== undefined) body.number_of_results = numberOfResults;
    body.results = ordered.map((c) => c.raw);
    body.answers = [];
    body.corrections = [];
    body.infoboxes = [];
    body.suggestions = [];
    body.unresponsive_engines = engines.map(([e, why]) => [e, why]);
    return body;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, form: URLSearchParams) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const params: Record<string, string> = {};
    for (const [k, v] of form) if (!(k in params)) params[k] = v;
    requests.push({ method: req.method ?? 'GET', path: url.pathname, params, headers: req.headers, at: Date.now() });

    if (url.pathname !== `${basePath}/search`) {
      send(res, 404, 'text/html; charset=utf-8', NOT_FOUND_PAGE);
      return;
    }
    let format = params.format ?? 'html';
    if (!OUTPUT_FORMATS.includes(format)) format = 'html';
    const pagenoParam = params.pageno ?? '1';
    const pageno = /^\d+$/.test(pagenoParam) ? Number(pagenoParam) : 0;
    const active = (pageno || 1) >= (modeOptions.fromPage ?? 1) ? mode : 'ok';

    if (!formats.includes(format) || active === 'json-disabled') {
      send(res, 403, 'text/html; charset=utf-8', FORBIDDEN_PAGE);
      return;
    }
    if (format !== 'json') {
      send(res, 200, 'text/html; charset=utf-8', '<!DOCTYPE html>\n<html><head><title>SearXNG</title></head><body><form id="search"></form></body></html>\n');
      return;
    }
    const q = params.q ?? '';
    if (q === '') return sendJson(res, 400, { error: 'No query' });
    if (pageno < 1) return sendJson(res, 400, { error: parameterError('pageno', pagenoParam) });
    let safesearch: number | undefined;
    if (params.safesearch !== undefined) {
      if (!/^\d+$/.test(params.safesearch)) return sendJson(res, 400, { error: parameterError('safesearch', params.safesearch) });
      safesearch = Number(params.safesearch);
      if (safesearch > 2) return sendJson(res, 400, { error: parameterError('safesearch', String(safesearch)) });
    }
    let timeRange = params.time_range;
    if (timeRange === '' || timeRange === 'None') timeRange = undefined;
    if (timeRange !== undefined && !(timeRange in RANGE_MS)) return sendJson(res, 400, { error: parameterError('time_range', timeRange) });
    const language = params.language;
    if (language !== undefined && language !== 'auto' && !VALID_LANGUAGE_CODE.test(language)) {
      return sendJson(res, 400, { error: parameterError('language', language) });
    }
    const categories = (params.categories ?? '').split(',').map((c) => c.trim()).filter((c) => CATEGORIES.has(c));
    const query: SearxngQuery = {
      q, pageno, language, timeRange: timeRange as SearxngQuery['timeRange'], safesearch,
      categories: categories.length === 0 ? ['general'] : categories,
    };

    switch (active) {
      case 'error':
        return sendJson(res, 500, { error: 'search error' });
      case 'rate-limited':
        return send(res, 429, 'text/html; charset=utf-8', 'Too Many Requests');
      case 'status':
        return send(res, modeOptions.status ?? 502, 'text/plain; charset=utf-8', `status ${modeOptions.status ?? 502}`);
      case 'html':
        return send(res, 200, 'text/html; charset=utf-8', '<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>Not an API</body></html>\n');
      case 'hang':
        return; // never answers; close() destroys the socket
      case 'invalid-json': {
        const text = pyJson(answer(query, false, []));
        return send(res, 200, 'application/json', text.slice(0, Math.max(1, Math.floor(text.length / 2))));
      }
      case 'unresponsive':
        return sendJson(res, 200, answer(query, true, modeOptions.unresponsive ?? DEFAULT_UNRESPONSIVE));
      case 'slow':
        await new Promise((r) => setTimeout(r, modeOptions.delayMs ?? 1000));
        return sendJson(res, 200, answer(query, false, []));
      default:
        return sendJson(res, 200, answer(query, false, []));
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(new URL(req.url ?? '/', 'http://127.0.0.1').search);
      const type = req.headers['content-type'] ?? '';
      if (req.method === 'POST' && type.startsWith('application/x-www-form-urlencoded')) {
        for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) form.append(k, v);
      }
      handle(req, res, form).catch((err: unknown) => send(res, 500, 'text/plain', String(err)));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    requests,
    searches: () => requests.filter((r) => r.path === `${basePath}/search`),
    setMode(m, o = {}) {
      mode = m;
      modeOptions = o;
    },
    setResults(r) {
      results = r;
      pages = undefined;
    },
    setPages(p) {
      pages = p;
    },
    setUnresponsive(e) {
      unresponsive = e;
    },
    setNumberOfResults(n) {
      numberOfResults = n;
    },
    reset() {
      requests.length = 0;
      mode = 'ok';
      modeOptions = {};
      results = options.results ?? [];
      pages = undefined;
      unresponsive = [];
      numberOfResults = undefined;
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
