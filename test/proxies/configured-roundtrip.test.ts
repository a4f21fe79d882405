/**
 * Real traffic through the provider's choices: counting proxy-chain servers
 * and a target server, all on 127.0.0.1. Proves the URL a choice carries
 * (credentials included) reaches the proxy it names, that rotation spreads
 * requests, and that a retry excluding a refusing proxy goes through another.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguredProxyProvider, parseProxyConfig } from '../../plugins/proxies/configured.js';
import type { ProxyChoice } from '../../plugins/sdk/scrape.js';
import { startCountingProxy, type CountingProxy } from '../support/proxies.js';

interface Reply { readonly status: number; readonly body: string }

/** A GET in absolute form through the proxy, with Basic credentials taken from the choice's URL. */
function getVia(proxy: ProxyChoice, target: string): Promise<Reply> {
  const p = new URL(proxy.url);
  const headers: Record<string, string> = { host: new URL(target).host };
  if (p.username !== '' || p.password !== '') {
    const basic = `${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`;
    headers['proxy-authorization'] = `Basic ${Buffer.from(basic).toString('base64')}`;
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: Number(p.port), method: 'GET', path: target, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** A tunnel (CONNECT) through the proxy, then a plain HTTP/1.1 GET inside it. */
function getViaTunnel(proxy: ProxyChoice, targetHostPort: string, path: string): Promise<Reply> {
  const p = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: Number(p.port), method: 'CONNECT', path: targetHostPort, agent: false });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        resolve({ status: res.statusCode ?? 0, body: '' });
        return;
      }
      let raw = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (raw += c));
      socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(raw)?.[1] ?? 0), body: raw.split('\r\n\r\n')[1] ?? '' }));
      socket.on('error', reject);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${targetHostPort}\r\nConnection: close\r\n\r\n`);
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('configured proxies, real round trip on loopback', () => {
  let target: http.Server;
  let targetBase: string;
  let targetHits: string[];
  let alice: CountingProxy;
  let open: CountingProxy;
  let refusing: CountingProxy;

  beforeAll(async () => {
    targetHits = [];
    target = http.createServer((req, res) => {
      targetHits.push(req.url ?? '');
      res.setHeader('content-type', 'text/plain');
      res.end(`hello ${req.url}`);
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    targetBase = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    alice = await startCountingProxy({ auth: { username: 'alice', password: 'p@ss,w:rd' } });
    open = await startCountingProxy();
    refusing = await startCountingProxy({ fail: true });
  });

  afterAll(async () => {
    await Promise.all([alice?.close(), open?.close(), refusing?.close()]);
    await new Promise<void>((r) => (target ? target.close(() => r()) : r()));
  });

  it('rotation spreads requests over both proxies, credentials reach the proxy', async () => {
    const before = [alice.count(), open.count(), targetHits.length];
    // The password's "@", "," and ":" are percent-encoded in the URL, as the format requires.
    const p = createConfiguredProxyProvider(parseProxyConfig(`datacenter:US=${alice.url},datacenter:US=${open.url}`));
    const used: string[] = [];
    for (let i = 0; i < 4; i++) {
      const choice = p.pick({ type: 'datacenter', country: 'US', exclude: [] })!;
      used.push(choice.id);
      const reply = await getVia(choice, `${targetBase}/page-${i}`);
      expect(reply).toEqual({ status: 200, body: `hello /page-${i}` });
    }
    expect(used).toEqual(['datacenter-US-1', 'datacenter-US-2', 'datacenter-US-1', 'datacenter-US-2']);
    expect(alice.count() - before[0]!).toBe(2);
    expect(open.count() - before[1]!).toBe(2);
    expect(targetHits.length - before[2]!).toBe(4);
    expect(alice.requests.slice(-2)).toEqual([`GET ${targetBase}/page-0`, `GET ${targetBase}/page-2`]);
  });

  it('wrong credentials are refused by the proxy (407) and never reach the target', async () => {
    const hits = targetHits.length;
    const wrong = alice.url.replace('alice:', 'mallory:');
    const p = createConfiguredProxyProvider(parseProxyConfig(`datacenter=${wrong}`));
    const reply = await getVia(p.pick({ type: 'datacenter', country: undefined, exclude: [] })!, `${targetBase}/x`);
    expect(reply.status).toBe(407);
    expect(targetHits.length).toBe(hits);
  });

  it('a refusing proxy fails; the retry excluding it goes through the other one', async () => {
    const before = { refusing: refusing.count(), open: open.count(), hits: targetHits.length };
    const p = createConfiguredProxyProvider(parseProxyConfig(`residential:DE=${refusing.url}\nresidential:DE=${open.url}`));
    const tried: string[] = [];

    const first = p.pick({ type: 'residential', country: 'DE', exclude: tried })!;
    expect(first.url).toBe(refusing.url);
    const failed = await getVia(first, `${targetBase}/retry`);
    expect(failed.status).toBe(502);
    tried.push(first.id);
    p.markFailed(first.id, Date.now() + 30_000);

    const second = p.pick({ type: 'residential', country: 'DE', exclude: tried })!;
    expect(second.id).not.toBe(first.id);
    expect(second.url).toBe(open.url);
    expect(await getVia(second, `${targetBase}/retry`)).toEqual({ status: 200, body: 'hello /retry' });

    expect(refusing.count() - before.refusing).toBe(1);
    expect(refusing.forwarded()).toBe(0);
    expect(open.count() - before.open).toBe(1);
    expect(targetHits.length - before.hits).toBe(1);
    // Nothing left to try for this request; a new request skips the marked proxy.
    expect(p.pick({ type: 'residential', country: 'DE', exclude: [first.id, second.id] })).toBeUndefined();
    expect(p.pick({ type: 'residential', country: 'DE', exclude: [] })!.id).toBe(second.id);
  });

  it('tunnels (CONNECT) are counted too', async () => {
    const before = alice.count();
    const p = createConfiguredProxyProvider(parseProxyConfig(`datacenter=${alice.url}`));
    const choice = p.pick({ type: 'datacenter', country: undefined, exclude: [] })!;
    // CONNECT without credentials is refused; the helper proves auth applies to tunnels as well.
    const refused = await getViaTunnel(choice, new URL(targetBase).host, '/tunnel');
    expect(refused.status).toBe(407);
    expect(alice.count() - before).toBe(1);
    expect(alice.requests.at(-1)).toBe(`CONNECT ${new URL(targetBase).host}`);
    const viaOpen = await getViaTunnel({ ...choice, url: open.url }, new URL(targetBase).host, '/tunnel');
    expect(viaOpen).toEqual({ status: 200, body: 'hello /tunnel' });
    expect(open.requests.at(-1)).toBe(`CONNECT ${new URL(targetBase).host}`);
  });
});
