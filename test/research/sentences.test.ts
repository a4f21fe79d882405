/**
 * Sentences as text really comes (plugins/sdk/sentences.ts): hard-wrapped
 * abstracts (short excerpts of the Cranfield and CISI collections, as the
 * original files wrap them), line-end hyphenation, abbreviations, lists,
 * headings, keyword lines; and the statement filter on real sentences and
 * on what is never a statement (keyword and tag lines, bylines, dates,
 * captions, table rows, menus, titles).
 */
import { describe, expect, it } from 'vitest';
import { hasFiniteVerb, isStatement, readingOf, sentenceSpans, textShape } from '../../plugins/sdk/sentences.js';

/** The sentences of a text as stored (and checks that every span is exact and trimmed). */
function stored(text: string): string[] {
  return sentenceSpans(text).map((s) => {
    const slice = text.slice(s.start, s.end);
    expect(slice.trim()).toBe(slice);
    return slice;
  });
}
const readings = (text: string): string[] => sentenceSpans(text).map((s) => s.reading);

// CISI document 1, as the collection wraps it.
const CISI_1 = `The present study is a history of the DEWEY Decimal
Classification.  The first edition of the DDC was published
in 1876, the eighteenth edition in 1971, and future editions
will continue to appear as needed.  In spite of the DDC's
long and healthy life, however, its full story has never
been told.`;

// Cranfield document 2: lower case, a space before each full stop, a title line first.
const CRAN_2 = `simple shear flow past a flat plate in an incompressible fluid of small
viscosity .
in the study of high-speed viscous flow past a two-dimensional body it
is usually necessary to consider a curved shock wave emitting from the
nose or leading edge of the body .  consequently, there exists an
inviscid rotational flow region between the shock wave and the boundary
layer .`;

// CISI: a ragged line ending early inside a sentence, an initial list, inner-dot initials.
const CISI_SCI = `The invention of the Science Citation Index
(SCI) a few years ago provides a new and reliable tool
to measure the significance of individual scientists'
contributions.  Parallel research is being conducted by David Dews
and K.D.C. Vernon, Librarian of the London Graduate School of
Business Studies.`;

