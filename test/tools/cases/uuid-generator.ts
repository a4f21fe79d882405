/** Case table for the uuid-generator tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

const versioned = (v: number) => new RegExp(`^[0-9a-f]{8}-[0-9a-f]{4}-${v}[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`);
const one = (uuid: string, version: number, format = 'standard') => (b: any) =>
  expect(b).toEqual({ uuids: [uuid], version, count: 1, format });

// Known vectors: RFC 9562 appendix A.2 / A.4 (www.example.com in the DNS namespace) and the Python uuid docs.
const V5_DNS_EXAMPLE = '2ed6657d-e927-568b-95e1-2665a8aea6a2';
const V3_DNS_EXAMPLE = '5df41881-3aed-3515-88a7-2f4a814cf09e';

export default {
  slug: 'uuid-generator',
  cases: [
    {
      name: 'empty body: one random v4 (the benchmark path)',
      body: {},
      status: 200,
      check: (b) => {
        expect(Object.keys(b)).toEqual(['uuids', 'version', 'count', 'format']);
        expect(b.version).toBe(4);
        expect(b.count).toBe(1);
        expect(b.format).toBe('standard');
        expect(b.uuids).toHaveLength(1);
        expect(b.uuids[0]).toMatch(versioned(4));
      },
    },
    {
      name: '1000 v4 UUIDs, all distinct',
      body: { count: 1000 },
      status: 200,
      check: (b) => {
        expect(b.uuids).toHaveLength(1000);
        expect(new Set(b.uuids).size).toBe(1000);
        for (const u of b.uuids) expect(u).toMatch(versioned(4));
      },
    },
    {
      name: 'v7 batch is strictly increasing and carries the current time',
      body: { version: 7, count: 1000 },
      status: 200,
      check: (b) => {
        expect(b.uuids).toHaveLength(1000);
        for (let i = 0; i < b.uuids.length; i++) {
          expect(b.uuids[i]).toMatch(versioned(7));
          if (i > 0) expect(b.uuids[i] > b.uuids[i - 1]).toBe(true);
        }
        const ms = parseInt(b.uuids[0].replace(/-/g, '').slice(0, 12), 16);
        expect(Math.abs(ms - Date.now())).toBeLessThan(60_000);
      },
    },
    {
      name: 'v1',
      body: { version: 1, count: 3 },
      status: 200,
      check: (b) => {
        expect(b.uuids).toHaveLength(3);
        for (const u of b.uuids) expect(u).toMatch(versioned(1));
        expect(new Set(b.uuids).size).toBe(3);
      },
    },
    {
      name: 'v6 batch is increasing',
      body: { version: 6, count: 50 },
      status: 200,
      check: (b) => {
        for (let i = 0; i < b.uuids.length; i++) {
          expect(b.uuids[i]).toMatch(versioned(6));
          if (i > 0) expect(b.uuids[i] > b.uuids[i - 1]).toBe(true);
        }
      },
    },
    { name: 'v5 RFC 9562 vector (dns, www.example.com)', body: { version: 5, namespace: 'dns', name: 'www.example.com' }, status: 200, check: one(V5_DNS_EXAMPLE, 5) },
    { name: 'v3 RFC 9562 vector (dns, www.example.com)', body: { version: 3, namespace: 'dns', name: 'www.example.com' }, status: 200, check: one(V3_DNS_EXAMPLE, 3) },
    {
      name: 'v5 with the DNS namespace given as a UUID (uppercase accepted)',
      body: { version: 5, namespace: '6BA7B810-9DAD-11D1-80B4-00C04FD430C8', name: 'www.example.com' },
      status: 200,
      check: one(V5_DNS_EXAMPLE, 5),
    },
    { name: 'v5 url namespace (Python docs vector)', body: { version: 5, namespace: 'url', name: 'http://python.org/' }, status: 200, check: one('4c565f0d-3f5a-5890-b41b-20cf47701c5e', 5) },
    { name: 'v3 dns python.org (Python docs vector)', body: { version: 3, namespace: 'DNS', name: 'python.org' }, status: 200, check: one('6fa459ea-ee8a-3ca4-894e-db77e160355e', 3) },
    { name: 'v5 oid namespace', body: { version: 5, namespace: 'oid', name: '1.3.6.1' }, status: 200, check: one('1447fa61-5277-5fef-a9b3-fbc6e44f4af3', 5) },
    { name: 'v5 x500 namespace', body: { version: 5, namespace: 'x500', name: 'cn=x' }, status: 200, check: one('a951fb6d-5aab-5a72-8e2e-9aa8df8d1f8f', 5) },
    { name: 'v5 name is hashed as UTF-8', body: { version: 5, namespace: 'dns', name: 'é😀' }, status: 200, check: one('e47cc508-d5a0-5612-84ee-dafa79a49894', 5) },
    {
      name: 'v5 with a namespace that is not an RFC-variant UUID (any 128-bit value is allowed)',
      body: { version: 5, namespace: '00000000-0000-0000-0000-000000000000', name: '' },
      status: 200,
      check: (b) => expect(b.uuids[0]).toMatch(versioned(5)),
    },
    { name: 'format uppercase', body: { version: 5, namespace: 'dns', name: 'www.example.com', format: 'uppercase' }, status: 200, check: one(V5_DNS_EXAMPLE.toUpperCase(), 5, 'uppercase') },
    { name: 'format no_hyphens', body: { version: 5, namespace: 'dns', name: 'www.example.com', format: 'no_hyphens' }, status: 200, check: one('2ed6657de927568b95e12665a8aea6a2', 5, 'no_hyphens') },
    { name: 'format braces', body: { version: 5, namespace: 'dns', name: 'www.example.com', format: 'braces' }, status: 200, check: one(`{${V5_DNS_EXAMPLE}}`, 5, 'braces') },
    { name: 'format urn', body: { version: 5, namespace: 'dns', name: 'www.example.com', format: 'urn' }, status: 200, check: one(`urn:uuid:${V5_DNS_EXAMPLE}`, 5, 'urn') },
    {
      name: 'format applies to every UUID of a batch',
      body: { count: 5, format: 'urn', version: 7 },
      status: 200,
      check: (b) => {
        expect(b.count).toBe(5);
        for (const u of b.uuids) expect(u).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      },
    },

    // --- 400s ---
    { name: 'count 0', body: { count: 0 }, status: 400, fields: ['count'] },
    { name: 'count 1001', body: { count: 1001 }, status: 400, fields: ['count'] },
    { name: 'count huge', body: { count: 1e12 }, status: 400, fields: ['count'] },
    { name: 'count fractional', body: { count: 1.5 }, status: 400, fields: ['count'] },
    { name: 'count as a string', body: { count: '5' }, status: 400, fields: ['count'] },
    { name: 'version 2 (DCE security) is not offered', body: { version: 2 }, status: 400, fields: ['version'] },
    { name: 'version 8', body: { version: 8 }, status: 400, fields: ['version'] },
    { name: 'version as a string', body: { version: '4' }, status: 400, fields: ['version'] },
    { name: 'unknown format', body: { format: 'lower' }, status: 400, fields: ['format'] },
    { name: 'unknown field', body: { versions: 4 }, status: 400, fields: ['versions'] },
    { name: 'v5 without namespace and name', body: { version: 5 }, status: 400, fields: ['namespace', 'name'] },
    { name: 'v5 without name', body: { version: 5, namespace: 'dns' }, status: 400, fields: ['name'] },
    { name: 'v3 without namespace', body: { version: 3, name: 'x' }, status: 400, fields: ['namespace'] },
    { name: 'v5 with an unknown namespace', body: { version: 5, namespace: 'email', name: 'x' }, status: 400, fields: ['namespace'] },
    { name: 'v5 with a malformed namespace UUID', body: { version: 5, namespace: '6ba7b810-9dad-11d1-80b4-00c04fd430c', name: 'x' }, status: 400, fields: ['namespace'] },
    { name: 'v5 with a namespace that is too long', body: { version: 5, namespace: 'x'.repeat(65), name: 'x' }, status: 400, fields: ['namespace'] },
    { name: 'v5 with count above 1 (deterministic)', body: { version: 5, namespace: 'dns', name: 'x', count: 2 }, status: 400, fields: ['count'] },
    { name: 'v5 with a name over 65536 characters', body: { version: 5, namespace: 'dns', name: 'x'.repeat(65_537) }, status: 400, fields: ['name'] },
    { name: 'v5 with a lone surrogate in the name', body: { version: 5, namespace: 'dns', name: 'a\udc00' }, status: 400, fields: ['name'] },
    { name: 'name with v4 is refused', body: { name: 'x' }, status: 400, fields: ['name'] },
    { name: 'namespace with v7 is refused', body: { version: 7, namespace: 'dns' }, status: 400, fields: ['namespace'] },
    { name: 'name not a string', body: { version: 5, namespace: 'dns', name: 5 }, status: 400, fields: ['name'] },
  ],
} satisfies ToolCaseFile;
