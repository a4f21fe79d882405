// Preloaded (node --import) into a Scour server by bench:http's "collections
// unshared" billable row: every search looks its collections up with its own
// statement, as before the shared hot path, part 3 (concurrent lookups of the
// same collections share one); everything else as built.
import { PostgresIndex } from '../../../dist/adapters/search-index/postgres.js';

PostgresIndex.prototype.collections = function (names) {
  return this.readCollections(names);
};
