/**
 * A stand-in for an Elasticsearch (or OpenSearch) cluster on loopback, built
 * on the shared skeleton (server.ts): `POST /{index}/_search` over small
 * in-memory indices, answering as ES does (see
 * plugins/search-providers/elasticsearch/index.ts for the sources):
 *
 * - the body is parsed as ES parses it: Content-Type must be JSON (else 406
 *   "Content-Type header [x] is not supported"); unknown top-level keys and
 *   unknown query types are 400 parsing_exception; a simple_query_string
 *   with a parameter it lacks is 400; a range on a geo_point field is 400
 *   search_phase_execution_exception (root cause query_shard_exception);
 * - queries understood: bool (must, must_not, filter, should,
 *   minimum_should_match), simple_query_string (terms and "phrases", `\`
 *   escapes, `-` not, default operator or/and, fields with ^boosts and `*`
 *   wildcards; words are matched lower-cased, letters and digits only),
 *   range (gte/gt/lte/lt, epoch_millis or ISO dates; a document without the
 *   field does not match), term and prefix (exact, as on a keyword field);
 * - answer: `{"took", "timed_out", "_shards": {...}, "hits": {"total",
 *   "max_score", "hits": [{"_index", "_id", "_score", "_source",
 *   "highlight"}]}}`; `hits.total` a number with `version: 6`, `{"value",
 *   "relation": "eq"}` otherwise; `_source` filtered to the listed fields
 *   (dotted paths kept nested); highlight: per requested field that matched,
 *   one fragment of about `fragment_size` characters around the first match
 *   with the pre/post tags, the text HTML-escaped when `encoder` is html;
 *   `no_match_size` characters of a field that did not match;
 * - an index (comma lists and `*` patterns resolve against the known ones)
 *   that does not exist is 404 index_not_found_exception "no such index
 *   [x]"; with `auth` set, a request without the right Authorization is 401
 *   security_exception (WWW-Authenticate: Basic realm="security", ApiKey),
 *   the `forbiddenKey` API key 403 security_exception;
 * - rate-limited mode: 429 es_rejected_execution_exception (ES sends no
 *   Retry-After); error mode: 503 search_phase_execution_exception "all
 *   shards failed"; `setShardFailure(true)` answers 200 with one of two
 *   shards failed, `setTimedOut(true)` with `timed_out: true`.
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

export interface EsStandinOptions {
  /** 6: hits.total is a number; 7 or 8: {value, relation}. Default 8. */
  readonly version?: 6 | 7 | 8;
  readonly auth?: { readonly basic?: readonly [string, string]; readonly apiKey?: string; readonly forbiddenKey?: string };
  /** Field types where they matter (geo_point refuses range). */
  readonly mapping?: Readonly<Record<string, string>>;
}

export interface EsStandin extends Standin {
  setIndex(name: string, docs: readonly Record<string, unknown>[]): void;
  setShardFailure(on: boolean): void;
  setTimedOut(on: boolean): void;
  /** The parsed JSON bodies of the _search requests. */
  bodies(): Record<string, unknown>[];
}

const isRec = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function esError(status: number, type: string, reason: string, extra: Record<string, unknown> = {}): Answer {
  return { status, body: { error: { root_cause: [{ type, reason, ...extra }], type, reason, ...extra }, status } };
}

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

function valueAt(src: Record<string, unknown>, path: string): unknown {
  if (path in src) return src[path];
  let v: unknown = src;
  for (const p of path.split('.')) {
    if (Array.isArray(v)) v = v[0];
    v = isRec(v) ? v[p] : undefined;
  }
  return v;
}

function textAt(src: Record<string, unknown>, path: string): string {
  const v = valueAt(src, path);
  if (Array.isArray(v)) return v.filter((x) => typeof x === 'string').join(' ');
  return typeof v === 'string' ? v : '';
}

