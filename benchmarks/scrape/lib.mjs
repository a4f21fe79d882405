// Small helpers the scrape benchmark's separate-process parts share.
import { createServer } from 'node:net';

/** An integer setting from `env`, at least `min`; anything else stops the bench with the setting named. */
export const int = (env, name, fallback, min = 0) => {
  const v = Number(env[name] ?? fallback);
  if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be an integer >= ${min}`);
  return v;
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A loopback port free at the time of asking. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
