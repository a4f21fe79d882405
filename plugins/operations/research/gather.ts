/**
 * The gather stage: every sub-query through the enabled search providers
 * that can return the kinds of source asked for (`ask` of
 * core/search-merge.ts, as the search operation asks them, each bounded by
 * the provider timeout); then, with the index tokenizer and more than half
 * the deadline left, a feedback round: related terms from the first
 * round's best FEEDBACK_TOP results (their stored text when the local index
 * holds them, else title and snippet) against the rest of its best
 * FEEDBACK_POOL (reformulate.ts feedbackTerms), anchored to the question's
 * key phrases as up to the plan's `feedbackQueries` more sub-queries. Every
 * list fused by reciprocal rank fusion, then candidates read in rank order
 * until `max_sources` are accepted. `subQueries` of the result names every
 * sub-query sent, in order (the methodology reports these).
 * Candidates are read in waves of the plan's scrape concurrency and
 * judged in rank order, so the same results give the same sources in the
 * same order.
 *
 * Which providers: without `sources`, every enabled one. With `sources`,
 * those whose `kinds` is undefined (a general index that may return
 * anything, such as `local`) or shares a kind with the wanted ones
 * (KINDS_FOR_SOURCE: academic -> academic, news -> news, social -> social,
 * web / industry_reports / financial -> web or reference); the others are
 * skipped and named in the methodology.
 *
 * Which text of a candidate (its `textKind`), first that works:
 * 1. `index`: the local index's stored document when it holds the page
 *    (the shared collection and the account's own);
 * 2. `full_text`: the result's open-access `fullTextUrl`, read through the
 *    same page pipeline, when it answers 2xx with at least MIN_TEXT
 *    characters (a PDF reads as no text today, so it falls through);
 * 3. `abstract`: the provider's `abstract`, when it has at least MIN_TEXT
 *    characters, without reading the landing page (publishers' landing
 *    pages are often walls); the abstract string is the source's text, so
 *    evidence offsets point into it;
 * 4. `page`: the result's page through the page pipeline (host.pages:
 *    egress guard, fetchers, extractors).
 * The source's `url` is the result's own (the landing page or DOI link;
 * the final URL after redirects for a page), with the full-text URL kept
 * beside it. The same work from several providers is one candidate whose
 * scholarly fields (DOI, authors, venue, full text, abstract) are the first
 * provider's, gaps filled from the others in fusion order.
 *
 * Hard filters, each counted in `dropped` by reason: `sources` (the
 * source's type, classify.ts), `timeframe` (its publication date must fall
 * in the window: undated sources are left out), `language` (when known and
 * different), `geographic_focus` (its country, its country-code domain, or
 * a mention of the region in its text), too little text, the same URL, the
 * same DOI as a source already accepted (`duplicate_doi`), and
 * near-identical text (Jaccard similarity of word 5-shingles >= 0.8 with a
 * source already accepted).
 */
import { setMaxListeners } from 'node:events';
import { isApiFailure } from '../../../core/errors.js';
import type { IndexTokenizer, ResearchPlan, ResearchSource, SourceMeta, SourceTextKind, SourceType } from '../../../core/research.js';
import {
  domainOf, parseQuery, visibleCollections, type ProviderKind, type ProviderResult, type SearchFilters, type SearchIndex, type SearchProviderPlugin,
  type StoredDocument,
} from '../../../core/search.js';
import { ask, fuse, normaliseUrl, postFilter, type PauseBook } from '../../../core/search-merge.js';
import { classifySource, countryOfDomain, qualityOf } from './classify.js';
import { regionOf } from './plan.js';
import { feedbackQueries, feedbackTerms } from './reformulate.js';
import { normaliseDoi, sourceMetaFrom } from './source-meta.js';

/** A page scraped for research. */
export interface ScrapedPage {
  readonly finalUrl: string;
  readonly statusCode: number;
  readonly contentType: string;
  /** Main content, plain text (the whole text when no main block was found). */
  readonly text: string;
  readonly title: string;
  readonly metaData: Record<string, unknown> | undefined;
  readonly schemaData: readonly unknown[] | undefined;
}

