/** Case table for the regex-tester tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

const m = (match: string, index: number, groups: (string | null)[] = [], named_groups: Record<string, string | null> | null = null) => ({
  match,
  index,
  end: index + match.length,
  groups,
  named_groups,
});

export default {
  slug: 'regex-tester',
  cases: [
    // ---- successes (expected values worked out by hand) ----
    {
      name: 'named groups and $<name> replacement',
      body: { pattern: '(?<user>[a-z]+)@(?<host>[a-z.]+)', flags: 'g', input: 'ann@example.com, bob@test.org', replacement: '$<user> at $<host>' },
      status: 200,
      check: (b) => {
        expect(b.flags).toBe('g');
        expect(b.match_count).toBe(2);
        expect(b.truncated).toBe(false);
        expect(b.matches).toEqual([
          m('ann@example.com', 0, ['ann', 'example.com'], { user: 'ann', host: 'example.com' }),
          m('bob@test.org', 17, ['bob', 'test.org'], { user: 'bob', host: 'test.org' }),
        ]);
        expect(b.replaced).toBe('ann at example.com, bob at test.org');
        expect(typeof b.elapsed_ms).toBe('number');
      },
    },
    {
      name: 'default flags are g',
      body: { pattern: 'o', input: 'foo boo' },
      status: 200,
      check: (b) => {
        expect(b.flags).toBe('g');
        expect(b.match_count).toBe(4);
        expect(b.matches.map((x: { index: number }) => x.index)).toEqual([1, 2, 5, 6]);
        expect(b).not.toHaveProperty('replaced');
      },
    },
    {
      name: 'without g only the first match',
      body: { pattern: 'o', flags: '', input: 'foo boo' },
      status: 200,
      check: (b) => {
        expect(b.flags).toBe('');
        expect(b.match_count).toBe(1);
        expect(b.matches).toEqual([m('o', 1)]);
      },
    },
    {
      name: 'd flag gives indices of match, groups and named groups (flags answered in canonical order)',
      body: { pattern: '(?<year>\\d{4})-(?<month>\\d{2})', flags: 'gd', input: 'Dates: 2024-01 and 2023-12.' },
      status: 200,
      check: (b) => {
        expect(b.flags).toBe('dg');
        expect(b.matches).toEqual([
          {
            ...m('2024-01', 7, ['2024', '01'], { year: '2024', month: '01' }),
            indices: { match: [7, 14], groups: [[7, 11], [12, 14]], named_groups: { year: [7, 11], month: [12, 14] } },
          },
          {
            ...m('2023-12', 19, ['2023', '12'], { year: '2023', month: '12' }),
            indices: { match: [19, 26], groups: [[19, 23], [24, 26]], named_groups: { year: [19, 23], month: [24, 26] } },
          },
        ]);
      },
    },
    {
      name: 'no indices without the d flag; unmatched optional group is null',
      body: { pattern: '(a)(b)?', input: 'a' },
      status: 200,
      check: (b) => {
        expect(b.matches).toEqual([m('a', 0, ['a', null])]);
        expect(b.matches[0]).not.toHaveProperty('indices');
      },
    },
    {
      name: 'd flag: unmatched group has null span',
      body: { pattern: '(?<x>a)|(?<y>b)', flags: 'd', input: 'b' },
      status: 200,
      check: (b) => {
        expect(b.matches[0]).toEqual({
          ...m('b', 0, [null, 'b'], { x: null, y: 'b' }),
          indices: { match: [0, 1], groups: [null, [0, 1]], named_groups: { x: null, y: [0, 1] } },
        });
      },
    },
    {
      name: 'replacement with $1 and $2 swaps words',
      body: { pattern: '(\\w+)\\s(\\w+)', flags: '', input: 'John Smith', replacement: '$2, $1' },
      status: 200,
      check: (b) => {
        expect(b.replaced).toBe('Smith, John');
        expect(b.match_count).toBe(1);
      },
    },
    {
      name: 'replacement with $&, $$, $` and $\'',
      body: { pattern: '(?<d>\\d+)', input: 'x1y22', replacement: "[$<d>|$&|$$]" },
      status: 200,
      check: (b) => expect(b.replaced).toBe('x[1|1|$]y[22|22|$]'),
    },
    {
      name: "replacement with $` and $' (text before and after the match)",
      body: { pattern: 'b', flags: '', input: 'abc', replacement: "<$`|$'>" },
      status: 200,
      check: (b) => expect(b.replaced).toBe('a<a|c>c'),
    },
    {
      name: 'replacement: $0 and $9 (no such group) stay literal',
      body: { pattern: '(a)', input: 'a', replacement: '$0$9$1' },
      status: 200,
      check: (b) => expect(b.replaced).toBe('$0$9a'),
    },
    {
      name: 'empty replacement deletes the matches',
      body: { pattern: '\\s+', input: ' a  b ', replacement: '' },
      status: 200,
      check: (b) => expect(b.replaced).toBe('ab'),
    },
    {
      name: 'lookbehind',
      body: { pattern: '(?<=\\$)\\d+(\\.\\d\\d)?', input: 'cost: $42.50 or \u20ac17 or $7' },
      status: 200,
      check: (b) => {
        expect(b.match_count).toBe(2);
        expect(b.matches).toEqual([m('42.50', 7, ['.50']), m('7', 24, [null])]);
      },
    },
    {
      name: 'negative lookahead',
      body: { pattern: '\\bfoo(?!bar)\\w*', input: 'foobar foobaz foo' },
      status: 200,
      check: (b) => expect(b.matches.map((x: { match: string }) => x.match)).toEqual(['foobaz', 'foo']),
    },
    {
      name: 'unicode flag with property escapes',
      body: { pattern: '\\p{Lu}\\p{Ll}+', flags: 'gu', input: '\u00c9va and \u00d6d\u00f6n met Zo\u00eb' },
      status: 200,
      check: (b) => {
        expect(b.matches).toEqual([m('\u00c9va', 0), m('\u00d6d\u00f6n', 8), m('Zo\u00eb', 17)]);
      },
    },
    {
      name: 'u flag: . matches an astral character whole; offsets are UTF-16 code units',
      body: { pattern: '.', flags: 'gu', input: 'a\u{1F600}b' },
      status: 200,
      check: (b) => {
        expect(b.matches).toEqual([m('a', 0), m('\u{1F600}', 1), m('b', 3)]);
      },
    },
    {
      name: 'without u: . matches each surrogate half',
      body: { pattern: '.', input: 'a\u{1F600}' },
      status: 200,
      check: (b) => expect(b.match_count).toBe(3),
    },
    {
      name: 'v flag set subtraction',
      body: { pattern: '[\\p{L}--[a-z]]+', flags: 'gv', input: 'abcXYZdef\u00c9' },
      status: 200,
      check: (b) => expect(b.matches).toEqual([m('XYZ', 3), m('\u00c9', 9)]),
    },
    {
      name: 'i, m and s flags',
      body: { pattern: '^b.c$', flags: 'gims', input: 'a\nB\nc\nbxc' },
      status: 200,
      check: (b) => expect(b.matches).toEqual([m('B\nc', 2), m('bxc', 6)]),
    },
    {
      name: 'sticky flag stops at the first gap',
      body: { pattern: 'a', flags: 'gy', input: 'aaba' },
      status: 200,
      check: (b) => expect(b.matches).toEqual([m('a', 0), m('a', 1)]),
    },
    {
      name: 'zero-length matches with g advance (word boundaries)',
      body: { pattern: '\\b', input: 'hi yo', replacement: '|' },
      status: 200,
      check: (b) => {
        expect(b.match_count).toBe(4);
        expect(b.matches.map((x: { index: number }) => x.index)).toEqual([0, 2, 3, 5]);
        expect(b.matches.every((x: { match: string }) => x.match === '')).toBe(true);
        expect(b.replaced).toBe('|hi| |yo|');
      },
    },
    {
      name: 'empty pattern matches between every character (by code point with u)',
      body: { pattern: '', flags: 'gu', input: 'a\u{1F600}', replacement: '-' },
      status: 200,
      check: (b) => {
        expect(b.matches.map((x: { index: number }) => x.index)).toEqual([0, 1, 3]);
        expect(b.replaced).toBe('-a-\u{1F600}-');
      },
    },
    {
      name: 'empty input and empty pattern: one empty match',
      body: { pattern: '', input: '' },
      status: 200,
      check: (b) => expect(b.matches).toEqual([m('', 0)]),
    },
    {
      name: 'no match',
      body: { pattern: 'z', input: 'abc', replacement: 'y' },
      status: 200,
      check: (b) => {
        expect(b.match_count).toBe(0);
        expect(b.truncated).toBe(false);
        expect(b.matches).toEqual([]);
        expect(b.replaced).toBe('abc');
      },
    },
    {
      name: 'max_matches truncates the list but match_count counts all',
      body: { pattern: '\\d', input: '0123456789', max_matches: 3 },
      status: 200,
      check: (b) => {
        expect(b.match_count).toBe(10);
        expect(b.truncated).toBe(true);
        expect(b.matches).toEqual([m('0', 0), m('1', 1), m('2', 2)]);
      },
    },
    {
      name: 'a group named __proto__ is an ordinary key',
      body: { pattern: '(?<__proto__>x)', input: 'x' },
      status: 200,
      check: (b) => {
        const named = b.matches[0].named_groups;
        expect(Object.prototype.hasOwnProperty.call(named, '__proto__')).toBe(true);
        expect(Object.getOwnPropertyDescriptor(named, '__proto__')?.value).toBe('x');
      },
    },
    {
      name: 'lone surrogate in the input',
      body: { pattern: '.', flags: 'gu', input: 'a\ud800b' },
      status: 200,
      check: (b) => expect(b.matches).toEqual([m('a', 0), m('\ud800', 1), m('b', 2)]),
    },
    {
      name: 'huge captured text is truncated at the output budget',
      body: { pattern: '(?=([\\s\\S]*))', input: 'x'.repeat(5000), max_matches: 1000 },
      status: 200,
      check: (b) => {
        expect(b.match_count).toBe(5001);
        expect(b.truncated).toBe(true);
        expect(b.matches.length).toBeGreaterThan(50);
        expect(b.matches.length).toBeLessThan(1000);
      },
    },
    {
      name: 'many matches over a large input',
      body: { pattern: 'a', input: 'a'.repeat(100_000), max_matches: 1000 },
      status: 200,
      check: (b) => {
        expect(b.match_count).toBe(100_000);
        expect(b.matches.length).toBe(1000);
        expect(b.matches[999]).toEqual(m('a', 999));
      },
    },

    // ---- hostile: catastrophic backtracking ----
    {
      name: 'catastrophic backtracking is cut off at the deadline',
      body: { pattern: '^(a+)+$', input: `${'a'.repeat(35)}!` },
      status: 400,
      fields: ['pattern'],
      check: (b) => expect(b.validation_errors[0].message).toMatch(/exceeded 250 ms.*catastrophic backtracking/),
    },
    {
      name: 'the next request after a killed worker works',
      body: { pattern: 'b+', input: 'abbbc' },
      status: 200,
      check: (b) => expect(b.matches).toEqual([m('bbb', 1)]),
    },
    {
      name: 'catastrophic backtracking with a short timeout_ms',
      body: { pattern: '(x+x+)+y', input: 'x'.repeat(40), timeout_ms: 50 },
      status: 400,
      fields: ['pattern'],
      check: (b) => expect(b.validation_errors[0].message).toMatch(/exceeded 50 ms/),
    },
    {
      name: 'catastrophic backtracking inside a replacement',
      body: { pattern: '(a|aa)+$', input: `${'a'.repeat(60)}b`, replacement: 'x', timeout_ms: 100 },
      status: 400,
      fields: ['pattern'],
    },

    // ---- hostile: semantic 400s ----
    { name: 'unterminated group', body: { pattern: '(', input: 'x' }, status: 400, fields: ['pattern'], check: (b) => expect(b.validation_errors[0].message).toMatch(/Unterminated group/) },
    { name: 'nothing to repeat', body: { pattern: '*a', input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'unterminated lookbehind', body: { pattern: '(?<=a', input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'invalid escape with the u flag', body: { pattern: '\\q', flags: 'u', input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'duplicate group name', body: { pattern: '(?<a>x)(?<a>y)', input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'unknown property escape', body: { pattern: '\\p{NotAProperty}', flags: 'u', input: 'x' }, status: 400, fields: ['pattern'] },
    {
      name: 'replacement result too large',
      body: { pattern: '', input: 'x'.repeat(100_000), replacement: 'y'.repeat(20) },
      status: 400,
      fields: ['replacement'],
      check: (b) => expect(b.validation_errors[0].message).toMatch(/exceed 500000 characters/),
    },
    {
      name: "replacement result too large through $'",
      body: { pattern: 'x', input: 'x'.repeat(2000), replacement: "$'" },
      status: 400,
      fields: ['replacement'],
    },
    { name: 'duplicate flag', body: { pattern: 'a', flags: 'gg', input: 'x' }, status: 400, fields: ['flags'], check: (b) => expect(b.validation_errors[0].message).toMatch(/more than once/) },
    { name: 'duplicate flag among others', body: { pattern: 'a', flags: 'gimi', input: 'x' }, status: 400, fields: ['flags'] },
    { name: 'unknown flag letter', body: { pattern: 'a', flags: 'x', input: 'x' }, status: 400, fields: ['flags'] },
    { name: 'upper-case flag', body: { pattern: 'a', flags: 'G', input: 'x' }, status: 400, fields: ['flags'] },
    { name: 'u and v together', body: { pattern: 'a', flags: 'uv', input: 'x' }, status: 400, fields: ['flags'], check: (b) => expect(b.validation_errors[0].message).toMatch(/cannot be combined/) },
    { name: 'flags too long', body: { pattern: 'a', flags: 'dgimsuvyd', input: 'x' }, status: 400, fields: ['flags'] },
    { name: 'flags with a slash', body: { pattern: 'a', flags: '/g', input: 'x' }, status: 400, fields: ['flags'] },

    // ---- hostile: schema ----
    { name: 'missing pattern', body: { input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'missing input', body: { pattern: 'x' }, status: 400, fields: ['input'] },
    { name: 'empty body', body: {}, status: 400, fields: ['pattern', 'input'] },
    { name: 'pattern not a string', body: { pattern: 5, input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'pattern null', body: { pattern: null, input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'input an array', body: { pattern: 'x', input: ['x'] }, status: 400, fields: ['input'] },
    { name: 'flags a number', body: { pattern: 'x', input: 'x', flags: 1 }, status: 400, fields: ['flags'] },
    { name: 'replacement an object', body: { pattern: 'x', input: 'x', replacement: {} }, status: 400, fields: ['replacement'] },
    { name: 'pattern too long', body: { pattern: 'a'.repeat(2001), input: 'x' }, status: 400, fields: ['pattern'] },
    { name: 'input too long', body: { pattern: 'a', input: 'a'.repeat(100_001) }, status: 400, fields: ['input'] },
    { name: 'replacement too long', body: { pattern: 'a', input: 'a', replacement: 'b'.repeat(10_001) }, status: 400, fields: ['replacement'] },
    { name: 'max_matches zero', body: { pattern: 'a', input: 'a', max_matches: 0 }, status: 400, fields: ['max_matches'] },
    { name: 'max_matches too large', body: { pattern: 'a', input: 'a', max_matches: 1001 }, status: 400, fields: ['max_matches'] },
    { name: 'max_matches fractional', body: { pattern: 'a', input: 'a', max_matches: 1.5 }, status: 400, fields: ['max_matches'] },
    { name: 'max_matches a string', body: { pattern: 'a', input: 'a', max_matches: '10' }, status: 400, fields: ['max_matches'] },
    { name: 'timeout_ms too small', body: { pattern: 'a', input: 'a', timeout_ms: 9 }, status: 400, fields: ['timeout_ms'] },
    { name: 'timeout_ms too large', body: { pattern: 'a', input: 'a', timeout_ms: 1001 }, status: 400, fields: ['timeout_ms'] },
    { name: 'timeout_ms huge number', body: { pattern: 'a', input: 'a', timeout_ms: 1e308 }, status: 400, fields: ['timeout_ms'] },
    { name: 'unknown field', body: { pattern: 'a', input: 'a', regex: 'a' }, status: 400, fields: ['regex'] },
    { name: 'unknown field __proto__-like name', body: { pattern: 'a', input: 'a', constructor: 'x' }, status: 400, fields: ['constructor'] },
  ],
} satisfies ToolCaseFile;
