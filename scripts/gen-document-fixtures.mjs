#!/usr/bin/env node
/**
 * The test documents of test/fixtures/documents/, with their known text:
 * PDFs (one page, many pages with running headers and footers, two
 * columns, a table and lists, a scanned page with no text, an encrypted one,
 * a broken one), DOCX (headings, lists, a table, a link) and feeds (RSS 2.0,
 * Atom, JSON Feed). Each document `<name>.<ext>` has `<name>.expected.txt`:
 * the words its main text must hold (word-level recall is measured against
 * it), and for PDFs with running lines `<name>.running.txt`: the lines that
 * must not be in main_content. Deterministic: the same bytes each run
 * (dates fixed), so the committed files only change when this script does.
 *
 *   node scripts/gen-document-fixtures.mjs [out-dir]
 *
 * The encrypted PDF needs Debian's qpdf (`apt-get install qpdf`); without
 * it the committed one is kept. `makeLongPdf` is also used by bench:extract
 * (a 100-page PDF, not committed).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

const FIXED_DATE = new Date('2024-03-05T10:20:30Z');

const VOCAB = `river harbour lantern meadow orchard quarry glacier summit valley canyon prairie estuary lagoon delta tundra savanna
cathedral library market bridge tower garden museum theatre station school hospital factory bakery workshop gallery
engineer teacher farmer sailor painter doctor builder miner weaver potter scholar merchant captain gardener baker
measures gathers repairs describes follows carries studies collects records observes improves protects explains builds
quietly carefully slowly rapidly gently openly rarely often seldom finally nearly almost together
ancient narrow broad golden silver northern southern eastern western modern rural urban coastal hidden famous
through across beneath beyond within around during between against toward
internationalization responsibilities characteristically environmental administrative transportation
communication infrastructure understanding representative`.split(/\s+/);

/** A seeded generator (mulberry32), so the text is the same each run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentence(r) {
  const n = 8 + Math.floor(r() * 10);
  const words = Array.from({ length: n }, () => VOCAB[Math.floor(r() * VOCAB.length)]);
  words[0] = words[0][0].toUpperCase() + words[0].slice(1);
  return `${words.join(' ')}.`;
}
const paragraph = (r, sentences = 4) => Array.from({ length: sentences }, () => sentence(r)).join(' ');

/** Lines of `text` that fit `width` at `size`; a long word that does not fit is hyphenated (the reader must undo it). */
function wrap(text, font, size, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (font.widthOfTextAtSize(next, size) <= width) { line = next; continue; }
    if (word.length >= 10) {
      // Break the word: as much as fits, then a hyphen.
      for (let cut = word.length - 4; cut >= 4; cut--) {
        const head = `${line === '' ? '' : `${line} `}${word.slice(0, cut)}-`;
        if (font.widthOfTextAtSize(head, size) <= width) {
          lines.push(head);
          line = word.slice(cut);
          break;
        }
        if (cut === 4) { lines.push(line); line = word; }
      }
      continue;
    }
    lines.push(line);
    line = word;
  }
  if (line !== '') lines.push(line);
  return lines;
}

async function newPdf(title) {
  const doc = await PDFDocument.create();
  doc.setTitle(title);
  doc.setAuthor('Ada Example');
  doc.setLanguage('en-GB');
  doc.setCreationDate(FIXED_DATE);
  doc.setModificationDate(FIXED_DATE);
  doc.setProducer('scour fixtures');
  doc.setCreator('scour fixtures');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  return { doc, font, bold };
}

const W = 595;
const H = 842;
const MARGIN = 60;

