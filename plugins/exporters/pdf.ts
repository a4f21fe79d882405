/**
 * The PDF export: the HTML export's document (html.ts) printed by Chromium.
 * The exporter itself holds no browser: the operation hands it
 * `host.htmlToPdf`, backed by the service's Chromium. A server without one
 * (no browser configured) has no `htmlToPdf`, and rendering then fails with
 * `ExportUnavailable` (`code: 'EXPORT_UNAVAILABLE'`), which the operation
 * reports instead of a file.
 *
 * `printPdf` is that `htmlToPdf` for a Playwright Browser: a fresh context
 * with JavaScript off, offline, service workers blocked and every request
 * aborted (the document is handed over with setContent, so it needs none and
 * can load nothing), A4 with backgrounds, the page size and margins of the
 * document's CSS @page rule (A4, 18/16/20/16 mm in html.ts) and page numbers
 * ("n / N") in the footer. The context is closed on every path before the
 * promise settles; an abort of `signal` closes it at once and rejects with
 * the signal's reason.
 */
import type { Browser } from 'playwright';
import { abortable } from '../../core/abort.js';
import type { ExporterPlugin } from '../../core/research.js';
import { renderHtml } from './html-document.js';

/** PDF export asked of a server that has no browser to print with. */
export class ExportUnavailable extends Error {
  readonly code = 'EXPORT_UNAVAILABLE' as const;
  constructor(message = 'PDF export needs Chromium and this server has none (install Debian\'s chromium or set SCOUR_CHROMIUM_PATH)') {
    super(message);
    this.name = 'ExportUnavailable';
  }
}

/** Bound on loading the document into the page (it loads nothing from outside, so this is only a safety net). */
const LOAD_TIMEOUT_MS = 60_000;

const FOOTER = '<div style="width:100%;font-size:8px;color:#5b6775;text-align:center;font-family:sans-serif"><span class="pageNumber"></span> / <span class="totalPages"></span></div>';

/** HTML to PDF bytes in `browser` (see the module comment). */
export async function printPdf(browser: Browser, html: string, signal: AbortSignal): Promise<Uint8Array> {
  signal.throwIfAborted();
  const context = await browser.newContext({ javaScriptEnabled: false, offline: true, serviceWorkers: 'block', acceptDownloads: false });
  // One close for both paths: a second context.close() returns at once while
  // the first is still closing, and printPdf must not settle before it is closed.
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= context.close().catch(() => undefined));
  const onAbort = () => { void close(); };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    signal.throwIfAborted();
    await context.route('**', (route) => route.abort());
    const page = await abortable(context.newPage(), signal);
    await abortable(page.setContent(html, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS }), signal);
    const pdf = await abortable(page.pdf({
      format: 'A4',
      printBackground: true,
      preferCSSPageSize: true,
      displayHeaderFooter: true,
      headerTemplate: '<div></div>',
      footerTemplate: FOOTER,
    }), signal);
    return new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  } finally {
    signal.removeEventListener('abort', onAbort);
    await close();
  }
}

export const pdfExporter: ExporterPlugin<'exporter-pdf'> = {
  name: 'exporter-pdf',
  kind: 'exporter',
  description: 'The HTML report printed to PDF (A4) by the service\'s Chromium; EXPORT_UNAVAILABLE when the server has no browser.',
  format: 'pdf',
  contentType: 'application/pdf',
  extension: 'pdf',
  async render(report, host) {
    if (host.htmlToPdf === undefined) throw new ExportUnavailable();
    host.signal.throwIfAborted();
    return host.htmlToPdf(renderHtml(report), host.signal);
  },
};
