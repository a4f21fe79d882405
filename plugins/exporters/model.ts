/**
 * The document every text exporter renders (HTML, and through it PDF;
 * Markdown; DOCX): a research report laid out once as a title, a few facts,
 * sections of simple blocks (paragraphs, sub-headings, evidence quotes,
 * lists, label/value rows, tables) and a numbered reference list, so the
 * formats cannot drift apart in what they show. Pure: no I/O.
 *
 * References: the report's `citations` in their order are [1]..[k]; a source
 * that evidence or the sources table points to without a citation (e.g. with
 * `include_citations: false`) is appended after them with a plain
 * "title. domain, date. url" text, so every [n] in a document resolves.
 *
 * Only the four required fields of a report are relied on; every other part
 * is optional and shown when present. The analysers' sections whose inner
 * shape the spec leaves open (entity_analysis, sentiment, trend_analysis,
 * methodology, visualization_data) are laid out generically: scalars as
 * label/value rows, lists of scalars inline, lists of records as tables (or,
 * when short and nested, one sub-heading per record), evidence-like records
 * ({source_id, text}) as quotes. Those generic parts are bounded (rows per
 * table, nesting depth, length of a summarised value). Table cells (the
 * sources table too) show at most 1,000 characters: a row is one unit on
 * paper, and Chromium fails to print rows hundreds of pages tall. The
 * report's own statements, summary, evidence and references are never cut
 * (the full titles are in the references and the JSON export).
 */
import type { ResearchReport } from '../../core/research.js';

export interface Ref {
  /** 1-based number in the reference list. */
  readonly n: number;
  readonly sourceId: string;
  readonly url: string | null;
  /** Short label shown beside quotes: the source's title or domain (at most 200 characters). */
  readonly label: string;
  /** The reference text, one entry per line (multi-line for BibTeX or RIS citations). */
  readonly lines: readonly string[];
}

/** Heading levels inside a section (its title is level 2, the document's level 1). */
export type Level = 3 | 4 | 5;
const deeper = (l: Level): Level => (l === 3 ? 4 : 5);

export type Cell = string | { readonly text: string; readonly href: string };

export type Block =
  | { readonly kind: 'heading'; readonly level: Level; readonly text: string }
  | { readonly kind: 'paragraph'; readonly text: string; readonly note?: boolean }
  | { readonly kind: 'quote'; readonly text: string; readonly ref: Ref | null; readonly sourceId: string; readonly label?: string; readonly detail?: string }
  | { readonly kind: 'list'; readonly items: readonly string[] }
  | { readonly kind: 'fields'; readonly rows: readonly (readonly [string, string])[] }
  | { readonly kind: 'table'; readonly head: readonly string[]; readonly rows: readonly (readonly Cell[])[]; readonly widths?: readonly number[] };

export interface Section {
  /** Stable anchor (`summary`, `insights`, ...). */
  readonly id: string;
  readonly title: string;
  readonly blocks: readonly Block[];
}

export interface ReportDocument {
  /** The research question. */
  readonly title: string;
  /** ISO timestamp as the report gave it, or null. */
  readonly generatedAt: string | null;
  /** "YYYY-MM-DD HH:MM UTC", or the raw value when unparsable. */
  readonly generatedLabel: string | null;
  /** Facts under the title (depth, type, counts, time). */
  readonly facts: readonly (readonly [string, string])[];
  readonly sections: readonly Section[];
  readonly references: readonly Ref[];
}

/** Bounds of the generic layout (documented above). */
export const LIMITS = { tableRows: 200, tableColumns: 8, listItems: 200, depth: 3, compact: 300, perRecordSections: 50, cell: 1000 } as const;

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text safe for every format: C0 controls (but tab, LF, CR) removed, lone
 * surrogates replaced by U+FFFD (XML, and so DOCX, cannot hold either).
 */
export function clean(value: unknown): string {
  const s = typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);
  return s.replace(CONTROL, '').replace(LONE_SURROGATE, '\uFFFD');
}

/** One line: runs of white space (newlines too) become one space. */
export const inline = (value: unknown): string => clean(value).replace(/\s+/g, ' ').trim();

