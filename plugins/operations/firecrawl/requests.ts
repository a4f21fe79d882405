/**
 * Firecrawl's batch scrape, crawl, map and search requests (v1 and v2) as
 * native bodies: pure translations, like scrape-options.ts (warnings for
 * what is ignored, issues at Firecrawl's paths for what is malformed). The
 * native routes check what they receive as they check any request.
 */
import type { FieldIssue } from '../../../core/errors.js';
import { MAX_CRAWL_DEPTH, MAX_CRAWL_PAGES } from '../../../core/crawl-limits.js';
import { MAX_MAP_LIMIT, MAX_MAP_TIMEOUT, MIN_MAP_TIMEOUT } from '../../../core/site-map.js';
import { type Formats, translateScrapeOptions, type ScrapeEnv } from './scrape-options.js';

type Json = Record<string, unknown>;
export interface Translated {
  readonly native: Json;
  readonly warnings: string[];
  readonly issues: FieldIssue[];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const clip = (s: string, n = 40) => (s.length <= n ? s : `${s.slice(0, n)}…`);
const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
const QUIET = new Set(['origin', 'integration', 'zeroDataRetention', 'ignoreInvalidURLs', 'ignoreQueryParameters', 'deduplicateSimilarURLs', 'allowBackwardLinks', 'timeout', 'enterprise', 'auditMetadata']);
const omit = (o: Json, keys: readonly string[]): Json => {
  const out: Json = {};
  for (const k of Object.keys(o)) if (!keys.includes(k)) out[k] = o[k];
  return out;
};
const ignoredIn = (o: Json, handled: readonly string[], warnings: string[]) => {
  const rest = Object.keys(o).filter((k) => !handled.includes(k) && !QUIET.has(k));
  if (rest.length > 0) warnings.push(`not supported, ignored: ${rest.slice(0, 10).map((k) => clip(k)).join(', ')}${rest.length > 10 ? ', …' : ''}`);
};
/** A required string field (the native route checks its content). */
function stringField(o: Json, key: string, issues: FieldIssue[]): string | undefined {
  const v = o[key];
  if (typeof v === 'string' && v.length > 0) return v;
  issues.push({ field: key, message: v === undefined ? 'is required' : 'must be a non-empty string' });
  return undefined;
}
function intField(o: Json, key: string, issues: FieldIssue[], lo: number): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo) {
    issues.push({ field: key, message: `must be a number of at least ${lo}` });
    return undefined;
  }
  return Math.floor(v);
}

// ---------------------------------------------------------------------------
// Scrape and batch scrape

export function translateScrape(body: Json, env: Omit<ScrapeEnv, 'single'>): Translated & { formats: Formats } {
  const issues: FieldIssue[] = [];
  const url = stringField(body, 'url', issues);
  const t = translateScrapeOptions(omit(body, ['url']), { ...env, single: true });
  return { native: { ...(url === undefined ? {} : { url }), ...t.native }, formats: t.formats, warnings: t.warnings, issues: [...issues, ...t.issues] };
}

