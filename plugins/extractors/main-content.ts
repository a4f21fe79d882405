/**
 * main_content: the text of the page's main article, blocks as line breaks.
 * Our own algorithm over the shared DOM (read-only, no re-parse, iterative):
 *
 * 1. Index: one pass numbers every element of <body> and aggregates text
 *    length, link-text length, commas, and <p>/<img>/<li>/<time> counts
 *    bottom-up. Never-text elements (script, style, nav, aside, footer,
 *    form controls, figcaption, ...), hidden ones (hidden, display:none,
 *    utility classes like sr-only / d-none, hover cards) and, on the first
 *    attempt, "unlikely" ones (class/id like comment, sidebar, related,
 *    share, promo, ... unless also like article/content/body; ARIA
 *    navigation/complementary/... roles) are dropped from the index.
 * 2. Score: every text block (an element's own inline text >= 25 chars)
 *    scores 1 + commas + length/100 (max 3), added to its container and
 *    decayed over 4 more ancestors (readability's scheme); a container starts
 *    from a tag base plus class/id weight (+25 article/content/entry/post/
 *    story/itemprop=articleBody..., -25 comment/footer/share/sidebar/byline/
 *    caption...) and ends multiplied by (1 - link density).
 * 3. Choose: the best container; a shared ancestor of several strong
 *    candidates of comparable length (a split article, not a teaser list)
 *    wins; climb while the parent scores higher or the container is an
 *    only child; merge siblings that score well or are plain paragraphs.
 * 4. Prune while rendering: the headline (the first <h1>, headings
 *    repeating <title>), the article's own <header>, bylines, dates, share
 *    bars, captions, tag lists, galleries, link-only paragraphs and blocks
 *    of mostly links, and readability's conditional cleaning of lists,
 *    tables and divs (weight, image/paragraph ratio, link density) unless
 *    they hold most of the article.
 * 5. Fall back: when the elements hold < 200 chars (script-rendered pages),
 *    a JSON-LD articleBody, if longer.
 *
 * Measured on the Zyte article-extraction benchmark (benchmarks/extract,
 * `npm run bench:extract`): generic rules only, no per-site ones.
 */
import { defineExtractor, type Page } from '../sdk/scrape.js';
import { HTML_FILTER } from './common.js';
import { isElement, isHidden, isTextNode, structure, walkElements, type AnyNode, type Element } from './dom.js';
import { parseJsonLd } from './schema-data.js';
import { BLOCK_TAGS, NON_TEXT_TAGS, renderInto, TextBuilder } from './text.js';

export interface MainContent {
  /** Where the text comes from: the page's elements, or (when they hold too little) a JSON-LD articleBody. */
  readonly source: 'dom' | 'json-ld' | 'none';
  /** The nodes making up the article, in document order (empty when nothing was found or the source is JSON-LD). */
  readonly nodes: readonly Element[];
  /** Elements to leave out when rendering `nodes` (boilerplate inside the article). */
  readonly skip: (el: Element) => boolean;
  /** The article as plain text (blocks as line breaks). */
  readonly text: string;
}

const EMPTY: MainContent = { source: 'none', nodes: [], skip: () => true, text: '' };
/** Below this many characters the page's elements hold no article (script-rendered pages); JSON-LD may. */
const MIN_DOM_TEXT = 200;

// Hints in class and id attributes.
const UNLIKELY = /-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|newsletter|subscribe|promo|share|sharing|cookie|modal|signup|outbrain|taboola|recirc|trending|most-?popular|navbar|nav-|-nav\b|masthead|toolbar/i;
const MAYBE = /and|article|body|column|content|main|shadow|story|entry|post-?text/i;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story/i;
const NEGATIVE = /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget|byline|author|caption|newsletter|subscribe/i;
const BYLINE = /byline|author|dateline|writtenby|p-author|timestamp|published|updated-date|post-date|article-date|\bdate\b|\bmeta\b|credit/i;
const SHARE = /(\b|_|-)(share|sharing|sharedaddy|social|follow|newsletter|subscribe|related|recommend|read-?more|more-?stories|promo|advert|ad-container|ad-slot|adslot|ads\b)/i;
const CAPTION = /caption|credit|(\b|_|-)(tags?|tag-?list|keywords|categories)(\b|_|-)/i;
// Utility classes that hide an element (CSS we cannot see), and hover cards.
const HIDDEN_CLASS = /(?:^|\s)(?:hidden|hide|d-none|sr-only|visually-?hidden|screen-reader-text|visuallyhidden|invisible|is-hidden|u-hidden)(?:\s|$)|tooltip|popover|rollover|hover-?card/i;
const GALLERY = /gallery|slideshow|carousel|slider|swiper|lightbox/i;
const BAD_ROLES = new Set(['navigation', 'menu', 'menubar', 'complementary', 'banner', 'contentinfo', 'alert', 'alertdialog', 'dialog', 'search']);

