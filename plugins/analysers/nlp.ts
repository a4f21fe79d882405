/**
 * What the research analysers share: the NLP libraries, loaded lazily (the
 * wink-nlp English model is a few MB of weights; nothing is loaded until an
 * analyser first needs it, and then once per process), and small helpers
 * over a corpus (sentences ranked by relevance, boilerplate, labels).
 *
 * - wink-nlp with wink-eng-lite-web-model: one shared instance with the
 *   `negation`, `sentiment` and `pos` pipes (no sentence splitting: every
 *   document it reads is one sentence of the corpus), from
 *   plugins/sdk/sentences.ts, which also finds the sentences and tells
 *   statements from keyword lines, bylines and titles.
 * - compromise: people, organisations and places.
 * - chrono-node: dates written in the text.
 *
 * Versions are read from the installed packages, for the methodology.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Corpus, ResearchSource, Sentence } from '../../core/research.js';
import { isStatement, readingOf, textShape, type TextShape } from '../sdk/sentences.js';

const require = createRequire(import.meta.url);

export type Compromise = typeof import('compromise').default;
export type Chrono = typeof import('chrono-node');

export { winkNlp, type Wink } from '../sdk/sentences.js';

let compromise: Compromise | undefined;
/** compromise (its CommonJS build, loaded on first use). */
export function compromiseNlp(): Compromise {
  compromise ??= require('compromise') as Compromise;
  return compromise;
}

let chrono: Chrono | undefined;
/** chrono-node (loaded on first use). */
export function chronoNode(): Chrono {
  chrono ??= require('chrono-node') as Chrono;
  return chrono;
}

/** The installed version of a package ('unknown' when it cannot be read). */
function versionOf(pkg: string): string {
  try {
    let dir = dirname(require.resolve(pkg));
    for (let i = 0; i < 6; i++) {
      try {
        const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
        if (json.name === pkg && typeof json.version === 'string') return json.version;
      } catch { /* not here */ }
      dir = dirname(dir);
    }
  } catch { /* not installed */ }
  return 'unknown';
}

let versions: Readonly<Record<string, string>> | undefined;
/** Versions of the NLP packages: wink-nlp, wink-eng-lite-web-model, compromise, chrono-node. */
export function nlpVersions(): Readonly<Record<string, string>> {
  versions ??= Object.fromEntries(['wink-nlp', 'wink-eng-lite-web-model', 'compromise', 'chrono-node'].map((p) => [p, versionOf(p)]));
  return versions;
}

/** Relevance of a sentence to the question (0 when the read stage gave none, or not a finite number). */
export function relevanceOf(corpus: Corpus, s: Sentence): number {
  const r = corpus.sentenceRelevance.get(`${s.sourceId}:${s.index}`);
  return r !== undefined && Number.isFinite(r) ? r : 0;
}

/** Order of the corpus's sources (position in corpus.sources), for deterministic ties. */
export function sourceOrder(corpus: Corpus): Map<string, number> {
  return new Map(corpus.sources.map((s, i) => [s.id, i]));
}

/** Text order: source order, then position in the source. */
export function byPosition(order: ReadonlyMap<string, number>) {
  return (a: Sentence, b: Sentence): number => (order.get(a.sourceId) ?? 0) - (order.get(b.sourceId) ?? 0) || a.start - b.start;
}

export interface Ranked { readonly s: Sentence; readonly r: number }

const rankedCache = new WeakMap<Corpus, readonly Ranked[]>();

/** Every sentence of the corpus's sources, most relevant first (ties in source and text order); computed once per corpus. */
export function allRanked(corpus: Corpus): readonly Ranked[] {
  let all = rankedCache.get(corpus);
  if (all === undefined) {
    const items: { s: Sentence; r: number; o: number }[] = [];
    corpus.sources.forEach((src, o) => {
      for (const s of corpus.sentences.get(src.id) ?? []) items.push({ s, r: relevanceOf(corpus, s), o });
    });
    items.sort((a, b) => b.r - a.r || a.o - b.o || a.s.start - b.s.start);
    all = items.map(({ s, r }) => ({ s, r }));
    rankedCache.set(corpus, all);
  }
  return all;
}

