/**
 * The configured provider's choices: round-robin per type and country,
 * strict `exclude`, soft failure marks, no match -> undefined, available().
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/env.js';
import { createConfiguredProxyProvider, parseProxyConfig, type ProxyEntry } from '../../plugins/proxies/configured.js';
import type { ProxyQuery } from '../../plugins/sdk/scrape.js';

const ENTRIES = parseProxyConfig([
  'datacenter:US=http://u1:secret1@dc-us-1.example:8080',
  'datacenter:US=http://u2:secret2@dc-us-2.example:8080',
  'datacenter:DE=http://dc-de.example:8080',
  'datacenter=http://dc-any.example:3128',
  'residential:US=http://r:pw@res-us.example:7000',
].join('\n'));

const q = (type: ProxyQuery['type'], country?: string, exclude: string[] = []): ProxyQuery => ({ type, country, exclude });

describe('configured proxy provider', () => {
  it('is a proxy-provider plugin named proxy-configured', () => {
    const p = createConfiguredProxyProvider(ENTRIES);
    expect(p.kind).toBe('proxy-provider');
    expect(p.name).toBe('proxy-configured');
  });

  it('rotates round-robin within type and country', () => {
    const p = createConfiguredProxyProvider(ENTRIES);
    const ids = Array.from({ length: 5 }, () => p.pick(q('datacenter', 'US'))!.id);
    expect(ids).toEqual(['datacenter-US-1', 'datacenter-US-2', 'datacenter-US-1', 'datacenter-US-2', 'datacenter-US-1']);
  });

  it('without a country, any proxy of the type, country-fixed ones included', () => {
    const p = createConfiguredProxyProvider(ENTRIES);
    const ids = Array.from({ length: 8 }, () => p.pick(q('datacenter'))!.id);
    expect(ids).toEqual([
      'datacenter-US-1', 'datacenter-US-2', 'datacenter-DE-1', 'datacenter-any-1',
      'datacenter-US-1', 'datacenter-US-2', 'datacenter-DE-1', 'datacenter-any-1',
    ]);
    expect(p.pick(q('residential'))!.id).toBe('residential-US-1');
  });

  it('a country filter never returns a proxy without that fixed country', () => {
    const p = createConfiguredProxyProvider(ENTRIES);
    for (let i = 0; i < 4; i++) expect(p.pick(q('datacenter', 'DE'))!.id).toBe('datacenter-DE-1');
    expect(p.pick(q('datacenter', 'FR'))).toBeUndefined();
    expect(p.pick(q('residential', 'DE'))).toBeUndefined();
  });

  it('tolerates a lower-case country in the query', () => {
    const p = createConfiguredProxyProvider(ENTRIES);
    expect(p.pick(q('datacenter', 'de'))!.id).toBe('datacenter-DE-1');
  });

  it('exclude is strict: a retry gets another proxy, or none', () => {
    const p = createConfiguredProxyProvider(ENTRIES);
    const first = p.pick(q('datacenter', 'US'))!;
    const second = p.pick(q('datacenter', 'US', [first.id]))!;
    expect(second.id).not.toBe(first.id);
    expect(p.pick(q('datacenter', 'US', [first.id, second.id]))).toBeUndefined();
    expect(p.pick(q('residential', undefined, ['residential-US-1']))).toBeUndefined();
  });

  it('choices keep credentials in url and none in id', () => {
    const p = createConfiguredProxyProvider(ENTRIES);
    const c = p.pick(q('datacenter', 'US'))!;
    expect(c).toEqual({ url: 'http://u1:secret1@dc-us-1.example:8080', id: 'datacenter-US-1', type: 'datacenter', country: 'US' });
    const all = Array.from({ length: 10 }, () => p.pick(q('datacenter'))!);
    for (const x of all) expect(x.id).not.toMatch(/secret|u1|u2|@/);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('available() lists type:COUNTRY, type:* for proxies without a fixed country', () => {
    expect(createConfiguredProxyProvider(ENTRIES).available()).toEqual(['datacenter:DE', 'datacenter:US', 'datacenter:*', 'residential:US']);
    expect(createConfiguredProxyProvider([]).available()).toEqual([]);
  });

  it('with no proxies, pick answers undefined', () => {
    const p = createConfiguredProxyProvider([]);
    expect(p.pick(q('datacenter'))).toBeUndefined();
    expect(p.pick(q('residential', 'US'))).toBeUndefined();
  });

  it('markFailed skips a proxy until its time, then it rotates in again', () => {
    let now = 1_000;
    const p = createConfiguredProxyProvider(ENTRIES, { now: () => now });
    p.markFailed('datacenter-US-1', 5_000);
    expect(Array.from({ length: 3 }, () => p.pick(q('datacenter', 'US'))!.id)).toEqual(['datacenter-US-2', 'datacenter-US-2', 'datacenter-US-2']);
    now = 5_000;
    const ids = Array.from({ length: 4 }, () => p.pick(q('datacenter', 'US'))!.id);
    expect(ids.filter((id) => id === 'datacenter-US-1')).toHaveLength(2);
  });

  it('markFailed is a preference: when all are marked the soonest to recover is used; exclude still wins', () => {
    const now = 1_000;
    const p = createConfiguredProxyProvider(ENTRIES, { now: () => now });
    p.markFailed('datacenter-US-1', 9_000);
    p.markFailed('datacenter-US-2', 3_000);
    expect(p.pick(q('datacenter', 'US'))!.id).toBe('datacenter-US-2');
    expect(p.pick(q('datacenter', 'US', ['datacenter-US-2']))!.id).toBe('datacenter-US-1');
    expect(p.pick(q('datacenter', 'US', ['datacenter-US-1', 'datacenter-US-2']))).toBeUndefined();
  });

  it('markFailed with a past time clears the mark; unknown ids are ignored', () => {
    const now = 1_000;
    const p = createConfiguredProxyProvider(ENTRIES, { now: () => now });
    p.markFailed('datacenter-DE-1', 50_000);
    p.markFailed('datacenter-DE-1', 0);
    p.markFailed('nope', 50_000);
    expect(p.pick(q('datacenter', 'DE'))!.id).toBe('datacenter-DE-1');
  });

  it('checks hand-built entries like the setting, and numbers them', () => {
    const hand: ProxyEntry[] = [
      { url: 'http://a.example:1', type: 'datacenter', country: 'US' },
      { url: 'http://b.example:1', type: 'residential', country: undefined, id: 'mine' },
    ];
    const p = createConfiguredProxyProvider(hand);
    expect(p.pick(q('datacenter'))!.id).toBe('datacenter-US-1');
    expect(p.pick(q('residential'))!.id).toBe('mine');
    const bad = [{ url: 'socks5://a.example:1', type: 'mobile', country: 'usa' }] as unknown as ProxyEntry[];
    expect(() => createConfiguredProxyProvider(bad)).toThrow(ConfigError);
    try {
      createConfiguredProxyProvider(bad);
    } catch (err) {
      expect((err as ConfigError).issues).toHaveLength(3);
      expect((err as ConfigError).issues[0]).toMatch(/^proxy entry 1: /);
    }
  });
});
