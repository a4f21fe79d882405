/**
 * Citations in the eight formats, against known outputs. Each expected
 * string was checked by eye against the style's rules (the comments say
 * what each one shows); they are also what citation-js + citeproc-js produce
 * with the bundled / vendored CSL styles, so a change in either shows up here.
 */
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CITATION_FORMATS, type CitationFormat, type ResearchSource, type SourceMeta } from '../../core/research.js';
import { CSL_MEMO_MAX, cslItemOf, cslMemoSize, cslName, fallbackCitation, formatCitation, formatCitations, isOrganisationName, resetCslMemo } from '../../plugins/operations/research/citations.js';

const FETCHED = Date.UTC(2024, 4, 2, 10, 30); // 2 May 2024, the accessed date everywhere

const meta = (m: Partial<SourceMeta>): SourceMeta => ({
  title: '', authors: [], publishedAt: null, container: null, publisher: null, doi: null, volume: null, issue: null, pages: null, cslType: 'webpage', ...m,
});

const source = (id: string, url: string, m: Partial<SourceMeta>): ResearchSource => ({
  id, url, domain: new URL(url).hostname, type: 'web', typeReason: 'test', meta: meta(m), language: 'en', country: null,
  text: 'text', origin: 'scrape', textKind: 'page', providers: ['local'], searchRank: 1, fetchedAt: FETCHED, quality: 0.5,
});

/** A journal article: 2 authors, a DOI (given as a doi.org URL: normalised), volume, issue, pages. */
const journal = source('src_1', 'https://www.nature.com/articles/s41586-021-03819-2', {
  title: 'Highly accurate protein structure prediction with AlphaFold', authors: ['John Jumper', 'Richard Evans'],
  publishedAt: Date.UTC(2021, 6, 15), container: 'Nature', publisher: 'Springer Nature', doi: 'https://doi.org/10.1038/s41586-021-03819-2',
  volume: '596', issue: '7873', pages: '583-589', cslType: 'article-journal',
});

/** A news article: one author, a date with a time, HTML in the title (stripped), site and publisher. */
const news = source('src_2', 'https://www.theguardian.com/business/2023/nov/14/markets-rally', {
  title: 'Markets rally as <em>inflation</em> cools', authors: ['Ana García'], publishedAt: Date.UTC(2023, 10, 14, 16, 5),
  container: 'The Guardian', publisher: 'Guardian News & Media', cslType: 'article-newspaper',
});

/** A web page with no author and no date. */
const webpage = source('src_3', 'https://example.com/about', { title: 'About us', container: 'Example Corp', cslType: 'webpage' });

const J_URL = 'https://www.nature.com/articles/s41586-021-03819-2';
const N_URL = 'https://www.theguardian.com/business/2023/nov/14/markets-rally';

