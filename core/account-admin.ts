/**
 * Account administration: what the admin API and the CLI both do (create
 * accounts and keys, revoke, top up, change plan, describe, show and rotate
 * the webhook signing secret). Keys are made here, shown once in the
 * result, and only their hash reaches the store.
 */
import { Effect } from 'effect';
import { type Account, availableCredits, type KeyRecord, keyPrefix, type LedgerRow, type OperationUsage, type PlanId, periodContaining } from './accounts.js';
import { BadRequest, NotFound, type ServiceUnavailable } from './errors.js';
import type { JobStore } from './jobs.js';
import type { AccountStore, Clock, Secrets } from './ports.js';

export interface AdminDeps {
  readonly store: AccountStore;
  readonly secrets: Secrets;
  readonly clock: Clock;
  monthlyCredits(plan: PlanId): number;
}

export interface IssuedKey {
  /** The key itself: shown once, never stored. */
  readonly apiKey: string;
  readonly record: KeyRecord;
}

export interface AccountView {
  readonly account_id: string;
  readonly name: string | null;
  readonly plan: PlanId;
  readonly credits_remaining: number;
  readonly credits_reserved: number;
  readonly monthly_credits: number;
  readonly period_start: string;
  readonly reset_date: string;
  readonly created_at: string;
}

export interface KeyView {
  readonly key_id: string;
  readonly account_id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  readonly status: 'active' | 'revoked' | 'expired';
}

/** An account's webhook signing secret, as the admin API and `scour webhooks` show it. */
export interface WebhookSecretView {
  readonly account_id: string;
  /** `whsec_` + 43 base64url characters; the HMAC key of the scour-signature header. */
  readonly secret: string;
  /** When this secret was made (first shown, or rotated in). */
  readonly created_at: string;
  /** Until when the secret it replaced still signs deliveries alongside it; null when none does. */
  readonly previous_secret_expires_at: string | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export const MAX_CREDITS = 1_000_000_000;
/** A rotated-out webhook secret keeps signing for 24 h unless told otherwise, so receivers can switch without dropping deliveries. */
export const DEFAULT_WEBHOOK_GRACE_SECONDS = 86_400;
/** At most a week of grace. */
export const MAX_WEBHOOK_GRACE_SECONDS = 604_800;

export class AccountAdmin {
  constructor(private readonly d: AdminDeps) {}

  monthlyCredits(plan: PlanId): number {
    return this.d.monthlyCredits(plan);
  }

  newKeyMaterial(): string {
    // 32 random bytes -> 43 base64url characters (core/accounts.ts KEY_PATTERN).
    return `sk_${this.d.secrets.random(32)}`;
  }

  /** A new webhook signing secret: `whsec_` + 32 random bytes, base64url (the format adapters/webhooks/sign.ts makes too). */
  newWebhookSecret(): string {
    return `whsec_${this.d.secrets.random(32)}`;
  }

  private newId(prefix: string): string {
    return `${prefix}_${this.d.secrets.random(12)}`;
  }

  viewAccount(a: Account): AccountView {
    return {
      account_id: a.id, name: a.name, plan: a.plan,
      credits_remaining: availableCredits(a), credits_reserved: a.held,
      monthly_credits: this.d.monthlyCredits(a.plan),
      period_start: iso(a.periodStart), reset_date: iso(a.periodEnd), created_at: iso(a.createdAt),
    };
  }

  viewKey(k: KeyRecord): KeyView {
    const now = this.d.clock.now();
    return {
      key_id: k.id, account_id: k.accountId, name: k.name, prefix: k.prefix,
      created_at: iso(k.createdAt), expires_at: k.expiresAt === null ? null : iso(k.expiresAt),
      revoked_at: k.revokedAt === null ? null : iso(k.revokedAt),
      status: k.revokedAt !== null ? 'revoked' : k.expiresAt !== null && k.expiresAt <= now ? 'expired' : 'active',
    };
  }

  /** A new account on `plan` holding `credits` (default: the plan's monthly allowance), with its first key. */
  createAccount(input: { plan: PlanId; credits?: number | undefined; name?: string | null | undefined }): Effect.Effect<{ account: Account; key: IssuedKey }, ServiceUnavailable | BadRequest | NotFound> {
    const now = this.d.clock.now();
    const credits = input.credits ?? this.d.monthlyCredits(input.plan);
    const period = periodContaining(now, now);
    return Effect.flatMap(
      this.d.store.createAccount({ id: this.newId('acct'), name: input.name ?? null, plan: input.plan, credits, now, periodEnd: period.end }),
      (account) => Effect.map(this.issueKey(account.id, { name: 'default' }), (key) => ({ account, key })),
    );
  }

  /** A new key for an existing account; `expiresAt` (epoch ms) must be in the future. */
  issueKey(accountId: string, opts: { name?: string | null; expiresAt?: number | null } = {}): Effect.Effect<IssuedKey, ServiceUnavailable | NotFound | BadRequest> {
    const now = this.d.clock.now();
    if (opts.expiresAt != null && opts.expiresAt <= now) {
      return Effect.fail(BadRequest.of('expires_at', 'must be in the future'));
    }
    return Effect.flatMap(this.requireAccount(accountId), () => {
      const apiKey = this.newKeyMaterial();
      return Effect.map(
        this.d.store.createKey({
          id: this.newId('key'), accountId, name: opts.name ?? null, prefix: keyPrefix(apiKey),
          hash: this.d.secrets.sha256(apiKey), expiresAt: opts.expiresAt ?? null, now,
        }),
        (record) => ({ apiKey, record }),
      );
    });
  }

