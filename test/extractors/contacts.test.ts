/**
 * The contacts extractor, table-driven: small pages with the items they
 * must give (only the fields a case lists are compared; every extracted
 * email and phone must be listed), in several languages and phone
 * regions, including what must not be read as an email or a phone. The
 * table is in test/fixtures/contacts-cases.ts (bench:search:enrich reads
 * it too).
 */
import { describe, expect, it } from 'vitest';
import {
  CONTACTS_LIMITS, contactsExtractor, extractContacts, mergeContacts, MAX_CONTACTS_PER_PAGE, type ContactItem, type ContactsStats,
} from '../../plugins/extractors/contacts/index.js';
import { scoreContacts, type ExpectedContact } from '../../plugins/extractors/contacts/score.js';
import { CASES, doc, KNOWN_GAPS, type ContactCase as Case } from '../fixtures/contacts-cases.js';
import { page } from './support.js';

const run = (c: Case): ContactItem[] => extractContacts(page(c.html, c.url ?? 'https://acme.com/contact'), c.country === undefined ? {} : { defaultCountry: c.country });

const same = (a: ContactItem, e: ExpectedContact): boolean =>
  e.email !== undefined && e.email !== null ? a.email?.toLowerCase() === e.email.toLowerCase() : e.phone !== undefined && a.phone === e.phone;

describe('extractContacts', () => {
  it('has a table of at least 40 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const items = run(c);
    const addresses = (xs: readonly { email?: string | null; phone?: string | null }[]) =>
      xs.flatMap((x) => [x.email ? `email:${x.email.toLowerCase()}` : [], x.phone ? `phone:${x.phone}` : []].flat()).sort();
    expect([...new Set(addresses(items))]).toEqual([...new Set(addresses(c.expect))]);
    expect(items).toHaveLength(c.expect.length);
    for (const e of c.expect) {
      const match = items.find((a) => same(a, e));
      expect(match, JSON.stringify(e)).toBeDefined();
      expect(match).toMatchObject(e);
    }
    for (const item of items) {
      expect(item.source_url).toBe(c.url ?? 'https://acme.com/contact');
      expect(item.confidence).toBeGreaterThan(0);
      expect(item.confidence).toBeLessThanOrEqual(1);
      if (item.phone !== null) expect(item.phone).toMatch(/^\+[1-9]\d{6,14}$/);
    }
  });

  it('scores the table with precision and recall (known gaps included)', () => {
    const table = scoreContacts(CASES.map((c) => ({ expected: c.expect, actual: run(c) })));
    expect(table.addresses.precision).toBe(1);
    expect(table.addresses.recall).toBe(1);
    expect(table.fields.precision).toBe(1);
    expect(table.fields.recall).toBe(1);
    const all = scoreContacts([...CASES, ...KNOWN_GAPS].map((c) => ({ expected: c.expect, actual: run(c) })));
    expect(all.addresses.precision).toBeGreaterThanOrEqual(0.95);
    expect(all.addresses.recall).toBeGreaterThanOrEqual(0.9);
    expect(all.addresses.fn).toBeGreaterThan(0);
  });

  it('is pure: the same page gives the same items', () => {
    const c = CASES.find((x) => x.name.startsWith('German Impressum'))!;
    const p = page(c.html, c.url);
    expect(extractContacts(p)).toEqual(extractContacts(p));
  });

  it('caps the items of a page', () => {
    const html = doc(Array.from({ length: 400 }, (_, i) => `<p>person${i}@acme.com</p>`).join(''));
    expect(extractContacts(page(html))).toHaveLength(MAX_CONTACTS_PER_PAGE);
  });

  it('is the contacts extractor, reading the country option', () => {
    expect(contactsExtractor).toMatchObject({ kind: 'extractor', name: 'extractor-contacts', id: 'contacts' });
    const p = page('<p>Call 030 12345678</p>');
    expect(contactsExtractor.extract(p, {})).toEqual([]);
    expect(contactsExtractor.extract(p, { country: 'DE' })).toMatchObject([{ phone: '+493012345678' }]);
  });
});