/** Removed wherever they are: never article text. */
const DROP_TAGS: ReadonlySet<string> = new Set([
  ...NON_TEXT_TAGS, 'nav', 'aside', 'footer', 'button', 'input', 'label', 'figcaption', 'dialog', 'menu',
]);

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const COMMAS = /[\u002C\u060C\uFE50\uFE10\uFE11\u2E41\u2E34\u2E32\uFF0C\u3001]/g;

/** Per-element facts, indexed by document order. */
interface Index {
  readonly els: Element[];
  readonly parent: Int32Array;
  readonly pos: Map<Element, number>;
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

const hintOf = (el: Element): string => {
  const c = el.attribs.class;
  const i = el.attribs.id;
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
  const id = el.attribs.id;
  if (id !== undefined && id.length < 500) {
    if (NEGATIVE.test(id)) w -= 25;
    if (POSITIVE.test(id)) w += 25;
  }
  return w;
}

function hiddenByClass(el: Element): boolean {
  const c = el.attribs.class;
  return c !== undefined && c.length < 500 && HIDDEN_CLASS.test(c);
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

function buildIndex(body: { children: AnyNode[] }, stripUnlikely: boolean): Index {
  const els: Element[] = [];
  const parents: number[] = [];
  const dropList: number[] = [];
  const selfText: number[] = [];
  const selfCommas: number[] = [];
  const inLink: number[] = [];
  const stack: [AnyNode, number][] = [];
  const roots = body.children;
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
    els.push(node);
    parents.push(parent);
    selfText.push(0);
    selfCommas.push(0);
    const pDropped = parent >= 0 ? dropList[parent]! : 0;
    const drop = pDropped === 1 || DROP_TAGS.has(node.name) || isHidden(node) || hiddenByClass(node) || (stripUnlikely && isUnlikely(node)) ? 1 : 0;
    dropList.push(drop);
    inLink.push(node.name === 'a' || (parent >= 0 && inLink[parent] === 1) ? 1 : 0);
    if (drop === 1) continue;
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
  const pos = new Map<Element, number>();
  for (let i = 0; i < n; i++) {
    pos.set(els[i]!, i);
    if (inLink[i] === 1) linkLen[i] = selfText[i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    if (dropped[i] === 1) continue;
    const el = els[i]!;
    const name = el.name;
    if (name === 'p') pCount[i]! += 1;
    else if (name === 'img') imgCount[i]! += 1;
    else if (name === 'li') liCount[i]! += 1;
    else if (name === 'time') timeCount[i]! += 1;
    const p = parent[i]!;
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
  for (let i = 0; i < n; i++) if (dropped[i] === 0) weight[i] = classWeight(els[i]!);
  return { els, parent, pos, dropped, textLen, linkLen, inlineLen, inlineCommas, commas, pCount, imgCount, liCount, timeCount, hasBlockChild, weight };
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
}

function chooseContainer(ix: Index): Choice | undefined {
  const { els, parent, dropped, inlineLen, inlineCommas, hasBlockChild, textLen, linkLen, weight } = ix;
  const n = els.length;
  const score = new Float64Array(n);
  const isCand = new Uint8Array(n);
  const cands: number[] = [];
  for (let i = 0; i < n; i++) {
    if (dropped[i] === 1) continue;
    const len = inlineLen[i]!;
    if (len < 25) continue;
    const name = els[i]!.name;
    if (name === 'a' || HEADINGS.has(name)) continue;
    const s = 1 + inlineCommas[i]! + Math.min(3, Math.floor(len / 100));
    let a = hasBlockChild[i] === 1 ? i : parent[i]!;
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
    for (let a = parent[best]!; a >= 0; a = parent[a]!) {
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
  const topScore = Math.max(finalScore[best]!, 1);
  // Siblings that look like more of the article join it.
  const p = parent[best]!;
  if (p < 0) return { nodes: [els[best]!], score: topScore, scores: score, total: textLen[best]! };
  const nodes: Element[] = [];
  const threshold2 = Math.max(10, topScore * 0.2);
  const bestClass = els[best]!.attribs.class ?? '';
  for (const s of elementChildren(ix, p)) {
    if (s === best) {
      nodes.push(els[s]!);
      continue;
    }
    if (dropped[s] === 1) continue;
    let append = false;
    let bonus = 0;
    if (bestClass !== '' && els[s]!.attribs.class === bestClass) bonus += topScore * 0.2;
    if (isCand[s] === 1 && finalScore[s]! + bonus >= threshold2) append = true;
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

/** Boilerplate inside the chosen container. */
function makeSkip(ix: Index, choice: Choice, title: string): (el: Element) => boolean {
  const { scores, total } = choice;
  const { pos, dropped, textLen, linkLen, commas, pCount, imgCount, liCount, timeCount, weight } = ix;
  const normTitle = title.replace(/\s+/g, ' ').trim().toLowerCase();
  // The page title repeated as a heading (titles carry the site name, so: a large part of it).
  const titleLike = (el: Element): boolean => {
    if (normTitle === '') return false;
    const i = pos.get(el)!;
    if (textLen[i]! > 300 || textLen[i]! < normTitle.length * 0.4) return false;
    const t = collapsedText(el).toLowerCase();
    return t !== '' && normTitle.includes(t);
  };
  const firstH1 = ix.els.find((e) => e.name === 'h1');
  return (el: Element): boolean => {
    const i = pos.get(el);
    if (i === undefined || dropped[i] === 1) return true;
    const name = el.name;
    // The headline: the page's first <h1>, or any heading repeating the title.
    if (name === 'h1' && (el === firstH1 || titleLike(el))) return true;
    // An article's own <header> holds its title, byline, date and standfirst.
    if (name === 'header' && textLen[i]! < total * 0.3) return true;
    const len = textLen[i]!;
    if (len === 0) return name !== 'br' && imgCount[i] === 0 && name !== 'hr';
    const hint = hintOf(el);
    if (HEADINGS.has(name)) return weight[i]! < 0 || titleLike(el);
    if (hint !== '' && hint.length < 500 && len < 400 && (BYLINE.test(hint) || SHARE.test(hint) || CAPTION.test(hint))) return true;
    if (len < 120 && timeCount[i]! > 0) return true;
    if (hint !== '' && hint.length < 500 && len < 200 && GALLERY.test(hint)) return true;
    if (el.attribs.rel === 'author' || el.attribs.itemprop === 'author') return true;
    const ld = len > 0 ? linkLen[i]! / len : 0;
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
    // A short paragraph that is mostly a link ("Read more: ...") is a pointer elsewhere, unless it says something itself.
    if ((name === 'p' || name === 'li') && ld > 0.5 && len < 200 && len - linkLen[i]! < 40) return true;
    // A block of mostly links (related stories, tag lists) is navigation, whatever its length.
    if (ld > 0.7 && BLOCK_TAGS.has(name) && ix.hasBlockChild[i] === 0) return true;
    return false;
  };
}

function collapsedText(el: Element): string {
  const b = new TextBuilder();
  renderInto(b, [el]);
  return b.toString().replace(/\s+/g, ' ');
}

function pageTitle(head: { children: AnyNode[] } | undefined, doc: Page['document']): string {
  const root = head ?? doc;
  const stack: AnyNode[] = [...root.children].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (isElement(n)) {
      if (n.name === 'title') {
        const b = new TextBuilder();
        for (const c of n.children) if (isTextNode(c)) b.text(c.data);
        return b.toString();
      }
      if (n.name === 'body') continue;
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
  return '';
}

function extract(page: Page): MainContent {
  const { head, body } = structure(page.document);
  const title = pageTitle(head, page.document);
  let best: MainContent = EMPTY;
  // First without the unlikely-looking parts of the page; when that leaves
  // too little, again with them (some sites name their article "sidebar-...").
  for (const strip of [true, false]) {
    const ix = buildIndex(body, strip);
    const choice = chooseContainer(ix);
    if (choice === undefined) continue;
    const skip = makeSkip(ix, choice, title);
    const b = new TextBuilder();
    renderInto(b, choice.nodes, { skip });
    const text = b.toString();
    if (text.length > best.text.length) best = { source: 'dom', nodes: choice.nodes, skip, text };
    if (text.length >= 250) break;
  }
  if (best.text.length < MIN_DOM_TEXT) {
    const body = jsonLdArticleBody(page.document);
    if (body !== undefined && body.length > best.text.length) return { source: 'json-ld', nodes: [], skip: () => true, text: body };
  }
  return best;
}

/** The longest articleBody of the page's JSON-LD (top-level items and a few levels inside them), tidied. */
function jsonLdArticleBody(doc: Page['document']): string | undefined {
  let best: string | undefined;
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
        const body = (v as Record<string, unknown>).articleBody;
        if (typeof body === 'string' && (best === undefined || body.length > best.length)) best = body;
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
  return text === '' ? undefined : text;
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

export const mainContentExtractor = defineExtractor({
  name: 'extractor-main-content',
  id: 'main_content',
  builtin: true,
  description: 'The text of the main article only, blocks as line breaks ("" when none is found).',
  filter: HTML_FILTER,
  extract: (page): string => mainContent(page).text,
});
