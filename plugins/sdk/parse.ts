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
 *
 * Its tokenizer also reads text, attribute values, scripts, styles and
 * comments one character per turn of its state machine, though only a few
 * characters matter there (`<` and `&` in text, the quote and `&` in a
 * value, `<` in a script). FastTokenizer (given to the parser through its
 * `Tokenizer` option) jumps to the next character that matters with
 * String.prototype.indexOf instead: the same tokens, about 30% less time
 * on the pages of the Zyte article benchmark.
 */
import { DomHandler, Parser, Tokenizer } from 'htmlparser2';
import type { Document } from 'domhandler';
import type { PageSource } from '../../core/extraction.js';
import type { Page } from './scrape.js';

export type { PageSource };

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

/** The tokenizer's members FastTokenizer uses (not in htmlparser2's public types; htmlparser2 9). */
interface TokenizerState {
  buffer: string;
  index: number;
  offset: number;
  decodeEntities: boolean;
  fastForwardTo(c: number): boolean;
  stateText(c: number): void;
  handleInAttributeValue(c: number, quote: number): void;
}

const LT = 0x3c;
const AMP = 0x26;
const DQ = 0x22;
const SQ = 0x27;
/** The characters NextOf tracks. */
const TRACKED = new Set([LT, AMP, DQ, SQ]);

/** Where the next `<`, `&`, `"` and `'` are in the tokenizer's buffer, remembered so no stretch is scanned twice. */
class NextOf {
  private buffer = '';
  private offset = -1;
  // Absolute indexes; -1: not looked for yet; Infinity: none left.
  private lt = -1;
  private amp = -1;
  private dq = -1;
  private sq = -1;

  /** The absolute index of the next `c` (one of the four) at or after absolute index `from`; Infinity when there is none. */
  find(t: TokenizerState, c: number, from: number): number {
    if (t.buffer !== this.buffer || t.offset !== this.offset) {
      this.buffer = t.buffer;
      this.offset = t.offset;
      this.lt = this.amp = this.dq = this.sq = -1;
    }
    const known = c === LT ? this.lt : c === AMP ? this.amp : c === DQ ? this.dq : this.sq;
    if (known >= from) return known;
    const i = t.buffer.indexOf(c === LT ? '<' : c === AMP ? '&' : c === DQ ? '"' : "'", from - t.offset);
    const found = i < 0 ? Infinity : i + t.offset;
    if (c === LT) this.lt = found;
    else if (c === AMP) this.amp = found;
    else if (c === DQ) this.dq = found;
    else this.sq = found;
    return found;
  }
}

export class FastTokenizer extends Tokenizer {
  readonly next = new NextOf();
}

{
  const base = Tokenizer.prototype as unknown as TokenizerState;
  const fast = FastTokenizer.prototype as unknown as TokenizerState & { next: NextOf };
  /** Put the index just before `stop` (the state machine steps onto it next), or at the last character. */
  const skipTo = (t: TokenizerState, stop: number): void => {
    t.index = Math.min(stop, t.buffer.length + t.offset) - 1;
  };
  fast.fastForwardTo = function fastForwardTo(this: TokenizerState & { next: NextOf }, c: number): boolean {
    // The tokenizer fast-forwards to `<` (scripts, styles) and to the first character of `-->` and `]]>`.
    if (!TRACKED.has(c)) {
      const i = this.buffer.indexOf(String.fromCharCode(c), this.index + 1 - this.offset);
      skipTo(this, i < 0 ? Infinity : i + this.offset + 1);
      return i >= 0;
    }
    const at = this.next.find(this, c, this.index + 1);
    skipTo(this, at === Infinity ? Infinity : at + 1);
    return at !== Infinity;
  };
  fast.stateText = function stateText(this: TokenizerState & { next: NextOf }, c: number): void {
    // Only `<` and `&` do anything in text (`&` only when decoding entities).
    if (c === LT || c === AMP || !this.decodeEntities) {
      base.stateText.call(this, c);
      return;
    }
    skipTo(this, Math.min(this.next.find(this, LT, this.index), this.next.find(this, AMP, this.index)));
  };
  fast.handleInAttributeValue = function handleInAttributeValue(this: TokenizerState & { next: NextOf }, c: number, quote: number): void {
    // Only the closing quote and `&` do anything in a quoted value.
    if (c === quote || c === AMP || !this.decodeEntities) {
      base.handleInAttributeValue.call(this, c, quote);
      return;
    }
    skipTo(this, Math.min(this.next.find(this, quote, this.index), this.next.find(this, AMP, this.index)));
  };
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

const OPTIONS = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, xmlMode: false, Tokenizer: FastTokenizer } as const;

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
