/**
 * A stand-in for the Crossref REST API's works search on loopback, answering
 * as Crossref does (CrossRef/rest-api-doc README.md and api_format.md, and
 * clients' records of live answers):
 * - `GET /works?query=&rows=&offset=&select=&filter=&mailto=` -> 200
 *   `{"status":"ok","message-type":"work-list","message-version":"1.0.0",
 *   "message":{"facets":{},"total-results":N,"items":[...],"items-per-page":R,
 *   "query":{"start-index":O,"search-terms":q}}}` with the
 *   `x-rate-limit-limit` and `x-rate-limit-interval` headers;
 * - the items are the corpus filtered by `from-pub-date` (on `published`,
 *   else `issued`; a year or month alone is its first day), and by the
 *   query's words (any of them in the title, container title or authors);
 *   `select` keeps only the named fields;
 * - a bad `rows`, an unknown parameter, filter or select field is HTTP 400
 *   `{"status":"failed","message-type":"validation-failure","message":[{type,value,message}]}`;
 * - any other path is 404 plain text `Resource not found.`;
 * - rate-limited: 429 plain text with the rate-limit headers (and
 *   Retry-After when the test gives one); error: 502 HTML from the front proxy.
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

export interface CrossrefStandin extends Standin {
  /** The works searched. */
  setItems(items: readonly Record<string, unknown>[]): void;
  /** Answer every search with this instead (a hostile or odd body). */
  setAnswer(answer: Answer | undefined): void;
  /** The interval the rate-limit headers advertise (default `1s`). */
  setInterval(interval: string): void;
  /** Requests to /works. */
  searches(): Recorded[];
}

const PARAMETERS = new Set(['query', 'rows', 'offset', 'select', 'filter', 'mailto', 'sort', 'order', 'facet', 'cursor', 'sample']);
const FILTERS = new Set(['from-pub-date', 'until-pub-date', 'from-index-date', 'type', 'has-abstract', 'has-full-text']);
/** The fields Crossref accepts in `select`. */
export const SELECTABLE = new Set([
  'abstract', 'URL', 'resource', 'member', 'posted', 'score', 'created', 'degree', 'update-policy', 'short-title', 'license', 'ISSN',
  'container-title', 'issued', 'update-to', 'issue', 'prefix', 'approved', 'indexed', 'article-number', 'clinical-trial-number', 'accepted',
  'author', 'group-title', 'DOI', 'is-referenced-by-count', 'updated-by', 'event', 'chair', 'standards-body', 'original-title', 'funder',
  'translator', 'published', 'archive', 'published-print', 'alternative-id', 'subject', 'subtitle', 'published-online', 'publisher-location',
  'content-domain', 'reference', 'title', 'link', 'type', 'publisher', 'volume', 'references-count', 'ISBN', 'issn-type', 'assertion',
  'deposited', 'page', 'content-created', 'short-container-title', 'relation', 'editor',
]);

const failure = (type: string, value: unknown, message: string): Answer => ({
  status: 400,
  body: { status: 'failed', 'message-type': 'validation-failure', message: [{ type, value, message }] },
});

/** Epoch ms of the first day a partial date can mean. */
function dateOf(item: Record<string, unknown>): number | undefined {
  for (const k of ['published', 'issued']) {
    const d = item[k] as { 'date-parts'?: unknown[][] } | undefined;
    const parts = d?.['date-parts']?.[0];
    if (Array.isArray(parts) && typeof parts[0] === 'number') {
      return Date.UTC(parts[0], typeof parts[1] === 'number' ? parts[1] - 1 : 0, typeof parts[2] === 'number' ? parts[2] : 1);
    }
  }
  return undefined;
}

function words(v: unknown): string {
  if (typeof v === 'string') return v.toLowerCase();
  if (Array.isArray(v)) return v.map(words).join(' ');
  if (v !== null && typeof v === 'object') return Object.values(v).map(words).join(' ');
  return '';
}

