/**
 * Natural text as agents and research send it as queries: sentences of the
 * SciFact abstracts (../shared/data/ir/scifact/corpus.jsonl, split at
 * terminal punctuation followed by a space), chosen by a seeded generator,
 * and the same sentences mangled the ways copied text is (an unclosed
 * quote, a dash or an operator left dangling, doubled ORs, stray brackets).
 * Every one has letters and is at most MAX_QUERY_LENGTH characters, so none
 * may be refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_QUERY_LENGTH } from '../../core/search.js';
import { requireSharedData } from './shared-data.js';

/** mulberry32: small, seeded, the same sequence on every machine. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Sentences of a text: cut after . ? ! followed by a space and a capital letter or digit (a simple scan, no regex). */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length - 2; i++) {
    const c = text[i];
    if ((c === '.' || c === '?' || c === '!') && text[i + 1] === ' ') {
      const next = text[i + 2]!;
      if (next !== next.toLowerCase() || (next >= '0' && next <= '9')) {
        out.push(text.slice(start, i + 1).trim());
        start = i + 2;
      }
    }
  }
  out.push(text.slice(start).trim());
  return out.filter((s) => s.length > 0);
}

/** At most MAX_QUERY_LENGTH characters, cut at a space. */
function bounded(s: string): string {
  if (s.length <= MAX_QUERY_LENGTH) return s;
  const cut = s.lastIndexOf(' ', MAX_QUERY_LENGTH);
  return s.slice(0, cut > 0 ? cut : MAX_QUERY_LENGTH);
}

export interface Abstract { readonly id: string; readonly title: string; readonly text: string }

let corpus: Abstract[] | undefined;
/** The SciFact abstracts, in corpus order. */
export function scifactAbstracts(): readonly Abstract[] {
  if (corpus !== undefined) return corpus;
  const file = join(requireSharedData(), 'ir', 'scifact', 'corpus.jsonl');
  corpus = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => {
    const d = JSON.parse(l) as { _id: string; title?: string; text?: string };
    return { id: d._id, title: d.title ?? '', text: d.text ?? '' };
  });
  return corpus;
}

/** An abstract's sentences with a letter in them (its title first), each bounded to the query length. */
export function sentencesOfAbstract(d: Abstract): string[] {
  return [d.title, ...sentencesOf(d.text)].filter((s) => /\p{L}/u.test(s)).map(bounded);
}

let corpusSentences: string[] | undefined;
/** Every sentence with a letter in it, of every SciFact abstract, in corpus order. */
export function scifactSentences(): string[] {
  corpusSentences ??= scifactAbstracts().flatMap(sentencesOfAbstract);
  return corpusSentences;
}

/** `n` sentences chosen with the seed. */
export function sampleSentences(n: number, seed: number): string[] {
  const all = scifactSentences();
  const rnd = seeded(seed);
  return Array.from({ length: n }, () => all[Math.floor(rnd() * all.length)]!);
}

/**
 * Ways copied text breaks query syntax. Each takes a sentence and the
 * generator and returns the mangled query; each leaves some of the
 * sentence's words in it. Brackets and dashes between words are not
 * syntax at all (they are read silently).
 */
export const MANGLES: readonly {
  readonly name: string;
  /** Whether the query must then be read differently from its syntax (when the sentence itself holds no quote). */
  readonly reread: boolean;
  readonly apply: (s: string, rnd: () => number) => string;
}[] = [
  { name: 'an unclosed quote inside', reread: true, apply: (s, rnd) => insertAt(s, rnd, '"') },
  { name: 'an unclosed curly quote at the start', reread: true, apply: (s) => `\u201c${s}` },
  { name: 'a stray closing quote at the end', reread: true, apply: (s) => `${s} \u201d` },
  { name: 'a lone dash at the start', reread: true, apply: (s) => `- ${s}` },
  { name: 'a lone dash at the end', reread: true, apply: (s) => `${s} -` },
  { name: 'a dash before punctuation', reread: true, apply: (s) => `${s} -...` },
  { name: 'a trailing OR', reread: true, apply: (s) => `${s} OR` },
  { name: 'a leading OR', reread: true, apply: (s) => `OR ${s}` },
  { name: 'two ORs', reread: true, apply: (s, rnd) => insertAt(s, rnd, 'OR OR') },
  { name: 'site: with nothing after it', reread: true, apply: (s, rnd) => insertAt(s, rnd, 'site:') },
  { name: 'intitle: with nothing after it', reread: true, apply: (s) => `${s} intitle:` },
  { name: 'site: that is not a domain', reread: true, apply: (s) => `site:localhost ${s}` },
  { name: 'site: with a quoted phrase', reread: true, apply: (s) => `site:"${s}"` },
  { name: 'only exclusions', reread: true, apply: (s) => s.split(' ').slice(0, 6).map((w) => `-${w}`).join(' ') },
  { name: 'empty quotes', reread: true, apply: (s, rnd) => insertAt(s, rnd, '""') },
  { name: 'unbalanced brackets', reread: false, apply: (s) => `(${s} [ {` },
  { name: 'a pipe at the end', reread: true, apply: (s) => `${s} |` },
  { name: 'hyphens and dashes everywhere', reread: false, apply: (s) => s.split(' ').join(' - ') },
];

function insertAt(s: string, rnd: () => number, what: string): string {
  const words = s.split(' ');
  const at = Math.floor(rnd() * (words.length + 1));
  return [...words.slice(0, at), what, ...words.slice(at)].join(' ');
}

/** For each mangle, `perMangle` sentences mangled that way. */
export interface Mangled {
  readonly mangle: string;
  readonly query: string;
  /** Whether it must be read differently from its syntax (a QUERY_REINTERPRETED warning). */
  readonly reread: boolean;
}

/** Quotes the parser pairs (core/search.ts). */
const QUOTE_CHARS = ['"', '\u201c', '\u201d', '\u201e', '\u201f', '\u00ab', '\u00bb'];

/** For each mangle, `perMangle` sentences mangled that way (those the mangle takes past the length bound left out). */
export function mangledSentences(perMangle: number, seed: number): Mangled[] {
  const rnd = seeded(seed);
  const sentences = sampleSentences(perMangle * MANGLES.length, seed + 1);
  const out: Mangled[] = [];
  MANGLES.forEach((m, k) => {
    for (let i = 0; i < perMangle; i++) {
      const sentence = sentences[k * perMangle + i]!;
      const q = m.apply(sentence, rnd);
      if (q.length > MAX_QUERY_LENGTH) continue;
      out.push({ mangle: m.name, query: q, reread: m.reread && !QUOTE_CHARS.some((c) => sentence.includes(c)) });
    }
  });
  return out;
}
