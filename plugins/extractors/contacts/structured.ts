/**
 * Contacts the page states in markup: schema.org Person and Organization
 * (JSON-LD, Microdata, RDFa, as parsed by schema-data.ts) and hCard
 * (class="vcard" / "h-card").
 *
 * schema.org: every node with an email or telephone is a contact. A
 * Person gives name (or givenName + familyName), jobTitle and company
 * (worksFor, affiliation or memberOf, else the Organization it is an
 * employee/member/founder of); an Organization (or any other non-creative
 * type: LocalBusiness, Dentist, Hotel ...) gives the company; ContactPoint
 * and PostalAddress nodes belong to the Person or Organization holding
 * them. JSON-LD `@id` references are followed within the page; `mailto:`
 * and `tel:` values of email, telephone, url and sameAs are read (sameAs
 * links to profiles are left to a social-profiles extractor).
 */
import type { CountryCode } from 'libphonenumber-js/max';
import type { SchemaItem } from '../schema-data-reader.js';
import { boundedText, collapse, isElement, type AnyNode, type Element } from '../../sdk/dom.js';
import { mailtoAddresses, normalizeEmail, scanPlain } from './emails.js';
import { parsePhoneValue, telNumber, type ParsedPhone } from './phones.js';

export interface ContactRecord {
  readonly email: string | null;
  readonly emailConfidence: number;
  readonly phone: ParsedPhone | null;
  readonly phoneConfidence: number;
  readonly name: string | null;
  readonly company: string | null;
  readonly job: string | null;
}

/** Confidence of a structured value: what markup says is a phone or address. A phone that is possible but not valid for its region: 0.8. */
const STRUCTURED = 1;
const POSSIBLE_ONLY = 0.8;

const MAX_NODES = 5_000;
const MAX_DEPTH = 12;
const MAX_VALUE = 300;

// ---------------------------------------------------------------- a common view of JSON-LD and Microdata/RDFa items

