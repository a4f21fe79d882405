/**
 * The checks a model's rewrite of a research report must pass before any of
 * it is used (issue 13, "Optional model"). Pure functions, no I/O. They are
 * conservative: when a reading is ambiguous they reject, because a rejected
 * part only means the deterministic text stays.
 *
 * Normalisation (both the model's text and the evidence, so both sides are
 * read the same way): invisible format characters (zero-width spaces and
 * joiners, bidi controls, soft hyphens: Unicode Cf) are removed, a no-break,
 * narrow or thin space or an apostrophe between digits before a group of
 * exactly three digits becomes a thousands separator, then NFKC (full-width
 * brackets and digits, superscripts, circled digits become ASCII), then
 * decimal digits of any script become 0-9 and U+2212 becomes '-'.
 *
 * Citations (`citationsValid`): a citation marker is `[n]`, `[n, m]`,
 * `[n; m]`, `[n-m]` (also en or em dash) or a mix (`[1, 3-5]`), n a source
 * number (`[3]` names `src_3`) without leading zeros, >= 1; a range goes
 * upwards and spans at most 50 numbers. Every number a marker names must be
 * in the allowed set. Any other bracketed text (`[sic]`, `[src_3]`,
 * `[3a]`), a bracket without its partner, nested brackets, and the CJK
 * lenticular / tortoise-shell / white brackets are rejected.
 *
 * Numbers (`numbersIn`): every run of digits, read as
 * - `1,234,567.89` or `1'234'567.89` (comma / apostrophe thousands, dot decimal),
 * - `1.234.567` or `1.234,5` (dot thousands: only with two or more groups,
 *   or with a decimal comma),
 * - `4.5` (dot decimal), `42` (integer);
 * anything else (`4,5`, `2.1.3`, `1,23,456`) is split at its separators into
 * integers, each checked on its own. Digits inside words count (`CO2`,
 * `COVID-19`, `FY2023`, `Q3`). A leading `-` not preceded by a letter or
 * digit makes the number negative. A following `thousand`, `million`,
 * `billion`, `trillion`, `bn`, `mn`, `mln`, `tn` scales it; a following `%`,
 * `percent`, `per cent` or `pct` makes it a percentage, `percentage
 * point(s)`, `pp`, `p.p.`, `ppt` a percentage-point figure, `‰` per mille;
 * in `40-50%` or `40 to 50%` the first number is a percentage too. English
 * number words count as numbers as well (`forty-two`, `two hundred and
 * five`, `three million`, `twenty percent`), except a lone `one` (a pronoun
 * far more often than a figure); plurals (`millions of`) and fractions or
 * multipliers (`half`, `twice`, `a third`) are not figures and are not
 * checked.
 *
 * A number of the text matches a number of the evidence when both have the
 * same kind (plain / percent / points / per mille) and the same value
 * (exact decimal comparison: `4.50` = `4.5`, `4.5 million` = `4,500,000`),
 * or when the text's number has no scale word and its digits equal the
 * evidence number's digits before its scale (`4.5` matches `4.5 billion`,
 * but `4.5 million` does not match `4.5 billion`). A negative number
 * matches only a negative one; a number written without a sign matches
 * either sign (the check is about figures, not direction words). Units and
 * currencies are not compared (`$139` matches `139 kWh`).
 *
 * Grounding (`numbersGrounded`), per sentence (`splitSentences`): every
 * number of a sentence must match a number of the evidence quoted from one
 * of the sources that same sentence cites. A sentence that states a number
 * and cites nothing fails. Numbers inside well-formed citation markers are
 * not figures, neither in the text nor in the evidence (a quote's own
 * footnote `[12]` does not ground a 12).
 *
 * Sentences (`splitSentences`): a sentence ends at `.`, `!`, `?` or `…`
 * (with any closing quotes or parentheses and any citation markers right
 * after it) followed by white space or the end, at `。`, `！`, `？`, and at
 * every line break. No abbreviation list: `U.S. sales rose 5% [1]` splits
 * after `U.S.`, which can only make the check stricter (a citation can
 * only cover numbers of its own sentence).
 */

export const MAX_RANGE = 50;

// ---------------------------------------------------------------------------
// Normalisation

