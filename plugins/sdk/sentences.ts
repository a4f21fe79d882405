/**
 * Sentences as text really comes (issue 28): web pages, PDFs and plain-text
 * files, hard-wrapped abstracts with keyword lines after them. Research
 * reads sources through `sentenceSpans`, and only sentences that pass
 * `isStatement` become insight statements, summary sentences or the
 * subjects of recommendations. Shared through the SDK because both the
 * research operation (which splits the sources) and the analysers (which
 * choose what to say) need it.
 *
 * Boundaries (`sentenceSpans`):
 * - a blank line; a line that starts a list item (`-`, `*`, `•`, `1.`,
 *   `2)`, `(a)`, `#` headings); in text that is not hard-wrapped (its
 *   lines are paragraphs, as pages and documents are rendered) every line
 *   break;
 * - a line break is never a boundary where the sentence plainly goes on:
 *   the line ends in a comma, a hyphen or a function word ("of", "the",
 *   "and", ...), or (in mixed-case text) the next line goes on in lower
 *   case;
 * - in hard-wrapped text (the longest lines at most 130 characters, many
 *   lines long and ending inside a sentence) a single line break is
 *   otherwise a boundary only where a line that starts with a capital
 *   ended well short of the width (at most 60% of it, and the next line's
 *   first word would have fitted): a heading, a keyword line, a
 *   paragraph's last line;
 * - in text written in lower case (old collections, hard-wrapped or
 *   wrapped too raggedly to measure) a short line tells nothing: only
 *   punctuation, blank lines and list items end its sentences;
 * - terminal punctuation (`.`, `!`, `?`, `…`, and `。！？`), with closing
 *   quotes and brackets, followed by white space or the end, except after
 *   an abbreviation (Dr., e.g., et al., Fig., No., ...), an initial
 *   ("J. Smith"), a word with inner dots (U.S.), or before a word in lower
 *   case (in mixed-case text: "approx. three").
 * Each span is trimmed (and a list marker left out), so
 * `text.slice(start, end)` is the sentence exactly as stored: evidence
 * quoted from it stays verbatim, line breaks included.
 *
 * `reading` is how the sentence reads: white space (line breaks included)
 * collapsed to one space, no space before a closing `.,;:!?` (the
 * typewriter " ." of old collections), and a word hyphenated at a line end
 * joined back: "reclama-\ntion" reads "reclamation", while a compound
 * stays one ("boundary-\nlayer" reads "boundary-layer") when the text
 * itself writes it with the hyphen, or both halves are words of the text,
 * or the first half is a common first element of compounds (self, non,
 * well, two, ...), unless the text also writes it joined.
 *
 * Statements (`isStatement`): at least six words; starts as a sentence does
 * (a capital letter or a digit, after opening quotes or brackets; any
 * letter when the source is written in lower case); ends with `.` or `!`
 * (not `?`, `:`, `...` or `…`: a question, a lead-in or a cut-off snippet
 * is not a finding), unless the source has no terminal punctuation at all;
 * has a finite verb (wink-nlp's part-of-speech tags, read with the word's
 * form: a finite auxiliary or modal, a verb in -s, a past form or a plain
 * present form after its subject; not an infinitive, a gerund or a
 * participle with no subject; and a word tagged as a noun that
 * compromise's lexicon lists as a verb, after a plural subject and before
 * no other noun: "batteries charge five times"); and is none of: a labelled line
 * (`Keywords:`, `Tags:`, `Posted by`, `By ...`, `Index terms`, ...), a
 * caption (`Figure 3.`, `Table 2:`), a table row (tabs, `|`, runs of
 * spaces), a title-case line (most of its longer words capitalised), a
 * date or a line mostly of digits.
 */
import { createRequire } from 'node:module';
import type { AsHelpers, ItsHelpers, WinkMethods } from 'wink-nlp';

const require = createRequire(import.meta.url);

export interface Wink {
  readonly nlp: WinkMethods;
  readonly its: ItsHelpers;
  readonly as: AsHelpers;
}

let wink: Wink | undefined;
/**
 * The shared wink-nlp instance with wink-eng-lite-web-model and the
 * `negation`, `sentiment` and `pos` pipes, created on first use (a few MB
 * of weights, once per process). No sentence splitting: each document it
 * reads is one sentence.
 */
export function winkNlp(): Wink {
  if (wink === undefined) {
    const create = require('wink-nlp') as (model: unknown, pipe?: string[]) => WinkMethods;
    const model = require('wink-eng-lite-web-model') as unknown;
    const nlp = create(model, ['negation', 'sentiment', 'pos']);
    wink = { nlp, its: nlp.its, as: nlp.as };
  }
  return wink;
}

