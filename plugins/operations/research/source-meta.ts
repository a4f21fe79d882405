/**
 * Citation metadata of a research source (SourceMeta) from what the scrape
 * extracted (`meta_data`, `schema_data`) and what the index stored. Pure and
 * deterministic: no clock, no I/O.
 *
 * Sources, strongest first, field by field (the first one that yields a
 * usable value wins; a value that does not parse is skipped, not fatal):
 *
 * | field       | order                                                                                              |
 * |-------------|----------------------------------------------------------------------------------------------------|
 * | title       | citation_title, JSON-LD headline / name, dc.title, og:title, indexed title, the page title, twitter:title, the URL's host |
 * | authors     | citation_author (every one, in order) or citation_authors (`;`-separated), JSON-LD author (Person / Organization, arrays, `@id` references into the page's graph), dc.creator, article:author (names, not profile URLs), meta author, the indexed author |
 * | publishedAt | citation_publication_date, citation_date, citation_online_date, JSON-LD datePublished, dc.date / dcterms.issued / dcterms.created / dc.date.issued, prism.publicationdate, article:published_time, the indexed date, JSON-LD dateCreated |
 * | container   | citation_journal_title, citation_conference_title, prism.publicationname, JSON-LD isPartOf (Periodical, PublicationVolume / Issue, WebSite), og:site_name, application-name, the indexed site name, JSON-LD publisher.name |
 * | publisher   | citation_publisher, dc.publisher, JSON-LD publisher.name, citation_technical_report_institution |
 * | doi         | citation_doi, prism.doi, dc.identifier, JSON-LD doi / identifier (string or PropertyValue DOI) / sameAs / @id / url on doi.org, the indexed DOI, the page URL when it is a doi.org link |
 * | volume      | citation_volume, prism.volume, JSON-LD volumeNumber (of isPartOf)                                  |
 * | issue       | citation_issue, prism.number, JSON-LD issueNumber (of isPartOf)                                    |
 * | pages       | citation_firstpage-citation_lastpage, prism.startingpage-prism.endingpage, JSON-LD pageStart-pageEnd / pagination |
 *
 * A search provider's record (`provider`: DOI, authors, venue) enters
 * this table in one of two places. From a scholarly index (`authoritative`:
 * the result has a DOI or document type academic, or only academic
 * providers named it; gather.ts decides), it comes FIRST for doi, authors
 * and container: a scholarly index's record is curated (ordered full author
 * lists, the journal's name, the registered DOI), while a publisher's page
 * often carries the repository's or platform's name as site name, a
 * truncated author list, or no tags at all (a PDF). Otherwise (a news or
 * web provider, whose "authors" may be a submitter and "venue" an
 * aggregator) it comes LAST: after the indexed DOI / site name / author,
 * so it only fills gaps. Titles, dates, publisher, volume, issue and pages
 * keep the page-first order above (the provider's title and date enter as
 * `indexed`): a page's citation_publication_date is the exact date, while
 * a provider's date may be when an aggregator saw the item. An
 * authoritative record without a stronger signal makes cslType
 * `article-journal`.
 *
 * The JSON-LD item read is the page's most specific creative work:
 * ScholarlyArticle > news articles > Report > other articles / blog posts >
 * social and forum postings > a WebPage's `mainEntity` > WebPage; microdata
 * items (schema.org types) are read the same way.
 *
 * cslType, from the strongest signal: citation_journal_title or a
 * ScholarlyArticle -> `article-journal`; citation_technical_report_* or a
 * Report -> `report`; a NewsArticle (and its subtypes) -> `article-newspaper`;
 * a SocialMediaPosting / DiscussionForumPosting -> `post`; else the indexed
 * document type (academic, news, report, social -> the same four);
 * otherwise `webpage`.
 *
 * Cleaning: text values have HTML entities decoded and tags stripped,
 * white space collapsed, control characters dropped, and are bounded
 * (titles 500 characters, names 120, other fields 300). Authors: "Family,
 * Given" becomes "Given Family" (not when the part after the comma is a
 * suffix such as "Jr." or "Inc."), duplicates (case-insensitive) and URLs are
 * dropped, at most 100 are kept. A page title ending in " | Site" / " - Site"
 * where Site is the container loses that suffix (the indexed title and the
 * page title; a search result's title is usually the page's <title>). Dates
 * parse strictly (dateFromMeta): anything else is no date rather than a
 * guessed one.
 */
