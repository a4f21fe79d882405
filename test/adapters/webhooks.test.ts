/**
 * Webhooks: signature vectors and verification, the retry schedule (parsing
 * and jittered delays), the payload, and real delivery attempts to a
 * receiver on loopback (success, failures, timeouts, redirects, refusals).
 */
import { createHmac } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverWebhook, newDeliveryId } from '../../adapters/webhooks/deliver.js';
import { newWebhookSecret, signPayload, verifySignature } from '../../adapters/webhooks/sign.js';
import {
  DEFAULT_WEBHOOK_SCHEDULE_SECONDS, WEBHOOK_ATTEMPT_HEADER, WEBHOOK_DELIVERY_HEADER, WEBHOOK_EVENT_HEADER,
  WEBHOOK_SIGNATURE_HEADER, buildPayload, nextAttemptDelayMs, parseWebhookSchedule, webhookMaxAttempts,
  type WebhookPayload,
} from '../../core/webhooks.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = 'whsec_test_secret';
const BODY = '{"event":"bulk_scrape.completed","n":1}';
const T = 1_700_000_000;
/** HMAC-SHA256("whsec_test_secret", "1700000000.<BODY>"), computed with openssl dgst -sha256 -hmac. */
const VECTOR_HEX = 'b2b54452b12944b0e428ece72ff62dc4089e2a4feed80b59f1fa8bf3c26a48c3';

describe('signPayload', () => {
  it('matches a fixed vector and an independent HMAC', () => {
    const independent = createHmac('sha256', SECRET).update(`${T}.${BODY}`, 'utf8').digest('hex');
    expect(independent).toBe(VECTOR_HEX);
    expect(signPayload(SECRET, BODY, T)).toBe(`t=${T},v1=${VECTOR_HEX}`);
  });

  it('floors fractional seconds and signs the UTF-8 bytes of non-ASCII bodies', () => {
    const body = '{"title":"Café ☕ 𝄞"}';
    const hex = createHmac('sha256', SECRET).update(Buffer.from(`${T}.${body}`, 'utf8')).digest('hex');
    expect(signPayload(SECRET, body, T + 0.9)).toBe(`t=${T},v1=${hex}`);
  });

  it('writes one v1 entry per secret during a rotation', () => {
    const other = 'whsec_new';
    const hex2 = createHmac('sha256', other).update(`${T}.${BODY}`).digest('hex');
    expect(signPayload([SECRET, other], BODY, T)).toBe(`t=${T},v1=${VECTOR_HEX},v1=${hex2}`);
    expect(() => signPayload([], BODY, T)).toThrow();
  });
});

