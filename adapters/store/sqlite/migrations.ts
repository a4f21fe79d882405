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
  {
    version: 2,
    name: 'bulk-jobs-webhooks',
    sql: `
      CREATE TABLE bulk_jobs (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        request TEXT NOT NULL,
        callback_url TEXT,
        price_per_url INTEGER NOT NULL CHECK (price_per_url >= 0),
        total INTEGER NOT NULL,
        worker_id TEXT,
        lease_until INTEGER,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        finished_at INTEGER
      ) STRICT;
      CREATE INDEX bulk_jobs_account ON bulk_jobs(account_id, created_at);
      -- The claim query scans only unfinished jobs, oldest first.
      CREATE INDEX bulk_jobs_claim ON bulk_jobs(created_at, id) WHERE status IN ('queued', 'running');

      CREATE TABLE bulk_items (
        job_id TEXT NOT NULL REFERENCES bulk_jobs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        url TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        result TEXT,
        error TEXT,
        worker_id TEXT,
        finished_at INTEGER,
        PRIMARY KEY (job_id, idx)
      ) STRICT;

      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL REFERENCES bulk_jobs(id) ON DELETE CASCADE,
        event TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER,
        lease_until INTEGER,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX webhook_deliveries_job ON webhook_deliveries(job_id, created_at);
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_leased ON webhook_deliveries(lease_until) WHERE status = 'sending';

      CREATE TABLE delivery_attempts (
        delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        attempt INTEGER NOT NULL,
        ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
        response_status INTEGER,
        error TEXT,
        attempted_at INTEGER NOT NULL,
        next_attempt_at INTEGER,
        PRIMARY KEY (delivery_id, attempt)
      ) STRICT;

      CREATE TABLE account_webhook_secrets (
        account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        secret TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 3,
    name: 'webhook-secret-rotation',
    sql: `
      -- Rotation with a grace period: the rotated-out secret keeps signing until
      -- previous_expires_at. created_at stays when the row's first secret was
      -- made; rotated_at is when the current one replaced another (NULL: never).
      ALTER TABLE account_webhook_secrets ADD COLUMN previous_secret TEXT;
      ALTER TABLE account_webhook_secrets ADD COLUMN previous_expires_at INTEGER
        CHECK ((previous_secret IS NULL) = (previous_expires_at IS NULL));
      ALTER TABLE account_webhook_secrets ADD COLUMN rotated_at INTEGER;
    `,
  },
  {
    version: 4,
    name: 'job-kinds-crawl-frontier',
    sql: `
      -- A second kind of job (crawl) on the same runtime. kind picks the executor;
      -- stop_reason says why a job ended early on purpose (or that a stop was asked for).
      ALTER TABLE bulk_jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'bulk_scrape';
      ALTER TABLE bulk_jobs ADD COLUMN stop_reason TEXT;

      -- A crawl's items are its frontier: depth (NULL for bulk items), a 'skipped'
      -- status with its reason, and one row per URL within a crawl. SQLite cannot
      -- alter a CHECK, so the table is rebuilt (nothing references it).
      CREATE TABLE bulk_items_v4 (
        job_id TEXT NOT NULL REFERENCES bulk_jobs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        url TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed', 'skipped')),
        attempts INTEGER NOT NULL DEFAULT 0,
        result TEXT,
        error TEXT,
        worker_id TEXT,
        finished_at INTEGER,
        depth INTEGER,
        reason TEXT,
        PRIMARY KEY (job_id, idx)
      ) STRICT;
      INSERT INTO bulk_items_v4 (job_id, idx, url, status, attempts, result, error, worker_id, finished_at)
        SELECT job_id, idx, url, status, attempts, result, error, worker_id, finished_at FROM bulk_items;
      DROP TABLE bulk_items;
      ALTER TABLE bulk_items_v4 RENAME TO bulk_items;
      CREATE UNIQUE INDEX bulk_items_frontier ON bulk_items(job_id, url) WHERE depth IS NOT NULL;
      CREATE INDEX bulk_items_status ON bulk_items(job_id, status);
    `,
  },
  {
    version: 5,
    name: 'job-progress',
    sql: `
      -- A third kind of job (research; kind has no CHECK, so nothing to widen) and
      -- the progress its worker records while it runs: JSON text (at most 64 KiB,
      -- checked by the store) and when it was written. Kept after the job ends.
      ALTER TABLE bulk_jobs ADD COLUMN progress TEXT;
      ALTER TABLE bulk_jobs ADD COLUMN progress_at INTEGER;
    `,
  },
  {
    version: 6,
    name: 'page-versions',
    sql: `
      -- Change tracking (track_changes): the latest tracked Markdown of each page, per
      -- account. Pages are found by the SHA-256 of their canonical URL (a URL may be
      -- 8 kB); the URL is kept beside it for inspection.
      CREATE TABLE page_versions (
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        url_hash TEXT NOT NULL,
        url TEXT NOT NULL,
        markdown TEXT NOT NULL,
        scraped_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, url_hash)
      ) STRICT;
    `,
  },
];
