/**
 * The layers' import rules, read from the source. The floors point one way:
 * - core/ imports nothing of ours outside core, and no library but effect
 *   (no I/O, no drivers);
 * - plugins/ import core/ and plugins/sdk, never adapters/ or config/; a
 *   plugin reaches another plugin only through plugins/sdk or a contract in
 *   core/ (see `pluginOf` for what one plugin is);
 * - adapters/ import core/ (and other adapters), never plugins/ or config/:
 *   the driving adapters (the CLI, MCP) are handed what they need;
 * - only the composition root (config/) and bin/ import everything and wire
 *   it;
 * - and no import cycles among our modules.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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
const LAYERS = ['core', 'plugins', 'adapters', 'config'] as const;
const ALL = LAYERS.flatMap((l) => sources(join(ROOT, l)));
const KNOWN = new Set(ALL);

/** The repository path a relative specifier names (`.js` written for a `.ts` source), or undefined for a package. */
function target(file: string, spec: string): string | undefined {
  if (!spec.startsWith('./') && !spec.startsWith('../')) return undefined;
  const path = resolve(dirname(file), spec);
  for (const candidate of [path, path.replace(/\.js$/, '.ts'), path.replace(/\.mjs$/, '.mts')]) if (KNOWN.has(candidate)) return rel(candidate);
  return rel(path);
}

/** Imports of `file` into the top-level folders `layers`, as "file -> specifier". */
function importsInto(files: readonly string[], layers: readonly string[]): string[] {
  return files.flatMap((f) => specifiers(f).filter((s) => {
    const t = target(f, s);
    return t !== undefined && layers.includes(t.split('/')[0]!);
  }).map((s) => `${rel(f)} -> ${s}`));
}

/** Folders under plugins/ that hold plugins of one kind; any other folder there (but sdk) is one plugin. */
const KIND_FOLDERS = new Set(['operations', 'tools', 'extractors', 'fetchers', 'proxies', 'search-providers', 'analysers', 'exporters']);

/**
 * The plugin a path under plugins/ belongs to: a file or folder directly
 * under a kind folder (plugins/operations/crawl, plugins/extractors/links.ts,
 * plugins/proxies/configured.ts), or a folder directly under plugins/
 * (plugins/research-rewriter); 'plugins/sdk' for the SDK.
 */
function pluginOf(path: string): string {
  const parts = path.split('/');
  if (parts[1] === 'sdk') return 'plugins/sdk';
  if (!KIND_FOLDERS.has(parts[1]!)) return `plugins/${parts[1]}`;
  return parts.length === 3 ? `plugins/${parts[1]}/${parts[2]!.replace(/\.(ts|mts|js|mjs)$/, '')}` : parts.slice(0, 3).join('/');
}

const DEFINES_PLUGIN = /\bdefine(?:Extractor|Analyser|Exporter|Operation|Tool|ProxyProvider|SearchProvider|Fetcher|Plugin)\b\s*[(<]|\bkind:\s*'(?:operation|tool|extractor|fetcher|proxy-provider|search-provider|analyser|exporter)'/;

/**
 * A module of a kind folder itself rather than a plugin: a file directly
 * under the kind folder that defines no plugin (the kind's shared helpers,
 * such as extractors/links-reader.ts, and its index.ts, the catalogue of its
 * built-ins). The kind's plugins may import these, and the catalogue its
 * kind's plugins.
 */
function kindModule(path: string): boolean {
  const parts = path.split('/');
  return parts.length === 3 && KIND_FOLDERS.has(parts[1]!) && !DEFINES_PLUGIN.test(readFileSync(join(ROOT, path), 'utf8'));
}

/** Each cycle (strongly connected set of two or more modules, or one importing itself) in `edges`, its files sorted. */
function importCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const members: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      members.push(w);
    } while (w !== v);
    if (members.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(members.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('layering', () => {
  it('finds the imports it checks (the scanner itself works)', () => {
    const http = specifiers(join(ROOT, 'config', 'scrape.ts'));
    expect(http).toContain('../adapters/egress/port.js');
    expect(http).toContain('../plugins/fetchers/http/index.js');
    expect(target(join(ROOT, 'config', 'scrape.ts'), '../plugins/fetchers/http/index.js')).toBe('plugins/fetchers/http/index.ts');
    expect(pluginOf('plugins/operations/crawl/engine.ts')).toBe('plugins/operations/crawl');
    expect(pluginOf('plugins/proxies/configured.ts')).toBe('plugins/proxies/configured');
    expect(pluginOf('plugins/research-rewriter/checks.ts')).toBe('plugins/research-rewriter');
    expect(kindModule('plugins/extractors/links-reader.ts')).toBe(true);
    expect(kindModule('plugins/extractors/links.ts')).toBe(false);
    expect(importCycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['d']], ['e', ['a']]]))).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('no plugin imports from adapters/ or config/', () => {
    expect(importsInto(sources(join(ROOT, 'plugins')), ['adapters', 'config'])).toEqual([]);
  });

  it('no adapter imports from plugins/ or config/ (driving adapters are handed what they need)', () => {
    expect(importsInto(sources(join(ROOT, 'adapters')), ['plugins', 'config'])).toEqual([]);
  });

  it('core/ imports only itself and effect: no node: modules, drivers, adapters, plugins or config', () => {
    const offenders = sources(join(ROOT, 'core')).flatMap((f) =>
      specifiers(f).filter((s) => {
        const t = target(f, s);
        return t === undefined ? !(s === 'effect' || s.startsWith('effect/')) : t.split('/')[0] !== 'core';
      }).map((s) => `${rel(f)} -> ${s}`));
    expect(offenders).toEqual([]);
  });

  it('a plugin reaches another plugin only through plugins/sdk or a contract in core/', () => {
    const offenders = sources(join(ROOT, 'plugins')).flatMap((f) => {
      const from = rel(f);
      const own = pluginOf(from);
      return specifiers(f).filter((s) => {
        const to = target(f, s);
        if (to === undefined || !to.startsWith('plugins/')) return false;
        const theirs = pluginOf(to);
        if (theirs === own || theirs === 'plugins/sdk') return false;
        const sameKind = from.split('/')[1] === to.split('/')[1] && KIND_FOLDERS.has(from.split('/')[1]!);
        // A kind's shared helpers, for that kind's plugins; a kind's catalogue (index.ts), over its plugins.
        if (sameKind && (kindModule(to) || (kindModule(from) && from.endsWith('/index.ts')))) return false;
        return true;
      }).map((s) => `${from} -> ${s}`);
    });
    expect(offenders).toEqual([]);
  });

  it('no import cycles among our modules', () => {
    const edges = new Map(ALL.map((f) => [rel(f), [...new Set(specifiers(f).map((s) => target(f, s)).filter((t): t is string => t !== undefined))]]));
    expect(importCycles(edges)).toEqual([]);
  });
});
