/**
 * The `elasticsearch` search provider: an existing Elasticsearch or
 * OpenSearch index the operator already has (an intranet, a crawl of their
 * own), searched with `POST {base}/{index}/_search` and a JSON body. Nothing
 * is indexed from here; the index's own field names are settings.
 *
 * Settings (read by the composition root): SCOUR_PROVIDER_ELASTICSEARCH_URL
 * (required: the cluster, e.g. https://es.internal:9200; a path prefix is
 * kept; user:pass@ becomes Basic auth), _KEY (an API key in its encoded
 * form, sent as `Authorization: ApiKey <key>`; it wins over user:pass@),
 * _INDEX (required: an index, alias, pattern or comma-separated list),
 * _FIELDS (comma-separated fields searched, with ^boosts; default
 * `<title field>^2,text,content,body`: fields an index lacks are skipped),
 * _DATE_FIELD (default `published_at`), _LANGUAGE_FIELD (default none),
 * _URL_FIELD (default `url`), _TITLE_FIELD (default `title`).
 *
 * What the wire looks like (Elastic's reference for the search API, the
 * simple_query_string query, bool, range, term and prefix queries and
 * highlighting, ES 6 to 8, which OpenSearch shares; error bodies as ES
 * answers them, quoted in elastic/elasticsearch issues and users' logs):
 * - request: `{"size", "timeout", "_source": [...], "query": {"bool":
 *   {"must", "must_not", "filter"}}, "highlight": {...}}`;
 * - answer: `{"took", "timed_out", "_shards": {"total", "successful",
 *   "skipped", "failed", "failures"}, "hits": {"total", "max_score",
 *   "hits": [{"_index", "_id", "_score", "_source", "highlight": {field:
 *   [fragments]}}]}}`; `hits.total` is a number on ES 6 and `{"value",
 *   "relation": "eq" | "gte"}` on ES 7+ and OpenSearch (a lower bound when
 *   gte, reported as is);
 * - errors: `{"error": {"root_cause": [{"type", "reason", ...}], "type",
 *   "reason", ...}, "status"}`: 404 index_not_found_exception "no such index
 *   [x]" (PROVIDER_MISCONFIGURED: check _INDEX), 400 a query the index's
 *   mapping refuses, e.g. a date field that is not a date (PROVIDER_
 *   MISCONFIGURED: check the field settings; the query's shape is fixed, so
 *   its fields are what can be wrong), 401 / 403 security_exception (refused
 *   credentials: the toolkit's PROVIDER_MISCONFIGURED), 429
 *   es_rejected_execution_exception or circuit_breaking_exception (a busy
 *   cluster, without Retry-After: paused 10 s), 5xx (PROVIDER_FAILED). A 200
 *   whose shards partly failed or that timed out carries the hits it has,
 *   with a warning.
 *
 * The query (simple_query_string, whose syntax is `"phrase"`, `|` or, `+`
 * and, `-` not, `(` `)`, with `\` escaping; every operator character in a
 * user's word is escaped): under simple_query_string's default operator OR,
 * `a -b` means "a, or anything without b", so each part is its own clause
 * of a bool query instead of one string:
 * - must: the plain words, any of them (`default_operator: or`), over the
 *   searched fields: they rank;
 * - must: each required group, any of its alternatives (`"phrase"`, over
 *   the title field alone for `intitle:`);
 * - must_not: each excluded word or phrase: `excluded` applied (over the
 *   indexed text, not only the title and snippet the operation sees);
 * - filter: `range` on the date field (gte, epoch_millis) for a lower bound:
 *   `time_range` applied (to the instant; a document without the date field
 *   is left out, as the operation would leave it out);
 * - filter, with a language field: its value is the language or starts with
 *   `xx-` / `xx_`: `language` applied; without one, not sent, not applied
 *   (the results carry no language then);
 * - country, safe_search, site: not applied (an index has no such fields
 *   here; the operation checks sites from the URL);
 * - result_type news: an index holds no typed news here, so a news request
 *   is answered with no results and every filter applied, without a request.
 *
 * Results: the URL and title fields of `_source` (dotted paths reach nested
 * objects; an array gives its first value), the date field (ISO 8601, or
 * epoch seconds / milliseconds), the language field; the snippet is the
 * highlight of the searched fields (tags `<mark>` / `</mark>`, the encoder
 * html so the indexed text's own markup cannot pass for a mark; the first
 * field with a match, else `no_match_size` characters of the first field),
 * with highlights; `_score` is the score. `size` = the request's limit: one
 * request.
 */
