/**
 * Unified diffs with jsdiff (the `diff` package, kpdecker/jsdiff), for
 * change tracking (core/page-changes.ts). The `diff` package is used when
 * it is installed; until then, the copy of jsdiff 9.0.0 that playwright-core
 * (a dependency already) bundles and exports (`playwright-core/lib/utilsBundle`,
 * its `diff` namespace: the same library, the same API). Loaded on first
 * use: the bundle is large. A diff that jsdiff gives up on (it is bounded in
 * time, since it runs on the event loop) becomes a whole replacement: every
 * previous line removed, every current line added.
 */
import { createRequire } from 'node:module';
import type { TextDiff } from '../../core/page-changes.js';

interface JsDiff {
  createTwoFilesPatch(
    oldFileName: string, newFileName: string, oldStr: string, newStr: string, oldHeader?: string, newHeader?: string,
    options?: { readonly context?: number; readonly timeout?: number; readonly headerOptions?: unknown },
  ): string | undefined;
  readonly FILE_HEADERS_ONLY: unknown;
}

/** How long one diff may take on the event loop before it becomes a whole replacement. */
const DIFF_TIMEOUT_MS = 250;

let loaded: JsDiff | undefined;

function jsdiff(): JsDiff {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  try {
    loaded = require('diff') as JsDiff;
  } catch {
    loaded = (require('playwright-core/lib/utilsBundle') as { diff: JsDiff }).diff;
  }
  return loaded;
}

/** Lines of a text for a hunk ('' has none; a last line without a newline is marked as diff does). */
function hunkLines(text: string, sign: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  const ended = lines[lines.length - 1] === '';
  if (ended) lines.pop();
  const out = lines.map((l) => sign + l);
  if (!ended) out.push('\\ No newline at end of file');
  return out;
}

/** A unified diff replacing all of `before` with all of `after`. */
function replacement(before: string, after: string, labels: { readonly before: string; readonly after: string }): string {
  const old = hunkLines(before, '-');
  const now = hunkLines(after, '+');
  const count = (lines: string[]) => lines.filter((l) => !l.startsWith('\\')).length;
  const range = (n: number) => (n === 0 ? '0,0' : `1,${n}`);
  return [`--- ${labels.before}`, `+++ ${labels.after}`, `@@ -${range(count(old))} +${range(count(now))} @@`, ...old, ...now, ''].join('\n');
}

export const unifiedDiff: TextDiff = (before, after, labels) => {
  const d = jsdiff();
  const patch = d.createTwoFilesPatch(labels.before, labels.after, before, after, undefined, undefined, {
    context: 3, timeout: DIFF_TIMEOUT_MS, headerOptions: d.FILE_HEADERS_ONLY,
  });
  return patch ?? replacement(before, after, labels);
};
