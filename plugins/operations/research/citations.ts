/**
 * Citations of research sources in the eight `citation_format`s, with
 * citation-js (@citation-js/core 0.7 and its CSL, BibTeX and RIS plugins,
 * MIT; the CSL plugin runs citeproc-js, CPAL 1.0 / AGPL 3.0). Deterministic:
 * no clock is read (the accessed date is the source's `fetchedAt`), and the
 * same source gives the same text in every run.
 *
 * Formats (plain text, trimmed, language en-US):
 * - `apa`: the CSL style `apa` bundled with @citation-js/plugin-csl (APA 7th).
 * - `harvard`: the bundled `harvard1` (Cite Them Right Harvard).
 * - `vancouver`: the bundled `vancouver` (NLM / ICMJE).
 * - `mla`, `chicago`, `ieee`: CSL styles not bundled in plugin-csl 0.7,
 *   vendored from citation-style-language/styles under ./csl/ (CC BY-SA 3.0,
 *   see ./csl/README.md) and registered once at module load:
 *   `modern-language-association` (MLA 9th), `chicago-author-date` (Chicago
 *   18th, author-date: its reference-list entries lead with author and year,
 *   like the other author-date formats here, and a report's citations are a
 *   reference list, not footnotes), `ieee` (IEEE Reference Guide 2023).
 * - `ieee` and `vancouver` are numbered styles: the entry keeps its number,
 *   and the number is the source's position in the citations list (1-based),
 *   so `[2] ...` / `2. ...` match the `[n]` markers of the report.
 * - `bibtex`: citation-js's `bibtex` output, keyed by the source id (`src_3`;
 *   `src_<position>` when the id is not a valid key), so the key is stable and
 *   matches the report's source ids. Text fields are escaped for LaTeX
 *   (`\ { } $ & % # _ ^ ~`), non-ASCII kept as UTF-8 (citation-js's ASCII
 *   mode drops characters it has no LaTeX command for, e.g. CJK); URLs have
 *   braces, backslashes and white space percent-encoded; more than 20
 *   authors: the first 20 `and others`. Left as citation-js writes them:
 *   `month = {jul 15}`, `howpublished` repeating the URL in a @misc, and
 *   capital-protecting braces found by an ASCII word test (`{Z}ürich`).
 *   No title: the host is wrapped as CSL "nocase" for the text styles, so
 *   MLA / Chicago title case leaves `example.com` alone.
 * - `ris`: citation-js's `ris` output (its "mixed" spec), rewritten from its
 *   entry objects so no value is wrapped across lines, dates are zero-padded
 *   `YYYY/MM/DD/`, and the authors and date of a NEWS entry (which that spec
 *   drops) are kept. At most 20 authors.
 *
 * CSL-JSON from SourceMeta: authors "Given Family" -> {given, family}
 * (lower-case particles such as "van" and "de" stay with the family name;
 * "Jr." and the like become the suffix; "Family, Given" is read as such);
 * organisations (names with words such as Inc, University, Agency, News,
 * Staff, all-capital acronyms, one-word names, names with digits) ->
 * {literal}. More than 21 authors: the first 20 and the last (every bundled
 * style's et-al rule applies below that; APA 7 shows 19, an ellipsis and the
 * last). `issued` from publishedAt (UTC date-parts; exactly midnight UTC on
 * 1 January is read as a year-only date, the way a bare `2021` was parsed),
 * `accessed` from fetchedAt, container-title, publisher (unless it repeats
 * the container), DOI (normalised, or omitted), URL, volume / issue / page,
 * type from meta.cslType. No title: the URL's host. No date: each style's
 * own "n.d." / "no date".
 *
 * Cost: each CSL style's citeproc engine is built on its first use and kept
 * (a few ms to ~2.5 s for Chicago 18); warmCitations() builds them up front.
 *
 * Never throws on metadata: each format is tried with citation-js, and any
 * failure (or an empty result) falls back to a simple deterministic string
 * for that format, built here.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { CitationFormat, CitationView, ResearchSource, SourceMeta } from '../../../core/research.js';
import { cleanText, normaliseDoi } from './source-meta.js';

// ---------------------------------------------------------------- citation-js

interface CiteInstance {
  format(kind: string, options?: Record<string, unknown>): unknown;
}
interface CitationJs {
  Cite: new (data: unknown, options?: Record<string, unknown>) => CiteInstance;
  plugins: { config: { get(name: string): unknown } };
}

const require = createRequire(import.meta.url);
const citationJs = require('@citation-js/core') as CitationJs;
require('@citation-js/plugin-csl');
require('@citation-js/plugin-bibtex');
require('@citation-js/plugin-ris');

/** The CSL template names citation-js formats each text format with. */
export const CSL_TEMPLATES: Readonly<Record<Exclude<CitationFormat, 'bibtex' | 'ris'>, string>> = {
  apa: 'apa',
  mla: 'modern-language-association',
  chicago: 'chicago-author-date',
  harvard: 'harvard1',
  ieee: 'ieee',
  vancouver: 'vancouver',
};

