/**
 * `scour doctor`: what this configuration needs, and whether each part is
 * present and working. One line per check (ok, missing, failed; skipped for
 * what the configuration does not use; info for settings worth seeing), with
 * the fix on every line that is not ok. Exit status 1 when something the
 * configuration needs is missing or broken. `--json` prints the same as JSON.
 *
 * Checks: Node.js (the version the uWS binary is built for), the native uWS
 * binding (not its slow JS fallback), SQLite with FTS5 and the data
 * directory, Chromium (launched, one page opened, its version read), or
 * each remote browser of SCOUR_BROWSER_WS_ENDPOINT (joined, its version
 * read, a page asked through an egress proxy listening as configured),
 * PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set, the egress
 * mode, the configured proxies, and each enabled search provider (one
 * small query each, with a short timeout; `--offline` lists them without
 * contacting them). Nothing here writes data or reaches a network other
 * than the configured servers and search providers.
 */
import { accessSync, constants, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { argTokens } from './args.js';

/** The settings the checks read (the composition root passes its whole Settings). */
export interface DoctorSettings {
  readonly httpAdapter: 'uws' | 'node';
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  readonly chromiumPath: string;
  /** SCOUR_BROWSER_WS_ENDPOINT: remote browsers instead of the local Chromium (empty: none). */
  readonly browserEndpoints: readonly string[];
  readonly allowPrivateTargets: boolean | 'loopback';
  readonly proxies: string | undefined;
}
type Settings = DoctorSettings;

/** What the checks borrow from plugins, handed over by the composition root. */
export interface DoctorProbes {
  /** The processes under the one whose command line carries `marker` (the browser fetcher's process reader). */
  readonly processTree: (marker: string) => readonly number[];
  /** Whether the process still carries one of `needles` in its command line (before it is killed). */
  readonly looksLike: (pid: number, needles: readonly string[]) => boolean;
  /** SCOUR_PROXIES parsed as the configured proxy provider reads it (throws, with `issues`, when it does not parse). */
  readonly parseProxies: (text: string) => readonly { readonly url: string; readonly type: string; readonly country: string | undefined }[];
  /** A proxy URL for display, credentials masked. */
  readonly redactProxyUrl: (url: string) => string;
  /** The search providers this configuration enables, in priority order, each able to run one small query. */
  readonly searchProviders?: () => Promise<readonly ProviderProbe[]>;
  /** The remote browsers of SCOUR_BROWSER_WS_ENDPOINT, each able to be joined and to render through the egress proxy. */
  readonly remoteBrowsers?: () => Promise<readonly RemoteBrowserProbe[]>;
}

/** One remote browser (SCOUR_BROWSER_WS_ENDPOINT), as doctor checks it. */
export interface RemoteBrowserProbe {
  /** The endpoint without credentials or query. */
  readonly label: string;
  /**
   * Join it within `timeoutMs`, open a context whose proxy is an egress proxy
   * listening as the configuration says (refusing everything) and ask it for
   * a page: the browser's version, and whether its request reached the proxy
   * (the network from the browser back to Scour allows it).
   */
  probe(timeoutMs: number): Promise<{ readonly version: string; readonly proxyReached: boolean; readonly proxyUrl: string }>;
}

/** How long doctor waits for one remote browser. */
export const REMOTE_BROWSER_TIMEOUT_MS = 10_000;

/**
 * One line per remote browser: joined, its version, and whether a page in it
 * reached Scour's egress proxy (without which every render fails).
 */
export async function checkRemoteBrowsers(probes: Pick<DoctorProbes, 'remoteBrowsers'>): Promise<Check[]> {
  if (probes.remoteBrowsers === undefined) return [];
  const list = await probes.remoteBrowsers();
  return Promise.all(list.map(async (b): Promise<Check> => {
    const name = `Browser ${b.label}`;
    const started = Date.now();
    try {
      const r = await bounded(REMOTE_BROWSER_TIMEOUT_MS + 2000, b.label, b.probe(REMOTE_BROWSER_TIMEOUT_MS));
      if (!r.proxyReached) {
        return {
          name, status: 'failed',
          detail: `joined (Chromium ${r.version}), but its page did not reach the egress proxy at ${r.proxyUrl}: every render_js request would fail`,
          fix: 'set SCOUR_BROWSER_PROXY_HOST (and SCOUR_BROWSER_PROXY_ADVERTISED_HOST) to an address the browser can reach, and let it connect to SCOUR_BROWSER_PROXY_PORTS there (docs/configuration.md, Remote browsers)',
        };
      }
      return { name, status: 'ok', detail: `Chromium ${r.version}, joined and reached the egress proxy at ${r.proxyUrl} in ${Date.now() - started} ms` };
    } catch (e) {
      return {
        name, status: 'failed',
        detail: `cannot be joined: ${message(e)} (renders go to the other endpoints; with none left render_js answers 503)`,
        fix: 'start the browser server there (docs/configuration.md, Remote browsers), or correct SCOUR_BROWSER_WS_ENDPOINT',
      };
    }
  }));
}

/** One enabled search provider, as doctor checks it. */
export interface ProviderProbe {
  readonly id: string;
  /** Where its queries go; undefined: not contacted (the local index, a plugin's provider), `note` says why. */
  readonly endpoint: string | undefined;
  readonly note?: string;
  /** One small query within `timeoutMs`: how many results came back (rejects with the provider's failure). */
  probe(timeoutMs: number): Promise<number>;
}

/** How long doctor waits for one provider. */
export const PROVIDER_PROBE_TIMEOUT_MS = 5_000;

/**
 * One line per enabled search provider: whether it answers one small query
 * (`offline`: listed, not contacted). A provider that does not answer is
 * `failed` (searches still work without it, with a warning).
 */
export async function checkSearchProviders(probes: Pick<DoctorProbes, 'searchProviders'>, offline: boolean): Promise<Check[]> {
  if (probes.searchProviders === undefined) return [];
  let list: readonly ProviderProbe[];
  try {
    list = await probes.searchProviders();
  } catch (e) {
    return [{ name: 'search providers', status: 'failed', detail: message(e), fix: 'correct the SCOUR_PROVIDER_* settings or SCOUR_SEARCH_PROVIDERS' }];
  }
  return Promise.all(list.map(async (p): Promise<Check> => {
    const name = `provider ${p.id}`;
    if (p.endpoint === undefined) return { name, status: 'info', detail: p.note ?? 'not contacted' };
    if (offline) return { name, status: 'info', detail: `${p.endpoint} (not contacted: --offline)` };
    const started = Date.now();
    try {
      const n = await bounded(PROVIDER_PROBE_TIMEOUT_MS + 1000, p.id, p.probe(PROVIDER_PROBE_TIMEOUT_MS));
      return { name, status: 'ok', detail: `${p.endpoint}: answered in ${Date.now() - started} ms (${n} result${n === 1 ? '' : 's'} for a test query)` };
    } catch (e) {
      return {
        name, status: 'failed', detail: `${p.endpoint}: ${message(e)}`,
        fix: `check the network and SCOUR_PROVIDER_${p.id.toUpperCase().replace(/-/g, '_')}_* settings, or leave ${p.id} out of SCOUR_SEARCH_PROVIDERS (searches go on without it, with a warning)`,
      };
    }
  }));
}

/** Where Debian's `chromium` package puts it (the default SCOUR_CHROMIUM_PATH). */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** Why the Chromium at `path` cannot run and the exact fix, or undefined when it is executable. */
export function chromiumProblem(path: string): { problem: string; fix: string } | undefined {
  try {
    accessSync(path, constants.X_OK);
    if (statSync(path).isFile()) return undefined;
  } catch {
    /* below */
  }
  const problem = existsSync(path) ? `Chromium at ${path} is not an executable file` : `Chromium is not installed at ${path}`;
  if (resolve(path) !== DEBIAN_CHROMIUM) {
    return { problem, fix: 'point SCOUR_CHROMIUM_PATH at a Chromium binary, or unset it and run: sudo apt-get install -y chromium' };
  }
  return { problem, fix: 'sudo apt-get install -y chromium (npm start installs it when run as root), or set SCOUR_CHROMIUM_PATH' };
}

export type CheckStatus = 'ok' | 'missing' | 'failed' | 'skipped' | 'info';

export interface Check {
  readonly name: string;
  readonly status: CheckStatus;
  readonly detail: string;
  /** The exact fix, when the status is missing or failed. */
  readonly fix?: string;
}

/** A check that does not settle within `ms` fails with a clear message. */
async function bounded<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0]!.trim().replace(/(?<!\.)\.+$/, '');

