/**
 * Generates `adapters/client/types.gen.ts`, the request and answer types of
 * `scour/client`, from the OpenAPI document the server builds from its own
 * route schemas (the schemas its validators are compiled from). One source
 * of truth: test/http/client-types.test.ts regenerates the file and fails
 * when the committed copy differs.
 *
 *   npm run gen:client     (node --import tsx scripts/gen-client-types.ts)
 *
 * The client imports nothing else from the server, so it stays a
 * standalone module (Node 20+ and browsers) whose declarations are
 * self-contained.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';

/** Operations the client calls: `METHOD path` of the route, the type name, and which bodies to type. */
const OPERATIONS: readonly { readonly route: string; readonly request?: string; readonly response: string; readonly status?: string }[] = [
  { route: 'POST /v1/search', request: 'SearchRequest', response: 'SearchResponse' },
  { route: 'POST /v1/scrape', request: 'ScrapeRequest', response: 'ScrapeResponse' },
  { route: 'POST /v1/scrape/bulk', request: 'BulkScrapeRequest', response: 'BulkScrapeResponse' },
  { route: 'POST /v1/scrape/bulk', response: 'BulkScrapeAccepted', status: '202' },
  { route: 'GET /v1/scrape/bulk/{job_id}', response: 'BulkScrapeJob' },
  { route: 'POST /v1/crawl', request: 'CrawlRequest', response: 'CrawlAccepted', status: '202' },
  { route: 'GET /v1/crawl/{job_id}', response: 'CrawlJob' },
  { route: 'POST /v1/map', request: 'MapRequest', response: 'MapResponse' },
  { route: 'POST /v1/research', request: 'ResearchRequest', response: 'ResearchResponse' },
  { route: 'POST /v1/research', response: 'ResearchAccepted', status: '202' },
  { route: 'GET /v1/research/{job_id}', response: 'ResearchJob' },
  { route: 'GET /v1/usage', response: 'UsageResponse' },
];

type Doc = { paths: Record<string, Record<string, Operation>> };
type Operation = {
  requestBody?: { content: Record<string, { schema: JSONSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JSONSchema }> }>;
};

const pascal = (slug: string) => slug.split('-').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');

/**
 * Nested `title`s and `$id`s would become separately named declarations that
 * collide across operations: every nested shape is inlined instead.
 */
function inline(schema: unknown, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, false));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if ((k === 'title' || k === '$id') && !top) continue;
    if (k === '$id') continue;
    // `properties` maps names to schemas: a property called "title" is kept.
    out[k] = k === 'properties' && v && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, inline(s, false)]))
      : inline(v, false);
  }
  return out;
}

/**
 * A request field with a `default` may be left out (the validator fills it
 * in before the `required` check), so request types list it as optional.
 */
function defaultsOptional(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(defaultsOptional);
  if (schema === null || typeof schema !== 'object') return schema;
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    out[k] = k === 'properties' && v && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).map(([p, x]) => [p, defaultsOptional(x)]))
      : defaultsOptional(v);
  }
  const props = s.properties as Record<string, { default?: unknown }> | undefined;
  if (Array.isArray(s.required) && props) out.required = (s.required as string[]).filter((p) => props[p]?.default === undefined);
  return out;
}

async function declare(name: string, schema: JSONSchema | undefined, doc: string, request = false): Promise<string> {
  if (!schema) throw new Error(`no schema for ${name}`);
  const shaped = inline(request ? defaultsOptional(schema) : schema) as JSONSchema;
  const ts = await compile({ ...shaped, title: name }, name, {
    bannerComment: '',
    additionalProperties: false,
    strictIndexSignatures: false,
    format: true,
    declareExternallyReferenced: true,
    unknownAny: true,
    // Bounded arrays stay arrays (not tuples of every allowed length), as in the server's own types.
    ignoreMinAndMaxItems: true,
  });
  return `/** ${doc} */\n${ts.trim()}\n`;
}

/** The generated module's text, from a running-free app (a throw-away SQLite directory). */
export async function generateClientTypes(): Promise<string> {
  const { createScour } = await import('../config/container.js');
  const { loadSettings } = await import('../config/env.js');
  const { openApiDocument } = await import('../core/openapi.js');
  const { VERSION } = await import('../config/version.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'scour-gen-'));
  let doc: Doc;
  try {
    const scour = await createScour({ settings: { ...loadSettings({}), dataDir, logLevel: 'silent' } });
    try {
      doc = openApiDocument(scour.app.compiled.map((c) => c.route), { title: 'Scour API', version: VERSION }) as unknown as Doc;
    } finally {
      await scour.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const op = (route: string): Operation => {
    const [method, path] = route.split(' ') as [string, string];
    const o = doc.paths[path]?.[method.toLowerCase()];
    if (!o) throw new Error(`the server has no route ${route}`);
    return o;
  };
  const parts: string[] = [
    '/**',
    ' * GENERATED by scripts/gen-client-types.ts from the server\'s OpenAPI document',
    ' * (itself built from the route schemas the server validates with). Do not',
    ' * edit: run `npm run gen:client`. test/http/client-types.test.ts fails when',
    ' * this file and the server\'s schemas disagree.',
    ' */',
    '/* eslint-disable */',
    '',
  ];
  for (const o of OPERATIONS) {
    const operation = op(o.route);
    if (o.request) parts.push(await declare(o.request, operation.requestBody?.content['application/json']?.schema, `Body of ${o.route}.`, true));
    const status = o.status ?? Object.keys(operation.responses).find((s) => s.startsWith('2')) ?? '200';
    parts.push(await declare(o.response, operation.responses[status]?.content?.['application/json']?.schema, `Answer ${status} of ${o.route}.`));
  }
  const tools = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/tools/') && doc.paths[p]!.post).sort();
  if (tools.length === 0) throw new Error('the server has no tool routes');
  const slugs: string[] = [];
  for (const path of tools) {
    const slug = path.slice('/v1/tools/'.length);
    slugs.push(slug);
    const operation = doc.paths[path]!.post!;
    parts.push(await declare(`${pascal(slug)}ToolRequest`, operation.requestBody?.content['application/json']?.schema ?? { type: 'object' }, `Body of POST ${path}.`, true));
    parts.push(await declare(`${pascal(slug)}ToolResponse`, operation.responses['200']?.content?.['application/json']?.schema, `Answer 200 of POST ${path}.`));
  }
  parts.push(
    '/** The developer tools\' slugs (POST /v1/tools/{slug}). */',
    `export const TOOL_SLUGS = [${slugs.map((s) => `'${s}'`).join(', ')}] as const;`,
    'export type ToolSlug = (typeof TOOL_SLUGS)[number];',
    '',
    '/** Body of each tool, by slug. */',
    'export interface ToolRequests {',
    ...slugs.map((s) => `  '${s}': ${pascal(s)}ToolRequest;`),
    '}',
    '',
    '/** Answer of each tool, by slug. */',
    'export interface ToolResponses {',
    ...slugs.map((s) => `  '${s}': ${pascal(s)}ToolResponse;`),
    '}',
    '',
  );
  return parts.join('\n');
}

export const TYPES_FILE = fileURLToPath(new URL('../adapters/client/types.gen.ts', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(TYPES_FILE, await generateClientTypes());
  process.stdout.write(`wrote ${TYPES_FILE}\n`);
}
