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
  {
    version: 2,
    name: 'bulk-jobs-webhooks',
    sql: `
      CREATE TABLE bulk_jobs (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        request jsonb NOT NULL,
        callback_url text,
        price_per_url bigint NOT NULL CHECK (price_per_url >= 0),
        total integer NOT NULL,
        worker_id text,
        lease_until bigint,
        created_at bigint NOT NULL,
        started_at bigint,
        finished_at bigint
      );
      CREATE INDEX bulk_jobs_account ON bulk_jobs(account_id, created_at);
      -- The claim query scans only unfinished jobs, oldest first.
      CREATE INDEX bulk_jobs_claim ON bulk_jobs(created_at, id COLLATE "C") WHERE status IN ('queued', 'running');

      CREATE TABLE bulk_items (
        job_id text NOT NULL REFERENCES bulk_jobs(id) ON DELETE CASCADE,
        idx integer NOT NULL,
        url text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        result jsonb,
        error jsonb,
        worker_id text,
        finished_at bigint,
        PRIMARY KEY (job_id, idx)
      );

      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        job_id text NOT NULL REFERENCES bulk_jobs(id) ON DELETE CASCADE,
        event text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at bigint,
        lease_until bigint,
        created_at bigint NOT NULL
      );
      CREATE INDEX webhook_deliveries_job ON webhook_deliveries(job_id, created_at);
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_leased ON webhook_deliveries(lease_until) WHERE status = 'sending';

      CREATE TABLE delivery_attempts (
        delivery_id text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        ok boolean NOT NULL,
        response_status integer,
        error text,
        attempted_at bigint NOT NULL,
        next_attempt_at bigint,
        PRIMARY KEY (delivery_id, attempt)
      );

      CREATE TABLE account_webhook_secrets (
        account_id text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        secret text NOT NULL,
        created_at bigint NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'webhook-secret-rotation',
    sql: `
      -- Rotation with a grace period: the rotated-out secret keeps signing until
      -- previous_expires_at. created_at stays when the row's first secret was
      -- made; rotated_at is when the current one replaced another (NULL: never).
      ALTER TABLE account_webhook_secrets
        ADD COLUMN previous_secret text,
        ADD COLUMN previous_expires_at bigint,
        ADD COLUMN rotated_at bigint,
        ADD CONSTRAINT account_webhook_secrets_previous CHECK ((previous_secret IS NULL) = (previous_expires_at IS NULL));
    `,
  },
  {
    version: 4,
    name: 'job-kinds-crawl-frontier',
    sql: `
      -- A second kind of job (crawl) on the same runtime. kind picks the executor;
      -- stop_reason says why a job ended early on purpose (or that a stop was asked for).
      ALTER TABLE bulk_jobs
        ADD COLUMN kind text NOT NULL DEFAULT 'bulk_scrape',
        ADD COLUMN stop_reason text;

      -- A crawl's items are its frontier: depth (NULL for bulk items), a 'skipped'
      -- status with its reason, and one row per URL within a crawl.
      ALTER TABLE bulk_items
        DROP CONSTRAINT bulk_items_status_check,
        ADD CONSTRAINT bulk_items_status_check CHECK (status IN ('pending', 'completed', 'failed', 'skipped')),
        ADD COLUMN depth integer,
        ADD COLUMN reason text;
      CREATE UNIQUE INDEX bulk_items_frontier ON bulk_items(job_id, url) WHERE depth IS NOT NULL;
      CREATE INDEX bulk_items_status ON bulk_items(job_id, status);
    `,
  },
  {
    version: 5,
    name: 'job-progress',
    sql: `
      -- A third kind of job (research; kind has no CHECK, so nothing to widen) and
      -- the progress its worker records while it runs, and when it was written;
      -- kept after the job ends. JSON as text, not jsonb: written often and read
      -- whole, it needs no parsing on write, and jsonb would refuse a \\u0000 in it.
      ALTER TABLE bulk_jobs
        ADD COLUMN progress text,
        ADD COLUMN progress_at bigint;
    `,
  },
  {
    version: 6,
    name: 'page-versions',
    sql: `
      -- Change tracking (track_changes): the latest tracked Markdown of each page, per
      -- account. Pages are found by the SHA-256 of their canonical URL (a URL may be
      -- 8 kB, past what a btree entry holds); the URL is kept beside it for inspection.
      CREATE TABLE page_versions (
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        url_hash text NOT NULL,
        url text NOT NULL,
        markdown text NOT NULL,
        scraped_at bigint NOT NULL,
        PRIMARY KEY (account_id, url_hash)
      );
    `,
  },
];
