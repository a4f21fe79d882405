import { describe, expect, it } from 'vitest';
import { mainContent, mainContentExtractor } from '../../plugins/extractors/main-content.js';
import { parsePage } from '../../plugins/sdk/parse.js';
import { scoreOne } from '../../benchmarks/extract/score.mjs';
import { benchmarkPage, hasBenchmark, page } from './support.js';

const main = (html: string): string => mainContentExtractor.extract(page(html), {}) as string;

const para = (n: number, word = 'article'): string =>
  `<p>This is ${word} paragraph number ${n}, which talks at length about the subject, with commas, detail, and more detail for the reader to enjoy.</p>`;

const ARTICLE = [1, 2, 3, 4, 5].map((n) => para(n)).join('\n');

const layout = (content: string, extra = ''): string => `<!doctype html><html><head><title>The Headline - Example News</title></head><body>
  <header class="site-header"><nav><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a></nav></header>
  <div class="page">
    <div class="sidebar"><h3>Most popular</h3><ul><li><a href="/1">Other story one with a long title</a></li><li><a href="/2">Other story two with a long title</a></li></ul></div>
    <main>${content}</main>
    ${extra}
  </div>
  <footer class="site-footer"><p>Copyright Example News. All rights reserved, everywhere, forever, and so on.</p></footer>
</body></html>`;

