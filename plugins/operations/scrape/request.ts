/**
 * POST /v1/scrape's request and response (spec 2.3, 2.5) and the checks
 * JSON Schema cannot express; bulk scrape takes the same options.
 */
import type { EgressPolicy } from '../../../core/egress.js';
import { targetIssue } from '../../../core/egress.js';
import { BadRequest, type FieldIssue, type ProxyNotAvailable } from '../../../core/errors.js';
import type { PageReader } from '../../../core/page.js';
import type { CheckIssue, Unchecked } from '../../../core/schema.js';
import { isCountryCode } from '../../../core/countries.js';
import type { CallerSchemas } from '../../../core/json-extraction.js';
import { DEFAULT_MAX_PAGES, MAX_MAX_PAGES } from '../../../core/documents.js';
import { MAX_AGE_LIMIT } from '../../../core/page-cache.js';
import { StrictObject, Type } from '../../sdk/index.js';
import type { ExtractorPlugin } from '../../sdk/scrape.js';
import { actionIssues, ActionFields } from './actions.js';

/** Headers a client may not set on the target request: hop-by-hop (RFC 9110 7.6.1), framing, and Host. */
export const FORBIDDEN_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'trailers',
  'transfer-encoding', 'upgrade', 'host', 'content-length', 'expect', 'http2-settings',
]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CTL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

