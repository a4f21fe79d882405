/**
 * Scour's MCP tools, for both transports (`scour mcp` over stdio, POST /mcp
 * on the server): their definitions, read from the OpenAPI document the
 * server builds from its routes (so each tool's inputSchema is its route's
 * request schema, as is), and one tool call: the API request through a
 * `Dispatcher`, waiting for a job when the API answers with one, and the
 * answer as an MCP result (structuredContent: the API's JSON body; content:
 * a short text rendering). API errors become tool errors (isError) whose
 * text starts with the spec's code and whose structuredContent is the spec's
 * error body. No SDK types here: plain JSON shapes the SDK accepts.
 */

/** One API answer: its HTTP status and decoded JSON body. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Where a tool call's API requests go: in process through the server's own
 * HTTP pipeline (POST /mcp), or over HTTP to a running server (`scour mcp`).
 * Resolves for every answer (2xx or error); rejects only when no answer came
 * (the caller gave up, or the server could not be reached: then with an
 * Error whose `code` names why).
 */
export interface Dispatcher {
  call(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal | undefined): Promise<ApiAnswer>;
}

export type JsonObject = Record<string, unknown>;

/** A tool as tools/list lists it. */
export interface ToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
  readonly annotations: JsonObject;
}

/** A tools/call result. */
export interface ToolResult {
  [key: string]: unknown;
  readonly content: { type: 'text'; text: string }[];
  readonly structuredContent?: JsonObject;
  readonly isError?: boolean;
}

interface ToolRoute {
  readonly name: string;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** Added to the route's summary in the tool's description. */
  readonly note?: string;
  readonly readOnly: boolean;
  readonly render: (body: JsonObject) => string;
}

/** Longest text rendering; the whole answer is always in structuredContent. */
export const MAX_TEXT = 100_000;

/** How long a tool waits for a job (crawl, or an asynchronous bulk scrape or research) by default. */
export const DEFAULT_JOB_WAIT_MS = 60_000;

const FINAL = new Set(['completed', 'failed', 'stopped', 'cancelled']);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const obj = (v: unknown): JsonObject | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function clip(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n\n[… cut at ${max} characters; the whole answer is in structuredContent]`;
}

const oneLine = (s: string, max = 300) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };
/** The <title> of an HTML page, for a scrape's heading when meta_data was not asked for. */
function htmlTitle(html: string): string | undefined {
  // indexOf, not /<title[^>]*>([\s\S]{0,2000}?)<\/title>/: that pattern's [^>]* rescans the rest on each "<title" (quadratic).
  const head = html.slice(0, 200_000);
  const lower = head.toLowerCase();
  const open = lower.indexOf('<title');
  if (open === -1) return undefined;
  const start = lower.indexOf('>', open);
  const end = start === -1 ? -1 : lower.indexOf('</title>', start);
  if (end === -1 || end - start - 1 > 2000) return undefined;
  const t = oneLine(head.slice(start + 1, end).replace(/&(#?\w+);/g, (all, e: string) => ENTITIES[e.toLowerCase()] ?? all), 500);
  return t === '' ? undefined : t;
}

function credits(b: JsonObject): string {
  const used = num(b.credits_used);
  const left = num(b.remaining_credits);
  if (used === undefined) return '';
  return left === undefined ? `Credits used: ${used}.` : `Credits used: ${used}; remaining: ${left}.`;
}

export function renderScrape(b: JsonObject): string {
  const meta = obj(b.meta_data);
  const url = str(b.final_url) ?? str(b.url) ?? '';
  const title = str(meta?.title) ?? htmlTitle(str(b.content) ?? '') ?? url;
  const body = str(b.markdown) ?? str(b.main_content) ?? str(b.text_content) ?? '';
  const head = [`# ${oneLine(title, 500)}`, '', `URL: ${url}${b.url !== undefined && b.url !== url ? ` (asked: ${String(b.url)})` : ''}`,
    `Status: ${String(b.status_code ?? '?')}, ${String(b.content_type ?? '')}. ${credits(b)}`];
  for (const w of arr(b.warnings)) head.push(`Warning ${String(obj(w)?.code ?? '')}: ${String(obj(w)?.message ?? '')}`);
  if (str(b.screenshot_url)) head.push(`Screenshot: ${String(b.screenshot_url)}`);
  return clip(`${head.join('\n')}\n\n${body}`);
}

