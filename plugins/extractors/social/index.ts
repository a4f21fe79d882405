/**
 * social: the social-network profiles a page links to or declares, one item
 * per profile, `{ platform, url, handle, kind?, source_url }` (see
 * types.ts; the URL rules are in platforms.ts, Mastodon's in mastodon.ts).
 *
 * Where profiles come from:
 * - declared (first in the result): `rel="me"` on <a>, <area> and <link>;
 *   schema.org `sameAs` in JSON-LD, Microdata and RDFa (read through
 *   schema-data.ts, at any depth: an article's publisher and author count);
 *   `<meta name="twitter:site|twitter:creator">`, `<meta
 *   property="article:publisher|article:author">` when a URL, and
 *   `<meta name="fediverse:creator">`;
 * - links: every <a href> and <area href> (resolved against <base href>
 *   and the final URL, as the links extractor does), outside template/svg;
 * - text: `@user@server` fediverse addresses (Mastodon).
 * A profile reduced from a content URL (a post, a repository) comes after
 * the profiles linked directly; otherwise document order. Each profile once
 * (by platform and canonical URL).
 *
 * Bounded work: at most MAX_LINKS distinct link URLs are read (in document
 * order; later links are not even resolved) and MAX_DECLARED declared ones,
 * MAX_TEXT_CHARS of text scanned for addresses, MAX_SCHEMA_NODES structured
 * data values visited, MAX_PROFILES items returned; schema-data bounds its
 * own work. A page of 50k links takes about 0.1-0.4 s.
 */
import { defineExtractor, type Page } from '../../sdk/scrape.js';
import { HTML_FILTER } from '../../sdk/scrape.js';
import { baseUrl, isElement, isTextNode, type AnyNode } from '../../sdk/dom.js';
import { linkUrl } from '../links-reader.js';
import { extractSchemaData } from '../schema-data-reader.js';
import { addressesInText, parseFediverseAddress } from './mastodon.js';
import { profileHit, xHandleProfile } from './platforms.js';
import type { Hit, SocialProfile } from './types.js';

export { MASTODON_SERVERS } from './mastodon.js';
export { normaliseProfileUrl } from './platforms.js';
export { precisionRecall, profileKey, type Score, type ScoreCase } from './score.js';
export type { NormaliseOptions, ProfileRef, SocialKind, SocialPlatform, SocialProfile } from './types.js';

/** Distinct link URLs read per page. */
export const MAX_LINKS = 10_000;
/** Distinct declared URLs read per page (rel="me" <link>, sameAs, meta). */
export const MAX_DECLARED = 10_000;
/** Profiles returned per page. */
export const MAX_PROFILES = 100;
/** Characters of text scanned for `@user@server`. */
export const MAX_TEXT_CHARS = 1_000_000;
/** JSON values visited looking for sameAs. */
const MAX_SCHEMA_NODES = 50_000;

/** 0 declared by the page, 1 linked or mentioned, 2 reduced from a content URL. */
type Tier = 0 | 1 | 2;

class Collector {
  private readonly byKey = new Map<string, { hit: Hit; tier: Tier; order: number }>();
  private order = 0;
  /** Raw URL -> asserted, so each distinct URL is normalised once (or twice: plain, then asserted). */
  private readonly seen = new Map<string, boolean>();
  links = 0;
  declared = 0;

  add(h: Hit | undefined, declared: boolean): void {
    if (h === undefined) return;
    const tier: Tier = declared ? 0 : h.derived ? 2 : 1;
    const key = `${h.ref.platform} ${h.ref.url}`;
    const had = this.byKey.get(key);
    if (had === undefined) this.byKey.set(key, { hit: h, tier, order: this.order++ });
    else if (tier < had.tier) {
      // Promoted (a plain link later declared by sameAs): it takes the place of the sighting that promoted it.
      had.tier = tier;
      had.order = this.order++;
    }
  }

  /** A URL from a link (`anchor`: counted against MAX_LINKS) or a declaration (rel="me" <link>, sameAs, meta: MAX_DECLARED). */
  url(raw: string, declared: boolean, anchor: boolean): void {
    const before = this.seen.get(raw);
    if (before === true || (before === false && !declared)) return;
    if (before === undefined) {
      if (anchor ? this.links >= MAX_LINKS : this.declared >= MAX_DECLARED) return;
      if (anchor) this.links++;
      else this.declared++;
    }
    this.seen.set(raw, declared);
    this.add(profileHit(raw, { asserted: declared }), declared);
  }

  result(source: string): SocialProfile[] {
    return [...this.byKey.values()]
      .sort((a, b) => a.tier - b.tier || a.order - b.order)
      .slice(0, MAX_PROFILES)
      .map(({ hit: { ref } }) => {
        const p = { platform: ref.platform, url: ref.url, handle: ref.handle };
        return ref.kind === undefined ? { ...p, source_url: source } : { ...p, kind: ref.kind, source_url: source };
      });
  }
}

