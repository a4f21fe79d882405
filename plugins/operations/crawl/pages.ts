/**
 * How a crawl fetches: through the scrape operation's stages (scrapeStages),
 * so every page, robots.txt and sitemap goes through the registered fetcher
 * plugins behind the egress guard (each redirect hop too), is judged like a
 * scrape (a 403 or a challenge page is TARGET_BLOCKED) and is read by the
 * same extractors (text, main content, meta data, links).
 */
import { Cause, Effect, Exit } from 'effect';
import type { FetchResult } from '../../sdk/scrape.js';
import type { scrapeStages } from '../scrape.js';
import type { CrawledPage, FetchPage } from './engine.js';
import { CRAWLER_USER_AGENT, type FetchText } from './politeness.js';

type Stages = ReturnType<typeof scrapeStages>;

/** Seconds one page may take (fetch and render). */
export const PAGE_TIMEOUT_SECONDS = 30;
/** Seconds robots.txt or a sitemap may take. */
const TEXT_TIMEOUT_SECONDS = 15;
/** The main content is the page's text when it is at least this long, else the whole text is (as scrapes are indexed). */
const MIN_MAIN_CONTENT = 200;

/** Run an Effect as a Promise that rejects with its failure itself (an ApiFailure), aborting it with `signal`. */
async function runAbortable<A, E>(effect: Effect.Effect<A, E>, signal: AbortSignal): Promise<A> {
  const exit = await Effect.runPromiseExit(effect, { signal });
  if (Exit.isSuccess(exit)) return exit.value;
  const failure = Cause.findErrorOption(exit.cause);
  if (failure._tag === 'Some') throw failure.value;
  if (Cause.hasInterruptsOnly(exit.cause)) throw signal.reason ?? new Error('aborted');
  throw Cause.squash(exit.cause);
}

const context = (input: Record<string, unknown>) => ({
  requestId: 'crawl', receivedAt: Date.now(), method: 'GET', path: '/', params: {}, clientIp: '', headers: {}, input,
});

const firstString = (v: unknown): string | undefined => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined);

export function crawlFetchers(stages: Stages): { fetchPage: FetchPage; fetchText: FetchText } {
  const fetchPage: FetchPage = (url, o) => {
    const input = {
      url, follow_redirects: false, timeout: PAGE_TIMEOUT_SECONDS, user_agent: CRAWLER_USER_AGENT,
      main_content: true, extract_meta: true, extract_links: true, ...(o.renderJs ? { render_js: true } : {}),
    };
    const ctx = context(input);
    const effect = Effect.flatMap(stages.fetchStage.run(ctx as never), (fetched: { result: FetchResult }) => {
      const r = fetched.result;
      const base = { statusCode: r.statusCode, headers: r.headers, contentType: r.contentType, finalUrl: r.finalUrl };
      const empty: CrawledPage = { ...base, title: null, text: '', language: null, links: [], metaRobots: '' };
      // A redirect or an error page is not read; 403s and challenge pages fail as TARGET_BLOCKED, like a scrape.
      if (r.statusCode >= 300 && r.statusCode < 400) return Effect.succeed(empty);
      return Effect.flatMap(stages.judge.run({ result: r }), () => {
        if (r.statusCode >= 400 || !/^(text\/html|application\/xhtml\+xml)/i.test(r.contentType)) return Effect.succeed(empty);
        return Effect.map(stages.extractStage.run({ ...ctx, result: r } as never), (ex: { builtins: Record<string, unknown> }): CrawledPage => {
          const b = ex.builtins;
          const meta = b.meta_data as { title?: string | null; language?: string | null; meta?: Record<string, unknown> } | undefined;
          const main = (b.main_content as string | undefined) ?? '';
          const whole = (b.text_content as string | undefined) ?? '';
          const lang = meta?.language?.slice(0, 2).toLowerCase();
          const robots = [firstString(meta?.meta?.robots), firstString(meta?.meta?.scourbot)].filter((x) => x !== undefined).join(',').toLowerCase();
          return {
            ...base,
            title: meta?.title ?? null,
            text: main.length >= MIN_MAIN_CONTENT ? main : whole,
            language: lang !== undefined && /^[a-z]{2}$/.test(lang) ? lang : null,
            links: ((b.links as { url: string; rel: string | null }[] | undefined) ?? []).map((l) => ({ url: l.url, rel: l.rel })),
            metaRobots: robots,
          };
        });
      });
    });
    return runAbortable(effect, o.signal);
  };

  const fetchText: FetchText = (url, signal) => {
    const ctx = context({ url, follow_redirects: true, timeout: TEXT_TIMEOUT_SECONDS, user_agent: CRAWLER_USER_AGENT });
    return runAbortable(
      Effect.map(stages.fetchStage.run(ctx as never), ({ result: r }: { result: FetchResult }) => ({
        statusCode: r.statusCode, contentType: r.contentType, body: r.body, finalUrl: r.finalUrl,
      })),
      signal,
    );
  };

  return { fetchPage, fetchText };
}
