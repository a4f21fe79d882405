// The readability row of bench:research (issue 28, section 1): the bench's OWN
// checks, written apart from the production sentence finder and statement
// filter (plugins/analysers/) so the measure is not circular. Its only shared
// piece is a dependency: compromise's part-of-speech tagger (the production
// sentence code uses wink-nlp), for the finite verb.
//
// 1. A complete sentence (summary sentences and insight statements):
//    - at least MIN_WORDS words (runs of letters or digits);
//    - starts as a sentence does: its first letter or digit (after opening
//      quotes or brackets) is upper case or a digit; in a caseless corpus
//      (text with no capital letters at all, such as Cranfield's) or a script
//      without case, any letter;
//    - ends as a sentence does: . ! ? (or … ) optionally followed by
//      closing quotes or brackets;
//    - holds a finite verb by compromise's tagger: a term tagged Verb with
//      PresentTense, PastTense, Copula, Modal or Auxiliary, other than the
//      non-finite "having" and "being" and a gerund; a caseless sentence is
//      also tagged in sentence case (first letter upper), so both taggings
//      may find it;
//    - is none of: a keyword list (four or more commas or semicolons with
//      no more than three words between them on average), a line with a
//      tab or a '|' (table rows, menus), a byline ("By Name Name"), a date
//      or a number alone, a line of words in Title Case (four in five or more of the
//      words of four letters or more capitalised, as captions, headings and
//      tag lines are), or a blank line inside (two paragraphs). A single line
//      break inside is allowed: a sentence quoted from hard-wrapped text
//      keeps its line breaks.
//    Citation markers ([1], [2, 3]) are removed before the checks.
// 2. An evidence span [start, end) on sentence boundaries of the stored text:
//    - start: 0; or the character at start is not a space and the text
//      before it, spaces and line breaks removed, ends with terminal
//      punctuation (. ! ? … then closing quotes/brackets) with at least one
//      space or line break between; or a blank line just before it; or start
//      is a line's first character and that line begins a list item (-, *,
//      •, 1. 1) (a) a.) or the line before is a heading (begins with #, or
//      has at most 8 words, no terminal punctuation, and a blank line or the
//      start of the text before it);
//    - end: the last character (closing quotes/brackets skipped) is terminal
//      punctuation and the next character is a space, a line break or the end
//      of the text; or only spaces and line breaks follow up to a blank line
//      or the end of the text (end of a paragraph); or end is at a line end
//      and the next line begins a list item or is a heading.
import nlp from 'compromise';

export const MIN_WORDS = 6;

const OPEN = '"\'“‘«([{';
const CLOSE = '"\'”’»)]}';
const TERMINAL = '.!?…';

/** Citation markers ([1], [2, 3], [4-6]) removed, spaces squeezed. */
export function stripCitations(s) {
  let out = '';
  let i = 0;
  while (i < s.length) {
    if (s[i] === '[') {
      let j = i + 1;
      while (j < s.length && j - i < 40 && /[0-9,\s–-]/.test(s[j])) j++;
      if (j < s.length && s[j] === ']' && /[0-9]/.test(s.slice(i + 1, j))) {
        i = j + 1;
        continue;
      }
    }
    out += s[i];
    i++;
  }
  return out.replace(/[ \t]+/g, ' ').replace(/ ([.,;:!?])/g, '$1').trim();
}

const isSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v' || c === '\u00a0';

/**
 * A summary split into sentences: after terminal punctuation (and closing
 * marks and citation markers) followed by a space and a letter, digit or
 * opening quote.
 */
