/**
 * Asking several search providers and merging what they found (the search
 * operation and research's gather both do): each provider asked within its
 * time, its failure a warning; each provider's results filtered by what it
 * could not filter itself, then fused by reciprocal rank fusion and
 * de-duplicated by normalised URL. Every merged result keeps the providers
 * that found it. No I/O of its own: a provider's search is handed in.
 */
import {
  domainOf, onSite, type FilterName, type ParsedQuery, type ProviderResponse, type ProviderResult, type QueryItem, type SearchFilters,
  type ProviderPauses, type SearchProviderPlugin,
} from './search.js';

/** A provider's failure or note, as a search reports it. */
export interface SearchWarning { readonly provider: string; readonly code: string; readonly message: string }

export type Outcome =
  | { readonly provider: string; readonly ok: true; readonly response: ProviderResponse }
  | { readonly provider: string; readonly ok: false; readonly warning: SearchWarning };

/** The pauses `ask` honours and records, with the clock it reads them by. */
export interface PauseBook {
  readonly pauses: ProviderPauses;
  readonly now: () => number;
}

/** Pauses held in this process only (embedded mode; the shared store's view in adapters/search/pauses.ts builds on it). */
export function memoryPauses(): ProviderPauses & { readonly entries: () => ReadonlyMap<string, number> } {
  const until = new Map<string, number>();
  return {
    pausedUntil(id, now) {
      const t = until.get(id);
      if (t === undefined) return undefined;
      if (t <= now) { until.delete(id); return undefined; }
      return t;
    },
    pause(id, t) {
      // A later pause never shortens an earlier, longer one.
      if ((until.get(id) ?? 0) < t) until.set(id, t);
    },
    entries: () => until,
  };
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Ask one provider, bounded by its time; never fails (a failure is a
 * warning). Search and research both ask with it. With `book`, a provider
 * paused after rate-limiting us is not asked until its pause ends (warning
 * PROVIDER_PAUSED), and a provider that rejects with ProviderRateLimited is
 * paused for the time its service asked (warning PROVIDER_RATE_LIMITED).
 */
export function ask(
  p: SearchProviderPlugin, run: (signal: AbortSignal) => Promise<ProviderResponse>, timeoutMs: number, outer: AbortSignal, book?: PauseBook,
): Promise<Outcome> {
  if (book !== undefined) {
    const now = book.now();
    const until = book.pauses.pausedUntil(p.id, now);
    if (until !== undefined && until > now) {
      return Promise.resolve({
        provider: p.id, ok: false,
        warning: { provider: p.id, code: 'PROVIDER_PAUSED', message: `${p.id} was not asked: it rate-limited Scour and is paused until ${iso(until)} (${Math.ceil((until - now) / 1000)} s more)` },
      });
    }
  }
  const controller = new AbortController();
  const onOuter = () => controller.abort(outer.reason);
  outer.addEventListener('abort', onOuter, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error('provider timeout'));
      resolve({ provider: p.id, ok: false, warning: { provider: p.id, code: 'PROVIDER_TIMEOUT', message: `${p.id} did not answer within ${timeoutMs / 1000} s` } });
    }, timeoutMs);
  });
  const answered = Promise.resolve()
    .then(() => run(controller.signal))
    .then(
      (response): Outcome => ({ provider: p.id, ok: true, response }),
      (e: unknown): Outcome => {
        const code = typeof (e as { code?: unknown })?.code === 'string' && /^[A-Z][A-Z0-9_]{2,63}$/.test((e as { code: string }).code)
          ? (e as { code: string }).code : 'PROVIDER_FAILED';
        const message = e instanceof Error ? e.message : String(e);
        const wait = (e as { retryAfterMs?: unknown })?.retryAfterMs;
        if (code === 'PROVIDER_RATE_LIMITED' && typeof wait === 'number' && Number.isFinite(wait) && wait > 0) {
          // At most a day: a service that asks for longer is asked again tomorrow.
          const ms = Math.min(wait, 86_400_000);
          if (book !== undefined) {
            const until = book.now() + ms;
            book.pauses.pause(p.id, until);
            return { provider: p.id, ok: false, warning: { provider: p.id, code, message: `${p.id} rate-limited Scour: ${message}; it is paused for ${Math.ceil(ms / 1000)} s, until ${iso(until)}`.slice(0, 1000) } };
          }
        }
        return { provider: p.id, ok: false, warning: { provider: p.id, code, message: `${p.id} failed: ${message}`.slice(0, 1000) } };
      },
    );
  return Promise.race([answered, timedOut]).finally(() => {
    clearTimeout(timer);
    outer.removeEventListener('abort', onOuter);
  });
}


