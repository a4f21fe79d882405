/**
 * The per-key batcher behind the PostgreSQL store's group commit
 * (adapters/store/postgres/batch.ts): at most one statement in flight per
 * key, calls made meanwhile sent together in the next one (never joined to
 * the one in flight, which started before they were made), results handed
 * back in order, a failure failing its own batch only.
 */
import { describe, expect, it } from 'vitest';
import { KeyedBatcher } from '../../adapters/store/postgres/batch.js';

interface Call { key: string; items: readonly number[]; resolve: (r: readonly string[]) => void; reject: (e: unknown) => void }

function harness(max?: number) {
  const calls: Call[] = [];
  const b = new KeyedBatcher<number, string>((key, items) => new Promise((resolve, reject) => calls.push({ key, items, resolve, reject })), max);
  return { b, calls };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedBatcher', () => {
  it('sends calls of the same tick together, and calls made while one is in flight in the next statement, after it returns', async () => {
    const { b, calls } = harness();
    const p1 = b.submit('a', 1);
    const p2 = b.submit('a', 2);
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2]]);
    const p3 = b.submit('a', 3);
    const p4 = b.submit('a', 4);
    await tick();
    expect(calls).toHaveLength(1); // 3 and 4 wait: the statement in flight started before they were made
    calls[0]!.resolve(['r1', 'r2']);
    expect(await Promise.all([p1, p2])).toEqual(['r1', 'r2']);
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3, 4]]);
    calls[1]!.resolve(['r3', 'r4']);
    expect(await Promise.all([p3, p4])).toEqual(['r3', 'r4']);
    expect({ statements: b.statements, items: b.items }).toEqual({ statements: 2, items: 4 });
  });

  it('keeps keys apart: another key does not wait', async () => {
    const { b, calls } = harness();
    const pa = b.submit('a', 1);
    await tick();
    const pb = b.submit('b', 2);
    await tick();
    expect(calls.map((c) => [c.key, c.items])).toEqual([['a', [1]], ['b', [2]]]);
    calls[1]!.resolve(['rb']);
    calls[0]!.resolve(['ra']);
    expect(await Promise.all([pa, pb])).toEqual(['ra', 'rb']);
  });

  it('a failed statement fails its own callers only; the next batch still goes', async () => {
    const { b, calls } = harness();
    const p1 = b.submit('a', 1);
    await tick();
    const p2 = b.submit('a', 2);
    calls[0]!.reject(new Error('connection lost'));
    await expect(p1).rejects.toThrow('connection lost');
    await tick();
    expect(calls[1]!.items).toEqual([2]);
    calls[1]!.resolve(['r2']);
    expect(await p2).toBe('r2');
  });

  it('caps a statement at max items, the rest in the next; a short answer fails the callers left without a result', async () => {
    const { b, calls } = harness(2);
    const ps = [1, 2, 3].map((i) => b.submit('a', i));
    await tick();
    expect(calls[0]!.items).toEqual([1, 2]);
    calls[0]!.resolve(['r1', 'r2']);
    await tick();
    expect(calls[1]!.items).toEqual([3]);
    calls[1]!.resolve([]);
    expect(await Promise.all(ps.slice(0, 2))).toEqual(['r1', 'r2']);
    await expect(ps[2]).rejects.toThrow(/returned 0 results for 1 items/);
  });

  it('an undefined result is a result (an unknown account read), not a missing one', async () => {
    const b = new KeyedBatcher<undefined, string | undefined>(async (_k, items) => items.map(() => undefined));
    expect(await Promise.all([b.submit('a', undefined), b.submit('a', undefined)])).toEqual([undefined, undefined]);
  });
});
