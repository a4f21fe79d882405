/**
 * A full disk under the blob store (a 256 KiB tmpfs on <dataDir>/blobs,
 * filled up): a scrape with a screenshot is delivered without it, with a
 * SCREENSHOT_NOT_STORED warning, and is not charged for it; a research with
 * an export is delivered with an EXPORT_FAILED warning and no export_url;
 * nothing half-written is left; once space is back both work again. Needs
 * root (mount), as CI has: the suite fails, not skips, without it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrapePrice } from '../../config/prices.js';
import { call } from '../support/http.js';
import { startScour, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'disk-full-admin-token-0123456789abc';

let dataDir: string;
let blobs: string;
let site: TargetSite;
let s: Running;
let key: string;

function fill(): void {
  // Fill the tmpfs to the last byte: write until ENOSPC.
  try {
    for (let i = 0; i < 1000; i++) writeFileSync(join(blobs, `filler-${i}`), Buffer.alloc(16 * 1024, 1));
  } catch (e) {
    expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
  }
}

function free(): void {
  for (const f of readdirSync(blobs)) if (f.startsWith('filler-')) rmSync(join(blobs, f));
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'scour-diskfull-'));
  blobs = join(dataDir, 'blobs');
  mkdirSync(blobs);
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', blobs], { encoding: 'utf8' });
  expect(m.status, `mount tmpfs (needs root): ${m.stderr}`).toBe(0);
  site = await startTargetSite();
  s = await startScour('uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback', dataDir, searchProviders: ['local'] });
  const created = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 10_000 } });
  expect(created.status, created.text).toBe(201);
  key = created.body.api_key as string;
  const put = await call(`${s.url}/admin/v1/index/documents`, 'POST', {
    auth: `Bearer ${ADMIN}`,
    body: {
      collection: 'shared',
      documents: [
        { url: 'https://example.org/zeppelins-1', title: 'Zeppelins in the 1930s', text: 'Zeppelins crossed the Atlantic on a schedule in the 1930s. The Hindenburg disaster in 1937 ended the era of passenger airships.' },
        { url: 'https://example.org/zeppelins-2', title: 'Airship engineering', text: 'Zeppelins used rigid frames of duralumin. Hydrogen lifting gas made zeppelins dangerous, and helium was scarce.' },
      ],
    },
  });
  expect(put.status, put.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await s?.stop();
  await site?.close();
  spawnSync('umount', ['-l', blobs]);
  rmSync(dataDir, { recursive: true, force: true });
});

const post = (path: string, body: unknown) => call(`${s.url}${path}`, 'POST', { auth: `Bearer ${key}`, body });

describe('blob store full', () => {
  it('a screenshot that cannot be stored: the page is delivered with a warning, the screenshot not charged; with space back it is', async () => {
    fill();
    const body = { url: `${site.url}/html/simple`, render_js: true, screenshot: true };
    const r = await post('/v1/scrape', body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.text_content).toMatch(/\S/);
    expect(r.body).not.toHaveProperty('screenshot_url');
    expect(r.body.warnings).toEqual([{ code: 'SCREENSHOT_NOT_STORED', message: expect.stringMatching(/ENOSPC/) }]);
    expect(r.body.credits_used).toBe(scrapePrice({ render_js: true }));
    // Nothing half-written is left behind.
    expect(readdirSync(blobs).filter((f) => !f.startsWith('filler-'))).toEqual([]);

    free();
    const ok = await post('/v1/scrape', body);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.screenshot_url).toMatch(/\/v1\/screenshots\//);
    expect(ok.body).not.toHaveProperty('warnings');
    expect(ok.body.credits_used).toBe(scrapePrice({ render_js: true, screenshot: true }));
    expect((await call(ok.body.screenshot_url as string, 'GET')).status).toBe(200);
  }, 60_000);

  it('a research export that cannot be stored: the report is delivered with EXPORT_FAILED and no export_url', async () => {
    fill();
    const before = readdirSync(blobs);
    try {
      const r = await post('/v1/research', { research_query: 'zeppelins airships history', analysis_depth: 'quick', export_format: 'html' });
      expect(r.status, r.text).toBe(200);
      expect(r.body).not.toHaveProperty('export_url');
      expect(r.body.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'EXPORT_FAILED', message: expect.stringMatching(/ENOSPC/) })]));
      expect((r.body.sources_analyzed as unknown[]).length).toBeGreaterThan(0);
      // Nothing half-written is left behind.
      expect(readdirSync(blobs).filter((f) => !before.includes(f))).toEqual([]);
    } finally {
      free();
    }
  }, 60_000);
});
