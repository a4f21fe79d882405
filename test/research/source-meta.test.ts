/**
 * Citation metadata of research sources: realistic pages go through the real
 * meta_data and schema_data extractors, and sourceMetaFrom reads what they
 * produced (the shape gather.ts hands it).
 */
import { describe, expect, it } from 'vitest';
import { metaDataExtractor } from '../../plugins/extractors/meta-data.js';
import { schemaDataExtractor } from '../../plugins/extractors/schema-data.js';
import { dateFromMeta, normaliseDoi, sourceMetaFrom, splitAuthors, type SourceMetaInput } from '../../plugins/operations/research/source-meta.js';
import { page } from '../extractors/support.js';

/** What gather.ts passes for a scraped page: its URL, title, meta_data and schema_data. */
function scraped(html: string, url: string, indexed?: SourceMetaInput['indexed']): SourceMetaInput {
  const p = page(html, url);
  const metaData = metaDataExtractor.extract(p, {}) as unknown as Record<string, unknown>;
  const schemaData = schemaDataExtractor.extract(p, {}) as unknown as unknown[];
  return { url, title: (metaData.title as string | null) ?? undefined, metaData, schemaData, indexed };
}

const ld = (obj: unknown): string => `<script type="application/ld+json">${JSON.stringify(obj)}</script>`;

describe('sourceMetaFrom: Highwire citation_* tags (a journal article page)', () => {
  const html = `<!doctype html><html lang="en"><head>
    <title>Highly accurate protein structure prediction with AlphaFold | Nature</title>
    <meta name="citation_title" content="Highly accurate protein structure prediction with AlphaFold">
    <meta name="citation_author" content="Jumper, John">
    <meta name="citation_author_institution" content="DeepMind, London, UK">
    <meta name="citation_author" content="Evans, Richard">
    <meta name="citation_author" content="Pritzel, Alexander">
    <meta name="citation_publication_date" content="2021/08/26">
    <meta name="citation_online_date" content="2021/07/15">
    <meta name="citation_journal_title" content="Nature">
    <meta name="citation_publisher" content="Nature Publishing Group">
    <meta name="citation_doi" content="10.1038/s41586-021-03819-2">
    <meta name="citation_volume" content="596">
    <meta name="citation_issue" content="7873">
    <meta name="citation_firstpage" content="583">
    <meta name="citation_lastpage" content="589">
    <meta name="dc.creator" content="Someone Else">
    <meta property="og:title" content="OG title that loses">
    <meta property="og:site_name" content="Nature">
    ${ld({ '@context': 'https://schema.org', '@type': 'WebPage', name: 'JSON-LD page name that loses' })}
  </head><body><p>Text</p></body></html>`;

  it('reads every citation field, repeated citation_author in order, "Family, Given" as "Given Family"', () => {
    expect(sourceMetaFrom(scraped(html, 'https://www.nature.com/articles/s41586-021-03819-2'))).toEqual({
      title: 'Highly accurate protein structure prediction with AlphaFold',
      authors: ['John Jumper', 'Richard Evans', 'Alexander Pritzel'],
      // citation_publication_date beats citation_online_date.
      publishedAt: Date.UTC(2021, 7, 26),
      container: 'Nature',
      publisher: 'Nature Publishing Group',
      doi: '10.1038/s41586-021-03819-2',
      volume: '596',
      issue: '7873',
      pages: '583-589',
      cslType: 'article-journal',
    });
  });

  it('the meta_data extractor keeps repeated tags as an array (what the reader relies on)', () => {
    const p = page(html, 'https://www.nature.com/x');
    const md = metaDataExtractor.extract(p, {}) as { meta: Record<string, unknown> };
    expect(md.meta.citation_author).toEqual(['Jumper, John', 'Evans, Richard', 'Pritzel, Alexander']);
  });
});

