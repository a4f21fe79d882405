/**
 * POST /v1/scrape (spec 2.3, 2.5, rule 2, 8.5): one URL, fetched by the
 * plain HTTP fetcher or, with render_js, by the browser fetcher; through a
 * proxy when asked (a failed proxy is rotated on retry); handed to the
 * extractors the request asks for (built-in by their extract_* fields, run
 * through the host's extraction port: a worker pool that parses the page
 * once for all of them; custom ones by name, on a parse of their own in this
 * thread, since closures cannot move to a worker); a screenshot stored in the blob
 * store and served back at an unguessable, expiring URL. Priced and charged
 * through the reserve and bill stages: failures cost nothing.
 */
import { randomBytes } from 'node:crypto';
import { Effect } from 'effect';
import type { RequestContext } from '../../core/context.js';
import { checkTargetUrl, type EgressPolicy, targetIssue } from '../../core/egress.js';
import type { ExtractionFailure, PageSource } from '../../core/extraction.js';
import {
  type ApiFailure, BadRequest, type FieldIssue, isApiFailure, NotFound, ProxyNotAvailable, TargetBlocked, TargetNotAllowed, TargetUnreachable,
} from '../../core/errors.js';
import { Pipeline } from '../../core/pipeline.js';
import type { BlobStore } from '../../core/ports.js';
import type { SearchIndex } from '../../core/search.js';
import type { PluginHost } from '../../core/plugin.js';
import type { CheckIssue, Unchecked } from '../../core/schema.js';
import type { Validated } from '../../core/stages/index.js';
import { type DeliverableOption, scrapeCharge, scrapePrice } from '../../config/prices.js';
import { HTML_FILTER } from '../extractors/common.js';
import { parsePage } from '../extractors/parse.js';
import { renderText } from '../extractors/text.js';
import { isCountryCode } from '../../core/countries.js';
import { defineOperation, errorSpec, schema, StrictObject, Type } from '../sdk/index.js';
import type {
  ExtractorPlugin, FetcherPlugin, FetchRequest, FetchResult, Page, ProxyChoice, ProxyProviderPlugin, ScreenshotSpec,
} from '../sdk/scrape.js';

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
  extractors: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,63}$' }), { maxItems: 20, uniqueItems: true, description: 'Extension: custom extractor plugins to run, by id; results under extracted.<id>.' })),
});
type ScrapeInput = typeof ScrapeRequest.static;

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
  extracted: Type.Optional(Type.Record(Type.String(), Type.Any())),
  extractor_errors: Type.Optional(Type.Record(Type.String(), Type.String())),
  screenshot_url: Type.Optional(Type.String()),
  screenshot_expires_at: Type.Optional(Type.String()),
  warnings: Type.Optional(Type.Array(StrictObject({ code: Type.String(), message: Type.String() }), {
    description: 'What the page was delivered without, and why: SCREENSHOT_NOT_STORED (the blob store failed, e.g. a full disk; the screenshot is not charged).',
  })),
  proxy: Type.Optional(StrictObject({ type: Type.String(), country: Nullable(Type.String()) })),
  credits_used: Type.Integer(),
  remaining_credits: Type.Integer(),
  request_id: Type.Optional(Type.String()),
});

export interface ScrapeOptions {
  readonly blobs: BlobStore;
  /** Which addresses a target may have (core/egress.ts). */
  readonly egress: EgressPolicy;
  /** How long a screenshot URL works. */
  readonly screenshotTtlMs: number;
  /** Absolute base for screenshot URLs (SCOUR_PUBLIC_URL); unset: from the request's Host header. */
  readonly publicUrl: string | undefined;
  /** Attempts through different proxies after a proxy failure. */
  readonly proxyRetries: number;
  /** SCOUR_INDEX_SCRAPES: index each successful scrape into its account's own collection. */
  readonly index?: SearchIndex | undefined;
}

/**
 * Semantic checks JSON Schema cannot express, all reported at once. Run by
 * the validate stage over whatever fields passed the schema, so any field
 * may be missing (and a record's value or an array's item undefined).
 */
function check(i: Unchecked<ScrapeInput>, extractors: ReadonlyMap<string, ExtractorPlugin>): FieldIssue[] {
  const issues: FieldIssue[] = [];
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
  return issues;
}