describe('sentenceSpans', () => {
  it('a single line break inside a sentence is no boundary; the reading joins the lines', () => {
    expect(readings(CISI_1)).toEqual([
      'The present study is a history of the DEWEY Decimal Classification.',
      'The first edition of the DDC was published in 1876, the eighteenth edition in 1971, and future editions will continue to appear as needed.',
      "In spite of the DDC's long and healthy life, however, its full story has never been told.",
    ]);
    // The stored sentence keeps its line breaks, exactly.
    expect(stored(CISI_1)[0]).toBe('The present study is a history of the DEWEY Decimal\nClassification.');
  });

  it('text written in lower case with the typewriter " ." (Cranfield)', () => {
    const r = readings(CRAN_2);
    expect(r).toEqual([
      'simple shear flow past a flat plate in an incompressible fluid of small viscosity.',
      'in the study of high-speed viscous flow past a two-dimensional body it is usually necessary to consider a curved shock wave emitting from the nose or leading edge of the body.',
      'consequently, there exists an inviscid rotational flow region between the shock wave and the boundary layer.',
    ]);
  });

  it('lower-case text wrapped too raggedly to measure still breaks only at punctuation (Cranfield 232)', () => {
    // Most lines are far shorter than the longest, so the wrap width cannot be measured;
    // a short line must still not end a sentence in text that has no capitals to tell headings by.
    const text = 'accuracy of approximate methods for predicting pressure\non pointed non-lifting bodies of revolution in supersonic\nflow .\n'
      + '  the accuracy and range of applicability of the linearized theory,\nsecond-order theory, tangent-cone method, conical-shock-expansion theory\n'
      + 'and newtonian theory for predicting pressure distributions on pointed\nbodies of revolution at zero angle of\nattack are investigated .  pressure\n'
      + 'distributions and integrated pressure\ndrag obtained are compared .\nthe second-order theory gives\ngood results on ogives when the ratio of\n'
      + 'the tangent of maximum surface\nangle to the tangent of the mach angle\nis less than 0.9 .  tangent-cone\nmethod cannot be widely applied with\ngood accuracy .';
    expect(readings(text)).toEqual([
      'accuracy of approximate methods for predicting pressure on pointed non-lifting bodies of revolution in supersonic flow.',
      'the accuracy and range of applicability of the linearized theory, second-order theory, tangent-cone method, conical-shock-expansion theory and newtonian theory for predicting pressure distributions on pointed bodies of revolution at zero angle of attack are investigated.',
      'pressure distributions and integrated pressure drag obtained are compared.',
      'the second-order theory gives good results on ogives when the ratio of the tangent of maximum surface angle to the tangent of the mach angle is less than 0.9.',
      'tangent-cone method cannot be widely applied with good accuracy.',
    ]);
  });

  it('a ragged short line inside a sentence, and initials with inner dots, do not split it', () => {
    expect(readings(CISI_SCI)).toEqual([
      "The invention of the Science Citation Index (SCI) a few years ago provides a new and reliable tool to measure the significance of individual scientists' contributions.",
      'Parallel research is being conducted by David Dews and K.D.C. Vernon, Librarian of the London Graduate School of Business Studies.',
    ]);
  });

  it('undoes hyphenation at a line end, and keeps compounds the text writes with a hyphen', () => {
    const text = `A real time system avoids the pauses of storage reclama-
tion by interleaving it with the program.  The boundary-layer equations
hold, and the boundary-
layer thickness grows downstream of the leading edge.`;
    expect(readings(text)).toEqual([
      'A real time system avoids the pauses of storage reclamation by interleaving it with the program.',
      'The boundary-layer equations hold, and the boundary-layer thickness grows downstream of the leading edge.',
    ]);
    // Spans stay exact: the stored quote has its hyphen and line break.
    expect(stored(text)[0]).toContain('reclama-\ntion');
    // Without the rest of the text, a known compound first half keeps its hyphen; a broken word is joined.
    expect(readingOf('the self-\ncontained module')).toBe('the self-contained module');
    expect(readingOf('an optimal alloca-\ntion of pages')).toBe('an optimal allocation of pages');
  });

  it('abbreviations, initials, decimals and numbered references do not end a sentence', () => {
    const text = 'Dr. Smith et al. measured a drag of 0.35 at Mach 2.5 (see Fig. 3), e.g. in the U.S. wind tunnel. J. R. Jones found no. 5 best. It rose approx. three times.';
    expect(readings(text)).toEqual([
      'Dr. Smith et al. measured a drag of 0.35 at Mach 2.5 (see Fig. 3), e.g. in the U.S. wind tunnel.',
      'J. R. Jones found no. 5 best.',
      'It rose approx. three times.',
    ]);
  });

  it('! ? and closing quotes end sentences; an ellipsis before lower case does not', () => {
    expect(readings('Is it fast? "It is!" She said so… and left. Then "it ended."')).toEqual(['Is it fast?', '"It is!"', 'She said so… and left.', 'Then "it ended."']);
  });

  it('blank lines, headings, list items and keyword lines are boundaries', () => {
    const text = `Garbage Collection in List Processing

A real time garbage collection system avoids long pauses by doing a
little of the work at each allocation.  It needs a read barrier.

Results
- The collector reclaims cyclic structures.
- Pauses stay under a millisecond
1. Copying halves the usable memory.
2) Marking costs time proportional to the live data.

CACM November, 1974
garbage collection, storage reclamation, list processing
CR Categories: 4.19, 4.34`;
    const r = readings(text);
    expect(r).toEqual([
      'Garbage Collection in List Processing',
      'A real time garbage collection system avoids long pauses by doing a little of the work at each allocation.',
      'It needs a read barrier.',
      'Results',
      'The collector reclaims cyclic structures.',
      'Pauses stay under a millisecond',
      'Copying halves the usable memory.',
      'Marking costs time proportional to the live data.',
      'CACM November, 1974 garbage collection, storage reclamation, list processing',
      'CR Categories: 4.19, 4.34',
    ]);
  });

  it('a page rendered as text (one paragraph a line) breaks at every line', () => {
    const page = 'Home\nAbout\nGraphene batteries charge five times faster than lithium-ion cells in our tests\nPosted by Sam Writer\nThe anode kept its capacity after 2,000 cycles.';
    expect(readings(page)).toEqual(['Home', 'About', 'Graphene batteries charge five times faster than lithium-ion cells in our tests', 'Posted by Sam Writer', 'The anode kept its capacity after 2,000 cycles.']);
  });

  it('keeps exact offsets on CRLF text, tabs, empty and hostile input, in linear time', () => {
    const crlf = 'First line of a sentence that\r\ngoes on here.\r\n\r\nSecond one.';
    for (const s of sentenceSpans(crlf)) expect(crlf.slice(s.start, s.end).trim()).toBe(crlf.slice(s.start, s.end));
    expect(readings(crlf)).toEqual(['First line of a sentence that goes on here.', 'Second one.']);
    expect(sentenceSpans('')).toEqual([]);
    expect(sentenceSpans('\n\n  \n')).toEqual([]);
    expect(sentenceSpans('... !!! ???')).toEqual([]);
    const hostile = `${'a. '.repeat(20_000)}${'-\n'.repeat(20_000)}${'x'.repeat(50_000)}\n${'  \n'.repeat(20_000)}`;
    // Against a baseline of ordinary prose of the same length, split in the same run (the machine's load cancels out).
    const prose = `${CISI_1}\n`.repeat(Math.ceil(hostile.length / (CISI_1.length + 1))).slice(0, hostile.length);
    const b0 = performance.now();
    sentenceSpans(prose);
    const baseline = performance.now() - b0;
    const t0 = performance.now();
    const spans = sentenceSpans(hostile);
    expect(performance.now() - t0).toBeLessThan(baseline * 5 + 200);
    for (const s of spans.slice(0, 100)) expect(s.end).toBeGreaterThan(s.start);
  });
});

