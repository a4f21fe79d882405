/**
 * Provider pauses shared through Redis (shared mode): a provider that
 * rate-limits one process is left alone by every process until its pause
 * ends. One hash, `<SCOUR_REDIS_PREFIX>provider-pauses`, field = provider
 * id, value = epoch ms the pause ends; a pause only ever lengthens (a Lua
 * script compares before it writes). Each process answers `pausedUntil`
 * from its own view (no round trip on the search path) and refreshes that
 * view from Redis in the background every `refreshMs` (one HGETALL of a
 * hash of a few fields); a pause set elsewhere is seen within that long. When
 * Redis is down the process keeps its own pauses and says nothing more: a
 * missed pause costs one more rate-limited request, not a failed search.
 */
import { Redis } from 'ioredis';
import { memoryPauses } from '../../core/search-merge.js';
import type { ProviderPauses } from '../../core/search.js';

export interface RedisPausesOptions {
  readonly url: string;
  readonly prefix: string;
  /** How stale this process's view may get while searches run (default 1 s). */
  readonly refreshMs?: number;
}

const LENGTHEN = `local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if cur < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`;

export class RedisPauses implements ProviderPauses {
  private readonly local = memoryPauses();
  private readonly redis: Redis;
  private readonly key: string;
  private readonly refreshMs: number;
  private refreshing: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: RedisPausesOptions) {
    this.key = `${options.prefix}provider-pauses`;
    this.refreshMs = options.refreshMs ?? 1000;
    this.redis = new Redis(options.url, { lazyConnect: true, connectTimeout: 2000, commandTimeout: 1000, maxRetriesPerRequest: 1 });
    this.redis.on('error', () => {});
  }

  async connect(): Promise<void> {
    await this.redis.connect();
    await this.refresh();
    this.timer = setInterval(() => {
      if (this.refreshing !== undefined || this.redis.status !== 'ready') return;
      this.refreshing = this.refresh().catch(() => {}).finally(() => { this.refreshing = undefined; });
    }, this.refreshMs);
    this.timer.unref();
  }

  /** Read every pause from Redis into this process's view. */
  async refresh(): Promise<void> {
    const all = await this.redis.hgetall(this.key);
    for (const [id, raw] of Object.entries(all)) {
      const until = Number(raw);
      if (Number.isFinite(until)) this.local.pause(id, until);
    }
  }

  pausedUntil(id: string, now: number): number | undefined {
    return this.local.pausedUntil(id, now);
  }

  pause(id: string, until: number): void {
    this.local.pause(id, until);
    if (this.redis.status !== 'ready') return;
    // The hash lives as long as its longest pause (plus a minute).
    const ttl = Math.max(60_000, until - Date.now() + 60_000);
    this.redis.eval(LENGTHEN, 1, this.key, id, String(until), String(Math.ceil(ttl))).catch(() => {});
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing;
    this.redis.disconnect();
  }
}