function leafPaths(src: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(src)) {
    const p = prefix === '' ? k : `${prefix}.${k}`;
    if (isRec(v)) out.push(...leafPaths(v, p));
    else out.push(p);
  }
  return out;
}

const glob = (pattern: string) => new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);

class BadRequest extends Error {
  constructor(readonly answer: Answer) {
    super('bad request');
  }
}

interface Token { readonly words: string[]; readonly not: boolean }

function parseSqs(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    if (q[i] === ' ') { i++; continue; }
    let not = false;
    if (q[i] === '-') { not = true; i++; }
    if (q[i] === '"') {
      let text = '';
      i++;
      while (i < q.length && q[i] !== '"') {
        if (q[i] === '\\' && i + 1 < q.length) i++;
        text += q[i];
        i++;
      }
      i++;
      out.push({ words: words(text), not });
      continue;
    }
    let text = '';
    while (i < q.length && q[i] !== ' ') {
      if (q[i] === '\\' && i + 1 < q.length) i++;
      text += q[i];
      i++;
    }
    out.push({ words: words(text), not });
  }
  return out.filter((t) => t.words.length > 0);
}

function containsSeq(hay: string[], needle: string[]): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

const SQS_PARAMS = new Set(['query', 'fields', 'default_operator', 'flags', 'lenient', 'analyzer', 'minimum_should_match', 'boost', 'analyze_wildcard', 'quote_field_suffix', 'auto_generate_synonyms_phrase_query', 'fuzzy_max_expansions', 'fuzzy_prefix_length', 'fuzzy_transpositions']);
const TOP_KEYS = new Set(['size', 'from', 'timeout', '_source', 'query', 'highlight', 'track_total_hits', 'sort']);

interface Match { readonly score: number; readonly terms: string[][] }