import type { FilterName, ProviderRequest, ProviderResponse, ProviderResult, ProviderWarning, QueryItem } from '../../../core/search.js';
import {
  baseUrl, cutAtWord, defineSearchProvider, exchangeJson, httpUrl, isRecord, markedText, parseIsoDate, plainText, ProviderError,
  ProviderRateLimited, retryAfterMs, DEFAULT_EXCHANGE_TIMEOUT_MS, type Exchanged, type ProviderOptions, type SearchProviderPlugin,
} from '../../sdk/search.js';

export const DEFAULT_FIELDS_AFTER_TITLE = ['text', 'content', 'body'] as const;
export const DEFAULT_DATE_FIELD = 'published_at';
export const DEFAULT_URL_FIELD = 'url';
export const DEFAULT_TITLE_FIELD = 'title';
/** `size` at most. */
export const MAX_SIZE = 100;
/** The pause after a 429 without Retry-After (a busy cluster, not a quota). */
export const BUSY_PAUSE_MS = 10_000;
export const PRE_TAG = '<mark>';
export const POST_TAG = '</mark>';
const FRAGMENT_SIZE = 160;
const FRAGMENTS = 2;

/** The provider's own settings (SCOUR_PROVIDER_ELASTICSEARCH_*); the URL and the key are ProviderOptions' baseUrl and key. */
export interface ElasticsearchOptions {
  /** _INDEX (required): an index, alias, pattern (logs-*) or comma-separated list. */
  readonly index: string | undefined;
  /** _FIELDS: the fields searched, with ^boosts; a string is split at commas. Default `<titleField>^2,text,content,body`. */
  readonly fields?: readonly string[] | string | undefined;
  /** _DATE_FIELD (default published_at). */
  readonly dateField?: string | undefined;
  /** _LANGUAGE_FIELD (default none: the language filter is left to the search operation). */
  readonly languageField?: string | undefined;
  /** _URL_FIELD (default url). */
  readonly urlField?: string | undefined;
  /** _TITLE_FIELD (default title). */
  readonly titleField?: string | undefined;
}

export type ElasticsearchProviderOptions = ProviderOptions & ElasticsearchOptions;

const ALL_FILTERS: ReadonlySet<FilterName> = new Set<FilterName>(['country', 'language', 'time_range', 'safe_search', 'result_type', 'site', 'excluded']);

