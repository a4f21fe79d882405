/**
 * entity_analysis (when `entities` is given): for each requested entity its
 * mentions, the sources naming it, the entities named in the same
 * sentences, the sentiment of those sentences and its most relevant
 * statements; and the other people, organisations and places the sources
 * name.
 *
 * Requested entities (at most 50; trimmed, whitespace collapsed,
 * duplicates that differ only in case merged, the first spelling kept):
 * - matched case-insensitively on word boundaries (no letter or digit on
 *   either side), inner whitespace matching any whitespace, with the simple
 *   variants `'s`, `’s`, `s'`, `s` and `es`; where two requested names
 *   overlap ("Apple", "Apple Inc") the longer one wins;
 * - mentions = matches over the scanned sentences, sources = the sources
 *   with a match (in source order);
 * - co_occurring = the other requested entities and the listed other
 *   entities named in the same sentence, with the number of such sentences
 *   (most first, ties by name, at most 20);
 * - sentiment = mean wink-nlp sentence sentiment (sentiment.ts) over its 50
 *   most relevant mentioning sentences, labelled as in sentiment.ts;
 * - statements = its 5 most relevant mentioning sentences
 *   (corpus.sentenceRelevance; boilerplate and repeated texts skipped),
 *   each a verbatim span of its source.
 * A requested entity no source names is listed with 0 mentions.
 *
 * Other entities: compromise's people(), organizations() and places() over
 * the 100 most relevant sentences that have a capitalised word (at most
 * 12,000 characters in all; compromise tags about 50 characters per
 * millisecond, so this bounds it to a few hundred ms), read as one
 * document, a line per sentence. Names are normalised (surrounding
 * punctuation, possessive `'s`, a leading "the" and a corporate suffix
 * such as Inc or Ltd removed, so "Apple Inc." is Apple; lists split on
 * commas), merged case-insensitively (the most frequent spelling shown)
 * and filtered of junk: single letters, stop words, names with no capital
 * letter, names not starting with a letter, over 60 characters, first or
 * last names alone when the full name was found, names that contain a
 * requested entity or are words of one. A name found as two types keeps the type compromise
 * gave it most (ties: person, organisation, place). The 40 most found
 * names per type are then counted over the scanned sentences
 * (case-sensitively, on word boundaries, with `'s`), and the 20 with most
 * mentions per type are listed.
 *
 * Scanned sentences: the 20,000 most relevant sentences of the corpus (all
 * of them for any ordinary corpus).
 */
import { definePlugin } from '../../core/plugin.js';
import { evidenceOf, type AnalyserPlugin, type Corpus, type Evidence, type ResearchInput, type Sentence } from '../../core/research.js';
import { meanSentiment, type SentimentScore } from './sentiment-score.js';
import { byPosition, compromiseNlp, escapeRegExp, isBoilerplateSentence, nlpVersions, rankedSentences, sourceOrder, type Ranked } from './nlp.js';

export const MAX_ENTITIES = 50;
export const STATEMENTS = 5;
export const CO_OCCURRING = 20;
export const SENTIMENT_SENTENCES = 50;
export const SCAN_SENTENCES = 20_000;
export const DISCOVERY_SENTENCES = 100;
export const DISCOVERY_CHARS = 12_000;
export const DISCOVERY_CANDIDATES = 40;
export const OTHER_LIMIT = 20;

export interface EntityReport {
  readonly name: string;
  readonly mentions: number;
  readonly sources: readonly string[];
  readonly co_occurring: readonly { readonly name: string; readonly count: number }[];
  readonly sentiment: SentimentScore;
  readonly statements: readonly Evidence[];
}

export interface OtherEntity {
  readonly name: string;
  readonly mentions: number;
  readonly sources: readonly string[];
}

export interface EntityAnalysis {
  readonly entities: readonly EntityReport[];
  readonly other_entities: {
    readonly people: readonly OtherEntity[];
    readonly organizations: readonly OtherEntity[];
    readonly places: readonly OtherEntity[];
  };
}

type OtherType = 'people' | 'organizations' | 'places';
const TYPES: readonly OtherType[] = ['people', 'organizations', 'places'];