const FORMAT_CHARS = /\p{Cf}/gu;
const GROUP_SPACE = /(?<=\p{Nd})[\u00a0\u202f\u2009\u2007'\u2019](?=\p{Nd}{3}(?!\p{Nd}))/gu;
const NON_ASCII_DIGIT = /(?![0-9])\p{Nd}/gu;

/** The value 0-9 of a decimal digit of any script (digits come in runs of ten, from zero). */
function digitValue(ch: string): number {
  let cp = ch.codePointAt(0)!;
  let n = 0;
  while (n < 64 && /\p{Nd}/u.test(String.fromCodePoint(cp - 1))) { cp -= 1; n += 1; }
  return n % 10;
}

/** The text as the checks read it (see the module comment). */
export function normalise(text: string): string {
  return text
    .replace(FORMAT_CHARS, '')
    .replace(GROUP_SPACE, "'")
    .normalize('NFKC')
    .replace(NON_ASCII_DIGIT, (d) => String(digitValue(d)))
    .replace(/\u2212/g, '-');
}

/**
 * Why a text is unfit to show, or undefined: control characters (other
 * than line breaks and tabs), invisible format characters (zero-width,
 * bidi overrides), private-use characters, unpaired surrogates.
 */
export function unsafeCharacters(text: string): string | undefined {
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) return 'unpaired surrogate characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(text)) return 'control characters';
  if (/\p{Cf}/u.test(text)) return 'invisible formatting characters';
  if (/\p{Co}/u.test(text)) return 'private-use characters';
  if (/\ufffd/.test(text)) return 'replacement characters';
  return undefined;
}

const show = (s: string, n = 40) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

// ---------------------------------------------------------------------------
// Citations

/** A bracketed group of the normalised text. */
export interface Marker {
  /** As written (normalised), brackets included. */
  readonly raw: string;
  readonly start: number;
  readonly end: number;
  /** The source numbers it names, or null when it is not a well-formed marker. */
  readonly numbers: readonly number[] | null;
  /** Why it is not well formed. */
  readonly problem?: string;
}

const BRACKET_GROUP = /\[([^[\]]*)\]/g;
const MARKER_BODY = /^\s*\d+(?:\s*[-\u2010-\u2015]\s*\d+)?(?:\s*[,;]\s*\d+(?:\s*[-\u2010-\u2015]\s*\d+)?)*\s*$/;
const OTHER_BRACKETS = /[[\]\u3010\u3011\u3014\u3015\u3016\u3017\u3018\u3019\u27e6\u27e7]/;

function parseMarker(raw: string, body: string): { numbers: number[] | null; problem?: string } {
  if (body.length > 200 || !MARKER_BODY.test(body)) {
    return { numbers: null, problem: /\d/.test(body) ? `malformed citation ${show(raw)}` : `brackets that are not a citation: ${show(raw)}` };
  }
  const out: number[] = [];
  for (const item of body.split(/[,;]/)) {
    const parts = item.split(/[-\u2010-\u2015]/).map((x) => x.trim());
    if (parts.some((p) => /^0/.test(p))) return { numbers: null, problem: `malformed citation ${show(raw)}` };
    const a = Number(parts[0]);
    const b = parts.length === 2 ? Number(parts[1]) : a;
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || a < 1 || b < a || b - a >= MAX_RANGE) {
      return { numbers: null, problem: `malformed citation ${show(raw)}` };
    }
    for (let n = a; n <= b; n++) out.push(n);
  }
  return { numbers: out };
}

/** The bracketed groups of a normalised text. */
export function markersIn(normalised: string): Marker[] {
  const out: Marker[] = [];
  for (const m of normalised.matchAll(BRACKET_GROUP)) {
    const p = parseMarker(m[0], m[1]!);
    out.push({ raw: m[0], start: m.index!, end: m.index! + m[0].length, numbers: p.numbers, ...(p.problem !== undefined ? { problem: p.problem } : {}) });
  }
  return out;
}

export interface CitationCheck {
  readonly valid: boolean;
  /** Distinct source numbers the well-formed markers name, ascending. */
  readonly cited: readonly number[];
  /** Cited numbers outside the allowed set, ascending. */
  readonly invented: readonly number[];
  /** e.g. `invented citation [7]`, `malformed citation [3-]`. */
  readonly problems: readonly string[];
}

/**
 * Every citation marker of `text` is well formed and names only numbers in
 * `usedSourceNumbers` (N for `src_N`); no other brackets.
 */
