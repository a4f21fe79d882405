/**
 * jwt-decoder: decode a JWS-signed JWT (header, claims, signature), explain
 * its time claims and pitfalls, and optionally verify it with a secret,
 * public key, JWK or JWK Set. jose (MIT) decodes and verifies; Node's crypto
 * validates the key up front so an unusable key is a 400 on the key field,
 * while a token that fails verification is an ordinary answer
 * (`verified: false` with the reason).
 */
import { X509Certificate, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import {
  createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify,
  type CryptoKey, type JSONWebKeySet, type JWTVerifyGetKey, type JWTVerifyOptions,
} from 'jose';
import { defineTool, StrictObject, Type, invalid, type Static } from '../../sdk/index.js';

const MAX_TOKEN = 16_384;

/** The JWS algorithms jose verifies on Node 20 (alg "none" is never accepted). */
const JWS_ALGS = [
  'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512',
  'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
] as const;
type JwsAlg = (typeof JWS_ALGS)[number];
const isJwsAlg = (a: unknown): a is JwsAlg => typeof a === 'string' && (JWS_ALGS as readonly string[]).includes(a);

const HMAC_MIN_BYTES: Record<string, number> = { HS256: 32, HS384: 48, HS512: 64 };
const EC_CURVES: Record<string, { node: string; name: string }> = {
  ES256: { node: 'prime256v1', name: 'P-256' },
  ES384: { node: 'secp384r1', name: 'P-384' },
  ES512: { node: 'secp521r1', name: 'P-521' },
};
const CURVE_NAMES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521', secp256k1: 'secp256k1' };

// ---------------------------------------------------------------- schemas

const JwkSchema = Type.Object(
  { kty: Type.String({ minLength: 1, maxLength: 16, description: 'Key type: RSA, EC, OKP or oct.' }) },
  { additionalProperties: true, maxProperties: 32, description: 'A public JSON Web Key (RFC 7517), or an oct key holding a shared secret.' },
);

const StringOrList = (what: string) => Type.Union([
  Type.String({ minLength: 1, maxLength: 2048 }),
  Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: 16 }),
], { description: what });

const VerifySchema = StrictObject({
  secret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Shared secret for HS256/384/512.' })),
  secret_encoding: Type.Optional(Type.Union(
    [Type.Literal('utf8'), Type.Literal('base64'), Type.Literal('base64url'), Type.Literal('hex')],
    { description: 'How secret is written (default utf8: its UTF-8 bytes are the key).' },
  )),
  public_key: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TOKEN, description: 'PEM public key (SPKI "PUBLIC KEY" or PKCS#1 "RSA PUBLIC KEY") or PEM X.509 certificate.' })),
  jwk: Type.Optional(JwkSchema),
  jwks: Type.Optional(Type.Object({
    keys: Type.Array(JwkSchema, { minItems: 1, maxItems: 32, description: 'Public keys; the one matching the token kid and alg is used.' }),
  }, { additionalProperties: true, description: 'A JWK Set, e.g. the body of an issuer\'s jwks_uri.' })),
  // A plain JSON Schema enum (not a union of literals) so a wrong value gets one "must be one of" message, not fourteen.
  algorithms: Type.Optional(Type.Array(Type.Unsafe<JwsAlg>({ type: 'string', enum: [...JWS_ALGS] }), {
    minItems: 1, maxItems: JWS_ALGS.length, uniqueItems: true,
    description: 'Accepted alg values (default: every alg that fits the key).',
  })),
  issuer: Type.Optional(StringOrList('Required iss value (or any of a list).')),
  audience: Type.Optional(StringOrList('Required aud value (or any of a list).')),
  subject: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Required sub value.' })),
  clock_tolerance_seconds: Type.Integer({ minimum: 0, maximum: 86_400, default: 0, description: 'Leeway for exp and nbf, in seconds.' }),
}, { description: 'Verify the signature and claims. Give exactly one of secret, public_key, jwk, jwks.' });

type VerifyInput = Static<typeof VerifySchema>;

