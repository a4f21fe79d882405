/** One property per operation: draw cases, send each to the real server, check the invariants, count the answers. */
import fc from 'fast-check';
import { check, healthy, type Case, type Fuzzed, type Tally } from './harness.js';
import { seedFor } from './seed.js';

export async function runCases(
  f: Fuzzed, name: string, arb: fc.Arbitrary<Case & { overLimit: boolean }>, numRuns: number, tally: Tally,
  expect?: (c: Case, status: number, body: unknown) => void,
): Promise<void> {
  const seed = seedFor(name);
  const result = await fc.check(
    fc.asyncProperty(arb, async (c) => {
      const o = await check(f, c, { bodyOverLimit: c.overLimit });
      tally.add(name, o.status);
      if (process.env.FUZZ_DEBUG && (c as { kind?: string }).kind !== 'broken' && o.status === 400) {
        console.log(`[fuzz debug] ${c.label}: ${JSON.stringify((o.body as { validation_errors?: unknown }).validation_errors).slice(0, 400)}`);
      }
      expect?.(c, o.status, o.body);
    }),
    { seed, numRuns, endOnFailure: false },
  );
  if (result.failed) {
    // The failing case itself, shrunk: the invariant's message names the request; the seed and path replay it.
    const cause = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(`${name}: ${cause}\n${fc.defaultReportMessage(result) ?? 'property failed'}\n(property seed ${seed})`);
  }
  await healthy(f.url);
}

/** Cases for an operation in this pass: its share of FC_RUNS, at least one. */
export const runsFor = (total: number, share: number, factor: number): number => Math.max(1, Math.round(total * share * factor));
