// The baseline: the same tool on Fastify, with a compiled body schema and a
// response schema (Fastify's fast path), logging off.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? 9002);
const app = Fastify({ logger: false });
let n = 0;
app.post('/v1/tools/uuid-generator', {
  schema: {
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { version: { type: 'integer', default: 4 }, count: { type: 'integer', minimum: 1, maximum: 1000, default: 1 } },
    },
    response: {
      200: {
        type: 'object',
        properties: { uuids: { type: 'array', items: { type: 'string' } }, version: { type: 'integer' }, count: { type: 'integer' }, format: { type: 'string' }, request_id: { type: 'string' } },
      },
    },
  },
}, async (req) => ({ uuids: [randomUUID()], version: 4, count: 1, format: 'standard', request_id: `fastify-${n++}` }));
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port });
console.log(`listening ${port}`);
