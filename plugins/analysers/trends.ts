/**
 * trend_analysis (include_trends): topics whose dated evidence says they
 * rise, fall or hold, without a model.
 *
 * Sentences read: the 2,000 most relevant of the corpus (boilerplate left
 * out).
 *
 * Dates of a sentence:
 * - from its text: chrono-node (`parse(sentence, ref)`, ref = the source's
 *   published date, else the request time; run only on sentences with a
 *   four-digit year and a month name or a numeric date), a date kept only
 *   when the matched text carries its year in four digits (so "last year"
 *   or "in March" do not count); and a year alone (1800 to 50 years after the request) after
 *   in, by, since, during, until, through, from, to, of, for, between, and,
 *   early, mid, late, end, fiscal, FY, Q1-Q4, H1/H2 or a season, or in
 *   parentheses, or in a range ("2019-2023"), read as 1 January of that
 *   year; chrono's day-less dates are the 1st of the month. A sentence's
 *   evidence date is the latest of its text dates (`date_source: "text"`);
 * - else the source's published date (`date_source: "published"`);
 * - else the sentence is undated and not evidence.
 *
 * Topics, in priority order: the plan's key phrases, the focus areas, then
 * the 8 most frequent noun phrases (wink-nlp part-of-speech runs of
 * adjectives and nouns ending in a noun, at most 3 words) of the dated
 * sentences that carry a change word or a number (at most 300 sentences
 * tagged), found in >= 2 sentences of >= 2 sources. A sentence is about a
 * topic when it has all of the topic's distinct terms (corpus.terms:
 * stemmed, no stop words), or all but one for a topic of more than 3.
 *
 * Direction of a topic, from its dated sentences:
 * - change words: increase, rise, grow, gain, climb, surge, soar, jump,
 *   double, expand, higher, more, up ... (+1) and decrease, decline, fall,
 *   drop, plunge, slump, shrink, halve, reduce, lower, less, fewer, down ...
 *   (-1); a change word with a negation (not, no, never, n't, without,
 *   hardly, barely, neither, nor) in the 3 words before it, in the same
 *   clause, is ignored; a sentence's direction is the sign of its ups
 *   minus downs;
 *   words = (rising - falling sentences) / (rising + falling sentences), 0
 *   when none;
 * - numbers: a number with a unit (%, percent; $, €, £, ¥ amounts; a scale
 *   word: thousand, million, billion, trillion; or the noun after it, e.g.
 *   "1.2 million vehicles") in a sentence about the topic is paired with the
 *   nearest date in the sentence (else the sentence's date); years are not
 *   numbers. The unit with the most points gives the series (the mean value
 *   per date); with >= 3 dates the least-squares slope over (years, value),
 *   with 2 the change from first to last, relative to the mean absolute
 *   value over the span: > +5% rising (+1), < -5% falling (-1), else 0;
 * - s = 0.6 numbers + 0.4 words when there is a series of >= 2 dates, else
 *   words; s >= 0.2 rising, s <= -0.2 falling, else stable.
 *
 * A topic is a trend when it has >= 2 dated sentences, from >= 1 source,
 * and either >= 2 distinct dates or a change word or a series.
 *
 * confidence = (0.5 (1 - 0.75^n) + 0.5 (1 - 0.5^k)) * (0.5 + 0.5 a):
 * n dated sentences, k distinct sources, a agreement: for rising / falling
 * the share of directional signals (sentences with a direction, and the
 * series) that point that way; for stable 1 - |s|, or 1 when the series is
 * flat and no sentence has a direction, or 0.5 when nothing has a
 * direction.
 *
 * Output: at most 10 trends, highest confidence first (ties: priority);
 * topics whose evidence is the same set of sentences as a higher-priority
 * topic's are dropped. Each has its 10 most relevant dated sentences as
 * evidence (in date order), the timeframe over every date it rests on, the
 * series (may be empty) and its unit.
 */