const STOP = new Set([
  'a', 'an', 'the', 'i', 'me', 'my', 'we', 'us', 'our', 'you', 'your', 'he', 'him', 'his', 'she', 'her', 'it', 'its', 'they', 'them', 'their',
  'this', 'that', 'these', 'those', 'who', 'what', 'which', 'when', 'where', 'why', 'how', 'and', 'or', 'but', 'if', 'of', 'in', 'on', 'at',
  'to', 'for', 'by', 'with', 'from', 'as', 'is', 'are', 'was', 'were', 'be', 'mr', 'mrs', 'ms', 'dr', 'prof', 'sir', 'madam', 'god',
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'january', 'february', 'march', 'april', 'may', 'june',
  'july', 'august', 'september', 'october', 'november', 'december', 'today', 'yesterday', 'tomorrow', 'north', 'south', 'east', 'west',
]);

/** The requested entities: trimmed, whitespace collapsed, case-insensitive duplicates merged, at most 50. */
export function requestedEntities(input: ResearchInput): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of input.entities ?? []) {
    const name = raw.replace(/\s+/gu, ' ').trim();
    const key = name.toLowerCase();
    if (name === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(name);
    if (out.length >= MAX_ENTITIES) break;
  }
  return out;
}

const namePattern = (name: string, variants: string): string =>
  `${name.split(' ').map(escapeRegExp).join('\\s+')}${variants}`;

/**
 * One regex matching any of the names on word boundaries, each name a
 * capturing group (longest first, so the longer of two overlapping names
 * wins); `which(match)` is the index of the name matched.
 */
