/**
 * The API commands of `scour`: search, scrape, bulk, crawl, map, research, usage,
 * tools, login and logout, against a running server through `scour/client`
 * (adapters/client), so the CLI gets the client's retry rules (spec 7.4)
 * and its error class.
 *
 * Where: SCOUR_URL (default http://localhost:8080), else the config file
 * `scour login` wrote. Key: SCOUR_API_KEY, else that file. The file is
 * $XDG_CONFIG_HOME/scour/config.json (default ~/.config/scour/), mode 0600.
 *
 * Output: a table or text on a terminal; JSON with --json or when stdout is
 * not a terminal (bulk writes JSON lines either way). Progress goes to
 * stderr: a bar on a terminal, a line per change otherwise.
 *
 * Exit codes by error class (CLI_EXIT_CODES): 0 done; 1 the server or the
 * network failed (5xx, unreachable, timeout), or a job or some URLs failed;
 * 2 a wrong command line; 3 no key, or a key refused (401, 403); 4 a request
 * the server refused as invalid (400, 404, 405, 409, 413, 415, 422); 5 out of
 * credits (402); 6 still rate-limited after the retries (429); 130 Ctrl-C.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  type BulkScrapeJob, type CrawlJob, type MapRequest, type ResearchJob, type ResearchResponse, Scour, ScourError, type ScrapeRequest,
  type SearchRequest, TOOL_SLUGS, type ToolSlug,
} from '../client/index.js';
import { UsageError } from './errors.js';

export const CLI_EXIT_CODES = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
  invalid: 4,
  credits: 5,
  rateLimited: 6,
  interrupted: 130,
} as const;

export const API_HELP = `Against a running server (SCOUR_URL, default http://localhost:8080; key from SCOUR_API_KEY or scour login):
  scour search "query" [--max-results N] [--country CC] [--language LL] [--time-range day|week|month|year]
                       [--scrape-top N] [--news] [--json]
  scour scrape URL [--render-js] [--markdown] [--main-content] [--wait-for SELECTOR] [--timeout S]
                   [--screenshot FILE] [--full-page] [--json]
  scour bulk FILE|- [--render-js] [--markdown] [--concurrency N] [--retry]   URLs one a line (# comments);
                   results as JSON lines on stdout, progress on stderr; batches of 100
  scour crawl URL [--max-pages N] [--max-depth N] [--include GLOB]... [--exclude GLOB]... [--render-js]
                  [--no-wait] [--json]            crawl into the search index on the server (--local: in this process)
  scour map URL [--search PHRASE] [--limit N] [--sitemap include|only|skip] [--no-subdomains] [--json]
                                                   the site's URLs (sitemaps, the start page's links), one a line
  scour research "question" [--depth quick|standard|comprehensive] [--sources academic,news,...]
                  [--max-sources N] [--timeframe past_year] [--citation-format apa|...] [--export FORMAT -o FILE] [--json]
  scour usage [--json]
  scour tools [SLUG ['{json}'|-]]                  a developer tool (no key needed); no slug: the list
  scour login [--url URL] [--key KEY]              check a key against the server and keep both in the config file
  scour logout                                     forget them
  Every command takes --help. Exit codes: 0 done, 1 server/network failure or a failed job, 2 command line,
  3 key missing or refused (401/403), 4 request refused (400/404/413/...), 5 out of credits (402),
  6 rate-limited after retries (429), 130 interrupted.
`;

const HELPS: Record<string, string> = {
  search: `scour search "query" [options]: POST /v1/search
  --max-results N     results, 1-100 (server default 10)
  --country CC        two-letter country code
  --language LL       two-letter language code
  --time-range T      hour, day, week, month or year
  --scrape-top N      scrape the first N results too (auto_scrape_top)
  --news              news results (result_type news)
  --json              the whole answer as JSON (also when stdout is not a terminal)
`,
  scrape: `scour scrape URL [options]: POST /v1/scrape
  --render-js         render in Chromium
  --markdown          print the page as Markdown (markdown: true)
  --main-content      print the main content only
  --wait-for SEL      with --render-js, wait for this CSS selector
  --timeout S         seconds the server may take (5-120)
  --screenshot FILE   take a screenshot (implies --render-js) and save it to FILE
  --full-page         with --screenshot, the whole page
  --json              the whole answer as JSON
`,
  bulk: `scour bulk FILE|- [options]: POST /v1/scrape/bulk, 100 URLs a batch, each an asynchronous job polled for progress
  FILE or - (stdin)   URLs one a line; blank lines and lines starting with # are skipped
  --render-js, --markdown, --main-content   as for scrape, for every URL
  --concurrency N     URLs scraped at once per batch (concurrent_requests)
  --retry             retry URLs that fail with a network error, a timeout or a block
  Output: one JSON line per URL ({url, success, attempts, result | error}), in input order.
  Exit 0 when every URL succeeded, 1 when some failed (counted on stderr).
`,
  crawl: `scour crawl URL [options]: POST /v1/crawl, then the job's progress until it ends
  --max-pages N, --max-depth N, --include GLOB (repeatable), --exclude GLOB (repeatable), --render-js
  --no-wait           print the accepted job and exit
  --json              the final job status as JSON
  --local             crawl in this process into the configured index, no server (scour crawl --local --help)
`,
  map: `scour map URL [options]: POST /v1/map, the site's URLs without their content (1 credit)
  --search PHRASE     only URLs relevant to the phrase, most relevant first
  --limit N           URLs at most (1-10000, server default 1000)
  --sitemap MODE      include (default: sitemaps and the start page's links), only (sitemaps), skip (the start page)
  --no-subdomains     keep to the start URL's host (include_subdomains false)
  --timeout S         seconds the map may take (5-60, server default 30)
  --json              the whole answer as JSON (also when stdout is not a terminal)
  On a terminal: one URL a line, its link text after a tab when it has one; warnings and credits on stderr.
`,
  research: `scour research "question" [options]: POST /v1/research as a job, its stages as progress, then the report
  --depth D           quick, standard (default) or comprehensive
  --sources LIST      comma-separated: academic, news, industry_reports, financial, social, web
  --max-sources N     sources to read
  --timeframe T       past_week, past_month, past_year, 2020-2024, ...
  --citation-format F apa, mla, chicago, harvard, ieee, vancouver, bibtex, ris
  --export FORMAT     markdown, html, pdf, docx, json, csv or bibtex: the report as a file
  -o, --output FILE   where the export goes (default research.<ext>)
  --json              the whole report as JSON
`,
  usage: `scour usage [--json]: GET /v1/usage, the account's credits in this period
`,
  tools: `scour tools [SLUG ['{json}'|-]]: POST /v1/tools/SLUG with the JSON body (- reads it from stdin; none: {})
  Tools need no key. Without a slug: the list of tools.
`,
  login: `scour login [--url URL] [--key KEY]: check the key (GET /v1/usage) and keep the URL and key in
  $XDG_CONFIG_HOME/scour/config.json (default ~/.config/scour/config.json, mode 0600).
  Without --key the key is read from stdin (one line).
`,
  logout: `scour logout: remove the config file scour login wrote.
`,
};

export interface ApiCommandDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** stdout is a terminal: tables; otherwise JSON. */
  readonly stdoutTty: boolean;
  /** stderr is a terminal: progress bars. */
  readonly stderrTty: boolean;
  readonly readStdin: () => Promise<string>;
  readonly signal: AbortSignal;
  /** Poll interval for jobs, ms. */
  readonly pollMs?: number;
}



