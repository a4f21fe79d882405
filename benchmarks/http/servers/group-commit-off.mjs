// Preloaded (node --import) into a Scour server by bench:http's "group commit
// off" rows, for a same-run comparison: every PostgreSQL account store the
// server opens sends each reserve, settle, charge and usage read as its own
// statement (adapters/store/postgres/batch.ts is bypassed), as before group
// commit.
import { PostgresAccountStore } from '../../../dist/adapters/store/postgres/index.js';

for (const method of ['reserve', 'charge', 'accountUsage']) {
  const original = PostgresAccountStore.prototype[method];
  PostgresAccountStore.prototype[method] = function (...args) {
    this.groupCommit = false;
    return original.apply(this, args);
  };
}
