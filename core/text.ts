/**
 * String helpers that run in linear time on any input, for the places where
 * the obvious regular expression backtracks (scripts/redos-scan.ts and
 * test/security/redos.test.ts keep the code base free of such patterns).
 */

/**
 * Removes every `<!--...-->` comment, each replaced by `replacement`; an
 * unterminated comment is left as it is (as /<!--[\s\S]*?-->/g leaves it).
 * One pass: each character is looked at a bounded number of times.
 */
export function stripHtmlComments(s: string, replacement = ''): string {
  let at = s.indexOf('<!--');
  if (at === -1) return s;
  let out = '';
  let from = 0;
  while (at !== -1) {
    const end = s.indexOf('-->', at + 4);
    if (end === -1) break;
    out += s.slice(from, at) + replacement;
    from = end + 3;
    at = s.indexOf('<!--', from);
  }
  return out + s.slice(from);
}

/**
 * What `s.split(/\s*(?:SEP)\s*\/)` answers, in linear time: split on SEP
 * alone, then drop the white space each part has next to a separator (the
 * string's own ends keep theirs). The regex form backtracks quadratically on
 * a long run of white space with no separator after it.
 */
export function splitTrimmed(s: string, sep: RegExp): string[] {
  const parts = s.split(sep);
  const last = parts.length - 1;
  return parts.map((p, i) => {
    let q = p;
    if (i > 0) q = q.trimStart();
    if (i < last) q = q.trimEnd();
    return q;
  });
}

/** A UTF-16 surrogate code unit (text holding one unpaired has no UTF-8 encoding). */
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Whether `text` holds an unpaired UTF-16 surrogate (it then has no UTF-8 encoding). */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);
