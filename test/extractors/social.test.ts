import { describe, expect, it } from 'vitest';
import {
  extractSocial, mergeProfiles, normaliseProfileUrl, precisionRecall, MAX_PROFILES, socialExtractor,
  type ProfileRef, type ScoreCase, type SocialKind, type SocialPlatform, type SocialProfile,
} from '../../plugins/extractors/social/index.js';
import { page } from './support.js';

const P = (platform: SocialPlatform, url: string, handle: string | null, kind?: SocialKind): ProfileRef =>
  kind === undefined ? { platform, url, handle } : { platform, url, handle, kind };

/** [label, URL, expected profile (undefined: not a profile), asserted by the page (rel="me"/sameAs)] */
type UrlCase = readonly [string, string, ProfileRef | undefined, boolean?];

const CH = 'UCK8sQmJBp8GCxrOtXWBpyEA';
const JP = encodeURIComponent('テスト');

const PROFILES: readonly UrlCase[] = [
  // X / Twitter
  ['x: twitter.com, mixed case', 'https://twitter.com/ScourHQ', P('x', 'https://x.com/scourhq', 'scourhq')],
  ['x: x.com post reduced to its author', 'https://x.com/scourhq/status/1234567890?s=20', P('x', 'https://x.com/scourhq', 'scourhq')],
  ['x: mobile. subdomain, trailing slash', 'https://mobile.twitter.com/ScourHQ/', P('x', 'https://x.com/scourhq', 'scourhq')],
  ['x: old hash-bang link', 'https://twitter.com/#!/ScourHQ', P('x', 'https://x.com/scourhq', 'scourhq')],
  ['x: follow button names its account', 'https://twitter.com/intent/follow?screen_name=ScourHQ', P('x', 'https://x.com/scourhq', 'scourhq')],
  ['x: profile tab', 'https://x.com/scourhq/media', P('x', 'https://x.com/scourhq', 'scourhq')],
  ['x: scheme-less', 'twitter.com/ScourHQ', P('x', 'https://x.com/scourhq', 'scourhq')],
  ['x: protocol-relative', '//www.x.com/scourhq', P('x', 'https://x.com/scourhq', 'scourhq')],
  // LinkedIn
  ['linkedin: person', 'https://www.linkedin.com/in/Jane-Doe-123/', P('linkedin', 'https://www.linkedin.com/in/jane-doe-123', 'jane-doe-123', 'person')],
  ['linkedin: person, country subdomain, non-ASCII slug', 'https://de.linkedin.com/in/j%C3%BCrgen-m%C3%BCller?trk=x', P('linkedin', 'https://www.linkedin.com/in/j%C3%BCrgen-m%C3%BCller', 'jürgen-müller', 'person')],
  ['linkedin: company page tab', 'https://linkedin.com/company/Acme-Corp/about/', P('linkedin', 'https://www.linkedin.com/company/acme-corp', 'acme-corp', 'company')],
  ['linkedin: school', 'https://www.linkedin.com/school/stanford-university/', P('linkedin', 'https://www.linkedin.com/school/stanford-university', 'stanford-university', 'school')],
  // Facebook
  ['facebook: page', 'https://www.facebook.com/ScourHQ', P('facebook', 'https://www.facebook.com/scourhq', 'scourhq')],
  ['facebook: post on m. reduced to the page', 'https://m.facebook.com/scourhq/posts/pfbid0abc', P('facebook', 'https://www.facebook.com/scourhq', 'scourhq')],
  ['facebook: locale subdomain, dotted name', 'https://de-de.facebook.com/scour.hq/', P('facebook', 'https://www.facebook.com/scour.hq', 'scour.hq')],
  ['facebook: numeric profile', 'https://www.facebook.com/profile.php?id=100064123456789&sk=about', P('facebook', 'https://www.facebook.com/profile.php?id=100064123456789', null)],
  ['facebook: /people/ form, same numeric profile', 'https://www.facebook.com/people/Jane-Doe/100064123456789/', P('facebook', 'https://www.facebook.com/profile.php?id=100064123456789', null)],
  ['facebook: fb.me short link', 'https://fb.me/ScourHQ', P('facebook', 'https://www.facebook.com/scourhq', 'scourhq')],
  // Instagram
  ['instagram: profile', 'https://instagram.com/Scour.HQ/', P('instagram', 'https://www.instagram.com/scour.hq', 'scour.hq')],
  ['instagram: story names its owner', 'https://www.instagram.com/stories/scour.hq/3123456789/', P('instagram', 'https://www.instagram.com/scour.hq', 'scour.hq')],
  ['instagram: app deep link', 'https://instagram.com/_u/Scour.HQ', P('instagram', 'https://www.instagram.com/scour.hq', 'scour.hq')],
  ['instagram: reel under its owner', 'https://www.instagram.com/scour.hq/reel/Cabc123/', P('instagram', 'https://www.instagram.com/scour.hq', 'scour.hq')],
  // YouTube
  ['youtube: channel id keeps its case', `https://www.youtube.com/channel/${CH}/videos`, P('youtube', `https://www.youtube.com/channel/${CH}`, CH, 'channel')],
  ['youtube: handle on m.', 'https://m.youtube.com/@GoogleDevelopers/videos', P('youtube', 'https://www.youtube.com/@googledevelopers', 'googledevelopers', 'handle')],
  ['youtube: Japanese handle', `https://www.youtube.com/@${JP}`, P('youtube', `https://www.youtube.com/@${JP}`, 'テスト', 'handle')],
  ['youtube: legacy user', 'https://youtube.com/user/Google', P('youtube', 'https://www.youtube.com/user/google', 'google', 'user')],
  ['youtube: /c/ custom URL', 'https://www.youtube.com/c/GoogleDevelopers', P('youtube', 'https://www.youtube.com/googledevelopers', 'googledevelopers', 'custom')],
  ['youtube: bare custom URL', 'https://www.youtube.com/GoogleDevelopers/about', P('youtube', 'https://www.youtube.com/googledevelopers', 'googledevelopers', 'custom')],
  // TikTok
  ['tiktok: profile', 'https://www.tiktok.com/@Scour.HQ?lang=de', P('tiktok', 'https://www.tiktok.com/@scour.hq', 'scour.hq')],
  ['tiktok: video reduced to its author', 'https://m.tiktok.com/@scour.hq/video/7234567890123456789', P('tiktok', 'https://www.tiktok.com/@scour.hq', 'scour.hq')],
  // GitHub
  ['github: user', 'https://github.com/Scour-HQ', P('github', 'https://github.com/scour-hq', 'scour-hq')],
  ['github: repository reduced to its owner', 'https://github.com/scour-hq/scour/issues/12', P('github', 'https://github.com/scour-hq', 'scour-hq')],
  ['github: /orgs/ page', 'https://github.com/orgs/scour-hq/people', P('github', 'https://github.com/scour-hq', 'scour-hq')],
  ['github: gist owner', 'https://gist.github.com/scour-hq/0a1b2c3d', P('github', 'https://github.com/scour-hq', 'scour-hq')],
  // Pinterest
  ['pinterest: profile', 'https://www.pinterest.com/scourhq/', P('pinterest', 'https://www.pinterest.com/scourhq', 'scourhq')],
  ['pinterest: board on a country domain', 'https://www.pinterest.de/ScourHQ/rezepte/', P('pinterest', 'https://www.pinterest.com/scourhq', 'scourhq')],
  ['pinterest: country subdomain', 'https://jp.pinterest.com/scourhq/', P('pinterest', 'https://www.pinterest.com/scourhq', 'scourhq')],
  // Reddit
  ['reddit: user', 'https://www.reddit.com/user/Scour_HQ/', P('reddit', 'https://www.reddit.com/user/scour_hq', 'scour_hq', 'user')],
  ['reddit: /u/ on old.', 'https://old.reddit.com/u/scour_hq', P('reddit', 'https://www.reddit.com/user/scour_hq', 'scour_hq', 'user')],
  ['reddit: subreddit', 'https://www.reddit.com/r/SelfHosted/', P('reddit', 'https://www.reddit.com/r/selfhosted', 'selfhosted', 'subreddit')],
  // Telegram
  ['telegram: channel', 'https://t.me/ScourNews', P('telegram', 'https://t.me/scournews', 'scournews')],
  ['telegram: post reduced to its channel', 'https://telegram.me/scournews/123', P('telegram', 'https://t.me/scournews', 'scournews')],
  ['telegram: web preview', 'https://t.me/s/scournews', P('telegram', 'https://t.me/scournews', 'scournews')],
  ['telegram: tg:// link', 'tg://resolve?domain=scournews', P('telegram', 'https://t.me/scournews', 'scournews')],
  ['telegram: group invite', 'https://t.me/+AbCdEfGh1234', P('telegram', 'https://t.me/+AbCdEfGh1234', null, 'invite')],
  ['telegram: old joinchat invite', 'https://t.me/joinchat/AbCdEfGh1234', P('telegram', 'https://t.me/+AbCdEfGh1234', null, 'invite')],
  // Mastodon
  ['mastodon: known server', 'https://mastodon.social/@Gargron', P('mastodon', 'https://mastodon.social/@gargron', 'gargron@mastodon.social')],
  ['mastodon: post on a known server', 'https://fosstodon.org/@scour/111222333444', P('mastodon', 'https://fosstodon.org/@scour', 'scour@fosstodon.org')],
  ['mastodon: the account\'s RSS feed', 'https://mastodon.social/@Gargron.rss', P('mastodon', 'https://mastodon.social/@gargron', 'gargron@mastodon.social')],
  ['mastodon: ActivityPub actor URL', 'https://mastodon.social/users/Gargron', P('mastodon', 'https://mastodon.social/@gargron', 'gargron@mastodon.social')],
  ['mastodon: remote account seen through a known server', 'https://mastodon.social/@scour@social.example.org', P('mastodon', 'https://social.example.org/@scour', 'scour@social.example.org')],
  ['mastodon: unknown server, asserted by rel=me/sameAs', 'https://social.example.org/@scour', P('mastodon', 'https://social.example.org/@scour', 'scour@social.example.org'), true],
  // Discord
  ['discord: invite', 'https://discord.gg/AbCd123', P('discord', 'https://discord.gg/AbCd123', 'AbCd123', 'invite')],
  ['discord: discord.com invite', 'https://discord.com/invite/AbCd123', P('discord', 'https://discord.gg/AbCd123', 'AbCd123', 'invite')],
  ['discord: discordapp.com invite', 'https://discordapp.com/invite/AbCd123/', P('discord', 'https://discord.gg/AbCd123', 'AbCd123', 'invite')],
  ['discord: user', 'https://discord.com/users/80351110224678912', P('discord', 'https://discord.com/users/80351110224678912', null, 'user')],
  // Threads
  ['threads: threads.net', 'https://www.threads.net/@Scour.HQ', P('threads', 'https://www.threads.com/@scour.hq', 'scour.hq')],
  ['threads: post on threads.com', 'https://threads.com/@scour.hq/post/Cxyz123', P('threads', 'https://www.threads.com/@scour.hq', 'scour.hq')],
  // Bluesky
  ['bluesky: bsky.social handle', 'https://bsky.app/profile/scour.bsky.social', P('bluesky', 'https://bsky.app/profile/scour.bsky.social', 'scour.bsky.social')],
  ['bluesky: domain handle, post reduced', 'https://bsky.app/profile/Example.COM/post/3kabc', P('bluesky', 'https://bsky.app/profile/example.com', 'example.com')],
  ['bluesky: DID', 'https://bsky.app/profile/did:plc:z72i7hdynmk6r22z27h6tvur', P('bluesky', 'https://bsky.app/profile/did:plc:z72i7hdynmk6r22z27h6tvur', 'did:plc:z72i7hdynmk6r22z27h6tvur')],
];