/** A batch: `urls` and the scrape options beside them (v2 and v1 flatten them into the body). */
export function translateBatch(body: Json, env: Omit<ScrapeEnv, 'single'>): Translated & { formats: Formats; invalid: string[] } {
  const issues: FieldIssue[] = [];
  const warnings: string[] = [];
  const own = ['urls', 'webhook', 'maxConcurrency', 'appendToId', 'ignoreInvalidURLs'];
  let urls: string[] = [];
  const invalid: string[] = [];
  if (!Array.isArray(body.urls) || body.urls.length === 0) issues.push({ field: 'urls', message: 'must be a non-empty array of URLs' });
  else {
    body.urls.forEach((u, n) => {
      if (typeof u !== 'string' || u === '') issues.push({ field: `urls[${n}]`, message: 'must be a URL' });
      else urls.push(u);
    });
    if (body.ignoreInvalidURLs === true) {
      // Firecrawl drops what is not an http(s) URL and lists it; the native scrape judges the rest (and its guard refuses what it refuses).
      const ok = (u: string) => { try { const p = new URL(u).protocol; return p === 'http:' || p === 'https:'; } catch { return false; } };
      invalid.push(...urls.filter((u) => !ok(u)));
      urls = urls.filter(ok);
      if (urls.length === 0 && issues.length === 0) issues.push({ field: 'urls', message: 'no valid URL left' });
    }
  }
  const t = translateScrapeOptions(omit(body, [...own, ...QUIET]), { ...env, single: false });
  warnings.push(...t.warnings);
  const native: Json = { urls, ...t.native, async: true };
  if (body.maxConcurrency !== undefined) {
    if (typeof body.maxConcurrency === 'number' && Number.isInteger(body.maxConcurrency) && body.maxConcurrency >= 1) native.concurrent_requests = Math.min(body.maxConcurrency, 100);
    else issues.push({ field: 'maxConcurrency', message: 'must be a positive integer' });
  }
  if (body.webhook !== undefined) warnings.push('webhook is not supported on batch scrape here; poll the status URL');
  if (body.appendToId !== undefined) warnings.push('appendToId is not supported; a new batch was started');
  return { native, formats: t.formats, warnings, issues: [...issues, ...t.issues], invalid };
}

// ---------------------------------------------------------------------------
// Crawl

/**
 * Firecrawl's includePaths/excludePaths are regular expressions over the
 * path; Scour's are globs. The common forms (`blog/.*`, `^/docs/.+$`) have
 * a glob; anything else is left out with a warning.
 */
export function regexToGlob(re: string): string | undefined {
  let s = re;
  if (s.startsWith('^')) s = s.slice(1);
  const anchoredEnd = s.endsWith('$') && !s.endsWith('\\$');
  if (anchoredEnd) s = s.slice(0, -1);
  s = s.replace(/\.\*|\.\+/g, '**').replace(/\\([./-])/g, '$1');
  if (/[\\^$.|?+()[\]{}]/.test(s.replace(/\./g, ''))) return undefined;
  if (s.includes('.') && /\.(?!\w)/.test(s)) return undefined;
  if (!s.startsWith('/')) s = `/${s}`;
  if (!anchoredEnd && !s.endsWith('**')) s = `${s.endsWith('/') ? s : `${s}`}**`;
  return s.length > 500 || s === '/' ? undefined : s;
}

function paths(body: Json, key: string, issues: FieldIssue[], warnings: string[]): string[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length > 50 || !v.every((p) => typeof p === 'string' && p.length > 0 && p.length <= 500)) {
    issues.push({ field: key, message: 'must be at most 50 patterns of 1 to 500 characters' });
    return undefined;
  }
  const out: string[] = [];
  for (const p of v as string[]) {
    const g = regexToGlob(p);
    if (g === undefined) warnings.push(`${key}: "${clip(p)}" has no path glob equivalent; ignored`);
    else out.push(g);
  }
  return out.length > 0 ? out : undefined;
}

