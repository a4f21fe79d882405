/**
 * Hostile input, property-based (issue 16 section 4): bodies drawn from
 * every request schema in GET /v1/openapi.json (search, scrape, bulk scrape,
 * crawl, map, research, the eleven tools, the admin and index-admin API), valid
 * and broken (wrong types, missing and unknown fields, huge strings, deep
 * nesting, unicode edge cases, numbers at and past their limits, non-JSON
 * and msgpack bodies, wrong content types and codings, bad credentials,
 * hostile path parameters), sent to the real server on both HTTP adapters
 * with the embedded configuration. Invariants: never a 5xx, never past the
 * per-request deadline, every status documented for the route, every 4xx
 * the spec's error body (validation_errors with field and message on 400),
 * every 2xx the route's documented response schema, and /healthz still 200
 * after each operation. Valid bodies come from an account with no credits
 * (they stop at 402 after validation, gating and pricing); a few cheap ones
 * from an account with credits run for real against the loopback target.
 *
 * FC_SEED replays a run, FC_RUNS scales it (default 10,000 cases across this
 * file and api-bodies-shared.test.ts); the seed is printed first.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startFuzzed, Tally, type Fuzzed } from './support/harness.js';
import { BODY_OPS, PATH_OPS, bodyCases, cheapCases, pathCases } from './support/operations.js';
import { runCases, runsFor } from './support/run.js';
import { FUZZ_RUNS, FUZZ_SEED, replayHint } from './support/seed.js';

const FILE = 'test/fuzz/api-bodies.test.ts';
/** Of each operation's share: uWS (the default adapter) takes most, node:http the rest. */
const SPLIT = { uws: 0.75, node: 0.25 } as const;
/** Cheap valid cases per operation that run for real (uWS only). */
const CHEAP_SHARE = 0.0008;

console.log(`[fuzz] ${FILE}: seed ${FUZZ_SEED}, ${FUZZ_RUNS} runs; replay with ${replayHint(FILE)}`);

describe.each(['uws', 'node'] as const)('hostile request bodies, embedded, over %s', (adapter) => {
  let f: Fuzzed;
  let site: TargetSite;
  const tally = new Tally();
  let t0 = 0;

  beforeAll(async () => {
    t0 = performance.now();
    site = await startTargetSite();
    f = await startFuzzed('embedded', adapter);
  });

  afterAll(async () => {
    console.log(`[fuzz] ${adapter}, embedded: ${tally.total()} cases in ${((performance.now() - t0) / 1000).toFixed(1)} s (seed ${FUZZ_SEED})\n${tally.table()}`);
    await f?.running.stop();
    await site?.close();
  });

  for (const op of BODY_OPS) {
    const runs = runsFor(FUZZ_RUNS, op.share, SPLIT[adapter]);
    it(`${op.method} ${op.template}: ${runs} cases, no 5xx, documented answers`, async () => {
      await runCases(f, op.name, bodyCases(f, op, site.url), runs, tally);
    }, 120_000 + runs * 500);
  }

  for (const op of PATH_OPS) {
    const runs = runsFor(FUZZ_RUNS, op.share, SPLIT[adapter]);
    it(`${op.method} ${op.template}: ${runs} hostile paths and credentials`, async () => {
      await runCases(f, op.name, pathCases(f, op), runs, tally, (c, status) => {
        // A file route never serves what a hostile name points at.
        if (op.template.includes('{file}') && status < 400) throw new Error(`${c.path} answered ${status}`);
      });
    }, 120_000 + runs * 500);
  }

  if (adapter === 'uws') {
    for (const op of BODY_OPS.filter((o) => o.cheap !== undefined)) {
      const runs = runsFor(FUZZ_RUNS, CHEAP_SHARE, 1);
      it(`${op.method} ${op.template}: ${runs} cheap valid bodies run for real`, async () => {
        await runCases(f, `${op.name} (real work)`, cheapCases(f, op, site.url), runs, tally);
      }, 120_000 + runs * 10_000);
    }
  }
});
