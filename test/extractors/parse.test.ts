import { describe, expect, it } from 'vitest';
import { parseDocument } from 'htmlparser2';
import render from 'dom-serializer';
import type { Element, Text } from 'domhandler';
import { parseHtml, parsePage } from '../../plugins/sdk/parse.js';

const OPTIONS = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true };

describe('parsePage', () => {
  it.each([
    ['implied closes', '<p>a<p>b<div>c</p></span></div><ul><li>x<li>y</ul>'],
    ['foreign content', '<svg><foreignObject><p>x</p></foreignObject><path/></svg><math><mi/></math><br/>'],
    ['tables', '<table><tr><td>1<td>2</table>'],
    ['stray closes', '</div></p><br></br><a><b><i>x</a>y</b>'],
    ['entities and case', '<DIV CLASS="X">&amp; &lt;&eacute;&#x41;</DIV><SCRIPT>if (a < b) {}</SCRIPT>'],
    ['unclosed', '<html><body><div><span>text'],
  ])('builds the same tree as htmlparser2 parseDocument (%s)', (_name, html) => {
    expect(render(parseHtml(html))).toBe(render(parseDocument(html, OPTIONS)));
  });

  it('keeps the page fields and decodes entities, lower-casing names', () => {
    const p = parsePage({ url: 'https://a.test/', finalUrl: '', statusCode: 404, contentType: 'text/html', html: '<P ID="X">&copy;</P>' });
    expect(p.finalUrl).toBe('https://a.test/');
    expect(p.statusCode).toBe(404);
    const el = p.document.children[0] as Element;
    expect([el.name, el.attribs.id, (el.children[0] as Text).data]).toEqual(['p', 'X', '©']);
  });

  it('parses 100k nested elements in linear time', () => {
    const n = 100_000;
    const t0 = performance.now();
    const doc = parseHtml('<div>'.repeat(n) + 'x' + '</span>'.repeat(1000) + '</div>'.repeat(n));
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(doc.children.length).toBe(1);
  });
});
