/** Service routes: liveness, Prometheus metrics, and the OpenAPI document. */
import { Effect } from 'effect';
import { openApiDocument } from '../../core/openapi.js';
import { defineOperation, schema, StrictObject, Type } from '../sdk/index.js';

const HEALTH = { status: 'ok' } as const;

export const systemOperation = defineOperation({
  name: 'operation-system',
  description: 'GET /healthz, GET /metrics, GET /v1/openapi.json.',
  routes(host) {
    let openapi: string | undefined;
    return [
      {
        method: 'GET',
        path: '/healthz',
        summary: 'Liveness: 200 {"status":"ok"} while the server takes requests (503 while it shuts down).',
        tags: ['system'],
        auth: 'none',
        stampRequestId: false,
        response: schema(StrictObject({ status: Type.Literal('ok') })),
        handle: () => Effect.succeed(HEALTH),
      },
      {
        method: 'GET',
        path: '/metrics',
        summary: 'Prometheus text metrics: requests by route and status, latency histogram.',
        tags: ['system'],
        auth: 'none',
        produces: { contentType: 'text/plain; version=0.0.4; charset=utf-8' },
        handle: () => Effect.sync(() => host.metrics.render()),
      },
      {
        method: 'GET',
        path: '/v1/openapi.json',
        summary: 'This API as an OpenAPI 3.1 document, generated from the request schemas.',
        tags: ['system'],
        auth: 'none',
        produces: { contentType: 'application/json; charset=utf-8' },
        handle: () => Effect.sync(() => (openapi ??= JSON.stringify(openApiDocument(host.allRoutes(), { title: 'Scour API', version: host.settings.version })))),
      },
    ];
  },
});