/** Query parameters that only track where a click came from. */
const TRACKING = /^(utm_[a-z0-9_]*|fbclid|gclid|gclsrc|dclid|gbraid|wbraid|msclkid|yclid|mc_cid|mc_eid|igshid|_hsenc|_hsmi|mkt_tok|vero_id|oly_anon_id|oly_enc_id|rb_clickid|s_cid|twclid|ttclid|li_fat_id|srsltid|_ga|_gl)$/i;

/**
 * The key two URLs of one page share: scheme (http and https alike), case of
 * the host, `www.`, default ports, a trailing slash, the fragment, tracking
 * parameters and the order of the others do not matter. Undefined for
 * anything that is not an absolute http(s) URL.
 */
export function normaliseUrl(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const host = u.hostname.toLowerCase().replace(/^www\./, '').replace(/\.$/, '');
  const port = u.port === '' || u.port === '80' || u.port === '443' ? '' : `:${u.port}`;
  let path = u.pathname.replace(/(?<!\/)\/+$/, '');
  if (/\/index\.(html?|php)$/i.test(path)) path = path.replace(/\/index\.(html?|php)$/i, '');
  const params = [...u.searchParams.entries()].filter(([k]) => !TRACKING.test(k)).sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  const query = params.length === 0 ? '' : `?${new URLSearchParams(params).toString()}`;
  return `${host}${port}${path}${query}`;
}