export function translateCrawl(body: Json, env: Omit<ScrapeEnv, 'single'>): Translated {
  const issues: FieldIssue[] = [];
  const warnings: string[] = [];
  const native: Json = {};
  const url = stringField(body, 'url', issues);
  if (url !== undefined) native.url = url;
  const limit = intField(body, 'limit', issues, 1);
  if (limit !== undefined) native.max_pages = Math.min(limit, MAX_CRAWL_PAGES);
  const depth = intField(body, env.version === 1 && body.maxDepth !== undefined ? 'maxDepth' : 'maxDiscoveryDepth', issues, 0);
  if (depth !== undefined) native.max_depth = Math.min(depth, MAX_CRAWL_DEPTH);
  const inc = paths(body, 'includePaths', issues, warnings);
  if (inc !== undefined) native.include_paths = inc;
  const exc = paths(body, 'excludePaths', issues, warnings);
  if (exc !== undefined) native.exclude_paths = exc;
  if (body.sitemap === 'skip' || body.ignoreSitemap === true) native.use_sitemaps = false;
  if (body.sitemap === 'only') warnings.push('sitemap "only" is not supported; the sitemaps and the links were followed');
  if (body.ignoreRobotsTxt === true) native.respect_robots = false;
  if (body.allowExternalLinks === true) warnings.push('allowExternalLinks is not supported; the crawl stayed on the site (its subdomains included)');
  if (body.webhook !== undefined && body.webhook !== null) {
    const hook = typeof body.webhook === 'string' ? body.webhook : isObject(body.webhook) ? body.webhook.url : undefined;
    if (typeof hook !== 'string') issues.push({ field: 'webhook', message: 'must be a URL or an object with a url' });
    else {
      native.callback_url = hook;
      warnings.push("webhook: Scour POSTs its own signed crawl.completed event when the crawl ends, not Firecrawl's events");
    }
  }
  if (body.scrapeOptions !== undefined && body.scrapeOptions !== null) {
    if (!isObject(body.scrapeOptions)) issues.push({ field: 'scrapeOptions', message: 'must be an object' });
    else {
      const t = translateScrapeOptions(body.scrapeOptions, { ...env, single: false }, 'scrapeOptions.');
      issues.push(...t.issues);
      warnings.push(...t.warnings.map((w) => `scrapeOptions: ${w}`));
      if (t.native.render_js === true) native.render_js = true;
      const f = t.formats;
      if (f.html || f.rawHtml || f.links || f.images || f.screenshot) warnings.push('crawled pages are answered as markdown and metadata only');
    }
  }
  ignoredIn(body, ['url', 'limit', 'maxDepth', 'maxDiscoveryDepth', 'includePaths', 'excludePaths', 'sitemap', 'ignoreSitemap', 'ignoreRobotsTxt',
    'allowExternalLinks', 'allowSubdomains', 'crawlEntireDomain', 'webhook', 'scrapeOptions'], warnings);
  return { native, warnings, issues };
}

// ---------------------------------------------------------------------------
// Map

export function translateMap(body: Json, version: 1 | 2): Translated {
  const issues: FieldIssue[] = [];
  const warnings: string[] = [];
  const native: Json = {};
  const url = stringField(body, 'url', issues);
  if (url !== undefined) native.url = url;
  if (body.search !== undefined && body.search !== null && body.search !== '') {
    if (typeof body.search !== 'string') issues.push({ field: 'search', message: 'must be a string' });
    else native.search = body.search;
  }
  const limit = intField(body, 'limit', issues, 1);
  if (limit !== undefined) native.limit = Math.min(limit, MAX_MAP_LIMIT);
  if (body.includeSubdomains !== undefined) {
    if (typeof body.includeSubdomains !== 'boolean') issues.push({ field: 'includeSubdomains', message: 'must be a boolean' });
    else native.include_subdomains = body.includeSubdomains;
  }
  if (version === 2 && body.sitemap !== undefined) {
    if (body.sitemap !== 'include' && body.sitemap !== 'only' && body.sitemap !== 'skip') issues.push({ field: 'sitemap', message: 'must be include, only or skip' });
    else native.sitemap = body.sitemap;
  }
  if (version === 1 && body.sitemapOnly === true) native.sitemap = 'only';
  else if (version === 1 && body.ignoreSitemap === true) native.sitemap = 'skip';
  const timeout = intField(body, 'timeout', issues, 1);
  if (timeout !== undefined) native.timeout = clamp(Math.ceil(timeout / 1000), MIN_MAP_TIMEOUT, MAX_MAP_TIMEOUT);
  if (body.location !== undefined) warnings.push('location is not supported; ignored');
  ignoredIn(body, ['url', 'search', 'limit', 'includeSubdomains', 'sitemap', 'sitemapOnly', 'ignoreSitemap', 'location'], warnings);
  return { native, warnings, issues };
}