export const ScrapeRequest = StrictObject({
  url: Type.String({ minLength: 1, maxLength: 8192, description: 'The page: an absolute http or https URL.' }),
  render_js: Type.Optional(Type.Boolean({ description: 'Render in Chromium (JavaScript runs). +5 credits.' })),
  wait_for: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'With render_js: a CSS selector, or an XPath (starting with / or ( or xpath=) to wait for.' })),
  wait_time: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, description: 'With render_js: seconds to wait for wait_for (default 10); without wait_for, seconds to wait after load.' })),
  user_agent: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  proxy_type: Type.Optional(Type.Union([Type.Literal('datacenter'), Type.Literal('residential')], { description: 'residential: +2 credits.' })),
  proxy_country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, upper case. Alone it means a datacenter proxy in that country.' })),
  follow_redirects: Type.Optional(Type.Boolean({ description: 'Default true (at most 10 redirects).' })),
  extract_links: Type.Optional(Type.Boolean({ description: '+1 credit.' })),
  extract_images: Type.Optional(Type.Boolean({ description: '+1 credit.' })),
  extract_schema: Type.Optional(Type.Boolean({ description: 'JSON-LD, Microdata, RDFa. +2 credits.' })),
  extract_meta: Type.Optional(Type.Boolean({ description: '+1 credit.' })),
  extract_contacts: Type.Optional(Type.Boolean({ description: 'Extension: contacts (emails, phones in E.164, names, job titles, companies). Starter plan or higher; +2 credits.' })),
  extract_social: Type.Optional(Type.Boolean({ description: 'Extension: social-network profiles. Builder plan or higher; +2 credits.' })),
  country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'Extension: ISO 3166-1 alpha-2 region for reading phone numbers written without +country code (default: from the page).' })),
  custom_headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 8192 }), { maxProperties: 50 })),
  cookies: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { maxProperties: 100 })),
  screenshot: Type.Optional(Type.Boolean({ description: 'Needs render_js: true. +3 credits.' })),
  screenshot_options: Type.Optional(StrictObject({
    full_page: Type.Optional(Type.Boolean({ description: 'The whole page, not just the viewport. Default false.' })),
    width: Type.Optional(Type.Integer({ minimum: 320, maximum: 3840, description: 'Viewport width in CSS pixels. Default 1280.' })),
    height: Type.Optional(Type.Integer({ minimum: 240, maximum: 2160, description: 'Viewport height. Default 800.' })),
    format: Type.Optional(Type.Union([Type.Literal('png'), Type.Literal('jpeg')], { description: 'Default png.' })),
    quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'jpeg only. Default 80.' })),
    selector: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Capture only the first element matching this CSS selector.' })),
  })),
  timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 120, description: 'Extension: seconds for the whole fetch, render included. Default 30.' })),
  main_content: Type.Optional(Type.Boolean({ description: 'Extension: add main_content, the text of the main article only.' })),
  markdown: Type.Optional(Type.Boolean({ description: 'Extension: add markdown, the main content as Markdown.' })),
  extract_json: Type.Optional(StrictObject({
    schema: Type.Record(Type.String(), Type.Any(), { description: 'A JSON Schema (draft-07) with "type": "object": the answer, extracted_json, validates against it. Strings marked "x-quote": true must be found in the page. At most 16,384 characters as JSON and 16 levels deep; no pattern, patternProperties, $id or non-local $ref.' }),
    prompt: Type.Optional(Type.String({ minLength: 1, maxLength: 4000, description: 'What to extract, in words (the schema\'s descriptions count too).' })),
  }, { description: 'Extension: a model (LLM_BASE_URL) fills the schema from the main content; the answer is checked (docs/scrape.md). +5 credits; 503 MODEL_UNAVAILABLE on a server without a model.' })),
  extract_fields: Type.Optional(Type.Object({
    base_selector: Type.Optional(Type.String({ description: 'CSS or XPath: one record per match (a list of records); without it, one record from the whole page.' })),
    selector_type: Type.Optional(Type.Union([Type.Literal('css'), Type.Literal('xpath')], { description: 'The language of every selector (default: XPath when it starts with / ./ ../ ( or xpath=, else CSS).' })),
    // Checked, with every problem at its path, by the fields extractor (plugins/extractors/fields/spec.ts).
    fields: Type.Optional(Type.Any({
      description: 'Required. 1 to 50 of { name, selector, type: text|number|attribute|html|list (default text), attribute, locale, selector_type, fields (nested records) }.',
      tsType: 'Array<{ name: string; selector?: string; type?: "text" | "number" | "attribute" | "html" | "list"; attribute?: string; locale?: string; selector_type?: "css" | "xpath"; fields?: unknown[] }>',
    })),
  }, { additionalProperties: true, description: 'Extension: values picked by CSS or XPath selectors, answered in `extracted` (docs/scrape.md#extract_fields). +1 credit.' })),
  extractors: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,63}$' }), { maxItems: 20, uniqueItems: true, description: 'Extension: custom extractor plugins to run, by id; results under extracted.<id>.' })),
  max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_MAX_PAGES, description: `Extension: a PDF's pages to read at most (default ${DEFAULT_MAX_PAGES}). Held and charged: 1 credit per 10 pages read beyond the first 10.` })),
  max_age: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_AGE_LIMIT, description: `Extension: seconds (0 to ${MAX_AGE_LIMIT}). When this account fetched the same URL with the same fetch options at most this long ago, answer from the stored copy without fetching (cache.hit, cache.age); render_js and screenshot are then not charged. Never with cookies, custom_headers or a proxy (docs/scrape.md#cache-max_age).` })),
  track_changes: Type.Optional(Type.Boolean({ description: 'Extension: compare the main content (as Markdown) with this account\'s previous tracked scrape of the URL: changes.status new, same (white space aside) or changed, with a unified diff. +1 credit.' })),
  ...ActionFields,
});
export type ScrapeInput = typeof ScrapeRequest.static;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
export const ScrapeResponse = Type.Object({
  url: Type.String(),
  final_url: Type.String(),
  status_code: Type.Integer(),
  content_type: Type.String(),
  content: Type.String({ description: 'The raw HTML (for render_js, the rendered DOM).' }),
  text_content: Type.String(),
  load_time: Type.Number({ description: 'Seconds.' }),
  links: Type.Optional(Type.Array(Type.Any())),
  images: Type.Optional(Type.Array(Type.Any())),
  schema_data: Type.Optional(Type.Array(Type.Any())),
  meta_data: Type.Optional(Type.Any()),
  contacts: Type.Optional(Type.Array(Type.Any())),
  social_profiles: Type.Optional(Type.Array(Type.Any())),
  main_content: Type.Optional(Type.String()),
  markdown: Type.Optional(Type.String()),
  extracted: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Any()), Type.Array(Type.Record(Type.String(), Type.Any()))], {
    description: 'custom extractors: their values by id; extract_fields: one record, or a list of records with base_selector (null when the page is not HTML).',
  })),
  extracted_json: Type.Optional(Nullable(Type.Record(Type.String(), Type.Any(), { description: 'extract_json\'s answer: valid against its schema.' }))),
  extracted_json_warnings: Type.Optional(Type.Array(StrictObject({ code: Type.String(), path: Type.String(), message: Type.String() }), {
    description: 'QUOTE_NOT_FOUND (an x-quote value not found in the page, after one retry), CONTENT_TRUNCATED (the model saw only the start of the main content), NO_CONTENT (nothing to read: extracted_json is null, not charged).',
  })),
  extractor_errors: Type.Optional(Type.Record(Type.String(), Type.String())),
  screenshot_url: Type.Optional(Type.String()),
  screenshot_expires_at: Type.Optional(Type.String()),
  actions: Type.Optional(StrictObject({
    results: Type.Array(StrictObject({
      index: Type.Integer({ description: 'The action\'s position in the request\'s actions.' }),
      type: Type.String(),
      ok: Type.Boolean(),
      error: Type.Optional(Type.String({ description: 'Why it failed; the actions after it were not run.' })),
      value: Type.Optional(Type.Any({ description: 'execute_javascript: its return value; screenshot: its URL; scroll to bottom: { steps, height }.', tsType: 'unknown' })),
    }), { description: 'The actions run, in order: all of them, or up to the first that failed.' }),
    screenshots: Type.Array(Type.String(), { description: 'The screenshot actions\' images, in order (expiring like screenshot_url).' }),
  }, { description: 'Extension: with actions, what each one did.' })),
  warnings: Type.Optional(Type.Array(StrictObject({ code: Type.String(), message: Type.String() }), {
    description: 'What the page was delivered without, and why: SCREENSHOT_NOT_STORED (the blob store failed, e.g. a full disk; the screenshot, or a screenshot action\'s, is not charged).',
  })),
  proxy: Type.Optional(StrictObject({ type: Type.String(), country: Nullable(Type.String()) })),
  cache: Type.Optional(StrictObject({
    hit: Type.Boolean({ description: 'true: answered from the stored copy, without fetching.' }),
    age: Type.Optional(Type.Integer({ description: 'With hit: seconds since the stored copy was fetched.' })),
    uncacheable: Type.Optional(Type.String({ description: 'The field that keeps this request out of the cache (cookies, custom_headers, proxy_type, proxy_country, actions): it was fetched, and not stored.' })),
  }, { description: 'Extension: with max_age, what the cache did.' })),
  changes: Type.Optional(StrictObject({
    status: Type.Union([Type.Literal('new'), Type.Literal('same'), Type.Literal('changed')], { description: 'new: not tracked before; same: the Markdown differs in white space at most; changed.' }),
    previous_scraped_at: Nullable(Type.String({ description: 'ISO 8601: when the version compared against was scraped.' })),
    diff: Nullable(Type.String({ description: 'With changed: a unified diff of the Markdown, previous to current.' })),
  }, { description: 'Extension: with track_changes, this page against the account\'s previous tracked scrape of it.' })),
  document: Type.Optional(StrictObject({
    type: Type.Union([Type.Literal('pdf'), Type.Literal('docx'), Type.Literal('rss'), Type.Literal('atom'), Type.Literal('json_feed')]),
    pages: Nullable(Type.Integer({ description: 'Pages in the document (PDF); null for other formats.' })),
    pages_read: Nullable(Type.Integer({ description: 'Pages read (at most max_pages).' })),
    title: Nullable(Type.String()),
    author: Nullable(Type.String()),
    created: Nullable(Type.String({ description: 'ISO 8601.' })),
    language: Nullable(Type.String()),
    warnings: Type.Array(Type.String(), { description: 'What was left out and why: no text layer (a scanned PDF: no OCR), pages past max_pages, the time limit.' }),
  }, { description: 'Extension: the page was a document (PDF, DOCX, RSS, Atom, JSON Feed): what it says of itself.' })),
  feed: Type.Optional(StrictObject({
    title: Nullable(Type.String()),
    link: Nullable(Type.String()),
    items: Type.Array(StrictObject({ title: Nullable(Type.String()), link: Nullable(Type.String()), date: Nullable(Type.String()), summary: Nullable(Type.String()) })),
  }, { description: 'Extension: the page was an RSS, Atom or JSON feed: its items.' })),
  credits_used: Type.Integer(),
  remaining_credits: Type.Integer(),
  request_id: Type.Optional(Type.String()),
});

