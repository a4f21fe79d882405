/**
 * The egress policy: which targets the service may send requests to (scrape
 * fetches, the browser's proxy, webhooks). Pure: parses every spelling of an
 * IP literal that a URL parser or inet_aton accepts, classifies addresses
 * into special-purpose ranges (RFC 6890 and the IANA registries, plus the
 * cloud metadata endpoints), and checks a URL before any name is resolved.
 * The I/O side (DNS, the connected-address check, redirects) lives in
 * adapters/egress and applies the same verdicts to resolved addresses.
 */

export type AddressClass =
  | 'public' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'unspecified'
  | 'metadata' | 'broadcast' | 'reserved' | 'documentation' | 'benchmarking' | 'invalid';

/** What the guard allows. */
export interface EgressPolicy {
  /** Allow loopback, private, link-local and CGNAT targets (self-hosting on a LAN, tests). Never metadata, multicast, broadcast, unspecified. */
  readonly allowPrivate: boolean;
  /**
   * Extra allow-list consulted before the class rules: `true` allows the
   * address whatever its class; `false` leaves the decision to the rules.
   * Lets tests allow 127.0.0.1 while 127.0.0.2 stays refused.
   */
  readonly allowAddress?: ((ip: string) => boolean) | undefined;
}

// ---------------------------------------------------------------------------
// Parsing