describe('mergeContacts', () => {
  const item = (x: Partial<ContactItem>): ContactItem => ({
    email: null, name: null, company: null, source_url: 'https://acme.com/', phone: null, phone_national: null, job_title: null, confidence: 0.9, ...x,
  });

  it('merges the same email or phone across pages, keeping the first source_url and filling gaps', () => {
    const merged = mergeContacts([
      [item({ email: 'dana@acme.com', source_url: 'https://acme.com/team', confidence: 0.9 })],
      [
        item({ email: 'Dana@ACME.com', name: 'Dana Reyes', phone: '+12125550100', phone_national: '(212) 555-0100', source_url: 'https://acme.com/press', confidence: 1 }),
        item({ phone: '+12125550100', job_title: 'Head of PR', source_url: 'https://acme.com/contact' }),
        item({ email: 'john@acme.com', source_url: 'https://acme.com/press' }),
      ],
    ]);
    expect(merged).toEqual([
      item({ email: 'dana@acme.com', name: 'Dana Reyes', phone: '+12125550100', phone_national: '(212) 555-0100', job_title: 'Head of PR', source_url: 'https://acme.com/team', confidence: 1 }),
      item({ email: 'john@acme.com', source_url: 'https://acme.com/press' }),
    ]);
  });

  it('does not merge two people who share a phone', () => {
    const merged = mergeContacts([[item({ email: 'a@acme.com', phone: '+12125550100' })], [item({ email: 'b@acme.com', phone: '+12125550100' })]]);
    expect(merged.map((m) => m.email)).toEqual(['a@acme.com', 'b@acme.com']);
  });

  it('merges pages extracted from HTML', () => {
    const a = extractContacts(page(doc('<p>Press contact: Dana Reyes, press@acme.com</p>'), 'https://acme.com/press'));
    const b = extractContacts(page(doc('<p>press@acme.com · Tel: +1 212 555 0100</p>'), 'https://acme.com/contact'));
    expect(mergeContacts([a, b])).toMatchObject([{ email: 'press@acme.com', name: 'Dana Reyes', phone: '+12125550100', source_url: 'https://acme.com/press' }]);
  });

  it('does not change its inputs', () => {
    const first = [item({ email: 'dana@acme.com' })];
    mergeContacts([first, [item({ email: 'dana@acme.com', name: 'Dana Reyes' })]]);
    expect(first[0]!.name).toBeNull();
  });
});

describe('contacts on hostile pages', () => {
  const HOSTILE: readonly [string, () => string][] = [
    ['100k @ signs', () => `<p>${'@'.repeat(100_000)}</p>`],
    ['100k a@ pairs', () => `<p>${'a@'.repeat(100_000)}</p>`],
    ['50k distinct addresses', () => `<p>${Array.from({ length: 50_000 }, (_, i) => `u${i}@acme.com`).join(' ')}</p>`],
    ['a giant text node of letters', () => `<p>${'a'.repeat(5_000_000)}@</p>`],
    ['a giant text node of digits and spaces', () => `<p>${'1 '.repeat(500_000)}</p>`],
    ['repeated phone-like runs', () => `<p>${'030-1234 '.repeat(100_000)}</p>`],
    ['repeated obfuscations', () => `<p>${'a [at] b [dot] c '.repeat(50_000)}${' at dot '.repeat(50_000)}</p>`],
    ['a digit window in 100k text nodes', () => Array.from({ length: 100_000 }, (_, i) => `<span>Order 1234567${i}</span>`).join('')],
    ['100k nested divs with an address at the bottom', () => '<div>'.repeat(100_000) + 'Dana Reyes dana@acme.com +1 212 555 0100' + '</div>'.repeat(100_000)],
    ['100k mailto links', () => '<a href="mailto:x@acme.com">x</a>'.repeat(100_000)],
    ['deep hCards', () => '<div class="vcard"><span class="fn">A B</span>'.repeat(20_000)],
  ];

  it.each(HOSTILE)('stays bounded on %s', (_name, make) => {
    const p = page(make());
    const stats: ContactsStats = { nodes: 0, textChars: 0, ats: 0, phoneSearches: 0, sightings: 0 };
    const t0 = performance.now();
    const items = extractContacts(p, { defaultCountry: 'DE', stats });
    const ms = performance.now() - t0;
    expect(items.length).toBeLessThanOrEqual(MAX_CONTACTS_PER_PAGE);
    expect(() => JSON.stringify(items)).not.toThrow();
    // The counted bounds are what keep it short (each under a second here, unloaded).
    expect(stats.nodes).toBeLessThanOrEqual(CONTACTS_LIMITS.nodes);
    expect(stats.textChars).toBeLessThanOrEqual(CONTACTS_LIMITS.textChars);
    expect(stats.ats).toBeLessThanOrEqual(CONTACTS_LIMITS.ats);
    expect(stats.phoneSearches).toBeLessThanOrEqual(CONTACTS_LIMITS.phoneSearches);
    expect(stats.sightings).toBeLessThanOrEqual(CONTACTS_LIMITS.sightings);
    // And a time bound generous enough for a loaded machine.
    expect(ms).toBeLessThan(5_000);
  }, 60_000);

  it('counts its work on an ordinary page', () => {
    const stats: ContactsStats = { nodes: 0, textChars: 0, ats: 0, phoneSearches: 0, sightings: 0 };
    extractContacts(page(doc('<p>Dana Reyes, dana@acme.com, Tel: +1 212 555 0100</p>')), { stats });
    expect(stats).toMatchObject({ ats: 1, phoneSearches: 1, sightings: 2 });
    expect(stats.nodes).toBeGreaterThan(3);
  });
});
