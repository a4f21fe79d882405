/**
 * main_content: the text of the page's main content, led by its headline,
 * blocks as line breaks. Our own algorithm over the shared DOM (read-only,
 * no re-parse, iterative):
 *
 * 1. Index: one pass numbers every element of <body> (the body included)
 *    and aggregates text length, link-text length, commas, and
 *    <p>/<img>/<li>/<time> counts bottom-up. Never-text elements (script,
 *    style, nav, aside, footer, form controls, ...), hidden ones (hidden,
 *    display:none, utility classes like sr-only / d-none, hover cards,
 *    no-print chrome), cookie/consent banners and modal dialogs are dropped
 *    from the index; figure captions too (rendered, never scored). On the
 *    first attempt, "unlikely" ones (class/id like comment, sidebar,
 *    related, share, promo, ... unless also like article/content/body; ARIA
 *    navigation/complementary/... roles) and the page's banner (a <header>
 *    outside any article/main/section) are dropped as well; header-like
 *    ones (header, banner, hero, cover) keep their headings in reach for
 *    the headline.
 * 2. Score: every text block (an element's own inline text >= 25 chars)
 *    scores 1 + commas + length/100 (max 3), added to its container and
 *    decayed over 4 more ancestors (readability's scheme); a container starts
 *    from a tag base plus class/id weight (+25 article/content/entry/post/
 *    story/itemprop=articleBody..., -25 comment/footer/share/sidebar/byline/
 *    caption...) and ends multiplied by (1 - link density). A page without
 *    any such block (a short page) is scored again counting every block; a
 *    page without any block at all is taken whole.
 * 3. Choose: the best container; a shared ancestor of several strong
 *    candidates of comparable length (a split article, not a teaser list)
 *    wins; climb while the parent scores higher or the container is an
 *    only child; take the parent of peers (posts of a thread: same tag,
 *    comparable length, few links); merge siblings that score well, are
 *    plain paragraphs or data tables. Never beyond <body>'s children.
 * 4. Headline: the first <h1> inside the container, else a heading inside
 *    it repeating the <title> or og:title, else before it the nearest such
 *    heading or the nearest <h1> (never a logo: a heading that is only a
 *    link home). It leads the text; the body is the rest.
 * 5. Prune while rendering: other headings repeating the title, the
 *    article's own <header>, bylines and author boxes, dates, share bars,
 *    tag lists, edit links, galleries, permalink anchors, short links
 *    standing alone ("Read more"), link-only paragraphs and blocks of
 *    mostly links, headings whose section was all pruned, and
 *    readability's conditional cleaning of lists, tables and divs (weight,
 *    image/paragraph ratio, link density) unless they hold most of the
 *    content. Data tables are kept, and so are the items of a list holding
 *    most of the content (a listing). When pruning would leave nothing,
 *    only the chrome goes.
 * 6. Fall back: when the elements hold < 200 chars (script-rendered pages),
 *    a JSON-LD articleBody (and its headline), if longer.
 *
 * Found on the development sets of other page kinds (benchmarks/extract/
 * NOTES.md, issue 28): a page without <body> gets an implied one, as in a
 * browser; the second look (unlikely parts allowed) still leaves readers'
 * comments out once the first found a post; a byline-like class never
 * prunes what holds most of the content; an id made from the element's own
 * heading (docs generators' section ids) is no hint; and prose siblings of
 * the container's tag (old pages' text in several layout tables) join it.
 *
 * `text` (main_content) is the headline, then the body with its figure
 * captions; `articleBody` is the body alone, without headline and captions,
 * which is what the Zyte article-extraction benchmark's ground truth holds
 * (its `articleBody` attribute) and what `npm run bench:extract` scores.
 * Generic rules only, no per-site ones: test/extractors/page-kinds.test.ts
 * holds small pages of many kinds (semantic, div soup, docs, forums,
 * products, listings, several languages) beside the benchmark's news pages.
 */
import type { Page } from '../sdk/scrape.js';
import { impliedBody, isElement, isHidden, isTextNode, structure, walkElements, type AnyNode, type Element } from '../sdk/dom.js';
import { parseJsonLd } from './schema-data-reader.js';
import { BLOCK_TAGS, NON_TEXT_TAGS, renderInto, TextBuilder } from '../sdk/text.js';

export interface MainContent {
  /** Where the text comes from: the page's elements, or (when they hold too little) a JSON-LD articleBody. */
  readonly source: 'dom' | 'json-ld' | 'none';
  /** The nodes making up the body, in document order (empty when nothing was found or the source is JSON-LD). */
  readonly nodes: readonly AnyNode[];
  /** Elements to leave out when rendering `nodes` (boilerplate inside the article, and the headline, which leads apart). */
  readonly skip: (el: Element) => boolean;
  /** The article's own heading, collapsed ("" when none was found). */
  readonly headline: string;
  /** Its level (1 for <h1>, ...; 1 when it comes from JSON-LD). */
  readonly headlineLevel: number;
  /** The main content as plain text (blocks as line breaks): the headline, a blank line, the body with its figure captions. */
  readonly text: string;
  /** The body alone, without the headline and figure captions: what an article-extraction ground truth calls articleBody. */
  readonly articleBody: string;
}

const EMPTY: MainContent = { source: 'none', nodes: [], skip: () => true, headline: '', headlineLevel: 1, text: '', articleBody: '' };
/** Below this many characters the page's elements hold no article (script-rendered pages); JSON-LD may. */
const MIN_DOM_TEXT = 200;

