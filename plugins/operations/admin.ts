/**
 * The admin API under /admin/v1 (the spec does not say how keys are made):
 * accounts, keys, credits, plans and webhook signing secrets. Served only
 * when SCOUR_ADMIN_TOKEN is set, and guarded by it as a bearer token. Not
 * rate-limited by plan and never billed. The CLI (`scour
 * accounts|keys|credits|webhooks`) does the same through the store directly.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../core/context.js';
import { Pipeline } from '../../core/pipeline.js';
import type { Route } from '../../core/plugin.js';
import type { AdminStage, StageKit } from '../../core/stages/index.js';
import { type AccountAdmin, DEFAULT_WEBHOOK_GRACE_SECONDS, MAX_WEBHOOK_GRACE_SECONDS } from '../../core/account-admin.js';
import type { JobStore } from '../../core/jobs.js';
import { defineOperation, schema, StrictObject, Type } from '../sdk/index.js';

const PlanSchema = Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('builder'), Type.Literal('unicorn')], {
  description: 'free, starter, builder or unicorn',
});
const Iso = Type.String({ format: 'date-time' });
const NullableIso = Type.Union([Iso, Type.Null()]);
const RequestId = Type.Optional(Type.String());

const AccountView = {
  account_id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  plan: PlanSchema,
  credits_remaining: Type.Integer(),
  credits_reserved: Type.Integer(),
  monthly_credits: Type.Integer(),
  period_start: Iso,
  reset_date: Iso,
  created_at: Iso,
};
const KeyView = StrictObject({
  key_id: Type.String(),
  account_id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
  created_at: Iso,
  expires_at: NullableIso,
  revoked_at: NullableIso,
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked'), Type.Literal('expired')]),
});

export const CreateAccountRequest = StrictObject({
  plan: PlanSchema,
  credits: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: "Starting credits. Default: the plan's monthly allowance." })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
export const CreateAccountResponse = StrictObject({
  account_id: Type.String(),
  api_key: Type.String({ description: 'The key itself. Shown once: only its hash is stored.' }),
  key_id: Type.String(),
  plan: PlanSchema,
  credits_remaining: Type.Integer(),
  reset_date: Iso,
  request_id: RequestId,
});
export const CreateKeyRequest = StrictObject({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; must be in the future. Default: never expires.' })),
});
export const CreateKeyResponse = StrictObject({
  key_id: Type.String(),
  api_key: Type.String({ description: 'Shown once.' }),
  account_id: Type.String(),
  prefix: Type.String(),
  expires_at: NullableIso,
  request_id: RequestId,
});
export const SetPlanRequest = StrictObject({ plan: PlanSchema });
export const AddCreditsRequest = StrictObject({ amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }) });
const AccountResponse = StrictObject({ ...AccountView, request_id: RequestId });
const AccountDetailResponse = StrictObject({
  ...AccountView,
  keys: Type.Array(KeyView),
  breakdown: Type.Array(StrictObject({ operation: Type.String(), credits: Type.Integer(), requests: Type.Integer() })),
  request_id: RequestId,
});
const AccountListResponse = StrictObject({ accounts: Type.Array(StrictObject(AccountView)), request_id: RequestId });
const KeyListResponse = StrictObject({ keys: Type.Array(KeyView), request_id: RequestId });
const KeyResponse = StrictObject({ ...KeyView.properties, request_id: RequestId });
export const RotateWebhookSecretRequest = StrictObject({
  grace_period_seconds: Type.Optional(Type.Integer({
    minimum: 0, maximum: MAX_WEBHOOK_GRACE_SECONDS,
    description: `How long the old secret keeps signing deliveries alongside the new one (0: dropped at once). Default: ${DEFAULT_WEBHOOK_GRACE_SECONDS} (24 h).`,
  })),
});
const WebhookSecretResponse = StrictObject({
  account_id: Type.String(),
  secret: Type.String({ description: 'whsec_ + 43 base64url characters: the HMAC-SHA256 key of the scour-signature header, used as given.' }),
  created_at: Iso,
  previous_secret_expires_at: Type.Union([Iso, Type.Null()], { description: 'Until when the secret this one replaced still signs deliveries alongside it; null when none does.' }),
  request_id: RequestId,
});
const LedgerResponse = StrictObject({
  ledger: Type.Array(StrictObject({
    id: Type.String(), operation: Type.String(), credits: Type.Integer(), request_id: Type.String(), created_at: Iso,
  })),
  request_id: RequestId,
});

function adminRoutes(accounts: AccountAdmin, admin: AdminStage, stages: StageKit, jobs: JobStore): Route<any, any>[] {
  const base = () => Pipeline.from<RequestContext>().then(admin);
  const tags = ['admin'];
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    {
      method: 'POST', path: '/admin/v1/accounts', summary: 'Create an account and its first API key (201; the key is shown once).',
      tags, auth: 'admin', status: 201, failures: [400, 401, 503],
      request: schema(CreateAccountRequest), response: schema(CreateAccountResponse),
      handle: base().then(stages.validate(schema(CreateAccountRequest))).handle((ctx) =>
        Effect.map(accounts.createAccount({ plan: ctx.input.plan, credits: ctx.input.credits, name: ctx.input.name ?? null }), ({ account, key }) => {
          const v = accounts.viewAccount(account);
          return { account_id: account.id, api_key: key.apiKey, key_id: key.record.id, plan: account.plan, credits_remaining: v.credits_remaining, reset_date: v.reset_date };
        })),
    },
    {
      method: 'GET', path: '/admin/v1/accounts', summary: 'List accounts.', tags, auth: 'admin', failures: [401, 503],
      response: schema(AccountListResponse),
      handle: base().handle(() => Effect.map(accounts.listAccounts(), (list) => ({ accounts: list.map((a) => accounts.viewAccount(a)) }))),
    },
    {
      method: 'GET', path: '/admin/v1/accounts/{account_id}', summary: 'One account: balance, period, keys (never the keys themselves) and usage.',
      tags, auth: 'admin', failures: [401, 404, 503], response: schema(AccountDetailResponse),
      handle: base().handle((ctx) =>
        Effect.flatMap(accounts.requireAccount(ctx.params.account_id!), (a) =>
          Effect.flatMap(accounts.listKeys(a.id), (keys) =>
            Effect.map(accounts.usage(a), (rows) => ({
              ...accounts.viewAccount(a),
              keys: keys.map((k) => accounts.viewKey(k)),
              breakdown: rows.map((r) => ({ operation: r.operation, credits: r.credits, requests: r.requests })),
            }))))),
    },
    {
      method: 'PATCH', path: '/admin/v1/accounts/{account_id}', summary: "Change an account's plan (limits change at once; credits are kept).",
      tags, auth: 'admin', failures: [400, 401, 404, 503], request: schema(SetPlanRequest), response: schema(AccountResponse),
      handle: base().then(stages.validate(schema(SetPlanRequest))).handle((ctx) =>
        Effect.map(accounts.setPlan(ctx.params.account_id!, ctx.input.plan), (a) => accounts.viewAccount(a))),
    },
    {
      method: 'POST', path: '/admin/v1/accounts/{account_id}/credits', summary: 'Top up: add credits to the balance (kept across periods).',
      tags, auth: 'admin', failures: [400, 401, 404, 503], request: schema(AddCreditsRequest), response: schema(AccountResponse),
      handle: base().then(stages.validate(schema(AddCreditsRequest))).handle((ctx) =>
        Effect.map(accounts.addCredits(ctx.params.account_id!, ctx.input.amount), (a) => accounts.viewAccount(a))),
    },
    {
      method: 'POST', path: '/admin/v1/accounts/{account_id}/keys', summary: 'Issue another API key for the account (201; shown once).',
      tags, auth: 'admin', status: 201, failures: [400, 401, 404, 503], request: schema(CreateKeyRequest), response: schema(CreateKeyResponse),
      handle: base().then(stages.validate(schema(CreateKeyRequest))).handle((ctx) => {
        const expiresAt = ctx.input.expires_at === undefined ? null : Date.parse(ctx.input.expires_at);
        return Effect.map(accounts.issueKey(ctx.params.account_id!, { name: ctx.input.name ?? null, expiresAt }), (k) => ({
          key_id: k.record.id, api_key: k.apiKey, account_id: k.record.accountId, prefix: k.record.prefix,
          expires_at: k.record.expiresAt === null ? null : iso(k.record.expiresAt),
        }));
      }),
    },
    {
      method: 'GET', path: '/admin/v1/accounts/{account_id}/keys', summary: "List an account's keys (prefixes only).",
      tags, auth: 'admin', failures: [401, 404, 503], response: schema(KeyListResponse),
      handle: base().handle((ctx) => Effect.map(accounts.listKeys(ctx.params.account_id!), (keys) => ({ keys: keys.map((k) => accounts.viewKey(k)) }))),
    },
    {
      method: 'GET', path: '/admin/v1/accounts/{account_id}/ledger', summary: 'The most recent charges (at most 1000), newest first.',
      tags, auth: 'admin', failures: [401, 404, 503], response: schema(LedgerResponse),
      handle: base().handle((ctx) => Effect.map(accounts.ledger(ctx.params.account_id!, 1000), (rows) => ({
        ledger: rows.map((r) => ({ id: r.id, operation: r.operation, credits: r.credits, request_id: r.requestId, created_at: iso(r.createdAt) })),
      }))),
    },
    {
      method: 'GET', path: '/admin/v1/accounts/{account_id}/webhook-secret', summary: "The account's webhook signing secret (made now if it has none yet).",
      description: 'An account gets its secret with its first webhook; asking for it first makes it here, so receivers can be configured before the first job.',
      tags, auth: 'admin', failures: [401, 404, 503], response: schema(WebhookSecretResponse),
      handle: base().handle((ctx) => accounts.webhookSecret(jobs, ctx.params.account_id!)),
    },
    {
      method: 'POST', path: '/admin/v1/accounts/{account_id}/webhook-secret/rotate', summary: 'Replace the webhook signing secret; the old one keeps signing during a grace period.',
      description: `Webhooks are signed with both secrets (one v1 entry each) until previous_secret_expires_at, so receivers can switch without dropping deliveries. The body is optional; grace_period_seconds defaults to ${DEFAULT_WEBHOOK_GRACE_SECONDS}. Rotating again during a grace period drops the secret rotated out before.`,
      tags, auth: 'admin', failures: [400, 401, 404, 503], request: schema(RotateWebhookSecretRequest), response: schema(WebhookSecretResponse),
      handle: base().then(stages.validate(schema(RotateWebhookSecretRequest))).handle((ctx) =>
        accounts.rotateWebhookSecret(jobs, ctx.params.account_id!, ctx.input.grace_period_seconds ?? DEFAULT_WEBHOOK_GRACE_SECONDS)),
    },
    {
      method: 'DELETE', path: '/admin/v1/keys/{key_id}', summary: 'Revoke a key at once (idempotent: revoking again keeps the first time).',
      tags, auth: 'admin', failures: [401, 404, 503], response: schema(KeyResponse),
      handle: base().handle((ctx) => Effect.map(accounts.revokeKey(ctx.params.key_id!), (k) => accounts.viewKey(k))),
    },
  ];
}

export const adminOperation = defineOperation({
  name: 'operation-admin',
  description: 'The admin API under /admin/v1 (enabled by SCOUR_ADMIN_TOKEN).',
  routes(host) {
    const admin = host.stages.admin;
    if (admin === undefined) return [];
    return adminRoutes(host.accounts, admin, host.stages, host.jobs.store);
  },
});