describe('verifySignature', () => {
  const header = `t=${T},v1=${VECTOR_HEX}`;

  it('accepts a good signature, as string or bytes, within the tolerance either way', () => {
    expect(verifySignature(SECRET, BODY, header, T)).toBe(true);
    expect(verifySignature(SECRET, Buffer.from(BODY), header, T + 10)).toBe(true);
    expect(verifySignature(SECRET, new TextEncoder().encode(BODY), header, T - 10)).toBe(true);
    expect(verifySignature(SECRET, BODY, header, T + 300)).toBe(true);
    expect(verifySignature(SECRET, BODY, header, T - 300)).toBe(true);
    expect(verifySignature(SECRET, BODY, ` t = ${T} , v1 = ${VECTOR_HEX.toUpperCase()} `, T)).toBe(true);
  });

  it('refuses a wrong secret and a tampered body', () => {
    expect(verifySignature('whsec_other', BODY, header, T)).toMatch(/no v1 signature matches/);
    expect(verifySignature(SECRET, BODY.replace('1', '2'), header, T)).toMatch(/no v1 signature matches/);
    expect(verifySignature(SECRET, `${BODY} `, header, T)).toMatch(/no v1 signature matches/);
  });

  it('refuses a signed timestamp changed after signing', () => {
    expect(verifySignature(SECRET, BODY, `t=${T + 1},v1=${VECTOR_HEX}`, T)).toMatch(/no v1 signature matches/);
  });

  it('refuses stale and future timestamps beyond the tolerance', () => {
    expect(verifySignature(SECRET, BODY, header, T + 301)).toMatch(/old/);
    expect(verifySignature(SECRET, BODY, header, T - 301)).toMatch(/future/);
    expect(verifySignature(SECRET, BODY, header, T + 3600, 3600)).toBe(true);
    expect(verifySignature(SECRET, BODY, header, T + 61, 60)).toMatch(/old/);
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
    ['garbage', 'garbage'],
    ['no timestamp', `v1=${VECTOR_HEX}`],
    ['no signature', `t=${T}`],
    ['only another scheme', `t=${T},v0=${VECTOR_HEX}`],
    ['non-numeric timestamp', `t=abc,v1=${VECTOR_HEX}`],
    ['negative timestamp', `t=-1,v1=${VECTOR_HEX}`],
    ['fractional timestamp', `t=${T}.5,v1=${VECTOR_HEX}`],
    ['huge timestamp', `t=99999999999999999999,v1=${VECTOR_HEX}`],
    ['two timestamps', `t=${T},t=${T},v1=${VECTOR_HEX}`],
    ['short signature', `t=${T},v1=abcd`],
    ['non-hex signature', `t=${T},v1=${'z'.repeat(64)}`],
    ['long signature', `t=${T},v1=${VECTOR_HEX}00`],
    ['empty key', `=1,t=${T},v1=${VECTOR_HEX}`],
    ['trailing comma', `t=${T},v1=${VECTOR_HEX},`],
    ['oversized', `t=${T},v1=${VECTOR_HEX},x=${'a'.repeat(5000)}`],
  ])('refuses a malformed header: %s', (_name, h) => {
    const verdict = verifySignature(SECRET, BODY, h, T);
    expect(typeof verdict).toBe('string');
  });

  it('accepts several v1 entries when one matches, and ignores unknown schemes', () => {
    const wrong = 'f'.repeat(64);
    expect(verifySignature(SECRET, BODY, `t=${T},v1=${wrong},v1=${VECTOR_HEX}`, T)).toBe(true);
    expect(verifySignature(SECRET, BODY, `t=${T},v1=${VECTOR_HEX},v1=${wrong}`, T)).toBe(true);
    expect(verifySignature(SECRET, BODY, `t=${T},v0=whatever,v1=${VECTOR_HEX}`, T)).toBe(true);
    expect(verifySignature(SECRET, BODY, `t=${T},v1=${wrong},v1=${'e'.repeat(64)}`, T)).toMatch(/no v1 signature matches/);
  });

  it('supports rotation on both sides', () => {
    const next = newWebhookSecret();
    const both = signPayload([SECRET, next], BODY, T);
    expect(verifySignature(SECRET, BODY, both, T)).toBe(true);
    expect(verifySignature(next, BODY, both, T)).toBe(true);
    // A receiver holding old and new secrets accepts a signature by either.
    expect(verifySignature([next, SECRET], BODY, `t=${T},v1=${VECTOR_HEX}`, T)).toBe(true);
    expect(verifySignature(['whsec_a', 'whsec_b'], BODY, `t=${T},v1=${VECTOR_HEX}`, T)).toMatch(/no v1/);
  });
});

