/**
 * URL -> social profile, one rule per network. Pure: no page, no network.
 *
 * How a URL is read:
 * 1. http(s) only (plus Telegram's `tg://resolve`), no user info, no port;
 *    a scheme-less `twitter.com/x` or `//x.com/x` is read as https.
 * 2. The host picks the network: its known hosts after dropping one `www.`,
 *    `m.` or `mobile.`, plus the network's own variants (country and locale
 *    subdomains, `old.reddit.com`, `gist.github.com`, `pinterest.de` ...).
 *    Exact host matches only: `notx.com` and `x.com.evil.example` are not X.
 *    A host that picks a network is decided by that network's rule alone.
 * 3. The path is read against the network's URL structure:
 *    - share and intent endpoints and the network's own pages are a
 *      RESERVED first segment (every network keeps its routes out of the
 *      username namespace, so a route name can never be an account), plus
 *      COMMON_RESERVED for all of them (about, privacy, login, home,
 *      hashtag, search, explore, settings, help, tos, policies, share ...);
 *    - a segment that looks like a file (`x.php`, `robots.txt`) is never an
 *      account;
 *    - the handle must pass the network's own rule (length and characters),
 *      which already rules out most non-account paths (`privacy-policy` has a
 *      hyphen X and Instagram do not allow; `home` is too short for Telegram);
 *    - content URLs are reduced to their owner only where the URL structure
 *      puts the owner in a known place (`x.com/user/status/1`,
 *      `tiktok.com/@user/video/1`, `github.com/user/repo`); where it does not
 *      (`instagram.com/p/...`, `youtube.com/watch`, `pinterest.com/pin/1`,
 *      `reddit.com/r/sub/comments/...` whose author is not in the URL) the
 *      URL is not a profile. Under a bare `/{handle}` (X, Facebook,
 *      Instagram) only the network's known profile tabs may follow, so
 *      `twitter.com/en/tos` is not the account "en".
 * 4. Canonical form: the network's one host, the profile path only, no
 *    query, fragment or trailing slash, lower case where the network
 *    ignores case (everywhere but YouTube channel ids and invite codes).
 */
import { MASTODON_SERVERS, mastodonUrl } from './mastodon.js';
import { hit, type Hit, type NormaliseOptions, type ProfileRef } from './types.js';

type Rule = (segs: readonly string[], url: URL, host: string) => Hit | undefined;

/** Routes of (nearly) every network that share the username namespace. */
const COMMON_RESERVED = [
  'about', 'privacy', 'login', 'logout', 'signin', 'signup', 'register', 'join', 'home', 'hashtag', 'hashtags', 'search',
  'explore', 'settings', 'help', 'tos', 'terms', 'policies', 'policy', 'legal', 'share', 'sharer', 'intent', 'dialog',
  'download', 'jobs', 'careers', 'press', 'developers', 'developer', 'api', 'oauth', 'account', 'accounts', 'notifications',
  'messages', 'static', 'assets', 'security', 'safety', 'ads', 'business', 'cookies', 'contact', 'feed', 'trending',
  'topics', 'features', 'pricing', 'marketplace', 'watch', 'embed', 'plugins', 'widgets', 'sitemap', 'directory', 'i',
];
const reserved = (...extra: string[]): ReadonlySet<string> => new Set([...COMMON_RESERVED, ...extra]);

const FILE_LIKE = /\.(?:php|html?|aspx?|jsp|cgi|js|css|json|xml|txt|ico|png|jpe?g|gif|svg|webp|pdf)$/i;

const lower = (s: string): string => s.toLowerCase();
const enc = (s: string): string => encodeURIComponent(s);

// ---------------------------------------------------------------- X / Twitter

