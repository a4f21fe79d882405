import { describe, expect, it } from 'vitest';
import { schemaDataExtractor, type SchemaItem } from '../../plugins/extractors/schema-data.js';
import { page } from './support.js';

const schema = (html: string): SchemaItem[] => schemaDataExtractor.extract(page(html, 'https://example.com/p/'), {}) as SchemaItem[];
const ld = (json: string, type = 'application/ld+json'): string => `<script type="${type}">${json}</script>`;

describe('schema_data: JSON-LD', () => {
  it.each([
    ['one object', ld('{"@context":"https://schema.org","@type":"Article","headline":"H"}'), [{ format: 'json-ld', '@context': 'https://schema.org', '@type': 'Article', headline: 'H' }]],
    ['a top-level array, flattened', ld('[{"@type":"A"},{"@type":"B"}]'), [{ format: 'json-ld', '@type': 'A' }, { format: 'json-ld', '@type': 'B' }]],
    [
      '@graph, flattened, items inheriting @context',
      ld('{"@context":"https://schema.org","@graph":[{"@type":"WebPage"},{"@context":"x","@type":"Person"}]}'),
      [
        { format: 'json-ld', '@context': 'https://schema.org', '@type': 'WebPage' },
        { format: 'json-ld', '@context': 'x', '@type': 'Person' },
      ],
    ],
    ['type with parameters and case', ld('{"@type":"T"}', 'Application/LD+JSON; charset=utf-8'), [{ format: 'json-ld', '@type': 'T' }]],
    ['HTML comment and CDATA wrappers, trailing ;', ld('<!-- //<![CDATA[\n{"@type":"T"};\n//]]> -->'), [{ format: 'json-ld', '@type': 'T' }]],
    ['raw newlines in strings and trailing commas repaired', ld('{"@type":"T","d":"line\none\tx","l":[1,2,],}'), [{ format: 'json-ld', '@type': 'T', d: 'line\none\tx', l: [1, 2] }]],
    ['several scripts in order', ld('{"@type":"A"}') + ld('{"@type":"B"}'), [{ format: 'json-ld', '@type': 'A' }, { format: 'json-ld', '@type': 'B' }]],
    ['empty script ignored', ld('  '), []],
    ['other script types ignored', ld('{"@type":"A"}', 'text/javascript'), []],
  ])('%s', (_name, html, expected) => {
    expect(schema(html)).toEqual(expected);
  });

  it('reports broken JSON-LD as an item with an error', () => {
    const items = schema(ld('{"@type": "Article", "headline": ') + ld('{"@type":"Ok"}'));
    expect(items).toHaveLength(2);
    expect(items[0]).toMatchObject({ format: 'json-ld', error: expect.stringMatching(/^invalid JSON/) });
    expect(items[1]).toEqual({ format: 'json-ld', '@type': 'Ok' });
  });

  it('refuses nesting deeper than 64 levels', () => {
    expect(schema(ld('['.repeat(100) + ']'.repeat(100)))[0]).toMatchObject({ error: expect.stringMatching(/nested deeper/) });
  });

  it('keeps "__proto__" a plain key', () => {
    const [item] = schema(ld('{"__proto__":{"polluted":1},"@type":"T"}'));
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(Object.keys(item!)).toEqual(['format', '__proto__', '@type']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('schema_data: Microdata', () => {
  it('reads items, nested items, typed values and itemref', () => {
    const html = `
      <div itemscope itemtype="https://schema.org/Product" itemid="urn:isbn:1" itemref="extra">
        <h1 itemprop="name">  Super
           Widget </h1>
        <img itemprop="image" src="/w.jpg">
        <a itemprop="url" href="w.html">page</a>
        <meta itemprop="sku" content="W-1">
        <time itemprop="releaseDate" datetime="2020-01-02">Jan 2</time>
        <data itemprop="gtin" value="123">one two three</data>
        <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
          <span itemprop="price">9.99</span><span itemprop="priceCurrency">EUR</span>
        </div>
        <span itemprop="color material">red</span>
      </div>
      <p id="extra" itemprop="description">From itemref</p>`;
    expect(schema(html)).toEqual([
      {
        format: 'microdata',
        type: ['https://schema.org/Product'],
        id: 'urn:isbn:1',
        properties: {
          name: ['Super Widget'],
          image: ['https://example.com/w.jpg'],
          url: ['https://example.com/p/w.html'],
          sku: ['W-1'],
          releaseDate: ['2020-01-02'],
          gtin: ['123'],
          offers: [{ type: ['https://schema.org/Offer'], properties: { price: ['9.99'], priceCurrency: ['EUR'] } }],
          color: ['red'],
          material: ['red'],
          description: ['From itemref'],
        },
      },
    ]);
  });

  it('lists every top-level item; a typeless item has an empty type', () => {
    expect(schema('<div itemscope><span itemprop="a">1</span></div><div itemscope itemtype="T U"></div>')).toEqual([
      { format: 'microdata', type: [], properties: { a: ['1'] } },
      { format: 'microdata', type: ['T', 'U'], properties: {} },
    ]);
  });

  it('ignores itemref cycles', () => {
    const items = schema('<div itemscope id="a" itemref="b"><div id="b" itemprop="self" itemscope itemref="a"><span itemprop="x">1</span></div></div>');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ format: 'microdata' });
  });
});

describe('schema_data: RDFa Lite', () => {
  it('reads typeof/property/resource with vocab, nested items and prefixes', () => {
    const html = `
      <div vocab="https://schema.org/" typeof="Person" resource="#me">
        <span property="name">Alice</span>
        <a property="url" href="/alice">home</a>
        <meta property="jobTitle" content="Engineer">
        <div property="address" typeof="PostalAddress"><span property="addressLocality">Paris</span></div>
      </div>
      <div prefix="ex: http://ex.test/ns#" typeof="ex:Thing"><span property="ex:label">L</span></div>`;
    expect(schema(html)).toEqual([
      {
        format: 'rdfa',
        type: ['https://schema.org/Person'],
        id: 'https://example.com/p/#me',
        vocab: 'https://schema.org/',
        properties: {
          name: ['Alice'],
          url: ['https://example.com/alice'],
          jobTitle: ['Engineer'],
          address: [{ type: ['https://schema.org/PostalAddress'], vocab: 'https://schema.org/', properties: { addressLocality: ['Paris'] } }],
        },
      },
      { format: 'rdfa', type: ['http://ex.test/ns#Thing'], properties: { 'ex:label': ['L'] } },
    ]);
  });

  it('leaves properties outside any typeof (Open Graph meta) to meta_data', () => {
    expect(schema('<head><meta property="og:title" content="T"></head>')).toEqual([]);
  });
});

describe('schema_data: all formats together', () => {
  it('lists JSON-LD, then Microdata, then RDFa', () => {
    const items = schema(ld('{"@type":"A"}') + '<div itemscope itemtype="B"></div><div vocab="V/" typeof="C"></div>');
    expect(items.map((i) => i.format)).toEqual(['json-ld', 'microdata', 'rdfa']);
  });
});
