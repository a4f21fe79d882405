/**
 * A stand-in OpenAlex API on loopback, for the openalex provider's tests. It
 * answers `GET /works` as OpenAlex does (its documentation and its API's
 * source, ourresearch/openalex-elastic-api: core/exceptions.py,
 * core/search.py, core/utils.py process_id_only_fields, works/schemas.py and
 * its pagination and select tests):
 *
 * - `{"meta": {"count", "db_response_time_ms", "page", "per_page",
 *   "groups_count": null}, "results": [Work...], "group_by": []}`; a Work's
 *   keys in WorksSchema's order; `select` keeps only the named root fields;
 *   `relevance_score` only on searches;
 * - `per-page` (or `per_page`) outside 1..200 is 400 `{"error": "Pagination
 *   error.", "message": "per-page parameter must be between 1 and 200"}`; a
 *   non-number is 400 `Invalid query parameters error.` "Param per-page must
 *   be a number."; a `select` field WorksSchema does not declare is 400 "<f>
 *   is not a valid select field. Valid fields for select are: ..."; an
 *   unknown filter is 400 "<f> is not a valid field..."; an unquoted `*` or
 *   `?` in `search` is 400 "Wildcards (* or ?) require exact (no-stem)
 *   search..."; unbalanced quotes or parentheses are 400 too;
 * - `api_key` that is not one of `keys` is 401 (as the live API answers a
 *   bogus or blank key);
 * - `legacy403` answers every refused parameter with 403 instead of 400 (as
 *   OpenAlex did before 2025: its older tests assert 403);
 * - the shared failure modes: rate-limited is 429 `{"error": "Rate limit
 *   exceeded", ...}` (Retry-After when given), error is 500 `{"error":
 *   "Internal server error", ...}`; `setForbidden(body)` answers 403 with that
 *   body (the error page's "Rate limit exceeded; slow down", or a block page).
 *
 * Filtering done as OpenAlex would: `language:xx` keeps works in that
 * language, `from_publication_date:YYYY-MM-DD` keeps works dated on or after
 * it, `to_publication_date` before or on it, `type:` that type. The search
 * itself matches nothing: every work set with `setWorks` is a hit (in order).
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

/** WorksSchema's declared fields, in order (works/schemas.py): what select accepts. */
export const WORK_FIELDS = [
  'id', 'doi', 'title', 'display_name', 'relevance_score', 'publication_year', 'publication_date', 'ids', 'language', 'primary_location',
  'type', 'type_crossref', 'indexed_in', 'open_access', 'authorships', 'countries_distinct_count', 'institutions_distinct_count',
  'corresponding_author_ids', 'corresponding_institution_ids', 'apc_list', 'apc_paid', 'is_authors_truncated', 'has_fulltext',
  'fulltext_origin', 'cited_by_count', 'cited_by_percentile_year', 'biblio', 'is_retracted', 'is_paratext', 'keywords', 'concepts', 'mesh',
  'locations_count', 'locations', 'best_oa_location', 'sustainable_development_goals', 'grants', 'referenced_works_count',
  'referenced_works', 'related_works', 'ngrams_url', 'abstract_inverted_index', 'cited_by_api_url', 'counts_by_year', 'updated_date',
  'created_date',
] as const;

const FILTERS = new Set(['language', 'from_publication_date', 'to_publication_date', 'type', 'publication_year', 'is_oa', 'open_access.is_oa', 'title.search']);

export interface FakeOpenalex extends Standin {
  works(): Recorded[];
  /** Works as OpenAlex stores them (any fields; `relevance_score` is added on searches unless given). */
  setWorks(works: readonly Record<string, unknown>[]): void;
  setCount(n: number | undefined): void;
  /** Accepted API keys (default: any non-blank key). */
  setKeys(keys: readonly string[] | undefined): void;
  setLegacy403(on: boolean): void;
  /** Answer 403 with this JSON body or text (undefined: normal answers). */
  setForbidden(body: object | string | undefined, headers?: Record<string, string>): void;
  /** Answer every search with this body and status instead. */
  setRaw(answer: Answer | undefined): void;
}