import { definePlugin } from '../../core/plugin.js';
import { evidenceOf, round4, type AnalyserPlugin, type Corpus, type Evidence, type ResearchSource, type Sentence } from '../../core/research.js';
import { chronoNode, isBoilerplateSentence, isoDay, isoDayOf, nlpVersions, rankedSentences, sourceOrder, winkNlp } from './nlp.js';

export const POOL = 2000;
export const MAX_TRENDS = 10;
export const MAX_EVIDENCE = 10;
export const NOUN_PHRASE_TOPICS = 8;
export const TAGGED_SENTENCES = 300;
export const RELATIVE_CHANGE = 0.05;
export const DIRECTION_THRESHOLD = 0.2;
const DAY = 86_400_000;
const YEAR_MS = 365.25 * DAY;

export type Direction = 'rising' | 'falling' | 'stable';

export interface TrendEvidence extends Evidence {
  readonly date: string;
  readonly date_source: 'text' | 'published';
}

export interface Trend {
  readonly topic: string;
  readonly direction: Direction;
  readonly confidence: number;
  readonly timeframe: { readonly start: string; readonly end: string };
  readonly evidence: readonly TrendEvidence[];
  readonly series: readonly { readonly date: string; readonly value: number }[];
  /** The unit of the series values ('%', 'USD', a noun such as 'vehicle', 'count'), or null without a series. */
  readonly unit: string | null;
}

// ---------------------------------------------------------------------------
// Change words.