let posOnly: Wink | undefined;
/** A second instance with the `pos` pipe alone, for finding verbs (half the cost of the full pipeline). */
function posNlp(): Wink {
  if (posOnly === undefined) {
    const create = require('wink-nlp') as (model: unknown, pipe?: string[]) => WinkMethods;
    const nlp = create(require('wink-eng-lite-web-model') as unknown, ['pos']);
    posOnly = { nlp, its: nlp.its, as: nlp.as };
  }
  return posOnly;
}

let verbs: Readonly<Record<string, string>> | undefined;
/** compromise's lexicon, for the words it lists as verbs (Infinitive, PresentTense); loaded on first use. */
function verbLexicon(): Readonly<Record<string, string>> {
  if (verbs === undefined) {
    const nlp = require('compromise') as { model(): { one: { lexicon: Record<string, string | string[]> } } };
    const out: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [w, tag] of Object.entries(nlp.model().one.lexicon)) if (tag === 'Infinitive' || tag === 'PresentTense') out[w] = tag;
    verbs = out;
  }
  return verbs;
}

/** A sentence: `text.slice(start, end)` as stored, and how it reads. */
export interface SentenceSpan {
  readonly start: number;
  readonly end: number;
  /** The sentence as read: white space collapsed, line-end hyphenation undone. */
  readonly reading: string;
}

/** What `isStatement` needs to know about the text a sentence came from. */
export interface TextShape {
  /** The text is written in lower case (almost no capital letters): sentences may start in lower case. */
  readonly lowerCase: boolean;
  /** The text has no terminal punctuation at all: sentences need not end with it. */
  readonly unpunctuated: boolean;
}

// ---------------------------------------------------------------------------
// Characters

const isWs = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);
const isLowerAt = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  if (c >= 97 && c <= 122) return true;
  if (c < 128) return false;
  const ch = s.codePointAt(i)!;
  return /\p{Ll}/u.test(String.fromCodePoint(ch));
};
const isUpperAt = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  if (c >= 65 && c <= 90) return true;
  if (c < 128) return false;
  return /\p{Lu}/u.test(String.fromCodePoint(s.codePointAt(i)!));
};
const isDigitCode = (c: number): boolean => c >= 48 && c <= 57;
const isLetterAt = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) return true;
  if (c < 128) return false;
  return /\p{L}/u.test(String.fromCodePoint(s.codePointAt(i)!));
};

/** Sentence-ending punctuation. */
const TERMINAL = new Set(['.', '!', '?', '…', '。', '！', '？', '‼', '⁇', '⁈', '⁉']);
/** What may follow terminal punctuation and still belong to the sentence. */
const CLOSERS = new Set(['"', "'", '”', '’', '»', '›', ')', ']', '}', '」', '』', '*', '_']);
/** What may open a sentence before its first letter. */
const OPENERS = new Set(['"', "'", '“', '‘', '«', '‹', '(', '[', '{', '¿', '¡', '「', '『', '*', '_']);

/** Abbreviations after which a full stop does not end a sentence (lower case, without the final dot). */
const ABBREVIATIONS = new Set([
  'dr', 'mr', 'mrs', 'ms', 'prof', 'sr', 'jr', 'st', 'mt', 'vs', 'e.g', 'i.e', 'al', 'fig', 'figs', 'no', 'nos', 'vol', 'vols', 'pp', 'p',
  'u.s', 'u.k', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'approx', 'ca', 'cf', 'eq', 'eqs',
  'ref', 'refs', 'sec', 'ch', 'chap', 'ed', 'eds', 'rev', 'gen', 'gov', 'sen', 'rep', 'lt', 'col', 'capt', 'sgt', 'hon', 'dept', 'univ',
  'est', 'op', 'cit', 'ibid', 'viz', 'resp', 'incl', 'approx', 'min', 'max', 'avg', 'ft', 'in', 'yr', 'yrs', 'hr', 'hrs', 'ave', 'blvd',
]);
/** Abbreviations that also end sentences: a boundary when a capital letter follows. */
const ENDING_ABBREVIATIONS = new Set(['etc', 'inc', 'ltd', 'co', 'corp', 'llc', 'plc', 'bros', 'jr', 'sr', 'al', 'in', 'no', 'ed', 'eds', 'min', 'max']);

