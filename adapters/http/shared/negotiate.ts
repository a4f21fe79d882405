/**
 * Content negotiation for the HTTP app: which body format (Accept), which
 * response coding (Accept-Encoding) and which request coding
 * (Content-Encoding). Pure string work, no I/O. Results are memoised by the
 * header's exact text: clients repeat the same few values, so the hot path
 * is one Map lookup; the memo is bounded, so distinct hostile values cost
 * one linear parse each and no memory beyond the bound.
 */

const MEMO_MAX = 1000;

function memoised<T>(parse: (header: string) => T): (header: string) => T {
  const memo = new Map<string, T>();
  return (header) => {
    let v = memo.get(header);
    if (v === undefined) {
      v = parse(header);
      if (memo.size >= MEMO_MAX) memo.clear();
      memo.set(header, v);
    }
    return v;
  };
}

const QVALUE = /^(?:[01](?:\.\d*)?|\.\d+)$/;

/**
 * One element of a comma-separated list: its lower-cased name and its q
 * (1 without one). An unparsable or out-of-range q makes the element
 * meaningless: NaN, so callers skip it.
 */
function element(part: string): { name: string; q: number } {
  const semi = part.indexOf(';');
  const name = (semi === -1 ? part : part.slice(0, semi)).trim().toLowerCase();
  let q = 1;
  if (semi !== -1) {
    for (const param of part.slice(semi + 1).split(';')) {
      const eq = param.indexOf('=');
      if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
      const raw = param.slice(eq + 1).trim();
      q = QVALUE.test(raw) ? Number(raw) : NaN;
      if (!(q <= 1)) q = NaN;
    }
  }
  return { name, q };
}

const MSGPACK_TYPES = new Set(['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack']);

/**
 * Accept: msgpack when the client explicitly rates a msgpack type above
 * JSON, or equal to it (naming msgpack at all says it wants it); JSON
 * otherwise, JSON being the default. Wildcards (`*\/*`, `application/*`)
 * rate both types alike and never pick msgpack on their own; q=0 refuses a
 * type. So `application/msgpack;q=0` is JSON and
 * `application/json;q=0.5, application/msgpack` is msgpack.
 */
function parseAccept(accept: string): boolean {
  let msgpack = -1; // explicit msgpack q, -1: not named
  let json = -1; // explicit application/json q
  let app = -1; // application/*
  let any = -1; // */*
  for (const part of accept.split(',')) {
    const { name, q } = element(part);
    if (Number.isNaN(q) || name === '') continue;
    if (MSGPACK_TYPES.has(name)) msgpack = Math.max(msgpack, q);
    else if (name === 'application/json') json = Math.max(json, q);
    else if (name === 'application/*') app = Math.max(app, q);
    else if (name === '*/*') any = Math.max(any, q);
  }
  if (msgpack <= 0) return false;
  const wildcard = app !== -1 ? app : any;
  const jsonQ = json !== -1 ? json : Math.max(wildcard, 0);
  return msgpack >= jsonQ;
}

const acceptMemo = memoised(parseAccept);

/** True when the response should be msgpack (see parseAccept). Absent or empty: JSON. */
export function prefersMsgpack(accept: string | undefined): boolean {
  if (accept === undefined || accept === '' || accept === '*/*' || accept === 'application/json') return false;
  if (accept === 'application/msgpack') return true;
  return acceptMemo(accept);
}

export type ResponseCoding = 'br' | 'gzip';

/**
 * Accept-Encoding: br or gzip by q-value, br on a tie (smaller for the same
 * CPU at the qualities used); `*` rates every coding not named; none
 * acceptable (or q=0 for both): undefined, the body goes out as it is.
 */
function parseAcceptEncoding(header: string): ResponseCoding | 'none' {
  let br = -1;
  let gzip = -1;
  let any = -1;
  for (const part of header.split(',')) {
    const { name, q } = element(part);
    if (Number.isNaN(q)) continue;
    if (name === 'br') br = Math.max(br, q);
    else if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip, q);
    else if (name === '*') any = Math.max(any, q);
  }
  if (br === -1) br = any;
  if (gzip === -1) gzip = any;
  if (br <= 0 && gzip <= 0) return 'none';
  return br >= gzip ? 'br' : 'gzip';
}

const encodingMemo = memoised(parseAcceptEncoding);

export function responseCoding(acceptEncoding: string | undefined): ResponseCoding | undefined {
  if (acceptEncoding === undefined || acceptEncoding === '') return undefined;
  const c = encodingMemo(acceptEncoding);
  return c === 'none' ? undefined : c;
}

export type RequestCoding = 'identity' | 'gzip' | 'deflate' | 'br';

/** Content-Encoding of a request body: one coding Scour decodes, or undefined (unsupported: 415). */
export function requestCoding(contentEncoding: string): RequestCoding | undefined {
  const c = contentEncoding.trim().toLowerCase();
  switch (c) {
    case '':
    case 'identity':
      return 'identity';
    case 'gzip':
    case 'x-gzip':
      return 'gzip';
    case 'deflate':
      return 'deflate';
    case 'br':
      return 'br';
    default:
      return undefined;
  }
}
