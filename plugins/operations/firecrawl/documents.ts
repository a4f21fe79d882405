/**
 * Firecrawl's document (`markdown`, `html`, `rawHtml`, `links`, `images`,
 * `screenshot`, `json`, `changeTracking`, `actions`, `metadata`) from a
 * native scrape answer, holding what its formats asked for; and the
 * document of a crawled page, from the index's copy of it.
 */
import type { StoredDocument } from '../../../core/search.js';
import type { Formats } from './scrape-options.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** A meta value (a string, or several as an array): the first. */
const first = (v: unknown): string | undefined => (Array.isArray(v) ? str(v[0]) : str(v));

/** Firecrawl's metadata from the native meta_data and fetch facts. */
function metadataOf(r: Json, scrapeId: string | undefined): Json {
  const meta = isObject(r.meta_data) ? r.meta_data : {};
  const og = isObject(meta.open_graph) ? meta.open_graph : {};
  const other = isObject(meta.meta) ? meta.meta : {};
  const out: Json = {};
  const put = (k: string, v: unknown) => { if (v !== undefined && v !== null) out[k] = v; };
  put('title', str(meta.title));
  put('description', str(meta.description));
  put('language', str(meta.language));
  put('keywords', first(other.keywords));
  put('robots', first(other.robots));
  put('ogTitle', first(og.title));
  put('ogDescription', first(og.description));
  put('ogUrl', first(og.url));
  put('ogImage', first(og.image));
  put('ogLocale', first(og.locale));
  put('ogSiteName', first(og.site_name));
  put('favicon', str(meta.favicon));
  put('publishedTime', first(og['article:published_time']));
  put('modifiedTime', first(og['article:modified_time']));
  put('sourceURL', str(r.url));
  put('url', str(r.final_url));
  put('statusCode', typeof r.status_code === 'number' ? r.status_code : undefined);
  put('contentType', str(r.content_type));
  put('scrapeId', scrapeId);
  put('creditsUsed', typeof r.credits_used === 'number' ? r.credits_used : undefined);
  put('cacheState', isObject(r.cache) ? (r.cache.hit === true ? 'hit' : 'miss') : undefined);
  put('proxyUsed', 'basic');
  if (isObject(r.document)) put('numPages', typeof r.document.pages === 'number' ? r.document.pages : undefined);
  return out;
}

/** The document of one native scrape answer. */
export function documentOf(r: Json, formats: Formats, scrapeId?: string, warning?: string): Json {
  const doc: Json = {};
  if (formats.markdown) doc.markdown = str(r.markdown) ?? '';
  const html = str(r.content) ?? '';
  if (formats.html) doc.html = html;
  if (formats.rawHtml) doc.rawHtml = html;
  if (formats.links) {
    const urls = Array.isArray(r.links) ? r.links.map((l) => (isObject(l) ? str(l.url) : undefined)).filter((u): u is string => u !== undefined) : [];
    doc.links = [...new Set(urls)];
  }
  if (formats.images) {
    const urls = Array.isArray(r.images) ? r.images.map((i) => (isObject(i) ? str(i.src) : undefined)).filter((u): u is string => u !== undefined) : [];
    doc.images = [...new Set(urls)];
  }
  if (formats.screenshot && typeof r.screenshot_url === 'string') doc.screenshot = r.screenshot_url;
  if (formats.json !== undefined) doc[formats.json] = r.extracted_json ?? null;
  if (formats.changeTracking && isObject(r.changes)) {
    const c = r.changes;
    doc.changeTracking = {
      previousScrapeAt: c.previous_scraped_at ?? null,
      changeStatus: c.status,
      visibility: 'visible',
      ...(typeof c.diff === 'string' ? { diff: { text: c.diff } } : {}),
    };
  }
  if (isObject(r.actions)) {
    // The native answer (results, screenshots) in Firecrawl's places.
    const a = r.actions;
    const results = Array.isArray(a.results) ? a.results : [];
    // Firecrawl's javascriptReturns: each script's value with its JSON type, in order.
    const javascriptReturns = results.filter((x) => isObject(x) && x.type === 'execute_javascript' && x.ok === true)
      .map((x) => { const value = (x as Json).value ?? null; return { type: value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value, value }; });
    doc.actions = { screenshots: Array.isArray(a.screenshots) ? a.screenshots : [], scrapes: [], javascriptReturns, pdfs: [], results };
  }
  const notes: string[] = [];
  if (warning !== undefined) notes.push(warning);
  if (Array.isArray(r.warnings)) for (const w of r.warnings) if (isObject(w) && typeof w.message === 'string') notes.push(w.message);
  if (Array.isArray(r.extracted_json_warnings)) for (const w of r.extracted_json_warnings) if (isObject(w) && typeof w.message === 'string') notes.push(`json: ${w.message}`);
  if (notes.length > 0) doc.warning = notes.join('; ');
  doc.metadata = metadataOf(r, scrapeId);
  return doc;
}

/** A crawled page's document: the text and title the crawl stored in the index (Markdown is its text). */
export function crawledDocument(url: string, item: Json | undefined, stored: StoredDocument | undefined): Json {
  const title = stored?.title ?? (item !== undefined ? str(item.title) : undefined);
  return {
    markdown: stored?.text ?? '',
    metadata: {
      ...(title ? { title } : {}),
      ...(stored?.language ? { language: stored.language } : {}),
      sourceURL: url,
      url,
      statusCode: item !== undefined && typeof item.status_code === 'number' ? item.status_code : 200,
      proxyUsed: 'basic',
    },
  };
}