describe('isStatement', () => {
  const mixed = { lowerCase: false, unpunctuated: false };
  it.each([
    'The present study is a history of the DEWEY Decimal Classification.',
    'A real time garbage collection system avoids long pauses by doing a little of the work at each allocation.',
    'Survey data indicate a 7 percent manpower shortage in positions classified as professional.',
    'Most researchers have typically paid homage to the belief that quantity of output is not the equivalent of quality.',
    'We show that the method converges for all admissible inputs.',
    'In 2023, perovskite cells reached a certified efficiency of 26 percent.',
    '"Encapsulation improves the stability of the cells," the authors wrote.',
  ])('accepts %s', (s) => {
    expect(isStatement(s, mixed)).toBe(true);
  });

  it.each([
    ['a keyword line', 'Garbage Collection, and System Implementation'],
    ['a keyword list with a full stop', 'garbage collection, storage reclamation, list processing, compacting, relocation.'],
    ['a labelled keyword line', 'Keywords: garbage collection, storage reclamation, list processing, real time systems.'],
    ['a line cut at a line break', 'A real time garbage collection system avoids'],
    ['a byline', 'By Jane Smith and Ravi Patel, Staff Writers.'],
    ['a posted-by line', 'Posted on March 3, 2024 by the editorial team of the site.'],
    ['a date', 'Tuesday, 3 March 2024, 10:45 UTC.'],
    ['a caption', 'Figure 3. Lift coefficient against angle of attack for the wing in the slipstream.'],
    ['a table row', 'Wing A\t0.35\t0.42\t0.51\tsee note below for the remaining rows.'],
    ['a menu', 'Home About Products Pricing Contact Sign in'],
    ['a title in title case', 'Experimental Investigation of the Aerodynamics of a Wing in a Slipstream.'],
    ['a title without a verb', 'Experimental investigation of the aerodynamics of a wing in a slipstream.'],
    ['a question', 'What are the main approaches to garbage collection in list processing systems?'],
    ['a lead-in', 'The objectives which the catalog is to serve are two:'],
    ['a cut-off snippet', 'The collector reclaims cyclic structures and then it compacts the...'],
    ['an infinitive fragment', 'To gather a reasonable collection of statistics relating to the practice of classification.'],
    ['too short', 'Pauses stay short.'],
    ['lower case in mixed-case text', 'the collector reclaims cyclic structures in every cycle.'],
    ['mostly digits', '2019 2020 2021 2022 rose 12 15 18 21 percent.'],
  ])('refuses %s', (_what, s) => {
    expect(isStatement(s, mixed)).toBe(false);
  });

  it('lower-case sources may start sentences in lower case; unpunctuated ones need no full stop', () => {
    const cran = 'the results were intended in part as an evaluation basis for different theoretical treatments of this problem.';
    expect(isStatement(cran, mixed)).toBe(false);
    expect(isStatement(cran, textShape(CRAN_2))).toBe(true);
    expect(textShape(CRAN_2)).toEqual({ lowerCase: true, unpunctuated: false });
    // NPL-like: no punctuation anywhere.
    const npl = 'a digital data storage system with capacity up to bits and random or sequential access is described';
    expect(textShape(npl)).toEqual({ lowerCase: true, unpunctuated: true });
    expect(isStatement(npl, textShape(npl))).toBe(true);
    expect(isStatement('compact memories and flexible capacities for digital data storage', textShape(npl))).toBe(false);
  });

  it('finds finite verbs with the tagger read with the word form', () => {
    expect(hasFiniteVerb('the results were intended in part as an evaluation basis')).toBe(true);
    expect(hasFiniteVerb('an experimental study of a wing in a propeller slipstream')).toBe(false);
    expect(hasFiniteVerb('Posted by the editorial team')).toBe(false);
    expect(hasFiniteVerb('One cannot, of course, legislate the meaning of a term.')).toBe(true);
    expect(hasFiniteVerb('to determine the spanwise distribution of the lift')).toBe(false);
  });
});