// No format: 'date-time' here: dates past year 9999 (exp in milliseconds) use ISO 8601's expanded years (+057000-...).
const NullableIso = (d: string) => Type.Union([Type.String(), Type.Null()], { description: d });

const Warning = Type.Object({
  code: Type.String({ description: 'Stable machine code, e.g. unsigned, no_expiry, expired.' }),
  message: Type.String(),
});
type Warning = Static<typeof Warning>;

const ResponseSchema = Type.Object({
  header: Type.Record(Type.String(), Type.Unknown(), { description: 'The decoded JOSE header.' }),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'The decoded claims (untrusted unless verified is true).' }),
  signature: Type.String({ description: 'The signature segment, base64url as in the token.' }),
  algorithm: Type.Union([Type.String(), Type.Null()], { description: 'The header alg, or null when absent.' }),
  claims: Type.Object({
    issued_at: NullableIso('iat as an ISO 8601 time, or null.'),
    expires_at: NullableIso('exp as an ISO 8601 time, or null.'),
    not_before: NullableIso('nbf as an ISO 8601 time, or null.'),
    expired: Type.Boolean({ description: 'exp is at or before now (minus clock tolerance).' }),
    not_yet_valid: Type.Boolean({ description: 'nbf is after now (plus clock tolerance).' }),
    seconds_until_expiry: Type.Union([Type.Number(), Type.Null()], { description: 'exp minus now in seconds (negative once expired), or null.' }),
    checked_at: Type.String({ format: 'date-time', description: 'The time the claims were checked against.' }),
  }),
  verified: Type.Union([Type.Boolean(), Type.Null()], { description: 'Signature and claim checks passed; null when verify was not asked.' }),
  verification_error: Type.Union([Type.String(), Type.Null()], { description: 'Why verification failed, or null.' }),
  warnings: Type.Array(Warning, { description: 'Things worth knowing about this token.' }),
});
type Result = Static<typeof ResponseSchema>;

// ---------------------------------------------------------------- decoding

