// The authenticated GET /v1/usage targets of the HTTP bench need state made
// before the rounds and removed after them: a fresh SQLite data dir (the
// embedded configuration), a fresh PostgreSQL database and a unique Redis key
// prefix (the shared one), a plans file that lifts the usage rate limit so
// the run measures the path and never a 429, and one account per
// configuration created with the built CLI, exactly as an operator would.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';

export const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const USAGE_PLAN = 'unicorn';
export const PLANS_OVERRIDE = {
  [USAGE_PLAN]: {
    limits: {
      usage: { per_minute: 1_000_000_000 },
      // The billable row: two windows and a concurrency cap, all far above the load, so every request runs the whole quota path and none is refused.
      search: { windows: [{ limit: 1_000_000_000, seconds: 60 }, { limit: 1_000_000_000, seconds: 3600 }], concurrency: 1000 },
      billable: { windows: [{ limit: 1_000_000_000, seconds: 60 }, { limit: 1_000_000_000, seconds: 3600 }], concurrency: 1000 },
    },
  },
};
/** The billable request: a search over the (empty) local index, 1 credit. */
export const SEARCH_BODY = '{"query":"scour benchmark"}';
/** Credits of the billable account: enough for every round at the fixed rate. */
export const BILLABLE_CREDITS = 100_000_000;

/** A wrk script sending GET with this bearer key. */
export const usageLua = (key) => `wrk.method = "GET"\nwrk.headers["Authorization"] = "Bearer ${key}"\n`;

/**
 * Creates everything and returns the two configurations' server env, keys
 * and a `cleanup()` that is safe to call more than once. `baseEnv` is the
 * Scour env shared with the other targets.
 */
export async function setupUsage(root, baseEnv) {
  const runId = randomBytes(6).toString('hex');
  // Under data/ (git-ignored), like the other Scour targets' data dir: a real disk, not tmpfs.
  const dir = join(root, 'data', `bench-usage-${runId}`);
  const dbName = `scour_bench_${runId}`;
  const redisPrefix = `scourbench:${runId}:`;
  let dbCreated = false;
  let done = false;

  async function cleanup() {
    if (done) return;
    done = true;
    const problems = [];
    if (dbCreated) {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
      try {
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      } catch (e) {
        problems.push(`could not drop database ${dbName}: ${e.message}`);
      } finally {
        await c.end().catch(() => {});
      }
    }
    const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await r.connect();
      let cursor = '0';
      do {
        const [next, keys] = await r.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await r.del(...keys);
      } while (cursor !== '0');
    } catch (e) {
      problems.push(`could not delete Redis keys ${redisPrefix}*: ${e.message}`);
    } finally {
      r.disconnect();
    }
    rmSync(dir, { recursive: true, force: true });
    for (const p of problems) console.error(`cleanup: ${p}`);
  }

  try {
    mkdirSync(dir, { recursive: true });
    const plansPath = join(dir, 'plans.json');
    writeFileSync(plansPath, `${JSON.stringify(PLANS_OVERRIDE)}\n`);

    const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${dbName}`);
      dbCreated = true;
    } finally {
      await admin.end();
    }
    const dbUrl = new URL(PG_ADMIN_URL);
    dbUrl.pathname = `/${dbName}`;

    const common = { ...baseEnv, SCOUR_HTTP_ADAPTER: 'uws', SCOUR_BOOTSTRAP_KEY: 'false', SCOUR_PLANS: plansPath };
    // undefined = removed from the inherited environment (startServer drops them), so embedded is really embedded.
    const embedded = { ...common, SCOUR_DATA_DIR: join(dir, 'sqlite'), DATABASE_URL: undefined, REDIS_URL: undefined, SCOUR_REDIS_PREFIX: undefined };
    const shared = { ...common, SCOUR_DATA_DIR: join(dir, 'shared'), DATABASE_URL: dbUrl.toString(), REDIS_URL, SCOUR_REDIS_PREFIX: redisPrefix };

    const createAccount = (env, extra = []) => {
      const out = execFileSync(process.execPath, ['dist/config/cli.js', 'accounts', 'create', '--plan', USAGE_PLAN, ...extra, '--json'], {
        cwd: root, env: cleanEnv(env), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
      });
      const key = JSON.parse(out).api_key;
      if (typeof key !== 'string' || !key.startsWith('sk_')) throw new Error(`accounts create gave no api_key: ${out}`);
      return key;
    };
    const embeddedKey = createAccount(embedded);
    const sharedKey = createAccount(shared);
    const billableKey = createAccount(shared, ['--credits', String(BILLABLE_CREDITS)]);

    const write = (name, text) => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    return {
      dir, dbName, redisPrefix, cleanup,
      embedded: { env: embedded, key: embeddedKey, lua: write('usage-embedded.lua', usageLua(embeddedKey)) },
      shared: { env: shared, key: sharedKey, lua: write('usage-shared.lua', usageLua(sharedKey)) },
      billable: { env: shared, key: billableKey },
      dbUrl: dbUrl.toString(),
      // The ceiling gets a header of the same length, so wrk sends it the same request bytes.
      bare: { key: `sk_${'0'.repeat(43)}`, lua: write('usage-bare.lua', usageLua(`sk_${'0'.repeat(43)}`)) },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** process.env overlaid with `env`, where an undefined value removes the variable. */
export function cleanEnv(env) {
  const out = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}
