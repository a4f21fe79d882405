/**
 * The query language (core/search.ts parseQuery): every operator; natural
 * text that is not syntax read as text (never refused), with the reading
 * that says how; the few refusals (empty, too long, no word); and hostile
 * input that must parse into plain words (never syntax for a backend).
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

describe('parseQuery: refused only when the request itself is wrong', () => {
  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['\u200b\u200b', /empty/],
    ['x'.repeat(501), /at most 500/],
    ['""', /no word/],
    ['" "', /no word/],
    ['!!! ???', /no word/],
    ['-!!!', /no word/],
    ['- -- " | &', /no word/],
  ])('%j', (q, message) => {
    expect(bad(q)).toMatch(message);
  });

  it('counts characters after trimming and collapsing spaces', () => {
    expect(ok(`  ${'a'.repeat(500)}  `).raw).toHaveLength(500);
  });
});

/** The query and how it was read (the QUERY_REINTERPRETED warning's message). */
const read = (q: string): { query: ParsedQuery; reading: string | undefined } => {
  const r = parseQuery(q);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(q)} to parse: ${r.message}`);
  return { query: r.query, reading: r.reading };
};

describe('parseQuery: natural text is read as text, never refused, and the reading says how', () => {
  it.each([
    // [query, what the reading says, the query as searched]
    ['"unclosed phrase', /quote at position 1 is never closed: read as a phrase to the end/, '"unclosed phrase"'],
    ['a "b c', /quote at position 3 is never closed/, 'a "b c"'],
    ['a 5" screen size', /quote at position 4 is never closed/, 'a 5 "screen size"'],
    ['cats "', /never closed and holds no word: left out/, 'cats'],
    ['cats ""', /holds? no word: left out/, 'cats'],
    ['cats -', /lone "-" at position 6 is punctuation/, 'cats'],
    ['- dogs', /lone "-" at position 1 is punctuation/, 'dogs'],
    ['site:', /"site:" at position 1 has nothing after it: read as the word "site"/, 'site'],
    ['Construction site: the crew', /"site:" at position 14 has nothing after it/, 'Construction site the crew'],
    ['intitle:', /"intitle:" at position 1 has nothing after it/, 'intitle'],
    ['intitle:!!! x', /has no word in it: read as the word "intitle"/, 'intitle x'],
    ['-cats', /only exclusions: their words are searched/, 'cats'],
    ['-cats -"dog food" -site:example.com', /only exclusions/, 'cats dog food example com'],
    ['site:example.com', /only site: filters/, 'example com'],
    ['OR cats', /OR at position 1 has nothing on one side: read as a word/, 'OR cats'],
    ['Portland, OR', /OR at position 11 has nothing on one side/, 'Portland, OR'],
    ['"a" OR OR "b"', /follows another OR: the two read as one/, '"a" OR "b"'],
    ['site:"quoted words" x', /takes a domain, not a quoted phrase/, 'site "quoted words" x'],
    ['site:not_a_domain! x', /is not a domain: read as words/, 'site not_a_domain! x'],
    ['site:localhost x', /is not a domain/, 'site localhost x'],
    ['cats -!!!', /"-!!!" at position 6 has no word in it: left out/, 'cats'],
    ['a change of -31% (95% CI, -40% to -20%)', /"-31%" at position 13 is a negative number: read as a word, not an exclusion/, 'a change of 31% (95% CI, 40% to 20%)'],
  ])('%j', (q, says, searched) => {
    const { reading } = read(q);
    expect(reading).toMatch(says);
    expect(reading!.endsWith(`Searched as: ${searched}`)).toBe(true);
  });

  it('an unclosed quote is a required phrase of the words after it', () => {
    const { query } = read('cells "in vitro growth');
    expect(query.required).toEqual([[{ item: { kind: 'phrase', text: 'in vitro growth' }, inTitle: false }]]);
    expect(query.terms).toEqual(['cells', 'in', 'vitro', 'growth']);
  });

  it('an unclosed quote after an operator or a dash keeps the operator', () => {
    expect(read('x -"dog food').query.excluded).toEqual([{ kind: 'phrase', text: 'dog food' }]);
    expect(read('x intitle:"battery life').query.required).toEqual([[{ item: { kind: 'phrase', text: 'battery life' }, inTitle: true }]]);
  });

  it('a negative number is a word; a quoted number is still excluded', () => {
    expect(read('temperature -5 degrees').query.excluded).toEqual([]);
    expect(read('temperature -5 degrees').query.terms).toEqual(['temperature', '5', 'degrees']);
    expect(read('report -"2019"').query.excluded).toEqual([{ kind: 'phrase', text: '2019' }]);
  });

  it('an operator read as a word is not applied', () => {
    const q = read('cats site: dogs intitle: -').query;
    expect(q.sites).toEqual([]);
    expect(q.required).toEqual([]);
    expect(q.excluded).toEqual([]);
    expect(q.terms).toEqual(['cats', 'site', 'dogs', 'intitle']);
  });

  it('a query read as written carries no reading', () => {
    for (const q of ['climate change', '"solar panel" OR "pv cell" -cheap site:example.com intitle:review', 'CTLA - 4 long - range', 'covid-19 cats OR dogs']) {
      expect(read(q).reading).toBeUndefined();
    }
  });

  it('past 64 phrases, exclusions and operators, the rest are read as plain words; plain words are bounded by the length alone', () => {
    const many = read(Array.from({ length: 70 }, (_, i) => `-w${i}`).join(' ') + ' x');
    expect(many.query.excluded).toHaveLength(64);
    expect(many.query.terms).toEqual([...Array.from({ length: 6 }, (_, i) => `w${64 + i}`), 'x']);
    expect(many.reading).toMatch(/only 64 .* the 6 after them are read as plain words/);
    // A paragraph of 80 plain words is searched whole, as written.
    const words = Array.from({ length: 80 }, (_, i) => `w${i}`);
    const long = read(words.join(' '));
    expect(long.query.terms).toEqual(words);
    expect(long.reading).toBeUndefined();
  });

  it('the reading is at most 1,000 characters', () => {
    const { reading } = read(`${'- '.repeat(100)}"${'word '.repeat(60)}`);
    expect(reading!.length).toBeLessThanOrEqual(1000);
  });
});

describe('parseQuery: hostile input is words, never syntax', () => {
  it.each([
    'NEAR(a b, 2)', 'title:foo', 'a* b^2', 'foo:bar & !baz', 'a AND NOT b', '{col1 col2}: x', 'a | b & c',
    "'; DROP TABLE documents; --", '\\" OR 1=1 --', 'a:* <-> b', 'x NEAR/3 y', '(a OR b) AND c',
  ])('%j parses into terms and phrases only', (q) => {
    const r = parseQuery(q);
    if (!r.ok) throw new Error(`${q}: ${r.message}`);
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
