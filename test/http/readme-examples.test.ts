/**
 * The curl examples of the README and of every page of docs/, run as
 * written with the real `curl` against a real server on loopback
 * (test/support/server.ts).
 *
 * Every ```sh block holding `curl` is read from README.md and from each
 * docs/*.md file (DOC_FILES); each `curl` command in it (with its `\`
 * continuations and multi-line quoted bodies) is one example, named by its
 * file, the heading above it in that file, and its method and path. What a
 * page shows right after a command is its expected answer: `# ...` comment
 * lines under it, or the ```json block right after its ```sh block. Each
 * file must keep at least the examples MIN_EXAMPLES names for it (and no
 * file may hold examples without being named there), so moving or losing an
 * example is never silent.
 *
 * A command runs in bash exactly as printed, with only these changes:
 * `localhost:8080` becomes the test server's address; `$KEY`, `$SCOUR_KEY`,
 * `$ADMIN` and `$SCOUR_ADMIN_TOKEN` are environment variables holding a real
 * key (a Unicorn account) and the admin token; placeholders the README marks
 * with `...` (`sk_...`, `key_...`, `bulk_6b2f0c...`) become the real key or
 * the id of that kind an earlier example answered; and, per example (the
 * SUBSTITUTE table), external URLs become loopback ones where the example is
 * about scraping an arbitrary page (a scrape, a bulk scrape, a crawl, a
 * custom extractor's product page) or about a receiver (a `callback_url`
 * becomes a loopback webhook receiver). The server's egress lets loopback
 * through (`SCOUR_ALLOW_PRIVATE_TARGETS=loopback`), and before a command runs
 * every URL left in it is checked to be a loopback one, except where the
 * URLs are data the server never fetches (index documents, the developer
 * tools' inputs): no example reaches another network. The searches find documents this test loads into the index.
 *
 * Checks: the status is 2xx (from curl's own `-D` header dump), and when the
 * README shows the answer, the response has its shape: the same keys,
 * recursively, array items by index (values differ: ids, times, scores; an
 * empty `{}` is a map whose keys are data, such as `open_graph`). An
 * example written with `...` elisions (`{...}`, `[ ... ]`, `, ...`) is a
 * partial view: every key it shows must be in the response. One written as
 * plain JSON is the whole answer: no key more, none less. The developer
 * tools and /healthz are deterministic: their values must match exactly too
 * (but `request_id`, and the few values named in VARYING). Text answers
 * (Prometheus lines) must each appear, numbers aside.
 *
 * Examples this test cannot run are listed in SKIPPED with the reason, and a
 * test checks that the list is exactly what is not run, so a new example is
 * never silently ignored.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** The files whose examples run: the README, then every page of docs/ in name order. */