export function splitSummary(summary) {
  const text = summary.trim();
  const out = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (!TERMINAL.includes(text[i])) continue;
    let j = i + 1;
    while (j < text.length && CLOSE.includes(text[j])) j++;
    // Citation markers right after the sentence belong to it.
    for (;;) {
      let k = j;
      while (k < text.length && text[k] === ' ') k++;
      if (text[k] !== '[') break;
      const close = text.indexOf(']', k);
      if (close === -1 || close - k > 40 || !/^\[[0-9,\s–-]+\]$/.test(text.slice(k, close + 1))) break;
      j = close + 1;
    }
    if (j < text.length && !isSpace(text[j])) continue;
    let k = j;
    while (k < text.length && isSpace(text[k])) k++;
    if (k >= text.length) break;
    if (!/[\p{L}\p{N}"'“‘«(]/u.test(text[k])) continue;
    // A single letter or an abbreviation-like token before the dot (e.g., U.S., Dr.) is not an end.
    const before = text.slice(from, i).split(/\s+/).pop() ?? '';
    if (text[i] === '.' && (before.length === 1 || /^(?:e\.g|i\.e|etc|vs|al|cf|Dr|Mr|Mrs|Ms|Prof|St|Fig|No)$/i.test(before))) continue;
    out.push(text.slice(from, j).trim());
    from = k;
    i = k - 1;
  }
  if (from < text.length) out.push(text.slice(from).trim());
  return out.filter((s) => s !== '');
}

const words = (s) => s.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];

const FINITE = ['PresentTense', 'PastTense', 'Copula', 'Modal', 'Auxiliary'];
function hasFiniteVerbIn(text) {
  const doc = nlp(text);
  for (const sentence of doc.json()) {
    for (const t of sentence.terms) {
      const tags = t.tags ?? [];
      if (!tags.includes('Verb') || tags.includes('Gerund')) continue;
      const w = (t.normal ?? t.text ?? '').toLowerCase();
      if (w === 'having' || w === 'being') continue;
      if (FINITE.some((x) => tags.includes(x))) return true;
    }
  }
  return false;
}

export function hasFiniteVerb(text, caseless) {
  if (hasFiniteVerbIn(text)) return true;
  return caseless ? hasFiniteVerbIn(text.charAt(0).toUpperCase() + text.slice(1)) : false;
}

/**
 * Why a sentence is not complete by the rule, or null when it is.
 * `caseless`: the corpus has no capital letters, so the start is not judged by case.
 */
export function incompleteReason(raw, { caseless = false } = {}) {
  const s = stripCitations(raw);
  if (s === '') return 'empty';
  if (/\n[ \t]*\n/.test(s)) return 'blank_line_inside';
  const w = words(s);
  if (w.length < MIN_WORDS) return 'too_short';
  // Start.
  let i = 0;
  while (i < s.length && OPEN.includes(s[i])) i++;
  const first = s.slice(i).match(/[\p{L}\p{N}]/u)?.[0];
  if (first === undefined || s.slice(i).search(/[\p{L}\p{N}]/u) !== 0) return 'bad_start';
  const hasCase = first.toLowerCase() !== first.toUpperCase();
  if (hasCase && first !== first.toUpperCase() && !caseless) return 'bad_start';
  // End.
  let e = s.length - 1;
  while (e > 0 && CLOSE.includes(s[e])) e--;
  if (!TERMINAL.includes(s[e])) return 'bad_end';
  if (s[e] === '.' && s[e - 1] === '.' && s[e - 2] === '.') return 'bad_end';
  // Shapes that are not sentences.
  if (s.includes('\t') || s.includes('|')) return 'table_or_menu';
  const pieces = s.split(/[,;]/);
  if (pieces.length >= 5 && w.length / pieces.length <= 3) return 'keyword_list';
  if (/^by\s+\p{Lu}[\p{L}.'-]*(\s+\p{Lu}[\p{L}.'-]*){0,3}\s*[,.]?\s*$/iu.test(s.split('\n')[0]) && w.length < 10) return 'byline';
  if (w.every((x) => /^[\p{N}]/u.test(x) || /^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i.test(x))) return 'date_or_number';
  const lettered = w.filter((x) => /^\p{L}/u.test(x) && x.length > 3);
  const titled = lettered.filter((x) => /^\p{Lu}/u.test(x));
  if (!caseless && lettered.length >= 4 && titled.length / lettered.length >= 0.8 && s.length < 200) return 'title_case_line';
  if (!hasFiniteVerb(s.replace(/\s+/g, ' '), caseless)) return 'no_finite_verb';
  return null;
}