interface Config {
  readonly url?: string;
  readonly api_key?: string;
}

export function configPath(env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.trim() !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config');
  return join(base, 'scour', 'config.json');
}

function readConfig(env: Readonly<Record<string, string | undefined>>): Config {
  let text: string;
  try {
    text = readFileSync(configPath(env), 'utf8');
  } catch {
    return {};
  }
  try {
    const c = JSON.parse(text) as unknown;
    if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new Error('not an object');
    const o = c as Record<string, unknown>;
    return { url: typeof o.url === 'string' ? o.url : undefined, api_key: typeof o.api_key === 'string' ? o.api_key : undefined };
  } catch (e) {
    throw new UsageError(`the config file ${configPath(env)} is not valid JSON (${(e as Error).message}); fix it or run scour logout`);
  }
}

function baseUrlOf(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`${from} ${JSON.stringify(raw)} is not a URL (e.g. http://localhost:8080)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`${from} must be an http or https URL`);
  return u.toString().replace(/(?<!\/)\/+$/, '');
}

/** The command line's options: parseArgs with its errors as usage errors (exit 2). */
function args(argv: readonly string[], options: NonNullable<ParseArgsConfig['options']>, positionals: { min: number; max: number; name: string }) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { ...options, help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  if (values.help) return { help: true as const, values, positionals: parsed.positionals };
  if (parsed.positionals.length < positionals.min) throw new UsageError(`${positionals.name} is missing`);
  if (parsed.positionals.length > positionals.max) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals.max])} (quote a query with spaces)`);
  return { help: false as const, values, positionals: parsed.positionals };
}

