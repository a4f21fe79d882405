/**
 * GET /v1/usage (spec 2.8): the account's credits in the current billing
 * period. Authenticated and rate-limited like every operation; it costs no
 * credits. Beyond the spec's three fields: the plan, the period, credits
 * held by requests in flight, and a breakdown by operation.
 */
import { Effect } from 'effect';
import { availableCredits } from '../../core/accounts.js';
import { chain } from '../../core/fast-effect.js';
import { Pipeline } from '../../core/pipeline.js';
import type { RequestContext } from '../../core/context.js';
import { defineOperation, schema, StrictObject, Type } from '../sdk/index.js';

export const UsageResponse = StrictObject({
  credits_used: Type.Integer({ description: 'Credits charged in the current period.' }),
  credits_remaining: Type.Integer({ description: 'Credits the account can spend now (balance minus credits held by requests in flight).' }),
  reset_date: Type.String({ format: 'date-time', description: 'When the current period ends and the monthly allowance is refilled (ISO 8601 UTC).' }),
  plan: Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('builder'), Type.Literal('unicorn')]),
  period_start: Type.String({ format: 'date-time' }),
  monthly_credits: Type.Integer({ description: "The plan's allowance: the balance is refilled to this at each period start when below it." }),
  credits_reserved: Type.Integer({ description: 'Credits held by requests still in flight.' }),
  breakdown: Type.Array(StrictObject({
    operation: Type.String(),
    credits: Type.Integer(),
    requests: Type.Integer({ description: 'Charged requests.' }),
  }), { description: 'Credits used in the current period, by operation.' }),
  request_id: Type.Optional(Type.String()),
});

export const usageOperation = defineOperation({
  name: 'operation-usage',
  description: 'GET /v1/usage: credits used and remaining in the billing period.',
  routes(host) {
    const accounts = host.accounts;
    return [{
      method: 'GET',
      path: '/v1/usage',
      summary: 'Credit usage of the calling account in the current billing period.',
      tags: ['account'],
      auth: 'bearer',
      response: schema(UsageResponse),
      failures: [401, 429, 503],
      handle: Pipeline.from<RequestContext>()
        .then(host.stages.auth)
        .then(host.stages.quota('usage'))
        // Auth's lookup may come from the key cache (its credit figures up to its TTL old): the account's
        // current figures and its period's usage are read here, in one round trip.
        .handle((ctx) => {
          return chain(accounts.currentUsage(ctx.account.id), (found) => {
            const a = found?.account ?? ctx.account.snapshot;
            const rows = found?.usage ?? [];
            let used = 0;
            for (const r of rows) used += r.credits;
            return Effect.succeed({
              credits_used: used,
              credits_remaining: availableCredits(a),
              reset_date: new Date(a.periodEnd).toISOString(),
              plan: a.plan,
              period_start: new Date(a.periodStart).toISOString(),
              monthly_credits: accounts.monthlyCredits(a.plan),
              credits_reserved: a.held,
              breakdown: rows.map((r) => ({ operation: r.operation, credits: r.credits, requests: r.requests })),
            });
          });
        }),
    }];
  },
});
