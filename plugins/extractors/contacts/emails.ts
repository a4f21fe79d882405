/**
 * Email addresses for the contacts extractor: validation, the text scanner
 * (one text node at a time), the common obfuscations, mailto: links and
 * Cloudflare's email protection.
 *
 * The scanner looks for `@` with indexOf and walks outwards over a small
 * ASCII alphabet (no regular expression with an unbounded repeat runs over
 * page text), so a node of 100k `@` or a megabyte of letters costs linear
 * time. Addresses are ASCII only: a non-ASCII letter ends an address, which
 * is what separates `メールはinfo@example.jpまで` into `info@example.jp`;
 * internationalised (Unicode) addresses are not recognised.
 */

/** How an address was found; decides its confidence (see contacts.ts). */
export type EmailHow = 'mailto' | 'structured' | 'text' | 'protected' | 'obfuscated' | 'spelled';

export interface EmailHit {
  /** Normalised: local part as written, domain lower case. */
  readonly email: string;
  /** Start and end in the scanned text (for obfuscated forms: of the whole written form). */
  readonly start: number;
  readonly end: number;
  readonly how: EmailHow;
}

/** File extensions that follow `@` in asset names (`logo@2x.png`) and are not mail domains. */
const FILE_EXTENSIONS = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'webp', 'svg', 'bmp', 'ico', 'tif', 'tiff', 'avif', 'heic', 'css', 'js', 'mjs', 'cjs', 'json', 'xml',
  'html', 'htm', 'php', 'asp', 'aspx', 'jsp', 'txt', 'pdf', 'zip', 'gz', 'mp3', 'mp4', 'webm', 'mov', 'woff', 'woff2', 'ttf', 'eot',
  'otf', 'map', 'ts', 'tsx', 'jsx', 'vue', 'scss', 'less', 'wasm', 'lottie',
]);

/**
 * Second-level labels used as placeholders in forms and documentation
 * (RFC 2606's example.* and its translations, "yourdomain.com" ...): no
 * one reads mail there.
 */
const PLACEHOLDER_DOMAIN_LABELS = new Set([
  'example', 'examples', 'beispiel', 'exemple', 'ejemplo', 'esempio', 'voorbeeld', 'przyklad', 'domain', 'yourdomain', 'your-domain',
  'mydomain', 'yoursite', 'your-site', 'mysite', 'yourcompany', 'your-company', 'yourwebsite', 'your-website', 'sitename', 'company-domain',
  'test', 'email',
]);

/** Reserved top-level names (RFC 2606, RFC 6761) and private-network suffixes. */
const RESERVED_TLDS = new Set(['example', 'test', 'invalid', 'localhost', 'local', 'internal', 'lan', 'intranet', 'corp', 'home']);

/** Local parts that stand for "your address here", and the no-reply senders nobody can write back to. */
const PLACEHOLDER_LOCALS = new Set([
  'you', 'your', 'yourname', 'your.name', 'your-name', 'your_name', 'youremail', 'your.email', 'your-email', 'your_email', 'yourmail',
  'name', 'firstname', 'lastname', 'firstname.lastname', 'first.last', 'firstlast', 'vorname', 'nachname', 'vorname.nachname',
  'prenom', 'prenom.nom', 'nombre', 'nombre.apellido', 'username', 'user', 'someone', 'somebody', 'john.doe', 'jane.doe', 'johndoe',
  'janedoe', 'max.mustermann', 'erika.mustermann', 'test', 'xxx', 'xyz',
  'noreply', 'no-reply', 'no_reply', 'donotreply', 'do-not-reply', 'do_not_reply', 'mailer-daemon',
]);

