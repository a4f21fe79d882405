/**
 * Natural text is never refused (issue 28): thousands of sentences from the
 * SciFact abstracts, and the same sentences mangled the ways copied text
 * breaks query syntax, all parse; each mangled one says how it was read.
 */
import { describe, expect, it } from 'vitest';
import { normaliseQuery, parseQuery } from '../../core/search.js';
import { mangledSentences, MANGLES, sampleSentences, sentencesOf } from '../support/natural-queries.js';

const WORDY = /[\p{L}\p{N}]/u;

describe('natural text as a query', () => {
  it('splits text into sentences at terminal punctuation before a capital or digit', () => {
    expect(sentencesOf('One cell. Two cells grew e.g. fast? Yes! 3 more. end')).toEqual(['One cell.', 'Two cells grew e.g. fast?', 'Yes!', '3 more. end']);
  });

  it('4,000 sentences of the SciFact abstracts all parse, into words only', () => {
    const sentences = sampleSentences(4000, 28);
    expect(new Set(sentences).size).toBeGreaterThan(3500);
    const refused: string[] = [];
    for (const s of sentences) {
      const r = parseQuery(s);
      if (!r.ok) { refused.push(`${s}: ${r.message}`); continue; }
      if (r.query.raw !== normaliseQuery(s) || r.query.terms.length === 0 || !r.query.terms.every((t) => WORDY.test(t))) refused.push(`${s}: read as ${JSON.stringify(r.query)}`);
    }
    expect(refused).toEqual([]);
  });

  it('the same sentences mangled (unclosed quotes, dangling dashes and operators, doubled ORs, brackets) all parse, and say how they were read', () => {
    const mangled = mangledSentences(150, 2028);
    expect(mangled.length).toBeGreaterThan(MANGLES.length * 140);
    const refused: string[] = [];
    const unsaid: string[] = [];
    for (const m of mangled) {
      const r = parseQuery(m.query);
      if (!r.ok) { refused.push(`${m.mangle}: ${m.query}: ${r.message}`); continue; }
      if (r.query.terms.length === 0 || !r.query.terms.every((t) => WORDY.test(t))) refused.push(`${m.mangle}: ${m.query}: read as ${JSON.stringify(r.query)}`);
      if (m.reread && r.reading === undefined) unsaid.push(`${m.mangle}: ${m.query}`);
      if (r.reading !== undefined && !/\. Searched as: \S/.test(r.reading)) unsaid.push(`${m.mangle}: ${m.query}: ${r.reading}`);
    }
    expect(refused).toEqual([]);
    expect(unsaid).toEqual([]);
  });
});
