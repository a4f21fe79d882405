/**
 * The admin API for webhook signing secrets, on real servers on loopback,
 * in both deployments (embedded: SQLite; shared: PostgreSQL and Redis) and
 * on both adapters: GET .../webhook-secret makes the secret once and then
 * shows the same one; POST .../webhook-secret/rotate replaces it and keeps
 * the old one signing for the grace period (default 24 h, 0: dropped at
 * once); 404 for unknown accounts, 401 without the admin token, hostile
 * bodies 400 with validation_errors and nothing changed. Then, end to end
 * (embedded): a webhook sent during the grace period verifies with the old
 * secret and with the new one, and after a rotation without grace only
 * with the newest.
 */
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../adapters/webhooks/sign.js';
import { WEBHOOK_SIGNATURE_HEADER } from '../../core/webhooks.js';
import { call, expectErrorBody, ISO, type Reply } from '../support/http.js';
import { startScourIn, type AdapterKind, type ConfigKind, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const MATRIX: ReadonlyArray<readonly [ConfigKind, AdapterKind]> = [['embedded', 'uws'], ['shared', 'uws'], ['embedded', 'node']];
const ADMIN_TOKEN = 'admin-webhooks-token-0123456789';
const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;
const DAY_MS = 86_400_000;

function expectValidation(r: Reply, field: string, label: string): void {
  expect(r.status, `${label}: ${r.text}`).toBe(400);
  expectErrorBody(r, 400, 'MISSING_PARAMETER');
  expect(Array.isArray(r.body.validation_errors), label).toBe(true);
  expect(r.body.validation_errors.length, label).toBeGreaterThan(0);
  for (const e of r.body.validation_errors) {
    expect(Object.keys(e).sort()).toEqual(['field', 'message']);
    expect(e.field, `${label}: ${JSON.stringify(r.body.validation_errors)}`).toBe(field);
  }
}

function expectSecretShape(body: any, accountId: string): void {
  expect(Object.keys(body).sort()).toEqual(['account_id', 'created_at', 'previous_secret_expires_at', 'request_id', 'secret']);
  expect(body.account_id).toBe(accountId);
  expect(body.secret).toMatch(SECRET);
  expect(body.created_at).toMatch(ISO);
  expect(Math.abs(Date.parse(body.created_at) - Date.now())).toBeLessThan(60_000);
  if (body.previous_secret_expires_at !== null) expect(body.previous_secret_expires_at).toMatch(ISO);
  expect(typeof body.request_id).toBe('string');
}

describe.each(MATRIX)('admin API webhook secrets: %s deployment over %s', (config, adapter) => {
  let s: Running;
  const admin = (method: string, path: string, body?: unknown, token: string | null = ADMIN_TOKEN) =>
    call(`${s.url}/admin/v1${path}`, method, { auth: token === null ? undefined : `Bearer ${token}`, body });
  const show = (id: string) => admin('GET', `/accounts/${id}/webhook-secret`);
  const rotate = (id: string, body?: unknown) => admin('POST', `/accounts/${id}/webhook-secret/rotate`, body);
  const signing = (id: string, at = Date.now()) => Effect.runPromise(s.scour.jobStore.signingSecrets(id, at));
  const stored = (id: string) => Effect.runPromise(s.scour.jobStore.webhookSecret(id));

  async function newAccount(): Promise<string> {
    const r = await admin('POST', '/accounts', { plan: 'starter', credits: 10 });
    expect(r.status, r.text).toBe(201);
    return r.body.account_id as string;
  }

  beforeAll(async () => {
    s = await startScourIn(config, adapter, { adminToken: ADMIN_TOKEN });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('GET makes the secret on first use and then shows the same one (also to callers racing for it)', async () => {
    const id = await newAccount();
    expect(await stored(id)).toBeUndefined();
    const first = await show(id);
    expect(first.status, first.text).toBe(200);
    expectSecretShape(first.body, id);
    expect(first.body.previous_secret_expires_at).toBeNull();
    expect(await stored(id)).toBe(first.body.secret);
    expect(await signing(id)).toEqual([first.body.secret]);
    const again = await show(id);
    expect(again.status).toBe(200);
    expect({ ...again.body, request_id: undefined }).toEqual({ ...first.body, request_id: undefined });

    const other = await newAccount();
    const racing = await Promise.all(Array.from({ length: 8 }, () => show(other)));
    for (const r of racing) expect(r.status, r.text).toBe(200);
    expect(new Set(racing.map((r) => r.body.secret)).size).toBe(1);
    expect(racing[0]!.body.secret).not.toBe(first.body.secret);
    expect(await stored(other)).toBe(racing[0]!.body.secret);
  });

  it('rotate: a new secret; by default the old one signs alongside it for 24 h', async () => {
    const id = await newAccount();
    const old = (await show(id)).body.secret as string;
    // No body at all: the defaults.
    const r = await rotate(id);
    expect(r.status, r.text).toBe(200);
    expectSecretShape(r.body, id);
    expect(r.body.secret).not.toBe(old);
    expect(Date.parse(r.body.previous_secret_expires_at) - Date.parse(r.body.created_at)).toBe(DAY_MS);
    expect(await signing(id)).toEqual([r.body.secret, old]);
    // The old one stops signing at previous_secret_expires_at.
    const expires = Date.parse(r.body.previous_secret_expires_at);
    expect(await signing(id, expires - 1)).toEqual([r.body.secret, old]);
    expect(await signing(id, expires)).toEqual([r.body.secret]);
    // GET shows the new secret and the same expiry; it does not make another.
    const shown = await show(id);
    expect(shown.body).toMatchObject({ secret: r.body.secret, created_at: r.body.created_at, previous_secret_expires_at: r.body.previous_secret_expires_at });
  });

  it('rotate with grace_period_seconds: the given grace; 0 drops the old secret at once; a second rotation keeps only the one it replaces', async () => {
    const id = await newAccount();
    const first = (await show(id)).body.secret as string;
    const second = await rotate(id, { grace_period_seconds: 60 });
    expect(second.status, second.text).toBe(200);
    expect(Date.parse(second.body.previous_secret_expires_at) - Date.parse(second.body.created_at)).toBe(60_000);
    expect(await signing(id)).toEqual([second.body.secret, first]);

    const third = await rotate(id, { grace_period_seconds: 604_800 });
    expect(third.status, third.text).toBe(200);
    expect(Date.parse(third.body.previous_secret_expires_at) - Date.parse(third.body.created_at)).toBe(7 * DAY_MS);
    expect(await signing(id)).toEqual([third.body.secret, second.body.secret]);

    const fourth = await rotate(id, { grace_period_seconds: 0 });
    expect(fourth.status, fourth.text).toBe(200);
    expectSecretShape(fourth.body, id);
    expect(fourth.body.previous_secret_expires_at).toBeNull();
    expect(await signing(id)).toEqual([fourth.body.secret]);
    expect((await show(id)).body).toMatchObject({ secret: fourth.body.secret, previous_secret_expires_at: null });

    // An empty object is the defaults too.
    const fifth = await rotate(id, {});
    expect(fifth.status, fifth.text).toBe(200);
    expect(Date.parse(fifth.body.previous_secret_expires_at) - Date.parse(fifth.body.created_at)).toBe(DAY_MS);
    expect(new Set([first, second.body.secret, third.body.secret, fourth.body.secret, fifth.body.secret]).size).toBe(5);
  });

  it('rotate on an account that never had a secret: the first one, with nothing to keep', async () => {
    const id = await newAccount();
    const r = await rotate(id, { grace_period_seconds: 3600 });
    expect(r.status, r.text).toBe(200);
    expect(r.body.previous_secret_expires_at).toBeNull();
    expect(await signing(id)).toEqual([r.body.secret]);
  });

  it('unknown account: 404 NOT_FOUND on both routes, and nothing is stored', async () => {
    const id = 'acct_doesnotexist';
    for (const r of await Promise.all([show(id), rotate(id), rotate(id, { grace_period_seconds: 0 })])) expectErrorBody(r, 404, 'NOT_FOUND');
    expect(await stored(id)).toBeUndefined();
  });

  it('without the admin token: 401 UNAUTHORIZED, a wrong one or an API key 401 AUTHENTICATION_FAILED; nothing changes', async () => {
    const created = await admin('POST', '/accounts', { plan: 'starter', credits: 10 });
    const id = created.body.account_id as string;
    const apiKey = created.body.api_key as string;
    for (const [method, path] of [['GET', `/accounts/${id}/webhook-secret`], ['POST', `/accounts/${id}/webhook-secret/rotate`]] as const) {
      const none = await admin(method, path, undefined, null);
      expectErrorBody(none, 401, 'UNAUTHORIZED');
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      for (const token of ['wrong-token-0123456789abcdef', `${ADMIN_TOKEN}x`, apiKey]) {
        expectErrorBody(await admin(method, path, undefined, token), 401, 'AUTHENTICATION_FAILED');
      }
    }
    // No secret was made by a refused GET, and none rotated by a refused POST.
    expect(await stored(id)).toBeUndefined();
    const secret = (await show(id)).body.secret as string;
    expectErrorBody(await admin('POST', `/accounts/${id}/webhook-secret/rotate`, { grace_period_seconds: 0 }, null), 401, 'UNAUTHORIZED');
    expect(await signing(id)).toEqual([secret]);
  });

  it('hostile rotate bodies: 400 MISSING_PARAMETER naming the field, and the secret is unchanged', async () => {
    const id = await newAccount();
    const secret = (await show(id)).body.secret as string;
    const cases: Array<[unknown, string]> = [
      [{ grace_period_seconds: -1 }, 'grace_period_seconds'],
      [{ grace_period_seconds: 604_801 }, 'grace_period_seconds'],
      [{ grace_period_seconds: 1e12 }, 'grace_period_seconds'],
      [{ grace_period_seconds: 1.5 }, 'grace_period_seconds'],
      [{ grace_period_seconds: 'x' }, 'grace_period_seconds'],
      [{ grace_period_seconds: '60' }, 'grace_period_seconds'],
      [{ grace_period_seconds: null }, 'grace_period_seconds'],
      [{ grace_period_seconds: [60] }, 'grace_period_seconds'],
      [{ grace_period_seconds: { seconds: 60 } }, 'grace_period_seconds'],
      [{ grace_period_seconds: 60, secret: 'whsec_chosen_by_the_caller' }, 'secret'],
      [{ grace: 60 }, 'grace'],
      ['[]', 'body'],
      ['[{"grace_period_seconds": 60}]', 'body'],
      ['"x"', 'body'],
      ['{"grace_period_seconds": 60,', 'body'],
    ];
    for (const [body, field] of cases) expectValidation(await rotate(id, body), field, JSON.stringify(body));
    expect(await signing(id)).toEqual([secret]);
    expect((await show(id)).body).toMatchObject({ secret, previous_secret_expires_at: null });
  });

  it('the routes are in the OpenAPI document, admin-only, with their failures', () => {
    const routes = s.scour.app.compiled.map((c) => c.route);
    const get = routes.find((r) => r.method === 'GET' && r.path === '/admin/v1/accounts/{account_id}/webhook-secret');
    const post = routes.find((r) => r.method === 'POST' && r.path === '/admin/v1/accounts/{account_id}/webhook-secret/rotate');
    expect(get).toMatchObject({ auth: 'admin', failures: [401, 404, 503] });
    expect(post).toMatchObject({ auth: 'admin', failures: [400, 401, 404, 503] });
  });
});

describe('webhooks signed across a rotation (embedded, end to end)', () => {
  let site: TargetSite;
  let s: Running;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN_TOKEN, allowPrivateTargets: 'loopback', webhookSchedule: [1, 1] });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    for (const r of receivers) await r.close();
    await site?.close();
  });

  const admin = (method: string, path: string, body?: unknown) => call(`${s.url}/admin/v1${path}`, method, { auth: `Bearer ${ADMIN_TOKEN}`, body });

  /** Submit a one-URL asynchronous bulk job to a receiver that checks signatures against `accepts`; the webhook it got. */
  async function deliveredTo(key: string, accepts: string | readonly string[]) {
    const rx = await startWebhookReceiver({ secret: accepts });
    receivers.push(rx);
    const r = await call(`${s.url}/v1/scrape/bulk`, 'POST', { auth: `Bearer ${key}`, body: { urls: [`${site.url}/html/simple`], callback_url: rx.url } });
    expect(r.status, r.text).toBe(202);
    const [hook] = await rx.waitFor(1, 20_000);
    return hook!;
  }

  it('during the grace period a webhook verifies with the old secret and with the new one; after a rotation without grace only with the newest', async () => {
    const created = await admin('POST', '/accounts', { plan: 'starter', credits: 100 });
    expect(created.status, created.text).toBe(201);
    const { account_id: id, api_key: key } = created.body as { account_id: string; api_key: string };

    // Configured before the first job: the secret shown is the one webhooks are signed with.
    const old = (await admin('GET', `/accounts/${id}/webhook-secret`)).body.secret as string;
    const before = await deliveredTo(key, old);
    expect(before.verified).toBe(true);
    expect(String(before.headers[WEBHOOK_SIGNATURE_HEADER]).match(/v1=/g)).toHaveLength(1);

    const rotated = await admin('POST', `/accounts/${id}/webhook-secret/rotate`, { grace_period_seconds: 3600 });
    expect(rotated.status, rotated.text).toBe(200);
    const fresh = rotated.body.secret as string;
    // A receiver still on the old secret keeps accepting deliveries...
    const during = await deliveredTo(key, old);
    expect(during.verified).toBe(true);
    const header = String(during.headers[WEBHOOK_SIGNATURE_HEADER]);
    expect(header.match(/v1=/g)).toHaveLength(2);
    // ...and one already switched to the new secret accepts the same delivery.
    const nowSeconds = Math.floor(Date.now() / 1000);
    expect(verifySignature(fresh, during.raw, header, nowSeconds)).toBe(true);
    expect(verifySignature('whsec_some_other_secret', during.raw, header, nowSeconds)).toBe('no v1 signature matches');

    const last = await admin('POST', `/accounts/${id}/webhook-secret/rotate`, { grace_period_seconds: 0 });
    expect(last.status, last.text).toBe(200);
    const newest = last.body.secret as string;
    const after = await deliveredTo(key, newest);
    expect(after.verified).toBe(true);
    const afterHeader = String(after.headers[WEBHOOK_SIGNATURE_HEADER]);
    expect(afterHeader.match(/v1=/g)).toHaveLength(1);
    const t = Math.floor(Date.now() / 1000);
    expect(verifySignature(fresh, after.raw, afterHeader, t)).toBe('no v1 signature matches');
    expect(verifySignature(old, after.raw, afterHeader, t)).toBe('no v1 signature matches');
  }, 60_000);
});
