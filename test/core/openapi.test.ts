/** The generated OpenAPI document is valid OpenAPI 3.1 (checked against the official schema) and covers every route. */
import { Validator } from '@seriousme/openapi-schema-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../core/openapi.js';
import { createScour, type Scour } from '../../config/container.js';

describe('OpenAPI document', () => {
  let scour: Scour;
  const dataDir = mkdtempSync(join(tmpdir(), 'scour-openapi-'));
  beforeAll(async () => {
    // With the admin API on, so its routes are in the document too.
    scour = await createScour({ settings: { logLevel: 'silent', dataDir, adminToken: 'openapi-test-token-0123' } });
  });
  afterAll(async () => {
    await scour.stop();
    rmSync(dataDir, { recursive: true, force: true });
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
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/usage', '/admin/v1/accounts', '/admin/v1/keys/{key_id}']));
  });

  it('documents 201 for creations and bearer security on /v1/usage', () => {
    const doc = openApiDocument(scour.app.compiled.map((c) => c.route), { title: 'Scour API', version: '0.0.0' }) as { paths: Record<string, Record<string, { responses: Record<string, unknown>; security: unknown[] }>> };
    expect(Object.keys(doc.paths['/admin/v1/accounts']!.post!.responses)).toContain('201');
    expect(doc.paths['/v1/usage']!.get!.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(doc.paths['/v1/usage']!.get!.responses)).toEqual(expect.arrayContaining(['200', '401', '429', '503']));
  });
});
