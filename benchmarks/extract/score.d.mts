/** Types of score.mjs (the article-extraction-benchmark metric), for the TypeScript tests. */
export interface DocScore { readonly precision: number; readonly recall: number; readonly f1: number }
export declare function tokenize(text: string | null | undefined): string[];
export declare function shingles(text: string | null | undefined, n?: number): Map<string, number>;
export declare function tpFpFn(truth: string, predicted: string, n?: number): [number, number, number];
export declare function precisionOf(c: readonly [number, number, number]): number;
export declare function recallOf(c: readonly [number, number, number]): number;
export declare function scoreOne(truth: string, predicted: string): DocScore;
export declare function scoreAll(
  truth: Readonly<Record<string, string>>,
  predicted: Readonly<Record<string, string>>,
): { f1: number; precision: number; recall: number; perDoc: Record<string, DocScore> };
