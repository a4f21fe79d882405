/**
 * The named scenarios of `scour loadtest`. Each sets up what it needs on the
 * server under test through its admin API (accounts with plenty of credits;
 * for search and research a small corpus in the shared collection) and, for
 * the scrape scenarios, a static target site of its own on 127.0.0.1, and
 * yields an endless stream of requests. Traffic goes to the server under
 * test and to that loopback site only.
 *
 * The server must have SCOUR_ADMIN_TOKEN set (accounts are made through the
 * admin API), SCOUR_ALLOW_PRIVATE_TARGETS=loopback for the scrape scenarios
 * (the target site is on loopback), and plan limits that fit the load
 * (SCOUR_PLANS), or 429s are what it measures (reported as such).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { LoadRequest } from './engine.js';

export const SCENARIOS = ['tools', 'usage', 'scrape', 'scrape-render', 'bulk', 'search', 'research-quick', 'mixed'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export const SCENARIO_HELP: Readonly<Record<ScenarioName, string>> = {
  tools: 'POST /v1/tools/{base64-encoder,url-encoder,uuid-generator}, no key (rate-limited per IP)',
  usage: 'GET /v1/usage with a key (no credits)',
  scrape: 'POST /v1/scrape of small static pages on a loopback site of its own',
  'scrape-render': 'POST /v1/scrape with render_js: true (Chromium) of the same pages',
  bulk: 'POST /v1/scrape/bulk, 10 pages each, synchronous',
  search: 'POST /v1/search over a 300-document corpus it indexes in the shared collection',
  'research-quick': 'POST /v1/research, analysis_depth quick, over the same corpus',
  mixed: 'a weighted blend: tools 35, usage 20, search 20, scrape 15, bulk 3, scrape-render 5, research-quick 2',
};

/** The blend of `mixed`, by weight. */
export const MIX: Readonly<Record<Exclude<ScenarioName, 'mixed'>, number>> = {
  tools: 35, usage: 20, search: 20, scrape: 15, bulk: 3, 'scrape-render': 5, 'research-quick': 2,
};

/** Operations that start Chromium: the report gives them apart (the others are the "non-render" figures). */
export const RENDER_TAGS: ReadonlySet<string> = new Set(['scrape-render']);

export interface ScenarioContext {
  readonly base: string;
  readonly adminToken: string | undefined;
  /** Accounts to spread the load over (each has its own rate limits). */
  readonly accounts: number;
  readonly log: (line: string) => void;
}

export interface PreparedScenario {
  readonly next: () => LoadRequest;
  readonly close: () => Promise<void>;
}

const WORDS = [
  'airship', 'zeppelin', 'glacier', 'volcano', 'quantum', 'enzyme', 'protein', 'battery', 'lithium', 'solar', 'turbine', 'harbor',
  'satellite', 'orbit', 'telescope', 'neuron', 'vaccine', 'genome', 'bridge', 'railway', 'canal', 'desert', 'monsoon', 'coral',
  'reef', 'forest', 'river', 'delta', 'copper', 'silicon', 'graphene', 'polymer', 'catalyst', 'reactor', 'fusion', 'plasma',
];