/** A writer that flows blocks down pages (one column or two), with a running header and footer on each page. */
function flow(doc, font, bold, { columns = 1, header, footer, totalPagesHint } = {}) {
  let page;
  let y;
  let col = 0;
  let pageNo = 0;
  const gutter = 30;
  const colWidth = columns === 1 ? W - 2 * MARGIN : (W - 2 * MARGIN - gutter) / 2;
  const colX = () => MARGIN + col * (colWidth + gutter);
  const newPage = () => {
    page = doc.addPage([W, H]);
    pageNo++;
    y = H - MARGIN - 20;
    col = 0;
    if (header) page.drawText(header, { x: MARGIN, y: H - 35, size: 9, font });
    if (footer) page.drawText(footer.replace('{n}', String(pageNo)).replace('{total}', String(totalPagesHint ?? '')), { x: W / 2 - 30, y: 30, size: 9, font });
  };
  const room = (h) => {
    if (page === undefined) newPage();
    if (y - h >= MARGIN + 10) return;
    if (columns === 2 && col === 0) { col = 1; y = colTop; return; }
    newPage();
    colTop = y;
  };
  let colTop = H - MARGIN - 20;
  const api = {
    get page() { return page; },
    newPage() { newPage(); colTop = y; },
    /** A title over the whole width (above the columns). */
    title(text, size = 20) {
      if (page === undefined) newPage();
      page.drawText(text, { x: MARGIN, y, size, font: bold });
      y -= size * 2;
      colTop = y;
    },
    heading(text, size = 15) {
      room(size * 2.5);
      y -= size * 0.6;
      page.drawText(text, { x: colX(), y, size, font: bold });
      y -= size * 1.4;
    },
    para(text, size = 11) {
      for (const line of wrap(text, font, size, colWidth)) {
        room(size * 1.35);
        page.drawText(line, { x: colX(), y, size, font });
        y -= size * 1.35;
      }
      y -= size * 0.9;
    },
    item(marker, text, size = 11) {
      const indent = 18;
      wrap(text, font, size, colWidth - indent).forEach((line, n) => {
        room(size * 1.35);
        if (n === 0) page.drawText(marker, { x: colX(), y, size, font });
        page.drawText(line, { x: colX() + indent, y, size, font });
        y -= size * 1.35;
      });
    },
    gap(h = 8) { y -= h; },
    /** Whether `text` as a paragraph (or a heading) ends on page `max` or before (one column). */
    fits(text, max, size = 11) {
      if (page === undefined) return max >= 1;
      const lines = wrap(text, font, size, colWidth).length + 2;
      const space = Math.floor((y - MARGIN - 10) / (size * 1.35));
      return lines <= space || pageNo < max;
    },
    table(rows, size = 10) {
      const cw = colWidth / rows[0].length;
      for (const row of rows) {
        room(size * 1.8);
        row.forEach((cell, n) => page.drawText(cell, { x: colX() + n * cw, y, size, font: n === 0 ? bold : font }));
        y -= size * 1.8;
      }
      y -= size;
    },
    get pages() { return pageNo; },
  };
  return api;
}

/** A PDF of `pages` pages of running text with a header and "Page N of M" footer (bench:extract reads a 100-page one). */
export async function makeLongPdf(pages, seed = 7) {
  const r = rng(seed);
  const { doc, font, bold } = await newPdf(`A long report of ${pages} pages`);
  const f = flow(doc, font, bold, { header: 'Annual Report of the Example Society', footer: 'Page {n} of {total}', totalPagesHint: pages });
  const expected = [];
  let section = 0;
  for (;;) {
    section++;
    const h = `Section ${section} ${VOCAB[section % VOCAB.length]}`;
    if (!f.fits(h, pages)) break;
    f.heading(h);
    expected.push(h);
    for (let n = 0; n < 3; n++) {
      const p = paragraph(r, 5);
      if (!f.fits(p, pages)) break;
      f.para(p);
      expected.push(p);
    }
    if (!f.fits('x', pages)) break;
  }
  return { bytes: await doc.save({ useObjectStreams: false }), expected: expected.join('\n\n') };
}

async function onePage() {
  const r = rng(1);
  const { doc, font, bold } = await newPdf('A one page note');
  const f = flow(doc, font, bold);
  const expected = [];
  f.title('A one page note on rivers');
  expected.push('A one page note on rivers');
  for (let n = 0; n < 3; n++) {
    const p = paragraph(r, 5);
    f.para(p);
    expected.push(p);
  }
  return { bytes: await doc.save({ useObjectStreams: false }), expected };
}

