/**
 * The main-content extractor. What it does lives in main-content-reader.ts, a module of this kind
 * folder rather than of this plugin: the markdown extractor finds the main content through it too.
 * Re-exported here for the modules that read it from this plugin.
 */
import { defineExtractor } from '../sdk/scrape.js';
import { HTML_FILTER } from '../sdk/scrape.js';
import { mainContent } from './main-content-reader.js';
export * from './main-content-reader.js';

export const mainContentExtractor = defineExtractor({
  name: 'extractor-main-content',
  id: 'main_content',
  builtin: true,
  description: 'The main content only, led by its headline, blocks as line breaks ("" when none is found).',
  filter: HTML_FILTER,
  extract: (page): string => mainContent(page).text,
});
