/**
 * Firecrawl's scrape options (v1 and v2: `formats`, `onlyMainContent`,
 * `headers`, `waitFor`, `timeout`, `actions`, `location`, `maxAge`, ...)
 * as the fields of a native POST /v1/scrape body. A pure translation: it
 * answers the native fields, the formats the answer is shaped by, warnings
 * for what Scour does not honour (ignored, never refused), and field issues
 * for what is malformed (a 400 in Firecrawl's shape, at Firecrawl's path).
 * Safety is the native request's: headers, cookies and targets pass through
 * to the native checks and egress guard unchanged.
 */
import type { FieldIssue } from '../../../core/errors.js';
import { MAX_AGE_LIMIT } from '../../../core/page-cache.js';
import { translateActions } from './actions.js';

/** What the Firecrawl answer holds (shaping reads it; see documents.ts). */
export interface Formats {
  markdown: boolean;
  html: boolean;
  rawHtml: boolean;
  links: boolean;
  images: boolean;
  screenshot: boolean;
  /** json (v1 and v2) or extract (v1's older name): the model's answer, under this key. */
  json: 'json' | 'extract' | undefined;
  changeTracking: boolean;
}

export interface ScrapeEnv {
  readonly version: 1 | 2;
  /** The server has a browser (screenshot, waitFor and actions need one). */
  readonly renders: boolean;
  /** Single scrape (json and changeTracking are single-scrape options natively). */
  readonly single: boolean;
}

export interface TranslatedScrape {
  readonly native: Record<string, unknown>;
  readonly formats: Formats;
  readonly warnings: string[];
  readonly issues: FieldIssue[];
}

export const NO_FORMATS: Formats = { markdown: false, html: false, rawHtml: false, links: false, images: false, screenshot: false, json: undefined, changeTracking: false };

/** Formats Firecrawl knows and Scour does not produce: ignored with a warning. */
const UNSUPPORTED_FORMATS = new Set(['summary', 'attributes', 'branding', 'product', 'menu', 'audio', 'video', 'question', 'highlights', 'query']);
/** Fields every client sends or that only tune Firecrawl's own service: ignored without a word. */
const QUIET = new Set(['origin', 'integration', 'blockAds', 'removeBase64Images', 'storeInCache', 'fastMode', 'useMock', 'parsers', 'zeroDataRetention', 'minAge', 'domainTools', 'toolDetail', 'auditMetadata', 'profile']);
/** Fields translated below. */
const HANDLED = new Set([
  'formats', 'onlyMainContent', 'includeTags', 'excludeTags', 'headers', 'waitFor', 'mobile', 'skipTlsVerification', 'timeout', 'actions',
  'location', 'maxAge', 'proxy', 'jsonOptions', 'extract', 'changeTrackingOptions',
]);
const MAX_FORMATS = 30;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clip = (s: string, n = 40) => (s.length <= n ? s : `${s.slice(0, n)}…`);
const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

/**
 * `o`: the scrape options (the whole body of a scrape, the options of a
 * batch or a crawl's scrapeOptions), without the caller's own fields.
 * `at`: the path prefix of issues ("" or "scrapeOptions.").
 */
