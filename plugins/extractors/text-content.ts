/**
 * text_content: the readable text of the whole page (spec 2.5). No
 * script/style/noscript/template/svg or <head>; block elements become line
 * breaks (paragraph-like ones a blank line), inline whitespace collapses,
 * at most one blank line in a row, entities decoded (by the parser).
 */
import { defineExtractor } from '../sdk/scrape.js';
import { HTML_FILTER } from '../sdk/scrape.js';
import { renderText } from '../sdk/text.js';

export const textContentExtractor = defineExtractor({
  name: 'extractor-text-content',
  id: 'text_content',
  builtin: true,
  description: 'The readable text of the whole page, blocks as line breaks.',
  filter: HTML_FILTER,
  extract: (page): string => renderText(page.document),
});