const relMe = (rel: string | undefined): boolean => rel !== undefined && /(?:^|\s)me(?:\s|$)/i.test(rel);
const SKIP_SUBTREE: ReadonlySet<string> = new Set(['template', 'svg', 'script', 'style']);
const NO_TEXT: ReadonlySet<string> = new Set(['textarea', 'noscript', 'select', 'option']);

function readDocument(page: Page, c: Collector): void {
  const base = baseUrl(page.document, page.finalUrl);
  let textBudget = MAX_TEXT_CHARS;
  const stack: [AnyNode, boolean][] = [];
  const roots = page.document.children;
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i]!, true]);
  while (stack.length > 0) {
    const [n, text] = stack.pop()!;
    if (isTextNode(n)) {
      if (text && textBudget > 0 && n.data.includes('@')) {
        const data = n.data.length > textBudget ? n.data.slice(0, textBudget) : n.data;
        textBudget -= data.length;
        for (const h of addressesInText(data, MAX_PROFILES)) c.add(h, false);
      }
      continue;
    }
    if (!isElement(n)) {
      if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i]!, text]);
      continue;
    }
    const name = n.name;
    if (SKIP_SUBTREE.has(name)) continue;
    const a = n.attribs;
    if (name === 'a' || name === 'area') {
      // Past the cap, links are not even resolved.
      const url = c.links < MAX_LINKS ? linkUrl(a.href, base) : undefined;
      if (url !== undefined) c.url(url, relMe(a.rel), true);
    } else if (name === 'link') {
      if (relMe(a.rel)) {
        const url = linkUrl(a.href, base);
        if (url !== undefined) c.url(url, true, false);
      }
    } else if (name === 'meta') {
      readMeta(a, c);
    }
    const childText = text && !NO_TEXT.has(name);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i]!, childText]);
  }
}

function readMeta(a: Record<string, string>, c: Collector): void {
  const key = (a.name ?? a.property ?? '').trim().toLowerCase();
  const content = a.content?.trim();
  if (content === undefined || content === '' || content.length > 2048) return;
  if (key === 'twitter:site' || key === 'twitter:creator') {
    if (c.declared++ < MAX_DECLARED) c.add(xHandleProfile(content), true);
  } else if (key === 'fediverse:creator') {
    if (c.declared++ < MAX_DECLARED) c.add(parseFediverseAddress(content), true);
  } else if (key === 'article:publisher' || key === 'article:author') {
    if (/^(?:https?:)?\/\//i.test(content)) c.url(content, true, false);
  }
}

const isSameAsKey = (k: string): boolean => k === 'sameAs' || /[/:#]sameAs$/.test(k) || k.toLowerCase() === 'sameas';

/** Every sameAs value in the structured data (strings, or objects naming a URL by @id / url / @value). */
function readSameAs(page: Page, c: Collector): void {
  let budget = MAX_SCHEMA_NODES;
  const stack: unknown[] = [...extractSchemaData(page)].reverse();
  const take = (v: unknown): void => {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (typeof x === 'string') c.url(x.trim(), true, false);
      else if (x !== null && typeof x === 'object') {
        const o = x as Record<string, unknown>;
        const u = o['@id'] ?? o.url ?? o['@value'];
        if (typeof u === 'string') c.url(u.trim(), true, false);
      }
    }
  };
  while (stack.length > 0 && budget-- > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      continue;
    }
    const entries = Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i]!;
      if (isSameAsKey(k)) take(x);
      else if (x !== null && typeof x === 'object') stack.push(x);
    }
  }
}

/** The social profiles of one page (pure: reads the parsed page only). */
export function extractSocial(page: Page): SocialProfile[] {
  const c = new Collector();
  readDocument(page, c);
  readSameAs(page, c);
  return c.result(page.finalUrl);
}

/** Profiles of several pages as one list: the first of each platform + canonical URL, with its source_url, in order. */
export function mergeProfiles(lists: readonly (readonly SocialProfile[])[]): SocialProfile[] {
  const seen = new Set<string>();
  const out: SocialProfile[] = [];
  for (const list of lists) {
    for (const p of list) {
      const key = `${p.platform} ${p.url}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(p);
    }
  }
  return out;
}

export const socialExtractor = defineExtractor({
  name: 'extractor-social',
  id: 'social',
  builtin: true,
  description: 'Social-network profiles the page links to or declares (rel="me", sameAs): platform, canonical url, handle.',
  filter: HTML_FILTER,
  extract: (page): SocialProfile[] => extractSocial(page),
  merge: mergeProfiles,
});
