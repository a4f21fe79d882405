/**
 * The composition root: the one place that chooses adapters and wires them.
 * The graph is plain typed values built in order in `createScour` (no DI
 * container: every part is built once, some asynchronously, some only when
 * a setting asks for it, each with a lifetime closed in reverse order; the
 * compiler checks every hand-over). `start` listens, `stop` drains and
 * releases everything in reverse order.
 */
import { RedisPauses } from '../adapters/search/pauses.js';
import { memoryPauses } from '../core/search-merge.js';
import type { ProviderPauses } from '../core/search.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Effect } from 'effect';
import { AccountAdmin } from '../core/account-admin.js';
import { adminStage, authStage, billStage, gateStage, quotaStage, reserveStage, type AccountStageDeps } from '../core/stages/account.js';
import { clientQuotaStage } from '../core/stages/client-quota.js';
import { validateStage } from '../core/stages/validate.js';
import type { PluginBase, PluginHost, Route } from '../core/plugin.js';
import type { AccountStore, Clock, Logger, RateLimiter } from '../core/ports.js';
import { createFirecrawlOperation } from '../plugins/operations/firecrawl/index.js';
import { PluginRegistry } from '../core/registry.js';
import type { StageKit } from '../core/stages/index.js';
import { HttpApp } from '../adapters/http/shared/app.js';
import { createMcpOperation } from '../adapters/mcp/http.js';
import type { HttpServer } from '../adapters/http/shared/server.js';
import { NodeHttpServer } from '../adapters/http/node/index.js';
import { UwsServer, uwsIsNative } from '../adapters/http/uws/index.js';
import { HyperIdGenerator, systemClock } from '../adapters/ids/hyperid.js';
import { nodeSecrets } from '../adapters/crypto/node.js';
import { MemoryRateLimiter } from '../adapters/limiter/memory/index.js';
import { RedisRateLimiter } from '../adapters/limiter/redis/index.js';
import { CachedAccountStore } from '../adapters/key-cache/index.js';
import { RedisInvalidationBus } from '../adapters/key-cache/redis.js';
import { createLogger } from '../adapters/logging/pino.js';
import { PrometheusMetrics } from '../adapters/metrics/prometheus.js';
import { AjvSchemaCompiler } from '../adapters/validation/json-schema.js';
import { ExtractionPool } from '../adapters/extraction-pool/pool.js';
import type { ExtractionPort } from '../core/extraction.js';
import { builtinExtractors, parsePage } from '../plugins/extractors/index.js';
import { DEFAULTS, type Settings } from './env.js';
import { loadPluginModules } from './load-plugins.js';
import { openSearchIndex, openStore } from './store.js';
import { createJobs, type Jobs, type Role } from './jobs.js';
import type { JobStore } from '../core/jobs.js';
import { egressPolicy, pageCacheFor, pageReaderFor, scrapePlugins } from './scrape.js';
import type { PageHistory } from '../core/page-changes.js';
import { PRICES } from './prices.js';
import type { PageReader } from '../core/page.js';
import { searchPlugins } from './search.js';
import type { SearchIndex } from '../core/search.js';
import { FsBlobStore } from '../adapters/blob/fs/index.js';
import { loadPlans, planBook, type Plans } from './plans.js';
import { builtinPlugins } from './plugins.js';
import { researchPlugins } from './research.js';
import { VERSION } from './version.js';

export interface ScourOptions {
  readonly settings?: Partial<Settings>;
  /** Extra plugins (custom extractors, tools, operations). */
  readonly plugins?: readonly PluginBase[];
  /** Replace the built-in set entirely (tests of the registry). */
  readonly replaceBuiltins?: boolean;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Plans to use instead of SCOUR_PLANS / the defaults (tests). */
  readonly plans?: Plans;
  /** 'serve' (default): the HTTP API; 'worker': runs jobs and webhooks only (`scour worker`). */
  readonly role?: Role;
  /** Where extraction runs instead of the pool the settings describe (tests); its owner closes it. */
  readonly extraction?: ExtractionPort;
}

/** How long a concurrency slot or a credit hold outlives a crashed process. */
const SLOT_LEASE_MS = 5 * 60_000;
const HOLD_TTL_MS = 15 * 60_000;
const SWEEP_EVERY_MS = 60_000;
/** Jobs deleted per statement, and statements per sweep: short transactions, a bounded sweep. */
const PURGE_BATCH = 500;
const PURGE_BATCHES = 20;

