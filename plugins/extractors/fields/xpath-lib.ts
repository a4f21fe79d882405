/**
 * The `xpath` package (DOM 3 XPath 1.0 in plain JavaScript), loaded through
 * require with the little of its API used here typed locally: its own
 * declarations reference TypeScript's DOM library, which would change the
 * types of the whole project (fetch, Response) if imported.
 */
import { createRequire } from 'node:module';

/** What evaluating an expression gives: a node set (toArray) or a string, number or boolean (stringValue). */
export interface XPathValue {
  toArray?: () => unknown[];
  stringValue(): string;
}

export interface ParsedXPath {
  evaluate(options: { node: unknown; isHtml?: boolean }): XPathValue;
}

interface XPathLib {
  parse(expression: string): ParsedXPath;
}

export const xpath = createRequire(import.meta.url)('xpath') as XPathLib;
