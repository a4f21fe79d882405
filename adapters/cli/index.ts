/**
 * The `scour` command: `serve` (default) starts the API on the settings in
 * the environment; `openapi` prints the OpenAPI document; `doctor` checks
 * what the configuration needs; `help`, `version`; the admin, index, crawl
 * and API commands.
 * Invalid settings stop start-up with a clear message and exit code 2.
 *
 * The commands live here; what they run on (the settings, a whole Scour,
 * the stores, the local crawler, ...) is handed in by the composition root
 * (config/cli.ts, the process's entry point) as a CliHost: this adapter
 * imports only core and other adapters.
 */
import type { AccountAdmin } from '../../core/account-admin.js';
import { ConfigError } from '../../core/config-error.js';
import type { JobStore } from '../../core/jobs.js';
import type { Route } from '../../core/plugin.js';
import type { AccountStore, Logger } from '../../core/ports.js';
import { PluginError } from '../../core/registry.js';
import type { SearchIndex } from '../../core/search.js';
import { ACCOUNTS_HELP, accountsCommand } from './accounts.js';
import { INDEX_HELP } from './index-cmd.js';
import { CRAWL_HELP, type LocalCrawler } from './crawl-cmd.js';
import { API_HELP } from './api-cmds.js';
import type { DoctorProbes, DoctorSettings } from './doctor.js';
import { CommandError, UsageError } from './errors.js';

/** The settings the commands read (the composition root's Settings has these and more). */
export interface CliSettings extends DoctorSettings {
  readonly logLevel: string;
  readonly bootstrapKey: boolean;
  readonly workerConcurrency: number;
}

/** A whole Scour as the commands use it (config/container.ts builds it). */
export interface CliScour {
  readonly logger: Logger;
  readonly app: { readonly compiled: readonly { readonly route: Route<any, any> }[] };
  start(): Promise<{ readonly url: string }>;
  startWorker(): Promise<{ readonly workerId: string; readonly mode: string }>;
  stop(): Promise<boolean>;
  bootstrap(): Promise<{ readonly apiKey: string; readonly accountId: string } | undefined>;
}

interface Closable {
  close(): Promise<void> | void;
}

/**
 * What the commands run on, from the composition root. Everything that
 * loads more than the command line needs is a function, called once the
 * command is known (so `scour accounts ...` loads no HTTP or plugin code).
 */
export interface CliHost<S extends CliSettings = CliSettings> {
  readonly version: string;
  /** The environment variables the settings read, each with its one-line description (for help). */
  readonly environment: Readonly<Record<string, string>>;
  /** The settings from the environment; throws ConfigError when one is invalid. */
  loadSettings(): S;
  /** The API server (role 'serve') or a jobs worker (role 'worker') on these settings. */
  createScour(settings: S, role: 'serve' | 'worker'): Promise<CliScour>;
  /** Account administration on the configured store, without the server. */
  openAccounts(settings: S): Promise<{ readonly accounts: AccountAdmin; readonly jobs: JobStore } & Closable>;
  /** The configured account store. */
  openStore(settings: S): Promise<{ readonly store: AccountStore } & Closable>;
  /** The configured local search index. */
  openSearchIndex(settings: S): Promise<{ readonly index: SearchIndex } & Closable>;
  /** What `scour crawl --local` crawls with (loads Crawlee, the fetcher and the extractors). */
  localCrawler(settings: S): Promise<LocalCrawler>;
  /** What `scour doctor` borrows from plugins (the process reader, the proxy list parser, the enabled search providers). */
  doctorProbes(settings: S): Promise<DoctorProbes>;
}

const help = (host: CliHost<any>) => `scour ${host.version}: web search, scrape and research API

Usage:
  scour serve        start the HTTP API (default)
  scour worker       run bulk jobs and webhook deliveries, no HTTP (scales out beside the API;
                     with DATABASE_URL and REDIS_URL it takes jobs from the BullMQ queue)
  scour openapi      print the OpenAPI 3.1 document
  scour doctor       check what this configuration needs (Node.js, uWS, SQLite, Chromium,
                     PostgreSQL and Redis when set, egress, proxies, search providers);
                     exit 1 if something is missing [--json] [--offline: no provider contacted]
  scour loadtest     load-test a Scour server with a named scenario (scour loadtest --help)
  scour mcp          MCP server on stdio for a running Scour (SCOUR_URL, SCOUR_API_KEY)
  scour version      print the version
  scour help         this text

${API_HELP}
${ACCOUNTS_HELP}
${INDEX_HELP}
${CRAWL_HELP}
Environment (all optional):
${Object.entries(host.environment).map(([k, v]) => `  ${k.padEnd(26)}${v}`).join('\n')}
`;