describe('sourceMetaFrom: JSON-LD', () => {
  it('a Yoast-style @graph NewsArticle: author and publisher by @id, isPartOf a WebPage skipped for the site name', () => {
    const graph = {
      '@context': 'https://schema.org',
      '@graph': [
        { '@type': 'WebSite', '@id': 'https://news.example/#website', name: 'Example News', publisher: { '@id': 'https://news.example/#org' } },
        { '@type': 'WebPage', '@id': 'https://news.example/a/#webpage', name: 'Markets rally - Example News', isPartOf: { '@id': 'https://news.example/#website' } },
        {
          '@type': 'NewsArticle', '@id': 'https://news.example/a/#article',
          headline: 'Markets rally as inflation &amp; rates <em>cool</em>',
          isPartOf: { '@id': 'https://news.example/a/#webpage' },
          author: [{ '@id': 'https://news.example/#/person/1' }, { '@type': 'Person', name: 'Bob Jones' }],
          datePublished: '2023-11-14T16:05:00+01:00', dateModified: '2023-11-15T09:00:00Z',
          publisher: { '@id': 'https://news.example/#org' },
        },
        { '@type': 'Person', '@id': 'https://news.example/#/person/1', name: 'Ana García' },
        { '@type': 'Organization', '@id': 'https://news.example/#org', name: 'Example Media Group' },
      ],
    };
    const html = `<html><head><title>Markets rally - Example News</title>
      <meta property="og:title" content="Markets rally (OG)">
      <meta property="og:site_name" content="Example News">
      <meta property="article:published_time" content="2023-11-10T00:00:00Z">
      <meta property="article:author" content="https://www.facebook.com/ana">
      ${ld(graph)}</head><body></body></html>`;
    expect(sourceMetaFrom(scraped(html, 'https://news.example/a'))).toEqual({
      // Entities decoded, tags stripped: the headline is plain text.
      title: 'Markets rally as inflation & rates cool',
      authors: ['Ana García', 'Bob Jones'],
      // 16:05 at +01:00 is 15:05 UTC; datePublished beats article:published_time.
      publishedAt: Date.UTC(2023, 10, 14, 15, 5),
      // isPartOf -> the WebPage (skipped) -> the WebSite's name.
      container: 'Example News',
      publisher: 'Example Media Group',
      doi: null,
      volume: null,
      issue: null,
      pages: null,
      cslType: 'article-newspaper',
    });
  });

  it('a ScholarlyArticle: authors as Person objects (givenName/familyName too), Organization author, PropertyValue DOI, issue/volume chain', () => {
    const html = `<html><head>${ld({
      '@context': 'https://schema.org',
      '@type': 'ScholarlyArticle',
      name: 'Sea-level rise in the 21st century',
      author: [{ '@type': 'Person', givenName: 'Maria', familyName: 'Rossi' }, { '@type': 'Organization', name: 'IPCC Working Group I' }],
      datePublished: '2019',
      identifier: [{ '@type': 'PropertyValue', propertyID: 'DOI', value: 'https://doi.org/10.5194/tc-13-1-2019' }],
      isPartOf: { '@type': 'PublicationIssue', issueNumber: 3, isPartOf: { '@type': 'PublicationVolume', volumeNumber: '13', isPartOf: { '@type': 'Periodical', name: 'The Cryosphere' } } },
      pageStart: '1', pageEnd: '20',
      publisher: { '@type': 'Organization', name: 'Copernicus Publications' },
    })}</head></html>`;
    expect(sourceMetaFrom(scraped(html, 'https://tc.copernicus.org/articles/13/1/2019/'))).toEqual({
      title: 'Sea-level rise in the 21st century',
      authors: ['Maria Rossi', 'IPCC Working Group I'],
      publishedAt: Date.UTC(2019, 0, 1),
      container: 'The Cryosphere',
      publisher: 'Copernicus Publications',
      doi: '10.5194/tc-13-1-2019',
      volume: '13',
      issue: '3',
      pages: '1-20',
      cslType: 'article-journal',
    });
  });

  it('a Report with a doi.org sameAs; a WebPage whose mainEntity is the article', () => {
    const report = `<html><head>${ld({ '@context': 'https://schema.org', '@type': 'Report', headline: 'Global Energy Review 2024', author: { '@type': 'Organization', name: 'International Energy Agency' }, datePublished: '2024-03-01', sameAs: ['https://example.org/x', 'https://doi.org/10.1787/abc123-en'] })}</head></html>`;
    expect(sourceMetaFrom(scraped(report, 'https://www.iea.org/reports/global-energy-review-2024'))).toMatchObject({
      title: 'Global Energy Review 2024', authors: ['International Energy Agency'], publishedAt: Date.UTC(2024, 2, 1), doi: '10.1787/abc123-en', cslType: 'report',
    });
    const main = `<html><head>${ld({ '@context': 'https://schema.org', '@type': 'WebPage', name: 'Page', mainEntity: { '@type': 'BlogPosting', headline: 'My post', author: 'Jane Roe', datePublished: '2022-05-06' } })}</head></html>`;
    expect(sourceMetaFrom(scraped(main, 'https://blog.example/p'))).toMatchObject({ title: 'My post', authors: ['Jane Roe'], publishedAt: Date.UTC(2022, 4, 6), cslType: 'webpage' });
  });

  it('a SocialMediaPosting is a post; broken JSON-LD is skipped, not fatal', () => {
    const html = `<html><head><script type="application/ld+json">{"@type": "Article", "headline": </script>
      ${ld({ '@context': 'https://schema.org', '@type': 'SocialMediaPosting', headline: 'Thread about CSL', author: { '@type': 'Person', name: 'Sam Poster' }, datePublished: '2024-02-03T10:00:00Z' })}</head></html>`;
    expect(sourceMetaFrom(scraped(html, 'https://social.example/@sam/1'))).toMatchObject({ title: 'Thread about CSL', authors: ['Sam Poster'], cslType: 'post' });
  });

  it('microdata items are read like JSON-LD', () => {
    const html = `<html><body><article itemscope itemtype="https://schema.org/NewsArticle">
      <h1 itemprop="headline">Rain expected</h1>
      <span itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">Lee Weather</span></span>
      <time itemprop="datePublished" datetime="2024-06-01">June 1</time></article></body></html>`;
    expect(sourceMetaFrom(scraped(html, 'https://paper.example/rain'))).toMatchObject({
      title: 'Rain expected', authors: ['Lee Weather'], publishedAt: Date.UTC(2024, 5, 1), cslType: 'article-newspaper',
    });
  });
});

