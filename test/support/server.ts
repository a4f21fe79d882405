/** Starts real Scour instances on loopback (port 0) for the contract suites. */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createScour, type Scour, type ScourOptions } from '../../config/container.js';
import { createLogger } from '../../adapters/logging/pino.js';
import type { Settings } from '../../config/env.js';

export const ADAPTERS = ['uws', 'node'] as const;
export type AdapterKind = (typeof ADAPTERS)[number];

export interface Running {
  readonly scour: Scour;
  readonly url: string;
  readonly port: number;
  readonly logs: string[];
  stop(): Promise<boolean>;
}

export async function startScour(adapter: AdapterKind, settings: Partial<Settings> = {}, options: Omit<ScourOptions, 'settings'> = {}): Promise<Running> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const scour = await createScour({
    logger: createLogger('debug', sink),
    ...options,
    settings: {
      port: 0,
      host: '127.0.0.1',
      httpAdapter: adapter,
      dataDir: join(tmpdir(), 'scour-test-data'),
      toolsRateLimit: { limit: 1_000_000, windowSeconds: 60 },
      shutdownTimeoutMs: 5_000,
      ...settings,
    },
  });
  const { url, port } = await scour.start();
  return { scour, url, port, logs, stop: () => scour.stop() };
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
