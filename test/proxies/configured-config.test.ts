/**
 * SCOUR_PROXIES parsing: both forms, the ids they get, and every hostile or
 * mistaken form reported at once with a message that names the entry and
 * never repeats a secret.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/env.js';
import { parseProxyConfig, redactProxyUrl } from '../../plugins/proxies/configured.js';
import { countryProblem, ISO_COUNTRY_CODES } from '../../core/countries.js';

const SECRET = 'Sup3rS3cretPw';
const USER = 'cust-77812';

function issuesOf(raw: string): readonly string[] {
  try {
    parseProxyConfig(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    expect(e.code).toBe('CONFIG_INVALID');
    for (const text of [e.message, ...e.issues]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(USER);
    }
    return e.issues;
  }
  throw new Error('expected a ConfigError');
}

describe('parseProxyConfig: valid forms', () => {
  it('empty or blank means no proxies', () => {
    expect(parseProxyConfig('')).toEqual([]);
    expect(parseProxyConfig('  \n ')).toEqual([]);
  });

  it('reads the list form with commas and newlines, types in any case, optional country', () => {
    const raw = [
      `datacenter:US=http://${USER}:${SECRET}@dc1.example.net:8080,`,
      'DataCenter=http://10.0.0.5:3128',
      ' residential:DE = https://user-country-de:pw@gw.example.net:7000 ,,',
      'datacenter:US=http://dc2.example.net:8080',
      'residential:*=http://gw.example.net:7001',
    ].join('\n');
    expect(parseProxyConfig(raw)).toEqual([
      { url: `http://${USER}:${SECRET}@dc1.example.net:8080`, type: 'datacenter', country: 'US', id: 'datacenter-US-1' },
      { url: 'http://10.0.0.5:3128', type: 'datacenter', country: undefined, id: 'datacenter-any-1' },
      { url: 'https://user-country-de:pw@gw.example.net:7000', type: 'residential', country: 'DE', id: 'residential-DE-1' },
      { url: 'http://dc2.example.net:8080', type: 'datacenter', country: 'US', id: 'datacenter-US-2' },
      { url: 'http://gw.example.net:7001', type: 'residential', country: undefined, id: 'residential-any-1' },
    ]);
  });

  it('keeps percent-encoded credentials, drops a trailing slash and default ports', () => {
    const [a, b] = parseProxyConfig('datacenter=http://u%2Cser:p%40ss%2Cword@h.example:80/,datacenter=https://user@h2.example:443');
    expect(a!.url).toBe('http://u%2Cser:p%40ss%2Cword@h.example');
    expect(b!.url).toBe('https://user@h2.example');
  });

  it('reads the JSON form, with explicit ids and null country', () => {
    const raw = JSON.stringify([
      { url: 'http://u:p@a.example:1', type: 'residential', country: 'FR', id: 'res-fr' },
      { url: 'http://b.example:2', type: 'datacenter' },
      { url: 'http://c.example:3', type: 'datacenter', country: null },
    ]);
    expect(parseProxyConfig(raw)).toEqual([
      { url: 'http://u:p@a.example:1', type: 'residential', country: 'FR', id: 'res-fr' },
      { url: 'http://b.example:2', type: 'datacenter', country: undefined, id: 'datacenter-any-1' },
      { url: 'http://c.example:3', type: 'datacenter', country: undefined, id: 'datacenter-any-2' },
    ]);
  });

  it('generated ids skip ids taken explicitly; IPv6 hosts work', () => {
    const raw = JSON.stringify([
      { url: 'http://a.example:1', type: 'datacenter', country: 'US' },
      { url: 'http://[::1]:3128', type: 'datacenter', country: 'US', id: 'datacenter-US-2' },
      { url: 'http://c.example:3', type: 'datacenter', country: 'US' },
    ]);
    expect(parseProxyConfig(raw).map((e) => e.id)).toEqual(['datacenter-US-1', 'datacenter-US-2', 'datacenter-US-3']);
    expect(parseProxyConfig(raw)[1]!.url).toBe('http://[::1]:3128');
  });
});

describe('parseProxyConfig: every problem, no secret', () => {
  const cases: [string, string, RegExp][] = [
    ['no "="', `http://${USER}:${SECRET}@h.example:8080`, /entry 1: expected type\[:COUNTRY\]=URL.*type is missing/],
    ['unencoded comma in a password', `datacenter=http://${USER}:ab,${SECRET}@h.example:1`, /entry 3: expected type\[:COUNTRY\]=URL.*%2C/],
    ['unknown type', 'mobile:US=http://h.example:1', /entry 1 \(mobile:US\): type must be datacenter or residential \(got "mobile"\)/],
    ['lower-case country', 'datacenter:us=http://h.example:1', /country must be upper case: US/],
    ['UK for GB', 'residential:UK=http://h.example:1', /ISO 3166-1 alpha-2 code: GB, not UK/],
    ['unassigned country', 'residential:ZZ=http://h.example:1', /ISO 3166-1 alpha-2 code in upper case, e\.g\. US or DE \(got "ZZ"\)/],
    ['three letters', 'residential:USA=http://h.example:1', /ISO 3166-1 alpha-2/],
    ['empty country', 'residential:=http://h.example:1', /ISO 3166-1 alpha-2/],
    ['too many colons', 'residential:US:x=http://h.example:1', /must be type or type:COUNTRY/],
    ['socks', `datacenter=socks5://${USER}:${SECRET}@h.example:1080`, /must start with http:\/\/ or https:\/\/ \(got socks5, which is not supported\)/],
    ['no scheme (user name parses as the scheme)', `datacenter=${USER}:${SECRET}@h.example:8080`, /entry 1 \(datacenter\): the proxy URL must start with http:\/\/ or https:\/\/$/],
    ['not a URL', `datacenter=http://${USER}:${SECRET}@`, /the URL is not valid/],
    ['bad port', `datacenter=http://${USER}:${SECRET}@h.example:99999`, /the URL is not valid/],
    ['port 0', `datacenter=http://${USER}:${SECRET}@h.example:0`, /port must be from 1 to 65535/],
    ['path', `datacenter=http://${USER}:${SECRET}@h.example:1/p`, /without path, query or fragment/],
    ['query', `datacenter=http://${USER}:${SECRET}@h.example:1?k=${SECRET}`, /without path, query or fragment/],
    ['fragment', `datacenter=http://h.example:1#${SECRET}`, /without path, query or fragment/],
    ['empty URL', 'datacenter=', /url is missing/],
    ['space-separated entries', `datacenter=http://h.example:1 residential=http://${USER}:${SECRET}@g.example:2`, /contains whitespace; separate entries with commas or newlines/],
    ['secret in the label', `http://${USER}:${SECRET}@h.example/?a=http://x`, /entry 1: the part before "=" must be type or type:COUNTRY/],
  ];
  for (const [name, raw, pattern] of cases) {
    it(name, () => {
      const issues = issuesOf(name === 'unencoded comma in a password' ? `datacenter=http://ok.example:1,${raw}` : raw);
      expect(issues.some((i) => pattern.test(i)), issues.join('\n')).toBe(true);
    });
  }

  it('duplicates are reported against the first listing, credentials included in the comparison', () => {
    const issues = issuesOf([
      `datacenter:US=http://${USER}:${SECRET}@h.example:8080`,
      `residential:US=http://${USER}:${SECRET}@H.EXAMPLE:8080/`,
      `datacenter:US=http://other:${SECRET}@h.example:8080`,
    ].join(','));
    expect(issues).toEqual(['SCOUR_PROXIES entry 2 (residential:US): the same proxy URL is already listed as SCOUR_PROXIES entry 1 (datacenter:US)']);
  });

  it('reports every problem at once, each naming its entry', () => {
    const issues = issuesOf(['mobile=http://a.example:1', 'datacenter:us=ftp://b.example', 'datacenter=http://ok.example:1'].join('\n'));
    expect(issues).toEqual([
      'SCOUR_PROXIES entry 1 (mobile): type must be datacenter or residential (got "mobile")',
      'SCOUR_PROXIES entry 2 (datacenter:us): country must be upper case: US (got "us")',
      'SCOUR_PROXIES entry 2 (datacenter:us): the proxy URL must start with http:// or https:// (got ftp, which is not supported)',
    ]);
  });

  it('uses the given source name', () => {
    expect(() => parseProxyConfig('bad', 'proxies.json')).toThrow(/proxies\.json entry 1/);
  });

  it('JSON: syntax error without echoing the text', () => {
    const issues = issuesOf(`[{"url": "http://${USER}:${SECRET}@h.example:1", "type": }]`);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^SCOUR_PROXIES is not valid JSON/);
  });

  it('JSON: wrong shapes and fields', () => {
    expect(issuesOf('[]x')[0]).toMatch(/not valid JSON/);
    const issues = issuesOf(JSON.stringify([
      'http://h.example:1',
      { url: `http://${USER}:${SECRET}@h.example:1`, type: 'datacenter', region: 'us', [SECRET]: 1 },
      { url: 42, type: 'datacenter' },
      { url: 'http://h2.example:1', country: 'US' },
      { url: 'http://h3.example:1', type: 'residential', country: 840 },
      { url: 'http://h4.example:1', type: 'residential', id: 'has space' },
      { url: 'http://h5.example:1', type: 'residential', id: 'same' },
      { url: 'http://h6.example:1', type: 'residential', id: 'same' },
    ]));
    expect(issues).toEqual([
      'SCOUR_PROXIES[0]: must be an object {"url", "type", "country"}',
      'SCOUR_PROXIES[1]: unknown field(s) region, ?; allowed: url, type, country, id',
      'SCOUR_PROXIES[2]: url is missing',
      'SCOUR_PROXIES[3]: type is missing (datacenter or residential)',
      'SCOUR_PROXIES[4]: country must be a string such as "US"',
      'SCOUR_PROXIES[5]: id must be 1-64 characters of A-Z a-z 0-9 . _ -',
      'SCOUR_PROXIES[7]: id "same" is already used by SCOUR_PROXIES[6]',
    ]);
    expect(issuesOf('{"url": "http://h.example:1"}')).toEqual(['SCOUR_PROXIES must be a JSON array of {"url", "type", "country"} objects']);
  });
});

describe('helpers', () => {
  it('redactProxyUrl masks credentials', () => {
    expect(redactProxyUrl(`http://${USER}:${SECRET}@h.example:8080`)).toBe('http://***@h.example:8080');
    expect(redactProxyUrl('https://h.example:8443')).toBe('https://h.example:8443');
    expect(redactProxyUrl(`${SECRET}`)).toBe('[invalid proxy URL]');
  });

  it('country codes: the 249 assigned ones', () => {
    expect(ISO_COUNTRY_CODES.size).toBe(249);
    for (const c of ['US', 'DE', 'GB', 'JP', 'BR', 'ZA', 'AX', 'SS']) expect(countryProblem(c)).toBeUndefined();
    for (const c of ['UK', 'EU', 'XK', 'SU', 'us', 'U', 'USA', '']) expect(countryProblem(c)).toBeDefined();
    expect(countryProblem(SECRET)).not.toContain(SECRET);
  });
});
