/**
 * A stand-in for the Stack Exchange API's advanced search on loopback,
 * answering as the API does (api.stackexchange.com/docs: advanced-search,
 * wrapper, error-handling, throttle, compression, filters):
 * - `GET /2.3/search/advanced?q=&site=&order=&sort=&pagesize=&page=&fromdate=&filter=&key=`;
 * - every answer gzip-compressed (`Content-Encoding: gzip`), errors included;
 * - 200 with the common wrapper `{"items", "has_more", "quota_max",
 *   "quota_remaining"}` (+ `backoff` when the test sets one); questions carry
 *   `body` only with the `withbody` filter; titles HTML-escaped;
 * - errors: HTTP 400 with `{"error_id", "error_message", "error_name"}`:
 *   bad_parameter for a missing or unknown site, a refused key, a bad
 *   pagesize/page/sort/order/fromdate/filter; no_method for another path;
 *   throttle_violation (502) once the quota is spent;
 * - rate-limited: the throttle_violation with "more requests available in N
 *   seconds" (N: the test's retryAfter, else 82700); error: a 503 from the
 *   front of the stack, plain HTML and uncompressed (errors "early in the
 *   stack" are, says the compression page).
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

/** A question as the API returns it (title already HTML-escaped, body HTML). */
export type Question = Readonly<Record<string, unknown>>;

export interface StackexchangeStandin extends Standin {
  setQuestions(items: readonly Question[]): void;
  /** Answer every search with this wrapper body (200, gzip) or answer instead. */
  setAnswer(answer: Answer | undefined): void;
  /** `backoff` (seconds) on the next answers, until set back to undefined. */
  setBackoff(seconds: number | undefined): void;
  /** Requests left today (default 300 keyless, 10000 with a key); at 0 the API answers throttle_violation. */
  setQuota(remaining: number): void;
  searches(): Recorded[];
}

export const SITES = new Set(['stackoverflow', 'superuser', 'serverfault', 'unix', 'askubuntu', 'math']);
export const VALID_KEY = 'U4DMV*8nvpm3EOpvf69Rxw((';

const error = (id: number, name: string, message: string): Answer => ({
  status: 400, gzip: true, body: { error_id: id, error_message: message, error_name: name },
});
const bad = (message: string) => error(400, 'bad_parameter', message);

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, '\'').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

export async function startStackexchange(initial: readonly Question[] = []): Promise<StackexchangeStandin> {
  let questions = [...initial];
  let override: Answer | undefined;
  let backoff: number | undefined;
  let quota: number | undefined;

  const handler = (req: Recorded): Answer => {
    if (req.path !== '/2.3/search/advanced') return error(404, 'no_method', 'no method found with this name');
    const p = req.params;
    if (p.site === undefined || p.site === '') return bad('site is required');
    if (!SITES.has(p.site)) return bad(`No site found for name \`${p.site}\``);
    if (p.key !== undefined && p.key !== VALID_KEY) return bad('key');
    const quotaMax = p.key === undefined ? 300 : 10_000;
    if (quota === undefined) quota = quotaMax;
    if (quota <= 0) return error(502, 'throttle_violation', 'too many requests from this IP, more requests available in 82700 seconds');
    quota--;
    if (override !== undefined) return override;
    const pagesize = p.pagesize === undefined ? 30 : Number(p.pagesize);
    if (!Number.isInteger(pagesize) || pagesize < 0 || pagesize > 100) return bad('pagesize');
    const page = p.page === undefined ? 1 : Number(p.page);
    if (!Number.isInteger(page) || page < 1) return bad('page');
    if (p.sort !== undefined && !['activity', 'creation', 'votes', 'relevance'].includes(p.sort)) return bad('sort');
    if (p.order !== undefined && !['asc', 'desc'].includes(p.order)) return bad('order');
    if (p.fromdate !== undefined && !/^\d+$/.test(p.fromdate)) return bad('fromdate');
    if (p.filter !== undefined && !['default', 'withbody', 'none', 'total'].includes(p.filter)) return bad('filter');
    const from = p.fromdate === undefined ? undefined : Number(p.fromdate);
    const words = (p.q ?? '').toLowerCase().split(/\s+/).filter((w) => w !== '');
    const matched = questions.filter((q) => {
      if (from !== undefined && !(typeof q.creation_date === 'number' && q.creation_date >= from)) return false;
      const hay = `${decode(String(q.title ?? ''))} ${String(q.body ?? '')} ${Array.isArray(q.tags) ? q.tags.join(' ') : ''}`.toLowerCase();
      return words.every((w) => hay.includes(w));
    });
    const items = matched.slice((page - 1) * pagesize, page * pagesize)
      .map((q) => (p.filter === 'withbody' ? q : Object.fromEntries(Object.entries(q).filter(([k]) => k !== 'body'))));
    return {
      gzip: true,
      body: {
        items,
        has_more: matched.length > page * pagesize,
        quota_max: quotaMax,
        quota_remaining: quota,
        ...(backoff === undefined ? {} : { backoff }),
      },
    };
  };

  const base = await startStandin(handler, {
    rateLimited: (retryAfter) => error(502, 'throttle_violation', `too many requests from this IP, more requests available in ${retryAfter ?? 82700} seconds`),
    error: () => ({ status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>503 Service Unavailable</h1>No server is available to handle this request.</body></html>' }),
  });
  const resetBase = base.reset.bind(base);
  return Object.assign(base, {
    setQuestions(next: readonly Question[]) { questions = [...next]; },
    setAnswer(a: Answer | undefined) { override = a; },
    setBackoff(s: number | undefined) { backoff = s; },
    setQuota(n: number) { quota = n; },
    searches: () => base.requests.filter((r) => r.path === '/2.3/search/advanced'),
    reset() {
      resetBase();
      questions = [...initial];
      override = undefined;
      backoff = undefined;
      quota = undefined;
    },
  });
}