describe('formatCitation: known outputs', () => {
  const expected: Record<CitationFormat, [string, string, string]> = {
    // APA 7: "Family, I., & Family, I. (Year). Title in sentence case. Journal, Vol(Issue), pages. https://doi.org/DOI"
    // (DOI as a URL, no retrieval date for a journal article). News: (Year, Month Day), site name, URL.
    // No author: the title moves to the author position, "(n.d.)", the site name, and "Retrieved <date>, from <URL>"
    // for an undated page that may change (the bundled APA style's rule).
    apa: [
      'Jumper, J., & Evans, R. (2021). Highly accurate protein structure prediction with AlphaFold. Nature, 596(7873), 583–589. https://doi.org/10.1038/s41586-021-03819-2',
      `García, A. (2023, November 14). Markets rally as inflation cools. The Guardian. ${N_URL}`,
      'About us. (n.d.). Example Corp. Retrieved May 2, 2024, from https://example.com/about',
    ],
    // MLA 9: "Family, Given, and Given Family. “Title in Title Case.” Container, vol. N, no. N, Mon. Year, pp. 583–89, DOI-URL."
    // (page range abbreviated "minimal-two"); news: day month year; no date: "Accessed <d Mon. yyyy>" at the end.
    mla: [
      'Jumper, John, and Richard Evans. “Highly Accurate Protein Structure Prediction with AlphaFold.” Nature, vol. 596, no. 7873, Jul. 2021, pp. 583–89, https://doi.org/10.1038/s41586-021-03819-2.',
      `García, Ana. “Markets Rally as Inflation Cools.” The Guardian, 14 Nov. 2023, ${N_URL}.`,
      '“About Us.” Example Corp, https://example.com/about. Accessed 2 May 2024.',
    ],
    // Chicago 18 author-date: "Family, Given, and Given Family. Year. “Title.” Journal Vol (Issue): pages. DOI-URL."
    // News: "Newspaper, Month Day." after the year. No author: the site leads, "n.d.", and an access date (no other date).
    chicago: [
      'Jumper, John, and Richard Evans. 2021. “Highly Accurate Protein Structure Prediction with AlphaFold.” Nature 596 (7873): 583–89. https://doi.org/10.1038/s41586-021-03819-2.',
      `García, Ana. 2023. “Markets Rally as Inflation Cools.” The Guardian, November 14. ${N_URL}.`,
      'Example Corp. n.d. “About Us.” Accessed May 2, 2024. https://example.com/about.',
    ],
    // Harvard (Cite Them Right, CSL harvard1, en-US): "Family, I. and Family, I. (Year) ‘Title’, Journal, Vol(Issue), pp. x–y. doi:DOI."
    // (double quotes and US dates: the en-US locale). News: day month; no date: "(no date)", "Available at: URL (Accessed: date)."
    harvard: [
      'Jumper, J. and Evans, R. (2021) “Highly accurate protein structure prediction with AlphaFold,” Nature, 596(7873), pp. 583–589. doi:10.1038/s41586-021-03819-2.',
      `García, A. (2023) “Markets rally as inflation cools,” The Guardian, 14 November. Available at: ${N_URL} (Accessed: May 2, 2024).`,
      'About us (no date) Example Corp. Available at: https://example.com/about (Accessed: May 2, 2024).',
    ],
    // IEEE 2023: "[n] I. Family and I. Family, “Title,” Journal, vol. N, no. N, pp. x–y, Mon. Year, doi: DOI."
    // Numbered by the position in the list (here 1, 2, 3). Online sources: "Accessed: <date>. [Online]. Available: URL".
    ieee: [
      '[1] J. Jumper and R. Evans, “Highly accurate protein structure prediction with AlphaFold,” Nature, vol. 596, no. 7873, pp. 583–589, Jul. 2021, doi: 10.1038/s41586-021-03819-2.',
      `[2] A. García, “Markets rally as inflation cools,” The Guardian, Guardian News & Media, Nov. 14, 2023. Accessed: May 02, 2024. [Online]. Available: ${N_URL}`,
      '[3] “About us,” Example Corp. Accessed: May 02, 2024. [Online]. Available: https://example.com/about',
    ],
    // Vancouver (NLM): "n. Family I, Family I. Title. Journal [Internet]. Year Mon Day [cited Year Mon Day];Vol(Issue):pages. Available from: URL"
    // (page range abbreviated 583–9; [Internet] and [cited] because the source is online).
    vancouver: [
      `1. Jumper J, Evans R. Highly accurate protein structure prediction with AlphaFold. Nature [Internet]. 2021 Jul 15 [cited 2024 May 2];596(7873):583–9. Available from: ${J_URL}`,
      `2. García A. Markets rally as inflation cools. The Guardian [Internet]. 2023 Nov 14 [cited 2024 May 2]; Available from: ${N_URL}`,
      '3. About us [Internet]. Example Corp. [cited 2024 May 2]. Available from: https://example.com/about',
    ],
    // BibTeX (citation-js): keyed by the source id; @article with journal/volume/number/pages ("--"), capitalised
    // words of the title braced; the & of the publisher escaped; @misc for a web page (no year without a date).
    bibtex: [
      `@article{src_1,
\tnote = {[Online; accessed 2024-05-02]},
\tauthor = {Jumper, John and Evans, Richard},
\tjournal = {Nature},
\tdoi = {10.1038/s41586-021-03819-2},
\tnumber = {7873},
\tyear = {2021},
\tmonth = {jul 15},
\tpages = {583--589},
\tpublisher = {Springer Nature},
\ttitle = {Highly accurate protein structure prediction with {AlphaFold}},
\turl = {${J_URL}},
\tvolume = {596},
}`,
      `@article{src_2,
\tnote = {[Online; accessed 2024-05-02]},
\tauthor = {García, Ana},
\tjournal = {The Guardian},
\tyear = {2023},
\tmonth = {nov 14},
\tpublisher = {Guardian News \\& Media},
\ttitle = {Markets rally as inflation cools},
\turl = {${N_URL}},
}`,
      `@misc{src_3,
\tnote = {[Online; accessed 2024-05-02]},
\ttitle = {About us},
\turl = {https://example.com/about},
\thowpublished = {https://example.com/about},
}`,
    ],
    // RIS: TY JOUR / NEWS / ELEC; AU "Family, Given"; DA zero-padded YYYY/MM/DD/; Y2 (M1 for ELEC) the access date;
    // the NEWS entry keeps its author and full date (citation-js's spec would drop them).
    ris: [
      `TY  - JOUR
AU  - Jumper, John
AU  - Evans, Richard
DA  - 2021/07/15/
PY  - 2021
DO  - 10.1038/s41586-021-03819-2
ID  - src_1
IS  - 7873
SP  - 583-589
T2  - Nature
TI  - Highly accurate protein structure prediction with AlphaFold
UR  - ${J_URL}
VL  - 596
Y2  - 2024/05/02/
ER  - `,
      `TY  - NEWS
AU  - García, Ana
DA  - 2023/11/14/
ID  - src_2
PB  - Guardian News & Media
PY  - 2023
T2  - The Guardian
TI  - Markets rally as inflation cools
UR  - ${N_URL}
Y2  - 2024/05/02/
ER  - `,
      `TY  - ELEC
ID  - src_3
M1  - 2024/05/02/
TI  - About us
UR  - https://example.com/about
ER  - `,
    ],
  };

  for (const format of CITATION_FORMATS) {
    it(format, () => {
      const views = formatCitations([journal, news, webpage], format);
      expect(views.map((v) => v.text)).toEqual(expected[format]);
      expect(views.map((v) => [v.source_id, v.url, v.format])).toEqual([
        ['src_1', journal.url, format], ['src_2', news.url, format], ['src_3', webpage.url, format],
      ]);
    });
  }

  it('ieee and vancouver entries carry the source\'s own number (src_3 is [3], as the report\'s [n] markers say), whatever order the list has', () => {
    const views = formatCitations([webpage, journal], 'ieee');
    expect(views[0]!.text.startsWith('[3] “About us,”')).toBe(true);
    expect(views[1]!.text.startsWith('[1] J. Jumper and R. Evans,')).toBe(true);
    expect(formatCitation(journal, 'vancouver', 7).startsWith('7. Jumper J, Evans R.')).toBe(true);
  });

  it('a source without a title cites its URL host (not title-cased); the plain {url, meta, fetchedAt} shape is accepted', () => {
    const bare = { url: 'https://www.example.org/page', meta: meta({}), fetchedAt: FETCHED };
    expect(formatCitation(bare, 'apa')).toBe('example.org. (n.d.). Retrieved May 2, 2024, from https://www.example.org/page');
    expect(formatCitation(bare, 'mla')).toBe('example.org. https://www.example.org/page. Accessed 2 May 2024.');
    expect(formatCitation(bare, 'bibtex')).toContain('@misc{src_1,');
    expect(formatCitation(bare, 'ris', 4)).toContain('ID  - src_4');
  });

  it('a year-only date (1 January, midnight UTC) is cited as a year', () => {
    const s = source('src_9', 'https://x.example/r', { title: 'Annual report', authors: ['Acme Corporation'], publishedAt: Date.UTC(2020, 0, 1), cslType: 'report' });
    expect(formatCitation(s, 'apa')).toBe('Acme Corporation. (2020). Annual report. https://x.example/r');
    expect(formatCitation(s, 'ris')).toContain('DA  - 2020///');
  });
});

