/**
 * The load generator of `scour loadtest`: undici connection pools and two
 * ways to send.
 *
 * - Open loop (`rate`): request i is due at start + i / rate, whether or not
 *   earlier ones have answered, and its latency is measured from when it was
 *   due, not from when it could be sent. A server that falls behind shows
 *   its real queueing delay instead of slowing the generator down with it
 *   (no coordinated omission). Requests due while `maxInFlight` are already
 *   in flight are counted as `dropped` (the generator's own overload), not
 *   sent late.
 * - Closed loop (`connections`): N loops, each sending its next request when
 *   the previous one answered; latency from the send.
 *
 * It stops after `durationMs` or `requests`, whichever is given, and then
 * waits (at most `drainMs`) for what is in flight. Latencies go into
 * HdrHistograms (1 µs to 60 s, 3 significant digits): overall, per tag and
 * per second.
 */
import * as hdr from 'hdr-histogram-js';
import { Pool } from 'undici';

export interface LoadRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** What the report groups by (the scenario's operation). */
  readonly tag: string;
}

export type LoadMode = { readonly kind: 'open'; readonly rate: number } | { readonly kind: 'closed'; readonly connections: number };

export interface LoadOptions {
  readonly base: string;
  readonly mode: LoadMode;
  readonly durationMs?: number;
  readonly requests?: number;
  /** The next request to send (called once per request). */
  readonly next: () => LoadRequest;
  /** Open loop: requests in flight beyond which a due request is dropped. Default max(256, rate * 10). */
  readonly maxInFlight?: number;
  /** Connections of the pool (open loop); default max(16, min(1024, rate / 20)). */
  readonly poolConnections?: number;
  /** Per-request timeout, ms (counted as an error); default 30 000. */
  readonly timeoutMs?: number;
  /** After the end, how long to wait for requests in flight; default 30 000. */
  readonly drainMs?: number;
  readonly signal?: AbortSignal;
  /** Extra latency groups over tags, e.g. { 'non-render': (tag) => tag !== 'scrape-render' }. */
  readonly groups?: Readonly<Record<string, (tag: string) => boolean>>;
}

export interface Percentiles {
  readonly count: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}

export interface SecondSample {
  /** Seconds since the start. */
  readonly t: number;
  readonly completed: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly non2xx: number;
}

export interface LoadResult {
  readonly mode: LoadMode;
  readonly elapsedMs: number;
  readonly sent: number;
  readonly completed: number;
  readonly dropped: number;
  /**
   * Answers per second: those answered, over the time from the start to the
   * end of sending or to the last answer, whichever is later (a server that
   * fell behind answers part of the load while the generator drains it).
   */
  readonly throughput: number;
  /** Milliseconds. */
  readonly latency: Percentiles;
  /**
   * Open loop: how late the generator itself handed each request to its
   * connection pool (from when it was due), in milliseconds. Latency counts
   * this too; when it is large the generator, not the server, fell behind
   * (a busy or shared core), and the latency says less about the server.
   */
  readonly sendLag: Percentiles;
  readonly statuses: Readonly<Record<string, number>>;
  /** 2xx, 4xx (other than 429), 429, 5xx, and errors (no answer). */
  readonly classes: { readonly '2xx': number; readonly '4xx': number; readonly '429': number; readonly '5xx': number; readonly errors: number };
  readonly errors: Readonly<Record<string, number>>;
  readonly byTag: Readonly<Record<string, { readonly latency: Percentiles; readonly statuses: Readonly<Record<string, number>> }>>;
  /** The groups asked for: latency and 5xx count of the tags each takes. */
  readonly groups: Readonly<Record<string, { readonly latency: Percentiles; readonly status5xx: number }>>;
  readonly perSecond: readonly SecondSample[];
}

const newHistogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
type Histogram = ReturnType<typeof newHistogram>;

