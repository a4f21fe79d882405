/**
 * PageHistory (change tracking, core/page-changes.ts) in PostgreSQL: the
 * latest tracked version of each page per account. The swap is an UPDATE
 * that answers the row as it was (its subquery locks it first, so two
 * swaps of one page take turns and each sees the other's version), or,
 * for a page not tracked yet, an INSERT; when another process inserted the
 * page meanwhile, the UPDATE is tried again.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { Effect } from 'effect';
import type { ServiceUnavailable } from '../../../core/errors.js';
import type { PageHistory, TrackedVersion } from '../../../core/page-changes.js';
import type { PostgresAccountStore } from './index.js';

const SWAP = `UPDATE page_versions p SET url = $3, markdown = $4, scraped_at = $5
  FROM (SELECT account_id, url_hash, markdown, scraped_at FROM page_versions WHERE account_id = $1 AND url_hash = $2 FOR UPDATE) old
  WHERE p.account_id = old.account_id AND p.url_hash = old.url_hash
  RETURNING old.markdown, old.scraped_at AS "scrapedAt"`;
const INSERT = `INSERT INTO page_versions (account_id, url_hash, url, markdown, scraped_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (account_id, url_hash) DO NOTHING RETURNING 1 AS inserted`;

export class PostgresPageHistory implements PageHistory {
  constructor(private readonly pool: pg.Pool, private readonly unavailable: (e: unknown) => ServiceUnavailable) {}

  swap(accountId: string, url: string, markdown: string, now: number): Effect.Effect<TrackedVersion | undefined, ServiceUnavailable> {
    const values = [accountId, createHash('sha256').update(url).digest('hex'), url, markdown, now];
    return Effect.tryPromise({
      try: async () => {
        for (;;) {
          const updated = await this.pool.query<{ markdown: string; scrapedAt: string | number }>({ name: 'scour_pages_swap', text: SWAP, values });
          const old = updated.rows[0];
          if (old !== undefined) return { markdown: old.markdown, scrapedAt: Number(old.scrapedAt) };
          const inserted = await this.pool.query({ name: 'scour_pages_insert', text: INSERT, values });
          if (inserted.rowCount === 1) return undefined;
        }
      },
      catch: (e) => this.unavailable(e),
    });
  }
}

export function postgresPageHistory(store: PostgresAccountStore): PostgresPageHistory {
  const { pool, unavailable } = store.shared();
  return new PostgresPageHistory(pool, unavailable);
}
