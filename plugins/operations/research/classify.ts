/**
 * Source types for research's `sources` filter, and the quality prior that
 * enters insight confidence. A source's type comes from, in order: the
 * structured data of the page (ScholarlyArticle or citation_journal_title:
 * academic; NewsArticle: news; Report: industry_reports;
 * SocialMediaPosting or DiscussionForumPosting: social), the document type
 * the index or provider gave (academic, news, report, financial, social),
 * the search provider's record (a scholarly record: a DOI, or named only by
 * providers whose kinds are academic: academic; named only by news
 * providers: news; only by social ones: social), the domain (lists below, and .edu / .ac.xx academic hosts), and the path
 * (/news/, /research/report, /investor). Otherwise `web`.
 *
 * Quality prior (0..1): academic 0.9, industry_reports 0.75, news 0.7,
 * financial 0.7, web 0.5, social 0.3; +0.05 with a named author, +0.05
 * with a publication date, +0.05 with a DOI; at most 1.
 */
import type { DocumentType } from '../../../core/search.js';
import type { SourceMeta, SourceType } from '../../../core/research.js';

const ACADEMIC = [
  'arxiv.org', 'doi.org', 'ncbi.nlm.nih.gov', 'pubmed.ncbi.nlm.nih.gov', 'nature.com', 'science.org', 'sciencedirect.com', 'springer.com',
  'link.springer.com', 'wiley.com', 'onlinelibrary.wiley.com', 'plos.org', 'journals.plos.org', 'jstor.org', 'biorxiv.org', 'medrxiv.org',
  'ieee.org', 'ieeexplore.ieee.org', 'acm.org', 'dl.acm.org', 'researchgate.net', 'semanticscholar.org', 'frontiersin.org', 'mdpi.com',
  'cell.com', 'thelancet.com', 'nejm.org', 'bmj.com', 'jamanetwork.com', 'tandfonline.com', 'sagepub.com', 'oup.com', 'academic.oup.com',
  'cambridge.org', 'pnas.org', 'scholar.google.com', 'ssrn.com', 'papers.ssrn.com', 'openreview.net', 'aclanthology.org',
];
const NEWS = [
  'reuters.com', 'apnews.com', 'bbc.co.uk', 'bbc.com', 'nytimes.com', 'cnn.com', 'theguardian.com', 'washingtonpost.com', 'npr.org',
  'aljazeera.com', 'theverge.com', 'techcrunch.com', 'wired.com', 'arstechnica.com', 'economist.com', 'politico.com', 'axios.com',
  'latimes.com', 'usatoday.com', 'nbcnews.com', 'cbsnews.com', 'abcnews.go.com', 'theatlantic.com', 'lemonde.fr', 'spiegel.de', 'dw.com',
];
const FINANCIAL = [
  'bloomberg.com', 'ft.com', 'wsj.com', 'marketwatch.com', 'finance.yahoo.com', 'sec.gov', 'seekingalpha.com', 'morningstar.com',
  'investopedia.com', 'cnbc.com', 'barrons.com', 'fool.com', 'nasdaq.com', 'macrotrends.net',
];
const REPORTS = [
  'gartner.com', 'forrester.com', 'mckinsey.com', 'statista.com', 'idc.com', 'deloitte.com', 'pwc.com', 'bcg.com', 'accenture.com',
  'kpmg.com', 'ey.com', 'bain.com', 'oecd.org', 'worldbank.org', 'imf.org', 'iea.org', 'grandviewresearch.com', 'marketsandmarkets.com',
];
const SOCIAL = [
  'twitter.com', 'x.com', 'reddit.com', 'facebook.com', 'linkedin.com', 'youtube.com', 'instagram.com', 'tiktok.com', 'mastodon.social',
  'news.ycombinator.com', 'threads.net', 'bsky.app', 'quora.com', 'stackoverflow.com',
];

const table = new Map<string, SourceType>();
for (const [list, type] of [[ACADEMIC, 'academic'], [NEWS, 'news'], [FINANCIAL, 'financial'], [REPORTS, 'industry_reports'], [SOCIAL, 'social']] as const) {
  for (const d of list) table.set(d, type);
}

