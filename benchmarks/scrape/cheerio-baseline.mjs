// The baseline of the static scrape bench, in its own process (forked by
// run.mjs, so it has a core and a heap of its own, as the Scour server
// does): Crawlee's CheerioCrawler over the same pages, no retries, storage
// in memory only, logging off. Its requestHandler does work comparable to
// Scour's extractors: the parse (Crawlee's), the body text, links made
// absolute, images, meta tags and JSON-LD.
//
// Protocol (IPC): receives { urls, warmUrls, concurrency }; answers
// { ok, result } or { ok: false, error }.
import { performance } from 'node:perf_hooks';
import { CheerioCrawler } from '@crawlee/cheerio';
import { Configuration, log } from '@crawlee/core';

log.setLevel(log.LEVELS.OFF);

function extract($, url) {
  const base = (() => {
    const href = $('base[href]').attr('href');
    try { return href ? new URL(href, url).href : url; } catch { return url; }
  })();
  const abs = (v) => {
    if (!v) return undefined;
    try { return new URL(v, base).href; } catch { return undefined; }
  };
  const title = $('title').first().text().trim();
  const jsonLd = [];
  $('script[type="application/ld+json"]').each((_, el) => {
    try { jsonLd.push(JSON.parse($(el).text())); } catch { /* invalid JSON-LD is skipped, as Scour does */ }
  });
  const meta = {};
  $('meta').each((_, el) => {
    const m = $(el);
    const key = m.attr('name') ?? m.attr('property') ?? m.attr('http-equiv') ?? (m.attr('charset') !== undefined ? 'charset' : undefined);
    if (key) meta[key.toLowerCase()] = m.attr('content') ?? m.attr('charset') ?? '';
  });
  const links = [];
  $('a[href]').each((_, el) => {
    const a = $(el);
    const href = abs(a.attr('href'));
    if (href) links.push({ url: href, text: a.text().trim(), rel: a.attr('rel') ?? null });
  });
  const images = [];
  $('img').each((_, el) => {
    const i = $(el);
    const src = abs(i.attr('src') ?? i.attr('data-src'));
    if (src) images.push({ src, alt: i.attr('alt') ?? '' });
  });
  // Text: the body without scripts, styles and templates, whitespace collapsed.
  const body = $('body').clone();
  body.find('script, style, noscript, template').remove();
  const text = body.text().replace(/\s+/g, ' ').trim();
  return { title, text, links, images, meta, jsonLd };
}

async function crawl(urls, concurrency) {
  const config = new Configuration({ persistStorage: false, purgeOnStart: true });
  let handled = 0;
  let failed = 0;
  let textChars = 0;
  let linkCount = 0;
  const failures = [];
  const crawler = new CheerioCrawler({
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    maxRequestRetries: 0,
    requestHandlerTimeoutSecs: 60,
    navigationTimeoutSecs: 30,
    statusMessageLoggingInterval: 3600,
    async requestHandler({ $, request }) {
      const r = extract($, request.loadedUrl ?? request.url);
      handled++;
      textChars += r.text.length;
      linkCount += r.links.length;
    },
    async failedRequestHandler({ request }, error) {
      failed++;
      if (failures.length < 5) failures.push(`${request.url}: ${String(error?.message ?? error).split('\n')[0]}`);
    },
  }, config);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const stats = await crawler.run(urls.map((url) => ({ url })));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  await crawler.teardown?.().catch?.(() => undefined);
  return { pages: handled, failed, wallMs, cpuS, textChars, linkCount, failures, finished: stats.requestsFinished, crawleeFailed: stats.requestsFailed };
}

process.once('message', async ({ urls, warmUrls, concurrency }) => {
  try {
    if (warmUrls.length > 0) await crawl(warmUrls, concurrency);
    const result = await crawl(urls, concurrency);
    process.send({ ok: true, result });
  } catch (e) {
    process.send({ ok: false, error: String(e?.stack ?? e) });
  }
});
