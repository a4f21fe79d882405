/**
 * Unified diffs with jsdiff (the `diff` package, kpdecker/jsdiff), for
 * change tracking (core/page-changes.ts). A diff that jsdiff gives up on (it
 * is bounded in time, since it runs on the event loop) becomes a whole
 * replacement: every previous line removed, every current line added.
 */
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import type { TextDiff } from '../../core/page-changes.js';

/** How long one diff may take on the event loop before it becomes a whole replacement. */
const DIFF_TIMEOUT_MS = 250;

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
  const patch = createTwoFilesPatch(labels.before, labels.after, before, after, undefined, undefined, {
    context: 3, timeout: DIFF_TIMEOUT_MS, headerOptions: FILE_HEADERS_ONLY,
  });
  return patch ?? replacement(before, after, labels);
};