const LOCAL_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD_RE = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
/** A long hexadecimal key (Sentry DSN public keys, tracking ids), not a mailbox. */
const HEX_KEY_RE = /^(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{16,}$/i;

/**
 * `local@domain` normalised (domain lower-cased), or null when it is not a
 * deliverable-looking address: bad syntax, a file name, a placeholder or
 * reserved domain, a no-reply sender, or an error-reporting key (Sentry).
 */
export function normalizeEmail(raw: string): string | null {
  const s = raw.trim();
  const at = s.lastIndexOf('@');
  if (at <= 0 || s.length > 254) return null;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1).toLowerCase();
  if (local.length > 64 || !LOCAL_RE.test(local)) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || domain.length > 253) return null;
  for (const l of labels) if (!LABEL_RE.test(l)) return null;
  const tld = labels[labels.length - 1]!;
  if (!TLD_RE.test(tld) || FILE_EXTENSIONS.has(tld) || RESERVED_TLDS.has(tld)) return null;
  // Retina asset names: icon@2x.webp, logo@1.5x.png.
  if (/^\d+(?:\.\d+)?x$/.test(labels[0]!)) return null;
  if (PLACEHOLDER_DOMAIN_LABELS.has(labels[labels.length - 2]!)) return null;
  const lowerLocal = local.toLowerCase();
  if (PLACEHOLDER_LOCALS.has(lowerLocal)) return null;
  if (HEX_KEY_RE.test(local) || labels.some((l) => l === 'sentry' || l.startsWith('sentry-')) || domain.endsWith('wixpress.com')) return null;
  return `${local}@${domain}`;
}

/** The key items are merged on: the whole address lower-cased. */
export const emailKey = (email: string): string => email.toLowerCase();

// ---------------------------------------------------------------- the scanner

/** A-Z a-z 0-9 . _ + - (the local-part characters accepted in running text). */
function isLocalChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 46 || c === 95 || c === 43 || c === 45;
}

function isDomainChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 46 || c === 45;
}

/** Shared per page: how many `@` may still be looked at. */
export interface ScanBudget {
  ats: number;
}

/** Plain addresses in `text` (one text node), in order. `how` labels them (full-width ＠ is passed in already replaced). */
export function scanPlain(text: string, budget: ScanBudget, how: EmailHow = 'text', out: EmailHit[] = []): EmailHit[] {
  let p = text.indexOf('@');
  while (p >= 0 && budget.ats-- > 0) {
    const hit = addressAt(text, p);
    if (hit !== undefined) out.push({ email: hit.email, start: hit.start, end: hit.end, how });
    p = text.indexOf('@', p + 1);
  }
  return out;
}

function addressAt(text: string, p: number): { email: string; start: number; end: number } | undefined {
  let start = p;
  while (start > 0 && isLocalChar(text.charCodeAt(start - 1))) {
    start--;
    if (p - start > 65) return undefined;
  }
  while (start < p && text.charCodeAt(start) === 46) start++;
  if (start === p || p - start > 64) return undefined;
  // URL authority: https://key@host, ftp://user:pass@host.
  if (text.startsWith('//', start - 2)) return undefined;
  if (text.charCodeAt(start - 1) === 58) {
    let k = start - 1;
    while (k > 0 && isLocalChar(text.charCodeAt(k - 1)) && start - k < 80) k--;
    if (text.startsWith('//', k - 2)) return undefined;
  }
  let end = p + 1;
  while (end < text.length && isDomainChar(text.charCodeAt(end))) {
    end++;
    if (end - p > 254) return undefined;
  }
  while (end > p + 1 && (text.charCodeAt(end - 1) === 46 || text.charCodeAt(end - 1) === 45)) end--;
  if (end === p + 1) return undefined;
  // scp-style git@host:path, or another @ glued on.
  const next = text.charCodeAt(end);
  if (next === 64) return undefined;
  if (next === 58 && /[\w/~]/.test(text.charAt(end + 1))) return undefined;
  const email = normalizeEmail(text.slice(start, end));
  return email === null ? undefined : { email, start, end };
}

// ---------------------------------------------------------------- obfuscations

// Bounded repeats only: these run over whole text nodes.
/** `[at]`, `(at)`, `{at}`, `<at>`, `(@)`, and the French, Spanish and German words for the sign. */
const AT_WORDS = 'at|@|a|ät|aet|arobase|arroba|chez|klammeraffe';
/** `[dot]`, `(dot)`, `[.]`, and the German, French, Spanish and Italian words for the point. */
const DOT_WORDS = 'dot|punkt|point|punto|\\.|dt|pt';
const BRACKETED = new RegExp(
  `\\s{0,3}(?:[\\[({<]\\s{0,2}(?:(${AT_WORDS})|(${DOT_WORDS}))\\s{0,2}[\\])}>])\\s{0,3}`,
  'giu',
);
const BRACKET_HINT = new RegExp(`[\\[({<]\\s{0,2}(?:${AT_WORDS}|${DOT_WORDS})\\s{0,2}[\\])}>]`, 'iu');