async function serve<S extends CliSettings>(host: CliHost<S>): Promise<void> {
  const settings = host.loadSettings();
  const scour = await host.createScour(settings, 'serve');
  let url: string;
  try {
    ({ url } = await scour.start());
  } catch (e) {
    // A taken port (LISTEN_FAILED): close what was opened, then main() prints the one line.
    await scour.stop().catch(() => undefined);
    throw e;
  }
  scour.logger.info({ url, adapter: settings.httpAdapter, version: host.version, store: settings.databaseUrl ? 'postgres' : 'sqlite', limiter: settings.redisUrl ? 'redis' : 'memory' }, `Scour listening on ${url}`);
  await warnIfNoChromium(scour.logger, settings.chromiumPath);
  const stopping = onSignals(scour.logger, () => scour.stop(), 'finishing in-flight requests');
  if (settings.bootstrapKey) {
    // A shutdown that lands while this runs closes the store under it: that failure is expected, not reported.
    const dev = await scour.bootstrap().catch((e: unknown) => {
      if (!stopping()) scour.logger.error({ err: String(e) }, 'could not create the development key');
      return undefined;
    });
    // Printed once, on stdout, never through the logger (keys are never logged).
    if (dev) {
      process.stdout.write(`
  Development API key (account ${dev.accountId}, plan unicorn). Shown once; only its hash is stored:

    ${dev.apiKey}

  Try it:  curl -H "Authorization: Bearer ${dev.apiKey}" ${url}/v1/usage
  More keys: npx scour keys create --account ${dev.accountId}

`);
    }
  }
}

/** One clear start-up line when render_js cannot work (it answers 503 until Chromium is there), with the fix. */
async function warnIfNoChromium(logger: Logger, chromiumPath: string): Promise<void> {
  const { chromiumProblem } = await import('./doctor.js');
  const chromium = chromiumProblem(chromiumPath);
  if (chromium) logger.warn({ chromium: chromiumPath, fix: chromium.fix }, `render_js unavailable (answers 503): ${chromium.problem}; fix: ${chromium.fix}`);
}

