/**
 * Research runs its analysers as synchronous CPU work on the event loop;
 * between two analysers the loop takes a full turn (I/O and timers), so one
 * research request holds up the other requests in flight for at most one
 * analyser, not for all of them. Shown deterministically: the first probe
 * analyser schedules a setImmediate callback, and the second must run after
 * it (without the turn, the second would run in the same microtask chain).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyserPlugin } from '../../core/research.js';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { FULL_RESEARCH, researchCorpus } from '../fixtures/research-corpus.js';

const ADMIN = 'research-yield-admin-token-0123';

describe('research analysers leave the event loop a turn between them', () => {
  let s: Running;
  let key: string;
  const seen: string[] = [];
  let turnBetween: boolean | undefined;
  const probe = (order: number, id: string, run: () => void): AnalyserPlugin => ({
    kind: 'analyser', name: `analyser-${id.replace('_', '-')}`, id, order, method: `${id} probe`,
    applies: () => true,
    analyse: () => { run(); return { fields: {} }; },
  });

  beforeAll(async () => {
    let immediateRan = false;
    s = await startScour('uws', { adminToken: ADMIN, searchProviders: ['local'] }, {
      plugins: [
        // Orders far below and above the built-in analysers', so the two run first and last.
        probe(-1000, 'probe_first', () => {
          seen.push('first');
          immediateRan = false;
          setImmediate(() => { immediateRan = true; });
        }),
        probe(1000, 'probe_last', () => {
          seen.push('last');
          turnBetween = immediateRan;
        }),
      ],
    });
    const acct = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 100 } });
    expect(acct.status, acct.text).toBe(201);
    key = acct.body.api_key;
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: researchCorpus(Date.now()) } });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('runs every analyser, and the event loop turns between the first and the last', async () => {
    const r = await call(`${s.url}/v1/research`, 'POST', { auth: `Bearer ${key}`, body: FULL_RESEARCH });
    expect(r.status, r.text).toBe(200);
    expect(seen).toEqual(['first', 'last']);
    expect(turnBetween).toBe(true);
  });
});