function integer(values: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  }
  return n;
}

const str = (values: Record<string, unknown>, name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);

/** The exit code of a failure, by its class. */
export function exitCodeOf(e: unknown): number {
  if (e instanceof UsageError) return CLI_EXIT_CODES.usage;
  if (!(e instanceof ScourError)) return CLI_EXIT_CODES.failed;
  if (e.code === 'ABORTED') return CLI_EXIT_CODES.interrupted;
  if (e.status === 401 || e.status === 403) return CLI_EXIT_CODES.auth;
  if (e.status === 402) return CLI_EXIT_CODES.credits;
  if (e.status === 429) return CLI_EXIT_CODES.rateLimited;
  if (e.status >= 400 && e.status < 500) return CLI_EXIT_CODES.invalid;
  return CLI_EXIT_CODES.failed;
}

/** One failure as the lines printed on stderr: status and code, message, field problems, retry hint. */
export function describeError(e: ScourError): string {
  const lines = [`scour: ${e.status === 0 ? e.code : `${e.status} ${e.code}`}: ${e.message}`];
  if (e.details) lines.push(`  ${e.details}`);
  for (const v of e.validationErrors) lines.push(`  ${v.field}: ${v.message}`);
  if (e.retryAfter !== undefined && e.status === 429) lines.push(`  retry after ${e.retryAfter} s`);
  if (e.creditsRemaining !== undefined) lines.push(`  credits remaining: ${e.creditsRemaining}`);
  if (e.upgradeUrl) lines.push(`  upgrade: ${e.upgradeUrl}`);
  if (e.requestId) lines.push(`  request id: ${e.requestId}`);
  return `${lines.join('\n')}\n`;
}