export function checkNode(version = process.versions.node): Check {
  const major = Number(version.split('.')[0]);
  if (major === 20) return { name: 'Node.js', status: 'ok', detail: `v${version} (ABI ${process.versions.modules})` };
  return {
    name: 'Node.js',
    status: 'failed',
    detail: `v${version}; Scour needs Node.js 20 (package.json engines, the ABI the uWebSockets.js binary is built for)`,
    fix: 'install Node.js 20 (e.g. nvm install 20) and run npm ci again',
  };
}

export async function checkUws(settings: Pick<Settings, 'httpAdapter'>): Promise<Check> {
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  let native: boolean;
  try {
    const { uwsIsNative } = await import('../http/uws/index.js');
    native = uwsIsNative();
  } catch (e) {
    if (settings.httpAdapter === 'node') return { name: 'uWS', status: 'skipped', detail: `SCOUR_HTTP_ADAPTER=node (uWebSockets.js does not load: ${message(e)})` };
    return { name: 'uWS', status: 'failed', detail: `uWebSockets.js does not load: ${message(e)}`, fix: 'run npm ci on Node.js 20, or set SCOUR_HTTP_ADAPTER=node' };
  }
  if (settings.httpAdapter === 'node') return { name: 'uWS', status: 'skipped', detail: `SCOUR_HTTP_ADAPTER=node (node:http serves; uWS ${native ? 'native' : 'JS fallback'} not used)` };
  if (native) return { name: 'uWS', status: 'ok', detail: `native binding ${binary}` };
  return {
    name: 'uWS',
    status: 'failed',
    detail: `no native binding for this Node.js (${binary}): the slow pure-JS fallback would serve`,
    fix: 'use Node.js 20 and run npm ci, or set SCOUR_HTTP_ADAPTER=node',
  };
}