const VENDORED = ['modern-language-association', 'chicago-author-date', 'ieee'] as const;

/** Reads a vendored style from ./csl/ (the source tree), or from the source tree beside dist/ when running compiled. */
function readStyle(name: string): string {
  const candidates = [`./csl/${name}.csl`, `../../../../plugins/operations/research/csl/${name}.csl`];
  for (const rel of candidates) {
    try {
      return readFileSync(new URL(rel, import.meta.url), 'utf8');
    } catch {
      // next location
    }
  }
  throw new Error(`citations: CSL style ${name}.csl not found beside ${import.meta.url}`);
}

{
  const templates = (citationJs.plugins.config.get('@csl') as { templates: { add(name: string, xml: string): void; has(name: string): boolean } }).templates;
  for (const name of VENDORED) if (!templates.has(name)) templates.add(name, readStyle(name));
}

const bibtexConfig = citationJs.plugins.config.get('@bibtex') as { format: { asciiOnly: boolean; useIdAsLabel: boolean } };

// ---------------------------------------------------------------- CSL-JSON

export interface CslName {
  given?: string;
  family?: string;
  suffix?: string;
  literal?: string;
}

export interface CslItem {
  id: string;
  'citation-key': string;
  type: string;
  title: string;
  author?: CslName[];
  issued?: { 'date-parts': number[][] };
  accessed?: { 'date-parts': number[][] };
  'container-title'?: string;
  publisher?: string;
  DOI?: string;
  URL: string;
  volume?: string;
  issue?: string;
  page?: string;
}

/** A source as citations need it. `id` defaults to `src_<position>`. */
export type CitableSource = ResearchSource | { readonly id?: string; readonly url: string; readonly meta: SourceMeta; readonly fetchedAt: number };

const CSL_TYPES = new Set([
  'article', 'article-journal', 'article-magazine', 'article-newspaper', 'book', 'chapter', 'dataset', 'document', 'entry',
  'entry-dictionary', 'entry-encyclopedia', 'manuscript', 'paper-conference', 'post', 'post-weblog', 'report', 'review',
  'software', 'speech', 'standard', 'thesis', 'webpage',
]);

const ORG_WORDS = new RegExp(
  '(?<![\\p{L}\\p{N}])(?:inc|ltd|llc|llp|plc|gmbh|corp|corporation|company|group|holdings|university|universit(?:ies|ät|at|é|à|a)|college|school|academy|institute|institut|' +
  'institution|association|organi[sz]ation|agency|department|dept|ministry|government|council|committee|commission|foundation|society|office|' +
  'bureau|cent(?:re|er)|team|staff|editors|editorial|newsroom|news|press|media|reuters|bbc|cnn|service|services|network|labs?|laboratory|' +
  'hospital|clinic|federation|consortium|contributors|authority|administration|partners|associates|solutions|systems|technologies)(?![\\p{L}\\p{N}])',
  'iu',
);
const PARTICLES = new Set(['van', 'von', 'der', 'den', 'de', 'del', 'della', 'di', 'da', 'dos', 'das', 'du', 'la', 'le', 'ter', 'ten', 'bin', 'ibn', 'al', 'el', 'zu', 'vom', "d'"]);
const SUFFIXES = /^(?:jr|sr|ii|iii|iv|v)\.?$/i;