const X_HANDLE = /^[A-Za-z0-9_]{1,15}$/;
const X_RESERVED = reserved(
  'compose', 'personalization', 'rules', 'lists', 'communities', 'premium', 'verified', 'who_to_follow', 'session', 'sessions',
  'web', 'tweet', 'tweets', 'statuses', 'status', 'bookmarks', 'moments', 'search-advanced', 'following', 'followers',
  'signup', 'privacy', 'tos', 'logout', 'settings', 'home', 'notifications', 'messages', 'jobs', 'download', 'support',
);
/** Tabs and content under `/{handle}/` (everything else after a handle is not a profile). */
const X_TABS: ReadonlySet<string> = new Set([
  'status', 'statuses', 'with_replies', 'media', 'likes', 'followers', 'following', 'verified_followers', 'followers_you_follow',
  'lists', 'highlights', 'articles', 'photo', 'header_photo', 'superfollows', 'communities', 'affiliates', 'subscriptions',
  'creator-subscriptions',
]);

const xProfile = (h: string, derived: boolean): Hit | undefined =>
  X_HANDLE.test(h) && !X_RESERVED.has(lower(h)) ? hit('x', `https://x.com/${lower(h)}`, lower(h), undefined, derived) : undefined;

const x: Rule = (segs, url) => {
  let s = segs;
  // Old hash-bang links: twitter.com/#!/handle
  if (s.length === 0 && url.hash.startsWith('#!/')) s = pathSegments(url.hash.slice(2)) ?? [];
  const [a, b] = s;
  if (a === undefined) return undefined;
  // Follow buttons name their account: intent/follow?screen_name=, intent/user?screen_name=
  if (lower(a) === 'intent' && (b === 'follow' || b === 'user')) {
    const name = url.searchParams.get('screen_name');
    return name === null ? undefined : xProfile(name, true);
  }
  if (b !== undefined && !X_TABS.has(lower(b))) return undefined;
  return xProfile(a, s.length > 1);
};

// ---------------------------------------------------------------- LinkedIn

const LI_PERSON = /^[\p{L}\p{N}\p{M}_-]{3,100}$/u;
const LI_ORG = /^[\p{L}\p{N}\p{M}_.-]{2,100}$/u;
const LI_ORG_RESERVED: ReadonlySet<string> = new Set(['setup', 'new', 'admin', 'unavailable']);
const LI_KINDS = { in: 'person', company: 'company', school: 'school', showcase: 'showcase' } as const;

const linkedin: Rule = (segs) => {
  const [a, b] = segs;
  if (a === undefined || b === undefined) return undefined;
  const section = lower(a);
  if (section === 'in' || section === 'company' || section === 'school' || section === 'showcase') {
    const slug = lower(b);
    if (section === 'in' ? !LI_PERSON.test(slug) : !LI_ORG.test(slug) || LI_ORG_RESERVED.has(slug)) return undefined;
    return hit('linkedin', `https://www.linkedin.com/${section}/${enc(slug)}`, slug, LI_KINDS[section], segs.length > 2);
  }
  // Old public profiles: /pub/first-last/12/345/678 (/pub/dir/... is the people directory).
  if (section === 'pub' && segs.length === 5 && b !== 'dir' && LI_PERSON.test(b) && segs.slice(2).every((p) => /^[0-9a-z]{1,4}$/i.test(p))) {
    const path = segs.slice(1).map((p) => enc(lower(p))).join('/');
    return hit('linkedin', `https://www.linkedin.com/pub/${path}`, lower(b), 'person', false);
  }
  return undefined;
};

// ---------------------------------------------------------------- Facebook

const FB_USER = /^(?=.*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9.]{0,48}[A-Za-z0-9])?$/;
const FB_ID = /^\d{5,20}$/;
const FB_RESERVED = reserved(
  'sharer', 'share', 'dialog', 'plugins', 'home', 'groups', 'events', 'gaming', 'pages', 'people', 'photo', 'photos', 'video',
  'videos', 'reel', 'reels', 'stories', 'story', 'friends', 'bookmarks', 'fundraisers', 'places', 'recover', 'campaign', 'ajax',
  'public', 'lite', 'mobile', 'badges', 'find-friends', 'apps', 'connect', 'instantgames', 'offsite', 'tr', 'checkpoint',
  'reg', 'live', 'memories', 'saved', 'feeds', 'latest', 'onthisday', 'pay', 'payments', 'profile', 'media', 'notes', 'watch',
  'privacy', 'legal', 'help', 'hashtag', 'brand', 'l', 'permalink', 'dyi', 'fbml', 'sem_campaigns', 'facebookforbusiness',
  // facebook.com/me is whoever is signed in.
  'me', 'nt', 'fbid', 'sms', 'wifi',
);
/** What may follow a page or profile name (its tabs and its posts). */
const FB_TABS: ReadonlySet<string> = new Set([
  'posts', 'photos', 'videos', 'about', 'reviews', 'events', 'community', 'reels', 'mentions', 'followers', 'following',
  'friends', 'photos_by', 'live_videos', 'shop', 'menu', 'services', 'jobs', 'timeline', 'info', 'notes', 'likes', 'map',
  'groups', 'videos_by', 'about_contact_and_basic_info', 'about_details', 'about_profile_transparency',
]);

