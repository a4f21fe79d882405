import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { DomHandler, Parser } from 'htmlparser2';
import type { AnyNode } from 'domhandler';
import { describe, expect, it } from 'vitest';
import { parseHtml } from '../../plugins/sdk/parse.js';
import { requireSharedData } from '../support/shared-data.js';
import { BENCHMARK_DIR } from './support.js';

// parse.ts's FastTokenizer replaces three methods of htmlparser2's tokenizer
// (internals, not API): it must give exactly the tree the stock one gives.
const OPTIONS = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, xmlMode: false } as const;

function stockTree(html: string): string {
  const handler = new DomHandler(undefined, OPTIONS);
  new Parser(handler, OPTIONS).end(html);
  return dump(handler.root);
}

/** Every node in document order: type, name, data, attributes. */
function dump(root: AnyNode): string {
  const out: string[] = [];
  const stack: AnyNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()! as AnyNode & { name?: string; data?: string; attribs?: Record<string, string>; children?: AnyNode[] };
    out.push(`${n.type}|${n.name ?? ''}|${n.data ?? ''}|${JSON.stringify(n.attribs ?? null)}`);
    for (let i = (n.children?.length ?? 0) - 1; i >= 0; i--) stack.push(n.children![i]!);
  }
  return out.join('\n');
}

const ATOMS = [
  '<', '>', '&', '&amp;', '&lt', '&#x41;', '&#65', '&notin;', '&nosuch;', '"', "'", '=', ' ', '\n', 'a', 'é', '\u2028', '/', '!', '-', '--',
  '<!--', '-->', '<![CDATA[', ']]>', '<script>', '</script>', '<style>', '</style>', '<title>', '</title>', '<textarea>', '</textarea>',
  '<div class="x">', '<p a=b c="d&amp;e" f=\'g&lt;\'>', '</p>', '</div>', '<a href="?a=1&b=2">', '</a>', '<br/>', '<img src=x alt="&quot;q">',
  '<svg>', '</svg>', '<?php x ?>', '<!doctype html>', '</scr', 'ipt>', '<scr',
];

describe('FastTokenizer', () => {
  it('builds the same tree as htmlparser2 on random markup', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let k = 0; k < 5000; k++) {
      let html = '';
      for (let i = 1 + rnd(40); i > 0; i--) html += ATOMS[rnd(ATOMS.length)];
      expect(dump(parseHtml(html)), html).toBe(stockTree(html));
    }
  });

  it('builds the same tree as htmlparser2 on the benchmark pages', () => {
    requireSharedData();
    const files = readdirSync(`${BENCHMARK_DIR}html`).filter((f) => f.endsWith('.html.gz'));
    expect(files.length).toBeGreaterThan(100);
    for (const f of files) {
      const html = gunzipSync(readFileSync(`${BENCHMARK_DIR}html/${f}`)).toString('utf8');
      expect(dump(parseHtml(html)) === stockTree(html), f).toBe(true);
    }
  });
});