const NOT_PROFILES: readonly UrlCase[] = [
  // share buttons and intents
  ['x: tweet intent', 'https://twitter.com/intent/tweet?text=Hi&url=https%3A%2F%2Fexample.com', undefined],
  ['x: share', 'https://twitter.com/share?url=https%3A%2F%2Fexample.com', undefined],
  ['facebook: sharer', 'https://www.facebook.com/sharer/sharer.php?u=https%3A%2F%2Fexample.com', undefined],
  ['facebook: sharer.php', 'https://www.facebook.com/sharer.php?u=https%3A%2F%2Fexample.com', undefined],
  ['facebook: share dialog', 'https://www.facebook.com/dialog/share?app_id=1&href=x', undefined],
  ['linkedin: shareArticle', 'https://www.linkedin.com/shareArticle?mini=true&url=https%3A%2F%2Fexample.com', undefined],
  ['linkedin: share-offsite', 'https://www.linkedin.com/sharing/share-offsite/?url=https%3A%2F%2Fexample.com', undefined],
  ['pinterest: pin create', 'https://www.pinterest.com/pin/create/button/?url=x&media=y', undefined],
  ['reddit: submit', 'https://www.reddit.com/submit?url=https%3A%2F%2Fexample.com', undefined],
  ['telegram: share', 'https://t.me/share/url?url=https%3A%2F%2Fexample.com', undefined],
  ['threads: post intent', 'https://www.threads.net/intent/post?text=hi', undefined],
  ['bluesky: compose intent', 'https://bsky.app/intent/compose?text=hi', undefined],
  // the networks' own pages
  ['x: home', 'https://x.com/home', undefined],
  ['x: explore', 'https://x.com/explore', undefined],
  ['x: search', 'https://x.com/search?q=scour', undefined],
  ['x: hashtag', 'https://x.com/hashtag/news', undefined],
  ['x: settings', 'https://x.com/settings/profile', undefined],
  ['x: terms under a language prefix', 'https://twitter.com/en/tos', undefined],
  ['x: privacy', 'https://twitter.com/privacy', undefined],
  ['x: login', 'https://twitter.com/login', undefined],
  ['x: status without an owner', 'https://x.com/i/web/status/123', undefined],
  ['x: widgets script on a subdomain', 'https://platform.twitter.com/widgets.js', undefined],
  ['x: t.co short link', 'https://t.co/abc123', undefined],
  ['facebook: watch', 'https://www.facebook.com/watch/?v=123', undefined],
  ['facebook: group', 'https://www.facebook.com/groups/123456', undefined],
  ['facebook: policies', 'https://www.facebook.com/policies/cookies/', undefined],
  ['facebook: help', 'https://www.facebook.com/help/123', undefined],
  ['facebook: login.php', 'https://www.facebook.com/login.php', undefined],
  ['facebook: hashtag', 'https://www.facebook.com/hashtag/news', undefined],
  ['facebook: /me is whoever is signed in', 'https://www.facebook.com/me', undefined],
  ['facebook: tracking pixel', 'https://www.facebook.com/tr?id=1&ev=PageView', undefined],
  ['facebook: redirect wrapper', 'https://l.facebook.com/l.php?u=https%3A%2F%2Fexample.com', undefined],
  ['instagram: about', 'https://www.instagram.com/about/', undefined],
  ['instagram: explore', 'https://www.instagram.com/explore/tags/news/', undefined],
  ['instagram: login', 'https://www.instagram.com/accounts/login/?next=/scour.hq/', undefined],
  ['instagram: legal', 'https://www.instagram.com/legal/privacy/', undefined],
  ['linkedin: feed', 'https://www.linkedin.com/feed/', undefined],
  ['linkedin: job', 'https://www.linkedin.com/jobs/view/123', undefined],
  ['youtube: results', 'https://www.youtube.com/results?search_query=scour', undefined],
  ['youtube: feed', 'https://www.youtube.com/feed/trending', undefined],
  ['youtube: terms', 'https://www.youtube.com/t/terms', undefined],
  ['youtube: about', 'https://www.youtube.com/about/policies/', undefined],
  ['tiktok: legal', 'https://www.tiktok.com/legal/privacy-policy', undefined],
  ['tiktok: tag', 'https://www.tiktok.com/tag/news', undefined],
  ['github: features', 'https://github.com/features/actions', undefined],
  ['github: login', 'https://github.com/login', undefined],
  ['github: topics', 'https://github.com/topics/search', undefined],
  ['github: marketplace', 'https://github.com/marketplace/actions/checkout', undefined],
  ['github: settings', 'https://github.com/settings/profile', undefined],
  ['pinterest: ideas', 'https://www.pinterest.com/ideas/', undefined],
  ['pinterest: search', 'https://www.pinterest.com/search/pins/?q=x', undefined],
  ['reddit: front page listing', 'https://www.reddit.com/r/all', undefined],
  ['telegram: sticker pack', 'https://t.me/addstickers/SomePack', undefined],
  ['mastodon: about', 'https://mastodon.social/about', undefined],
  ['mastodon: explore', 'https://mastodon.social/explore', undefined],
  ['mastodon: tag', 'https://mastodon.social/tags/news', undefined],
  ['discord: channel', 'https://discord.com/channels/123/456', undefined],
  ['discord: download', 'https://discord.com/download', undefined],
  ['threads: login', 'https://www.threads.net/login', undefined],
  ['bluesky: search', 'https://bsky.app/search?q=x', undefined],
  // content whose owner is not in the URL
  ['instagram: post', 'https://www.instagram.com/p/Cabc123/', undefined],
  ['instagram: reel', 'https://www.instagram.com/reel/Cabc123/', undefined],
  ['youtube: watch', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ&ab_channel=Rick', undefined],
  ['youtube: youtu.be', 'https://youtu.be/dQw4w9WgXcQ', undefined],
  ['youtube: shorts', 'https://www.youtube.com/shorts/abc123', undefined],
  ['youtube: embed', 'https://www.youtube.com/embed/abc123', undefined],
  ['youtube: playlist', 'https://www.youtube.com/playlist?list=PL123', undefined],
  ['tiktok: short link', 'https://vm.tiktok.com/ZMabc123/', undefined],
  ['pinterest: pin', 'https://www.pinterest.com/pin/123456789/', undefined],
  ['pinterest: short link', 'https://pin.it/abc123', undefined],
  ['reddit: post in a subreddit (author not in URL)', 'https://www.reddit.com/r/selfhosted/comments/abc/title/', undefined],
  ['reddit: short link', 'https://redd.it/abc123', undefined],
  ['facebook: event', 'https://www.facebook.com/events/123456/', undefined],
  // invalid handles
  ['x: handle too long', 'https://x.com/this_handle_is_way_too_long', undefined],
  ['x: file, not a handle', 'https://twitter.com/favicon.ico', undefined],
  ['youtube: malformed channel id', 'https://www.youtube.com/channel/notanid', undefined],
  ['github: leading hyphen', 'https://github.com/-bad', undefined],
  ['telegram: too short', 'https://t.me/abc', undefined],
  ['telegram: private channel post', 'https://t.me/c/123/456', undefined],
  ['telegram: phone number link', 'https://t.me/+4915112345678', undefined],
  ['bluesky: handle is not a domain', 'https://bsky.app/profile/not_a_domain', undefined],
  ['discord: empty invite', 'https://discord.com/invite/', undefined],
  // Mastodon without evidence, look-alikes
  ['mastodon: /@user on an unknown host, not asserted', 'https://social.example.org/@scour', undefined],
  ['mastodon: Medium, even asserted', 'https://medium.com/@scour', undefined, true],
  ['mastodon: Medium subdomain, asserted', 'https://blog.medium.com/@scour', undefined, true],
  ['mastodon: asserted /@user on an IP address', 'https://192.0.2.1/@scour', undefined, true],
  // hosts and schemes
  ['look-alike host', 'https://notx.com/scourhq', undefined],
  ['network name as a subdomain of another host', 'https://x.com.evil.example/scourhq', undefined],
  ['user info in the URL', 'https://x.com@evil.example/scourhq', undefined],
  ['a port', 'https://x.com:8443/scourhq', undefined],
  ['another scheme', 'ftp://twitter.com/scourhq', undefined],
  ['mailto', 'mailto:scourhq@twitter.com', undefined],
  ['the network in the path of another site', 'https://example.com/twitter.com/scourhq', undefined],
  ['a redirect wrapper', 'https://www.google.com/url?q=https://twitter.com/scourhq', undefined],
  ['github pages site', 'https://scour-hq.github.io/', undefined],
  ['empty', '', undefined],
  ['garbage', 'not a url at all', undefined],
];

const URL_CASES: readonly UrlCase[] = [...PROFILES, ...NOT_PROFILES];

describe('normaliseProfileUrl', () => {
  it.each(URL_CASES.map(([label, url, expected, asserted]) => [label, url, expected, asserted === true] as const))('%s: %s', (_label, url, expected, asserted) => {
    expect(normaliseProfileUrl(url, { asserted })).toEqual(expected);
  });

  it('covers every network, both ways', () => {
    const platforms: SocialPlatform[] = ['x', 'linkedin', 'facebook', 'instagram', 'youtube', 'tiktok', 'github', 'pinterest', 'reddit', 'telegram', 'mastodon', 'discord', 'threads', 'bluesky'];
    expect(new Set(PROFILES.map((c) => c[2]!.platform))).toEqual(new Set(platforms));
    expect(URL_CASES.length).toBeGreaterThanOrEqual(100);
  });
});

// ---------------------------------------------------------------- pages

const URL = 'https://scour.example/en/about';
const ld = (json: unknown): string => `<script type="application/ld+json">${JSON.stringify(json)}</script>`;
const keys = (ps: readonly SocialProfile[]): string[] => ps.map((p) => `${p.platform} ${p.url}`);

/** [label, html, page URL, expected `platform url` in order] */
type PageCase = readonly [string, string, string, readonly string[]];

const PAGES: readonly PageCase[] = [
  [
    'the same profile in five spellings is one item',
    `<footer><a href="https://twitter.com/ScourHQ">Twitter</a> <a href="http://www.x.com/scourhq/">X</a>
     <a href="https://mobile.twitter.com/ScourHQ?ref_src=twsrc%5Etfw">X</a> <a href="https://x.com/SCOURHQ#top">X</a>
     <a href="//twitter.com/scourhq/status/1">a post</a></footer>`,
    URL,
    ['x https://x.com/scourhq'],
  ],
  [
    'share buttons and the networks\' own pages give nothing',
    `<div class="share"><a href="https://twitter.com/intent/tweet?url=${encodeURIComponent(URL)}">Tweet</a>
     <a href="https://www.facebook.com/sharer/sharer.php?u=${encodeURIComponent(URL)}">Share</a>
     <a href="https://www.linkedin.com/shareArticle?mini=true&amp;url=x">LinkedIn</a>
     <a href="https://pinterest.com/pin/create/button/?url=x">Pin</a> <a href="https://www.reddit.com/submit?url=x">Reddit</a>
     <a href="https://t.me/share/url?url=x">Telegram</a> <a href="https://www.youtube.com/watch?v=abc">Video</a>
     <a href="https://www.facebook.com/privacy/policy/">Privacy</a> <a href="https://help.instagram.com/">Help</a></div>`,
    URL,
    [],
  ],
  [
    'JSON-LD sameAs (Wikipedia is not a social profile), declared profiles first',
    `<a href="https://github.com/scour-hq/scour">source</a>` +
      ld({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Scour', sameAs: ['https://www.linkedin.com/company/scour/', 'https://en.wikipedia.org/wiki/Scour', 'https://www.instagram.com/scour.hq', 'https://social.example.org/@scour'] }),
    URL,
    ['linkedin https://www.linkedin.com/company/scour', 'instagram https://www.instagram.com/scour.hq', 'mastodon https://social.example.org/@scour', 'github https://github.com/scour-hq'],
  ],
  [
    'JSON-LD sameAs nested in a @graph (publisher and author), single string and @id forms',
    ld({
      '@context': 'https://schema.org',
      '@graph': [
        { '@type': 'NewsArticle', headline: 'H', author: { '@type': 'Person', name: 'Jane', sameAs: 'https://twitter.com/janedoe' } },
        { '@type': 'Organization', name: 'Scour', sameAs: [{ '@id': 'https://www.facebook.com/scourhq' }, 'youtube.com/@scour'] },
      ],
    }),
    URL,
    ['x https://x.com/janedoe', 'facebook https://www.facebook.com/scourhq', 'youtube https://www.youtube.com/@scour'],
  ],
  [
    'Microdata sameAs',
    `<div itemscope itemtype="https://schema.org/Organization"><span itemprop="name">Scour</span>
     <link itemprop="sameAs" href="https://www.tiktok.com/@scour.hq"><a itemprop="sameAs" href="https://bsky.app/profile/scour.example">Bluesky</a>
     <a itemprop="sameAs" href="https://hachyderm.io/@scour">Mastodon</a></div>`,
    URL,
    ['tiktok https://www.tiktok.com/@scour.hq', 'bluesky https://bsky.app/profile/scour.example', 'mastodon https://hachyderm.io/@scour'],
  ],
  [
    'RDFa sameAs',
    `<div vocab="https://schema.org/" typeof="Person"><span property="name">Jane</span>
     <a property="sameAs" href="https://www.reddit.com/user/janedoe">Reddit</a></div>`,
    URL,
    ['reddit https://www.reddit.com/user/janedoe'],
  ],
  [
    'rel="me" on a link and on <link> makes /@user on any server Mastodon; a plain link does not',
    `<head><link rel="me" href="https://social.example.org/@alice"><link rel="me" href="https://github.com/alice"></head>
     <body><a rel="me noopener" href="https://toot.example.net/@alice">Mastodon</a>
     <a href="https://other.example.net/@bob">someone else</a></body>`,
    URL,
    ['mastodon https://social.example.org/@alice', 'github https://github.com/alice', 'mastodon https://toot.example.net/@alice'],
  ],
  [
    'rel="me" on an arbitrary-host link that is not a network: nothing',
    `<a rel="me" href="https://alice.example/">my site</a> <a rel="me" href="https://medium.com/@alice">Medium</a>`,
    URL,
    [],
  ],
  [
    'fediverse addresses in text (German), not e-mail addresses',
    `<p>Folgt uns auf Mastodon: @scour@chaos.social und (@Scour@Social.Example.ORG).</p>
     <p>Kontakt: info@scour.example, @support@gmail.com, x@alice@example.social, @bob@example.social.evil@x</p>
     <textarea>@nope@example.social</textarea><script>var a = "@nope@example.social";</script>`,
    'https://scour.example/de/impressum',
    ['mastodon https://chaos.social/@scour', 'mastodon https://social.example.org/@scour'],
  ],
  [
    'German Impressum: country subdomains and country domains',
    `<h2>Impressum</h2><p>Sie finden uns auch auf
     <a href="https://de.linkedin.com/company/scour-gmbh">LinkedIn</a>, <a href="https://de-de.facebook.com/ScourGmbH/">Facebook</a>,
     <a href="https://www.pinterest.de/scourgmbh/">Pinterest</a> und <a href="https://www.xing.com/pages/scourgmbh">XING</a>.</p>
     <a href="https://www.facebook.com/policies/cookies/">Cookie-Richtlinie</a>`,
    'https://scour.example/de/impressum',
    ['linkedin https://www.linkedin.com/company/scour-gmbh', 'facebook https://www.facebook.com/scourgmbh', 'pinterest https://www.pinterest.com/scourgmbh'],
  ],
  [
    'Japanese page: mstdn.jp, jp.pinterest, a Japanese YouTube handle, LINE is not covered',
    `<p>公式アカウント：<a href="https://mstdn.jp/@scour">マストドン</a>、<a href="https://jp.pinterest.com/scour_jp/">ピンタレスト</a>、
     <a href="https://www.youtube.com/@${JP}">ユーチューブ</a>、<a href="https://line.me/R/ti/p/@scour">LINE</a>。マストドン：@scour_jp@mstdn.jp</p>`,
    'https://scour.example/ja/',
    ['mastodon https://mstdn.jp/@scour', 'pinterest https://www.pinterest.com/scour_jp', `youtube https://www.youtube.com/@${JP}`, 'mastodon https://mstdn.jp/@scour_jp'],
  ],
  [
    'French page: relative links resolved against <base>',
    `<head><base href="https://twitter.com/"></head><p>Suivez-nous sur <a href="ScourFR">Twitter</a>
     et <a href="https://www.instagram.com/scour.fr/?hl=fr">Instagram</a>.</p>`,
    'https://scour.example/fr/',
    ['x https://x.com/scourfr', 'instagram https://www.instagram.com/scour.fr'],
  ],
  [
    'meta tags: twitter:site, twitter:creator, article:publisher, fediverse:creator',
    `<head><meta name="twitter:site" content="@ScourHQ"><meta name="twitter:creator" content="@janedoe">
     <meta property="article:publisher" content="https://www.facebook.com/scourhq"><meta name="fediverse:creator" content="@jane@social.example.org">
     <meta name="twitter:site:id" content="12345"></head>`,
    URL,
    ['x https://x.com/scourhq', 'x https://x.com/janedoe', 'facebook https://www.facebook.com/scourhq', 'mastodon https://social.example.org/@jane'],
  ],
  [
    'profiles reduced from content come after profiles linked directly',
    `<blockquote class="twitter-tweet"><a href="https://twitter.com/someone/status/1">tweet</a></blockquote>
     <a href="https://github.com/someone/project">repo</a><footer><a href="https://www.threads.net/@scour.hq">Threads</a>
     <a href="https://discord.gg/scour">Discord</a></footer>`,
    URL,
    ['threads https://www.threads.com/@scour.hq', 'discord https://discord.gg/scour', 'x https://x.com/someone', 'github https://github.com/someone'],
  ],
  [
    'links inside template and svg are not links',
    `<template><a href="https://x.com/hidden">x</a></template><svg><a href="https://x.com/insvg">x</a></svg>`,
    URL,
    [],
  ],
];

describe('extractSocial', () => {
  it.each(PAGES)('%s', (_label, html, url, expected) => {
    expect(keys(extractSocial(page(html, url)))).toEqual(expected);
  });

  it('gives the full item: platform, canonical url, handle, kind and the page it came from', () => {
    const p = page('<a href="https://www.linkedin.com/in/Jane-Doe/">in</a><a href="https://t.me/ScourNews">tg</a>', 'https://scour.example/a');
    const redirected = { ...p, finalUrl: 'https://scour.example/b' };
    expect(extractSocial(redirected)).toEqual([
      { platform: 'linkedin', url: 'https://www.linkedin.com/in/jane-doe', handle: 'jane-doe', kind: 'person', source_url: 'https://scour.example/b' },
      { platform: 'telegram', url: 'https://t.me/scournews', handle: 'scournews', source_url: 'https://scour.example/b' },
    ]);
  });

  it('is the socialExtractor plugin (built in: switched on by extract_social and include_social)', () => {
    expect(socialExtractor).toMatchObject({ kind: 'extractor', name: 'extractor-social', id: 'social', filter: { contentTypes: ['text/html', 'application/xhtml+xml'] } });
    expect(socialExtractor.builtin).toBe(true);
    expect(keys(socialExtractor.extract(page('<a href="https://github.com/scour-hq">gh</a>'), {}) as SocialProfile[])).toEqual(['github https://github.com/scour-hq']);
  });
});

describe('mergeProfiles', () => {
  it('de-duplicates across pages by platform and canonical url, keeping the first source_url and the order', () => {
    const home = extractSocial(page('<a href="https://twitter.com/ScourHQ">x</a><a href="https://github.com/scour-hq">gh</a>', 'https://scour.example/'));
    const about = extractSocial(page('<a href="https://x.com/scourhq/">x</a><a href="https://linkedin.com/company/scour">in</a>', 'https://scour.example/about'));
    const merged = mergeProfiles([home, about, []]);
    expect(merged.map((p) => [p.platform, p.url, p.source_url])).toEqual([
      ['x', 'https://x.com/scourhq', 'https://scour.example/'],
      ['github', 'https://github.com/scour-hq', 'https://scour.example/'],
      ['linkedin', 'https://www.linkedin.com/company/scour', 'https://scour.example/about'],
    ]);
    expect(mergeProfiles([])).toEqual([]);
  });
});

describe('bounded work', () => {
  it.each([
    ['50k distinct profile links', () => Array.from({ length: 50_000 }, (_, i) => `<a href="https://github.com/user${i}">u</a>`).join('')],
    ['50k share buttons', () => '<a href="https://twitter.com/intent/tweet?url=x">t</a>'.repeat(50_000)],
    ['50k links to arbitrary /@ pages with rel=me', () => Array.from({ length: 50_000 }, (_, i) => `<a rel="me" href="https://h${i}.example/@u">u</a>`).join('')],
    ['50k fediverse addresses in text', () => `<p>${Array.from({ length: 50_000 }, (_, i) => `@u${i}@s${i}.example`).join(' ')}</p>`],
    ['one huge text of @ signs', () => `<p>${'@a'.repeat(500_000)}</p>`],
    ['50k twitter:site metas', () => Array.from({ length: 50_000 }, (_, i) => `<meta name="twitter:site" content="@u${i}">`).join('')],
    ['50k sameAs values', () => ld({ '@type': 'Organization', sameAs: Array.from({ length: 50_000 }, (_, i) => `https://x.com/u${i}`) })],
  ])('stays fast and capped on %s', (_label, make) => {
    const p = page(make());
    const t0 = performance.now();
    const found = extractSocial(p);
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(found.length).toBeLessThanOrEqual(MAX_PROFILES);
  });
});

// ---------------------------------------------------------------- precision / recall

describe('precisionRecall', () => {
  it('counts true/false positives and false negatives by platform + url', () => {
    const a = { platform: 'x', url: 'https://x.com/a' };
    const b = { platform: 'x', url: 'https://x.com/b' };
    const c = { platform: 'github', url: 'https://github.com/c' };
    const s = precisionRecall([
      { expected: [a, b], actual: [a, c] },
      { expected: [], actual: [] },
      { expected: [c], actual: [c, c] },
    ]);
    expect(s).toMatchObject({ cases: 3, truePositives: 2, falsePositives: 1, falseNegatives: 1 });
    expect(s.precision).toBeCloseTo(2 / 3);
    expect(s.recall).toBeCloseTo(2 / 3);
    expect(s.f1).toBeCloseTo(2 / 3);
    expect(precisionRecall([])).toMatchObject({ precision: 1, recall: 1 });
  });

  it('is perfect on this table (URL cases and pages)', () => {
    const cases: ScoreCase[] = [
      ...URL_CASES.map(([, url, expected, asserted]) => {
        const actual = normaliseProfileUrl(url, { asserted: asserted === true });
        return { expected: expected === undefined ? [] : [expected], actual: actual === undefined ? [] : [actual] };
      }),
      ...PAGES.map(([, html, url, expected]) => ({
        expected: expected.map((k) => ({ platform: k.slice(0, k.indexOf(' ')), url: k.slice(k.indexOf(' ') + 1) })),
        actual: extractSocial(page(html, url)),
      })),
    ];
    const score = precisionRecall(cases);
    expect(score.cases).toBe(URL_CASES.length + PAGES.length);
    expect({ precision: score.precision, recall: score.recall }).toEqual({ precision: 1, recall: 1 });
  });
});
