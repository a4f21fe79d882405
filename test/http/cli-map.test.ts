/**
 * `scour map URL` (adapters/cli/api-cmds.ts) as a user runs it: the real
 * `scour` process (tsx) against a real server and a loopback site
 * (test/support/map-site.ts): the answer as JSON when piped, its options
 * passed through (--search, --limit, --sitemap, --no-subdomains), one URL a
 * line on a terminal, warnings on stderr, --help, and the exit codes: 2
 * for a wrong command line, 4 for a refused URL, 5 without credits (these
 * run the command in this process, with a terminal's settings or piped:
 * each real process costs seconds on a loaded machine).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCommand } from '../../adapters/cli/api-cmds.js';
import { UsageError } from '../../adapters/cli/errors.js';
import { pooled, runCli, type CliResult } from '../support/cli.js';
import { call } from '../support/http.js';
import { startMapSite, type MapSite } from '../support/map-site.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'cli-map-admin-token-0123456789abcdef';
const shown = (r: CliResult) => `exit ${r.code}\nstdout:\n${r.out.slice(0, 3000)}\nstderr:\n${r.err.slice(0, 3000)}`;

describe('scour map', { timeout: 180_000 }, () => {
  let s: Running;
  let site: MapSite;
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  let broke: string;
  const run = (args: readonly string[], extra: Record<string, string> = {}) => runCli(['map', ...args], { ...env, ...extra }, dir, 90_000, '');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-cli-map-'));
    [s, site] = await Promise.all([startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback' }), startMapSite()]);
    const made = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 100 } });
    expect(made.status, made.text).toBe(201);
    key = made.body.api_key;
    broke = (await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 0 } })).body.api_key;
    env = { SCOUR_URL: s.url, SCOUR_API_KEY: key, XDG_CONFIG_HOME: join(dir, 'config') };
  }, 90_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  /** The command in this process, as a terminal runs it (or piped: `tty` false). */
  const inProcess = async (args: readonly string[], o: { key?: string; tty?: boolean } = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    let code: number;
    try {
      code = await apiCommand('map', args, {
        env: { SCOUR_URL: s.url, SCOUR_API_KEY: o.key ?? key, XDG_CONFIG_HOME: join(dir, 'config') }, out: (t) => out.push(t), err: (t) => err.push(t),
        stdoutTty: o.tty ?? true, stderrTty: o.tty ?? true, readStdin: async () => '', signal: new AbortController().signal,
      });
    } catch (e) {
      // A wrong command line: main() prints it with the help and exits 2.
      if (!(e instanceof UsageError)) throw e;
      code = 2;
      err.push(e.message);
    }
    return { code, out: out.join(''), err: err.join('') };
  };

  it('the real command: the map as JSON when piped, its options sent; --help', async () => {
    const [all, searched, help] = (await pooled([
      () => run([`${site.url}/`]),
      () => run([`${site.url}/`, '--search', 'archive older', '--limit', '1', '--sitemap', 'only', '--no-subdomains']),
      () => run(['--help']),
    ])) as [CliResult, CliResult, CliResult];
    expect(all.code, shown(all)).toBe(0);
    const j = JSON.parse(all.out);
    expect(j.credits_used).toBe(1);
    expect(j.links[0]).toEqual({ url: `${site.url}/`, source: 'page', title: 'Home of the map site' });
    expect(j.links.map((l: { url: string }) => l.url)).toEqual(expect.arrayContaining([`${site.url}/only-in-sitemap`, `${site.url}/archive/2020/old-post`, `http://blog.localhost:${site.port}/`]));

    expect(searched.code, shown(searched)).toBe(0);
    expect(JSON.parse(searched.out).links).toEqual([{ url: `${site.url}/archive/2021/older-post`, source: 'sitemap' }]);

    expect(help.code, shown(help)).toBe(0);
    expect(help.out).toContain('POST /v1/map');
    expect(help.out).toContain('--no-subdomains');
  });

  it('exit codes: 2 for a wrong command line, 4 for a refused URL, 5 without credits', async () => {
    const badSitemap = await inProcess([`${site.url}/`, '--sitemap', 'sometimes']);
    expect(badSitemap.code).toBe(2);
    expect(badSitemap.err).toContain('--sitemap must be include, only or skip');
    expect((await inProcess([`${site.url}/`, '--limit', 'many'])).code).toBe(2);
    expect((await inProcess([`${site.url}/`, '--unknown'])).code).toBe(2);
    const noUrl = await inProcess([]);
    expect(noUrl.code).toBe(2);
    expect(noUrl.err).toContain('the URL is missing');
    const refused = await inProcess(['http://10.0.0.1/']);
    expect(refused.code, refused.err).toBe(4);
    expect(refused.err).toContain('400 TARGET_NOT_ALLOWED');
    const poor = await inProcess([`${site.url}/`], { key: broke });
    expect(poor.code, poor.err).toBe(5);
    expect(poor.err).toContain('402 NO_CREDITS');
    // Piped in process too: JSON.
    const piped = await inProcess([`${site.url}/`, '--limit', '2'], { tty: false });
    expect(piped.code, piped.err).toBe(0);
    expect(JSON.parse(piped.out).links).toHaveLength(2);
  });

  it('on a terminal: one URL a line, the link text after a tab; warnings and credits on stderr', async () => {
    const r = await inProcess([`${site.url}/`, '--sitemap', 'skip', '--search', 'pricing']);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toBe(`${site.url}/pricing\tPlans and pricing`);
    expect(r.err).toMatch(/^\d+ URLs; 1 credits used, \d+ left\n$/);
    const none = await startMapSite('none');
    try {
      const w = await inProcess([`${none.url}/`]);
      expect(w.code, w.err).toBe(0);
      expect(w.out).toBe('');
      expect(w.err).toContain('warning: START_PAGE_NOT_READ: The start page answered 404');
    } finally {
      await none.close();
    }
  });
});
