/**
 * What the Tavily-compatibility suites share: a loopback site with a few
 * article pages (the pages a search reads for raw content and an extract
 * reads), a Scour on either adapter with only the local provider and the
 * loopback site allowed, its index seeded with documents pointing at those
 * pages and at example domains, and accounts made through the admin API.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { call } from './http.js';
import { startScour, type AdapterKind, type Running } from './server.js';

export const ADMIN = 'tavily-compat-admin-token-0123456789';
export const DAY = 86_400_000;

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><nav><a href="/">Home</a> <a href="/about">About</a></nav><main><article><h1>${title}</h1>${body}</article></main><footer>Copyright the example site.</footer></body></html>`;

export const PAGES: Record<string, string> = {
  '/solar': page('Solar panel efficiency', [
    '<p>Solar panels convert sunlight into electricity with photovoltaic cells.</p>',
    '<p>The efficiency of commercial solar panels reached 24 percent in 2024, according to the national laboratory.</p>',
    '<p>Installers say that cheaper panels changed how homeowners think about their roofs.</p>',
    '<table><tr><th>Year</th><th>Efficiency</th></tr><tr><td>2010</td><td>15%</td></tr><tr><td>2024</td><td>24%</td></tr></table>',
    '<p><img src="/img/panel.png" alt="A solar panel"></p>',
  ].join('')),
  '/wind': page('Wind turbine maintenance', [
    '<p>Wind turbines need their gearboxes inspected twice a year.</p>',
    '<p>Blade erosion lowers the output of a wind turbine by a few percent over a decade.</p>',
  ].join('')),
  '/storage': page('Battery storage for solar homes', [
    '<p>A home battery stores the solar electricity that the panels make at noon for use in the evening.</p>',
    '<p>Most home batteries hold between five and fifteen kilowatt hours.</p>',
  ].join('')),
};

export interface Site {
  readonly url: string;
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startSite(): Promise<Site> {
  const counts = new Map<string, number>();
  const server: Server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (path === '/blocked') {
      res.writeHead(403, { 'content-type': 'text/html' });
      res.end('<html><body>Access denied</body></html>');
      return;
    }
    if (path.startsWith('/img/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from('89504e470d0a1a0a', 'hex'));
      return;
    }
    const html = PAGES[path];
    if (html === undefined) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>Not found</body></html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: (path) => counts.get(path) ?? 0,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The shared collection: the site's pages and a few documents on example domains, some news, some dated. */
export function documents(site: Site, now = Date.now()) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    { url: `${site.url}/solar`, title: 'Solar panel efficiency', text: 'The efficiency of commercial solar panels reached 24 percent in 2024. Solar panels convert sunlight into electricity.', published_date: iso(now - 2 * DAY), language: 'en', type: 'article' },
    { url: `${site.url}/storage`, title: 'Battery storage for solar homes', text: 'A home battery stores the solar electricity that the panels make at noon.', published_date: iso(now - 20 * DAY), language: 'en', type: 'article' },
    { url: `${site.url}/wind`, title: 'Wind turbine maintenance', text: 'Wind turbines need their gearboxes inspected twice a year.', published_date: iso(now - 400 * DAY), language: 'en', type: 'article' },
    { url: 'https://news.example.com/solar-record', title: 'Solar record set this week', text: 'Engineers report that a new solar panel design set an efficiency record this week. The panel uses perovskite layers.', published_date: iso(now - 1 * DAY), language: 'en', type: 'news' },
    { url: 'https://old.example.com/solar-history', title: 'A history of solar panels', text: 'The first practical solar panel was shown in 1954. Early solar panels converted six percent of sunlight.', published_date: iso(now - 3000 * DAY), language: 'en', type: 'article' },
    { url: 'https://docs.example.org/solar-guide', title: 'Guide to solar panel sizing', text: 'Size solar panels by your yearly electricity use. A typical home needs about twenty panels.', language: 'en', type: 'article' },
  ];
}

export interface Acct { readonly id: string; readonly key: string }

export async function account(base: string, plan = 'unicorn', credits = 1000): Promise<Acct> {
  const r = await call(`${base}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
  expect(r.status, r.text).toBe(201);
  return { id: r.body.account_id, key: r.body.api_key };
}

export async function remaining(base: string, key: string): Promise<number> {
  return (await call(`${base}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_remaining;
}

/** A Scour on `adapter` with the local provider only, loopback targets allowed, the collection seeded. */
export async function startSeeded(adapter: AdapterKind, site: Site): Promise<Running> {
  const s = await startScour(adapter, { adminToken: ADMIN, searchProviders: ['local'], allowPrivateTargets: 'loopback' });
  const docs = documents(site);
  const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', { auth: `Bearer ${ADMIN}`, body: { collection: 'shared', documents: docs } });
  expect(put.status, put.text).toBe(200);
  expect(put.body.rejected).toEqual([]);
  return s;
}

/** A Tavily error: its status, exactly `{"detail": {"error": "..."}}`, and the request id in the header. */
export function expectTavilyError(r: { status: number; headers: Headers; body: any; text?: string }, status: number, message?: RegExp): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(Object.keys(r.body)).toEqual(['detail']);
  expect(Object.keys(r.body.detail)).toEqual(['error']);
  expect(typeof r.body.detail.error).toBe('string');
  expect(r.body.detail.error.length).toBeGreaterThan(0);
  if (message !== undefined) expect(r.body.detail.error).toMatch(message);
  expect(r.headers.get('x-request-id')).toMatch(/\S/);
}