const fbId = (id: string, derived: boolean): Hit => hit('facebook', `https://www.facebook.com/profile.php?id=${id}`, null, undefined, derived);

const facebook: Rule = (segs, url) => {
  const [a, b] = segs;
  if (a === undefined) return undefined;
  const f = lower(a);
  if (f === 'profile.php') {
    const id = url.searchParams.get('id');
    return id !== null && FB_ID.test(id) ? fbId(id, false) : undefined;
  }
  // /people/Name/100064..., /pages/Name/123..., /pages/category/Name/123...: the number is the account.
  if (f === 'people' || f === 'pages') {
    const id = segs.slice(2).find((p) => FB_ID.test(p));
    return id === undefined ? undefined : fbId(id, false);
  }
  if (f === 'pg' && b !== undefined) return fbName(b, segs.length > 2);
  if (FB_ID.test(a)) return b === undefined || FB_TABS.has(lower(b)) ? fbId(a, segs.length > 1) : undefined;
  if (b !== undefined && !FB_TABS.has(lower(b))) return undefined;
  return fbName(a, segs.length > 1);
};

function fbName(name: string, derived: boolean): Hit | undefined {
  const n = lower(name);
  if (!FB_USER.test(name) || FB_RESERVED.has(n) || FILE_LIKE.test(n)) return undefined;
  return hit('facebook', `https://www.facebook.com/${n}`, n, undefined, derived);
}

// ---------------------------------------------------------------- Instagram and Threads

const IG_USER = /^(?!.*\.\.)[A-Za-z0-9_](?:[A-Za-z0-9._]{0,28}[A-Za-z0-9_])?$/;
const IG_RESERVED = reserved(
  'p', 'reel', 'reels', 'tv', 'stories', 'direct', 'web', 'emails', 'graphql', 'challenge', 'ar', 'session', 'nametag', 'lite',
  'invites', 'create', 'qr', 'locations', 'fragment', 'explore',
);
const IG_TABS: ReadonlySet<string> = new Set(['p', 'reel', 'reels', 'tv', 'tagged', 'saved', 'guides', 'channel', 'feed', 'igtv', 'followers', 'following', 'related_profiles', 'live']);

const igProfile = (name: string, derived: boolean): Hit | undefined =>
  IG_USER.test(name) && !FILE_LIKE.test(name) ? hit('instagram', `https://www.instagram.com/${lower(name)}`, lower(name), undefined, derived) : undefined;

const instagram: Rule = (segs) => {
  const [a, b] = segs;
  if (a === undefined) return undefined;
  // /stories/{user}/{id}: the owner is in the URL (/stories/highlights/{id} has none).
  if (lower(a) === 'stories') return b !== undefined && lower(b) !== 'highlights' ? igProfile(b, true) : undefined;
  // The app's deep link: /_u/{user}
  if (a === '_u') return b !== undefined && segs.length === 2 ? igProfile(b, false) : undefined;
  if (IG_RESERVED.has(lower(a))) return undefined;
  if (b !== undefined && !IG_TABS.has(lower(b))) return undefined;
  return igProfile(a, segs.length > 1);
};

const threads: Rule = (segs) => {
  const a = segs[0];
  if (a === undefined || !a.startsWith('@')) return undefined;
  const name = a.slice(1);
  if (!IG_USER.test(name)) return undefined;
  return hit('threads', `https://www.threads.com/@${lower(name)}`, lower(name), undefined, segs.length > 1);
};

// ---------------------------------------------------------------- YouTube

