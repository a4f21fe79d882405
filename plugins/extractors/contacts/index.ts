/**
 * contacts: the email addresses and phone numbers a page gives, with the
 * person or company they belong to (issue 12; the `contacts` field of
 * search results with include_contacts).
 *
 * ```
 * ContactItem {
 *   email:          string | null  local part as written, domain lower case
 *   name:           string | null  the person's name
 *   company:        string | null  their organisation, else the site's (see below)
 *   source_url:     string         the page it was found on (its final URL)
 *   phone:          string | null  E.164 (+4930123456)
 *   phone_national: string | null  the same number in its country's national format (030 123456)
 *   job_title:      string | null
 *   confidence:     number         0..1, see below
 * }
 * ```
 * One item per person or address: an email and the phones found with it
 * (in the same schema.org node, hCard, or small block of the page) make
 * one item; items with the same email, or the same phone and no
 * conflicting email, are merged, filling each other's gaps (the first
 * value found wins; structured data is read first). At most 200 items.
 *
 * Where addresses come from (contacts/emails.ts, contacts/phones.ts):
 * - schema.org Person / Organization / ContactPoint (JSON-LD, Microdata,
 *   RDFa via schema-data.ts) and hCard (vcard / h-card), with names, job
 *   titles and companies (contacts/structured.ts);
 * - mailto: links (%-escapes decoded, ?subject=... dropped), tel: and
 *   callto: links, Cloudflare-protected addresses (data-cfemail);
 * - the page's visible text, each text node on its own (so `<td>sales</td>
 *   <td>bob@x.com</td>` never reads as salesbob@x.com), entities decoded by
 *   the parser (&#64;), zero-width characters dropped, and the common
 *   obfuscations: `[at]`/`(at)`/`{at}`/`(@)` and `[dot]`/`(dot)`/`[.]` in
 *   several languages, full-width ＠, and `name at domain dot com` (see
 *   emails.ts for when). Not read: <script>, <style>, <template>, <svg>,
 *   <code>, <kbd>, <samp>, <var>, form controls, hidden elements (hidden,
 *   display:none, visibility:hidden: honeypot addresses), attributes.
 * Not addresses: asset names (logo@2x.png), URL credentials and Sentry
 *   DSNs (https://key@o1.ingest.sentry.io), long hex keys, placeholder and
 *   reserved domains (example.com, *.test, yourdomain.com, beispiel.de ...),
 *   placeholder and no-reply mailboxes (you@, firstname.lastname@, noreply@).
 * Phones in text are validated with libphonenumber-js (max metadata) in
 *   the default region: the `country` option, else the page's language
 *   region, og:locale region, country-code TLD, or the country of its
 *   language (phones.ts); without one only +CC numbers are found. Dates,
 *   prices, ZIP codes, order numbers, ISBNs, IP addresses and versions are
 *   turned away by validation plus the checks listed in phones.ts.
 *
 * Who (contacts/people.ts): structured data first; else a mailto display
 * name or link text shaped like a name; else the text around the address,
 * within its "unit": the nearest block element (climbing past inline ones
 * and table cells), widened up to 4 levels while that adds no other email,
 * at most 2 phones and stays under 400 characters, and never past a record
 * element (li, tr, article, or a class like card/member/staff/profile):
 * a label on the line ("Press contact: Dana Reyes", "Ansprechpartnerin:"),
 * the name before the address on its line ("Dana Reyes, Head of PR -
 * dana@..."), or a signature block above it (name, title, company lines).
 * A unit holding several people's emails is read line by line.
 * Company fallback: og:site_name, else the page's schema.org Organization
 * name, for items whose email is at the site's own domain (or that have no
 * email): a gmail address on acme.com is not Acme's.
 *
 * confidence, of the item's address (the best evidence for its email or
 * phone; names and companies are best effort and do not change it):
 * - 1.0  structured: a schema.org or hCard value, a mailto: link, a tel:
 *        link (a number that is only "possible", not valid, for its region: 0.8)
 * - 0.9  an email in plain text, or Cloudflare-protected; a phone in text
 *        with a phone label before or after it (Tel:, Phone, Telefon, 電話,
 *        "202-628-8500 tel" ...)
 * - 0.8  a bracketed obfuscation ([at], (dot), ＠); a phone in text in
 *        international format (+CC) without a label
 * - 0.7  a phone in text in national format without a label (read in
 *        the default region)
 * - 0.6  a spelled-out address (name at domain dot com)
 *
 * An item's email and phone may each have been seen several times; its
 * confidence is the best sighting's, so an address linked once with
 * mailto: and repeated in text is 1.0.
 *
 * Bounded work (CONTACTS_LIMITS; `options.stats` reports what was used):
 * 2M characters of text scanned for emails (the obfuscation patterns read
 * at most 100k per text node), 200k for phones (windows of digits only are
 * handed to libphonenumber, at most 1,000 searches), 20,000 `@` signs, 500
 * address sightings (3 per address) for the context pass, 1M DOM nodes,
 * 200 items; every walk is iterative, units are found within 16 ancestor
 * levels, and only units under 3,000 characters are rendered.
 */