describe('sourceMetaFrom: Dublin Core, OpenGraph, the index', () => {
  it('Dublin Core (any case in the page; the extractor lower-cases keys)', () => {
    const html = `<html><head><title>Repository record</title>
      <meta name="DC.title" content="Coastal erosion survey">
      <meta name="DC.creator" content="Okafor, Chidi">
      <meta name="DC.creator" content="Lin, Mei">
      <meta name="DC.date" content="2018-09">
      <meta name="DC.publisher" content="University Press">
      <meta name="DC.identifier" content="doi:10.1234/abcd.5678">
    </head></html>`;
    expect(sourceMetaFrom(scraped(html, 'https://repo.example/record/1'))).toEqual({
      title: 'Coastal erosion survey', authors: ['Chidi Okafor', 'Mei Lin'], publishedAt: Date.UTC(2018, 8, 1),
      container: null, publisher: 'University Press', doi: '10.1234/abcd.5678', volume: null, issue: null, pages: null, cslType: 'webpage',
    });
  });

  it('OpenGraph only: og:title, og:site_name, article:author names (profile URLs skipped), article:published_time', () => {
    const html = `<html><head><title>Ignored because OG wins</title>
      <meta property="og:title" content="How we scaled search">
      <meta property="og:site_name" content="Acme Engineering">
      <meta property="article:author" content="https://acme.example/people/kim">
      <meta property="article:author" content="Kim Park">
      <meta property="article:published_time" content="2022-01-31T08:00:00-05:00"></head></html>`;
    expect(sourceMetaFrom(scraped(html, 'https://acme.example/blog/scale'))).toEqual({
      title: 'How we scaled search', authors: ['Kim Park'], publishedAt: Date.UTC(2022, 0, 31, 13), container: 'Acme Engineering',
      publisher: null, doi: null, volume: null, issue: null, pages: null, cslType: 'webpage',
    });
  });

  it('a bare page: its <title> loses the " | Site" suffix when Site is the site name; meta author is split', () => {
    const html = `<html><head><title>About us | Example Corp</title><meta property="og:site_name" content="Example Corp">
      <meta name="author" content="Jane Doe and John Roe"></head></html>`;
    expect(sourceMetaFrom(scraped(html, 'https://example.com/about'))).toMatchObject({ title: 'About us', authors: ['Jane Doe', 'John Roe'], container: 'Example Corp', publishedAt: null, cslType: 'webpage' });
  });

  it('a search result title with the site suffix loses it too', () => {
    const html = '<html><head><meta property="og:site_name" content="Example News"></head></html>';
    expect(sourceMetaFrom(scraped(html, 'https://news.example/b', { title: 'Storm hits coast — Example News', author: null, siteName: null, doi: null, publishedAt: null, type: 'news' })).title).toBe('Storm hits coast');
  });

  it('nothing at all: the title is the URL host, no authors, no date', () => {
    expect(sourceMetaFrom({ url: 'https://www.example.org/x?y=1' })).toEqual({
      title: 'example.org', authors: [], publishedAt: null, container: null, publisher: null, doi: null, volume: null, issue: null, pages: null, cslType: 'webpage',
    });
  });

  it('an indexed document (no page): its title, author, site, DOI, date and type', () => {
    expect(sourceMetaFrom({
      url: 'https://doi.org/10.1000/182', title: 'Indexed title',
      indexed: { title: 'Indexed title', author: 'Smith, John; Doe, Jane', siteName: 'Index Site', doi: null, publishedAt: Date.UTC(2020, 4, 5), type: 'academic' },
    })).toEqual({
      title: 'Indexed title', authors: ['John Smith', 'Jane Doe'], publishedAt: Date.UTC(2020, 4, 5), container: 'Index Site', publisher: null,
      // The URL itself is a doi.org link.
      doi: '10.1000/182', volume: null, issue: null, pages: null, cslType: 'article-journal',
    });
    expect(sourceMetaFrom({ url: 'https://n.example/a', indexed: { type: 'news', author: 'A. Writer, B. Writer' } })).toMatchObject({ authors: ['A. Writer', 'B. Writer'], cslType: 'article-newspaper' });
    expect(sourceMetaFrom({ url: 'https://s.example/a', indexed: { type: 'social' } }).cslType).toBe('post');
    expect(sourceMetaFrom({ url: 'https://r.example/a', indexed: { type: 'report' } }).cslType).toBe('report');
  });

  it('page signals beat the indexed type; a flat tag record is read too', () => {
    expect(sourceMetaFrom({ url: 'https://x.example/', metaData: { citation_journal_title: 'J', citation_title: 'T' }, indexed: { type: 'news' } })).toMatchObject({ title: 'T', container: 'J', cslType: 'article-journal' });
  });
});

