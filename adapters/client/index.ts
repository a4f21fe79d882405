/**
 * `scour/client`: a typed client for the Scour HTTP API, built on the global
 * `fetch` (Node 20+ and browsers), with the retry rules of spec 7.4:
 *
 * - 429: wait `retry_after` (body), else `Retry-After` (header), else until
 *   `x-ratelimit-reset`, then retry.
 * - 5xx and network failures: retry with exponential backoff and full jitter.
 * - 400, 401, 402, 403 (and every other 4xx): never retried.
 * - `retries` bounds the retries: at most `retries + 1` attempts in all.
 *
 * What is safe to retry: a 429 or 5xx answer means the operation did not
 * succeed, and the server charges only successes, so a retried search,
 * scrape, bulk scrape or research is not billed twice. A connection failure
 * before any answer is retried for the same reason (the request either never
 * arrived or failed). A client-side timeout is different: the server may
 * still finish (and bill) the first request, so timeouts are retried only
 * for GET requests (usage, job status), never for POSTs.
 *
 * Request and response types are generated (./types.gen.ts, `npm run
 * gen:client`) from the OpenAPI document the server builds from the schemas
 * it validates with; a test fails when they drift. The module imports
 * nothing else (msgpackr is loaded lazily, only with `format: 'msgpack'`),
 * so it runs in Node 20+ and in browsers.
 */
import type {
  BulkScrapeAccepted, BulkScrapeJob, BulkScrapeRequest, BulkScrapeResponse, CrawlAccepted, CrawlJob, CrawlRequest, MapRequest, MapResponse,
  ResearchAccepted, ResearchJob, ResearchRequest, ResearchResponse, ScrapeRequest, ScrapeResponse, SearchRequest,
  SearchResponse, ToolRequests, ToolResponses, ToolSlug, UsageResponse,
} from './types.gen.js';
import { TOOL_SLUGS } from './types.gen.js';

export * from './types.gen.js';

export type SearchInput = SearchRequest;
export type SearchOutput = SearchResponse;
export type ScrapeInput = ScrapeRequest;
export type ScrapeOutput = ScrapeResponse;
export type BulkScrapeInput = BulkScrapeRequest;
export type BulkScrapeOutput = BulkScrapeResponse;
export type ResearchInput = ResearchRequest;
export type ResearchOutput = ResearchResponse;
export type ResearchJobAccepted = ResearchAccepted;
export type CrawlInput = CrawlRequest;
export type CrawlJobAccepted = CrawlAccepted;
export type MapInput = MapRequest;
export type MapOutput = MapResponse;
export type UsageOutput = UsageResponse;

/** A tool's call: its own body type (optional when every field is) and answer type. */
export type ToolCall<K extends ToolSlug> = {} extends ToolRequests[K]
  ? (body?: ToolRequests[K], options?: CallOptions) => Promise<ToolResponses[K]>
  : (body: ToolRequests[K], options?: CallOptions) => Promise<ToolResponses[K]>;
/** `client.tools['uuid-generator']({ count: 2 })`: the eleven developer tools, each typed by its own schema. */
export type Tools = { readonly [K in ToolSlug]: ToolCall<K> };

export interface FieldIssue { readonly field: string; readonly message: string }

export interface RateLimit {
  readonly limit: number | null;
  readonly remaining: number | null;
  /** Unix seconds when the window resets. */
  readonly reset: number | null;
  /** The window, as the server states it (seconds). */
  readonly window: number | null;
}

