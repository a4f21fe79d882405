/** Starts real Scour instances on loopback (port 0) for the contract suites. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createScour, type Scour, type ScourOptions } from '../../config/container.js';
import { createLogger } from '../../adapters/logging/pino.js';
import type { Settings } from '../../config/env.js';
import { freshDatabase, redisNamespace } from './services.js';

export const ADAPTERS = ['uws', 'node'] as const;
export type AdapterKind = (typeof ADAPTERS)[number];

export interface Running {
  readonly scour: Scour;
  readonly url: string;
  readonly port: number;
  readonly logs: string[];
  stop(): Promise<boolean>;
}

/** The two deployments every account suite runs against. */
export const CONFIGS = ['embedded', 'shared'] as const;
export type ConfigKind = (typeof CONFIGS)[number];

/**
 * Start Scour in a configuration: embedded (SQLite in a fresh directory,
 * in-process limiter) or shared (a fresh PostgreSQL database and a fresh
 * Redis prefix). `stop` also drops what was created.
 */
export async function startScourIn(config: ConfigKind, adapter: AdapterKind, settings: Partial<Settings> = {}, options: Omit<ScourOptions, 'settings'> = {}): Promise<Running & { readonly config: ConfigKind }> {
  if (config === 'embedded') return { ...(await startScour(adapter, settings, options)), config };
  const db = await freshDatabase();
  const redis = redisNamespace();
  let running: Running;
  try {
    running = await startScour(adapter, { databaseUrl: db.url, redisUrl: redis.url, redisPrefix: redis.prefix, ...settings }, options);
  } catch (e) {
    await db.drop();
    throw e;
  }
  return {
    ...running,
    config,
    async stop() {
      const drained = await running.stop();
      await db.drop();
      await redis.clear();
      return drained;
    },
  };
}

export async function startScour(adapter: AdapterKind, settings: Partial<Settings> = {}, options: Omit<ScourOptions, 'settings'> = {}): Promise<Running> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const ownDir = settings.dataDir === undefined;
  const dataDir = settings.dataDir ?? mkdtempSync(join(tmpdir(), 'scour-test-'));
  // Tests reach only loopback: the built-in providers that would ask public services are on only when a test
  // points them somewhere (a stand-in's URL in providerSettings), unless the test lists providers itself.
  const pointed = Object.entries(settings.providerSettings ?? {}).filter(([, v]) => v.URL !== undefined).map(([id]) => id);
  const searchProviders = settings.searchProviders ?? ['local', ...(settings.searxngUrl !== undefined ? ['searxng'] : []), ...pointed];
  const scour = await createScour({
    logger: createLogger('debug', sink),
    ...options,
    settings: {
      searchProviders,
      port: 0,
      host: '127.0.0.1',
      httpAdapter: adapter,
      dataDir,
      toolsRateLimit: { limit: 1_000_000, windowSeconds: 60 },
      shutdownTimeoutMs: 5_000,
      // Warm-up is a boot-time cost with nothing to test in most suites; test/http/warmup.test.ts covers it.
      warmup: false,
      ...settings,
    },
  });
  const { url, port } = await scour.start();
  return {
    scour, url, port, logs,
    async stop() {
      const drained = await scour.stop();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      return drained;
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
