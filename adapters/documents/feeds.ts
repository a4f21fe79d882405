/**
 * RSS (2.0 and 1.0/RDF), Atom and JSON Feed: the feed's title and link and
 * its items (title, link, date, summary), parsed with htmlparser2 in XML
 * mode (JSON Feed with JSON.parse). A summary given as HTML is its text.
 * The texts of the answer are the items one after another: the feed's
 * title, then each item's title, date and summary; in Markdown each item is
 * a linked heading.
 */
import { parseDocument } from 'htmlparser2';
import type { AnyNode, Element } from 'domhandler';
import { textContent } from 'domutils';
import type { DocumentKind, DocumentRead, FeedInfo, FeedItem } from '../../core/documents.js';
import { DocumentUnreadable } from '../../core/errors.js';

/** Items read at most. */
export const MAX_FEED_ITEMS = 1000;

const isElement = (n: AnyNode): n is Element => n.type === 'tag' || n.type === 'script' || n.type === 'style';
const local = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();
const kids = (e: Element | { children: AnyNode[] }, name?: string): Element[] =>
  e.children.filter(isElement).filter((c) => name === undefined || local(c.name) === name);
const kid = (e: Element, ...names: string[]): Element | undefined => {
  for (const n of names) {
    const c = kids(e, n)[0];
    if (c !== undefined) return c;
  }
  return undefined;
};
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const orNull = (s: string | undefined | null) => (s === undefined || s === null || squash(s) === '' ? null : squash(s));
/** Text that may be HTML (an RSS description, an Atom summary of type html): its text. */
const htmlText = (s: string): string => squash(textContent(parseDocument(s).children));
const text = (e: Element | undefined, html = false): string | null => {
  if (e === undefined) return null;
  const raw = textContent(e.children);
  const t = html || e.attribs.type === 'html' || /<[a-z]/i.test(raw) ? htmlText(raw) : raw;
  return orNull(t);
};
/** A date as ISO 8601 when it can be read, else as written. */
const date = (s: string | null): string | null => {
  if (s === null) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? s : new Date(t).toISOString();
};

function rss(root: Element): FeedInfo {
  const channel = kid(root, 'channel') ?? root;
  // RSS 2.0: items in the channel; RSS 1.0 (RDF): beside it.
  const items = [...kids(channel, 'item'), ...(channel === root ? [] : kids(root, 'item'))];
  return {
    title: text(kid(channel, 'title')),
    link: text(kid(channel, 'link')),
    items: items.slice(0, MAX_FEED_ITEMS).map((i): FeedItem => ({
      title: text(kid(i, 'title'), true),
      link: text(kid(i, 'link')) ?? (kid(i, 'guid')?.attribs.ispermalink !== 'false' ? text(kid(i, 'guid')) : null),
      date: date(text(kid(i, 'pubdate', 'date', 'published', 'updated'))),
      summary: text(kid(i, 'description', 'summary', 'encoded'), true),
    })),
  };
}

const atomLink = (e: Element): string | null => {
  const links = kids(e, 'link');
  const l = links.find((x) => (x.attribs.rel ?? 'alternate') === 'alternate') ?? links[0];
  return orNull(l?.attribs.href);
};

function atom(root: Element): FeedInfo {
  return {
    title: text(kid(root, 'title')),
    link: atomLink(root),
    items: kids(root, 'entry').slice(0, MAX_FEED_ITEMS).map((e): FeedItem => ({
      title: text(kid(e, 'title')),
      link: atomLink(e),
      date: date(text(kid(e, 'published', 'updated'))),
      summary: text(kid(e, 'summary', 'content')),
    })),
  };
}

function jsonFeed(body: string): FeedInfo {
  const j = JSON.parse(body) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? orNull(v) : null);
  const items = Array.isArray(j.items) ? j.items : [];
  return {
    title: str(j.title),
    link: str(j.home_page_url),
    items: items.slice(0, MAX_FEED_ITEMS).filter((i): i is Record<string, unknown> => i !== null && typeof i === 'object').map((i): FeedItem => ({
      title: str(i.title),
      link: str(i.url) ?? str(i.external_url),
      date: date(str(i.date_published) ?? str(i.date_modified)),
      summary: str(i.summary) ?? (typeof i.content_text === 'string' ? orNull(i.content_text) : typeof i.content_html === 'string' ? orNull(htmlText(i.content_html)) : null),
    })),
  };
}

const mdEscape = (s: string) => s.replace(/([\\[\]*_`#<>])/g, '\\$1');

export function readFeed(kind: DocumentKind, bytes: Uint8Array): DocumentRead {
  const body = new TextDecoder('utf-8').decode(bytes);
  let feed: FeedInfo;
  try {
    if (kind === 'json_feed') feed = jsonFeed(body);
    else {
      const doc = parseDocument(body, { xmlMode: true });
      const root = kids(doc).find((e) => ['rss', 'rdf', 'feed'].includes(local(e.name)));
      if (root === undefined) throw new Error('no rss, RDF or feed element at the root');
      feed = local(root.name) === 'feed' ? atom(root) : rss(root);
    }
  } catch (e) {
    throw new DocumentUnreadable({ message: 'The feed could not be read', documentType: kind, details: e instanceof Error ? e.message : String(e) });
  }
  const blocks = (md: boolean) => [
    ...(feed.title === null ? [] : [md ? `# ${mdEscape(feed.title)}` : feed.title]),
    ...feed.items.map((i) => {
      const head = i.title ?? i.link ?? '';
      const title = md ? `## ${i.link !== null ? `[${mdEscape(head)}](${i.link.replace(/[()\s]/g, encodeURIComponent)})` : mdEscape(head)}` : head;
      return [title, i.date, i.summary === null ? null : md ? mdEscape(i.summary) : i.summary].filter((x) => x !== null && x !== '').join('\n\n');
    }),
  ].join('\n\n');
  const plain = blocks(false);
  return {
    info: { type: kind, pages: null, pages_read: null, title: feed.title, author: null, created: null, language: null, warnings: [] },
    text: plain, main: plain, markdown: blocks(true), feed,
  };
}
