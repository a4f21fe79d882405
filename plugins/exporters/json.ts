/**
 * The JSON export: the report exactly as the API answered it, pretty-printed
 * (two spaces) in UTF-8 with a final newline. JSON.stringify writes a lone
 * surrogate as a \u escape, so the bytes are always valid UTF-8.
 */
import type { ExporterPlugin, ResearchReport } from '../../core/research.js';

export const renderJson = (report: ResearchReport): string => `${JSON.stringify(report, null, 2)}\n`;

export const jsonExporter: ExporterPlugin<'exporter-json'> = {
  name: 'exporter-json',
  kind: 'exporter',
  description: 'The report as pretty-printed JSON (UTF-8), the same fields as the API response.',
  format: 'json',
  contentType: 'application/json; charset=utf-8',
  extension: 'json',
  async render(report, host) {
    host.signal.throwIfAborted();
    return new TextEncoder().encode(renderJson(report));
  },
};
