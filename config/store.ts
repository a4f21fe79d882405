/**
 * Opening the configured account store (PostgreSQL when DATABASE_URL is set,
 * else the SQLite file in the data directory), and account administration
 * without the HTTP server, for the CLI. Kept apart from the composition
 * root so `scour accounts|keys|credits` loads no HTTP or plugin code.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AccountAdmin } from '../core/account-admin.js';
import type { JobStore } from '../core/jobs.js';
import type { AccountStore } from '../core/ports.js';
import type { SearchIndex } from '../core/search.js';
import { openSqliteSearchIndex } from '../adapters/search-index/sqlite.js';
import { AnalysisPool } from '../adapters/search-index/analysis-pool.js';
import { nodeSecrets } from '../adapters/crypto/node.js';
import { CachedAccountStore } from '../adapters/key-cache/index.js';
import { RedisInvalidationBus } from '../adapters/key-cache/redis.js';
import { systemClock } from '../adapters/ids/hyperid.js';
import { openPostgresStore } from '../adapters/store/postgres/index.js';
import { postgresJobStore } from '../adapters/store/postgres/jobs.js';
import { openSqliteStore } from '../adapters/store/sqlite/index.js';
import { sqliteJobStore } from '../adapters/store/sqlite/jobs.js';
import { postgresPageHistory } from '../adapters/store/postgres/page-history.js';
import { sqlitePageHistory } from '../adapters/store/sqlite/page-history.js';
import type { PageHistory } from '../core/page-changes.js';
import { DEFAULTS, type Settings } from './env.js';
import { loadPlans, planBook, type Plans } from './plans.js';

/** The configured account store: PostgreSQL when DATABASE_URL is set, else SQLite in the data directory. */
export async function openStore(settings: Pick<Settings, 'databaseUrl' | 'dataDir'>): Promise<{ store: AccountStore; jobs: JobStore; pages: PageHistory; close: () => Promise<void> | void }> {
  if (settings.databaseUrl !== undefined) {
    const pg = await openPostgresStore({ url: settings.databaseUrl });
    return { store: pg, jobs: postgresJobStore(pg), pages: postgresPageHistory(pg), close: () => pg.close() };
  }
  mkdirSync(settings.dataDir, { recursive: true });
  const sqlite = openSqliteStore({ path: join(settings.dataDir, 'scour.db') });
  return { store: sqlite, jobs: sqliteJobStore(sqlite), pages: sqlitePageHistory(sqlite), close: () => sqlite.close() };
}

/** Account administration without the HTTP server (the CLI). */
export async function openAccounts(settings: Settings, plans: Plans = loadPlans(settings.plansFile)): Promise<{ accounts: AccountAdmin; store: AccountStore; jobs: JobStore; close: () => Promise<void> }> {
  const opened = await openStore(settings);
  const { jobs, close } = opened;
  let store = opened.store;
  // With REDIS_URL, running API processes cache key lookups: a revocation or plan change made here is published to them.
  let bus: RedisInvalidationBus | undefined;
  if (settings.redisUrl !== undefined) {
    const b = new RedisInvalidationBus({ url: settings.redisUrl, prefix: settings.redisPrefix, publishOnly: true });
    try {
      await b.connect();
      bus = b;
      store = new CachedAccountStore(store, b, { ttlMs: 0 });
    } catch (e) {
      process.stderr.write(`warning: ${(e as Error).message}; a key revoked or a plan changed now reaches running API processes when their key cache TTL (SCOUR_KEY_CACHE_TTL) ends\n`);
    }
  }
  const book = planBook(plans);
  const accounts = new AccountAdmin({ store, secrets: nodeSecrets, clock: systemClock, monthlyCredits: book.monthlyCredits });
  return { accounts, store, jobs, close: async () => { await bus?.close(); await close(); } };
}


/**
 * The configured local search index: PostgreSQL when DATABASE_URL is set,
 * else the SQLite file beside the account store (written from a thread of
 * its own). Documents are analysed by a pool of worker threads
 * (SCOUR_INDEX_ANALYSIS_WORKERS; 0: in-process), closed after the index.
 * `warm` starts those threads (and SQLite's writer) now, as SCOUR_WARMUP does at boot.
 */
export async function openSearchIndex(settings: Pick<Settings, 'databaseUrl' | 'dataDir'> & Partial<Pick<Settings, 'indexAnalysisWorkers'>>): Promise<{ index: SearchIndex; close: () => Promise<void> | void; warm: () => Promise<void> }> {
  const workers = settings.indexAnalysisWorkers ?? DEFAULTS.indexAnalysisWorkers;
  // Until the workers have loaded the analysers, the main thread analyses (an import right after start-up does not wait for them).
  const analyser = new AnalysisPool({ workers, analyseWhileStarting: true });
  try {
    if (settings.databaseUrl !== undefined) {
      const { openPostgresSearchIndex } = await import('../adapters/search-index/postgres.js');
      const pg = await openPostgresSearchIndex({ url: settings.databaseUrl, analyser });
      return { index: pg, close: async () => { try { await pg.close(); } finally { await analyser.close(); } }, warm: () => pg.warm() };
    }
    mkdirSync(settings.dataDir, { recursive: true });
    const sqlite = openSqliteSearchIndex({ path: join(settings.dataDir, 'scour.db'), analyser });
    return { index: sqlite, close: async () => { try { await sqlite.close(); } finally { await analyser.close(); } }, warm: () => sqlite.warm() };
  } catch (e) {
    await analyser.close();
    throw e;
  }
}
