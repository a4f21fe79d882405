/**
 * Where the workplace's shared evaluation data lives (read-only, never
 * copied into the project): SCOUR_SHARED_DATA, else ../shared/data beside
 * the checkout, else /work/shared/data. Suites that need it fail (not skip)
 * when it is missing, naming the paths they looked at.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const candidates = [
  process.env.SCOUR_SHARED_DATA,
  fileURLToPath(new URL('../../../shared/data', import.meta.url)),
  '/work/shared/data',
].filter((p): p is string => p !== undefined && p !== '');

export const SHARED_DATA_DIR: string = candidates.find((p) => existsSync(`${p}/extraction/zyte-article-benchmark/ground-truth.json`)) ?? candidates[0]!;

export function requireSharedData(): string {
  if (!existsSync(`${SHARED_DATA_DIR}/extraction/zyte-article-benchmark/ground-truth.json`)) {
    throw new Error(`the shared evaluation data is missing: looked in ${candidates.join(', ')} (set SCOUR_SHARED_DATA)`);
  }
  return SHARED_DATA_DIR;
}
