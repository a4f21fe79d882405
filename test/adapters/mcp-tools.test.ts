/**
 * adapters/mcp/tools.ts with a scripted Dispatcher: what a tool sends, the
 * job wait (final status, the bound, a 429 while polling, an error while
 * polling), local refusals (arguments not an object, arguments to usage),
 * a server that cannot be reached, an unknown tool, and the renderings.
 */
import { describe, expect, it } from 'vitest';
import {
  type ApiAnswer, callTool, type Dispatcher, errorResult, NO_ARGUMENTS, renderBulk, renderCrawl, renderMap, renderResearch, renderScrape, renderSearch,
  toolDefinitions, UnknownTool,
} from '../../adapters/mcp/tools.js';

interface Sent { method: string; path: string; body: unknown }

function scripted(...answers: (ApiAnswer | Error)[]): Dispatcher & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    async call(method, path, body) {
      sent.push({ method, path, body });
      const a = answers.shift();
      if (a === undefined) throw new Error(`unexpected call ${method} ${path}`);
      if (a instanceof Error) throw a;
      return a;
    },
  };
}

const text = (r: { content: { text: string }[] }) => r.content.map((c) => c.text).join('\n');
const crawlJob = (status: string, extra: Record<string, unknown> = {}) => ({
  job_id: 'crawl_1', status, status_url: 'http://h:1/v1/crawl/crawl_1', url: 'http://site/', collection: 'acc_1', pages_done: 2, pages_failed: 0, pages_queued: 1, pages_skipped: 0, credits_used: 6, ...extra,
});

