// The target site of the scrape bench: the 181 pages of the Zyte article
// benchmark, decompressed once into memory and served at /a/<id>.html
// (query strings ignored, so every pass can use URLs of its own) by a plain
// node:http server on 127.0.0.1. Nothing else: unknown paths answer 404.
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

export async function startStaticSite(dir) {
  const pages = new Map();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.html.gz')).sort()) {
    pages.set(f.slice(0, -'.html.gz'.length), gunzipSync(readFileSync(join(dir, f))));
  }
  if (pages.size === 0) throw new Error(`no *.html.gz pages in ${dir}`);
  let served = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    const m = /^\/a\/([A-Za-z0-9_-]+)\.html(?:\?|$)/.exec(req.url ?? '');
    const body = m ? pages.get(m[1]) : undefined;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    served++;
    bytes += body.length;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    ids: [...pages.keys()],
    totalBytes: [...pages.values()].reduce((n, b) => n + b.length, 0),
    url: (id, query = '') => `${base}/a/${id}.html${query}`,
    stats: () => ({ served, bytes }),
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}
