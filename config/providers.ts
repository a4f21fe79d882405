/**
 * The built-in search providers as settings see them: which are on by
 * default (the keyless ones, and the keyed ones whose required settings are
 * set), the variables each reads (`SCOUR_PROVIDER_<ID>_URL`, `_KEY` and its
 * own), and where each sends queries (the README's list of third parties
 * is this table). Declarative only: config/search.ts builds the plugins.
 */

export interface BuiltinProviderSpec {
  readonly id: string;
  /** On by default without any setting. */
  readonly keyless: boolean;
  /** Setting names (URL, KEY, CX, ...) that must all be set for a keyed provider to be on by default. */
  readonly requires: readonly string[];
  /** Its own settings beyond URL and KEY: name -> meaning (the variable is SCOUR_PROVIDER_<ID>_<NAME>). */
  readonly settings: Readonly<Record<string, string>>;
  /** What KEY is, when it reads one. */
  readonly key?: string;
  /** Where queries go by default (the service), for the docs. */
  readonly service: string;
}

export const BUILTIN_PROVIDERS: readonly BuiltinProviderSpec[] = [
  { id: 'wikipedia', keyless: true, requires: [], settings: {}, service: 'Wikipedia (the MediaWiki Action API of https://{lang}.wikipedia.org)' },
  { id: 'openalex', keyless: true, requires: [], settings: {}, key: 'optional OpenAlex API key (api_key)', service: 'OpenAlex (https://api.openalex.org)' },
  { id: 'arxiv', keyless: true, requires: [], settings: {}, service: 'arXiv (https://export.arxiv.org)' },
  { id: 'crossref', keyless: true, requires: [], settings: {}, key: 'optional Crossref Metadata Plus token (sent as Crossref-Plus-API-Token)', service: 'Crossref (https://api.crossref.org)' },
  { id: 'hackernews', keyless: true, requires: [], settings: {}, service: 'Hacker News search by Algolia (https://hn.algolia.com)' },
  {
    id: 'stackexchange', keyless: true, requires: [], key: 'optional Stack Exchange app key (a higher daily quota)',
    settings: { SITE: 'Stack Exchange site searched (default stackoverflow).' }, service: 'Stack Exchange (https://api.stackexchange.com)',
  },
  { id: 'brave', keyless: false, requires: ['KEY'], settings: {}, key: 'Brave Search API subscription token (X-Subscription-Token)', service: 'Brave Search API (https://api.search.brave.com)' },
  {
    id: 'google', keyless: false, requires: ['KEY', 'CX'], key: 'Google API key of the Programmable Search JSON API',
    settings: { CX: 'Programmable Search Engine id (cx), required with the key.' }, service: 'Google Programmable Search JSON API (https://www.googleapis.com)',
  },
  {
    id: 'elasticsearch', keyless: false, requires: ['URL', 'INDEX'], key: 'optional API key, sent as Authorization: ApiKey <key> (or user:pass@ in the URL for basic auth)',
    settings: {
      INDEX: 'Index (or alias, or comma-separated indices) searched, required.',
      FIELDS: 'Comma-separated fields of simple_query_string, with ^boosts (default title^2,text,content,body).',
      DATE_FIELD: 'Date field time_range filters on (default published_at).',
      LANGUAGE_FIELD: 'Keyword field language filters on (unset: Scour filters by language afterwards).',
      URL_FIELD: 'Field holding the document URL (default url).',
      TITLE_FIELD: 'Field holding the title (default title).',
    },
    service: 'your own Elasticsearch or OpenSearch cluster (no default address)',
  },
];

export const BUILTIN_PROVIDER_IDS: ReadonlySet<string> = new Set(BUILTIN_PROVIDERS.map((p) => p.id));

/** The id as it appears in variable names: upper case, hyphens as underscores. */
export const envId = (id: string): string => id.toUpperCase().replace(/-/g, '_');

/** Every provider variable with its meaning (docs/configuration.md lists each). */
export function providerVariables(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of BUILTIN_PROVIDERS) {
    const pre = `SCOUR_PROVIDER_${envId(p.id)}`;
    out[`${pre}_URL`] = p.id === 'elasticsearch'
      ? 'Base URL of the Elasticsearch/OpenSearch cluster (required to enable it); user:pass@ is sent as basic auth.'
      : `Base URL replacing ${p.service.slice(p.service.lastIndexOf('(') + 1, p.service.endsWith(')') ? -1 : undefined)} (a mirror, a self-hosted instance, a test server).`;
    if (p.key !== undefined) out[`${pre}_KEY`] = `${p.key[0]!.toUpperCase()}${p.key.slice(1)}.${p.keyless ? '' : ' Setting it turns the provider on.'}`;
    for (const [name, meaning] of Object.entries(p.settings)) out[`${pre}_${name}`] = meaning;
  }
  return out;
}

/**
 * The built-in providers a set of provider settings turns on by default:
 * every keyless one, and each keyed one whose required settings are all set.
 */
export function defaultBuiltinProviders(settings: Readonly<Record<string, Readonly<Record<string, string>>>>): string[] {
  return BUILTIN_PROVIDERS
    .filter((p) => p.keyless || p.requires.every((name) => (settings[p.id]?.[name] ?? '') !== ''))
    .map((p) => p.id);
}
