/**
 * The json-formatter has its own strict parser (for exact error positions and
 * to keep number literals as written); check it against V8's JSON.parse on
 * generated documents and on random mutations of them.
 */
import { describe, expect, it } from 'vitest';
import tool, { parseJson } from '../../plugins/tools/json-formatter/index.js';

// A small deterministic PRNG so failures reproduce.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = ['', 'a', 'é', '😀', 'x"y', 'back\\slash', 'nl\n', '\u0000', '\u001f', '__proto__', 'constructor', '\ud800', 'tab\t'];
const NUMBERS = [0, -0, 1, -1, 1.5, -2.25e-10, 1e21, 123456789, 0.1];

function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 4 ? 5 : 7));
  switch (k) {
    case 0: return STRINGS[Math.floor(r() * STRINGS.length)];
    case 1: return NUMBERS[Math.floor(r() * NUMBERS.length)];
    case 2: return r() < 0.5;
    case 3: return null;
    case 4: return STRINGS[Math.floor(r() * STRINGS.length)]! + String(Math.floor(r() * 100));
    case 5: return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      const n = Math.floor(r() * 4);
      for (let i = 0; i < n; i++) {
        Object.defineProperty(o, STRINGS[Math.floor(r() * STRINGS.length)]!, { value: value(r, depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return o;
    }
  }
}

const run = (body: Record<string, unknown>) =>
  tool.run({ action: 'format', indent: 2, sort_keys: false, ...body } as any, { requestId: 't', clientIp: '127.0.0.1' });

const validByV8 = (s: string) => {
  try { JSON.parse(s); return true; } catch { return false; }
};

describe('json-formatter parser', () => {
  it('formats like JSON.stringify for documents without number or escape subtleties', () => {
    const r = rng(1);
    for (let i = 0; i < 2000; i++) {
      const v = value(r, 0);
      const compact = JSON.stringify(v);
      for (const indent of [1, 2, 4, 8]) {
        expect((run({ input: compact, indent }) as any).output).toBe(JSON.stringify(v, null, indent));
      }
      expect((run({ input: compact, indent: 'tab' }) as any).output).toBe(JSON.stringify(v, null, '\t'));
      expect((run({ input: JSON.stringify(v, null, 3), action: 'minify' }) as any).output).toBe(compact);
    }
  });

  it('agrees with JSON.parse on validity for random mutations', () => {
    const r = rng(2);
    const alphabet = ['{', '}', '[', ']', ',', ':', '"', '\\', '-', '+', '.', 'e', 'E', '0', '1', ' ', '\n', 't', 'n', 'u', 'a', '\u0000', '/', "'"];
    let invalidSeen = 0;
    for (let i = 0; i < 20000; i++) {
      let s = JSON.stringify(value(r, 0));
      const edits = 1 + Math.floor(r() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(r() * (s.length + 1));
        const op = r();
        const ch = alphabet[Math.floor(r() * alphabet.length)]!;
        if (op < 0.33) s = s.slice(0, at) + ch + s.slice(at);
        else if (op < 0.66) s = s.slice(0, at) + s.slice(at + 1);
        else s = s.slice(0, at) + ch + s.slice(at + 1);
      }
      const mine = parseJson(s);
      expect(mine.ok, JSON.stringify(s)).toBe(validByV8(s));
      if (!mine.ok) {
        invalidSeen++;
        expect(mine.position).toBeGreaterThanOrEqual(0);
        expect(mine.position).toBeLessThanOrEqual(s.length);
      }
    }
    expect(invalidSeen).toBeGreaterThan(1000);
  });

  it('agrees with JSON.parse on tricky literals', () => {
    const cases = [
      '0', '-0', '0.0', '1e5', '1E-5', '1e+5', '-', '--1', '+1', '.5', '5.', '1.e5', '01', '-01', '00', '1e', '1e+', '0x10',
      'true', 'tru', 'truex', 'nulll', 'NaN', 'Infinity', '-Infinity', '"\\u0041"', '"\\u004"', '"\\U0041"', '"\\a"', '"\t"', '"\u007f"',
      '[]', '[,]', '[1,]', '[,1]', '{}', '{,}', '{"a"}', '{"a":}', '{"a":1,}', '{1:1}', '{"a":1 "b":2}', ' ', '', '\u00a0{}', '{}\u00a0',
      '"\ud800"', '[1]]', '[[1]', '{"a":{"b":[]}}', 'null null', '"a"x',
    ];
    for (const s of cases) expect(parseJson(s).ok, JSON.stringify(s)).toBe(validByV8(s));
  });
});
