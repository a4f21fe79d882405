/**
 * The built-in proxy provider: a fixed list of proxies from the SCOUR_PROXIES
 * setting, rotated round-robin so load spreads over every proxy that fits a
 * request, with a short skip for a proxy that just failed.
 *
 * SCOUR_PROXIES takes one of two forms (empty or unset: no proxies).
 *
 * 1. A list, entries separated by commas or newlines:
 *
 *        type[:COUNTRY]=URL
 *
 *      datacenter:US=http://user:pass@dc-us.example.net:8080,
 *      datacenter=http://10.0.0.5:3128,
 *      residential:DE=https://user-country-de:pass@gw.example.net:7000
 *
 *    `type` is `datacenter` or `residential` (any case). COUNTRY is an ISO
 *    3166-1 alpha-2 code in upper case (US, DE, GB - not UK); leaving it out
 *    (or writing `*`) declares a proxy whose exit country is not fixed.
 *    A comma inside a password must be percent-encoded (%2C), like any
 *    reserved character of a URL's userinfo.
 *
 * 2. A JSON array (a value starting with `[` or `{` is read as JSON):
 *
 *      [{ "url": "http://user:pass@host:8080", "type": "datacenter", "country": "US", "id": "dc-us-east" }]
 *
 *    `country` and `id` are optional; `id` (1-64 of A-Z a-z 0-9 . _ -)
 *    names the proxy in logs instead of the generated one.
 *
 * URL: `http://` or `https://` (TLS to the proxy) only, a host, an optional
 * port, optional credentials, nothing else (no path, query or fragment).
 * Every problem is reported at once (ConfigError): unparsable entries, other
 * schemes (SOCKS is not supported), unknown types, bad countries, the same
 * URL twice. Messages name the entry by position and never repeat a URL,
 * user name or password.
 *
 * Matching: a request with proxy_country gets only proxies of that type and
 * country; a request without proxy_country gets any proxy of that type
 * (country-fixed ones included). available() answers "type:COUNTRY" pairs,
 * and "type:*" for proxies without a fixed country.
 *
 * Ids are stable and carry no secret: the JSON `id`, else
 * `<type>-<COUNTRY|any>-<n>` (n counts from 1 within that type and country
 * in the order of the setting), e.g. `datacenter-US-1`, `residential-any-2`.
 *
 * Health: markFailed(id, untilMs) makes pick() pass over that proxy until the
 * clock reaches untilMs (epoch milliseconds), so the next requests do not
 * queue behind a proxy that just refused or timed out. It is a preference,
 * not a ban: when every remaining candidate is marked, the one that recovers
 * soonest is returned rather than none, because "none" means
 * PROXY_NOT_AVAILABLE (a 400 telling the client the server has no such
 * proxy), which would be false. `exclude` (the ids a request already tried)
 * is strict.
 */
import { ConfigError } from '../../core/config-error.js';
import { defineProxyProvider, type ProxyChoice, type ProxyProviderPlugin, type ProxyQuery } from '../sdk/scrape.js';
import { countryProblem } from '../../core/countries.js';

export type ProxyType = ProxyChoice['type'];
export const PROXY_TYPES: readonly ProxyType[] = ['datacenter', 'residential'];

/** One configured proxy. */
export interface ProxyEntry {
  /** scheme://[user:pass@]host[:port], credentials kept. */
  readonly url: string;
  readonly type: ProxyType;
  /** ISO 3166-1 alpha-2 (upper case), or undefined: exit country not fixed. */
  readonly country: string | undefined;
  /** Stable id without credentials; generated when absent. */
  readonly id?: string | undefined;
}

export interface ConfiguredProxyProvider extends ProxyProviderPlugin<'proxy-configured'> {
  /** Skip this proxy in pick() until `untilMs` (epoch ms; a past time clears the mark). Unknown ids are ignored. */
  markFailed(id: string, untilMs: number): void;
}

export interface ConfiguredProxyOptions {
  /** Clock for markFailed (default Date.now). */
  readonly now?: () => number;
}

