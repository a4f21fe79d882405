/**
 * Turning a fetched body into text the way a browser picks the encoding
 * (HTML's encoding sniffing, simplified): a byte order mark, then the
 * Content-Type charset, then a <meta> declaration in the first 4 KiB, then
 * UTF-8. Labels go through TextDecoder, which applies the WHATWG label
 * table (latin1 and iso-8859-1 decode as windows-1252, as browsers do).
 * The BOM comes first, as in browsers: a UTF-16 page with a BOM is UTF-16
 * whatever its header claims.
 */

import { TextDecoder } from 'node:util';
import { stripHtmlComments } from '../../../core/text.js';

const PRESCAN_BYTES = 4096;

export type CharsetSource = 'bom' | 'header' | 'meta' | 'default';

/** The charset parameter of a Content-Type value, if any. */
export function charsetFromContentType(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /;\s*charset\s*=\s*("?)([^";,\s]+)\1/i.exec(contentType);
  return m?.[2];
}

function bomEncoding(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** A charset declared by <meta charset> or <meta http-equiv="content-type" content="...; charset=..."> near the top. */
export function charsetFromMeta(bytes: Uint8Array): string | undefined {
  // Latin-1 keeps one character per byte, so ASCII markup is readable whatever the real encoding.
  const head = stripHtmlComments(Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, PRESCAN_BYTES)).toString('latin1'));
  const metaTag = /<meta\b([^<>]*)>/gi;
  const attr = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g;
  for (let m = metaTag.exec(head); m; m = metaTag.exec(head)) {
    const attrs = new Map<string, string>();
    const text = m[1] ?? '';
    for (let a = attr.exec(text); a; a = attr.exec(text)) {
      const name = (a[1] as string).toLowerCase();
      if (!attrs.has(name)) attrs.set(name, a[2] ?? a[3] ?? a[4] ?? '');
    }
    attr.lastIndex = 0;
    const charset = attrs.get('charset')?.trim();
    if (charset) return charset;
    if (attrs.get('http-equiv')?.trim().toLowerCase() === 'content-type') {
      const cs = /charset\s*=\s*["']?([^"'\s;]+)/i.exec(attrs.get('content') ?? '');
      if (cs?.[1]) return cs[1];
    }
  }
  return undefined;
}

/** windows-1252's 0x80-0x9F (0 where the WHATWG table maps the byte to the same C1 code point). */
const CP1252_HIGH = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
  0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

/**
 * Node 20's TextDecoder labels windows-1252 correctly but decodes it as
 * ISO-8859-1 (0x80 gives U+0080, not the euro sign); browsers use the real
 * table, so this decodes it by hand.
 */
function decodeWindows1252(bytes: Uint8Array): string {
  const parts: string[] = [];
  const CHUNK = 8192;
  for (let i = 0; i < bytes.length; i += CHUNK) {
    const codes = Array.from(bytes.subarray(i, i + CHUNK), (b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] || b : b));
    parts.push(String.fromCharCode(...codes));
  }
  return parts.join('');
}

function decode(d: TextDecoder, bytes: Uint8Array): string {
  return d.encoding === 'windows-1252' ? decodeWindows1252(bytes) : d.decode(bytes);
}

function decoderFor(label: string | undefined, source: CharsetSource): TextDecoder | undefined {
  if (!label) return undefined;
  try {
    const d = new TextDecoder(label.trim().toLowerCase());
    // HTML: a <meta> claiming UTF-16 is read as UTF-8 (the bytes are ASCII-compatible, or it would not have been found).
    if (source === 'meta' && d.encoding.startsWith('utf-16')) return new TextDecoder('utf-8');
    return d;
  } catch {
    return undefined; // unknown label: try the next source
  }
}

export interface DecodedText {
  readonly text: string;
  /** The WHATWG encoding name used (e.g. "windows-1252"). */
  readonly encoding: string;
  readonly source: CharsetSource;
}

export function decodeBody(bytes: Uint8Array, contentType: string | undefined): DecodedText {
  const bom = bomEncoding(bytes);
  const candidates: Array<[string | undefined, CharsetSource]> = [
    [bom, 'bom'],
    [charsetFromContentType(contentType), 'header'],
  ];
  const isHtmlish = !contentType || /html|xml/i.test(contentType);
  for (const [label, source] of candidates) {
    const d = decoderFor(label, source);
    if (d) return { text: decode(d, bytes), encoding: d.encoding, source };
  }
  if (isHtmlish) {
    const d = decoderFor(charsetFromMeta(bytes), 'meta');
    if (d) return { text: decode(d, bytes), encoding: d.encoding, source: 'meta' };
  }
  const d = new TextDecoder('utf-8');
  return { text: d.decode(bytes), encoding: d.encoding, source: 'default' };
}
