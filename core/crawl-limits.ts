/**
 * A crawl's bounds and defaults, and the check of its path globs: what the
 * operation and the CLI share, without loading the crawler.
 */

export const MAX_CRAWL_PAGES = 10_000;
export const DEFAULT_CRAWL_PAGES = 100;
export const MAX_CRAWL_DEPTH = 50;
export const DEFAULT_CRAWL_DEPTH = 3;
/** The ledger and usage operation crawl pages are charged under (and the plans' rate-limit row). */
export const CRAWL_OPERATION = 'crawl';

/** Frontier rows a crawl keeps at most (pending, done and skipped URLs together). */
export const frontierLimit = (maxPages: number) => Math.min(100_000, Math.max(1_000, maxPages * 20));

/** What makes a path glob unusable (minimatch would read it literally, or it cannot match a path). */
export function globProblem(glob: string): string | undefined {
  if (glob.trim() !== glob || glob === '') return 'must not be empty or start or end with spaces';
  if (!glob.startsWith('/') && !glob.startsWith('*')) return 'must start with / (it is matched against the path, e.g. "/blog/**")';
  if (/[\u0000-\u0020\u007f]/.test(glob)) return 'must not contain spaces or control characters';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(glob) || glob.startsWith('//')) return 'is a path glob: leave out the scheme and host';
  let brackets = 0;
  let braces = 0;
  for (const c of glob) {
    if (c === '[') brackets++;
    else if (c === ']') brackets--;
    else if (c === '{') braces++;
    else if (c === '}') braces--;
    if (brackets < 0 || braces < 0) return 'has a closing bracket or brace without its opening one';
  }
  if (brackets !== 0 || braces !== 0) return 'has an unclosed [ or {';
  if (/\*{3,}/.test(glob)) return 'has *** (use * within a segment or ** across segments)';
  return undefined;
}