// Hints in class and id attributes.
const UNLIKELY = /-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|newsletter|subscribe|promo|share|sharing|cookie|modal|signup|outbrain|taboola|recirc|trending|most-?popular|navbar|nav-|-nav\b|masthead|toolbar/i;
const MAYBE = /and|article|body|column|content|main|shadow|story|entry|post-?text/i;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story/i;
const NEGATIVE = /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget|byline|author|caption|newsletter|subscribe/i;
// Who wrote it and when: bylines, dates, and the author boxes of forum posts and comments.
const BYLINE = /byline|author|dateline|writtenby|p-author|timestamp|published|updated-date|post-date|article-date|\bdate\b|\bmeta\b|credit|profile|user-?info|user-?details|username|signature/i;
const SHARE = /(\b|_|-)(share|sharing|sharedaddy|social|follow|newsletter|subscribe|related|recommend|read-?more|read-?also|see-?also|more-?stories|promo|advert|ad-container|ad-slot|adslot|ads\b)/i;
const CAPTION = /caption/i;
const TAGS = /credit|(\b|_|-)(tags?|tag-?list|keywords|categories)(\b|_|-)/i;
// Cookie and consent banners, whatever the page looks like: never content.
const CONSENT = /(?:^|[^a-z])cookies?(?:[^a-z]|$)|consent|gdpr|onetrust|didomi|cookiebot|usercentrics|(?:^|[^a-z])cmp(?:[^a-z]|$)/i;
// Taxonomy classes CMSs put on an article (WordPress: category-cookies, tag-gdpr): its subject, not its role.
const TAXONOMY_CLASS = /(?:^|\s)(?:category|tag|post_tag|term|topic|section)-\S*/gi;
// Utility classes that hide an element (CSS we cannot see), and hover cards.
const HIDDEN_CLASS = /(?:^|\s)(?:hidden|hide|d-none|sr-only|visually-?hidden|screen-reader-text|visuallyhidden|invisible|is-hidden|u-hidden)(?:\s|$)|tooltip|popover|rollover|hover-?card/i;
const GALLERY = /gallery|slideshow|carousel|slider|swiper|lightbox/i;
// Marked to be left out when printing (MediaWiki, Bootstrap, Foundation): page chrome, as printing keeps the content.
const NO_PRINT = /(?:^|\s)(?:noprint|no-print|d-print-none|hidden-print|print-hidden|hide-for-print|not-printable)(?:\s|$)/i;
// Edit links of wikis and blogs ("[edit]", "Edit this page").
const EDIT_LINK = /editsection|(?:^|[\s_-])edit-?(?:link|section|this|page)(?:$|[\s_-])/i;
const BAD_ROLES = new Set(['navigation', 'menu', 'menubar', 'complementary', 'banner', 'contentinfo', 'alert', 'alertdialog', 'dialog', 'search']);
/** Unlikely regions that may hold the headline: page and title headers, hero banners, covers. */
const BANNER_HINT = /header|banner|masthead|cover|hero/i;
/** A navigation, sidebar, dialog... role (anything unlikely but the banner role), which wins over a header-like class. */
function hasNonBannerRole(el: Element): boolean {
  const role = el.attribs.role?.trim().toLowerCase();
  return role !== undefined && role !== 'banner' && BAD_ROLES.has(role);
}
/** Elements whose <header> is their own; a <header> outside all of them is the page's banner. */
const SECTIONING = new Set(['article', 'main', 'section', 'aside', 'nav']);

/** Removed wherever they are: never article text. */
const DROP_TAGS: ReadonlySet<string> = new Set([...NON_TEXT_TAGS, 'nav', 'aside', 'footer', 'button', 'input', 'label', 'dialog', 'menu']);

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const COMMAS = /[\u002C\u060C\uFE50\uFE10\uFE11\u2E41\u2E34\u2E32\uFF0C\u3001]/g;

// Why an element is out of the index's aggregates.
const KEPT = 0;
/** Out, with everything under it. */
const DROPPED = 1;
/** Inside the page's banner <header>: out, but its headings may still be the headline. */
const BANNER = 2;
/** A <figcaption>: not scored, but rendered in main_content. */
const CAPTIONED = 3;

/** Per-element facts, indexed by document order. */
interface Index {
  readonly els: Element[];
  readonly parent: Int32Array;
  /** One past the last element of each subtree (elements are in document order). */
  readonly end: Int32Array;
  readonly pos: Map<Element, number>;
  /** KEPT, DROPPED, BANNER or CAPTIONED. */
  readonly dropped: Uint8Array;
  readonly textLen: Float64Array;
  readonly linkLen: Float64Array;
  readonly inlineLen: Float64Array;
  readonly inlineCommas: Float64Array;
  readonly commas: Float64Array;
  readonly pCount: Float64Array;
  readonly imgCount: Float64Array;
  readonly liCount: Float64Array;
  readonly timeCount: Float64Array;
  readonly hasBlockChild: Uint8Array;
  readonly weight: Float64Array;
}

/** Letters and digits only, lower case: how a slug and the words it was made from compare. */
function slugKey(s: string): string {
  let out = '';
  for (const ch of s.toLowerCase()) if (/[\p{L}\p{N}]/u.test(ch)) out += ch;
  return out;
}

const slugMemo = new WeakMap<Element, boolean>();

/**
 * An id made from the element's own heading ("sharing-with-a-single-developer"
 * on a section headed "Sharing with a single developer", as documentation
 * generators and Markdown renderers write them): it names the subject, not
 * the role, so it is no hint.
 */
function idIsHeadingSlug(el: Element, id: string): boolean {
  if (id.length < 6 || id.length > 200 || !(id.includes('-') || id.includes('_'))) return false;
  let r = slugMemo.get(el);
  if (r !== undefined) return r;
  let heading: Element | undefined = HEADINGS.has(el.name) ? el : undefined;
  if (heading === undefined) {
    for (const c of el.children) {
      if (isTextNode(c) && c.data.trim() !== '') break;
      if (!isElement(c)) continue;
      if (HEADINGS.has(c.name)) heading = c;
      break;
    }
  }
  r = false;
  if (heading !== undefined) {
    const key = slugKey(id);
    const text = slugKey(collapsedText(heading));
    r = key.length >= 5 && (text === key || (key.length >= 12 && text.startsWith(key)));
  }
  slugMemo.set(el, r);
  return r;
}

