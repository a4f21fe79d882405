/**
 * The I/O half of the egress guard: resolve a name and judge every address
 * it resolves to, a `lookup` for net/tls/http that only ever hands out
 * judged addresses, and a check of the address a socket actually connected
 * to (whatever resolved it), run before the socket may carry a byte. Every
 * outbound connection of the service goes through these.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import { isIP } from 'node:net';
import { addressVerdict, isMetadataHostname, parseIpLiteral, stripZone, type EgressPolicy } from '../../core/egress.js';
import { abortable } from '../../core/abort.js';
import { TargetNotAllowed, TargetUnreachable } from '../../core/errors.js';
import type { Resolver } from '../../core/ports.js';

export { abortable };
export type { Resolver };

export interface EgressOptions extends EgressPolicy {
  /** Replaces dns.lookup (tests map names to loopback addresses); its answers are judged like DNS's. */
  readonly resolver?: Resolver | undefined;
}

const notAllowed = (reason: string): TargetNotAllowed =>
  new TargetNotAllowed({ message: 'The target URL is not allowed', field: 'url', reason });

const DNS_FAILURES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL', 'ENONAME']);

/** How long answers are kept, failures included (a page names the same hosts many times). */
const DNS_CACHE_MS = 30_000;
const DNS_FAILURE_CACHE_MS = 5_000;
/** A lookup that takes longer than this fails: a DNS server that drops queries must not hold a render for its whole timeout. */
const DNS_TIMEOUT_MS = 5_000;
const DNS_CACHE_LIMIT = 10_000;
const dnsCache = new Map<string, { until: number; answer: Promise<readonly LookupAddress[]> }>();

function lookupOnce(hostname: string): Promise<readonly LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`lookup of ${hostname} took over ${DNS_TIMEOUT_MS / 1000} s`), { code: 'ETIMEOUT' })), DNS_TIMEOUT_MS);
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(addresses);
    });
  });
}

/**
 * The system resolver, with a short cache of answers and failures and a time
 * limit per lookup. Concurrent lookups of one name share one query. Caching is
 * safe for the guard: every address of an answer is still judged, and the
 * address actually connected is checked again.
 */
export const systemResolver: Resolver = (hostname) => {
  const now = Date.now();
  const hit = dnsCache.get(hostname);
  if (hit !== undefined && hit.until > now) return hit.answer;
  if (dnsCache.size >= DNS_CACHE_LIMIT) dnsCache.clear();
  const answer = lookupOnce(hostname);
  const entry = { until: now + DNS_CACHE_MS, answer };
  dnsCache.set(hostname, entry);
  answer.catch(() => {
    entry.until = Date.now() + DNS_FAILURE_CACHE_MS;
  });
  return answer;
};

function unresolved(hostname: string, err: unknown): TargetUnreachable {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return new TargetUnreachable({
    message: 'The target could not be reached',
    details: code && DNS_FAILURES.has(code) ? `${hostname} does not resolve (${code})` : `resolving ${hostname} failed (${code ?? String(err)})`,
  });
}

/**
 * Every address of `hostname`, each judged: one refused address refuses the
 * name (a name that also points inside is not a public target). IP literals
 * are judged without a lookup. Rejects with TargetNotAllowed or, when the
 * name does not resolve, TargetUnreachable.
 */
export async function resolveAllChecked(
  hostname: string,
  options: EgressOptions & { readonly signal?: AbortSignal | undefined },
): Promise<LookupAddress[]> {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const literal = parseIpLiteral(host);
  if (literal !== undefined) {
    const verdict = addressVerdict(literal, options);
    if (verdict !== true) throw notAllowed(verdict);
    return [{ address: isIP(host) ? host : literal, family: literal.includes(':') ? 6 : 4 }];
  }
  if (isMetadataHostname(host)) throw notAllowed(`${host} is a cloud metadata endpoint`);
  const resolver = options.resolver ?? systemResolver;
  let addresses: readonly LookupAddress[];
  try {
    addresses = await abortable(resolver(host), options.signal);
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw unresolved(host, err);
  }
  if (addresses.length === 0) throw unresolved(host, Object.assign(new Error('no address'), { code: 'ENODATA' }));
  for (const a of addresses) {
    const verdict = addressVerdict(a.address, options);
    if (verdict !== true) throw notAllowed(`${host} resolves to ${stripZone(a.address)}, which is not allowed: ${verdict}`);
  }
  return [...addresses];
}

/** The first judged address of `hostname` (all of them are judged). */
export async function resolveAndCheck(
  hostname: string,
  options: EgressOptions & { readonly signal?: AbortSignal | undefined },
): Promise<{ address: string; family: 4 | 6 }> {
  const [first] = await resolveAllChecked(hostname, options);
  const a = first as LookupAddress;
  return { address: a.address, family: a.family === 6 ? 6 : 4 };
}

/**
 * A `lookup` for net.connect / tls.connect / http.request that resolves with
 * resolveAllChecked: the socket only ever sees judged addresses. Handles
 * both the single-address and the `all: true` (happy eyeballs) forms.
 */
export function createGuardedLookup(options: EgressOptions & { readonly signal?: AbortSignal | undefined }): LookupFunction {
  return (hostname: string, lookupOptions: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    resolveAllChecked(hostname, options).then(
      (all) => {
        const family = lookupOptions.family;
        const wanted = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${String(family)} address`), { code: 'ENOTFOUND' }), '', 0);
        } else if (lookupOptions.all) {
          callback(null, wanted);
        } else {
          const a = wanted[0] as LookupAddress;
          callback(null, a.address, a.family);
        }
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}

/**
 * Judge the address `socket` connected to, before anything else may use the
 * connection: the listener is prepended, so a write queued while connecting
 * is dropped with the socket. A refused socket is destroyed with
 * TargetNotAllowed (its 'error' event, and whatever request rides on it).
 */
export function guardSocket(socket: Socket, policy: EgressPolicy, what: string): void {
  socket.prependOnceListener('connect', () => {
    const remote = socket.remoteAddress;
    const verdict = remote === undefined ? 'the connected address is unknown' : addressVerdict(remote, policy);
    if (verdict !== true) {
      socket.destroy(notAllowed(`${what} connected to ${stripZone(remote ?? '?')}, which is not allowed: ${verdict}`));
    }
  });
}
