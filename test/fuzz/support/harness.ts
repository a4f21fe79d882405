/**
 * The fuzz suites' side of a real Scour: start it with limits lifted (so
 * every case reaches validation), make the accounts the cases use, send one
 * case with a deadline, and check what came back against the invariants:
 * no 5xx, no hang, every 4xx the spec's error body, every 2xx the route's
 * documented response schema (ajv over GET /v1/openapi.json), every status
 * one the OpenAPI document lists for the route.
 */
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { Ajv, type ValidateFunction } from 'ajv';
import * as addFormatsModule from 'ajv-formats';
import { Packr, Unpackr } from 'msgpackr';
import { DEFAULT_PLANS, type Plans } from '../../../config/plans.js';
import { Deep } from './schema-arbitrary.js';
import { parseIpLiteral, classifyAddress } from '../../../core/egress.js';
import { startScourIn, type ConfigKind, type AdapterKind, type Running } from '../../support/server.js';
import type { TargetSite } from '../../support/target-site.js';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats));

export const ADMIN_TOKEN = 'fuzz-admin-token-0123456789abcdef';

/** Every plan's every limit lifted: a case is refused by what it is, never by how many came before it. */
export function liftedPlans(): Plans {
  const lift = { windows: [{ limit: 1_000_000_000, windowSeconds: 60 }], concurrency: 0 };
  const out: Record<string, unknown> = {};
  for (const [id, plan] of Object.entries(DEFAULT_PLANS)) {
    out[id] = { ...plan, limits: Object.fromEntries(Object.keys(plan.limits).map((k) => [k, lift])) };
  }
  return out as unknown as Plans;
}

export interface Accounts {
  /** Unicorn plan, 0 credits: valid requests stop at 402 after validation, gating and pricing. */
  readonly poor: string;
  /** Free plan, 0 credits: plan gates (403) and 402. */
  readonly poorFree: string;
  /** Unicorn plan with credits: the few cheap valid cases that do real work against the loopback target. */
  readonly rich: string;
  /** An account the admin cases may change (plan, credits, keys, webhook secret); the others are never touched. */
  readonly victimId: string;
  readonly victimKeyId: string;
}

export interface Fuzzed {
  readonly running: Running & { readonly config: ConfigKind };
  readonly accounts: Accounts;
  readonly doc: OpenApi;
  readonly validators: Validators;
  readonly url: string;
}

async function admin(url: string, path: string, body: unknown): Promise<any> {
  const r = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(body),
  });
  const json = await r.json();
  if (r.status !== 201) throw new Error(`fuzz setup: ${path} answered ${r.status} ${JSON.stringify(json)}`);
  return json;
}

export async function startFuzzed(config: ConfigKind, adapter: AdapterKind): Promise<Fuzzed> {
  const running = await startScourIn(config, adapter, {
    adminToken: ADMIN_TOKEN, allowPrivateTargets: 'loopback', searchProviders: ['local'], browserPages: 1,
    logLevel: 'warn', extractionWorkers: 0,
  }, { plans: liftedPlans() });
  try {
    const url = running.url;
    const poor = await admin(url, '/admin/v1/accounts', { plan: 'unicorn', credits: 0, name: 'fuzz poor' });
    const poorFree = await admin(url, '/admin/v1/accounts', { plan: 'free', credits: 0, name: 'fuzz poor free' });
    const rich = await admin(url, '/admin/v1/accounts', { plan: 'unicorn', credits: 1_000_000, name: 'fuzz rich' });
    const victim = await admin(url, '/admin/v1/accounts', { plan: 'starter', credits: 10, name: 'fuzz victim' });
    const doc = (await (await fetch(`${url}/v1/openapi.json`)).json()) as OpenApi;
    return {
      running, url, doc, validators: new Validators(doc),
      accounts: { poor: poor.api_key, poorFree: poorFree.api_key, rich: rich.api_key, victimId: victim.account_id, victimKeyId: victim.key_id },
    };
  } catch (e) {
    await running.stop();
    throw e;
  }
}

// ---------------------------------------------------------------------------
// The OpenAPI document and its schemas

export interface OpenApi {
  paths: Record<string, Record<string, {
    requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
    responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
    security?: Record<string, unknown>[];
  }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

export class Validators {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly cache = new Map<string, ValidateFunction>();
  readonly errorBody: ValidateFunction;

  constructor(private readonly doc: OpenApi) {
    addFormats(this.ajv);
    this.errorBody = this.ajv.compile(doc.components.schemas.ErrorBody!);
  }

