// Preloaded (node --import) into a Scour server by bench:http's "group commit
// off" billable row, for a same-run comparison: every PostgreSQL account
// store the server opens sends each reserve and settle as its own statement
// (adapters/store/postgres/batch.ts is bypassed), as before group commit.
import { PostgresAccountStore } from '../../../dist/adapters/store/postgres/index.js';

const reserve = PostgresAccountStore.prototype.reserve;
PostgresAccountStore.prototype.reserve = function (hold) {
  this.groupCommit = false;
  return reserve.call(this, hold);
};