/** A proxy URL for logs and messages: scheme, host and port, credentials masked. */
export function redactProxyUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username !== '' || u.password !== '' ? '***@' : ''}${u.host}`;
  } catch {
    return '[invalid proxy URL]';
  }
}

/** Parses SCOUR_PROXIES (format above). Throws ConfigError listing every problem. */
export function parseProxyConfig(raw: string, source = 'SCOUR_PROXIES'): ProxyEntry[] {
  const text = raw.trim();
  if (text === '') return [];
  const issues: string[] = [];
  const drafts = text.startsWith('[') || text.startsWith('{') ? draftsFromJson(text, source, issues) : draftsFromList(text, source, issues);
  const entries = checkDrafts(drafts, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return entries;
}

/** The provider over `entries` (from parseProxyConfig, or built by hand: checked the same way). */
export function createConfiguredProxyProvider(entries: readonly ProxyEntry[], options: ConfiguredProxyOptions = {}): ConfiguredProxyProvider {
  const issues: string[] = [];
  const checked = checkDrafts(entries.map((e, i) => ({
    where: `proxy entry ${i + 1}`,
    url: e.url as unknown,
    type: e.type as unknown,
    country: e.country as unknown,
    id: e.id as unknown,
  })), issues);
  if (issues.length > 0) throw new ConfigError(issues);

  const now = options.now ?? Date.now;
  const choices: ProxyChoice[] = checked.map((e) => Object.freeze({ url: e.url, id: e.id!, type: e.type, country: e.country }));
  const known = new Set(choices.map((c) => c.id));

  // One rotation per pool: "type" (any country) and "type:COUNTRY".
  interface Pool { readonly items: ProxyChoice[]; cursor: number }
  const pools = new Map<string, Pool>();
  const add = (key: string, c: ProxyChoice) => {
    let p = pools.get(key);
    if (p === undefined) pools.set(key, (p = { items: [], cursor: 0 }));
    p.items.push(c);
  };
  for (const c of choices) {
    add(c.type, c);
    if (c.country !== undefined) add(`${c.type}:${c.country}`, c);
  }
  // Types in PROXY_TYPES order, countries alphabetical, "type:*" last within its type.
  const sortKey = (c: ProxyChoice) => `${PROXY_TYPES.indexOf(c.type)}:${c.country ?? '~'}`;
  const offered = [...new Map([...choices].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0))
    .map((c) => [`${c.type}:${c.country ?? '*'}`, true] as const)).keys()];
  Object.freeze(offered);

  const failedUntil = new Map<string, number>();

  const pick = (query: ProxyQuery): ProxyChoice | undefined => {
    const key = query.country === undefined ? query.type : `${query.type}:${query.country.toUpperCase()}`;
    const pool = pools.get(key);
    if (pool === undefined) return undefined;
    const n = pool.items.length;
    const t = failedUntil.size > 0 ? now() : 0;
    let fallback = -1;
    let fallbackUntil = Infinity;
    for (let i = 0; i < n; i++) {
      const idx = (pool.cursor + i) % n;
      const c = pool.items[idx]!;
      if (query.exclude.length > 0 && query.exclude.includes(c.id)) continue;
      if (failedUntil.size > 0) {
        const until = failedUntil.get(c.id);
        if (until !== undefined) {
          if (until > t) {
            if (until < fallbackUntil) { fallback = idx; fallbackUntil = until; }
            continue;
          }
          failedUntil.delete(c.id);
        }
      }
      pool.cursor = (idx + 1) % n;
      return c;
    }
    if (fallback < 0) return undefined;
    pool.cursor = (fallback + 1) % n;
    return pool.items[fallback];
  };

  const provider = defineProxyProvider({
    name: 'proxy-configured',
    description: 'Proxies listed in SCOUR_PROXIES, rotated round-robin per type and country.',
    pick,
    available: () => offered,
  });
  return {
    ...provider,
    markFailed(id: string, untilMs: number) {
      if (!known.has(id)) return;
      if (untilMs > now()) failedUntil.set(id, untilMs);
      else failedUntil.delete(id);
    },
  };
}

// ---------------------------------------------------------------------------

interface Draft {
  /** How messages name the entry (never with its URL). */
  readonly where: string;
  readonly url: unknown;
  readonly type: unknown;
  readonly country: unknown;
  readonly id?: unknown;
}

/** Words safe to repeat in a message: short, and no URL or secret can hide in them. */
const shown = (value: string, pattern = /^[A-Za-z_-]{1,16}$/): string => (pattern.test(value) ? ` (got "${value}")` : '');

function draftsFromList(text: string, source: string, issues: string[]): Draft[] {
  const drafts: Draft[] = [];
  const pieces = text.split(/[,\r\n]+/).map((p) => p.trim()).filter((p) => p !== '');
  pieces.forEach((piece, i) => {
    const at = `${source} entry ${i + 1}`;
    const eq = piece.indexOf('=');
    if (eq < 0) {
      const hint = /^[a-z][a-z0-9+.-]*:\/\//i.test(piece)
        ? 'the type is missing'
        : 'a comma inside a password must be written %2C';
      issues.push(`${at}: expected type[:COUNTRY]=URL, e.g. datacenter:US=http://user:pass@host:8080 (${hint})`);
      return;
    }
    const label = piece.slice(0, eq).trim();
    const url = piece.slice(eq + 1).trim();
    const safeLabel = /^[A-Za-z0-9*_:-]{1,32}$/.test(label);
    const where = safeLabel ? `${at} (${label})` : at;
    if (/\s/.test(piece.slice(eq + 1).trim())) {
      issues.push(`${where}: the URL contains whitespace; separate entries with commas or newlines`);
      return;
    }
    const parts = label.split(':');
    if (!safeLabel || parts.length > 2) {
      issues.push(`${where}: the part before "=" must be type or type:COUNTRY, e.g. residential:DE`);
      return;
    }
    const country = parts[1];
    drafts.push({ where, url, type: parts[0], country });
  });
  return drafts;
}

