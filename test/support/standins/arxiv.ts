/**
 * A stand-in arXiv API on loopback, for the arxiv provider's tests. It
 * answers `GET /api/query` with Atom 1.0 as arXiv does (the API User's
 * Manual; arXiv/arxiv-search search/serialize/atom.py, which builds the feed
 * with feedgen, and search/routes/classic_api/exceptions.py):
 *
 * - `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch=...
 *   xmlns:arxiv=...>` with `<id>`, `<title>arXiv Query: ...</title>`,
 *   `<updated>`, `<link>`, `<opensearch:itemsPerPage>`,
 *   `<opensearch:totalResults>`, `<opensearch:startIndex>`, then one
 *   `<entry>` per e-print: `<id>` (http://arxiv.org/abs/IDvN), `<title>`,
 *   `<updated>`, `<link rel="alternate" type="text/html">`, `<link
 *   rel="related" type="application/pdf" title="pdf">`, `<summary>`,
 *   `<category>`s, `<published>`, `<arxiv:comment>`, `<arxiv:journal_ref>`,
 *   `<arxiv:doi>`, `<arxiv:primary_category>`, `<author><name>` (with
 *   `<arxiv:affiliation>` when known); text escaped as XML;
 * - errors: an Atom feed with one entry titled "Error" whose summary says
 *   what is wrong and whose id is under http://arxiv.org/api/errors, sent
 *   with HTTP 400 (`legacyErrors`: HTTP 200, as the manual's older service
 *   did): `start` or `max_results` not an integer or negative, a
 *   `search_query` with unbalanced parentheses or quotes, an unknown field
 *   prefix, a `submittedDate` not `[YYYYMMDDTTTT TO YYYYMMDDTTTT]`;
 *   `max_results` over 30000 is a 400 too;
 * - the shared failure modes: rate-limited is 429 text/plain "Rate exceeded."
 *   (Retry-After when given); error is 500 with the Atom error feed
 *   (exceptions.py's handler for InternalServerError).
 *
 * Every e-print set with `setEntries` matches (in order), except that a
 * `submittedDate:[a TO b]` in the query keeps only those whose published
 * date falls in it, as arXiv does; `start` and `max_results` page them.
 * `verbatim` entries are sent as the raw XML given.
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

export interface FakeEntry {
  /** e.g. 2301.01234 */
  readonly id: string;
  readonly version?: number;
  readonly title: string;
  readonly summary: string;
  readonly authors: readonly (string | { readonly name: string; readonly affiliation: string })[];
  /** ISO 8601 Z. */
  readonly published: string;
  readonly updated?: string;
  readonly doi?: string;
  readonly journalRef?: string;
  readonly comment?: string;
  readonly primaryCategory?: string;
  readonly categories?: readonly string[];
}

export interface FakeArxiv extends Standin {
  queries(): Recorded[];
  setEntries(entries: readonly (FakeEntry | { readonly verbatim: string })[]): void;
  setTotal(n: number | undefined): void;
  setLegacyErrors(on: boolean): void;
  /** Answer every query with this instead. */
  setRaw(answer: Answer | undefined): void;
}

const ATOM_TYPE = 'application/atom+xml; charset=utf-8';
const PREFIXES = new Set(['ti', 'au', 'abs', 'co', 'jr', 'cat', 'rn', 'id', 'all', 'submittedDate', 'lastUpdatedDate']);

export const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function feedHead(title: string, total: number, start: number, size: number): string {
  return `<?xml version='1.0' encoding='UTF-8'?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>https://arxiv.org/api/Gq9mR2bX1n0uQx4EYtIkzV0tHc</id>
  <title>${esc(title)}</title>
  <updated>2026-11-28T00:00:00Z</updated>
  <link href="https://arxiv.org/api/query?search_query=&amp;start=${start}&amp;max_results=${size}&amp;id_list=" type="application/atom+xml"/>
  <opensearch:itemsPerPage>${size}</opensearch:itemsPerPage>
  <opensearch:totalResults>${total}</opensearch:totalResults>
  <opensearch:startIndex>${start}</opensearch:startIndex>
`;
}

export function errorFeed(message: string, link = 'https://arxiv.org/api/errors'): string {
  return `${feedHead('arXiv Query: search_query=&id_list=&start=0&max_results=10', 1, 0, 1)}  <entry>
    <id>${esc(link)}</id>
    <title>Error</title>
    <updated>2026-11-28T00:00:00Z</updated>
    <link href="${esc(link)}" rel="alternate" type="text/html"/>
    <summary>${esc(message)}</summary>
    <author>
      <name>arXiv api core</name>
    </author>
  </entry>
</feed>
`;
}

export function entryXml(e: FakeEntry): string {
  const v = e.version ?? 1;
  const cats = e.categories ?? [e.primaryCategory ?? 'cs.LG'];
  return `  <entry>
    <id>http://arxiv.org/abs/${e.id}v${v}</id>
    <title>${esc(e.title)}</title>
    <updated>${e.updated ?? e.published}</updated>
    <link href="https://arxiv.org/abs/${e.id}v${v}" rel="alternate" type="text/html"/>
    <link href="https://arxiv.org/pdf/${e.id}v${v}" rel="related" type="application/pdf" title="pdf"/>
    <summary>${esc(e.summary)}</summary>
${cats.map((c) => `    <category term="${esc(c)}" scheme="http://arxiv.org/schemas/atom"/>`).join('\n')}
    <published>${e.published}</published>
${e.comment === undefined ? '' : `    <arxiv:comment>${esc(e.comment)}</arxiv:comment>\n`}${e.journalRef === undefined ? '' : `    <arxiv:journal_ref>${esc(e.journalRef)}</arxiv:journal_ref>\n`}${e.doi === undefined ? '' : `    <arxiv:doi>${esc(e.doi)}</arxiv:doi>\n`}    <arxiv:primary_category term="${esc(e.primaryCategory ?? cats[0]!)}"/>
${e.authors.map((a) => (typeof a === 'string'
    ? `    <author>\n      <name>${esc(a)}</name>\n    </author>`
    : `    <author>\n      <name>${esc(a.name)}</name>\n      <arxiv:affiliation>${esc(a.affiliation)}</arxiv:affiliation>\n    </author>`)).join('\n')}
  </entry>
`;
}