/** Finished jobs older than `before`, in short batches (each its own transaction). */
async function purgeJobs(store: JobStore, before: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < PURGE_BATCHES; i++) {
    const n = await Effect.runPromise(store.purgeFinished(before, PURGE_BATCH));
    total += n;
    if (n < PURGE_BATCH) break;
  }
  return total;
}

export interface Scour {
  readonly settings: Settings;
  readonly registry: PluginRegistry;
  readonly app: HttpApp;
  readonly server: HttpServer;
  readonly logger: Logger;
  readonly store: AccountStore;
  readonly jobStore: JobStore;
  readonly jobs: Jobs;
  /** The local search index (SQLite or PostgreSQL). */
  readonly searchIndex: SearchIndex;
  readonly accounts: AccountAdmin;
  readonly plans: Plans;
  /**
   * When the store holds no account: create a development account (Unicorn
   * plan, its monthly credits) and return its key, to be shown once.
   */
  bootstrap(): Promise<{ apiKey: string; accountId: string } | undefined>;
  /** Listen (role 'serve'), and run jobs when this process runs them (see config/jobs.ts). */
  start(): Promise<{ host: string; port: number; url: string }>;
  /** Role 'worker': run jobs and webhook deliveries, no HTTP server. */
  startWorker(): Promise<{ workerId: string; mode: 'embedded' | 'queue' }>;
  stop(): Promise<boolean>;
}

