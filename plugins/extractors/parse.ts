/**
 * Parses a fetched page once into the tree every extractor shares
 * (htmlparser2's DOM via domhandler). Extractors read it and never change
 * it, so they can run in any order on the same Page.
 *
 * htmlparser2 keeps its open-element stack top-first in an array and
 * shift/unshift-s it per tag, which is quadratic in nesting depth: 100k
 * nested <div>s take seconds. We swap in a stack with the same interface
 * backed by a bottom-first array (O(1) push/pop, plus a per-name count so
 * a stray close tag does not scan the whole stack).
 */
import { DomHandler, Parser } from 'htmlparser2';
import type { Document } from 'domhandler';
import type { Page } from '../sdk/scrape.js';

export interface PageSource {
  readonly url: string;
  readonly finalUrl: string;
  readonly statusCode: number;
  readonly contentType: string;
  readonly html: string;
}

/** The subset of Array htmlparser2's Parser uses on its stacks, with index 0 the top. */
class TopFirstStack<T> {
  private readonly items: T[] = [];
  private readonly counts = new Map<T, number>();

  get length(): number {
    return this.items.length;
  }

  set length(n: number) {
    // The parser only ever clears its stacks.
    if (n === 0) {
      this.items.length = 0;
      this.counts.clear();
    } else while (this.items.length > n) this.shift();
  }

  get 0(): T | undefined {
    return this.items[this.items.length - 1];
  }

  unshift(x: T): number {
    this.items.push(x);
    this.counts.set(x, (this.counts.get(x) ?? 0) + 1);
    return this.items.length;
  }

  shift(): T | undefined {
    const x = this.items.pop();
    if (x !== undefined) {
      const c = this.counts.get(x) ?? 0;
      if (c <= 1) this.counts.delete(x);
      else this.counts.set(x, c - 1);
    }
    return x;
  }

  indexOf(x: T): number {
    if (!this.counts.has(x)) return -1;
    const i = this.items.lastIndexOf(x);
    return i < 0 ? -1 : this.items.length - 1 - i;
  }
}

class LinearParser extends Parser {
  constructor(handler: DomHandler, options: ConstructorParameters<typeof Parser>[1]) {
    super(handler, options);
    const self = this as unknown as { stack: unknown; foreignContext: TopFirstStack<boolean> };
    self.stack = new TopFirstStack<string>();
    const foreign = new TopFirstStack<boolean>();
    foreign.unshift(false);
    self.foreignContext = foreign;
  }
}

const OPTIONS = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, xmlMode: false } as const;

export function parseHtml(html: string): Document {
  const handler = new DomHandler(undefined, OPTIONS);
  new LinearParser(handler, OPTIONS).end(html);
  return handler.root;
}

export function parsePage(source: PageSource): Page {
  const html = typeof source.html === 'string' ? source.html : '';
  return {
    url: source.url,
    finalUrl: source.finalUrl || source.url,
    statusCode: source.statusCode,
    contentType: source.contentType,
    html,
    document: parseHtml(html),
  };
}
