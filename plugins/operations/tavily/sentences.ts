/**
 * The text Tavily's search writes and Scour quotes instead: `answer` and an
 * advanced search's `content` are made of sentences found in the results,
 * never written. Sentences are split by the SDK's `sentenceSpans` (as
 * research reads its sources), kept as they stand in the text (white
 * space collapsed to one space), and ranked by how many of the query's
 * words they hold (`markTerms`, the search's own highlighter); an answer
 * takes only sentences that read as statements (`isStatement`).
 */
import { markTerms } from '../../../core/search-merge.js';
import { isStatement, sentenceSpans, textShape } from '../../sdk/sentences.js';

/** Sentences longer than this are not quoted (Tavily's chunks are at most 500 characters). */
const MAX_CHUNK = 500;
/** An answer is at most this long. */
const MAX_ANSWER = 1200;
/** Text read per page for chunks and answers: pages can be long, and the best sentences are rarely past this. */
const MAX_TEXT = 200_000;

interface Scored {
  readonly text: string;
  /** Distinct query words it holds. */
  readonly hits: number;
  /** Where it stands in its text. */
  readonly at: number;
}

const collapse = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** The sentences of `text` that hold a query word, with how many distinct ones. */
function scored(text: string, terms: readonly string[], statementsOnly: boolean): Scored[] {
  if (terms.length === 0 || text.length === 0) return [];
  const body = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
  const shape = statementsOnly ? textShape(body) : undefined;
  const out: Scored[] = [];
  for (const span of sentenceSpans(body)) {
    if (span.end - span.start > MAX_CHUNK) continue;
    const sentence = collapse(body.slice(span.start, span.end));
    const words = new Set(markTerms(sentence, terms).map(([a, b]) => sentence.slice(a, b).toLowerCase()));
    if (words.size === 0) continue;
    if (shape !== undefined && !isStatement(sentence, shape)) continue;
    out.push({ text: sentence, hits: words.size, at: span.start });
  }
  return out;
}

/**
 * An advanced search's `content`: the `chunks` sentences of the page that
 * hold the most query words, in page order, joined as Tavily joins its
 * chunks (" [...] "); undefined when none holds one.
 */
export function relevantChunks(text: string, terms: readonly string[], chunks: number): string | undefined {
  const best = scored(text, terms, false)
    .sort((a, b) => b.hits - a.hits || a.at - b.at)
    .slice(0, chunks)
    .sort((a, b) => a.at - b.at);
  return best.length === 0 ? undefined : best.map((s) => s.text).join(' [...] ');
}

/**
 * An extractive answer: the `sentences` statements of the results (their
 * text in rank order) that hold the most query words, the better-ranked
 * result first on a tie, each once; null when no result states anything
 * about the query.
 */
export function extractiveAnswer(texts: readonly string[], terms: readonly string[], sentences: number): string | null {
  const all: (Scored & { rank: number })[] = [];
  texts.forEach((t, rank) => { for (const s of scored(t, terms, true)) all.push({ ...s, rank }); });
  all.sort((a, b) => b.hits - a.hits || a.rank - b.rank || a.at - b.at);
  const chosen: string[] = [];
  const seen = new Set<string>();
  let length = 0;
  for (const s of all) {
    if (chosen.length >= sentences) break;
    const key = s.text.toLowerCase();
    if (seen.has(key) || length + s.text.length > MAX_ANSWER) continue;
    seen.add(key);
    chosen.push(s.text);
    length += s.text.length + 1;
  }
  return chosen.length === 0 ? null : chosen.join(' ');
}
