/**
 * Sub-query reformulation (issue 28): the question's own key phrases and
 * entities before searching, and, after a first round, related terms from
 * the sources' own vocabulary (pseudo-relevance feedback). Every sub-query
 * made here is plain words: no quotes, no leading minus, no operators.
 *
 * Key phrases: the question cut at punctuation and at words that carry no
 * subject (stop words, question words, words of asking such as "interested"
 * or "articles", and, when the local index's tokenizer is given, any word
 * its stop list for the language drops), the generic heads and modifiers
 * at either end of a phrase removed ("main approaches to", "the effect
 * of"), at most MAX_PHRASE_WORDS words each, in the question's order. So
 * "What are the main approaches to garbage collection and storage
 * reclamation in list processing systems?" gives "garbage collection",
 * "storage reclamation", "list processing systems".
 *
 * Entities: runs of capitalised words after the first word of a sentence,
 * acronyms (LISP, BRCA1) and quoted phrases.
 *
 * Feedback terms: in the top sources of the first round, the words of
 * sentences that hold the question's terms, weighted by how many question
 * terms the sentence holds, kept when they appear in at least two of the
 * top sources (one source alone is not the sources' vocabulary), ranked by
 * that weight times how rare they are among the other candidates (a word
 * every candidate has says nothing about this question). Compared as the
 * index's terms (stemmed), written as the surface form met most often.
 */
import { createRequire } from 'node:module';
import type { IndexTokenizer } from '../../../core/research.js';

const require = createRequire(import.meta.url);
type Compromise = typeof import('compromise').default;
let compromise: Compromise | undefined;
/** compromise (loaded on first use; the analysers load the same module). */
function compromiseNlp(): Compromise {
  compromise ??= require('compromise') as Compromise;
  return compromise;
}

/** Words of most questions that name no subject (English; other languages lean on the index's stop lists). */
const STOP = new Set(`
a about above after again against all also am an and any are aren't as at be because been before being below between both but by can
cannot could couldn't did didn't do does doesn't doing don't down during each either else ever every few for from further had hadn't has
hasn't have haven't having he her here hers herself him himself his how however i if in into is isn't it it's its itself just let's me
might more most much must mustn't my myself neither no nor not of off on once one only or other ought our ours ourselves out over own
per same shall she should shouldn't so some such than that that's the their theirs them themselves then there there's these they this
those through thus to too under until up upon us very via was wasn't we were weren't what what's when where which while who whom whose
why will with within without won't would wouldn't yet you your yours yourself yourselves whether etc e.g i.e vs versus
`.trim().split(/\s+/));

/** Words of asking for something, not of what is asked for. */
const ASKING = new Set(`
tell explain describe compare give want wanted wants need needed needs looking interested interest interests
information info articles article papers paper documents document literature publications publication references material
materials please wish seek seeking searching concerning regarding dealing related relating pertaining
discuss discussed discussing anything something someone somebody everything
`.trim().split(/\s+/));

/** Heads and modifiers that make a phrase general; removed at a phrase's ends (and a phrase of nothing else is dropped). */
const GENERIC = new Set(`
main major various different new recent general specific particular possible certain important basic key latest current currently
approach approaches method methods technique techniques aspect aspects problem problems issue issues question questions role roles effect
effects impact impacts use uses usage work works research study studies overview state evidence factor factors development developments
available existing common typical practical actual present presently today nowadays way ways kind kinds sort sorts type types
`.trim().split(/\s+/));

/** Words that report rather than say (reporting verbs and nouns of papers and articles): never feedback terms. */
const REPORTING = new Set(`
paper papers article articles study studies result results method methods approach present presents presented show shows shown showed
find finds found given obtained obtain using used use based also however therefore thus well may might can could would
describe describes described discuss discusses discussed report reports reported data case cases number numbers new one two three first second
investigation investigated investigate analysis analyses analysed analyzed consider considered considers problem problems value values
general various different including include includes example examples term terms order part parts work works recent further several
`.trim().split(/\s+/));

/** Reporting verbs the tagger may take for nouns ("biomaterials show ..."): they end a phrase. */
const REPORTING_VERBS = new Set('show shows shown showed based using used given obtained found presented described suggest suggests suggested'.split(' '));

export const MAX_PHRASE_WORDS = 4;

/** A word test: true when the word carries no subject. */
export type StopTest = (lowerWord: string) => boolean;

