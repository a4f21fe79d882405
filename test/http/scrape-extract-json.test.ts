/**
 * extract_json on POST /v1/scrape (issue 27), through the real server on
 * both HTTP adapters, a loopback target site, and a loopback model: a
 * node:http server speaking the OpenAI chat completions wire format
 * (POST /v1/chat/completions; `{choices: [{message: {role, content},
 * finish_reason}]}`), scripted per test. Covered: a valid answer; invalid
 * then valid (the retry carries the problems); invalid twice (502, nothing
 * charged); invented quotes (retried, then delivered with warnings);
 * non-JSON answers; a model that hangs (the request's timeout: 504, nothing
 * charged); a model server that fails (503); a server without a model
 * (503 before anything is fetched); hostile schemas and prompts (400 naming
 * the field, the model never asked); a page with no content; bulk refusing
 * the field.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, expectErrorBody, type Reply } from '../support/http.js';
import { ADAPTERS, startScour, type Running } from '../support/server.js';

const ADMIN = 'extract-json-admin-token-0123456789';

const ARTICLE = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Wombats dig square burrows</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article>
<h1>Wombats dig square burrows</h1>
<p class="byline">By Dana Reyes, 3 March 2025</p>
<p>The common wombat digs burrows up to   thirty
metres long. Researchers at the University of Tasmania measured 112 burrows over two summers and found that most had a single entrance.</p>
<p>"They are the engineers of the bush," said Professor Lee Tran, who led the survey. The team counted an average of 2.4 chambers per burrow.</p>
<p>Wombat droppings are cube-shaped, a fact that has fascinated biologists for decades. The new study does not address that question.</p>
</article>
<footer>Copyright Example News</footer>
</body></html>`;

/** A quote the page has. */
const QUOTE = 'They are the engineers of the bush,';
const SCHEMA = {
  type: 'object',
  properties: {
    headline: { type: 'string', 'x-quote': true },
    author: { type: 'string' },
    burrows_measured: { type: 'integer', minimum: 0 },
    quotes: { type: 'array', items: { type: 'string', 'x-quote': true }, maxItems: 5 },
  },
  required: ['headline', 'burrows_measured'],
  additionalProperties: false,
};
const GOOD = { headline: 'Wombats dig square burrows', author: 'Dana Reyes', burrows_measured: 112, quotes: [QUOTE] };

// ---------------------------------------------------------------------------
// The loopback target site and the loopback model.

let site: http.Server;
let siteUrl: string;
let siteHits = 0;
let model: http.Server;
let modelBase: string;
interface Received { url: string; headers: http.IncomingHttpHeaders; json: { model?: string; messages?: { role: string; content: string }[]; temperature?: number; max_tokens?: number; response_format?: unknown } }
const received: Received[] = [];
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler;

const completion = (content: string | null, finish = 'stop') => JSON.stringify({
  id: 'chatcmpl-test', object: 'chat.completion', created: 1_700_000_000, model: 'test-model',
  choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: finish }],
  usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
});
/** Answers in turn (the last one again if asked more often): a string as it is, anything else as JSON. */
const answers = (...list: unknown[]): Handler => {
  let n = 0;
  return (_req, res) => {
    const a = list[Math.min(n++, list.length - 1)];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completion(typeof a === 'string' ? a : JSON.stringify(a)));
  };
};

