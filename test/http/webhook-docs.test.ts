/**
 * The webhook verification code of docs/bulk-and-webhooks.md, taken from that page itself and
 * run against real signed deliveries from a running server: it accepts
 * them, and refuses a changed body, a wrong secret, an old timestamp and a
 * missing header. If the page's code drifts from what the server sends,
 * this fails.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Effect } from 'effect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../adapters/webhooks/sign.js';
import { startScour, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

type Verify = (secret: string, rawBody: Buffer, header: string | undefined, now?: number) => boolean;

/** The ```ts block of docs/bulk-and-webhooks.md that defines verifyScourSignature. */
function readmeVerifier(): string {
  const readme = readFileSync(join(process.cwd(), 'docs/bulk-and-webhooks.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const found = blocks.filter((b) => b.includes('export function verifyScourSignature'));
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('the webhook verification code of docs/bulk-and-webhooks.md', () => {
  let dir: string;
  let verify: Verify;
  let site: TargetSite;
  let s: Running;
  let receiver: http.Server;
  let receiverUrl: string;
  const got: { raw: Buffer; signature: string | undefined; accepted: boolean }[] = [];
  let secret: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scour-readme-verify-'));
    const file = join(dir, 'verify.ts');
    writeFileSync(file, readmeVerifier());
    verify = ((await import(file)) as { verifyScourSignature: Verify }).verifyScourSignature;
    site = await startTargetSite();
    s = await startScour('uws', { adminToken: 'readme-verify-admin-token-01', allowPrivateTargets: 'loopback' });
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const signature = req.headers['scour-signature'] as string | undefined;
        const accepted = verify(secret, raw, signature);
        got.push({ raw, signature, accepted });
        res.writeHead(accepted ? 200 : 400).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    await new Promise((r) => receiver?.close(r));
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts a real delivery, and refuses tampering, a wrong secret, an old timestamp and no header', async () => {
    const created = await fetch(`${s.url}/admin/v1/accounts`, {
      method: 'POST', headers: { authorization: 'Bearer readme-verify-admin-token-01', 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'starter', credits: 100 }),
    });
    const a = (await created.json()) as { account_id: string; api_key: string };
    secret = await Effect.runPromise(s.scour.jobStore.ensureWebhookSecret(a.account_id, newWebhookSecret(), Date.now()));
    const r = await fetch(`${s.url}/v1/scrape/bulk`, {
      method: 'POST', headers: { authorization: `Bearer ${a.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ urls: [`${site.url}/html/simple`], callback_url: receiverUrl }),
    });
    expect(r.status).toBe(202);
    const end = Date.now() + 20_000;
    while (got.length === 0 && Date.now() < end) await new Promise((res) => setTimeout(res, 50));
    expect(got).toHaveLength(1);
    const { raw, signature, accepted } = got[0]!;
    expect(accepted).toBe(true);
    expect(JSON.parse(raw.toString('utf8'))).toMatchObject({ event: 'bulk_scrape.completed' });

    const tampered = Buffer.from(raw.toString('utf8').replace('"completed"', '"failed"'));
    expect(verify(secret, tampered, signature)).toBe(false);
    expect(verify(newWebhookSecret(), raw, signature)).toBe(false);
    expect(verify(secret, raw, undefined)).toBe(false);
    expect(verify(secret, raw, '')).toBe(false);
    expect(verify(secret, raw, signature!.replace(/v1=[0-9a-f]+/g, 'v1=' + '0'.repeat(64)))).toBe(false);
    // Ten minutes later the same request is a replay: refused.
    expect(verify(secret, raw, signature, Date.now() + 10 * 60_000)).toBe(false);
    expect(verify(secret, raw, signature, Date.now() + 60_000)).toBe(true);
  }, 40_000);
});