/** Words before a spelled-out " at " that are not a mailbox ("find us at acme dot com"). */
const SPELLED_STOP = new Set([
  'us', 'me', 'you', 'him', 'her', 'them', 'it', 'we', 'i', 'the', 'a', 'an', 'our', 'your', 'their', 'team', 'look', 'meet', 'find',
  'see', 'visit', 'stop', 'shop', 'live', 'work', 'is', 'are', 'was', 'be', 'been', 'available', 'online', 'located', 'based', 'here',
  'there', 'this', 'that', 'or', 'and', 'email', 'mail', 'write', 'reach', 'contact', 'arrive', 'arrives', 'open', 'starts',
]);
const SPELLED =
  /(?<![A-Za-z0-9._+-])([A-Za-z0-9_+-]{1,64}(?:(?:\.|\s{1,3}dot\s{1,3})[A-Za-z0-9_+-]{1,64}){0,3})\s{1,3}at\s{1,3}([A-Za-z0-9-]{1,63}(?:(?:\.|\s{1,3}dot\s{1,3})[A-Za-z0-9-]{1,63}){1,4})(?![A-Za-z0-9-])/gi;
const SPELLED_AT = /\sat\s/i;
const SPELLED_DOT = /\sdot\s/i;
const DOT_WORD = /\s{1,3}dot\s{1,3}/gi;

/** `s` cut to at most `n` characters, at a space when there is one near the end (no half address at the cut). */
export function cutAtSpace(s: string, n: number): string {
  if (s.length <= n) return s;
  const cut = s.lastIndexOf(' ', n);
  return s.slice(0, cut > n - 300 ? cut : n);
}

/** Longest stretch of one node the obfuscation patterns read. */
const OBFUSCATION_SCAN_CHARS = 100_000;

/**
 * Addresses written in an obfuscated form inside one text node: bracketed
 * `name [at] domain [dot] com` / `name(at)domain.com` (and `[.]`, `(punkt)`,
 * `(arroba)` ...), and spelled-out `name at domain dot com` (only with a
 * spelled-out " dot " in the domain, and not after a pronoun or verb).
 * Positions are those of the written form in `text`.
 */
export function scanObfuscated(text: string, budget: ScanBudget): EmailHit[] {
  const out: EmailHit[] = [];
  const t = cutAtSpace(text, OBFUSCATION_SCAN_CHARS);
  if (BRACKET_HINT.test(t)) {
    // Rewrite the bracketed signs, remembering where each rewritten stretch came from.
    const segments: Segment[] = [];
    let rewritten = '';
    let last = 0;
    BRACKETED.lastIndex = 0;
    for (let m = BRACKETED.exec(t); m !== null; m = BRACKETED.exec(t)) {
      if (m.index > last) segments.push({ r: rewritten.length, len: m.index - last, o: last, oEnd: m.index, sign: false });
      rewritten += t.slice(last, m.index);
      segments.push({ r: rewritten.length, len: 1, o: m.index, oEnd: m.index + m[0].length, sign: true });
      rewritten += m[1] !== undefined ? '@' : '.';
      last = m.index + m[0].length;
    }
    if (last < t.length) segments.push({ r: rewritten.length, len: t.length - last, o: last, oEnd: t.length, sign: false });
    rewritten += t.slice(last);
    for (const hit of scanPlain(rewritten, budget, 'obfuscated')) {
      const fi = segmentAt(segments, hit.start);
      const li = segmentAt(segments, hit.end - 1);
      if (fi < 0 || li < 0) continue;
      const first = segments[fi]!;
      const lastSeg = segments[li]!;
      // Only addresses that needed a rewritten sign; plain ones are the plain scanner's.
      let signed = false;
      for (let k = fi; k <= li && !signed; k++) signed = segments[k]!.sign;
      if (!signed) continue;
      const start = first.sign ? first.o : first.o + (hit.start - first.r);
      const end = lastSeg.sign ? lastSeg.oEnd : lastSeg.o + (hit.end - 1 - lastSeg.r) + 1;
      out.push({ ...hit, start, end });
    }
  }
  if (SPELLED_AT.test(t) && SPELLED_DOT.test(t)) {
    SPELLED.lastIndex = 0;
    for (let m = SPELLED.exec(t); m !== null; m = SPELLED.exec(t)) {
      const localWritten = m[1]!;
      const domainWritten = m[2]!;
      if (!/\sdot\s/i.test(domainWritten)) continue;
      const local = localWritten.replace(DOT_WORD, '.');
      if (SPELLED_STOP.has(local.toLowerCase())) continue;
      const email = normalizeEmail(`${local}@${domainWritten.replace(DOT_WORD, '.')}`);
      if (email !== null) out.push({ email, start: m.index, end: m.index + m[0].length, how: 'spelled' });
    }
  }
  return out;
}