describe('determinism', () => {
  it('the same sources give the same text every time, in any order of calls, with the clock moved', () => {
    const all = (): string[][] => CITATION_FORMATS.map((f) => formatCitations([journal, news, webpage], f).map((v) => v.text));
    const first = all();
    vi.useFakeTimers();
    try {
      vi.setSystemTime(new Date('2031-07-04T12:00:00Z'));
      // Interleave formats and sources so engine state could leak if it did.
      for (const f of [...CITATION_FORMATS].reverse()) formatCitation(webpage, f, 9);
      expect(all()).toEqual(first);
    } finally {
      vi.useRealTimers();
    }
    expect(JSON.stringify(all())).not.toContain('2031');
  });
});

describe('the citeproc memo', () => {
  afterEach(() => resetCslMemo());

  it('answers exactly what citeproc makes, per style, source and number', () => {
    const styles = CITATION_FORMATS.filter((f) => f !== 'bibtex' && f !== 'ris');
    const fresh = (f: CitationFormat, n: number) => {
      resetCslMemo();
      return formatCitation(news, f, n);
    };
    const expected = styles.flatMap((f) => [fresh(f, 2), fresh(f, 7)]);
    resetCslMemo();
    for (let round = 0; round < 3; round++) {
      expect(styles.flatMap((f) => [formatCitation(news, f, 2), formatCitation(news, f, 7)])).toEqual(expected);
    }
    // One entry per (style, item): the number is applied to the entry afterwards, so 2 and 7 share one.
    expect(cslMemoSize()).toBe(styles.length);
    // A source differing in one field is another entry, with its own text.
    const other = formatCitation({ ...news, meta: { ...news.meta, title: 'Markets fall' } }, 'apa', 2);
    expect(other).toContain('Markets fall');
    expect(cslMemoSize()).toBe(styles.length + 1);
  });

  it('stays within its bound, dropping the least recently used entry first', () => {
    expect(CSL_MEMO_MAX).toBeGreaterThan(0);
    resetCslMemo(3);
    const page = (n: number) => source(`src_${n}`, `https://example.org/p/${n}`, { title: `Page ${n}`, cslType: 'webpage' });
    const first = formatCitation(page(1), 'apa', 1);
    formatCitation(page(2), 'apa', 2);
    formatCitation(page(3), 'apa', 3);
    formatCitation(page(1), 'apa', 1); // 1 is now the most recent; 2 the least
    formatCitation(page(4), 'apa', 4);
    expect(cslMemoSize()).toBe(3);
    for (let n = 5; n < 12; n++) formatCitation(page(n), 'apa', n);
    expect(cslMemoSize()).toBe(3);
    expect(formatCitation(page(1), 'apa', 1)).toBe(first);
  });
});

