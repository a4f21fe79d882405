/**
 * What every search provider that speaks to a remote service needs, so each
 * provider file holds only its own wire format: the base URL (a default, an
 * operator's override, `{lang}` filled in), one guarded HTTP exchange with
 * the service's answers turned into the failures the search reports
 * (ProviderError with PROVIDER_MISCONFIGURED, PROVIDER_FAILED or
 * PROVIDER_TIMEOUT; ProviderRateLimited for 429 and 503 with Retry-After,
 * which pauses the provider), and the text helpers (markup to plain text
 * with highlights, snippets cut at a word, dates).
 *
 * A provider reaches the network only through the Egress port it is handed.
 * The base URL is operator configuration (a mirror, a self-hosted instance,
 * a test server on loopback), so private addresses are allowed, as for
 * SearXNG; the guard still refuses cloud-metadata addresses.
 */
import { decodeHTML } from 'entities';
import { isApiFailure } from '../../core/errors.js';
import type { Egress, GuardedResponse } from '../../core/ports.js';
import { ProviderRateLimited, type ParsedQuery, type ProviderKind } from '../../core/search.js';
import { stripHtmlComments } from '../../core/text.js';

export { ProviderRateLimited };
export type { ProviderKind };

/** Bytes of one answer, on the wire and decoded. */
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024;
/** One exchange's own bound; the search's provider timeout (the request's signal) bounds it too. */
export const DEFAULT_EXCHANGE_TIMEOUT_MS = 10_000;
/** Snippets are cut here, at a word boundary (the ellipsis included). */
export const SNIPPET_MAX_CHARS = 300;
/** How long a provider is paused when its service says 429 without saying how long. */
export const DEFAULT_RETRY_AFTER_MS = 60_000;
export const PROVIDER_USER_AGENT = 'Scour/1 (self-hosted search API; +https://github.com/scour)';

export type ProviderErrorCode = 'PROVIDER_MISCONFIGURED' | 'PROVIDER_FAILED' | 'PROVIDER_TIMEOUT';

/** How a provider fails: the search operation reads `code` for its warning. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly code: ProviderErrorCode;
  /** The service's HTTP status, when it answered. */
  readonly status: number | undefined;
  constructor(code: ProviderErrorCode, message: string, options: { readonly status?: number; readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
  }
}

/** What the composition root hands every built-in provider (settings come from SCOUR_PROVIDER_<ID>_*). */
export interface ProviderOptions {
  readonly egress: Egress;
  /** SCOUR_PROVIDER_<ID>_URL: replaces the provider's default base URL. */
  readonly baseUrl?: string | undefined;
  /** SCOUR_PROVIDER_<ID>_KEY. */
  readonly key?: string | undefined;
  /** SCOUR_CONTACT_EMAIL: sent where a service asks for a contact (OpenAlex's and Crossref's polite pools). */
  readonly contactEmail?: string | undefined;
  /** One exchange's bound (default 10 s); the search's provider timeout bounds it too. */
  readonly timeoutMs?: number | undefined;
}

// ---------------------------------------------------------------------------
// Base URLs

export interface Base {
  /** Without credentials and without a trailing slash. */
  readonly url: string;
  /** Basic auth from user:pass@ in the configured URL. */
  readonly authorization: string | undefined;
}

/**
 * The base URL a provider speaks to: `configured` (an override) or
 * `fallback`, with `{lang}` replaced by `lang` wherever it appears. Throws
 * (at boot) on a URL that is not absolute http(s) or has a query or
 * fragment; user:pass@ becomes Basic auth.
 */
export function baseUrl(provider: string, configured: string | undefined, fallback: string, lang = 'en'): Base {
  const raw = (configured ?? fallback).trim().replaceAll('{lang}', encodeURIComponent(lang));
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`${provider}: base URL ${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${provider}: base URL must be http or https, not ${u.protocol}`);
  if (u.search !== '' || u.hash !== '') throw new Error(`${provider}: base URL must not have a query or fragment`);
  let authorization: string | undefined;
  if (u.username !== '' || u.password !== '') {
    authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`, 'utf8').toString('base64')}`;
    u.username = '';
    u.password = '';
  }
  return { url: `${u.origin}${u.pathname.replace(/(?<!\/)\/+$/, '').replace(/^\/$/, '')}`, authorization };
}

/** `base` with `{lang}` kept for the request to fill (wikipedia picks the wiki per request). */
export function hasLangSlot(configured: string | undefined, fallback: string): boolean {
  return (configured ?? fallback).includes('{lang}');
}

// ---------------------------------------------------------------------------
// One exchange

