/**
 * Text analysis for the local search index, the same for documents and
 * queries and for every backend: Unicode tokenisation, normalisation, stop
 * words, stemming per language, and language detection.
 *
 * - Tokens: runs of letters, digits and combining marks (`\p{L}\p{N}\p{M}`),
 *   so punctuation, symbols, emoji, zero-width and control characters only
 *   separate words. Han and kana runs (no spaces between words) become
 *   overlapping character bigrams (a run of one character stays a unigram),
 *   the CJK analyser of Lucene and Elasticsearch: robust to how words are
 *   cut, and a query's bigrams follow each other just as the document's do.
 *   Thai, Lao, Khmer and Myanmar runs are cut into words by Intl.Segmenter
 *   (ICU's dictionaries).
 * - Normal form: NFKC (full-width, ligatures, compatibility digits), lower
 *   case, then (after stemming, which knows its alphabet) the Latin, Greek
 *   and Cyrillic combining accents and Arabic vowel marks are dropped, so
 *   `café` finds `cafe`. Terms are cut to 64 code points.
 * - Positions count every token, stop words included, so a phrase matches
 *   with its stop words' gaps and proximity measures real distances.
 * - Analysers are keyed by language: Snowball-family stemmers and stop-word
 *   lists from @orama/stemmers and @orama/stopwords for the languages they
 *   cover; any other language (or an undetected one) gets the key `und`:
 *   normalised words, no stop words, no stemming.
 * - Query words are analysed with EVERY analyser whose language the searched
 *   collections hold (or only the requested language's, when the search
 *   filters on one): a query's language is not known, but a document's is,
 *   and its terms can only have come from its own analyser. So each query
 *   word becomes the set of its forms (English `running` -> `run`, German
 *   `Häuser` -> `haus`); a word that is a stop word in every such language
 *   is dropped. On a one-language index this is exactly that language's
 *   analysis.
 */
import { eld } from 'eld/small';
import { stemmer as arabic } from '@orama/stemmers/arabic';
import { stemmer as armenian } from '@orama/stemmers/armenian';
import { stemmer as bulgarian } from '@orama/stemmers/bulgarian';
import { stemmer as danish } from '@orama/stemmers/danish';
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as english } from '@orama/stemmers/english';
import { stemmer as finnish } from '@orama/stemmers/finnish';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as greek } from '@orama/stemmers/greek';
import { stemmer as hungarian } from '@orama/stemmers/hungarian';
import { stemmer as hindi } from '@orama/stemmers/indian';
import { stemmer as indonesian } from '@orama/stemmers/indonesian';
import { stemmer as irish } from '@orama/stemmers/irish';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as lithuanian } from '@orama/stemmers/lithuanian';
import { stemmer as nepali } from '@orama/stemmers/nepali';
import { stemmer as norwegian } from '@orama/stemmers/norwegian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as romanian } from '@orama/stemmers/romanian';
import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer as serbian } from '@orama/stemmers/serbian';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { stemmer as swedish } from '@orama/stemmers/swedish';
import { stemmer as tamil } from '@orama/stemmers/tamil';
import { stemmer as turkish } from '@orama/stemmers/turkish';
import { stemmer as ukrainian } from '@orama/stemmers/ukrainian';
import { stopwords as arabicStop } from '@orama/stopwords/arabic';
import { stopwords as armenianStop } from '@orama/stopwords/armenian';
import { stopwords as bulgarianStop } from '@orama/stopwords/bulgarian';
import { stopwords as danishStop } from '@orama/stopwords/danish';
import { stopwords as englishStop } from '@orama/stopwords/english';
import { stopwords as dutchStop } from '@orama/stopwords/dutch';
import { stopwords as finnishStop } from '@orama/stopwords/finnish';
import { stopwords as frenchStop } from '@orama/stopwords/french';
import { stopwords as germanStop } from '@orama/stopwords/german';
import { stopwords as greekStop } from '@orama/stopwords/greek';
import { stopwords as hungarianStop } from '@orama/stopwords/hungarian';
import { stopwords as hindiStop } from '@orama/stopwords/indian';
import { stopwords as indonesianStop } from '@orama/stopwords/indonesian';
import { stopwords as irishStop } from '@orama/stopwords/irish';
import { stopwords as italianStop } from '@orama/stopwords/italian';
import { stopwords as lithuanianStop } from '@orama/stopwords/lithuanian';
import { stopwords as nepaliStop } from '@orama/stopwords/nepali';
import { stopwords as norwegianStop } from '@orama/stopwords/norwegian';
import { stopwords as portugueseStop } from '@orama/stopwords/portuguese';
import { stopwords as romanianStop } from '@orama/stopwords/romanian';
import { stopwords as russianStop } from '@orama/stopwords/russian';
import { stopwords as serbianStop } from '@orama/stopwords/serbian';
import { stopwords as spanishStop } from '@orama/stopwords/spanish';
import { stopwords as swedishStop } from '@orama/stopwords/swedish';
import { stopwords as tamilStop } from '@orama/stopwords/tamil';
import { stopwords as turkishStop } from '@orama/stopwords/turkish';
import { stopwords as ukrainianStop } from '@orama/stopwords/ukrainian';

