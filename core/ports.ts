/**
 * Ports: the interfaces adapters implement. The core depends on these only,
 * never on a driver, a socket or a file.
 */
import type { Effect } from 'effect';

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export interface IdGenerator {
  /** A unique id made only of URL-safe characters [A-Za-z0-9_-] (the HTTP layer writes it unescaped). */
  next(): string;
}

export interface LogFn {
  (obj: Record<string, unknown>, msg?: string): void;
  (msg: string): void;
}

export interface Logger {
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
  /** Whether a level would be written (so hot paths can skip building the log object). */
  isLevelEnabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean;
}

export interface RateRule {
  /** Requests allowed per window. */
  readonly limit: number;
  readonly windowSeconds: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Unix seconds when the window resets. */
  readonly reset: number;
  readonly windowSeconds: number;
  /** Seconds until a request would be allowed again (0 when allowed). */
  readonly retryAfter: number;
}

/** Counts hits per key in fixed windows. In-process or shared (Redis). */
export interface RateLimiter {
  /** Count one hit at `now` (epoch ms; the request's arrival, so one clock read serves the request). */
  hit(key: string, rule: RateRule, now: number): Effect.Effect<RateDecision>;
}

/** Request metrics: the HTTP layer reports, an adapter renders. */
export interface Metrics {
  observe(route: string, status: number, seconds: number): void;
  render(): string;
}

/** Resources with a lifetime, closed in reverse order at shutdown. */
export interface Disposable {
  dispose(): Promise<void> | void;
}