export async function checkSqlite(settings: Pick<Settings, 'dataDir' | 'databaseUrl'>): Promise<Check> {
  const name = 'SQLite';
  let version: string;
  try {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(':memory:');
    try {
      version = String(db.prepare('select sqlite_version() as v').pluck().get());
      db.exec(`create virtual table t using fts5(body); insert into t(body) values ('scour doctor checks fts5')`);
      const hits = db.prepare(`select count(*) from t where t match 'fts5'`).pluck().get();
      if (hits !== 1) throw new Error('an FTS5 query found nothing');
    } finally {
      db.close();
    }
  } catch (e) {
    return { name, status: 'failed', detail: `better-sqlite3 with FTS5 does not work: ${message(e)}`, fix: 'npm ci (rebuilds better-sqlite3 for this Node.js; needs build-essential and python3 if no prebuilt binary matches)' };
  }
  if (settings.databaseUrl !== undefined) return { name, status: 'ok', detail: `${version} with FTS5 (accounts are in PostgreSQL)` };
  // The embedded store: the data directory must be writable (it is created at start).
  const dir = resolve(settings.dataDir);
  const file = join(dir, 'scour.db');
  let existing = dir;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  try {
    accessSync(existing, constants.W_OK);
  } catch {
    return { name, status: 'failed', detail: `${version} with FTS5, but ${existing} is not writable (SCOUR_DATA_DIR=${settings.dataDir})`, fix: `make ${existing} writable for this user, or set SCOUR_DATA_DIR to a writable directory` };
  }
  if (!existsSync(file)) return { name, status: 'ok', detail: `${version} with FTS5; ${file} is created at first start` };
  try {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const tables = db.prepare(`select count(*) from sqlite_master where type = 'table'`).pluck().get();
      return { name, status: 'ok', detail: `${version} with FTS5; ${file} opens (${String(tables)} tables)` };
    } finally {
      db.close();
    }
  } catch (e) {
    return { name, status: 'failed', detail: `${file} does not open: ${message(e)}`, fix: `check ${file} (permissions, disk), or point SCOUR_DATA_DIR elsewhere` };
  }
}

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-breakpad'];