describe('names', () => {
  it.each([
    ['John Smith', { given: 'John', family: 'Smith' }],
    ['Smith, John A.', { family: 'Smith', given: 'John A.' }],
    ['Ludwig van Beethoven', { given: 'Ludwig', family: 'van Beethoven' }],
    ['Martin Luther King Jr.', { given: 'Martin Luther', family: 'King', suffix: 'Jr.' }],
    ['Martin Luther King, Jr.', { given: 'Martin Luther', family: 'King', suffix: 'Jr.' }],
    ['Zoë Ångström', { given: 'Zoë', family: 'Ångström' }],
    ['World Health Organization', { literal: 'World Health Organization' }],
    ['The New York Times', { literal: 'The New York Times' }],
    ['Universität Wien', { literal: 'Universität Wien' }],
    ['NASA', { literal: 'NASA' }],
    ['王小明', { literal: '王小明' }],
    ['Madonna', { literal: 'Madonna' }],
    ['', null],
  ])('%s', (name, expected) => {
    expect(cslName(name)).toEqual(expected);
  });

  it('organisation heuristic keeps common person names as persons', () => {
    expect(['Emily Post', 'Jean-Paul Sartre', 'Anne-Marie Slaughter', 'Kim Park'].map(isOrganisationName)).toEqual([false, false, false, false]);
  });
});

