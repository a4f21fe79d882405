import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { builtinExtractors } from '../../plugins/extractors/index.js';
import { page } from './support.js';

const N = 100_000;

const HOSTILE: readonly [string, () => string][] = [
  ['an empty string', () => ''],
  ['binary junk', () => randomBytes(200_000).toString('latin1')],
  ['100k nested divs', () => '<div>'.repeat(N) + 'deep text' + '</div>'.repeat(N)],
  ['100k unclosed divs and paragraphs', () => '<div><p>x'.repeat(N)],
  ['100k nested links', () => '<a href="/x">'.repeat(N) + 'text'],
  ['100k nested lists', () => '<ul><li>'.repeat(N) + 'x'],
  ['100k nested blockquotes', () => '<blockquote>'.repeat(N) + 'x'],
  ['20k nested tables', () => '<table><tr><td>'.repeat(20_000) + 'x'],
  ['100k nested microdata items', () => '<div itemscope itemprop="a">'.repeat(N) + 'x'],
  ['100k nested microdata properties', () => '<div itemscope>' + '<div itemprop="b">'.repeat(N) + 'x'],
  ['100k nested RDFa items', () => '<div vocab="http://schema.org/" typeof="T" property="p">'.repeat(N) + 'x'],
  ['100k nested svg', () => '<svg>'.repeat(N) + 'x'],
  ['deeply nested JSON-LD', () => `<script type="application/ld+json">${'['.repeat(N)}${']'.repeat(N)}</script><script type="application/ld+json">${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}</script>`],
  [
    'huge attribute values',
    () =>
      `<img src="${'a'.repeat(5_000_000)}" srcset="${'b.jpg 1x, '.repeat(200_000)}" alt="${'c'.repeat(1_000_000)}"><a href="${'spacer'.repeat(500_000)}">x</a>` +
      `<meta property="og:image" content="${'x'.repeat(1_000_000)}"><div class="${'comment '.repeat(200_000)}" style="${'display:'.repeat(100_000)}">t</div>`,
  ],
  ['a pre of 100k newlines and backticks', () => '<pre>' + '\n'.repeat(N) + '```' + '</pre>'],
  ['100k links in one paragraph', () => '<p>' + '<a href="/a">l</a> '.repeat(N) + '</p>'],
];

describe('extractors on hostile input', () => {
  it.each(HOSTILE)('never throw and stay fast on %s', (_name, make) => {
    const p = page(make());
    for (const extractor of builtinExtractors) {
      const t0 = performance.now();
      const result = extractor.extract(p, {});
      // The result must also serialise (no cycles, no stack overflow).
      expect(() => JSON.stringify(result)).not.toThrow();
      expect(performance.now() - t0, extractor.id).toBeLessThan(10_000);
    }
  }, 120_000);
});

describe('builtinExtractors', () => {
  it('has one built-in HTML extractor per output field, with distinct names', () => {
    expect(builtinExtractors.map((e) => e.id)).toEqual(['text_content', 'links', 'images', 'schema_data', 'meta_data', 'main_content', 'markdown', 'contacts', 'social', 'fields']);
    expect(new Set(builtinExtractors.map((e) => e.name)).size).toBe(builtinExtractors.length);
    for (const e of builtinExtractors) {
      expect(e).toMatchObject({ kind: 'extractor', builtin: true, filter: { contentTypes: ['text/html', 'application/xhtml+xml'] } });
    }
  });
});
