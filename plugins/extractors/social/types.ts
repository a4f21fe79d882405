/** The shapes of the social extractor: a profile, and what a URL rule answers. */

export type SocialPlatform =
  | 'x' | 'linkedin' | 'facebook' | 'instagram' | 'youtube' | 'tiktok' | 'github'
  | 'pinterest' | 'reddit' | 'telegram' | 'mastodon' | 'discord' | 'threads' | 'bluesky';

/**
 * Which kind of account, where the network has several behind different URL
 * shapes: linkedin person | company | school | showcase; youtube channel |
 * handle | user | custom; reddit user | subreddit; telegram invite (a
 * private group link, otherwise absent); discord invite | user.
 */
export type SocialKind =
  | 'person' | 'company' | 'school' | 'showcase'
  | 'channel' | 'handle' | 'user' | 'custom'
  | 'subreddit' | 'invite';

/** A profile as a URL names it (no page yet): what normaliseProfileUrl answers. */
export interface ProfileRef {
  readonly platform: SocialPlatform;
  /** Canonical form: one host per network, no query, fragment or trailing slash, lower case where the network ignores case. */
  readonly url: string;
  /** The account name without a leading "@" (Mastodon: "user@server"), or null when the URL names the account by number or invite. */
  readonly handle: string | null;
  readonly kind?: SocialKind;
}

/** A profile found on a page. */
export interface SocialProfile extends ProfileRef {
  /** The page it was found on (its final URL); across pages, the first one. */
  readonly source_url: string;
}

export interface NormaliseOptions {
  /**
   * The page asserts this URL is the same entity (rel="me", schema.org
   * sameAs, article:publisher): lets `https://any.server/@user` count as
   * Mastodon, which a plain link on an unknown host does not.
   */
  readonly asserted?: boolean;
}

/** A rule's answer: the profile and whether it was reduced from a content URL (a post, a repository ...). */
export interface Hit {
  readonly ref: ProfileRef;
  readonly derived: boolean;
}

export function hit(platform: SocialPlatform, url: string, handle: string | null, kind: SocialKind | undefined, derived: boolean): Hit {
  const ref: ProfileRef = kind === undefined ? { platform, url, handle } : { platform, url, handle, kind };
  return { ref, derived };
}