/** At most `max` characters, an ellipsis marking a cut. */
const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export const percent = (x: number): string => `${Math.round(x * 100)}%`;

/** A number for people: integers as they are, others to 4 decimals at most. */
export function formatNumber(x: number): string {
  if (Number.isInteger(x)) return String(x);
  return String(Math.round(x * 1e4) / 1e4);
}

/** "2025-03-01 14:05 UTC" from an ISO timestamp (the raw text when it does not parse). */
export function formatTimestamp(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return inline(iso);
  const d = new Date(t).toISOString();
  return `${d.slice(0, 10)} ${d.slice(11, 16)} UTC`;
}

/** Only http(s) URLs become links (never javascript:, data:, file:). */
export function safeHref(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? clean(u.href) : null;
  } catch {
    return null;
  }
}

/** An ISO date-time as its date (dates from metadata rarely carry a meaningful time). */
export const shortDate = (value: string): string => (/^\d{4}-\d{2}-\d{2}T/.test(value) ? value.slice(0, 10) : inline(value));

export const humanise = (key: string): string => {
  const s = key.replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim();
  return s === '' ? key : s[0]!.toUpperCase() + s.slice(1);
};

interface SourceInfo {
  readonly id: string;
  readonly url: string | null;
  readonly title: string;
  readonly domain: string;
  readonly published: string | null;
  readonly used: boolean;
}

function sourceInfos(report: ResearchReport): SourceInfo[] {
  const out: SourceInfo[] = [];
  for (const s of asArray(report.sources_analyzed)) {
    if (!isRecord(s)) continue;
    const id = str(s.id);
    if (id === null) continue;
    out.push({
      id,
      url: str(s.url),
      title: inline(str(s.title) ?? str(s.url) ?? id),
      domain: inline(str(s.domain) ?? ''),
      published: str(s.published_date),
      used: s.used === true,
    });
  }
  return out;
}

/** The numbered reference list (see the module comment) and a lookup by source id. */
export function buildReferences(report: ResearchReport): { readonly refs: readonly Ref[]; readonly bySource: ReadonlyMap<string, Ref> } {
  const sources = new Map(sourceInfos(report).map((s) => [s.id, s]));
  const refs: Ref[] = [];
  const bySource = new Map<string, Ref>();
  const labelOf = (id: string) => {
    const s = sources.get(id);
    return truncate(s ? (s.title || s.domain || id) : id, 200);
  };
  // [n] is the source's own number (src_3 is [3]) everywhere in a report: the summary, a model's
  // rewrite and IEEE/Vancouver citations use it too. Ids of another form are numbered after them.
  const numbered = [...sources.keys(), ...asArray(report.citations).filter(isRecord).map((c) => str(c.source_id) ?? '')]
    .map((id) => /^src_(\d{1,6})$/.exec(id)?.[1]).filter((x): x is string => x !== undefined).map(Number);
  let next = Math.max(0, ...numbered) + 1;
  const add = (sourceId: string, url: string | null, lines: string[]) => {
    const own = /^src_(\d{1,6})$/.exec(sourceId)?.[1];
    const ref: Ref = { n: own !== undefined ? Number(own) : next++, sourceId, url, label: labelOf(sourceId), lines };
    refs.push(ref);
    if (!bySource.has(sourceId)) bySource.set(sourceId, ref);
    return ref;
  };
  const fallback = (id: string): Ref => {
    const s = sources.get(id);
    if (!s) return add(id, null, [inline(id)]);
    const where = [s.domain, s.published ? shortDate(s.published) : ''].filter((x) => x !== '').join(', ');
    const text = [s.title, where, s.url ? inline(s.url) : ''].filter((x) => x !== '').join('. ');
    return add(id, s.url, [text]);
  };
  for (const c of asArray(report.citations)) {
    if (!isRecord(c)) continue;
    const id = str(c.source_id) ?? `citation_${refs.length + 1}`;
    const lines = clean(c.text).split(/\r\n|\r|\n/).map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
    add(id, str(c.url) ?? sources.get(id)?.url ?? null, lines.length > 0 ? lines : [inline(id)]);
  }
  for (const s of sources.values()) if (s.used && !bySource.has(s.id)) fallback(s.id);
  const ensure = (id: string): Ref => bySource.get(id) ?? fallback(id);
  // Evidence may point at sources beyond the used ones (contradicting evidence, trends).
  for (const ins of asArray(report.key_insights)) {
    if (!isRecord(ins)) continue;
    for (const e of [...asArray(ins.supporting_evidence), ...asArray(ins.contradicting_evidence)]) {
      if (isRecord(e) && str(e.source_id)) ensure(e.source_id as string);
    }
  }
  refs.sort((a, b) => a.n - b.n);
  return { refs, bySource };
}