export function translateScrapeOptions(o: Record<string, unknown>, env: ScrapeEnv, at = ''): TranslatedScrape {
  const native: Record<string, unknown> = { extract_meta: true };
  const formats: Formats = { ...NO_FORMATS };
  const warnings: string[] = [];
  const issues: FieldIssue[] = [];
  let renderJs = false;
  let jsonSpec: { schema?: unknown; prompt?: unknown } | undefined;
  let screenshot: { fullPage?: unknown; quality?: unknown; viewport?: unknown } | undefined;

  // formats (default: markdown)
  const list = o.formats === undefined ? ['markdown'] : o.formats;
  if (!Array.isArray(list)) issues.push({ field: `${at}formats`, message: 'must be an array of formats' });
  else if (list.length > MAX_FORMATS) issues.push({ field: `${at}formats`, message: `at most ${MAX_FORMATS} formats` });
  else {
    list.forEach((f, n) => {
      const field = `${at}formats[${n}]`;
      const type = typeof f === 'string' ? f : isObject(f) && typeof f.type === 'string' ? f.type : undefined;
      if (type === undefined) {
        issues.push({ field, message: 'must be a format name or an object with a type' });
        return;
      }
      switch (type) {
        case 'markdown': formats.markdown = true; return;
        case 'html': formats.html = true; return;
        case 'rawHtml': formats.rawHtml = true; return;
        case 'links': formats.links = true; return;
        case 'images': formats.images = true; return;
        case 'screenshot':
        case 'screenshot@fullPage':
          formats.screenshot = true;
          screenshot = { ...(isObject(f) ? f : {}), ...(type === 'screenshot@fullPage' ? { fullPage: true } : {}) };
          return;
        case 'json':
        case 'extract':
          formats.json = type === 'extract' && env.version === 1 ? 'extract' : 'json';
          if (type === 'extract' && env.version === 2) issues.push({ field, message: 'extract is a v1 format; v2 calls it json' });
          jsonSpec = isObject(f) ? f : (env.version === 1 ? (isObject(o.jsonOptions) ? o.jsonOptions : isObject(o.extract) ? o.extract : {}) : {});
          return;
        case 'changeTracking': formats.changeTracking = true; return;
        default:
          if (UNSUPPORTED_FORMATS.has(type)) warnings.push(`format ${type} is not supported by this server; ignored`);
          else issues.push({ field, message: `unknown format "${clip(type)}"` });
      }
    });
  }

  if (formats.markdown) native.markdown = true;
  if (formats.links) native.extract_links = true;
  if (formats.images) native.extract_images = true;

  if (jsonSpec !== undefined) {
    const { schema, prompt } = jsonSpec;
    if (schema !== undefined && !isObject(schema)) issues.push({ field: `${at}formats.json.schema`, message: 'must be a JSON Schema object' });
    else if (prompt !== undefined && typeof prompt !== 'string') issues.push({ field: `${at}formats.json.prompt`, message: 'must be a string' });
    else if (!env.single) {
      warnings.push('json is answered by single scrapes only on this server; ignored');
      formats.json = undefined;
    } else {
      // Scour extracts against a schema; a prompt alone gets an open object.
      native.extract_json = { schema: schema ?? { type: 'object' }, ...(typeof prompt === 'string' && prompt !== '' ? { prompt } : {}) };
    }
  }
  if (formats.changeTracking) {
    if (env.single) native.track_changes = true;
    else {
      warnings.push('changeTracking is answered by single scrapes only on this server; ignored');
      formats.changeTracking = false;
    }
  }

  if (screenshot !== undefined) {
    if (!env.renders) {
      warnings.push('screenshot: this server has no browser; no screenshot was taken');
      formats.screenshot = false;
    } else {
      renderJs = true;
      native.screenshot = true;
      const opts: Record<string, unknown> = {};
      if (screenshot.fullPage === true) opts.full_page = true;
      if (typeof screenshot.quality === 'number' && Number.isFinite(screenshot.quality)) {
        opts.format = 'jpeg';
        opts.quality = clamp(Math.round(screenshot.quality), 1, 100);
      }
      const vp = screenshot.viewport;
      if (isObject(vp) && typeof vp.width === 'number' && typeof vp.height === 'number' && Number.isFinite(vp.width) && Number.isFinite(vp.height)) {
        opts.width = clamp(Math.round(vp.width), 320, 3840);
        opts.height = clamp(Math.round(vp.height), 240, 2160);
      }
      if (Object.keys(opts).length > 0) native.screenshot_options = opts;
    }
  }

  // Options
  if (o.onlyMainContent === false && formats.markdown) warnings.push('onlyMainContent: false is not supported; markdown is the main content');
  if (o.includeTags !== undefined || o.excludeTags !== undefined) warnings.push('includeTags and excludeTags are not supported; ignored');
  if (o.mobile === true) warnings.push('mobile is not supported; the page was read as on a desktop');
  if (o.skipTlsVerification === true) warnings.push('skipTlsVerification is not supported; certificates are always verified');
  if (o.proxy !== undefined && o.proxy !== 'basic' && o.proxy !== 'auto') warnings.push(`proxy "${clip(String(o.proxy))}" is not supported; the server's own network (or its configured proxy) was used`);

  const headers: Record<string, string> = {};
  if (o.headers !== undefined) {
    if (!isObject(o.headers)) issues.push({ field: `${at}headers`, message: 'must be an object of header names to string values' });
    else {
      for (const [k, v] of Object.entries(o.headers)) {
        // Defined, not assigned: a header named __proto__ stays a plain key (and the native check judges it).
        if (typeof v !== 'string') issues.push({ field: `${at}headers.${clip(k)}`, message: 'must be a string' });
        else Object.defineProperty(headers, k, { value: v, enumerable: true, writable: true, configurable: true });
      }
    }
  }
  if (o.location !== undefined) {
    if (!isObject(o.location)) issues.push({ field: `${at}location`, message: 'must be an object (country, languages)' });
    else {
      const { country, languages } = o.location;
      if (country !== undefined && typeof country !== 'string') issues.push({ field: `${at}location.country`, message: 'must be a string' });
      else if (country !== undefined) warnings.push('location.country is not supported; the page was fetched from the server\'s own network');
      if (languages !== undefined) {
        if (!Array.isArray(languages) || languages.length > 20 || !languages.every((l) => typeof l === 'string' && /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/.test(l))) {
          issues.push({ field: `${at}location.languages`, message: 'must be at most 20 language tags (en, en-US)' });
        } else if (languages.length > 0 && !Object.keys(headers).some((k) => k.toLowerCase() === 'accept-language')) {
          // Honoured as the site would see a browser set to these languages.
          headers['Accept-Language'] = languages.join(', ');
        }
      }
    }
  }
  if (Object.keys(headers).length > 0) native.custom_headers = headers;

  if (o.timeout !== undefined) {
    if (typeof o.timeout !== 'number' || !Number.isFinite(o.timeout) || o.timeout <= 0) issues.push({ field: `${at}timeout`, message: 'must be a positive number of milliseconds' });
    else native.timeout = clamp(Math.ceil(o.timeout / 1000), 1, 120);
  }
  if (o.waitFor !== undefined) {
    if (typeof o.waitFor !== 'number' || !Number.isFinite(o.waitFor) || o.waitFor < 0) issues.push({ field: `${at}waitFor`, message: 'must be a non-negative number of milliseconds' });
    else if (o.waitFor > 0) {
      if (!env.renders) warnings.push('waitFor: this server has no browser; the page was read without waiting');
      else {
        renderJs = true;
        native.wait_time = clamp(Math.ceil(o.waitFor / 1000), 1, 60);
      }
    }
  }
  if (o.maxAge !== undefined) {
    if (typeof o.maxAge !== 'number' || !Number.isFinite(o.maxAge) || o.maxAge < 0) issues.push({ field: `${at}maxAge`, message: 'must be a non-negative number of milliseconds' });
    else native.max_age = Math.min(Math.floor(o.maxAge / 1000), MAX_AGE_LIMIT);
  }
  if (o.actions !== undefined && !(Array.isArray(o.actions) && o.actions.length === 0)) {
    const t = translateActions(o.actions, `${at}actions`);
    issues.push(...t.issues);
    warnings.push(...t.notes);
    if (t.actions.length > 0) {
      // Handed to the native scrape as they are: it runs them in the browser, or refuses what it cannot run.
      native.actions = t.actions;
      renderJs = true;
    }
  }
  if (renderJs) native.render_js = true;

  const ignored = Object.keys(o).filter((k) => !HANDLED.has(k) && !QUIET.has(k));
  if (ignored.length > 0) warnings.push(`not supported, ignored: ${ignored.slice(0, 10).map((k) => clip(k)).join(', ')}${ignored.length > 10 ? ', …' : ''}`);
  return { native, formats, warnings, issues };
}

/** The warnings as Firecrawl's one `warning` string (undefined when there are none). */
export const warningText = (warnings: readonly string[]): string | undefined => (warnings.length === 0 ? undefined : warnings.join('; '));
