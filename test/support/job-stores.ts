/**
 * The two job stores (SQLite in a fresh directory, PostgreSQL in a fresh
 * database) behind one harness, for the JobStore contract suites that run
 * against both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobStore } from '../../core/jobs.js';
import type { AccountStore } from '../../core/ports.js';
import { openPostgresStore } from '../../adapters/store/postgres/index.js';
import { postgresJobStore } from '../../adapters/store/postgres/jobs.js';
import { openSqliteStore } from '../../adapters/store/sqlite/index.js';
import { sqliteJobStore } from '../../adapters/store/sqlite/jobs.js';
import { freshDatabase, type FreshDatabase } from './services.js';

export interface Opened {
  readonly accounts: AccountStore;
  readonly jobs: JobStore;
  close(): Promise<void>;
}

export interface Harness {
  readonly name: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** Another connection to the same database (a second process, as far as the store can tell). */
  open(): Promise<Opened>;
}

export function sqliteHarness(): Harness {
  let dir = '';
  return {
    name: 'sqlite',
    async setup() {
      dir = mkdtempSync(join(tmpdir(), 'scour-jobs-'));
    },
    async teardown() {
      rmSync(dir, { recursive: true, force: true });
    },
    async open() {
      const accounts = openSqliteStore({ path: join(dir, 'scour.db') });
      return { accounts, jobs: sqliteJobStore(accounts), close: async () => accounts.close() };
    },
  };
}

export function postgresHarness(): Harness {
  let db: FreshDatabase | undefined;
  return {
    name: 'postgres',
    async setup() {
      db = await freshDatabase();
    },
    async teardown() {
      await db?.drop();
    },
    async open() {
      const accounts = await openPostgresStore({ url: db!.url, max: 8 });
      return { accounts, jobs: postgresJobStore(accounts), close: () => accounts.close() };
    },
  };
}
