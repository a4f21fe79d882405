/**
 * The reference tables of docs/ say what the code does: the exit codes of
 * `scour` (docs/errors.md) are the CLI's, and the price table
 * (docs/accounts-and-credits.md) is config/prices.ts. The settings table and
 * the error table have their own tests (config.test.ts,
 * errors-documented.test.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_EXIT_CODES } from '../../adapters/cli/api-cmds.js';
import { PRICES } from '../../config/prices.js';

const page = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** The rows of the first Markdown table after `heading`: its cells, without the header and rule. */
function tableAfter(text: string, heading: string): string[][] {
  const at = text.indexOf(heading);
  expect(at, `no "${heading}"`).toBeGreaterThanOrEqual(0);
  const lines = text.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

describe('docs/errors.md: the exit codes of scour', () => {
  it('lists exactly the codes the CLI exits with', () => {
    const codes = tableAfter(page('errors.md'), '## Exit codes of `scour`').map((r) => Number(r[0]));
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes)).toEqual(new Set(Object.values(CLI_EXIT_CODES)));
  });
});

describe('docs/accounts-and-credits.md: the price table is config/prices.ts', () => {
  const rows = new Map(tableAfter(page('accounts-and-credits.md'), '## Credits').map((r) => [r[0]!, r[1]!]));

  it('prices every scrape option as the table in config/prices.ts does', () => {
    const scrape = rows.get('scrape')!;
    expect(scrape.startsWith(`${PRICES.scrape.base};`)).toBe(true);
    const named: Record<string, number> = { ...PRICES.scrape };
    for (const [field, credits] of Object.entries(named)) {
      if (field === 'base') continue;
      const written = field === 'residential_proxy' ? `+${credits} residential proxy` : `+${credits} \`${field}\``;
      expect(scrape, field).toContain(written);
    }
  });

  it('prices search, crawl, map and research as config/prices.ts does', () => {
    const p = PRICES.search;
    expect(rows.get('search')).toContain(`${p.base} for up to ${p.smallMaxResults} results, ${p.large} above`);
    expect(rows.get('search')).toContain(`+${p.perScrapedPage} per page scraped`);
    expect(rows.get('search')).toContain(`+${p.contacts} \`include_contacts\``);
    expect(rows.get('search')).toContain(`+${p.social} \`include_social\``);
    const d = PRICES.document;
    expect(rows.get('PDF pages (extension)')).toContain(`+1 per ${d.pagesPerCredit} pages read beyond the first ${d.freePages}`);
    expect(rows.get('map (extension)')).toBe(`${PRICES.map.call} per call, whatever its number of URLs (nothing when it fails)`);
    expect(rows.get('crawl (extension)')).toBe(`${PRICES.crawl.page} per page stored, +${PRICES.crawl.render_js} each with \`render_js\``);
    const r = PRICES.research;
    expect(rows.get('research')).toBe(`\`analysis_depth\` quick ${r.quick}, standard ${r.standard}, comprehensive ${r.comprehensive}`);
  });
});