/** A full Work, shaped as the API sends it, with overrides. */
export function work(n: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `https://openalex.org/W${1000 + n}`,
    doi: `https://doi.org/10.1234/ex.${n}`,
    title: `Work number ${n}`,
    display_name: `Work number ${n}`,
    publication_year: 2021,
    publication_date: '2021-03-04',
    ids: { openalex: `https://openalex.org/W${1000 + n}`, doi: `https://doi.org/10.1234/ex.${n}` },
    language: 'en',
    primary_location: {
      is_oa: false,
      landing_page_url: `https://publisher.example/article/${n}`,
      pdf_url: null,
      source: { id: 'https://openalex.org/S1', display_name: 'Journal of Examples', issn_l: '1234-5678', issn: ['1234-5678'], is_oa: false, is_in_doaj: false, host_organization: 'https://openalex.org/P1', host_organization_name: 'Example Press', host_organization_lineage: ['https://openalex.org/P1'], host_organization_lineage_names: ['Example Press'], type: 'journal' },
      license: null,
      version: 'publishedVersion',
      is_accepted: true,
      is_published: true,
    },
    type: 'article',
    type_crossref: 'journal-article',
    indexed_in: ['crossref'],
    open_access: { is_oa: true, oa_status: 'green', oa_url: `https://repository.example/${n}.pdf`, any_repository_has_fulltext: true },
    authorships: [
      { author_position: 'first', author: { id: 'https://openalex.org/A1', display_name: 'Ada Lovelace', orcid: null }, institutions: [], countries: [], is_corresponding: false, raw_author_name: 'Ada Lovelace', raw_affiliation_strings: [] },
      { author_position: 'last', author: { id: 'https://openalex.org/A2', display_name: 'Charles Babbage', orcid: null }, institutions: [], countries: [], is_corresponding: false, raw_author_name: 'C. Babbage', raw_affiliation_strings: [] },
    ],
    cited_by_count: 12,
    is_retracted: false,
    is_paratext: false,
    best_oa_location: {
      is_oa: true, landing_page_url: `https://repository.example/record/${n}`, pdf_url: `https://repository.example/${n}.pdf`,
      source: { id: 'https://openalex.org/S2', display_name: 'Example Repository', type: 'repository' }, license: 'cc-by', version: 'acceptedVersion', is_accepted: true, is_published: false,
    },
    referenced_works: ['https://openalex.org/W1', 'https://openalex.org/W2'],
    related_works: [],
    abstract_inverted_index: { We: [0], study: [1], examples: [2, 5], of: [3], many: [4] },
    cited_by_api_url: `https://api.openalex.org/works?filter=cites:W${1000 + n}`,
    counts_by_year: [],
    updated_date: '2024-06-01T00:00:00.000000',
    created_date: '2021-03-10',
    ...over,
  };
}

