/**
 * The BibTeX export: the report's references as a .bib file.
 *
 * - When the report's citations are already BibTeX (`citation_format:
 *   "bibtex"`), their text is the file, as citation-js wrote it (its keys).
 * - Otherwise one entry per source the report used (`used: true` in
 *   sources_analyzed, in its order), keyed by the source id (`src_N`, the
 *   same ids the report and its other exports use; `src_<position>` when an id
 *   has another shape, with a suffix if that would repeat):
 *   `@article` for academic and news sources (journal: the source's
 *   `container` when the report has it, else its domain), `@misc` for the
 *   rest; fields title (double-braced, so styles keep its capitals), author
 *   (names split at `;` / ` and `, or at commas when every part is a
 *   "First Last" name or they pair up as "Last, First"), year, month,
 *   date, publisher, doi, url, and urldate (the report's date).
 *
 * Every text field is escaped: `\ { } $ & % # _ ^ ~` become their LaTeX
 * commands; other characters (UTF-8) are left for biber / BibTeX 8-bit to
 * read. In URLs only braces, backslashes and white space are percent-encoded.
 * Outside entries only a `%` comment line is written (no report text there,
 * where an `@` would start an entry).
 */
import type { ExporterPlugin, ResearchReport } from '../../core/research.js';
import { clean, inline } from './model.js';
import { splitTrimmed } from '../../core/text.js';

const TEX: Record<string, string> = {
  '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', $: '\\$', '&': '\\&', '%': '\\%', '#': '\\#', _: '\\_', '^': '\\^{}', '~': '\\~{}',
};

/** Text as a literal BibTeX field value (inside braces). */
export const escapeBibtex = (s: string): string => inline(s).replace(/[\\{}$&%#_^~]/g, (c) => TEX[c]!);

const bibUrl = (s: string): string => inline(s).replace(/[{}\\\s]/g, (c) => encodeURIComponent(c));

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/** Author names from the report's one-string author field. */
export function splitAuthors(author: string): string[] {
  const a = inline(author);
  if (a === '') return [];
  let parts = a.split(/\s*;\s*|\s+and\s+/).filter((p) => p !== '');
  if (parts.length === 1) {
    const byComma = splitTrimmed(a, /,/).filter((p) => p !== '');
    // "Doe, Jane" is one name (Last, First); "Jane Doe, John Roe" is two;
    // "Doe, Jane, Roe, John" is two in Last, First pairs.
    if (byComma.length > 1 && byComma.every((p) => /\S\s+\S/.test(p))) parts = byComma;
    else if (byComma.length >= 4 && byComma.length % 2 === 0 && byComma.every((p) => !/\s/.test(p))) {
      parts = [];
      for (let i = 0; i < byComma.length; i += 2) parts.push(`${byComma[i]}, ${byComma[i + 1]}`);
    }
  }
  return parts;
}

const field = (name: string, value: string) => `  ${name} = {${value}}`;

function entry(s: Record<string, unknown>, key: string, accessed: string | null): string {
  const type = s.type === 'academic' || s.type === 'news' ? 'article' : 'misc';
  const fields: string[] = [field('title', `{${escapeBibtex(str(s.title) ?? str(s.url) ?? key)}}`)];
  const authors = str(s.author) ? splitAuthors(s.author as string) : [];
  if (authors.length > 0) fields.push(field('author', authors.map(escapeBibtex).join(' and ')));
  if (type === 'article') fields.push(field('journal', escapeBibtex(str(s.container) ?? str(s.domain) ?? '')));
  const date = str(s.published_date);
  const m = date === null ? null : /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?/.exec(date);
  if (m) {
    fields.push(field('year', m[1]!));
    const month = m[2] === undefined ? undefined : MONTHS[Number(m[2]) - 1];
    if (month !== undefined) fields.push(`  month = ${month}`);
    if (m[2] !== undefined && m[3] !== undefined) fields.push(field('date', `${m[1]}-${m[2]}-${m[3]}`));
  }
  if (str(s.publisher)) fields.push(field('publisher', escapeBibtex(s.publisher as string)));
  if (str(s.doi)) fields.push(field('doi', bibUrl(s.doi as string)));
  if (str(s.url)) fields.push(field('url', bibUrl(s.url as string)));
  if (accessed !== null) fields.push(field('urldate', accessed));
  return `@${type}{${key},\n${fields.join(',\n')}\n}`;
}

export function renderBibtex(report: ResearchReport): string {
  const generated = typeof report.generated_at === 'string' && /^\d{4}-\d{2}-\d{2}/.test(report.generated_at) ? report.generated_at.slice(0, 10) : null;
  const head = `% BibTeX export of a Scour research report${generated ? `, generated ${generated}` : ''}\n`;
  const citations = (Array.isArray(report.citations) ? report.citations : []).filter(isRecord);
  if (citations.length > 0 && citations.every((c) => c.format === 'bibtex' && typeof c.text === 'string')) {
    return `${head}\n${citations.map((c) => clean(c.text).trim()).filter((t) => t !== '').join('\n\n')}\n`;
  }
  const used = (Array.isArray(report.sources_analyzed) ? report.sources_analyzed : []).filter((s): s is Record<string, unknown> & object => isRecord(s) && s.used === true);
  const keys = new Set<string>();
  const entries = used.map((s, i) => {
    const base = typeof s.id === 'string' && /^src_\d+$/.test(s.id) ? s.id : `src_${i + 1}`;
    let key = base;
    for (let n = 2; keys.has(key); n++) key = `${base}_${n}`;
    keys.add(key);
    return entry(s, key, generated);
  });
  return entries.length === 0 ? head : `${head}\n${entries.join('\n\n')}\n`;
}

export const bibtexExporter: ExporterPlugin<'exporter-bibtex'> = {
  name: 'exporter-bibtex',
  kind: 'exporter',
  description: 'The references as BibTeX: the citations when they are BibTeX already, else one entry per used source keyed src_N.',
  format: 'bibtex',
  contentType: 'application/x-bibtex; charset=utf-8',
  extension: 'bib',
  async render(report, host) {
    host.signal.throwIfAborted();
    return new TextEncoder().encode(renderBibtex(report));
  },
};
