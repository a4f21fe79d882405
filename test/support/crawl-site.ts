/**
 * Loopback web sites for the crawl tests. Each listens on 127.0.0.1 (port
 * 0) and on the same port on 127.0.0.2, which a crawl of the first must
 * never reach (another "domain"); every request is logged with its start
 * time, address, User-Agent, and how many requests were in flight then.
 *
 * `docs` site:
 *   /robots.txt            Disallow: /private/, Crawl-delay (option), Sitemap: /sitemap_index.xml
 *   /sitemap_index.xml     a sitemap index: /sitemaps/pages.xml and /sitemaps/more.xml
 *   /sitemaps/pages.xml    /docs/a, /docs/orphan (linked from nowhere), /private/from-sitemap
 *   /sitemaps/more.xml     a CDATA <loc> (/docs/cdata) and an escaped one (/docs/list?b=2&amp;a=1)
 *   /sitemap.xml           404
 *   /                      links to every case below (and /docs/b under seven spellings)
 *   /docs/<name>           a page with its own word (WORDS[name]), links home and to /docs/a
 *   /moved                 301 to /docs/c
 *   /away                  302 to http://127.0.0.2:<port>/landing (off the site)
 *   /missing               404
 *   /quiet                 meta robots noindex (but follow): links to /docs/behind-quiet
 *   /calendar/YYYY/MM      a month page linking the month before and after, forever
 *   /files/report.pdf      never to be requested (a file, not a page)
 *   /private/...           never to be requested (robots.txt)
 *
 * `papers` site (documents, test/fixtures/documents/): /robots.txt 404, / links
 *   /papers/note.pdf       one-page.pdf (application/pdf)
 *   /papers/handbook.docx  handbook.docx (its DOCX media type)
 *   /download?id=report    report-3-pages.pdf served as application/octet-stream (a PDF by its first bytes only)
 *   /papers/locked.pdf     encrypted.pdf
 *   /papers/broken.pdf     broken.pdf
 *   /news.rss              news.rss.xml (application/rss+xml)
 *   /docs/a                a page (WORDS.a)
 *
 * `slow` site: /robots.txt 404 (everything allowed), / links /p/0 ... /p/<n-1>,
 * each /p/<i> answers after `ms` with its own word (`slowpage<i>`).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../fixtures/documents/', import.meta.url));
const fixture = (name: string): Buffer => readFileSync(`${FIXTURES}${name}`);
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export const WORDS: Readonly<Record<string, string>> = {
  a: 'aardvark', b: 'bobolink', c: 'caracal', orphan: 'ocelot', cdata: 'cassowary', list: 'lamprey', 'behind-quiet': 'bushbaby',
};

export interface CrawlSiteRequest {
  readonly path: string;
  readonly localAddress: string;
  readonly userAgent: string;
  /** Epoch ms when it arrived. */
  readonly at: number;
  /** Requests in flight when it arrived (itself included). */
  readonly inFlight: number;
}

export interface CrawlSite {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  readonly requests: CrawlSiteRequest[];
  /** Requests for exactly this path (and query) on 127.0.0.1. */
  hits(pathAndQuery: string): number;
  /** Requests that arrived on 127.0.0.2. */
  offSite(): CrawlSiteRequest[];
  close(): Promise<void>;
}

