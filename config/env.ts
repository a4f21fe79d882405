/**
 * Settings from the environment, all optional: `npm start` needs none.
 * Every problem is collected and reported at once; the service does not
 * start on an invalid setting.
 */

import { BUILTIN_PROVIDERS, defaultBuiltinProviders, envId, providerVariables } from './providers.js';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { parseBrowserEndpoints } from '../plugins/fetchers/browser/remote.js';
import { DEFAULT_WEBHOOK_SCHEDULE_SECONDS, parseWebhookSchedule } from '../core/webhooks.js';
import { ConfigError } from '../core/config-error.js';

/** Re-exported: callers of the settings keep importing it from here. */
export { ConfigError };

export interface Settings {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly httpAdapter: 'uws' | 'node';
  readonly bodyLimit: number;
  readonly toolsRateLimit: { readonly limit: number; readonly windowSeconds: number };
  readonly shutdownTimeoutMs: number;
  /** Routes that may stream their answers (the synchronous bulk scrape) do; off: every answer is sent whole. */
  readonly streaming: boolean;
  readonly trustProxy: boolean;
  /** Let several uWS processes share the port (SO_REUSEPORT); off: a port already taken stops start-up (LISTEN_FAILED). */
  readonly reusePort: boolean;
  /** Exact origins (scheme://host[:port], lower case, default ports left out) whose browser scripts may call every route. */
  readonly corsOrigins: readonly string[];
  readonly upgradeUrl: string;
  /** PostgreSQL for accounts, keys and the ledger; unset = the embedded SQLite file in dataDir. */
  readonly databaseUrl: string | undefined;
  /** Redis for rate limits and concurrency slots; unset = in process. */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key (several deployments can share one Redis). */
  readonly redisPrefix: string;
  /** With REDIS_URL: how long (s) an API key lookup is reused in process (revocations travel by Redis pub/sub); 0 = off. */
  readonly keyCacheTtlSeconds: number;
  /** Enables the admin API (/admin/v1) guarded by this bearer token. */
  readonly adminToken: string | undefined;
  /** JSON file overriding plan limits and allowances. */
  readonly plansFile: string | undefined;
  /** Extra plugin modules to load at boot. */
  readonly pluginPaths: readonly string[];
  /** Create and print a development key when the store has no account. */
  readonly bootstrapKey: boolean;
  /** Run the plugins' warm() at boot, before listening (PluginBase.warm). */
  readonly warmup: boolean;
  /**
   * Let scrapes reach loopback and private addresses (private deployments), or
   * loopback only ('loopback': tests, so a mistake can never reach another
   * network). Never metadata addresses.
   */
  readonly allowPrivateTargets: boolean | 'loopback';
  /** Proxy list (plugins/proxies/configured.ts format). */
  readonly proxies: string | undefined;
  /** Absolute base URL for links the service hands out (screenshot_url); unset: from the request's Host. */
  readonly publicUrl: string | undefined;
  readonly screenshotTtlSeconds: number;
  /** The scrape cache's size cap in bytes (max_age); 0: no cache. */
  readonly cacheMaxBytes: number;
  /** Seconds a scrape cache entry lives. */
  readonly cacheTtlSeconds: number;
  /** Seconds a research export_url works. */
  readonly exportTtlSeconds: number;
  /** Seconds finished jobs (bulk, crawl, research) are kept, with their results and webhook history; 0: forever. */
  readonly jobRetentionSeconds: number;
  /** Chromium for render_js. */
  readonly chromiumPath: string;
  /** Pages rendering at once (the browser pool's bound). */
  readonly browserPages: number;
  /** Remote browsers to render in instead of a local Chromium (ws:// Playwright browser servers, cdp+ws:// CDP endpoints); empty: launch Chromium here. */
  readonly browserEndpoints: readonly string[];
  /** The address the browser contexts' egress proxies listen on. */
  readonly browserProxyHost: string;
  /** The host a (remote) browser is told to reach those proxies at; undefined: browserProxyHost. */
  readonly browserProxyAdvertisedHost: string | undefined;
  /** The ports those proxies listen on (inclusive range); undefined: any free port. */
  readonly browserProxyPorts: { readonly from: number; readonly to: number } | undefined;
  /** Worker threads that parse pages and run the built-in extractors (adapters/extraction-pool); 0: all in-process. */
  readonly extractionWorkers: number;
  /** How long one page's extraction may take in a worker before the worker is replaced and the page fails. */
  readonly extractionTimeoutMs: number;
  /** Pages with fewer characters of HTML than this are extracted in-process (as cheap as the hop to a worker, and sooner). */
  readonly extractionInlineBelow: number;
  /** Worker threads that analyse documents for the local search index (adapters/search-index/analysis-pool.ts); 0: in-process. */
  readonly indexAnalysisWorkers: number;
  /**
   * Who runs asynchronous bulk jobs and webhook deliveries: 'embedded' (the
   * API process itself, from the store), 'queue' (`scour worker` processes fed
   * by a BullMQ queue on Redis; API processes only enqueue), or 'auto':
   * 'queue' when both DATABASE_URL and REDIS_URL are set, else 'embedded'.
   */
  readonly jobs: 'auto' | 'embedded' | 'queue';
  /** A job's lease: a process that dies mid-job leaves it to another after this long. */
  readonly jobLeaseMs: number;
  /** Bulk jobs one process runs at once. */
  readonly workerConcurrency: number;
  /** Seconds between webhook attempts (core/webhooks.ts). */
  readonly webhookSchedule: readonly number[];
  /** One webhook attempt's whole exchange. */
  readonly webhookTimeoutMs: number;
  /**
   * Search providers by id, in priority order; undefined: `local`, every
   * keyless built-in provider, each keyed one whose settings are set, and
   * `searxng` when searxngUrl is set (enabledSearchProviders).
   */
  readonly searchProviders: readonly string[] | undefined;
  /** Built-in providers' settings by id (SCOUR_PROVIDER_<ID>_URL, _KEY, ...): { URL, KEY, CX, ... }. */
  readonly providerSettings: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** A contact address sent where a service asks for one (OpenAlex's and Crossref's polite pools). */
  readonly contactEmail: string | undefined;
  /** Base URL of a SearXNG instance (its JSON API). */
  readonly searxngUrl: string | undefined;
  /** How long one provider may take before the search goes on without it. */
  readonly searchProviderTimeoutMs: number;
  /** Index each account's successful scrapes into its own collection. */
  readonly indexScrapes: boolean;
  /** An OpenAI-compatible chat endpoint that may rewrite research prose from the evidence (unset: none). */
  readonly llm: { readonly baseUrl: string; readonly model: string; readonly apiKey: string | undefined; readonly timeoutMs: number; readonly maxTokens: number; readonly jsonMode: boolean } | undefined;
}