export interface GatherDeps {
  readonly providers: readonly SearchProviderPlugin[];
  readonly providerTimeoutMs: number;
  /** Providers paused after rate-limiting us (PROVIDER_PAUSED warnings, not asked). */
  readonly pauses?: PauseBook;
  readonly index: SearchIndex | undefined;
  /** Read one URL through the page pipeline; rejects with an ApiFailure. */
  readonly scrape: (url: string, timeoutMs: number, signal: AbortSignal) => Promise<ScrapedPage>;
  /** Why the egress guard refuses a URL, or undefined when it may be fetched. */
  readonly refused: (url: string) => string | undefined;
  /** Pages read at once. */
  readonly concurrency: number;
  /** The local index's tokenizer: with it, a feedback round adds the plan's `feedbackQueries` (reformulate.ts). */
  readonly tokenizer?: IndexTokenizer;
  /** Questions of at least this many words are fused as equals with their reformulations (default LONG_QUESTION_WORDS; Infinity: never). */
  readonly longQuestionWords?: number;
}

export interface GatherRequest {
  readonly plan: ResearchPlan;
  readonly accountId: string;
  readonly now: number;
  /** Epoch ms (performance clock) by which gathering must stop. */
  readonly deadline: number;
  readonly signal: AbortSignal;
  /** Called as sources are found and read. */
  readonly progress?: (p: { readonly found: number; readonly read: number; readonly accepted: number }) => void;
}

export interface ProviderReport {
  readonly id: string;
  /** Results it returned across sub-queries. */
  readonly results: number;
  /** Sub-queries it failed or timed out on. */
  readonly failures: number;
}

/** Which providers a request asked, and which it skipped as unable to return the kinds of source wanted. */
export interface ProviderSelection {
  /** Provider kinds that can return the request's `sources`; null without `sources` (every provider is asked). */
  readonly wantedKinds: readonly ProviderKind[] | null;
  readonly asked: readonly SearchProviderPlugin[];
  /** Providers whose declared kinds share none with `wantedKinds`. */
  readonly skipped: readonly { readonly id: string; readonly kinds: readonly ProviderKind[] }[];
}

export interface GatherResult {
  readonly sources: readonly ResearchSource[];
  /** The sub-queries sent to the providers, in order: the plan's, then the feedback round's. */
  readonly subQueries: readonly string[];
  /** The related terms the feedback round found in the first round's top sources. */
  readonly feedbackTerms: readonly string[];
  /** Distinct results across sub-queries and providers. */
  readonly found: number;
  /** Candidates whose text was read (from the index, a scrape, or a provider's abstract). */
  readonly fetched: number;
  readonly fromIndex: number;
  /** Sources read through the page pipeline (their page or their full text). */
  readonly scraped: number;
  /** Sources whose text is the provider's abstract. */
  readonly fromProvider: number;
  /** Accepted sources by the text read (SourceTextKind). */
  readonly texts: Readonly<Record<SourceTextKind, number>>;
  readonly selection: {
    readonly wantedKinds: readonly ProviderKind[] | null;
    readonly asked: readonly string[];
    readonly skipped: readonly { readonly id: string; readonly kinds: readonly ProviderKind[] }[];
  };
  readonly dropped: Readonly<Record<string, number>>;
  readonly droppedSources: readonly { readonly url: string; readonly reason: string }[];
  readonly providers: readonly ProviderReport[];
  readonly warnings: readonly { readonly code: string; readonly message: string }[];
  readonly deadlineReached: boolean;
}

/** Characters of text a source needs to be read. */
export const MIN_TEXT = 80;
/** Characters of a source's text kept (the rest is not read). */
export const MAX_TEXT = 200_000;
const DUPLICATE_JACCARD = 0.8;
/** The feedback round reads the first round's best FEEDBACK_TOP results against the rest of its best FEEDBACK_POOL. */
const FEEDBACK_TOP = 5;
const FEEDBACK_POOL = 40;
/**
 * Which results are read first. A question shorter than LONG_QUESTION_WORDS
 * words is its own best search: its fused list (over the providers) comes
 * first, up to max_sources, and the reformulations' results follow in
 * fusion order (they stand in for what is dropped or fails to read). A
 * longer question (a paragraph describing what is wanted) searches badly
 * as a whole, and its key phrases do better: every list is fused as an
 * equal. Measured with benchmarks/research/subqueries.mjs (60 seeded
 * questions each): fused as equals, phrase sub-queries lowered recall in
 * sources at standard on Cranfield (0.445 -> 0.386; one-sentence questions)
 * and SciFact train (0.819 -> 0.753; claims) and raised it on CISI (0.113
 * -> 0.128; paragraphs); with this rule at 40 words: 0.438, 0.819, 0.127
 * (feedback round included). At 30 words Cranfield's longest questions
 * lost (0.432).
 */
