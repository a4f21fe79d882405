/**
 * DOCX through mammoth: the document as HTML (headings by their styles,
 * lists, tables, links, emphasis), which the page pipeline then reads with
 * the HTML extractors like any page (text, main content, Markdown, links).
 * What it says of itself (title, author, created, language) comes from its
 * docProps/core.xml. Images are left out (only the text is wanted).
 */
import JSZip from 'jszip';
import mammoth from 'mammoth';
import type { DocumentRead, DocumentReadOptions } from '../../core/documents.js';
import { DocumentUnreadable } from '../../core/errors.js';

const decode = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
const tag = (xml: string, name: string): string | null => {
  const m = new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xml);
  const v = m === null ? '' : decode(m[1]!).replace(/\s+/g, ' ').trim();
  return v === '' ? null : v;
};
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * Word's tables as HTML tables the extractors read as tables: a cell's one
 * paragraph unwrapped, and the first row a header row (Word marks none).
 */
function tidyTables(html: string): string {
  return html
    .replace(/<td>((?:(?!<\/td>)[\s\S])*)<\/td>/g, (_, cell: string) => `<td>${cell.replace(/^<p>([\s\S]*)<\/p>$/, (m, inner: string) => (inner.includes('<p>') ? m : inner))}</td>`)
    .replace(/<table>\s*<tr>((?:(?!<\/tr>)[\s\S])*)<\/tr>/g, (_, row: string) => `<table><thead><tr>${row.replace(/<td>/g, '<th>').replace(/<\/td>/g, '</th>')}</tr></thead>`);
}

function within<T>(p: Promise<T>, ms: number, what: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(what()), ms); })]).finally(() => clearTimeout(timer));
}

export async function readDocx(bytes: Uint8Array, options: DocumentReadOptions): Promise<DocumentRead> {
  const unreadable = (details: string) => new DocumentUnreadable({ message: 'The DOCX document could not be read', documentType: 'docx', details });
  const work = (async () => {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let zip: JSZip;
    try {
      zip = await JSZip.loadAsync(buffer);
    } catch (e) {
      throw unreadable(`not a ZIP archive: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (zip.file('word/document.xml') === null) throw unreadable('no word/document.xml in the archive');
    const core = (await zip.file('docProps/core.xml')?.async('string')) ?? '';
    let html: string;
    try {
      const out = await mammoth.convertToHtml({ buffer }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) });
      html = tidyTables(out.value);
    } catch (e) {
      throw unreadable(e instanceof Error ? e.message : String(e));
    }
    const title = tag(core, 'dc:title');
    const created = tag(core, 'dcterms:created');
    const language = tag(core, 'dc:language');
    const page = `<!DOCTYPE html><html${language ? ` lang="${escapeHtml(language)}"` : ''}><head><meta charset="utf-8"><title>${escapeHtml(title ?? '')}</title></head><body><article>${html}</article></body></html>`;
    return {
      info: {
        type: 'docx' as const, pages: null, pages_read: null, title, author: tag(core, 'dc:creator'),
        created: created !== null && !Number.isNaN(Date.parse(created)) ? new Date(created).toISOString() : null, language, warnings: [],
      },
      text: '', main: '', markdown: '', html: page,
    };
  })();
  return within(work, options.timeoutMs, () => unreadable(`the time limit (${options.timeoutMs} ms) passed`));
}
