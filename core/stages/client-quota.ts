/**
 * The developer tools' quota stage: a fixed-window limit per client IP,
 * through the RateLimiter port. Writes the x-ratelimit-* headers on every
 * answer and fails with RateLimited (429) past the limit.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../context.js';
import { RateLimited } from '../errors.js';
import { chain } from '../fast-effect.js';
import { defineStage } from '../pipeline.js';
import type { RateDecision, RateLimiter, RateRule } from '../ports.js';
import type { Admitted, ClientQuotaStage } from '../stages.js';

/** Write the spec 8.3 headers for a decision. */
export function writeRateHeaders(ctx: RequestContext, d: RateDecision): void {
  ctx.reply.set('x-ratelimit-limit', String(d.limit));
  ctx.reply.set('x-ratelimit-remaining', String(d.remaining));
  ctx.reply.set('x-ratelimit-reset', String(d.reset));
  ctx.reply.set('x-ratelimit-window', String(d.windowSeconds));
}

export function clientQuotaStage(limiter: RateLimiter, rule: RateRule, upgradeUrl: string, scope = 'tools'): ClientQuotaStage {
  const prefix = `ip:${scope}:`;
  return defineStage('quota', (ctx: RequestContext) =>
    chain(limiter.hit(prefix + ctx.clientIp, rule), (d): Effect.Effect<Admitted, RateLimited> => {
      writeRateHeaders(ctx, d);
      return d.allowed
        ? Effect.succeed({ rateLimit: d })
        : Effect.fail(new RateLimited({
          message: `Rate limit exceeded: ${d.limit} requests per ${d.windowSeconds} seconds from this address. Retry after ${d.retryAfter} seconds.`,
          retryAfter: d.retryAfter, limit: d.limit, remaining: d.remaining, reset: d.reset, upgradeUrl,
        }));
    }));
}