/** The element's id, unless it is made from its own heading. */
const hintId = (el: Element): string | undefined => {
  const i = el.attribs.id;
  return i === undefined || idIsHeadingSlug(el, i) ? undefined : i;
};

const hintOf = (el: Element): string => {
  const c = el.attribs.class;
  const i = hintId(el);
  if (c === undefined) return i ?? '';
  return i === undefined ? c : c + ' ' + i;
};

function classWeight(el: Element): number {
  let w = 0;
  // Schema.org microdata marks the article body explicitly.
  const ip = el.attribs.itemprop;
  if (ip !== undefined && /articlebody/i.test(ip)) w += 25;
  const c = el.attribs.class;
  if (c !== undefined && c.length < 500) {
    if (NEGATIVE.test(c)) w -= 25;
    if (POSITIVE.test(c)) w += 25;
  }
  const id = hintId(el);
  if (id !== undefined && id.length < 500) {
    if (NEGATIVE.test(id)) w -= 25;
    if (POSITIVE.test(id)) w += 25;
  }
  return w;
}

/** Hidden by a utility class, or left out of print (chrome). */
function hiddenByClass(el: Element): boolean {
  const c = el.attribs.class;
  return c !== undefined && c.length < 500 && (HIDDEN_CLASS.test(c) || NO_PRINT.test(c));
}

function isUnlikely(el: Element): boolean {
  const name = el.name;
  if (name === 'body' || name === 'html' || name === 'article' || name === 'main' || name === 'a') return false;
  const role = el.attribs.role;
  if (role !== undefined && BAD_ROLES.has(role.trim().toLowerCase())) return true;
  const hint = hintOf(el);
  if (hint === '' || hint.length > 500) return false;
  return UNLIKELY.test(hint) && !MAYBE.test(hint);
}

/** Readers' comments under a post (class or id like comments, disqus), not the post's own container. */
const COMMENT_SECTION = /comment|disqus/i;
function isCommentSection(el: Element): boolean {
  const name = el.name;
  if (name === 'body' || name === 'html' || name === 'main') return false;
  const hint = hintOf(el);
  return hint !== '' && hint.length < 500 && COMMENT_SECTION.test(hint) && !MAYBE.test(hint);
}

/** A cookie or consent banner, or a modal dialog: out on every attempt (the article is never one). */
function isConsentOrModal(el: Element): boolean {
  const a = el.attribs;
  if (a.role !== undefined && /^\s*(?:alert)?dialog\s*$/i.test(a.role)) return true;
  if (a['aria-modal'] === 'true') return true;
  if (a.class === undefined && a.id === undefined) return false;
  const name = el.name;
  if (name === 'body' || name === 'html' || name === 'article' || name === 'main') return false;
  const hint = hintOf(el);
  if (hint.length >= 500 || !CONSENT.test(hint)) return false;
  return CONSENT.test(hint.replace(TAXONOMY_CLASS, ' '));
}

const textLength = (s: string): number => {
  // Collapsed length without allocating: count non-space chars and space runs.
  let n = 0;
  let space = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ws = c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160;
    if (ws) {
      if (!space) n++;
      space = true;
    } else {
      n++;
      space = false;
    }
  }
  if (space && n > 0) n--;
  return n;
};

const countCommas = (s: string): number => {
  COMMAS.lastIndex = 0;
  let n = 0;
  while (COMMAS.exec(s) !== null) n++;
  return n;
};

