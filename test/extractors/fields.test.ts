/**
 * extract_fields: the JSON case table (test/fixtures/fields-cases.json) run
 * through the fields extractor, in this thread and in a real extraction
 * worker (the spec crosses threads as an option); its spec check (every
 * problem at once, each at its path); and the number reader.
 */
import { readFileSync } from 'node:fs';
import { Effect } from 'effect';
import { afterAll, describe, expect, it } from 'vitest';
import { ExtractionPool } from '../../adapters/extraction-pool/pool.js';
import { runExtractors } from '../../core/extraction.js';
import { builtinExtractors, checkFieldsSpec, extractFields, parseNumber, parsePage } from '../../plugins/extractors/index.js';
import { FIELDS_LIMITS } from '../../plugins/extractors/fields/index.js';
import type { FieldsSpec } from '../../plugins/extractors/fields/index.js';

interface Case { name: string; html: string; url?: string; content_language?: string; spec: FieldsSpec; expected: unknown }
interface Invalid { name: string; spec: unknown; fields: string[] }
const table = JSON.parse(readFileSync(new URL('../fixtures/fields-cases.json', import.meta.url), 'utf8')) as { cases: Case[]; invalid: Invalid[] };

const source = (c: Case) => {
  const url = c.url ?? 'https://example.com/page.html';
  return { url, finalUrl: url, statusCode: 200, contentType: 'text/html; charset=utf-8', html: c.html };
};
const options = (c: Case) => ({ fields: { spec: c.spec, contentLanguage: c.content_language } });

/** Placeholders the JSON cannot hold compactly: a selector past the length bound, more fields than allowed. */
function expand(spec: unknown): unknown {
  return JSON.parse(JSON.stringify(spec), (_k, v) => {
    if (v === 'LONG') return `p${' p'.repeat(FIELDS_LIMITS.selectorChars)}`;
    if (v === 'MANY') return Array.from({ length: FIELDS_LIMITS.fieldsPerLevel + 1 }, (_, n) => ({ name: `f${n}`, selector: 'p' }));
    return v;
  });
}

describe('extract_fields case table', () => {
  it('holds at least 30 page cases and checks every spec in it', () => {
    expect(table.cases.length).toBeGreaterThanOrEqual(30);
    for (const c of table.cases) expect(checkFieldsSpec(c.spec), c.name).toEqual([]);
  });

  for (const c of table.cases) {
    it(c.name, async () => {
      expect(extractFields(parsePage(source(c)), options(c).fields)).toEqual(c.expected);
      // The same through the extractor set the pool's workers run (runExtractors), as a built-in.
      const ran = await runExtractors({ parse: parsePage, extractors: builtinExtractors }, parsePage(source(c)), ['fields'], options(c));
      expect(ran.errors).toEqual({});
      expect(ran.values.fields).toEqual(c.expected);
    });
  }
});

describe('extract_fields in an extraction worker', () => {
  const pool = new ExtractionPool({
    workers: 1, timeoutMs: 10_000, inlineBelow: 0, adaptive: false,
    module: new URL('../../plugins/extractors/index.js', import.meta.url), local: { parse: parsePage, extractors: builtinExtractors },
  });
  afterAll(() => pool.close());

  it('gives every case the same value off the main thread', async () => {
    for (const c of table.cases) {
      const res = await Effect.runPromise(pool.extract({ page: source(c), ids: ['fields'], options: options(c), alone: false }));
      expect(res.errors, c.name).toEqual({});
      expect(res.values.fields, c.name).toEqual(c.expected);
    }
  });
});

