/**
 * Request ids from hyperid: a random 128-bit base per process plus a counter,
 * unique across processes and URL-safe. Not fixed-length: padding the
 * counter would cost a string operation per request for nothing.
 */
import hyperid from 'hyperid';
import type { IdGenerator } from '../../core/ports.js';

export class HyperIdGenerator implements IdGenerator {
  private readonly gen = hyperid({ urlSafe: true });
  next(): string {
    return this.gen();
  }
}

export const systemClock = { now: () => Date.now() };