export interface ScourOptions {
  /** The API key (`Authorization: Bearer <key>`); the developer tools work without one. */
  readonly apiKey?: string;
  /** Default `http://localhost:8080`. */
  readonly baseUrl?: string;
  /** Milliseconds one attempt may take; default 60 000 (0: none). */
  readonly timeout?: number;
  /** Retries after the first attempt (429, 5xx, network failures); default 3. */
  readonly retries?: number;
  /** Body format of requests and answers; default `json`. */
  readonly format?: 'json' | 'msgpack';
  /** A `fetch` to use instead of the global one. */
  readonly fetch?: typeof globalThis.fetch;
  /** First backoff step for 5xx and network failures, ms; default 500 (doubles each retry, full jitter). */
  readonly backoffMs?: number;
  /** Longest single wait before a retry, ms (also caps 429 waits); default 60 000. */
  readonly maxRetryDelayMs?: number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface WaitOptions<J> extends CallOptions {
  /** Between polls, ms; default 2 000. */
  readonly intervalMs?: number;
  /** Give up after this long, ms; default 10 minutes. */
  readonly timeoutMs?: number;
  readonly onProgress?: (job: J) => void;
}

/** Every failure: an error answer (spec 7.1 body), a network failure (status 0) or a timeout. */
export class ScourError extends Error {
  override readonly name = 'ScourError';
  /** HTTP status; 0 when no answer came (network failure, timeout). */
  readonly status: number;
  /** Spec code (`MISSING_PARAMETER`, `RATE_LIMITED`, ...), or `NETWORK_ERROR`, `TIMEOUT`, `HTTP_<status>`. */
  readonly code: string;
  readonly details: string | undefined;
  readonly requestId: string | undefined;
  /** Seconds, from the body's retry_after or the Retry-After header. */
  readonly retryAfter: number | undefined;
  readonly validationErrors: readonly FieldIssue[];
  readonly creditsRemaining: number | undefined;
  readonly upgradeUrl: string | undefined;
  /** The whole error body as received. */
  readonly body: Record<string, unknown> | undefined;
  /** Attempts made before giving up. */
  readonly attempts: number;

