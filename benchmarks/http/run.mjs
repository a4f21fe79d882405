// npm run bench:http: requests/s and latency of POST /v1/tools/uuid-generator
// on loopback for a bare uWebSockets.js server (the ceiling), Scour over uWS,
// Scour over node:http, and Fastify (the baseline), all in one run. Each
// server is pinned to core 0 and wrk to core 1 (when there are two cores).
// Rounds are interleaved; each target's figure is its median round, and
// each ratio is the median of the ratios measured within the same round
// (paired), since these machines are shared and their speed drifts from one
// minute to the next. Prints a table and writes benchmarks/results/http.json.
//
// The same rounds also measure authenticated GET /v1/usage (auth, quota,
// rate-limit headers, the usage query) on Scour over uWS in its embedded
// configuration (SQLite, in-process limiter) and its shared one (PostgreSQL,
// Redis), against the bare uWS server answering a fixed body of the same
// size (see usage-setup.mjs for the accounts, database and prefix it makes
// and removes). Every usage request uses one key, so in the shared row the
// concurrent reads of that account share statements (group commit, see
// adapters/store/postgres/batch.ts); a further shared row, in the same
// rounds, has group commit off (one read per request), which is also what
// reads spread over many accounts cost.
//
// The billable row (group billable) sends a search over the local index (1
// credit: auth, quota with two windows and a concurrency slot, reserve,
// the index query, bill) to Scour/uWS in the shared configuration at a
// fixed rate, BENCH_RATE requests/s (default 2,000), with fixed-rate.mjs
// instead of wrk, and reports its latency; the target is a p99 under 20 ms.
// The generator (BENCH_RATE_TOOL) is by default the open loop of `scour
// loadtest` (latency from when each request was due, so the generator's own
// lateness counts too: its send lag is printed beside it), at a higher
// priority (BENCH_GENERATOR_NICE); "autocannon" is what this bench used
// until 2026-11-28, whose percentiles are not those of the answers (see
// fixed-rate.mjs). Each fixed-rate row also prints the share of requests the
// server itself took over 10 and over 20 ms, from its own histogram
// (/metrics, from the handler's start to the answer written): a tail the
// client sees and the server does not is outside its handler (the kernel,
// the event loop before the request reached it, the generator). A second row sends the same way POST /test/billable
// {"cost":1} (the test fixture plugin, loaded with SCOUR_PLUGINS through
// tsx): the account path alone (auth, quota, reserve, bill) around no
// work, to tell its cost from the search's; a third, in the same rounds, the
// same with group commit off (servers/group-commit-off.mjs: one PostgreSQL
// statement per reserve and per settle, as before it). For every shared row the bench also prints where a
// request waits: PostgreSQL statements per request and their execution time
// in the server (pg_stat_database of the run's own database: xact_commit,
// active_time), Redis commands per request and their time in Redis (INFO
// commandstats; Redis is machine-wide, so other users add noise), the API
// process's CPU per request, and the connection pools.
//
// The compression rows measure what response compression costs: Scour over
// uWS answering GET /v1/openapi.json (a static document: its compressed
// form is reused) and a 40 KB lorem-ipsum tool answer (unique per request:
// compressed every time) without Accept-Encoding, with gzip and with br.
// Besides throughput, every row reports the server's CPU time per request,
// read from /proc (user + system, all threads, the zlib thread pool
// included), and the bytes of one answer.
//
// Settings: BENCH_DURATION (s, default 5), BENCH_WARMUP (s, default 2),
// BENCH_ROUNDS (default 5), BENCH_CONNECTIONS (default 100); BENCH_ONLY, a
// comma-separated subset of the groups tools, usage, billable, compression (default
// all; a subset writes benchmarks/results/http-<groups>.json instead of
// http.json; BENCH_TARGETS, target ids: http-<ids>.json); for the shared usage target, BENCH_PG_ADMIN_URL (default
// postgres://postgres@127.0.0.1:5432/postgres) and BENCH_REDIS_URL (default
// redis://127.0.0.1:6379).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Redis } from 'ioredis';
import { cleanEnv, PLANS_OVERRIDE, REDIS_URL, SEARCH_BODY, setupUsage, USAGE_PLAN } from './usage-setup.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const duration = Number(process.env.BENCH_DURATION ?? 5);
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);
const PATH = '/v1/tools/uuid-generator';
const USAGE_PATH = '/v1/usage';
const GROUPS = ['tools', 'usage', 'billable', 'compression'];
const RATE = Number(process.env.BENCH_RATE ?? 2000);
/** The fixed-rate generator (fixed-rate.mjs): open-loop (scour loadtest's engine, latency from when each request was due) or autocannon. */
const RATE_TOOL = process.env.BENCH_RATE_TOOL ?? 'open-loop';
/** Extra node flags for every server (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"). */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const SEARCH_PATH = '/v1/search';
const BILLABLE_PATH = '/test/billable';
const BILLABLE_BODY = '{"cost":1}';
/** The same, charged after the work without a hold (the reserve stage's chargeAfter option). */
const BILLABLE_AFTER_BODY = '{"cost":1,"charge_after":true}';
/**
 * BENCH_BASELINE_ROOT: another checkout, built (e.g. the commit before a
 * refactor): its Scour joins the tools and usage groups as rows of its own
 * (Scour over uWS, and GET /v1/usage embedded), in the same interleaved
 * rounds, with a same-round ratio to this build's.
 */