function dateValue(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (/^\d+$/.test(v)) return Number(v);
    const t = Date.parse(v.endsWith('Z') || /[+-]\d{2}:?\d{2}$/.test(v) || !v.includes('T') ? v : `${v}Z`);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

function evaluate(q: unknown, src: Record<string, unknown>, mapping: Readonly<Record<string, string>>): Match | undefined {
  if (!isRec(q) || Object.keys(q).length !== 1) throw new BadRequest(esError(400, 'parsing_exception', 'query malformed, must start with start_object'));
  const [type, spec] = Object.entries(q)[0]!;
  if (!isRec(spec)) throw new BadRequest(esError(400, 'parsing_exception', `[${type}] query malformed`));
  switch (type) {
    case 'bool': {
      let score = 0;
      const terms: string[][] = [];
      const list = (k: string): unknown[] => (spec[k] === undefined ? [] : Array.isArray(spec[k]) ? spec[k] as unknown[] : [spec[k]]);
      for (const c of list('must')) {
        const m = evaluate(c, src, mapping);
        if (m === undefined) return undefined;
        score += m.score;
        terms.push(...m.terms);
      }
      for (const c of list('filter')) if (evaluate(c, src, mapping) === undefined) return undefined;
      for (const c of list('must_not')) if (evaluate(c, src, mapping) !== undefined) return undefined;
      const should = list('should');
      const msm = typeof spec.minimum_should_match === 'number' ? spec.minimum_should_match : 0;
      let n = 0;
      for (const c of should) {
        const m = evaluate(c, src, mapping);
        if (m !== undefined) { n++; score += m.score; terms.push(...m.terms); }
      }
      if (n < msm) return undefined;
      return { score: score || 1, terms };
    }
    case 'simple_query_string': {
      for (const k of Object.keys(spec)) {
        if (!SQS_PARAMS.has(k)) throw new BadRequest(esError(400, 'parsing_exception', `[simple_query_string] query does not support [${k}]`));
      }
      if (typeof spec.query !== 'string') throw new BadRequest(esError(400, 'parsing_exception', '[simple_query_string] requires query'));
      const fieldSpecs = Array.isArray(spec.fields) ? spec.fields as string[] : ['*'];
      const paths = leafPaths(src);
      const fields: [string, number][] = [];
      for (const f of fieldSpecs) {
        const [name, boost] = f.split('^');
        for (const p of paths) if (glob(name!).test(p)) fields.push([p, boost === undefined ? 1 : Number(boost)]);
      }
      const tokens = parseSqs(spec.query);
      const and = spec.default_operator === 'and';
      let score = 0;
      const matched: string[][] = [];
      let positives = 0;
      let hits = 0;
      for (const t of tokens) {
        const where = fields.filter(([p]) => containsSeq(words(textAt(src, p)), t.words));
        if (t.not) {
          if (where.length > 0) { if (and) return undefined; } else hits++;
          continue;
        }
        positives++;
        if (where.length > 0) {
          hits++;
          matched.push(t.words);
          score += where.reduce((s, [, b]) => s + b, 0);
        } else if (and) {
          return undefined;
        }
      }
      if (hits === 0 || (positives > 0 && matched.length === 0 && !tokens.some((t) => t.not))) return undefined;
      return { score, terms: matched };
    }
    case 'range': {
      const [field, r] = Object.entries(spec)[0] ?? [];
      if (field === undefined || !isRec(r)) throw new BadRequest(esError(400, 'parsing_exception', '[range] query malformed'));
      if (mapping[field] === 'geo_point') {
        throw new BadRequest({
          status: 400,
          body: {
            error: {
              root_cause: [{ type: 'query_shard_exception', reason: `Field [${field}] of type [geo_point] does not support range queries`, index: 'docs' }],
              type: 'search_phase_execution_exception', reason: 'all shards failed', phase: 'query', grouped: true,
              failed_shards: [{ shard: 0, index: 'docs', node: 'n1', reason: { type: 'query_shard_exception', reason: `Field [${field}] of type [geo_point] does not support range queries` } }],
            },
            status: 400,
          },
        });
      }
      const v = dateValue(valueAt(src, field));
      if (v === undefined) return undefined;
      const bound = (k: string) => (r[k] === undefined ? undefined : dateValue(r[k]));
      const gte = bound('gte'), gt = bound('gt'), lte = bound('lte'), lt = bound('lt');
      if ((gte !== undefined && v < gte) || (gt !== undefined && v <= gt) || (lte !== undefined && v > lte) || (lt !== undefined && v >= lt)) return undefined;
      return { score: 0, terms: [] };
    }
    case 'term':
    case 'prefix': {
      const [field, raw] = Object.entries(spec)[0] ?? [];
      const want = isRec(raw) ? raw.value : raw;
      if (field === undefined || typeof want !== 'string') throw new BadRequest(esError(400, 'parsing_exception', `[${type}] query malformed`));
      const v = valueAt(src, field);
      const values = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
      return values.some((x) => (type === 'term' ? x === want : x.startsWith(want))) ? { score: 0, terms: [] } : undefined;
    }
    default:
      throw new BadRequest(esError(400, 'parsing_exception', `unknown query [${type}]`, { line: 1, col: 30 }));
  }
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;').replace(/\//g, '&#x2F;');

function highlightField(text: string, terms: string[][], spec: Record<string, unknown>, pre: string, post: string, html: boolean): string[] | undefined {
  const size = typeof spec.fragment_size === 'number' ? spec.fragment_size : 100;
  const enc = (s: string) => (html ? escapeHtml(s) : s);
  // Word positions in the original text.
  const re = /[\p{L}\p{N}]+/gu;
  const spans: { start: number; end: number; w: string }[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) spans.push({ start: m.index, end: m.index + m[0].length, w: m[0].toLowerCase() });
  const marked = new Set<number>();
  for (const t of terms) {
    for (let i = 0; i + t.length <= spans.length; i++) {
      if (t.every((w, j) => spans[i + j]!.w === w)) for (let j = 0; j < t.length; j++) marked.add(i + j);
    }
  }
  if (marked.size === 0) {
    const n = typeof spec.no_match_size === 'number' ? spec.no_match_size : 0;
    return n > 0 && text !== '' ? [enc(text.slice(0, n))] : undefined;
  }
  // A field shorter than a fragment is returned whole, as ES's highlighters do.
  const first = Math.min(...marked);
  let from = text.length <= size ? 0 : Math.max(0, spans[first]!.start - 20);
  while (from > 0 && /\S/.test(text[from - 1]!)) from--;
  const to = Math.min(text.length, from + size);
  let out = '';
  let at = from;
  spans.forEach((s, i) => {
    if (!marked.has(i) || s.start < from || s.end > to) return;
    out += enc(text.slice(at, s.start)) + pre + enc(text.slice(s.start, s.end)) + post;
    at = s.end;
  });
  out += enc(text.slice(at, to));
  return [out];
}

function filterSource(src: Record<string, unknown>, include: unknown): Record<string, unknown> {
  if (!Array.isArray(include)) return src;
  const out: Record<string, unknown> = {};
  for (const path of include) {
    if (typeof path !== 'string') continue;
    if (path in src) { out[path] = src[path]; continue; }
    const parts = path.split('.');
    let from: unknown = src;
    for (const p of parts) from = isRec(from) ? from[p] : undefined;
    if (from === undefined) continue;
    let to = out;
    for (const p of parts.slice(0, -1)) to = (isRec(to[p]) ? to[p] : (to[p] = {})) as Record<string, unknown>;
    to[parts[parts.length - 1]!] = from;
  }
  return out;
}

export async function startElasticsearch(options: EsStandinOptions = {}): Promise<EsStandin> {
  const indices = new Map<string, readonly Record<string, unknown>[]>();
  let shardFailure = false;
  let timedOut = false;
  const mapping = options.mapping ?? {};
  const bodies: Record<string, unknown>[] = [];

  const handler = (req: Recorded): Answer => {
    const m = /^\/([^/]+)\/_search$/.exec(req.path);
    if (req.method !== 'POST' || m === null) return esError(405, 'illegal_argument_exception', `Incorrect HTTP method for uri [${req.path}] and method [${req.method}]`);
    const auth = options.auth;
    if (auth !== undefined) {
      const given = req.headers.authorization ?? '';
      const basic = auth.basic === undefined ? undefined : `Basic ${Buffer.from(`${auth.basic[0]}:${auth.basic[1]}`).toString('base64')}`;
      if (auth.forbiddenKey !== undefined && given === `ApiKey ${auth.forbiddenKey}`) {
        return esError(403, 'security_exception', `action [indices:data/read/search] is unauthorized for API key id [k1] of user [reader] on indices [${decodeURIComponent(m[1]!)}], this action is granted by the index privileges [read,all]`);
      }
      if (given !== basic && given !== `ApiKey ${auth.apiKey ?? ''}`) {
        const a = esError(401, 'security_exception', given === '' ? `missing authentication credentials for REST request [${req.path}]` : `unable to authenticate user for REST request [${req.path}]`, {
          header: { 'WWW-Authenticate': ['Basic realm="security" charset="UTF-8"', 'ApiKey'] },
        });
        return { ...a, headers: { 'www-authenticate': 'Basic realm="security" charset="UTF-8", ApiKey' } };
      }
    }
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/(x-ndjson|json)/.test(type)) return { status: 406, body: { error: `Content-Type header [${type}] is not supported`, status: 406 } };
    let body: unknown;
    try {
      body = JSON.parse(req.body);
    } catch {
      return esError(400, 'x_content_parse_exception', '[1:1] Unexpected character');
    }
    if (!isRec(body)) return esError(400, 'parsing_exception', 'request body must be an object');
    bodies.push(body);
    for (const k of Object.keys(body)) if (!TOP_KEYS.has(k)) return esError(400, 'parsing_exception', `Unknown key for a VALUE_STRING in [${k}].`, { line: 1, col: 2 });
    // Resolve the indices: patterns against known ones, concrete names must exist.
    const names = decodeURIComponent(m[1]!).split(',');
    const docs: { index: string; id: string; src: Record<string, unknown> }[] = [];
    for (const n of names) {
      const matching = n.includes('*') ? [...indices.keys()].filter((k) => glob(n).test(k)) : [n];
      for (const ix of matching) {
        const list = indices.get(ix);
        if (list === undefined) {
          return esError(404, 'index_not_found_exception', `no such index [${ix}]`, { 'resource.type': 'index_or_alias', 'resource.id': ix, index_uuid: '_na_', index: ix });
        }
        list.forEach((src, i) => docs.push({ index: ix, id: String(i + 1), src }));
      }
    }
    const hits: { index: string; id: string; src: Record<string, unknown>; match: Match }[] = [];
    try {
      for (const d of docs) {
        const match = body.query === undefined ? { score: 1, terms: [] } : evaluate(body.query, d.src, mapping);
        if (match !== undefined) hits.push({ ...d, match });
      }
    } catch (err) {
      if (err instanceof BadRequest) return err.answer;
      throw err;
    }
    hits.sort((a, b) => b.match.score - a.match.score);
    const size = typeof body.size === 'number' ? body.size : 10;
    const hl = isRec(body.highlight) ? body.highlight : undefined;
    const pre = hl !== undefined && Array.isArray(hl.pre_tags) ? String(hl.pre_tags[0]) : '<em>';
    const post = hl !== undefined && Array.isArray(hl.post_tags) ? String(hl.post_tags[0]) : '</em>';
    const html = hl?.encoder === 'html';
    const out = hits.slice(0, size).map((h) => {
      const highlight: Record<string, string[]> = {};
      if (hl !== undefined && isRec(hl.fields)) {
        for (const [f, spec] of Object.entries(hl.fields)) {
          const frag = highlightField(textAt(h.src, f), h.match.terms, isRec(spec) ? spec : {}, pre, post, html);
          if (frag !== undefined) highlight[f] = frag;
        }
      }
      return {
        _index: h.index, _id: h.id, _score: h.match.score, _source: filterSource(h.src, body._source),
        ...(Object.keys(highlight).length > 0 ? { highlight } : {}),
      };
    });
    const total = options.version === 6 ? hits.length : { value: hits.length, relation: 'eq' };
    return {
      body: {
        took: 3,
        timed_out: timedOut,
        _shards: shardFailure
          ? { total: 2, successful: 1, skipped: 0, failed: 1, failures: [{ shard: 1, index: names[0], node: 'n1', reason: { type: 'node_not_connected_exception', reason: '[n2][127.0.0.1:9300] Node not connected' } }] }
          : { total: 1, successful: 1, skipped: 0, failed: 0 },
        hits: { total, max_score: out[0]?._score ?? null, hits: out },
      },
    };
  };

  const s = await startStandin(handler, {
    rateLimited() {
      return esError(429, 'es_rejected_execution_exception', 'rejected execution of org.elasticsearch.common.util.concurrent.TimedRunnable@1 on QueueResizingEsThreadPoolExecutor[name = n1/search, queue capacity = 1000]');
    },
    error() {
      return { status: 503, body: { error: { root_cause: [], type: 'search_phase_execution_exception', reason: 'all shards failed', phase: 'query', grouped: true, failed_shards: [] }, status: 503 } };
    },
  });
  return {
    ...s,
    reset() {
      s.reset();
      indices.clear();
      shardFailure = false;
      timedOut = false;
      bodies.length = 0;
    },
    setIndex(name, docs) { indices.set(name, docs); },
    setShardFailure(on) { shardFailure = on; },
    setTimedOut(on) { timedOut = on; },
    bodies: () => bodies,
  };
}