function matcher(names: readonly string[], caseInsensitive: boolean, variants: string): { re: RegExp; which: (m: RegExpExecArray) => number } | undefined {
  if (names.length === 0) return undefined;
  const order = names.map((n, i) => ({ n, i })).sort((a, b) => b.n.length - a.n.length || a.i - b.i);
  const re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${order.map((x) => `(${namePattern(x.n, variants)})`).join('|')})(?![\\p{L}\\p{N}])`, caseInsensitive ? 'giu' : 'gu');
  return {
    re,
    which: (m) => {
      for (let g = 1; g < m.length; g++) if (m[g] !== undefined) return order[g - 1]!.i;
      return -1;
    },
  };
}

const REQUESTED_VARIANTS = "(?:['’]s|s['’]|s|es)?";
const FOUND_VARIANTS = "(?:['’]s)?";

const CORPORATE_SUFFIX = /(?<!\s),?\s+(?:Inc|Incorporated|Corp|Corporation|Ltd|Limited|LLC|L\.L\.C|PLC|plc|GmbH|AG|SA|S\.A|NV|N\.V|SE|Co)\.?$/u;

/** A name as compromise returned it, cleaned: surrounding punctuation, possessive, leading "the" and a corporate suffix (Inc, Corp, Ltd, LLC, PLC, GmbH, AG, SA, NV, SE, Co) removed. */
export function normaliseName(raw: string): string {
  let s = raw.replace(/\s+/gu, ' ').trim();
  s = s.replace(/^[^\p{L}\p{N}]+/u, '').replace(/(?<![^\p{L}\p{N}])[^\p{L}\p{N}]+$/u, '');
  s = s.replace(/['’]s$/u, '').replace(/^the\s+/iu, '');
  s = s.replace(CORPORATE_SUFFIX, '').replace(/(?<![^\p{L}\p{N}])[^\p{L}\p{N}]+$/u, '');
  if (/^(?:\p{Lu}\.)+\p{Lu}$/u.test(s)) s += '.';
  return s.trim();
}

/** Whether a cleaned name is worth listing. */
export function isJunkName(name: string): boolean {
  if (name.length < 2 || name.length > 60) return true;
  if (!/^\p{L}/u.test(name)) return true;
  if (!/\p{Lu}/u.test(name)) return true;
  if (STOP.has(name.toLowerCase())) return true;
  const letters = name.match(/\p{L}/gu)?.length ?? 0;
  return letters < 2;
}

interface Found { type: OtherType; key: string; display: string; count: number }

/** People, organisations and places compromise finds in the given sentences (names merged, junk filtered), with how often it found each. */
export function discoverEntities(sentences: readonly Sentence[]): Found[] {
  if (sentences.length === 0) return [];
  const counts = new Map<string, { byType: Record<OtherType, number>; spellings: Map<string, number> }>();
  let views: [OtherType, string[]][];
  try {
    // One document, a line per sentence (compromise ends a sentence at a line break).
    const doc = compromiseNlp()(sentences.map((s) => s.text.replace(/[\r\n\u2028\u2029]+/gu, ' ')).join('\n'));
    views = [['people', doc.people().out('array') as string[]], ['organizations', doc.organizations().out('array') as string[]], ['places', doc.places().out('array') as string[]]];
  } catch {
    views = [];
  }
  for (const [type, names] of views) {
    for (const raw of names) {
      for (const part of raw.split(/[,;]/u)) {
        const name = normaliseName(part);
        if (isJunkName(name)) continue;
        const key = name.toLowerCase();
        let c = counts.get(key);
        if (c === undefined) {
          c = { byType: { people: 0, organizations: 0, places: 0 }, spellings: new Map() };
          counts.set(key, c);
        }
        c.byType[type]++;
        c.spellings.set(name, (c.spellings.get(name) ?? 0) + 1);
      }
    }
  }
  const found: Found[] = [];
  for (const [key, c] of counts) {
    let type: OtherType = 'people';
    for (const t of TYPES) if (c.byType[t] > c.byType[type]) type = t;
    const display = [...c.spellings.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))[0]![0];
    found.push({ type, key, display, count: c.byType.people + c.byType.organizations + c.byType.places });
  }
  // A first or last name alone, when the full name was found too.
  const partial = new Set<string>();
  for (const f of found) {
    if (f.type !== 'people') continue;
    const words = f.key.split(' ');
    if (words.length < 2) continue;
    partial.add(words[0]!);
    partial.add(words[words.length - 1]!);
  }
  return found
    .filter((f) => !(f.type === 'people' && !f.key.includes(' ') && partial.has(f.key)))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const hasCapitalisedWord = (text: string) => /(?:^|[^\p{L}\p{N}])\p{Lu}\p{L}/u.test(text);

export function analyseEntities(corpus: Corpus): EntityAnalysis {
  const order = sourceOrder(corpus);
  const names = requestedEntities(corpus.input);
  const requested = matcher(names, true, REQUESTED_VARIANTS);
  const scanned = rankedSentences(corpus, SCAN_SENTENCES);

  // Discovery over the most relevant sentences with a capitalised word.
  const pool: Sentence[] = [];
  let chars = 0;
  for (const x of scanned) {
    if (pool.length >= DISCOVERY_SENTENCES || chars >= DISCOVERY_CHARS) break;
    if (!hasCapitalisedWord(x.s.text)) continue;
    pool.push(x.s);
    chars += x.s.text.length;
  }
  // Found names that are, contain or are part of a requested name are that entity, not another one.
  const words = (s: string) => ` ${s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '').join(' ')} `;
  const requestedWords = names.map(words);
  const requestedWhole = requested === undefined ? undefined : new RegExp(requested.re.source, 'iu');
  const candidates = discoverEntities(pool).filter((f) => {
    if (requestedWhole?.test(f.display) ?? false) return false;
    const w = words(f.key);
    return !requestedWords.some((n) => n.includes(w));
  });
  const perType: Record<OtherType, Found[]> = { people: [], organizations: [], places: [] };
  for (const f of candidates) if (perType[f.type].length < DISCOVERY_CANDIDATES) perType[f.type].push(f);
  const found = TYPES.flatMap((t) => perType[t]);
  const discovered = matcher(found.map((f) => f.display), false, FOUND_VARIANTS);

  // One pass over the scanned sentences.
  const reqMentions = new Array<number>(names.length).fill(0);
  const reqSources = names.map(() => new Set<string>());
  const reqSentences: Ranked[][] = names.map(() => []);
  const foundMentions = new Array<number>(found.length).fill(0);
  const foundSources = found.map(() => new Set<string>());
  const together: { req: number[]; found: number[] }[] = [];
  for (const x of scanned) {
    const req = new Set<number>();
    if (requested !== undefined) {
      requested.re.lastIndex = 0;
      for (let m = requested.re.exec(x.s.text); m !== null; m = requested.re.exec(x.s.text)) {
        const i = requested.which(m);
        if (i < 0) continue;
        reqMentions[i]!++;
        reqSources[i]!.add(x.s.sourceId);
        req.add(i);
      }
    }
    const fnd = new Set<number>();
    if (discovered !== undefined) {
      discovered.re.lastIndex = 0;
      for (let m = discovered.re.exec(x.s.text); m !== null; m = discovered.re.exec(x.s.text)) {
        const i = discovered.which(m);
        if (i < 0) continue;
        foundMentions[i]!++;
        foundSources[i]!.add(x.s.sourceId);
        fnd.add(i);
      }
    }
    for (const i of req) reqSentences[i]!.push(x);
    if (req.size > 0) together.push({ req: [...req], found: [...fnd] });
  }
  const sourcesInOrder = (set: ReadonlySet<string>) => [...set].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));

  // Other entities: the most mentioned of each type.
  const listed = new Set<number>();
  const other: Record<OtherType, OtherEntity[]> = { people: [], organizations: [], places: [] };
  for (const t of TYPES) {
    const idx = found.map((f, i) => ({ f, i })).filter((x) => x.f.type === t && foundMentions[x.i]! > 0);
    idx.sort((a, b) => foundMentions[b.i]! - foundMentions[a.i]! || b.f.count - a.f.count || (a.f.key < b.f.key ? -1 : a.f.key > b.f.key ? 1 : 0));
    for (const { f, i } of idx.slice(0, OTHER_LIMIT)) {
      listed.add(i);
      other[t].push({ name: f.display, mentions: foundMentions[i]!, sources: sourcesInOrder(foundSources[i]!) });
    }
  }

  // Co-occurrence within sentences.
  const co = names.map(() => new Map<string, number>());
  for (const t of together) {
    const present = [...t.req.map((i) => names[i]!), ...t.found.filter((i) => listed.has(i)).map((i) => found[i]!.display)];
    for (const i of t.req) {
      for (const other of present) if (other !== names[i]) co[i]!.set(other, (co[i]!.get(other) ?? 0) + 1);
    }
  }

  const byText = byPosition(order);
  const entities: EntityReport[] = names.map((name, i) => {
    const mentioning = reqSentences[i]!; // most relevant first
    const statements: Evidence[] = [];
    const texts = new Set<string>();
    for (const x of mentioning) {
      if (statements.length >= STATEMENTS) break;
      if (texts.has(x.s.text) || isBoilerplateSentence(x.s)) continue;
      texts.add(x.s.text);
      statements.push(evidenceOf(x.s));
    }
    const forSentiment = mentioning.slice(0, SENTIMENT_SENTENCES).map((x) => x.s).sort(byText);
    return {
      name,
      mentions: reqMentions[i]!,
      sources: sourcesInOrder(reqSources[i]!),
      co_occurring: [...co[i]!.entries()]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .slice(0, CO_OCCURRING)
        .map(([n, count]) => ({ name: n, count })),
      sentiment: meanSentiment(forSentiment),
      statements,
    };
  });
  return { entities, other_entities: other };
}

const V = nlpVersions();
export const ENTITIES_METHOD = `requested entities matched case-insensitively on word boundaries (with 's, s, es variants); other people, organisations and places by compromise ${V.compromise} (people(), organizations(), places()) over the ${DISCOVERY_SENTENCES} most relevant sentences; sentiment by wink-nlp ${V['wink-nlp']} its.sentiment`;

export const entitiesAnalyser: AnalyserPlugin<'analyser-entities'> = definePlugin({
  name: 'analyser-entities',
  kind: 'analyser',
  id: 'entity_analysis',
  order: 20,
  method: ENTITIES_METHOD,
  description: 'entity_analysis: mentions, sources, co-occurrence, sentiment and statements of the requested entities; other people, organisations and places.',
  applies: (input) => requestedEntities(input).length > 0,
  analyse(corpus: Corpus) {
    const entity_analysis = analyseEntities(corpus);
    const found = entity_analysis.entities.filter((e) => e.mentions > 0).length;
    const o = entity_analysis.other_entities;
    return {
      fields: { entity_analysis },
      notes: [`entity_analysis: ${found} of ${entity_analysis.entities.length} requested entit(ies) named in the sources; ${o.people.length} people, ${o.organizations.length} organisations, ${o.places.length} places found by compromise in the ${DISCOVERY_SENTENCES} most relevant sentences (top ${OTHER_LIMIT} each by mentions); statements: the ${STATEMENTS} most relevant sentences per entity`],
    };
  },
});
