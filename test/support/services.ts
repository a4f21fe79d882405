/**
 * Real PostgreSQL and Redis for the shared-configuration suites: a fresh
 * database per suite (dropped afterwards) and a unique Redis key prefix
 * (its keys deleted afterwards). Both run on loopback on these machines;
 * `.ci/run` starts them, and a suite fails (not skips) when they are down.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';

export const PG_ADMIN_URL = process.env.SCOUR_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_TEST_URL = process.env.SCOUR_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface FreshDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `scour_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface RedisNamespace {
  readonly url: string;
  readonly prefix: string;
  /** Delete every key under the prefix. */
  clear(): Promise<void>;
}

export function redisNamespace(): RedisNamespace {
  const prefix = `scourtest:${randomBytes(6).toString('hex')}:`;
  return {
    url: REDIS_TEST_URL,
    prefix,
    async clear() {
      const r = new Redis(REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await r.connect();
      try {
        let cursor = '0';
        do {
          const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
          cursor = next;
          if (keys.length > 0) await r.del(...keys);
        } while (cursor !== '0');
      } finally {
        r.disconnect();
      }
    },
  };
}
