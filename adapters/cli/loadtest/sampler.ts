/**
 * The server's side of a load test: its GET /metrics read every second
 * (resident memory, CPU, open file descriptors, Chromium processes), kept
 * as a series. The load test's own requests to /metrics are few (one a
 * second) and not part of its figures.
 */
import { request } from 'undici';

export interface ServerSample {
  /** Seconds since the sampler started. */
  readonly t: number;
  readonly rssBytes: number;
  /** CPU use since the previous sample, in cores (1.0 = one core busy). */
  readonly cpu: number;
  readonly openFds: number;
  readonly chromium: number;
}

/** One metric's value from the Prometheus text (undefined when absent). */
export function metric(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([-0-9.e+]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

export interface Sampler {
  readonly samples: ServerSample[];
  stop(): Promise<void>;
}

export function startSampler(base: string, everyMs = 1000): Sampler {
  const samples: ServerSample[] = [];
  const start = performance.now();
  let last: { at: number; cpu: number } | undefined;
  let stopped = false;
  let pending: Promise<void> = Promise.resolve();
  const once = async () => {
    try {
      const res = await request(`${base.replace(/(?<!\/)\/+$/, '')}/metrics`, { headersTimeout: 5000, bodyTimeout: 5000 });
      const text = await res.body.text();
      const at = performance.now();
      const cpuTotal = metric(text, 'scour_process_cpu_seconds_total') ?? 0;
      const cpu = last === undefined ? 0 : Math.max(0, (cpuTotal - last.cpu) / ((at - last.at) / 1000));
      last = { at, cpu: cpuTotal };
      samples.push({
        t: Math.round((at - start) / 100) / 10,
        rssBytes: metric(text, 'scour_process_resident_memory_bytes') ?? -1,
        cpu: Math.round(cpu * 100) / 100,
        openFds: metric(text, 'scour_process_open_fds') ?? -1,
        chromium: metric(text, 'scour_chromium_processes') ?? -1,
      });
    } catch {
      // A server too busy to answer its metrics within 5 s: a gap in the series, not a failure of the test.
    }
  };
  const timer = setInterval(() => {
    if (!stopped) pending = pending.then(once);
  }, everyMs);
  pending = once();
  return {
    samples,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await pending;
      await once();
    },
  };
}

/** Least-squares slope of y over x (per unit of x); 0 with fewer than 2 points. */
export function slope(points: readonly { readonly x: number; readonly y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (const p of points) {
    sx += p.x;
    sy += p.y;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