export function renderSearch(b: JsonObject): string {
  const results = arr(b.search_results).map(obj).filter((r): r is JsonObject => r !== undefined);
  const lines = [`Search "${oneLine(str(b.query) ?? '', 200)}": ${results.length} result${results.length === 1 ? '' : 's'}. ${credits(b)}`];
  results.forEach((r, i) => {
    lines.push('', `${i + 1}. [${oneLine(str(r.title) || str(r.link) || '', 200)}](${str(r.link) ?? ''})`);
    const date = str(r.date);
    const snippet = str(r.snippet);
    if (snippet) lines.push(`   ${date ? `${date}: ` : ''}${oneLine(snippet)}`);
  });
  const scraped = arr(b.scraped_content).map(obj).filter((r): r is JsonObject => r !== undefined);
  if (scraped.length > 0) {
    lines.push('', 'Scraped pages:');
    for (const s of scraped) {
      const e = obj(s.error);
      lines.push(e ? `- ${str(s.url) ?? ''}: ${String(e.code)}: ${String(e.message)}` : `- ${str(s.url) ?? ''} (${(str(s.content) ?? str(s.text) ?? '').length} characters)`);
    }
  }
  for (const w of arr(b.warnings)) lines.push(`Warning (${String(obj(w)?.provider ?? '')}) ${String(obj(w)?.code ?? '')}: ${String(obj(w)?.message ?? '')}`);
  return clip(lines.join('\n'));
}

function bulkLines(results: unknown[]): string[] {
  return results.map(obj).filter((r): r is JsonObject => r !== undefined).map((r) => {
    if (r.success === true) return `- ok ${str(r.url) ?? ''} (HTTP ${String(obj(r.result)?.status_code ?? '?')})`;
    const e = obj(r.error);
    return `- failed ${str(r.url) ?? ''}: ${String(e?.code ?? '')}: ${String(e?.error ?? e?.message ?? '')}`;
  });
}

export function renderBulk(b: JsonObject): string {
  const job = jobLine(b);
  if (job !== undefined) {
    const p = obj(b.progress);
    const lines = [job, `URLs: ${String(p?.total ?? '?')}, done ${String(p?.done ?? '?')}, succeeded ${String(p?.succeeded ?? '?')}, failed ${String(p?.failed ?? '?')}, pending ${String(p?.pending ?? '?')}. Credits used: ${String(b.credits_used ?? 0)}.`];
    return clip([...lines, ...bulkLines(arr(b.results))].join('\n'));
  }
  const head = `Bulk scrape: ${String(b.total ?? '?')} URLs, ${String(b.succeeded ?? '?')} succeeded, ${String(b.failed ?? '?')} failed. ${credits(b)}`;
  return clip([head, ...bulkLines(arr(b.results))].join('\n'));
}

export function renderCrawl(b: JsonObject): string {
  const lines = [jobLine(b) ?? `Crawl ${String(b.job_id ?? '')}: ${String(b.status ?? '')}`];
  if (b.pages_done !== undefined) {
    lines.push(`Pages: ${String(b.pages_done)} stored, ${String(b.pages_failed ?? 0)} failed, ${String(b.pages_queued ?? 0)} queued, ${String(b.pages_skipped ?? 0)} skipped. Credits used: ${String(b.credits_used ?? 0)}.`);
  }
  if (str(b.stop_reason)) lines.push(`Stop reason: ${String(b.stop_reason)}.`);
  if (str(b.collection)) lines.push(`Stored in the index collection ${String(b.collection)} (search it with the search tool).`);
  return lines.join('\n');
}

export function renderMap(b: JsonObject): string {
  const links = arr(b.links).map(obj).filter((r): r is JsonObject => r !== undefined);
  const lines = [`Map: ${links.length} URL${links.length === 1 ? '' : 's'}. ${credits(b)}`];
  for (const l of links) {
    const title = str(l.title);
    lines.push(`- ${str(l.url) ?? ''}${title ? ` (${oneLine(title, 200)})` : ''}${l.source === 'sitemap' ? ' [sitemap]' : ''}`);
  }
  for (const w of arr(b.warnings)) lines.push(`Warning ${String(obj(w)?.code ?? '')}: ${String(obj(w)?.message ?? '')}`);
  return clip(lines.join('\n'));
}