const waitForSpec = (s: string): { kind: 'css' | 'xpath'; selector: string } => {
  if (s.startsWith('xpath=')) return { kind: 'xpath', selector: s.slice(6) };
  if (s.startsWith('/') || s.startsWith('(')) return { kind: 'xpath', selector: s };
  return { kind: 'css', selector: s };
};

const screenshotSpec = (i: ScrapeInput): ScreenshotSpec | undefined => {
  if (!i.screenshot) return undefined;
  const o = i.screenshot_options ?? {};
  const format = o.format ?? 'png';
  return {
    fullPage: o.full_page ?? false, width: o.width ?? 1280, height: o.height ?? 800, format,
    quality: format === 'jpeg' ? (o.quality ?? 80) : undefined, selector: o.selector,
  };
};

/** An anti-bot challenge page answered with 200 (Cloudflare, DataDome, PerimeterX, Akamai, ...). */
export function looksLikeChallenge(result: FetchResult): boolean {
  const h = result.headers;
  if (h['cf-mitigated'] === 'challenge') return true;
  if (result.statusCode !== 200 && result.statusCode !== 403 && result.statusCode !== 429 && result.statusCode !== 503) return false;
  const head = result.body.slice(0, 20_000);
  return /<title>\s*(Just a moment\.\.\.|Attention Required! \| Cloudflare|Access denied|Please verify you are a human)\s*<\/title>/i.test(head)
    || /\b(cf-chl-|challenge-platform|_cf_chl_opt|captcha-delivery\.com|px-captcha|_pxCaptcha)/.test(head);
}

/** Run a fetch as an Effect: the AbortSignal fires when the fiber is interrupted (client gone). */
function runFetch(fetcher: FetcherPlugin, req: Omit<FetchRequest, 'signal'>): Effect.Effect<FetchResult, ApiFailure> {
  return Effect.callback<FetchResult, ApiFailure>((resume) => {
    const controller = new AbortController();
    fetcher.fetch({ ...req, signal: controller.signal }).then(
      (r) => resume(Effect.succeed(r)),
      (e) => resume(isApiFailure(e) ? Effect.fail(e) : Effect.die(e)),
    );
    return Effect.sync(() => controller.abort());
  });
}

/** The media type of a Content-Type value, lower case ('' when there is none). */
export const mediaType = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase();

/** What an extractor reads when its filter names no content types, and what every built-in one reads. */
const HTML_TYPES: readonly string[] = HTML_FILTER.contentTypes!;
/** Media types that are text (their body is their text): text/*, JSON, XML and their +json, +xml kinds. */
const TEXTUAL = /^(text\/|application\/([a-z0-9.+-]*\+)?(json|xml)$)/;