/** Words a wrapped line ends with when the sentence goes on. */
const CONTINUES = new Set([
  'the', 'a', 'an', 'of', 'and', 'or', 'nor', 'but', 'in', 'on', 'to', 'for', 'with', 'by', 'from', 'at', 'as', 'into', 'onto', 'than',
  'is', 'are', 'was', 'were', 'be', 'been', 'has', 'have', 'had', 'that', 'which', 'who', 'whose', 'this', 'these', 'those', 'its',
  'their', 'our', 'his', 'her', 'between', 'over', 'under', 'about', 'through', 'per', 'if', 'when', 'where', 'while', 'not', 'can',
  'may', 'will', 'would', 'should', 'could', 'must', 'such', 'both', 'either', 'each', 'all', 'any', 'some', 'no', 'very', 'more',
  'most', 'less', 'also', 'then', 'so', 'de', 'la', 'le', 'der', 'die', 'das', 'und', 'et', 'y', 'el',
]);

/** First halves of compounds commonly written with a hyphen (a hyphen at a line end after these is kept). */
const COMPOUND_FIRST = new Set([
  'self', 'non', 'well', 'co', 'anti', 'multi', 'semi', 'cross', 'long', 'short', 'high', 'low', 'one', 'two', 'three', 'four', 'five',
  'six', 'seven', 'eight', 'nine', 'ten', 'first', 'second', 'third', 'real', 'full', 'half', 'all', 'ill', 'ever', 'post', 'pre', 'quasi',
  'pseudo', 'mid', 'ex', 'free', 'open', 'large', 'small', 'time', 'state', 'user', 'end', 'data', 'machine', 'computer', 'man', 'life',
  'world', 'side', 'wide', 'cost', 'case', 'rule', 'term', 'year', 'day', 'on', 'off', 'up', 'out', 'in', 'so', 'by', 'three', 'x', 'n',
]);

// ---------------------------------------------------------------------------
// Lines

interface Line {
  /** Offset of the line's first character. */
  readonly start: number;
  /** Offset of its line break (or the text's end). */
  readonly end: number;
  /** Its content without the white space at either end: [cs, ce). */
  readonly cs: number;
  readonly ce: number;
}

function linesOf(text: string): Line[] {
  const out: Line[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    let cs = start;
    let ce = end;
    while (cs < ce && isWs(text.charCodeAt(cs))) cs++;
    while (ce > cs && isWs(text.charCodeAt(ce - 1))) ce--;
    out.push({ start, end, cs, ce });
    if (nl === -1) break;
    start = nl + 1;
  }
  return out;
}

/** Length of a list marker at `at` (a bullet, `1.`, `2)`, `(a)`, `#` heading marks) and the space after it, else 0. */
function listMarkerAt(text: string, at: number, end: number): number {
  const c = text[at];
  if (c === undefined || at >= end) return 0;
  let i = at;
  if ('-*•·▪◦‣–—+►▸'.includes(c)) {
    i++;
  } else if (c === '#') {
    while (i < end && text[i] === '#') i++;
  } else if (c === '(') {
    // (1), (12), (a), (B), (iv): a number, one letter or a small roman numeral.
    i++;
    let n = 0;
    while (i < end && n < 4 && (isDigitCode(text.charCodeAt(i)) || isLetterAt(text, i))) { i++; n++; }
    const inner = text.slice(at + 1, i);
    if (n === 0 || text[i] !== ')' || !(/^\d{1,2}$/.test(inner) || inner.length === 1 || /^[ivx]{1,4}$/.test(inner))) return 0;
    i++;
  } else if (isDigitCode(text.charCodeAt(at))) {
    let n = 0;
    while (i < end && n < 3 && isDigitCode(text.charCodeAt(i))) { i++; n++; }
    if (text[i] !== '.' && text[i] !== ')') return 0;
    i++;
  } else if (isLetterAt(text, at) && (text[at + 1] === ')')) {
    i += 2;
  } else {
    return 0;
  }
  // A marker is followed by white space and then content.
  const after = i;
  while (i < end && (text[i] === ' ' || text[i] === '\t')) i++;
  if (i === after || i >= end) return 0;
  return i - at;
}

/** Whether only spaces and tabs stand between `at` and the start of its line (scanning back stops at the first other character). */
function atLineStart(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) {
    const c = text[i];
    if (c === '\n') return true;
    if (c !== ' ' && c !== '\t' && c !== '\r') return false;
  }
  return true;
}