function buildIndex(root: { children: AnyNode[] }, stripUnlikely: boolean, dropComments = false): Index {
  const els: Element[] = [];
  const parents: number[] = [];
  const dropList: number[] = [];
  const selfText: number[] = [];
  const selfCommas: number[] = [];
  const inLink: number[] = [];
  const inSection: number[] = [];
  const stack: [AnyNode, number][] = [];
  // The body itself is indexed, so that text directly in it has a container.
  const roots = isElement(root as AnyNode) ? [root as Element] : root.children;
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i]!, -1]);
  while (stack.length > 0) {
    const [node, parent] = stack.pop()!;
    if (isTextNode(node)) {
      if (parent >= 0) {
        selfText[parent]! += textLength(node.data);
        selfCommas[parent]! += countCommas(node.data);
      }
      continue;
    }
    if (!isElement(node)) {
      if ('children' in node) for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i]!, parent]);
      continue;
    }
    const i = els.length;
    const name = node.name;
    els.push(node);
    parents.push(parent);
    selfText.push(0);
    selfCommas.push(0);
    const pDrop = parent >= 0 ? dropList[parent]! : KEPT;
    const pSection = parent >= 0 ? inSection[parent]! : 0;
    const role = node.attribs.role;
    inSection.push(pSection === 1 || SECTIONING.has(name) || role === 'main' || role === 'article' ? 1 : 0);
    let drop = KEPT;
    if (pDrop === DROPPED || pDrop === CAPTIONED) drop = DROPPED;
    else if (DROP_TAGS.has(name) || isHidden(node) || hiddenByClass(node) || isConsentOrModal(node)) drop = DROPPED;
    else if (dropComments && isCommentSection(node)) drop = DROPPED;
    else if (stripUnlikely && isUnlikely(node)) drop = BANNER_HINT.test(hintOf(node)) && !hasNonBannerRole(node) ? BANNER : DROPPED;
    else if (name === 'figcaption') drop = CAPTIONED;
    else if (pDrop === BANNER || (stripUnlikely && name === 'header' && pSection === 0)) drop = BANNER;
    dropList.push(drop);
    inLink.push(name === 'a' || (parent >= 0 && inLink[parent] === 1) ? 1 : 0);
    if (drop === DROPPED || drop === CAPTIONED) continue;
    const ch = node.children;
    for (let k = ch.length - 1; k >= 0; k--) stack.push([ch[k]!, i]);
  }
  const n = els.length;
  const parent = Int32Array.from(parents);
  const dropped = Uint8Array.from(dropList);
  const textLen = Float64Array.from(selfText);
  const linkLen = new Float64Array(n);
  const inlineLen = Float64Array.from(selfText);
  const inlineCommas = Float64Array.from(selfCommas);
  const commas = Float64Array.from(selfCommas);
  const pCount = new Float64Array(n);
  const imgCount = new Float64Array(n);
  const liCount = new Float64Array(n);
  const timeCount = new Float64Array(n);
  const hasBlockChild = new Uint8Array(n);
  const weight = new Float64Array(n);
  const end = new Int32Array(n);
  const pos = new Map<Element, number>();
  for (let i = 0; i < n; i++) {
    pos.set(els[i]!, i);
    if (inLink[i] === 1) linkLen[i] = selfText[i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    if (end[i]! < i + 1) end[i] = i + 1;
    const p = parent[i]!;
    if (p >= 0 && end[p]! < end[i]!) end[p] = end[i]!;
    if (dropped[i] !== KEPT) continue;
    const el = els[i]!;
    const name = el.name;
    if (name === 'p') pCount[i]! += 1;
    else if (name === 'img') imgCount[i]! += 1;
    else if (name === 'li') liCount[i]! += 1;
    else if (name === 'time') timeCount[i]! += 1;
    if (p < 0) continue;
    textLen[p]! += textLen[i]!;
    linkLen[p]! += linkLen[i]!;
    commas[p]! += commas[i]!;
    pCount[p]! += pCount[i]!;
    imgCount[p]! += imgCount[i]!;
    liCount[p]! += liCount[i]!;
    timeCount[p]! += timeCount[i]!;
    if (BLOCK_TAGS.has(name) || name === 'td' || name === 'th') hasBlockChild[p] = 1;
    else {
      inlineLen[p]! += inlineLen[i]!;
      inlineCommas[p]! += inlineCommas[i]!;
    }
  }
  for (let i = 0; i < n; i++) if (dropped[i] === KEPT) weight[i] = classWeight(els[i]!);
  return { els, parent, end, pos, dropped, textLen, linkLen, inlineLen, inlineCommas, commas, pCount, imgCount, liCount, timeCount, hasBlockChild, weight };
}

function tagBase(name: string): number {
  switch (name) {
    case 'div': case 'article': case 'main': case 'section': return 5;
    case 'pre': case 'td': case 'blockquote': return 3;
    case 'address': case 'ol': case 'ul': case 'dl': case 'dd': case 'dt': case 'li': case 'form': return -3;
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': case 'th': return -5;
    default: return 0;
  }
}

interface Choice {
  readonly nodes: Element[];
  readonly score: number;
  /** Readability-style content scores of the candidates (0 elsewhere). */
  readonly scores: Float64Array;
  /** Text length of the chosen nodes together. */
  readonly total: number;
  /** No text block anywhere: the whole page, to be pruned of its chrome only. */
  readonly whole?: true;
}

