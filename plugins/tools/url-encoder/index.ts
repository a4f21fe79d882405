/**
 * url-encoder: percent-encode and decode text, or parse a URL into its parts.
 *
 * The platform does the work: encodeURIComponent / encodeURI, the WHATWG
 * application/x-www-form-urlencoded serializer (URLSearchParams) and the
 * WHATWG URL parser. Around them: lone surrogates are refused before they
 * become a URIError (or a silent U+FFFD), malformed percent sequences are
 * located and refused, and the encoded size is capped.
 */
import { defineTool, requireWellFormed, StrictObject, Type, invalid } from '../../sdk/index.js';

export const MAX_INPUT_CHARS = 262_144;
export const MAX_OUTPUT_CHARS = 1_048_576;


function refuseLoneSurrogate(input: string): void {
  requireWellFormed('input', input);
}

function encodeForm(input: string): string {
  // The WHATWG urlencoded serializer: space -> '+', only *-._ and alphanumerics kept.
  return new URLSearchParams([['', input]]).toString().slice(1);
}

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/** Explain why decodeURI(Component) refused `input`: the first bad %-sequence. */
function locateMalformed(input: string): string {
  let i = input.indexOf('%');
  while (i !== -1) {
    if (!isHex(input.charCodeAt(i + 1)) || !isHex(input.charCodeAt(i + 2))) {
      const seq = input.slice(i, i + 3);
      return `has a malformed percent sequence ${JSON.stringify(seq)} at position ${i}: '%' must be followed by two hexadecimal digits (encode a literal '%' as %25)`;
    }
    // A run of consecutive %XX triplets must be valid UTF-8.
    const start = i;
    const bytes: number[] = [];
    while (input.charCodeAt(i) === 37 && isHex(input.charCodeAt(i + 1)) && isHex(input.charCodeAt(i + 2))) {
      bytes.push(parseInt(input.slice(i + 1, i + 3), 16));
      i += 3;
    }
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
    } catch {
      return `has percent-encoded bytes at position ${start} (${JSON.stringify(input.slice(start, i))}) that are not valid UTF-8`;
    }
    i = input.indexOf('%', i);
  }
  return 'has a malformed percent sequence';
}

function decode(input: string, mode: 'component' | 'uri' | 'form'): string {
  try {
    if (mode === 'uri') return decodeURI(input);
    return decodeURIComponent(mode === 'form' ? input.replace(/\+/g, ' ') : input);
  } catch {
    return invalid('input', locateMalformed(input));
  }
}

const Parts = Type.Object({
  href: Type.String({ description: 'The whole URL, normalised.' }),
  protocol: Type.String({ description: "Scheme with its colon, e.g. 'https:'." }),
  username: Type.String(),
  password: Type.String(),
  host: Type.String({ description: 'Hostname and non-default port.' }),
  hostname: Type.String({ description: 'Hostname (punycode for IDNs, brackets for IPv6).' }),
  port: Type.String({ description: "Port, or '' when it is the scheme's default or absent." }),
  pathname: Type.String(),
  search: Type.String({ description: "Query with its '?', or ''." }),
  hash: Type.String({ description: "Fragment with its '#', or ''." }),
  origin: Type.String({ description: "Scheme, host and port; 'null' for opaque origins." }),
  query: Type.Array(Type.Tuple([Type.String(), Type.String()]), {
    maxItems: MAX_INPUT_CHARS,
    description: 'Decoded query parameters as [key, value] pairs in order (repeated keys kept).',
  }),
}, { description: 'The parts of the URL (parse only), as the WHATWG URL parser sees them.' });

const request = StrictObject({
  input: Type.String({ maxLength: MAX_INPUT_CHARS, description: 'Text to encode or decode, or an absolute URL to parse.' }),
  action: Type.Union([Type.Literal('encode'), Type.Literal('decode'), Type.Literal('parse')], {
    default: 'encode',
    description: "'encode' or 'decode' percent-encoding, or 'parse' a URL into its parts.",
  }),
  mode: Type.Union([Type.Literal('component'), Type.Literal('uri'), Type.Literal('form')], {
    default: 'component',
    description:
      "'component' (encodeURIComponent: everything but A-Z a-z 0-9 - _ . ! ~ * ' ( ) is encoded), 'uri' (encodeURI: URL syntax such as : / ? # & = is kept), " +
      "'form' (application/x-www-form-urlencoded: space is '+'). Ignored by parse.",
  }),
});

const response = Type.Object({
  output: Type.String({ maxLength: MAX_OUTPUT_CHARS, description: 'The encoded or decoded text; for parse, the normalised URL.' }),
  parts: Type.Optional(Parts),
});

export default defineTool({
  name: 'tool-url-encoder',
  slug: 'url-encoder',
  summary: 'Percent-encode, decode or parse URLs',
  description:
    'Percent-encodes or decodes text as a URL component, a whole URI or form data (UTF-8), refusing malformed percent sequences, ' +
    'or parses an absolute URL with the WHATWG URL parser into its parts and query pairs.',
  request,
  response,
  example: {
    request: { input: 'a b&c=d/é', action: 'encode', mode: 'component' },
    response: { output: 'a%20b%26c%3Dd%2F%C3%A9' },
  },
  run({ input, action, mode }) {
    if (action === 'parse') {
      let url: URL;
      try {
        url = new URL(input);
      } catch {
        return invalid('input', 'is not a valid absolute URL (a scheme such as https: is required)');
      }
      if (url.href.length > MAX_OUTPUT_CHARS) invalid('input', `the normalised URL would exceed ${MAX_OUTPUT_CHARS} characters`);
      const parts = {
        href: url.href,
        protocol: url.protocol,
        username: url.username,
        password: url.password,
        host: url.host,
        hostname: url.hostname,
        port: url.port,
        pathname: url.pathname,
        search: url.search,
        hash: url.hash,
        origin: url.origin,
        query: [...url.searchParams] as [string, string][],
      };
      return { output: url.href, parts };
    }

    if (action === 'decode') return { output: decode(input, mode) };

    refuseLoneSurrogate(input);
    const output = mode === 'component' ? encodeURIComponent(input) : mode === 'uri' ? encodeURI(input) : encodeForm(input);
    if (output.length > MAX_OUTPUT_CHARS) {
      invalid('input', `the encoded text would be ${output.length} characters, over the ${MAX_OUTPUT_CHARS} limit`);
    }
    return { output };
  },
});
