/**
 * A stand-in for the HN Search API (hn.algolia.com) on loopback, answering
 * as the service does (algolia/hn-search: config/routes.rb,
 * app/controllers/api/v1/search_controller.rb and base_controller.rb, the
 * API page; Algolia's answer format):
 * - `GET /api/v1/search` (relevance) and `/api/v1/search_by_date` with
 *   `query`, `tags` (ANDed, a parenthesised group ORed), `numericFilters`
 *   (`created_at_i|points|num_comments` `<|<=|=|>|>=` number, comma-separated),
 *   `page` (from 0), `hitsPerPage` (at most 1000), `advancedSyntax` (true
 *   unless given: `"phrase"` and `-word`);
 * - 200 `{"hits", "nbHits", "page", "nbPages", "hitsPerPage",
 *   "exhaustiveNbHits", "exhaustiveTypo", "exhaustive", "query", "params",
 *   "processingTimeMS", "serverTimeMS"}`, each hit with `_highlightResult`
 *   (matches in `<em>`), `_tags`, `objectID` and the item's fields;
 * - a bad parameter is Algolia's 400, rendered by the controller as
 *   `{"message": "POST https://<app>-2.algolia.io/1/indexes/Item_production/query: {\"message\":...,\"status\":400}"}`;
 * - rate-limited: 429 in the same wrapping ("Too many requests"), with
 *   Retry-After only when the test gives one; error: 500 `{"message":
 *   "Cannot reach any hosts"}` (the controller's own failure).
 */
import { startStandin, type Answer, type Recorded, type Standin } from './server.js';

/** An HN story as the index holds it (`_tags` and `_highlightResult` are made by the stand-in). */
export interface HnItem {
  readonly objectID: string;
  readonly title?: unknown;
  readonly url?: unknown;
  readonly author?: unknown;
  readonly points?: unknown;
  readonly num_comments?: unknown;
  readonly story_text?: unknown;
  readonly created_at_i?: unknown;
  readonly created_at?: unknown;
  /** Extra tags besides `story` and `author_<author>` (e.g. ask_hn). */
  readonly tags?: readonly string[];
  readonly [k: string]: unknown;
}

export interface HackernewsStandin extends Standin {
  setItems(items: readonly HnItem[]): void;
  /** Answer every search with this instead (a hostile or odd body). */
  setAnswer(answer: Answer | undefined): void;
  searches(): Recorded[];
}

const APP = 'UJ5WYC0L7X';
const wrapped = (status: number, message: string): Answer => ({
  status,
  body: { message: `POST https://${APP}-2.algolia.io/1/indexes/Item_production/query: ${JSON.stringify({ message, status })}` },
});

const NUMERIC = /^(created_at_i|points|num_comments)(<=|>=|<|>|=)(-?\d+(?:\.\d+)?)$/;

