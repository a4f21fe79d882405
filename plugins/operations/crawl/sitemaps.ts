/**
 * Sitemaps (sitemaps.org): the ones robots.txt names and /sitemap.xml,
 * followed through sitemap index files, read with htmlparser2 in XML mode
 * (CDATA and entities understood); a text sitemap is one URL per line; a
 * gzipped one (`.xml.gz` served as application/gzip, or any body starting
 * with gzip's magic bytes) is gunzipped first. Every file is fetched through
 * the crawl's guarded fetcher, on hosts the crawl may visit only, within a
 * bound on files, nesting, URLs, bytes read (gunzipped included) and,
 * when the caller gives one, time. The crawl and the map (./map.ts) both
 * read a site's sitemaps here.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Parser } from 'htmlparser2';
import type { FetchText } from './politeness.js';

const gunzipAsync = promisify(gunzip);

export interface SitemapLimits {
  /** Sitemap files fetched at most. */
  readonly maxFiles: number;
  /** Index files nested at most this deep (a root is depth 0). */
  readonly maxDepth: number;
  /** Page URLs collected at most. */
  readonly maxUrls: number;
  /** Bytes of sitemap text read at most, all files together (a gzipped file counts gunzipped). Default DEFAULT_SITEMAP_BYTES. */
  readonly maxBytes?: number;
}

/** 50 MiB: the sitemaps.org limit of one file, uncompressed; here the bound of all files together. */
export const DEFAULT_SITEMAP_BYTES = 50 * 1024 * 1024;

export const DEFAULT_SITEMAP_LIMITS: SitemapLimits = { maxFiles: 50, maxDepth: 3, maxUrls: 50_000, maxBytes: DEFAULT_SITEMAP_BYTES };

/** Where a site's sitemaps start: the ones its robots.txt names, and /sitemap.xml. */
export function sitemapRoots(origin: string, robotsSitemaps: readonly string[]): string[] {
  return [...new Set([...robotsSitemaps, `${origin}/sitemap.xml`])];
}

/**
 * Which hosts' sitemap files a crawl of `start` may fetch: the start host,
 * its subdomains and its parent domains (a sitemap of docs.example.com is
 * often on example.com), when the crawl keeps to the site.
 */
export function sitemapHostAllowed(start: string, sameSite = true): (url: string) => boolean {
  const host = new URL(start).hostname;
  return (u) => {
    try {
      const h = new URL(u).hostname;
      return !sameSite || h === host || h.endsWith(`.${host}`) || host.endsWith(`.${h}`);
    } catch {
      return false;
    }
  };
}

const GZIP_MAGIC = (b: Uint8Array | undefined): b is Uint8Array => b !== undefined && b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/** Why sitemapPages stopped before reading every file it found (undefined: it read them all). */
export type SitemapStop = 'files' | 'urls' | 'bytes' | 'time';

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
 * skipped (a missing /sitemap.xml is normal). `o.budget`, when given, is a
 * time bound: once it aborts, the file in flight is dropped and what was
 * found so far is returned (stopped: 'time'); `signal` aborting rejects.
 * `o.onAnswer` hears of each file the site answered (any HTTP status).
 */
export async function sitemapPages(
  roots: readonly string[], fetchText: FetchText, signal: AbortSignal, mayFetch: (url: string) => boolean, limits: SitemapLimits = DEFAULT_SITEMAP_LIMITS,
  o: { readonly budget?: AbortSignal; readonly onAnswer?: (url: string, statusCode: number) => void } = {},
): Promise<{ pages: string[]; files: number; stopped?: SitemapStop }> {
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
  const maxBytes = limits.maxBytes ?? DEFAULT_SITEMAP_BYTES;
  const fetchSignal = o.budget === undefined ? signal : AbortSignal.any([signal, o.budget]);
  let files = 0;
  let bytes = 0;
  let stopped: SitemapStop | undefined;
  const timeUp = (): boolean => o.budget?.aborted === true;
  while (queue.length > 0) {
    if (files >= limits.maxFiles) { stopped = 'files'; break; }
    if (pages.length >= limits.maxUrls) { stopped = 'urls'; break; }
    if (bytes >= maxBytes) { stopped = 'bytes'; break; }
    if (timeUp()) { stopped = 'time'; break; }
    const { url, depth } = queue.shift()!;
    files++;
    let body: string;
    try {
      const r = await fetchText(url, fetchSignal);
      o.onAnswer?.(url, r.statusCode);
      if (r.statusCode < 200 || r.statusCode > 299) continue;
      const left = maxBytes - bytes;
      if (GZIP_MAGIC(r.bytes)) {
        // Gunzipped within what the byte bound has left: a bigger file (a gzip bomb) stops the reading there.
        const plain = await gunzipAsync(r.bytes, { maxOutputLength: left }).then((b) => b, (e: unknown) => ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? 'too_large' as const : undefined));
        if (plain === 'too_large') { stopped = 'bytes'; break; }
        if (plain === undefined) continue; // not gzip after all, or broken: skipped like any unreadable file
        bytes += plain.length;
        body = plain.toString('utf8');
      } else if (Buffer.byteLength(r.body) > left) {
        stopped = 'bytes';
        break;
      } else {
        body = r.body;
        bytes += Buffer.byteLength(body);
      }
    } catch (e) {
      if (signal.aborted) throw e;
      if (timeUp()) { stopped = 'time'; break; }
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
  if (stopped === undefined && pages.length >= limits.maxUrls && queue.length > 0) stopped = 'urls';
  return stopped === undefined ? { pages, files } : { pages, files, stopped };
}