/** The stop test of a question: the lists above, and the index tokenizer's stop words for `language` when given. */
export function stopTest(tokenizer: IndexTokenizer | undefined, language: string | null): StopTest {
  const cache = new Map<string, boolean>();
  return (w) => {
    if (STOP.has(w) || ASKING.has(w)) return true;
    if (tokenizer === undefined) return false;
    let v = cache.get(w);
    if (v === undefined) {
      v = tokenizer.terms(w, language).length === 0;
      cache.set(w, v);
    }
    return v;
  };
}

interface Token { readonly text: string; readonly word: boolean; readonly sentenceStart: boolean; readonly quoted: boolean }

/** Words and punctuation of a text, each word marked when it starts a sentence or sits inside quotes. */
function tokens(text: string): Token[] {
  const out: Token[] = [];
  let sentenceStart = true;
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/[\p{L}\p{N}]/u.test(c)) {
      let j = i + 1;
      while (j < text.length && /[\p{L}\p{N}\p{M}'’.+-]/u.test(text[j]!)) j++;
      let w = text.slice(i, j);
      // Punctuation that closes the word is not part of it (but "U.S." and "e.g." keep their dots).
      let trail = '';
      while (/[.'’+-]$/.test(w) && !/^(?:\p{L}\.){2,}$/u.test(w)) { trail = w.slice(-1) + trail; w = w.slice(0, -1); }
      out.push({ text: w, word: true, sentenceStart, quoted });
      sentenceStart = false;
      if (trail.includes('.')) { out.push({ text: '.', word: false, sentenceStart: false, quoted }); sentenceStart = true; }
      i = j;
      continue;
    }
    if (!/\s/u.test(c)) {
      if (c === '"' || c === '“' || c === '”' || c === '«' || c === '»') quoted = c === '"' ? !quoted : c === '“' || c === '«';
      out.push({ text: c, word: false, sentenceStart: false, quoted });
      if (c === '.' || c === '?' || c === '!' || c === ';' || c === ':') sentenceStart = true;
    }
    i++;
  }
  return out;
}

const isCapitalised = (w: string) => /^\p{Lu}/u.test(w);
/** Two or more capitals and nothing but capitals, digits, '&' and '-' (LISP, BRCA1, R&D). */
function isAcronym(w: string): boolean {
  let capitals = 0;
  for (const c of w) {
    if (/\p{Lu}/u.test(c)) capitals++;
    else if (!/[\p{N}&-]/u.test(c)) return false;
  }
  return capitals >= 2 || (capitals === 1 && /\p{N}/u.test(w) && /^\p{Lu}/u.test(w));
}

export interface QuestionTerms {
  /** Key phrases, lower case, in the question's order, without repeats. */
  readonly phrases: readonly string[];
  /** Names in the question (capitalised runs after a sentence's first word, acronyms, quoted phrases), as written. */
  readonly entities: readonly string[];
}

const VERB_TAGS = new Set(['Infinitive', 'PresentTense', 'PastTense', 'Participle', 'Verb', 'Modal', 'Auxiliary', 'Copula', 'PhrasalVerb']);
/**
 * A verb compromise's lexicon knows (the word, or its stem less -s, -es,
 * -d, -ed, -ied): a word it only guesses to be a verb from context or
 * suffix ("perovskite") is not cut.
 */
function isKnownVerb(word: string): boolean {
  const lexicon = (compromiseNlp() as unknown as { model(): { one: { lexicon: Record<string, string | undefined> } } }).model().one.lexicon;
  const known = (w: string) => VERB_TAGS.has(lexicon[w] ?? '');
  if (known(word)) return true;
  const stems = [word.replace(/ied$/, 'y'), word.replace(/ies$/, 'y'), word.replace(/e?d$/, ''), word.replace(/d$/, ''), word.replace(/e?s$/, ''), word.replace(/s$/, '')];
  return stems.some((w) => w !== word && w.length > 2 && lexicon[w] === 'Infinitive');
}

/**
 * Words of an English question that end a noun phrase, by compromise's
 * tagger, lower case: verbs other than gerunds ("list processing systems"
 * keeps "processing") that its lexicon knows as verbs, adverbs, pronouns.
 */
function englishCuts(question: string): Set<string> {
  const cuts = new Set<string>();
  try {
    for (const sentence of compromiseNlp()(question.replace(/[\r\n]+/g, ' ')).json() as { terms: { normal?: string; text?: string; tags?: string[] }[] }[]) {
      for (const t of sentence.terms) {
        const tags = t.tags ?? [];
        const verb = tags.includes('Verb') && !tags.includes('Gerund') && !tags.includes('Noun') && !tags.includes('Adjective');
        if (!verb && !tags.includes('Adverb') && !tags.includes('Pronoun')) continue;
        for (const w of (t.text ?? t.normal ?? '').toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? []) {
          if (!verb || isKnownVerb(w)) cuts.add(w);
        }
      }
    }
  } catch {
    // Tagging is an aid: without it, stop words alone cut the phrases.
  }
  return cuts;
}

/** The key phrases and entities of a question; `english`: also cut at its verbs and adverbs (compromise). */
export function questionTerms(question: string, stop: StopTest, english = true): QuestionTerms {
  const toks = tokens(question);
  const cuts = english ? englishCuts(question) : new Set<string>();
  const phrases: string[] = [];
  const entities: string[] = [];
  const addPhrase = (words: readonly string[]) => {
    let a = 0;
    let b = words.length;
    while (a < b && GENERIC.has(words[a]!.toLowerCase())) a++;
    while (b > a && GENERIC.has(words[b - 1]!.toLowerCase())) b--;
    const kept = words.slice(a, b);
    for (let i = 0; i < kept.length; i += MAX_PHRASE_WORDS) {
      const p = kept.slice(i, i + MAX_PHRASE_WORDS).join(' ').toLowerCase();
      if (p !== '' && !phrases.includes(p) && /\p{L}/u.test(p)) phrases.push(p);
    }
  };
  let run: string[] = [];
  for (const t of toks) {
    const lower = t.text.toLowerCase();
    if (t.word && !stop(lower) && !cuts.has(lower) && !REPORTING_VERBS.has(lower)) { run.push(t.text); continue; }
    // A hyphen or an apostrophe between words is inside the phrase; other punctuation and stop words end it.
    addPhrase(run);
    run = [];
  }
  addPhrase(run);

  // Entities: quoted runs, capitalised runs (a sentence's first word counts only when it is an acronym).
  let ent: string[] = [];
  const flush = () => {
    if (ent.length > 0) {
      const e = ent.join(' ');
      if (!entities.some((x) => x.toLowerCase() === e.toLowerCase())) entities.push(e);
    }
    ent = [];
  };
  for (const t of toks) {
    const lower = t.text.toLowerCase();
    const name = t.word && (t.quoted || isAcronym(t.text) || (isCapitalised(t.text) && !t.sentenceStart && !STOP.has(lower) && !ASKING.has(lower)));
    if (name) ent.push(t.text);
    else flush();
  }
  flush();
  return { phrases, entities: entities.filter((e) => e.length > 1) };
}

/** The main key phrase: the first of two words or more, else the first. */
export function mainPhrase(phrases: readonly string[]): string | undefined {
  return phrases.find((p) => p.includes(' ')) ?? phrases[0];
}

/**
 * Reformulations of a question before searching, in order: all key phrases
 * together; the main key phrase alone (when it has two words or more: one
 * word alone is too broad a search); each later key phrase with the one
 * before it; each name in the question with the main phrase (when the
 * phrase does not already hold it).
 */
export function reformulations(terms: QuestionTerms, maxWords = 12): string[] {
  const out: string[] = [];
  const { phrases, entities } = terms;
  const capWords = (s: string) => s.split(' ').slice(0, maxWords).join(' ');
  if (phrases.length > 0) out.push(capWords(phrases.join(' ')));
  const main = mainPhrase(phrases);
  if (phrases.length > 1) {
    if (main !== undefined && main.includes(' ')) out.push(main);
    for (let i = 1; i < phrases.length; i++) out.push(capWords(`${phrases[i - 1]} ${phrases[i]}`));
  }
  for (const e of entities) {
    const el = e.toLowerCase();
    if (main === undefined || main === el) out.push(el);
    else if (main.includes(el)) continue;
    else out.push(capWords(`${el} ${main}`));
  }
  return out;
}

/** Sentences of a text, roughly: split after . ! ? and a space, and at blank lines. */
function roughSentences(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const end = ((c === '.' || c === '!' || c === '?') && (i + 1 >= text.length || /\s/.test(text[i + 1]!)))
      || (c === '\n' && /^\n[ \t]*\n/.test(text.slice(i, i + 4)));
    if (end) { out.push(text.slice(from, i + 1)); from = i + 1; }
  }
  if (from < text.length) out.push(text.slice(from));
  return out;
}

const FEEDBACK_TEXT = 6_000;

/** A word without the apostrophes and hyphens that end it (a scan, not a regex: /['’-]+$/ backtracks). */
function trimTrailingMarks(w: string): string {
  let e = w.length;
  while (e > 0 && (w[e - 1] === "'" || w[e - 1] === '’' || w[e - 1] === '-')) e--;
  return w.slice(0, e);
}

export interface FeedbackInput {
  /** The question and its key phrases (plan.keyphrases): what the sources' words must co-occur with. */
  readonly question: string;
  readonly phrases: readonly string[];
  /** Texts of the first round's best results (stored text, or title and snippet), best first. */
  readonly top: readonly string[];
  /** Texts of the other candidates of the first round (for how common a word is among them). */
  readonly rest: readonly string[];
  readonly tokenizer: IndexTokenizer;
  readonly language: string | null;
  /** Feedback terms wanted. */
  readonly terms: number;
}

/** Related terms from the first round's top sources, best first, as surface words (lower case). */
export function feedbackTerms(f: FeedbackInput): string[] {
  const stem = new Map<string, string | null>();
  const stemOf = (w: string): string | null => {
    let s = stem.get(w);
    if (s === undefined) {
      const t = f.tokenizer.terms(w, f.language);
      s = t.length === 1 ? t[0]! : null;
      stem.set(w, s);
    }
    return s;
  };
  const words = (text: string) => (text.slice(0, FEEDBACK_TEXT).toLowerCase().match(/\p{L}[\p{L}\p{M}'’-]*/gu) ?? [])
    .map(trimTrailingMarks)
    .filter((w) => w.length >= 3 && !STOP.has(w) && !ASKING.has(w) && !REPORTING.has(w) && !GENERIC.has(w));
  const questionStems = new Set(f.tokenizer.terms([f.question, ...f.phrases].join(' '), f.language));
  if (questionStems.size === 0 || f.top.length === 0) return [];

  const weight = new Map<string, number>();
  const inTop = new Map<string, number>();
  const surface = new Map<string, Map<string, number>>();
  for (const text of f.top) {
    const seen = new Set<string>();
    for (const sentence of roughSentences(text.slice(0, FEEDBACK_TEXT))) {
      const ws = words(sentence);
      const stems = ws.map(stemOf);
      let q = 0;
      for (const s of new Set(stems)) if (s !== null && questionStems.has(s)) q++;
      if (q === 0) continue;
      stems.forEach((s, i) => {
        if (s === null || questionStems.has(s)) return;
        weight.set(s, (weight.get(s) ?? 0) + q);
        seen.add(s);
        const forms = surface.get(s) ?? new Map<string, number>();
        forms.set(ws[i]!, (forms.get(ws[i]!) ?? 0) + 1);
        surface.set(s, forms);
      });
    }
    for (const s of seen) inTop.set(s, (inTop.get(s) ?? 0) + 1);
  }
  const restDf = new Map<string, number>();
  for (const text of f.rest) {
    const seen = new Set<string>();
    for (const w of words(text)) {
      const s = stemOf(w);
      if (s !== null) seen.add(s);
    }
    for (const s of seen) restDf.set(s, (restDf.get(s) ?? 0) + 1);
  }
  const minTop = f.top.length >= 3 ? 2 : 1;
  const n = f.rest.length;
  const scored: { s: string; score: number }[] = [];
  for (const [s, w] of weight) {
    if ((inTop.get(s) ?? 0) < minTop) continue;
    scored.push({ s, score: w * Math.log(1 + (n + 1) / ((restDf.get(s) ?? 0) + 1)) });
  }
  scored.sort((a, b) => b.score - a.score || (a.s < b.s ? -1 : a.s > b.s ? 1 : 0));
  return scored.slice(0, f.terms).map(({ s }) => {
    const forms = [...surface.get(s)!.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    return forms[0]![0];
  });
}

/**
 * Feedback sub-queries: each anchors two related terms to a key phrase (the
 * main phrase first, then the others in turn), without repeating an
 * existing sub-query.
 */
export function feedbackQueries(phrases: readonly string[], related: readonly string[], count: number, existing: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set(existing.map((x) => x.toLowerCase()));
  if (phrases.length === 0) return out;
  for (let i = 0; out.length < count && i * 2 < related.length; i++) {
    const anchor = phrases[i % phrases.length]!;
    const q = [anchor, ...related.slice(i * 2, i * 2 + 2)].join(' ');
    if (!seen.has(q)) { seen.add(q); out.push(q); }
  }
  return out;
}
