/**
 * Change tracking (`track_changes` on scrape): this scrape's main content,
 * as Markdown, against the account's previous tracked scrape of the same
 * URL. The store keeps the latest version per account and URL (the
 * PageHistory port: adapters/store/{sqlite,postgres}); the unified diff is
 * made by a diff library the composition root hands in (TextDiff). Pure.
 */
import type { Effect } from 'effect';
import type { ServiceUnavailable } from './errors.js';

/** Markdown kept per account and URL, at most (a longer page is compared on its first this many characters). */
export const MAX_TRACKED_CHARS = 1_000_000;

/** A version of a page as the store keeps it. */
export interface TrackedVersion {
  readonly markdown: string;
  /** Epoch ms. */
  readonly scrapedAt: number;
}

/**
 * The latest tracked version of each page, per account. `swap` stores
 * `markdown` as the latest version of (account, url) and answers the one it
 * replaced, in one atomic step (two scrapes at once each see a version,
 * never the same one twice).
 */
export interface PageHistory {
  swap(accountId: string, url: string, markdown: string, now: number): Effect.Effect<TrackedVersion | undefined, ServiceUnavailable>;
}

/** A unified diff of two texts (the library's, e.g. jsdiff's createTwoFilesPatch); labels name the two sides. */
export type TextDiff = (before: string, after: string, labels: { readonly before: string; readonly after: string }) => string;

/** The `changes` field of a scrape's answer. */
export interface ChangesAnswer {
  readonly status: 'new' | 'same' | 'changed';
  /** When the version compared against was scraped (ISO 8601); null for a page not tracked before. */
  readonly previous_scraped_at: string | null;
  /** The unified diff of the Markdown, previous to current; null unless changed. */
  readonly diff: string | null;
}

/** The text with every run of white space made one space, and none at the ends: what "same" compares. */
export function withoutSpacing(text: string): string {
  let out = '';
  let gap = false;
  for (const ch of text) {
    if (/\s/.test(ch)) {
      gap = out !== '';
      continue;
    }
    if (gap) out += ' ';
    gap = false;
    out += ch;
  }
  return out;
}

/**
 * The Markdown as tracked: cut at MAX_TRACKED_CHARS (never inside a
 * surrogate pair), a NUL (which PostgreSQL text cannot hold) made U+FFFD.
 */
export function trackedMarkdown(markdown: string): string {
  let text = markdown;
  if (text.length > MAX_TRACKED_CHARS) {
    const cut = text.charCodeAt(MAX_TRACKED_CHARS - 1);
    text = text.slice(0, cut >= 0xd800 && cut <= 0xdbff ? MAX_TRACKED_CHARS - 1 : MAX_TRACKED_CHARS);
  }
  return text.includes('\u0000') ? text.split('\u0000').join('\ufffd') : text;
}

/** This scrape against the previous version: new, same (white space aside), or changed with the diff. */
export function compareVersions(previous: TrackedVersion | undefined, markdown: string, diff: TextDiff): ChangesAnswer {
  if (previous === undefined) return { status: 'new', previous_scraped_at: null, diff: null };
  const at = new Date(previous.scrapedAt).toISOString();
  if (withoutSpacing(previous.markdown) === withoutSpacing(markdown)) return { status: 'same', previous_scraped_at: at, diff: null };
  return { status: 'changed', previous_scraped_at: at, diff: diff(previous.markdown, markdown, { before: 'previous', after: 'current' }) };
}
