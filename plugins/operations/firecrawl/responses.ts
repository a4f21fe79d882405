/**
 * Native answers in Firecrawl's response shapes: job ids and status URLs,
 * batch and crawl status, map links, search results. Pure functions.
 */
import { NO_FORMATS, type Formats } from './scrape-options.js';
import { documentOf } from './documents.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** How long Firecrawl says a job's results stay: its own 24 hours, from the job's start. */
const EXPIRES_MS = 24 * 3600 * 1000;
export const expiresAt = (createdAt: unknown): string => {
  const t = typeof createdAt === 'string' ? Date.parse(createdAt) : Number.NaN;
  return new Date((Number.isNaN(t) ? Date.now() : t) + EXPIRES_MS).toISOString();
};

/**
 * A batch's Firecrawl id: the native bulk job id and the formats it was
 * asked for (a base-36 bit set), so its status is shaped as the request
 * asked without storing anything beside the native job.
 */
const FORMAT_BITS = ['markdown', 'html', 'rawHtml', 'links', 'images', 'screenshot'] as const;
export function batchId(jobId: string, f: Formats): string {
  let bits = 0;
  FORMAT_BITS.forEach((k, n) => { if (f[k]) bits |= 1 << n; });
  return `${jobId}-${bits.toString(36)}`;
}
export function parseBatchId(id: string): { jobId: string; formats: Formats } | undefined {
  const m = /^(bulk_[0-9a-f]{32})-([0-9a-z]{1,2})$/.exec(id);
  if (m === null) return undefined;
  const bits = Number.parseInt(m[2]!, 36);
  if (!(bits < 1 << FORMAT_BITS.length)) return undefined;
  const formats: Formats = { ...NO_FORMATS };
  FORMAT_BITS.forEach((k, n) => { formats[k] = (bits & (1 << n)) !== 0; });
  return { jobId: m[1]!, formats };
}

/** Firecrawl's job status from Scour's bulk and crawl statuses. */
export function jobStatus(native: string): 'scraping' | 'completed' | 'failed' | 'cancelled' {
  switch (native) {
    case 'completed':
    case 'stopped':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    default:
      return 'scraping';
  }
}

/** A native bulk job's status as Firecrawl's batch status. `next` is left out for v1 (its client loops while the key exists). */
export function batchStatus(job: Json, formats: Formats, version: 1 | 2): Json {
  const progress = isObject(job.progress) ? job.progress : {};
  const results = Array.isArray(job.results) ? job.results : [];
  const data = results.filter((r) => isObject(r) && r.success === true && isObject(r.result)).map((r) => documentOf((r as Json).result as Json, formats));
  return {
    success: true,
    status: jobStatus(String(job.status)),
    total: num(progress.total),
    completed: num(progress.done),
    creditsUsed: num(job.credits_used),
    expiresAt: expiresAt(job.created_at),
    ...(version === 2 ? { next: null } : {}),
    data,
  };
}

/** A native crawl status, with its documents, as Firecrawl's crawl status. */
export function crawlStatus(job: Json, data: Json[], version: 1 | 2): Json {
  return {
    success: true,
    status: jobStatus(String(job.status)),
    total: num(job.pages_done) + num(job.pages_failed) + num(job.pages_queued),
    completed: num(job.pages_done),
    creditsUsed: num(job.credits_used),
    expiresAt: expiresAt(job.created_at),
    ...(version === 2 ? { next: null } : {}),
    data,
  };
}

/** Map links: v2 objects ({url, title}), v1 strings. */
export function mapLinks(answer: Json, version: 1 | 2): unknown[] {
  const links = Array.isArray(answer.links) ? answer.links.filter(isObject) : [];
  if (version === 1) return links.map((l) => str(l.url)).filter((u) => u !== undefined);
  return links.map((l) => ({ url: str(l.url) ?? '', ...(typeof l.title === 'string' ? { title: l.title } : {}) }));
}

/**
 * Search results: {url, title, description, position}, with the scraped
 * page's markdown and metadata when the search scraped it.
 */
export function searchResults(answer: Json): Json[] {
  const scraped = new Map<string, Json>();
  if (Array.isArray(answer.scraped_content)) for (const s of answer.scraped_content) if (isObject(s) && typeof s.url === 'string') scraped.set(s.url, s);
  const results = Array.isArray(answer.search_results) ? answer.search_results.filter(isObject) : [];
  return results.map((r) => {
    const url = str(r.link) ?? '';
    const out: Json = { url, title: str(r.title) ?? '', description: str(r.snippet) ?? '', position: num(r.position) };
    if (typeof r.date === 'string') out.date = r.date;
    const s = scraped.get(url);
    if (s !== undefined) {
      const failed = isObject(s.error);
      out.markdown = str(s.content) ?? '';
      out.metadata = {
        title: str(s.title) ?? str(r.title) ?? '',
        sourceURL: url,
        url,
        statusCode: failed ? 0 : 200,
        ...(failed ? { error: str((s.error as Json).message) ?? 'the page could not be scraped' } : {}),
      };
    }
    return out;
  });
}

/** An item error's message: a native error body ({error, code, ...}) or anything else. */
const errorText = (e: unknown): string => {
  if (isObject(e)) return str(e.error) ?? str(e.message) ?? str(e.code) ?? 'failed';
  return typeof e === 'string' ? e : 'failed';
};

/** Firecrawl's errors answer of a batch: its failed URLs, from the native results. */
export function batchErrors(job: Json): Json {
  const results = Array.isArray(job.results) ? job.results.filter(isObject) : [];
  // The id is the URL's place in the batch (the native results are in input order).
  const errors = results.flatMap((r, n) => (r.success === true ? [] : [{ id: String(n), url: str(r.url) ?? '', error: errorText(r.error), ...(isObject(r.error) && typeof r.error.code === 'string' ? { code: r.error.code } : {}) }]));
  return { errors, robotsBlocked: [] };
}

/** Firecrawl's errors answer of a crawl: its failed pages, and the URLs robots.txt kept it from. */
export function crawlErrors(items: readonly { readonly idx: number; readonly url: string; readonly status: string; readonly error: unknown; readonly reason?: string }[]): Json {
  const errors = items.filter((i) => i.status === 'failed').map((i) => ({ id: String(i.idx), url: i.url, error: errorText(i.error), ...(isObject(i.error) && typeof i.error.code === 'string' ? { code: i.error.code } : {}) }));
  const robotsBlocked = items.filter((i) => i.status === 'skipped' && i.reason === 'robots').map((i) => i.url);
  return { errors, robotsBlocked };
}
