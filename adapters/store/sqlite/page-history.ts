/**
 * PageHistory (change tracking, core/page-changes.ts) on the SQLite account
 * store's connection: the latest tracked version of each page per account.
 * The swap reads the previous version and writes the new one in one
 * BEGIN IMMEDIATE transaction, so two scrapes of one page at once (or two
 * processes on one file) each see a different previous version.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { Effect } from 'effect';
import { ServiceUnavailable } from '../../../core/errors.js';
import type { PageHistory, TrackedVersion } from '../../../core/page-changes.js';
import type { SqliteAccountStore } from './index.js';

const unavailable = (e: unknown): ServiceUnavailable =>
  new ServiceUnavailable({ message: `Page history unavailable: ${e instanceof Error ? e.message : String(e)}`, retryAfter: 1 });

export const urlHash = (url: string): string => createHash('sha256').update(url).digest('hex');

export class SqlitePageHistory implements PageHistory {
  private readonly swapTx: (accountId: string, url: string, markdown: string, now: number) => TrackedVersion | undefined;

  constructor(db: Database.Database) {
    const select = db.prepare<[string, string], { markdown: string; scrapedAt: number }>(
      'SELECT markdown, scraped_at AS "scrapedAt" FROM page_versions WHERE account_id = ? AND url_hash = ?');
    const upsert = db.prepare<[string, string, string, string, number]>(
      `INSERT INTO page_versions (account_id, url_hash, url, markdown, scraped_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id, url_hash) DO UPDATE SET url = excluded.url, markdown = excluded.markdown, scraped_at = excluded.scraped_at`);
    this.swapTx = db.transaction((accountId: string, url: string, markdown: string, now: number) => {
      const hash = urlHash(url);
      const previous = select.get(accountId, hash);
      upsert.run(accountId, hash, url, markdown, now);
      return previous === undefined ? undefined : { markdown: previous.markdown, scrapedAt: previous.scrapedAt };
    }).immediate;
  }

  swap(accountId: string, url: string, markdown: string, now: number): Effect.Effect<TrackedVersion | undefined, ServiceUnavailable> {
    try {
      return Effect.succeed(this.swapTx(accountId, url, markdown, now));
    } catch (e) {
      return Effect.fail(unavailable(e));
    }
  }
}

export function sqlitePageHistory(store: SqliteAccountStore): SqlitePageHistory {
  return new SqlitePageHistory(store.shared().db);
}
