/**
 * Account administration: what the admin API and the CLI both do (create
 * accounts and keys, revoke, top up, change plan, describe). Keys are made
 * here, shown once in the result, and only their hash reaches the store.
 */
import { Effect } from 'effect';
import { type Account, availableCredits, type KeyRecord, keyPrefix, type LedgerRow, type OperationUsage, type PlanId, periodContaining } from './accounts.js';
import { BadRequest, NotFound, type ServiceUnavailable } from './errors.js';
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

const iso = (ms: number): string => new Date(ms).toISOString();

export const MAX_CREDITS = 1_000_000_000;

export class AccountAdmin {
  constructor(private readonly d: AdminDeps) {}

  monthlyCredits(plan: PlanId): number {
    return this.d.monthlyCredits(plan);
  }

  newKeyMaterial(): string {
    // 32 random bytes -> 43 base64url characters (core/accounts.ts KEY_PATTERN).
    return `sk_${this.d.secrets.random(32)}`;
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
}