const B64URL = /^[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Explain why a header or payload segment does not decode (jose only says that it does not). */
function diagnose(segment: string, name: 'header' | 'payload'): never {
  if (segment === '') invalid('token', `the ${name} segment is empty`);
  if (!B64URL.test(segment) || segment.length % 4 === 1) {
    invalid('token', `the ${name} segment is not base64url (only A-Z a-z 0-9 - _ without padding)`);
  }
  let text: string;
  try {
    text = utf8.decode(Buffer.from(segment, 'base64url'));
  } catch {
    invalid('token', `the ${name} segment does not decode to UTF-8 text`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    invalid('token', `the ${name} segment is not JSON`);
  }
  invalid('token', `the ${name} segment is JSON but not an object (${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`);
}

/** Deeper JSON than this is refused: no real token needs it, and serialising it back could overflow the stack. */
const MAX_DEPTH = 64;

/** Nesting depth of a parsed JSON value, measured without recursion. */
function depthOf(root: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) max = d;
    if (max > MAX_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

function decode(raw: string) {
  const token = raw.trim().replace(/^bearer\s+/i, '');
  const parts = token.split('.');
  if (parts.length === 5) {
    invalid('token', 'this is an encrypted token (JWE, five segments); encrypted tokens are not decoded, only signed ones (JWS, three segments)');
  }
  if (parts.length !== 3) {
    invalid('token', `a JWT has three dot-separated segments (header.payload.signature); this has ${parts.length}`);
  }
  const [h, p, s] = parts as [string, string, string];
  let header: Record<string, unknown>;
  let payload: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    diagnose(h, 'header');
  }
  try {
    payload = decodeJwt(token) as Record<string, unknown>;
  } catch {
    diagnose(p, 'payload');
  }
  if (depthOf(header) > MAX_DEPTH) invalid('token', `the header nests deeper than ${MAX_DEPTH} levels`);
  if (depthOf(payload) > MAX_DEPTH) invalid('token', `the payload nests deeper than ${MAX_DEPTH} levels`);
  if (!B64URL.test(s) || s.length % 4 === 1) invalid('token', 'the signature segment is not base64url (only A-Z a-z 0-9 - _ without padding)');
  return { token, header, payload, signature: s };
}

// ---------------------------------------------------------------- claims

const MAX_DATE_SECONDS = 8.64e12; // the ECMAScript Date range

function numericDate(payload: Record<string, unknown>, claim: 'exp' | 'nbf' | 'iat', warnings: Warning[]): number | null {
  if (!Object.hasOwn(payload, claim)) return null;
  const v = payload[claim];
  if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > MAX_DATE_SECONDS) {
    warnings.push({ code: 'invalid_claim', message: `${claim} is not a NumericDate (a number of seconds since 1970-01-01)` });
    return null;
  }
  if (v > 1e11) {
    warnings.push({ code: 'milliseconds', message: `${claim} looks like milliseconds, not seconds (it is in the year ${new Date(v * 1000).getUTCFullYear()})` });
  }
  return v;
}

function analyse(header: Record<string, unknown>, payload: Record<string, unknown>, signature: string, now: number, tolerance: number) {
  const warnings: Warning[] = [];
  const alg = header.alg;
  if (alg === undefined) warnings.push({ code: 'missing_alg', message: 'the header has no alg, so the token cannot be verified' });
  else if (typeof alg !== 'string') warnings.push({ code: 'missing_alg', message: 'the header alg is not a string' });
  else if (alg.toLowerCase() === 'none') warnings.push({ code: 'unsigned', message: 'alg is "none": the token is unsigned and anyone could have written it; never accept it' });
  else if (!isJwsAlg(alg)) warnings.push({ code: 'unsupported_alg', message: `alg "${alg}" is not one this tool can verify (${JWS_ALGS.join(', ')})` });
  if (typeof alg === 'string' && alg.toLowerCase() !== 'none' && signature === '') {
    warnings.push({ code: 'empty_signature', message: 'the signature segment is empty' });
  }
  for (const k of ['jwk', 'jku', 'x5u', 'x5c'] as const) {
    if (Object.hasOwn(header, k)) {
      warnings.push({ code: 'embedded_key', message: `the header carries "${k}": never take the verification key from the token itself` });
    }
  }
  if (Object.hasOwn(header, 'crit')) warnings.push({ code: 'critical_header', message: 'the header lists critical extensions (crit) that a verifier must understand' });

  const exp = numericDate(payload, 'exp', warnings);
  const nbf = numericDate(payload, 'nbf', warnings);
  const iat = numericDate(payload, 'iat', warnings);
  for (const k of ['iss', 'sub', 'jti'] as const) {
    if (Object.hasOwn(payload, k) && typeof payload[k] !== 'string') warnings.push({ code: 'invalid_claim', message: `${k} is not a string` });
  }
  if (Object.hasOwn(payload, 'aud')) {
    const aud = payload.aud;
    if (!(typeof aud === 'string' || (Array.isArray(aud) && aud.every((x) => typeof x === 'string')))) {
      warnings.push({ code: 'invalid_claim', message: 'aud is neither a string nor an array of strings' });
    }
  }
  const iso = (s: number | null) => (s === null ? null : new Date(s * 1000).toISOString());
  const expired = exp !== null && exp <= now - tolerance;
  const notYetValid = nbf !== null && nbf > now + tolerance;
  if (exp === null && !Object.hasOwn(payload, 'exp')) warnings.push({ code: 'no_expiry', message: 'there is no exp claim: the token never expires' });
  if (expired) warnings.push({ code: 'expired', message: `the token expired at ${iso(exp)}` });
  if (notYetValid) warnings.push({ code: 'not_yet_valid', message: `the token is not valid before ${iso(nbf)}` });
  if (iat !== null && iat > now + tolerance) warnings.push({ code: 'issued_in_future', message: `iat (${iso(iat)}) is in the future` });

  return {
    warnings,
    claims: {
      issued_at: iso(iat),
      expires_at: iso(exp),
      not_before: iso(nbf),
      expired,
      not_yet_valid: notYetValid,
      seconds_until_expiry: exp === null ? null : exp - now,
      checked_at: new Date(now * 1000).toISOString(),
    },
  };
}

// ---------------------------------------------------------------- keys

type Key =
  | { kind: 'secret'; bytes: Uint8Array; jwkAlg?: string }
  | { kind: 'public'; key: KeyObject; jwkAlg?: string }
  | { kind: 'jwks'; getKey: JWTVerifyGetKey };

function decodeSecret(secret: string, encoding: VerifyInput['secret_encoding']): Uint8Array {
  const field = 'verify.secret';
  switch (encoding ?? 'utf8') {
    case 'utf8':
      return new TextEncoder().encode(secret);
    case 'hex':
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(secret)) invalid(field, 'is not hex (an even number of 0-9 a-f digits)');
      return Buffer.from(secret, 'hex');
    case 'base64':
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(secret) || secret.length % 4 !== 0) invalid(field, 'is not padded base64');
      return Buffer.from(secret, 'base64');
    case 'base64url':
      if (!B64URL.test(secret) || secret.length % 4 === 1) invalid(field, 'is not base64url');
      return Buffer.from(secret, 'base64url');
  }
}

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