const UP = new Set([
  'increase', 'increases', 'increased', 'increasing', 'rise', 'rises', 'rising', 'rose', 'risen', 'grow', 'grows', 'growing', 'grew', 'grown',
  'growth', 'gain', 'gains', 'gained', 'climb', 'climbs', 'climbed', 'climbing', 'surge', 'surges', 'surged', 'surging', 'soar', 'soars',
  'soared', 'soaring', 'jump', 'jumps', 'jumped', 'double', 'doubled', 'doubling', 'tripled', 'expand', 'expands', 'expanded', 'expanding',
  'expansion', 'higher', 'more', 'up', 'boost', 'boosted', 'accelerate', 'accelerated', 'accelerating',
]);
const DOWN = new Set([
  'decrease', 'decreases', 'decreased', 'decreasing', 'decline', 'declines', 'declined', 'declining', 'fall', 'falls', 'falling', 'fell',
  'fallen', 'drop', 'drops', 'dropped', 'dropping', 'plunge', 'plunged', 'plunging', 'slump', 'slumped', 'shrink', 'shrinks', 'shrank',
  'shrunk', 'shrinking', 'halve', 'halved', 'reduce', 'reduced', 'reduces', 'reduction', 'lower', 'less', 'fewer', 'down', 'contract',
  'contracted', 'contraction', 'slow', 'slowed', 'slowing', 'decelerate', 'decelerated',
]);
const NEGATION = /^(?:not|no|never|without|hardly|barely|neither|nor|cannot|.+n't)$/;

/** +1 rising, -1 falling, 0 neither: the sign of the sentence's un-negated up words minus down words. */
export function changeDirection(text: string): number {
  let up = 0;
  let down = 0;
  // Negation reaches back 3 words within a clause (not over , ; : ( ) or dashes).
  for (const clause of text.toLowerCase().replace(/’/g, "'").split(/[,;:.!?()\[\]—–]|\s-\s/u)) {
    const words = clause.match(/[\p{L}']+/gu) ?? [];
    words.forEach((w, i) => {
      const dir = UP.has(w) ? 1 : DOWN.has(w) ? -1 : 0;
      if (dir === 0) return;
      for (let j = Math.max(0, i - 3); j < i; j++) if (NEGATION.test(words[j]!)) return;
      if (dir > 0) up++;
      else down++;
    });
  }
  return Math.sign(up - down);
}

// ---------------------------------------------------------------------------
// Dates.

export interface TextDate {
  readonly day: string;
  /** Epoch ms of the day (UTC). */
  readonly t: number;
  readonly start: number;
  readonly end: number;
}

const HAS_YEAR = /(?<!\d)(?:1[89]|2[01])\d{2}(?!\d)/;
/** Only sentences with a month name or a numeric date go through chrono-node (a year alone is read by YEAR). */
const HAS_FULL_DATE = /\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}/i;
const YEAR_CONTEXT = /(?:\b(?:in|by|since|during|until|till|through|throughout|from|to|of|for|between|and|early|mid|late|end|fiscal|fy|q[1-4]|h[12]|spring|summer|autumn|fall|winter|year)\s+|\(|(?:1[89]|2[01])\d{2}\s?[-–—/]\s?)$/i;
const YEAR = /(?<![\p{L}\p{N}$€£¥.,])((?:1[89]|2[01])\d{2})(?![\p{N}]|\s?%|\s?(?:percent|per cent)\b|[.,]\d)/gu;

function dateOf(year: number, month: number, day: number): { day: string; t: number } | undefined {
  if (!Number.isInteger(year) || !Number.isInteger(month) || !Number.isInteger(day)) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  return { day: isoDay(year, month, day), t: Date.UTC(year, month - 1, day) };
}

/** Dates written in a sentence with an explicit year (chrono-node, then years alone in a date context), in text order. */
export function textDates(text: string, ref: number, now: number): TextDate[] {
  if (!HAS_YEAR.test(text)) return [];
  const maxYear = new Date(now).getUTCFullYear() + 50;
  const out: TextDate[] = [];
  const taken: [number, number][] = [];
  let results: ReturnType<ReturnType<typeof chronoNode>['parse']> = [];
  if (HAS_FULL_DATE.test(text)) {
    try {
      results = chronoNode().parse(text, new Date(ref));
    } catch {
      results = [];
    }
  }
  for (const r of results) {
    const years = (r.text.match(/(?<!\d)\d{4}(?!\d)/g) ?? []).map(Number);
    const add = (c: typeof r.start | null | undefined) => {
      if (c === null || c === undefined) return;
      const y = c.get('year');
      if (y === null || !years.includes(y) || y < 1800 || y > maxYear) return;
      const d = dateOf(y, c.get('month') ?? 1, c.isCertain('day') ? (c.get('day') ?? 1) : 1);
      if (d !== undefined) out.push({ ...d, start: r.index, end: r.index + r.text.length });
    };
    add(r.start);
    add(r.end);
    taken.push([r.index, r.index + r.text.length]);
  }
  YEAR.lastIndex = 0;
  for (let m = YEAR.exec(text); m !== null; m = YEAR.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    if (taken.some(([a, b]) => start < b && end > a)) continue;
    const y = Number(m[1]);
    if (y < 1800 || y > maxYear) continue;
    const before = text.slice(Math.max(0, start - 20), start);
    const after = text.slice(end, end + 2);
    if (!YEAR_CONTEXT.test(before) && !/^\s?\)/.test(after) && !/^\s?[-–—/]\s?(?:1[89]|2[01])\d{2}/.test(text.slice(end, end + 8))) continue;
    out.push({ ...dateOf(y, 1, 1)!, start, end });
  }
  return out.sort((a, b) => a.start - b.start || a.t - b.t);
}

// ---------------------------------------------------------------------------
// Numbers with units.

export interface Quantity {
  readonly value: number;
  readonly unit: string;
  readonly start: number;
  readonly end: number;
}

const NUMBER = /(?<![\p{L}\p{N}.,\-_/])(US\$|[$€£¥])?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(\s?%|\s?(?:percent|per cent|pct)\b)?(?:\s?(trillion|billion|million|thousand|bn|tn|mn)\b)?(?:\s+(\p{L}[\p{L}-]{2,}))?/gu;
const SCALE: Readonly<Record<string, number>> = { thousand: 1e3, million: 1e6, mn: 1e6, billion: 1e9, bn: 1e9, trillion: 1e12, tn: 1e12 };
const CURRENCY: Readonly<Record<string, string>> = { $: 'USD', US$: 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY' };
const NOT_UNITS = new Set([
  'the', 'and', 'for', 'from', 'with', 'than', 'that', 'this', 'into', 'over', 'per', 'more', 'less', 'fewer', 'about', 'after', 'before',
  'year', 'years', 'month', 'months', 'week', 'weeks', 'day', 'days', 'hour', 'hours', 'minute', 'minutes', 'second', 'seconds', 'times',
  'were', 'was', 'are', 'has', 'had', 'have', 'will', 'would', 'could', 'out', 'among', 'between', 'across', 'compared', 'against', 'since',
  'until', 'through', 'during', 'while', 'when', 'which', 'who', 'whom', 'what', 'where', 'its', 'their', 'his', 'her', 'our', 'also',
  'other', 'new', 'all', 'each', 'every', 'both', 'some', 'many', 'most', 'such', 'only', 'just', 'still', 'yet', 'now', 'then', 'too',
  'said', 'says', 'according', 'percentage', 'points', 'point', 'higher', 'lower', 'up', 'down',
]);

const singular = (w: string) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);

/** Numbers with a unit in a sentence, outside the given date spans; years are never quantities. */
export function quantities(text: string, dates: readonly { start: number; end: number }[]): Quantity[] {
  if (!/\d/.test(text)) return [];
  const out: Quantity[] = [];
  NUMBER.lastIndex = 0;
  for (let m = NUMBER.exec(text); m !== null; m = NUMBER.exec(text)) {
    const [, currency, digits, percent, scaleWord, word] = m;
    const numStart = m.index + m[0].indexOf(digits!);
    const numEnd = numStart + digits!.length;
    if (dates.some((d) => numStart < d.end && numEnd > d.start)) continue;
    const raw = Number(digits!.replace(/,/g, ''));
    if (!Number.isFinite(raw)) continue;
    const scale = scaleWord === undefined ? 1 : SCALE[scaleWord.toLowerCase()] ?? 1;
    let unit: string | undefined;
    if (percent !== undefined) unit = '%';
    else if (currency !== undefined) unit = CURRENCY[currency] ?? currency;
    else if (word !== undefined && !NOT_UNITS.has(word.toLowerCase())) unit = singular(word.toLowerCase());
    else if (scaleWord !== undefined) unit = 'count';
    if (unit === undefined) continue;
    if (unit !== '%' && currency === undefined && scaleWord === undefined && /^(?:1[89]|2[01])\d{2}$/.test(digits!)) continue;
    const value = unit === '%' ? raw : raw * scale;
    out.push({ value, unit, start: numStart, end: numEnd });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Topics.

const STOP_NOUNS = new Set([
  'year', 'years', 'percent', 'time', 'times', 'month', 'months', 'quarter', 'quarters', 'week', 'weeks', 'day', 'days', 'lot', 'part',
  'way', 'ways', 'thing', 'things', 'cent', 'number', 'end', 'period', 'level', 'levels', 'rate', 'report', 'study', 'data', 'today',
]);

/** The most frequent noun phrases (wink-nlp POS runs of ADJ/NOUN/PROPN ending in a noun, the last 3 words) found in >= 2 sentences of >= 2 sources: most sources first, then most sentences. */
export function nounPhrases(sentences: readonly Sentence[], limit: number, terms: (text: string) => readonly string[]): string[] {
  if (sentences.length === 0) return [];
  const { nlp, its } = winkNlp();
  const seen = new Map<string, { sentences: number; sources: Set<string> }>();
  for (const s of sentences) {
    let pos: string[];
    let normal: string[];
    try {
      const tokens = nlp.readDoc(s.text.length > 1200 ? s.text.slice(0, 1200) : s.text).tokens();
      pos = tokens.out(its.pos) as string[];
      normal = tokens.out(its.normal) as string[];
    } catch {
      continue;
    }
    const phrases = new Set<string>();
    let run: number[] = [];
    const flush = () => {
      while (run.length > 0 && pos[run[run.length - 1]!] === 'ADJ') run.pop();
      const words = run.slice(-3).map((i) => normal[i]!);
      run = [];
      while (words.length > 0 && !/\p{L}{2}/u.test(words[0]!)) words.shift();
      if (words.length === 0 || !words.every((w) => /^[\p{L}\p{N}][\p{L}\p{N}'’.-]*$/u.test(w))) return;
      if (words.length === 1 && (STOP_NOUNS.has(words[0]!) || words[0]!.length < 3)) return;
      phrases.add(words.join(' '));
    };
    for (let i = 0; i < pos.length; i++) {
      if (pos[i] === 'ADJ' || pos[i] === 'NOUN' || pos[i] === 'PROPN') run.push(i);
      else flush();
    }
    flush();
    for (const p of phrases) {
      let e = seen.get(p);
      if (e === undefined) { e = { sentences: 0, sources: new Set() }; seen.set(p, e); }
      e.sentences++;
      e.sources.add(s.sourceId);
    }
  }
  return [...seen.entries()]
    .filter(([p, e]) => e.sentences >= 2 && e.sources.size >= 2 && terms(p).length > 0)
    .sort((a, b) => b[1].sources.size - a[1].sources.size || b[1].sentences - a[1].sentences
      || b[0].split(' ').length - a[0].split(' ').length || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, limit)
    .map(([p]) => p);
}

/** Terms a sentence needs of a topic: all of up to 3 distinct terms, else all but one. */
export const needed = (n: number): number => (n <= 3 ? n : n - 1);

// ---------------------------------------------------------------------------
// The analysis.

interface Dated {
  readonly s: Sentence;
  readonly r: number;
  readonly day: string;
  readonly t: number;
  readonly dateSource: 'text' | 'published';
  readonly dates: readonly TextDate[];
  readonly direction: number;
  readonly points: readonly { day: string; t: number; value: number; unit: string }[];
  readonly terms: ReadonlySet<string>;
}

function readDated(corpus: Corpus): Dated[] {
  const byId = new Map<string, ResearchSource>(corpus.sources.map((s) => [s.id, s]));
  const out: Dated[] = [];
  for (const { s, r } of rankedSentences(corpus, POOL, (x) => !isBoilerplateSentence(x))) {
    const src = byId.get(s.sourceId);
    if (src === undefined) continue;
    const published = src.meta.publishedAt;
    const dates = textDates(s.text, published ?? corpus.now, corpus.now);
    let day: string;
    let t: number;
    let dateSource: 'text' | 'published';
    if (dates.length > 0) {
      const latest = dates.reduce((a, b) => (b.t > a.t ? b : a));
      day = latest.day;
      t = latest.t;
      dateSource = 'text';
    } else if (published !== null && Number.isFinite(published)) {
      day = isoDayOf(published);
      t = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)));
      dateSource = 'published';
    } else {
      continue;
    }
    const points = quantities(s.text, dates).map((q) => {
      let best: TextDate | undefined;
      let dist = Infinity;
      for (const d of dates) {
        const dd = q.start >= d.end ? q.start - d.end : d.start >= q.end ? d.start - q.end : 0;
        if (dd < dist) { dist = dd; best = d; }
      }
      return { day: best?.day ?? day, t: best?.t ?? t, value: q.value, unit: q.unit };
    });
    out.push({ s, r, day, t, dateSource, dates, direction: changeDirection(s.text), points, terms: new Set(corpus.terms(s.text)) });
  }
  return out;
}

/** The topics to look for, in priority order, each with its distinct terms. */
function topicsOf(corpus: Corpus, dated: readonly Dated[]): { topic: string; terms: string[] }[] {
  const out: { topic: string; terms: string[] }[] = [];
  const keys = new Set<string>();
  const add = (raw: string) => {
    const topic = raw.replace(/\s+/gu, ' ').trim();
    if (topic === '') return;
    const terms = [...new Set(corpus.terms(topic))].sort();
    const key = terms.join(' ');
    if (terms.length === 0 || keys.has(key)) return;
    keys.add(key);
    out.push({ topic, terms });
  };
  for (const k of corpus.plan.keyphrases) add(k);
  for (const f of corpus.input.focus_areas ?? []) add(f);
  const tagged = dated.filter((d) => d.direction !== 0 || d.points.length > 0).slice(0, TAGGED_SENTENCES).map((d) => d.s);
  const fromQuestion = out.length;
  for (const p of nounPhrases(tagged, NOUN_PHRASE_TOPICS * 2, corpus.terms)) {
    if (out.length - fromQuestion >= NOUN_PHRASE_TOPICS) break;
    add(p);
  }
  return out;
}

/** Least-squares slope of value over time (years), relative to the mean absolute value over the span: the direction of a series. */
export function seriesDirection(points: readonly { t: number; value: number }[]): number {
  if (points.length < 2) return 0;
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const meanAbs = points.reduce((a, p) => a + Math.abs(p.value), 0) / points.length;
  let change: number;
  if (points.length === 2) {
    change = last.value - first.value;
  } else {
    const xs = points.map((p) => p.t / YEAR_MS);
    const mx = xs.reduce((a, x) => a + x, 0) / xs.length;
    const my = points.reduce((a, p) => a + p.value, 0) / points.length;
    let num = 0;
    let den = 0;
    points.forEach((p, i) => { num += (xs[i]! - mx) * (p.value - my); den += (xs[i]! - mx) ** 2; });
    change = den === 0 ? 0 : (num / den) * (xs[xs.length - 1]! - xs[0]!);
  }
  const rel = meanAbs === 0 ? (change === 0 ? 0 : Math.sign(change)) : change / meanAbs;
  return rel > RELATIVE_CHANGE ? 1 : rel < -RELATIVE_CHANGE ? -1 : 0;
}

export function analyseTrends(corpus: Corpus): Trend[] {
  const order = sourceOrder(corpus);
  const dated = readDated(corpus);
  if (dated.length < 2) return [];
  const topics = topicsOf(corpus, dated);
  const candidates: { trend: Trend; priority: number; key: string }[] = [];
  topics.forEach(({ topic, terms }, priority) => {
    const need = needed(terms.length);
    const items = dated.filter((d) => {
      let n = 0;
      for (const t of terms) if (d.terms.has(t)) n++;
      return n >= need;
    });
    if (items.length < 2) return;
    const days = new Set(items.map((d) => d.day));
    const up = items.filter((d) => d.direction > 0).length;
    const down = items.filter((d) => d.direction < 0).length;
    // The series: the unit with the most points, the mean value per date.
    const byUnit = new Map<string, { day: string; t: number; value: number }[]>();
    for (const d of items) for (const p of d.points) {
      const list = byUnit.get(p.unit) ?? [];
      list.push(p);
      byUnit.set(p.unit, list);
    }
    let unit: string | null = null;
    for (const [u, list] of byUnit) {
      const cur = unit === null ? undefined : byUnit.get(unit)!;
      if (cur === undefined || list.length > cur.length || (list.length === cur.length && u < unit!)) unit = u;
    }
    const perDay = new Map<string, { t: number; sum: number; n: number }>();
    for (const p of unit === null ? [] : byUnit.get(unit)!) {
      const e = perDay.get(p.day) ?? { t: p.t, sum: 0, n: 0 };
      e.sum += p.value;
      e.n++;
      perDay.set(p.day, e);
    }
    const series = [...perDay.entries()].map(([day, e]) => ({ day, t: e.t, value: e.sum / e.n })).sort((a, b) => a.t - b.t);
    const hasSeries = series.length >= 2;
    if (days.size < 2 && up + down === 0 && !hasSeries) return;

    const words = up + down === 0 ? 0 : (up - down) / (up + down);
    const numeric = hasSeries ? seriesDirection(series) : undefined;
    const s = numeric === undefined ? words : 0.6 * numeric + 0.4 * words;
    const direction: Direction = s >= DIRECTION_THRESHOLD ? 'rising' : s <= -DIRECTION_THRESHOLD ? 'falling' : 'stable';
    const signals = [...items.filter((d) => d.direction !== 0).map((d) => d.direction), ...(numeric !== undefined && numeric !== 0 ? [numeric] : [])];
    let agreement: number;
    if (direction === 'rising') agreement = signals.filter((x) => x > 0).length / signals.length;
    else if (direction === 'falling') agreement = signals.filter((x) => x < 0).length / signals.length;
    else if (signals.length === 0) agreement = numeric === 0 ? 1 : 0.5;
    else agreement = 1 - Math.abs(s);
    const n = items.length;
    const k = new Set(items.map((d) => d.s.sourceId)).size;
    const confidence = (0.5 * (1 - 0.75 ** n) + 0.5 * (1 - 0.5 ** k)) * (0.5 + 0.5 * agreement);

    const times = [...items.flatMap((d) => [d.t, ...d.dates.map((x) => x.t)]), ...series.map((p) => p.t)];
    const dayOf = new Map<number, string>();
    for (const d of items) { dayOf.set(d.t, d.day); for (const x of d.dates) dayOf.set(x.t, x.day); }
    for (const p of series) dayOf.set(p.t, p.day);
    const start = dayOf.get(times.reduce((a, b) => Math.min(a, b)))!;
    const end = dayOf.get(times.reduce((a, b) => Math.max(a, b)))!;

    // items are most relevant first (the pool's order).
    const evidence = items.slice(0, MAX_EVIDENCE)
      .sort((a, b) => a.t - b.t || (order.get(a.s.sourceId) ?? 0) - (order.get(b.s.sourceId) ?? 0) || a.s.start - b.s.start)
      .map((d): TrendEvidence => ({ ...evidenceOf(d.s), date: d.day, date_source: d.dateSource }));
    const key = items.map((d) => `${d.s.sourceId}:${d.s.index}`).sort().join(',');
    candidates.push({
      priority,
      key,
      trend: {
        topic,
        direction,
        confidence: round4(confidence),
        timeframe: { start, end },
        evidence,
        series: series.map((p) => ({ date: p.day, value: round4(p.value) })),
        unit: hasSeries ? unit : null,
      },
    });
  });
  const seen = new Set<string>();
  const unique = candidates.filter((c) => (seen.has(c.key) ? false : (seen.add(c.key), true)));
  return unique
    .sort((a, b) => b.trend.confidence - a.trend.confidence || a.priority - b.priority)
    .slice(0, MAX_TRENDS)
    .map((c) => c.trend);
}

const V = nlpVersions();
export const TRENDS_METHOD = `dated sentences (chrono-node ${V['chrono-node']} dates with an explicit year, years in a date context, else the published date) about the question's key phrases, focus areas and frequent noun phrases (wink-nlp ${V['wink-nlp']} POS); direction 0.6 numeric series (least-squares slope, +-${RELATIVE_CHANGE * 100}% of the mean) + 0.4 change words, rising >= ${DIRECTION_THRESHOLD}, falling <= -${DIRECTION_THRESHOLD}; confidence (0.5 (1 - 0.75^n) + 0.5 (1 - 0.5^sources)) * (0.5 + 0.5 agreement)`;

export const trendsAnalyser: AnalyserPlugin<'analyser-trends'> = definePlugin({
  name: 'analyser-trends',
  kind: 'analyser',
  id: 'trend_analysis',
  order: 40,
  method: TRENDS_METHOD,
  description: 'trend_analysis: rising, falling or stable topics from dated evidence.',
  applies: (input) => input.include_trends === true,
  analyse(corpus: Corpus) {
    const trends = analyseTrends(corpus);
    return {
      fields: { trend_analysis: trends },
      notes: [`trend_analysis: ${trends.length} trend(s) (at most ${MAX_TRENDS}) from the ${POOL} most relevant sentences; a trend needs >= 2 dated sentences and >= 2 dates, a change word or a numeric series`],
    };
  },
});