export async function startCrossref(initial: readonly Record<string, unknown>[] = []): Promise<CrossrefStandin> {
  let items = [...initial];
  let override: Answer | undefined;
  let interval = '1s';
  const limitHeaders = () => ({ 'x-rate-limit-limit': '50', 'x-rate-limit-interval': interval });

  const handler = (req: Recorded): Answer => {
    if (req.path !== '/works') return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'Resource not found.' };
    for (const k of req.all.keys()) {
      if (!PARAMETERS.has(k) && !k.startsWith('query.')) return failure('unknown-parameter', k, `Parameter ${k} specified but there is no such parameter available on any route`);
    }
    if (override !== undefined) return { ...override, headers: { ...limitHeaders(), ...override.headers } };
    const rowsParam = req.params.rows ?? '20';
    if (!/^\d+$/.test(rowsParam) || Number(rowsParam) > 1000) {
      return failure('integer-not-valid', rowsParam, `Integer specified as ${rowsParam} but must be a positive integer less than or equal to 1000. `);
    }
    const rows = Number(rowsParam);
    let from: number | undefined;
    for (const f of (req.params.filter ?? '').split(',').filter((x) => x !== '')) {
      const colon = f.indexOf(':');
      const name = colon < 0 ? f : f.slice(0, colon);
      const value = colon < 0 ? '' : f.slice(colon + 1);
      if (!FILTERS.has(name)) return failure('filter-not-available', name, `Filter ${name} specified but there is no such filter for this route.`);
      if (name === 'from-pub-date') {
        const m = /^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?$/.exec(value);
        if (m === null) return failure('date-not-valid', value, `Date specified as ${value} but must be of the form yyyy, yyyy-MM or yyyy-MM-dd`);
        from = Date.UTC(Number(m[1]), m[2] === undefined ? 0 : Number(m[2]) - 1, m[3] === undefined ? 1 : Number(m[3]));
      }
    }
    const select = req.params.select?.split(',').filter((x) => x !== '');
    for (const s of select ?? []) {
      if (!SELECTABLE.has(s)) return failure('select-not-available', s, `Selector ${s} specified but there is no such selector. Valid selections are: ${[...SELECTABLE].join(', ')}`);
    }
    const terms = (req.params.query ?? '').toLowerCase().split(/\s+/).filter((t) => t !== '');
    const matched = items.filter((it) => {
      if (from !== undefined) {
        const d = dateOf(it);
        if (d === undefined || d < from) return false;
      }
      if (terms.length === 0) return true;
      const hay = `${words(it.title)} ${words(it['container-title'])} ${words(it.author)}`;
      return terms.some((t) => hay.includes(t));
    });
    const offset = Number(req.params.offset ?? '0');
    const page = matched.slice(offset, offset + rows).map((it) => (select === undefined ? it : Object.fromEntries(Object.entries(it).filter(([k]) => select.includes(k)))));
    return {
      headers: { 'content-type': 'application/json', ...limitHeaders() },
      body: {
        status: 'ok', 'message-type': 'work-list', 'message-version': '1.0.0',
        message: {
          facets: {}, 'total-results': matched.length, items: page, 'items-per-page': rows,
          query: { 'start-index': offset, 'search-terms': req.params.query ?? null },
        },
      },
    };
  };

  const base = await startStandin(handler, {
    rateLimited: (retryAfter) => ({
      status: 429,
      headers: { 'content-type': 'text/plain', ...limitHeaders(), ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }) },
      body: 'Too many requests, please slow down.',
    }),
    error: () => ({
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n',
    }),
  });
  const resetBase = base.reset.bind(base);
  return Object.assign(base, {
    setItems(next: readonly Record<string, unknown>[]) { items = [...next]; },
    setAnswer(a: Answer | undefined) { override = a; },
    setInterval(i: string) { interval = i; },
    searches: () => base.requests.filter((r) => r.path === '/works'),
    reset() {
      resetBase();
      items = [...initial];
      override = undefined;
      interval = '1s';
    },
  });
}
