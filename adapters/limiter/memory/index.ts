/**
 * In-process RateLimiter: fixed windows and concurrency slots per key in
 * Maps, swept periodically so idle keys do not accumulate. The embedded
 * default; several processes share limits through the Redis adapter instead
 * (same semantics, see `bindingDecision`, which both use).
 */
import { Effect } from 'effect';
import type { Admission, Clock, Disposable, RateDecision, RateLimiter, RateRule, SlotDecision, SlotRequest } from '../../../core/ports.js';

interface Window { windowMs: number; start: number; count: number }

/**
 * The decision for one hit over several windows, given each rule's count
 * (after the hit when allowed, as found when denied) and window end (epoch
 * ms). Denied: the refusing window that frees up last (ties: the shorter).
 * Allowed: the window with the fewest left (ties: the shorter).
 */
export function bindingDecision(
  rules: readonly RateRule[], counts: ArrayLike<number>, ends: ArrayLike<number>, allowed: boolean, now: number,
): RateDecision {
  let best = -1;
  let bestScore = 0;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    const count = counts[i]!;
    // Denied: rank refusing windows by retryAfter; allowed: by fewest remaining (negated so larger is better).
    let score: number;
    if (allowed) score = -(r.limit - count);
    else if (count >= r.limit) score = retryAfterOf(ends[i]!, now);
    else continue;
    if (best < 0 || score > bestScore || (score === bestScore && r.windowSeconds < rules[best]!.windowSeconds)) {
      best = i;
      bestScore = score;
    }
  }
  if (best < 0) return noRules(now);
  const r = rules[best]!;
  const end = ends[best]!;
  return allowed
    ? { allowed: true, limit: r.limit, remaining: Math.max(0, r.limit - counts[best]!), reset: Math.ceil(end / 1000), windowSeconds: r.windowSeconds, retryAfter: 0 }
    : { allowed: false, limit: r.limit, remaining: 0, reset: Math.ceil(end / 1000), windowSeconds: r.windowSeconds, retryAfter: retryAfterOf(end, now) };
}

/** An empty rule list limits nothing: allowed, with a degenerate window. */
export function noRules(now: number): RateDecision {
  return { allowed: true, limit: 0, remaining: 0, reset: Math.ceil(now / 1000), windowSeconds: 0, retryAfter: 0 };
}

const retryAfterOf = (endMs: number, now: number): number => Math.max(1, Math.ceil((endMs - now) / 1000));

/** The unlimited slot answer: nothing is tracked, so nothing is active. */
const UNLIMITED = (max: number): SlotDecision => ({ acquired: true, active: 0, max });

export class MemoryRateLimiter implements RateLimiter, Disposable {
  /** key -> one Window per distinct window length used with that key. */
  private readonly windows = new Map<string, Window[]>();
  /** key -> token -> lease expiry (epoch ms). */
  private readonly slots = new Map<string, Map<string, number>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock = { now: Date.now }, sweepEveryMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  /** Synchronous core of `hit`, for callers that are not in an Effect. */
  hitSync(key: string, rules: readonly RateRule[], now: number = this.clock.now()): RateDecision {
    if (rules.length === 1) return this.hitOne(key, rules[0]!, now);
    if (rules.length === 0) return noRules(now);
    const ws = this.windowsOf(key);
    const found: Window[] = new Array(rules.length);
    let allowed = true;
    for (let i = 0; i < rules.length; i++) {
      const w = this.windowIn(ws, rules[i]!.windowSeconds * 1000, now);
      found[i] = w;
      if (w.count >= rules[i]!.limit) allowed = false;
    }
    const counts = new Array<number>(rules.length);
    const ends = new Array<number>(rules.length);
    for (let i = 0; i < rules.length; i++) {
      const w = found[i]!;
      // Two rules with the same window length share one counter: count the hit once.
      if (allowed && found.indexOf(w) === i) w.count++;
      ends[i] = w.start + w.windowMs;
    }
    for (let i = 0; i < rules.length; i++) counts[i] = found[i]!.count;
    return bindingDecision(rules, counts, ends, allowed, now);
  }