async function manyPages() {
  const r = rng(2);
  const { doc, font, bold } = await newPdf('The many pages report');
  const f = flow(doc, font, bold, { header: 'The Example Society Quarterly Review', footer: 'Page {n} of {total}', totalPagesHint: 12 });
  const expected = [];
  let s = 0;
  let full = false;
  while (!full) {
    s++;
    const h = `Chapter ${s} on the ${VOCAB[(s * 3) % VOCAB.length]} ${VOCAB[(s * 5) % VOCAB.length]}`;
    if (!f.fits(h, 12)) break;
    f.heading(h);
    expected.push(h);
    for (let n = 0; n < 4; n++) {
      const p = paragraph(r, 6);
      if (!f.fits(p, 12)) { full = true; break; }
      f.para(p);
      expected.push(p);
    }
  }
  return { bytes: await doc.save({ useObjectStreams: false }), expected, running: ['The Example Society Quarterly Review', 'Page 1 of 12', 'Page 12 of 12'] };
}

async function twoColumns() {
  const r = rng(3);
  const { doc, font, bold } = await newPdf('Two columns');
  const f = flow(doc, font, bold, { columns: 2 });
  const expected = [];
  f.title('A study in two columns');
  expected.push('A study in two columns');
  for (let n = 0; n < 6; n++) {
    const p = paragraph(r, 4);
    f.para(p);
    expected.push(p);
  }
  return { bytes: await doc.save({ useObjectStreams: false }), expected };
}

async function tableAndLists() {
  const r = rng(4);
  const { doc, font, bold } = await newPdf('Tables and lists');
  const f = flow(doc, font, bold);
  const expected = [];
  f.title('Harbour figures');
  expected.push('Harbour figures');
  const p = paragraph(r, 3);
  f.para(p);
  expected.push(p);
  const rows = [['Harbour', 'Ships', 'Tonnage', 'Year'], ['Northport', '120', '45000', '2021'], ['Southbay', '87', '31000', '2022'], ['Eastmere', '45', '12500', '2023']];
  f.table(rows);
  expected.push(rows.map((row) => row.join(' ')).join('\n'));
  f.heading('What the harbours need');
  expected.push('What the harbours need');
  for (const t of ['Deeper channels for the larger ships', 'A second crane at the eastern quay', 'Better roads to the market towns']) {
    f.item('•', t);
    expected.push(t);
  }
  f.gap(10);
  for (const [n, t] of ['Survey the channel', 'Order the crane', 'Repair the roads'].entries()) {
    f.item(`${n + 1}.`, t);
    expected.push(t);
  }
  return { bytes: await doc.save({ useObjectStreams: false }), expected };
}

async function scanned() {
  const { doc } = await newPdf('A scanned page');
  const page = doc.addPage([W, H]);
  // Shapes only, like an image of text: no text layer.
  for (let n = 0; n < 30; n++) page.drawRectangle({ x: MARGIN, y: H - 100 - n * 20, width: 300 + (n % 5) * 30, height: 8, color: rgb(0.2, 0.2, 0.2) });
  return { bytes: await doc.save({ useObjectStreams: false }), expected: [] };
}

function broken() {
  // A PDF header, then a body cut short: no cross-reference table, no trailer.
  return { bytes: new TextEncoder().encode('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Cou'), expected: [] };
}