describe('main_content', () => {
  it('finds the article, led by its headline, and leaves navigation, sidebar and footer out', () => {
    const paragraphs = [1, 2, 3, 4, 5].map((n) => `This is article paragraph number ${n}, which talks at length about the subject, with commas, detail, and more detail for the reader to enjoy.`).join('\n\n');
    const p = page(layout(`<article><h1>The Headline</h1>${ARTICLE}</article>`));
    expect(mainContentExtractor.extract(p, {})).toBe(`The Headline\n\n${paragraphs}`);
    expect(mainContent(p)).toMatchObject({ headline: 'The Headline', headlineLevel: 1, articleBody: paragraphs });
  });

  it('keeps figure captions in main_content, and leaves them and the headline out of articleBody', () => {
    const figure = '<figure><img src="a.jpg"><figcaption>A caption under the picture</figcaption></figure>';
    const p = page(layout(`<article><h1>The Headline</h1>${para(1)}${figure}${para(2)}${para(3)}</article>`));
    const { text, articleBody } = mainContent(p);
    expect(text.startsWith('The Headline\n\nThis is article paragraph number 1')).toBe(true);
    expect(text).toContain('number 1, which talks at length about the subject, with commas, detail, and more detail for the reader to enjoy.\n\nA caption under the picture\n\nThis is article paragraph number 2');
    expect(articleBody).not.toContain('Headline');
    expect(articleBody).not.toContain('caption');
    expect(articleBody).toContain('paragraph number 3');
  });

  it('takes the headline from before the article body when it is not inside it, and never a logo', () => {
    const html = `<html><head><title>Rain expected all week - Weather Desk</title></head><body>
      <div class="masthead"><h1><a href="/">Weather Desk</a></h1></div>
      <div class="title-wrap"><h2>Rain expected all week</h2></div>
      <div class="story-body">${para(1)}${para(2)}${para(3)}</div></body></html>`;
    const mc = mainContent(page(html));
    expect(mc.headline).toBe('Rain expected all week');
    expect(mc.headlineLevel).toBe(2);
    expect(mc.text.startsWith('Rain expected all week\n\nThis is article paragraph number 1')).toBe(true);
    expect(mc.text).not.toContain('Weather Desk');
  });

  it.each([
    ['bylines', '<div class="byline">By Jane Reporter, staff writer</div>', 'Jane'],
    ['share bars', '<div class="share-buttons"><a href="/s">Share on Facebook</a> <a href="/t">Tweet this</a></div>', 'Share'],
    ['related-links blocks', '<div class="related-stories"><a href="/r1">A related story with a long title</a><a href="/r2">Another related story</a></div>', 'related'],
    ['comments', '<div id="comments"><p>First comment, I totally disagree with everything, sorry.</p></div>', 'comment'],
    ['scripts and styles', '<script>var notText = 1;</script><style>.x { color: red }</style>', 'notText'],
    ['hidden elements', '<p class="sr-only">Screen reader only text here</p><p hidden>Hidden text</p>', 'Screen reader'],
    ['a link-only paragraph', '<p><a href="/more">Read more: another story entirely about something else</a></p>', 'Read more'],
    ['a short link standing alone', '<a href="/next">Continue reading</a>', 'Continue'],
    ['a cookie banner', '<div class="cookie-notice"><p>We use cookies, lots of them, to track you across the web, sorry about that.</p></div>', 'cookies'],
  ])('prunes %s inside the article', (_name, boilerplate, word) => {
    const text = main(layout(`<article><h1>The Headline</h1>${para(1)}${boilerplate}${para(2)}${para(3)}</article>`));
    expect(text).toContain('paragraph number 3');
    expect(text).not.toContain(word);
  });

  it('keeps headings, lists, quotes and code inside the article, as blocks', () => {
    const text = main(layout(`<article>${para(1)}<h2>A section heading</h2>${para(2)}
      <ul><li>first point</li><li>second point</li></ul><blockquote><p>A quoted statement, said by someone important.</p></blockquote>
      <pre>code  block</pre>${para(3)}</article>`));
    expect(text).toContain('\n\nA section heading\n\n');
    expect(text).toContain('first point\nsecond point');
    expect(text).toContain('A quoted statement, said by someone important.');
    expect(text).toContain('code  block');
  });

  it('merges sibling blocks that continue the article', () => {
    const text = main(layout(`<div class="story-body">${para(1)}${para(2)}${para(3)}</div><div class="story-body">${para(4)}${para(5)}</div>`));
    expect(text).toContain('number 1');
    expect(text).toContain('number 5');
  });

  it('prefers the long article to a listing of short teasers', () => {
    const teasers = [1, 2, 3, 4].map((n) => `<div class="teaser"><p><a href="/t${n}">Teaser ${n}, a short, linked, title</a></p></div>`).join('');
    const text = main(layout(`<div class="post-content">${ARTICLE}</div>`, `<div class="more">${teasers}</div>`));
    expect(text).toContain('number 5');
    expect(text).not.toContain('Teaser');
  });

  it('uses a JSON-LD articleBody when the page itself holds no article', () => {
    const html = `<html><head><script type="application/ld+json">{"@type":"NewsArticle","articleBody":"First paragraph of the story.\\nSecond <b>paragraph</b> of it."}</script></head><body><div id="app"></div></body></html>`;
    const p = page(html);
    expect(mainContent(p)).toMatchObject({ source: 'json-ld', text: 'First paragraph of the story.\n\nSecond paragraph of it.' });
  });

  it('drops a heading whose section was all pruned (a list of links at the end)', () => {
    const links = '<h3>More on this</h3><ul><li><a href="/x">One story</a></li><li><a href="/y">Another story</a></li></ul>';
    const text = main(layout(`<article><h1>The Headline</h1>${para(1)}${para(2)}<h3>A real section</h3>${para(3)}${links}</article>`));
    expect(text).toContain('A real section');
    expect(text).toContain('number 3');
    expect(text).not.toContain('More on this');
    expect(text).not.toContain('story');
  });

  it('finds short pages: blocks under 25 characters, text straight in the body', () => {
    expect(main('<html><body><nav><a href="/">Home</a></nav><main><h1>Done</h1><p>It worked.</p><p>Thanks!</p></main><footer>Footer</footer></body></html>')).toBe('Done\n\nIt worked.\n\nThanks!');
    expect(main('<html><body>Just some text.</body></html>')).toBe('Just some text.');
  });

  it('gives "" for a page without text', () => {
    expect(main('')).toBe('');
    expect(main('<html><body><img src="a.png"></body></html>')).toBe('');
  });

  it('computes once per parsed page and does not change the tree', () => {
    const p = page(layout(`<article>${ARTICLE}</article>`));
    const before = JSON.stringify(p.document.children.length);
    expect(mainContent(p)).toBe(mainContent(p));
    expect(JSON.stringify(p.document.children.length)).toBe(before);
  });
});

// Real pages of the Zyte article-extraction benchmark (read from ../shared/data at test time).
const REAL_PAGES = [
  '042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856', // wsj.com
  '264dc3ae31249cb1f50c50986e0952a4708c2e705d18a2d8bf0e525da6e2b485', // twincities.com
  '3d8f3404cf975af824d7866b7679bc45189c3eea6adb32f0a125a0904b1abbb2', // indiewire.com
  '87438a0dacbeb979e72522f42b9020048da13dc5a079477114190c8855701b7f', // oregonlive.com
  'a1fca19b884e0e946ad3fbe2a7f5031e5e3b23372702a76db302b6143c77cb31', // nypost.com
  'd48aeb9cf2f2ff15769a57513249b4a6a669159f3e50b335e741d4206a824e88', // wired.com
];

describe('main_content on real pages (benchmark ground truth)', () => {
  it.each(REAL_PAGES)('reaches shingle F1 >= 0.9 on %s', (id) => {
    const { html, url, truth } = benchmarkPage(id);
    const p = parsePage({ url, finalUrl: url, statusCode: 200, contentType: 'text/html', html });
    const score = scoreOne(truth, mainContentExtractor.extract(p, {}) as string);
    expect(score.f1).toBeGreaterThanOrEqual(0.9);
  });
});