  requireAccount(id: string): Effect.Effect<Account, ServiceUnavailable | NotFound> {
    return Effect.flatMap(this.d.store.getAccount(id), (a) =>
      a === undefined ? Effect.fail(new NotFound({ message: `No account ${id}` })) : Effect.succeed(a));
  }

  listAccounts(): Effect.Effect<readonly Account[], ServiceUnavailable> {
    return this.d.store.listAccounts();
  }

  listKeys(accountId: string): Effect.Effect<readonly KeyRecord[], ServiceUnavailable | NotFound> {
    return Effect.flatMap(this.requireAccount(accountId), () => this.d.store.listKeys(accountId));
  }

  revokeKey(keyId: string): Effect.Effect<KeyRecord, ServiceUnavailable | NotFound> {
    return Effect.flatMap(this.d.store.revokeKey(keyId, this.d.clock.now()), (k) =>
      k === undefined ? Effect.fail(new NotFound({ message: `No key ${keyId}` })) : Effect.succeed(k));
  }

  addCredits(accountId: string, amount: number, reason = 'top-up'): Effect.Effect<Account, ServiceUnavailable | NotFound | BadRequest> {
    if (!Number.isInteger(amount) || amount < 1 || amount > MAX_CREDITS) {
      return Effect.fail(BadRequest.of('amount', `must be a whole number of credits from 1 to ${MAX_CREDITS}`));
    }
    return Effect.flatMap(this.d.store.addCredits(accountId, amount, reason, this.d.clock.now()), (a) =>
      a === undefined ? Effect.fail(new NotFound({ message: `No account ${accountId}` })) : Effect.succeed(a));
  }

  setPlan(accountId: string, plan: PlanId): Effect.Effect<Account, ServiceUnavailable | NotFound> {
    return Effect.flatMap(this.d.store.setPlan(accountId, plan), (a) =>
      a === undefined ? Effect.fail(new NotFound({ message: `No account ${accountId}` })) : Effect.succeed(a));
  }

  ledger(accountId: string, limit: number): Effect.Effect<readonly LedgerRow[], ServiceUnavailable | NotFound> {
    return Effect.flatMap(this.requireAccount(accountId), () => this.d.store.ledger(accountId, limit));
  }

  usage(account: Account): Effect.Effect<readonly OperationUsage[], ServiceUnavailable> {
    return this.d.store.usage(account.id, account.periodStart);
  }

  /** The account's current credit figures and period usage, in one store read. */
  currentUsage(accountId: string): Effect.Effect<{ readonly account: Account; readonly usage: readonly OperationUsage[] } | undefined, ServiceUnavailable> {
    return this.d.store.accountUsage(accountId);
  }

  /**
   * The account's webhook signing secret. An account that has none yet gets
   * one now (the same one the first webhook would be signed with), so
   * receivers can be configured before the first job is submitted.
   */
  webhookSecret(jobs: JobStore, accountId: string): Effect.Effect<WebhookSecretView, ServiceUnavailable | NotFound> {
    return Effect.flatMap(this.requireAccount(accountId), () => {
      const now = this.d.clock.now();
      return Effect.flatMap(jobs.ensureWebhookSecret(accountId, this.newWebhookSecret(), now), () =>
        Effect.flatMap(jobs.webhookSecretState(accountId, now), (state) =>
          state === undefined ? Effect.fail(new NotFound({ message: `No account ${accountId}` })) : Effect.succeed(this.viewWebhookSecret(accountId, state))));
    });
  }

  /**
   * Replace the account's webhook secret with a new one. The old one keeps
   * signing deliveries alongside it for `graceSeconds` (0: dropped at once);
   * a rotation during a grace period drops the secret rotated out before.
   */
  rotateWebhookSecret(jobs: JobStore, accountId: string, graceSeconds: number = DEFAULT_WEBHOOK_GRACE_SECONDS): Effect.Effect<WebhookSecretView, ServiceUnavailable | NotFound | BadRequest> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_WEBHOOK_GRACE_SECONDS) {
      return Effect.fail(BadRequest.of('grace_period_seconds', `must be a whole number of seconds from 0 to ${MAX_WEBHOOK_GRACE_SECONDS}`));
    }
    return Effect.flatMap(this.requireAccount(accountId), () => {
      const now = this.d.clock.now();
      const until = graceSeconds === 0 ? undefined : now + graceSeconds * 1000;
      return Effect.map(jobs.rotateWebhookSecret(accountId, this.newWebhookSecret(), now, until), (state) => this.viewWebhookSecret(accountId, state));
    });
  }

  private viewWebhookSecret(accountId: string, s: { secret: string; createdAt: number; previousExpiresAt: number | null }): WebhookSecretView {
    return {
      account_id: accountId, secret: s.secret, created_at: iso(s.createdAt),
      previous_secret_expires_at: s.previousExpiresAt === null ? null : iso(s.previousExpiresAt),
    };
  }
}
