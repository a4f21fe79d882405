/**
 * A loopback web site for the map tests (POST /v1/map, `scour map`). It
 * listens on 127.0.0.1 (port 0) and is mapped as http://localhost:<port>,
 * so that names under localhost (blog.localhost, docs.localhost) are its
 * subdomains (their links are listed, never fetched: they do not resolve
 * here) and 127.0.0.1 is another site. Every request is logged.
 *
 * `site` (the default):
 *   /robots.txt                 Disallow: /private/, Sitemap: /sitemap_index.xml and /news.xml.gz
 *   /sitemap_index.xml          a sitemap index: /sitemaps/pages.xml and /sitemaps/archive.xml.gz
 *   /sitemaps/pages.xml         SITEMAP_PAGES: /docs/getting-started, /docs/install (three spellings), /pricing,
 *                               /only-in-sitemap (linked from nowhere), /whitepaper.pdf, /images/logo.png,
 *                               http://blog.localhost/post-1, http://127.0.0.1/elsewhere (another site)
 *   /sitemaps/archive.xml.gz    gzip bytes as application/gzip: /archive/2020/old-post, /archive/2021/older-post
 *   /news.xml.gz                gzip bytes as application/x-gzip: /news/launch-day
 *   /sitemap.xml                404
 *   /                           "Home": links with text (START_LINKS)
 *   /redirect-private           302 to http://10.1.2.3/ (refused by the egress guard)
 *   /moved                      301 to / (a start URL that redirects)
 *   everything else             a small page
 *
 * `many`: robots.txt names /index.xml, an index of 80 sitemaps (/s/0.xml ... /s/79.xml), each listing one page.
 * `bomb`: robots.txt names /bomb.xml.gz, 64 MiB of zeros gzipped (application/gzip); the start page has one link.
 * `slow`: robots.txt names /slow.xml, which never answers; the start page answers at once with one link.
 * `none`: no robots.txt, no sitemap (404s); the start page answers 404 with a link.
 */
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

export interface MapSiteRequest {
  readonly path: string;
  readonly userAgent: string;
}

export interface MapSite {
  /** http://localhost:<port> */
  readonly url: string;
  readonly port: number;
  readonly requests: MapSiteRequest[];
  hits(pathAndQuery: string): number;
  /** Requests still open (the slow site's sitemap that never answers, until its client goes away). */
  open(): number;
  close(): Promise<void>;
}

/** The start page's links: [href, text]. */
export const START_LINKS: readonly (readonly [string, string])[] = [
  ['/docs/getting-started', 'Getting started'],
  ['/about', 'About us'],
  ['/contact#form', 'Contact the team'],
  ['/pricing?ref_src=nav', 'Plans and pricing'],
  ['/blog/2024/how-we-price', 'How we set our prices'],
  ['/about', 'About (again)'],
  ['/styles.css', 'styles'],
  ['mailto:team@example.com', 'Mail us'],
  ['https://example.org/elsewhere', 'Another site'],
  ['http://127.0.0.1:{port}/other', 'Loopback by address (another site)'],
  ['http://blog.localhost:{port}/', 'Blog'],
  ['http://docs.localhost:{port}/api/authentication', 'API authentication'],
  ['http://www.localhost:{port}/team', 'Team'],
  ['/private/admin', 'Admin'],
];

const xml = (urls: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u.replace(/&/g, '&amp;')}</loc></url>`).join('')}</urlset>`;
const index = (urls: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<sitemap><loc>${u}</loc></sitemap>`).join('')}</sitemapindex>`;

let bomb: Buffer | undefined;

export async function startMapSite(kind: 'site' | 'many' | 'bomb' | 'slow' | 'none' = 'site'): Promise<MapSite> {
  const requests: MapSiteRequest[] = [];
  let port = 0;
  const base = () => `http://localhost:${port}`;
  const hanging = new Set<ServerResponse>();

  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ path, userAgent: String(req.headers['user-agent'] ?? '') });
    const html = (status: number, title: string, body: string) =>
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`);
    const text = (body: string) => res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
    const sendXml = (body: string) => res.writeHead(200, { 'content-type': 'application/xml' }).end(body);
    const gz = (type: string, body: Buffer) => res.writeHead(200, { 'content-type': type }).end(body);
    const notFound = () => res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');

    if (kind === 'none') {
      if (path === '/') return html(404, 'Not here', '<a href="/somewhere">Somewhere</a>');
      return notFound();
    }
    if (kind === 'many') {
      if (path === '/robots.txt') return text(`Sitemap: ${base()}/index.xml\n`);
      if (path === '/index.xml') return sendXml(index(Array.from({ length: 80 }, (_, n) => `${base()}/s/${n}.xml`)));
      const m = /^\/s\/(\d+)\.xml$/.exec(path);
      if (m) return sendXml(xml([`${base()}/page/${m[1]}`]));
      if (path === '/') return html(200, 'Many', '');
      return notFound();
    }
    if (kind === 'bomb') {
      if (path === '/robots.txt') return text(`Sitemap: ${base()}/bomb.xml.gz\n`);
      if (path === '/bomb.xml.gz') return gz('application/gzip', bomb ??= gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20)));
      if (path === '/') return html(200, 'Bomb', '<a href="/safe">Safe</a>');
      return notFound();
    }
    if (kind === 'slow') {
      if (path === '/robots.txt') return text(`Sitemap: ${base()}/slow.xml\n`);
      if (path === '/slow.xml') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (path === '/') return html(200, 'Slow', '<a href="/quick">Quick page</a>');
      return notFound();
    }

    if (path === '/robots.txt') return text(`User-agent: *\nDisallow: /private/\nSitemap: ${base()}/sitemap_index.xml\nSitemap: ${base()}/news.xml.gz\n`);
    if (path === '/sitemap_index.xml') return sendXml(index([`${base()}/sitemaps/pages.xml`, `${base()}/sitemaps/archive.xml.gz`]));
    if (path === '/sitemaps/pages.xml') {
      return sendXml(xml([
        `${base()}/docs/getting-started`, `${base()}/docs/install`, `${base()}/docs/install?utm_source=feed`, `${base()}/docs/install#top`,
        `${base()}/pricing`, `${base()}/only-in-sitemap`, `${base()}/whitepaper.pdf`, `${base()}/images/logo.png`,
        `http://blog.localhost:${port}/post-1`, `http://127.0.0.1:${port}/elsewhere`,
      ]));
    }
    if (path === '/sitemaps/archive.xml.gz') return gz('application/gzip', gzipSync(xml([`${base()}/archive/2020/old-post`, `${base()}/archive/2021/older-post`])));
    if (path === '/news.xml.gz') return gz('application/x-gzip', gzipSync(xml([`${base()}/news/launch-day`])));
    if (path === '/sitemap.xml') return notFound();
    if (path === '/') {
      const links = START_LINKS.map(([href, t]) => `<li><a href="${href.replace('{port}', String(port))}">${t}</a></li>`).join('');
      return html(200, 'Home of the map site', `<h1>Home</h1><ul>${links}</ul>`);
    }
    if (path === '/redirect-private') return res.writeHead(302, { location: 'http://10.1.2.3/' }).end();
    if (path === '/moved') return res.writeHead(301, { location: '/' }).end();
    return html(200, 'A page', '<p>A page.</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  return {
    url: base(),
    port,
    requests,
    hits: (p) => requests.filter((r) => r.path === p).length,
    open: () => hanging.size,
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
