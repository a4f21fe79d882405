/** Case table for the json-formatter tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

const DEEP = 100_000;
const deepValid = '['.repeat(DEEP) + ']'.repeat(DEEP);
const error = (b: any, line: number, column: number, position: number, text: string) => {
  expect(b.valid).toBe(false);
  expect(b.output).toBeUndefined();
  expect(b.error).toMatchObject({ line, column, position });
  expect(b.error.message).toContain(text);
  expect(b.error.message).toContain(`line ${line}, column ${column}`);
};
const message = (b: any, text: string) => expect(b.validation_errors[0].message).toContain(text);

export default {
  slug: 'json-formatter',
  cases: [
    // --- format ---
    {
      name: 'format with the default indent of 2',
      body: { input: '{"b":[1,2],"a":{"c":null}}' },
      status: 200,
      check: (b) => {
        expect(b.valid).toBe(true);
        expect(b.output).toBe('{\n  "b": [\n    1,\n    2\n  ],\n  "a": {\n    "c": null\n  }\n}');
        expect(b.error).toBeUndefined();
        expect(b.stats).toEqual({ input_bytes: 26, output_bytes: 57, depth: 2, root_type: 'object', duplicate_keys: 0 });
      },
    },
    {
      name: 'format with sort_keys sorts recursively',
      body: { input: '{"b":[1,2],"a":{"d":true,"c":null}}', sort_keys: true },
      status: 200,
      check: (b) => expect(b.output).toBe('{\n  "a": {\n    "c": null,\n    "d": true\n  },\n  "b": [\n    1,\n    2\n  ]\n}'),
    },
    {
      name: 'format with tabs',
      body: { input: '{"a":[1]}', indent: 'tab' },
      status: 200,
      check: (b) => expect(b.output).toBe('{\n\t"a": [\n\t\t1\n\t]\n}'),
    },
    {
      name: 'format with indent 4 keeps empty containers compact',
      body: { input: '{"a":[],"b":{},"c":[{}, []]}', indent: 4 },
      status: 200,
      check: (b) => expect(b.output).toBe('{\n    "a": [],\n    "b": {},\n    "c": [\n        {},\n        []\n    ]\n}'),
    },
    {
      name: 'indent 0 puts each member on its own line without indentation',
      body: { input: '[1,[2]]', indent: 0 },
      status: 200,
      check: (b) => expect(b.output).toBe('[\n1,\n[\n2\n]\n]'),
    },
    {
      name: 'a scalar root formats to itself',
      body: { input: '  "hello"  ' },
      status: 200,
      check: (b) => {
        expect(b.output).toBe('"hello"');
        expect(b.stats).toMatchObject({ depth: 0, root_type: 'string' });
      },
    },
    {
      name: 'number literals are kept exactly (no float round trip)',
      body: { input: '[12345678901234567890, 1e400, -0, 1.50, 1E+2, 0.1e-7]', action: 'minify' },
      status: 200,
      check: (b) => expect(b.output).toBe('[12345678901234567890,1e400,-0,1.50,1E+2,0.1e-7]'),
    },
    {
      name: 'string escapes are kept as written',
      body: { input: '[ "\\u00e9\\n\\/", "é", "\\ud83d\\ude00" ]', action: 'minify' },
      status: 200,
      check: (b) => expect(b.output).toBe('["\\u00e9\\n\\/","é","\\ud83d\\ude00"]'),
    },
    {
      name: 'UTF-8 sizes count bytes, not characters',
      body: { input: '{ "a" : "é" }', action: 'minify' },
      status: 200,
      check: (b) => {
        expect(b.output).toBe('{"a":"é"}');
        expect(b.stats).toMatchObject({ input_bytes: 14, output_bytes: 10 });
      },
    },
    {
      name: '__proto__ is formatted as a plain key and pollutes nothing',
      body: { input: '{"z":0,"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}', sort_keys: true, action: 'minify' },
      status: 200,
      check: (b) => {
        expect(b.output).toBe('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"z":0}');
        expect(({} as any).polluted).toBeUndefined();
      },
    },
    {
      name: 'duplicate keys are kept and counted',
      body: { input: '{"a":1,"a":2,"b":{"c":1,"c":1}}', action: 'minify' },
      status: 200,
      check: (b) => {
        expect(b.output).toBe('{"a":1,"a":2,"b":{"c":1,"c":1}}');
        expect(b.stats.duplicate_keys).toBe(2);
      },
    },
    {
      name: 'sort_keys is stable for duplicate keys and compares decoded keys',
      body: { input: '{"b":1,"\\u0061":2,"b":0,"B":3}', action: 'minify', sort_keys: true },
      status: 200,
      check: (b) => {
        expect(b.output).toBe('{"B":3,"\\u0061":2,"b":1,"b":0}');
        expect(b.stats.duplicate_keys).toBe(1);
      },
    },
    {
      name: 'minify removes all insignificant whitespace',
      body: { input: ' \r\n{ "a" :\t[ 1 , 2 ] ,\n "b" : "x y" }\n', action: 'minify', indent: 8 },
      status: 200,
      check: (b) => {
        expect(b.output).toBe('{"a":[1,2],"b":"x y"}');
        expect(b.stats.output_bytes).toBe(21);
      },
    },
    {
      name: 'a lone surrogate character inside a string is valid JSON and is kept',
      body: { input: '["a\ud800b"]', action: 'minify' },
      status: 200,
      check: (b) => expect(b.output).toBe('["a\ud800b"]'),
    },
    {
      name: 'minify of 100000 nested arrays works (no recursion)',
      body: { input: deepValid, action: 'minify' },
      status: 200,
      check: (b) => {
        expect(b.output).toBe(deepValid);
        expect(b.stats.depth).toBe(DEEP);
      },
    },

    // --- validate ---
    {
      name: 'validate a valid document',
      body: { input: '{"a":[true,false,null,"x",-1.5e3]}', action: 'validate' },
      status: 200,
      check: (b) => {
        expect(b).toEqual({ valid: true, stats: { input_bytes: 34, depth: 2, root_type: 'object', duplicate_keys: 0 } });
      },
    },
    {
      name: 'validate reports a trailing comma with its position',
      body: { input: '{"a":1,}', action: 'validate' },
      status: 200,
      check: (b) => {
        error(b, 1, 8, 7, 'trailing commas are not allowed');
        expect(b.stats).toEqual({ input_bytes: 8 });
      },
    },
    {
      name: 'validate reports line and column on a later line',
      body: { input: '{\n  "a": 1\n  "b": 2\n}', action: 'validate' },
      status: 200,
      check: (b) => error(b, 3, 3, 13, "expected ',' or '}'"),
    },
    {
      name: 'validate counts CRLF as one line break',
      body: { input: '[\r\n1,\r\nx]', action: 'validate' },
      status: 200,
      check: (b) => error(b, 3, 1, 7, "Unexpected 'x'"),
    },
    {
      name: 'validate: empty input',
      body: { input: '', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 1, 0, 'Unexpected end of input'),
    },
    {
      name: 'validate: whitespace only',
      body: { input: ' \n ', action: 'validate' },
      status: 200,
      check: (b) => error(b, 2, 2, 3, 'expected a value'),
    },
    {
      name: 'validate: single quotes',
      body: { input: "{'a':1}", action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 2, 1, 'expected a string key'),
    },
    {
      name: 'validate: NaN is not JSON',
      body: { input: '[NaN]', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 2, 1, "Unexpected 'NaN'"),
    },
    {
      name: 'validate: leading zero',
      body: { input: '[01]', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 2, 1, 'leading zeros'),
    },
    {
      name: 'validate: comments are not JSON',
      body: { input: '{"a":1 // no\n}', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 8, 7, "Unexpected '/'"),
    },
    {
      name: 'validate: raw control character in a string',
      body: { input: '["a\u0000b"]', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 4, 3, 'U+0000'),
    },
    {
      name: 'validate: invalid escape',
      body: { input: '"\\x41"', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 2, 1, "Invalid escape '\\x'"),
    },
    {
      name: 'validate: unterminated string points at its opening quote',
      body: { input: '{"a": "abc', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 7, 6, 'Unterminated string'),
    },
    {
      name: 'validate: a byte order mark is not JSON',
      body: { input: '\ufeff{}', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 1, 0, 'U+FEFF'),
    },
    {
      name: 'validate: a second value after the first',
      body: { input: '{} {}', action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, 4, 3, 'end of input'),
    },
    {
      name: 'validate: 100000 nested arrays (valid, no stack overflow)',
      body: { input: deepValid, action: 'validate' },
      status: 200,
      check: (b) => expect(b).toEqual({ valid: true, stats: { input_bytes: 2 * DEEP, depth: DEEP, root_type: 'array', duplicate_keys: 0 } }),
    },
    {
      name: 'validate: 100000 unclosed arrays',
      body: { input: '['.repeat(DEEP), action: 'validate' },
      status: 200,
      check: (b) => error(b, 1, DEEP + 1, DEEP, 'Unexpected end of input'),
    },

    // --- 400s ---
    { name: 'missing input', body: {}, status: 400, fields: ['input'] },
    { name: 'input is a number', body: { input: 42 }, status: 400, fields: ['input'] },
    { name: 'input is an object (not a JSON string)', body: { input: { a: 1 } }, status: 400, fields: ['input'] },
    { name: 'input is null', body: { input: null }, status: 400, fields: ['input'] },
    { name: 'unknown action', body: { input: '{}', action: 'pretty' }, status: 400, fields: ['action'] },
    { name: 'indent above 8', body: { input: '{}', indent: 9 }, status: 400, fields: ['indent'] },
    { name: 'negative indent', body: { input: '{}', indent: -1 }, status: 400, fields: ['indent'] },
    { name: 'fractional indent', body: { input: '{}', indent: 2.5 }, status: 400, fields: ['indent'] },
    { name: 'indent as a string of spaces', body: { input: '{}', indent: '  ' }, status: 400, fields: ['indent'] },
    { name: 'sort_keys not a boolean', body: { input: '{}', sort_keys: 'yes' }, status: 400, fields: ['sort_keys'] },
    { name: 'unknown field', body: { input: '{}', indentation: 2 }, status: 400, fields: ['indentation'] },
    { name: 'input over 262144 characters', body: { input: ' '.repeat(262_143) + '{}' }, status: 400, fields: ['input'] },
    {
      name: 'format invalid JSON is a 400 with line and column',
      body: { input: '{"a":1,}' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, 'line 1, column 8'),
    },
    {
      name: 'minify invalid JSON is a 400',
      body: { input: '[1 2]', action: 'minify' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, "expected ',' or ']'"),
    },
    { name: 'format empty input', body: { input: '' }, status: 400, fields: ['input'] },
    { name: 'format truncated document', body: { input: '{"a": [1, 2' }, status: 400, fields: ['input'] },
    {
      name: 'format of 100000 nested arrays exceeds the output cap',
      body: { input: deepValid },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, '1048576'),
    },
    {
      name: 'format whose indentation would produce megabytes',
      body: { input: '['.repeat(200) + '[' + new Array(20_000).fill('0').join(',') + ']' + ']'.repeat(200), indent: 8 },
      status: 400,
      fields: ['input'],
    },
    { name: 'body is not an object', body: [1, 2], status: 400 },
  ],
} satisfies ToolCaseFile;