/** Whether a name reads as an organisation rather than a person (heuristic; documented above). */
export function isOrganisationName(name: string): boolean {
  const s = name.trim();
  if (ORG_WORDS.test(s)) return true;
  if (/[\d@&/]/.test(s) || /^the\s/i.test(s)) return true;
  if (/^[\p{Lu}\d.\-]{2,}$/u.test(s)) return true;
  const words = s.split(/\s+/);
  return words.length === 1 || words.length > 5;
}

/** A name as CSL: {given, family[, suffix]} for a person, {literal} for an organisation or a one-word name. */
export function cslName(raw: string): CslName | null {
  const name = cleanText(raw, 120).replace(/^by\s+/i, '');
  if (name === '') return null;
  const commas = name.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (commas.length === 2 || commas.length === 3) {
    // "Family, Given", "Family, Jr., Given", "Given Family, Jr."
    if (commas.length === 2 && SUFFIXES.test(commas[1]!)) {
      const person = cslName(commas[0]!);
      return person !== null && person.literal === undefined ? { ...person, suffix: commas[1]! } : { literal: name };
    }
    if (!isOrganisationName(name) && commas.every((p) => !/\d/.test(p))) {
      const [family, mid, given] = commas.length === 3 ? [commas[0]!, commas[1]!, commas[2]!] : [commas[0]!, undefined, commas[1]!];
      if (mid !== undefined && !SUFFIXES.test(mid)) return { literal: name };
      return mid === undefined ? { family, given } : { family, given, suffix: mid };
    }
    return { literal: name };
  }
  if (commas.length > 3 || isOrganisationName(name)) return { literal: name };
  let words = name.split(/\s+/);
  let suffix: string | undefined;
  if (words.length > 2 && SUFFIXES.test(words[words.length - 1]!)) {
    suffix = words[words.length - 1]!;
    words = words.slice(0, -1);
  }
  // The family name starts at the first lower-case particle after the first word ("Ludwig van Beethoven").
  let start = words.length - 1;
  for (let i = 1; i < words.length - 1; i++) {
    if (PARTICLES.has(words[i]!.toLowerCase()) && words[i] === words[i]!.toLowerCase()) {
      start = i;
      break;
    }
  }
  const out: CslName = { family: words.slice(start).join(' '), given: words.slice(0, start).join(' ') };
  if (suffix !== undefined) out.suffix = suffix;
  return out;
}

const MAX_CSL_AUTHORS = 21;
const MAX_LIST_AUTHORS = 20;

/** Authors for the text styles: all up to 21, else the first 20 and the last (so APA 7 can show "..., last"). */
function boundedNames(authors: readonly string[]): CslName[] {
  const names = authors.slice(0, 1000).map(cslName).filter((n): n is CslName => n !== null);
  return names.length <= MAX_CSL_AUTHORS ? names : [...names.slice(0, MAX_CSL_AUTHORS - 1), names[names.length - 1]!];
}

interface DateParts {
  readonly y: number;
  readonly m: number;
  readonly d: number;
  readonly yearOnly: boolean;
}

function partsOf(ms: number | null | undefined): DateParts | null {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return null;
  const t = new Date(ms);
  const y = t.getUTCFullYear();
  if (y < 1 || y > 9999) return null;
  const m = t.getUTCMonth() + 1;
  const d = t.getUTCDate();
  return { y, m, d, yearOnly: m === 1 && d === 1 && ms % 86_400_000 === 0 };
}

const cslDate = (p: DateParts, keepDay = false): { 'date-parts': number[][] } => ({
  'date-parts': [p.yearOnly && !keepDay ? [p.y] : [p.y, p.m, p.d]],
});

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
};

