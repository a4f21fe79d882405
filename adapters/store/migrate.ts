/**
 * Versioned schema migrations shared by the account stores: the list format
 * and the one rule both drivers apply at open (skip what is applied, refuse a
 * database written by a newer build rather than run against a schema this
 * code does not know).
 */

export interface Migration {
  /** Strictly increasing, starting at 1. Never renumber or edit a shipped migration: add a new one. */
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Throws when the list itself is malformed (a programming error caught by the tests). */
export function checkMigrationList(migrations: readonly Migration[]): void {
  let previous = 0;
  for (const m of migrations) {
    if (!Number.isInteger(m.version) || m.version <= previous) {
      throw new Error(`migration ${m.version} (${m.name}) is out of order: versions must increase strictly`);
    }
    previous = m.version;
  }
}

/**
 * The migrations still to apply, in order, given the versions the database
 * records. Throws when the database is ahead of this build.
 */
export function pendingMigrations(store: string, migrations: readonly Migration[], applied: readonly number[]): Migration[] {
  checkMigrationList(migrations);
  const known = migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
  const newest = applied.reduce((a, b) => Math.max(a, b), 0);
  if (newest > known) {
    throw new Error(
      `${store} database schema is at version ${newest} but this build knows versions up to ${known}: ` +
        'it was migrated by a newer release; upgrade this one instead of running it against that database',
    );
  }
  const done = new Set(applied);
  return migrations.filter((m) => !done.has(m.version));
}