function compare(a: number, op: string, b: number): boolean {
  switch (op) {
    case '<': return a < b;
    case '<=': return a <= b;
    case '>': return a > b;
    case '>=': return a >= b;
    default: return a === b;
  }
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `value` with every occurrence of `words` wrapped in <em>. */
function highlight(value: string, words: readonly string[]): { value: string; matchedWords: string[] } {
  const matched = words.filter((w) => value.toLowerCase().includes(w));
  if (matched.length === 0) return { value, matchedWords: [] };
  const re = new RegExp(`(${matched.map(escapeRe).join('|')})`, 'gi');
  return { value: value.replace(re, '<em>$1</em>'), matchedWords: matched };
}

export async function startHackernews(initial: readonly HnItem[] = []): Promise<HackernewsStandin> {
  let items = [...initial];
  let override: Answer | undefined;

  const handler = (req: Recorded): Answer => {
    if (req.path !== '/api/v1/search' && req.path !== '/api/v1/search_by_date') {
      return { status: 404, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><body>The page you were looking for doesn\'t exist.</body></html>' };
    }
    if (override !== undefined) return override;
    const p = req.params;
    const hitsPerPage = p.hitsPerPage === undefined ? 20 : Number(p.hitsPerPage);
    if (!Number.isInteger(hitsPerPage) || hitsPerPage < 0 || hitsPerPage > 1000) return wrapped(400, `Invalid value for hitsPerPage, must be an integer between 0 and 1000`);
    const page = p.page === undefined ? 0 : Number(p.page);
    if (!Number.isInteger(page) || page < 0) return wrapped(400, 'Invalid value for page');
    const conditions: [string, string, number][] = [];
    for (const c of (p.numericFilters ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '')) {
      const m = NUMERIC.exec(c);
      if (m === null) return wrapped(400, `Invalid syntax for numeric condition: ${c}`);
      conditions.push([m[1]!, m[2]!, Number(m[3])]);
    }
    const tagGroups = (p.tags ?? '').split(/,(?![^(]*\))/).map((t) => t.trim()).filter((t) => t !== '')
      .map((t) => t.replace(/^\(|\)$/g, '').split(',').map((x) => x.trim()));
    const advanced = p.advancedSyntax !== 'false';
    const raw = p.query ?? '';
    const phrases: string[] = [];
    const excluded: string[] = [];
    const words: string[] = [];
    let rest = raw.toLowerCase();
    if (advanced) {
      rest = rest.replace(/"([^"]*)"/g, (_, ph: string) => { if (ph.trim() !== '') phrases.push(ph.trim()); return ' '; });
    }
    for (const w of rest.split(/\s+/).filter((x) => x !== '')) {
      if (advanced && w.startsWith('-') && w.length > 1) excluded.push(w.slice(1));
      else words.push(w.replace(/^-+/, ''));
    }
    const matched = items.filter((it) => {
      const tags = ['story', `author_${text(it.author)}`, `story_${it.objectID}`, ...(it.tags ?? [])];
      if (!tagGroups.every((g) => g.some((t) => tags.includes(t)))) return false;
      for (const [attr, op, value] of conditions) {
        const v = it[attr];
        if (typeof v !== 'number' || !compare(v, op, value)) return false;
      }
      const hay = `${text(it.title)} ${text(it.url)} ${text(it.author)} ${text(it.story_text)}`.toLowerCase();
      return words.every((w) => hay.includes(w)) && phrases.every((ph) => hay.includes(ph)) && !excluded.some((x) => hay.includes(x));
    });
    const all = [...words, ...phrases];
    const hits = matched.slice(page * hitsPerPage, (page + 1) * hitsPerPage).map((it) => {
      const { tags, ...fields } = it;
      const hl: Record<string, unknown> = {};
      for (const attr of ['title', 'url', 'author', 'story_text']) {
        if (typeof it[attr] !== 'string') continue;
        const h = highlight(it[attr] as string, all);
        hl[attr] = { value: h.value, matchLevel: h.matchedWords.length === 0 ? 'none' : h.matchedWords.length === all.length ? 'full' : 'partial', matchedWords: h.matchedWords };
      }
      return {
        ...fields,
        _tags: ['story', `author_${text(it.author)}`, `story_${it.objectID}`, ...(tags ?? [])],
        _highlightResult: hl,
      };
    });
    const nbPages = hitsPerPage === 0 ? 0 : Math.min(Math.ceil(matched.length / hitsPerPage), Math.floor(1000 / hitsPerPage));
    return {
      body: {
        exhaustive: { nbHits: true, typo: true },
        exhaustiveNbHits: true,
        exhaustiveTypo: true,
        hits,
        hitsPerPage,
        nbHits: matched.length,
        nbPages,
        page,
        params: new URLSearchParams({ ...p, advancedSyntax: String(advanced), analytics: 'true', analyticsTags: 'backend' }).toString(),
        processingTimeMS: 1,
        query: raw,
        serverTimeMS: 2,
      },
    };
  };

  const base = await startStandin(handler, {
    rateLimited: (retryAfter) => {
      const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
      return { ...wrapped(429, 'Too many requests'), headers };
    },
    error: () => ({ status: 500, body: { message: 'Cannot reach any hosts' } }),
  });
  const resetBase = base.reset.bind(base);
  return Object.assign(base, {
    setItems(next: readonly HnItem[]) { items = [...next]; },
    setAnswer(a: Answer | undefined) { override = a; },
    searches: () => base.requests.filter((r) => r.path.startsWith('/api/v1/search')),
    reset() {
      resetBase();
      items = [...initial];
      override = undefined;
    },
  });
}
