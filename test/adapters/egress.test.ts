/**
 * The egress guard. The address matrix is judged without connecting
 * anywhere; everything that connects goes to the loopback target site (and
 * loopback proxies), and refusals are proven by the site's counters.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  checkTargetUrl, classifyAddress, isAllowedAddress, isMetadataHostname, parseIpLiteral, type AddressClass,
} from '../../core/egress.js';
import { TargetNotAllowed, TargetResponseInvalid, TargetTimeout, TargetUnreachable } from '../../core/errors.js';
import { createGuardedLookup, fetchGuarded, guardSocket, resolveAndCheck, type Resolver } from '../../adapters/egress/index.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startCountingProxy, type CountingProxy } from '../support/proxies.js';

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('parseIpLiteral', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0X7F000001', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7f.0.0.0x1', '127.0.0.1'],
    ['0177.0x0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['10.65535', '10.0.255.255'],
    ['4294967295', '255.255.255.255'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
  ])('IPv4 %s -> %s, as WHATWG URL reads it', (spelling, canonical) => {
    expect(parseIpLiteral(spelling)).toBe(canonical);
    expect(new URL(`http://${spelling}/`).hostname).toBe(canonical);
  });

  it.each([
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['[::]', '::'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['::ffff:7f00:1', '::ffff:7f00:1'],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', '::ffff:7f00:1'],
    ['::127.0.0.1', '::7f00:1'],
    ['FE80::1', 'fe80::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:0db8:0000:0000:0000:0000:0002:0001', '2001:db8::2:1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['fd00:ec2::254', 'fd00:ec2::254'],
  ])('IPv6 %s -> %s, as WHATWG URL serialises it', (spelling, canonical) => {
    expect(parseIpLiteral(spelling)).toBe(canonical);
    const bracketed = spelling.startsWith('[') ? spelling : `[${spelling}]`;
    expect(new URL(`http://${bracketed}/`).hostname).toBe(`[${canonical}]`);
  });

  it.each([
    'example.com', '', 'localhost', '256.0.0.1', '1.2.3.4.5', '08.0.0.1', '4294967296', '1.2.3.16777216', '0x1g',
    'fe80::1%eth0', '[fe80::1%25eth0]', '1::2::3', ':::', '1:2:3:4:5:6:7:8:9', '::ffff:127.0.0.256', '::ffff:127.1',
    '[::1', '12345::', 'a.b.c.d',
  ])('%s is not an IP literal', (host) => {
    expect(parseIpLiteral(host)).toBeUndefined();
  });
});

describe('classifyAddress', () => {
  const matrix: Array<[string, AddressClass]> = [
    // IPv4
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'], ['10.255.255.255', 'private'],
    ['100.64.0.1', 'cgnat'], ['100.127.255.254', 'cgnat'], ['100.63.255.255', 'public'], ['100.128.0.0', 'public'],
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'], ['2130706433', 'loopback'], ['0x7f000001', 'loopback'], ['127.1', 'loopback'],
    ['169.254.1.1', 'link-local'], ['169.254.169.254', 'metadata'], ['0xa9fea9fe', 'metadata'], ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'], ['192.0.0.192', 'metadata'],
    ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['172.15.255.255', 'public'], ['172.32.0.0', 'public'],
    ['192.0.0.8', 'reserved'], ['192.0.2.1', 'documentation'], ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'], ['198.18.0.1', 'benchmarking'], ['198.19.255.255', 'benchmarking'], ['198.20.0.0', 'public'],
    ['198.51.100.7', 'documentation'], ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'], ['255.255.255.254', 'reserved'], ['255.255.255.255', 'broadcast'],
    ['8.8.8.8', 'public'], ['93.184.216.34', 'public'], ['1.1.1.1', 'public'],
    // IPv6
    ['::', 'unspecified'], ['::1', 'loopback'], ['[::1]', 'loopback'],
    ['fe80::1', 'link-local'], ['febf::1', 'link-local'], ['fec0::1', 'private'],
    ['fc00::1', 'private'], ['fd12:3456::1', 'private'], ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'], ['ff05::2', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'metadata'], ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'loopback'], ['::8.8.8.8', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'metadata'], ['64:ff9b::808:808', 'public'], ['64:ff9b:1::a00:1', 'private'],
    ['2002:7f00:1::', 'loopback'], ['2002:a9fe:a9fe::1', 'metadata'], ['2002:808:808::1', 'public'],
    ['2001:db8::1', 'documentation'], ['2001::1', 'reserved'], ['2001:0:4136:e378::1', 'reserved'], ['2001:2::1', 'benchmarking'],
    ['100::1', 'reserved'], ['3fff::1', 'documentation'], ['4000::1', 'reserved'], ['::2', 'unspecified'], ['::1:0:0:1', 'reserved'],
    ['2606:4700:4700::1111', 'public'], ['2a00:1450:4001::1', 'public'],
    // not addresses
    ['example.com', 'invalid'], ['fe80::1%eth0', 'invalid'], ['', 'invalid'],
  ];
  it.each(matrix)('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it('names the metadata hosts', () => {
    for (const h of ['metadata.google.internal', 'METADATA.GOOGLE.INTERNAL.', 'metadata', 'instance-data', 'metadata.goog', 'instance-data.ec2.internal']) {
      expect(isMetadataHostname(h)).toBe(true);
    }
    for (const h of ['example.com', 'metadata.example.com', 'mymetadata']) expect(isMetadataHostname(h)).toBe(false);
  });

  it('allows private classes only when asked, and never metadata, multicast, broadcast or unspecified', () => {
    expect(isAllowedAddress('8.8.8.8', false)).toBe(true);
    for (const ip of ['127.0.0.1', '10.0.0.1', '169.254.1.1', '100.64.0.1', '::1', 'fd00::1', 'fe80::1']) {
      expect(isAllowedAddress(ip, false)).toMatch(/is a/);
      expect(isAllowedAddress(ip, true)).toBe(true);
    }
    for (const ip of ['169.254.169.254', 'fd00:ec2::254', '224.0.0.1', 'ff02::1', '255.255.255.255', '0.0.0.0', '::', '192.0.2.1', '240.0.0.1']) {
      expect(isAllowedAddress(ip, true)).toMatch(/is (a|an|the)/);
    }
    expect(isAllowedAddress('0x7f000001', false)).toBe('127.0.0.1 is a loopback address');
  });
});

describe('checkTargetUrl', () => {
  const refusedPublic = (url: string) => checkTargetUrl(url, { allowPrivate: false });
  const refusedPrivate = (url: string) => checkTargetUrl(url, { allowPrivate: true });

  it.each([
    'file:///etc/passwd', 'ftp://127.0.0.1/', 'ftp://example.com/file', 'data:text/html,<h1>hi</h1>', 'javascript:alert(1)',
    'gopher://127.0.0.1:70/_x', 'ws://example.com/', 'about:blank', 'chrome://settings',
  ])('refuses the scheme of %s', (url) => {
    const r = refusedPrivate(url);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/scheme is not allowed/);
  });

  it('refuses credentials, ports and garbage', () => {
    for (const url of ['http://user:pass@example.com/', 'http://user@example.com/', 'https://:secret@example.com/']) {
      const r = refusedPrivate(url);
      expect(r).toMatchObject({ ok: false });
      if (!r.ok) expect(r.reason).not.toContain('secret');
    }
    expect(refusedPrivate('http://example.com:0/')).toMatchObject({ ok: false, reason: 'port 0 is not allowed' });
    expect(refusedPrivate('not a url')).toMatchObject({ ok: false });
    expect(refusedPrivate('/relative/path')).toMatchObject({ ok: false });
    expect(refusedPrivate('http://1.2.3.4.5/')).toMatchObject({ ok: false });
  });

  it.each([
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://127.0.0.1./',
    'http://[::1]/', 'http://[0:0:0:0:0:0:0:1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[::127.0.0.1]/',
    'http://10.0.0.1/', 'http://0xa000001/', 'http://172.16.0.1/', 'http://192.168.0.1/', 'http://100.64.0.1/', 'http://169.254.1.1/',
    'http://[fd00::1]/', 'http://[fe80::1]/', 'http://localhost/', 'http://LOCALHOST./', 'http://foo.localhost/',
    'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/',
  ])('refuses %s unless private targets are allowed', (url) => {
    expect(refusedPublic(url)).toMatchObject({ ok: false });
    expect(refusedPrivate(url)).toMatchObject({ ok: true });
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/', 'http://0xa9fea9fe/', 'http://2852039166/', 'http://0251.0376.0251.0376/',
    'http://[::ffff:169.254.169.254]/', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/computeMetadata/v1/',
    'http://metadata/', 'http://100.100.100.200/', 'http://0.0.0.0/', 'http://0/', 'http://[::]/', 'http://224.0.0.1/',
    'http://255.255.255.255/', 'http://[ff02::1]/', 'http://192.0.2.1/', 'http://[2001:db8::1]/', 'http://[2001::1]/',
  ])('refuses %s even when private targets are allowed', (url) => {
    expect(refusedPrivate(url)).toMatchObject({ ok: false });
  });

  it('allows public addresses and names (names are judged again once resolved)', () => {
    for (const url of ['http://93.184.216.34/', 'https://8.8.8.8:8443/x', 'http://[2606:4700:4700::1111]/', 'https://example.com/a?b=c']) {
      const r = refusedPublic(url);
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.url.href).toBe(new URL(url).href);
    }
  });

  it('lets an allowAddress hook allow one address and not its neighbour', () => {
    const policy = { allowPrivate: false, allowAddress: (ip: string) => ip === '127.0.0.1' };
    expect(checkTargetUrl('http://127.0.0.1:8080/', policy).ok).toBe(true);
    expect(checkTargetUrl('http://127.0.0.2:8080/', policy).ok).toBe(false);
  });
});

describe('resolving names', () => {
  const table: Record<string, string[]> = {
    'public.test': ['93.184.216.34', '2606:4700:4700::1111'],
    'inside.test': ['127.0.0.2'],
    'mixed.test': ['93.184.216.34', '10.0.0.7'],
    'meta.test': ['169.254.169.254'],
  };
  const resolver: Resolver = async (host) => {
    const list = table[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  it('answers the first address when every address is allowed', async () => {
    await expect(resolveAndCheck('public.test', { allowPrivate: false, resolver })).resolves.toEqual({ address: '93.184.216.34', family: 4 });
  });

  it('refuses a name when any of its addresses is refused, naming it', async () => {
    const err = await failure(resolveAndCheck('mixed.test', { allowPrivate: false, resolver }));
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect((err as TargetNotAllowed).reason).toBe('mixed.test resolves to 10.0.0.7, which is not allowed: 10.0.0.7 is a private-network address');
    await expect(resolveAndCheck('mixed.test', { allowPrivate: true, resolver })).resolves.toMatchObject({ address: '93.184.216.34' });
    expect(await failure(resolveAndCheck('meta.test', { allowPrivate: true, resolver }))).toBeInstanceOf(TargetNotAllowed);
  });

  it('judges IP literals and metadata names without a lookup', async () => {
    let calls = 0;
    const counting: Resolver = async (h) => { calls++; return resolver(h); };
    expect(await failure(resolveAndCheck('metadata.google.internal', { allowPrivate: true, resolver: counting }))).toBeInstanceOf(TargetNotAllowed);
    expect(await failure(resolveAndCheck('[::1]', { allowPrivate: false, resolver: counting }))).toBeInstanceOf(TargetNotAllowed);
    await expect(resolveAndCheck('127.0.0.1', { allowPrivate: true, resolver: counting })).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    expect(calls).toBe(0);
  });

  it('maps a name that does not resolve to TargetUnreachable', async () => {
    const err = await failure(resolveAndCheck('nowhere.test', { allowPrivate: false, resolver }));
    expect(err).toBeInstanceOf(TargetUnreachable);
    expect((err as TargetUnreachable).details).toBe('nowhere.test does not resolve (ENOTFOUND)');
  });

  it('refuses localhost through the system resolver', async () => {
    const err = await failure(resolveAndCheck('localhost', { allowPrivate: false }));
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect((err as TargetNotAllowed).reason).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is not allowed/);
  });
});

describe('connections', () => {
  let site: TargetSite;
  let dir: string;
  let cert: string;
  let key: string;
  beforeAll(async () => {
    site = await startTargetSite();
    dir = mkdtempSync(join(tmpdir(), 'scour-egress-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'key.pem'),
      '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ], { stdio: 'ignore' });
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    key = readFileSync(join(dir, 'key.pem'), 'utf8');
  });
  afterAll(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => site.reset());

  const onlyFirst = { allowPrivate: false, allowAddress: (ip: string) => ip === '127.0.0.1' };

  it('the guarded lookup refuses before connecting', async () => {
    const lookup = createGuardedLookup({ ...onlyFirst, resolver: async () => [{ address: '127.0.0.2', family: 4 }] });
    const err = await new Promise((resolve) => {
      const s = net.connect({ host: 'inside.test', port: site.port, lookup });
      s.on('connect', () => resolve(new Error('connected')));
      s.on('error', resolve);
    });
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect(site.connections()).toBe(0);
  });

  it('the connected-address check refuses what a lying lookup connected to, before a byte is sent', async () => {
    expect(site.altUrl, 'this test needs 127.0.0.2 bound').toBeDefined();
    const lying: LookupFunction = (_host, options, cb) => {
      if (options.all) cb(null, [{ address: '127.0.0.2', family: 4 }]);
      else cb(null, '127.0.0.2', 4);
    };
    const err = await failure(fetchGuarded(`http://lying.test:${site.port}/html/simple`, { ...onlyFirst, lookup: lying }));
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect((err as TargetNotAllowed).reason).toBe(`http://lying.test:${site.port} connected to 127.0.0.2, which is not allowed: 127.0.0.2 is a loopback address`);
    expect(site.hitsOn('127.0.0.2')).toBe(0);
    expect(site.hitCount()).toBe(0);

    // The same check on a bare socket with a queued write: nothing reaches the server.
    const socket = net.connect({ host: 'lying.test', port: site.port, lookup: lying });
    guardSocket(socket, onlyFirst, 'test');
    socket.write('GET /html/simple HTTP/1.1\r\nHost: x\r\n\r\n');
    const e2 = await new Promise((resolve) => socket.on('error', resolve));
    expect(e2).toBeInstanceOf(TargetNotAllowed);
    await new Promise((r) => setTimeout(r, 50));
    expect(site.hitCount()).toBe(0);
  });

  it('allows what the hook allows, end to end', async () => {
    const res = await fetchGuarded(`${site.url}/html/simple`, onlyFirst);
    expect(res.statusCode).toBe(200);
    expect(site.hitsOn('127.0.0.1')).toBe(1);
  });

  it('refuses a redirect from an allowed target to a refused one, and the refused one sees nothing', async () => {
    const to = `${site.altUrl}/html/simple`;
    const err = await failure(fetchGuarded(`${site.url}/redirect/to?url=${encodeURIComponent(to)}`, onlyFirst));
    expect(err).toBeInstanceOf(TargetNotAllowed);
    expect((err as TargetNotAllowed).reason).toBe(`redirect to ${to} is not allowed: 127.0.0.2 is a loopback address`);
    expect((err as TargetNotAllowed).fields()).toEqual({ validation_errors: [{ field: 'url', message: (err as TargetNotAllowed).reason }] });
    expect(site.hitsOn('127.0.0.1')).toBe(1);
    expect(site.hitsOn('127.0.0.2')).toBe(0);
    expect(site.connections('127.0.0.2')).toBe(0);
  });

  it('refuses a redirect to a name resolving inside, to a hex spelling, and to another scheme', async () => {
    const resolver: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    const cases: Array<[string, RegExp]> = [
      [`http://inside.test:${site.port}/html/simple`, /^redirect to http:\/\/inside\.test:\d+\/html\/simple is not allowed: inside\.test resolves to 127\.0\.0\.2/],
      [`http://0x7f000002:${site.port}/html/simple`, /^redirect to http:\/\/127\.0\.0\.2:\d+\/html\/simple is not allowed: 127\.0\.0\.2 is a loopback address$/],
      ['file:///etc/passwd', /^redirect to file:\/\/\/etc\/passwd is not allowed: the file scheme is not allowed/],
      [`http://user:secret@127.0.0.1:${site.port}/echo`, /^redirect to http:\/\/127\.0\.0\.1:\d+\/echo is not allowed: credentials/],
    ];
    for (const [to, reason] of cases) {
      const err = await failure(fetchGuarded(`${site.url}/redirect/to?url=${encodeURIComponent(to)}`, { ...onlyFirst, resolver }));
      expect(err).toBeInstanceOf(TargetNotAllowed);
      expect((err as TargetNotAllowed).reason).toMatch(reason);
      expect((err as TargetNotAllowed).reason).not.toContain('secret');
    }
    expect(site.hitsOn('127.0.0.2')).toBe(0);
    expect(site.connections('127.0.0.2')).toBe(0);
    expect(site.hitCount('/echo')).toBe(0);
  });

  it('keeps cookies and credentials with their host across redirects', async () => {
    const to = `${site.altUrl}/echo`;
    const res = await fetchGuarded(`${site.url}/redirect/to?url=${encodeURIComponent(to)}`, {
      allowPrivate: true, cookies: { a: '1' }, headers: { authorization: 'Bearer x', 'x-custom': 'kept' },
    });
    const echo = JSON.parse(res.body.toString('utf8'));
    expect(echo.cookies).toEqual({});
    expect(echo.headers.authorization).toBeUndefined();
    expect(echo.headers['x-custom']).toBe('kept');
    expect(site.requests[0]?.headers.cookie).toBe('a=1');
    expect(res.redirects).toHaveLength(1);
  });

  it('rewrites POST to GET on 302/303 and keeps it on 307', async () => {
    for (const [status, method, body] of [[302, 'GET', ''], [303, 'GET', ''], [307, 'POST', '{"x":1}']] as const) {
      const to = `${site.url}/echo`;
      const res = await fetchGuarded(`${site.url}/redirect/to?status=${status}&url=${encodeURIComponent(to)}`, {
        allowPrivate: true, method: 'POST', body: '{"x":1}', headers: { 'content-type': 'application/json' },
      });
      const echo = JSON.parse(res.body.toString('utf8'));
      expect(echo.method).toBe(method);
      expect(echo.body).toBe(body);
      expect(echo.headers['content-type']).toBe(method === 'POST' ? 'application/json' : undefined);
    }
  });

  it('stops at the caller\'s signal', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const started = Date.now();
    const err = await failure(fetchGuarded(`${site.url}/hang`, { allowPrivate: true, signal: ac.signal }));
    expect(err).toBeInstanceOf(TargetUnreachable);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('times out a body that never ends, and an unknown encoding or bad gzip is an invalid response', async () => {
    const started = Date.now();
    const err = await failure(fetchGuarded(`${site.url}/hang?body=1`, { allowPrivate: true, timeoutMs: 300 }));
    expect(err).toBeInstanceOf(TargetTimeout);
    expect((err as TargetTimeout).timeoutSeconds).toBe(0.3);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(await failure(fetchGuarded(`${site.url}/bad-gzip`, { allowPrivate: true }))).toBeInstanceOf(TargetResponseInvalid);
  });

  it('a closed port is unreachable', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const err = await failure(fetchGuarded(`http://127.0.0.1:${port}/`, { allowPrivate: true }));
    expect(err).toBeInstanceOf(TargetUnreachable);
    expect((err as TargetUnreachable).details).toMatch(/ECONNREFUSED/);
  });

  describe('https and proxies', () => {
    let tlsServer: https.Server;
    let tlsUrl: string;
    let proxy: CountingProxy;
    let authProxy: CountingProxy;
    beforeAll(async () => {
      tlsServer = https.createServer({ cert, key }, (req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`tls ok ${req.url} host=${req.headers.host}`);
      });
      await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', () => r()));
      tlsUrl = `https://127.0.0.1:${(tlsServer.address() as AddressInfo).port}`;
      proxy = await startCountingProxy();
      authProxy = await startCountingProxy({ auth: { username: 'user', password: 's3cret' } });
    });
    afterAll(async () => {
      tlsServer.closeAllConnections();
      await new Promise<void>((r) => tlsServer.close(() => r()));
      await proxy.close();
      await authProxy.close();
    });

    it('https directly, with the connected address judged', async () => {
      const res = await fetchGuarded(`${tlsUrl}/x`, { allowPrivate: true, tls: { ca: cert } });
      expect(res.body.toString()).toBe(`tls ok /x host=${new URL(tlsUrl).host}`);
      const refused = await failure(fetchGuarded(`${tlsUrl}/x`, { allowPrivate: false, tls: { ca: cert } }));
      expect(refused).toBeInstanceOf(TargetNotAllowed);
      const untrusted = await failure(fetchGuarded(`${tlsUrl}/x`, { allowPrivate: true }));
      expect(untrusted).toBeInstanceOf(TargetUnreachable);
      expect((untrusted as TargetUnreachable).details).toMatch(/^TLS failed/);
    });

    it('http through a proxy with a CONNECT tunnel (so a proxy error is never taken for the page), with Proxy-Authorization from the proxy URL', async () => {
      const res = await fetchGuarded(`${site.url}/echo`, { allowPrivate: true, proxy: { url: authProxy.url, id: 'dc-1' } });
      expect(res.statusCode).toBe(200);
      expect(authProxy.requests).toEqual([`CONNECT 127.0.0.1:${site.port}`]);
      const echo = JSON.parse(res.body.toString('utf8'));
      expect(echo.headers['proxy-authorization']).toBeUndefined();
    });

    it('https through a proxy with CONNECT, then TLS to the target', async () => {
      const res = await fetchGuarded(`${tlsUrl}/tunnel`, { allowPrivate: true, tls: { ca: cert }, proxy: { url: authProxy.url, id: 'dc-1' } });
      expect(res.body.toString()).toMatch(/^tls ok \/tunnel/);
      expect(authProxy.requests.at(-1)).toBe(`CONNECT 127.0.0.1:${new URL(tlsUrl).port}`);
    });

    it('judges the target before handing it to a proxy', async () => {
      const before = proxy.count();
      const err = await failure(fetchGuarded(`${site.url}/html/simple`, { allowPrivate: false, proxy: { url: proxy.url, id: 'dc-2' } }));
      expect(err).toBeInstanceOf(TargetNotAllowed);
      const named = await failure(fetchGuarded(`http://inside.test:${site.port}/`, {
        allowPrivate: false, proxy: { url: proxy.url, id: 'dc-2' }, resolver: async () => [{ address: '10.1.2.3', family: 4 }],
      }));
      expect((named as TargetNotAllowed).reason).toMatch(/^inside\.test resolves to 10\.1\.2\.3/);
      expect(proxy.count()).toBe(before);
      expect(site.hitCount()).toBe(0);
    });

    it('a proxy that refuses, is closed or does not answer is TargetUnreachable naming its id, never its credentials', async () => {
      const badCreds = authProxy.url.replace('s3cret', 'wrong-pass');
      for (const target of [`${site.url}/echo`, `${tlsUrl}/x`]) {
        const err = await failure(fetchGuarded(target, { allowPrivate: true, tls: { ca: cert }, proxy: { url: badCreds, id: 'dc-7' } }));
        expect(err).toBeInstanceOf(TargetUnreachable);
        expect((err as TargetUnreachable).details).toMatch(/^proxy dc-7 refused/);
        expect((err as TargetUnreachable).details).toMatch(/407/);
        expect(JSON.stringify((err as TargetUnreachable).fields())).not.toMatch(/wrong-pass|user/);
      }

      const closed = net.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const refused = await failure(fetchGuarded(`${site.url}/echo`, { allowPrivate: true, proxy: { url: `http://u:pw@127.0.0.1:${closedPort}`, id: 'dc-8' } }));
      expect(refused).toBeInstanceOf(TargetUnreachable);
      expect((refused as TargetUnreachable).details).toMatch(/^via proxy dc-8: connection refused/);
      const tunnelRefused = await failure(fetchGuarded(`${tlsUrl}/x`, { allowPrivate: true, proxy: { url: `http://u:pw@127.0.0.1:${closedPort}`, id: 'dc-8' } }));
      expect((tunnelRefused as TargetUnreachable).details).toMatch(/^via proxy dc-8: connection refused/);

      const silent = net.createServer(() => { /* accepts, never answers */ });
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
      const silentUrl = `http://u:pw@127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const started = Date.now();
      const timedOut = await failure(fetchGuarded(`${tlsUrl}/x`, { allowPrivate: true, proxy: { url: silentUrl, id: 'dc-9' }, proxyConnectTimeoutMs: 300 }));
      expect(timedOut).toBeInstanceOf(TargetUnreachable);
      expect((timedOut as TargetUnreachable).details).toBe('proxy dc-9 did not answer CONNECT within 0.3 s');
      expect(Date.now() - started).toBeLessThan(1500);
      silent.close();
    });
  });
});
