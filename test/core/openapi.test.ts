/** The generated OpenAPI document is valid OpenAPI 3.1 (checked against the official schema) and covers every route. */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../core/openapi.js';
import { createScour, type Scour } from '../../config/container.js';

describe('OpenAPI document', () => {
  let scour: Scour;
  beforeAll(async () => {
    scour = await createScour({ settings: { logLevel: 'silent' } });
  });
  afterAll(async () => {
    await scour.stop();
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const doc = openApiDocument(scour.app.compiled.map((c) => c.route), { title: 'Scour API', version: '0.0.0' });
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Validator.supportedVersions.has('3.1')).toBe(true);
  });

  it('lists every route with unique operation ids', () => {
    const doc = openApiDocument(scour.app.compiled.map((c) => c.route), { title: 'Scour API', version: '0.0.0' }) as { paths: Record<string, Record<string, { operationId: string }>> };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops).toHaveLength(scour.app.compiled.length);
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);
  });
});
