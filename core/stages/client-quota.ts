/**
 * The developer tools' quota stage: a fixed-window limit per client IP,
 * through the RateLimiter port. Writes the x-ratelimit-* headers on every
 * answer and fails with RateLimited (429) past the limit.
 */
import { Effect } from 'effect';
import { NumberText, type RequestContext } from '../context.js';
import { RateLimited } from '../errors.js';
import { chain } from '../fast-effect.js';
import { defineStage } from '../pipeline.js';
import type { RateDecision, RateLimiter, RateRule } from '../ports.js';
import type { Admitted, ClientQuotaStage } from './index.js';

// The limit, the window and its end repeat from one answer to the next; the remaining count does not.
const limitText = new NumberText();
const resetText = new NumberText();
const windowText = new NumberText();

/** Write the spec 8.3 headers for a decision. */
export function writeRateHeaders(ctx: RequestContext, d: RateDecision): void {
  ctx.reply.setNumber('x-ratelimit-limit', d.limit, limitText);
  ctx.reply.setNumber('x-ratelimit-remaining', d.remaining);
  ctx.reply.setNumber('x-ratelimit-reset', d.reset, resetText);
  ctx.reply.setNumber('x-ratelimit-window', d.windowSeconds, windowText);
}

export function clientQuotaStage(limiter: RateLimiter, rule: RateRule, upgradeUrl: string, scope = 'tools'): ClientQuotaStage {
  const prefix = `ip:${scope}:`;
  // Memoised keys: one string per client, so the limiter's Map hashes it once.
  const keys = new Map<string, string>();
  const keyOf = (ip: string): string => {
    let k = keys.get(ip);
    if (k === undefined) {
      if (keys.size >= 10_000) keys.clear();
      k = prefix + ip;
      keys.set(ip, k);
    }
    return k;
  };
  const rules = [rule];
  return defineStage('quota', (ctx: RequestContext) =>
    chain(limiter.hit(keyOf(ctx.clientIp), rules, ctx.receivedAt), (d): Effect.Effect<Admitted, RateLimited> => {
      writeRateHeaders(ctx, d);
      return d.allowed
        ? Effect.succeed({ rateLimit: d })
        : Effect.fail(new RateLimited({
          message: `Rate limit exceeded: ${d.limit} requests per ${d.windowSeconds} seconds from this address. Retry after ${d.retryAfter} seconds.`,
          retryAfter: d.retryAfter, limit: d.limit, remaining: d.remaining, reset: d.reset, upgradeUrl,
        }));
    }));
}