  constructor(init: {
    status: number; code: string; message: string; details?: string; requestId?: string; retryAfter?: number;
    validationErrors?: readonly FieldIssue[]; creditsRemaining?: number; upgradeUrl?: string;
    body?: Record<string, unknown>; attempts?: number; cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.validationErrors = init.validationErrors ?? [];
    this.creditsRemaining = init.creditsRemaining;
    this.upgradeUrl = init.upgradeUrl;
    this.body = init.body;
    this.attempts = init.attempts ?? 1;
  }

  /** From an error answer: its status, headers and decoded body (any shape). */
  static fromResponse(status: number, headers: Headers, body: unknown, attempts = 1): ScourError {
    const b = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    const str = (k: string) => (b && typeof b[k] === 'string' ? (b[k] as string) : undefined);
    const num = (k: string) => (b && typeof b[k] === 'number' ? (b[k] as number) : undefined);
    const headerRetry = numeric(headers.get('retry-after'));
    const issues = b && Array.isArray(b.validation_errors)
      ? (b.validation_errors as unknown[]).filter((x): x is FieldIssue => !!x && typeof x === 'object' && typeof (x as FieldIssue).field === 'string')
          .map((x) => ({ field: x.field, message: String(x.message ?? '') }))
      : [];
    return new ScourError({
      status,
      code: str('code') ?? `HTTP_${status}`,
      message: str('error') ?? str('message') ?? (typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}`),
      details: str('details'),
      requestId: str('request_id') ?? headers.get('x-request-id') ?? undefined,
      retryAfter: num('retry_after') ?? headerRetry,
      validationErrors: issues,
      creditsRemaining: num('credits_remaining'),
      upgradeUrl: str('upgrade_url'),
      body: b,
      attempts,
    });
  }
}

function numeric(v: string | null | undefined): number | undefined {
  if (v === null || v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const MSGPACK = 'application/msgpack';
type Msgpack = { pack(v: unknown): Uint8Array; unpack(b: Uint8Array): unknown };
let msgpackLoad: Promise<Msgpack> | undefined;
function msgpack(): Promise<Msgpack> {
  msgpackLoad ??= import('msgpackr').then((m) => {
    const packr = new m.Packr({ useRecords: false });
    const unpackr = new m.Unpackr({ useRecords: false });
    return { pack: (v) => packr.pack(v), unpack: (b) => unpackr.unpack(b) };
  });
  return msgpackLoad;
}

/** Outcome of one attempt, for the retry loop. */
type Attempt =
  | { kind: 'ok'; value: unknown }
  | { kind: 'error'; error: ScourError; retry: boolean; waitMs?: number };

export class Scour {
  readonly baseUrl: string;
  readonly format: 'json' | 'msgpack';
  readonly retries: number;
  readonly timeout: number;
  /** Rate-limit state from the last answer that carried x-ratelimit-* headers; null before. */
  rateLimit: RateLimit | null = null;
  /** `client.tools['uuid-generator']({ count: 2 })`: the eleven developer tools. */
  readonly tools: Tools;

  readonly #apiKey: string | undefined;
  readonly #fetch: typeof globalThis.fetch;
  readonly #backoffMs: number;
  readonly #maxDelayMs: number;

  constructor(options: ScourOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'http://localhost:8080').replace(/(?<!\/)\/+$/, '');
    this.format = options.format ?? 'json';
    this.retries = Math.max(0, Math.floor(options.retries ?? 3));
    this.timeout = options.timeout ?? 60_000;
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? ((...a) => globalThis.fetch(...a));
    this.#backoffMs = options.backoffMs ?? 500;
    this.#maxDelayMs = options.maxRetryDelayMs ?? 60_000;
    const tools: Record<string, (body?: object, o?: CallOptions) => Promise<unknown>> = {};
    // The tools need no key, and none is sent: a browser page on any origin may call them (their CORS allows no Authorization).
    for (const slug of TOOL_SLUGS) tools[slug] = (body = {}, o) => this.#send('POST', `/v1/tools/${slug}`, body, o ?? {}, false);
    this.tools = Object.freeze(tools) as unknown as Tools;
  }

  search(body: SearchInput, o?: CallOptions): Promise<SearchOutput> {
    return this.request('POST', '/v1/search', body, o) as Promise<SearchOutput>;
  }
  scrape(body: ScrapeInput, o?: CallOptions): Promise<ScrapeOutput> {
    return this.request('POST', '/v1/scrape', body, o) as Promise<ScrapeOutput>;
  }
  /** Synchronous without `callback_url`; with it (or with `async: true`, no webhook), the accepted job (poll it with `waitForJob(job.status_url)`). */
  bulkScrape(body: BulkScrapeInput & ({ callback_url: string } | { async: true }), o?: CallOptions): Promise<BulkScrapeAccepted>;
  bulkScrape(body: BulkScrapeInput, o?: CallOptions): Promise<BulkScrapeOutput>;
  bulkScrape(body: BulkScrapeInput, o?: CallOptions): Promise<BulkScrapeOutput | BulkScrapeAccepted> {
    return this.request('POST', '/v1/scrape/bulk', body, o) as Promise<BulkScrapeOutput | BulkScrapeAccepted>;
  }
  /**
   * Synchronous without `callback_url`: the report. With it (or with
   * `async: true`, no webhook), the accepted job: poll it with `waitForJob<ResearchJob>(job.status_url, { onProgress })`
   * (its `stage` and `progress` say where it is) or wait for the webhook.
   */
  research(body: ResearchInput & ({ callback_url: string } | { async: true }), o?: CallOptions): Promise<ResearchJobAccepted>;
  research(body: ResearchInput, o?: CallOptions): Promise<ResearchOutput>;
  research(body: ResearchInput, o?: CallOptions): Promise<ResearchOutput | ResearchJobAccepted> {
    return this.request('POST', '/v1/research', body, o) as Promise<ResearchOutput | ResearchJobAccepted>;
  }
  crawl(body: CrawlInput, o?: CallOptions): Promise<CrawlJobAccepted> {
    return this.request('POST', '/v1/crawl', body, o) as Promise<CrawlJobAccepted>;
  }
  /** A site's URLs (sitemaps and the start page's links), without their content: 1 credit. */
  map(body: MapInput, o?: CallOptions): Promise<MapOutput> {
    return this.request('POST', '/v1/map', body, o) as Promise<MapOutput>;
  }
  usage(o?: CallOptions): Promise<UsageOutput> {
    return this.request('GET', '/v1/usage', undefined, o) as Promise<UsageOutput>;
  }
  /** GET a job's status URL (absolute, as the 202 gave it, or a path such as `/v1/crawl/crawl_...`). */
  getJob<J = BulkScrapeJob | CrawlJob | ResearchJob>(statusUrl: string, o?: CallOptions): Promise<J> {
    return this.request('GET', statusUrl, undefined, o) as Promise<J>;
  }

  /**
   * Polls a status URL until the job's status is final (`completed`,
   * `failed`, `stopped`, `cancelled`), calling `onProgress` with each status
   * seen. Resolves with the final status (a failed job too); rejects with a
   * ScourError code `TIMEOUT` after `timeoutMs`.
   */
  async waitForJob<J extends { status?: unknown } = BulkScrapeJob | CrawlJob | ResearchJob>(statusUrl: string, options: WaitOptions<J> = {}): Promise<J> {
    const interval = options.intervalMs ?? 2_000;
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    for (;;) {
      const job = await this.getJob<J>(statusUrl, options);
      options.onProgress?.(job);
      if (typeof job.status === 'string' && FINAL.has(job.status)) return job;
      if (Date.now() + interval > deadline) {
        throw new ScourError({ status: 0, code: 'TIMEOUT', message: `job at ${statusUrl} not finished after ${options.timeoutMs ?? 600_000} ms`, body: job as Record<string, unknown> });
      }
      await sleep(interval, options.signal);
    }
  }

  /** One API call with the retry rules; `path` is a path or an absolute URL. Resolves with the decoded body. */
  request(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, o: CallOptions = {}): Promise<unknown> {
    return this.#send(method, path, body, o, true);
  }

  async #send(method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown, o: CallOptions, withKey: boolean): Promise<unknown> {
    const url = /^https?:\/\//i.test(path) ? path : `${this.baseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
    let last: ScourError | undefined;
    for (let attempt = 1; attempt <= this.retries + 1; attempt++) {
      const r = await this.#attempt(method, url, body, attempt, o, withKey);
      if (r.kind === 'ok') return r.value;
      last = r.error;
      if (!r.retry || attempt > this.retries) break;
      const backoff = Math.random() * this.#backoffMs * 2 ** (attempt - 1);
      await sleep(Math.min(r.waitMs ?? backoff, this.#maxDelayMs), o.signal);
    }
    throw last!;
  }

  async #attempt(method: string, url: string, body: unknown, attempt: number, o: CallOptions, withKey: boolean): Promise<Attempt> {
    const headers: Record<string, string> = { accept: this.format === 'msgpack' ? MSGPACK : 'application/json' };
    if (this.#apiKey && withKey) headers.authorization = `Bearer ${this.#apiKey}`;
    let payload: string | Uint8Array | undefined;
    if (body !== undefined) {
      if (this.format === 'msgpack') {
        payload = (await msgpack()).pack(body);
        headers['content-type'] = MSGPACK;
      } else {
        payload = JSON.stringify(body);
        headers['content-type'] = 'application/json';
      }
    }
    const ctl = new AbortController();
    let timedOut = false;
    const timer = this.timeout > 0 ? setTimeout(() => { timedOut = true; ctl.abort(); }, this.timeout) : undefined;
    const onAbort = () => ctl.abort(o.signal!.reason);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let res: Response;
      let bytes: Uint8Array;
      try {
        res = await this.#fetch(url, { method, headers, body: payload as RequestInit['body'], signal: ctl.signal });
        bytes = new Uint8Array(await res.arrayBuffer());
      } catch (cause) {
        if (o.signal?.aborted) throw o.signal.reason ?? cause;
        if (timedOut) {
          const error = new ScourError({ status: 0, code: 'TIMEOUT', message: `no answer from ${url} within ${this.timeout} ms`, attempts: attempt, cause });
          // The server may still finish (and bill) a POST: only GETs are retried.
          return { kind: 'error', error, retry: method === 'GET' };
        }
        const message = `network failure calling ${url}: ${(cause as Error)?.message ?? String(cause)}`;
        return { kind: 'error', error: new ScourError({ status: 0, code: 'NETWORK_ERROR', message, attempts: attempt, cause }), retry: true };
      }
      this.#readRateLimit(res.headers);
      const decoded = await this.#decode(res.headers.get('content-type'), bytes);
      if (res.ok) return { kind: 'ok', value: decoded };
      const error = ScourError.fromResponse(res.status, res.headers, decoded, attempt);
      if (res.status === 429) return { kind: 'error', error, retry: true, waitMs: this.#rateLimitWait(error, res.headers) };
      return { kind: 'error', error, retry: res.status >= 500 };
    } finally {
      if (timer) clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }

  async #decode(contentType: string | null, bytes: Uint8Array): Promise<unknown> {
    if (bytes.length === 0) return undefined;
    const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (media === MSGPACK || media === 'application/x-msgpack' || media === 'application/vnd.msgpack') {
      return (await msgpack()).unpack(bytes);
    }
    const text = new TextDecoder().decode(bytes);
    if (media.endsWith('json') || media === '') {
      try { return JSON.parse(text); } catch { return text; }
    }
    return text;
  }

  /** 429: retry_after (body or header) seconds, else until x-ratelimit-reset; at least 0, 1 s when neither is given. */
  #rateLimitWait(error: ScourError, headers: Headers): number {
    if (error.retryAfter !== undefined && error.retryAfter >= 0) return error.retryAfter * 1000;
    const reset = numeric(headers.get('x-ratelimit-reset'));
    if (reset !== undefined) return Math.max(0, reset * 1000 - Date.now());
    return 1000;
  }

  #readRateLimit(h: Headers): void {
    const limit = numeric(h.get('x-ratelimit-limit'));
    const remaining = numeric(h.get('x-ratelimit-remaining'));
    const reset = numeric(h.get('x-ratelimit-reset'));
    const window = numeric(h.get('x-ratelimit-window'));
    if (limit === undefined && remaining === undefined && reset === undefined && window === undefined) return;
    this.rateLimit = { limit: limit ?? null, remaining: remaining ?? null, reset: reset ?? null, window: window ?? null };
  }
}

const FINAL = new Set(['completed', 'failed', 'stopped', 'cancelled']);

export const WEBHOOK_SIGNATURE_HEADER = 'scour-signature';

export interface VerifyWebhookOptions {
  /** Refuse timestamps further than this from now, either way; default 300. */
  readonly toleranceSeconds?: number;
  /** Now, in unix seconds (tests). */
  readonly nowSeconds?: number;
}

export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined> | string;

/**
 * Checks a webhook's `Scour-Signature` (`t=<unix s>,v1=<hex HMAC-SHA256>`
 * over `t + "." + rawBody`, keyed with the whole secret as UTF-8) with Web
 * Crypto, so it works in Node 20+ and browsers. `headers`: the request's
 * headers (a Headers, a plain object of any case) or the header value itself.
 * Resolves true, or throws a ScourError code `INVALID_SIGNATURE` saying why.
 * Several `v1` entries (secret rotation): one match is enough. `secret` may
 * list several secrets too.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<true> {
  const fail = (message: string): never => {
    throw new ScourError({ status: 0, code: 'INVALID_SIGNATURE', message });
  };
  const header = signatureHeader(headers);
  if (!header || header.trim() === '') fail('the signature header is missing');
  if (header!.length > 4096) fail('the signature header is too long');
  let t: number | undefined;
  const candidates: string[] = [];
  for (const item of header!.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) fail('the signature header is malformed');
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined) fail('the signature header has more than one timestamp');
      if (!/^[0-9]{1,12}$/.test(value)) fail('the signature timestamp is not a unix time in seconds');
      t = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) fail('a v1 signature is not 64 hex digits');
      candidates.push(value.toLowerCase());
    }
  }
  if (t === undefined) fail('the signature header has no timestamp (t=)');
  if (candidates.length === 0) fail('the signature header has no v1 signature');
  const enc = new TextEncoder();
  const bodyBytes = typeof rawBody === 'string' ? enc.encode(rawBody) : rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody);
  const prefix = enc.encode(`${t}.`);
  const signed = new Uint8Array(prefix.length + bodyBytes.length);
  signed.set(prefix, 0);
  signed.set(bodyBytes, prefix.length);
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) fail('Web Crypto (crypto.subtle) is not available');
  let matched = false;
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const key = await subtle.importKey('raw', enc.encode(s), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const expected = toHex(new Uint8Array(await subtle.sign('HMAC', key, signed)));
    // Every candidate is compared in full, so the time taken does not tell which one matched.
    for (const c of candidates) if (sameString(expected, c)) matched = true;
  }
  if (!matched) fail('no v1 signature matches');
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - t!) > tolerance) {
    fail(t! < now
      ? `the signature timestamp is more than ${tolerance} s old`
      : `the signature timestamp is more than ${tolerance} s in the future`);
  }
  return true;
}

function signatureHeader(headers: WebhookHeaders): string | undefined {
  if (typeof headers === 'string') return headers;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(WEBHOOK_SIGNATURE_HEADER) ?? undefined;
  for (const [k, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (k.toLowerCase() !== WEBHOOK_SIGNATURE_HEADER) continue;
    return Array.isArray(v) ? v.join(',') : (v as string | undefined);
  }
  return undefined;
}

function toHex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

/** Constant time in the length of `a` (both are 64 hex digits here). */
function sameString(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
