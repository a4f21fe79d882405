/** Case table for the html-entity-encoder tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

const out = (expected: string) => (b: any) => expect(b.output).toBe(expected);
/** The whole body, less the request_id the HTTP layer adds. */
const whole = (b: any) => { const { request_id: _id, ...rest } = b; return rest; };

export default {
  slug: 'html-entity-encoder',
  cases: [
    // encode
    {
      name: 'encode minimal by default',
      body: { input: '<a href="x">&</a>' },
      status: 200,
      check: (b) => expect(whole(b)).toEqual({ output: '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;', action: 'encode', level: 'html5', mode: 'minimal', decode_mode: null }),
    },
    { name: 'encode minimal escapes the apostrophe', body: { input: "it's" }, status: 200, check: out('it&apos;s') },
    { name: 'encode minimal leaves non-ASCII alone', body: { input: 'café 😀', mode: 'minimal' }, status: 200, check: out('café 😀') },
    { name: 'encode non_ascii uses named references (html5)', body: { input: 'caf\u00e9', mode: 'non_ascii' }, status: 200, check: out('caf&eacute;') },
    { name: 'encode non_ascii: nbsp, sum, and an astral emoji', body: { input: '\u00a0\u2211\u{1F600}', mode: 'non_ascii' }, status: 200, check: out('&nbsp;&sum;&#128512;') },
    { name: 'encode non_ascii with level xml is numeric', body: { input: 'caf\u00e9 <', mode: 'non_ascii', level: 'xml' }, status: 200, check: out('caf&#233; &lt;') },
    { name: 'encode all escapes ASCII punctuation too', body: { input: 'a=b/c#!', mode: 'all' }, status: 200, check: out('a&equals;b&sol;c&num;&excl;') },
    { name: 'encode all escapes newline and tab', body: { input: 'a\nb\tc', mode: 'all' }, status: 200, check: out('a&NewLine;b&Tab;c') },
    { name: 'encode all, xml level, equals non_ascii', body: { input: 'a=\u00e9', mode: 'all', level: 'xml' }, status: 200, check: out('a=&#233;') },
    { name: 'encode the empty string', body: { input: '' }, status: 200, check: out('') },
    { name: 'encode a lone surrogate as a numeric reference', body: { input: '\ud800', mode: 'non_ascii' }, status: 200, check: out('&#55296;') },
    { name: 'encode keeps NUL bytes (minimal)', body: { input: 'a\u0000<' }, status: 200, check: out('a\u0000&lt;') },
    { name: 'encode an already-encoded string double-encodes', body: { input: '&amp;' }, status: 200, check: out('&amp;amp;') },

    // decode
    {
      name: 'decode named, hex and legacy references',
      body: { input: '&amp;&#x27;&nbsp;&eacute;', action: 'decode' },
      status: 200,
      check: (b) => expect(whole(b)).toEqual({ output: "&'\u00a0\u00e9", action: 'decode', level: 'html5', mode: null, decode_mode: 'legacy' }),
    },
    { name: 'decode decimal and hex references', body: { input: '&#65;&#x42;&#X43;', action: 'decode' }, status: 200, check: out('ABC') },
    { name: 'decode an astral code point', body: { input: '&#128512;&#x1F600;', action: 'decode' }, status: 200, check: out('\u{1F600}\u{1F600}') },
    { name: 'decode legacy: references without semicolon', body: { input: '&amp &copy2 &lt', action: 'decode' }, status: 200, check: out('& \u00a92 <') },
    { name: 'decode strict: semicolon required', body: { input: '&amp &copy2 &lt;', action: 'decode', decode_mode: 'strict' }, status: 200, check: out('&amp &copy2 <') },
    { name: 'decode attribute: query string kept', body: { input: '?a=1&copy=2&amp;b', action: 'decode', decode_mode: 'attribute' }, status: 200, check: out('?a=1&copy=2&b') },
    { name: 'decode text mode turns &copy= into ©=', body: { input: '?a=1&copy=2', action: 'decode' }, status: 200, check: out('?a=1\u00a9=2') },
    { name: 'decode invalid code points to U+FFFD', body: { input: '&#0;&#xD800;&#x110000;&#99999999999999999999;', action: 'decode' }, status: 200, check: out('\ufffd\ufffd\ufffd\ufffd') },
    { name: 'decode Windows-1252 numeric quirk (&#128; is €)', body: { input: '&#128;', action: 'decode' }, status: 200, check: out('\u20ac') },
    { name: 'decode unknown names are left alone', body: { input: '&notareference; &', action: 'decode', decode_mode: 'strict' }, status: 200, check: out('&notareference; &') },
    { name: 'decode xml: only the five named entities', body: { input: '&amp;&apos;&nbsp;&eacute;&#65;', action: 'decode', level: 'xml' }, status: 200, check: (b) => { expect(b.output).toBe("&'&nbsp;&eacute;A"); expect(b.decode_mode).toBe('strict'); } },
    { name: 'decode xml with explicit strict', body: { input: '&lt;', action: 'decode', level: 'xml', decode_mode: 'strict' }, status: 200, check: out('<') },
    { name: 'decode __proto__ looking names', body: { input: '&__proto__;&constructor;', action: 'decode' }, status: 200, check: out('&__proto__;&constructor;') },

    // hostile and invalid
    { name: 'missing input', body: { action: 'encode' }, status: 400, fields: ['input'] },
    { name: 'input is a number', body: { input: 42 }, status: 400, fields: ['input'] },
    { name: 'input is null', body: { input: null }, status: 400, fields: ['input'] },
    { name: 'input is an array', body: { input: ['<'] }, status: 400, fields: ['input'] },
    { name: 'unknown action', body: { input: 'x', action: 'escape' }, status: 400, fields: ['action'] },
    { name: 'unknown mode', body: { input: 'x', mode: 'everything' }, status: 400, fields: ['mode'] },
    { name: 'unknown level', body: { input: 'x', level: 'html4' }, status: 400, fields: ['level'] },
    { name: 'unknown decode_mode', body: { input: 'x', action: 'decode', decode_mode: 'loose' }, status: 400, fields: ['decode_mode'] },
    { name: 'unknown field', body: { input: 'x', text: 'y' }, status: 400, fields: ['text'] },
    { name: 'mode with decode', body: { input: 'x', action: 'decode', mode: 'all' }, status: 400, fields: ['mode'] },
    { name: 'decode_mode with encode', body: { input: 'x', decode_mode: 'strict' }, status: 400, fields: ['decode_mode'] },
    { name: 'decode_mode legacy with xml', body: { input: 'x', action: 'decode', level: 'xml', decode_mode: 'legacy' }, status: 400, fields: ['decode_mode'] },
    { name: 'oversize input', body: { input: 'a'.repeat(262_145) }, status: 400, fields: ['input'] },
    { name: 'output would exceed the limit', body: { input: '"'.repeat(200_000) }, status: 400, fields: ['input'] },
    { name: 'output would exceed the limit (mode all)', body: { input: '\n'.repeat(200_000), mode: 'all' }, status: 400, fields: ['input'] },
  ],
} satisfies ToolCaseFile;
