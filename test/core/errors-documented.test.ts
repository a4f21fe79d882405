/**
 * Every error code the service can produce is listed in the error table of
 * docs/errors.md, with its status (Fastify's documented-errors test).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../core/errors.js';
import type { PluginErrorCode } from '../../core/registry.js';
import { builtinPlugins } from '../../config/plugins.js';

const readme = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const PLUGIN_CODES: Record<PluginErrorCode, true> = {
  PLUGIN_INVALID_NAME: true, PLUGIN_INVALID_KIND: true, PLUGIN_DUPLICATE: true, PLUGIN_MISSING_DEPENDENCY: true,
  PLUGIN_DEPENDENCY_CYCLE: true, PLUGIN_INVALID: true, PLUGIN_REGISTRY_SEALED: true,
};

describe('error documentation', () => {
  it('knows the API error codes of the core and of every built-in plugin', () => {
    const codes = new Set(errorCatalogue().map((e) => e.code));
    for (const p of builtinPlugins) for (const e of p.errors ?? []) codes.add(e.code);
    expect(codes.size).toBeGreaterThanOrEqual(12);
  });

  it.each(errorCatalogue().map((e) => [e.code, e.status] as const))('docs/errors.md lists %s with status %i', (code, status) => {
    const row = readme.split('\n').find((l) => l.startsWith('|') && l.includes(`\`${code}\``));
    expect(row, `docs/errors.md's error table has no row for ${code}`).toBeDefined();
    expect(row).toContain(String(status));
  });

  it.each(builtinPlugins.flatMap((p) => (p.errors ?? []).map((e) => [e.code, e.status] as const)))('docs/errors.md lists plugin error %s', (code, status) => {
    const row = readme.split('\n').find((l) => l.startsWith('|') && l.includes(`\`${code}\``));
    expect(row).toBeDefined();
    expect(row).toContain(String(status));
  });

  it.each(Object.keys(PLUGIN_CODES))('docs/errors.md lists boot error %s', (code) => {
    expect(readme).toContain(`\`${code}\``);
  });

  it('docs/errors.md lists the start-up configuration error', () => {
    expect(readme).toContain('`CONFIG_INVALID`');
    expect(readme).toContain('`LISTEN_FAILED`');
    expect(readme).toContain('`ROUTE_DUPLICATE`');
    expect(readme).toContain('`ROUTE_INVALID`');
  });
});