describe('sourceMetaFrom: hostile metadata', () => {
  it('500 authors are bounded to 100, duplicates dropped; empty strings and junk skipped', () => {
    const tags = Array.from({ length: 500 }, (_, i) => `<meta name="citation_author" content="Author ${String.fromCharCode(65 + (i % 26))}${i}">`).join('');
    const m = sourceMetaFrom(scraped(`<html><head>${tags}<meta name="citation_author" content="Author A0"><meta name="citation_title" content="   "></head></html>`, 'https://x.example/p'));
    expect(m.authors).toHaveLength(100);
    expect(m.authors[0]).toBe('Author A0');
    expect(new Set(m.authors).size).toBe(100);
    expect(m.title).toBe('x.example');
    const junk = sourceMetaFrom({ url: 'https://x.example/', metaData: { meta: { citation_author: ['', '  ', '---', 'https://x.example/me', '@handle', 'Real Name'] } } });
    expect(junk.authors).toEqual(['Real Name']);
  });

  it('unicode names kept; control characters, lone surrogates and HTML stripped; long titles bounded', () => {
    const m = sourceMetaFrom({
      url: 'https://x.example/',
      metaData: { meta: { citation_title: `<b>Über</b>\u0007 “Zürich” &amp; 東京 ${'x'.repeat(2000)}\ud800`, citation_author: ['王小明', 'Zoë Ångström', 'Ñúñez, José'] } },
    });
    expect(m.title.startsWith('Über “Zürich” & 東京 x')).toBe(true);
    expect(m.title.length).toBeLessThanOrEqual(500);
    expect(m.title.endsWith('…')).toBe(true);
    expect(m.authors).toEqual(['王小明', 'Zoë Ångström', 'José Ñúñez']);
  });

  it('weird DOIs are refused and invalid dates are no date', () => {
    const m = sourceMetaFrom({
      url: 'https://x.example/',
      metaData: { meta: { citation_doi: '10.12/too-short-registrant', 'dc.identifier': 'not a doi', citation_publication_date: '2021-02-30', citation_date: 'yesterday', citation_online_date: '0999-01-01' } },
      schemaData: [{ format: 'json-ld', '@type': 'Article', headline: 'H', datePublished: '2021-13-01', doi: '10.1000/<script>' }],
    });
    expect(m.doi).toBeNull();
    expect(m.publishedAt).toBeNull();
  });

  it('prototype-ish keys and non-object inputs do not break it', () => {
    const md = JSON.parse('{"meta":{"__proto__":"x","citation_title":"Safe"},"open_graph":[],"twitter":null}') as Record<string, unknown>;
    expect(sourceMetaFrom({ url: 'not a url', metaData: md, schemaData: [null, 1, 'x', [], { format: 'json-ld', error: 'invalid JSON' }] })).toMatchObject({ title: 'Safe', authors: [] });
  });
});

