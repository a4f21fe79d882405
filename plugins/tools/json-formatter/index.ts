/**
 * json-formatter: pretty-print, minify or validate JSON.
 *
 * The formatter works on the tokens of the document rather than on the value
 * JSON.parse would give: number literals are kept exactly as written
 * (12345678901234567890, 1e400 and -0 survive, where a parse/stringify round
 * trip would change them), strings keep their escapes, duplicate keys are kept
 * (and counted), and `__proto__` is just a key. Parsing, sorting and emitting
 * are iterative, so nesting depth cannot overflow the stack; the output size
 * is capped instead. Errors carry the exact line, column and position, which
 * V8's JSON.parse messages do not give in Node 20.
 */
import { defineTool, StrictObject, Type, invalid } from '../../sdk/index.js';

export const MAX_INPUT_CHARS = 262_144;
export const MAX_OUTPUT_CHARS = 1_048_576;

type Scalar = string; // the raw token text of a string, number or literal
interface ArrayNode { readonly kind: 'array'; readonly items: Node[] }
interface ObjectNode { readonly kind: 'object'; readonly keys: string[]; readonly values: Node[] }
type Node = Scalar | ArrayNode | ObjectNode;

interface Parsed {
  readonly ok: true;
  readonly root: Node;
  readonly depth: number;
  readonly duplicateKeys: number;
  readonly objects: ObjectNode[];
}
interface ParseError {
  readonly ok: false;
  readonly message: string;
  readonly position: number;
  readonly line: number;
  readonly column: number;
}

/** 1-based line and column (UTF-16 code units) of a 0-based position; \n, \r\n and \r end lines. */
function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < position; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) { line++; lineStart = i + 1; }
    else if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      line++; lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}

