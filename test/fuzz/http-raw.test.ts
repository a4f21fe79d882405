/**
 * Hostile bytes on the wire (issue 16 section 4, part 2), on both HTTP
 * adapters over node:net: malformed request lines, headers past the limits,
 * many headers, conflicting framing (duplicate Content-Length, CL.TE, TE.CL,
 * obfuscated Transfer-Encoding), invalid chunk sizes, bare LF, NUL in the
 * path, absolute-form targets, HTTP/0.9 and HTTP/2 prefaces, TLS bytes,
 * pipelining, slowloris (headers trickled a byte at a time, a body that
 * stalls or trickles, a connection that never speaks), and a seeded stream
 * of mutated requests. Invariants: never a 5xx; a malformed request gets a
 * 4xx or a closed connection, never a 2xx; a request smuggled inside
 * another's framing is never answered; every connection is answered or
 * closed before its deadline (slow clients are cut by the server's own
 * timeouts); and a well-formed client calling all along gets every answer.
 *
 * Known findings on uWS (uWebSockets.js 20.30's parser, not fixable in the
 * adapter without a per-request header scan; see KNOWN_UWS): they are
 * listed, and the test fails if one of them stops reproducing, so the list
 * stays true.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, startScour, type AdapterKind, type Running } from '../support/server.js';
import { healthy } from './support/harness.js';
import { rawExchange, steadyClient, type RawResult } from './support/raw.js';
import { FUZZ_RUNS, FUZZ_SEED, replayHint, seedFor } from './support/seed.js';

const FILE = 'test/fuzz/http-raw.test.ts';
console.log(`[fuzz] ${FILE}: seed ${FUZZ_SEED}; replay with ${replayHint(FILE)}`);

/** Every connection is answered or closed by then: uWS's idle timeout is 10 s, node:http's request timeout 30 s. */
const DEADLINE_MS = 40_000;
/**
 * How long each adapter may take to cut a slow client: its timeout, the
 * timer's granularity (uWS checks every 4 s; node:http every second) and
 * room for a loaded machine. Node's own defaults (60 s for headers, checked
 * every 30 s; 300 s for a request) fail this.
 */
const CUT = {
  uws: { headers: 15_000, body: 15_000, idle: 15_000 },
  node: { headers: 15_000, body: 36_000, idle: 15_000 },
} as const;

type Expect =
  /** Malformed: a 4xx (or nothing) and the connection closed or left to time out; never a 2xx. */
  | 'reject'
  /** Tolerable either way (a server may accept it): anything but a 5xx, answered or closed in time. */
  | 'tolerate'
  /** Conflicting framing with a second request inside: that request must never be answered. */
  | 'smuggle'
  /** Well-formed: this many 200s. */
  | { readonly ok: number };

interface RawCase {
  readonly name: string;
  readonly payload: string;
  readonly expect: Expect;
  readonly trickle?: { readonly bytes: number; readonly gapMs: number; readonly from?: number };
  /** Cut by the server within CUT[adapter][cut] ms. */
  readonly cut?: 'headers' | 'body' | 'idle';
}

const SMUGGLED = 'GET /v1/smuggled-request HTTP/1.1\r\nHost: a\r\n\r\n';
const TOOL = 'POST /v1/tools/uuid-generator HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n';
const GET = 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n';
const chunkOf = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