function byDomain(domain: string): SourceType | undefined {
  let d = domain.toLowerCase().replace(/^www\./, '');
  for (;;) {
    const hit = table.get(d);
    if (hit !== undefined) return hit;
    const dot = d.indexOf('.');
    if (dot === -1) break;
    d = d.slice(dot + 1);
  }
  if (/(^|\.)(edu|ac\.[a-z]{2}|edu\.[a-z]{2})$/.test(domain)) return 'academic';
  return undefined;
}

const FROM_DOCUMENT: Partial<Record<DocumentType, SourceType>> = {
  academic: 'academic', news: 'news', report: 'industry_reports', financial: 'financial', social: 'social',
};

export interface TypeSignals {
  readonly url: string;
  readonly domain: string;
  readonly documentType?: DocumentType | null;
  /** schema.org @type values found on the page. */
  readonly schemaTypes?: readonly string[];
  /** The page has citation_journal_title / citation_doi meta tags. */
  readonly scholarlyMeta?: boolean;
  /** What the search providers' record says the result is (gather.ts: a scholarly record, or the one kind of the providers that named it). */
  readonly providerType?: { readonly type: SourceType; readonly reason: string } | null;
}

const SCHEMA_TYPES: Readonly<Record<string, SourceType>> = {
  scholarlyarticle: 'academic', medicalscholarlyarticle: 'academic', thesis: 'academic',
  newsarticle: 'news', reportagenewsarticle: 'news', analysisnewsarticle: 'news', liveblogposting: 'news',
  report: 'industry_reports',
  socialmediaposting: 'social', discussionforumposting: 'social',
};

/** The type of a source and why. */
export function classifySource(s: TypeSignals): { readonly type: SourceType; readonly reason: string } {
  if (s.scholarlyMeta) return { type: 'academic', reason: 'citation_* scholarly meta tags' };
  for (const t of s.schemaTypes ?? []) {
    const hit = SCHEMA_TYPES[t.toLowerCase()];
    if (hit !== undefined) return { type: hit, reason: `structured data @type ${t}` };
  }
  const fromDoc = s.documentType ? FROM_DOCUMENT[s.documentType] : undefined;
  if (fromDoc !== undefined) return { type: fromDoc, reason: `document type ${s.documentType}` };
  if (s.providerType) return s.providerType;
  const fromDomain = byDomain(s.domain);
  if (fromDomain !== undefined) return { type: fromDomain, reason: `domain ${s.domain}` };
  let path = '';
  try {
    path = new URL(s.url).pathname.toLowerCase();
  } catch { /* no path */ }
  if (/\/(news|press-releases?|newsroom)\//.test(path)) return { type: 'news', reason: 'news path' };
  if (/\/(investors?|investor-relations|earnings|annual-report)/.test(path)) return { type: 'financial', reason: 'investor path' };
  if (/\/(reports?|whitepapers?|white-papers?)\//.test(path)) return { type: 'industry_reports', reason: 'report path' };
  return { type: 'web', reason: 'no signal of a narrower type' };
}

const PRIOR: Readonly<Record<SourceType, number>> = { academic: 0.9, industry_reports: 0.75, news: 0.7, financial: 0.7, web: 0.5, social: 0.3 };

export function qualityOf(type: SourceType, meta: SourceMeta): number {
  let q = PRIOR[type];
  if (meta.authors.length > 0) q += 0.05;
  if (meta.publishedAt !== null) q += 0.05;
  if (meta.doi !== null) q += 0.05;
  return Math.min(1, Math.round(q * 100) / 100);
}

/** Country-code top-level domain of a host, as an ISO code (uk -> GB), or undefined. */
export function countryOfDomain(domain: string): string | undefined {
  const tld = /\.([a-z]{2})$/.exec(domain.toLowerCase())?.[1];
  if (tld === undefined) return undefined;
  return tld === 'uk' ? 'GB' : tld.toUpperCase();
}
