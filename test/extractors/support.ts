/** Shared helpers of the extractor tests: a Page from an HTML string, and the benchmark data (when present). */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parsePage } from '../../plugins/sdk/parse.js';
import { requireSharedData, SHARED_DATA_DIR } from '../support/shared-data.js';
import type { Page } from '../../plugins/sdk/scrape.js';

export const page = (html: string, url = 'https://example.com/news/story.html', contentType = 'text/html; charset=utf-8'): Page =>
  parsePage({ url, finalUrl: url, statusCode: 200, contentType, html });

/** The Zyte article-extraction benchmark, read at test time (never copied into the project). */
export const BENCHMARK_DIR = `${SHARED_DATA_DIR}/extraction/zyte-article-benchmark/`;
export const hasBenchmark = existsSync(`${BENCHMARK_DIR}ground-truth.json`);

export function benchmarkPage(id: string): { html: string; url: string; truth: string } {
  requireSharedData();
  const gt = JSON.parse(readFileSync(`${BENCHMARK_DIR}ground-truth.json`, 'utf8')) as Record<string, { articleBody: string; url: string }>;
  const entry = gt[id]!;
  return {
    html: gunzipSync(readFileSync(`${BENCHMARK_DIR}html/${id}.html.gz`)).toString('utf8'),
    url: entry.url,
    truth: entry.articleBody,
  };
}
