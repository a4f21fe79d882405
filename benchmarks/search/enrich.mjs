// npm run bench:search:enrich: search enrichment (auto_scrape_top with
// include_contacts and include_social) through the BUILT server (dist/),
// over pages served on loopback by this process. Issue 12, "Measured".
//
// Run: npm run bench:search:enrich
//   (= npm run build --silent && node --import tsx benchmarks/search/enrich.mjs;
//   tsx only so the case tables, TypeScript modules under test/fixtures/,
//   import as they are).
//
// What it starts, all in this process and all on 127.0.0.1:
// - a target site (node:http) serving 20 company pages (4 companies x 5:
//   home, team, contact, press, legal; English, German, British English,
//   French) with contacts in every form docs/search.md lists (mailto, tel:,
//   JSON-LD Person/Organization, hCard, team cards and tables, signature-like
//   "Press contact:" lines, obfuscated and Cloudflare-protected addresses)
//   and the traps around them (fax numbers, VAT/company/SIRET numbers,
//   placeholders, no-reply senders, retina image names), social profiles in
//   footers, sameAs, rel="me" and twitter:site, beside share buttons and
//   video links that are not profiles; plus every page of the contacts and
//   social case tables (test/fixtures/contacts-cases.ts, social-cases.ts).
//   Pages answer at once, or after BENCH_DELAY_MS (switched per request).
// - Scour (createScour from dist/config/container.js): embedded SQLite in a
//   temp directory, allowPrivateTargets 'loopback', an admin token,
//   searchProviders ['local'], log level silent, the search rate windows of
//   the Unicorn plan lifted (so the bench is never refused; concurrency and
//   the scrape limits enrichment uses are the plan's own). A Unicorn account
//   is made through the admin API, and every page is indexed into `shared`
//   through the admin API under its own URL.
//
// Pages keep their real host names: http://acme.com:PORT/contact, so what the
// extractors read from the URL (the site's domain for og:site_name, the
// country-code TLD for phone numbers) is what the case tables assume. A
// dns.lookup stub installed before Scour is imported answers 127.0.0.1 for
// exactly those names and ENOTFOUND for every other name, and the egress
// guard admits loopback only: nothing this bench does can leave the machine.
//
// Part 1, quality: each contacts case and each social page is found by one
// search (a word only its document holds; with the case's country when it
// has one) with auto_scrape_top 1, include_contacts and include_social; the
// answer's `contacts` and `social_profiles` are scored against the case's
// labels with scoreContacts (addresses and fields) and precisionRecall. The
// same scores straight from the extractors on the case's own URL (what the
// test files compute) are printed beside them, and every case where the two
// disagree is listed. The social URL table (158 single URLs) is scored
// through normaliseProfileUrl only: it holds URLs, not pages. Then each
// company is searched with auto_scrape_top 5 and its merged contacts and
// profiles are scored against the company's labels (below, written by hand
// from the pages as a reader would take them).
//
// Part 2, latency: BENCH_ROUNDS rounds, each one plain search, one enriched
// search (auto_scrape_top 5, include_contacts, include_social) against pages
// answering at once, and one against pages answering after BENCH_DELAY_MS,
// in an order that rotates per round; the query cycles through the four
// companies (each has exactly five pages, so all five are scraped). One
// request in flight; time from sending to the last byte of the answer. After
// BENCH_WARMUP rounds not counted. p50 and p95 of each, and the ratios. The
// client, the server and the site share this process's one event loop, so
// the client's own time is in every figure (plain searches show it most).
//
// Prints tables, writes benchmarks/results/search-enrich.json.
// Settings: BENCH_ROUNDS (60), BENCH_WARMUP (10), BENCH_DELAY_MS (20),
// BENCH_HTTP_ADAPTER (uws), BENCH_OUT.
import { mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import dns from 'node:dns';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = process.env;
function setting(name, fallback, min = 0) {
  const v = Number(env[name] ?? fallback);
  if (Number.isInteger(v) && v >= min) return v;
  console.error(`${name} must be an integer >= ${min}`);
  process.exit(2);
}
const ROUNDS = setting('BENCH_ROUNDS', 60, 1);
const WARMUP = setting('BENCH_WARMUP', 10);
const DELAY_MS = setting('BENCH_DELAY_MS', 20);
const ADAPTER = env.BENCH_HTTP_ADAPTER ?? 'uws';
const OUT = env.BENCH_OUT ?? join(root, 'benchmarks', 'results', 'search-enrich.json');
const ENRICH = { auto_scrape_top: 5, include_contacts: true, include_social: true };

// ---------------------------------------------------------------------------
// Host names of this run's pages resolve to 127.0.0.1; every other name fails.

const hosts = new Set();
const systemLookup = dns.lookup;
const isLocal = (h) => net.isIP(h) !== 0 || h === 'localhost';
const notFound = (hostname) => Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', errno: -3008, syscall: 'getaddrinfo', hostname });
dns.lookup = function lookup(hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'object' && options !== null ? options : {};
  const h = String(hostname).toLowerCase().replace(/\.$/, '');
  if (isLocal(h)) return systemLookup.call(dns, hostname, options, callback);
  if (!hosts.has(h)) return void process.nextTick(cb, notFound(hostname));
  if (opts.all) return void process.nextTick(cb, null, [{ address: '127.0.0.1', family: 4 }]);
  return void process.nextTick(cb, null, '127.0.0.1', 4);
};
const systemPromiseLookup = dns.promises.lookup;
dns.promises.lookup = async (hostname, options) => {
  const h = String(hostname).toLowerCase().replace(/\.$/, '');
  if (isLocal(h)) return systemPromiseLookup.call(dns.promises, hostname, options);
  if (!hosts.has(h)) throw notFound(hostname);
  return options?.all ? [{ address: '127.0.0.1', family: 4 }] : { address: '127.0.0.1', family: 4 };
};
// The egress guard imports `lookup` from 'node:dns' as an ESM binding: make it see the stub.
syncBuiltinESMExports();

const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
let createScour;
let applyPlanOverrides;
let DEFAULT_PLANS;
let parsePage;
let extractContacts;
let scoreContacts;
let extractSocial;
let normaliseProfileUrl;
let precisionRecall;
let mergeContacts;
let mergeProfiles;
try {
  ({ createScour } = await dist('config/container.js'));
  ({ applyPlanOverrides, DEFAULT_PLANS } = await dist('config/plans.js'));
  ({ parsePage } = await dist('plugins/sdk/parse.js'));
  ({ extractContacts, mergeContacts } = await dist('plugins/extractors/contacts/index.js'));
  ({ scoreContacts } = await dist('plugins/extractors/contacts/score.js'));
  ({ extractSocial, normaliseProfileUrl, precisionRecall, mergeProfiles } = await dist('plugins/extractors/social/index.js'));
} catch (e) {
  console.error(`dist/ is missing or stale: run \`npm run build\` first (npm run bench:search:enrich does it)\n${e?.message ?? e}`);
  process.exit(1);
}
const contactsFixture = await import(pathToFileURL(join(root, 'test/fixtures/contacts-cases.ts')).href);
const socialFixture = await import(pathToFileURL(join(root, 'test/fixtures/social-cases.ts')).href);

// ---------------------------------------------------------------------------
// The company pages. Each company: five pages sharing a layout (navigation,
// cookie banner, footer with the address, switchboard, mailbox and profile
// icons, an analytics snippet and a stylesheet, as real small-company sites
// have), and the labels: what a reader takes from the five pages together.

const STYLE = `<style>
:root{--ink:#1d2430;--muted:#5b6577;--accent:#0b6bcb;--bg:#fbfcfe}*{box-sizing:border-box}body{margin:0;font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{display:flex;align-items:center;justify-content:space-between;padding:1rem 2rem;border-bottom:1px solid #e3e8ef;background:#fff;position:sticky;top:0;z-index:10}
header .logo img{height:36px;width:auto}nav ul{display:flex;gap:1.5rem;list-style:none;margin:0;padding:0}nav a{color:var(--ink);text-decoration:none;font-weight:500}nav a:hover{color:var(--accent)}
main{max-width:960px;margin:0 auto;padding:2.5rem 2rem}h1{font-size:2.4rem;line-height:1.2;margin:.5rem 0 1rem}h2{font-size:1.5rem;margin-top:2.5rem}
.hero{background:linear-gradient(135deg,#eaf3ff,#fff);padding:3rem 2rem;border-radius:12px}.hero img{max-width:100%;height:auto;background:url(/img/hero@2x.jpg) center/cover}
.team{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:1.5rem}.member{border:1px solid #e3e8ef;border-radius:10px;padding:1.25rem;background:#fff}.member h3{margin:.25rem 0}
.share{display:flex;gap:.75rem;margin:2rem 0}.share a{padding:.4rem .8rem;border:1px solid #d0d7e2;border-radius:6px;font-size:.9rem}
footer{background:#111827;color:#cbd5e1;padding:2.5rem 2rem;font-size:.95rem}footer a{color:#e2e8f0}footer .social{display:flex;gap:1rem;margin-top:1rem}footer svg{width:22px;height:22px;fill:currentColor}
.cookie{position:fixed;bottom:0;left:0;right:0;background:#fff;border-top:1px solid #e3e8ef;padding:1rem 2rem;display:flex;justify-content:space-between;gap:1rem}
form label{display:block;margin-top:1rem}form input,form textarea{width:100%;padding:.6rem;border:1px solid #cfd6e0;border-radius:6px}form button{margin-top:1rem;padding:.7rem 1.4rem;background:var(--accent);color:#fff;border:0;border-radius:6px}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e3e8ef;padding:.5rem;text-align:left}@media (max-width:640px){nav ul{display:none}main{padding:1.5rem 1rem}}
</style>`;

const ICON = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 2C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2zm0 18c-4.41 0-8-3.59-8-8s3.59-8 8-8 8 3.59 8 8-3.59 8-8 8zm-1-13h2v6h-2zm0 8h2v2h-2z"/></svg>';

const analytics = (id) => `<script>
(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});var f=d.getElementsByTagName(s)[0],j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;j.src='https://www.googletagmanager.com/gtm.js?id='+i+dl;f.parentNode.insertBefore(j,f);})(window,document,'script','dataLayer','${id}');
window.__consent={necessary:true,analytics:false,marketing:false};document.addEventListener('click',function(e){if(e.target&&e.target.dataset&&e.target.dataset.consent){window.__consent.analytics=e.target.dataset.consent==='all';document.querySelector('.cookie').remove();}});
var support="webmaster@${id.toLowerCase()}.invalid";
</script>`;

/** Cloudflare's email protection: a key byte, then each byte XOR the key, in hex. */
function cfEmail(address, key = 0x5a) {
  const hex = (n) => n.toString(16).padStart(2, '0');
  return hex(key) + [...Buffer.from(address, 'utf8')].map((b) => hex(b ^ key)).join('');
}
const cf = (address) => `<a href="/cdn-cgi/l/email-protection#${cfEmail(address)}"><span class="__cf_email__" data-cfemail="${cfEmail(address)}">[email&#160;protected]</span></a>`;

const para = (...xs) => xs.map((x) => `<p>${x}</p>`).join('\n');

const COMPANIES = [
  {
    id: 'northwind',
    name: 'Northwind Robotics',
    host: 'northwind-robotics.com',
    lang: 'en-US',
    query: 'Northwind Robotics',
    tagline: 'Autonomous mobile robots for warehouses that never sleep',
    nav: [['/', 'Home'], ['/about', 'About'], ['/press', 'Press'], ['/careers', 'Careers'], ['/contact', 'Contact']],
    footer: `<p><strong>Northwind Robotics</strong><br>1200 Harbor Blvd, Suite 400, Oakland, CA 94607</p>
<p>Tel: +1 510 555 0142 · <a href="mailto:info@northwind-robotics.com">info@northwind-robotics.com</a></p>
<div class="social"><a href="https://twitter.com/NorthwindBots" aria-label="X">${ICON}</a><a href="https://www.linkedin.com/company/northwind-robotics/" aria-label="LinkedIn">${ICON}</a>
<a href="https://www.youtube.com/@NorthwindRobotics" aria-label="YouTube">${ICON}</a><a href="https://github.com/northwind-robotics" aria-label="GitHub">${ICON}</a></div>
<p><a href="/privacy">Privacy</a> · <a href="/terms">Terms</a> · © 2026 Northwind Robotics, Inc.</p>`,
    pages: [
      {
        path: '/', title: 'Northwind Robotics: autonomous mobile robots for warehouses',
        head: `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Northwind Robotics', url: 'https://northwind-robotics.com/', logo: 'https://northwind-robotics.com/img/logo@2x.png', email: 'info@northwind-robotics.com', telephone: '+1-510-555-0142', sameAs: ['https://www.linkedin.com/company/northwind-robotics', 'https://twitter.com/NorthwindBots', 'https://www.instagram.com/northwindrobotics/', 'https://www.youtube.com/@NorthwindRobotics'] })}</script>`,
        body: `<section class="hero"><h1>Autonomous mobile robots for warehouses that never sleep</h1><img src="/img/hero.jpg" srcset="/img/hero@2x.jpg 2x" alt="A Northwind robot moving a pallet">
${para('Northwind Robotics builds autonomous mobile robots that move pallets, totes and carts through busy warehouses. Our fleet software plans thousands of moves an hour, shares aisles safely with people and fits into the warehouse management system you already run.', 'Since 2019 our robots have driven more than four million kilometres in distribution centres across North America and Europe, for retailers, third-party logistics providers and manufacturers.')}</section>
<h2>Why operators choose Northwind</h2>
<ul><li>Deployment in weeks, not months: no reflectors, magnetic tape or floor changes.</li><li>One fleet manager for every robot model, with open APIs.</li><li>Pay per move: no capital expense, service included.</li></ul>
${para('Our engineers sit next to your operations team during the first month, tune routes to your peak hours and train your staff. After go-live, the fleet reports every exception to a dashboard your supervisors already know how to read.', 'Watch a 90-second tour of a deployment at a grocery distribution centre in Ohio: <a href="https://www.youtube.com/watch?v=q3Xk9Rb2wPz">Northwind at FreshWay</a>.')}
<h2>Stay in the loop</h2><form action="/newsletter" method="post"><label>Email <input type="email" name="email" placeholder="you@example.com"></label><button>Subscribe</button></form>`,
      },
      {
        path: '/about', title: 'About Northwind Robotics: our team',
        body: `<h1>Our team</h1>${para('We are engineers, operators and former warehouse managers who believe robots should adapt to warehouses, not the other way round. Our leadership team has shipped robots at three of the largest logistics companies in the world.')}
<div class="team">
<div class="member"><img src="/img/team/maya@2x.jpg" alt=""><h3>Maya Chen</h3><p>CEO &amp; Co-founder</p><p><a href="mailto:maya.chen@northwind-robotics.com">Email Maya</a> · <a href="https://www.linkedin.com/in/maya-chen-robotics/">LinkedIn</a></p></div>
<div class="member"><img src="/img/team/tom@2x.jpg" alt=""><h3>Tom Alvarez</h3><p>CTO</p><p><a href="mailto:tom.alvarez@northwind-robotics.com">Email Tom</a> · <a href="https://www.linkedin.com/in/tomalvarez/">LinkedIn</a></p></div>
<div class="member"><img src="/img/team/priya@2x.jpg" alt=""><h3>Priya Nair</h3><p>Head of Sales</p><p><a href="mailto:priya.nair@northwind-robotics.com">Email Priya</a></p><p>Tel: +1 510 555 0178</p><p><a href="https://www.linkedin.com/in/priya-nair-sales/">LinkedIn</a></p></div>
</div>
${para('Northwind Robotics is backed by Harbor Ventures and Lakeside Capital and employs 140 people in Oakland, Pittsburgh and Rotterdam.')}`,
      },
      {
        path: '/contact', title: 'Contact Northwind Robotics',
        body: `<h1>Contact us</h1>${para('Tell us about your site and we will get back to you within one business day.')}
<h2>Sales</h2><p>New deployments and pricing: sales@northwind-robotics.com</p>
<h2>Support</h2><p>Customers can reach support at support [at] northwind-robotics [dot] com or on the support hotline: <a href="tel:+15105550190">+1 510-555-0190</a> (24/7).</p>
<p>Fax: +1 510 555 0143</p>
<p>Order confirmations and invoices are sent from noreply@northwind-robotics.com; please do not reply to them.</p>
<form action="/contact" method="post"><label>Name <input name="name" placeholder="Jane Doe"></label><label>Work email <input type="email" name="email" placeholder="jane.doe@yourcompany.com"></label><label>Message <textarea name="message"></textarea></label><button>Send</button></form>`,
      },
      {
        path: '/press', title: 'Northwind Robotics press room',
        head: `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Person', name: 'Dana Whitfield', jobTitle: 'Communications Director', email: 'press@northwind-robotics.com', telephone: '+1-510-555-0155', worksFor: { '@type': 'Organization', name: 'Northwind Robotics' } })}</script>`,
        body: `<h1>Press room</h1>
<article><h2>Northwind Robotics raises $48 million to bring pay-per-move robots to Europe</h2><p class="date">March 3, 2026</p>
${para('OAKLAND, Calif. — Northwind Robotics today announced a $48 million Series C round led by Harbor Ventures. The company will use the funds to open a service hub in Rotterdam and to double its engineering team.', '"Warehouses in Europe face the same labour shortage our US customers do," said Maya Chen, CEO and co-founder. "Pay-per-move lets them start with ten robots on a Monday."')}
<div class="share"><a href="https://twitter.com/intent/tweet?text=Northwind%20raises%20%2448M&amp;url=https%3A%2F%2Fnorthwind-robotics.com%2Fpress">Share on X</a><a href="https://www.facebook.com/sharer/sharer.php?u=https%3A%2F%2Fnorthwind-robotics.com%2Fpress">Share on Facebook</a><a href="https://www.linkedin.com/shareArticle?mini=true&amp;url=https%3A%2F%2Fnorthwind-robotics.com%2Fpress">Share on LinkedIn</a></div></article>
<h2>Media contact</h2><p>Press contact: Dana Whitfield, Communications Director<br>Email: <a href="mailto:press@northwind-robotics.com">press@northwind-robotics.com</a><br>Phone: +1 510 555 0155</p>
<p>Logos and photos: <a href="/press/kit.zip">press kit (ZIP, 24 MB)</a>, including logo@2x.png and logo@3x.png for retina screens.</p>`,
      },
      {
        path: '/careers', title: 'Careers at Northwind Robotics',
        body: `<h1>Build robots that people like working with</h1>${para('We hire engineers, field technicians and operations specialists in Oakland, Pittsburgh and Rotterdam. Every role includes equity, a learning budget and a week on a customer site in your first quarter.')}
<table><tr><th>Role</th><th>Location</th></tr><tr><td>Senior Robotics Engineer, Navigation</td><td>Pittsburgh</td></tr><tr><td>Field Service Technician</td><td>Rotterdam</td></tr><tr><td>Solutions Engineer</td><td>Oakland</td></tr></table>
<p>Send your CV to ${cf('recruiting@northwind-robotics.com')} and tell us which robot you would build first.</p>
<div class="share"><a href="https://www.linkedin.com/sharing/share-offsite/?url=https%3A%2F%2Fnorthwind-robotics.com%2Fcareers">Share this job</a><a href="https://www.reddit.com/submit?url=https%3A%2F%2Fnorthwind-robotics.com%2Fcareers">Post to Reddit</a></div>`,
      },
    ],
    contacts: [
      { email: 'info@northwind-robotics.com', company: 'Northwind Robotics', name: null },
      { phone: '+15105550142' },
      { email: 'maya.chen@northwind-robotics.com', name: 'Maya Chen', job_title: 'CEO & Co-founder', company: 'Northwind Robotics' },
      { email: 'tom.alvarez@northwind-robotics.com', name: 'Tom Alvarez', job_title: 'CTO', company: 'Northwind Robotics' },
      { email: 'priya.nair@northwind-robotics.com', phone: '+15105550178', name: 'Priya Nair', job_title: 'Head of Sales', company: 'Northwind Robotics' },
      { email: 'sales@northwind-robotics.com', name: null },
      { email: 'support@northwind-robotics.com', name: null },
      { phone: '+15105550190' },
      { email: 'press@northwind-robotics.com', phone: '+15105550155', name: 'Dana Whitfield', job_title: 'Communications Director', company: 'Northwind Robotics' },
      { email: 'recruiting@northwind-robotics.com', name: null },
    ],
    social: [
      'x https://x.com/northwindbots', 'linkedin https://www.linkedin.com/company/northwind-robotics', 'youtube https://www.youtube.com/@northwindrobotics',
      'github https://github.com/northwind-robotics', 'instagram https://www.instagram.com/northwindrobotics', 'linkedin https://www.linkedin.com/in/maya-chen-robotics',
      'linkedin https://www.linkedin.com/in/tomalvarez', 'linkedin https://www.linkedin.com/in/priya-nair-sales',
    ],
  },
  {
    id: 'weber',
    name: 'Weber Holzbau',
    host: 'weber-holzbau.de',
    lang: 'de-DE',
    query: 'Weber Holzbau',
    tagline: 'Holzhäuser, Aufstockungen und Dachstühle aus dem Schwarzwald',
    nav: [['/', 'Start'], ['/ueber-uns', 'Über uns'], ['/kontakt', 'Kontakt'], ['/presse', 'Presse'], ['/impressum', 'Impressum']],
    footer: `<p><strong>Weber Holzbau GmbH</strong> · Sägewerkstraße 12 · 79098 Freiburg im Breisgau</p>
<p>Telefon: 0761 2345670 · E-Mail: <a href="mailto:info@weber-holzbau.de">info@weber-holzbau.de</a></p>
<div class="social"><a href="https://de-de.facebook.com/WeberHolzbau/" aria-label="Facebook">${ICON}</a><a href="https://www.instagram.com/weber.holzbau/" aria-label="Instagram">${ICON}</a><a href="https://www.pinterest.de/weberholzbau/" aria-label="Pinterest">${ICON}</a></div>
<p><a href="/impressum">Impressum</a> · <a href="/datenschutz">Datenschutz</a> · © 2026 Weber Holzbau GmbH</p>`,
    pages: [
      {
        path: '/', title: 'Weber Holzbau – Holzhäuser und Aufstockungen in Freiburg',
        head: `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Weber Holzbau', url: 'https://weber-holzbau.de/', sameAs: ['https://www.facebook.com/WeberHolzbau', 'https://www.instagram.com/weber.holzbau/'] })}</script>`,
        body: `<section class="hero"><h1>Holzhäuser, Aufstockungen und Dachstühle aus dem Schwarzwald</h1>
${para('Seit drei Generationen plant und baut die Weber Holzbau GmbH Häuser aus Holz: vom Einfamilienhaus über die Aufstockung im Bestand bis zum Kindergarten. Unser Holz kommt aus Wäldern im Umkreis von 80 Kilometern, unsere Elemente fertigen wir in der eigenen Halle in Freiburg vor.', 'Ein Haus aus Holz speichert Kohlendioxid, ist in wenigen Wochen dicht und bietet ein Raumklima, das unsere Bauherren jeden Tag spüren.')}</section>
<h2>Unsere Leistungen</h2><ul><li>Holzrahmenbau und Massivholzbau</li><li>Aufstockungen und Anbauten</li><li>Dachstühle, Carports und Terrassen</li><li>Energetische Sanierung</li></ul>
${para('Von der ersten Skizze bis zur Schlüsselübergabe haben Sie einen festen Ansprechpartner. Fragen Sie nach unseren Referenzen: Wir zeigen Ihnen gern Häuser, die wir vor zwanzig Jahren gebaut haben.')}`,
      },
      {
        path: '/ueber-uns', title: 'Über uns – Weber Holzbau',
        body: `<h1>Über uns</h1>${para('1958 gründete Karl Weber eine Zimmerei mit zwei Gesellen. Heute arbeiten bei uns 38 Zimmerer, Techniker und Ingenieure, und wir bilden jedes Jahr vier junge Menschen aus.')}
<h2>Ihre Ansprechpartner</h2>
<table><tr><th>Name</th><th>Funktion</th><th>E-Mail</th></tr>
<tr><td>Markus Weber</td><td>Geschäftsführer</td><td>markus.weber@weber-holzbau.de</td></tr>
<tr><td>Julia Brandt</td><td>Projektleitung</td><td>julia.brandt@weber-holzbau.de</td></tr></table>
${para('Unser Betrieb ist Mitglied im Verband Holzbau Baden-Württemberg und nach PEFC zertifiziert.')}`,
      },
      {
        path: '/kontakt', title: 'Kontakt – Weber Holzbau',
        body: `<h1>Kontakt</h1>${para('Sie planen ein Bauvorhaben? Schreiben Sie uns: anfrage (at) weber-holzbau (punkt) de – wir melden uns innerhalb von zwei Werktagen.')}
<p>Telefon: 0761 2345670 · Fax: 0761 2345679</p>
<p>Notdienst bei Sturmschäden: +49 171 2345678</p>
<p>Bürozeiten: Mo–Do 7:30–16:30 Uhr, Fr 7:30–13:00 Uhr</p>
<form action="/kontakt" method="post"><label>Ihr Name <input name="name" placeholder="Max Mustermann"></label><label>E-Mail <input type="email" name="email" placeholder="max.mustermann@beispiel.de"></label><label>Nachricht <textarea name="nachricht"></textarea></label><button>Absenden</button></form>`,
      },
      {
        path: '/presse', title: 'Presse – Weber Holzbau',
        body: `<h1>Presse</h1><article><h2>Weber Holzbau stockt Freiburger Schule in sechs Wochen auf</h2><p>12. Februar 2026</p>
${para('Während der Sommerferien hat Weber Holzbau die Grundschule im Stadtteil Stühlinger um ein Geschoss in Holzbauweise erweitert. Die 42 vorgefertigten Wandelemente wurden in nur neun Tagen montiert.')}
<div class="share"><a href="https://www.facebook.com/sharer/sharer.php?u=https%3A%2F%2Fweber-holzbau.de%2Fpresse">Teilen</a><a href="https://twitter.com/intent/tweet?url=https%3A%2F%2Fweber-holzbau.de%2Fpresse">Posten</a><a href="https://www.pinterest.com/pin/create/button/?url=https%3A%2F%2Fweber-holzbau.de%2Fpresse">Merken</a></div></article>
<p>Pressekontakt: Julia Brandt<br>E-Mail: presse@weber-holzbau.de<br>Tel. 0761 2345675</p>
<p>Folgen Sie uns auch im Fediverse: <a rel="me" href="https://mastodon.social/@weberholzbau">Mastodon</a></p>`,
      },
      {
        path: '/impressum', title: 'Impressum – Weber Holzbau',
        body: `<h1>Impressum</h1><p>Angaben gemäß § 5 DDG</p>
<p>Weber Holzbau GmbH<br>Sägewerkstraße 12<br>79098 Freiburg im Breisgau</p>
<p>Geschäftsführer: Markus Weber<br>Telefon: +49 761 2345670<br>E-Mail: info@weber-holzbau.de</p>
<p>Registergericht: Amtsgericht Freiburg, HRB 712345<br>USt-IdNr.: DE 123456789</p>
<p>Datenschutzbeauftragte: Dr. Sabine Hoffmann, datenschutz@weber-holzbau.de</p>
${para('Verantwortlich für den Inhalt nach § 18 Abs. 2 MStV: Markus Weber, Anschrift wie oben.', 'Die Europäische Kommission stellt eine Plattform zur Online-Streitbeilegung bereit. Wir sind nicht bereit oder verpflichtet, an Streitbeilegungsverfahren vor einer Verbraucherschlichtungsstelle teilzunehmen.')}`,
      },
    ],
    contacts: [
      { email: 'info@weber-holzbau.de', company: 'Weber Holzbau' },
      { phone: '+497612345670' },
      { email: 'markus.weber@weber-holzbau.de', name: 'Markus Weber', job_title: 'Geschäftsführer', company: 'Weber Holzbau' },
      { email: 'julia.brandt@weber-holzbau.de', name: 'Julia Brandt', job_title: 'Projektleitung', company: 'Weber Holzbau' },
      { email: 'anfrage@weber-holzbau.de', name: null },
      { phone: '+491712345678' },
      { email: 'presse@weber-holzbau.de', phone: '+497612345675', name: 'Julia Brandt' },
      { email: 'datenschutz@weber-holzbau.de', name: 'Dr. Sabine Hoffmann' },
    ],
    social: [
      'facebook https://www.facebook.com/weberholzbau', 'instagram https://www.instagram.com/weber.holzbau', 'pinterest https://www.pinterest.com/weberholzbau',
      'mastodon https://mastodon.social/@weberholzbau',
    ],
  },
  {
    id: 'harbour',
    name: 'Harbour Analytics',
    host: 'harbour-analytics.co.uk',
    lang: 'en-GB',
    query: 'Harbour Analytics',
    tagline: 'Forecasting for ports, ferries and freight',
    nav: [['/', 'Home'], ['/team', 'Team'], ['/news', 'News'], ['/contact', 'Contact'], ['/privacy', 'Privacy']],
    footer: `<p><strong>Harbour Analytics Ltd</strong>, 14 Quayside, Bristol BS1 4RN · Tel: 0117 496 0321 · <a href="mailto:hello@harbour-analytics.co.uk">hello@harbour-analytics.co.uk</a></p>
<div class="social"><a href="https://uk.linkedin.com/company/harbour-analytics" aria-label="LinkedIn">${ICON}</a><a href="https://x.com/HarbourData" aria-label="X">${ICON}</a><a href="https://github.com/harbour-analytics" aria-label="GitHub">${ICON}</a><a href="https://bsky.app/profile/harbour-analytics.co.uk" aria-label="Bluesky">${ICON}</a></div>
<p>Registered in England and Wales, company no. 09876543. VAT No. GB 123 4567 89.</p>`,
    pages: [
      {
        path: '/', title: 'Harbour Analytics: forecasting for ports, ferries and freight',
        head: `<meta name="twitter:site" content="@HarbourData"><script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Harbour Analytics', url: 'https://harbour-analytics.co.uk/', sameAs: ['https://www.linkedin.com/company/harbour-analytics/', 'https://github.com/harbour-analytics'] })}</script>`,
        body: `<section class="hero"><h1>Forecasting for ports, ferries and freight</h1>
${para('Harbour Analytics turns vessel positions, weather, tides and booking data into forecasts that port operators can act on: berth occupancy for the next fortnight, gate queues for the next six hours, crane demand for the next shift.', 'Our models run for eleven ports around the North Sea and the Irish Sea, and our forecasts are right within fifteen minutes for nine arrivals in ten.')}</section>
<h2>What we do</h2><ul><li>Arrival and berth forecasts</li><li>Landside traffic and gate planning</li><li>Emissions reporting for shore power</li></ul>
${para('We are a team of data scientists and former harbour masters. We publish our open-source AIS cleaning tools on GitHub and speak at the Port Technology conference every year.')}`,
      },
      {
        path: '/team', title: 'Our team | Harbour Analytics',
        body: `<h1>Meet the team</h1>${para('Fourteen people in Bristol and Aberdeen, with backgrounds in operational research, meteorology and port operations.')}
<ul class="staff"><li>Oliver Grant, Managing Director — oliver.grant@harbour-analytics.co.uk</li>
<li>Amelia Hughes, Head of Data Science — amelia.hughes@harbour-analytics.co.uk</li>
<li>Rhys Evans, Client Services Manager — rhys.evans@harbour-analytics.co.uk, 07911 123456</li></ul>
<p>Find Oliver on <a href="https://www.linkedin.com/in/oliver-grant-harbour/">LinkedIn</a> and Amelia on <a href="https://uk.linkedin.com/in/amelia-hughes-data">LinkedIn</a>.</p>`,
      },
      {
        path: '/contact', title: 'Contact | Harbour Analytics',
        body: `<h1>Get in touch</h1>${para('Whether you run a ferry terminal or a container port, we would like to hear how you plan today.')}
<p>General enquiries: ${cf('enquiries@harbour-analytics.co.uk')}</p>
<p>Customer support: support@harbour-analytics.co.uk</p>
<p>Tel: 0117 496 0321 (Monday to Friday, 9am to 5.30pm)</p>
<p>Our office is a five-minute walk from Bristol Temple Meads; visitors sign in at reception on the ground floor.</p>`,
      },
      {
        path: '/news', title: 'News | Harbour Analytics',
        body: `<h1>News</h1><article><h2>Harbour Analytics wins Port of Aberdeen forecasting contract</h2><p>20 January 2026</p>
${para('The Port of Aberdeen has chosen Harbour Analytics to forecast vessel arrivals and berth demand at its new South Harbour, following a six-month trial in which the forecasts cut waiting time at anchor by a fifth.', 'See the announcement video: <a href="https://youtu.be/H4rb0uR2026">Aberdeen South Harbour</a>.')}
<div class="share"><a href="https://www.linkedin.com/shareArticle?mini=true&amp;url=https%3A%2F%2Fharbour-analytics.co.uk%2Fnews">Share</a><a href="https://x.com/intent/tweet?url=https%3A%2F%2Fharbour-analytics.co.uk%2Fnews">Post</a></div></article>
<h2>Media enquiries</h2>
<div class="vcard"><span class="fn">Sophie Turner</span>, <span class="title">Press Officer</span>, <span class="org">Harbour Analytics</span><br>
<a class="email" href="mailto:press@harbour-analytics.co.uk">press@harbour-analytics.co.uk</a><br><span class="tel">+44 117 496 0330</span></div>`,
      },
      {
        path: '/privacy', title: 'Privacy notice | Harbour Analytics',
        body: `<h1>Privacy notice</h1>${para('This notice explains what personal data Harbour Analytics Ltd collects when you use our website and services, why, and what rights you have. We are registered with the Information Commissioner\'s Office under number ZA123456.', 'We keep enquiry emails for two years and then delete them. We never sell personal data.')}
<p>Data Protection Officer: privacy@harbour-analytics.co.uk</p>
<p>You can also complain to the Information Commissioner's Office at <a href="https://ico.org.uk/make-a-complaint/">ico.org.uk</a>.</p>`,
      },
    ],
    contacts: [
      { email: 'hello@harbour-analytics.co.uk', company: 'Harbour Analytics' },
      { phone: '+441174960321' },
      { email: 'oliver.grant@harbour-analytics.co.uk', name: 'Oliver Grant', job_title: 'Managing Director', company: 'Harbour Analytics' },
      { email: 'amelia.hughes@harbour-analytics.co.uk', name: 'Amelia Hughes', job_title: 'Head of Data Science', company: 'Harbour Analytics' },
      { email: 'rhys.evans@harbour-analytics.co.uk', phone: '+447911123456', name: 'Rhys Evans', job_title: 'Client Services Manager', company: 'Harbour Analytics' },
      { email: 'enquiries@harbour-analytics.co.uk', name: null },
      { email: 'support@harbour-analytics.co.uk', name: null },
      { email: 'press@harbour-analytics.co.uk', phone: '+441174960330', name: 'Sophie Turner', job_title: 'Press Officer', company: 'Harbour Analytics' },
      { email: 'privacy@harbour-analytics.co.uk', name: null },
    ],
    social: [
      'linkedin https://www.linkedin.com/company/harbour-analytics', 'x https://x.com/harbourdata', 'github https://github.com/harbour-analytics',
      'bluesky https://bsky.app/profile/harbour-analytics.co.uk', 'linkedin https://www.linkedin.com/in/oliver-grant-harbour', 'linkedin https://www.linkedin.com/in/amelia-hughes-data',
    ],
  },
  {
    id: 'lumiere',
    name: 'Atelier Lumière',
    host: 'atelier-lumiere.fr',
    lang: 'fr-FR',
    query: 'Atelier Lumière',
    tagline: 'Luminaires en verre soufflé, faits main à Lyon',
    nav: [['/', 'Accueil'], ['/equipe', 'Équipe'], ['/contact', 'Contact'], ['/presse', 'Presse'], ['/mentions-legales', 'Mentions légales']],
    footer: `<p><strong>Atelier Lumière SARL</strong> — 18 rue des Arts, 69002 Lyon — Tél. : 04 78 12 34 56 — <a href="mailto:contact@atelier-lumiere.fr">contact@atelier-lumiere.fr</a></p>
<div class="social"><a href="https://www.instagram.com/atelier.lumiere/" aria-label="Instagram">${ICON}</a><a href="https://fr-fr.facebook.com/AtelierLumiereLyon/" aria-label="Facebook">${ICON}</a><a href="https://www.pinterest.fr/atelierlumiere/" aria-label="Pinterest">${ICON}</a><a href="https://www.youtube.com/@AtelierLumiere" aria-label="YouTube">${ICON}</a></div>`,
    pages: [
      {
        path: '/', title: 'Atelier Lumière – luminaires en verre soufflé faits main à Lyon',
        head: `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Atelier Lumière', url: 'https://atelier-lumiere.fr/', sameAs: ['https://www.instagram.com/atelier.lumiere/', 'https://www.pinterest.fr/atelierlumiere/'] })}</script>`,
        body: `<section class="hero"><h1>Luminaires en verre soufflé, faits main à Lyon</h1>
${para('Depuis 2011, Atelier Lumière dessine et souffle des suspensions, des appliques et des lampes à poser dans son atelier des Pentes de la Croix-Rousse. Chaque pièce est unique : le verre est soufflé à la canne, puis monté à la main sur une structure en laiton.', 'Nous travaillons pour des particuliers, des architectes d\'intérieur et des hôtels, en France et dans toute l\'Europe.')}</section>
<h2>Nos collections</h2><ul><li>Bulles – suspensions en verre fumé</li><li>Rhône – appliques en verre ambré</li><li>Sur mesure – lustres et installations</li></ul>`,
      },
      {
        path: '/equipe', title: 'L\'équipe – Atelier Lumière',
        body: `<h1>L'équipe</h1>${para('Six artisans verriers, une designer et un électricien travaillent à l\'atelier.')}
<div class="team">
<div class="member"><h3>Camille Martin</h3><p>Fondatrice et directrice artistique</p><p><a href="mailto:camille@atelier-lumiere.fr">Écrire à Camille</a></p></div>
<div class="member"><h3>Lucas Bernard</h3><p>Chef d'atelier</p><p><a href="mailto:lucas@atelier-lumiere.fr">Écrire à Lucas</a></p><p>Tél. : 06 12 34 56 78</p></div>
</div>`,
      },
      {
        path: '/contact', title: 'Contact – Atelier Lumière',
        body: `<h1>Contact</h1>${para('Pour une demande de devis sur mesure, écrivez-nous : devis (arobase) atelier-lumiere (point) fr. Nous répondons sous 48 heures.', 'L\'atelier est ouvert au public le samedi de 10 h à 18 h, et en semaine sur rendez-vous.')}
<p>Tél. : 04 78 12 34 56</p>`,
      },
      {
        path: '/presse', title: 'Presse – Atelier Lumière',
        body: `<h1>Presse</h1><article><h2>Atelier Lumière éclaire le nouvel hôtel de la Presqu'île</h2><p>5 mars 2026</p>
${para('Quarante-huit suspensions de la collection Bulles habillent désormais le hall et le restaurant de l\'hôtel, ouvert en février dans un ancien bâtiment des Soyeux.')}
<div class="share"><a href="https://www.facebook.com/sharer.php?u=https%3A%2F%2Fatelier-lumiere.fr%2Fpresse">Partager</a><a href="https://www.pinterest.com/pin/create/button/?url=https%3A%2F%2Fatelier-lumiere.fr%2Fpresse">Épingler</a></div></article>
<div><p>Contact presse : Chloé Dubois</p><p>presse@atelier-lumiere.fr — 04 78 12 34 60</p></div>`,
      },
      {
        path: '/mentions-legales', title: 'Mentions légales – Atelier Lumière',
        body: `<h1>Mentions légales</h1><p>Atelier Lumière SARL au capital de 20 000 €<br>18 rue des Arts, 69002 Lyon<br>RCS Lyon B 123 456 789 — SIRET 123 456 789 00012</p>
<p>Directrice de la publication : Camille Martin</p>
${para('Le site est hébergé par un prestataire situé dans l\'Union européenne. Toute reproduction des photographies du site est interdite sans autorisation écrite.')}`,
      },
    ],
    contacts: [
      { email: 'contact@atelier-lumiere.fr', company: 'Atelier Lumière' },
      { phone: '+33478123456' },
      { email: 'camille@atelier-lumiere.fr', name: 'Camille Martin', job_title: 'Fondatrice et directrice artistique', company: 'Atelier Lumière' },
      { email: 'lucas@atelier-lumiere.fr', phone: '+33612345678', name: 'Lucas Bernard', job_title: "Chef d'atelier", company: 'Atelier Lumière' },
      { email: 'devis@atelier-lumiere.fr', name: null },
      { email: 'presse@atelier-lumiere.fr', phone: '+33478123460', name: 'Chloé Dubois' },
    ],
    social: [
      'instagram https://www.instagram.com/atelier.lumiere', 'facebook https://www.facebook.com/atelierlumierelyon', 'pinterest https://www.pinterest.com/atelierlumiere',
      'youtube https://www.youtube.com/@atelierlumiere',
    ],
  },
];

// What makes real pages heavier than their text: a mega menu, an inline SVG
// sprite, and the page state a JavaScript framework embeds as JSON.
const MENU = {
  Products: ['Overview', 'Pricing', 'Integrations', 'Security', 'Release notes', 'Roadmap', 'Compare plans', 'Customer stories', 'Partners', 'Status'],
  Solutions: ['Enterprise', 'Small business', 'Public sector', 'Retail', 'Logistics', 'Manufacturing', 'Healthcare', 'Education', 'Hospitality', 'Energy'],
  Resources: ['Blog', 'Guides', 'Webinars', 'Events', 'Case studies', 'Documentation', 'API reference', 'Community', 'Glossary', 'Newsletter archive'],
  Company: ['About', 'Leadership', 'Careers', 'Press', 'Sustainability', 'Investors', 'Legal', 'Privacy', 'Cookie settings', 'Accessibility'],
};
const megaMenu = () => `<div class="mega" hidden>${Object.entries(MENU).map(([h, xs]) => `<div class="col"><h4>${h}</h4><ul>${xs.map((x) => `<li><a href="/${h.toLowerCase()}/${x.toLowerCase().replace(/[^a-z]+/g, '-')}">${x}</a></li>`).join('')}</ul></div>`).join('')}</div>`;
const SPRITE = `<svg xmlns="http://www.w3.org/2000/svg" style="display:none">${['arrow', 'check', 'close', 'menu', 'search', 'globe', 'phone', 'mail', 'pin', 'play', 'download', 'user']
  .map((id, i) => `<symbol id="i-${id}" viewBox="0 0 24 24"><path d="M${i + 2} ${i + 3}h${10 - (i % 5)}v${4 + (i % 3)}H${i + 2}zm${(i % 4) + 1} ${(i % 6) + 2}l${i % 7} ${i % 5}c1.1 0 2-.9 2-2s-.9-2-2-2-2 .9-2 2 .9 2 2 2zM3 ${12 + (i % 8)}h18v2H3z"/></symbol>`).join('')}</svg>`;
function pageState(c, p) {
  const words = textOf(p.body).split(' ').filter((w) => /^[\p{L}]{4,}$/u.test(w));
  const pick = (i, n) => Array.from({ length: n }, (_, k) => words[(i * 7 + k * 3) % Math.max(1, words.length)] ?? 'item').join(' ');
  const items = Array.from({ length: 60 }, (_, i) => ({ id: `${c.id}-${i}`, slug: `${c.id}-${pick(i, 2).toLowerCase().replace(/[^\p{L}]+/gu, '-')}-${i}`, title: pick(i, 5), summary: pick(i + 1, 16), tags: [pick(i, 1), pick(i + 2, 1)], updatedAt: `2026-0${1 + (i % 9)}-1${i % 10}T08:00:00Z` }));
  return `<script id="__NEXT_DATA__" type="application/json">${JSON.stringify({ props: { pageProps: { path: p.path, locale: c.lang, related: items } }, page: p.path, buildId: `b${c.id}2026` })}</script>`;
}

/**
 * The company labels were written from the pages before the first run and
 * are kept as written; where a reader could take another value too, it says
 * so here (the scorer compares exactly).
 */
const LABEL_NOTES = [
  'company of a mailbox at the site\'s own domain is labelled with og:site_name (= the JSON-LD Organization name); the legal name in the footer ("Northwind Robotics, Inc.", "Weber Holzbau GmbH") would be accepted by a reader as well',
  'role mailboxes (info@, sales@, support@, ...) are labelled name: null; presse@/press@ next to "Pressekontakt: X" / "Press contact: X" carry X, as in the contacts case table',
  'the British mobile of Rhys Evans was first 07700 900123 (Ofcom drama range, which libphonenumber rightly calls invalid); it is 07911 123456',
];

function companyHtml(c, p) {
  const nav = c.nav.map(([href, label]) => `<li><a href="${href}"${href === p.path ? ' aria-current="page"' : ''}>${label}</a></li>`).join('');
  return `<!doctype html>
<html lang="${c.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${p.title}</title><meta name="description" content="${c.tagline}">
<meta property="og:site_name" content="${c.name}"><meta property="og:title" content="${p.title}"><meta property="og:type" content="website"><meta property="og:locale" content="${c.lang.replace('-', '_')}">
<meta property="og:image" content="https://${c.host}/img/og@2x.jpg"><link rel="icon" href="/favicon.ico"><link rel="preload" href="/fonts/inter.woff2" as="font" crossorigin>
${STYLE}
${p.head ?? ''}</head>
<body><div class="cookie" role="dialog"><p>We use cookies to understand how our site is used. <a href="/privacy">Details</a></p><button data-consent="necessary">Necessary only</button><button data-consent="all">Accept all</button></div>
${SPRITE}
<header><a class="logo" href="/"><img src="/img/logo.svg" srcset="/img/logo@2x.png 2x" alt="${c.name}"></a><nav aria-label="Main"><ul>${nav}</ul>${megaMenu()}</nav></header>
<main>
${p.body}
</main>
<footer>
${c.footer}
</footer>
${pageState(c, p)}
${analytics(`GTM-${c.id.toUpperCase()}`)}
</body></html>
`;
}

const textOf = (html) => html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, ' ').replace(/<[^>]+>/g, ' ').replace(/&[a-z#0-9]+;/g, ' ').replace(/\s+/g, ' ').trim();

// ---------------------------------------------------------------------------
// The target site: pages by host + path + query; a delay switched per request.

async function startSite() {
  const pages = new Map();
  let delayMs = 0;
  let served = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    const host = String(req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
    const body = pages.get(`${host}${req.url ?? '/'}`);
    const send = () => {
      if (body === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      served++;
      bytes += body.length;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    port,
    /** Serve `html` at `url` (an https:// or http:// URL whose host is added to the stub); returns the URL Scour is given. */
    add(url, html) {
      const u = new URL(url);
      const host = u.hostname.toLowerCase();
      hosts.add(host);
      pages.set(`${host}${u.pathname}${u.search}`, Buffer.from(html, 'utf8'));
      return `http://${host}:${port}${u.pathname}${u.search}`;
    },
    setDelay(ms) { delayMs = ms; },
    stats: () => ({ pages: pages.size, served, bytes }),
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

// ---------------------------------------------------------------------------
// What this run starts goes on the way out (also on failure and Ctrl-C).

const owned = { site: undefined, scour: undefined, dir: undefined };
let finishing;
function teardown() {
  finishing ??= (async () => {
    await owned.scour?.stop().catch(() => undefined);
    await owned.site?.close().catch(() => undefined);
    if (owned.dir) rmSync(owned.dir, { recursive: true, force: true });
  })();
  return finishing;
}
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { teardown().finally(() => process.exit(130)); });

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const r3 = (x) => Math.round(x * 1000) / 1000;
const r2 = (x) => Math.round(x * 100) / 100;
const keyOf = (p) => `${p.platform} ${p.url}`;
const addressKeys = (xs) => [...new Set(xs.flatMap((x) => [x.email ? `email:${x.email.toLowerCase()}` : [], x.phone ? `phone:${x.phone}` : []].flat()))].sort();
const fieldView = (xs) => xs.map((x) => [x.email?.toLowerCase() ?? '', x.phone ?? '', x.name ?? '', x.job_title ?? '', x.company ?? ''].join('|')).sort();
const scoreRow = (s) => ({ precision: r3(s.precision), recall: r3(s.recall), f1: r3(s.f1), tp: s.tp ?? s.truePositives, fp: s.fp ?? s.falsePositives, fn: s.fn ?? s.falseNegatives });

const loadAtStart = loadavg().map(r2);
let status = 0;
try {
  const site = await startSite();
  owned.site = site;

  // Every page, and the document that points a search at it.
  const docs = [];
  const token = (kind, i) => `benchfixture${kind}${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}x`;
  const contactCases = [
    ...contactsFixture.CASES.map((c) => ({ ...c, gap: false })),
    ...contactsFixture.KNOWN_GAPS.map((c) => ({ ...c, gap: true })),
  ].map((c, i) => {
    const pageUrl = c.url ?? contactsFixture.DEFAULT_URL;
    const sep = new URL(pageUrl).search === '' ? '?' : '&';
    const url = site.add(`${pageUrl}${sep}case=contacts-${i}`, c.html);
    const word = token('contacts', i);
    const country = c.country?.toUpperCase();
    docs.push({ url, title: `Contacts case ${i}`, text: `${word} fixture page of the contacts case table.`, ...(country ? { country } : {}) });
    return { index: i, case: c, pageUrl, url, word, country };
  });
  const socialPages = socialFixture.PAGES.map(([label, html, pageUrl, expected], i) => {
    const sep = new URL(pageUrl).search === '' ? '?' : '&';
    const url = site.add(`${pageUrl}${sep}case=social-${i}`, html);
    const word = token('social', i);
    docs.push({ url, title: `Social case ${i}`, text: `${word} fixture page of the social case table.` });
    return { index: i, label, html, pageUrl, url, word, expected };
  });
  const companyPages = [];
  for (const c of COMPANIES) {
    c.urls = [];
    for (const p of c.pages) {
      const html = companyHtml(c, p);
      const url = site.add(`https://${c.host}${p.path}`, html);
      c.urls.push(url);
      companyPages.push({ company: c.id, path: p.path, bytes: Buffer.byteLength(html), html, pageUrl: `https://${c.host}${p.path}`, url });
      docs.push({ url, title: p.title, text: `${c.name}. ${textOf(p.body)} ${textOf(c.footer)}`, site_name: c.name });
    }
  }

  // Scour, embedded, in a temp directory.
  owned.dir = mkdtempSync(join(tmpdir(), 'scour-bench-enrich-'));
  const adminToken = randomBytes(24).toString('hex');
  const plans = applyPlanOverrides(DEFAULT_PLANS, { unicorn: { limits: { search: { per_minute: 1_000_000_000, per_hour: 1_000_000_000 } } } }, 'bench');
  const scour = await createScour({
    plans,
    settings: {
      host: '127.0.0.1', port: 0, dataDir: owned.dir, logLevel: 'silent', httpAdapter: ADAPTER, adminToken, allowPrivateTargets: 'loopback',
      searchProviders: ['local'], bootstrapKey: false, shutdownTimeoutMs: 5_000,
    },
  });
  owned.scour = scour;
  const { url: base } = await scour.start();

  const call = async (method, path, body, token) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try { json = JSON.parse(text); } catch { json = text; }
    return { status: res.status, body: json };
  };
  const account = await call('POST', '/admin/v1/accounts', { plan: 'unicorn', credits: 1_000_000, name: 'bench-search-enrich' }, adminToken);
  if (account.status !== 201) throw new Error(`creating the account: ${account.status} ${JSON.stringify(account.body)}`);
  const key = account.body.api_key;
  for (let i = 0; i < docs.length; i += 500) {
    const r = await call('POST', '/admin/v1/index/documents', { collection: 'shared', documents: docs.slice(i, i + 500) }, adminToken);
    if (r.status !== 200 || r.body.rejected.length > 0) throw new Error(`indexing: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  }
  const search = (body) => call('POST', '/v1/search', body, key);
  console.log(`site http://127.0.0.1:${site.port}: ${site.stats().pages} pages on ${hosts.size} host names (${companyPages.length} company pages, median ${Math.round(pct(companyPages.map((p) => p.bytes), 0.5) / 1024)} KiB); Scour ${base} (${ADAPTER}), ${docs.length} documents indexed`);

  // ------------------------------------------------------------------ quality
  const direct = (html, url) =>
    parsePage({ url, finalUrl: url, statusCode: 200, contentType: 'text/html; charset=utf-8', html });
  const disagreements = [];
  const problems = [];
  const findOne = async (word, url, country) => {
    const r = await search({ query: word, auto_scrape_top: 1, include_contacts: true, include_social: true, ...(country ? { country } : {}) });
    if (r.status !== 200) throw new Error(`search ${word}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    const top = r.body.search_results[0]?.link;
    if (top !== url) throw new Error(`search ${word}: the top result is ${top}, not ${url}`);
    const item = r.body.scraped_content[0];
    if (item.error !== null) problems.push(`${url}: ${item.error.code} ${item.error.message}`);
    return r.body;
  };

  const contactScored = { search: [], direct: [] };
  for (const cc of contactCases) {
    const body = await findOne(cc.word, cc.url, cc.country);
    const viaSearch = body.contacts ?? [];
    const alone = extractContacts(direct(cc.case.html, cc.pageUrl), cc.case.country === undefined ? {} : { defaultCountry: cc.case.country });
    contactScored.search.push({ gap: cc.case.gap, expected: cc.case.expect, actual: viaSearch });
    contactScored.direct.push({ gap: cc.case.gap, expected: cc.case.expect, actual: alone });
    const a = fieldView(viaSearch);
    const b = fieldView(alone);
    if (JSON.stringify(a) !== JSON.stringify(b)) disagreements.push({ table: 'contacts', case: cc.case.name, search: a, extractor: b });
  }
  const socialScored = { search: [], direct: [] };
  for (const sp of socialPages) {
    const body = await findOne(sp.word, sp.url);
    const viaSearch = body.social_profiles ?? [];
    const alone = extractSocial(direct(sp.html, sp.pageUrl));
    const expected = sp.expected.map((k) => ({ platform: k.slice(0, k.indexOf(' ')), url: k.slice(k.indexOf(' ') + 1) }));
    socialScored.search.push({ expected, actual: viaSearch });
    socialScored.direct.push({ expected, actual: alone });
    if (JSON.stringify(viaSearch.map(keyOf)) !== JSON.stringify(alone.map(keyOf))) disagreements.push({ table: 'social', case: sp.label, search: viaSearch.map(keyOf), extractor: alone.map(keyOf) });
  }
  const urlCaseScore = precisionRecall(socialFixture.URL_CASES.map(([, url, expected, asserted]) => {
    const actual = normaliseProfileUrl(url, { asserted: asserted === true });
    return { expected: expected === undefined ? [] : [expected], actual: actual === undefined ? [] : [actual] };
  }));

  const companyResults = [];
  for (const c of COMPANIES) {
    const r = await search({ query: c.query, ...ENRICH });
    if (r.status !== 200) throw new Error(`search ${c.query}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    const scraped = r.body.scraped_content.map((x) => x.url).sort();
    if (JSON.stringify(scraped) !== JSON.stringify([...c.urls].sort())) throw new Error(`search ${c.query} scraped ${scraped.join(', ')}, not the company's five pages`);
    for (const x of r.body.scraped_content) if (x.error !== null) problems.push(`${x.url}: ${x.error.code} ${x.error.message}`);
    // The extractors alone, merged in the order search scraped the pages (merging keeps the first value it meets).
    const pages = r.body.scraped_content.map((x) => companyPages.find((p) => p.url === x.url));
    const aloneContacts = mergeContacts(pages.map((p) => extractContacts(direct(p.html, p.pageUrl))));
    const aloneSocial = mergeProfiles(pages.map((p) => extractSocial(direct(p.html, p.pageUrl))));
    const expectedSocial = c.social.map((k) => ({ platform: k.slice(0, k.indexOf(' ')), url: k.slice(k.indexOf(' ') + 1) }));
    const contacts = scoreContacts([{ expected: c.contacts, actual: r.body.contacts }]);
    const social = precisionRecall([{ expected: expectedSocial, actual: r.body.social_profiles }]);
    const want = new Set(addressKeys(c.contacts));
    const got = new Set(addressKeys(r.body.contacts));
    const wantSocial = new Set(c.social);
    const gotSocial = new Set(r.body.social_profiles.map(keyOf));
    companyResults.push({
      company: c.name, host: c.host, query: c.query, scraped_count: r.body.scraped_count, credits_used: r.body.credits_used,
      contacts_addresses: scoreRow(contacts.addresses), contacts_fields: scoreRow(contacts.fields), social: scoreRow(social),
      missed_addresses: [...want].filter((k) => !got.has(k)), extra_addresses: [...got].filter((k) => !want.has(k)),
      missed_profiles: [...wantSocial].filter((k) => !gotSocial.has(k)), extra_profiles: [...gotSocial].filter((k) => !wantSocial.has(k)),
      field_errors: c.contacts.flatMap((e) => {
        const m = r.body.contacts.find((a) => (e.email ? a.email?.toLowerCase() === e.email : e.phone !== undefined && a.phone === e.phone));
        return ['name', 'job_title', 'company'].filter((f) => e[f] !== undefined && (m?.[f] ?? null) !== e[f]).map((f) => `${e.email ?? e.phone} ${f}: expected ${JSON.stringify(e[f])}, got ${JSON.stringify(m?.[f] ?? null)}`);
      }),
      contacts: r.body.contacts, social_profiles: r.body.social_profiles,
      same_as_extractors: JSON.stringify(fieldView(r.body.contacts)) === JSON.stringify(fieldView(aloneContacts)) && JSON.stringify(r.body.social_profiles.map(keyOf)) === JSON.stringify(aloneSocial.map(keyOf)),
    });
  }
  const companyScore = {
    contacts: scoreContacts(COMPANIES.map((c, i) => ({ expected: c.contacts, actual: companyResults[i].contacts }))),
    social: precisionRecall(COMPANIES.map((c, i) => ({ expected: c.social.map((k) => ({ platform: k.slice(0, k.indexOf(' ')), url: k.slice(k.indexOf(' ') + 1) })), actual: companyResults[i].social_profiles }))),
  };

  const cs = (side, withGaps) => scoreContacts(contactScored[side].filter((x) => withGaps || !x.gap));
  const quality = {
    contacts_cases: { cases: contactScored.search.filter((x) => !x.gap).length, search: { addresses: scoreRow(cs('search', false).addresses), fields: scoreRow(cs('search', false).fields) }, extractor: { addresses: scoreRow(cs('direct', false).addresses), fields: scoreRow(cs('direct', false).fields) } },
    contacts_cases_and_known_gaps: { cases: contactScored.search.length, search: { addresses: scoreRow(cs('search', true).addresses), fields: scoreRow(cs('search', true).fields) }, extractor: { addresses: scoreRow(cs('direct', true).addresses), fields: scoreRow(cs('direct', true).fields) } },
    social_pages: { cases: socialScored.search.length, search: scoreRow(precisionRecall(socialScored.search)), extractor: scoreRow(precisionRecall(socialScored.direct)) },
    social_url_cases: { cases: urlCaseScore.cases, extractor: scoreRow(urlCaseScore), note: 'single URLs through normaliseProfileUrl (not pages, so not through search)' },
    companies: { cases: COMPANIES.length, pages: companyPages.length, label_notes: LABEL_NOTES, contacts_addresses: scoreRow(companyScore.contacts.addresses), contacts_fields: scoreRow(companyScore.contacts.fields), social: scoreRow(companyScore.social), per_company: companyResults },
    search_vs_extractor_disagreements: disagreements,
    scrape_errors: problems,
  };

  // ------------------------------------------------------------------ latency
  const kinds = {
    plain: { body: (q) => ({ query: q }), delay: 0 },
    enriched: { body: (q) => ({ query: q, ...ENRICH }), delay: 0 },
    [`enriched_delay_${DELAY_MS}ms`]: { body: (q) => ({ query: q, ...ENRICH }), delay: DELAY_MS },
  };
  const names = Object.keys(kinds);
  const samples = Object.fromEntries(names.map((n) => [n, { ms: [], search_time_s: [], credits: new Set(), scraped: new Set() }]));
  const failures = [];
  const t0 = performance.now();
  for (let r = 0; r < WARMUP + ROUNDS; r++) {
    const c = COMPANIES[r % COMPANIES.length];
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const name of order) {
      const k = kinds[name];
      site.setDelay(k.delay);
      const body = JSON.stringify(k.body(c.query));
      const started = performance.now();
      const res = await fetch(`${base}/v1/search`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      const text = await res.text();
      const ms = performance.now() - started;
      if (res.status !== 200) {
        failures.push(`${name} ${c.query}: ${res.status} ${text.slice(0, 200)}`);
        continue;
      }
      const json = JSON.parse(text);
      if (r < WARMUP) continue;
      const s = samples[name];
      s.ms.push(ms);
      s.search_time_s.push(json.search_time);
      s.credits.add(json.credits_used);
      s.scraped.add(json.scraped_count);
    }
  }
  site.setDelay(0);
  const latencyWall = (performance.now() - t0) / 1000;
  const latency = Object.fromEntries(names.map((n) => {
    const s = samples[n];
    return [n, {
      requests: s.ms.length, p50_ms: r2(pct(s.ms, 0.5)), p95_ms: r2(pct(s.ms, 0.95)), mean_ms: r2(mean(s.ms)), min_ms: r2(Math.min(...s.ms)), max_ms: r2(Math.max(...s.ms)),
      server_search_time_p50_ms: r2(pct(s.search_time_s, 0.5) * 1000), credits_used: [...s.credits], scraped_count: [...s.scraped],
    }];
  }));
  const slow = names[2];
  const ratios = {
    enriched_vs_plain_p50: r2(latency.enriched.p50_ms / latency.plain.p50_ms),
    enriched_vs_plain_p95: r2(latency.enriched.p95_ms / latency.plain.p95_ms),
    [`${slow}_vs_plain_p50`]: r2(latency[slow].p50_ms / latency.plain.p50_ms),
    [`${slow}_vs_plain_p95`]: r2(latency[slow].p95_ms / latency.plain.p95_ms),
    enrichment_cost_p50_ms: r2(latency.enriched.p50_ms - latency.plain.p50_ms),
  };

  // ------------------------------------------------------------------ report
  const f3 = (x) => x.toFixed(3);
  const lines = [
    '',
    `## Search enrichment over loopback: ${ROUNDS} rounds (+${WARMUP} warm-up), one request in flight, ${ADAPTER}`,
    '',
    `Query cycles through ${COMPANIES.length} companies of 5 pages each (median page ${Math.round(pct(companyPages.map((p) => p.bytes), 0.5) / 1024)} KiB); enriched = auto_scrape_top 5, include_contacts, include_social. Time from sending to the last byte.`,
    '',
    '| search | requests | p50 ms | p95 ms | mean ms | p50 / plain p50 | p95 / plain p95 | search_time p50 ms (server, search step) | credits | scraped |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...names.map((n) => {
      const l = latency[n];
      return `| ${n === 'plain' ? 'plain' : n === 'enriched' ? 'enriched, pages answer at once' : `enriched, pages answer after ${DELAY_MS} ms`} | ${l.requests} | ${l.p50_ms.toFixed(2)} | ${l.p95_ms.toFixed(2)} | ${l.mean_ms.toFixed(2)} | ${(l.p50_ms / latency.plain.p50_ms).toFixed(1)}x | ${(l.p95_ms / latency.plain.p95_ms).toFixed(1)}x | ${l.server_search_time_p50_ms.toFixed(1)} | ${l.credits_used.join(', ')} | ${l.scraped_count.join(', ')} |`;
    }),
    '',
    '| precision / recall | cases | through search enrichment | extractor alone (the tests) |',
    '|---|---:|---|---|',
    `| contacts, addresses (CASES) | ${quality.contacts_cases.cases} | ${f3(quality.contacts_cases.search.addresses.precision)} / ${f3(quality.contacts_cases.search.addresses.recall)} | ${f3(quality.contacts_cases.extractor.addresses.precision)} / ${f3(quality.contacts_cases.extractor.addresses.recall)} |`,
    `| contacts, fields (CASES) | ${quality.contacts_cases.cases} | ${f3(quality.contacts_cases.search.fields.precision)} / ${f3(quality.contacts_cases.search.fields.recall)} | ${f3(quality.contacts_cases.extractor.fields.precision)} / ${f3(quality.contacts_cases.extractor.fields.recall)} |`,
    `| contacts, addresses (CASES + KNOWN_GAPS) | ${quality.contacts_cases_and_known_gaps.cases} | ${f3(quality.contacts_cases_and_known_gaps.search.addresses.precision)} / ${f3(quality.contacts_cases_and_known_gaps.search.addresses.recall)} | ${f3(quality.contacts_cases_and_known_gaps.extractor.addresses.precision)} / ${f3(quality.contacts_cases_and_known_gaps.extractor.addresses.recall)} |`,
    `| contacts, fields (CASES + KNOWN_GAPS) | ${quality.contacts_cases_and_known_gaps.cases} | ${f3(quality.contacts_cases_and_known_gaps.search.fields.precision)} / ${f3(quality.contacts_cases_and_known_gaps.search.fields.recall)} | ${f3(quality.contacts_cases_and_known_gaps.extractor.fields.precision)} / ${f3(quality.contacts_cases_and_known_gaps.extractor.fields.recall)} |`,
    `| social profiles (PAGES) | ${quality.social_pages.cases} | ${f3(quality.social_pages.search.precision)} / ${f3(quality.social_pages.search.recall)} | ${f3(quality.social_pages.extractor.precision)} / ${f3(quality.social_pages.extractor.recall)} |`,
    `| social profiles (URL cases, normaliseProfileUrl) | ${quality.social_url_cases.cases} | | ${f3(quality.social_url_cases.extractor.precision)} / ${f3(quality.social_url_cases.extractor.recall)} |`,
    `| company sites: contacts, addresses | ${COMPANIES.length} x 5 pages | ${f3(quality.companies.contacts_addresses.precision)} / ${f3(quality.companies.contacts_addresses.recall)} | |`,
    `| company sites: contacts, fields | ${COMPANIES.length} x 5 pages | ${f3(quality.companies.contacts_fields.precision)} / ${f3(quality.companies.contacts_fields.recall)} | |`,
    `| company sites: social profiles | ${COMPANIES.length} x 5 pages | ${f3(quality.companies.social.precision)} / ${f3(quality.companies.social.recall)} | |`,
    '',
    `Search and extractor alone disagree on ${disagreements.length} case(s)${disagreements.length ? ':' : '.'}`,
    ...disagreements.map((d) => `  ${d.table}: ${d.case}\n    search:    ${JSON.stringify(d.search)}\n    extractor: ${JSON.stringify(d.extractor)}`),
    ...companyResults.flatMap((c) => [
      `${c.company}: addresses missed ${JSON.stringify(c.missed_addresses)}, extra ${JSON.stringify(c.extra_addresses)}; profiles missed ${JSON.stringify(c.missed_profiles)}, extra ${JSON.stringify(c.extra_profiles)}; same as the extractors alone: ${c.same_as_extractors}`,
      ...c.field_errors.map((e) => `  ${e}`),
    ]),
    ...(problems.length ? [`Scrape errors: ${problems.join('; ')}`] : []),
    ...(failures.length ? [`Failed requests: ${failures.join('; ')}`] : []),
    `Latency part: ${latencyWall.toFixed(1)} s; pages served ${site.stats().served}.`,
  ];
  console.log(lines.join('\n'));

  const result = {
    benchmark: 'search-enrich',
    date: new Date().toISOString(),
    machine: { node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_bytes: totalmem(), loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map(r2), kernel: (() => { try { return readFileSync('/proc/sys/kernel/osrelease', 'latin1').trim(); } catch { return process.platform; } })() },
    settings: {
      rounds: ROUNDS, warmup_rounds: WARMUP, delay_ms: DELAY_MS, http_adapter: ADAPTER, enriched_body: ENRICH, in_flight: 1,
      configuration: 'embedded (SQLite in a temp dir, in-process limiter), createScour in this process, searchProviders [local], allowPrivateTargets loopback',
      plan: 'unicorn (search rate windows lifted; concurrency and scrape limits as the plan has them)',
      target: 'node:http on 127.0.0.1 in this process; page host names resolved to 127.0.0.1 by a dns.lookup stub, every other name ENOTFOUND',
      documents_indexed: docs.length, company_pages: companyPages.map((p) => ({ url: p.pageUrl, bytes: p.bytes })),
    },
    latency, ratios, quality,
    failures,
    unit: { time: 'ms' },
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwrote ${relative(process.cwd(), OUT) || OUT}`);
  if (failures.length > 0) status = 1;
} catch (e) {
  status = 1;
  console.error(`bench:search:enrich failed: ${e?.stack ?? e}`);
} finally {
  await teardown();
}
process.exit(status);
