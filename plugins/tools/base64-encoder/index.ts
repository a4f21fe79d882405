/**
 * base64-encoder: RFC 4648 base64 and base64url, both directions.
 *
 * Node's Buffer does the conversion, but Buffer.from(s, 'base64') silently
 * skips characters outside the alphabet and tolerates impossible lengths, so
 * decoding validates the text first: only the chosen variant's alphabet
 * (ASCII whitespace is ignored, so wrapped MIME/PEM text decodes), '=' only
 * as trailing padding of the right amount, no length that leaves a dangling
 * 6 bits, and zero padding bits in the last character (RFC 4648 3.5).
 */
import { isUtf8 } from 'node:buffer';
import { defineTool, requireWellFormed, StrictObject, Type, invalid } from '../../sdk/index.js';

export const MAX_INPUT_CHARS = 262_144;

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Char code -> 6-bit value, or -1. One table per variant, built once. */
function table(alphabet: string): Int8Array {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
}
const TABLES = { standard: table(STANDARD), url: table(URL_SAFE) } as const;

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 12;

function describeChar(s: string, i: number): string {
  const c = s.codePointAt(i)!;
  const hex = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  return c > 0x20 && c < 0x7f ? `'${String.fromCodePoint(c)}'` : hex;
}

/** Strictly validate base64 text and return it without whitespace. Throws a 400 on `input`. */
function cleanBase64(input: string, variant: 'standard' | 'url'): string {
  const t = TABLES[variant];
  let clean = '';
  let runStart = 0;
  let data = 0; // alphabet characters seen
  let pad = 0; // '=' seen
  let lastValue = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (isSpace(c)) {
      clean += input.slice(runStart, i);
      runStart = i + 1;
      continue;
    }
    if (c === 61) { // '='
      pad++;
      if (pad > 2) invalid('input', `has more than two '=' padding characters (position ${i})`);
      continue;
    }
    const v = c < 128 ? t[c]! : -1;
    if (v < 0) {
      const other = variant === 'standard' ? TABLES.url : TABLES.standard;
      const hint = c < 128 && other[c]! >= 0 ? ` (it belongs to the ${variant === 'standard' ? 'url' : 'standard'} alphabet: set variant to '${variant === 'standard' ? 'url' : 'standard'}')` : '';
      invalid('input', `contains ${describeChar(input, i)} at position ${i}, which is not in the ${variant} base64 alphabet${hint}`);
    }
    if (pad > 0) invalid('input', `has data after '=' padding (position ${i}); padding may only end the text`);
    data++;
    lastValue = v;
  }
  clean += input.slice(runStart);
  const rem = data % 4;
  if (rem === 1) {
    invalid('input', `has ${data} base64 character${data === 1 ? '' : 's'}; a length of 4n+1 cannot encode whole bytes (truncated or corrupted?)`);
  }
  if (pad > 0) {
    const expected = rem === 0 ? 0 : 4 - rem;
    if (pad !== expected) {
      invalid('input', `has ${pad} '=' padding character${pad === 1 ? '' : 's'} but ${data} data characters need ${expected}`);
    }
  }
  // The unused low bits of the last character must be zero (2 unused bits when rem = 3, 4 when rem = 2).
  if ((rem === 2 && (lastValue & 0x0f) !== 0) || (rem === 3 && (lastValue & 0x03) !== 0)) {
    invalid('input', 'ends with a character whose unused padding bits are not zero (non-canonical or corrupted base64)');
  }
  return clean;
}

const HEX_RE = /^[0-9a-fA-F]*$/;

function bytesOfInput(input: string, encoding: 'utf8' | 'hex'): Buffer {
  if (encoding === 'hex') {
    const hex = input.replace(/[\s:]/g, '');
    if (!HEX_RE.test(hex)) {
      const m = /[^0-9a-fA-F\s:]/.exec(input)!;
      invalid('input', `contains ${describeChar(input, m.index)} at position ${m.index}, which is not a hexadecimal digit`);
    }
    if (hex.length % 2 !== 0) invalid('input', `has an odd number (${hex.length}) of hexadecimal digits`);
    return Buffer.from(hex, 'hex');
  }
  requireWellFormed('input', input);
  return Buffer.from(input, 'utf8');
}

const Variant = Type.Union([Type.Literal('standard'), Type.Literal('url')], {
  default: 'standard',
  description: "'standard' (RFC 4648 section 4, + and /) or 'url' (section 5, - and _).",
});
const TextEncoding = (desc: string) =>
  Type.Union([Type.Literal('utf8'), Type.Literal('hex')], { default: 'utf8', description: desc });

const request = StrictObject({
  input: Type.String({
    maxLength: MAX_INPUT_CHARS,
    description: 'Text to encode, or base64 to decode (ASCII whitespace in base64 is ignored).',
  }),
  action: Type.Union([Type.Literal('encode'), Type.Literal('decode')], { default: 'encode', description: 'Direction.' }),
  variant: Variant,
  padding: Type.Boolean({ default: true, description: "Encode only: end the output with '=' padding to a multiple of 4. Decoding accepts padded and unpadded text." }),
  input_encoding: TextEncoding("Encode only: how to read input, 'utf8' text or 'hex' bytes (whitespace and ':' between hex digits are ignored)."),
  output_encoding: TextEncoding("Decode only: how to write the decoded bytes, 'utf8' text or lowercase 'hex'."),
});

const response = Type.Object({
  output: Type.String({ maxLength: 1_048_576, description: 'The base64 text (encode) or the decoded bytes in output_encoding (decode).' }),
  byte_length: Type.Integer({ minimum: 0, description: 'Number of raw bytes encoded or decoded.' }),
  valid_utf8: Type.Optional(Type.Boolean({
    description: "Decode only: whether the decoded bytes are valid UTF-8. When false and output_encoding is 'utf8', invalid sequences are shown as U+FFFD; ask for 'hex' to get the exact bytes.",
  })),
});

export default defineTool({
  name: 'tool-base64-encoder',
  slug: 'base64-encoder',
  summary: 'Encode or decode base64 and base64url',
  description:
    'RFC 4648 base64 (standard or URL-safe alphabet, with or without padding) of UTF-8 text or hex bytes, and strict decoding: ' +
    'characters outside the alphabet, misplaced or wrong padding and impossible lengths are refused rather than skipped.',
  request,
  response,
  example: {
    request: { input: 'foobar', action: 'encode', variant: 'standard', padding: true, input_encoding: 'utf8', output_encoding: 'utf8' },
    response: { output: 'Zm9vYmFy', byte_length: 6 },
  },
  run({ input, action, variant, padding, input_encoding, output_encoding }) {
    if (action === 'encode') {
      const bytes = bytesOfInput(input, input_encoding);
      let output: string;
      if (variant === 'url') {
        output = bytes.toString('base64url'); // unpadded
        if (padding && output.length % 4 !== 0) output += '='.repeat(4 - (output.length % 4));
      } else {
        output = bytes.toString('base64'); // padded
        if (!padding) {
          let end = output.length;
          while (end > 0 && output.charCodeAt(end - 1) === 61) end--;
          output = output.slice(0, end);
        }
      }
      return { output, byte_length: bytes.length };
    }

    const clean = cleanBase64(input, variant);
    const bytes = Buffer.from(clean, variant === 'url' ? 'base64url' : 'base64');
    const validUtf8 = isUtf8(bytes);
    const output = output_encoding === 'hex' ? bytes.toString('hex') : bytes.toString('utf8');
    return { output, byte_length: bytes.length, valid_utf8: validUtf8 };
  },
});