/** Runs one API command; resolves to its exit code. UsageError is thrown for main() to print with the help. */
export async function apiCommand(cmd: string, argv: readonly string[], deps: ApiCommandDeps): Promise<number> {
  const run = COMMANDS[cmd];
  if (run === undefined) throw new UsageError(`unknown command ${cmd}`);
  try {
    return await run(argv, deps);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (deps.signal.aborted) {
      deps.err('scour: interrupted\n');
      return CLI_EXIT_CODES.interrupted;
    }
    if (e instanceof ScourError) {
      deps.err(describeError(e));
      if (e.status === 401 && !deps.env.SCOUR_API_KEY) deps.err('  (set SCOUR_API_KEY or run scour login)\n');
      return exitCodeOf(e);
    }
    if (e instanceof CliFailure) {
      deps.err(`scour: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}

/** A failure the command itself reports (a file it cannot write, a job that failed): one line, its exit code. */
class CliFailure extends Error {
  constructor(message: string, readonly exitCode: number = CLI_EXIT_CODES.failed) {
    super(message);
  }
}

type Command = (argv: readonly string[], deps: ApiCommandDeps) => Promise<number>;

function clientFor(deps: ApiCommandDeps, opts: { needKey: boolean; url?: string; key?: string }): Scour {
  const config = readConfig(deps.env);
  const envUrl = deps.env.SCOUR_URL?.trim() || undefined;
  const rawUrl = opts.url ?? envUrl ?? config.url ?? 'http://localhost:8080';
  const baseUrl = baseUrlOf(rawUrl, opts.url !== undefined ? '--url' : envUrl !== undefined ? 'SCOUR_URL' : config.url !== undefined ? 'the config file url' : 'the URL');
  const apiKey = opts.key ?? (deps.env.SCOUR_API_KEY?.trim() || undefined) ?? config.api_key;
  if (opts.needKey && apiKey === undefined) {
    throw new CliFailure('no API key: set SCOUR_API_KEY, or run scour login', CLI_EXIT_CODES.auth);
  }
  return new Scour({ baseUrl, apiKey, timeout: 300_000 });
}

function wantsJson(values: Record<string, unknown>, deps: ApiCommandDeps): boolean {
  return values.json === true || !deps.stdoutTty;
}

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

/** A fixed-width table: columns cut to their width, the last one free. */
export function table(head: readonly string[], rows: readonly (readonly string[])[], widths: readonly number[]): string {
  const cut = (s: string, w: number) => {
    const one = s.replace(/\s+/g, ' ').trim();
    return one.length <= w ? one.padEnd(w) : `${one.slice(0, Math.max(1, w - 1))}…`;
  };
  const line = (cells: readonly string[]) => cells.map((c, i) => (i < widths.length ? cut(c, widths[i]!) : c.replace(/\s+/g, ' ').trim())).join('  ').trimEnd();
  return `${[line(head), line(head.map((h, i) => '-'.repeat(i < widths.length ? widths[i]! : Math.max(h.length, 10)))), ...rows.map(line)].join('\n')}\n`;
}

/** Progress on stderr: a redrawn line on a terminal, a line per change otherwise. */
function progress(deps: ApiCommandDeps) {
  let last = '';
  return {
    update(text: string) {
      if (text === last) return;
      last = text;
      if (deps.stderrTty) deps.err(`\r\x1b[2K${text}`);
      else deps.err(`${text}\n`);
    },
    done() {
      if (deps.stderrTty && last !== '') deps.err('\n');
      last = '';
    },
  };
}

function bar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

const search: Command = async (argv, deps) => {
  const a = args(argv, {
    'max-results': { type: 'string' }, country: { type: 'string' }, language: { type: 'string' }, 'time-range': { type: 'string' },
    'scrape-top': { type: 'string' }, news: { type: 'boolean' },
  }, { min: 1, max: 1, name: 'the query' });
  if (a.help) return help(deps, 'search');
  const v = a.values;
  const max = integer(v, 'max-results', 1, 1000);
  const top = integer(v, 'scrape-top', 0, 1000);
  const req: Record<string, unknown> = { query: a.positionals[0]! };
  if (max !== undefined) req.max_results = max;
  if (top !== undefined) req.auto_scrape_top = top;
  if (str(v, 'country') !== undefined) req.country = str(v, 'country');
  if (str(v, 'language') !== undefined) req.language = str(v, 'language');
  if (str(v, 'time-range') !== undefined) req.time_range = str(v, 'time-range');
  if (v.news === true) req.result_type = 'news';
  const res = await clientFor(deps, { needKey: true }).search(req as unknown as SearchRequest, { signal: deps.signal });
  if (wantsJson(v, deps)) {
    deps.out(json(res));
    return 0;
  }
  deps.out(table(['#', 'title', 'source', 'link'], res.search_results.map((r) => [String(r.position), r.title, r.source.join(','), r.link]), [3, 48, 12]));
  for (const s of res.scraped_content ?? []) {
    deps.out(`\n## ${s.title || s.url}\n${s.url}\n${s.error ? `(not read: ${s.error.code}: ${s.error.message})` : (s.text ?? s.content ?? '').slice(0, 600)}\n`);
  }
  for (const w of res.warnings ?? []) deps.err(`warning: ${w.provider}: ${w.code}: ${w.message}\n`);
  deps.out(`\n${res.results_count} results in ${res.search_time} s; ${res.credits_used} credits used, ${res.remaining_credits} left\n`);
  return 0;
};

const scrape: Command = async (argv, deps) => {
  const a = args(argv, {
    'render-js': { type: 'boolean' }, markdown: { type: 'boolean' }, 'main-content': { type: 'boolean' }, 'wait-for': { type: 'string' },
    timeout: { type: 'string' }, screenshot: { type: 'string' }, 'full-page': { type: 'boolean' },
  }, { min: 1, max: 1, name: 'the URL' });
  if (a.help) return help(deps, 'scrape');
  const v = a.values;
  const shotFile = str(v, 'screenshot');
  if (v['full-page'] === true && shotFile === undefined) throw new UsageError('--full-page only applies with --screenshot FILE');
  const req: Record<string, unknown> = { url: a.positionals[0]! };
  if (v['render-js'] === true || shotFile !== undefined) req.render_js = true;
  if (v.markdown === true) req.markdown = true;
  if (v['main-content'] === true) req.main_content = true;
  if (str(v, 'wait-for') !== undefined) req.wait_for = str(v, 'wait-for');
  const timeout = integer(v, 'timeout', 1, 600);
  if (timeout !== undefined) req.timeout = timeout;
  if (shotFile !== undefined) {
    req.screenshot = true;
    if (v['full-page'] === true) req.screenshot_options = { full_page: true };
  }
  const client = clientFor(deps, { needKey: true });
  const res = await client.scrape(req as unknown as ScrapeRequest, { signal: deps.signal });
  let saved: string | undefined;
  if (shotFile !== undefined) {
    if (res.screenshot_url === undefined) {
      deps.err(`scour: no screenshot came back${res.warnings?.length ? ` (${res.warnings.map((w) => w.code).join(', ')})` : ''}\n`);
    } else {
      await download(res.screenshot_url, shotFile, deps);
      saved = shotFile;
    }
  }
  if (wantsJson(v, deps)) deps.out(json(res));
  else {
    deps.out(`${res.final_url} (${res.status_code}, ${res.content_type}, ${res.load_time} s)\n\n`);
    const body = v.markdown === true ? res.markdown : v['main-content'] === true ? res.main_content : res.text_content;
    deps.out(`${(body ?? '').trim()}\n`);
    for (const w of res.warnings ?? []) deps.err(`warning: ${w.code}: ${w.message}\n`);
    deps.out(`\n${res.credits_used} credits used, ${res.remaining_credits} left${saved ? `; screenshot saved to ${saved}` : ''}\n`);
  }
  if (shotFile !== undefined && saved === undefined) return CLI_EXIT_CODES.failed;
  return 0;
};

/** GET a signed file URL (screenshot, export) into a file. */
async function download(url: string, file: string, deps: ApiCommandDeps): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal: deps.signal });
  } catch (e) {
    throw new CliFailure(`could not download ${url}: ${(e as Error).message}`);
  }
  if (!res.ok) throw new CliFailure(`could not download ${url}: HTTP ${res.status}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  try {
    writeFileSync(file, bytes);
  } catch (e) {
    throw new CliFailure(`could not write ${file}: ${(e as Error).message}`);
  }
}

/** URLs of a list: one a line, blank lines and # comments skipped. */
export function urlList(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

const BULK_BATCH = 100;

const bulk: Command = async (argv, deps) => {
  const a = args(argv, {
    'render-js': { type: 'boolean' }, markdown: { type: 'boolean' }, 'main-content': { type: 'boolean' },
    concurrency: { type: 'string' }, retry: { type: 'boolean' },
  }, { min: 1, max: 1, name: 'the file of URLs (or - for stdin)' });
  if (a.help) return help(deps, 'bulk');
  const v = a.values;
  const source = a.positionals[0]!;
  let text: string;
  if (source === '-') text = await deps.readStdin();
  else {
    try {
      text = readFileSync(source, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read ${source}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  const urls = urlList(text);
  if (urls.length === 0) throw new UsageError(`${source === '-' ? 'stdin' : source} holds no URL (one a line)`);
  const concurrency = integer(v, 'concurrency', 1, 100);
  const common: Record<string, unknown> = {};
  if (v['render-js'] === true) common.render_js = true;
  if (v.markdown === true) common.markdown = true;
  if (v['main-content'] === true) common.main_content = true;
  if (concurrency !== undefined) common.concurrent_requests = concurrency;
  if (v.retry === true) common.retry_failed = true;
  const client = clientFor(deps, { needKey: true });
  const bar_ = progress(deps);
  let done = 0;
  let failed = 0;
  let credits = 0;
  try {
    for (let start = 0; start < urls.length; start += BULK_BATCH) {
      const batch = urls.slice(start, start + BULK_BATCH);
      const accepted = await client.request('POST', '/v1/scrape/bulk', { urls: batch, ...common, async: true }, { signal: deps.signal }) as { status_url: string };
      const job = await client.waitForJob<BulkScrapeJob>(accepted.status_url, {
        signal: deps.signal, intervalMs: deps.pollMs ?? 1000, timeoutMs: 3_600_000,
        onProgress: (j) => bar_.update(`bulk ${bar(done + j.progress.done, urls.length)} ${done + j.progress.done}/${urls.length} done, ${failed + j.progress.failed} failed`),
      });
      for (const r of job.results ?? []) {
        deps.out(`${JSON.stringify(r)}\n`);
        if (!r.success) failed++;
      }
      done += batch.length;
      credits += job.credits_used;
      if (job.status === 'failed') throw new CliFailure(`the job for URLs ${start + 1}-${start + batch.length} failed (${job.job_id})`);
    }
  } finally {
    bar_.done();
  }
  deps.err(`bulk: ${urls.length} URLs, ${urls.length - failed} succeeded, ${failed} failed; ${credits} credits used\n`);
  return failed > 0 ? CLI_EXIT_CODES.failed : 0;
};

const crawl: Command = async (argv, deps) => {
  const a = args(argv, {
    'max-pages': { type: 'string' }, 'max-depth': { type: 'string' }, include: { type: 'string', multiple: true }, exclude: { type: 'string', multiple: true },
    'render-js': { type: 'boolean' }, 'no-wait': { type: 'boolean' },
  }, { min: 1, max: 1, name: 'the URL' });
  if (a.help) return help(deps, 'crawl');
  const v = a.values;
  const req: Record<string, unknown> = { url: a.positionals[0]! };
  const pages = integer(v, 'max-pages', 1, 1_000_000);
  const depth = integer(v, 'max-depth', 0, 1000);
  if (pages !== undefined) req.max_pages = pages;
  if (depth !== undefined) req.max_depth = depth;
  if (Array.isArray(v.include)) req.include_paths = v.include;
  if (Array.isArray(v.exclude)) req.exclude_paths = v.exclude;
  if (v['render-js'] === true) req.render_js = true;
  const client = clientFor(deps, { needKey: true });
  const accepted = await client.request('POST', '/v1/crawl', req, { signal: deps.signal }) as { job_id: string; status_url: string };
  if (v['no-wait'] === true) {
    deps.out(wantsJson(v, deps) ? json(accepted) : `crawl ${accepted.job_id} queued; status: ${accepted.status_url}\n`);
    return 0;
  }
  const p = progress(deps);
  let job: CrawlJob;
  try {
    job = await client.waitForJob<CrawlJob>(accepted.status_url, {
      signal: deps.signal, intervalMs: deps.pollMs ?? 1000, timeoutMs: 24 * 3_600_000,
      onProgress: (j) => p.update(`crawl ${j.status}: ${j.pages_done} pages done, ${j.pages_failed} failed, ${j.pages_queued} queued, ${j.pages_skipped} skipped`),
    });
  } finally {
    p.done();
  }
  if (wantsJson(v, deps)) deps.out(json(job));
  else {
    deps.out(`crawl ${job.job_id} ${job.status}${job.stop_reason ? ` (${job.stop_reason})` : ''}: ${job.pages_done} pages indexed into ${job.collection}, ${job.pages_failed} failed, ${job.pages_skipped} skipped; ${job.credits_used} credits used\n`);
  }
  return job.status === 'failed' || job.status === 'cancelled' ? CLI_EXIT_CODES.failed : 0;
};

const map: Command = async (argv, deps) => {
  const a = args(argv, {
    search: { type: 'string' }, limit: { type: 'string' }, sitemap: { type: 'string' }, 'no-subdomains': { type: 'boolean' }, timeout: { type: 'string' },
  }, { min: 1, max: 1, name: 'the URL' });
  if (a.help) return help(deps, 'map');
  const v = a.values;
  const req: Record<string, unknown> = { url: a.positionals[0]! };
  if (str(v, 'search') !== undefined) req.search = str(v, 'search');
  const limit = integer(v, 'limit', 1, 1_000_000);
  if (limit !== undefined) req.limit = limit;
  const sitemap = str(v, 'sitemap');
  if (sitemap !== undefined && !['include', 'only', 'skip'].includes(sitemap)) throw new UsageError('--sitemap must be include, only or skip');
  if (sitemap !== undefined) req.sitemap = sitemap;
  if (v['no-subdomains'] === true) req.include_subdomains = false;
  const timeout = integer(v, 'timeout', 1, 1000);
  if (timeout !== undefined) req.timeout = timeout;
  const res = await clientFor(deps, { needKey: true }).map(req as unknown as MapRequest, { signal: deps.signal });
  if (wantsJson(v, deps)) {
    deps.out(json(res));
    return 0;
  }
  deps.out(res.links.map((l) => (l.title === undefined ? `${l.url}\n` : `${l.url}\t${l.title.replace(/\s+/g, ' ')}\n`)).join(''));
  for (const w of res.warnings ?? []) deps.err(`warning: ${w.code}: ${w.message}\n`);
  deps.err(`${res.links.length} URLs; ${res.credits_used} credits used, ${res.remaining_credits} left\n`);
  return 0;
};

const EXPORT_EXT: Record<string, string> = { markdown: 'md', html: 'html', pdf: 'pdf', docx: 'docx', json: 'json', csv: 'csv', bibtex: 'bib' };

const research: Command = async (argv, deps) => {
  const a = args(argv, {
    depth: { type: 'string' }, sources: { type: 'string' }, 'max-sources': { type: 'string' }, timeframe: { type: 'string' },
    'citation-format': { type: 'string' }, export: { type: 'string' }, output: { type: 'string', short: 'o' },
  }, { min: 1, max: 1, name: 'the question' });
  if (a.help) return help(deps, 'research');
  const v = a.values;
  const req: Record<string, unknown> = { research_query: a.positionals[0]! };
  if (str(v, 'depth') !== undefined) req.analysis_depth = str(v, 'depth');
  if (str(v, 'sources') !== undefined) req.sources = str(v, 'sources')!.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const ms = integer(v, 'max-sources', 1, 1000);
  if (ms !== undefined) req.max_sources = ms;
  if (str(v, 'timeframe') !== undefined) req.timeframe = str(v, 'timeframe');
  if (str(v, 'citation-format') !== undefined) req.citation_format = str(v, 'citation-format');
  const exportFormat = str(v, 'export');
  if (str(v, 'output') !== undefined && exportFormat === undefined) throw new UsageError('-o/--output only applies with --export FORMAT');
  if (exportFormat !== undefined) req.export_format = exportFormat;
  const client = clientFor(deps, { needKey: true });
  const accepted = await client.request('POST', '/v1/research', { ...req, async: true }, { signal: deps.signal }) as { status_url: string; job_id: string };
  const p = progress(deps);
  p.update(`research queued: job ${accepted.job_id}`);
  let job: ResearchJob;
  try {
    job = await client.waitForJob<ResearchJob>(accepted.status_url, {
      signal: deps.signal, intervalMs: deps.pollMs ?? 1000, timeoutMs: 3_600_000,
      onProgress: (j) => p.update(`research ${j.status}${j.status === 'running' ? `: ${j.stage}` : ''} (sources found ${j.progress.sources_found}, read ${j.progress.sources_read}, accepted ${j.progress.sources_accepted})`),
    });
  } finally {
    p.done();
  }
  if (job.status !== 'completed' || job.result === null || job.result === undefined) {
    const error = (job as { error?: { code?: string; message?: string } | null }).error;
    throw new CliFailure(`research ${job.job_id} ${job.status}${error ? `: ${error.code ?? ''}: ${error.message ?? ''}` : ''}`);
  }
  const report = job.result as unknown as ResearchResponse;
  let saved: string | undefined;
  if (exportFormat !== undefined) {
    if (report.export_url === undefined) deps.err('scour: the report came back without its export\n');
    else {
      saved = str(v, 'output') ?? `research.${EXPORT_EXT[exportFormat] ?? exportFormat}`;
      await download(report.export_url, saved, deps);
    }
  }
  if (wantsJson(v, deps)) deps.out(json(report));
  else deps.out(renderReport(report, job.credits_used, saved));
  return exportFormat !== undefined && saved === undefined ? CLI_EXIT_CODES.failed : 0;
};

/** The report as text: the summary, the insights with their evidence, the citations. Every quote as the server gave it. */
export function renderReport(r: ResearchResponse, credits: number, saved?: string): string {
  // Sources are numbered as the summary's [n] markers number them (src_3 is [3]).
  const n = (id: string) => id.replace(/^src_(\d+)$/, '$1');
  const out: string[] = [`# ${r.research_query}`, ''];
  if (r.executive_summary) out.push(r.executive_summary, '');
  if (r.key_insights.length > 0) {
    out.push('## Key insights', '');
    for (const i of r.key_insights) {
      out.push(`- ${i.statement} (confidence ${i.confidence.toFixed(2)}; sources ${[...new Set([i.statement_evidence.source_id, ...i.supporting_evidence.map((e) => e.source_id)])].map((id) => `[${n(id)}]`).join(', ')})`);
    }
    out.push('');
  }
  if (r.citations.length > 0) {
    out.push('## Sources', '');
    for (const c of r.citations) out.push(`[${n(c.source_id)}] ${c.text}`);
    out.push('');
  }
  for (const w of r.warnings ?? []) out.push(`warning: ${w.code}: ${w.message}`);
  out.push(`${r.sources_analyzed.filter((s) => s.used).length} sources used of ${r.sources_analyzed.length} analysed; ${credits} credits used${saved ? `; export saved to ${saved}` : ''}`);
  return `${out.join('\n')}\n`;
}

