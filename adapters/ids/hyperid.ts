/** Request ids from hyperid: unique across processes, URL-safe, cheap to generate. */
import hyperid from 'hyperid';
import type { IdGenerator } from '../../core/ports.js';

export class HyperIdGenerator implements IdGenerator {
  private readonly gen = hyperid({ urlSafe: true, fixedLength: true });
  next(): string {
    return this.gen();
  }
}

export const systemClock = { now: () => Date.now() };