const DOC_FILES = ['README.md', ...readdirSync(join(process.cwd(), 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const DOCS = new Map(DOC_FILES.map((f) => [f, readFileSync(join(process.cwd(), f), 'utf8')] as const));
/**
 * How many examples each file holds at least (README.md: the tour; the rest
 * moved from the README, which held 37 before the split).
 */
const MIN_EXAMPLES: Readonly<Record<string, number>> = {
  'README.md': 9,
  'docs/accounts-and-credits.md': 3,
  'docs/api.md': 4,
  'docs/bulk-and-webhooks.md': 3,
  'docs/clients.md': 1,
  'docs/crawl.md': 1,
  'docs/map.md': 1,
  'docs/developer-tools.md': 16,
  'docs/firecrawl.md': 1,
  'docs/research.md': 1,
  'docs/scrape.md': 1,
  'docs/search.md': 5,
  'docs/tavily.md': 2,
  'docs/writing-plugins.md': 1,
};
const ADMIN = 'readme-examples-admin-token-0123456789';

// ---------------------------------------------------------------- the examples of the README and docs/

interface Example {
  /** `<file> › <heading> › <METHOD> <path>`, with ` #n` when the same heading of the file has it more than once. */
  readonly id: string;
  /** The file it is in (README.md, docs/....md). */
  readonly file: string;
  /** 1-based line of the command in its file. */
  readonly line: number;
  readonly command: string;
  /** What the README shows as the answer, if anything. */
  readonly expected: string | undefined;
}

/** Every curl command of every ```sh block of one file, with the answer shown after it. */
function readmeExamples(file: string, readme: string): Example[] {
  const lines = readme.split('\n');
  const out: { heading: string; line: number; command: string; expected: string | undefined }[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (!l.startsWith('```')) {
      const h = /^#{1,6} (.+)$/.exec(l);
      if (h) heading = h[1]!.trim();
      continue;
    }
    const lang = l.slice(3).trim();
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    const block = lines.slice(i + 1, end);
    if (lang === 'sh' && block.some((b) => /(^|\s)curl\s/.test(b))) {
      const found: typeof out = [];
      for (let k = 0; k < block.length; k++) {
        if (!/^curl\s/.test(block[k]!)) continue;
        const start = k;
        let command = block[k]!;
        // A command goes on while a line ends with `\` or a single quote is open.
        while ((command.endsWith('\\') || (command.split("'").length - 1) % 2 === 1) && k + 1 < block.length) command += `\n${block[++k]}`;
        const comment: string[] = [];
        while (k + 1 < block.length && block[k + 1]!.startsWith('#')) comment.push(block[++k]!.replace(/^#\s?/, ''));
        found.push({ heading, line: i + 2 + start, command, expected: comment.length > 0 ? comment.join('\n') : undefined });
      }
      // A ```json block right after the ```sh block is the answer of its last command.
      if (lines[end + 1]?.startsWith('```json') && found.length > 0 && found.at(-1)!.expected === undefined) {
        let j = end + 2;
        while (j < lines.length && !lines[j]!.startsWith('```')) j++;
        found.at(-1)!.expected = lines.slice(end + 2, j).join('\n');
        end = j;
      }
      out.push(...found);
    }
    i = end;
  }
  const seen = new Map<string, number>();
  return out.map((e) => {
    const base = `${file} › ${e.heading} › ${methodOf(e.command)} ${pathOf(e.command)}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return { id: n === 1 ? base : `${base} #${n}`, file, line: e.line, command: e.command, expected: e.expected };
  });
}

function methodOf(command: string): string {
  const x = /\s-X\s+([A-Z]+)/.exec(command);
  if (x) return x[1]!;
  return /\s(-d|--data\S*)\s/.test(command) ? 'POST' : 'GET';
}

function pathOf(command: string): string {
  return /localhost:8080(\/[^\s'"?|]*)/.exec(command)?.[1] ?? '(no localhost:8080 URL)';
}

const EXAMPLES = [...DOCS].flatMap(([file, text]) => readmeExamples(file, text));

/** Examples this test cannot run, and why. Exactly these are left out (a test checks it). */
const SKIPPED: Readonly<Record<string, string>> = {};

// ---------------------------------------------------------------- loopback stand-ins

/** The research example's sources: stored in the index (and served by the stand-in site too, should research fetch them). */
const RESEARCH_DOCS = [
  ['Perovskite solar cell stability under moisture', 'academic', 'Perovskite solar cells lose efficiency when moisture reaches the absorber layer. Encapsulation slows the damage, and Oxford PV reports tandem cells that keep most of their output after damp heat tests. Moisture remains the main limit on stability in the field.'],
  ['The cost of perovskite modules', 'report', 'The cost of perovskite modules could fall below that of silicon, analysts say, because the layers are printed at low temperature. First Solar, which makes thin film modules, has studied the technology. Cost depends on how long the modules stay stable outdoors.'],
  ['Tandem cells set a record', 'news', 'Oxford PV set a record for a perovskite on silicon tandem cell. The company says stability in outdoor tests is improving, but moisture and heat still limit the lifetime of perovskite solar cells.'],
  ['Degradation pathways in perovskite absorbers', 'academic', 'Light, heat, oxygen and moisture each degrade perovskite absorbers. Ion migration limits the stability of the cells, and additives that passivate the grain boundaries slow it. The cost of such additives is small.'],
] as const;

/** The pages the scraping examples read instead of the external ones they name (a loopback site). */
const PAGES: Readonly<Record<string, { status: number; type: string; body: string }>> = {
  ...Object.fromEntries(RESEARCH_DOCS.map(([title, , text], n) => [`/research/${n}`, html(200, `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`)])),
  '/article': html(200, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Solar record</title>
    <meta name="description" content="A record for solar panel efficiency.">
    <link rel="canonical" href="/article"></head><body>
    <nav><a href="/about">About</a></nav>
    <article><h1>Solar panel efficiency hits a record</h1>
    <p>Engineers report that a new solar panel design converts more sunlight into electricity than any before it.</p>
    <p>The cell stacks two layers, each tuned to part of the spectrum, and keeps its output after a thousand hours in damp heat.</p>
    </article></body></html>`),
  '/about': html(200, '<!doctype html><title>About</title><p>About us.</p>'),
  '/a': html(200, '<!doctype html><html lang="en"><head><title>Page A</title><meta name="description" content="The first page."></head><body><p>Page A.</p></body></html>'),
  '/b': html(403, '<!doctype html><title>Access denied</title><p>Access denied.</p>'),
  '/product/42': html(200, '<!doctype html><html lang="en"><head><title>Widget</title></head><body><h1>Widget</h1><p>Price: <span class="price">$19.99</span></p></body></html>'),
  '/contact': html(200, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme Robotics: contact the press team</title>
    <meta property="og:site_name" content="Acme Robotics"></head><body>
    <main><h1>Contact us</h1><p>Acme Robotics press contact.</p>
    <p>Press contact: Dana Reyes, Head of Press, <a href="mailto:dana.reyes@acme-robotics.com">dana.reyes@acme-robotics.com</a>,
    <a href="tel:+14155550134">(415) 555-0134</a></p>
    <p>Follow us: <a href="https://x.com/acmerobotics">X</a> <a href="https://www.linkedin.com/company/acme-robotics">LinkedIn</a></p>
    </main></body></html>`),
  '/press': html(403, '<!doctype html><title>Forbidden</title><p>Forbidden.</p>'),
  '/': html(200, '<!doctype html><html lang="en"><head><title>Docs</title></head><body><h1>Docs</h1><a href="/guide/start">Start</a> <a href="/guide/install">Install</a> <a href="/blog/">Blog</a></body></html>'),
  '/guide/start': html(200, `<!doctype html><html lang="en"><head><title>Getting started</title></head><body><main><h1>Getting started</h1><p>${'Start here to learn how the service works and what it needs. '.repeat(6)}</p><a href="/guide/install">Install</a></main></body></html>`),
  '/guide/install': html(200, `<!doctype html><html lang="en"><head><title>Install</title></head><body><main><h1>Install</h1><p>${'Install the package, then run the service with its defaults. '.repeat(6)}</p><a href="/guide/start">Start</a></main></body></html>`),
};

function html(status: number, body: string): { status: number; type: string; body: string } {
  return { status, type: 'text/html; charset=utf-8', body };
}

// ---------------------------------------------------------------- comparing answers

/** A JSON-ish parser that also takes the README's `...` elisions; `open` says whether any were met. */
function parseLoose(text: string): { value: unknown; open: boolean } {
  let i = 0;
  let open = false;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const ellipsis = (): boolean => {
    ws();
    for (const e of ['...', '…']) {
      if (text.startsWith(e, i)) {
        i += e.length;
        open = true;
        return true;
      }
    }
    return false;
  };
  const fail = (what: string): never => {
    throw new Error(`cannot read the README's answer at ${i} (${what}): ${text.slice(Math.max(0, i - 30), i + 30)}`);
  };
  const string = (): string => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o: Record<string, unknown> = {};
      for (;;) {
        ws();
        if (text[i] === '}') {
          i++;
          return o;
        }
        if (!ellipsis()) {
          if (text[i] !== '"') fail('expected a key');
          const k = string();
          ws();
          if (text[i++] !== ':') fail('expected :');
          const v = value();
          if (k === '...') open = true;
          else o[k] = v;
        }
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const a: unknown[] = [];
      for (;;) {
        ws();
        if (text[i] === ']') {
          i++;
          return a;
        }
        if (!ellipsis()) a.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== ']') fail('expected , or ]');
      }
    }
    if (c === '"') return string();
    const lit = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i));
    if (!lit) return fail('expected a value');
    i += lit[0].length;
    return JSON.parse(lit[0]);
  };
  const v = value();
  ws();
  if (i !== text.length) fail('text after the value');
  return { value: v, open };
}

const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Where `actual` does not have the shape of `expected` (see the header), as `path: problem` lines. */
function shapeProblems(expected: unknown, actual: unknown, open: boolean, path = '$'): string[] {
  if (expected === null || actual === null) return []; // null stands for "none" beside any kind
  if (kind(expected) !== kind(actual)) return [`${path}: the README shows ${kind(expected)}, the server answered ${kind(actual)} (${JSON.stringify(actual)?.slice(0, 80)})`];
  if (Array.isArray(expected)) {
    const a = actual as unknown[];
    if (a.length < expected.length) return [`${path}: the README shows ${expected.length} items, the server answered ${a.length}`];
    return expected.flatMap((e, n) => shapeProblems(e, a[n], open, `${path}[${n}]`));
  }
  if (typeof expected === 'object') {
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    // `{}` shows a map whose keys are data (`open_graph`, `meta`): any keys.
    if (Object.keys(e).length === 0) return [];
    const problems: string[] = [];
    for (const k of Object.keys(e)) {
      if (!(k in a)) problems.push(`${path}.${k}: in the README, not in the answer`);
      else problems.push(...shapeProblems(e[k], a[k], open, `${path}.${k}`));
    }
    if (!open) for (const k of Object.keys(a)) if (!(k in e)) problems.push(`${path}.${k}: in the answer (${JSON.stringify(a[k])?.slice(0, 60)}), not in the README`);
    return problems;
  }
  return [];
}

/** Values that differ from run to run in the deterministic examples, by example id and path. */
const VARYING: Readonly<Record<string, readonly string[]>> = {
  'docs/developer-tools.md › jwt-decoder › POST /v1/tools/jwt-decoder': ['$.claims.checked_at'],
  'docs/developer-tools.md › regex-tester › POST /v1/tools/regex-tester': ['$.elapsed_ms'],
  'docs/developer-tools.md › uuid-generator › POST /v1/tools/uuid-generator': ['$.uuids[0]'],
};

/** Where `actual` differs from `expected` in value (request_id and the VARYING paths aside). */
function valueProblems(expected: unknown, actual: unknown, varying: readonly string[], path = '$'): string[] {
  if (path.endsWith('.request_id') || varying.includes(path)) return [];
  if (kind(expected) !== kind(actual)) return [`${path}: the README shows ${JSON.stringify(expected)}, the server answered ${JSON.stringify(actual)}`];
  if (Array.isArray(expected)) {
    const a = actual as unknown[];
    if (a.length !== expected.length) return [`${path}: the README shows ${expected.length} items, the server answered ${a.length}: ${JSON.stringify(actual).slice(0, 200)}`];
    return expected.flatMap((e, n) => valueProblems(e, a[n], varying, `${path}[${n}]`));
  }
  if (typeof expected === 'object' && expected !== null) {
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const keys = new Set([...Object.keys(e), ...Object.keys(a)]);
    return [...keys].flatMap((k) => valueProblems(e[k], a[k], varying, `${path}.${k}`));
  }
  return Object.is(expected, actual) ? [] : [`${path}: the README shows ${JSON.stringify(expected)}, the server answered ${JSON.stringify(actual)}`];
}

/** Examples whose values must match their page exactly: the developer tools and the health check. */
const exact = (e: Example) => e.id.includes('/v1/tools/') || e.id.endsWith(' /healthz');

// ---------------------------------------------------------------- running curl

function bash(script: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
  });
}

/** The hosts of every absolute URL in a command. */
const hostsIn = (command: string): string[] =>
  [...command.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/([^/\s"'\\]+)/gi)].map((m) => m[1]!.replace(/^[^@]*@/, '').replace(/:\d+$/, '').toLowerCase());

/**
 * Examples whose URLs are data the server never fetches (documents stored in
 * the index; the developer tools, which make no outbound request): they may
 * stay as the page writes them.
 */
const URLS_AS_DATA = new Set(['docs/search.md › Filling the index › POST /admin/v1/index/documents', 'docs/search.md › Filling the index › DELETE /admin/v1/index/documents']);
const urlsAreData = (e: Example) => URLS_AS_DATA.has(e.id) || e.id.includes(' /v1/tools/');

describe('the curl examples of the README and docs/ against a live server', () => {
  let s: Running;
  let site: http.Server;
  let siteUrl = '';
  const siteHits: string[] = [];
  let bulkHooks: WebhookReceiver;
  let crawlHooks: WebhookReceiver;
  let key = '';
  let accountId = '';
  const work = mkdtempSync(join(tmpdir(), 'scour-readme-'));
  /** The last id of each kind (`key`, `bulk`, `crawl`, `acct`) an example answered: for the `kind_...` placeholders of the examples. */
  const lastId = new Map<string, string>();

  /** The docs' own custom extractor (the ```ts block defining `price`, in docs/writing-plugins.md), its imports pointed at this checkout. */
  function priceExtractorModule(): string {
    const blocks = [...DOCS.values()].flatMap((text) => [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)).filter((b) => b.includes('defineExtractor') && b.includes("id: 'price'"));
    expect(blocks, 'the docs have one custom extractor example').toHaveLength(1);
    const require = createRequire(join(process.cwd(), 'package.json'));
    const source = blocks[0]!
      .replace("'../plugins/sdk/scrape.js'", JSON.stringify(join(process.cwd(), 'plugins/sdk/scrape.ts')))
      .replace("'css-select'", JSON.stringify(require.resolve('css-select')))
      .replace("'domutils'", JSON.stringify(require.resolve('domutils')));
    const file = join(work, 'price.ts');
    writeFileSync(file, source);
    return file;
  }

  /** Per example: what to put in place of the page's external URLs (see the header). */
  const SUBSTITUTE = (): Readonly<Record<string, readonly (readonly [string, string])[]>> => ({
    'README.md › Scrape › POST /v1/scrape': [['https://example.com/article', `${siteUrl}/article`]],
    'README.md › Bulk scrape › POST /v1/scrape/bulk': [['https://example.com/about', `${siteUrl}/about`], ['https://example.com/a', `${siteUrl}/a`]],
    'README.md › Crawl › POST /v1/crawl': [['https://docs.example.com/', `${siteUrl}/`]],
    'docs/crawl.md › Crawl › POST /v1/crawl': [['https://docs.example.com/', `${siteUrl}/`], ['https://hooks.example.org/scour', crawlHooks.url]],
    'README.md › Map › POST /v1/map': [['https://docs.example.com/', `${siteUrl}/`]],
    'docs/map.md › Map › POST /v1/map': [['https://docs.example.com/', `${siteUrl}/`]],
    'docs/scrape.md › Scrape › POST /v1/scrape': [['https://example.com/article', `${siteUrl}/article`]],
    'docs/bulk-and-webhooks.md › Bulk scrape › POST /v1/scrape/bulk': [['https://example.com/a', `${siteUrl}/a`], ['https://example.com/b', `${siteUrl}/b`]],
    'docs/bulk-and-webhooks.md › Bulk scrape › POST /v1/scrape/bulk #2': [['https://example.com/a', `${siteUrl}/a`], ['https://example.com/b', `${siteUrl}/b`], ['https://hooks.example.org/scour', bulkHooks.url]],
    'docs/writing-plugins.md › Custom extractors › POST /v1/scrape': [['https://shop.example/product/42', `${siteUrl}/product/42`]],
    'docs/clients.md › MCP › POST /mcp': [['https://example.com/article', `${siteUrl}/article`]],
    'docs/tavily.md › Extract › POST /tavily/extract': [['https://example.com/article', `${siteUrl}/article`], ['https://example.com/press', `${siteUrl}/press`]],
    'docs/firecrawl.md › Firecrawl compatibility › POST /firecrawl/v2/scrape': [['https://example.com/article', `${siteUrl}/article`]],
  });

  /** Work an example needs done before it runs (a job it reads must have ended). */
  const BEFORE: Readonly<Record<string, () => Promise<void>>> = {
    'docs/bulk-and-webhooks.md › Bulk scrape › GET /v1/scrape/bulk/bulk_6b2f0c...': async () => {
      // docs/bulk-and-webhooks.md shows the job completed and its webhook delivered on the second attempt.
      const job = lastId.get('bulk');
      expect(job).toBeDefined();
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await call(`${s.url}/v1/scrape/bulk/${job}`, 'GET', { auth: `Bearer ${key}` });
        if (r.body.status === 'completed' && r.body.webhook?.deliveries?.[0]?.status === 'delivered') return;
        if (Date.now() > deadline) throw new Error(`the bulk job did not complete with its webhook delivered: ${r.text.slice(0, 500)}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    },
  };

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      siteHits.push(path);
      const page = PAGES[path];
      if (page === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      res.writeHead(page.status, { 'content-type': page.type }).end(page.body);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    s = await startScour('uws', {
      adminToken: ADMIN, allowPrivateTargets: 'loopback', pluginPaths: [priceExtractorModule()], webhookSchedule: [1],
      searchProviders: ['local'], bootstrapKey: false,
    });
    const admin = `Bearer ${ADMIN}`;
    const account = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: admin, body: { plan: 'unicorn', name: 'readme' } });
    expect(account.status, account.text).toBe(201);
    key = account.body.api_key;
    accountId = account.body.account_id;
    const secret = (await call(`${s.url}/admin/v1/accounts/${accountId}/webhook-secret`, 'GET', { auth: admin })).body.secret as string;
    // The bulk job of docs/bulk-and-webhooks.md shows its webhook delivered on the second attempt.
    bulkHooks = await startWebhookReceiver({ secret, failFirst: 1 });
    crawlHooks = await startWebhookReceiver({ secret });

    const day = 24 * 3600 * 1000;
    const docs = [
      // The search example: a recent English news page on a subdomain of example.com, about solar panel efficiency.
      {
        url: 'https://news.example.com/solar-record', title: 'Solar panel efficiency hits a record', type: 'news', language: 'en',
        published_date: new Date(Date.now() - day).toISOString(),
        text: 'Engineers report that a new solar panel design converts more sunlight into electricity than any before it. Its efficiency was measured by an independent laboratory.',
      },
      // The enrichment example: the company's contact page (read) and its press page (refused with a 403).
      { url: `${siteUrl}/contact`, title: 'Acme robotics: contact the press team', text: 'Contact Acme Robotics: the press contact for Acme robotics news, press releases and interviews.', language: 'en' },
      { url: `${siteUrl}/press`, title: 'Press', text: 'Acme robotics press releases.', language: 'en' },
      ...RESEARCH_DOCS.map(([title, type, text], n) => ({
        url: `${siteUrl}/research/${n}`, title, type, text, language: 'en', published_date: new Date(Date.now() - (n + 2) * 30 * day).toISOString(),
      })),
    ];
    const indexed = await call(`${s.url}/admin/v1/index/documents`, 'POST', { auth: admin, body: { collection: 'shared', documents: docs } });
    expect(indexed.status, indexed.text).toBe(200);
    expect(indexed.body.rejected).toEqual([]);
    // The usage example shows a period with a charge in it.
    const spent = await call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body: { url: `${siteUrl}/a` } });
    expect(spent.status, spent.text).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await Promise.all([bulkHooks?.close(), crawlHooks?.close(), new Promise((r) => site?.close(r))]);
    rmSync(work, { recursive: true, force: true });
  });

  it('finds the examples, and leaves out exactly the listed ones', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(25);
    // Every file keeps its examples, and every file with examples is named: none is lost or left out by a move.
    const perFile = Object.fromEntries(DOC_FILES.map((f) => [f, EXAMPLES.filter((e) => e.file === f).length]).filter(([, n]) => n !== 0));
    expect(Object.keys(perFile).sort(), 'the files holding curl examples').toEqual(Object.keys(MIN_EXAMPLES).sort());
    for (const [file, min] of Object.entries(MIN_EXAMPLES)) expect(perFile[file], `examples in ${file}`).toBeGreaterThanOrEqual(min);
    expect(EXAMPLES.length, 'examples in all (37 were in the README before docs/ was split out)').toBeGreaterThanOrEqual(Object.values(MIN_EXAMPLES).reduce((a, b) => a + b, 0));
    const ids = EXAMPLES.map((e) => e.id);
    expect(new Set(ids).size, 'example ids are unique').toBe(ids.length);
    for (const id of Object.keys(SKIPPED)) expect(ids, `SKIPPED names an example the docs no longer have: ${id}`).toContain(id);
    const notRun = EXAMPLES.filter((e) => !e.command.includes('localhost:8080') || e.id in SKIPPED).map((e) => e.id);
    expect(notRun.sort()).toEqual(Object.keys(SKIPPED).sort());
    // Every substitution and preparation still names an example of the README or docs/.
    for (const id of [...Object.keys(SUBSTITUTE()), ...Object.keys(BEFORE), ...Object.keys(VARYING), ...URLS_AS_DATA]) expect(ids).toContain(id);
  });

  for (const example of EXAMPLES.filter((e) => !(e.id in SKIPPED))) {
    it(`${example.id} (${example.file}:${example.line})`, async () => {
      await BEFORE[example.id]?.();
      let command = example.command.replaceAll('localhost:8080', s.url.replace(/^http:\/\//, ''));
      for (const [from, to] of SUBSTITUTE()[example.id] ?? []) {
        expect(command, `the example no longer holds ${from}`).toContain(from);
        command = command.replaceAll(from, to);
      }
      command = command.replaceAll('sk_...', key).replace(/\b(key|bulk|crawl|acct)_[0-9a-f]*\.\.\./g, (placeholder, kind: string) => {
        const id = lastId.get(kind);
        expect(id, `no earlier example answered a ${kind} id for ${placeholder}`).toBeDefined();
        return id!;
      });
      if (!urlsAreData(example)) {
        const outside = hostsIn(command).filter((h) => h !== '127.0.0.1');
        expect(outside, 'an example would reach another network: add its URLs to SUBSTITUTE').toEqual([]);
      }

      const headers = join(work, 'headers');
      rmSync(headers, { force: true });
      const run = await bash(`curl() { command curl --max-time 60 -D "$README_HEADERS" "$@"; }\n${command}\n`, {
        README_HEADERS: headers, KEY: key, SCOUR_KEY: key, ADMIN, SCOUR_ADMIN_TOKEN: ADMIN,
      }, 90_000);
      const statuses = [...readFileSync(headers, 'utf8').matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((m) => Number(m[1]));
      expect(statuses.at(-1), `status of: ${command}\n${run.stdout.slice(0, 1000)}${run.stderr}`).toBeGreaterThanOrEqual(200);
      expect(statuses.at(-1), `status of: ${command}\n${run.stdout.slice(0, 1000)}${run.stderr}`).toBeLessThan(300);

      let body: unknown;
      try {
        body = JSON.parse(run.stdout);
      } catch {
        body = undefined;
      }
      if (body !== null && typeof body === 'object') {
        for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
          const m = typeof v === 'string' ? /^(key|bulk|crawl|acct)_/.exec(v) : null;
          if (m && (k.endsWith('_id') || k === 'collection')) lastId.set(m[1]!, v as string);
        }
      }

      if (example.expected === undefined) return;
      const shown = example.expected.trim();
      if (!shown.startsWith('{') && !shown.startsWith('[')) {
        // Text (Prometheus lines): each shown line is in the answer, its numbers aside.
        const got = run.stdout.split('\n');
        for (const line of shown.split('\n')) {
          const pattern = new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\d+(\\\.\d+)?$/, '\\d+(\\.\\d+)?')}$`);
          expect(got.some((g) => pattern.test(g)), `the answer has no line like ${line}:\n${run.stdout.slice(0, 2000)}`).toBe(true);
        }
        return;
      }
      expect(body, `the answer is not JSON: ${run.stdout.slice(0, 500)}`).toBeDefined();
      const { value, open } = parseLoose(shown);
      expect(shapeProblems(value, body, open), JSON.stringify(body).slice(0, 3000)).toEqual([]);
      if (exact(example)) {
        expect(open, 'a deterministic example is shown whole').toBe(false);
        expect(valueProblems(value, body, VARYING[example.id] ?? [])).toEqual([]);
      }
    }, 120_000);
  }

  it('the stand-in site was asked only for its own pages, and every webhook was signed', () => {
    // Every page the examples fetched is one of the stand-ins (the crawl's robots.txt and sitemaps aside).
    const unexpected = siteHits.filter((p) => !(p in PAGES) && !/^\/(robots\.txt|sitemap.*\.xml)$/.test(p));
    expect(unexpected).toEqual([]);
    expect(siteHits).toContain('/article');
    expect(bulkHooks.received.length).toBeGreaterThanOrEqual(2);
    expect([...bulkHooks.received, ...crawlHooks.received].every((w) => w.verified === true)).toBe(true);
  });
});
