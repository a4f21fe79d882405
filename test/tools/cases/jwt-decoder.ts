/** Case table for the jwt-decoder tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import { SignJWT, exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import type { ToolCaseFile } from '../../support/tool-harness.js';

// Real tokens, signed with jose at module load.
const SECRET = 'a-shared-secret-of-at-least-32-bytes!!';
const secretBytes = new TextEncoder().encode(SECRET);
const now = Math.floor(Date.now() / 1000);

const hs256 = await new SignJWT({ sub: 'user-1', role: 'admin' })
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
  .setIssuer('https://issuer.example').setAudience(['api', 'web'])
  .setIssuedAt(now).setExpirationTime(now + 3600).sign(secretBytes);
const hs256Expired = await new SignJWT({ sub: 'user-1' }).setProtectedHeader({ alg: 'HS256' })
  .setIssuedAt(now - 7200).setExpirationTime(now - 600).sign(secretBytes);
const hs256NotYet = await new SignJWT({ sub: 'user-1' }).setProtectedHeader({ alg: 'HS256' })
  .setNotBefore(now + 600).setExpirationTime(now + 3600).sign(secretBytes);
const hs256NoExp = await new SignJWT({ sub: 'user-1' }).setProtectedHeader({ alg: 'HS256' }).sign(secretBytes);
const hs256StringExp = await new SignJWT({ exp: 'tomorrow' as unknown as number }).setProtectedHeader({ alg: 'HS256' }).sign(secretBytes);
const hs256MsExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime((now + 3600) * 1000).sign(secretBytes);
const hs256Jku = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', jku: 'https://evil.example/keys' }).setExpirationTime(now + 60).sign(secretBytes);
const hs256Proto = await new SignJWT(JSON.parse('{"__proto__": {"admin": true}, "n": 1}')).setProtectedHeader({ alg: 'HS256' }).sign(secretBytes);

const rsa = await generateKeyPair('RS256', { extractable: true });
const rsa2 = await generateKeyPair('RS256', { extractable: true });
const ec = await generateKeyPair('ES256', { extractable: true });
const ed = await generateKeyPair('Ed25519', { extractable: true });
const rsaPem = await exportSPKI(rsa.publicKey);
const rsaPrivatePem = await exportPKCS8(rsa.privateKey);
const ecPem = await exportSPKI(ec.publicKey);
const edPem = await exportSPKI(ed.publicKey);
const rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
const rsa2Jwk = { ...(await exportJWK(rsa2.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' };
const rsaPrivateJwk = await exportJWK(rsa.privateKey);
const ecJwk = await exportJWK(ec.publicKey);

const rs256 = await new SignJWT({ sub: 'svc' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setExpirationTime(now + 3600).sign(rsa.privateKey);
const rs256NoKid = await new SignJWT({ sub: 'svc' }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime(now + 3600).sign(rsa2.privateKey);
const es256 = await new SignJWT({ sub: 'svc' }).setProtectedHeader({ alg: 'ES256' }).setExpirationTime(now + 3600).sign(ec.privateKey);
const eddsa = await new SignJWT({ sub: 'svc' }).setProtectedHeader({ alg: 'EdDSA' }).setExpirationTime(now + 3600).sign(ed.privateKey);

const b64 = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');
const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'anyone', admin: true })}.`;
const [hsHead, hsBody, hsSig] = hs256.split('.') as [string, string, string];

/** jwt.io's sample token and secret (a widely published vector). */
const JWT_IO = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

const codes = (b: any) => b.warnings.map((w: { code: string }) => w.code);
const verifiedOk = (b: any) => { expect(b.verification_error).toBeNull(); expect(b.verified).toBe(true); };
const failedWith = (re: RegExp) => (b: any) => { expect(b.verified).toBe(false); expect(b.verification_error).toMatch(re); };

