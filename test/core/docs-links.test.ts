/**
 * The README and docs/ hold together: every relative link of README.md,
 * docs/*.md and benchmarks/<name>/NOTES.md names a file that exists, and
 * every `#anchor` a heading of the page it points at; the README stays
 * short (the reference is in docs/).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const PAGES = [
  'README.md',
  ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ...readdirSync(join(root, 'benchmarks'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, 'benchmarks', d.name, 'NOTES.md')))
    .map((d) => `benchmarks/${d.name}/NOTES.md`),
].sort();

/** The text of a page outside its fenced code blocks. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
}

/** GitHub's anchors of a page's headings. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) out.add(m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-'));
  return out;
}

describe('README.md and docs/', () => {
  it('has the pages', () => {
    expect(PAGES).toContain('docs/README.md');
    expect(PAGES.length).toBeGreaterThanOrEqual(15);
  });

  it('keeps the README short: at most 320 lines', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(320);
  });

  it.each(PAGES)('%s: every relative link points at an existing file and heading', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const problems: string[] = [];
    for (const m of prose(text).replace(/`[^`\n]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const file = path === '' ? join(root, page) : join(root, dirname(page), path);
      if (!existsSync(file)) {
        problems.push(`${target}: no file ${relative(root, file)}`);
        continue;
      }
      if (anchor !== undefined && anchor !== '' && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) {
        problems.push(`${target}: no heading #${anchor} in ${relative(root, file)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