import { defineExtractor, type Page } from '../../sdk/scrape.js';
import { HTML_FILTER } from '../../sdk/scrape.js';
import { attrTrim, boundedText, collapse, isElement, isHidden, isTextNode, structure, type AnyNode, type Element } from '../../sdk/dom.js';
import { extractSchemaData } from '../schema-data-reader.js';
import { BLOCK_TAGS, defaultSkip, renderText } from '../../sdk/text.js';
import { cutAtSpace, decodeCloudflare, emailKey, mailtoAddresses, scanObfuscated, scanPlain, type EmailHow, type ScanBudget } from './emails.js';
import { defaultRegion, parsePhoneValue, scanPhones, telNumber, type ParsedPhone, type PhoneBudget } from './phones.js';
import { guessPerson, personName, type PersonGuess } from './people.js';
import { cardRecords, isCardRoot, schemaRecords, type ContactRecord } from './structured.js';

export interface ContactItem {
  email: string | null;
  name: string | null;
  company: string | null;
  source_url: string;
  /** E.164. */
  phone: string | null;
  phone_national: string | null;
  job_title: string | null;
  /** 0..1: how sure the email or phone is a real contact on the page (see the module comment). */
  confidence: number;
}

export interface ContactsOptions {
  /** ISO 3166-1 alpha-2 region national-format numbers are read in (the request's country). */
  readonly defaultCountry?: string | undefined;
  /** Filled with what the extraction cost (tests and benchmarks check the bounds with it). */
  readonly stats?: ContactsStats | undefined;
}

/** The work one extraction did, against the bounds in the module comment. */
export interface ContactsStats {
  /** DOM nodes the scan visited. */
  nodes: number;
  /** Characters of text read for emails. */
  textChars: number;
  /** `@` signs looked at. */
  ats: number;
  /** libphonenumber searches. */
  phoneSearches: number;
  /** Address sightings kept for the context pass. */
  sightings: number;
}

/** The bounds, for tests and benchmarks. */
export const CONTACTS_LIMITS = {
  items: 200, nodes: 1_000_000, textChars: 2_000_000, ats: 20_000, phoneSearches: 1_000, sightings: 500,
} as const;

export const MAX_CONTACTS_PER_PAGE = CONTACTS_LIMITS.items;
const MAX_HITS = CONTACTS_LIMITS.sightings;
const SIGHTINGS_PER_ADDRESS = 3;
const EMAIL_TEXT_CHARS = CONTACTS_LIMITS.textChars;
const PHONE_TEXT_CHARS = 200_000;
const PHONE_SEARCHES = CONTACTS_LIMITS.phoneSearches;
const MAX_ATS = CONTACTS_LIMITS.ats;
const MAX_NODES = CONTACTS_LIMITS.nodes;
/** A unit is widened while it stays this short. */
const UNIT_CHARS = 400;
/** Units longer than this are not rendered: only the address's own text node is read. */
const RENDER_CHARS = 3_000;
const ANCESTOR_LEVELS = 16;

