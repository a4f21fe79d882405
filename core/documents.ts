/**
 * Documents read like pages: a PDF, a DOCX file, an RSS, Atom or
 * JSON feed fetched by the page pipeline is read by a document reader (a
 * port: adapters/documents implements it) and answered with the same text
 * fields as a page, plus what the document says of itself. Which kind a
 * response is: its content type decides, then its first bytes (a PDF
 * served as application/octet-stream is still a PDF). Pure: types and
 * pure helpers.
 */
import type { DocumentEncrypted, DocumentUnreadable } from './errors.js';

export type DocumentKind = 'pdf' | 'docx' | 'rss' | 'atom' | 'json_feed';

/** The `document` answer field. */
export interface DocumentInfo {
  readonly type: DocumentKind;
  /** Pages in the document (PDF); null when the format has none. */
  readonly pages: number | null;
  /** Pages read (at most max_pages); null when the format has none. */
  readonly pages_read: number | null;
  readonly title: string | null;
  readonly author: string | null;
  /** ISO 8601, when the document says. */
  readonly created: string | null;
  readonly language: string | null;
  /** What was left out, and why (a scanned PDF with no text layer, pages past max_pages, the time limit). */
  readonly warnings: readonly string[];
}

/** One item of a feed (the `feed` answer field). */
export interface FeedItem {
  readonly title: string | null;
  readonly link: string | null;
  /** ISO 8601 when it could be read, else as written; null when absent. */
  readonly date: string | null;
  readonly summary: string | null;
}

/** The `feed` answer field. */
export interface FeedInfo {
  readonly title: string | null;
  readonly link: string | null;
  readonly items: readonly FeedItem[];
}

/** What a document reader makes of one document. */
export interface DocumentRead {
  readonly info: DocumentInfo;
  /** All the text, in reading order (text_content). */
  readonly text: string;
  /** The text without running headers, footers and page numbers (main_content). */
  readonly main: string;
  readonly markdown: string;
  /** DOCX: the document as HTML, read from then on by the HTML extractors (links, main content, Markdown). */
  readonly html?: string;
  readonly feed?: FeedInfo;
}

export interface DocumentReadOptions {
  /** Pages of a PDF to read at most. */
  readonly maxPages: number;
  /** Give up (DOCUMENT_UNREADABLE) past this many milliseconds. */
  readonly timeoutMs: number;
}

/** The port: reads a document of a known kind. Fails with DocumentEncrypted or DocumentUnreadable. */
export interface DocumentReader {
  read(kind: DocumentKind, bytes: Uint8Array, options: DocumentReadOptions): Promise<DocumentRead>;
}

export type DocumentFailure = DocumentEncrypted | DocumentUnreadable;

export const DEFAULT_MAX_PAGES = 50;
export const MAX_MAX_PAGES = 500;

const FEED_MEDIA: Readonly<Record<string, DocumentKind>> = {
  'application/rss+xml': 'rss',
  'application/atom+xml': 'atom',
  'application/feed+json': 'json_feed',
};
const DOCX_MEDIA = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
/** Media types that say nothing of what the bytes are: the bytes decide. */
const GENERIC_MEDIA = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/binary', 'application/x-download', 'application/download', 'application/force-download']);

const startsWith = (bytes: Uint8Array, sig: string, at = 0): boolean => {
  if (bytes.length < at + sig.length) return false;
  for (let n = 0; n < sig.length; n++) if (bytes[at + n] !== sig.charCodeAt(n)) return false;
  return true;
};

/** The first `n` bytes as Latin-1 text (for sniffing). */
const head = (bytes: Uint8Array, n: number): string => {
  let s = '';
  const end = Math.min(bytes.length, n);
  for (let i = 0; i < end; i++) s += String.fromCharCode(bytes[i]!);
  return s;
};

/** A ZIP that is a DOCX: its first entries name word/ parts (an ODT, an XLSX, a plain ZIP are not). */
function zipKind(bytes: Uint8Array): DocumentKind | undefined {
  if (!startsWith(bytes, 'PK\u0003\u0004')) return undefined;
  return /word\//.test(head(bytes, 64 * 1024)) ? 'docx' : undefined;
}

/** The name of an XML text's root element, past its prolog (each part skipped by indexOf: no backtracking), or undefined. */
function rootElement(h: string): string | undefined {
  let i = 0;
  for (;;) {
    while (i < h.length && /\s/.test(h[i]!)) i++;
    if (h.startsWith('<?', i)) { const e = h.indexOf('?>', i + 2); if (e < 0) return undefined; i = e + 2; continue; }
    if (h.startsWith('<!--', i)) { const e = h.indexOf('-->', i + 4); if (e < 0) return undefined; i = e + 3; continue; }
    if (h.startsWith('<!', i)) { const e = h.indexOf('>', i + 2); if (e < 0) return undefined; i = e + 1; continue; }
    break;
  }
  return /^<([A-Za-z_][\w.:-]*)/.exec(h.slice(i, i + 300))?.[1];
}

/** A feed by its root element (XML) or its version (JSON). */
function textFeedKind(text: string): DocumentKind | undefined {
  const h = text.slice(0, 4096).replace(/^\uFEFF/, '');
  if (/^\s*\{/.test(h)) return /"version"\s*:\s*"https:\/\/jsonfeed\.org\/version\//.test(h) ? 'json_feed' : undefined;
  // Past the prolog (declaration, comments, processing instructions, doctype): the root element.
  const root = rootElement(h);
  if (root === undefined) return undefined;
  const local = root.includes(':') ? root.slice(root.indexOf(':') + 1) : root;
  if (local === 'rss' || local === 'RDF') return 'rss';
  if (local === 'feed' && /xmlns(?::\w+)?\s*=\s*["']http:\/\/www\.w3\.org\/2005\/Atom["']/.test(h)) return 'atom';
  return undefined;
}

/**
 * The kind of document a response is, or undefined for a page (HTML, plain
 * text, other media). The content type decides: a document type is that
 * document; an XML or JSON type is a feed when its root says so; a generic
 * type (none, application/octet-stream) leaves it to the first bytes.
 * `bytes` is the body as received (absent: only `text` was kept).
 */
export function documentKind(media: string, bytes: Uint8Array | undefined, text: string): DocumentKind | undefined {
  if (media === 'application/pdf' || media === 'application/x-pdf') return 'pdf';
  if (media === DOCX_MEDIA) return 'docx';
  const feed = FEED_MEDIA[media];
  if (feed !== undefined) return feed;
  if (media === 'application/xml' || media === 'text/xml' || media === 'application/json' || media === 'text/plain') return textFeedKind(text);
  if (GENERIC_MEDIA.has(media) && bytes !== undefined) {
    // %PDF- may follow a little junk (the format allows it in the first 1024 bytes).
    if (startsWith(bytes, '%PDF-') || head(bytes, 1024).includes('%PDF-')) return 'pdf';
    const zip = zipKind(bytes);
    if (zip !== undefined) return zip;
    if (media !== '') return textFeedKind(text);
  }
  return undefined;
}

/** Documents read from the bytes (the others from the decoded text). */
export const BINARY_KINDS: ReadonlySet<DocumentKind> = new Set(['pdf', 'docx']);
