/**
 * POST /v1/research over plain-text abstracts as old collections and
 * plain-text files hold them (issue 28): hard-wrapped at about 60
 * characters, words hyphenated at line ends, a venue and date line and
 * keyword lines after the text, one abstract in lower case with the
 * typewriter " .". The real server reads them from its local index; the
 * report's summary sentences and insight statements must all be statements
 * by the rule (plugins/sdk/sentences.ts), each shown as its evidence reads,
 * and every quote verbatim at its offsets in the stored text. (The texts
 * are written for this test, in the shape of such collections.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startScourIn, type Running } from '../support/server.js';
import { isStatement, readingOf, textShape } from '../../plugins/sdk/sentences.js';

const ADMIN = 'research-sentences-admin-token-01';

const DOCS = [
  {
    url: 'https://lists.example.org/abstracts/1', title: 'Real time list processing',
    text: `A real time garbage collection system avoids long pauses by
doing a small part of the collection at every allocation of
a list cell.  The collector copies reachable cells incre-
mentally from one semispace to the other, so each step takes
a bounded time.  Storage reclamation in such a system costs
about twice the memory of a stop-and-copy collector.
Journal of List Processing, March 1978
garbage collection, storage reclamation, list processing,
real time, copying collector
4.19 4.34 4.49`,
  },
  {
    url: 'https://lists.example.org/abstracts/2', title: 'Reference counting',
    text: `Reference counting reclaims each list cell as soon as the last
pointer to it disappears, which spreads the cost of storage
reclamation evenly over the computation.  However, reference
counting cannot reclaim cyclic structures, and the counts
themselves take space in every cell.
Proceedings on Storage Management, 1975
Garbage Collection, and System Implementation
reference counts, cyclic lists, free storage`,
  },
  {
    url: 'https://lists.example.org/abstracts/3', title: 'Mark and sweep',
    text: `The classical garbage collector for list processing systems
marks every cell reachable from the program's pointers and
then sweeps the whole free storage, returning unmarked cells
to the free list.  Marking needs a stack, or the pointer
reversal technique when no storage is left for one.
Garbage collection with pointer reversal is slower but
needs no extra storage.
Keywords: mark and sweep, pointer reversal, free list`,
  },
  {
    url: 'https://lists.example.org/abstracts/4', title: 'compacting garbage collection',
    text: `compacting garbage collection moves the reachable list cells
together so that free storage forms one block .  the
relocation of cells requires every pointer to be updated ,
which takes two or three passes over the storage .
compaction improves the locality of list processing programs
in a paged virtual memory .
list processing, garbage collection, compaction, paging`,
  },
  {
    url: 'https://lists.example.org/abstracts/5', title: 'Generational collection',
    text: `Most list cells die young, and a generational garbage collector
exploits this by collecting the youngest cells more often than
the old ones.  Storage reclamation then touches only a small
part of the heap at each collection.  The technique needs a
record of pointers from old cells to young cells.
Computing Surveys, 1984
generational collection, storage reclamation, write barrier`,
  },
];
const TEXT = new Map(DOCS.map((d) => [d.url, d.text]));

interface Quote { source_id: string; text: string; start: number; end: number }
function quotes(v: unknown, out: Quote[] = []): Quote[] {
  if (Array.isArray(v)) for (const x of v) quotes(x, out);
  else if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.source_id === 'string' && typeof o.text === 'string' && typeof o.start === 'number' && typeof o.end === 'number') out.push(o as unknown as Quote);
    for (const k of Object.keys(o)) quotes(o[k], out);
  }
  return out;
}

describe('research over hard-wrapped plain-text abstracts with keyword lines', () => {
  let s: Running;
  let key: string;

  beforeAll(async () => {
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, searchProviders: ['local'] });
    const acct = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 1000 } });
    expect(acct.status, acct.text).toBe(201);
    key = acct.body.api_key;
    const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', {
      auth: `Bearer ${ADMIN}`,
      body: { collection: 'shared', documents: DOCS.map((d) => ({ ...d, type: 'academic', language: 'en' })) },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.rejected).toEqual([]);
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it('the summary and the insights are whole statements, shown as their exact evidence reads', async () => {
    const r = await call(`${s.url}/v1/research`, 'POST', {
      auth: `Bearer ${key}`,
      body: {
        research_query: 'What are the main approaches to garbage collection and storage reclamation in list processing systems?',
        analysis_depth: 'comprehensive', generate_recommendations: true,
      },
    });
    expect(r.status, r.text).toBe(200);
    const b = r.body;
    const byId = new Map<string, string>(b.sources_analyzed.map((x: any) => [x.id, TEXT.get(x.url)]));
    const textOf = (id: string): string => {
      const t = byId.get(id);
      expect(t, `stored text of ${id}`).toBeDefined();
      return t!;
    };

    // Every quote verbatim at its offsets in the stored text.
    const qs = quotes({ ...b, sources_analyzed: undefined, citations: undefined });
    expect(qs.length).toBeGreaterThan(0);
    for (const q of qs) expect(textOf(q.source_id).slice(q.start, q.end)).toBe(q.text);

    // The summary: each evidence span is a statement, read as the summary says it, its citation after it.
    const ev: Quote[] = b.summary_evidence;
    expect(ev.length).toBeGreaterThanOrEqual(2);
    const expected = ev.map((e) => `${readingOf(e.text, textOf(e.source_id))} [${e.source_id.slice(4)}]`).join(' ');
    expect(b.executive_summary).toBe(expected);
    for (const e of ev) expect(isStatement(readingOf(e.text, textOf(e.source_id)), textShape(textOf(e.source_id))), e.text).toBe(true);

    // Insights: statements, each its evidence as it reads.
    expect(b.key_insights.length).toBeGreaterThan(0);
    for (const ins of b.key_insights) {
      const e = ins.statement_evidence as Quote;
      expect(ins.statement).toBe(readingOf(e.text, textOf(e.source_id)));
      expect(isStatement(ins.statement, textShape(textOf(e.source_id))), ins.statement).toBe(true);
    }

    // Nothing from the keyword, venue or date lines is said as prose, and no sentence is cut at a line break.
    const prose = [b.executive_summary, ...b.key_insights.map((x: any) => x.statement), ...(b.recommendations ?? []).map((x: any) => x.recommendation)].join('\n');
    for (const junk of ['Garbage Collection, and System Implementation', 'Keywords', 'Journal of List Processing', 'Computing Surveys', '4.19', 'write barrier', 'copying collector']) expect(prose).not.toContain(junk);
    expect(prose).not.toMatch(/avoids long pauses by(?! doing)/);
    // The readings join lines and undo the hyphenation at a line end; the evidence keeps both.
    const said = [...ev, ...b.key_insights.map((x: any) => x.statement_evidence as Quote)];
    expect(said.some((e) => e.text.includes('\n'))).toBe(true);
    if (said.some((e) => e.text.includes('incre-\nmentally'))) expect(prose).toContain('incrementally');
    expect(prose).not.toContain('incre-');
  }, 60_000);
});
