/**
 * The scrape cache (`max_age`) as the core sees it: which request fields
 * change what is fetched or rendered (the cache key), which ones keep a
 * request out of the cache altogether, the bounds, and the port an adapter
 * implements (adapters/page-cache: the blob store). Pure.
 *
 * A stored entry is the fetch's answer (FetchResult: body, headers, status,
 * the document bytes, a screenshot), not the scrape's answer: the
 * extractors run again on a hit, so requests that differ only in what they
 * extract share one entry, and what is extracted is the request's own.
 */
import type { FetchResult, PageRequest } from './page.js';

export type { CacheAnswer } from './page.js';

/** Bounds of `max_age` (seconds): 0 never answers from the cache; at most 30 days. */
export const MAX_AGE_LIMIT = 30 * 86_400;

/**
 * Every scrape request field, by what it does to the cache. `key`: it
 * changes what is fetched or rendered, so it is part of the key (with the
 * account and the canonical URL). `never`: a request that sets it is never
 * answered from the cache nor stored there (what such a page shows may be
 * private to the caller, or not what the URL shows everyone). `none`: it
 * changes what is extracted, charged or reported, not what is fetched.
 * A new request field must be placed here (test/core/page-cache.test.ts
 * checks that every field of the scrape request is).
 */
export const CACHE_FIELDS = {
  url: 'key',
  render_js: 'key',
  wait_for: 'key',
  wait_time: 'key',
  user_agent: 'key',
  follow_redirects: 'key',
  screenshot: 'key',
  screenshot_options: 'key',
  cookies: 'never',
  custom_headers: 'never',
  proxy_type: 'never',
  proxy_country: 'never',
  // Browser actions (issue 29, section 1) change the page before it is read: never cached.
  actions: 'never',
  actions_required: 'none',
  timeout: 'none',
  extract_links: 'none',
  extract_images: 'none',
  extract_schema: 'none',
  extract_meta: 'none',
  extract_contacts: 'none',
  extract_social: 'none',
  country: 'none',
  main_content: 'none',
  markdown: 'none',
  extract_json: 'none',
  extract_fields: 'none',
  extractors: 'none',
  max_pages: 'none',
  max_age: 'none',
  track_changes: 'none',
} as const satisfies Record<string, 'key' | 'never' | 'none'>;

/** The first field that keeps this request out of the cache, or undefined when it may be cached. */
export function uncacheableField(i: PageRequest & { readonly actions?: unknown }): string | undefined {
  for (const [field, role] of Object.entries(CACHE_FIELDS)) {
    if (role === 'never' && (i as unknown as Record<string, unknown>)[field] !== undefined) return field;
  }
  return undefined;
}

/**
 * The URL as the cache (and change tracking) knows it: the WHATWG
 * serialisation (scheme and host lower case, default port dropped, dot
 * segments resolved), without the fragment, which is never sent, except
 * for a rendered page, whose scripts may read it (a hash-routed app).
 * Undefined when it is not a URL.
 */
export function canonicalPageUrl(url: string, keepFragment = false): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (!keepFragment) u.hash = '';
  return u.href;
}

/** A JSON value with its object keys sorted, so one option set always reads the same. */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = stable((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

/**
 * What a cache entry is found by (the adapter hashes it): the account, the
 * canonical URL and every `key` field, defaults filled in so that leaving
 * a field out and giving its default are the same request. Undefined when
 * the request may not be cached (or its URL is not one).
 */
export function cacheKeyMaterial(accountId: string, i: PageRequest & { readonly actions?: unknown }): string | undefined {
  if (uncacheableField(i) !== undefined) return undefined;
  const url = canonicalPageUrl(i.url, i.render_js === true);
  if (url === undefined) return undefined;
  const render = i.render_js === true;
  const options = {
    render_js: render,
    user_agent: i.user_agent ?? null,
    follow_redirects: i.follow_redirects ?? true,
    // The browser's options mean nothing without it (the validator refuses them).
    wait_for: render ? (i.wait_for ?? null) : null,
    wait_time: render ? (i.wait_time ?? null) : null,
    screenshot: render && i.screenshot === true ? stable(i.screenshot_options ?? {}) : null,
  };
  return JSON.stringify(['scour-page-cache/1', accountId, url, stable(options)]);
}

/** A page answered from the cache, and when it was fetched (epoch ms). */
export interface CachedPage {
  readonly result: FetchResult;
  readonly storedAt: number;
}

/**
 * Where fetched pages are kept (the blob store, with a size cap and an
 * expiry). Best effort: a failure to read is a miss, a failure to write
 * leaves the page uncached; neither fails a scrape.
 */
export interface PageCache {
  get(material: string, now: number): Promise<CachedPage | undefined>;
  /**
   * Keep `result` (taken as it is at the call: the caller may drop it
   * after). A scrape does not wait for the write before it answers; a get()
   * of the same material in the same process waits for it.
   */
  put(material: string, result: FetchResult, now: number): Promise<void>;
}
