/**
 * The images extractor. What it does lives in images-reader.ts, a module of this kind
 * folder rather than of this plugin: the markdown extractor reads images through it too.
 * Re-exported here for the modules that read it from this plugin.
 */
import { defineExtractor } from '../sdk/scrape.js';
import { HTML_FILTER } from '../sdk/scrape.js';
import { extractImages, type Image } from './images-reader.js';
export * from './images-reader.js';

export const imagesExtractor = defineExtractor({
  name: 'extractor-images',
  id: 'images',
  builtin: true,
  description: 'Every image: absolute src (lazy-load and srcset aware), alt, width, height, srcset.',
  filter: HTML_FILTER,
  extract: (page): Image[] => extractImages(page),
});