/**
 * The corpus's sentences that pass `keep`, most relevant first (ties in
 * source and text order), at most `cap`; `keep` is asked in that order
 * until `cap` pass. Sentences of sources not in corpus.sources are ignored.
 */
export function rankedSentences(corpus: Corpus, cap: number, keep?: (s: Sentence, r: number) => boolean): Ranked[] {
  const all = allRanked(corpus);
  if (keep === undefined) return all.slice(0, cap);
  const out: Ranked[] = [];
  for (const x of all) {
    if (out.length >= cap) break;
    if (keep(x.s, x.r)) out.push(x);
  }
  return out;
}

const BOILERPLATE_WORDS = /\b(cookies?|subscribe|subscription|newsletter|sign up|sign in|log in|login|all rights reserved|copyright|privacy policy|terms of (use|service)|click here|javascript|advertisement|read more|share this)\b|©/i;

/**
 * Whether a sentence looks like page furniture rather than content: cookie,
 * subscription, sign-in and copyright notices; text in capitals (8 or more
 * capitals and no lower-case letter); more than half digits among letters
 * and digits; no letter or digit at all.
 */
export function isBoilerplate(text: string): boolean {
  if (BOILERPLATE_WORDS.test(text)) return true;
  let upper = 0, lower = 0, other = 0, digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) lower++;
    else if (c >= 65 && c <= 90) upper++;
    else if (c >= 48 && c <= 57) digits++;
    else if (c > 127) {
      const ch = text[i]!;
      if (/\p{Lu}/u.test(ch)) upper++;
      else if (/\p{Ll}/u.test(ch)) lower++;
      else if (/[\p{L}\p{N}]/u.test(ch)) other++;
    }
  }
  if (upper >= 8 && lower === 0) return true;
  const alnum = upper + lower + other + digits;
  return alnum === 0 || digits / alnum > 0.5;
}

const boilerplateCache = new WeakMap<Sentence, boolean>();
/** isBoilerplate of a corpus sentence, computed once per sentence object. */
export function isBoilerplateSentence(s: Sentence): boolean {
  let v = boilerplateCache.get(s);
  if (v === undefined) {
    v = isBoilerplate(s.text);
    boilerplateCache.set(s, v);
  }
  return v;
}

export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `[3]` for `src_3`: the citation marker of a source (the report numbers sources by their id); `[id]` for other ids. */
export function markerOf(sourceId: string): string {
  const m = /^src_(\d+)$/.exec(sourceId);
  return `[${m === null ? sourceId : m[1]}]`;
}

/** A calendar date as `YYYY-MM-DD` (from components, never through a time zone). */
export function isoDay(year: number, month: number, day: number): string {
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** The UTC calendar day of an epoch-ms instant. */
export function isoDayOf(ms: number): string {
  const d = new Date(ms);
  return isoDay(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let inter = 0;
  for (const t of small) if (large.has(t)) inter++;
  return inter / (a.size + b.size - inter);
}

/** How a corpus sentence reads (its `reading`, else its text). */
export const readingOfSentence = (s: Sentence): string => s.reading ?? s.text;

const shapeCache = new WeakMap<ResearchSource, TextShape>();
const statementCache = new WeakMap<Sentence, boolean>();

/**
 * Whether a corpus sentence is a statement a reader would accept
 * (`isStatement` under its source's shape: lower-case sources may start
 * sentences in lower case, sources with no terminal punctuation need
 * none); computed once per sentence object.
 */
export function isStatementSentence(corpus: Corpus, s: Sentence): boolean {
  let v = statementCache.get(s);
  if (v === undefined) {
    const source = corpus.sources.find((x) => x.id === s.sourceId);
    let shape: TextShape = { lowerCase: false, unpunctuated: false };
    if (source !== undefined) {
      const known = shapeCache.get(source);
      if (known === undefined) { shape = textShape(source.text); shapeCache.set(source, shape); } else shape = known;
    }
    v = isStatement(s.reading ?? readingOf(s.text), shape);
    statementCache.set(s, v);
  }
  return v;
}
