/**
 * Sub-query reformulation (issue 28): the plan's sub-queries are the
 * question's key phrases and names, not the question with "overview" or
 * "impact" appended, and the gather stage adds related terms from the first
 * round's top results (pseudo-relevance feedback). Every sub-query is plain
 * words a search box takes as natural text.
 */
import { describe, expect, it } from 'vitest';
import type { ResearchInput } from '../../core/research.js';
import { parseQuery, type ProviderResult, type SearchProviderPlugin } from '../../core/search.js';
import { indexTokenizer } from '../../config/research.js';
import { gather } from '../../plugins/operations/research/gather.js';
import { planResearch } from '../../plugins/operations/research/plan.js';
import { feedbackQueries, feedbackTerms, questionTerms, reformulations, stopTest } from '../../plugins/operations/research/reformulate.js';

const NOW = Date.UTC(2026, 10, 28);
const plan = (research_query: string, extra: Partial<ResearchInput> = {}) => planResearch({ research_query, ...extra }, NOW, indexTokenizer);
const stop = stopTest(indexTokenizer, null);

/** No quotes, no leading minus, no field operators, no upper-case OR/AND/NOT: words a search box reads as text. */
function expectPlain(q: string) {
  expect(q).not.toMatch(/["“”]/);
  expect(q).not.toMatch(/(^|\s)-\S/);
  expect(q).not.toMatch(/\b(site|intitle|inurl|filetype):/i);
  expect(q).not.toMatch(/\bOR\b/);
  const parsed = parseQuery(q);
  expect(parsed.ok).toBe(true);
}

const GC = 'What are the main approaches to garbage collection and storage reclamation in list processing systems?';
const CISI_LIKE = 'I am interested in articles about the use of computers in libraries, specifically in cataloguing and circulation. '
  + 'What have been the effects of automation on library staff and on the users of the library, and how were the systems evaluated?';

describe('key phrases and names of a question', () => {
  it('cuts a question into its noun phrases, without question, asking or generic words', () => {
    const t = questionTerms(GC, stop);
    expect(t.phrases).toEqual(['garbage collection', 'storage reclamation', 'list processing systems']);
  });

  it('leaves the words of asking out of a paragraph-long request', () => {
    const t = questionTerms(CISI_LIKE, stop);
    expect(t.phrases).toContain('cataloguing');
    expect(t.phrases).toContain('circulation');
    expect(t.phrases).toContain('library staff');
    for (const p of t.phrases) expect(p).not.toMatch(/\b(interested|articles|effects|use|specifically|what|how)\b/);
  });

  it('finds the names a question holds: capitalised words after the first, acronyms, quoted phrases', () => {
    const t = questionTerms('How are Tesla and BYD doing in the "electric van" market of the EU?', stop);
    expect(t.entities).toEqual(expect.arrayContaining(['Tesla', 'BYD', 'electric van', 'EU']));
    expect(t.entities).not.toContain('How');
  });

  it('with the index tokenizer, another language\'s stop words cut phrases too', () => {
    const t = questionTerms('Welche Auswirkungen hat die Energiewende auf die Strompreise in Deutschland?', stopTest(indexTokenizer, 'de'), false);
    expect(t.phrases.join(' ')).not.toMatch(/\b(die|auf|hat|in)\b/);
    expect(t.phrases.join(' ')).toMatch(/energiewende/);
    expect(t.phrases.join(' ')).toMatch(/strompreise/);
  });
});

describe('the plan\'s sub-queries', () => {
  it('are the question, its key phrases together, the main phrase and neighbouring phrases, never an appended angle', () => {
    const p = plan(GC);
    expect(p.subQueries[0]).toBe(GC);
    expect(p.subQueries).toContain('garbage collection storage reclamation list processing systems');
    expect(p.subQueries).toContain('garbage collection');
    expect(p.subQueries).toContain('garbage collection storage reclamation');
    for (const q of p.subQueries) {
      expect(q).not.toMatch(/\b(overview|analysis|impact)$/);
      expectPlain(q);
    }
    // Standard: 6 in all, 2 of them left to the feedback round.
    expect(p.subQueries.length + (p.feedbackQueries ?? 0)).toBe(6);
    expect(p.anchors?.[0]).toBe('garbage collection');
  });

  it('a short keyword query is its own only planned sub-query; the rest is left to feedback', () => {
    const p = plan('battery storage');
    expect(p.subQueries).toEqual(['battery storage']);
    expect(p.feedbackQueries).toBe(5);
    const q = plan('battery storage', { analysis_depth: 'quick' });
    expect(q.subQueries).toEqual(['battery storage']);
    expect(q.feedbackQueries).toBe(2);
  });

  it('a question with names pairs each name with the main phrase', () => {
    const p = plan('How are Tesla and BYD doing in the European EV market?', { analysis_depth: 'comprehensive' });
    expect(p.subQueries).toContain('tesla byd');
    expect(p.subQueries.some((q) => q.startsWith('ev ') || q.includes(' ev '))).toBe(true);
    for (const q of p.subQueries) expectPlain(q);
  });

  it('a paragraph-long question gives short sub-queries of its phrases', () => {
    const p = plan(CISI_LIKE, { analysis_depth: 'comprehensive' });
    expect(p.subQueries.length).toBeGreaterThan(3);
    for (const q of p.subQueries.slice(1)) {
      expect(q.split(' ').length).toBeLessThanOrEqual(12);
      expect(q).not.toMatch(/\b(interested|articles)\b/);
      expectPlain(q);
    }
  });

  it('a question full of query operators gives plain sub-queries', () => {
    const p = plan('"unclosed -minus site:example.com intitle:foo OR bar | baz', { analysis_depth: 'comprehensive' });
    expect(p.subQueries.length).toBeGreaterThan(1);
    for (const q of p.subQueries) expectPlain(q);
    for (const q of p.subQueries) expect(q).not.toContain('|');
  });

  it('requested entities, focus areas and analysis angles still come in, on the main phrase', () => {
    const p = plan('How stable are perovskite solar cells and what limits them?', { entities: ['Oxford PV'], focus_areas: ['moisture'], analysis_type: 'competitive', analysis_depth: 'comprehensive' });
    expect(p.subQueries).toContain('Oxford PV perovskite solar cells');
    expect(p.subQueries.some((q) => q.endsWith('moisture'))).toBe(true);
    expect(p.subQueries.some((q) => q.endsWith('market share'))).toBe(true);
  });

  it('reformulations of a one-phrase question do not repeat it', () => {
    expect(reformulations({ phrases: ['battery storage'], entities: [] })).toEqual(['battery storage']);
  });
});

// Three top abstracts about garbage collection that share "compacting" and "pointers"; "memory" is in every other candidate too.
const TOP = [
  'Garbage collection reclaims cells by compacting the list storage. The compacting collector updates pointers as it moves cells. Memory is freed.',
  'A compacting garbage collection algorithm by pointers reversal. It takes one pass over the memory.',
  'Storage reclamation by reference counts avoids compacting garbage collection pauses; pointers to free cells are counted. Unrelated sentence about weather.',
];
const REST = Array.from({ length: 12 }, (_, i) => `Candidate ${i} about memory and computing machines.`);

describe('feedback terms from the sources\' vocabulary', () => {
  it('finds words that co-occur with the question\'s terms in several top sources, rarer among the other candidates first', () => {
    const terms = feedbackTerms({ question: GC, phrases: ['garbage collection', 'storage reclamation'], top: TOP, rest: REST, tokenizer: indexTokenizer, language: null, terms: 4 });
    expect(terms.slice(0, 3)).toEqual(expect.arrayContaining(['compacting', 'pointers']));
    // Not the question's own words, not a word of one source only, not one every candidate has.
    expect(terms).not.toContain('garbage');
    expect(terms).not.toContain('weather');
    expect(terms.indexOf('memory') === -1 || terms.indexOf('memory') > 1).toBe(true);
  });

  it('anchors two related terms to each key phrase in turn, without repeating a sub-query', () => {
    expect(feedbackQueries(['garbage collection', 'storage reclamation'], ['compacting', 'pointers', 'cells', 'counts'], 2, [])).toEqual([
      'garbage collection compacting pointers', 'storage reclamation cells counts',
    ]);
    expect(feedbackQueries(['a b'], ['c', 'd'], 2, ['a b c d'])).toEqual([]);
    expect(feedbackQueries([], ['c', 'd'], 2, [])).toEqual([]);
  });

  it('gives nothing without top sources', () => {
    expect(feedbackTerms({ question: GC, phrases: [], top: [], rest: REST, tokenizer: indexTokenizer, language: null, terms: 4 })).toEqual([]);
  });
});

describe('the gather stage runs a feedback round and reports every sub-query it sent', () => {
  it('sends the plan\'s sub-queries, then feedback ones built from the first round\'s results', async () => {
    const seen: string[] = [];
    const results: ProviderResult[] = TOP.map((text, i) => ({ url: `https://example.org/gc/${i}`, title: `Garbage collection ${i}`, snippet: text, publishedAt: null }));
    const provider = {
      id: 'fake', kind: 'search-provider', kinds: undefined,
      search: async (r: { query: { raw?: string; text?: string } & Record<string, unknown> }) => {
        seen.push(JSON.stringify(r.query));
        return { results, applied: new Set() };
      },
    } as unknown as SearchProviderPlugin;
    const p = plan(GC);
    const out = await gather({ plan: p, accountId: 'acct', now: NOW, deadline: performance.now() + 25_000, signal: new AbortController().signal }, {
      providers: [provider], providerTimeoutMs: 5_000, index: undefined, concurrency: 2, tokenizer: indexTokenizer,
      scrape: async () => { throw new Error('not read in this test'); }, refused: () => undefined,
    });
    expect(out.subQueries.slice(0, p.subQueries.length)).toEqual(p.subQueries);
    expect(out.subQueries.length).toBeGreaterThan(p.subQueries.length);
    expect(out.subQueries.length).toBeLessThanOrEqual(6);
    expect(seen.length).toBe(out.subQueries.length);
    expect(out.feedbackTerms).toContain('compacting');
    for (const q of out.subQueries.slice(p.subQueries.length)) {
      expect(q.startsWith('garbage collection ') || q.startsWith('storage reclamation ')).toBe(true);
      expectPlain(q);
    }
  });

  it('without the tokenizer, only the plan\'s sub-queries run', async () => {
    const provider = {
      id: 'fake', kind: 'search-provider', kinds: undefined,
      search: async () => ({ results: [{ url: 'https://example.org/a', title: 'a', snippet: 'garbage collection compacting', publishedAt: null }], applied: new Set() }),
    } as unknown as SearchProviderPlugin;
    const p = plan(GC);
    const out = await gather({ plan: p, accountId: 'acct', now: NOW, deadline: performance.now() + 25_000, signal: new AbortController().signal }, {
      providers: [provider], providerTimeoutMs: 5_000, index: undefined, concurrency: 2,
      scrape: async () => { throw new Error('not read in this test'); }, refused: () => undefined,
    });
    expect(out.subQueries).toEqual(p.subQueries);
    expect(out.feedbackTerms).toEqual([]);
  });
});

describe('which results are read first', () => {
  const ABSTRACT = 'An abstract long enough to be read as the source text without fetching any page at all, about garbage collection.';
  const res = (id: string): ProviderResult => ({ url: `https://example.org/${id}`, title: id, snippet: id, publishedAt: null, abstract: ABSTRACT.replace('about', `${id} about`) });
  /** The question's own search returns q1..q5; every reformulation returns x1..x5 (so fused as equals, the x's win). */
  /** The first query asked is the question (gather sends the sub-queries in order). */
  const provider = () => {
    let first: string | undefined;
    return {
      id: 'fake', kind: 'search-provider', kinds: undefined,
      search: async (r: { query: unknown }) => {
        const key = JSON.stringify(r.query);
        first ??= key;
        const own = key === first;
        return { results: (own ? ['q1', 'q2', 'q3', 'q4', 'q5'] : ['x1', 'x2', 'x3', 'x4', 'x5']).map(res), applied: new Set() };
      },
    } as unknown as SearchProviderPlugin;
  };
  const run = async (question: string) => {
    const p = plan(question, { max_sources: 3 });
    const g = await gather({ plan: { ...p, feedbackQueries: 0 }, accountId: 'acct', now: NOW, deadline: performance.now() + 25_000, signal: new AbortController().signal }, {
      providers: [provider()], providerTimeoutMs: 5_000, index: undefined, concurrency: 2, tokenizer: indexTokenizer,
      scrape: async () => { throw new Error('not read in this test'); }, refused: () => undefined,
    });
    return g.sources.map((s) => s.url.slice(s.url.lastIndexOf('/') + 1));
  };

  it('a short question\'s own results come first, whatever the reformulations agree on', async () => {
    expect(await run(GC)).toEqual(['q1', 'q2', 'q3']);
  });

  it('a paragraph-long question (40 words or more) fuses its reformulations as equals', async () => {
    const long = `${CISI_LIKE} ${CISI_LIKE}`;
    expect(long.split(/\s+/).length).toBeGreaterThanOrEqual(40);
    expect(await run(long)).toContain('x1');
  });
});
