/**
 * Raw HTTP/1.x over node:net for the transport fuzz: write bytes exactly as
 * given (all at once, or trickled), read whatever comes back until the
 * server closes or a deadline passes, and pick out the status lines.
 */
import net from 'node:net';

export interface RawResult {
  /** Everything the server sent, as latin1. */
  readonly data: string;
  /** Statuses of the response heads in `data`, in order. */
  readonly statuses: readonly number[];
  /** The server closed (or reset) the connection before the deadline. */
  readonly closed: boolean;
  /** Milliseconds from connect to close (or to the deadline). */
  readonly ms: number;
}

export interface RawOptions {
  /** Give up (and count the connection as hung) after this long. */
  readonly deadlineMs: number;
  /** Write the payload this many bytes at a time, `gapMs` apart (slowloris), after the first `from` bytes at once; default all at once. */
  readonly trickle?: { readonly bytes: number; readonly gapMs: number; readonly from?: number };
  /** Resolve as soon as this many response heads have arrived (0: wait for the close). */
  readonly responses?: number;
}

const STATUS = /HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/g;

export function statusesOf(data: string): number[] {
  return [...data.matchAll(STATUS)].map((m) => Number(m[1]));
}

export function rawExchange(port: number, payload: string | Buffer, options: RawOptions): Promise<RawResult> {
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload;
  return new Promise((resolve) => {
    const t0 = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(timer);
      socket.destroy();
      resolve({ data, statuses: statusesOf(data), closed, ms: performance.now() - t0 });
    };
    const deadline = setTimeout(() => finish(false), options.deadlineMs);
    socket.on('data', (d) => {
      data += d.toString('latin1');
      // A complete head is enough when the case only waits for answers (the body may follow, or the server may keep the connection).
      if (options.responses !== undefined && options.responses > 0 && statusesOf(data).length >= options.responses) setTimeout(() => finish(true), 50);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      if (options.trickle === undefined) {
        if (bytes.length > 0) socket.write(bytes);
        return;
      }
      let at = options.trickle.from ?? 0;
      if (at > 0) socket.write(bytes.subarray(0, at));
      const step = options.trickle.bytes;
      const next = () => {
        if (done || socket.destroyed) return;
        if (at >= bytes.length) return; // everything sent: wait for the server
        socket.write(bytes.subarray(at, at + step));
        at += step;
        timer = setTimeout(next, options.trickle!.gapMs);
      };
      next();
    });
  });
}

/**
 * A well-formed client that keeps calling while the fuzz runs (health check
 * and a tool, over keep-alive): every one of its requests must succeed.
 */
export function steadyClient(url: string): { stop(): Promise<{ ok: number; failures: string[] }> } {
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const loop = (async () => {
    for (let i = 0; running; i++) {
      try {
        const r = i % 2 === 0
          ? await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) })
          : await fetch(`${url}/v1/tools/uuid-generator`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"count":2}', signal: AbortSignal.timeout(5_000) });
        await r.arrayBuffer();
        if (r.status === 200) ok++;
        else failures.push(`status ${r.status}`);
      } catch (e) {
        failures.push((e as Error).message);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { ok, failures };
    },
  };
}