// ---------------------------------------------------------------------------
// Search

const TBS: Record<string, string> = { 'qdr:h': 'hour', 'qdr:d': 'day', 'qdr:w': 'week', 'qdr:m': 'month', 'qdr:y': 'year' };
/** Pages a search scrapes at most (native auto_scrape_top). */
export const MAX_SEARCH_SCRAPES = 10;

export function translateSearch(body: Json, version: 1 | 2): Translated & { news: boolean; scrape: boolean } {
  const issues: FieldIssue[] = [];
  const warnings: string[] = [];
  const native: Json = {};
  const query = stringField(body, 'query', issues);
  if (query !== undefined) native.query = query;
  const limit = intField(body, 'limit', issues, 1) ?? 5;
  native.max_results = Math.min(limit, 50);
  if (limit > 50) warnings.push('limit: at most 50 results here');
  let news = false;
  if (body.sources !== undefined) {
    const kinds = Array.isArray(body.sources) ? body.sources.map((s) => (typeof s === 'string' ? s : isObject(s) ? s.type : undefined)) : undefined;
    if (kinds === undefined || kinds.some((k) => typeof k !== 'string')) issues.push({ field: 'sources', message: 'must be an array of web, news or images' });
    else {
      news = kinds.includes('news') && !kinds.includes('web');
      if (news) native.result_type = 'news';
      if (kinds.some((k) => k !== 'web' && k !== 'news')) warnings.push('sources: only web and news are supported');
      if (kinds.includes('news') && kinds.includes('web')) warnings.push('sources: web and news together are answered as web');
    }
  }
  if (body.tbs !== undefined && body.tbs !== null && body.tbs !== '') {
    const range = typeof body.tbs === 'string' ? TBS[body.tbs] : undefined;
    if (range === undefined) warnings.push('tbs: only qdr:h, qdr:d, qdr:w, qdr:m and qdr:y are supported; ignored');
    else native.time_range = range;
  }
  // Firecrawl's country and lang are hints to its search engine; Scour's country and language are strict filters
  // (a result without them is left out), so they are not applied. v1's client sends country "us" and lang "en" always.
  if (body.country !== undefined && String(body.country).toLowerCase() !== 'us') warnings.push('country is not supported; ignored');
  if (body.lang !== undefined && String(body.lang).toLowerCase() !== 'en') warnings.push('lang is not supported; ignored');
  if (body.location !== undefined) warnings.push('location is not supported; ignored');
  for (const k of ['includeDomains', 'excludeDomains', 'categories', 'filter', 'highlights']) if (body[k] !== undefined) warnings.push(`${k} is not supported; ignored`);
  let scrape = false;
  if (body.scrapeOptions !== undefined && body.scrapeOptions !== null) {
    if (!isObject(body.scrapeOptions)) issues.push({ field: 'scrapeOptions', message: 'must be an object' });
    else {
      const t = translateScrapeOptions(body.scrapeOptions, { version, renders: false, single: false }, 'scrapeOptions.');
      issues.push(...t.issues);
      const f = t.formats;
      scrape = f.markdown || f.html || f.rawHtml || f.links || f.images || f.screenshot || f.json !== undefined;
      if (scrape) {
        native.auto_scrape_top = Math.min(native.max_results as number, MAX_SEARCH_SCRAPES);
        if ((native.max_results as number) > MAX_SEARCH_SCRAPES) warnings.push(`scrapeOptions: the top ${MAX_SEARCH_SCRAPES} results are scraped`);
        if (f.html || f.rawHtml || f.links || f.images || f.screenshot || f.json !== undefined) warnings.push('scrapeOptions: search results are scraped as markdown only');
      }
    }
  }
  ignoredIn(body, ['query', 'limit', 'sources', 'tbs', 'country', 'lang', 'location', 'includeDomains', 'excludeDomains', 'categories', 'filter', 'highlights', 'scrapeOptions'], warnings);
  return { native, warnings, issues, news, scrape };
}