const FIELD = /^[^\s",^\\/]+$/;
const BOOSTED = /^([^\s",^\\/]+)(\^\d+(?:\.\d+)?)?$/;
const INDEX = /^[^\s"\\/?#<>|]+$/;

function checkField(setting: string, value: string): string {
  const v = value.trim();
  if (!FIELD.test(v)) throw new Error(`elasticsearch: SCOUR_PROVIDER_ELASTICSEARCH_${setting} ${JSON.stringify(value)} is not a field name`);
  return v;
}

// ---------------------------------------------------------------------------
// The query

/** A word or phrase with simple_query_string's operator characters escaped. */
export function sqsEscape(text: string): string {
  return text.replace(/[\\+|\-"*()~]/g, (c) => `\\${c}`);
}

const sqsItem = (item: QueryItem): string => (item.kind === 'phrase' ? `"${item.text.replace(/[\\"]/g, (c) => `\\${c}`)}"` : sqsEscape(item.text));

const sqs = (query: string, fields: readonly string[]) => ({
  simple_query_string: {
    query,
    fields,
    default_operator: 'or',
    flags: 'AND|OR|NOT|PHRASE|PRECEDENCE|ESCAPE|WHITESPACE',
    lenient: true,
  },
});

export interface EsSettings {
  readonly fields: readonly string[];
  readonly highlightFields: readonly string[];
  readonly dateField: string;
  readonly languageField: string | undefined;
  readonly urlField: string;
  readonly titleField: string;
}

/** The _search body for a request, and what it applies. */
export function searchBody(request: ProviderRequest, s: EsSettings, timeoutMs: number): { body: Record<string, unknown>; applied: Set<FilterName> } {
  const applied = new Set<FilterName>(['excluded', 'time_range', 'result_type']);
  const q = request.query;
  const must: unknown[] = [sqs(q.terms.map(sqsEscape).join(' '), s.fields)];
  for (const group of q.required) {
    must.push({
      bool: {
        should: group.map((r) => sqs(sqsItem(r.item), r.inTitle ? [s.titleField] : s.fields)),
        minimum_should_match: 1,
      },
    });
  }
  const mustNot = q.excluded.map((x) => sqs(sqsItem(x), s.fields));
  const filter: unknown[] = [];
  if (request.filters.publishedAfter !== undefined) {
    filter.push({ range: { [s.dateField]: { gte: Math.floor(request.filters.publishedAfter), format: 'epoch_millis' } } });
  }
  const lang = request.filters.language?.toLowerCase().split(/[-_]/)[0];
  if (s.languageField !== undefined && lang !== undefined && /^[a-z]{2,3}$/.test(lang)) {
    filter.push({
      bool: {
        should: [
          { term: { [s.languageField]: lang } },
          { prefix: { [s.languageField]: `${lang}-` } },
          { prefix: { [s.languageField]: `${lang}_` } },
        ],
        minimum_should_match: 1,
      },
    });
    applied.add('language');
  }
  const highlight: Record<string, unknown> = {};
  s.highlightFields.forEach((f, i) => {
    highlight[f] = { fragment_size: FRAGMENT_SIZE, number_of_fragments: FRAGMENTS, ...(i === 0 ? { no_match_size: FRAGMENT_SIZE * FRAGMENTS } : {}) };
  });
  const source = [...new Set([s.urlField, s.titleField, s.dateField, ...(s.languageField === undefined ? [] : [s.languageField])])];
  return {
    body: {
      size: Math.min(MAX_SIZE, Math.max(1, Math.floor(request.limit))),
      timeout: `${Math.max(1000, Math.floor(timeoutMs * 0.8))}ms`,
      _source: source,
      query: { bool: { must, ...(mustNot.length > 0 ? { must_not: mustNot } : {}), ...(filter.length > 0 ? { filter } : {}) } },
      highlight: { pre_tags: [PRE_TAG], post_tags: [POST_TAG], encoder: 'html', fields: highlight },
    },
    applied,
  };
}

// ---------------------------------------------------------------------------
// Failures

function esError(text: string): { type: string; reason: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(body) || !isRecord(body.error)) return undefined;
  const e = body.error;
  const root = Array.isArray(e.root_cause) && isRecord(e.root_cause[0]) ? e.root_cause[0] : undefined;
  const pick = (k: string) => (typeof root?.[k] === 'string' ? root[k] as string : typeof e[k] === 'string' ? e[k] as string : '');
  return { type: pick('type'), reason: pick('reason').slice(0, 300) };
}

/** The index's own signals: a missing index, a query its mapping refuses, a busy cluster. */
export function elasticsearchFailure(answer: Exchanged, index: string): Error | undefined {
  const e = esError(answer.text);
  const said = e === undefined ? '' : `${e.type}${e.reason ? `: ${e.reason}` : ''}`;
  if (answer.status === 404 && e?.type === 'index_not_found_exception') {
    return new ProviderError('PROVIDER_MISCONFIGURED', `elasticsearch has no index ${index} (${said}): check SCOUR_PROVIDER_ELASTICSEARCH_INDEX`, { status: 404 });
  }
  if (answer.status === 400) {
    return new ProviderError(
      'PROVIDER_MISCONFIGURED',
      `elasticsearch refused the query (HTTP 400${said ? `: ${said}` : ''}): check SCOUR_PROVIDER_ELASTICSEARCH_FIELDS, _DATE_FIELD and _LANGUAGE_FIELD against the index's mapping`,
      { status: 400 },
    );
  }
  if (answer.status === 429 && retryAfterMs(answer.headers['retry-after']) === undefined) {
    return new ProviderRateLimited(`elasticsearch is busy (HTTP 429${said ? `: ${said}` : ''}), paused ${BUSY_PAUSE_MS / 1000} s`, BUSY_PAUSE_MS);
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Hits -> ProviderResult

/** `_source`'s value at a field: the key as written, else a dotted path; an array gives its first value. */
export function sourceValue(source: Record<string, unknown>, field: string): unknown {
  let v: unknown = field in source ? source[field] : undefined;
  if (v === undefined && field.includes('.')) {
    v = source;
    for (const part of field.split('.')) {
      if (Array.isArray(v)) v = v[0];
      v = isRecord(v) ? v[part] : undefined;
    }
  }
  return Array.isArray(v) ? v[0] : v;
}

/** Epoch ms of a date as indexed: ISO 8601, epoch milliseconds or seconds (a number or digits). */
export function indexedDate(v: unknown): number | null {
  if (typeof v === 'string' && /^\d{9,13}$/.test(v.trim())) v = Number(v.trim());
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v <= 0) return null;
    return v < 1e11 ? Math.round(v * 1000) : Math.round(v);
  }
  return parseIsoDate(v);
}

const MARK_OPEN = /<mark>/;
const MARK_CLOSE = /<\/mark>/;

/** The snippet: the first highlighted field with a match, else the first with text. */
function snippet(highlight: unknown, fields: readonly string[]): { text: string; highlights: [number, number][] } {
  if (!isRecord(highlight)) return { text: '', highlights: [] };
  const fragmentsOf = (f: string): string[] => {
    const v = highlight[f];
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  };
  const names = [...fields, ...Object.keys(highlight).filter((k) => !fields.includes(k))];
  const withMark = names.find((f) => fragmentsOf(f).some((x) => x.includes(PRE_TAG)));
  const chosen = withMark ?? names.find((f) => fragmentsOf(f).length > 0);
  if (chosen === undefined) return { text: '', highlights: [] };
  return markedText(fragmentsOf(chosen).join(' \u2026 '), MARK_OPEN, MARK_CLOSE);
}

export function toProviderResult(hit: unknown, s: EsSettings): ProviderResult | undefined {
  if (!isRecord(hit) || !isRecord(hit._source)) return undefined;
  const src = hit._source;
  const url = httpUrl(sourceValue(src, s.urlField));
  if (url === undefined) return undefined;
  const rawTitle = sourceValue(src, s.titleField);
  const title = typeof rawTitle === 'string' ? cutAtWord(plainText(rawTitle)) : '';
  const snip = snippet(hit.highlight, s.highlightFields);
  const lang = s.languageField === undefined ? undefined : sourceValue(src, s.languageField);
  const l = typeof lang === 'string' ? lang.trim().toLowerCase().split(/[-_]/)[0]! : '';
  const score = typeof hit._score === 'number' && Number.isFinite(hit._score) ? hit._score : undefined;
  return {
    url,
    title: title !== '' ? title : new URL(url).hostname,
    snippet: snip.text,
    ...(snip.highlights.length > 0 ? { highlights: snip.highlights } : {}),
    publishedAt: indexedDate(sourceValue(src, s.dateField)),
    ...(score === undefined ? {} : { score }),
    type: null,
    language: /^[a-z]{2,3}$/.test(l) ? l : null,
    country: null,
    safe: null,
  };
}

// ---------------------------------------------------------------------------
// The provider

export function createElasticsearchProvider(options: ElasticsearchProviderOptions): SearchProviderPlugin<'search-provider-elasticsearch'> {
  if (options.baseUrl === undefined || options.baseUrl.trim() === '') {
    throw new Error('elasticsearch: SCOUR_PROVIDER_ELASTICSEARCH_URL is required (the cluster, e.g. https://es.internal:9200)');
  }
  const index = options.index?.trim() ?? '';
  if (index === '') throw new Error('elasticsearch: SCOUR_PROVIDER_ELASTICSEARCH_INDEX is required (an index, alias or pattern)');
  const indices = index.split(',').map((i) => i.trim());
  if (indices.some((i) => i === '' || !INDEX.test(i) || /^[-_+]/.test(i))) {
    throw new Error(`elasticsearch: SCOUR_PROVIDER_ELASTICSEARCH_INDEX ${JSON.stringify(index)} is not an index name, pattern or comma-separated list`);
  }
  const base = baseUrl('elasticsearch', options.baseUrl, options.baseUrl);
  const titleField = checkField('TITLE_FIELD', options.titleField ?? DEFAULT_TITLE_FIELD);
  const urlField = checkField('URL_FIELD', options.urlField ?? DEFAULT_URL_FIELD);
  const dateField = checkField('DATE_FIELD', options.dateField ?? DEFAULT_DATE_FIELD);
  const languageField = options.languageField === undefined || options.languageField.trim() === '' ? undefined : checkField('LANGUAGE_FIELD', options.languageField);
  const given = typeof options.fields === 'string' ? options.fields.split(',') : options.fields;
  const fields = (given ?? [`${titleField}^2`, ...DEFAULT_FIELDS_AFTER_TITLE]).map((f) => f.trim()).filter((f) => f !== '');
  if (fields.length === 0) throw new Error('elasticsearch: SCOUR_PROVIDER_ELASTICSEARCH_FIELDS names no field');
  for (const f of fields) {
    if (!BOOSTED.test(f)) throw new Error(`elasticsearch: SCOUR_PROVIDER_ELASTICSEARCH_FIELDS entry ${JSON.stringify(f)} is not a field name (with an optional ^boost)`);
  }
  const names = fields.map((f) => BOOSTED.exec(f)![1]!);
  const highlightFields = names.filter((f) => f !== titleField);
  const settings: EsSettings = {
    fields, highlightFields: highlightFields.length > 0 ? highlightFields : names, dateField, languageField, urlField, titleField,
  };
  const key = options.key?.trim();
  const authorization = key !== undefined && key !== '' ? `ApiKey ${key}` : base.authorization;
  const path = indices.map((i) => encodeURIComponent(i).replace(/%2A/gi, '*')).join(',');
  const url = `${base.url}/${path}/_search`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_EXCHANGE_TIMEOUT_MS;

  return defineSearchProvider({
    name: 'search-provider-elasticsearch',
    id: 'elasticsearch',
    description: `An Elasticsearch or OpenSearch index (${index}), searched with simple_query_string over its own fields.`,
    endpoint: base.url,
    applies: new Set<FilterName>(['excluded', 'time_range', 'result_type', ...(languageField === undefined ? [] : ['language' as const])]),
    async search(request: ProviderRequest): Promise<ProviderResponse> {
      if (request.filters.resultType === 'news') return { results: [], total: 0, applied: ALL_FILTERS };
      const { body, applied } = searchBody(request, settings, timeoutMs);
      const { json } = await exchangeJson(options.egress, {
        provider: 'elasticsearch',
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify(body),
        timeoutMs: options.timeoutMs,
        signal: request.signal,
        failure: (a) => elasticsearchFailure(a, index),
      });
      if (!isRecord(json) || !isRecord(json.hits) || !Array.isArray(json.hits.hits)) {
        throw new ProviderError('PROVIDER_FAILED', `elasticsearch at ${url} answered JSON that is not a search answer (no hits.hits)`);
      }
      const results: ProviderResult[] = [];
      const seen = new Set<string>();
      for (const hit of json.hits.hits) {
        const r = toProviderResult(hit, settings);
        if (r === undefined || seen.has(r.url)) continue;
        seen.add(r.url);
        results.push(r);
      }
      const t = json.hits.total;
      const totalRaw = typeof t === 'number' ? t : isRecord(t) && typeof t.value === 'number' ? t.value : undefined;
      const total = totalRaw !== undefined && Number.isFinite(totalRaw) && totalRaw >= 0 ? Math.floor(totalRaw) : undefined;
      const warnings: ProviderWarning[] = [];
      const shards = isRecord(json._shards) ? json._shards : {};
      if (typeof shards.failed === 'number' && shards.failed > 0) {
        const f = Array.isArray(shards.failures) && isRecord(shards.failures[0]) && isRecord(shards.failures[0].reason) ? shards.failures[0].reason : {};
        const why = typeof f.reason === 'string' ? `: ${f.reason.slice(0, 200)}` : '';
        warnings.push({ code: 'PARTIAL_RESULTS', message: `elasticsearch: ${shards.failed} of ${String(shards.total)} shards failed${why}; the others' hits are kept` });
      }
      if (json.timed_out === true) warnings.push({ code: 'PARTIAL_RESULTS', message: 'elasticsearch timed out; the hits found in time are kept' });
      return {
        results: results.slice(0, Math.max(1, Math.floor(request.limit))),
        total,
        applied,
        ...(warnings.length === 0 ? {} : { warnings }),
      };
    },
  });
}
