/** The built-in developer tools (spec section 4), one plugin each. */
import type { ToolPlugin } from '../../core/plugin.js';
import base64Encoder from './base64-encoder/index.js';
import colorConverter from './color-converter/index.js';
import htmlEntityEncoder from './html-entity-encoder/index.js';
import jsonFormatter from './json-formatter/index.js';
import jwtDecoder from './jwt-decoder/index.js';
import loremIpsumGenerator from './lorem-ipsum-generator/index.js';
import regexTester from './regex-tester/index.js';
import robotsTxtGenerator from './robots-txt-generator/index.js';
import urlEncoder from './url-encoder/index.js';
import userAgentParser from './user-agent-parser/index.js';
import uuidGenerator from './uuid-generator/index.js';

export const builtinTools: readonly ToolPlugin[] = [
  jsonFormatter,
  base64Encoder,
  urlEncoder,
  uuidGenerator,
  jwtDecoder,
  regexTester,
  htmlEntityEncoder,
  loremIpsumGenerator,
  userAgentParser,
  robotsTxtGenerator,
  colorConverter,
];