const YT_CHANNEL = /^UC[A-Za-z0-9_-]{22}$/;
const YT_HANDLE = /^[\p{L}\p{N}\p{M}._-]{3,30}$/u;
const YT_NAME = /^[A-Za-z0-9_-]{1,100}$/;
/** The bare `/{name}` form: older custom URLs and usernames, letters and digits only. */
const YT_BARE = /^[A-Za-z0-9]{3,100}$/;
const YT_RESERVED = reserved(
  'results', 'playlist', 'shorts', 'live', 'channel', 'user', 'c', 't', 'yt', 'howyoutubeworks', 'premium', 'kids', 'gaming',
  'music', 'redirect', 'attribution_link', 'upload', 'creators', 'new', 'trends', 'signin', 'create_channel', 'dashboard',
  'subscription_manager', 'view_play_list', 'verify', 'oops', 'error', 'index', 'movies', 'sports', 'news', 'learning',
  'fashion', 'podcasts', 'store', 'channels', 'feeds', 'img', 'movie', 'show', 'shows', 'html5', 'copyright', 'supported_browsers',
  'source', 'playlists', 'paid_memberships', 'reporthistory', 'account_notifications', 'account_playback', 'account_privacy',
  'intl', 'shopping',
);
const YT_TABS: ReadonlySet<string> = new Set([
  'featured', 'videos', 'shorts', 'streams', 'live', 'playlists', 'community', 'channels', 'about', 'podcasts', 'releases',
  'store', 'search', 'posts', 'membership', 'courses', 'join',
]);

const youtube: Rule = (segs) => {
  const [a, b] = segs;
  if (a === undefined) return undefined;
  const yt = (path: string, handle: string, kind: 'channel' | 'handle' | 'user' | 'custom', depth: number): Hit =>
    hit('youtube', `https://www.youtube.com/${path}`, handle, kind, segs.length > depth);
  if (a.startsWith('@')) {
    const h = lower(a.slice(1));
    return YT_HANDLE.test(h) ? yt(`@${enc(h)}`, h, 'handle', 1) : undefined;
  }
  const f = lower(a);
  if (f === 'channel') return b !== undefined && YT_CHANNEL.test(b) ? yt(`channel/${b}`, b, 'channel', 2) : undefined;
  if (f === 'user') return b !== undefined && YT_NAME.test(b) ? yt(`user/${lower(b)}`, lower(b), 'user', 2) : undefined;
  // A custom URL answers at both /c/{name} and /{name}: the bare form is canonical.
  if (f === 'c') return b !== undefined && YT_NAME.test(b) ? yt(lower(b), lower(b), 'custom', 2) : undefined;
  if (YT_RESERVED.has(f) || !YT_BARE.test(a)) return undefined;
  if (b !== undefined && !YT_TABS.has(lower(b))) return undefined;
  return yt(f, f, 'custom', 1);
};

// ---------------------------------------------------------------- TikTok

const TT_USER = /^[A-Za-z0-9_](?:[A-Za-z0-9._]{0,22}[A-Za-z0-9_])?$/;

const tiktok: Rule = (segs) => {
  const a = segs[0];
  if (a === undefined || !a.startsWith('@')) return undefined;
  const name = lower(a.slice(1));
  return name.length >= 2 && TT_USER.test(name) ? hit('tiktok', `https://www.tiktok.com/@${name}`, name, undefined, segs.length > 1) : undefined;
};

// ---------------------------------------------------------------- GitHub

const GH_USER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/;
const GH_RESERVED = reserved(
  'orgs', 'users', 'sponsors', 'apps', 'collections', 'customer-stories', 'dashboard', 'enterprise', 'events', 'git-guides',
  'issues', 'pulls', 'codespaces', 'copilot', 'discussions', 'new', 'organizations', 'password_reset', 'sessions', 'site',
  'stars', 'team', 'readme', 'resources', 'solutions', 'premium-support', 'partners', 'nonprofit', 'education', 'edu',
  'why-github', 'newsroom', 'accessibility', 'mobile', 'open-source', 'github-copilot', 'advisories', 'codesearch',
  'watching', 'maintenance', 'marketplace', 'topics', 'trending', 'features', 'pricing', 'about', 'contact', 'blog', 'shop',
  'support', 'status', 'login', 'join', 'logout', 'signup',
);
const GIST_RESERVED: ReadonlySet<string> = new Set(['discover', 'search', 'starred', 'auth', 'login', 'mine', 'forked', 'join']);