/** The analyser of documents whose language has no stemmer here (or is unknown). */
export const UNDETERMINED = 'und';
/** Longest term kept, in code points (longer words are cut, the same way in documents and queries). */
export const MAX_TERM_LENGTH = 64;

/**
 * English stop words: the Snowball list (180 words) and "a". Lucene's
 * 33-word set measured the same within noise on the SciFact train queries
 * (0.7001 against 0.7017 nDCG@10, see benchmarks/search/README.md).
 */
const ENGLISH_STOP = [...englishStop, 'a'];

// ---------------------------------------------------------------------------
// Normalisation

/** Latin/Greek/Cyrillic combining accents, Arabic harakat and the tatweel. */
const MARKS = /[\u0300-\u036f\u064b-\u065f\u0670\u0640]/g;
/** The same, without the g flag (a global expression's test() moves on from its last match). */
const HAS_MARK = /[\u0300-\u036f\u064b-\u065f\u0670\u0640]/;
const HAS_NON_ASCII = /[^\x00-\x7f]/;

/** Drops accents and Arabic vowel marks (after stemming). */
function fold(s: string): string {
  if (!HAS_NON_ASCII.test(s)) return s;
  const d = s.normalize('NFD');
  return d.length === s.length && !HAS_MARK.test(d) ? s : d.replace(MARKS, '').normalize('NFC');
}

function cut(s: string): string {
  if (s.length <= MAX_TERM_LENGTH) return s;
  return Array.from(s).slice(0, MAX_TERM_LENGTH).join('');
}

interface Language {
  readonly stem: ((word: string) => string) | undefined;
  readonly stop: ReadonlySet<string>;
}

const LANGUAGES: Readonly<Record<string, Language>> = (() => {
  const l = (stem: ((w: string) => string) | undefined, stop: readonly string[]): Language => ({ stem, stop: new Set(stop.map((w) => fold(w.normalize('NFKC').toLowerCase()))) });
  return {
    ar: l(arabic, arabicStop), hy: l(armenian, armenianStop), bg: l(bulgarian, bulgarianStop), da: l(danish, danishStop),
    nl: l(dutch, dutchStop), en: l(english, ENGLISH_STOP), fi: l(finnish, finnishStop), fr: l(french, frenchStop),
    de: l(german, germanStop), el: l(greek, greekStop), hu: l(hungarian, hungarianStop), hi: l(hindi, hindiStop),
    id: l(indonesian, indonesianStop), ga: l(irish, irishStop), it: l(italian, italianStop), lt: l(lithuanian, lithuanianStop),
    ne: l(nepali, nepaliStop), no: l(norwegian, norwegianStop), nb: l(norwegian, norwegianStop), nn: l(norwegian, norwegianStop),
    pt: l(portuguese, portugueseStop), ro: l(romanian, romanianStop), ru: l(russian, russianStop), sr: l(serbian, serbianStop),
    es: l(spanish, spanishStop), sv: l(swedish, swedishStop), ta: l(tamil, tamilStop), tr: l(turkish, turkishStop),
    uk: l(ukrainian, ukrainianStop),
    [UNDETERMINED]: { stem: undefined, stop: new Set<string>() },
  };
})();

/** The analyser key of a language: itself when it has an analyser here, `und` otherwise. */
export function analyserKey(language: string | null | undefined): string {
  if (language === null || language === undefined) return UNDETERMINED;
  const key = language === 'nb' || language === 'nn' ? 'no' : language;
  return Object.hasOwn(LANGUAGES, key) ? key : UNDETERMINED;
}