const page = (title: string, body: string, head = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

/** A paragraph long enough to be a page's main content. */
const prose = (word: string) =>
  `<article><h1>About the ${word}</h1><p>This page is about the ${word}. The ${word} is described here at some length so that the main
  content of the page is long enough to be taken as the page's text: habitat, diet, behaviour and range of the ${word} are all
  covered in this paragraph, which a crawl should store in the index under this page's own address.</p></article>`;

export async function startCrawlSite(kind: 'docs' | 'slow' | 'papers', o: { crawlDelay?: number; pages?: number; ms?: number } = {}): Promise<CrawlSite> {
  const requests: CrawlSiteRequest[] = [];
  let active = 0;
  let port = 0;
  const base = () => `http://127.0.0.1:${port}`;

  const docs = (req: IncomingMessage, res: ServerResponse, path: string) => {
    const html = (status: number, body: string) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    const xml = (body: string) => res.writeHead(200, { 'content-type': 'application/xml' }).end(body);
    if (path === '/robots.txt') {
      const lines = ['User-agent: *', 'Disallow: /private/'];
      if (o.crawlDelay !== undefined) lines.push(`Crawl-delay: ${o.crawlDelay}`);
      lines.push(`Sitemap: ${base()}/sitemap_index.xml`);
      return res.writeHead(200, { 'content-type': 'text/plain' }).end(`${lines.join('\n')}\n`);
    }
    if (path === '/sitemap_index.xml') {
      return xml(`<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sitemap><loc>${base()}/sitemaps/pages.xml</loc></sitemap><sitemap><loc>${base()}/sitemaps/more.xml</loc></sitemap></sitemapindex>`);
    }
    if (path === '/sitemaps/pages.xml') {
      return xml(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc>${base()}/docs/a</loc></url><url><loc>${base()}/docs/orphan</loc><lastmod>2026-11-01</lastmod></url>
        <url><loc>${base()}/private/from-sitemap</loc></url></urlset>`);
    }
    if (path === '/sitemaps/more.xml') {
      return xml(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc><![CDATA[${base()}/docs/cdata]]></loc></url><url><loc>${base()}/docs/list?b=2&amp;a=1</loc></url></urlset>`);
    }
    if (path === '/') {
      const links = [
        '/docs/a', '/docs/b', '/docs/b#intro', '/docs/b?utm_source=news&utm_medium=email', `HTTP://127.0.0.1:${port}/docs/b`, '/docs/./b', '/docs/x/../b', '/docs/%62',
        '/docs/list?a=1&b=2', '/private/secret', '/calendar/2026/11', '/away', '/moved', `http://127.0.0.2:${port}/elsewhere`,
        '/files/report.pdf', '/missing', '/quiet', 'mailto:someone@example.com', 'javascript:void(0)',
      ];
      return html(200, page('Home', `<h1>Home</h1><p>Welcome to the test site.</p><ul>${links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('')}</ul>`));
    }
    const doc = /^\/docs\/([a-z-]+)$/.exec(path);
    if (doc && WORDS[doc[1]!] !== undefined) {
      return html(200, page(`Docs ${doc[1]}`, `${prose(WORDS[doc[1]!]!)}<nav><a href="/">Home</a> <a href="/docs/a">A</a></nav>`));
    }
    if (path === '/moved') return res.writeHead(301, { location: '/docs/c' }).end();
    if (path === '/away') return res.writeHead(302, { location: `http://127.0.0.2:${port}/landing` }).end();
    if (path === '/quiet') {
      return html(200, page('Quiet', `${prose('mole')}<a href="/docs/behind-quiet">behind</a>`, '<meta name="robots" content="noindex, follow">'));
    }
    const cal = /^\/calendar\/(\d{4})\/(\d{2})$/.exec(path);
    if (cal) {
      const y = Number(cal[1]);
      const m = Number(cal[2]);
      const month = (yy: number, mm: number) => {
        const d = new Date(Date.UTC(yy, mm - 1, 1));
        return `/calendar/${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
      };
      return html(200, page(`Calendar ${y}-${m}`, `<h1>Events in ${y}-${m}</h1><p>No events this month.</p><a href="${month(y, m - 1)}">previous</a> <a href="${month(y, m + 1)}">next</a>`));
    }
    return html(404, page('Not found', '<p>Not found</p>'));
  };

  const papers = (_req: IncomingMessage, res: ServerResponse, path: string) => {
    const html = (status: number, body: string) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    const file = (type: string, name: string) => res.writeHead(200, { 'content-type': type }).end(fixture(name));
    if (path === '/robots.txt') return res.writeHead(404).end();
    if (path === '/') {
      const links = ['/papers/note.pdf', '/papers/handbook.docx', '/download?id=report', '/papers/locked.pdf', '/papers/broken.pdf', '/news.rss', '/docs/a'];
      return html(200, page('Papers', `<h1>Papers</h1><p>Our publications.</p><ul>${links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('')}</ul>`));
    }
    if (path === '/papers/note.pdf') return file('application/pdf', 'one-page.pdf');
    if (path === '/papers/handbook.docx') return file(DOCX, 'handbook.docx');
    if (path === '/download') return file('application/octet-stream', 'report-3-pages.pdf');
    if (path === '/papers/locked.pdf') return file('application/pdf', 'encrypted.pdf');
    if (path === '/papers/broken.pdf') return file('application/pdf', 'broken.pdf');
    if (path === '/news.rss') return file('application/rss+xml', 'news.rss.xml');
    if (path === '/docs/a') return html(200, page('Docs a', prose(WORDS.a!)));
    return html(404, page('Not found', '<p>Not found</p>'));
  };

  const slow = (_req: IncomingMessage, res: ServerResponse, path: string) => {
    const html = (status: number, body: string) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    if (path === '/robots.txt') return res.writeHead(404).end();
    const n = o.pages ?? 30;
    if (path === '/') return html(200, page('Slow home', `<h1>Slow site</h1>${Array.from({ length: n }, (_, i) => `<a href="/p/${i}">page ${i}</a>`).join(' ')}`));
    const m = /^\/p\/(\d+)$/.exec(path);
    if (m) {
      setTimeout(() => html(200, page(`Slow ${m[1]}`, prose(`slowpage${m[1]}`))), o.ms ?? 200);
      return undefined;
    }
    return html(404, page('Not found', '<p>Not found</p>'));
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    active++;
    res.on('close', () => active--);
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({
      path: `${url.pathname}${url.search}`, localAddress: req.socket.localAddress ?? '', userAgent: String(req.headers['user-agent'] ?? ''),
      at: Date.now(), inFlight: active,
    });
    if (req.socket.localAddress === '127.0.0.2') return res.writeHead(200, { 'content-type': 'text/html' }).end(page('Elsewhere', prose('elsewhere')));
    return kind === 'docs' ? docs(req, res, url.pathname) : kind === 'papers' ? papers(req, res, url.pathname) : slow(req, res, url.pathname);
  };

  const main = http.createServer(handler);
  await new Promise<void>((r) => main.listen(0, '127.0.0.1', () => r()));
  port = (main.address() as AddressInfo).port;
  const alt = http.createServer(handler);
  await new Promise<void>((r, j) => {
    alt.once('error', j);
    alt.listen(port, '127.0.0.2', () => r());
  });
  return {
    url: base(),
    port,
    requests,
    hits: (p) => requests.filter((r) => r.localAddress === '127.0.0.1' && r.path === p).length,
    offSite: () => requests.filter((r) => r.localAddress === '127.0.0.2'),
    async close() {
      for (const s of [main, alt]) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
    },
  };
}