const ghProfile = (name: string, derived: boolean): Hit | undefined =>
  GH_USER.test(name) ? hit('github', `https://github.com/${lower(name)}`, lower(name), undefined, derived) : undefined;

const github: Rule = (segs, _url, host) => {
  const [a, b] = segs;
  if (a === undefined) return undefined;
  if (host === 'gist.github.com') return GIST_RESERVED.has(lower(a)) ? undefined : ghProfile(a, segs.length > 1);
  const f = lower(a);
  // /orgs/{org}/people, /users/{user}/projects, /sponsors/{user}: the account is the second segment.
  if (f === 'orgs' || f === 'users' || f === 'sponsors') {
    if (b === undefined || (f === 'sponsors' && ['explore', 'accounts', 'dashboard'].includes(lower(b)))) return undefined;
    return ghProfile(b, segs.length > 2 || f !== 'orgs');
  }
  if (GH_RESERVED.has(f)) return undefined;
  return ghProfile(a, segs.length > 1);
};

// ---------------------------------------------------------------- Pinterest

const PIN_USER = /^[A-Za-z0-9_]{3,30}$/;
const PIN_RESERVED = reserved(
  'pin', 'ideas', 'today', 'categories', 'news_hub', 'resource', 'password', 'discover', 'videos', 'shopping', 'source',
  'secret', 'edit', 'inbox', 'homefeed', 'board', 'boards', 'pins', 'offsite', 'url_shortener', 'convert', 'create',
);

const pinterest: Rule = (segs) => {
  const a = segs[0];
  if (a === undefined || a.startsWith('_') || PIN_RESERVED.has(lower(a)) || !PIN_USER.test(a)) return undefined;
  return hit('pinterest', `https://www.pinterest.com/${lower(a)}`, lower(a), undefined, segs.length > 1);
};

// ---------------------------------------------------------------- Reddit

const RD_USER = /^[A-Za-z0-9_-]{3,20}$/;
const RD_SUB = /^[A-Za-z0-9][A-Za-z0-9_]{1,20}$/;
const RD_SUB_RESERVED: ReadonlySet<string> = new Set(['all', 'popular', 'random', 'randnsfw', 'friends', 'mod', 'myrandom', 'home']);
/** Pages of a subreddit itself (its posts are the posters', who are not in the URL). */
const RD_SUB_PAGES: ReadonlySet<string> = new Set(['about', 'wiki', 'new', 'hot', 'top', 'rising', 'controversial', 'gilded']);

const reddit: Rule = (segs) => {
  const [a, b, c] = segs;
  if (a === undefined || b === undefined) return undefined;
  const f = lower(a);
  if (f === 'user' || f === 'u') {
    return RD_USER.test(b) ? hit('reddit', `https://www.reddit.com/user/${lower(b)}`, lower(b), 'user', segs.length > 2) : undefined;
  }
  if (f === 'r') {
    if (!RD_SUB.test(b) || RD_SUB_RESERVED.has(lower(b))) return undefined;
    if (c !== undefined && !RD_SUB_PAGES.has(lower(c))) return undefined;
    return hit('reddit', `https://www.reddit.com/r/${lower(b)}`, lower(b), 'subreddit', segs.length > 2);
  }
  return undefined;
};

// ---------------------------------------------------------------- Telegram

const TG_USER = /^[A-Za-z][A-Za-z0-9_]{3,31}$/;
/** Invite hashes carry letters (`t.me/+4915...`, digits only, is a phone number link). */
const TG_INVITE = /^(?=.*[A-Za-z_-])[A-Za-z0-9_-]{8,64}$/;
const TG_RESERVED = reserved(
  'addstickers', 'addemoji', 'addlist', 'proxy', 'socks', 'iv', 'setlanguage', 'bg', 'addtheme', 'confirmphone', 'invoice',
  'c', 'boost', 'joinchat', 'share', 'login',
);