/**
 * Semantic checks JSON Schema cannot express, all reported at once. Run by
 * the validate stage over whatever fields passed the schema, so any field
 * may be missing (and a record's value or an array's item undefined).
 */
function check(i: Unchecked<ScrapeInput>, extractors: ReadonlyMap<string, ExtractorPlugin>, schemas?: CallerSchemas): FieldIssue[] {
  const issues: FieldIssue[] = actionIssues(i);
  if (i.extract_json !== undefined) issues.push(...extractJsonIssues(i.extract_json, schemas));
  if (i.screenshot === true && i.render_js !== true) issues.push({ field: 'screenshot', message: 'needs render_js: true (a screenshot is taken in the browser)' });
  if (i.screenshot_options !== undefined && i.screenshot !== true) issues.push({ field: 'screenshot_options', message: 'only applies with screenshot: true' });
  if (i.screenshot_options?.quality !== undefined && i.screenshot_options.format !== 'jpeg') issues.push({ field: 'screenshot_options.quality', message: 'only applies to format "jpeg"' });
  if (i.wait_for !== undefined && i.render_js !== true) issues.push({ field: 'wait_for', message: 'needs render_js: true' });
  if (i.wait_time !== undefined && i.render_js !== true) issues.push({ field: 'wait_time', message: 'needs render_js: true' });
  if (i.user_agent !== undefined && CTL.test(i.user_agent)) issues.push({ field: 'user_agent', message: 'must not contain control characters' });
  for (const [name, value] of Object.entries(i.custom_headers ?? {})) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) issues.push({ field: `custom_headers.${name}`, message: 'is not a valid header name' });
    else if (FORBIDDEN_HEADERS.has(lower)) issues.push({ field: `custom_headers.${name}`, message: `${lower} cannot be set: it is a hop-by-hop or framing header, or Host` });
    else if (lower === 'cookie' && i.cookies !== undefined) issues.push({ field: `custom_headers.${name}`, message: 'give cookies in cookies or in a Cookie header, not both' });
    if (typeof value === 'string' && CTL.test(value)) issues.push({ field: `custom_headers.${name}`, message: 'value must not contain control characters' });
  }
  for (const [name, value] of Object.entries(i.cookies ?? {})) {
    if (!TOKEN.test(name)) issues.push({ field: `cookies.${name}`, message: 'is not a valid cookie name' });
    if (typeof value === 'string' && /[;\s",\\]|[\u0000-\u001f\u007f]/.test(value)) issues.push({ field: `cookies.${name}`, message: 'value must not contain ; , " \\ whitespace or control characters' });
  }
  if (i.country !== undefined && !isCountryCode(i.country)) issues.push({ field: 'country', message: `${i.country} is not an ISO 3166-1 alpha-2 country code` });
  if (i.proxy_country !== undefined && !isCountryCode(i.proxy_country)) issues.push({ field: 'proxy_country', message: `${i.proxy_country} is not an ISO 3166-1 alpha-2 country code` });
  (i.extractors ?? []).forEach((id, n) => {
    if (id === undefined) return;
    const x = extractors.get(id);
    if (x === undefined) issues.push({ field: `extractors[${n}]`, message: `no extractor "${id}" on this server (available: ${[...extractors.values()].filter((e) => !e.builtin).map((e) => e.id).join(', ') || 'none'})` });
    else if (x.builtin) issues.push({ field: `extractors[${n}]`, message: `"${id}" is built in: switch it on with its own field` });
  });
  if (i.extract_fields !== undefined) {
    const fields = extractors.get('fields');
    if (fields?.check === undefined) issues.push({ field: 'extract_fields', message: 'this server has no fields extractor' });
    else issues.push(...fields.check(i.extract_fields, 'extract_fields'));
    if (i.extractors !== undefined) issues.push({ field: 'extract_fields', message: 'cannot be combined with extractors (both answer in extracted)' });
  }
  return issues;
}

/** extract_json's checks: its schema judged by the validator that will run it, its prompt's characters. */
function extractJsonIssues(x: Unchecked<NonNullable<ScrapeInput['extract_json']>>, schemas: CallerSchemas | undefined): FieldIssue[] {
  const issues: FieldIssue[] = [];
  // The schema field is missing or was refused already (the schema's own errors name it).
  if ('schema' in x && x.schema !== undefined && schemas !== undefined) {
    const compiled = schemas.compile(x.schema);
    if (!compiled.ok) for (const p of compiled.problems) issues.push({ field: 'extract_json.schema', message: p });
  }
  if (typeof x.prompt === 'string' && CTL_BUT_LINES.test(x.prompt)) issues.push({ field: 'extract_json.prompt', message: 'must not contain control characters (line breaks and tabs are fine)' });
  if (typeof x.prompt === 'string' && /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(x.prompt)) issues.push({ field: 'extract_json.prompt', message: 'contains a lone surrogate, which has no UTF-8 encoding' });
  return issues;
}
const CTL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * The scrape's semantic checks over this server's extractors, browser and
 * proxies: the validate stage runs them (bulk scrape's too) over whatever
 * fields passed the schema.
 */
export function scrapeChecks(pages: PageReader, extractors: ReadonlyMap<string, ExtractorPlugin>, egress: EgressPolicy, schemas?: CallerSchemas, tracksChanges = true) {
  /** Everything the schema cannot judge about a request but its URL: the semantic checks, and a browser for render_js. */
  const optionIssues = (i: Unchecked<Omit<ScrapeInput, 'url'>>): CheckIssue[] => {
    const issues: CheckIssue[] = check(i, extractors, schemas);
    if (i.render_js === true && !pages.renders) issues.push({ field: 'render_js', message: 'this server has no browser fetcher' });
    if (i.track_changes === true && !tracksChanges) issues.push({ field: 'track_changes', message: 'this server keeps no page history' });
    return issues;
  };

  /** The single scrape's semantic check: its URL (the egress guard) and its options, as one list. */
  const requestCheck = (i: Unchecked<ScrapeInput>): CheckIssue[] => {
    const url = targetIssue('url', i.url, egress);
    return url === undefined ? optionIssues(i) : [url, ...optionIssues(i)];
  };

  /**
   * Everything about a request but its URL, as one failure: the semantic
   * checks, a browser for render_js, a proxy of the kind asked for. A job
   * runner asks this again of a stored request (the server may have lost a
   * proxy or its browser since).
   */
  const optionsProblem = (i: Omit<ScrapeInput, 'url'>): BadRequest | ProxyNotAvailable | undefined => {
    const issues = optionIssues(i);
    if (issues.length > 0) return new BadRequest({ message: 'Invalid scrape request', validationErrors: issues });
    return pages.proxyProblem(i);
  };

  return { optionIssues, requestCheck, optionsProblem };
}