// ---------------------------------------------------------------------------
// Boundaries of stored text.

const LIST_ITEM = /^[ \t]*(?:[-*•‣◦▪–][ \t]|\d{1,3}[.)][ \t]|\(\d{1,3}\)[ \t]|\(?[a-zA-Z]\)[ \t]|[a-z]\.[ \t])/u;

function lineAt(text, pos) {
  const from = text.lastIndexOf('\n', pos - 1) + 1;
  let to = text.indexOf('\n', pos);
  if (to === -1) to = text.length;
  return { from, to, line: text.slice(from, to) };
}

function endsTerminal(s) {
  let e = s.length - 1;
  while (e >= 0 && isSpace(s[e])) e--;
  while (e >= 0 && CLOSE.includes(s[e])) e--;
  return e >= 0 && TERMINAL.includes(s[e]);
}

/** A heading line: begins with #, or at most 8 words without terminal punctuation after a blank line or the start of the text. */
function isHeadingLine(text, from, to) {
  const line = text.slice(from, to).trim();
  if (line === '') return false;
  if (line.startsWith('#')) return true;
  if (words(line).length > 8 || endsTerminal(line)) return false;
  if (from === 0) return true;
  const before = text.slice(0, from - 1);
  const prev = before.lastIndexOf('\n');
  return text.slice(prev + 1, from - 1).trim() === '';
}

/** Why a span does not start on a sentence boundary of `text`, or null. */
export function startReason(text, start) {
  if (start === 0) return null;
  if (start < 0 || start > text.length) return 'out_of_range';
  if (isSpace(text[start])) return 'starts_with_space';
  let b = start - 1;
  let gap = '';
  while (b >= 0 && isSpace(text[b])) { gap = text[b] + gap; b--; }
  if (b < 0) return null;
  if (/\n[ \t\r]*\n/.test(gap)) return null;
  if (gap !== '' && endsTerminal(text.slice(Math.max(0, b - 4), b + 1))) return null;
  {
    // Right after a list item's marker at the start of its line ("   (1) Queries ..."): the item's text begins there.
    const { from } = lineAt(text, start);
    const prefix = text.slice(from, start);
    const m = LIST_ITEM.exec(prefix);
    if (m !== null && prefix.slice(m[0].length).trim() === '') return null;
  }
  if (gap.includes('\n')) {
    const { from, to, line } = lineAt(text, start);
    if (text.slice(from, start).trim() === '') {
      if (LIST_ITEM.test(line)) return null;
      const prev = lineAt(text, from - 1);
      if (isHeadingLine(text, prev.from, prev.to)) return null;
      if (to > from && isHeadingLine(text, from, to)) return null;
    }
  }
  return gap === '' ? 'starts_inside_a_word_or_after_punctuation' : 'starts_mid_sentence';
}

/** Why a span does not end on a sentence boundary of `text`, or null. */
export function endReason(text, end) {
  if (end <= 0 || end > text.length) return 'out_of_range';
  const after = text.slice(end);
  const rest = after.match(/^[ \t\r\n]*/)[0];
  if (rest.length === after.length || /\n[ \t\r]*\n/.test(rest)) return null; // end of a paragraph
  if (end < text.length && !isSpace(text[end])) return 'ends_inside_a_word';
  if (endsTerminal(text.slice(Math.max(0, end - 6), end)) && !isSpace(text[end - 1])) return null;
  if (rest.includes('\n')) {
    const lineEnd = text.indexOf('\n', end);
    if (text.slice(end, lineEnd).trim() === '') {
      const next = lineAt(text, lineEnd + 1);
      if (LIST_ITEM.test(next.line)) return null;
      if (isHeadingLine(text, lineAt(text, end - 1).from, lineEnd)) return null;
    }
  }
  return 'ends_mid_sentence';
}