export function renderResearch(b: JsonObject): string {
  const job = jobLine(b);
  if (job !== undefined) {
    const report = obj(b.result);
    if (report !== undefined) return clip(`${job}\n\n${renderResearch(report)}`);
    const e = obj(b.error);
    return e ? `${job}\n${String(e.code)}: ${String(e.message)}` : job;
  }
  const lines = [`# ${oneLine(str(b.research_query) ?? 'Research', 500)}`];
  const summary = str(b.executive_summary);
  if (summary) lines.push('', '## Summary', '', summary);
  const insights = arr(b.key_insights).map(obj).filter((r): r is JsonObject => r !== undefined);
  if (insights.length > 0) {
    lines.push('', '## Key insights', '');
    insights.forEach((x, i) => {
      const conf = num(x.confidence);
      const from = [...new Set([str(obj(x.statement_evidence)?.source_id), ...arr(x.supporting_evidence).map((e) => str(obj(e)?.source_id))].filter((s): s is string => !!s))];
      lines.push(`${i + 1}. ${oneLine(str(x.statement) ?? '', 1000)}${conf !== undefined ? ` (confidence ${conf.toFixed(2)}` : ' ('}${from.length ? `; ${from.map((s) => `[${s}]`).join(' ')}` : ''})`);
    });
  }
  const recs = arr(b.recommendations);
  if (recs.length > 0) {
    lines.push('', '## Recommendations', '');
    for (const r of recs) lines.push(`- ${oneLine(typeof r === 'string' ? r : str(obj(r)?.recommendation) ?? str(obj(r)?.text) ?? JSON.stringify(r), 1000)}`);
  }
  const citations = arr(b.citations).map(obj).filter((r): r is JsonObject => r !== undefined);
  if (citations.length > 0) {
    lines.push('', '## Citations', '');
    for (const c of citations) {
      const t = oneLine(str(c.text) ?? '', 1000);
      const url = str(c.url);
      lines.push(`- [${str(c.source_id) ?? ''}] ${t}${url && !t.includes(url) ? ` ${url}` : ''}`);
    }
  } else {
    const sources = arr(b.sources_analyzed).map(obj).filter((r): r is JsonObject => r !== undefined);
    if (sources.length > 0) {
      lines.push('', '## Sources', '');
      for (const s of sources) lines.push(`- [${str(s.id) ?? ''}] ${oneLine(str(s.title) ?? '', 300)} ${str(s.url) ?? ''}`);
    }
  }
  if (str(b.export_url)) lines.push('', `Export: ${String(b.export_url)}`);
  for (const w of arr(b.warnings)) lines.push(`Warning ${String(obj(w)?.code ?? '')}: ${String(obj(w)?.message ?? '')}`);
  const c = credits(b);
  if (c) lines.push('', c);
  return clip(lines.join('\n'));
}

export function renderUsage(b: JsonObject): string {
  const lines = [
    `Plan ${String(b.plan ?? '?')}: ${String(b.credits_used ?? '?')} credits used this period, ${String(b.credits_remaining ?? '?')} remaining${num(b.credits_reserved) ? ` (${String(b.credits_reserved)} held by requests in flight)` : ''}; the period resets at ${String(b.reset_date ?? '?')}.`,
  ];
  for (const r of arr(b.breakdown)) {
    const o = obj(r);
    if (o) lines.push(`- ${String(o.operation)}: ${String(o.credits)} credits, ${String(o.requests)} requests`);
  }
  return lines.join('\n');
}

/** A job's status line, or undefined when the body is not a job. */
function jobLine(b: JsonObject): string | undefined {
  const id = str(b.job_id);
  const status = str(b.status);
  if (id === undefined || status === undefined) return undefined;
  const waited = FINAL.has(status) ? '' : ` (not finished yet: GET ${str(b.status_url) ?? 'its status URL'} with the same API key for progress)`;
  return `Job ${id}: ${status}${str(b.stage) && b.stage !== status ? ` (stage ${String(b.stage)})` : ''}${waited}.`;
}

export const TOOL_ROUTES: readonly ToolRoute[] = [
  { name: 'search', title: 'Web search', method: 'POST', path: '/v1/search', readOnly: true, render: renderSearch },
  { name: 'scrape', title: 'Scrape a page', method: 'POST', path: '/v1/scrape', readOnly: true, render: renderScrape,
    note: 'The text result is the page as Markdown (markdown defaults to true here; it costs nothing); structuredContent is the whole API answer.' },
  { name: 'bulk_scrape', title: 'Scrape many pages', method: 'POST', path: '/v1/scrape/bulk', readOnly: true, render: renderBulk,
    note: 'When the API answers with a job (202: async or callback_url), the tool waits for it (up to its wait bound) and returns the job status with the results.' },
  { name: 'crawl', title: 'Crawl a site into the index', method: 'POST', path: '/v1/crawl', readOnly: false, render: renderCrawl,
    note: 'The tool submits the crawl and waits for it to finish (up to its wait bound), then returns the job status; an unfinished crawl keeps running on the server.' },
  { name: 'map', title: 'Map a site\'s URLs', method: 'POST', path: '/v1/map', readOnly: true, render: renderMap,
    note: 'The text result is one URL a line (its link text, and [sitemap] when a sitemap lists it); use search to rank by a phrase.' },
  { name: 'research', title: 'Research a question', method: 'POST', path: '/v1/research', readOnly: true, render: renderResearch,
    note: 'The text result is the report in Markdown with its citations. When the API answers with a job (202: async or callback_url), the tool waits for it (up to its wait bound).' },
  { name: 'usage', title: 'Credit usage', method: 'GET', path: '/v1/usage', readOnly: true, render: renderUsage },
];

/** The input schema of a tool whose route takes no body (usage). */
export const NO_ARGUMENTS: JsonObject = { type: 'object', properties: {}, additionalProperties: false };

interface OpenApiOperation {
  readonly summary?: string;
  readonly requestBody?: { readonly content?: Record<string, { readonly schema?: JsonObject }> };
}

/**
 * The tools, from an OpenAPI document (the server's GET /v1/openapi.json, or
 * core/openapi.ts's document of the routes): each tool's inputSchema is its
 * route's request schema as the document gives it, which is the route's
 * schema as is. A tool whose route the server does not serve is left out.
 */
export function toolDefinitions(openapi: unknown, jobWaitMs = DEFAULT_JOB_WAIT_MS): ToolDefinition[] {
  const paths = obj(obj(openapi)?.paths) ?? {};
  const out: ToolDefinition[] = [];
  for (const t of TOOL_ROUTES) {
    const op = obj(obj(paths[t.path])?.[t.method.toLowerCase()]) as OpenApiOperation | undefined;
    if (op === undefined) continue;
    const schema = op.requestBody?.content?.['application/json']?.schema;
    const note = t.note?.replace('its wait bound', `${Math.round(jobWaitMs / 1000)} s`);
    out.push({
      name: t.name,
      title: t.title,
      description: `${op.summary ?? t.title}${note ? ` ${note}` : ''} Errors come back as tool errors: "CODE: message", and the API's error body in structuredContent.`,
      inputSchema: schema ?? NO_ARGUMENTS,
      annotations: { title: t.title, readOnlyHint: t.readOnly, openWorldHint: t.name !== 'usage', idempotentHint: t.name === 'usage', destructiveHint: false },
    });
  }
  return out;
}

/** A tool error from an API error body (spec 7.1: error, code, validation_errors, retry_after, ...). */
export function errorResult(body: JsonObject): ToolResult {
  const code = str(body.code) ?? 'ERROR';
  const lines = [`${code}: ${str(body.error) ?? str(body.message) ?? 'the request failed'}`];
  if (str(body.details)) lines.push(`Details: ${String(body.details)}`);
  for (const v of arr(body.validation_errors)) {
    const o = obj(v);
    if (o) lines.push(`- ${String(o.field)}: ${String(o.message)}`);
  }
  if (num(body.retry_after) !== undefined) lines.push(`Retry after ${String(body.retry_after)} s.`);
  if (num(body.credits_remaining) !== undefined) lines.push(`Credits remaining: ${String(body.credits_remaining)}.`);
  if (str(body.upgrade_url)) lines.push(`Upgrade: ${String(body.upgrade_url)}`);
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], structuredContent: body };
}

