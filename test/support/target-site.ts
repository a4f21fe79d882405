/**
 * A target web site on loopback for the scrape tests: fetchers, extractors
 * and the scrape operation point at it instead of the internet. It listens
 * on 127.0.0.1 (port 0), and on the same port on 127.0.0.2 and [::1] when
 * those can be bound, so a test can prove that a refused address received
 * nothing: every TCP connection and every request is counted, per listener.
 *
 * Routes (GET unless said; unknown paths answer 404):
 *   /html/simple               small UTF-8 page: <title>Simple page</title>, <h1>Hello, target</h1>, one link.
 *   /redirect/chain/<n>        302 to /redirect/chain/<n-1> (relative Location); <n>=0 answers 200 "Chain end".
 *                              ?status=301|303|307|308 picks the redirect status.
 *   /redirect/loop             302 to itself, forever.
 *   /redirect/to?url=<abs>     302 (or ?status=) to any URL as given, e.g. http://127.0.0.2:<port>/html/simple
 *                              or a forbidden spelling (http://0x7f000001:<port>/, file:///etc/passwd).
 *   /slow?ms=<n>               answers /html/simple's page after n ms (default 2000).
 *   /hang                      never answers. /hang?body=1 sends headers and a first chunk, then never ends.
 *   /huge?mb=<n>               streams n MiB (default 20) of HTML, chunked; ?length=1 declares Content-Length.
 *   /gzip                      gzip-encoded page ("Compressed with gzip").
 *   /gzip-bomb                 Content-Encoding: gzip, about 1 MiB on the wire that inflates to 1 GiB of zeros;
 *                              built from one 1 MiB full-flush deflate block repeated, streamed with backpressure.
 *   /bad-gzip                  Content-Encoding: gzip with a body that is not gzip.
 *   /br                        brotli-encoded page ("Compressed with brotli").
 *   /deflate                   zlib-wrapped deflate page ("Compressed with deflate"); ?raw=1 sends raw deflate.
 *   /charset/header-latin1     Content-Type charset=ISO-8859-1, windows-1252 bytes (0x80 is the euro sign); text CHARSET_TEXT.latin1.
 *   /charset/http-equiv-latin1 no header charset; <meta http-equiv="Content-Type" content="...charset=iso-8859-1">; CHARSET_TEXT.latin1.
 *   /charset/meta-1251         no header charset; <meta charset="windows-1251">, Cyrillic bytes; CHARSET_TEXT.cyrillic.
 *   /charset/bom-utf16le       no charset anywhere; FF FE byte order mark then UTF-16LE; CHARSET_TEXT.utf16.
 *   /charset/none              no charset anywhere; UTF-8 bytes; CHARSET_TEXT.none.
 *   /status/<code>             that status (200-599) with a small HTML body (none for 204 and 304).
 *   /blocked                   403 with an "Access denied" HTML body.
 *   /challenge                 200 Cloudflare-like "Just a moment..." challenge page (window._cf_chl_opt,
 *                              /cdn-cgi/challenge-platform script), headers cf-mitigated: challenge, server: cloudflare, cf-ray.
 *   /js                        <div id="app">Loading...</div> replaced by a script with <h1>Rendered by JavaScript</h1>
 *                              and <p id="js-content">; the title becomes "JS page (rendered)".
 *   /delayed-element?ms=<n>    a script appends <div id="late">Late content</div> after n ms (default 1000).
 *   /structured                STRUCTURED_HTML: JSON-LD (an @graph with Organization/WebSite/Article, and a Product),
 *                              Microdata (Product > Offer, AggregateRating, Brand nested), RDFa (vocab/typeof/property:
 *                              Person with a nested PostalAddress), Open Graph, Twitter Card, canonical, description,
 *                              keywords, author, robots, viewport, theme-color, lang="en".
 *   /images                    IMAGES_HTML: img with src/alt/width/height, an absolute external src, a lazy data-src
 *                              (placeholder data: src), srcset, picture/source, a relative src, an empty alt.
 *   /img/<any>                 a 1x1 PNG.
 *   /links                     LINKS_HTML: <base href="/links/base/">; relative, root-relative, absolute, protocol-relative,
 *                              ../ links, rel and target attributes, #fragment, mailto: and javascript: hrefs.
 *   /echo                      JSON of the request: method, url, path, query, headers (lower-case), rawHeaders, cookies, body.
 *                              Any method.
 *   /article?id=<id>           /work/shared/data/extraction/zyte-article-benchmark/html/<id>.html.gz, decompressed,
 *                              text/html; charset=utf-8 (404 when missing).
 *   /cookies/set?name=&value=  Set-Cookie name=value (default session=abc123; Path=/; HttpOnly), then 302 to /echo.
 *
 * Only for tests: no limits, no auth, loopback only.
 */