describe('hostile metadata', () => {
  const letters = (i: number): string => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + Math.floor(i / 26) % 26);
  const many = source('src_1', 'https://x.example/many', {
    title: 'Big collaboration', authors: Array.from({ length: 500 }, (_, i) => `Given${letters(i)} Family${letters(i)}`),
    publishedAt: Date.UTC(2019, 5, 1), container: 'Physics Letters', cslType: 'article-journal',
  });

  it('500 authors: bounded per style (APA 19 … last; MLA / IEEE / Chicago / Vancouver et al.; BibTeX 20 and others; RIS 20)', () => {
    const apa = formatCitation(many, 'apa');
    // APA 7, 21 or more authors: the first 19, an ellipsis, the last.
    expect(apa).toMatch(/^Familyaa, G\., Familyba, G\., .*Familysa, G\., … Familyft, G\. \(2019\)\. Big collaboration\. Physics Letters\./);
    expect(apa.split('Family').length - 1).toBe(20);
    // MLA 9: three or more authors, the first "et al."
    expect(formatCitation(many, 'mla')).toMatch(/^Familyaa, Givenaa, et al\. “Big Collaboration\.”/);
    // IEEE: seven or more, the first "et al."
    expect(formatCitation(many, 'ieee')).toMatch(/^\[1\] G\. Familyaa et al\., “Big collaboration,”/);
    // Vancouver: more than six, the first six "et al."
    expect(formatCitation(many, 'vancouver')).toMatch(/^1\. Familyaa G, Familyba G, Familyca G, Familyda G, Familyea G, Familyfa G, et al\. Big collaboration\./);
    // Chicago 18: more than six authors, the first three "et al."
    expect(formatCitation(many, 'chicago')).toMatch(/^Familyaa, Givenaa, Givenba Familyba, Givenca Familyca, et al\. 2019\./);
    const bib = formatCitation(many, 'bibtex');
    expect(bib).toMatch(/author = \{Familyaa, Givenaa and .* and Familyta, Giventa and others\},/);
    expect(bib.split(' and ').length - 1).toBe(20);
    expect(formatCitation(many, 'ris').split('\nAU  - ').length - 1).toBe(20);
  });

  it('empty strings everywhere still cite the URL host', () => {
    const empty = source('src_1', 'https://empty.example/', { title: '   ', authors: ['', '  '], container: '', publisher: '', doi: '', volume: '', issue: '', pages: '', cslType: '' });
    for (const f of CITATION_FORMATS) {
      const text = formatCitation(empty, f);
      expect(text, f).toContain('empty.example');
      expect(text, f).not.toMatch(/undefined|null|NaN|\[object/);
    }
  });

  // citation-js braces capitalised words so BibTeX styles keep their case; its word test is ASCII, hence "{Z}ürich" (valid LaTeX, same effect).
  it('unicode names and titles survive every format (BibTeX keeps UTF-8, escapes LaTeX specials)', () => {
    const u = source('src_5', 'https://u.example/a', {
      title: 'Über “Zürich” & 東京: 50% of #1 under_score $x$ ~ ^ {a} back\\slash 😀', authors: ['王小明', 'Zoë Ångström'],
      publishedAt: Date.UTC(2022, 2, 3), container: 'Revista Ñ', cslType: 'article-journal',
    });
    for (const f of CITATION_FORMATS) {
      const text = formatCitation(u, f);
      expect(text, f).toContain('Ångström');
      expect(text, f).toContain('東京');
      expect(text, f).toContain('😀');
    }
    expect(formatCitation(u, 'bibtex')).toContain('title = {Über “{Z}ürich” \\& 東京: 50\\% of \\#1 under\\_score \\$x\\$ \\~{} \\^{} \\{a\\} back\\textbackslash{}slash 😀}');
    expect(formatCitation(u, 'bibtex')).toContain('author = {{王小明} and Ångström, Zoë}');
    expect(formatCitation(u, 'apa')).toBe('王小明, & Ångström, Z. (2022). Über “Zürich” & 東京: 50% of #1 under_score $x$ ~ ^ {a} back\\slash 😀. Revista Ñ. https://u.example/a');
  });

  it('HTML in titles is stripped, entities decoded, a lone "<" of prose kept', () => {
    const h = source('src_1', 'https://h.example/', { title: '<script>alert(1)</script><b>Bold</b> &amp; <i>italic</i> a < b', cslType: 'webpage' });
    expect(formatCitation(h, 'apa')).toBe('alert(1) Bold & italic a < b. (n.d.). Retrieved May 2, 2024, from https://h.example/');
    for (const f of CITATION_FORMATS) expect(formatCitation(h, f), f).not.toMatch(/<\/?[a-z]/i);
  });

  it('weird DOIs are omitted (never reaching plugin-ris, which throws on some), odd but valid ones kept', () => {
    for (const doi of ['10.1000/.', '10.12/x', 'doi:', 'https://doi.org/', '10.1000/a b', '10.1000/<x>', 'x'.repeat(1000)]) {
      const s = source('src_1', 'https://d.example/', { title: 'T', doi, cslType: 'article-journal' });
      expect(formatCitation(s, 'ris'), doi).not.toContain('DO  -');
      expect(formatCitation(s, 'apa'), doi).not.toContain('doi.org');
      expect(cslItemOf(s).DOI).toBeUndefined();
    }
    const odd = source('src_1', 'https://d.example/', { title: 'T', doi: 'https://doi.org/10.1002/(SICI)1097-4636(199706)35:4', cslType: 'article-journal' });
    expect(formatCitation(odd, 'ris')).toContain('DO  - 10.1002/(SICI)1097-4636(199706)35:4');
    expect(formatCitation(odd, 'apa')).toContain('https://doi.org/10.1002/(SICI)1097-4636(199706)35:4');
  });

  it('dates far in the past and future; impossible timestamps are "no date"', () => {
    const at = (publishedAt: number): ResearchSource => source('src_1', 'https://t.example/', { title: 'T', authors: ['Ann Lee'], publishedAt, cslType: 'webpage' });
    expect(formatCitation(at(Date.UTC(1665, 2, 6)), 'apa')).toBe('Lee, A. (1665, March 6). T. https://t.example/');
    expect(formatCitation(at(Date.UTC(9999, 11, 31)), 'apa')).toBe('Lee, A. (9999, December 31). T. https://t.example/');
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1, Date.UTC(10000, 0, 2), -1e15]) {
      expect(formatCitation(at(bad), 'apa'), String(bad)).toBe('Lee, A. (n.d.). T. Retrieved May 2, 2024, from https://t.example/');
    }
    const noFetch = { url: 'https://t.example/', meta: meta({ title: 'T' }), fetchedAt: Number.NaN };
    for (const f of CITATION_FORMATS) expect(formatCitation(noFetch, f), f).not.toMatch(/NaN|Invalid/);
  });

  it('a long title is bounded', () => {
    const s = source('src_1', 'https://l.example/', { title: 'word '.repeat(1000), cslType: 'webpage' });
    expect(formatCitation(s, 'apa').length).toBeLessThan(700);
  });
});

