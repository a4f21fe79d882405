/**
 * The OpenAPI 3.1 document, generated from the same route schemas the
 * validators are compiled from, so the two cannot drift.
 */
import { errorCatalogue } from './errors.js';
import type { Route } from './plugin.js';
import type { JsonSchema } from './schema.js';

const ERROR_BODY: JsonSchema = {
  type: 'object',
  required: ['error', 'code', 'request_id', 'timestamp'],
  properties: {
    error: { type: 'string', description: 'Human-readable message.' },
    code: { type: 'string', description: 'Machine-readable code.' },
    message: { type: 'string' },
    details: { type: 'string', description: 'Extra context.' },
    request_id: { type: 'string', description: 'For support and debugging; also in the x-request-id header.' },
    timestamp: { type: 'string', format: 'date-time' },
    retry_after: { type: 'integer', description: 'Seconds to wait (429, 503).' },
    limit: { type: 'integer' },
    remaining: { type: 'integer' },
    reset: { type: 'integer', description: 'Unix seconds when the window resets.' },
    credits_remaining: { type: 'integer' },
    upgrade_url: { type: 'string' },
    allowed_methods: { type: 'array', items: { type: 'string' } },
    validation_errors: {
      type: 'array',
      items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const RATE_HEADERS = {
  'x-ratelimit-limit': { schema: { type: 'integer' }, description: 'Requests allowed per window.' },
  'x-ratelimit-remaining': { schema: { type: 'integer' }, description: 'Requests left in the window.' },
  'x-ratelimit-reset': { schema: { type: 'integer' }, description: 'Unix seconds when the window resets.' },
  'x-ratelimit-window': { schema: { type: 'integer' }, description: 'Window length in seconds (0 on a refusal by the concurrency cap, which is no time window).' },
};

/** Plain JSON copy: drops TypeBox's symbol keys and anything non-JSON. */
const plain = (s: unknown): JsonSchema => JSON.parse(JSON.stringify(s)) as JsonSchema;

/** The success body as sent: the operation's result plus the request_id the HTTP layer adds. */
function withRequestId(schema: JsonSchema): JsonSchema {
  const s = plain(schema) as Record<string, unknown>;
  if (s.type !== 'object') return s;
  return {
    ...s,
    properties: { ...(s.properties as object | undefined), request_id: { type: 'string', description: 'Also in the x-request-id header.' } },
    required: [...((s.required as string[] | undefined) ?? []), 'request_id'],
  };
}

export function openApiDocument(routes: readonly Route<unknown, unknown>[], info: { title: string; version: string }): Record<string, unknown> {
  const byStatus = new Map<number, string[]>();
  for (const e of errorCatalogue()) byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), `${e.code}: ${e.summary}`]);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const statuses = new Set<number>([...(r.failures ?? []), 500]);
    if (r.request) [400, 413, 415].forEach((s) => statuses.add(s));
    if (r.auth !== 'none') [401].forEach((s) => statuses.add(s));
    const responses: Record<string, unknown> = {};
    const ok = r.produces === undefined || r.produces === 'json'
      ? (() => {
        const schema = r.response ? (r.stampRequestId === false ? plain(r.response.json) : withRequestId(r.response.json)) : { type: 'object' };
        return { 'application/json': { schema }, 'application/msgpack': { schema } };
      })()
      : { [r.produces.contentType.split(';')[0]!]: { schema: { type: 'string' } } };
    const rated = r.tags?.includes('tools') || r.auth === 'bearer';
    responses[String(r.status ?? 200)] = { description: r.status === 201 ? 'Created' : 'Success', content: ok, ...(rated ? { headers: RATE_HEADERS } : {}) };
    if (r.alternate !== undefined) {
      const schema = r.stampRequestId === false ? plain(r.alternate.response.json) : withRequestId(r.alternate.response.json);
      responses[String(r.alternate.status)] = {
        description: 'Accepted',
        content: { 'application/json': { schema }, 'application/msgpack': { schema } },
        ...(rated ? { headers: RATE_HEADERS } : {}),
      };
    }
    for (const s of [...statuses].sort()) {
      responses[String(s)] = {
        description: (byStatus.get(s) ?? ['Error']).join(' | '),
        content: { 'application/json': { schema: r.errorShape === undefined ? { $ref: '#/components/schemas/ErrorBody' } : plain(r.errorShape.schema) } },
      };
    }
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}${r.path.replace(/[{}]/g, '').split(/[/-]/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('')}`,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      ...(r.tags ? { tags: r.tags } : {}),
      security: r.auth === 'bearer' ? [{ bearerAuth: [] }] : r.auth === 'admin' ? [{ adminToken: [] }] : [],
      ...(r.request
        ? { requestBody: { required: false, content: { 'application/json': { schema: plain(r.request.json) }, 'application/msgpack': { schema: plain(r.request.json) } } } }
        : {}),
      responses,
    };
    const params = [...r.path.matchAll(/\{([a-z_][a-z0-9_]*)\}/gi)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (params.length) op.parameters = params;
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: 'Scour: web search, scrape and research API, with free developer tools.' },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { ErrorBody: ERROR_BODY },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <SCOUR_ADMIN_TOKEN>' },
      },
    },
  };
}