describe('extract_fields spec check', () => {
  for (const c of table.invalid) {
    it(`rejects: ${c.name}`, () => {
      const issues = checkFieldsSpec(expand(c.spec));
      expect(issues.map((i) => i.field).sort()).toEqual([...c.fields].sort());
      for (const i of issues) expect(i.message.length).toBeGreaterThan(3);
    });
  }

  it('names the CSS or XPath problem in its message', () => {
    const [css] = checkFieldsSpec({ fields: [{ name: 'a', selector: 'p[' }] });
    expect(css!.message).toMatch(/not a valid CSS selector/);
    const [xp] = checkFieldsSpec({ fields: [{ name: 'a', selector: '//p[' }] });
    expect(xp!.message).toMatch(/not a valid XPath 1\.0 expression/);
    const [fn] = checkFieldsSpec({ fields: [{ name: 'a', selector: '//p[foo()]' }] });
    expect(fn!.message).toMatch(/unknown function foo\(\)/);
  });

  it('bounds the whole spec: more than 200 fields in all is refused', () => {
    const level = (n: number) => Array.from({ length: 50 }, (_, i) => ({ name: `f${n}_${i}`, selector: 'p' }));
    const spec = { fields: Array.from({ length: 5 }, (_, n) => ({ name: `g${n}`, selector: 'div', fields: level(n) })) };
    expect(checkFieldsSpec(spec).map((i) => i.field)).toEqual(['extract_fields.fields[3].fields[46]']);
  });
});

describe('extract_fields on hostile pages', () => {
  // 20,000 (a 1 MB page of list items, or nesting 20,000 deep): past that, XPath over the page's view takes seconds per field,
  // and the bound is the extraction pool's deadline (docs/scrape.md#extract_fields).
  const N = 20_000;
  const HOSTILE: Array<[string, string]> = [
    ['20k nested divs', `${'<div>'.repeat(N)}<b class="x">1.299,00</b>${'</div>'.repeat(N)}`],
    ['20k sibling items', `<ul>${'<li class="i"><a href="/a">l</a><span>1,5</span></li>'.repeat(N)}</ul>`],
    ['huge attribute values', `<a class="x" href="${'a'.repeat(5_000_000)}">x</a><p data-x="${'9'.repeat(1_000_000)}">${'8'.repeat(1_000_000)}</p>`],
  ];
  const spec: FieldsSpec = { fields: [
    { name: 'css', selector: '.x', type: 'number' },
    { name: 'css_list', selector: 'li.i span', type: 'list' },
    { name: 'xpath', selector: '//a/@href' },
    { name: 'xpath_count', selector: 'count(//li)', type: 'number' },
    { name: 'big', selector: 'p', type: 'number' },
    { name: 'records', selector: 'li.i', fields: [{ name: 'a', selector: './a/@href' }] },
  ] };
  it.each(HOSTILE)('bounded on %s: a value, or a failure naming its field, within 10 s', (_name, html) => {
    const t0 = performance.now();
    const p = parsePage({ url: 'https://h.example/', finalUrl: 'https://h.example/', statusCode: 200, contentType: 'text/html', html });
    let value: unknown;
    try {
      value = extractFields(p, { spec });
    } catch (e) {
      expect((e as Error).message).toMatch(/^field [a-z_]+(\.[a-z_]+)*: /);
    }
    if (value !== undefined) {
      const v = value as Record<string, unknown>;
      expect(() => JSON.stringify(v)).not.toThrow();
      if (Array.isArray(v.css_list)) expect(v.css_list.length).toBeLessThanOrEqual(FIELDS_LIMITS.matches);
      if (Array.isArray(v.records)) expect(v.records.length).toBeLessThanOrEqual(FIELDS_LIMITS.matches);
      if (typeof v.big === 'number') expect(Number.isFinite(v.big)).toBe(true);
    }
    expect(performance.now() - t0).toBeLessThan(10_000);
  }, 60_000);
});

describe('parseNumber', () => {
  const cases: Array<[string, string | undefined, number | null]> = [
    ['1.299,00 €', undefined, 1299], ['1.299,00 €', 'en', 1299], ['1,299.00', 'de', 1299], ['1.299', 'de', 1299], ['1.299', 'en', 1.299],
    ['1,299', 'fr', 1.299], ['1,299', undefined, 1299], ['12,5', undefined, 12.5], ['1.000.000', undefined, 1000000], ['1 234 567', undefined, 1234567],
    ['-3', undefined, -3], ['−0,5', 'de', -0.5], ['abc', undefined, null], ['', undefined, null], ['Version 2 of 3', undefined, 2],
    ['12 items, 3 left', undefined, 12], ['0.5', 'xx-invalid', 0.5], ['1٬234٫5', 'ar', 1],
  ];
  for (const [text, locale, want] of cases) it(`${JSON.stringify(text)} (${locale ?? 'no locale'}) -> ${want}`, () => expect(parseNumber(text, locale)).toBe(want));
});
