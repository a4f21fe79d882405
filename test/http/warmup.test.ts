/**
 * SCOUR_WARMUP (PluginBase.warm): first-use costs paid at boot, before the
 * server listens, so the first render_js or research request does not stall
 * the event loop for every request in flight. The built-in warm-ups (the
 * browser driver's modules, the default citation style) run; a plugin's
 * warm-up runs once, before createScour resolves; one that fails is logged
 * and skipped; warmup: false runs none.
 */
import { describe, expect, it } from 'vitest';
import type { ExtractionPool } from '../../adapters/extraction-pool/pool.js';
import type { OperationPlugin, PluginHost } from '../../core/plugin.js';
import { startScour } from '../support/server.js';

let host: PluginHost | undefined;
function probe(warm: () => void | Promise<void>): OperationPlugin {
  return { kind: 'operation', name: 'operation-warm-probe', routes: (h) => { host = h; return []; }, warm };
}

const warmLine = (logs: readonly string[]) => logs.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg === 'warm-up done');

describe('warm-up at boot', () => {
  it('runs every plugin warm-up once before the server is handed out, the built-in ones included', async () => {
    let calls = 0;
    let listeningDuringWarm: boolean | undefined;
    let url: string | undefined;
    const s = await startScour('uws', { warmup: true, extractionWorkers: 2 }, {
      plugins: [probe(async () => {
        calls++;
        // createScour has not returned: nothing can have listened yet.
        listeningDuringWarm = url !== undefined;
      })],
    });
    url = s.url;
    try {
      expect(calls).toBe(1);
      expect(listeningDuringWarm).toBe(false);
      const line = warmLine(s.logs);
      expect(line).toBeDefined();
      const names = (line!.warmed as { part: string; ms: number }[]).map((w) => w.part);
      expect(names).toEqual(expect.arrayContaining(['fetcher-browser', 'operation-research', 'operation-warm-probe', 'extraction-pool', 'search-index']));
      for (const w of line!.warmed as { ms: number }[]) expect(Number.isInteger(w.ms) && w.ms >= 0).toBe(true);
      // The extraction workers are up before the first page.
      const stats = (host!.extraction as ExtractionPool).stats();
      expect(stats.workers).toBe(2);
      expect(stats.ready).toBe(2);
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('a warm-up that throws is logged and skipped; the server still starts and serves', async () => {
    const s = await startScour('node', { warmup: true }, { plugins: [probe(() => { throw new Error('cannot warm'); })] });
    try {
      const failed = s.logs.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg?.startsWith('warm-up failed'));
      expect(failed?.part).toBe('operation-warm-probe');
      expect(failed?.err).toContain('cannot warm');
      const names = (warmLine(s.logs)!.warmed as { part: string }[]).map((w) => w.part);
      expect(names).not.toContain('operation-warm-probe');
      expect(names).toContain('operation-research');
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('warmup: false runs none', async () => {
    let calls = 0;
    const s = await startScour('uws', { warmup: false, extractionWorkers: 2 }, { plugins: [probe(() => { calls++; })] });
    try {
      expect(calls).toBe(0);
      // The workers start with the first page that needs one, not at boot.
      expect((host!.extraction as ExtractionPool).stats().ready).toBe(0);
      expect(warmLine(s.logs)).toBeUndefined();
    } finally {
      await s.stop();
    }
  });
});
