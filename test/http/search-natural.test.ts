/**
 * Natural text through POST /v1/search on a real server (embedded, uws,
 * the local provider over 300 SciFact abstracts): sentences of the indexed
 * abstracts and the same sentences mangled as copied text is are all 200,
 * a sentence finds the abstract it came from, and whatever was read as
 * text rather than syntax comes back as a QUERY_REINTERPRETED warning (no
 * provider: it is about the query) whose message is the parser's reading.
 * The few refusals left (empty, over 500 characters, no letter or digit)
 * are 400s on `query`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../core/search.js';
import { call, expectErrorBody, type Reply } from '../support/http.js';
import { mangledSentences, scifactAbstracts, seeded, sentencesOfAbstract } from '../support/natural-queries.js';
import { startScour, type Running } from '../support/server.js';

const ADMIN = 'search-natural-admin-token-01234';
const DOCS = 300;
const urlOf = (id: string) => `https://scifact.example.org/abstract/${id}`;

describe('POST /v1/search: natural text is never a 400', () => {
  let s: Running;
  let key: string;
  const search = (query: unknown): Promise<Reply> => call(`${s.url}/v1/search`, 'POST', { auth: `Bearer ${key}`, body: { query } });

  beforeAll(async () => {
    s = await startScour('uws', { adminToken: ADMIN, searchProviders: ['local'] });
    const acct = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 100_000 } });
    expect(acct.status, acct.text).toBe(201);
    key = acct.body.api_key;
    const docs = scifactAbstracts().slice(0, DOCS).map((d) => ({
      url: urlOf(d.id), title: d.title, text: d.text, publishedAt: null, language: 'en', country: null, type: 'academic' as const,
      author: null, siteName: null, doi: null, safe: true,
    }));
    expect(await s.scour.searchIndex.upsert('shared', docs, Date.now())).toMatchObject({ indexed: DOCS });
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  /** 200, and the QUERY_REINTERPRETED warning exactly when the parser read something as text, first, with its reading. */
  const expectRead = (q: string, r: Reply) => {
    expect(r.status, `${JSON.stringify(q)}: ${r.text.slice(0, 300)}`).toBe(200);
    const parsed = parseQuery(q);
    if (!parsed.ok) throw new Error(`${q}: ${parsed.message}`);
    const warnings = (r.body.warnings ?? []) as { provider?: string; code: string; message: string }[];
    if (parsed.reading === undefined) expect(warnings.filter((w) => w.code === 'QUERY_REINTERPRETED'), q).toEqual([]);
    else expect(warnings[0], q).toEqual({ code: 'QUERY_REINTERPRETED', message: parsed.reading });
    return warnings;
  };

  it('a sentence of an indexed abstract finds it (150 sentences, one request each)', async () => {
    const rnd = seeded(4028);
    const missed: string[] = [];
    for (let i = 0; i < 150; i++) {
      const d = scifactAbstracts()[Math.floor(rnd() * DOCS)]!;
      const sentences = sentencesOfAbstract(d).filter((x) => x.split(' ').length >= 6);
      if (sentences.length === 0) continue;
      const q = sentences[Math.floor(rnd() * sentences.length)]!;
      const r = await search(q);
      expectRead(q, r);
      if (!r.body.search_results.some((x: { link: string }) => x.link === urlOf(d.id))) missed.push(q);
    }
    // Required phrases of a sentence with its own quotes may cross what the index calls a word; nothing else may miss.
    expect(missed.filter((q) => !/["\u201c\u201d\u00ab\u00bb]/.test(q))).toEqual([]);
  }, 120_000);

  it('sentences mangled as copied text is (unclosed quotes, dangling dashes and operators, doubled ORs, brackets) are 200 with the warning (180 requests)', async () => {
    const mangled = mangledSentences(10, 5028);
    expect(mangled.length).toBeGreaterThan(170);
    let warned = 0;
    for (const m of mangled) {
      const warnings = expectRead(m.query, await search(m.query));
      if (m.reread) {
        expect(warnings[0]?.code, `${m.mangle}: ${m.query}`).toBe('QUERY_REINTERPRETED');
        warned++;
      }
    }
    expect(warned).toBeGreaterThan(120);
  }, 120_000);

  it.each([
    ['"unclosed phrase', /never closed: read as a phrase to the end of the query\. Searched as: "unclosed phrase"$/],
    ['tumour growth -', /lone "-" at position 15 is punctuation.*Searched as: tumour growth$/],
    ['- tumour growth', /lone "-" at position 1 is punctuation/],
    ['tumour site: growth', /"site:" at position 8 has nothing after it: read as the word "site"/],
    ['tumour growth intitle:', /"intitle:" at position 15 has nothing after it/],
    ['tumour growth OR', /OR at position 15 has nothing on one side: read as a word/],
    ['"tumour" OR OR "growth"', /follows another OR: the two read as one\. Searched as: "tumour" OR "growth"$/],
    ['-tumour -growth', /only exclusions: their words are searched instead\. Searched as: tumour growth$/],
    ['site:localhost tumour', /site:localhost at position 1 is not a domain: read as words/],
    ['(tumour growth', undefined],
    ['CTLA - 4 blockade', undefined],
  ])('%j: 200, read as the warning says', async (q, says) => {
    const r = await search(q);
    const warnings = expectRead(q, r);
    if (says === undefined) expect(warnings).toEqual([]);
    else {
      expect(warnings[0]!.message).toMatch(says);
      expect(warnings[0]).not.toHaveProperty('provider');
    }
  });

  it.each([
    ['', undefined],
    ['   ', /empty/],
    ['x'.repeat(501), /at most 500/],
    ['!!! ???', /no word/],
    [42, /string/],
  ])('%j: the request itself is wrong, 400 on query', async (q, message) => {
    const r = await search(q);
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    const issue = (r.body.validation_errors as { field: string; message: string }[]).find((v) => v.field === 'query');
    expect(issue, r.text).toBeDefined();
    if (message) expect(issue!.message).toMatch(message);
  });
});
