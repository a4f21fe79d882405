/**
 * The layers' import rules, read from the source: core/ does no I/O and
 * names no library but effect; plugins reach I/O through ports (never an
 * import from adapters/); only the composition root (config/) and the
 * adapters wire implementations in.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Every module specifier a file imports or re-exports (static and dynamic). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]/g)) found.push(m[1] as string);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) found.push(m[1] as string);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1] as string);
  return found;
}

const rel = (file: string) => relative(ROOT, file);

describe('layering', () => {
  it('finds the imports it checks (the scanner itself works)', () => {
    const http = specifiers(join(ROOT, 'config', 'scrape.ts'));
    expect(http).toContain('../adapters/egress/port.js');
    expect(http).toContain('../plugins/fetchers/http/index.js');
  });

  it('no plugin imports from adapters/', () => {
    const offenders = sources(join(ROOT, 'plugins')).flatMap((f) =>
      specifiers(f).filter((s) => /(^|\/)adapters\//.test(s)).map((s) => `${rel(f)} -> ${s}`));
    expect(offenders).toEqual([]);
  });

  it('core/ imports only itself and effect: no node: modules, drivers, adapters, plugins or config', () => {
    const offenders = sources(join(ROOT, 'core')).flatMap((f) =>
      specifiers(f).filter((s) => !(s.startsWith('./') || s.startsWith('../') ? !/(^|\/)(adapters|plugins|config)\//.test(s) : s === 'effect' || s.startsWith('effect/')))
        .map((s) => `${rel(f)} -> ${s}`));
    expect(offenders).toEqual([]);
  });
});