const tgUser = (name: string, derived: boolean): Hit | undefined =>
  TG_USER.test(name) && !TG_RESERVED.has(lower(name)) ? hit('telegram', `https://t.me/${lower(name)}`, lower(name), undefined, derived) : undefined;
const tgInvite = (code: string): Hit | undefined => (TG_INVITE.test(code) ? hit('telegram', `https://t.me/+${code}`, null, 'invite', false) : undefined);

const telegram: Rule = (segs) => {
  let s = segs;
  const a = s[0];
  if (a === undefined) return undefined;
  if (a.startsWith('+')) return s.length === 1 ? tgInvite(a.slice(1)) : undefined;
  if (lower(a) === 'joinchat') return s.length === 2 ? tgInvite(s[1]!) : undefined;
  // The web preview of a channel: t.me/s/{name}[/{post}]
  if (a === 's') s = s.slice(1);
  const [name, post] = s;
  if (name === undefined || s.length > 2 || (post !== undefined && !/^\d{1,12}$/.test(post))) return undefined;
  return tgUser(name, post !== undefined);
};

function telegramScheme(url: URL): Hit | undefined {
  const action = (url.hostname || url.pathname.replace(/^\/+/, '')).toLowerCase();
  if (action === 'resolve') {
    const domain = url.searchParams.get('domain');
    return domain === null ? undefined : tgUser(domain, url.searchParams.has('post'));
  }
  if (action === 'join') {
    const invite = url.searchParams.get('invite');
    return invite === null ? undefined : tgInvite(invite);
  }
  return undefined;
}

// ---------------------------------------------------------------- Discord

const DC_CODE = /^[A-Za-z0-9-]{2,32}$/;
const DC_USER_ID = /^\d{17,20}$/;

const dcInvite = (code: string | undefined, extra: number): Hit | undefined =>
  code !== undefined && extra === 0 && DC_CODE.test(code) ? hit('discord', `https://discord.gg/${code}`, code, 'invite', false) : undefined;

const discordGg: Rule = (segs) => (lower(segs[0] ?? '') === 'invite' ? dcInvite(segs[1], segs.length - 2) : dcInvite(segs[0], segs.length - 1));

const discordCom: Rule = (segs) => {
  const [a, b] = segs;
  if (a === undefined || b === undefined) return undefined;
  if (lower(a) === 'invite') return dcInvite(b, segs.length - 2);
  if (lower(a) === 'users' && DC_USER_ID.test(b) && segs.length === 2) return hit('discord', `https://discord.com/users/${b}`, null, 'user', false);
  return undefined;
};

// ---------------------------------------------------------------- Bluesky

const BSKY_HANDLE = /^(?=.{3,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const BSKY_DID = /^did:(?:plc:[a-z2-7]{24}|web:[a-z0-9.-]{3,253})$/;

const bluesky: Rule = (segs) => {
  const [a, b] = segs;
  if (a !== 'profile' || b === undefined) return undefined;
  const h = lower(b.replace(/^@/, ''));
  if (!BSKY_HANDLE.test(h) && !BSKY_DID.test(h)) return undefined;
  return hit('bluesky', `https://bsky.app/profile/${h}`, h, undefined, segs.length > 2);
};

// ---------------------------------------------------------------- hosts

const HOSTS: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ['x.com', x], ['twitter.com', x],
  ['linkedin.com', linkedin],
  ['facebook.com', facebook], ['fb.com', facebook], ['fb.me', facebook], ['web.facebook.com', facebook],
  ['mbasic.facebook.com', facebook], ['touch.facebook.com', facebook],
  ['instagram.com', instagram], ['instagr.am', instagram],
  ['threads.net', threads], ['threads.com', threads],
  ['youtube.com', youtube], ['music.youtube.com', youtube],
  ['tiktok.com', tiktok],
  ['github.com', github], ['gist.github.com', github],
  ['pinterest.com', pinterest],
  ['reddit.com', reddit], ['old.reddit.com', reddit], ['new.reddit.com', reddit], ['np.reddit.com', reddit],
  ['t.me', telegram], ['telegram.me', telegram], ['telegram.dog', telegram],
  ['discord.gg', discordGg], ['discord.com', discordCom], ['discordapp.com', discordCom],
  ['bsky.app', bluesky],
]);

