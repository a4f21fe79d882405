// Preloaded (node --import) into a Scour server by bench:http's "before"
// billable rows, for a same-run comparison with the shared hot path, part 3
// (README-shared-hot-path-3.md): every billable request takes a credit hold
// before its work and settles it after (the reserve stage's chargeAfter
// option is ignored) and every search looks its
// collections up with its own statement, as before that pass. Group commit
// stays on.
import { accountStageSwitches } from '../../../dist/core/stages/account.js';
import { PostgresIndex } from '../../../dist/adapters/search-index/postgres.js';

accountStageSwitches.chargeAfter = false;
PostgresIndex.prototype.collections = function (names) {
  return this.readCollections(names);
};