// ---------------------------------------------------------------------------
// Tokenisation

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const WORD_ONLY = /^[\p{L}\p{N}\p{M}]+$/u;
const CJK_CHAR = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\u30fc\u3005]/u;
const CJK_RUNS = /([\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\u30fc\u3005]+)|([^\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\u30fc\u3005]+)/gu;
const SEGMENTED = /[\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/u;
let segmenter: Intl.Segmenter | undefined;

/**
 * Visits each token of `text` in order: its normalised (NFKC, lower-case)
 * form, its position (0, 1, 2... counting every token), the [start, end)
 * UTF-16 offsets of its source in `text`, and whether it is a CJK unigram or
 * bigram (not stemmed, never a stop word). Return false to stop early.
 */
export type TokenVisitor = (token: string, position: number, start: number, end: number, cjk: boolean) => boolean | void;

export function tokenize(text: string, visit: TokenVisitor, lower = true): void {
  let pos = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 0x80 && ASCII_WORD[c] === 0) {
      i++;
      continue;
    }
    if (c >= 0x80 && !isWordAt(text, i)) {
      i += c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1;
      continue;
    }
    // A word: the longest run of letters, digits and marks from here.
    const start = i;
    let ascii = true;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d < 0x80) {
        if (ASCII_WORD[d] === 0) break;
        i++;
      } else if (isWordAt(text, i)) {
        ascii = false;
        i += d >= 0xd800 && d <= 0xdbff && i + 1 < n ? 2 : 1;
      } else break;
    }
    const raw = text.slice(start, i);
    if (ascii) {
      // ASCII: NFKC changes nothing.
      if (visit(lower ? raw.toLowerCase() : raw, pos++, start, i, false) === false) return;
      continue;
    }
    if (CJK_CHAR.test(raw)) {
      for (const r of raw.matchAll(CJK_RUNS)) {
        const s = start + r.index;
        if (r[1] !== undefined) {
          const chars = Array.from(r[1].normalize('NFKC'));
          const offsets: number[] = [];
          let o = s;
          for (const ch of Array.from(r[1])) { offsets.push(o); o += ch.length; }
          offsets.push(o);
          if (chars.length !== offsets.length - 1) {
            // NFKC changed the number of characters: one token for the run.
            if (visit(chars.join(''), pos++, s, o, true) === false) return;
          } else if (chars.length === 1) {
            if (visit(chars[0]!, pos++, s, o, true) === false) return;
          } else {
            for (let k = 0; k + 1 < chars.length; k++) {
              if (visit(chars[k]! + chars[k + 1]!, pos++, offsets[k]!, offsets[k + 2]!, true) === false) return;
            }
          }
        } else {
          const stopped = words(r[2]!, s, (t, a, b) => visit(t, pos++, a, b, false));
          if (stopped) return;
        }
      }
      continue;
    }
    if (words(raw, start, (t, a, b) => visit(t, pos++, a, b, false))) return;
  }
}

/** ASCII letters and digits: 1. */
const ASCII_WORD = (() => {
  const t = new Uint8Array(128);
  for (let c = 0; c < 128; c++) t[c] = /[A-Za-z0-9]/.test(String.fromCharCode(c)) ? 1 : 0;
  return t;
})();
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/uy;

/** Whether the code point at `i` (non-ASCII) is a letter, digit or mark; a lone surrogate is not. */
function isWordAt(text: string, i: number): boolean {
  WORD_CHAR.lastIndex = i;
  return WORD_CHAR.test(text);
}

/** Non-CJK run beyond Latin: NFKC (which may split it), dictionary word breaks for South-East Asian scripts. Returns true when stopped. */
function words(raw: string, start: number, emit: (token: string, start: number, end: number) => boolean | void): boolean {
  if (SEGMENTED.test(raw)) {
    segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
    for (const s of segmenter.segment(raw)) {
      if (!s.isWordLike) continue;
      const t = s.segment.normalize('NFKC').toLowerCase();
      if (WORD_ONLY.test(t) && emit(t, start + s.index, start + s.index + s.segment.length) === false) return true;
    }
    return false;
  }
  const n = raw.normalize('NFKC').toLowerCase();
  if (WORD_ONLY.test(n)) return emit(n, start, start + raw.length) === false;
  // NFKC made separators (e.g. a fraction or a squared unit): each part is a token spanning the source.
  for (const part of n.match(WORD) ?? []) if (emit(part, start, start + raw.length) === false) return true;
  return false;
}

// ---------------------------------------------------------------------------
// Terms

const CACHE_LIMIT = 200_000;
const caches = new Map<string, Map<string, string | null>>();

/** The indexed term of a normalised token under an analyser, or null for a stop word. */
export function termOf(token: string, key: string, cjk = false): string | null {
  if (cjk) return token;
  return termIn(cacheOf(key), token, key);
}

function cacheOf(key: string): Map<string, string | null> {
  let cache = caches.get(key);
  if (cache === undefined) caches.set(key, (cache = new Map()));
  return cache;
}