describe('newWebhookSecret', () => {
  it('is whsec_ and 32 random bytes in base64url', () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});

describe('parseWebhookSchedule', () => {
  it.each<[string, number[]]>([
    ['2s,10s,1m,5m,30m,2h', [...DEFAULT_WEBHOOK_SCHEDULE_SECONDS]],
    ['5', [5]],
    [' 1m , 30 ', [60, 30]],
    ['1H,2M,3S', [3600, 120, 3]],
    ['24h', [86400]],
    ['86400', [86400]],
    ['1440m', [86400]],
    ['1s', [1]],
    ['10,5,1', [10, 5, 1]],
    [Array.from({ length: 20 }, () => '1s').join(','), new Array<number>(20).fill(1)],
    ['007', [7]],
  ])('parses %j', (raw, expected) => {
    expect(parseWebhookSchedule(raw)).toEqual(expected);
  });

  it.each([
    '', ' ', ',', '0', '0s', '0h', '25h', '86401', '1441m', '1d', '1ms', '-5', '+5', '1.5m', '1e3', '0x10', 'NaN', 'Infinity',
    '2s,,3s', '2s,', ',2s', '1 m', '５', '2s;10s', '[2,10]', '2s 10s', '9999999999', 'a'.repeat(2000),
    Array.from({ length: 21 }, () => '1s').join(','),
  ])('refuses %j', (raw) => {
    const out = parseWebhookSchedule(raw);
    expect(Array.isArray(out)).toBe(false);
    expect((out as { error: string }).error).toMatch(/./);
  });
});

describe('nextAttemptDelayMs', () => {
  const schedule = DEFAULT_WEBHOOK_SCHEDULE_SECONDS;

  it('waits schedule[n-1] after n failed attempts, with the jitter pinned', () => {
    expect(nextAttemptDelayMs(1, schedule, () => 0.5)).toBe(2000);
    expect(nextAttemptDelayMs(2, schedule, () => 0.5)).toBe(10_000);
    expect(nextAttemptDelayMs(6, schedule, () => 0.5)).toBe(7_200_000);
    expect(nextAttemptDelayMs(1, schedule, () => 0)).toBe(1600);
    expect(nextAttemptDelayMs(1, schedule, () => 0.999999)).toBe(2400);
  });

  it('gives up after 1 + schedule.length attempts, and sends the first one at once', () => {
    expect(webhookMaxAttempts(schedule)).toBe(7);
    expect(nextAttemptDelayMs(7, schedule, () => 0.5)).toBeUndefined();
    expect(nextAttemptDelayMs(100, schedule, () => 0.5)).toBeUndefined();
    expect(nextAttemptDelayMs(1, [], () => 0.5)).toBeUndefined();
    expect(nextAttemptDelayMs(0, schedule, () => 0.5)).toBe(0);
    expect(nextAttemptDelayMs(-3, schedule, () => 0.5)).toBe(0);
    expect(nextAttemptDelayMs(Number.NaN, schedule, () => 0.5)).toBe(0);
  });

  it('stays within ±20% for any random source, and never goes negative', () => {
    for (let n = 1; n <= schedule.length; n++) {
      const base = (schedule[n - 1] as number) * 1000;
      for (let i = 0; i < 500; i++) {
        const d = nextAttemptDelayMs(n, schedule, Math.random) as number;
        expect(d).toBeGreaterThanOrEqual(base * 0.8);
        expect(d).toBeLessThanOrEqual(base * 1.2);
      }
    }
    for (const bad of [-1, 2, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const d = nextAttemptDelayMs(1, schedule, () => bad) as number;
      expect(d).toBeGreaterThanOrEqual(1600);
      expect(d).toBeLessThanOrEqual(2400);
    }
    expect(nextAttemptDelayMs(1, [-5], () => 0)).toBe(0);
  });
});

describe('buildPayload', () => {
  it('builds the documented shape in a fixed key order', () => {
    const p = buildPayload({
      event: 'bulk_scrape.completed', deliveryId: 'd1', jobId: 'job_1',
      createdAt: Date.UTC(2025, 0, 2, 3, 4, 5), sentAt: new Date(Date.UTC(2025, 0, 2, 3, 5, 0)), attempt: 2,
      data: { results: [{ url: 'https://example.com/', status: 'ok' }] },
    });
    expect(Object.keys(p)).toEqual(['event', 'delivery_id', 'job_id', 'created_at', 'sent_at', 'attempt', 'data']);
    expect(p).toEqual({
      event: 'bulk_scrape.completed', delivery_id: 'd1', job_id: 'job_1',
      created_at: '2025-01-02T03:04:05.000Z', sent_at: '2025-01-02T03:05:00.000Z', attempt: 2,
      data: { results: [{ url: 'https://example.com/', status: 'ok' }] },
    });
    expect(buildPayload({ ...inputOf(p), createdAt: '2025-01-02T04:04:05+01:00' }).created_at).toBe('2025-01-02T03:04:05.000Z');
  });
});

function inputOf(p: WebhookPayload) {
  return {
    event: p.event, deliveryId: p.delivery_id, jobId: p.job_id, createdAt: p.created_at,
    sentAt: Date.parse(p.sent_at), attempt: p.attempt, data: p.data,
  };
}

// ---------------------------------------------------------------------------
// Delivery over loopback

/** Only 127.0.0.1 is let through; everything else keeps the public-only rules. */
const LOOPBACK = { allowPrivate: false, allowAddress: (ip: string) => ip === '127.0.0.1' };

describe('deliverWebhook', () => {
  const receivers: WebhookReceiver[] = [];
  const receiver = async (options: Omit<Parameters<typeof startWebhookReceiver>[0], 'secret'> = {}) => {
    const r = await startWebhookReceiver({ secret: SECRET, ...options });
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  const payload = (attempt = 1, deliveryId = newDeliveryId()): WebhookPayload => buildPayload({
    event: 'bulk_scrape.completed', deliveryId, jobId: 'job_abc', createdAt: Date.now() - 5000, sentAt: Date.now(), attempt,
    data: { total: 2, results: [{ url: 'https://example.com/a', markdown: '# Café ☕' }, { url: 'https://example.com/b', error: null }] },
  });

  it('delivers a signed JSON POST and records a 2xx as success', async () => {
    const r = await receiver({ status: 202, responseBody: 'accepted' });
    const p = payload();
    const before = Date.now();
    const attempt = await deliverWebhook({ url: r.url, secret: SECRET, payload: p, ...LOOPBACK });
    expect(attempt).toMatchObject({ ok: true, status: 202, error: null, retryable: false, response_excerpt: 'accepted' });
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(attempt.attempted_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/hook');
    expect(got.verified).toBe(true);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('Scour-Webhooks/1');
    expect(got.headers[WEBHOOK_DELIVERY_HEADER]).toBe(p.delivery_id);
    expect(got.headers[WEBHOOK_EVENT_HEADER]).toBe('bulk_scrape.completed');
    expect(got.headers[WEBHOOK_ATTEMPT_HEADER]).toBe('1');
    expect(got).toMatchObject({ deliveryId: p.delivery_id, event: 'bulk_scrape.completed', attempt: 1 });
    expect(got.body).toEqual(p);
  });

  it('signs exactly the bytes it sends', async () => {
    const r = await receiver();
    const p = payload();
    const now = Date.now();
    await deliverWebhook({ url: r.url, secret: SECRET, payload: p, ...LOOPBACK, now: () => now });
    const got = r.received[0]!;
    expect(got.raw).toBe(JSON.stringify(p));
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(got.raw)));
    const sig = got.headers[WEBHOOK_SIGNATURE_HEADER] as string;
    expect(sig).toBe(signPayload(SECRET, got.raw, Math.floor(now / 1000)));
    const hex = createHmac('sha256', SECRET).update(`${Math.floor(now / 1000)}.${got.raw}`).digest('hex');
    expect(sig).toBe(`t=${Math.floor(now / 1000)},v1=${hex}`);
  });

  it('records a 500 as a retryable failure with the response excerpt', async () => {
    const r = await receiver({ failFirst: 1 });
    const attempt = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(), ...LOOPBACK });
    expect(attempt).toMatchObject({ ok: false, status: 500, error: 'HTTP 500', retryable: true, response_excerpt: 'failing on purpose' });
  });

  it.each([400, 404, 408, 410, 429])('retries a %i too ("anything else is retried")', async (status) => {
    const r = await receiver({ status });
    const attempt = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(), ...LOOPBACK });
    expect(attempt).toMatchObject({ ok: false, status, error: `HTTP ${status}`, retryable: true });
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const r = await receiver({ status: 302 });
    const attempt = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(), ...LOOPBACK });
    expect(attempt).toMatchObject({ ok: false, status: 302, retryable: true });
    expect(attempt.error).toMatch(/^HTTP 302: redirects are not followed/);
    // Give a follower time to make the second request it must not make.
    await new Promise((res) => setTimeout(res, 100));
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.path).toBe('/hook');
  });

  it('times out a slow receiver (retryable)', async () => {
    const r = await receiver({ delayMs: 3000 });
    const attempt = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(), ...LOOPBACK, timeoutMs: 300 });
    expect(attempt).toMatchObject({ ok: false, status: null, retryable: true, response_excerpt: null });
    expect(attempt.error).toMatch(/^TARGET_TIMEOUT: /);
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(250);
    expect(attempt.duration_ms).toBeLessThan(2500);
  });

  it('records a closed port as a retryable failure', async () => {
    const server = net.createServer();
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((res) => server.close(() => res()));
    const attempt = await deliverWebhook({ url: `http://127.0.0.1:${port}/hook`, secret: SECRET, payload: payload(), ...LOOPBACK });
    expect(attempt).toMatchObject({ ok: false, status: null, retryable: true, response_excerpt: null });
    expect(attempt.error).toMatch(/^TARGET_UNREACHABLE: .*ECONNREFUSED/);
  });

  it('is refused by the egress guard without a byte sent, and is not retryable', async () => {
    const r = await receiver();
    const attempt = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(), allowPrivate: false });
    expect(attempt).toMatchObject({ ok: false, status: null, retryable: false, response_excerpt: null });
    expect(attempt.error).toMatch(/^TARGET_NOT_ALLOWED: /);
    for (const url of ['file:///etc/passwd', 'not a url', `http://user:pw@127.0.0.1:${r.port}/hook`, `http://localhost:${r.port}/hook`]) {
      const a = await deliverWebhook({ url, secret: SECRET, payload: payload(), allowPrivate: false });
      expect(a, url).toMatchObject({ ok: false, retryable: false });
      expect(a.error, url).toMatch(/^TARGET_NOT_ALLOWED: /);
    }
    expect(r.received).toHaveLength(0);
    expect(r.connections()).toBe(0);
  });

  it('judges the addresses a name resolves to', async () => {
    const r = await receiver();
    const resolver = async (host: string) => [{ address: host === 'hooks.example' ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const ok = await deliverWebhook({
      url: `http://hooks.example:${r.port}/hook`, secret: SECRET, payload: payload(), ...LOOPBACK, resolver,
    });
    expect(ok).toMatchObject({ ok: true, status: 200 });
    const refused = await deliverWebhook({
      url: `http://other.example:${r.port}/hook`, secret: SECRET, payload: payload(), ...LOOPBACK, resolver,
    });
    expect(refused).toMatchObject({ ok: false, retryable: false });
    expect(refused.error).toMatch(/^TARGET_NOT_ALLOWED: other\.example resolves to 127\.0\.0\.2/);
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.headers.host).toBe(`hooks.example:${r.port}`);
  });

  it('keeps the excerpt to 200 characters, and fails a response over the byte limit', async () => {
    const r = await receiver({ responseBody: 'é'.repeat(150) + 'x'.repeat(500) });
    const a = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(), ...LOOPBACK });
    expect(a.ok).toBe(true);
    expect(a.response_excerpt).toBe('é'.repeat(150) + 'x'.repeat(50));
    const big = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(), ...LOOPBACK, maxResponseBytes: 256 });
    expect(big).toMatchObject({ ok: false, status: null, retryable: true });
    expect(big.error).toMatch(/^TARGET_RESPONSE_INVALID: .*256 bytes/);
  });

  it('is at least once: retries until a 2xx, one delivery id throughout, receivers deduplicate', async () => {
    const r = await receiver({ failFirst: 2 });
    const deliveryId = newDeliveryId();
    const attempts = [];
    // The schedule's delays are skipped here; nextAttemptDelayMs decides when to stop.
    for (let n = 1; ; n++) {
      const a = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(n, deliveryId), ...LOOPBACK });
      attempts.push(a);
      if (a.ok || !a.retryable || nextAttemptDelayMs(n, [1, 1, 1], () => 0.5) === undefined) break;
    }
    expect(attempts.map((a) => a.status)).toEqual([500, 500, 200]);
    expect(r.received.map((x) => x.attempt)).toEqual([1, 2, 3]);
    expect(r.received.every((x) => x.deliveryId === deliveryId && x.verified === true)).toBe(true);
    expect(r.uniqueDeliveries()).toHaveLength(1);
    await expect(r.waitFor(3, 100)).resolves.toHaveLength(3);
    await expect(r.waitFor(4, 100)).rejects.toThrow(/3 of 4/);
  });

  it('gives up when the schedule is used up', async () => {
    const r = await receiver({ status: 503 });
    const attempts = [];
    for (let n = 1; ; n++) {
      const a = await deliverWebhook({ url: r.url, secret: SECRET, payload: payload(n, 'fixed-id'), ...LOOPBACK });
      attempts.push(a);
      if (a.ok || !a.retryable || nextAttemptDelayMs(n, [1, 1], () => 0.5) === undefined) break;
    }
    expect(attempts).toHaveLength(3);
    expect(r.uniqueDeliveries()).toHaveLength(1);
  });

  it('flags a signature by the wrong secret at the receiver', async () => {
    const r = await receiver();
    await deliverWebhook({ url: r.url, secret: 'whsec_wrong', payload: payload(), ...LOOPBACK });
    expect(r.received[0]!.verified).toMatch(/no v1 signature matches/);
  });
});