export const DEFAULTS: Settings = {
  port: 8080,
  host: '0.0.0.0',
  dataDir: './data',
  logLevel: 'info',
  httpAdapter: 'uws',
  bodyLimit: 1024 * 1024,
  toolsRateLimit: { limit: 120, windowSeconds: 60 },
  shutdownTimeoutMs: 10_000,
  streaming: true,
  trustProxy: false,
  reusePort: false,
  corsOrigins: [],
  upgradeUrl: '/dashboard/billing',
  databaseUrl: undefined,
  redisUrl: undefined,
  redisPrefix: 'scour:',
  keyCacheTtlSeconds: 5,
  adminToken: undefined,
  plansFile: undefined,
  pluginPaths: [],
  bootstrapKey: true,
  warmup: true,
  allowPrivateTargets: false,
  proxies: undefined,
  publicUrl: undefined,
  screenshotTtlSeconds: 86_400,
  cacheMaxBytes: 256 * 1024 * 1024,
  cacheTtlSeconds: 2 * 86_400,
  exportTtlSeconds: 86_400,
  jobRetentionSeconds: 7 * 86_400,
  chromiumPath: '/usr/bin/chromium',
  browserPages: 4,
  browserEndpoints: [],
  browserProxyHost: '127.0.0.1',
  browserProxyAdvertisedHost: undefined,
  browserProxyPorts: undefined,
  extractionWorkers: Math.max(1, availableParallelism()),
  extractionTimeoutMs: 30_000,
  extractionInlineBelow: 4096,
  indexAnalysisWorkers: Math.max(1, Math.min(4, availableParallelism())),
  jobs: 'auto',
  jobLeaseMs: 30_000,
  workerConcurrency: 2,
  webhookSchedule: DEFAULT_WEBHOOK_SCHEDULE_SECONDS,
  webhookTimeoutMs: 10_000,
  searchProviders: undefined,
  providerSettings: {},
  contactEmail: undefined,
  searxngUrl: undefined,
  searchProviderTimeoutMs: 5_000,
  indexScrapes: false,
  llm: undefined,
};