const EMAIL_CONFIDENCE: Readonly<Record<EmailHow, number>> = {
  mailto: 1, structured: 1, text: 0.9, protected: 0.9, obfuscated: 0.8, spelled: 0.6,
};
const TEL_VALID = 1;
const TEL_POSSIBLE = 0.8;
const PHONE_LABELLED = 0.9;
const PHONE_INTERNATIONAL = 0.8;
const PHONE_NATIONAL = 0.7;

/** Elements whose text is never a contact on the page. */
const SKIP_TAGS = new Set([
  'script', 'style', 'template', 'svg', 'math', 'head', 'title', 'iframe', 'object', 'embed', 'canvas', 'textarea', 'select', 'datalist',
  'option', 'code', 'kbd', 'samp', 'var', 'audio', 'video', 'map', 'meta', 'link', 'base', 'noembed', 'noframes', 'xmp', 'plaintext',
]);
/** Elements that are one record of a list: a unit is never widened past them. */
const RECORD_TAGS = new Set(['li', 'tr', 'article', 'address', 'dialog']);
const RECORD_CLASS = /(?:^|[\s_-])(?:card|member|person|people|staff|team-?member|employee|profile|author|speaker|vcard|h-card|contact-?(?:item|card|person)|bio)(?:$|[\s_-])/i;

const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff\u00ad]/g;
const stripZeroWidth = (s: string): string => (/[\u200b-\u200d\u2060\ufeff\u00ad]/.test(s) ? s.replace(ZERO_WIDTH, '') : s);

/** One sighting of an address on the page. */
interface Hit {
  readonly key: string;
  readonly email: string | null;
  readonly phone: ParsedPhone | null;
  /** The text node it was read from, or the link/element carrying it. */
  readonly at: AnyNode;
  /** Text to find it by in its unit's rendered lines ('' when there is none). */
  readonly anchor: string;
  /** A name the markup gives with it (mailto display name, link text shaped like a name). */
  readonly nameHint: string | null;
}

const parentElement = (n: AnyNode): Element | null => {
  const p = n.parent;
  return p !== null && isElement(p) ? p : null;
};

/** Text of an element, collapsed, bounded. */
function shortText(el: Element, max = 200): string {
  return stripZeroWidth(collapse(boundedText(el, max, 200, SKIP_TAGS)));
}

/** The page's registrable domain, roughly (acme.co.uk, acme.com). */
function siteOf(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, '').replace(/^www\./, '').split('.');
  const n = labels.length;
  if (n >= 3 && labels[n - 1]!.length === 2 && /^(?:co|com|net|org|gov|edu|ac|or|ne|go|gob|nic|mil|ltd|plc|sch|asn|id|info|biz)$/.test(labels[n - 2]!)) {
    return labels.slice(-3).join('.');
  }
  return labels.slice(-2).join('.');
}

// ---------------------------------------------------------------- merging

/** Items keyed by email and phone; adding fills gaps (the first value found wins). */
class ItemSet {
  readonly items: ContactItem[] = [];
  private readonly byEmail = new Map<string, ContactItem>();
  private readonly byPhone = new Map<string, ContactItem>();

  constructor(private readonly limit: number) {}

