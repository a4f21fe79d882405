/**
 * The egress guard's I/O side, in one import: resolving and judging names,
 * the guarded lookup and connected-address check for sockets, and the
 * guarded HTTP exchange (redirects, limits, proxies). The pure policy is
 * core/egress.ts.
 */
export { abortable, createGuardedLookup, guardSocket, resolveAllChecked, resolveAndCheck, systemResolver } from './guard.js';
export type { EgressOptions, Resolver } from './guard.js';
export { nodeEgress } from './port.js';
export { decodersFor, readBody } from './body.js';
export type { BodyLimits, ReadBody } from './body.js';
export {
  DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_DECODED_BYTES, DEFAULT_MAX_REDIRECTS, DEFAULT_TIMEOUT_MS, fetchGuarded, toTargetError,
} from './fetch.js';
export type { FetchGuardedOptions, GuardedResponse, ProxySpec } from './fetch.js';