  /** The request body schema of a route (JSON form). */
  requestSchema(template: string, method: string): Record<string, unknown> {
    const s = this.doc.paths[template]?.[method.toLowerCase()]?.requestBody?.content['application/json']?.schema;
    if (s === undefined) throw new Error(`no request schema for ${method} ${template}`);
    return s;
  }

  /** The statuses the document lists for a route. */
  statuses(template: string, method: string): Set<number> {
    const op = this.doc.paths[template]?.[method.toLowerCase()];
    if (op === undefined) throw new Error(`no route ${method} ${template} in the OpenAPI document`);
    return new Set(Object.keys(op.responses).map(Number));
  }

  /** The compiled schema of a success answer, undefined when the route documents none for that status. */
  success(template: string, method: string, status: number): ValidateFunction | undefined {
    const key = `${method} ${template} ${status}`;
    let v = this.cache.get(key);
    if (v === undefined) {
      const schema = this.doc.paths[template]?.[method.toLowerCase()]?.responses[String(status)]?.content?.['application/json']?.schema;
      if (schema === undefined) return undefined;
      v = this.ajv.compile(schema);
      this.cache.set(key, v);
    }
    return v;
  }
}

// ---------------------------------------------------------------------------
// URLs a case may carry: never one that makes the server resolve a name or
// reach a public address.

/** Refused before any lookup: documentation, private, metadata, multicast, unspecified addresses (IP literals). */
export const REFUSED_URLS: readonly string[] = [
  'http://192.0.2.1/', 'https://198.51.100.7/x', 'http://203.0.113.9:8080/a?b=c', 'http://10.0.0.1/', 'http://192.168.1.1/',
  'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://0.0.0.0/', 'http://224.0.0.1/', 'http://[::]/',
  'http://0xa9fea9fe/', 'http://[2001:db8::1]/', 'http://100.64.0.1/', 'http://255.255.255.255/', 'http://metadata.google.internal/',
];

/** Small pages of the loopback target site, each answered at once. */
export const TARGET_PATHS: readonly string[] = ['/html/simple', '/structured', '/images', '/links', '/status/404', '/status/500', '/echo', '/img/a.png', '/gzip', '/charset/none'];

/**
 * True when the server could reach the outside through this string: an
 * absolute http(s) URL whose host is a name (it would be resolved) or a
 * public address. Loopback literals pass only without a redirect path (the
 * target site redirects wherever it is told).
 */
export function escapes(s: string): boolean {
  if (!s.includes(':')) return false; // no scheme, no absolute URL (and no exception to pay for: keys of deep bodies are many)
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:' && u.protocol !== 'ws:' && u.protocol !== 'wss:') return false;
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const literal = parseIpLiteral(host);
  if (literal === undefined) {
    // Names the guard refuses itself without a lookup are the metadata names; every other name would be resolved.
    return !REFUSED_URLS.some((r) => new URL(r).hostname === u.hostname);
  }
  const cls = classifyAddress(literal);
  if (cls === 'public') return true;
  if (cls === 'loopback') return /redirect|cookies/i.test(u.pathname + u.search);
  return false;
}

/**
 * Replace every string in a body that `escapes` by a refused URL, at any
 * depth and in keys too. Deterministic, so a shrunk case is the same case.
 */
export function sanitise(value: unknown): unknown {
  const fix = (s: string): string => (escapes(s) ? REFUSED_URLS[s.length % REFUSED_URLS.length]! : s);
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return fix(v);
    if (v === null || typeof v !== 'object' || v instanceof Deep || depth > 50) return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, fix(k), { value: walk(x, depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  };
  return walk(value, 0);
}

/**
 * Throw when a body, decoded as the server would decode it, still holds a
 * string that `escapes`: the last guard before anything is sent. A body the
 * server cannot decode (truncated JSON, say) is refused before any fetch.
 */
export function assertContained(wire: Wire): void {
  if (wire.body === undefined) return;
  let bytes = Buffer.from(wire.body);
  const coding = wire.headers['content-encoding']?.trim().toLowerCase();
  try {
    if (coding === 'gzip' || coding === 'x-gzip') bytes = gunzipSync(bytes);
    else if (coding === 'br') bytes = brotliDecompressSync(bytes);
    else if (coding === 'deflate') bytes = inflateSync(bytes);
  } catch {
    return;
  }
  let value: unknown;
  try {
    value = /msgpack/i.test(wire.headers['content-type'] ?? '') ? unpackr.unpack(bytes) : JSON.parse(bytes.toString('utf8').replace(/^\ufeff/, ''));
  } catch {
    return;
  }
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (escapes(v)) throw new Error(`fuzz case would send the server to ${v.slice(0, 200)}; generators must keep targets on loopback or refused addresses`);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) stack.push(k, x);
    }
  }
}

