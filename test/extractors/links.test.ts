import { describe, expect, it } from 'vitest';
import { linksExtractor, type Link } from '../../plugins/extractors/links.js';
import { page } from './support.js';

const links = (html: string, url = 'https://example.com/dir/page.html'): Link[] => linksExtractor.extract(page(html, url), {}) as Link[];

describe('links', () => {
  it.each([
    ['relative to the final URL', '<a href="other.html">x</a>', 'https://example.com/dir/other.html'],
    ['root-relative', '<a href="/top">x</a>', 'https://example.com/top'],
    ['protocol-relative', '<a href="//cdn.example.org/a">x</a>', 'https://cdn.example.org/a'],
    ['absolute stays', '<a href="http://other.test/p?q=1#f">x</a>', 'http://other.test/p?q=1#f'],
    ['against <base href>', '<head><base href="https://base.test/b/"></head><a href="c">x</a>', 'https://base.test/b/c'],
    ['against a relative <base href>', '<base href="/sub/"><a href="c">x</a>', 'https://example.com/sub/c'],
    ['fragments are made absolute', '<a href="#part">x</a>', 'https://example.com/dir/page.html#part'],
    ['mailto as written', '<a href=" mailto:Someone@Example.com?subject=Hi ">x</a>', 'mailto:Someone@Example.com?subject=Hi'],
    ['tel as written', '<a href="tel:+1-555-0100">x</a>', 'tel:+1-555-0100'],
    ['entities in href decoded', '<a href="/s?a=1&amp;b=2">x</a>', 'https://example.com/s?a=1&b=2'],
  ])('resolves %s', (_name, html, expected) => {
    expect(links(html).map((l) => l.url)).toEqual([expected]);
  });

  it.each([
    ['javascript:', '<a href="javascript:void(0)">x</a>'],
    ['javascript: with tabs and case', '<a href="  JaVa\tScript:alert(1)">x</a>'],
    ['data:', '<a href="data:text/html,hi">x</a>'],
    ['bare #', '<a href="#">x</a>'],
    ['empty href', '<a href="">x</a>'],
    ['no href', '<a name="anchor">x</a>'],
    ['inside template', '<template><a href="/t">x</a></template>'],
  ])('drops %s', (_name, html) => {
    expect(links(html)).toEqual([]);
  });

  it('gives text, rel and target; keeps order and duplicates', () => {
    expect(
      links(`<p><a href="/a" rel=" nofollow noopener " target="_blank">  The
       <b>first</b>  link </a> <a href="/b">second</a> <a href="/a">first again</a>
       <a href="/img"><img src="i.png" alt="An image"></a> <a href="/label" aria-label="Labelled"></a>
       <map><area href="/area" alt="Area"></map></p>`),
    ).toEqual([
      { url: 'https://example.com/a', text: 'The first link', rel: 'nofollow noopener', target: '_blank' },
      { url: 'https://example.com/b', text: 'second', rel: null, target: null },
      { url: 'https://example.com/a', text: 'first again', rel: null, target: null },
      { url: 'https://example.com/img', text: 'An image', rel: null, target: null },
      { url: 'https://example.com/label', text: 'Labelled', rel: null, target: null },
      { url: 'https://example.com/area', text: 'Area', rel: null, target: null },
    ]);
  });

  it('separates words across blocks inside a link and leaves scripts out of its text', () => {
    expect(links('<a href="/c"><div>Card</div><div>title</div><script>x()</script></a>')[0]!.text).toBe('Card title');
  });

  it('gives a nested link its own text (browsers never nest links)', () => {
    expect(links('<a href="/out">outer <a href="/in">inner</a> tail</a>').map((l) => [l.url, l.text])).toEqual([
      ['https://example.com/out', 'outer tail'],
      ['https://example.com/in', 'inner'],
    ]);
  });
});
