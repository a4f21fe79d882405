// A fixed-rate load for bench:http (wrk only measures at saturation), run as
// its own process so the bench pins it to the load core. Argument: a JSON
// object { url, method, headers, body, rate, seconds, connections, tool }.
// Prints one JSON line: rps, requests, latency p50/p99/max (ms), non-2xx,
// errors, and the tool.
//
// tool "open-loop" (the default): the generator of `scour loadtest`
// (dist/adapters/cli/loadtest/engine.js: undici, an HdrHistogram in
// microseconds). Request k is due at start + k/rate whether or not earlier
// ones have answered, and its latency counts from when it was due, so a
// server (or a generator) that falls behind shows its queueing delay.
//
// tool "autocannon": autocannon with overallRate, what this bench used
// before. Its latencies are whole milliseconds, and with a rate it records
// each one "with expected interval" ceil(1/rate-per-connection) = 1 ms, so a
// 24 ms answer also adds samples of 23, 22, ... 1 ms: the percentiles it
// prints are not those of the answers (its p50 of 5 ms came with 23% of the
// requests over 10 ms in the server's own histogram). Kept to compare.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const o = JSON.parse(process.argv[2]);
const tool = o.tool ?? 'open-loop';
if (tool === 'autocannon') {
  const { default: autocannon } = await import('autocannon');
  const r = await autocannon({
    url: o.url, method: o.method, headers: o.headers, body: o.body,
    connections: o.connections, duration: o.seconds, overallRate: o.rate,
  });
  console.log(JSON.stringify({
    tool, rps: r.requests.average, requests: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max,
    non2xx: r.non2xx, errors: r.errors + r.timeouts,
  }));
} else if (tool === 'open-loop') {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const { runLoad } = await import(join(root, 'dist/adapters/cli/loadtest/engine.js'));
  const u = new URL(o.url);
  const request = { method: o.method, path: u.pathname + u.search, headers: o.headers, body: o.body, tag: 'load' };
  const r = await runLoad({
    base: u.origin, mode: { kind: 'open', rate: o.rate }, durationMs: o.seconds * 1000, poolConnections: o.connections,
    next: () => request, timeoutMs: 10_000, drainMs: 10_000,
  });
  const non2xx = r.classes['4xx'] + r.classes['429'] + r.classes['5xx'];
  console.log(JSON.stringify({
    tool, rps: r.throughput, requests: r.completed, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max,
    non2xx, errors: r.classes.errors + r.dropped, send_lag_p99: r.sendLag.p99,
  }));
} else {
  console.error(`fixed-rate: unknown tool ${tool}`);
  process.exit(2);
}
