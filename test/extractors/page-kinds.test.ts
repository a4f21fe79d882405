/**
 * main_content and markdown on small hand-written pages of many kinds, not
 * only the long news pages of the Zyte benchmark: semantic HTML5, div soup,
 * one-paragraph pages, documentation, forums, products, listings, and pages
 * in German, Russian, Chinese and Arabic. Each case says what must be in the
 * main content and what must stay out; every string it names is first proved
 * to be on the page (text_content), so no check passes by a typo.
 */
import { describe, expect, it } from 'vitest';
import { mainContent, mainContentExtractor } from '../../plugins/extractors/main-content.js';
import { markdownExtractor } from '../../plugins/extractors/markdown.js';
import { textContentExtractor } from '../../plugins/extractors/text-content.js';
import { page } from './support.js';

interface Case {
  /** The kind of page. */
  readonly kind: string;
  readonly name: string;
  readonly html: string;
  /** In main_content (and, unless it holds Markdown syntax, in markdown). */
  readonly in: readonly string[];
  /** Neither in main_content nor in markdown. */
  readonly out: readonly string[];
  /** In markdown, as written (headings, lists, tables, links...). */
  readonly md?: readonly string[];
  /** main_content's first line. */
  readonly first?: string;
}

const URL = 'https://example.com/section/page.html';

const doc = (title: string, body: string, attrs = 'lang="en"'): string =>
  `<!doctype html><html ${attrs}><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/s.css"><style>body{font:16px sans-serif}</style></head><body>${body}<script>window.dataLayer=[];function trackPageView(){}</script></body></html>`;

const SITE_NAV = `<nav class="site-nav"><ul><li><a href="/">Home</a></li><li><a href="/pricing">Pricing</a></li><li><a href="/blog">Blog</a></li><li><a href="/careers">Careers</a></li></ul></nav>`;
const SITE_FOOTER = `<footer class="site-footer"><p>© 2025 Example Inc. All rights reserved.</p><p><a href="/privacy">Privacy policy</a> · <a href="/terms">Terms of use</a></p></footer>`;