/** The best container; blocks count from `minBlock` characters of their own inline text. */
function chooseContainer(ix: Index, minBlock: number): Choice | undefined {
  const { els, parent, dropped, inlineLen, inlineCommas, hasBlockChild, textLen, linkLen, weight } = ix;
  const n = els.length;
  const score = new Float64Array(n);
  const isCand = new Uint8Array(n);
  const cands: number[] = [];
  for (let i = 0; i < n; i++) {
    if (dropped[i] !== KEPT) continue;
    const len = inlineLen[i]!;
    if (len < minBlock) continue;
    const name = els[i]!.name;
    if (name === 'a' || HEADINGS.has(name)) continue;
    const s = 1 + inlineCommas[i]! + Math.min(3, Math.floor(len / 100));
    let a = hasBlockChild[i] === 1 || parent[i]! < 0 ? i : parent[i]!;
    for (let level = 0; a >= 0 && level < 5; level++, a = parent[a]!) {
      if (isCand[a] === 0) {
        isCand[a] = 1;
        cands.push(a);
        score[a] = tagBase(els[a]!.name) + weight[a]!;
      }
      score[a]! += level === 0 ? s : level === 1 ? s / 2 : s / (level * 3);
    }
  }
  if (cands.length === 0) return undefined;
  let best = -1;
  let bestScore = -Infinity;
  const finalScore = new Float64Array(n);
  for (const c of cands) {
    const ld = textLen[c]! > 0 ? linkLen[c]! / textLen[c]! : 0;
    const f = score[c]! * (1 - ld);
    finalScore[c] = f;
    if (f > bestScore) {
      bestScore = f;
      best = c;
    }
  }
  // Readability's refinements: a shared ancestor of several strong candidates wins; climb while the parent scores higher.
  // Short look-alikes of the best (teasers in a listing) are not parts of the same article.
  const top = cands.filter((c) => finalScore[c]! >= bestScore * 0.75 && c !== best && textLen[c]! >= textLen[best]! * 0.25).sort((a, b) => finalScore[b]! - finalScore[a]!).slice(0, 4);
  if (top.length >= 3) {
    const ancestorsOf = (i: number): Set<number> => {
      const s = new Set<number>();
      for (let a = parent[i]!; a >= 0; a = parent[a]!) s.add(a);
      return s;
    };
    const lists = top.map(ancestorsOf);
    for (let a = parent[best]!; a >= 0 && els[a]!.name !== 'body'; a = parent[a]!) {
      let count = 0;
      for (const l of lists) if (l.has(a)) count++;
      if (count >= 3) {
        best = a;
        break;
      }
    }
  }
  let lastScore = finalScore[best]!;
  const threshold = lastScore / 3;
  for (let p = parent[best]!; p >= 0 && els[p]!.name !== 'body'; p = parent[p]!) {
    if (isCand[p] === 0) continue;
    const ps = finalScore[p]!;
    if (ps < threshold) break;
    if (ps > lastScore) {
      best = p;
      break;
    }
    lastScore = ps;
  }
  // An only child says nothing: take the parent.
  for (let p = parent[best]!; p >= 0 && els[p]!.name !== 'body'; p = parent[p]!) {
    if (elementChildren(ix, p).length !== 1) break;
    best = p;
  }
  // Peers: a thread (forum posts, a question and its answers) repeats one
  // kind of block. An ancestor of the best, a few levels up, whose siblings
  // of the same tag are candidates of comparable length and few links, is
  // one post among several: take their parent. Teasers are no peers of an
  // article: far shorter, or a linked title over a line or two (a quarter of
  // their text and more is link).
  for (let a = best, k = 0; k < 3; a = parent[a]!, k++) {
    const pa = parent[a]!;
    if (pa < 0 || els[pa]!.name === 'body') break;
    let peers = 0;
    for (const s of elementChildren(ix, pa)) {
      if (s === a || dropped[s] !== KEPT || isCand[s] === 0 || weight[s]! < 0 || els[s]!.name !== els[a]!.name) continue;
      if (textLen[s]! >= textLen[best]! * 0.5 && linkLen[s]! <= textLen[s]! * 0.15) peers++;
    }
    if (peers > 0) {
      best = pa;
      break;
    }
  }
  const topScore = Math.max(finalScore[best]!, 1);
  // Siblings that look like more of the article join it; not at the top
  // level, where the siblings are the page's own regions (header, footer).
  const p = parent[best]!;
  if (p < 0 || els[p]!.name === 'body') return { nodes: [els[best]!], score: topScore, scores: score, total: textLen[best]! };
  const nodes: Element[] = [];
  const threshold2 = Math.max(10, topScore * 0.2);
  const bestClass = els[best]!.attribs.class ?? '';
  for (const s of elementChildren(ix, p)) {
    if (s === best) {
      nodes.push(els[s]!);
      continue;
    }
    if (dropped[s] !== KEPT) continue;
    let append = false;
    let bonus = 0;
    if (bestClass !== '' && els[s]!.attribs.class === bestClass) bonus += topScore * 0.2;
    if (isCand[s] === 1 && finalScore[s]! + bonus >= threshold2) append = true;
    else if (els[s]!.name === 'table' && linkLen[s]! <= textLen[s]! * 0.3 && isDataTable(els[s]!)) append = true;
    // Prose in a sibling of the same tag (an old page's text in several layout tables or cells, one after
    // another): sentences with commas and almost no links are more of the text, not chrome.
    else if (els[s]!.name === els[best]!.name && textLen[s]! >= 200 && linkLen[s]! <= textLen[s]! * 0.1 && ix.commas[s]! >= 3 && weight[s]! >= 0) append = true;
    else if (els[s]!.name === 'p') {
      const len = textLen[s]!;
      const ld = len > 0 ? linkLen[s]! / len : 0;
      if (len > 80 && ld < 0.25) append = true;
      else if (len < 80 && len > 0 && ld === 0) append = true;
    }
    if (append) nodes.push(els[s]!);
  }
  let total = 0;
  for (const e of nodes) total += textLen[ix.pos.get(e)!]!;
  return { nodes, score: topScore, scores: score, total };
}

/** No text block at all: the page (what is left of it) is the content. */
function wholePage(ix: Index): Choice | undefined {
  const roots: Element[] = [];
  // The index's roots: the body, or the top-level elements of a fragment.
  for (let i = 0; i < ix.els.length; i = ix.end[i]!) if (ix.dropped[i] === KEPT) roots.push(ix.els[i]!);
  if (roots.length === 0) return undefined;
  let total = 0;
  for (const r of roots) total += ix.textLen[ix.pos.get(r)!]!;
  return total > 0 ? { nodes: roots, score: 0, scores: new Float64Array(ix.els.length), total, whole: true } : undefined;
}

function elementChildren(ix: Index, i: number): number[] {
  const out: number[] = [];
  for (const c of ix.els[i]!.children) {
    if (isElement(c)) {
      const k = ix.pos.get(c);
      if (k !== undefined) out.push(k);
    }
  }
  return out;
}

/** Nodes read of a heading (a headline is a few words; hostile pages nest headings by the thousand). */
const HEADING_NODES = 300;
/** Headings looked at, inside the content and before it, when looking for the headline. */
const HEADLINE_TRIES = 100;

/** Text of a heading, collapsed, without permalink anchors and hidden parts. */
function collapsedText(el: Element): string {
  const b = new TextBuilder();
  renderInto(b, [el], { skip: (e) => NON_TEXT_TAGS.has(e.name) || isHidden(e) || hiddenByClass(e) || isPermalink(e), maxNodes: HEADING_NODES });
  return b.toString().replace(/\s+/g, ' ').trim();
}

/** A heading's "¶" / "#" link to itself (Sphinx, MkDocs, GitHub, Docusaurus): no words, points into the page. */
function isPermalink(el: Element): boolean {
  if (el.name !== 'a') return false;
  const href = el.attribs.href;
  if (href === undefined || !href.startsWith('#')) return false;
  let text = '';
  for (const c of el.children) if (isTextNode(c)) text += c.data;
  return !/[\p{L}\p{N}]/u.test(text);
}

