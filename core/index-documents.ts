/**
 * Documents for the local index as clients send them (the admin API, the
 * CLI's JSONL import): the wire shape in snake_case, and one check that
 * turns it into an IndexDocument or says, field by field, why not. One bad
 * document never stops the others.
 */
import { DOCUMENT_TYPES, SHARED_COLLECTION, type DocumentType, type IndexDocument } from './search.js';
import { ISO_LANGUAGE_CODES } from './languages.js';
import { isCountryCode } from './countries.js';
import { hasLoneSurrogate } from './text.js';

export const DOCUMENT_LIMITS = {
  url: 8192,
  title: 2000,
  /** Characters of text (about 1 MB of English). */
  text: 1_000_000,
  meta: 500,
} as const;

/** The fields a document may have (anything else is refused, so a typo is not silently dropped). */
export const DOCUMENT_FIELDS = ['url', 'title', 'text', 'published_date', 'language', 'country', 'type', 'author', 'site_name', 'doi', 'safe'] as const;

export interface DocumentIssue {
  readonly field: string;
  readonly message: string;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** A published_date (ISO 8601 date, or date-time with a zone) as epoch ms; undefined when it is not one. */
export function parsePublished(v: string): number | undefined {
  if (!ISO_DATE.test(v) && !ISO_DATE_TIME.test(v)) return undefined;
  const ms = Date.parse(ISO_DATE.test(v) ? `${v}T00:00:00Z` : v);
  if (!Number.isFinite(ms)) return undefined;
  // Date.parse rolls 2024-02-31 over into March: the day must survive the round trip.
  if (new Date(ms).toISOString().slice(0, 10) !== v.slice(0, 10) && ISO_DATE.test(v)) return undefined;
  return ms;
}

/** Whether a collection name is well formed: `shared`, or an account id. Whether that account exists is the caller's check. */
export function collectionProblem(c: unknown): string | undefined {
  if (typeof c !== 'string' || c.length === 0) return 'must be "shared" or an account id';
  if (c === SHARED_COLLECTION) return undefined;
  return /^[A-Za-z0-9_-]{1,128}$/.test(c) ? undefined : 'must be "shared" or an account id';
}

/** Check one document; the IndexDocument, or every problem with it. */
export function toIndexDocument(raw: unknown): { ok: true; document: IndexDocument } | { ok: false; issues: DocumentIssue[] } {
  const issues: DocumentIssue[] = [];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, issues: [{ field: 'document', message: 'must be an object' }] };
  const d = raw as Record<string, unknown>;
  for (const k of Object.keys(d)) {
    if (!(DOCUMENT_FIELDS as readonly string[]).includes(k)) issues.push({ field: k.length <= 64 ? k : `${k.slice(0, 64)}...`, message: 'is not a recognised field' });
  }
  const str = (field: string, max: number, required: boolean): string | null => {
    const v = d[field];
    if (v === undefined || v === null) {
      if (required) issues.push({ field, message: 'is required' });
      return null;
    }
    if (typeof v !== 'string') {
      issues.push({ field, message: 'must be a string' });
      return null;
    }
    if (v.length > max) {
      issues.push({ field, message: `must be at most ${max} characters` });
      return null;
    }
    if (hasLoneSurrogate(v)) {
      issues.push({ field, message: 'contains a lone surrogate, which has no UTF-8 encoding' });
      return null;
    }
    return v;
  };

  const url = str('url', DOCUMENT_LIMITS.url, true);
  if (url !== null) {
    let u: URL | undefined;
    try {
      u = new URL(url);
    } catch {
      issues.push({ field: 'url', message: 'must be an absolute http or https URL' });
    }
    if (u !== undefined) {
      if (u.protocol !== 'http:' && u.protocol !== 'https:') issues.push({ field: 'url', message: 'must be an absolute http or https URL' });
      else if (u.username !== '' || u.password !== '') issues.push({ field: 'url', message: 'must not carry credentials' });
    }
  }
  const title = str('title', DOCUMENT_LIMITS.title, false) ?? '';
  const text = str('text', DOCUMENT_LIMITS.text, false) ?? '';
  if (!/[\p{L}\p{N}]/u.test(title) && !/[\p{L}\p{N}]/u.test(text) && !issues.some((i) => i.field === 'title' || i.field === 'text')) {
    issues.push({ field: 'text', message: 'a document needs a title or a text with words in it' });
  }

  let publishedAt: number | null = null;
  const published = str('published_date', 64, false);
  if (published !== null) {
    const ms = parsePublished(published);
    if (ms === undefined) issues.push({ field: 'published_date', message: 'must be an ISO 8601 date (2026-11-23) or date-time with a zone (2026-11-23T10:00:00Z)' });
    else publishedAt = ms;
  }
  const language = str('language', 16, false);
  if (language !== null && !ISO_LANGUAGE_CODES.has(language)) issues.push({ field: 'language', message: 'must be an ISO 639-1 code (two lower-case letters, such as en)' });
  const country = str('country', 16, false);
  if (country !== null && !isCountryCode(country)) issues.push({ field: 'country', message: 'must be an ISO 3166-1 alpha-2 code in upper case (such as US)' });
  const type = str('type', 32, false);
  if (type !== null && !(DOCUMENT_TYPES as readonly string[]).includes(type)) issues.push({ field: 'type', message: `must be one of: ${DOCUMENT_TYPES.join(', ')}` });
  const author = str('author', DOCUMENT_LIMITS.meta, false);
  const siteName = str('site_name', DOCUMENT_LIMITS.meta, false);
  const doi = str('doi', DOCUMENT_LIMITS.meta, false);
  if (doi !== null && !/^10\.\d{4,9}\/\S+$/.test(doi)) issues.push({ field: 'doi', message: 'must be a DOI such as 10.1000/xyz123 (without https://doi.org/)' });
  let safe: boolean | null = null;
  if (d.safe !== undefined && d.safe !== null) {
    if (typeof d.safe !== 'boolean') issues.push({ field: 'safe', message: 'must be true or false' });
    else safe = d.safe;
  }
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    document: {
      url: url!, title, text, publishedAt, language, country,
      type: (type ?? 'page') as DocumentType, author, siteName, doi, safe,
    },
  };
}