  add(x: ContactItem): void {
    if (x.email === null && x.phone === null) return;
    const ek = x.email === null ? undefined : emailKey(x.email);
    let target = ek === undefined ? undefined : this.byEmail.get(ek);
    if (target === undefined && x.phone !== null) {
      const t = this.byPhone.get(x.phone);
      // A shared switchboard number does not make two people one.
      if (t !== undefined && (t.email === null || ek === undefined || emailKey(t.email) === ek)) target = t;
    }
    if (target === undefined) {
      this.push({ ...x });
      return;
    }
    if (target.email === null && ek !== undefined && !this.byEmail.has(ek)) {
      target.email = x.email;
      this.byEmail.set(ek, target);
    }
    let otherPhone = false;
    if (x.phone !== null && target.phone !== x.phone && !this.byPhone.has(x.phone)) {
      if (target.phone === null) {
        target.phone = x.phone;
        target.phone_national = x.phone_national;
        this.byPhone.set(x.phone, target);
      } else otherPhone = true;
    }
    target.name ??= x.name;
    target.company ??= x.company;
    target.job_title ??= x.job_title;
    target.confidence = Math.max(target.confidence, x.confidence);
    // A second number of the same person: an item of its own.
    if (otherPhone) this.push({ ...x, email: null });
  }

  private push(x: ContactItem): void {
    if (this.items.length >= this.limit) return;
    this.items.push(x);
    if (x.email !== null && !this.byEmail.has(emailKey(x.email))) this.byEmail.set(emailKey(x.email), x);
    if (x.phone !== null && !this.byPhone.has(x.phone)) this.byPhone.set(x.phone, x);
  }
}

/**
 * Contacts from several pages as one list: items with the same email, or
 * the same phone and no conflicting email, become one, keeping the first
 * source_url and filling gaps from the later ones; confidence is the highest.
 */
export function mergeContacts(pages: readonly (readonly ContactItem[])[]): ContactItem[] {
  const set = new ItemSet(Infinity);
  for (const items of pages) for (const item of items) set.add(item);
  return set.items;
}

// ---------------------------------------------------------------- the page

interface Signals {
  htmlLang: string | undefined;
  contentLanguage: string | undefined;
  ogLocale: string | undefined;
  siteName: string | undefined;
}

function readHead(page: Page): Signals {
  const s: Signals = { htmlLang: undefined, contentLanguage: undefined, ogLocale: undefined, siteName: undefined };
  const doc = page.document;
  for (const c of doc.children) {
    if (isElement(c) && c.name === 'html') {
      s.htmlLang = attrTrim(c, 'lang') ?? attrTrim(c, 'xml:lang');
      break;
    }
  }
  const { head } = structure(doc);
  if (head === undefined) return s;
  const stack: AnyNode[] = [...head.children];
  let nodes = 5_000;
  while (stack.length > 0 && nodes-- > 0) {
    const n = stack.pop()!;
    if (!isElement(n)) continue;
    if (n.name === 'meta') {
      const key = (n.attribs.property ?? n.attribs.name ?? n.attribs['http-equiv'] ?? '').trim().toLowerCase();
      const content = attrTrim(n, 'content');
      if (content === undefined) continue;
      // A site name that is a URL or a handle (https://www..., @site) names no company.
      if (key === 'og:site_name' && !/:\/\/|^@|^www\./i.test(content)) s.siteName ??= collapse(content).slice(0, 200);
      else if (key === 'og:locale') s.ogLocale ??= content;
      else if (key === 'content-language') s.contentLanguage ??= content.split(',')[0]!.trim();
    } else if (n.name !== 'script' && n.name !== 'style' && n.name !== 'template') stack.push(...n.children);
  }
  return s;
}

/** Reads the page once: sightings of addresses, and the hCard roots. */
class Scanner {
  readonly hits: Hit[] = [];
  readonly cards: Element[] = [];
  /** The best confidence seen per address key. */
  readonly confidence = new Map<string, number>();
  private readonly sightings = new Map<string, number>();
  private readonly mailtos = new Map<string, ReturnType<typeof mailtoAddresses>>();
  readonly ats: ScanBudget = { ats: MAX_ATS };
  readonly phones: PhoneBudget = { chars: PHONE_TEXT_CHARS, parses: PHONE_SEARCHES, searches: 0 };
  emailChars = EMAIL_TEXT_CHARS;
  nodes = 0;
  /** The last characters of text before the current node (labels like <dt>Telefon</dt>). */
  private tail = '';