interface Segment {
  /** Start and length in the rewritten text. */
  readonly r: number;
  readonly len: number;
  /** Its written form in the original. */
  readonly o: number;
  readonly oEnd: number;
  /** A rewritten sign ("@" or "."), else a copied stretch. */
  readonly sign: boolean;
}

/** The index of the segment holding rewritten index `i`, or -1. */
function segmentAt(segments: readonly Segment[], i: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = segments[mid]!;
    if (i < s.r) hi = mid - 1;
    else if (i >= s.r + s.len) lo = mid + 1;
    else return mid;
  }
  return -1;
}

// ---------------------------------------------------------------- links and attributes

export interface MailtoAddress {
  readonly email: string;
  /** The display name of `mailto:Dana Reyes <dana@acme.com>`, when given. */
  readonly displayName: string | undefined;
}

function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/%40/gi, '@');
  }
}

/** The addresses of a mailto: URL: %-escapes decoded, ?subject=... dropped, several recipients split. */
/**
 * `"Name" <address>` or `Name <address>`: the name (without its quotes) and
 * the address; null for anything else. What /^\s*"?([^"<]*?)"?\s*<([^>]+)>\s*$/
 * matches, in one pass (that pattern backtracks cubically on a long part).
 */
function angledAddress(part: string): { name: string; email: string } | null {
  const t = part.trim();
  if (!t.endsWith('>')) return null;
  const lt = t.indexOf('<');
  if (lt === -1) return null;
  const email = t.slice(lt + 1, -1);
  if (email === '' || email.includes('>')) return null;
  let name = t.slice(0, lt).trimEnd();
  if (name.startsWith('"')) name = name.slice(1);
  if (name.endsWith('"')) name = name.slice(0, -1);
  return name.includes('"') ? null : { name, email };
}

export function mailtoAddresses(href: string): MailtoAddress[] {
  const m = /^\s*mailto:([^?#]*)/i.exec(href);
  if (m === null) return [];
  const out: MailtoAddress[] = [];
  for (const part of percentDecode(m[1]!).split(/[,;]/).slice(0, 20)) {
    const angled = angledAddress(part);
    const email = normalizeEmail(angled !== null ? angled.email : part.trim().replace(/^<|>$/g, ''));
    if (email !== null) out.push({ email, displayName: angled !== null && angled.name.trim() !== '' ? angled.name.trim() : undefined });
  }
  return out;
}

/** Cloudflare's email protection (data-cfemail / #hex after /cdn-cgi/l/email-protection): the first byte is the XOR key. */
export function decodeCloudflare(hex: string): string | null {
  const h = hex.trim();
  if (h.length < 6 || h.length > 512 || h.length % 2 !== 0 || !/^[0-9a-f]+$/i.test(h)) return null;
  const key = parseInt(h.slice(0, 2), 16);
  const bytes = new Uint8Array(h.length / 2 - 1);
  for (let i = 2; i < h.length; i += 2) bytes[i / 2 - 1] = parseInt(h.slice(i, i + 2), 16) ^ key;
  return normalizeEmail(new TextDecoder().decode(bytes));
}