interface Node {
  readonly types: readonly string[];
  /** The underlying object (cycles through @id references are cut on it). */
  readonly identity: object;
  values(name: string): unknown[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** "http://schema.org/Person", "schema:Person", "Person" -> "Person". */
const shortName = (s: string): string => s.replace(/^.*[/#:]/, '');

const asArray = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

class JsonLdNode implements Node {
  readonly types: readonly string[];

  constructor(
    private readonly obj: Record<string, unknown>,
    private readonly ids: ReadonlyMap<string, Record<string, unknown>>,
  ) {
    // Some sites write "type" for "@type".
    this.types = asArray(obj['@type'] ?? obj.type).filter((t): t is string => typeof t === 'string').map(shortName);
  }

  get identity(): object {
    return this.obj;
  }

  values(name: string): unknown[] {
    const out: unknown[] = [];
    for (const [k, v] of Object.entries(this.obj)) {
      if (k.startsWith('@') || shortName(k) !== name) continue;
      for (const x of asArray(v)) {
        if (isObject(x)) {
          if (x['@value'] !== undefined) out.push(x['@value']);
          else {
            const ref = typeof x['@id'] === 'string' && Object.keys(x).length === 1 ? this.ids.get(x['@id']) : undefined;
            out.push(new JsonLdNode(ref ?? x, this.ids));
          }
        } else out.push(x);
      }
    }
    return out;
  }
}

class PropertiesNode implements Node {
  readonly types: readonly string[];

  constructor(private readonly item: Record<string, unknown>) {
    this.types = asArray(item.type).filter((t): t is string => typeof t === 'string').map(shortName);
  }

  get identity(): object {
    return this.item;
  }

  values(name: string): unknown[] {
    const props = isObject(this.item.properties) ? this.item.properties : {};
    const out: unknown[] = [];
    for (const [k, v] of Object.entries(props)) {
      if (shortName(k) !== name) continue;
      for (const x of asArray(v)) out.push(isObject(x) && isObject(x.properties) ? new PropertiesNode(x) : x);
    }
    return out;
  }
}

function text(v: unknown): string | null {
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') return null;
  const t = collapse(v.length > MAX_VALUE ? v.slice(0, MAX_VALUE) : v);
  return t === '' ? null : t;
}

function firstText(node: Node, ...names: string[]): string | null {
  for (const n of names) for (const v of node.values(n)) {
    const t = v instanceof JsonLdNode || v instanceof PropertiesNode ? firstText(v, 'name') : text(v);
    if (t !== null) return t;
  }
  return null;
}

// ---------------------------------------------------------------- types

const PERSON = new Set(['Person', 'Patient']);
const POINT = new Set(['ContactPoint', 'PostalAddress', 'ContactPage']);
/** Types that are not a party one contacts (their Person and Organization values are, and are visited). */
const NOT_A_PARTY =
  /^(?:.*Article|.*Page|WebSite|Blog|BlogPosting|CreativeWork|Book|Movie|Review|Rating|AggregateRating|Product|ProductGroup|Offer|AggregateOffer|.*Event|BreadcrumbList|ListItem|ItemList|ImageObject|VideoObject|MediaObject|Recipe|HowTo|Question|Answer|.*Action|Comment|SiteNavigationElement|WPHeader|WPFooter|WPSideBar|WebPageElement|Thing|Dataset|SoftwareApplication|Course|JobPosting|SpecialAnnouncement|Claim|PropertyValue|OpeningHoursSpecification|GeoCoordinates|Brand|Language|Place|Country|City|Audience|QuantitativeValue|MonetaryAmount|Duration)$/;
/** Types whose name is the site's organisation (the company fallback). */
const ORGANISATION = /Organization|Organisation|Corporation|LocalBusiness|Company|NGO/;

type Owner = { readonly kind: 'person' | 'org' | 'none'; readonly name: string | null; readonly company: string | null; readonly job: string | null };
const NOBODY: Owner = { kind: 'none', name: null, company: null, job: null };

/** A byline's "By" is not part of the name. */
const cleanName = (name: string | null): string | null => {
  if (name === null) return null;
  const t = name.replace(/^(?:by|par|por|door)\s+/i, '').trim();
  return t === '' ? null : t;
};

function personNameOf(node: Node): string | null {
  const name = cleanName(firstText(node, 'name'));
  if (name !== null) return name;
  const parts = [firstText(node, 'givenName'), firstText(node, 'additionalName'), firstText(node, 'familyName')].filter((p) => p !== null);
  return parts.length > 0 ? parts.join(' ') : null;
}

export interface StructuredResult {
  readonly records: ContactRecord[];
  /** The first Organization named on the page (the company fallback). */
  readonly organisation: string | null;
}

/** Contact records from the page's schema.org items. */
export function schemaRecords(items: readonly SchemaItem[], region: CountryCode | undefined): StructuredResult {
  const ids = new Map<string, Record<string, unknown>>();
  for (const it of items) if (it.format === 'json-ld' && typeof it['@id'] === 'string' && !ids.has(it['@id'])) ids.set(it['@id'], it);
  const records: ContactRecord[] = [];
  let organisation: string | null = null;
  let budget = MAX_NODES;

  // `path`: the nodes being visited above this one (a cycle of @id references stops there).
  const visit = (node: Node, owner: Owner, depth: number, path: Set<object>): void => {
    if (--budget < 0 || depth > MAX_DEPTH || path.has(node.identity)) return;
    path.add(node.identity);
    const types = node.types;
    let me: Owner;
    if (types.some((t) => PERSON.has(t))) {
      const company = firstText(node, 'worksFor', 'affiliation', 'memberOf') ?? (owner.kind === 'org' ? owner.company : null);
      me = { kind: 'person', name: personNameOf(node), company, job: firstText(node, 'jobTitle', 'hasOccupation') };
    } else if (types.length === 0 || types.some((t) => POINT.has(t))) me = owner;
    else if (types.some((t) => NOT_A_PARTY.test(t))) me = NOBODY;
    else {
      const name = firstText(node, 'name', 'legalName');
      me = { kind: 'org', name: null, company: name, job: null };
      if (organisation === null && name !== null && depth <= 2 && types.some((t) => ORGANISATION.test(t))) organisation = name;
    }
    if (me !== NOBODY) emit(node, me);
    for (const prop of CHILD_PROPS) {
      for (const v of node.values(prop)) {
        if (v instanceof JsonLdNode || v instanceof PropertiesNode) visit(v, me, depth + 1, path);
      }
    }
    path.delete(node.identity);
  };

  const emit = (node: Node, me: Owner): void => {
    const emails: string[] = [];
    const phones: { phone: ParsedPhone; valid: boolean }[] = [];
    for (const v of [...node.values('email'), ...node.values('url'), ...node.values('sameAs')]) {
      const t = text(v);
      if (t === null) continue;
      if (/^mailto:/i.test(t)) for (const a of mailtoAddresses(t)) emails.push(a.email);
      else if (!/^[a-z][a-z0-9+.-]*:/i.test(t) && t.includes('@')) {
        const e = normalizeEmail(t);
        if (e !== null) emails.push(e);
      }
    }
    for (const v of [...node.values('telephone'), ...node.values('url'), ...node.values('sameAs')]) {
      const t = text(v);
      if (t === null) continue;
      const isTel = /^(?:tel|callto):/i.test(t);
      if (!isTel && /^[a-z][a-z0-9+.-]*:/i.test(t)) continue;
      const p = parsePhoneValue(isTel ? telNumber(t) ?? '' : t, region);
      if (p !== undefined) phones.push({ phone: { e164: p.e164, national: p.national }, valid: p.valid });
    }
    pairUp(records, [...new Set(emails)], phones, me);
  };

  for (const it of items) {
    if (budget < 0) break;
    if ('error' in it) continue;
    const node = it.format === 'json-ld' ? new JsonLdNode(it, ids) : new PropertiesNode(it);
    visit(node, NOBODY, 1, new Set());
  }
  return { records, organisation };
}

/** Properties whose values may hold (or be) more contacts. */
const CHILD_PROPS = [
  'contactPoint', 'address', 'location', 'employee', 'employees', 'member', 'members', 'founder', 'founders', 'worksFor', 'affiliation',
  'memberOf', 'author', 'creator', 'publisher', 'provider', 'organizer', 'performer', 'seller', 'brand', 'manufacturer', 'parentOrganization',
  'subOrganization', 'department', 'hiringOrganization', 'mainEntity', 'about', 'itemListElement', 'item', 'contributor', 'editor', 'accountablePerson',
];

/** One record per address: the first phone goes with the first email; the others get records of their own with the same person. */
function pairUp(records: ContactRecord[], emails: readonly string[], phones: readonly { phone: ParsedPhone; valid: boolean }[], me: Owner): void {
  const base = { name: me.name, company: me.company, job: me.job };
  const n = Math.max(emails.length, phones.length);
  for (let i = 0; i < n; i++) {
    const email = emails[i] ?? null;
    const phone = phones[i];
    records.push({
      ...base,
      email,
      emailConfidence: email === null ? 0 : STRUCTURED,
      phone: phone?.phone ?? null,
      phoneConfidence: phone === undefined ? 0 : phone.valid ? STRUCTURED : POSSIBLE_ONLY,
    });
  }
}

// ---------------------------------------------------------------- hCard

const classes = (el: Element): string[] => (el.attribs.class ?? '').split(/\s+/).filter((c) => c !== '');

export const isCardRoot = (el: Element): boolean => {
  const c = el.attribs.class;
  return c !== undefined && /(?:^|\s)(?:vcard|h-card)(?:\s|$)/.test(c);
};

const NOT_TEXT = new Set(['script', 'style', 'template']);

/** Text of an element, collapsed and bounded. */
function textOf(el: Element, max = MAX_VALUE): string {
  return collapse(boundedText(el, max, 2000, NOT_TEXT, ' '));
}

/** An hCard property's value: the value-class pattern, abbr/data/href values, else the text. */
function cardValue(el: Element, kind: 'email' | 'tel' | 'text'): string {
  const values: string[] = [];
  const stack: AnyNode[] = [...el.children];
  let nodes = 500;
  while (stack.length > 0 && nodes-- > 0) {
    const n = stack.pop()!;
    if (!isElement(n)) continue;
    if (classes(n).includes('value')) values.unshift(n.attribs.title ?? n.attribs.value ?? textOf(n));
    else stack.push(...n.children);
  }
  if (values.length > 0) return values.join('');
  const href = el.attribs.href;
  if (href !== undefined && kind === 'email' && /^\s*mailto:/i.test(href)) return href.trim();
  if (href !== undefined && kind === 'tel' && /^\s*(?:tel|callto):/i.test(href)) return href.trim();
  if (el.name === 'abbr' && el.attribs.title !== undefined) return el.attribs.title;
  if (el.name === 'data' && el.attribs.value !== undefined) return el.attribs.value;
  return textOf(el);
}

const NAME_CLASSES = new Set(['fn', 'p-name']);
const ORG_CLASSES = new Set(['org', 'p-org', 'organization-name']);
const EMAIL_CLASSES = new Set(['email', 'u-email']);
const TEL_CLASSES = new Set(['tel', 'p-tel']);
const TITLE_CLASSES = new Set(['title', 'p-job-title', 'role', 'p-role']);

/** The contact records of one hCard (its nested cards are read on their own, except the one that is its org). */
export function cardRecords(root: Element, region: CountryCode | undefined): ContactRecord[] {
  let name: string | null = null;
  let company: string | null = null;
  let job: string | null = null;
  const emails: string[] = [];
  const phones: { phone: ParsedPhone; valid: boolean }[] = [];
  const stack: Element[] = [root];
  let nodes = 3000;
  while (stack.length > 0 && nodes-- > 0) {
    const el = stack.pop()!;
    const cls = classes(el);
    if (el !== root && isCardRoot(el)) {
      // A nested card: the person's organisation when marked so, else someone else's card.
      if (cls.some((c) => ORG_CLASSES.has(c))) {
        const inner = cardRecordsName(el);
        if (inner !== null) company ??= inner;
      }
      continue;
    }
    const isName = cls.some((c) => NAME_CLASSES.has(c));
    const isOrg = cls.some((c) => ORG_CLASSES.has(c));
    if (isName && isOrg) {
      // class="fn org": the card is an organisation's.
      company ??= textOf(el) || null;
    } else if (isName) name ??= cleanName(textOf(el) || null);
    else if (isOrg) company ??= textOf(el) || null;
    if (cls.some((c) => TITLE_CLASSES.has(c))) job ??= textOf(el) || null;
    if (cls.some((c) => EMAIL_CLASSES.has(c))) {
      const v = cardValue(el, 'email');
      if (/^\s*mailto:/i.test(v)) for (const a of mailtoAddresses(v)) emails.push(a.email);
      else for (const hit of scanPlain(v, { ats: 10 })) emails.push(hit.email);
    }
    if (cls.some((c) => TEL_CLASSES.has(c))) {
      const v = cardValue(el, 'tel');
      const p = parsePhoneValue(/^\s*(?:tel|callto):/i.test(v) ? telNumber(v) ?? '' : v, region);
      if (p !== undefined) phones.push({ phone: { e164: p.e164, national: p.national }, valid: p.valid });
    }
    for (let i = el.children.length - 1; i >= 0; i--) {
      const c = el.children[i]!;
      if (isElement(c)) stack.push(c);
    }
  }
  const records: ContactRecord[] = [];
  pairUp(records, [...new Set(emails)], phones, { kind: name === null ? 'org' : 'person', name, company, job });
  return records;
}

/** The name of a nested organisation card (its p-name / fn, else its text). */
function cardRecordsName(el: Element): string | null {
  const stack: Element[] = [el];
  let nodes = 500;
  while (stack.length > 0 && nodes-- > 0) {
    const n = stack.pop()!;
    if (classes(n).some((c) => NAME_CLASSES.has(c) || c === 'organization-name')) return textOf(n) || null;
    for (let i = n.children.length - 1; i >= 0; i--) {
      const c = n.children[i]!;
      if (isElement(c)) stack.push(c);
    }
  }
  return textOf(el) || null;
}
