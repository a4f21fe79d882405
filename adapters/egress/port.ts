/**
 * The Egress port (core/ports.ts) over node:http, node:dns and the guard:
 * what the composition root hands to fetchers, search providers and
 * research.
 */
import type { Egress } from '../../core/ports.js';
import { fetchGuarded } from './fetch.js';
import { resolveAllChecked } from './guard.js';

export const nodeEgress: Egress = {
  fetch: (url, request) => fetchGuarded(url, request),
  resolveAll: (hostname, policy) => resolveAllChecked(hostname, policy),
};