const CASES: Case[] = [
  // ------------------------------------------------------------ semantic HTML5
  {
    kind: 'semantic',
    name: 'the issue: nav, an article with an h1 and two paragraphs, a footer, a script',
    html: doc('Why we moved our builds to one machine | Example Blog', `${SITE_NAV}
      <article><h1>Why we moved our builds to one machine</h1>
      <p>For three years our builds ran on a fleet of small virtual machines, and most of their time went to downloading the same dependencies again.</p>
      <p>One large machine with a warm cache now does the same work in a third of the time.</p></article>
      ${SITE_FOOTER}`),
    in: ['Why we moved our builds to one machine', 'For three years our builds ran', 'in a third of the time.'],
    out: ['Pricing', 'Careers', 'All rights reserved', 'Privacy policy', 'trackPageView', 'font:16px'],
    md: ['# Why we moved our builds to one machine\n\nFor three years'],
    first: 'Why we moved our builds to one machine',
  },
  {
    kind: 'semantic',
    name: 'very short paragraphs (under 25 characters)',
    html: doc('Release 2.1', `<header><a class="logo" href="/">Acme</a>${SITE_NAV}</header>
      <main><article><h1>Release 2.1 is out</h1><p>It fixes the login bug.</p><p>Thanks for the reports!</p></article></main>${SITE_FOOTER}`),
    in: ['Release 2.1 is out', 'It fixes the login bug.', 'Thanks for the reports!'],
    out: ['Acme', 'Pricing', 'All rights reserved'],
    md: ['# Release 2.1 is out\n\nIt fixes the login bug.\n\nThanks for the reports!'],
    first: 'Release 2.1 is out',
  },
  {
    kind: 'semantic',
    name: 'page header, article header with byline and date, figure, tags footer, aside',
    html: doc('A lighthouse keeper retires after 40 years - Coast News', `<header class="masthead"><a href="/" class="brand">Coast News</a>${SITE_NAV}</header>
      <main><article>
        <header><h1>A lighthouse keeper retires after 40 years</h1><p class="byline">By Ana Lima</p><time datetime="2025-03-02">2 March 2025</time></header>
        <p>Every evening since 1985, Tomas Varga has climbed the 112 steps of the Cape Rock lighthouse to check the lamp, even after it was automated in 2004.</p>
        <figure><img src="/img/lighthouse.jpg" alt="The lighthouse at dusk"><figcaption>The Cape Rock lighthouse at dusk, seen from the harbour.</figcaption></figure>
        <p>On Friday he handed the keys to the harbour authority, which plans to open the tower to visitors in the summer.</p>
        <p>"I will miss the storms most," he said, laughing, as his neighbours gathered on the pier with cake and a brass band.</p>
        <footer><p>Tags: <a href="/t/coast">coast</a>, <a href="/t/people">people</a></p></footer>
      </article>
      <aside><h2>Most read</h2><ol><li><a href="/a">Ferry timetable changes in April</a></li><li><a href="/b">New bakery opens on Main Street</a></li></ol></aside></main>
      ${SITE_FOOTER}`),
    in: ['A lighthouse keeper retires after 40 years', 'Every evening since 1985', 'The Cape Rock lighthouse at dusk, seen from the harbour.', 'open the tower to visitors', 'I will miss the storms most'],
    out: ['Coast News', 'By Ana Lima', '2 March 2025', 'Tags:', 'Most read', 'Ferry timetable', 'Pricing', 'All rights reserved'],
    md: ['# A lighthouse keeper retires after 40 years', '![The lighthouse at dusk](https://example.com/img/lighthouse.jpg)'],
    first: 'A lighthouse keeper retires after 40 years',
  },
  {
    kind: 'semantic',
    name: 'cookie banner longer than the short article',
    html: doc('Opening hours', `${SITE_NAV}
      <div class="cookie-banner"><p>We and our 143 partners use cookies and similar technologies to store and access information on your device, to measure the audience, to personalise content and advertising, and to improve our services. You can accept, refuse or choose your settings at any time, including by clicking the cookie settings link at the bottom of every page.</p><button>Accept all</button><button>Refuse</button></div>
      <main><h1>Opening hours</h1><p>The library is open Monday to Saturday, from 9 am to 7 pm.</p><p>It is closed on public holidays.</p></main>${SITE_FOOTER}`),
    in: ['Opening hours', 'The library is open Monday to Saturday', 'It is closed on public holidays.'],
    out: ['143 partners', 'Accept all', 'Pricing', 'All rights reserved'],
    first: 'Opening hours',
  },
  {
    kind: 'semantic',
    name: 'consent dialog (role=dialog, consent manager class names) and a newsletter box inside the article',
    html: doc('How to repot an orchid', `${SITE_NAV}
      <div id="onetrust-consent-sdk"><div role="dialog" aria-label="Privacy"><p>This website uses cookies to enhance user experience and to analyze performance and traffic on our website, and shares information about your use of our site with social media, advertising and analytics partners.</p><button>Accept cookies</button></div></div>
      <article><h1>How to repot an orchid</h1>
      <p>Orchids grow in bark, not soil, and they like their roots a little crowded, so repot only every two years, just after flowering.</p>
      <div class="newsletter-signup"><h3>Get our weekly gardening tips</h3><p>Join 20,000 readers, it is free.</p><input type="email"><button>Subscribe</button></div>
      <p>Soak the new bark overnight, trim dead roots with clean scissors, and water sparingly for the first weeks.</p></article>${SITE_FOOTER}`),
    in: ['How to repot an orchid', 'Orchids grow in bark', 'Soak the new bark overnight'],
    out: ['uses cookies', 'Accept cookies', 'weekly gardening tips', 'Join 20,000 readers', 'Pricing'],
    first: 'How to repot an orchid',
  },
  {
    kind: 'semantic',
    name: 'share bar and social links inside the article',
    html: doc('The quiet return of the tram', `${SITE_NAV}
      <article><h1>The quiet return of the tram</h1>
      <div class="share-bar"><a href="https://x.com/share">Share on X</a><a href="https://facebook.com/share">Share on Facebook</a><a href="#">Copy link</a></div>
      <p>Twenty European cities have reopened tram lines they closed in the 1960s, and ridership on the new lines has beaten every forecast so far.</p>
      <p>Planners say trams cost less than metros and carry more people than buses, which makes them a fit for mid-sized cities.</p>
      <ul class="social-links"><li><a href="https://x.com/ex">Follow us on X</a></li><li><a href="https://mastodon.social/@ex">Follow us on Mastodon</a></li></ul></article>${SITE_FOOTER}`),
    in: ['The quiet return of the tram', 'Twenty European cities', 'Planners say trams cost less'],
    out: ['Share on X', 'Share on Facebook', 'Copy link', 'Follow us on', 'Pricing'],
    first: 'The quiet return of the tram',
  },
  {
    kind: 'semantic',
    name: 'comment section as long as the article',
    html: doc('Ten years of running a small bookshop', `${SITE_NAV}
      <main><article><h1>Ten years of running a small bookshop</h1>
      <p>When we opened in 2015, people told us that bookshops were finished, and that we would last a year at most, maybe two.</p>
      <p>Ten years later we have twelve staff, a café, and a reading group that fills the shop every second Thursday.</p></article>
      <section id="comments" class="comments"><h2>3 comments</h2>
        <article class="comment"><p class="comment-author">Maria</p><p>Congratulations! Your shop is the reason I started reading again, after years of only reading on my phone at night.</p></article>
        <article class="comment"><p class="comment-author">Tom</p><p>Best bookshop in town, and the café makes a great flat white, which is not something you can say about most bookshops.</p></article>
      </section></main>${SITE_FOOTER}`),
    in: ['Ten years of running a small bookshop', 'When we opened in 2015', 'a reading group that fills the shop'],
    out: ['3 comments', 'Your shop is the reason', 'great flat white', 'Pricing'],
    first: 'Ten years of running a small bookshop',
  },
  {
    kind: 'semantic',
    name: 'related-links lists, with and without a class',
    html: doc('Five rules for readable code', `${SITE_NAV}
      <main><article><h1>Five rules for readable code</h1>
      <p>Readable code is code that the next person can change without fear, and that person is usually you, six months from now, in a hurry.</p>
      <p>Name things after what they mean, keep functions short, and delete the comments that only repeat the code.</p>
      <section class="related-posts"><h2>Related posts</h2><ul><li><a href="/p/naming">Naming things is hard, but not that hard</a></li><li><a href="/p/tests">Tests as documentation</a></li></ul></section>
      <h2>Read next</h2><ul><li><a href="/p/refactor">When to refactor and when to rewrite</a></li><li><a href="/p/review">How we do code review</a></li></ul>
      </article></main>${SITE_FOOTER}`),
    in: ['Five rules for readable code', 'Readable code is code that', 'Name things after what they mean'],
    out: ['Related posts', 'Read next', 'Naming things is hard', 'Tests as documentation', 'When to refactor', 'How we do code review', 'Pricing'],
    first: 'Five rules for readable code',
  },
  {
    kind: 'semantic',
    name: 'sections with lists, an ordered list and a data table',
    html: doc('Plans and prices', `${SITE_NAV}
      <main><article><h1>Plans and prices</h1>
      <p>Every plan includes unlimited projects, daily backups and email support, and you can change plans at any time.</p>
      <h2>What you get</h2><ul><li>Unlimited projects</li><li>Daily backups, kept for 30 days</li><li>Email support within one working day</li></ul>
      <h2>How to upgrade</h2><ol><li>Open the billing page</li><li>Choose a plan</li><li>Confirm with your card</li></ol>
      <table><thead><tr><th>Plan</th><th>Price</th><th>Seats</th></tr></thead><tbody><tr><td>Starter</td><td>$9</td><td>3</td></tr><tr><td>Team</td><td>$29</td><td>10</td></tr></tbody></table>
      <p>Prices are per month, billed yearly, and <strong>exclude VAT</strong>; see <a href="/faq">the FAQ</a> for <em>details</em>.</p>
      </article></main>${SITE_FOOTER}`),
    in: ['Plans and prices', 'What you get', 'Daily backups, kept for 30 days', 'Confirm with your card', 'Starter', 'Team'],
    out: ['Pricing', 'All rights reserved'],
    md: ['# Plans and prices', '## What you get\n\n- Unlimited projects\n- Daily backups, kept for 30 days', '## How to upgrade\n\n1. Open the billing page\n2. Choose a plan', '| Plan | Price | Seats |\n| --- | --- | --- |\n| Starter | $9 | 3 |', '**exclude VAT**', '[the FAQ](https://example.com/faq)', '*details*'],
    first: 'Plans and prices',
  },
  {
    kind: 'semantic',
    name: 'technical post with code blocks',
    html: doc('Reading a file line by line in Python', `${SITE_NAV}
      <main><article><h1>Reading a file line by line in Python</h1>
      <p>The simplest way is to iterate over the file object, which reads one line at a time and never loads the whole file:</p>
      <pre><code class="language-python">with open("data.txt") as f:
    for line in f:
        print(line.rstrip())</code></pre>
      <p>Use <code>readlines()</code> only for small files: it builds a list of every line in memory.</p>
      </article></main>${SITE_FOOTER}`),
    in: ['Reading a file line by line in Python', 'iterate over the file object', 'for line in f:', 'only for small files'],
    out: ['Pricing', 'trackPageView'],
    md: ['# Reading a file line by line in Python', '```python\nwith open("data.txt") as f:\n    for line in f:\n        print(line.rstrip())\n```', 'Use `readlines()` only'],
    first: 'Reading a file line by line in Python',
  },
  {
    kind: 'semantic',
    name: 'hero header inside main, then sections (h1, h2, h3 levels)',
    html: doc('About us — Example', `<header>${SITE_NAV}</header>
      <main><header class="hero"><h1>About us</h1><p class="lead">We build tools for small teams.</p></header>
      <section><h2>Our story</h2><p>Example started in 2019 in a garage in Lyon, when two friends could not find a simple tool to share invoices with their accountant.</p>
      <h3>Today</h3><p>We are 40 people in four countries, and our tools are used by more than 12,000 small companies.</p></section></main>${SITE_FOOTER}`),
    in: ['About us', 'Our story', 'Example started in 2019', 'We are 40 people'],
    out: ['Pricing', 'All rights reserved'],
    md: ['# About us', '## Our story', '### Today'],
    first: 'About us',
  },

  {
    kind: 'semantic',
    name: 'a short news brief followed by sibling <article> teasers of similar length',
    html: doc('Bridge closed for repairs | City Paper', `${SITE_NAV}
      <main><article><h1>Bridge closed for repairs</h1>
      <p>The Old Town bridge will be closed to cars from Monday for six weeks, while engineers replace the expansion joints and resurface the deck.</p>
      <p>Pedestrians and cyclists can still cross on the north side, and buses will run a diversion through the port.</p></article>
      <article class="card"><h2><a href="/n/2">Council approves new bus lanes on the ring road</a></h2><p>The lanes will run from the station to the hospital, and should be ready by the end of next year, the council said.</p></article>
      <article class="card"><h2><a href="/n/3">Library extends opening hours in the exam period</a></h2><p>From May the central library will stay open until midnight on weekdays, to give students a quiet place to revise.</p></article>
      </main>${SITE_FOOTER}`),
    in: ['Bridge closed for repairs', 'closed to cars from Monday for six weeks', 'buses will run a diversion'],
    out: ['Council approves new bus lanes', 'The lanes will run from the station', 'Library extends opening hours', 'Pricing'],
    first: 'Bridge closed for repairs',
  },

  // ------------------------------------------------------------ div soup
  {
    kind: 'div soup',
    name: 'blog theme: post-title, post-meta, post-body, sidebar',
    html: doc('Winter cycling tips | Two Wheels', `<div id="header"><div class="logo"><a href="/">Two Wheels</a></div><div id="menu"><a href="/">Home</a> <a href="/archive">Archive</a> <a href="/about">About me</a></div></div>
      <div id="wrapper"><div class="post"><h2 class="post-title">Winter cycling tips</h2><div class="post-meta">Posted by Jon on 12 January</div>
      <div class="post-body">Cycling in winter is mostly about being seen and staying dry.<br><br>Fit bright lights, front and back, and use them even in daylight, because dusk comes early and drivers do not expect bikes.<br><br>Mudguards keep you and your bag clean, and wider tyres at lower pressure grip better on wet leaves.</div></div>
      <div id="sidebar"><h3>Archives</h3><ul><li><a href="/2024/12">December 2024</a></li><li><a href="/2024/11">November 2024</a></li></ul><h3>About me</h3><p>I ride to work every day, all year round.</p></div></div>
      <div id="footer">Powered by a blog engine. Theme by someone.</div>`),
    in: ['Winter cycling tips', 'mostly about being seen', 'Fit bright lights', 'wider tyres at lower pressure'],
    out: ['Two Wheels', 'Archive', 'Posted by Jon', 'December 2024', 'I ride to work every day', 'Powered by'],
    md: ['## Winter cycling tips'],
    first: 'Winter cycling tips',
  },
  {
    kind: 'div soup',
    name: 'WordPress: entry-header, entry-content with a caption and share buttons, entry-footer, comments, widgets',
    html: doc('Sourdough for beginners – Bread Notes', `<div id="page" class="site"><header id="masthead" class="site-header"><p class="site-title"><a href="/">Bread Notes</a></p><nav id="site-navigation" class="main-navigation"><a href="/recipes">Recipes</a> <a href="/shop">Shop</a></nav></header>
      <div id="content" class="site-content"><div id="primary" class="content-area"><main id="main" class="site-main">
      <article class="post type-post status-publish hentry"><header class="entry-header"><h1 class="entry-title">Sourdough for beginners</h1><div class="entry-meta"><span class="posted-on">March 3, 2025</span> <span class="byline">by Lea</span></div></header>
      <div class="entry-content"><p>A sourdough starter is only flour and water, left for a week to catch the wild yeasts that live everywhere around us.</p>
      <div class="wp-caption"><img src="/starter.jpg" alt="starter"><p class="wp-caption-text">A starter on day five, bubbly and ready.</p></div>
      <p>Feed it twice a day, keep it warm, and bake when it doubles within six hours of a feed.</p>
      <div class="sharedaddy sd-sharing-enabled"><h3 class="sd-title">Share this:</h3><ul><li><a href="?share=twitter">Twitter</a></li><li><a href="?share=facebook">Facebook</a></li></ul></div></div>
      <footer class="entry-footer"><span class="cat-links">Posted in <a href="/c/bread">Bread</a></span></footer></article>
      <div id="comments" class="comments-area"><h2 class="comments-title">2 thoughts on “Sourdough for beginners”</h2><ol class="comment-list"><li class="comment"><p>Mine smells like nail polish remover after three days, is that normal or should I start again from the beginning?</p></li></ol></div>
      </main></div><aside id="secondary" class="widget-area"><section class="widget"><h2 class="widget-title">Recent Posts</h2><ul><li><a href="/rye">Rye bread at home</a></li></ul></section></aside></div>
      <footer id="colophon" class="site-footer">Proudly powered by WordPress</footer></div>`),
    in: ['Sourdough for beginners', 'A sourdough starter is only flour and water', 'A starter on day five, bubbly and ready.', 'bake when it doubles'],
    out: ['Bread Notes', 'Recipes', 'March 3, 2025', 'by Lea', 'Share this', 'Twitter', 'Posted in', 'thoughts on', 'nail polish', 'Recent Posts', 'Rye bread', 'Proudly powered'],
    md: ['# Sourdough for beginners'],
    first: 'Sourdough for beginners',
  },
  {
    kind: 'div soup',
    name: 'div.content beside div.menu, no headings',
    html: doc('Directions', `<div class="top"><div class="menu"><a href="/">Start</a> | <a href="/rooms">Rooms</a> | <a href="/directions">Directions</a> | <a href="/book">Book now</a></div></div>
      <div class="content"><p>By train: take the regional line to Bellavista and walk ten minutes along the river, the hotel is the yellow building after the bridge.</p><p>By car: leave the motorway at exit 14 and follow the signs to the old town; parking is free for guests.</p></div>
      <div class="bottom">Hotel Bellavista · Via Roma 3 · +39 0123 456789</div>`),
    in: ['By train: take the regional line', 'By car: leave the motorway at exit 14'],
    out: ['Rooms', 'Book now', 'Via Roma 3'],
  },
  {
    kind: 'div soup',
    name: 'paragraphs as divs with a post-body class, nav as a plain div of links',
    html: doc('Notes on moving house', `<div id="nav"><a href="/">home</a> <a href="/notes">notes</a> <a href="/photos">photos</a> <a href="/contact">contact</a></div>
      <div class="post-body"><div>Moving house with two cats is harder than moving with a piano, or so I thought before we tried it last week.</div><div>The cats spent the first night under the bed, and the second night on it, which I count as progress.</div><div>The piano, for the record, was fine.</div></div>`),
    in: ['Moving house with two cats', 'the second night on it', 'The piano, for the record, was fine.'],
    out: ['photos', 'contact'],
  },
  {
    kind: 'div soup',
    name: 'old table layout: navigation cell beside a content cell',
    html: doc('Club history', `<table width="100%"><tr><td class="navcell" width="150"><a href="/">Home</a><br><a href="/fixtures">Fixtures</a><br><a href="/members">Members</a><br><a href="/links">Links</a></td>
      <td><h1>Club history</h1><p>The club was founded in 1923 by workers of the local mill, who played on a field behind the chapel until the war.</p><p>In 1951 it moved to the current ground, and the clubhouse was built by the members themselves over three summers.</p></td></tr></table>`),
    in: ['Club history', 'The club was founded in 1923', 'over three summers'],
    out: ['Fixtures', 'Members'],
    first: 'Club history',
  },

  {
    kind: 'div soup',
    name: 'a baking post classed category-cookies (WordPress taxonomy classes) beside a real cookie banner',
    html: doc('Brown butter cookies – Crumbs', `<div id="cookie-notice" class="cn-bottom"><span>We use cookies to give you the best experience on our website, and to show you relevant ads.</span><a href="#" class="cn-accept">Ok</a></div>
      <div class="header"><a href="/">Crumbs</a> <a href="/recipes">Recipes</a></div>
      <div class="post-212 post type-post category-cookies tag-butter"><h1 class="entry-title">Brown butter cookies</h1>
      <p>Brown the butter first: it takes five minutes, and it makes all the difference to the taste, trust me on this one.</p>
      <p>Chill the dough for an hour, then bake at 180 degrees for eleven minutes, until the edges are golden.</p></div>`),
    in: ['Brown butter cookies', 'Brown the butter first', 'until the edges are golden'],
    out: ['We use cookies', 'Recipes'],
    md: ['# Brown butter cookies\n\nBrown the butter first'],
    first: 'Brown butter cookies',
  },

  // ------------------------------------------------------------ one paragraph
  {
    kind: 'one paragraph',
    name: 'a body holding one paragraph',
    html: doc('Note', `<p>The meeting moved to Thursday at 3 pm, in room 204, because the projector in the usual room is broken.</p>`),
    in: ['The meeting moved to Thursday at 3 pm'],
    out: ['trackPageView'],
  },
  {
    kind: 'one paragraph',
    name: 'one short paragraph between a nav and a footer',
    html: doc('Maintenance', `${SITE_NAV}<main><p>We are down for maintenance.</p></main>${SITE_FOOTER}`),
    in: ['We are down for maintenance.'],
    out: ['Pricing', 'Careers', 'All rights reserved'],
  },
  {
    kind: 'one paragraph',
    name: 'bare text in the body',
    html: doc('Hello', `Hello, world. This page is plain text.`),
    in: ['Hello, world. This page is plain text.'],
    out: [],
  },
  {
    kind: 'one paragraph',
    name: 'a 404 page',
    html: doc('Page not found', `<header>${SITE_NAV}</header><main><h1>Page not found</h1><p>Sorry, we could not find the page you asked for.</p><p><a href="/">Go back home</a></p></main>${SITE_FOOTER}`),
    in: ['Page not found', 'Sorry, we could not find the page you asked for.'],
    out: ['Pricing', 'All rights reserved'],
    first: 'Page not found',
  },

  // ------------------------------------------------------------ documentation
  {
    kind: 'documentation',
    name: 'sidebar nav, article with a table and code, "on this page" aside, prev/next footer',
    html: doc('Configuration - Acme Docs', `<header class="navbar"><a href="/">Acme Docs</a><input type="search" placeholder="Search"></header>
      <nav class="sidebar"><ul><li><a href="/docs/install">Installation</a></li><li><a href="/docs/config">Configuration</a></li><li><a href="/docs/deploy">Deployment</a></li><li><a href="/docs/api">API reference</a></li><li><a href="/docs/faq">FAQ</a></li></ul></nav>
      <main><article><h1>Configuration</h1>
      <p>Acme reads its settings from <code>acme.yaml</code> in the working directory, then from environment variables, which take precedence.</p>
      <h2>Options</h2>
      <table><tr><th>Option</th><th>Default</th><th>Description</th></tr><tr><td>port</td><td>8080</td><td>The port to listen on</td></tr><tr><td>workers</td><td>4</td><td>Worker processes</td></tr></table>
      <h2>Example</h2><pre><code class="language-yaml">port: 9000
workers: 8</code></pre>
      <p>Restart the server after changing the file.</p></article>
      <aside class="toc"><h2>On this page</h2><ul><li><a href="#options">Options</a></li><li><a href="#example">Example</a></li></ul></aside></main>
      <footer class="docs-footer"><a href="/docs/install">Previous: Installation</a> <a href="/docs/deploy">Next: Deployment</a><p>Edit this page on GitHub</p></footer>`),
    in: ['Configuration', 'Acme reads its settings from', 'The port to listen on', 'workers: 8', 'Restart the server'],
    out: ['Acme Docs', 'Installation', 'API reference', 'On this page', 'Previous:', 'Edit this page'],
    md: ['# Configuration', '## Options', '| Option | Default | Description |\n| --- | --- | --- |\n| port | 8080 | The port to listen on |', '```yaml\nport: 9000\nworkers: 8\n```', 'from `acme.yaml` in'],
    first: 'Configuration',
  },
  {
    kind: 'documentation',
    name: 'Sphinx-like: related bars and sphinxsidebar as role=navigation, body as role=main',
    html: doc('json — JSON encoder and decoder — Python docs', `<div class="related" role="navigation"><h3>Navigation</h3><ul><li><a href="/genindex">General Index</a></li><li><a href="/py-modindex">Module Index</a></li><li><a href="/next">next</a></li></ul></div>
      <div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
      <section id="module-json"><h1>json — JSON encoder and decoder<a class="headerlink" href="#module-json" title="Link to this heading">¶</a></h1>
      <p>JSON is a lightweight data interchange format inspired by JavaScript object literal syntax, and this module exposes an API familiar to users of the standard library marshal and pickle modules.</p>
      <div class="highlight-python3"><div class="highlight"><pre>import json
json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])</pre></div></div>
      <section id="basic-usage"><h2>Basic Usage</h2><p>Serialize obj as a JSON formatted stream to fp, a file-like object supporting write(), using this conversion table.</p></section></section>
      </div></div></div>
      <div class="sphinxsidebar" role="navigation" aria-label="Main"><h3>Table of Contents</h3><ul><li><a href="#">json</a></li><li><a href="#basic-usage">Basic Usage</a></li></ul><h3>Previous topic</h3><p><a href="/email">email — An email and MIME handling package</a></p></div></div>
      <div class="footer">© Copyright 2001-2025, Python Software Foundation.</div>`),
    in: ['json — JSON encoder and decoder', 'JSON is a lightweight data interchange format', 'json.dumps', 'Basic Usage', 'Serialize obj as a JSON formatted stream'],
    out: ['General Index', 'Module Index', 'Table of Contents', 'Previous topic', 'An email and MIME handling package', 'Python Software Foundation', '¶'],
    md: ['# json — JSON encoder and decoder', '## Basic Usage', '```\nimport json'],
    first: 'json — JSON encoder and decoder',
  },
  {
    kind: 'documentation',
    name: 'Docusaurus-like: long sidebar of links, markdown div, feedback widget, pagination',
    html: doc('Quick start | Widget', `<nav class="navbar"><a href="/">Widget</a> <a href="/docs">Docs</a> <a href="/blog">Blog</a></nav>
      <div class="main-wrapper"><div class="docsWrapper"><aside class="theme-doc-sidebar-container"><ul class="menu"><li><a href="/docs/intro">Introduction</a></li><li><a href="/docs/quick-start">Quick start</a></li><li><a href="/docs/concepts">Core concepts</a></li><li><a href="/docs/plugins">Writing plugins</a></li><li><a href="/docs/cli">Command line</a></li><li><a href="/docs/changelog">Changelog</a></li></ul></aside>
      <div class="docMainContainer"><div class="theme-doc-markdown markdown"><header><h1>Quick start</h1></header>
      <p>Install the package, create a config file, and run the dev server; the whole thing takes about two minutes.</p>
      <ol><li>Run <code>npm install widget</code></li><li>Create <code>widget.config.js</code></li><li>Run <code>npx widget dev</code></li></ol>
      <div class="admonition admonition-tip"><p>The dev server reloads on every change to the config.</p></div></div>
      <div class="feedback"><p>Was this page helpful?</p><button>Yes</button><button>No</button></div>
      <nav class="pagination-nav"><a href="/docs/intro">Previous « Introduction</a><a href="/docs/concepts">Next Core concepts »</a></nav></div></div></div>`),
    in: ['Quick start', 'Install the package, create a config file', 'npm install widget', 'The dev server reloads on every change'],
    out: ['Core concepts', 'Writing plugins', 'Changelog', 'Was this page helpful?', 'Previous «'],
    md: ['# Quick start', '1. Run `npm install widget`\n2. Create `widget.config.js`'],
    first: 'Quick start',
  },

  {
    kind: 'documentation',
    name: 'README on a code host: file table, repository sidebar, heading anchors',
    html: doc('acme/tiny-queue: A small job queue', `<header class="site-header"><a href="/">CodeHost</a> <a href="/explore">Explore</a> <a href="/login">Sign in</a></header>
      <div class="repository-content"><div class="file-navigation"><a href="/acme/tiny-queue/branches">3 branches</a> <a href="/acme/tiny-queue/tags">12 tags</a></div>
      <table class="files"><tr><td><a href="/acme/tiny-queue/tree/main/src">src</a></td><td><a href="/c/1">Add retries</a></td><td>2 days ago</td></tr><tr><td><a href="/acme/tiny-queue/blob/main/package.json">package.json</a></td><td><a href="/c/2">Release 1.4.0</a></td><td>5 days ago</td></tr></table>
      <div id="readme"><article class="markdown-body entry-content"><h1><a class="anchor" href="#tiny-queue" aria-hidden="true"><svg class="octicon"></svg></a>tiny-queue</h1>
      <p>A job queue in 300 lines, backed by SQLite, with retries and delayed jobs, for apps that do not want to run Redis.</p>
      <h2><a class="anchor" href="#usage"><svg></svg></a>Usage</h2><pre><code>const q = new Queue('jobs.db');
q.add({ email: 'a@b.c' });</code></pre>
      <h2><a class="anchor" href="#license"><svg></svg></a>License</h2><p>MIT</p></article></div></div>
      <div class="repository-sidebar"><h2>About</h2><p>A small job queue</p><h2>Releases 12</h2><a href="/acme/tiny-queue/releases">v1.4.0 Latest</a><h2>Languages</h2><ul><li>TypeScript 98.1%</li><li>Shell 1.9%</li></ul></div>`),
    in: ['tiny-queue', 'A job queue in 300 lines, backed by SQLite', "q.add({ email: 'a@b.c' });", 'Usage', 'MIT'],
    out: ['Sign in', '3 branches', 'package.json', 'Release 1.4.0', '5 days ago', 'v1.4.0 Latest', 'TypeScript 98.1%'],
    md: ['# tiny-queue\n\nA job queue in 300 lines', '## Usage\n\n```\nconst q', '## License\n\nMIT'],
    first: 'tiny-queue',
  },

  // ------------------------------------------------------------ forums
  {
    kind: 'forum',
    name: 'a thread: the opening post and the replies are the content',
    html: doc('Boiler makes a knocking noise - Home Repair Forum', `<div id="header"><a href="/">Home Repair Forum</a><div class="navbar"><a href="/forums">Forums</a> <a href="/search">Search</a> <a href="/register">Register</a></div></div>
      <div class="breadcrumbs"><a href="/">Forum</a> › <a href="/heating">Heating</a></div>
      <h1 class="topic-title">Boiler makes a knocking noise</h1>
      <div class="topic"><div class="post" id="p1"><div class="postprofile"><span class="username">pete_r</span><span>Joined: May 2019</span><span>Posts: 231</span></div>
        <div class="postbody"><div class="content">Since last week our gas boiler makes a loud knocking noise every time the heating starts, and it stops after a minute or so. It is about ten years old. Any ideas what it could be?</div></div></div>
      <div class="post" id="p2"><div class="postprofile"><span class="username">heatingguy</span><span>Joined: Jan 2012</span><span>Posts: 5120</span></div>
        <div class="postbody"><div class="content">That is usually kettling, caused by limescale on the heat exchanger. A descaler in the system often fixes it, but at ten years old I would have an engineer look at the pump too.</div></div></div>
      <div class="post" id="p3"><div class="postprofile"><span class="username">pete_r</span><span>Joined: May 2019</span><span>Posts: 231</span></div>
        <div class="postbody"><div class="content">Thanks, the engineer came today, flushed the system and replaced the pump. Quiet as a mouse now.</div></div></div></div>
      <div class="action-bar"><a class="button" href="/reply">Post Reply</a></div>
      <div class="similar-topics"><h3>Similar topics</h3><ul><li><a href="/t/1">Radiator cold at the top</a></li><li><a href="/t/2">Boiler pressure keeps dropping</a></li></ul></div>
      <div id="footer">Powered by forum software © 2025</div>`),
    in: ['Boiler makes a knocking noise', 'every time the heating starts', 'usually kettling, caused by limescale', 'Quiet as a mouse now.'],
    out: ['Register', 'Heating', 'Joined:', 'Posts: 231', 'Post Reply', 'Similar topics', 'Radiator cold', 'Powered by'],
    first: 'Boiler makes a knocking noise',
  },
  {
    kind: 'forum',
    name: 'a question and its answers (Q&A site), with a sidebar of hot questions',
    html: doc('How do I undo the last commit? - Q&A', `<header class="top-bar"><a href="/">Q&amp;A</a> <a href="/questions">Questions</a> <a href="/tags">Tags</a> <a href="/users">Users</a></header>
      <div id="content"><div id="question-header"><h1><a href="/q/1" class="question-hyperlink">How do I undo the last commit?</a></h1></div>
      <div id="mainbar"><div class="question"><div class="votecell">42</div><div class="postcell"><div class="s-prose"><p>I committed the wrong files to my local repository, but I have not pushed anything yet. How can I undo that commit and keep my changes?</p></div>
        <div class="comments"><ul><li class="comment">Did you push already? – alice</li></ul></div></div></div>
      <h2 class="answers-header">2 Answers</h2>
      <div class="answer"><div class="votecell">87</div><div class="answercell"><div class="s-prose"><p>Use a soft reset, which moves the branch back by one commit and leaves your changes staged:</p><pre><code>git reset --soft HEAD~1</code></pre></div></div></div>
      <div class="answer"><div class="votecell">12</div><div class="answercell"><div class="s-prose"><p>If you only want to change the commit message or add a forgotten file, amend the commit instead of resetting it.</p></div></div></div></div>
      <div id="sidebar"><div class="module"><h4>Hot Network Questions</h4><ul><li><a href="/q/9">Why is the sky dark at night if there are infinite stars?</a></li><li><a href="/q/8">Is it rude to reply to all?</a></li></ul></div></div></div>`),
    in: ['How do I undo the last commit?', 'I committed the wrong files', 'Use a soft reset', 'git reset --soft HEAD~1', 'amend the commit instead'],
    out: ['Users', 'Hot Network Questions', 'Why is the sky dark', 'Did you push already?'],
    first: 'How do I undo the last commit?',
  },

  // ------------------------------------------------------------ products
  {
    kind: 'product',
    name: 'semantic product page: breadcrumbs, price, buy button, description, specs, also-bought list',
    html: doc('Trail running shoe X2 | Shop', `${SITE_NAV}
      <nav aria-label="breadcrumb" class="breadcrumbs"><ol><li><a href="/">Shop</a></li><li><a href="/shoes">Shoes</a></li><li>Trail running shoe X2</li></ol></nav>
      <main><div class="product"><div class="gallery"><img src="/x2-1.jpg" alt="X2 side view"><img src="/x2-2.jpg" alt="X2 sole"></div>
      <div class="product-info"><h1>Trail running shoe X2</h1><p class="price">€129.00</p><form class="add-to-cart"><select><option>42</option></select><button>Add to cart</button></form>
      <div class="product-description"><p>The X2 is a light trail shoe with a grippy sole and a wide toe box, made for long runs on rough ground in any weather.</p><p>The upper is recycled mesh, and the lugs are 5 mm deep.</p></div>
      <table class="specs"><tr><th>Weight</th><td>280 g</td></tr><tr><th>Drop</th><td>6 mm</td></tr></table></div></div>
      <section class="also-bought"><h2>Customers also bought</h2><ul><li><a href="/socks">Merino running socks</a> €19</li><li><a href="/vest">Hydration vest</a> €89</li></ul></section></main>${SITE_FOOTER}`),
    in: ['Trail running shoe X2', 'a light trail shoe with a grippy sole', 'recycled mesh', '280 g'],
    out: ['Shoes', 'Add to cart', 'Customers also bought', 'Merino running socks', 'Pricing'],
    md: ['# Trail running shoe X2', '| Weight | 280 g |'],
    first: 'Trail running shoe X2',
  },
  {
    kind: 'product',
    name: 'shop theme div soup: product title, rte description with a feature list, reviews widget',
    html: doc('Ceramic pour-over coffee dripper – Kiln & Co', `<div class="announcement-bar">Free shipping on orders over $50</div>
      <div class="header-wrapper"><a href="/" class="site-header__logo">Kiln &amp; Co</a><div class="site-nav"><a href="/collections/all">Shop all</a> <a href="/pages/about">Our studio</a></div></div>
      <div class="product-single"><div class="product-single__meta"><h1 class="product-single__title">Ceramic pour-over coffee dripper</h1><span class="product-price">$38.00</span><button class="btn product-form__cart-submit">Add to cart</button></div>
      <div class="product-single__description rte"><p>Hand-thrown in our studio from stoneware clay, this dripper holds its heat and brews an even, clear cup.</p><ul><li>Fits standard #2 paper filters</li><li>Dishwasher safe</li><li>Each piece is unique</li></ul></div></div>
      <div class="product-reviews"><h2>Customer reviews</h2><div class="review"><p>Lovely object, makes great coffee, though it arrived a week later than promised.</p></div></div>
      <div class="site-footer"><a href="/policies/refund-policy">Refund policy</a></div>`),
    in: ['Ceramic pour-over coffee dripper', 'Hand-thrown in our studio', 'Fits standard #2 paper filters', 'Dishwasher safe'],
    out: ['Free shipping', 'Shop all', 'Add to cart', 'Customer reviews', 'Lovely object', 'Refund policy'],
    md: ['# Ceramic pour-over coffee dripper', '- Fits standard #2 paper filters\n- Dishwasher safe'],
    first: 'Ceramic pour-over coffee dripper',
  },

  // ------------------------------------------------------------ listings (no single article: main_content is the listing)
  {
    kind: 'listing',
    name: 'a blog index of teasers: the listing itself, without "Read more" links',
    html: doc('Blog | Example', `${SITE_NAV}<main><h1>Blog</h1>
      <article class="post-preview"><h2><a href="/p/1">Shipping faster with smaller pull requests</a></h2><p>Small pull requests get reviewed sooner, break less, and are easier to revert, so we now cap ours at 300 lines.</p><a href="/p/1" class="more">Read more</a></article>
      <article class="post-preview"><h2><a href="/p/2">What we learned from our first outage</a></h2><p>On a Monday in May our database ran out of disk, and the status page, hosted on the same database, went down with it.</p><a href="/p/2" class="more">Read more</a></article>
      <article class="post-preview"><h2><a href="/p/3">Hiring our first designer</a></h2><p>For two years engineers designed every screen, and it showed, so last autumn we hired a designer, and then a second one.</p><a href="/p/3" class="more">Read more</a></article>
      <article class="post-preview"><h2><a href="/p/4">Why we still write a changelog by hand</a></h2><p>Generated changelogs list commits, but users want to know what changed for them, which takes a human to write.</p><a href="/p/4" class="more">Read more</a></article>
      <nav class="pager"><a href="/blog?page=2">Older posts</a></nav></main>${SITE_FOOTER}`),
    in: ['Blog', 'Shipping faster with smaller pull requests', 'Small pull requests get reviewed sooner', 'What we learned from our first outage', 'Hiring our first designer', 'Why we still write a changelog by hand', 'takes a human to write'],
    out: ['Read more', 'Older posts', 'Pricing', 'All rights reserved'],
    md: ['# Blog', '## [Shipping faster with smaller pull requests](https://example.com/p/1)'],
    first: 'Blog',
  },
  {
    kind: 'listing',
    name: 'a product grid of short items: the grid itself (names and prices), without filters and chrome',
    html: doc('Lamps | Lumen Store', `${SITE_NAV}<div class="page"><aside class="filters"><h3>Filter by</h3><label><input type="checkbox"> Brass</label><label><input type="checkbox"> Under $100</label><a href="/lamps?color=black">Black</a><a href="/lamps?color=white">White</a></aside>
      <div class="category"><h1>Lamps</h1><p class="count">4 products</p><ul class="products">
      <li class="product-card"><a href="/p/arc"><img src="/arc.jpg" alt=""><h3>Arc floor lamp</h3></a><span class="price">$249</span></li>
      <li class="product-card"><a href="/p/mushroom"><img src="/m.jpg" alt=""><h3>Mushroom table lamp</h3></a><span class="price">$89</span></li>
      <li class="product-card"><a href="/p/clamp"><img src="/c.jpg" alt=""><h3>Clamp desk lamp</h3></a><span class="price">$59</span></li>
      <li class="product-card"><a href="/p/paper"><img src="/p.jpg" alt=""><h3>Paper pendant lamp</h3></a><span class="price">$45</span></li></ul></div></div>${SITE_FOOTER}`),
    in: ['Lamps', 'Arc floor lamp', '$249', 'Paper pendant lamp', '$45'],
    out: ['Filter by', 'Under $100', 'Pricing', 'All rights reserved'],
    md: ['# Lamps', '### [Arc floor lamp](https://example.com/p/arc)\n\n  $249'],
    first: 'Lamps',
  },

  {
    kind: 'listing',
    name: 'search results: the results (titles and snippets), without the search form, filters and pager',
    html: doc('trail shoes - Search', `<header>${SITE_NAV}<form role="search" action="/search"><input name="q" value="trail shoes"><button>Search</button></form></header>
      <div class="search-tools"><a href="/search?q=trail+shoes&amp;t=images">Images</a> <a href="/search?q=trail+shoes&amp;t=news">News</a> <span>About 1,240 results</span></div>
      <main><ol class="results">
      <li class="result"><h3><a href="https://a.example/best-trail-shoes">The best trail running shoes of 2025, tested</a></h3><cite>a.example</cite><p>We ran 600 miles in 24 pairs of trail shoes, on mud, rock and snow, to find the best grip, comfort and durability for every budget.</p></li>
      <li class="result"><h3><a href="https://b.example/guide">How to choose trail shoes: a beginner's guide</a></h3><cite>b.example</cite><p>Lug depth, drop, cushioning and fit explained, with advice on when a road shoe is good enough and when it is not.</p></li>
      <li class="result"><h3><a href="https://c.example/forum/t/77">Trail shoes for wide feet? - Runners forum</a></h3><cite>c.example</cite><p>I have wide feet and every trail shoe I try pinches at the toes, any recommendations from people with the same problem?</p></li>
      </ol><nav class="pager"><a href="/search?q=trail+shoes&amp;p=2">Next page</a></nav></main>${SITE_FOOTER}`),
    in: ['The best trail running shoes of 2025, tested', 'We ran 600 miles in 24 pairs', "How to choose trail shoes: a beginner's guide", 'every trail shoe I try pinches at the toes'],
    out: ['Images', 'About 1,240 results', 'Next page', 'Pricing'],
    md: ["### [The best trail running shoes of 2025, tested](https://a.example/best-trail-shoes)"],
  },

  // ------------------------------------------------------------ languages
  {
    kind: 'German',
    name: 'news article with a consent layer, nav, "Meistgelesen" aside and Impressum footer',
    html: doc('Bahn kündigt schnellere Verbindung Hamburg–Berlin an | Nordkurier', `<div class="cmp-consent-layer"><p>Wir verwenden Cookies und ähnliche Technologien, um Inhalte zu personalisieren, Werbung anzuzeigen und die Zugriffe auf unsere Website zu analysieren. Mit „Zustimmen“ erklären Sie sich damit einverstanden.</p><button>Zustimmen</button><button>Einstellungen</button></div>
      <header><a href="/" class="logo">Nordkurier</a><nav><a href="/">Startseite</a> <a href="/politik">Politik</a> <a href="/wirtschaft">Wirtschaft</a> <a href="/sport">Sport</a></nav></header>
      <main><article><h1>Bahn kündigt schnellere Verbindung Hamburg–Berlin an</h1>
      <p>Die Deutsche Bahn will die Fahrzeit zwischen Hamburg und Berlin ab dem kommenden Jahr auf unter eineinhalb Stunden senken. Dafür werden auf der Strecke zusätzliche Überholgleise gebaut.</p>
      <p>Fahrgastverbände begrüßten die Pläne, kritisierten aber, dass die Bauarbeiten über Monate zu Umleitungen und Zugausfällen führen würden.</p>
      <p>Ein Sprecher des Verkehrsministeriums sagte, die Finanzierung sei gesichert. Die ersten Züge sollen im Dezember fahren.</p></article>
      <aside><h2>Meistgelesen</h2><ul><li><a href="/a">Neues Freibad öffnet im Juni</a></li><li><a href="/b">Stau auf der A7 nach Unfall</a></li></ul></aside></main>
      <footer><a href="/impressum">Impressum</a> <a href="/datenschutz">Datenschutz</a></footer>`, 'lang="de"'),
    in: ['Bahn kündigt schnellere Verbindung Hamburg–Berlin an', 'auf unter eineinhalb Stunden senken', 'Fahrgastverbände begrüßten die Pläne', 'Die ersten Züge sollen im Dezember fahren.'],
    out: ['Wir verwenden Cookies', 'Zustimmen', 'Startseite', 'Wirtschaft', 'Meistgelesen', 'Neues Freibad', 'Impressum', 'Datenschutz'],
    md: ['# Bahn kündigt schnellere Verbindung Hamburg–Berlin an\n\nDie Deutsche Bahn'],
    first: 'Bahn kündigt schnellere Verbindung Hamburg–Berlin an',
  },
  {
    kind: 'Russian',
    name: 'div-soup news article with a "read also" block and a menu',
    html: doc('В Москве открылся новый участок метро — Городские новости', `<div class="header"><a class="logo" href="/">Городские новости</a><ul class="menu"><li><a href="/">Главная</a></li><li><a href="/news">Новости</a></li><li><a href="/sport">Спорт</a></li><li><a href="/culture">Культура</a></li></ul></div>
      <div class="layout"><div class="article"><h1 class="article__title">В Москве открылся новый участок метро</h1><div class="article__date">12 октября 2024, 10:15</div>
      <div class="article__text"><p>В субботу в Москве открылся первый участок новой линии метро, который соединил северо-западные районы города с центром. По словам мэра, поездка до центра теперь займёт около двадцати минут.</p>
      <p>Строительство участка длиной восемь километров заняло четыре года. На линии построено пять станций, две из них оформлены в стиле советского модернизма.</p>
      <div class="read-also"><span>Читайте также:</span> <a href="/n/2">Пассажиропоток метро вырос на десять процентов</a></div>
      <p>Жители близлежащих районов отмечают, что раньше им приходилось добираться до ближайшей станции на автобусе, а в часы пик дорога занимала больше часа.</p></div></div>
      <div class="column-right"><div class="block-popular"><div class="block-title">Популярное</div><a href="/n/5">Погода на выходные: в Москве похолодает</a></div></div></div>
      <div class="footer">© 2024 Городские новости. Все права защищены.</div>`, 'lang="ru"'),
    in: ['В Москве открылся новый участок метро', 'соединил северо-западные районы города с центром', 'Строительство участка длиной восемь километров', 'в часы пик дорога занимала больше часа'],
    out: ['Главная', 'Культура', '12 октября 2024', 'Читайте также', 'Пассажиропоток метро', 'Популярное', 'Погода на выходные', 'Все права защищены'],
    md: ['# В Москве открылся новый участок метро'],
    first: 'В Москве открылся новый участок метро',
  },
  {
    kind: 'Chinese',
    name: 'news article with a related-reading list and a copyright footer',
    html: doc('我市新建三座公园今日正式开放_城市日报', `<div class="top-nav"><a href="/">首页</a> <a href="/news">新闻</a> <a href="/sports">体育</a> <a href="/finance">财经</a></div>
      <div class="main"><div class="article-content"><h1>我市新建三座公园今日正式开放</h1><div class="info"><span class="time">2024-05-18 09:30</span> <span class="source">来源：城市日报</span></div>
      <p>经过两年的建设，位于城市东部的三座新公园今天上午正式向市民开放。公园总面积超过四十公顷，设有步行道、自行车道和儿童游乐区。</p>
      <p>市园林局负责人介绍，新公园在设计时充分考虑了周边居民的需求，保留了原有的湿地和树林，并新种植了两万多棵树木。</p>
      <p>不少市民一早就来到公园散步。家住附近的王女士说：“以前周末只能去市中心，现在走十分钟就到了。”</p></div>
      <div class="related-news"><h3>相关阅读</h3><ul><li><a href="/n/1">市中心将新增五个停车场</a></li><li><a href="/n/2">地铁三号线延长线开工</a></li></ul></div></div>
      <div class="footer">版权所有 © 2024 城市日报 京ICP备12345678号</div>`, 'lang="zh-CN"'),
    in: ['我市新建三座公园今日正式开放', '三座新公园今天上午正式向市民开放', '保留了原有的湿地和树林', '现在走十分钟就到了'],
    out: ['首页', '财经', '2024-05-18', '来源', '相关阅读', '市中心将新增五个停车场', '版权所有'],
    md: ['# 我市新建三座公园今日正式开放'],
    first: '我市新建三座公园今日正式开放',
  },
  {
    kind: 'Arabic',
    name: 'right-to-left article with a share bar and nav',
    html: doc('افتتاح أكبر مكتبة عامة في المدينة - أخبار المدينة', `<header><nav><a href="/">الرئيسية</a> <a href="/news">أخبار</a> <a href="/sport">رياضة</a> <a href="/economy">اقتصاد</a></nav></header>
      <main><article><h1>افتتاح أكبر مكتبة عامة في المدينة</h1>
      <div class="share-buttons"><a href="https://facebook.com/share">شارك على فيسبوك</a> <a href="https://x.com/share">شارك على إكس</a></div>
      <p>افتتحت بلدية المدينة يوم الأحد أكبر مكتبة عامة في تاريخها، وتضم أكثر من مئتي ألف كتاب باللغات العربية والإنجليزية والفرنسية.</p>
      <p>وقال مدير المكتبة إن المبنى الجديد يحتوي على قاعات للدراسة ومختبر رقمي مفتوح للطلاب مجاناً، إضافة إلى قسم خاص بكتب الأطفال.</p>
      <p>ومن المتوقع أن يستقبل المبنى نحو ألف زائر يومياً خلال الأشهر الأولى من افتتاحه.</p></article></main>
      <footer><p>جميع الحقوق محفوظة © 2024 أخبار المدينة</p></footer>`, 'lang="ar" dir="rtl"'),
    in: ['افتتاح أكبر مكتبة عامة في المدينة', 'وتضم أكثر من مئتي ألف كتاب', 'قاعات للدراسة ومختبر رقمي', 'نحو ألف زائر يومياً'],
    out: ['الرئيسية', 'رياضة', 'شارك على فيسبوك', 'جميع الحقوق محفوظة'],
    md: ['# افتتاح أكبر مكتبة عامة في المدينة'],
    first: 'افتتاح أكبر مكتبة عامة في المدينة',
  },
  {
    kind: 'French',
    name: 'short article in <main> without <article>, with a newsletter block and a "lire aussi" link',
    html: doc('La ville plante 5 000 arbres cet hiver', `${SITE_NAV}<main><h1>La ville plante 5 000 arbres cet hiver</h1>
      <p>La municipalité a lancé lundi une campagne de plantation de 5 000 arbres, principalement dans les cours d'école et le long des boulevards.</p>
      <p class="lire-aussi"><a href="/n/3">Lire aussi : Les îlots de chaleur en ville, comment les réduire ?</a></p>
      <p>Les essences ont été choisies pour résister à la sécheresse, comme le micocoulier et le chêne vert.</p>
      <div class="newsletter"><p>Recevez chaque matin l'essentiel de l'actualité locale.</p><input type="email"><button>Je m'inscris</button></div></main>${SITE_FOOTER}`, 'lang="fr"'),
    in: ['La ville plante 5 000 arbres cet hiver', 'une campagne de plantation de 5 000 arbres', 'résister à la sécheresse'],
    out: ['Lire aussi', "Recevez chaque matin", 'Pricing', 'All rights reserved'],
    first: 'La ville plante 5 000 arbres cet hiver',
  },

  // ------------------------------------------------------------ other kinds
  {
    kind: 'recipe',
    name: 'ingredients and steps as lists, with print and rating widgets',
    html: doc('Lemon pancakes', `${SITE_NAV}<main><article><h1>Lemon pancakes</h1>
      <p>These pancakes are light and fluffy, with lemon zest in the batter, and they take twenty minutes from bowl to plate.</p>
      <div class="recipe-actions"><a href="/print/lemon" class="print">Print recipe</a> <a href="#rate" class="rate">Rate this recipe</a></div>
      <h2>Ingredients</h2><ul class="ingredients"><li>200 g flour</li><li>2 eggs</li><li>300 ml milk</li><li>Zest of one lemon</li></ul>
      <h2>Method</h2><ol class="steps"><li>Whisk the flour, eggs and milk into a smooth batter.</li><li>Stir in the zest and rest for ten minutes.</li><li>Fry small ladlefuls in a hot buttered pan.</li></ol>
      </article></main>${SITE_FOOTER}`),
    in: ['Lemon pancakes', 'light and fluffy', '200 g flour', 'Zest of one lemon', 'Whisk the flour, eggs and milk', 'Fry small ladlefuls'],
    out: ['Print recipe', 'Rate this recipe', 'Pricing'],
    md: ['# Lemon pancakes', '## Ingredients\n\n- 200 g flour\n- 2 eggs', '## Method\n\n1. Whisk the flour'],
    first: 'Lemon pancakes',
  },
  {
    kind: 'encyclopedia',
    name: 'wiki article: infobox, table of contents, edit links, references and a navbox',
    html: doc('Common swift - Wikipedia', `<div id="mw-navigation"><div id="mw-panel"><a href="/wiki/Main_Page">Main page</a> <a href="/wiki/Special:Random">Random article</a> <a href="/wiki/Help:Contents">Help</a></div></div>
      <div id="content" class="mw-body" role="main"><h1 id="firstHeading" class="firstHeading">Common swift</h1><div id="siteSub" class="noprint">From Wikipedia, the free encyclopedia</div>
      <div id="bodyContent"><div id="mw-content-text"><div class="mw-parser-output">
      <table class="infobox biota"><tr><th colspan="2">Common swift</th></tr><tr><td>Kingdom:</td><td>Animalia</td></tr><tr><td>Order:</td><td>Apodiformes</td></tr></table>
      <p>The <b>common swift</b> (<i>Apus apus</i>) is a medium-sized bird, superficially similar to the barn swallow but not closely related, which spends most of its life in the air.<sup class="reference"><a href="#cite_note-1">[1]</a></sup></p>
      <div id="toc" class="toc"><div class="toctitle"><h2>Contents</h2></div><ul><li><a href="#Behaviour">1 Behaviour</a></li><li><a href="#References">2 References</a></li></ul></div>
      <h2><span class="mw-headline" id="Behaviour">Behaviour</span><span class="mw-editsection">[<a href="/w/index.php?action=edit&amp;section=1">edit</a>]</span></h2>
      <p>Swifts eat, drink, mate and even sleep on the wing, and a young swift may not land for two or three years after leaving the nest.</p>
      <h2><span class="mw-headline" id="References">References</span></h2><ol class="references"><li id="cite_note-1"><span class="reference-text">Hedenström, A. et al. (2016). Annual 10-month aerial life phase in the common swift. Current Biology.</span></li></ol>
      <div class="navbox"><table><tr><th>Birds of Europe</th></tr><tr><td><a href="/wiki/Robin">Robin</a> · <a href="/wiki/Wren">Wren</a> · <a href="/wiki/Blackbird">Blackbird</a> · <a href="/wiki/Starling">Starling</a></td></tr></table></div>
      </div></div></div></div>
      <div id="footer"><ul><li>This page was last edited on 1 March 2025.</li><li>Text is available under the Creative Commons Attribution-ShareAlike License.</li></ul></div>`),
    in: ['Common swift', 'is a medium-sized bird', 'Behaviour', 'may not land for two or three years'],
    out: ['Main page', 'Random article', 'From Wikipedia', '[edit]', 'Contents', 'Birds of Europe', 'Blackbird', 'last edited on', 'Creative Commons'],
    md: ['# Common swift', '## Behaviour', '**common swift**'],
    first: 'Common swift',
  },
  {
    kind: 'job posting',
    name: 'title, description, requirements, apply button and similar jobs',
    html: doc('Backend engineer (Go) at Parcelly | Jobs', `${SITE_NAV}<main><div class="job"><h1>Backend engineer (Go)</h1><div class="job-meta">Parcelly · Berlin or remote · Full time</div>
      <div class="job-description"><p>Parcelly moves 40,000 parcels a day between small shops and their customers, and our routing engine is written in Go.</p>
      <h2>What you will do</h2><ul><li>Design and run services that plan delivery routes</li><li>Keep the p99 latency of the routing API under 50 ms</li></ul>
      <h2>What we look for</h2><ul><li>Three years of backend experience</li><li>Comfort with PostgreSQL</li></ul></div>
      <a class="button apply" href="/apply/77">Apply now</a></div>
      <section class="similar-jobs"><h2>Similar jobs</h2><ul><li><a href="/j/1">Site reliability engineer at Parcelly</a></li><li><a href="/j/2">Data engineer at Freightly</a></li></ul></section></main>${SITE_FOOTER}`),
    in: ['Backend engineer (Go)', 'moves 40,000 parcels a day', 'What you will do', 'under 50 ms', 'Comfort with PostgreSQL'],
    out: ['Apply now', 'Similar jobs', 'Site reliability engineer', 'Pricing'],
    md: ['# Backend engineer (Go)', '## What we look for\n\n- Three years of backend experience'],
    first: 'Backend engineer (Go)',
  },
  // ------------------------------------------------ from the development sets (benchmarks/extract/NOTES.md)
  {
    kind: 'documentation',
    name: 'section ids made from their headings name the subject, not a share bar or comments (Sphinx)',
    html: doc('Shared mutable history — Evolve docs', `<div class="related"><a href="/">Evolve</a> » <a href="/guide">User guide</a></div>
      <div class="content"><div class="section" id="shared-mutable-history"><h1>Shared mutable history<a class="headerlink" href="#shared-mutable-history">¶</a></h1>
      <p>Once you have mastered mutable history in a single repository, you can move up to sharing it between repositories.</p>
      <div class="section" id="sharing-with-a-single-developer"><h2>Sharing with a single developer<a class="headerlink" href="#sharing-with-a-single-developer">¶</a></h2>
      <p>The key to shared mutable history is to keep your changesets in the draft phase as you pass them around.</p></div>
      <div class="section" id="comments-in-commit-messages"><h2>Comments in commit messages<a class="headerlink" href="#comments-in-commit-messages">¶</a></h2>
      <p>Write why the change was made, not only what it does, so that the reviewers of an amended changeset can follow it.</p></div>
      </div></div><div class="share-buttons"><a href="/share/twitter">Share on Twitter</a></div>`),
    in: ['Shared mutable history', 'Sharing with a single developer', 'keep your changesets in the draft phase', 'Comments in commit messages', 'not only what it does'],
    out: ['User guide', 'Share on Twitter', '¶'],
    first: 'Shared mutable history',
  },
  {
    kind: 'div soup',
    name: 'an old page without <html> or <body>: top-level paragraphs share one container',
    html: `<title>Central Arcata Traffic Task Force</title>
      <em>Final draft</em><h1>Central Arcata Traffic Task Force</h1><h2>Introduction</h2>
      <p>In 1997, recurring slope stability problems caused the city to close a portion of a collector street to traffic.</p>
      <p>Following several public hearings, the city council convened a nine-member task force to develop a traffic plan.</p>
      <table border="1"><tr><td><strong>Snapshot</strong><br>Population 16,000, a university town on the north coast.</td></tr></table>
      <blockquote>"Fourteenth Street carried only 1700 vehicles a day, so changes on adjacent streets were insignificant."</blockquote>
      <p>The task force met for nine months and produced a final report recommending a series of traffic calming projects.</p>`,
    in: ['Central Arcata Traffic Task Force', 'recurring slope stability problems', 'nine-member task force', 'Fourteenth Street carried', 'a series of traffic calming projects'],
    out: [],
    first: 'Central Arcata Traffic Task Force',
  },
];