/** A link to the site's home page (a logo, "Home"). */
function isHomeLink(el: Element): boolean {
  const href = (el.attribs.href ?? '').trim();
  if (href === '/' || href === './' || href === '') return true;
  try {
    const u = new URL(href);
    return u.pathname === '/' && u.search === '';
  } catch {
    return false;
  }
}

const normalize = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();

interface TitleLike {
  (el: Element): boolean;
  /** Length of the shortest title (Infinity without one). */
  readonly shortest: number;
}

/** A page title repeated as a heading (titles carry the site name, so: a large part of one), the <title> or og:title. */
function makeTitleLike(titles: readonly string[]): TitleLike {
  const norms = titles.map(normalize).filter((t) => t !== '');
  const memo = new Map<Element, boolean>();
  const test = (el: Element): boolean => {
    if (norms.length === 0) return false;
    let r = memo.get(el);
    if (r === undefined) {
      const t = collapsedText(el).toLowerCase();
      r = t !== '' && t.length <= 300 && norms.some((n) => t.length >= n.length * 0.4 && n.includes(t));
      memo.set(el, r);
    }
    return r;
  };
  return Object.assign(test, { shortest: norms.reduce((m, n) => Math.min(m, n.length), Infinity) });
}

/**
 * The article's own heading: the first <h1> inside the content; else a
 * heading inside it repeating the title; else, before the content, the
 * nearest heading repeating the title, or the nearest <h1>. Never a heading
 * that is only a link to the home page (a logo), nor an empty one.
 */
function findHeadline(ix: Index, nodes: readonly Element[], titleLike: (el: Element) => boolean, shortestTitle: number): Element | undefined {
  const { els, pos, end, dropped, textLen } = ix;
  // An indexed heading's text length is known: too short to repeat a title, too long to be a headline, or empty.
  const hopeless = (j: number, forTitle: boolean): boolean =>
    dropped[j] === KEPT && (textLen[j]! === 0 || textLen[j]! > 310 || (forTitle && textLen[j]! + 5 < shortestTitle * 0.4));
  const plausible = (i: number): boolean => {
    const el = els[i]!;
    if (hopeless(i, false)) return false;
    const text = collapsedText(el);
    if (text === '' || text.length > 300) return false;
    // Only a link home: the site's logo.
    const links: Element[] = [];
    let budget = HEADING_NODES;
    walkElements(el, (e) => {
      if (--budget < 0) return false;
      if (e.name === 'a') links.push(e);
      return e.name !== 'a';
    });
    return !(links.length === 1 && isHomeLink(links[0]!) && collapsedText(links[0]!) === text);
  };
  let inside: number | undefined;
  let tries = HEADLINE_TRIES;
  for (const node of nodes) {
    const start = pos.get(node)!;
    for (let j = start; j < end[start]! && tries > 0; j++) {
      if ((dropped[j] !== KEPT && dropped[j] !== BANNER) || !HEADINGS.has(els[j]!.name)) continue;
      tries--;
      if (els[j]!.name === 'h1' && plausible(j)) return els[j];
      if (dropped[j] !== KEPT) continue;
      if (inside === undefined && (els[j]!.name === 'h2' || els[j]!.name === 'h3') && !hopeless(j, true) && titleLike(els[j]!) && plausible(j)) inside = j;
    }
  }
  if (inside !== undefined) return els[inside];
  const first = pos.get(nodes[0]!)!;
  let h1: number | undefined;
  tries = HEADLINE_TRIES;
  // (Under a dropped element nothing is indexed: a heading here has no dropped ancestor but a banner.)
  for (let j = first - 1; j >= 0 && tries > 0; j--) {
    const d = dropped[j]!;
    if ((d !== KEPT && d !== BANNER) || !HEADINGS.has(els[j]!.name)) continue;
    tries--;
    const name = els[j]!.name;
    if ((name === 'h1' || name === 'h2' || name === 'h3') && !hopeless(j, true) && titleLike(els[j]!) && plausible(j)) return els[j];
    // A banner's other headings are the site's, not the article's.
    if (h1 === undefined && name === 'h1' && d === KEPT && plausible(j)) h1 = j;
  }
  return h1 === undefined ? undefined : els[h1];
}

/** A table of data (header cells, a caption, or a large grid), not a layout grid: readability never cleans those either. */
function isDataTable(table: Element): boolean {
  if ((table.attribs.role ?? '') === 'presentation') return false;
  if (table.attribs.summary !== undefined) return true;
  let rows = 0;
  let cols = 0;
  let header = false;
  let nested = false;
  walkElements(table, (el) => {
    const name = el.name;
    if (name === 'table') {
      nested = true;
      return false;
    }
    if (name === 'caption' || name === 'thead' || name === 'th') header = true;
    if (name === 'tr') {
      rows++;
      let c = 0;
      for (const x of el.children) if (isElement(x) && (x.name === 'td' || x.name === 'th')) c++;
      if (c > cols) cols = c;
    }
    return true;
  });
  if (nested) return false;
  if (header) return rows >= 1;
  return rows >= 10 || cols > 4;
}

interface SkipOptions {
  /** Render figure captions (main_content) or leave them out (articleBody). */
  readonly captions: boolean;
  readonly headline: Element | undefined;
  /** The container was found without leaving out unlikely-looking elements: still leave them out inside it. */
  readonly lenient: boolean;
  /** Leave out the page's chrome only (the boilerplate rules would leave nothing). */
  readonly chromeOnly: boolean;
}