/** Whether a value looks like a piece of evidence ({source_id, text}). */
const isEvidence = (v: unknown): v is { source_id: string; text: string } =>
  isRecord(v) && typeof v.source_id === 'string' && typeof v.text === 'string';

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

const PERCENT_KEY = /confidence|agreement|probability|share|ratio|proportion/i;


/** A short one-line rendering of any value (nested values in tables, too-deep values). */
function compact(v: unknown): string {
  if (isScalar(v)) return inline(typeof v === 'number' ? formatNumber(v) : v);
  let s: string;
  try {
    s = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' && x.length > LIMITS.compact ? truncate(x, LIMITS.compact) : x)) ?? '';
  } catch {
    s = '';
  }
  return truncate(inline(s), LIMITS.compact);
}

class Layout {
  constructor(private readonly bySource: ReadonlyMap<string, Ref>, private readonly ensure: (id: string) => Ref) {}

  ref(sourceId: string): Ref {
    return this.bySource.get(sourceId) ?? this.ensure(sourceId);
  }

  refLabel(sourceId: string): string {
    return `[${this.ref(sourceId).n}]`;
  }

  /** Evidence as a quote; a `date` it carries (dated trend evidence) is shown beside its source. */
  quote(e: { source_id: string; text: string; date?: unknown }, label?: string): Block {
    const date = str(e.date);
    return {
      kind: 'quote',
      text: clean(e.text),
      ref: this.ref(e.source_id),
      sourceId: e.source_id,
      ...(label === undefined ? {} : { label }),
      ...(date === null ? {} : { detail: truncate(shortDate(date), 100) }),
    };
  }