const BASELINE_ROOT = process.env.BENCH_BASELINE_ROOT || undefined;
/** The built CLI entry of a checkout (dist/config/cli.js; a build from before it moved has dist/adapters/cli/main.js). */
const cliEntry = (r) => (existsSync(join(r, 'dist/config/cli.js')) || !existsSync(join(r, 'dist/adapters/cli/main.js')) ? join(r, 'dist/config/cli.js') : join(r, 'dist/adapters/cli/main.js'));
const only = (process.env.BENCH_ONLY ?? GROUPS.join(',')).split(',').map((g) => g.trim()).filter(Boolean);
for (const g of only) {
  if (!GROUPS.includes(g)) {
    console.error(`BENCH_ONLY: unknown group ${g} (groups: ${GROUPS.join(', ')})`);
    process.exit(1);
  }
}
const runs = (group) => only.includes(group);
const OPENAPI_PATH = '/v1/openapi.json';
const LOREM_PATH = '/v1/tools/lorem-ipsum-generator';
/** About 40 KB of JSON, the same text every time (seeded), with a new request_id: compressed on every request. */
const LOREM_BODY = '{"unit":"words","count":6000,"seed":1}';

function has(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (!has('wrk')) {
  console.log('wrk is not installed; installing it from Debian packages (apt-get install -y wrk)...');
  try {
    execFileSync('sh', ['-c', 'apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y wrk >/dev/null 2>&1)'], { stdio: 'inherit' });
  } catch {
    console.error('could not install wrk; install it (apt-get install wrk) and run again');
    process.exit(1);
  }
}
// BENCH_PIN=none: no pinning (the scheduler places the server, the load and the databases).
const pin = process.env.BENCH_PIN !== 'none' && has('taskset') && cpus().length >= 2;
const serverPin = pin ? ['taskset', '-c', '0'] : [];
// The fixed-rate generator runs at a higher priority when this process may raise it (root): on this
// 2-core machine it shares a core with PostgreSQL and Redis, and the scheduling delays a client on its
// own machine would not have count as latency (it measures from when each request was due; its own
// send lag is printed). BENCH_GENERATOR_NICE sets the niceness (default -10; 0: as is).
const GENERATOR_NICE = Number(process.env.BENCH_GENERATOR_NICE ?? -10);
const generatorNice = GENERATOR_NICE !== 0 && process.getuid?.() === 0 && has('nice') ? ['nice', '-n', String(GENERATOR_NICE)] : [];
const loadPin = pin ? ['taskset', '-c', '1'] : [];

if (!existsSync(join(root, 'dist/config/cli.js'))) {
  console.error('dist/ is missing: run `npm run build` first (npm run bench:http does it)');
  process.exit(1);
}
const { default: uws } = await import('@trufflesuite/uws-js-unofficial');
if (!String(uws.App).includes('[native code]')) {
  console.error('uWebSockets.js is running its pure-JS fallback (no native binary for this Node ABI): refusing to benchmark it');
  process.exit(1);
}

const scourEnv = { SCOUR_TOOLS_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn', HOST: '127.0.0.1', SCOUR_DATA_DIR: join(root, 'data', 'bench'), SCOUR_SEARCH_PROVIDERS: 'local' };

const luaPath = join(root, 'benchmarks/http/post-empty.lua');
writeFileSync(luaPath, 'wrk.method = "POST"\nwrk.body = "{}"\nwrk.headers["Content-Type"] = "application/json"\n');

/** A wrk script: method, optional body and Content-Type, optional Accept-Encoding. */
function luaFile(name, { method, body, encoding }) {
  const path = join(root, `benchmarks/http/${name}.lua`);
  const lines = [`wrk.method = "${method}"`];
  if (body !== undefined) lines.push(`wrk.body = '${body}'`, 'wrk.headers["Content-Type"] = "application/json"');
  if (encoding !== undefined) lines.push(`wrk.headers["Accept-Encoding"] = "${encoding}"`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** One raw request (no decoding): status, Content-Encoding and the bytes on the wire. */
function rawRequest(port, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (d) => (bytes += d.length));
      res.on('end', () => resolve({ status: res.statusCode, encoding: res.headers['content-encoding'], bytes }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const usage = runs('usage') || runs('billable') ? await setupUsage(root, scourEnv) : { cleanup: async () => {}, bare: {}, embedded: {}, shared: {}, billable: {} };
let current = null;
let cleaning = null;
const cleanup = () => (cleaning ??= usage.cleanup());
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    current?.kill('SIGKILL');
    cleanup().finally(() => process.exit(130));
  });
}

/** What wrk sends to a target and how its readiness probe checks the answer. */
const postLoad = {
  method: 'POST', path: PATH, lua: luaPath,
  probe: async (port) => {
    const res = await fetch(`http://127.0.0.1:${port}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = await res.json();
    if (res.status !== 200 || !Array.isArray(body.uuids) || body.uuids.length !== 1) throw new Error(`bad answer ${res.status} ${JSON.stringify(body)}`);
  },
};
const usageLoad = ({ key, lua }) => ({
  method: 'GET', path: USAGE_PATH, lua,
  probe: async (port) => {
    const res = await fetch(`http://127.0.0.1:${port}${USAGE_PATH}`, { headers: { authorization: `Bearer ${key}` } });
    const body = await res.json();
    if (res.status !== 200 || !Number.isInteger(body.credits_remaining)) throw new Error(`bad answer ${res.status} ${JSON.stringify(body)}`);
  },
});

/** A billable row: POST at a fixed rate (fixed-rate.mjs); the probe checks it was charged. */
const billableLoad = ({ key }, path = SEARCH_PATH, body = SEARCH_BODY) => ({
  method: 'POST', path, rate: RATE, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body,
  probe: async (port) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const answer = await res.json();
    if (res.status !== 200 || answer.credits_used !== 1) throw new Error(`bad answer ${res.status} ${JSON.stringify(answer)}`);
  },
});

/** A compression row: what wrk sends, and a probe that checks the coding the server chose. */
const compressionLoad = ({ name, method, path, body, encoding }) => {
  const headers = { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(encoding !== undefined ? { 'accept-encoding': encoding } : {}) };
  return {
    method, path, lua: luaFile(name, { method, body, encoding }), group: 'compression', encoding: encoding ?? 'none',
    probe: async (port) => {
      const r = await rawRequest(port, method, path, headers, body);
      if (r.status !== 200 || r.encoding !== encoding) throw new Error(`bad answer ${r.status} content-encoding ${r.encoding}`);
    },
    bytes: async (port) => (await rawRequest(port, method, path, headers, body)).bytes,
  };
};

const scourUws = { ...scourEnv, SCOUR_HTTP_ADAPTER: 'uws' };
const allTargets = [
  { id: 'bare_uws', group: 'tools', name: 'bare uWS (ceiling)', args: ['benchmarks/http/servers/bare-uws.mjs'], env: {}, load: postLoad },
  { id: 'ideal_uws', group: 'tools', name: 'hand-written uWS, same contract', args: ['benchmarks/http/servers/ideal-uws.mjs'], env: {}, load: postLoad },
  { id: 'scour_uws', group: 'tools', name: 'Scour over uWS', args: ['dist/config/cli.js', 'serve'], env: scourUws, load: postLoad },
  ...(BASELINE_ROOT ? [{ id: 'scour_uws_baseline', group: 'tools', name: 'Scour over uWS, baseline build (BENCH_BASELINE_ROOT)', args: [cliEntry(BASELINE_ROOT), 'serve'], env: scourUws, load: postLoad }] : []),
  { id: 'scour_node', group: 'tools', name: 'Scour over node:http', args: ['dist/config/cli.js', 'serve'], env: { ...scourEnv, SCOUR_HTTP_ADAPTER: 'node' }, load: postLoad },
  { id: 'fastify', group: 'tools', name: 'Fastify (baseline)', args: ['benchmarks/http/servers/fastify.mjs'], env: {}, load: postLoad },
  // The usage rows, the bare GET placed right before the two it is paired with.
  { id: 'bare_uws_get', group: 'usage', name: 'bare uWS, fixed body (ceiling)', args: ['benchmarks/http/servers/bare-uws.mjs'], env: {}, load: runs('usage') && usageLoad(usage.bare) },
  { id: 'scour_usage_embedded', group: 'usage', name: 'Scour/uWS, embedded (SQLite, in-process limiter)', args: ['dist/config/cli.js', 'serve'], env: usage.embedded.env, load: runs('usage') && usageLoad(usage.embedded) },
  ...(BASELINE_ROOT ? [{ id: 'scour_usage_embedded_baseline', group: 'usage', name: 'Scour/uWS, embedded, baseline build (BENCH_BASELINE_ROOT)', args: [cliEntry(BASELINE_ROOT), 'serve'], env: usage.embedded.env, load: runs('usage') && usageLoad(usage.embedded) }] : []),
  { id: 'scour_usage_shared', group: 'usage', name: 'Scour/uWS, shared (PostgreSQL, Redis)', args: ['dist/config/cli.js', 'serve'], env: usage.shared.env, load: runs('usage') && usageLoad(usage.shared), shared: true },
  { id: 'scour_usage_shared_single', group: 'usage', name: 'Scour/uWS, shared, group commit off (one read per request)', args: ['--import', './benchmarks/http/servers/group-commit-off.mjs', 'dist/config/cli.js', 'serve'], env: usage.shared.env, load: runs('usage') && usageLoad(usage.shared), shared: true },
  { id: 'scour_search_shared', group: 'billable', name: `Scour/uWS, shared: POST ${SEARCH_PATH} (local index, 1 credit) at ${RATE} req/s`, args: ['dist/config/cli.js', 'serve'], env: usage.billable.env, load: runs('billable') && billableLoad(usage.billable), shared: true },
  { id: 'scour_search_shared_before', group: 'billable', name: `Scour/uWS, shared: POST ${SEARCH_PATH} (local index, 1 credit) at ${RATE} req/s, before part 3 (hold + settle, collections unshared)`, args: ['--import', './benchmarks/http/servers/billing-before.mjs', 'dist/config/cli.js', 'serve'], env: usage.billable.env, load: runs('billable') && billableLoad(usage.billable), shared: true },
  { id: 'scour_search_shared_unshared', group: 'billable', name: `Scour/uWS, shared: POST ${SEARCH_PATH} (local index, 1 credit) at ${RATE} req/s, collections looked up one search at a time`, args: ['--import', './benchmarks/http/servers/collections-unshared.mjs', 'dist/config/cli.js', 'serve'], env: usage.billable.env, load: runs('billable') && billableLoad(usage.billable), shared: true },
  { id: 'scour_billable_shared_single', group: 'billable', name: `Scour/uWS, shared: POST ${BILLABLE_PATH} (no work, 1 credit) at ${RATE} req/s, group commit off`, args: ['--import', 'tsx', '--import', './benchmarks/http/servers/group-commit-off.mjs', 'dist/config/cli.js', 'serve'], env: { ...usage.billable.env, SCOUR_PLUGINS: 'test/fixtures/plugins/billable.ts' }, load: runs('billable') && billableLoad(usage.billable, BILLABLE_PATH, BILLABLE_BODY), shared: true },
  { id: 'scour_billable_shared', group: 'billable', name: `Scour/uWS, shared: POST ${BILLABLE_PATH} (no work, 1 credit) at ${RATE} req/s`, args: ['--import', 'tsx', 'dist/config/cli.js', 'serve'], env: { ...usage.billable.env, SCOUR_PLUGINS: 'test/fixtures/plugins/billable.ts' }, load: runs('billable') && billableLoad(usage.billable, BILLABLE_PATH, BILLABLE_BODY), shared: true },
  { id: 'scour_billable_shared_after', group: 'billable', name: `Scour/uWS, shared: POST ${BILLABLE_PATH} (no work, 1 credit, charge_after) at ${RATE} req/s`, args: ['--import', 'tsx', 'dist/config/cli.js', 'serve'], env: { ...usage.billable.env, SCOUR_PLUGINS: 'test/fixtures/plugins/billable.ts' }, load: runs('billable') && billableLoad(usage.billable, BILLABLE_PATH, BILLABLE_AFTER_BODY), shared: true },
  // Compression: each compressed row right after the uncompressed one it is paired with.
  { id: 'openapi_identity', group: 'compression', name: `GET ${OPENAPI_PATH}, uncompressed`, args: ['dist/config/cli.js', 'serve'], env: scourUws, load: compressionLoad({ name: 'openapi-identity', method: 'GET', path: OPENAPI_PATH }) },
  { id: 'openapi_br', group: 'compression', name: `GET ${OPENAPI_PATH}, br (reused)`, args: ['dist/config/cli.js', 'serve'], env: scourUws, load: compressionLoad({ name: 'openapi-br', method: 'GET', path: OPENAPI_PATH, encoding: 'br' }) },
  { id: 'lorem_identity', group: 'compression', name: 'POST lorem-ipsum 6000 words, uncompressed', args: ['dist/config/cli.js', 'serve'], env: scourUws, load: compressionLoad({ name: 'lorem-identity', method: 'POST', path: LOREM_PATH, body: LOREM_BODY }) },
  { id: 'lorem_gzip', group: 'compression', name: 'POST lorem-ipsum 6000 words, gzip', args: ['dist/config/cli.js', 'serve'], env: scourUws, load: compressionLoad({ name: 'lorem-gzip', method: 'POST', path: LOREM_PATH, body: LOREM_BODY, encoding: 'gzip' }) },
  { id: 'lorem_br', group: 'compression', name: 'POST lorem-ipsum 6000 words, br', args: ['dist/config/cli.js', 'serve'], env: scourUws, load: compressionLoad({ name: 'lorem-br', method: 'POST', path: LOREM_PATH, body: LOREM_BODY, encoding: 'br' }) },
];
// BENCH_TARGETS: a comma-separated subset of target ids within the groups (e.g. scour_search_shared), to study one row.
const onlyTargets = process.env.BENCH_TARGETS ? process.env.BENCH_TARGETS.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
for (const id of onlyTargets ?? []) {
  if (!allTargets.some((t) => t.id === id)) {
    console.error(`BENCH_TARGETS: unknown target ${id} (targets: ${allTargets.map((t) => t.id).join(', ')})`);
    process.exit(1);
  }
}
const targets = allTargets.filter((t) => runs(t.group) && (onlyTargets === undefined || onlyTargets.includes(t.id)));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startServer(target, port) {
  const [cmd, ...pre] = [...serverPin, process.execPath];
  const child = spawn(cmd, [...pre, ...NODE_ARGS, ...target.args], { cwd: root, env: cleanEnv({ ...target.env, PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'] });
  current = child;
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  child.log = () => log;
  // Generous: on a loaded machine a server started through tsx can take well over 20 s to answer.
  const deadline = Date.now() + 60_000;
  let lastError;
  while (Date.now() < deadline) {
    try {
      await target.load.probe(port);
      return child;
    } catch (e) {
      lastError = e;
      if (child.exitCode !== null) throw new Error(`${target.name} exited: ${log}`);
      await sleep(100);
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${target.name} did not start (${lastError?.message}): ${log}`);
}

const toMs = (v, unit) => Number(v) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);

/** CPU seconds (user + system, every thread) a process has used so far, from /proc; NaN where there is no /proc. */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime, stime (fields 14 and 15 of the line)
  } catch {
    return NaN;
  }
}

function wrk(port, seconds, load) {
  const [cmd, ...pre] = [...loadPin, 'wrk'];
  const out = execFileSync(cmd, [...pre, '-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', load.lua, `http://127.0.0.1:${port}${load.path}`], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const pct = (p) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    return m ? toMs(m[1], m[2]) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors:(.*)/.exec(out)?.[1]?.trim() ?? null;
  return { rps, requests, p50: pct(50), p99: pct(99), non2xx, errors };
}

/** The fixed-rate load (fixed-rate.mjs: the open-loop generator or autocannon, pinned like wrk). */
function fixedRate(port, seconds, load) {
  const [cmd, ...pre] = [...loadPin, ...generatorNice, process.execPath];
  const arg = JSON.stringify({ url: `http://127.0.0.1:${port}${load.path}`, method: load.method, headers: load.headers, body: load.body, rate: load.rate, seconds, connections: 50, tool: RATE_TOOL });
  const out = JSON.parse(execFileSync(cmd, [...pre, join(root, 'benchmarks/http/fixed-rate.mjs'), arg], { encoding: 'utf8' }).trim().split('\n').at(-1));
  return { rps: out.rps, requests: out.requests, p50: out.p50, p99: out.p99, non2xx: out.non2xx, errors: out.errors || null, tool: out.tool, send_lag_p99: out.send_lag_p99 };
}

/** Counters of the run's PostgreSQL database and of Redis, read before and after a shared row's measured run. */
async function backendCounters() {
  const c = new pg.Client({ connectionString: usage.dbUrl, connectionTimeoutMillis: 3000 });
  await c.connect();
  let pgRow;
  try {
    pgRow = (await c.query('SELECT xact_commit::float8 AS xacts, active_time::float8 AS active_ms, numbackends FROM pg_stat_database WHERE datname = current_database()')).rows[0];
  } finally {
    await c.end();
  }
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await r.connect();
  const redis = {};
  try {
    for (const line of (await r.info('commandstats')).split('\n')) {
      const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
      if (m) redis[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
    }
  } finally {
    r.disconnect();
  }
  return { pg: pgRow, redis };
}

/** The server's own latency histogram of one route (its /metrics), cumulative counts by bucket bound in seconds. */
async function serverHistogram(port, path, method = 'POST') {
  // A connection of its own (no agent): fetch would reuse the probe's keep-alive socket, which the server may
  // have closed as idle while this process sat in execFileSync and could not see it go.
  const text = await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
      res.on('error', reject);
    }).on('error', reject);
  });
  const buckets = new Map();
  for (const m of text.matchAll(/^scour_http_request_duration_seconds_bucket\{route="([^"]*)",le="([^"]+)"\} (\d+)$/gm)) {
    if (m[1] === `${method} ${path}`) buckets.set(m[2], Number(m[3]));
  }
  return buckets;
}

/** Of the requests between two histogram readings, the share the server itself took longer than each bound over (a tail the client sees but the server does not is queueing outside its handler: the socket, the event loop, the load generator). */
function serverTail(before, after) {
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  const over = (le) => (total > 0 ? (total - ((after.get(le) ?? 0) - (before.get(le) ?? 0))) / total : NaN);
  return { requests: total, over_5ms: over('0.005'), over_10ms: over('0.01'), over_20ms: over('0.02'), over_25ms: over('0.025') };
}

const IN_SCRIPTS = new Set(['get', 'incr', 'pexpire', 'zremrangebyscore', 'zscore', 'zcard', 'zadd', 'pttl']);

/** Per request, between two counter readings (the reading's own statement and command are subtracted). */
function waits(before, after, requests) {
  const pgStatements = after.pg.xacts - before.pg.xacts - 1;
  const pgMs = after.pg.active_ms - before.pg.active_ms;
  const redisCalls = {};
  let calls = 0;
  let usec = 0;
  for (const [k, v] of Object.entries(after.redis)) {
    const b = before.redis[k] ?? { calls: 0, usec: 0 };
    const dc = v.calls - b.calls - (k === 'info' ? 1 : 0);
    if (dc <= 0) continue;
    redisCalls[k] = dc / requests;
    calls += dc;
    usec += v.usec - b.usec;
  }
  // Commands the limiter's scripts run inside Redis are counted by commandstats too: they are not round trips.
  let trips = 0;
  for (const [k, v] of Object.entries(redisCalls)) if (!IN_SCRIPTS.has(k)) trips += v;
  return {
    pg_statements_per_request: pgStatements / requests,
    redis_round_trips_per_request: trips,
    pg_exec_us_per_statement: pgStatements > 0 ? (pgMs * 1000) / pgStatements : NaN,
    redis_commands_per_request: calls / requests,
    redis_by_command_per_request: redisCalls,
    redis_us_per_command: calls > 0 ? usec / calls : NaN,
  };
}

const samples = Object.fromEntries(targets.map((t) => [t.id, []]));
let port = 19_100;
try {
  for (let r = 1; r <= rounds; r++) {
    // Odd rounds in the listed order, even rounds reversed: paired rows take turns at going first.
    for (const t of r % 2 === 1 ? targets : [...targets].reverse()) {
      port++;
      const child = await startServer(t, port);
      try {
        const measure = t.load.rate ? fixedRate : wrk;
        if (warmup > 0) measure(port, warmup, t.load);
        const counters0 = t.shared ? await backendCounters() : undefined;
        const hist0 = t.load.rate ? await serverHistogram(port, t.load.path, t.load.method) : undefined;
        const cpu0 = cpuSeconds(child.pid);
        const s = measure(port, duration, t.load);
        s.cpu_us = ((cpuSeconds(child.pid) - cpu0) / s.requests) * 1e6;
        if (hist0) {
          const hist1 = await serverHistogram(port, t.load.path, t.load.method).catch((e) => {
            console.warn(`${t.name}: /metrics after the load failed (${e.message}); server ${child.exitCode === null && child.signalCode === null ? 'still running' : `exited (${child.exitCode ?? child.signalCode})`}; its last output: ${child.log().slice(-2000) || '(none)'}`);
            return undefined;
          });
          if (hist1 !== undefined) s.server_tail = serverTail(hist0, hist1);
        }
        if (counters0) s.waits = waits(counters0, await backendCounters(), s.requests);
        if (t.load.bytes) s.bytes = await t.load.bytes(port);
        if (s.non2xx > 0) throw new Error(`${t.name}: ${s.non2xx} non-2xx responses`);
        samples[t.id].push(s);
        const label = `${t.load.method} ${t.load === postLoad || t.load.group === 'compression' ? '' : `${t.load.path} `}${t.name}`;
        const lagText = s.send_lag_p99 !== undefined ? `  generator's send lag p99 ${s.send_lag_p99.toFixed(2)} ms` : '';
        const tail = lagText + (s.server_tail ? `  in the server: ${(s.server_tail.over_10ms * 100).toFixed(2)}% over 10 ms, ${(s.server_tail.over_20ms * 100).toFixed(2)}% over 20 ms` : '');
        console.log(`round ${r}/${rounds}  ${label.padEnd(40)} ${Math.round(s.rps).toString().padStart(7)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  ${s.cpu_us.toFixed(1)} µs CPU/req${tail}`);
      } finally {
        // With node flags (a profile to write), end it gracefully first.
        if (NODE_ARGS.length > 0 && child.exitCode === null) {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await Promise.race([exited, sleep(15_000)]);
        }
        child.kill('SIGKILL');
        current = null;
        await sleep(300);
      }
    }
  }
} finally {
  await cleanup();
}

const median = (xs) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)];
const medianOf = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** A fixed-rate row's median round is the one of median p99 (every round achieves about the same rate). */
const medianByP99 = (xs) => [...xs].sort((a, b) => a.p99 - b.p99)[Math.floor(xs.length / 2)];
const results = targets.map((t) => ({
  id: t.id, group: t.group, name: t.name, method: t.load.method, path: t.load.path, encoding: t.load.encoding, ...(t.load.rate ? medianByP99 : median)(samples[t.id]),
  cpu_us: medianOf(samples[t.id].map((s) => s.cpu_us)), samples: samples[t.id].map((s) => Math.round(s.rps)),
  p99s: samples[t.id].map((s) => s.p99),
  waits: t.shared ? median(samples[t.id]).waits : undefined,
}));
/** Median over rounds of a/b measured in the same round (NaN when a group did not run). */
const paired = (a, b) => (samples[a]?.length && samples[b]?.length ? medianOf(samples[a].map((s, i) => s.rps / samples[b][i].rps)) : NaN);
/** The same for CPU per request. */
const pairedCpu = (a, b) => (samples[a]?.length && samples[b]?.length ? medianOf(samples[a].map((s, i) => s.cpu_us / samples[b][i].cpu_us)) : NaN);
const ratios = {
  scour_uws_vs_bare_uws: paired('scour_uws', 'bare_uws'),
  scour_uws_vs_fastify: paired('scour_uws', 'fastify'),
  scour_uws_vs_baseline_build: paired('scour_uws', 'scour_uws_baseline'),
  scour_usage_embedded_vs_baseline_build: paired('scour_usage_embedded', 'scour_usage_embedded_baseline'),
  scour_uws_vs_hand_written: paired('scour_uws', 'ideal_uws'),
  hand_written_vs_bare_uws: paired('ideal_uws', 'bare_uws'),
  scour_node_vs_fastify: paired('scour_node', 'fastify'),
  bare_uws_vs_fastify: paired('bare_uws', 'fastify'),
  scour_usage_embedded_vs_bare_uws_get: paired('scour_usage_embedded', 'bare_uws_get'),
  scour_usage_shared_vs_bare_uws_get: paired('scour_usage_shared', 'bare_uws_get'),
  scour_usage_shared_vs_embedded: paired('scour_usage_shared', 'scour_usage_embedded'),
  scour_usage_shared_single_vs_embedded: paired('scour_usage_shared_single', 'scour_usage_embedded'),
  bare_uws_get_vs_bare_uws: paired('bare_uws_get', 'bare_uws'),
  billable_group_commit_vs_single: paired('scour_billable_shared', 'scour_billable_shared_single'),
  search_vs_before: paired('scour_search_shared', 'scour_search_shared_before'),
  search_unshared_vs_now: paired('scour_search_shared_unshared', 'scour_search_shared'),
  search_cpu_vs_before: pairedCpu('scour_search_shared', 'scour_search_shared_before'),
  billable_after_vs_held: paired('scour_billable_shared_after', 'scour_billable_shared'),
  openapi_br_vs_identity: paired('openapi_br', 'openapi_identity'),
  lorem_gzip_vs_identity: paired('lorem_gzip', 'lorem_identity'),
  lorem_br_vs_identity: paired('lorem_br', 'lorem_identity'),
  openapi_br_cpu_vs_identity: pairedCpu('openapi_br', 'openapi_identity'),
  lorem_gzip_cpu_vs_identity: pairedCpu('lorem_gzip', 'lorem_identity'),
  lorem_br_cpu_vs_identity: pairedCpu('lorem_br', 'lorem_identity'),
};
const targetsMet = Object.fromEntries(Object.entries({
  'Scour/uWS >= 70% of bare uWS': runs('tools') && ratios.scour_uws_vs_bare_uws >= 0.7,
  'Scour/uWS >= 1.5x Fastify': runs('tools') && ratios.scour_uws_vs_fastify >= 1.5,
  'Scour GET /v1/usage (embedded) >= 40% of bare uWS': runs('usage') && ratios.scour_usage_embedded_vs_bare_uws_get >= 0.4,
  'Scour GET /v1/usage (shared) >= 40% of embedded': runs('usage') && ratios.scour_usage_shared_vs_embedded >= 0.4,
  [`Scour POST ${SEARCH_PATH} (shared) p99 < 20 ms at ${RATE} req/s`]: runs('billable') && medianOf(samples.scour_search_shared?.map((s) => s.p99) ?? [NaN]) < 20,
}).filter(([k]) => runs(k.includes('/v1/usage') ? 'usage' : k.includes(SEARCH_PATH) ? 'billable' : 'tools')));
const baselineOf = { openapi_br: 'openapi_identity', lorem_gzip: 'lorem_identity', lorem_br: 'lorem_identity' };

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const lines = [
  '',
  `wrk -t1 -c${connections} -d${duration}s, ${rounds} interleaved rounds, ${pin ? 'server on core 0, wrk on core 1' : 'unpinned'}`,
  'requests/s, p50, p99, CPU: the median round; ratios: median of same-round ratios',
  ...(runs('tools') ? [
    '',
    `POST ${PATH} (body {})`,
    '',
    '| server | requests/s | p50 ms | p99 ms | vs bare uWS | vs Fastify | rounds (req/s) |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...results.filter((r) => r.group === 'tools').map((r) => `| ${r.name} | ${fmt(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(paired(r.id, 'bare_uws') * 100).toFixed(0)}% | ${paired(r.id, 'fastify').toFixed(2)}x | ${r.samples.map(fmt).join(', ')} |`),
    ...(BASELINE_ROOT ? ['', `Scour over uWS, this build vs the baseline build, same rounds: ${(ratios.scour_uws_vs_baseline_build * 100).toFixed(0)}%`] : []),
  ] : []),
  ...(runs('usage') ? [
    '',
    `GET ${USAGE_PATH} with "Authorization: Bearer <key>" (plan ${USAGE_PLAN}, usage rate limit lifted), same rounds; the ceiling answers a fixed ${USAGE_PATH}-shaped body without auth`,
    '',
    '| server | path | requests/s | p50 ms | p99 ms | vs bare uWS GET | rounds (req/s) |',
    '|---|---|---:|---:|---:|---:|---|',
    ...results.filter((r) => r.group === 'usage').map((r) => `| ${r.name} | GET ${r.path} | ${fmt(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(paired(r.id, 'bare_uws_get') * 100).toFixed(0)}% | ${r.samples.map(fmt).join(', ')} |`),
    '',
    ...(BASELINE_ROOT ? [`Scour GET ${USAGE_PATH} (embedded), this build vs the baseline build, same rounds: ${(ratios.scour_usage_embedded_vs_baseline_build * 100).toFixed(0)}%`] : []),
    `Scour GET ${USAGE_PATH}, shared vs embedded: ${(ratios.scour_usage_shared_vs_embedded * 100).toFixed(0)}% (target >= 40%); with group commit off (every request its own read): ${(ratios.scour_usage_shared_single_vs_embedded * 100).toFixed(0)}%`,
  ] : []),
  ...(runs('billable') ? [
    '',
    `POST ${SEARCH_PATH} ${SEARCH_BODY} with a key (plan ${USAGE_PLAN}, limits lifted, concurrency cap 1000), shared configuration, fixed rate ${RATE} req/s (${RATE_TOOL === 'open-loop' ? 'open loop: scour loadtest\'s generator, 50 connections, latency from when each request was due' : 'autocannon overallRate, 50 connections'})`,
    '',
    '| server | achieved req/s | p50 ms | p99 ms | CPU µs/req | p99 by round (ms) | generator send lag p99 ms | in the server: over 10 ms / over 20 ms |',
    '|---|---:|---:|---:|---:|---|---:|---:|',
    ...results.filter((r) => r.group === 'billable').map((r) => `| ${r.name} | ${fmt(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpu_us.toFixed(1)} | ${r.p99s.map((x) => x.toFixed(1)).join(', ')} | ${r.send_lag_p99?.toFixed(2) ?? ''} | ${r.server_tail ? `${(r.server_tail.over_10ms * 100).toFixed(2)}% / ${(r.server_tail.over_20ms * 100).toFixed(2)}%` : ''} |`),
    '',
    `POST ${SEARCH_PATH}, now vs before part 3, same rounds: achieved req/s ${(ratios.search_vs_before * 100).toFixed(0)}%, CPU/req ${ratios.search_cpu_vs_before.toFixed(2)}x; with the collections lookup unshared (one change undone), achieved req/s ${(ratios.search_unshared_vs_now * 100).toFixed(0)}% of now`,
    `POST ${SEARCH_PATH} p99 by round, now / collections unshared / before: ${(samples.scour_search_shared ?? []).map((s, i) => [s, samples.scour_search_shared_unshared?.[i], samples.scour_search_shared_before?.[i]].map((x) => x?.p99.toFixed(0)).join('/') + ' ms').join(', ')}`,
    `POST ${BILLABLE_PATH}, charged after vs held, same rounds: achieved req/s ${(ratios.billable_after_vs_held * 100).toFixed(0)}%; p99 after/held by round ${(samples.scour_billable_shared_after ?? []).map((s, i) => `${s.p99.toFixed(0)}/${samples.scour_billable_shared?.[i]?.p99.toFixed(0)} ms`).join(', ')}`,
    `POST ${BILLABLE_PATH}, group commit on vs off, same rounds: achieved req/s ${(ratios.billable_group_commit_vs_single * 100).toFixed(0)}% of off; p99 on/off by round ${(samples.scour_billable_shared ?? []).map((s, i) => `${s.p99.toFixed(0)}/${samples.scour_billable_shared_single?.[i]?.p99.toFixed(0)} ms`).join(', ')}`,
  ] : []),
  ...(results.some((r) => r.waits) ? [
    '',
    'Where a shared-mode request waits (median round; per request; pools: PostgreSQL pg.Pool max 10 per process for accounts (another for the search index), Redis one pipelined ioredis connection for limits plus one subscriber and one publisher for key invalidations)',
    '',
    '| row | API CPU µs/req | PostgreSQL statements/req | PostgreSQL exec µs/statement | Redis round trips/req | Redis commands run/req (in scripts too) | Redis µs/command | Redis commands per request |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...results.filter((r) => r.waits).map((r) => {
      const w = r.waits;
      const by = Object.entries(w.redis_by_command_per_request).filter(([, v]) => v >= 0.01).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
      return `| ${r.name} | ${r.cpu_us.toFixed(1)} | ${w.pg_statements_per_request.toFixed(2)} | ${w.pg_exec_us_per_statement.toFixed(1)} | ${w.redis_round_trips_per_request.toFixed(2)} | ${w.redis_commands_per_request.toFixed(2)} | ${w.redis_us_per_command.toFixed(1)} | ${by} |`;
    }),
  ] : []),
  ...(runs('compression') ? [
    '',
    'Response compression, Scour over uWS; CPU: server CPU time (all threads) per request',
    '',
    '| answer | Accept-Encoding | bytes | requests/s | p50 ms | p99 ms | CPU µs/req | throughput vs uncompressed | CPU vs uncompressed |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...results.filter((r) => r.group === 'compression').map((r) => {
      const base = baselineOf[r.id];
      return `| ${r.name} | ${r.encoding} | ${fmt(r.bytes)} | ${fmt(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpu_us.toFixed(1)} | ${base ? `${(paired(r.id, base) * 100).toFixed(0)}%` : ''} | ${base ? `${pairedCpu(r.id, base).toFixed(2)}x` : ''} |`;
    }),
  ] : []),
  '',
  ...Object.entries(targetsMet).map(([k, v]) => `${v ? 'MET ' : 'MISS'}  ${k}`),
];
console.log(lines.join('\n'));