/** The length of the first word of [from, to). */
function firstWordLength(text: string, from: number, to: number): number {
  let i = from;
  while (i < to && !isWs(text.charCodeAt(i))) i++;
  return i - from;
}

/** The last word of [from, to), lower case, without surrounding punctuation. */
function lastWord(text: string, from: number, to: number): string {
  let i = to;
  while (i > from && !isWs(text.charCodeAt(i - 1))) i--;
  let w = text.slice(i, to).toLowerCase();
  let a = 0;
  let b = w.length;
  while (a < b && !isLetterAt(w, a) && !isDigitCode(w.charCodeAt(a))) a++;
  while (b > a && !isLetterAt(w, b - 1) && !isDigitCode(w.charCodeAt(b - 1))) b--;
  w = w.slice(a, b);
  return w;
}

const endsTerminal = (text: string, l: Line): boolean => {
  let i = l.ce - 1;
  while (i >= l.cs && CLOSERS.has(text[i]!)) i--;
  return i >= l.cs && TERMINAL.has(text[i]!);
};

/** The shape of a text: written in lower case, without terminal punctuation. */
export function textShape(text: string): TextShape {
  let upper = 0;
  let lower = 0;
  let terminal = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) lower++;
    else if (c >= 65 && c <= 90) upper++;
    else if (c === 46 || c === 33) {
      // A full stop or exclamation mark ending a word (not a decimal point or a dot inside a name).
      const next = text.charCodeAt(i + 1);
      if (i + 1 >= text.length || isWs(next) || CLOSERS.has(text[i + 1]!)) terminal = true;
    } else if (c > 127) {
      const ch = text[i]!;
      if (TERMINAL.has(ch) && ch !== '…') terminal = true;
      else if (/\p{Lu}/u.test(ch)) upper++;
      else if (/\p{Ll}/u.test(ch)) lower++;
    }
  }
  return { lowerCase: lower > 0 && upper <= lower * 0.01, unpunctuated: !terminal };
}

/**
 * The width a text is hard-wrapped at, or 0 when it is not hard-wrapped
 * (its lines are paragraphs, list items, cells). Hard-wrapped: at least two
 * lines followed by another line of the same paragraph, the longest lines
 * (90th percentile) at most 130 characters, and at least 40% of those
 * lines both long (>= 70% of that width) and ending inside a sentence.
 */
function wrapWidth(text: string, lines: readonly Line[]): number {
  const lengths: number[] = [];
  for (const l of lines) if (l.ce > l.cs) lengths.push(l.ce - l.start);
  if (lengths.length < 2) return 0;
  lengths.sort((a, b) => a - b);
  const width = lengths[Math.min(lengths.length - 1, Math.floor(lengths.length * 0.9))]!;
  if (width > 130 || width < 20) return 0;
  let followed = 0;
  let wrapped = 0;
  for (let i = 0; i + 1 < lines.length; i++) {
    const l = lines[i]!;
    const n = lines[i + 1]!;
    if (l.ce === l.cs || n.ce === n.cs) continue;
    followed++;
    if (l.ce - l.start >= width * 0.7 && !endsTerminal(text, l)) wrapped++;
  }
  return followed >= 1 && wrapped >= Math.max(1, followed * 0.3) ? width : 0;
}

/**
 * Whether the line break after `l` (followed by `n`, both not blank) ends
 * a sentence in a text hard-wrapped at `width`.
 */
function hardBreak(text: string, l: Line, n: Line, width: number, lowerCase: boolean): boolean {
  if (listMarkerAt(text, n.cs, n.ce) > 0) return true;
  // The sentence plainly goes on: the line ends in a comma, a hyphen or a function word, or the next line goes on in lower case.
  const last = text[l.ce - 1]!;
  // (A line of one or two words is a heading, a menu entry or a label whatever it ends with.)
  let spaces = 0;
  for (let i = l.cs; i < l.ce && spaces < 2; i++) if (text[i] === ' ') spaces++;
  if (spaces >= 2) {
    if (last === ',' || last === '-' || last === '–' || last === '(' || last === '/' || last === '&') return false;
    if (CONTINUES.has(lastWord(text, l.cs, l.ce))) return false;
  }
  let next = n.cs;
  while (next < n.ce && OPENERS.has(text[next]!)) next++;
  if (!lowerCase && isLowerAt(text, next)) return false;
  // Text in lower case has no heading to tell from a short line, and its wrapping may be too ragged to measure
  // (old collections wrapped by hand): only punctuation, blank lines and list items end its sentences.
  if (lowerCase) return false;
  if (width === 0) return true;
  // Hard-wrapped: a line that ended well short of the width (a heading, a keyword line, a paragraph's last line), unless it
  // is itself a continuation (a line starting in lower case).
  const length = l.ce - l.start;
  const short = length <= width * 0.6 && length + 1 + firstWordLength(text, n.cs, n.ce) <= width * 0.75;
  return short && !isLowerAt(text, l.cs);
}

