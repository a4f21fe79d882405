/**
 * The hostile-body fuzz of api-bodies.test.ts again, on the shared
 * configuration (a fresh PostgreSQL database and Redis prefix): the admin
 * API (accounts, keys, credits, plans, webhook secrets, the index) and one
 * operation (search), whose stores differ from the embedded ones. Same
 * invariants, same seed handling (FC_SEED, FC_RUNS).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startFuzzed, Tally, type Fuzzed } from './support/harness.js';
import { BODY_OPS, PATH_OPS, bodyCases, cheapCases, pathCases } from './support/operations.js';
import { runCases, runsFor } from './support/run.js';
import { FUZZ_RUNS, FUZZ_SEED, replayHint } from './support/seed.js';

const FILE = 'test/fuzz/api-bodies-shared.test.ts';
/** Of each covered operation's share, on top of the embedded passes. */
const FACTOR = 0.4;
const covered = (template: string) => template.startsWith('/admin/') || template === '/v1/search';

console.log(`[fuzz] ${FILE}: seed ${FUZZ_SEED}, ${FUZZ_RUNS} runs; replay with ${replayHint(FILE)}`);

describe('hostile request bodies, shared (PostgreSQL + Redis), over uws', () => {
  let f: Fuzzed;
  let site: TargetSite;
  const tally = new Tally();
  let t0 = 0;

  beforeAll(async () => {
    t0 = performance.now();
    site = await startTargetSite();
    f = await startFuzzed('shared', 'uws');
  });

  afterAll(async () => {
    console.log(`[fuzz] uws, shared: ${tally.total()} cases in ${((performance.now() - t0) / 1000).toFixed(1)} s (seed ${FUZZ_SEED})\n${tally.table()}`);
    await f?.running.stop();
    await site?.close();
  });

  for (const op of BODY_OPS.filter((o) => covered(o.template))) {
    const runs = runsFor(FUZZ_RUNS, op.share, FACTOR);
    it(`${op.method} ${op.template}: ${runs} cases, no 5xx, documented answers`, async () => {
      await runCases(f, op.name, bodyCases(f, op, site.url), runs, tally);
      await runCases(f, `${op.name} (real work)`, cheapCases(f, op, site.url), 2, tally);
    }, 120_000 + runs * 500);
  }

  for (const op of PATH_OPS.filter((o) => covered(o.template))) {
    const runs = runsFor(FUZZ_RUNS, op.share, FACTOR);
    it(`${op.method} ${op.template}: ${runs} hostile paths and credentials`, async () => {
      await runCases(f, op.name, pathCases(f, op), runs, tally);
    }, 120_000 + runs * 500);
  }
});