/** A tool error made here (not by the API), in the API's error body shape. */
export function localError(code: string, message: string, validationErrors?: readonly { field: string; message: string }[]): ToolResult {
  return errorResult({ error: message, code, ...(validationErrors ? { validation_errors: validationErrors } : {}) });
}

/** The answer of an error status, as an error body (whatever the server sent). */
function asErrorBody(a: ApiAnswer): JsonObject {
  const b = obj(a.body);
  if (b !== undefined && typeof b.code === 'string') return b;
  return { error: typeof a.body === 'string' && a.body ? a.body.slice(0, 500) : `HTTP ${a.status}`, code: `HTTP_${a.status}` };
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  if (signal?.aborted) return reject(signal.reason);
  const t = setTimeout(() => { signal?.removeEventListener('abort', stop); resolve(); }, ms);
  const stop = () => { clearTimeout(t); reject(signal!.reason); };
  signal?.addEventListener('abort', stop, { once: true });
});

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
  /** How long to wait for a job to finish (default DEFAULT_JOB_WAIT_MS). */
  readonly jobWaitMs?: number | undefined;
  /** First poll interval (then ×1.5 up to 2 s); default 250 ms. */
  readonly pollMs?: number | undefined;
}

/**
 * Poll a job's status until it is final or the bound passes. A 429 waits its
 * retry_after (within the bound); any other error answer is returned as is.
 */