describe('fallbacks', () => {
  const core = createRequire(import.meta.url)('@citation-js/core') as { Cite: { prototype: { format: (...a: unknown[]) => unknown } } };
  afterEach(() => vi.restoreAllMocks());

  it('when citation-js throws, each format gets a simple deterministic string instead', () => {
    vi.spyOn(core.Cite.prototype, 'format').mockImplementation(() => {
      throw new Error('boom');
    });
    const got = Object.fromEntries(CITATION_FORMATS.map((f) => [f, formatCitation(journal, f, 2)]));
    expect(got).toEqual({
      apa: 'John Jumper, & Richard Evans. (2021). Highly accurate protein structure prediction with AlphaFold. Nature. https://doi.org/10.1038/s41586-021-03819-2',
      mla: 'John Jumper and Richard Evans. “Highly accurate protein structure prediction with AlphaFold.” Nature, 2021, https://doi.org/10.1038/s41586-021-03819-2.',
      chicago: 'John Jumper and Richard Evans. 2021. “Highly accurate protein structure prediction with AlphaFold.” Nature. https://doi.org/10.1038/s41586-021-03819-2.',
      harvard: 'John Jumper and Richard Evans (2021) Highly accurate protein structure prediction with AlphaFold. Nature. Available at: https://doi.org/10.1038/s41586-021-03819-2 (Accessed: 2024-05-02).',
      ieee: '[2] John Jumper and Richard Evans, “Highly accurate protein structure prediction with AlphaFold,” Nature, 2021. [Online]. Available: https://doi.org/10.1038/s41586-021-03819-2',
      vancouver: '2. John Jumper and Richard Evans. Highly accurate protein structure prediction with AlphaFold [Internet]. Nature; 2021 [cited 2024-05-02]. Available from: https://doi.org/10.1038/s41586-021-03819-2',
      bibtex: '@misc{src_1,\n\ttitle = {Highly accurate protein structure prediction with AlphaFold},\n\tauthor = {{John Jumper} and {Richard Evans}},\n\tyear = {2021},\n\thowpublished = {Nature},\n\tdoi = {10.1038/s41586-021-03819-2},\n\turl = {https://www.nature.com/articles/s41586-021-03819-2},\n\turldate = {2024-05-02},\n}',
      ris: 'TY  - ELEC\nAU  - Jumper, John\nAU  - Evans, Richard\nTI  - Highly accurate protein structure prediction with AlphaFold\nPY  - 2021\nT2  - Nature\nDO  - 10.1038/s41586-021-03819-2\nUR  - https://www.nature.com/articles/s41586-021-03819-2\nID  - src_1\nER  - ',
    });
  });

  it('an empty result from citation-js also falls back', () => {
    vi.spyOn(core.Cite.prototype, 'format').mockReturnValue('   ');
    expect(formatCitation(webpage, 'apa')).toBe('About us. (n.d.). Example Corp. https://example.com/about');
  });

  it('fallbackCitation without authors or date', () => {
    const item = cslItemOf(webpage, 3);
    expect(fallbackCitation(item, 'chicago', 3)).toBe('n.d. “About us.” Example Corp. https://example.com/about.');
    expect(fallbackCitation(item, 'vancouver', 3)).toBe('3. About us [Internet]. Example Corp; [cited 2024-05-02]. Available from: https://example.com/about');
  });
});