export const LONG_QUESTION_WORDS = 40;

interface Candidate {
  readonly key: string;
  readonly result: ProviderResult;
  readonly providers: readonly string[];
  readonly rank: number;
}

/** The provider kinds that can return each source type (a provider without `kinds` can return any). */
export const KINDS_FOR_SOURCE: Readonly<Record<SourceType, readonly ProviderKind[]>> = {
  academic: ['academic'],
  news: ['news'],
  social: ['social'],
  web: ['web', 'reference'],
  industry_reports: ['web', 'reference'],
  financial: ['web', 'reference'],
};
const KIND_ORDER: readonly ProviderKind[] = ['web', 'academic', 'news', 'social', 'reference'];

/** The providers to ask for these source types (all of them without any), in their priority order. */
export function selectProviders(providers: readonly SearchProviderPlugin[], sourceTypes: readonly SourceType[] | undefined): ProviderSelection {
  if (sourceTypes === undefined || sourceTypes.length === 0) return { wantedKinds: null, asked: providers, skipped: [] };
  const wanted = new Set(sourceTypes.flatMap((t) => KINDS_FOR_SOURCE[t] ?? []));
  const asked: SearchProviderPlugin[] = [];
  const skipped: { id: string; kinds: readonly ProviderKind[] }[] = [];
  for (const p of providers) {
    if (p.kinds === undefined || p.kinds.some((k) => wanted.has(k))) asked.push(p);
    else skipped.push({ id: p.id, kinds: [...p.kinds] });
  }
  return { wantedKinds: KIND_ORDER.filter((k) => wanted.has(k)), asked, skipped };
}

/** The source type a provider's kind stands for, when it is a narrow one. */
const TYPE_OF_KIND: Partial<Record<ProviderKind, SourceType>> = { academic: 'academic', news: 'news', social: 'social' };

/**
 * What the search providers' record says a result is: a scholarly work when
 * it has a DOI or every provider that named it returns only academic works;
 * news (social) when every provider that named it returns only news
 * (social) items. Undefined when a provider that named it may return
 * anything, or the providers disagree.
 */
function providerTypeOf(c: Candidate, kindsOf: ReadonlyMap<string, readonly ProviderKind[] | undefined>): { type: SourceType; reason: string } | undefined {
  const doi = normaliseDoi(c.result.doi);
  if (doi !== null) return { type: 'academic', reason: `scholarly record (DOI ${doi}) from ${c.providers.join(', ')}` };
  const kinds = new Set<ProviderKind>();
  for (const id of c.providers) {
    const k = kindsOf.get(id);
    if (k === undefined || k.length !== 1) return undefined;
    kinds.add(k[0]!);
  }
  if (kinds.size !== 1) return undefined;
  const kind = [...kinds][0]!;
  const type = TYPE_OF_KIND[kind];
  return type === undefined ? undefined : { type, reason: `provider kind ${kind} (${c.providers.join(', ')})` };
}

/** The same work from several providers: the first record, its empty scholarly fields filled from the others (in fusion order). */
function withScholarlyGaps(first: ProviderResult, others: readonly ProviderResult[]): ProviderResult {
  let r = first;
  const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
  for (const o of others) {
    if (o === first) continue;
    const fill: Record<string, unknown> = {};
    for (const k of ['doi', 'authors', 'venue', 'fullTextUrl', 'abstract'] as const) if (empty(r[k]) && !empty(o[k])) fill[k] = o[k];
    if (Object.keys(fill).length > 0) r = { ...r, ...fill };
  }
  return r;
}

/** A provider's abstract when it is long enough to be read as the source's text. */
function usableAbstract(r: ProviderResult): string | undefined {
  const a = typeof r.abstract === 'string' ? r.abstract : undefined;
  return a !== undefined && a.trim().length >= MIN_TEXT ? a : undefined;
}

