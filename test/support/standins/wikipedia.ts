/**
 * A stand-in MediaWiki Action API (Wikipedia) on loopback, for the wikipedia
 * provider's tests. It answers `GET <prefix>/w/api.php?action=query&list=search`
 * as MediaWiki does (Special:ApiHelp/query+search, API:Errors and warnings,
 * Manual:Maxlag parameter):
 *
 * - `{"batchcomplete": true, "continue": {"sroffset": N, "continue": "-||"},
 *   "query": {"searchinfo": {"totalhits": N}, "search": [{"ns": 0, "title",
 *   "pageid", "snippet", "timestamp"}]}}` with formatversion=2; with
 *   formatversion 1, `"batchcomplete": ""` (and `size`/`wordcount` only when
 *   srprop asks for them, as in both); `continue` only when more hits remain;
 * - `srsearch` missing or empty: `{"error": {"code": "missingparam", "info":
 *   "The \"srsearch\" parameter must be set.", "docref": ...}, "servedby": ...}`
 *   with HTTP 200, as every MediaWiki error; a bad `srlimit` is `badinteger`;
 *   `srlimit` over 500 is cut to 500 with a warning; an unknown `action` is
 *   `badvalue`; any other path is a 404 HTML page;
 * - `setApiError(code, info, { headers, extra })` answers that error body
 *   (HTTP 200) to every search: `maxlag` (with `Retry-After` and
 *   `X-Database-Lag` headers and `lag`, `host`, `type` in the body, as the
 *   maxlag manual shows), `ratelimited`, `readapidenied`,
 *   `internal_api_error_DBQueryError`...;
 * - the shared failure modes answer as Wikimedia's edge does: rate-limited is
 *   429 text/html "Too many requests" with Retry-After; error is 503 text/html
 *   (the "Our servers are currently under maintenance or experiencing a
 *   technical issue" page, no Retry-After).
 *
 * The hits are what `setHits` gives (each one as the wiki would send it;
 * `verbatim` objects are sent as they are), served `srlimit` at a time from
 * `sroffset`; `totalhits` is their count unless `setTotalHits` says otherwise.
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

export interface WikiHit {
  readonly title: string;
  /** HTML, with `<span class="searchmatch">` around matched words. */
  readonly snippet?: string;
  /** ISO 8601, the last edit. */
  readonly timestamp?: string;
  readonly pageid?: number;
  readonly size?: number;
  readonly wordcount?: number;
}

export interface FakeWikipedia extends Standin {
  /** Requests to .../w/api.php. */
  searches(): Recorded[];
  setHits(hits: readonly (WikiHit | { readonly verbatim: unknown })[]): void;
  setTotalHits(n: number | undefined): void;
  setApiError(code: string | undefined, info?: string, options?: { readonly headers?: Record<string, string>; readonly extra?: Record<string, unknown> }): void;
  /** Answer every request to api.php with this instead (Wikimedia's 403 for a refused User-Agent, say). */
  setRaw(answer: Answer | undefined): void;
}

const SERVEDBY = 'mw-api-ext.codfw.main-6d8f9c7b5-abcde';
const DOCREF = 'See https://en.wikipedia.org/w/api.php for API usage. Subscribe to the mediawiki-api-announce mailing list at &lt;https://lists.wikimedia.org/postorius/lists/mediawiki-api-announce.lists.wikimedia.org/&gt; for notice of API deprecations and breaking changes.';

function apiError(fv2: boolean, code: string, info: string, extra: Record<string, unknown> = {}): object {
  return { error: { code, info, ...extra, ...(fv2 ? { docref: DOCREF } : { '*': DOCREF }) }, servedby: SERVEDBY };
}