const usage: Command = async (argv, deps) => {
  const a = args(argv, {}, { min: 0, max: 0, name: '' });
  if (a.help) return help(deps, 'usage');
  const u = await clientFor(deps, { needKey: true }).usage({ signal: deps.signal });
  if (wantsJson(a.values, deps)) {
    deps.out(json(u));
    return 0;
  }
  deps.out(`plan ${u.plan}: ${u.credits_used} credits used, ${u.credits_remaining} remaining (${u.credits_reserved} held), period ${u.period_start} to ${u.reset_date}\n\n`);
  if (u.breakdown.length > 0) deps.out(table(['operation', 'requests', 'credits'], u.breakdown.map((b) => [b.operation, String(b.requests), String(b.credits)]), [20, 10]));
  return 0;
};

const tools: Command = async (argv, deps) => {
  const a = args(argv, {}, { min: 0, max: 2, name: 'the tool' });
  if (a.help) return help(deps, 'tools');
  const [slug, body] = a.positionals;
  if (slug === undefined) {
    deps.out(`${TOOL_SLUGS.join('\n')}\n`);
    return 0;
  }
  if (!(TOOL_SLUGS as readonly string[]).includes(slug)) throw new UsageError(`no tool ${JSON.stringify(slug)}; the tools: ${TOOL_SLUGS.join(', ')}`);
  let input: unknown = {};
  const raw = body === '-' ? await deps.readStdin() : body;
  if (raw !== undefined && raw.trim() !== '') {
    try {
      input = JSON.parse(raw);
    } catch (e) {
      throw new UsageError(`the tool's body is not JSON: ${(e as Error).message}`);
    }
  }
  const client = clientFor(deps, { needKey: false });
  const call = client.tools[slug as ToolSlug] as (b: unknown, o: { signal: AbortSignal }) => Promise<unknown>;
  const res = await call(input, { signal: deps.signal });
  deps.out(json(res));
  return 0;
};

