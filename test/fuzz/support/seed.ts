/**
 * Seed and size of the fuzz suites. Every run prints its seed. By default
 * the seed is fixed (DEFAULT_SEED), so CI draws the same cases every run and
 * a red run is a regression, not luck; FC_SEED=<integer> replays a given
 * run, FC_SEED=random draws a fresh seed (to explore; it is printed, so a
 * failure replays with FC_SEED=<that seed>). FC_RUNS scales the number of
 * cases (default 10,000 across the body routes; the shares per operation
 * stay the same).
 */
export const DEFAULT_SEED = 1604;

export const FUZZ_SEED: number = (() => {
  const raw = process.env.FC_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  if (raw === 'random') return (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`FC_SEED must be an integer or "random", got ${JSON.stringify(raw)}`);
  return n | 0;
})();

export const FUZZ_RUNS: number = (() => {
  const raw = process.env.FC_RUNS;
  if (raw === undefined || raw === '') return 10_000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`FC_RUNS must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
})();

/** A seed per property, derived from the run's seed, so one property can be replayed alone and adding one does not shift the others. */
export function seedFor(name: string): number {
  let h = FUZZ_SEED ^ 0x9e3779b9;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** How to replay: printed once per file and in every failure. */
export const replayHint = (file: string): string => `FC_SEED=${FUZZ_SEED} FC_RUNS=${FUZZ_RUNS} npx vitest run ${file}`;