// ---------------------------------------------------------------------------
// Encodings: how a body goes on the wire.

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

export type Encoding =
  | 'json' | 'json-charset' | 'json-suffix' | 'msgpack' | 'gzip' | 'br' | 'bom'
  | 'text-plain' | 'form' | 'multipart' | 'no-type' | 'truncated' | 'trailing' | 'js-literals' | 'utf16' | 'msgpack-garbage'
  | 'bad-encoding' | 'coding-list' | 'dup-keys' | 'empty';

export const VALID_ENCODINGS: readonly Encoding[] = ['json', 'json', 'json', 'json', 'json-charset', 'json-suffix', 'msgpack', 'msgpack', 'gzip', 'br', 'bom'];
export const BROKEN_ENCODINGS: readonly Encoding[] = [
  'text-plain', 'form', 'multipart', 'no-type', 'truncated', 'trailing', 'js-literals', 'utf16', 'msgpack-garbage', 'bad-encoding', 'coding-list', 'dup-keys', 'empty',
];

export interface Wire {
  readonly body: Uint8Array | undefined;
  readonly headers: Record<string, string>;
}

const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

/** Placeholders for the parts the encoders write themselves: negative zero and deep nesting. */
const HOLE = '\u0001hole\u0001';

/** JSON text of a value: -0 written as "-0" (JSON.stringify writes 0), Deep values as their text. */
function jsonText(value: unknown): string {
  const holes: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (Object.is(v, -0)) { holes.push('-0'); return HOLE; }
    if (v instanceof Deep) { holes.push(v.json()); return HOLE; }
    return v;
  }) ?? 'null';
  if (holes.length === 0) return text;
  let i = 0;
  return text.replace(/"\\u0001hole\\u0001"/g, () => holes[i++]!);
}