/** A result's full-text URL, when it names an http(s) one. */
function fullTextUrlOf(r: ProviderResult): string | undefined {
  const u = typeof r.fullTextUrl === 'string' ? r.fullTextUrl.trim() : '';
  return /^https?:\/\//i.test(u) ? u : undefined;
}

const SEP = '\u0000';

function filtersOf(plan: ResearchPlan): SearchFilters {
  const onlyNews = plan.sourceTypes !== undefined && plan.sourceTypes.length === 1 && plan.sourceTypes[0] === 'news';
  return {
    country: undefined,
    language: plan.language,
    publishedAfter: plan.window?.from ?? undefined,
    timeRange: undefined,
    safeSearch: 'moderate',
    resultType: onlyNews ? 'news' : 'web',
  };
}

/** Word 5-shingles of a text, hashed (FNV-1a), the first 3,000. */
function shingles(text: string): Set<number> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const out = new Set<number>();
  for (let i = 0; i + 5 <= words.length && out.size < 3000; i++) {
    let h = 0x811c9dc5;
    const s = words.slice(i, i + 5).join(' ');
    for (let j = 0; j < s.length; j++) h = Math.imul(h ^ s.charCodeAt(j), 0x01000193);
    out.add(h >>> 0);
  }
  return out;
}

function jaccard(a: Set<number>, b: Set<number>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

function schemaTypes(data: readonly unknown[] | undefined): string[] {
  const out: string[] = [];
  const visit = (v: unknown, depth: number) => {
    if (depth > 3 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) { for (const x of v.slice(0, 50)) visit(x, depth + 1); return; }
    const o = v as Record<string, unknown>;
    const t = o['@type'] ?? o.type;
    if (typeof t === 'string') out.push(t.replace(/^https?:\/\/schema\.org\//, ''));
    else if (Array.isArray(t)) for (const x of t) if (typeof x === 'string') out.push(x.replace(/^https?:\/\/schema\.org\//, ''));
    if (o['@graph'] !== undefined) visit(o['@graph'], depth + 1);
  };
  visit(data ?? [], 0);
  return out;
}

function hasScholarlyMeta(meta: Record<string, unknown> | undefined): boolean {
  if (meta === undefined) return false;
  const flat = JSON.stringify(meta).toLowerCase();
  return flat.includes('citation_journal_title') || flat.includes('citation_doi') || flat.includes('citation_conference_title');
}

/** `f` over `items` with at most `limit` running at once; results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let i = 0;
  const worker = async () => {
    while (i < items.length) {
      const n = i++;
      out[n] = await f(items[n]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Region tests for geographic_focus: codes, and the names that mention them. */
function regionTests(regions: readonly string[]): { codes: Set<string>; names: RegExp | undefined } {
  const codes = new Set<string>();
  const names: string[] = [];
  for (const r of regions) {
    const g = regionOf(r);
    for (const c of g.codes) codes.add(c);
    for (const n of g.names) if (n.trim().length > 1) names.push(n.trim());
  }
  return { codes, names: names.length === 0 ? undefined : new RegExp(`(?<![\\p{L}\\p{N}])(${names.map(escapeRe).join('|')})(?![\\p{L}\\p{N}])`, 'iu') };
}

export async function gather(req: GatherRequest, deps: GatherDeps): Promise<GatherResult> {
  const { plan } = req;
  const filters = filtersOf(plan);
  const warnings: { code: string; message: string }[] = [];
  const perQuery = Math.min(50, Math.max(plan.maxSources * 2, 10));
  const selection = selectProviders(deps.providers, plan.sourceTypes);
  const providers = selection.asked;
  if (providers.length === 0 && deps.providers.length > 0) {
    warnings.push({
      code: 'NO_MATCHING_PROVIDER',
      message: `no enabled search provider can return ${plan.sourceTypes!.join(', ')} sources (skipped: ${selection.skipped.map((p) => `${p.id} [${p.kinds.join(', ')}]`).join('; ')})`,
    });
  }
  const kindsOf = new Map(deps.providers.map((p) => [p.id, p.kinds]));

  // 1. Every sub-query through every provider asked, at once. Each ask (and each read below) listens on the
  // request's signal until it settles: that many listeners are expected, not a leak Node should warn about.
  setMaxListeners(Math.max(10, (plan.subQueries.length + (plan.feedbackQueries ?? 0)) * providers.length + deps.concurrency + 10), req.signal);
  type Outcome = { q: number; provider: string; results: readonly ProviderResult[] | undefined; warning?: string };
  const ran: string[] = [];
  const runQueries = (queries: readonly string[]): Promise<Outcome[]> => {
    const asks: Promise<Outcome>[] = [];
    for (const text of queries) {
      const parsed = parseQuery(text);
      if (!parsed.ok) continue;
      const q = ran.length;
      ran.push(text);
      for (const p of providers) {
        asks.push(ask(p, (signal) => p.search({ query: parsed.query, filters, accountId: req.accountId, signal, now: req.now, limit: perQuery }), deps.providerTimeoutMs, req.signal, deps.pauses)
          .then((o) => o.ok
            ? { q, provider: p.id, results: postFilter(o.response.results, o.response.applied, parsed.query, filters) }
            : { q, provider: p.id, results: undefined, warning: o.warning.message }));
      }
    }
    return Promise.all(asks);
  };
  const outcomes = await runQueries(plan.subQueries);
  const longQuestion = (plan.subQueries[0] ?? '').split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length >= (deps.longQuestionWords ?? LONG_QUESTION_WORDS);
  // 1b. The feedback round: related terms from the first round's top results, anchored to the question's key phrases.
  let related: string[] = [];
  const wantedFeedback = plan.feedbackQueries ?? 0;
  if (wantedFeedback > 0 && deps.tokenizer !== undefined && providers.length > 0 && outcomes.some((o) => (o.results?.length ?? 0) > 0)
    && req.deadline - performance.now() > plan.deadlineMs / 2 && !req.signal.aborted) {
    const first = fuse(outcomes.filter((o) => o.results !== undefined).sort((a, b) => a.q - b.q).map((o) => ({ provider: `${o.provider}${SEP}${o.q}`, results: o.results! })));
    const pool = first.slice(0, FEEDBACK_POOL);
    const texts = new Map<string, string>();
    if (deps.index !== undefined) {
      try {
        for (const d of await deps.index.get(visibleCollections(req.accountId), pool.map((f) => f.result.url))) {
          const k = normaliseUrl(d.url);
          if (k !== undefined && !texts.has(k)) texts.set(k, `${d.title}. ${d.text}`);
        }
      } catch {
        // The results' titles and snippets serve instead.
      }
    }
    const textOf = (f: (typeof pool)[number]) => texts.get(f.key) ?? `${f.result.title}. ${f.result.snippet}`;
    related = feedbackTerms({
      question: plan.subQueries[0] ?? '', phrases: plan.anchors ?? plan.keyphrases, top: pool.slice(0, FEEDBACK_TOP).map(textOf), rest: pool.slice(FEEDBACK_TOP).map(textOf),
      tokenizer: deps.tokenizer, language: plan.language ?? null, terms: wantedFeedback * 2,
    });
    const more = feedbackQueries(plan.anchors ?? [plan.keyphrases[0] ?? plan.subQueries[0] ?? ''], related, wantedFeedback, plan.subQueries);
    if (more.length > 0) outcomes.push(...await runQueries(more));
  }

  const providerReports = new Map<string, { results: number; failures: number }>(providers.map((p) => [p.id, { results: 0, failures: 0 }]));
  const lists: { provider: string; results: readonly ProviderResult[] }[] = [];
  // Ordered by sub-query, then provider priority: ties in fusion favour the question and the first provider.
  const priority = new Map(providers.map((p, n) => [p.id, n]));
  outcomes.sort((a, b) => a.q - b.q || priority.get(a.provider)! - priority.get(b.provider)!);
  for (const o of outcomes) {
    const r = providerReports.get(o.provider)!;
    if (o.results === undefined) {
      r.failures++;
      warnings.push({ code: 'PROVIDER_FAILED', message: `sub-query ${o.q + 1}: ${o.warning ?? `${o.provider} failed`}` });
      continue;
    }
    r.results += o.results.length;
    lists.push({ provider: `${o.provider}${SEP}${o.q}`, results: o.results });
  }
  const allFused = fuse(lists);
  // A short question's own results first (LONG_QUESTION_WORDS), in their fused order, then the rest.
  const questionFirst = longQuestion ? new Set<string>() : new Set(fuse(lists.filter((l) => l.provider.endsWith(`${SEP}0`))).slice(0, plan.maxSources).map((f) => f.key));
  const fused = [...allFused.filter((f) => questionFirst.has(f.key)), ...allFused.filter((f) => !questionFirst.has(f.key))];
  // Every record of each URL, in fusion order, for the scholarly fields fusion does not merge.
  const records = new Map<string, ProviderResult[]>();
  for (const l of lists) {
    for (const r of l.results) {
      const k = normaliseUrl(r.url);
      if (k === undefined) continue;
      const list = records.get(k);
      if (list === undefined) records.set(k, [r]);
      else list.push(r);
    }
  }
  const candidates: Candidate[] = fused.map((f, n) => ({
    key: f.key, result: withScholarlyGaps(f.result, records.get(f.key) ?? []), rank: n + 1,
    providers: [...new Set(f.sources.map((s) => s.split(SEP)[0]!))],
  }));
  req.progress?.({ found: candidates.length, read: 0, accepted: 0 });

  const dropped: Record<string, number> = {};
  const droppedSources: { url: string; reason: string }[] = [];
  const drop = (url: string, reason: string) => {
    dropped[reason] = (dropped[reason] ?? 0) + 1;
    if (droppedSources.length < 200) droppedSources.push({ url, reason });
  };

  // 2. What can be judged before reading: the egress guard, dates, languages and types the results already give.
  const wanted = plan.sourceTypes === undefined ? undefined : new Set<SourceType>(plan.sourceTypes);
  const window = plan.window;
  const outside = (t: number | null) => window !== undefined && (t === null || (window.from !== null && t < window.from) || (window.to !== null && t > window.to));
  const pre: Candidate[] = [];
  for (const c of candidates) {
    const r = c.result;
    const why = deps.refused(r.url);
    if (why !== undefined) { drop(r.url, 'target_not_allowed'); continue; }
    if (window !== undefined && r.publishedAt !== null && outside(r.publishedAt)) { drop(r.url, 'timeframe'); continue; }
    if (plan.language !== undefined && r.language && r.language !== plan.language) { drop(r.url, 'language'); continue; }
    if (wanted !== undefined && r.type) {
      // A type the provider states is final; otherwise the page decides once read.
      const t = classifySource({ url: r.url, domain: domainOf(r.url), documentType: r.type });
      if (t.reason.startsWith('document type') && !wanted.has(t.type)) { drop(r.url, 'source_type'); continue; }
    }
    pre.push(c);
  }

  // 3. Stored texts for every candidate at once.
  const stored = new Map<string, StoredDocument>();
  if (deps.index !== undefined && pre.length > 0) {
    try {
      for (const d of await deps.index.get(visibleCollections(req.accountId), pre.slice(0, 500).map((c) => c.result.url))) {
        const k = normaliseUrl(d.url);
        // The account's own copy wins over the shared one.
        if (k !== undefined && (!stored.has(k) || d.collection !== 'shared')) stored.set(k, d);
      }
    } catch (e) {
      warnings.push({ code: 'INDEX_UNAVAILABLE', message: `the local index could not be read: ${e instanceof Error ? e.message : String(e)}` });
    }
  }

  const regions = plan.regions.length > 0 ? regionTests(plan.regions) : undefined;
  const accepted: ResearchSource[] = [];
  const acceptedShingles: Set<number>[] = [];
  const acceptedKeys = new Set<string>();
  const acceptedDois = new Set<string>();
  let fetched = 0;
  let fromIndex = 0;
  let scraped = 0;
  let fromProvider = 0;
  const texts: Record<SourceTextKind, number> = { full_text: 0, abstract: 0, page: 0, index: 0 };
  let deadlineReached = false;

  /**
   * One candidate's text (see the header for the order). `page` is the page
   * read: the result's own for `page`, the full text's for `full_text`.
   */
  type Read = {
    c: Candidate; kind?: SourceTextKind; doc?: StoredDocument; page?: ScrapedPage; abstract?: string;
    fullTextUrl?: string; fullTextFailure?: string; error?: string;
  };
  const failureOf = (e: unknown) => `fetch_failed:${isApiFailure(e) ? e.code.toLowerCase() : 'fetch_failed'}`;
  /** The full text, or why not (the same words as `dropped`'s reasons). */
  const readFullText = async (url: string): Promise<{ page: ScrapedPage } | { failure: string }> => {
    if (deps.refused(url) !== undefined) return { failure: 'target_not_allowed' };
    const left = req.deadline - performance.now();
    if (left < 500) return { failure: 'deadline' };
    try {
      const page = await deps.scrape(url, Math.min(15_000, left), req.signal);
      if (page.statusCode < 200 || page.statusCode > 299) return { failure: `http_${page.statusCode}` };
      if (page.text.trim().length < MIN_TEXT) return { failure: 'too_little_text' };
      return { page };
    } catch (e) {
      return { failure: failureOf(e) };
    }
  };
  const read = async (c: Candidate): Promise<Read> => {
    const doc = stored.get(c.key);
    if (doc !== undefined && doc.text.trim().length > 0) return { c, kind: 'index', doc };
    const fullTextUrl = fullTextUrlOf(c.result);
    let fullTextFailure: string | undefined;
    if (fullTextUrl !== undefined) {
      const got = await readFullText(fullTextUrl);
      if ('page' in got) return { c, kind: 'full_text', page: got.page, fullTextUrl };
      fullTextFailure = got.failure;
    }
    const abstract = usableAbstract(c.result);
    if (abstract !== undefined) return { c, kind: 'abstract', abstract, fullTextUrl, fullTextFailure };
    const left = req.deadline - performance.now();
    if (left < 500) return { c, error: 'deadline', fullTextUrl, fullTextFailure };
    try {
      return { c, kind: 'page', page: await deps.scrape(c.result.url, Math.min(15_000, left), req.signal), fullTextUrl, fullTextFailure };
    } catch (e) {
      return { c, error: isApiFailure(e) ? e.code.toLowerCase() : 'fetch_failed', fullTextUrl, fullTextFailure };
    }
  };

  const judge = (x: Read): ResearchSource | undefined => {
    const { c } = x;
    const url = c.result.url;
    if (x.error !== undefined) { drop(url, x.error === 'deadline' ? 'deadline' : `fetch_failed:${x.error}`); return undefined; }
    fetched++;
    const kind = x.kind!;
    const doc = x.doc;
    const page = x.page;
    // The page read is the source for `page`; a full text or an abstract stands for the result's own URL.
    const finalUrl = kind === 'index' ? doc!.url : kind === 'page' ? page!.finalUrl : url;
    const key = normaliseUrl(finalUrl) ?? c.key;
    const fullTextKey = kind === 'full_text' ? normaliseUrl(page!.finalUrl) : undefined;
    if (acceptedKeys.has(key) || acceptedKeys.has(c.key) || (fullTextKey !== undefined && acceptedKeys.has(fullTextKey))) { drop(url, 'duplicate_url'); return undefined; }
    if (kind === 'page' && (page!.statusCode < 200 || page!.statusCode > 299)) { drop(url, `http_${page!.statusCode}`); return undefined; }
    const text = (kind === 'index' ? doc!.text : kind === 'abstract' ? x.abstract! : page!.text).slice(0, MAX_TEXT);
    if (text.trim().length < MIN_TEXT) { drop(url, 'too_little_text'); return undefined; }
    const providerType = providerTypeOf(c, kindsOf);
    const meta: SourceMeta = sourceMetaFrom({
      url: finalUrl,
      title: doc?.title ?? page?.title ?? c.result.title,
      metaData: page?.metaData,
      schemaData: page?.schemaData,
      indexed: doc === undefined
        ? { title: c.result.title, author: null, siteName: null, doi: null, publishedAt: c.result.publishedAt, type: c.result.type ?? null }
        : { title: doc.title, author: doc.author, siteName: doc.siteName, doi: doc.doi, publishedAt: doc.publishedAt, type: doc.type },
      provider: {
        doi: c.result.doi ?? null, authors: c.result.authors ?? null, venue: c.result.venue ?? null,
        // A scholarly index's record (see source-meta.ts): a DOI, document type academic, or only academic providers named it.
        authoritative: c.result.type === 'academic' || providerType?.type === 'academic',
      },
    });
    const domain = domainOf(finalUrl);
    const cls = classifySource({
      url: finalUrl, domain, documentType: doc?.type ?? c.result.type ?? null,
      schemaTypes: schemaTypes(page?.schemaData), scholarlyMeta: hasScholarlyMeta(page?.metaData), providerType,
    });
    if (wanted !== undefined && !wanted.has(cls.type)) { drop(url, 'source_type'); return undefined; }
    const publishedAt = meta.publishedAt ?? c.result.publishedAt ?? null;
    if (outside(publishedAt)) { drop(url, publishedAt === null ? 'undated' : 'timeframe'); return undefined; }
    const language = doc?.language ?? c.result.language ?? (typeof page?.metaData?.language === 'string' ? (page.metaData.language as string).slice(0, 2).toLowerCase() : null);
    if (plan.language !== undefined && language !== null && language !== plan.language) { drop(url, 'language'); return undefined; }
    const country = doc?.country ?? c.result.country ?? null;
    if (regions !== undefined) {
      const inRegion = (country !== null && regions.codes.has(country.toUpperCase()))
        || (countryOfDomain(domain) !== undefined && regions.codes.has(countryOfDomain(domain)!))
        || (regions.names !== undefined && regions.names.test(text.slice(0, 50_000)));
      if (!inRegion) { drop(url, 'geographic_focus'); return undefined; }
    }
    // The same work under two URLs (a landing page and a repository's copy): one DOI, one source.
    const doiKey = meta.doi?.toLowerCase();
    if (doiKey !== undefined && acceptedDois.has(doiKey)) { drop(url, 'duplicate_doi'); return undefined; }
    const sh = shingles(text);
    if (acceptedShingles.some((s) => jaccard(s, sh) >= DUPLICATE_JACCARD)) { drop(url, 'duplicate_text'); return undefined; }
    acceptedShingles.push(sh);
    if (doiKey !== undefined) acceptedDois.add(doiKey);
    acceptedKeys.add(key);
    acceptedKeys.add(c.key);
    if (fullTextKey !== undefined) acceptedKeys.add(fullTextKey);
    if (kind === 'index') fromIndex++;
    else if (kind === 'abstract') fromProvider++;
    else scraped++;
    texts[kind]++;
    const fullMeta = { ...meta, publishedAt };
    return {
      id: `src_${accepted.length + 1}`,
      url: finalUrl,
      domain,
      type: cls.type,
      typeReason: cls.reason,
      meta: fullMeta,
      language,
      country,
      text,
      origin: kind === 'index' ? 'index' : kind === 'abstract' ? 'provider' : 'scrape',
      textKind: kind,
      fullTextUrl: x.fullTextUrl ?? null,
      fullTextFailure: x.fullTextFailure ?? null,
      providers: c.providers,
      searchRank: c.rank,
      fetchedAt: req.now,
      quality: qualityOf(cls.type, fullMeta),
    };
  };

  // 4. Read in waves, judged in rank order.
  const wave = Math.max(1, deps.concurrency);
  let next = 0;
  while (accepted.length < plan.maxSources && next < pre.length) {
    if (req.signal.aborted) break;
    if (performance.now() >= req.deadline) { deadlineReached = true; break; }
    const need = plan.maxSources - accepted.length;
    // Stored texts cost nothing to read: take them with the wave.
    const batch = pre.slice(next, next + Math.max(wave, Math.min(need, 50)));
    next += batch.length;
    const reads = await mapLimit(batch, wave, read);
    for (const r of reads) {
      if (accepted.length >= plan.maxSources) break;
      const s = judge(r);
      if (s !== undefined) accepted.push(s);
    }
    req.progress?.({ found: candidates.length, read: fetched, accepted: accepted.length });
  }
  if (deadlineReached) warnings.push({ code: 'DEADLINE_REACHED', message: `the ${plan.depth} deadline (${plan.deadlineMs / 1000} s) was reached while reading sources; the report uses the ${accepted.length} read by then` });
  if (outcomes.length > 0 && outcomes.every((o) => o.results === undefined)) warnings.push({ code: 'SEARCH_UNAVAILABLE', message: 'no search provider answered any sub-query' });

  return {
    sources: accepted,
    subQueries: ran,
    feedbackTerms: related,
    found: candidates.length,
    fetched,
    fromIndex,
    scraped,
    fromProvider,
    texts,
    selection: { wantedKinds: selection.wantedKinds, asked: providers.map((p) => p.id), skipped: selection.skipped },
    dropped,
    droppedSources,
    providers: providers.map((p) => ({ id: p.id, ...providerReports.get(p.id)! })),
    warnings,
    deadlineReached,
  };
}