const PINTEREST_TLDS: ReadonlySet<string> = new Set([
  'de', 'fr', 'es', 'it', 'pt', 'at', 'ch', 'ie', 'nz', 'ca', 'jp', 'se', 'dk', 'cl', 'ph', 'ru', 'co.uk', 'co.kr', 'com.au', 'com.mx',
]);

function ruleFor(host: string): Rule | undefined {
  const bare = host.replace(/^(?:www|m|mobile)\./, '');
  const fixed = HOSTS.get(bare);
  if (fixed !== undefined) return fixed;
  // Country and locale subdomains: de.linkedin.com, de-de.facebook.com, jp.pinterest.com; pinterest.de.
  if (/^[a-z]{2}\.linkedin\.com$/.test(bare)) return linkedin;
  if (/^[a-z]{2}-[a-z]{2}\.facebook\.com$/.test(bare)) return facebook;
  if (/^[a-z]{2}\.pinterest\.com$/.test(bare)) return pinterest;
  if (bare.startsWith('pinterest.') && PINTEREST_TLDS.has(bare.slice('pinterest.'.length))) return pinterest;
  return undefined;
}

// ---------------------------------------------------------------- entry point

/** Path segments, percent-decoded; undefined when a segment does not decode. */
function pathSegments(path: string): string[] | undefined {
  const out: string[] = [];
  for (const raw of path.split('/')) {
    if (raw === '') continue;
    try {
      out.push(decodeURIComponent(raw));
    } catch {
      return undefined;
    }
  }
  return out;
}

const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const BARE_HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+(?:[/?#]|$)/i;

function parse(raw: string): URL | undefined {
  let s = raw.replace(/[\t\n\r]/g, '').trim();
  if (s === '' || s.length > 2048) return undefined;
  if (s.startsWith('//')) s = `https:${s}`;
  else if (!HAS_SCHEME.test(s)) {
    if (!BARE_HOST.test(s)) return undefined;
    s = `https://${s}`;
  }
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
}

/** An absolute URL as URL.href writes it (lower-case host, no user info or port): its host. */
const PLAIN_HOST = /^https?:\/\/([a-z0-9.-]+)(?:[/?#]|$)/;

/** The profile a URL names, and whether it was reduced from a content URL. */
export function profileHit(raw: string, options: NormaliseOptions = {}): Hit | undefined {
  // Fast path for the common case (links to the site itself and elsewhere): a host no rule
  // could match is refused without parsing; the answer is the same as the full path's.
  const plain = options.asserted === true ? null : PLAIN_HOST.exec(raw);
  if (plain !== null) {
    const host = plain[1]!.replace(/\.$/, '');
    if (ruleFor(host) === undefined && !MASTODON_SERVERS.has(host)) return undefined;
  }
  const url = parse(raw);
  if (url === undefined) return undefined;
  if (url.protocol === 'tg:') return telegramScheme(url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '' || url.port !== '') return undefined;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const segs = pathSegments(url.pathname);
  if (segs === undefined) return undefined;
  const rule = ruleFor(host);
  if (rule !== undefined) return rule(segs, url, host);
  return mastodonUrl(host, segs, options.asserted === true);
}

/**
 * The social profile a URL names, in canonical form, or undefined when it
 * names none (not a network, a share or intent link, one of the network's
 * own pages, content whose owner is not in the URL, an invalid handle).
 * `asserted`: the page claims the URL as its own (rel="me", sameAs), which
 * is what lets `https://any.server/@user` count as Mastodon.
 */
export function normaliseProfileUrl(url: string, options: NormaliseOptions = {}): ProfileRef | undefined {
  return profileHit(url, options)?.ref;
}

/** For the text forms: an X handle from `twitter:site` ("@name", "name" or a URL). */
export function xHandleProfile(value: string): Hit | undefined {
  const v = value.trim();
  if (v.includes('/')) return profileHit(v);
  return xProfile(v.replace(/^@/, ''), false);
}

export { MASTODON_SERVERS };
