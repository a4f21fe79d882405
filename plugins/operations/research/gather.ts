/**
 * The gather stage: every sub-query through every enabled search provider
 * (`ask` of core/search-merge.ts, as the search operation asks them, each
 * bounded by the provider timeout), the lists fused by reciprocal rank
 * fusion, then candidates read in rank order until `max_sources` are
 * accepted: the stored text of the local index when it holds the page (the
 * shared collection and the account's own), otherwise a read through the
 * page pipeline (host.pages: egress guard, fetchers, extractors).
 * Candidates are read in waves of the plan's scrape concurrency and
 * judged in rank order, so the same results give the same sources in the
 * same order.
 *
 * Hard filters, each counted in `dropped` by reason: `sources` (the
 * source's type, classify.ts), `timeframe` (its publication date must fall
 * in the window: undated sources are left out), `language` (when known and
 * different), `geographic_focus` (its country, its country-code domain, or
 * a mention of the region in its text), too little text, the same URL, and
 * near-identical text (Jaccard similarity of word 5-shingles >= 0.8 with a
 * source already accepted).
 */
import { isApiFailure } from '../../../core/errors.js';
import type { ResearchPlan, ResearchSource, SourceMeta, SourceType } from '../../../core/research.js';
import {
  domainOf, parseQuery, visibleCollections, type ProviderResult, type SearchFilters, type SearchIndex, type SearchProviderPlugin, type StoredDocument,
} from '../../../core/search.js';
import { ask, fuse, normaliseUrl, postFilter } from '../../../core/search-merge.js';
import { classifySource, countryOfDomain, qualityOf } from './classify.js';
import { regionOf } from './plan.js';
import { sourceMetaFrom } from './source-meta.js';

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
  readonly index: SearchIndex | undefined;
  /** Read one URL through the page pipeline; rejects with an ApiFailure. */
  readonly scrape: (url: string, timeoutMs: number, signal: AbortSignal) => Promise<ScrapedPage>;
  /** Why the egress guard refuses a URL, or undefined when it may be fetched. */
  readonly refused: (url: string) => string | undefined;
  /** Pages read at once. */
  readonly concurrency: number;
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

export interface GatherResult {
  readonly sources: readonly ResearchSource[];
  /** Distinct results across sub-queries and providers. */
  readonly found: number;
  /** Candidates whose text was read (from the index or a scrape). */
  readonly fetched: number;
  readonly fromIndex: number;
  readonly scraped: number;
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

interface Candidate {
  readonly key: string;
  readonly result: ProviderResult;
  readonly providers: readonly string[];
  readonly rank: number;
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

  // 1. Every sub-query through every provider, at once.
  const asks: Promise<{ q: number; provider: string; results: readonly ProviderResult[] | undefined; warning?: string }>[] = [];
  plan.subQueries.forEach((text, q) => {
    const parsed = parseQuery(text);
    if (!parsed.ok) return;
    for (const p of deps.providers) {
      asks.push(ask(p, (signal) => p.search({ query: parsed.query, filters, accountId: req.accountId, signal, now: req.now, limit: perQuery }), deps.providerTimeoutMs, req.signal)
        .then((o) => o.ok
          ? { q, provider: p.id, results: postFilter(o.response.results, o.response.applied, parsed.query, filters) }
          : { q, provider: p.id, results: undefined, warning: o.warning.message }));
    }
  });
  const outcomes = await Promise.all(asks);
  const providerReports = new Map<string, { results: number; failures: number }>(deps.providers.map((p) => [p.id, { results: 0, failures: 0 }]));
  const lists: { provider: string; results: readonly ProviderResult[] }[] = [];
  // Ordered by sub-query, then provider priority: ties in fusion favour the question and the first provider.
  const priority = new Map(deps.providers.map((p, n) => [p.id, n]));
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
  const fused = fuse(lists);
  const candidates: Candidate[] = fused.map((f, n) => ({
    key: f.key, result: f.result, rank: n + 1,
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
  let fetched = 0;
  let fromIndex = 0;
  let scraped = 0;
  let deadlineReached = false;

  type Read = { c: Candidate; doc?: StoredDocument; page?: ScrapedPage; error?: string };
  const read = async (c: Candidate): Promise<Read> => {
    const doc = stored.get(c.key);
    if (doc !== undefined && doc.text.trim().length > 0) return { c, doc };
    const left = req.deadline - performance.now();
    if (left < 500) return { c, error: 'deadline' };
    try {
      return { c, page: await deps.scrape(c.result.url, Math.min(15_000, left), req.signal) };
    } catch (e) {
      return { c, error: isApiFailure(e) ? e.code.toLowerCase() : 'fetch_failed' };
    }
  };

  const judge = (x: Read): ResearchSource | undefined => {
    const { c } = x;
    const url = c.result.url;
    if (x.error !== undefined) { drop(url, x.error === 'deadline' ? 'deadline' : `fetch_failed:${x.error}`); return undefined; }
    fetched++;
    const doc = x.doc;
    const page = x.page;
    const finalUrl = page?.finalUrl ?? doc!.url;
    const key = normaliseUrl(finalUrl) ?? c.key;
    if (acceptedKeys.has(key) || acceptedKeys.has(c.key)) { drop(url, 'duplicate_url'); return undefined; }
    if (page !== undefined && (page.statusCode < 200 || page.statusCode > 299)) { drop(url, `http_${page.statusCode}`); return undefined; }
    const text = (doc?.text ?? page!.text).slice(0, MAX_TEXT);
    if (text.trim().length < MIN_TEXT) { drop(url, 'too_little_text'); return undefined; }
    const meta: SourceMeta = sourceMetaFrom({
      url: finalUrl,
      title: doc?.title ?? page?.title ?? c.result.title,
      metaData: page?.metaData,
      schemaData: page?.schemaData,
      indexed: doc === undefined
        ? { title: c.result.title, author: null, siteName: null, doi: null, publishedAt: c.result.publishedAt, type: c.result.type ?? null }
        : { title: doc.title, author: doc.author, siteName: doc.siteName, doi: doc.doi, publishedAt: doc.publishedAt, type: doc.type },
    });
    const domain = domainOf(finalUrl);
    const cls = classifySource({
      url: finalUrl, domain, documentType: doc?.type ?? c.result.type ?? null,
      schemaTypes: schemaTypes(page?.schemaData), scholarlyMeta: hasScholarlyMeta(page?.metaData),
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
    const sh = shingles(text);
    if (acceptedShingles.some((s) => jaccard(s, sh) >= DUPLICATE_JACCARD)) { drop(url, 'duplicate_text'); return undefined; }
    acceptedShingles.push(sh);
    acceptedKeys.add(key);
    acceptedKeys.add(c.key);
    if (doc !== undefined) fromIndex++;
    else scraped++;
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
      origin: doc !== undefined ? 'index' : 'scrape',
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
    found: candidates.length,
    fetched,
    fromIndex,
    scraped,
    dropped,
    droppedSources,
    providers: deps.providers.map((p) => ({ id: p.id, ...providerReports.get(p.id)! })),
    warnings,
    deadlineReached,
  };
}