export interface ExchangeRequest {
  /** The provider's id, for messages. */
  readonly provider: string;
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs?: number | undefined;
  readonly signal: AbortSignal;
  /**
   * Statuses besides 2xx resolved with the answer instead of rejected, for a
   * service whose error body says more than its status (Stack Exchange's 400
   * with error_name throttle_violation, Crossref's 400 validation-failure and
   * the rate-limit headers of its 429, arXiv's 400 with an Atom error feed,
   * OpenAlex's 403 that is a refused parameter or a rate limit): the
   * provider maps them itself.
   */
  readonly answerStatuses?: readonly number[];
  /**
   * The service's own reading of a non-2xx answer, asked before the usual
   * mapping: the error to reject with (Google's 403 dailyLimitExceeded is a
   * rate limit, Brave's 422 SUBSCRIPTION_TOKEN_INVALID a refused key), or
   * undefined for the usual mapping.
   */
  readonly failure?: (answer: Exchanged) => Error | undefined;
}

export interface Exchanged {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

/** Milliseconds a `Retry-After` asks for (seconds, or an HTTP date), or undefined. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  if (!Number.isNaN(t)) return Math.max(0, t - now);
  return undefined;
}

/** The first characters of a body, as plain text, for messages. */
export function excerpt(text: string, max = 160): string {
  const t = plainText(text);
  return t.length > max ? `${t.slice(0, max - 3)}...` : t;
}

/** A service's own error text from a JSON body, when it has one in a usual place, else the start of the body. */
export function errorText(text: string): string {
  try {
    const j: unknown = JSON.parse(text);
    if (isRecord(j)) {
      for (const k of ['error_message', 'message', 'detail', 'error', 'info']) {
        const v = j[k];
        if (typeof v === 'string' && v.trim() !== '') return v.trim().slice(0, 300);
        if (isRecord(v)) {
          for (const k2 of ['message', 'reason', 'detail', 'type']) {
            const v2 = v[k2];
            if (typeof v2 === 'string' && v2.trim() !== '') return v2.trim().slice(0, 300);
          }
        }
      }
      if (Array.isArray(j.errors) && isRecord(j.errors[0])) {
        const e = j.errors[0] as Record<string, unknown>;
        const m = e.message ?? e.detail ?? e.title;
        if (typeof m === 'string') return m.slice(0, 300);
      }
    }
  } catch {
    // not JSON
  }
  return excerpt(text);
}

function egressFailure(provider: string, where: string, err: unknown, timeoutMs: number): ProviderError {
  if (isApiFailure(err)) {
    const detail = (err as { details?: unknown }).details;
    const why = typeof detail === 'string' && detail !== '' ? `${err.message}: ${detail}` : err.message;
    switch (err._tag) {
      case 'TargetTimeout':
        return new ProviderError('PROVIDER_TIMEOUT', `${provider} at ${where} did not answer within ${timeoutMs / 1000} s`, { cause: err });
      case 'TargetNotAllowed':
        return new ProviderError('PROVIDER_MISCONFIGURED', `${provider} at ${where} may not be reached (${why}): check SCOUR_PROVIDER_${envId(provider)}_URL`, { cause: err });
      case 'TargetUnreachable':
        return new ProviderError('PROVIDER_FAILED', `${provider} at ${where} could not be reached (${why})`, { cause: err });
      default:
        return new ProviderError('PROVIDER_FAILED', `${provider} at ${where} failed (${why})`, { cause: err });
    }
  }
  return new ProviderError('PROVIDER_FAILED', `${provider} at ${where} failed (${err instanceof Error ? err.message : String(err)})`, { cause: err });
}

/** The id as it appears in SCOUR_PROVIDER_<ID>_*: upper case, hyphens as underscores. */
export const envId = (id: string): string => id.toUpperCase().replace(/-/g, '_');

/**
 * One guarded exchange with a provider's service; resolves with the answer
 * only when it is 2xx (or one of `answerStatuses`). Otherwise rejects with:
 * - ProviderRateLimited on 429, and on 503 with a Retry-After (the pause is
 *   the Retry-After, or a minute when none is given);
 * - ProviderError PROVIDER_MISCONFIGURED on 401 and 403 (a key refused, an
 *   API not enabled), PROVIDER_FAILED on any other status or a transport
 *   failure, PROVIDER_TIMEOUT past `timeoutMs`;
 * - the signal's reason when the search gave up on it.
 * A request's `failure` reads the service's own signals in a non-2xx answer
 * first; what it returns is rejected with instead.
 */
export async function exchange(egress: Egress, req: ExchangeRequest): Promise<Exchanged> {
  const where = endpointOf(req.url);
  const timeoutMs = req.timeoutMs ?? DEFAULT_EXCHANGE_TIMEOUT_MS;
  let res: GuardedResponse;
  try {
    res = await egress.fetch(req.url, {
      allowPrivate: true,
      method: req.method ?? 'GET',
      headers: { 'user-agent': PROVIDER_USER_AGENT, 'accept-encoding': 'gzip, deflate', ...req.headers },
      ...(req.body === undefined ? {} : { body: req.body }),
      followRedirects: true,
      maxRedirects: 3,
      maxBodyBytes: MAX_ANSWER_BYTES,
      maxDecodedBytes: MAX_ANSWER_BYTES,
      timeoutMs,
      signal: req.signal,
    });
  } catch (err) {
    if (req.signal.aborted) throw req.signal.reason;
    throw egressFailure(req.provider, where, err, timeoutMs);
  }
  const text = new TextDecoder('utf-8').decode(res.body);
  const status = res.statusCode;
  if ((status >= 200 && status <= 299) || req.answerStatuses?.includes(status) === true) return { status, headers: res.headers, text };
  const own = req.failure?.({ status, headers: res.headers, text });
  if (own !== undefined) throw own;
  const said = errorText(text);
  const after = retryAfterMs(res.headers['retry-after']);
  if (status === 429 || (status === 503 && after !== undefined)) {
    const ms = after ?? DEFAULT_RETRY_AFTER_MS;
    throw new ProviderRateLimited(`HTTP ${status}${said ? ` (${said})` : ''}, Retry-After ${after === undefined ? 'not given' : `${Math.ceil(ms / 1000)} s`}`, Math.max(1000, ms));
  }
  if (status === 401 || status === 403) {
    throw new ProviderError('PROVIDER_MISCONFIGURED', `${req.provider} at ${where} refused Scour (HTTP ${status}${said ? `: ${said}` : ''}): check SCOUR_PROVIDER_${envId(req.provider)}_KEY`, { status });
  }
  throw new ProviderError('PROVIDER_FAILED', `${req.provider} at ${where} answered HTTP ${status}${said ? `: ${said}` : ''}`, { status });
}

/** `exchange`, with the body parsed as JSON (an object or array); invalid JSON is PROVIDER_FAILED. */
export async function exchangeJson(egress: Egress, req: ExchangeRequest): Promise<{ readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly json: unknown }> {
  const r = await exchange(egress, { ...req, headers: { accept: 'application/json', ...req.headers } });
  let json: unknown;
  try {
    json = JSON.parse(r.text);
  } catch {
    const type = r.headers['content-type'] ?? 'no content type';
    throw new ProviderError('PROVIDER_FAILED', `${req.provider} at ${endpointOf(req.url)} answered HTTP ${r.status} with invalid JSON (${type}${r.text.trim() === '' ? ', empty body' : `: ${excerpt(r.text)}`})`, { status: r.status });
  }
  if (json === null || typeof json !== 'object') {
    throw new ProviderError('PROVIDER_FAILED', `${req.provider} at ${endpointOf(req.url)} answered JSON that is not an object`, { status: r.status });
  }
  return { status: r.status, headers: r.headers, json };
}

/** A URL without its query, for messages (keys travel in queries). */
export function endpointOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    const cut = url.search(/[?#]/);
    return cut < 0 ? url : url.slice(0, cut);
  }
}

// ---------------------------------------------------------------------------
// Queries

/** Letter-and-digit runs of a text: what a search service would index of it. */
export function queryWords(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The words of `text` for a service's query syntax, its operator words
 * (AND, OR, NOT, ...) lower-cased so they stay words: undefined when nothing
 * is searchable.
 */
export function searchableWords(text: string, operators: ReadonlySet<string> = new Set(['AND', 'OR', 'NOT'])): string[] | undefined {
  const w = queryWords(text).map((x) => (operators.has(x) ? x.toLowerCase() : x));
  return w.length === 0 ? undefined : w;
}

/** One word, or a quoted phrase of several, for services whose syntax quotes phrases; undefined when nothing is searchable. */
export function wordOrPhrase(text: string, operators?: ReadonlySet<string>): string | undefined {
  const w = searchableWords(text, operators);
  if (w === undefined) return undefined;
  return w.length === 1 ? w[0] : `"${w.join(' ')}"`;
}

/** The query's plain words: `terms` less the words of its required items (those are sent as phrases). */
export function plainTerms(query: ParsedQuery): string[] {
  const left = [...query.terms];
  for (const group of query.required) {
    for (const { item: it } of group) {
      for (const w of it.text.split(' ')) {
        const at = left.indexOf(w);
        if (at >= 0) left.splice(at, 1);
      }
    }
  }
  return left;
}

// ---------------------------------------------------------------------------
// Text

/** Tags a highlighter wraps words in: dropped without a space. Others become a space. */
const INLINE_TAG = /<\/?(?:b|i|em|strong|mark|span|u|small|sub|sup|a|abbr|code|font)\b[^<>]*>/gi;
const ANY_TAG = /<\/?[a-zA-Z][^<>]*>/g;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Plain text from a field that may hold markup: tags and entities gone, whitespace collapsed. */
export function plainText(value: string): string {
  return decodeHTML(stripHtmlComments(value.replace(INLINE_TAG, ''), ' ').replace(ANY_TAG, ' '))
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/**
 * Plain text and highlights from a snippet whose matches are wrapped in a
 * tag (`<span class="searchmatch">` of MediaWiki, `<em>` of Algolia,
 * `<strong>` of Brave, `<b>` of Google): `open` matches the opening tag and
 * `close` its closing tag. Highlights are [start, end) UTF-16 offsets into
 * the returned text, which is cut to `max` at a word boundary (highlights
 * past the cut are dropped).
 */
export function markedText(html: string, open: RegExp, close: RegExp, max = SNIPPET_MAX_CHARS): { text: string; highlights: [number, number][] } {
  const START = '\u0001', END = '\u0002';
  const o = new RegExp(open.source, open.flags.includes('g') ? open.flags : `${open.flags}g`);
  const c = new RegExp(close.source, close.flags.includes('g') ? close.flags : `${close.flags}g`);
  // Markers survive plainText's tag removal because they are neither tags nor entities; control characters in the source are removed first.
  const marked = html.replace(/[\u0001\u0002]/g, '').replace(o, START).replace(c, END);
  const flat = decodeHTML(stripHtmlComments(marked.replace(INLINE_TAG, ''), ' ').replace(ANY_TAG, ' '))
    .replace(/[\p{Zl}\p{Zp}\t\n\r\v\f]/gu, ' ')
    .replace(/[\p{Cf}]/gu, ' ')
    .replace(/ +/gu, ' ')
    .trim();
  let text = '';
  const highlights: [number, number][] = [];
  let at = -1;
  for (const ch of flat) {
    if (ch === START) { if (at < 0) at = text.length; continue; }
    if (ch === END) {
      if (at >= 0) {
        let a = at, b = text.length;
        while (a < b && text[a] === ' ') a++;
        while (b > a && text[b - 1] === ' ') b--;
        if (b > a) highlights.push([a, b]);
      }
      at = -1;
      continue;
    }
    if (/[\p{Cc}]/u.test(ch)) { text += ' '; continue; }
    text += ch;
  }
  const cut = cutAtWord(text, max);
  if (cut === text) return { text, highlights };
  const limit = cut.endsWith('\u2026') ? cut.length - 1 : cut.length;
  return { text: cut, highlights: highlights.filter(([, b]) => b <= limit) };
}

/** `text` cut to at most `max` characters at a word boundary, with an ellipsis when cut. */
export function cutAtWord(text: string, max = SNIPPET_MAX_CHARS): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  if (space >= max / 2) cut = cut.slice(0, space);
  else if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut.replace(/(?<![\s,;:.!?\-\u2013\u2014])[\s,;:.!?\-\u2013\u2014]+$/u, '')}\u2026`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Epoch ms of an ISO 8601 date or date-time (no offset means UTC), or null. */
export function parseIsoDate(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const m = ISO_DATE.exec(value.trim());
  if (m === null) return null;
  const [y, mo, d, h = '0', mi = '0', s = '0', frac = '0'] = m.slice(1, 8) as [string, string, string, string?, string?, string?, string?];
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const ms = Math.floor(Number(`0.${frac}`) * 1000);
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(t);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  let offsetMs = 0;
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
    if (z === null) return null;
    const oh = Number(z[2]), om = Number(z[3] ?? '0');
    if (oh > 23 || om > 59) return null;
    offsetMs = (z[1] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return t - offsetMs;
}

/** Epoch ms of a date given as parts ([year, month?, day?], Crossref's date-parts), or null. */
export function dateFromParts(parts: unknown): number | null {
  if (!Array.isArray(parts) || parts.length === 0) return null;
  const [y, m = 1, d = 1] = parts as unknown[];
  if (typeof y !== 'number' || !Number.isInteger(y) || y < 1000 || y > 9999) return null;
  const month = typeof m === 'number' && m >= 1 && m <= 12 ? m : 1;
  const day = typeof d === 'number' && d >= 1 && d <= 31 ? d : 1;
  return Date.UTC(y, month - 1, day);
}

/** An absolute http(s) URL with a host, as a string, or undefined. */
export function httpUrl(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return undefined;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' ? u.href : undefined;
}

/** A DOI, bare and lower case (`10.1000/xyz`), from a DOI or a doi.org URL; undefined otherwise. */
export function bareDoi(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  // The last word (a DOI has no white space), from its first `10.<registrant>/` on, with something after the slash.
  const last = raw.trim().replace(/^https?:\/\/(dx\.)?doi\.org\//i, '').replace(/^doi:\s*/i, '').split(/\s/).pop() ?? '';
  const m = /10\.\d{4,9}\//.exec(last);
  if (m === null || last.length <= m.index + m[0].length) return undefined;
  return last.slice(m.index).toLowerCase();
}
