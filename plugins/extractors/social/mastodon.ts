/**
 * Mastodon (and the fediverse servers that share its URL shapes).
 *
 * `https://server/@user` is Mastodon's profile URL, but `/@user` is also how
 * Medium, Substack, Figma, Replit, Observable ... name their users, and any
 * site may route `/@anything`. So a URL counts only when:
 * - its host is one of a small built-in list of big Mastodon servers
 *   (MASTODON_SERVERS), or
 * - the page asserts the link is the same entity (rel="me", sameAs,
 *   article:publisher) and the host is a plausible domain that is not a known
 *   non-fediverse site with `/@` profiles (NOT_FEDIVERSE).
 * The other form, `@user@server` in the page's text, is fediverse-only
 * syntax, so any server counts there (not e-mail: it must start with "@",
 * after the start or a non-address character, and not run on into more
 * address characters).
 *
 * Canonical: `https://server/@user`, server and user in lower case (Mastodon
 * looks usernames up case-insensitively); handle `user@server`. A remote
 * account seen through another server (`https://a.example/@bob@b.example`)
 * is canonicalised to its home server.
 */
import { hit, type Hit } from './types.js';

/** Big general and topical instances (exact host names). Not exhaustive: the rel="me" and text forms cover the rest. */
export const MASTODON_SERVERS: ReadonlySet<string> = new Set([
  'mastodon.social', 'mastodon.online', 'mastodon.world', 'mas.to', 'mstdn.social', 'mstdn.party', 'mastodon.cloud',
  'mastodon.xyz', 'mastodon.art', 'mastodon.green', 'mastodon.sdf.org', 'mastodonapp.uk', 'mastodon.ie', 'mastodon.scot',
  'mastodon.nz', 'aus.social', 'mstdn.ca', 'mastodon.nl', 'mastodon.uno', 'toot.community', 'toot.cafe', 'social.coop',
  'fosstodon.org', 'hachyderm.io', 'infosec.exchange', 'ioc.exchange', 'techhub.social', 'universeodon.com', 'indieweb.social',
  'floss.social', 'social.linux.pizza', 'ruby.social', 'phpc.social', 'mastodon.gamedev.place', 'tech.lgbt', 'social.lol',
  'sigmoid.social', 'mathstodon.xyz', 'scholar.social', 'masto.ai', 'mstdn.science', 'sciences.social', 'ecoevo.social',
  'journa.host', 'newsie.social', 'w3c.social', 'hci.social', 'techpolicy.social', 'kolektiva.social', 'wandering.shop',
  'octodon.social', 'qoto.org', 'sfba.social',
  // German, French, Japanese ...
  'chaos.social', 'social.tchncs.de', 'norden.social', 'troet.cafe', 'det.social', 'muenchen.social', 'nrw.social',
  'social.bund.de', 'piaille.fr', 'mamot.fr', 'framapiaf.org', 'mstdn.jp', 'pawoo.net', 'mastodon-japan.net', 'fedibird.com',
  'social.vivaldi.net',
]);

/** Sites (and their subdomains) with `/@user` pages that are not fediverse profiles. */
const NOT_FEDIVERSE = [
  'medium.com', 'substack.com', 'producthunt.com', 'figma.com', 'replit.com', 'observablehq.com', 'glitch.com', 'hackmd.io',
  'hashnode.com', 'tumblr.com', 'vimeo.com', 'dev.to', 'twitch.tv', 'soundcloud.com', 'behance.net', 'dribbble.com',
  'patreon.com', 'ko-fi.com', 'buymeacoffee.com', 'linktr.ee', 'about.me', 'flickr.com', 'odysee.com', 'rumble.com',
  'kick.com', 'snapchat.com', 'vsco.co', 'npmjs.com', 'bsky.app', 'threads.net', 'threads.com', 'tiktok.com', 'youtube.com',
];

/** E-mail providers: `@name@gmail.com` in text is a mangled address, not an account. */
const MAIL_HOSTS: ReadonlySet<string> = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'icloud.com', 'me.com',
  'aol.com', 'gmx.de', 'gmx.net', 'web.de', 't-online.de', 'proton.me', 'protonmail.com', 'mail.ru', 'yandex.ru', 'qq.com',
]);