import { SHARED_DATA_DIR } from './shared-data.js';
import { readFile } from 'node:fs/promises';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import zlib from 'node:zlib';

export const ARTICLE_DIR = `${SHARED_DATA_DIR}/extraction/zyte-article-benchmark/html`;

/** The text each charset page carries (inside <p id="text">), decoded correctly. */
export const CHARSET_TEXT = {
  latin1: 'Café crème, naïve façade — 5 € ¿Qué?',
  cyrillic: 'Привет, мир! Ёлка и щука.',
  utf16: 'Grüße aus Köln ✓ 日本語',
  none: 'Ünïcödé by default: naïve ✓ — “quotes”',
} as const;

export interface SiteRequest {
  readonly method: string;
  readonly path: string;
  readonly url: string;
  /** The address the request arrived on: 127.0.0.1, 127.0.0.2 or ::1. */
  readonly localAddress: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface TargetSite {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** http://127.0.0.2:<port> when that address could be bound (Linux binds all of 127/8). */
  readonly altUrl: string | undefined;
  /** http://[::1]:<port> when IPv6 loopback could be bound. */
  readonly v6Url: string | undefined;
  /** Requests per path (all listeners). */
  readonly hits: Map<string, number>;
  /** Every request, in arrival order. */
  readonly requests: SiteRequest[];
  /** Requests in total, or for one path. */
  hitCount(path?: string): number;
  /** Requests that arrived on one local address ('127.0.0.1', '127.0.0.2', '::1'). */
  hitsOn(localAddress: string): number;
  /** TCP connections accepted, in total or on one local address. */
  connections(localAddress?: string): number;
  /** Forget the counters. */
  reset(): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Pages

const page = (title: string, body: string, head = '<meta charset="utf-8">'): string =>
  `<!DOCTYPE html>\n<html lang="en"><head>${head}<title>${title}</title></head><body>${body}</body></html>\n`;

export const SIMPLE_HTML = page(
  'Simple page',
  '<h1>Hello, target</h1><p>This is a simple page served by the Scour test target site.</p><a href="/links">Links</a>',
  '<meta charset="utf-8"><meta name="description" content="A simple test page">',
);

export const STRUCTURED_HTML = `<!DOCTYPE html>
<html lang="en" prefix="og: https://ogp.me/ns#">
<head>
<meta charset="utf-8">
<title>Structured Widget – Example Shop</title>
<meta name="description" content="The structured widget, described every way there is.">
<meta name="keywords" content="widget, structured data, test">
<meta name="author" content="Ada Example">
<meta name="robots" content="index, follow">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="theme-color" content="#336699">
<meta http-equiv="x-ua-compatible" content="ie=edge">
<link rel="canonical" href="https://shop.example.com/widgets/structured">
<link rel="alternate" hreflang="de" href="https://shop.example.com/de/widgets/structured">
<meta property="og:title" content="Structured Widget">
<meta property="og:type" content="product">
<meta property="og:url" content="https://shop.example.com/widgets/structured">
<meta property="og:image" content="https://shop.example.com/img/widget.jpg">
<meta property="og:image:width" content="1200">
<meta property="og:description" content="A widget for testing metadata extraction.">
<meta property="og:site_name" content="Example Shop">
<meta property="og:locale" content="en_US">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:site" content="@exampleshop">
<meta name="twitter:title" content="Structured Widget on Twitter">
<meta name="twitter:description" content="Twitter card description.">
<meta name="twitter:image" content="https://shop.example.com/img/widget-twitter.jpg">
<script type="application/ld+json">
{
  "@context": "https://schema.org",
  "@graph": [
    { "@type": "Organization", "@id": "https://shop.example.com/#org", "name": "Example Shop", "url": "https://shop.example.com/",
      "logo": { "@type": "ImageObject", "url": "https://shop.example.com/logo.png" } },
    { "@type": "WebSite", "@id": "https://shop.example.com/#site", "name": "Example Shop", "publisher": { "@id": "https://shop.example.com/#org" } },
    { "@type": "Article", "headline": "Why widgets matter", "datePublished": "2024-05-01T10:00:00Z",
      "author": { "@type": "Person", "name": "Ada Example" } }
  ]
}
</script>
<script type="application/ld+json">
{ "@context": "https://schema.org/", "@type": "Product", "name": "Structured Widget", "sku": "SW-42",
  "offers": { "@type": "Offer", "price": "19.99", "priceCurrency": "EUR", "availability": "https://schema.org/InStock" } }
</script>
<script type="application/ld+json">{ this is not valid json </script>
</head>
<body>
<h1>Structured Widget</h1>
<div itemscope itemtype="https://schema.org/Product" id="microdata-product">
  <span itemprop="name">Structured Widget (microdata)</span>
  <img itemprop="image" src="/img/widget.jpg" alt="Widget">
  <meta itemprop="sku" content="SW-42-MD">
  <div itemprop="brand" itemscope itemtype="https://schema.org/Brand"><span itemprop="name">WidgetCo</span></div>
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
    <span itemprop="priceCurrency" content="USD">$</span><span itemprop="price" content="21.50">21.50</span>
    <link itemprop="availability" href="https://schema.org/InStock">In stock
  </div>
  <div itemprop="aggregateRating" itemscope itemtype="https://schema.org/AggregateRating">
    Rated <span itemprop="ratingValue">4.5</span>/5 from <span itemprop="reviewCount">12</span> reviews
  </div>
  <a itemprop="url" href="/widgets/structured">Permalink</a>
</div>
<div vocab="https://schema.org/" typeof="Person" id="rdfa-person">
  <span property="name">Grace Example</span>, <span property="jobTitle">Engineer</span>
  <a property="url" href="https://grace.example.com/">Homepage</a>
  <div property="address" typeof="PostalAddress">
    <span property="streetAddress">1 Loop Road</span>, <span property="addressLocality">Localhost</span>
  </div>
</div>
</body>
</html>
`;

export const IMAGES_HTML = page('Images', `
<h1>Images</h1>
<img src="/img/alpha.png" alt="Alpha" width="100" height="50">
<img src="https://cdn.example.com/beta.jpg" alt="Beta">
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/img/lazy.jpg" alt="Lazy" class="lazy">
<img src="/img/gamma.jpg" srcset="/img/gamma-1x.jpg 1x, /img/gamma-2x.jpg 2x" alt="Gamma">
<picture>
  <source srcset="/img/delta.webp" type="image/webp">
  <img src="/img/delta.jpg" alt="Delta" width="300" height="200">
</picture>
<img src="img/relative.gif" alt="">
`);

/** A company's contact page: structured data, mailto/tel links, text contacts, social links and a share bar. */
export const CONTACTS_HTML = `<!DOCTYPE html>
<html lang="en-US"><head><meta charset="utf-8"><title>Contact Acme Robotics</title>
<meta property="og:site_name" content="Acme Robotics">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Acme Robotics","url":"https://acme-robotics.com/",
 "sameAs":["https://twitter.com/AcmeRobotics","https://www.linkedin.com/company/acme-robotics/"],
 "employee":{"@type":"Person","name":"Dana Reyes","jobTitle":"Head of Press","email":"dana.reyes@acme-robotics.com","telephone":"+1 415 555 0134"}}</script>
</head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><h1>Contact us</h1>
<p>Sales: <a href="mailto:sales@acme-robotics.com?subject=Hello">write to sales</a> or call <a href="tel:+14155550199">+1 415 555 0199</a>.</p>
<p>Support: support [at] acme-robotics [dot] com</p>
<img src="/img/logo@2x.png" alt="logo">
<p>Follow us on <a href="https://github.com/acme-robotics">GitHub</a> and <a href="https://www.youtube.com/@AcmeRobotics">YouTube</a>.</p>
<div class="share"><a href="https://twitter.com/intent/tweet?url=https%3A%2F%2Facme-robotics.com">Tweet this</a> <a href="https://www.facebook.com/sharer/sharer.php?u=x">Share</a></div>
</main></body></html>
`;

export const LINKS_HTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Links</title><base href="/links/base/"></head><body>
<h1>Links</h1>
<a href="page1">Relative to base</a>
<a href="/absolute-path">Root relative</a>
<a href="https://example.com/external" rel="nofollow noopener" target="_blank">External</a>
<a href="//example.org/protocol-relative">Protocol relative</a>
<a href="../up" rel="prev">Up one</a>
<a href="#section">Fragment</a>
<a href="mailto:someone@example.com">Mail</a>
<a href="javascript:void(0)">Script</a>
<a href="page1">Duplicate of the first</a>
<a>No href</a>
</body></html>
`;

const CHALLENGE_HTML = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><meta http-equiv="X-UA-Compatible" content="IE=Edge">
<meta name="robots" content="noindex,nofollow"><meta name="viewport" content="width=device-width,initial-scale=1">
<style>*{box-sizing:border-box;margin:0;padding:0}html{line-height:1.15}</style></head>
<body class="no-js"><div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">127.0.0.1</h1><h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<div id="challenge-stage"></div><div id="challenge-body-text" class="core-msg spacer">127.0.0.1 needs to review the security of your connection before proceeding.</div>
<noscript><div id="challenge-error-title">Enable JavaScript and cookies to continue</div></noscript></div></div>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "127.0.0.1",cType: 'managed',cRay: '8a1b2c3d4e5f6789',cH: 'x',cUPMDTk: "\\/?__cf_chl_tk=abc",cFPWv: 'g',cITimeS: '1700000000'};
var cpo=document.createElement('script');cpo.src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8a1b2c3d4e5f6789';
window._cf_chl_opt.cOgUHash=location.hash;document.getElementsByTagName('head')[0].appendChild(cpo);}());</script>
<div class="footer" role="contentinfo"><div class="footer-inner"><div class="clearfix diagnostic-wrapper"><div class="ray-id">Ray ID: <code>8a1b2c3d4e5f6789</code></div></div>
<div class="text-center" id="footer-text">Performance &amp; security by Cloudflare</div></div></div></body></html>
`;

const JS_HTML = page('JS page', `<div id="app">Loading...</div><noscript>Enable JavaScript to see this page.</noscript>
<script>
document.getElementById('app').innerHTML = '<h1>Rendered by JavaScript</h1><p id="js-content">This paragraph was built by a script.</p>';
document.title = 'JS page (rendered)';
</script>`);

const delayedHtml = (ms: number): string => page('Delayed element', `<h1>Waiting</h1>
<script>
setTimeout(function () { var d = document.createElement('div'); d.id = 'late'; d.textContent = 'Late content'; document.body.appendChild(d); }, ${ms});
</script>`);

/** 1x1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

// ---------------------------------------------------------------------------
// Encodings

function windows1252(text: string): Buffer {
  const out: number[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0) as number;
    if (ch === '€') out.push(0x80);
    else if (ch === '—') out.push(0x97);
    else if (c <= 0xff) out.push(c);
    else throw new Error(`not in windows-1252: ${ch}`);
  }
  return Buffer.from(out);
}

function windows1251(text: string): Buffer {
  const out: number[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0) as number;
    if (c < 0x80) out.push(c);
    else if (c >= 0x410 && c <= 0x44f) out.push(0xc0 + (c - 0x410));
    else if (ch === 'Ё') out.push(0xa8);
    else if (ch === 'ё') out.push(0xb8);
    else throw new Error(`not in windows-1251: ${ch}`);
  }
  return Buffer.from(out);
}

const textPage = (title: string, text: string, head: string): string =>
  `<!DOCTYPE html>\n<html><head>${head}<title>${title}</title></head><body><p id="text">${text}</p></body></html>\n`;

interface Payload { readonly type: string; readonly body: Buffer }

const CHARSET_PAGES: Record<string, () => Payload> = {
  'header-latin1': () => ({ type: 'text/html; charset=ISO-8859-1', body: windows1252(textPage('Latin-1 by header', CHARSET_TEXT.latin1, '')) }),
  'http-equiv-latin1': () => ({
    type: 'text/html',
    body: windows1252(textPage('Latin-1 by http-equiv', CHARSET_TEXT.latin1, '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">')),
  }),
  'meta-1251': () => ({ type: 'text/html', body: windows1251(textPage('Windows-1251 by meta', CHARSET_TEXT.cyrillic, '<meta charset="windows-1251">')) }),
  'bom-utf16le': () => ({
    type: 'text/html',
    body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(textPage('UTF-16LE by BOM', CHARSET_TEXT.utf16, ''), 'utf16le')]),
  }),
  none: () => ({ type: 'text/html', body: Buffer.from(textPage('No charset', CHARSET_TEXT.none, ''), 'utf8') }),
};

/** 2^30 zero bytes: CRC-32 (zlib.crc32 over 1024 x 1 MiB of zeros) and size, for the gzip trailer. */
const BOMB_CRC32 = 1533330096;
const BOMB_SIZE = 2 ** 30;
let bombParts: { header: Buffer; block: Buffer; trailer: Buffer } | undefined;

/**
 * A 1 GiB gzip stream without compressing 1 GiB: a full flush resets the
 * compressor, so the deflate output of 1 MiB of zeros ending in a full
 * flush is a self-contained, byte-aligned, non-final block sequence that
 * can be repeated; an empty final block and the trailer close the stream.
 */
function gzipBomb(): { header: Buffer; block: Buffer; trailer: Buffer } {
  if (bombParts) return bombParts;
  const block = zlib.deflateRawSync(Buffer.alloc(1024 * 1024), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
  const trailer = Buffer.alloc(10);
  trailer.set([0x03, 0x00]); // final fixed-Huffman block holding only end-of-block
  trailer.writeUInt32LE(BOMB_CRC32, 2);
  trailer.writeUInt32LE(BOMB_SIZE % 2 ** 32, 6);
  bombParts = { header, block, trailer };
  return bombParts;
}

// ---------------------------------------------------------------------------
// Server

const html = (res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
};

/** Write `count` chunks from `next` with backpressure; stops when the client goes away. */
async function stream(res: ServerResponse, count: number, next: (i: number) => Buffer): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (res.destroyed || res.writableEnded) return;
    if (!res.write(next(i))) {
      await new Promise<void>((resolve) => {
        const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
}

function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

async function readRequestBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startTargetSite(): Promise<TargetSite> {
  const hits = new Map<string, number>();
  const requests: SiteRequest[] = [];
  const connectionsOn = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => { timers.delete(t); fn(); }, ms);
    timers.add(t);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const u = new URL(req.url ?? '/', 'http://target.invalid');
    const path = u.pathname;
    const q = u.searchParams;
    const localAddress = normalise(req.socket.localAddress ?? '');
    hits.set(path, (hits.get(path) ?? 0) + 1);
    requests.push({ method: req.method ?? 'GET', path, url: req.url ?? '/', localAddress, headers: { ...req.headers } });

    if (path === '/html/simple') return html(res, 200, SIMPLE_HTML);

    let m = /^\/redirect\/chain\/(\d+)$/.exec(path);
    if (m) {
      const n = Number(m[1]);
      if (n === 0) return html(res, 200, page('Chain end', '<h1>Chain end</h1>'));
      const status = Number(q.get('status') ?? 302);
      res.writeHead(status, { location: `${n - 1}${u.search}` });
      res.end();
      return;
    }
    if (path === '/redirect/loop') {
      res.writeHead(302, { location: '/redirect/loop' });
      res.end();
      return;
    }
    if (path === '/redirect/to') {
      res.writeHead(Number(q.get('status') ?? 302), { location: q.get('url') ?? '/' });
      res.end();
      return;
    }
    if (path === '/slow') {
      later(Number(q.get('ms') ?? 2000), () => { if (!res.destroyed) html(res, 200, SIMPLE_HTML); });
      return;
    }
    if (path === '/hang') {
      if (q.get('body') === '1') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.write('<!DOCTYPE html><html><head><title>Hanging</title></head><body>');
      }
      return; // never ends; close() destroys the socket
    }
    if (path === '/huge') {
      const mb = Number(q.get('mb') ?? 20);
      const chunk = Buffer.alloc(64 * 1024, '<p>hello hello hello hello</p>\n');
      const count = Math.ceil((mb * 1024 * 1024) / chunk.length);
      const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
      if (q.get('length') === '1') headers['content-length'] = String(count * chunk.length);
      res.writeHead(200, headers);
      await stream(res, count, () => chunk);
      res.end();
      return;
    }
    if (path === '/gzip-bomb') {
      const { header, block, trailer } = gzipBomb();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' });
      res.write(header);
      await stream(res, BOMB_SIZE / (1024 * 1024), () => block);
      if (!res.destroyed) res.end(trailer);
      return;
    }
    if (path === '/gzip') {
      return html(res, 200, zlib.gzipSync(page('Gzip page', '<p>Compressed with gzip</p>')), { 'content-encoding': 'gzip' });
    }
    if (path === '/bad-gzip') {
      return html(res, 200, Buffer.from('this is certainly not gzip data, just text pretending'), { 'content-encoding': 'gzip' });
    }
    if (path === '/br') {
      return html(res, 200, zlib.brotliCompressSync(page('Brotli page', '<p>Compressed with brotli</p>')), { 'content-encoding': 'br' });
    }
    if (path === '/deflate') {
      const body = page('Deflate page', '<p>Compressed with deflate</p>');
      return html(res, 200, q.get('raw') === '1' ? zlib.deflateRawSync(body) : zlib.deflateSync(body), { 'content-encoding': 'deflate' });
    }
    m = /^\/charset\/([a-z0-9-]+)$/.exec(path);
    if (m && CHARSET_PAGES[m[1] as string]) {
      const { type, body } = (CHARSET_PAGES[m[1] as string] as () => Payload)();
      res.writeHead(200, { 'content-type': type });
      res.end(body);
      return;
    }
    m = /^\/status\/(\d{3})$/.exec(path);
    if (m) {
      const code = Math.min(599, Math.max(200, Number(m[1])));
      if (code === 204 || code === 304) {
        res.writeHead(code);
        res.end();
        return;
      }
      return html(res, code, page(`Status ${code}`, `<h1>Status ${code}</h1>`));
    }
    if (path === '/blocked') {
      return html(res, 403, page('Access denied', '<h1>Access denied</h1><p>You do not have permission to access this resource.</p>'));
    }
    if (path === '/challenge') {
      return html(res, 200, CHALLENGE_HTML, {
        'cf-mitigated': 'challenge', server: 'cloudflare', 'cf-ray': '8a1b2c3d4e5f6789-FRA', 'cache-control': 'private, max-age=0, no-store',
      });
    }
    if (path === '/js') return html(res, 200, JS_HTML);
    if (path === '/delayed-element') return html(res, 200, delayedHtml(Number(q.get('ms') ?? 1000)));
    if (path === '/structured') return html(res, 200, STRUCTURED_HTML);
    if (path === '/images') return html(res, 200, IMAGES_HTML);
    if (path.startsWith('/img/')) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PNG.length) });
      res.end(PNG);
      return;
    }
    if (path === '/links') return html(res, 200, LINKS_HTML);
    if (path === '/contacts') return html(res, 200, CONTACTS_HTML);
    if (path === '/echo') {
      const body = await readRequestBody(req);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        method: req.method, url: req.url, path, query: Object.fromEntries(q), headers, rawHeaders: req.rawHeaders,
        cookies: parseCookies(req.headers.cookie), body,
      }));
      return;
    }
    if (path === '/article') {
      const id = q.get('id') ?? '';
      if (!/^[A-Za-z0-9_-]+$/.test(id)) return html(res, 404, page('Not found', '<h1>No such article</h1>'));
      try {
        const gz = await readFile(join(ARTICLE_DIR, `${id}.html.gz`));
        return html(res, 200, zlib.gunzipSync(gz));
      } catch {
        return html(res, 404, page('Not found', '<h1>No such article</h1>'));
      }
    }
    if (path === '/cookies/set') {
      const name = q.get('name') ?? 'session';
      const value = q.get('value') ?? 'abc123';
      res.writeHead(302, { 'set-cookie': `${name}=${value}; Path=/; HttpOnly`, location: '/echo' });
      res.end();
      return;
    }
    return html(res, 404, page('Not found', '<h1>Not found</h1>'));
  };

  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const makeServer = (): Server => {
    const s = http.createServer((req, res) => {
      handle(req, res).catch(() => { if (!res.headersSent) res.writeHead(500); res.end(); });
    });
    s.on('connection', (socket: Socket) => {
      const addr = normalise(socket.localAddress ?? '');
      connectionsOn.set(addr, (connectionsOn.get(addr) ?? 0) + 1);
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    return s;
  };
  const listen = (s: Server, host: string, port: number): Promise<boolean> =>
    new Promise((resolve) => {
      const onError = () => resolve(false);
      s.once('error', onError);
      s.listen(port, host, () => { s.off('error', onError); resolve(true); });
    });

  const main = makeServer();
  if (!(await listen(main, '127.0.0.1', 0))) throw new Error('target site: cannot listen on 127.0.0.1');
  servers.push(main);
  const port = (main.address() as AddressInfo).port;
  let altUrl: string | undefined;
  let v6Url: string | undefined;
  const alt = makeServer();
  if (await listen(alt, '127.0.0.2', port)) { servers.push(alt); altUrl = `http://127.0.0.2:${port}`; }
  const v6 = makeServer();
  if (await listen(v6, '::1', port)) { servers.push(v6); v6Url = `http://[::1]:${port}`; }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    altUrl,
    v6Url,
    hits,
    requests,
    hitCount: (path) => (path === undefined ? requests.length : hits.get(path) ?? 0),
    hitsOn: (address) => requests.filter((r) => r.localAddress === address).length,
    connections: (address) => (address === undefined
      ? [...connectionsOn.values()].reduce((a, b) => a + b, 0)
      : connectionsOn.get(address) ?? 0),
    reset() {
      hits.clear();
      requests.length = 0;
      connectionsOn.clear();
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      })));
    },
  };
}

function normalise(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