describe('dateFromMeta (strict)', () => {
  it.each([
    ['2021', Date.UTC(2021, 0, 1)],
    ['2021-03', Date.UTC(2021, 2, 1)],
    ['2021-03-15', Date.UTC(2021, 2, 15)],
    ['2021/3/5', Date.UTC(2021, 2, 5)],
    ['2021.03.15', Date.UTC(2021, 2, 15)],
    ['20210315', Date.UTC(2021, 2, 15)],
    ['2021-03-15T10:20:30Z', Date.UTC(2021, 2, 15, 10, 20, 30)],
    ['2021-03-15T10:20:30.123+02:00', Date.UTC(2021, 2, 15, 8, 20, 30, 123)],
    ['2021-03-15 10:20', Date.UTC(2021, 2, 15, 10, 20)],
    ['2021-03-15T10:20:30-0530', Date.UTC(2021, 2, 15, 15, 50, 30)],
    ['1665-03-06', Date.UTC(1665, 2, 6)],
    [['', 'bad', '2020-01-02'], Date.UTC(2020, 0, 2)],
    [{ '@value': '2020-01-02' }, Date.UTC(2020, 0, 2)],
    [Date.UTC(2020, 0, 2), Date.UTC(2020, 0, 2)],
  ] as [unknown, number][])('%j', (input, expected) => {
    expect(dateFromMeta(input)).toBe(expected);
  });

  it.each([['2021-02-29'], ['2021-13-01'], ['2021-00-10'], ['0999'], ['21-03-2021'], ['March 15, 2021'], ['2021-03-15T25:00'], ['2021-03-15T10:00+15:00'], ['2021-03/15'], [''], ['   '], [null], [{}], [Number.NaN], [1e20], ['2'.repeat(50)]])('%j is null', (input) => {
    expect(dateFromMeta(input)).toBeNull();
  });
});

describe('normaliseDoi', () => {
  it.each([
    ['10.1038/nphys1170', '10.1038/nphys1170'],
    ['https://doi.org/10.1038/nphys1170', '10.1038/nphys1170'],
    ['http://dx.doi.org/10.1000/xyz123', '10.1000/xyz123'],
    ['doi:10.1000/xyz123', '10.1000/xyz123'],
    ['DOI: 10.1000/xyz123.', '10.1000/xyz123'],
    ['https://doi.org/10.1002%2F%28SICI%291097-4636', '10.1002/(SICI)1097-4636'],
    ['10.1000/abc(def)', '10.1000/abc(def)'],
    ['10.1000/abc)', '10.1000/abc'],
    ['10.1000.10/sub.reg', '10.1000.10/sub.reg'],
  ])('%s -> %s', (input, expected) => {
    expect(normaliseDoi(input)).toBe(expected);
  });

  it.each([['10.12/x'], ['11.1000/x'], ['10.1000/'], ['10.1000/a b'], ['10.1000/"x"'], ['10.1000/<x>'], ['https://doi.org/%E0%A4%A'], [`10.1000/${'x'.repeat(300)}`], [''], [null], [42]])('%j is refused', (input) => {
    expect(normaliseDoi(input)).toBeNull();
  });
});

describe('splitAuthors', () => {
  it.each([
    ['Jane Doe and John Roe', ['Jane Doe', 'John Roe']],
    ['Jane Doe & John Roe', ['Jane Doe', 'John Roe']],
    ['Smith, John; Doe, Jane', ['Smith, John', 'Doe, Jane']],
    ['Smith, John', ['Smith, John']],
    ['Acme, Inc.', ['Acme, Inc.']],
    ['Jane Doe, John Roe, Kim Park', ['Jane Doe', 'John Roe', 'Kim Park']],
    ['', []],
  ])('%s', (input, expected) => {
    expect(splitAuthors(input)).toEqual(expected);
  });
});