/** Boilerplate inside the chosen container. */
function makeSkip(ix: Index, choice: Choice, titleLike: TitleLike, o: SkipOptions): (el: Element) => boolean {
  const { scores, total } = choice;
  const { pos, parent, dropped, textLen, linkLen, inlineLen, commas, pCount, imgCount, liCount, timeCount, weight, hasBlockChild } = ix;
  const firstH1 = ix.els.find((e) => e.name === 'h1');
  const roots = new Set<Element>(choice.nodes);
  // A list holding most of the content is the content (a listing, a product
  // grid, a link directory): its items are not pointers elsewhere.
  const listing = new Set<number>();
  for (const r of choice.nodes) {
    const start = pos.get(r)!;
    for (let j = start; j < ix.end[start]!; j++) {
      const name = ix.els[j]!.name;
      if ((name === 'ul' || name === 'ol') && dropped[j] === KEPT && textLen[j]! > total * 0.5) listing.add(j);
    }
  }
  // A heading whose section was pruned right after it ("Read next" over a
  // list of links) heads nothing.
  const orphan = (el: Element): boolean => {
    let pruned = false;
    for (let n = el.next; n !== null; n = n.next) {
      if (isTextNode(n)) {
        if (n.data.trim() !== '') return false;
        continue;
      }
      if (!isElement(n) || NON_TEXT_TAGS.has(n.name) || n.name === 'br' || n.name === 'hr') continue;
      if (HEADINGS.has(n.name)) break;
      if (!skip(n)) return false;
      pruned = true;
    }
    return pruned;
  };
  const skip = (el: Element): boolean => {
    const i = pos.get(el);
    // Not indexed: under a figure caption that is being rendered.
    if (i === undefined) return !o.captions || NON_TEXT_TAGS.has(el.name) || isHidden(el) || hiddenByClass(el) || TAGS.test(hintOf(el));
    const d = dropped[i]!;
    if (d !== KEPT) return !(o.captions && d === CAPTIONED);
    if (el === o.headline) return true;
    // Nothing to weigh boilerplate against: keep what is not chrome.
    if (o.chromeOnly) return isPermalink(el);
    const name = el.name;
    // Headings repeating the headline: the page's first <h1>, or any heading repeating the title.
    if (name === 'h1' && (el === firstH1 || titleLike(el))) return true;
    // An article's own <header> holds its title, byline, date and standfirst.
    if (name === 'header' && textLen[i]! < total * 0.3) return true;
    if (o.lenient && !roots.has(el) && isUnlikely(el)) return true;
    const len = textLen[i]!;
    if (len === 0) return name !== 'br' && imgCount[i] === 0 && name !== 'hr';
    const hint = hintOf(el);
    if (HEADINGS.has(name)) return weight[i]! < 0 || titleLike(el) || orphan(el);
    if (name === 'a' && isPermalink(el)) return true;
    // (Not what holds most of the content: a short post's container may be classed by its author, "entry-author-...".)
    if (hint !== '' && hint.length < 500 && len < 400 && len <= total * 0.5) {
      if (BYLINE.test(hint) || SHARE.test(hint) || TAGS.test(hint) || EDIT_LINK.test(hint)) return true;
      if (CAPTION.test(hint)) return !o.captions;
    }
    if (len < 120 && timeCount[i]! > 0) return true;
    if (hint !== '' && hint.length < 500 && len < 200 && GALLERY.test(hint)) return true;
    if (el.attribs.rel === 'author' || el.attribs.itemprop === 'author') return true;
    const ld = len > 0 ? linkLen[i]! / len : 0;
    // Tables of data are content (a navigation grid is mostly links).
    if (name === 'table' && ld < 0.5 && isDataTable(el)) return false;
    if (name === 'table' || name === 'ul' || name === 'ol' || name === 'div' || name === 'section' || name === 'header' || name === 'figure') {
      // Never drop what holds most of the article.
      if (len > total * 0.5) return false;
      const w = weight[i]!;
      // Lists start from a negative base score; only their class can condemn them.
      if (w + (name === 'ul' || name === 'ol' ? Math.max(0, scores[i]!) : scores[i]!) < 0) return true;
      if (commas[i]! >= 10) return false;
      const p = pCount[i]!;
      const img = imgCount[i]!;
      const li = liCount[i]! - 100;
      if (img > 1 && p / img < 0.5) return true;
      if (name !== 'ul' && name !== 'ol' && li > p) return true;
      if (len < 25 && (img === 0 || img > 2) && name !== 'ul' && name !== 'ol') return true;
      if (w < 25 && ld > 0.2) return true;
      if (w >= 25 && ld > 0.5) return true;
    }
    if (name === 'li' && listing.has(parent[i]!)) return false;
    // A short paragraph that is mostly a link ("Read more: ...") is a pointer elsewhere, unless it says something itself.
    if ((name === 'p' || name === 'li') && ld > 0.5 && len < 200 && len - linkLen[i]! < 40) return true;
    // A short link standing alone between blocks ("Read more", "Continue reading") is a pointer too.
    if (name === 'a' && len < 60) {
      const p = parent[i]!;
      if (p >= 0 && hasBlockChild[p] === 1 && inlineLen[p]! - len < 3) return true;
    }
    // A block of mostly links (related stories, tag lists) is navigation, whatever its length.
    if (ld > 0.7 && BLOCK_TAGS.has(name) && hasBlockChild[i] === 0) return true;
    return false;
  };
  return skip;
}