/** Deterministic pseudo-random (so two runs send the same requests). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class SetupError extends Error {}

async function admin(ctx: ScenarioContext, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  if (!ctx.adminToken) throw new SetupError('this scenario makes accounts through the admin API: give --admin-token or SCOUR_ADMIN_TOKEN (the server\'s)');
  const res = await request(`${ctx.base}${path}`, {
    method, headers: { authorization: `Bearer ${ctx.adminToken}`, 'content-type': 'application/json' }, body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new SetupError(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function makeAccounts(ctx: ScenarioContext): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < ctx.accounts; i++) {
    const a = await admin(ctx, 'POST', '/admin/v1/accounts', { plan: 'unicorn', credits: 100_000_000, name: `loadtest-${i}` });
    keys.push(a.api_key as string);
  }
  return keys;
}

/** A static site on 127.0.0.1: /page/<n>, a small article each. */
async function startSite(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const n = Number(/^\/page\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
    const w = (k: number) => WORDS[(n * 7 + k) % WORDS.length];
    const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${n}: ${w(0)} and ${w(1)}</title>`
      + `<meta name="description" content="About ${w(2)}"></head><body><header><nav><a href="/page/${n + 1}">next</a></nav></header>`
      + `<main><article><h1>${w(0)} ${w(1)}</h1>${Array.from({ length: 6 }, (_, k) => `<p>The ${w(k)} meets the ${w(k + 3)} near the ${w(k + 5)}; contact press${n}@example.com for more.</p>`).join('')}`
      + `</article></main><footer>© Load Test</footer></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The corpus of search and research: 300 short documents in the shared collection (replaced by URL on each run). */
async function indexCorpus(ctx: ScenarioContext): Promise<void> {
  const r = rng(7);
  const pick = () => WORDS[Math.floor(r() * WORDS.length)]!;
  const documents = Array.from({ length: 300 }, (_, i) => {
    const a = pick();
    const b = pick();
    return {
      url: `https://loadtest.example/${i}`,
      title: `${a} and ${b}: report ${i}`,
      text: Array.from({ length: 8 }, () => `The ${pick()} study found that ${pick()} ${pick()} improves ${pick()} by ${Math.floor(r() * 90) + 5} percent in ${2000 + Math.floor(r() * 25)}.`).join(' '),
      published_date: `20${10 + (i % 15)}-0${1 + (i % 9)}-1${i % 10}`,
    };
  });
  await admin(ctx, 'POST', '/admin/v1/index/documents', { collection: 'shared', documents });
}

export async function prepareScenario(name: ScenarioName, ctx: ScenarioContext): Promise<PreparedScenario> {
  const parts = name === 'mixed' ? (Object.keys(MIX) as Exclude<ScenarioName, 'mixed'>[]) : [name];
  const needsKey = parts.some((p) => p !== 'tools');
  const needsSite = parts.some((p) => p === 'scrape' || p === 'scrape-render' || p === 'bulk');
  const needsCorpus = parts.some((p) => p === 'search' || p === 'research-quick');
  const keys = needsKey ? await makeAccounts(ctx) : [];
  const site = needsSite ? await startSite() : undefined;
  if (needsCorpus) await indexCorpus(ctx);
  ctx.log(`set up: ${keys.length} account(s)${site ? `, target site ${site.url}` : ''}${needsCorpus ? ', 300 documents in the shared collection' : ''}`);
  const r = rng(42);
  let n = 0;
  const key = () => keys[n % keys.length]!;
  const json = (tag: string, path: string, body: unknown, auth = true): LoadRequest => ({
    method: 'POST', path, tag, body: JSON.stringify(body),
    headers: auth ? { authorization: `Bearer ${key()}`, 'content-type': 'application/json' } : { 'content-type': 'application/json' },
  });
  const page = () => `${site!.url}/page/${Math.floor(r() * 1000)}`;
  const one: Record<Exclude<ScenarioName, 'mixed'>, () => LoadRequest> = {
    tools: () => {
      const k = n % 3;
      return k === 0 ? json('tools', '/v1/tools/base64-encoder', { input: `load test ${n}` }, false)
        : k === 1 ? json('tools', '/v1/tools/url-encoder', { input: `a b&c=${n}` }, false)
          : json('tools', '/v1/tools/uuid-generator', { count: 1 }, false);
    },
    usage: () => ({ method: 'GET', path: '/v1/usage', tag: 'usage', headers: { authorization: `Bearer ${key()}` } }),
    scrape: () => json('scrape', '/v1/scrape', { url: page() }),
    'scrape-render': () => json('scrape-render', '/v1/scrape', { url: page(), render_js: true }),
    bulk: () => json('bulk', '/v1/scrape/bulk', { urls: Array.from({ length: 10 }, page) }),
    search: () => json('search', '/v1/search', { query: `${WORDS[Math.floor(r() * WORDS.length)]} ${WORDS[Math.floor(r() * WORDS.length)]}`, max_results: 10 }),
    'research-quick': () => json('research-quick', '/v1/research', { research_query: `what affects ${WORDS[Math.floor(r() * WORDS.length)]} ${WORDS[Math.floor(r() * WORDS.length)]}`, analysis_depth: 'quick' }),
  };
  // The blend as a cumulative table.
  const table: { upTo: number; make: () => LoadRequest }[] = [];
  let total = 0;
  for (const p of parts) {
    total += name === 'mixed' ? MIX[p] : 1;
    table.push({ upTo: total, make: one[p] });
  }
  return {
    next: () => {
      n++;
      const x = r() * total;
      return (table.find((t) => x < t.upTo) ?? table[table.length - 1]!).make();
    },
    close: async () => {
      if (site) await new Promise<void>((res) => site.server.close(() => res()));
      site?.server.closeAllConnections();
    },
  };
}

export { SetupError };
