/**
 * The query language (core/search.ts parseQuery): every operator, every
 * syntax error with its message, and hostile input that must parse into
 * plain words (never syntax for a backend) or fail with a message.
 */
import { describe, expect, it } from 'vitest';
import { parseQuery, type ParsedQuery } from '../../core/search.js';

const ok = (q: string): ParsedQuery => {
  const r = parseQuery(q);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(q)} to parse: ${r.message}`);
  return r.query;
};
const bad = (q: string): string => {
  const r = parseQuery(q);
  if (r.ok) throw new Error(`expected ${JSON.stringify(q)} to fail, got ${JSON.stringify(r.query)}`);
  return r.message;
};

describe('parseQuery: operators', () => {
  it('plain words are ranked terms with no hard conditions', () => {
    const q = ok('  climate   change effects ');
    expect(q.raw).toBe('climate change effects');
    expect(q.terms).toEqual(['climate', 'change', 'effects']);
    expect(q.required).toEqual([]);
    expect(q.excluded).toEqual([]);
  });

  it('a quoted phrase is required and its words also rank', () => {
    const q = ok('"machine learning" bias');
    expect(q.required).toEqual([[{ item: { kind: 'phrase', text: 'machine learning' }, inTitle: false }]]);
    expect(q.terms).toEqual(['machine', 'learning', 'bias']);
  });

  it('curly and low quotes work like straight ones', () => {
    expect(ok('\u201cdeep sea\u201d fish').required[0]![0]!.item).toEqual({ kind: 'phrase', text: 'deep sea' });
    expect(ok('\u201edeep sea\u201c').required[0]![0]!.item.text).toBe('deep sea');
  });

  it('-word and -"phrase" exclude', () => {
    const q = ok('jaguar -car -"used cars"');
    expect(q.terms).toEqual(['jaguar']);
    expect(q.excluded).toEqual([{ kind: 'term', text: 'car' }, { kind: 'phrase', text: 'used cars' }]);
  });

  it('a dash standing alone between words is punctuation, not an exclusion', () => {
    const q = ok('CTLA - 4 long - range');
    expect(q.excluded).toEqual([]);
    expect(q.terms).toEqual(['CTLA', '4', 'long', 'range']);
  });

  it('a hyphen inside a word is not an exclusion', () => {
    const q = ok('covid-19 state-of-the-art');
    expect(q.excluded).toEqual([]);
    expect(q.terms).toEqual(['covid-19', 'state-of-the-art']);
  });

  it('site: and -site: take domains, lower-cased, www. and URLs stripped', () => {
    const q = ok('rust site:Docs.RS site:https://www.example.com/path -site:spam.example.org');
    expect(q.sites).toEqual(['docs.rs', 'example.com']);
    expect(q.excludedSites).toEqual(['spam.example.org']);
    expect(q.terms).toEqual(['rust']);
  });

  it('OR joins required phrases into one group; between plain words it changes nothing', () => {
    const q = ok('"solar panel" OR "photovoltaic cell" efficiency');
    expect(q.required).toHaveLength(1);
    expect(q.required[0]!.map((r) => r.item.text)).toEqual(['solar panel', 'photovoltaic cell']);
    const plain = ok('cats OR dogs');
    expect(plain.required).toEqual([]);
    expect(plain.terms).toEqual(['cats', 'dogs']);
  });

  it('intitle: requires a word or phrase in the title', () => {
    const q = ok('intitle:review intitle:"battery life" phone');
    expect(q.required).toEqual([
      [{ item: { kind: 'term', text: 'review' }, inTitle: true }],
      [{ item: { kind: 'phrase', text: 'battery life' }, inTitle: true }],
    ]);
    expect(q.terms).toEqual(['review', 'battery', 'life', 'phone']);
  });

  it('operators are case-insensitive (SITE:, InTitle:); lower-case "or" is a word', () => {
    expect(ok('x SITE:a.com').sites).toEqual(['a.com']);
    expect(ok('InTitle:x').required).toHaveLength(1);
    expect(ok('this or that').terms).toEqual(['this', 'or', 'that']);
  });
});

describe('parseQuery: syntax errors say what is wrong', () => {
  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['"unclosed phrase', /never closed/],
    ['a "b c', /never closed/],
    ['cats -', /lone "-"/],
    ['- dogs', /lone "-"/],
    ['site:', /nothing after it/],
    ['cats site: dogs', /nothing after it/],
    ['intitle:', /nothing after it/],
    ['-cats', /only exclusions/],
    ['-cats -"dog food" -site:example.com', /only exclusions/],
    ['site:example.com', /only site:/],
    ['OR cats', /both sides/],
    ['cats OR', /both sides/],
    ['"a" OR OR "b"', /follows another OR/],
    ['""', /no word/],
    ['" "', /no word/],
    ['site:"quoted"', /domain/],
    ['site:not_a_domain!', /not a domain/],
    ['site:localhost', /not a domain/],
    ['!!! ???', /no word/],
    ['-!!!', /no word/],
    ['x'.repeat(501), /at most 500/],
  ])('%j', (q, message) => {
    expect(bad(q)).toMatch(message);
  });

  it('counts characters after trimming and collapsing spaces', () => {
    expect(ok(`  ${'a'.repeat(500)}  `).raw).toHaveLength(500);
  });

  it('bounds the number of items', () => {
    expect(bad(Array.from({ length: 65 }, (_, i) => `w${i}`).join(' '))).toMatch(/at most 64/);
  });
});

describe('parseQuery: hostile input is words, never syntax', () => {
  it.each([
    'NEAR(a b, 2)', 'title:foo', 'a* b^2', 'foo:bar & !baz', 'a AND NOT b', '{col1 col2}: x', 'a | b & c',
    "'; DROP TABLE documents; --", '\\" OR 1=1 --', 'a:* <-> b', 'x NEAR/3 y', '(a OR b) AND c',
  ])('%j parses into terms and phrases only', (q) => {
    const r = parseQuery(q);
    if (!r.ok) {
      expect(r.message.length).toBeGreaterThan(0);
      return;
    }
    for (const t of r.query.terms) expect(t).toMatch(/[\p{L}\p{N}]/u);
  });

  it('strips control and format characters (zero-width, bidi marks) and normalises (NFKC)', () => {
    const q = ok('ca\u200bts \u202eevil\u202c \uff46\uff55\uff4c\uff4c\u0000width');
    expect(q.raw).not.toMatch(/[\u200b\u202e\u202c\u0000]/);
    expect(q.terms).toContain('full');
  });

  it('takes any script and emoji', () => {
    expect(ok('Klimawandel Überschwemmung').terms).toEqual(['Klimawandel', 'Überschwemmung']);
    expect(ok('изменение климата').terms).toHaveLength(2);
    expect(ok('气候变化 影响').terms).toEqual(['气候变化', '影响']);
    expect(ok('تغير المناخ').terms).toHaveLength(2);
    expect(bad('🔥🔥🔥')).toMatch(/no word/);
    expect(ok('🔥 fire').terms).toEqual(['fire']);
  });

  it('a lone surrogate does not crash the parser', () => {
    const r = parseQuery('ab\ud800cd');
    expect(typeof r.ok).toBe('boolean');
  });
});