/** The page's <title> and og:title (the first of each). */
function pageTitles(head: { children: AnyNode[] } | undefined, doc: Page['document']): string[] {
  const root = head ?? doc;
  const stack: AnyNode[] = [...root.children].reverse();
  let title: string | undefined;
  let og: string | undefined;
  while (stack.length > 0 && (title === undefined || og === undefined)) {
    const n = stack.pop()!;
    if (isElement(n)) {
      if (n.name === 'title' && title === undefined) {
        const b = new TextBuilder();
        for (const c of n.children) if (isTextNode(c)) b.text(c.data);
        title = b.toString();
        continue;
      }
      if (n.name === 'meta' && og === undefined && (n.attribs.property ?? '').trim().toLowerCase() === 'og:title') {
        og = (n.attribs.content ?? '').slice(0, 1000);
        continue;
      }
      if (n.name === 'body') continue;
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
  return [title ?? '', og ?? ''];
}

const render = (nodes: readonly AnyNode[], skip: (el: Element) => boolean): string => {
  const b = new TextBuilder();
  renderInto(b, nodes, { skip });
  return b.toString();
};

interface Attempt {
  readonly result: MainContent;
  /** Length of the body (without the headline). */
  readonly bodyLen: number;
}

function attempt(ix: Index, choice: Choice, titleLike: TitleLike, lenient: boolean): Attempt {
  const headlineEl = findHeadline(ix, choice.nodes, titleLike, titleLike.shortest);
  const headline = headlineEl === undefined ? '' : collapsedText(headlineEl);
  const headlineLevel = headlineEl === undefined ? 1 : Number(headlineEl.name[1]);
  // Pruning never leaves nothing of a container that holds text: then only the chrome goes.
  let chromeOnly = choice.whole === true;
  let skip = makeSkip(ix, choice, titleLike, { captions: true, headline: headlineEl, lenient, chromeOnly });
  let body = render(choice.nodes, skip);
  if (body === '' && !chromeOnly && choice.total > 0) {
    chromeOnly = true;
    skip = makeSkip(ix, choice, titleLike, { captions: true, headline: headlineEl, lenient, chromeOnly });
    body = render(choice.nodes, skip);
  }
  const text = headline === '' ? body : body === '' ? headline : `${headline}\n\n${body}`;
  let articleBody: string | undefined;
  const nodes = choice.nodes;
  const result: MainContent = {
    source: 'dom',
    nodes,
    skip,
    headline,
    headlineLevel,
    text,
    // Rendered on demand: only the benchmark asks for it.
    get articleBody(): string {
      articleBody ??= render(nodes, makeSkip(ix, choice, titleLike, { captions: false, headline: headlineEl, lenient, chromeOnly }));
      return articleBody;
    },
  };
  return { result, bodyLen: body.length };
}

function extract(page: Page): MainContent {
  const { head, body: found } = structure(page.document);
  // A page without <body> has an implied one, as in a browser: its top-level paragraphs share a container.
  const body = isElement(found as AnyNode) ? found : impliedBody(found);
  const titleLike = makeTitleLike(pageTitles(head, page.document));
  let best: Attempt | undefined;
  // First without the unlikely-looking parts of the page; when that leaves
  // little, again with them (some sites name their article "sidebar-..."),
  // kept only when it finds much more.
  for (const strip of [true, false]) {
    // The second look keeps leaving out readers' comments when the first found a post: a short post
    // (a photo, a few lines) under a long thread of comments is still the post.
    const ix = buildIndex(body, strip, !strip && best !== undefined && best.bodyLen > 0);
    const choice = chooseContainer(ix, 25) ?? chooseContainer(ix, 1) ?? wholePage(ix);
    if (choice === undefined) continue;
    const a = attempt(ix, choice, titleLike, !strip);
    if (best === undefined || a.bodyLen > best.bodyLen * 2 + 100) best = a;
    if (best.bodyLen >= 250) break;
  }
  if (best === undefined || best.bodyLen < MIN_DOM_TEXT) {
    const ld = jsonLdArticle(page.document);
    if (ld !== undefined && ld.body.length > (best?.bodyLen ?? 0)) {
      return { source: 'json-ld', nodes: [], skip: () => true, headline: ld.headline, headlineLevel: 1, text: ld.headline === '' ? ld.body : `${ld.headline}\n\n${ld.body}`, articleBody: ld.body };
    }
  }
  return best?.result ?? EMPTY;
}

/** The longest articleBody of the page's JSON-LD (top-level items and a few levels inside them), tidied, and its item's headline. */
function jsonLdArticle(doc: Page['document']): { body: string; headline: string } | undefined {
  let best: string | undefined;
  let headline = '';
  walkElements(doc, (el) => {
    if (el.name !== 'script') return true;
    if ((el.attribs.type ?? '').split(';')[0]!.trim().toLowerCase() !== 'application/ld+json') return false;
    let raw = '';
    for (const c of el.children) if (isTextNode(c)) raw += c.data;
    for (const item of parseJsonLd(raw)) {
      const stack: [unknown, number][] = [[item, 0]];
      while (stack.length > 0) {
        const [v, depth] = stack.pop()!;
        if (v === null || typeof v !== 'object' || depth > 4) continue;
        if (Array.isArray(v)) {
          for (const x of v) stack.push([x, depth + 1]);
          continue;
        }
        const o = v as Record<string, unknown>;
        const body = o.articleBody;
        if (typeof body === 'string' && (best === undefined || body.length > best.length)) {
          best = body;
          headline = typeof o.headline === 'string' ? o.headline.replace(/\s+/g, ' ').trim().slice(0, 300) : '';
        }
        for (const x of Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
      }
    }
    return false;
  });
  if (best === undefined) return undefined;
  // articleBody is plain text, sometimes with markup left in: strip tags, keep paragraph breaks.
  const text = best
    .replace(/<(?:br|\/p|\/div|\/h[1-6]|\/li)\s*\/?>/gi, '\n')
    .replace(/<[^>]{0,1000}>/g, ' ')
    .split(/\n/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '')
    .join('\n\n');
  return text === '' ? undefined : { body: text, headline };
}

const cache = new WeakMap<Page['document'], MainContent>();

/** The page's main content (computed once per parsed document, shared with the markdown extractor). */
export function mainContent(page: Page): MainContent {
  const hit = cache.get(page.document);
  if (hit !== undefined) return hit;
  const result = extract(page);
  cache.set(page.document, result);
  return result;
}
