import { describe, expect, it } from 'vitest';
import { textContentExtractor } from '../../plugins/extractors/text-content.js';
import { page } from './support.js';

const text = (html: string): string => textContentExtractor.extract(page(html), {}) as string;

describe('text_content', () => {
  it.each([
    ['paragraphs become blank-line separated', '<p>One</p><p>Two</p>', 'One\n\nTwo'],
    ['divs and list items become lines', '<div>a</div><div>b</div><ul><li>c</li><li>d</li></ul>', 'a\nb\n\nc\nd'],
    ['br is a line break', '<p>line one<br>line two</p>', 'line one\nline two'],
    ['inline whitespace collapses', '<p>  many\n\n   spaces\there  </p>', 'many spaces here'],
    ['inline elements stay inline', '<p>a <b>bold</b> and <a href="#">link</a>.</p>', 'a bold and link.'],
    ['entities are decoded', '<p>Fish &amp; chips &lt;3 &eacute;t&eacute; &#8364;</p>', 'Fish & chips <3 été €'],
    ['script, style, noscript, template, svg are excluded', '<p>a</p><script>var x = "<p>no</p>";</script><style>p{}</style><noscript>no</noscript><template><p>no</p></template><svg><text>no</text></svg><p>b</p>', 'a\n\nb'],
    ['head is excluded', '<html><head><title>T</title><meta name="x" content="y"></head><body><p>body</p></body></html>', 'body'],
    ['hidden elements are excluded', '<p>shown</p><p hidden>no</p><div style="display: none">no</div>', 'shown'],
    ['pre keeps its whitespace', '<p>x</p><pre>  a\n    b</pre>', 'x\n\n  a\n    b'],
    ['at most one blank line in a row', '<p>a</p><br><br><br><br><p></p><div></div><p>b</p>', 'a\n\nb'],
    ['table cells are tab separated, rows are lines', '<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>', 'A\tB\n1\t2'],
    ['headings are their own paragraphs', '<h1>Title</h1>text<h2>Sub</h2>more', 'Title\n\ntext\n\nSub\n\nmore'],
    ['empty page', '', ''],
  ])('%s', (_name, html, expected) => {
    expect(text(html)).toBe(expected);
  });

  it('applies to HTML content types only', () => {
    expect(textContentExtractor.filter?.contentTypes).toEqual(['text/html', 'application/xhtml+xml']);
    expect(textContentExtractor.builtin).toBe(true);
    expect(textContentExtractor.kind).toBe('extractor');
  });
});