const keyOf = (source: CitableSource, position: number): string => {
  const id = 'id' in source && typeof source.id === 'string' ? source.id : '';
  return /^[A-Za-z][\w:.-]{0,63}$/.test(id) ? id : `src_${position}`;
};

/** A source's CSL-JSON item (the same for every format; BibTeX escapes a copy). */
export function cslItemOf(source: CitableSource, position = 1): CslItem {
  const meta: Partial<SourceMeta> = source.meta ?? {};
  const url = typeof source.url === 'string' ? source.url.trim().slice(0, 2000) : '';
  const key = keyOf(source, position);
  const title = cleanText(meta.title, 500) || hostOf(url) || url || 'Untitled';
  const item: CslItem = {
    id: key,
    'citation-key': key,
    type: typeof meta.cslType === 'string' && CSL_TYPES.has(meta.cslType) ? meta.cslType : 'webpage',
    title,
    URL: url,
  };
  const names = boundedNames(Array.isArray(meta.authors) ? meta.authors.filter((a): a is string => typeof a === 'string') : []);
  if (names.length > 0) item.author = names;
  const issued = partsOf(meta.publishedAt);
  if (issued !== null) item.issued = cslDate(issued);
  const accessed = partsOf('fetchedAt' in source ? source.fetchedAt : null);
  if (accessed !== null) item.accessed = cslDate(accessed, true);
  const container = cleanText(meta.container, 300);
  if (container !== '') item['container-title'] = container;
  const publisher = cleanText(meta.publisher, 300);
  if (publisher !== '' && publisher.toLowerCase() !== container.toLowerCase()) item.publisher = publisher;
  const doi = normaliseDoi(meta.doi);
  if (doi !== null) item.DOI = doi;
  const volume = cleanText(meta.volume, 40);
  if (volume !== '') item.volume = volume;
  const issue = cleanText(meta.issue, 40);
  if (issue !== '') item.issue = issue;
  const page = cleanText(meta.pages, 40);
  if (page !== '') item.page = page;
  return item;
}

// ---------------------------------------------------------------- text styles

function numbered(format: CitationFormat, text: string, position: number): string {
  if (format === 'ieee') return text.replace(/^\[\d+\]\s*/, `[${position}] `);
  if (format === 'vancouver') return text.replace(/^\d+\.\s*/, `${position}. `);
  return text;
}

/**
 * Entries citeproc made, by style and CSL item (the output is a pure function
 * of both): citeproc takes 3 to 6 ms of the event loop per entry, and the
 * same sources come back from one research request to the next. Least
 * recently used entries go first past CSL_MEMO_MAX.
 */
const cslMemo = new Map<string, string>();
export const CSL_MEMO_MAX = 2000;
let cslMemoMax = CSL_MEMO_MAX;

function formatCsl(item: CslItem, format: Exclude<CitationFormat, 'bibtex' | 'ris'>, position: number): string {
  // A title made from the URL's host ("example.com") must not be title-cased into "Example.Com".
  const cased = item.title === hostOf(item.URL) ? { ...item, title: `<span class="nocase">${item.title}</span>` } : item;
  const key = `${format}\u0000${JSON.stringify(cased)}`;
  let text = cslMemo.get(key);
  if (text !== undefined) {
    cslMemo.delete(key);
  } else {
    const out = new citationJs.Cite([cased]).format('bibliography', { format: 'text', template: CSL_TEMPLATES[format], lang: 'en-US' });
    if (typeof out !== 'string') throw new Error('citation-js returned no text');
    text = out.replace(/(?<!\s)\s*\n\s*/g, ' ').trim();
    if (text === '') throw new Error('citation-js returned an empty entry');
    if (cslMemo.size >= cslMemoMax) cslMemo.delete(cslMemo.keys().next().value!);
  }
  cslMemo.set(key, text);
  return numbered(format, text, position);
}