export default {
  slug: 'jwt-decoder',
  cases: [
    {
      name: 'jwt.io sample decodes',
      body: { token: JWT_IO },
      status: 200,
      check: (b) => {
        expect(b.header).toEqual({ alg: 'HS256', typ: 'JWT' });
        expect(b.payload).toEqual({ sub: '1234567890', name: 'John Doe', iat: 1516239022 });
        expect(b.signature).toBe('SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c');
        expect(b.algorithm).toBe('HS256');
        expect(b.claims.issued_at).toBe('2018-01-18T01:30:22.000Z');
        expect(b.claims.expires_at).toBeNull();
        expect(b.claims.expired).toBe(false);
        expect(b.claims.seconds_until_expiry).toBeNull();
        expect(b.verified).toBeNull();
        expect(b.verification_error).toBeNull();
        expect(codes(b)).toEqual(expect.arrayContaining(['no_expiry', 'not_verified']));
      },
    },
    {
      name: 'jwt.io sample verifies with its secret (and the short secret is flagged)',
      body: { token: JWT_IO, verify: { secret: 'your-256-bit-secret' } },
      status: 200,
      check: (b) => { verifiedOk(b); expect(codes(b)).toContain('weak_secret'); expect(codes(b)).not.toContain('not_verified'); },
    },
    { name: 'jwt.io sample fails with another secret', body: { token: JWT_IO, verify: { secret: 'not-the-secret' } }, status: 200, check: failedWith(/signature verification failed/) },
    {
      name: 'HS256 with iss, aud, iat, exp',
      body: { token: hs256 },
      status: 200,
      check: (b) => {
        expect(b.payload).toMatchObject({ sub: 'user-1', role: 'admin', iss: 'https://issuer.example', aud: ['api', 'web'], iat: now, exp: now + 3600 });
        expect(b.claims.issued_at).toBe(new Date(now * 1000).toISOString());
        expect(b.claims.expires_at).toBe(new Date((now + 3600) * 1000).toISOString());
        expect(b.claims.expired).toBe(false);
        expect(b.claims.seconds_until_expiry).toBeGreaterThan(3500);
        expect(b.claims.seconds_until_expiry).toBeLessThanOrEqual(3600);
        expect(codes(b)).toEqual(['not_verified']);
      },
    },
    { name: 'HS256 verifies with secret, issuer and audience', body: { token: hs256, verify: { secret: SECRET, issuer: 'https://issuer.example', audience: 'api', subject: 'user-1', algorithms: ['HS256'] } }, status: 200, check: (b) => { verifiedOk(b); expect(codes(b)).toEqual([]); } },
    { name: 'HS256 verifies with the secret in base64', body: { token: hs256, verify: { secret: Buffer.from(SECRET).toString('base64'), secret_encoding: 'base64' } }, status: 200, check: verifiedOk },
    { name: 'HS256 verifies with the secret in hex', body: { token: hs256, verify: { secret: Buffer.from(SECRET).toString('hex'), secret_encoding: 'hex' } }, status: 200, check: verifiedOk },
    { name: 'HS256 verifies with an oct JWK', body: { token: hs256, verify: { jwk: { kty: 'oct', k: Buffer.from(SECRET).toString('base64url') } } }, status: 200, check: verifiedOk },
    { name: 'Bearer prefix and whitespace are ignored', body: { token: `  Bearer ${hs256}\n` }, status: 200, check: (b) => expect(b.payload.sub).toBe('user-1') },
    { name: 'wrong issuer', body: { token: hs256, verify: { secret: SECRET, issuer: 'https://other.example' } }, status: 200, check: failedWith(/claim check failed: .*iss/) },
    { name: 'wrong audience', body: { token: hs256, verify: { secret: SECRET, audience: ['mobile', 'tv'] } }, status: 200, check: failedWith(/claim check failed: .*aud/) },
    { name: 'alg not in verify.algorithms', body: { token: hs256, verify: { secret: SECRET, algorithms: ['HS512'] } }, status: 200, check: failedWith(/alg HS256 is not in verify\.algorithms/) },
    { name: 'tampered payload fails', body: { token: `${hsHead}.${b64({ sub: 'user-1', role: 'root' })}.${hsSig}` }, status: 200, check: (b) => expect(b.payload.role).toBe('root') },
    { name: 'tampered payload fails verification', body: { token: `${hsHead}.${b64({ sub: 'user-1', role: 'root' })}.${hsSig}`, verify: { secret: SECRET } }, status: 200, check: failedWith(/signature verification failed/) },
    {
      name: 'expired token: claims and warning',
      body: { token: hs256Expired },
      status: 200,
      check: (b) => {
        expect(b.claims.expired).toBe(true);
        expect(b.claims.seconds_until_expiry).toBeLessThanOrEqual(-600);
        expect(codes(b)).toContain('expired');
      },
    },
    { name: 'expired token fails verification', body: { token: hs256Expired, verify: { secret: SECRET } }, status: 200, check: failedWith(/expired/) },
    { name: 'expired token passes within clock tolerance', body: { token: hs256Expired, verify: { secret: SECRET, clock_tolerance_seconds: 3600 } }, status: 200, check: (b) => { verifiedOk(b); expect(b.claims.expired).toBe(false); } },
    { name: 'not-yet-valid token', body: { token: hs256NotYet, verify: { secret: SECRET } }, status: 200, check: (b) => { expect(b.claims.not_yet_valid).toBe(true); expect(codes(b)).toContain('not_yet_valid'); failedWith(/nbf/)(b); } },
    { name: 'no exp is flagged', body: { token: hs256NoExp }, status: 200, check: (b) => expect(codes(b)).toContain('no_expiry') },
    { name: 'exp that is not a number', body: { token: hs256StringExp }, status: 200, check: (b) => { expect(b.claims.expires_at).toBeNull(); expect(codes(b)).toContain('invalid_claim'); expect(codes(b)).not.toContain('no_expiry'); } },
    { name: 'exp that is not a number fails verification', body: { token: hs256StringExp, verify: { secret: SECRET } }, status: 200, check: failedWith(/exp/) },
    { name: 'exp in milliseconds', body: { token: hs256MsExp }, status: 200, check: (b) => expect(codes(b)).toContain('milliseconds') },
    { name: 'jku header is flagged', body: { token: hs256Jku }, status: 200, check: (b) => expect(codes(b)).toContain('embedded_key') },
    { name: '__proto__ claim is plain data', body: { token: hs256Proto }, status: 200, check: (b) => { expect(Object.hasOwn(b.payload, '__proto__')).toBe(true); expect(b.payload.n).toBe(1); expect(({} as any).admin).toBeUndefined(); } },
    {
      name: 'alg none: decoded, flagged, never verified',
      body: { token: unsigned, verify: { secret: SECRET } },
      status: 200,
      check: (b) => {
        expect(b.header).toEqual({ alg: 'none', typ: 'JWT' });
        expect(b.payload).toEqual({ sub: 'anyone', admin: true });
        expect(b.signature).toBe('');
        expect(codes(b)).toContain('unsigned');
        failedWith(/unsigned/)(b);
      },
    },
    { name: 'RS256 verifies with a PEM public key', body: { token: rs256, verify: { public_key: rsaPem } }, status: 200, check: (b) => { verifiedOk(b); expect(b.header.kid).toBe('k1'); } },
    { name: 'RS256 verifies with a public JWK', body: { token: rs256, verify: { jwk: rsaJwk } }, status: 200, check: verifiedOk },
    { name: 'RS256 verifies with a JWK Set by kid', body: { token: rs256, verify: { jwks: { keys: [rsa2Jwk, rsaJwk] } } }, status: 200, check: verifiedOk },
    { name: 'RS256 without kid verifies against a JWK Set with several RSA keys', body: { token: rs256NoKid, verify: { jwks: { keys: [{ ...rsaJwk, kid: undefined }, { ...rsa2Jwk, kid: undefined }] } } }, status: 200, check: verifiedOk },
    { name: 'JWK Set without a matching key', body: { token: rs256, verify: { jwks: { keys: [rsa2Jwk] } } }, status: 200, check: failedWith(/no key in the JWK Set/) },
    { name: 'RS256 with the wrong RSA key', body: { token: rs256, verify: { jwk: { ...rsa2Jwk, kid: 'k1' } } }, status: 200, check: failedWith(/signature verification failed/) },
    { name: 'RS256 with an EC key', body: { token: rs256, verify: { public_key: ecPem } }, status: 200, check: failedWith(/needs an RSA key, but an EC P-256 key was given/) },
    { name: 'RS256 with a secret', body: { token: rs256, verify: { secret: SECRET } }, status: 200, check: failedWith(/needs a public key/) },
    { name: 'HS256 with a public key (algorithm confusion) fails', body: { token: hs256, verify: { public_key: rsaPem } }, status: 200, check: failedWith(/needs a shared secret/) },
    { name: 'JWK alg differs from the token alg', body: { token: es256, verify: { jwk: { ...ecJwk, alg: 'ES384' } } }, status: 200, check: failedWith(/JWK is for alg ES384/) },
    { name: 'ES256 verifies with a PEM public key', body: { token: es256, verify: { public_key: ecPem } }, status: 200, check: verifiedOk },
    { name: 'ES256 verifies with a JWK', body: { token: es256, verify: { jwk: ecJwk } }, status: 200, check: verifiedOk },
    { name: 'EdDSA verifies with a PEM public key', body: { token: eddsa, verify: { public_key: edPem } }, status: 200, check: verifiedOk },
    { name: 'nested claims up to 64 levels', body: { token: `${hsHead}.${b64(`{"a":${'['.repeat(63)}${']'.repeat(63)}}`)}.${hsSig}` }, status: 200, check: (b) => expect(Array.isArray(b.payload.a)).toBe(true) },

    // malformed tokens
    { name: 'missing token', body: {}, status: 400, fields: ['token'] },
    { name: 'token is a number', body: { token: 42 }, status: 400, fields: ['token'] },
    { name: 'token is null', body: { token: null }, status: 400, fields: ['token'] },
    { name: 'empty token', body: { token: '' }, status: 400, fields: ['token'] },
    { name: 'oversize token', body: { token: `${hsHead}.${'A'.repeat(16_400)}.${hsSig}` }, status: 400, fields: ['token'] },
    { name: 'unknown field', body: { token: hs256, secret: SECRET }, status: 400, fields: ['secret'] },
    { name: 'two segments', body: { token: `${hsHead}.${hsBody}` }, status: 400, fields: ['token'] },
    { name: 'four segments', body: { token: `${hs256}.x` }, status: 400, fields: ['token'] },
    { name: 'not a token at all', body: { token: 'hello world' }, status: 400, fields: ['token'] },
    { name: 'encrypted JWE (five segments)', body: { token: 'eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ.a.b.c.d' }, status: 400, fields: ['token'], check: (b) => expect(b.validation_errors[0].message).toMatch(/encrypted/) },
    { name: 'header is not base64url', body: { token: `ey$$.${hsBody}.${hsSig}` }, status: 400, fields: ['token'], check: (b) => expect(b.validation_errors[0].message).toMatch(/header segment is not base64url/) },
    { name: 'header is not JSON', body: { token: `${b64('not json')}.${hsBody}.${hsSig}` }, status: 400, fields: ['token'], check: (b) => expect(b.validation_errors[0].message).toMatch(/header segment is not JSON/) },
    { name: 'header is a JSON array', body: { token: `${b64([1])}.${hsBody}.${hsSig}` }, status: 400, fields: ['token'], check: (b) => expect(b.validation_errors[0].message).toMatch(/not an object \(an array\)/) },
    { name: 'header is not UTF-8', body: { token: `${Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url')}.${hsBody}.${hsSig}` }, status: 400, fields: ['token'] },
    { name: 'empty header', body: { token: `.${hsBody}.${hsSig}` }, status: 400, fields: ['token'] },
    { name: 'payload is JSON null', body: { token: `${hsHead}.${b64('null')}.${hsSig}` }, status: 400, fields: ['token'], check: (b) => expect(b.validation_errors[0].message).toMatch(/payload segment is JSON but not an object \(null\)/) },
    { name: 'payload is a JSON string', body: { token: `${hsHead}.${b64('"hi"')}.${hsSig}` }, status: 400, fields: ['token'] },
    { name: 'payload is truncated JSON', body: { token: `${hsHead}.${b64('{"a":')}.${hsSig}` }, status: 400, fields: ['token'] },
    { name: 'payload nested 5000 deep', body: { token: `${hsHead}.${b64(`{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`)}.${hsSig}` }, status: 400, fields: ['token'], check: (b) => expect(b.validation_errors[0].message).toMatch(/nests deeper/) },
    { name: 'header nested 65 deep', body: { token: `${b64(`{"alg":"HS256","x":${'{"a":'.repeat(64)}1${'}'.repeat(64)}}`)}.${hsBody}.${hsSig}` }, status: 400, fields: ['token'] },
    { name: 'signature with padding', body: { token: `${hsHead}.${hsBody}.${hsSig}=` }, status: 400, fields: ['token'] },
    { name: 'NUL byte in token', body: { token: `${hsHead}\u0000.${hsBody}.${hsSig}` }, status: 400, fields: ['token'] },
    { name: 'lone surrogate in token', body: { token: `${hsHead}.${hsBody}\ud800.${hsSig}` }, status: 400, fields: ['token'] },

    // bad verify options
    { name: 'verify without a key', body: { token: hs256, verify: { issuer: 'x' } }, status: 400, fields: ['verify'] },
    { name: 'verify with two keys', body: { token: hs256, verify: { secret: SECRET, public_key: rsaPem } }, status: 400, fields: ['verify'] },
    { name: 'verify is not an object', body: { token: hs256, verify: SECRET }, status: 400, fields: ['verify'] },
    { name: 'unknown verify field', body: { token: hs256, verify: { secret: SECRET, leeway: 5 } }, status: 400, fields: ['verify.leeway'] },
    { name: 'empty secret', body: { token: hs256, verify: { secret: '' } }, status: 400, fields: ['verify.secret'] },
    { name: 'oversize secret', body: { token: hs256, verify: { secret: 'x'.repeat(4097) } }, status: 400, fields: ['verify.secret'] },
    { name: 'secret that is not hex', body: { token: hs256, verify: { secret: 'xyz', secret_encoding: 'hex' } }, status: 400, fields: ['verify.secret'] },
    { name: 'secret that is not base64', body: { token: hs256, verify: { secret: 'a$b=', secret_encoding: 'base64' } }, status: 400, fields: ['verify.secret'] },
    { name: 'secret_encoding without a secret', body: { token: rs256, verify: { public_key: rsaPem, secret_encoding: 'hex' } }, status: 400, fields: ['verify.secret_encoding'] },
    { name: 'unknown secret_encoding', body: { token: hs256, verify: { secret: SECRET, secret_encoding: 'latin1' } }, status: 400, fields: ['verify.secret_encoding'] },
    { name: 'public key that is not PEM', body: { token: rs256, verify: { public_key: 'ssh-rsa AAAAB3NzaC1yc2E' } }, status: 400, fields: ['verify.public_key'] },
    { name: 'PEM with a broken body', body: { token: rs256, verify: { public_key: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' } }, status: 400, fields: ['verify.public_key'] },
    { name: 'a private key as public_key is refused', body: { token: rs256, verify: { public_key: rsaPrivatePem } }, status: 400, fields: ['verify.public_key'] },
    { name: 'a private JWK is refused', body: { token: rs256, verify: { jwk: rsaPrivateJwk } }, status: 400, fields: ['verify.jwk'] },
    { name: 'a JWK with a broken modulus', body: { token: rs256, verify: { jwk: { kty: 'RSA', n: 'abc' } } }, status: 400, fields: ['verify.jwk'] },
    { name: 'a JWK of an unknown kty', body: { token: rs256, verify: { jwk: { kty: 'XYZ' } } }, status: 400, fields: ['verify.jwk'] },
    { name: 'a JWK without kty', body: { token: rs256, verify: { jwk: { n: 'abc', e: 'AQAB' } } }, status: 400, fields: ['verify.jwk.kty'] },
    { name: 'an oct JWK without k', body: { token: hs256, verify: { jwk: { kty: 'oct' } } }, status: 400, fields: ['verify.jwk'] },
    { name: 'a JWK Set with a secret key', body: { token: hs256, verify: { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } } }, status: 400, fields: ['verify.jwks.keys[0]'] },
    { name: 'a JWK Set with a broken key', body: { token: rs256, verify: { jwks: { keys: [rsaJwk, { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] } } }, status: 400, fields: ['verify.jwks.keys[1]'] },
    { name: 'an empty JWK Set', body: { token: rs256, verify: { jwks: { keys: [] } } }, status: 400, fields: ['verify.jwks.keys'] },
    { name: 'alg none in algorithms', body: { token: hs256, verify: { secret: SECRET, algorithms: ['none'] } }, status: 400, fields: ['verify.algorithms[0]'] },
    { name: 'empty algorithms', body: { token: hs256, verify: { secret: SECRET, algorithms: [] } }, status: 400, fields: ['verify.algorithms'] },
    { name: 'negative clock tolerance', body: { token: hs256, verify: { secret: SECRET, clock_tolerance_seconds: -1 } }, status: 400, fields: ['verify.clock_tolerance_seconds'] },
    { name: 'huge clock tolerance', body: { token: hs256, verify: { secret: SECRET, clock_tolerance_seconds: 1e12 } }, status: 400, fields: ['verify.clock_tolerance_seconds'] },
    { name: 'issuer of the wrong type', body: { token: hs256, verify: { secret: SECRET, issuer: 5 } }, status: 400, fields: ['verify.issuer'] },
  ],
} satisfies ToolCaseFile;
