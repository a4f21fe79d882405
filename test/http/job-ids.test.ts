/**
 * Job status routes look up only ids of the form their submit makes: an id
 * with a NUL byte (which PostgreSQL refuses, once a 503), a huge one, or
 * another kind's id is a plain 404 on both deployments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorBody } from '../support/http.js';
import { CONFIGS, startScourIn, type Running } from '../support/server.js';

const ADMIN = 'job-ids-admin-token-0123456789';

describe.each(CONFIGS)('job ids (%s)', (config) => {
  let s: Running;
  let key: string;
  beforeAll(async () => {
    s = await startScourIn(config, 'uws', { adminToken: ADMIN });
    const r = await call(`${s.url}/admin/v1/accounts`, 'POST', { auth: `Bearer ${ADMIN}`, body: { plan: 'unicorn', credits: 10 } });
    key = r.body.api_key;
  }, 60_000);
  afterAll(async () => { await s?.stop(); });

  it.each([
    ['GET', '/v1/scrape/bulk/%00bulk'],
    ['GET', `/v1/scrape/bulk/bulk_${'0'.repeat(31)}%00`],
    ['GET', '/v1/crawl/%00crawl'],
    ['DELETE', '/v1/crawl/%00crawl'],
    ['GET', `/v1/crawl/crawl_${'f'.repeat(32)}`],
    ['GET', `/v1/crawl/bulk_${'0'.repeat(32)}`],
    ['GET', '/v1/research/%00research'],
    ['GET', `/v1/research/${'r'.repeat(2000)}`],
  ])('%s %s is 404', async (method, path) => {
    expectErrorBody(await call(`${s.url}${path}`, method, { auth: `Bearer ${key}` }), 404, 'NOT_FOUND');
  });
});
