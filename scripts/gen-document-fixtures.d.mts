/** Types of gen-document-fixtures.mjs (the test documents, and word recall). */
export function makeLongPdf(pages: number, seed?: number): Promise<{ bytes: Uint8Array; expected: string }>;
export function words(text: string): string[];
export function wordRecall(expected: string, got: string): number;
