/**
 * The HTML exporter. What it does lives in html-document.ts, a module of this kind
 * folder rather than of this plugin: the PDF exporter prints the document it makes.
 * Re-exported here for the modules that read it from this plugin.
 */
import type { ExporterPlugin } from '../../core/research.js';
import { renderHtml } from './html-document.js';
export * from './html-document.js';

export const htmlExporter: ExporterPlugin<'exporter-html'> = {
  name: 'exporter-html',
  kind: 'exporter',
  description: 'The report as one self-contained, printable HTML document (inline CSS, no scripts, no external resources).',
  format: 'html',
  contentType: 'text/html; charset=utf-8',
  extension: 'html',
  async render(report, host) {
    host.signal.throwIfAborted();
    return new TextEncoder().encode(renderHtml(report));
  },
};