/** The variables read, with their meaning (docs/configuration.md's table is checked against this). */
export const ENV_VARS = {
  PORT: 'TCP port (0-65535; 0 picks a free one). Default 8080.',
  HOST: 'Interface to bind. Default 0.0.0.0.',
  SCOUR_DATA_DIR: 'Directory for embedded data (SQLite, blobs). Created at start. Default ./data.',
  LOG_LEVEL: 'fatal, error, warn, info, debug, trace or silent. Default info.',
  SCOUR_HTTP_ADAPTER: 'uws (uWebSockets.js, default) or node (node:http).',
  SCOUR_BODY_LIMIT: 'Maximum request body in bytes; suffixes k and m accepted (1m = 1048576). Default 1m.',
  SCOUR_TOOLS_RATE_LIMIT: 'Developer-tool requests allowed per client IP per window. Default 120.',
  SCOUR_TOOLS_RATE_WINDOW: 'That window in seconds. Default 60.',
  SCOUR_SHUTDOWN_TIMEOUT: 'Seconds to let in-flight requests finish after SIGTERM. Default 10.',
  SCOUR_TRUST_PROXY: 'true to take the client IP from X-Forwarded-For (only behind your own proxy). Default false.',
  SCOUR_REUSE_PORT: 'true lets several scour serve processes (uws adapter) listen on the same PORT, the kernel spreading connections among them. Default false: a port already taken stops start-up (LISTEN_FAILED).',
  SCOUR_CORS_ORIGINS: 'Comma-separated exact origins (https://app.example.com) whose browser scripts may call the authenticated routes (CORS). Default none; the developer tools allow every origin.',
  SCOUR_UPGRADE_URL: 'Relative billing path sent as upgrade_url on plan and rate errors. Default /dashboard/billing.',
  DATABASE_URL: 'postgres:// URL: accounts, keys and the credit ledger in PostgreSQL (shared by several processes). Unset: SQLite file scour.db in SCOUR_DATA_DIR.',
  REDIS_URL: 'redis:// URL: rate limits and concurrency slots in Redis (shared by several processes). Unset: in process.',
  SCOUR_REDIS_PREFIX: 'Prefix of every Redis key. Default scour:.',
  SCOUR_KEY_CACHE_TTL: 'With REDIS_URL: seconds an API key lookup is reused in each API process (revocations and plan changes reach every process through Redis pub/sub within a second; while the subscription is down lookups go to the database). 0 turns the cache off. Default 5.',
  SCOUR_ADMIN_TOKEN: 'Enables the admin API under /admin/v1, guarded by this bearer token (at least 16 characters). Unset: no admin API.',
  SCOUR_PLANS: 'Path of a JSON file overriding plan limits and monthly credits (format in docs/accounts-and-credits.md, Plans and limits).',
  SCOUR_PLUGINS: 'Comma-separated paths of extra plugin modules loaded at boot (custom extractors, tools, operations).',
  SCOUR_BOOTSTRAP_KEY: 'true to create and print a development key on first start with an empty store. Default true.',
  SCOUR_WARMUP: 'true to pay first-use costs at boot, before listening (the browser driver\'s modules, the default citation style\'s engine, the extraction workers, the search index\'s threads), so the first render_js, research request or large page does not stall every request in flight. Default true.',
  SCOUR_ALLOW_PRIVATE_TARGETS: 'true lets scrapes reach loopback and private addresses (private deployments); loopback lets them reach 127.0.0.0/8 and ::1 only (tests). Cloud-metadata addresses stay refused. Default false.',
  SCOUR_PROXIES: 'Proxies for proxy_type/proxy_country (format in docs/scrape.md, Proxies). Unset: no proxies.',
  SCOUR_PUBLIC_URL: 'Absolute base URL of this service for the links it hands out (screenshot_url). Unset: http://<Host header>.',
  SCOUR_SCREENSHOT_TTL: 'Seconds a screenshot_url works. Default 86400 (one day).',
  SCOUR_CACHE_MAX_BYTES: 'Size cap of the scrape cache (max_age) in SCOUR_DATA_DIR/page-cache, in bytes; suffixes k, m and g accepted. The oldest entries go first past it. 0 turns the cache off. Default 256m.',
  SCOUR_CACHE_TTL: 'Seconds a scrape cache entry is kept (60 to 30 days). Default 172800 (two days).',
  SCOUR_EXPORT_TTL: 'Seconds a research export_url works. Default 86400 (one day).',
  SCOUR_JOB_RETENTION: 'Seconds finished bulk, crawl and research jobs are kept (results, webhook history); then their status URL answers 404. Jobs with a webhook still being delivered are kept until it settles. Default 604800 (7 days); 0 keeps them forever.',
  SCOUR_CHROMIUM_PATH: 'Chromium for render_js. Default /usr/bin/chromium (Debian package chromium).',
  SCOUR_BROWSER_PAGES: 'Pages rendering at once (the browser pool bound; more requests wait their turn). Default 4.',
  SCOUR_BROWSER_WS_ENDPOINT: 'Render in browsers elsewhere instead of launching Chromium here: comma-separated ws:// or wss:// endpoints of Playwright browser servers (chromium.launchServer, npx playwright run-server), or cdp+ws:// / cdp+wss:// for a CDP endpoint (Browserless). Renders go to the least busy one; one that cannot be reached is skipped and tried again after a back-off (1 s doubling to 30 s). The remote browser must reach the egress proxies (SCOUR_BROWSER_PROXY_HOST). Default none.',
  SCOUR_BROWSER_PROXY_HOST: 'The address the browser contexts\' egress proxies listen on (every request of a rendered page goes through one, where the egress guard judges it). Default 127.0.0.1; with SCOUR_BROWSER_WS_ENDPOINT, an address the remote browsers can reach (or 0.0.0.0 with SCOUR_BROWSER_PROXY_ADVERTISED_HOST).',
  SCOUR_BROWSER_PROXY_ADVERTISED_HOST: 'The host name or address the browser is told to reach the egress proxies at (what this machine is called on the browsers\' network). Default SCOUR_BROWSER_PROXY_HOST; required when that is 0.0.0.0 or ::.',
  SCOUR_BROWSER_PROXY_PORTS: 'The ports the egress proxies listen on, as a range such as 41000-41099 (one port per browser context open or warm: at least 2 x SCOUR_BROWSER_PAGES + 4), so a firewall can let the browsers in there and nowhere else. Default any free port.',
  SCOUR_EXTRACTION_WORKERS: 'Worker threads that parse pages and run the built-in extractors off the main thread (0 to 64; 0: in-process, for debugging). Default: the available parallelism (cores), at least 1.',
  SCOUR_EXTRACTION_TIMEOUT: 'Seconds one page\'s extraction may take in a worker; past it the worker is replaced and the page fails with TARGET_RESPONSE_INVALID, uncharged (1 to 600). Default 30.',
  SCOUR_EXTRACTION_INLINE_BELOW: 'Pages with fewer characters of HTML than this are extracted in-process: under 4 KiB the hop to a worker costs the main thread about what the extraction would (~0.1 ms) and adds ~0.15 ms of latency (0: every page goes to a worker). Default 4096.',
  SCOUR_INDEX_ANALYSIS_WORKERS: 'Worker threads that analyse documents for the local search index (language, tokens, stems, postings) off the main thread, for imports and crawls (0 to 64; 0: in-process). Default: the available parallelism (cores), 1 to 4.',
  SCOUR_JOBS: 'Who runs asynchronous bulk jobs and webhooks: embedded (the API process, from its store), queue (scour worker processes fed by BullMQ on Redis; API processes only enqueue) or auto (queue when DATABASE_URL and REDIS_URL are both set, else embedded). Default auto.',
  SCOUR_JOB_LEASE: 'Seconds a running job stays with its process without a renewal; a job whose process died is resumed by another after this long. Default 30.',
  SCOUR_WORKER_CONCURRENCY: 'Bulk jobs one process runs at once (each runs its URLs at its own concurrent_requests). Default 2.',
  SCOUR_WEBHOOK_SCHEDULE: 'Delays between webhook attempts, e.g. 2s,10s,1m,5m,30m,2h (the default): 1 to 20 entries from 1 s to 24 h; each gets +-20% jitter.',
  SCOUR_WEBHOOK_TIMEOUT: 'Seconds one webhook attempt may take before it counts as failed. Default 10.',
  SCOUR_SEARCH_PROVIDERS: 'Search providers, comma-separated, in priority order (local, searxng, a built-in provider, or a plugin\'s id). Default: local, searxng when SEARXNG_URL is set, every keyless built-in provider (wikipedia, openalex, arxiv, crossref, hackernews, stackexchange), and each keyed one whose key is set (brave, google, elasticsearch). local alone keeps every query on this machine.',
  SCOUR_CONTACT_EMAIL: 'A contact address sent to the services that ask for one (OpenAlex and Crossref: their polite pools answer faster). Unset: none is sent.',
  ...providerVariables(),
  LLM_BASE_URL: 'Base URL of an OpenAI-compatible chat endpoint (http://127.0.0.1:8000/v1) that rewrites research summaries, insights and recommendations from the evidence and fills a scrape\'s extract_json; unset: research is fully deterministic and extract_json is 503 MODEL_UNAVAILABLE.',
  LLM_MODEL: 'The model name sent to LLM_BASE_URL (required with it).',
  LLM_API_KEY: 'Bearer key for LLM_BASE_URL, if it needs one.',
  LLM_TIMEOUT: 'Seconds one model call may take (1 to 600, default 30); research also bounds it by its own deadline.',
  LLM_MAX_TOKENS: 'max_tokens of the model call (64 to 131072, default 4096).',
  LLM_JSON_MODE: 'Send response_format json_object (default true; false for servers that refuse it).',
  SEARXNG_URL: 'Base URL of a SearXNG instance whose JSON API the searxng provider asks (format json must be enabled in its settings.yml).',
  SCOUR_SEARCH_PROVIDER_TIMEOUT: 'Seconds one search provider may take before the search answers without it (with a warning). Default 5.',
  SCOUR_INDEX_SCRAPES: 'true: each successful scrape by an account is indexed into that account\'s own collection (never scrapes with cookies, custom_headers or a proxy). Default false.',
} as const;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadSettings(env: Readonly<Record<string, string | undefined>> = process.env): Settings {
  const issues: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, min: number, max: number, fallback: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      issues.push(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return Number(raw);
  };
  const bytes = (name: string, fallback: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    const m = /^(\d+)\s*([km]?)b?$/i.exec(raw);
    const n = m ? Number(m[1]) * (m[2]!.toLowerCase() === 'k' ? 1024 : m[2]!.toLowerCase() === 'm' ? 1024 * 1024 : 1) : NaN;
    if (!Number.isFinite(n) || n < 1024 || n > 512 * 1024 * 1024) {
      issues.push(`${name} must be a size from 1k to 512m, e.g. 1048576 or 1m (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return n;
  };
  /** A size from 0 (off) to 1 TiB, in bytes or with a k, m or g suffix. */
  const cacheBytes = (name: string, fallback: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    const m = /^(\d{1,13})\s*([kmg]?)b?$/i.exec(raw);
    const unit = m === null ? NaN : ({ '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 } as Record<string, number>)[m[2]!.toLowerCase()]!;
    const n = m === null ? NaN : Number(m[1]) * unit;
    if (!Number.isFinite(n) || n > 1024 ** 4) {
      issues.push(`${name} must be a size from 0 (off) to 1024g, e.g. 268435456 or 256m (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = str(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    issues.push(`${name} must be true or false (got ${JSON.stringify(env[name])})`);
    return fallback;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw.toLowerCase())) {
      issues.push(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return raw.toLowerCase() as T;
  };

  const host = str('HOST') ?? DEFAULTS.host;
  if (!/^[a-z0-9.:\-[\]]+$/i.test(host)) issues.push(`HOST must be a hostname or IP address (got ${JSON.stringify(host)})`);
  const upgradeUrl = str('SCOUR_UPGRADE_URL') ?? DEFAULTS.upgradeUrl;
  if (!upgradeUrl.startsWith('/')) issues.push(`SCOUR_UPGRADE_URL must be a relative path starting with / (got ${JSON.stringify(upgradeUrl)})`);

  const databaseUrl = str('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//i.test(databaseUrl)) issues.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  const redisUrl = str('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//i.test(redisUrl)) issues.push('REDIS_URL must be a redis:// or rediss:// URL');
  const adminToken = str('SCOUR_ADMIN_TOKEN');
  if (adminToken !== undefined && (adminToken.length < 16 || !/^[A-Za-z0-9\-._~+/]+=*$/.test(adminToken))) {
    issues.push('SCOUR_ADMIN_TOKEN must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (e.g. openssl rand -hex 32)');
  }
  const redisPrefix = str('SCOUR_REDIS_PREFIX') ?? DEFAULTS.redisPrefix;
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisPrefix)) issues.push(`SCOUR_REDIS_PREFIX must be 1-64 characters of A-Z a-z 0-9 : _ . - (got ${JSON.stringify(redisPrefix)})`);
  const publicUrl = str('SCOUR_PUBLIC_URL')?.replace(/(?<!\/)\/+$/, '');
  if (publicUrl !== undefined && !/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/i.test(publicUrl)) issues.push(`SCOUR_PUBLIC_URL must be an absolute http(s) URL without query (got ${JSON.stringify(publicUrl)})`);
  const webhookScheduleRaw = str('SCOUR_WEBHOOK_SCHEDULE');
  let webhookSchedule = DEFAULTS.webhookSchedule;
  if (webhookScheduleRaw !== undefined) {
    const parsed = parseWebhookSchedule(webhookScheduleRaw);
    if (Array.isArray(parsed)) webhookSchedule = parsed;
    else issues.push(`SCOUR_WEBHOOK_SCHEDULE: ${parsed.error}`);
  }
  const endpointsRaw = str('SCOUR_BROWSER_WS_ENDPOINT');
  const parsedEndpoints = parseBrowserEndpoints(endpointsRaw ?? '');
  for (const e of parsedEndpoints.errors) issues.push(`SCOUR_BROWSER_WS_ENDPOINT: ${e}`);
  if (endpointsRaw !== undefined && parsedEndpoints.errors.length === 0 && parsedEndpoints.endpoints.length === 0) issues.push('SCOUR_BROWSER_WS_ENDPOINT is set but names no endpoint');
  const browserProxyHost = str('SCOUR_BROWSER_PROXY_HOST') ?? DEFAULTS.browserProxyHost;
  if (isIP(browserProxyHost) === 0) issues.push(`SCOUR_BROWSER_PROXY_HOST must be an IP address to listen on (got ${JSON.stringify(browserProxyHost)})`);
  const advertisedHost = str('SCOUR_BROWSER_PROXY_ADVERTISED_HOST');
  const hostName = (h: string) => h.length <= 253 && h.split('.').every((label) => /^[A-Za-z0-9-]{1,63}$/.test(label) && !label.startsWith('-') && !label.endsWith('-'));
  if (advertisedHost !== undefined && isIP(advertisedHost) === 0 && !hostName(advertisedHost)) {
    issues.push(`SCOUR_BROWSER_PROXY_ADVERTISED_HOST must be a host name or an IP address (got ${JSON.stringify(advertisedHost)})`);
  }
  if ((browserProxyHost === '0.0.0.0' || browserProxyHost === '::') && advertisedHost === undefined) issues.push(`SCOUR_BROWSER_PROXY_HOST=${browserProxyHost} listens everywhere: set SCOUR_BROWSER_PROXY_ADVERTISED_HOST to the address the browsers reach this machine at`);
  const portsRaw = str('SCOUR_BROWSER_PROXY_PORTS');
  let browserProxyPorts: Settings['browserProxyPorts'];
  if (portsRaw !== undefined) {
    const m = /^(\d{1,5})-(\d{1,5})$/.exec(portsRaw);
    const from = Number(m?.[1]);
    const to = Number(m?.[2]);
    if (!m || from < 1 || to > 65_535 || from > to) issues.push(`SCOUR_BROWSER_PROXY_PORTS must be a port range such as 41000-41099 (got ${JSON.stringify(portsRaw)})`);
    else browserProxyPorts = { from, to };
  }
  const jobs = oneOf('SCOUR_JOBS', ['auto', 'embedded', 'queue'] as const, DEFAULTS.jobs);
  if (jobs === 'queue' && redisUrl === undefined) issues.push('SCOUR_JOBS=queue needs REDIS_URL (the BullMQ queue lives in Redis)');
  const llmBase = str('LLM_BASE_URL')?.replace(/(?<!\/)\/+$/, '');
  const llmModel = str('LLM_MODEL');
  if (llmBase !== undefined && !/^https?:\/\/[^/\s?#@]+(\/[^\s?#]*)?$/i.test(llmBase)) issues.push(`LLM_BASE_URL must be an absolute http(s) URL without credentials or query (got ${JSON.stringify(llmBase)})`);
  if (llmBase !== undefined && llmModel === undefined) issues.push('LLM_BASE_URL is set but LLM_MODEL is not');
  const llm = llmBase === undefined || llmModel === undefined ? undefined : {
    baseUrl: llmBase, model: llmModel, apiKey: str('LLM_API_KEY'),
    timeoutMs: int('LLM_TIMEOUT', 1, 600, 30) * 1000, maxTokens: int('LLM_MAX_TOKENS', 64, 131_072, 4096), jsonMode: bool('LLM_JSON_MODE', true),
  };
  const searxngUrl = str('SEARXNG_URL')?.replace(/(?<!\/)\/+$/, '');
  if (searxngUrl !== undefined && !/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/i.test(searxngUrl)) issues.push(`SEARXNG_URL must be an absolute http(s) URL without query (got ${JSON.stringify(searxngUrl)})`);
  const providersRaw = str('SCOUR_SEARCH_PROVIDERS');
  let searchProviders: string[] | undefined;
  if (providersRaw !== undefined) {
    searchProviders = providersRaw.split(',').map((x) => x.trim().toLowerCase()).filter((x) => x.length > 0);
    const bad = searchProviders.filter((x) => !/^[a-z][a-z0-9-]{0,63}$/.test(x));
    if (searchProviders.length === 0 || bad.length > 0) issues.push(`SCOUR_SEARCH_PROVIDERS must be a comma-separated list of provider ids such as local,searxng (got ${JSON.stringify(providersRaw)})`);
    else if (new Set(searchProviders).size !== searchProviders.length) issues.push(`SCOUR_SEARCH_PROVIDERS names a provider twice (got ${JSON.stringify(providersRaw)})`);
    if (searchProviders.includes('searxng') && searxngUrl === undefined) issues.push('SCOUR_SEARCH_PROVIDERS names searxng but SEARXNG_URL is not set');
  }
  const providerSettings: Record<string, Record<string, string>> = {};
  for (const p of BUILTIN_PROVIDERS) {
    const own: Record<string, string> = {};
    for (const name of ['URL', 'KEY', ...Object.keys(p.settings)]) {
      const v = str(`SCOUR_PROVIDER_${envId(p.id)}_${name}`);
      if (v !== undefined) own[name] = v;
    }
    const url = own.URL?.replace(/(?<!\/)\/+$/, '');
    if (url !== undefined) {
      own.URL = url;
      if (!/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/i.test(url)) issues.push(`SCOUR_PROVIDER_${envId(p.id)}_URL must be an absolute http(s) URL without query (got ${JSON.stringify(url)})`);
    }
    if (Object.keys(own).length > 0) providerSettings[p.id] = own;
  }
  for (const name of Object.keys(env)) {
    const m = /^SCOUR_PROVIDER_([A-Z0-9_]+?)_(URL|KEY)$/.exec(name);
    if (m !== null && !BUILTIN_PROVIDERS.some((p) => envId(p.id) === m[1]) && str(name) !== undefined) {
      issues.push(`${name} names no built-in provider (built-in: ${BUILTIN_PROVIDERS.map((p) => p.id).join(', ')})`);
    }
  }
  if (searchProviders !== undefined) {
    for (const p of BUILTIN_PROVIDERS) {
      if (!p.keyless && searchProviders.includes(p.id)) {
        const missing = p.requires.filter((name) => providerSettings[p.id]?.[name] === undefined);
        if (missing.length > 0) issues.push(`SCOUR_SEARCH_PROVIDERS names ${p.id} but ${missing.map((n) => `SCOUR_PROVIDER_${envId(p.id)}_${n}`).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set`);
      }
    }
  }
  const contactEmail = str('SCOUR_CONTACT_EMAIL');
  const [local, domain, ...more] = contactEmail?.split('@') ?? [];
  const plainEmail = more.length === 0 && /^[^\s@<>(),;:"]+$/.test(local ?? '') && /^[^\s@<>(),;:".]+(?:\.[^\s@<>(),;:".]+)+$/.test(domain ?? '');
  if (contactEmail !== undefined && !plainEmail) issues.push(`SCOUR_CONTACT_EMAIL must be an e-mail address (got ${JSON.stringify(contactEmail)})`);
  const corsRaw = str('SCOUR_CORS_ORIGINS');
  const corsOrigins: string[] = [];
  for (const raw of (corsRaw ?? '').split(',').map((x) => x.trim()).filter((x) => x.length > 0)) {
    // What a browser sends in Origin: scheme and host in lower case, no path, the default port left out.
    const m = /^(https?):\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?\/?$/i.exec(raw);
    if (m === null || Number(m[3] ?? 0) > 65535) {
      issues.push(`SCOUR_CORS_ORIGINS must list origins such as https://app.example.com (scheme, host, optional port; no path, no *) (got ${JSON.stringify(raw)})`);
      continue;
    }
    const scheme = m[1]!.toLowerCase();
    const port = m[3] === undefined || (scheme === 'https' && m[3] === '443') || (scheme === 'http' && m[3] === '80') ? '' : `:${Number(m[3])}`;
    corsOrigins.push(`${scheme}://${m[2]!.toLowerCase()}${port}`);
  }
  const pluginPaths = (str('SCOUR_PLUGINS') ?? '').split(',').map((x) => x.trim()).filter((x) => x.length > 0);

  const settings: Settings = {
    port: int('PORT', 0, 65535, DEFAULTS.port),
    host,
    dataDir: str('SCOUR_DATA_DIR') ?? DEFAULTS.dataDir,
    logLevel: oneOf('LOG_LEVEL', LEVELS, DEFAULTS.logLevel),
    httpAdapter: oneOf('SCOUR_HTTP_ADAPTER', ['uws', 'node'] as const, DEFAULTS.httpAdapter),
    bodyLimit: bytes('SCOUR_BODY_LIMIT', DEFAULTS.bodyLimit),
    toolsRateLimit: {
      limit: int('SCOUR_TOOLS_RATE_LIMIT', 1, 1_000_000_000, DEFAULTS.toolsRateLimit.limit),
      windowSeconds: int('SCOUR_TOOLS_RATE_WINDOW', 1, 86_400, DEFAULTS.toolsRateLimit.windowSeconds),
    },
    shutdownTimeoutMs: int('SCOUR_SHUTDOWN_TIMEOUT', 0, 3600, DEFAULTS.shutdownTimeoutMs / 1000) * 1000,
    streaming: bool('SCOUR_STREAMING', DEFAULTS.streaming),
    trustProxy: bool('SCOUR_TRUST_PROXY', DEFAULTS.trustProxy),
    reusePort: bool('SCOUR_REUSE_PORT', DEFAULTS.reusePort),
    corsOrigins,
    upgradeUrl,
    databaseUrl,
    redisUrl,
    redisPrefix,
    keyCacheTtlSeconds: int('SCOUR_KEY_CACHE_TTL', 0, 300, DEFAULTS.keyCacheTtlSeconds),
    adminToken,
    plansFile: str('SCOUR_PLANS'),
    pluginPaths,
    bootstrapKey: bool('SCOUR_BOOTSTRAP_KEY', DEFAULTS.bootstrapKey),
    warmup: bool('SCOUR_WARMUP', DEFAULTS.warmup),
    allowPrivateTargets: str('SCOUR_ALLOW_PRIVATE_TARGETS')?.toLowerCase() === 'loopback' ? 'loopback' : bool('SCOUR_ALLOW_PRIVATE_TARGETS', false),
    proxies: str('SCOUR_PROXIES'),
    publicUrl,
    screenshotTtlSeconds: int('SCOUR_SCREENSHOT_TTL', 60, 30 * 86_400, DEFAULTS.screenshotTtlSeconds),
    cacheMaxBytes: cacheBytes('SCOUR_CACHE_MAX_BYTES', DEFAULTS.cacheMaxBytes),
    cacheTtlSeconds: int('SCOUR_CACHE_TTL', 60, 30 * 86_400, DEFAULTS.cacheTtlSeconds),
    exportTtlSeconds: int('SCOUR_EXPORT_TTL', 60, 30 * 86_400, DEFAULTS.exportTtlSeconds),
    jobRetentionSeconds: int('SCOUR_JOB_RETENTION', 0, 10 * 365 * 86_400, DEFAULTS.jobRetentionSeconds),
    chromiumPath: str('SCOUR_CHROMIUM_PATH') ?? DEFAULTS.chromiumPath,
    browserPages: int('SCOUR_BROWSER_PAGES', 1, 64, DEFAULTS.browserPages),
    browserEndpoints: endpointsRaw === undefined ? DEFAULTS.browserEndpoints : endpointsRaw.split(',').map((x) => x.trim()).filter(Boolean),
    browserProxyHost,
    browserProxyAdvertisedHost: advertisedHost,
    browserProxyPorts,
    extractionWorkers: int('SCOUR_EXTRACTION_WORKERS', 0, 64, DEFAULTS.extractionWorkers),
    extractionTimeoutMs: int('SCOUR_EXTRACTION_TIMEOUT', 1, 600, DEFAULTS.extractionTimeoutMs / 1000) * 1000,
    extractionInlineBelow: int('SCOUR_EXTRACTION_INLINE_BELOW', 0, 64 * 1024 * 1024, DEFAULTS.extractionInlineBelow),
    indexAnalysisWorkers: int('SCOUR_INDEX_ANALYSIS_WORKERS', 0, 64, DEFAULTS.indexAnalysisWorkers),
    jobs,
    jobLeaseMs: int('SCOUR_JOB_LEASE', 2, 3600, DEFAULTS.jobLeaseMs / 1000) * 1000,
    workerConcurrency: int('SCOUR_WORKER_CONCURRENCY', 1, 64, DEFAULTS.workerConcurrency),
    webhookSchedule,
    webhookTimeoutMs: int('SCOUR_WEBHOOK_TIMEOUT', 1, 120, DEFAULTS.webhookTimeoutMs / 1000) * 1000,
    searchProviders,
    providerSettings,
    contactEmail,
    searxngUrl,
    searchProviderTimeoutMs: int('SCOUR_SEARCH_PROVIDER_TIMEOUT', 1, 60, DEFAULTS.searchProviderTimeoutMs / 1000) * 1000,
    indexScrapes: bool('SCOUR_INDEX_SCRAPES', DEFAULTS.indexScrapes),
    llm,
  };
  if (settings.reusePort && settings.httpAdapter === 'node') issues.push('SCOUR_REUSE_PORT=true needs SCOUR_HTTP_ADAPTER=uws (node:http on Node 20 cannot share a port)');
  if (issues.length > 0) throw new ConfigError(issues);
  return settings;
}

/** SCOUR_JOBS resolved: 'auto' is 'queue' when PostgreSQL and Redis are both configured. */
export function jobsMode(s: Pick<Settings, 'jobs' | 'databaseUrl' | 'redisUrl'>): 'embedded' | 'queue' {
  if (s.jobs !== 'auto') return s.jobs;
  return s.databaseUrl !== undefined && s.redisUrl !== undefined ? 'queue' : 'embedded';
}

/**
 * The search providers a configuration enables, in priority order: the
 * list given, or local, searxng when SEARXNG_URL is set (the operator's own
 * metasearch), then the default built-in ones (keyless, and keyed with
 * their settings).
 */
export function enabledSearchProviders(s: Pick<Settings, 'searchProviders' | 'searxngUrl'> & Partial<Pick<Settings, 'providerSettings'>>): readonly string[] {
  return s.searchProviders ?? ['local', ...(s.searxngUrl !== undefined ? ['searxng'] : []), ...defaultBuiltinProviders(s.providerSettings ?? {})];
}