async function waitForJob(d: Dispatcher, accepted: JsonObject, o: CallOptions): Promise<ApiAnswer> {
  let path: string;
  try {
    path = new URL(String(accepted.status_url), 'http://scour.invalid').pathname;
  } catch {
    return { status: 202, body: accepted };
  }
  const deadline = Date.now() + (o.jobWaitMs ?? DEFAULT_JOB_WAIT_MS);
  let interval = o.pollMs ?? 250;
  let last: ApiAnswer = { status: 202, body: accepted };
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return last;
    await sleep(Math.min(interval, left), o.signal);
    interval = Math.min(interval * 1.5, 2_000);
    const a = await d.call('GET', path, undefined, o.signal);
    if (a.status === 429) {
      const retry = num(obj(obj(a.body))?.retry_after) ?? 1;
      interval = Math.max(interval, retry * 1000);
      continue;
    }
    if (a.status >= 400) return a;
    last = a;
    if (FINAL.has(String(obj(a.body)?.status))) return a;
  }
}

/**
 * Run one tool: its API request, a job's wait when the API answers with one,
 * and the result. Unknown names throw (the transports answer a JSON-RPC
 * error); everything the API answers, or a server that cannot be reached,
 * is a result (an error result for failures).
 */
export async function callTool(name: string, args: unknown, d: Dispatcher, o: CallOptions = {}): Promise<ToolResult> {
  const t = TOOL_ROUTES.find((x) => x.name === name);
  if (t === undefined) throw new UnknownTool(name);
  const input = args === undefined || args === null ? {} : args;
  if (obj(input) === undefined) return localError('MISSING_PARAMETER', 'Invalid request', [{ field: 'arguments', message: 'must be an object' }]);
  let body: unknown;
  if (t.method === 'GET') {
    const extra = Object.keys(input as JsonObject);
    if (extra.length > 0) return localError('MISSING_PARAMETER', 'Invalid request', extra.map((f) => ({ field: f, message: 'is not a known field' })));
    body = undefined;
  } else {
    // A scrape renders as Markdown: ask for it unless the caller said otherwise (it costs nothing).
    body = t.name === 'scrape' && !('markdown' in (input as JsonObject)) ? { ...(input as JsonObject), markdown: true } : input;
  }
  let answer: ApiAnswer;
  try {
    answer = await d.call(t.method, t.path, body, o.signal);
    const b = obj(answer.body);
    if (answer.status < 400 && b !== undefined && typeof b.job_id === 'string' && typeof b.status_url === 'string' && !FINAL.has(String(b.status))) {
      answer = await waitForJob(d, b, o);
    }
  } catch (e) {
    if (o.signal?.aborted) throw e;
    const code = str((e as { code?: unknown })?.code) ?? 'NETWORK_ERROR';
    return localError(code, e instanceof Error ? e.message : String(e));
  }
  if (answer.status >= 400) return errorResult(asErrorBody(answer));
  const b = obj(answer.body);
  if (b === undefined) return localError(`HTTP_${answer.status}`, 'The API answered with something other than a JSON object');
  return { content: [{ type: 'text', text: t.render(b) }], structuredContent: b };
}

/** A tools/call for a name that is not one of the tools. */
export class UnknownTool extends Error {
  constructor(readonly tool: string) {
    super(`Unknown tool: ${tool.slice(0, 100)} (tools: ${TOOL_ROUTES.map((t) => t.name).join(', ')})`);
  }
}
