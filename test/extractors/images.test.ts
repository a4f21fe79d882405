import { describe, expect, it } from 'vitest';
import { imagesExtractor, parseSrcset, type Image } from '../../plugins/extractors/images.js';
import { page } from './support.js';

const images = (html: string): Image[] => imagesExtractor.extract(page(html, 'https://example.com/a/page'), {}) as Image[];
const srcs = (html: string): string[] => images(html).map((i) => i.src);
const PIXEL = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

describe('images', () => {
  it.each([
    ['relative src', '<img src="i.png">', ['https://example.com/a/i.png']],
    ['against <base href>', '<base href="https://cdn.test/x/"><img src="i.png">', ['https://cdn.test/x/i.png']],
    ['data-src when src is a data: placeholder', `<img src="${PIXEL}" data-src="/real.jpg">`, ['https://example.com/real.jpg']],
    ['data-lazy-src when src is missing', '<img data-lazy-src="real.jpg">', ['https://example.com/a/real.jpg']],
    ['data-original when src is a spacer file', '<img src="/img/blank.gif" data-original="real.jpg">', ['https://example.com/a/real.jpg']],
    ['a real src wins over data-src', '<img src="real.jpg" data-src="other.jpg">', ['https://example.com/a/real.jpg']],
    ['the largest srcset candidate (w) when src is missing', '<img srcset="s.jpg 480w, xl.jpg 1600w, m.jpg 800w">', ['https://example.com/a/xl.jpg']],
    ['the largest density (x)', '<img src="" srcset="a.jpg, b.jpg 3x, c.jpg 2x">', ['https://example.com/a/b.jpg']],
    ['data-srcset', `<img src="${PIXEL}" data-srcset="s.jpg 100w, l.jpg 200w">`, ['https://example.com/a/l.jpg']],
    ['<picture><source srcset> when the img has no src', '<picture><source srcset="p.webp 1x, p2.webp 2x" type="image/webp"><img alt="x"></picture>', ['https://example.com/a/p2.webp']],
    ['placeholder-only images are dropped', `<img src="${PIXEL}"><img src="/spacer.gif"><img src="t.gif" width="1" height="1"><img>`, []],
    ['a long data: URI is a real image', `<img src="data:image/png;base64,${'A'.repeat(2000)}">`, [`data:image/png;base64,${'A'.repeat(2000)}`]],
    ['a noscript fallback duplicating a lazy image is dropped', `<img src="${PIXEL}" data-src="/r.jpg"><noscript><img src="/r.jpg"></noscript>`, ['https://example.com/r.jpg']],
    ['a noscript-only image is kept', `<noscript><img src="/only.jpg"></noscript>`, ['https://example.com/only.jpg']],
  ])('%s', (_name, html, expected) => {
    expect(srcs(html)).toEqual(expected);
  });

  it('gives alt, width, height and the parsed srcset', () => {
    expect(images('<img src="a.jpg" alt=" A cat " width="300" height="200px" srcset="a.jpg 1x, a2.jpg 2x">')).toEqual([
      {
        src: 'https://example.com/a/a.jpg',
        alt: ' A cat ',
        width: 300,
        height: 200,
        srcset: [
          { url: 'https://example.com/a/a.jpg', descriptor: '1x' },
          { url: 'https://example.com/a/a2.jpg', descriptor: '2x' },
        ],
      },
    ]);
    expect(images('<img src="a.jpg" width="100%" height="auto">')[0]).toMatchObject({ alt: null, width: null, height: null, srcset: [] });
    expect(images('<img src="a.jpg" alt="">')[0]!.alt).toBe('');
  });

  it('parses srcset leniently', () => {
    expect(parseSrcset(' a.jpg 1x ,b.jpg   2x,c.jpg,, d.jpg 640w ', 'https://x.test/')).toEqual([
      { url: 'https://x.test/a.jpg', descriptor: '1x' },
      { url: 'https://x.test/b.jpg', descriptor: '2x' },
      { url: 'https://x.test/c.jpg', descriptor: null },
      { url: 'https://x.test/d.jpg', descriptor: '640w' },
    ]);
    expect(parseSrcset('', 'https://x.test/')).toEqual([]);
  });
});
