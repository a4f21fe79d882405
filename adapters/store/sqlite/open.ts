/**
 * Opening and migrating a SQLite file, apart from the account store (whose
 * module loads much more): the search index's writer thread opens its
 * connection through this alone.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { pendingMigrations, type Migration } from '../migrate.js';

/**
 * Opens a SQLite file the way every Scour database is opened (its directory
 * created if needed; a lock wait, WAL, a bounded WAL file), then runs
 * `setUp` on it (its own pragmas, its migrations, the object that owns the
 * connection). The connection is closed again when setUp throws.
 */
export function openSqliteDatabase<T>(path: string, setUp: (db: Database.Database) => T): T {
  const memory = path === ':memory:';
  if (!memory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new Database(path);
  try {
    // busy_timeout first: switching to WAL and migrating both need locks another process may hold.
    db.pragma('busy_timeout = 5000');
    if (!memory) db.pragma('journal_mode = WAL');
    // After a checkpoint the WAL file is cut back to 64 MiB at most, so a burst of writes does not keep it large for good.
    db.pragma('journal_size_limit = 67108864');
    return setUp(db);
  } catch (e) {
    db.close();
    throw e;
  }
}

/** Applies pending migrations in one IMMEDIATE transaction, so two processes opening together take turns. */
export function migrateSqlite(
  db: Database.Database,
  migrations: readonly Migration[],
  /** Another schema in the same file (the search index) keeps its own table. */
  own: { readonly table: string; readonly label: string } = { table: 'schema_migrations', label: 'SQLite' },
): void {
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${own.table} (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`);
    const applied = db.prepare(`SELECT version FROM ${own.table}`).pluck().all() as number[];
    const record = db.prepare(`INSERT INTO ${own.table} (version, name, applied_at) VALUES (?, ?, ?)`);
    for (const m of pendingMigrations(own.label, migrations, applied)) {
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
    }
  }).immediate();
}