  scalar(key: string, v: string | number | boolean): string {
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v === 'number') return PERCENT_KEY.test(key) && v >= 0 && v <= 1 ? percent(v) : formatNumber(v);
    const s = inline(v);
    return this.bySource.has(v) ? `${s} ${this.refLabel(v)}` : s;
  }

  cell(key: string, v: unknown): string {
    if (isScalar(v)) return truncate(this.scalar(key, v), LIMITS.cell);
    if (Array.isArray(v) && v.every(isScalar)) return truncate(v.map((x) => this.scalar(key, x)).join(', '), LIMITS.cell);
    return compact(v);
  }

  /**
   * The generic layout of one value under a label (see the module comment).
   * `level`: the level of its own heading (3 to 5; deeper stays 5); `depth`:
   * how deep in the section it is. An empty label adds no heading.
   */
  value(label: string, key: string, v: unknown, level: Level, depth: number, out: Block[]): void {
    if (v === null || v === undefined) return;
    if (isScalar(v)) {
      if (typeof v === 'string' && v.trim() === '') return;
      out.push(label === '' ? { kind: 'paragraph', text: this.scalar(key, v) } : { kind: 'fields', rows: [[label, this.scalar(key, v)]] });
      return;
    }
    const head = () => { if (label !== '') out.push({ kind: 'heading', level, text: label }); };
    const inner = label === '' ? level : deeper(level);
    if (isEvidence(v)) {
      out.push(this.quote(v, label === '' ? undefined : label));
      return;
    }
    if (Array.isArray(v)) {
      const arr: unknown[] = v.filter((x) => x !== null && x !== undefined);
      if (arr.length === 0) return;
      if (arr.every(isScalar)) {
        const items = arr.map((x) => this.scalar(key, x));
        const joined = items.join(', ');
        if (label !== '' && items.length <= 20 && joined.length <= 200) out.push({ kind: 'fields', rows: [[label, joined]] });
        else {
          head();
          out.push({ kind: 'list', items: items.slice(0, LIMITS.listItems) });
          this.more(arr.length, LIMITS.listItems, out);
        }
        return;
      }
      if (arr.every(isEvidence)) {
        head();
        for (const e of arr.slice(0, LIMITS.listItems)) out.push(this.quote(e));
        this.more(arr.length, LIMITS.listItems, out);
        return;
      }
      if (arr.every(isRecord)) {
        const nested = arr.some((r) => Object.values(r).some((x) => !isScalar(x) && x !== null && !(Array.isArray(x) && x.every(isScalar))));
        head();
        if (nested && depth < 2 && arr.length <= LIMITS.perRecordSections) {
          arr.forEach((r, i) => {
            const [titleKey, title] = recordTitle(r, i);
            out.push({ kind: 'heading', level: inner, text: title });
            this.members(r, titleKey, deeper(inner), depth + 2, out);
          });
        } else this.table(arr, out);
        return;
      }
      head();
      out.push({ kind: 'list', items: arr.slice(0, LIMITS.listItems).map((x) => compact(x)) });
      this.more(arr.length, LIMITS.listItems, out);
      return;
    }
    if (isRecord(v)) {
      const entries = Object.entries(v).filter(([, x]) => x !== null && x !== undefined);
      const flat = entries.length <= 6 && entries.every(([, x]) => isScalar(x));
      if (label !== '' && entries.length > 0 && (flat || depth >= LIMITS.depth)) {
        const text = flat ? entries.map(([k, x]) => `${humanise(k).toLowerCase()} ${this.scalar(k, x as string | number | boolean)}`).join(', ') : compact(v);
        if (text.length <= 200 || depth >= LIMITS.depth) {
          out.push({ kind: 'fields', rows: [[label, truncate(text, LIMITS.cell)]] });
          return;
        }
      }
      head();
      this.members(v, null, inner, depth + 1, out);
    }
  }

  /** The members of a record: those that lay out as label/value rows first, then the rest, each in its order. */
  private members(r: Record<string, unknown>, skip: string | null, level: Level, depth: number, out: Block[]): void {
    const rows: Block[] = [];
    const rest: Block[] = [];
    for (const [k, x] of Object.entries(r)) {
      if (k === skip) continue;
      const part: Block[] = [];
      this.value(humanise(k), k, x, level, depth, part);
      (part.every((b) => b.kind === 'fields') ? rows : rest).push(...part);
    }
    out.push(...rows, ...rest);
  }

  private table(rows: readonly Record<string, unknown>[], out: Block[]): void {
    const keys: string[] = [];
    for (const r of rows.slice(0, LIMITS.tableRows)) {
      for (const k of Object.keys(r)) if (!keys.includes(k) && keys.length < LIMITS.tableColumns) keys.push(k);
    }
    out.push({
      kind: 'table',
      head: keys.map(humanise),
      rows: rows.slice(0, LIMITS.tableRows).map((r) => keys.map((k) => this.cell(k, r[k]))),
    });
    this.more(rows.length, LIMITS.tableRows, out);
  }

  private more(total: number, shown: number, out: Block[]): void {
    if (total > shown) out.push({ kind: 'paragraph', note: true, text: `${total - shown} more not shown here (the JSON export has them all).` });
  }
}

const TITLE_KEYS = ['name', 'entity', 'topic', 'title', 'label', 'series', 'id', 'source_id'];

function recordTitle(r: Record<string, unknown>, i: number): [string | null, string] {
  for (const k of TITLE_KEYS) {
    const v = r[k];
    if (typeof v === 'string' && v.trim() !== '') return [k, truncate(inline(v), 200)];
  }
  return [null, `Item ${i + 1}`];
}

/** Consecutive label/value rows in one block. */
function mergeFields(blocks: readonly Block[]): Block[] {
  const out: Block[] = [];
  for (const b of blocks) {
    const last = out[out.length - 1];
    if (b.kind === 'fields' && last?.kind === 'fields') out[out.length - 1] = { kind: 'fields', rows: [...last.rows, ...b.rows] };
    else out.push(b);
  }
  return out;
}

