// Preloaded into the Scour server by the scrape bench when BENCH_DNS=offline
// (the default), through NODE_OPTIONS=--import. The bench machines have no
// internet, so every name a real page's subresources use fails to resolve
// whatever happens; but the resolver they are given drops queries beyond a
// small burst, and a dropped query costs a 5 s (then 10 s) timeout on one of
// libuv's 4 threads. That would make the render figures a measure of the
// sandbox's resolver, not of Scour. Here a name fails at once, with
// ENOTFOUND, as an offline machine with a local caching resolver would
// answer: the same outcome, without the wait. IP literals and localhost
// resolve as usual. Nothing else in the server is touched.
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const system = dns.lookup;
const local = (h) => net.isIP(h) !== 0 || h === 'localhost' || h.endsWith('.localhost');
const notFound = (hostname) => Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', errno: -3008, syscall: 'getaddrinfo', hostname });

function lookup(hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  const h = String(hostname).toLowerCase().replace(/\.$/, '');
  if (local(h)) return system.call(dns, hostname, options, callback);
  process.nextTick(cb, notFound(hostname));
  return undefined;
}

const systemPromise = dns.promises.lookup;
dns.lookup = lookup;
dns.promises.lookup = async (hostname, options) => {
  const h = String(hostname).toLowerCase().replace(/\.$/, '');
  if (local(h)) return systemPromise.call(dns.promises, hostname, options);
  throw notFound(hostname);
};
// The server imports `lookup` from 'node:dns' as an ESM binding: make it see the stub.
syncBuiltinESMExports();