beforeAll(async () => {
  site = http.createServer((req, res) => {
    siteHits++;
    if (req.url === '/article') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(ARTICLE);
    } else if (req.url === '/long') {
      const para = '<p>The wombat walks through the long grass of the valley every evening before the rain comes down. </p>'.repeat(400);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!DOCTYPE html><html><head><title>Long</title></head><body><article><h1>A long walk</h1>${para}</article></body></html>`);
    } else if (req.url === '/image.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

  model = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let json: Received['json'] = {};
      try { json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['json']; } catch { /* checked by the tests */ }
      received.push({ url: req.url ?? '', headers: req.headers, json });
      res.on('error', () => undefined);
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  modelBase = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  model.closeAllConnections();
  site.closeAllConnections();
  await new Promise<void>((resolve) => model.close(() => resolve()));
  await new Promise<void>((resolve) => site.close(() => resolve()));
});

beforeEach(() => {
  received.length = 0;
  handler = answers(GOOD);
});

describe.each(ADAPTERS)('extract_json (%s)', (adapter) => {
  let s: Running;
  let bare: Running;

  const admin = (srv: Running, method: string, path: string, body?: unknown) => call(`${srv.url}/admin/v1${path}`, method, { auth: `Bearer ${ADMIN}`, body });
  const account = async (srv = s): Promise<{ id: string; key: string }> => {
    const r = await admin(srv, 'POST', '/accounts', { plan: 'unicorn', credits: 1000 });
    expect(r.status, r.text).toBe(201);
    return { id: r.body.account_id, key: r.body.api_key };
  };
  const balance = async (key: string, srv = s): Promise<number> => {
    const u = await call(`${srv.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` });
    expect(u.body.credits_reserved).toBe(0);
    return u.body.credits_remaining as number;
  };
  const scrape = (key: string, body: Record<string, unknown>, srv = s): Promise<Reply> => call(`${srv.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });
  const ask = (extract_json: unknown, more: Record<string, unknown> = {}) => ({ url: `${siteUrl}/article`, extract_json, ...more });

  /** One scrape on a fresh account: its reply, and what it cost (from the balance, which must agree with credits_used on a 200). */
  async function run(body: Record<string, unknown>, srv = s): Promise<{ r: Reply; cost: number }> {
    const a = await account(srv);
    const before = await balance(a.key, srv);
    const r = await scrape(a.key, body, srv);
    const cost = before - (await balance(a.key, srv));
    if (r.status === 200) expect(r.body.credits_used).toBe(cost);
    return { r, cost };
  }

  beforeAll(async () => {
    const common = { adminToken: ADMIN, allowPrivateTargets: 'loopback' as const, searchProviders: ['local'] };
    s = await startScour(adapter, { ...common, llm: { baseUrl: modelBase, model: 'test-model', apiKey: 'sk-test-json', timeoutMs: 10_000, maxTokens: 1_000, jsonMode: true } });
    bare = await startScour(adapter, common);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await bare?.stop();
  });

  it('a valid answer: extracted_json as the model gave it, one call in the chat completions format, 3 + 5 credits', async () => {
    const { r, cost } = await run(ask({ schema: SCHEMA, prompt: 'The article\'s headline, author, the number of burrows measured, and any quotes.' }, { main_content: true }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toEqual(GOOD);
    expect(r.body).not.toHaveProperty('extracted_json_warnings');
    expect(cost).toBe(8);
    expect(received).toHaveLength(1);
    const q = received[0]!;
    expect(q.url).toBe('/v1/chat/completions');
    expect(q.headers.authorization).toBe('Bearer sk-test-json');
    expect(q.json).toMatchObject({ model: 'test-model', temperature: 0, max_tokens: 1_000, response_format: { type: 'json_object' } });
    const [system, user] = q.json.messages!;
    expect(system!.role).toBe('system');
    expect(system!.content).toMatch(/x-quote/);
    expect(user!.role).toBe('user');
    expect(user!.content).toContain('Instructions: The article\'s headline');
    expect(user!.content).toContain(JSON.stringify(SCHEMA));
    expect(user!.content).toContain(`Page URL: ${siteUrl}/article`);
    // The main content is what the model reads: the article, not the navigation or the footer.
    expect(user!.content).toContain(r.body.main_content);
    expect(user!.content).toContain('112 burrows');
    expect(user!.content).not.toContain('Copyright Example News');
  });

  it('invalid, then valid: the retry sends the first answer back with its problems, and the second answer is delivered', async () => {
    handler = answers({ headline: 'Wombats dig square burrows', burrows_measured: 'one hundred and twelve', extra: true }, GOOD);
    const { r, cost } = await run(ask({ schema: SCHEMA }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toEqual(GOOD);
    expect(cost).toBe(8);
    expect(received).toHaveLength(2);
    const retry = received[1]!.json.messages!;
    expect(retry).toHaveLength(4);
    expect(retry[2]).toEqual({ role: 'assistant', content: JSON.stringify({ headline: 'Wombats dig square burrows', burrows_measured: 'one hundred and twelve', extra: true }) });
    expect(retry[3]!.role).toBe('user');
    expect(retry[3]!.content).toContain('/burrows_measured: must be integer');
    expect(retry[3]!.content).toContain('must not have the property "extra"');
  });

  it('invalid twice: 502 MODEL_OUTPUT_INVALID with the second answer\'s problems, and nothing charged', async () => {
    handler = answers({ headline: 'Wombats dig square burrows' }, { headline: 42, burrows_measured: -1 });
    const { r, cost } = await run(ask({ schema: SCHEMA }));
    expectErrorBody(r, 502, 'MODEL_OUTPUT_INVALID');
    expect(r.body.model_errors).toEqual(expect.arrayContaining([
      { path: '/headline', message: 'must be string' },
      { path: '/burrows_measured', message: 'must be >= 0' },
    ]));
    expect(r.body.details).toContain('/headline: must be string');
    expect(cost).toBe(0);
    expect(received).toHaveLength(2);
  });

  it('answers that are not JSON: retried, then 502 naming it, nothing charged; prose then JSON in a fence is delivered', async () => {
    handler = answers('Sure! The headline is "Wombats dig square burrows".', 'I cannot answer that.');
    const bad = await run(ask({ schema: SCHEMA }));
    expectErrorBody(bad.r, 502, 'MODEL_OUTPUT_INVALID');
    expect(bad.r.body.model_errors).toEqual([{ path: '', message: expect.stringMatching(/^the answer is not JSON .*I cannot answer that/) }]);
    expect(bad.cost).toBe(0);
    expect(received).toHaveLength(2);
    expect(received[1]!.json.messages![3]!.content).toMatch(/is not JSON/);

    received.length = 0;
    handler = answers('not json at all', `\`\`\`json\n${JSON.stringify(GOOD)}\n\`\`\``);
    const ok = await run(ask({ schema: SCHEMA }));
    expect(ok.r.status, ok.r.text).toBe(200);
    expect(ok.r.body.extracted_json).toEqual(GOOD);
  });

  it('an empty answer (the model says nothing) counts as not JSON', async () => {
    handler = answers('', '');
    const { r, cost } = await run(ask({ schema: SCHEMA }));
    expectErrorBody(r, 502, 'MODEL_OUTPUT_INVALID');
    expect(r.body.model_errors[0].message).toMatch(/no text/);
    expect(cost).toBe(0);
  });

  it('an invented quote is sent back once; still invented, the answer is delivered with a QUOTE_NOT_FOUND warning per value', async () => {
    const invented = { ...GOOD, headline: 'Wombats build square burrows', quotes: [QUOTE, 'Wombats are the best engineers'] };
    handler = answers(invented, invented);
    const { r, cost } = await run(ask({ schema: SCHEMA }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toEqual(invented);
    expect(r.body.extracted_json_warnings).toEqual([
      { code: 'QUOTE_NOT_FOUND', path: '/headline', message: expect.stringContaining('Wombats build square burrows') },
      { code: 'QUOTE_NOT_FOUND', path: '/quotes/1', message: expect.stringContaining('Wombats are the best engineers') },
    ]);
    expect(cost).toBe(8);
    expect(received).toHaveLength(2);
    const retry = received[1]!.json.messages![3]!.content;
    expect(retry).toContain('/headline: "Wombats build square burrows" is marked x-quote but is not in the page text');
    expect(retry).toContain('/quotes/1');
    expect(retry).not.toContain('/quotes/0');
  });

  it('an invented quote corrected on the retry: no warning; quotes are compared with whitespace runs as one space', async () => {
    // The page has "up to   thirty\nmetres" (three spaces, a line break); a quote with one space and a tab is found.
    const schema = { type: 'object', properties: { length: { type: 'string', 'x-quote': true } }, required: ['length'] };
    handler = answers({ length: 'digs burrows up to forty metres long' }, { length: 'digs burrows up to\tthirty metres long' });
    const { r } = await run(ask({ schema }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toEqual({ length: 'digs burrows up to\tthirty metres long' });
    expect(received[1]!.json.messages![3]!.content).toContain('/length: "digs burrows up to forty metres long" is marked x-quote');
    expect(r.body).not.toHaveProperty('extracted_json_warnings');
    expect(received).toHaveLength(2);
  });

  it('a model that hangs: 504 MODEL_TIMEOUT after the request\'s timeout, nothing charged', async () => {
    handler = () => undefined; // never answers
    const t0 = Date.now();
    const { r, cost } = await run(ask({ schema: SCHEMA }, { timeout: 2 }));
    const took = Date.now() - t0;
    expectErrorBody(r, 504, 'MODEL_TIMEOUT');
    expect(r.body.timeout).toBe(2);
    expect(r.body.error).toMatch(/no complete answer within the request's timeout/);
    expect(cost).toBe(0);
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(took).toBeLessThan(8_000);
  }, 20_000);

  it('a client that goes away while the model thinks: the model call is cancelled, the hold released, nothing charged', async () => {
    let closed = false;
    handler = (req) => { req.socket.on('close', () => { closed = true; }); }; // never answers
    const a = await account();
    const before = await balance(a.key);
    const gone = new AbortController();
    const pending = call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${a.key}`, body: ask({ schema: SCHEMA }, { timeout: 60 }), signal: gone.signal }).catch(() => 'aborted');
    const until = async (ok: () => boolean | Promise<boolean>) => {
      const t0 = Date.now();
      while (!(await ok()) && Date.now() - t0 < 5_000) await new Promise((resolve) => setTimeout(resolve, 25));
    };
    await until(() => received.length === 1);
    expect(received).toHaveLength(1);
    gone.abort();
    expect(await pending).toBe('aborted');
    await until(() => closed);
    expect(closed, 'the model call was cancelled').toBe(true);
    await until(async () => (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${a.key}` })).body.credits_reserved === 0);
    expect(await balance(a.key)).toBe(before);
  }, 20_000);

  it('a model server that fails (HTTP 500): 503 MODEL_UNAVAILABLE with its message, nothing charged, not retried', async () => {
    handler = (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } }));
    };
    const { r, cost } = await run(ask({ schema: SCHEMA }));
    expectErrorBody(r, 503, 'MODEL_UNAVAILABLE');
    expect(r.body.details).toMatch(/HTTP 500 \(server_error\): The server had an error/);
    expect(cost).toBe(0);
    expect(received).toHaveLength(1);
  });

  it('a reply over 1 MiB: 503 MODEL_UNAVAILABLE (too_large), read no further, nothing charged', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completion(JSON.stringify({ headline: 'x'.repeat(2 * 1024 * 1024), burrows_measured: 1 })));
    };
    const { r, cost } = await run(ask({ schema: SCHEMA }));
    expectErrorBody(r, 503, 'MODEL_UNAVAILABLE');
    expect(r.body.details).toMatch(/too_large/);
    expect(cost).toBe(0);
  });

  it('an answer cut at max_tokens (finish_reason length, half a JSON object) is not JSON: retried, and a whole one is delivered', async () => {
    let n = 0;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(n++ === 0 ? completion('{"headline": "Wombats dig squ', 'length') : completion(JSON.stringify(GOOD)));
    };
    const { r } = await run(ask({ schema: SCHEMA }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toEqual(GOOD);
    expect(received[1]!.json.messages![3]!.content).toMatch(/is not JSON/);
  });

  it('a server without a model: 503 MODEL_UNAVAILABLE before the page is fetched, nothing charged; a bad schema is still a 400 there', async () => {
    const hits = siteHits;
    const { r, cost } = await run(ask({ schema: SCHEMA }), bare);
    expectErrorBody(r, 503, 'MODEL_UNAVAILABLE');
    expect(r.body.details).toMatch(/LLM_BASE_URL/);
    expect(cost).toBe(0);
    expect(siteHits).toBe(hits);
    const bad = await run(ask({ schema: { type: 'array' } }), bare);
    expectErrorBody(bad.r, 400, 'MISSING_PARAMETER');
    expect(bad.r.body.validation_errors).toEqual([{ field: 'extract_json.schema', message: expect.stringMatching(/"type": "object"/) }]);
    // Without extract_json the same server scrapes as ever.
    const plain = await run({ url: `${siteUrl}/article` }, bare);
    expect(plain.r.status).toBe(200);
    expect(plain.r.body).not.toHaveProperty('extracted_json');
  });

  const deep = (n: number): Record<string, unknown> => (n === 0 ? { type: 'string' } : { type: 'object', properties: { a: deep(n - 1) } });
  it.each<[string, unknown, RegExp]>([
    ['a string', 'give me the title', /must be object/],
    ['an array', [{ type: 'object' }], /must be object/],
    ['null', null, /must be object/],
    ['not an object schema', { type: 'array', items: { type: 'string' } }, /must have "type": "object"/],
    ['too deep', deep(12), /nests deeper than 16 levels/],
    ['too big', { type: 'object', properties: Object.fromEntries(Array.from({ length: 800 }, (_, n) => [`field_${n}`, { type: 'string' }])) }, /characters as JSON; at most 16384/],
    ['an invalid JSON Schema', { type: 'object', properties: { a: { type: 'strin' } } }, /is not a valid JSON Schema: schema\/properties\/a\/type/],
    ['an unknown keyword', { type: 'object', requird: ['a'] }, /unknown keyword: "requird"/],
    ['a regular expression', { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } }, /\/properties\/a\/pattern is not accepted: regular expressions/],
    ['patternProperties', { type: 'object', patternProperties: { '^x': { type: 'string' } } }, /patternProperties is not accepted/],
    ['a remote $ref', { type: 'object', properties: { a: { $ref: 'http://127.0.0.1:9/schema.json' } } }, /\$ref must be a local reference/],
    ['a missing local $ref', { type: 'object', properties: { a: { $ref: '#/definitions/nope' } } }, /can't resolve reference/],
    ['a $ref to itself', { type: 'object', $ref: '#' }, /\$ref chain does not end/],
    ['two $refs to each other', { type: 'object', definitions: { x: { $ref: '#/definitions/y' }, y: { $ref: '#/definitions/x' } }, properties: { a: { $ref: '#/definitions/x' } } }, /\$ref chain does not end/],
    ['a property that is its own $ref', { type: 'object', properties: { a: { $ref: '#/properties/a' } } }, /\$ref chain does not end/],
    ['an unknown format', { type: 'object', properties: { a: { type: 'string', format: 'telepathy' } } }, /unknown format "telepathy"/],
    ['another draft', { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }, /draft-04/],
    ['an $id', { $id: 'https://example.com/s', type: 'object' }, /\$id is not accepted/],
    ['$async', { $async: true, type: 'object' }, /\$async is not accepted/],
    ['x-quote not a boolean', { type: 'object', properties: { a: { type: 'string', 'x-quote': 'yes' } } }, /x-quote/],
  ])('a hostile schema (%s): 400 naming extract_json.schema, the model never asked, nothing fetched', async (_name, schema, message) => {
    const hits = siteHits;
    const { r, cost } = await run(ask({ schema }));
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    expect(r.body.validation_errors).toEqual([{ field: 'extract_json.schema', message: expect.stringMatching(message) }]);
    expect(cost).toBe(0);
    expect(received).toHaveLength(0);
    expect(siteHits).toBe(hits);
  });

  it('a property named "pattern" is fine (only the keyword is refused); a recursive local $ref compiles and validates', async () => {
    const schema = {
      type: 'object',
      definitions: { node: { type: 'object', properties: { name: { type: 'string' }, child: { $ref: '#/definitions/node' } } } },
      properties: { pattern: { type: 'string' }, tree: { $ref: '#/definitions/node' } },
    };
    handler = answers({ pattern: 'square', tree: { name: 'a', child: { name: 'b', child: { name: 7 } } } }, { pattern: 'square', tree: { name: 'a', child: { name: 'b' } } });
    const { r } = await run(ask({ schema }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toEqual({ pattern: 'square', tree: { name: 'a', child: { name: 'b' } } });
    expect(received[1]!.json.messages![3]!.content).toContain('/tree/child/child/name: must be string');
  });

  it.each<[string, string, unknown, RegExp]>([
    ['no schema', 'extract_json.schema', { prompt: 'the title' }, /required|must have/],
    ['an unknown field', 'extract_json.model', { schema: SCHEMA, model: 'gpt-5' }, /./],
    ['an empty prompt', 'extract_json.prompt', { schema: SCHEMA, prompt: '' }, /at least 1|fewer than 1|must NOT have fewer/],
    ['a prompt over 4000 characters', 'extract_json.prompt', { schema: SCHEMA, prompt: 'x'.repeat(4001) }, /4000/],
    ['a prompt with control characters', 'extract_json.prompt', { schema: SCHEMA, prompt: 'the title\u0000 and \u001b[31m' }, /control characters/],
    ['a prompt that is not a string', 'extract_json.prompt', { schema: SCHEMA, prompt: ['the title'] }, /string/],
    ['extract_json not an object', 'extract_json', 'the title please', /object/],
  ])('a bad extract_json (%s): 400 naming %s', async (_name, field, x, message) => {
    const { r, cost } = await run(ask(x));
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    expect(r.body.validation_errors).toEqual(expect.arrayContaining([{ field: expect.stringMatching(new RegExp(`^${field.replace(/\./g, '\\.')}`)), message: expect.stringMatching(message) }]));
    expect(cost).toBe(0);
    expect(received).toHaveLength(0);
  });

  it('a prompt of exactly 4000 characters, with line breaks and tabs, is accepted', async () => {
    const prompt = `Headline.\n\tAuthor.\n${'x'.repeat(4000 - 19)}`;
    expect(prompt).toHaveLength(4000);
    const { r } = await run(ask({ schema: SCHEMA, prompt }));
    expect(r.status, r.text).toBe(200);
    expect(received[0]!.json.messages![1]!.content).toContain(prompt);
  });

  it('a page with no main content (an image): extracted_json null with NO_CONTENT, no model asked, only the base price', async () => {
    const { r, cost } = await run({ url: `${siteUrl}/image.png`, extract_json: { schema: SCHEMA } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toBeNull();
    expect(r.body.extracted_json_warnings).toEqual([{ code: 'NO_CONTENT', path: '', message: expect.stringMatching(/no model was asked/) }]);
    expect(cost).toBe(3);
    expect(received).toHaveLength(0);
  });

  it('a long page: the model is sent the first 20000 characters, cut at a space, with a CONTENT_TRUNCATED warning', async () => {
    const schema = { type: 'object', properties: { title: { type: 'string', 'x-quote': true } } };
    handler = answers({ title: 'A long walk' });
    const { r } = await run({ url: `${siteUrl}/long`, extract_json: { schema } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.extracted_json).toEqual({ title: 'A long walk' });
    expect(r.body.extracted_json_warnings).toEqual([{ code: 'CONTENT_TRUNCATED', path: '', message: expect.stringMatching(/first \d+ of the \d+ characters/) }]);
    const user = received[0]!.json.messages![1]!.content;
    const page = user.slice(user.indexOf('<<<PAGE\n') + 8, user.indexOf('\nPAGE>>>'));
    expect(page.length).toBeLessThanOrEqual(20_000);
    expect(page.length).toBeGreaterThan(19_800);
    expect(page.endsWith(' ')).toBe(false);
  });

  it('bulk scrape does not take extract_json (400), and asks no model', async () => {
    const a = await account();
    const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${a.key}`, body: { urls: [`${siteUrl}/article`], extract_json: { schema: SCHEMA } } });
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    expect(JSON.stringify(r.body.validation_errors)).toContain('extract_json');
    expect(received).toHaveLength(0);
  });
});
