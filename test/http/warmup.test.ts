/**
 * SCOUR_WARMUP (PluginBase.warm): first-use costs paid at boot, before the
 * server listens, so the first render_js or research request does not stall
 * the event loop for every request in flight. The built-in warm-ups (the
 * browser driver's modules, the default citation style) run; a plugin's
 * warm-up runs once, before createScour resolves; one that fails is logged
 * and skipped; warmup: false runs none.
 */
import { describe, expect, it } from 'vitest';
import type { OperationPlugin } from '../../core/plugin.js';
import { startScour } from '../support/server.js';

function probe(warm: () => void | Promise<void>): OperationPlugin {
  return { kind: 'operation', name: 'operation-warm-probe', routes: () => [], warm };
}

const warmLine = (logs: readonly string[]) => logs.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg === 'warm-up done');

describe('warm-up at boot', () => {
  it('runs every plugin warm-up once before the server is handed out, the built-in ones included', async () => {
    let calls = 0;
    let listeningDuringWarm: boolean | undefined;
    let url: string | undefined;
    const s = await startScour('uws', { warmup: true }, {
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
      const names = (line!.warmed as { plugin: string; ms: number }[]).map((w) => w.plugin);
      expect(names).toEqual(expect.arrayContaining(['fetcher-browser', 'operation-research', 'operation-warm-probe']));
      for (const w of line!.warmed as { ms: number }[]) expect(Number.isInteger(w.ms) && w.ms >= 0).toBe(true);
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('a warm-up that throws is logged and skipped; the server still starts and serves', async () => {
    const s = await startScour('node', { warmup: true }, { plugins: [probe(() => { throw new Error('cannot warm'); })] });
    try {
      const failed = s.logs.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg?.startsWith('plugin warm-up failed'));
      expect(failed?.plugin).toBe('operation-warm-probe');
      expect(failed?.err).toContain('cannot warm');
      const names = (warmLine(s.logs)!.warmed as { plugin: string }[]).map((w) => w.plugin);
      expect(names).not.toContain('operation-warm-probe');
      expect(names).toContain('operation-research');
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('warmup: false runs none', async () => {
    let calls = 0;
    const s = await startScour('uws', { warmup: false }, { plugins: [probe(() => { calls++; })] });
    try {
      expect(calls).toBe(0);
      expect(warmLine(s.logs)).toBeUndefined();
    } finally {
      await s.stop();
    }
  });
});
