/**
 * A loopback target site whose pages are of different content types, for
 * the tests of what a scrape delivers and charges (only what it delivers):
 *
 *   /html          an HTML page with everything a priced extractor finds: links, images, JSON-LD,
 *                  meta and Open Graph tags, a contact (email, phone, name) and social profiles.
 *   /text          text/plain (an email address and a URL in it, which no HTML extractor reads).
 *   /json          application/json.
 *   /markdown      text/markdown.
 *   /pdf           application/pdf (a tiny PDF of one blank page: bytes, and no text layer).
 *   /image.png     image/png (a 1x1 PNG).
 *   /octet         application/octet-stream.
 *   /redirect      302 to /html.
 *   /slow?ms=<n>   the HTML page after n ms (default 1500).
 *   /hook          accepts anything with 200 (a callback_url for bulk jobs).
 *
 * Only for tests: loopback only.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const TEXT_BODY = 'Plain text notes\n\nWrite to dana.reyes@acme-robotics.com or see https://x.com/acmerobotics\nfor *news* and `code`.\n';
export const JSON_BODY = JSON.stringify({ name: 'Acme', contact: 'dana.reyes@acme-robotics.com', links: ['https://x.com/acmerobotics'] });
export const MARKDOWN_BODY = '# Notes\n\n- one\n- two\n\n[Acme](https://acme-robotics.com/)\n';
/** A PDF of one blank page (no text layer: a scan without its image), with binary bytes in a comment: bytes, not text. */
export const PDF_BODY = Buffer.concat([
  Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n', 'latin1'),
  Buffer.from('3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << >> >>\nendobj\n%', 'latin1'),
  Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x80, 0x81, 0x9f]),
  Buffer.from('\ntrailer\n<< /Root 1 0 R /Size 4 >>\n%%EOF\n', 'latin1'),
]);
export const PNG_BODY = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export const HTML_BODY = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Acme Robotics press</title>
<meta name="description" content="Press contacts of Acme Robotics.">
<meta property="og:title" content="Acme Robotics press">
<meta property="og:site_name" content="Acme Robotics">
<link rel="canonical" href="/html">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Acme Robotics","url":"https://acme-robotics.com/"}</script>
</head><body>
<header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<main><article>
<h1>Press contact</h1>
<p>Acme Robotics builds warehouse robots. Our press team answers questions from journalists every working day, and
publishes news about new robots, factories and partners on this page and on our social profiles.</p>
<p>Press contact: Dana Reyes, Head of Press, <a href="mailto:dana.reyes@acme-robotics.com">dana.reyes@acme-robotics.com</a>,
<a href="tel:+14155550134">+1 415 555 0134</a>.</p>
<p><img src="/img/robot.png" alt="A robot" width="640" height="480"></p>
<p>Follow us: <a href="https://x.com/acmerobotics">X</a>, <a href="https://github.com/acme-robotics">GitHub</a>.</p>
</article></main>
<footer><a href="/privacy">Privacy</a></footer>
</body></html>`;

export interface TypedSite {
  readonly url: string;
  /** Requests received per path. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startTypedSite(): Promise<TypedSite> {
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const send = (res: http.ServerResponse, type: string, body: string | Buffer, status = 200) => {
    res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  };
  const server: Server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://typed.invalid');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    switch (u.pathname) {
      case '/html': return send(res, 'text/html; charset=utf-8', HTML_BODY);
      case '/text': return send(res, 'text/plain; charset=utf-8', TEXT_BODY);
      case '/json': return send(res, 'application/json', JSON_BODY);
      case '/markdown': return send(res, 'text/markdown; charset=utf-8', MARKDOWN_BODY);
      case '/pdf': return send(res, 'application/pdf', PDF_BODY);
      case '/image.png': return send(res, 'image/png', PNG_BODY);
      case '/octet': return send(res, 'application/octet-stream', PDF_BODY);
      case '/redirect':
        res.writeHead(302, { location: '/html', 'content-length': '0' });
        return res.end();
      case '/slow': {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) send(res, 'text/html; charset=utf-8', HTML_BODY);
        }, Number(u.searchParams.get('ms') ?? 1500));
        timers.add(t);
        return;
      }
      case '/hook':
        req.resume();
        req.on('end', () => send(res, 'application/json', '{}'));
        return;
      default:
        if (u.pathname.startsWith('/img/')) return send(res, 'image/png', PNG_BODY);
        return send(res, 'text/html; charset=utf-8', '<!DOCTYPE html><title>Not found</title><h1>Not found</h1>', 404);
    }
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: (path) => hits.get(path) ?? 0,
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
