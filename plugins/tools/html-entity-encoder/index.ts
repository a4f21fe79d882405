/**
 * html-entity-encoder: escape text for HTML/XML, or decode character
 * references back to text. The `entities` package (BSD-2-Clause, the one
 * htmlparser2 and cheerio use) does all the work.
 */
import {
  DecodingMode, decodeHTML, decodeXML, encodeHTML, encodeNonAsciiHTML, encodeXML, escapeUTF8,
} from 'entities';
import { type CheckIssue, defineTool, invalid, invalidMany, type Static, StrictObject, Type, type Unchecked } from '../../sdk/index.js';

const MAX_INPUT = 262_144;
/** Encoding can grow text ~25x (`&NotNestedGreaterGreater;`); refuse rather than answer megabytes. */
const MAX_OUTPUT = 1_048_576;

type Mode = 'minimal' | 'non_ascii' | 'all';
type Level = 'html5' | 'xml';
type DecodeMode = 'legacy' | 'strict' | 'attribute';

const ENCODERS: Record<Level, Record<Mode, (s: string) => string>> = {
  html5: { minimal: escapeUTF8, non_ascii: encodeNonAsciiHTML, all: encodeHTML },
  // XML has only the five predefined entities, so "all" is the same as "non_ascii" there.
  xml: { minimal: escapeUTF8, non_ascii: encodeXML, all: encodeXML },
};

const DECODE_MODES: Record<DecodeMode, DecodingMode> = {
  legacy: DecodingMode.Legacy,
  strict: DecodingMode.Strict,
  attribute: DecodingMode.Attribute,
};

const Level = Type.Union([Type.Literal('html5'), Type.Literal('xml')], {
  default: 'html5',
  description: 'Entity set: html5 (every HTML named character reference) or xml (only &amp; &lt; &gt; &quot; &apos; and numeric references).',
});
const ModeSchema = Type.Union([Type.Literal('minimal'), Type.Literal('non_ascii'), Type.Literal('all')], {
  description:
    'encode only (default minimal): minimal escapes & < > " \' and leaves other text as is; non_ascii also escapes every non-ASCII character ' +
    '(named reference where one exists at this level, else numeric); all (html5) also escapes ASCII punctuation and whitespace that have a named reference.',
});
const DecodeModeSchema = Type.Union([Type.Literal('legacy'), Type.Literal('strict'), Type.Literal('attribute')], {
  description:
    'decode with level html5 only (default legacy): legacy decodes references without a trailing semicolon as browsers do in text (&amp, &copy2); ' +
    'strict needs the semicolon; attribute follows the attribute-value rule (legacy, except &name followed by = or an alphanumeric is left alone).',
});

const EntityRequest = StrictObject({
  input: Type.String({ maxLength: MAX_INPUT, description: `The text to encode or decode (at most ${MAX_INPUT} characters).` }),
  action: Type.Union([Type.Literal('encode'), Type.Literal('decode')], { default: 'encode', description: 'encode text to references, or decode references to text.' }),
  level: Level,
  mode: Type.Optional(ModeSchema),
  decode_mode: Type.Optional(DecodeModeSchema),
});

/**
 * Options that do not apply to the chosen action or level. The validate
 * stage runs this over the fields that passed the schema (so one 400 names
 * every problem); run() again, as a guard.
 */
function problems(i: Unchecked<Static<typeof EntityRequest>>): CheckIssue[] {
  const issues: CheckIssue[] = [];
  if (i.action === 'encode' && i.decode_mode !== undefined) issues.push({ field: 'decode_mode', message: 'applies only to action "decode"' });
  if (i.action === 'decode' && i.mode !== undefined) issues.push({ field: 'mode', message: 'applies only to action "encode"' });
  if (i.action === 'decode' && i.level === 'xml' && i.decode_mode !== undefined && i.decode_mode !== 'strict') {
    issues.push({ field: 'decode_mode', message: 'XML references are always decoded strictly; omit decode_mode or use "strict"' });
  }
  return issues;
}

export default defineTool({
  name: 'tool-html-entity-encoder',
  slug: 'html-entity-encoder',
  summary: 'Escape text as HTML/XML character references, or decode references back to text.',
  description:
    'encode turns the characters that are special in HTML and XML (and optionally every non-ASCII or every referenceable character) into ' +
    'character references; decode turns named, decimal and hex references back into text following the HTML standard ' +
    '(invalid code points such as &#0; or surrogates become U+FFFD). Options that do not apply to the chosen action are refused.',
  request: EntityRequest,
  response: Type.Object({
    output: Type.String({ description: 'The encoded or decoded text.' }),
    action: Type.Union([Type.Literal('encode'), Type.Literal('decode')]),
    level: Type.Union([Type.Literal('html5'), Type.Literal('xml')]),
    mode: Type.Union([ModeSchema, Type.Null()], { description: 'The encoding mode used; null when decoding.' }),
    decode_mode: Type.Union([DecodeModeSchema, Type.Null()], { description: 'The decoding mode used (always strict for xml); null when encoding.' }),
  }),
  example: {
    request: { input: '<a href="x">Café & co</a>', action: 'encode', level: 'html5', mode: 'non_ascii' },
    response: {
      output: '&lt;a href=&quot;x&quot;&gt;Caf&eacute; &amp; co&lt;/a&gt;',
      action: 'encode',
      level: 'html5',
      mode: 'non_ascii',
      decode_mode: null,
    },
  },
  check: problems,
  run(request) {
    const issues = problems(request);
    if (issues.length > 0) invalidMany(issues);
    const { input, action, level, mode, decode_mode } = request;
    if (action === 'encode') {
      const m: Mode = mode ?? 'minimal';
      const output = ENCODERS[level][m](input);
      if (output.length > MAX_OUTPUT) {
        invalid('input', `the encoded text would be ${output.length} characters, over the ${MAX_OUTPUT} limit; send less text${m === 'minimal' ? '' : ' or use mode "minimal"'}`);
      }
      return { output, action, level, mode: m, decode_mode: null };
    }
    if (level === 'xml') {
      return { output: decodeXML(input), action, level, mode: null, decode_mode: 'strict' as const };
    }
    const dm: DecodeMode = decode_mode ?? 'legacy';
    return { output: decodeHTML(input, DECODE_MODES[dm]), action, level, mode: null, decode_mode: dm };
  },
});
