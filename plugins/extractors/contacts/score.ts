/**
 * Precision and recall of contact extraction against hand-labelled pages,
 * shared by the contacts tests and a benchmark. Two scores:
 * - addresses: each email (lower case) and phone (E.164) is one fact; an
 *   extracted address not expected is a false positive, an expected one not
 *   extracted a false negative;
 * - fields: for each expected item, each of name, company and job_title the
 *   label states (null included: "should be absent") is one fact, compared
 *   with the extracted item holding the same email (else phone).
 */
import type { ContactItem } from './index.js';

export interface ExpectedContact {
  readonly email?: string | null;
  readonly phone?: string | null;
  readonly name?: string | null;
  readonly company?: string | null;
  readonly job_title?: string | null;
}

export interface ScoredCase {
  readonly expected: readonly ExpectedContact[];
  readonly actual: readonly ContactItem[];
}

export interface Score {
  readonly tp: number;
  readonly fp: number;
  readonly fn: number;
  /** tp / (tp + fp); 1 when nothing was extracted. */
  readonly precision: number;
  /** tp / (tp + fn); 1 when nothing was expected. */
  readonly recall: number;
  readonly f1: number;
}

const score = (tp: number, fp: number, fn: number): Score => {
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  return { tp, fp, fn, precision, recall, f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall) };
};

const addresses = (items: readonly (ExpectedContact | ContactItem)[]): Set<string> => {
  const out = new Set<string>();
  for (const i of items) {
    if (i.email !== undefined && i.email !== null) out.add(`email:${i.email.toLowerCase()}`);
    if (i.phone !== undefined && i.phone !== null) out.add(`phone:${i.phone}`);
  }
  return out;
};

const FIELDS = ['name', 'company', 'job_title'] as const;

export function scoreContacts(cases: readonly ScoredCase[]): { addresses: Score; fields: Score } {
  let atp = 0;
  let afp = 0;
  let afn = 0;
  let ftp = 0;
  let ffp = 0;
  let ffn = 0;
  for (const c of cases) {
    const want = addresses(c.expected);
    const got = addresses(c.actual);
    for (const a of got) if (want.has(a)) atp++;
    else afp++;
    for (const a of want) if (!got.has(a)) afn++;
    for (const e of c.expected) {
      const match = c.actual.find((a) =>
        e.email !== undefined && e.email !== null ? a.email?.toLowerCase() === e.email.toLowerCase() : e.phone !== undefined && e.phone !== null && a.phone === e.phone);
      for (const f of FIELDS) {
        const w = e[f];
        if (w === undefined) continue;
        const g = match?.[f] ?? null;
        if (w === null) {
          if (g !== null) ffp++;
        } else if (g === w) ftp++;
        else {
          ffn++;
          if (g !== null) ffp++;
        }
      }
    }
  }
  return { addresses: score(atp, afp, afn), fields: score(ftp, ffp, ffn) };
}