export async function createScour(options: ScourOptions = {}): Promise<Scour> {
  const settings: Settings = { ...DEFAULTS, ...options.settings };
  const logger: Logger = options.logger ?? createLogger(settings.logLevel);
  const clock: Clock = options.clock ?? systemClock;
  const ids = new HyperIdGenerator();
  const metrics = new PrometheusMetrics();
  const compiler = new AjvSchemaCompiler();
  const plans = options.plans ?? loadPlans(settings.plansFile);
  const book = planBook(plans);
  const extraPlugins = settings.pluginPaths.length > 0 ? await loadPluginModules(settings.pluginPaths) : [];

  // Resources with a lifetime, closed in reverse order (also when start-up fails half-way).
  const closers: Array<() => Promise<void> | void> = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (e) {
        logger.error({ err: String(e) }, 'close failed');
      }
    }
  };

  let store: AccountStore;
  let jobStore: JobStore;
  let pageHistory: PageHistory;
  let limiter: RateLimiter;
  let pauses: ProviderPauses = memoryPauses();
  let searchIndex: SearchIndex;
  let warmSearchIndex: (() => Promise<void>) | undefined;
  try {
    const opened = await openStore(settings);
    closers.push(opened.close);
    store = opened.store;
    jobStore = opened.jobs;
    pageHistory = opened.pages;
    const index = await openSearchIndex(settings);
    closers.push(index.close);
    searchIndex = index.index;
    warmSearchIndex = index.warm;
    if (settings.redisUrl !== undefined) {
      const redis = new RedisRateLimiter({ url: settings.redisUrl, keyPrefix: settings.redisPrefix });
      closers.push(() => redis.close());
      await redis.connect();
      limiter = redis;
      // Key lookups cached in process; revocations and plan changes evict everywhere through pub/sub.
      const bus = new RedisInvalidationBus({ url: settings.redisUrl, prefix: settings.redisPrefix });
      closers.push(() => bus.close());
      await bus.connect();
      store = new CachedAccountStore(store, bus, { ttlMs: settings.keyCacheTtlSeconds * 1000, logger });
      // Search providers that rate-limit one process are left alone by all of them.
      const shared = new RedisPauses({ url: settings.redisUrl, prefix: settings.redisPrefix });
      closers.push(() => shared.close());
      await shared.connect();
      pauses = shared;
    } else {
      const memory = new MemoryRateLimiter(clock);
      closers.push(() => memory.dispose());
      limiter = memory;
    }
  } catch (e) {
    await closeAll();
    throw e;
  }

  const blobs = new FsBlobStore({ dataDir: settings.dataDir });
  // The scrape cache (max_age): its own directory beside the blobs, so every process on this data directory shares it.
  const pageCache = pageCacheFor(settings);
  // Its writes go on after the scrapes answered: finished before the process ends.
  if (pageCache !== undefined) closers.push(() => pageCache.flushed());
  // One pause book for search and research: a provider that rate-limits one is left alone by both.
  const pauseBook = { pauses, now: () => clock.now() };
  // POST /mcp: its tool calls run through the app built below (attached once it exists).
  const mcp = createMcpOperation();
  let builtins: PluginBase[];
  try {
    builtins = options.replaceBuiltins ? [] : [...builtinPlugins, mcp.plugin, ...scrapePlugins(settings, blobs, searchIndex, pageHistory), ...searchPlugins(settings, searchIndex, pauseBook), ...researchPlugins(settings, searchIndex, blobs, pauseBook), createFirecrawlOperation({ index: searchIndex })];
  } catch (e) {
    await closeAll();
    throw e;
  }
  const registry = new PluginRegistry();
  registry.registerAll(builtins);
  registry.registerAll(options.plugins ?? []);
  registry.registerAll(extraPlugins);
  const order = registry.seal();

  const deps: AccountStageDeps = {
    store, limiter, secrets: nodeSecrets, ids, clock, plans: book, upgradeUrl: settings.upgradeUrl,
    slotLeaseMs: SLOT_LEASE_MS, holdTtlMs: HOLD_TTL_MS,
  };
  const stages: StageKit = {
    clientQuota: clientQuotaStage(limiter, settings.toolsRateLimit, settings.upgradeUrl),
    validate: (schema, check) =>
      validateStage(compiler.compile(schema), check, Object.keys((schema.json.properties as Record<string, unknown> | undefined) ?? {})),
    auth: authStage(deps),
    quota: (operation) => quotaStage(deps, operation),
    gate: (features) => gateStage(deps, features),
    reserve: (operation, price, options) => reserveStage(deps, operation, price, options),
    bill: billStage(deps),
    admin: settings.adminToken === undefined ? undefined : adminStage(nodeSecrets, settings.adminToken),
  };
  const accounts = new AccountAdmin({ store, secrets: nodeSecrets, clock, monthlyCredits: book.monthlyCredits });

  // Holds whose process died are released once they expire.
  const sweep = () => {
    Effect.runPromise(store.sweepHolds(clock.now())).then(
      (n) => { if (n > 0) logger.info({ released: n }, 'released expired credit holds'); },
      (e) => logger.warn({ err: String(e) }, 'credit hold sweep failed'),
    );
    blobs.sweep(clock.now()).then(
      (n) => { if (n > 0) logger.info({ deleted: n }, 'deleted expired screenshots'); },
      (e) => logger.warn({ err: String(e) }, 'screenshot sweep failed'),
    );
    // Other processes write to the cache too: its expired entries go, and it is held to its cap.
    pageCache?.trim(clock.now()).catch((e: unknown) => logger.warn({ err: String(e) }, 'scrape cache sweep failed'));
    if (settings.jobRetentionSeconds > 0) {
      purgeJobs(jobStore, clock.now() - settings.jobRetentionSeconds * 1000).then(
        (n) => { if (n > 0) logger.info({ deleted: n, retention_s: settings.jobRetentionSeconds }, 'deleted finished jobs past retention'); },
        (e) => logger.warn({ err: String(e) }, 'job retention sweep failed'),
      );
    }
  };
  const sweeper = setInterval(sweep, SWEEP_EVERY_MS);
  sweeper.unref();
  closers.push(() => clearInterval(sweeper));
  sweep();

  const started: PluginBase[] = [];
  const stopPlugins = async () => {
    for (const p of started.reverse()) {
      try {
        await p.stop?.();
      } catch (e) {
        logger.error({ plugin: p.name, err: String(e) }, 'plugin stop failed');
      }
    }
  };
  try {
    for (const p of order) {
      await p.start?.();
      started.push(p);
    }
  } catch (e) {
    await stopPlugins();
    await closeAll();
    throw e;
  }

  const jobs = createJobs({ settings, store: jobStore, clock, logger, role: options.role ?? 'serve' });
  // Built-in extractors in worker threads, importing the module this process loaded; closed on stop, after the jobs that use it.
  // The HTTP app, once built: a single scrape's page stays in-process only while no other request is in flight.
  let appRef: HttpApp | undefined;
  const pool = options.extraction === undefined ? new ExtractionPool({
    workers: settings.extractionWorkers, timeoutMs: settings.extractionTimeoutMs, inlineBelow: settings.extractionInlineBelow,
    module: new URL('../plugins/extractors/index.js', import.meta.url), local: { parse: parsePage, extractors: builtinExtractors }, logger,
    othersInFlight: () => Math.max(0, (appRef?.activeRequests ?? 1) - 1),
  }) : undefined;
  if (pool !== undefined) closers.push(() => pool.close());
  const extraction: ExtractionPort = options.extraction ?? pool!;
  if (settings.warmup) {
    const parts: WarmPart[] = order.flatMap((p) => (p.warm === undefined ? [] : [{ name: p.name, warm: p.warm }]));
    // The extraction workers, started now rather than by the first large page (each loads the extractors: a few hundred ms of a core).
    if (pool !== undefined) parts.push({ name: 'extraction-pool', warm: () => pool.start() });
    // The search index's analysis workers and SQLite writer thread, started now (not awaited) rather than by the first import (about a second of a core each).
    const warmIndex = warmSearchIndex;
    if (warmIndex !== undefined) {
      parts.push({ name: 'search-index', warm: () => { warmIndex().catch((e: unknown) => logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'search index warm-up failed; the first import starts its threads')); } });
    }
    await warmUp(parts, logger);
  }
  const routes: Route<any, any>[] = [];
  // The page pipeline, built on first use (a registry without an HTTP fetcher has none, and fails only if an operation asks for it).
  let pages: PageReader | undefined;
  const egress = egressPolicy(settings.allowPrivateTargets);
  const host: PluginHost = {
    jobs: jobs.host,
    extraction,
    get pages() {
      return (pages ??= pageReaderFor(registry, egress, extraction, undefined, pageCache));
    },
    prices: PRICES,
    registry,
    stages,
    settings: { upgradeUrl: settings.upgradeUrl, version: VERSION, adminEnabled: settings.adminToken !== undefined },
    metrics,
    accounts,
    limits: book.limits,
    allRoutes: () => routes,
  };
  for (const op of registry.byKind('operation')) routes.push(...op.routes(host));

  const app = new HttpApp({
    routes,
    compiler,
    ids,
    clock,
    metrics,
    logger,
    bodyLimit: settings.bodyLimit,
    corsOrigins: settings.corsOrigins,
    streaming: settings.streaming,
  });
  appRef = app;
  mcp.attach(app);

  if (settings.httpAdapter === 'uws' && !uwsIsNative()) {
    logger.warn('uWebSockets.js native binary did not load for this Node ABI; using its slow pure-JS fallback. Use Node 20 or SCOUR_HTTP_ADAPTER=node.');
  }
  const server: HttpServer = settings.httpAdapter === 'node'
    ? new NodeHttpServer(app, { trustProxy: settings.trustProxy })
    : new UwsServer(app, { trustProxy: settings.trustProxy, reusePort: settings.reusePort });

  let stopped = false;
  let jobsStarted = false;
  const startJobs = async () => {
    jobsStarted = true;
    await jobs.start();
  };
  return {
    settings, registry, app, server, logger, store, jobStore, jobs, searchIndex, accounts, plans,
    async bootstrap() {
      if ((await Effect.runPromise(store.countAccounts())) > 0) return undefined;
      const { account, key } = await Effect.runPromise(accounts.createAccount({ plan: 'unicorn', name: 'development' }));
      return { apiKey: key.apiKey, accountId: account.id };
    },
    async start() {
      mkdirSync(settings.dataDir, { recursive: true });
      const bound = await server.listen(settings.host, settings.port);
      await startJobs();
      const shownHost = bound.host === '0.0.0.0' || bound.host === '::' ? '127.0.0.1' : bound.host;
      return { ...bound, url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${bound.port}` };
    },
    async startWorker() {
      mkdirSync(settings.dataDir, { recursive: true });
      await startJobs();
      return { workerId: jobs.runner?.workerId ?? '', mode: jobs.mode };
    },
    async stop() {
      if (stopped) return true;
      stopped = true;
      const drained = await server.close(settings.shutdownTimeoutMs);
      // Running jobs stop before the fetchers they use; their leases lapse so another process resumes them.
      if (jobsStarted) await jobs.stop();
      await stopPlugins();
      await closeAll();
      return drained;
    },
  };
}

interface WarmPart {
  readonly name: string;
  readonly warm: () => Promise<void> | void;
}

/**
 * First-use costs, paid before the server listens (PluginBase.warm, and the extraction workers).
 * A warm-up that fails is logged and skipped: the cost is then paid on first use, as without it.
 */
async function warmUp(parts: readonly WarmPart[], logger: Logger): Promise<void> {
  const began = performance.now();
  const warmed: { part: string; ms: number }[] = [];
  for (const p of parts) {
    const t = performance.now();
    try {
      await p.warm();
      warmed.push({ part: p.name, ms: Math.round(performance.now() - t) });
    } catch (e) {
      logger.warn({ part: p.name, err: String(e) }, 'warm-up failed; its first use pays for it');
    }
  }
  logger.info({ warmed, ms: Math.round(performance.now() - began) }, 'warm-up done');
}
