/**
 * Precision and recall of profile extraction over labelled cases (a test
 * table or a benchmark): each case lists the profiles expected and those
 * found, compared by platform + canonical URL.
 */

export interface ScoreCase {
  readonly expected: readonly { readonly platform: string; readonly url: string }[];
  readonly actual: readonly { readonly platform: string; readonly url: string }[];
}

export interface Score {
  readonly cases: number;
  /** Found and expected. */
  readonly truePositives: number;
  /** Found, not expected. */
  readonly falsePositives: number;
  /** Expected, not found. */
  readonly falseNegatives: number;
  /** tp / (tp + fp); 1 when nothing was found. */
  readonly precision: number;
  /** tp / (tp + fn); 1 when nothing was expected. */
  readonly recall: number;
  readonly f1: number;
}

export const profileKey = (p: { readonly platform: string; readonly url: string }): string => `${p.platform} ${p.url}`;

export function precisionRecall(cases: readonly ScoreCase[]): Score {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const c of cases) {
    const expected = new Set(c.expected.map(profileKey));
    const actual = new Set(c.actual.map(profileKey));
    for (const k of actual) if (expected.has(k)) tp++;
    else fp++;
    for (const k of expected) if (!actual.has(k)) fn++;
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { cases: cases.length, truePositives: tp, falsePositives: fp, falseNegatives: fn, precision, recall, f1 };
}