/** Lower-cased words of a text (letters and digits of any script). */
function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Whether the words of `item` appear (consecutively, for a phrase) in `hay`. */
function contains(hay: readonly string[], item: QueryItem): boolean {
  const needle = words(item.text);
  if (needle.length === 0) return false;
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** The filters and operators a request uses (what postFilter would apply for a provider that applied none). */
export function activeFilters(query: ParsedQuery, filters: SearchFilters): FilterName[] {
  const active: FilterName[] = [];
  if (query.sites.length > 0 || query.excludedSites.length > 0) active.push('site');
  if (query.excluded.length > 0) active.push('excluded');
  if (filters.publishedAfter !== undefined) active.push('time_range');
  if (filters.resultType === 'news') active.push('result_type');
  if (filters.language !== undefined) active.push('language');
  if (filters.country !== undefined) active.push('country');
  if (filters.safeSearch !== 'off') active.push('safe_search');
  return active;
}

/**
 * Drop the results that a filter the provider did not apply rules out, from
 * what a result says about itself. Documented in docs/search.md:
 * - site: and -site: by the result's domain;
 * - -word and -"phrase" by its title and snippet (all a provider shows us);
 * - time_range: a result needs a date inside the range;
 * - result_type news: a result of type news or article with a date;
 * - language, country: a result that names another one is dropped, one that names none is kept;
 * - safe_search: moderate drops results marked explicit, strict also those not marked safe.
 */
export function postFilter(
  results: readonly ProviderResult[],
  applied: ReadonlySet<FilterName>,
  query: ParsedQuery,
  filters: SearchFilters,
): ProviderResult[] {
  return results.filter((r) => {
    if (!applied.has('site')) {
      const domain = domainOf(r.url);
      if (query.sites.length > 0 && !query.sites.some((s) => onSite(domain, s))) return false;
      if (query.excludedSites.some((s) => onSite(domain, s))) return false;
    }
    if (!applied.has('excluded') && query.excluded.length > 0) {
      const hay = words(`${r.title} \u0000 ${r.snippet}`);
      if (query.excluded.some((x) => contains(hay, x))) return false;
    }
    if (!applied.has('time_range') && filters.publishedAfter !== undefined) {
      if (r.publishedAt === null || r.publishedAt < filters.publishedAfter) return false;
    }
    if (!applied.has('result_type') && filters.resultType === 'news') {
      if ((r.type !== 'news' && r.type !== 'article') || r.publishedAt === null) return false;
    }
    if (!applied.has('language') && filters.language !== undefined && r.language != null && r.language !== filters.language) return false;
    if (!applied.has('country') && filters.country !== undefined && r.country != null && r.country !== filters.country) return false;
    if (!applied.has('safe_search')) {
      if (filters.safeSearch !== 'off' && r.safe === false) return false;
      if (filters.safeSearch === 'strict' && r.safe !== true) return false;
    }
    return true;
  });
}

export interface FusedResult {
  readonly key: string;
  /** The result as the highest-priority provider that found it gave it (gaps filled from the others). */
  readonly result: ProviderResult;
  /** Provider ids that found it, in priority order. */
  readonly sources: readonly string[];
  /** Sum over providers of 1 / (k + rank). */
  readonly score: number;
}

/** The constant of reciprocal rank fusion (Cormack, Clarke and Buettcher 2009). */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion of provider lists given in priority order. Equal
 * scores keep the priority order (then the rank within the provider). With
 * `newestFirst`, equal scores put the newer result first.
 */
export function fuse(lists: readonly { readonly provider: string; readonly results: readonly ProviderResult[] }[], options: { readonly newestFirst?: boolean } = {}): FusedResult[] {
  const byKey = new Map<string, { result: ProviderResult; sources: string[]; score: number; order: number }>();
  let order = 0;
  for (const { provider, results } of lists) {
    let rank = 0;
    for (const r of results) {
      const key = normaliseUrl(r.url);
      if (key === undefined) continue;
      rank++;
      const contribution = 1 / (RRF_K + rank);
      const seen = byKey.get(key);
      if (seen === undefined) {
        byKey.set(key, { result: r, sources: [provider], score: contribution, order: order++ });
        continue;
      }
      // The same page twice in one provider's list counts once.
      if (seen.sources.includes(provider)) continue;
      seen.sources.push(provider);
      seen.score += contribution;
      seen.result = fillGaps(seen.result, r);
    }
  }
  const fused = [...byKey.entries()].map(([key, v]) => ({ key, ...v }));
  fused.sort((a, b) => {
    const d = b.score - a.score;
    if (Math.abs(d) > 1e-12) return d;
    if (options.newestFirst) {
      const t = (b.result.publishedAt ?? -Infinity) - (a.result.publishedAt ?? -Infinity);
      if (t !== 0 && Number.isFinite(t)) return t;
    }
    return a.order - b.order;
  });
  return fused.map(({ key, result, sources, score }) => ({ key, result, sources, score }));
}

function fillGaps(first: ProviderResult, other: ProviderResult): ProviderResult {
  return {
    ...first,
    title: first.title || other.title,
    snippet: first.snippet || other.snippet,
    highlights: first.snippet ? first.highlights : other.highlights,
    publishedAt: first.publishedAt ?? other.publishedAt,
    type: first.type ?? other.type ?? null,
    language: first.language ?? other.language ?? null,
    country: first.country ?? other.country ?? null,
    // A scholarly index's record fills what a web provider's result lacks (research cites and reads them).
    ...(first.doi ?? other.doi ? { doi: first.doi ?? other.doi } : {}),
    ...((first.authors?.length ?? 0) > 0 || (other.authors?.length ?? 0) > 0 ? { authors: (first.authors?.length ?? 0) > 0 ? first.authors : other.authors } : {}),
    ...(first.venue ?? other.venue ? { venue: first.venue ?? other.venue } : {}),
    ...(first.fullTextUrl ?? other.fullTextUrl ? { fullTextUrl: first.fullTextUrl ?? other.fullTextUrl } : {}),
    ...(first.abstract ?? other.abstract ? { abstract: first.abstract ?? other.abstract } : {}),
  };
}

/**
 * [start, end) offsets of the query's words in `text`, for providers that do
 * not mark them: whole words, case- and accent-insensitive, a word also
 * matching its longer forms (search -> searches).
 */
export function markTerms(text: string, terms: readonly string[]): [number, number][] {
  const wanted = [...new Set(terms.flatMap((t) => words(t)).map(fold))].filter((w) => w.length > 0);
  if (wanted.length === 0) return [];
  const out: [number, number][] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = fold(m[0]);
    if (wanted.some((t) => w === t || (t.length >= 4 && w.startsWith(t) && w.length - t.length <= 3))) out.push([m.index, m.index + m[0].length]);
  }
  return out;
}

function fold(w: string): string {
  return w.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}
