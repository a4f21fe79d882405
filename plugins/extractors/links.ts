/**
 * The links extractor. What it does lives in links-reader.ts, a module of this kind
 * folder rather than of this plugin: the markdown and social extractors resolve links through it too.
 * Re-exported here for the modules that read it from this plugin.
 */
import { defineExtractor } from '../sdk/scrape.js';
import { HTML_FILTER } from '../sdk/scrape.js';
import { extractLinks, type Link } from './links-reader.js';
export * from './links-reader.js';

export const linksExtractor = defineExtractor({
  name: 'extractor-links',
  id: 'links',
  builtin: true,
  description: 'Every hyperlink: absolute url, text, rel and target, in document order.',
  filter: HTML_FILTER,
  extract: (page): Link[] => extractLinks(page),
});