function jwkKey(jwk: Record<string, unknown>, field: string, allowSecret: boolean): Key {
  const jwkAlg = typeof jwk.alg === 'string' ? jwk.alg : undefined;
  if (jwk.kty === 'oct') {
    if (!allowSecret) invalid(field, 'a JWK Set here holds public keys only; pass a shared secret as verify.jwk or verify.secret');
    if (typeof jwk.k !== 'string' || !B64URL.test(jwk.k) || jwk.k.length % 4 === 1 || jwk.k === '') invalid(field, 'an oct JWK needs k, the secret in base64url');
    return { kind: 'secret', bytes: Buffer.from(jwk.k, 'base64url'), jwkAlg };
  }
  if (PRIVATE_JWK_MEMBERS.some((m) => Object.hasOwn(jwk, m))) {
    invalid(field, 'holds private key material; verification needs only the public key (never send private keys to a service)');
  }
  try {
    const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    return { kind: 'public', key, jwkAlg };
  } catch (e) {
    invalid(field, `is not a usable public JWK: ${(e as Error).message}`);
  }
}

function buildKey(v: VerifyInput): Key {
  const sources = (['secret', 'public_key', 'jwk', 'jwks'] as const).filter((k) => v[k] !== undefined);
  if (sources.length !== 1) {
    invalid('verify', sources.length === 0
      ? 'give a key: one of secret, public_key, jwk or jwks'
      : `give exactly one of secret, public_key, jwk or jwks (got ${sources.join(', ')})`);
  }
  if (v.secret_encoding !== undefined && v.secret === undefined) invalid('verify.secret_encoding', 'applies only with verify.secret');
  if (v.secret !== undefined) {
    const bytes = decodeSecret(v.secret, v.secret_encoding);
    if (bytes.length === 0) invalid('verify.secret', 'decodes to zero bytes');
    return { kind: 'secret', bytes };
  }
  if (v.public_key !== undefined) {
    const pem = v.public_key.trim();
    if (/PRIVATE KEY-----/.test(pem)) {
      invalid('verify.public_key', 'is a private key; verification needs only the public key (never send private keys to a service)');
    }
    if (!/^-----BEGIN [A-Z0-9 ]+-----/.test(pem)) invalid('verify.public_key', 'is not PEM (expected -----BEGIN PUBLIC KEY----- or -----BEGIN CERTIFICATE-----)');
    try {
      const key = /^-----BEGIN CERTIFICATE-----/.test(pem) ? new X509Certificate(pem).publicKey : createPublicKey({ key: pem, format: 'pem' });
      return { kind: 'public', key };
    } catch {
      invalid('verify.public_key', 'could not be read as a PEM public key or certificate');
    }
  }
  if (v.jwk !== undefined) return jwkKey(v.jwk as Record<string, unknown>, 'verify.jwk', true);
  const jwks = v.jwks!;
  jwks.keys.forEach((k, i) => jwkKey(k as Record<string, unknown>, `verify.jwks.keys[${i}]`, false));
  try {
    return { kind: 'jwks', getKey: createLocalJWKSet(jwks as unknown as JSONWebKeySet) };
  } catch (e) {
    invalid('verify.jwks', `is not a usable JWK Set: ${(e as Error).message}`);
  }
}

