/**
 * The `scour` command: `serve` (default) starts the API on the settings in
 * the environment; `openapi` prints the OpenAPI document; `doctor` checks
 * what the configuration needs; `help`, `version`.
 * Invalid settings stop start-up with a clear message and exit code 2.
 */
import 'reflect-metadata';
import { ConfigError, ENV_VARS, loadSettings, type Settings } from '../../config/env.js';
import type { AccountStore } from '../../core/ports.js';
import type { SearchIndex } from '../../core/search.js';
import { ACCOUNTS_HELP, accountsCommand, CommandError, UsageError } from './accounts.js';
import { INDEX_HELP } from './index-cmd.js';
import { CRAWL_HELP } from './crawl-cmd.js';
import { API_HELP } from './api-cmds.js';
import { VERSION } from '../../config/version.js';
import { PluginError } from '../../core/registry.js';
import type { Logger } from '../../core/ports.js';

const HELP = `scour ${VERSION}: web search, scrape and research API

Usage:
  scour serve        start the HTTP API (default)
  scour worker       run bulk jobs and webhook deliveries, no HTTP (scales out beside the API;
                     with DATABASE_URL and REDIS_URL it takes jobs from the BullMQ queue)
  scour openapi      print the OpenAPI 3.1 document
  scour doctor       check what this configuration needs (Node.js, uWS, SQLite, Chromium,
                     PostgreSQL and Redis when set, egress, proxies); exit 1 if something
                     is missing [--json]
  scour loadtest     load-test a Scour server with a named scenario (scour loadtest --help)
  scour mcp          MCP server on stdio for a running Scour (SCOUR_URL, SCOUR_API_KEY)
  scour version      print the version
  scour help         this text

${API_HELP}
${ACCOUNTS_HELP}
${INDEX_HELP}
${CRAWL_HELP}
Environment (all optional):
${Object.entries(ENV_VARS).map(([k, v]) => `  ${k.padEnd(26)}${v}`).join('\n')}
`;

async function serve(): Promise<void> {
  const settings = loadSettings();
  const { createScour } = await import('../../config/container.js');
  const scour = await createScour({ settings });
  let url: string;
  try {
    ({ url } = await scour.start());
  } catch (e) {
    // A taken port (LISTEN_FAILED): close what was opened, then main() prints the one line.
    await scour.stop().catch(() => undefined);
    throw e;
  }
  scour.logger.info({ url, adapter: settings.httpAdapter, version: VERSION, store: settings.databaseUrl ? 'postgres' : 'sqlite', limiter: settings.redisUrl ? 'redis' : 'memory' }, `Scour listening on ${url}`);
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

async function worker(): Promise<void> {
  const settings = loadSettings();
  const { createScour } = await import('../../config/container.js');
  const scour = await createScour({ settings, role: 'worker' });
  const { workerId, mode } = await scour.startWorker();
  scour.logger.info({ worker: workerId, mode, concurrency: settings.workerConcurrency, version: VERSION, store: settings.databaseUrl ? 'postgres' : 'sqlite' }, `Scour worker ${workerId} running jobs (${mode})`);
  await warnIfNoChromium(scour.logger, settings.chromiumPath);
  onSignals(scour.logger, () => scour.stop(), 'interrupting running jobs (another process resumes them)');
}

/** Run a command on the configured account store and search index (no server), closing both however it ends. */
async function withIndex(work: (settings: Settings, index: SearchIndex, store: AccountStore) => Promise<number>): Promise<number> {
  const settings = { ...loadSettings(), logLevel: 'silent' as const };
  const { openSearchIndex, openStore } = await import('../../config/store.js');
  const opened = await openStore(settings);
  try {
    const { index, close } = await openSearchIndex(settings);
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

/** The help printed after a wrong command line. */
let usageHelp: string = ACCOUNTS_HELP;

async function main(argv: readonly string[]): Promise<void> {
  const cmd = argv[0] ?? 'serve';
  switch (cmd) {
    case 'serve':
      return serve();
    case 'worker':
      return worker();
    case 'doctor': {
      const { doctor } = await import('./doctor.js');
      process.exitCode = await doctor(loadSettings(), argv.slice(1));
      return;
    }
    case 'openapi': {
      const { createScour } = await import('../../config/container.js');
      const { openApiDocument } = await import('../../core/openapi.js');
      const scour = await createScour({ settings: { ...loadSettings(), logLevel: 'silent' } });
      process.stdout.write(`${JSON.stringify(openApiDocument(scour.app.compiled.map((c) => c.route), { title: 'Scour API', version: VERSION }), null, 2)}\n`);
      await scour.stop();
      return;
    }
    case 'accounts':
    case 'keys':
    case 'credits':
    case 'webhooks': {
      // The command line is checked before the store is opened: a typo never touches the database.
      const work = accountsCommand(cmd, argv.slice(1));
      const settings = { ...loadSettings(), logLevel: 'silent' as const };
      const { openAccounts } = await import('../../config/store.js');
      const { accounts, jobs, close } = await openAccounts(settings);
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
      process.exitCode = await withIndex((settings, index, store) => indexCommand(argv.slice(1), {
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
      process.exitCode = await withIndex((settings, index, store) => crawlCommand(argv.slice(1).filter((a) => a !== '--local'), {
        settings, index, store, tty: process.stderr.isTTY === true, signal: abort.signal,
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
    case 'research':
    case 'usage':
    case 'tools':
    case 'login':
    case 'logout':
      return apiMain(cmd, argv.slice(1));
    case 'mcp': {
      const { runMcpStdio } = await import('../mcp/stdio.js');
      return runMcpStdio({ env: process.env, version: VERSION });
    }
    case 'version':
    case '--version':
      process.stdout.write(`${VERSION}\n`);
      return;
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(HELP);
      return;
    default:
      process.stderr.write(`scour: unknown command ${JSON.stringify(cmd)}\n\n${HELP}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
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