/** Mastodon's username rule: letters, digits, "_", with "." and "-" inside; 30 at most. */
export const MASTODON_USER = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,28}[A-Za-z0-9_])?$/;
/** A DNS name with an alphabetic (or IDN) top-level label: no IP addresses, no single labels. */
const DOMAIN = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

const underAny = (host: string, list: readonly string[]): boolean => list.some((d) => host === d || host.endsWith(`.${d}`));

/** A server a fediverse address may name. */
export function plausibleServer(host: string): boolean {
  return DOMAIN.test(host) && !underAny(host, NOT_FEDIVERSE) && !MAIL_HOSTS.has(host);
}

/** The profile of `user` on `server`, when both are well formed. */
export function mastodonProfile(user: string, server: string, derived: boolean): Hit | undefined {
  const s = server.toLowerCase().replace(/\.$/, '');
  if (!MASTODON_USER.test(user) || !plausibleServer(s)) return undefined;
  const u = user.toLowerCase();
  return hit('mastodon', `https://${s}/@${u}`, `${u}@${s}`, undefined, derived);
}

/** `@user@server` (or `user@server`, as in a fediverse:creator meta). */
export function parseFediverseAddress(text: string, derived = false): Hit | undefined {
  const m = /^@?([^@\s]+)@([^@\s]+)$/.exec(text.trim());
  if (m === null) return undefined;
  return mastodonProfile(m[1]!, toAsciiHost(m[2]!), derived);
}

function toAsciiHost(host: string): string {
  if (/^[\x21-\x7e]*$/.test(host)) return host.toLowerCase();
  try {
    return new URL(`https://${host}/`).hostname;
  } catch {
    return '';
  }
}

/** A Mastodon URL: `https://server/@user[/...]`, `/@user@remote`, `/web/@user`, and `/users/user` (ActivityPub) on known servers. */
export function mastodonUrl(host: string, segs: readonly string[], asserted: boolean): Hit | undefined {
  const known = MASTODON_SERVERS.has(host);
  if (!known && !(asserted && plausibleServer(host))) return undefined;
  let rest = segs;
  if (rest[0] === 'web' && rest[1]?.startsWith('@') === true) rest = rest.slice(1);
  const first = rest[0];
  if (first === undefined) return undefined;
  if (first.startsWith('@')) {
    const parts = first.slice(1).split('@');
    if (parts.length > 2) return undefined;
    // /@user.rss is the account's feed.
    const user = parts.length === 1 ? parts[0]!.replace(/\.rss$/i, '') : parts[0]!;
    return mastodonProfile(user, parts.length === 2 ? toAsciiHost(parts[1]!) : host, rest.length > 1 || user !== parts[0]);
  }
  if (known && first === 'users' && rest[1] !== undefined) return mastodonProfile(rest[1], host, rest.length > 2);
  return undefined;
}

/**
 * `@user@server` mentions in text: after the start or a character that
 * cannot be part of an address (whitespace, brackets, quotes, CJK
 * punctuation ...), and not followed by more address characters (a final
 * "." ending a sentence is fine).
 */
const ADDRESS_IN_TEXT =
  /(?<![\p{L}\p{N}\p{M}_.+\-@/=%:])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,28}[A-Za-z0-9_])?)@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59}))(?![\p{L}\p{N}_@-]|\.[\p{L}\p{N}_-])/gu;

/** Fediverse addresses mentioned in a text, in order (at most `max`). */
export function addressesInText(text: string, max: number): Hit[] {
  const out: Hit[] = [];
  const first = text.indexOf('@');
  if (first < 0 || text.indexOf('@', first + 1) < 0) return out;
  ADDRESS_IN_TEXT.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (out.length < max && (m = ADDRESS_IN_TEXT.exec(text)) !== null) {
    const h = mastodonProfile(m[1]!, m[2]!, false);
    if (h !== undefined) out.push(h);
  }
  return out;
}