function paragraphs(text: string): Block[] {
  return clean(text).split(/\n\s*\n/).map((p) => inline(p)).filter((p) => p !== '').map((p) => ({ kind: 'paragraph', text: p }));
}

/** Lay a report out as a document. */
export function layoutReport(report: ResearchReport): ReportDocument {
  const { refs, bySource } = buildReferences(report);
  const extra = new Map<string, Ref>();
  const ensure = (id: string): Ref => {
    let r = extra.get(id);
    if (!r) {
      r = { n: Math.max(0, ...refs.map((x) => x.n), ...[...extra.values()].map((x) => x.n)) + 1, sourceId: id, url: null, label: truncate(inline(id), 200), lines: [inline(id)] };
      extra.set(id, r);
    }
    return r;
  };
  const L = new Layout(bySource, ensure);
  const sections: Section[] = [];

  // Executive summary
  {
    const blocks: Block[] = paragraphs(typeof report.executive_summary === 'string' ? report.executive_summary : '');
    if (blocks.length === 0) blocks.push({ kind: 'paragraph', note: true, text: 'No summary.' });
    const from = [...new Set(asArray(report.summary_evidence).filter(isEvidence).map((e) => e.source_id))];
    if (from.length > 0) blocks.push({ kind: 'paragraph', note: true, text: `Drawn from ${from.map((id) => L.refLabel(id)).join(', ')}.` });
    const warnings = asArray(report.warnings).filter(isRecord).map((w) => inline([str(w.code), str(w.message)].filter((x) => x !== null).join(': ')));
    if (warnings.length > 0) {
      blocks.push({ kind: 'heading', level: 3, text: 'Warnings' });
      blocks.push({ kind: 'list', items: warnings.slice(0, LIMITS.listItems) });
    }
    sections.push({ id: 'summary', title: 'Executive summary', blocks });
  }

  // Key insights
  {
    const blocks: Block[] = [];
    const insights = asArray(report.key_insights).filter(isRecord);
    if (insights.length === 0) blocks.push({ kind: 'paragraph', note: true, text: 'No key insights.' });
    insights.forEach((ins, i) => {
      blocks.push({ kind: 'heading', level: 3, text: `${i + 1}. ${inline(ins.statement)}` });
      const rows: [string, string][] = [];
      const conf = num(ins.confidence);
      if (conf !== null) {
        const parts = isRecord(ins.confidence_parts)
          ? Object.entries(ins.confidence_parts).filter(([, v]) => num(v) !== null).map(([k, v]) => `${humanise(k).toLowerCase()} ${percent(v as number)}`)
          : [];
        rows.push(['Confidence', parts.length > 0 ? `${percent(conf)} (${parts.join(', ')})` : percent(conf)]);
      }
      if (str(ins.topic)) rows.push(['Topic', inline(ins.topic)]);
      const agreement = num(ins.agreement);
      if (agreement !== null) rows.push(['Agreement', percent(agreement)]);
      const srcList = (v: unknown) => asArray(v).filter((x): x is string => typeof x === 'string').map((id) => L.refLabel(id)).join(' ');
      if (asArray(ins.supporting_sources).length > 0) rows.push(['Supporting sources', srcList(ins.supporting_sources)]);
      if (asArray(ins.contradicting_sources).length > 0) rows.push(['Contradicting sources', srcList(ins.contradicting_sources)]);
      if (str(ins.id)) rows.push(['Insight id', inline(ins.id)]);
      if (rows.length > 0) blocks.push({ kind: 'fields', rows });
      for (const e of asArray(ins.supporting_evidence).filter(isEvidence)) blocks.push(L.quote(e));
      for (const e of asArray(ins.contradicting_evidence).filter(isEvidence)) blocks.push(L.quote(e, 'Contradicting'));
    });
    sections.push({ id: 'insights', title: 'Key insights', blocks });
  }

  const generic = (id: string, title: string, v: unknown) => {
    if (v === undefined || v === null) return;
    const blocks: Block[] = [];
    L.value('', id, v, 3, 0, blocks);
    if (blocks.length === 0) blocks.push({ kind: 'paragraph', note: true, text: 'Nothing to report.' });
    sections.push({ id, title, blocks: mergeFields(blocks) });
  };
  generic('entities', 'Entity analysis', report.entity_analysis);
  generic('sentiment', 'Sentiment', report.sentiment);
  generic('trends', 'Trends', report.trend_analysis);

  // Recommendations
  if (Array.isArray(report.recommendations)) {
    const blocks: Block[] = [];
    const insightNo = new Map(asArray(report.key_insights).filter(isRecord).map((ins, i) => [String(ins.id), i + 1]));
    const recs = report.recommendations.filter(isRecord);
    if (recs.length === 0) blocks.push({ kind: 'paragraph', note: true, text: 'No recommendations.' });
    recs.forEach((r, i) => {
      blocks.push({ kind: 'heading', level: 3, text: `${i + 1}. ${inline(r.recommendation)}` });
      if (str(r.rationale)) blocks.push({ kind: 'paragraph', text: inline(r.rationale) });
      const rows: [string, string][] = [];
      const basedOn = asArray(r.based_on).filter((x): x is string => typeof x === 'string');
      if (basedOn.length > 0) rows.push(['Based on', basedOn.map((id) => (insightNo.has(id) ? `insight ${insightNo.get(id)} (${inline(id)})` : inline(id))).join(', ')]);
      if (str(r.generated_by)) rows.push(['Generated by', inline(r.generated_by)]);
      if (rows.length > 0) blocks.push({ kind: 'fields', rows });
    });
    sections.push({ id: 'recommendations', title: 'Recommendations', blocks });
  }

  generic('methodology', 'Methodology', report.methodology);
  generic('charts', 'Chart data', report.visualization_data);

  // Sources
  {
    const blocks: Block[] = [];
    const rows: Cell[][] = [];
    for (const s of asArray(report.sources_analyzed)) {
      if (!isRecord(s)) continue;
      const id = str(s.id) ?? '';
      const title = truncate(inline(str(s.title) ?? str(s.url) ?? id), LIMITS.cell);
      const href = safeHref(s.url);
      const rel = num(s.relevance_score) ?? (isRecord(s.relevance_score) ? num(s.relevance_score.score) ?? num(s.relevance_score.total) : null);
      rows.push([
        id !== '' && bySource.has(id) ? `[${bySource.get(id)!.n}]` : '',
        href ? { text: title, href } : title,
        truncate(inline(s.type), LIMITS.cell),
        truncate(inline(s.domain), LIMITS.cell),
        str(s.published_date) ? truncate(shortDate(s.published_date as string), LIMITS.cell) : '',
        str(s.author) ? truncate(inline(s.author), LIMITS.cell) : '',
        rel === null ? '' : formatNumber(rel),
        s.used === true ? 'yes' : 'no',
      ]);
    }
    if (rows.length === 0) blocks.push({ kind: 'paragraph', note: true, text: 'No sources.' });
    else blocks.push({ kind: 'table', head: ['Ref', 'Title', 'Type', 'Domain', 'Date', 'Author', 'Relevance', 'Used'], rows, widths: [5, 26, 12, 14, 12, 12, 12, 7] });
    sections.push({ id: 'sources', title: 'Sources analysed', blocks });
  }

  const references = [...refs, ...extra.values()];
  const facts: [string, string][] = [];
  if (str(report.analysis_depth)) facts.push(['Depth', inline(report.analysis_depth)]);
  if (str(report.analysis_type)) facts.push(['Analysis type', inline(report.analysis_type)]);
  const nSources = asArray(report.sources_analyzed).filter(isRecord).length;
  facts.push(['Sources', `${nSources} analysed, ${references.length} referenced`]);
  const pt = num(report.processing_time);
  if (pt !== null) facts.push(['Processing time', `${formatNumber(pt)} s`]);
  const credits = num(report.credits_used);
  if (credits !== null) facts.push(['Credits used', formatNumber(credits)]);
  const generatedAt = str(report.generated_at);
  return {
    title: inline(report.research_query) || 'Research report',
    generatedAt,
    generatedLabel: generatedAt === null ? null : formatTimestamp(generatedAt),
    facts,
    sections,
    references,
  };
}