/** A corpus with no capital letters in (a sample of) its text: the start of a sentence is not judged by case. */
export function isCaseless(texts) {
  let letters = 0;
  let upper = 0;
  for (const t of texts.slice(0, 200)) {
    for (const c of t) {
      if (c.toLowerCase() !== c.toUpperCase()) {
        letters++;
        if (c !== c.toLowerCase()) upper++;
      }
    }
  }
  return letters > 0 && upper / letters < 0.001;
}

/**
 * A readability tally for one corpus: feed it each research answer with the
 * stored text of its sources; read the totals with result().
 */
export function readabilityTally({ caseless = false, failureLimit = 400 } = {}) {
  const t = {
    questions: 0,
    summary: { sentences: 0, complete: 0, reasons: {} },
    insights: { sentences: 0, complete: 0, reasons: {} },
    spans: { total: 0, on_boundaries: 0, start_bad: 0, end_bad: 0, reasons: {} },
    failures: [],
  };
  const fail = (kind, question, detail) => {
    if (t.failures.length < failureLimit) t.failures.push({ kind, question, ...detail });
  };
  const judge = (part, text, question) => {
    const why = incompleteReason(text, { caseless });
    t[part].sentences++;
    if (why === null) t[part].complete++;
    else {
      t[part].reasons[why] = (t[part].reasons[why] ?? 0) + 1;
      fail(part, question, { reason: why, text: text.slice(0, 400) });
    }
  };
  return {
    add(question, body, textOfSource) {
      t.questions++;
      const summary = typeof body.executive_summary === 'string' ? body.executive_summary : '';
      for (const s of splitSummary(summary)) judge('summary', s, question);
      for (const ins of body.key_insights ?? []) if (typeof ins.statement === 'string') judge('insights', ins.statement, question);
      const seen = new Set();
      for (const x of spansOf(body)) {
        const stored = textOfSource(x.source_id);
        if (stored === undefined) continue;
        const key = `${x.source_id}:${x.start}:${x.end}`;
        if (seen.has(key)) continue;
        seen.add(key);
        t.spans.total++;
        const a = startReason(stored, x.start);
        const b = endReason(stored, x.end);
        if (a === null && b === null) { t.spans.on_boundaries++; continue; }
        if (a !== null) { t.spans.start_bad++; t.spans.reasons[a] = (t.spans.reasons[a] ?? 0) + 1; }
        if (b !== null) { t.spans.end_bad++; t.spans.reasons[b] = (t.spans.reasons[b] ?? 0) + 1; }
        fail('span', question, {
          reason: [a, b].filter(Boolean).join(', '), source_id: x.source_id, start: x.start, end: x.end,
          before: stored.slice(Math.max(0, x.start - 60), x.start), text: stored.slice(x.start, x.end).slice(0, 300), after: stored.slice(x.end, x.end + 60),
        });
      }
    },
    result() {
      const share = (a, b) => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);
      const both = { sentences: t.summary.sentences + t.insights.sentences, complete: t.summary.complete + t.insights.complete };
      return {
        questions: t.questions,
        caseless,
        complete_sentence_share: share(both.complete, both.sentences),
        summary: { ...t.summary, share: share(t.summary.complete, t.summary.sentences) },
        insights: { ...t.insights, share: share(t.insights.complete, t.insights.sentences) },
        spans: { ...t.spans, share: share(t.spans.on_boundaries, t.spans.total) },
        failures: t.failures,
      };
    },
  };
}

/** Every distinct {source_id, text, start, end} evidence span in an answer. */
function spansOf(v, out = []) {
  if (Array.isArray(v)) for (const x of v) spansOf(x, out);
  else if (v !== null && typeof v === 'object') {
    if (typeof v.source_id === 'string' && typeof v.start === 'number' && typeof v.end === 'number') out.push(v);
    for (const k of Object.keys(v)) spansOf(v[k], out);
  }
  return out;
}
