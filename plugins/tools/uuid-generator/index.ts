/**
 * uuid-generator: RFC 9562 UUIDs, versions 1, 3, 4, 5, 6 and 7.
 *
 * This is the throughput benchmark route (`POST /v1/tools/uuid-generator`
 * with `{}`), so the default request (one standard v4) takes a fast path:
 * one crypto.randomUUID() (Node keeps an entropy cache) and one small object.
 * The other versions come from the `uuid` package; its v7 keeps a per-process
 * counter, so a batch is strictly increasing.
 */
import { randomUUID } from 'node:crypto';
import { v1, v3, v5, v6, v7 } from 'uuid';
import { defineTool, requireWellFormed, StrictObject, Type, invalid, invalidMany } from '../../sdk/index.js';

export const MAX_COUNT = 1000;
export const MAX_NAME_CHARS = 65_536;

type Version = 1 | 3 | 4 | 5 | 6 | 7;
type Format = 'standard' | 'uppercase' | 'no_hyphens' | 'braces' | 'urn';

/** RFC 9562 section 6.6 predefined namespaces. */
const NAMESPACES: Readonly<Record<string, string>> = {
  dns: '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  url: '6ba7b811-9dad-11d1-80b4-00c04fd430c8',
  oid: '6ba7b812-9dad-11d1-80b4-00c04fd430c8',
  x500: '6ba7b814-9dad-11d1-80b4-00c04fd430c8',
};
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const utf8 = new TextEncoder();

function namespaceBytes(ns: string): Uint8Array {
  const known = NAMESPACES[ns.toLowerCase()];
  const text = known ?? (UUID_RE.test(ns) ? ns : undefined);
  if (text === undefined) {
    return invalid('namespace', "must be a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) or one of 'dns', 'url', 'oid', 'x500'");
  }
  // Any 128-bit value is a namespace; uuid's own parse() only takes RFC-variant UUIDs.
  return Uint8Array.from(Buffer.from(text.replace(/-/g, ''), 'hex'));
}

function formatOne(u: string, format: Format): string {
  switch (format) {
    case 'standard': return u;
    case 'uppercase': return u.toUpperCase();
    case 'no_hyphens': return u.replace(/-/g, '');
    case 'braces': return `{${u}}`;
    case 'urn': return `urn:uuid:${u}`;
  }
}

const request = StrictObject({
  version: Type.Unsafe<Version>({
    type: 'integer',
    enum: [1, 3, 4, 5, 6, 7],
    default: 4,
    description: 'UUID version: 4 random, 7 Unix-time ordered (sortable), 1 and 6 Gregorian time (random node), 3 (MD5) and 5 (SHA-1) name-based.',
  }),
  count: Type.Integer({ minimum: 1, maximum: MAX_COUNT, default: 1, description: 'How many UUIDs to generate (must be 1 for versions 3 and 5, which are deterministic).' }),
  format: Type.Union(
    [Type.Literal('standard'), Type.Literal('uppercase'), Type.Literal('no_hyphens'), Type.Literal('braces'), Type.Literal('urn')],
    { default: 'standard', description: "'standard' lowercase 8-4-4-4-12, 'uppercase', 'no_hyphens' (32 hex digits), 'braces' ({...}), 'urn' (urn:uuid:...)." },
  ),
  namespace: Type.Optional(Type.String({
    maxLength: 64,
    description: "Versions 3 and 5 only, required there: a UUID, or 'dns', 'url', 'oid', 'x500' for the RFC 9562 namespaces.",
  })),
  name: Type.Optional(Type.String({
    maxLength: MAX_NAME_CHARS,
    description: 'Versions 3 and 5 only, required there: the name to hash (as UTF-8) within the namespace.',
  })),
});

const response = Type.Object({
  uuids: Type.Array(Type.String({ maxLength: 45 }), { minItems: 1, maxItems: MAX_COUNT, description: 'The generated UUIDs, in the requested format. Version 7 batches are in strictly increasing order.' }),
  version: Type.Integer({ description: 'The UUID version generated.' }),
  count: Type.Integer({ minimum: 1, maximum: MAX_COUNT, description: 'Number of UUIDs.' }),
  format: Type.String({ description: 'The format used.' }),
});

export default defineTool({
  name: 'tool-uuid-generator',
  slug: 'uuid-generator',
  summary: 'Generate UUIDs (v1, v3, v4, v5, v6, v7)',
  description:
    'Generates up to 1000 UUIDs per request: random (v4, the default), time-ordered (v7, v6, v1) or name-based (v5 SHA-1, v3 MD5) ' +
    'in a namespace, in standard, uppercase, hyphen-less, braced or URN form.',
  request,
  response,
  example: {
    request: { version: 5, count: 1, format: 'standard', namespace: 'dns', name: 'www.example.com' },
    response: { uuids: ['2ed6657d-e927-568b-95e1-2665a8aea6a2'], version: 5, count: 1, format: 'standard' },
  },
  run({ version, count, format, namespace, name }) {
    // The benchmark path: `{}` with defaults filled in.
    if (version === 4 && count === 1 && format === 'standard' && namespace === undefined && name === undefined) {
      return { uuids: [randomUUID()], version: 4, count: 1, format: 'standard' };
    }

    if (version === 3 || version === 5) {
      if (namespace === undefined || name === undefined) {
        const issues: { field: string; message: string }[] = [];
        if (namespace === undefined) issues.push({ field: 'namespace', message: `is required for version ${version}` });
        if (name === undefined) issues.push({ field: 'name', message: `is required for version ${version}` });
        invalidMany(issues);
      }
      if (count !== 1) invalid('count', `must be 1 for version ${version}: name-based UUIDs are deterministic, the same namespace and name always give the same UUID`);
      const ns = namespaceBytes(namespace);
      requireWellFormed('name', name);
      const u = version === 5 ? v5(utf8.encode(name), ns) : v3(utf8.encode(name), ns);
      return { uuids: [formatOne(u, format)], version, count: 1, format };
    }

    if (namespace !== undefined) invalid('namespace', `is only used by versions 3 and 5, not ${version}`);
    if (name !== undefined) invalid('name', `is only used by versions 3 and 5, not ${version}`);

    const gen: () => string = version === 4 ? randomUUID : version === 7 ? v7 : version === 1 ? v1 : v6;
    const uuids = new Array<string>(count);
    if (format === 'standard') {
      for (let i = 0; i < count; i++) uuids[i] = gen();
    } else {
      for (let i = 0; i < count; i++) uuids[i] = formatOne(gen(), format);
    }
    return { uuids, version, count, format };
  },
});
