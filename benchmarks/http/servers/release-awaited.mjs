// Preloaded (node --import) into a Scour server by bench:http's "release
// awaited" billable row: the concurrency slot's release waits for Redis's
// reply before the response is written, as before the shared hot path, part
// 3; everything else as built (searches charged after their work). With the
// plain row and the "before" row (billing-before.mjs), in the same rounds,
// it tells the two changes apart.
import { RedisRateLimiter } from '../../../dist/adapters/limiter/redis/index.js';

const release = RedisRateLimiter.prototype.release;
RedisRateLimiter.prototype.release = function (...args) {
  this.awaitRelease = true;
  return release.apply(this, args);
};
