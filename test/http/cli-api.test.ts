/**
 * The CLI's API commands (adapters/cli/api-cmds.ts) as a user runs them: the
 * real `scour` process (tsx) against a real server on both deployments
 * (embedded SQLite; PostgreSQL + Redis), with loopback targets. search,
 * scrape (Markdown, a screenshot saved to a file), bulk (a file and stdin,
 * JSON lines in input order, progress on stderr), crawl (progress, the
 * final job), research (stage progress, the report, an export file), usage,
 * tools without a key, login/logout with the config file, --help for each;
 * and the exit codes by error class: 2 command line, 3 no key or refused
 * key, 4 refused request, 5 no credits, 6 still rate-limited, 1 server
 * failure or unreachable, and 1 for a bulk with failed URLs.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCommand } from '../../adapters/cli/api-cmds.js';
import { researchCorpus } from '../fixtures/research-corpus.js';
import { pooled, runCli, type CliResult } from '../support/cli.js';
import { startCrawlSite, type CrawlSite } from '../support/crawl-site.js';
import { startSearxng, type FakeSearxng } from '../support/searxng.js';
import { call } from '../support/http.js';
import { CONFIGS, startScourIn, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'cli-api-admin-token-0123456789abcdef';

/** The real CLI, stdin always a pipe (empty unless given), as a user's shell gives it. */
const scour = (args: readonly string[], env: Record<string, string>, cwd: string, stdin?: string): Promise<CliResult> =>
  runCli(args, env, cwd, 90_000, stdin ?? '');

const shown = (r: CliResult) => `exit ${r.code}\nstdout:\n${r.out.slice(0, 3000)}\nstderr:\n${r.err.slice(0, 3000)}`;
function ok(r: CliResult): CliResult {
  expect(r.code, shown(r)).toBe(0);
  return r;
}
const okJson = (r: CliResult): any => JSON.parse(ok(r).out);

