/**
 * Reading a Tavily body by hand: each field's type and range checked with
 * a message in Tavily's words, every problem collected (one 400 lists them
 * all), `null` read as absent (Python clients send None for unset
 * options), and the options Scour does not honour collected as warnings
 * rather than refused.
 */
import type { FieldIssue } from '../../../core/errors.js';

export interface Warning {
  readonly code: string;
  readonly message: string;
}

export class BodyReader {
  readonly issues: FieldIssue[] = [];
  readonly warnings: Warning[] = [];
  readonly body: Record<string, unknown>;
  private readonly seen = new Set<string>();

  constructor(raw: unknown) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      this.issues.push({ field: 'body', message: 'must be a JSON object' });
      this.body = {};
    } else {
      this.body = raw as Record<string, unknown>;
    }
  }

  private value(field: string): unknown {
    this.seen.add(field);
    const v = this.body[field];
    return v === null ? undefined : v;
  }

  private bad(field: string, message: string): undefined {
    this.issues.push({ field, message });
    return undefined;
  }

  string(field: string, opts: { required?: boolean; max?: number } = {}): string | undefined {
    const v = this.value(field);
    if (v === undefined) return opts.required ? this.bad(field, 'is required') : undefined;
    if (typeof v !== 'string') return this.bad(field, 'must be a string');
    if (opts.max !== undefined && v.length > opts.max) return this.bad(field, `must be at most ${opts.max} characters`);
    return v;
  }

  integer(field: string, min: number, max: number): number | undefined {
    const v = this.value(field);
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) return this.bad(field, 'must be an integer');
    if (v < min || v > max) return this.bad(field, `must be between ${min} and ${max}`);
    return v;
  }

  number(field: string, min: number, max: number): number | undefined {
    const v = this.value(field);
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.bad(field, 'must be a number');
    if (v < min || v > max) return this.bad(field, `must be between ${min} and ${max}`);
    return v;
  }

  boolean(field: string): boolean | undefined {
    const v = this.value(field);
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') return this.bad(field, 'must be a boolean');
    return v;
  }

  /** One of `values`; `booleans` also takes true and false. */
  choice<T extends string>(field: string, values: readonly T[], booleans = false): T | boolean | undefined {
    const v = this.value(field);
    if (v === undefined) return undefined;
    if (booleans && typeof v === 'boolean') return v;
    if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
    return this.bad(field, `must be ${booleans ? 'true, false or ' : ''}one of ${values.map((x) => `"${x}"`).join(', ')}`);
  }

  /** A list of strings, each at most `maxLength`; `single` also takes one string. */
  strings(field: string, maxItems: number, maxLength: number, single = false): string[] | undefined {
    const v = this.value(field);
    if (v === undefined) return undefined;
    const list = single && typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list)) return this.bad(field, single ? 'must be a string or a list of strings' : 'must be a list of strings');
    if (list.length > maxItems) return this.bad(field, `must have at most ${maxItems} items`);
    const out: string[] = [];
    let ok = true;
    list.forEach((x, i) => {
      if (typeof x !== 'string') ok = this.bad(`${field}[${i}]`, 'must be a string') ?? false;
      else if (x.length === 0 || x.length > maxLength) ok = this.bad(`${field}[${i}]`, `must be 1 to ${maxLength} characters`) ?? false;
      else out.push(x);
    });
    return ok ? out : undefined;
  }

  /** A field Scour accepts but does not apply: a warning when it asks for something (not false, 0 or empty). */
  ignored(field: string, why: string): void {
    const v = this.value(field);
    if (v === undefined || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0)) return;
    this.warn('OPTION_IGNORED', `${field} is not supported by Scour and was ignored: ${why}`);
  }

  /** Fields read without effect or warning (the clients' own bookkeeping). */
  accept(...fields: string[]): void {
    for (const f of fields) this.seen.add(f);
  }

  warn(code: string, message: string): void {
    this.warnings.push({ code, message });
  }

  /** A warning for each field no reader asked about (at most 20 named). */
  unknownFields(): void {
    const unknown = Object.keys(this.body).filter((k) => !this.seen.has(k));
    if (unknown.length === 0) return;
    const named = unknown.slice(0, 20).map((k) => JSON.stringify(k.slice(0, 64))).join(', ');
    this.warn('UNKNOWN_FIELD', `Ignored unknown field${unknown.length === 1 ? '' : 's'} ${named}${unknown.length > 20 ? ` and ${unknown.length - 20} more` : ''}`);
  }
}
