/**
 * Accounts, API keys and credits: the domain types the store port speaks,
 * and the pure rules around them (key format, bearer parsing, the
 * monthly periods). No I/O: hashing and randomness come through ports.
 */

export type PlanId = 'free' | 'starter' | 'builder' | 'unicorn';
export const PLAN_IDS: readonly PlanId[] = ['free', 'starter', 'builder', 'unicorn'];

/** An account as stored. Credits are whole numbers. */
export interface Account {
  readonly id: string;
  readonly name: string | null;
  readonly plan: PlanId;
  /** Credits on the account, including those its open holds set aside. */
  readonly balance: number;
  /** Credits set aside by open holds (requests in flight: not yet settled or released). */
  readonly held: number;
  /** Epoch ms: the current period, [periodStart, periodEnd). */
  readonly periodStart: number;
  readonly periodEnd: number;
  /** Epoch ms: the anchor of every period (the account's creation). */
  readonly createdAt: number;
}

/** Credits the account can spend now. */
export const availableCredits = (a: Pick<Account, 'balance' | 'held'>): number => Math.max(0, a.balance - a.held);

/** An API key as stored: never the key itself, only its hash and a short visible prefix. */
export interface KeyRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string | null;
  /** The first characters of the key, shown in listings so a user can tell keys apart. */
  readonly prefix: string;
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
}

/** What the auth stage needs from one lookup by key hash: the key and its account's row, in one read. */
export interface KeyMatch {
  readonly keyId: string;
  /** Hex SHA-256 of the key, as stored (compared again in constant time). */
  readonly keyHash: string;
  readonly accountId: string;
  readonly accountName: string | null;
  readonly plan: PlanId;
  readonly balance: number;
  readonly held: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  readonly periodStart: number;
  readonly periodEnd: number;
  /** The account's creation (the anchor of its periods). */
  readonly createdAt: number;
}

/** One charge: the ledger row written when work succeeds. */
export interface LedgerRow {
  readonly id: string;
  readonly accountId: string;
  readonly operation: string;
  readonly credits: number;
  readonly requestId: string;
  readonly createdAt: number;
}

/** Credits used in one period, by operation. */
export interface OperationUsage {
  readonly operation: string;
  readonly credits: number;
  readonly requests: number;
}

export type ReserveResult =
  | { readonly ok: true; readonly available: number }
  | { readonly ok: false; readonly available: number };

/**
 * A charge without a hold (AccountStore.charge): made only when the account
 * covers it; `available` is what the account can spend after the charge,
 * or, when refused, what it had.
 */
export type ChargeResult = ReserveResult;

export interface SettleResult {
  /** Credits charged (0 when the hold had already expired and been swept). */
  readonly charged: number;
  /** Credits the account can spend after the charge. */
  readonly available: number;
}

/**
 * Key format: `sk_` then 43 base64url characters (32 random bytes, 256
 * bits). The prefix kept in the store is `sk_` plus the next 8 characters.
 */
export const KEY_PATTERN = /^sk_[A-Za-z0-9_-]{43}$/;
export const KEY_PREFIX_LENGTH = 11;
export const keyPrefix = (key: string): string => key.slice(0, KEY_PREFIX_LENGTH);

/** RFC 6750 token68 characters. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined when
 * the header is missing or malformed (wrong scheme, no token, spaces or
 * characters a bearer token cannot hold).
 */
export function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined || header.length > 4096) return undefined;
  if (header.length < 8 || header.charCodeAt(6) !== 32) return undefined;
  if (header.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const token = header.slice(7).trim();
  return token.length > 0 && TOKEN68.test(token) ? token : undefined;
}

const DAY = 86_400_000;

/** `anchor` plus `months` calendar months (UTC), with the day clamped to the month's length (Jan 31 + 1 month = Feb 28/29). */
export function addMonths(anchor: number, months: number): number {
  const d = new Date(anchor);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const targetYear = y + Math.floor(m / 12);
  const targetMonth = ((m % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return Date.UTC(targetYear, targetMonth, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

/** The monthly period, anchored at `anchor`, that contains `now`. */
export function periodContaining(anchor: number, now: number): { start: number; end: number } {
  if (now < anchor) return { start: anchor, end: addMonths(anchor, 1) };
  // Estimate the month count, then correct (months vary in length).
  let n = Math.max(0, Math.floor((now - anchor) / (31 * DAY)));
  while (addMonths(anchor, n + 1) <= now) n++;
  while (n > 0 && addMonths(anchor, n) > now) n--;
  return { start: addMonths(anchor, n), end: addMonths(anchor, n + 1) };
}

/** Whether a key is usable at `now`. */
export function keyState(k: Pick<KeyMatch, 'revokedAt' | 'expiresAt'>, now: number): 'active' | 'revoked' | 'expired' {
  if (k.revokedAt !== null) return 'revoked';
  if (k.expiresAt !== null && k.expiresAt <= now) return 'expired';
  return 'active';
}