function describeKey(key: KeyObject): string {
  const t = key.asymmetricKeyType;
  if (t === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? 'unknown';
    return `an EC ${CURVE_NAMES[curve] ?? curve} key`;
  }
  return t === 'rsa' || t === 'rsa-pss' ? 'an RSA key' : t === 'ed25519' ? 'an Ed25519 key' : t === 'ed448' ? 'an Ed448 key' : `a ${t ?? 'unknown'} key`;
}

/** Why this key cannot check this alg, in words, or null when it fits. */
function misfit(alg: string, key: Key): string | null {
  if (key.kind === 'jwks') return null;
  if (key.jwkAlg !== undefined && key.jwkAlg !== alg) return `the JWK is for alg ${key.jwkAlg} but the token uses ${alg}`;
  if (alg.startsWith('HS')) return key.kind === 'secret' ? null : `the token uses ${alg}, which needs a shared secret, but ${describeKey(key.key)} was given`;
  if (key.kind === 'secret') return `the token uses ${alg}, which needs a public key, but a shared secret was given`;
  const t = key.key.asymmetricKeyType;
  if (alg.startsWith('RS')) return t === 'rsa' ? null : `the token uses ${alg}, which needs an RSA key, but ${describeKey(key.key)} was given`;
  if (alg.startsWith('PS')) return t === 'rsa' || t === 'rsa-pss' ? null : `the token uses ${alg}, which needs an RSA key, but ${describeKey(key.key)} was given`;
  if (alg.startsWith('ES')) {
    const want = EC_CURVES[alg]!;
    return t === 'ec' && key.key.asymmetricKeyDetails?.namedCurve === want.node ? null : `the token uses ${alg}, which needs an EC ${want.name} key, but ${describeKey(key.key)} was given`;
  }
  if (alg === 'Ed25519') return t === 'ed25519' ? null : `the token uses Ed25519, which needs an Ed25519 key, but ${describeKey(key.key)} was given`;
  if (alg === 'EdDSA') return t === 'ed25519' || t === 'ed448' ? null : `the token uses EdDSA, which needs an Ed25519 or Ed448 key, but ${describeKey(key.key)} was given`;
  return null;
}

function explain(e: unknown, alg: string, tokenExp: string | null): string {
  const err = e as { code?: string; message?: string };
  switch (err?.code) {
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'signature verification failed: the token was not signed with this key, or it was altered';
    case 'ERR_JWT_EXPIRED':
      return `the token expired${tokenExp ? ` at ${tokenExp}` : ''}`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return `alg ${alg} is not in verify.algorithms`;
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'no key in the JWK Set matches the token (kid, alg and key type)';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return `claim check failed: ${err.message ?? 'invalid claim'}`;
    default:
      return typeof err?.message === 'string' && err.message !== '' ? err.message : 'verification failed';
  }
}

