/**
 * A loopback site whose content is behind what browser actions do (issue
 * 29, section 1), for the tests of `actions`:
 *
 *   /load-more     three items and a "load more" button; each click fetches
 *                  the next three (/items?page=n) and appends them; after
 *                  page 3 the button goes away. Item 9 is the last.
 *   /infinite      ten rows; when the end of the page comes into view the
 *                  next ten are fetched (/rows?batch=n), four batches in all
 *                  (row 40 is the last), each after a short delay.
 *   /form          a search form (input#q, button#go) that submits to
 *                  /search?q=..., which answers "Results for <q>".
 *   /cookie-wall   a cookie banner; the article is fetched (/article) and
 *                  shown only once #accept is clicked.
 *   /title         a page whose title says what it is, for scripts.
 *   /redirect      302 to /title.
 *   /beacon?to=<origin>  a button (#send) that, clicked, fetches <origin>/leak and loads an
 *                  image from it (what the egress guard must refuse).
 *
 * Only for tests: loopback only.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const ARTICLE_TEXT = 'The secret recipe behind the cookie wall: two cups of flour, one cup of sugar, and patience.';

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

const itemsPage = page('Load more', `<main><h1>Catalogue</h1><ul id="items"><li>Item 1: a small red teapot for two people</li><li>Item 2: a large blue teapot for a family</li><li>Item 3: a green kettle that whistles loudly</li></ul>
<button id="more" type="button">Load more</button></main>
<script>
let next = 2;
document.getElementById('more').addEventListener('click', async () => {
  const r = await fetch('/items?page=' + next);
  const items = await r.json();
  for (const t of items) { const li = document.createElement('li'); li.textContent = t; document.getElementById('items').appendChild(li); }
  next++;
  if (next > 3) document.getElementById('more').remove();
});
</script>`);

const infinitePage = page('Infinite', `<main><h1>Feed</h1><div id="rows">${Array.from({ length: 10 }, (_, n) => `<p class="row" style="height:120px">Row ${n + 1}: an entry of the endless feed, with some words</p>`).join('')}</div>
<div id="end" style="height:10px"></div></main>
<script>
let batch = 2, busy = false;
new IntersectionObserver(async (entries) => {
  if (!entries.some((e) => e.isIntersecting) || busy || batch > 4) return;
  busy = true;
  const rows = await (await fetch('/rows?batch=' + batch)).json();
  for (const t of rows) { const p = document.createElement('p'); p.className = 'row'; p.style.height = '120px'; p.textContent = t; document.getElementById('rows').appendChild(p); }
  batch++;
  busy = false;
}).observe(document.getElementById('end'));
</script>`);

const formPage = page('Search form', `<main><h1>Search the archive</h1><form action="/search" method="get"><input id="q" name="q" autocomplete="off"><button id="go" type="submit">Search</button></form></main>`);

const cookiePage = page('Cookie wall', `<div id="banner" style="position:fixed;inset:0;background:#fff"><p>We use cookies.</p><button id="accept">Accept all</button></div>
<main id="content"><h1>Recipes</h1></main>
<script>
document.getElementById('accept').addEventListener('click', async () => {
  document.cookie = 'consent=yes';
  const html = await (await fetch('/article')).text();
  document.getElementById('content').insertAdjacentHTML('beforeend', html);
  document.getElementById('banner').remove();
});
</script>`);

export interface ActionsSite {
  readonly url: string;
  /** Requests received per path. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startActionsSite(host = '127.0.0.1'): Promise<ActionsSite> {
  const hits = new Map<string, number>();
  const sockets = new Set<Socket>();
  const send = (res: http.ServerResponse, type: string, body: string) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    switch (url.pathname) {
      case '/load-more': return send(res, 'text/html; charset=utf-8', itemsPage);
      case '/items': {
        const n = Number(url.searchParams.get('page') ?? '2');
        return send(res, 'application/json', JSON.stringify([1, 2, 3].map((k) => `Item ${(n - 1) * 3 + k}: a teapot of the page ${n} collection`)));
      }
      case '/infinite': return send(res, 'text/html; charset=utf-8', infinitePage);
      case '/rows': {
        const b = Number(url.searchParams.get('batch') ?? '2');
        setTimeout(() => send(res, 'application/json', JSON.stringify(Array.from({ length: 10 }, (_, k) => `Row ${(b - 1) * 10 + k + 1}: an entry of the endless feed, with some words`))), 150);
        return;
      }
      case '/form': return send(res, 'text/html; charset=utf-8', formPage);
      case '/search': {
        const q = (url.searchParams.get('q') ?? '').replace(/[<&]/g, '');
        return send(res, 'text/html; charset=utf-8', page('Results', `<main><h1>Results for ${q}</h1><p>Three archived letters mention ${q}.</p></main>`));
      }
      case '/cookie-wall': return send(res, 'text/html; charset=utf-8', cookiePage);
      case '/article': return send(res, 'text/html; charset=utf-8', `<article><h2>The recipe</h2><p>${ARTICLE_TEXT}</p></article>`);
      case '/redirect':
        res.writeHead(302, { location: '/title' });
        res.end();
        return;
      case '/title': return send(res, 'text/html; charset=utf-8', page('A page with a title', '<main><p>Nothing else here.</p></main>'));
      case '/beacon': {
        const to = JSON.stringify(url.searchParams.get('to') ?? '');
        return send(res, 'text/html; charset=utf-8', page('Beacon', `<p id="main">beacon page</p><button id="send">Send</button>
<script>document.getElementById('send').addEventListener('click', () => {
  fetch(${to} + '/leak').then(() => document.body.insertAdjacentHTML('beforeend', '<p id=leaked>leaked</p>')).catch(() => document.body.insertAdjacentHTML('beforeend', '<p id=refused>refused</p>'));
  const img = new Image(); img.src = ${to} + '/leak.png'; document.body.appendChild(img);
});</script>`));
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
    }
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    hits: (path) => hits.get(path) ?? 0,
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}
