/** Settings from the environment and log redaction. */
import { Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, enabledSearchProviders, DEFAULTS, ENV_VARS, jobsMode, loadSettings } from '../../config/env.js';
import { createLogger } from '../../adapters/logging/pino.js';

describe('settings from the environment', () => {
  it('needs none: the defaults', () => {
    expect(loadSettings({})).toEqual(DEFAULTS);
    expect(DEFAULTS.port).toBe(8080);
    expect(DEFAULTS.host).toBe('0.0.0.0');
    expect(DEFAULTS.dataDir).toBe('./data');
    expect(DEFAULTS.bodyLimit).toBe(1048576);
  });

  it('reads every variable', () => {
    const s = loadSettings({
      PORT: '9000', HOST: '127.0.0.1', SCOUR_DATA_DIR: '/tmp/x', LOG_LEVEL: 'debug', SCOUR_HTTP_ADAPTER: 'node',
      SCOUR_BODY_LIMIT: '2m', SCOUR_TOOLS_RATE_LIMIT: '5', SCOUR_TOOLS_RATE_WINDOW: '10', SCOUR_SHUTDOWN_TIMEOUT: '3', SCOUR_STREAMING: 'false',
      SCOUR_TRUST_PROXY: 'true', SCOUR_UPGRADE_URL: '/billing',
      SCOUR_REUSE_PORT: 'false', SCOUR_CORS_ORIGINS: 'https://app.example.com, http://localhost:3000',
      DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', REDIS_URL: 'redis://127.0.0.1:6379', SCOUR_REDIS_PREFIX: 'acme:',
      SCOUR_ADMIN_TOKEN: 'abcdefghijklmnop0123', SCOUR_PLANS: '/etc/scour/plans.json', SCOUR_PLUGINS: ' ./a.js, ./b.js ,', SCOUR_BOOTSTRAP_KEY: 'false', SCOUR_WARMUP: 'false',
      SCOUR_ALLOW_PRIVATE_TARGETS: 'true', SCOUR_PROXIES: 'datacenter=http://127.0.0.1:3128', SCOUR_PUBLIC_URL: 'https://scour.example.com/', SCOUR_SCREENSHOT_TTL: '3600',
      SCOUR_CACHE_MAX_BYTES: '2g', SCOUR_CACHE_TTL: '600',
      SCOUR_CHROMIUM_PATH: '/opt/chromium', SCOUR_BROWSER_PAGES: '8', SCOUR_KEY_CACHE_TTL: '2',
      SCOUR_BROWSER_WS_ENDPOINT: 'ws://10.0.0.7:3000/pw, cdp+wss://chrome.example/?token=t', SCOUR_BROWSER_PROXY_HOST: '10.0.0.2',
      SCOUR_BROWSER_PROXY_ADVERTISED_HOST: 'scour-1.internal', SCOUR_BROWSER_PROXY_PORTS: '41000-41099',
      SCOUR_EXTRACTION_WORKERS: '0', SCOUR_EXTRACTION_TIMEOUT: '5', SCOUR_EXTRACTION_INLINE_BELOW: '4096', SCOUR_INDEX_ANALYSIS_WORKERS: '3',
      SCOUR_JOBS: 'queue', SCOUR_JOB_LEASE: '5', SCOUR_WORKER_CONCURRENCY: '3', SCOUR_WEBHOOK_SCHEDULE: '1s, 2m,1h', SCOUR_WEBHOOK_TIMEOUT: '4',
      SCOUR_SEARCH_PROVIDERS: ' Local, searxng ,', SEARXNG_URL: 'http://10.0.0.5:8888/searx/', SCOUR_SEARCH_PROVIDER_TIMEOUT: '3', SCOUR_INDEX_SCRAPES: 'yes',
      SCOUR_PROVIDER_OPENALEX_KEY: 'oa-1', SCOUR_PROVIDER_GOOGLE_CX: 'cx-1', SCOUR_CONTACT_EMAIL: 'ops@scour.example.com',
      SCOUR_EXPORT_TTL: '600', SCOUR_JOB_RETENTION: '3600', LLM_BASE_URL: 'http://10.0.0.9:8000/v1/', LLM_MODEL: 'm1', LLM_API_KEY: 'sk-1', LLM_TIMEOUT: '12', LLM_MAX_TOKENS: '512', LLM_JSON_MODE: 'false',
    });
    expect(s).toEqual({
      port: 9000, host: '127.0.0.1', dataDir: '/tmp/x', logLevel: 'debug', httpAdapter: 'node', bodyLimit: 2 * 1024 * 1024,
      toolsRateLimit: { limit: 5, windowSeconds: 10 }, shutdownTimeoutMs: 3000, streaming: false, trustProxy: true, upgradeUrl: '/billing',
      reusePort: false, corsOrigins: ['https://app.example.com', 'http://localhost:3000'],
      databaseUrl: 'postgres://u@127.0.0.1:5432/db', redisUrl: 'redis://127.0.0.1:6379', redisPrefix: 'acme:', keyCacheTtlSeconds: 2,
      adminToken: 'abcdefghijklmnop0123', plansFile: '/etc/scour/plans.json', pluginPaths: ['./a.js', './b.js'], bootstrapKey: false, warmup: false,
      allowPrivateTargets: true, proxies: 'datacenter=http://127.0.0.1:3128', publicUrl: 'https://scour.example.com', screenshotTtlSeconds: 3600,
      cacheMaxBytes: 2 * 1024 ** 3, cacheTtlSeconds: 600,
      chromiumPath: '/opt/chromium', browserPages: 8,
      browserEndpoints: ['ws://10.0.0.7:3000/pw', 'cdp+wss://chrome.example/?token=t'], browserProxyHost: '10.0.0.2',
      browserProxyAdvertisedHost: 'scour-1.internal', browserProxyPorts: { from: 41000, to: 41099 },
      extractionWorkers: 0, extractionTimeoutMs: 5000, extractionInlineBelow: 4096, indexAnalysisWorkers: 3,
      jobs: 'queue', jobLeaseMs: 5000, workerConcurrency: 3, webhookSchedule: [1, 120, 3600], webhookTimeoutMs: 4000,
      searchProviders: ['local', 'searxng'], providerSettings: { openalex: { KEY: 'oa-1' }, google: { CX: 'cx-1' } }, contactEmail: 'ops@scour.example.com', searxngUrl: 'http://10.0.0.5:8888/searx', searchProviderTimeoutMs: 3000, indexScrapes: true,
      exportTtlSeconds: 600, jobRetentionSeconds: 3600,
      llm: { baseUrl: 'http://10.0.0.9:8000/v1', model: 'm1', apiKey: 'sk-1', timeoutMs: 12_000, maxTokens: 512, jsonMode: false },
    });
  });

  it('the optional research model: LLM_MODEL is required with LLM_BASE_URL, which must be a plain http(s) URL', () => {
    expect(loadSettings({}).llm).toBeUndefined();
    expect(() => loadSettings({ LLM_BASE_URL: 'http://127.0.0.1:8000/v1' })).toThrow(/LLM_MODEL is not/);
    expect(() => loadSettings({ LLM_BASE_URL: 'ftp://x/v1', LLM_MODEL: 'm' })).toThrow(/LLM_BASE_URL/);
    expect(() => loadSettings({ LLM_BASE_URL: 'http://user:pw@x/v1', LLM_MODEL: 'm' })).toThrow(/LLM_BASE_URL/);
    expect(loadSettings({ LLM_BASE_URL: 'http://127.0.0.1:8000/v1', LLM_MODEL: 'm' }).llm).toEqual({ baseUrl: 'http://127.0.0.1:8000/v1', model: 'm', apiKey: undefined, timeoutMs: 30_000, maxTokens: 4096, jsonMode: true });
  });

  it('search providers: local and every keyless built-in by default, searxng with SEARXNG_URL, keyed ones with their settings; bad lists are refused', () => {
    const keyless = ['wikipedia', 'openalex', 'arxiv', 'crossref', 'hackernews', 'stackexchange'];
    expect(enabledSearchProviders(loadSettings({}))).toEqual(['local', ...keyless]);
    expect(enabledSearchProviders(loadSettings({ SEARXNG_URL: 'http://127.0.0.1:8888' }))).toEqual(['local', 'searxng', ...keyless]);
    expect(enabledSearchProviders(loadSettings({ SCOUR_PROVIDER_BRAVE_KEY: 'k' }))).toEqual(['local', ...keyless, 'brave']);
    // Google needs its key and its cx; Elasticsearch its URL and index.
    expect(enabledSearchProviders(loadSettings({ SCOUR_PROVIDER_GOOGLE_KEY: 'k' }))).toEqual(['local', ...keyless]);
    expect(enabledSearchProviders(loadSettings({ SCOUR_PROVIDER_GOOGLE_KEY: 'k', SCOUR_PROVIDER_GOOGLE_CX: 'c' }))).toEqual(['local', ...keyless, 'google']);
    expect(enabledSearchProviders(loadSettings({ SCOUR_PROVIDER_ELASTICSEARCH_URL: 'http://127.0.0.1:9200', SCOUR_PROVIDER_ELASTICSEARCH_INDEX: 'docs' }))).toEqual(['local', ...keyless, 'elasticsearch']);
    expect(enabledSearchProviders(loadSettings({ SCOUR_SEARCH_PROVIDERS: 'local' }))).toEqual(['local']);
    expect(() => loadSettings({ SCOUR_SEARCH_PROVIDERS: 'local,brave' })).toThrow(/SCOUR_PROVIDER_BRAVE_KEY is not set/);
    expect(() => loadSettings({ SCOUR_SEARCH_PROVIDERS: 'google', SCOUR_PROVIDER_GOOGLE_KEY: 'k' })).toThrow(/SCOUR_PROVIDER_GOOGLE_CX is not set/);
    expect(() => loadSettings({ SCOUR_PROVIDER_BING_KEY: 'k' })).toThrow(/SCOUR_PROVIDER_BING_KEY names no built-in provider/);
    expect(() => loadSettings({ SCOUR_PROVIDER_WIKIPEDIA_URL: 'wiki.local' })).toThrow(/SCOUR_PROVIDER_WIKIPEDIA_URL must be an absolute/);
    expect(() => loadSettings({ SCOUR_CONTACT_EMAIL: 'not an address' })).toThrow(/SCOUR_CONTACT_EMAIL/);
    const s = loadSettings({ SCOUR_PROVIDER_WIKIPEDIA_URL: 'http://127.0.0.1:9/{lang}/', SCOUR_PROVIDER_STACKEXCHANGE_SITE: 'superuser', SCOUR_CONTACT_EMAIL: 'ops@example.org' });
    expect(s.providerSettings).toEqual({ wikipedia: { URL: 'http://127.0.0.1:9/{lang}' }, stackexchange: { SITE: 'superuser' } });
    expect(s.contactEmail).toBe('ops@example.org');
    expect(enabledSearchProviders(loadSettings({ SEARXNG_URL: 'http://127.0.0.1:8888', SCOUR_SEARCH_PROVIDERS: 'searxng' }))).toEqual(['searxng']);
    expect(() => loadSettings({ SCOUR_SEARCH_PROVIDERS: 'searxng' })).toThrow(/SEARXNG_URL is not set/);
    expect(() => loadSettings({ SCOUR_SEARCH_PROVIDERS: 'local,local' })).toThrow(/twice/);
    expect(() => loadSettings({ SCOUR_SEARCH_PROVIDERS: ',' })).toThrow(/SCOUR_SEARCH_PROVIDERS/);
    expect(() => loadSettings({ SCOUR_SEARCH_PROVIDERS: 'local;drop table' })).toThrow(/SCOUR_SEARCH_PROVIDERS/);
    expect(() => loadSettings({ SEARXNG_URL: 'searx.local' })).toThrow(/SEARXNG_URL/);
    expect(() => loadSettings({ SCOUR_SEARCH_PROVIDER_TIMEOUT: '0' })).toThrow(/SCOUR_SEARCH_PROVIDER_TIMEOUT/);
    expect(() => loadSettings({ SCOUR_INDEX_SCRAPES: 'sometimes' })).toThrow(/SCOUR_INDEX_SCRAPES/);
  });

  it('needs Redis for SCOUR_JOBS=queue, and resolves auto from the configured services', () => {
    expect(() => loadSettings({ SCOUR_JOBS: 'queue' })).toThrow(/SCOUR_JOBS=queue needs REDIS_URL/);
    expect(jobsMode(loadSettings({}))).toBe('embedded');
    expect(jobsMode(loadSettings({ DATABASE_URL: 'postgres://127.0.0.1/x' }))).toBe('embedded');
    expect(jobsMode(loadSettings({ REDIS_URL: 'redis://127.0.0.1' }))).toBe('embedded');
    expect(jobsMode(loadSettings({ DATABASE_URL: 'postgres://127.0.0.1/x', REDIS_URL: 'redis://127.0.0.1' }))).toBe('queue');
    expect(jobsMode(loadSettings({ DATABASE_URL: 'postgres://127.0.0.1/x', REDIS_URL: 'redis://127.0.0.1', SCOUR_JOBS: 'embedded' }))).toBe('embedded');
    expect(jobsMode(loadSettings({ REDIS_URL: 'redis://127.0.0.1', SCOUR_JOBS: 'queue' }))).toBe('queue');
  });

  it('refuses invalid settings, naming each one', () => {
    let err: ConfigError | undefined;
    try {
      loadSettings({
        PORT: '70000', LOG_LEVEL: 'loud', SCOUR_HTTP_ADAPTER: 'express', SCOUR_BODY_LIMIT: 'lots', SCOUR_TRUST_PROXY: 'maybe', HOST: 'bad host', SCOUR_TOOLS_RATE_LIMIT: '-1', SCOUR_UPGRADE_URL: 'http://x',
        DATABASE_URL: 'mysql://x', REDIS_URL: 'http://127.0.0.1', SCOUR_ADMIN_TOKEN: 'short', SCOUR_REDIS_PREFIX: 'has space', SCOUR_BOOTSTRAP_KEY: 'perhaps', SCOUR_WARMUP: 'sometimes', SCOUR_STREAMING: 'sometimes',
        SCOUR_ALLOW_PRIVATE_TARGETS: 'sometimes', SCOUR_PUBLIC_URL: 'ftp://x', SCOUR_SCREENSHOT_TTL: '5', SCOUR_BROWSER_PAGES: '0',
        SCOUR_CACHE_MAX_BYTES: '2t', SCOUR_CACHE_TTL: '10',
        SCOUR_JOBS: 'sometimes', SCOUR_JOB_LEASE: '1', SCOUR_WORKER_CONCURRENCY: '0', SCOUR_WEBHOOK_SCHEDULE: '2s,forever', SCOUR_WEBHOOK_TIMEOUT: '0',
      });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.code).toBe('CONFIG_INVALID');
    expect(err!.issues).toHaveLength(26);
    for (const name of ['SCOUR_CACHE_MAX_BYTES', 'SCOUR_CACHE_TTL', 'PORT', 'LOG_LEVEL', 'SCOUR_HTTP_ADAPTER', 'SCOUR_BODY_LIMIT', 'SCOUR_TRUST_PROXY', 'HOST', 'SCOUR_TOOLS_RATE_LIMIT', 'SCOUR_UPGRADE_URL', 'DATABASE_URL', 'REDIS_URL', 'SCOUR_ADMIN_TOKEN', 'SCOUR_REDIS_PREFIX', 'SCOUR_BOOTSTRAP_KEY', 'SCOUR_WARMUP', 'SCOUR_STREAMING', 'SCOUR_ALLOW_PRIVATE_TARGETS', 'SCOUR_PUBLIC_URL', 'SCOUR_SCREENSHOT_TTL', 'SCOUR_BROWSER_PAGES', 'SCOUR_JOBS', 'SCOUR_JOB_LEASE', 'SCOUR_WORKER_CONCURRENCY', 'SCOUR_WEBHOOK_SCHEDULE', 'SCOUR_WEBHOOK_TIMEOUT']) {
      expect(err!.message).toContain(name);
    }
  });

  it('SCOUR_REUSE_PORT shares the port on uws only; SCOUR_CORS_ORIGINS takes exact origins, written as browsers send them', () => {
    expect(loadSettings({ SCOUR_REUSE_PORT: 'true' }).reusePort).toBe(true);
    expect(() => loadSettings({ SCOUR_REUSE_PORT: 'true', SCOUR_HTTP_ADAPTER: 'node' })).toThrow(/SCOUR_REUSE_PORT=true needs SCOUR_HTTP_ADAPTER=uws/);
    expect(() => loadSettings({ SCOUR_REUSE_PORT: 'sometimes' })).toThrow(/SCOUR_REUSE_PORT/);
    expect(loadSettings({ SCOUR_CORS_ORIGINS: ' HTTPS://App.Example.com:443/ ,http://127.0.0.1:80,http://[::1]:3000, https://x.example:8443' }).corsOrigins)
      .toEqual(['https://app.example.com', 'http://127.0.0.1', 'http://[::1]:3000', 'https://x.example:8443']);
    for (const bad of ['*', 'app.example.com', 'https://app.example.com/path', 'ftp://x.example', 'https://x.example:70000', 'null']) {
      expect(() => loadSettings({ SCOUR_CORS_ORIGINS: bad }), bad).toThrow(/SCOUR_CORS_ORIGINS/);
    }
  });

  it("SCOUR_ALLOW_PRIVATE_TARGETS takes true, false or loopback (tests: loopback only)", () => {
    expect(loadSettings({ SCOUR_ALLOW_PRIVATE_TARGETS: 'loopback' }).allowPrivateTargets).toBe('loopback');
    expect(loadSettings({ SCOUR_ALLOW_PRIVATE_TARGETS: 'LOOPBACK' }).allowPrivateTargets).toBe('loopback');
    expect(loadSettings({ SCOUR_ALLOW_PRIVATE_TARGETS: 'false' }).allowPrivateTargets).toBe(false);
    expect(() => loadSettings({ SCOUR_ALLOW_PRIVATE_TARGETS: 'lan' })).toThrow(/SCOUR_ALLOW_PRIVATE_TARGETS/);
  });

  it('docs/configuration.md documents every variable', () => {
    const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const name of Object.keys(ENV_VARS)) expect(readme).toContain(`\`${name}\``);
  });
});

describe('logging', () => {
  it('never writes API keys or authorization headers', () => {
    const lines: string[] = [];
    const sink = new Writable({ write(c, _e, cb) { lines.push(String(c)); cb(); } });
    const log = createLogger('info', sink);
    log.info({ headers: { authorization: 'Bearer sk_live_abcdef' }, api_key: 'sk_live_abcdef', account: { api_key: 'sk_live_abcdef', token: 't0k' } }, 'request');
    log.info({ admin_token: 'sk_live_abcdef', apiKey: 'sk_live_abcdef' }, 'admin');
    log.child({ authorization: 'Bearer sk_live_abcdef' }).warn('child');
    const all = lines.join('');
    expect(all).not.toContain('sk_live_abcdef');
    expect(all).not.toContain('t0k');
    expect(all).toContain('[redacted]');
    expect(JSON.parse(lines[0]!).msg).toBe('request');
  });
});
