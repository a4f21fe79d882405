// A fixed-rate load for bench:http (wrk only measures at saturation):
// autocannon with overallRate, run as its own process so the bench pins it
// to the load core. Argument: a JSON object { url, method, headers, body,
// rate, seconds, connections }. Prints one JSON line: rps, requests,
// latency p50/p99 (ms, from send to last byte), non-2xx, errors.
import autocannon from 'autocannon';

const o = JSON.parse(process.argv[2]);
const r = await autocannon({
  url: o.url, method: o.method, headers: o.headers, body: o.body,
  connections: o.connections, duration: o.seconds, overallRate: o.rate,
});
console.log(JSON.stringify({
  rps: r.requests.average, requests: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max,
  non2xx: r.non2xx, errors: r.errors + r.timeouts,
}));
