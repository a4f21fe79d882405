/**
 * Sitemaps (sitemaps.org): the ones robots.txt names and /sitemap.xml,
 * followed through sitemap index files, read with htmlparser2 in XML mode
 * (CDATA and entities understood); a text sitemap is one URL per line.
 * Every file is fetched through the crawl's guarded fetcher, on hosts the
 * crawl may visit only, within a bound on files, nesting and URLs.
 */
import { Parser } from 'htmlparser2';
import type { FetchText } from './politeness.js';

export interface SitemapLimits {
  /** Sitemap files fetched at most. */
  readonly maxFiles: number;
  /** Index files nested at most this deep (a root is depth 0). */
  readonly maxDepth: number;
  /** Page URLs collected at most. */
  readonly maxUrls: number;
}

export const DEFAULT_SITEMAP_LIMITS: SitemapLimits = { maxFiles: 50, maxDepth: 3, maxUrls: 50_000 };

/** The page URLs and the child sitemaps one sitemap file lists. */
export function parseSitemap(body: string): { pages: string[]; sitemaps: string[] } {
  const text = body.trimStart();
  if (!text.startsWith('<')) {
    // sitemap.txt: one absolute URL per line.
    const pages = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => /^https?:\/\//i.test(l));
    return { pages, sitemaps: [] };
  }
  const pages: string[] = [];
  const sitemaps: string[] = [];
  const stack: string[] = [];
  let loc: string | undefined;
  const local = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = new Parser({
    onopentag(name) {
      stack.push(local(name));
      if (local(name) === 'loc') loc = '';
    },
    ontext(t) {
      if (loc !== undefined) loc += t;
    },
    onclosetag(name) {
      const n = local(name);
      stack.pop();
      if (n === 'loc' && loc !== undefined) {
        const parent = stack.at(-1);
        const value = loc.trim();
        if (value !== '') {
          if (parent === 'url') pages.push(value);
          else if (parent === 'sitemap') sitemaps.push(value);
        }
        loc = undefined;
      }
    },
  }, { xmlMode: true });
  parser.write(body);
  parser.end();
  return { pages, sitemaps };
}

/**
 * The page URLs of a site's sitemaps: `roots` (robots.txt's Sitemap lines
 * and /sitemap.xml), index files followed breadth-first. `mayFetch` says
 * which hosts' sitemap files may be fetched. Failures of single files are
 * skipped (a missing /sitemap.xml is normal).
 */
export async function sitemapPages(
  roots: readonly string[], fetchText: FetchText, signal: AbortSignal, mayFetch: (url: string) => boolean, limits: SitemapLimits = DEFAULT_SITEMAP_LIMITS,
): Promise<{ pages: string[]; files: number }> {
  const seen = new Set<string>();
  const queue: { url: string; depth: number }[] = [];
  const push = (url: string, depth: number) => {
    if (!/^https?:\/\//i.test(url) || seen.has(url) || !mayFetch(url)) return;
    seen.add(url);
    queue.push({ url, depth });
  };
  for (const r of roots) push(r, 0);
  const pages: string[] = [];
  const pageSet = new Set<string>();
  let files = 0;
  while (queue.length > 0 && files < limits.maxFiles && pages.length < limits.maxUrls) {
    const { url, depth } = queue.shift()!;
    files++;
    let body: string;
    try {
      const r = await fetchText(url, signal);
      if (r.statusCode < 200 || r.statusCode > 299) continue;
      body = r.body;
    } catch (e) {
      if (signal.aborted) throw e;
      continue;
    }
    const found = parseSitemap(body);
    for (const p of found.pages) {
      if (pages.length >= limits.maxUrls) break;
      if (!pageSet.has(p)) {
        pageSet.add(p);
        pages.push(p);
      }
    }
    if (depth < limits.maxDepth) for (const s of found.sitemaps) push(s, depth + 1);
  }
  return { pages, files };
}
