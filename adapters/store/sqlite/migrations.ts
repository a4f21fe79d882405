/**
 * SQLite schema of the account store, as ordered migrations. Tables are
 * STRICT so a fractional credit or a string time is refused instead of
 * silently stored; the CHECKs are the last line of defence for the money
 * invariants (0 <= held <= balance) the statements already keep.
 */
import type { Migration } from '../migrate.js';

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts-keys-credits',
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT,
        plan TEXT NOT NULL,
        balance INTEGER NOT NULL CHECK (balance >= 0),
        held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0 AND held <= balance),
        period_start INTEGER NOT NULL,
        period_end INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT,
        prefix TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
      ) STRICT;
      CREATE INDEX api_keys_account ON api_keys(account_id);

      CREATE TABLE credit_holds (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        operation TEXT NOT NULL,
        credits INTEGER NOT NULL CHECK (credits >= 0),
        request_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX credit_holds_expires ON credit_holds(expires_at);

      CREATE TABLE ledger (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        operation TEXT NOT NULL,
        credits INTEGER NOT NULL CHECK (credits >= 0),
        request_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX ledger_account_time ON ledger(account_id, created_at);

      CREATE TABLE usage (
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period_start INTEGER NOT NULL,
        operation TEXT NOT NULL,
        credits INTEGER NOT NULL,
        requests INTEGER NOT NULL,
        PRIMARY KEY (account_id, period_start, operation)
      ) STRICT;

      CREATE TABLE credit_grants (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        amount INTEGER NOT NULL CHECK (amount > 0),
        reason TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX credit_grants_account ON credit_grants(account_id);
    `,
  },
];