describe('MCP tools (adapters/mcp/tools.ts)', () => {
  it('scrape asks for Markdown unless told otherwise; usage is a GET with no body', async () => {
    const d = scripted({ status: 200, body: { url: 'u', final_url: 'u', content: '<title>T &amp; U</title>', markdown: '# Hi', status_code: 200, content_type: 'text/html', credits_used: 3, remaining_credits: 7 } },
      { status: 200, body: { url: 'u', final_url: 'u', content: '', text_content: 'plain', status_code: 200, content_type: 'text/html', credits_used: 3 } },
      { status: 200, body: { credits_used: 1, credits_remaining: 2, plan: 'free', reset_date: 'x', breakdown: [] } });
    const a = await callTool('scrape', { url: 'u' }, d);
    expect(d.sent[0]).toEqual({ method: 'POST', path: '/v1/scrape', body: { url: 'u', markdown: true } });
    expect(text(a)).toMatch(/^# T & U\n\nURL: u\n/);
    expect(text(a)).toContain('# Hi');
    const b = await callTool('scrape', { url: 'u', markdown: false }, d);
    expect(d.sent[1]!.body).toEqual({ url: 'u', markdown: false });
    expect(text(b)).toContain('plain');
    await callTool('usage', undefined, d);
    expect(d.sent[2]).toEqual({ method: 'GET', path: '/v1/usage', body: undefined });
  });

  it('a job is polled at its status path until final', async () => {
    const d = scripted({ status: 202, body: crawlJob('queued') }, { status: 200, body: crawlJob('running') }, { status: 200, body: crawlJob('completed', { pages_done: 3, credits_used: 9 }) });
    const r = await callTool('crawl', { url: 'http://site/' }, d, { pollMs: 1 });
    expect(d.sent.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/crawl', 'GET /v1/crawl/crawl_1', 'GET /v1/crawl/crawl_1']);
    expect(r.isError).toBeUndefined();
    expect(r.structuredContent).toMatchObject({ status: 'completed', pages_done: 3 });
    expect(text(r)).toContain('Job crawl_1: completed.');
  });

  it('past the wait bound: the last status, not an error, saying where to poll', async () => {
    const running = { status: 200, body: crawlJob('running') };
    const d = scripted({ status: 202, body: crawlJob('queued') }, ...Array.from({ length: 50 }, () => running));
    const t0 = Date.now();
    const r = await callTool('crawl', { url: 'http://site/' }, d, { jobWaitMs: 150, pollMs: 20 });
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(r.isError).toBeUndefined();
    expect(r.structuredContent!.status).toBe('running');
    expect(text(r)).toContain('not finished yet: GET http://h:1/v1/crawl/crawl_1');
  });

  it('a 429 while polling waits and goes on; another error while polling is the tool error', async () => {
    const d = scripted({ status: 202, body: crawlJob('queued') }, { status: 429, body: { code: 'RATE_LIMITED', error: 'slow down', retry_after: 0 } }, { status: 200, body: crawlJob('completed') });
    expect((await callTool('crawl', { url: 'x' }, d, { pollMs: 1 })).structuredContent!.status).toBe('completed');
    const e = scripted({ status: 202, body: crawlJob('queued') }, { status: 503, body: { code: 'SERVICE_UNAVAILABLE', error: 'down', retry_after: 1 } });
    const r = await callTool('crawl', { url: 'x' }, e, { pollMs: 1 });
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('SERVICE_UNAVAILABLE: down\nRetry after 1 s.');
  });

  it('errors: the API body as structuredContent, "CODE: message" and the details as text; local refusals in the same shape', async () => {
    const body = { error: 'Request validation failed', code: 'MISSING_PARAMETER', validation_errors: [{ field: 'url', message: 'must be string' }], request_id: 'r', timestamp: 't' };
    const r = await callTool('scrape', { url: 1 }, scripted({ status: 400, body }));
    expect(r).toEqual({ isError: true, content: [{ type: 'text', text: 'MISSING_PARAMETER: Request validation failed\n- url: must be string' }], structuredContent: body });
    expect(text(errorResult({ code: 'NO_CREDITS', error: 'Not enough credits', credits_remaining: 0, upgrade_url: 'https://x' }))).toBe('NO_CREDITS: Not enough credits\nCredits remaining: 0.\nUpgrade: https://x');
    const notObject = await callTool('search', ['q'], scripted());
    expect(notObject.structuredContent).toMatchObject({ code: 'MISSING_PARAMETER', validation_errors: [{ field: 'arguments' }] });
    const usageArgs = await callTool('usage', { a: 1 }, scripted());
    expect(usageArgs.structuredContent).toMatchObject({ code: 'MISSING_PARAMETER', validation_errors: [{ field: 'a', message: 'is not a known field' }] });
    const html = await callTool('usage', {}, scripted({ status: 502, body: '<html>bad gateway</html>' }));
    expect(html.structuredContent).toEqual({ error: '<html>bad gateway</html>', code: 'HTTP_502' });
  });

  it('no answer at all: a tool error with the dispatcher\'s code; an unknown tool throws UnknownTool', async () => {
    const r = await callTool('usage', {}, scripted(Object.assign(new Error('network failure calling http://x'), { code: 'NETWORK_ERROR' })));
    expect(text(r)).toBe('NETWORK_ERROR: network failure calling http://x');
    await expect(callTool('rm_rf', {}, scripted())).rejects.toBeInstanceOf(UnknownTool);
  });

  it('tool definitions from an OpenAPI document: request schemas as is, missing routes left out', () => {
    const schema = { type: 'object', properties: { url: { type: 'string' } }, required: ['url'], additionalProperties: false };
    const doc = { paths: { '/v1/scrape': { post: { summary: 'Scrape one URL.', requestBody: { content: { 'application/json': { schema } } } } }, '/v1/usage': { get: { summary: 'Usage.' } } } };
    const tools = toolDefinitions(doc, 30_000);
    expect(tools.map((t) => t.name)).toEqual(['scrape', 'usage']);
    expect(tools[0]!.inputSchema).toBe(schema);
    expect(tools[0]!.description.startsWith('Scrape one URL.')).toBe(true);
    expect(tools[1]!.inputSchema).toEqual(NO_ARGUMENTS);
    expect(toolDefinitions({ paths: { '/v1/crawl': { post: { summary: 'Crawl.' } } } }, 30_000)[0]!.description).toContain('up to 30 s');
  });

  it('renderings stay short and readable', () => {
    expect(renderScrape({ url: 'a', final_url: 'b', status_code: 200, content_type: 'text/html', content: '', meta_data: { title: 'Meta title' }, main_content: 'Main', markdown: 'x'.repeat(200_000) }))
      .toMatch(/^# Meta title\n\nURL: b \(asked: a\)[\s\S]*cut at 100000 characters/);
    expect(renderSearch({ query: 'q', search_results: [{ title: 'T', link: 'https://l', snippet: 'S  s', date: '2024-01-01' }], credits_used: 1, remaining_credits: 2 }))
      .toBe('Search "q": 1 result. Credits used: 1; remaining: 2.\n\n1. [T](https://l)\n   2024-01-01: S s');
    expect(renderBulk({ total: 2, succeeded: 1, failed: 1, credits_used: 3, remaining_credits: 4, results: [
      { url: 'a', success: true, result: { status_code: 200 } }, { url: 'b', success: false, error: { code: 'TARGET_TIMEOUT', error: 'too slow' } },
    ] })).toBe('Bulk scrape: 2 URLs, 1 succeeded, 1 failed. Credits used: 3; remaining: 4.\n- ok a (HTTP 200)\n- failed b: TARGET_TIMEOUT: too slow');
    expect(renderCrawl(crawlJob('completed', { stop_reason: 'max_pages' }))).toBe(
      'Job crawl_1: completed.\nPages: 2 stored, 0 failed, 1 queued, 0 skipped. Credits used: 6.\nStop reason: max_pages.\nStored in the index collection acc_1 (search it with the search tool).',
    );
    expect(renderMap({ links: [{ url: 'https://s/', title: 'Home  page', source: 'page' }, { url: 'https://s/a', source: 'sitemap' }], credits_used: 1, remaining_credits: 9,
      warnings: [{ code: 'TIME_LIMIT', message: 'ran out' }] }))
      .toBe('Map: 2 URLs. Credits used: 1; remaining: 9.\n- https://s/ (Home page)\n- https://s/a [sitemap]\nWarning TIME_LIMIT: ran out');
    expect(renderMap({ links: [], credits_used: 1 })).toBe('Map: 0 URLs. Credits used: 1.');
    const report = { research_query: 'Q?', executive_summary: 'Sum.', key_insights: [{ statement: 'A holds.', confidence: 0.5, statement_evidence: { source_id: 'src_1' }, supporting_evidence: [] }],
      citations: [{ source_id: 'src_1', url: 'https://s', text: 'Author (2024). Title.' }], credits_used: 5, remaining_credits: 5 };
    expect(renderResearch(report)).toBe('# Q?\n\n## Summary\n\nSum.\n\n## Key insights\n\n1. A holds. (confidence 0.50; [src_1])\n\n## Citations\n\n- [src_1] Author (2024). Title. https://s\n\nCredits used: 5; remaining: 5.');
    expect(renderResearch({ job_id: 'res_1', status: 'completed', stage: 'completed', result: report })).toContain('Job res_1: completed.\n\n# Q?');
    expect(renderResearch({ job_id: 'res_1', status: 'failed', stage: 'failed', error: { code: 'NO_SOURCES', message: 'none' } })).toBe('Job res_1: failed.\nNO_SOURCES: none');
  });
});