const CASES: readonly RawCase[] = [
  { name: 'well-formed GET', payload: GET, expect: { ok: 1 } },
  { name: 'pipelined GETs', payload: GET + GET + GET, expect: { ok: 3 } },
  { name: 'pipelined POST then GET', payload: `${TOOL}Content-Length: 2\r\n\r\n{}${GET}`, expect: { ok: 2 } },
  { name: 'chunked POST', payload: `${TOOL}Transfer-Encoding: chunked\r\n\r\n${chunkOf('{}')}0\r\n\r\n`, expect: { ok: 1 } },
  { name: 'Expect: 100-continue', payload: `${TOOL}Content-Length: 2\r\nExpect: 100-continue\r\n\r\n{}`, expect: 'tolerate' },
  // Conflicting framing.
  { name: 'CL.TE', payload: `${TOOL}Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, expect: 'smuggle' },
  { name: 'TE.CL', payload: `${TOOL}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n${chunkOf(SMUGGLED)}0\r\n\r\n`, expect: 'smuggle' },
  { name: 'duplicate Content-Length, different values', payload: `${TOOL}Content-Length: 2\r\nContent-Length: ${2 + SMUGGLED.length}\r\n\r\n{}${SMUGGLED}`, expect: 'smuggle' },
  { name: 'duplicate Content-Length, same value', payload: `${TOOL}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}`, expect: 'tolerate' },
  { name: 'Content-Length list', payload: `${TOOL}Content-Length: 2, ${2 + SMUGGLED.length}\r\n\r\n{}${SMUGGLED}`, expect: 'smuggle' },
  { name: 'Transfer-Encoding: xchunked', payload: `${TOOL}Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, expect: 'smuggle' },
  { name: 'Transfer-Encoding: chunked, then identity', payload: `${TOOL}Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n${SMUGGLED}`, expect: 'smuggle' },
  { name: 'Transfer-Encoding with a space before the colon', payload: `${TOOL}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, expect: 'smuggle' },
  { name: 'Transfer-Encoding: identity with Content-Length', payload: `${TOOL}Transfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}`, expect: 'tolerate' },
  { name: 'TE in a folded line', payload: `${TOOL}X-A: b\r\n Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n{}`, expect: 'tolerate' },
  // Chunk sizes and line ends.
  { name: 'chunk size not hex', payload: `${TOOL}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, expect: 'reject' },
  { name: 'chunk size negative', payload: `${TOOL}Transfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n`, expect: 'reject' },
  { name: 'chunk size past 64 bits', payload: `${TOOL}Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n{}\r\n0\r\n\r\n`, expect: 'reject' },
  { name: 'chunk shorter than its size', payload: `${TOOL}Transfer-Encoding: chunked\r\n\r\n10\r\n{}\r\n0\r\n\r\n`, expect: 'reject' },
  { name: 'chunk extension', payload: `${TOOL}Transfer-Encoding: chunked\r\n\r\n2;ext="x"\r\n{}\r\n0\r\n\r\n`, expect: 'tolerate' },
  { name: 'chunk lines ending in bare LF', payload: `${TOOL}Transfer-Encoding: chunked\r\n\r\n2\n{}\n0\n\n`, expect: 'tolerate' },
  { name: 'request ending in bare LF', payload: 'GET /healthz HTTP/1.1\nHost: a\n\n', expect: 'reject' },
  { name: 'CR without LF', payload: 'GET /healthz HTTP/1.1\rHost: a\r\r', expect: 'reject' },
  // Content-Length values.
  { name: 'Content-Length negative', payload: `${TOOL}Content-Length: -1\r\n\r\n{}`, expect: 'reject' },
  { name: 'Content-Length past 64 bits', payload: `${TOOL}Content-Length: 99999999999999999999\r\n\r\n{}`, expect: 'reject' },
  { name: 'Content-Length with a sign', payload: `${TOOL}Content-Length: +2\r\n\r\n{}`, expect: 'reject' },
  { name: 'Content-Length not a number', payload: `${TOOL}Content-Length: two\r\n\r\n{}`, expect: 'reject' },
  { name: 'Content-Length past the body limit', payload: `${TOOL}Content-Length: 50000000\r\n\r\n{}`, expect: 'tolerate', cut: 'body' },
  // Request lines.
  { name: 'NUL in the path', payload: 'GET /heal\0thz HTTP/1.1\r\nHost: a\r\n\r\n', expect: 'reject' },
  { name: 'NUL in a header value', payload: 'GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: b\0c\r\n\r\n', expect: 'reject' },
  { name: 'absolute-form target', payload: 'GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: a\r\n\r\n', expect: 'tolerate' },
  { name: 'absolute-form target on another host', payload: 'GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: a\r\n\r\n', expect: 'tolerate' },
  { name: 'asterisk-form', payload: 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n', expect: 'tolerate' },
  { name: 'CONNECT', payload: 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n', expect: 'reject' },
  { name: 'HTTP/0.9', payload: 'GET /healthz\r\n', expect: 'tolerate' },
  { name: 'HTTP/1.0 without Host', payload: 'GET /healthz HTTP/1.0\r\n\r\n', expect: 'tolerate' },
  { name: 'HTTP/1.0 GET', payload: 'GET /healthz HTTP/1.0\r\nHost: a\r\n\r\n', expect: { ok: 1 } },
  { name: 'HTTP/1.1 without Host', payload: 'GET /healthz HTTP/1.1\r\n\r\n', expect: 'reject' },
  { name: 'HTTP/9.9', payload: 'GET /healthz HTTP/9.9\r\nHost: a\r\n\r\n', expect: 'reject' },
  { name: 'HTTP/2 preface', payload: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00', expect: 'reject' },
  { name: 'TLS ClientHello', payload: '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03' + '\x00'.repeat(64), expect: 'reject' },
  { name: 'lower-case method', payload: 'get /healthz HTTP/1.1\r\nHost: a\r\n\r\n', expect: 'reject' },
  { name: 'method with NUL', payload: 'G\0T /healthz HTTP/1.1\r\nHost: a\r\n\r\n', expect: 'reject' },
  { name: 'method of 5,000 characters', payload: `${'A'.repeat(5000)} /healthz HTTP/1.1\r\nHost: a\r\n\r\n`, expect: 'reject' },
  { name: 'path of 100 KB', payload: `GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: a\r\n\r\n`, expect: 'reject' },
  { name: 'space in a header name', payload: 'GET /healthz HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n', expect: 'reject' },
  { name: 'header without a colon', payload: 'GET /healthz HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n', expect: 'reject' },
  { name: 'obsolete line folding', payload: 'GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n', expect: 'tolerate' },
  { name: '1,000 empty lines first', payload: `${'\r\n'.repeat(1000)}${GET}`, expect: 'tolerate' },
  // Sizes.
  { name: 'a 20 KB header', payload: `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, expect: 'tolerate' },
  { name: 'a 2 MB header', payload: `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(2_000_000)}\r\n\r\n`, expect: 'reject' },
  { name: '500 headers', payload: `GET /healthz HTTP/1.1\r\nHost: a\r\n${Array.from({ length: 500 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`, expect: 'tolerate' },
  { name: '10,000 headers', payload: `GET /healthz HTTP/1.1\r\nHost: a\r\n${Array.from({ length: 10_000 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`, expect: 'reject' },
  { name: 'upgrade to h2c', payload: 'GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n', expect: 'tolerate' },
  { name: 'upgrade to websocket', payload: 'GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n', expect: 'tolerate' },
  // Slow clients: the server's own timeouts must cut them.
  { name: 'slowloris: headers a byte at a time', payload: `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slow: ${'a'.repeat(400)}\r\n\r\n`, trickle: { bytes: 1, gapMs: 250 }, expect: 'tolerate', cut: 'headers' },
  { name: 'headers that stop half way', payload: 'GET /healthz HTTP/1.1\r\nHost: a\r\n', expect: 'tolerate', cut: 'headers' },
  { name: 'a body that stalls', payload: `${TOOL}Content-Length: 1000\r\n\r\n{"count":`, expect: 'tolerate', cut: 'body' },
  { name: 'a body a byte at a time', payload: `${TOOL}Content-Length: 1000\r\n\r\n${' '.repeat(998)}{}`, trickle: { bytes: 1, gapMs: 500, from: TOOL.length + 24 }, expect: 'tolerate', cut: 'body' },
  { name: 'a connection that never speaks', payload: '', expect: 'tolerate', cut: 'idle' },
];

/**
 * Cases whose invariant uWebSockets.js 20.30 breaks (findings, reported;
 * the parser is in the binary, not in the adapter). Its parser frames a
 * body by the first of two different Content-Length headers, and decodes
 * "xchunked" and "chunked, identity" as chunked, so it answers the request
 * hidden after the body that a front proxy reading the framing the other
 * way would forward as one request (node:http refuses all three with 400;
 * nginx, HAProxy and Envoy refuse them before they reach Scour). Rejecting
 * them in the adapter means reading every header of every request
 * (req.forEach): measured at about the CPU of the four getHeader calls the
 * adapter makes now, so the way to do it is to replace those, left to the
 * adapter's owner. And it never answers an HTTP/1.0 request (not even a
 * bare uWS app calls its handler): the connection waits for the idle
 * timeout and closes, so a proxy speaking HTTP/1.0 upstream (nginx's
 * default, proxy_http_version 1.0) gets nothing.
 */
const KNOWN_UWS: ReadonlySet<string> = new Set([
  'duplicate Content-Length, different values',
  'Transfer-Encoding: xchunked',
  'Transfer-Encoding: chunked, then identity',
  'HTTP/1.0 GET',
]);

/** A seeded stream of mutations of well-formed requests: bytes inserted, dropped, swapped, lines doubled, ends cut. */
function mutations(count: number, seed: number): string[] {
  const bases = [GET, `${TOOL}Content-Length: 11\r\n\r\n{"count":2}`, `${TOOL}Transfer-Encoding: chunked\r\n\r\n${chunkOf('{"count":2}')}0\r\n\r\n`, 'DELETE /v1/crawl/crawl_0 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\n\r\n'];
  const special = fc.constantFrom('\r', '\n', '\r\n', '\0', ' ', '\t', ':', ';', ',', '\x7f', '\xff', '\x80', '%', '/', '"', '0', 'f', '-');
  const edit = fc.tuple(fc.nat(), fc.oneof(
    special.map((c) => ({ kind: 'insert' as const, c })),
    fc.constant({ kind: 'delete' as const, c: '' }),
    special.map((c) => ({ kind: 'replace' as const, c })),
    fc.constant({ kind: 'double-line' as const, c: '' }),
    fc.constant({ kind: 'cut' as const, c: '' }),
  ));
  const arb = fc.tuple(fc.constantFrom(...bases), fc.array(edit, { minLength: 1, maxLength: 4 })).map(([base, edits]) => {
    let s = base;
    for (const [n, e] of edits) {
      const at = n % Math.max(1, s.length);
      if (e.kind === 'insert') s = s.slice(0, at) + e.c + s.slice(at);
      else if (e.kind === 'delete') s = s.slice(0, at) + s.slice(at + 1);
      else if (e.kind === 'replace') s = s.slice(0, at) + e.c + s.slice(at + 1);
      else if (e.kind === 'cut') s = s.slice(0, Math.max(1, at));
      else {
        const lines = s.split('\r\n');
        const i = n % lines.length;
        lines.splice(i, 0, lines[i]!);
        s = lines.join('\r\n');
      }
    }
    return s;
  });
  return fc.sample(arb, { seed, numRuns: count });
}

/** Why a result breaks the case's invariant, or undefined. */
function violation(c: RawCase, r: RawResult, adapter: AdapterKind): string | undefined {
  if (r.statuses.some((s) => s >= 500)) return `answered ${r.statuses.join(',')}`;
  if (!r.closed && r.statuses.length === 0) return `neither answered nor closed in ${DEADLINE_MS} ms`;
  if (c.cut !== undefined && !(r.closed && r.ms <= CUT[adapter][c.cut])) return `slow client not cut within ${CUT[adapter][c.cut]} ms (closed: ${r.closed}, after ${Math.round(r.ms)} ms)`;
  if (r.data.includes('smuggled-request')) return `answered the smuggled request: ${JSON.stringify(r.data.slice(0, 400))}`;
  if (c.expect === 'reject' && r.statuses.some((s) => s < 400)) return `accepted a malformed request: ${r.statuses.join(',')}`;
  if (c.expect === 'smuggle' && r.statuses.filter((s) => s < 400).length > 1) return `answered ${r.statuses.join(',')} for one request`;
  if (typeof c.expect === 'object' && (r.statuses.length !== c.expect.ok || r.statuses.some((s) => s !== 200))) return `expected ${c.expect.ok} x 200, got ${r.statuses.join(',') || 'nothing'}`;
  return undefined;
}

describe.each(ADAPTERS)('hostile bytes on the wire, over %s', (adapter) => {
  let s: Running;

  beforeAll(async () => {
    s = await startScour(adapter, { logLevel: 'warn', extractionWorkers: 0 });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it(`${CASES.length} crafted cases and ${Math.max(20, Math.round(FUZZ_RUNS / 50))} mutated requests, all at once, beside a well-formed client`, async () => {
    const steady = steadyClient(s.url);
    const generated: RawCase[] = mutations(Math.max(20, Math.round(FUZZ_RUNS / 50)), seedFor(`raw ${adapter}`))
      .map((payload, i) => ({ name: `mutation ${i}: ${JSON.stringify(payload.slice(0, 120))}`, payload, expect: 'tolerate' }));
    const all = [...CASES, ...generated];
    const results = await Promise.all(all.map((c) => rawExchange(s.port, c.payload, {
      deadlineMs: DEADLINE_MS, trickle: c.trickle, responses: typeof c.expect === 'object' ? c.expect.ok : undefined,
    })));
    const client = await steady.stop();

    const broken = new Map<string, string>();
    all.forEach((c, i) => {
      const why = violation(c, results[i]!, adapter);
      if (why !== undefined) broken.set(c.name, why);
    });
    const known = adapter === 'uws' ? KNOWN_UWS : new Set<string>();
    const unexpected = [...broken].filter(([name]) => !known.has(name));
    const fixed = [...known].filter((name) => !broken.has(name));
    const cuts = CASES.filter((c) => c.cut !== undefined).map((c) => `${c.name}: ${results[all.indexOf(c)]!.closed ? 'closed' : 'open'} after ${Math.round(results[all.indexOf(c)]!.ms)} ms`);
    console.log(`[fuzz] raw ${adapter}: ${all.length} connections, steady client ${client.ok} ok / ${client.failures.length} failed; known findings reproduced: ${[...known].filter((n) => broken.has(n)).join('; ') || 'none'}\n  ${cuts.join('\n  ')}`);
    expect(unexpected, `seed ${FUZZ_SEED}`).toEqual([]);
    expect(fixed, 'a known finding no longer reproduces: remove it from KNOWN_UWS (and from docs/reliability.md)').toEqual([]);
    expect(client.failures).toEqual([]);
    expect(client.ok).toBeGreaterThan(50);
    await healthy(s.url);
  }, DEADLINE_MS + 60_000);
});
