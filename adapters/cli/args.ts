/**
 * The command line's one parser: node:util's parseArgs splits it (the API
 * commands call it directly, strict; the admin, index, crawl, loadtest and
 * doctor commands through the helpers here), and these helpers keep the
 * commands' own wording and rules on top of it: a long option `--name` or
 * `--name=value`, an option that takes a value takes the next argument
 * whatever it is, and anything not starting with `--` (`-` and `-x`
 * included) is a positional argument.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';

export type ArgToken =
  | { readonly kind: 'positional'; readonly value: string; readonly raw: string }
  | {
    readonly kind: 'option';
    /** Without the dashes; '' for a bare `--`. */
    readonly name: string;
    /** From `--name=value`, or the next argument for an option in `values`; undefined when neither. */
    readonly value: string | undefined;
    /** Written `--name=value`. */
    readonly inline: boolean;
    readonly raw: string;
  };

/** The arguments in order, as positionals and long options; `values` names the options that take a value. */
export function argTokens(argv: readonly string[], values: readonly string[]): ArgToken[] {
  const { tokens } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(values.map((name) => [name, { type: 'string' as const }])),
    strict: false, allowPositionals: true, tokens: true,
  });
  const out: ArgToken[] = [];
  const seen = new Set<number>();
  for (const t of tokens) {
    if (t.kind === 'positional') {
      out.push({ kind: 'positional', value: t.value, raw: t.value });
      continue;
    }
    // A group of short options (`-abc`) is one argument.
    if (seen.has(t.index)) continue;
    seen.add(t.index);
    const raw = argv[t.index]!;
    if (!raw.startsWith('--')) {
      out.push({ kind: 'positional', value: raw, raw });
      continue;
    }
    const eq = raw.indexOf('=');
    if (eq !== -1) {
      out.push({ kind: 'option', name: raw.slice(2, eq), value: raw.slice(eq + 1), inline: true, raw });
      continue;
    }
    out.push({ kind: 'option', name: raw.slice(2), value: t.kind === 'option' ? t.value : undefined, inline: false, raw });
  }
  return out;
}

export interface ArgSpec {
  /** Options that take a value, at most once each. */
  readonly values?: readonly string[];
  /** Options that take a value and may be repeated. */
  readonly lists?: readonly string[];
  /** Options without a value (`--json`). */
  readonly flags?: readonly string[];
  /** A check of each value as it is read (throws UsageError). */
  readonly check?: (name: string, value: string) => void;
}

export interface Args {
  readonly positional: string[];
  readonly values: Map<string, string>;
  readonly lists: Map<string, string[]>;
  readonly flags: Set<string>;
}

/**
 * The command line checked against `spec`, in order: an unknown option,
 * a value missing or empty, or one given twice is a UsageError (exit 2).
 */
export function cliArgs(argv: readonly string[], spec: ArgSpec): Args {
  const values = spec.values ?? [];
  const lists = spec.lists ?? [];
  const flags = spec.flags ?? [];
  const out: Args = { positional: [], values: new Map(), lists: new Map(), flags: new Set() };
  for (const t of argTokens(argv, [...values, ...lists])) {
    if (t.kind === 'positional') {
      out.positional.push(t.value);
      continue;
    }
    if (flags.includes(t.name) && !t.inline) {
      out.flags.add(t.name);
      continue;
    }
    const list = lists.includes(t.name);
    if (!list && !values.includes(t.name)) throw new UsageError(`unknown option --${t.name}`);
    if (t.value === undefined || t.value === '') throw new UsageError(`--${t.name} needs a value`);
    spec.check?.(t.name, t.value);
    if (list) {
      out.lists.set(t.name, [...(out.lists.get(t.name) ?? []), t.value]);
      continue;
    }
    if (out.values.has(t.name)) throw new UsageError(`--${t.name} given twice`);
    out.values.set(t.name, t.value);
  }
  return out;
}
