/**
 * Finds every regular expression literal in the service's own code (core/,
 * plugins/, adapters/, config/) with the TypeScript parser and checks each
 * with recheck's automaton checker (https://makenowjust-labs.github.io/recheck/),
 * which proves a pattern linear or builds an input that makes it backtrack
 * (lookarounds and back-references are beyond it: unknown). The result is
 * what test/security/redos.test.ts compares with its allow-list: every
 * pattern recheck does not prove safe must be listed there with the reason
 * its input is bounded (or be rewritten).
 *
 * `node --import tsx scripts/redos-scan.ts` prints the patterns that are
 * not proven safe, one per line, as `file:line /source/flags complexity`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSync } from 'recheck';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SCANNED_DIRS = ['core', 'plugins', 'adapters', 'config'];

export interface FoundRegex {
  readonly file: string;
  readonly line: number;
  readonly source: string;
  readonly flags: string;
}

export interface RegexVerdict extends FoundRegex {
  /** safe: proven linear; vulnerable: an attack string exists; unknown: recheck could not decide in time. */
  readonly status: 'safe' | 'vulnerable' | 'unknown';
  /** For vulnerable ones: polynomial degree or exponential. */
  readonly complexity?: string;
  readonly attack?: string;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.gen.ts')) out.push(p);
  }
  return out;
}

/** Every regex literal, by file and line. */
export function findRegexes(root = ROOT): FoundRegex[] {
  const found: FoundRegex[] = [];
  for (const dir of SCANNED_DIRS) {
    for (const file of tsFiles(join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
          const literal = node.getText(sf);
          const end = literal.lastIndexOf('/');
          found.push({
            file: relative(root, file),
            line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1,
            source: literal.slice(1, end),
            flags: literal.slice(end + 1),
          });
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
  }
  return found;
}

/** recheck's verdict on one pattern (the automaton checker first, fuzzing when it cannot apply). */
export function verdict(r: FoundRegex): RegexVerdict {
  const d = checkSync(r.source, r.flags, { timeout: 10_000, checker: 'automaton' });
  if (d.status === 'safe') return { ...r, status: 'safe' };
  if (d.status === 'vulnerable') {
    const c = d.complexity;
    return { ...r, status: 'vulnerable', complexity: c.type === 'exponential' ? 'exponential' : `polynomial ${c.degree}`, attack: d.attack.pattern };
  }
  return { ...r, status: 'unknown' };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const all = findRegexes();
  const t0 = performance.now();
  const flagged = all.map(verdict).filter((v) => v.status !== 'safe');
  for (const v of flagged) process.stdout.write(`${v.file}:${v.line} /${v.source}/${v.flags} ${v.status}${v.complexity ? ` ${v.complexity}` : ''}\n`);
  process.stderr.write(`${all.length} regex literals, ${flagged.length} not proven safe (${Math.round(performance.now() - t0)} ms)\n`);
}
