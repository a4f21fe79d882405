/**
 * Regression for a finding of the hostile-body fuzz: U+0000 in an id or a
 * name reached PostgreSQL, which refuses any text holding it, and the
 * refusal read as an outage (503 SERVICE_UNAVAILABLE with retry_after: a
 * client would retry forever). Now, on both configurations alike: an id
 * holding one names nothing (404), a name keeps its other characters (201),
 * a URL holding one removes nothing (200, removed 0), and a research job's
 * query drops it as its stored request already did (202).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startFuzzed, type Fuzzed } from './support/harness.js';

describe.each(['embedded', 'shared'] as const)('U+0000 in ids and names, %s', (config) => {
  let f: Fuzzed;
  beforeAll(async () => {
    f = await startFuzzed(config, 'uws');
  });
  afterAll(async () => {
    await f?.running.stop();
  });

  const send = async (method: string, path: string, body: unknown, auth = `Bearer ${ADMIN_TOKEN}`) => {
    const r = await fetch(`${f.url}${path}`, {
      method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };

  it.each([
    ['GET', '/admin/v1/accounts/%00'],
    ['PATCH', '/admin/v1/accounts/a%00', { plan: 'free' }],
    ['POST', '/admin/v1/accounts/a%00/credits', { amount: 1 }],
    ['POST', '/admin/v1/accounts/%00/keys', {}],
    ['GET', '/admin/v1/accounts/%00/keys'],
    ['GET', '/admin/v1/accounts/%00/ledger'],
    ['GET', '/admin/v1/accounts/%00/webhook-secret'],
    ['POST', '/admin/v1/accounts/%00/webhook-secret/rotate', {}],
    ['DELETE', '/admin/v1/keys/%00'],
  ] as const)('%s %s: 404, not 503', async (method, path, body?: unknown) => {
    const r = await send(method, path, body);
    expect(r.status, JSON.stringify(r.body)).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });

  it('an account or key name keeps its other characters', async () => {
    const a = await send('POST', '/admin/v1/accounts', { plan: 'free', name: 'a\u0000b' });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    const k = await send('POST', `/admin/v1/accounts/${String(a.body.account_id)}/keys`, { name: 'k\u0000' });
    expect(k.status, JSON.stringify(k.body)).toBe(201);
    const view = await send('GET', `/admin/v1/accounts/${String(a.body.account_id)}`, undefined);
    expect(view.status).toBe(200);
    // SQLite keeps the character, PostgreSQL cannot: either way the name is the rest of it, never an outage.
    expect(String(view.body.name).replace('\u0000', '')).toBe('ab');
  });

  it('removing index URLs that hold U+0000 removes nothing', async () => {
    const r = await send('DELETE', '/admin/v1/index/documents', { collection: 'shared', urls: ['http://192.0.2.1/a\u0000', 'a\u0000'] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.removed).toBe(0);
  });

  it('a research job whose query holds U+0000 is queued', async () => {
    const r = await send('POST', '/v1/research', { research_query: 'hostile\u0000 input research', callback_url: 'http://127.0.0.1:9/hook' }, `Bearer ${f.accounts.rich}`);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
  });
});
