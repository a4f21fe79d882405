/**
 * The schema-data extractor. What it does lives in schema-data-reader.ts, a module of this kind
 * folder rather than of this plugin: the contacts, social and main-content extractors read structured data through it too.
 * Re-exported here for the modules that read it from this plugin.
 */
import { defineExtractor } from '../sdk/scrape.js';
import { HTML_FILTER } from '../sdk/scrape.js';
import { extractSchemaData, type SchemaItem } from './schema-data-reader.js';
export * from './schema-data-reader.js';

export const schemaDataExtractor = defineExtractor({
  name: 'extractor-schema-data',
  id: 'schema_data',
  builtin: true,
  description: 'Structured data: JSON-LD, Microdata and RDFa Lite items, each tagged with its format.',
  filter: HTML_FILTER,
  extract: (page): SchemaItem[] => extractSchemaData(page),
});