/** A DOCX with headings, paragraphs, lists, a table and a link (the docx package). */
async function docxFile() {
  const d = await import('docx');
  const r = rng(5);
  const expected = [];
  const children = [];
  const h = (text, level) => { children.push(new d.Paragraph({ text, heading: level })); expected.push(text); };
  const p = (text) => { children.push(new d.Paragraph({ children: [new d.TextRun(text)] })); expected.push(text); };
  h('The harbour handbook', d.HeadingLevel.HEADING_1);
  p(paragraph(r, 4));
  h('Ships and cargo', d.HeadingLevel.HEADING_2);
  p(paragraph(r, 3));
  for (const t of ['Grain from the northern farms', 'Timber from the western forests', 'Stone from the ancient quarry']) {
    children.push(new d.Paragraph({ text: t, bullet: { level: 0 } }));
    expected.push(t);
  }
  const rows = [['Quay', 'Cranes', 'Depth'], ['North', '3', '12'], ['South', '2', '9']];
  children.push(new d.Table({ rows: rows.map((row) => new d.TableRow({ children: row.map((c) => new d.TableCell({ children: [new d.Paragraph(c)] })) })) }));
  expected.push(rows.map((row) => row.join(' ')).join('\n'));
  children.push(new d.Paragraph({ children: [new d.TextRun('The tide tables of every quay are kept on '), new d.ExternalHyperlink({ link: 'https://example.org/harbours', children: [new d.TextRun({ text: 'the harbour site', style: 'Hyperlink' })] }), new d.TextRun(' and updated each week.')] }));
  expected.push('The tide tables of every quay are kept on the harbour site and updated each week.');
  const doc = new d.Document({ creator: 'Ada Example', title: 'The harbour handbook', description: 'fixture', sections: [{ children }] });
  return { bytes: new Uint8Array(await d.Packer.toBuffer(doc)), expected };
}

function feeds() {
  const items = [
    { title: 'The harbour opens a second quay', link: 'https://example.org/news/quay', date: '2024-03-01T09:00:00Z', summary: 'Ships of every size can now berth at the eastern quay.' },
    { title: 'Grain prices fall after the harvest', link: 'https://example.org/news/grain', date: '2024-02-20T12:30:00Z', summary: 'The northern farms brought in their largest harvest in a decade.' },
    { title: 'Museum shows ancient maps', link: 'https://example.org/news/maps', date: '2024-02-11T08:15:00Z', summary: 'Maps of the coastal lagoon drawn by a famous captain.' },
  ];
  const rfc822 = (iso) => new Date(iso).toUTCString().replace('GMT', '+0000');
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const rss = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Harbour News</title>
    <link>https://example.org/news</link>
    <description>News from the harbour</description>
${items.map((i) => `    <item>
      <title>${esc(i.title)}</title>
      <link>${i.link}</link>
      <pubDate>${rfc822(i.date)}</pubDate>
      <description>&lt;p&gt;${esc(i.summary)}&lt;/p&gt;</description>
    </item>`).join('\n')}
  </channel>
</rss>
`;
  const atom = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Harbour News</title>
  <link href="https://example.org/news"/>
  <id>urn:example:harbour</id>
  <updated>2024-03-01T09:00:00Z</updated>
${items.map((i) => `  <entry>
    <title>${esc(i.title)}</title>
    <link rel="alternate" href="${i.link}"/>
    <id>${i.link}</id>
    <updated>${i.date}</updated>
    <summary type="html">&lt;p&gt;${esc(i.summary)}&lt;/p&gt;</summary>
  </entry>`).join('\n')}
</feed>
`;
  const json = JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1', title: 'Harbour News', home_page_url: 'https://example.org/news',
    items: items.map((i) => ({ id: i.link, url: i.link, title: i.title, date_published: i.date, summary: i.summary })),
  }, null, 2);
  const expected = ['Harbour News', ...items.flatMap((i) => [i.title, i.summary])];
  return { rss, atom, json, items, expected };
}


/** Several pages in two columns, with a running header and a centred page number. */
async function twoColumnsPages() {
  const r = rng(8);
  const { doc, font, bold } = await newPdf('Two columns over pages');
  const f = flow(doc, font, bold, { columns: 2, header: 'Proceedings of the Harbour Conference', footer: '{n}' });
  const expected = [];
  f.title('Tides and their keepers');
  expected.push('Tides and their keepers');
  for (let n = 0; n < 16; n++) {
    const p = paragraph(r, 4);
    f.para(p);
    expected.push(p);
  }
  return { bytes: await doc.save({ useObjectStreams: false }), expected, running: ['Proceedings of the Harbour Conference'] };
}

