/**
 * `scour loadtest SCENARIO --url URL [--duration S | --requests N]
 * [--rate R | --connections N] [--json] [--html FILE] [--out FILE]`: points
 * a named scenario at any Scour server, samples the server's /metrics every
 * second, and reports throughput, latency percentiles, status classes,
 * errors, and the server's memory, CPU, file descriptors and Chromium
 * processes: a table (or JSON with --json or when piped), plus a JSON file
 * and a self-contained HTML page when asked.
 */
import { writeFileSync } from 'node:fs';
import { argTokens } from '../args.js';
import { CommandError, UsageError } from '../errors.js';
import { runLoad, type LoadMode } from './engine.js';
import { htmlReport, summarise, textReport, type LoadReport } from './report.js';
import { startSampler } from './sampler.js';
import { prepareScenario, RENDER_TAGS, SCENARIO_HELP, SCENARIOS, SetupError, type ScenarioName } from './scenarios.js';

export const LOADTEST_HELP = `Load-test a Scour server (traffic: that server and a loopback site of the test's own):
  scour loadtest <scenario> [--url URL] [--duration S | --requests N] [--rate R | --connections N]
                 [--accounts N] [--admin-token T] [--json] [--out FILE.json] [--html FILE.html]
    --url          the server (default SCOUR_URL, else http://localhost:8080)
    --duration     seconds to run (default 10); --requests: stop after N requests instead
    --rate         open loop: R requests a second, latency measured from when each was due
                   (no coordinated omission); --connections: closed loop with N connections
                   (default: --connections 32)
    --accounts     accounts to spread the load over (default 1; each has its own rate limits)
    --admin-token  the server's SCOUR_ADMIN_TOKEN (default: that variable): scenarios make their
                   accounts (and the search corpus) through the admin API
  The server needs SCOUR_ADMIN_TOKEN, SCOUR_ALLOW_PRIVATE_TARGETS=loopback for the scrape
  scenarios, and plan limits that fit the load (SCOUR_PLANS), or the 429s are what you measure.
  Scenarios:
${SCENARIOS.map((s) => `    ${s.padEnd(15)}${SCENARIO_HELP[s]}`).join('\n')}
  Exit: 0 done (whatever the server answered), 1 the set-up failed, 2 a wrong command line.
`;

export interface LoadtestIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether stdout is a terminal (a table; otherwise JSON). */
  readonly tty: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
}

interface Args {
  scenario: ScenarioName;
  url: string;
  durationMs?: number;
  requests?: number;
  mode: LoadMode;
  accounts: number;
  adminToken: string | undefined;
  json: boolean;
  out?: string;
  html?: string;
}

function parse(argv: readonly string[], io: LoadtestIo): Args {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  const takesValue = new Set(['--url', '--duration', '--requests', '--rate', '--connections', '--accounts', '--admin-token', '--out', '--html']);
  for (const t of argTokens(argv, [...takesValue].map((n) => n.slice(2)))) {
    if (t.raw === '--help' || t.raw === '-h') throw new UsageError('help');
    if (t.kind === 'option') {
      const name = `--${t.name}`;
      if (name === '--json') { flags.set(name, true); continue; }
      if (!takesValue.has(name)) throw new UsageError(`unknown option ${JSON.stringify(name)}`);
      const v = t.value;
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      if (flags.has(name)) throw new UsageError(`${name} given twice`);
      flags.set(name, v);
    } else positional.push(t.value);
  }
  if (positional.length !== 1) throw new UsageError(positional.length === 0 ? 'which scenario?' : `one scenario, not ${positional.length}`);
  const scenario = positional[0] as ScenarioName;
  if (!SCENARIOS.includes(scenario)) throw new UsageError(`unknown scenario ${JSON.stringify(positional[0])}: ${SCENARIOS.join(', ')}`);
  const num = (name: string, min: number, max: number, integer = true): number | undefined => {
    const v = flags.get(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (typeof v !== 'string' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
      throw new UsageError(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    }
    return n;
  };
  const duration = num('--duration', 0.1, 7 * 86_400, false);
  const requests = num('--requests', 1, 1e9);
  if (duration !== undefined && requests !== undefined) throw new UsageError('give --duration or --requests, not both');
  const rate = num('--rate', 0.1, 1e6, false);
  const connections = num('--connections', 1, 10_000);
  if (rate !== undefined && connections !== undefined) throw new UsageError('give --rate (open loop) or --connections (closed loop), not both');
  const url = String(flags.get('--url') ?? io.env.SCOUR_URL ?? 'http://localhost:8080').replace(/(?<!\/)\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url is not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError('--url must be http or https');
  return {
    scenario, url,
    ...(requests !== undefined ? { requests } : { durationMs: (duration ?? 10) * 1000 }),
    mode: rate !== undefined ? { kind: 'open', rate } : { kind: 'closed', connections: connections ?? 32 },
    accounts: num('--accounts', 1, 1000) ?? 1,
    adminToken: (flags.get('--admin-token') as string | undefined) ?? io.env.SCOUR_ADMIN_TOKEN,
    json: flags.get('--json') === true || !io.tty,
    ...(flags.has('--out') ? { out: flags.get('--out') as string } : {}),
    ...(flags.has('--html') ? { html: flags.get('--html') as string } : {}),
  };
}

/** Runs one scenario; the report, or a thrown UsageError / CommandError. */
export async function loadtest(argv: readonly string[], io: LoadtestIo): Promise<LoadReport> {
  const a = parse(argv, io);
  const log = (line: string) => io.err(`loadtest: ${line}\n`);
  let prepared;
  try {
    prepared = await prepareScenario(a.scenario, { base: a.url, adminToken: a.adminToken, accounts: a.accounts, log });
  } catch (e) {
    if (e instanceof SetupError) throw new CommandError(`set-up failed: ${e.message}`);
    throw new CommandError(`set-up failed: cannot reach ${a.url} (${(e as Error).message})`);
  }
  const startedAt = new Date().toISOString();
  const sampler = startSampler(a.url);
  try {
    log(`${a.scenario}: ${a.mode.kind === 'open' ? `${a.mode.rate} req/s` : `${a.mode.connections} connections`} for ${a.requests !== undefined ? `${a.requests} requests` : `${a.durationMs! / 1000} s`}`);
    const result = await runLoad({
      base: a.url, mode: a.mode, next: prepared.next, groups: { 'non-render': (tag) => !RENDER_TAGS.has(tag) },
      ...(a.durationMs !== undefined ? { durationMs: a.durationMs } : {}),
      ...(a.requests !== undefined ? { requests: a.requests } : {}),
      ...(io.signal ? { signal: io.signal } : {}),
    });
    await sampler.stop();
    const report: LoadReport = { scenario: a.scenario, url: a.url, startedAt, result, server: sampler.samples, summary: summarise(sampler.samples) };
    if (a.out) writeFileSync(a.out, `${JSON.stringify(report, null, 2)}\n`);
    if (a.html) writeFileSync(a.html, htmlReport(report));
    io.out(a.json ? `${JSON.stringify(report)}\n` : textReport(report));
    return report;
  } finally {
    await sampler.stop();
    await prepared.close();
  }
}