const out = {
  benchmark: 'http',
  date: new Date().toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  pinned: pin,
  settings: {
    duration_s: duration, warmup_s: warmup, rounds, connections, load_generator: 'wrk -t1',
    ...(runs('tools') ? { path: PATH } : {}),
    ...(runs('billable') ? { billable: { method: 'POST', path: SEARCH_PATH, body: SEARCH_BODY, rate_per_s: RATE, load_generator: RATE_TOOL === 'open-loop' ? 'open loop (scour loadtest engine), 50 connections, latency from due time' : 'autocannon overallRate, 50 connections', config: 'shared' } } : {}),
    ...(runs('usage') ? { usage: {
      method: 'GET', path: USAGE_PATH, auth: 'Authorization: Bearer <api_key from `scour accounts create --plan unicorn --json`>', plan: USAGE_PLAN, plans_override: PLANS_OVERRIDE,
      embedded: 'SQLite in a fresh data dir, in-process limiter', shared: 'fresh PostgreSQL database, Redis with a unique key prefix (both removed after the run)',
      ceiling: `bare uWS answering a fixed ${USAGE_PATH}-shaped JSON body, no auth`,
    } } : {}),
    ...(runs('compression') ? { compression: {
      server: 'Scour over uWS (SCOUR_HTTP_ADAPTER=uws)', openapi: `GET ${OPENAPI_PATH}`, lorem: `POST ${LOREM_PATH} ${LOREM_BODY}`,
      cpu: 'user + system CPU of the server process (all threads) during the measured run, divided by its requests (/proc/<pid>/stat)',
    } } : {}),
  },
  groups: only,
  results: results.map(({ id, group, name, method, path, encoding, rps, p50, p99, cpu_us, bytes, samples: s, waits: w }) => ({
    id, group, name, method, path, ...(group === 'compression' ? { accept_encoding: encoding, response_bytes: bytes } : {}), ...(w ? { waits: w } : {}),
    requests_per_s: Math.round(rps), p50_ms: p50, p99_ms: p99, cpu_us_per_request: Math.round(cpu_us * 10) / 10, round_rps: s,
  })),
  ratios,
  targets: targetsMet,
};
mkdirSync(join(root, 'benchmarks/results'), { recursive: true });
const resultFile = `${onlyTargets !== undefined ? `http-${onlyTargets.join('-')}` : only.length === GROUPS.length ? 'http' : `http-${only.join('-')}`}${BASELINE_ROOT ? '-vs-baseline' : ''}.json`;
writeFileSync(join(root, 'benchmarks/results', resultFile), `${JSON.stringify(out, null, 2)}\n`);
console.log(`\nwrote benchmarks/results/${resultFile}`);
