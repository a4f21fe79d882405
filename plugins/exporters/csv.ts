/**
 * The CSV export (RFC 4180): ONE table holding the sources and the key
 * insights, told apart by the first column, `record` (`source` rows first,
 * in the report's order, then `insight` rows). Columns:
 *
 *   record, id, title_or_statement, url, type, domain, published_date,
 *   relevance_or_confidence, used, source_ids, author, topic
 *
 * - source rows: title, url, type, domain, published_date, relevance_score,
 *   used (`true`/`false`), author; source_ids and topic empty.
 * - insight rows: statement, confidence, topic, and source_ids: the ids of the
 *   sources it rests on (supporting_sources, else its evidence's sources),
 *   `;`-separated; the source columns empty.
 *
 * A header row, CRLF line ends (also after the last record), fields quoted
 * when they hold `"`, `,`, CR or LF (quotes doubled), UTF-8 without a BOM.
 *
 * CSV injection: a spreadsheet runs a cell that starts with `=`, `+`, `-`,
 * `@`, tab or CR as a formula, so every text cell starting with one of those
 * is prefixed with a single quote (`'=HYPERLINK(...)` shows as text). The
 * numbers this exporter writes itself never start with one.
 */
import type { ExporterPlugin, ResearchReport } from '../../core/research.js';
import { clean, formatNumber } from './model.js';

export const CSV_COLUMNS = [
  'record', 'id', 'title_or_statement', 'url', 'type', 'domain', 'published_date',
  'relevance_or_confidence', 'used', 'source_ids', 'author', 'topic',
] as const;

type Row = Partial<Record<(typeof CSV_COLUMNS)[number], string>>;

/** A text cell a spreadsheet will not evaluate (see the module comment). */
export const neutralise = (s: string): string => (/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);

/** One RFC 4180 field. */
export const csvField = (s: string): string => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? neutralise(clean(v)) : '');
const number = (v: unknown): string => (typeof v === 'number' && Number.isFinite(v) ? formatNumber(v) : '');

export function renderCsv(report: ResearchReport): string {
  const rows: Row[] = [];
  for (const s of Array.isArray(report.sources_analyzed) ? report.sources_analyzed : []) {
    if (!isRecord(s)) continue;
    rows.push({
      record: 'source',
      id: text(s.id),
      title_or_statement: text(s.title),
      url: text(s.url),
      type: text(s.type),
      domain: text(s.domain),
      published_date: text(s.published_date),
      relevance_or_confidence: number(s.relevance_score),
      used: typeof s.used === 'boolean' ? String(s.used) : '',
      author: text(s.author),
    });
  }
  for (const ins of Array.isArray(report.key_insights) ? report.key_insights : []) {
    if (!isRecord(ins)) continue;
    const listed = Array.isArray(ins.supporting_sources) ? ins.supporting_sources.filter((x): x is string => typeof x === 'string') : [];
    const fromEvidence = (Array.isArray(ins.supporting_evidence) ? ins.supporting_evidence : [])
      .map((e: unknown) => (isRecord(e) && typeof e.source_id === 'string' ? e.source_id : null))
      .filter((x): x is string => x !== null);
    const ids = [...new Set(listed.length > 0 ? listed : fromEvidence)];
    rows.push({
      record: 'insight',
      id: text(ins.id),
      title_or_statement: text(ins.statement),
      relevance_or_confidence: number(ins.confidence),
      source_ids: text(ids.join(';')),
      topic: text(ins.topic),
    });
  }
  const lines = [CSV_COLUMNS.join(','), ...rows.map((r) => CSV_COLUMNS.map((c) => csvField(r[c] ?? '')).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

export const csvExporter: ExporterPlugin<'exporter-csv'> = {
  name: 'exporter-csv',
  kind: 'exporter',
  description: 'The sources and key insights as one RFC 4180 CSV table (a `record` column tells them apart); formula-like cells neutralised.',
  format: 'csv',
  contentType: 'text/csv; charset=utf-8; header=present',
  extension: 'csv',
  async render(report, host) {
    host.signal.throwIfAborted();
    return new TextEncoder().encode(renderCsv(report));
  },
};