import { decodeHTML } from 'entities';
import type { SourceMeta } from '../../../core/research.js';
import { stripHtmlComments } from '../../../core/text.js';

export interface SourceMetaInput {
  readonly url: string;
  /** The page's (or indexed document's) title as the caller knows it. */
  readonly title?: string | null;
  /** The meta_data extractor's output (open_graph, twitter, meta, title...). A flat tag -> value record is read too. */
  readonly metaData?: Record<string, unknown> | null;
  /** The schema_data extractor's output (JSON-LD, microdata, RDFa items). */
  readonly schemaData?: readonly unknown[] | null;
  /** The local index's document fields (or a search result's), when known. */
  readonly indexed?: {
    readonly title?: string | null;
    readonly author?: string | null;
    readonly siteName?: string | null;
    readonly doi?: string | null;
    readonly publishedAt?: number | null;
    readonly type?: string | null;
  } | null;
  /**
   * A search provider's record of the work (ProviderResult's scholarly
   * fields), when the source came from a result that has them. With
   * `authoritative` (a scholarly index's record: see gather.ts), its DOI,
   * authors and venue win over the page's tags; without, they only fill
   * what the page, its structured data and the index leave empty.
   */
  readonly provider?: {
    readonly doi?: string | null;
    readonly authors?: readonly string[] | null;
    readonly venue?: string | null;
    readonly authoritative?: boolean;
  } | null;
}

export const MAX_AUTHORS = 100;
const MAX_TITLE = 500;
const MAX_NAME = 120;
const MAX_FIELD = 300;
/** JSON-LD items looked at (a hostile page may hold thousands). */
const MAX_ITEMS = 200;

// ---------------------------------------------------------------- text

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const own = (o: Obj, k: string): unknown => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b\u2028\u2029\ufeff]/g;