const login: Command = async (argv, deps) => {
  const a = args(argv, { url: { type: 'string' }, key: { type: 'string' } }, { min: 0, max: 0, name: '' });
  if (a.help) return help(deps, 'login');
  const url = str(a.values, 'url');
  let key = str(a.values, 'key');
  if (key === undefined) {
    if (deps.stderrTty) deps.err('API key: ');
    key = (await deps.readStdin()).split(/\r?\n/)[0]?.trim();
  }
  if (!key) throw new UsageError('no key given (--key KEY, or one line on stdin)');
  const client = clientFor(deps, { needKey: true, url, key });
  const u = await client.usage({ signal: deps.signal });
  const file = configPath(deps.env);
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify({ url: client.baseUrl, api_key: key }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (e) {
    throw new CliFailure(`could not write ${file}: ${(e as Error).message}`);
  }
  deps.err(`logged in to ${client.baseUrl} (plan ${u.plan}, ${u.credits_remaining} credits remaining); saved to ${file}\n`);
  return 0;
};

const logout: Command = async (argv, deps) => {
  const a = args(argv, {}, { min: 0, max: 0, name: '' });
  if (a.help) return help(deps, 'logout');
  const file = configPath(deps.env);
  rmSync(file, { force: true });
  deps.err(`removed ${file}\n`);
  return 0;
};

function help(deps: ApiCommandDeps, cmd: string): number {
  deps.out(HELPS[cmd] ?? API_HELP);
  return 0;
}

const COMMANDS: Record<string, Command> = { search, scrape, bulk, crawl, map, research, usage, tools, login, logout };