/** Stop on SIGTERM/SIGINT: `stop` resolves to whether everything finished in time. */
function onSignals(logger: Logger, stop: () => Promise<boolean>, what: string): () => boolean {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `shutting down: ${what}`);
    stop().then(
      (drained) => {
        logger.info({ drained }, 'stopped');
        process.exit(0);
      },
      (e) => {
        logger.error({ err: String(e) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return () => stopping;
}

async function worker<S extends CliSettings>(host: CliHost<S>): Promise<void> {
  const settings = host.loadSettings();
  const scour = await host.createScour(settings, 'worker');
  const { workerId, mode } = await scour.startWorker();
  scour.logger.info({ worker: workerId, mode, concurrency: settings.workerConcurrency, version: host.version, store: settings.databaseUrl ? 'postgres' : 'sqlite' }, `Scour worker ${workerId} running jobs (${mode})`);
  await warnIfNoChromium(scour.logger, settings.chromiumPath);
  onSignals(scour.logger, () => scour.stop(), 'interrupting running jobs (another process resumes them)');
}

/** Run a command on the configured account store and search index (no server), closing both however it ends. */
async function withIndex<S extends CliSettings>(host: CliHost<S>, work: (settings: S, index: SearchIndex, store: AccountStore) => Promise<number>): Promise<number> {
  const settings = quiet(host);
  const opened = await host.openStore(settings);
  try {
    const { index, close } = await host.openSearchIndex(settings);
    try {
      return await work(settings, index, opened.store);
    } finally {
      await close();
    }
  } finally {
    await opened.close();
  }
}

/** An API command (adapters/cli/api-cmds.ts) against a running server; its exit code by error class. */
async function apiMain(cmd: string, args: readonly string[]): Promise<void> {
  const { apiCommand } = await import('./api-cmds.js');
  usageHelp = API_HELP;
  const abort = new AbortController();
  process.once('SIGINT', () => {
    abort.abort();
    process.once('SIGINT', () => process.exit(130));
  });
  process.exitCode = await apiCommand(cmd, args, {
    env: process.env, out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t),
    stdoutTty: process.stdout.isTTY === true, stderrTty: process.stderr.isTTY === true, signal: abort.signal,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    pollMs: process.env.SCOUR_POLL_MS ? Math.max(50, Number(process.env.SCOUR_POLL_MS) || 1000) : undefined,
  });
}

/** The settings, with logging off (commands that print their own output). */
const quiet = <S extends CliSettings>(host: CliHost<S>): S => ({ ...host.loadSettings(), logLevel: 'silent' });

/** The help printed after a wrong command line. */
let usageHelp: string = ACCOUNTS_HELP;

async function main<S extends CliSettings>(argv: readonly string[], host: CliHost<S>): Promise<void> {
  const cmd = argv[0] ?? 'serve';
  switch (cmd) {
    case 'serve':
      return serve(host);
    case 'worker':
      return worker(host);
    case 'doctor': {
      const { doctor } = await import('./doctor.js');
      const settings = host.loadSettings();
      process.exitCode = await doctor(settings, argv.slice(1), { version: host.version, probes: () => host.doctorProbes(settings) });
      return;
    }
    case 'openapi': {
      const { openApiDocument } = await import('../../core/openapi.js');
      const scour = await host.createScour(quiet(host), 'serve');
      process.stdout.write(`${JSON.stringify(openApiDocument(scour.app.compiled.map((c) => c.route), { title: 'Scour API', version: host.version }), null, 2)}\n`);
      await scour.stop();
      return;
    }
    case 'accounts':
    case 'keys':
    case 'credits':
    case 'webhooks': {
      // The command line is checked before the store is opened: a typo never touches the database.
      const work = accountsCommand(cmd, argv.slice(1));
      const { accounts, jobs, close } = await host.openAccounts(quiet(host));
      try {
        process.stdout.write(await work(accounts, jobs));
      } finally {
        await close();
      }
      return;
    }
    case 'index': {
      const { indexCommand } = await import('./index-cmd.js');
      usageHelp = INDEX_HELP;
      process.exitCode = await withIndex(host, (_settings, index, store) => indexCommand(argv.slice(1), {
        index, store, tty: process.stderr.isTTY === true, stdin: process.stdin,
        out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t),
      }));
      return;
    }
    case 'crawl': {
      // scour crawl URL goes to the server (POST /v1/crawl); --local runs the crawl in this process into the configured index.
      if (!argv.slice(1).includes('--local')) return apiMain(cmd, argv.slice(1));
      const { crawlCommand } = await import('./crawl-cmd.js');
      usageHelp = CRAWL_HELP;
      const abort = new AbortController();
      // Ctrl-C: stop fetching, keep what was stored, print the summary (a second one exits at once).
      process.once('SIGINT', () => {
        abort.abort();
        process.once('SIGINT', () => process.exit(130));
      });
      process.exitCode = await withIndex(host, (settings, index, store) => crawlCommand(argv.slice(1).filter((a) => a !== '--local'), {
        crawler: () => host.localCrawler(settings), index, store, tty: process.stderr.isTTY === true, signal: abort.signal,
        out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t),
      }));
      return;
    }
    case 'loadtest': {
      const { loadtest, LOADTEST_HELP } = await import('./loadtest/index.js');
      usageHelp = LOADTEST_HELP;
      if (argv.includes('--help') || argv.includes('-h')) {
        process.stdout.write(LOADTEST_HELP);
        return;
      }
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      await loadtest(argv.slice(1), {
        out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), tty: process.stdout.isTTY === true, env: process.env, signal: abort.signal,
      });
      return;
    }
    case 'search':
    case 'scrape':
    case 'bulk':
    case 'map':
    case 'research':
    case 'usage':
    case 'tools':
    case 'login':
    case 'logout':
      return apiMain(cmd, argv.slice(1));
    case 'mcp': {
      const { runMcpStdio } = await import('../mcp/stdio.js');
      return runMcpStdio({ env: process.env, version: host.version });
    }
    case 'version':
    case '--version':
      process.stdout.write(`${host.version}\n`);
      return;
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(help(host));
      return;
    default:
      process.stderr.write(`scour: unknown command ${JSON.stringify(cmd)}\n\n${help(host)}`);
      process.exitCode = 2;
  }
}

/** Runs one command line; a failure is printed as one line (a usage error with the help after it) and exits 2 (usage, settings, plugins) or 1. */
export function runCli<S extends CliSettings>(argv: readonly string[], host: CliHost<S>): Promise<void> {
  return main(argv, host).catch((e: unknown) => {
    if (e instanceof UsageError) {
      process.stderr.write(`scour: ${e.message}\n\n${usageHelp}`);
      process.exit(2);
    }
    if (e instanceof CommandError || (e instanceof Error && (e as { code?: unknown }).code === 'LISTEN_FAILED')) {
      process.stderr.write(`scour: ${e.message}\n`);
      process.exit(1);
    }
    if (e instanceof ConfigError || e instanceof PluginError) {
      process.stderr.write(`scour: ${e.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`scour: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