/** A fenced Markdown code block holding `text` verbatim (the fence longer than any run of backticks in it). */
function fenced(text: string, lang: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}`;
}

/**
 * The free text fields of a page that is not HTML, from its text ('' for a
 * binary page): the whole text is its main content, and as Markdown it is
 * itself (text/markdown) or a code block that shows it as written.
 */
const FREE_TEXT: Readonly<Record<string, (text: string, media: string) => string>> = {
  text_content: (text) => text,
  main_content: (text) => text,
  markdown: (text, media) => (text === '' || media === 'text/markdown' ? text
    : fenced(text, /json$/.test(media) ? 'json' : /xml$/.test(media) ? 'xml' : media === 'text/csv' ? 'csv' : '')),
};

/** The request field (and price) of each priced built-in extractor, by id. */
const PRICED: Readonly<Record<string, DeliverableOption>> = {
  links: 'extract_links', images: 'extract_images', schema_data: 'extract_schema', meta_data: 'extract_meta',
  contacts: 'extract_contacts', social: 'extract_social',
};

/** What a priced built-in field holds when the page cannot give it (not HTML) or its extractor failed; it is then not charged. */
const EMPTY: Readonly<Record<string, () => unknown>> = {
  links: () => [],
  images: () => [],
  schema_data: () => [],
  meta_data: () => ({ title: null, description: null, canonical: null, language: null, charset: null, favicon: null, open_graph: {}, twitter: {}, meta: {} }),
  contacts: () => [],
  social: () => [],
};

/** What the extract stage adds. */
export interface Extraction {
  readonly builtins: Record<string, unknown>;
  readonly extracted: Record<string, unknown>;
  readonly extractorErrors: Record<string, string>;
  /** The page as fetched (what the extractors read). */
  readonly source: PageSource;
  /** Priced options asked for whose output this page could not give: not charged. */
  readonly undelivered: readonly DeliverableOption[];
  /** HTML or text: something to read (not an image, a PDF, other binary). */
  readonly readable: boolean;
}

/** One extractor's outcome: its value, or the message it threw. */
type Ran = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** What a scrape that succeeded is charged: its price less what it could not deliver (scrapeCharge). */
export function chargeOf(ctx: { readonly input: ScrapeInput; readonly undelivered: readonly DeliverableOption[]; readonly screenshot: unknown }): number {
  const missing: DeliverableOption[] = [...ctx.undelivered];
  if (ctx.input.screenshot === true && ctx.screenshot === undefined) missing.push('screenshot');
  return scrapeCharge(ctx.input, missing);
}

/** What the stages of one scrape have added by the time it is answered. */
export interface ScrapeOutcome {
  readonly input: ScrapeInput;
  readonly result: FetchResult;
  readonly proxyUsed: ProxyChoice | undefined;
  readonly builtins: Record<string, unknown>;
  readonly extracted: Record<string, unknown>;
  readonly extractorErrors: Record<string, string>;
  readonly screenshot: { url: string; expiresAt: string } | undefined;
  /** Why a screenshot taken could not be kept (the blob store failed). */
  readonly screenshotError?: string | undefined;
}

/** Whether the request's page is its only one (set by loneExtractStage: POST /v1/scrape). */
const isAlone = (ctx: object): boolean => (ctx as { extractAlone?: boolean }).extractAlone === true;

/**
 * The stages of one scrape after validation, built once per server: the
 * single scrape's route runs them as its pipeline, and bulk scrape runs the
 * same ones for each of its URLs.
 */
export function scrapeStages(host: PluginHost, options: ScrapeOptions) {
  const fetchers = host.registry.byKind('fetcher') as unknown as FetcherPlugin[];
  const httpFetcher = fetchers.find((f) => f.mode === 'http');
  const browserFetcher = fetchers.find((f) => f.mode === 'browser');
  if (httpFetcher === undefined) throw new Error('operation-scrape needs a fetcher plugin with mode "http"');
  const extractors = new Map((host.registry.byKind('extractor') as unknown as ExtractorPlugin[]).map((x) => [x.id, x]));
  const proxies = host.registry.byKind('proxy-provider') as unknown as ProxyProviderPlugin[];
  const builtin = (id: string) => extractors.get(id);

  const pickProxy = (type: 'datacenter' | 'residential', country: string | undefined, exclude: readonly string[]): ProxyChoice | undefined => {
    for (const p of proxies) {
      const c = p.pick({ type, country, exclude });
      if (c !== undefined) return c;
    }
    return undefined;
  };

  /**
   * Everything the schema cannot judge about a request but its URL: the
   * semantic checks, and a browser for render_js. The validate stage runs it
   * (bulk scrape's too) over whatever fields passed the schema.
   */
  const optionIssues = (i: Unchecked<Omit<ScrapeInput, 'url'>>): CheckIssue[] => {
    const issues: CheckIssue[] = check(i, extractors);
    if (i.render_js === true && browserFetcher === undefined) issues.push({ field: 'render_js', message: 'this server has no browser fetcher' });
    return issues;
  };

  /** The single scrape's semantic check: its URL (the egress guard) and its options, as one list. */
  const requestCheck = (i: Unchecked<ScrapeInput>): CheckIssue[] => {
    const url = targetIssue('url', i.url, options.egress);
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
    return proxyProblem(i);
  };

  /** A proxy of the kind asked for, when one is asked for. */
  const proxyProblem = (i: Omit<ScrapeInput, 'url'>): ProxyNotAvailable | undefined => {
    if (i.proxy_type !== undefined || i.proxy_country !== undefined) {
      const type = i.proxy_type ?? 'datacenter';
      // available() rather than pick(): a pick would move the rotation on.
      const available = proxies.flatMap((p) => p.available());
      const offered = i.proxy_country !== undefined
        ? available.includes(`${type}:${i.proxy_country}`)
        : available.some((a) => a.startsWith(`${type}:`));
      if (!offered) {
        return new ProxyNotAvailable({
          message: `no ${type} proxy${i.proxy_country ? ` in ${i.proxy_country}` : ''} is configured on this server${available.length ? ` (available: ${available.join(', ')})` : ' (none are configured)'}`,
          field: i.proxy_country !== undefined ? 'proxy_country' : 'proxy_type',
          available,
        });
      }
    }
    return undefined;
  };

  /** After validation (requestCheck passed): a proxy of the kind asked for, and the target as a URL. */
  const precheck = {
    name: 'precheck',
    run: (ctx: RequestContext & Validated<ScrapeInput>): Effect.Effect<{ target: URL }, TargetNotAllowed | ProxyNotAvailable> => {
      const problem = proxyProblem(ctx.input);
      if (problem !== undefined) return Effect.fail(problem);
      const u = checkTargetUrl(ctx.input.url, options.egress);
      if (!u.ok) return Effect.fail(new TargetNotAllowed({ message: `The target is not allowed: ${u.reason}`, field: 'url', reason: u.reason }));
      return Effect.succeed({ target: u.url });
    },
  };

  const fetchStage = {
    name: 'fetch',
    run: (ctx: RequestContext & Validated<ScrapeInput>): Effect.Effect<{ result: FetchResult; proxyUsed: ProxyChoice | undefined }, ApiFailure> => {
      const i = ctx.input;
      const fetcher = i.render_js ? browserFetcher! : httpFetcher;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(i.custom_headers ?? {})) headers[k.toLowerCase()] = v;
      const base: Omit<FetchRequest, 'signal' | 'proxy'> = {
        url: i.url,
        headers,
        userAgent: i.user_agent,
        cookies: i.cookies ?? {},
        followRedirects: i.follow_redirects ?? true,
        timeoutMs: (i.timeout ?? 30) * 1000,
        ...(i.render_js
          ? {
            waitFor: i.wait_for === undefined ? undefined : waitForSpec(i.wait_for),
            // wait_for waits 10 s unless wait_time says otherwise; wait_time alone is a pause after load.
            waitTimeMs: i.wait_time !== undefined ? i.wait_time * 1000 : i.wait_for !== undefined ? 10_000 : undefined,
            screenshot: screenshotSpec(i),
          }
          : {}),
      };
      const wantsProxy = i.proxy_type !== undefined || i.proxy_country !== undefined;
      if (!wantsProxy) return Effect.map(runFetch(fetcher, { ...base, proxy: undefined }), (result) => ({ result, proxyUsed: undefined }));
      const type = i.proxy_type ?? 'datacenter';
      const tried: string[] = [];
      // Proxies earlier attempts at this URL went through (a bulk scrape's retries): avoided while another is left.
      const before = (ctx as { proxiesTried?: string[] }).proxiesTried;
      // A proxy that fails (unreachable, refused) is rotated: the next attempt goes through another one.
      const attempt = (n: number): Effect.Effect<{ result: FetchResult; proxyUsed: ProxyChoice | undefined }, ApiFailure> => {
        const proxy = (before !== undefined && before.length > 0 ? pickProxy(type, i.proxy_country, [...before, ...tried]) : undefined)
          ?? pickProxy(type, i.proxy_country, tried);
        if (proxy === undefined) {
          return Effect.fail(new TargetUnreachable({ message: 'Every proxy tried failed', details: `tried ${tried.join(', ')}` }));
        }
        tried.push(proxy.id);
        before?.push(proxy.id);
        return Effect.catch(
          Effect.map(runFetch(fetcher, { ...base, proxy }), (result) => ({ result, proxyUsed: proxy })),
          (e: ApiFailure) => {
            if (e.code !== 'TARGET_UNREACHABLE') return Effect.fail(e);
            // Rest a failed proxy for a minute so other requests skip it too.
            for (const p of proxies) p.markFailed?.(proxy.id, Date.now() + 60_000);
            return n < options.proxyRetries ? attempt(n + 1) : Effect.fail(e);
          },
        );
      };
      return attempt(0);
    },
  };

  const judge = {
    name: 'judge',
    run: (ctx: { result: FetchResult }): Effect.Effect<{ judged: true }, TargetBlocked> => {
      const r = ctx.result;
      if (r.statusCode === 403) return Effect.fail(new TargetBlocked({ message: 'The target site refused the request (HTTP 403)', statusCode: 403 }));
      if (looksLikeChallenge(r)) return Effect.fail(new TargetBlocked({ message: 'The target site answered with an anti-bot challenge page', statusCode: r.statusCode }));
      return Effect.succeed({ judged: true as const });
    },
  };

  /**
   * Run extractors over one page: those the extraction port runs (the
   * built-ins, in its worker pool) are posted to it first; the others
   * (custom extractors: closures, which cannot move to another thread) run
   * here on the page parsed in this thread, meanwhile. Each outcome is at its
   * extractor's position in `xs`. Fails only when the port cannot extract
   * the page at all (a crashed or hung worker: TargetResponseInvalid).
   */
  const runExtractorsOn = (
    source: PageSource, page: () => Page, xs: readonly ExtractorPlugin[], options: Readonly<Record<string, unknown>>, alone: boolean,
  ): Effect.Effect<readonly Ran[], ExtractionFailure> => {
    const port = host.extraction;
    const pooled: number[] = [];
    const here: number[] = [];
    xs.forEach((x, n) => (port?.runs(x) ? pooled : here).push(n));
    const out: Ran[] = new Array(xs.length);
    const remote = pooled.length === 0 ? Effect.void : Effect.map(
      port!.extract({ page: source, ids: pooled.map((n) => xs[n]!.id), options, alone }),
      (res) => {
        for (const n of pooled) {
          const id = xs[n]!.id;
          out[n] = id in res.errors ? { ok: false, error: res.errors[id]! } : { ok: true, value: res.values[id] };
        }
      },
    );
    const local = here.length === 0 ? Effect.void : Effect.promise(async () => {
      const p = page();
      for (const n of here) {
        try {
          out[n] = { ok: true, value: await xs[n]!.extract(p, options) };
        } catch (e) {
          out[n] = { ok: false, error: e instanceof Error ? e.message : String(e) };
        }
      }
    });
    const both = here.length === 0 ? remote : pooled.length === 0 ? local : Effect.all([remote, local], { concurrency: 'unbounded', discard: true });
    return Effect.as(both, out);
  };

  const extractStage = {
    name: 'extract',
    run: (ctx: RequestContext & Validated<ScrapeInput> & { result: FetchResult }): Effect.Effect<Extraction, ExtractionFailure> => {
      const i = ctx.input;
      const r = ctx.result;
      const source: PageSource = { url: i.url, finalUrl: r.finalUrl, statusCode: r.statusCode, contentType: r.contentType, html: r.body };
      // Parsed in this thread only when something here reads it (custom extractors, a rendered text page).
      let parsed: Page | undefined;
      const page = (): Page => (parsed ??= parsePage(source));
      const finalUrl = r.finalUrl || i.url;
      const media = mediaType(r.contentType);
      const html = media === '' || HTML_TYPES.includes(media);
      // Not HTML but text (plain text, JSON, XML, ...): the text is the body itself (rendered: the text of the browser's view of it).
      const text = html ? undefined : !TEXTUAL.test(media) ? '' : i.render_js ? renderText(page().document) : r.body;
      const wanted: string[] = ['text_content'];
      if (i.extract_links) wanted.push('links');
      if (i.extract_images) wanted.push('images');
      if (i.extract_schema) wanted.push('schema_data');
      if (i.extract_meta) wanted.push('meta_data');
      if (i.main_content) wanted.push('main_content');
      if (i.markdown) wanted.push('markdown');
      if (i.extract_contacts) wanted.push('contacts');
      if (i.extract_social) wanted.push('social');
      /** Whether `x` reads this page: its content types (HTML when it names none) and its URL pattern. */
      const applies = (x: ExtractorPlugin): boolean =>
        (media === '' || (x.filter?.contentTypes ?? HTML_TYPES).includes(media))
        && (x.filter?.urlPattern === undefined || x.filter.urlPattern.test(finalUrl));
      // Every field in the order it is reported: a value known without extracting, or an extractor to run.
      type Step =
        | { readonly key: string; readonly custom: boolean; readonly value: unknown; readonly undelivered?: DeliverableOption }
        | { readonly key: string; readonly custom: boolean; readonly x: ExtractorPlugin };
      const steps: Step[] = [];
      for (const id of wanted) {
        const x = builtin(id);
        if (x === undefined) continue;
        const free = FREE_TEXT[id];
        // Free fields are always there: a page the extractor cannot read gets its text, or ''.
        if (free !== undefined && (text !== undefined || !applies(x))) steps.push({ key: id, custom: false, value: free(text ?? '', media) });
        // A priced field the page cannot give (not HTML): its empty value, not charged.
        else if (free === undefined && !applies(x)) steps.push({ key: id, custom: false, value: EMPTY[id]?.() ?? null, undelivered: PRICED[id] });
        else steps.push({ key: id, custom: false, x });
      }
      for (const id of i.extractors ?? []) {
        const x = extractors.get(id)!;
        steps.push(applies(x) ? { key: id, custom: true, x } : { key: id, custom: true, value: null });
      }
      const runs = steps.filter((s): s is Extract<Step, { x: ExtractorPlugin }> => 'x' in s);
      const options = i.country === undefined ? {} : { country: i.country };
      return Effect.map(runExtractorsOn(source, page, runs.map((s) => s.x), options, isAlone(ctx)), (ran): Extraction => {
        const outcome = new Map(runs.map((s, n) => [s, ran[n]!]));
        const builtins: Record<string, unknown> = {};
        const extracted: Record<string, unknown> = {};
        const errors: Record<string, string> = {};
        const undelivered: DeliverableOption[] = [];
        for (const s of steps) {
          const into = s.custom ? extracted : builtins;
          if (!('x' in s)) {
            into[s.key] = s.value;
            if (s.undelivered !== undefined) undelivered.push(s.undelivered);
            continue;
          }
          const o = outcome.get(s)!;
          if (o.ok) {
            into[s.key] = o.value;
            continue;
          }
          errors[s.key] = o.error;
          if (s.custom) continue;
          // A free field whose extractor failed is ''; a priced one its empty value, not charged.
          if (FREE_TEXT[s.key] !== undefined) builtins[s.key] = '';
          else {
            builtins[s.key] = EMPTY[s.key]?.() ?? null;
            const option = PRICED[s.key];
            if (option !== undefined) undelivered.push(option);
          }
        }
        return { builtins, extracted, extractorErrors: errors, source, undelivered, readable: html || TEXTUAL.test(media) };
      });
    },
  };

  /**
   * The extract stage of POST /v1/scrape: the request's page is its only one
   * (ExtractionRequest.alone), so on a quiet server it is extracted without
   * the hop to a worker. Marked on the context (the pipeline's contexts are
   * per request), so the index stage's extraction says the same.
   */
  const loneExtractStage = {
    name: extractStage.name,
    run: (ctx: Parameters<typeof extractStage.run>[0]) => extractStage.run(Object.assign(ctx, { extractAlone: true })),
  };

  const storeScreenshot = {
    name: 'store',
    run: (ctx: RequestContext & { result: FetchResult }): Effect.Effect<{ screenshot: { url: string; expiresAt: string } | undefined; screenshotError?: string }, ApiFailure> => {
      const shot = ctx.result.screenshot;
      if (shot === undefined) return Effect.succeed({ screenshot: undefined });
      const token = randomBytes(24).toString('base64url');
      const ext = shot.contentType === 'image/png' ? 'png' : 'jpg';
      const expiresAt = ctx.receivedAt + options.screenshotTtlMs;
      const base = options.publicUrl ?? (ctx.headers.host && /^[A-Za-z0-9.\-:[\]]+$/.test(ctx.headers.host) ? `http://${ctx.headers.host}` : '');
      // A blob store that cannot take it (a full disk, say) costs the caller the screenshot, not the page:
      // the page is delivered without it, with a warning, and the screenshot is not charged (chargeOf).
      return Effect.match(
        Effect.tryPromise(() => options.blobs.put(token, shot.data, { contentType: shot.contentType, expiresAt })),
        {
          onSuccess: () => ({ screenshot: { url: `${base}/v1/screenshots/${token}.${ext}`, expiresAt: new Date(expiresAt).toISOString() } }),
          onFailure: (e) => {
            const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
            const why = typeof cause?.code === 'string' ? cause.code : String(cause?.message ?? e);
            return { screenshot: undefined, screenshotError: `the screenshot could not be stored (${why}); it was not charged` };
          },
        },
      );
    },
  };


  /**
   * SCOUR_INDEX_SCRAPES: a successful scrape goes into its account's own
   * collection (never the shared one), unless it was made with cookies,
   * custom headers or a proxy (what such a page shows may be private to the
   * caller, or not what the URL shows everyone). Best effort: the scrape is
   * answered whether or not the write succeeds.
   */
  const indexStage = {
    name: 'index',
    run: (ctx: { input: ScrapeInput; result: FetchResult; source: PageSource; builtins: Record<string, unknown>; account?: { id: string }; indexAccountId?: string }): Effect.Effect<{ indexed: boolean }> => {
      const index = options.index;
      const accountId = ctx.account?.id ?? ctx.indexAccountId;
      const i = ctx.input;
      const r = ctx.result;
      if (index === undefined || accountId === undefined) return Effect.succeed({ indexed: false });
      if (i.cookies !== undefined || i.custom_headers !== undefined || i.proxy_type !== undefined || i.proxy_country !== undefined) return Effect.succeed({ indexed: false });
      if (r.statusCode < 200 || r.statusCode > 299 || !/^(text\/html|application\/xhtml\+xml)/i.test(r.contentType)) return Effect.succeed({ indexed: false });
      // What the request's own extractors already produced is reused, not computed again.
      const missing = (['meta_data', 'main_content'] as const).filter((id) => ctx.builtins[id] === undefined && builtin(id) !== undefined);
      const more = missing.length === 0
        ? Effect.succeed({} as Record<string, unknown> | undefined)
        : Effect.map(runExtractorsOn(ctx.source, () => parsePage(ctx.source), missing.map((id) => builtin(id)!), {}, isAlone(ctx)), (ran) =>
          // An extractor that fails leaves the page out of the index, as when it ran here.
          (ran.every((o) => o.ok) ? Object.fromEntries(missing.map((id, n) => [id, (ran[n] as { value: unknown }).value])) : undefined));
      return Effect.catch(Effect.flatMap(more, (extra) => Effect.promise(async () => {
        if (extra === undefined) return { indexed: false };
        try {
          const meta = (ctx.builtins.meta_data ?? extra.meta_data) as { title?: string | null; language?: string | null } | undefined;
          const main = (ctx.builtins.main_content as string | undefined) ?? (extra.main_content as string | undefined) ?? '';
          const whole = (ctx.builtins.text_content as string | undefined) ?? '';
          const text = main.length >= 200 ? main : whole;
          const lang = meta?.language?.slice(0, 2).toLowerCase();
          if (text.trim() === '' && !meta?.title) return { indexed: false };
          await index.upsert(accountId, [{
            url: r.finalUrl, title: (meta?.title ?? '').slice(0, 2000), text: text.slice(0, 1_000_000), publishedAt: null,
            language: lang !== undefined && /^[a-z]{2}$/.test(lang) ? lang : null, country: null, type: 'page', author: null, siteName: null, doi: null, safe: null,
          }], Date.now());
          return { indexed: true };
        } catch {
          return { indexed: false };
        }
      })), () => Effect.succeed({ indexed: false }));
    },
  };

  /** The response body of one scrape (spec 2.5), before its credit fields. */
  const shape = (ctx: ScrapeOutcome): Record<string, unknown> => {
    const r = ctx.result;
    const b = ctx.builtins;
    const out: Record<string, unknown> = {
      url: ctx.input.url,
      final_url: r.finalUrl,
      status_code: r.statusCode,
      content_type: r.contentType,
      content: r.body,
      // Always set by the extract stage (for a page that is not HTML: its text, or '').
      text_content: (b.text_content as string | undefined) ?? '',
      load_time: Math.round(r.loadTimeSeconds * 1000) / 1000,
    };
    for (const k of ['links', 'images', 'schema_data', 'meta_data', 'main_content', 'markdown']) if (k in b) out[k] = b[k];
    if ('contacts' in b) out.contacts = b.contacts;
    if ('social' in b) out.social_profiles = b.social;
    if (ctx.input.extractors !== undefined) out.extracted = ctx.extracted;
    if (Object.keys(ctx.extractorErrors).length > 0) out.extractor_errors = ctx.extractorErrors;
    if (ctx.screenshot !== undefined) {
      out.screenshot_url = ctx.screenshot.url;
      out.screenshot_expires_at = ctx.screenshot.expiresAt;
    }
    if (ctx.screenshotError !== undefined) out.warnings = [{ code: 'SCREENSHOT_NOT_STORED', message: ctx.screenshotError }];
    if (ctx.proxyUsed !== undefined) out.proxy = { type: ctx.proxyUsed.type, country: ctx.proxyUsed.country ?? null };
    return out;
  };

  return { requestCheck, optionIssues, optionsProblem, precheck, fetchStage, judge, extractStage, loneExtractStage, storeScreenshot, indexStage, shape };
}