/** What is wrong with a search_query, as the service would say it, or undefined. */
function queryError(q: string): string | undefined {
  if ((q.match(/"/g) ?? []).length % 2 !== 0) return `Invalid query string: '${q}'`;
  let depth = 0;
  const outside = q.replace(/"[^"]*"/g, '""');
  for (const ch of outside) {
    if (ch === '(') depth++;
    if (ch === ')' && --depth < 0) return `Invalid query string: '${q}'`;
  }
  if (depth !== 0) return `Invalid query string: '${q}'`;
  for (const m of outside.matchAll(/(?:^|[\s(])([A-Za-z_]+):/g)) {
    if (!PREFIXES.has(m[1]!)) return `Invalid query string: '${q}' (unknown field ${m[1]})`;
  }
  for (const m of outside.matchAll(/(submittedDate|lastUpdatedDate):(\S*(?: TO \S*)?)/g)) {
    if (!/^\[\d{12} TO \d{12}\]$/.test(m[2]!)) return `Invalid ${m[1]} range: expected [YYYYMMDDTTTT TO YYYYMMDDTTTT], got ${m[2]}`;
  }
  return undefined;
}

/** The [from, to] epoch ms of a submittedDate:[a TO b] in the query (inclusive, to the minute). */
function dateRange(q: string): [number, number] | undefined {
  const m = /submittedDate:\[(\d{12}) TO (\d{12})\]/.exec(q);
  if (m === null) return undefined;
  const t = (s: string) => Date.UTC(Number(s.slice(0, 4)), Number(s.slice(4, 6)) - 1, Number(s.slice(6, 8)), Number(s.slice(8, 10)), Number(s.slice(10, 12)));
  return [t(m[1]!), t(m[2]!) + 59_999];
}

export async function startArxiv(): Promise<FakeArxiv> {
  let entries: readonly (FakeEntry | { readonly verbatim: string })[] = [];
  let total: number | undefined;
  let legacyErrors = false;
  let raw: Answer | undefined;

  const fail = (message: string): Answer => ({ status: legacyErrors ? 200 : 400, headers: { 'content-type': ATOM_TYPE }, body: errorFeed(message) });

  const handler = (req: Recorded): Answer => {
    if (req.path !== '/api/query') return { status: 404, headers: { 'content-type': ATOM_TYPE }, body: errorFeed('The requested URL was not found on the server.') };
    if (raw !== undefined) return raw;
    const p = req.params;
    const start = p.start ?? '0';
    const max = p.max_results ?? '10';
    if (!/^-?\d+$/.test(start)) return fail('start must be an integer');
    if (Number(start) < 0) return fail('start must be >= 0');
    if (!/^-?\d+$/.test(max)) return fail('max_results must be an integer');
    if (Number(max) < 0) return fail('max_results must be >= 0');
    if (Number(max) > 30000) return fail('max_results must be <= 30000');
    if (p.sortBy !== undefined && !['relevance', 'lastUpdatedDate', 'submittedDate'].includes(p.sortBy)) return fail(`sortBy must be in: relevance, lastUpdatedDate, submittedDate`);
    if (p.sortOrder !== undefined && !['ascending', 'descending'].includes(p.sortOrder)) return fail(`sortOrder must be in: ascending, descending`);
    const q = p.search_query ?? '';
    const wrong = queryError(q);
    if (wrong !== undefined) return fail(wrong);
    const range = dateRange(q);
    const hits = entries.filter((e) => {
      if (range === undefined || 'verbatim' in e) return true;
      const t = Date.parse(e.published);
      return t >= range[0] && t <= range[1];
    });
    const s = Number(start), n = Number(max);
    const page = hits.slice(s, s + n);
    const body = `${feedHead(`arXiv Query: search_query=${q}&id_list=&start=${s}&max_results=${n}`, total ?? hits.length, s, n)}${page.map((e) => ('verbatim' in e ? e.verbatim : entryXml(e))).join('')}</feed>\n`;
    return { status: 200, headers: { 'content-type': ATOM_TYPE }, body };
  };

  const standin = await startStandin(handler, {
    rateLimited: (retryAfter) => ({
      status: 429,
      headers: { 'content-type': 'text/plain; charset=utf-8', ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }) },
      body: 'Rate exceeded.',
    }),
    error: () => ({ status: 500, headers: { 'content-type': ATOM_TYPE }, body: errorFeed('The server encountered an internal error and was unable to complete your request.') }),
  });
  const baseReset = standin.reset.bind(standin);
  return Object.assign(standin, {
    queries: () => standin.requests.filter((r) => r.path === '/api/query'),
    setEntries(e: readonly (FakeEntry | { readonly verbatim: string })[]) { entries = e; },
    setTotal(n: number | undefined) { total = n; },
    setLegacyErrors(on: boolean) { legacyErrors = on; },
    setRaw(a: Answer | undefined) { raw = a; },
    reset() {
      baseReset();
      entries = [];
      total = undefined;
      legacyErrors = false;
      raw = undefined;
    },
  });
}
