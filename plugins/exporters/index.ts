/**
 * The built-in exporters (issue 13, `export_format`): one ExporterPlugin per
 * format of EXPORT_FORMATS, and `exporterFor(format)` to pick one.
 */
import type { ExportFormat, ExporterPlugin } from '../../core/research.js';
import { bibtexExporter } from './bibtex.js';
import { csvExporter } from './csv.js';
import { docxExporter } from './docx.js';
import { htmlExporter } from './html.js';
import { jsonExporter } from './json.js';
import { markdownExporter } from './markdown.js';
import { pdfExporter } from './pdf.js';

export { bibtexExporter, csvExporter, docxExporter, htmlExporter, jsonExporter, markdownExporter, pdfExporter };
export { ExportUnavailable, printPdf } from './pdf.js';

export const builtinExporters = [
  markdownExporter, htmlExporter, pdfExporter, docxExporter, jsonExporter, csvExporter, bibtexExporter,
] as const satisfies readonly ExporterPlugin[];

const BY_FORMAT: ReadonlyMap<string, ExporterPlugin> = new Map(builtinExporters.map((e) => [e.format, e]));

/** The built-in exporter of a format (undefined for an unknown one). */
export function exporterFor(format: ExportFormat): ExporterPlugin;
export function exporterFor(format: string): ExporterPlugin | undefined;
export function exporterFor(format: string): ExporterPlugin | undefined {
  return BY_FORMAT.get(format);
}