  hit(key: string, rules: readonly RateRule[], now: number): Effect.Effect<RateDecision> {
    return Effect.succeed(this.hitSync(key, rules, now));
  }

  /** Synchronous core of `acquire`. */
  acquireSync(key: string, token: string, max: number, leaseMs: number, now: number): SlotDecision {
    if (max <= 0) return UNLIMITED(max);
    let held = this.slots.get(key);
    if (held === undefined) {
      held = new Map();
      this.slots.set(key, held);
    } else {
      for (const [t, expiry] of held) if (expiry <= now) held.delete(t);
    }
    // Re-acquiring a slot one already holds renews its lease rather than taking a second one.
    if (held.has(token) || held.size < max) {
      held.set(token, now + leaseMs);
      return { acquired: true, active: held.size, max };
    }
    return { acquired: false, active: held.size, max };
  }

  acquire(key: string, token: string, max: number, leaseMs: number, now: number): Effect.Effect<SlotDecision> {
    return Effect.succeed(this.acquireSync(key, token, max, leaseMs, now));
  }

  admit(key: string, rules: readonly RateRule[], slot: SlotRequest | undefined, now: number): Effect.Effect<Admission> {
    const decision = this.hitSync(key, rules, now);
    if (!decision.allowed || slot === undefined || slot.max <= 0) return Effect.succeed({ decision, slot: undefined });
    return Effect.succeed({ decision, slot: this.acquireSync(key, slot.token, slot.max, slot.leaseMs, now) });
  }

  release(key: string, token: string): Effect.Effect<void> {
    const held = this.slots.get(key);
    if (held !== undefined && held.delete(token) && held.size === 0) this.slots.delete(key);
    return Effect.void;
  }

  /** Drop ended windows and lapsed slots. */
  sweep(now: number = this.clock.now()): void {
    for (const [k, ws] of this.windows) {
      for (let i = ws.length - 1; i >= 0; i--) if (ws[i]!.start + ws[i]!.windowMs <= now) ws.splice(i, 1);
      if (ws.length === 0) this.windows.delete(k);
    }
    for (const [k, held] of this.slots) {
      for (const [t, expiry] of held) if (expiry <= now) held.delete(t);
      if (held.size === 0) this.slots.delete(k);
    }
  }

  /** Keys holding state (windows or slots). */
  get size(): number {
    return this.windows.size + this.slots.size;
  }

  dispose(): void {
    clearInterval(this.sweeper);
    this.windows.clear();
    this.slots.clear();
  }

  /** The common case (one rule), without the arrays of the general one. */
  private hitOne(key: string, rule: RateRule, now: number): RateDecision {
    const w = this.windowIn(this.windowsOf(key), rule.windowSeconds * 1000, now);
    const endMs = w.start + w.windowMs;
    const reset = Math.ceil(endMs / 1000);
    if (w.count >= rule.limit) {
      return { allowed: false, limit: rule.limit, remaining: 0, reset, windowSeconds: rule.windowSeconds, retryAfter: retryAfterOf(endMs, now) };
    }
    w.count++;
    return { allowed: true, limit: rule.limit, remaining: rule.limit - w.count, reset, windowSeconds: rule.windowSeconds, retryAfter: 0 };
  }

  private windowsOf(key: string): Window[] {
    let ws = this.windows.get(key);
    if (ws === undefined) {
      ws = [];
      this.windows.set(key, ws);
    }
    return ws;
  }

  /**
   * The current window of length `windowMs`, rolled over when `now` is past
   * it. A late arrival (a `now` before the current window) counts against
   * the current window: the previous one is gone.
   */
  private windowIn(ws: Window[], windowMs: number, now: number): Window {
    const start = now - (now % windowMs);
    for (let i = 0; i < ws.length; i++) {
      const w = ws[i]!;
      if (w.windowMs !== windowMs) continue;
      if (start > w.start) {
        w.start = start;
        w.count = 0;
      }
      return w;
    }
    const w: Window = { windowMs, start, count: 0 };
    ws.push(w);
    return w;
  }
}