export function createScrapeOperation(options: ScrapeOptions) {
  return defineOperation({
    name: 'operation-scrape',
    description: 'POST /v1/scrape and GET /v1/screenshots/{file}.',
    dependsOn: ['fetcher-http'],
    errors: ['TargetNotAllowed', 'ProxyNotAvailable', 'TargetBlocked', 'TargetUnreachable', 'TargetResponseInvalid', 'TargetTimeout'].map(errorSpec),
    routes(host) {
      const { requestCheck, precheck, fetchStage, judge, loneExtractStage, storeScreenshot, indexStage, shape } = scrapeStages(host, options);
      /** Only what was delivered is charged: the hold, less the options this page could not give. */
      const charge = {
        name: 'charge',
        run: (ctx: Parameters<typeof chargeOf>[0] & { hold: { actual?: number } }) => {
          ctx.hold.actual = chargeOf(ctx);
          return Effect.succeed({ charged: true as const });
        },
      };
      const scrapeRoute = {
        method: 'POST' as const,
        path: '/v1/scrape',
        summary: 'Scrape one URL: HTML, text, links, images, structured data, meta tags, main content, Markdown, screenshot.',
        tags: ['scrape'],
        auth: 'bearer' as const,
        headers: ['host'],
        request: schema(ScrapeRequest),
        response: schema(ScrapeResponse),
        failures: [400, 402, 403, 429, 502, 503, 504],
        handle: Pipeline.from<RequestContext>()
          .then(host.stages.auth)
          .then(host.stages.quota('scrape'))
          .then(host.stages.validate(schema(ScrapeRequest), requestCheck))
          .then(precheck)
          .then(host.stages.gate((i: ScrapeInput) => [
            ...(i.extract_contacts ? [{ feature: 'contacts', field: 'extract_contacts' }] : []),
            ...(i.extract_social ? [{ feature: 'social', field: 'extract_social' }] : []),
          ]))
          .then(host.stages.reserve('scrape', (i: ScrapeInput) => scrapePrice(i)))
          .then(fetchStage)
          .then(judge)
          .then(loneExtractStage)
          .then(storeScreenshot)
          .then(charge)
          .then(host.stages.bill)
          .then(indexStage)
          .handle((ctx) => {
            const out = shape(ctx);
            out.credits_used = ctx.charge.creditsUsed;
            out.remaining_credits = ctx.charge.remainingCredits;
            return Effect.succeed(out);
          }),
      };

      const screenshotRoute = {
        method: 'GET' as const,
        path: '/v1/screenshots/{file}',
        summary: 'A screenshot taken by a scrape: the unguessable URL is the credential; it expires (SCOUR_SCREENSHOT_TTL).',
        tags: ['scrape'],
        auth: 'none' as const,
        produces: { contentType: 'image/png' },
        failures: [404],
        handle: (ctx: RequestContext) => {
          const m = /^([A-Za-z0-9_-]{32})\.(png|jpg)$/.exec(ctx.params.file ?? '');
          const notFound = new NotFound({ message: 'No such screenshot, or it has expired' });
          if (m === null) return Effect.fail(notFound);
          return Effect.flatMap(
            Effect.promise(() => options.blobs.get(m[1]!, Date.now())),
            (blob) => {
              if (blob === undefined) return Effect.fail(notFound);
              // The route's declared type is png; a jpeg blob says so (the app lets a stage's content-type win on non-JSON routes).
              ctx.reply.set('content-type', blob.contentType);
              ctx.reply.set('cache-control', 'private, max-age=3600');
              return Effect.succeed(blob.data);
            },
          );
        },
      };
      return [scrapeRoute, screenshotRoute];
    },
  });
}