export function citationsValid(text: string, usedSourceNumbers: ReadonlySet<number>): CitationCheck {
  const s = normalise(text);
  const markers = markersIn(s);
  const problems: string[] = [];
  const cited = new Set<number>();
  for (const m of markers) {
    if (m.numbers === null) problems.push(m.problem!);
    else for (const n of m.numbers) cited.add(n);
  }
  let rest = '';
  let at = 0;
  for (const m of markers) { rest += s.slice(at, m.start) + ' '; at = m.end; }
  rest += s.slice(at);
  const stray = OTHER_BRACKETS.exec(rest);
  if (stray !== null) problems.push(`unpaired or nested bracket ${stray[0]}`);
  const sorted = [...cited].sort((a, b) => a - b);
  const invented = sorted.filter((n) => !usedSourceNumbers.has(n));
  for (const n of invented) problems.push(`invented citation [${n}]`);
  return { valid: problems.length === 0, cited: sorted, invented, problems };
}

// ---------------------------------------------------------------------------
// Sentences

export interface SentenceSpan {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

const CLOSERS = `"'\u201d\u2019\u00bb)\u300d\u300f`;
const TRAILING_MARKERS = '(?:[ \\t]*\\[[^[\\]\\n]{0,80}\\])*';
const SENTENCE_END = new RegExp(
  `[.!?\u2026]+[${CLOSERS}]*${TRAILING_MARKERS}(?=\\s|$)|[\u3002\uff01\uff1f]+[${CLOSERS}]*${TRAILING_MARKERS}|\\n`,
  'gu',
);

/** Sentences of a text, trimmed, with their offsets (see the module comment for the rule). */
export function splitSentences(text: string): SentenceSpan[] {
  const out: SentenceSpan[] = [];
  let from = 0;
  const push = (a: number, b: number) => {
    let s = a;
    let e = b;
    while (s < e && /\s/.test(text[s]!)) s++;
    while (e > s && /\s/.test(text[e - 1]!)) e--;
    if (e > s) out.push({ text: text.slice(s, e), start: s, end: e });
  };
  for (const m of text.matchAll(SENTENCE_END)) {
    const end = m.index! + m[0].length;
    push(from, end);
    from = end;
  }
  push(from, text.length);
  return out;
}

// ---------------------------------------------------------------------------
// Numbers

export type NumberKind = 'plain' | 'percent' | 'points' | 'permille';

export interface NumberToken {
  /** As written in the normalised text (with its scale and percent words), for messages. */
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** Canonical decimal of the absolute value with the scale applied (`4500000`, `0.25`). */
  readonly value: string;
  /** Canonical decimal of the digits as written, before any scale. */
  readonly digits: string;
  readonly scaled: boolean;
  readonly negative: boolean;
  readonly kind: NumberKind;
}

/** Canonical decimal string of `int.frac` times 10^shift (no float rounding, any length). */
function canonical(int: string, frac: string, shift: number): string {
  let digits = int + frac;
  const point = int.length + shift;
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const i = digits.slice(0, point).replace(/^0+/, '');
  const f = digits.slice(point).replace(/(?<!0)0+$/, '');
  return (i === '' ? '0' : i) + (f === '' ? '' : `.${f}`);
}

const CHUNK = /\d(?:\d|[.,'](?=\d))*/g;
const SCALE_AFTER = /^[ \t]?-?[ \t]?(thousand|million|billion|trillion|bn|mn|mln|tn)(?![\p{L}\p{N}])/iu;
const KIND_AFTER = /^[ \t]?-?[ \t]?(?:(percentage[ \t-]points?|pp|p\.p\.|ppts?)(?![\p{L}\p{N}])|(%|percent(?![\p{L}\p{N}])|per[ \t]?cent(?![\p{L}\p{N}])|pct(?![\p{L}\p{N}]))|(\u2030))/iu;
const SCALES: Readonly<Record<string, number>> = { thousand: 3, million: 6, mn: 6, mln: 6, billion: 9, bn: 9, trillion: 12, tn: 12 };

interface Piece { int: string; frac: string; start: number; end: number }

/** A run of digits and separators read as one number or, when it fits no pattern, split into integers. */
function readChunk(chunk: string, at: number): Piece[] {
  const whole = (int: string, frac: string): Piece[] => [{ int, frac, start: at, end: at + chunk.length }];
  let m: RegExpExecArray | null;
  if ((m = /^(\d{1,3}(?:,\d{3})+)(?:\.(\d+))?$/.exec(chunk))) return whole(m[1]!.replace(/,/g, ''), m[2] ?? '');
  if ((m = /^(\d{1,3}(?:'\d{3})+)(?:\.(\d+))?$/.exec(chunk))) return whole(m[1]!.replace(/'/g, ''), m[2] ?? '');
  if ((m = /^(\d{1,3}(?:\.\d{3}){2,})(?:,(\d+))?$/.exec(chunk))) return whole(m[1]!.replace(/\./g, ''), m[2] ?? '');
  if ((m = /^(\d{1,3}(?:\.\d{3})+),(\d+)$/.exec(chunk))) return whole(m[1]!.replace(/\./g, ''), m[2]!);
  if ((m = /^(\d+)\.(\d+)$/.exec(chunk))) return whole(m[1]!, m[2]!);
  if (/^\d+$/.test(chunk)) return whole(chunk, '');
  const out: Piece[] = [];
  for (const d of chunk.matchAll(/\d+/g)) out.push({ int: d[0], frac: '', start: at + d.index!, end: at + d.index! + d[0].length });
  return out;
}

const UNITS: Readonly<Record<string, number>> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
  twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90,
};
const WORD_SCALES: Readonly<Record<string, bigint>> = { thousand: 1000n, million: 1_000_000n, billion: 1_000_000_000n, trillion: 1_000_000_000_000n };

function suffixes(s: string, end: number, allowScale: boolean): { shift: number; kind: NumberKind; end: number } {
  let shift = 0;
  let e = end;
  if (allowScale) {
    const sc = SCALE_AFTER.exec(s.slice(e, e + 24));
    if (sc !== null) { shift = SCALES[sc[1]!.toLowerCase()]!; e += sc[0].length; }
  }
  let kind: NumberKind = 'plain';
  const k = KIND_AFTER.exec(s.slice(e, e + 32));
  if (k !== null) { kind = k[1] !== undefined ? 'points' : k[2] !== undefined ? 'percent' : 'permille'; e += k[0].length; }
  return { shift, kind, end: e };
}

/** The numbers of a text, in order (see the module comment for how they are read). */
export function numbersIn(text: string): NumberToken[] {
  const s = normalise(text);
  const tokens: NumberToken[] = [];
  for (const c of s.matchAll(CHUNK)) {
    const pieces = readChunk(c[0], c.index!);
    pieces.forEach((p, i) => {
      const last = i === pieces.length - 1;
      // A minus right before the first digits, itself not after a letter or digit (`COVID-19`, `2020-2023` are not negative).
      const negative = i === 0 && s[p.start - 1] === '-' && !/[\p{L}\p{N}]$/u.test(s.slice(Math.max(0, p.start - 3), p.start - 1));
      const suf = last ? suffixes(s, p.end, true) : { shift: 0, kind: 'plain' as NumberKind, end: p.end };
      tokens.push({
        text: s.slice(negative ? p.start - 1 : p.start, suf.end),
        start: negative ? p.start - 1 : p.start,
        end: suf.end,
        value: canonical(p.int, p.frac, suf.shift),
        digits: canonical(p.int, p.frac, 0),
        scaled: suf.shift !== 0,
        negative,
        kind: suf.kind,
      });
    });
  }

  // English number words, outside the spans already read (digit tokens are in order and do not overlap).
  const digitTokens = tokens.slice();
  const taken = (a: number, b: number): boolean => {
    let lo = 0;
    let hi = digitTokens.length - 1;
    let last = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (digitTokens[mid]!.start < b) { last = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return last >= 0 && digitTokens[last]!.end > a;
  };
  const words = [...s.matchAll(/\p{L}+/gu)];
  let i = 0;
  while (i < words.length) {
    const w = words[i]!;
    const lw = w[0].toLowerCase();
    if (!(lw in UNITS || lw in WORD_SCALES || lw === 'hundred') || taken(w.index!, w.index! + w[0].length)) { i++; continue; }
    // A run of number words joined by spaces or hyphens (and `and` after hundred / thousand ...).
    let j = i;
    let total = 0n;
    let current = 0n;
    let any = false;
    let endAt = w.index! + w[0].length;
    const names: string[] = [];
    while (j < words.length) {
      const x = words[j]!;
      const lx = x[0].toLowerCase();
      if (j > i) {
        const gap = s.slice(words[j - 1]!.index! + words[j - 1]![0].length, x.index!);
        if (!/^(?:[ \t]{1,2}|[ \t]?-[ \t]?)$/.test(gap) || taken(x.index!, x.index! + x[0].length)) break;
      }
      if (lx === 'and' && j > i && names.length > 0 && ['hundred', 'thousand', 'million', 'billion', 'trillion'].includes(names[names.length - 1]!)) {
        const nx = words[j + 1];
        const gap = nx === undefined ? '' : s.slice(x.index! + x[0].length, nx.index!);
        if (nx !== undefined && nx[0].toLowerCase() in UNITS && /^[ \t]$/.test(gap)) { j++; continue; }
        break;
      }
      if (lx in UNITS) current += BigInt(UNITS[lx]!);
      else if (lx === 'hundred') current = (current === 0n ? 1n : current) * 100n;
      else if (lx in WORD_SCALES) { total += (current === 0n ? 1n : current) * WORD_SCALES[lx]!; current = 0n; }
      else break;
      any = true;
      names.push(lx);
      endAt = x.index! + x[0].length;
      j++;
    }
    if (!any) { i++; continue; }
    const suf = suffixes(s, endAt, false);
    const lone = names.length === 1 && names[0] === 'one' && suf.kind === 'plain';
    if (!lone) {
      const v = (total + current).toString();
      tokens.push({ text: s.slice(w.index!, suf.end), start: w.index!, end: suf.end, value: v, digits: v, scaled: false, negative: false, kind: suf.kind });
    }
    i = Math.max(j, i + 1);
  }
  tokens.sort((a, b) => a.start - b.start);

  // `40-50%`, `40 to 50%`: the first number of the range has the kind of the second.
  for (let k = 0; k + 1 < tokens.length; k++) {
    const a = tokens[k]!;
    const b = tokens[k + 1]!;
    if (a.kind === 'plain' && b.kind !== 'plain' && /^\s?(?:[-\u2010-\u2015]|to)\s?$/.test(s.slice(a.end, b.start))) tokens[k] = { ...a, kind: b.kind };
  }
  return tokens;
}

/** Whether a number of the text is matched by a number of the evidence (the rule in the module comment). */
export function sameNumber(t: NumberToken, e: NumberToken): boolean {
  if (t.kind !== e.kind) return false;
  if (t.negative && !e.negative) return false;
  return t.value === e.value || (!t.scaled && t.digits === e.digits);
}

/** A normalised text with its well-formed citation markers replaced by a space (malformed ones stay, and their digits count). */
function withoutMarkers(normalised: string): string {
  let rest = '';
  let at = 0;
  for (const m of markersIn(normalised)) {
    if (m.numbers === null) continue;
    rest += `${normalised.slice(at, m.start)} `;
    at = m.end;
  }
  return rest + normalised.slice(at);
}

export interface GroundingCheck {
  readonly valid: boolean;
  /** e.g. `number 42% not in the cited evidence`. */
  readonly problems: readonly string[];
}

/**
 * Every number of every sentence of `text` appears in the evidence of a
 * source that sentence cites. `evidenceTexts`: the quotes shown to the
 * model, by source number (N for `src_N`).
 */
export function numbersGrounded(text: string, evidenceTexts: ReadonlyMap<number, readonly string[]>): GroundingCheck {
  const cache = new Map<number, NumberToken[]>();
  const numbersOf = (n: number): NumberToken[] => {
    let got = cache.get(n);
    if (got === undefined) {
      // Footnote markers inside a quote (`[12]`) are not figures of the evidence either.
      got = (evidenceTexts.get(n) ?? []).flatMap((q) => numbersIn(withoutMarkers(normalise(q))));
      cache.set(n, got);
    }
    return got;
  };
  const problems: string[] = [];
  const seen = new Set<string>();
  const add = (p: string) => { if (!seen.has(p)) { seen.add(p); problems.push(p); } };
  for (const sentence of splitSentences(normalise(text))) {
    const cited = new Set<number>();
    for (const m of markersIn(sentence.text)) for (const n of m.numbers ?? []) cited.add(n);
    const numbers = numbersIn(withoutMarkers(sentence.text));
    if (numbers.length === 0) continue;
    if (cited.size === 0) {
      add(`number ${show(numbers[0]!.text)} in a sentence without a citation`);
      continue;
    }
    const pool = [...cited].sort((a, b) => a - b).flatMap(numbersOf);
    for (const t of numbers) {
      if (!pool.some((e) => sameNumber(t, e))) add(`number ${show(t.text)} not in the cited evidence`);
    }
  }
  return { valid: problems.length === 0, problems };
}

/** Sentences of `text` that cite nothing (each shortened for a message). */
export function uncitedSentences(text: string): string[] {
  return splitSentences(normalise(text))
    .filter((s) => !markersIn(s.text).some((m) => m.numbers !== null && m.numbers.length > 0))
    .map((s) => show(s.text, 60));
}
