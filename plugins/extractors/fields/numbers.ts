/**
 * Numbers as pages write them: the first number in a text, read with the
 * page's locale in mind (`1.299,00 €` is 1299, `1,299.00` too, `12,5` is
 * 12.5). The rule, in order:
 * 1. The first run of digits, with the separators between them (. , space,
 *    no-break and thin spaces, ' and ’), a minus sign (- or −) right before it.
 * 2. Spaces and apostrophes are always grouping.
 * 3. Both . and , in it: the last of them to appear is the decimal separator.
 * 4. One of them, several times (1.000.000): grouping.
 * 5. One of them, once: followed by other than exactly three digits (12,5 or
 *    1.50 or 12,99): the decimal separator. Followed by exactly three
 *    digits (1.299 / 1,299): the locale decides: the decimal separator if it
 *    is the locale's (Intl.NumberFormat), else grouping; with no locale,
 *    . is decimal and , grouping (as in English).
 */

const NUMBER = /(?:[-−]\s?)?\d(?:[\d.,'’\u00a0\u202f\u2009 ]*\d)?/;

const decimalCache = new Map<string, '.' | ',' | undefined>();

/** The decimal separator of a BCP 47 locale ('.' or ','), undefined when the locale is unusable. */
export function decimalSeparatorOf(locale: string | undefined): '.' | ',' | undefined {
  if (locale === undefined || locale === '') return undefined;
  const cached = decimalCache.get(locale);
  if (cached !== undefined || decimalCache.has(locale)) return cached;
  let sep: '.' | ',' | undefined;
  try {
    const part = new Intl.NumberFormat(locale).formatToParts(1.5).find((p) => p.type === 'decimal')?.value;
    sep = part === ',' || part === '٫' ? ',' : part === '.' ? '.' : undefined;
  } catch {
    sep = undefined;
  }
  if (decimalCache.size > 500) decimalCache.clear();
  decimalCache.set(locale, sep);
  return sep;
}

/** The first number in `text`, or null when there is none. */
export function parseNumber(text: string, locale: string | undefined): number | null {
  const m = NUMBER.exec(text.length > 10_000 ? text.slice(0, 10_000) : text);
  if (m === null) return null;
  let token = m[0];
  let negative = false;
  if (token.startsWith('-') || token.startsWith('−')) {
    negative = true;
    token = token.slice(1).trim();
  }
  // Spaces and apostrophes group digits; drop them (a space may also end the number: "12 items 3" is read as 123 only when the gap is a group of three).
  token = token.replace(/[\s'’\u00a0\u202f\u2009]+(?=\d{3}(?!\d))/g, '');
  const cut = /[\s'’\u00a0\u202f\u2009]/.exec(token);
  if (cut !== null) token = token.slice(0, cut.index);
  const lastDot = token.lastIndexOf('.');
  const lastComma = token.lastIndexOf(',');
  let decimal: '.' | ',' | undefined;
  if (lastDot >= 0 && lastComma >= 0) decimal = lastDot > lastComma ? '.' : ',';
  else if (lastDot >= 0 || lastComma >= 0) {
    const sep = lastDot >= 0 ? '.' : ',';
    const count = token.split(sep).length - 1;
    if (count === 1) {
      const after = token.length - token.indexOf(sep) - 1;
      if (after !== 3) decimal = sep;
      else {
        const local = decimalSeparatorOf(locale);
        decimal = local !== undefined ? (local === sep ? sep : undefined) : (sep === '.' ? '.' : undefined);
      }
    }
  }
  let digits: string;
  if (decimal === undefined) digits = token.replace(/[.,]/g, '');
  else {
    const at = token.lastIndexOf(decimal);
    digits = `${token.slice(0, at).replace(/[.,]/g, '')}.${token.slice(at + 1).replace(/[.,]/g, '')}`;
  }
  if (!/^\d+(?:\.\d*)?$/.test(digits)) return null;
  const n = Number(digits);
  if (!Number.isFinite(n)) return null;
  return negative ? -n : n;
}