/** A plain letter: paragraphs only, no headings. */
async function docxLetter() {
  const d = await import('docx');
  const r = rng(9);
  const expected = [];
  const children = [];
  for (let n = 0; n < 5; n++) {
    const t = paragraph(r, 3);
    children.push(new d.Paragraph({ children: [new d.TextRun(t)] }));
    expected.push(t);
  }
  const doc = new d.Document({ creator: 'Ada Example', title: 'A letter', sections: [{ children }] });
  return { bytes: new Uint8Array(await d.Packer.toBuffer(doc)), expected };
}

/** Numbered and nested lists under headings. */
async function docxLists() {
  const d = await import('docx');
  const expected = [];
  const children = [];
  const numbering = { config: [{ reference: 'steps', levels: [{ level: 0, format: d.LevelFormat.DECIMAL, text: '%1.', alignment: d.AlignmentType.START }] }] };
  children.push(new d.Paragraph({ text: 'Opening the harbour each morning', heading: d.HeadingLevel.HEADING_1 }));
  expected.push('Opening the harbour each morning');
  for (const t of ['Read the tide table', 'Check the eastern quay lights', 'Open the northern gate']) {
    children.push(new d.Paragraph({ text: t, numbering: { reference: 'steps', level: 0 } }));
    expected.push(t);
  }
  children.push(new d.Paragraph({ text: 'What to carry', heading: d.HeadingLevel.HEADING_2 }));
  expected.push('What to carry');
  for (const [t, level] of [['A lantern', 0], ['Spare batteries for the lantern', 1], ['The harbour keys', 0], ['The key to the museum', 1]]) {
    children.push(new d.Paragraph({ text: t, bullet: { level } }));
    expected.push(t);
  }
  const doc = new d.Document({ creator: 'Ada Example', title: 'Morning steps', numbering, sections: [{ children }] });
  return { bytes: new Uint8Array(await d.Packer.toBuffer(doc)), expected };
}

