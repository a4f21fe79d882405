/**
 * For the Firecrawl compatibility suites: a small loopback site (four linked
 * pages with titles and descriptions, no robots.txt or sitemap), a loopback
 * OpenAI-compatible model that answers one fixed JSON object, and helpers
 * for accounts and the local index.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { call } from './http.js';

export const FC_ADMIN = 'firecrawl-admin-token-0123456789abcdef';

const page = (title: string, description: string, body: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><meta name="description" content="${description}"></head><body>
<nav><a href="/">Home</a> <a href="/a">A</a> <a href="/b">B</a> <a href="/c">C</a></nav>
<article><h1>${title}</h1><p>${body}</p><p>${body} It is described here at some length so that the main content of the page is long enough to be read as its text.</p>
<img src="/img/${title.replace(/\W+/g, '-').toLowerCase()}.png" alt="${title}"></article></body></html>`;

export const PAGES: Record<string, { title: string; description: string; body: string }> = {
  '/': { title: 'Wombat home', description: 'All about wombats', body: 'Wombats are short-legged, muscular quadrupedal marsupials native to Australia.' },
  '/a': { title: 'Aardvark facts', description: 'The aardvark page', body: 'The aardvark is a nocturnal burrowing mammal that eats ants and termites.' },
  '/b': { title: 'Bobolink notes', description: 'The bobolink page', body: 'The bobolink is a small New World blackbird that migrates very long distances.' },
  '/c': { title: 'Caracal guide', description: 'The caracal page', body: 'The caracal is a medium-sized wild cat with long tufted black ears.' },
};

export interface FcSite {
  readonly url: string;
  hits: number;
  close(): Promise<void>;
}

export async function startFirecrawlSite(): Promise<FcSite> {
  const state = { hits: 0 };
  const server = http.createServer((req, res) => {
    state.hits++;
    const p = PAGES[(req.url ?? '/').split('?')[0]!];
    if (p === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(p.title, p.description, p.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get hits() { return state.hits; },
    set hits(n: number) { state.hits = n; },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the loopback model answers for every json format. */
export const MODEL_ANSWER = { title: 'Aardvark facts', animal: 'aardvark' };
export const JSON_SCHEMA = {
  type: 'object',
  properties: { title: { type: 'string' }, animal: { type: 'string' } },
  required: ['title', 'animal'],
  additionalProperties: false,
};

export async function startModel(): Promise<{ base: string; asked: () => number; close(): Promise<void> }> {
  let asked = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      asked++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'chatcmpl-fc', object: 'chat.completion', created: 1_700_000_000, model: 'test-model',
        choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(MODEL_ANSWER) }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    asked: () => asked,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function fcAccount(base: string, plan = 'unicorn', credits = 5000): Promise<{ id: string; key: string }> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${FC_ADMIN}`, body: { plan, credits } });
  expect(r.status, r.text).toBe(201);
  return { id: r.body.account_id, key: r.body.api_key };
}

export async function fcBalance(base: string, key: string): Promise<number> {
  const u = await call(`${base}/v1/usage`, 'GET', { auth: `Bearer ${key}` });
  return u.body.credits_remaining as number;
}

/** The site's pages in the shared collection, so a search finds them (and can scrape them). */
export async function seedIndex(base: string, site: string): Promise<void> {
  const documents = Object.entries(PAGES).map(([path, p]) => ({ url: `${site}${path}`, title: p.title, text: `${p.description}. ${p.body}`, language: 'en', type: 'article', safe: true }));
  const r = await call(`${base}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${FC_ADMIN}`, body: { collection: 'shared', documents } });
  expect(r.status, r.text).toBeLessThan(300);
}