/** Entries in the citeproc memo (tests). */
export const cslMemoSize = (): number => cslMemo.size;
/** Empties the memo and sets its bound (tests; the default is CSL_MEMO_MAX). */
export function resetCslMemo(max = CSL_MEMO_MAX): void {
  cslMemo.clear();
  cslMemoMax = Math.max(1, max);
}

// ---------------------------------------------------------------- BibTeX

const TEX: Readonly<Record<string, string>> = {
  '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', $: '\\$', '&': '\\&', '%': '\\%', '#': '\\#', _: '\\_', '^': '\\^{}', '~': '\\~{}',
};
const tex = (s: string): string => s.replace(/[\\{}$&%#_^~]/g, (c) => TEX[c]!);
const bibUrl = (s: string): string => s.replace(/[{}\\\s]/g, (c) => encodeURIComponent(c));

function formatBibtex(item: CslItem): string {
  const escaped: CslItem = {
    ...item,
    title: tex(item.title),
    URL: bibUrl(item.URL),
  };
  const names = item.author ?? [];
  if (names.length > 0) {
    const list: CslName[] = names.slice(0, MAX_LIST_AUTHORS).map((n) => {
      const e: CslName = {};
      if (n.literal !== undefined) e.literal = tex(n.literal);
      if (n.given !== undefined) e.given = tex(n.given);
      if (n.family !== undefined) e.family = tex(n.family);
      if (n.suffix !== undefined) e.suffix = tex(n.suffix);
      return e;
    });
    if (names.length > MAX_LIST_AUTHORS) list.push({ literal: 'others' });
    escaped.author = list;
  }
  for (const k of ['container-title', 'publisher', 'volume', 'issue', 'page'] as const) {
    const v = item[k];
    if (v !== undefined) escaped[k] = tex(v);
  }
  if (item.DOI !== undefined) escaped.DOI = bibUrl(item.DOI).replace(/[%#&_$^~]/g, (c) => TEX[c]!);
  const before = bibtexConfig.format.asciiOnly;
  bibtexConfig.format.asciiOnly = false;
  let out: unknown;
  try {
    out = new citationJs.Cite([escaped]).format('bibtex', { format: 'text' });
  } finally {
    bibtexConfig.format.asciiOnly = before;
  }
  if (typeof out !== 'string' || !out.trimStart().startsWith('@')) throw new Error('citation-js returned no BibTeX');
  // BibTeX reads "and others" (unbraced) as et al.
  return out.replace(/ and \{others\}(?=\},?\n)/, ' and others').trim();
}

// ---------------------------------------------------------------- RIS

const risName = (n: CslName): string =>
  n.literal ?? [n.family, n.given, n.suffix].filter((x): x is string => x !== undefined && x !== '').join(', ');

const risDate = (p: DateParts, yearOnly = p.yearOnly): string =>
  yearOnly ? `${p.y}///` : `${p.y}/${String(p.m).padStart(2, '0')}/${String(p.d).padStart(2, '0')}/`;

const RIS_DATE_TAGS = new Set(['DA', 'Y1', 'Y2', 'M1']);

function formatRis(item: CslItem, source: CitableSource): string {
  const limited: CslItem = { ...item };
  if (item.author !== undefined) limited.author = item.author.slice(0, MAX_LIST_AUTHORS);
  // plugin-ris throws on a DOI its own pattern does not match (e.g. ending in '.'): give it only one it accepts.
  if (limited.DOI !== undefined && !/10(?:\.[0-9]{4,})?\/[^\s]*[^\s.,]/.test(limited.DOI)) delete limited.DOI;
  const entries = new citationJs.Cite([limited]).format('ris', { format: 'object' });
  if (!Array.isArray(entries) || entries.length !== 1 || typeof entries[0] !== 'object' || entries[0] === null) throw new Error('citation-js returned no RIS');
  const entry = entries[0] as Record<string, unknown>;
  const ty = typeof entry.TY === 'string' ? entry.TY : 'GEN';
  const lines: [string, string][] = [];
  for (const [tag, value] of Object.entries(entry)) {
    if (tag === 'TY') continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === undefined || v === null) continue;
      let s = String(v).replace(/\s+/g, ' ').trim();
      if (RIS_DATE_TAGS.has(tag)) {
        const m = /^(\d{1,4})\/(\d{0,2})\/(\d{0,2})\/(.*)$/.exec(s);
        if (m !== null) s = `${m[1]}/${m[2] === '' ? '' : m[2]!.padStart(2, '0')}/${m[3] === '' ? '' : m[3]!.padStart(2, '0')}/${m[4]}`;
      }
      if (s !== '') lines.push([tag, s]);
    }
  }
  const has = (tag: string): boolean => lines.some(([t]) => t === tag);
  // The spec citation-js uses maps no author (and only the year) for NEWS; keep them.
  const extra: [string, string][] = [];
  if (!has('AU') && !has('A1') && item.author !== undefined) for (const n of limited.author ?? []) extra.push(['AU', risName(n)]);
  const issued = partsOf(source.meta?.publishedAt);
  if (ty === 'NEWS' && !has('DA') && issued !== null) extra.push(['DA', risDate(issued)]);
  return [`TY  - ${ty}`, ...[...extra, ...lines].map(([t, v]) => `${t}  - ${v}`), 'ER  - '].join('\n');
}

// ---------------------------------------------------------------- fallbacks

const joinNames = (names: readonly string[], last: string): string =>
  names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')}${last}${names[names.length - 1]}`;

/** The deterministic text used when citation-js fails on a source (or returns nothing). */
export function fallbackCitation(item: CslItem, format: CitationFormat, position: number): string {
  const names = (item.author ?? []).map((n) => n.literal ?? [n.given, n.family, n.suffix].filter(Boolean).join(' ')).filter((n) => n !== '');
  const shown = names.length > 6 ? [...names.slice(0, 6), 'et al.'] : names;
  const authors = joinNames(shown, names.length > 6 ? ', ' : format === 'apa' ? ', & ' : ' and ');
  const issued = item.issued?.['date-parts'][0];
  const year = issued?.[0] === undefined ? null : String(issued[0]);
  const acc = item.accessed?.['date-parts'][0];
  const accessed = acc === undefined ? null : acc.map((x, i) => (i === 0 ? String(x) : String(x).padStart(2, '0'))).join('-');
  const container = item['container-title'];
  const link = item.DOI !== undefined ? `https://doi.org/${item.DOI}` : item.URL;
  const t = item.title;
  switch (format) {
    case 'apa':
      return authors !== ''
        ? `${authors}. (${year ?? 'n.d.'}). ${t}. ${container !== undefined ? `${container}. ` : ''}${link}`
        : `${t}. (${year ?? 'n.d.'}). ${container !== undefined ? `${container}. ` : ''}${link}`;
    case 'mla':
      return `${authors !== '' ? `${authors}. ` : ''}“${t}.” ${container !== undefined ? `${container}, ` : ''}${year !== null ? `${year}, ` : ''}${link}.`;
    case 'chicago':
      return `${authors !== '' ? `${authors}. ` : ''}${year === null ? 'n.d.' : `${year}.`} “${t}.” ${container !== undefined ? `${container}. ` : ''}${link}.`;
    case 'harvard':
      return `${authors !== '' ? `${authors} ` : ''}(${year ?? 'no date'}) ${t}. ${container !== undefined ? `${container}. ` : ''}Available at: ${link}${accessed !== null ? ` (Accessed: ${accessed})` : ''}.`;
    case 'ieee':
      return `[${position}] ${authors !== '' ? `${authors}, ` : ''}“${t},” ${container !== undefined ? `${container}, ` : ''}${year !== null ? `${year}. ` : ''}[Online]. Available: ${link}`;
    case 'vancouver':
      return `${position}. ${authors !== '' ? `${authors}. ` : ''}${t} [Internet]. ${container !== undefined ? `${container}; ` : ''}${year !== null ? `${year} ` : ''}${accessed !== null ? `[cited ${accessed}]. ` : ''}Available from: ${link}`;
    case 'bibtex': {
      const fields: [string, string][] = [['title', `{${tex(t)}}`]];
      if (names.length > 0) fields.push(['author', `{${names.slice(0, MAX_LIST_AUTHORS).map((n) => `{${tex(n)}}`).join(' and ')}${names.length > MAX_LIST_AUTHORS ? ' and others' : ''}}`]);
      if (year !== null) fields.push(['year', `{${year}}`]);
      if (container !== undefined) fields.push(['howpublished', `{${tex(container)}}`]);
      if (item.DOI !== undefined) fields.push(['doi', `{${bibUrl(item.DOI)}}`]);
      fields.push(['url', `{${bibUrl(item.URL)}}`]);
      if (accessed !== null) fields.push(['urldate', `{${accessed}}`]);
      return `@misc{${item.id},\n${fields.map(([k, v]) => `\t${k} = ${v},`).join('\n')}\n}`;
    }
    case 'ris': {
      const lines = ['TY  - ELEC', ...(item.author ?? []).slice(0, MAX_LIST_AUTHORS).map((n) => `AU  - ${risName(n)}`), `TI  - ${t}`];
      if (issued !== undefined) lines.push(`PY  - ${issued[0]}`);
      if (container !== undefined) lines.push(`T2  - ${container}`);
      if (item.DOI !== undefined) lines.push(`DO  - ${item.DOI}`);
      lines.push(`UR  - ${item.URL}`, `ID  - ${item.id}`, 'ER  - ');
      return lines.join('\n');
    }
    default:
      return `${authors !== '' ? `${authors}. ` : ''}${t}. ${link}`;
  }
}

// ---------------------------------------------------------------- API

/**
 * One source's citation in `format`, as plain text (multi-line for bibtex
 * and ris). `position` (1-based) numbers ieee and vancouver entries and keys
 * a source without a usable id. Never throws.
 */
export function formatCitation(source: CitableSource, format: CitationFormat, position = 1): string {
  const pos = Number.isSafeInteger(position) && position > 0 ? position : 1;
  let item: CslItem;
  try {
    item = cslItemOf(source, pos);
  } catch {
    item = { id: `src_${pos}`, 'citation-key': `src_${pos}`, type: 'webpage', title: 'Untitled', URL: String((source as { url?: unknown } | null)?.url ?? '') };
  }
  try {
    switch (format) {
      case 'bibtex':
        return formatBibtex(item);
      case 'ris':
        return formatRis(item, source);
      default:
        if (!(format in CSL_TEMPLATES)) throw new Error(`unknown citation format ${String(format)}`);
        return formatCsl(item, format, pos);
    }
  } catch {
    return fallbackCitation(item, format, pos);
  }
}

/**
 * Builds the citeproc engines of the given formats now (each style's first
 * use costs from a few ms to about 2.5 s for Chicago 18, whose style is
 * 170 kB), so a service can pay it at start-up instead of on a request.
 */
export function warmCitations(formats: readonly CitationFormat[] = Object.keys(CSL_TEMPLATES) as CitationFormat[]): void {
  const probe = { id: 'src_1', url: 'https://example.org/', fetchedAt: 0, meta: { title: 'Warm-up', authors: ['Ann Lee'], publishedAt: 0, container: null, publisher: null, doi: null, cslType: 'webpage' } };
  for (const f of formats) formatCitation(probe, f);
}

/** Citations of the sources in their order: `[n]` / `n.` of ieee and vancouver is the position in this list. */
export function formatCitations(sources: readonly ResearchSource[], format: CitationFormat): CitationView[] {
  // Numbered styles (IEEE, Vancouver) use the source's own number, so [3] means src_3 throughout a report.
  return sources.map((s, i) => ({ source_id: s.id, url: s.url, format, text: formatCitation(s, format, Number(/^src_(\d+)$/.exec(s.id)?.[1] ?? i + 1)) }));
}
