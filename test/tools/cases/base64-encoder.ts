/** Case table for the base64-encoder tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCase, ToolCaseFile } from '../../support/tool-harness.js';

/** RFC 4648 section 10 test vectors. */
const RFC4648: readonly [string, string][] = [
  ['', ''],
  ['f', 'Zg=='],
  ['fo', 'Zm8='],
  ['foo', 'Zm9v'],
  ['foob', 'Zm9vYg=='],
  ['fooba', 'Zm9vYmE='],
  ['foobar', 'Zm9vYmFy'],
];

const vectorCases: ToolCase[] = RFC4648.flatMap(([text, b64]): ToolCase[] => [
  {
    name: `RFC 4648 encode ${JSON.stringify(text)}`,
    body: { input: text },
    status: 200,
    check: (b) => expect(b).toEqual({ output: b64, byte_length: text.length }),
  },
  {
    name: `RFC 4648 decode ${JSON.stringify(b64)}`,
    body: { input: b64, action: 'decode' },
    status: 200,
    check: (b) => expect(b).toEqual({ output: text, byte_length: text.length, valid_utf8: true }),
  },
]);

const message = (b: any, text: string) => expect(b.validation_errors[0].message).toContain(text);

export default {
  slug: 'base64-encoder',
  cases: [
    ...vectorCases,
    {
      name: 'encode without padding',
      body: { input: 'f', padding: false },
      status: 200,
      check: (b) => expect(b.output).toBe('Zg'),
    },
    {
      name: 'encode UTF-8 text (multi-byte and astral)',
      body: { input: 'é😀' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: 'w6nwn5iA', byte_length: 6 }),
    },
    {
      name: 'encode hex bytes with the standard alphabet',
      body: { input: 'fbff', input_encoding: 'hex' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: '+/8=', byte_length: 2 }),
    },
    {
      name: 'encode hex bytes with the url alphabet, padded by default',
      body: { input: 'FB:FF', input_encoding: 'hex', variant: 'url' },
      status: 200,
      check: (b) => expect(b.output).toBe('-_8='),
    },
    {
      name: 'encode url variant without padding (JWT style)',
      body: { input: 'fbff', input_encoding: 'hex', variant: 'url', padding: false },
      status: 200,
      check: (b) => expect(b.output).toBe('-_8'),
    },
    {
      name: 'encode a NUL byte',
      body: { input: '\u0000' },
      status: 200,
      check: (b) => expect(b.output).toBe('AA=='),
    },
    {
      name: 'decode url variant, unpadded',
      body: { input: '-_8', action: 'decode', variant: 'url', output_encoding: 'hex' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: 'fbff', byte_length: 2, valid_utf8: false }),
    },
    {
      name: 'decode url variant, padded',
      body: { input: '-_8=', action: 'decode', variant: 'url', output_encoding: 'hex' },
      status: 200,
      check: (b) => expect(b.output).toBe('fbff'),
    },
    {
      name: 'decode unpadded standard base64',
      body: { input: 'Zm9vYg', action: 'decode' },
      status: 200,
      check: (b) => expect(b.output).toBe('foob'),
    },
    {
      name: 'decode ignores line breaks and spaces (MIME/PEM wrapping)',
      body: { input: 'Zm9v\r\nYmFy\n', action: 'decode' },
      status: 200,
      check: (b) => expect(b.output).toBe('foobar'),
    },
    {
      name: 'decode UTF-8 text',
      body: { input: 'w6nwn5iA', action: 'decode' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: 'é😀', byte_length: 6, valid_utf8: true }),
    },
    {
      name: 'decode bytes that are not UTF-8: U+FFFD in utf8 output, valid_utf8 false',
      body: { input: '/w==', action: 'decode' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: '\ufffd', byte_length: 1, valid_utf8: false }),
    },
    {
      name: 'decode the same bytes as hex',
      body: { input: '/w==', action: 'decode', output_encoding: 'hex' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: 'ff', byte_length: 1, valid_utf8: false }),
    },
    {
      name: 'decode a NUL byte',
      body: { input: 'AA==', action: 'decode' },
      status: 200,
      check: (b) => expect(b.output).toBe('\u0000'),
    },

    // --- 400s ---
    { name: 'missing input', body: {}, status: 400, fields: ['input'] },
    { name: 'input not a string', body: { input: 123 }, status: 400, fields: ['input'] },
    { name: 'input null', body: { input: null }, status: 400, fields: ['input'] },
    { name: 'unknown action', body: { input: 'x', action: 'encrypt' }, status: 400, fields: ['action'] },
    { name: 'unknown variant', body: { input: 'x', variant: 'base64url' }, status: 400, fields: ['variant'] },
    { name: 'padding not a boolean', body: { input: 'x', padding: 'no' }, status: 400, fields: ['padding'] },
    { name: 'unknown output_encoding', body: { input: 'Zg==', action: 'decode', output_encoding: 'latin1' }, status: 400, fields: ['output_encoding'] },
    { name: 'unknown input_encoding', body: { input: 'x', input_encoding: 'binary' }, status: 400, fields: ['input_encoding'] },
    { name: 'unknown field', body: { input: 'x', url_safe: true }, status: 400, fields: ['url_safe'] },
    { name: 'input over 262144 characters', body: { input: 'A'.repeat(262_148) }, status: 400, fields: ['input'] },
    {
      name: 'decode refuses characters outside the alphabet (Buffer would skip them)',
      body: { input: 'Zm9v!YmFy', action: 'decode' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, "'!' at position 4"),
    },
    {
      name: 'decode refuses url characters in standard base64, with a hint',
      body: { input: '-_8=', action: 'decode' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, "variant to 'url'"),
    },
    { name: 'decode refuses standard characters in url base64', body: { input: '+/8=', action: 'decode', variant: 'url' }, status: 400, fields: ['input'] },
    { name: 'decode refuses non-ASCII', body: { input: 'Zm9vé', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses a NUL character', body: { input: 'Zm9v\u0000', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses a 4n+1 length', body: { input: 'Zm9vY', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses a single character', body: { input: 'Z', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses wrong padding amount', body: { input: 'Zg=', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses padding on a full quantum', body: { input: 'Zm9v=', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses three padding characters', body: { input: 'Z===', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses data after padding', body: { input: 'Zg==Zg==', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode refuses padding only', body: { input: '==', action: 'decode' }, status: 400, fields: ['input'] },
    {
      name: 'decode refuses non-zero padding bits (non-canonical)',
      body: { input: 'Zh==', action: 'decode' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, 'padding bits'),
    },
    {
      name: 'encode refuses a lone surrogate',
      body: { input: 'a\ud800b' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, 'lone surrogate'),
    },
    { name: 'encode refuses an odd number of hex digits', body: { input: 'abc', input_encoding: 'hex' }, status: 400, fields: ['input'] },
    { name: 'encode refuses non-hex characters', body: { input: 'zz', input_encoding: 'hex' }, status: 400, fields: ['input'] },
  ],
} satisfies ToolCaseFile;