function draftsFromJson(text: string, source: string, issues: string[]): Draft[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // JSON.parse messages quote the input around the error: it may hold a password.
    const pos = /position (\d+)/.exec(String((err as Error).message))?.[1];
    issues.push(`${source} is not valid JSON${pos !== undefined ? ` (error at character ${pos})` : ''}`);
    return [];
  }
  if (!Array.isArray(value)) {
    issues.push(`${source} must be a JSON array of {"url", "type", "country"} objects`);
    return [];
  }
  const drafts: Draft[] = [];
  value.forEach((item: unknown, i) => {
    const where = `${source}[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      issues.push(`${where}: must be an object {"url", "type", "country"}`);
      return;
    }
    const o = item as Record<string, unknown>;
    const unknownKeys = Object.keys(o).filter((k) => !['url', 'type', 'country', 'id'].includes(k));
    if (unknownKeys.length > 0) {
      const names = unknownKeys.map((k) => (/^[A-Za-z_]{1,24}$/.test(k) ? k : '?')).join(', ');
      issues.push(`${where}: unknown field(s) ${names}; allowed: url, type, country, id`);
    }
    drafts.push({ where, url: o.url, type: o.type, country: o.country === null ? undefined : o.country, id: o.id });
  });
  return drafts;
}

const SUPPORTED = new Set(['http:', 'https:']);
const NAMED_SCHEMES = new Set(['socks:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:', 'ftp:', 'ws:', 'wss:', 'file:']);

/** The URL in canonical form (scheme://[user[:pass]@]host[:port]), or the problem with it. */
function checkUrl(raw: unknown): { readonly url: string } | { readonly problem: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { problem: 'url is missing' };
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { problem: raw.includes('://') ? 'the URL is not valid' : 'the URL must start with http:// or https://' };
  }
  if (!SUPPORTED.has(u.protocol)) {
    // A URL without scheme parses with its user name as the scheme: only name schemes we know.
    const got = NAMED_SCHEMES.has(u.protocol) ? ` (got ${u.protocol.slice(0, -1)}, which is not supported)` : '';
    return { problem: `the proxy URL must start with http:// or https://${got}` };
  }
  if (u.hostname === '') return { problem: 'the URL has no host' };
  if (u.port === '0') return { problem: 'the port must be from 1 to 65535' };
  if ((u.pathname !== '' && u.pathname !== '/') || u.search !== '' || u.hash !== '') {
    return { problem: 'the URL must be scheme://[user:pass@]host[:port], without path, query or fragment' };
  }
  const auth = u.username !== '' || u.password !== '' ? `${u.username}${u.password !== '' ? `:${u.password}` : ''}@` : '';
  return { url: `${u.protocol}//${auth}${u.host}` };
}

interface Checked { readonly url: string; readonly type: ProxyType; readonly country: string | undefined; readonly id: string | undefined }

/** Checks every draft, reports into `issues`, and gives the entries with their ids. */
function checkDrafts(drafts: readonly Draft[], issues: string[]): ProxyEntry[] {
  const good: (Checked & { readonly where: string })[] = [];
  const firstByUrl = new Map<string, string>();
  const explicitIds = new Map<string, string>();
  for (const d of drafts) {
    let ok = true;
    const fail = (msg: string) => { issues.push(`${d.where}: ${msg}`); ok = false; };

    let type: ProxyType | undefined;
    if (typeof d.type !== 'string' || d.type.trim() === '') fail('type is missing (datacenter or residential)');
    else {
      const t = d.type.trim().toLowerCase();
      if ((PROXY_TYPES as readonly string[]).includes(t)) type = t as ProxyType;
      else fail(`type must be datacenter or residential${shown(d.type.trim())}`);
    }

    let country: string | undefined;
    if (d.country !== undefined && d.country !== '*') {
      if (typeof d.country !== 'string') fail('country must be a string such as "US"');
      else {
        const problem = countryProblem(d.country.trim());
        if (problem === undefined) country = d.country.trim();
        else fail(problem);
      }
    }

    let id: string | undefined;
    if (d.id !== undefined) {
      if (typeof d.id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(d.id)) fail('id must be 1-64 characters of A-Z a-z 0-9 . _ -');
      else {
        const first = explicitIds.get(d.id);
        if (first !== undefined) fail(`id "${d.id}" is already used by ${first}`);
        else { explicitIds.set(d.id, d.where); id = d.id; }
      }
    }

    const url = checkUrl(d.url);
    if ('problem' in url) fail(url.problem);
    else {
      const first = firstByUrl.get(url.url);
      if (first !== undefined) fail(`the same proxy URL is already listed as ${first}`);
      else firstByUrl.set(url.url, d.where);
    }

    if (ok && type !== undefined && 'url' in url) good.push({ where: d.where, url: url.url, type, country, id });
  }

  // Generated ids count within type and country, skipping any taken by an explicit id.
  const taken = new Set(explicitIds.keys());
  const counters = new Map<string, number>();
  return good.map((e) => {
    let id = e.id;
    if (id === undefined) {
      const group = `${e.type}-${e.country ?? 'any'}`;
      let k = counters.get(group) ?? 0;
      do { k += 1; id = `${group}-${k}`; } while (taken.has(id));
      counters.set(group, k);
      taken.add(id);
    }
    return { url: e.url, type: e.type, country: e.country, id };
  });
}