/** Whether quotes and parentheses balance in a search string. */
function balanced(s: string): boolean {
  if ((s.match(/"/g) ?? []).length % 2 !== 0) return false;
  let depth = 0;
  for (const ch of s.replace(/"[^"]*"/g, '')) {
    if (ch === '(') depth++;
    if (ch === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

export async function startOpenalex(): Promise<FakeOpenalex> {
  let works: readonly Record<string, unknown>[] = [];
  let count: number | undefined;
  let keys: readonly string[] | undefined;
  let legacy403 = false;
  let forbidden: { body: object | string; headers: Record<string, string> } | undefined;
  let raw: Answer | undefined;

  const refuse = (error: string, message: string): Answer => ({ status: legacy403 ? 403 : 400, body: { error, message } });

  const handler = (req: Recorded): Answer => {
    if (req.path !== '/works') return { status: 404, body: { error: '404 Not Found', message: 'The requested URL was not found on the server.' } };
    const p = req.params;
    if (p.api_key !== undefined && (p.api_key.trim() === '' || (keys !== undefined ? !keys.includes(p.api_key) : false))) {
      return { status: 401, body: { error: 'Invalid API key', message: 'The API key is not valid. Get one at https://openalex.org/settings/api' } };
    }
    if (forbidden !== undefined) {
      return { status: 403, headers: typeof forbidden.body === 'string' ? { 'content-type': 'text/html', ...forbidden.headers } : forbidden.headers, body: forbidden.body };
    }
    if (raw !== undefined) return raw;
    const perPageRaw = p['per-page'] ?? p.per_page ?? '25';
    if (!/^-?\d+$/.test(perPageRaw)) return refuse('Invalid query parameters error.', 'Param per-page must be a number.');
    const perPage = Number(perPageRaw);
    if (perPage < 1 || perPage > 200) return refuse('Pagination error.', 'per-page parameter must be between 1 and 200');
    const pageRaw = p.page ?? '1';
    if (!/^\d+$/.test(pageRaw) || Number(pageRaw) < 1) return refuse('Invalid query parameters error.', 'Param page must be a number.');
    const page = Number(pageRaw);
    const select = p.select?.split(',').map((f) => f.trim());
    for (const f of select ?? []) {
      if (!(WORK_FIELDS as readonly string[]).includes(f)) {
        return refuse('Invalid query parameters error.', `${f} is not a valid select field. Valid fields for select are: ${WORK_FIELDS.join(', ')}.`);
      }
    }
    const search = p.search;
    if (search !== undefined) {
      const unquoted = search.replace(/"[^"]*"/g, ' ');
      if (/[*?]/.test(unquoted)) {
        return refuse('Invalid query parameters error.', 'Wildcards (* or ?) require exact (no-stem) search. The default search is stemmed, so the literal text before the wildcard is removed when the work is indexed and the search returns wrong results. Use the search.exact= parameter instead (or the default.search.exact filter), e.g. search.exact=' + search + '.');
      }
      if (!balanced(search)) return refuse('Invalid query parameters error.', 'Search query could not be parsed: check quotes and parentheses.');
    }
    let hits = [...works];
    for (const part of (p.filter ?? '').split(',').filter((x) => x !== '')) {
      const colon = part.indexOf(':');
      const name = colon < 0 ? part : part.slice(0, colon);
      const value = colon < 0 ? '' : part.slice(colon + 1);
      if (!FILTERS.has(name)) return refuse('Invalid query parameters error.', `${name} is not a valid field. Valid fields are underscore or hyphenated versions of: ${[...FILTERS].join(', ')}`);
      if (name === 'language') hits = hits.filter((w) => w?.language === value);
      if (name === 'type') hits = hits.filter((w) => w.type === value);
      if (name === 'from_publication_date' || name === 'to_publication_date') {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return refuse('Invalid query parameters error.', `Value for param ${name} must be a date in format yyyy-mm-dd.`);
        hits = hits.filter((w) => typeof w.publication_date === 'string' && (name === 'from_publication_date' ? w.publication_date >= value : w.publication_date <= value));
      }
    }
    const slice = hits.slice((page - 1) * perPage, page * perPage).map((w, i) => {
      // Hostile entries (not objects) are sent as they are.
      if (typeof w !== 'object' || w === null || Array.isArray(w)) return w;
      const full: Record<string, unknown> = search !== undefined && !('relevance_score' in w) ? { ...w, relevance_score: 1000 - i - (page - 1) * perPage } : { ...w };
      if (select === undefined) return full;
      return Object.fromEntries(select.filter((f) => f in full).map((f) => [f, full[f]]));
    });
    return {
      body: { meta: { count: count ?? hits.length, db_response_time_ms: 42, page, per_page: perPage, groups_count: null }, results: slice, group_by: [] },
    };
  };

  const standin = await startStandin(handler, {
    rateLimited: (retryAfter) => ({
      status: 429,
      headers: retryAfter === undefined ? {} as Record<string, string> : { 'retry-after': String(retryAfter) },
      body: { error: 'Rate limit exceeded', message: 'You have exceeded your daily budget. Get a free API key at https://openalex.org/settings/api for more.' },
    }),
    error: () => ({ status: 500, body: { error: 'Internal server error', message: 'Something went wrong. Please try again.' } }),
  });
  const baseReset = standin.reset.bind(standin);
  return Object.assign(standin, {
    works: () => standin.requests.filter((r) => r.path === '/works'),
    setWorks(w: readonly Record<string, unknown>[]) { works = w; },
    setCount(n: number | undefined) { count = n; },
    setKeys(k: readonly string[] | undefined) { keys = k; },
    setLegacy403(on: boolean) { legacy403 = on; },
    setForbidden(body: object | string | undefined, headers: Record<string, string> = {}) { forbidden = body === undefined ? undefined : { body, headers }; },
    setRaw(a: Answer | undefined) { raw = a; },
    reset() {
      baseReset();
      works = [];
      count = undefined;
      keys = undefined;
      legacy403 = false;
      forbidden = undefined;
      raw = undefined;
    },
  });
}
