/**
 * Counting forward proxies for tests (proxy-chain's Server on 127.0.0.1, a
 * free port): each records every request that reaches it, so a test can
 * prove which proxy a fetch went through. Optional Basic auth (wrong or
 * missing credentials answer 407); `fail: true` refuses everything with 502,
 * like a dead upstream. Only loopback targets are forwarded: anything else
 * is refused with 403 and recorded, so a test that leaks a real address
 * fails instead of reaching the network.
 */
import http from 'node:http';
import { RequestError, Server } from 'proxy-chain';

export interface CountingProxyOptions {
  readonly auth?: { readonly username: string; readonly password: string };
  /** Refuse every request (502). */
  readonly fail?: boolean;
  /**
   * Tunnel every request to a site that answers 403 to everything: a proxy
   * whose exit address the target site has blocked (the proxy itself works).
   */
  readonly blockedExit?: boolean;
}

export interface CountingProxy {
  /** http://[user:pass@]127.0.0.1:port */
  readonly url: string;
  /** 127.0.0.1:port */
  readonly hostPort: string;
  readonly port: number;
  /** Requests that reached the proxy (accepted or not). */
  count(): number;
  /** Requests passed on to their target. */
  forwarded(): number;
  /** "GET http://127.0.0.1:1234/path" or "CONNECT 127.0.0.1:1234", in arrival order, including refused ones. */
  readonly requests: string[];
  close(): Promise<void>;
}

const isLoopback = (host: string): boolean => {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
};

export async function startCountingProxy(options: CountingProxyOptions = {}): Promise<CountingProxy> {
  const requests: string[] = [];
  let forwarded = 0;
  const blocked = options.blockedExit
    ? http.createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>Access denied for your IP</body></html>');
    })
    : undefined;
  const server = new Server({
    port: 0,
    host: '127.0.0.1',
    verbose: false,
    prepareRequestFunction: ({ request, username, password, hostname, port, isHttp }) => {
      requests.push(isHttp ? `${request.method ?? 'GET'} ${request.url ?? ''}` : `CONNECT ${hostname}:${port}`);
      if (options.fail) throw new RequestError('Test proxy refuses every request', 502);
      if (options.auth && (username !== options.auth.username || password !== options.auth.password)) {
        return { requestAuthentication: true, failMsg: 'Bad proxy credentials' };
      }
      if (!isLoopback(hostname)) throw new RequestError('Test proxy forwards to loopback only', 403);
      forwarded += 1;
      if (blocked !== undefined) return isHttp ? { customResponseFunction: () => ({ statusCode: 403, body: 'Access denied for your IP' }) } : { customConnectServer: blocked };
      return {};
    },
  });
  await server.listen();
  const port = (server.server.address() as { port: number }).port;
  const hostPort = `127.0.0.1:${port}`;
  const creds = options.auth
    ? `${encodeURIComponent(options.auth.username)}:${encodeURIComponent(options.auth.password)}@`
    : '';
  return {
    url: `http://${creds}${hostPort}`,
    hostPort,
    port,
    count: () => requests.length,
    forwarded: () => forwarded,
    requests,
    close: async () => {
      await server.close(true);
      blocked?.close();
    },
  };
}