export async function checkChromium(settings: Pick<Settings, 'chromiumPath'>, probes: Pick<DoctorProbes, 'processTree' | 'looksLike'>, timeoutMs = 30_000): Promise<Check> {
  const name = 'Chromium';
  const path = settings.chromiumPath;
  const problem = chromiumProblem(path);
  if (problem) return { name, status: 'missing', detail: `${problem.problem}: render_js answers 503`, fix: problem.fix };
  const marker = `scour-doctor-${process.pid}-${Date.now()}`;
  const crashDir = mkdtempSync(join(tmpdir(), `${marker}-`));
  const { processTree, looksLike } = probes;
  let browser: import('playwright').Browser | undefined;
  try {
    const { chromium } = await import('playwright');
    const started = Date.now();
    const version = await bounded(timeoutMs, 'Chromium', (async () => {
      browser = await chromium.launch({
        executablePath: path,
        headless: true,
        args: [...CHROMIUM_ARGS, `--scour-doctor=${marker}`],
        // Nothing leaves through the browser: port 9 (discard) on loopback.
        proxy: { server: 'http://127.0.0.1:9' },
        env: { ...process.env, BREAKPAD_DUMP_LOCATION: crashDir },
        timeout: timeoutMs,
      });
      const page = await browser.newPage();
      await page.goto('data:text/html,<title>doctor</title><p id=x>ok</p><script>document.getElementById("x").textContent="rendered"</script>');
      const text = await page.textContent('#x');
      if (text !== 'rendered') throw new Error(`a test page did not run its script (got ${JSON.stringify(text)})`);
      return browser.version();
    })());
    return { name, status: 'ok', detail: `${path}: Chromium ${version}, a page rendered in ${Date.now() - started} ms` };
  } catch (e) {
    return {
      name,
      status: 'failed',
      detail: `${path} is there but does not run a page: ${message(e)}`,
      fix: `reinstall it (sudo apt-get install --reinstall -y chromium) and check it starts: ${path} --headless --no-sandbox --dump-dom about:blank`,
    };
  } finally {
    const b = browser as import('playwright').Browser | undefined;
    await b?.close().catch(() => undefined);
    // Whatever the driver left (crash handlers), nothing of this check outlives it.
    for (const pid of processTree(marker)) {
      if (looksLike(pid, [marker])) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    rmSync(crashDir, { recursive: true, force: true });
  }
}

/** A URL for display: credentials masked. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.username !== '' || u.password !== '') {
      u.username = '***';
      u.password = '';
    }
    return u.toString();
  } catch {
    return '[invalid URL]';
  }
}

export async function checkPostgres(settings: Pick<Settings, 'databaseUrl'>, timeoutMs = 5000): Promise<Check> {
  const name = 'PostgreSQL';
  if (settings.databaseUrl === undefined) return { name, status: 'skipped', detail: 'DATABASE_URL not set: accounts in the embedded SQLite file' };
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: settings.databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => {});
  try {
    await bounded(timeoutMs + 1000, 'PostgreSQL', client.connect());
    const { rows } = await bounded(timeoutMs, 'PostgreSQL', client.query<{ v: string }>(`select current_setting('server_version') as v`));
    return { name, status: 'ok', detail: `${redact(settings.databaseUrl)}: server ${rows[0]?.v ?? '?'}` };
  } catch (e) {
    return { name, status: 'failed', detail: `${redact(settings.databaseUrl)}: ${message(e)}`, fix: 'start PostgreSQL or correct DATABASE_URL (unset it to use the embedded SQLite store)' };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function checkRedis(settings: Pick<Settings, 'redisUrl'>, timeoutMs = 3000): Promise<Check> {
  const name = 'Redis';
  if (settings.redisUrl === undefined) return { name, status: 'skipped', detail: 'REDIS_URL not set: rate limits and slots in process' };
  const { Redis } = await import('ioredis');
  const client = new Redis(settings.redisUrl, { lazyConnect: true, connectTimeout: timeoutMs, commandTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // The socket's own error (ECONNREFUSED, ...) says more than the rejected connect ("Connection is closed").
  let socketError: unknown;
  client.on('error', (e) => (socketError ??= e));
  try {
    await bounded(timeoutMs + 1000, 'Redis', client.connect().catch((e: unknown) => Promise.reject(socketError ?? e)));
    const pong = await client.ping();
    if (pong !== 'PONG') throw new Error(`PING answered ${pong}`);
    const info = await client.info('server');
    const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? '?';
    return { name, status: 'ok', detail: `${redact(settings.redisUrl)}: server ${version}` };
  } catch (e) {
    return { name, status: 'failed', detail: `${redact(settings.redisUrl)}: ${message(e)}`, fix: 'start Redis or correct REDIS_URL (unset it to keep limits in process)' };
  } finally {
    client.disconnect();
  }
}

export function checkEgress(settings: Pick<Settings, 'allowPrivateTargets'>): Check {
  const mode = settings.allowPrivateTargets;
  const detail = mode === 'loopback'
    ? 'SCOUR_ALLOW_PRIVATE_TARGETS=loopback: public addresses and loopback (127.0.0.0/8, ::1)'
    : mode
      ? 'SCOUR_ALLOW_PRIVATE_TARGETS=true: public, loopback and private addresses (private deployments only)'
      : 'public addresses only (SCOUR_ALLOW_PRIVATE_TARGETS unset or false)';
  return { name: 'egress', status: 'info', detail };
}

export async function checkProxies(settings: Pick<Settings, 'proxies'>, probes: Pick<DoctorProbes, 'parseProxies' | 'redactProxyUrl'>): Promise<Check> {
  const name = 'proxies';
  if (settings.proxies === undefined || settings.proxies.trim() === '') return { name, status: 'info', detail: 'none configured (SCOUR_PROXIES unset): proxy_type/proxy_country answer 400 PROXY_NOT_AVAILABLE' };
  try {
    const { parseProxies, redactProxyUrl } = probes;
    const entries = parseProxies(settings.proxies);
    const byType = new Map<string, number>();
    for (const e of entries) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
    const counts = [...byType].map(([t, n]) => `${n} ${t}`).join(', ');
    const list = entries.slice(0, 5).map((e) => `${redactProxyUrl(e.url)}${e.country ? ` (${e.country})` : ''}`).join(', ');
    return { name, status: 'ok', detail: `${entries.length} configured (${counts}; parsed, not contacted): ${list}${entries.length > 5 ? ', ...' : ''}` };
  } catch (e) {
    return { name, status: 'failed', detail: `SCOUR_PROXIES does not parse: ${message(e instanceof Error && 'issues' in e ? (e as { issues: string[] }).issues.join('; ') : e)}`, fix: 'correct SCOUR_PROXIES (format in docs/scrape.md, section Proxies)' };
  }
}

/** Every check for these settings, in the order printed. */
export async function runChecks(settings: Settings, probes: DoctorProbes, options: { readonly offline?: boolean } = {}): Promise<Check[]> {
  const checks: Check[] = [checkNode(), await checkUws(settings), await checkSqlite(settings)];
  const remote = settings.browserEndpoints.length > 0;
  const [chromium, postgres, redis, proxies, providers, browsers] = await Promise.all([
    remote
      ? Promise.resolve<Check>({ name: 'Chromium', status: 'skipped', detail: `render_js uses the remote browsers of SCOUR_BROWSER_WS_ENDPOINT (${settings.browserEndpoints.length}), checked below` })
      : checkChromium(settings, probes),
    checkPostgres(settings), checkRedis(settings), checkProxies(settings, probes), checkSearchProviders(probes, options.offline === true),
    remote ? checkRemoteBrowsers(probes) : Promise.resolve([]),
  ]);
  checks.push(chromium, ...browsers, postgres, redis, checkEgress(settings), proxies, ...providers);
  return checks;
}

export const needsFixing = (c: Check): boolean => c.status === 'missing' || c.status === 'failed';

export function formatChecks(checks: readonly Check[], version: string): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) => `${c.status.padEnd(8)} ${c.name.padEnd(width)}  ${c.detail}${c.fix ? `. Fix: ${c.fix}` : ''}`);
  const bad = checks.filter(needsFixing);
  const summary = bad.length === 0
    ? 'Everything this configuration needs is present and working.'
    : `${bad.length} problem${bad.length === 1 ? '' : 's'}: ${bad.map((c) => c.name).join(', ')} (see the Fix above).`;
  return `scour doctor ${version}\n${lines.join('\n')}\n${summary}\n`;
}

/** `scour doctor [--json] [--offline]`: prints the checks; the exit code is 1 when one needs fixing. */
export async function doctor(settings: Settings, args: readonly string[], d: { readonly version: string; readonly probes: () => Promise<DoctorProbes> }): Promise<number> {
  const tokens = argTokens(args, []);
  const json = tokens.some((t) => t.raw === '--json');
  const offline = tokens.some((t) => t.raw === '--offline');
  const unknown = tokens.filter((t) => t.raw !== '--json' && t.raw !== '--offline').map((t) => t.raw);
  if (unknown.length > 0) {
    process.stderr.write(`scour: doctor takes only --json and --offline (got ${unknown.join(' ')})\n`);
    return 2;
  }
  const checks = await runChecks(settings, await d.probes(), { offline });
  const ok = !checks.some(needsFixing);
  process.stdout.write(json ? `${JSON.stringify({ ok, version: d.version, checks }, null, 2)}\n` : formatChecks(checks, d.version));
  return ok ? 0 : 1;
}