/** One IPv4 part as WHATWG's IPv4 number parser or inet_aton reads it (0x.. hex, 0.. octal, else decimal). */
function ipv4Number(part: string): number | undefined {
  if (/^0[xX][0-9a-fA-F]*$/.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return parseInt(part.slice(1), 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return parseInt(part, 10);
  return undefined;
}

/** IPv4 as a 32-bit unsigned number, for every inet_aton / WHATWG spelling ("127.1", "0x7f000001", "0177.0.0.1", "2130706433"). */
function parseIpv4(host: string): number | undefined {
  let parts = host.split('.');
  // WHATWG tolerates one trailing dot ("127.0.0.1.").
  if (parts.length > 1 && parts[parts.length - 1] === '') parts = parts.slice(0, -1);
  if (parts.length === 0 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    if (p === '' || p.length > 40) return undefined;
    const n = ipv4Number(p);
    if (n === undefined || !Number.isFinite(n)) return undefined;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255)) return undefined;
  // The last part fills the remaining bytes: "127.1" is 127.0.0.1, "10.65535" is 10.0.255.255.
  if (last >= 2 ** (8 * (5 - parts.length))) return undefined;
  let value = 0;
  nums.forEach((n, i) => { value += n * 2 ** (8 * (3 - i)); });
  return value + last;
}

/** The strict dotted-quad IPv4 that may end an IPv6 literal ("::ffff:127.0.0.1"). */
function parseDottedQuad(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value;
}

/** IPv6 as eight 16-bit groups; zone ids ("%eth0") are refused. */
function parseIpv6(s: string): number[] | undefined {
  if (s.includes('%') || s.length > 64) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (text: string, allowV4: boolean): number[] | undefined => {
    if (text === '') return [];
    const out: number[] = [];
    const items = text.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as string;
      if (allowV4 && i === items.length - 1 && item.includes('.')) {
        const v4 = parseDottedQuad(item);
        if (v4 === undefined) return undefined;
        out.push(Math.floor(v4 / 65536), v4 % 65536);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return undefined;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  if (halves.length === 1) {
    const all = groupsOf(s, true);
    return all && all.length === 8 ? all : undefined;
  }
  const head = groupsOf(halves[0] as string, false);
  const tail = groupsOf(halves[1] as string, true);
  if (!head || !tail || head.length + tail.length > 7) return undefined;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

const v4Text = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** RFC 5952 text (what WHATWG URL serialises): lower case, the first longest run of 2+ zero groups as "::". */
function v6Text(g: readonly number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

type Parsed = { readonly v: 4; readonly n: number } | { readonly v: 6; readonly g: readonly number[] };

function parse(host: string): Parsed | undefined {
  let h = host.trim();
  if (h.startsWith('[')) {
    if (!h.endsWith(']')) return undefined;
    const g = parseIpv6(h.slice(1, -1));
    return g ? { v: 6, g } : undefined;
  }
  if (h.includes(':')) {
    const g = parseIpv6(h);
    return g ? { v: 6, g } : undefined;
  }
  h = h.toLowerCase();
  const n = parseIpv4(h);
  return n === undefined ? undefined : { v: 4, n };
}

/**
 * The canonical text of an IP literal (dotted quad for IPv4, RFC 5952 for
 * IPv6, so "::ffff:127.0.0.1" gives "::ffff:7f00:1" as WHATWG URL does), or
 * undefined when `host` is not one (a name, or a zoned IPv6).
 */
export function parseIpLiteral(host: string): string | undefined {
  const p = parse(host);
  if (!p) return undefined;
  return p.v === 4 ? v4Text(p.n) : v6Text(p.g);
}

// ---------------------------------------------------------------------------
// Classification

const v4 = (a: number, b: number, c: number, d: number): number => ((a * 256 + b) * 256 + c) * 256 + d;

/** Specific addresses first, then ranges; the first match wins. */
const V4_RULES: ReadonlyArray<readonly [number, number, AddressClass]> = [
  // Cloud metadata endpoints (AWS/GCP/Azure/DO/Oracle 169.254.169.254, AWS ECS 169.254.170.2,
  // Tencent 169.254.0.23, Alibaba 100.100.100.200, Oracle 192.0.0.192).
  [v4(169, 254, 169, 254), 32, 'metadata'],
  [v4(169, 254, 170, 2), 32, 'metadata'],
  [v4(169, 254, 0, 23), 32, 'metadata'],
  [v4(100, 100, 100, 200), 32, 'metadata'],
  [v4(192, 0, 0, 192), 32, 'metadata'],
  [v4(255, 255, 255, 255), 32, 'broadcast'],
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'cgnat'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'documentation'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'benchmarking'],
  [v4(198, 51, 100, 0), 24, 'documentation'],
  [v4(203, 0, 113, 0), 24, 'documentation'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function classifyV4(n: number): AddressClass {
  for (const [base, bits, cls] of V4_RULES) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return cls;
  }
  return 'public';
}

/** g starts with the given groups, then `bits` of prefix (multiple of 4 not required). */
function inV6(g: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i * 16 < bits; i++) {
    const take = Math.min(16, bits - i * 16);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((g[i] as number) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

const low32 = (g: readonly number[]): number => (g[6] as number) * 65536 + (g[7] as number);

function classifyV6(g: readonly number[]): AddressClass {
  const zeroUpTo = (k: number) => g.slice(0, k).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  // ::ffff:0:0/96 (IPv4-mapped): the socket talks IPv4 to the embedded address.
  if (zeroUpTo(5) && g[5] === 0xffff) return classifyV4(low32(g));
  // ::/96 (IPv4-compatible, deprecated): as restrictive as the embedded address, never public.
  if (zeroUpTo(6)) {
    const c = classifyV4(low32(g));
    return c === 'public' ? 'reserved' : c;
  }
  // AWS IMDS over IPv6.
  if (v6Text(g) === 'fd00:ec2::254') return 'metadata';
  // NAT64 (well-known and local-use prefixes) reaches the embedded IPv4.
  if (inV6(g, [0x64, 0xff9b], 96) || inV6(g, [0x64, 0xff9b, 1], 48)) return classifyV4(low32(g));
  if (inV6(g, [0x100], 64)) return 'reserved'; // discard-only
  if (inV6(g, [0x2001, 0x2], 48)) return 'benchmarking';
  if (inV6(g, [0x2001, 0xdb8], 32)) return 'documentation';
  if (inV6(g, [0x2001], 32)) return 'reserved'; // Teredo: the real peer is hidden in the address
  if (inV6(g, [0x2001, 0x10], 28) || inV6(g, [0x2001, 0x20], 28)) return 'reserved'; // ORCHID
  if (inV6(g, [0x3fff], 20)) return 'documentation';
  // 6to4: traffic ends at the embedded IPv4.
  if (inV6(g, [0x2002], 16)) return classifyV4((g[1] as number) * 65536 + (g[2] as number));
  if (inV6(g, [0xfc00], 7)) return 'private';
  if (inV6(g, [0xfe80], 10)) return 'link-local';
  if (inV6(g, [0xfec0], 10)) return 'private'; // site-local, deprecated
  if (inV6(g, [0xff00], 8)) return 'multicast';
  // Only 2000::/3 is allocated as global unicast.
  if (!inV6(g, [0x2000], 3)) return 'reserved';
  return 'public';
}

/** The class of an IP address in any spelling parseIpLiteral accepts; 'invalid' for anything else. */
export function classifyAddress(ip: string): AddressClass {
  const p = parse(ip);
  if (!p) return 'invalid';
  return p.v === 4 ? classifyV4(p.n) : classifyV6(p.g);
}

const METADATA_HOSTNAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.azure.internal',
  'metadata.oraclecloud.com',
]);

/** Names that designate a cloud metadata service (refused before any lookup). */
export function isMetadataHostname(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/(?<!\.)\.+$/, '');
  return METADATA_HOSTNAMES.has(h);
}

/** Names that always mean this machine (RFC 6761). */
export function isLocalhostName(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/(?<!\.)\.+$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'link-local', 'cgnat']);

const CLASS_TEXT: Record<AddressClass, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private-network address',
  'link-local': 'a link-local address',
  cgnat: 'a carrier-grade NAT (shared) address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified ("this host") address',
  metadata: 'a cloud metadata endpoint',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  documentation: 'a documentation-only address',
  benchmarking: 'a benchmarking address',
  invalid: 'not a valid IP address',
};

/** Strip an IPv6 zone ("fe80::1%eth0") so a resolved or connected address can be classified. */
export function stripZone(ip: string): string {
  const i = ip.indexOf('%');
  return i < 0 ? ip : ip.slice(0, i);
}

/** The verdict on one address under a policy: true, or why not. */
export function addressVerdict(ip: string, policy: EgressPolicy): true | string {
  const bare = stripZone(ip);
  const canonical = parseIpLiteral(bare);
  if (canonical !== undefined && policy.allowAddress?.(canonical)) return true;
  const cls = classifyAddress(bare);
  if (cls === 'public') return true;
  if (policy.allowPrivate && PRIVATE_CLASSES.has(cls)) return true;
  const shown = canonical ?? bare;
  return cls === 'invalid' ? `${shown} is not a valid IP address` : `${shown} is ${CLASS_TEXT[cls]}`;
}

export function isAllowedAddress(ip: string, allowPrivate: boolean): true | string {
  return addressVerdict(ip, { allowPrivate });
}

/** The URL text without credentials, for messages. */
export function redactUrl(raw: string | URL): string {
  try {
    const u = new URL(String(raw));
    if (u.username || u.password) {
      u.username = '';
      u.password = '';
    }
    return u.href;
  } catch {
    return String(raw).replace(/\/\/[^/@]*@/, '//');
  }
}

/**
 * The URL-level check, before any name is resolved: http(s) only, no
 * credentials, a host and a port 1-65535, no metadata name; an IP-literal
 * host (in any spelling: WHATWG has already canonicalised it) and the
 * localhost names are judged by their class. Names are judged again once
 * resolved (adapters/egress).
 *
 * `kind` says why: `syntax`, not an absolute URL at all (a malformed field,
 * 400 MISSING_PARAMETER); `form`, a URL the guard refuses by its form (a
 * scheme other than http and https, credentials, port 0); `address`, a host
 * the guard refuses. The API answers `form` and `address` alike with 400
 * TARGET_NOT_ALLOWED, in a request as in a redirect.
 */
export type TargetCheck = { ok: true; url: URL } | { ok: false; reason: string; kind: 'syntax' | 'form' | 'address' };

export function checkTargetUrl(raw: string, opts: EgressPolicy): TargetCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid absolute URL', kind: 'syntax' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: `the ${url.protocol.replace(/:$/, '')} scheme is not allowed (http and https only)`, kind: 'form' };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'credentials in the URL (user:password@) are not allowed', kind: 'form' };
  }
  const host = url.hostname;
  if (host === '') return { ok: false, reason: 'the URL has no host', kind: 'form' };
  if (url.port !== '') {
    const port = Number(url.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, reason: `port ${url.port} is not allowed`, kind: 'form' };
  }
  if (isMetadataHostname(host)) return { ok: false, reason: `${host} is a cloud metadata endpoint`, kind: 'address' };
  const literal = parseIpLiteral(host);
  if (literal !== undefined) {
    const verdict = addressVerdict(literal, opts);
    return verdict === true ? { ok: true, url } : { ok: false, reason: verdict, kind: 'address' };
  }
  if (isLocalhostName(host)) {
    // Judged as 127.0.0.1 would be; the resolved addresses are checked again.
    const verdict = addressVerdict('127.0.0.1', { allowPrivate: opts.allowPrivate });
    if (verdict !== true && !opts.allowAddress) return { ok: false, reason: `${host} is ${CLASS_TEXT.loopback}`, kind: 'address' };
  }
  return { ok: true, url };
}

/**
 * A URL field of a request as the validate stage reports it (undefined when
 * it passes): not a URL, a 400 like any bad field; refused by the guard, a
 * refused target (TARGET_NOT_ALLOWED when nothing else is wrong).
 */
export function targetIssue(field: string, raw: unknown, opts: EgressPolicy): { field: string; message: string; refused?: true } | undefined {
  if (typeof raw !== 'string') return undefined;
  const c = checkTargetUrl(raw, opts);
  if (c.ok) return undefined;
  return c.kind === 'syntax' ? { field, message: c.reason } : { field, message: c.reason, refused: true };
}