/** A loopback server that always answers `status` with a spec error body (retry_after 0 for 429). */
async function misbehaving(status: number): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    req.resume();
    const code = status === 429 ? 'RATE_LIMITED' : 'INTERNAL_ERROR';
    res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '0' } : {}) });
    res.end(JSON.stringify({ error: `always ${status}`, code, ...(status === 429 ? { retry_after: 0 } : {}), request_id: 'req_x', timestamp: new Date().toISOString() }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe.each(CONFIGS)('scour API commands (%s)', { timeout: 240_000 }, (config) => {
  let s: Running;
  let site: TargetSite;
  let docs: CrawlSite;
  let sx: FakeSearxng;
  let dir: string;
  let key: string;
  let broke: string;
  let env: Record<string, string>;
  const run = (args: readonly string[], extra: Record<string, string> = {}, stdin?: string) => scour(args, { ...env, ...extra }, dir, stdin);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-cli-api-'));
    [site, docs, sx] = await Promise.all([startTargetSite(), startCrawlSite('docs'), startSearxng()]);
    sx.setResults([]);
    s = await startScourIn(config, 'uws', {
      adminToken: ADMIN, allowPrivateTargets: 'loopback', searchProviders: ['local', 'searxng'], searxngUrl: sx.url, searchProviderTimeoutMs: 10_000,
      jobs: 'embedded', webhookSchedule: [1, 1],
    });
    const made = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    expect(made.status, made.text).toBe(201);
    key = made.body.api_key;
    const none = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'starter', credits: 0 } });
    broke = none.body.api_key;
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: researchCorpus(Date.now()) } });
    expect(put.status, put.text).toBe(200);
    // XDG_CONFIG_HOME points into the test's directory: no config file of the machine's user is read or written.
    env = { SCOUR_URL: s.url, SCOUR_API_KEY: key, XDG_CONFIG_HOME: join(dir, 'config'), SCOUR_POLL_MS: '200' };
  }, 90_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
    await docs?.close();
    await sx?.close();
  });

  const usage = async (k = key) => (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${k}` })).body as { credits_used: number; credits_remaining: number };

  it('tools need no key; the list, a tool with a body, a body from stdin', async () => {
    const list = ok(await run(['tools'], { SCOUR_API_KEY: '' }));
    expect(list.out.split('\n')).toContain('uuid-generator');
    const u = okJson(await run(['tools', 'uuid-generator', '{"count":3}'], { SCOUR_API_KEY: '' }));
    expect(JSON.stringify(u).match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g)).toHaveLength(3);
    const b = okJson(await run(['tools', 'base64-encoder', '-'], { SCOUR_API_KEY: '' }, '{"input":"hello","action":"encode"}'));
    expect(JSON.stringify(b)).toContain('aGVsbG8=');
  });

  it('search prints the answer as JSON when piped, charged once', async () => {
    const before = await usage();
    const j = okJson(await run(['search', 'perovskite solar cell stability', '--max-results', '3']));
    expect(j.query).toBe('perovskite solar cell stability');
    expect(j.search_results.length).toBeGreaterThan(0);
    expect(j.search_results.length).toBeLessThanOrEqual(3);
    expect(j.search_results[0].source).toContain('local');
    expect((await usage()).credits_used - before.credits_used).toBe(j.credits_used);
  });

  it('scrape: the page as Markdown, and a screenshot saved to a file', async () => {
    const j = okJson(await run(['scrape', `${site.url}/html/simple`, '--markdown', '--json']));
    expect(j.status_code).toBe(200);
    expect(j.markdown).toContain('Hello, target');
    const shot = join(dir, `shot-${config}.png`);
    const r = ok(await run(['scrape', `${site.url}/html/simple`, '--screenshot', shot]));
    expect(JSON.parse(r.out).screenshot_url).toMatch(/\/v1\/screenshots\//);
    const png = readFileSync(shot);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.length).toBeGreaterThan(1000);
  });

  it('bulk: a file and stdin, one JSON line per URL in input order, progress on stderr; exit 1 when a URL failed', async () => {
    const file = join(dir, `urls-${config}.txt`);
    const urls = [`${site.url}/html/simple`, 'http://127.0.0.1:9/closed', `${site.url}/js`];
    writeFileSync(file, `# a comment\n${urls[0]}\n\n${urls[1]}\n${urls[2]}\n`);
    const r = await run(['bulk', file]);
    expect(r.code, shown(r)).toBe(1);
    const lines = r.out.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.url)).toEqual(urls);
    expect(lines.map((l) => l.success)).toEqual([true, false, true]);
    expect(lines[0].result.text_content).toContain('Hello, target');
    expect(r.err).toMatch(/bulk \[[#.]+\] \d+\/3 done/);
    expect(r.err).toContain('bulk: 3 URLs, 2 succeeded, 1 failed');

    const good = await run(['bulk', '-'], {}, `${urls[0]}\n${urls[2]}\n`);
    expect(good.code, shown(good)).toBe(0);
    expect(good.out.trim().split('\n').map((l) => JSON.parse(l).url)).toEqual([urls[0], urls[2]]);
  });

  it('crawl: the server crawls with progress on stderr, then the final job', async () => {
    const j = okJson(await run(['crawl', `${docs.url}/`, '--max-pages', '3']));
    expect(j).toMatchObject({ status: 'completed', pages_done: 3, collection: expect.any(String) });
    expect(j.job_id).toMatch(/^crawl_/);
    expect(j.credits_used).toBeGreaterThan(0);
    const noWait = okJson(await run(['crawl', `${docs.url}/`, '--max-pages', '1', '--no-wait']));
    expect(noWait).toMatchObject({ status: 'queued', status_url: expect.stringContaining('/v1/crawl/') });
  });

  it('research: progress by stage on stderr, the report as JSON, and an export file', async () => {
    const out = join(dir, `report-${config}.md`);
    // SearXNG answers after 1.5 s, so the job is seen gathering.
    sx.setMode('slow', { delayMs: 1500 });
    const r = ok(await run(['research', 'How stable are perovskite solar cells?', '--depth', 'quick', '--export', 'markdown', '-o', out]));
    const report = JSON.parse(r.out);
    expect(report.research_query).toBe('How stable are perovskite solar cells?');
    expect(report.key_insights.length).toBeGreaterThan(0);
    expect(report.export_url).toBeDefined();
    // Stage progress lines (not a terminal: a line per change), ending completed.
    sx.setMode('ok');
    expect(r.err).toMatch(/^research queued: job research_/m);
    expect(r.err).toMatch(/^research running: gather \(sources found \d+, read \d+, accepted \d+\)$/m);
    expect(r.err).toMatch(/^research completed \(sources found [1-9]\d*, read [1-9]\d*, accepted [1-9]\d*\)$/m);
    const md = readFileSync(out, 'utf8');
    expect(md).toContain('perovskite');
  });

  it('usage: JSON when piped', async () => {
    const u = okJson(await run(['usage']));
    expect(u).toMatchObject({ plan: 'unicorn', credits_remaining: expect.any(Number) });
    expect(u.credits_used).toBeGreaterThan(0);
  });

  it('on a terminal: tables and text instead of JSON, progress redrawn on one line', async () => {
    const term = async (cmd: string, argv: string[]) => {
      let out = '';
      let err = '';
      const code = await apiCommand(cmd, argv, {
        env, out: (t) => (out += t), err: (t) => (err += t), stdoutTty: true, stderrTty: true,
        readStdin: async () => '', signal: new AbortController().signal, pollMs: 100,
      });
      return { code, out, err };
    };
    const search = await term('search', ['perovskite solar cell stability', '--max-results', '2']);
    expect(search.code, search.err).toBe(0);
    expect(search.out).toMatch(/^#\s+title\s+source\s+link\n---/);
    expect(search.out).toMatch(/\n1\s+.+\s+local\s+https:\/\//);
    expect(search.out).toMatch(/\d+ results in [\d.]+ s; 1 credits used, \d+ left\n$/);
    const scrape = await term('scrape', [`${site.url}/html/simple`, '--markdown']);
    expect(scrape.out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/html\/simple \(200, text\/html; charset=utf-8, [\d.]+ s\)\n\n# Hello, target/);
    const u = await term('usage', []);
    expect(u.out).toMatch(/^plan unicorn: \d+ credits used, \d+ remaining \(0 held\)/);
    expect(u.out).toMatch(/operation\s+requests\s+credits\n-+\s+-+\s+-+\n(.+\n)*scrape\s+\d+\s+\d+/);
    const research = await term('research', ['How stable are perovskite solar cells?', '--depth', 'quick']);
    expect(research.code, research.err).toBe(0);
    expect(research.out).toMatch(/^# How stable are perovskite solar cells\?\n\n/);
    expect(research.out).toMatch(/## Key insights\n\n- .+ \(confidence 0\.\d\d; sources \[\d+\]/);
    expect(research.out).toMatch(/## Sources\n\n\[\d+\] .+https:\/\//);
    // Progress on a terminal: carriage return and erase-line, one final newline.
    expect(research.err).toMatch(/^\r\x1b\[2Kresearch queued: job research_/);
    expect(research.err.endsWith('\n')).toBe(true);
  });

  it('login keeps URL and key in a 0600 config file that later commands use; logout forgets them', async () => {
    const cfg = { XDG_CONFIG_HOME: join(dir, `login-${config}`), SCOUR_URL: '', SCOUR_API_KEY: '' };
    const bad = await run(['login', '--url', s.url, '--key', 'sk_live_not_a_real_key_000000000000'], cfg);
    expect(bad.code, shown(bad)).toBe(3);
    expect(existsSync(join(cfg.XDG_CONFIG_HOME, 'scour', 'config.json'))).toBe(false);
    const good = ok(await run(['login', '--url', s.url], cfg, `${key}\n`));
    expect(good.err).toContain('logged in');
    const file = join(cfg.XDG_CONFIG_HOME, 'scour', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: s.url, api_key: key });
    // No SCOUR_URL, no SCOUR_API_KEY: the file decides.
    const u = okJson(await run(['usage'], cfg));
    expect(u.plan).toBe('unicorn');
    ok(await run(['logout'], cfg));
    expect(existsSync(file)).toBe(false);
    const after = await run(['usage'], { ...cfg, SCOUR_URL: s.url });
    expect(after.code, shown(after)).toBe(3);
    expect(after.err).toContain('no API key');
  });

  it('exit codes by error class, with the error body on stderr', async () => {
    const dead = await misbehaving(503);
    const limited = await misbehaving(429);
    try {
      const cases: [string[], Record<string, string>, number, RegExp][] = [
        [['usage'], { SCOUR_API_KEY: '' }, 3, /no API key/],
        [['usage'], { SCOUR_API_KEY: 'sk_live_wrong_000000000000000000' }, 3, /401 AUTHENTICATION_FAILED: Invalid API key/],
        [['scrape', 'not a url'], {}, 4, /400 MISSING_PARAMETER[\s\S]*url:/],
        [['search', 'x', '--max-results', '5000'], {}, 2, /--max-results must be a whole number from 1 to 1000/],
        [['scrape', `${site.url}/html/simple`], { SCOUR_API_KEY: broke }, 5, /402 /],
        [['usage'], { SCOUR_URL: limited.url }, 6, /429 RATE_LIMITED/],
        [['usage'], { SCOUR_URL: dead.url }, 1, /503 INTERNAL_ERROR/],
        [['usage'], { SCOUR_URL: 'http://127.0.0.1:9' }, 1, /NETWORK_ERROR/],
        [['usage'], { SCOUR_URL: 'ftp://127.0.0.1/' }, 2, /SCOUR_URL must be an http or https URL/],
      ];
      const results = await pooled(cases.map(([args, extra]) => () => run(args, extra)), 3);
      results.forEach((r, i) => {
        const [args, , code, message] = cases[i]!;
        expect(r.code, `${args.join(' ')}\n${shown(r)}`).toBe(code);
        expect(r.err, args.join(' ')).toMatch(message);
        expect(r.err, args.join(' ')).not.toMatch(/\n\s+at /); // no stack trace
      });
      // 4 attempts (3 retries) before giving up on the 429s and the 503s.
      expect(limited.hits()).toBe(4);
      expect(dead.hits()).toBe(4);
    } finally {
      await dead.close();
      await limited.close();
    }
  });

  it('wrong command lines exit 2 with the reason; --help exits 0 for every command', async () => {
    const cases: [string[], RegExp][] = [
      [['search'], /the query is missing/],
      [['search', 'a', 'b'], /unexpected argument "b"/],
      [['search', 'a', '--max-results', 'x'], /--max-results must be a whole number/],
      [['search', 'a', '--colour'], /Unknown option '--colour'/],
      [['scrape', `${site.url}/`, '--full-page'], /--full-page only applies with --screenshot/],
      [['research', 'q', '-o', 'x.pdf'], /only applies with --export/],
      [['bulk', join(dir, 'missing.txt')], /cannot read .*ENOENT/],
      [['bulk', '-'], /stdin holds no URL/],
      [['tools', 'nope'], /no tool "nope"/],
      [['tools', 'uuid-generator', '{bad'], /not JSON/],
    ];
    const results = await pooled(cases.map(([args]) => () => run(args)), 4);
    results.forEach((r, i) => {
      expect(r.code, `${cases[i]![0].join(' ')}\n${shown(r)}`).toBe(2);
      expect(r.err).toMatch(cases[i]![1]);
    });
    const helps = await pooled(['search', 'scrape', 'bulk', 'crawl', 'research', 'usage', 'tools', 'login', 'logout'].map((c) => () => run([c, '--help'])), 4);
    for (const h of helps) {
      expect(h.code, shown(h)).toBe(0);
      expect(h.out).toMatch(/^scour \w+/);
    }
  });
});
