/**
 * In-process RateLimiter: fixed windows per key in a Map, swept once a
 * window so idle keys do not accumulate. The embedded default; several
 * processes share limits through the Redis adapter instead.
 */
import { Effect } from 'effect';
import type { Clock, Disposable, RateDecision, RateLimiter, RateRule } from '../../../core/ports.js';

interface Window { start: number; count: number; windowMs: number }

export class MemoryRateLimiter implements RateLimiter, Disposable {
  private readonly windows = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock, sweepEveryMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  /** Synchronous core of `hit`, for callers that are not in an Effect. */
  hitSync(key: string, rule: RateRule, now: number = this.clock.now()): RateDecision {
    const windowMs = rule.windowSeconds * 1000;
    const start = now - (now % windowMs);
    let w = this.windows.get(key);
    if (w === undefined || w.start !== start || w.windowMs !== windowMs) {
      w = { start, count: 0, windowMs };
      this.windows.set(key, w);
    }
    const resetMs = start + windowMs;
    const reset = Math.ceil(resetMs / 1000);
    if (w.count >= rule.limit) {
      return { allowed: false, limit: rule.limit, remaining: 0, reset, windowSeconds: rule.windowSeconds, retryAfter: Math.max(1, Math.ceil((resetMs - now) / 1000)) };
    }
    w.count++;
    return { allowed: true, limit: rule.limit, remaining: rule.limit - w.count, reset, windowSeconds: rule.windowSeconds, retryAfter: 0 };
  }

  hit(key: string, rule: RateRule, now: number): Effect.Effect<RateDecision> {
    return Effect.succeed(this.hitSync(key, rule, now));
  }

  sweep(): void {
    const now = this.clock.now();
    for (const [k, w] of this.windows) if (w.start + w.windowMs <= now) this.windows.delete(k);
  }

  get size(): number {
    return this.windows.size;
  }

  dispose(): void {
    clearInterval(this.sweeper);
    this.windows.clear();
  }
}
