/**
 * The built-in extractors of POST /v1/scrape, and the page parser they
 * share (plugins/sdk/parse.ts, re-exported here: the extraction pool's
 * workers load this module for both). Each is switched on by its scrape
 * field (`extract_links` -> links, ...); custom extractors are written the
 * same way with `defineExtractor`.
 */
import type { ExtractorPlugin } from '../sdk/scrape.js';
import { imagesExtractor } from './images.js';
import { linksExtractor } from './links.js';
import { mainContentExtractor } from './main-content.js';
import { markdownExtractor } from './markdown.js';
import { metaDataExtractor } from './meta-data.js';
import { schemaDataExtractor } from './schema-data.js';
import { textContentExtractor } from './text-content.js';
import { contactsExtractor } from './contacts/index.js';
import { socialExtractor } from './social/index.js';
import { fieldsExtractor } from './fields/index.js';

export { parsePage } from '../sdk/parse.js';
export type { PageSource } from '../../core/extraction.js';
export { extractImages, parseSrcset, type Image, type SrcsetCandidate } from './images.js';
export { extractLinks, type Link } from './links.js';
export { mainContent, type MainContent } from './main-content.js';
export { extractMarkdown, toMarkdown } from './markdown.js';
export { extractMetaData, type MetaData, type MetaValues } from './meta-data.js';
export { extractSchemaData, parseJsonLd, type SchemaItem } from './schema-data.js';
export { renderText } from '../sdk/text.js';
export { extractContacts, mergeContacts, type ContactItem } from './contacts/index.js';
export { extractSocial, mergeProfiles, type SocialProfile } from './social/index.js';
export { extractFields, checkFieldsSpec, parseNumber, type FieldsSpec, type FieldSpec } from './fields/index.js';
export {
  contactsExtractor, socialExtractor, fieldsExtractor,
  imagesExtractor, linksExtractor, mainContentExtractor, markdownExtractor, metaDataExtractor, schemaDataExtractor, textContentExtractor,
};

export const builtinExtractors: readonly ExtractorPlugin[] = [
  textContentExtractor,
  linksExtractor,
  imagesExtractor,
  schemaDataExtractor,
  metaDataExtractor,
  mainContentExtractor,
  markdownExtractor,
  contactsExtractor,
  socialExtractor,
  fieldsExtractor,
];
