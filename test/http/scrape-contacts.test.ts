/**
 * The scrape extensions extract_contacts and extract_social over the real
 * server against a loopback contact page: the items, their prices (+2
 * each), plan gating (403 naming the scrape field, nothing charged), the
 * country field for reading phone numbers, and hostile values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { startScourIn, type Running } from '../support/server.js';
import { startTargetSite, type TargetSite } from '../support/target-site.js';

const ADMIN = 'scrape-contacts-admin-token-0123';

describe('POST /v1/scrape with extract_contacts and extract_social', () => {
  let site: TargetSite;
  let s: Running;
  const mk = async (plan: string, credits = 100) => {
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan, credits } });
    return r.body.api_key as string;
  };
  const scrape = (key: string, body: unknown) => call(`${s.url}/v1/scrape`, 'POST', { auth: `Bearer ${key}`, body });
  const remaining = async (key: string) => (await call(`${s.url}/v1/usage`, 'GET', { auth: `Bearer ${key}` })).body.credits_remaining as number;

  beforeAll(async () => {
    site = await startTargetSite();
    s = await startScourIn('embedded', 'uws', { adminToken: ADMIN, allowPrivateTargets: 'loopback' });
  });
  afterAll(async () => {
    await s?.stop();
    await site?.close();
  });

  it('finds the people, addresses and profiles of a contact page, at 3 + 2 + 2 credits', async () => {
    const key = await mk('unicorn');
    const r = await scrape(key, { url: `${site.url}/contacts`, extract_contacts: true, extract_social: true });
    expect(r.status, r.text).toBe(200);
    expect(r.body.credits_used).toBe(7);
    const contacts = r.body.contacts as { email: string | null; phone: string | null; name: string | null; job_title: string | null; company: string | null; source_url: string }[];
    const dana = contacts.find((c) => c.email === 'dana.reyes@acme-robotics.com');
    expect(dana).toMatchObject({ name: 'Dana Reyes', job_title: 'Head of Press', phone: '+14155550134', company: 'Acme Robotics' });
    expect(contacts.map((c) => c.email)).toEqual(expect.arrayContaining(['sales@acme-robotics.com', 'support@acme-robotics.com']));
    expect(contacts.some((c) => c.phone === '+14155550199')).toBe(true);
    expect(contacts.map((c) => c.email)).not.toContain('logo@2x.png');
    for (const c of contacts) expect(c.source_url).toBe(`${site.url}/contacts`);
    const profiles = (r.body.social_profiles as { platform: string; url: string }[]).map((p) => `${p.platform} ${p.url}`);
    expect(profiles).toEqual(expect.arrayContaining([
      'x https://x.com/acmerobotics', 'linkedin https://www.linkedin.com/company/acme-robotics', 'github https://github.com/acme-robotics',
    ]));
    expect(profiles.some((p) => p.startsWith('youtube '))).toBe(true);
    expect(profiles.join('\n')).not.toMatch(/intent|sharer/);
  });

  it('without the fields the answer has neither key and costs the base price', async () => {
    const key = await mk('unicorn');
    const r = await scrape(key, { url: `${site.url}/contacts` });
    expect(r.status).toBe(200);
    expect(r.body.credits_used).toBe(3);
    expect(r.body).not.toHaveProperty('contacts');
    expect(r.body).not.toHaveProperty('social_profiles');
  });

  it('is plan-gated like search: contacts from Starter, social from Builder; 403 names the scrape field; nothing charged', async () => {
    const free = await mk('free');
    const denied = await scrape(free, { url: `${site.url}/contacts`, extract_contacts: true });
    expectErrorBody(denied, 403, 'FORBIDDEN');
    expect(denied.body.error).toMatch(/^extract_contacts requires the Starter plan/);
    expect(denied.body.upgrade_url).toMatch(/^\//);
    const starter = await mk('starter');
    expect((await scrape(starter, { url: `${site.url}/contacts`, extract_contacts: true })).status).toBe(200);
    const social = await scrape(starter, { url: `${site.url}/contacts`, extract_social: true });
    expectErrorBody(social, 403, 'FORBIDDEN');
    expect(social.body.error).toMatch(/^extract_social requires the Builder plan/);
    expect(await remaining(free)).toBe(100);
    expect(await remaining(starter)).toBe(100 - 5);
  });

  it.each([
    [{ extract_contacts: 'yes' }, 'extract_contacts'],
    [{ extract_social: 1 }, 'extract_social'],
    [{ extract_contacts: true, country: 'usa' }, 'country'],
    [{ extract_contacts: true, country: 'XX' }, 'country'],
  ])('400 on a bad value %j', async (extra, field) => {
    const key = await mk('unicorn');
    const r = await scrape(key, { url: `${site.url}/contacts`, ...extra });
    expectErrorBody(r, 400, 'MISSING_PARAMETER');
    expect(r.body.validation_errors.map((v: { field: string }) => v.field)).toContain(field);
    expect(await remaining(key)).toBe(100);
  });
});
