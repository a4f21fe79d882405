/** What the built-in extractors share: the HTML filter and text helpers. */
import type { ExtractorFilter } from '../sdk/scrape.js';

/** The built-in extractors read HTML (and XHTML) pages only. */
export const HTML_FILTER: ExtractorFilter = { contentTypes: ['text/html', 'application/xhtml+xml'] };