/** Microseconds in, milliseconds out. */
function percentiles(h: Histogram): Percentiles {
  const ms = (us: number) => Math.round(us) / 1000;
  if (h.totalCount === 0) return { count: 0, min: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0 };
  return {
    count: h.totalCount,
    min: ms(h.minNonZeroValue),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
    mean: ms(h.mean),
  };
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  if (o.durationMs === undefined && o.requests === undefined) throw new Error('give durationMs or requests');
  const url = new URL(o.base);
  const openRate = o.mode.kind === 'open' ? o.mode.rate : 0;
  const connections = o.mode.kind === 'closed' ? o.mode.connections : (o.poolConnections ?? Math.max(16, Math.min(1024, Math.ceil(openRate / 20))));
  const pool = new Pool(url.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: o.timeoutMs ?? 30_000, bodyTimeout: o.timeoutMs ?? 30_000 });
  const prefix = url.pathname.replace(/(?<!\/)\/+$/, '');
  const overall = newHistogram();
  const lag = newHistogram();
  const tags = new Map<string, { h: Histogram; statuses: Map<string, number> }>();
  const statuses = new Map<string, number>();
  const errors = new Map<string, number>();
  const classes = { '2xx': 0, '4xx': 0, '429': 0, '5xx': 0, errors: 0 };
  const groups = Object.entries(o.groups ?? {}).map(([name, takes]) => ({ name, takes, h: newHistogram(), status5xx: 0 }));
  const seconds: { h: Histogram; completed: number; errors: number; non2xx: number }[] = [];
  let sent = 0;
  let completed = 0;
  let dropped = 0;
  let inFlight = 0;
  const start = performance.now();
  let lastAnswer = start;
  const limitMs = o.durationMs ?? Number.POSITIVE_INFINITY;
  const limitN = o.requests ?? Number.POSITIVE_INFINITY;
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const second = (at: number) => {
    const i = Math.max(0, Math.floor((at - start) / 1000));
    while (seconds.length <= i) seconds.push({ h: newHistogram(), completed: 0, errors: 0, non2xx: 0 });
    return seconds[i]!;
  };

  const send = async (r: LoadRequest, due: number): Promise<void> => {
    sent++;
    inFlight++;
    let status = 0;
    let error: string | undefined;
    lag.recordValue(Math.max(1, Math.round((performance.now() - due) * 1000)));
    try {
      const res = await pool.request({
        method: r.method, path: `${prefix}${r.path}`, headers: r.headers ?? {}, body: r.body ?? null,
      });
      status = res.statusCode;
      await res.body.dump({ limit: 64 * 1024 * 1024 });
    } catch (e) {
      error = (e as { code?: string }).code ?? (e as Error).name ?? 'Error';
    }
    const end = performance.now();
    if (end > lastAnswer) lastAnswer = end;
    inFlight--;
    completed++;
    const us = Math.max(1, Math.round((end - due) * 1000));
    const s = second(end);
    if (error !== undefined) {
      classes.errors++;
      bump(errors, error);
      s.errors++;
      return;
    }
    overall.recordValue(us);
    s.h.recordValue(us);
    s.completed++;
    const key = String(status);
    bump(statuses, key);
    let t = tags.get(r.tag);
    if (t === undefined) tags.set(r.tag, (t = { h: newHistogram(), statuses: new Map() }));
    t.h.recordValue(us);
    bump(t.statuses, key);
    for (const g of groups) {
      if (!g.takes(r.tag)) continue;
      g.h.recordValue(us);
      if (status >= 500) g.status5xx++;
    }
    if (status === 429) classes['429']++;
    else if (status >= 500) classes['5xx']++;
    else if (status >= 400) classes['4xx']++;
    else if (status >= 200 && status < 300) classes['2xx']++;
    if (status < 200 || status >= 300) s.non2xx++;
  };

  const running = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const over = () => o.signal?.aborted === true || performance.now() - start >= limitMs || sent + dropped >= limitN;

  if (o.mode.kind === 'closed') {
    const loops = Array.from({ length: o.mode.connections }, async () => {
      while (!over()) await send(o.next(), performance.now());
    });
    await Promise.all(loops);
  } else {
    const maxInFlight = o.maxInFlight ?? Math.max(256, Math.ceil(openRate * 10));
    let issued = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        // Request k is due at start + k / rate: at elapsed e, requests 0 .. floor(e * rate) are due.
        const due = Math.min(Math.floor(((now - start) / 1000) * openRate) + 1, limitN);
        while (issued < due && !over()) {
          const dueAt = start + (issued / openRate) * 1000;
          issued++;
          if (inFlight >= maxInFlight) {
            dropped++;
            continue;
          }
          track(send(o.next(), dueAt));
        }
        if (over()) return resolve();
        // Wake about when the next request is due (at least every millisecond at high rates).
        const nextAt = start + (issued / openRate) * 1000;
        setTimeout(tick, Math.max(0, Math.min(50, nextAt - performance.now())));
      };
      tick();
    });
  }
  const elapsedMs = performance.now() - start;
  await Promise.race([Promise.all([...running]), new Promise((r) => setTimeout(r, o.drainMs ?? 30_000).unref())]);
  await pool.close().catch(() => undefined);
  const byTag: Record<string, { latency: Percentiles; statuses: Record<string, number> }> = {};
  for (const [tag, t] of tags) byTag[tag] = { latency: percentiles(t.h), statuses: Object.fromEntries(t.statuses) };
  return {
    mode: o.mode,
    elapsedMs: Math.round(elapsedMs),
    sent, completed, dropped,
    throughput: Math.round((completed / (Math.max(elapsedMs, lastAnswer - start) / 1000)) * 10) / 10,
    latency: percentiles(overall),
    sendLag: percentiles(lag),
    statuses: Object.fromEntries(statuses),
    classes,
    errors: Object.fromEntries(errors),
    byTag,
    groups: Object.fromEntries(groups.map((g) => [g.name, { latency: percentiles(g.h), status5xx: g.status5xx }])),
    perSecond: seconds.map((s, t) => {
      const p = percentiles(s.h);
      return { t, completed: s.completed, p50: p.p50, p99: p.p99, errors: s.errors, non2xx: s.non2xx };
    }),
  };
}
