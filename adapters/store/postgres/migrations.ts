/**
 * PostgreSQL schema of the account store, as ordered migrations. Same
 * tables and meaning as the SQLite schema; times and credits are bigint
 * (epoch ms, whole credits). The CHECKs are the last line of defence for
 * the money invariants (0 <= held <= balance) the statements already keep.
 */
import type { Migration } from '../migrate.js';

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts-keys-credits',
    sql: `
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        name text,
        plan text NOT NULL,
        balance bigint NOT NULL CHECK (balance >= 0),
        held bigint NOT NULL DEFAULT 0 CHECK (held >= 0 AND held <= balance),
        period_start bigint NOT NULL,
        period_end bigint NOT NULL,
        created_at bigint NOT NULL
      );

      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name text,
        prefix text NOT NULL,
        hash text NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        expires_at bigint,
        revoked_at bigint
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);

      CREATE TABLE credit_holds (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        operation text NOT NULL,
        credits bigint NOT NULL CHECK (credits >= 0),
        request_id text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX credit_holds_expires ON credit_holds(expires_at);

      -- seq orders rows written in the same millisecond (SQLite uses its rowid).
      CREATE TABLE ledger (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        operation text NOT NULL,
        credits bigint NOT NULL CHECK (credits >= 0),
        request_id text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX ledger_account_time ON ledger(account_id, created_at);

      CREATE TABLE usage (
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period_start bigint NOT NULL,
        operation text NOT NULL,
        credits bigint NOT NULL,
        requests bigint NOT NULL,
        PRIMARY KEY (account_id, period_start, operation)
      );

      CREATE TABLE credit_grants (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        amount bigint NOT NULL CHECK (amount > 0),
        reason text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX credit_grants_account ON credit_grants(account_id);
    `,
  },
];