export async function startWikipedia(): Promise<FakeWikipedia> {
  let hits: readonly (WikiHit | { readonly verbatim: unknown })[] = [];
  let totalHits: number | undefined;
  let error: { code: string; info: string; headers: Record<string, string>; extra: Record<string, unknown> } | undefined;
  let raw: Answer | undefined;

  const handler = (req: Recorded): Answer => {
    if (!req.path.endsWith('/w/api.php')) {
      return { status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<!DOCTYPE html><html><head><title>Not Found</title></head><body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>' };
    }
    if (raw !== undefined) return raw;
    const p = req.params;
    const fv2 = p.formatversion === '2' || p.formatversion === 'latest';
    const json = (body: object, headers: Record<string, string> = {}): Answer => {
      const code = (body as { error?: { code?: string } }).error?.code;
      // MediaWiki names the error in a header too (ApiMain::substituteResultWithError).
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', ...(code === undefined ? {} : { 'mediawiki-api-error': code }), ...headers }, body };
    };
    if (p.action !== 'query') return json(apiError(fv2, 'badvalue', `Unrecognized value for parameter "action": ${p.action ?? ''}.`));
    if (p.list !== 'search') return json({ batchcomplete: fv2 ? true : '' });
    if (p.srsearch === undefined || p.srsearch.trim() === '') return json(apiError(fv2, 'missingparam', 'The "srsearch" parameter must be set.'));
    if (error !== undefined) return json(apiError(fv2, error.code, error.info, error.extra), error.headers);

    const warnings: string[] = [];
    let limit = 10;
    if (p.srlimit !== undefined) {
      if (p.srlimit === 'max') limit = 500;
      else if (!/^\d+$/.test(p.srlimit)) return json(apiError(fv2, 'badinteger', `Invalid value "${p.srlimit}" for integer parameter "srlimit".`));
      else limit = Number(p.srlimit);
      if (limit > 500) {
        warnings.push('srlimit may not be over 500 (set to 500) for users.');
        limit = 500;
      }
      if (limit < 1) return json(apiError(fv2, 'badinteger', `Invalid value "${p.srlimit}" for integer parameter "srlimit".`));
    }
    const offset = p.sroffset !== undefined && /^\d+$/.test(p.sroffset) ? Number(p.sroffset) : 0;
    const props = new Set((p.srprop ?? 'size|wordcount|timestamp|snippet').split('|'));
    const page = hits.slice(offset, offset + limit).map((h) => {
      if ('verbatim' in h) return h.verbatim;
      const out: Record<string, unknown> = { ns: 0, title: h.title, pageid: h.pageid ?? 1000 + hits.indexOf(h) };
      if (props.has('size')) out.size = h.size ?? 1234;
      if (props.has('wordcount')) out.wordcount = h.wordcount ?? 200;
      if (props.has('snippet')) out.snippet = h.snippet ?? '';
      if (props.has('timestamp')) out.timestamp = h.timestamp ?? '2024-01-15T10:20:30Z';
      return out;
    });
    const more = offset + limit < hits.length;
    const info = new Set((p.srinfo ?? 'totalhits|suggestion|rewrittenquery').split('|'));
    const body: Record<string, unknown> = { batchcomplete: fv2 ? true : '' };
    if (more) body.continue = { sroffset: offset + limit, continue: '-||' };
    if (warnings.length > 0) body.warnings = { search: fv2 ? { warnings: warnings.join('\n') } : { '*': warnings.join('\n') } };
    body.query = {
      ...(info.has('totalhits') ? { searchinfo: { totalhits: totalHits ?? hits.length } } : {}),
      search: page,
    };
    return json(body);
  };

  const standin = await startStandin(handler, {
    rateLimited: (retryAfter) => ({
      status: 429,
      headers: { 'content-type': 'text/html; charset=utf-8', ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }) },
      body: '<!DOCTYPE html><html lang="en"><meta charset="utf-8"><title>Wikimedia Error</title><p>Too many requests (f061ab2)</p><p>Please contact noc@wikimedia.org and set a descriptive User-Agent.</p></html>',
    }),
    error: () => ({
      status: 503,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: '<!DOCTYPE html><html lang="en"><meta charset="utf-8"><title>Wikimedia Error</title><p>Our servers are currently under maintenance or experiencing a technical issue. Please try again in a few minutes.</p></html>',
    }),
  });
  const baseReset = standin.reset.bind(standin);
  return Object.assign(standin, {
    searches: () => standin.requests.filter((r) => r.path.endsWith('/w/api.php')),
    setHits(h: readonly (WikiHit | { readonly verbatim: unknown })[]) { hits = h; },
    setTotalHits(n: number | undefined) { totalHits = n; },
    setApiError(code: string | undefined, info = '', options: { readonly headers?: Record<string, string>; readonly extra?: Record<string, unknown> } = {}) {
      error = code === undefined ? undefined : { code, info, headers: { ...options.headers }, extra: { ...options.extra } };
    },
    setRaw(a: Answer | undefined) { raw = a; },
    reset() {
      baseReset();
      raw = undefined;
      hits = [];
      totalHits = undefined;
      error = undefined;
    },
  });
}
