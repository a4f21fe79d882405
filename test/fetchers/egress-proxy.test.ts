/**
 * The browser's egress proxy on its own (no browser): a proxy started
 * unbound refuses everything until bind() gives it one fetch's policy, and
 * only once; plain-http requests reuse their connections on both sides
 * (browser to proxy, proxy to target) and a kept-alive target connection the
 * target closed meanwhile is replayed once; refusals are still recorded.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeEgress } from '../../adapters/egress/port.js';
import { EGRESS_HEADER, startEgressProxy, type EgressProxy } from '../../plugins/fetchers/browser/egress-proxy.js';

interface Target {
  readonly origin: string;
  readonly server: http.Server;
  connections: number;
  requests: number;
  close(): Promise<void>;
}

async function startTarget(): Promise<Target> {
  const sockets = new Set<net.Socket>();
  const t = { connections: 0, requests: 0 } as Target;
  const server = http.createServer((req, res) => {
    t.requests++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`hello ${req.url}`);
  });
  server.on('connection', (s) => {
    t.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return Object.assign(t, {
    origin: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  });
}

/** GET an absolute URL through the proxy over `agent` (keep-alive when it says so). */
function viaProxy(proxy: EgressProxy, url: string, agent: http.Agent): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const p = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: p.port, method: 'GET', path: url, headers: { host: new URL(url).host }, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CONNECT through the proxy; resolves with the status line. */
function connectVia(proxy: EgressProxy, authority: string): Promise<string> {
  const p = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(p.port), p.hostname, () => s.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`));
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n');
      if (end >= 0) {
        s.destroy();
        resolve(buf.slice(0, end));
      }
    });
    s.on('error', reject);
  });
}

let target: Target;
beforeAll(async () => { target = await startTarget(); });
afterAll(async () => { await target?.close(); });

describe('egress proxy', () => {
  it('started unbound, refuses everything until bound, then applies the bound policy; binds only once', async () => {
    const proxy = await startEgressProxy({ policy: 'unbound' });
    const agent = new http.Agent({ keepAlive: false });
    try {
      const before = target.requests;
      const refused = await viaProxy(proxy, `${target.origin}/x`, agent);
      expect(refused.status).toBe(403);
      expect(refused.headers[EGRESS_HEADER]).toBe(proxy.token);
      expect(await connectVia(proxy, new URL(target.origin).host)).toMatch(/^HTTP\/1\.1 403/);
      expect(target.requests).toBe(before);
      expect(proxy.outcomeFor(`${target.origin}/x`)?.kind).toBe('refused');

      proxy.bind({ policy: { allowPrivate: true }, egress: nodeEgress });
      const ok = await viaProxy(proxy, `${target.origin}/y`, agent);
      expect(ok.status).toBe(200);
      expect(ok.body).toBe('hello /y');
      expect(() => proxy.bind({ policy: { allowPrivate: true }, egress: nodeEgress })).toThrow(/cannot be bound/);
    } finally {
      agent.destroy();
      await proxy.close();
    }
  });

  it('a proxy started with a policy, or the deny proxy, cannot be bound', async () => {
    const bound = await startEgressProxy({ policy: { allowPrivate: false }, egress: nodeEgress });
    const deny = await startEgressProxy({ policy: 'deny' });
    try {
      expect(() => bound.bind({ policy: { allowPrivate: true }, egress: nodeEgress })).toThrow(/cannot be bound/);
      expect(() => deny.bind({ policy: { allowPrivate: true }, egress: nodeEgress })).toThrow(/cannot be bound/);
      // The bound one still refuses loopback, as its own policy says.
      const agent = new http.Agent({ keepAlive: false });
      expect((await viaProxy(bound, `${target.origin}/z`, agent)).status).toBe(403);
      agent.destroy();
    } finally {
      await bound.close();
      await deny.close();
    }
  });

  it('keeps connections alive on both sides: 6 requests, one connection from the client, one to the target', async () => {
    const proxy = await startEgressProxy({ policy: 'unbound' });
    proxy.bind({ policy: { allowPrivate: true }, egress: nodeEgress });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const conns = target.connections;
    try {
      for (let i = 0; i < 6; i++) expect((await viaProxy(proxy, `${target.origin}/k${i}`, agent)).body).toBe(`hello /k${i}`);
      expect(proxy.counts()).toEqual({ clientConnections: 1, requests: 6, tunnels: 0, targetConnections: 1 });
      expect(target.connections - conns).toBe(1);
    } finally {
      agent.destroy();
      await proxy.close();
    }
  });

  it('a kept-alive target connection the target closed meanwhile does not fail the next request (a new connection, or one replay of a GET)', async () => {
    const proxy = await startEgressProxy({ policy: 'unbound' });
    proxy.bind({ policy: { allowPrivate: true }, egress: nodeEgress });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const saved = target.server.keepAliveTimeout;
    target.server.keepAliveTimeout = 30;
    try {
      expect((await viaProxy(proxy, `${target.origin}/a`, agent)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 200)); // the target closes the idle connection
      const again = await viaProxy(proxy, `${target.origin}/b`, agent);
      expect(again.status).toBe(200);
      expect(again.body).toBe('hello /b');
      expect(proxy.counts().targetConnections).toBe(2);
    } finally {
      target.server.keepAliveTimeout = saved;
      agent.destroy();
      await proxy.close();
    }
  });
});