  constructor(private readonly region: ReturnType<typeof defaultRegion>) {}

  scan(root: Page['document']): void {
    const stack: AnyNode[] = [];
    for (let i = root.children.length - 1; i >= 0; i--) stack.push(root.children[i]!);
    while (stack.length > 0 && this.nodes < MAX_NODES && this.hits.length < MAX_HITS) {
      const n = stack.pop()!;
      this.nodes++;
      if (isTextNode(n)) {
        this.text(n);
        continue;
      }
      if (!isElement(n)) {
        if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
        continue;
      }
      if (SKIP_TAGS.has(n.name) || isHidden(n)) continue;
      this.element(n);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }

  private add(hit: Hit, confidence: number): void {
    this.confidence.set(hit.key, Math.max(this.confidence.get(hit.key) ?? 0, confidence));
    const seen = this.sightings.get(hit.key) ?? 0;
    if (seen >= SIGHTINGS_PER_ADDRESS || this.hits.length >= MAX_HITS) return;
    this.sightings.set(hit.key, seen + 1);
    this.hits.push(hit);
  }

  private addEmail(email: string, how: EmailHow, at: AnyNode, anchor: string, nameHint: string | null): void {
    this.add({ key: emailKey(email), email, phone: null, at, anchor, nameHint }, EMAIL_CONFIDENCE[how]);
  }

  private element(el: Element): void {
    if (isCardRoot(el)) this.cards.push(el);
    const cf = el.attribs['data-cfemail'];
    if (cf !== undefined) {
      const email = decodeCloudflare(cf);
      if (email !== null) this.addEmail(email, 'protected', el, shortText(el), null);
    }
    if (el.name !== 'a' && el.name !== 'area') return;
    const href = el.attribs.href;
    if (href === undefined) return;
    const h = href.trim();
    if (/^mailto:/i.test(h)) {
      const text = shortText(el);
      const linkName = personName(text);
      let addresses = this.mailtos.get(h);
      if (addresses === undefined) {
        addresses = mailtoAddresses(h);
        // Pages repeat the same link; a hostile one repeats it 100k times.
        if (this.mailtos.size < 1_000) this.mailtos.set(h, addresses);
      }
      for (const a of addresses) this.addEmail(a.email, 'mailto', el, text, (a.displayName !== undefined ? personName(a.displayName) : null) ?? linkName);
    } else if (/^(?:tel|callto):/i.test(h)) {
      const number = telNumber(h);
      const p = number === undefined ? undefined : parsePhoneValue(number, this.region);
      if (p !== undefined) {
        const text = shortText(el);
        this.add({ key: p.e164, email: null, phone: p, at: el, anchor: text, nameHint: personName(text) }, p.valid ? TEL_VALID : TEL_POSSIBLE);
      }
    } else {
      const cf2 = /\/cdn-cgi\/l\/email-protection#([0-9a-f]+)/i.exec(h);
      const email = cf2 === null ? null : decodeCloudflare(cf2[1]!);
      if (email !== null) this.addEmail(email, 'protected', el, shortText(el), null);
    }
  }

  private text(node: AnyNode & { data: string }): void {
    if (this.emailChars <= 0 || node.data === '') return;
    const raw = cutAtSpace(node.data, this.emailChars);
    this.emailChars -= raw.length;
    const data = stripZeroWidth(raw);
    const found = new Set<string>();
    const fullWidth = data.includes('＠');
    if (fullWidth || data.includes('@')) {
      const t = fullWidth ? data.replace(/＠/g, '@') : data;
      for (const hit of scanPlain(t, this.ats)) {
        const written = data.slice(hit.start, hit.end);
        found.add(emailKey(hit.email));
        this.addEmail(hit.email, written.includes('＠') ? 'obfuscated' : 'text', node, written, null);
      }
    }
    for (const hit of scanObfuscated(data, this.ats)) {
      if (found.has(emailKey(hit.email))) continue;
      found.add(emailKey(hit.email));
      this.addEmail(hit.email, hit.how, node, data.slice(hit.start, hit.end), null);
    }
    if (hasDigits(data, 7)) {
      for (const p of scanPhones(data, this.tail, this.region, this.phones)) {
        const confidence = p.labelled ? PHONE_LABELLED : p.international ? PHONE_INTERNATIONAL : PHONE_NATIONAL;
        this.add({ key: p.e164, email: null, phone: p, at: node, anchor: data.slice(p.start, p.end), nameHint: null }, confidence);
      }
    }
    const end = data.length > 200 ? data.slice(-200) : data;
    this.tail = (this.tail + ' ' + end).slice(-80);
  }
}

function hasDigits(s: string, n: number): boolean {
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 0xff10 && c <= 0xff19)) {
      if (++count >= n) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- units: who an address in the text belongs to

class Units {
  private readonly stats = new Map<Element, { emails: Set<string>; phones: Set<string> }>();
  private readonly lengths = new Map<Element, number>();
  private readonly lines = new Map<Element, string[] | null>();

  constructor(hits: readonly Hit[]) {
    for (const h of hits) {
      let el = this.base(h.at);
      for (let i = 0; el !== null && i < ANCESTOR_LEVELS; i++, el = parentElement(el)) {
        let st = this.stats.get(el);
        if (st === undefined) this.stats.set(el, (st = { emails: new Set(), phones: new Set() }));
        (h.email !== null ? st.emails : st.phones).add(h.key);
      }
    }
  }

  /** The nearest block-level element holding the sighting (past inline elements and table cells). */
  base(at: AnyNode): Element | null {
    let el = isElement(at) ? at : parentElement(at);
    for (let i = 0; el !== null && i < 12; i++) {
      if (BLOCK_TAGS.has(el.name) || RECORD_TAGS.has(el.name)) return el;
      el = parentElement(el);
    }
    return el;
  }

  /** The base widened while that adds no other email, at most 2 phones, and stays short; never past a record. */
  unit(at: AnyNode): Element | null {
    let u = this.base(at);
    if (u === null) return null;
    for (let i = 0; i < 4; i++) {
      if (RECORD_TAGS.has(u.name) || RECORD_CLASS.test(u.attribs.class ?? '')) break;
      const p = parentElement(u);
      if (p === null || p.name === 'body' || p.name === 'html') break;
      const st = this.stats.get(p);
      if (st === undefined || st.emails.size > 1 || st.phones.size > 2) break;
      if (this.textLength(p) > UNIT_CHARS) break;
      u = p;
    }
    return u;
  }

  /** Characters of readable text under `el`, counted to just past RENDER_CHARS (Infinity past the node budget). */
  textLength(el: Element): number {
    const cached = this.lengths.get(el);
    if (cached !== undefined) return cached;
    let len = 0;
    let nodes = 4_000;
    const stack: AnyNode[] = [el];
    while (stack.length > 0 && len <= RENDER_CHARS) {
      if (nodes-- <= 0) {
        len = Infinity;
        break;
      }
      const n = stack.pop()!;
      if (isTextNode(n)) len += n.data.length;
      else if (isElement(n)) {
        if (SKIP_TAGS.has(n.name) || isHidden(n)) continue;
        for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
      }
    }
    this.lengths.set(el, len);
    return len;
  }

  /** The unit's rendered lines, or null when it is too large to render. */
  linesOf(u: Element): string[] | null {
    const cached = this.lines.get(u);
    if (cached !== undefined) return cached;
    let lines: string[] | null = null;
    if (this.textLength(u) <= RENDER_CHARS) {
      lines = stripZeroWidth(renderText(u, { maxNodes: 5_000, skip: (el) => defaultSkip(el) || SKIP_TAGS.has(el.name) })).split('\n');
    }
    this.lines.set(u, lines);
    return lines;
  }
}

/** Where `anchor` is in `lines`: the first occurrence. */
function locate(lines: readonly string[], anchor: string): { line: number; col: number } | undefined {
  const a = collapse(anchor);
  if (a === '') return undefined;
  for (let i = 0; i < lines.length; i++) {
    const col = lines[i]!.indexOf(a);
    if (col >= 0) return { line: i, col };
  }
  return undefined;
}

const NOBODY: PersonGuess = { name: null, job: null, company: null };

/** The records of sightings that belong together (one person or address), with the guess about who. */
function recordsOf(group: readonly Hit[], guess: PersonGuess, confidence: ReadonlyMap<string, number>): ContactRecord[] {
  const nameHint = group.find((h) => h.nameHint !== null)?.nameHint ?? null;
  const person = { name: nameHint ?? guess.name, company: guess.company, job: guess.job };
  const email = group.find((h) => h.email !== null)?.email ?? null;
  const phones: ParsedPhone[] = [];
  for (const h of group) if (h.phone !== null && !phones.some((p) => p.e164 === h.phone!.e164)) phones.push(h.phone);
  const out: ContactRecord[] = [];
  const n = Math.max(email === null ? 0 : 1, phones.length);
  for (let i = 0; i < n; i++) {
    const e = i === 0 ? email : null;
    const p = phones[i] ?? null;
    out.push({
      ...person,
      email: e,
      emailConfidence: e === null ? 0 : confidence.get(emailKey(e)) ?? 0,
      phone: p,
      phoneConfidence: p === null ? 0 : confidence.get(p.e164) ?? 0,
    });
  }
  return out;
}

const distinctEmails = (hits: readonly Hit[]): number => new Set(hits.filter((h) => h.email !== null).map((h) => h.key)).size;

/** Records for the sightings of the page's text and links, grouped by unit. */
function textRecords(hits: readonly Hit[], confidence: ReadonlyMap<string, number>): ContactRecord[] {
  const units = new Units(hits);
  const groups = new Map<Element | null, Hit[]>();
  for (const h of hits) {
    const u = units.unit(h.at);
    const g = groups.get(u);
    if (g === undefined) groups.set(u, [h]);
    else g.push(h);
  }
  const out: ContactRecord[] = [];
  const nodeIds = new Map<AnyNode, number>();
  for (const [u, group] of groups) {
    const lines = u === null ? null : units.linesOf(u);
    if (lines !== null && distinctEmails(group) <= 1) {
      // One person (or one address) in the unit.
      const primary = group.find((h) => h.email !== null) ?? group[0]!;
      const at = locate(lines, primary.anchor);
      out.push(...recordsOf(group, at === undefined ? NOBODY : guessPerson(lines, at.line, at.col, false), confidence));
      continue;
    }
    // Several people's addresses: line by line (a unit too large to render: the sighting's own text node).
    const byLine = new Map<string, { hits: Hit[]; lines: readonly string[]; line: number; col: number }>();
    const alone: Hit[] = [];
    for (const h of group) {
      let ls: readonly string[] | null = lines;
      let at = ls === null ? undefined : locate(ls, h.anchor);
      let id: string;
      if (at !== undefined) id = `line:${at.line}`;
      else if (isTextNode(h.at)) {
        ls = [stripZeroWidth(collapse(h.at.data.length > RENDER_CHARS ? h.at.data.slice(0, RENDER_CHARS) : h.at.data))];
        at = locate(ls, h.anchor) ?? { line: 0, col: 0 };
        let n = nodeIds.get(h.at);
        if (n === undefined) nodeIds.set(h.at, (n = nodeIds.size));
        id = `node:${n}`;
      } else {
        alone.push(h);
        continue;
      }
      const entry = byLine.get(id);
      if (entry === undefined) byLine.set(id, { hits: [h], lines: ls!, line: at.line, col: at.col });
      else entry.hits.push(h);
    }
    for (const entry of byLine.values()) {
      if (distinctEmails(entry.hits) <= 1) {
        const primary = entry.hits.find((h) => h.email !== null) ?? entry.hits[0]!;
        const at = locate(entry.lines, primary.anchor) ?? { line: entry.line, col: entry.col };
        out.push(...recordsOf(entry.hits, guessPerson(entry.lines, at.line, at.col, true), confidence));
      } else {
        for (const h of entry.hits) {
          const at = locate(entry.lines, h.anchor) ?? { line: entry.line, col: entry.col };
          out.push(...recordsOf([h], guessPerson(entry.lines, at.line, at.col, true), confidence));
        }
      }
    }
    for (const h of alone) out.push(...recordsOf([h], NOBODY, confidence));
  }
  return out;
}

const round = (x: number): number => Math.round(x * 100) / 100;

/** The contacts on one page (pure: the same page gives the same items). */
export function extractContacts(page: Page, options: ContactsOptions = {}): ContactItem[] {
  const sourceUrl = page.finalUrl || page.url;
  let host = '';
  try {
    host = new URL(sourceUrl).hostname;
  } catch {
    // No host: no ccTLD signal and no same-site test.
  }
  const signals = readHead(page);
  const region = defaultRegion({
    explicit: options.defaultCountry, htmlLang: signals.htmlLang, contentLanguage: signals.contentLanguage, ogLocale: signals.ogLocale, host,
  });

  const structured = schemaRecords(extractSchemaData(page), region);
  const scanner = new Scanner(region);
  scanner.scan(page.document);
  const records: ContactRecord[] = [...structured.records];
  for (const card of scanner.cards.slice(0, MAX_CONTACTS_PER_PAGE)) records.push(...cardRecords(card, region));
  records.push(...textRecords(scanner.hits, scanner.confidence));

  if (options.stats !== undefined) {
    options.stats.nodes = scanner.nodes;
    options.stats.textChars = EMAIL_TEXT_CHARS - scanner.emailChars;
    options.stats.ats = Math.min(MAX_ATS, MAX_ATS - scanner.ats.ats);
    options.stats.phoneSearches = scanner.phones.searches;
    options.stats.sightings = scanner.hits.length;
  }

  const set = new ItemSet(MAX_CONTACTS_PER_PAGE);
  for (const r of records) {
    set.add({
      email: r.email,
      name: r.name,
      company: r.company,
      source_url: sourceUrl,
      phone: r.phone?.e164 ?? null,
      phone_national: r.phone?.national ?? null,
      job_title: r.job,
      confidence: round(Math.max(r.emailConfidence, r.phoneConfidence)),
    });
  }
  const siteCompany = signals.siteName ?? structured.organisation;
  const site = host === '' ? '' : siteOf(host);
  for (const item of set.items) {
    if (item.company !== null || siteCompany === null) continue;
    const domain = item.email === null ? null : item.email.slice(item.email.lastIndexOf('@') + 1);
    if (domain === null || (site !== '' && siteOf(domain) === site)) item.company = siteCompany;
  }
  return set.items;
}

const optionString = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

export const contactsExtractor = defineExtractor({
  name: 'extractor-contacts',
  id: 'contacts',
  builtin: true,
  description: 'Emails and phone numbers (E.164) with the person, job title and company they belong to, from structured data, links and text.',
  filter: HTML_FILTER,
  extract: (page, options): ContactItem[] =>
    extractContacts(page, { defaultCountry: optionString(options.country) ?? optionString(options.defaultCountry) }),
  merge: mergeContacts,
});