/** RSS 1.0 (RDF) and an RSS 2.0 feed whose items carry HTML in CDATA. */
function moreFeeds() {
  const items = [
    { title: 'Lantern festival on the quay', link: 'https://example.org/events/lanterns', date: '2024-04-02T18:00:00Z', summary: 'Paper lanterns will light the western quay at dusk.' },
    { title: 'New ferry timetable', link: 'https://example.org/events/ferry', date: '2024-03-28T07:30:00Z', summary: 'The morning ferry leaves twenty minutes earlier from April.' },
  ];
  const rdf = `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://example.org/events">
    <title>Harbour Events</title>
    <link>https://example.org/events</link>
    <description>Events at the harbour</description>
  </channel>
${items.map((i) => `  <item rdf:about="${i.link}">
    <title>${i.title}</title>
    <link>${i.link}</link>
    <dc:date>${i.date}</dc:date>
    <description>${i.summary}</description>
  </item>`).join('\n')}
</rdf:RDF>
`;
  const cdata = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel>
    <title>Harbour Events</title>
    <link>https://example.org/events</link>
${items.map((i) => `    <item>
      <title><![CDATA[${i.title}]]></title>
      <link>${i.link}</link>
      <pubDate>${new Date(i.date).toUTCString()}</pubDate>
      <description><![CDATA[<p><b>${i.summary}</b></p>]]></description>
    </item>`).join('\n')}
  </channel>
</rss>
`;
  return { rdf, cdata, expected: ['Harbour Events', ...items.flatMap((i) => [i.title, i.summary])] };
}

async function main() {
  const here = dirname(fileURLToPath(import.meta.url));
  const out = process.argv[2] ?? join(here, '..', 'test', 'fixtures', 'documents');
  mkdirSync(out, { recursive: true });
  const put = (name, bytes, expected, running) => {
    writeFileSync(join(out, name), bytes);
    const base = name.replace(/\.[^.]+$/, '');
    writeFileSync(join(out, `${base}.expected.txt`), `${Array.isArray(expected) ? expected.join('\n\n') : expected}\n`);
    if (running !== undefined) writeFileSync(join(out, `${base}.running.txt`), `${running.join('\n')}\n`);
  };
  const one = await onePage();
  put('one-page.pdf', one.bytes, one.expected);
  const many = await manyPages();
  put('many-pages.pdf', many.bytes, many.expected, many.running);
  const two = await twoColumns();
  put('two-columns.pdf', two.bytes, two.expected);
  const table = await tableAndLists();
  put('table-lists.pdf', table.bytes, table.expected);
  const scan = await scanned();
  put('scanned.pdf', scan.bytes, scan.expected);
  const bad = broken();
  put('broken.pdf', bad.bytes, bad.expected);
  try {
    execFileSync('qpdf', ['--version'], { stdio: 'ignore' });
    const plain = join(out, 'encrypted.plain.tmp.pdf');
    writeFileSync(plain, one.bytes);
    rmSync(join(out, 'encrypted.pdf'), { force: true });
    execFileSync('qpdf', ['--static-id', '--encrypt', 'user-secret', 'owner-secret', '256', '--', plain, join(out, 'encrypted.pdf')]);
    rmSync(plain);
    writeFileSync(join(out, 'encrypted.expected.txt'), '\n');
  } catch {
    if (!existsSync(join(out, 'encrypted.pdf'))) console.error('qpdf is not installed: encrypted.pdf was not made (apt-get install qpdf)');
  }
  const long25 = await makeLongPdf(25, 11);
  put('report-25-pages.pdf', long25.bytes, long25.expected, ['Annual Report of the Example Society', 'Page 1 of 25', 'Page 25 of 25']);
  const long3 = await makeLongPdf(3, 13);
  put('report-3-pages.pdf', long3.bytes, long3.expected, ['Annual Report of the Example Society', 'Page 2 of 3']);
  const long8 = await makeLongPdf(8, 17);
  put('report-8-pages.pdf', long8.bytes, long8.expected, ['Annual Report of the Example Society', 'Page 4 of 8']);
  const cols = await twoColumnsPages();
  put('two-columns-pages.pdf', cols.bytes, cols.expected, cols.running);
  try {
    // Encrypted with an owner password only (no user password): it opens, so it is read.
    const plain = join(out, 'owner.plain.tmp.pdf');
    writeFileSync(plain, one.bytes);
    rmSync(join(out, 'owner-password.pdf'), { force: true });
    execFileSync('qpdf', ['--static-id', '--encrypt', '', 'owner-secret', '256', '--print=none', '--', plain, join(out, 'owner-password.pdf')]);
    rmSync(plain);
    writeFileSync(join(out, 'owner-password.expected.txt'), `${one.expected.join('\n\n')}\n`);
  } catch {
    if (!existsSync(join(out, 'owner-password.pdf'))) console.error('qpdf is not installed: owner-password.pdf was not made');
  }
  const letter = await docxLetter();
  put('letter.docx', letter.bytes, letter.expected);
  const lists = await docxLists();
  put('morning-steps.docx', lists.bytes, lists.expected);
  const more = moreFeeds();
  put('events.rdf.xml', more.rdf, more.expected);
  put('events.cdata.xml', more.cdata, more.expected);
  const docx = await docxFile();
  put('handbook.docx', docx.bytes, docx.expected);
  const f = feeds();
  put('news.rss.xml', f.rss, f.expected);
  put('news.atom.xml', f.atom, f.expected);
  put('news.feed.json', f.json, f.expected);
  writeFileSync(join(out, 'feed-items.json'), `${JSON.stringify(f.items, null, 2)}\n`);
  console.log(`documents written to ${out}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();

/** Word tokens of a text, lower case (letters and digits). */
export const words = (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Word-level recall: the share of the expected words (as a multiset) found in `got`. 1 when nothing is expected. */
export function wordRecall(expected, got) {
  const want = words(expected);
  if (want.length === 0) return 1;
  const have = new Map();
  for (const w of words(got)) have.set(w, (have.get(w) ?? 0) + 1);
  let hit = 0;
  for (const w of want) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      hit++;
      have.set(w, n - 1);
    }
  }
  return hit / want.length;
}