/** Cut to `max` UTF-16 units without splitting a surrogate pair, with an ellipsis when cut. */
function bound(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max - 1;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${s.slice(0, end).trimEnd()}…`;
}

/** Plain text: entities decoded, tags stripped, white space collapsed, controls dropped, bounded. */
export function cleanText(v: unknown, max = MAX_FIELD): string {
  if (typeof v !== 'string' && typeof v !== 'number') return '';
  let s = String(v);
  if (s.length > 20_000) s = s.slice(0, 20_000);
  if (s.includes('&')) s = decodeHTML(s);
  // Tags (and a tag cut off at the end); a lone '<' of prose ("a < b") stays.
  s = stripHtmlComments(s.replace(/<\/?[a-zA-Z][^<>]*>?/g, ' '), ' ');
  s = s.replace(CONTROL, '').replace(/[\s\u00a0]+/g, ' ').trim();
  // Lone surrogates (from a cut or a broken page) would break JSON consumers.
  s = s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '');
  return bound(s, max);
}

const textOrNull = (v: unknown, max = MAX_FIELD): string | null => {
  const s = cleanText(v, max);
  return s === '' ? null : s;
};

// ---------------------------------------------------------------- dates

const DATE_RE = /^(\d{4})(?:([-/.])(\d{1,2})(?:\2(\d{1,2}))?)?$/;
const COMPACT_RE = /^(\d{4})(\d{2})(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/;

function utc(y: number, m: number, d: number, hh = 0, mm = 0, ss = 0, ms = 0): number | null {
  if (y < 1000 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60) return null;
  const t = Date.UTC(y, m - 1, d, hh, mm, Math.min(ss, 59), ms);
  const back = new Date(t);
  // Rejects 2021-02-30 and the like (Date.UTC would roll them over).
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d) return null;
  return t;
}

/**
 * A publication date from a metadata value, as epoch ms (UTC), or null.
 * Strict: `YYYY`, `YYYY-MM`, `YYYY-MM-DD` (also with `/` or `.`, one-digit
 * month and day allowed), `YYYYMMDD`, and ISO 8601 date-times
 * (`YYYY-MM-DDTHH:MM[:SS[.fff]]` with `Z`, `±HH:MM`, `±HHMM`, `±HH`, or none
 * = UTC). A bare year is 1 January, a year and month the 1st. Years
 * 1000..9999; impossible dates (2021-02-30) are null. A finite number is
 * taken as epoch ms. An array: its first value that parses.
 */
export function dateFromMeta(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && Math.abs(value) <= 8.64e15 ? yearOk(value) : null;
  if (Array.isArray(value)) {
    for (const v of value.slice(0, 10)) {
      const d = dateFromMeta(v);
      if (d !== null) return d;
    }
    return null;
  }
  if (isObj(value)) return dateFromMeta(own(value, '@value') ?? own(value, 'value'));
  if (typeof value !== 'string') return null;
  const s = value.trim();
  if (s.length > 40) return null;
  let m = DATE_RE.exec(s);
  if (m !== null) return utc(+m[1]!, m[3] === undefined ? 1 : +m[3], m[4] === undefined ? 1 : +m[4]);
  m = COMPACT_RE.exec(s);
  if (m !== null) return utc(+m[1]!, +m[2]!, +m[3]!);
  m = DATETIME_RE.exec(s);
  if (m === null) return null;
  const ms = m[7] === undefined ? 0 : Math.floor(+`0.${m[7]}` * 1000);
  const base = utc(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, m[6] === undefined ? 0 : +m[6], ms);
  if (base === null) return null;
  const zone = m[8];
  if (zone === undefined || /^(?:z|utc|gmt)$/i.test(zone)) return base;
  const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
  const h = +z[2]!;
  const min = z[3] === undefined ? 0 : +z[3];
  if (h > 14 || min > 59) return null;
  return base - (z[1] === '-' ? -1 : 1) * (h * 60 + min) * 60_000;
}

function yearOk(t: number): number | null {
  const y = new Date(t).getUTCFullYear();
  return y >= 1000 && y <= 9999 ? t : null;
}

// ---------------------------------------------------------------- DOIs

/** `10.<registrant>/<suffix>`: the registrant 4 to 9 digits (dot-separated sub-parts allowed), a suffix with no white space. */
const DOI_RE = /^10\.\d{4,9}(?:\.\d+)*\/\S+$/;

/**
 * A DOI in its bare form (`10.1038/nphys1170`), or null. Accepts `doi:` and
 * doi.org / dx.doi.org URLs (percent-decoded), drops trailing punctuation
 * (`.,;:`) and closing brackets that have no opening one, and refuses
 * anything that is not `10.NNNN/suffix`, longer than 200 characters, or
 * holds quotes, angle brackets or control characters.
 */
export function normaliseDoi(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  let s = value.trim();
  if (s.length === 0 || s.length > 400) return null;
  s = s.replace(/^(?:https?:\/\/)?(?:dx\.)?doi\.org\//i, '').replace(/^doi:\s*/i, '').replace(/^info:doi\//i, '');
  if (/%[0-9a-f]{2}/i.test(s)) {
    try {
      s = decodeURIComponent(s);
    } catch {
      return null;
    }
  }
  s = s.replace(/(?<![.,;:])[.,;:]+$/, '');
  // An unbalanced closing bracket is the prose around the DOI, not the DOI.
  while (/[)\]}]$/.test(s)) {
    const close = s[s.length - 1]!;
    const open = close === ')' ? '(' : close === ']' ? '[' : '{';
    if (s.split(open).length >= s.split(close).length) break;
    s = s.slice(0, -1).replace(/(?<![.,;:])[.,;:]+$/, '');
  }
  if (s.length > 200 || !DOI_RE.test(s) || /["'<>\\\u0000-\u001f\u007f]/.test(s)) return null;
  return s;
}

// ---------------------------------------------------------------- names

const NAME_SUFFIX = /^(?:jr|sr|ii|iii|iv|v|phd|md|esq|inc|ltd|llc|plc|gmbh|co|corp|s\.?a|ag|bv|nv)\.?$/i;

/** "Family, Given" as "Given Family"; other shapes as given. */
function displayName(raw: string): string {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 2 && parts[0] !== '' && parts[1] !== '' && !NAME_SUFFIX.test(parts[1]!) && !/\s(?:and|&)\s/i.test(raw)) {
    return `${parts[1]} ${parts[0]}`;
  }
  return raw;
}

function nameFrom(v: unknown): string | null {
  if (typeof v === 'string') {
    const s = cleanText(v, MAX_NAME);
    if (s === '' || /^(?:https?:\/\/|www\.)/i.test(s) || /^@\w/.test(s) || /^[\p{P}\p{S}\p{N}\s]+$/u.test(s)) return null;
    return displayName(s.replace(/^by\s+/i, ''));
  }
  return null;
}

/** Splits an author string that holds several names ("A and B", "A; B", "A, B, C" when each part is a full name). */
export function splitAuthors(s: string): string[] {
  const t = s.trim();
  if (t === '') return [];
  if (t.includes(';')) return t.split(';').map((x) => x.trim()).filter((x) => x !== '');
  const and = t.split(/(?<!\s)\s+(?:and|&)\s+/i);
  const pieces = and.flatMap((p) => {
    const commas = p.split(',').map((x) => x.trim()).filter((x) => x !== '');
    // "A Smith, B Jones" (every part a full name) splits; "Smith, John" and "Acme, Inc." do not.
    return commas.length > 1 && commas.every((c) => c.split(/\s+/).length >= 2 && !NAME_SUFFIX.test(c)) ? commas : [p.trim()];
  });
  return pieces.filter((x) => x !== '');
}

class Names {
  readonly list: string[] = [];
  private readonly seen = new Set<string>();
  add(name: string | null): void {
    if (name === null || this.list.length >= MAX_AUTHORS) return;
    const key = name.toLowerCase();
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.list.push(name);
  }
}

// ---------------------------------------------------------------- meta tags

type Tags = (key: string) => string[];

function tagReader(metaData: Record<string, unknown> | null | undefined): Tags {
  if (!isObj(metaData)) return () => [];
  const groups: Obj[] = [];
  for (const g of ['meta', 'open_graph', 'twitter']) {
    const v = own(metaData, g);
    if (isObj(v)) groups.push(v);
  }
  groups.push(metaData);
  const values = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return (key: string): string[] => {
    // og:* lives in open_graph without its prefix; twitter:* in twitter without its.
    const lookups: [Obj | undefined, string][] = key.startsWith('og:')
      ? [[isObj(own(metaData, 'open_graph')) ? (own(metaData, 'open_graph') as Obj) : undefined, key.slice(3)], [metaData, key]]
      : key.startsWith('twitter:')
        ? [[isObj(own(metaData, 'twitter')) ? (own(metaData, 'twitter') as Obj) : undefined, key.slice(8)], [metaData, key]]
        : groups.map((g): [Obj, string] => [g, key]);
    for (const [g, k] of lookups) {
      if (g === undefined) continue;
      const v = values(own(g, k));
      if (v.length > 0) return v.slice(0, 1000);
    }
    return [];
  };
}

const firstTag = (tags: Tags, ...keys: string[]): string | null => {
  for (const k of keys) for (const v of tags(k)) {
    const s = textOrNull(v);
    if (s !== null) return s;
  }
  return null;
};

// ---------------------------------------------------------------- JSON-LD / microdata

const typeNames = (item: Obj): string[] => {
  const t = own(item, '@type') ?? own(item, 'type');
  const list = Array.isArray(t) ? t : [t];
  return list.filter((x): x is string => typeof x === 'string').map((x) => x.replace(/^.*[/:#]/, ''));
};

const SCHOLARLY = new Set(['ScholarlyArticle', 'MedicalScholarlyArticle']);
const NEWS = new Set(['NewsArticle', 'AnalysisNewsArticle', 'AskPublicNewsArticle', 'BackgroundNewsArticle', 'OpinionNewsArticle', 'ReportageNewsArticle', 'ReviewNewsArticle', 'LiveBlogPosting']);
const REPORT = new Set(['Report']);
const ARTICLE = new Set(['Article', 'BlogPosting', 'TechArticle', 'AdvertiserContentArticle', 'SatiricalArticle', 'Blog', 'Chapter', 'Thesis', 'CreativeWork']);
const POSTING = new Set(['SocialMediaPosting', 'DiscussionForumPosting']);
const PAGE = new Set(['WebPage', 'ItemPage', 'AboutPage', 'FAQPage', 'QAPage', 'CollectionPage', 'ProfilePage', 'MedicalWebPage']);

function rank(item: Obj): number {
  const types = typeNames(item);
  const has = (set: ReadonlySet<string>): boolean => types.some((t) => set.has(t));
  if (has(SCHOLARLY)) return 6;
  if (has(NEWS)) return 5;
  if (has(REPORT)) return 4;
  if (has(ARTICLE)) return 3;
  if (has(POSTING)) return 2;
  if (has(PAGE)) return 1;
  return 0;
}

/** Microdata / RDFa `{ type: [...], properties: { k: [v] } }` as a JSON-LD-like object (first values; nested items converted). */
function fromMicrodata(item: Obj, depth = 0): Obj {
  const props = own(item, 'properties');
  const out: Obj = { '@type': own(item, 'type') };
  if (typeof own(item, 'id') === 'string') out['@id'] = own(item, 'id');
  if (!isObj(props) || depth > 4) return out;
  for (const [k, vs] of Object.entries(props)) {
    const list = (Array.isArray(vs) ? vs : [vs]).slice(0, MAX_AUTHORS).map((v) => (isObj(v) && isObj(own(v, 'properties')) ? fromMicrodata(v, depth + 1) : v));
    const key = k.replace(/^.*[/:#]/, '');
    Object.defineProperty(out, key, { value: list.length === 1 ? list[0] : list, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

interface Graph {
  readonly main: Obj | undefined;
  readonly byId: ReadonlyMap<string, Obj>;
}

function readGraph(schemaData: readonly unknown[] | null | undefined): Graph {
  const byId = new Map<string, Obj>();
  const items: Obj[] = [];
  if (!Array.isArray(schemaData)) return { main: undefined, byId };
  for (const raw of schemaData.slice(0, MAX_ITEMS)) {
    if (!isObj(raw) || own(raw, 'error') !== undefined) continue;
    const fmt = own(raw, 'format');
    const item = fmt === 'microdata' || fmt === 'rdfa' ? fromMicrodata(raw) : raw;
    items.push(item);
    const id = own(item, '@id');
    if (typeof id === 'string' && !byId.has(id)) byId.set(id, item);
  }
  let best: Obj | undefined;
  let bestRank = 0;
  const consider = (item: Obj): void => {
    const r = rank(item);
    if (r > bestRank) {
      best = item;
      bestRank = r;
    }
  };
  for (const item of items) {
    consider(item);
    // A WebPage's mainEntity (inline, or by @id) may be the article itself.
    const main = deref(own(item, 'mainEntity'), byId);
    if (isObj(main)) consider(main);
  }
  return { main: best, byId };
}

/** An `{ "@id": ... }` reference replaced by the graph item it names (one level). */
function deref(v: unknown, byId: ReadonlyMap<string, Obj>): unknown {
  if (Array.isArray(v)) return v.length > 0 ? deref(v[0], byId) : undefined;
  if (!isObj(v)) return v;
  const id = own(v, '@id');
  if (typeof id === 'string' && own(v, 'name') === undefined && byId.has(id)) return byId.get(id);
  return v;
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v.slice(0, 1000) : v === undefined || v === null ? [] : [v]);

/** The name of a string, a `{ name }` object, or a `{ @value }`. */
function nameOf(v: unknown, byId: ReadonlyMap<string, Obj>): string | null {
  const d = deref(v, byId);
  if (typeof d === 'string') return textOrNull(d);
  if (!isObj(d)) return null;
  const n = own(d, 'name') ?? own(d, '@value') ?? own(d, 'legalName') ?? own(d, 'alternateName');
  if (typeof n === 'string') return textOrNull(n);
  if (Array.isArray(n) && typeof n[0] === 'string') return textOrNull(n[0]);
  return null;
}

function personName(v: unknown, byId: ReadonlyMap<string, Obj>): string | null {
  const d = deref(v, byId);
  if (typeof d === 'string') return nameFrom(d);
  if (!isObj(d)) return null;
  const n = own(d, 'name');
  if (typeof n === 'string' || Array.isArray(n)) return nameFrom(Array.isArray(n) ? n[0] : n);
  const given = cleanText(own(d, 'givenName'), MAX_NAME);
  const family = cleanText(own(d, 'familyName'), MAX_NAME);
  if (family !== '') return given === '' ? family : `${given} ${family}`;
  return null;
}

function doiOfLd(item: Obj, byId: ReadonlyMap<string, Obj>): string | null {
  const direct = normaliseDoi(own(item, 'doi'));
  if (direct !== null) return direct;
  for (const id of list(own(item, 'identifier'))) {
    const d = deref(id, byId);
    if (typeof d === 'string') {
      const n = normaliseDoi(d);
      if (n !== null) return n;
    } else if (isObj(d)) {
      const prop = own(d, 'propertyID');
      const value = own(d, 'value') ?? own(d, '@value');
      if (typeof prop !== 'string' || /doi/i.test(prop)) {
        const n = normaliseDoi(value);
        if (n !== null) return n;
      }
    }
  }
  for (const key of ['sameAs', '@id', 'url']) {
    for (const v of list(own(item, key))) {
      if (typeof v === 'string' && /^(?:https?:\/\/)?(?:dx\.)?doi\.org\//i.test(v.trim())) {
        const n = normaliseDoi(v);
        if (n !== null) return n;
      }
    }
  }
  return null;
}

function textField(v: unknown, max = MAX_FIELD): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (Array.isArray(v)) return v.length > 0 ? textField(v[0], max) : null;
  if (isObj(v)) return textField(own(v, '@value') ?? own(v, 'name'), max);
  return textOrNull(v, max);
}

/** Container, volume and issue from a JSON-LD isPartOf chain (Issue -> Volume -> Periodical; or a WebSite). */
function partOf(item: Obj, byId: ReadonlyMap<string, Obj>): { container: string | null; volume: string | null; issue: string | null } {
  let container: string | null = null;
  let volume: string | null = null;
  let issue: string | null = null;
  let node = deref(own(item, 'isPartOf'), byId);
  for (let i = 0; i < 4 && isObj(node); i++) {
    const types = typeNames(node);
    if (types.includes('PublicationIssue')) issue ??= textField(own(node, 'issueNumber'), 40);
    else if (types.includes('PublicationVolume')) volume ??= textField(own(node, 'volumeNumber'), 40);
    else if (!types.some((t) => PAGE.has(t))) {
      container ??= nameOf(node, byId);
      if (container !== null) break;
    }
    node = deref(own(node, 'isPartOf'), byId);
  }
  return { container, volume, issue };
}

// ---------------------------------------------------------------- the record

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
};

const pickFirst = <T>(...values: (T | null | undefined)[]): T | null => {
  for (const v of values) if (v !== null && v !== undefined) return v;
  return null;
};

const pages = (first: string | null, last: string | null): string | null => {
  if (first === null) return null;
  return last === null || last === first ? first : `${first}-${last}`;
};

/** A page title without a trailing " | Site" / " - Site" / " — Site" when Site is the container. */
function withoutSiteSuffix(title: string, container: string | null): string {
  if (container === null) return title;
  const m = /^(.+?)\s+[|\-–—·:]\s+(.+)$/.exec(title);
  if (m !== null && m[2]!.toLowerCase() === container.toLowerCase() && m[1]!.trim().length >= 3) return m[1]!.trim();
  return title;
}

const CSL_OF_INDEXED: Readonly<Record<string, string>> = { academic: 'article-journal', news: 'article-newspaper', report: 'report', social: 'post' };

/** Citation metadata of a source; see the table at the top of this file for the order each field is read in. */
export function sourceMetaFrom(input: SourceMetaInput): SourceMeta {
  const tags = tagReader(input.metaData);
  const { main, byId } = readGraph(input.schemaData);
  const ld: Obj = main ?? {};
  const indexed = input.indexed ?? {};
  const ldTypes = typeNames(ld);
  const ldIs = (set: ReadonlySet<string>): boolean => ldTypes.some((t) => set.has(t));
  const ldPart = main === undefined ? { container: null, volume: null, issue: null } : partOf(ld, byId);
  const ldPublisher = nameOf(own(ld, 'publisher'), byId);

  const provider = input.provider ?? {};
  const authoritative = provider.authoritative === true;
  const providerVenue = textOrNull(provider.venue);
  const container = pickFirst(
    authoritative ? providerVenue : null,
    firstTag(tags, 'citation_journal_title', 'citation_conference_title', 'prism.publicationname'),
    ldPart.container,
    firstTag(tags, 'og:site_name', 'application-name'),
    textOrNull(indexed.siteName),
    providerVenue,
    ldPublisher,
  );

  const pageTitle = textOrNull(input.title, MAX_TITLE);
  const indexedTitle = textOrNull(indexed.title, MAX_TITLE);
  const metaTitle = isObj(input.metaData) ? textOrNull(own(input.metaData, 'title'), MAX_TITLE) : null;
  const title = pickFirst(
    firstTag(tags, 'citation_title'),
    textField(own(ld, 'headline'), MAX_TITLE),
    main !== undefined ? textField(own(ld, 'name'), MAX_TITLE) : null,
    firstTag(tags, 'dc.title', 'dcterms.title'),
    firstTag(tags, 'og:title'),
    indexedTitle === null ? null : withoutSiteSuffix(indexedTitle, container),
    pageTitle === null ? null : withoutSiteSuffix(pageTitle, container),
    metaTitle === null ? null : withoutSiteSuffix(metaTitle, container),
    firstTag(tags, 'twitter:title'),
  ) ?? (hostOf(input.url) || input.url.slice(0, MAX_TITLE));

  const providerAuthors = (): string[] => {
    const names = new Names();
    for (const a of (Array.isArray(provider.authors) ? provider.authors : []).slice(0, 1000)) names.add(nameFrom(a));
    return names.list;
  };
  const fromProvider = providerAuthors();
  const authors = authoritative && fromProvider.length > 0 ? fromProvider : readAuthors(tags, ld, byId, indexed.author, fromProvider);

  const publishedAt = pickFirst(
    ...['citation_publication_date', 'citation_date', 'citation_online_date'].map((k) => dateFromMeta(tags(k))),
    dateFromMeta(own(ld, 'datePublished')),
    ...['dc.date', 'dcterms.issued', 'dcterms.created', 'dc.date.issued', 'dcterms.date', 'prism.publicationdate', 'article:published_time'].map((k) => dateFromMeta(tags(k))),
    typeof indexed.publishedAt === 'number' ? dateFromMeta(indexed.publishedAt) : null,
    dateFromMeta(own(ld, 'dateCreated')),
  );

  const publisher = pickFirst(
    firstTag(tags, 'citation_publisher', 'dc.publisher', 'dcterms.publisher'),
    ldPublisher,
    firstTag(tags, 'citation_technical_report_institution'),
  );

  const providerDoi = normaliseDoi(provider.doi);
  const doi = pickFirst(
    authoritative ? providerDoi : null,
    ...['citation_doi', 'prism.doi', 'dc.identifier', 'dcterms.identifier', 'bepress_citation_doi'].map((k) => {
      for (const v of tags(k)) {
        const d = normaliseDoi(v);
        if (d !== null) return d;
      }
      return null;
    }),
    main === undefined ? null : doiOfLd(ld, byId),
    normaliseDoi(indexed.doi),
    providerDoi,
    /^(?:https?:\/\/)(?:dx\.)?doi\.org\//i.test(input.url) ? normaliseDoi(input.url) : null,
  );

  const volume = pickFirst(firstTag(tags, 'citation_volume', 'prism.volume'), ldPart.volume, textField(own(ld, 'volumeNumber'), 40));
  const issue = pickFirst(firstTag(tags, 'citation_issue', 'prism.number', 'prism.issueidentifier'), ldPart.issue, textField(own(ld, 'issueNumber'), 40));
  const pageRange = pickFirst(
    pages(firstTag(tags, 'citation_firstpage'), firstTag(tags, 'citation_lastpage')),
    pages(firstTag(tags, 'prism.startingpage'), firstTag(tags, 'prism.endingpage')),
    pages(textField(own(ld, 'pageStart'), 40), textField(own(ld, 'pageEnd'), 40)),
    textField(own(ld, 'pagination'), 40),
  );

  const cslType = firstTag(tags, 'citation_journal_title') !== null || ldIs(SCHOLARLY)
    ? 'article-journal'
    : firstTag(tags, 'citation_technical_report_institution', 'citation_technical_report_number') !== null || ldIs(REPORT)
      ? 'report'
      : ldIs(NEWS)
        ? 'article-newspaper'
        : ldIs(POSTING)
          ? 'post'
          : CSL_OF_INDEXED[typeof indexed.type === 'string' ? indexed.type : ''] ?? (authoritative ? 'article-journal' : 'webpage');

  return {
    title,
    authors,
    publishedAt,
    container,
    publisher,
    doi,
    volume: volume === null ? null : bound(volume, 40),
    issue: issue === null ? null : bound(issue, 40),
    pages: pageRange === null ? null : bound(pageRange, 40),
    cslType,
  };
}

function readAuthors(tags: Tags, ld: Obj, byId: ReadonlyMap<string, Obj>, indexedAuthor: string | null | undefined, providerAuthors: readonly string[] = []): string[] {
  const tries: (() => string[])[] = [
    () => tags('citation_author').map(nameFrom).filter((x): x is string => x !== null),
    () => tags('citation_authors').flatMap((v) => v.split(';')).map(nameFrom).filter((x): x is string => x !== null),
    () => {
      const authors = list(own(ld, 'author'));
      return (authors.length > 0 ? authors : list(own(ld, 'creator')))
        .flatMap((a) => (typeof a === 'string' ? splitAuthors(cleanText(a, 2000)).map(nameFrom) : [personName(a, byId)]))
        .filter((x): x is string => x !== null);
    },
    () => tags('dc.creator').concat(tags('dcterms.creator')).map(nameFrom).filter((x): x is string => x !== null),
    () => tags('article:author').map(nameFrom).filter((x): x is string => x !== null),
    () => tags('author').flatMap((v) => splitAuthors(cleanText(v, 2000))).map(nameFrom).filter((x): x is string => x !== null),
    () => (typeof indexedAuthor === 'string' ? splitAuthors(cleanText(indexedAuthor, 2000)).map(nameFrom).filter((x): x is string => x !== null) : []),
    () => [...providerAuthors],
  ];
  for (const t of tries) {
    const names = new Names();
    for (const n of t()) names.add(n);
    if (names.list.length > 0) return names.list;
  }
  return [];
}