async function verifyToken(token: string, alg: unknown, key: Key, v: VerifyInput, now: number, tokenExp: string | null): Promise<string | null> {
  if (typeof alg !== 'string') return 'the header has no alg';
  if (alg.toLowerCase() === 'none') return 'the token is unsigned (alg "none"); unsigned tokens never verify';
  if (!isJwsAlg(alg)) return `alg "${alg}" is not supported (${JWS_ALGS.join(', ')})`;
  const reason = misfit(alg, key);
  if (reason) return reason;
  const options: JWTVerifyOptions = {
    currentDate: new Date(now * 1000),
    clockTolerance: v.clock_tolerance_seconds,
    ...(v.algorithms ? { algorithms: [...v.algorithms] } : {}),
    ...(v.issuer !== undefined ? { issuer: v.issuer } : {}),
    ...(v.audience !== undefined ? { audience: v.audience } : {}),
    ...(v.subject !== undefined ? { subject: v.subject } : {}),
  };
  try {
    if (key.kind === 'jwks') {
      try {
        await jwtVerify(token, key.getKey, options);
      } catch (e) {
        if ((e as { code?: string }).code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') throw e;
        // Several keys fit (no kid): the token verifies if any of them checks it.
        let lastSignatureError: unknown = e;
        for await (const candidate of e as AsyncIterable<CryptoKey>) {
          try {
            await jwtVerify(token, candidate, options);
            return null;
          } catch (inner) {
            if ((inner as { code?: string }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw inner;
            lastSignatureError = inner;
          }
        }
        throw lastSignatureError;
      }
    } else {
      await jwtVerify(token, key.kind === 'secret' ? key.bytes : key.key, options);
    }
    return null;
  } catch (e) {
    return explain(e, alg, tokenExp);
  }
}

// ---------------------------------------------------------------- the tool

export default defineTool({
  name: 'tool-jwt-decoder',
  slug: 'jwt-decoder',
  summary: 'Decode a JWT (header, claims, signature) and optionally verify it with a secret, public key, JWK or JWK Set.',
  description:
    'Decodes a signed JWT (JWS compact form) without trusting it: the claims are shown whatever the signature, so decoding alone ' +
    'proves nothing about who issued the token. Give verify with exactly one key source to check the signature and the exp, nbf, ' +
    'iss, aud and sub claims; a token that fails is answered with verified false and the reason. A leading "Bearer " is ignored. ' +
    'Encrypted tokens (JWE) are not decoded. The key never leaves the server and is not stored.',
  request: StrictObject({
    token: Type.String({ minLength: 1, maxLength: MAX_TOKEN, description: `The JWT, header.payload.signature (at most ${MAX_TOKEN} characters).` }),
    verify: Type.Optional(VerifySchema),
  }),
  response: ResponseSchema,
  example: {
    request: { token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c', verify: { secret: 'your-256-bit-secret', clock_tolerance_seconds: 0 } },
    response: {
      header: { alg: 'HS256', typ: 'JWT' },
      payload: { sub: '1234567890', name: 'John Doe', iat: 1516239022 },
      signature: 'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
      algorithm: 'HS256',
      verified: true,
      verification_error: null,
    },
  },
  run({ token: raw, verify }): Result | Promise<Result> {
    const { token, header, payload, signature } = decode(raw);
    const now = Math.floor(Date.now() / 1000);
    const { warnings, claims } = analyse(header, payload, signature, now, verify?.clock_tolerance_seconds ?? 0);
    const algorithm = typeof header.alg === 'string' ? header.alg : null;
    const base = { header, payload, signature, algorithm, claims };
    if (!verify) {
      warnings.push({ code: 'not_verified', message: 'the signature was not checked: treat these claims as untrusted (pass verify to check them)' });
      return { ...base, verified: null, verification_error: null, warnings };
    }
    const key = buildKey(verify);
    if (key.kind === 'secret' && algorithm !== null && HMAC_MIN_BYTES[algorithm] !== undefined && key.bytes.length < HMAC_MIN_BYTES[algorithm]!) {
      warnings.push({ code: 'weak_secret', message: `the secret is ${key.bytes.length} bytes; ${algorithm} needs at least ${HMAC_MIN_BYTES[algorithm]} (RFC 7518 3.2)` });
    }
    return verifyToken(token, header.alg, key, verify, now, claims.expires_at).then(
      (error) => ({ ...base, verified: error === null, verification_error: error, warnings }),
      (e: unknown) => ({ ...base, verified: false, verification_error: explain(e, String(header.alg), claims.expires_at), warnings }),
    );
  },
});
