import { describe, expect, it } from 'vitest';
import { markdownExtractor } from '../../plugins/extractors/markdown.js';
import { page } from './support.js';

const md = (html: string): string => markdownExtractor.extract(page(html, 'https://example.com/a/'), {}) as string;

const LONG = 'A long enough sentence, with commas, so that this paragraph is taken for article text by the extractor.';

/** An article around the fragment, so main_content picks it. */
const article = (inner: string): string =>
  `<html><body><nav><a href="/">Home</a></nav><article><p>${LONG}</p>${inner}<p>${LONG}</p></article><footer>Footer</footer></body></html>`;

/** The markdown between the two filler paragraphs. */
const inner = (inner: string): string => {
  const out = md(article(inner));
  const escaped = LONG;
  expect(out.startsWith(escaped)).toBe(true);
  expect(out.endsWith(escaped)).toBe(true);
  return out.slice(escaped.length, out.length - escaped.length).trim();
};

describe('markdown', () => {
  it.each([
    ['headings', '<h2>Section</h2><h3>Sub <em>section</em></h3>', '## Section\n\n### Sub *section*'],
    ['emphasis, strong, strikethrough', '<p>a <em>b</em> <strong>c</strong> <del>d</del> <b> e </b></p>', 'a *b* **c** ~~d~~ **e**'],
    ['links, absolute', '<p>For the details, see <a href="../x.html">the page</a> or send a <a href="mailto:a@b.test">mail</a> to us.</p>', 'For the details, see [the page](https://example.com/x.html) or send a [mail](mailto:a@b.test) to us.'],
    ['empty link and emphasis dropped', '<p>x <a href="/e"></a><b></b> y</p>', 'x y'],
    ['unordered list', '<ul><li>one</li><li>two</li></ul>', '- one\n- two'],
    ['ordered list with start', '<ol start="3"><li>three</li><li>four</li></ol>', '3. three\n4. four'],
    ['nested list', '<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>', '- a\n  - b\n- c'],
    ['blockquote', '<blockquote><p>q1</p><p>q2</p></blockquote>', '> q1\n>\n> q2'],
    ['inline code', '<p>use <code>npm  run</code> or <code>`x`</code> now</p>', 'use `npm run` or `` `x` `` now'],
    ['fenced code with language', '<pre><code class="language-js">let a = 1;\n\nif (a) {}</code></pre>', '```js\nlet a = 1;\n\nif (a) {}\n```'],
    ['image', '<p><img src="i.png" alt="An [image]"></p>', '![An \\[image\\]](https://example.com/a/i.png)'],
    ['line break', '<p>one<br>two</p>', 'one  \ntwo'],
    ['horizontal rule', '<hr>', '---'],
    [
      'simple table',
      '<table><tr><th>Country</th><th>Capital</th></tr><tr><td>France</td><td>Paris|Lyon</td></tr><tr><td>Spain</td></tr></table>',
      '| Country | Capital |\n| --- | --- |\n| France | Paris\\|Lyon |\n| Spain |  |',
    ],
    ['escaping', '<p>*not emphasis* and _this_ [x]</p>', '\\*not emphasis\\* and \\_this\\_ \\[x\\]'],
    ['line-start markers escaped', '<p># not a heading</p><p>1. not a list</p><p>- nor this</p><p>> nor a quote, but 5 > 3 | 4</p>', '\\# not a heading\n\n1\\. not a list\n\n\\- nor this\n\n\\> nor a quote, but 5 > 3 | 4'],
  ])('%s', (_name, html, expected) => {
    expect(inner(html)).toBe(expected);
  });

  it('renders a layout table as blocks', () => {
    const out = inner('<table><tr><td><p>cell paragraph one</p></td><td><p>cell paragraph two</p></td></tr></table>');
    expect(out).not.toContain('|');
    expect(out).toContain('cell paragraph one');
  });

  it('leads with the headline, at its level on the page', () => {
    const html = `<html><head><title>Storm warning | Weather</title></head><body><nav><a href="/">Home</a></nav>
      <div class="post"><h2 class="post-title">Storm <em>warning</em></h2><div class="post-body"><p>${LONG}</p><h3>Where</h3><p>${LONG}</p></div></div></body></html>`;
    expect(md(html)).toBe(`## Storm warning\n\n${LONG}\n\n### Where\n\n${LONG}`);
  });

  it('writes a link around blocks (a card) as its heading linked', () => {
    const card = (n: number): string => `<li><a href="/p/${n}"><img src="/i${n}.png" alt="Lamp ${n}"><h3>Arc lamp ${n}</h3></a>$${n}9</li>`;
    expect(md(`<html><body><nav><a href="/">Home</a></nav><main><ul>${card(1)}${card(2)}</ul></main></body></html>`)).toBe(
      '- ![Lamp 1](https://example.com/i1.png)\n\n  ### [Arc lamp 1](https://example.com/p/1)\n\n  $19\n- ![Lamp 2](https://example.com/i2.png)\n\n  ### [Arc lamp 2](https://example.com/p/2)\n\n  $29',
    );
  });

  it('leaves the page chrome out (main content only)', () => {
    const out = md(article('<p>middle</p>'));
    expect(out).not.toContain('Home');
    expect(out).not.toContain('Footer');
  });

  it('falls back to the whole body when there is no main content', () => {
    expect(md('<html><body><h1>Just</h1><p>a <a href="/l">link</a></p><script>x()</script></body></html>')).toBe('# Just\n\na [link](https://example.com/l)');
    expect(md('')).toBe('');
  });
});