function describeChar(text: string, i: number): string {
  const c = text.charCodeAt(i);
  if (c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0xd800 && c <= 0xdfff) || c === 0xfeff) {
    return `character U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  const ch = text[i]!;
  return ch === "'" ? `"'"` : `'${ch}'`;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const isWordChar = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || isDigit(c) || c === 95 || c === 36;

/** What the parser expects next. */
const Want = {
  Value: 0, // a value (root, after ':' or after ',' in an array)
  ValueOrClose: 1, // just after '['
  KeyOrClose: 2, // just after '{'
  Key: 3, // after ',' in an object
  Colon: 4,
  CommaOrClose: 5,
  End: 6,
} as const;
type Want = (typeof Want)[keyof typeof Want];

const WANT_TEXT: Record<Want, string> = {
  [Want.Value]: 'expected a value',
  [Want.ValueOrClose]: "expected a value or ']'",
  [Want.KeyOrClose]: "expected a string key or '}'",
  [Want.Key]: 'expected a string key',
  [Want.Colon]: "expected ':' after the key",
  [Want.CommaOrClose]: '', // filled per container
  [Want.End]: 'expected the end of input after the JSON value',
};

interface Frame {
  readonly node: ArrayNode | ObjectNode;
  readonly seen: Set<string> | null;
  pendingKey: string;
}

/** Strict RFC 8259 parser into a raw-token tree. Never recurses, never throws. */
export function parseJson(text: string): Parsed | ParseError {
  const n = text.length;
  const stack: Frame[] = [];
  const objects: ObjectNode[] = [];
  let root: Node | undefined;
  let want: Want = Want.Value;
  let depth = 0;
  let duplicateKeys = 0;
  let i = 0;

  const fail = (position: number, what: string, why: string): ParseError => {
    const { line, column } = lineColumn(text, position);
    return { ok: false, message: `${what} at line ${line}, column ${column}: ${why}`, position, line, column };
  };
  const expectation = (): string => {
    if (want !== Want.CommaOrClose) return WANT_TEXT[want];
    return stack[stack.length - 1]!.node.kind === 'array' ? "expected ',' or ']'" : "expected ',' or '}'";
  };
  const unexpected = (at: number): ParseError => {
    if (at >= n) return fail(at, 'Unexpected end of input', expectation());
    const c = text.charCodeAt(at);
    if (isWordChar(c) && !isDigit(c)) {
      let j = at;
      while (j < n && j - at < 24 && isWordChar(text.charCodeAt(j))) j++;
      return fail(at, `Unexpected '${text.slice(at, j)}'`, expectation());
    }
    return fail(at, `Unexpected ${describeChar(text, at)}`, expectation());
  };

  /** Attach a finished value to its parent (or make it the root). */
  const attach = (value: Node): void => {
    const top = stack[stack.length - 1];
    if (top === undefined) { root = value; want = Want.End; return; }
    if (top.node.kind === 'array') top.node.items.push(value);
    else { top.node.keys.push(top.pendingKey); top.node.values.push(value); }
    want = Want.CommaOrClose;
  };

  /** Scan a string token starting at the quote at `start`; returns its end (exclusive) or an error. */
  const scanString = (start: number): number | ParseError => {
    let j = start + 1;
    for (;;) {
      if (j >= n) return fail(start, 'Unterminated string', 'the string that starts here has no closing quote');
      const c = text.charCodeAt(j);
      if (c === 34) return j + 1;
      if (c === 92) {
        const e = text.charCodeAt(j + 1);
        if (e === 117) { // \u
          for (let k = 2; k < 6; k++) {
            if (!isHex(text.charCodeAt(j + k))) return fail(j, 'Invalid \\u escape', 'expected four hexadecimal digits after \\u');
          }
          j += 6;
        } else if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
          j += 2;
        } else if (j + 1 >= n) {
          return fail(start, 'Unterminated string', 'the string that starts here has no closing quote');
        } else {
          return fail(j, `Invalid escape '\\${text[j + 1]}'`, 'allowed escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX');
        }
      } else if (c < 0x20) {
        return fail(j, `Unescaped control ${describeChar(text, j)} in string`, 'control characters must be escaped (e.g. \\n, \\t, \\u0000)');
      } else {
        j++;
      }
    }
  };

  /** Scan a number token; returns its end (exclusive) or an error. */
  const scanNumber = (start: number): number | ParseError => {
    let j = start;
    if (text.charCodeAt(j) === 45) j++; // -
    const first = text.charCodeAt(j);
    if (first === 48) {
      j++;
      if (isDigit(text.charCodeAt(j))) return fail(start, 'Invalid number', 'leading zeros are not allowed');
    } else if (isDigit(first)) {
      while (isDigit(text.charCodeAt(j))) j++;
    } else {
      return fail(j, 'Invalid number', "expected a digit after '-'");
    }
    if (text.charCodeAt(j) === 46) { // .
      j++;
      if (!isDigit(text.charCodeAt(j))) return fail(j, 'Invalid number', "expected a digit after the decimal point");
      while (isDigit(text.charCodeAt(j))) j++;
    }
    const e = text.charCodeAt(j);
    if (e === 101 || e === 69) { // e E
      j++;
      const s = text.charCodeAt(j);
      if (s === 43 || s === 45) j++;
      if (!isDigit(text.charCodeAt(j))) return fail(j, 'Invalid number', 'expected a digit in the exponent');
      while (isDigit(text.charCodeAt(j))) j++;
    }
    return j;
  };

  for (;;) {
    // Skip JSON whitespace: space, tab, line feed, carriage return.
    let c = text.charCodeAt(i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i);
    if (i >= n) {
      if ((want as Want) === Want.End) break;
      return unexpected(i);
    }

    switch (want as Want) {
      case Want.End:
        return fail(i, `Unexpected ${describeChar(text, i)}`, WANT_TEXT[Want.End]);

      case Want.Colon:
        if (c !== 58) return unexpected(i);
        i++;
        want = Want.Value;
        continue;

      case Want.CommaOrClose: {
        const top = stack[stack.length - 1]!;
        const close = top.node.kind === 'array' ? 93 : 125;
        if (c === 44) {
          i++;
          want = top.node.kind === 'array' ? Want.Value : Want.Key;
          continue;
        }
        if (c !== close) return unexpected(i);
        i++;
        stack.pop();
        attach(top.node);
        continue;
      }

      case Want.KeyOrClose:
      case Want.Key: {
        if (c === 125 && want === Want.KeyOrClose) {
          i++;
          const top = stack.pop()!;
          attach(top.node);
          continue;
        }
        if (c === 125) return fail(i, "Unexpected '}'", 'trailing commas are not allowed');
        if (c !== 34) return unexpected(i);
        const end = scanString(i);
        if (typeof end !== 'number') return end;
        const raw = text.slice(i, end);
        const top = stack[stack.length - 1]!;
        top.pendingKey = raw;
        const decoded = raw.indexOf('\\') === -1 ? raw.slice(1, -1) : (JSON.parse(raw) as string);
        if (top.seen!.has(decoded)) duplicateKeys++;
        else top.seen!.add(decoded);
        i = end;
        want = Want.Colon;
        continue;
      }

      case Want.Value:
      case Want.ValueOrClose: {
        if (c === 93 && want === Want.ValueOrClose) {
          i++;
          const top = stack.pop()!;
          attach(top.node);
          continue;
        }
        if (c === 93 && stack.length > 0 && stack[stack.length - 1]!.node.kind === 'array') {
          return fail(i, "Unexpected ']'", 'trailing commas are not allowed');
        }
        if (c === 123 || c === 91) {
          i++;
          const node: ArrayNode | ObjectNode = c === 123
            ? { kind: 'object', keys: [], values: [] }
            : { kind: 'array', items: [] };
          if (node.kind === 'object') objects.push(node);
          stack.push({ node, seen: node.kind === 'object' ? new Set() : null, pendingKey: '' });
          if (stack.length > depth) depth = stack.length;
          want = c === 123 ? Want.KeyOrClose : Want.ValueOrClose;
          continue;
        }
        let end: number | ParseError;
        if (c === 34) end = scanString(i);
        else if (c === 45 || isDigit(c)) end = scanNumber(i);
        else if (c === 116 && text.startsWith('true', i)) end = i + 4;
        else if (c === 102 && text.startsWith('false', i)) end = i + 5;
        else if (c === 110 && text.startsWith('null', i)) end = i + 4;
        else return unexpected(i);
        if (typeof end !== 'number') return end;
        const raw = text.slice(i, end);
        i = end;
        attach(raw);
        continue;
      }
    }
  }
  return { ok: true, root: root!, depth, duplicateKeys, objects };
}

function rootType(node: Node): 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null' {
  if (typeof node !== 'string') return node.kind;
  const c = node.charCodeAt(0);
  if (c === 34) return 'string';
  if (c === 116 || c === 102) return 'boolean';
  if (c === 110) return 'null';
  return 'number';
}

const decodeKey = (raw: string): string => (raw.indexOf('\\') === -1 ? raw.slice(1, -1) : (JSON.parse(raw) as string));

/** Sort every object's members by key (UTF-16 code unit order, stable for duplicates). */
function sortObjects(objects: readonly ObjectNode[]): void {
  for (const o of objects) {
    if (o.keys.length < 2) continue;
    const order = o.keys.map((raw, idx) => ({ key: decodeKey(raw), raw, value: o.values[idx]!, idx }));
    order.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.idx - b.idx));
    for (let k = 0; k < order.length; k++) {
      o.keys[k] = order[k]!.raw;
      o.values[k] = order[k]!.value;
    }
  }
}

class OutputTooLarge extends Error {}

/**
 * Emit the tree. `unit` is the indentation of one level, or null for minified
 * output; '' gives one member per line without indentation.
 */
function emit(root: Node, unit: string | null, max: number): string {
  const indents: string[] = [''];
  const indent = (d: number): string => {
    while (indents.length <= d) indents.push(indents[indents.length - 1]! + unit!);
    return indents[d]!;
  };
  const colon = unit === null ? ':' : ': ';
  let out = '';
  const push = (s: string): void => {
    out += s;
    if (out.length > max) throw new OutputTooLarge();
  };
  const frames: { node: ArrayNode | ObjectNode; next: number }[] = [];
  const open = (node: Node): void => {
    if (typeof node === 'string') { push(node); return; }
    const len = node.kind === 'array' ? node.items.length : node.keys.length;
    if (len === 0) { push(node.kind === 'array' ? '[]' : '{}'); return; }
    push(node.kind === 'array' ? '[' : '{');
    frames.push({ node, next: 0 });
  };
  open(root);
  while (frames.length > 0) {
    const f = frames[frames.length - 1]!;
    const node = f.node;
    const len = node.kind === 'array' ? node.items.length : node.keys.length;
    if (f.next === len) {
      frames.pop();
      push(unit === null ? '' : '\n' + indent(frames.length));
      push(node.kind === 'array' ? ']' : '}');
      continue;
    }
    if (f.next > 0) push(',');
    if (unit !== null) push('\n' + indent(frames.length));
    const k = f.next++;
    if (node.kind === 'array') open(node.items[k]!);
    else {
      push(node.keys[k]!);
      push(colon);
      open(node.values[k]!);
    }
  }
  return out;
}

const ErrorInfo = Type.Object({
  message: Type.String({ description: 'What is wrong and where.' }),
  line: Type.Integer({ minimum: 1, description: 'Line of the error, from 1.' }),
  column: Type.Integer({ minimum: 1, description: 'Column of the error on its line, from 1, in UTF-16 code units.' }),
  position: Type.Integer({ minimum: 0, description: 'Offset of the error in the input, from 0, in UTF-16 code units.' }),
}, { description: 'Where and why the input is not valid JSON (only when valid is false).' });

const Stats = Type.Object({
  input_bytes: Type.Integer({ minimum: 0, description: 'UTF-8 size of the input.' }),
  output_bytes: Type.Optional(Type.Integer({ minimum: 0, description: 'UTF-8 size of the output (format and minify).' })),
  depth: Type.Optional(Type.Integer({ minimum: 0, description: 'Deepest nesting of arrays and objects (0 for a scalar).' })),
  root_type: Type.Optional(Type.Union([
    Type.Literal('object'), Type.Literal('array'), Type.Literal('string'),
    Type.Literal('number'), Type.Literal('boolean'), Type.Literal('null'),
  ], { description: 'Type of the top-level value.' })),
  duplicate_keys: Type.Optional(Type.Integer({ minimum: 0, description: 'Object members whose key repeats an earlier key of the same object. They are kept in the output; JSON.parse would keep only the last.' })),
}, { description: 'Sizes and shape of the document (only input_bytes when the input is invalid).' });

const request = StrictObject({
  input: Type.String({ maxLength: MAX_INPUT_CHARS, description: 'The JSON text.' }),
  action: Type.Union([Type.Literal('format'), Type.Literal('minify'), Type.Literal('validate')], {
    default: 'format',
    description: "'format' pretty-prints, 'minify' removes all insignificant whitespace, 'validate' only checks the text (invalid JSON is then a 200 with valid: false).",
  }),
  indent: Type.Union([Type.Integer({ minimum: 0, maximum: 8 }), Type.Literal('tab')], {
    default: 2,
    description: "Spaces per level for 'format' (0 puts each member on its own line without indentation), or 'tab'. Ignored by minify and validate.",
  }),
  sort_keys: Type.Boolean({
    default: false,
    description: 'Sort object members by key (UTF-16 code unit order, recursively) for format and minify.',
  }),
});

const response = Type.Object({
  valid: Type.Boolean({ description: 'Whether the input is valid JSON (always true for format and minify, which answer 400 otherwise).' }),
  output: Type.Optional(Type.String({ maxLength: MAX_OUTPUT_CHARS, description: 'The formatted or minified JSON (not for validate). Number literals and string escapes are kept as written.' })),
  error: Type.Optional(ErrorInfo),
  stats: Stats,
});

export default defineTool({
  name: 'tool-json-formatter',
  slug: 'json-formatter',
  summary: 'Format, minify or validate JSON',
  description:
    'Pretty-prints or minifies JSON without altering it (numbers, escapes and duplicate keys are kept as written), optionally sorting keys, ' +
    'or validates it and reports the line and column of the first error. Output is capped at 1,048,576 characters.',
  request,
  response,
  example: {
    request: { input: '{"b":[1,2],"a":{"c":null}}', action: 'format', indent: 2, sort_keys: true },
    response: {
      valid: true,
      output: '{\n  "a": {\n    "c": null\n  },\n  "b": [\n    1,\n    2\n  ]\n}',
      stats: { input_bytes: 26, output_bytes: 57, depth: 2, root_type: 'object', duplicate_keys: 0 },
    },
  },
  run({ input, action, indent, sort_keys }) {
    const inputBytes = Buffer.byteLength(input, 'utf8');
    const parsed = parseJson(input);
    if (!parsed.ok) {
      if (action === 'validate') {
        return {
          valid: false,
          error: { message: parsed.message, line: parsed.line, column: parsed.column, position: parsed.position },
          stats: { input_bytes: inputBytes },
        };
      }
      return invalid('input', `is not valid JSON: ${parsed.message}`);
    }
    const shape = { depth: parsed.depth, root_type: rootType(parsed.root), duplicate_keys: parsed.duplicateKeys };
    if (action === 'validate') return { valid: true, stats: { input_bytes: inputBytes, ...shape } };

    if (sort_keys) sortObjects(parsed.objects);
    const unit = action === 'minify' ? null : indent === 'tab' ? '\t' : ' '.repeat(indent);
    let output: string;
    try {
      output = emit(parsed.root, unit, MAX_OUTPUT_CHARS);
    } catch (e) {
      if (e instanceof OutputTooLarge) {
        return invalid('input', `the ${action === 'minify' ? 'minified' : 'formatted'} JSON would exceed ${MAX_OUTPUT_CHARS} characters; use a smaller indent or action 'minify'`);
      }
      throw e;
    }
    return {
      valid: true,
      output,
      stats: { input_bytes: inputBytes, output_bytes: Buffer.byteLength(output, 'utf8'), ...shape },
    };
  },
});
