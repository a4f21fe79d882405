// The public main-content extraction sets used as DEVELOPMENT sets by
// bench:extract beside the Zyte article benchmark: CleanEval, Dragnet,
// Mozilla Readability's test pages and CleanPortalEval, read from what
// scripts/get-extract-devsets.sh brings into
// ${SCOUR_EXTRACT_DATA:-benchmarks/.data/extract}/<name>/{input,gold}/.
// trafilatura's own evaluation data is held out and has no loader here.
//
//   import { loadDevset, availableDevsets } from './devsets.mjs';
//   const pages = loadDevset('cleaneval'); // [{ id, html, expectedText }]
//
// Bytes become text as a browser would for a page without a Content-Type
// charset: a byte order mark's encoding, UTF-8 when the bytes are valid UTF-8, else the <meta> charset,
// else windows-1252; the gold file is decoded the same way (falling back to
// the page's encoding). Gold text is reduced to plain text per set:
// - cleaneval, cleanportaleval: the leading "URL: ..." line goes, the
//   <p>/<h>/<l> block marks become line breaks, entities are decoded (and
//   CleanEval's inputs lose the <text ...> line the set wraps each page in);
// - dragnet: the text before the "!@#$%^&*() COMMENTS" line (the rest is
//   the page's comments, which main_content leaves out);
// - readability: Readability's expected HTML reduced to its text (block
//   elements as line breaks).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TextDecoder } from 'node:util';
import { decodeHTML } from 'entities';
import { Parser } from 'htmlparser2';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const DEVSETS = ['cleaneval', 'dragnet', 'readability', 'cleanportaleval'];

/** What each set holds, for the tables. */
export const KINDS = {
  cleaneval: 'CleanEval 2007 dev+final: blogs, forums, personal/institutional pages, FAQs, lists (human gold)',
  dragnet: 'Dragnet: news, blogs, shops, comment threads (human gold, comments excluded)',
  readability: "Mozilla Readability's test pages: docs, blogs, news, several languages (gold = Readability's output)",
  cleanportaleval: 'CleanPortalEval: news portals and blogs, several pages per site (human gold)',
};

export function devsetDir() {
  return process.env.SCOUR_EXTRACT_DATA ?? join(root, 'benchmarks', '.data', 'extract');
}

export function availableDevsets() {
  return DEVSETS.filter((n) => existsSync(join(devsetDir(), n, 'gold')));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The charset a <meta> near the top declares, if any (simple scan, no regex quantifier nesting). */
function metaCharset(bytes) {
  const head = bytes.subarray(0, 4096).toString('latin1').toLowerCase();
  let i = head.indexOf('charset');
  while (i >= 0) {
    let j = i + 'charset'.length;
    while (head[j] === ' ' || head[j] === '=' || head[j] === '"' || head[j] === "'") j++;
    let k = j;
    while (k < head.length && /[a-z0-9_.:-]/.test(head[k])) k++;
    if (k > j) return head.slice(j, k);
    i = head.indexOf('charset', i + 1);
  }
  return undefined;
}

function decodeWith(bytes, label) {
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return undefined;
  }
}

/** [text, encoding]: UTF-8 if valid, else the given/meta label, else windows-1252. */
function decode(bytes, fallbackLabel) {
  // A byte order mark decides first (five of Dragnet's gold files are UTF-16).
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return [new TextDecoder('utf-16le').decode(bytes), 'utf-16le'];
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return [new TextDecoder('utf-16be').decode(bytes), 'utf-16be'];
  try {
    return [utf8.decode(bytes), 'utf-8'];
  } catch {
    const label = fallbackLabel ?? metaCharset(bytes);
    if (label !== undefined && label !== 'utf-8' && label !== 'utf8') {
      const t = decodeWith(bytes, label);
      if (t !== undefined) return [t, label];
    }
    return [new TextDecoder('windows-1252').decode(bytes), 'windows-1252'];
  }
}

/** CleanEval's gold format: drop the URL line, block marks to line breaks, entities decoded. */
export function cleanevalGold(text) {
  const lines = text.split('\n');
  while (lines.length > 0 && lines[0].trim() === '') lines.shift();
  if (lines.length > 0 && lines[0].trimStart().startsWith('URL:')) lines.shift();
  const out = [];
  for (const line of lines) {
    let s = '';
    let i = 0;
    while (i < line.length) {
      // <p>, <h>, <l> (any case, optional slash) are the gold's block marks.
      if (line[i] === '<') {
        let j = i + 1;
        if (line[j] === '/') j++;
        const c = (line[j] ?? '').toLowerCase();
        if ((c === 'p' || c === 'h' || c === 'l') && line[j + 1] === '>') {
          s += '\n';
          i = j + 2;
          continue;
        }
      }
      s += line[i];
      i++;
    }
    out.push(s);
  }
  return decodeHTML(out.join('\n'));
}

/** Dragnet's gold: the content before the comments marker line. */
export function dragnetGold(text) {
  const lines = text.split('\n');
  const cut = lines.findIndex((l) => l.includes('COMMENTS') && l.includes('^&*'));
  return (cut >= 0 ? lines.slice(0, cut) : lines).join('\n');
}

const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'footer',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table',
  'td', 'th', 'tr', 'ul',
]);

/** An HTML fragment's text, block elements as line breaks, script/style dropped. */
export function htmlToText(html) {
  const parts = [];
  let skip = 0;
  const parser = new Parser(
    {
      onopentagname(name) {
        if (name === 'script' || name === 'style') skip++;
        if (BLOCKS.has(name)) parts.push('\n');
      },
      onclosetag(name) {
        if (name === 'script' || name === 'style') skip = Math.max(0, skip - 1);
        if (BLOCKS.has(name)) parts.push('\n');
      },
      ontext(t) {
        if (skip === 0) parts.push(t);
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return parts.join('');
}

/** CleanEval's inputs wrap the page in a `<text id=URL title=... encoding=...>` line and `</text>`: the dataset's, not the page's. */
export function unwrapCleaneval(html) {
  if (!html.startsWith('<text id=')) return html;
  const start = html.indexOf('>') + 1;
  const close = html.lastIndexOf('</text>');
  return html.slice(start, close > start ? close : html.length);
}

function goldText(name, raw) {
  if (name === 'dragnet') return dragnetGold(raw);
  if (name === 'readability') return htmlToText(raw);
  return cleanevalGold(raw);
}

/**
 * One set's pages, sorted by id: { id, html, expectedText, url }. `url` is
 * the page's own when the gold names it (CleanEval), else a placeholder.
 */
export function loadDevset(name) {
  if (!DEVSETS.includes(name)) throw new Error(`unknown development set ${name}`);
  const dir = join(devsetDir(), name);
  const ids = readdirSync(join(dir, 'gold'))
    .filter((f) => f.endsWith('.txt'))
    .map((f) => f.slice(0, -4))
    .filter((id) => existsSync(join(dir, 'input', `${id}.html`)))
    .sort();
  return ids.map((id) => {
    const [html, enc] = decode(readFileSync(join(dir, 'input', `${id}.html`)));
    const [raw] = decode(readFileSync(join(dir, 'gold', `${id}.txt`)), enc === 'utf-8' || enc.startsWith('utf-16') ? undefined : enc);
    const urlLine = raw.trimStart().startsWith('URL:') ? raw.trimStart().slice(4).split('\n')[0].trim() : '';
    const url = urlLine.startsWith('http') ? urlLine : `https://example.com/${name}/${id}`;
    return { id, html: unwrapCleaneval(html), expectedText: goldText(name, raw.replace(/\r\n/g, '\n')), url };
  });
}