const main = (html: string): string => mainContentExtractor.extract(page(html, URL), {}) as string;
const md = (html: string): string => markdownExtractor.extract(page(html, URL), {}) as string;
const pageText = (html: string): string => (textContentExtractor.extract(page(html, URL), {}) as string).replace(/\s+/g, ' ');
const flat = (s: string): string => s.replace(/\s+/g, ' ');
/** Markdown escapes some characters; compare without the backslashes. */
const unescapeMd = (s: string): string => s.replace(/\\([\\`*_[\]<#>|.+=-])/g, '$1');
const MD_SYNTAX = /[#*`|[\]]/;

describe('main_content and markdown on small pages of many kinds', () => {
  it('has at least 30 cases, covering every kind the issue names', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    const kinds = new Set(CASES.map((c) => c.kind));
    for (const k of ['semantic', 'div soup', 'one paragraph', 'documentation', 'forum', 'product', 'listing', 'German', 'Russian', 'Chinese', 'Arabic']) expect(kinds).toContain(k);
  });

  it.each(CASES.map((c) => [`${c.kind}: ${c.name}`, c] as const))('%s', (_label, c) => {
    // Every string the case names is on the page (a check cannot pass by a typo): text, or markup for scripts and styles.
    const all = pageText(c.html) + ' ' + c.html;
    for (const s of [...c.in, ...c.out]) expect(all, `"${s}" is not on the page`).toContain(s);

    // All the problems of a page at once.
    const problems: string[] = [];
    const text = main(c.html);
    const flatText = flat(text);
    for (const s of c.in) if (!flatText.includes(s)) problems.push(`main_content lacks "${s}"`);
    for (const s of c.out) if (flatText.includes(s)) problems.push(`main_content holds "${s}"`);
    if (c.first !== undefined && text.split('\n')[0] !== c.first) problems.push(`main_content starts with "${text.split('\n')[0]}", not "${c.first}"`);

    const markdown = md(c.html);
    const plain = flat(unescapeMd(markdown));
    for (const s of c.in) if (!MD_SYNTAX.test(s) && !plain.includes(s)) problems.push(`markdown lacks "${s}"`);
    for (const s of c.out) if (plain.includes(s)) problems.push(`markdown holds "${s}"`);
    for (const s of c.md ?? []) if (!markdown.includes(s)) problems.push(`markdown lacks ${JSON.stringify(s)}`);
    if (problems.length > 0) expect.fail(`${problems.join('\n')}\n\nmain_content:\n${text}\n\nmarkdown:\n${markdown}\n`);
  });
});

describe('the article body beside the main content', () => {
  it('holds the main content without the headline and figure captions', () => {
    const c = CASES[2]!;
    const mc = mainContent(page(c.html, URL));
    expect(mc.headline).toBe('A lighthouse keeper retires after 40 years');
    expect(mc.text.startsWith(`${mc.headline}\n\n`)).toBe(true);
    expect(mc.articleBody).toContain('Every evening since 1985');
    expect(mc.articleBody).not.toContain('A lighthouse keeper retires');
    expect(mc.articleBody).not.toContain('The Cape Rock lighthouse at dusk');
  });
});