/** msgpack of a value, Deep values spliced in as raw bytes. */
function msgpackBytes(value: unknown): Uint8Array {
  const deeps: Deep[] = [];
  const swap = (v: unknown, depth: number): unknown => {
    if (v instanceof Deep) { deeps.push(v); return HOLE; }
    if (v === null || typeof v !== 'object' || depth > 50) return v;
    if (Array.isArray(v)) return v.map((x) => swap(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: swap(x, depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  };
  const packed = Buffer.from(packr.pack(swap(value, 0)));
  if (deeps.length === 0) return new Uint8Array(packed);
  const hole = Buffer.concat([Buffer.from([0xa0 | Buffer.byteLength(HOLE)]), Buffer.from(HOLE)]);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const d of deeps) {
    const at = packed.indexOf(hole, from);
    if (at < 0) break;
    parts.push(packed.subarray(from, at), d.msgpack());
    from = at + hole.length;
  }
  parts.push(packed.subarray(from));
  return new Uint8Array(Buffer.concat(parts));
}

export function encode(value: unknown, encoding: Encoding, salt: number): Wire {
  const json = () => jsonText(value);
  const ct = { 'content-type': 'application/json' };
  switch (encoding) {
    case 'json': return { body: utf8(json()), headers: ct };
    case 'json-charset': return { body: utf8(json()), headers: { 'content-type': ['application/json; charset=utf-8', 'APPLICATION/JSON;charset="UTF-8"', 'application/json ; q=1'][salt % 3]! } };
    case 'json-suffix': return { body: utf8(json()), headers: { 'content-type': 'application/vnd.scour.fuzz+json' } };
    case 'msgpack': {
      return { body: msgpackBytes(value), headers: { 'content-type': ['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'][salt % 3]! } };
    }
    case 'gzip': return { body: new Uint8Array(gzipSync(json())), headers: { ...ct, 'content-encoding': salt % 2 === 0 ? 'gzip' : 'x-gzip' } };
    case 'br': return { body: new Uint8Array(brotliCompressSync(json())), headers: { ...ct, 'content-encoding': 'br' } };
    case 'bom': return { body: utf8(`\ufeff${json()}`), headers: ct };
    case 'text-plain': return { body: utf8(json()), headers: { 'content-type': 'text/plain' } };
    case 'form': return { body: utf8('query=a&url=b'), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    case 'multipart': return { body: utf8('--x\r\nContent-Disposition: form-data; name="query"\r\n\r\na\r\n--x--\r\n'), headers: { 'content-type': 'multipart/form-data; boundary=x' } };
    case 'no-type': return { body: utf8(json()), headers: {} };
    case 'truncated': {
      const t = json();
      return { body: utf8(t.slice(0, Math.max(1, salt % Math.max(1, t.length)))), headers: ct };
    }
    case 'trailing': return { body: utf8(`${json()}${['}', ' x', '\u0000', '{}', ',', '\n]'][salt % 6]}`), headers: ct };
    case 'js-literals': return { body: utf8(['{"count": NaN}', "{'query': 'x'}", '{"query": "x", /* c */ }', '{"max_results": Infinity}', '{query: "x"}', '{"a":1,}', '{"query":"\\x41"}', '{"n":01}'][salt % 8]!), headers: ct };
    case 'utf16': return { body: new Uint8Array(Buffer.from(`\ufeff${json()}`, 'utf16le')), headers: ct };
    case 'msgpack-garbage': {
      const bytes = [[0xc1], [0xdd, 0xff, 0xff, 0xff, 0xff], [0xdf, 0x7f, 0xff, 0xff, 0xff], [0xc7, 0x01, 0x05, 0x00], [0xa5, 0x61], [0x81], [0xd4, 0xff, 0x00], [0xdb, 0xff, 0xff, 0xff, 0xf0, 0x61]][salt % 8]!;
      return { body: new Uint8Array(bytes), headers: { 'content-type': 'application/msgpack' } };
    }
    case 'bad-encoding': return { body: utf8(json()), headers: { ...ct, 'content-encoding': ['gzip', 'br', 'deflate', 'compress', 'zstd'][salt % 5]! } };
    case 'coding-list': return { body: new Uint8Array(gzipSync(json())), headers: { ...ct, 'content-encoding': 'gzip, identity' } };
    case 'dup-keys': {
      const t = json();
      return { body: utf8(t.startsWith('{') && t.length > 2 ? `{"__dup":1,"__dup":[2],${t.slice(1)}` : t), headers: ct };
    }
    case 'empty': return { body: undefined, headers: salt % 2 === 0 ? ct : {} };
  }
}

/** Accept headers cases send: JSON, msgpack, wildcards and nonsense (errors follow the same rule). */
export const ACCEPTS: readonly (string | undefined)[] = [
  undefined, undefined, undefined, 'application/json', '*/*', 'application/msgpack', 'application/json;q=0.5, application/msgpack', 'text/html', 'application/msgpack;q=0', 'q=;;;,,,*/*;q=2',
];

// ---------------------------------------------------------------------------
// One case on the wire, and the invariants.

export interface Case {
  readonly method: string;
  /** The concrete path sent. */
  readonly path: string;
  /** The route template the case aims at (for the OpenAPI lookups); undefined when none. */
  readonly template: string | undefined;
  readonly wire: Wire;
  readonly authorization: string | undefined;
  readonly accept: string | undefined;
  /** What drew it, for failure reports. */
  readonly label: string;
  /** The route never fetches URLs in its body (url-encoder, robots-txt-generator): real names may stay. */
  readonly urlsInert?: boolean;
}

export interface Outcome {
  readonly status: number;
  readonly body: unknown;
  readonly ms: number;
}

/** Per-request deadline: the longest a case may take before it counts as a hang. */
export const DEADLINE_MS = 20_000;

const describe = (c: Case, wireBytes = 300): string => {
  const b = c.wire.body === undefined ? '(none)' : Buffer.from(c.wire.body.slice(0, wireBytes)).toString('latin1');
  return `${c.label}: ${c.method} ${c.path.slice(0, 200)} headers=${JSON.stringify(c.wire.headers)} accept=${String(c.accept)} auth=${c.authorization === undefined ? '(none)' : c.authorization.slice(0, 40)} body(${c.wire.body?.byteLength ?? 0} B)=${JSON.stringify(b)}`;
};

export class InvariantError extends Error {}

function fail(c: Case, why: string, o?: { status: number; body: unknown }): never {
  const got = o === undefined ? '' : ` -> ${o.status} ${JSON.stringify(o.body)?.slice(0, 600)}`;
  throw new InvariantError(`${why}\n  case ${describe(c)}${got}`);
}

/** Send one case and check every invariant; resolves with what came back. */
export async function check(f: Fuzzed, c: Case, options: { readonly bodyOverLimit?: boolean } = {}): Promise<Outcome> {
  if (c.urlsInert !== true) assertContained(c.wire);
  const headers: Record<string, string> = { ...c.wire.headers };
  if (c.authorization !== undefined) headers.authorization = c.authorization;
  if (c.accept !== undefined) headers.accept = c.accept;
  const t0 = performance.now();
  let res: Response;
  let raw: Uint8Array;
  try {
    res = await fetch(`${f.url}${c.path}`, { method: c.method, headers, body: c.wire.body, signal: AbortSignal.timeout(DEADLINE_MS) });
    raw = new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    if (err.name === 'TimeoutError') fail(c, `no answer within ${DEADLINE_MS} ms (hang)`);
    // A body over the limit: the server answers 413 and closes while the client is still sending; the client may only see the close.
    if (options.bodyOverLimit) return { status: 0, body: undefined, ms: performance.now() - t0 };
    fail(c, `request failed: ${err.message} ${err.cause?.code ?? ''}`);
  }
  const ms = performance.now() - t0;
  const type = res.headers.get('content-type') ?? '';
  let body: unknown;
  try {
    body = type.startsWith('application/msgpack') ? unpackr.unpack(raw) : JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch (e) {
    body = Buffer.from(raw).toString('utf8').slice(0, 300);
    if (type.startsWith('application/json') || type.startsWith('application/msgpack') || res.status >= 400) fail(c, `answer is not ${type || 'a parsable body'}: ${(e as Error).message}`, { status: res.status, body });
  }
  const o = { status: res.status, body };
  if (res.status >= 500) fail(c, `server error ${res.status}`, o);
  if (c.template !== undefined && !f.validators.statuses(c.template, c.method).has(res.status)) {
    // A path parameter that decodes to another path (%2F, ..) may land on no route: 404 is the honest answer there.
    if (!(res.status === 404 && c.template.includes('{'))) fail(c, `status ${res.status} is not documented for ${c.method} ${c.template}`, o);
  }
  if (res.status >= 400) {
    if (!f.validators.errorBody(body)) fail(c, `error body does not match ErrorBody: ${JSON.stringify(f.validators.errorBody.errors)}`, o);
    const e = body as Record<string, unknown>;
    if (typeof e.error !== 'string' || e.error === '' || typeof e.code !== 'string' || !/^[A-Z][A-Z_]+$/.test(e.code)) fail(c, 'error body without error and code', o);
    if (typeof e.timestamp !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(e.timestamp)) fail(c, 'timestamp is not ISO 8601 UTC', o);
    if (e.request_id !== res.headers.get('x-request-id')) fail(c, 'request_id differs from x-request-id', o);
    if (res.status === 400) {
      const v = e.validation_errors;
      if (!Array.isArray(v) || v.length === 0) fail(c, '400 without validation_errors', o);
      for (const x of v as unknown[]) {
        const item = x as Record<string, unknown>;
        if (typeof item.field !== 'string' || typeof item.message !== 'string' || item.message === '') fail(c, 'validation_errors entry without field and message', o);
      }
      if ((v as unknown[]).length > 100) fail(c, 'more than 100 validation_errors', o);
    }
  } else if (res.status >= 200 && res.status < 300 && c.template !== undefined) {
    const validate = f.validators.success(c.template, c.method, res.status);
    if (validate === undefined) fail(c, `no documented ${res.status} schema for ${c.method} ${c.template}`, o);
    if (!validate(body)) fail(c, `${res.status} body does not match the documented schema: ${JSON.stringify(validate.errors?.slice(0, 5))}`, o);
    if ((body as Record<string, unknown>).request_id !== undefined && (body as Record<string, unknown>).request_id !== res.headers.get('x-request-id')) fail(c, 'request_id differs from x-request-id', o);
  }
  return { status: res.status, body, ms };
}

/** The server still answers its health check (after a property, and after the raw-socket fuzz). */
export async function healthy(url: string): Promise<void> {
  const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
  if (r.status !== 200) throw new Error(`health check answered ${r.status}`);
  await r.arrayBuffer();
}

/** Tallies per operation, printed at the end of a file. */
export class Tally {
  private readonly rows = new Map<string, Map<string, number>>();
  add(op: string, status: number): void {
    const row = this.rows.get(op) ?? new Map<string, number>();
    const k = status === 0 ? 'closed' : String(status);
    row.set(k, (row.get(k) ?? 0) + 1);
    this.rows.set(op, row);
  }
  total(): number {
    let n = 0;
    for (const r of this.rows.values()) for (const v of r.values()) n += v;
    return n;
  }
  table(): string {
    const lines: string[] = [];
    for (const [op, row] of [...this.rows].sort(([a], [b]) => a.localeCompare(b))) {
      const n = [...row.values()].reduce((a, b) => a + b, 0);
      lines.push(`${op.padEnd(48)} ${String(n).padStart(5)}  ${[...row].sort(([a], [b]) => a.localeCompare(b)).map(([s, k]) => `${s}:${k}`).join(' ')}`);
    }
    return lines.join('\n');
  }
}

export type { TargetSite };