function termIn(cache: Map<string, string | null>, spelling: string, key: string): string | null {
  const hit = cache.get(spelling);
  if (hit !== undefined) return hit;
  const token = spelling.toLowerCase();
  const lang = LANGUAGES[key] ?? LANGUAGES[UNDETERMINED]!;
  let term: string | null;
  if (lang.stop.has(token) || lang.stop.has(fold(token))) term = null;
  else {
    let s = token;
    if (lang.stem !== undefined) {
      try {
        s = lang.stem(token) || token;
      } catch {
        s = token;
      }
    }
    term = cut(fold(s));
    if (term === '') term = null;
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(spelling, term);
  return term;
}

/** A document field's analysis: positions of each term, and the field's length in indexed tokens. */
export interface FieldAnalysis {
  readonly terms: Map<string, number[]>;
  readonly length: number;
}

export function analyseField(text: string, key: string): FieldAnalysis {
  const terms = new Map<string, number[]>();
  let length = 0;
  const cache = cacheOf(key);
  // ASCII words come as written (not lower-cased): the cache maps each spelling, so most words cost one look-up.
  tokenize(text, (token, pos, _s, _e, cjk) => {
    const term = cjk ? token : termIn(cache, token, key);
    if (term === null) return;
    length++;
    const list = terms.get(term);
    if (list === undefined) terms.set(term, [pos]);
    else list.push(pos);
  }, false);
  return { terms, length };
}

/** One query token: its position in its item, and its forms (one per analyser, distinct); empty when a stop word everywhere. */
export interface QueryToken {
  readonly position: number;
  readonly forms: readonly string[];
  /** A stop word under at least one of the analysers (documents in that language never indexed it). */
  readonly stopSomewhere: boolean;
}

/** Analyses a query word or phrase under each of `keys`. */
export function analyseQueryText(text: string, keys: readonly string[]): QueryToken[] {
  const out: QueryToken[] = [];
  tokenize(text, (token, position, _s, _e, cjk) => {
    const forms: string[] = [];
    let stopSomewhere = false;
    for (const k of keys) {
      const t = termOf(token, k, cjk);
      if (t === null) stopSomewhere = true;
      else if (!forms.includes(t)) forms.push(t);
    }
    out.push({ position, forms, stopSomewhere });
  });
  return out;
}

// ---------------------------------------------------------------------------
// Language detection

/** Stop word -> the languages listing it (English's full Snowball list here), for the quick language guess. */
let stopIndex: Map<string, string[]> | undefined;

function stopWordIndex(): Map<string, string[]> {
  if (stopIndex !== undefined) return stopIndex;
  stopIndex = new Map();
  for (const [k, l] of Object.entries(LANGUAGES)) {
    if (k === UNDETERMINED || k === 'nb' || k === 'nn') continue;
    const words = k === 'en' ? new Set([...englishStop, 'a']) : l.stop;
    for (const w of words) {
      const list = stopIndex.get(w);
      if (list === undefined) stopIndex.set(w, [k]);
      else list.push(k);
    }
  }
  return stopIndex;
}

/**
 * A quick guess from stop words: when one language's stop words are at least
 * 6 of the sample's words and at least twice any other's, that language.
 * Most documents are told this way in a few microseconds; the rest go to
 * the n-gram detector.
 */
function guessByStopWords(sample: string): string | null {
  const counts = new Map<string, number>();
  const index = stopWordIndex();
  tokenize(sample, (token) => {
    const langs = index.get(token);
    if (langs !== undefined) for (const k of langs) counts.set(k, (counts.get(k) ?? 0) + 1);
  });
  let best: string | null = null;
  let first = 0;
  let second = 0;
  for (const [k, n] of counts) {
    if (n > first) {
      second = first;
      first = n;
      best = k;
    } else if (n > second) second = n;
  }
  return first >= 6 && first >= 2 * second ? best : null;
}

/**
 * ISO 639-1 code of the text's language, or null when it cannot be told
 * reliably: the stop-word guess above, else Nito-ELD (n-gram statistics over
 * 60 languages, accurate and about 0.3 ms a call; it reads the first 350
 * bytes).
 */
export function detectLanguage(title: string, text: string): string | null {
  const sample = `${title}\n${text.slice(0, 600)}`;
  if (!/[\p{L}]/u.test(sample)) return null;
  const quick = guessByStopWords(sample.slice(0, 400));
  if (quick !== null) return quick;
  try {
    const r = eld.detect(sample);
    return r.language !== '' && r.isReliable() ? r.language : null;
  } catch {
    return null;
  }
}
