/**
 * The plain HTTP fetcher against the loopback target site: refusals (with
 * the site proving it received nothing), then, with private targets
 * allowed, redirects, time and size limits, decoding, charsets and what
 * reaches the target.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { TargetNotAllowed, TargetResponseInvalid, TargetTimeout } from '../../core/errors.js';
import { nodeEgress } from '../../adapters/egress/port.js';
import type { Egress } from '../../core/ports.js';
import { createHttpFetcher, DEFAULT_USER_AGENT } from '../../plugins/fetchers/http/index.js';
import type { FetchRequest } from '../../plugins/sdk/scrape.js';
import { ARTICLE_DIR, CHARSET_TEXT, startTargetSite, type TargetSite } from '../support/target-site.js';
import { startCountingProxy } from '../support/proxies.js';

let site: TargetSite;
beforeAll(async () => { site = await startTargetSite(); });
afterAll(async () => { await site.close(); });
beforeEach(() => site.reset());

const request = (url: string, over: Partial<FetchRequest> = {}): FetchRequest => ({
  url, headers: {}, userAgent: undefined, cookies: {}, followRedirects: true, timeoutMs: 10_000, proxy: undefined,
  signal: new AbortController().signal, ...over,
});

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('the Egress port', () => {
  it('reaches the network only through the implementation it is given', async () => {
    const calls: { url: string; allowPrivate: boolean; timeoutMs: number | undefined }[] = [];
    const recording: Egress = {
      fetch: (url, req) => {
        calls.push({ url, allowPrivate: req.allowPrivate, timeoutMs: req.timeoutMs });
        return nodeEgress.fetch(url, req);
      },
      resolveAll: (host, policy) => nodeEgress.resolveAll(host, policy),
    };
    const f = createHttpFetcher({ egress: recording, allowPrivate: true });
    const res = await f.fetch(request(`${site.url}/html/simple`, { timeoutMs: 4321 }));
    expect(res.statusCode).toBe(200);
    expect(calls).toEqual([{ url: `${site.url}/html/simple`, allowPrivate: true, timeoutMs: 4321 }]);

    // Another implementation entirely: nothing reaches the site, its answer is what the fetcher returns.
    const hits = site.hitCount();
    const canned: Egress = {
      fetch: async (url) => ({
        url, statusCode: 200, statusMessage: 'OK', headers: { 'content-type': 'text/html; charset=utf-8' }, setCookies: [],
        body: new TextEncoder().encode('<p>from the port</p>'), wireBytes: 20, redirects: [],
      }),
      resolveAll: async () => [],
    };
    const offline = await createHttpFetcher({ egress: canned, allowPrivate: false }).fetch(request('http://example.test/'));
    expect(offline.body).toBe('<p>from the port</p>');
    expect(site.hitCount()).toBe(hits);
  });
});

describe('refusals (private targets not allowed)', () => {
  const fetcher = createHttpFetcher({ egress: nodeEgress, allowPrivate: false });

  it('is a fetcher plugin', () => {
    expect(fetcher).toMatchObject({ name: 'fetcher-http', kind: 'fetcher', mode: 'http' });
  });

  it.each([
    (p: number) => `http://127.0.0.1:${p}/html/simple`,
    (p: number) => `http://2130706433:${p}/html/simple`,
    (p: number) => `http://0x7f000001:${p}/html/simple`,
    (p: number) => `http://0177.0.0.1:${p}/html/simple`,
    (p: number) => `http://127.1:${p}/html/simple`,
    (p: number) => `http://[::1]:${p}/html/simple`,
    (p: number) => `http://[::ffff:127.0.0.1]:${p}/html/simple`,
    (p: number) => `http://[::ffff:7f00:1]:${p}/html/simple`,
    (p: number) => `http://localhost:${p}/html/simple`,
    (p: number) => `http://0.0.0.0:${p}/html/simple`,
    (p: number) => `http://127.0.0.2:${p}/html/simple`,
  ])('refuses %s and the site sees nothing', async (make) => {
    const url = make(site.port);
    const err = await failure(fetcher.fetch(request(url)));
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect((err as TargetNotAllowed).field).toBe('url');
    expect(site.hitCount()).toBe(0);
    expect(site.connections()).toBe(0);
  });

  it('refuses a name that resolves to loopback after the lookup, before connecting', async () => {
    const f = createHttpFetcher({ egress: nodeEgress, allowPrivate: false, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const err = await failure(f.fetch(request(`http://www.example.test:${site.port}/html/simple`)));
    expect((err as TargetNotAllowed).reason).toBe('www.example.test resolves to 127.0.0.1, which is not allowed: 127.0.0.1 is a loopback address');
    expect(site.connections()).toBe(0);
  });

  it.each(['file:///etc/passwd', 'ftp://127.0.0.1/x', 'data:text/html,<b>x</b>', 'javascript:alert(1)', 'gopher://127.0.0.1:70/_GET'])(
    'refuses the scheme of %s even with private targets allowed', async (url) => {
      const err = await failure(createHttpFetcher({ egress: nodeEgress, allowPrivate: true }).fetch(request(url)));
      expect(err).toBeInstanceOf(TargetNotAllowed);
      expect((err as TargetNotAllowed).reason).toMatch(/scheme is not allowed/);
    },
  );

  it('refuses credentials in the URL without echoing them', async () => {
    const err = await failure(createHttpFetcher({ egress: nodeEgress, allowPrivate: true }).fetch(request(`http://admin:hunter2@127.0.0.1:${site.port}/echo`)));
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect(JSON.stringify((err as TargetNotAllowed).fields())).not.toContain('hunter2');
    expect(site.hitCount()).toBe(0);
  });

  it('refuses a redirect to a refused address, with zero hits there', async () => {
    const f = createHttpFetcher({ egress: nodeEgress, allowPrivate: false, allowAddress: (ip) => ip === '127.0.0.1' });
    const to = `${site.altUrl ?? `http://127.0.0.2:${site.port}`}/html/simple`;
    const err = await failure(f.fetch(request(`${site.url}/redirect/to?url=${encodeURIComponent(to)}`)));
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect((err as TargetNotAllowed).reason).toMatch(/^redirect to http:\/\/127\.0\.0\.2:\d+\/html\/simple is not allowed/);
    expect(site.hitsOn('127.0.0.1')).toBe(1);
    expect(site.hitsOn('127.0.0.2')).toBe(0);
    expect(site.connections('127.0.0.2')).toBe(0);
  });
});

describe('fetching (private targets allowed)', () => {
  const fetcher = createHttpFetcher({ egress: nodeEgress, allowPrivate: true });

  it('answers a page with status, lower-case headers, content type, body and timing', async () => {
    const url = `${site.url}/html/simple`;
    const r = await fetcher.fetch(request(url));
    expect(r).toMatchObject({ url, finalUrl: url, statusCode: 200, contentType: 'text/html; charset=utf-8' });
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(Object.keys(r.headers).every((k) => k === k.toLowerCase())).toBe(true);
    expect(r.body).toContain('<h1>Hello, target</h1>');
    expect(r.loadTimeSeconds).toBeGreaterThanOrEqual(0);
    expect(r.loadTimeSeconds).toBeLessThan(5);
  });

  it('follows a redirect chain within the limit and reports the final URL', async () => {
    const r = await fetcher.fetch(request(`${site.url}/redirect/chain/3`));
    expect(r.finalUrl).toBe(`${site.url}/redirect/chain/0`);
    expect(r.body).toContain('Chain end');
    const ten = await fetcher.fetch(request(`${site.url}/redirect/chain/10?status=301`));
    expect(ten.statusCode).toBe(200);
    expect(ten.finalUrl).toBe(`${site.url}/redirect/chain/0?status=301`);
  });

  it('refuses a loop or a chain over the limit as an invalid response', async () => {
    const loop = await failure(fetcher.fetch(request(`${site.url}/redirect/loop`)));
    expect(loop).toBeInstanceOf(TargetResponseInvalid);
    expect((loop as TargetResponseInvalid).fields()).toMatchObject({ limit: 10 });
    expect(site.hitCount('/redirect/loop')).toBe(11);
    expect(await failure(fetcher.fetch(request(`${site.url}/redirect/chain/11`)))).toBeInstanceOf(TargetResponseInvalid);
    const short = createHttpFetcher({ egress: nodeEgress, allowPrivate: true, maxRedirects: 2 });
    expect(await failure(short.fetch(request(`${site.url}/redirect/chain/3`)))).toBeInstanceOf(TargetResponseInvalid);
    await expect(short.fetch(request(`${site.url}/redirect/chain/2`))).resolves.toMatchObject({ statusCode: 200 });
  });

  it('returns the redirect itself when follow_redirects is false', async () => {
    const url = `${site.url}/redirect/chain/2`;
    const r = await fetcher.fetch(request(url, { followRedirects: false }));
    expect(r).toMatchObject({ url, finalUrl: url, statusCode: 302 });
    expect(r.headers.location).toBe('1');
    expect(site.hitCount()).toBe(1);
  });

  it('times out a slow target at the timeout, not later', async () => {
    const started = Date.now();
    const err = await failure(fetcher.fetch(request(`${site.url}/slow?ms=5000`, { timeoutMs: 500 })));
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(TargetTimeout);
    expect((err as TargetTimeout).fields()).toEqual({ timeout: 0.5 });
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(1500);
    await expect(fetcher.fetch(request(`${site.url}/slow?ms=100`, { timeoutMs: 2000 }))).resolves.toMatchObject({ statusCode: 200 });
  });

  it('times out a target that never answers', async () => {
    const started = Date.now();
    expect(await failure(fetcher.fetch(request(`${site.url}/hang`, { timeoutMs: 400 })))).toBeInstanceOf(TargetTimeout);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('stops a huge body at the wire limit, streamed or declared', async () => {
    const small = createHttpFetcher({ egress: nodeEgress, allowPrivate: true, maxBodyBytes: 1024 * 1024 });
    for (const path of ['/huge?mb=200', '/huge?mb=200&length=1']) {
      const started = Date.now();
      const err = await failure(small.fetch(request(`${site.url}${path}`)));
      expect(err).toBeInstanceOf(TargetResponseInvalid);
      expect((err as TargetResponseInvalid).fields()).toEqual({ details: 'the response body exceeds 1048576 bytes', limit: 1048576 });
      expect(Date.now() - started).toBeLessThan(2000);
    }
    // The default limit (10 MiB) lets 5 MiB through.
    const r = await fetcher.fetch(request(`${site.url}/huge?mb=5`));
    expect(r.body.length).toBe(5 * 1024 * 1024);
  });

  it('stops a gzip bomb early, without inflating it or ballooning memory', async () => {
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
    const started = Date.now();
    try {
      const err = await failure(fetcher.fetch(request(`${site.url}/gzip-bomb`)));
      expect(err).toBeInstanceOf(TargetResponseInvalid);
      expect((err as TargetResponseInvalid).fields()).toMatchObject({ limit: 50 * 1024 * 1024 });
      expect((err as TargetResponseInvalid).details).toMatch(/decompressed body exceeds/);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(peak - rssBefore).toBeLessThan(100 * 1024 * 1024);

    const tight = createHttpFetcher({ egress: nodeEgress, allowPrivate: true, maxDecodedBytes: 1024 * 1024 });
    const t2 = Date.now();
    expect(await failure(tight.fetch(request(`${site.url}/gzip-bomb`)))).toBeInstanceOf(TargetResponseInvalid);
    expect(Date.now() - t2).toBeLessThan(500);
  });

  it.each([
    ['/gzip', 'Compressed with gzip'],
    ['/br', 'Compressed with brotli'],
    ['/deflate', 'Compressed with deflate'],
    ['/deflate?raw=1', 'Compressed with deflate'],
  ])('decodes %s', async (path, text) => {
    const r = await fetcher.fetch(request(`${site.url}${path}`));
    expect(r.body).toContain(text);
    expect(r.body.startsWith('<!DOCTYPE html>')).toBe(true);
  });

  it('refuses a body that is not the encoding it claims', async () => {
    const err = await failure(fetcher.fetch(request(`${site.url}/bad-gzip`)));
    expect(err).toBeInstanceOf(TargetResponseInvalid);
    expect((err as TargetResponseInvalid).details).toMatch(/^the body is not valid gzip/);
  });

  it.each([
    ['/charset/header-latin1', CHARSET_TEXT.latin1],
    ['/charset/http-equiv-latin1', CHARSET_TEXT.latin1],
    ['/charset/meta-1251', CHARSET_TEXT.cyrillic],
    ['/charset/bom-utf16le', CHARSET_TEXT.utf16],
    ['/charset/none', CHARSET_TEXT.none],
  ])('decodes %s to its text', async (path, text) => {
    const r = await fetcher.fetch(request(`${site.url}${path}`));
    expect(r.body).toContain(`<p id="text">${text}</p>`);
    expect(r.body.charCodeAt(0)).not.toBe(0xfeff);
  });

  it('answers 404, 500 and 403 as results, not errors', async () => {
    for (const code of [404, 500, 503]) {
      const r = await fetcher.fetch(request(`${site.url}/status/${code}`));
      expect(r.statusCode).toBe(code);
      expect(r.body).toContain(`Status ${code}`);
    }
    const blocked = await fetcher.fetch(request(`${site.url}/blocked`));
    expect(blocked.statusCode).toBe(403);
    expect(blocked.body).toContain('Access denied');
    const challenge = await fetcher.fetch(request(`${site.url}/challenge`));
    expect(challenge.statusCode).toBe(200);
    expect(challenge.headers['cf-mitigated']).toBe('challenge');
    expect(challenge.body).toContain('<title>Just a moment...</title>');
    const empty = await fetcher.fetch(request(`${site.url}/status/204`));
    expect(empty).toMatchObject({ statusCode: 204, body: '' });
  });

  it('sends browser-like headers by default', async () => {
    const r = await fetcher.fetch(request(`${site.url}/echo`));
    const echo = JSON.parse(r.body);
    expect(echo.headers).toMatchObject({
      'user-agent': DEFAULT_USER_AGENT,
      'accept-language': 'en-US,en;q=0.9',
      'accept-encoding': 'gzip, deflate, br',
      'upgrade-insecure-requests': '1',
      host: `127.0.0.1:${site.port}`,
    });
    expect(echo.headers.accept).toMatch(/^text\/html,application\/xhtml\+xml/);
    expect(DEFAULT_USER_AGENT).toMatch(/Chrome\/\d+/);
    // Host first, then Chrome's order, in Chrome's capitalisation.
    const names = (echo.rawHeaders as string[]).filter((_, i) => i % 2 === 0);
    expect(names.slice(0, 6)).toEqual(['Host', 'Upgrade-Insecure-Requests', 'User-Agent', 'Accept', 'Accept-Encoding', 'Accept-Language']);
  });

  it('sends the caller\'s cookies, headers and user agent', async () => {
    const r = await fetcher.fetch(request(`${site.url}/echo`, {
      userAgent: 'ScourTest/1.0',
      headers: { 'x-test': 'yes', 'accept-language': 'de-DE', referer: 'https://ref.example/' },
      cookies: { session: 'abc', theme: 'dark' },
    }));
    const echo = JSON.parse(r.body);
    expect(echo.headers['user-agent']).toBe('ScourTest/1.0');
    expect(echo.headers['x-test']).toBe('yes');
    expect(echo.headers['accept-language']).toBe('de-DE');
    expect(echo.headers.referer).toBe('https://ref.example/');
    expect(echo.cookies).toEqual({ session: 'abc', theme: 'dark' });
    expect(echo.headers.cookie).toBe('session=abc; theme=dark');
  });

  it('keeps cookies a redirect sets, for the same host', async () => {
    const r = await fetcher.fetch(request(`${site.url}/cookies/set?name=sid&value=xyz`, { cookies: { pre: '1' } }));
    expect(r.finalUrl).toBe(`${site.url}/echo`);
    expect(JSON.parse(r.body).cookies).toEqual({ pre: '1', sid: 'xyz' });
  });

  it('serves a benchmark article through the site', async () => {
    const file = readdirSync(ARTICLE_DIR).find((f) => f.endsWith('.html.gz'));
    expect(file).toBeDefined();
    const id = (file as string).replace(/\.html\.gz$/, '');
    const r = await fetcher.fetch(request(`${site.url}/article?id=${id}`));
    expect(r.statusCode).toBe(200);
    expect(r.body.length).toBeGreaterThan(1000);
    expect((await fetcher.fetch(request(`${site.url}/article?id=nope`))).statusCode).toBe(404);
  });

  it('goes through a proxy when one is chosen, and directly when none is', async () => {
    const proxy = await startCountingProxy();
    try {
      const direct = await fetcher.fetch(request(`${site.url}/echo`));
      expect(direct.statusCode).toBe(200);
      expect(proxy.count()).toBe(0);
      const via = await fetcher.fetch(request(`${site.url}/echo`, {
        proxy: { url: proxy.url, id: 'test-dc', type: 'datacenter', country: undefined },
      }));
      expect(via.statusCode).toBe(200);
      expect(proxy.requests).toEqual([`CONNECT 127.0.0.1:${site.port}`]);
    } finally {
      await proxy.close();
    }
  });
});