// ---------------------------------------------------------------------------
// Full stops

/** The word that ends at `dot` (exclusive): back to white space or an opening bracket or quote. */
function wordBefore(text: string, from: number, dot: number): string {
  let i = dot;
  while (i > from && !isWs(text.charCodeAt(i - 1)) && !OPENERS.has(text[i - 1]!)) i--;
  return text.slice(i, dot);
}

/**
 * Whether the run of terminal punctuation at [at, after) ends a sentence,
 * given where the next sentence would start (`next`: its first character
 * after white space and opening quotes).
 */
function endsSentence(text: string, from: number, at: number, after: number, next: number, lowerCase: boolean): boolean {
  if (next >= text.length) return true;
  const nextLower = isLowerAt(text, next);
  let dots = 0;
  let other = false;
  for (let i = at; i < after; i++) {
    if (text[i] === '.') dots++;
    else if (TERMINAL.has(text[i]!) && text[i] !== '…') other = true;
  }
  // ! ? and an ellipsis end a sentence unless it goes on in lower case (in mixed-case text).
  if (other || dots !== 1 || text[at] !== '.') return !nextLower || lowerCase;
  const word = wordBefore(text, from, at);
  const bare = word.toLowerCase();
  const nextUpper = isUpperAt(text, next);
  const nextDigit = isDigitCode(text.charCodeAt(next));
  // Words that are also abbreviations before a number (p. 5, No. 3, 5 in.).
  if (bare === 'p' || bare === 'no' || bare === 'in' || bare === 'min' || bare === 'max') return !nextDigit && (!nextLower || lowerCase);
  if (ENDING_ABBREVIATIONS.has(bare) && nextUpper) return true;
  if (ABBREVIATIONS.has(bare)) return false;
  // An initial (J. Smith) or several (K.D.C. Vernon).
  if (word.length === 1 && isUpperAt(word, 0)) return false;
  if (word.length >= 3 && word.split('.').every((p) => p.length === 1 && isUpperAt(p, 0))) return false;
  // The number of a numbered list item ("1.  What ...") at a line's start.
  if (/^\d{1,3}$/.test(word) && atLineStart(text, at - word.length)) return false;
  // Lower case after a full stop goes on (approx. three, Ph.D. student), except in text written in lower case.
  if (nextLower && !lowerCase) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Reading

/** Words of a text (lower case), for telling a hyphenated word from a compound. */
function vocabularyOf(text: string): Set<string> {
  const out = new Set<string>();
  // The halves of words broken at a line end are not words of the text.
  const whole = text.toLowerCase().replace(/(?<!\p{L})\p{L}+-[ \t]*\r?\n\s*\p{L}+/gu, ' ');
  for (const m of whole.matchAll(/[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*/gu)) {
    out.add(m[0]);
    if (m[0].includes('-')) for (const p of m[0].split('-')) out.add(`\u0000${p}`);
  }
  return out;
}

/** How `first-` at a line end and `second` on the next line read: joined, or a compound kept with its hyphen. */
function joinHyphenated(first: string, second: string, vocabulary: ReadonlySet<string> | undefined): string {
  const f = first.toLowerCase();
  const s = second.toLowerCase();
  const joined = `${first}${second}`;
  const kept = `${first}-${second}`;
  if (vocabulary !== undefined) {
    if (vocabulary.has(`${f}-${s}`)) return kept;
    if (vocabulary.has(`${f}${s}`)) return joined;
    if (vocabulary.has(f) && vocabulary.has(s)) return kept;
    // The text writes other compounds with this first half (boundary-layer, boundary-value).
    if (vocabulary.has(`\u0000${f}`) && vocabulary.has(s)) return kept;
  }
  if (COMPOUND_FIRST.has(f)) return kept;
  if (/\d/.test(f) || /\d/.test(s)) return kept;
  return joined;
}

/**
 * How a stored sentence reads: white space collapsed to one space, no
 * space before a closing `.,;:!?`, and line-end hyphenation undone (with
 * `vocabularyText`, the whole text it came from, to tell a compound from a
 * word broken at the line's end).
 */
export function readingOf(raw: string, vocabularyText?: string): string {
  return readWith(raw, raw.includes('-') && raw.includes('\n') ? () => vocabularyOf(vocabularyText ?? raw) : undefined);
}

function readWith(raw: string, vocabulary: (() => ReadonlySet<string>) | undefined): string {
  let out = '';
  let i = 0;
  const n = raw.length;
  let vocab: ReadonlySet<string> | undefined;
  while (i < n) {
    const c = raw.charCodeAt(i);
    if (isWs(c)) {
      let j = i;
      while (j < n && isWs(raw.charCodeAt(j))) j++;
      // No space before closing punctuation followed by a space or the end (the typewriter " .").
      const p = raw[j];
      if (p !== undefined && '.,;:!?'.includes(p) && (j + 1 >= n || isWs(raw.charCodeAt(j + 1))) && out.length > 0 && !'.,;:!?'.includes(out[out.length - 1]!)) {
        i = j;
        continue;
      }
      if (out.length > 0 && j < n) out += ' ';
      i = j;
      continue;
    }
    // A hyphen ending a line after a letter, and a letter starting the next.
    if (c === 45 && i > 0 && isLetterAt(raw, i - 1) && vocabulary !== undefined) {
      let j = i + 1;
      while (j < n && (raw[j] === ' ' || raw[j] === '\t' || raw[j] === '\r')) j++;
      if (raw[j] === '\n') {
        j++;
        while (j < n && isWs(raw.charCodeAt(j)) && raw[j] !== '\n') j++;
        if (j < n && isLetterAt(raw, j)) {
          let a = out.length;
          while (a > 0 && isLetterAt(out, a - 1)) a--;
          let b = j;
          while (b < n && isLetterAt(raw, b)) b++;
          const first = out.slice(a);
          const second = raw.slice(j, b);
          vocab ??= vocabulary();
          out = out.slice(0, a) + joinHyphenated(first, second, vocab);
          i = b;
          continue;
        }
      }
    }
    out += raw[i];
    i++;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Sentences

/**
 * The sentences of a text, in order: exact [start, end) spans of `text`
 * (trimmed, a list marker left out) with their reading. Spans with no
 * letter or digit are left out.
 */
export function sentenceSpans(text: string): SentenceSpan[] {
  const lines = linesOf(text);
  const shape = textShape(text);
  const width = wrapWidth(text, lines);
  // Offsets of the line breaks that end a sentence, and the starts of lines that open one with a list marker.
  const hard = new Set<number>();
  for (let i = 0; i + 1 < lines.length; i++) {
    const l = lines[i]!;
    const n = lines[i + 1]!;
    if (l.ce === l.cs || n.ce === n.cs || hardBreak(text, l, n, width, shape.lowerCase)) hard.add(l.end);
  }
  const raw: [number, number][] = [];
  let from = 0;
  const close = (to: number) => {
    if (to > from) raw.push([from, to]);
    from = to;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\n') {
      if (hard.has(i)) close(i + 1);
      continue;
    }
    if (!TERMINAL.has(ch)) continue;
    // Runs of terminal punctuation (?!, ..., ?") and closing quotes and brackets stay with the sentence.
    let j = i + 1;
    while (j < text.length && (TERMINAL.has(text[j]!) || CLOSERS.has(text[j]!))) j++;
    if (j < text.length && !isWs(text.charCodeAt(j))) { i = j - 1; continue; }
    let k = j;
    while (k < text.length && isWs(text.charCodeAt(k))) k++;
    // Skip opening quotes and brackets to see how the next sentence starts.
    let m = k;
    while (m < text.length && OPENERS.has(text[m]!)) m++;
    let after = i + 1;
    while (after < j && TERMINAL.has(text[after]!)) after++;
    if (endsSentence(text, from, i, after, m, shape.lowerCase)) close(j);
    i = j - 1;
  }
  close(text.length);
  const vocabulary = text.includes('-\n') || text.includes('-\r\n') ? (() => { let v: Set<string> | undefined; return () => (v ??= vocabularyOf(text)); })() : undefined;
  const out: SentenceSpan[] = [];
  for (const [a, b] of raw) {
    let s = a;
    let e = b;
    while (s < e && isWs(text.charCodeAt(s))) s++;
    while (e > s && isWs(text.charCodeAt(e - 1))) e--;
    // A list marker at the start of a line is not part of the sentence.
    if (s < e && atLineStart(text, s)) s += listMarkerAt(text, s, e);
    if (s >= e) continue;
    let content = false;
    for (let x = s; x < e && !content; x++) content = isLetterAt(text, x) || isDigitCode(text.charCodeAt(x));
    if (!content) continue;
    const slice = text.slice(s, e);
    out.push({ start: s, end: e, reading: readWith(slice, vocabulary !== undefined && slice.includes('-') ? vocabulary : undefined) });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Statements

/** Labels that make a line metadata rather than a statement (compared in lower case, at the start). */
const LABELS = [
  'keywords', 'key words', 'keyword', 'tags', 'tagged', 'index terms', 'subject', 'subjects', 'categories', 'category', 'cr categories',
  'posted by', 'posted on', 'published', 'updated', 'written by', 'by ', 'author', 'authors', 'source', 'sources', 'copyright', 'photo',
  'image', 'credit', 'credits', 'doi', 'isbn', 'issn', 'received', 'accepted', 'read more', 'see also', 'share', 'filed under',
];
const CAPTION = ['figure', 'fig', 'table', 'chart', 'plate', 'exhibit', 'graph', 'abb', 'tab'];

const FINITE_AUX = new Set([
  'is', 'are', 'was', 'were', 'am', "'s", '’s', "'re", '’re', 'has', 'have', 'had', "'ve", '’ve', "'d", '’d', 'do', 'does', 'did', 'can',
  'could', 'will', 'would', 'shall', 'should', 'may', 'might', 'must', "'ll", '’ll', 'ca', 'wo', 'sha', 'need', 'dare', 'ought', 'cannot',
]);
/** Plural nouns without an -s, after which a plain present form is finite (data indicate). */
const PLURALS = new Set(['data', 'people', 'media', 'criteria', 'phenomena', 'children', 'men', 'women', 'staff', 'police', 'they', 'we', 'you', 'i']);
const SUBJECT_POS = new Set(['NOUN', 'PROPN', 'PRON', 'NUM']);

/** Words of a sentence: tokens with a letter or a digit. */
function wordsOf(s: string): string[] {
  const out: string[] = [];
  for (const t of s.split(/\s+/)) if (/[\p{L}\p{N}]/u.test(t)) out.push(t);
  return out;
}

const finiteCache = new Map<string, boolean>();

/**
 * Whether a sentence has a finite verb: wink-nlp's tags read with the
 * word's form. A finite auxiliary or modal (is, was, has, can, ...); a
 * verb in -s (avoids); a past form (showed, found) or a plain present form
 * (we show, results show) after its subject (a noun, name, pronoun or
 * number, adverbs between). Not: an infinitive (to show), a gerund or a
 * participle with no subject before it (Posted by ..., Results obtained
 * ... counts: a reduced relative looks like a past tense).
 */
export function hasFiniteVerb(sentence: string): boolean {
  const key = sentence.length > 600 ? sentence.slice(0, 600) : sentence;
  const hit = finiteCache.get(key);
  if (hit !== undefined) return hit;
  const { nlp, its } = posNlp();
  const doc = nlp.readDoc(key);
  const tokens = doc.tokens();
  const words = tokens.out(its.normal) as string[];
  const pos = tokens.out(its.pos) as string[];
  let found = false;
  for (let i = 0; i < words.length && !found; i++) {
    const w = words[i]!;
    const p = pos[i]!;
    if (p === 'AUX') {
      if (FINITE_AUX.has(w) && words[i - 1] !== 'to') found = true;
      continue;
    }
    if (p === 'NOUN') {
      // The tagger reads some present forms after a plural subject as nouns (batteries charge five times ...): a word
      // compromise's lexicon knows as a verb, after a plural noun or a pronoun, before no other noun, is one.
      const tag = verbLexicon()[w];
      if (tag === undefined || i === 0) continue;
      let k = i - 1;
      while (k >= 0 && pos[k] === 'ADV') k--;
      const next = pos[i + 1];
      if (k < 0 || next === 'NOUN' || next === 'PROPN' || next === undefined || next === 'PUNCT') continue;
      const prev = words[k]!;
      const plural = pos[k] === 'PRON' || PLURALS.has(prev) || (pos[k] === 'NOUN' && prev.endsWith('s') && !prev.endsWith('ss'));
      if ((tag === 'Infinitive' && plural) || (tag === 'PresentTense' && (pos[k] === 'NOUN' || pos[k] === 'PROPN' || pos[k] === 'PRON'))) found = true;
      continue;
    }
    if (p !== 'VERB') continue;
    if (words[i - 1] === 'to' || w.endsWith('ing')) continue;
    // The nearest word before it that is not an adverb or a particle, and whether a subject comes before it at all.
    let k = i - 1;
    while (k >= 0 && (pos[k] === 'ADV' || pos[k] === 'PART')) k--;
    if (k < 0) continue;
    const before = pos[k]!;
    let subject = false;
    for (let x = k; x >= 0 && !subject; x--) subject = SUBJECT_POS.has(pos[x]!);
    if (!subject || before === 'DET' || before === 'ADP') continue;
    // Lemmas only for the verbs that need one (wink computes them on demand, and they cost).
    const lemma = (tokens.itemAt(i).out(its.lemma as unknown as typeof its.normal) as string).toLowerCase();
    if (w !== lemma && w.endsWith('s') && !w.endsWith('ss')) found = true;
    // A past form: after its subject (a noun, name, pronoun or number), or after a clause break with a subject earlier.
    else if (w !== lemma) found = SUBJECT_POS.has(before) || before === 'PUNCT' || before === 'CCONJ';
    // A plain present form after a plural subject (we show, results show, data indicate).
    else if (SUBJECT_POS.has(before) && (words[k]!.endsWith('s') || PLURALS.has(words[k]!))) found = true;
  }
  if (finiteCache.size > 20_000) finiteCache.clear();
  finiteCache.set(key, found);
  return found;
}

/** Whether every longer word (4+ letters) after the first starts with a capital: a title, heading or menu. */
function titleCase(words: readonly string[]): boolean {
  let long = 0;
  let capital = 0;
  for (const w of words.slice(1)) {
    const letters = w.replace(/[^\p{L}]/gu, '');
    if (letters.length < 4) continue;
    long++;
    if (isUpperAt(letters, 0)) capital++;
  }
  return long >= 3 && capital === long;
}

/**
 * Whether a sentence is one a reader would accept as a statement (see the
 * module comment). `sentence` is its reading (or its stored text: white
 * space is collapsed here); `shape` is its source's (`textShape`).
 */
export function isStatement(sentence: string, shape: Partial<TextShape> = {}): boolean {
  const s = sentence.replace(/\s+/g, ' ').trim();
  if (s.length < 20 || s.length > 1200) return false;
  // Table rows and tab-separated cells.
  if (/\t|\|| {3}/.test(sentence)) return false;
  const words = wordsOf(s);
  if (words.length < 6) return false;
  // Starts as a sentence does.
  let a = 0;
  while (a < s.length && OPENERS.has(s[a]!)) a++;
  if (a >= s.length) return false;
  if (!(isUpperAt(s, a) || isDigitCode(s.charCodeAt(a)) || (shape.lowerCase === true && isLowerAt(s, a)))) return false;
  // Ends as a statement does.
  let b = s.length - 1;
  while (b > 0 && CLOSERS.has(s[b]!)) b--;
  const end = s[b]!;
  if (end === '.' || end === '!' || end === '。' || end === '！') {
    if (s.slice(b - 2, b + 1) === '...') return false;
  } else if (!(shape.unpunctuated === true && (isLetterAt(s, b) || isDigitCode(s.charCodeAt(b))))) {
    return false;
  }
  const lower = s.slice(a).toLowerCase();
  for (const label of LABELS) {
    if (!lower.startsWith(label)) continue;
    const after = lower[label.length];
    if (label.endsWith(' ') || after === ':' || after === undefined || (after === ' ' && (label.startsWith('posted') || label.includes(' ')))) return false;
  }
  for (const cap of CAPTION) {
    if (!lower.startsWith(cap)) continue;
    // "Figure 3." / "Table 2:" / "Fig. 4 -": a label, a number, then punctuation.
    let i = cap.length;
    if (lower[i] === '.') i++;
    while (lower[i] === ' ') i++;
    const digits = i;
    while (i < lower.length && /[0-9a-z.]/.test(lower[i]!) && i - digits < 6) i++;
    if (i > digits && /\d/.test(lower.slice(digits, i)) && /^[\s]*[.:—–-]/.test(lower.slice(i - (lower[i - 1] === '.' ? 1 : 0)))) return false;
  }
  // Mostly digits: dates, scores, prices, table rows.
  let digits = 0;
  let letters = 0;
  for (let i = 0; i < s.length; i++) {
    if (isDigitCode(s.charCodeAt(i))) digits++;
    else if (isLetterAt(s, i)) letters++;
  }
  if (letters === 0 || digits > letters) return false;
  if (!shape.lowerCase && titleCase(words)) return false;
  return hasFiniteVerb(s);
}
