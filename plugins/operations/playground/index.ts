/**
 * GET /playground: a page to try the API from a browser. Three static files
 * (static/index.html, playground.js, playground.css: plain JavaScript, no
 * framework, no build step) read once at boot and served from memory on
 * three fixed paths, so no request path ever reaches the file system.
 *
 * Every answer carries a strict Content-Security-Policy: scripts, styles,
 * fetches and images from this origin only (screenshots are same-origin
 * /v1/screenshots/ paths; data: and blob: images are allowed too), nothing
 * inline, no frames, no forms posting anywhere. The page loads no
 * third-party script or font.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Effect } from 'effect';
import type { RequestContext } from '../../../core/context.js';
import type { Route } from '../../../core/plugin.js';
import { defineOperation } from '../../sdk/index.js';

export const PLAYGROUND_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every playground answer (besides content-type). */
const HEADERS: readonly (readonly [string, string])[] = [
  ['content-security-policy', PLAYGROUND_CSP],
  ['cache-control', 'no-cache'],
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'no-referrer'],
  ['x-frame-options', 'DENY'],
];

/**
 * The static directory: beside this module when run from the sources (tsx),
 * or in the repository's plugins/ tree when run from dist/ (tsc copies no
 * non-TypeScript files): dist/plugins/operations/playground -> ../../../../plugins/operations/playground.
 */
export function playgroundDir(moduleUrl: string | URL = import.meta.url): string {
  const candidates = [
    new URL('./static/', moduleUrl),
    new URL('../../../../plugins/operations/playground/static/', moduleUrl),
  ];
  for (const c of candidates) {
    const dir = fileURLToPath(c);
    if (existsSync(`${dir}index.html`)) return dir;
  }
  throw new Error(`PLAYGROUND_FILES_MISSING: playground static files not found (looked in ${candidates.map((c) => fileURLToPath(c)).join(', ')})`);
}

const FILES = [
  { path: '/playground', file: 'index.html', type: 'text/html; charset=utf-8', summary: 'The API playground: an HTML page to try every operation and tool from a browser.' },
  { path: '/playground/playground.js', file: 'playground.js', type: 'text/javascript; charset=utf-8', summary: "The playground's script." },
  { path: '/playground/playground.css', file: 'playground.css', type: 'text/css; charset=utf-8', summary: "The playground's style sheet." },
] as const;

export const playgroundOperation = defineOperation({
  name: 'operation-playground',
  description: 'GET /playground (and its script and style sheet): a browser page to try the API.',
  routes() {
    const dir = playgroundDir();
    return FILES.map((f): Route<unknown, string> => {
      const body = readFileSync(`${dir}${f.file}`, 'utf8');
      return {
        method: 'GET',
        path: f.path,
        summary: f.summary,
        tags: ['playground'],
        auth: 'none',
        produces: { contentType: f.type },
        handle: (ctx: RequestContext) => {
          for (const [name, value] of HEADERS) ctx.reply.set(name, value);
          return Effect.succeed(body);
        },
      };
    });
  },
});
